/*
 * cache.c - the node cache (cache.h): a hash of nodes by block number, an
 * LRU of clean unreferenced nodes trimmed to the bound, and the dirty list
 * of the running transaction.
 *
 * Reads go through the io vtable and r4_node_check, so every node in memory
 * passed validation once.  Dirty nodes are never evicted: they are the only
 * copy of the transaction's changes (issue 3 streams them to wandered
 * blocks when the bound is exceeded).
 *
 * Invariants (asserted): a node's reference count never goes below zero;
 * a node leaves memory (trim, forget, drop) only unreferenced, and a
 * dirty node only by discard or forget, never by eviction; every node is
 * in the hash, on the LRU when clean and unreferenced (a referenced clean
 * node may stay there: the trim takes it off), on the
 * dirty list exactly when dirty; count and ndirty count them (cache_ok,
 * a walk of everything, under R4_CHECK_INVARIANTS).
 */
#include "cache.h"
#include "db.h"
#include "io.h"
#include "node.h"

static void list_del(r4_node *n)
{
	n->prev->next = n->next;
	n->next->prev = n->prev;
	n->prev = n->next = n;
}

static void list_add_tail(r4_node *head, r4_node *n)
{
	n->prev = head->prev;
	n->next = head;
	head->prev->next = n;
	head->prev = n;
}

static bool list_empty(const r4_node *head)
{
	return head->next == head;
}

static bool on_list(const r4_node *n)
{
	return n->next != n;
}

static bool list_has(const r4_node *head, const r4_node *n)
{
	for (const r4_node *m = head->next; m != head; m = m->next)
		if (m == n)
			return true;
	return false;
}

/* The hash, the LRU and the dirty list agree (a walk of the whole cache). */
static bool cache_ok(const struct r4_cache *c)
{
	size_t count = 0, ndirty = 0, nlru = 0, nlist = 0;	/* nlru: clean, listed */

	for (size_t i = 0; i < c->nslots; i++) {
		const r4_node *n = c->hash[i].node;

		if (!n)
			continue;
		count++;
		ndirty += n->dirty;
		nlru += !n->dirty && on_list(n);
		if (c->hash[i].blk != n->blk)
			return false;
		if (!n->dirty && !n->refs && !on_list(n))
			return false;	/* unreferenced, yet never evicted */
	}
	for (const r4_node *n = c->lru.next; n != &c->lru; n = n->next, nlist++)
		if (n->dirty)
			return false;
	if (nlist != nlru)
		return false;
	nlist = 0;
	for (const r4_node *n = c->dirty.next; n != &c->dirty; n = n->next, nlist++)
		if (!n->dirty)
			return false;
	return count == c->count && ndirty == c->ndirty && nlist == ndirty &&
	       4 * count <= 3 * c->nslots;
}

int r4_cache_init(struct r4_cache *c, size_t bound, size_t dirty_bound)
{
	memset(c, 0, sizeof(*c));
	c->nslots = 4096;
	c->hash = r4_calloc(c->nslots, sizeof(*c->hash));
	if (!c->hash)
		return -ENOMEM;
	c->bound = bound ? bound : 1;
	c->dirty_bound = dirty_bound ? dirty_bound : 1;
	c->lru.prev = c->lru.next = &c->lru;
	c->dirty.prev = c->dirty.next = &c->dirty;
	c->next_fake = R4_FAKE_BLK | 1;
	return 0;
}

static void node_free(struct r4_cache *c, r4_node *n)
{
	if (n) {
		r4_pool_put(&c->pool, n->data);
		r4_free(n);
	}
}

void r4_cache_fini(struct r4_cache *c)
{
	for (size_t i = 0; c->hash && i < c->nslots; i++)
		node_free(c, c->hash[i].node);
	r4_free(c->hash);
	c->hash = NULL;
	r4_pool_fini(&c->pool);
}

static size_t slot_of(size_t nslots, uint64_t blk)
{
	return (size_t)((blk * UINT64_C(0x9E3779B97F4A7C15)) >> 32) & (nslots - 1);
}

static r4_node *find(const struct r4_cache *c, uint64_t blk)
{
	for (size_t i = slot_of(c->nslots, blk);; i = (i + 1) & (c->nslots - 1)) {
		const struct r4_cache_slot *s = &c->hash[i];

		if (!s->node)
			return NULL;
		if (s->blk == blk)
			return s->node;
	}
}

/* Into the first empty slot from blk's own (there is one: count < nslots). */
static void slot_put(struct r4_cache_slot *hash, size_t nslots, r4_node *n)
{
	size_t i = slot_of(nslots, n->blk);

	while (hash[i].node)
		i = (i + 1) & (nslots - 1);
	hash[i].blk = n->blk;
	hash[i].node = n;
}

/* Empty slot i, moving back the nodes after it whose probe from their own
 * slot passed i, so that no probe meets an empty slot before its node. */
static void slot_del(struct r4_cache *c, size_t i)
{
	size_t mask = c->nslots - 1;

	for (size_t j = (i + 1) & mask; c->hash[j].node; j = (j + 1) & mask) {
		size_t h = slot_of(c->nslots, c->hash[j].blk);

		/* j stays when h lies cyclically in (i, j] */
		if (i <= j ? i < h && h <= j : i < h || h <= j)
			continue;
		c->hash[i] = c->hash[j];
		i = j;
	}
	c->hash[i].node = NULL;
	c->count--;
}

static void hash_del(struct r4_cache *c, r4_node *n)
{
	size_t i = slot_of(c->nslots, n->blk);

	while (c->hash[i].node != n)
		i = (i + 1) & (c->nslots - 1);
	slot_del(c, i);
}

/* Room for one more node, the table kept at most half full (short probes):
 * -ENOMEM only when it cannot grow and is three quarters full. */
static int hash_reserve(struct r4_cache *c)
{
	size_t nn = c->nslots * 2;
	struct r4_cache_slot *nh;

	if (2 * (c->count + 1) <= c->nslots)
		return 0;
	if (!(nh = r4_calloc(nn, sizeof(*nh))))
		return 4 * (c->count + 1) <= 3 * c->nslots ? 0 : -ENOMEM;
	for (size_t i = 0; i < c->nslots; i++)
		if (c->hash[i].node)
			slot_put(nh, nn, c->hash[i].node);
	r4_free(c->hash);
	c->hash = nh;
	c->nslots = nn;
	return 0;
}

static void hash_add(struct r4_cache *c, r4_node *n)
{
	slot_put(c->hash, c->nslots, n);
	c->count++;
}

/* A node for block blk (its buffer zeros with zero, else anything). */
static int node_alloc(struct r4_db *db, uint64_t blk, bool zero, r4_node **out)
{
	r4_node *n;

	if (hash_reserve(&db->cache))
		return -ENOMEM;
	if (!db->cache.pool.size)
		r4_pool_init(&db->cache.pool, db->bs);
	n = r4_calloc(1, sizeof(*n));
	if (!n || !(n->data = r4_pool_get(&db->cache.pool, zero))) {
		r4_free(n);
		return -ENOMEM;
	}
	n->blk = blk;
	n->prev = n->next = n;
	*out = n;
	return 0;
}

void r4_cache_trim(struct r4_db *db)
{
	struct r4_cache *c = &db->cache;
	size_t clean = c->count - c->ndirty;

	while (clean > c->bound && !list_empty(&c->lru)) {
		r4_node *n = c->lru.next;

		assert(!n->dirty);	/* dirty nodes are never evicted */
		list_del(n);
		if (n->refs)
			continue;	/* in use: r4_node_put lists it again */
		if (n->recent) {	/* used since it was listed: another turn */
			n->recent = false;
			list_add_tail(&c->lru, n);
			continue;
		}
		hash_del(c, n);
		node_free(&db->cache, n);
		c->evicted++;
		clean--;
	}
}

/* A reference to n, found in memory. */
static r4_node *hit(struct r4_cache *c, r4_node *n)
{
	c->hits++;
	/* (a clean node stays on the LRU: the trim passes it by while
	 * referenced, and gives it another turn once put) */
	assert(n->refs || n->dirty || on_list(n));
	n->refs++;
	return n;
}

r4_node *r4_node_get_cached(struct r4_db *db, uint64_t blk)
{
	r4_node *n = find(&db->cache, blk);

	return n ? hit(&db->cache, n) : NULL;
}

r4_node *r4_node_hold(struct r4_db *db, r4_node *n)
{
	return hit(&db->cache, n);
}

int r4_node_get(struct r4_db *db, uint64_t blk, unsigned level, r4_node **out)
{
	struct r4_cache *c = &db->cache;
	r4_node *n = find(c, blk);
	int rc;

	if (n) {
		if (level && r4_node_level(n->data) != level)
			return R4_CORRUPT(&db->lg, blk, "node level %u, expected %u",
					  r4_node_level(n->data), level);
		*out = hit(c, n);
		return 0;
	}
	c->misses++;
	if (r4_blk_is_fake(blk) || blk >= db->block_count || blk <= 21)
		return R4_CORRUPT(&db->lg, blk, "child pointer outside the volume's tree area");
	if ((rc = node_alloc(db, blk, false, &n)))
		return rc;
	if ((rc = r4_io_read(db->io, blk * db->bs, n->data, db->bs)) ||
	    (rc = r4_node_check(&db->lg, blk, n->data, db->bs, db->node_pid, db->mkfs_id, level))) {
		node_free(&db->cache, n);
		return rc;
	}
	n->refs = 1;
	hash_add(c, n);
	r4_cache_trim(db);
	*out = n;
	return 0;
}

int r4_node_new(struct r4_db *db, unsigned level, r4_node **out)
{
	r4_node *n;
	int rc;

	if ((rc = node_alloc(db, db->cache.next_fake++, true, &n)))
		return rc;
	r4_node_format(n->data, db->bs, db->node_pid, level, db->mkfs_id);
	n->refs = 1;
	hash_add(&db->cache, n);
	r4_node_dirty(db, n);
	*out = n;
	return 0;
}

void r4_node_put(struct r4_db *db, r4_node *n)
{
	if (!n)
		return;
	assert(n->refs > 0);
	if (--n->refs == 0 && !n->dirty) {
		if (on_list(n))
			n->recent = true;
		else
			list_add_tail(&db->cache.lru, n);
		r4_cache_trim(db);
	}
}

void r4_node_dirty(struct r4_db *db, r4_node *n)
{
	db->gen++;
	n->gen++;
	if (n->dirty)
		return;
	/* a change only under a transaction that may still make changes */
	assert(db->in_txn && !db->txn_err);
	list_del(n);	/* (off the LRU, where a referenced one may be too) */
	n->dirty = true;
	list_add_tail(&db->cache.dirty, n);
	db->cache.ndirty++;
}

void r4_node_forget(struct r4_db *db, r4_node *n)
{
	assert(n->refs == 0);
	db->cache.moves++;
	R4_INVARIANT(n->dirty || !on_list(n) || list_has(&db->cache.lru, n));
	if (n->dirty) {
		assert(db->cache.ndirty > 0);
		db->cache.ndirty--;
	}
	list_del(n);
	hash_del(&db->cache, n);
	node_free(&db->cache, n);
}

r4_node *r4_cache_find(struct r4_db *db, uint64_t blk)
{
	return find(&db->cache, blk);
}

void r4_node_rekey(struct r4_db *db, r4_node *n, uint64_t blk)
{
	db->cache.moves++;
	hash_del(&db->cache, n);
	n->blk = blk;
	hash_add(&db->cache, n);
}

void r4_cache_discard_dirty(struct r4_db *db)
{
	struct r4_cache *c = &db->cache;

	c->moves++;
	while (!list_empty(&c->dirty)) {
		r4_node *n = c->dirty.next;

		assert(n->dirty && n->refs == 0);	/* abort: no path holds a node */
		list_del(n);
		hash_del(c, n);
		node_free(&db->cache, n);
	}
	c->ndirty = 0;
	R4_INVARIANT(cache_ok(c));
}

void r4_node_clean(struct r4_db *db, r4_node *n)
{
	if (!n->dirty)
		return;
	assert(db->cache.ndirty > 0);
	list_del(n);
	n->dirty = false;
	db->cache.ndirty--;
	if (n->refs == 0)
		list_add_tail(&db->cache.lru, n);
}

void r4_cache_drop_if(struct r4_db *db, bool (*pred)(void *ctx, uint64_t blk), void *ctx)
{
	struct r4_cache *c = &db->cache;

	c->moves++;
	for (size_t i = 0; i < c->nslots; i++) {
		r4_node *n;

		/* slot_del moves nodes back into slot i or the slots after it
		 * (round the end only when i is near it, into slots looked at
		 * and kept), so a node moved into slot i is looked at again
		 * and none is passed by */
		while ((n = c->hash[i].node) && !n->dirty && n->refs == 0 && pred(ctx, n->blk)) {
			list_del(n);
			slot_del(c, i);
			node_free(&db->cache, n);
		}
	}
}

void r4_cache_clean_all(struct r4_db *db)
{
	struct r4_cache *c = &db->cache;

	while (!list_empty(&c->dirty)) {
		r4_node *n = c->dirty.next;

		list_del(n);
		n->dirty = false;
		if (n->refs == 0)
			list_add_tail(&c->lru, n);
	}
	c->ndirty = 0;
	r4_cache_trim(db);
	R4_INVARIANT(cache_ok(c));
}
