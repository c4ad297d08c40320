/*
 * io_fault.c - a wrapper backend for fault and crash tests (STYLE.md
 * section 8, tests' sweeps in section 11).
 *
 * Failure injection: per kind of call (read, write, sync) a countdown; when
 * it reaches zero the call fails with the chosen errno without touching
 * inner, once or from then on.  Counters of every call seen let a sweep
 * learn how many writes a run makes and then fail each in turn.
 *
 * Crash mode, after SQLite's test6.c idea: while recording, writes are kept
 * here (reads see them), and only a sync hands them to inner, in order,
 * followed by inner's own sync; so inner always holds exactly what a disk
 * would guarantee after a power cut that dropped everything unsynced.  At
 * the crash point a seeded PRNG (splitmix64) picks which kept writes still
 * reach inner, in their order; the last may be torn into 512-byte sectors.
 * The wrapper is then dead (-EIO), and the test reopens inner.
 *
 * Inner is borrowed, never closed here (unless r4_io_fault_own).  Not thread-safe, like every
 * backend.  Keeps whole copies of pending writes: meant for test-sized
 * images, not for production use.
 */
#include "io.h"

enum {
	SECTOR = 512,
	NKINDS = 3,
};

struct pending {
	uint64_t off;
	size_t len;
	uint8_t *data;
};

struct arm {
	uint64_t countdown;	/* 0 = disarmed */
	int err;
	bool persistent, firing;
};

struct fault_io {
	struct r4_io io;	/* first: the vtable head */
	struct r4_io *inner;
	struct arm arm[NKINDS];
	bool recording, dead;
	struct pending *pend;
	size_t npend, cap;
	uint64_t crash_k, crash_seed;	/* crash_k: writes to go before the crash, 0 = none */
	bool crash_tear;
	bool owns;		/* closes inner (r4_io_fault_own) */
	struct r4_io_fault_stats st;
};

static const struct r4_io_ops r4_io_fault_ops;

static struct fault_io *fault_of(struct r4_io *io)
{
	return (struct fault_io *)io;
}

static uint64_t splitmix64(uint64_t *s)
{
	uint64_t z = (*s += UINT64_C(0x9E3779B97F4A7C15));

	z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
	return z ^ (z >> 31);
}

/* 0, or the injected error for this call of kind k. */
static int injected(struct fault_io *f, enum r4_io_fault_op k)
{
	struct arm *a = &f->arm[k];

	if (a->firing || (a->countdown && --a->countdown == 0)) {
		a->firing = a->persistent;
		f->st.fs_failed++;
		return a->err ? a->err : -EIO;
	}
	return 0;
}

static void drop_pending(struct fault_io *f)
{
	for (size_t i = 0; i < f->npend; i++)
		r4_free(f->pend[i].data);
	f->npend = 0;
	f->st.fs_pending = 0;
}

/* Hand the kept writes to inner in order; on failure the rest stay kept. */
static int apply_pending(struct fault_io *f)
{
	size_t i;
	int rc = 0;

	for (i = 0; i < f->npend; i++)
		if ((rc = r4_io_write(f->inner, f->pend[i].off, f->pend[i].data, f->pend[i].len)))
			break;
	for (size_t j = 0; j < i; j++)
		r4_free(f->pend[j].data);
	if (i && i < f->npend)
		memmove(f->pend, f->pend + i, (f->npend - i) * sizeof(*f->pend));
	f->npend -= i;
	f->st.fs_pending = f->npend;
	return rc;
}

static void crash(struct fault_io *f, uint64_t seed, bool tear)
{
	uint64_t s = seed;

	for (size_t i = 0; i < f->npend; i++) {
		struct pending *p = &f->pend[i];

		if (tear && i + 1 == f->npend) {
			uint64_t at = p->off, end = p->off + p->len;

			while (at < end) {
				uint64_t next = (at / SECTOR + 1) * SECTOR;

				if (next > end)
					next = end;
				if (splitmix64(&s) & 1)
					(void)r4_io_write(f->inner, at, p->data + (at - p->off),
							  (size_t)(next - at));
				else
					f->st.fs_torn_sectors++;
				at = next;
			}
			f->st.fs_applied++;
		} else if (splitmix64(&s) & 1) {
			(void)r4_io_write(f->inner, p->off, p->data, p->len);
			f->st.fs_applied++;
		} else {
			f->st.fs_dropped++;
		}
	}
	drop_pending(f);
	f->dead = true;
	f->st.fs_crashed = true;
	f->crash_k = 0;
}

static int inner_size(struct fault_io *f, uint64_t *bytes)
{
	uint64_t n;
	int rc;

	if ((rc = r4_io_size(f->inner, &n)))
		return rc;
	for (size_t i = 0; i < f->npend; i++)
		if (f->pend[i].off + f->pend[i].len > n)
			n = f->pend[i].off + f->pend[i].len;
	*bytes = n;
	return 0;
}

static int fl_read(struct r4_io *io, uint64_t off, void *buf, size_t len)
{
	struct fault_io *f = fault_of(io);
	uint64_t isz, vsz;
	uint8_t *b = buf;
	int rc;

	f->st.fs_reads++;
	if (f->dead)
		return -EIO;
	if ((rc = injected(f, R4_IO_FAULT_READ)))
		return rc;
	if (!f->npend)
		return r4_io_read(f->inner, off, buf, len);
	if ((rc = r4_io_size(f->inner, &isz)) || (rc = inner_size(f, &vsz)))
		return rc;
	if (off > vsz || len > vsz - off)
		return -EIO;
	if (off < isz) {
		size_t n = (size_t)R4_MIN((uint64_t)len, isz - off);

		if ((rc = r4_io_read(f->inner, off, b, n)))
			return rc;
		memset(b + n, 0, len - n);
	} else {
		memset(b, 0, len);
	}
	for (size_t i = 0; i < f->npend; i++) {	/* later writes win */
		const struct pending *p = &f->pend[i];
		uint64_t lo = R4_MAX(off, p->off), hi = R4_MIN(off + len, p->off + p->len);

		if (lo < hi)
			memcpy(b + (lo - off), p->data + (lo - p->off), (size_t)(hi - lo));
	}
	return 0;
}

static int fl_write(struct r4_io *io, uint64_t off, const void *buf, size_t len)
{
	struct fault_io *f = fault_of(io);
	struct pending *p;
	int rc;

	f->st.fs_writes++;
	if (f->dead)
		return -EIO;
	if ((rc = injected(f, R4_IO_FAULT_WRITE)))
		return rc;
	if (!f->recording)
		return r4_io_write(f->inner, off, buf, len);
	if (len > UINT64_MAX - off)
		return -EINVAL;
	if ((rc = r4_grow(&f->pend, &f->cap, f->npend + 1, sizeof(*f->pend), 64)))
		return rc;
	p = &f->pend[f->npend];
	if (!(p->data = r4_malloc(len)))
		return -ENOMEM;
	memcpy(p->data, buf, len);
	p->off = off;
	p->len = len;
	f->npend++;
	f->st.fs_pending = f->npend;
	if (f->crash_k && --f->crash_k == 0)
		crash(f, f->crash_seed, f->crash_tear);	/* this write "completed", then the cut */
	return 0;
}

static int fl_sync(struct r4_io *io)
{
	struct fault_io *f = fault_of(io);
	int rc;

	f->st.fs_syncs++;
	if (f->dead)
		return -EIO;
	if ((rc = injected(f, R4_IO_FAULT_SYNC)))
		return rc;
	if ((rc = apply_pending(f)))
		return rc;
	return r4_io_sync(f->inner);
}

static int fl_size(struct r4_io *io, uint64_t *bytes)
{
	struct fault_io *f = fault_of(io);

	if (f->dead)
		return -EIO;
	return inner_size(f, bytes);
}

/* A barrier: kept writes reach inner first, then inner is cut or grown. */
static int fl_truncate(struct r4_io *io, uint64_t bytes)
{
	struct fault_io *f = fault_of(io);
	int rc;

	if (f->dead)
		return -EIO;
	if ((rc = apply_pending(f)))
		return rc;
	return r4_io_truncate(f->inner, bytes);
}

/* Kept, unsynced writes are lost, as on a crash that applies none. */
static void fl_close(struct r4_io *io)
{
	struct fault_io *f = fault_of(io);

	drop_pending(f);
	r4_free(f->pend);
	if (f->owns)
		r4_io_close(f->inner);
	r4_free(f);
}

void r4_io_fault_own(struct r4_io *io)
{
	fault_of(io)->owns = true;
}

static const struct r4_io_ops r4_io_fault_ops = {
	.read = fl_read,
	.write = fl_write,
	.sync = fl_sync,
	.size = fl_size,
	.truncate = fl_truncate,
	.close = fl_close,
};

int r4_io_fault_wrap(struct r4_io *inner, struct r4_io **out)
{
	struct fault_io *f;

	if (!inner)
		return -EINVAL;
	if (!(f = r4_calloc(1, sizeof(*f))))
		return -ENOMEM;
	f->io.ops = &r4_io_fault_ops;
	f->inner = inner;
	*out = &f->io;
	return 0;
}

void r4_io_fault_fail(struct r4_io *io, enum r4_io_fault_op op, uint64_t nth, int err,
		      bool persistent)
{
	struct fault_io *f = fault_of(io);

	if (io->ops != &r4_io_fault_ops || (unsigned)op >= NKINDS)
		return;
	f->arm[op].countdown = nth;
	f->arm[op].err = err;
	f->arm[op].persistent = persistent;
	f->arm[op].firing = false;
}

void r4_io_fault_record(struct r4_io *io, bool on)
{
	struct fault_io *f = fault_of(io);

	if (io->ops != &r4_io_fault_ops)
		return;
	if (!on && !f->dead)
		(void)apply_pending(f);
	f->recording = on;
}

void r4_io_fault_crash_at(struct r4_io *io, uint64_t k, uint64_t seed, bool tear)
{
	struct fault_io *f = fault_of(io);

	if (io->ops != &r4_io_fault_ops)
		return;
	f->crash_k = k;
	f->crash_seed = seed;
	f->crash_tear = tear;
	if (k)
		f->recording = true;
}

void r4_io_fault_crash_now(struct r4_io *io, uint64_t seed, bool tear)
{
	if (io->ops == &r4_io_fault_ops && !fault_of(io)->dead)
		crash(fault_of(io), seed, tear);
}

void r4_io_fault_stats(struct r4_io *io, struct r4_io_fault_stats *out)
{
	if (io->ops == &r4_io_fault_ops)
		*out = fault_of(io)->st;
	else
		memset(out, 0, sizeof(*out));
}
