/*
 * r4writer.c - one of several concurrent writers on a mounted file system,
 * keeping its own model of what it wrote, for tests/bats/r4fuse_stress.bats.
 *
 *   r4writer [-s SEED] [-t SECONDS] [-n MAXOPS] ID DIR OUT
 *
 * Until SECONDS (default 10) have passed or MAXOPS operations are done,
 * writer ID (0..15) works on
 *  - its own directory DIR/wID: creates, overwrites at random offsets,
 *    appends (O_APPEND), truncates, renames (over existing names and to
 *    new ones, into and out of wID/sub), unlinks, mkdir and rmdir of
 *    wID/t, and reads a file back now and then to compare it with the
 *    model;
 *  - files every writer shares, which the caller makes first:
 *    DIR/shared/log, where it appends lines "wID SEQ xxx..." with
 *    O_APPEND; DIR/shared/blocks, where it writes only inside its own
 *    64 KiB region [ID*64K, ID*64K+64K); and DIR/shared/cur.ID, which it
 *    replaces by writing shared/tmp.ID and renaming it over (in the
 *    shared directory, next to the other writers' renames).
 *
 * At the end it reads every file of wID back and compares it with the
 * model, then writes what the file system must hold into OUT: OUT/wID/ (a
 * copy of wID as the model has it), OUT/cur.ID, OUT/log.ID (its lines of
 * the shared log, in order) and OUT/blocks.ID (its region of the shared
 * block file).  The caller compares those with the mount, after a
 * remount too.  No hard links and no O_TRUNC: r4fuse gets both wrong
 * today (see r4fsx -L and -T).
 *
 * Exit 0 with a one-line summary, 1 when a call failed or a read-back
 * differed, 2 for a usage error.
 */
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

#define NNAMES 10			/* p0..p5 in wID, q0..q3 in wID/sub */
#define MAXFILE (256u * 1024)
#define MAXWRITE (64u * 1024)
#define REGION (64u * 1024)
#define MAXID 16

struct file {
	bool exists;
	uint8_t *data;			/* MAXFILE bytes */
	size_t size;
};

struct writer {
	unsigned id;
	const char *dir, *out;
	uint64_t seed, rng;
	unsigned long op, maxops, nlog, nops[8];
	struct file f[NNAMES];
	uint8_t region[REGION];
	uint8_t *cur, *buf;
	size_t ncur;
	bool tdir;
	int logfd, blkfd;
	FILE *logmodel;			/* OUT/log.ID, written as we go */
};

static void die(const struct writer *w, const char *fmt, ...)
	__attribute__((format(printf, 2, 3), noreturn));

static void die(const struct writer *w, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "r4writer %u: op %lu (seed %" PRIu64 "): ", w->id, w->op, w->seed);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\n");
	exit(1);
}

static uint64_t below(struct writer *w, uint64_t n)
{
	return n ? splitmix(&w->rng) % n : 0;
}

static void fill(struct writer *w, size_t len)
{
	uint64_t s = w->seed ^ ((uint64_t)w->id << 56) ^ w->op, v = 0;

	for (size_t i = 0; i < len; i++) {
		if (!(i & 7))
			v = splitmix(&s);
		w->buf[i] = (uint8_t)(v >> ((i & 7) * 8));
	}
}

/* the path of name k of this writer's own files, under root */
static void name(const struct writer *w, const char *root, unsigned k, char *out)
{
	int n = k < 6 ? snprintf(out, PATH_MAX, "%s/w%u/p%u", root, w->id, k)
		      : snprintf(out, PATH_MAX, "%s/w%u/sub/q%u", root, w->id, k - 6);

	if (n < 0 || n >= PATH_MAX)
		die(w, "path too long under '%s'", root);
}

static void path(const struct writer *w, char *out, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void path(const struct writer *w, char *out, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(out, PATH_MAX, fmt, ap);
	va_end(ap);
	if (n < 0 || n >= PATH_MAX)
		die(w, "path too long");
}

static void write_all(struct writer *w, int fd, const void *p, size_t n, off_t off,
		      const char *what)
{
	ssize_t r = off < 0 ? write(fd, p, n) : pwrite(fd, p, n, off);

	if (r < 0)
		die(w, "%s: %s", what, strerror(errno));
	if ((size_t)r != n)
		die(w, "%s: wrote %zd of %zu bytes", what, r, n);
}

/* the file's bytes as read through the mount must be the model's */
static void verify(struct writer *w, unsigned k)
{
	char p[PATH_MAX];
	struct stat st;
	size_t got = 0;
	int fd;

	name(w, w->dir, k, p);
	if ((fd = open(p, O_RDONLY)) < 0)
		die(w, "open %s to read it back: %s", p, strerror(errno));
	if (fstat(fd, &st))
		die(w, "fstat %s: %s", p, strerror(errno));
	if ((uint64_t)st.st_size != w->f[k].size)
		die(w, "%s: size %lld, the model says %zu", p, (long long)st.st_size, w->f[k].size);
	for (;;) {
		ssize_t r = read(fd, w->buf + got, MAXFILE + 1 - got);

		if (r < 0)
			die(w, "read %s: %s", p, strerror(errno));
		if (!r)
			break;
		got += (size_t)r;
	}
	close(fd);
	if (got != w->f[k].size)
		die(w, "%s: read %zu bytes, the model says %zu", p, got, w->f[k].size);
	for (size_t i = 0; i < got; i++)
		if (w->buf[i] != w->f[k].data[i])
			die(w, "%s: byte %zu is %02x, the model says %02x", p, i, w->buf[i],
			    w->f[k].data[i]);
}

/* ---- its own files ---- */

/* create a missing file, or overwrite part of one at a random offset */
static void op_write(struct writer *w, unsigned k)
{
	struct file *f = &w->f[k];
	size_t len = 1 + below(w, below(w, 4) ? 8192 : MAXWRITE);
	uint64_t off = f->exists ? below(w, f->size + 8192) : 0;
	char p[PATH_MAX];
	int fd;

	if (off + len > MAXFILE)
		off = MAXFILE - len;
	name(w, w->dir, k, p);
	fd = open(p, f->exists ? O_WRONLY : O_WRONLY | O_CREAT | O_EXCL, 0644);
	if (fd < 0)
		die(w, "open %s: %s", p, strerror(errno));
	fill(w, len);
	write_all(w, fd, w->buf, len, (off_t)off, p);
	if (close(fd))
		die(w, "close %s: %s", p, strerror(errno));
	if (!f->exists)
		memset(f->data, 0, MAXFILE);
	if (off > f->size)
		memset(f->data + f->size, 0, off - f->size);
	memcpy(f->data + off, w->buf, len);
	f->exists = true;
	if (off + len > f->size)
		f->size = off + len;
}

static void op_append(struct writer *w, unsigned k)
{
	struct file *f = &w->f[k];
	size_t len = 1 + below(w, 16384);
	char p[PATH_MAX];
	int fd;

	if (f->size + len > MAXFILE) {
		op_write(w, k);
		return;
	}
	name(w, w->dir, k, p);
	if ((fd = open(p, O_WRONLY | O_APPEND | O_CREAT, 0644)) < 0)
		die(w, "open %s: %s", p, strerror(errno));
	fill(w, len);
	write_all(w, fd, w->buf, len, -1, p);
	if (close(fd))
		die(w, "close %s: %s", p, strerror(errno));
	if (!f->exists)
		f->size = 0;
	memcpy(f->data + f->size, w->buf, len);
	f->size += len;
	f->exists = true;
}

static void op_truncate(struct writer *w, unsigned k)
{
	struct file *f = &w->f[k];
	size_t to = below(w, 2) ? below(w, f->size + 1) : below(w, MAXFILE + 1);
	char p[PATH_MAX];

	name(w, w->dir, k, p);
	if (truncate(p, (off_t)to))
		die(w, "truncate %s %zu: %s", p, to, strerror(errno));
	if (to > f->size)
		memset(f->data + f->size, 0, to - f->size);
	f->size = to;
}

static void op_rename(struct writer *w, unsigned a, unsigned b)
{
	char pa[PATH_MAX], pb[PATH_MAX];
	uint8_t *data;

	name(w, w->dir, a, pa);
	name(w, w->dir, b, pb);
	if (rename(pa, pb))
		die(w, "rename %s %s: %s", pa, pb, strerror(errno));
	if (a == b)
		return;
	data = w->f[b].data;		/* the buffers trade places */
	w->f[b] = w->f[a];
	w->f[a].data = data;
	w->f[a].exists = false;
	w->f[a].size = 0;
}

static void op_unlink(struct writer *w, unsigned k)
{
	char p[PATH_MAX];

	name(w, w->dir, k, p);
	if (unlink(p))
		die(w, "unlink %s: %s", p, strerror(errno));
	w->f[k].exists = false;
	w->f[k].size = 0;
}

static void op_tdir(struct writer *w)
{
	char p[PATH_MAX];

	path(w, p, "%s/w%u/t", w->dir, w->id);
	if (w->tdir ? rmdir(p) : mkdir(p, 0755))
		die(w, "%s %s: %s", w->tdir ? "rmdir" : "mkdir", p, strerror(errno));
	w->tdir = !w->tdir;
}

/* ---- the shared files ---- */

static void op_log(struct writer *w)
{
	char line[160];
	size_t pad = below(w, 100);
	int n = snprintf(line, sizeof(line), "w%u %lu ", w->id, w->nlog++);

	memset(line + n, 'x', pad);
	line[n + (int)pad] = '\n';
	write_all(w, w->logfd, line, (size_t)n + pad + 1, -1, "append to shared/log");
	fwrite(line, 1, (size_t)n + pad + 1, w->logmodel);
}

static void op_block(struct writer *w)
{
	size_t len = 1 + below(w, 8192), off = below(w, REGION - len + 1);

	fill(w, len);
	write_all(w, w->blkfd, w->buf, len, (off_t)(w->id * REGION + off), "pwrite shared/blocks");
	memcpy(w->region + off, w->buf, len);
}

/* write shared/tmp.ID, rename it over shared/cur.ID */
static void op_replace(struct writer *w)
{
	size_t len = below(w, 20000);
	char tmp[PATH_MAX], cur[PATH_MAX];
	int fd;

	path(w, tmp, "%s/shared/tmp.%u", w->dir, w->id);
	path(w, cur, "%s/shared/cur.%u", w->dir, w->id);
	if ((fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL, 0644)) < 0)
		die(w, "open %s: %s", tmp, strerror(errno));
	fill(w, len);
	if (len)
		write_all(w, fd, w->buf, len, 0, tmp);
	if (below(w, 4) == 0 && fsync(fd))
		die(w, "fsync %s: %s", tmp, strerror(errno));
	if (close(fd))
		die(w, "close %s: %s", tmp, strerror(errno));
	if (rename(tmp, cur))
		die(w, "rename %s %s: %s", tmp, cur, strerror(errno));
	memcpy(w->cur, w->buf, len);
	w->ncur = len;
}

/* ---- the loop ---- */

static void step(struct writer *w)
{
	unsigned r = (unsigned)below(w, 100), k = (unsigned)below(w, NNAMES);
	struct file *f = &w->f[k];

	if (r < 25 || !f->exists) {
		w->nops[0]++;
		op_write(w, k);
	} else if (r < 40) {
		w->nops[1]++;
		op_append(w, k);
	} else if (r < 47) {
		w->nops[2]++;
		op_truncate(w, k);
	} else if (r < 57) {
		w->nops[3]++;
		op_rename(w, k, (unsigned)below(w, NNAMES));
	} else if (r < 62) {
		w->nops[4]++;
		op_unlink(w, k);
	} else if (r < 70) {
		w->nops[5]++;
		verify(w, k);
	} else if (r < 72) {
		op_tdir(w);
	} else if (r < 85) {
		w->nops[6]++;
		op_log(w);
	} else if (r < 95) {
		w->nops[6]++;
		op_block(w);
	} else {
		w->nops[7]++;
		op_replace(w);
	}
}

/* write the model into OUT */
static void dump(struct writer *w)
{
	char p[PATH_MAX];
	FILE *fp;

	path(w, p, "%s/w%u", w->out, w->id);
	if (mkdir(p, 0755) && errno != EEXIST)
		die(w, "mkdir %s: %s", p, strerror(errno));
	path(w, p, "%s/w%u/sub", w->out, w->id);
	if (mkdir(p, 0755) && errno != EEXIST)
		die(w, "mkdir %s: %s", p, strerror(errno));
	if (w->tdir) {
		path(w, p, "%s/w%u/t", w->out, w->id);
		if (mkdir(p, 0755) && errno != EEXIST)
			die(w, "mkdir %s: %s", p, strerror(errno));
	}
	for (unsigned k = 0; k < NNAMES; k++) {
		if (!w->f[k].exists)
			continue;
		name(w, w->out, k, p);
		if (!(fp = fopen(p, "w")) || fwrite(w->f[k].data, 1, w->f[k].size, fp) != w->f[k].size ||
		    fclose(fp))
			die(w, "write %s: %s", p, strerror(errno));
	}
	path(w, p, "%s/cur.%u", w->out, w->id);
	if (!(fp = fopen(p, "w")) || fwrite(w->cur, 1, w->ncur, fp) != w->ncur || fclose(fp))
		die(w, "write %s: %s", p, strerror(errno));
	path(w, p, "%s/blocks.%u", w->out, w->id);
	if (!(fp = fopen(p, "w")) || fwrite(w->region, 1, REGION, fp) != REGION || fclose(fp))
		die(w, "write %s: %s", p, strerror(errno));
	if (fclose(w->logmodel))
		die(w, "write %s/log.%u: %s", w->out, w->id, strerror(errno));
}

static void setup(struct writer *w)
{
	char p[PATH_MAX];

	for (unsigned k = 0; k < NNAMES; k++)
		if (!(w->f[k].data = malloc(MAXFILE)))
			die(w, "out of memory");
	if (!(w->buf = malloc(MAXFILE + 1)) || !(w->cur = malloc(20000)))
		die(w, "out of memory");
	path(w, p, "%s/w%u", w->dir, w->id);
	if (mkdir(p, 0755))
		die(w, "mkdir %s: %s", p, strerror(errno));
	path(w, p, "%s/w%u/sub", w->dir, w->id);
	if (mkdir(p, 0755))
		die(w, "mkdir %s: %s", p, strerror(errno));
	path(w, p, "%s/shared/log", w->dir);
	if ((w->logfd = open(p, O_WRONLY | O_APPEND)) < 0)
		die(w, "open %s: %s", p, strerror(errno));
	path(w, p, "%s/shared/blocks", w->dir);
	if ((w->blkfd = open(p, O_WRONLY)) < 0)
		die(w, "open %s: %s", p, strerror(errno));
	path(w, p, "%s/log.%u", w->out, w->id);
	if (!(w->logmodel = fopen(p, "w")))
		die(w, "open %s: %s", p, strerror(errno));
	op_replace(w);			/* cur.ID exists from the start */
}

static unsigned long num(const char *s)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 0);
	if (errno || end == s || *end) {
		fprintf(stderr, "r4writer: not a number: '%s'\n", s);
		exit(2);
	}
	return v;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	static struct writer wr = {.maxops = ~0ul};
	struct writer *w = &wr;
	double secs = 10, end;
	int c;

	while ((c = getopt(argc, argv, "s:t:n:")) != -1) {
		switch (c) {
		case 's': w->seed = num(optarg); break;
		case 't': secs = (double)num(optarg); break;
		case 'n': w->maxops = num(optarg); break;
		default: goto usage;
		}
	}
	if (argc - optind != 3 || (w->id = (unsigned)num(argv[optind])) >= MAXID)
		goto usage;
	w->dir = argv[optind + 1];
	w->out = argv[optind + 2];
	w->rng = w->seed ^ (0x51ed2701ull * (w->id + 1));
	setup(w);
	end = now() + secs;
	for (w->op = 1; w->op <= w->maxops && (w->op & 15 || now() < end); w->op++)
		step(w);
	for (unsigned k = 0; k < NNAMES; k++)
		if (w->f[k].exists)
			verify(w, k);
	if (close(w->logfd) || close(w->blkfd))
		die(w, "close the shared files: %s", strerror(errno));
	dump(w);
	printf("r4writer %u: seed %" PRIu64 ": %lu ops: write %lu append %lu truncate %lu rename %lu "
	       "unlink %lu read-back %lu shared %lu replace %lu\n", w->id, w->seed, w->op - 1,
	       w->nops[0], w->nops[1], w->nops[2], w->nops[3], w->nops[4], w->nops[5], w->nops[6],
	       w->nops[7]);
	for (unsigned k = 0; k < NNAMES; k++)
		free(w->f[k].data);
	free(w->buf);
	free(w->cur);
	return 0;
usage:
	fprintf(stderr, "usage: r4writer [-s SEED] [-t SECONDS] [-n MAXOPS] ID DIR OUT\n");
	return 2;
}
