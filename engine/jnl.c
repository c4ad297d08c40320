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
	uint8_t *buf;		/* BATCH_BLOCKS blocks */
};

static int batch_flush(struct batch *b)
{
	int rc = 0;

	if (b->n)
		rc = r4_io_write(b->db->io, b->start * b->db->bs, b->buf, b->n * b->db->bs);
	b->n = 0;
	return rc;
}

static int batch_add(struct batch *b, uint64_t blk, const uint8_t *data)
{
	int rc;

	if (b->n && (blk != b->start + b->n || b->n == BATCH_BLOCKS) && (rc = batch_flush(b)))
		return rc;
	if (!b->n)
		b->start = blk;
	memcpy(b->buf + b->n * b->db->bs, data, b->db->bs);
	b->n++;
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
		rc = batch_add(b, wandered ? s->v[i].wand : s->v[i].blk, s->v[i].data);
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

/* ---- commit ---- */

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
	if ((rc = take(db, n, wand)))
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
	rc = batch_add(b, p->rec[0], head);
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
		rc = batch_add(b, p->rec[r], head);
	}
	return rc ? rc : batch_flush(b);
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

static void unsettled_clear(struct r4_db *db)
{
	r4_free(db->unsettled.blk);
	memset(&db->unsettled, 0, sizeof(db->unsettled));
}

int r4_jnl_write(struct r4_db *db, struct r4_commit_plan *p)
{
	uint8_t buf[R4_MAX_BLOCKSIZE];
	struct r4_jh jh = {.jh_last_committed = p->tx};
	struct r4_unsettled *u = &db->unsettled;
	struct batch b;
	int rc;

	/* a new head, after every head the footer or header names; the
	 * unsettled transaction is the newest the header names */
	assert(p->nrec >= 2 && p->tx == p->rec[0]);
	R4_INVARIANT(p->tx != db->footer_tx && p->tx != db->last_tx);
	assert(!u->tx || u->tx == db->last_tx);
	/* everything this needs is taken before the first write: a failure
	 * before the commit point leaves the image as it was */
	if ((rc = batch_init(&b, db)))
		return rc;
	if (!(rc = write_set(&b, &p->reloc, false)) && !(rc = write_set(&b, &p->over, true)))
		rc = write_records(db, &b, p);
	if (rc || (rc = r4_io_sync(db->io)))
		return rc;
	/* the sync made the unsettled transaction's in-place writes durable:
	 * its footer may go with this header (either order is safe) */
	if (u->tx) {
		footer_block(db, u->tx, &u->cnt, buf);
		if ((rc = write_fixed(db, R4_JFOOTER_BLOCK(db->bs), buf)))
			return rc;
	}
	memset(buf, 0, db->bs);
	r4_jh_encode(&jh, buf);
	if ((rc = write_fixed(db, R4_JHEADER_BLOCK(db->bs), buf)) || (rc = r4_io_sync(db->io)))
		return rc;
	db->last_tx = p->tx;
	if (u->tx) {		/* its log blocks were handed over to this one */
		db->footer_tx = u->tx;
		unsettled_clear(db);
	}
	return 0;
}

int r4_jnl_play(struct r4_db *db, struct r4_commit_plan *p)
{
	struct r4_unsettled *u = &db->unsettled;
	size_t n = p->over.n + p->nrec;

	if (!(u->blk = r4_malloc(n * sizeof(*u->blk))))
		return -ENOMEM;
	for (size_t i = 0; i < p->over.n; i++)
		u->blk[i] = p->over.v[i].wand;
	memcpy(u->blk + p->over.n, p->rec, p->nrec * sizeof(*p->rec));
	u->n = n;
	u->tx = p->tx;
	u->cnt = p->cnt;
	return write_set_alone(db, &p->over, false);
}

void r4_jnl_hand_over(struct r4_db *db)
{
	uint64_t before = r4_alloc_free_count(db->alloc);

	assert(!db->unsettled.handed);	/* each log block is freed once */
	for (size_t i = 0; i < db->unsettled.n; i++)
		r4_alloc_free(db->alloc, db->unsettled.blk[i], 1);
	assert(r4_alloc_free_count(db->alloc) == before + db->unsettled.n);
	(void)before;
	db->unsettled.handed = db->unsettled.n > 0;
}

size_t r4_jnl_held(const struct r4_db *db)
{
	return db->unsettled.handed ? 0 : db->unsettled.n;
}

int r4_jnl_settle(struct r4_db *db)
{
	struct r4_unsettled *u = &db->unsettled;
	int rc;

	if (!u->tx)
		return 0;
	assert(u->tx == db->last_tx);	/* the footer follows the header */
	if ((rc = r4_io_sync(db->io)) || (rc = write_footer(db, u->tx, &u->cnt)))
		return rc;
	r4_jnl_hand_over(db);
	r4_alloc_apply(db->alloc);
	unsettled_clear(db);
	return 0;
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

static int read_fixed(struct r4_db *db, uint64_t blk, uint8_t *buf)
{
	return r4_io_read(db->io, blk * db->bs, buf, db->bs);
}

int r4_jnl_ends(struct r4_db *db, struct r4_jh *jh, struct r4_jf *jf)
{
	uint8_t buf[R4_MAX_BLOCKSIZE];
	int rc;

	if ((rc = read_fixed(db, R4_JHEADER_BLOCK(db->bs), buf)) ||
	    (rc = r4_jh_decode(&db->lg, buf, db->bs, db->block_count, jh)) ||
	    (rc = read_fixed(db, R4_JFOOTER_BLOCK(db->bs), buf)))
		return rc;
	return r4_jf_decode(&db->lg, buf, db->bs, db->block_count, jf);
}

/* The wander records of the transaction whose head is tx, in ring order. */
static int walk_records(struct r4_db *db, uint64_t tx, const struct r4_th *th,
			const struct r4_jnl_visit *v)
{
	uint8_t rec[R4_MAX_BLOCKSIZE];
	uint64_t at = th->th_next_block;
	uint32_t serial = 0;
	int rc;

	while (at != tx) {
		struct r4_wr wr;

		if (++serial >= th->th_total)
			return R4_CORRUPT(&db->lg, tx, "journal: transaction has more than %u "
					  "wander records", th->th_total - 1);
		if ((rc = read_fixed(db, at, rec)) ||
		    (rc = r4_wr_decode(&db->lg, at, rec, db->bs, db->block_count, &wr)))
			return rc;
		if (wr.wr_serial != serial || wr.wr_total != th->th_total)
			return R4_CORRUPT(&db->lg, at, "journal: wander record %u of %u where the tx "
					  "head at block %llu expects %u of %u", wr.wr_serial,
					  wr.wr_total, (unsigned long long)tx, serial, th->th_total);
		if ((rc = v->rec(v->ctx, at, &wr, rec)))
			return rc;
		at = wr.wr_next_block;
	}
	if (serial + 1 != th->th_total)
		return R4_CORRUPT(&db->lg, tx, "journal: transaction has %u wander records, its "
				  "tx head says %u", serial, th->th_total - 1);
	return 0;
}

int r4_jnl_walk(struct r4_db *db, const struct r4_jh *jh, const struct r4_jf *jf,
		const struct r4_jnl_visit *v)
{
	uint8_t buf[R4_MAX_BLOCKSIZE];
	uint64_t *chain = NULL, tx;
	size_t n = 0, cap = 0;
	struct r4_th th;
	int rc = 0;

	for (tx = jh->jh_last_committed; tx != jf->jf_last_flushed; tx = th.th_prev_tx) {
		if (!tx) {
			rc = R4_CORRUPT(&db->lg, R4_JHEADER_BLOCK(db->bs),
					"journal: the chain of tx heads from the header (block "
					"%llu) never reaches the footer's (block %llu)",
					(unsigned long long)jh->jh_last_committed,
					(unsigned long long)jf->jf_last_flushed);
			goto out;
		}
		if ((rc = r4_grow(&chain, &cap, n + 1, sizeof(*chain), 8)))
			goto out;
		if (n >= db->block_count) {
			rc = R4_CORRUPT(&db->lg, tx, "journal: the chain of tx heads loops");
			goto out;
		}
		if ((rc = read_fixed(db, tx, buf)) ||
		    (rc = r4_th_decode(&db->lg, tx, buf, db->bs, db->block_count, &th)))
			goto out;
		chain[n++] = tx;
	}
	for (size_t i = n; i-- > 0 && !rc;) {	/* oldest first */
		if ((rc = read_fixed(db, chain[i], buf)) ||
		    (rc = r4_th_decode(&db->lg, chain[i], buf, db->bs, db->block_count, &th)))
			break;
		if (v->tx && (rc = v->tx(v->ctx, chain[i], &th)))
			break;
		if (!(rc = walk_records(db, chain[i], &th, v)) && v->done)
			rc = v->done(v->ctx, chain[i], &th);
	}
out:
	r4_free(chain);
	return rc;
}

struct replay {
	struct r4_db *db;
	struct jmap *map;	/* read-only: every entry, oldest transaction first */
	size_t n, cap;
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
	for (uint32_t i = 0; i < wr->wr_nr_entries; i++) {
		uint64_t orig, wand;

		r4_wr_entry(rec, i, &orig, &wand);
		if (db->rw) {
			if ((rc = read_fixed(db, wand, blk)) || (rc = write_fixed(db, orig, blk)))
				return rc;
			continue;
		}
		if (r4_grow(&r->map, &r->cap, r->n + 1, sizeof(*r->map), 256))
			return -ENOMEM;
		r->map[r->n] = (struct jmap){orig, wand, r->n};
		r->n++;
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

/* Keep the newest copy of each block (entries come in replay order, seq
 * ascending) and put the view over db->io. */
static int install_overlay(struct r4_db *db, struct replay *r)
{
	struct overlay_io *o;
	size_t k = 0;

	if (!(o = r4_calloc(1, sizeof(*o))))
		return -ENOMEM;
	if (r->n)
		qsort(r->map, r->n, sizeof(*r->map), cmp_map);
	for (size_t i = 0; i < r->n; i++) {
		if (k && r->map[k - 1].orig == r->map[i].orig)
			k--;	/* a newer copy of the same block */
		r->map[k++] = r->map[i];
	}
	o->io.ops = &overlay_ops;
	o->inner = db->io;
	o->bs = db->bs;
	o->map = r->map;
	o->n = k;
	r->map = NULL;
	db->io = &o->io;
	return 0;
}

int r4_jnl_recover(struct r4_db *db, unsigned *replayed)
{
	struct replay r = {.db = db};
	struct r4_jnl_visit v = {.rec = replay_rec, .done = replay_done, .ctx = &r};
	struct r4_jh jh;
	struct r4_jf jf;
	int rc;

	*replayed = 0;
	if ((rc = r4_jnl_ends(db, &jh, &jf)))
		return rc;
	db->last_tx = jh.jh_last_committed;
	db->footer_tx = jf.jf_last_flushed;
	if (jf.jf_last_flushed) {
		db->jcnt = (struct r4_jcounters){jf.jf_free_blocks, jf.jf_nr_files, jf.jf_next_oid};
		db->have_jcnt = true;
	}
	rc = r4_jnl_walk(db, &jh, &jf, &v);
	*replayed = r.replayed;
	if (!rc && r.replayed && !db->rw)
		rc = install_overlay(db, &r);
	r4_free(r.map);
	return rc;
}
