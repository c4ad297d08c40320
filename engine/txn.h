/*
 * txn.h - transactions of an open image (txn.c): the begin, commit,
 * abort and fail state machine, the bracket of every fs call, space
 * reservation, and the hooks through which commit reaches the file layer.
 *
 * txn.c sits in the engine's lower half (docs/architecture.md): it sees
 * nodes, the tree, the allocator and the journal, never objects.  What
 * the file layer keeps beside the tree (pending data pages, handles'
 * objects, the root's plugin set, orphans) it reaches through the hooks
 * the file layer defines (r4_obj_hooks, obj.c), installed at open.
 */
#ifndef R4_TXN_H
#define R4_TXN_H

#include "r4_int.h"

struct r4_db;
struct r4_held;

/*
 * What the file layer does at the points the lower half decides.  Each is
 * called with the db in the state its comment names.
 */
struct r4_txn_hooks {
	/* At open, after recovery and the bitmaps: the file layer's own state
	 * (the root's plugin set) and, read-write, the orphans a crash left. */
	int (*open)(struct r4_db *db);
	/* Commit planning, before the tree's: new data blocks get places
	 * (delayed allocation).  -ENOSPC, -ENOMEM leave the rest to abort. */
	int (*place)(struct r4_db *db);
	/* Commit planning: each pending data page, with its block, to fn. */
	int (*each_page)(struct r4_db *db, int (*fn)(void *ctx, uint64_t blk, const uint8_t *data),
			 void *ctx);
	/* The memory bound, between operations: pending pages out early. */
	int (*spill)(struct r4_db *db);
	/* After a commit: the pending pages are on disk, drop them. */
	void (*committed)(struct r4_db *db);
	/* An abort: forget what the transaction did beside the tree. */
	void (*aborted)(struct r4_db *db);
	/* r4_close: free what the file layer keeps on the db. */
	void (*close)(struct r4_db *db);
};

/* The file layer's hooks (obj.c); r4_open_io installs them. */
extern const struct r4_txn_hooks r4_obj_hooks;

/*
 * Poison the running transaction with rc (a negative errno), after a
 * failure that may have left a change half done: every later operation
 * and commit returns the first error stored, until r4_abort.  Returns rc.
 */
int r4_txn_fail(struct r4_db *db, int rc);

/*
 * The bracket of every call of the fs API that may change the image:
 *
 *   struct r4_txn_op op;
 *   if ((rc = r4_txn_op_begin(db, &op)))
 *           return rc;
 *   ... checks, r4_txn_grab, changes ...
 *   return r4_txn_op_end(db, &op, rc);
 *
 * Begin refuses a read-only handle (-EROFS) and a poisoned transaction
 * (its error), begins one when none is open (autocommit), and between
 * operations enforces the memory bound (dirty nodes and pages written
 * early; a failure there poisons).  Operations nest: the outermost one
 * grabs for all.  End: a structure error marks the volume damaged
 * (r4_db_seen); a failure after a change poisons the transaction, or
 * aborts an autocommit one; an autocommit success commits (and a failed
 * commit is aborted).  Returns rc, or the commit's error.
 */
struct r4_txn_op {
	bool autocommit;	/* the operation began the transaction */
	uint64_t gen;		/* db->gen at begin: a change since? */
	struct r4_held *held;	/* a change through a handle: the object it changes */
};

int r4_txn_op_begin(struct r4_db *db, struct r4_txn_op *op);
int r4_txn_op_end(struct r4_db *db, struct r4_txn_op *op, int rc);

/*
 * Space, as the kernel's grab_space (ENGINE.md 3.6; docs/engine.md).  A
 * change is refused with -ENOSPC before it starts unless the commit it
 * leads to is sure to find its blocks: commit never fails for want of
 * space.  r4_txn_need is the most blocks the open transaction's commit
 * can take as things stand; an operation grabs, before its first change,
 * the most its changes can add to it (r4_txn_grab), and the grab keeps
 * r4_txn_reserve blocks back from everything but removals, so a full
 * volume can always be emptied.  After the operation, need <= need before
 * + grabbed (asserted).  Commit's optional work (squeezing into a clean
 * parent, relocation) runs only while r4_txn_slack allows.
 */
/* One item inserted: the path dirtied, a neighbour, two new nodes per level, a new root. */
uint64_t r4_txn_insert_cost(const struct r4_db *db);
/* items new items of bytes in all (in a row: they fill the nodes they make). */
uint64_t r4_txn_tree_cost(const struct r4_db *db, uint64_t items, uint64_t bytes);
/* items removed (in a row): the nodes holding them and those above. */
uint64_t r4_txn_remove_cost(const struct r4_db *db, uint64_t items);
uint64_t r4_txn_need(const struct r4_db *db);
/* What n more new data blocks, in `units` more extent units, add to it:
 * the blocks, and the growth of extent items when they are placed. */
uint64_t r4_txn_fake_cost(const struct r4_db *db, uint64_t n, uint64_t units);
/* What only removals may use. */
uint64_t r4_txn_reserve(const struct r4_db *db);
/* Blocks the transaction can allocate beyond its need. */
uint64_t r4_txn_slack(const struct r4_db *db);
/* n more blocks for the running operation; -ENOSPC (nothing changes); the
 * transaction's error when its checks poisoned it. */
int r4_txn_grab(struct r4_db *db, uint64_t n, bool removal);
/* Could the running operation grab n more blocks?  -ENOSPC if not;
 * grabs nothing: a check, before the first of several operations, of
 * what they will grab one after another.  Both play the journal's window
 * first when it holds blocks and they are short (r4_jnl_settle; its write
 * error breaks the handle and is returned). */
int r4_txn_room(struct r4_db *db, uint64_t n, bool removal);
/* Free blocks as r4_statfs counts them: the journal's held blocks are
 * free, new data and new nodes are used at once; after a commit that
 * failed while planning, what was free before it began. */
uint64_t r4_txn_bfree(const struct r4_db *db);

#endif
