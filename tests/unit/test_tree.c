/*
 * test_tree.c - the tree against a sorted-array model: seeded random
 * inserts and removals of items of random sizes (growing the tree to
 * height 4 and back down to 2), with a small node cache, commits, aborts
 * and reopens; after each phase every item is found by key and the whole
 * key range is iterated in order with the same bodies as the model.
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "db.h"
#include "item.h"
#include "t.h"
#include "tree.h"

#define LOC 1000000		/* a locality no object uses */
/* items the squeeze moves whole (tails, which it may cut, have their own
 * test: these overlap and would not be a file's) */
#define ITEM R4_ITEM_BBOX40

struct mitem {
	uint64_t off;
	unsigned len;
	uint8_t fill;
};

static struct mitem *m;
static size_t mn;
static unsigned long rng;

static unsigned rnd(unsigned n)
{
	rng = rng * 6364136223846793005UL + 1442695040888963407UL;
	return (unsigned)((rng >> 33) % n);
}

static void key_of(uint64_t off, r4_key *k)
{
	r4_key_set(k, LOC, R4_KEY_BODY, 0, 7, off);
}

static size_t find(uint64_t off, bool *hit)
{
	size_t lo = 0, hi = mn;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (m[mid].off < off)
			lo = mid + 1;
		else
			hi = mid;
	}
	*hit = lo < mn && m[lo].off == off;
	return lo;
}

static int insert(r4_db *db, uint64_t off, unsigned len, uint8_t fill)
{
	uint8_t body[4096];
	struct r4_path p;
	r4_key k;
	bool hit;
	size_t at = find(off, &hit);
	int rc;

	if (hit)
		return 0;
	memset(body, fill, len);
	key_of(off, &k);
	if ((rc = r4_tree_lookup(db, &k, R4_LEVEL_LEAF, &p)) ||
	    (rc = r4_tree_insert(db, &p, &k, ITEM, body, len)))
		return rc;
	memmove(m + at + 1, m + at, (mn - at) * sizeof(*m));
	m[at] = (struct mitem){off, len, fill};
	mn++;
	return 0;
}

static int remove_at(r4_db *db, size_t i)
{
	struct r4_path p;
	r4_key k, ik;
	int rc;

	key_of(m[i].off, &k);
	if ((rc = r4_tree_lookup(db, &k, R4_LEVEL_LEAF, &p)))
		return rc;
	if (!r4_path_item(db, &p, &ik, NULL, NULL, NULL) || r4_key_cmp(&ik, &k)) {
		r4_path_release(db, &p);
		return -ENOENT;
	}
	if ((rc = r4_tree_remove(db, &p)))
		return rc;
	memmove(m + i, m + i + 1, (mn - i - 1) * sizeof(*m));
	mn--;
	return 0;
}

/* Iterate the range and compare with the model. */
static void compare(r4_db *db, const char *what)
{
	struct r4_path p;
	r4_key k, ik;
	uint8_t *body;
	unsigned len, pid;
	size_t i = 0;
	int rc, bad = 0;

	key_of(0, &k);
	if ((rc = r4_tree_lookup(db, &k, R4_LEVEL_LEAF, &p))) {
		CHECK_RC(rc);
		return;
	}
	if (!r4_path_item(db, &p, &ik, NULL, NULL, NULL) || r4_key_locality(&ik) != LOC)
		rc = r4_tree_next(db, &p);
	else
		rc = 1;
	while (rc == 1 && r4_path_item(db, &p, &ik, &pid, &body, &len) &&
	       r4_key_locality(&ik) == LOC) {
		if (i >= mn || r4_key_offset(&ik) != m[i].off || len != m[i].len ||
		    body[0] != m[i].fill || body[len - 1] != m[i].fill) {
			bad = 1;
			break;
		}
		i++;
		rc = r4_tree_next(db, &p);
	}
	r4_path_release(db, &p);
	if (bad || i != mn || rc < 0)
		fprintf(stderr, "%s: tree and model differ at item %zu of %zu (rc %d)\n", what, i,
			mn, rc);
	CHECK(!bad && i == mn && rc >= 0);
}

static r4_db *reopen(r4_db *db, const char *img)
{
	struct r4_open_opts oo = {.rw = true, .cache_nodes = 64};

	r4_close(db);
	db = NULL;
	CHECK_RC(r4_open(img, &oo, &db));
	return db;
}

/* r4_node_lookup_near answers what r4_node_lookup does, whatever the
 * hint: every key around a node's keys (equal ones among them), every
 * position and beyond as the hint. */
static void test_lookup_near(void)
{
	static uint8_t b[4096];
	static const uint64_t offs[] = {10, 20, 20, 30, 40, 40, 40, 50};
	int nr = (int)(sizeof(offs) / sizeof(offs[0]));
	r4_key k;

	r4_node_init(b, sizeof(b), R4_NODE40, R4_LEVEL_LEAF, 1);
	for (int i = 0; i < nr; i++) {
		key_of(offs[i], &k);
		r4_node_insert(b, sizeof(b), (unsigned)i, &k, ITEM, 8);
	}
	for (uint64_t off = 0; off <= 60; off += 5) {
		key_of(off, &k);
		for (int hint = -2; hint <= nr + 1; hint++)
			CHECK_EQ(r4_node_lookup_near(b, sizeof(b), &k, hint),
				 r4_node_lookup(b, sizeof(b), &k));
	}
}

static bool is_fake(void *ctx, uint64_t blk)
{
	(void)ctx;
	return r4_blk_is_fake(blk);
}

/* The node cache's hash (open addressing, cache.c): 6,000 new nodes (the
 * table grows twice), every other one renumbered and every third
 * forgotten (which moves later slots back): each is found by its number
 * until it goes, and by no other; then the rest made clean and dropped
 * (r4_cache_drop_if), every one of them, though the drops move nodes. */
static void test_cache_hash(r4_db *db)
{
	enum { N = 6000 };
	r4_node **v = calloc(N, sizeof(*v));
	uint64_t *old = calloc(N, sizeof(*old));
	size_t count = db->cache.count, slots = db->cache.nslots;

	CHECK_RC(r4_begin(db));
	for (int i = 0; i < N; i++) {
		CHECK_RC(r4_node_new(db, R4_LEVEL_LEAF, &v[i]));
		old[i] = v[i]->blk;
		r4_node_put(db, v[i]);	/* dirty: stays */
	}
	CHECK(db->cache.nslots >= 4 * slots);
	for (int i = 0; i < N; i += 2)
		r4_node_rekey(db, v[i], R4_FAKE_BLK | UINT64_C(1) << 40 | (uint64_t)i);
	for (int i = 0; i < N; i += 3)
		r4_node_forget(db, v[i]);
	CHECK_EQ(db->cache.count, count + N - N / 3);
	for (int i = 0; i < N; i++) {
		uint64_t now = R4_FAKE_BLK | UINT64_C(1) << 40 | (uint64_t)i;

		CHECK(r4_cache_find(db, i % 2 ? old[i] : now) == (i % 3 ? v[i] : NULL));
		CHECK(r4_cache_find(db, i % 2 ? now : old[i]) == NULL);
	}
	for (int i = 0; i < N; i++)
		if (i % 3)
			r4_node_clean(db, v[i]);
	r4_cache_drop_if(db, is_fake, NULL);
	CHECK_EQ(db->cache.count, count);
	CHECK_EQ(db->cache.ndirty, 0);
	r4_abort(db);
	CHECK_EQ(db->cache.count, count);
	free(v);
	free(old);
}

/* The LRU's second turn (cache.c): a hit leaves a node where it is on the
 * LRU, marked (no list links of other nodes touched); the trim gives a
 * marked node another turn and evicts the next ones.  Four leaves of the
 * tree, which holds no transaction. */
static void test_lru(r4_db *db)
{
	struct r4_cache *c = &db->cache;
	size_t bound = c->bound;
	uint64_t blk[4];
	r4_node *n[4];

	for (size_t i = 0; i < 4; i++) {
		struct r4_path p;
		r4_key k;

		key_of(m[mn / 4 * i].off, &k);
		CHECK_RC(r4_tree_lookup(db, &k, R4_LEVEL_LEAF, &p));
		blk[i] = p.lv[R4_LEVEL_LEAF].node->blk;
		r4_path_release(db, &p);
	}
	c->bound = 0;
	r4_cache_trim(db);
	CHECK_EQ(c->count, 0);
	c->bound = 3;
	for (int i = 0; i < 3; i++) {
		CHECK_RC(r4_node_get(db, blk[i], R4_LEVEL_LEAF, &n[i]));
		r4_node_put(db, n[i]);
	}
	CHECK(c->lru.next == n[0] && !n[0]->recent);
	CHECK_RC(r4_node_get(db, blk[0], R4_LEVEL_LEAF, &n[0]));
	r4_node_put(db, n[0]);
	CHECK(c->lru.next == n[0] && n[0]->recent);
	c->bound = 2;
	CHECK_RC(r4_node_get(db, blk[3], R4_LEVEL_LEAF, &n[3]));
	CHECK(r4_cache_find(db, blk[0]) == n[0] && !r4_cache_find(db, blk[1]) &&
	      !r4_cache_find(db, blk[2]));
	CHECK(c->lru.next == n[0] && !n[0]->recent && n[0]->next == &c->lru);
	r4_node_put(db, n[3]);
	c->bound = bound;
}

/* The cache's bounds: a given cache_nodes is both; by default 16384 dirty
 * and 1/16 of the machine's memory clean, from 64 MiB to 1 GiB of nodes. */
static void test_bounds(const char *img)
{
	struct r4_open_opts oo = {.cache_nodes = 100};
	uint64_t mem = (uint64_t)sysconf(_SC_PHYS_PAGES) * (uint64_t)sysconf(_SC_PAGESIZE) / 16;
	struct r4_info in;
	r4_db *db;

	CHECK_RC(r4_open(img, &oo, &db));
	CHECK_RC(r4_info(db, &in));
	CHECK_EQ(in.cache_nodes, 100);
	CHECK_EQ(in.dirty_nodes, 100);
	r4_close(db);
	oo.cache_nodes = 0;
	CHECK_RC(r4_open(img, &oo, &db));
	CHECK_RC(r4_info(db, &in));
	mem = mem < (64 << 20) ? 64 << 20 : mem > (1 << 30) ? 1 << 30 : mem;
	CHECK_EQ(in.cache_nodes, mem / 4096);
	CHECK_EQ(in.dirty_nodes, 16384);
	r4_close(db);
}

int main(void)
{
	unsigned long seed = t_seed();
	char dir[128], img[320];
	unsigned maxh = 0;
	r4_db *db = NULL;
	int rc = 0;

	rng = seed;
	test_lookup_near();
	snprintf(dir, sizeof(dir), "%s/r4treeXXXXXX", t_tmp());
	if (!mkdtemp(dir))
		return 1;
	snprintf(img, sizeof(img), "%s/t.img", dir);
	m = malloc(60000 * sizeof(*m));
	CHECK_RC(r4_mkfs(img, 512ull << 20, NULL));
	test_bounds(img);
	db = reopen(NULL, img);
	if (!db)
		return T_DONE();
	test_cache_hash(db);
	/* grow: 30,000 items of 600..1400 bytes, ~4 per leaf */
	for (int round = 0; round < 30 && !rc; round++) {
		CHECK_RC(r4_begin(db));
		for (int i = 0; i < 1000 && !rc; i++)
			rc = insert(db, (uint64_t)rnd(1u << 30) * 8, 600 + rnd(800), (uint8_t)rnd(256));
		CHECK_RC(rc);
		CHECK_RC(r4_commit(db));
		if (db->height > maxh)
			maxh = db->height;
		if (round % 10 == 9) {
			db = reopen(db, img);
			compare(db, "after grow and reopen");
		}
	}
	CHECK(maxh >= 4);
	test_lru(db);
	printf("height after growth: %u (max %u), %zu items\n", db->height, maxh, mn);
	/* an aborted transaction changes nothing */
	size_t before = mn;
	struct mitem *copy = malloc(mn * sizeof(*m));
	memcpy(copy, m, mn * sizeof(*m));
	CHECK_RC(r4_begin(db));
	for (int i = 0; i < 2000 && !rc; i++)
		rc = rnd(2) ? insert(db, (uint64_t)rnd(1u << 30) * 8, 50 + rnd(3000), 1)
			    : remove_at(db, rnd((unsigned)mn));
	CHECK_RC(rc);
	r4_abort(db);
	memcpy(m, copy, before * sizeof(*m));
	mn = before;
	free(copy);
	compare(db, "after abort");
	/* shrink: remove everything in random order, mixed with small inserts */
	while (mn && !rc) {
		CHECK_RC(r4_begin(db));
		for (int i = 0; i < 1500 && mn && !rc; i++)
			rc = rnd(10) ? remove_at(db, rnd((unsigned)mn))
				     : insert(db, (uint64_t)rnd(1u << 30) * 8, 1 + rnd(100), 2);
		CHECK_RC(rc);
		CHECK_RC(r4_commit(db));
		if (rnd(4) == 0)
			compare(db, "while shrinking");
	}
	compare(db, "emptied");
	db = reopen(db, img);
	CHECK_EQ(db->height, 2);
	compare(db, "emptied and reopened");
	r4_close(db);
	free(m);
	int fsck = t_fsck(img);

	if (fsck < 0)
		printf("skip: fsck.reiser4 not installed, interop check skipped\n");
	else
		CHECK(fsck == 1);
	if (t_fail == 0 && t_rmdir(dir))
		return 1;
	if (t_fail)
		fprintf(stderr, "failed with R4_SEED=%lu (image in %s)\n", seed, dir);
	return T_DONE();
}
