/*
 * atomic.c - one atomic R4L script of N small files beside SQLite's one
 * transaction of the same rows (issue 27 item 1).  bench/run.sh times
 * each side as a whole process (start, open, work, durable commit, exit),
 * so both pay the same kind of costs; this program makes the script, does
 * the SQLite side and checks both:
 *
 *   atomic script FILE N DIRS   write the script: DIRS directories
 *                               (/..new/(name <- "dNN", type <- directory)),
 *                               then N lines /dNN/fNNNNNNN <- "<100 bytes>",
 *                               file i in directory i % DIRS
 *   atomic check IMG N DIRS     open IMG read-only, read every file back and
 *                               compare its bytes; count each directory's
 *                               entries (N / DIRS files, + . and ..)
 *   atomic sqlite DB N DIRS     DB (new; journal_mode=WAL, synchronous=FULL),
 *                               a table f(path TEXT PRIMARY KEY, data BLOB),
 *                               N rows ("/dNN/fNNNNNNN", the same 100 bytes)
 *                               in one transaction, the INSERT prepared once
 *   atomic sqlite-check DB N DIRS  reopen DB, PRAGMA integrity_check, every
 *                               row read back by its path and compared
 *   atomic run CMD...           run CMD; print "secs=S maxrss_kib=K", its
 *                               wall time and peak RSS
 *
 * The 100 bytes of file i are printable (a string literal of the script
 * needs no escapes) and differ from file to file.  Exit status 0 when all
 * worked and every byte read back is right, 1 otherwise, 2 for usage.
 */
#include <errno.h>
#include <inttypes.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"
#include "r4.h"

static void content(uint64_t i, char *p)
{
	static const char digits[] = "0123456789abcdefghijklmnopqrstuvwxyz";

	for (unsigned j = 0; j < FILE_BYTES; j++)
		p[j] = digits[mix64(i * 131 + j) % 36];
}

static void path_of(uint64_t i, uint64_t dirs, char *p, size_t len)
{
	snprintf(p, len, "/d%02" PRIu64 "/f%07" PRIu64, i % dirs, i);
}

static int make_script(const char *file, uint64_t n, uint64_t dirs)
{
	char body[FILE_BYTES], path[64];
	FILE *f = fopen(file, "w");

	if (!f) {
		perror(file);
		return 1;
	}
	for (uint64_t d = 0; d < dirs; d++)
		fprintf(f, "/..new/(name <- \"d%02" PRIu64 "\", type <- directory)\n", d);
	for (uint64_t i = 0; i < n; i++) {
		path_of(i, dirs, path, sizeof(path));
		content(i, body);
		fprintf(f, "%s <- \"%.*s\"\n", path, FILE_BYTES, body);
	}
	if (fclose(f)) {
		perror(file);
		return 1;
	}
	return 0;
}

static int count_fn(void *ctx, const char *name, size_t len, uint64_t ino, uint32_t type)
{
	(void)name;
	(void)len;
	(void)ino;
	(void)type;
	++*(uint64_t *)ctx;
	return 0;
}

static int check_r4(const char *img, uint64_t n, uint64_t dirs)
{
	struct r4_open_opts o = { .rw = false };
	char want[FILE_BYTES], got[FILE_BYTES + 1], path[64];
	size_t len;
	r4_db *db;
	int rc = r4_open(img, &o, &db);

	if (rc) {
		fprintf(stderr, "atomic: cannot open '%s': %s\n", img, strerror(-rc));
		return 1;
	}
	for (uint64_t i = 0; i < n; i++) {
		path_of(i, dirs, path, sizeof(path));
		content(i, want);
		rc = r4_read(db, path, 0, got, sizeof(got), &len);
		if (rc || len != FILE_BYTES || memcmp(want, got, FILE_BYTES)) {
			fprintf(stderr, "atomic: r4 '%s': %s\n", path, rc ? strerror(-rc) : "wrong content");
			goto bad;
		}
	}
	for (uint64_t d = 0; d < dirs; d++) {
		struct r4_dirpos pos = { 0 };
		uint64_t entries = 0, want_n = n / dirs + (d < n % dirs) + 2;

		snprintf(path, sizeof(path), "/d%02" PRIu64, d);
		rc = r4_readdir(db, path, &pos, count_fn, &entries);
		if (rc || entries != want_n) {
			fprintf(stderr, "atomic: r4 '%s': %s (%" PRIu64 " entries, want %" PRIu64 ")\n",
				path, rc ? strerror(-rc) : "wrong count", entries, want_n);
			goto bad;
		}
	}
	r4_close(db);
	return 0;
bad:
	r4_close(db);
	return 1;
}

static int sq_fail(sqlite3 *db, const char *what)
{
	fprintf(stderr, "atomic: sqlite: %s: %s\n", what, db ? sqlite3_errmsg(db) : "out of memory");
	sqlite3_close(db);
	return 1;
}

static int sqlite_write(const char *file, uint64_t n, uint64_t dirs)
{
	char body[FILE_BYTES], path[64];
	sqlite3_stmt *ins = NULL;
	sqlite3 *db = NULL;

	if (remove(file) && errno != ENOENT) {
		perror(file);
		return 1;
	}
	if (sqlite3_open(file, &db) != SQLITE_OK)
		return sq_fail(db, "open");
	if (sqlite3_exec(db, "PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL;"
			 "CREATE TABLE f(path TEXT PRIMARY KEY, data BLOB); BEGIN",
			 NULL, NULL, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(db, "INSERT INTO f(path, data) VALUES(?, ?)", -1, &ins, NULL) != SQLITE_OK)
		return sq_fail(db, "set up");
	for (uint64_t i = 0; i < n; i++) {
		path_of(i, dirs, path, sizeof(path));
		content(i, body);
		if (sqlite3_bind_text(ins, 1, path, -1, SQLITE_TRANSIENT) != SQLITE_OK ||
		    sqlite3_bind_blob(ins, 2, body, FILE_BYTES, SQLITE_TRANSIENT) != SQLITE_OK ||
		    sqlite3_step(ins) != SQLITE_DONE || sqlite3_reset(ins) != SQLITE_OK) {
			sqlite3_finalize(ins);
			return sq_fail(db, path);
		}
	}
	sqlite3_finalize(ins);
	if (sqlite3_exec(db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK)
		return sq_fail(db, "commit");
	return sqlite3_close(db) == SQLITE_OK ? 0 : sq_fail(NULL, "close");
}

static int sqlite_check(const char *file, uint64_t n, uint64_t dirs)
{
	char want[FILE_BYTES], path[64];
	sqlite3_stmt *st = NULL;
	sqlite3 *db = NULL;

	if (sqlite3_open_v2(file, &db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK)
		return sq_fail(db, "open");
	if (sqlite3_prepare_v2(db, "PRAGMA integrity_check", -1, &st, NULL) != SQLITE_OK ||
	    sqlite3_step(st) != SQLITE_ROW || strcmp((const char *)sqlite3_column_text(st, 0), "ok")) {
		sqlite3_finalize(st);
		return sq_fail(db, "integrity_check");
	}
	sqlite3_finalize(st);
	if (sqlite3_prepare_v2(db, "SELECT count(*) FROM f", -1, &st, NULL) != SQLITE_OK ||
	    sqlite3_step(st) != SQLITE_ROW || (uint64_t)sqlite3_column_int64(st, 0) != n) {
		sqlite3_finalize(st);
		return sq_fail(db, "row count");
	}
	sqlite3_finalize(st);
	if (sqlite3_prepare_v2(db, "SELECT data FROM f WHERE path = ?", -1, &st, NULL) != SQLITE_OK)
		return sq_fail(db, "select");
	for (uint64_t i = 0; i < n; i++) {
		path_of(i, dirs, path, sizeof(path));
		content(i, want);
		if (sqlite3_bind_text(st, 1, path, -1, SQLITE_TRANSIENT) != SQLITE_OK ||
		    sqlite3_step(st) != SQLITE_ROW || sqlite3_column_bytes(st, 0) != FILE_BYTES ||
		    memcmp(sqlite3_column_blob(st, 0), want, FILE_BYTES)) {
			fprintf(stderr, "atomic: sqlite '%s': missing or wrong content\n", path);
			sqlite3_finalize(st);
			sqlite3_close(db);
			return 1;
		}
		sqlite3_reset(st);
	}
	sqlite3_finalize(st);
	sqlite3_close(db);
	return 0;
}

/* atomic run CMD...: run CMD as a child; "secs=S maxrss_kib=K" (wall time
 * and its peak RSS) on stdout; CMD's exit status. */
static int run_cmd(char **argv)
{
	struct timespec t0, t1;
	struct rusage ru;
	int st;
	pid_t pid;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	if ((pid = fork()) < 0)
		return perror("atomic: fork"), 1;
	if (!pid) {
		execvp(argv[0], argv);
		perror(argv[0]);
		_exit(127);
	}
	if (wait4(pid, &st, 0, &ru) < 0)
		return perror("atomic: wait4"), 1;
	clock_gettime(CLOCK_MONOTONIC, &t1);
	printf("secs=%.4f maxrss_kib=%ld\n",
	       (double)(t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9, ru.ru_maxrss);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 1;
}

int main(int argc, char **argv)
{
	uint64_t n, dirs;

	if (argc >= 3 && !strcmp(argv[1], "run"))
		return run_cmd(argv + 2);

	if (argc != 5 || !(n = strtoull(argv[3], NULL, 10)) || !(dirs = strtoull(argv[4], NULL, 10)) ||
	    dirs > 100 || n > 9999999) {
		fprintf(stderr, "usage: atomic script|check|sqlite|sqlite-check FILE N DIRS (DIRS <= 100)\n");
		return 2;
	}
	if (!strcmp(argv[1], "script"))
		return make_script(argv[2], n, dirs);
	if (!strcmp(argv[1], "check"))
		return check_r4(argv[2], n, dirs);
	if (!strcmp(argv[1], "sqlite"))
		return sqlite_write(argv[2], n, dirs);
	if (!strcmp(argv[1], "sqlite-check"))
		return sqlite_check(argv[2], n, dirs);
	fprintf(stderr, "atomic: unknown mode '%s'\n", argv[1]);
	return 2;
}
