/*
 * db.c - opening and closing an image, info, and what a structure error
 * does to a read-write handle (r4_db_seen).  Transactions are txn.c's.
 *
 * Open: master super block (byte 65536) -> format40 super block ->
 * status block (a damaged volume opens read-only only) -> the journal:
 * committed but unplayed transactions are finished (jnl.h), and its
 * counters taken -> bitmaps -> the file layer's open hook (the root
 * directory's plugin set; orphans).  A read-only open writes nothing,
 * even when the journal needs replaying.  db.c is in the engine's lower
 * half: it reaches the file layer only through the hooks it installs
 * (r4_obj_hooks, txn.h).
 */
#include "db.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "alloc.h"
#include "format.h"
#include "io.h"
#include "node.h"

/* r4_open_opts.cache_nodes 0: the dirty bound (which the write path's
 * early writes and so its write amplification depend on, bench/RESULTS.md
 * "Deferred flush") is 16384 nodes, 64 MiB, and the clean bound 1/16 of
 * the machine's memory, from 64 MiB to 1 GiB of nodes: a random lookup
 * in a big volume finds its leaves in memory once they were read
 * (bench/RESULTS.md, "Scaling to a million files"), and memory is only
 * taken as nodes are read. */
#define DIRTY_NODES 16384
#define CLEAN_MIN (UINT64_C(64) << 20)
#define CLEAN_MAX (UINT64_C(1) << 30)

static size_t default_clean_nodes(void)
{
	long pages = sysconf(_SC_PHYS_PAGES), psize = sysconf(_SC_PAGESIZE);
	uint64_t bytes = pages > 0 && psize > 0 ? (uint64_t)pages * (uint64_t)psize / 16 : 0;

	bytes = bytes < CLEAN_MIN ? CLEAN_MIN : bytes > CLEAN_MAX ? CLEAN_MAX : bytes;
	return (size_t)(bytes / 4096);	/* (r4 reads 4096-byte blocks only) */
}

/* ---- open ---- */

static int read_block(struct r4_db *db, uint64_t blk, uint8_t *buf)
{
	return r4_io_read(db->io, blk * db->bs, buf, db->bs);
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
	if (bytes < R4_MSB_OFFSET + 4096) {
		/* (info: -EMEDIUMTYPE's words say it, in the one line a program prints) */
		r4_log(&db->lg, R4_LOG_INFO, "image of %llu bytes is too small for a Reiser4 volume",
		       (unsigned long long)bytes);
		return -EMEDIUMTYPE;	/* (no room for its super block) */
	}
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
	db->hooks = &r4_obj_hooks;
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
	if ((rc = o && o->cache_nodes ? r4_cache_init(&db->cache, o->cache_nodes, o->cache_nodes)
				      : r4_cache_init(&db->cache, default_clean_nodes(), DIRTY_NODES)))
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
	if ((rc = db->hooks->open(db)))
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
	struct r4_logger lg = {.fn = o ? o->log : NULL, .ctx = o ? o->log_ctx : NULL};
	unsigned flags = 0;
	struct r4_io *io;
	int rc;

	if (o && o->rw)
		flags = R4_IO_RW | (o->bdev_no_excl ? R4_IO_SHARED : 0);
	if ((rc = r4_io_open(path, flags, o ? o->partition : 0, &lg, &io)))
		return rc;
	if ((rc = test_fault(&io))) {
		r4_io_close(io);
		return rc;
	}
	return r4_open_io(io, o, out);
}

uint64_t r4_generation(const r4_db *db)
{
	return db->gen;
}

bool r4_clock_pin(r4_db *db)
{
	if (db->clock_pinned)
		return false;
	clock_gettime(CLOCK_REALTIME, &db->clock_pin);
	db->clock_pinned = true;
	return true;
}

void r4_clock_unpin(r4_db *db)
{
	db->clock_pinned = false;
}

void r4_close(r4_db *db)
{
	int rc;

	if (!db)
		return;
	if (db->in_txn)
		r4_abort(db);
	if (r4_jnl_pending(db) && !db->broken && (rc = r4_jnl_settle(db)))
		r4_log(&db->lg, R4_LOG_ERR, "close: playing the journal failed (%s): the next "
		       "open replays what is left", r4_strerror(rc));
	r4_jnl_fini(db);
	r4_free(db->jnl_batch);
	r4_free(db->made.path);
	r4_free(db->walked.path);
	r4_free(db->memo);
	db->hooks->close(db);
	r4_alloc_close(db->alloc);
	r4_cache_fini(&db->cache);
	r4_io_close(db->io);
	r4_free(db);
}

/* r4_db_seen's damage: apart, for its block-sized buffer is no frame
 * (nor stack probes) for every call that finds none. */
static __attribute__((noinline)) void mark_damaged(struct r4_db *db, int rc)
{
	uint8_t buf[R4_MAX_BLOCKSIZE];
	struct r4_status st = {0};

	db->damaged = R4_ST_DAMAGED;
	db->broken = true;
	if (db->in_txn)
		r4_txn_fail(db, rc);
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
}

int r4_db_seen(struct r4_db *db, int rc)
{
	if ((rc == -EUCLEAN || rc == -EBADMSG) && db->rw && !db->damaged)
		mark_damaged(db, rc);
	return rc;
}

/* ---- backup ---- */

/* Whether b[0, n) is all zeros. */
static bool zeros(const uint8_t *b, size_t n)
{
	return !n || (!b[0] && !memcmp(b, b + 1, n - 1));
}

int r4_backup(r4_db *db, const char *path)
{
	enum { CHUNK = 256 };		/* blocks read at once */
	struct r4_io *out;
	uint8_t *buf;
	int rc;

	if ((rc = r4_io_file_open(path, R4_IO_RW | R4_IO_CREATE, &out)))
		return rc;
	if (!(buf = r4_malloc((size_t)CHUNK * db->bs))) {
		r4_io_close(out);
		return -ENOMEM;
	}
	/* (a fresh length of holes: the zero blocks stay holes) */
	if (!(rc = r4_io_truncate(out, 0)))
		rc = r4_io_truncate(out, db->block_count * db->bs);
	for (uint64_t b = 0; !rc && b < db->block_count; b += CHUNK) {
		size_t n = (size_t)R4_MIN((uint64_t)CHUNK, db->block_count - b), run = 0;

		if ((rc = r4_io_read(db->io, b * db->bs, buf, n * db->bs)))
			break;
		/* runs of blocks that are not all zeros, one write each */
		for (size_t i = 0; !rc && i <= n; i++) {
			if (i < n && !zeros(buf + i * db->bs, db->bs))
				continue;
			if (i > run)
				rc = r4_io_write(out, (b + run) * db->bs, buf + run * db->bs,
						 (i - run) * db->bs);
			run = i + 1;
		}
	}
	if (!rc)
		rc = r4_io_sync(out);
	r4_free(buf);
	r4_io_close(out);
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
	out->cache_nodes = db->cache.bound;
	out->dirty_nodes = db->cache.dirty_bound;
	memcpy(out->uuid, db->uuid, 16);
	memcpy(out->label, db->label, sizeof(out->label));
	out->hash = db->pset.hash;
	out->fibration = db->pset.fibration;
	out->formatting = db->pset.formatting;
	out->create = db->pset.create;
	out->status = db->damaged;
	return 0;
}
