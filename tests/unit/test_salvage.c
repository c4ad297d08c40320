/*
 * test_salvage.c - salvage of damaged volumes (engine/salvage.c, r4.h
 * r4_salvage_*, docs/salvage.md).
 *
 * The fixture: r4_mkfs and the public API make a volume of height 3 (a
 * root above twigs above leaves) holding nested directories, tail files,
 * extent files, a sparse file, a symlink, a hard link, a fifo, and
 * thousands of small files in /many, all in one commit.  The pristine
 * image, opened with r4_open_io, is the oracle: its r4_stat and r4_read
 * of every path are what salvage must give back.  The dump of its tree
 * (r4_dump_tree) says which blocks to damage and what they held.
 *
 * Each case loads the image into memory, damages it (zeroes blocks),
 * salvages it, and checks every object that comes out against the oracle
 * (stat fields, bytes, link targets, hard links), which ones come out
 * where (by name or in /lost+found), and the report's lines exactly; the
 * image's bytes are the same after (checksum).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "io.h"
#include "t.h"

#define BS 4096u

static char img[256];
static r4_db *oracle;
static struct r4_io *pristine;

/* ------------------------------ fixture ------------------------------ */

static const char *const small_paths[] = {
	"/d1", "/d1/d2", "/d1/d2/d3", "/many", "/small", "/d1/a.txt", "/d1/d2/b",
	"/d1/d2/d3/c", "/mid", "/big", "/sym", "/d1/hard", "/sparse", "/fifo",
};
#define NMANY 3000

static void fill(unsigned id, uint8_t *b, size_t n)
{
	for (size_t j = 0; j < n; j++)
		b[j] = (uint8_t)(id * 31u + j * 7u + (j >> 9) * 13u);
}

static int mkfile(r4_db *db, const char *path, unsigned id, uint64_t off, size_t n)
{
	uint8_t *b = malloc(n + 1);
	int rc;

	fill(id, b, n);
	rc = r4_create(db, path, S_IFREG | 0640, 1000 + id, 100);
	if (!rc && n)
		rc = r4_write(db, path, off, b, n);
	free(b);
	return rc;
}

static int populate(r4_db *db)
{
	char p[40];
	int rc = 0;

	if ((rc = r4_mkdir(db, "/d1", S_IFDIR | 0750, 1000, 100)) ||
	    (rc = r4_mkdir(db, "/d1/d2", S_IFDIR | 0700, 1001, 100)) ||
	    (rc = r4_mkdir(db, "/d1/d2/d3", S_IFDIR | 0755, 0, 0)) ||
	    (rc = r4_mkdir(db, "/many", S_IFDIR | 0755, 0, 0)) ||
	    (rc = mkfile(db, "/small", 1, 0, 1)) || (rc = mkfile(db, "/d1/a.txt", 2, 0, 5)) ||
	    (rc = mkfile(db, "/d1/d2/b", 3, 0, 300)) ||
	    (rc = mkfile(db, "/d1/d2/d3/c", 4, 0, 3000)) ||
	    (rc = mkfile(db, "/mid", 5, 0, 20000)) || (rc = mkfile(db, "/big", 6, 0, 100000)) ||
	    (rc = r4_symlink(db, "d1/a.txt", "/sym", 7, 8)) ||
	    (rc = r4_link(db, "/big", "/d1/hard")) ||
	    (rc = mkfile(db, "/sparse", 9, 1 << 20, 5000)) ||
	    (rc = r4_mknod(db, "/fifo", S_IFIFO | 0600, 0, 10, 11)))
		return rc;
	for (unsigned i = 0; i < NMANY && !rc; i++) {
		snprintf(p, sizeof(p), "/many/f%05u", i);
		rc = mkfile(db, p, 100 + i, 0, i % 4 ? 0 : 16);
	}
	return rc;
}

static int build(void)
{
	struct r4_open_opts oo = {.rw = true};
	struct r4_mkfs_opts mo;
	struct r4_info info;
	r4_db *db;
	int rc;

	r4_mkfs_defaults(&mo);
	mo.mtime = 1700000000;
	mo.mkfs_id = 0x5a1a6e00u;
	if ((rc = r4_mkfs(img, 16u << 20, &mo)) || (rc = r4_open(img, &oo, &db)))
		return rc;
	if (!(rc = r4_begin(db)) && !(rc = populate(db)))
		rc = r4_commit(db);
	if (!rc && !(rc = r4_info(db, &info)) && info.height < 3)
		rc = -EFBIG;
	if (r4_in_txn(db))
		r4_abort(db);
	r4_close(db);
	return rc;
}

/* --------------------------- the oracle's tree --------------------------- */

struct titem {
	char key[80];
	char kind[12];
	uint64_t child, oid, off;
	unsigned type, units;
};

struct tnode {
	uint64_t blk;
	unsigned level, n;
	struct titem *it;
};

static struct tnode *tree;
static size_t ntree;

static int dump_fn(void *ctx, const struct r4_dump_node *dn)
{
	struct tnode *t;

	(void)ctx;
	tree = realloc(tree, (ntree + 1) * sizeof(*tree));
	t = &tree[ntree++];
	*t = (struct tnode){dn->blk, dn->level, dn->nitems, calloc(dn->nitems + 1, sizeof(*t->it))};
	for (unsigned i = 0; i < dn->nitems; i++) {
		struct titem *it = &t->it[i];
		unsigned long long loc, ord, el2, off;

		snprintf(it->key, sizeof(it->key), "%s", dn->items[i].key);
		snprintf(it->kind, sizeof(it->kind), "%s", dn->items[i].kind);
		it->child = dn->items[i].child;
		it->units = dn->items[i].units;
		sscanf(it->key, "[%llx:%x(%*[^)]):%llx:%llx:%llx]", &loc, &it->type, &ord, &el2, &off);
		it->oid = el2 & ((1ull << 60) - 1);
		it->off = off;
	}
	return 0;
}

static uint64_t ino_of(const char *path)
{
	struct r4_stat st;

	return r4_stat(oracle, path, &st) ? 0 : st.ino;
}

/* --------------------------- salvage results --------------------------- */

struct got {
	char *path, *link, *target;
	struct r4_stat st;
	unsigned flags;
};

static struct got *gots;
static size_t ngot;

static int got_fn(void *ctx, const struct r4_salvage_ent *e)
{
	struct got *g;

	(void)ctx;
	gots = realloc(gots, (ngot + 1) * sizeof(*gots));
	g = &gots[ngot++];
	*g = (struct got){strdup(e->path), e->link ? strdup(e->link) : NULL,
			  e->target ? strndup(e->target, e->target_len) : NULL, e->st, e->flags};
	return 0;
}

static void gots_free(void)
{
	for (size_t i = 0; i < ngot; i++) {
		free(gots[i].path);
		free(gots[i].link);
		free(gots[i].target);
	}
	free(gots);
	gots = NULL;
	ngot = 0;
}

static struct got *got_at(const char *path)
{
	for (size_t i = 0; i < ngot; i++)
		if (!strcmp(gots[i].path, path))
			return &gots[i];
	return NULL;
}

static struct got *got_ino(uint64_t ino)
{
	for (size_t i = 0; i < ngot; i++)
		if (gots[i].st.ino == ino && !gots[i].link)
			return &gots[i];
	return NULL;
}

/* The salvaged object g is the oracle's path: stat and bytes. */
static bool same(r4_salvage *s, const struct got *g, const char *path)
{
	struct r4_stat st;
	bool ok;

	if (r4_stat(oracle, path, &st))
		return false;
	ok = g->st.ino == st.ino && g->st.mode == st.mode && g->st.uid == st.uid &&
	     g->st.gid == st.gid && g->st.size == st.size && g->st.nlink == st.nlink &&
	     g->st.rdev == st.rdev && g->st.mtime.tv_sec == st.mtime.tv_sec &&
	     g->st.mtime.tv_nsec == st.mtime.tv_nsec && g->st.atime.tv_sec == st.atime.tv_sec &&
	     g->st.ctime.tv_sec == st.ctime.tv_sec && g->flags == 0;
	if (ok && S_ISLNK(st.mode)) {
		char t[256];
		size_t n;

		ok = !r4_readlink(oracle, path, t, sizeof(t), &n) && g->target &&
		     strlen(g->target) == n && !memcmp(g->target, t, n);
	}
	if (ok && S_ISREG(st.mode) && st.size) {
		uint8_t *a = malloc(st.size), *b = malloc(st.size);
		size_t got = 0;

		ok = !r4_read(oracle, path, 0, a, st.size, &got) && got == st.size &&
		     !r4_salvage_read(s, g->st.ino, 0, b, st.size) && !memcmp(a, b, st.size);
		free(a);
		free(b);
	}
	if (!ok)
		fprintf(stderr, "  salvaged %s differs from %s\n", g->path, path);
	return ok;
}

static uint32_t sum(struct r4_io *io)
{
	uint64_t n;
	const uint8_t *p = r4_io_mem_data(io, &n);

	return r4_crc32c(0, p, n);
}

/* ------------------------------- a case ------------------------------- */

static void zero(struct r4_io *io, uint64_t blk)
{
	static const uint8_t z[BS];

	CHECK_RC(r4_io_write(io, blk * BS, z, BS));
}

/* A copy of the pristine image, for damage. */
static struct r4_io *copy(void)
{
	uint64_t n;
	const uint8_t *p = r4_io_mem_data(pristine, &n);
	struct r4_io *io;

	if (r4_io_mem_new(n, &io))
		return NULL;
	r4_io_write(io, 0, p, n);
	return io;
}

/* Salvage io (a CHECK that it opens and leaves the image as it was): the
 * walk's entries in gots, the report in *rep. */
static r4_salvage *salvage(struct r4_io *io, struct r4_buf *rep)
{
	uint32_t before = sum(io);
	r4_salvage *s = NULL;

	gots_free();
	memset(rep, 0, sizeof(*rep));
	CHECK_RC(r4_salvage_open_io(io, NULL, &s));
	if (!s)
		return NULL;
	CHECK_RC(r4_salvage_walk(s, "/", got_fn, NULL));
	CHECK_RC(r4_salvage_report(s, rep));
	CHECK_EQ(sum(io), before);
	return s;
}

static void print_report(const char *what, const struct r4_buf *rep)
{
	if (getenv("R4_VERBOSE"))
		fprintf(stderr, "--- %s:\n%s", what, rep->len ? (const char *)rep->p : "");
}

/* Every path of the fixture is salvaged by name and the same. */
static void all_same(r4_salvage *s, const char *skip_prefix)
{
	char p[40];

	for (size_t i = 0; i < R4_ARRAY_SIZE(small_paths); i++) {
		struct got *g = got_at(small_paths[i]);

		CHECK(g && same(s, g, small_paths[i]));
	}
	for (unsigned i = 0; i < NMANY; i++) {
		snprintf(p, sizeof(p), "/many/f%05u", i);
		if (skip_prefix && !strncmp(p, skip_prefix, strlen(skip_prefix)))
			continue;
		struct got *g = got_at(p);
		if (!g || !same(s, g, p)) {
			CHECK(!"a file of /many differs");
			return;
		}
	}
}

/* (a) no damage: everything, identical; hard links as links; no report. */
static void test_whole(void)
{
	struct r4_io *io = copy();
	struct r4_salvage_info info;
	struct r4_buf rep;
	r4_salvage *s = salvage(io, &rep);

	if (!s)
		return;
	print_report("whole", &rep);
	r4_salvage_info(s, &info);
	CHECK(info.fsb_ok && info.msb_ok && info.tree_whole);
	CHECK_EQ(info.scanned, 0);
	CHECK_EQ(info.bad_nodes, 0);
	CHECK_EQ(rep.len, 0);
	CHECK_EQ(ngot, 1 + R4_ARRAY_SIZE(small_paths) + NMANY);
	CHECK(got_at("/") && same(s, got_at("/"), "/"));
	all_same(s, NULL);
	CHECK(got_at("/d1/hard") && got_at("/d1/hard")->link &&
	      !strcmp(got_at("/d1/hard")->link, "/big"));
	CHECK(!got_at("/lost+found"));
	r4_salvage_close(s);
	r4_buf_free(&rep);
	r4_io_close(io);
}

/* (b) the root zeroed: the scan finds every leaf and twig; all the same. */
static void test_root(void)
{
	struct r4_io *io = copy();
	struct r4_salvage_info info;
	struct r4_buf rep;
	char want[512];
	r4_salvage *s;

	zero(io, tree[0].blk);
	if (!(s = salvage(io, &rep)))
		return;
	print_report("root", &rep);
	r4_salvage_info(s, &info);
	CHECK(info.fsb_ok && !info.tree_whole);
	CHECK_EQ(info.bad_nodes, 1);
	CHECK(info.scanned > 0);
	snprintf(want, sizeof(want), "block %llu: the root (level %u) unreadable: bad node magic "
		 "0x00000000; keys [0:0(NAME):0:0:0] to [fffffffffffffff:ff(?):ffffffffffffffff:"
		 "ffffffffffffffff:ffffffffffffffff]\n", (unsigned long long)tree[0].blk,
		 tree[0].level);
	CHECK(rep.len && !strcmp((const char *)rep.p, want));
	CHECK_EQ(ngot, 1 + R4_ARRAY_SIZE(small_paths) + NMANY);
	all_same(s, NULL);
	CHECK(got_ino(ino_of("/big")) && got_at("/d1/hard") && got_at("/d1/hard")->link);
	r4_salvage_close(s);
	r4_buf_free(&rep);
	r4_io_close(io);
}

int main(void)
{
	int rc;

	snprintf(img, sizeof(img), "%s/r4-salvage-%d.img", t_tmp(), (int)getpid());
	if ((rc = build())) {
		fprintf(stderr, "build: %s\n", r4_strerror(rc));
		CHECK_RC(rc);
		return T_DONE();
	}
	CHECK_RC(r4_io_mem_load(img, &pristine));
	unlink(img);
	CHECK_RC(r4_open_io(pristine, NULL, &oracle));
	CHECK_RC(r4_dump_tree(oracle, dump_fn, NULL));
	if (getenv("R4_VERBOSE"))
		for (size_t i = 0; i < ntree; i++) {
			fprintf(stderr, "node %llu level %u items %u:", (unsigned long long)tree[i].blk, tree[i].level, tree[i].n);
			for (unsigned j = 0; j < tree[i].n && j < 6; j++)
				fprintf(stderr, " %s %s", tree[i].it[j].kind, tree[i].it[j].key);
			fprintf(stderr, "\n");
		}
	test_whole();
	test_root();
	gots_free();
	for (size_t i = 0; i < ntree; i++)
		free(tree[i].it);
	free(tree);
	r4_close(oracle);	/* and pristine, which it took */
	return T_DONE();
}
