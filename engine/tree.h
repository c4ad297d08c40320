/*
 * tree.h - the Reiser4 tree: search, iteration, insert, remove and resize
 * of items, with balancing (ENGINE.md section 3).
 *
 * A path records, for each level from the root down, the node and the
 * position of the item the search chose (-1: before the first item).
 * Leaf items live at level 1; extents live on the twig (level 2), so the
 * "current item" of a path is at level 1, or at level 2 when it is an
 * extent (path.level says which).
 *
 * Every function that changes the tree's structure (insert, remove)
 * releases the path: callers look up again.  resize keeps it.
 */
#ifndef R4_TREE_H
#define R4_TREE_H

#include "cache.h"
#include "node.h"

struct r4_db;

enum {				/* item plugin ids the tree itself interprets */
	R4_IPID_NODEPTR = 3,
	R4_IPID_EXTENT = 5,
};

struct r4_path {
	unsigned height;
	unsigned level;		/* level of the current item: 1, or 2 for an extent */
	struct {
		r4_node *node;
		int pos;
	} lv[R4_MAX_HEIGHT + 2];
};

/*
 * Search for the last item with key <= k, descending to `stop` (1: leaf
 * items and extents, 2: the twig).  The path holds references: release it
 * with r4_path_release.  Errors: -EUCLEAN/-EBADMSG/-EIO from reading nodes.
 */
int r4_tree_lookup(struct r4_db *db, const r4_key *k, unsigned stop, struct r4_path *p);
void r4_path_release(struct r4_db *db, struct r4_path *p);

/* The current item (p->lv[p->level]); false if the position is -1 or past the end. */
bool r4_path_item(const struct r4_db *db, const struct r4_path *p, r4_key *k, unsigned *pid,
		  uint8_t **body, unsigned *len);

/* Move to the next item in key order (leaf items and twig extents):
 * 1 moved, 0 at the end of the tree, < 0 error. */
int r4_tree_next(struct r4_db *db, struct r4_path *p);

/*
 * Insert a new item right after the current position of p at p->level
 * (leaf items at level 1; extents: look up with stop = 2 and insert at 2).
 * Balances as needed.  Releases p.  -ENOSPC when no block is left.
 */
int r4_tree_insert(struct r4_db *db, struct r4_path *p, const r4_key *k, unsigned pid,
		   const void *body, unsigned len);
/* Remove the current item.  Releases p. */
int r4_tree_remove(struct r4_db *db, struct r4_path *p);
/*
 * Grow or shrink the current item's body at byte `at` by delta; -ENOSPC
 * (nothing changed) if the node has no room.  The path stays valid; the
 * body pointer moves (fetch it again).
 */
int r4_tree_resize(struct r4_db *db, struct r4_path *p, unsigned at, int delta);
/* Before changing the current item's body in place. */
void r4_tree_touch(struct r4_db *db, struct r4_path *p);

/*
 * Where a leaf item was: the way back to it without a lookup, good while
 * no cached node has been forgotten or renumbered since (a node that
 * leaves the tree leaves the cache, so a block number cached names a node
 * of the tree until then).  Zeroed: none.
 */
struct r4_item_hint {
	uint64_t blk, moves;
	unsigned pos;
	bool set;
};
/* The hint of the leaf item p is at; with next, of where an item inserted
 * after it (r4_tree_insert) goes unless its leaf is split. */
void r4_tree_hint(const struct r4_db *db, const struct r4_path *p, bool next,
		  struct r4_item_hint *h);
/* The leaf h points to, referenced (r4_node_put it), if it is in memory
 * and still holds the item of key k and plugin pid at h->pos; else NULL
 * (nothing read). */
r4_node *r4_tree_at(struct r4_db *db, const struct r4_item_hint *h, const r4_key *k,
		    unsigned pid);
/* Before changing item pos of leaf n (from r4_tree_at) in place. */
void r4_tree_touch_at(struct r4_db *db, r4_node *n, unsigned pos);
/* Change the current item's key (its first unit changed); fixes the parents. */
void r4_tree_set_key(struct r4_db *db, struct r4_path *p, const r4_key *k);

/* Free bytes in the node of p's current level (a new item also needs its
 * 38-byte header out of them). */
unsigned r4_tree_free(const struct r4_db *db, const struct r4_path *p);

/* Largest body an item may have (one item alone in a node). */
static inline unsigned r4_tree_max_item(const struct r4_db *db);

/* Commit support: pack dirty nodes into their dirty left neighbours
 * (whole items, then the front of the next: cde units, tail bytes). */
int r4_tree_squeeze(struct r4_db *db);

/* Is leaf a, b's left neighbour, packed against b: would the squeeze move
 * nothing of b into a? */
bool r4_tree_leaf_packed(const struct r4_db *db, const r4_node *a, const r4_node *b);

/* The memory bound: write the dirty leaves out early (between
 * operations); see tree.c. */
int r4_tree_flush_early(struct r4_db *db);

/* Commit support: move dirty nodes whose parent is dirty too to fake
 * numbers (relocation: written once, not journalled); see tree.c. */
int r4_tree_relocate(struct r4_db *db);

/*
 * Commit support: give every fake node a real block, parents first and
 * left to right within a level, in ascending blocks taken from the top of
 * the free space (delayed allocation, ENGINE.md 4.3; data grows from the
 * bottom), or, under db->place_hint, the leaves from the first free run
 * at or after db->place_at that holds them all and the twigs from the run
 * at db->place_twig (the repacker's key order, tree.c); fixes the
 * pointers to them and db->root.  -ENOSPC leaves the
 * allocations to r4_alloc_abort.
 */
int r4_tree_place(struct r4_db *db);

/* Visit every node of the tree top-down (for checkers and dumps). */
int r4_tree_walk(struct r4_db *db,
		 int (*visit)(void *ctx, uint64_t blk, const uint8_t *node, unsigned level),
		 void *ctx);

#include "db.h"
static inline unsigned r4_tree_max_item(const struct r4_db *db)
{
	return db->bs - r4_node_hdr_size(db->node_pid) - R4_IH_SIZE;
}

/* A number that moves whenever an item of object oid changes (its stat
 * data, its body, a directory's entries) or the root's stat data does,
 * within a transaction (nothing follows an abort: txn_seq does). */
/* Objects share counters: the root, which every walk goes through, has
 * one of its own, so that changes of an object sharing its counter do not
 * make every walk look its names up again. */
static inline size_t r4_tree_change_slot(const struct r4_db *db, uint64_t oid)
{
	return oid == R4_ROOT_OID ? 0 : 1 + oid % (R4_ARRAY_SIZE(db->changed) - 1);
}

static inline uint64_t r4_tree_changes(const struct r4_db *db, uint64_t oid)
{
	return db->changed[r4_tree_change_slot(db, oid)] + (db->changed_root << 40);
}

#endif
