/*
 * test_unsupported.c - objects of plugins r4 does not implement yet are
 * refused with -EOPNOTSUPP, never taken for corruption: a compressed
 * (ccreg40) file, made here by giving a file's stat data the ccreg40
 * plugin and a ctail body item, must not be written, its read must fail
 * cleanly, and the volume must not be marked damaged.
 */
#include <stdio.h>
#include <stdlib.h>

#include "db.h"
#include "key.h"
#include "obj.h"
#include "t.h"
#include "tree.h"

static int find_sdkey(r4_db *db, const char *name, r4_key *k)
{
	struct r4_inode root;
	r4_key rk;
	int rc;

	r4_obj_root_key(&rk);
	if ((rc = r4_obj_load(db, &rk, &root)))
		return rc;
	rc = r4_dir_lookup(db, &root, name, strlen(name), k);
	r4_obj_fini(&root);
	return rc;
}

int main(void)
{
	char dir[] = "/tmp/r4unsXXXXXX", img[64];
	struct r4_open_opts oo = {.rw = true};
	struct r4_inode ino;
	struct r4_path p;
	struct r4_info in;
	r4_db *db = NULL;
	uint8_t buf[64] = {0};
	size_t got;
	r4_key k, bk;

	if (!mkdtemp(dir))
		return 1;
	snprintf(img, sizeof(img), "%s/u.img", dir);
	CHECK_RC(r4_mkfs(img, 64u << 20, NULL));
	CHECK_RC(r4_open(img, &oo, &db));
	if (!db)
		return T_DONE();
	CHECK_RC(r4_create(db, "/packed", 0644, 0, 0));
	CHECK_RC(r4_create(db, "/plain", 0644, 0, 0));
	CHECK_RC(r4_write(db, "/plain", 0, "abc", 3));

	/* make /packed a ccreg40 file with a ctail body item */
	CHECK_RC(r4_begin(db));
	CHECK_RC(find_sdkey(db, "packed", &k));
	CHECK_RC(r4_obj_load(db, &k, &ino));
	ino.sd.sd_mask |= 1u << R4_SDEXT_PSET;
	r4_item_pset_set(&ino.sd.sd_pset, R4_PSET_FILE, 4);
	ino.sd.sd_size = 10;
	CHECK_RC(r4_obj_save(db, &ino));
	r4_key_body(&bk, r4_key_locality(&k), k.el[1], r4_key_objectid(&k), 0);
	CHECK_RC(r4_tree_lookup(db, &bk, R4_LEVEL_LEAF, &p));
	CHECK_RC(r4_tree_insert(db, &p, &bk, R4_ITEM_CTAIL40, buf, 16));
	r4_obj_fini(&ino);
	CHECK_RC(r4_commit(db));

	CHECK_EQ(r4_read(db, "/packed", 0, buf, sizeof(buf), &got), -EOPNOTSUPP);
	CHECK_EQ(r4_write(db, "/packed", 0, "x", 1), -EOPNOTSUPP);
	CHECK_EQ(r4_truncate(db, "/packed", 0), -EOPNOTSUPP);
	/* the rest of the volume goes on working, and nothing was marked */
	CHECK_RC(r4_write(db, "/plain", 3, "def", 3));
	CHECK_RC(r4_read(db, "/plain", 0, buf, sizeof(buf), &got));
	CHECK(got == 6 && !memcmp(buf, "abcdef", 6));
	CHECK_RC(r4_info(db, &in));
	CHECK_EQ(in.status, 0);
	r4_close(db);
	db = NULL;
	CHECK_RC(r4_open(img, &oo, &db));	/* still opens read-write */
	r4_close(db);
	if (t_rmdir(dir))
		return 1;
	return T_DONE();
}
