/*
 * test_repack.c - the repacker (issue 24, docs/repack.md).  An image
 * fragmented on purpose (appends to several files in turns, each its own
 * commit; overwrites that relocate; deletes; a hard link, a sparse file,
 * tails, a symlink, an attribute record) is repacked:
 *  - every file reads as the model says, and every object stats as before
 *    (id, mode, links, owner, size, blocks, all three times);
 *  - every extent file is one run afterwards, the runs add up to fewer,
 *    measurefs.reiser4's data fragmentation is lower, and a second pass
 *    finds every file in place, in walk order, and writes nothing; where
 *    no free run holds a file, it goes into as few of the largest as are
 *    fewer than its runs;
 *  - the nodes (half empty leaves of small files, made apart): tree
 *    fragmentation (r4_frag and measurefs.reiser4 -T, which agree) at most
 *    half of before, fewer leaves, better packed, fewer seeks per MiB;
 *  - r4 check and fsck.reiser4 are clean after each pass;
 *  - a dry run writes nothing and says what the pass then moves; a pass
 *    stopped after two files keeps them and the next one goes on; a pass
 *    over a subtree moves only what is under it; with no room a file is
 *    skipped and nothing changes; bad calls are refused;
 *  - crash: the write stream of a pass (several commits, bodies and
 *    nodes) is cut after every write (torn and not); after each cut the
 *    image opens, r4 check is clean, and every object is as before
 *    (fsck.reiser4 on a sample).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "io.h"
#include "obj.h"
#include "t.h"

static char dir[64];
static unsigned long seed;

/* ---- the model: what each file holds ---- */

enum { NF = 10 };

struct mfile {
	const char *path;
	uint8_t *data;
	size_t len;
};

static struct mfile model[NF] = {
	{"/d0/a", NULL, 0}, {"/d0/b", NULL, 0}, {"/d0/c", NULL, 0}, {"/d1/e", NULL, 0},
	{"/d1/f", NULL, 0}, {"/d1/sub/g", NULL, 0}, {"/d1/sub/h", NULL, 0}, {"/d2/i", NULL, 0},
	{"/d2/j", NULL, 0}, {"/d2/sparse", NULL, 0},
};

static uint64_t rnd(void)
{
	seed = seed * 6364136223846793005ull + 1442695040888963407ull;
	return seed >> 33;
}

static void gen(uint8_t *b, size_t n, unsigned tag)
{
	for (size_t i = 0; i < n; i++)
		b[i] = (uint8_t)(i * 131 + tag * 7 + (i >> 9));
}

/* Write n bytes of pattern tag at off into model file i and the image. */
static int mwrite(r4_db *db, size_t i, size_t off, size_t n, unsigned tag)
{
	struct mfile *m = &model[i];
	uint8_t *b = malloc(n);
	int rc;

	gen(b, n, tag);
	if (!(rc = r4_write(db, m->path, off, b, n))) {
		if (off + n > m->len) {
			m->data = realloc(m->data, off + n);
			memset(m->data + m->len, 0, off + n - m->len);
			m->len = off + n;
		}
		memcpy(m->data + off, b, n);
	}
	free(b);
	return rc;
}

static void model_reset(void)
{
	for (size_t i = 0; i < NF; i++) {
		free(model[i].data);
		model[i].data = NULL;
		model[i].len = 0;
	}
}

/* The files of the model read exactly as it says. */
static void check_model(r4_db *db, const char *what)
{
	for (size_t i = 0; i < NF && model[i].data; i++) {
		uint8_t *b = malloc(model[i].len + 1);
		size_t got = 0;

		CHECK_RC(r4_read(db, model[i].path, 0, b, model[i].len + 1, &got));
		if (got != model[i].len || memcmp(b, model[i].data, got)) {
			fprintf(stderr, "%s: %s differs from the model\n", what, model[i].path);
			CHECK(0);
		}
		free(b);
	}
}

/*
 * The aging: the files made (the first write of each in turn, so the
 * files start apart), then rounds in which each file, in a shuffled
 * order, gets an append of its own commit, a scratch file is written
 * between (deleted every other round: holes in the free space), and
 * every third round a few files get an overwrite of several blocks in
 * one transaction (relocated: its unit split in three).
 */
static void age(r4_db *db, unsigned rounds, size_t first, size_t last)
{
	char p[64];

	for (size_t i = first; i < last; i++) {
		if (model[i].len)
			continue;
		CHECK_RC(r4_create(db, model[i].path, 0640, 1000 + (uint32_t)i, 100));
		CHECK_RC(mwrite(db, i, 0, 20000 + rnd() % 9000, (unsigned)i));
	}
	for (unsigned r = 0; r < rounds; r++) {
		size_t order[NF];

		for (size_t i = first; i < last; i++)
			order[i - first] = i;
		for (size_t i = last - first; i > 1; i--) {
			size_t j = rnd() % i, t = order[i - 1];

			order[i - 1] = order[j];
			order[j] = t;
		}
		for (size_t k = 0; k < last - first; k++) {
			size_t i = order[k];

			CHECK_RC(mwrite(db, i, model[i].len, 5000 + rnd() % 12000, r * 16 + (unsigned)i));
			if (k == (last - first) / 2) {
				snprintf(p, sizeof(p), "/scratch%u", r);
				CHECK_RC(r4_create(db, p, 0600, 0, 0));
				static uint8_t junk[30000];

				CHECK_RC(r4_write(db, p, 0, junk, sizeof(junk)));
			}
		}
		for (unsigned d = r - 1; r % 2 && d <= r; d++) {
			snprintf(p, sizeof(p), "/scratch%u", d);
			CHECK_RC(r4_unlink(db, p));
		}
		if (r % 3 == 2) {
			CHECK_RC(r4_begin(db));
			for (size_t i = first; i < last; i += 3)
				CHECK_RC(mwrite(db, i, 4096 + rnd() % 8000, 9000, 200 + r));
			CHECK_RC(r4_commit(db));
		}
	}
}

/* The whole test tree: the aged files and what is no extent file. */
static void build(r4_db *db)
{
	r4_file *f;

	CHECK_RC(r4_mkdir(db, "/d0", 0755, 0, 0));
	CHECK_RC(r4_mkdir(db, "/d1", 0750, 1, 2));
	CHECK_RC(r4_mkdir(db, "/d1/sub", 0700, 0, 0));
	CHECK_RC(r4_mkdir(db, "/d2", 0755, 0, 0));
	/* small files (tails: their leaves are neighbours), made in turns
	 * with the aging and two of three deleted: half empty leaves, apart */
	CHECK_RC(r4_mkdir(db, "/d3", 0755, 0, 0));
	for (unsigned r = 0; r < 4; r++) {
		char p[64];

		age(db, 2, 0, NF - 1);
		for (unsigned i = 0; i < 60; i++) {
			snprintf(p, sizeof(p), "/d3/s%u-%02u", r, i);
			CHECK_RC(r4_create(db, p, 0644, 0, 0));
			CHECK_RC(r4_write(db, p, 0, p, strlen(p)));
		}
		for (unsigned i = 0; i < 60; i++)
			if (i % 3) {
				snprintf(p, sizeof(p), "/d3/s%u-%02u", r, i);
				CHECK_RC(r4_unlink(db, p));
			}
	}
	/* a sparse file: data, a hole of 50 blocks, data */
	CHECK_RC(r4_create(db, model[NF - 1].path, 0600, 0, 0));
	CHECK_RC(mwrite(db, NF - 1, 0, 9000, 77));
	CHECK_RC(mwrite(db, NF - 1, 60 * 4096, 9000, 78));
	CHECK_RC(mwrite(db, NF - 1, 9000, 3000, 79));
	CHECK_RC(r4_link(db, "/d0/a", "/d2/link"));
	CHECK_RC(r4_create(db, "/d0/tiny", 0644, 0, 0));
	CHECK_RC(r4_write(db, "/d0/tiny", 0, "tail", 4));
	CHECK_RC(r4_create(db, "/d0/empty", 0644, 0, 0));
	CHECK_RC(r4_symlink(db, "../d0/a", "/d1/ln", 0, 0));
	CHECK_RC(r4_file_open(db, "/d0/b", &f));
	CHECK_RC(r4_file_setxattr(f, "user.note", "kept", 4, 0));
	CHECK_RC(r4_file_close(f));
}

/* ---- what users see: every object's stat and contents ---- */

struct sbuf {
	char *s;
	size_t n;
};

static void sb_add(struct sbuf *b, const char *line)
{
	size_t n = strlen(line);

	b->s = realloc(b->s, b->n + n + 1);
	memcpy(b->s + b->n, line, n + 1);
	b->n += n;
}

static int collect(void *ctx, const char *name, size_t len, uint64_t ino, uint32_t type)
{
	struct sbuf *b = ctx;
	char line[300];

	(void)ino, (void)type;
	if ((len == 1 && name[0] == '.') || (len == 2 && !memcmp(name, "..", 2)))
		return 0;
	snprintf(line, sizeof(line), "%.*s\n", (int)len, name);
	sb_add(b, line);
	return 0;
}

static void snap_dir(r4_db *db, const char *path, struct sbuf *out)
{
	struct sbuf names = {0};
	struct r4_dirpos pos = {0};

	CHECK_RC(r4_readdir(db, path, &pos, collect, &names));
	for (char *nm = names.s, *nl; nm && (nl = strchr(nm, '\n')); nm = nl + 1) {
		char p[600], line[900];
		struct r4_stat st;
		unsigned long long h = 1469598103934665603ull;

		*nl = 0;
		snprintf(p, sizeof(p), "%s/%s", strcmp(path, "/") ? path : "", nm);
		CHECK_RC(r4_stat(db, p, &st));
		if (S_ISREG(st.mode)) {
			static uint8_t buf[65536];
			uint64_t off = 0;
			size_t got;

			do {
				if (r4_read(db, p, off, buf, sizeof(buf), &got))
					break;
				for (size_t j = 0; j < got; j++)
					h = (h ^ buf[j]) * 1099511628211ull;
				off += got;
			} while (got == sizeof(buf));
		}
		snprintf(line, sizeof(line),
			 "%s ino %llu mode %o nlink %u %u:%u size %llu blocks %llu a %lld.%ld m %lld.%ld "
			 "c %lld.%ld %llx\n", p, (unsigned long long)st.ino, st.mode, st.nlink, st.uid,
			 st.gid, (unsigned long long)st.size, (unsigned long long)st.blocks,
			 (long long)st.atime.tv_sec, st.atime.tv_nsec, (long long)st.mtime.tv_sec,
			 st.mtime.tv_nsec, (long long)st.ctime.tv_sec, st.ctime.tv_nsec, h);
		sb_add(out, line);
		if (S_ISDIR(st.mode))
			snap_dir(db, p, out);
	}
	free(names.s);
}

static char *snap(r4_db *db)
{
	struct sbuf b = {0};
	struct r4_stat st;

	sb_add(&b, "/\n");
	snap_dir(db, "/", &b);
	if (!r4_stat(db, "/..r4", &st))	/* r4's records: attributes */
		snap_dir(db, "/..r4", &b);
	return b.s;
}

/* Runs of contiguous allocated blocks of a file (0: none). */
static uint64_t runs_of(r4_db *db, const char *path)
{
	struct r4_inode ino;
	struct r4_extent *e = NULL;
	uint64_t runs = 0, end = 0;
	size_t n = 0;

	CHECK_RC(r4_fs_resolve(db, path, &ino));
	CHECK_RC(r4_reg_map(db, &ino, &e, &n));
	for (size_t i = 0; i < n; i++)
		if (e[i].ex_start > R4_EXTENT_UNALLOC) {
			runs += e[i].ex_start != end;
			end = e[i].ex_start + e[i].ex_width;
		}
	r4_free(e);
	r4_obj_fini(&ino);
	return runs;
}

static uint64_t all_runs(r4_db *db, uint64_t *most)
{
	uint64_t sum = 0;

	*most = 0;
	for (size_t i = 0; i < NF; i++) {
		uint64_t r = runs_of(db, model[i].path);

		sum += r;
		*most = r > *most ? r : *most;
	}
	return sum;
}

/* measurefs.reiser4's data (tree: its tree) fragmentation of img, or -1
 * without it. */
static double measure(const char *img, bool tree)
{
	char cmd[300], line[200];
	double v = -1;
	FILE *p;

	snprintf(cmd, sizeof(cmd), "measurefs.reiser4 %s -y '%s' 2>/dev/null", tree ? "-T" : "-D",
		 img);
	if (system("command -v measurefs.reiser4 >/dev/null 2>&1") || !(p = popen(cmd, "r")))
		return -1;
	while (fgets(line, sizeof(line), p))
		sscanf(line, tree ? "Tree fragmentation: %lf" : "Data fragmentation is: %lf", &v);
	pclose(p);
	return v;
}

static unsigned long long file_sum(const char *path)
{
	unsigned long long h = 1469598103934665603ull;
	FILE *f = fopen(path, "rb");
	int c;

	while (f && (c = getc(f)) != EOF)
		h = (h ^ (unsigned)c) * 1099511628211ull;
	if (f)
		fclose(f);
	return h;
}

static r4_db *open_img(const char *img, bool rw)
{
	struct r4_open_opts o = {.rw = rw};
	r4_db *db = NULL;

	CHECK_RC(r4_open(img, &o, &db));
	return db;
}

/* ---- the callbacks ---- */

struct seen {
	size_t n, moved, stop_after;	/* stop_after: stop once that many moved (0: never) */
	char paths[64][64];
	uint64_t first[64];
	enum r4_repack_what what[64];
};

static void on_file(void *ctx, const struct r4_repack_file *f, const struct r4_repack_stats *so)
{
	struct seen *s = ctx;

	CHECK(so->files == s->n + 1);
	if (s->n < 64) {
		snprintf(s->paths[s->n], sizeof(s->paths[0]), "%s", f->path);
		s->first[s->n] = f->to;
		s->what[s->n] = f->what;
	}
	s->n++;
	s->moved += f->what == R4_REPACK_MOVED;
}

static bool on_stop(void *ctx)
{
	struct seen *s = ctx;

	return s->stop_after && s->moved >= s->stop_after;
}

static int pass(r4_db *db, const char *path, bool dry, uint64_t commit, struct seen *s,
		struct r4_repack_stats *st)
{
	/* (files move 5 blocks an operation: in pieces, the place chosen once) */
	struct r4_repack_opts o = {.commit_bytes = commit, .piece_blocks = 5, .dry_run = dry,
				   .stop = on_stop, .file = on_file, .ctx = s};

	return r4_repack(db, path, &o, st);
}

/* ---- the passes ---- */

static void test_passes(void)
{
	char img[128];
	struct r4_repack_stats st, dry;
	struct seen s = {0};
	uint64_t runs0, most, runs1;
	char *before, *after;
	r4_db *db;

	snprintf(img, sizeof(img), "%s/a.img", dir);
	CHECK_RC(r4_mkfs(img, 32u << 20, NULL));
	if (!(db = open_img(img, true)))
		return;
	build(db);
	r4_close(db);
	t_both_clean(img, "aging");
	double frag0 = measure(img, false), tfrag0 = measure(img, true);
	struct r4_frag fr0, fr1;

	db = open_img(img, false);
	CHECK_RC(r4_frag(db, "/", &fr0));
	before = snap(db);
	check_model(db, "aged");
	runs0 = all_runs(db, &most);
	CHECK(most > 3);	/* the aging did fragment */

	/* a dry run: says what would move, writes nothing, even on a read-only handle */
	unsigned long long sum0 = file_sum(img);
	CHECK_RC(pass(db, "/", true, 0, &s, &dry));
	CHECK(dry.moved > 0 && dry.blocks_moved > 0 && dry.commits == 0);
	CHECK_EQ(dry.files, s.n);
	CHECK_EQ(dry.files, NF);	/* the hard link counted once */
	/* bad calls */
	CHECK_EQ(pass(db, "/", false, 0, &s, &st), -EROFS);
	r4_close(db);
	CHECK_EQ(file_sum(img), sum0);
	db = open_img(img, true);
	CHECK_EQ(pass(db, "/nowhere", false, 0, &s, &st), -ENOENT);
	CHECK_EQ(pass(db, "/d0/a/x", false, 0, &s, &st), -ENOTDIR);
	CHECK_RC(r4_begin(db));
	CHECK_EQ(pass(db, "/", false, 0, &s, &st), -EBUSY);
	r4_abort(db);

	/* stopped after two files: they stay moved, everything else as it was */
	memset(&s, 0, sizeof(s));
	s.stop_after = 2;
	CHECK_RC(pass(db, "/", false, 0, &s, &st));
	CHECK(st.stopped);
	CHECK_EQ(st.moved, 2);
	CHECK_EQ(st.commits, 1);
	r4_close(db);
	t_both_clean(img, "a stopped pass");
	db = open_img(img, true);
	after = snap(db);
	CHECK(before && after && !strcmp(before, after));
	free(after);

	/* the pass goes on: a commit every 64 KiB */
	memset(&s, 0, sizeof(s));
	CHECK_RC(pass(db, "/", false, 64 << 10, &s, &st));
	CHECK(!st.stopped && st.moved > 0 && st.no_room == 0);
	CHECK_EQ(st.files, NF);
	CHECK_EQ(st.moved + st.in_place, NF);
	CHECK_EQ(st.moved, dry.moved - 2);
	CHECK(st.commits >= 2);
	CHECK(st.runs_after == st.moved && st.runs_before > st.runs_after);
	check_model(db, "repacked");
	runs1 = all_runs(db, &most);
	CHECK_EQ(most, 1);
	CHECK(runs1 < runs0);
	CHECK_RC(r4_frag(db, "/", &fr1));
	printf("layout: tree fragmentation %.6f then %.6f, leaves %llu at %.2f%% then %llu at "
	       "%.2f%%, twigs %llu at %.2f%% then %llu at %.2f%%, seeks per MiB %.2f then %.2f\n",
	       fr0.tree_frag, fr1.tree_frag, (unsigned long long)fr0.leaves, fr0.leaf_fill,
	       (unsigned long long)fr1.leaves, fr1.leaf_fill, (unsigned long long)fr0.twigs,
	       fr0.twig_fill, (unsigned long long)fr1.twigs, fr1.twig_fill, fr0.seeks_per_mib,
	       fr1.seeks_per_mib);
	/* the nodes: in walk order, leaves packed */
	CHECK(st.nodes_moved > 0 && st.nodes_no_room == 0);
	CHECK(fr1.tree_frag <= fr0.tree_frag / 2);
	CHECK(fr1.leaf_fill > fr0.leaf_fill && fr1.leaves < fr0.leaves);
	CHECK(fr1.seeks_per_mib < fr0.seeks_per_mib);
	r4_close(db);
	t_both_clean(img, "a pass");
	double frag1 = measure(img, false), tfrag1 = measure(img, true);
	if (frag0 < 0) {
		printf("skip: measurefs.reiser4 not installed\n");
	} else {
		CHECK(frag1 < frag0 && frag1 < 0.001);
		CHECK(tfrag1 <= tfrag0 / 2);
		/* r4 frag counts as measurefs does */
		CHECK(tfrag0 - fr0.tree_frag < 1e-6 && fr0.tree_frag - tfrag0 < 1e-6);
		CHECK(tfrag1 - fr1.tree_frag < 1e-6 && fr1.tree_frag - tfrag1 < 1e-6);
	}
	printf("nodes: %llu moved; measurefs.reiser4 tree fragmentation %.6f then %.6f\n",
	       (unsigned long long)st.nodes_moved, tfrag0, tfrag1);
	printf("repack: %llu files, %llu runs into %llu (all files: %llu runs, then %llu), "
	       "data fragmentation %.6f then %.6f\n", (unsigned long long)st.files,
	       (unsigned long long)st.runs_before, (unsigned long long)st.runs_after,
	       (unsigned long long)runs0, (unsigned long long)runs1, frag0, frag1);

	/* nothing left to do: all in place, in walk order, nothing written */
	db = open_img(img, true);
	after = snap(db);
	CHECK(before && after && !strcmp(before, after));
	free(after);
	sum0 = file_sum(img);
	memset(&s, 0, sizeof(s));
	CHECK_RC(pass(db, "/", false, 0, &s, &st));
	CHECK_EQ(st.in_place, NF);
	CHECK_EQ(st.moved + st.commits, 0);
	for (size_t i = 1; i < s.n; i++)
		CHECK(s.first[i] > s.first[i - 1]);
	/* the walk's order: a directory's files, then its subdirectories */
	CHECK(!strcmp(s.paths[0], "/d0/a") && !strcmp(s.paths[5], "/d1/sub/g") &&
	      !strcmp(s.paths[NF - 1], "/d2/sparse"));
	r4_close(db);
	CHECK_EQ(file_sum(img), sum0);

	/* a subtree: /d2's files aged again, /d1's too; a pass over /d2 moves
	 * only /d2's */
	db = open_img(img, true);
	age(db, 3, 3, 9);
	r4_close(db);
	db = open_img(img, true);
	free(before);
	before = snap(db);
	memset(&s, 0, sizeof(s));
	CHECK_RC(pass(db, "/d2", false, 0, &s, &st));
	CHECK(st.moved > 0);
	for (size_t i = 0; i < s.n; i++)
		CHECK(!strncmp(s.paths[i], "/d2/", 4));
	CHECK_EQ(runs_of(db, "/d2/i"), 1);
	CHECK(runs_of(db, "/d1/e") > 1);
	/* a file as the path */
	memset(&s, 0, sizeof(s));
	CHECK_RC(pass(db, "/d1/e", false, 0, &s, &st));
	CHECK(st.files == 1 && st.moved == 1 && !strcmp(s.paths[0], "/d1/e"));
	CHECK_EQ(runs_of(db, "/d1/e"), 1);
	check_model(db, "subtree");
	after = snap(db);
	CHECK(before && after && !strcmp(before, after));
	free(after);
	r4_close(db);
	t_both_clean(img, "a pass over a subtree");
	free(before);
}

/* A new image of mib MiB whose /d0/a and /d0/b (the model's first two
 * files) got 12 appends of `bytes` in turns, each its own commit. */
static r4_db *two_in_turns(const char *img, unsigned mib, size_t bytes)
{
	r4_db *db;

	CHECK_RC(r4_mkfs(img, (uint64_t)mib << 20, NULL));
	if (!(db = open_img(img, true)))
		return NULL;
	model_reset();
	CHECK_RC(r4_mkdir(db, "/d0", 0755, 0, 0));
	CHECK_RC(r4_create(db, "/d0/a", 0644, 0, 0));
	CHECK_RC(r4_create(db, "/d0/b", 0644, 0, 0));
	for (unsigned r = 0; r < 12; r++)
		for (size_t i = 0; i < 2; i++)
			CHECK_RC(mwrite(db, i, model[i].len, bytes, r));
	return db;
}

/* No room: fragmented files on a volume filled up to its reserve. */
static void test_no_room(void)
{
	char img[128];
	struct r4_repack_stats st;
	struct seen s = {0};
	char *before, *after;
	r4_db *db;

	/* two files of 120 blocks, more than what the reserve leaves */
	snprintf(img, sizeof(img), "%s/full.img", dir);
	if (!(db = two_in_turns(img, 8, 40000)))
		return;
	t_fill(db, "/fill");
	before = snap(db);
	CHECK(runs_of(db, "/d0/a") > 1);
	CHECK_RC(pass(db, "/d0", false, 0, &s, &st));
	CHECK(st.files == 2 && st.no_room == 2 && st.moved == 0 && st.commits == 0);
	CHECK(s.n == 2 && s.what[0] == R4_REPACK_NO_ROOM && s.what[1] == R4_REPACK_NO_ROOM);
	after = snap(db);
	CHECK(before && after && !strcmp(before, after));
	r4_close(db);
	t_both_clean(img, "a pass with no room");
	free(before);
	free(after);
}

/* Pieces: no free run holds a fragmented file (larger than what the
 * reserve leaves at the end), but several of the holes that deleting
 * every other file of a full volume left do. */
static void test_pieces(void)
{
	static uint8_t junk[40 * 4096];
	char img[128], p[64];
	struct r4_repack_stats st;
	struct seen s = {0};
	char *before, *after;
	uint64_t ra, rb;
	r4_db *db;
	int k;

	snprintf(img, sizeof(img), "%s/holes.img", dir);
	if (!(db = two_in_turns(img, 16, 150000)))	/* 440 blocks each */
		return;
	for (k = 0;; k++) {
		snprintf(p, sizeof(p), "/f%03d", k);
		CHECK_RC(r4_create(db, p, 0644, 0, 0));
		if (r4_write(db, p, 0, junk, sizeof(junk)))
			break;
	}
	for (int i = 0; i < k; i += 2) {
		snprintf(p, sizeof(p), "/f%03d", i);
		CHECK_RC(r4_unlink(db, p));
	}
	before = snap(db);
	ra = runs_of(db, "/d0/a");
	rb = runs_of(db, "/d0/b");
	CHECK_RC(pass(db, "/d0", false, 0, &s, &st));
	CHECK(st.files == 2 && st.moved == 2 && st.runs_before == ra + rb);
	CHECK_EQ(st.runs_after, runs_of(db, "/d0/a") + runs_of(db, "/d0/b"));
	CHECK(runs_of(db, "/d0/a") > 1 && runs_of(db, "/d0/a") < ra);
	CHECK(runs_of(db, "/d0/b") > 1 && runs_of(db, "/d0/b") < rb);
	check_model(db, "in pieces");
	after = snap(db);
	CHECK(before && after && !strcmp(before, after));
	r4_close(db);
	t_both_clean(img, "a pass into pieces");
	free(before);
	free(after);
}

/*
 * Many twigs of small files (tails in leaves), aged: files of 1 to 15 KB
 * made in turns in four directories over six rounds, each file its own
 * transaction, two of three deleted after each round: leaves half empty
 * and apart, under several twigs.  A pass packs the leaves and puts them
 * in key order: tree and data fragmentation (measurefs.reiser4's too)
 * down to a quarter at most; the next pass moves no node and writes
 * nothing.
 */
static void test_twigs(void)
{
	static uint8_t buf[16000], back[16000];
	char img[128], p[64];
	struct r4_repack_stats st;
	struct r4_frag fr0, fr1, fr2;
	struct seen s = {0};
	char *before, *after;
	r4_db *db;

	snprintf(img, sizeof(img), "%s/twigs.img", dir);
	CHECK_RC(r4_mkfs(img, 6u << 20, NULL));
	if (!(db = open_img(img, true)))
		return;
	for (unsigned d = 0; d < 4; d++) {
		snprintf(p, sizeof(p), "/t%u", d);
		CHECK_RC(r4_mkdir(db, p, 0755, 0, 0));
	}
	for (unsigned r = 0; r < 6; r++) {
		for (unsigned i = 0; i < 30; i++)
			for (unsigned d = 0; d < 4; d++) {
				size_t n = (i * 7919 + r * 104729 + d * 31) % 14000 + 1000;

				snprintf(p, sizeof(p), "/t%u/f%u-%02u", d, r, i);
				gen(buf, n, r * 1000 + i * 10 + d);
				CHECK_RC(r4_create(db, p, 0644, 0, 0));
				CHECK_RC(r4_write(db, p, 0, buf, n));
			}
		for (unsigned i = 0; i < 30; i++)
			for (unsigned d = 0; d < 4 && i % 3; d++) {
				snprintf(p, sizeof(p), "/t%u/f%u-%02u", d, r, i);
				CHECK_RC(r4_unlink(db, p));
			}
	}
	before = snap(db);
	CHECK_RC(r4_frag(db, "/", &fr0));
	r4_close(db);
	double dfrag0 = measure(img, false), tfrag0 = measure(img, true);

	db = open_img(img, true);
	CHECK_RC(pass(db, "/", false, 0, &s, &st));
	CHECK(st.nodes_moved > 0 && st.nodes_no_room == 0);
	CHECK_RC(r4_frag(db, "/", &fr1));
	after = snap(db);
	CHECK(before && after && !strcmp(before, after));
	free(after);
	for (unsigned r = 0; r < 6; r += 5)
		for (unsigned i = 0; i < 30; i += 9) {
			size_t n = (i * 7919 + r * 104729 + 3 * 31) % 14000 + 1000, got = 0;

			snprintf(p, sizeof(p), "/t3/f%u-%02u", r, i);
			gen(buf, n, r * 1000 + i * 10 + 3);
			CHECK_RC(r4_read(db, p, 0, back, sizeof(back), &got));
			CHECK(got == n && !memcmp(buf, back, n));
		}
	r4_close(db);
	t_both_clean(img, "a pass over many twigs");
	double dfrag1 = measure(img, false), tfrag1 = measure(img, true);
	printf("twigs: %llu leaves under %llu twigs then %llu under %llu, %llu nodes moved; "
	       "tree fragmentation %.6f then %.6f, data fragmentation %.6f then %.6f "
	       "(measurefs.reiser4: %.6f then %.6f, %.6f then %.6f)\n",
	       (unsigned long long)fr0.leaves, (unsigned long long)fr0.twigs,
	       (unsigned long long)fr1.leaves, (unsigned long long)fr1.twigs,
	       (unsigned long long)st.nodes_moved, fr0.tree_frag, fr1.tree_frag, fr0.data_frag,
	       fr1.data_frag, tfrag0, tfrag1, dfrag0, dfrag1);
	CHECK(fr0.twigs >= 4);
	CHECK(fr1.tree_frag < fr0.tree_frag / 4 && fr1.data_frag < fr0.data_frag / 4);
	CHECK(fr1.leaves < fr0.leaves && fr1.leaf_fill > fr0.leaf_fill);
	if (tfrag0 >= 0)
		CHECK(tfrag1 < tfrag0 / 4 && dfrag1 < dfrag0 / 4);

	/* the next pass: every twig in place, nothing written */
	unsigned long long sum1 = file_sum(img);

	db = open_img(img, true);
	CHECK_RC(pass(db, "/", false, 0, &s, &st));
	CHECK_EQ(st.nodes_moved, 0);
	CHECK_EQ(st.commits, 0);
	CHECK_RC(r4_frag(db, "/", &fr2));
	CHECK(fr2.tree_frag == fr1.tree_frag && fr2.data_frag == fr1.data_frag);
	r4_close(db);
	CHECK_EQ(file_sum(img), sum1);
	free(before);
}

/* ---- crash: a pass cut after every write ---- */

static int quiet_opens;

static void quiet(void *ctx, int level, const char *msg)
{
	(void)ctx;
	if (level == R4_LOG_ERR && !quiet_opens)
		fprintf(stderr, "r4: %s\n", msg);
}

/* Open over a RAM image through a pass-through fault wrapper. */
static int open_over(struct r4_io *mem, bool rw, r4_db **db, struct r4_io **fw)
{
	struct r4_open_opts oo = {.rw = rw, .log = quiet};

	return t_open_wrapped(mem, &oo, db, fw);
}

static void copy_into(struct r4_io *to, struct r4_io *from)
{
	uint64_t size;
	const uint8_t *d = r4_io_mem_data(from, &size);

	CHECK_RC(r4_io_truncate(to, size));
	CHECK_RC(r4_io_write(to, 0, d, size));
}

static void test_crash(bool compact)
{
	char img[128];
	struct r4_io *base, *work;
	struct r4_io_fault_stats a, b;
	struct r4_repack_stats st;
	/* (3 blocks an operation: cuts between a file's pieces too; compact:
	 * files move down, with commits that give them their old places) */
	struct r4_repack_opts o = {.commit_bytes = 16 << 10, .piece_blocks = 3,
				   .compact = compact};
	struct r4_io *fw;
	r4_db *db = NULL;
	char *before;
	size_t states = 0, bad = 0, fscked = 0;

	snprintf(img, sizeof(img), "%s/crash.img", dir);
	CHECK_RC(r4_mkfs(img, 8u << 20, NULL));
	CHECK_RC(r4_io_mem_load(img, &base));
	CHECK_RC(open_over(base, true, &db, NULL));
	model_reset();
	CHECK_RC(r4_mkdir(db, "/d0", 0755, 0, 0));
	CHECK_RC(r4_mkdir(db, "/d1", 0755, 0, 0));
	age(db, 3, 0, 5);
	/* leaves of /d1's own (small files, tails), which the walk puts
	 * before its files' bodies in commits of their own */
	for (unsigned i = 0; i < 24; i++) {
		static uint8_t small[1500];
		char p[32];

		snprintf(p, sizeof(p), "/d1/s%02u", i);
		gen(small, sizeof(small), 300 + i);
		CHECK_RC(r4_create(db, p, 0644, 0, 0));
		CHECK_RC(r4_write(db, p, 0, small, sizeof(small)));
	}
	r4_close(db);
	CHECK_RC(open_over(base, false, &db, NULL));
	before = snap(db);
	r4_close(db);

	/* a clean pass: its writes */
	CHECK_RC(r4_io_mem_new(8u << 20, &work));
	copy_into(work, base);
	CHECK_RC(open_over(work, true, &db, &fw));
	r4_io_fault_stats(fw, &a);
	CHECK_RC(r4_repack(db, "/", &o, &st));
	r4_io_fault_stats(fw, &b);
	r4_close(db);
	uint64_t writes = b.fs_writes - a.fs_writes;
	CHECK(st.moved >= 3 && st.commits >= 3 && st.nodes_moved > 0);

	for (uint64_t k = 1; k <= writes + 2; k++)
		for (unsigned v = 0; v < 2; v++) {
			struct r4_check_result res;
			char *now;

			copy_into(work, base);
			quiet_opens = 1;
			CHECK_RC(open_over(work, true, &db, &fw));
			r4_io_fault_crash_at(fw, k, seed + k * 7 + v, v);
			(void)r4_repack(db, "/", &o, &st);	/* fails once the power is cut */
			r4_close(db);
			db = NULL;
			if (open_over(work, true, &db, NULL)) {	/* replays */
				bad++;
				quiet_opens = 0;
				continue;
			}
			quiet_opens = 0;
			now = snap(db);
			if (!now || strcmp(now, before))
				bad++, fprintf(stderr, "cut after write %llu (%u): the objects differ\n",
					       (unsigned long long)k, v);
			free(now);
			r4_close(db);
			db = NULL;
			CHECK_RC(open_over(work, false, &db, NULL));
			if (!db || r4_check(db, NULL, &res) || res.problems)
				bad++, fprintf(stderr, "cut after write %llu (%u): r4 check not clean\n",
					       (unsigned long long)k, v);
			r4_close(db);
			if (++states % 23 == 1) {
				char cut[160];
				int f;

				snprintf(cut, sizeof(cut), "%s/cut.img", dir);
				CHECK_RC(r4_io_mem_save(work, cut));
				if ((f = t_fsck(cut)) == 0)
					bad++, fprintf(stderr, "cut after write %llu (%u): fsck.reiser4: "
						       "see %s.fsck\n", (unsigned long long)k, v, cut);
				fscked += f == 1;
			}
		}
	printf("crash: a %spass of %llu writes (%llu commits, %llu nodes moved) cut after each: "
	       "%zu states, fsck.reiser4 on %zu, %zu bad\n", compact ? "compacting " : "",
	       (unsigned long long)writes,
	       (unsigned long long)st.commits, (unsigned long long)st.nodes_moved, states, fscked,
	       bad);
	CHECK_EQ(bad, 0);
	free(before);
	r4_io_close(work);
	r4_io_close(base);
}

int main(void)
{
	seed = t_seed();
	snprintf(dir, sizeof(dir), "%s/r4-repack.XXXXXX", t_tmp());
	if (!mkdtemp(dir))
		return 2;
	test_passes();
	test_no_room();
	test_pieces();
	test_twigs();
	test_crash(false);
	test_crash(true);
	model_reset();
	if (!getenv("R4_KEEP"))
		t_rmdir(dir);
	return T_DONE();
}
