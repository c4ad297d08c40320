/*
 * r4fsx.c - a model-based random I/O tester for a mounted file system, in
 * the manner of xfstests' fsx: every operation runs twice, on DIR (the
 * file system under test, an r4fuse mount) and on TWIN (the model: a
 * directory on tmpfs), and the two answers must agree.
 *
 *   r4fsx [-n OPS] [-s SEED] [-f NFILES] [-c EVERY] [-l MAXSIZE] [-w MAXWRITE]
 *         [-o MAXFDS] [-U] [-T] [-L] [-v] DIR TWIN
 *   r4fsx -C DIR TWIN                    compare the two trees, nothing else
 *
 * Compared after every call: the return value and errno, the bytes read,
 * and size, nlink and mode after each change made through a descriptor.
 * Every EVERY operations (default 1000) and at the end the whole trees
 * are compared: readdir listings, type, mode, size and nlink of every
 * entry, the contents of every regular file, which names are hard links
 * of one another, and size and nlink of every open descriptor.
 *
 * The operations: pread at random offsets (past EOF too), pwrite of 1 byte
 * to MAXWRITE bytes (default 300 KiB; straddling 4 KiB blocks, far past
 * EOF leaving holes; files stay under MAXSIZE, default 1 MiB), O_APPEND
 * writes, truncate and ftruncate (grow and shrink), open with assorted
 * flags and close (up to MAXFDS descriptors open at once, default 8),
 * rename (over existing names, to new ones, across directories; with
 * RENAME_NOREPLACE and RENAME_EXCHANGE; of small directories too),
 * unlink, fsync and fdatasync, mkdir and rmdir, lstat and readdir, and
 * fallocate's PUNCH_HOLE (KEEP_SIZE; where a write would go).
 *
 * Names come from a fixed pool, so calls on missing names (ENOENT,
 * ENOTEMPTY, EEXIST, ...) are compared as well: files f0..f(NFILES-1)
 * (default 6) in the top directory and in d0, d1, d2 (made at the start),
 * and small directories s0, s1 in each of those four, with files f0, f1 in
 * them.  A descriptor remembers the name it was opened by, through renames.
 *
 * Three operation classes are off unless asked for
 * (tests/bats/r4fuse_stress.bats runs each):
 *  -U  keep files open while they are unlinked or renamed over, and go on
 *      reading and writing them (open-unlinked files); without it such a
 *      file's descriptors are closed first;
 *  -T  open with O_TRUNC;
 *  -L  link(2): hard links.
 *
 * Deterministic from the seed (splitmix64, printed first as
 * "r4fsx: seed N").  On a mismatch: the operation number, the last 20
 * operations, what differed; exit 1.  Exit 0 with a one-line summary;
 * 2 for a usage or setup error.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "rng.h"

enum { DUT, TWIN, NSIDES };		/* side 0 is the file system under test */

#define HIST 20
#define HISTLEN 200
#define PATHLEN 48			/* the longest pool name is "d2/s1/f1" */
#define MAXSLOTS 32
#define MAXFILES 64			/* -f */
#define NLOCS 4				/* "", d0/, d1/, d2/ */
#define NSMALL 2			/* s0, s1 in each location, f0, f1 in each */
#define NSDIRS (NLOCS * NSMALL)
#define CHUNK (1u << 20)		/* tree compare reads files in pieces this big */

enum op {
	OP_READ, OP_WRITE, OP_APPEND, OP_TRUNCATE, OP_FTRUNCATE, OP_OPEN, OP_CLOSE,
	OP_RENAME, OP_LINK, OP_UNLINK, OP_UNLINK_OPEN, OP_FSYNC, OP_MKDIR, OP_RMDIR,
	OP_STAT, OP_READDIR, OP_PUNCH, OP_NR
};

/* weights out of their sum; OP_UNLINK_OPEN only with -U, OP_LINK with -L */
static const struct {
	const char *name;
	unsigned weight;
} op_info[OP_NR] = {
	[OP_READ] = {"read", 150},	   [OP_WRITE] = {"write", 220},
	[OP_APPEND] = {"append", 60},	   [OP_TRUNCATE] = {"truncate", 40},
	[OP_FTRUNCATE] = {"ftruncate", 40}, [OP_OPEN] = {"open", 90},
	[OP_CLOSE] = {"close", 70},	   [OP_RENAME] = {"rename", 70},
	[OP_LINK] = {"link", 40},	   [OP_UNLINK] = {"unlink", 50},
	[OP_UNLINK_OPEN] = {"unlink-open", 20}, [OP_FSYNC] = {"fsync", 20},
	[OP_MKDIR] = {"mkdir", 25},	   [OP_RMDIR] = {"rmdir", 25},
	[OP_STAT] = {"stat", 60},	   [OP_READDIR] = {"readdir", 30},
	[OP_PUNCH] = {"punch", 30},
};

/* One descriptor on each side, opened by the same call. */
struct slot {
	bool used;
	int fd[NSIDES];
	int flags;
	char path[PATHLEN];		/* the name it was opened by, after renames;
					   "" once that name was unlinked */
};

struct fsx {
	const char *root[NSIDES];
	uint64_t seed, rng;
	unsigned long nops, op, every, ncompares;
	unsigned nfiles, maxfds;
	size_t maxsize, maxwrite;
	bool orphans, otrunc, links, verbose;
	char files[NLOCS * MAXFILES + NSDIRS * NSMALL][PATHLEN];
	size_t nfixed, nfiles_all;	/* files[0..nfixed) are in the fixed directories */
	char sdirs[NSDIRS][PATHLEN];
	struct slot slot[MAXSLOTS];
	char hist[HIST][HISTLEN];	/* the last notes, a ring */
	unsigned long nnotes;
	unsigned long count[OP_NR];
	uint64_t written, readn;
	uint8_t *wbuf, *rbuf[NSIDES];
};

static const char *const side_name[NSIDES] = {"DIR", "TWIN"};
static const char *const locs[NLOCS] = {"", "d0/", "d1/", "d2/"};

/* ---- randomness ---- */

static uint64_t below(struct fsx *x, uint64_t n)
{
	return n ? splitmix(&x->rng) % n : 0;
}

/* ---- reporting ---- */

static void note(struct fsx *x, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void fail(struct fsx *x, const char *fmt, ...)
	__attribute__((format(printf, 2, 3), noreturn));

static void note(struct fsx *x, const char *fmt, ...)
{
	char *h = x->hist[x->nnotes++ % HIST];
	int n = snprintf(h, HISTLEN, "%8lu ", x->op);
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(h + n, HISTLEN - (size_t)n, fmt, ap);
	va_end(ap);
	if (x->verbose)
		printf("%s\n", h);
}

static void fail(struct fsx *x, const char *fmt, ...)
{
	va_list ap;

	fflush(stdout);
	fprintf(stderr, "r4fsx: MISMATCH at op %lu (seed %" PRIu64 ")\n", x->op, x->seed);
	fprintf(stderr, "r4fsx: the last operations:\n");
	for (unsigned long i = x->nnotes >= HIST ? x->nnotes - HIST : 0; i < x->nnotes; i++)
		fprintf(stderr, "  %s\n", x->hist[i % HIST]);
	fprintf(stderr, "r4fsx: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\n");
	exit(1);
}

static void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

static void die(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "r4fsx: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\n");
	exit(2);
}

/* "-1 ENOENT (No such file or directory)" or "5" */
static const char *ret_text(long rv, int err, char *buf, size_t n)
{
	if (rv < 0)
		snprintf(buf, n, "%ld %s (%s)", rv, strerrorname_np(err) ? strerrorname_np(err) : "?",
			 strerror(err));
	else
		snprintf(buf, n, "%ld", rv);
	return buf;
}

/* The two sides answered alike: success or failure, errno, and (when
 * values is set) the value itself. */
static void same_ret(struct fsx *x, const char *what, const long rv[NSIDES],
		     const int err[NSIDES], bool values)
{
	char a[96], b[96];

	if ((rv[DUT] < 0) == (rv[TWIN] < 0) && (rv[DUT] >= 0 || err[DUT] == err[TWIN]) &&
	    (!values || rv[DUT] == rv[TWIN]))
		return;
	fail(x, "%s: DIR returned %s, TWIN returned %s", what, ret_text(rv[DUT], err[DUT], a, 96),
	     ret_text(rv[TWIN], err[TWIN], b, 96));
}

/* ---- names ---- */

/* dir/name into out (PATH_MAX bytes); an empty dir or name is left out */
static void join(char *out, const char *dir, const char *name)
{
	int n = snprintf(out, PATH_MAX, "%s%s%s", dir, *dir && *name ? "/" : "", name);

	if (n < 0 || n >= PATH_MAX)
		die("a path too long under '%s'", dir);
}

static void full(const struct fsx *x, int side, const char *rel, char *out)
{
	join(out, x->root[side], rel);
}

static void make_pool(struct fsx *x)
{
	size_t n = 0;

	for (unsigned l = 0; l < NLOCS; l++)
		for (unsigned j = 0; j < x->nfiles; j++)
			snprintf(x->files[n++], PATHLEN, "%sf%u", locs[l], j);
	x->nfixed = n;
	for (unsigned l = 0; l < NLOCS; l++)
		for (unsigned k = 0; k < NSMALL; k++) {
			char *d = x->sdirs[l * NSMALL + k];

			snprintf(d, PATHLEN, "%ss%u", locs[l], k);
			for (unsigned j = 0; j < NSMALL; j++)
				snprintf(x->files[n++], PATHLEN, "%s/f%u", d, j);
		}
	x->nfiles_all = n;
}

/* most picks in the fixed directories, where the files are kept longer */
static const char *pick_file(struct fsx *x)
{
	if (below(x, 100) < 85)
		return x->files[below(x, x->nfixed)];
	return x->files[x->nfixed + below(x, x->nfiles_all - x->nfixed)];
}

static const char *pick_sdir(struct fsx *x)
{
	return x->sdirs[below(x, NSDIRS)];
}

/* path is pre or lies under it */
static bool under(const char *path, const char *pre)
{
	size_t n = strlen(pre);

	return path[0] && !strncmp(path, pre, n) && (path[n] == 0 || path[n] == '/');
}

/* ---- sizes and offsets ---- */

static size_t pick_len(struct fsx *x)
{
	uint64_t r = below(x, 100);
	size_t len;

	if (r < 45)
		len = 1 + below(x, 4096);
	else if (r < 80)
		len = 1 + below(x, 65536);
	else
		len = 1 + below(x, x->maxwrite);
	return len < x->maxwrite ? len : x->maxwrite;
}

/* an offset for a write of len bytes into a file of size bytes */
static uint64_t pick_off(struct fsx *x, uint64_t size, size_t *len)
{
	uint64_t r = below(x, 100), off;

	if (r < 40) {
		off = below(x, size + 1);
	} else if (r < 55) {		/* across a block boundary */
		uint64_t b = 4096 * (1 + below(x, (size + *len) / 4096 + 1));

		off = b - 1 - below(x, *len < 4096 ? *len : 4096);
	} else if (r < 70) {		/* far past EOF: a hole */
		off = size + below(x, x->maxsize);
	} else if (r < 85) {
		off = size;
	} else {
		off = below(x, 8192);
	}
	if (off >= x->maxsize)
		off = below(x, x->maxsize);
	if (off + *len > x->maxsize)
		*len = x->maxsize - off;
	return off;
}

static uint64_t pick_read_off(struct fsx *x, uint64_t size)
{
	uint64_t r = below(x, 100);

	if (r < 70)
		return below(x, size + 1);
	if (r < 85)			/* past EOF */
		return size + below(x, 65536);
	return 4096 * (1 + below(x, size / 4096 + 1)) - 1 - below(x, 4096);
}

static uint64_t pick_trunc(struct fsx *x, uint64_t size)
{
	uint64_t r = below(x, 100), n;

	if (r < 30)
		n = below(x, size + 1);
	else if (r < 60)
		n = size + below(x, 65536);
	else if (r < 80)
		n = below(x, x->maxsize + 1);
	else				/* a block boundary, or a byte either side */
		n = 4096 * (1 + below(x, x->maxsize / 4096)) + below(x, 3) - 1;
	return n > x->maxsize ? x->maxsize : n;
}

/* the write buffer: bytes that name the op, so misplaced data shows */
static void fill(struct fsx *x, size_t len)
{
	uint64_t s = x->seed ^ (x->op * 0x100000001b3ull), v = 0;

	for (size_t i = 0; i < len; i++) {
		if (!(i & 7))
			v = splitmix(&s);
		x->wbuf[i] = (uint8_t)(v >> ((i & 7) * 8));
	}
}

/* ---- descriptors ---- */

static const char *slot_name(const struct slot *sl)
{
	return sl->path[0] ? sl->path : "(unlinked)";
}

static struct slot *pick_slot(struct fsx *x)
{
	unsigned used = 0, k;

	for (unsigned i = 0; i < x->maxfds; i++)
		used += x->slot[i].used;
	if (!used)
		return NULL;
	k = (unsigned)below(x, used);
	for (unsigned i = 0; i < x->maxfds; i++)
		if (x->slot[i].used && !k--)
			return &x->slot[i];
	return NULL;
}

static void close_slot(struct fsx *x, struct slot *sl, const char *why)
{
	long rv[NSIDES];
	int err[NSIDES];

	note(x, "close %s [fd %d]%s", slot_name(sl), (int)(sl - x->slot), why);
	for (int s = 0; s < NSIDES; s++) {
		errno = 0;
		rv[s] = close(sl->fd[s]);
		err[s] = errno;
	}
	sl->used = false;
	same_ret(x, "close", rv, err, true);
}

/* Before unlinking or replacing path: without -U no descriptor may stay
 * open on it, since its name would go. */
static void close_on(struct fsx *x, const char *path)
{
	if (x->orphans)
		return;
	for (unsigned i = 0; i < x->maxfds; i++)
		if (x->slot[i].used && under(x->slot[i].path, path))
			close_slot(x, &x->slot[i], " (before its name goes)");
}

static uint64_t twin_fsize(struct fsx *x, const struct slot *sl)
{
	struct stat st;

	if (fstat(sl->fd[TWIN], &st))
		fail(x, "fstat on TWIN failed: %s", strerror(errno));
	return (uint64_t)st.st_size;
}

static uint64_t twin_psize(struct fsx *x, const char *rel)
{
	char p[PATH_MAX];
	struct stat st;

	full(x, TWIN, rel, p);
	return lstat(p, &st) ? 0 : (uint64_t)st.st_size;
}

/* size, nlink and mode of one descriptor's file, both sides */
static void same_fstat(struct fsx *x, const struct slot *sl, const char *what)
{
	struct stat st[NSIDES];
	long rv[NSIDES];
	int err[NSIDES];

	for (int s = 0; s < NSIDES; s++) {
		errno = 0;
		rv[s] = fstat(sl->fd[s], &st[s]);
		err[s] = errno;
	}
	same_ret(x, "fstat", rv, err, true);
	if (rv[DUT])
		return;
	if (st[DUT].st_size != st[TWIN].st_size)
		fail(x, "%s %s: fstat size DIR %lld, TWIN %lld", what, slot_name(sl),
		     (long long)st[DUT].st_size, (long long)st[TWIN].st_size);
	if (st[DUT].st_nlink != st[TWIN].st_nlink)
		fail(x, "%s %s: fstat nlink DIR %lu, TWIN %lu", what, slot_name(sl),
		     (unsigned long)st[DUT].st_nlink, (unsigned long)st[TWIN].st_nlink);
	if (st[DUT].st_mode != st[TWIN].st_mode)
		fail(x, "%s %s: fstat mode DIR 0%o, TWIN 0%o", what, slot_name(sl),
		     (unsigned)st[DUT].st_mode, (unsigned)st[TWIN].st_mode);
}

/* ---- comparing the trees ---- */

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* the sorted names in a directory, without . and .. */
static char **list_dir(struct fsx *x, int side, const char *rel, size_t *n, int *err)
{
	char p[PATH_MAX], **v = NULL;
	size_t cap = 0;
	struct dirent *de;
	DIR *d;

	*n = 0;
	full(x, side, rel, p);
	if (!(d = opendir(p))) {
		*err = errno;
		return NULL;
	}
	*err = 0;
	errno = 0;
	while ((de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (*n == cap && !(v = realloc(v, (cap = cap ? 2 * cap : 16) * sizeof(*v))))
			die("out of memory");
		if (!(v[(*n)++] = strdup(de->d_name)))
			die("out of memory");
	}
	if (errno)
		*err = errno;
	closedir(d);
	if (*n)
		qsort(v, *n, sizeof(*v), cmp_str);
	return v;
}

static void free_list(char **v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

static void fail_listing(struct fsx *x, const char *rel, char **v[NSIDES], size_t n[NSIDES])
{
	char buf[2][2048];

	for (int s = 0; s < NSIDES; s++) {
		size_t at = 0;

		buf[s][0] = 0;
		for (size_t i = 0; i < n[s] && at < sizeof(buf[s]) - PATHLEN; i++)
			at += (size_t)snprintf(buf[s] + at, sizeof(buf[s]) - at, " %s", v[s][i]);
	}
	fail(x, "readdir '%s' differs:\n  DIR: %s\n  TWIN:%s", rel, buf[0], buf[1]);
}

static void same_listing(struct fsx *x, const char *rel, char **v[NSIDES], size_t n[NSIDES])
{
	if (n[DUT] != n[TWIN])
		fail_listing(x, rel, v, n);
	for (size_t i = 0; i < n[DUT]; i++)
		if (strcmp(v[DUT][i], v[TWIN][i]))
			fail_listing(x, rel, v, n);
}

/* read up to n bytes, looping over short reads: the count, or -1 */
static ssize_t read_full(int fd, uint8_t *buf, size_t n)
{
	size_t got = 0;

	while (got < n) {
		ssize_t r = read(fd, buf + got, n - got);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -1;
		if (r == 0)
			break;
		got += (size_t)r;
	}
	return (ssize_t)got;
}

static void fail_bytes(struct fsx *x, const char *what, uint64_t base, const uint8_t *a,
		       const uint8_t *b, size_t n)
{
	size_t i = 0;

	while (i < n && a[i] == b[i])
		i++;
	char ha[64] = "", hb[64] = "";

	for (size_t k = 0; k < 16 && i + k < n; k++) {
		snprintf(ha + 3 * k, 4, " %02x", a[i + k]);
		snprintf(hb + 3 * k, 4, " %02x", b[i + k]);
	}
	fail(x, "%s: the bytes differ from offset %" PRIu64 " on:\n  DIR: %s\n  TWIN:%s", what,
	     base + i, ha, hb);
}

static void same_content(struct fsx *x, const char *rel)
{
	char p[PATH_MAX], what[PATH_MAX + 16];
	int fd[NSIDES];
	uint64_t at = 0;

	snprintf(what, sizeof(what), "content of '%s'", rel);
	for (int s = 0; s < NSIDES; s++) {
		full(x, s, rel, p);
		if ((fd[s] = open(p, O_RDONLY)) < 0)
			fail(x, "%s: open on %s: %s", what, side_name[s], strerror(errno));
	}
	for (;;) {
		ssize_t r[NSIDES];

		for (int s = 0; s < NSIDES; s++)
			if ((r[s] = read_full(fd[s], x->rbuf[s], CHUNK)) < 0)
				fail(x, "%s: read on %s at %" PRIu64 ": %s", what, side_name[s], at,
				     strerror(errno));
		if (memcmp(x->rbuf[DUT], x->rbuf[TWIN], (size_t)(r[DUT] < r[TWIN] ? r[DUT] : r[TWIN])))
			fail_bytes(x, what, at, x->rbuf[DUT], x->rbuf[TWIN], (size_t)r[DUT]);
		if (r[DUT] != r[TWIN])
			fail(x, "%s: DIR reads %" PRIu64 " bytes, TWIN %" PRIu64, what,
			     at + (uint64_t)r[DUT], at + (uint64_t)r[TWIN]);
		x->readn += (uint64_t)r[DUT];
		at += (uint64_t)r[DUT];
		if ((size_t)r[DUT] < CHUNK)
			break;
	}
	close(fd[DUT]);
	close(fd[TWIN]);
}

struct inos {
	ino_t *v[NSIDES];
	char **name;
	size_t n, cap;
};

static void same_lstat(struct fsx *x, const char *rel, struct stat st[NSIDES])
{
	char p[PATH_MAX];

	for (int s = 0; s < NSIDES; s++) {
		full(x, s, rel, p);
		if (lstat(p, &st[s]))
			fail(x, "lstat '%s' on %s: %s (readdir listed it)", rel, side_name[s],
			     strerror(errno));
	}
	if (st[DUT].st_mode != st[TWIN].st_mode)
		fail(x, "'%s': mode DIR 0%o, TWIN 0%o", rel, (unsigned)st[DUT].st_mode,
		     (unsigned)st[TWIN].st_mode);
	if (st[DUT].st_nlink != st[TWIN].st_nlink)
		fail(x, "'%s': nlink DIR %lu, TWIN %lu", rel, (unsigned long)st[DUT].st_nlink,
		     (unsigned long)st[TWIN].st_nlink);
	if (S_ISREG(st[DUT].st_mode) && st[DUT].st_size != st[TWIN].st_size)
		fail(x, "'%s': size DIR %lld, TWIN %lld", rel, (long long)st[DUT].st_size,
		     (long long)st[TWIN].st_size);
}

static void walk(struct fsx *x, const char *rel, struct inos *in, size_t *nfiles, size_t *ndirs)
{
	char **v[NSIDES];
	size_t n[NSIDES];
	int err[NSIDES];

	for (int s = 0; s < NSIDES; s++)
		v[s] = list_dir(x, s, rel, &n[s], &err[s]);
	if (err[DUT] || err[TWIN])
		fail(x, "readdir '%s': DIR %s, TWIN %s", rel, strerror(err[DUT]), strerror(err[TWIN]));
	same_listing(x, rel, v, n);
	for (size_t i = 0; i < n[DUT]; i++) {
		char child[PATH_MAX];
		struct stat st[NSIDES];

		join(child, rel, v[DUT][i]);
		same_lstat(x, child, st);
		if (S_ISDIR(st[DUT].st_mode)) {
			++*ndirs;
			walk(x, child, in, nfiles, ndirs);
		} else if (S_ISREG(st[DUT].st_mode)) {
			++*nfiles;
			same_content(x, child);
			if (in->n == in->cap) {
				in->cap = in->cap ? 2 * in->cap : 64;
				for (int s = 0; s < NSIDES; s++)
					if (!(in->v[s] = realloc(in->v[s], in->cap * sizeof(ino_t))))
						die("out of memory");
				if (!(in->name = realloc(in->name, in->cap * sizeof(char *))))
					die("out of memory");
			}
			for (int s = 0; s < NSIDES; s++)
				in->v[s][in->n] = st[s].st_ino;
			if (!(in->name[in->n++] = strdup(child)))
				die("out of memory");
		}
	}
	free_list(v[DUT], n[DUT]);
	free_list(v[TWIN], n[TWIN]);
}

/* Hard links: two names share an inode on one side iff they do on the other. */
static void same_links(struct fsx *x, const struct inos *in)
{
	for (size_t i = 0; i < in->n; i++) {
		size_t first[NSIDES];

		for (int s = 0; s < NSIDES; s++)
			for (first[s] = 0; in->v[s][first[s]] != in->v[s][i]; first[s]++)
				;
		if (first[DUT] != first[TWIN])
			fail(x, "'%s' is a link of '%s' on DIR, of '%s' on TWIN", in->name[i],
			     in->name[first[DUT]], in->name[first[TWIN]]);
	}
}

static void compare_trees(struct fsx *x, size_t *nfiles, size_t *ndirs)
{
	struct inos in = {0};

	*nfiles = *ndirs = 0;
	note(x, "compare the trees");
	walk(x, "", &in, nfiles, ndirs);
	same_links(x, &in);
	for (unsigned i = 0; i < x->maxfds; i++)
		if (x->slot[i].used)
			same_fstat(x, &x->slot[i], "open");
	free(in.v[DUT]);
	free(in.v[TWIN]);
	free_list(in.name, in.n);
	x->ncompares++;
}

/* ---- the operations ---- */

static void op_open(struct fsx *x)
{
	static const int flag_set[] = {
		O_RDWR, O_RDWR | O_CREAT, O_RDWR | O_CREAT, O_RDWR | O_CREAT | O_EXCL,
		O_WRONLY | O_CREAT | O_APPEND, O_RDWR | O_APPEND, O_RDONLY, O_WRONLY | O_CREAT,
		O_RDWR | O_CREAT | O_TRUNC, O_WRONLY | O_TRUNC,	/* the last two: -T */
	};
	size_t nflags = sizeof(flag_set) / sizeof(flag_set[0]) - (x->otrunc ? 0 : 2);
	struct slot *sl = NULL;
	long rv[NSIDES];
	int err[NSIDES];
	char p[PATH_MAX];

	for (unsigned i = 0; i < x->maxfds && !sl; i++)
		if (!x->slot[i].used)
			sl = &x->slot[i];
	if (!sl)
		close_slot(x, sl = &x->slot[below(x, x->maxfds)], " (to reuse it)");
	const char *rel = pick_file(x);
	int flags = flag_set[below(x, nflags)];

	note(x, "open %s [fd %d] flags 0%o", rel, (int)(sl - x->slot), (unsigned)flags);
	for (int s = 0; s < NSIDES; s++) {
		full(x, s, rel, p);
		errno = 0;
		rv[s] = sl->fd[s] = open(p, flags, 0644);
		err[s] = errno;
	}
	same_ret(x, "open", rv, err, false);
	if (rv[DUT] < 0)
		return;
	sl->used = true;
	sl->flags = flags;
	snprintf(sl->path, PATHLEN, "%s", rel);
	same_fstat(x, sl, "open");
}

static void op_read(struct fsx *x, struct slot *sl)
{
	uint64_t size = twin_fsize(x, sl), off = pick_read_off(x, size);
	size_t len = pick_len(x);
	long rv[NSIDES];
	int err[NSIDES];

	note(x, "pread %s [fd %d] off %" PRIu64 " len %zu (size %" PRIu64 ")", slot_name(sl),
	     (int)(sl - x->slot), off, len, size);
	for (int s = 0; s < NSIDES; s++) {
		errno = 0;
		rv[s] = pread(sl->fd[s], x->rbuf[s], len, (off_t)off);
		err[s] = errno;
	}
	same_ret(x, "pread", rv, err, true);
	if (rv[DUT] > 0 && memcmp(x->rbuf[DUT], x->rbuf[TWIN], (size_t)rv[DUT]))
		fail_bytes(x, "pread", off, x->rbuf[DUT], x->rbuf[TWIN], (size_t)rv[DUT]);
	if (rv[DUT] > 0)
		x->readn += (uint64_t)rv[DUT];
}

/* pwrite(2), or (punch) fallocate(2)'s PUNCH_HOLE with KEEP_SIZE there */
static void op_write(struct fsx *x, struct slot *sl, bool punch)
{
	const char *what = punch ? "fallocate" : "pwrite";
	uint64_t size = twin_fsize(x, sl);
	size_t len = pick_len(x);
	uint64_t off = pick_off(x, size, &len);
	long rv[NSIDES];
	int err[NSIDES];

	note(x, "%s %s [fd %d] off %" PRIu64 " len %zu (size %" PRIu64 ")",
	     punch ? "punch" : what, slot_name(sl), (int)(sl - x->slot), off, len, size);
	if (!punch)
		fill(x, len);
	for (int s = 0; s < NSIDES; s++) {
		errno = 0;
		rv[s] = punch ? fallocate(sl->fd[s], FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
					  (off_t)off, (off_t)(len ? len : 1))
			      : pwrite(sl->fd[s], x->wbuf, len, (off_t)off);
		err[s] = errno;
	}
	same_ret(x, what, rv, err, true);
	if (!punch && rv[DUT] > 0)
		x->written += (uint64_t)rv[DUT];
	same_fstat(x, sl, what);
}

/* write(2) through an O_APPEND descriptor; a full file is cut to half */
static void op_append(struct fsx *x)
{
	struct slot *sl = NULL;
	unsigned n = 0, k;
	long rv[NSIDES];
	int err[NSIDES];

	for (unsigned i = 0; i < x->maxfds; i++)
		n += x->slot[i].used && (x->slot[i].flags & O_APPEND);
	if (!n) {
		op_open(x);
		return;
	}
	k = (unsigned)below(x, n);
	for (unsigned i = 0; i < x->maxfds && !sl; i++)
		if (x->slot[i].used && (x->slot[i].flags & O_APPEND) && !k--)
			sl = &x->slot[i];
	uint64_t size = twin_fsize(x, sl);
	size_t len = pick_len(x);

	if (size + len > x->maxsize) {
		note(x, "ftruncate %s [fd %d] to %" PRIu64 " (full for an append)", slot_name(sl),
		     (int)(sl - x->slot), size / 2);
		for (int s = 0; s < NSIDES; s++) {
			errno = 0;
			rv[s] = ftruncate(sl->fd[s], (off_t)(size / 2));
			err[s] = errno;
		}
		same_ret(x, "ftruncate", rv, err, true);
		return;
	}
	note(x, "append %s [fd %d] len %zu (size %" PRIu64 ")", slot_name(sl), (int)(sl - x->slot),
	     len, size);
	fill(x, len);
	for (int s = 0; s < NSIDES; s++) {
		errno = 0;
		rv[s] = write(sl->fd[s], x->wbuf, len);
		err[s] = errno;
	}
	same_ret(x, "append", rv, err, true);
	if (rv[DUT] > 0)
		x->written += (uint64_t)rv[DUT];
	same_fstat(x, sl, "append");
	for (int s = 0; s < NSIDES; s++) {
		errno = 0;
		rv[s] = lseek(sl->fd[s], 0, SEEK_CUR);
		err[s] = errno;
	}
	same_ret(x, "lseek after append", rv, err, true);
}

static void op_ftruncate(struct fsx *x, struct slot *sl)
{
	uint64_t size = twin_fsize(x, sl), to = pick_trunc(x, size);
	long rv[NSIDES];
	int err[NSIDES];

	note(x, "ftruncate %s [fd %d] %" PRIu64 " -> %" PRIu64, slot_name(sl), (int)(sl - x->slot),
	     size, to);
	for (int s = 0; s < NSIDES; s++) {
		errno = 0;
		rv[s] = ftruncate(sl->fd[s], (off_t)to);
		err[s] = errno;
	}
	same_ret(x, "ftruncate", rv, err, true);
	same_fstat(x, sl, "ftruncate");
}

static void op_fsync(struct fsx *x, struct slot *sl)
{
	bool data = below(x, 2);
	long rv[NSIDES];
	int err[NSIDES];

	note(x, "%s %s [fd %d]", data ? "fdatasync" : "fsync", slot_name(sl), (int)(sl - x->slot));
	for (int s = 0; s < NSIDES; s++) {
		errno = 0;
		rv[s] = data ? fdatasync(sl->fd[s]) : fsync(sl->fd[s]);
		err[s] = errno;
	}
	same_ret(x, data ? "fdatasync" : "fsync", rv, err, true);
}

static void op_truncate(struct fsx *x)
{
	const char *rel = pick_file(x);
	uint64_t size = twin_psize(x, rel), to = pick_trunc(x, size);
	long rv[NSIDES];
	int err[NSIDES];
	char p[PATH_MAX];

	note(x, "truncate %s %" PRIu64 " -> %" PRIu64, rel, size, to);
	for (int s = 0; s < NSIDES; s++) {
		full(x, s, rel, p);
		errno = 0;
		rv[s] = truncate(p, (off_t)to);
		err[s] = errno;
	}
	same_ret(x, "truncate", rv, err, true);
}

/* a and b name one inode (rename(2) between them does nothing) */
static bool same_inode(struct fsx *x, const char *a, const char *b)
{
	char p[PATH_MAX];
	struct stat sa, sb;

	full(x, TWIN, a, p);
	if (lstat(p, &sa))
		return false;
	full(x, TWIN, b, p);
	return !lstat(p, &sb) && sa.st_ino == sb.st_ino;
}

/* the descriptors opened by names under from now see them under to */
static void move_prefix(struct slot *sl, const char *from, const char *to)
{
	char p[PATHLEN];

	snprintf(p, PATHLEN, "%s%s", to, sl->path + strlen(from));
	memcpy(sl->path, p, PATHLEN);
}

/* A descriptor's name goes (the file stays open, unlinked). */
static void gone(struct slot *sl)
{
	sl->path[0] = 0;
}

static void renamed(struct fsx *x, const char *a, const char *b, unsigned flags)
{
	for (unsigned i = 0; i < x->maxfds; i++) {
		struct slot *sl = &x->slot[i];

		if (!sl->used)
			continue;
		if (!sl->path[0])	/* unlinked */
			continue;
		if (flags & RENAME_EXCHANGE) {
			if (under(sl->path, a))
				move_prefix(sl, a, b);
			else if (under(sl->path, b))
				move_prefix(sl, b, a);
		} else if (under(sl->path, b)) {
			gone(sl);
		} else if (under(sl->path, a)) {
			move_prefix(sl, a, b);
		}
	}
}

static void op_rename(struct fsx *x)
{
	bool dirs = below(x, 100) < 15;
	const char *a = dirs ? pick_sdir(x) : pick_file(x), *b = dirs ? pick_sdir(x) : pick_file(x);
	uint64_t r = below(x, 100);
	unsigned flags = r < 80 ? 0 : r < 90 ? RENAME_NOREPLACE : RENAME_EXCHANGE;
	long rv[NSIDES];
	int err[NSIDES];
	char pa[PATH_MAX], pb[PATH_MAX];

	if (!(flags & RENAME_EXCHANGE))
		close_on(x, b);
	bool noop = same_inode(x, a, b);

	note(x, "rename%s %s -> %s", flags == RENAME_NOREPLACE ? "(noreplace)" :
				     flags ? "(exchange)" : "", a, b);
	for (int s = 0; s < NSIDES; s++) {
		full(x, s, a, pa);
		full(x, s, b, pb);
		errno = 0;
		rv[s] = renameat2(AT_FDCWD, pa, AT_FDCWD, pb, flags);
		err[s] = errno;
	}
	same_ret(x, "rename", rv, err, true);
	if (!rv[DUT] && !noop)
		renamed(x, a, b, flags);
}

static void op_link(struct fsx *x)
{
	const char *a = pick_file(x), *b = pick_file(x);
	long rv[NSIDES];
	int err[NSIDES];
	char pa[PATH_MAX], pb[PATH_MAX];

	note(x, "link %s -> %s", a, b);
	for (int s = 0; s < NSIDES; s++) {
		full(x, s, a, pa);
		full(x, s, b, pb);
		errno = 0;
		rv[s] = link(pa, pb);
		err[s] = errno;
	}
	same_ret(x, "link", rv, err, true);
}

static void unlink_name(struct fsx *x, const char *rel, const char *why)
{
	long rv[NSIDES];
	int err[NSIDES];
	char p[PATH_MAX];

	close_on(x, rel);
	note(x, "unlink %s%s", rel, why);
	for (int s = 0; s < NSIDES; s++) {
		full(x, s, rel, p);
		errno = 0;
		rv[s] = unlink(p);
		err[s] = errno;
	}
	same_ret(x, "unlink", rv, err, true);
	if (rv[DUT])
		return;
	for (unsigned i = 0; i < x->maxfds; i++)
		if (x->slot[i].used && !strcmp(x->slot[i].path, rel))
			gone(&x->slot[i]);
}

/* -U: unlink the name an open descriptor was opened by */
static void op_unlink_open(struct fsx *x)
{
	struct slot *sl = pick_slot(x);

	if (!sl || !sl->path[0]) {
		unlink_name(x, pick_file(x), "");
		return;
	}
	char rel[PATHLEN];

	memcpy(rel, sl->path, PATHLEN);
	unlink_name(x, rel, " (open)");
}

static void op_dir(struct fsx *x, bool make)
{
	const char *rel = pick_sdir(x);
	long rv[NSIDES];
	int err[NSIDES];
	char p[PATH_MAX];

	note(x, "%s %s", make ? "mkdir" : "rmdir", rel);
	for (int s = 0; s < NSIDES; s++) {
		full(x, s, rel, p);
		errno = 0;
		rv[s] = make ? mkdir(p, 0755) : rmdir(p);
		err[s] = errno;
	}
	same_ret(x, make ? "mkdir" : "rmdir", rv, err, true);
}

static void op_stat(struct fsx *x)
{
	const char *rel = below(x, 5) ? pick_file(x) : pick_sdir(x);
	struct stat st[NSIDES];
	long rv[NSIDES];
	int err[NSIDES];
	char p[PATH_MAX];

	note(x, "lstat %s", rel);
	for (int s = 0; s < NSIDES; s++) {
		full(x, s, rel, p);
		errno = 0;
		rv[s] = lstat(p, &st[s]);
		err[s] = errno;
	}
	same_ret(x, "lstat", rv, err, true);
	if (!rv[DUT])
		same_lstat(x, rel, st);
}

static void op_readdir(struct fsx *x)
{
	uint64_t r = below(x, NLOCS + NSDIRS);
	char rel[PATHLEN], **v[NSIDES];
	size_t n[NSIDES];
	int err[NSIDES];
	long rv[NSIDES];

	snprintf(rel, PATHLEN, "%s", r < NLOCS ? locs[r] : x->sdirs[r - NLOCS]);
	if (r && r < NLOCS)
		rel[strlen(rel) - 1] = 0;	/* "d0/" is the directory d0 */
	note(x, "readdir '%s'", rel);
	for (int s = 0; s < NSIDES; s++) {
		v[s] = list_dir(x, s, rel, &n[s], &err[s]);
		rv[s] = err[s] ? -1 : 0;
	}
	same_ret(x, "readdir", rv, err, true);
	if (!rv[DUT])
		same_listing(x, rel, v, n);
	free_list(v[DUT], n[DUT]);
	free_list(v[TWIN], n[TWIN]);
}

static unsigned weight(const struct fsx *x, int op)
{
	if ((op == OP_UNLINK_OPEN && !x->orphans) || (op == OP_LINK && !x->links))
		return 0;
	return op_info[op].weight;
}

static enum op pick_op(struct fsx *x)
{
	unsigned total = 0, r;

	for (int i = 0; i < OP_NR; i++)
		total += weight(x, i);
	r = (unsigned)below(x, total);
	for (int i = 0; i < OP_NR; i++) {
		unsigned w = weight(x, i);

		if (r < w)
			return (enum op)i;
		r -= w;
	}
	return OP_STAT;
}

static void do_op(struct fsx *x)
{
	enum op op = pick_op(x);
	struct slot *sl = NULL;

	if (op == OP_READ || op == OP_WRITE || op == OP_FTRUNCATE || op == OP_FSYNC ||
	    op == OP_CLOSE || op == OP_PUNCH) {
		if (!(sl = pick_slot(x)))
			op = OP_OPEN;
	}
	x->count[op]++;
	switch (op) {
	case OP_READ: op_read(x, sl); break;
	case OP_WRITE: op_write(x, sl, false); break;
	case OP_APPEND: op_append(x); break;
	case OP_TRUNCATE: op_truncate(x); break;
	case OP_FTRUNCATE: op_ftruncate(x, sl); break;
	case OP_OPEN: op_open(x); break;
	case OP_CLOSE: close_slot(x, sl, ""); break;
	case OP_RENAME: op_rename(x); break;
	case OP_LINK: op_link(x); break;
	case OP_UNLINK: unlink_name(x, pick_file(x), ""); break;
	case OP_UNLINK_OPEN: op_unlink_open(x); break;
	case OP_FSYNC: op_fsync(x, sl); break;
	case OP_PUNCH: op_write(x, sl, true); break;
	case OP_MKDIR: op_dir(x, true); break;
	case OP_RMDIR: op_dir(x, false); break;
	case OP_STAT: op_stat(x); break;
	case OP_READDIR: op_readdir(x); break;
	case OP_NR: break;
	}
}

/* ---- setup and main ---- */

static void setup(struct fsx *x)
{
	char p[PATH_MAX];

	for (int s = 0; s < NSIDES; s++) {
		char **v;
		size_t n;
		int err;

		v = list_dir(x, s, "", &n, &err);
		if (err)
			die("cannot read '%s': %s", x->root[s], strerror(err));
		free_list(v, n);
		if (n)
			die("'%s' is not empty", x->root[s]);
	}
	for (unsigned l = 1; l < NLOCS; l++) {
		long rv[NSIDES];
		int err[NSIDES];

		note(x, "mkdir %.2s", locs[l]);
		for (int s = 0; s < NSIDES; s++) {
			full(x, s, locs[l], p);
			errno = 0;
			rv[s] = mkdir(p, 0755);
			err[s] = errno;
		}
		same_ret(x, "mkdir", rv, err, true);
	}
}

static unsigned long num(const char *s, const char *opt)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 0);
	if (errno || end == s || *end)
		die("%s: not a number: '%s'", opt, s);
	return v;
}

static void usage(void)
{
	fprintf(stderr, "usage: r4fsx [-n OPS] [-s SEED] [-f NFILES] [-c EVERY] [-l MAXSIZE]\n"
			"             [-w MAXWRITE] [-o MAXFDS] [-U] [-T] [-L] [-v] DIR TWIN\n"
			"       r4fsx -C DIR TWIN\n");
	exit(2);
}

static void summary(const struct fsx *x)
{
	printf("r4fsx: seed %" PRIu64 ": %lu ops passed, %lu tree compares, %" PRIu64
	       " MiB written, %" PRIu64 " MiB compared;", x->seed, x->nops, x->ncompares,
	       x->written >> 20, x->readn >> 20);
	for (int i = 0; i < OP_NR; i++)
		if (x->count[i])
			printf(" %s %lu", op_info[i].name, x->count[i]);
	printf("\n");
}

int main(int argc, char **argv)
{
	static struct fsx fx = {.nops = 10000, .every = 1000, .nfiles = 6, .maxfds = 8,
				.maxsize = 1u << 20, .maxwrite = 300 * 1024};
	struct fsx *x = &fx;
	bool seeded = false, only_compare = false;
	size_t nfiles, ndirs;
	int c;

	while ((c = getopt(argc, argv, "n:s:f:c:l:w:o:UTLvC")) != -1) {
		switch (c) {
		case 'n': x->nops = num(optarg, "-n"); break;
		case 's': x->seed = num(optarg, "-s"); seeded = true; break;
		case 'f': x->nfiles = (unsigned)num(optarg, "-f"); break;
		case 'c': x->every = num(optarg, "-c"); break;
		case 'l': x->maxsize = num(optarg, "-l"); break;
		case 'w': x->maxwrite = num(optarg, "-w"); break;
		case 'o': x->maxfds = (unsigned)num(optarg, "-o"); break;
		case 'U': x->orphans = true; break;
		case 'T': x->otrunc = true; break;
		case 'L': x->links = true; break;
		case 'v': x->verbose = true; break;
		case 'C': only_compare = true; break;
		default: usage();
		}
	}
	if (argc - optind != 2)
		usage();
	if (!x->nfiles || x->nfiles > MAXFILES || !x->maxfds || x->maxfds > MAXSLOTS ||
	    x->maxsize < 4096 || !x->maxwrite || x->maxwrite > x->maxsize)
		die("-f is 1..%d, -o 1..%d, -l at least 4096, -w 1..MAXSIZE", MAXFILES, MAXSLOTS);
	x->root[DUT] = argv[optind];
	x->root[TWIN] = argv[optind + 1];
	if (!(x->wbuf = malloc(x->maxwrite)) || !(x->rbuf[DUT] = malloc(CHUNK + x->maxwrite)) ||
	    !(x->rbuf[TWIN] = malloc(CHUNK + x->maxwrite)))
		die("out of memory");
	if (only_compare) {
		compare_trees(x, &nfiles, &ndirs);
		printf("r4fsx: the trees match: %zu files, %zu directories\n", nfiles, ndirs);
		return 0;
	}
	if (!seeded) {
		struct timespec ts;

		clock_gettime(CLOCK_REALTIME, &ts);
		x->seed = (uint64_t)ts.tv_sec * 1000003u ^ (uint64_t)ts.tv_nsec;
	}
	x->rng = x->seed;
	printf("r4fsx: seed %" PRIu64 "\n", x->seed);
	fflush(stdout);
	make_pool(x);
	setup(x);
	for (x->op = 1; x->op <= x->nops; x->op++) {
		do_op(x);
		if (x->every && x->op % x->every == 0)
			compare_trees(x, &nfiles, &ndirs);
	}
	x->op = x->nops;
	compare_trees(x, &nfiles, &ndirs);
	for (unsigned i = 0; i < x->maxfds; i++)
		if (x->slot[i].used)
			close_slot(x, &x->slot[i], " (at the end)");
	compare_trees(x, &nfiles, &ndirs);
	summary(x);
	free(x->wbuf);
	free(x->rbuf[DUT]);
	free(x->rbuf[TWIN]);
	return 0;
}
