/*
 * ops_sqlite.c - SQLite beside bench/scale.c's `ops` (issue 27 item 4):
 * the same paths (ops.h), the same operations, so that what r4's cost per
 * operation does from 10^3 to 10^6 files reads against what a B-tree
 * database's does on the same machine.
 *
 *   ops_sqlite DB N SHAPE M SEED CACHE_KIB
 *
 * DB (new; journal_mode=WAL, synchronous=FULL, cache_size CACHE_KIB, the
 * page cache r4's open takes as its clean-node bound) holds a table
 * f(path TEXT PRIMARY KEY, data BLOB), as bench/atomic.c's.  Build: N rows
 * of 100 bytes (small_content of i) in transactions of 50,000.  Stat: on
 * a fresh connection, `SELECT length(data)` of M random paths (from SEED,
 * as scale's), three reps.  Create: on another, min(M, N) rows at
 * ops_new_path's paths (a random place, or with R4_BENCH_OPS_APPEND=1
 * after all), committed every 1,000.  Output, for bench/run.sh:
 *
 *   result=sq-stat n=N shape=S m=M us=WALL cpu_us=CPU first=WALL1
 *   result=sq-create n=N shape=S m=M us=WALL cpu_us=CPU
 *
 * (per operation; stat: the median rep, first: the first).  Then every
 * new row is read back and compared and PRAGMA integrity_check run; exit
 * status 0 when all worked, 1 otherwise, 2 for usage.  Timing is
 * reported, never judged.
 */
#include <errno.h>
#include <inttypes.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "ops.h"

#define BUILD_PER_TXN 50000
#define FILES_PER_TXN 1000
#define REPS 3

static struct ops_names nm;

static double cpu_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int sq_fail(sqlite3 *db, const char *what)
{
	fprintf(stderr, "ops_sqlite: %s: %s\n", what, db ? sqlite3_errmsg(db) : "out of memory");
	sqlite3_close(db);
	return 1;
}

static int sq_open(const char *file, unsigned long cache_kib, sqlite3 **db)
{
	char sql[128];

	snprintf(sql, sizeof(sql), "PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL;"
		 "PRAGMA cache_size=-%lu", cache_kib);
	*db = NULL;
	if (sqlite3_open(file, db) != SQLITE_OK ||
	    sqlite3_exec(*db, sql, NULL, NULL, NULL) != SQLITE_OK)
		return sq_fail(*db, "open");
	return 0;
}

/* Insert the 100 bytes of content i at path. */
static int put(sqlite3 *db, sqlite3_stmt *ins, const char *path, uint64_t i)
{
	uint8_t body[FILE_BYTES];

	small_content(i, body);
	if (sqlite3_bind_text(ins, 1, path, -1, SQLITE_STATIC) != SQLITE_OK ||
	    sqlite3_bind_blob(ins, 2, body, FILE_BYTES, SQLITE_TRANSIENT) != SQLITE_OK ||
	    sqlite3_step(ins) != SQLITE_DONE || sqlite3_reset(ins) != SQLITE_OK)
		return sq_fail(db, path);
	return 0;
}

static int build(const char *file, uint64_t n, unsigned long cache_kib)
{
	sqlite3_stmt *ins = NULL;
	sqlite3 *db;
	char path[96];

	if (remove(file) && errno != ENOENT) {
		perror(file);
		return 1;
	}
	if (sq_open(file, cache_kib, &db))
		return 1;
	if (sqlite3_exec(db, "CREATE TABLE f(path TEXT PRIMARY KEY, data BLOB); BEGIN", NULL,
			 NULL, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(db, "INSERT INTO f(path, data) VALUES(?, ?)", -1, &ins, NULL) !=
		    SQLITE_OK)
		return sq_fail(db, "set up");
	for (uint64_t i = 0; i < n; i++) {
		if (i && i % BUILD_PER_TXN == 0 &&
		    sqlite3_exec(db, "COMMIT; BEGIN", NULL, NULL, NULL) != SQLITE_OK)
			break;
		ops_path(&nm, i, path, sizeof(path));
		if (put(db, ins, path, i)) {
			sqlite3_finalize(ins);
			return 1;
		}
	}
	sqlite3_finalize(ins);
	if (sqlite3_exec(db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK)
		return sq_fail(db, "commit");
	return sqlite3_close(db) == SQLITE_OK ? 0 : sq_fail(NULL, "close");
}

static int dbl_cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static int stat_phase(const char *file, uint64_t n, uint64_t m, uint64_t seed,
		      unsigned long cache_kib)
{
	double us[REPS], cpu[REPS], first, t0, c0;
	uint64_t *idx = malloc(m * sizeof(*idx)), x = seed;
	sqlite3_stmt *st = NULL;
	sqlite3 *db;
	char path[96];

	if (!idx || sq_open(file, cache_kib, &db)) {
		free(idx);
		return 1;
	}
	if (sqlite3_prepare_v2(db, "SELECT length(data) FROM f WHERE path = ?", -1, &st, NULL) !=
	    SQLITE_OK) {
		free(idx);
		return sq_fail(db, "select");
	}
	for (int r = 0; r < REPS; r++) {
		for (uint64_t k = 0; k < m; k++)	/* scale's draw, outside the timing */
			idx[k] = mix64(x++) % n;
		t0 = now();
		c0 = cpu_now();
		for (uint64_t k = 0; k < m; k++) {
			ops_path(&nm, idx[k], path, sizeof(path));
			if (sqlite3_bind_text(st, 1, path, -1, SQLITE_STATIC) != SQLITE_OK ||
			    sqlite3_step(st) != SQLITE_ROW ||
			    sqlite3_column_int(st, 0) != FILE_BYTES ||
			    sqlite3_reset(st) != SQLITE_OK) {
				sqlite3_finalize(st);
				free(idx);
				return sq_fail(db, path);
			}
		}
		cpu[r] = (cpu_now() - c0) / (double)m * 1e6;
		us[r] = (now() - t0) / (double)m * 1e6;
	}
	sqlite3_finalize(st);
	free(idx);
	if (sqlite3_close(db) != SQLITE_OK)
		return sq_fail(NULL, "close");
	first = us[0];
	qsort(us, REPS, sizeof(us[0]), dbl_cmp);
	qsort(cpu, REPS, sizeof(cpu[0]), dbl_cmp);
	printf("result=sq-stat n=%" PRIu64 " shape=%s m=%" PRIu64
	       " us=%.2f cpu_us=%.2f first=%.2f\n",
	       n, nm.tree ? "tree3" : "flat", m, us[REPS / 2], cpu[REPS / 2], first);
	return 0;
}

static int create_phase(const char *file, uint64_t n, uint64_t m, uint64_t seed,
			unsigned long cache_kib)
{
	sqlite3_stmt *ins = NULL, *st = NULL;
	uint8_t want[FILE_BYTES];
	double t0, c0;
	sqlite3 *db;
	char path[96];

	if (sq_open(file, cache_kib, &db))
		return 1;
	if (sqlite3_prepare_v2(db, "INSERT INTO f(path, data) VALUES(?, ?)", -1, &ins, NULL) !=
	    SQLITE_OK)
		return sq_fail(db, "insert");
	t0 = now();
	c0 = cpu_now();
	for (uint64_t k = 0; k < m; k++) {
		if (k % FILES_PER_TXN == 0 &&
		    sqlite3_exec(db, "BEGIN", NULL, NULL, NULL) != SQLITE_OK)
			break;
		ops_new_path(&nm, k, n, seed, path, sizeof(path));
		if (put(db, ins, path, n + k)) {
			sqlite3_finalize(ins);
			return 1;
		}
		if (((k + 1) % FILES_PER_TXN == 0 || k + 1 == m) &&
		    sqlite3_exec(db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK)
			break;
	}
	t0 = now() - t0;
	c0 = cpu_now() - c0;
	sqlite3_finalize(ins);
	if (sqlite3_get_autocommit(db) == 0)
		return sq_fail(db, "commit");
	/* every new row back, then the database's own check (untimed) */
	if (sqlite3_prepare_v2(db, "SELECT data FROM f WHERE path = ?", -1, &st, NULL) != SQLITE_OK)
		return sq_fail(db, "select");
	for (uint64_t k = 0; k < m; k++) {
		ops_new_path(&nm, k, n, seed, path, sizeof(path));
		small_content(n + k, want);
		if (sqlite3_bind_text(st, 1, path, -1, SQLITE_STATIC) != SQLITE_OK ||
		    sqlite3_step(st) != SQLITE_ROW || sqlite3_column_bytes(st, 0) != FILE_BYTES ||
		    memcmp(sqlite3_column_blob(st, 0), want, FILE_BYTES) ||
		    sqlite3_reset(st) != SQLITE_OK) {
			fprintf(stderr, "ops_sqlite: '%s': missing or wrong content\n", path);
			sqlite3_finalize(st);
			sqlite3_close(db);
			return 1;
		}
	}
	sqlite3_finalize(st);
	if (sqlite3_prepare_v2(db, "PRAGMA integrity_check", -1, &st, NULL) != SQLITE_OK ||
	    sqlite3_step(st) != SQLITE_ROW ||
	    strcmp((const char *)sqlite3_column_text(st, 0), "ok")) {
		sqlite3_finalize(st);
		return sq_fail(db, "integrity_check");
	}
	sqlite3_finalize(st);
	if (sqlite3_close(db) != SQLITE_OK)
		return sq_fail(NULL, "close");
	printf("result=sq-create n=%" PRIu64 " shape=%s m=%" PRIu64 " us=%.2f cpu_us=%.2f\n", n,
	       nm.tree ? "tree3" : "flat", m, t0 / (double)m * 1e6, c0 / (double)m * 1e6);
	return 0;
}

int main(int argc, char **argv)
{
	uint64_t n, m, seed;
	unsigned long cache_kib;
	char *end_n, *end_m, *end_c;

	if (argc != 7 || (strcmp(argv[3], "flat") && strcmp(argv[3], "tree3"))) {
		fprintf(stderr, "usage: ops_sqlite DB N flat|tree3 M SEED CACHE_KIB\n");
		return 2;
	}
	n = strtoull(argv[2], &end_n, 10);
	m = strtoull(argv[4], &end_m, 10);
	seed = strtoull(argv[5], NULL, 10);
	cache_kib = strtoul(argv[6], &end_c, 10);
	if (*end_n || *end_m || *end_c || !n || !m || !cache_kib) {
		fprintf(stderr, "ops_sqlite: bad count '%s', '%s' or '%s'\n", argv[2], argv[4],
			argv[6]);
		return 2;
	}
	ops_names_init(&nm, n, !strcmp(argv[3], "tree3"),
		       getenv("R4_BENCH_OPS_APPEND") && strcmp(getenv("R4_BENCH_OPS_APPEND"), "0"));
	if (build(argv[1], n, cache_kib) || stat_phase(argv[1], n, m, seed, cache_kib))
		return 1;
	return create_phase(argv[1], n, m < n ? m : n, seed, cache_kib);
}
