/*
 * test_exec.c - the plan executor through r4_run, beyond what the corpus
 * (tests/lang/run.t) shows one case at a time:
 *
 *  - compare-and-swap from two threads sharing one image: every swap
 *    that reports success is counted exactly once;
 *  - a failure at each statement of a unit, a failed allocation at each
 *    allocation of a run, a full volume, an interrupt, a host that
 *    refuses a value: each leaves the image file byte for byte as it was;
 *  - named results: a unit whose every statement fails under '<=' runs
 *    to its end and commits what the rest did;
 *  - sessions (r4sh's begin ... commit): a failing command is undone
 *    alone, rollback gives the image back byte for byte;
 *  - the audit record of R4L's changes (engine/audit.c, r4_audit_change).
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "audit.h"
#include "r4_lang.h"
#include "t.h"

static char dir[64], img[128];

static char *slurp(const char *path, size_t *n)
{
	FILE *f = fopen(path, "rb");
	char *b;
	long len;

	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	len = ftell(f);
	rewind(f);
	b = malloc((size_t)len + 1);
	*n = fread(b, 1, (size_t)len, f);
	fclose(f);
	return b;
}

static r4_db *open_rw(void)
{
	struct r4_open_opts o = {.rw = true};
	r4_db *db = NULL;

	CHECK_RC(r4_open(img, &o, &db));
	return db;
}

/* Run src as root on db; its rc. */
static int run(r4_db *db, const char *src)
{
	struct r4_run *r = NULL;
	int rc = r4_run(db, src, strlen(src), NULL, &r);

	if (rc && r && getenv("R4_TEST_VERBOSE"))
		r4_diag_print(r->diags, stderr);
	r4_run_free(r);
	return rc;
}

/* The contents of path, as a string (static buffer). */
static const char *contents(r4_db *db, const char *path)
{
	static char buf[256];
	size_t got = 0;

	if (r4_read(db, path, 0, buf, sizeof(buf) - 1, &got))
		return "(missing)";
	buf[got] = 0;
	return buf;
}

static void fresh(const char *setup, uint64_t size)
{
	struct r4_mkfs_opts mo;
	r4_db *db;

	unlink(img);
	r4_mkfs_defaults(&mo);
	CHECK_RC(r4_mkfs(img, size, &mo));
	db = open_rw();
	if (db && setup)
		CHECK_RC(run(db, setup));
	if (db) {
		CHECK_RC(r4_sync(db));
		r4_close(db);
	}
}

/* ---- two writers, one lock: compare-and-swap is serializable ---- */

struct cas {
	r4_db *db;
	pthread_mutex_t *mu;
	unsigned wins, rounds;
	const char *me;
};

static int see_value(void *ctx, const struct r4_value *v)
{
	struct cas *c = ctx;

	/* "won" when the swap happened, "busy" if not */
	if (!v->path && v->size == 3 && !memcmp(v->bytes, "won", 3))
		c->wins++;
	return 0;
}

static void *cas_thread(void *arg)
{
	struct cas *c = arg;
	char cmd[512];

	for (unsigned i = 0; i < c->rounds; i++) {
		struct r4_run_opts ro = {.exec = {.who = {.umask = 022}, .yield = see_value, .ctx = c}};
		struct r4_run *r = NULL;

		/* take the lock, bump the counter and release, all in one unit */
		snprintf(cmd, sizeof(cmd),
			 "tw/[ if /lock eq \"free\" then (/lock <- \"%s\"; /count <- /count + \"x\"; "
			 "/lock <- \"free\"; \"won\") else \"busy\" ]", c->me);
		pthread_mutex_lock(c->mu);	/* the host serializes units (one writer) */
		r4_run(c->db, cmd, strlen(cmd), &ro, &r);
		pthread_mutex_unlock(c->mu);
		if (!r || r->rc)
			c->rounds = 0;	/* reported below */
		r4_run_free(r);
	}
	return NULL;
}

static void test_cas(void)
{
	pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
	struct cas a = {NULL, &mu, 0, 200, "a"}, b = {NULL, &mu, 0, 200, "b"};
	pthread_t ta, tb;
	r4_db *db;

	fresh("/lock <- \"free\"; /count <- \"\"", 4 << 20);
	if (!(db = open_rw()))
		return;
	a.db = b.db = db;
	pthread_create(&ta, NULL, cas_thread, &a);
	pthread_create(&tb, NULL, cas_thread, &b);
	pthread_join(ta, NULL);
	pthread_join(tb, NULL);
	CHECK_EQ(a.rounds, 200);
	CHECK_EQ(b.rounds, 200);
	/* each unit found the lock free (it is released inside the unit) */
	CHECK_EQ(a.wins + b.wins, 400);
	CHECK_EQ(strlen(contents(db, "/count")), 400 > 255 ? 255 : 400);
	struct r4_stat st;

	CHECK_RC(r4_stat(db, "/count", &st));
	CHECK_EQ(st.size, 400);
	CHECK(!strcmp(contents(db, "/lock"), "free"));

	/* a held lock makes both writers back off, and nothing changes */
	CHECK_RC(run(db, "/lock <- \"held\""));
	a.wins = b.wins = 0;
	a.rounds = b.rounds = 20;
	pthread_create(&ta, NULL, cas_thread, &a);
	pthread_create(&tb, NULL, cas_thread, &b);
	pthread_join(ta, NULL);
	pthread_join(tb, NULL);
	CHECK_EQ(a.wins + b.wins, 0);
	CHECK_RC(r4_stat(db, "/count", &st));
	CHECK_EQ(st.size, 400);
	r4_close(db);
}

/* ---- failures leave the image as it was ---- */

static const char *const SETUP =
	"/..new/(name <- \"bank\", type <- directory); /bank/alice <- \"100\"; "
	"/bank/bob <- \"50\"; /doc <- \"0123456789\"";

/* The statements of the unit; each changes something different. */
static const char *const STMTS[] = {
	"/bank/alice <- \"1\"",
	"/bank/..new/(name <- \"d\", type <- directory)/(x <- \"in d\")",
	"/bank/bob/..mode <- \"0600\"",
	"/bank/alice/..name <- \"al\"",
	"/bank/s -> \"al\"",
	"/bank/..link/(name <- \"h\", target <- /bank/bob)",
	"/doc/..range/(offset <- #2, length <- #3) <- \"abcdef\"",
	"/bank/..unlink <- \"bob\"",
	"/bank/log <<- \"done\\n\"",
};
#define NSTMTS (sizeof(STMTS) / sizeof(STMTS[0]))

/* The unit: STMTS, with a failing statement after the first k. */
static void unit_text(size_t k, char *out, size_t n)
{
	size_t o = 0;

	for (size_t i = 0; i < NSTMTS; i++) {
		if (i == k)
			o += (size_t)snprintf(out + o, n - o, "/bank/nothing/x; ");
		o += (size_t)snprintf(out + o, n - o, "%s; ", STMTS[i]);
	}
	if (k == NSTMTS)
		o += (size_t)snprintf(out + o, n - o, "/bank/nothing/x");
}

static bool image_is(const char *before, size_t nb)
{
	size_t na;
	char *after = slurp(img, &na);
	bool same = after && na == nb && !memcmp(before, after, nb);

	free(after);
	return same;
}

static void test_fail_at_each_statement(void)
{
	char cmd[2048];
	char *before;
	size_t nb;

	fresh(SETUP, 4 << 20);
	before = slurp(img, &nb);
	for (size_t k = 0; k <= NSTMTS; k++) {
		r4_db *db = open_rw();

		if (!db)
			break;
		unit_text(k, cmd, sizeof(cmd));
		CHECK_EQ(run(db, cmd), -ENOENT);
		r4_close(db);
		CHECK(image_is(before, nb));
	}
	/* and the whole unit, without the failure, does commit */
	r4_db *db = open_rw();

	if (db) {
		unit_text(NSTMTS + 1, cmd, sizeof(cmd));
		CHECK_RC(run(db, cmd));
		CHECK(!strcmp(contents(db, "/doc"), "01abcdef56789"));
		CHECK(!strcmp(contents(db, "/bank/h"), "50"));
		CHECK(!strcmp(contents(db, "/bank/d/x"), "in d"));
		r4_close(db);
		/* what the executor wrote, reiser4progs reads as consistent */
		int v = t_fsck(img);

		if (v < 0)
			printf("skip: fsck.reiser4 not installed: the executor's image is not "
			       "checked by reiser4progs\n");
		else
			CHECK(v == 1);
	}
	free(before);
}

/* Every allocation of a run, failed in turn: a clean error, nothing
 * changed, nothing leaked (the sanitizer build), never a crash. */
static void test_heap_failures(void)
{
	char cmd[2048];
	char *before;
	size_t nb;
	unsigned long n;
	unsigned failed = 0;

	fresh(SETUP, 4 << 20);
	before = slurp(img, &nb);
	unit_text(NSTMTS + 1, cmd, sizeof(cmd));
	for (n = 1; n < 20000; n++) {
		r4_db *db = open_rw();
		struct r4_run *r = NULL;
		int rc;

		if (!db)
			break;
		r4_heap_fail_at(n);
		rc = r4_run(db, cmd, strlen(cmd), NULL, &r);
		r4_heap_fail_at(0);
		if (rc && getenv("R4_TEST_VERBOSE"))
			r4_diag_print(r->diags, stderr);
		r4_run_free(r);
		r4_close(db);
		if (!rc)
			break;	/* n is past the run's last allocation */
		failed++;
		if (!image_is(before, nb)) {
			fprintf(stderr, "allocation %lu failed (%s): the image changed\n", n,
				r4_strerror(rc));
			t_fail++;
			fresh(SETUP, 4 << 20);
			free(before);
			before = slurp(img, &nb);
		}
	}
	printf("heap failures: %u allocations failed in turn\n", failed);
	CHECK(failed > 50);	/* (75: a write right after the make of its path walks no more) */
	CHECK(n < 20000);
	free(before);
}

/* A volume too small for the unit: ENOSPC, and nothing of it stays. */
static void test_full_volume(void)
{
	char cmd[2048];
	size_t o, nb;
	char *before;
	r4_db *db;

	fresh("/small <- \"s\"", 4 << 20);
	before = slurp(img, &nb);
	/* doubling a file 20 times: 8 MiB into a 4 MiB volume */
	o = (size_t)snprintf(cmd, sizeof(cmd), "/a <- \"x\"; /big <- \"12345678\"");
	for (int i = 0; i < 20; i++)
		o += (size_t)snprintf(cmd + o, sizeof(cmd) - o, "; /big <- /big + /big");
	if (!(db = open_rw()))
		return;
	CHECK_EQ(run(db, cmd), -ENOSPC);
	r4_close(db);
	CHECK(image_is(before, nb));
	free(before);
}

static volatile int stop_now;

static int stop_on_value(void *ctx, const struct r4_value *v)
{
	(void)ctx;
	(void)v;
	return -EPERM;
}

static void test_cancel_and_refusal(void)
{
	struct r4_run_opts ro = {.exec = {.who = {.umask = 022}, .cancel = &stop_now}};
	struct r4_run *r = NULL;
	char cmd[2048];
	char *before;
	size_t nb;
	r4_db *db;

	fresh(SETUP, 4 << 20);
	before = slurp(img, &nb);
	unit_text(NSTMTS + 1, cmd, sizeof(cmd));
	stop_now = 1;
	db = open_rw();
	CHECK_EQ(r4_run(db, cmd, strlen(cmd), &ro, &r), -EINTR);
	CHECK(r && r->stage == R4_RUN_RUNTIME && r4_diag_errors(r->diags) == 1);
	r4_run_free(r);
	r4_close(db);
	CHECK(image_is(before, nb));
	stop_now = 0;

	/* a host that refuses the values: the unit does not commit */
	ro.exec.yield = stop_on_value;
	db = open_rw();
	CHECK_EQ(r4_run(db, cmd, strlen(cmd), &ro, &r), -EPERM);
	r4_run_free(r);
	r4_close(db);
	CHECK(image_is(before, nb));
	free(before);
}

/* Every statement under '<=' fails; the unit still commits the rest. */
static void test_many_named_failures(void)
{
	char cmd[4096];
	size_t o = 0;
	r4_db *db;

	fresh(SETUP, 4 << 20);
	for (int i = 0; i < 30; i++)
		o += (size_t)snprintf(cmd + o, sizeof(cmd) - o,
				      "/bank/ok%d <- \"%d\"; r%d <= /bank/no/f%d <- \"x\"; "
				      "/bank/log <<- r%d/assign_result; ", i, i, i, i, i);
	if (!(db = open_rw()))
		return;
	CHECK_RC(run(db, cmd));
	CHECK(!strcmp(contents(db, "/bank/ok29"), "29"));
	CHECK(!strcmp(contents(db, "/bank/ok0"), "0"));
	CHECK_EQ(strlen(contents(db, "/bank/log")), 30);	/* "2" thirty times */
	r4_close(db);
}

/* Run src in session ss (identity: root); its rc. */
static int run_in(r4_db *db, r4_session *ss, const char *src)
{
	struct r4_run_opts ro = {.exec = {.session = ss, .who = {.umask = 022}}};
	struct r4_run *r = NULL;
	int rc = r4_run(db, src, strlen(src), &ro, &r);

	r4_run_free(r);
	return rc;
}

/* Sessions: begin ... commit over several commands; a failing command is
 * undone alone; rollback restores the image exactly. */
static void test_sessions(void)
{
	r4_session *ss = NULL;
	char *before;
	size_t nb;
	r4_db *db;

	fresh(SETUP, 4 << 20);
	before = slurp(img, &nb);
	if (!(db = open_rw()))
		return;
	CHECK_RC(r4_session_begin(db, &ss));
	CHECK_RC(run_in(db, ss, "/bank/alice <- \"1\""));
	CHECK_RC(run_in(db, ss, "/bank/..new/(name <- \"d\", type <- directory)/(x <- \"in d\")"));
	/* a failing command: its own changes go, the session's stay */
	CHECK_EQ(run_in(db, ss, "/bank/bob <- \"2\"; /bank/nothing/x"), -ENOENT);
	CHECK(!strcmp(contents(db, "/bank/alice"), "1"));
	CHECK(!strcmp(contents(db, "/bank/bob"), "50"));
	CHECK(!strcmp(contents(db, "/bank/d/x"), "in d"));
	/* a named result inside a session: the unit is redone with the rest */
	CHECK_RC(run_in(db, ss, "r <= /bank/q/z <- \"1\"; /bank/log <- r/assign_result"));
	CHECK(!strcmp(contents(db, "/bank/log"), "2"));
	CHECK(!strcmp(contents(db, "/bank/d/x"), "in d"));
	CHECK_EQ(r4_session_runs(ss), 3);
	/* nothing reached the image yet; rollback gives it back exactly */
	r4_session_rollback(ss);
	CHECK(!strcmp(contents(db, "/bank/alice"), "100"));
	CHECK(!strcmp(contents(db, "/bank/d/x"), "(missing)"));
	r4_close(db);
	CHECK(image_is(before, nb));

	/* commit keeps them all, in one transaction */
	if (!(db = open_rw()))
		return;
	CHECK_RC(r4_session_begin(db, &ss));
	CHECK_EQ(r4_session_begin(db, &ss), -EBUSY);
	CHECK_RC(run_in(db, ss, "/bank/alice <- \"7\""));
	CHECK_EQ(run_in(db, ss, "*\"\""), -EINVAL);
	CHECK_RC(run_in(db, ss, "/bank/bob <- /bank/alice + \"0\""));
	/* outside the session, the open transaction is in the way */
	CHECK_EQ(run(db, "/bank/x <- \"1\""), -EBUSY);
	CHECK_RC(r4_session_commit(ss));
	r4_close(db);
	db = open_rw();
	CHECK(!strcmp(contents(db, "/bank/alice"), "7"));
	CHECK(!strcmp(contents(db, "/bank/bob"), "70"));
	r4_close(db);
	free(before);
}

/* A whole session (r4sh --atomic): no run is kept to be redone, so a
 * failing run breaks it and commit refuses; a TRY that must redo the
 * session's runs fails instead of redoing a part of it; rollback gives
 * the image back exactly. */
static void test_whole_session(void)
{
	r4_session *ss = NULL;
	char *before;
	size_t nb;
	r4_db *db;

	fresh(SETUP, 4 << 20);
	before = slurp(img, &nb);
	if (!(db = open_rw()))
		return;
	CHECK_RC(r4_session_begin(db, &ss));
	r4_session_whole(ss);
	CHECK_RC(run_in(db, ss, "/bank/alice <- \"1\""));
	CHECK_RC(run_in(db, ss, "/bank/bob <- \"2\""));
	CHECK_EQ(r4_session_runs(ss), 0);	/* (none kept) */
	CHECK_EQ(run_in(db, ss, "/bank/carol <- \"3\"; /bank/nothing/x"), -ENOENT);
	CHECK_EQ(run_in(db, ss, "/bank/dave <- \"4\""), -EIO);	/* broken */
	CHECK_EQ(r4_session_commit(ss), -EIO);
	CHECK(!strcmp(contents(db, "/bank/alice"), "100"));
	r4_close(db);
	CHECK(image_is(before, nb));

	if (!(db = open_rw()))
		return;
	CHECK_RC(r4_session_begin(db, &ss));
	r4_session_whole(ss);
	CHECK_RC(run_in(db, ss, "/bank/alice <- \"1\""));
	CHECK_EQ(run_in(db, ss, "r <= /bank/q/z <- \"1\"; /bank/log <- r/assign_result"),
		 -ENOTRECOVERABLE);
	r4_session_rollback(ss);
	r4_close(db);
	CHECK(image_is(before, nb));

	/* committed whole when every run went well */
	if (!(db = open_rw()))
		return;
	CHECK_RC(r4_session_begin(db, &ss));
	r4_session_whole(ss);
	CHECK_RC(run_in(db, ss, "/bank/alice <- \"8\""));
	CHECK_RC(run_in(db, ss, "/bank/bob <- /bank/alice + \"0\""));
	CHECK_RC(r4_session_commit(ss));
	r4_close(db);
	db = open_rw();
	CHECK(!strcmp(contents(db, "/bank/alice"), "8"));
	CHECK(!strcmp(contents(db, "/bank/bob"), "80"));
	r4_close(db);
	free(before);
}

/* r4_run in its two halves: r4_run_prepare touches no volume (a front-end
 * error is its stage, nothing to run), r4_run_exec runs what it prepared
 * with the same options, a prepared run freed unrun leaks nothing; parts
 * prepared ahead, in another thread, run in order. */
struct prep_arg {
	const char *src[3];
	struct r4_run *r[3];
};

static void *prepare_all(void *arg)
{
	struct prep_arg *a = arg;

	for (int i = 0; i < 3; i++)
		r4_run_prepare(a->src[i], strlen(a->src[i]), NULL, &a->r[i]);
	return NULL;
}

static void test_prepare_exec(void)
{
	struct prep_arg a = {{"/bank/alice <- \"7\"", "/bank/bob <- /bank/alice + \"1\"",
			      "/bank/alice"}, {NULL}};
	struct r4_run_opts ro = {.exec = {.read_objects = true}};
	struct r4_run *r = NULL;
	pthread_t t;
	r4_db *db;

	fresh(SETUP, 4 << 20);
	CHECK_EQ(r4_run_prepare("/bank/alice <- ", 15, NULL, &r), -EINVAL);
	CHECK(r && r->stage == R4_RUN_SYNTAX && !r->plan && r4_diag_count(r->diags) == 1);
	r4_run_free(r);
	r = NULL;
	CHECK_RC(r4_run_prepare("/bank/alice <- \"5\"", 18, NULL, &r));
	CHECK(r && r->stage == R4_RUN_OK && r->plan);
	r4_run_free(r);	/* (prepared, never run) */
	if (!(db = open_rw()))
		return;
	CHECK_RC(pthread_create(&t, NULL, prepare_all, &a));
	CHECK_RC(pthread_join(t, NULL));
	for (int i = 0; i < 3; i++) {
		CHECK(a.r[i] && a.r[i]->stage == R4_RUN_OK);
		CHECK_RC(r4_run_exec(db, a.r[i], &ro));
		CHECK(!a.r[i]->plan && a.r[i]->units == 1);
	}
	CHECK(a.r[2]->nvalues == 1 && a.r[2]->values[0].size == 1 && a.r[2]->values[0].bytes[0] == '7');
	CHECK(!strcmp(contents(db, "/bank/bob"), "71"));
	for (int i = 0; i < 3; i++)
		r4_run_free(a.r[i]);
	r4_close(db);
}

/* ---- the audit record of R4L's changes (engine/audit.c) ---- */

/* A file audited through R4L: r4_audit_change writes the executor's line
 * (at the engine's clock), nothing for the log itself, and a log that is
 * gone is refused before anything changes. */
static void test_audit_api(void)
{
	static const char line[] = "1700000000 1001 rename /a\\x0ab\\x5cc 6\n";
	struct r4_why why = {""};
	struct r4_stat f, log;
	r4_db *db;

	fresh("/f <- \"x\"; /log <- \"\"", 4 << 20);
	setenv("R4_TEST_CLOCK", "1700000000", 1);
	db = open_rw();
	unsetenv("R4_TEST_CLOCK");
	if (!db)
		return;
	CHECK_RC(r4_stat(db, "/f", &f));
	CHECK_RC(r4_stat(db, "/log", &log));
	/* not audited: nothing */
	CHECK_RC(r4_audit_change(db, 0, f.ino, 0, "write", "/f", 1, &why));
	CHECK_RC(run(db, "/f/..audit/(log <- /log); /log <- \"\""));
	CHECK_RC(r4_audit_change(db, 1001, f.ino, 0, "rename", "/a\nb\\c", 6, &why));
	CHECK_RC(r4_audit_change(db, 0, log.ino, 0, "write", "/log", 1, &why));	/* the log */
	CHECK(!strcmp(contents(db, "/log"), line));
	CHECK_RC(r4_rename(db, "/log", "/log.1", 0));
	CHECK_EQ(r4_audit_change(db, 0, f.ino, 0, "write", "/f", 1, &why), -ENOENT);
	CHECK(strstr(why.msg, "'/log'") != NULL);
	CHECK(!strcmp(contents(db, "/log.1"), line));
	r4_close(db);
}

/* R4L and a real "..x" (docs/semantics.md, "Names"): ..list lists it,
 * ..unlink removes it; a path still takes "..x" as a pseudo name, so R4L
 * makes no such entry; r4's own "/..r4" stays out of reach. */
static void test_dotdot_entries(void)
{
	struct r4_stat st;
	r4_db *db;

	fresh("/..new/(name <- \"d\"; type <- directory); /d/keep <- \"k\"; /a <- \"x\"", 4 << 20);
	if (!(db = open_rw()))
		return;
	CHECK_RC(r4_create(db, "/d/..x", 0644, 0, 0));
	CHECK_RC(run(db, "/l <- /d/..list"));
	CHECK(strstr(contents(db, "/l"), "\n..x\nkeep\n") ||
	      strstr(contents(db, "/l"), "\nkeep\n..x\n"));
	CHECK(run(db, "/d/..new/(name <- \"..y\")") != 0);
	CHECK_EQ(r4_stat(db, "/d/..y", &st), -ENOENT);
	CHECK_RC(run(db, "/d/..unlink <- \"..x\""));
	CHECK_EQ(r4_stat(db, "/d/..x", &st), -ENOENT);
	CHECK_RC(run(db, "/a/..acl/(uid <- #7; access <- read)"));
	CHECK(run(db, "/..unlink <- \"..r4\"") != 0);
	CHECK_RC(r4_stat(db, "/..r4", &st));
	r4_close(db);
}

/* Run src with options ro (NULL: as root); its rc, its diagnostics in
 * diag[0, len). */
static int run_diags(r4_db *db, const char *src, const struct r4_run_opts *ro, char *diag,
		     size_t len)
{
	struct r4_run *r = NULL;
	FILE *f = fmemopen(diag, len, "w");
	int rc = r4_run(db, src, strlen(src), ro, &r);

	diag[0] = 0;
	if (f && r)
		r4_diag_print(r->diags, f);
	if (f)
		fclose(f);
	r4_run_free(r);
	return rc;
}

/* The diagnostics of running src as root (static buffer). */
static const char *diags_of(r4_db *db, const char *src)
{
	static char out[1024];

	run_diags(db, src, NULL, out, sizeof(out));
	return out;
}

/* A real "..x" made by the fs API, through R4L: a path made at run time
 * (a dereference, a symlink's text) reaches the entry; a pseudo name the
 * compiler checked stays the pseudo file, as in the bridge's meta view. */
static void test_dotdot_in_r4l(void)
{
	r4_db *db;

	fresh("/..new/(name <- \"d\"; type <- directory); /d/..mode <- \"0750\"; "
	      "/d/loop -> loop", 4 << 20);
	if (!(db = open_rw()))
		return;
	CHECK_RC(r4_create(db, "/d/..foo", 0644, 0, 0));
	CHECK_RC(r4_write(db, "/d/..foo", 0, "foo", 3));
	CHECK_RC(r4_create(db, "/d/..mode", 0600, 0, 0));
	CHECK_RC(r4_write(db, "/d/..mode", 0, "real", 4));
	CHECK_RC(run(db, "/r <- *\"/d/..foo\""));
	CHECK(!strcmp(contents(db, "/r"), "foo"));
	CHECK_RC(run(db, "(*\"/d/..foo\") <- \"new\""));
	CHECK(!strcmp(contents(db, "/d/..foo"), "new"));
	CHECK_RC(run(db, "/l -> \"/d/..foo\"; /r <- /l; /l <<- \"er\""));
	CHECK(!strcmp(contents(db, "/r"), "new"));
	CHECK(!strcmp(contents(db, "/d/..foo"), "newer"));
	CHECK_RC(run(db, "/r <- *\"/d/..mode\"; /m <- /d/..mode"));
	CHECK(!strcmp(contents(db, "/r"), "real"));
	CHECK(!strcmp(contents(db, "/m"), "0750"));
	/* never made by R4L: a missing "..x" is no name to create */
	CHECK_EQ(run(db, "(*\"/d/..bar\") <- \"x\""), -ENOENT);
	/* a symlink loop, named by the step's own component */
	CHECK(strstr(diags_of(db, "/d/loop/x"), "1:1: error: cannot read '/d/loop': "
		     "Too many levels of symbolic links\n/d/loop/x\n^~~~~~~\n"));
	r4_close(db);
}

/* Run src as uid 1000 with umask um: its rc, its diagnostics in *diag. */
static int run_as_user(r4_db *db, const char *src, uint32_t um, char *diag, size_t len)
{
	struct r4_run_opts ro = {.exec = {.who = {.uid = 1000, .gid = 1000, .umask = um}}};

	return run_diags(db, src, &ro, diag, len);
}

/* A missing name written to is made with its contents in one change
 * (stored with it when they go in tails): what follows in the unit sees
 * a file with a body, and every way the write would have gone otherwise
 * (a file its maker may not write, a ',' group, contents that go in
 * extents, an append) goes as before. */
static void test_made_with_contents(void)
{
	char big[20001], mid[3001], diag[1024] = "";
	struct r4_check_result cr;
	r4_db *db;

	memset(big, 'b', sizeof(big) - 1);
	big[sizeof(big) - 1] = 0;
	memset(mid, 'm', sizeof(mid) - 1);
	mid[sizeof(mid) - 1] = 0;
	fresh("/..new/(name <- \"d\"; type <- directory); /d/..mode <- \"0777\"", 16 << 20);
	if (!(db = open_rw()))
		return;
	/* then written again, appended to, cut, in the same unit */
	CHECK_RC(run(db, "/d/f <- \"abc\"; /d/f <<- \"def\"; /d/g <- \"12345\"; /d/g <- \"x\"; "
		     "/d/h <- \"long contents\"; /d/h/..size <- \"4\"; /d/e <- \"\"; /d/a <<- \"z\""));
	CHECK(!strcmp(contents(db, "/d/f"), "abcdef"));
	CHECK(!strcmp(contents(db, "/d/g"), "x"));
	CHECK(!strcmp(contents(db, "/d/h"), "long"));
	CHECK(!strcmp(contents(db, "/d/e"), ""));
	CHECK(!strcmp(contents(db, "/d/a"), "z"));
	/* many in one unit, some bigger than a leaf has room for */
	{
		char src[64 * 3100];
		size_t o = 0;

		for (int i = 0; i < 60; i++)
			o += (size_t)snprintf(src + o, sizeof(src) - o, "/d/m%02d <- \"%s\"; ", i, mid);
		CHECK_RC(run(db, src));
	}
	{
		static char buf[4000];
		size_t got = 0;

		CHECK_RC(r4_read(db, "/d/m37", 0, buf, sizeof(buf), &got));
		CHECK_EQ(got, sizeof(mid) - 1);
		CHECK(!memcmp(buf, mid, sizeof(mid) - 1));
	}
	{
		char *src = malloc(sizeof(big) + 32);
		struct r4_stat st;

		snprintf(src, sizeof(big) + 32, "/d/big <- \"%s\"", big);
		CHECK_RC(run(db, src));
		free(src);
		CHECK_RC(r4_stat(db, "/d/big", &st));
		CHECK_EQ(st.size, sizeof(big) - 1);
	}
	/* a ',' group: each made with its contents, as before */
	CHECK_RC(run(db, "/d/p <- \"1\", /d/q <- \"2\""));
	CHECK(!strcmp(contents(db, "/d/p"), "1"));
	CHECK(!strcmp(contents(db, "/d/q"), "2"));
	/* its maker may not write it (umask 0277: 0400): refused as the write
	 * refuses, and nothing of the unit stays */
	CHECK_EQ(run_as_user(db, "/d/u <- \"secret\"", 0277, diag, sizeof(diag)), -EACCES);
	CHECK(!strcmp(diag, "<command>:1:1: error: cannot write '/d/u': Permission denied\n"
			"/d/u <- \"secret\"\n^~~~~~~~~~~~~~~~\n"));
	CHECK(!strcmp(contents(db, "/d/u"), "(missing)"));
	CHECK_RC(run_as_user(db, "/d/v <- \"mine\"", 022, diag, sizeof(diag)));
	CHECK(!strcmp(contents(db, "/d/v"), "mine"));
	CHECK_RC(r4_sync(db));
	CHECK_RC(r4_check(db, NULL, &cr));
	CHECK_EQ(cr.problems, 0);
	r4_close(db);
}

int main(void)
{
	snprintf(dir, sizeof(dir), "%s/r4exec.XXXXXX", t_tmp());
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	snprintf(img, sizeof(img), "%s/img", dir);
	test_cas();
	test_fail_at_each_statement();
	test_heap_failures();
	test_full_volume();
	test_cancel_and_refusal();
	test_many_named_failures();
	test_sessions();
	test_whole_session();
	test_prepare_exec();
	test_audit_api();
	test_dotdot_entries();
	test_dotdot_in_r4l();
	test_made_with_contents();
	t_rmdir(dir);
	return T_DONE();
}
