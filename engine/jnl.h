/*
 * jnl.h - the wandered-block journal: how a commit reaches the image and
 * how an interrupted one is finished at open (ENGINE.md 1.6, 4.5, 4.8).
 *
 * A commit hands two sets of blocks to the journal:
 *   reloc  blocks free in the last committed state (new nodes, new data):
 *          written straight to their place before the commit point, since
 *          nothing committed can see them;
 *   over   blocks the committed state uses (changed nodes, data pages of
 *          allocated extents, bitmaps, the super block): each gets a
 *          wandered copy in free space and an entry in a wander record,
 *          and is written in place only after the commit point.
 * The order on disk:
 *   reloc + wandered copies + records; sync; journal header (the commit
 *   point); sync.
 * The in-place writes wait (deferred flush): the transaction joins a
 * window of committed, unplayed ones, and reads of its overwritten blocks
 * come from their wandered copies.  A block overwritten again by a later
 * transaction of the window is written in place once, from its newest
 * copy.  The window is played oldest first when it holds more than
 * max_tx transactions (down to 7/8 of max_tx, at least one less: the
 * footer then goes out once for an eighth of the window), or too much of
 * the free space, after a commit:
 * the newest copy of each block in place, and the footer that says
 * "played up to here" waits for the next sync anyway: the next commit
 * writes it beside its own header (its first sync made the in-place
 * writes durable).  r4_jnl_settle plays the whole window and writes the
 * footer (sync, footer, sync: r4_sync, r4_close, a short volume).  Until
 * the footer covering it is durable a transaction's log blocks stay held,
 * so a replay still finds them, and so does every block one of its copies
 * is to be played onto (else a replay after a crash would write a stale
 * copy over whatever took the block).  A crash before the header leaves
 * the previous state (everything written went to blocks free in it);
 * after it, open replays every committed transaction after the footer's.
 */
#ifndef R4_JNL_H
#define R4_JNL_H

#include "r4_int.h"

struct r4_db;
struct r4_jh;
struct r4_jf;
struct r4_th;
struct r4_wr;

struct r4_wblk {
	uint64_t blk;		/* where the block belongs */
	uint64_t wand;		/* over: its wandered copy, once reserved */
	const uint8_t *data;	/* bs bytes, stable until the commit ends */
	uint8_t *own;		/* set when the set keeps its own copy (= data) */
};

struct r4_wset {
	struct r4_wblk *v;
	size_t n, cap;
};

/* Counters the kernel carries in tx heads and the footer (ENGINE.md 4.6). */
struct r4_jcounters {
	uint64_t free_blocks, nr_files, next_oid;
};

struct r4_jtx;
struct r4_jent;

/*
 * The window: committed transactions not yet played in place, oldest
 * first, with a map from each block they overwrite to its newest wandered
 * copy (reads of the block come from there: r4_jnl_recover's view), and
 * the transactions played since the footer on disk, whose footer goes
 * with the next header (or r4_jnl_settle).  Every log block of the window
 * and every block a copy is still to be played onto that the tree freed
 * is held in the allocator (alloc.h) until the footer that covers it is
 * durable.
 */
struct r4_jwin {
	struct r4_jtx *tx;	/* unplayed, oldest first */
	size_t ntx, txcap;
	uint64_t seq;		/* the next transaction's number */
	struct r4_jent *map;	/* block -> newest copy; open addressing, blk 0 = empty */
	size_t mapcap, mapn;
	unsigned max_tx;	/* the most transactions left unplayed after a commit */
	/* played in place, footer still to write: the newest of them */
	uint64_t played_tx;
	struct r4_jcounters played_cnt;
	uint64_t *rel;		/* held blocks to free once that footer is durable */
	size_t nrel, relcap;
	uint64_t *spare;	/* the next r4_jnl_keep's arrays, taken by r4_jnl_reserve */
};

/* Transactions left unplayed after a commit unless R4_JNL_WINDOW says
 * otherwise (0: play each at once, as before the window). */
#define R4_JNL_WINDOW_DEFAULT 256

struct r4_commit_plan {
	struct r4_wset reloc, over;
	uint64_t *rec;		/* record blocks, rec[0] the tx head */
	size_t nrec;
	struct r4_jcounters cnt;
	uint64_t tx;		/* this commit's tx head = rec[0] */
};

/* Add a block; with copy the set copies data now (a buffer the caller
 * reuses), else data must stay valid until r4_jnl_plan_fini.  -ENOMEM. */
int r4_wset_add(struct r4_wset *s, uint64_t blk, const uint8_t *data, bool copy);
void r4_jnl_plan_fini(struct r4_commit_plan *p);
/* Write the blocks of s to their places now, sorted and batched (blocks
 * free in the committed state only). */
int r4_wset_write(struct r4_db *db, struct r4_wset *s);

/*
 * Allocate the wandered copies of the over set and the record blocks
 * (working bitmap; once committed they are held, never in a bitmap block
 * written), and the memory r4_jnl_keep takes.  On -ENOSPC or -ENOMEM
 * nothing stays allocated.
 */
int r4_jnl_reserve(struct r4_db *db, struct r4_commit_plan *p);
/* Every write up to and including the commit point, with the footer of
 * the transactions played before it; 0 means durable.  Then the blocks
 * that footer frees are free. */
int r4_jnl_write(struct r4_db *db, struct r4_commit_plan *p);
/* After r4_jnl_write: p joins the window, unplayed (its log blocks held,
 * its copies in the map).  Cannot fail: r4_jnl_reserve made room. */
void r4_jnl_keep(struct r4_db *db, struct r4_commit_plan *p);
/* After the commit's r4_alloc_apply: play the oldest transactions in
 * place (no sync; their footer goes with the next header) when the
 * window holds more than max_tx of them (down to 7/8 of max_tx, at least
 * one less), and while its held blocks exceed half of the free space. */
int r4_jnl_trim(struct r4_db *db);
/* Blocks the window holds (free on disk: statfs counts them free). */
size_t r4_jnl_held(const struct r4_db *db);
/* Whether anything waits: an unplayed transaction or a footer. */
bool r4_jnl_pending(const struct r4_db *db);
/* Play every transaction of the window, sync, write the footer, sync,
 * free the held blocks.  Inside a transaction too (it touches nothing
 * the running one holds).  0 when nothing waits. */
int r4_jnl_settle(struct r4_db *db);
/* Whether the header and footer on disk are those this handle wrote: its
 * own window, not transactions someone else left (r4 check). */
bool r4_jnl_own(const struct r4_db *db, uint64_t last_committed, uint64_t last_flushed);
/* Free the window's memory (r4_close, after r4_jnl_settle). */
void r4_jnl_fini(struct r4_db *db);

/* Where the journal is read from: an image with its block size and count,
 * and the log that hears what is wrong with it (NULL: none, and
 * r4_corrupt_last() keeps the words).  A db's: r4_jnl_img_of. */
struct r4_jnl_img {
	struct r4_io *io;
	const struct r4_logger *lg;
	uint32_t bs;
	uint64_t blocks;
};

struct r4_jnl_img r4_jnl_img_of(struct r4_db *db);

/* The journal header and footer as they lie on the image (-EUCLEAN: the
 * log says what is wrong with them). */
int r4_jnl_ends(const struct r4_jnl_img *im, struct r4_jh *jh, struct r4_jf *jf);

/* Where r4_jnl_walk found the journal broken, for a caller that words it
 * itself (r4 check); the log has had it already. */
struct r4_jnl_break {
	enum {
		R4_JNL_CHAIN,	/* the heads from the header's never reach the footer's,
				   or loop (blk: the header) */
		R4_JNL_HEAD,	/* the tx head at blk does not read or decode */
		R4_JNL_RECORD,	/* wander record serial, at blk, does not read or decode */
		R4_JNL_SERIAL,	/* the record at blk says wr's serial and total, not
				   serial of total */
		R4_JNL_SHORT,	/* the ring is back at the head (blk) where record
				   serial was due */
		R4_JNL_LONG,	/* total - 1 records and the ring is not back at the
				   head (blk) */
	} what;
	int rc;			/* what the walk returns: -EUCLEAN, or a read's error */
	uint64_t blk, tx;	/* where; the transaction's head (CHAIN: 0) */
	uint32_t serial, total;	/* the record due, of the head's total */
	const struct r4_wr *wr;	/* SERIAL: the record as read */
};

/* What r4_jnl_walk calls for each transaction: tx (may be NULL) with its
 * head, rec (may be NULL) for each of its wander records in ring order (buf
 * is the record's block: r4_wr_entry reads its pairs), done (may be NULL)
 * after them.  A nonzero return stops the walk and is returned.  broken
 * (may be NULL) hears where the journal is broken, before the walk
 * returns that error. */
struct r4_jnl_visit {
	int (*tx)(void *ctx, uint64_t blk, const struct r4_th *th);
	int (*rec)(void *ctx, uint64_t blk, const struct r4_wr *wr, const uint8_t *buf);
	int (*done)(void *ctx, uint64_t blk, const struct r4_th *th);
	void (*broken)(void *ctx, const struct r4_jnl_break *b);
	void *ctx;
};

/*
 * Every committed transaction the footer jf does not mark played, from the
 * header jh's back through prev_tx, visited oldest first.  The chain and
 * the heads are checked before the first visit, each record before its
 * own; -EUCLEAN for a broken journal (the log says where, v->broken too).
 * These are the journal's rules: replay, r4 logdump, r4 check and salvage
 * all walk it here.
 */
int r4_jnl_walk(const struct r4_jnl_img *im, const struct r4_jh *jh, const struct r4_jf *jf,
		const struct r4_jnl_visit *v);

/*
 * A read-only view of im->io as the committed transactions the footer does
 * not mark played leave it, without writing: a read of a block they
 * changed gives its newest wandered copy.  *out borrows im->io (closing
 * it leaves im->io open); NULL when there are none.  *ntx = transactions
 * read.  Errors as r4_jnl_ends and r4_jnl_walk give them; -ENOMEM.
 */
int r4_jnl_view(const struct r4_jnl_img *im, struct r4_io **out, unsigned *ntx);

/*
 * At open, after the format super block: finish every committed but
 * unplayed transaction, oldest first.  Read-write: replay on the image
 * (idempotent; a crash during it is finished by the next open), then wrap
 * db->io so reads of blocks the window holds copies of see the newest
 * copy.  Read-only: nothing is written; db->io is wrapped so reads of
 * replayed blocks see their wandered copies.  *replayed = transactions finished.
 * Sets db->last_tx and, when the footer (or newest tx head) has them, the
 * oid counters.  -EUCLEAN for a broken journal (the log says where).
 */
int r4_jnl_recover(struct r4_db *db, unsigned *replayed);

#endif
