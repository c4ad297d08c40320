/*
 * repack.c - the repacker on a live mount (docs/repack.md, "Live
 * mounts"): `r4 repack MNT [PATH]` asks the control file to start a pass,
 * then asks how it goes until it ends.  The pass is the engine's
 * (r4_repack), run by a thread of the bridge inside the group of calls:
 * it holds the mutex for a slice of work at a time and between objects
 * lets the POSIX calls in, commits through the group's commit, and stops
 * at a client's stop, at unmount, or when the mount turns read-only.
 *
 * The control file's pragmas (special.c hands them here), each answered
 * with the state below:
 *   # r4 repack start COMMIT RATE FLAGS PATH    a pass over PATH: COMMIT
 *        bytes moved per commit (0: the engine's default), RATE bytes moved
 *        per second at most (0: no limit); FLAGS 1: keep a line per file
 *        moved or skipped, 2: compact (r4_repack_opts)
 *   # r4 repack status SEQ     the state, and the kept lines from SEQ on
 *   # r4 repack stop           ask the pass to stop before its next object
 * The answer, a line each (a refusal: one line, "error ERRNO"):
 *   state running|done|failed ERRNO|stopped interrupted|unmount|read-only
 *   stats FILES IN_PLACE MOVED NO_ROOM BUSY BLOCKS RUNS_BEFORE RUNS_AFTER
 *         COMMITS NODES_MOVED NODES_NO_ROOM
 *   before|after DATA_FRAG TREE_FRAG LEAF_FILL TWIG_FILL SEEKS_PER_MIB
 *   next SEQ
 *   file SEQ moved|skipped|busy BLOCKS RUNS NEW_RUNS TO PATH
 * Only root and the user who mounted may start, stop or ask (EPERM).
 */
#include "bridge.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

enum {
	SLICE_NS = 20 * 1000 * 1000,	/* work under the mutex before letting others in */
	GAP_NS = 2 * 1000 * 1000,	/* and then the mutex left to them for this long */
	MAX_LINES = 100000,		/* file lines kept for a client that lags */
};

enum state { IDLE, RUNNING, DONE, FAILED, STOPPED };

static struct {
	enum state state;
	pthread_cond_t ended;		/* signalled when a pass ends */
	bool stop;			/* a client asked it to stop */
	bool ro;			/* the mount was made read-only (remount) */
	const char *why;		/* STOPPED: what stopped it */
	int err;			/* FAILED: the error */
	char *path;
	struct r4_repack_opts o;
	uint64_t rate, bs;
	bool verbose;
	struct r4_repack_stats st;
	struct r4_frag before, after;
	bool have_before, have_after;
	char **lines;			/* file lines first_seq .. first_seq + nlines - 1 */
	size_t nlines, cap;
	uint64_t first_seq;
	struct timespec t0, slice;	/* the pass's start; this slice's */
} R = {.ended = PTHREAD_COND_INITIALIZER};

static const struct r4_ident repacker = {.uid = 0, .gid = 0, .umask = 022};

static uint64_t ns_since(const struct timespec *t)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (uint64_t)(now.tv_sec - t->tv_sec) * 1000000000u + (uint64_t)now.tv_nsec -
	       (uint64_t)t->tv_nsec;
}

/* The mutex left to the others for ns (the engine's identity put back). */
static void let_others_in(uint64_t ns)
{
	struct timespec until;
	pthread_cond_t cv = PTHREAD_COND_INITIALIZER;

	r4_act_as(B.db, NULL, 0);
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += (time_t)(ns / 1000000000u);
	until.tv_nsec += (long)(ns % 1000000000u);
	if (until.tv_nsec >= 1000000000) {
		until.tv_sec++;
		until.tv_nsec -= 1000000000;
	}
	pthread_cond_timedwait(&cv, &B.mu, &until);
	pthread_cond_destroy(&cv);
	r4_act_as(B.db, &repacker, R4_AS_NOCHECK);
}

/*
 * Between objects (the engine asks, outside any operation): after a slice
 * of work, the POSIX calls get the mutex for a while; over the rate, for
 * as long as the data moved is ahead of it.  True: stop.
 */
static bool pause_here(void *ctx)
{
	bool slice_over = ns_since(&R.slice) >= SLICE_NS;

	(void)ctx;
	for (;;) {
		uint64_t due = R.rate ? R.st.blocks_moved * R.bs * 1000000000u / R.rate : 0,
			 spent = ns_since(&R.t0), wait = due > spent ? due - spent : 0;

		if (slice_over || wait) {
			let_others_in(wait ? (wait < 50000000u ? wait : 50000000u) : GAP_NS);
			clock_gettime(CLOCK_MONOTONIC, &R.slice);
			/* (a remount changes the kernel's flags only: r4fuse.c) */
		R.ro = R.ro || (B.mountpoint && r4_mount_ro(B.mountpoint));
			slice_over = false;
		}
		if (B.stop || B.ro || R.ro || R.stop)
			R.why = B.stop ? "unmount" : B.ro || R.ro ? "read-only" : "interrupted";
		if (R.why || !wait)
			return R.why != NULL;
	}
}

static int commit_group(void *ctx)
{
	(void)ctx;
	return br_commit();
}

/* Each extent file met: the counts so far; with verbose, a line. */
static void file_met(void *ctx, const struct r4_repack_file *f, const struct r4_repack_stats *so)
{
	static const char *what[] = {"in-place", "moved", "skipped", "busy"};
	char *line;

	(void)ctx;
	(void)so;	/* (R.st itself: the pass counts into it) */
	if (!R.verbose || f->what == R4_REPACK_IN_PLACE)
		return;
	if (R.nlines == MAX_LINES) {	/* the oldest go */
		free(R.lines[0]);
		memmove(R.lines, R.lines + 1, (R.nlines - 1) * sizeof(*R.lines));
		R.nlines--;
		R.first_seq++;
	}
	if (r4_grow((void **)&R.lines, &R.cap, R.nlines + 1, sizeof(*R.lines), 64) ||
	    asprintf(&line, "%s %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 " %s", what[f->what],
		     f->blocks, f->runs, f->new_runs, f->to, f->path) < 0)
		return;	/* (a line lost to memory) */
	R.lines[R.nlines++] = line;
}

/* The pass's thread (detached: rp_end waits for R.ended). */
static void *pass(void *arg)
{
	int rc;

	(void)arg;
	pthread_mutex_lock(&B.mu);
	r4_act_as(B.db, &repacker, R4_AS_NOCHECK);
	clock_gettime(CLOCK_MONOTONIC, &R.t0);
	R.slice = R.t0;
	/* the layout before: of the last commit, the group's first */
	if (!(rc = br_commit()) && !(rc = r4_frag(B.db, R.path, &R.before)))
		R.have_before = true;
	if (!rc && !(rc = br_change_begin()))
		rc = br_change_end("repack", r4_repack(B.db, R.path, &R.o, &R.st));
	if (!rc)
		rc = br_commit();
	if (!rc && !B.stop && !r4_frag(B.db, R.path, &R.after))
		R.have_after = true;
	if (rc) {
		R.state = FAILED;
		R.err = rc;
	} else {
		R.state = R.st.stopped ? STOPPED : DONE;
	}
	r4_act_as(B.db, NULL, 0);
	pthread_cond_broadcast(&R.ended);
	pthread_mutex_unlock(&B.mu);
	return NULL;
}

static void clear(void)
{
	for (size_t i = 0; i < R.nlines; i++)
		free(R.lines[i]);
	free(R.lines);
	free(R.path);
	R.lines = NULL;
	R.nlines = R.cap = 0;
	R.path = NULL;
}

/* Start a pass from "COMMIT RATE FLAGS PATH". */
static int start(const char *args)
{
	unsigned long long commit, rate;
	int flags, at = 0;
	struct r4_info info;
	pthread_attr_t attr;
	pthread_t t;
	int rc;

	if (R.state == RUNNING)
		return -EBUSY;
	if (sscanf(args, "%llu %llu %d %n", &commit, &rate, &flags, &at) != 3 || !at ||
	    args[at] != '/')
		return -EINVAL;
	if (B.ro)
		return -EROFS;
	clear();
	memset(&R.st, 0, sizeof(R.st));
	if (!(R.path = strdup(args + at)))
		return -ENOMEM;
	R.o = (struct r4_repack_opts){.commit_bytes = commit, .compact = flags & 2,
				      .stop = pause_here, .file = file_met, .commit = commit_group};
	R.rate = rate;
	R.verbose = flags & 1;
	R.stop = R.ro = false;
	R.why = NULL;
	R.have_before = R.have_after = false;
	R.first_seq = 0;
	r4_info(B.db, &info);
	R.bs = info.blocksize;
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	rc = pthread_create(&t, &attr, pass, NULL) ? -EAGAIN : 0;
	pthread_attr_destroy(&attr);
	if (!rc)
		R.state = RUNNING;
	return rc;
}

static void print_frag(FILE *f, const char *when, const struct r4_frag *fr)
{
	fprintf(f, "%s %.6f %.6f %.2f %.2f %.2f\n", when, fr->data_frag, fr->tree_frag,
		fr->leaf_fill, fr->twig_fill, fr->seeks_per_mib);
}

/* The answer: the state, the counts, the layouts, lines from seq on. */
static void answer(FILE *f, uint64_t seq)
{
	const struct r4_repack_stats *s = &R.st;
	static const char *names[] = {"idle", "running", "done", "failed", "stopped"};

	fprintf(f, "state %s", names[R.state]);
	if (R.state == FAILED)
		fprintf(f, " %d", -R.err);
	if (R.state == STOPPED)
		fprintf(f, " %s", R.why ? R.why : "interrupted");
	fprintf(f, "\nstats %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64
		   " %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 "\n",
		s->files, s->in_place, s->moved, s->no_room, s->busy, s->blocks_moved, s->runs_before,
		s->runs_after, s->commits, s->nodes_moved, s->nodes_no_room);
	if (R.have_before)
		print_frag(f, "before", &R.before);
	if (R.have_after)
		print_frag(f, "after", &R.after);
	fprintf(f, "next %" PRIu64 "\n", R.first_seq + R.nlines);
	for (uint64_t i = seq > R.first_seq ? seq - R.first_seq : 0; i < R.nlines; i++)
		fprintf(f, "file %" PRIu64 " %s\n", R.first_seq + i, R.lines[i]);
}

int rp_control(const struct caller *c, const char *args, char **out, size_t *nout)
{
	FILE *f = open_memstream(out, nout);
	int rc = 0;

	if (!f)
		return -ENOMEM;
	if (c->who.uid && c->who.uid != getuid())
		rc = -EPERM;
	else if (!strncmp(args, "start ", 6))
		rc = start(args + 6);
	else if (!strcmp(args, "stop"))
		R.stop = R.state == RUNNING;
	else if (strncmp(args, "status", 6))
		rc = -EINVAL;
	if (rc)
		fprintf(f, "error %d\n", -rc);
	else
		answer(f, !strncmp(args, "status ", 7) ? strtoull(args + 7, NULL, 10) : 0);
	fclose(f);
	return 0;
}

/* The mount turned read-only (under the mutex): a running pass stops
 * before its next object and commits what it moved, before this returns
 * (its state stays "stopped read-only" for status). */
void rp_read_only(void)
{
	if (R.state != RUNNING)
		return;
	R.ro = true;
	while (R.state == RUNNING) {
		br_may_block();
		pthread_cond_wait(&R.ended, &B.mu);
	}
}

/* At unmount (under the mutex, B.stop set): a running pass stops before
 * its next object, commits, and ends. */
void rp_end(void)
{
	while (R.state == RUNNING) {
		br_may_block();
		pthread_cond_wait(&R.ended, &B.mu);
	}
	clear();
}
