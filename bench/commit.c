/*
 * commit.c - durable commits per second of a two-record update (issue 3
 * item 9), r4 beside SQLite in the same run and the same directory.
 *
 *   commit DIR N
 *
 * r4: mkfs DIR/commit.img (64 MiB) with two files /A and /B of 100 bytes
 * (one tail item each, in one leaf), committed and closed.  Then reopen
 * and N times: r4_begin, r4_write of 100 new bytes over the whole of /A
 * and of /B, r4_commit (which returns when the transaction is durable).
 * Then close, reopen read-only and compare both files with the last
 * iteration's bytes.  DIR/commit.img stays for bench/run.sh to fsck.
 *
 * SQLite: DIR/commit.sqlite, journal_mode=WAL, synchronous=FULL (the
 * default wal_autocheckpoint of 1000 pages), a table t(id INTEGER PRIMARY
 * KEY, v BLOB) with two rows of 100 bytes; N times BEGIN, UPDATE t SET v=?
 * WHERE id=1, the same for id=2, COMMIT, with statements prepared once.
 * Then close, reopen and compare both rows and run PRAGMA integrity_check.
 *
 * The floor beside them, in DIR/commit.raw: raw1, N times a 4 KiB pwrite
 * over one block + fdatasync (the machine's sync rate); raw2, N times
 * that at a place that moves down by a block each time (where a commit's
 * journal copies go) and then at a fixed block (its journal header): two
 * syncs with nothing else, the least a commit of the format costs; raw3,
 * the same with 12 KiB at the moving place: the least the format writes
 * for a commit that changes one block (its tx head, its wander record and
 * the block's copy, then the journal header).
 *
 * All are set up first; then they take turns, ROUNDS rounds of N / ROUNDS
 * commits each (r4, SQLite, raw1, raw2, raw3), so that load from other programs
 * on the machine falls on all alike.  Only the iterations are timed and counted,
 * per side summed over the rounds: bytes written (the wchar
 * delta of /proc/self/io), and syncs (r4: fdatasync calls via the link-time
 * wrapper of iocount.h; SQLite: xSync calls through a counting VFS shim).
 * The iteration's bytes are small_content() of bench.h.  Output:
 *
 *   phase=commit-r4 n=N secs=S rate=R unit=commits/s syncs_per_commit=X bytes_per_commit=B
 *   phase=commit-sqlite n=N ...
 *   phase=commit-raw1 n=N ...    phase=commit-raw2 ...    phase=commit-raw3 ...
 *   (rate: rounds/s)
 *
 * Exit status 0 when every call worked and the content read back is
 * right, 1 otherwise, 2 for usage.
 */
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdbool.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bench.h"
#include "iocount.h"
#include "r4.h"
#include "sqcount.h"

/* Record f (0 = A, 1 = B) after iteration i (i = 0: the initial bytes). */
static void record(uint64_t i, unsigned f, uint8_t *p)
{
	small_content(i * 2 + f, p);
}

#define ROUNDS 20		/* r4 and SQLite take turns, N / ROUNDS commits each */

struct result {
	double secs;
	uint64_t syncs, bytes;
};

static void print_result(const char *phase, uint64_t n, const struct result *r)
{
	printf("phase=%s n=%" PRIu64 " secs=%.3f rate=%.1f unit=commits/s syncs=%" PRIu64
	       " syncs_per_commit=%.2f bytes_written=%" PRIu64 " bytes_per_commit=%.0f\n",
	       phase, n, r->secs, (double)n / r->secs, r->syncs, (double)r->syncs / (double)n,
	       r->bytes, (double)r->bytes / (double)n);
}

/* ---- r4 ---- */

static int r4_fail(const char *what, const char *subject, int rc)
{
	iolog_flush("commit");
	fprintf(stderr, "commit: %s '%s': %s\n", what, subject, r4_strerror(rc));
	return 1;
}

static int r4_put(r4_db *db, uint64_t i)
{
	static const char *const name[2] = { "/A", "/B" };
	uint8_t rec[FILE_BYTES];
	int rc;

	for (unsigned f = 0; f < 2; f++) {
		record(i, f, rec);
		if ((rc = r4_write(db, name[f], 0, rec, sizeof(rec))))
			return rc;
	}
	return 0;
}

struct r4_side {
	r4_db *db;
	char img[4096];
};

/* mkfs, /A and /B with their first bytes, committed; closed and reopened. */
static int r4_setup(const char *dir, struct r4_side *r)
{
	struct r4_open_opts o = { .rw = true, .log = iolog_keep };
	struct r4_mkfs_opts mo;
	int rc;

	snprintf(r->img, sizeof(r->img), "%s/commit.img", dir);
	r4_mkfs_defaults(&mo);
	unlink(r->img);
	if ((rc = r4_mkfs(r->img, 64ull << 20, &mo)))
		return r4_fail("cannot make image", r->img, rc);
	if ((rc = r4_open(r->img, &o, &r->db)))
		return r4_fail("cannot open image", r->img, rc);
	if ((rc = r4_begin(r->db)) || (rc = r4_create(r->db, "/A", S_IFREG | 0644, 0, 0)) ||
	    (rc = r4_create(r->db, "/B", S_IFREG | 0644, 0, 0)) || (rc = r4_put(r->db, 0)) ||
	    (rc = r4_commit(r->db)))
		return r4_fail("cannot set up", r->img, rc);
	r4_close(r->db);
	r->db = NULL;
	if ((rc = r4_open(r->img, &o, &r->db)))
		return r4_fail("cannot reopen image", r->img, rc);
	iolog_flush("commit");
	return 0;
}

/* Iterations from..to-1, timed and counted into res. */
static int r4_run(struct r4_side *r, uint64_t from, uint64_t to, struct result *res)
{
	uint64_t s0 = cnt.syncs, w0 = io_wchar(), i;
	double t0 = now();
	int rc = 0;

	for (i = from; i < to; i++)
		if ((rc = r4_begin(r->db)) || (rc = r4_put(r->db, i)) || (rc = r4_commit(r->db)))
			break;
	res->secs += now() - t0;
	res->bytes += io_wchar() - w0;
	res->syncs += cnt.syncs - s0;
	iolog_flush("commit");
	if (rc) {
		fprintf(stderr, "commit: r4 iteration %" PRIu64 ": ", i);
		return r4_fail("failed on", r->img, rc);
	}
	return 0;
}

/* Close, reopen read-only, compare /A and /B with iteration n's bytes. */
static int r4_verify(struct r4_side *r, uint64_t n)
{
	struct r4_open_opts o = { .rw = false, .log = iolog_keep };
	uint8_t want[FILE_BYTES], got[FILE_BYTES + 1];
	size_t len;
	int rc;

	r4_close(r->db);
	r->db = NULL;
	if ((rc = r4_open(r->img, &o, &r->db)))
		return r4_fail("cannot reopen image", r->img, rc);
	for (unsigned f = 0; f < 2; f++) {
		const char *name = f ? "/B" : "/A";

		record(n, f, want);
		if ((rc = r4_read(r->db, name, 0, got, sizeof(got), &len)))
			return r4_fail("cannot read", name, rc);
		if (len != FILE_BYTES || memcmp(want, got, FILE_BYTES)) {
			bool prev = false;

			if (len == FILE_BYTES) {
				record(n - 1, f, want);
				prev = !memcmp(want, got, FILE_BYTES);
			}
			fprintf(stderr,
				"commit: '%s' after %" PRIu64 " commits: wrong content (%zu bytes%s)\n",
				name, n, len, prev ? ", the previous commit's" : "");
			return 1;
		}
	}
	iolog_flush("commit");
	return 0;
}

/* ---- SQLite, with a VFS that counts xSync calls (sqcount.h) ---- */

static volatile uint64_t syncs;

static int sq_fail(sqlite3 *db, const char *what)
{
	fprintf(stderr, "commit: sqlite: %s: %s\n", what, db ? sqlite3_errmsg(db) : "out of memory");
	return 1;
}

static int sq_exec(sqlite3 *db, const char *sql)
{
	char *err = NULL;

	if (sqlite3_exec(db, sql, NULL, NULL, &err) != SQLITE_OK) {
		fprintf(stderr, "commit: sqlite: '%s': %s\n", sql, err ? err : "?");
		sqlite3_free(err);
		return 1;
	}
	return 0;
}

static int sq_put(sqlite3_stmt *up, uint64_t i)
{
	uint8_t rec[FILE_BYTES];

	for (unsigned f = 0; f < 2; f++) {
		record(i, f, rec);
		if (sqlite3_bind_blob(up, 1, rec, sizeof(rec), SQLITE_TRANSIENT) != SQLITE_OK ||
		    sqlite3_bind_int(up, 2, (int)f + 1) != SQLITE_OK || sqlite3_step(up) != SQLITE_DONE ||
		    sqlite3_reset(up) != SQLITE_OK)
			return 1;
	}
	return 0;
}

static int sq_step(sqlite3_stmt *st)
{
	int rc = sqlite3_step(st);

	sqlite3_reset(st);
	return rc != SQLITE_DONE;
}

static int sq_verify(const char *path, uint64_t n)
{
	uint8_t want[FILE_BYTES];
	sqlite3_stmt *sel = NULL;
	sqlite3 *db = NULL;
	int rc = 1, rows = 0;

	if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) {
		sq_fail(db, "cannot reopen");
		goto out;
	}
	if (sqlite3_prepare_v2(db, "PRAGMA integrity_check", -1, &sel, NULL) != SQLITE_OK ||
	    sqlite3_step(sel) != SQLITE_ROW ||
	    strcmp((const char *)sqlite3_column_text(sel, 0), "ok")) {
		sq_fail(db, "integrity_check");
		goto out;
	}
	sqlite3_finalize(sel);
	if (sqlite3_prepare_v2(db, "SELECT id, v FROM t ORDER BY id", -1, &sel, NULL) != SQLITE_OK) {
		sq_fail(db, "select");
		goto out;
	}
	while (sqlite3_step(sel) == SQLITE_ROW) {
		int id = sqlite3_column_int(sel, 0);

		record(n, (unsigned)(id - 1), want);
		if (id != rows + 1 || sqlite3_column_bytes(sel, 1) != FILE_BYTES ||
		    memcmp(sqlite3_column_blob(sel, 1), want, FILE_BYTES)) {
			fprintf(stderr, "commit: sqlite: row %d: wrong content\n", id);
			goto out;
		}
		rows++;
	}
	if (rows != 2) {
		fprintf(stderr, "commit: sqlite: %d rows, expected 2\n", rows);
		goto out;
	}
	rc = 0;
out:
	sqlite3_finalize(sel);
	sqlite3_close(db);
	return rc;
}

struct sq_side {
	sqlite3 *db;
	sqlite3_stmt *up, *begin, *commit;
	char path[4096];
};

/* The database in WAL mode, synchronous=FULL, the two rows, statements. */
static int sq_setup(const char *dir, struct sq_side *q)
{
	char side[4200];

	if (sq_count_register(&syncs) != SQLITE_OK)
		return sq_fail(NULL, "cannot register the counting VFS");
	snprintf(q->path, sizeof(q->path), "%s/commit.sqlite", dir);
	unlink(q->path);
	snprintf(side, sizeof(side), "%s-wal", q->path);
	unlink(side);
	snprintf(side, sizeof(side), "%s-shm", q->path);
	unlink(side);
	if (sqlite3_open_v2(q->path, &q->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE,
			    SQ_COUNT_VFS) != SQLITE_OK)
		return sq_fail(q->db, "cannot open");
	if (sq_exec(q->db, "PRAGMA journal_mode=WAL") || sq_exec(q->db, "PRAGMA synchronous=FULL") ||
	    sq_exec(q->db, "CREATE TABLE t(id INTEGER PRIMARY KEY, v BLOB)") ||
	    sq_exec(q->db, "INSERT INTO t VALUES (1, NULL), (2, NULL)"))
		return 1;
	if (sqlite3_prepare_v2(q->db, "UPDATE t SET v = ?1 WHERE id = ?2", -1, &q->up, NULL) ||
	    sqlite3_prepare_v2(q->db, "BEGIN", -1, &q->begin, NULL) ||
	    sqlite3_prepare_v2(q->db, "COMMIT", -1, &q->commit, NULL))
		return sq_fail(q->db, "cannot prepare");
	if (sq_step(q->begin) || sq_put(q->up, 0) || sq_step(q->commit))
		return sq_fail(q->db, "initial rows");
	return 0;
}

static int sq_run(struct sq_side *q, uint64_t from, uint64_t to, struct result *res)
{
	uint64_t s0 = syncs, w0 = io_wchar(), i;
	double t0 = now();
	int bad = 0;

	for (i = from; i < to && !bad; i++)
		bad = sq_step(q->begin) || sq_put(q->up, i) || sq_step(q->commit);
	res->secs += now() - t0;
	res->bytes += io_wchar() - w0;
	res->syncs += syncs - s0;
	if (bad) {
		fprintf(stderr, "commit: sqlite: at iteration %" PRIu64 "\n", i - 1);
		return sq_fail(q->db, "update");
	}
	return 0;
}

/* ---- the floor: raw syncs ---- */

#define RAW_SPAN 4096	/* blocks the moving place cycles through */

struct raw_side {
	int fd;
	char path[4096];
};

static int raw_setup(const char *dir, struct raw_side *w)
{
	static uint8_t zero[4096];

	snprintf(w->path, sizeof(w->path), "%s/commit.raw", dir);
	if ((w->fd = open(w->path, O_RDWR | O_CREAT | O_TRUNC, 0644)) < 0)
		return perror(w->path), 1;
	/* every block exists first: each round then overwrites, as commits do */
	for (unsigned b = 0; b <= RAW_SPAN; b++)
		if (__real_pwrite(w->fd, zero, sizeof(zero), (off_t)b * 4096) != (ssize_t)sizeof(zero))
			return perror(w->path), 1;
	return fsync(w->fd) ? (perror(w->path), 1) : 0;
}

/* Rounds [from, to) of one sync (the fixed place; moving 0) or two: first
 * moving blocks at a place that moves down, then the fixed place. */
static int raw_run(struct raw_side *w, unsigned moving, uint64_t from, uint64_t to,
		   struct result *res)
{
	uint8_t buf[3 * 4096];
	size_t mb = moving * 4096;
	double t0 = now();

	assert(mb <= sizeof(buf));
	memset(buf, 'r', sizeof(buf));
	for (uint64_t i = from; i < to; i++) {
		/* (moving blocks a round, down from the span's end, clear of block 0) */
		off_t at = mb ? (off_t)(RAW_SPAN + 1 - moving - i % (RAW_SPAN / moving) * moving) * 4096
			      : 0;

		buf[0] = (uint8_t)i;
		if ((mb && (__real_pwrite(w->fd, buf, mb, at) != (ssize_t)mb ||
			    __real_fdatasync(w->fd))) ||
		    __real_pwrite(w->fd, buf, 4096, 0) != 4096 || __real_fdatasync(w->fd))
			return perror(w->path), 1;
		res->syncs += mb ? 2 : 1;
		res->bytes += mb + 4096;
	}
	res->secs += now() - t0;
	return 0;
}

static void sq_close(struct sq_side *q)
{
	sqlite3_finalize(q->up);
	sqlite3_finalize(q->begin);
	sqlite3_finalize(q->commit);
	sqlite3_close(q->db);
	q->up = q->begin = q->commit = NULL;
	q->db = NULL;
}

int main(int argc, char **argv)
{
	struct result r4 = { 0, 0, 0 }, sq = { 0, 0, 0 }, raw1 = { 0, 0, 0 }, raw2 = { 0, 0, 0 },
		      raw3 = { 0, 0, 0 };
	struct raw_side w = { .fd = -1 };
	struct r4_side r = { .db = NULL };
	struct sq_side q = { .db = NULL };
	uint64_t n, from = 1;
	char *end;
	int rc = 1;

	if (argc != 3) {
		fprintf(stderr, "usage: commit DIR N\n");
		return 2;
	}
	errno = 0;
	n = strtoull(argv[2], &end, 10);
	if (errno || *end || !n) {
		fprintf(stderr, "commit: bad count '%s'\n", argv[2]);
		return 2;
	}
	if (r4_setup(argv[1], &r) || sq_setup(argv[1], &q) || raw_setup(argv[1], &w))
		goto out;
	/* ROUNDS alternating rounds, so all sides see the same machine load */
	for (unsigned k = 1; k <= ROUNDS; k++) {
		uint64_t to = 1 + n * k / ROUNDS;

		if (r4_run(&r, from, to, &r4) || sq_run(&q, from, to, &sq) ||
		    raw_run(&w, 0, from, to, &raw1) || raw_run(&w, 1, from, to, &raw2) ||
		    raw_run(&w, 3, from, to, &raw3))
			goto out;
		from = to;
	}
	sq_close(&q);
	if (r4_verify(&r, n) || sq_verify(q.path, n))
		goto out;
	print_result("commit-r4", n, &r4);
	print_result("commit-sqlite", n, &sq);
	print_result("commit-raw1", n, &raw1);
	print_result("commit-raw2", n, &raw2);
	print_result("commit-raw3", n, &raw3);
	printf("ratio commits_per_s_r4_over_sqlite=%.3f record_bytes=%d files=2 rounds=%d sqlite=%s\n",
	       (double)n / r4.secs / ((double)n / sq.secs), FILE_BYTES, ROUNDS, sqlite3_libversion());
	rc = 0;
out:
	if (w.fd >= 0) {
		close(w.fd);
		unlink(w.path);
	}
	sq_close(&q);
	r4_close(r.db);
	iolog_flush("commit");
	return rc;
}
