/*
 * test_frag.c - the layout report (engine/frag.c, r4.h r4_frag): every
 * figure on a volume whose blocks are known.
 *
 * mkfs with formatting=extents, then /d and two files appended in turns,
 * each append its own commit: a gets data blocks 25-26, b 27-28, a 29-30,
 * b 31-32 (data grows from the bottom of the free space), and the tree is
 * one twig at 4094 over one leaf at 4095 (nodes come from the top).  From
 * that layout the figures follow by hand (below); measurefs.reiser4 agrees
 * (tests/bats/r4_frag.bats compares the two on other images).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "t.h"

static void append(r4_db *db, const char *path, uint64_t off)
{
	static const char blocks[8192];

	CHECK_RC(r4_begin(db));
	CHECK_RC(r4_write(db, path, off, blocks, sizeof(blocks)));
	CHECK_RC(r4_commit(db));
}

static void test_layout(const char *img)
{
	struct r4_open_opts oo = {.rw = true};
	struct r4_mkfs_opts mo;
	struct r4_frag f;
	r4_db *db = NULL;

	r4_mkfs_defaults(&mo);
	mo.formatting = 0;	/* extents, never tails */
	CHECK_RC(r4_mkfs(img, 16u << 20, &mo));
	CHECK_RC(r4_open(img, &oo, &db));
	if (!db)
		return;

	/* an empty volume: the root's one leaf under the twig */
	CHECK_RC(r4_frag(db, NULL, &f));
	CHECK_EQ(f.objects, 1);
	CHECK_EQ(f.dirs, 1);
	CHECK_EQ(f.files + f.others, 0);
	CHECK(f.data_frag == 0 && f.tree_frag == 0);
	CHECK_EQ(f.leaves, 1);
	CHECK_EQ(f.twigs, 1);
	CHECK_EQ(f.read_blocks, 2);	/* twig, leaf */
	CHECK_EQ(f.seeks, 1);
	CHECK_EQ(f.blocksize, 4096);

	CHECK_RC(r4_mkdir(db, "/d", 0755, 0, 0));
	CHECK_RC(r4_create(db, "/d/a", 0644, 0, 0));
	CHECK_RC(r4_create(db, "/d/b", 0644, 0, 0));
	append(db, "/d/a", 0);
	append(db, "/d/b", 0);
	append(db, "/d/a", 8192);
	append(db, "/d/b", 8192);
	CHECK_RC(r4_link(db, "/d/a", "/a2"));	/* a second name: walked once */

	/* each file: ranges 2 + 2 blocks, the second 3 away: 1 bad of 4;
	 * the two directories 0 (one leaf each): (0 + 0 + 1/4 + 1/4) / 4 */
	CHECK_RC(r4_frag(db, "/", &f));
	CHECK(f.data_frag == 0.125);
	/* from the root (4094): leaf 4095, then a's 25 and 29, b's 27 and
	 * 31, all bad: 4 of 1 + 8 blocks */
	CHECK(f.tree_frag == 4.0 / 9);
	CHECK_EQ(f.objects, 4);
	CHECK_EQ(f.files, 2);
	CHECK_EQ(f.dirs, 2);
	CHECK_EQ(f.extents, 4);
	CHECK_EQ(f.data_blocks, 8);
	CHECK_EQ(f.leaves, 1);
	CHECK_EQ(f.twigs, 1);
	/* the walk: 4094-4095 (every stat data and entry is in that leaf),
	 * a's 25-26 and 29-30, b's 27-28 and 31-32: 5 seeks, 10 blocks */
	CHECK_EQ(f.seeks, 5);
	CHECK_EQ(f.read_blocks, 10);
	CHECK(f.seeks_per_mib == 5 / (10 * 4096.0 / (1 << 20)));
	CHECK(f.leaf_fill > 0 && f.leaf_fill < 100 && f.twig_fill > 0 && f.twig_fill < 100);

	/* one file: its ranges, and the pointer to its leaf (4095, after the
	 * root) with its extents for the tree */
	CHECK_RC(r4_frag(db, "/d/a", &f));
	CHECK(f.data_frag == 0.25);
	CHECK(f.tree_frag == 2.0 / 5);
	CHECK_EQ(f.objects, 1);
	CHECK_EQ(f.files, 1);
	CHECK_EQ(f.dirs + f.others, 0);
	CHECK_EQ(f.extents, 2);
	CHECK_EQ(f.data_blocks, 4);
	CHECK_EQ(f.seeks, 3);
	CHECK_EQ(f.read_blocks, 6);

	/* /d: the same walk less the root's entries, which share its leaf */
	CHECK_RC(r4_frag(db, "/d", &f));
	CHECK(f.data_frag == 0.5 / 3);
	CHECK_EQ(f.seeks, 5);
	CHECK_EQ(f.read_blocks, 10);

	/* refusals change nothing and fill nothing */
	memset(&f, 0x5a, sizeof(f));
	CHECK_EQ(r4_frag(db, "/nope", &f), -ENOENT);
	CHECK_EQ(r4_frag(db, "/d/a/x", &f), -ENOTDIR);
	CHECK_RC(r4_begin(db));
	CHECK_EQ(r4_frag(db, NULL, &f), -EBUSY);
	r4_abort(db);
	CHECK_EQ(f.seeks, 0x5a5a5a5a5a5a5a5aull);
	r4_close(db);
}

int main(void)
{
	char dir[4096], img[4200];

	snprintf(dir, sizeof(dir), "%s/r4fragXXXXXX", t_tmp());
	if (!mkdtemp(dir))
		return 1;
	snprintf(img, sizeof(img), "%s/a.img", dir);
	test_layout(img);
	t_rmdir(dir);
	return T_DONE();
}
