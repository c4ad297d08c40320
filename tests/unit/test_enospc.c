/*
 * test_enospc.c - a full volume (issue 3, item 8; issue 21, item 3).  Space
 * is reserved when a change is accepted (docs/engine.md, "Space"): a change
 * whose commit could lack blocks is refused at the call with exactly
 * -ENOSPC and changes nothing, so the transaction stays usable; a commit
 * never fails for want of space; removals may use a reserve the others
 * leave, so a full volume can always be emptied.  Once aborted, a
 * transaction leaves the image byte-for-byte as it was and the free count
 * unchanged; both checkers (r4_check, fsck.reiser4 --check) call the full
 * image consistent; deleting frees exactly the blocks the files' extents
 * and the emptied nodes used, so the volume returns to its fresh free
 * count and as much data fits again.  The parts (R4_ENOSPC_PART=name runs
 * one):
 *
 *   one_txn          one transaction promises every block it can get: the
 *                    refused write and create change nothing, shrinking
 *                    gives blocks back, rewriting pending data takes none,
 *                    the commit succeeds; the reserve is left
 *   refusals         each kind of write with not one block left: refused,
 *                    nothing changed; with room made in the same
 *                    transaction it is done and commits; a punch (a
 *                    removal) is done from the reserve, until punches into
 *                    committed blocks have used it: then refused, nothing
 *                    changed
 *   fill_txns        the volume filled over many committed transactions
 *                    (tails, 1 MiB files, halving appends and tails), read
 *                    back after reopening; on the full volume transactions
 *                    that dirty every leaf commit, an overwrite of committed
 *                    data and an autocommitted create are refused, 200
 *                    unlinks in one transaction commit; deleting frees
 *                    exactly, back to the fresh image; the refill fits as
 *                    much
 *   full_delete      the file that filled the volume deleted right after
 *   free_then_write  unlink and new data in one transaction on a full
 *                    volume: the write is refused, the unlink commits
 *   random           random changes near full against an in-memory model
 *                    (R4_SEED, R4_ENOSPC_STEPS), on volumes of 4 and 16 MiB
 *                    (writes, truncates, punches, collapses and inserts,
 *                    unlinks, renames ...):
 *                    a refused call leaves its transaction usable (half of
 *                    those commit what went before), r4_check after each
 *                    transaction, everything deleted at the end
 *
 * Each free count, as r4_check counts the blocks in use, must agree with
 * statfs.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "t.h"

#define BS 4096u
#define MIB (1u << 20)

static char dir[64], img[128];
static uint8_t iobuf[MIB], rdbuf[MIB];
static unsigned fsck_runs, fsck_seq;
static bool fsck_missing;

static void *xrealloc(void *p, size_t n)
{
	if (!(p = realloc(p, n ? n : 1))) {
		perror("realloc");
		exit(2);
	}
	return p;
}

/* ---- content, model of committed files ---- */

/* The bytes a write with this seed puts at file offset o: distinct per
 * seed, per block and per byte, so a misplaced block shows. */
static void gen(uint8_t *buf, uint32_t seed, uint64_t off, size_t len)
{
	for (size_t k = 0; k < len; k++) {
		uint64_t o = off + k;

		buf[k] = (uint8_t)(seed * 101u + (o >> 12) * 13u + o * 7u + 1u);
	}
}

struct mfile {
	char path[40];
	uint8_t *data;
	size_t size, cap;	/* cap: bytes data holds, grown by halves (growing
				 * it to each new size made appends quadratic) */
	bool shared;	/* data is the committed model's: copied before a change */
};

struct model {
	struct mfile *f;
	size_t n, cap;
};

static void model_free(struct model *m)
{
	for (size_t i = 0; i < m->n; i++)
		if (!m->f[i].shared)
			free(m->f[i].data);
	free(m->f);
	memset(m, 0, sizeof(*m));
}

/* A transaction's model: the committed one's files, their bytes shared
 * until the transaction changes them (copying every file at every
 * transaction made this test slow). */
static void model_copy(struct model *dst, const struct model *src)
{
	dst->n = dst->cap = src->n;
	dst->f = xrealloc(NULL, src->n * sizeof(*dst->f));
	for (size_t i = 0; i < src->n; i++) {
		dst->f[i] = src->f[i];
		dst->f[i].shared = true;
	}
}

/* The transaction's model src committed: it becomes *m, and owns the bytes
 * it still shared with the old one. */
static void model_take(struct model *m, struct model *src)
{
	for (size_t i = 0; i < src->n; i++) {
		if (!src->f[i].shared)
			continue;
		for (size_t j = 0; j < m->n; j++)
			if (m->f[j].data == src->f[i].data)
				m->f[j].shared = true;	/* (not freed with the old model) */
		src->f[i].shared = false;
	}
	model_free(m);
	*m = *src;
	memset(src, 0, sizeof(*src));
}

/* f's bytes, its own before they change, with room for at least need. */
static void model_own(struct mfile *f, size_t need)
{
	if (f->shared || need > f->cap) {
		/* (a copy grows from the size: from the shared cap, every
		 * transaction's copy would grow by half again) */
		size_t base = f->shared ? f->size : f->cap;
		size_t cap = need > base + base / 2 ? need : base + base / 2;
		uint8_t *d = f->shared ? xrealloc(NULL, cap) : xrealloc(f->data, cap);

		if (f->shared && f->size)
			memcpy(d, f->data, f->size);
		f->data = d;
		f->cap = cap;
		f->shared = false;
	}
}

static long model_find(const struct model *m, const char *path)
{
	for (size_t i = 0; i < m->n; i++)
		if (!strcmp(m->f[i].path, path))
			return (long)i;
	return -1;
}

static size_t model_add(struct model *m, const char *path)
{
	if (m->n == m->cap) {
		m->cap = m->cap ? m->cap * 2 : 64;
		m->f = xrealloc(m->f, m->cap * sizeof(*m->f));
	}
	memset(&m->f[m->n], 0, sizeof(m->f[m->n]));
	snprintf(m->f[m->n].path, sizeof(m->f[m->n].path), "%s", path);
	return m->n++;
}

static void model_del(struct model *m, size_t i)
{
	if (!m->f[i].shared)
		free(m->f[i].data);
	m->f[i] = m->f[--m->n];
}

static void model_resize(struct mfile *f, size_t size)
{
	model_own(f, size);
	if (size > f->size)
		memset(f->data + f->size, 0, size - f->size);	/* a hole reads as zeros */
	f->size = size;
}

/* ---- calls that keep a model in step ---- */

static int op_create(r4_db *db, struct model *m, const char *path)
{
	int rc = r4_create(db, path, 0644, 0, 0);

	if (!rc)
		model_add(m, path);
	return rc;
}

/* Write len <= 1 MiB generated bytes to file i of m at off. */
static int op_write(r4_db *db, struct model *m, size_t i, uint64_t off, size_t len,
		    uint32_t seed)
{
	struct mfile *f = &m->f[i];
	int rc;

	gen(iobuf, seed, off, len);
	if ((rc = r4_write(db, f->path, off, iobuf, len)))
		return rc;
	if (off + len > f->size)
		model_resize(f, off + len);
	model_own(f, f->size);
	memcpy(f->data + off, iobuf, len);
	return 0;
}

/* Punch [off, off + len) of file i of m (fallocate's PUNCH_HOLE). */
static int op_punch(r4_db *db, struct model *m, size_t i, uint64_t off, uint64_t len)
{
	struct mfile *f = &m->f[i];
	r4_file *h;
	int rc;

	if ((rc = r4_file_open(db, f->path, &h)))
		return rc;
	rc = r4_file_fallocate(h, R4_FALLOC_PUNCH_HOLE | R4_FALLOC_KEEP_SIZE, off, len);
	r4_file_close(h);
	if (!rc && off < f->size) {
		model_own(f, f->size);
		memset(f->data + off, 0, (off + len < f->size ? off + len : f->size) - off);
	}
	return rc;
}

/* COLLAPSE_RANGE, or INSERT_RANGE, of n blocks at block b of file i of m
 * (an extent file, the range inside it: fallocate's rules). */
static int op_shift(r4_db *db, struct model *m, size_t i, bool insert, size_t b, size_t n)
{
	struct mfile *f = &m->f[i];
	size_t off = b * BS, len = n * BS;
	r4_file *h;
	int rc;

	if ((rc = r4_file_open(db, f->path, &h)))
		return rc;
	rc = r4_file_fallocate(h, insert ? R4_FALLOC_INSERT_RANGE : R4_FALLOC_COLLAPSE_RANGE, off,
			       len);
	r4_file_close(h);
	if (rc)
		return rc;
	model_own(f, insert ? f->size + len : f->size);
	if (insert) {
		memmove(f->data + off + len, f->data + off, f->size - off);
		memset(f->data + off, 0, len);
		f->size += len;
	} else {
		memmove(f->data + off, f->data + off + len, f->size - off - len);
		f->size -= len;
	}
	return 0;
}

static int op_make(r4_db *db, struct model *m, const char *path, size_t len, uint32_t seed)
{
	int rc = op_create(db, m, path);

	return rc || !len ? rc : op_write(db, m, m->n - 1, 0, len, seed);
}

static int op_unlink(r4_db *db, struct model *m, size_t i)
{
	int rc = r4_unlink(db, m->f[i].path);

	if (!rc)
		model_del(m, i);
	return rc;
}

/* ---- comparing the image with the model ---- */

struct names {
	const char *prefix;
	char (*v)[40];
	size_t n, cap;
};

static int name_fn(void *ctx, const char *name, size_t len, uint64_t ino, uint32_t type)
{
	struct names *nm = ctx;

	(void)ino;
	if (type != S_IFREG)
		return 0;
	if (nm->n == nm->cap) {
		nm->cap = nm->cap ? nm->cap * 2 : 64;
		nm->v = xrealloc(nm->v, nm->cap * sizeof(*nm->v));
	}
	snprintf(nm->v[nm->n++], sizeof(nm->v[0]), "%s/%.*s", nm->prefix, (int)len, name);
	return 0;
}

/* Mismatches between the image's regular files (in / and /d) and m: names,
 * sizes and, with content, every byte.  The first few are printed. */
static unsigned verify(r4_db *db, const struct model *m, bool content, const char *when)
{
	struct names nm = {0};
	unsigned bad = 0;
	int rc;

	nm.prefix = "";
	rc = r4_readdir(db, "/", &(struct r4_dirpos){0}, name_fn, &nm);
	nm.prefix = "/d";
	if (!rc && (rc = r4_readdir(db, "/d", &(struct r4_dirpos){0}, name_fn, &nm)) == -ENOENT)
		rc = 0;
	if (rc || nm.n != m->n) {
		fprintf(stderr, "%s: readdir %d, %zu files, the model has %zu\n", when, rc, nm.n,
			m->n);
		bad++;
	}
	for (size_t i = 0; i < nm.n; i++)
		if (model_find(m, nm.v[i]) < 0 && bad++ < 5)
			fprintf(stderr, "%s: %s is not in the model\n", when, nm.v[i]);
	free(nm.v);
	for (size_t i = 0; i < m->n; i++) {
		const struct mfile *f = &m->f[i];
		struct r4_stat st;

		if ((rc = r4_stat(db, f->path, &st)) || st.size != f->size) {
			if (bad++ < 5)
				fprintf(stderr, "%s: %s: stat %d, size %llu, the model has %zu\n",
					when, f->path, rc, rc ? 0ull : (unsigned long long)st.size,
					f->size);
			continue;
		}
		for (size_t off = 0; content && off < f->size; off += MIB) {
			size_t want = f->size - off < MIB ? f->size - off : MIB, got = 0;

			rc = r4_read(db, f->path, off, rdbuf, want, &got);
			if (rc || got != want || memcmp(rdbuf, f->data + off, want)) {
				if (bad++ < 5)
					fprintf(stderr, "%s: %s: differs at %zu (read %d)\n", when,
						f->path, off, rc);
				break;
			}
		}
	}
	return bad;
}

/* ---- the image: snapshots, free count, both checkers ---- */

struct snap {
	uint8_t *b;
	size_t n;
};

/* The one buffer every snapshot uses (one is taken at a time): a fresh
 * 16 MiB buffer for each transaction's snapshot made page faults half of
 * this test's time. */
static uint8_t *snap_buf;
static size_t snap_cap;

/* Read the whole image into s. */
static void snap_take(struct snap *s)
{
	FILE *f = fopen(img, "rb");
	long len = -1;

	s->n = 0;
	if (f && !fseek(f, 0, SEEK_END) && (len = ftell(f)) > 0 && !fseek(f, 0, SEEK_SET)) {
		if ((size_t)len > snap_cap)
			snap_buf = xrealloc(snap_buf, snap_cap = (size_t)len);
		s->b = snap_buf;
		if (fread(s->b, 1, (size_t)len, f) == (size_t)len)
			s->n = (size_t)len;
	}
	if (f)
		fclose(f);
}

/* The first block where the image file and the snapshot differ (one
 * past the snapshot's last: the file is longer or shorter); SIZE_MAX when
 * they do not. */
static size_t snap_diff(const struct snap *s)
{
	FILE *f = fopen(img, "rb");
	size_t off = 0, got = 0;

	if (!f || !s->n)
		goto out;
	while (off < s->n && (got = fread(rdbuf, 1, sizeof(rdbuf), f)) > 0) {
		if (got > s->n - off || memcmp(rdbuf, s->b + off, got)) {
			for (size_t k = 0; k + BS <= got && k + BS <= s->n - off; k += BS)
				if (memcmp(rdbuf + k, s->b + off + k, BS)) {
					off += k;
					break;
				}
			break;
		}
		off += got;
	}
	got = fread(rdbuf, 1, 1, f);		/* and nothing after it */
out:
	if (f)
		fclose(f);
	return off == s->n && s->n && !got ? SIZE_MAX : off / BS;
}

/* The image file is byte-for-byte the snapshot (else the first differing
 * block is printed). */
static bool snap_same(const struct snap *s, const char *when)
{
	size_t b = snap_diff(s);

	if (b == SIZE_MAX)
		return true;
	fprintf(stderr, "%s: the image changed, first in block %zu\n", when, b);
	return false;
}

/*
 * The same, or the snapshot with the journal's window played in place: a
 * call may play it (the deferred flush, to take back the space its held
 * blocks keep; r4_txn_room), and an abort does not unplay what is
 * committed.  The played snapshot is the snapshot opened and closed as an
 * image of its own.
 */
static bool snap_same_played(const struct snap *s, const char *when)
{
	struct r4_open_opts oo = {.rw = true};
	struct snap played = {0};
	char copy[160];
	r4_db *cdb = NULL;
	bool same = false;
	FILE *f;

	if (snap_diff(s) == SIZE_MAX)
		return true;
	snprintf(copy, sizeof(copy), "%s.played", img);
	if ((f = fopen(copy, "wb"))) {
		same = fwrite(s->b, 1, s->n, f) == s->n;
		same = !fclose(f) && same;
	}
	if (same && !r4_open(copy, &oo, &cdb)) {
		r4_close(cdb);
		played.b = xrealloc(NULL, s->n);
		same = (f = fopen(copy, "rb")) && fread(played.b, 1, s->n, f) == s->n;
		if (f)
			fclose(f);
		played.n = same ? s->n : 0;
	}
	unlink(copy);
	same = played.n ? snap_same(&played, when) : snap_same(s, when);
	free(played.b);
	return same;
}

static uint64_t bfree(r4_db *db)
{
	struct r4_statfs sf;

	CHECK_RC(r4_statfs(db, &sf));
	return sf.bfree;
}

/* What new data can still get (statfs's bavail). */
static uint64_t bavail(r4_db *db)
{
	struct r4_statfs sf;

	CHECK_RC(r4_statfs(db, &sf));
	CHECK(sf.bavail <= sf.bfree);
	return sf.bavail;
}

/* The reserve statfs keeps from new data on a volume of 8 MiB or less
 * (docs/engine.md: 256 blocks at least). */
#define RESERVE 256

static void report(void *ctx, const struct r4_problem *p)
{
	fprintf(stderr, "r4_check %s: %s: %s%s%s\n", (const char *)ctx,
		r4_check_class_name(p->cls), p->msg, p->path ? " " : "", p->path ? p->path : "");
}

/* r4_check finds nothing, and statfs agrees with it: every block is either
 * reached (fixed area, nodes, extents) or free. */
static struct r4_check_result checked(r4_db *db, const char *when)
{
	struct r4_check_opts o = {.report = report, .ctx = (void *)when};
	struct r4_check_result r;
	struct r4_statfs sf;

	CHECK_RC(r4_check(db, &o, &r));
	CHECK_EQ(r.problems, 0);
	CHECK_RC(r4_statfs(db, &sf));
	CHECK_EQ(sf.bfree + r.used_blocks, sf.blocks);
	return r;
}

/* fsck.reiser4 --check on a copy of the settled image (even --check
 * writes the status block). */
static void fsck_clean(r4_db *db, const char *when)
{
	char copy[200], cmd[512];
	int f;

	if (fsck_missing)
		return;
	CHECK_RC(r4_sync(db));		/* the footer too */
	snprintf(copy, sizeof(copy), "%s/fsck%u.img", dir, fsck_seq++);
	snprintf(cmd, sizeof(cmd), "cp --sparse=always '%s' '%s'", img, copy);
	CHECK_EQ(system(cmd), 0);
	if ((f = t_fsck(copy)) < 0) {
		printf("skip: fsck.reiser4 not installed, interop checks skipped\n");
		fsck_missing = true;
		return;
	}
	fsck_runs++;
	CHECK_EQ(f, 1);
	if (f != 1)
		fprintf(stderr, "fsck.reiser4 --check not clean %s (see %s.fsck)\n", when, copy);
	else
		unlink(copy);
}

static r4_db *open_rw(void)
{
	struct r4_open_opts oo = {.rw = true};
	r4_db *db = NULL;

	CHECK_RC(r4_open(img, &oo, &db));
	return db;
}

static r4_db *reopen(r4_db *db)
{
	r4_close(db);
	return open_rw();
}

static r4_db *fresh(unsigned mib)
{
	static const uint8_t uuid[16] = {0x45, 0x4e, 0x4f, 0x53, 0x50, 0x43};
	struct r4_mkfs_opts o;

	r4_mkfs_defaults(&o);
	o.uuid = uuid;
	o.mtime = 1700000000;
	o.mkfs_id = 0x454e4f53;
	CHECK_RC(r4_mkfs(img, (uint64_t)mib * MIB, &o));
	return open_rw();
}

/* ---- transactions that may not fit ---- */

struct stats {
	unsigned commits, refused;	/* committed; refused with -ENOSPC at a call */
};

struct txn {
	struct model pend;	/* the model as this transaction changes it */
	struct snap before;
	uint64_t bfree;
	bool keep;		/* after a refusal, commit what went before */
};

/* The snapshot is taken once the transaction is open: r4_begin may write
 * the last commit's journal footer first (settling it), which is that
 * commit's business, not this transaction's. */
static void txn_begin(r4_db *db, struct txn *t, const struct model *m)
{
	CHECK_RC(r4_begin(db));
	snap_take(&t->before);
	t->bfree = bfree(db);
	model_copy(&t->pend, m);
}

/*
 * End a transaction whose calls returned op_rc (the first failure, 0 for
 * none).  A failed call must be a refusal: exactly -ENOSPC, nothing
 * changed, the transaction usable.  Then it commits (with t->keep, or no
 * refusal), and the commit never fails; or it is aborted, and the image
 * must be byte-for-byte as it was, with the same free count.  0 when
 * committed (the model takes the transaction's changes), else op_rc.
 */
static int txn_end(r4_db *db, struct txn *t, struct model *m, int op_rc, struct stats *s)
{
	if (op_rc) {
		CHECK_EQ(op_rc, -ENOSPC);
		CHECK(r4_in_txn(db));
		CHECK_EQ(r4_txn_error(db), 0);	/* a refusal changes nothing */
		s->refused++;
	}
	if (!op_rc || t->keep) {
		CHECK_RC(r4_commit(db));	/* never -ENOSPC */
		model_take(m, &t->pend);
		s->commits++;
		return op_rc;
	}
	r4_abort(db);
	CHECK(!r4_in_txn(db));
	CHECK(snap_same_played(&t->before, "after an aborted transaction"));
	CHECK_EQ(bfree(db), t->bfree);
	model_free(&t->pend);
	return op_rc;
}

static void txn_fini(struct txn *t)
{
	memset(&t->before, 0, sizeof(t->before));
	model_free(&t->pend);
}

/* ---- one_txn, refusals: one transaction takes every free block ---- */

/*
 * In the open transaction, append to file i of m (empty or block-aligned)
 * in halving chunks from 1 MiB until not one more block is promised: each
 * chunk is refused with exactly -ENOSPC.  Returns the bytes appended.
 */
static uint64_t promise_all(r4_db *db, struct model *m, size_t i, uint32_t seed)
{
	uint64_t total = 0;
	int rc = 0;

	for (size_t len = MIB; len >= BS; len /= 2)
		while ((rc = op_write(db, m, i, m->f[i].size, len, seed)) == 0)
			total += len;
	CHECK_EQ(rc, -ENOSPC);
	return total;
}

static void test_one_txn(void)
{
	struct model m = {0};
	struct snap before = {0};
	struct r4_check_result r0;
	struct r4_stat st;
	uint64_t free0, off, left;
	r4_db *db = fresh(8);
	int rc;

	if (!db)
		return;
	r0 = checked(db, "of the fresh image");
	free0 = bfree(db);

	/* 64 KiB chunks: the chunk that does not fit is refused, the data
	 * written before it is all counted, nodes (allocated at commit) not;
	 * the reserve is left */
	CHECK_RC(r4_begin(db));
	snap_take(&before);
	CHECK_RC(op_create(db, &m, "/big"));
	if (m.n != 1)
		goto out;
	for (off = 0; (rc = op_write(db, &m, 0, off, 65536, 1)) == 0; off += 65536)
		;
	CHECK_EQ(rc, -ENOSPC);
	CHECK_EQ(r4_txn_error(db), 0);
	left = bfree(db);
	CHECK_EQ(left, free0 - off / BS);
	CHECK(bavail(db) < 64);
	CHECK(left >= RESERVE);
	CHECK_RC(r4_stat(db, "/big", &st));
	CHECK_EQ(st.size, off);			/* the refused write changed nothing */
	CHECK_EQ(verify(db, &m, true, "the 64 KiB fill"), 0);
	printf("one transaction, 64 KiB chunks: %llu of %llu free blocks written, -ENOSPC with "
	       "%llu left (%llu for new data)\n", (unsigned long long)(off / BS),
	       (unsigned long long)free0, (unsigned long long)left,
	       (unsigned long long)bavail(db));
	r4_abort(db);
	CHECK(snap_same(&before, "after aborting the 64 KiB fill"));
	CHECK_EQ(bfree(db), free0);
	CHECK_EQ(r4_stat(db, "/big", &st), -ENOENT);
	model_free(&m);

	/* every block a write can get: the next byte in a new block and a new
	 * file are refused; shrinking gives promised blocks back; rewriting
	 * pending data takes none; the commit finds every block it needs */
	CHECK_RC(r4_begin(db));
	snap_take(&before);
	CHECK_RC(op_create(db, &m, "/big"));
	if (m.n != 1)
		goto out;
	off = promise_all(db, &m, 0, 2);
	left = bfree(db);
	CHECK_EQ(left, free0 - off / BS);
	CHECK(bavail(db) < 64);
	CHECK_EQ(op_write(db, &m, 0, off, 1, 4), -ENOSPC);
	CHECK_EQ(op_write(db, &m, 0, off + 10 * BS, 100, 4), -ENOSPC);	/* past a hole */
	CHECK_EQ(op_create(db, &m, "/empty"), -ENOSPC);
	CHECK_EQ(r4_txn_error(db), 0);
	off -= 64 * BS;
	CHECK_RC(r4_truncate(db, "/big", off));
	model_resize(&m.f[0], off);
	CHECK_EQ(bfree(db), left + 64);
	left = bfree(db);
	CHECK_RC(op_write(db, &m, 0, 12345, 300000, 5));
	CHECK_EQ(bfree(db), left);
	CHECK_RC(op_create(db, &m, "/empty"));	/* stat data: node space, taken at commit */
	CHECK_EQ(verify(db, &m, true, "the fill to the last block"), 0);
	rc = r4_commit(db);
	printf("one transaction to the last block: %llu blocks of data, statfs bfree %llu, "
	       "commit: %s\n", (unsigned long long)(off / BS), (unsigned long long)left,
	       r4_strerror(rc));
	CHECK_RC(rc);
	checked(db, "after committing the fill to the last block");
	if (!(db = reopen(db)))
		goto out;
	CHECK_EQ(verify(db, &m, true, "the fill to the last block, reopened"), 0);
	CHECK_RC(r4_unlink(db, "/big"));
	CHECK_RC(r4_unlink(db, "/empty"));
	CHECK_EQ(bfree(db), free0);
	model_free(&m);

	/* a refused write is a refusal (nothing changed): the transaction
	 * stays usable; truncating gives the promised blocks back */
	CHECK_RC(r4_begin(db));
	CHECK_RC(op_create(db, &m, "/big"));
	if (m.n != 1)
		goto out;
	for (off = 0; (rc = op_write(db, &m, 0, off, 65536, 6)) == 0; off += 65536)
		;
	CHECK_EQ(rc, -ENOSPC);
	CHECK_RC(r4_truncate(db, "/big", off / 2));
	model_resize(&m.f[0], off / 2);
	CHECK_EQ(bfree(db), free0 - off / 2 / BS);
	CHECK_RC(r4_commit(db));
	CHECK_EQ(verify(db, &m, true, "the half kept"), 0);
	CHECK_RC(r4_stat(db, "/big", &st));
	CHECK_EQ(st.blocks * 512, off / 2);
	checked(db, "after committing half");
	db = reopen(db);
	if (!db)
		goto out;
	CHECK_EQ(verify(db, &m, true, "the half kept, reopened"), 0);
	CHECK_RC(r4_unlink(db, "/big"));
	struct r4_check_result r1 = checked(db, "after deleting /big");
	CHECK_EQ(bfree(db), free0);
	CHECK_EQ(r1.used_blocks, r0.used_blocks);
	fsck_clean(db, "after one_txn");
out:
	r4_close(db);
	model_free(&m);
}

/*
 * Each kind of write when not one more block can be promised: refused,
 * the transaction usable and the target as before.  With /big's blocks
 * given back in the same transaction, the same write is done and the
 * transaction commits.  Rewriting committed data needs blocks too (its
 * wandered copies or new places), and so does a tail rewritten.
 */
static void test_refusals(void)
{
	static const struct {
		const char *what;
		size_t size, hole;	/* committed before: size bytes, then a hole to `hole` */
		uint64_t off;
		size_t len;
		bool small;		/* needs so few blocks that what a 1-block
					   append could not take may hold them */
	} c[] = {
		{"append, the last block partly used", 40000, 0, 40000, 65536, false},
		{"extend a file in a new block", 40960, 0, 40960, 1, false},
		{"fill a hole", 40000, 400000, 200000, 65536, false},
		{"grow a tail past 16 KiB", 10000, 0, 10000, 65536, false},
		{"rewrite allocated blocks and go past the end", 41000, 0, 36000, 65536, false},
		{"rewrite a tail, staying a tail", 10000, 0, 100, 15000, false},
		{"rewrite allocated blocks", 40000, 0, 100, 30000, true},
		{"rewrite the last block's slack", 41000, 0, 40990, 100, true},
	};
	struct model m = {0};
	struct stats s = {0};
	struct txn t = {0};
	r4_db *db = fresh(8);

	if (!db)
		return;
	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		char path[40];

		snprintf(path, sizeof(path), "/c%zu", i);
		CHECK_RC(op_make(db, &m, path, c[i].size, (uint32_t)i));
		if (c[i].hole) {
			CHECK_RC(r4_truncate(db, path, c[i].hole));
			model_resize(&m.f[m.n - 1], c[i].hole);
		}
	}
	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		int rc, rc2;

		CHECK_RC(r4_sync(db));
		txn_begin(db, &t, &m);
		CHECK_RC(op_create(db, &t.pend, "/big"));
		promise_all(db, &t.pend, t.pend.n - 1, 20);
		rc = op_write(db, &t.pend, i, c[i].off, c[i].len, 30);
		if (!c[i].small || rc)
			CHECK_EQ(rc, -ENOSPC);
		CHECK_EQ(r4_txn_error(db), 0);
		/* giving the promised blocks back: the same write fits */
		CHECK_RC(r4_truncate(db, "/big", 0));
		model_resize(&t.pend.f[t.pend.n - 1], 0);
		rc2 = rc ? op_write(db, &t.pend, i, c[i].off, c[i].len, 30) : 0;
		CHECK_RC(rc2);
		CHECK_EQ(txn_end(db, &t, &m, rc2, &s), 0);
		printf("no block to promise: %s: write %s; with room: %s, committed\n", c[i].what,
		       r4_strerror(rc), r4_strerror(rc2));
		CHECK_EQ(verify(db, &m, true, c[i].what), 0);
		checked(db, c[i].what);
		long big = model_find(&m, "/big");

		if (big >= 0)
			CHECK_RC(op_unlink(db, &m, (size_t)big));
	}
	/* a punch is a removal: done with not one block to promise, until
	 * punches into committed blocks (each a page to write) have taken
	 * the reserve too; then refused, nothing changed, and what went
	 * before commits */
	int rc = 0;
	unsigned n = 0;

	CHECK_RC(op_make(db, &m, "/r", MIB, 40));
	CHECK_RC(op_write(db, &m, m.n - 1, MIB, MIB, 41));
	CHECK_RC(r4_sync(db));
	txn_begin(db, &t, &m);
	t.keep = true;
	CHECK_RC(op_create(db, &t.pend, "/big"));
	promise_all(db, &t.pend, t.pend.n - 1, 20);
	CHECK_RC(op_punch(db, &t.pend, 0, 5000, 20000));
	while (n < 2 * MIB / BS && !(rc = op_punch(db, &t.pend, t.pend.n - 2, n * BS + 7, 9)))
		n++;
	printf("no block to promise: a punch freeing blocks: done; %u punches into committed "
	       "blocks, then %s\n", n, r4_strerror(rc));
	CHECK_EQ(txn_end(db, &t, &m, rc, &s), -ENOSPC);
	CHECK_EQ(verify(db, &m, true, "the punches"), 0);
	checked(db, "the punches");
	db = reopen(db);
	if (db)
		CHECK_EQ(verify(db, &m, true, "the refusals, reopened"), 0);
	txn_fini(&t);
	model_free(&m);
	r4_close(db);
}

/* ---- fill_txns: filled over many committed transactions ---- */

/*
 * One transaction of a fill's last steps, at most twice: again after
 * r4_sync when it does not fit, since the last commit's log blocks are
 * free only once settled.  0 when it committed.
 */
static int fill_step(r4_db *db, struct model *m, struct stats *s, const char *path,
		     size_t len, uint32_t seed)
{
	struct txn t = {0};
	int rc = 0;

	for (int pass = 0; pass < 2; pass++) {
		if (pass)
			CHECK_RC(r4_sync(db));
		txn_begin(db, &t, m);
		if (path) {
			rc = op_make(db, &t.pend, path, len, seed);
		} else {		/* append to /m00 */
			long i = model_find(&t.pend, "/m00");

			rc = i < 0 ? -ENOENT
				   : op_write(db, &t.pend, (size_t)i, t.pend.f[i].size, len, seed);
		}
		if (!(rc = txn_end(db, &t, m, rc, s)))
			break;
	}
	txn_fini(&t);
	return rc;
}

/* The same fill every time, so a refill can be compared with it: tails in
 * /d, 1 MiB files, appends to /m00 halving to one block, tails halving to
 * 16 bytes, empty files, each step until its transaction does not fit even
 * on a settled journal.  Returns the data bytes committed. */
static uint64_t fill(r4_db *db, struct model *m, struct stats *s)
{
	struct txn t = {0};
	char path[40];
	unsigned n = 0;
	int rc;

	if (r4_stat(db, "/d", &(struct r4_stat){0}))
		CHECK_RC(r4_mkdir(db, "/d", 0755, 0, 0));
	for (unsigned b = 0; b < 10; b++) {	/* an empty volume takes these */
		txn_begin(db, &t, m);
		for (rc = 0; !rc && n < (b + 1) * 20; n++) {
			snprintf(path, sizeof(path), "/d/s%03u", n);
			rc = op_make(db, &t.pend, path, 1 + n * 397 % 3000, n);
		}
		CHECK_EQ(txn_end(db, &t, m, rc, s), 0);
	}
	for (unsigned k = 0;; k++) {
		snprintf(path, sizeof(path), "/m%02u", k);
		txn_begin(db, &t, m);
		if (txn_end(db, &t, m, op_make(db, &t.pend, path, MIB, 100 + k), s))
			break;
	}
	txn_fini(&t);
	for (size_t len = MIB / 2; len >= BS; len /= 2)
		while (!fill_step(db, m, s, NULL, len, 7))
			;
	for (size_t len = 2048; len >= 16; len /= 2) {
		do
			snprintf(path, sizeof(path), "/d/t%03u", n++);
		while (!fill_step(db, m, s, path, len, n));
	}
	do
		snprintf(path, sizeof(path), "/d/e%03u", n++);
	while (!fill_step(db, m, s, path, 0, 0));
	uint64_t bytes = 0;

	for (size_t i = 0; i < m->n; i++)
		bytes += m->f[i].size;
	return bytes;
}

/* On the full volume: transactions that make no new data but need a
 * wandered copy (or a new place) of every node or block they dirty. */
static void full_volume(r4_db *db, struct model *m)
{
	struct r4_setattr sa = {.mask = R4_SET_MTIME, .mtime = {12345, 0}};
	struct stats s = {0};
	struct txn t = {0};
	struct r4_stat st;
	int rc = 0, wrc;

	/* setattr on every file and a byte of every tail rewritten: each call
	 * fits or is refused, and what went before commits */
	txn_begin(db, &t, m);
	t.keep = true;
	for (size_t i = 0; i < t.pend.n && !rc; i++)
		if (!(rc = r4_setattr(db, t.pend.f[i].path, &sa)) && t.pend.f[i].size &&
		    t.pend.f[i].size <= 16384)
			rc = op_write(db, &t.pend, i, t.pend.f[i].size / 2, 1, 55);
	printf("full volume, bfree %llu: setattr on %zu files, their tails rewritten: %s, ",
	       (unsigned long long)bfree(db), m->n, r4_strerror(rc));
	CHECK(rc == 0 || rc == -ENOSPC);
	txn_end(db, &t, m, rc, &s);
	printf("committed\n");
	CHECK_EQ(verify(db, m, true, "after the rewrite"), 0);
	checked(db, "after the rewrite");

	/* overwriting committed data takes wandered copies or new places */
	long i = model_find(m, "/m01");

	CHECK(i >= 0);
	if (i >= 0) {
		txn_begin(db, &t, m);
		wrc = op_write(db, &t.pend, (size_t)i, 0, MIB, 77);
		printf("full volume: overwrite of 1 MiB of committed data: %s\n", r4_strerror(wrc));
		CHECK_EQ(txn_end(db, &t, m, wrc, &s), -ENOSPC);
	}
	CHECK_EQ(verify(db, m, true, "after the refused overwrite"), 0);
	txn_fini(&t);

	/* autocommitted creates until one does not fit: it is refused and
	 * leaves no transaction, the image as it was */
	struct snap before = {0};
	char path[40];

	for (unsigned n = 0; !rc || !n; n++) {
		snprintf(path, sizeof(path), "/d/auto%u", n);
		CHECK_RC(r4_sync(db));	/* (so the refused call's r4_begin settles nothing) */
		snap_take(&before);
		rc = op_create(db, m, path);
	}
	CHECK_EQ(rc, -ENOSPC);
	CHECK(!r4_in_txn(db));
	CHECK(snap_same(&before, "after the refused autocommit"));
	CHECK_EQ(r4_stat(db, path, &st), -ENOENT);
	CHECK_EQ(verify(db, m, false, "after the refused autocommit"), 0);

	/* deleting many tails at once: removals may use the reserve */
	txn_begin(db, &t, m);
	rc = 0;
	for (size_t k = 0; k < t.pend.n && !rc;)
		if (!strncmp(t.pend.f[k].path, "/d/s", 4))
			rc = op_unlink(db, &t.pend, k);
		else
			k++;
	CHECK_EQ(rc, 0);
	printf("full volume, bfree %llu: unlink of 200 tail files in one transaction: ",
	       (unsigned long long)bfree(db));
	rc = txn_end(db, &t, m, rc, &s);
	printf("commit %s, bfree %llu\n", r4_strerror(rc), (unsigned long long)bfree(db));
	CHECK_EQ(rc, 0);
	CHECK_EQ(verify(db, m, false, "after unlinking the tails"), 0);
	checked(db, "after unlinking the tails");
	txn_fini(&t);
}

/*
 * Delete files one transaction each (r4_sync first, so the free count
 * moves by this one alone) and demand that bfree grows by exactly the data
 * blocks their stat data reports plus the nodes the tree lost, as r4_check
 * counts them.  False when a file could not be deleted.
 */
static bool delete_exact(r4_db *db, struct model *m, const char *prefix, bool dense,
			 uint64_t *data)
{
	for (size_t i = 0; i < m->n;) {
		struct r4_check_result a, b;
		struct r4_stat st;
		uint64_t f0;
		int rc;

		if (strncmp(m->f[i].path, prefix, strlen(prefix))) {
			i++;
			continue;
		}
		CHECK_RC(r4_sync(db));
		a = checked(db, "before an unlink");
		f0 = bfree(db);
		CHECK_RC(r4_stat(db, m->f[i].path, &st));
		if (dense && st.size > 16384)		/* extents, no holes: whole blocks */
			CHECK_EQ(st.blocks * 512, (st.size + BS - 1) / BS * BS);
		if ((rc = op_unlink(db, m, i))) {
			CHECK_RC(rc);
			fprintf(stderr, "r4_unlink %s (%llu bytes) with bfree %llu: %s\n",
				m->f[i].path, (unsigned long long)st.size, (unsigned long long)f0,
				r4_strerror(rc));
			return false;
		}
		b = checked(db, "after an unlink");
		if (st.size > 16384) {
			CHECK_EQ(a.extent_blocks - b.extent_blocks, st.blocks / 8);
			CHECK_EQ(bfree(db) - f0, st.blocks / 8 + a.nodes - b.nodes);
			*data += st.blocks / 8;
		} else {
			CHECK_EQ(a.extent_blocks, b.extent_blocks);	/* a tail: node space */
			CHECK_EQ(bfree(db) - f0, a.nodes - b.nodes);
		}
	}
	return true;
}

static void test_fill_txns(void)
{
	struct r4_check_result r0, r1, rf;
	struct model m = {0};
	struct stats s = {0}, s2 = {0};
	uint64_t free0, full, bytes, bytes2, data = 0;
	r4_db *db = fresh(8);

	if (!db)
		return;
	CHECK_RC(r4_mkdir(db, "/d", 0755, 0, 0));
	r0 = checked(db, "of the fresh image");
	free0 = bfree(db);

	bytes = fill(db, &m, &s);
	full = bfree(db);
	rf = checked(db, "after the fill");
	printf("filled over %u commits: %zu files, %llu bytes in %llu extent blocks and %llu "
	       "nodes; %u calls refused with -ENOSPC; bfree %llu of %llu, %llu for new data\n",
	       s.commits, m.n, (unsigned long long)bytes, (unsigned long long)rf.extent_blocks,
	       (unsigned long long)rf.nodes, s.refused, (unsigned long long)full,
	       (unsigned long long)free0, (unsigned long long)bavail(db));
	CHECK(s.refused > 0);
	CHECK(bavail(db) < 64);			/* not one more empty file */
	CHECK(full >= RESERVE);			/* the reserve, for removals */
	CHECK_EQ(verify(db, &m, true, "the fill"), 0);
	checked(db, "after the fill");
	if (!(db = reopen(db)))
		goto out;
	CHECK_EQ(bfree(db), full);
	CHECK_EQ(verify(db, &m, true, "the fill, reopened"), 0);
	checked(db, "after the fill, reopened");
	fsck_clean(db, "after the fill");

	full_volume(db, &m);
	if (!(db = reopen(db)))
		goto out;
	CHECK_EQ(verify(db, &m, true, "after the full volume's transactions, reopened"), 0);
	fsck_clean(db, "after the full volume's transactions");

	/* deleting frees exactly: the 1 MiB files, then everything */
	if (!delete_exact(db, &m, "/m", true, &data))
		goto out;
	printf("deleted the 1 MiB files: %llu data blocks, bfree %llu\n", (unsigned long long)data,
	       (unsigned long long)bfree(db));
	CHECK(data >= 6 * MIB / BS);
	if (!delete_exact(db, &m, "/", true, &data))
		goto out;
	CHECK_EQ(m.n, 0);
	CHECK_RC(r4_rmdir(db, "/d"));
	CHECK_RC(r4_mkdir(db, "/d", 0755, 0, 0));
	r1 = checked(db, "after deleting everything");
	CHECK_EQ(bfree(db), free0);
	CHECK_EQ(r1.used_blocks, r0.used_blocks);
	CHECK_EQ(r1.nodes, r0.nodes);
	CHECK_EQ(r1.extent_blocks, 0);

	/* and the same fill fits as much again */
	bytes2 = fill(db, &m, &s2);
	r1 = checked(db, "after the refill");
	printf("refilled: %llu bytes in %llu extent blocks and %llu nodes, bfree %llu\n",
	       (unsigned long long)bytes2, (unsigned long long)r1.extent_blocks,
	       (unsigned long long)r1.nodes, (unsigned long long)bfree(db));
	/* nothing leaked (bfree, used blocks and nodes were the fresh image's),
	 * but where the last appends' commits find room depends on which
	 * leaves they dirty, so the last block or two may differ */
	CHECK(bytes2 + 2 * BS >= bytes && bytes + 2 * BS >= bytes2);
	CHECK(bfree(db) <= full + 2 && full <= bfree(db) + 2);
	if (!(db = reopen(db)))
		goto out;
	CHECK_EQ(verify(db, &m, true, "the refill, reopened"), 0);
	checked(db, "after the refill");
	fsck_clean(db, "after the refill");
out:
	r4_close(db);
	model_free(&m);
}

/* ---- full_delete, free_then_write ---- */

/*
 * The commit that fills the volume keeps its log blocks (wandered copies
 * and records) until its footer is written by the next commit or r4_sync;
 * statfs counts them free.  Deleting the file right after works, at once.
 */
static void test_full_delete(void)
{
	struct model m = {0};
	uint64_t free0, off;
	r4_db *db = fresh(8);
	int rc;

	if (!db)
		return;
	free0 = bfree(db);
	CHECK_RC(r4_begin(db));
	CHECK_RC(op_create(db, &m, "/big"));
	for (off = 0; (rc = op_write(db, &m, 0, off, 65536, 9)) == 0; off += 65536)
		;
	CHECK_EQ(rc, -ENOSPC);
	CHECK_RC(r4_commit(db));
	printf("one file filled the volume: bfree %llu, %llu for new data\n",
	       (unsigned long long)bfree(db), (unsigned long long)bavail(db));
	checked(db, "after the one-file fill");
	unsigned n = 0;
	char path[40];

	do		/* and empty files until one is refused */
		snprintf(path, sizeof(path), "/e%u", n++);
	while (!(rc = r4_create(db, path, 0644, 0, 0)));
	CHECK_EQ(rc, -ENOSPC);
	CHECK(!r4_in_txn(db));
	CHECK_RC(r4_unlink(db, "/big"));
	while (--n) {
		snprintf(path, sizeof(path), "/e%u", n - 1);
		CHECK_RC(r4_unlink(db, path));
	}
	CHECK(!r4_in_txn(db));
	CHECK_EQ(bfree(db), free0);
	CHECK_EQ(r4_stat(db, "/big", &(struct r4_stat){0}), -ENOENT);
	checked(db, "after deleting the one file");
	model_free(&m);
	r4_close(db);
}

/*
 * One transaction on the full volume deletes a 1 MiB file and writes 1 MiB
 * of new data.  Blocks freed in a transaction are reusable only after it
 * commits, so the write is refused; the unlink commits.
 */
static void test_free_then_write(void)
{
	struct model m = {0};
	struct stats s = {0};
	struct txn t = {0};
	r4_db *db = fresh(8);
	uint64_t off;
	int rc, wrc;

	if (!db)
		return;
	CHECK_RC(r4_begin(db));
	CHECK_RC(op_make(db, &m, "/a", MIB, 10));
	CHECK_RC(op_create(db, &m, "/big"));
	for (off = 0; (rc = op_write(db, &m, 1, off, 65536, 11)) == 0; off += 65536)
		;
	CHECK_EQ(rc, -ENOSPC);
	CHECK_RC(r4_commit(db));
	CHECK_RC(r4_sync(db));
	txn_begin(db, &t, &m);
	t.keep = true;
	CHECK_RC(op_unlink(db, &t.pend, 0));
	wrc = op_write(db, &t.pend, 0, m.f[1].size, MIB, 12);	/* (/big is f[0] now) */
	rc = txn_end(db, &t, &m, wrc, &s);
	printf("full volume: unlink 1 MiB + write 1 MiB in one transaction: write %s, the "
	       "unlink committed\n", r4_strerror(wrc));
	CHECK_EQ(wrc, -ENOSPC);
	CHECK_EQ(m.n, 1);
	CHECK_EQ(verify(db, &m, true, "after unlink + write"), 0);
	checked(db, "after unlink + write");
	/* committed, the blocks are free: now it fits */
	CHECK_RC(op_write(db, &m, 0, m.f[0].size, MIB, 12));
	CHECK_EQ(verify(db, &m, true, "the write after the commit"), 0);
	checked(db, "the write after the commit");
	txn_fini(&t);
	model_free(&m);
	r4_close(db);
}

/*
 * Free space in runs of 5 blocks (a volume of 5-block files, every other
 * one deleted): new data is placed in a run each 5 blocks, and its extent
 * items grow by a unit each.  What a transaction is promised
 * still commits; then, the scattered files gone, nearly every free block
 * can be promised to a fallocate.
 */
static void test_scattered(void)
{
	struct model m = {0};
	struct stats s = {0};
	struct txn t = {0};
	r4_db *db = fresh(8);
	char path[32];
	uint64_t got, free1;
	r4_file *h;
	int rc = 0;

	if (!db)
		return;
	for (unsigned n = 0; !rc; ) {
		txn_begin(db, &t, &m);
		t.keep = true;
		for (unsigned k = 0; k < 256 && !rc; k++, n++) {
			snprintf(path, sizeof(path), "/s%05u", n);
			rc = op_make(db, &t.pend, path, 5 * BS, n);
		}
		rc = txn_end(db, &t, &m, rc, &s);
	}
	txn_begin(db, &t, &m);
	for (size_t i = t.pend.n; i-- > 0;)
		if (i % 2 == 0)
			CHECK_RC(op_unlink(db, &t.pend, i));
	CHECK_RC(txn_end(db, &t, &m, 0, &s));
	CHECK_RC(r4_sync(db));
	free1 = bavail(db);
	txn_begin(db, &t, &m);
	t.keep = true;
	CHECK_RC(op_create(db, &t.pend, "/big"));
	got = promise_all(db, &t.pend, t.pend.n - 1, 77) / BS;
	CHECK_EQ(txn_end(db, &t, &m, -ENOSPC, &s), -ENOSPC);	/* (commits) */
	printf("scattered: %zu 5-block files left, %llu blocks free for new data, %llu "
	       "promised in one transaction and committed\n", m.n - 1, (unsigned long long)free1,
	       (unsigned long long)got);
	CHECK(got * 10 > free1 * 9);
	CHECK_EQ(verify(db, &m, true, "scattered"), 0);
	fsck_clean(db, "scattered");
	/* the rest deleted, their runs free again: a fallocate of all but
	 * 128 blocks of the free space (in runs of 5 blocks, and the rest) */
	txn_begin(db, &t, &m);
	for (size_t i = t.pend.n; i-- > 0;)
		if (t.pend.f[i].path[1] == 's')
			CHECK_RC(op_unlink(db, &t.pend, i));
	CHECK_RC(txn_end(db, &t, &m, 0, &s));
	CHECK_RC(r4_sync(db));
	free1 = bavail(db);
	CHECK_RC(r4_file_open(db, "/big", &h));
	if (h) {
		CHECK_RC(r4_file_fallocate(h, 0, m.f[0].size, (free1 - 128) * BS));
		r4_file_close(h);
		model_resize(&m.f[0], m.f[0].size + (free1 - 128) * BS);
	}
	CHECK_EQ(m.n, 1);
	CHECK_EQ(verify(db, &m, true, "a fallocate of nearly all"), 0);
	printf("scattered, the rest deleted: a fallocate of %llu blocks, %llu free\n",
	       (unsigned long long)(free1 - 128), (unsigned long long)free1);
	fsck_clean(db, "a fallocate of nearly all");
	txn_fini(&t);
	model_free(&m);
	r4_close(db);
}

/* ---- random: changes near full against the model ---- */

static uint64_t rng;

static uint64_t rnd(uint64_t n)
{
	uint64_t z = (rng += 0x9e3779b97f4a7c15ull);

	z = (z ^ z >> 30) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ z >> 27) * 0x94d049bb133111ebull;
	z ^= z >> 31;
	return n ? z % n : z;
}

static unsigned next_name;

static void new_path(char *path, size_t n)
{
	snprintf(path, n, "%s/f%05u", rnd(2) ? "" : "/d", next_name++);
}

/* One random call on the open transaction; 0 or its error. */
static int random_op(r4_db *db, struct model *m, bool roomy)
{
	unsigned w = (unsigned)rnd(100);
	char path[40];
	size_t i = m->n ? (size_t)rnd(m->n) : 0;
	struct mfile *f = m->n ? &m->f[i] : NULL;

	if (f && !roomy && w < 12) {	/* append what is left, less some, or more */
		uint64_t left = bavail(db), k, len;

		uint64_t less = rnd(2) ? 12 : 40;	/* what the commit may need, or more */

		k = rnd(4) == 0 ? left + 1 + rnd(4) : left - rnd(left < less ? left + 1 : less);
		len = k * BS - rnd(BS);
		len = len < 1 ? 1 : len > MIB ? MIB : len;
		return op_write(db, m, i, f->size, (size_t)len, (uint32_t)rnd(1000));
	}
	if (f && roomy && w < 25)			/* on the way: a big append */
		return op_write(db, m, i, f->size, MIB, (uint32_t)rnd(1000));
	if (!f || w < (roomy ? 40 : 30)) {		/* create: empty, tail or extents */
		size_t len = rnd(4) == 0 ? 0 : rnd(3) ? 1 + rnd(16384) : 16385 + rnd(200000);

		new_path(path, sizeof(path));
		return op_make(db, m, path, len, (uint32_t)rnd(1000));
	}
	if (w < (roomy ? 70 : 50)) {			/* append */
		size_t len = 1 + rnd(rnd(2) ? 8192 : 131072);

		return op_write(db, m, i, f->size, len, (uint32_t)rnd(1000));
	}
	if (w < (roomy ? 76 : 54)) {			/* overwrite, maybe past the end */
		uint64_t off = f->size ? rnd(f->size) : 0;

		return op_write(db, m, i, off, 1 + rnd(65536), (uint32_t)rnd(1000));
	}
	if (w < (roomy ? 78 : 56)) {			/* punch a hole, maybe to past the end */
		uint64_t off = f->size ? rnd(f->size) : 0;

		return op_punch(db, m, i, off, 1 + rnd(rnd(2) ? 8192 : 262144));
	}
	if (f->size > 16384 && w < (roomy ? 80 : 58)) {	/* (extents) collapse or insert */
		size_t blocks = f->size / BS, b = (size_t)rnd(blocks - 1);

		if (rnd(2))	/* a hole of up to 16 blocks, at a block before the end */
			return op_shift(db, m, i, true, b + (size_t)rnd(2), 1 + (size_t)rnd(16));
		return op_shift(db, m, i, false, b, 1 + (size_t)rnd(blocks - 1 - b));
	}
	if (w < (roomy ? 85 : 68)) {			/* truncate: shrink, or a hole */
		size_t size = rnd(3) ? rnd(f->size + 1) : f->size + rnd(65536);
		int rc = r4_truncate(db, f->path, size);

		if (!rc)
			model_resize(f, size);
		return rc;
	}
	if (w < (roomy ? 90 : 84))			/* unlink */
		return op_unlink(db, m, i);
	if (w < (roomy ? 95 : 91)) {			/* rename to a new name */
		int rc;

		new_path(path, sizeof(path));
		if (!(rc = r4_rename(db, f->path, path, 0)))
			snprintf(f->path, sizeof(f->path), "%s", path);
		return rc;
	}
	/* touch many, and rewrite a byte of each tail among them: no new
	 * block, but the commit needs a copy of every node they are in */
	struct r4_setattr sa = {.mask = R4_SET_MTIME, .mtime = {(time_t)rnd(1u << 30), 0}};
	int rc = 0;

	for (size_t k = 0, n = 1 + rnd(roomy ? 40 : m->n); k < n && !rc; k++) {
		size_t j = (size_t)rnd(m->n);

		if (!(rc = r4_setattr(db, m->f[j].path, &sa)) && m->f[j].size &&
		    m->f[j].size <= 16384)
			rc = op_write(db, m, j, rnd(m->f[j].size), 1, (uint32_t)rnd(1000));
	}
	return rc;
}

static void random_on(unsigned mib, unsigned steps)
{
	uint64_t free0, minavail, data = 0;
	struct r4_check_result r0, r;
	struct model m = {0};
	struct stats s = {0};
	struct txn t = {0};
	unsigned step = 0;
	r4_db *db;
	int rc;

	if (!(db = fresh(mib)))
		return;
	CHECK_RC(r4_mkdir(db, "/d", 0755, 0, 0));
	r0 = checked(db, "of the fresh image");
	free0 = minavail = bfree(db);
	int fails = t_fail;

	for (step = 0; step < steps && t_fail == fails; step++) {
		bool roomy = bavail(db) * 5 > free0;

		rc = 0;

		if (rnd(8) == 0)
			CHECK_RC(r4_sync(db));
		txn_begin(db, &t, &m);
		t.keep = rnd(2);
		for (unsigned k = 0, n = 1 + (unsigned)rnd(3); k < n && !rc; k++)
			rc = random_op(db, &t.pend, roomy);
		rc = txn_end(db, &t, &m, rc, &s);
		if (rc && rc != -ENOSPC)
			break;
		minavail = bavail(db) < minavail ? bavail(db) : minavail;
		CHECK_EQ(verify(db, &m, step % 10 == 0, "random"), 0);
		checked(db, "random");
		if (step % 50 == 49) {
			if (!(db = reopen(db)))
				break;
			CHECK_EQ(verify(db, &m, true, "random, reopened"), 0);
		}
	}
	if (t_fail != fails)
		fprintf(stderr, "random: failed at step %u (R4_SEED to replay)\n", step);
	printf("random, %u MiB: %u transactions: %u committed, %u calls refused with -ENOSPC; "
	       "for new data at least %llu of %llu free blocks left\n", mib, step, s.commits,
	       s.refused, (unsigned long long)minavail, (unsigned long long)free0);
	CHECK(s.commits > steps / 4);		/* much was committed, */
	CHECK(minavail * 10 < free0);		/* near full */
	if (!db)
		goto out;
	/* more than there is: refused, and what went before commits */
	txn_begin(db, &t, &m);
	t.keep = true;
	if (!(rc = op_create(db, &t.pend, "/last")))
		while (!(rc = op_write(db, &t.pend, t.pend.n - 1, t.pend.f[t.pend.n - 1].size, MIB,
				       1)))
			;
	CHECK_EQ(txn_end(db, &t, &m, rc, &s), -ENOSPC);
	CHECK_EQ(verify(db, &m, true, "random, the end"), 0);
	fsck_clean(db, "after the random part");

	/* everything deleted: as fresh */
	if (!delete_exact(db, &m, "/", false, &data))
		goto out;
	CHECK_EQ(m.n, 0);
	r = checked(db, "random, after deleting everything");
	CHECK_EQ(bfree(db), free0);
	CHECK_EQ(r.used_blocks, r0.used_blocks);
out:
	txn_fini(&t);
	model_free(&m);
	r4_close(db);
}

static void test_random(void)
{
	const char *e = getenv("R4_ENOSPC_STEPS");
	unsigned steps = e ? (unsigned)strtoul(e, NULL, 0) : 300;

	rng = t_seed();
	random_on(4, steps);
	random_on(16, steps / 2);
}

int main(void)
{
	struct timespec a, b;

	setvbuf(stdout, NULL, _IOLBF, 0);	/* in order with stderr in a log */
	clock_gettime(CLOCK_MONOTONIC, &a);
	snprintf(dir, sizeof(dir), "%s/r4-enospc.XXXXXX", t_tmp());
	if (!mkdtemp(dir))
		return 2;
	snprintf(img, sizeof(img), "%s/e.img", dir);

	static const struct {
		const char *name;
		void (*run)(void);
	} parts[] = {
		{"one_txn", test_one_txn}, {"refusals", test_refusals},
		{"fill_txns", test_fill_txns}, {"full_delete", test_full_delete},
		{"free_then_write", test_free_then_write}, {"scattered", test_scattered},
		{"random", test_random},
	};
	const char *only = getenv("R4_ENOSPC_PART");	/* one part, by name */

	for (size_t i = 0; i < sizeof(parts) / sizeof(parts[0]); i++) {
		if (only && strcmp(only, parts[i].name))
			continue;
		printf("%s:\n", parts[i].name);
		parts[i].run();
		clock_gettime(CLOCK_MONOTONIC, &b);
		printf("  (%.1f s)\n", (double)(b.tv_sec - a.tv_sec) +
					     (double)(b.tv_nsec - a.tv_nsec) / 1e9);
	}

	clock_gettime(CLOCK_MONOTONIC, &b);
	printf("fsck.reiser4 ran %u times; %.1f s\n", fsck_runs,
	       (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) / 1e9);
	free(snap_buf);
	if (!t_fail)
		t_rmdir(dir);
	else
		fprintf(stderr, "images kept in %s\n", dir);
	return T_DONE();
}
