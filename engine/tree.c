/*
 * tree.c - search, iteration and balancing of the Reiser4 tree (tree.h).
 *
 * Balancing, the simple way that keeps every fsck.reiser4 invariant:
 *   1. an item goes where it fits: its node, else the right neighbour's
 *      front (appending past a full node) or the left neighbour's end
 *      (prepending), else a split that keeps the left node as full as it
 *      can be, else a node of its own;
 *   2. a parent's pointer key always equals its child's first key
 *      (fix_lkey runs whenever position 0 changes);
 *   3. emptied nodes leave the tree at once; the root never shrinks below
 *      height 2 (a twig), and a root with one child at height > 2 goes;
 *   4. new nodes get fake block numbers; r4_tree_flush gives them real ones
 *      at commit, parents before children (delayed allocation).
 * Packing beyond this (squeezing dirty neighbours) belongs to commit.
 * Extents live on the twig level; a leaf item whose key falls after an
 * extent goes to the front of the next leaf or into a new leaf (eottl.c in
 * the kernel does the same).
 *
 * Asserted: after a search or a step, each level of the path holds the
 * child of the level above at the recorded position (path_ok); after an
 * item is put or a key changed, the node's keys are in order; after the
 * transaction's balancing no node but the root is left empty
 * (balanced_ok, at the start of r4_tree_squeeze, once per commit).  The
 * last two under R4_CHECK_INVARIANTS: key order after an insert into a
 * neighbour rests on the parent's delimiting keys, which only r4 check
 * verifies on an image, and balanced_ok walks the dirty list.
 */
#include "tree.h"

#include <limits.h>
#include <stdlib.h>

#include "alloc.h"
#include "item.h"
#include "jnl.h"
#include "db.h"

static const uint8_t *ibody(const r4_node *n, const struct r4_db *db, unsigned i)
{
	return n->data + r4_node_item_off(n->data, db->bs, i);
}

static uint64_t child_of(const struct r4_db *db, const r4_node *n, unsigned i)
{
	return r4_le64_get(ibody(n, db, i));
}

/* Each level of p below the root is the child the level above points to
 * at its recorded position, of the right level; the top is the root. */
static bool path_ok(const struct r4_db *db, const struct r4_path *p)
{
	if (p->height != db->height || !p->lv[p->height].node ||
	    p->lv[p->height].node->blk != db->root)
		return false;
	for (unsigned l = p->level; l <= p->height; l++) {
		const r4_node *n = p->lv[l].node, *up = p->lv[l + 1].node;
		int pos = p->lv[l + 1].pos;

		if (!n || r4_node_level(n->data) != l)
			return false;
		if (l == p->height)
			break;
		if (pos < 0 || (unsigned)pos >= r4_node_nr(up->data) ||
		    r4_node_item_pid(up->data, db->bs, (unsigned)pos) != R4_IPID_NODEPTR ||
		    child_of(db, up, (unsigned)pos) != n->blk)
			return false;
	}
	return true;
}

/* Items [from, to) of n (clipped to it) are in key order. */
static bool keys_ordered(const struct r4_db *db, const r4_node *n, unsigned from, unsigned to)
{
	unsigned nr = r4_node_nr(n->data);
	r4_key a, b;

	to = R4_MIN(to, nr);
	for (unsigned i = from; i + 1 < to; i++) {
		r4_node_key(n->data, db->bs, i, &a);
		r4_node_key(n->data, db->bs, i + 1, &b);
		if (r4_key_cmp(&a, &b) > 0)
			return false;
	}
	return true;
}

/* No node of the transaction but the root is empty (a walk of the dirty
 * list: every node balancing touched is dirty). */
static bool balanced_ok(const struct r4_db *db)
{
	const r4_node *d = &db->cache.dirty;

	for (const r4_node *n = d->next; n != d; n = n->next)
		if (r4_node_nr(n->data) == 0 && n->blk != db->root)
			return false;
	return true;
}

void r4_path_release(struct r4_db *db, struct r4_path *p)
{
	for (unsigned l = 0; l < R4_ARRAY_SIZE(p->lv); l++) {
		r4_node_put(db, p->lv[l].node);
		p->lv[l].node = NULL;
	}
}

/*
 * The child under pointer i of n, which must be a node of `level`.  A bad
 * pointer is reported against n, where the damage is: outside the tree
 * area, or to a node of another level (which is also how a pointer loop
 * back up the tree shows).
 */
static int get_child(struct r4_db *db, const r4_node *n, unsigned i, unsigned level,
		     r4_node **out)
{
	uint64_t c;
	r4_node *child;
	int rc;

	if (r4_node_item_pid(n->data, db->bs, i) != R4_IPID_NODEPTR ||
	    r4_node_item_len(n->data, db->bs, i) != 8)
		return R4_CORRUPT(&db->lg, n->blk, "item %u is not a node pointer", i);
	c = child_of(db, n, i);
	/* (a fake number names a node of this transaction, in memory) */
	if (r4_blk_is_fake(c) ? !(child = r4_node_get_cached(db, c)) :
				(c >= db->block_count || c <= 21))
		return R4_CORRUPT(&db->lg, n->blk,
				  "item %u points to block %llu, outside the volume's tree area", i,
				  (unsigned long long)c);
	if (!r4_blk_is_fake(c) && (rc = r4_node_get(db, c, 0, &child))) {
		if (rc == -EUCLEAN || rc == -EBADMSG)
			r4_log(&db->lg, R4_LOG_ERR, "block %llu item %u points to that block",
			       (unsigned long long)n->blk, i);
		return rc;
	}
	if (r4_node_level(child->data) != level) {
		r4_node_put(db, child);
		return R4_CORRUPT(&db->lg, n->blk,
				  "item %u points to block %llu of level %u, expected level %u", i,
				  (unsigned long long)c, r4_node_level(child->data), level);
	}
	*out = child;
	return 0;
}

/* The path the last lookup of k's region took (db->near). */
static struct r4_near *near_of(struct r4_db *db, const r4_key *k)
{
	uint64_t region = k->el[0];	/* (locality and type) */

	return &db->near[(region ^ region >> 9) % R4_ARRAY_SIZE(db->near)];
}

static uint64_t cache_freed(const struct r4_db *db)
{
	return db->cache.moves + db->cache.evicted;
}

/*
 * The leaf path h keeps, if it is where a descent for k would go: the
 * cache freed and renumbered no node since (its nodes are the tree's), no
 * node above the twig changed (the pointers down to the twig are the
 * same), the twig still points to the leaf at the kept position or a few
 * after it (pointers to new leaves went in before it), and k lies between
 * the twig's key there and the next key at the lowest level that has one
 * (that pointer's subtree holds every key between).  Then p gets the
 * path, the leaf searched anew; else false and p is untouched.
 */
static bool near_path(struct r4_db *db, struct r4_near *h, const r4_key *k, struct r4_path *p)
{
	unsigned top = db->height, l, i, end;
	const r4_node *t;
	r4_key b;

	if (h->height != top || top < R4_LEVEL_TWIG || h->freed != cache_freed(db) ||
	    h->node[top]->blk != db->root)
		return false;
	for (l = R4_LEVEL_TWIG + 1; l <= top; l++)
		if (h->node[l]->gen != h->gen[l])
			return false;
	t = h->node[R4_LEVEL_TWIG];
	end = R4_MIN(r4_node_nr(t->data), (unsigned)h->pos[R4_LEVEL_TWIG] + 9);
	for (i = (unsigned)h->pos[R4_LEVEL_TWIG]; i < end; i++)
		if (r4_node_item_pid(t->data, db->bs, i) == R4_IPID_NODEPTR &&
		    child_of(db, t, i) == h->node[R4_LEVEL_LEAF]->blk)
			break;
	if (i >= end)	/* (the twig may hold fewer items now) */
		return false;
	h->pos[R4_LEVEL_TWIG] = (int)i;
	r4_node_key(t->data, db->bs, i, &b);
	if (r4_key_cmp(k, &b) < 0)
		return false;
	for (l = R4_LEVEL_TWIG; l <= top; l++) {
		const r4_node *n = h->node[l];
		unsigned next = (unsigned)h->pos[l] + 1;

		if (next < r4_node_nr(n->data)) {
			r4_node_key(n->data, db->bs, next, &b);
			if (r4_key_cmp(k, &b) >= 0)
				return false;
			break;
		}
	}
	memset(p, 0, sizeof(*p));
	p->height = top;
	p->level = R4_LEVEL_LEAF;
	for (l = R4_LEVEL_LEAF; l <= top; l++) {
		p->lv[l].node = r4_node_hold(db, h->node[l]);
		p->lv[l].pos = h->pos[l];
	}
	p->lv[R4_LEVEL_LEAF].pos = h->pos[R4_LEVEL_LEAF] =
		r4_node_lookup_near(h->node[R4_LEVEL_LEAF]->data, db->bs, k, h->pos[R4_LEVEL_LEAF]);
	return true;
}

/* Keep p (a lookup's, down to a leaf) for the next lookup of its region. */
static void near_keep(struct r4_db *db, struct r4_near *h, const struct r4_path *p)
{
	h->height = p->height;
	h->freed = cache_freed(db);
	for (unsigned l = R4_LEVEL_LEAF; l <= p->height; l++) {
		h->node[l] = p->lv[l].node;
		h->gen[l] = p->lv[l].node->gen;
		h->pos[l] = p->lv[l].pos;
	}
}

/* The search down from the root (h: where to start at each level). */
static int descend(struct r4_db *db, struct r4_near *h, const r4_key *k, unsigned stop,
		   struct r4_path *p)
{
	unsigned level = db->height;
	r4_node *n;
	int rc;

	memset(p, 0, sizeof(*p));
	p->height = db->height;
	if ((rc = r4_node_get(db, db->root, level, &n)))
		return rc;
	for (;;) {
		/* (lookups come near each other: the position the last one in
		 * this region took at this level first) */
		int pos = r4_node_lookup_near(n->data, db->bs, k, h->pos[level]);

		h->pos[level] = pos;
		p->lv[level].node = n;
		p->lv[level].pos = pos;
		if (level == stop)
			break;
		if (level == R4_LEVEL_TWIG &&
		    r4_node_item_pid(n->data, db->bs, pos < 0 ? 0 : (unsigned)pos) == R4_IPID_EXTENT)
			break;
		if (pos < 0)
			p->lv[level].pos = pos = 0;
		if ((rc = get_child(db, n, (unsigned)pos, level - 1, &n))) {
			r4_path_release(db, p);
			return rc;
		}
		level--;
	}
	p->level = level;
	R4_INVARIANT(path_ok(db, p));
	return 0;
}

/* p is what a descent for k finds (for the invariant of near_path). */
static bool same_as_descent(struct r4_db *db, struct r4_near *h, const r4_key *k,
			    const struct r4_path *p)
{
	struct r4_path q;
	bool same;

	if (descend(db, h, k, R4_LEVEL_LEAF, &q))
		return false;
	same = q.height == p->height && q.level == p->level;
	for (unsigned l = q.level; same && l <= q.height; l++)
		same = q.lv[l].node == p->lv[l].node && q.lv[l].pos == p->lv[l].pos;
	r4_path_release(db, &q);
	return same;
}

int r4_tree_lookup(struct r4_db *db, const r4_key *k, unsigned stop, struct r4_path *p)
{
	struct r4_near *h = near_of(db, k);
	int rc;

	if (stop == R4_LEVEL_LEAF && near_path(db, h, k, p)) {
		R4_INVARIANT(same_as_descent(db, h, k, p));
		return 0;
	}
	/* (a descent that failed half way kept positions of another path) */
	if (!(rc = descend(db, h, k, stop, p)) && stop == R4_LEVEL_LEAF &&
	    p->level == R4_LEVEL_LEAF)
		near_keep(db, h, p);
	else
		h->height = 0;
	return rc;
}

bool r4_path_item(const struct r4_db *db, const struct r4_path *p, r4_key *k, unsigned *pid,
		  uint8_t **body, unsigned *len)
{
	const r4_node *n = p->lv[p->level].node;
	int pos = p->lv[p->level].pos;

	if (!n || pos < 0 || (unsigned)pos >= r4_node_nr(n->data))
		return false;
	if (k)
		r4_node_key(n->data, db->bs, (unsigned)pos, k);
	if (pid)
		*pid = r4_node_item_pid(n->data, db->bs, (unsigned)pos);
	if (body)
		*body = n->data + r4_node_item_off(n->data, db->bs, (unsigned)pos);
	if (len)
		*len = r4_node_item_len(n->data, db->bs, (unsigned)pos);
	return true;
}

/* From lv[level] (whose pos is set), descend leftmost until a leaf item or a
 * twig extent is current. */
static int descend_leftmost(struct r4_db *db, struct r4_path *p, unsigned level)
{
	int rc;

	while (level > R4_LEVEL_LEAF) {
		r4_node *n = p->lv[level].node, *c;
		unsigned pos = (unsigned)p->lv[level].pos;

		if (level == R4_LEVEL_TWIG &&
		    r4_node_item_pid(n->data, db->bs, pos) == R4_IPID_EXTENT)
			break;
		if ((rc = get_child(db, n, pos, level - 1, &c)))
			return rc;
		r4_node_put(db, p->lv[level - 1].node);
		p->lv[level - 1].node = c;
		p->lv[level - 1].pos = 0;
		level--;
	}
	for (unsigned l = 1; l < level; l++) {
		r4_node_put(db, p->lv[l].node);
		p->lv[l].node = NULL;
	}
	p->level = level;
	return 0;
}

int r4_tree_next(struct r4_db *db, struct r4_path *p)
{
	unsigned l = p->level;
	int rc;

	if (l == R4_LEVEL_LEAF && p->lv[1].pos + 1 < (int)r4_node_nr(p->lv[1].node->data)) {
		p->lv[1].pos++;
		return 1;
	}
	if (l == R4_LEVEL_LEAF)
		l = R4_LEVEL_TWIG;
	else if (p->lv[l].pos + 1 < (int)r4_node_nr(p->lv[l].node->data)) {
		p->lv[l].pos++;
		goto down;
	} else {
		l++;
	}
	/* climb to the first level with an item to the right */
	for (; l <= p->height; l++)
		if (p->lv[l].pos + 1 < (int)r4_node_nr(p->lv[l].node->data))
			break;
	if (l > p->height)
		return 0;
	p->lv[l].pos++;
	for (; l > R4_LEVEL_TWIG; l--) {
		r4_node *c;

		if ((rc = get_child(db, p->lv[l].node, (unsigned)p->lv[l].pos, l - 1, &c)))
			return rc;
		r4_node_put(db, p->lv[l - 1].node);
		p->lv[l - 1].node = c;
		p->lv[l - 1].pos = 0;
	}
down:
	if ((rc = descend_leftmost(db, p, l)))
		return rc;
	R4_INVARIANT(path_ok(db, p));
	return 1;
}

/* ---- balancing helpers ---- */

/* Parents of cached children placed in n at [from, to) are n. */
static void adopt(struct r4_db *db, r4_node *n, unsigned from, unsigned to)
{
	if (r4_node_level(n->data) < R4_LEVEL_TWIG)
		return;
	for (unsigned i = from; i < to; i++) {
		r4_node *c;

		if (r4_node_item_pid(n->data, db->bs, i) != R4_IPID_NODEPTR)
			continue;
		if ((c = r4_cache_find(db, child_of(db, n, i))))
			c->parent = n;
	}
}

/* lv[level].node's first key became k: update the pointer keys above. */
static void fix_lkey(struct r4_db *db, struct r4_path *p, unsigned level, const r4_key *k)
{
	for (unsigned l = level; l < p->height; l++) {
		r4_node *up = p->lv[l + 1].node;
		int i = p->lv[l + 1].pos;

		r4_node_dirty(db, up);
		r4_node_set_key(up->data, db->bs, (unsigned)i, k);
		R4_INVARIANT(keys_ordered(db, up, i ? (unsigned)i - 1 : 0, (unsigned)i + 2));
		if (i != 0)
			break;
	}
}

static unsigned item_cost(const struct r4_db *db, const r4_node *n, unsigned i)
{
	return r4_node_item_len(n->data, db->bs, i) + R4_IH_SIZE;
}

/* Append items [from, nr) of src to the end of dst (which has room), then
 * cut them from src. */
static void move_tail(struct r4_db *db, r4_node *src, unsigned from, r4_node *dst)
{
	unsigned nr = r4_node_nr(src->data), d0 = r4_node_nr(dst->data);
	r4_key k;

	for (unsigned i = from; i < nr; i++) {
		unsigned len = r4_node_item_len(src->data, db->bs, i);
		uint8_t *to;

		r4_node_key(src->data, db->bs, i, &k);
		to = r4_node_insert(dst->data, db->bs, r4_node_nr(dst->data), &k,
				    r4_node_item_pid(src->data, db->bs, i), len);
		memcpy(to, ibody(src, db, i), len);
	}
	if (from < nr)
		r4_node_remove(src->data, db->bs, from, nr - from);
	adopt(db, dst, d0, r4_node_nr(dst->data));
}

static int grow(struct r4_db *db, struct r4_path *p)
{
	r4_node *old = p->lv[p->height].node, *root;
	uint8_t ptr[8];
	r4_key k;
	int rc;

	if (p->height >= R4_MAX_HEIGHT)
		return -EFBIG;
	if ((rc = r4_node_new(db, p->height + 1, &root)))
		return rc;
	r4_node_key(old->data, db->bs, 0, &k);
	r4_le64_put(ptr, old->blk);
	memcpy(r4_node_insert(root->data, db->bs, 0, &k, R4_IPID_NODEPTR, 8), ptr, 8);
	old->parent = root;
	p->height++;
	p->lv[p->height].node = root;
	p->lv[p->height].pos = 0;
	db->root = root->blk;
	db->height = p->height;
	return 0;
}

static int insert_at(struct r4_db *db, struct r4_path *p, unsigned level, unsigned idx,
		     const r4_key *k, unsigned pid, const void *body, unsigned len);

/* Put a pointer to the new node c right after lv[level]'s pointer
 * (before it when `before`). */
static int link_node(struct r4_db *db, struct r4_path *p, unsigned level, r4_node *c,
		     bool before)
{
	uint8_t ptr[8];
	r4_key k;
	int rc;

	if (level == p->height && (rc = grow(db, p)))
		return rc;
	r4_node_key(c->data, db->bs, 0, &k);
	r4_le64_put(ptr, c->blk);
	return insert_at(db, p, level + 1, (unsigned)p->lv[level + 1].pos + (before ? 0 : 1), &k,
			 R4_IPID_NODEPTR, ptr, 8);
}

static void put_item(struct r4_db *db, r4_node *n, unsigned idx, const r4_key *k, unsigned pid,
		     const void *body, unsigned len)
{
	r4_node_dirty(db, n);
	memcpy(r4_node_insert(n->data, db->bs, idx, k, pid, len), body, len);
	R4_INVARIANT(keys_ordered(db, n, 0, UINT_MAX));
	if (pid == R4_IPID_NODEPTR)
		adopt(db, n, idx, idx + 1);
}

/* The sibling under the same parent, at offset dir (-1 or +1), if it is a
 * formatted node of this level. */
static int sibling(struct r4_db *db, struct r4_path *p, unsigned level, int dir, r4_node **out)
{
	r4_node *up = p->lv[level + 1].node;
	int i = p->lv[level + 1].pos + dir;

	*out = NULL;
	if (level >= p->height || i < 0 || i >= (int)r4_node_nr(up->data) ||
	    r4_node_item_pid(up->data, db->bs, (unsigned)i) != R4_IPID_NODEPTR)
		return 0;
	return get_child(db, up, (unsigned)i, level, out);
}

/* Try the neighbours: append past a full node into the right sibling's
 * front, or prepend into the left sibling's end.  1 done, 0 not possible. */
static int insert_neighbour(struct r4_db *db, struct r4_path *p, unsigned level, unsigned idx,
			    const r4_key *k, unsigned pid, const void *body, unsigned len)
{
	r4_node *n = p->lv[level].node, *s;
	int rc;

	if (idx == r4_node_nr(n->data)) {
		if ((rc = sibling(db, p, level, +1, &s)) || !s)
			return rc;
		if (r4_node_free(s->data) >= len + R4_IH_SIZE) {
			r4_node *up = p->lv[level + 1].node;

			put_item(db, s, 0, k, pid, body, len);
			r4_node_dirty(db, up);
			r4_node_set_key(up->data, db->bs, (unsigned)p->lv[level + 1].pos + 1, k);
			r4_node_put(db, s);
			return 1;
		}
		r4_node_put(db, s);
	} else if (idx == 0) {
		if ((rc = sibling(db, p, level, -1, &s)) || !s)
			return rc;
		if (r4_node_free(s->data) >= len + R4_IH_SIZE) {
			put_item(db, s, r4_node_nr(s->data), k, pid, body, len);
			r4_node_put(db, s);
			return 1;
		}
		r4_node_put(db, s);
	}
	return 0;
}

/* Cost of virtual item j: the old items with the new one at idx. */
static unsigned vcost(const struct r4_db *db, const r4_node *n, unsigned idx, unsigned len,
		      unsigned j)
{
	return j == idx ? len + R4_IH_SIZE : item_cost(db, n, j < idx ? j : j - 1);
}

/*
 * Split lv[level] so that the new item fits.  Of the split points s (the
 * first s virtual items stay left) where both halves fit, take: when
 * appending at the node's end, the largest (sequential growth keeps the
 * left node full); in the middle of a leaf, the largest up to just after
 * the new item; in the middle of an internal node, the one nearest to half
 * the bytes.  1 done, 0 when no split fits.
 */
static int split_insert(struct r4_db *db, struct r4_path *p, unsigned level, unsigned idx,
			const r4_key *k, unsigned pid, const void *body, unsigned len)
{
	r4_node *n = p->lv[level].node, *r;
	unsigned nr = r4_node_nr(n->data), cap = db->bs - r4_node_hdr_size(db->node_pid);
	unsigned total = 0, left = 0, s = 0, best = 0, bestd = UINT32_MAX;
	int rc;

	for (unsigned j = 0; j <= nr; j++)
		total += vcost(db, n, idx, len, j);
	for (unsigned j = 1; j <= nr; j++) {
		left += vcost(db, n, idx, len, j - 1);
		if (left > cap)
			break;
		if (total - left > cap)
			continue;
		unsigned d = left > total / 2 ? left - total / 2 : total / 2 - left;

		/* a leaf cut in its middle ends with the new item: what follows it
		 * (the next run of keys: bodies after stat data, say) moves right
		 * whole, and the run being appended to keeps growing in place;
		 * appends keep the left full; internal nodes split balanced, since
		 * pointers arrive in the middle */
		if (level == R4_LEVEL_LEAF && idx != 0 && idx != nr) {
			if (j <= idx + 1) {
				best = j;
				bestd = 0;
			}
			continue;
		}
		if (idx == nr || d < bestd) {
			best = j;
			bestd = d;
		}
	}
	if ((s = best) == 0)
		return 0;
	if ((rc = r4_node_new(db, level, &r)))
		return rc;
	r4_node_dirty(db, n);
	if (s <= idx) {
		move_tail(db, n, s, r);
		put_item(db, r, idx - s, k, pid, body, len);
	} else {
		move_tail(db, n, s - 1, r);
		put_item(db, n, idx, k, pid, body, len);
		if (idx == 0)
			fix_lkey(db, p, level, k);
	}
	rc = link_node(db, p, level, r, false);
	r4_node_put(db, r);
	return rc ? rc : 1;
}

static int insert_at(struct r4_db *db, struct r4_path *p, unsigned level, unsigned idx,
		     const r4_key *k, unsigned pid, const void *body, unsigned len)
{
	r4_node *n = p->lv[level].node, *m;
	int rc;

	if (r4_node_free(n->data) >= len + R4_IH_SIZE) {
		put_item(db, n, idx, k, pid, body, len);
		if (idx == 0)
			fix_lkey(db, p, level, k);
		return 0;
	}
	if ((rc = insert_neighbour(db, p, level, idx, k, pid, body, len)))
		return rc < 0 ? rc : 0;
	if ((rc = split_insert(db, p, level, idx, k, pid, body, len)))
		return rc < 0 ? rc : 0;
	/* No two-way split fits: the new item gets a node of its own. */
	if (idx != 0 && idx != r4_node_nr(n->data)) {
		/* cut n at idx first, then the item goes between */
		r4_node *r;

		if ((rc = r4_node_new(db, level, &r)))
			return rc;
		r4_node_dirty(db, n);
		move_tail(db, n, idx, r);
		rc = link_node(db, p, level, r, false);
		r4_node_put(db, r);
		if (rc)
			return rc;
		/* the path above may have changed: find n's place again */
		r4_key nk;
		r4_node_key(n->data, db->bs, 0, &nk);
		r4_path_release(db, p);
		if ((rc = r4_tree_lookup(db, &nk, level, p)))
			return rc;
		return insert_at(db, p, level, r4_node_nr(p->lv[level].node->data), k, pid, body,
				 len);
	}
	if ((rc = r4_node_new(db, level, &m)))
		return rc;
	put_item(db, m, 0, k, pid, body, len);
	rc = link_node(db, p, level, m, idx == 0);
	r4_node_put(db, m);
	return rc;
}

/* A leaf item whose search ended on a twig extent (or before the first
 * twig item): the front of the next leaf, or a new leaf. */
static int insert_after_extent(struct r4_db *db, struct r4_path *p, const r4_key *k,
			       unsigned pid, const void *body, unsigned len)
{
	r4_node *t = p->lv[R4_LEVEL_TWIG].node, *leaf;
	int next = p->lv[R4_LEVEL_TWIG].pos + 1;
	uint8_t ptr[8];
	int rc;

	if (next < (int)r4_node_nr(t->data) &&
	    r4_node_item_pid(t->data, db->bs, (unsigned)next) == R4_IPID_NODEPTR) {
		if ((rc = get_child(db, t, (unsigned)next, R4_LEVEL_LEAF, &leaf)))
			return rc;
		p->lv[R4_LEVEL_TWIG].pos = next;
		p->lv[R4_LEVEL_LEAF].node = leaf;
		p->lv[R4_LEVEL_LEAF].pos = -1;
		return insert_at(db, p, R4_LEVEL_LEAF, 0, k, pid, body, len);
	}
	if ((rc = r4_node_new(db, R4_LEVEL_LEAF, &leaf)))
		return rc;
	put_item(db, leaf, 0, k, pid, body, len);
	r4_le64_put(ptr, leaf->blk);
	rc = insert_at(db, p, R4_LEVEL_TWIG, (unsigned)next, k, R4_IPID_NODEPTR, ptr, 8);
	r4_node_put(db, leaf);
	return rc;
}

/* An extent at twig position after lv[2].pos: the leaf under that pointer
 * must not hold keys greater than k, or it is cut in two first. */
static int split_leaf_for_extent(struct r4_db *db, struct r4_path *p, const r4_key *k,
				 bool *again)
{
	r4_node *t = p->lv[R4_LEVEL_TWIG].node, *leaf, *r;
	int pos = p->lv[R4_LEVEL_TWIG].pos, cut;
	int rc;

	*again = false;
	if (pos < 0 || r4_node_item_pid(t->data, db->bs, (unsigned)pos) != R4_IPID_NODEPTR)
		return 0;
	if ((rc = get_child(db, t, (unsigned)pos, R4_LEVEL_LEAF, &leaf)))
		return rc;
	cut = r4_node_lookup(leaf->data, db->bs, k) + 1;
	if (cut >= (int)r4_node_nr(leaf->data)) {
		r4_node_put(db, leaf);
		return 0;
	}
	if ((rc = r4_node_new(db, R4_LEVEL_LEAF, &r))) {
		r4_node_put(db, leaf);
		return rc;
	}
	r4_node_dirty(db, leaf);
	move_tail(db, leaf, (unsigned)cut, r);
	p->lv[R4_LEVEL_LEAF].node = leaf;
	p->lv[R4_LEVEL_LEAF].pos = 0;
	rc = link_node(db, p, R4_LEVEL_LEAF, r, false);
	r4_node_put(db, r);
	*again = true;
	return rc;
}

/* An item of key k changes (r4_tree_changes). */
static void key_changed(struct r4_db *db, const r4_key *k)
{
	uint64_t oid = r4_key_type(k) == R4_KEY_NAME ? r4_key_locality(k) : r4_key_objectid(k);

	db->changed[r4_tree_change_slot(db, oid)]++;
	if (oid == R4_ROOT_OID && r4_key_type(k) == R4_KEY_SD)
		db->changed_root++;
}

/* The item at p changes. */
static void item_changed(struct r4_db *db, const struct r4_path *p)
{
	r4_key k;

	if (r4_path_item(db, p, &k, NULL, NULL, NULL))
		key_changed(db, &k);
}

int r4_tree_insert(struct r4_db *db, struct r4_path *p, const r4_key *k, unsigned pid,
		   const void *body, unsigned len)
{
	int rc;

	key_changed(db, k);

	if (len == 0 || len > r4_tree_max_item(db)) {
		rc = -EINVAL;
	} else if (pid == R4_IPID_EXTENT) {
		bool again;

		if (p->level != R4_LEVEL_TWIG) {
			r4_node_put(db, p->lv[1].node);
			p->lv[1].node = NULL;
			p->level = R4_LEVEL_TWIG;
		}
		rc = split_leaf_for_extent(db, p, k, &again);
		if (!rc && again) {
			r4_path_release(db, p);
			rc = r4_tree_lookup(db, k, R4_LEVEL_TWIG, p);
		}
		if (!rc)
			rc = insert_at(db, p, R4_LEVEL_TWIG, (unsigned)(p->lv[2].pos + 1), k, pid, body,
				       len);
	} else if (p->level == R4_LEVEL_TWIG) {
		rc = insert_after_extent(db, p, k, pid, body, len);
	} else {
		rc = insert_at(db, p, R4_LEVEL_LEAF, (unsigned)(p->lv[1].pos + 1), k, pid, body, len);
	}
	r4_path_release(db, p);
	return rc;
}

/* ---- removal ---- */

static void drop_block(struct r4_db *db, r4_node *n)
{
	if (!r4_blk_is_fake(n->blk)) {
		uint64_t before = r4_alloc_free_count(db->alloc);

		r4_alloc_free(db->alloc, n->blk, 1);
		/* freed once (an image that marks a tree block free breaks it) */
		R4_INVARIANT(r4_alloc_free_count(db->alloc) == before + 1);
		(void)before;
	}
	r4_node_forget(db, n);
}

static void remove_at(struct r4_db *db, struct r4_path *p, unsigned level)
{
	r4_node *n = p->lv[level].node;
	unsigned pos = (unsigned)p->lv[level].pos;
	r4_key k;

	r4_node_dirty(db, n);
	r4_node_remove(n->data, db->bs, pos, 1);
	if (r4_node_nr(n->data) == 0 && level < p->height) {
		p->lv[level].node = NULL;
		n->refs--;
		drop_block(db, n);
		remove_at(db, p, level + 1);
		return;
	}
	if (pos == 0 && r4_node_nr(n->data) > 0) {
		r4_node_key(n->data, db->bs, 0, &k);
		fix_lkey(db, p, level, &k);
	}
}

/* A root with a single pointer above the twig level hands over to its child. */
static int shrink(struct r4_db *db)
{
	while (db->height > R4_LEVEL_TWIG) {
		r4_node *root, *c;
		int rc;

		if ((rc = r4_node_get(db, db->root, db->height, &root)))
			return rc;
		if (r4_node_nr(root->data) != 1) {
			r4_node_put(db, root);
			return 0;
		}
		if ((rc = get_child(db, root, 0, db->height - 1, &c))) {
			r4_node_put(db, root);
			return rc;
		}
		db->root = c->blk;
		db->height--;
		c->parent = NULL;
		r4_node_put(db, c);
		root->refs--;
		drop_block(db, root);
	}
	return 0;
}

int r4_tree_remove(struct r4_db *db, struct r4_path *p)
{
	item_changed(db, p);
	remove_at(db, p, p->level);
	r4_path_release(db, p);
	return shrink(db);
}

unsigned r4_tree_free(const struct r4_db *db, const struct r4_path *p)
{
	(void)db;
	return r4_node_free(p->lv[p->level].node->data);
}

int r4_tree_resize(struct r4_db *db, struct r4_path *p, unsigned at, int delta)
{
	r4_node *n = p->lv[p->level].node;

	if (delta > 0 && r4_node_free(n->data) < (unsigned)delta)
		return -ENOSPC;
	item_changed(db, p);
	r4_node_dirty(db, n);
	r4_node_resize(n->data, db->bs, (unsigned)p->lv[p->level].pos, at, delta);
	return 0;
}

void r4_tree_touch(struct r4_db *db, struct r4_path *p)
{
	item_changed(db, p);
	r4_node_dirty(db, p->lv[p->level].node);
}

void r4_tree_hint(const struct r4_db *db, const struct r4_path *p, bool next,
		  struct r4_item_hint *h)
{
	int pos = p->lv[1].pos + next;

	*h = (struct r4_item_hint){0};
	if (p->level == R4_LEVEL_LEAF && p->lv[1].node && pos >= 0)
		*h = (struct r4_item_hint){p->lv[1].node->blk, db->cache.moves, (unsigned)pos,
					   true};
}

r4_node *r4_tree_at(struct r4_db *db, const struct r4_item_hint *h, const r4_key *k,
		    unsigned pid)
{
	r4_node *n = h->set && h->moves == db->cache.moves ? r4_node_get_cached(db, h->blk) : NULL;
	r4_key got;

	if (!n)
		return NULL;
	if (r4_node_level(n->data) == R4_LEVEL_LEAF && h->pos < r4_node_nr(n->data) &&
	    r4_node_item_pid(n->data, db->bs, h->pos) == pid) {
		r4_node_key(n->data, db->bs, h->pos, &got);
		if (!r4_key_cmp(&got, k))
			return n;
	}
	r4_node_put(db, n);
	return NULL;
}

void r4_tree_touch_at(struct r4_db *db, r4_node *n, unsigned pos)
{
	r4_key k;

	r4_node_key(n->data, db->bs, pos, &k);
	key_changed(db, &k);
	r4_node_dirty(db, n);
}

void r4_tree_set_key(struct r4_db *db, struct r4_path *p, const r4_key *k)
{
	r4_node *n = p->lv[p->level].node;
	unsigned pos = (unsigned)p->lv[p->level].pos;

	item_changed(db, p);
	key_changed(db, k);
	r4_node_dirty(db, n);
	r4_node_set_key(n->data, db->bs, pos, k);
	R4_INVARIANT(keys_ordered(db, n, pos ? pos - 1 : 0, pos + 2));
	if (pos == 0)
		fix_lkey(db, p, p->level, k);
}

/* ---- squeezing (the dancing tree's packing, ENGINE.md 3.4) ---- */

/*
 * Moving part of an item.  Whole items leave a leaf's last bytes empty: a
 * directory of small files fills leaves with 50-byte entries, 94-byte stat
 * data and 138-byte tails, so up to 137 bytes of each leaf would go
 * unused.  Entries (cde units) and tail bytes can be cut anywhere, as the
 * kernel's and progs' shifts cut them, so the squeeze moves the front of
 * the right node's first item into the left node: onto the left node's
 * last item when the two are one run (a join: no new header), else as a
 * new item.  A tail so cut leaves a file in two leaves, whose items the
 * reader follows as it does a big file's.
 */

/* Is item b of s the continuation of item a of n: entries of the same
 * directory, or the same file's bytes going on where a's end? */
static bool joins_at(const struct r4_db *db, const r4_node *n, unsigned a, const r4_node *s,
		     unsigned b)
{
	unsigned pid = r4_node_item_pid(s->data, db->bs, b);
	r4_key ka, kb;

	if ((pid != R4_ITEM_CDE40 && pid != R4_ITEM_PLAIN40) ||
	    r4_node_level(s->data) != R4_LEVEL_LEAF || r4_node_item_pid(n->data, db->bs, a) != pid)
		return false;	/* (only entries and tails join: most pairs end here) */
	r4_node_key(n->data, db->bs, a, &ka);
	r4_node_key(s->data, db->bs, b, &kb);
	if (pid == R4_ITEM_CDE40)
		return ka.el[0] == kb.el[0];	/* (el0: the directory, NAME) */
	return pid == R4_ITEM_PLAIN40 && ka.el[0] == kb.el[0] && ka.el[1] == kb.el[1] &&
	       ka.el[2] == kb.el[2] &&
	       r4_key_offset(&ka) + r4_node_item_len(n->data, db->bs, a) == r4_key_offset(&kb);
}

/* Does s's first item go on from n's last? */
static bool joins(const struct r4_db *db, const r4_node *n, const r4_node *s)
{
	return r4_node_nr(n->data) && r4_node_nr(s->data) &&
	       joins_at(db, n, r4_node_nr(n->data) - 1, s, 0);
}

/* Decode the cde item at b (len bytes, key k) into e, n units. */
static bool cde_units(const r4_key *k, const uint8_t *b, unsigned len, struct r4_dirent **e,
		      unsigned *n, unsigned extra)
{
	if (r4_item_cde_count(b, len, n))
		return false;
	if (!(*e = r4_malloc((*n + extra) * sizeof(**e))))
		return false;
	if (r4_item_cde_decode_all(k, b, len, *e, *n)) {
		r4_free(*e);
		*e = NULL;
		return false;
	}
	return true;
}

/* Items i and i + 1 of leaf n, which join, as one (an item that grew
 * while its node split goes on in a second item: the split's new node
 * took the front of the first's continuation).  1 done, 0 not (a cde item
 * that does not decode, or no memory: the pair just stays). */
static int join_pair(struct r4_db *db, r4_node *n, unsigned i)
{
	unsigned la = r4_node_item_len(n->data, db->bs, i), lb = r4_node_item_len(n->data, db->bs, i + 1);
	unsigned pid = r4_node_item_pid(n->data, db->bs, i), na = 0, nb = 0;
	struct r4_dirent *e = NULL, *eb = NULL;
	uint8_t *copy;
	r4_key ka, kb;
	int rc = 0;

	if (!(copy = r4_malloc(la + lb)))
		return 0;
	memcpy(copy, ibody(n, db, i), la + lb);	/* (bodies are adjacent) */
	if (pid == R4_ITEM_CDE40) {
		r4_node_key(n->data, db->bs, i, &ka);
		r4_node_key(n->data, db->bs, i + 1, &kb);
		if (!cde_units(&kb, copy + la, lb, &eb, &nb, 0) ||
		    !cde_units(&ka, copy, la, &e, &na, nb))
			goto out;
		memcpy(e + na, eb, nb * sizeof(*e));
	}
	r4_node_remove(n->data, db->bs, i + 1, 1);
	if (pid == R4_ITEM_CDE40) {
		r4_node_resize(n->data, db->bs, i, la, (int)(lb - R4_CDE_HDR));
		r4_item_cde_encode(e, na + nb, r4_node_body(n->data, db->bs, i));
	} else {
		r4_node_resize(n->data, db->bs, i, la, (int)lb);
		memcpy(r4_node_body(n->data, db->bs, i) + la, copy + la, lb);
	}
	rc = 1;
out:
	r4_free(eb);
	r4_free(e);
	r4_free(copy);
	return rc;
}

/* Join the items of dirty node n that go on from each other. */
static void join_inside(struct r4_db *db, r4_node *n)
{
	for (unsigned i = 0; i + 1 < r4_node_nr(n->data);)
		if (!joins_at(db, n, i, n, i + 1) || !join_pair(db, n, i))
			i++;
}

/* The first m of the len bytes of s's first tail item to n. */
static void shift_tail(struct r4_db *db, r4_node *n, r4_node *s, bool join, unsigned m)
{
	unsigned len = r4_node_item_len(s->data, db->bs, 0), a = r4_node_nr(n->data);
	uint8_t *to;
	r4_key k;

	r4_node_key(s->data, db->bs, 0, &k);
	if (join) {
		unsigned old = r4_node_item_len(n->data, db->bs, a - 1);

		r4_node_resize(n->data, db->bs, a - 1, old, (int)m);
		to = r4_node_body(n->data, db->bs, a - 1) + old;
	} else {
		to = r4_node_insert(n->data, db->bs, a, &k, R4_ITEM_PLAIN40, m);
	}
	memcpy(to, ibody(s, db, 0), m);
	if (m == len) {
		r4_node_remove(s->data, db->bs, 0, 1);
		return;
	}
	r4_node_resize(s->data, db->bs, 0, 0, -(int)m);
	k.el[3] += m;
	r4_node_set_key(s->data, db->bs, 0, &k);
}

/* The first units of s's first cde item to n, as many as room bytes take
 * (beside a new item's headers): true when some moved. */
static bool shift_cde(struct r4_db *db, r4_node *n, r4_node *s, bool join, unsigned room)
{
	unsigned slen = r4_node_item_len(s->data, db->bs, 0), a = r4_node_nr(n->data);
	unsigned nlen = join ? r4_node_item_len(n->data, db->bs, a - 1) : 0, ns, nn = 0, m;
	struct r4_dirent *e = NULL, *es = NULL;
	uint8_t *copy;
	size_t size = 0;
	r4_key sk, nk;
	bool done = false;

	/* (units point into the bodies, which are rewritten: decode copies) */
	if (!(copy = r4_malloc(nlen + slen)))
		return false;
	if (join) {
		memcpy(copy, ibody(n, db, a - 1), nlen);
		r4_node_key(n->data, db->bs, a - 1, &nk);
	}
	memcpy(copy + nlen, ibody(s, db, 0), slen);
	r4_node_key(s->data, db->bs, 0, &sk);
	if (!cde_units(&sk, copy + nlen, slen, &es, &ns, 0) ||
	    (join ? !cde_units(&nk, copy, nlen, &e, &nn, ns) : !(e = r4_malloc(ns * sizeof(*e)))))
		goto out;
	memcpy(e + nn, es, ns * sizeof(*e));
	for (m = 0; m < ns && size + r4_item_cde_unit_size(&e[nn + m]) <= room; m++)
		size += r4_item_cde_unit_size(&e[nn + m]);
	if (m == 0)
		goto out;
	if (join)
		r4_node_resize(n->data, db->bs, a - 1, nlen, (int)size);
	else
		r4_node_insert(n->data, db->bs, a, &sk, R4_ITEM_CDE40, (unsigned)(R4_CDE_HDR + size));
	r4_item_cde_encode(e, nn + m, r4_node_body(n->data, db->bs, join ? a - 1 : a));
	if (m == ns) {
		r4_node_remove(s->data, db->bs, 0, 1);
	} else {
		r4_node_resize(s->data, db->bs, 0, 0, -(int)size);
		r4_item_cde_encode(e + nn + m, ns - m, r4_node_body(s->data, db->bs, 0));
		r4_node_set_key(s->data, db->bs, 0, &e[nn + m].de_key);
	}
	done = true;
out:
	r4_free(es);
	r4_free(e);
	r4_free(copy);
	return done;
}

/*
 * What n must have free for the front of s's first item to move into it
 * (onto n's last item when it joins, else as a new item; only a join when
 * join_only): the smallest piece with its headers; UINT_MAX when none can
 * move (not a cde or tail item, or a cde item that does not decode).
 */
static unsigned front_need(const struct r4_db *db, const r4_node *n, const r4_node *s,
			   bool join_only)
{
	unsigned pid, len;
	struct r4_dirent e;
	r4_key k;
	bool join;

	if (!r4_node_nr(s->data) || r4_node_level(s->data) != R4_LEVEL_LEAF)
		return UINT_MAX;
	pid = r4_node_item_pid(s->data, db->bs, 0);
	join = joins(db, n, s);
	if ((join_only && !join) || (pid != R4_ITEM_PLAIN40 && pid != R4_ITEM_CDE40))
		return UINT_MAX;
	r4_node_key(s->data, db->bs, 0, &k);
	len = r4_node_item_len(s->data, db->bs, 0);
	if (pid == R4_ITEM_PLAIN40) {
		r4_key next;

		/* (a cut moves the rest's key on by what moved: only up to the
		 * next item's, which a file's own tails never overlap) */
		if (r4_node_nr(s->data) > 1) {
			r4_node_key(s->data, db->bs, 1, &next);
			k.el[3] += len - 1;
			if (r4_key_cmp(&k, &next) >= 0)
				return UINT_MAX;
		}
		return join ? 1 : R4_IH_SIZE + 1;
	}
	if (r4_item_cde_decode(&k, ibody(s, db, 0), len, 0, &e))
		return UINT_MAX;
	return (unsigned)r4_item_cde_unit_size(&e) + (join ? 0 : R4_IH_SIZE + R4_CDE_HDR);
}

/* Move the front of leaf s's first item to the end of n, as much as fits
 * (see front_need).  true when some moved. */
static bool shift_front(struct r4_db *db, r4_node *n, r4_node *s, bool join_only)
{
	unsigned free = r4_node_free(n->data), pid;
	bool join;

	if (free < front_need(db, n, s, join_only))
		return false;
	pid = r4_node_item_pid(s->data, db->bs, 0);
	join = joins(db, n, s);
	if (!join)
		free -= R4_IH_SIZE;
	if (pid == R4_ITEM_PLAIN40)
		shift_tail(db, n, s, join, R4_MIN(free, r4_node_item_len(s->data, db->bs, 0)));
	else if (!shift_cde(db, n, s, join, join ? free : free - R4_CDE_HDR))
		return false;
	return true;
}

bool r4_tree_leaf_packed(const struct r4_db *db, const r4_node *a, const r4_node *b)
{
	return !r4_node_nr(b->data) ||
	       (r4_node_item_len(b->data, db->bs, 0) + R4_IH_SIZE > r4_node_free(a->data) &&
		r4_node_free(a->data) < front_need(db, a, b, false));
}

/*
 * A commit's squeeze: the neighbours it read from the image only to see
 * whether all of them fit (clean ones not in memory), and how many of
 * those it took.  While at least one in SQUEEZE_HIT of them is taken it
 * reads on (a small tree that many short sessions left in pieces: they
 * mostly fit); when fewer, it stops reading and packs what is in memory
 * (random inserts into a packed tree of 10^6 files read one full leaf per
 * dirty one, none fitting: bench/RESULTS.md).  The repacker's squeeze
 * (db->place_hint) always reads.
 */
#define SQUEEZE_HIT 8

struct squeeze {
	unsigned read, taken;
};

/*
 * The node right of lv[level] at its level, with a path to it in *q: the
 * sibling under the same parent, else the first child of the next subtree
 * (a cousin; leaves under two twigs pack as well as under one).  Found
 * only when it is a formatted node whose parents are dirty or, as a
 * clean parent made dirty costs a block the commit may lack, when there
 * is slack; one not in memory (or on the way to it) only while sq allows
 * reading, and then *read is set.  0 with q->lv[level].node NULL when
 * there is none.
 */
static int right_of(struct r4_db *db, const struct r4_path *p, unsigned level,
		    struct squeeze *sq, struct r4_path *q, bool *read)
{
	bool clean = false, may_read = db->place_hint || sq->read < SQUEEZE_HIT ||
				       sq->taken * SQUEEZE_HIT >= sq->read;
	unsigned l = level + 1;
	int rc = 0;

	memset(q, 0, sizeof(*q));
	*read = false;
	while (l <= p->height &&
	       (unsigned)p->lv[l].pos + 1 >= r4_node_nr(p->lv[l].node->data))
		l++;
	if (l > p->height)
		return 0;
	/* (down from p's ancestor by pointers: keys may repeat, hash collisions) */
	q->height = p->height;
	q->level = level;
	for (unsigned u = l; u <= p->height; u++) {
		r4_node_ref(p->lv[u].node);
		q->lv[u].node = p->lv[u].node;
		q->lv[u].pos = p->lv[u].pos + (u == l);
	}
	for (unsigned u = l; u > level && !rc; u--) {
		r4_node *up = q->lv[u].node;
		uint64_t c;

		if (r4_node_item_pid(up->data, db->bs, (unsigned)q->lv[u].pos) != R4_IPID_NODEPTR) {
			rc = 1;		/* a twig's extent: no formatted node there */
			break;
		}
		c = child_of(db, up, (unsigned)q->lv[u].pos);
		if (!r4_blk_is_fake(c) && !r4_cache_find(db, c)) {
			if (!may_read) {
				rc = 1;
				break;
			}
			*read = true;
		}
		rc = get_child(db, up, (unsigned)q->lv[u].pos, u - 1, &q->lv[u - 1].node);
	}
	sq->read += *read;
	/* the parents whose keys change: up to the one that holds it past 0 */
	for (unsigned u = level + 1; !rc && u <= q->height; u++) {
		clean |= !q->lv[u].node->dirty;
		if (q->lv[u].pos != 0)
			break;
	}
	if (rc || (clean && !r4_txn_slack(db))) {
		r4_path_release(db, q);
		memset(q, 0, sizeof(*q));
	}
	return rc < 0 ? rc : 0;
}

/*
 * Fill n from the left: pull whole items from the node to its right
 * while they fit, then the front of the next (first joining what goes on
 * from n's last item).  A clean neighbour is touched only when all of it
 * fits (one write instead of one, and a block less; one not in memory is
 * read as sq allows, right_of); an emptied one leaves the tree and the
 * next one is tried.  Then the walk moves on to a dirty neighbour and
 * fills that one.  Going left to right, the room a split left behind is
 * taken, not passed on.  p rests on n.
 */
static int pull_run(struct r4_db *db, struct r4_path *p, unsigned level, struct squeeze *sq)
{
	int rc;

	for (;;) {
		r4_node *n = p->lv[level].node, *s;
		unsigned moved = 0, nr;
		struct r4_path q;
		bool changed, read;
		r4_key k;

		if (level == R4_LEVEL_LEAF)
			join_inside(db, n);
		if ((rc = right_of(db, p, level, sq, &q, &read)) || !(s = q.lv[level].node))
			return rc;
		nr = r4_node_nr(s->data);
		if (!s->dirty && r4_node_used(s->data, db->bs, 0, nr) > r4_node_free(n->data)) {
			r4_path_release(db, &q);
			return 0;
		}
		sq->taken += read;
		changed = shift_front(db, n, s, true);
		nr = r4_node_nr(s->data);
		for (unsigned room = r4_node_free(n->data);
		     moved < nr && room >= item_cost(db, s, moved); moved++)
			room -= item_cost(db, s, moved);
		if (moved) {
			unsigned d0 = r4_node_nr(n->data);

			for (unsigned i = 0; i < moved; i++) {
				unsigned len = r4_node_item_len(s->data, db->bs, i);

				r4_node_key(s->data, db->bs, i, &k);
				memcpy(r4_node_insert(n->data, db->bs, r4_node_nr(n->data), &k,
						      r4_node_item_pid(s->data, db->bs, i), len),
				       ibody(s, db, i), len);
			}
			adopt(db, n, d0, r4_node_nr(n->data));
			r4_node_remove(s->data, db->bs, 0, moved);
			changed = true;
			if (level == R4_LEVEL_LEAF)	/* (what came may go on from each other) */
				join_inside(db, n);
		}
		/* then the front of the item that did not fit whole (only a dirty s
		 * keeps items here) */
		if (r4_node_nr(s->data) && shift_front(db, n, s, false))
			changed = true;
		if (changed) {
			r4_node_dirty(db, n);
			r4_node_dirty(db, s);
		}
		if (!r4_node_nr(s->data)) {
			/* emptied: it and its pointer go */
			q.lv[level].node = NULL;
			s->refs--;
			drop_block(db, s);
			remove_at(db, &q, level + 1);
			r4_path_release(db, &q);
			continue;
		}
		if (changed) {
			r4_node_key(s->data, db->bs, 0, &k);
			fix_lkey(db, &q, level, &k);
		}
		if (!s->dirty) {
			r4_path_release(db, &q);
			return 0;
		}
		r4_path_release(db, p);	/* walk on: s is the node to fill */
		*p = q;
	}
}

static int cmp_first_key(const void *a, const void *b)
{
	const r4_key *x = a, *y = b;

	return r4_key_cmp(x, y);
}

/*
 * Before allocation at commit: on each level from the leaves up, every
 * dirty node, left to right, takes what fits from its right neighbours
 * (pull_run), so nodes split during the transaction are packed again.
 */
/* Squeeze the dirty nodes of level into their dirty right neighbours. */
static int squeeze_level(struct r4_db *db, unsigned level, struct squeeze *sq)
{
	struct r4_cache *c = &db->cache;
	r4_key *keys = NULL, upto;
	size_t nk = 0;
	bool walked = false;
	int rc = 0;

	if (c->ndirty && !(keys = r4_malloc(c->ndirty * sizeof(*keys))))
		return -ENOMEM;
	for (r4_node *n = c->dirty.next; n != &c->dirty; n = n->next)
		if (r4_node_level(n->data) == level && r4_node_nr(n->data))
			r4_node_key(n->data, db->bs, 0, &keys[nk++]);
	if (nk)
		qsort(keys, nk, sizeof(*keys), cmp_first_key);
	for (size_t i = 0; i < nk && !rc; i++) {
		struct r4_path p;
		r4_key fk;

		/* (a run went through every dirty node from its first to where it
		 * rested, whose first key only grew since: one started again from
		 * any of them would walk the rest of the run again, and a level
		 * of dirty nodes that were full took time in their square) */
		if (walked && r4_key_cmp(&keys[i], &upto) <= 0)
			continue;
		if ((rc = r4_tree_lookup(db, &keys[i], level, &p)))
			break;
		r4_node *n = p.lv[level].node;
		/* (a node an earlier run emptied or filled from is found no more) */
		if (n->dirty && r4_node_nr(n->data) && p.lv[level].pos == 0 &&
		    (r4_node_key(n->data, db->bs, 0, &fk), !r4_key_cmp(&fk, &keys[i]))) {
			rc = pull_run(db, &p, level, sq);
			n = p.lv[level].node;
			if (!rc && r4_node_nr(n->data)) {
				r4_node_key(n->data, db->bs, 0, &upto);
				walked = true;
			}
		}
		r4_path_release(db, &p);
	}
	r4_free(keys);
	return rc ? rc : shrink(db);
}

int r4_tree_squeeze(struct r4_db *db)
{
	struct squeeze sq = {0};
	int rc = 0;

	R4_INVARIANT(balanced_ok(db));	/* what the operations' balancing left */
	for (unsigned level = R4_LEVEL_LEAF; level < db->height && !rc; level++)
		rc = squeeze_level(db, level, &sq);
	/* the repacker's: leaves the twigs' squeeze made neighbours, packed
	 * too (else the next pass would find them apart and move them) */
	if (!rc && db->place_hint && db->height > R4_LEVEL_TWIG)
		rc = squeeze_level(db, R4_LEVEL_LEAF, &sq);
	return rc;
}

/* ---- commit support ---- */

/*
 * Relocation of changed nodes (ENGINE.md 4.4): a dirty node written to a
 * new block costs one write, through the journal two.  Moving it changes
 * its parent's pointer, which costs nothing when the parent is dirty
 * anyway (or the node is the root: its new block goes into the super
 * block, logged then, which most commits that dirty the root do anyway
 * for the free count).  So, bottom-up, a clean parent with at least
 * three dirty children is made dirty (one or two writes for it against
 * three or more saved), and then, top-down, every dirty node whose parent is dirty gets
 * a fake number, placed with the new nodes; its old block is freed at
 * commit.  Skipped when free space is short: a move needs a block before
 * its old one comes back.
 */
/* Index of the pointer to blk in up, or -1. */
static int ptr_pos(const struct r4_db *db, const r4_node *up, uint64_t blk)
{
	for (unsigned i = 0; up && i < r4_node_nr(up->data); i++)
		if (r4_node_item_pid(up->data, db->bs, i) == R4_IPID_NODEPTR &&
		    child_of(db, up, i) == blk)
			return (int)i;
	return -1;
}

static void set_ptr(const struct r4_db *db, r4_node *up, unsigned pos, uint64_t blk)
{
	r4_le64_put(up->data + r4_node_item_off(up->data, db->bs, pos), blk);
}

struct moving {
	r4_node *n, *up;	/* up: the parent (NULL for the root) */
	unsigned level, pos;	/* pos: the pointer's index in up */
};

static int cmp_moving(const void *a, const void *b)
{
	const struct moving *x = a, *y = b;

	if (x->level != y->level)
		return x->level < y->level ? -1 : 1;
	return x->up < y->up ? -1 : x->up > y->up;
}

/* The parent of dirty node n, referenced, and the index of its pointer. */
static int find_up(struct r4_db *db, r4_node *n, struct moving *m)
{
	unsigned level = r4_node_level(n->data);
	struct r4_path p;
	r4_key k;
	int rc;

	m->n = n;
	m->level = level;
	m->up = NULL;
	if (n->blk == db->root || level >= db->height || !r4_node_nr(n->data))
		return 0;
	r4_node_key(n->data, db->bs, 0, &k);
	if ((rc = r4_tree_lookup(db, &k, level + 1, &p)))
		return rc;
	r4_node *up = p.lv[level + 1].node;
	int pos = p.lv[level + 1].pos;

	if (up && pos >= 0 && (unsigned)pos < r4_node_nr(up->data) &&
	    r4_node_item_pid(up->data, db->bs, (unsigned)pos) == R4_IPID_NODEPTR &&
	    child_of(db, up, (unsigned)pos) == n->blk) {
		r4_node_ref(up);
		m->up = up;
		m->pos = (unsigned)pos;
	}
	r4_path_release(db, &p);
	return 0;
}

/*
 * The memory bound for nodes: when a transaction's dirty nodes pass the
 * cache's bound, its dirty leaves are written out early to blocks free in
 * the committed state (safe before the commit point: nothing committed
 * can see them), and become clean, so the cache may drop them.  A changed
 * committed leaf so moves (its parent gets dirty), a new one gets its
 * block now, one written early before is rewritten where it is.  Twigs
 * stay dirty: the commit edits those whose extents point to new data,
 * and r4_txn_need counts on their being dirty already.  Between
 * operations only: no path may be held.  Short of space (it does not
 * take from the reserve), it stops: memory grows, nothing breaks.
 */
/* Add dirty node n (with its parent) to v, growing it. */
static int join(struct r4_db *db, struct moving **v, size_t *n, size_t *cap, r4_node *x)
{
	if (r4_grow(v, cap, *n + 1, sizeof(**v), 64))
		return -ENOMEM;
	return find_up(db, x, &(*v)[(*n)++]);
}

int r4_tree_flush_early(struct r4_db *db)
{
	struct r4_cache *c = &db->cache;
	struct r4_wset w = {0};
	size_t cap = c->ndirty + 1, n = 0, k = 0;
	r4_node **v = NULL;
	int rc = 0;

	if (!(v = r4_malloc(cap * sizeof(*v))))
		return -ENOMEM;
	for (r4_node *d = c->dirty.next; d != &c->dirty; d = d->next)
		if (r4_node_level(d->data) == R4_LEVEL_LEAF && !d->refs && d->blk != db->root &&
		    n < cap)
			v[n++] = d;
	for (size_t i = 0; i < n && !rc; i++) {
		r4_node *x = v[i];
		uint64_t blk = x->blk, nb, got;
		bool fake = r4_blk_is_fake(blk);

		if (fake || r4_alloc_is_committed(db->alloc, blk)) {
			struct moving m = {0};

			if (fake) {
				int pos = ptr_pos(db, x->parent, blk);

				if (pos < 0)
					continue;	/* its parent is not known: stays */
				m.up = x->parent;
				m.pos = (unsigned)pos;
			} else if ((rc = find_up(db, x, &m)) || !m.up) {
				continue;
			}
			/* a block now, a parent maybe dirty: not from the reserve */
			if (r4_txn_slack(db) <= r4_txn_reserve(db) + 1 ||
			    r4_alloc_alloc_high(db->alloc, 1, &nb, &got)) {
				if (!fake)
					r4_node_put(db, m.up);
				break;	/* out of space: stop here */
			}
			r4_node_dirty(db, m.up);
			set_ptr(db, m.up, m.pos, nb);
			x->parent = m.up;
			if (!fake) {
				r4_alloc_free(db->alloc, blk, 1);
				r4_node_put(db, m.up);
			}
			r4_node_rekey(db, x, nb);
		}
		r4_node_seal(x->data, db->bs);
		if (!(rc = r4_wset_add(&w, x->blk, x->data, false)))
			v[k++] = x;
	}
	if (!rc && !(rc = r4_wset_write(db, &w)))
		for (size_t i = 0; i < k; i++)
			r4_node_clean(db, v[i]);
	db->flushed_early += rc ? 0 : k;
	r4_free(w.v);
	r4_free(v);
	r4_cache_trim(db);
	return rc;
}

int r4_tree_relocate(struct r4_db *db)
{
	struct r4_cache *c = &db->cache;
	struct moving *v = NULL;
	size_t n = 0, cap = 0;
	int rc = 0;

	/* the dirty committed nodes, then, level by level, parents joining */
	for (r4_node *d = c->dirty.next; d != &c->dirty && !rc; d = d->next) {
		if (r4_blk_is_fake(d->blk) || !r4_alloc_is_committed(db->alloc, d->blk))
			continue;	/* new, or written early: not in the committed tree */
		rc = join(db, &v, &n, &cap, d);
	}
	if (rc || !n)
		goto out;
	for (unsigned level = R4_LEVEL_LEAF; level < db->height && !rc; level++) {
		qsort(v, n, sizeof(*v), cmp_moving);
		for (size_t i = 0; i < n && !rc;) {
			size_t j = i;

			while (j < n && v[j].level == v[i].level && v[j].up == v[i].up)
				j++;
			/* (a moved node takes a block instead of a wandered copy, but
			 * a parent made dirty costs one more) */
			if (v[i].level == level && v[i].up && !v[i].up->dirty && j - i >= 3 &&
			    r4_txn_slack(db)) {
				r4_node *up = v[i].up;

				r4_node_dirty(db, up);
				rc = join(db, &v, &n, &cap, up);	/* the parent joins */
			}
			i = j;
		}
	}
	if (rc)
		goto out;
	/* top-down: higher levels first, so a moved parent is dirty for its children */
	qsort(v, n, sizeof(*v), cmp_moving);
	for (size_t i = n; i-- > 0;) {
		struct moving *m = &v[i];
		uint64_t old = m->n->blk, fake = c->next_fake++;

		if (m->up ? !m->up->dirty : old != db->root)
			continue;
		if (m->up) {
			set_ptr(db, m->up, m->pos, fake);
			m->n->parent = m->up;
		} else {
			db->root = fake;
		}
		r4_node_rekey(db, m->n, fake);
		r4_alloc_free(db->alloc, old, 1);
	}
out:
	for (size_t i = 0; i < n; i++)
		r4_node_put(db, v[i].up);
	r4_free(v);
	return rc;
}


struct placed {
	r4_node *n;
	unsigned level;
	r4_key first;
};

/* Parent-first: higher levels first, left to right within a level. */
static int cmp_placed(const void *a, const void *b)
{
	const struct placed *x = a, *y = b;

	if (x->level != y->level)
		return x->level > y->level ? -1 : 1;
	return r4_key_cmp(&x->first, &y->first);
}

static int cmp_blkno(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static int repoint(struct r4_db *db, r4_node *n, uint64_t blk)
{
	r4_node *up = n->parent;

	if (db->root == n->blk) {
		db->root = blk;
		return 0;
	}
	if (!up)
		return R4_CORRUPT(&db->lg, blk, "new node without a parent");
	int pos = ptr_pos(db, up, n->blk);

	if (pos < 0)
		return R4_CORRUPT(&db->lg, blk, "new node's parent does not point to it");
	set_ptr(db, up, (unsigned)pos, blk);
	return 0;
}

/* n blocks from the top of the free space (runs come downwards, so nodes
 * never take the blocks right after a file's data, where it grows next),
 * into blks in ascending order. */
static int from_top(struct r4_db *db, uint64_t *blks, size_t n)
{
	size_t have = 0;
	int rc = 0;

	while (have < n && !rc) {
		uint64_t blk, got;

		if (!(rc = r4_alloc_alloc_high(db->alloc, n - have, &blk, &got)))
			for (uint64_t k = 0; k < got; k++)
				blks[have++] = blk + k;
	}
	qsort(blks, have, sizeof(*blks), cmp_blkno);
	return rc;
}

/* n blocks from s on, into blks. */
static void take(struct r4_db *db, uint64_t s, size_t n, uint64_t *blks)
{
	r4_alloc_mark_used(db->alloc, s, n);
	for (size_t k = 0; k < n; k++)
		blks[k] = s + k;
}

int r4_tree_place(struct r4_db *db)
{
	struct r4_cache *c = &db->cache;
	struct placed *v = NULL;
	uint64_t *blks = NULL;
	size_t nf = 0, nl = 0, nt = 0;
	int rc = 0;

	if (!c->ndirty)
		return 0;
	if (!(v = r4_malloc(c->ndirty * sizeof(*v))) ||
	    !(blks = r4_malloc(c->ndirty * sizeof(*blks)))) {
		rc = -ENOMEM;
		goto out;
	}
	for (r4_node *n = c->dirty.next; n != &c->dirty; n = n->next)
		if (r4_blk_is_fake(n->blk)) {
			struct placed *p = &v[nf++];

			p->n = n;
			p->level = r4_node_level(n->data);
			if (r4_node_nr(n->data))
				r4_node_key(n->data, db->bs, 0, &p->first);
			else
				memset(&p->first, 0, sizeof(p->first));
		}
	if (!nf)
		goto out;
	qsort(v, nf, sizeof(*v), cmp_placed);
	/* the repacker's order: the leaves (last in v) in one run at its
	 * target, in key order (from the start again when none is left after
	 * it: in order still, in blocks earlier commits of the pass freed);
	 * the twigs (before them in v) in the run right at their own target,
	 * so the twigs of the tree come in key order too; the rest from the
	 * top.  Else, all from the top, parents first. */
	while (nl < nf && v[nf - nl - 1].level == R4_LEVEL_LEAF)
		nl++;
	while (nt + nl < nf && v[nf - nl - nt - 1].level == R4_LEVEL_TWIG)
		nt++;
	if (!db->place_hint) {
		rc = from_top(db, blks, nf);
	} else {
		uint64_t *lb = blks + nf - nl, *tb = lb - nt, s;
		bool leaves = nl && (r4_alloc_first_fit(db->alloc, db->place_at, nl, &s) ||
				     r4_alloc_first_fit(db->alloc, 0, nl, &s));
		bool twigs = nt && r4_alloc_run_at(db->alloc, db->place_twig) >= nt;

		if (leaves) {
			take(db, s, nl, lb);
			db->place_at = s + nl;
		}
		if (twigs) {
			take(db, db->place_twig, nt, tb);
			db->place_twig += nt;
		}
		if (!(rc = from_top(db, blks, nf - nl - nt)) && !twigs)
			rc = from_top(db, tb, nt);
		if (!rc && !leaves)
			rc = from_top(db, lb, nl);
	}
	for (size_t i = 0; i < nf && !rc; i++)
		if (!(rc = repoint(db, v[i].n, blks[i])))
			r4_node_rekey(db, v[i].n, blks[i]);
out:
	r4_free(blks);
	r4_free(v);
	return rc;
}

static int walk(struct r4_db *db, uint64_t blk, unsigned level,
		int (*visit)(void *, uint64_t, const uint8_t *, unsigned), void *ctx)
{
	r4_node *n;
	int rc;

	if ((rc = r4_node_get(db, blk, level, &n)))
		return rc;
	rc = visit(ctx, n->blk, n->data, level);
	for (unsigned i = 0; !rc && level > R4_LEVEL_LEAF && i < r4_node_nr(n->data); i++)
		if (r4_node_item_pid(n->data, db->bs, i) == R4_IPID_NODEPTR)
			rc = walk(db, child_of(db, n, i), level - 1, visit, ctx);
	r4_node_put(db, n);
	return rc;
}

int r4_tree_walk(struct r4_db *db,
		 int (*visit)(void *ctx, uint64_t blk, const uint8_t *node, unsigned level),
		 void *ctx)
{
	return walk(db, db->root, db->height, visit, ctx);
}
