/*
 * jnl.c - the wandered-block journal (jnl.h): commit writes and replay.
 *
 * Records: a tx head (TxMagic4) then ceil(|over| / 254) wander records
 * (LogMagc4) in a ring: head.next_block -> record 1 -> ... -> record k ->
 * head.  Tx heads chain backwards through prev_tx; the header names the
 * newest committed one, the footer the newest played one, so replay walks
 * from the header back to the footer and plays forwards (ENGINE.md 4.8).
 * Writes are batched into runs of contiguous blocks.
 *
 * Order at commit (asserted in r4_jnl_write and r4_jnl_settle): the
 * footer names only a transaction the header named before (the one being
 * settled), never the new one; the tx head is neither the block the footer
 * names nor the newest committed head (under R4_CHECK_INVARIANTS: it rests
 * on the image marking its journal blocks used, which r4 check verifies);
 * the records and wandered copies are synced before the header is written.
 */
#include <stdlib.h>

#include "alloc.h"
#include "db.h"
#include "format.h"
#include "io.h"
#include "jnl.h"

enum { BATCH_BLOCKS = 64 };

/* ---- sets ---- */

int r4_wset_add(struct r4_wset *s, uint64_t blk, const uint8_t *data, bool copy)
{
	struct r4_wblk *b;

	if (r4_grow(&s->v, &s->cap, s->n + 1, sizeof(*s->v), 64))
		return -ENOMEM;
	b = &s->v[s->n];
	b->blk = blk;
	b->wand = 0;
	b->own = NULL;
	b->data = data;
	if (copy) {
		if (!(b->own = r4_malloc(R4_FORMAT_BLOCKSIZE)))
			return -ENOMEM;
		memcpy(b->own, data, R4_FORMAT_BLOCKSIZE);
		b->data = b->own;
	}
	s->n++;
	return 0;
}

static void wset_fini(struct r4_wset *s)
{
	for (size_t i = 0; i < s->n; i++)
		r4_free(s->v[i].own);
	r4_free(s->v);
	memset(s, 0, sizeof(*s));
}

void r4_jnl_plan_fini(struct r4_commit_plan *p)
{
	wset_fini(&p->reloc);
	wset_fini(&p->over);
	r4_free(p->rec);
	p->rec = NULL;
	p->nrec = 0;
}

static int cmp_blk(const void *a, const void *b)
{
	const struct r4_wblk *x = a, *y = b;

	return x->blk < y->blk ? -1 : x->blk > y->blk;
}

/* ---- batched writes ---- */

struct batch {
	struct r4_db *db;
	uint64_t start;
	size_t n;
	uint8_t *buf;		/* BATCH_BLOCKS blocks: copies of what is not kept */
	struct iovec v[BATCH_BLOCKS];	/* block i of the run */
};

/* The run as one write: straight from where its blocks are (writev), or
 * gathered into buf for a backend without it. */
static int batch_flush(struct batch *b)
{
	uint32_t bs = b->db->bs;
	int rc = 0;

	if (b->n && b->db->io->ops->writev) {
		rc = r4_io_writev(b->db->io, b->start * bs, b->v, (int)b->n);
	} else if (b->n) {
		for (size_t i = 0; i < b->n; i++)
			if (b->v[i].iov_base != b->buf + i * bs)
				memcpy(b->buf + i * bs, b->v[i].iov_base, bs);
		rc = r4_io_write(b->db->io, b->start * bs, b->buf, b->n * bs);
	}
	b->n = 0;
	return rc;
}

/* Block blk's bytes, data, next in the run (a new run when not); kept:
 * data stays as it is until the flush (else it is copied now). */
static int batch_add(struct batch *b, uint64_t blk, const uint8_t *data, bool kept)
{
	uint32_t bs = b->db->bs;
	int rc;

	if (b->n && (blk != b->start + b->n || b->n == BATCH_BLOCKS) && (rc = batch_flush(b)))
		return rc;
	if (!b->n)
		b->start = blk;
	if (!kept)
		data = memcpy(b->buf + b->n * bs, data, bs);
	b->v[b->n++] = (struct iovec){(void *)data, bs};
	return 0;
}

/* The db's one batch buffer (commits take turns), taken at the first
 * write and kept to r4_close: a fresh 256 KiB buffer for every commit cost
 * a mapping and its page faults each time. */
static int batch_init(struct batch *b, struct r4_db *db)
{
	b->db = db;
	b->n = 0;
	b->start = 0;
	if (!db->jnl_batch && !(db->jnl_batch = r4_malloc((size_t)BATCH_BLOCKS * db->bs)))
		return -ENOMEM;
	b->buf = db->jnl_batch;
	return 0;
}

/* Write every block of s to its place (wandered: to its copy), in order,
 * through b. */
static int write_set(struct batch *b, const struct r4_wset *s, bool wandered)
{
	int rc = 0;

	for (size_t i = 0; i < s->n && !rc; i++)
		rc = batch_add(b, wandered ? s->v[i].wand : s->v[i].blk, s->v[i].data, true);
	return rc ? rc : batch_flush(b);
}

/* The same, starting a batch. */
static int write_set_alone(struct r4_db *db, const struct r4_wset *s, bool wandered)
{
	struct batch b;
	int rc;

	if (!s->n)
		return 0;
	if ((rc = batch_init(&b, db)))
		return rc;
	return write_set(&b, s, wandered);
}

int r4_wset_write(struct r4_db *db, struct r4_wset *s)
{
	if (s->n)
		qsort(s->v, s->n, sizeof(*s->v), cmp_blk);
	return write_set_alone(db, s, false);
}

static int write_fixed(struct r4_db *db, uint64_t blk, const uint8_t *buf)
{
	return r4_io_write(db->io, blk * db->bs, buf, db->bs);
}

/* ---- the window ---- */

/* A committed transaction not yet played: where its copies go, and its log
 * blocks (the copies, then the records, the tx head first). */
struct r4_jtx {
	uint64_t tx, seq;
	struct r4_jcounters cnt;
	uint64_t *blk, *log;	/* blk[i] goes to log[i], i < n; log[n..] the records */
	size_t n, nrec;
};

struct r4_jent {
	uint64_t blk, wand, seq;	/* the newest copy of blk, in transaction seq */
};

static size_t map_slot(const struct r4_jwin *w, uint64_t blk)
{
	return (size_t)((blk * UINT64_C(0x9E3779B97F4A7C15)) >> 20) & (w->mapcap - 1);
}

static struct r4_jent *map_find(const struct r4_jwin *w, uint64_t blk)
{
	if (!w->mapn)
		return NULL;
	for (size_t i = map_slot(w, blk);; i = (i + 1) & (w->mapcap - 1)) {
		if (w->map[i].blk == blk)
			return &w->map[i];
		if (!w->map[i].blk)
			return NULL;
	}
}

/* Room made beforehand (map_room): never fails. */
static void map_put(struct r4_jwin *w, uint64_t blk, uint64_t wand, uint64_t seq)
{
	size_t i = map_slot(w, blk);

	while (w->map[i].blk && w->map[i].blk != blk)
		i = (i + 1) & (w->mapcap - 1);
	if (!w->map[i].blk)
		w->mapn++;
	w->map[i] = (struct r4_jent){blk, wand, seq};
}

/* Linear probing's deletion: move later entries of the cluster back so
 * every entry stays reachable from its slot. */
static void map_del(struct r4_jwin *w, struct r4_jent *e)
{
	size_t i = (size_t)(e - w->map), j = i;

	for (;;) {
		j = (j + 1) & (w->mapcap - 1);
		if (!w->map[j].blk)
			break;
		size_t k = map_slot(w, w->map[j].blk);

		/* j's entry may fill the hole at i unless its slot k lies in (i, j] */
		if (i <= j ? (i < k && k <= j) : (i < k || k <= j))
			continue;
		w->map[i] = w->map[j];
		i = j;
	}
	w->map[i].blk = 0;
	w->mapn--;
}

/* Room for n more entries at a load under a half. */
static int map_room(struct r4_jwin *w, size_t n)
{
	struct r4_jent *old = w->map;
	size_t cap = w->mapcap ? w->mapcap : 1024, oldcap = w->mapcap;

	while ((w->mapn + n) * 2 > cap)
		cap *= 2;
	if (cap == oldcap)
		return 0;
	if (!(w->map = r4_calloc(cap, sizeof(*w->map)))) {
		w->map = old;
		return -ENOMEM;
	}
	w->mapcap = cap;
	w->mapn = 0;
	for (size_t i = 0; i < oldcap; i++)
		if (old[i].blk)
			map_put(w, old[i].blk, old[i].wand, old[i].seq);
	r4_free(old);
	return 0;
}

static int rel_room(struct r4_jwin *w, size_t n)
{
	return r4_grow(&w->rel, &w->relcap, w->nrel + n, sizeof(*w->rel), 256);
}

static int read_fixed(struct r4_db *db, uint64_t blk, uint8_t *buf)
{
	return r4_io_read(db->io, blk * db->bs, buf, db->bs);
}

/* ---- commit ---- */

/* Everything r4_jnl_keep takes, taken before the first write. */
static int keep_room(struct r4_db *db, const struct r4_commit_plan *p)
{
	struct r4_jwin *w = &db->jwin;
	int rc;

	if ((rc = map_room(w, p->over.n)) ||
	    (rc = r4_grow(&w->tx, &w->txcap, w->ntx + 1, sizeof(*w->tx), 16)))
		return rc;
	r4_free(w->spare);
	w->spare = r4_malloc((2 * p->over.n + p->nrec) * sizeof(*w->spare));
	return w->spare ? 0 : -ENOMEM;
}

/* n blocks from the top of the working bitmap's free space, in as few runs
 * as it has. */
static int take(struct r4_db *db, size_t n, uint64_t *out)
{
	size_t have = 0;

	while (have < n) {
		uint64_t start, got;
		int rc = r4_alloc_alloc_high(db->alloc, n - have, &start, &got);

		if (rc) {
			for (size_t i = 0; i < have; i++)
				r4_alloc_release(db->alloc, out[i], 1);
			return rc;
		}
		for (uint64_t k = 0; k < got; k++)
			out[have++] = start + k;
	}
	return 0;
}

int r4_jnl_reserve(struct r4_db *db, struct r4_commit_plan *p)
{
	uint32_t cap = r4_wr_capacity(db->bs);
	size_t n = p->over.n;
	uint64_t *wand;
	int rc;

	p->nrec = (n + cap - 1) / cap + 1;
	if (!(p->rec = r4_malloc(p->nrec * sizeof(*p->rec))) ||
	    !(wand = r4_malloc((n ? n : 1) * sizeof(*wand)))) {
		r4_free(p->rec);
		p->rec = NULL;
		return -ENOMEM;
	}
	if (p->reloc.n)
		qsort(p->reloc.v, p->reloc.n, sizeof(*p->reloc.v), cmp_blk);
	qsort(p->over.v, n, sizeof(*p->over.v), cmp_blk);	/* never empty: the super block */
	if ((rc = keep_room(db, p)) || (rc = take(db, n, wand)))
		goto out;
	if ((rc = take(db, p->nrec, p->rec))) {
		for (size_t i = 0; i < n; i++)
			r4_alloc_release(db->alloc, wand[i], 1);
		goto out;
	}
	for (size_t i = 0; i < n; i++)
		p->over.v[i].wand = wand[i];
	/*
	 * The footer on disk names a played tx head whose block went back to
	 * free space.  Were this head to land on that block, the header would
	 * equal the footer until this commit is settled, and a crash in
	 * between would look like nothing to replay.  There are always two
	 * records (the super block is in every over set), and the newest
	 * committed head is still in use: one of the two will do.
	 */
	if (p->rec[0] == db->footer_tx || p->rec[0] == db->last_tx) {
		uint64_t t = p->rec[0];

		p->rec[0] = p->rec[1];
		p->rec[1] = t;
	}
	p->tx = p->rec[0];
out:
	r4_free(wand);
	if (rc) {
		r4_free(p->rec);
		p->rec = NULL;
		p->nrec = 0;
	}
	return rc;
}

static int write_records(struct r4_db *db, struct batch *b, const struct r4_commit_plan *p)
{
	uint32_t cap = r4_wr_capacity(db->bs);
	int rc;
	struct r4_th th = {
		.th_total = (uint32_t)p->nrec,
		.th_prev_tx = db->last_tx,
		.th_next_block = p->nrec > 1 ? p->rec[1] : p->rec[0],
		.th_free_blocks = p->cnt.free_blocks,
		.th_nr_files = p->cnt.nr_files,
		.th_next_oid = p->cnt.next_oid,
	};
	uint8_t head[R4_MAX_BLOCKSIZE];

	r4_th_encode(&th, head, db->bs);
	rc = batch_add(b, p->rec[0], head, false);
	for (size_t r = 1; r < p->nrec && !rc; r++) {
		struct r4_wr wr = {
			.wr_total = (uint32_t)p->nrec,
			.wr_serial = (uint32_t)r,
			.wr_next_block = r + 1 < p->nrec ? p->rec[r + 1] : p->rec[0],
		};
		size_t first = (r - 1) * cap;

		r4_wr_init(&wr, head, db->bs);
		for (size_t i = first; i < p->over.n && i < first + cap; i++)
			r4_wr_entry_set(head, (uint32_t)(i - first), p->over.v[i].blk,
					p->over.v[i].wand);
		rc = batch_add(b, p->rec[r], head, false);
	}
	return rc;	/* (b's run is the caller's to flush) */
}

static void footer_block(const struct r4_db *db, uint64_t tx, const struct r4_jcounters *c,
			 uint8_t *buf)
{
	struct r4_jf jf = {
		.jf_last_flushed = tx,
		.jf_free_blocks = c->free_blocks,
		.jf_nr_files = c->nr_files,
		.jf_next_oid = c->next_oid,
	};

	memset(buf, 0, db->bs);
	r4_jf_encode(&jf, buf);
}

static int write_footer(struct r4_db *db, uint64_t tx, const struct r4_jcounters *c)
{
	uint8_t buf[R4_MAX_BLOCKSIZE];
	int rc;

	footer_block(db, tx, c, buf);
	if ((rc = write_fixed(db, R4_JFOOTER_BLOCK(db->bs), buf)))
		return rc;
	db->footer_tx = tx;
	return r4_io_sync(db->io);
}

/* The blocks freed once the footer naming the last played transaction is
 * durable (the footer on disk no longer needs them). */
static void release(struct r4_db *db)
{
	struct r4_jwin *w = &db->jwin;

	for (size_t i = 0; i < w->nrel; i++)
		r4_alloc_unhold(db->alloc, w->rel[i]);
	w->nrel = 0;
	db->footer_tx = w->played_tx;
	w->played_tx = 0;
}

int r4_jnl_write(struct r4_db *db, struct r4_commit_plan *p)
{
	uint8_t buf[R4_MAX_BLOCKSIZE];
	struct r4_jh jh = {.jh_last_committed = p->tx};
	struct r4_jwin *w = &db->jwin;
	struct batch b;
	int rc;

	/* a new head, after every head the footer or header names */
	assert(p->nrec >= 2 && p->tx == p->rec[0]);
	R4_INVARIANT(p->tx != db->footer_tx && p->tx != db->last_tx);
	/* everything this needs is taken before the first write: a failure
	 * before the commit point leaves the image as it was */
	if ((rc = batch_init(&b, db)))
		return rc;
	/* the records, then the wandered copies: r4_jnl_reserve takes them in
	 * that order, so a small commit's are one run, one write */
	if (!(rc = write_set(&b, &p->reloc, false)) && !(rc = write_records(db, &b, p)))
		rc = write_set(&b, &p->over, true);
	if (rc || (rc = r4_io_sync(db->io)))
		return rc;
	/* the sync made the played transactions' in-place writes durable:
	 * their footer may go with this header (either order is safe) */
	if (w->played_tx) {
		footer_block(db, w->played_tx, &w->played_cnt, buf);
		if ((rc = write_fixed(db, R4_JFOOTER_BLOCK(db->bs), buf)))
			return rc;
	}
	memset(buf, 0, db->bs);
	r4_jh_encode(&jh, buf);
	if ((rc = write_fixed(db, R4_JHEADER_BLOCK(db->bs), buf)) || (rc = r4_io_sync(db->io)))
		return rc;
	db->last_tx = p->tx;
	if (w->played_tx)
		release(db);
	return 0;
}

void r4_jnl_keep(struct r4_db *db, struct r4_commit_plan *p)
{
	struct r4_jwin *w = &db->jwin;
	struct r4_jtx *t = &w->tx[w->ntx++];

	assert(w->spare);
	t->blk = w->spare;
	t->log = t->blk + p->over.n;
	w->spare = NULL;
	t->tx = p->tx;
	t->seq = w->seq++;
	t->cnt = p->cnt;
	t->n = p->over.n;
	t->nrec = p->nrec;
	for (size_t i = 0; i < p->over.n; i++) {
		t->blk[i] = p->over.v[i].blk;
		t->log[i] = p->over.v[i].wand;
		map_put(w, t->blk[i], t->log[i], t->seq);
		r4_alloc_dest(db->alloc, t->blk[i], true);
	}
	memcpy(t->log + t->n, p->rec, p->nrec * sizeof(*p->rec));
	for (size_t i = 0; i < t->n + t->nrec; i++)
		r4_alloc_hold(db->alloc, t->log[i]);
}

struct play_blk {
	uint64_t blk, wand;
};

static int cmp_play(const void *a, const void *b)
{
	const struct play_blk *x = a, *y = b;

	return x->blk < y->blk ? -1 : x->blk > y->blk;
}

/*
 * Play the k oldest transactions of the window in place (no sync): each
 * block whose newest copy is theirs gets that copy; a block a newer
 * transaction of the window has a copy of is left to it.  Their log blocks,
 * and the freed blocks their copies went to, are freed once the footer
 * naming the newest of them is durable.  Nothing changes on an error
 * before the first write; after it, the caller breaks the handle.
 */
static int play(struct r4_db *db, size_t k)
{
	struct r4_jwin *w = &db->jwin;
	uint8_t buf[R4_MAX_BLOCKSIZE];
	struct play_blk *v;
	size_t n = 0, logs = 0;
	struct batch b;
	int rc;

	assert(k && k <= w->ntx);
	for (size_t t = 0; t < k; t++) {
		n += w->tx[t].n;
		logs += w->tx[t].n + w->tx[t].nrec;
	}
	if ((rc = batch_init(&b, db)) || (rc = rel_room(w, n + logs)))
		return rc;
	if (!(v = r4_malloc((n ? n : 1) * sizeof(*v))))
		return -ENOMEM;
	n = 0;
	for (size_t t = 0; t < k; t++)
		for (size_t i = 0; i < w->tx[t].n; i++) {
			struct r4_jent *e = map_find(w, w->tx[t].blk[i]);

			assert(e && e->seq >= w->tx[t].seq);
			if (e->seq == w->tx[t].seq)	/* the newest copy: this one */
				v[n++] = (struct play_blk){e->blk, e->wand};
		}
	qsort(v, n, sizeof(*v), cmp_play);
	/* a block the tree freed meanwhile (held) is nobody's: not written */
	for (size_t i = 0; i < n && !rc; i++)
		if (!r4_alloc_is_held(db->alloc, v[i].blk) && !(rc = read_fixed(db, v[i].wand, buf)))
			rc = batch_add(&b, v[i].blk, buf, false);
	if (!rc)
		rc = batch_flush(&b);
	if (rc) {
		r4_free(v);
		return rc;
	}
	/* the blocks read from their places again */
	for (size_t i = 0; i < n; i++) {
		map_del(w, map_find(w, v[i].blk));
		r4_alloc_dest(db->alloc, v[i].blk, false);
		if (r4_alloc_is_held(db->alloc, v[i].blk))	/* freed meanwhile */
			w->rel[w->nrel++] = v[i].blk;
	}
	r4_free(v);
	for (size_t t = 0; t < k; t++) {
		struct r4_jtx *x = &w->tx[t];

		memcpy(w->rel + w->nrel, x->log, (x->n + x->nrec) * sizeof(*x->log));
		w->nrel += x->n + x->nrec;
		w->played_tx = x->tx;
		w->played_cnt = x->cnt;
		r4_free(x->blk);
	}
	memmove(w->tx, w->tx + k, (w->ntx - k) * sizeof(*w->tx));
	w->ntx -= k;
	return 0;
}

int r4_jnl_trim(struct r4_db *db)
{
	struct r4_jwin *w = &db->jwin;
	uint64_t held = r4_alloc_held(db->alloc), cap = (r4_alloc_avail(db->alloc) + held) / 2;
	/* (past max_tx, down to 7/8 of it, at least one less: one footer for
	 * an eighth of the window, not one per commit) */
	size_t keep = w->max_tx - R4_MAX(w->max_tx / 8, w->max_tx ? 1u : 0u);
	size_t k = w->ntx > w->max_tx ? w->ntx - keep : 0;
	uint64_t freed = 0;

	for (size_t t = 0; t < k; t++)
		freed += w->tx[t].n + w->tx[t].nrec;
	/* and hold half of what is free on disk at most (a quarter: WA 1.52
	 * where half gives 1.48 at 256 MiB, bench/RESULTS.md): the oldest go
	 * until their log blocks (freed at the next commit) bring it under */
	for (; k < w->ntx && held > cap + freed; k++)
		freed += w->tx[k].n + w->tx[k].nrec;
	return k ? play(db, k) : 0;
}

size_t r4_jnl_held(const struct r4_db *db)
{
	return db->alloc ? r4_alloc_held(db->alloc) : 0;
}

bool r4_jnl_pending(const struct r4_db *db)
{
	return db->jwin.ntx || db->jwin.played_tx;
}

int r4_jnl_settle(struct r4_db *db)
{
	struct r4_jwin *w = &db->jwin;
	int rc;

	if (w->ntx && (rc = play(db, w->ntx)))
		return rc;
	if (!w->played_tx)
		return 0;
	if ((rc = r4_io_sync(db->io)) || (rc = write_footer(db, w->played_tx, &w->played_cnt)))
		return rc;
	release(db);
	return 0;
}

bool r4_jnl_own(const struct r4_db *db, uint64_t last_committed, uint64_t last_flushed)
{
	return r4_jnl_pending(db) && last_committed == db->last_tx &&
	       last_flushed == db->footer_tx;
}

void r4_jnl_fini(struct r4_db *db)
{
	struct r4_jwin *w = &db->jwin;

	for (size_t t = 0; t < w->ntx; t++)
		r4_free(w->tx[t].blk);
	r4_free(w->tx);
	r4_free(w->map);
	r4_free(w->rel);
	r4_free(w->spare);
	memset(w, 0, sizeof(*w));
}

/* ---- replay ---- */

struct jmap {
	uint64_t orig, wand;
	size_t seq;		/* order of appearance: the last copy wins */
};

/* A read-only view of an image with unplayed transactions: reads of an
 * original block come from its newest wandered copy. */
struct overlay_io {
	struct r4_io io;
	struct r4_io *inner;
	bool own;		/* closing the view closes inner */
	uint32_t bs;
	struct jmap *map;	/* sorted by orig, one entry per orig */
	size_t n;
};

static int overlay_read(struct r4_io *io, uint64_t off, void *buf, size_t len)
{
	struct overlay_io *o = (struct overlay_io *)io;
	uint64_t first = off / o->bs, last = (off + len - 1) / o->bs;
	size_t lo = 0, hi = o->n;
	int rc;

	if (!len)
		return 0;
	if ((rc = r4_io_read(o->inner, off, buf, len)))
		return rc;
	while (lo < hi) {	/* first entry with orig >= first */
		size_t mid = (lo + hi) / 2;

		if (o->map[mid].orig < first)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t i = lo; i < o->n && o->map[i].orig <= last; i++) {
		uint64_t bstart = o->map[i].orig * o->bs;
		uint64_t from = R4_MAX(bstart, off), to = R4_MIN(bstart + o->bs, off + len);

		if ((rc = r4_io_read(o->inner, o->map[i].wand * o->bs + (from - bstart),
				     (uint8_t *)buf + (from - off), (size_t)(to - from))))
			return rc;
	}
	return 0;
}

static int overlay_write(struct r4_io *io, uint64_t off, const void *buf, size_t len)
{
	(void)io, (void)off, (void)buf, (void)len;
	return -EROFS;
}

/* A read-write handle's view: reads of a block the window has a copy of
 * come from its newest copy (the block in place is older, or being
 * written); everything else goes to the image. */
struct live_io {
	struct r4_io io;
	struct r4_io *inner;
	const struct r4_jwin *w;
	uint32_t bs;
};

static int live_read(struct r4_io *io, uint64_t off, void *buf, size_t len)
{
	struct live_io *o = (struct live_io *)io;
	int rc;

	if ((rc = r4_io_read(o->inner, off, buf, len)) || !len || !o->w->mapn)
		return rc;
	for (uint64_t b = off / o->bs; b <= (off + len - 1) / o->bs && !rc; b++) {
		const struct r4_jent *e = map_find(o->w, b);
		uint64_t bstart = b * o->bs, from, to;

		if (!e)
			continue;
		from = R4_MAX(bstart, off);
		to = R4_MIN(bstart + o->bs, off + len);
		rc = r4_io_read(o->inner, e->wand * o->bs + (from - bstart),
				(uint8_t *)buf + (from - off), (size_t)(to - from));
	}
	return rc;
}

static int live_write(struct r4_io *io, uint64_t off, const void *buf, size_t len)
{
	return r4_io_write(((struct live_io *)io)->inner, off, buf, len);
}

static int live_writev(struct r4_io *io, uint64_t off, const struct iovec *v, int n)
{
	return r4_io_writev(((struct live_io *)io)->inner, off, v, n);
}

static int live_sync(struct r4_io *io)
{
	return r4_io_sync(((struct live_io *)io)->inner);
}

static int live_size(struct r4_io *io, uint64_t *bytes)
{
	return r4_io_size(((struct live_io *)io)->inner, bytes);
}

static int live_truncate(struct r4_io *io, uint64_t bytes)
{
	return r4_io_truncate(((struct live_io *)io)->inner, bytes);
}

static void live_close(struct r4_io *io)
{
	r4_io_close(((struct live_io *)io)->inner);
	r4_free(io);
}

static const struct r4_io_ops live_ops = {
	.read = live_read,
	.write = live_write,
	.sync = live_sync,
	.size = live_size,
	.truncate = live_truncate,
	.close = live_close,
};

static const struct r4_io_ops live_ops_v = {	/* (over a backend with writev) */
	.read = live_read,
	.write = live_write,
	.writev = live_writev,
	.sync = live_sync,
	.size = live_size,
	.truncate = live_truncate,
	.close = live_close,
};

/* db->io becomes the live view over it (closing the view closes it). */
static int live_wrap(struct r4_db *db)
{
	struct live_io *o = r4_calloc(1, sizeof(*o));

	if (!o)
		return -ENOMEM;
	o->io.ops = db->io->ops->writev ? &live_ops_v : &live_ops;
	o->inner = db->io;
	o->w = &db->jwin;
	o->bs = db->bs;
	db->io = &o->io;
	return 0;
}

static int overlay_sync(struct r4_io *io)
{
	(void)io;
	return 0;
}

static int overlay_size(struct r4_io *io, uint64_t *bytes)
{
	return r4_io_size(((struct overlay_io *)io)->inner, bytes);
}

static int overlay_truncate(struct r4_io *io, uint64_t bytes)
{
	(void)io, (void)bytes;
	return -EROFS;
}

static void overlay_close(struct r4_io *io)
{
	struct overlay_io *o = (struct overlay_io *)io;

	if (o->own)
		r4_io_close(o->inner);
	r4_free(o->map);
	r4_free(o);
}

static const struct r4_io_ops overlay_ops = {
	.read = overlay_read,
	.write = overlay_write,
	.sync = overlay_sync,
	.size = overlay_size,
	.truncate = overlay_truncate,
	.close = overlay_close,
};

static int cmp_map(const void *a, const void *b)
{
	const struct jmap *x = a, *y = b;

	if (x->orig != y->orig)
		return x->orig < y->orig ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static int read_img(const struct r4_jnl_img *im, uint64_t blk, uint8_t *buf)
{
	return r4_io_read(im->io, blk * im->bs, buf, im->bs);
}

struct r4_jnl_img r4_jnl_img_of(struct r4_db *db)
{
	return (struct r4_jnl_img){db->io, &db->lg, db->bs, db->block_count};
}

int r4_jnl_ends(const struct r4_jnl_img *im, struct r4_jh *jh, struct r4_jf *jf)
{
	uint8_t buf[R4_MAX_BLOCKSIZE];
	int rc;

	if ((rc = read_img(im, R4_JHEADER_BLOCK(im->bs), buf)) ||
	    (rc = r4_jh_decode(im->lg, buf, im->bs, im->blocks, jh)) ||
	    (rc = read_img(im, R4_JFOOTER_BLOCK(im->bs), buf)))
		return rc;
	return r4_jf_decode(im->lg, buf, im->bs, im->blocks, jf);
}

/* The walk stops at a broken journal (the log has said why): v hears
 * where when it asks; rc is what the walk returns. */
static int broken(const struct r4_jnl_visit *v, struct r4_jnl_break b)
{
	if (v->broken)
		v->broken(v->ctx, &b);
	return b.rc;
}

/* The wander records of the transaction whose head is tx, in ring order. */
static int walk_records(const struct r4_jnl_img *im, uint64_t tx, const struct r4_th *th,
			const struct r4_jnl_visit *v)
{
	uint8_t rec[R4_MAX_BLOCKSIZE];
	uint64_t at = th->th_next_block;
	uint32_t serial = 0;
	int rc;

	while (at != tx) {
		struct r4_wr wr;

		if (++serial >= th->th_total)
			return broken(v, (struct r4_jnl_break){
				R4_JNL_LONG, R4_CORRUPT(im->lg, tx, "journal: transaction has more than "
							"%u wander records", th->th_total - 1),
				tx, tx, serial, th->th_total, NULL});
		if ((rc = read_img(im, at, rec)) ||
		    (rc = r4_wr_decode(im->lg, at, rec, im->bs, im->blocks, &wr)))
			return broken(v, (struct r4_jnl_break){R4_JNL_RECORD, rc, at, tx, serial,
							       th->th_total, NULL});
		if (wr.wr_serial != serial || wr.wr_total != th->th_total)
			return broken(v, (struct r4_jnl_break){
				R4_JNL_SERIAL, R4_CORRUPT(im->lg, at, "journal: wander record %u of %u "
							  "where the tx head at block %llu expects "
							  "%u of %u", wr.wr_serial, wr.wr_total,
							  (unsigned long long)tx, serial,
							  th->th_total),
				at, tx, serial, th->th_total, &wr});
		if (v->rec && (rc = v->rec(v->ctx, at, &wr, rec)))
			return rc;
		at = wr.wr_next_block;
	}
	if (serial + 1 != th->th_total)
		return broken(v, (struct r4_jnl_break){
			R4_JNL_SHORT, R4_CORRUPT(im->lg, tx, "journal: transaction has %u wander "
						 "records, its tx head says %u", serial,
						 th->th_total - 1),
			tx, tx, serial + 1, th->th_total, NULL});
	return 0;
}

int r4_jnl_walk(const struct r4_jnl_img *im, const struct r4_jh *jh, const struct r4_jf *jf,
		const struct r4_jnl_visit *v)
{
	uint8_t buf[R4_MAX_BLOCKSIZE];
	uint64_t *chain = NULL, tx, mark = 0;
	size_t n = 0, cap = 0;
	struct r4_th th;
	int rc = 0;

	for (tx = jh->jh_last_committed; tx != jf->jf_last_flushed; tx = th.th_prev_tx) {
		if (!tx) {
			rc = broken(v, (struct r4_jnl_break){
				R4_JNL_CHAIN, R4_CORRUPT(im->lg, R4_JHEADER_BLOCK(im->bs),
							 "journal: the chain of tx heads from the "
							 "header (block %llu) never reaches the "
							 "footer's (block %llu)",
							 (unsigned long long)jh->jh_last_committed,
							 (unsigned long long)jf->jf_last_flushed),
				R4_JHEADER_BLOCK(im->bs), 0, 0, 0, NULL});
			goto out;
		}
		if ((rc = r4_grow(&chain, &cap, n + 1, sizeof(*chain), 8)))
			goto out;
		/* a loop comes back to the head marked at the last power of 2
		 * (Brent): found within twice its length, not the volume's */
		if ((n && tx == mark) || n >= im->blocks) {
			rc = broken(v, (struct r4_jnl_break){
				R4_JNL_CHAIN, R4_CORRUPT(im->lg, tx, "journal: the chain of tx heads "
							 "loops"),
				R4_JHEADER_BLOCK(im->bs), 0, 0, 0, NULL});
			goto out;
		}
		if ((rc = read_img(im, tx, buf)) ||
		    (rc = r4_th_decode(im->lg, tx, buf, im->bs, im->blocks, &th))) {
			rc = broken(v, (struct r4_jnl_break){R4_JNL_HEAD, rc, tx, tx, 0, 0, NULL});
			goto out;
		}
		if (!(n & (n - 1)))
			mark = tx;
		chain[n++] = tx;
	}
	for (size_t i = n; i-- > 0 && !rc;) {	/* oldest first */
		if ((rc = read_img(im, chain[i], buf)) ||
		    (rc = r4_th_decode(im->lg, chain[i], buf, im->bs, im->blocks, &th)))
			break;
		if (v->tx && (rc = v->tx(v->ctx, chain[i], &th)))
			break;
		if (!(rc = walk_records(im, chain[i], &th, v)) && v->done)
			rc = v->done(v->ctx, chain[i], &th);
	}
out:
	r4_free(chain);
	return rc;
}

/* The copies of unplayed transactions, for a read-only view. */
struct collect {
	struct jmap *map;	/* every entry, oldest transaction first */
	size_t n, cap;
};

static int collect_rec(struct collect *c, const struct r4_wr *wr, const uint8_t *rec)
{
	for (uint32_t i = 0; i < wr->wr_nr_entries; i++) {
		uint64_t orig, wand;

		r4_wr_entry(rec, i, &orig, &wand);
		if (r4_grow(&c->map, &c->cap, c->n + 1, sizeof(*c->map), 256))
			return -ENOMEM;
		c->map[c->n] = (struct jmap){orig, wand, c->n};
		c->n++;
	}
	return 0;
}

/* Keep the newest copy of each block (entries come in replay order, seq
 * ascending) in a view over inner (which own hands it). */
static int make_overlay(struct collect *c, struct r4_io *inner, bool own, uint32_t bs,
			struct r4_io **out)
{
	struct overlay_io *o;
	size_t k = 0;

	if (!(o = r4_calloc(1, sizeof(*o))))
		return -ENOMEM;
	if (c->n)
		qsort(c->map, c->n, sizeof(*c->map), cmp_map);
	for (size_t i = 0; i < c->n; i++) {
		if (k && c->map[k - 1].orig == c->map[i].orig)
			k--;	/* a newer copy of the same block */
		c->map[k++] = c->map[i];
	}
	o->io.ops = &overlay_ops;
	o->inner = inner;
	o->own = own;
	o->bs = bs;
	o->map = c->map;
	o->n = k;
	c->map = NULL;
	*out = &o->io;
	return 0;
}

struct replay {
	struct r4_db *db;
	struct collect c;	/* read-only */
	unsigned replayed;
};

/* Play (rw) or collect (ro) the entries of one wander record. */
static int replay_rec(void *ctx, uint64_t at, const struct r4_wr *wr, const uint8_t *rec)
{
	struct replay *r = ctx;
	struct r4_db *db = r->db;
	uint8_t blk[R4_MAX_BLOCKSIZE];
	int rc;

	(void)at;
	if (!db->rw)
		return collect_rec(&r->c, wr, rec);
	for (uint32_t i = 0; i < wr->wr_nr_entries; i++) {
		uint64_t orig, wand;

		r4_wr_entry(rec, i, &orig, &wand);
		if ((rc = read_fixed(db, wand, blk)) || (rc = write_fixed(db, orig, blk)))
			return rc;
	}
	return 0;
}

/* A transaction's records played: its footer (rw), its counters. */
static int replay_done(void *ctx, uint64_t tx, const struct r4_th *th)
{
	struct replay *r = ctx;
	struct r4_db *db = r->db;
	int rc;

	db->jcnt = (struct r4_jcounters){th->th_free_blocks, th->th_nr_files, th->th_next_oid};
	db->have_jcnt = true;
	r->replayed++;
	if (!db->rw)
		return 0;
	if ((rc = r4_io_sync(db->io)))
		return rc;
	return write_footer(db, tx, &db->jcnt);
}

int r4_jnl_recover(struct r4_db *db, unsigned *replayed)
{
	struct replay r = {.db = db};
	struct r4_jnl_visit v = {.rec = replay_rec, .done = replay_done, .ctx = &r};
	struct r4_jnl_img im = r4_jnl_img_of(db);
	struct r4_jh jh;
	struct r4_jf jf;
	int rc;

	*replayed = 0;
	if ((rc = r4_jnl_ends(&im, &jh, &jf)))
		return rc;
	db->last_tx = jh.jh_last_committed;
	db->footer_tx = jf.jf_last_flushed;
	if (jf.jf_last_flushed) {
		db->jcnt = (struct r4_jcounters){jf.jf_free_blocks, jf.jf_nr_files, jf.jf_next_oid};
		db->have_jcnt = true;
	}
	rc = r4_jnl_walk(&im, &jh, &jf, &v);
	*replayed = r.replayed;
	/* the view takes db->io: closing the db closes both */
	if (!rc && r.replayed && !db->rw)
		rc = make_overlay(&r.c, db->io, true, db->bs, &db->io);
	if (!rc && db->rw) {
		const char *env = getenv("R4_JNL_WINDOW");

		db->jwin.max_tx = env ? (unsigned)strtoul(env, NULL, 10) : R4_JNL_WINDOW_DEFAULT;
		rc = live_wrap(db);
	}
	r4_free(r.c.map);
	return rc;
}

struct view {
	struct collect c;
	unsigned ntx;
};

static int view_rec(void *ctx, uint64_t at, const struct r4_wr *wr, const uint8_t *rec)
{
	(void)at;
	return collect_rec(&((struct view *)ctx)->c, wr, rec);
}

static int view_done(void *ctx, uint64_t tx, const struct r4_th *th)
{
	(void)tx, (void)th;
	((struct view *)ctx)->ntx++;
	return 0;
}

int r4_jnl_view(const struct r4_jnl_img *im, struct r4_io **out, unsigned *ntx)
{
	struct view w = {.ntx = 0};
	struct r4_jnl_visit v = {.rec = view_rec, .done = view_done, .ctx = &w};
	struct r4_jh jh;
	struct r4_jf jf;
	int rc;

	*out = NULL;
	*ntx = 0;
	if (!(rc = r4_jnl_ends(im, &jh, &jf)) && !(rc = r4_jnl_walk(im, &jh, &jf, &v)) && w.ntx)
		rc = make_overlay(&w.c, im->io, false, im->bs, out);
	if (!rc)
		*ntx = w.ntx;
	r4_free(w.c.map);
	return rc;
}
