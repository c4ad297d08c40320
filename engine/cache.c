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
 * in the hash, on the LRU exactly when clean and unreferenced, on the
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
	size_t count = 0, ndirty = 0, nlru = 0, nlist = 0;

	for (size_t i = 0; i < c->nbuckets; i++)
		for (const r4_node *n = c->hash[i]; n; n = n->hnext) {
			count++;
			ndirty += n->dirty;
			nlru += !n->dirty && n->refs == 0;
			if (!n->dirty && n->refs && on_list(n))
				return false;	/* referenced, yet evictable */
		}
	for (const r4_node *n = c->lru.next; n != &c->lru; n = n->next, nlist++)
		if (n->dirty || n->refs)
			return false;
	if (nlist != nlru)
		return false;
	nlist = 0;
	for (const r4_node *n = c->dirty.next; n != &c->dirty; n = n->next, nlist++)
		if (!n->dirty)
			return false;
	return count == c->count && ndirty == c->ndirty && nlist == ndirty;
}

int r4_cache_init(struct r4_cache *c, size_t bound)
{
	memset(c, 0, sizeof(*c));
	c->nbuckets = 4096;
	c->hash = r4_calloc(c->nbuckets, sizeof(*c->hash));
	if (!c->hash)
		return -ENOMEM;
	c->bound = bound ? bound : 1;
	c->lru.prev = c->lru.next = &c->lru;
	c->dirty.prev = c->dirty.next = &c->dirty;
	c->next_fake = R4_FAKE_BLK | 1;
	return 0;
}

static void node_free(r4_node *n)
{
	if (n) {
		r4_free(n->data);
		r4_free(n);
	}
}

void r4_cache_fini(struct r4_cache *c)
{
	for (size_t i = 0; c->hash && i < c->nbuckets; i++)
		for (r4_node *n = c->hash[i], *nx; n; n = nx) {
			nx = n->hnext;
			node_free(n);
		}
	r4_free(c->hash);
	c->hash = NULL;
}

static size_t bucket(const struct r4_cache *c, uint64_t blk)
{
	return (size_t)((blk * UINT64_C(0x9E3779B97F4A7C15)) >> 40) & (c->nbuckets - 1);
}

static r4_node *find(struct r4_cache *c, uint64_t blk)
{
	for (r4_node *n = c->hash[bucket(c, blk)]; n; n = n->hnext)
		if (n->blk == blk)
			return n;
	return NULL;
}

static void hash_del(struct r4_cache *c, r4_node *n)
{
	r4_node **pp = &c->hash[bucket(c, n->blk)];

	while (*pp != n)
		pp = &(*pp)->hnext;
	*pp = n->hnext;
	c->count--;
}

static void hash_add(struct r4_cache *c, r4_node *n)
{
	size_t b = bucket(c, n->blk);

	n->hnext = c->hash[b];
	c->hash[b] = n;
	c->count++;
	if (c->count > c->nbuckets * 2) {	/* grow: keep chains short */
		size_t nb = c->nbuckets * 4;
		r4_node **nh = r4_calloc(nb, sizeof(*nh));

		if (!nh)
			return;		/* longer chains, still correct */
		for (size_t i = 0; i < c->nbuckets; i++)
			for (r4_node *m = c->hash[i], *nx; m; m = nx) {
				nx = m->hnext;
				size_t j = (size_t)((m->blk * UINT64_C(0x9E3779B97F4A7C15)) >> 40) &
					   (nb - 1);
				m->hnext = nh[j];
				nh[j] = m;
			}
		r4_free(c->hash);
		c->hash = nh;
		c->nbuckets = nb;
	}
}

static int node_alloc(struct r4_db *db, uint64_t blk, r4_node **out)
{
	r4_node *n = r4_calloc(1, sizeof(*n));

	if (!n || !(n->data = r4_malloc(db->bs))) {
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

		assert(n->refs == 0 && !n->dirty);	/* dirty nodes are never evicted */
		list_del(n);
		hash_del(c, n);
		node_free(n);
		clean--;
	}
}

int r4_node_get(struct r4_db *db, uint64_t blk, unsigned level, r4_node **out)
{
	struct r4_cache *c = &db->cache;
	r4_node *n = find(c, blk);
	int rc;

	if (n) {
		c->hits++;
		if (level && r4_node_level(n->data) != level)
			return R4_CORRUPT(&db->lg, blk, "node level %u, expected %u",
					  r4_node_level(n->data), level);
		if (n->refs++ == 0 && !n->dirty) {
			assert(on_list(n));	/* clean and unreferenced: on the LRU */
			list_del(n);
		}
		*out = n;
		return 0;
	}
	c->misses++;
	if (r4_blk_is_fake(blk) || blk >= db->block_count || blk <= 21)
		return R4_CORRUPT(&db->lg, blk, "child pointer outside the volume's tree area");
	if ((rc = node_alloc(db, blk, &n)))
		return rc;
	if ((rc = r4_io_read(db->io, blk * db->bs, n->data, db->bs)) ||
	    (rc = r4_node_check(&db->lg, blk, n->data, db->bs, db->node_pid, db->mkfs_id, level))) {
		node_free(n);
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

	if ((rc = node_alloc(db, db->cache.next_fake++, &n)))
		return rc;
	r4_node_init(n->data, db->bs, db->node_pid, level, db->mkfs_id);
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
		assert(!on_list(n));
		list_add_tail(&db->cache.lru, n);
		r4_cache_trim(db);
	}
}

void r4_node_dirty(struct r4_db *db, r4_node *n)
{
	db->gen++;
	if (n->dirty)
		return;
	/* a change only under a transaction that may still make changes */
	assert(db->in_txn && !db->txn_err);
	if (n->refs == 0)
		list_del(n);
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
	node_free(n);
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
		node_free(n);
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
	db->cache.moves++;
	struct r4_cache *c = &db->cache;

	for (size_t i = 0; i < c->nbuckets; i++)
		for (r4_node *n = c->hash[i], *nx; n; n = nx) {
			nx = n->hnext;
			if (!n->dirty && n->refs == 0 && pred(ctx, n->blk)) {
				list_del(n);
				hash_del(c, n);
				node_free(n);
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
