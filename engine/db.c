/*
 * db.c - opening and closing an image, transactions, mkfs and info.
 *
 * Open: master super block (byte 65536) -> format40 super block ->
 * status block (a damaged volume opens read-only only) -> the journal:
 * committed but unplayed transactions are finished (jnl.h), and its
 * counters taken -> bitmaps -> root directory's plugin set.  A read-only
 * open writes nothing, even when the journal needs replaying.
 *
 * Transactions:
 *
 *   r4_begin -> changes (dirty nodes, pending pages, allocator working
 *   state) -> r4_commit: squeeze, new nodes get blocks (parents first),
 *             the blocks to write are split into the relocate and the
 *             overwrite set and go through the journal
 *          -> r4_abort: everything dirty is dropped; the image was
 *             never touched.
 */
#include <assert.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <uuid/uuid.h>

#include "alloc.h"
#include "db.h"
#include "perm.h"
#include "format.h"
#include "io.h"
#include "key.h"
#include "node.h"
#include "obj.h"
#include "plugin.h"
#include "tree.h"

#define DEFAULT_CACHE_NODES 16384

/* ---- open ---- */

static int read_block(struct r4_db *db, uint64_t blk, uint8_t *buf)
{
	return r4_io_read(db->io, blk * db->bs, buf, db->bs);
}

/* The plugin-set members db->pset keeps, the root's or the defaults. */
static const struct {
	unsigned member;
	size_t off;
} root_slots[] = {
	{R4_PSET_HASH, offsetof(struct r4_pset_defaults, hash)},
	{R4_PSET_FIBRATION, offsetof(struct r4_pset_defaults, fibration)},
	{R4_PSET_FORMATTING, offsetof(struct r4_pset_defaults, formatting)},
	{R4_PSET_CREATE, offsetof(struct r4_pset_defaults, create)},
	{R4_PSET_PERM, offsetof(struct r4_pset_defaults, perm)},
	{R4_PSET_SD, offsetof(struct r4_pset_defaults, sd)},
	{R4_PSET_DIRITEM, offsetof(struct r4_pset_defaults, diritem)},
	{R4_PSET_COMPRESSION, offsetof(struct r4_pset_defaults, compress)},
	{R4_PSET_CMODE, offsetof(struct r4_pset_defaults, compress_mode)},
	{R4_PSET_CLUSTER, offsetof(struct r4_pset_defaults, cluster)},
};

unsigned r4_db_root_plugin(const struct r4_db *db, unsigned member)
{
	for (size_t i = 0; i < R4_ARRAY_SIZE(root_slots); i++)
		if (root_slots[i].member == member)
			return *(const unsigned *)((const char *)&db->pset + root_slots[i].off);
	return 0;	/* file, dir, cipher, digest: not the root's to set */
}

/* The root directory's plugin set: the defaults of every new object. */
static int load_root_pset(struct r4_db *db)
{
	struct r4_pset_defaults *d = &db->pset;
	struct r4_inode root;
	uint16_t id;
	r4_key k;
	int rc;

	d->hash = R4_HASH_R5;
	d->fibration = R4_FIBRE_DOT_O;	/* the kernel's built-in default */
	d->formatting = 2;
	d->create = 0;
	r4_obj_root_key(&k);
	if ((rc = r4_obj_load(db, &k, &root)))
		return rc == -ENOENT ? R4_CORRUPT(&db->lg, db->root, "no root directory") : rc;
	if (!S_ISDIR(root.sd.sd_mode))
		rc = R4_CORRUPT(&db->lg, db->root, "the root is not a directory");
	for (size_t i = 0; i < R4_ARRAY_SIZE(root_slots); i++)
		if (r4_item_pset_get(&root.sd.sd_pset, root_slots[i].member, &id))
			*(unsigned *)((char *)d + root_slots[i].off) = id;
	if (!rc && (!r4_plugin_get(R4_PTYPE_HASH, d->hash) ||
		    !r4_plugin_get(R4_PTYPE_FIBRE, d->fibration) ||
		    !r4_plugin_get(R4_PTYPE_FORMATTING, d->formatting)))
		rc = R4_CORRUPT(&db->lg, db->root, "root plugin set names unknown plugins");
	r4_obj_fini(&root);
	/* the root's own plugins become the effective defaults at load time */
	return rc;
}

/* The format super block (again after a replay changed it). */
static int read_format(struct r4_db *db, uint64_t bytes)
{
	uint8_t buf[R4_MAX_BLOCKSIZE];
	struct r4_fsb sb;
	int rc;

	if ((rc = read_block(db, R4_MSB_OFFSET / db->bs + 1, buf)) ||
	    (rc = r4_fsb_decode(&db->lg, buf, db->bs, &sb)))
		return rc;
	if (sb.sb_block_count * db->bs > bytes)
		return R4_CORRUPT(&db->lg, R4_MSB_OFFSET / db->bs + 1,
				  "volume of %llu blocks does not fit the %llu-byte image (truncated?)",
				  (unsigned long long)sb.sb_block_count, (unsigned long long)bytes);
	db->block_count = sb.sb_block_count;
	db->root = sb.sb_root_block;
	db->height = sb.sb_tree_height;
	db->next_oid = sb.sb_oid;
	db->file_count = sb.sb_file_count;
	db->mkfs_id = sb.sb_mkfs_id;
	db->flags = sb.sb_flags;
	db->version = sb.sb_version;
	db->policy = sb.sb_policy;
	db->node_pid = sb.sb_node_pid;
	db->sb = sb;
	if (db->root <= R4_STATUS_BLOCK(db->bs) || db->root >= db->block_count)
		return R4_CORRUPT(&db->lg, R4_MSB_OFFSET / db->bs + 1, "root block %llu outside the volume",
				  (unsigned long long)db->root);
	if (db->height < 2 || db->height > R4_MAX_HEIGHT)
		return R4_CORRUPT(&db->lg, R4_MSB_OFFSET / db->bs + 1, "tree height %u", db->height);
	if (!(db->flags & 1))
		return -EOPNOTSUPP;	/* short keys */
	return 0;
}

static int load_super(struct r4_db *db, uint64_t *bytes_out)
{
	uint8_t buf[R4_MAX_BLOCKSIZE];
	struct r4_msb msb;
	struct r4_status st;
	uint64_t bytes;
	int rc;

	if ((rc = r4_io_size(db->io, &bytes)))
		return rc;
	if (bytes < R4_MSB_OFFSET + 4096)
		return R4_CORRUPT(&db->lg, R4_MSB_OFFSET / 4096,
				  "image of %llu bytes is too small for a Reiser4 volume",
				  (unsigned long long)bytes);
	if (bytes < (uint64_t)(R4_STATUS_BLOCK(4096) + 1) * 4096)
		return R4_CORRUPT(&db->lg, R4_FSB_BLOCK(4096),
				  "image of %llu bytes ends before the format super block and "
				  "the fixed blocks (truncated?)", (unsigned long long)bytes);
	if ((rc = r4_io_read(db->io, R4_MSB_OFFSET, buf, 4096)) ||
	    (rc = r4_msb_decode(&db->lg, buf, 4096, &msb)))
		return rc;
	if (msb.msb_blksize != 4096) {
		r4_log(&db->lg, R4_LOG_ERR,
		       "master super block (block 16): unsupported block size %u (r4 reads 4096)",
		       msb.msb_blksize);
		return -EINVAL;
	}
	if (msb.msb_diskmap) {
		r4_log(&db->lg, R4_LOG_ERR, "master super block (block 16): disk maps are not "
		       "supported (diskmap at block %llu)", (unsigned long long)msb.msb_diskmap);
		return -EOPNOTSUPP;
	}
	db->bs = msb.msb_blksize;
	memcpy(db->uuid, msb.msb_uuid, 16);
	memcpy(db->label, msb.msb_label, 16);
	db->label[16] = 0;
	if ((rc = read_format(db, bytes)))
		return rc;
	if ((rc = read_block(db, R4_STATUS_BLOCK(db->bs), buf)))
		return rc;
	if (!r4_status_decode(&db->lg, buf, db->bs, &st) && st.st_status)
		db->damaged = st.st_status;
	*bytes_out = bytes;
	return 0;
}

/*
 * Finish what the journal holds, then take its counters: after a replay
 * the newest tx head's are the truth (ENGINE.md 4.6).  Otherwise the super
 * block's stand, but the oid counter never goes back: a tool that writes
 * without the journal (libreiser4) leaves an old footer behind.
 */
static int recover(struct r4_db *db, uint64_t bytes)
{
	int rc;

	if ((rc = r4_jnl_recover(db, &db->replayed)))
		return rc;
	if (db->replayed) {
		if ((rc = read_format(db, bytes)))
			return rc;
		r4_log(&db->lg, R4_LOG_INFO, "journal: %u committed transaction%s %s", db->replayed,
		       db->replayed == 1 ? "" : "s",
		       db->rw ? "replayed" : "read from the journal (the image is unchanged; "
		       "a read-write open replays it)");
		db->next_oid = db->jcnt.next_oid;
		db->file_count = db->jcnt.nr_files;
	} else if (db->have_jcnt && db->jcnt.next_oid > db->next_oid) {
		db->next_oid = db->jcnt.next_oid;
	}
	return 0;
}

static void init_db(struct r4_db *db, const struct r4_open_opts *o)
{
	memset(db, 0, sizeof(*db));
	db->rw = o && o->rw;
	db->seconds_only = o && o->seconds_only;
	db->repair = o && o->repair;
	db->ignore_journal = o && o->ignore_journal;
	db->lg.fn = o && o->log ? o->log : NULL;
	db->lg.ctx = o ? o->log_ctx : NULL;
	db->clock_override = -1;
	db->next_fake_data = R4_FAKE_DATA;
	const char *clk = getenv("R4_TEST_CLOCK");
	if (clk)
		db->clock_override = strtoll(clk, NULL, 10);
}

int r4_open_io(struct r4_io *io, const struct r4_open_opts *o, r4_db **out)
{
	struct r4_db *db = r4_calloc(1, sizeof(*db));
	int rc;

	if (!db) {
		r4_io_close(io);
		return -ENOMEM;
	}
	init_db(db, o);
	db->io = io;
	if ((rc = r4_cache_init(&db->cache, o && o->cache_nodes ? o->cache_nodes
								  : DEFAULT_CACHE_NODES)))
		goto fail;
	uint64_t bytes;

	if ((rc = load_super(db, &bytes)))
		goto fail;
	if (db->rw && db->ignore_journal) {
		rc = -EINVAL;
		goto fail;
	}
	if (db->damaged && db->rw && !db->repair) {
		r4_log(&db->lg, R4_LOG_ERR,
		       "the volume is marked damaged (status 0x%llx): open it read-only or run "
		       "fsck.reiser4 --fix", (unsigned long long)db->damaged);
		rc = -EROFS;
		goto fail;
	}
	if (!db->ignore_journal && (rc = recover(db, bytes)))
		goto fail;
	if ((rc = r4_alloc_load(db->io, &db->lg, db->bs, db->block_count, &db->alloc)))
		goto fail;
	if ((rc = load_root_pset(db)))
		goto fail;
	if (db->rw && !db->repair && (rc = r4_fs_finish_orphans(db)))
		goto fail;
	*out = db;
	return 0;
fail:
	r4_close(db);
	return rc;
}

/*
 * Tests of whole programs (a mount) fail one call of the image's I/O:
 * R4_TEST_FAULT=OP:N[:ERRNO] with OP write, sync or read, N counted from
 * the open (1 = the first), ERRNO a number (default 5, EIO).  The file
 * backend is wrapped in io_fault.c's, which fails that call once.
 */
static int test_fault(struct r4_io **io)
{
	static const char *const ops[] = {"read", "write", "sync"};
	const char *e = getenv("R4_TEST_FAULT");
	struct r4_io *w;
	unsigned long long n;
	int op, err = EIO, k = -1;
	char name[8];

	if (!e || sscanf(e, "%7[a-z]:%llu:%d", name, &n, &err) < 2 || !n || err <= 0)
		return 0;
	for (op = 0; op < 3; op++)
		if (!strcmp(name, ops[op]))
			k = op;
	if (k < 0)
		return 0;
	if (r4_io_fault_wrap(*io, &w))
		return -ENOMEM;
	r4_io_fault_fail(w, k == 0 ? R4_IO_FAULT_READ : k == 1 ? R4_IO_FAULT_WRITE
							 : R4_IO_FAULT_SYNC, n, -err, false);
	r4_io_fault_own(w);
	*io = w;
	return 0;
}

int r4_open(const char *path, const struct r4_open_opts *o, r4_db **out)
{
	unsigned flags = 0;
	struct r4_io *io;
	int rc;

	if (o && o->rw)
		flags = R4_IO_RW | (o->bdev_no_excl ? R4_IO_SHARED : 0);
	if ((rc = r4_io_file_open(path, flags, &io)))
		return rc;
	if ((rc = test_fault(&io))) {
		r4_io_close(io);
		return rc;
	}
	return r4_open_io(io, o, out);
}

void r4_close(r4_db *db)
{
	int rc;

	if (!db)
		return;
	if (db->in_txn)
		r4_abort(db);
	if (db->unsettled.tx && !db->broken && (rc = r4_jnl_settle(db)))
		r4_log(&db->lg, R4_LOG_ERR, "close: writing the journal footer failed (%s): the "
		       "next open replays the last transaction", r4_strerror(rc));
	r4_free(db->unsettled.blk);
	r4_page_discard(db);
	r4_page_pool_free(db);
	r4_free(db->pages);
	r4_free(db->fake_files);
	r4_perm_free(db);
	while (db->held) {	/* (handles left open: their objects stay orphans) */
		struct r4_held *h = db->held;

		db->held = h->next;
		r4_free(h);
	}
	r4_alloc_close(db->alloc);
	r4_cache_fini(&db->cache);
	r4_io_close(db->io);
	r4_free(db);
}

/* ---- transactions ---- */

/*
 * The states a handle's transaction can be in, and what each allows:
 *   none      in_txn false: no dirty node, no page, no operation running;
 *   open      in_txn, txn_err 0: operations change nodes (r4_node_dirty);
 *   poisoned  in_txn, txn_err set: nothing changes any more, commit
 *             returns the error, only r4_abort leaves it.
 */
static bool txn_state_ok(const struct r4_db *db)
{
	if (!db->in_txn)
		return !db->txn_err && !db->cache.ndirty && !db->npages && !db->op.depth;
	return true;
}

bool r4_in_txn(const r4_db *db)
{
	return db->in_txn;
}

int r4_txn_error(const r4_db *db)
{
	return db->in_txn ? db->txn_err : 0;
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
	/* nearly full: the last commit's log blocks are wanted back now */
	if (db->unsettled.tx && r4_alloc_avail(db->alloc) < R4_MAX(1024, 2 * db->unsettled.n)) {
		int rc = r4_jnl_settle(db);

		if (rc) {
			db->broken = true;
			return rc;
		}
	}
	db->in_txn = true;
	db->txn_seq++;
	db->txn_err = 0;
	db->bfree_planned = 0;
	db->saved_root = db->root;
	db->saved_height = db->height;
	db->saved_file_count = db->file_count;
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
	/* new data placed in runs the free space has: its extent items grow */
	if (db->fake_data)
		blocks += db->fake_data / 64 + 2 * r4_txn_insert_cost(db);
	return blocks;
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

int r4_txn_grab(struct r4_db *db, uint64_t n, bool removal)
{
	uint64_t avail = r4_alloc_avail(db->alloc), want;

	assert(db->in_txn && db->op.depth);
	if (db->op.depth > 1)
		return 0;	/* the outermost operation grabbed for it */
	assert(db->gen == db->op.gen);
	want = db->op.need0 + db->op.grabbed + n + (removal ? 0 : r4_txn_reserve(db));
	if (want > avail)
		return -ENOSPC;
	db->op.grabbed += n;
	return 0;
}

void r4_txn_op_begin(struct r4_db *db)
{
	if (db->op.depth++)
		return;
	assert(db->in_txn && !db->txn_err);	/* a poisoned one takes no operation */
	db->op.need0 = r4_txn_need(db);
	db->op.grabbed = 0;
	db->op.gen = db->gen;
}

void r4_txn_op_end(struct r4_db *db)
{
	assert(db->op.depth);
	if (--db->op.depth)
		return;
	/* an aborted transaction needs nothing; a living one what was grabbed */
	assert(!db->in_txn || db->txn_err || r4_txn_need(db) <= db->op.need0 + db->op.grabbed);
}

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
	/* what handles changed in it is lost: their next r4_file_error says so */
	for (struct r4_held *h = db->held; h; h = h->next)
		h->lost += h->changed == db->txn_seq;
	r4_cache_discard_dirty(db);
	r4_cache_drop_if(db, written_early, db);	/* before the allocator forgets */
	r4_page_discard(db);
	r4_alloc_abort(db->alloc);
	db->unsettled.handed = false;	/* the abort took the deferred frees back */
	db->root = db->saved_root;
	db->height = db->saved_height;
	db->file_count = db->saved_file_count;
	db->in_txn = false;
	db->txn_err = 0;
	db->meta_known = false;	/* the transaction may have made "..r4" */
	assert(txn_state_ok(db));
}

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

	r4_jnl_hand_over(db);
	if ((rc = r4_reg_place(db)) || (rc = r4_tree_squeeze(db)) ||
	    (rc = r4_tree_relocate(db)) || (rc = r4_tree_place(db)))
		return rc;
	for (r4_node *n = db->cache.dirty.next; n != &db->cache.dirty; n = n->next) {
		r4_node_seal(n->data, db->bs);
		if ((rc = add_block(db, p, n->blk, n->data, false)))
			return rc;
	}
	if ((rc = r4_page_each(db, add_page, ctx)) ||
	    (rc = r4_alloc_encode(db->alloc, add_bitmap, ctx)))
		return rc;
	p->cnt.free_blocks = r4_alloc_free_count(db->alloc);
	p->cnt.nr_files = db->file_count;
	p->cnt.next_oid = db->next_oid;
	sb.sb_root_block = db->root;
	sb.sb_tree_height = (uint16_t)db->height;
	sb.sb_free_blocks = p->cnt.free_blocks;
	sb.sb_oid = p->cnt.next_oid;
	sb.sb_file_count = p->cnt.nr_files;
	memset(buf, 0, db->bs);
	r4_fsb_encode(&sb, buf);
	if ((rc = r4_wset_add(&p->over, R4_FSB_BLOCK(db->bs), buf, true)))
		return rc;
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
	struct r4_statfs sf;

	r4_statfs(db, &sf);
	if ((rc = plan_commit(db, &p))) {
		r4_jnl_plan_fini(&p);
		db->txn_err = rc;
		db->bfree_planned = sf.bfree;	/* not the half-planned counts */
		return rc;
	}
	if ((rc = r4_jnl_write(db, &p))) {
		r4_jnl_plan_fini(&p);
		db->broken = true;
		db->txn_err = rc;
		return rc;
	}
	if ((rc = r4_jnl_play(db, &p))) {
		r4_log(&db->lg, R4_LOG_ERR, "commit: the transaction is durable, but writing it in "
		       "place failed (%s): the next open finishes it", r4_strerror(rc));
		db->broken = true;
	}
	r4_alloc_apply(db->alloc);	/* the log blocks stay used until settled */
	r4_jnl_plan_fini(&p);
	r4_cache_clean_all(db);
	r4_page_discard(db);
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
	return db->unsettled.tx && !db->broken ? r4_jnl_settle(db) : r4_io_sync(db->io);
}

int r4_db_seen(struct r4_db *db, int rc)
{
	uint8_t buf[R4_MAX_BLOCKSIZE];
	struct r4_status st = {0};

	if ((rc != -EUCLEAN && rc != -EBADMSG) || !db->rw || db->damaged)
		return rc;
	db->damaged = R4_ST_DAMAGED;
	db->broken = true;
	if (db->in_txn && !db->txn_err)
		db->txn_err = rc;
	st.st_present = true;
	st.st_status = R4_ST_DAMAGED;
	snprintf(st.st_message, sizeof(st.st_message), "r4: %s; run fsck.reiser4",
		 r4_strerror(rc));
	memset(buf, 0, db->bs);
	r4_status_encode(&st, buf);
	/* outside any transaction, like the kernel's error handling */
	if (!r4_io_write(db->io, (uint64_t)R4_STATUS_BLOCK(db->bs) * db->bs, buf, db->bs) &&
	    !r4_io_sync(db->io))
		r4_log(&db->lg, R4_LOG_ERR, "the volume is marked damaged in its status block "
		       "(block %u); read-write opens are refused until fsck.reiser4 --fix",
		       (unsigned)R4_STATUS_BLOCK(db->bs));
	return rc;
}

/* ---- info ---- */

int r4_info(r4_db *db, struct r4_info *out)
{
	memset(out, 0, sizeof(*out));
	out->blocksize = db->bs;
	out->block_count = db->block_count;
	out->free_blocks = r4_alloc_free_count(db->alloc) + r4_jnl_held(db);
	out->root = db->root;
	out->next_oid = db->next_oid;
	out->file_count = db->file_count;
	out->height = db->height;
	out->node_pid = db->node_pid;
	out->policy = db->policy;
	out->mkfs_id = db->mkfs_id;
	out->commits = db->commits;
	out->version = db->version;
	memcpy(out->uuid, db->uuid, 16);
	memcpy(out->label, db->label, sizeof(out->label));
	out->hash = db->pset.hash;
	out->fibration = db->pset.fibration;
	out->formatting = db->pset.formatting;
	out->create = db->pset.create;
	out->status = db->damaged;
	return 0;
}
