/*
 * txn.c - transactions: the state machine, the bracket of every fs call,
 * space reservation, and planning a commit for the journal (jnl.c).
 *
 * The states of a handle's transaction (the asserted txn_state_ok):
 *
 *                r4_begin                  r4_txn_fail
 *      none  ---------------->  open  ------------------->  poisoned
 *       ^ ^                     |  |                            |
 *       | '---- r4_commit ------'  '------- r4_abort ------.    |
 *       |       (or r4_abort)                              |    |
 *       '--------------------------------------------------+----'
 *                                                  r4_abort
 *
 *   none      in_txn false: no dirty node, no page, no operation running;
 *   open      in_txn, txn_err 0: operations (r4_txn_op_begin .. _end)
 *             change nodes (r4_node_dirty asserts it);
 *   poisoned  in_txn, txn_err < 0: nothing changes any more, commit
 *             returns the error, only r4_abort leaves it.
 * Commit never runs inside an operation.  A commit that fails while
 * planning poisons; one that fails writing poisons and breaks the handle
 * (db->broken: no more writes until reopened).
 *
 * Commit: the file layer places new data (hooks->place), then the tree
 * squeezes, relocates and gives new nodes blocks (parents first); the
 * blocks to write go into the relocate or the overwrite set and through
 * the journal.  Abort: everything dirty is dropped; the image was never
 * touched.  This file is in the lower half: what the file layer keeps
 * beside the tree it reaches only through db->hooks (txn.h).
 */
#include "txn.h"

#include <assert.h>

#include "alloc.h"
#include "db.h"
#include "io.h"
#include "node.h"
#include "tree.h"

/* ---- states ---- */

static bool txn_state_ok(const struct r4_db *db)
{
	if (!db->in_txn)	/* none */
		return !db->txn_err && !db->cache.ndirty && !db->npages && !db->op.depth;
	return db->txn_err <= 0;	/* open, or poisoned with a negative errno */
}

bool r4_in_txn(const r4_db *db)
{
	return db->in_txn;
}

int r4_txn_error(const r4_db *db)
{
	return db->in_txn ? db->txn_err : 0;
}

int r4_txn_fail(struct r4_db *db, int rc)
{
	assert(db->in_txn && rc < 0);
	if (!db->txn_err)	/* the first failure is the one reported */
		db->txn_err = rc;
	assert(txn_state_ok(db));
	return rc;
}

int r4_begin(r4_db *db)
{
	if (!db->rw)
		return -EROFS;
	if (db->in_txn)
		return -EBUSY;
	assert(txn_state_ok(db));
	if (db->broken)
		return db->damaged ? -EROFS : -EIO;
	/* nearly full: the blocks the journal's window holds are wanted back
	 * now (elsewhere a grab that finds them held plays it: r4_txn_room) */
	if (r4_jnl_pending(db) && r4_alloc_avail(db->alloc) < 1024) {
		int rc = r4_jnl_settle(db);

		if (rc) {
			db->broken = true;
			return rc;
		}
	}
	db->in_txn = true;
	db->txn_seq++;
	db->bfree_planned = 0;
	db->saved_root = db->root;
	db->saved_height = db->height;
	db->saved_file_count = db->file_count;
	assert(txn_state_ok(db));
	return 0;
}

/* ---- space ---- */

uint64_t r4_txn_insert_cost(const struct r4_db *db)
{
	return 4 * ((uint64_t)db->height + 1) + 2;
}

uint64_t r4_txn_tree_cost(const struct r4_db *db, uint64_t items, uint64_t bytes)
{
	uint64_t half = (db->bs - r4_node_hdr_size(db->node_pid)) / 2;
	uint64_t nodes = (bytes + items * R4_IH_SIZE + half - 1) / half;

	/* new nodes at least half full, a pointer each in the level above */
	return items ? r4_txn_insert_cost(db) + nodes + nodes / 32 + 1 : 0;
}

uint64_t r4_txn_remove_cost(const struct r4_db *db, uint64_t items)
{
	return items ? 2 * items + 2 * (uint64_t)db->height : 0;
}

/* What placing `fake` new data blocks, held by `units` extent units, adds
 * to the extent items: a unit a piece placed, and r4_alloc_alloc_run
 * places them in no more pieces than blocks, nor than the free space's
 * runs and two a unit (alloc.h).  As r4_txn_tree_cost, generously: a
 * block for 64 units, a path split for each item grown. */
static uint64_t fake_growth(const struct r4_db *db, uint64_t fake, uint64_t units)
{
	uint64_t pieces = R4_MIN(fake, r4_alloc_runs(db->alloc) + 2 * units);

	return fake ? pieces / 64 + 1 + 2 * r4_txn_insert_cost(db) : 0;
}

uint64_t r4_txn_fake_cost(const struct r4_db *db, uint64_t n, uint64_t units)
{
	return n + fake_growth(db, db->fake_data + n, db->fake_units + units) -
	       fake_growth(db, db->fake_data, db->fake_units);
}

uint64_t r4_txn_need(const struct r4_db *db)
{
	uint64_t bitmaps = r4_format_bitmap_count(db->bs, db->block_count);
	/* one block each: a dirty node's place (new or moved) or wandered copy;
	 * a real block's page relocated or copied; a new data block */
	uint64_t blocks = db->cache.ndirty + db->npages_real + db->fake_data;
	/* the wandered copies of bitmaps and super block, the records, the tx head */
	uint64_t over = db->cache.ndirty + db->npages_real + bitmaps + 1;
	uint64_t cap = r4_wr_capacity(db->bs);

	blocks += bitmaps + 1 + (over + cap - 1) / cap + 1;
	return blocks + fake_growth(db, db->fake_data, db->fake_units);
}

uint64_t r4_txn_reserve(const struct r4_db *db)
{
	return R4_MIN(R4_MAX(db->block_count / 128, 256), 32768);
}

uint64_t r4_txn_slack(const struct r4_db *db)
{
	uint64_t avail = r4_alloc_avail(db->alloc), need = r4_txn_need(db);

	return avail > need ? avail - need : 0;
}

static int room(const struct r4_db *db, uint64_t n, bool removal)
{
	assert(db->in_txn && db->op.depth);
	return db->op.need0 + db->op.grabbed + n + (removal ? 0 : r4_txn_reserve(db)) >
			       r4_alloc_avail(db->alloc)
		       ? -ENOSPC
		       : 0;
}

int r4_txn_room(struct r4_db *db, uint64_t n, bool removal)
{
	int rc = room(db, n, removal);

	/* what the journal's window holds comes back when it is played */
	if (rc == -ENOSPC && r4_jnl_held(db) && !db->broken) {
		if ((rc = r4_jnl_settle(db))) {
			db->broken = true;
			return rc;
		}
		rc = room(db, n, removal);
	}
	return rc;
}

int r4_txn_grab(struct r4_db *db, uint64_t n, bool removal)
{
	int rc;

	assert(db->in_txn && db->op.depth);
	/* damage a lookup of the operation's checks saw poisoned it (r4_db_seen),
	 * also when the caller took the failure for "none" (fuzz_image) */
	if (db->txn_err)
		return db->txn_err;
	if (db->op.depth > 1)
		return 0;	/* the outermost operation grabbed for it */
	assert(db->gen == db->op.gen);
	if (!(rc = r4_txn_room(db, n, removal)))
		db->op.grabbed += n;
	return rc;
}

uint64_t r4_txn_bfree(const struct r4_db *db)
{
	/* the journal's held blocks are free on disk, used until played */
	uint64_t f = r4_alloc_free_count(db->alloc) + r4_jnl_held(db);
	/* new data and new nodes count at once, before commit gives them blocks */
	uint64_t fresh = db->fake_data;

	if (db->in_txn && db->txn_err && db->bfree_planned)	/* a commit failed half-way */
		return db->bfree_planned;
	for (r4_node *n = db->cache.dirty.next; n != &db->cache.dirty; n = n->next)
		fresh += r4_blk_is_fake(n->blk);
	return f > fresh ? f - fresh : 0;
}

/* ---- operations ---- */

int r4_txn_op_begin(struct r4_db *db, struct r4_txn_op *op)
{
	int rc;

	if (!db->rw)
		return -EROFS;
	if (db->txn_err)
		return db->txn_err;
	op->autocommit = !db->in_txn;
	if (op->autocommit && (rc = r4_begin(db)))
		return rc;
	/* the memory bound: a long transaction's dirty nodes and pages go out
	 * early (between operations: no path is held) */
	if (!db->op.depth && ((db->cache.ndirty > db->cache.dirty_bound &&
			       (rc = r4_tree_flush_early(db))) || (rc = db->hooks->spill(db))))
		return r4_txn_fail(db, rc);
	op->gen = db->gen;
	op->held = NULL;
	if (!db->op.depth++) {
		db->op.need0 = r4_txn_need(db);
		db->op.grabbed = 0;
		db->op.gen = db->gen;
	}
	assert(db->in_txn && !db->txn_err);	/* a poisoned one takes no operation */
	return 0;
}

int r4_txn_op_end(struct r4_db *db, struct r4_txn_op *op, int rc)
{
	assert(db->op.depth);
	db->op.depth--;
	/* an aborted transaction needs nothing; a living one what was grabbed */
	assert(db->op.depth || !db->in_txn || db->txn_err ||
	       r4_txn_need(db) <= db->op.need0 + db->op.grabbed);
	r4_db_seen(db, rc);
	/* a change done: lost if this transaction is (r4_abort, r4_file_error) */
	if (!rc && op->held && db->gen != op->gen)
		op->held->changed = db->txn_seq;
	if (rc && db->gen != op->gen) {
		if (op->autocommit) {
			r4_abort(db);
			return rc;
		}
		return r4_txn_fail(db, rc);
	}
	if (op->autocommit) {
		if (!rc)
			rc = r4_commit(db);
		if (rc && db->in_txn)	/* a failed commit: nothing of it stays */
			r4_abort(db);
	}
	return rc;
}

/* ---- abort ---- */

/* A clean node on a block the committed state does not use: written
 * early by the transaction being aborted. */
static bool written_early(void *ctx, uint64_t blk)
{
	struct r4_db *db = ctx;

	return !r4_blk_is_fake(blk) && !r4_alloc_is_committed(db->alloc, blk);
}

void r4_abort(r4_db *db)
{
	if (!db->in_txn)
		return;
	assert(txn_state_ok(db));
	r4_cache_discard_dirty(db);
	r4_cache_drop_if(db, written_early, db);	/* before the allocator forgets */
	db->hooks->aborted(db);
	r4_alloc_abort(db->alloc);
	db->root = db->saved_root;
	db->height = db->saved_height;
	db->file_count = db->saved_file_count;
	db->in_txn = false;
	db->txn_err = 0;
	assert(txn_state_ok(db));
}

/* ---- commit ---- */

/* A block the commit writes: straight to its place when the committed
 * state does not use it, else through the journal. */
static int add_block(struct r4_db *db, struct r4_commit_plan *p, uint64_t blk, const uint8_t *data,
		     bool copy)
{
	bool over = r4_alloc_is_committed(db->alloc, blk);

	return r4_wset_add(over ? &p->over : &p->reloc, blk, data, copy);
}

static int add_page(void *ctx, uint64_t blk, const uint8_t *data)
{
	struct r4_db *db = ((void **)ctx)[0];

	return add_block(db, ((void **)ctx)[1], blk, data, false);
}

static int add_bitmap(void *ctx, uint64_t blk, const uint8_t *data)
{
	struct r4_db *db = ((void **)ctx)[0];

	return add_block(db, ((void **)ctx)[1], blk, data, true);
}

/* Everything a commit writes, in memory; blocks for new nodes, wandered
 * copies and records allocated.  Nothing is written yet. */
static int plan_commit(struct r4_db *db, struct r4_commit_plan *p)
{
	uint8_t buf[R4_MAX_BLOCKSIZE];
	void *ctx[2] = {db, p};
	struct r4_fsb sb = db->sb;
	int rc;

	if ((rc = db->hooks->place(db)) || (rc = r4_tree_squeeze(db)) ||
	    (rc = r4_tree_relocate(db)) || (rc = r4_tree_place(db)))
		return rc;
	for (r4_node *n = db->cache.dirty.next; n != &db->cache.dirty; n = n->next) {
		r4_node_seal(n->data, db->bs);
		if ((rc = add_block(db, p, n->blk, n->data, false)))
			return rc;
	}
	if ((rc = db->hooks->each_page(db, add_page, ctx)) ||
	    (rc = r4_alloc_encode(db->alloc, add_bitmap, ctx)))
		return rc;
	/* free on disk: the journal's held blocks too (bitmaps leave them free) */
	p->cnt.free_blocks = r4_alloc_free_count(db->alloc) + r4_jnl_held(db);
	p->cnt.nr_files = db->file_count;
	p->cnt.next_oid = db->next_oid;
	sb.sb_root_block = db->root;
	sb.sb_tree_height = (uint16_t)db->height;
	sb.sb_free_blocks = p->cnt.free_blocks;
	sb.sb_oid = p->cnt.next_oid;
	sb.sb_file_count = p->cnt.nr_files;
	/*
	 * The super block goes through the journal when one of these changed
	 * (a commit that only rewrites nodes where they are changes none: the
	 * journal's blocks count as free), or when nothing else would (a
	 * transaction overwrites at least one block).  The kernel logs it only
	 * when the root or the height moved and keeps the counters in tx heads
	 * and the footer (ENGINE.md 4.6), but fsck.reiser4 calls a super block
	 * whose free count is stale a corruption.
	 */
	if (!p->over.n || sb.sb_root_block != db->sb.sb_root_block ||
	    sb.sb_tree_height != db->sb.sb_tree_height ||
	    sb.sb_free_blocks != db->sb.sb_free_blocks || sb.sb_oid != db->sb.sb_oid ||
	    sb.sb_file_count != db->sb.sb_file_count) {
		memset(buf, 0, db->bs);
		r4_fsb_encode(&sb, buf);
		if ((rc = r4_wset_add(&p->over, R4_FSB_BLOCK(db->bs), buf, true)))
			return rc;
	}
	if ((rc = r4_jnl_reserve(db, p)))
		return rc;
	db->sb = sb;
	return 0;
}

/*
 * The journal's protocol (jnl.h).  A failure while planning leaves the
 * transaction open and poisoned, the image untouched: r4_abort restores
 * everything.  A failure while writing, before the commit point is
 * durable, returns the error: the image holds the previous state or (if
 * the header reached the disk after all) this one, and the handle stops
 * writing until reopened.  After the commit point the transaction is
 * durable whatever happens: a failure to play it is left to the next open.
 */
int r4_commit(r4_db *db)
{
	struct r4_commit_plan p = {0};
	uint64_t bfree;
	int rc;

	if (!db->in_txn)
		return -EINVAL;
	if (db->txn_err)
		return db->txn_err;
	assert(!db->op.depth);	/* not from inside an operation */
	if (db->gen == 0 && !db->cache.ndirty && !db->npages) {
		db->in_txn = false;
		assert(txn_state_ok(db));
		return 0;
	}
	bfree = r4_txn_bfree(db);
	if ((rc = plan_commit(db, &p))) {
		r4_jnl_plan_fini(&p);
		db->bfree_planned = bfree;	/* not the half-planned counts */
		return r4_txn_fail(db, rc);
	}
	if ((rc = r4_jnl_write(db, &p))) {
		r4_jnl_plan_fini(&p);
		db->broken = true;
		return r4_txn_fail(db, rc);
	}
	r4_jnl_keep(db, &p);	/* its log blocks stay held until played */
	r4_alloc_apply(db->alloc);
	r4_jnl_plan_fini(&p);
	if ((rc = r4_jnl_trim(db))) {
		r4_log(&db->lg, R4_LOG_ERR, "commit: the transaction is durable, but writing "
		       "earlier ones in place failed (%s): the next open finishes them",
		       r4_strerror(rc));
		db->broken = true;
	}
	r4_cache_clean_all(db);
	db->hooks->committed(db);
	db->in_txn = false;
	db->gen = 0;
	db->commits++;
	assert(txn_state_ok(db));
	return 0;
}

int r4_sync(r4_db *db)
{
	int rc = db->in_txn ? r4_commit(db) : 0;

	if (rc || !db->rw)
		return rc;
	return r4_jnl_pending(db) && !db->broken ? r4_jnl_settle(db) : r4_io_sync(db->io);
}
