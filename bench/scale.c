/*
 * scale.c - r4's scale benchmark (issue 2): many small files in one
 * directory and one big file, with time, peak memory and space used.
 *
 *   scale small IMG N     mkfs IMG, create /d/fNNNNNNN (N files of 100 bytes)
 *                         committing every 1,000 files; then reopen and read
 *                         every file back, comparing its bytes
 *   scale big IMG MIB     mkfs IMG, write /big (MIB MiB) in 1 MiB chunks
 *                         committing every 64 MiB; then reopen and read it
 *                         back in 1 MiB chunks, comparing every byte
 *   scale ls IMG N        small's write phase, then list /d (N files, plus
 *                         "." and ".."), LS_REPS times each way, every time
 *                         on a fresh open (its time not counted): names alone
 *                         (r4_readdir_stat R4_READDIR_NAMES), names and
 *                         attributes from the walk (r4_readdir_stat),
 *                         r4_readdir (names and types), and the way r4 ls
 *                         went before (names, then r4_stat of each path);
 *                         IMG is kept for bench/run.sh's `r4 ls` timings
 *   scale ops IMG N SHAPE M SEED
 *                         (issue 27 item 4) mkfs IMG, build N files of 100
 *                         bytes (flat: /d/fI; tree3: /d/aA/bB/fI, F =
 *                         ceil(cbrt N) entries a level, F files a leaf
 *                         directory) in transactions of BUILD_PER_TXN; on a
 *                         fresh open, r4_stat of M random files (from SEED)
 *                         OPS_REPS times; on another, min(M, N) creates of
 *                         100-byte files in random files' directories,
 *                         each named to sort right after a random file's
 *                         name (R4_BENCH_OPS_APPEND=1: after all names),
 *                         committing every 1,000; microseconds per
 *                         operation, wall and CPU ("result=..." lines);
 *                         R4_BENCH_OPS_HOT=K draws the stats from K files
 *                         only, spread evenly over the N
 *   scale mstat MNT N SHAPE M SEED
 *                         stat(2) of M random files of ops' volume through
 *                         an r4fuse mount of it at MNT, as ops' stat phase
 *   scale mcreate MNT N SHAPE M SEED
 *                         min(M, N) creates of 100-byte files through the
 *                         mount, named as ops' creates with an 'm' after
 *                         (open O_CREAT|O_EXCL, write, close), syncfs(2)
 *                         every 1,000 as ops commits; then each one's size
 *
 * Each phase (write, read) runs in its own child process (fork + wait4), so
 * the peak RSS the parent prints (ru_maxrss of the child) is that phase's
 * alone.  The image is opened with the default cache bound (cache_nodes 0),
 * or R4_BENCH_CACHE_NODES nodes when that is set.
 * Output, one line per phase, for bench/run.sh to tabulate:
 *
 *   phase=small-write n=N secs=S rate=R unit=files/s maxrss_kib=K used_before=B used_after=A
 *
 * (ls: "phase=ls-WAY n=N secs=MEDIAN min=MIN reps=R entries=E", secs of
 * the listing alone) plus a line "space n=N bytes_per_file=X" (small) or "space bytes=X" (big)
 * from the used blocks (r4_statfs: blocks - bfree) before the workload and
 * after it, read again after the reopen.  Exit status 0 when every phase
 * worked and every byte compared equal, 1 otherwise (the failing call is on
 * stderr).  Timing is reported, never judged: this is no test.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"
#include "ops.h"
#include "r4.h"

#define FILES_PER_TXN 1000
#define CHUNK (1024 * 1024)
#define CHUNKS_PER_TXN 64

static int fail(const char *what, const char *subject, int rc)
{
	fprintf(stderr, "scale: %s '%s': %s\n", what, subject, r4_strerror(rc));
	return 1;
}

/* Chunk c of the big file: 8-byte words that depend on their offset. */
static void big_content(uint64_t c, uint8_t *p)
{
	for (size_t j = 0; j < CHUNK; j += 8) {
		uint64_t r = (c * CHUNK + j) * 0x9E3779B97F4A7C15ull ^ 0x5DEECE66Dull;
		memcpy(p + j, &r, 8);
	}
}

static int used_blocks(r4_db *db, uint64_t *used)
{
	struct r4_statfs sf;
	int rc = r4_statfs(db, &sf);

	if (!rc)
		*used = sf.blocks - sf.bfree;
	return rc;
}

static int open_db(const char *img, bool rw, r4_db **db)
{
	const char *cn = getenv("R4_BENCH_CACHE_NODES");
	struct r4_open_opts o = { .rw = rw, .cache_nodes = cn ? strtoull(cn, NULL, 10) : 0,
				  .seconds_only = getenv("R4_SECONDS_ONLY") != NULL };
	int rc = r4_open(img, &o, db);

	return rc ? fail("cannot open image", img, rc) : 0;
}

/* ---- the phases (each runs in a child; prints "used=U" on stdout) ---- */

static int small_write(const char *img, uint64_t n, uint64_t *before, uint64_t *after)
{
	uint8_t buf[FILE_BYTES];
	char path[64];
	r4_db *db;
	int rc;

	if (open_db(img, true, &db))
		return 1;
	if ((rc = used_blocks(db, before)) || (rc = r4_mkdir(db, "/d", 0755, 0, 0))) {
		r4_close(db);
		return fail("cannot make directory", "/d", rc);
	}
	for (uint64_t i = 0; i < n; i++) {
		if (i % FILES_PER_TXN == 0 && (rc = r4_begin(db)))
			goto bad;
		snprintf(path, sizeof(path), "/d/f%07" PRIu64, i);
		small_content(i, buf);
		if ((rc = r4_create(db, path, S_IFREG | 0644, 0, 0)) ||
		    (rc = r4_write(db, path, 0, buf, sizeof(buf))))
			goto bad;
		if ((i + 1) % FILES_PER_TXN == 0 || i + 1 == n) {
			snprintf(path, sizeof(path), "commit after file %" PRIu64, i);
			if ((rc = r4_commit(db)))
				goto bad;
		}
	}
	if ((rc = r4_sync(db)) || (rc = used_blocks(db, after)))
		goto bad;
	r4_close(db);
	return 0;
bad:
	r4_close(db);
	return fail("failed at", path, rc);
}

static int small_read(const char *img, uint64_t n, uint64_t *before, uint64_t *after)
{
	uint8_t want[FILE_BYTES], got[FILE_BYTES + 1];
	char path[64];
	size_t len;
	r4_db *db;
	int rc;

	(void)before;
	if (open_db(img, false, &db))
		return 1;
	for (uint64_t i = 0; i < n; i++) {
		snprintf(path, sizeof(path), "/d/f%07" PRIu64, i);
		small_content(i, want);
		if ((rc = r4_read(db, path, 0, got, sizeof(got), &len))) {
			r4_close(db);
			return fail("cannot read", path, rc);
		}
		if (len != FILE_BYTES || memcmp(want, got, FILE_BYTES)) {
			fprintf(stderr, "scale: '%s': wrong content (%zu bytes)\n", path, len);
			r4_close(db);
			return 1;
		}
	}
	rc = used_blocks(db, after);
	r4_close(db);
	return rc ? fail("cannot statfs", img, rc) : 0;
}

static int big_write(const char *img, uint64_t mib, uint64_t *before, uint64_t *after)
{
	uint8_t *buf = malloc(CHUNK);
	r4_db *db = NULL;
	int rc = 0;
	uint64_t c = 0;

	if (!buf || open_db(img, true, &db)) {
		free(buf);
		return 1;
	}
	if ((rc = used_blocks(db, before)) || (rc = r4_create(db, "/big", S_IFREG | 0644, 0, 0)))
		goto bad;
	for (c = 0; c < mib; c++) {
		if (c % CHUNKS_PER_TXN == 0 && (rc = r4_begin(db)))
			goto bad;
		big_content(c, buf);
		if ((rc = r4_write(db, "/big", c * CHUNK, buf, CHUNK)))
			goto bad;
		if (((c + 1) % CHUNKS_PER_TXN == 0 || c + 1 == mib) && (rc = r4_commit(db)))
			goto bad;
	}
	if ((rc = r4_sync(db)) || (rc = used_blocks(db, after)))
		goto bad;
	r4_close(db);
	free(buf);
	return 0;
bad:
	fprintf(stderr, "scale: /big: failed at MiB %" PRIu64 ": %s\n", c, r4_strerror(rc));
	r4_close(db);
	free(buf);
	return 1;
}

static int big_read(const char *img, uint64_t mib, uint64_t *before, uint64_t *after)
{
	uint8_t *want = malloc(CHUNK), *got = malloc(CHUNK);
	r4_db *db = NULL;
	size_t len;
	int rc = 1;

	(void)before;
	if (!want || !got || open_db(img, false, &db))
		goto out;
	for (uint64_t c = 0; c < mib; c++) {
		big_content(c, want);
		if ((rc = r4_read(db, "/big", c * CHUNK, got, CHUNK, &len))) {
			fail("cannot read", "/big", rc);
			rc = 1;
			goto out;
		}
		if (len != CHUNK || memcmp(want, got, CHUNK)) {
			fprintf(stderr, "scale: /big: wrong content in MiB %" PRIu64 "\n", c);
			rc = 1;
			goto out;
		}
	}
	rc = used_blocks(db, after) ? 1 : 0;
out:
	r4_close(db);
	free(want);
	free(got);
	return rc;
}

/* ---- listing (issue 27 item 3) ---- */

#define LS_REPS 5

struct tally {
	uint64_t n, size, bytes;
	char **names;		/* (ls-path only) */
};

/* Count each entry and its name's bytes; add up the sizes (checked: N
 * files of FILE_BYTES). */
static int tally_fn(void *ctx, const char *name, size_t len, uint64_t ino,
		    const struct r4_stat *st)
{
	struct tally *t = ctx;

	(void)ino;
	if (t->names && !(t->names[t->n] = strndup(name, len)))
		return -ENOMEM;
	t->n++;
	t->bytes += len;
	if (st)
		t->size += st->size;
	return 0;
}

static int type_fn(void *ctx, const char *name, size_t len, uint64_t ino, uint32_t type)
{
	(void)type;
	return tally_fn(ctx, name, len, ino, NULL);
}

enum ls_way { LS_NAMES, LS_STAT, LS_READDIR, LS_PATH };

/* The way r4 ls listed before r4_readdir_stat: names, then a path
 * resolved for each. */
static int ls_path(r4_db *db, struct tally *t, uint64_t n)
{
	struct r4_dirpos pos = { 0 };
	struct r4_stat st;
	char path[300];
	uint64_t got;
	int rc;

	if (!(t->names = calloc(n + 2, sizeof(*t->names))))
		return -ENOMEM;
	rc = r4_readdir_stat(db, "/d", &pos, R4_READDIR_NAMES, tally_fn, t);
	got = t->n;
	t->n = 0;
	for (uint64_t i = 0; i < got && !rc; i++) {
		snprintf(path, sizeof(path), "/d/%s", t->names[i]);
		if (!(rc = r4_stat(db, path, &st))) {
			t->n++;
			t->size += st.size;
		}
	}
	for (uint64_t i = 0; i < got; i++)
		free(t->names[i]);
	free(t->names);
	t->names = NULL;
	return rc;
}

static int ls_once(const char *img, enum ls_way way, uint64_t n, double *secs)
{
	struct r4_dirpos pos = { 0 };
	struct tally t = { 0 };
	r4_db *db;
	double t0;
	int rc;

	if (open_db(img, false, &db))
		return 1;
	t0 = now();
	switch (way) {
	case LS_NAMES:
		rc = r4_readdir_stat(db, "/d", &pos, R4_READDIR_NAMES, tally_fn, &t);
		break;
	case LS_STAT:
		rc = r4_readdir_stat(db, "/d", &pos, 0, tally_fn, &t);
		break;
	case LS_READDIR:
		rc = r4_readdir(db, "/d", &pos, type_fn, &t);
		break;
	default:
		rc = ls_path(db, &t, n);
	}
	*secs = now() - t0;
	r4_close(db);
	if (rc)
		return fail("cannot list", "/d", rc);
	/* a directory's size counts its entries: "." (/d) n + 2, ".." (/) 3 */
	if (t.n != n + 2 || ((way == LS_STAT || way == LS_PATH) &&
			     t.size != n * FILE_BYTES + n + 2 + 3)) {
		fprintf(stderr, "scale: /d listed %" PRIu64 " entries, sizes %" PRIu64 "\n", t.n,
			t.size);
		return 1;
	}
	return 0;
}

static int dbl_cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static int ls_phases(const char *img, uint64_t n)
{
	static const char *const names[] = { "ls-names", "ls-stat", "ls-readdir", "ls-path" };

	for (int way = LS_NAMES; way <= LS_PATH; way++) {
		double secs[LS_REPS];

		for (int r = 0; r < LS_REPS; r++)
			if (ls_once(img, (enum ls_way)way, n, &secs[r]))
				return 1;
		qsort(secs, LS_REPS, sizeof(secs[0]), dbl_cmp);
		printf("phase=%s n=%" PRIu64 " secs=%.4f min=%.4f reps=%d entries=%" PRIu64 "\n",
		       names[way], n, secs[LS_REPS / 2], secs[0], LS_REPS, n + 2);
		fflush(stdout);
	}
	return 0;
}

/* ---- one operation at a time, against the number of files (issue 27 item 4) ---- */

#define BUILD_PER_TXN 50000	/* the volume's build: big transactions */
#define OPS_REPS 3

static struct {
	struct ops_names nm;	/* the paths (ops.h) */
	uint64_t m;		/* operations per measurement */
	uint64_t seed;
	uint64_t hot;		/* stats of only this many files, spread evenly (0: all) */
} ops;

static int ops_build(const char *img, uint64_t n, uint64_t *before, uint64_t *after)
{
	uint8_t buf[FILE_BYTES];
	char path[96];
	uint64_t fan = ops.nm.fan, dirs = ops.nm.tree ? (n + fan - 1) / fan : 0;	/* leaf dirs */
	r4_db *db;
	int rc;
	double t0 = now();

	snprintf(path, sizeof(path), "/d");
	if (open_db(img, true, &db))
		return 1;
	if ((rc = used_blocks(db, before)) || (rc = r4_begin(db)) ||
	    (rc = r4_mkdir(db, "/d", 0755, 0, 0)))
		goto bad;
	/* tree3: the leaf directories of the files there are, and their parents */
	for (uint64_t d = 0; d < dirs; d++) {
		ops_dir(&ops.nm, d * fan, path, sizeof(path));
		path[strlen(path) - 1] = '\0';
		if (d % fan == 0) {
			char up[96];

			snprintf(up, sizeof(up), "%s", path);
			*strrchr(up, '/') = '\0';
			if ((rc = r4_mkdir(db, up, 0755, 0, 0)))
				goto bad;
		}
		if ((rc = r4_mkdir(db, path, 0755, 0, 0)))
			goto bad;
	}
	for (uint64_t i = 0; i < n; i++) {
		if (i && i % BUILD_PER_TXN == 0 && ((rc = r4_commit(db)) || (rc = r4_begin(db))))
			goto bad;
		ops_path(&ops.nm, i, path, sizeof(path));
		small_content(i, buf);
		if ((rc = r4_create(db, path, S_IFREG | 0644, 0, 0)) ||
		    (rc = r4_write(db, path, 0, buf, sizeof(buf))))
			goto bad;
	}
	if ((rc = r4_commit(db)) || (rc = r4_sync(db)) || (rc = used_blocks(db, after)))
		goto bad;
	r4_close(db);
	printf("result=build n=%" PRIu64 " shape=%s dirs=%" PRIu64 " secs=%.2f\n", n,
	       ops.nm.tree ? "tree3" : "flat", 1 + dirs + (dirs + fan - 1) / fan, now() - t0);
	return 0;
bad:
	r4_close(db);
	return fail("build failed at", path, rc);
}

static double cpu_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* lookup + stat of ops.m random existing paths, OPS_REPS times on one
 * open (the first rep starts from an empty cache): microseconds per
 * operation, wall and CPU, the median rep and the first. */
static int ops_stat(const char *img, uint64_t n, uint64_t *before, uint64_t *after)
{
	double us[OPS_REPS], cpu[OPS_REPS], first, t0, c0;
	uint64_t *idx = malloc(ops.m * sizeof(*idx)), x = ops.seed;
	struct r4_stat st;
	char path[96];
	r4_db *db;
	int rc = 0;

	(void)before;
	(void)after;
	if (!idx || open_db(img, false, &db)) {
		free(idx);
		return 1;
	}
	for (int r = 0; r < OPS_REPS && !rc; r++) {
		/* the paths drawn outside the timing */
		for (uint64_t k = 0; k < ops.m; k++)
			idx[k] = ops.hot ? mix64(x++) % ops.hot * (n / ops.hot) : mix64(x++) % n;
		t0 = now();
		c0 = cpu_now();
		for (uint64_t k = 0; k < ops.m && !rc; k++) {
			ops_path(&ops.nm, idx[k], path, sizeof(path));
			if (!(rc = r4_stat(db, path, &st)) && st.size != FILE_BYTES)
				rc = -EIO;
		}
		cpu[r] = (cpu_now() - c0) / (double)ops.m * 1e6;
		us[r] = (now() - t0) / (double)ops.m * 1e6;
	}
	r4_close(db);
	free(idx);
	if (rc)
		return fail("cannot stat", path, rc);
	first = us[0];
	qsort(us, OPS_REPS, sizeof(us[0]), dbl_cmp);
	qsort(cpu, OPS_REPS, sizeof(cpu[0]), dbl_cmp);
	printf("result=stat n=%" PRIu64 " shape=%s m=%" PRIu64 " us=%.2f cpu_us=%.2f first=%.2f\n",
	       n, ops.nm.tree ? "tree3" : "flat", ops.m, us[OPS_REPS / 2], cpu[OPS_REPS / 2],
	       first);
	return 0;
}

/* ops.m new files of FILE_BYTES (ops_new_path), committed every
 * FILES_PER_TXN, as a user's batch; then (untimed) every one stat'ed. */
static int ops_create(const char *img, uint64_t n, uint64_t *before, uint64_t *after)
{
	uint8_t buf[FILE_BYTES];
	uint64_t m = ops.m;
	struct r4_stat st;
	char path[96];
	r4_db *db;
	double t0, c0;
	int rc = 0;

	(void)before;
	if (open_db(img, true, &db))
		return 1;
	t0 = now();
	c0 = cpu_now();
	for (uint64_t k = 0; k < m; k++) {
		if (k % FILES_PER_TXN == 0 && (rc = r4_begin(db)))
			goto bad;
		ops_new_path(&ops.nm, k, n, ops.seed, path, sizeof(path));
		small_content(n + k, buf);
		if ((rc = r4_create(db, path, S_IFREG | 0644, 0, 0)) ||
		    (rc = r4_write(db, path, 0, buf, sizeof(buf))))
			goto bad;
		if (((k + 1) % FILES_PER_TXN == 0 || k + 1 == m) && (rc = r4_commit(db)))
			goto bad;
	}
	t0 = now() - t0;
	c0 = cpu_now() - c0;
	for (uint64_t k = 0; k < m; k++) {
		ops_new_path(&ops.nm, k, n, ops.seed, path, sizeof(path));
		if ((rc = r4_stat(db, path, &st)) || (st.size != FILE_BYTES && (rc = -EIO)))
			goto bad;
	}
	if ((rc = r4_sync(db)) || (rc = used_blocks(db, after)))
		goto bad;
	r4_close(db);
	printf("result=create n=%" PRIu64 " shape=%s m=%" PRIu64 " us=%.2f cpu_us=%.2f names=%s\n", n,
	       ops.nm.tree ? "tree3" : "flat", m, t0 / (double)m * 1e6, c0 / (double)m * 1e6,
	       ops.nm.append ? "appended" : "random");
	return 0;
bad:
	r4_close(db);
	return fail("create failed at", path, rc);
}

/* ---- driver ---- */

typedef int (*phase_fn)(const char *img, uint64_t n, uint64_t *before, uint64_t *after);

/*
 * Run fn in a child; print its line.  The child sends the used-block counts
 * back through a pipe; wait4 gives its own peak RSS.
 */
static int run_phase(const char *name, phase_fn fn, const char *img, uint64_t n, double units,
		     const char *unit, uint64_t *before, uint64_t *after)
{
	uint64_t res[2] = { 0, 0 };
	struct rusage ru;
	int pfd[2], status;
	double t0, secs;
	pid_t pid;

	fflush(stdout);
	if (pipe(pfd))
		return perror("scale: pipe"), 1;
	t0 = now();
	if ((pid = fork()) < 0)
		return perror("scale: fork"), 1;
	if (pid == 0) {
		int rc;

		close(pfd[0]);
		rc = fn(img, n, &res[0], &res[1]);
		fflush(stdout);
		if (write(pfd[1], res, sizeof(res)) != (ssize_t)sizeof(res))
			rc = 1;
		_exit(rc);
	}
	close(pfd[1]);
	if (read(pfd[0], res, sizeof(res)) != (ssize_t)sizeof(res))
		memset(res, 0, sizeof(res));
	close(pfd[0]);
	if (wait4(pid, &status, 0, &ru) < 0)
		return perror("scale: wait4"), 1;
	secs = now() - t0;
	if (!WIFEXITED(status) || WEXITSTATUS(status)) {
		printf("phase=%s n=%" PRIu64 " FAILED status=%d secs=%.2f maxrss_kib=%ld\n", name,
		       n, status, secs, ru.ru_maxrss);
		return 1;
	}
	if (res[0])
		*before = res[0];
	*after = res[1];
	printf("phase=%s n=%" PRIu64 " secs=%.3f rate=%.1f unit=%s maxrss_kib=%ld used_after=%" PRIu64
	       "\n",
	       name, n, secs, units / secs, unit, ru.ru_maxrss, res[1]);
	return 0;
}

static int make_image(const char *img, uint64_t size)
{
	struct r4_mkfs_opts o;
	int rc;

	r4_mkfs_defaults(&o);
	unlink(img);
	if ((rc = r4_mkfs(img, size, &o)))
		return fail("cannot make image", img, rc);
	return 0;
}

/* stat(2) of ops.m random files under mnt (an r4fuse mount of a volume
 * ops built), OPS_REPS times; wall microseconds per call: the median rep
 * and the first (the mount's caches and the kernel's cold). */
static int ops_mstat(const char *mnt, uint64_t n)
{
	double us[OPS_REPS], first, t0;
	uint64_t x = ops.seed;
	struct stat st;
	char path[PATH_MAX];
	size_t l = strlen(mnt);

	if (l + 64 > sizeof(path))
		return fail("mount point too long", mnt, -ENAMETOOLONG);
	memcpy(path, mnt, l);
	for (int r = 0; r < OPS_REPS; r++) {
		t0 = now();
		for (uint64_t k = 0; k < ops.m; k++) {
			ops_path(&ops.nm, mix64(x++) % n, path + l, sizeof(path) - l);
			if (stat(path, &st) || st.st_size != FILE_BYTES) {
				perror(path);
				return 1;
			}
		}
		us[r] = (now() - t0) / (double)ops.m * 1e6;
	}
	first = us[0];
	qsort(us, OPS_REPS, sizeof(us[0]), dbl_cmp);
	printf("result=mstat n=%" PRIu64 " shape=%s m=%" PRIu64 " us=%.2f first=%.2f\n", n,
	       ops.nm.tree ? "tree3" : "flat", ops.m, us[OPS_REPS / 2], first);
	return 0;
}

/* ops_create's file k under the mount (path holds its l bytes), with an
 * 'm' after: a name of its own at the same place. */
static void mount_new_path(uint64_t k, uint64_t n, char *path, size_t l)
{
	ops_new_path(&ops.nm, k, n, ops.seed, path + l, PATH_MAX - l - 1);
	strcat(path, "m");
}

/* Creates through the mount, as ops_create makes them through the API:
 * wall microseconds per create, syncs included. */
static int ops_mcreate(const char *mnt, uint64_t n)
{
	uint8_t buf[FILE_BYTES];
	uint64_t m = ops.m < n ? ops.m : n;
	char path[PATH_MAX];
	size_t l = strlen(mnt);
	struct stat st;
	double t0;
	int fd, root;

	if (l + 64 > sizeof(path))
		return fail("mount point too long", mnt, -ENAMETOOLONG);
	if ((root = open(mnt, O_RDONLY | O_DIRECTORY)) < 0) {
		perror(mnt);
		return 1;
	}
	memcpy(path, mnt, l);
	t0 = now();
	for (uint64_t k = 0; k < m; k++) {
		mount_new_path(k, n, path, l);
		small_content(n + k, buf);
		if ((fd = open(path, O_CREAT | O_EXCL | O_WRONLY, 0644)) < 0 ||
		    write(fd, buf, sizeof(buf)) != (ssize_t)sizeof(buf) || close(fd) ||
		    (((k + 1) % FILES_PER_TXN == 0 || k + 1 == m) && syncfs(root))) {
			perror(path);
			close(root);
			return 1;
		}
	}
	t0 = now() - t0;
	close(root);
	for (uint64_t k = 0; k < m; k++) {
		mount_new_path(k, n, path, l);
		if (stat(path, &st) || st.st_size != FILE_BYTES) {
			perror(path);
			return 1;
		}
	}
	printf("result=mcreate n=%" PRIu64 " shape=%s m=%" PRIu64 " us=%.2f\n", n,
	       ops.nm.tree ? "tree3" : "flat", m, t0 / (double)m * 1e6);
	return 0;
}

static int ops_main(int argc, char **argv)
{
	uint64_t n, before = 0, after = 0, m;
	char *end_n, *end_m;
	struct r4_info in;
	r4_db *db;

	if (argc != 7 || (strcmp(argv[4], "flat") && strcmp(argv[4], "tree3"))) {
		fprintf(stderr, "usage: scale ops|mstat|mcreate IMG|MNT N flat|tree3 M SEED\n");
		return 2;
	}
	n = strtoull(argv[3], &end_n, 10);
	m = strtoull(argv[5], &end_m, 10);
	ops.seed = strtoull(argv[6], NULL, 10);
	if (*end_n || *end_m || !n || !m) {
		fprintf(stderr, "scale: bad count '%s' or '%s'\n", argv[3], argv[5]);
		return 2;
	}
	ops_names_init(&ops.nm, n, !strcmp(argv[4], "tree3"),
		       getenv("R4_BENCH_OPS_APPEND") && strcmp(getenv("R4_BENCH_OPS_APPEND"), "0"));
	if (getenv("R4_BENCH_OPS_HOT") && (ops.hot = strtoull(getenv("R4_BENCH_OPS_HOT"), NULL, 10)) > n)
		ops.hot = n;
	if (!strcmp(argv[1], "mstat") || !strcmp(argv[1], "mcreate")) {
		ops.m = m;
		return !strcmp(argv[1], "mstat") ? ops_mstat(argv[2], n) : ops_mcreate(argv[2], n);
	}
	if (make_image(argv[2], 256ull * 1024 * 1024 + (n + 2 * m) * 4096) ||
	    open_db(argv[2], false, &db))
		return 1;
	r4_info(db, &in);	/* the clean bound an open takes (r4.h: cache_nodes) */
	r4_close(db);
	printf("ops n=%" PRIu64 " shape=%s fan=%" PRIu64 " seed=%" PRIu64 " cache_kib=%zu hot=%" PRIu64
	       "\n", n, argv[4], ops.nm.tree ? ops.nm.fan : n, ops.seed,
	       in.cache_nodes * (in.blocksize / 1024), ops.hot);
	if (run_phase("ops-build", ops_build, argv[2], n, (double)n, "files/s", &before, &after))
		return 1;
	ops.m = m;
	if (run_phase("ops-stat", ops_stat, argv[2], n, (double)(m * OPS_REPS), "ops/s", &before,
		      &after))
		return 1;
	/* no more creates than files: the directories stay near their size */
	ops.m = m < n ? m : n;
	return run_phase("ops-create", ops_create, argv[2], n, (double)ops.m, "ops/s", &before,
			 &after);
}

int main(int argc, char **argv)
{
	uint64_t n, before = 0, after = 0, after_read = 0;
	char *end;
	bool small;
	int rc;

	if (argc > 1 && (!strcmp(argv[1], "ops") || !strcmp(argv[1], "mstat") ||
			 !strcmp(argv[1], "mcreate")))
		return ops_main(argc, argv);
	if (argc != 4 || (strcmp(argv[1], "small") && strcmp(argv[1], "big") &&
			  strcmp(argv[1], "ls"))) {
		fprintf(stderr, "usage: scale small IMG N | scale big IMG MIB | scale ls IMG N |\n"
				"       scale ops|mstat|mcreate IMG|MNT N flat|tree3 M SEED\n");
		return 2;
	}
	small = strcmp(argv[1], "big");
	n = strtoull(argv[3], &end, 10);
	if (*end || !n) {
		fprintf(stderr, "scale: bad count '%s'\n", argv[3]);
		return 2;
	}
	/* 4 KiB per small file (ten times what it should take) or the file
	   plus a quarter, at least 256 MiB: sparse, so room costs nothing */
	if (make_image(argv[2], small ? 256ull * 1024 * 1024 + n * 4096 : n * CHUNK / 4 * 5))
		return 1;
	if (!strcmp(argv[1], "ls"))
		return run_phase("small-write", small_write, argv[2], n, (double)n, "files/s",
				 &before, &after) ||
		       ls_phases(argv[2], n);
	if (small) {
		rc = run_phase("small-write", small_write, argv[2], n, (double)n, "files/s", &before,
			       &after) ||
		     run_phase("small-read", small_read, argv[2], n, (double)n, "files/s", &before,
			       &after_read);
	} else {
		rc = run_phase("big-write", big_write, argv[2], n, (double)n, "MiB/s", &before,
			       &after) ||
		     run_phase("big-read", big_read, argv[2], n, (double)n, "MiB/s", &before,
			       &after_read);
	}
	if (rc)
		return 1;
	if (after_read != after)
		printf("warning: used blocks %" PRIu64 " after writing, %" PRIu64 " after reopen\n",
		       after, after_read);
	if (small)
		printf("space n=%" PRIu64 " used_before=%" PRIu64 " used_after=%" PRIu64
		       " bytes_per_file=%.1f\n",
		       n, before, after_read, (double)(after_read - before) * 4096 / (double)n);
	else
		printf("space mib=%" PRIu64 " used_before=%" PRIu64 " used_after=%" PRIu64
		       " overhead_bytes=%" PRId64 "\n",
		       n, before, after_read,
		       (int64_t)((after_read - before) * 4096) - (int64_t)(n * CHUNK));
	return 0;
}
