/*
 * group.c - the group commit benchmark's workloads (issue 27 item 2);
 * bench/group.sh mounts, unmounts, counts and prints the table.
 *
 *   group raw DIR N              N times a 4 KiB pwrite + fdatasync of one
 *                                file in DIR: the machine's raw sync rate
 *   group files DIR P K [CNT]    P processes, each with its own two files
 *                                DIR/gI.a and DIR/gI.b (made, 100 bytes,
 *                                fsync'd before the clock starts), doing K
 *                                times: pwrite 100 new bytes at 0 of each,
 *                                fsync both
 *   group ctl DIR P K [CNT]      the same change through the mount's control
 *                                file DIR/..reiser4 (DIR: the mount point):
 *                                each process opens it read-write once, and
 *                                K times writes the one R4L command
 *                                `/gI.a <- #s100:...; /gI.b <- #s100:...` at
 *                                0 and reads its answer (the two values) back:
 *                                the command runs at the read, durable when
 *                                it returns (docs/r4fuse.md)
 *   group ctlw DIR P K [CNT]     the same, the control file opened write-only:
 *                                each command runs at its write(2) (one FUSE
 *                                round trip a change), which returns its
 *                                error; no answer is read
 *   group files-check DIR P K    every file holds its last iteration's bytes
 *   group sqlite DB P K [CNT]    P processes on one SQLite database DB (made
 *                                here: WAL, a table of 2P rows of 100 bytes),
 *                                each doing K times BEGIN IMMEDIATE, UPDATE
 *                                of its own two rows, COMMIT (synchronous=
 *                                FULL); then reopened read-only: every row
 *                                holds its last bytes, integrity_check ok
 *
 * Each process has files (rows) of its own: what separate programs
 * sharing one volume do; they only share the volume's commits (SQLite:
 * the database's write lock and WAL).  The processes are forked first,
 * set up, and wait on a pipe; the clock runs from releasing them to the
 * last one's exit.  Durable changes per second = P * K / secs.
 *
 * Syncs: CNT names a file of two 64-bit counters (syncs, journal header
 * writes = commits) that bench/group_preload.c, preloaded into r4fuse,
 * keeps in shared memory; `files` reads it before and after the clock.
 * SQLite's xSync calls are counted by a VFS shim (as commit.c), summed
 * over the processes in shared memory.  Output, one line each:
 *
 *   phase=raw n=N secs=S rate=R unit=syncs/s
 *   phase=files procs=P n=P*K secs=S rate=R unit=changes/s syncs=X commits=C
 *   phase=ctl procs=P n=P*K secs=S rate=R unit=changes/s syncs=X commits=C
 *   phase=ctlw procs=P n=P*K secs=S rate=R unit=changes/s syncs=X commits=C
 *   phase=sqlite procs=P n=P*K secs=S rate=R unit=changes/s syncs=X commits=P*K
 *
 * SQLite's busy handler here retries after 100 us, not sqlite3_busy_timeout's
 * back-off of 1 ms and more: the peer's best rate with several writers.
 * Exit status 0 when every call worked and the read-back is right, 1
 * otherwise, 2 for usage.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <sqlite3.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench.h"
#include "sqcount.h"

/* The bytes of file f (0, 1) of process p after iteration i (0: the first). */
static void content(unsigned p, unsigned f, uint64_t i, uint8_t *out)
{
	small_content(((uint64_t)(p * 2 + f) << 32) | i, out);
}

static int fail(const char *what, const char *subject)
{
	fprintf(stderr, "group: %s %s: %s\n", what, subject, strerror(errno));
	return 1;
}

/* ---- processes ---- */

/* Fork p workers running fn(i, arg) after their setup (set(i, arg)), all
 * released at once; the seconds from release to the last exit in *secs. */
static int run_procs(unsigned p, int (*set)(unsigned, void *), int (*fn)(unsigned, void *),
		     void *arg, double *secs, void (*at_start)(void *))
{
	int go[2], ready[2], bad = 0;
	pid_t *pid = calloc(p, sizeof(*pid));
	double t0;
	char c;

	if (!pid || pipe(go) || pipe(ready))
		return fail("cannot", "fork workers");
	for (unsigned i = 0; i < p; i++) {
		if ((pid[i] = fork()) < 0)
			return fail("cannot", "fork");
		if (!pid[i]) {
			int rc = set(i, arg);

			close(go[1]);
			close(ready[0]);
			if (write(ready[1], rc ? "x" : "y", 1) != 1 || rc)
				_exit(1);
			if (read(go[0], &c, 1) != 0)	/* (EOF: released) */
				_exit(1);
			_exit(fn(i, arg) ? 1 : 0);
		}
	}
	close(go[0]);
	close(ready[1]);
	for (unsigned i = 0; i < p; i++)
		if (read(ready[0], &c, 1) != 1 || c != 'y')
			bad = 1;
	if (at_start)
		at_start(arg);
	t0 = now();
	close(go[1]);
	for (unsigned i = 0; i < p; i++) {
		int st;

		if (waitpid(pid[i], &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st))
			bad = 1;
	}
	*secs = now() - t0;
	close(ready[0]);
	free(pid);
	return bad;
}

/* ---- raw syncs ---- */

static int do_raw(const char *dir, uint64_t n)
{
	char path[4096];
	uint8_t buf[4096];
	double t0, secs;
	int fd;

	snprintf(path, sizeof(path), "%s/raw.dat", dir);
	if ((fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644)) < 0)
		return fail("cannot create", path);
	memset(buf, 'r', sizeof(buf));
	/* the block exists first: each round then overwrites, as a commit does */
	if (pwrite(fd, buf, sizeof(buf), 0) != (ssize_t)sizeof(buf) || fsync(fd))
		return fail("cannot write", path);
	t0 = now();
	for (uint64_t i = 0; i < n; i++) {
		buf[0] = (uint8_t)i;
		if (pwrite(fd, buf, sizeof(buf), 0) != (ssize_t)sizeof(buf) || fdatasync(fd))
			return fail("cannot write", path);
	}
	secs = now() - t0;
	close(fd);
	unlink(path);
	printf("phase=raw n=%" PRIu64 " secs=%.3f rate=%.1f unit=syncs/s\n", n, secs,
	       (double)n / secs);
	return 0;
}

/* ---- files on a mount ---- */

struct files {
	const char *dir;
	uint64_t k;
	int fd[2];
	int ctl;			/* ctl: the control file, read-write ... */
	bool wronly;			/* ... or (ctlw) write-only */
	volatile uint64_t *cnt;		/* the preload's counters, or NULL */
	uint64_t cnt0[2];
};

static void file_path(const struct files *w, unsigned p, unsigned f, char *path, size_t len)
{
	snprintf(path, len, "%s/g%u.%c", w->dir, p, f ? 'b' : 'a');
}

static int files_set(unsigned p, void *arg)
{
	struct files *w = arg;
	uint8_t rec[FILE_BYTES];
	char path[4096];

	for (unsigned f = 0; f < 2; f++) {
		file_path(w, p, f, path, sizeof(path));
		content(p, f, 0, rec);
		if ((w->fd[f] = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644)) < 0 ||
		    pwrite(w->fd[f], rec, sizeof(rec), 0) != (ssize_t)sizeof(rec) || fsync(w->fd[f]))
			return fail("cannot make", path);
	}
	return 0;
}

static int files_run(unsigned p, void *arg)
{
	struct files *w = arg;
	uint8_t rec[FILE_BYTES];

	for (uint64_t i = 1; i <= w->k; i++) {
		for (unsigned f = 0; f < 2; f++) {
			content(p, f, i, rec);
			if (pwrite(w->fd[f], rec, sizeof(rec), 0) != (ssize_t)sizeof(rec))
				return fail("cannot write", "a file");
		}
		for (unsigned f = 0; f < 2; f++)
			if (fsync(w->fd[f]))
				return fail("cannot fsync", "a file");
	}
	return 0;
}

/* The command of process p's change i into cmd (its length), and the
 * answer it reads back into ans (its length): each value, a newline added
 * unless it ends in one. */
static size_t ctl_command(unsigned p, uint64_t i, char *cmd, char *ans, size_t *nans)
{
	uint8_t rec[FILE_BYTES];
	size_t n = 0;

	*nans = 0;
	for (unsigned f = 0; f < 2; f++) {
		content(p, f, i, rec);
		n += (size_t)sprintf(cmd + n, "%s/g%u.%c <- #s%d:", f ? "; " : "", p, f ? 'b' : 'a',
				     FILE_BYTES);
		memcpy(cmd + n, rec, FILE_BYTES);
		n += FILE_BYTES;
		memcpy(ans + *nans, rec, FILE_BYTES);
		*nans += FILE_BYTES;
		if (rec[FILE_BYTES - 1] != '\n')
			ans[(*nans)++] = '\n';
	}
	cmd[n++] = '\n';
	return n;
}

static int ctl_set(unsigned p, void *arg)
{
	struct files *w = arg;
	char path[4096];

	if (files_set(p, arg))
		return 1;
	snprintf(path, sizeof(path), "%s/..reiser4", w->dir);
	if ((w->ctl = open(path, w->wronly ? O_WRONLY : O_RDWR)) < 0)
		return fail("cannot open", path);
	return 0;
}

static int ctl_run(unsigned p, void *arg)
{
	struct files *w = arg;
	char cmd[512], want[512], got[4096];
	size_t nwant;

	for (uint64_t i = 1; i <= w->k; i++) {
		size_t n = ctl_command(p, i, cmd, want, &nwant);
		ssize_t r;

		if (w->wronly) {	/* (each write(2) runs its command: the next follows) */
			if (write(w->ctl, cmd, n) != (ssize_t)n)
				return fail("cannot write", "the control file");
			continue;
		}
		if (pwrite(w->ctl, cmd, n, 0) != (ssize_t)n)
			return fail("cannot write", "the control file");
		if ((r = pread(w->ctl, got, sizeof(got), 0)) < 0)
			return fail("cannot read", "the control file");
		if ((size_t)r != nwant || memcmp(got, want, nwant)) {
			fprintf(stderr, "group: process %u, change %" PRIu64 ": answer '%.*s'\n", p, i,
				(int)r, got);
			return 1;
		}
	}
	return 0;
}

static void files_start(void *arg)
{
	struct files *w = arg;

	if (w->cnt)
		memcpy(w->cnt0, (const void *)w->cnt, sizeof(w->cnt0));
}

static volatile uint64_t *map_counts(const char *path)
{
	int fd = open(path, O_RDWR);
	void *m;

	if (fd < 0)
		return NULL;
	m = mmap(NULL, 2 * sizeof(uint64_t), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	return m == MAP_FAILED ? NULL : m;
}

static int do_files(const char *dir, unsigned p, uint64_t k, const char *cnt, const char *mode)
{
	struct files w = {.dir = dir, .k = k, .wronly = !strcmp(mode, "ctlw")};
	bool ctl = strcmp(mode, "files");
	double secs;

	if (cnt && !(w.cnt = map_counts(cnt)))
		return fail("cannot map", cnt);
	if (run_procs(p, ctl ? ctl_set : files_set, ctl ? ctl_run : files_run, &w, &secs,
		      files_start))
		return 1;
	printf("phase=%s procs=%u", mode, p);
	printf(" n=%" PRIu64 " secs=%.3f rate=%.1f unit=changes/s", p * k, secs,
	       (double)(p * k) / secs);
	if (w.cnt)
		printf(" syncs=%" PRIu64 " commits=%" PRIu64, w.cnt[0] - w.cnt0[0],
		       w.cnt[1] - w.cnt0[1]);
	printf("\n");
	return 0;
}

static int do_files_check(const char *dir, unsigned p, uint64_t k)
{
	struct files w = {.dir = dir, .k = k};
	uint8_t want[FILE_BYTES], got[FILE_BYTES + 1];
	char path[4096];

	for (unsigned i = 0; i < p; i++) {
		for (unsigned f = 0; f < 2; f++) {
			int fd;
			ssize_t n;

			file_path(&w, i, f, path, sizeof(path));
			if ((fd = open(path, O_RDONLY)) < 0)
				return fail("cannot open", path);
			n = read(fd, got, sizeof(got));
			close(fd);
			content(i, f, k, want);
			if (n != FILE_BYTES || memcmp(want, got, FILE_BYTES)) {
				fprintf(stderr, "group: %s: wrong content (%zd bytes)\n", path, n);
				return 1;
			}
		}
	}
	return 0;
}

/* ---- SQLite, with a VFS that counts xSync calls (sqcount.h) ---- */

static int sq_exec(sqlite3 *db, const char *sql)
{
	char *err = NULL;

	if (sqlite3_exec(db, sql, NULL, NULL, &err) != SQLITE_OK) {
		fprintf(stderr, "group: sqlite: '%s': %s\n", sql, err ? err : "?");
		sqlite3_free(err);
		return 1;
	}
	return 0;
}

static int busy(void *arg, int tries)
{
	(void)arg;
	usleep(100);
	return tries < 1000000;
}

struct rows {
	const char *path;
	uint64_t k;
	sqlite3 *db;
	sqlite3_stmt *begin, *up, *commit;
};

static int rows_set(unsigned p, void *arg)
{
	struct rows *w = arg;

	(void)p;
	/* (the busy handler first: the first opener of a WAL database locks
	 * it a moment to rebuild its index, and the others would fail) */
	if (sqlite3_open_v2(w->path, &w->db, SQLITE_OPEN_READWRITE, SQ_COUNT_VFS) != SQLITE_OK ||
	    sqlite3_busy_handler(w->db, busy, NULL) != SQLITE_OK ||
	    sq_exec(w->db, "PRAGMA synchronous=FULL") ||
	    sqlite3_prepare_v2(w->db, "BEGIN IMMEDIATE", -1, &w->begin, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(w->db, "UPDATE t SET v=? WHERE id=?", -1, &w->up, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(w->db, "COMMIT", -1, &w->commit, NULL) != SQLITE_OK) {
		fprintf(stderr, "group: sqlite: cannot open %s: %s\n", w->path,
			w->db ? sqlite3_errmsg(w->db) : "out of memory");
		return 1;
	}
	return 0;
}

static int step(sqlite3_stmt *st)
{
	int rc = sqlite3_step(st);

	sqlite3_reset(st);
	return rc != SQLITE_DONE;
}

static int rows_run(unsigned p, void *arg)
{
	struct rows *w = arg;
	uint8_t rec[FILE_BYTES];

	for (uint64_t i = 1; i <= w->k; i++) {
		if (step(w->begin))
			goto bad;
		for (unsigned f = 0; f < 2; f++) {
			content(p, f, i, rec);
			if (sqlite3_bind_blob(w->up, 1, rec, sizeof(rec), SQLITE_TRANSIENT) ||
			    sqlite3_bind_int(w->up, 2, (int)(p * 2 + f + 1)) || step(w->up))
				goto bad;
		}
		if (step(w->commit))
			goto bad;
	}
	sqlite3_finalize(w->begin);
	sqlite3_finalize(w->up);
	sqlite3_finalize(w->commit);
	return sqlite3_close(w->db) != SQLITE_OK;
bad:
	fprintf(stderr, "group: sqlite: process %u: %s\n", p, sqlite3_errmsg(w->db));
	return 1;
}

static int sq_make(const char *path, unsigned p)
{
	uint8_t rec[FILE_BYTES];
	sqlite3_stmt *ins = NULL;
	sqlite3 *db = NULL;
	int bad = 0;

	unlink(path);
	if (sqlite3_open(path, &db) != SQLITE_OK || sq_exec(db, "PRAGMA journal_mode=WAL") ||
	    sq_exec(db, "CREATE TABLE t(id INTEGER PRIMARY KEY, v BLOB)") ||
	    sqlite3_prepare_v2(db, "INSERT INTO t VALUES(?, ?)", -1, &ins, NULL) != SQLITE_OK)
		bad = 1;
	for (unsigned i = 0; i < p && !bad; i++) {
		for (unsigned f = 0; f < 2 && !bad; f++) {
			content(i, f, 0, rec);
			bad = sqlite3_bind_int(ins, 1, (int)(i * 2 + f + 1)) ||
			      sqlite3_bind_blob(ins, 2, rec, sizeof(rec), SQLITE_TRANSIENT) || step(ins);
		}
	}
	if (bad)
		fprintf(stderr, "group: sqlite: cannot make %s: %s\n", path,
			db ? sqlite3_errmsg(db) : "out of memory");
	sqlite3_finalize(ins);
	sqlite3_close(db);
	return bad;
}

static int sq_check(const char *path, unsigned p, uint64_t k)
{
	uint8_t want[FILE_BYTES];
	sqlite3_stmt *sel = NULL;
	sqlite3 *db = NULL;
	unsigned rows = 0;
	int bad = 1;

	if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(db, "PRAGMA integrity_check", -1, &sel, NULL) != SQLITE_OK ||
	    sqlite3_step(sel) != SQLITE_ROW || strcmp((const char *)sqlite3_column_text(sel, 0), "ok")) {
		fprintf(stderr, "group: sqlite: integrity_check: %s\n", sqlite3_errmsg(db));
		goto out;
	}
	sqlite3_finalize(sel);
	if (sqlite3_prepare_v2(db, "SELECT id, v FROM t ORDER BY id", -1, &sel, NULL) != SQLITE_OK)
		goto out;
	while (sqlite3_step(sel) == SQLITE_ROW) {
		int id = sqlite3_column_int(sel, 0);

		content((unsigned)(id - 1) / 2, (unsigned)(id - 1) % 2, k, want);
		if (id != (int)rows + 1 || sqlite3_column_bytes(sel, 1) != FILE_BYTES ||
		    memcmp(sqlite3_column_blob(sel, 1), want, FILE_BYTES)) {
			fprintf(stderr, "group: sqlite: row %d: wrong content\n", id);
			goto out;
		}
		rows++;
	}
	bad = rows != 2 * p;
	if (bad)
		fprintf(stderr, "group: sqlite: %u rows, expected %u\n", rows, 2 * p);
out:
	sqlite3_finalize(sel);
	sqlite3_close(db);
	return bad;
}

static int do_sqlite(const char *path, unsigned p, uint64_t k)
{
	uint64_t *count = mmap(NULL, sizeof(uint64_t), PROT_READ | PROT_WRITE,
			       MAP_SHARED | MAP_ANONYMOUS, -1, 0);	/* (the processes') */
	struct rows w = {.path = path, .k = k};
	double secs;

	if (count == MAP_FAILED)
		return fail("cannot map", "a counter");
	if (sq_count_register(count) != SQLITE_OK || sq_make(path, p))
		return 1;
	*sq_syncs = 0;
	if (run_procs(p, rows_set, rows_run, &w, &secs, NULL) || sq_check(path, p, k))
		return 1;
	printf("phase=sqlite procs=%u n=%" PRIu64 " secs=%.3f rate=%.1f unit=changes/s syncs=%" PRIu64
	       " commits=%" PRIu64 "\n", p, p * k, secs, (double)(p * k) / secs, *sq_syncs, p * k);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 4 && !strcmp(argv[1], "raw"))
		return do_raw(argv[2], strtoull(argv[3], NULL, 10));
	if ((argc == 5 || argc == 6) && (!strcmp(argv[1], "files") || !strcmp(argv[1], "ctl") ||
					 !strcmp(argv[1], "ctlw")))
		return do_files(argv[2], (unsigned)atoi(argv[3]), strtoull(argv[4], NULL, 10),
				argc == 6 ? argv[5] : NULL, argv[1]);
	if (argc == 5 && !strcmp(argv[1], "files-check"))
		return do_files_check(argv[2], (unsigned)atoi(argv[3]), strtoull(argv[4], NULL, 10));
	if (argc == 5 && !strcmp(argv[1], "sqlite"))
		return do_sqlite(argv[2], (unsigned)atoi(argv[3]), strtoull(argv[4], NULL, 10));
	fprintf(stderr, "usage: group raw DIR N | files|ctl|ctlw DIR P K [CNT] | files-check DIR P K |"
		" sqlite DB P K\n");
	return 2;
}
