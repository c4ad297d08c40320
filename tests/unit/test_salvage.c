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
 * image's bytes are the same after (checksum).  A small volume of its own
 * holds a compressed (ccreg40) file for test_ccreg.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "format.h"
#include "io.h"
#include "item.h"
#include "key.h"
#include "node.h"
#include "t.h"

#define BS 4096u

static char img[256];
static r4_db *oracle;
static struct r4_io *pristine;

/* ------------------------------ fixture ------------------------------ */

static const char *const small_paths[] = {
	"/d1", "/d1/d2", "/d1/d2/d3", "/many", "/small", "/d1/a.txt", "/d1/d2/b",
	"/d1/d2/d3/c", "/mid", "/big", "/sym", "/d1/hard", "/sparse", "/fifo", "/empty",
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
	    (rc = r4_mknod(db, "/fifo", S_IFIFO | 0600, 0, 10, 11)) ||
	    (rc = r4_mkdir(db, "/empty", S_IFDIR | 0711, 12, 13)))
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

static void tree_free(void)
{
	for (size_t i = 0; i < ntree; i++)
		free(tree[i].it);
	free(tree);
	tree = NULL;
	ntree = 0;
}

static uint64_t many_ino[NMANY];	/* /many/fNNNNN's, once */

static uint64_t ino_of(const char *path)
{
	struct r4_stat st;
	unsigned i;

	if (sscanf(path, "/many/f%05u", &i) == 1 && i < NMANY && many_ino[i])
		return many_ino[i];
	if (r4_stat(oracle, path, &st))
		return 0;
	if (sscanf(path, "/many/f%05u", &i) == 1 && i < NMANY)
		many_ino[i] = st.ino;
	return st.ino;
}

/* --------------------------- salvage results --------------------------- */

struct got {
	char *path, *link, *target;
	struct r4_stat st;
	unsigned flags;
};

static struct got *gots;
static size_t ngot;
static struct got **byname;	/* gots by path, for got_at */

static int got_fn(void *ctx, const struct r4_salvage_ent *e)
{
	struct got *g;

	(void)ctx;
	free(byname);
	byname = NULL;
	if (!(ngot & (ngot - 1)))	/* doubles at each power of 2 */
		gots = realloc(gots, (ngot ? 2 * ngot : 1) * sizeof(*gots));
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
	free(byname);
	gots = NULL;
	byname = NULL;
	ngot = 0;
}


static int cmp_got(const void *a, const void *b)
{
	return strcmp((*(struct got *const *)a)->path, (*(struct got *const *)b)->path);
}

static struct got *got_at(const char *path)
{
	struct got key = {.path = (char *)path}, *kp = &key, **r;

	if (!byname) {
		byname = malloc((ngot + 1) * sizeof(*byname));
		for (size_t i = 0; i < ngot; i++)
			byname[i] = &gots[i];
		qsort(byname, ngot, sizeof(*byname), cmp_got);
	}
	r = bsearch(&kp, byname, ngot, sizeof(*byname), cmp_got);
	return r ? *r : NULL;
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

/* A copy of image from, for damage. */
static struct r4_io *copy_of(struct r4_io *from)
{
	uint64_t n;
	const uint8_t *p = r4_io_mem_data(from, &n);
	struct r4_io *io;

	if (r4_io_mem_new(n, &io))
		return NULL;
	r4_io_write(io, 0, p, n);
	return io;
}

static struct r4_io *copy(void)
{
	return copy_of(pristine);
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

/* The end of a case: what it opened, freed. */
static void done(r4_salvage *s, struct r4_buf *rep, struct r4_buf *want, struct r4_io *io)
{
	r4_salvage_close(s);
	r4_buf_free(rep);
	if (want)
		r4_buf_free(want);
	r4_io_close(io);
}

/* Everything of the fixture came out, by name, the same. */
static void all_out(r4_salvage *s)
{
	CHECK_EQ(ngot, 1 + R4_ARRAY_SIZE(small_paths) + NMANY);
	all_same(s, NULL);
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
	/* the sparse file's hole is a hole, then its data */
	{
		enum r4_salvage_kind k;
		uint64_t end, ino = ino_of("/sparse");

		CHECK_RC(r4_salvage_segment(s, ino, 0, &k, &end));
		CHECK(k == R4_SALVAGE_HOLE && end == 1 << 20);
		CHECK_RC(r4_salvage_segment(s, ino, end, &k, &end));
		CHECK(k == R4_SALVAGE_DATA && end == (1 << 20) + 5000);
		CHECK_EQ(r4_salvage_segment(s, ino, end, &k, &end), -ENXIO);
	}
	done(s, &rep, NULL, io);
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
	CHECK_EQ(info.scanned, 4096 - 22);	/* all but the fixed blocks 0..21 */
	CHECK(info.bitmaps == 1 && info.bitmaps_ok == 1);
	snprintf(want, sizeof(want), "block %llu: the root (level %u) unreadable: bad node magic "
		 "0x00000000; keys [0:0(NAME):0:0:0] to [fffffffffffffff:ff(?):ffffffffffffffff:"
		 "ffffffffffffffff:ffffffffffffffff]\n", (unsigned long long)tree[0].blk,
		 tree[0].level);
	CHECK(rep.len && !strcmp((const char *)rep.p, want));
	all_out(s);
	CHECK(got_ino(ino_of("/big")) && got_at("/d1/hard") && got_at("/d1/hard")->link);
	done(s, &rep, NULL, io);
}

/* The node of the oracle's tree at blk, its parent and the item pointing at it. */
static struct tnode *node_at(uint64_t blk)
{
	for (size_t i = 0; i < ntree; i++)
		if (tree[i].blk == blk)
			return &tree[i];
	return NULL;
}

#define MAXKEY "[fffffffffffffff:ff(?):ffffffffffffffff:ffffffffffffffff:ffffffffffffffff]"

/* The keys the node at blk holds by its parent's pointer: [lo, hi). */
static void range_of(uint64_t blk, char lo[80], char hi[80])
{
	snprintf(lo, 80, "[0:0(NAME):0:0:0]");
	snprintf(hi, 80, MAXKEY);
	for (size_t i = 0; i < ntree; i++)
		for (unsigned j = 0; j < tree[i].n; j++) {
			char plo[80];

			if (strcmp(tree[i].it[j].kind, "nodeptr") || tree[i].it[j].child != blk)
				continue;
			snprintf(lo, 80, "%s", tree[i].it[j].key);
			if (j + 1 < tree[i].n)
				snprintf(hi, 80, "%s", tree[i].it[j + 1].key);
			else	/* the parent's end */
				range_of(tree[i].blk, plo, hi);
			return;
		}
}

static void expect_report(const struct r4_buf *rep, const struct r4_buf *want)
{
	bool ok = rep->len == want->len && (!rep->len || !memcmp(rep->p, want->p, rep->len));

	CHECK(ok);
	if (!ok && getenv("R4_VERBOSE")) {
		FILE *f = fopen("/tmp/salvage.rep", "w"), *g = fopen("/tmp/salvage.want", "w");

		fwrite(rep->p, 1, rep->len, f);
		fwrite(want->p, 1, want->len, g);
		fclose(f);
		fclose(g);
	}
}

static void bad_node_line(struct r4_buf *want, uint64_t blk, const char *what, unsigned level)
{
	char lo[80] = "", hi[80] = "";

	range_of(blk, lo, hi);
	r4_buf_printf(want, "block %llu: %s (level %u) unreadable: bad node magic 0x00000000; "
		      "keys %s to %s\n", (unsigned long long)blk, what, level, lo, hi);
}

/* Object path of the oracle has extent items in node t. */
static bool extents_in(const struct tnode *t, const char *path)
{
	uint64_t ino = ino_of(path);

	for (unsigned j = 0; j < t->n; j++)
		if (!strcmp(t->it[j].kind, "extent") && t->it[j].oid == ino)
			return true;
	return false;
}

/* (c) a twig zeroed: the files whose extents it held come out with their
 * bodies lost (zeros, -EIO), the leaves below it are found by the scan. */
static void test_twig(void)
{
	struct tnode *twig = node_at(tree[0].it[0].child);
	struct r4_io *io = copy();
	struct r4_buf rep, want = {0};
	static const char *const bodies[] = {"/big", "/mid", "/sparse"};
	r4_salvage *s;
	uint8_t *b;

	if (!twig || twig->level != 2) {
		CHECK(!"the first child of the root is a twig");
		return;
	}
	for (size_t i = 0; i < R4_ARRAY_SIZE(bodies); i++)
		CHECK(extents_in(twig, bodies[i]));
	zero(io, twig->blk);
	if (!(s = salvage(io, &rep)))
		return;
	print_report("twig", &rep);
	bad_node_line(&want, twig->blk, "twig", 2);
	for (size_t i = 0; i < R4_ARRAY_SIZE(bodies); i++) {
		struct r4_stat st;

		r4_stat(oracle, bodies[i], &st);
		r4_buf_printf(&want, "%s: bytes 0 to %llu lost (block %llu)\n", bodies[i],
			      (unsigned long long)st.size - 1, (unsigned long long)twig->blk);
	}
	expect_report(&rep, &want);
	CHECK_EQ(ngot, 1 + R4_ARRAY_SIZE(small_paths) + NMANY);
	for (size_t i = 0; i < R4_ARRAY_SIZE(small_paths); i++) {
		const char *p = small_paths[i];
		struct got *g = got_at(p);
		bool body = !strcmp(p, "/big") || !strcmp(p, "/mid") || !strcmp(p, "/sparse") ||
			    !strcmp(p, "/d1/hard");

		if (!body) {
			CHECK(g && same(s, g, p));
			continue;
		}
		/* the stat data is whole; the body reads as zeros, and -EIO */
		CHECK(g);
		if (!g)
			continue;
		enum r4_salvage_kind k;
		uint64_t end;

		CHECK_RC(r4_salvage_segment(s, g->st.ino, 0, &k, &end));
		CHECK(k == R4_SALVAGE_LOST && end == g->st.size);
		b = malloc(g->st.size);
		memset(b, 1, g->st.size);
		CHECK_EQ(r4_salvage_read(s, g->st.ino, 0, b, g->st.size), -EIO);
		CHECK(b[0] == 0 && b[g->st.size - 1] == 0);
		free(b);
	}
	for (unsigned i = 0; i < NMANY; i += 97) {
		char p[40];

		snprintf(p, sizeof(p), "/many/f%05u", i);
		CHECK(got_at(p) && same(s, got_at(p), p));
	}
	done(s, &rep, &want, io);
}

/* The short name an entry key holds (its ordering's 7 bytes, then el2). */
static void key_name(const char *key, char name[24])
{
	unsigned long long loc, ord, el2;
	unsigned type;
	size_t n = 0;

	sscanf(key, "[%llx:%x(%*[^)]):%llx:%llx", &loc, &type, &ord, &el2);
	for (int sh = 48; sh >= 0; sh -= 8)
		if ((ord >> sh) & 0xff)
			name[n++] = (char)((ord >> sh) & 0xff);
	for (int sh = 56; sh >= 0; sh -= 8)
		if ((el2 >> sh) & 0xff)
			name[n++] = (char)((el2 >> sh) & 0xff);
	name[n] = 0;
}

/* The n-th leaf (from 0) whose every item is of kind in /many. */
static struct tnode *many_leaf(const char *kind, unsigned nth)
{
	char loc[32];

	snprintf(loc, sizeof(loc), "[%llx:", (unsigned long long)ino_of("/many"));
	for (size_t i = 0; i < ntree; i++) {
		struct tnode *t = &tree[i];
		unsigned j;

		if (t->level != 1)
			continue;
		for (j = 0; j < t->n && !strcmp(t->it[j].kind, kind) &&
			    !strncmp(t->it[j].key, loc, strlen(loc)); j++)
			;
		if (j == t->n && nth-- == 0)
			return t;
	}
	return NULL;
}

/* (d) two leaves zeroed: one of /many's entries (the files it named come
 * out under /lost+found/#OID, whole) and one of stat data (files with a
 * body come out as guessed regular files, the rest are reported and
 * skipped); everything else whole. */
static void test_leaves(void)
{
	struct tnode *ents = many_leaf("cde", 3), *sds = many_leaf("stat", 10), *next;
	struct r4_buf rep, want = {0};
	struct r4_io *io = copy();
	char first[24], end[24], lo[80], hi[80], p[48];
	unsigned lost = 0;
	r4_salvage *s;

	if (!ents || !sds || !(next = many_leaf("cde", 4))) {
		CHECK(!"the leaves to damage");
		return;
	}
	key_name(ents->it[0].key, first);
	key_name(next->it[0].key, end);
	zero(io, ents->blk);
	zero(io, sds->blk);
	if (!(s = salvage(io, &rep)))
		return;
	print_report("leaves", &rep);
	/* the report: the two nodes in key order (entries before stat data),
	 * then the walk's lines */
	bad_node_line(&want, ents->blk, "leaf", 1);
	bad_node_line(&want, sds->blk, "leaf", 1);
	range_of(ents->blk, lo, hi);
	for (unsigned i = 0; i < NMANY; i++) {	/* walk order: by name */
		snprintf(p, sizeof(p), "/many/f%05u", i);
		for (unsigned j = 0; j < sds->n; j++)
			if (sds->it[j].oid == ino_of(p) && strcmp(p + 6, first) >= 0 &&
			    strcmp(p + 6, end) < 0)
				CHECK(!"a file both unnamed and without stat data");
		for (unsigned j = 0; j < sds->n; j++) {
			if (sds->it[j].oid != ino_of(p))
				continue;
			if (i % 4)
				r4_buf_printf(&want, "%s: stat data %s lost (block %llu); nothing "
					      "else of it found, skipped\n", p, sds->it[j].key,
					      (unsigned long long)sds->blk);
			else
				r4_buf_printf(&want, "%s: stat data %s lost (block %llu); exported "
					      "as a regular file\n", p, sds->it[j].key,
					      (unsigned long long)sds->blk);
		}
	}
	/* /many's line comes before its entries' (the walk gives /many first) */
	{
		struct r4_buf w2 = {0};
		size_t head = 0;

		for (int k = 0; k < 2; k++)	/* after the two node lines */
			head += strcspn((char *)want.p + head, "\n") + 1;
		r4_buf_add(&w2, want.p, head);
		r4_buf_printf(&w2, "/many: entries %s to %s may be lost (block %llu)\n", lo, hi,
			      (unsigned long long)ents->blk);
		r4_buf_add(&w2, want.p + head, want.len - head);
		r4_buf_free(&want);
		want = w2;
	}
	for (unsigned i = 0; i < NMANY; i++) {
		snprintf(p, sizeof(p), "f%05u", i);
		if (strcmp(p, first) < 0 || strcmp(p, end) >= 0)
			continue;
		snprintf(p, sizeof(p), "/many/f%05u", i);
		r4_buf_printf(&want, "/lost+found/#%llu: found by no name\n",
			      (unsigned long long)ino_of(p));
		lost++;
	}
	expect_report(&rep, &want);
	CHECK_EQ(lost, ents->it[0].units + (ents->n > 1 ? ents->it[1].units : 0));
	CHECK(got_at("/lost+found") && got_at("/lost+found")->flags == R4_SALVAGE_GUESSED);
	for (unsigned i = 0; i < NMANY; i++) {
		char name[48], orphan[48];
		bool unnamed, nosd = false;
		struct got *g;

		snprintf(p, sizeof(p), "/many/f%05u", i);
		snprintf(name, sizeof(name), "f%05u", i);
		unnamed = strcmp(name, first) >= 0 && strcmp(name, end) < 0;
		for (unsigned j = 0; j < sds->n; j++)
			nosd = nosd || sds->it[j].oid == ino_of(p);
		snprintf(orphan, sizeof(orphan), "/lost+found/#%llu", (unsigned long long)ino_of(p));
		g = got_at(unnamed ? orphan : p);
		CHECK(!got_at(unnamed ? p : orphan));
		if (!nosd) {
			if (!g || g->flags != (unnamed ? R4_SALVAGE_ORPHAN : 0u) ||
			    !same(s, &(struct got){g->path, g->link, g->target, g->st, 0}, p))
				CHECK(!"a file of /many is not whole where it should be");
			continue;
		}
		if (i % 4) {
			CHECK(!g);
			continue;
		}
		CHECK(g && g->flags == R4_SALVAGE_GUESSED && g->st.mode == (S_IFREG | 0644) &&
		      g->st.size == 16 && g->st.ino == ino_of(p));
		if (g) {
			uint8_t a[16], b[16];
			size_t n;

			CHECK(!r4_read(oracle, p, 0, a, 16, &n) &&
			      !r4_salvage_read(s, g->st.ino, 0, b, 16) && !memcmp(a, b, 16));
		}
	}
	for (size_t i = 0; i < R4_ARRAY_SIZE(small_paths); i++)
		CHECK(got_at(small_paths[i]) && same(s, got_at(small_paths[i]), small_paths[i]));
	done(s, &rep, &want, io);
}

/* (e) the bitmap zeroed: nothing needs it while the tree reads; with the
 * root zeroed too, the scan takes every node (rank: unknown) and still
 * everything comes out. */
static void test_bitmap(void)
{
	for (int root = 0; root < 2; root++) {
		struct r4_io *io = copy();
		struct r4_salvage_info info;
		struct r4_buf rep, want = {0};
		r4_salvage *s;

		zero(io, 18);	/* bitmap block 0 (R4_BITMAP0_BLOCK), the volume's only */
		if (root)
			zero(io, tree[0].blk);
		if (!(s = salvage(io, &rep)))
			return;
		print_report("bitmap", &rep);
		r4_salvage_info(s, &info);
		CHECK(info.bitmaps == (uint64_t)root && info.bitmaps_ok == 0);	/* the scan's */
		CHECK(!strcmp(tree[2].it[0].key, "[29:1(SD):0:2a:0]"));	/* the root's leaf */
		/* with the root gone and no bitmap to say which is stale, the root
		 * directory's leaf and mkfs's first one (block 24) hold the same
		 * keys: the fuller wins, and the report says so */
		if (root)
			r4_buf_printf(&want, "block %llu: the root (level 3) unreadable: bad node magic "
				      "0x00000000; keys [0:0(NAME):0:0:0] to " MAXKEY "\n"
				      "blocks %llu and 24 hold copies of the same keys (2 items from "
				      "[29:1(SD):0:2a:0]): took block %llu\n", (unsigned long long)tree[0].blk,
				      (unsigned long long)tree[2].blk, (unsigned long long)tree[2].blk);
		expect_report(&rep, &want);
		all_out(s);
		done(s, &rep, &want, io);
	}
}

/* The leaf of the tree dumped last holding a tail of the object ino. */
static uint64_t tail_leaf(uint64_t ino)
{
	for (size_t i = 0; i < ntree; i++)
		for (unsigned j = 0; j < tree[i].n; j++)
			if (!strcmp(tree[i].it[j].kind, "tail") && tree[i].it[j].oid == ino)
				return tree[i].blk;
	return 0;
}

/* Is block b free in the bitmap of the image p (one zone)? */
static bool is_free(const uint8_t *p, uint64_t b)
{
	return !(p[18 * BS + 4 + b / 8] >> (b % 8) & 1);
}

/* (f) a stale copy: /d1/d2/b rewritten, and its old leaf left in a block
 * the bitmap marks free (planted: r4 overwrites a leaf in place through
 * the journal, so where an old copy lands is the allocator's business).
 * With the root zeroed the scan finds both: the bitmap says which is
 * current, silently.  With the bitmap zeroed too, the copies are equals:
 * the one taken is a guess, and the report names it. */
static void test_stale(void)
{
	struct r4_open_opts oo = {.rw = true};
	uint64_t ino = ino_of("/d1/d2/b"), leaf = tail_leaf(ino), stale = 0, n;
	struct r4_io *io = copy();
	uint8_t v2[300], v1[300], was[BS];
	r4_db *db = NULL;

	fill(33, v2, sizeof(v2));
	fill(3, v1, sizeof(v1));
	memcpy(was, r4_io_mem_data(io, &n) + leaf * BS, BS);
	CHECK_RC(t_open_wrapped(io, &oo, &db, NULL));
	if (!db)
		return;
	CHECK_RC(r4_write(db, "/d1/d2/b", 0, v2, sizeof(v2)));
	r4_close(db);
	/* the old leaf, in a free block past it */
	for (uint64_t b = leaf + 1; b < n / BS && !stale; b++)
		if (is_free(r4_io_mem_data(io, &n), b))
			stale = b;
	for (uint64_t b = leaf - 1; b > 23 && !stale; b--)
		if (is_free(r4_io_mem_data(io, &n), b))
			stale = b;
	CHECK(stale);
	CHECK_RC(r4_io_write(io, stale * BS, was, BS));
	for (int bitmap = 0; bitmap < 2; bitmap++) {
		struct r4_buf rep, want = {0};
		const uint8_t *p = r4_io_mem_data(io, &n);
		struct r4_io *dio;
		uint8_t got[300];
		r4_salvage *s;
		struct got *g;

		if (r4_io_mem_new(n, &dio))
			return;
		r4_io_write(dio, 0, p, n);
		zero(dio, tree[0].blk);
		if (bitmap)
			zero(dio, 18);
		if (!(s = salvage(dio, &rep)))
			return;
		print_report("stale", &rep);
		r4_buf_printf(&want, "block %llu: the root (level 3) unreadable: bad node magic "
			      "0x00000000; keys [0:0(NAME):0:0:0] to " MAXKEY "\n",
			      (unsigned long long)tree[0].blk);
		g = got_at("/d1/d2/b");
		CHECK(g && g->st.size == 300 && !r4_salvage_read(s, g->st.ino, 0, got, 300));
		if (!bitmap) {
			/* the current version wins, and no line says so */
			CHECK(!memcmp(got, v2, 300));
		} else {
			/* equals: the report names the choice, whichever it was */
			char line[300];

			snprintf(line, sizeof(line), "blocks %llu and %llu hold copies of the same "
				 "keys (11 items from [10000:0(NAME):0:0:0]): took block %llu\n",
				 (unsigned long long)R4_MIN(leaf, stale),
				 (unsigned long long)R4_MAX(leaf, stale),
				 (unsigned long long)R4_MIN(leaf, stale));
			CHECK(rep.len && strstr((char *)rep.p, line));
			CHECK(!memcmp(got, leaf < stale ? v2 : v1, 300));
			r4_buf_add(&want, rep.p + want.len, rep.len - want.len);
		}
		expect_report(&rep, &want);
		done(s, &rep, &want, dio);
	}
	r4_io_close(io);
}

/* (g) the format super block zeroed: block size 4096, the image's size,
 * and the mkfs id of most node headers; every key is then the scan's. */
static void test_super(void)
{
	struct r4_io *io = copy();
	struct r4_salvage_info info;
	struct r4_buf rep, want = {0};
	r4_salvage *s;

	zero(io, 17);
	if (!(s = salvage(io, &rep)))
		return;
	print_report("super", &rep);
	r4_salvage_info(s, &info);
	CHECK(!info.fsb_ok && info.msb_ok && !info.tree_whole);
	CHECK_EQ(info.blocks, 4096);
	r4_buf_printf(&want, "block 17: the format super block does not decode; every key lost "
		      "from the tree\n");
	expect_report(&rep, &want);
	all_out(s);
	done(s, &rep, &want, io);
}

/*
 * A copy of the image with one more transaction committed but not played:
 * its header reached the image, nothing in place after it.  It rewrites
 * /d1/a.txt (a tail), a block of /big (a data block in place: wandered),
 * chmods /d1/d2 and makes /new; *db gets the image opened read-only (the
 * committed state, which the open sees through the journal).
 */
static struct r4_io *unplayed(r4_db **db)
{
	struct r4_open_opts oo = {.rw = true};
	struct r4_io *io = copy(), *fw;
	uint8_t b[BS];
	r4_db *w = NULL;

	*db = NULL;
	CHECK_RC(t_open_wrapped(io, &oo, &w, &fw));
	if (!w)
		return io;
	fill(77, b, BS);
	CHECK_RC(r4_begin(w));
	CHECK_RC(r4_write(w, "/d1/a.txt", 0, "fresh", 5));
	CHECK_RC(r4_write(w, "/big", 2 * BS, b, BS));
	CHECK_RC(r4_setattr(w, "/d1/d2", &(struct r4_setattr){.mask = R4_SET_MODE, .mode = 0751}));
	CHECK_RC(mkfile(w, "/new", 78, 0, 9000));
	r4_io_fault_fail(fw, R4_IO_FAULT_SYNC, 2, -EIO, true);	/* the sync after the header */
	CHECK_EQ(r4_commit(w), -EIO);
	r4_abort(w);
	r4_close(w);
	oo.rw = false;
	CHECK_RC(t_open_wrapped(io, &oo, db, NULL));
	return io;
}

/* (h) a transaction committed but not played: salvage reads its wandered
 * copies, as a read-only open does, and gives the committed state. */
static void test_journal(void)
{
	static const char *const changed[] = {"/d1/a.txt", "/big", "/d1/d2", "/new", "/d1/hard"};
	struct r4_salvage_info info;
	struct r4_buf rep;
	r4_db *committed, *keep = oracle;
	struct r4_io *io = unplayed(&committed);
	struct r4_stat st;
	r4_salvage *s;

	if (!committed || !(s = salvage(io, &rep)))
		return;
	print_report("journal", &rep);
	r4_salvage_info(s, &info);
	CHECK(info.fsb_ok && info.tree_whole);
	CHECK_EQ(info.jnl_tx, 1);
	CHECK_EQ(rep.len, 0);
	/* the in-place image is the old state: what salvage gives is not */
	CHECK_EQ(r4_stat(oracle, "/new", &st), -ENOENT);
	CHECK_EQ(ngot, 2 + R4_ARRAY_SIZE(small_paths) + NMANY);
	oracle = committed;	/* same() reads the committed state */
	for (size_t i = 0; i < R4_ARRAY_SIZE(changed); i++) {
		struct got *g = got_at(changed[i]);

		CHECK(g && same(s, g, changed[i]));
	}
	all_same(s, NULL);
	oracle = keep;
	r4_close(committed);
	done(s, &rep, NULL, io);
}

/* (i) the same with its journal header out of range: salvage goes on
 * without the journal, gives the state in place, and says so. */
static void test_journal_bad(void)
{
	struct r4_salvage_info info;
	struct r4_buf rep, want = {0};
	r4_db *committed;
	struct r4_io *io = unplayed(&committed);
	uint8_t h[8];
	r4_salvage *s;

	r4_close(committed);
	memset(h, 0xee, sizeof(h));
	CHECK_RC(r4_io_write(io, (uint64_t)R4_JHEADER_BLOCK(BS) * BS + R4_JH_LAST_COMMITTED, h,
			     sizeof(h)));
	if (!(s = salvage(io, &rep)))
		return;
	print_report("journal header", &rep);
	r4_salvage_info(s, &info);
	CHECK(info.fsb_ok && info.tree_whole);
	CHECK_EQ(info.jnl_tx, 0);
	r4_buf_printf(&want, "journal: corrupt image at block %u: last committed tx head %llu out "
		      "of range; not read, so transactions committed but not played are not "
		      "seen\n", R4_JHEADER_BLOCK(BS), 0xeeeeeeeeeeeeeeeeull);
	expect_report(&rep, &want);
	CHECK(!got_at("/new"));
	all_out(s);
	done(s, &rep, &want, io);
}

/* A backend over another whose reads of one block fail. */
struct badblk {
	struct r4_io io;
	struct r4_io *inner;
	uint64_t bad;
};

static int bb_read(struct r4_io *io, uint64_t off, void *buf, size_t len)
{
	struct badblk *b = (struct badblk *)io;

	if (off < (b->bad + 1) * BS && off + len > b->bad * BS)
		return -EIO;
	return r4_io_read(b->inner, off, buf, len);
}

static int bb_size(struct r4_io *io, uint64_t *n)
{
	return r4_io_size(((struct badblk *)io)->inner, n);
}

/* (h) a data block that does not read: its bytes read as zeros, the call
 * says -EIO, the rest of the file is whole, and the report names it. */
static void test_badblock(void)
{
	static const struct r4_io_ops ops = {.read = bb_read, .size = bb_size};
	struct r4_io *io = copy();
	struct badblk bb = {{&ops}, io, 0};
	struct r4_buf rep, want = {0};
	uint8_t first[BS], *a, *b;
	uint64_t n;
	const uint8_t *p = r4_io_mem_data(io, &n);
	r4_salvage *s;
	struct got *g;

	fill(6, first, BS);	/* /big's first block: find it */
	for (uint64_t k = 23; k < n / BS && !bb.bad; k++)
		if (!memcmp(p + k * BS, first, BS))
			bb.bad = k + 1;	/* its second */
	CHECK(bb.bad);
	if (!(s = salvage(&bb.io, &rep)))
		return;
	g = got_at("/big");
	CHECK(g && g->st.size == 100000);
	if (!g)
		return;
	a = malloc(100000);
	b = malloc(100000);
	CHECK_EQ(r4_salvage_read(s, g->st.ino, 0, b, 100000), -EIO);
	fill(6, a, 100000);
	memset(a + BS, 0, BS);
	CHECK(!memcmp(a, b, 100000));
	CHECK_RC(r4_salvage_read(s, g->st.ino, 2 * BS, b, 100000 - 2 * BS));
	CHECK(!memcmp(a + 2 * BS, b, 100000 - 2 * BS));
	free(a);
	free(b);
	rep.len = 0;
	CHECK_RC(r4_salvage_report(s, &rep));
	r4_buf_printf(&want, "/big: data block %llu does not read\n", (unsigned long long)bb.bad);
	expect_report(&rep, &want);
	done(s, &rep, &want, io);
}

/* The key of the stat data of path, as the oracle's node t holds it. */
static const char *sd_key(const struct tnode *t, const char *path)
{
	uint64_t ino = ino_of(path);

	for (unsigned j = 0; j < t->n; j++)
		if (!strcmp(t->it[j].kind, "stat") && t->it[j].oid == ino)
			return t->it[j].key;
	return "?";
}

/* The first n bytes of the salvaged object g are the oracle's path. */
static bool same_bytes(r4_salvage *s, const struct got *g, const char *path, size_t n)
{
	uint8_t *a = malloc(n), *b = malloc(n);
	size_t got;
	bool ok = !r4_read(oracle, path, 0, a, n, &got) && got == n &&
		  !r4_salvage_read(s, g->st.ino, 0, b, n) && !memcmp(a, b, n);

	free(a);
	free(b);
	return ok;
}

/* (i) the leaf of the root directory zeroed: its stat data and entries,
 * and the stat data of all its children.  The root's stat data comes from
 * mkfs's first leaf (a stale copy: said so); what the root named comes out
 * under /lost+found/#OID: directories (stat data made up) with what they
 * hold, files with a body as guessed regular files (their size the end of
 * the last block or tail), /big by its other name in /d1; the symlink and
 * the fifo, without stat data or name, are gone. */
static void test_rootdir(void)
{
	struct tnode *leaf = &tree[2];
	struct r4_io *io = copy();
	struct r4_buf rep, want = {0};
	char lo[80], hi[80], p[64];
	r4_salvage *s;
	struct got *g;
	static const struct { const char *path; uint64_t size, was; } files[] = {
		{"/small", 1, 1}, {"/mid", 20480, 20000}, {"/sparse", (1 << 20) + 8192, 1053576},
	};
	unsigned long long b = leaf->blk;

	CHECK(!strcmp(leaf->it[0].key, "[29:1(SD):0:2a:0]") && leaf->level == 1);
	zero(io, leaf->blk);
	if (!(s = salvage(io, &rep)))
		return;
	print_report("rootdir", &rep);
	range_of(leaf->blk, lo, hi);
	r4_buf_printf(&want, "block %llu: leaf (level 1) unreadable: bad node magic 0x00000000; "
		      "keys %s to %s\n", b, lo, hi);
	r4_buf_printf(&want, "/: stat data from block 24, which the bitmap marks free: maybe an "
		      "older copy\n/: entries [2a:0(NAME):0:0:0] to [2a:0(NAME):ffffffffffffffff:"
		      "ffffffffffffffff:ffffffffffffffff] may be lost (block %llu)\n", b);
	r4_buf_printf(&want, "/lost+found/#%llu: found by no name\n/lost+found/#%llu: stat data "
		      "of object %llu not found; exported as a directory\n/lost+found/#%llu/hard: "
		      "stat data %s lost (block %llu); exported as a regular file\n",
		      (unsigned long long)ino_of("/d1"), (unsigned long long)ino_of("/d1"),
		      (unsigned long long)ino_of("/d1"), (unsigned long long)ino_of("/d1"),
		      sd_key(leaf, "/big"), b);
	r4_buf_printf(&want, "/lost+found/#%llu: found by no name\n/lost+found/#%llu: stat data "
		      "of object %llu not found; exported as a directory\n",
		      (unsigned long long)ino_of("/many"), (unsigned long long)ino_of("/many"),
		      (unsigned long long)ino_of("/many"));
	for (size_t i = 0; i < R4_ARRAY_SIZE(files); i++)
		r4_buf_printf(&want, "/lost+found/#%llu: found by no name\n/lost+found/#%llu: stat "
			      "data %s lost (block %llu); exported as a regular file\n",
			      (unsigned long long)ino_of(files[i].path),
			      (unsigned long long)ino_of(files[i].path),
			      sd_key(leaf, files[i].path), b);
	r4_buf_printf(&want, "/lost+found/#%llu: found by no name\n/lost+found/#%llu: stat data "
		      "of object %llu not found; exported as a directory\n",
		      (unsigned long long)ino_of("/empty"), (unsigned long long)ino_of("/empty"),
		      (unsigned long long)ino_of("/empty"));
	expect_report(&rep, &want);
	/* the root and /lost+found; all but /sym, /fifo and /big (as /d1/hard) */
	CHECK_EQ(ngot, 2 + R4_ARRAY_SIZE(small_paths) - 3 + NMANY);
	for (size_t i = 0; i < R4_ARRAY_SIZE(small_paths); i++)
		CHECK(!got_at(small_paths[i]));
	/* /d1's subtree, whole, under its number */
	static const char *const d1[] = {"/d1/d2", "/d1/d2/d3", "/d1/a.txt", "/d1/d2/b",
					 "/d1/d2/d3/c"};
	for (size_t i = 0; i < R4_ARRAY_SIZE(d1); i++) {
		snprintf(p, sizeof(p), "/lost+found/#%llu%s", (unsigned long long)ino_of("/d1"),
			 d1[i] + 3);
		CHECK((g = got_at(p)) && same(s, g, d1[i]));
	}
	snprintf(p, sizeof(p), "/lost+found/#%llu/hard", (unsigned long long)ino_of("/d1"));
	CHECK((g = got_at(p)) && g->flags == R4_SALVAGE_GUESSED && g->st.size == 102400 &&
	      g->st.mode == (S_IFREG | 0644) && same_bytes(s, g, "/big", 100000));
	for (size_t i = 0; i < R4_ARRAY_SIZE(files); i++) {
		snprintf(p, sizeof(p), "/lost+found/#%llu", (unsigned long long)ino_of(files[i].path));
		CHECK((g = got_at(p)) && g->flags == (R4_SALVAGE_GUESSED | R4_SALVAGE_ORPHAN) &&
		      g->st.size == files[i].size &&
		      same_bytes(s, g, files[i].path, files[i].was));
	}
	for (unsigned i = 0; i < NMANY; i += 7) {
		char m[40];

		snprintf(m, sizeof(m), "/many/f%05u", i);
		snprintf(p, sizeof(p), "/lost+found/#%llu/f%05u", (unsigned long long)ino_of("/many"),
			 i);
		CHECK((g = got_at(p)) && same(s, g, m));
	}
	done(s, &rep, &want, io);
}

/* (k) an entry whose name holds a '/': skipped (nothing can write outside
 * DEST), said, and its file found by no name. */
static void test_slash(void)
{
	struct r4_io *io = copy();
	struct r4_buf rep, want = {0};
	uint64_t n, d1 = ino_of("/d1"), ino = ino_of("/d1/a.txt");
	const uint8_t *p = r4_io_mem_data(io, &n);
	char loc[32], path[48];
	uint64_t blk = 0, at = 0;
	unsigned item = 0;
	r4_salvage *s;

	/* the leaf of /d1's entries: ".", "..", then "a.txt" in the item's
	 * unit 2, whose key's first name byte is byte 6 of its ordering */
	snprintf(loc, sizeof(loc), "[%llx:0(NAME)", (unsigned long long)d1);
	for (size_t i = 0; i < ntree && !blk; i++)
		for (unsigned j = 0; j < tree[i].n && !blk; j++)
			if (!strcmp(tree[i].it[j].kind, "cde") &&
			    !strncmp(tree[i].it[j].key, loc, strlen(loc))) {
				const uint8_t *ih = p + (tree[i].blk + 1) * BS - (j + 1) * 38;

				blk = tree[i].blk;
				item = j;
				at = blk * BS + (ih[32] | ih[33] << 8) + 2 + 2 * 26 + 6;
			}
	CHECK(blk && p[at] == 'a' && p[at - 1] == '.');
	r4_io_write(io, at, "/", 1);
	if (!(s = salvage(io, &rep)))
		return;
	print_report("slash", &rep);
	snprintf(path, sizeof(path), "/lost+found/#%llu", (unsigned long long)ino);
	r4_buf_printf(&want, "block %llu item %u entry 2: a name with '/' or NUL in it, skipped\n"
		      "%s: found by no name\n", (unsigned long long)blk, item, path);
	expect_report(&rep, &want);
	CHECK(!got_at("/d1/a.txt") && !got_at("/d1/.txt"));
	CHECK(got_at(path) && got_at(path)->flags == R4_SALVAGE_ORPHAN);
	CHECK(got_at("/d1/d2") && got_at("/d1/hard"));
	done(s, &rep, &want, io);
}

/* Read what the body of a regular file holds, as r4 salvage does: the
 * data segments (a size may be anything: the holes are not read). */
static int read_all(void *ctx, const struct r4_salvage_ent *e)
{
	static uint8_t buf[1 << 16];
	enum r4_salvage_kind kind;
	r4_salvage *s = ctx;
	uint64_t end;
	int rc;

	if (!S_ISREG(e->st.mode) || e->link)
		return 0;
	for (uint64_t off = 0; off < e->st.size; off = end) {
		if ((rc = r4_salvage_segment(s, e->st.ino, off, &kind, &end)))
			return rc;
		for (uint64_t at = off; kind == R4_SALVAGE_DATA && at < end; at += sizeof(buf))
			if ((rc = r4_salvage_read(s, e->st.ino, at, buf,
						  (size_t)R4_MIN(sizeof(buf), end - at))) &&
			    rc != -EIO)
				return rc;
	}
	return 0;
}

/* (j) random bytes of random nodes changed, the root's sometimes zeroed
 * too: salvage opens, walks, reads every file and reports, whatever the
 * nodes say (the sanitizers watch), and writes nothing. */
static void test_fuzz(void)
{
	unsigned long seed = t_seed();
	unsigned runs = getenv("R4_FUZZ") ? (unsigned)atoi(getenv("R4_FUZZ")) : 12;

	srandom((unsigned)seed);
	for (unsigned r = 0; r < runs; r++) {
		struct r4_io *io = copy();
		struct r4_buf rep = {0};
		r4_salvage *s = NULL;
		uint32_t before;
		int rc;

		for (int k = 0; k < 8; k++) {
			const struct tnode *t = &tree[(size_t)random() % ntree];
			uint8_t byte = (uint8_t)random();
			unsigned at = (unsigned)random() % BS;

			r4_io_write(io, t->blk * BS + at, &byte, 1);
		}
		if (r % 3 == 0)
			zero(io, tree[0].blk);
		before = sum(io);
		rc = r4_salvage_open_io(io, NULL, &s);
		CHECK(rc == 0);
		if (s) {
			rc = r4_salvage_walk(s, "/", read_all, s);
			CHECK(rc == 0);
			CHECK_RC(r4_salvage_report(s, &rep));
		}
		CHECK_EQ(sum(io), before);
		done(s, &rep, NULL, io);
	}
}

/* ------------------------ a compressed file ------------------------ */

enum { CL = 65536, CC_SIZE = 4 * CL + 20000 };

/* /c of ccreg40 (lzo1, 64K clusters): cluster 0 text, 1 random bytes (stored
 * raw: they do not compress), 2 and 3 a hole, 4 text to the size. */
static void cc_bytes(uint8_t *b)
{
	uint64_t x = 88172645463325252u;

	memset(b, 0, CC_SIZE);
	for (size_t i = 0; i < CL; i++)
		b[i] = (uint8_t)"reiser4 compresses clusters\n"[i % 28];
	for (size_t i = CL; i < 2 * CL; i++) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		b[i] = (uint8_t)x;
	}
	for (size_t i = 4 * CL; i < CC_SIZE; i++)
		b[i] = (uint8_t)"text again, "[i % 12];
}

static struct r4_io *cc_image(const uint8_t *want, uint64_t *ino)
{
	char path[300];
	struct r4_open_opts oo = {.rw = true};
	struct r4_mkfs_opts mo;
	struct r4_stat st;
	struct r4_io *io = NULL;
	r4_db *db;

	snprintf(path, sizeof(path), "%s.cc", img);
	r4_mkfs_defaults(&mo);
	mo.create = 4;	/* ccreg40 */
	CHECK_RC(r4_mkfs(path, 16u << 20, &mo));
	CHECK_RC(r4_open(path, &oo, &db));
	CHECK_RC(r4_begin(db));
	CHECK_RC(r4_create(db, "/c", S_IFREG | 0644, 0, 0));
	CHECK_RC(r4_write(db, "/c", 0, want, 2 * CL));
	CHECK_RC(r4_write(db, "/c", 4 * CL, want + 4 * CL, CC_SIZE - 4 * CL));
	CHECK_RC(r4_commit(db));
	CHECK_RC(r4_stat(db, "/c", &st));
	/* the text compressed, the random bytes not, the hole holds nothing */
	CHECK(st.size == CC_SIZE && st.blocks * 512 < CL + CL / 2);
	*ino = st.ino;
	r4_close(db);
	CHECK_RC(r4_io_mem_load(path, &io));
	unlink(path);
	return io;
}

/* Where the first ctail item of object ino at stream offset from..to lies:
 * its leaf, and (*at) its data's place in the image. */
static uint64_t cc_leaf(struct r4_io *io, uint64_t ino, uint64_t from, uint64_t to,
			uint64_t *at)
{
	uint64_t n;
	const uint8_t *p = r4_io_mem_data(io, &n);

	for (size_t i = 0; i < ntree; i++) {
		const uint8_t *b = p + tree[i].blk * BS;

		if (tree[i].level != 1)
			continue;
		for (unsigned j = 0; j < r4_node_nr(b); j++) {
			r4_key k;

			r4_node_key(b, BS, j, &k);
			if (r4_node_item_pid(b, BS, j) == R4_ITEM_CTAIL40 &&
			    r4_key_objectid(&k) == ino && r4_key_offset(&k) >= from &&
			    r4_key_offset(&k) <= to) {
				*at = tree[i].blk * BS + r4_node_item_off(b, BS, j) + 1;
				return tree[i].blk;
			}
		}
	}
	CHECK(!"a leaf of the compressed file");
	return 0;
}

/* Salvage of io's /c: its bytes (rc of the read) and segments [off, end, kind]. */
static int cc_salvage(struct r4_io *io, uint64_t ino, uint8_t *got, struct r4_buf *rep,
		      const uint64_t (*segs)[3], size_t nsegs)
{
	r4_salvage *s = salvage(io, rep);
	uint64_t off = 0, end;
	enum r4_salvage_kind k;
	int rc;

	if (!s)
		return -1;
	CHECK(got_at("/c") && got_at("/c")->st.size == CC_SIZE && got_at("/c")->st.ino == ino);
	for (size_t i = 0; i < nsegs; i++) {
		CHECK_RC(r4_salvage_segment(s, ino, off, &k, &end));
		CHECK(off == segs[i][0] && end == segs[i][1] && k == segs[i][2]);
		off = end;
	}
	CHECK_EQ(r4_salvage_segment(s, ino, off, &k, &end), -ENXIO);
	/* (in pieces across clusters, as a copy reads) */
	rc = r4_salvage_read(s, ino, 0, got, 100000);
	int r2 = r4_salvage_read(s, ino, 100000, got + 100000, CC_SIZE - 100000);
	rc = rc ? rc : r2;
	r4_buf_free(rep);
	memset(rep, 0, sizeof(*rep));
	CHECK_RC(r4_salvage_report(s, rep));
	r4_salvage_close(s);
	return rc;
}

/*
 * (l) a compressed (ccreg40) file: whole, its bytes and its hole (a
 * cluster without items) as the oracle has them; a leaf holding part of
 * its raw cluster zeroed: that cluster lost and said, the rest the same; a
 * compressed cluster whose bytes changed (its checksum fails): lost and
 * said when read.
 */
static void test_ccreg(void)
{
	static const uint64_t whole[][3] = {
		{0, 2 * CL, R4_SALVAGE_DATA}, {2 * CL, 4 * CL, R4_SALVAGE_HOLE},
		{4 * CL, CC_SIZE, R4_SALVAGE_DATA}};
	static const uint64_t lost1[][3] = {
		{0, CL, R4_SALVAGE_DATA}, {CL, 2 * CL, R4_SALVAGE_LOST},
		{2 * CL, 4 * CL, R4_SALVAGE_HOLE}, {4 * CL, CC_SIZE, R4_SALVAGE_DATA}};
	uint8_t *want = malloc(CC_SIZE), *got = malloc(CC_SIZE);
	struct tnode *keep = tree;
	size_t nkeep = ntree;
	struct r4_buf rep = {0}, exp = {0};
	struct r4_io *pio, *io;
	uint64_t ino, leaf, at;
	r4_db *db;

	cc_bytes(want);
	if (!(pio = cc_image(want, &ino)))
		goto out;
	tree = NULL;
	ntree = 0;
	CHECK_RC(r4_open_io(pio, NULL, &db));
	CHECK_RC(r4_dump_tree(db, dump_fn, NULL));

	io = copy_of(pio);
	CHECK_RC(cc_salvage(io, ino, got, &rep, whole, R4_ARRAY_SIZE(whole)));
	CHECK(!memcmp(got, want, CC_SIZE));
	CHECK_EQ(rep.len, 0);
	r4_buf_free(&rep);
	r4_io_close(io);

	/* a leaf inside the raw cluster (not its first) */
	io = copy_of(pio);
	leaf = cc_leaf(io, ino, CL + 1, 2 * CL - 1, &at);
	zero(io, leaf);
	CHECK_EQ(cc_salvage(io, ino, got, &rep, lost1, R4_ARRAY_SIZE(lost1)), -EIO);
	memset(want + CL, 0, CL);
	CHECK(!memcmp(got, want, CC_SIZE));
	bad_node_line(&exp, leaf, "leaf", 1);
	r4_buf_printf(&exp, "/c: bytes %u to %u lost (block %llu)\n", CL, 2 * CL - 1,
		      (unsigned long long)leaf);
	print_report("ccreg leaf", &rep);
	expect_report(&rep, &exp);
	r4_buf_free(&rep);
	r4_buf_free(&exp);
	r4_io_close(io);

	/* a byte of the compressed cluster 0 changed */
	io = copy_of(pio);
	cc_bytes(want);
	leaf = cc_leaf(io, ino, 0, 0, &at);
	CHECK_RC(r4_io_write(io, at + 10, &(uint8_t){0x5a}, 1));
	CHECK_EQ(cc_salvage(io, ino, got, &rep, whole, R4_ARRAY_SIZE(whole)), -EIO);
	memset(want, 0, CL);
	CHECK(!memcmp(got, want, CC_SIZE));
	r4_buf_printf(&exp, "/c: bytes 0 to %u lost (block %llu)\n", CL - 1,
		      (unsigned long long)leaf);
	print_report("ccreg checksum", &rep);
	expect_report(&rep, &exp);
	r4_buf_free(&rep);
	r4_buf_free(&exp);
	r4_io_close(io);

	tree_free();
	r4_close(db);	/* and pio */
out:
	tree = keep;
	ntree = nkeep;
	free(want);
	free(got);
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
	test_twig();
	test_leaves();
	test_bitmap();
	test_stale();
	test_super();
	test_journal();
	test_journal_bad();
	test_badblock();
	test_rootdir();
	test_slash();
	test_fuzz();
	test_ccreg();
	gots_free();
	tree_free();
	r4_close(oracle);	/* and pristine, which it took */
	return T_DONE();
}
