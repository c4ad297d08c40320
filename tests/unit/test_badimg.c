/*
 * test_badimg.c - damaged images (issue 2): open and every read must fail
 * cleanly, naming what is wrong and which block, never crash or hang, and
 * a read-write open must not write to a damaged image.
 *
 * The fixture: r4_mkfs makes a node40 and a node41 image; the public API
 * fills each with a few directories, small tail files, extent files, a
 * symlink and thousands of small files in /many so the tree has height 3
 * (a root above twigs above leaves).  The test then walks each image's
 * tree itself, from the format super block's root pointer (node header and
 * item header layout of node.h, item ids of item.h), to find the blocks to
 * damage.
 *
 * Each case copies the image, changes exactly one structure by editing
 * bytes, and runs its checks in a forked child with an alarm() watchdog,
 * so a crash, a sanitizer report, a leak or a hang becomes a failure of
 * that case alone.  The child opens the copy read-only and read-write;
 * whichever open succeeds is followed by a stat of every known path, a
 * read of every file, a readlink of the symlink and a readdir of every
 * directory.  Each result must be 0 (with the right data) or the case's
 * errno (-EUCLEAN structure, -EBADMSG checksum, -EIO or -EUCLEAN for a
 * truncated image, -EINVAL for an unsupported block size); the damage must
 * be noticed; the log callback must have named the damaged block; and the
 * image file must be byte-identical after the read-write attempt.
 *
 * Last, a fuzz loop flips one random byte of one tree node per run (node40:
 * anything but a crash or hang is fine; node41: every flip must be caught
 * as -EBADMSG or -EUCLEAN, never wrong data).  R4_SEED replays it (the
 * default seed is fixed); R4_FUZZ sets the number of node40 flips (8; make check-long: 200;
 * node41 gets a quarter as many); R4_KEEP=1 keeps the two pristine images.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "format.h"
#include "item.h"
#include "node.h"
#include "t.h"

#define BS 4096u
#define IMG_SIZE (8ull << 20)
#define CASE_TIMEOUT 120
#define FUZZ_TIMEOUT 60
#define NOBLK UINT64_MAX

/* ================================ fixture ================================ */

struct fent {
	char path[40];
	uint32_t type;		/* S_IFREG, S_IFDIR, S_IFLNK */
	uint32_t size;		/* file bytes, symlink length, or directory entries incl. . and .. */
	unsigned id;		/* seeds the content */
};

static struct fent *ents;
static size_t nents, capents;
static char tmpdir[256];
static const char *link_target = "d1/a.txt";

static struct fent *add_ent(const char *path, uint32_t type, uint32_t size)
{
	if (nents == capents) {
		capents = capents ? capents * 2 : 1024;
		ents = realloc(ents, capents * sizeof(*ents));
	}
	struct fent *e = &ents[nents];
	snprintf(e->path, sizeof(e->path), "%s", path);
	e->type = type;
	e->size = type == S_IFDIR ? 2 : size;
	e->id = (unsigned)nents++;
	return e;
}

static struct fent *find_ent(const char *path)
{
	for (size_t i = 0; i < nents; i++)
		if (!strcmp(ents[i].path, path))
			return &ents[i];
	return NULL;
}

/* Count one more entry in the directory holding path. */
static void count_in_parent(const char *path)
{
	char par[40];
	const char *s = strrchr(path, '/');

	if (s == path)
		return;		/* the root is not in the list */
	snprintf(par, sizeof(par), "%.*s", (int)(s - path), path);
	find_ent(par)->size++;
}

static uint8_t content_byte(unsigned id, size_t j)
{
	return (uint8_t)(id * 31u + j * 7u + (j >> 9) * 13u);
}

static void fill_content(unsigned id, uint8_t *buf, size_t n)
{
	for (size_t j = 0; j < n; j++)
		buf[j] = content_byte(id, j);
}

static int mk_dir(r4_db *db, const char *path)
{
	add_ent(path, S_IFDIR, 0);
	count_in_parent(path);
	return r4_mkdir(db, path, S_IFDIR | 0755, 0, 0);
}

static int mk_file(r4_db *db, const char *path, uint32_t size)
{
	struct fent *e = add_ent(path, S_IFREG, size);
	uint8_t *buf = malloc(size + 1);
	int rc;

	count_in_parent(path);
	fill_content(e->id, buf, size);
	rc = r4_create(db, path, S_IFREG | 0644, 0, 0);
	if (!rc && size)
		rc = r4_write(db, path, 0, buf, size);
	free(buf);
	return rc;
}

static int populate_small(r4_db *db)
{
	static const struct { const char *p; int size; } t[] = {
		{"/d1", -1}, {"/d1/d2", -1}, {"/d1/d2/d3", -1}, {"/etc", -1}, {"/many", -1},
		{"/small", 1}, {"/d1/a.txt", 5}, {"/d1/d2/b", 300}, {"/d1/d2/d3/c", 3000},
		{"/etc/conf", 2000}, {"/mid", 20000}, {"/big", 100000},
	};
	int rc = 0;

	for (size_t i = 0; i < R4_ARRAY_SIZE(t) && !rc; i++)
		rc = t[i].size < 0 ? mk_dir(db, t[i].p) : mk_file(db, t[i].p, (uint32_t)t[i].size);
	if (!rc) {
		add_ent("/link", S_IFLNK, (uint32_t)strlen(link_target));
		rc = r4_symlink(db, link_target, "/link", 0, 0);
	}
	return rc;
}

/* n more files in /many: every fourth holds 16 bytes, the rest are empty. */
static int populate_many(r4_db *db, unsigned from, unsigned n)
{
	char p[40];
	int rc = 0;

	for (unsigned i = from; i < from + n && !rc; i++) {
		snprintf(p, sizeof(p), "/many/f%05u", i);
		rc = mk_file(db, p, i % 4 ? 0 : 16);
	}
	return rc;
}

/* Fill a fresh image until its tree has height 3.  Returns 0 or an errno. */
static int build_image(const char *img, bool node41)
{
	struct r4_mkfs_opts mo;
	struct r4_open_opts oo = {.rw = true};
	struct r4_info info;
	r4_db *db;
	unsigned made = 0;
	int rc;

	r4_mkfs_defaults(&mo);
	mo.node41 = node41;
	mo.mtime = 1700000000;
	mo.mkfs_id = node41 ? 0x41414141u : 0x40404040u;
	if ((rc = r4_mkfs(img, IMG_SIZE, &mo)) || (rc = r4_open(img, &oo, &db)))
		return rc;
	nents = 0;
	rc = r4_begin(db);
	if (!rc)
		rc = populate_small(db);
	while (!rc && made < 40000) {
		rc = populate_many(db, made, 1000);
		made += 1000;
		if (!rc && !(rc = r4_commit(db)) && !(rc = r4_info(db, &info)) && info.height >= 3 &&
		    made >= 3000)
			break;
		if (!rc)
			rc = r4_begin(db);
	}
	if (r4_in_txn(db))
		r4_abort(db);
	r4_close(db);
	return rc;
}

/* ============================ image buffers ============================== */

/* Image buffers are mmapped, not malloced: LeakSanitizer, at the exit of
 * every forked child, then has megabytes less heap to scan. */
struct image {
	uint8_t *b;
	size_t len, maplen;
};

static uint8_t *img_alloc(struct image *im, size_t len)
{
	void *p = mmap(NULL, len ? len : 1, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
		       -1, 0);

	im->b = p == MAP_FAILED ? NULL : p;
	im->len = len;
	im->maplen = len ? len : 1;
	return im->b;
}

static void img_free(struct image *im)
{
	if (im->b)
		munmap(im->b, im->maplen);
	im->b = NULL;
}

static int load_file(const char *path, struct image *im)
{
	struct stat st;
	int fd = open(path, O_RDONLY);

	if (fd < 0 || fstat(fd, &st)) {
		if (fd >= 0)
			close(fd);
		return -errno;
	}
	if (!img_alloc(im, (size_t)st.st_size)) {
		close(fd);
		return -ENOMEM;
	}
	ssize_t n = pread(fd, im->b, im->len, 0);
	close(fd);
	if (n == (ssize_t)im->len)
		return 0;
	img_free(im);
	return -EIO;
}

static int save_file(const char *path, const uint8_t *b, size_t len)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = write(fd, b, len);
	close(fd);
	return n == (ssize_t)len ? 0 : -EIO;
}

/* A 64-bit hash of a whole file and its size: "was it modified".  FNV-1a
 * over 64-bit words, read in chunks: cheap enough to run several times per
 * case in the sanitizer build. */
/* The status block (21) is left out of the sums of read-write sessions: the
 * engine marks a volume damaged there when it meets a structure error. */
#define STATUS_OFF (21u * 4096)

static uint64_t sum_of(const char *path, bool skip_status)
{
	static uint8_t buf[1 << 20];
	uint64_t h = 0xcbf29ce484222325ull, total = 0;
	int fd = open(path, O_RDONLY);
	ssize_t n;

	if (fd < 0)
		return 0;
	while ((n = read(fd, buf, sizeof(buf))) > 0) {
		if (skip_status && total <= STATUS_OFF && STATUS_OFF + 4096 <= total + (uint64_t)n)
			memset(buf + (STATUS_OFF - total), 0, 4096);
		for (ssize_t i = 0; i < n; i += 8) {
			uint64_t w = 0;

			memcpy(&w, buf + i, (size_t)R4_MIN(n - i, (ssize_t)8));
			h = (h ^ w) * 0x100000001b3ull;
		}
		total += (uint64_t)n;
	}
	close(fd);
	return h ^ total;
}

static uint64_t file_sum(const char *path)
{
	return sum_of(path, false);
}

/* Does the status block of the image say "damaged"? */
static bool marked_damaged(const char *path)
{
	uint8_t b[24] = {0};
	int fd = open(path, O_RDONLY);
	bool yes = fd >= 0 && pread(fd, b, sizeof(b), STATUS_OFF) == (ssize_t)sizeof(b) &&
		   !memcmp(b, "ReiSeR4StATusBl", 16) && (b[16] & R4_ST_DAMAGED);

	if (fd >= 0)
		close(fd);
	return yes;
}

static uint8_t *blkp(const struct image *im, uint64_t blk)
{
	return im->b + blk * BS;
}

/* ===================== our own walk of the tree ========================= */

struct tnode {
	uint64_t blk;
	unsigned level, nr;
};

struct tree {
	uint64_t root, block_count;
	unsigned height, hdr;
	struct tnode *n;
	size_t nn, cap;
	unsigned extents;	/* extent items seen on the twig level */
};

static void tree_add(struct tree *t, uint64_t blk, unsigned level, unsigned nr)
{
	if (t->nn == t->cap) {
		t->cap = t->cap ? t->cap * 2 : 256;
		t->n = realloc(t->n, t->cap * sizeof(*t->n));
	}
	t->n[t->nn++] = (struct tnode){blk, level, nr};
}

/* Depth first, children in key order; trusts only a pristine image. */
static int scan(const struct image *im, struct tree *t, uint64_t blk, unsigned level)
{
	if (blk >= t->block_count || (blk + 1) * BS > im->len || level == 0)
		return -EUCLEAN;
	const uint8_t *b = blkp(im, blk);
	unsigned nr = r4_node_nr(b);

	if (r4_node_level(b) != level)
		return -EUCLEAN;
	tree_add(t, blk, level, nr);
	for (unsigned i = 0; i < nr && level > R4_LEVEL_LEAF; i++) {
		const uint8_t *ih = r4_node_ih_c(b, BS, i);
		unsigned pid = r4_le16_get(ih + R4_IH_PID), off = r4_le16_get(ih + R4_IH_OFFSET);
		int rc;

		if (pid == R4_ITEM_EXTENT40)
			t->extents++;
		if (pid == R4_ITEM_NODEPTR40 && (rc = scan(im, t, r4_le64_get(b + off), level - 1)))
			return rc;
	}
	return 0;
}

static int tree_load(const struct image *im, struct tree *t)
{
	const uint8_t *fsb = blkp(im, R4_FSB_BLOCK(BS));

	memset(t, 0, sizeof(*t));
	t->block_count = r4_le64_get(fsb + R4_FSB_BLOCK_COUNT);
	t->root = r4_le64_get(fsb + R4_FSB_ROOT);
	t->height = r4_le16_get(fsb + R4_FSB_HEIGHT);
	t->hdr = r4_node_hdr_size(r4_le32_get(fsb + R4_FSB_NODE_PID));
	return scan(im, t, t->root, t->height);
}

/* The k-th node (in walk order) of a level, k < 0 counting from the end. */
static const struct tnode *nth_at(const struct tree *t, unsigned level, long k)
{
	size_t cnt = 0, want;

	for (size_t i = 0; i < t->nn; i++)
		cnt += t->n[i].level == level;
	if (!cnt)
		return NULL;
	want = k < 0 ? cnt - (size_t)-k : (size_t)k;
	if (k == LONG_MAX)
		want = cnt / 2;
	for (size_t i = 0; i < t->nn; i++)
		if (t->n[i].level == level && want-- == 0)
			return &t->n[i];
	return NULL;
}

#define MIDDLE LONG_MAX

/* The middle node pointer of a node at or above the twig level. */
static unsigned mid_ptr(const uint8_t *b)
{
	unsigned nr = r4_node_nr(b), best = 0;

	for (unsigned i = 0; i < nr; i++)
		if (r4_node_item_pid(b, BS, i) == R4_ITEM_NODEPTR40 && (best = i) >= nr / 2)
			break;
	return best;
}

static uint8_t *ptr_body(uint8_t *b, unsigned i)
{
	return b + r4_node_item_off(b, BS, i);
}

/* ========================= checks in the child ========================== */

static char logbuf[1 << 16];
static size_t loglen;
static const char *case_name = "";

static void log_cb(void *ctx, int level, const char *msg)
{
	size_t n = strlen(msg);

	(void)ctx;
	(void)level;
	if (loglen + n + 2 >= sizeof(logbuf))
		return;
	memcpy(logbuf + loglen, msg, n);
	loglen += n;
	logbuf[loglen++] = '\n';
	logbuf[loglen] = 0;
}

static void log_reset(void)
{
	loglen = 0;
	logbuf[0] = 0;
}

/* Does some log line say "block B" (not "block B7")? */
static bool log_names_block(uint64_t blk)
{
	char pat[40];
	int n = snprintf(pat, sizeof(pat), "block %llu", (unsigned long long)blk);

	for (const char *p = logbuf; (p = strstr(p, pat)); p++)
		if (p[n] < '0' || p[n] > '9')
			return true;
	return false;
}

static void verdict(bool ok, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void verdict(bool ok, const char *fmt, ...)
{
	va_list ap;

	if (ok) {
		t_pass++;
		return;
	}
	t_fail++;
	fprintf(stderr, "FAILED: %s: ", case_name);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

static void show_log(void)
{
	const char *p = logbuf;

	fprintf(stderr, "  log (%zu bytes), first lines:\n", loglen);
	for (int i = 0; i < 4 && *p; i++) {
		const char *e = strchr(p, '\n');
		int n = e ? (int)(e - p) : (int)strlen(p);

		fprintf(stderr, "  | %.*s\n", n, p);
		p += n + (e != NULL);
	}
}

/* What a case expects. */
struct expect {
	const char *name;
	int err, err2;		/* acceptable errnos (err2 0: none) */
	uint64_t blk;		/* the block the log must name, NOBLK: none */
	bool fuzz;		/* any error is fine, data may be wrong (node40 fuzz) */
	bool strict_fuzz;	/* node41 fuzz: the flip must be caught */
};

/* Which errnos the calls returned. */
static const int hist_errno[] = {EUCLEAN, EBADMSG, EIO, ENOENT, ENOTDIR, EINVAL, ENOMEM, 0};
static const char *const hist_name[] = {"EUCLEAN", "EBADMSG", "EIO", "ENOENT", "ENOTDIR",
					"EINVAL", "ENOMEM", "other"};
#define NHIST R4_ARRAY_SIZE(hist_errno)

static void hist_add(unsigned *h, int rc)
{
	size_t k = 0;

	while (hist_errno[k] && -rc != hist_errno[k])
		k++;
	h[k]++;
}

static void hist_print(const unsigned *h)
{
	for (size_t k = 0; k < NHIST; k++)
		if (h[k])
			printf(" %s %u", hist_name[k], h[k]);
}

struct walk {
	const struct expect *x;
	unsigned ops, errors, unexpected;
	unsigned hist[NHIST];
	char first_bad[200];
};

static void bad(struct walk *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void bad(struct walk *w, const char *fmt, ...)
{
	va_list ap;

	if (w->unexpected++)
		return;
	va_start(ap, fmt);
	vsnprintf(w->first_bad, sizeof(w->first_bad), fmt, ap);
	va_end(ap);
}

static bool allowed(const struct expect *x, int rc)
{
	if (x->fuzz)
		return true;
	if (x->strict_fuzz)
		return rc == -EBADMSG || rc == -EUCLEAN;
	return rc == x->err || (x->err2 && rc == x->err2);
}

/* Record one call's result; true if it succeeded. */
static bool note(struct walk *w, const char *what, const char *path, int rc)
{
	w->ops++;
	if (!rc)
		return true;
	w->errors++;
	hist_add(w->hist, rc);
	if (!allowed(w->x, rc))
		bad(w, "%s %s: %d (%s)", what, path, rc, r4_strerror(rc));
	return false;
}

static bool data_may_differ(const struct walk *w)
{
	return w->x->fuzz;
}

static void walk_file(r4_db *db, struct walk *w, const struct fent *e)
{
	size_t cap = (size_t)e->size + 4096, total = 0, got;
	uint8_t *buf = malloc(cap);
	int rc = 0;

	while (total < cap) {
		size_t want = R4_MIN((size_t)65536, cap - total);

		if ((rc = r4_read(db, e->path, total, buf + total, want, &got)))
			break;
		total += got;
		if (got < want)
			break;
	}
	if (note(w, "read", e->path, rc) && !data_may_differ(w)) {
		bool same = total == e->size;
		for (size_t j = 0; same && j < total; j++)
			same = buf[j] == content_byte(e->id, j);
		if (!same)
			bad(w, "read %s: wrong data (%zu bytes, want %u)", e->path, total, e->size);
	}
	free(buf);
}

struct dctx {
	unsigned n, cap;
};

static int count_fn(void *ctx, const char *name, size_t len, uint64_t ino, uint32_t type)
{
	struct dctx *d = ctx;

	(void)name;
	(void)len;
	(void)ino;
	(void)type;
	return ++d->n > d->cap;		/* stop a runaway listing */
}

static void walk_dir(r4_db *db, struct walk *w, const char *path, unsigned want)
{
	struct r4_dirpos pos = {0};
	struct dctx d = {0, want + 1000};
	int rc = r4_readdir(db, path, &pos, count_fn, &d);

	if (d.n > d.cap)
		bad(w, "readdir %s: more than %u entries (runaway)", path, d.cap);
	else if (note(w, "readdir", path, rc) && d.n != want && !data_may_differ(w))
		bad(w, "readdir %s: %u entries, want %u", path, d.n, want);
}

static void walk_one(r4_db *db, struct walk *w, const struct fent *e)
{
	struct r4_stat st;
	bool ok = note(w, "stat", e->path, r4_stat(db, e->path, &st));

	if (ok && !data_may_differ(w) && ((st.mode & S_IFMT) != e->type ||
					  (e->type != S_IFDIR && st.size != e->size)))
		bad(w, "stat %s: mode %o size %llu, want type %o size %u", e->path, st.mode,
		    (unsigned long long)st.size, e->type, e->size);
	if (e->type == S_IFREG) {
		walk_file(db, w, e);
	} else if (e->type == S_IFDIR) {
		walk_dir(db, w, e->path, e->size);
	} else {
		char buf[64];
		size_t len = 0;
		int rc = r4_readlink(db, e->path, buf, sizeof(buf), &len);

		if (note(w, "readlink", e->path, rc) && !data_may_differ(w) &&
		    (len != e->size || memcmp(buf, link_target, len)))
			bad(w, "readlink %s: wrong target", e->path);
	}
}

static void walk_all(r4_db *db, struct walk *w)
{
	struct r4_stat st;
	unsigned root_entries = 2;

	for (size_t i = 0; i < nents; i++)
		root_entries += strchr(ents[i].path + 1, '/') == NULL;
	note(w, "stat", "/", r4_stat(db, "/", &st));
	walk_dir(db, w, "/", root_entries);
	for (size_t i = 0; i < nents; i++)
		walk_one(db, w, &ents[i]);
}

/* In a read-write db: a create in every directory, aborted, may fail only
 * with the case's errno. */
static void probe_writes(r4_db *db, struct walk *w)
{
	char p[80];

	for (size_t i = 0; i < nents; i++) {
		if (ents[i].type != S_IFDIR)
			continue;
		snprintf(p, sizeof(p), "%s/zz-probe", ents[i].path);
		if (r4_begin(db))
			return;
		note(w, "create", p, r4_create(db, p, S_IFREG | 0644, 0, 0));
		r4_abort(db);
	}
}

static const char *rcname(int rc)
{
	static char buf[8][48];
	static unsigned k;
	char *b = buf[k++ % 8];

	switch (-rc) {
	case 0: return "ok";
	case EUCLEAN: return "-EUCLEAN";
	case EBADMSG: return "-EBADMSG";
	case EIO: return "-EIO";
	case EINVAL: return "-EINVAL";
	case EMEDIUMTYPE: return "-EMEDIUMTYPE";
	case EROFS: return "-EROFS";
	case ENOENT: return "-ENOENT";
	default: snprintf(b, 48, "%d", rc); return b;
	}
}

/* What a child hands back to the parent (MAP_SHARED). */
struct shared {
	int pass, fail, done, noticed;
	int cur;		/* fuzz: the flip under test, -1 none */
	unsigned opens_refused, walk_hist[NHIST];
};

static struct shared *shm;

/* The fuzz summary: how opens and calls failed. */
static void fuzz_account(int open_rc, const struct walk *w)
{
	if (!w->x->fuzz && !w->x->strict_fuzz)
		return;
	shm->opens_refused += open_rc != 0;
	for (size_t k = 0; k < NHIST; k++)
		shm->walk_hist[k] += w->hist[k];
}

/* One open (ro or rw) of a damaged image and everything after it.
 * Returns the open's rc; *noticed tells whether the damage was seen. */
static int check_open(const char *img, const struct expect *x, bool rw, bool *noticed)
{
	struct r4_open_opts oo = {.rw = rw, .log = log_cb};
	const char *mode = rw ? "read-write" : "read-only";
	struct walk w = {.x = x};
	uint64_t sum0 = rw ? sum_of(img, true) : 0;
	bool was_marked = marked_damaged(img);
	r4_db *db = NULL;
	int rc;

	log_reset();
	rc = r4_open(img, &oo, &db);
	if (rc) {
		*noticed = true;
		verdict(allowed(x, rc), "%s open: %s (%s), want %s%s%s", mode, rcname(rc),
			r4_strerror(rc), rcname(x->err), x->err2 ? " or " : "",
			x->err2 ? rcname(x->err2) : "");
	} else {
		if (rw)
			verdict(sum_of(img, true) == sum0, "read-write open wrote to the damaged image");
		walk_all(db, &w);
		if (rw)
			probe_writes(db, &w);
		r4_close(db);
		*noticed = w.errors > 0;
		verdict(!w.unexpected, "%s: %u of %u calls went wrong, first: %s", mode,
			w.unexpected, w.ops, w.first_bad);
		if (!x->fuzz && !x->strict_fuzz) {
			printf("  %s %s: %u calls, %u failed:", case_name, mode, w.ops, w.errors);
			hist_print(w.hist);
			printf("\n");
		}
	}
	fuzz_account(rc, &w);
	if (rw) {
		verdict(sum_of(img, true) == sum0, "the image changed across a read-write session "
			"that made no commit");
		/* a structure error met in the session marks the volume: the next
		 * read-write open is refused */
		if (!rc && !was_marked && (w.hist[0] || w.hist[1])) {	/* EUCLEAN, EBADMSG */
			r4_db *again = NULL;
			struct r4_open_opts o2 = {.rw = true, .log = log_cb};

			verdict(marked_damaged(img), "structure errors did not mark the status block");
			verdict(r4_open(img, &o2, &again) == -EROFS,
				"a marked volume opens read-write");
			r4_close(again);
		}
	}
	if (!x->fuzz) {
		verdict(*noticed, "%s: the damage went unnoticed (open and every read succeeded)",
			mode);
		if (*noticed && x->blk != NOBLK && !log_names_block(x->blk)) {
			verdict(false, "%s: no log line names block %llu", mode,
				(unsigned long long)x->blk);
			show_log();
		}
	}
	return rc;
}

static void check_damaged(const char *img, const struct expect *x)
{
	bool seen_ro = false, seen_rw = false;
	int ro = check_open(img, x, false, &seen_ro);
	int rw = check_open(img, x, true, &seen_rw);

	(void)seen_ro;
	(void)seen_rw;
	printf("  %-34s ro open %-9s rw open %s\n", x->name, rcname(ro), rcname(rw));
}

/* The status block says "damaged": read-only works and sees everything;
 * read-write is refused with -EROFS and a hint how to fix it. */
static void check_status_damaged(const char *img, const struct expect *x)
{
	struct r4_open_opts oo = {.log = log_cb};
	struct walk w = {.x = x};
	uint64_t sum0 = file_sum(img);
	struct r4_info info;
	r4_db *db = NULL;
	int rc;

	log_reset();
	rc = r4_open(img, &oo, &db);
	verdict(rc == 0, "read-only open: %s (%s), want ok", rcname(rc), r4_strerror(rc));
	if (!rc) {
		walk_all(db, &w);
		verdict(w.errors == 0, "read-only walk: %u errors, first: %s", w.errors,
			w.first_bad);
		verdict(!r4_info(db, &info) && info.status == R4_ST_DAMAGED,
			"r4_info does not report status 2");
		r4_close(db);
	}
	log_reset();
	oo.rw = true;
	db = NULL;
	rc = r4_open(img, &oo, &db);
	verdict(rc == -EROFS, "read-write open: %s (%s), want -EROFS", rcname(rc), r4_strerror(rc));
	r4_close(db);
	verdict(strstr(logbuf, "fsck") != NULL, "the refusal does not say how to fix it: '%s'",
		logbuf);
	verdict(file_sum(img) == sum0, "read-write open attempt changed the image");
	printf("  %-34s ro open ok, rw open %s\n", x->name, rcname(rc));
}

/* ============================ the isolation ============================= */


/* Run fn in a child with a watchdog; its stderr goes to a file that is shown
 * when something failed.  True if the child died (crash, hang, sanitizer). */
static bool isolated(const char *name, unsigned timeout, void (*fn)(const void *), const void *arg)
{
	char errpath[320];
	pid_t pid;
	int st = 0;

	snprintf(errpath, sizeof(errpath), "%s/child.err", tmpdir);
	*shm = (struct shared){.cur = -1};
	fflush(stdout);
	fflush(stderr);
	if ((pid = fork()) < 0) {
		perror("fork");
		t_fail++;
		return true;
	}
	if (pid == 0) {
		int fd = open(errpath, O_WRONLY | O_CREAT | O_TRUNC, 0644);

		if (fd >= 0) {
			dup2(fd, 2);
			close(fd);
		}
		alarm(timeout);
		t_pass = t_fail = 0;
		case_name = name;
		fn(arg);
		shm->pass = t_pass;
		shm->fail = t_fail;
		shm->done = 1;
		fflush(stdout);
		fflush(stderr);
		exit(0);	/* not _exit: LeakSanitizer looks at the error paths */
	}
	waitpid(pid, &st, 0);
	t_pass += shm->pass;
	t_fail += shm->fail;
	bool abnormal = !WIFEXITED(st) || WEXITSTATUS(st) != 0 || !shm->done;
	if (abnormal) {
		t_fail++;
		if (WIFSIGNALED(st) && WTERMSIG(st) == SIGALRM)
			fprintf(stderr, "FAILED: %s: hang: no result within %u s\n", name, timeout);
		else if (WIFSIGNALED(st))
			fprintf(stderr, "FAILED: %s: killed by signal %d\n", name, WTERMSIG(st));
		else
			fprintf(stderr, "FAILED: %s: exit status %d (sanitizer or leak report "
				"below?)\n", name, WIFEXITED(st) ? WEXITSTATUS(st) : -1);
	}
	if (abnormal || shm->fail) {
		struct image im;

		if (!load_file(errpath, &im)) {
			const char *b = (const char *)im.b;
			size_t head = R4_MIN(im.len, (size_t)4000), tail = im.len - head;

			if (tail > 8000)	/* a sanitizer report is at the end */
				tail = 8000;
			fprintf(stderr, "---- stderr of %s ----\n%.*s%s%.*s----\n", name, (int)head, b,
				head + tail < im.len ? "\n[...]\n" : "", (int)tail,
				b + im.len - tail);
			img_free(&im);
		}
	}
	return abnormal;
}

/* ================================ cases ================================= */

struct dcase {
	struct expect x;
	/* Damage a copy and fill in x (errno, the block the log must name);
	 * false: the image has no node to damage this way. */
	bool (*damage)(struct image *im, const struct tree *t, long arg, struct expect *x);
	long arg;
	bool node41;		/* run on the node41 image */
	void (*check)(const char *img, const struct expect *x);
};

static void put16(uint8_t *p, unsigned v) { r4_le16_put(p, (uint16_t)v); }

/* Reseal a node41 node after a structural edit, so the structure check (not
 * the checksum) is what must catch it.  No-op for node40. */
static void reseal(uint8_t *b)
{
	r4_node_seal(b, BS);
}

static bool d_truncate(struct image *im, const struct tree *t, long arg, struct expect *x)
{
	(void)t;
	if (arg == -1)
		im->len /= 2;
	else if (arg == -2)
		im->len -= BS;
	else
		im->len = (size_t)arg;
	x->err = -EUCLEAN;
	x->err2 = -EIO;
	/* the super block that says the volume is bigger than the image; or,
	 * too short to hold a master super block, no Reiser4 volume at all
	 * (said by the error alone) */
	x->blk = R4_FSB_BLOCK(BS);
	if (im->len < R4_MSB_OFFSET + BS) {
		x->err = -EMEDIUMTYPE;
		x->err2 = 0;
		x->blk = NOBLK;
	}
	return true;
}

static bool d_msb_magic(struct image *im, const struct tree *t, long arg, struct expect *x)
{
	(void)t;
	(void)arg;
	im->b[R4_MSB_OFFSET + R4_MSB_MAGIC + 2] ^= 0x20;	/* "ReIsEr4" -> "Reisr4" case */
	x->err = -EMEDIUMTYPE;	/* no Reiser4 volume: said by the error alone */
	x->blk = NOBLK;
	return true;
}

static bool d_fsb_magic(struct image *im, const struct tree *t, long arg, struct expect *x)
{
	(void)t;
	(void)arg;
	blkp(im, R4_FSB_BLOCK(BS))[R4_FSB_MAGIC + 4] ^= 0x01;
	x->err = -EUCLEAN;
	x->blk = R4_FSB_BLOCK(BS);
	return true;
}

static bool d_blocksize(struct image *im, const struct tree *t, long arg, struct expect *x)
{
	(void)t;
	put16(im->b + R4_MSB_OFFSET + R4_MSB_BLKSIZE, (unsigned)arg);
	x->err = -EINVAL;	/* r4.h: "-EINVAL for an unsupported block size" */
	x->blk = R4_MSB_BLOCK(BS);
	return true;
}

/* arg 0: root past the end; 1: root inside the fixed blocks; 2: height 0;
 * 3: height 200; 4: block count far beyond the image. */
static bool d_fsb_field(struct image *im, const struct tree *t, long arg, struct expect *x)
{
	uint8_t *fsb = blkp(im, R4_FSB_BLOCK(BS));

	switch (arg) {
	case 0: r4_le64_put(fsb + R4_FSB_ROOT, t->block_count + 5); break;
	case 1: r4_le64_put(fsb + R4_FSB_ROOT, 3); break;
	case 2: put16(fsb + R4_FSB_HEIGHT, 0); break;
	case 3: put16(fsb + R4_FSB_HEIGHT, 200); break;
	default: r4_le64_put(fsb + R4_FSB_BLOCK_COUNT, t->block_count * 1000); break;
	}
	x->err = -EUCLEAN;
	x->blk = R4_FSB_BLOCK(BS);
	return true;
}

/* arg 0: a data byte; 1: the checksum itself; 2: bit 0 (block 0 used)
 * cleared, checksum recomputed (a structure error, not a checksum one). */
static bool d_bitmap(struct image *im, const struct tree *t, long arg, struct expect *x)
{
	uint8_t *b = blkp(im, R4_BITMAP0_BLOCK(BS));

	(void)t;
	x->err = arg == 2 ? -EUCLEAN : -EBADMSG;
	x->blk = R4_BITMAP0_BLOCK(BS);
	if (arg == 0)
		b[4 + 100] ^= 0x10;
	else if (arg == 1)
		b[1] ^= 0x01;
	else {
		b[4] &= (uint8_t)~1u;
		r4_le32_put(b, r4_adler32(b + 4, BS - 4));
	}
	return true;
}

static bool d_status(struct image *im, const struct tree *t, long arg, struct expect *x)
{
	(void)t;
	(void)arg;
	r4_le64_put(blkp(im, R4_STATUS_BLOCK(BS)) + R4_ST_STATUS, R4_ST_DAMAGED);
	x->err = -EROFS;
	x->blk = NOBLK;
	return true;
}

/* The leftmost node of a level, or: leaves the middle one, twigs the
 * fullest (so a twig case has neighbours to swap and pointers to spare). */
static const struct tnode *pick(const struct tree *t, unsigned level, bool first)
{
	const struct tnode *best = NULL;

	if (first || level == R4_LEVEL_LEAF)
		return nth_at(t, level, first ? 0 : MIDDLE);
	for (size_t i = 0; i < t->nn; i++)
		if (t->n[i].level == level && (!best || t->n[i].nr > best->nr))
			best = &t->n[i];
	return best;
}

/* node41: flip one bit of a leaf body (arg 0: the middle leaf, 1: the
 * leftmost, which open itself reads; 2: the checksum field of the root). */
static bool d_csum(struct image *im, const struct tree *t, long arg, struct expect *x)
{
	const struct tnode *n = arg == 2 ? nth_at(t, t->height, 0) : pick(t, 1, arg == 1);
	uint8_t *b;

	if (!n)
		return false;
	b = blkp(im, n->blk);
	if (arg == 2)
		b[R4_NH41_CSUM + 1] ^= 0x04;
	else
		b[r4_node_item_off(b, BS, 0) + 3] ^= 0x08;
	x->err = -EBADMSG;
	x->blk = n->blk;
	return true;
}

/* Body offset of the middle item of the middle leaf: arg 0 past the block,
 * 1 inside the node header (item 0), 2 past the free space start. */
static bool d_item_off(struct image *im, const struct tree *t, long arg, struct expect *x)
{
	const struct tnode *n = pick(t, 1, false);
	uint8_t *b;
	unsigned i;

	if (!n || n->nr < 3)
		return false;
	b = blkp(im, n->blk);
	i = arg == 1 ? 0 : n->nr / 2;
	uint8_t *ih = r4_node_ih(b, BS, i);
	put16(ih + R4_IH_OFFSET, arg == 0 ? 0xfff0 : arg == 1 ? t->hdr - 8
			   : r4_le16_get(b + R4_NH_FREE_START) + 64u);
	reseal(b);
	x->err = -EUCLEAN;
	x->blk = n->blk;
	return true;
}

/* Swap the keys of two neighbouring items: arg 0 in the middle leaf, 1 in
 * the middle twig. */
static bool d_key_order(struct image *im, const struct tree *t, long arg, struct expect *x)
{
	const struct tnode *n = pick(t, arg ? 2 : 1, false);
	uint8_t k[R4_KEY_SIZE], *b, *a, *c;

	if (!n || n->nr < 2)
		return false;
	b = blkp(im, n->blk);
	a = r4_node_ih(b, BS, n->nr / 2 - 1) + R4_IH_KEY;
	c = r4_node_ih(b, BS, n->nr / 2) + R4_IH_KEY;
	if (!memcmp(a, c, R4_KEY_SIZE))
		return false;
	memcpy(k, a, sizeof(k));
	memcpy(a, c, sizeof(k));
	memcpy(c, k, sizeof(k));
	reseal(b);
	x->err = -EUCLEAN;
	x->blk = n->blk;
	return true;
}

/* Item count of the middle leaf: arg 0 0xffff, 1 one more than there is. */
static bool d_count(struct image *im, const struct tree *t, long arg, struct expect *x)
{
	const struct tnode *n = pick(t, 1, false);
	uint8_t *b;

	if (!n)
		return false;
	b = blkp(im, n->blk);
	put16(b + R4_NH_NR_ITEMS, arg ? n->nr + 1 : 0xffff);
	reseal(b);
	x->err = -EUCLEAN;
	x->blk = n->blk;
	return true;
}

/* The middle node pointer of the middle twig (level 2) or the root (arg
 * >= 1000: level 3) gets child block arg % 1000, or the special values
 * -1: block_count + 5, -2: block_count, -3: UINT64_MAX, -4: the root,
 * -5: the node itself. */
static bool d_child(struct image *im, const struct tree *t, long arg, struct expect *x)
{
	unsigned level = arg >= 1000 || arg <= -1000 ? t->height : 2;
	const struct tnode *n = level == t->height ? nth_at(t, level, 0) : pick(t, 2, false);
	long v = arg >= 1000 ? arg - 1000 : arg <= -1000 ? arg + 1000 : arg;
	uint64_t to;
	uint8_t *b;

	if (!n || t->height < 3)
		return false;
	b = blkp(im, n->blk);
	to = v == -1 ? t->block_count + 5 : v == -2 ? t->block_count : v == -3 ? UINT64_MAX
	   : v == -4 ? t->root : v == -5 ? n->blk : (uint64_t)v;
	r4_le64_put(ptr_body(b, mid_ptr(b)), to);
	reseal(b);
	x->err = -EUCLEAN;
	/* the damaged block is the node holding the pointer: the log must name
	 * it (naming only the bogus target does not tell fsck what to fix) */
	x->blk = n->blk;
	return true;
}

/* ============================== the runs ================================ */

struct run_arg {
	const char *img;
	const struct expect *x;
	void (*check)(const char *img, const struct expect *x);
};

static void run_child(const void *p)
{
	const struct run_arg *a = p;

	a->check(a->img, a->x);
}

static void run_case(const struct image *base, const struct tree *t, const struct dcase *c)
{
	struct image im;
	struct expect x = c->x;
	char img[320];

	if (!img_alloc(&im, base->len)) {
		t_fail++;
		return;
	}
	memcpy(im.b, base->b, base->len);
	if (!c->damage(&im, t, c->arg, &x)) {
		printf("  %-34s not applicable to this image (no such node)\n", x.name);
		t_fail++;
		fprintf(stderr, "FAILED: %s: the fixture has no node to damage\n", x.name);
		img_free(&im);
		return;
	}
	snprintf(img, sizeof(img), "%s/case.img", tmpdir);
	if (save_file(img, im.b, im.len)) {
		t_fail++;
		fprintf(stderr, "FAILED: %s: cannot write %s\n", x.name, img);
	} else {
		struct run_arg a = {img, &x, c->check ? c->check : check_damaged};
		isolated(x.name, CASE_TIMEOUT, run_child, &a);
	}
	unlink(img);
	img_free(&im);
}

#define C(nm, fn, a) {.x = {.name = nm}, .damage = fn, .arg = a}
#define C41(nm, fn, a) {.x = {.name = nm}, .damage = fn, .arg = a, .node41 = true}

static const struct dcase cases[] = {
	C("truncated to half", d_truncate, -1),
	C("truncated by one block", d_truncate, -2),
	C("truncated to 70 KiB", d_truncate, 70 * 1024),
	C("truncated to 32 KiB", d_truncate, 32 * 1024),
	C("wrong master magic", d_msb_magic, 0),
	C("wrong format40 magic", d_fsb_magic, 0),
	C("block size 8192", d_blocksize, 8192),
	C("block size 1024", d_blocksize, 1024),
	C("block size 2048", d_blocksize, 2048),
	C("super: root past the end", d_fsb_field, 0),
	C("super: root in the fixed blocks", d_fsb_field, 1),
	C("super: tree height 0", d_fsb_field, 2),
	C("super: tree height 200", d_fsb_field, 3),
	C("super: block count too big", d_fsb_field, 4),
	C("bitmap: data byte (checksum)", d_bitmap, 0),
	C("bitmap: checksum field", d_bitmap, 1),
	C("bitmap: block 0 marked free", d_bitmap, 2),
	{.x = {.name = "status block: damaged"}, .damage = d_status, .check = check_status_damaged},
	C41("node41: leaf bit flip", d_csum, 0),
	C41("node41: leftmost leaf bit flip", d_csum, 1),
	C41("node41: root checksum field", d_csum, 2),
	C("leaf item offset past the block", d_item_off, 0),
	C("leaf item 0 offset in the header", d_item_off, 1),
	C("leaf item offset past free start", d_item_off, 2),
	C41("node41 sealed: item offset", d_item_off, 0),
	C("leaf keys out of order", d_key_order, 0),
	C("twig keys out of order", d_key_order, 1),
	C41("node41 sealed: keys out of order", d_key_order, 0),
	C("leaf item count 0xffff", d_count, 0),
	C("leaf item count +1", d_count, 1),
	C("twig child = block_count + 5", d_child, -1),
	C("twig child = block_count", d_child, -2),
	C("twig child = 2^64-1", d_child, -3),
	C("root child = block_count + 5", d_child, -1001),
	C("twig child = block 0", d_child, 0),
	C("twig child = block 1", d_child, 1),
	C("twig child = block 16 (master)", d_child, 16),
	C("twig child = block 17 (format)", d_child, 17),
	C("twig child = block 18 (bitmap)", d_child, 18),
	C("twig child = block 19 (j header)", d_child, 19),
	C("twig child = block 20 (j footer)", d_child, 20),
	C("twig child = block 21 (status)", d_child, 21),
	C("twig child = block 22 (backup)", d_child, 22),
	C41("node41 sealed: twig child = 17", d_child, 17),
	C("loop: twig child = the root", d_child, -4),
	C("loop: twig child = itself", d_child, -5),
	C("loop: root child = itself", d_child, -1005),
	C41("node41 sealed: root child = itself", d_child, -1005),
};

/* ================================= fuzz ================================= */

static unsigned long rng;

static unsigned rnd(unsigned n)
{
	rng = rng * 6364136223846793005UL + 1442695040888963407UL;
	return n ? (unsigned)((rng >> 33) % n) : 0;
}

struct flip {
	uint64_t blk;
	unsigned off, level;
	uint8_t v;
};

struct fuzz_arg {
	const char *img;
	int fd;
	const struct image *base;
	const struct flip *f;
	unsigned from, to;
	bool node41;
};

static void flip_name(char *buf, size_t n, bool node41, unsigned i, const struct flip *f)
{
	snprintf(buf, n, "fuzz %s #%u: block %llu (level %u) byte %u -> 0x%02x",
		 node41 ? "node41" : "node40", i, (unsigned long long)f->blk, f->level, f->off, f->v);
}

/* One flipped image: a read-only open and walk, then a read-write open that
 * must leave the file as it was. */
static bool fuzz_one(const char *img, const struct expect *x)
{
	struct r4_open_opts oo = {.rw = true, .log = log_cb};
	bool seen = false;
	uint64_t sum0;
	r4_db *db = NULL;
	int rc;

	check_open(img, x, false, &seen);
	sum0 = sum_of(img, true);
	rc = r4_open(img, &oo, &db);
	r4_close(db);
	verdict(sum_of(img, true) == sum0, "read-write open (rc %d) changed the image", rc);
	return seen;
}

/* A batch of flips in one child: flip, check, restore.  shm->cur says which
 * flip is under test when the child dies. */
static void fuzz_batch(const void *p)
{
	const struct fuzz_arg *a = p;
	char name[96];

	for (unsigned i = a->from; i < a->to; i++) {
		const struct flip *f = &a->f[i];
		off_t at = (off_t)(f->blk * BS + f->off);
		struct expect x = {.name = name, .fuzz = !a->node41, .strict_fuzz = a->node41,
				   .blk = f->blk};

		shm->cur = (int)i;
		flip_name(name, sizeof(name), a->node41, i, f);
		case_name = name;
		if (pwrite(a->fd, &f->v, 1, at) != 1) {
			verdict(false, "cannot write the flip");
			return;
		}
		shm->noticed += fuzz_one(a->img, &x);
		if (pwrite(a->fd, a->base->b + at, 1, at) != 1) {
			verdict(false, "cannot undo the flip");
			return;
		}
	}
	shm->cur = -1;
}

#define FUZZ_BATCH 10

static void fuzz(const struct image *base, const struct tree *t, bool node41, unsigned flips)
{
	struct fuzz_arg a = {.base = base, .node41 = node41};
	struct flip *f = calloc(flips + 1, sizeof(*f));
	char img[320], name[96];
	unsigned i, noticed = 0, refused = 0, hist[NHIST] = {0};

	for (i = 0; i < flips; i++) {
		const struct tnode *n = &t->n[rnd((unsigned)t->nn)];

		f[i].blk = n->blk;
		f[i].level = n->level;
		f[i].off = rnd(BS);
		f[i].v = base->b[n->blk * BS + f[i].off] ^ (uint8_t)(1 + rnd(255));
	}
	snprintf(img, sizeof(img), "%s/fuzz.img", tmpdir);
	a.img = img;
	a.f = f;
	if (save_file(img, base->b, base->len) || (a.fd = open(img, O_WRONLY)) < 0) {
		t_fail++;
		fprintf(stderr, "FAILED: fuzz: cannot write %s\n", img);
		free(f);
		return;
	}
	for (i = 0; i < flips;) {
		a.from = i;
		a.to = R4_MIN(i + FUZZ_BATCH, flips);
		snprintf(name, sizeof(name), "fuzz %s flips %u..%u", node41 ? "node41" : "node40",
			 a.from, a.to - 1);
		bool died = isolated(name, FUZZ_TIMEOUT, fuzz_batch, &a);
		noticed += (unsigned)shm->noticed;
		refused += shm->opens_refused;
		for (size_t k = 0; k < NHIST; k++)
			hist[k] += shm->walk_hist[k];
		if (died && shm->cur >= 0) {
			unsigned c = (unsigned)shm->cur;
			off_t at = (off_t)(f[c].blk * BS + f[c].off);

			flip_name(name, sizeof(name), node41, c, &f[c]);
			fprintf(stderr, "FAILED: %s: the child died on this flip\n", name);
			if (pwrite(a.fd, base->b + at, 1, at) != 1)
				break;
			i = c + 1;
		} else {
			i = a.to;
		}
	}
	close(a.fd);
	unlink(img);
	free(f);
	printf("fuzz %s: %u single-byte flips in tree nodes, %u noticed; %u refused at "
	       "open; failed calls:", node41 ? "node41" : "node40", flips, noticed, refused);
	hist_print(hist);
	printf("\n");
}

/* ================================= main ================================= */

struct fixture {
	char path[320];
	struct image im;
	struct tree t;
	struct fent *ents;
	size_t nents;
};

static int make_fixture(struct fixture *f, bool node41)
{
	int rc;

	snprintf(f->path, sizeof(f->path), "%s/base%s.img", tmpdir, node41 ? "41" : "40");
	if ((rc = build_image(f->path, node41))) {
		fprintf(stderr, "FAILED: building the %s fixture: %s\n", node41 ? "node41" : "node40",
			r4_strerror(rc));
		return rc;
	}
	f->ents = ents;
	f->nents = nents;
	ents = NULL;
	nents = capents = 0;
	if ((rc = load_file(f->path, &f->im)) || (rc = tree_load(&f->im, &f->t))) {
		fprintf(stderr, "FAILED: our walk of the %s fixture's tree: %s\n",
			node41 ? "node41" : "node40", r4_strerror(rc));
		return rc;
	}
	printf("fixture %s: %zu paths, tree height %u, %zu nodes, %u extent items\n",
	       node41 ? "node41" : "node40", f->nents, f->t.height, f->t.nn, f->t.extents);
	CHECK(f->t.height >= 3);
	CHECK(f->t.extents >= 1);
	return 0;
}

/* The pristine images must pass the same walk without a single error. */
static void pristine_child(const void *p)
{
	const struct run_arg *a = p;
	struct walk w = {.x = a->x};
	struct r4_open_opts oo = {.log = log_cb};
	r4_db *db = NULL;
	int rc = r4_open(a->img, &oo, &db);

	verdict(rc == 0, "open: %s", r4_strerror(rc));
	if (rc)
		return;
	walk_all(db, &w);
	r4_close(db);
	verdict(w.errors == 0 && !w.unexpected, "walk: %u errors, %u wrong: %s", w.errors,
		w.unexpected, w.first_bad);
}

static void use_fixture(const struct fixture *f)
{
	ents = f->ents;
	nents = f->nents;
}

static void free_fixture(struct fixture *f)
{
	img_free(&f->im);
	free(f->t.n);
	free(f->ents);
	if (f->path[0])
		unlink(f->path);
}

int main(void)
{
	const char *s = getenv("R4_SEED"), *nf = getenv("R4_FUZZ");
	unsigned long seed = s ? strtoul(s, NULL, 0) : 20240602UL;
	unsigned flips = nf ? (unsigned)strtoul(nf, NULL, 0) : 8;
	struct fixture f40 = {0}, f41 = {0};

	printf("seed: R4_SEED=%lu\n", seed);
	snprintf(tmpdir, sizeof(tmpdir), "%s/r4-badimg.XXXXXX", t_tmp());
	shm = mmap(NULL, sizeof(*shm), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (!mkdtemp(tmpdir) || shm == MAP_FAILED) {
		perror("badimg setup");
		return 1;
	}
	if (!make_fixture(&f40, false) && !make_fixture(&f41, true)) {
		struct expect clean = {.name = "pristine", .err = 0};
		struct run_arg a40 = {f40.path, &clean, NULL}, a41 = {f41.path, &clean, NULL};

		use_fixture(&f40);
		isolated("pristine node40 image", CASE_TIMEOUT, pristine_child, &a40);
		use_fixture(&f41);
		isolated("pristine node41 image", CASE_TIMEOUT, pristine_child, &a41);
		for (size_t i = 0; i < R4_ARRAY_SIZE(cases); i++) {
			const struct fixture *f = cases[i].node41 ? &f41 : &f40;

			use_fixture(f);
			run_case(&f->im, &f->t, &cases[i]);
		}
		rng = seed;
		use_fixture(&f40);
		fuzz(&f40.im, &f40.t, false, flips);
		use_fixture(&f41);
		fuzz(&f41.im, &f41.t, true, flips / 4);
	} else {
		t_fail++;
	}
	ents = NULL;
	if (getenv("R4_KEEP")) {
		printf("kept: %s %s\n", f40.path, f41.path);
		f40.path[0] = f41.path[0] = 0;
	}
	free_fixture(&f40);
	free_fixture(&f41);
	snprintf(f40.path, sizeof(f40.path), "%s/child.err", tmpdir);
	unlink(f40.path);
	rmdir(tmpdir);
	munmap(shm, sizeof(*shm));
	return T_DONE();
}
