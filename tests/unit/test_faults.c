/*
 * test_faults.c - the fault matrix (issue 21, item 9): a mount-style
 * workload with a write error or a full host disk at every write, and a
 * failed sync at every sync, of the engine.
 *
 * The workload is what a FUSE mount does (fuse-bridge/r4fuse.c): two
 * threads, one mutex around the engine, calls through handles grouped
 * into one transaction; a group committed by fsync and every few calls (the
 * timer), dropped when a commit fails or a call fails half-way (r4_abort);
 * fsync(2) = commit, r4_sync, then r4_file_error; close(2) = r4_file_error.
 * Each thread has its files: it makes them, opens two handles on some,
 * appends, overwrites and punches holes through them, renames them,
 * fsyncs and closes.
 * The threads take turns in a seeded order, so every run is the same
 * until the fault.
 *
 * A model keeps, per file, its name and bytes as committed and as the
 * group has them, and per handle whether a change it must hear of was
 * lost.  After each case the image is opened again and must hold the
 * committed state, or, when the last commit failed, that commit's state
 * (a failed commit may have reached its commit point: "unknown", as an
 * fsync error means); every fsync that returned 0 covers what was written
 * before it; every fsync and close after a lost change returned an error;
 * r4_check and fsck.reiser4 --check are clean.  Two images: a roomy one,
 * and one nearly full, where calls are refused for want of space (which
 * must leave the group as it was).  It prints the cases and the
 * violations (0).
 */
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "io.h"
#include "t.h"

#define BS 4096u
#define THREADS 2
#define FILES 3		/* per thread */
#define MAXSZ 200000	/* bytes a file can reach */

static char dir[64];

/* ---- the model ---- */

struct mstate {			/* a file as committed, or as the group has it */
	bool exists;
	char path[40];
	size_t size;
	uint8_t *data;		/* MAXSZ bytes */
};

struct mfile {
	struct mstate comm, pend, fail;	/* fail: the group of the last failed commit */
	bool changed;		/* changed through a handle in the group */
};

struct mhandle {
	r4_file *f;
	int file;		/* index in files[] */
	bool must_fail;		/* a change to its file was lost since it last heard */
};

struct run {
	r4_db *db;
	struct r4_io *fw;	/* the fault wrapper */
	pthread_mutex_t mu;
	pthread_cond_t cv;
	unsigned turn;		/* which thread may go */
	bool done[THREADS];
	uint64_t rng;
	struct mfile files[THREADS * FILES];
	struct mhandle h[THREADS * FILES * 2];
	bool failed_commit;	/* the last commit failed: its state may be on disk */
	unsigned since_commit;	/* calls in the group: the timer commits every 5 */
	unsigned refused, dropped, fsync_err, fsync_ok, calls;
	unsigned violations;
	const char *what;	/* the case, for messages */
};

static uint64_t next(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);

	z = (z ^ z >> 30) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ z >> 27) * 0x94d049bb133111ebull;
	return z ^ z >> 31;
}

__attribute__((format(printf, 2, 3)))
static void violation(struct run *r, const char *fmt, ...)
{
	va_list ap;

	if (r->violations++ < 3) {
		fprintf(stderr, "%s: ", r->what);
		va_start(ap, fmt);
		vfprintf(stderr, fmt, ap);
		va_end(ap);
		fputc('\n', stderr);
	}
}

static void mstate_copy(struct mstate *to, const struct mstate *from)
{
	to->exists = from->exists;
	memcpy(to->path, from->path, sizeof(to->path));
	to->size = from->size;
	memcpy(to->data, from->data, from->size);	/* (no write leaves a hole: past size is never read) */
}

/* ---- the group, as r4fuse keeps it (under the mutex) ---- */

/* The group is dropped: its changes are lost, and every open handle on a
 * file changed through a handle in it must hear of that. */
static void drop(struct run *r)
{
	r4_abort(r->db);
	r->dropped++;
	for (size_t i = 0; i < THREADS * FILES; i++) {
		struct mfile *m = &r->files[i];

		if (m->changed)
			for (size_t k = 0; k < THREADS * FILES * 2; k++)
				if (r->h[k].f && r->h[k].file == (int)i)
					r->h[k].must_fail = true;
		m->changed = false;
		mstate_copy(&m->pend, &m->comm);
	}
}

static int commit(struct run *r)
{
	int rc;

	r->since_commit = 0;
	if (!r4_in_txn(r->db))
		return 0;
	if ((rc = r4_commit(r->db))) {
		/* it may have reached its commit point: that state is possible too */
		r->failed_commit = true;
		for (size_t i = 0; i < THREADS * FILES; i++)
			mstate_copy(&r->files[i].fail, &r->files[i].pend);
		drop(r);
		return rc;
	}
	r->failed_commit = false;
	for (size_t i = 0; i < THREADS * FILES; i++) {
		mstate_copy(&r->files[i].comm, &r->files[i].pend);
		r->files[i].changed = false;
	}
	return 0;
}

/* Before a call: the group open.  After it: a refusal (nothing changed)
 * keeps the group, a failure half-way drops it, the timer may commit. */
static int call_begin(struct run *r)
{
	r->calls++;
	return r4_in_txn(r->db) ? 0 : r4_begin(r->db);
}

static void call_end(struct run *r, int rc)
{
	if (rc == -ENOSPC && !r4_txn_error(r->db))
		r->refused++;
	if (rc && r4_in_txn(r->db) && r4_txn_error(r->db))
		drop(r);
	else if (++r->since_commit >= 5)
		commit(r);
}

/* ---- the calls ---- */

static void gen(uint8_t *buf, uint64_t seed, size_t n)
{
	for (size_t k = 0; k < n; k++)
		buf[k] = (uint8_t)(next(&seed) >> 32);
}

static void do_create(struct run *r, int i)
{
	struct mfile *m = &r->files[i];
	int rc;

	if (m->pend.exists || (rc = call_begin(r)))
		return;
	rc = r4_create(r->db, m->pend.path, 0644, 0, 0);
	if (!rc) {
		m->pend.exists = true;
		m->pend.size = 0;
	}
	call_end(r, rc);
}

static void do_open(struct run *r, int i)
{
	for (int k = 0; k < THREADS * FILES * 2; k++)
		if (!r->h[k].f && r->files[i].pend.exists) {
			if (!r4_file_open(r->db, r->files[i].pend.path, &r->h[k].f)) {
				r->h[k].file = i;
				r->h[k].must_fail = false;
			}
			return;
		}
}

static void do_write(struct run *r, struct mhandle *h, bool append, uint64_t seed)
{
	static uint8_t buf[65536];
	struct mfile *m = &r->files[h->file];
	size_t len = 1 + next(&seed) % (append ? 40000 : 9000);
	uint64_t off = append || !m->pend.size ? m->pend.size : next(&seed) % m->pend.size;
	int rc;

	if (off + len > MAXSZ || (rc = call_begin(r)))
		return;
	gen(buf, seed, len);
	if (!(rc = r4_file_write(h->f, off, buf, len))) {
		memcpy(m->pend.data + off, buf, len);
		if (off + len > m->pend.size)
			m->pend.size = off + len;
		m->changed = true;
	}
	call_end(r, rc);
}

/* fallocate(2)'s PUNCH_HOLE through h: the range reads as zeros. */
static void do_punch(struct run *r, struct mhandle *h, uint64_t seed)
{
	struct mfile *m = &r->files[h->file];
	uint64_t off = m->pend.size ? next(&seed) % m->pend.size : 0, len = 1 + next(&seed) % 20000;
	int rc;

	if ((rc = call_begin(r)))
		return;
	if (!(rc = r4_file_fallocate(h->f, R4_FALLOC_PUNCH_HOLE | R4_FALLOC_KEEP_SIZE, off, len))) {
		if (off < m->pend.size)
			memset(m->pend.data + off, 0,
			       (off + len < m->pend.size ? off + len : m->pend.size) - off);
		m->changed = true;
	}
	call_end(r, rc);
}

static void do_rename(struct run *r, int i, unsigned n)
{
	struct mfile *m = &r->files[i];
	char to[40];
	int rc;

	if (!m->pend.exists || (rc = call_begin(r)))
		return;
	snprintf(to, sizeof(to), "/t%d/r%u", i / FILES, n);
	if (!(rc = r4_rename(r->db, m->pend.path, to, 0)))
		memcpy(m->pend.path, to, sizeof(to));
	call_end(r, rc);
}

/* fsync(2): what r4fuse's fb_fsync does. */
static void do_fsync(struct run *r, struct mhandle *h)
{
	int rc = commit(r), lost;

	if (!rc)
		rc = r4_sync(r->db);
	lost = r4_file_error(h->f, true);
	if (!rc)
		rc = lost;
	if (h->must_fail && !rc)
		violation(r, "an fsync after a lost change of %s returned 0",
			  r->files[h->file].pend.path);
	if (!h->must_fail && lost)
		violation(r, "an fsync of %s reports a loss that did not happen",
			  r->files[h->file].pend.path);
	h->must_fail = false;
	if (rc)
		r->fsync_err++;
	else
		r->fsync_ok++;
}

/* close(2): what r4fuse's fb_flush and fb_release do. */
static void do_close(struct run *r, struct mhandle *h)
{
	int lost = r4_file_error(h->f, true);

	if (h->must_fail && !lost)
		violation(r, "a close after a lost change of %s returned 0",
			  r->files[h->file].pend.path);
	if (r4_file_close(h->f) && r4_in_txn(r->db) && r4_txn_error(r->db))
		drop(r);
	h->f = NULL;
}

/* One call of thread t, chosen by its step. */
static void step(struct run *r, unsigned t, unsigned k, uint64_t seed)
{
	int i = (int)(t * FILES + next(&seed) % FILES);
	struct mhandle *h = NULL;

	for (int j = 0; j < THREADS * FILES * 2; j++)
		if (r->h[j].f && r->h[j].file / FILES == (int)t && (!h || next(&seed) % 2))
			h = &r->h[j];
	switch (k < 3 ? 0 : next(&seed) % 10) {
	case 0:
		do_create(r, i);
		do_open(r, i);
		break;
	case 1:
		do_open(r, i);
		break;
	case 2: case 3: case 4:
		if (h)
			do_write(r, h, true, seed);
		break;
	case 5:
		if (h && next(&seed) % 3)
			do_write(r, h, false, seed);
		else if (h)
			do_punch(r, h, seed);
		break;
	case 6:
		do_rename(r, i, k);
		break;
	case 7: case 8:
		if (h)
			do_fsync(r, h);
		break;
	default:
		if (h)
			do_close(r, h);
		break;
	}
}

struct thread_arg {
	struct run *r;
	unsigned t;
};

#define STEPS 40	/* per thread */

static void *thread_main(void *arg)
{
	struct thread_arg *a = arg;
	struct run *r = a->r;

	pthread_mutex_lock(&r->mu);
	for (unsigned k = 0; k < STEPS; k++) {
		while (r->turn != a->t)
			pthread_cond_wait(&r->cv, &r->mu);
		step(r, a->t, k, next(&r->rng));
		if (k == STEPS - 1)
			r->done[a->t] = true;
		/* the next turn, in a seeded order, to a thread that is not done */
		unsigned o = (unsigned)(next(&r->rng) % THREADS);

		for (unsigned j = 0; j < THREADS; j++)
			if (!r->done[(o + j) % THREADS]) {
				r->turn = (o + j) % THREADS;
				break;
			}
		pthread_cond_broadcast(&r->cv);
	}
	pthread_mutex_unlock(&r->mu);
	return NULL;
}

/* ---- a case ---- */

static void quiet(void *ctx, int level, const char *msg)
{
	(void)ctx;
	(void)level;
	(void)msg;
}

/* Does the image hold the state `which` (0 committed, 1 the failed commit's)? */
static bool holds(struct run *r, r4_db *db, int which, bool say)
{
	static uint8_t buf[MAXSZ];

	for (size_t i = 0; i < THREADS * FILES; i++) {
		struct mfile *m = &r->files[i];
		const struct mstate *s = which ? &m->fail : &m->comm;
		struct r4_stat st;
		size_t got = 0;

		if (!s->exists)
			continue;
		if (r4_stat(db, s->path, &st) || st.size != s->size ||
		    r4_read(db, s->path, 0, buf, s->size, &got) || got != s->size ||
		    memcmp(buf, s->data, s->size)) {
			if (say)
				violation(r, "%s is not as committed", s->path);
			return false;
		}
	}
	return true;
}

static void report(void *ctx, const struct r4_problem *p)
{
	struct run *r = ctx;

	violation(r, "r4_check: %s: %s%s%s", r4_check_class_name(p->cls), p->msg,
		  p->path ? " " : "", p->path ? p->path : "");
}

/* Check the image after the run: opened again, as the model says. */
static void verify(struct run *r, struct r4_io *img, bool fsck)
{
	struct r4_open_opts oo = {.rw = true, .log = quiet};
	struct r4_check_opts co = {.report = report, .ctx = r};
	struct r4_check_result res;
	struct r4_io *w;
	r4_db *db;

	/* (through a wrapper: r4_close closes it, not the image) */
	if (r4_io_fault_wrap(img, &w) || r4_open_io(w, &oo, &db)) {
		violation(r, "%s", "the image does not open");
		return;
	}
	if (!r->failed_commit)
		holds(r, db, 0, true);
	else if (!holds(r, db, 0, false))
		holds(r, db, 1, true);
	r4_close(db);
	/* again, so that r4_check sees the image, not what the open replayed */
	if (r4_io_fault_wrap(img, &w) || r4_open_io(w, &oo, &db)) {
		violation(r, "%s", "the image does not open twice");
		return;
	}
	if (r4_check(db, &co, &res) || res.problems)
		violation(r, "%s", "r4_check finds problems");
	r4_close(db);
	if (fsck) {
		char path[128];
		int f;

		snprintf(path, sizeof(path), "%s/case.img", dir);
		if (!r4_io_mem_save(img, path) && (f = t_fsck(path)) >= 0 && f != 1)
			violation(r, "fsck.reiser4 --check is not clean (%s.fsck)", path);
	}
}

/* Run the workload on a copy of base with the fault armed; 0 or the
 * writes and syncs a clean run makes (counts). */
static void run_case(struct r4_io *base, struct r4_io *img, enum r4_io_fault_op op, uint64_t nth,
		     int err, const char *what, uint64_t *writes, uint64_t *syncs,
		     unsigned *violations, unsigned *refused)
{
	struct r4_open_opts oo = {.rw = true, .log = quiet};
	struct thread_arg a[THREADS];
	pthread_t th[THREADS];
	struct run *r = calloc(1, sizeof(*r));
	uint64_t size;
	const uint8_t *d = r4_io_mem_data(base, &size);

	CHECK_RC(r4_io_truncate(img, size));
	CHECK_RC(r4_io_write(img, 0, d, size));
	pthread_mutex_init(&r->mu, NULL);
	pthread_cond_init(&r->cv, NULL);
	r->rng = 0x5eed;
	r->what = what;
	for (size_t i = 0; i < THREADS * FILES; i++) {
		struct mfile *m = &r->files[i];

		m->comm.data = calloc(1, MAXSZ);
		m->pend.data = calloc(1, MAXSZ);
		m->fail.data = calloc(1, MAXSZ);
		snprintf(m->comm.path, sizeof(m->comm.path), "/t%zu/f%zu", i / FILES, i % FILES);
		mstate_copy(&m->pend, &m->comm);
	}
	if (r4_io_fault_wrap(img, &r->fw) || r4_open_io(r->fw, &oo, &r->db)) {
		CHECK(!"the base image opens");
		goto out;
	}
	if (nth)
		r4_io_fault_fail(r->fw, op, nth, err, false);
	for (unsigned t = 0; t < THREADS; t++) {
		a[t] = (struct thread_arg){r, t};
		pthread_create(&th[t], NULL, thread_main, &a[t]);
	}
	for (unsigned t = 0; t < THREADS; t++)
		pthread_join(th[t], NULL);
	/* the unmount: handles closed, the group committed, the image closed */
	for (int k = 0; k < THREADS * FILES * 2; k++)
		if (r->h[k].f)
			do_close(r, &r->h[k]);
	if (!commit(r))
		r4_sync(r->db);
	if (!nth) {
		struct r4_io_fault_stats st;

		r4_io_fault_stats(r->fw, &st);
		*writes = st.fs_writes;
		*syncs = st.fs_syncs;
		printf("the workload: %u calls, %u refused for want of space, %u fsyncs; %llu "
		       "writes and %llu syncs\n", r->calls, r->refused, r->fsync_ok + r->fsync_err,
		       (unsigned long long)st.fs_writes, (unsigned long long)st.fs_syncs);
		CHECK_EQ(r->dropped, 0);
		CHECK_EQ(r->fsync_err, 0);
	}
	r4_close(r->db);
	verify(r, img, true);
	*refused += r->refused;
out:
	*violations += r->violations;
	CHECK_EQ(r->violations, 0);
	for (size_t i = 0; i < THREADS * FILES; i++) {
		free(r->files[i].comm.data);
		free(r->files[i].pend.data);
		free(r->files[i].fail.data);
	}
	pthread_mutex_destroy(&r->mu);
	pthread_cond_destroy(&r->cv);
	free(r);
}

/* A base image: fresh, with the threads' directories; `fill` leaves about
 * that many blocks for new data. */
static struct r4_io *base_image(uint64_t fill)
{
	struct r4_open_opts oo = {.rw = true, .log = quiet};
	char path[128];
	struct r4_mkfs_opts mo;
	struct r4_io *base = NULL;
	r4_db *db;

	snprintf(path, sizeof(path), "%s/base.img", dir);
	r4_mkfs_defaults(&mo);
	CHECK_RC(r4_mkfs(path, 8u << 20, &mo));
	CHECK_RC(r4_open(path, &oo, &db));
	CHECK_RC(r4_mkdir(db, "/t0", 0755, 0, 0));
	CHECK_RC(r4_mkdir(db, "/t1", 0755, 0, 0));
	if (fill) {
		static uint8_t buf[BS];
		struct r4_statfs sf;
		uint64_t off = 0;

		CHECK_RC(r4_create(db, "/fill", 0644, 0, 0));
		while (!r4_statfs(db, &sf) && sf.bavail > fill + 16) {
			uint64_t n = sf.bavail - fill - 16 > 256 ? 256 : sf.bavail - fill - 16;

			for (uint64_t k = 0; k < n; k++, off += BS)
				if (r4_write(db, "/fill", off, buf, BS))
					break;
		}
	}
	CHECK_RC(r4_sync(db));
	r4_close(db);
	CHECK_RC(r4_io_mem_load(path, &base));
	return base;
}

static void matrix(const char *name, uint64_t fill)
{
	struct r4_io *base = base_image(fill), *img = NULL;
	uint64_t writes = 0, syncs = 0, x, y;
	unsigned violations = 0, refused = 0, cases = 0;
	char what[96];

	if (!base)
		return;
	CHECK_RC(r4_io_mem_new(1, &img));
	snprintf(what, sizeof(what), "%s, no fault", name);
	run_case(base, img, R4_IO_FAULT_WRITE, 0, 0, what, &writes, &syncs, &violations, &refused);
	for (uint64_t n = 1; n <= writes; n++)
		for (int e = 0; e < 2; e++) {
			snprintf(what, sizeof(what), "%s, write %llu fails (%s)", name,
				 (unsigned long long)n, e ? "ENOSPC" : "EIO");
			run_case(base, img, R4_IO_FAULT_WRITE, n, e ? -ENOSPC : -EIO, what, &x, &y,
				 &violations, &refused);
			cases++;
		}
	for (uint64_t n = 1; n <= syncs; n++) {
		snprintf(what, sizeof(what), "%s, sync %llu fails (EIO)", name, (unsigned long long)n);
		run_case(base, img, R4_IO_FAULT_SYNC, n, -EIO, what, &x, &y, &violations, &refused);
		cases++;
	}
	printf("%s: %u cases (EIO and ENOSPC at each of %llu writes, EIO at each of %llu syncs), "
	       "%u calls refused for want of space, %u violations\n", name, cases,
	       (unsigned long long)writes, (unsigned long long)syncs, refused, violations);
	r4_io_close(img);
	r4_io_close(base);
}

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	/* (an image is saved and checked per case: tests/run.sh gives tmpfs) */
	snprintf(dir, sizeof(dir), "%s/r4-faults.XXXXXX", t_tmp());
	if (!mkdtemp(dir))
		return 2;
	matrix("roomy", 0);
	matrix("nearly full", 60);
	if (!t_fail)
		t_rmdir(dir);
	else
		fprintf(stderr, "images kept in %s\n", dir);
	return T_DONE();
}
