/*
 * test_check.c - the image checker (engine/check.c, r4.h r4_check).
 *
 * A fixture image (node40, and node41 for checksums) holds directories,
 * tail and extent files, a hard link, a symlink, a fifo and a few hundred
 * small files so the tree has several leaves.  Each case copies it,
 * plants one kind of damage - through engine internals inside a
 * transaction (stat data fields, bitmap bits, super block counters,
 * entries) or by editing bytes of a node, journal or status block - and
 * checks the exact problem code, where it is reported (block, object,
 * path) and whether it counts as fixable.  Fixable damage is then repaired
 * with fix mode, and a second check must be clean; fsck.reiser4 --check
 * must agree with the verdict before and after where it checks the same
 * thing (it ignores nlink and orphans).  A seeded random workload through
 * the public API must check clean after every round.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "alloc.h"
#include "db.h"
#include "format.h"
#include "item.h"
#include "key.h"
#include "node.h"
#include "obj.h"
#include "t.h"
#include "tree.h"

#define BS 4096u
#define IMG_SIZE (32u << 20)

static char tmpdir[64];
static char fix40[128], fix41[128], img[128];

/* ============================== collecting ============================== */

struct prob {
	enum r4_check_code code;
	enum r4_check_class cls;
	uint64_t blk, nblk, oid;
	char path[256];
	char msg[256];
	bool fixable, fixed;
};

static struct prob probs[512];
static size_t nprobs;

static void collect(void *ctx, const struct r4_problem *p)
{
	(void)ctx;
	if (getenv("R4_VERBOSE"))
		printf("  problem %d: blk %lld oid %llu path %s: %s%s\n", p->code, (long long)p->blk,
		       (unsigned long long)p->oid, p->path ? p->path : "-", p->msg,
		       p->fixed ? " [fixed]" : p->fixable ? " [fixable]" : "");
	if (nprobs == sizeof(probs) / sizeof(probs[0]))
		return;
	struct prob *q = &probs[nprobs++];
	q->code = p->code;
	q->cls = p->cls;
	q->blk = p->blk;
	q->nblk = p->nblk;
	q->oid = p->oid;
	snprintf(q->path, sizeof(q->path), "%s", p->path ? p->path : "");
	snprintf(q->msg, sizeof(q->msg), "%s", p->msg);
	q->fixable = p->fixable;
	q->fixed = p->fixed;
}

static const struct prob *find(enum r4_check_code code)
{
	for (size_t i = 0; i < nprobs; i++)
		if (probs[i].code == code)
			return &probs[i];
	return NULL;
}

static size_t count(enum r4_check_code code)
{
	size_t n = 0;

	for (size_t i = 0; i < nprobs; i++)
		n += probs[i].code == code;
	return n;
}

/* Check (or fix) path; problems land in probs[]. Returns r4_check's rc or the open's. */
static int check(const char *path, bool fix, struct r4_check_result *res)
{
	struct r4_check_opts o = {.fix = fix, .report = collect};
	r4_db *db = NULL;
	int rc;

	nprobs = 0;
	memset(res, 0, sizeof(*res));
	if ((rc = r4_check_open(path, &o, NULL, &db)))
		return rc;
	rc = r4_check(db, &o, res);
	r4_close(db);
	return rc;
}

/* Clean: no problem at all, and fsck.reiser4 says so too. */
static void expect_clean(const char *what, const char *path)
{
	struct r4_check_result res;
	int rc = check(path, false, &res);

	CHECK_RC(rc);
	CHECK_EQ(res.problems, 0);
	if (res.problems)
		fprintf(stderr, "  (%s: first problem code %d: %s)\n", what, probs[0].code,
			probs[0].msg);
	int f = t_fsck(path);
	if (f >= 0)
		CHECK(f == 1);
}

static void copy_file(const char *from, const char *to);

/* fsck.reiser4's verdict on a copy: even --check writes (the status
 * block, and the super block's counters from the journal footer). */
static void fsck_agrees(bool clean)
{
	char copy[300];
	int f;

	snprintf(copy, sizeof(copy), "%s.fsck-copy", img);
	copy_file(img, copy);
	if ((f = t_fsck(copy)) >= 0)
		CHECK_EQ(f, clean);
	unlink(copy);
}

/* ================================ fixture =============================== */

static void fill(uint8_t *b, size_t n, unsigned seed)
{
	for (size_t i = 0; i < n; i++)
		b[i] = (uint8_t)(seed * 131 + i * 7 + (i >> 10));
}

static void make_fixture(const char *path, bool node41)
{
	struct r4_open_opts oo = {.rw = true};
	struct r4_mkfs_opts mo;
	static uint8_t buf[60000];
	r4_db *db = NULL;
	char p[64];

	r4_mkfs_defaults(&mo);
	mo.node41 = node41;
	mo.mkfs_id = 0x1234567;
	mo.mtime = 1700000000;
	CHECK_RC(r4_mkfs(path, IMG_SIZE, &mo));
	CHECK_RC(r4_open(path, &oo, &db));
	if (!db)
		return;
	CHECK_RC(r4_begin(db));
	CHECK_RC(r4_mkdir(db, "/d1", 0755, 0, 0));
	CHECK_RC(r4_mkdir(db, "/d1/sub", 0755, 0, 0));
	CHECK_RC(r4_create(db, "/d1/small", 0644, 0, 0));
	fill(buf, 100, 1);
	CHECK_RC(r4_write(db, "/d1/small", 0, buf, 100));
	CHECK_RC(r4_link(db, "/d1/small", "/d1/small2"));
	CHECK_RC(r4_create(db, "/d1/big", 0644, 0, 0));
	fill(buf, sizeof(buf), 2);
	CHECK_RC(r4_write(db, "/d1/big", 0, buf, 40000));
	CHECK_RC(r4_create(db, "/d1/big2", 0644, 0, 0));
	CHECK_RC(r4_write(db, "/d1/big2", 0, buf, 30000));
	CHECK_RC(r4_symlink(db, "d1/small", "/link", 0, 0));
	CHECK_RC(r4_mknod(db, "/fifo", S_IFIFO | 0644, 0, 0, 0));
	CHECK_RC(r4_mkdir(db, "/many", 0755, 0, 0));
	CHECK_RC(r4_commit(db));
	for (int i = 0; i < 400; i++) {
		snprintf(p, sizeof(p), "/many/file-with-a-longer-name-%04d", i);
		CHECK_RC(r4_create(db, p, 0644, 0, 0));
		CHECK_RC(r4_write(db, p, 0, buf, 50));
	}
	r4_close(db);
}

static void copy_file(const char *from, const char *to)
{
	char cmd[512];

	snprintf(cmd, sizeof(cmd), "cp --sparse=always '%s' '%s'", from, to);
	CHECK(system(cmd) == 0);
}

/* A cheap digest of img. */
static unsigned long long digest(const char *path)
{
	FILE *f = fopen(path, "rb");
	unsigned long long h = 1469598103934665603ull;
	int ch;

	if (!f)
		return 0;
	while ((ch = getc(f)) != EOF)
		h = (h ^ (unsigned)ch) * 1099511628211ull;
	fclose(f);
	return h;
}

/* ============================ planting damage =========================== */

static r4_db *open_rw(void)
{
	struct r4_open_opts oo = {.rw = true};
	r4_db *db = NULL;

	CHECK_RC(r4_open(img, &oo, &db));
	return db;
}

static uint64_t ino_of(const char *path)
{
	struct r4_open_opts oo = {0};
	struct r4_stat st = {0};
	r4_db *db = NULL;

	CHECK_RC(r4_open(img, &oo, &db));
	if (db)
		CHECK_RC(r4_stat(db, path, &st));
	r4_close(db);
	return st.ino;
}

/* The stat-data key of path (via its directory's entry). */
static int key_of(r4_db *db, const char *path, r4_key *k)
{
	struct r4_inode dir;
	r4_key rk;
	const char *s = strrchr(path, '/');
	char dpath[64];
	int rc;

	r4_obj_root_key(&rk);
	if (!strcmp(path, "/")) {
		*k = rk;
		return 0;
	}
	snprintf(dpath, sizeof(dpath), "%.*s", (int)(s - path), path);
	if (!dpath[0]) {
		if ((rc = r4_obj_load(db, &rk, &dir)))
			return rc;
	} else {
		r4_key dk;
		if ((rc = key_of(db, dpath, &dk)) || (rc = r4_obj_load(db, &dk, &dir)))
			return rc;
	}
	rc = r4_dir_lookup(db, &dir, s + 1, strlen(s + 1), k);
	r4_obj_fini(&dir);
	return rc;
}

enum field { NLINK, SIZE, BYTES, MODE };

/* Set one stat-data field of path, committed. */
static void set_field(const char *path, enum field f, uint64_t v)
{
	r4_db *db = open_rw();
	struct r4_inode ino;
	r4_key k;

	if (!db)
		return;
	CHECK_RC(r4_begin(db));
	CHECK_RC(key_of(db, path, &k));
	CHECK_RC(r4_obj_load(db, &k, &ino));
	if (f == NLINK)
		ino.sd.sd_nlink = (uint32_t)v;
	else if (f == SIZE)
		ino.sd.sd_size = v;
	else if (f == MODE)
		ino.sd.sd_mode = (uint32_t)v;
	else
		ino.sd.sd_bytes_rdev = v;
	CHECK_RC(r4_obj_save(db, &ino));
	r4_obj_fini(&ino);
	CHECK_RC(r4_commit(db));
	r4_close(db);
}

static void rw_block(uint64_t blk, uint8_t *buf, bool write)
{
	int fd = open(img, write ? O_WRONLY : O_RDONLY);

	CHECK(fd >= 0);
	if (fd < 0)
		return;
	if (write)
		CHECK(pwrite(fd, buf, BS, (off_t)(blk * BS)) == (ssize_t)BS);
	else
		CHECK(pread(fd, buf, BS, (off_t)(blk * BS)) == (ssize_t)BS);
	close(fd);
}

/* Commit a change that dirtied no node (bitmap bits, counters): count it
 * and dirty the root as it is, which commit needs (see engine/check.c). */
static int commit_raw(r4_db *db)
{
	r4_node *n;
	int rc;

	db->gen++;
	if ((rc = r4_node_get(db, db->root, db->height, &n)))
		return rc;
	r4_node_dirty(db, n);
	r4_node_put(db, n);
	return r4_commit(db);
}

/* Nodes of the tree, from the engine's walk. */
struct nodes {
	uint64_t blk[4096];
	unsigned level[4096];
	size_t n;
};

static int visit(void *ctx, uint64_t blk, const uint8_t *node, unsigned level)
{
	struct nodes *ns = ctx;

	(void)node;
	if (ns->n < 4096) {
		ns->blk[ns->n] = blk;
		ns->level[ns->n++] = level;
	}
	return 0;
}

static void list_nodes(struct nodes *ns)
{
	struct r4_open_opts oo = {0};
	r4_db *db = NULL;

	ns->n = 0;
	CHECK_RC(r4_open(img, &oo, &db));
	if (db)
		CHECK_RC(r4_tree_walk(db, visit, ns));
	r4_close(db);
}

/* The last leaf of the tree (never the one holding the root's stat data). */
static uint64_t last_leaf(struct nodes *ns)
{
	for (size_t i = ns->n; i-- > 0;)
		if (ns->level[i] == R4_LEVEL_LEAF)
			return ns->blk[i];
	return 0;
}

static void write_nodes_key(uint8_t *b, unsigned i, const r4_key *k)
{
	r4_key_encode(k, r4_node_ih(b, BS, i) + R4_IH_KEY);
}

/* ================================= cases ================================ */

static void case_clean(void)
{
	printf("case: clean fixtures\n");
	expect_clean("node40 fixture", fix40);
	expect_clean("node41 fixture", fix41);
}

/* Fix, then a second check is clean and fsck.reiser4 agrees; want_fixed
 * counts the repairs besides the status block's. */
static void fix_then_clean(uint64_t want_fixed)
{
	struct r4_check_result res;

	CHECK_RC(check(img, true, &res));
	/* fsck.reiser4 --check marks what it judged damaged in the status block */
	CHECK_EQ(res.fixed - (find(R4_CK_SB_STATUS) ? 1 : 0), want_fixed);
	if (res.fixed - (find(R4_CK_SB_STATUS) ? 1 : 0) != want_fixed)
		for (size_t i = 0; i < nprobs; i++)
			fprintf(stderr, "  problem %d: %s\n", probs[i].code, probs[i].msg);
	CHECK_EQ(res.unfixed, 0);
	for (size_t i = 0; i < nprobs; i++)
		CHECK(probs[i].fixed);
	expect_clean("after fix", img);
}

static void case_nlink(void)
{
	struct r4_check_result res;
	const struct prob *p;

	printf("case: nlink\n");
	copy_file(fix40, img);
	uint64_t small = ino_of("/d1/small"), d1 = ino_of("/d1");
	set_field("/d1/small", NLINK, 5);
	set_field("/d1", NLINK, 9);
	CHECK_RC(check(img, false, &res));
	CHECK_EQ(res.problems, 2);
	CHECK_EQ(count(R4_CK_OBJ_NLINK), 2);
	CHECK((p = find(R4_CK_OBJ_NLINK)) && p->oid == d1 && p->cls == R4_CC_OBJECT &&
	      p->fixable && !p->fixed && !strcmp(p->path, "/d1") && strstr(p->msg, "should be 3"));
	CHECK(nprobs == 2 && probs[1].oid == small && strstr(probs[1].msg, "should be 2") &&
	      (!strcmp(probs[1].path, "/d1/small") || !strcmp(probs[1].path, "/d1/small2")));
	CHECK(p && p->blk != R4_CHECK_NOBLK);
	fsck_agrees(true);		/* fsck.reiser4 --check ignores nlink */
	fix_then_clean(2);
}

/* r4's records (/..r4): one of an object that is gone (another tool removed
 * it) is removed by a fix; one r4 cannot read too, and its object keeps only
 * its owner's mode bits. */
static void put_record(r4_db *db, const char *path, const char *text)
{
	CHECK_RC(r4_create(db, path, 0600, 0, 0));
	CHECK_RC(r4_write(db, path, 0, text, strlen(text)));
}

static void case_meta(void)
{
	struct r4_check_result res;
	const struct prob *p;
	struct r4_stat st;
	char bad[64];
	r4_db *db;

	printf("case: r4 records\n");
	copy_file(fix40, img);
	uint64_t small = ino_of("/d1/small");

	if (!(db = open_rw()))
		return;
	snprintf(bad, sizeof(bad), "/..r4/%llu", (unsigned long long)small);
	CHECK_RC(r4_mkdir(db, "/..r4", 0700, 0, 0));
	put_record(db, "/..r4/999999", "uid 1001 read\n");
	put_record(db, bad, "no such line\n");
	r4_close(db);
	CHECK_RC(check(img, false, &res));
	CHECK_EQ(res.problems, 2);
	CHECK((p = find(R4_CK_META_ORPHAN)) && p->cls == R4_CC_META && p->fixable &&
	      !strcmp(p->path, "/..r4/999999"));
	CHECK((p = find(R4_CK_META_BAD)) && p->fixable && p->oid == small &&
	      !strcmp(p->path, bad));
	fsck_agrees(true);		/* plain files to fsck.reiser4 */
	fix_then_clean(2);
	if ((db = open_rw())) {
		CHECK(r4_stat(db, "/..r4/999999", &st) == -ENOENT && r4_stat(db, bad, &st) == -ENOENT);
		CHECK(!r4_stat(db, "/d1/small", &st) && (st.mode & 07777) == 0600);
		r4_close(db);
	}
}

static void case_sizes(void)
{
	struct r4_check_result res;
	const struct prob *p;

	printf("case: size and bytes\n");
	copy_file(fix40, img);
	uint64_t d1 = ino_of("/d1"), small = ino_of("/d1/small"), big = ino_of("/d1/big");
	set_field("/d1", SIZE, 3);
	set_field("/d1/small", SIZE, 99);
	set_field("/d1/big", BYTES, 4096);
	set_field("/link", BYTES, 12);
	CHECK_RC(check(img, false, &res));
	CHECK_EQ(res.problems, 4);
	CHECK((p = find(R4_CK_OBJ_SIZE)) && p->oid == d1 && strstr(p->msg, "3, should be 7"));
	CHECK(count(R4_CK_OBJ_SIZE) == 2 && probs[1].oid == small &&
	      strstr(probs[1].msg, "size 99, should be 100"));
	CHECK(count(R4_CK_OBJ_BYTES) == 2);
	CHECK((p = find(R4_CK_OBJ_BYTES)) && p->oid == big &&
	      strstr(p->msg, "bytes 4096, should be 40960") && !strcmp(p->path, "/d1/big"));
	CHECK(nprobs == 4 && !strcmp(probs[3].path, "/link") && strstr(probs[3].msg, "should be 0"));
	fsck_agrees(false);
	fix_then_clean(4);
}

/* A file whose mode says symlink, with no target in its stat data (found
 * by fuzz_image): reported, and the object is refused as damaged by every
 * call that loads it (readlink copied from a null target). */
static void case_symlink_no_target(void)
{
	struct r4_open_opts o = {0};
	struct r4_check_result res;
	const struct prob *p;
	struct r4_stat st;
	char buf[64];
	size_t len;
	r4_db *db;

	printf("case: symlink without a target\n");
	copy_file(fix40, img);
	uint64_t small = ino_of("/d1/small");
	set_field("/d1/small", MODE, S_IFLNK | 0777);
	CHECK_RC(check(img, false, &res));
	CHECK((p = find(R4_CK_OBJ_MODE)) && p->oid == small && !p->fixable &&
	      strstr(p->msg, "symlink without a target extension"));
	CHECK_RC(r4_open(img, &o, &db));
	if (!db)
		return;
	CHECK_EQ(r4_readlink(db, "/d1/small", buf, sizeof(buf), &len), -EUCLEAN);
	CHECK_EQ(r4_stat(db, "/d1/small", &st), -EUCLEAN);
	CHECK_RC(r4_stat(db, "/d1/big", &st));
	r4_close(db);
}

static void case_leak_and_free(void)
{
	struct r4_check_result res;
	const struct prob *p;
	uint64_t s, got, leaf;

	printf("case: bitmap\n");
	copy_file(fix40, img);
	/* a leaf the commit leaves alone (commit_raw moves the root) */
	static struct nodes ns;
	list_nodes(&ns);
	leaf = 0;
	for (size_t i = 0; i < ns.n && !leaf; i++)
		if (ns.level[i] == 1)
			leaf = ns.blk[i];
	CHECK(leaf != 0);
	r4_db *db = open_rw();
	if (!db)
		return;
	CHECK_RC(r4_begin(db));
	CHECK_RC(r4_alloc_alloc(db->alloc, 5000, 3, &s, &got));
	CHECK_EQ(got, 3);
	r4_alloc_free(db->alloc, leaf, 1);	/* a leaf, still in use */
	CHECK_RC(commit_raw(db));
	r4_close(db);
	CHECK_RC(check(img, false, &res));
	CHECK((p = find(R4_CK_BMP_LEAK)) && p->blk == s && p->nblk == 3 && p->fixable &&
	      p->cls == R4_CC_BITMAP);
	CHECK((p = find(R4_CK_BMP_FREE)) && p->blk == leaf && p->nblk == 1);
	CHECK((p = find(R4_CK_SB_FREE)) && p->blk == R4_FSB_BLOCK(BS));
	CHECK_EQ(res.problems, 3);
	fsck_agrees(false);
	fix_then_clean(3);
}

static void case_counters(void)
{
	struct r4_check_result res;
	const struct prob *p;
	uint8_t b[BS];

	printf("case: super block counters\n");
	copy_file(fix40, img);
	r4_db *db = open_rw();
	if (!db)
		return;
	uint64_t objects = db->file_count;
	CHECK_RC(r4_begin(db));
	db->next_oid = 0x10003;
	db->file_count = 7;
	CHECK_RC(commit_raw(db));
	r4_close(db);
	rw_block(R4_FSB_BLOCK(BS), b, false);
	r4_le64_put(b + R4_FSB_FREE, r4_le64_get(b + R4_FSB_FREE) + 10);
	rw_block(R4_FSB_BLOCK(BS), b, true);
	CHECK_RC(check(img, false, &res));
	CHECK_EQ(res.problems, 3);
	CHECK((p = find(R4_CK_SB_OID)) && p->cls == R4_CC_SUPER && p->fixable);
	CHECK((p = find(R4_CK_SB_FILES)) && strstr(p->msg, "file count 7"));
	CHECK((p = find(R4_CK_SB_FREE)) && p->fixable);
	fsck_agrees(false);
	fix_then_clean(3);
	db = NULL;
	CHECK_RC(r4_open(img, &(struct r4_open_opts){0}, &db));
	if (db)
		CHECK_EQ(db->file_count, objects);
	r4_close(db);
}

/* The first n bytes of path equal fill(seed)? */
static bool holds(r4_db *db, const char *path, size_t n, int seed)
{
	static uint8_t want[60000], got[60000];
	struct r4_stat st;
	size_t len = 0;

	fill(want, sizeof(want), seed);
	return !r4_stat(db, path, &st) && st.size == n &&
	       !r4_read(db, path, 0, got, n, &len) && len == n && !memcmp(got, want, n);
}

static void case_names(void)
{
	struct r4_check_result res;
	const struct prob *p;
	struct r4_inode d1, sub;
	struct r4_stat st;
	r4_key k, ghost, rk;
	char path[64];

	printf("case: names (dangling entry, orphan file, wrong '.')\n");
	copy_file(fix40, img);
	uint64_t big = ino_of("/d1/big"), subo = ino_of("/d1/sub");
	r4_db *db = open_rw();
	if (!db)
		return;
	CHECK_RC(r4_begin(db));
	CHECK_RC(key_of(db, "/d1", &k));
	CHECK_RC(r4_obj_load(db, &k, &d1));
	r4_key_sd(&ghost, r4_key_objectid(&k), 0x1234, 0x54321);
	CHECK_RC(r4_dir_add(db, &d1, "ghost", 5, &ghost));
	CHECK_RC(r4_dir_remove(db, &d1, "big", 3));
	CHECK_RC(key_of(db, "/d1/sub", &k));
	CHECK_RC(r4_obj_load(db, &k, &sub));
	r4_obj_root_key(&rk);
	CHECK_RC(r4_dir_retarget(db, &sub, ".", 1, &rk));
	r4_obj_fini(&d1);
	r4_obj_fini(&sub);
	CHECK_RC(r4_commit(db));
	r4_close(db);
	CHECK_RC(check(img, false, &res));
	CHECK((p = find(R4_CK_NAME_DANGLING)) && p->oid == 0x54321 && p->fixable &&
	      !strcmp(p->path, "/d1/ghost") && p->cls == R4_CC_NAME);
	CHECK((p = find(R4_CK_NAME_ORPHAN)) && p->oid == big && p->fixable);
	CHECK((p = find(R4_CK_NAME_DOT)) && p->oid == subo && p->blk != R4_CHECK_NOBLK &&
	      p->fixable && !strcmp(p->msg, "'.' names object 42"));
	CHECK_EQ(res.problems, 3);
	CHECK_EQ(res.unfixed, 3);
	fsck_agrees(false);		/* the dangling entry */
	fix_then_clean(3);
	fsck_agrees(true);
	db = NULL;
	CHECK_RC(r4_open(img, &(struct r4_open_opts){0}, &db));
	if (!db)
		return;
	snprintf(path, sizeof(path), "/lost+found/#%llu", (unsigned long long)big);
	CHECK(holds(db, path, 40000, 2));	/* the orphan's data, under its new name */
	CHECK(!r4_stat(db, path, &st) && st.nlink == 1 && st.ino == big);
	CHECK(!r4_stat(db, "/lost+found", &st) && st.mode == (S_IFDIR | 0700) && st.nlink == 2);
	CHECK_EQ(r4_stat(db, "/d1/ghost", &st), -ENOENT);
	CHECK(!r4_stat(db, "/d1/sub/.", &st) && st.ino == subo);
	r4_close(db);
}

/* Orphan directories keep their children and get ".." right; a directory
 * without ".." gets one; /lost+found that is not a directory stops the
 * linking. */
static void case_orphan_dir(void)
{
	struct r4_check_result res;
	const struct prob *p;
	struct r4_inode d1, dir;
	struct r4_stat st;
	r4_key k;
	char path[80];

	printf("case: orphan directory, missing '..'\n");
	copy_file(fix40, img);
	uint64_t subo = ino_of("/d1/sub"), many = ino_of("/many");
	r4_db *db = open_rw();
	if (!db)
		return;
	CHECK_RC(r4_mkdir(db, "/lost+found", 0755, 0, 0));
	CHECK_RC(r4_create(db, "/d1/sub/inner", 0644, 0, 0));
	CHECK_RC(r4_write(db, "/d1/sub/inner", 0, "kept", 4));
	CHECK_RC(r4_begin(db));
	CHECK_RC(key_of(db, "/d1", &k));
	CHECK_RC(r4_obj_load(db, &k, &d1));
	CHECK_RC(r4_dir_remove(db, &d1, "sub", 3));
	r4_obj_fini(&d1);
	CHECK_RC(key_of(db, "/many", &k));
	CHECK_RC(r4_obj_load(db, &k, &dir));
	CHECK_RC(r4_dir_remove(db, &dir, "..", 2));
	r4_obj_fini(&dir);
	CHECK_RC(r4_commit(db));
	r4_close(db);
	CHECK_RC(check(img, false, &res));
	CHECK((p = find(R4_CK_NAME_ORPHAN)) && p->oid == subo && p->fixable);
	CHECK((p = find(R4_CK_NAME_DOTDOT)) && p->oid == many && p->fixable &&
	      !strcmp(p->msg, "directory has no '..'") && !strcmp(p->path, "/many"));
	CHECK_EQ(count(R4_CK_OBJ_NLINK), 1);	/* "/" lost the ".." of /many */
	CHECK_EQ(res.problems, 3);
	fix_then_clean(3);
	fsck_agrees(true);
	CHECK_RC(r4_open(img, &(struct r4_open_opts){0}, &db));
	if (!db)
		return;
	snprintf(path, sizeof(path), "/lost+found/#%llu/inner", (unsigned long long)subo);
	CHECK(!r4_stat(db, path, &st) && st.size == 4);
	snprintf(path, sizeof(path), "/lost+found/#%llu/..", (unsigned long long)subo);
	CHECK(!r4_stat(db, path, &st) && st.ino == ino_of("/lost+found"));
	CHECK(!r4_stat(db, "/lost+found", &st) && st.nlink == 3 && st.mode == (S_IFDIR | 0755));
	CHECK(!r4_stat(db, "/d1", &st) && st.nlink == 2);
	CHECK(!r4_stat(db, "/many/..", &st) && st.ino == R4_ROOT_OID);
	r4_close(db);

	/* /lost+found is a file: the orphan stays, and fix mode says why not */
	copy_file(fix40, img);
	db = open_rw();
	if (!db)
		return;
	CHECK_RC(r4_create(db, "/lost+found", 0644, 0, 0));
	CHECK_RC(r4_begin(db));
	CHECK_RC(key_of(db, "/d1", &k));
	CHECK_RC(r4_obj_load(db, &k, &d1));
	CHECK_RC(r4_dir_remove(db, &d1, "small2", 6));
	CHECK_RC(r4_dir_remove(db, &d1, "small", 5));
	r4_obj_fini(&d1);
	CHECK_RC(r4_commit(db));
	r4_close(db);
	unsigned long long before = digest(img);
	CHECK_RC(check(img, true, &res));
	CHECK((p = find(R4_CK_NAME_ORPHAN)) && !p->fixable && !p->fixed);
	CHECK_EQ(res.problems, 1);
	CHECK_EQ(res.fixed, 0);
	CHECK_EQ(digest(img), before);
}

/* Two directories naming each other, cut off from the root: found,
 * reported once, and left alone (no '..' "repair" closes the loop). */
static void case_cycle(void)
{
	struct r4_check_result res;
	const struct prob *p;
	struct r4_inode d1, y;
	r4_key kx, k;

	printf("case: a loop of directories\n");
	copy_file(fix40, img);
	r4_db *db = open_rw();
	if (!db)
		return;
	CHECK_RC(r4_mkdir(db, "/d1/x", 0755, 0, 0));
	CHECK_RC(r4_mkdir(db, "/d1/x/y", 0755, 0, 0));
	uint64_t xo = ino_of("/d1/x");
	CHECK_RC(r4_begin(db));
	CHECK_RC(key_of(db, "/d1/x", &kx));
	CHECK_RC(key_of(db, "/d1/x/y", &k));
	CHECK_RC(r4_obj_load(db, &k, &y));
	CHECK_RC(r4_dir_add(db, &y, "x", 1, &kx));
	r4_obj_fini(&y);
	CHECK_RC(key_of(db, "/d1", &k));
	CHECK_RC(r4_obj_load(db, &k, &d1));
	CHECK_RC(r4_dir_remove(db, &d1, "x", 1));
	r4_obj_fini(&d1);
	CHECK_RC(r4_commit(db));
	r4_close(db);
	CHECK_RC(check(img, false, &res));
	CHECK((p = find(R4_CK_NAME_ORPHAN)) && p->oid == xo && !p->fixable &&
	      strstr(p->msg, "cut off from the root"));
	CHECK_EQ(count(R4_CK_NAME_ORPHAN), 1);
	CHECK_EQ(count(R4_CK_NAME_DOTDOT), 0);
	unsigned long long before = digest(img);
	CHECK_RC(check(img, true, &res));
	CHECK(res.unfixed >= 1);
	CHECK((p = find(R4_CK_NAME_ORPHAN)) && !p->fixed);
	CHECK_EQ(digest(img), before);		/* nothing else was wrong: nothing written */
	fsck_agrees(true);			/* fsck.reiser4 does not look for loops */
}

/* A directory item whose unit offsets do not check: an entry added at its
 * end is refused as damage, and the item is left as it was (the in-place
 * add gives the offsets their shift as it checks them, and takes it back). */
static void case_bad_offsets(void)
{
	struct r4_inode d1;
	struct r4_path p;
	uint8_t *body, before[R4_MAX_BLOCKSIZE];
	unsigned len, n = 0, len2;
	r4_key k, ek, ghost;

	printf("case: an entry added to a directory item whose offsets do not check\n");
	copy_file(fix40, img);
	r4_db *db = open_rw();
	if (!db)
		return;
	CHECK_RC(r4_begin(db));
	CHECK_RC(key_of(db, "/d1", &k));
	CHECK_RC(r4_obj_load(db, &k, &d1));
	r4_key_entry(&ek, r4_key_objectid(&k), "zzzz-last", 9, d1.hash, d1.fibre);
	CHECK_RC(r4_tree_lookup(db, &ek, R4_LEVEL_LEAF, &p));
	CHECK(r4_path_item(db, &p, NULL, NULL, &body, &len));
	CHECK_RC(r4_item_cde_count(body, len, &n));
	CHECK(n >= 3);
	if (n >= 3) {
		/* unit 2's body where unit 1's is */
		memcpy(body + R4_CDE_HDR + 2 * R4_CDE_UH_SIZE + R4_CDE_UH_OFFSET,
		       body + R4_CDE_HDR + R4_CDE_UH_SIZE + R4_CDE_UH_OFFSET, 2);
		memcpy(before, body, len);
	}
	r4_path_release(db, &p);
	r4_key_sd(&ghost, r4_key_objectid(&k), 0x1234, 0x54321);
	CHECK_EQ(r4_dir_add(db, &d1, "zzzz-last", 9, &ghost), -EUCLEAN);
	CHECK_RC(r4_tree_lookup(db, &ek, R4_LEVEL_LEAF, &p));
	CHECK(r4_path_item(db, &p, NULL, NULL, &body, &len2));
	CHECK(len2 == len && !memcmp(before, body, len));
	r4_path_release(db, &p);
	r4_obj_fini(&d1);
	r4_abort(db);
	r4_close(db);
}

static void case_dotdot(void)
{
	struct r4_check_result res;
	const struct prob *p;
	struct r4_inode sub;
	struct r4_stat st;
	r4_key k, rk;

	printf("case: dotdot\n");
	copy_file(fix40, img);
	uint64_t subo = ino_of("/d1/sub"), d1 = ino_of("/d1");
	r4_db *db = open_rw();
	if (!db)
		return;
	CHECK_RC(r4_begin(db));
	CHECK_RC(key_of(db, "/d1/sub", &k));
	CHECK_RC(r4_obj_load(db, &k, &sub));
	r4_obj_root_key(&rk);
	CHECK_RC(r4_dir_retarget(db, &sub, "..", 2, &rk));
	r4_obj_fini(&sub);
	CHECK_RC(r4_commit(db));
	r4_close(db);
	CHECK_RC(check(img, false, &res));
	CHECK((p = find(R4_CK_NAME_DOTDOT)) && p->oid == subo && !strcmp(p->path, "/d1/sub") &&
	      p->fixable);
	CHECK_EQ(count(R4_CK_OBJ_NLINK), 2);	/* "/" gains a "..", /d1 loses one */
	fsck_agrees(false);
	fix_then_clean(3);
	CHECK_RC(r4_open(img, &(struct r4_open_opts){0}, &db));
	if (!db)
		return;
	CHECK(!r4_stat(db, "/d1/sub/..", &st) && st.ino == d1);
	CHECK(!r4_stat(db, "/d1", &st) && st.nlink == 3);
	r4_close(db);
}

static void case_node_order(void)
{
	struct r4_check_result res;
	struct nodes ns;
	uint8_t b[BS];
	const struct prob *p;
	r4_key k;

	printf("case: key order inside a node\n");
	copy_file(fix40, img);
	list_nodes(&ns);
	uint64_t leaf = last_leaf(&ns);
	rw_block(leaf, b, false);
	CHECK(r4_node_nr(b) >= 3);
	r4_node_key(b, BS, 2, &k);
	k.el[0] += 0x100;
	write_nodes_key(b, 1, &k);
	rw_block(leaf, b, true);
	unsigned long long before = digest(img);
	CHECK_RC(check(img, true, &res));
	CHECK((p = find(R4_CK_NODE_BAD)) && p->blk == leaf && p->cls == R4_CC_NODE &&
	      strstr(p->msg, "keys out of order at item 2"));
	CHECK(res.semantic_skipped);
	CHECK(res.unfixed >= 1 && res.fixed == 0);
	CHECK_EQ(digest(img), before);		/* no repair on a damaged tree */
	fsck_agrees(false);
}

static void case_empty_and_dkey(void)
{
	struct r4_check_result res;
	struct nodes ns;
	uint8_t b[BS];
	const struct prob *p;
	r4_key k0, k1;

	printf("case: empty node, delimiting key\n");
	copy_file(fix40, img);
	list_nodes(&ns);
	uint64_t leaf = last_leaf(&ns);
	rw_block(leaf, b, false);
	r4_le16_put(b + R4_NH_NR_ITEMS, 0);
	r4_le16_put(b + R4_NH_FREE_START, R4_NH40_SIZE);
	r4_le16_put(b + R4_NH_FREE, BS - R4_NH40_SIZE);
	rw_block(leaf, b, true);
	CHECK_RC(check(img, false, &res));
	CHECK((p = find(R4_CK_NODE_EMPTY)) && p->blk == leaf);
	CHECK_EQ(res.problems, 1);
	fsck_agrees(false);

	copy_file(fix40, img);
	rw_block(leaf, b, false);
	r4_node_key(b, BS, 0, &k0);
	r4_node_key(b, BS, 1, &k1);
	k0.el[3]++;
	CHECK(r4_key_cmp(&k0, &k1) < 0);
	write_nodes_key(b, 0, &k0);
	rw_block(leaf, b, true);
	CHECK_RC(check(img, false, &res));
	CHECK((p = find(R4_CK_TREE_DKEY)) && p->blk == leaf && p->cls == R4_CC_TREE);
	fsck_agrees(false);
}

/* The twig item (extent or pointer) satisfying want, in some twig. */
static bool find_twig_item(struct nodes *ns, unsigned pid, uint64_t oid, uint64_t *blk,
			   unsigned *pos, uint8_t *b)
{
	bool found = false;

	for (size_t i = 0; i < ns->n; i++) {
		if (ns->level[i] != R4_LEVEL_TWIG)
			continue;
		rw_block(ns->blk[i], b, false);
		for (unsigned j = 0; j < r4_node_nr(b); j++) {
			r4_key k;

			r4_node_key(b, BS, j, &k);
			if (r4_node_item_pid(b, BS, j) == pid &&
			    (!oid || r4_key_objectid(&k) == oid)) {
				*blk = ns->blk[i];
				*pos = j;
				found = true;
				if (oid)
					return true;
			}
		}
	}
	if (found)	/* the last pointer: never the leaf of the root's stat data */
		rw_block(*blk, b, false);
	return found;
}

static void case_double_use_and_ptr(void)
{
	struct r4_check_result res;
	struct nodes ns;
	uint8_t b[BS];
	const struct prob *p;
	uint64_t tw, start;
	unsigned pos;

	printf("case: block used twice, pointer out of the volume\n");
	copy_file(fix40, img);
	uint64_t big = ino_of("/d1/big"), big2 = ino_of("/d1/big2");
	list_nodes(&ns);
	CHECK(find_twig_item(&ns, R4_ITEM_EXTENT40, big, &tw, &pos, b));
	start = r4_le64_get(b + r4_node_item_off(b, BS, pos));
	CHECK(find_twig_item(&ns, R4_ITEM_EXTENT40, big2, &tw, &pos, b));
	r4_le64_put(b + r4_node_item_off(b, BS, pos), start);
	rw_block(tw, b, true);
	CHECK_RC(check(img, false, &res));
	CHECK((p = find(R4_CK_BLK_TWICE)) && p->blk == tw && p->oid == big2 &&
	      p->cls == R4_CC_BLOCK && !p->fixable);
	CHECK((p = find(R4_CK_BMP_LEAK)) && p->nblk == 8);	/* big2's own blocks */
	CHECK(res.unfixed >= 1);
	fsck_agrees(false);

	copy_file(fix40, img);
	CHECK(find_twig_item(&ns, R4_ITEM_NODEPTR40, 0, &tw, &pos, b));
	r4_le64_put(b + r4_node_item_off(b, BS, pos), IMG_SIZE / BS + 5);
	rw_block(tw, b, true);
	CHECK_RC(check(img, false, &res));
	CHECK((p = find(R4_CK_TREE_PTR)) && p->blk == tw && strstr(p->msg, "outside the volume"));
	CHECK(res.semantic_skipped);
}

static void case_node41_csum(void)
{
	struct r4_check_result res;
	struct nodes ns;
	uint8_t b[BS];
	const struct prob *p;

	printf("case: node41 checksum\n");
	copy_file(fix41, img);
	list_nodes(&ns);
	uint64_t leaf = last_leaf(&ns);
	rw_block(leaf, b, false);
	b[200] ^= 0x10;
	rw_block(leaf, b, true);
	CHECK_RC(check(img, false, &res));
	CHECK((p = find(R4_CK_NODE_CSUM)) && p->blk == leaf && p->cls == R4_CC_NODE);
	CHECK_EQ(res.problems, 1);
	fsck_agrees(false);
}

/*
 * The pending image (its head th at block 8000) with the head's total and
 * first record set, and, when serial is not 0, a wander record at 8001
 * saying serial of wtotal whose next is next (a head at 8002 when next is
 * 8002): one R4_CK_JNL_BAD at blk, msg.
 */
static void journal_break(const char *pending, struct r4_th *th, uint32_t total, uint64_t first,
			  uint32_t serial, uint32_t wtotal, uint64_t next, uint64_t blk,
			  const char *msg)
{
	struct r4_check_result res;
	struct r4_wr wr = {.wr_total = wtotal, .wr_serial = serial, .wr_next_block = next};
	const struct prob *p;
	uint8_t b[BS];

	copy_file(pending, img);
	th->th_total = total;
	th->th_next_block = first;
	memset(b, 0, BS);
	r4_th_encode(th, b, BS);
	rw_block(8000, b, true);
	if (serial) {
		r4_wr_init(&wr, b, BS);
		rw_block(8001, b, true);
	}
	CHECK_RC(check(img, false, &res));
	CHECK((p = find(R4_CK_JNL_BAD)) && p->blk == blk && !strcmp(p->msg, msg));
	if (p && strcmp(p->msg, msg))
		fprintf(stderr, "  got \"%s\" at block %llu\n", p->msg, (unsigned long long)p->blk);
}

static void case_journal(void)
{
	struct r4_check_result res;
	const struct prob *p;
	uint8_t b[BS];
	struct r4_jf jf;
	struct r4_th th = {.th_total = 1, .th_next_block = 8000, .th_free_blocks = 100};
	struct r4_jh jh = {.jh_last_committed = 8000};
	char pending[200], msg[160];

	printf("case: journal\n");
	copy_file(fix40, img);
	set_field("/d1/small", NLINK, 4);
	/* an empty committed transaction after the footer's */
	rw_block(R4_JFOOTER_BLOCK(BS), b, false);
	CHECK_RC(r4_jf_decode(NULL, b, BS, UINT64_MAX, &jf));
	th.th_prev_tx = jf.jf_last_flushed;
	th.th_free_blocks = jf.jf_free_blocks;
	th.th_nr_files = jf.jf_nr_files;
	th.th_next_oid = jf.jf_next_oid;
	r4_th_encode(&th, b, BS);
	rw_block(8000, b, true);
	memset(b, 0, BS);
	r4_jh_encode(&jh, b);
	rw_block(R4_JHEADER_BLOCK(BS), b, true);
	snprintf(pending, sizeof(pending), "%s.pending", img);
	copy_file(img, pending);
	/* read-only: pending, reported, nothing written, nothing fixed */
	unsigned long long before = digest(img);
	CHECK_RC(check(img, false, &res));
	CHECK((p = find(R4_CK_JNL_PENDING)) && p->blk == R4_JHEADER_BLOCK(BS) &&
	      p->cls == R4_CC_JOURNAL && strstr(p->msg, "1 committed transaction is"));
	CHECK(res.journal_pending);
	CHECK((p = find(R4_CK_OBJ_NLINK)) && p->fixable && !p->fixed);
	CHECK_EQ(res.fixed, 0);
	CHECK_EQ(digest(img), before);
	/* --fix: the open replays it (reported as fixed), then the nlink is repaired */
	CHECK_RC(check(img, true, &res));
	CHECK((p = find(R4_CK_JNL_PENDING)) && p->fixed && strstr(p->msg, "replayed at open"));
	CHECK(!res.journal_pending);
	CHECK((p = find(R4_CK_OBJ_NLINK)) && p->fixed);
	CHECK_EQ(res.unfixed, 0);
	expect_clean("after replay and fix", img);

	/* a head without its magic: the engine will not open it; the checker
	 * reads the image in place and names the block */
	copy_file(pending, img);
	memset(b, 0, BS);
	rw_block(8000, b, true);
	CHECK_RC(check(img, false, &res));
	CHECK((p = find(R4_CK_JNL_BAD)) && p->blk == 8000);
	CHECK_RC(check(img, true, &res));	/* --fix writes nothing over it */
	CHECK((p = find(R4_CK_JNL_BAD)) && p->blk == 8000 && !p->fixed);
	CHECK(res.unfixed > 0);

	/* the chain's rules are r4_jnl_walk's; each break in the checker's words */
	journal_break(pending, &th, 2, 8001, 0, 0, 0, 8001,
		      "wander record 1 of the transaction at block 8000: no wander record "
		      "(wrong magic)");
	journal_break(pending, &th, 2, 8000, 0, 0, 0, 8000,
		      "wander record 1 of the transaction at block 8000: ring closes early");
	journal_break(pending, &th, 2, 8001, 1, 3, 8000, 8001,
		      "wander record says 1 of 3, expected 1 of 2");
	journal_break(pending, &th, 2, 8001, 1, 2, 8002, 8000,
		      "the records of the transaction do not lead back to its head");
	/* a loop: 8000's previous is 8002, whose previous is 8000 */
	th.th_prev_tx = 8002;
	copy_file(pending, img);
	memset(b, 0, BS);
	r4_th_encode(&(struct r4_th){.th_total = 1, .th_prev_tx = 8000, .th_next_block = 8002}, b, BS);
	rw_block(8002, b, true);
	copy_file(img, pending);
	snprintf(msg, sizeof(msg), "the transaction chain from the header (block 8000) does not "
		 "reach the footer's (block %llu)", (unsigned long long)jf.jf_last_flushed);
	journal_break(pending, &th, 1, 8000, 0, 0, 0, R4_JHEADER_BLOCK(BS), msg);
	unlink(pending);
}

static void case_status(void)
{
	struct r4_check_result res;
	const struct prob *p;
	uint8_t b[BS];
	struct r4_status st = {.st_present = true, .st_status = R4_ST_DAMAGED};
	r4_db *db = NULL;

	printf("case: status block\n");
	copy_file(fix40, img);
	memset(b, 0, BS);
	snprintf(st.st_message, sizeof(st.st_message), "test");
	r4_status_encode(&st, b);
	rw_block(R4_STATUS_BLOCK(BS), b, true);
	CHECK_EQ(r4_open(img, &(struct r4_open_opts){.rw = true}, &db), -EROFS);
	CHECK_RC(check(img, false, &res));
	CHECK((p = find(R4_CK_SB_STATUS)) && p->fixable && p->blk == R4_STATUS_BLOCK(BS));
	CHECK_EQ(res.problems, 1);
	fix_then_clean(0);		/* the status block only */
	CHECK_RC(r4_open(img, &(struct r4_open_opts){.rw = true}, &db));
	r4_close(db);
}

static void case_bitmap_csum(void)
{
	struct r4_check_result res;
	const struct prob *p;
	uint8_t b[BS];

	printf("case: bitmap checksum\n");
	copy_file(fix40, img);
	rw_block(R4_BITMAP0_BLOCK(BS), b, false);
	b[100] ^= 1;
	rw_block(R4_BITMAP0_BLOCK(BS), b, true);
	CHECK_EQ(check(img, false, &res), -EBADMSG);
	CHECK((p = find(R4_CK_SB_BAD)) && p->cls == R4_CC_BITMAP &&
	      p->blk == R4_BITMAP0_BLOCK(BS) && strstr(p->msg, "Adler-32"));
	fsck_agrees(false);
}

/* Every allocation of a check failing in turn: -ENOMEM or a full result,
 * never a crash or a leak (the sanitizer build's LeakSanitizer sees them). */
static void case_heap_failures(void)
{
	struct r4_check_opts o = {.report = collect};
	struct r4_check_result res;
	int enomem = 0, ok = 0;

	printf("case: allocation failures\n");
	copy_file(fix40, img);
	set_field("/d1/small", NLINK, 5);	/* a problem with a path to look up */
	for (unsigned long k = 1; k <= 80; k++) {
		r4_db *db = NULL;
		int rc;

		CHECK_RC(r4_check_open(img, &o, NULL, &db));
		if (!db)
			return;
		nprobs = 0;
		r4_heap_fail_at(k);
		rc = r4_check(db, &o, &res);
		r4_heap_fail_at(0);
		r4_close(db);
		CHECK(rc == 0 || rc == -ENOMEM);
		enomem += rc == -ENOMEM;
		ok += rc == 0;
		if (rc == 0)
			CHECK(find(R4_CK_OBJ_NLINK) != NULL);
	}
	CHECK(enomem > 0);
	CHECK(ok > 0);
}

/* =========================== random workload ============================ */

static unsigned long rnd_state;

static unsigned rnd(unsigned n)
{
	rnd_state = rnd_state * 6364136223846793005ul + 1442695040888963407ul;
	return (unsigned)((rnd_state >> 33) % n);
}

static void case_random(void)
{
	static uint8_t buf[70000];
	struct r4_open_opts oo = {.rw = true};
	r4_db *db = NULL;
	char a[64], d[64];
	unsigned long seed = t_seed();

	printf("case: random workload\n");
	rnd_state = seed;
	CHECK_RC(r4_mkfs(img, IMG_SIZE, NULL));
	for (int round = 0; round < 3; round++) {
		CHECK_RC(r4_open(img, &oo, &db));
		if (!db)
			return;
		for (int op = 0; op < 250; op++) {
			snprintf(d, sizeof(d), "/d%u", rnd(4));
			snprintf(a, sizeof(a), "/d%u/f%u", rnd(4), rnd(40));
			switch (rnd(8)) {
			case 0: r4_mkdir(db, d, 0755, 0, 0); break;
			case 1: case 2: r4_create(db, a, 0644, 0, 0); break;
			case 3: fill(buf, sizeof(buf), op);
				r4_write(db, a, rnd(30000), buf, 1 + rnd(40000)); break;
			case 4: {
				char b2[64];
				snprintf(b2, sizeof(b2), "/d%u/g%u", rnd(4), rnd(40));
				r4_rename(db, a, b2, 0);
				break;
			}
			case 5: r4_unlink(db, a); break;
			case 6: {
				char b2[64];
				snprintf(b2, sizeof(b2), "/d%u/h%u", rnd(4), rnd(40));
				r4_link(db, a, b2);
				break;
			}
			default: r4_truncate(db, a, rnd(50000)); break;
			}
		}
		r4_close(db);
		struct r4_check_result res;
		CHECK_RC(check(img, false, &res));
		CHECK_EQ(res.problems, 0);
		if (res.problems)
			printf("  seed %lu round %d: first problem %d: %s\n", seed, round,
			       probs[0].code, probs[0].msg);
		CHECK(res.objects > 1);
	}
	int f = t_fsck(img);
	if (f >= 0)
		CHECK(f == 1);
}

int main(void)
{
	snprintf(tmpdir, sizeof(tmpdir), "%s/r4checkXXXXXX", t_tmp());
	if (!mkdtemp(tmpdir))
		return 1;
	snprintf(fix40, sizeof(fix40), "%s/fix40.img", tmpdir);
	snprintf(fix41, sizeof(fix41), "%s/fix41.img", tmpdir);
	snprintf(img, sizeof(img), "%s/case.img", tmpdir);
	if (system("command -v fsck.reiser4 >/dev/null 2>&1"))
		printf("skip: fsck.reiser4 not installed, interop checks skipped\n");
	make_fixture(fix40, false);
	make_fixture(fix41, true);
	case_clean();
	case_nlink();
	case_meta();
	case_sizes();
	case_symlink_no_target();
	case_leak_and_free();
	case_counters();
	case_names();
	case_orphan_dir();
	case_cycle();
	case_dotdot();
	case_bad_offsets();
	case_node_order();
	case_empty_and_dkey();
	case_double_use_and_ptr();
	case_node41_csum();
	case_journal();
	case_status();
	case_bitmap_csum();
	case_heap_failures();
	case_random();
	if (t_rmdir(tmpdir))
		return 1;
	return T_DONE();
}
