/*
 * cache.h - the node cache: formatted nodes by block number, with a memory
 * bound on clean nodes, and the dirty set of the running transaction.
 *
 * A node is referenced (r4_node_get / r4_node_put) while a caller holds a
 * pointer to it; unreferenced clean nodes sit on an LRU list and are evicted
 * past the bound (in the order they were first put there, each used one
 * since given a second turn: a hit moves no list links, whose neighbours
 * are cache misses on a big volume).  Dirty nodes stay until commit or
 * abort.  Nodes created in a transaction carry a fake block number (top bit set, ENGINE.md 4.2): the
 * real one is chosen at commit, in tree order (delayed allocation).
 */
#ifndef R4_CACHE_H
#define R4_CACHE_H

#include "r4_int.h"

struct r4_db;

#define R4_FAKE_BLK (UINT64_C(1) << 63)
/* Fake data block numbers (reg.c), apart from the nodes' */
#define R4_FAKE_DATA (R4_FAKE_BLK | UINT64_C(1) << 62)
static inline bool r4_blk_is_fake(uint64_t b) { return (b & R4_FAKE_BLK) != 0; }

typedef struct r4_node {
	uint64_t blk;		/* real, or fake until commit */
	uint8_t *data;		/* blocksize bytes */
	unsigned refs;
	bool dirty;
	bool recent;		/* used since the trim last met it on the LRU */
	uint64_t gen;		/* changes: r4_node_dirty counts each (every change
				   of a node's items is announced through it) */
	struct r4_node *parent;	/* for dirty nodes: the node holding our pointer */
	struct r4_node *prev, *next;	/* LRU (clean) or dirty list */
} r4_node;

/* A hash slot: the block number beside the node, so that a lookup reads
 * one slot's cache line, not every node of a chain (node == NULL: empty) */
struct r4_cache_slot {
	uint64_t blk;
	r4_node *node;
};

struct r4_cache {
	struct r4_cache_slot *hash;	/* open addressing, linear probing */
	size_t nslots;		/* a power of two, at least twice count */
	size_t count;		/* nodes in memory */
	size_t bound;		/* max clean nodes kept */
	size_t dirty_bound;	/* dirty nodes (and pending pages, reg.c) a
				   transaction holds before it writes them early */
	r4_node lru;		/* sentinel: clean, oldest first; every unreferenced
				   clean node is on it, a referenced one may be */
	r4_node dirty;		/* sentinel: dirty nodes of the transaction */
	size_t ndirty;
	uint64_t next_fake;
	uint64_t hits, misses;
	uint64_t moves;		/* nodes forgotten or renumbered: what makes a block
				   number name another node (struct r4_item_hint) */
	uint64_t evicted;	/* clean nodes the trim freed: with moves, what
				   ends a node pointer kept without a reference */
	struct r4_pool pool;	/* the nodes' block buffers (util.c) */
};

int r4_cache_init(struct r4_cache *c, size_t bound, size_t dirty_bound);
void r4_cache_fini(struct r4_cache *c);

/*
 * A reference to node `blk`, read and checked (expected level, 0 = any)
 * if it is not in memory.  Valid until r4_node_put.  -EUCLEAN/-EBADMSG for
 * a bad node, -EIO for a failed read.
 */
int r4_node_get(struct r4_db *db, uint64_t blk, unsigned level, r4_node **out);
/* A reference to node `blk` if it is in memory, else NULL (nothing read). */
r4_node *r4_node_get_cached(struct r4_db *db, uint64_t blk);
/* Another reference to n, in memory (a hit, as r4_node_get_cached's). */
r4_node *r4_node_hold(struct r4_db *db, r4_node *n);
/* A new empty node of `level` with a fake number, dirty, one reference. */
int r4_node_new(struct r4_db *db, unsigned level, r4_node **out);
void r4_node_put(struct r4_db *db, r4_node *n);
/* Another reference to a node one is held on (or a dirty one: an
 * unreferenced clean node is on the LRU and would stay evictable). */
static inline void r4_node_ref(r4_node *n)
{
	assert(n->refs > 0 || n->dirty);
	n->refs++;
}
/* Join the transaction's dirty set before the first change to a node. */
void r4_node_dirty(struct r4_db *db, r4_node *n);
/* Forget a node that left the tree (emptied, merged away). */
void r4_node_forget(struct r4_db *db, r4_node *n);
/* The cached node `blk`, or NULL; no reference taken, nothing read. */
r4_node *r4_cache_find(struct r4_db *db, uint64_t blk);
/* Give a fake node its real block number. */
void r4_node_rekey(struct r4_db *db, r4_node *n, uint64_t blk);
/* Abort: drop every dirty node; the next get re-reads the committed block. */
void r4_cache_discard_dirty(struct r4_db *db);
/* A dirty node written early (memory bound) leaves the dirty set. */
void r4_node_clean(struct r4_db *db, r4_node *n);
/* Drop the clean unreferenced nodes whose block pred says. */
void r4_cache_drop_if(struct r4_db *db, bool (*pred)(void *ctx, uint64_t blk), void *ctx);
/* After commit wrote them: dirty nodes become clean. */
void r4_cache_clean_all(struct r4_db *db);
/* Evict clean unreferenced nodes down to the bound. */
void r4_cache_trim(struct r4_db *db);

#endif
