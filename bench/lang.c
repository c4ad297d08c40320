/*
 * lang.c - what the command language costs over the engine's fs API
 * (issue 4 item 10): the same small writes, once as R4L statements run
 * through r4_run, once as direct r4_create/r4_write/r4_truncate calls.
 *
 *   lang IMG N UNITS
 *
 * Workloads, each on a fresh image and timed apart:
 *   atomic  N statements "/b/fI <- "value I..."" in one unit (one commit),
 *           then N overwrites of the same files in one unit; the direct
 *           side does the same calls inside one r4_begin/r4_commit;
 *   units   the first UNITS of them, one unit (one durable commit) per
 *           statement, as the batch runner runs a script; the direct side
 *           commits after each write (autocommit).
 * For the language it also times lex+parse+check+compile alone, and
 * reports that as a share of its run.  Every file is read back and
 * compared.  One line per phase: "phase=NAME secs=S cpu=C stmts=N rate=R"
 * (C: CPU seconds, the cost without the waits for the disk; the language
 * side's includes its compile inside r4_run, not the one timed apart).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "r4_lang.h"

static double clock_of(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static double now(void)
{
	return clock_of(CLOCK_MONOTONIC);
}

/* CPU seconds of the process: the cost without the waits for the disk. */
static double cpu_start;

static double cpu(void)
{
	return clock_of(CLOCK_PROCESS_CPUTIME_ID);
}

static void die(const char *what, int rc)
{
	fprintf(stderr, "lang: %s: %s\n", what, r4_strerror(rc));
	exit(1);
}

static r4_db *fresh(const char *img)
{
	struct r4_mkfs_opts mo;
	struct r4_open_opts oo = {.rw = true};
	r4_db *db;
	int rc;

	unlink(img);
	r4_mkfs_defaults(&mo);
	if ((rc = r4_mkfs(img, (uint64_t)256 << 20, &mo)))
		die("mkfs", rc);
	if ((rc = r4_open(img, &oo, &db)))
		die("open", rc);
	if ((rc = r4_mkdir(db, "/b", 0755, 0, 0)))
		die("mkdir", rc);
	return db;
}

static int value(char *buf, size_t n, unsigned i, unsigned round)
{
	return snprintf(buf, n, "value %u of round %u\n", i, round);
}

/* The script: n statements, one per line. */
static char *script(unsigned n, unsigned round, size_t *len)
{
	size_t cap = (size_t)n * 64 + 1, o = 0;
	char *s = malloc(cap), v[64];

	for (unsigned i = 0; i < n; i++) {
		value(v, sizeof(v), i, round);
		v[strlen(v) - 1] = 0;	/* the LF is written as \n */
		o += (size_t)snprintf(s + o, cap - o, "/b/f%u <- \"%s\\n\"\n", i, v);
	}
	*len = o;
	return s;
}

static void verify(r4_db *db, unsigned n, unsigned round)
{
	char path[64], want[64], got[64];
	size_t g;

	for (unsigned i = 0; i < n; i++) {
		int w = value(want, sizeof(want), i, round), rc;

		snprintf(path, sizeof(path), "/b/f%u", i);
		if ((rc = r4_read(db, path, 0, got, sizeof(got), &g)) || g != (size_t)w ||
		    memcmp(got, want, g)) {
			fprintf(stderr, "lang: FAILED: %s reads back wrong (%s)\n", path,
				r4_strerror(rc));
			exit(1);
		}
	}
}

/* The direct calls of one statement, as a program that knows the files:
 * round 1 creates and writes, later rounds write and cut to length. */
static int direct_one(r4_db *db, unsigned i, unsigned round)
{
	char path[64], v[64];
	int n = value(v, sizeof(v), i, round), rc;

	snprintf(path, sizeof(path), "/b/f%u", i);
	if (round == 1 && (rc = r4_create(db, path, 0644, 0, 0)))
		return rc;
	if ((rc = r4_write(db, path, 0, v, (size_t)n)))
		return rc;
	return round == 1 ? 0 : r4_truncate(db, path, (uint64_t)n);
}

/* n statements in one transaction, or each in its own. */
static double direct(r4_db *db, unsigned n, unsigned round, bool one_txn)
{
	double t0 = now();
	int rc;

	for (unsigned i = 0; i < n; i++) {
		if ((!one_txn || i == 0) && (rc = r4_begin(db)))
			die("begin", rc);
		if ((rc = direct_one(db, i, round)))
			die("direct write", rc);
		if ((!one_txn || i == n - 1) && (rc = r4_commit(db)))
			die("commit", rc);
	}
	return now() - t0;
}

static double compile_only(const char *src, size_t len, bool per_statement)
{
	struct r4_compile_opts co = {.per_statement = per_statement};
	struct r4_plan *plan = NULL;
	r4_diags *d = r4_diag_new("<bench>", src, len);
	r4_ast *ast = NULL;
	double t0 = now();
	int rc;

	if ((rc = r4_parse(src, len, d, &ast)) || (rc = r4_compile(ast, &co, d, &plan)))
		die("compile", rc);
	t0 = now() - t0;
	r4_plan_free(plan);
	r4_ast_free(ast);
	r4_diag_free(d);
	return t0;
}

static double language(r4_db *db, unsigned n, unsigned round, bool per_statement,
		       double *compile)
{
	struct r4_run_opts ro = {.per_statement = per_statement, .exec = {.who = {.umask = 022}}};
	struct r4_run *r = NULL;
	size_t len;
	char *src = script(n, round, &len);
	double t0;

	*compile = compile_only(src, len, per_statement);
	cpu_start = cpu();	/* the timed run compiles again, inside r4_run */
	t0 = now();
	if (r4_run(db, src, len, &ro, &r)) {
		if (r)
			r4_diag_print(r->diags, stderr);
		die("run", r ? r->rc : -ENOMEM);
	}
	t0 = now() - t0;
	r4_run_free(r);
	free(src);
	return t0;
}

static void report(const char *phase, double secs, unsigned n)
{
	printf("phase=%s secs=%.3f cpu=%.3f stmts=%u rate=%.0f\n", phase, secs, cpu() - cpu_start,
	       n, n / secs);
}

int main(int argc, char **argv)
{
	unsigned n, units;
	double t, c;
	r4_db *db;

	if (argc != 4) {
		fprintf(stderr, "usage: lang IMG N UNITS\n");
		return 2;
	}
	n = (unsigned)strtoul(argv[2], NULL, 10);
	units = (unsigned)strtoul(argv[3], NULL, 10);

	db = fresh(argv[1]);
	cpu_start = cpu();
	report("direct-atomic-create", direct(db, n, 1, true), n);
	cpu_start = cpu();
	report("direct-atomic-overwrite", direct(db, n, 2, true), n);
	verify(db, n, 2);
	r4_close(db);

	db = fresh(argv[1]);
	cpu_start = cpu();
	t = language(db, n, 1, false, &c);
	report("lang-atomic-create", t, n);
	printf("phase=lang-atomic-create-compile secs=%.3f share=%.3f\n", c, c / t);
	cpu_start = cpu();
	t = language(db, n, 2, false, &c);
	report("lang-atomic-overwrite", t, n);
	printf("phase=lang-atomic-overwrite-compile secs=%.3f share=%.3f\n", c, c / t);
	verify(db, n, 2);
	r4_close(db);

	db = fresh(argv[1]);
	cpu_start = cpu();
	report("direct-units", direct(db, units, 1, false), units);
	verify(db, units, 1);
	r4_close(db);

	db = fresh(argv[1]);
	cpu_start = cpu();
	t = language(db, units, 1, true, &c);
	report("lang-units", t, units);
	printf("phase=lang-units-compile secs=%.3f share=%.3f\n", c, c / t);
	verify(db, units, 1);
	r4_close(db);
	return 0;
}
