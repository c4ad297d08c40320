/*
 * frag.c - the layout report (r4 frag; r4.h r4_frag, docs/repack.md): how
 * far the blocks of the volume, or of one subtree, lie from the order a
 * reader takes them in.  Read only; three passes:
 *
 *   1. the walk, from PATH: directories parent first, each one's entries
 *      in readdir (key) order, then the bodies of its other objects in
 *      that order, then its subdirectories, each the same way.  Every
 *      block it needs is read once, the first time (the tree nodes on the
 *      way to each item, then a file's data blocks in file order); a seek
 *      is a read of any block but the one after the last read, the first
 *      read included.  For a subtree it also marks the nodes holding its
 *      items, notes its objects and measures each one's fragmentation.
 *   2. the tree, depth first from the root as measurefs.reiser4 -T goes:
 *      tree fragmentation over node pointers and extent units, and the
 *      leaves and twigs (for a subtree: only the marked nodes, the
 *      pointers to them and the extents of its files).
 *   3. for the whole volume: every stat data in key order, each object's
 *      fragmentation, averaged as measurefs.reiser4 -D averages it.
 *
 * measurefs' count (both figures): over a sequence of block ranges, a
 * range is "bad" when its start is more than one block away from the last
 * block of the range before; the fragmentation is bad ranges / blocks.
 */
#include <sys/stat.h>

#include "alloc.h"
#include "db.h"
#include "item.h"
#include "key.h"
#include "node.h"
#include "obj.h"
#include "tree.h"

/* measurefs' count over one sequence of ranges; last 0: none yet. */
struct run {
	uint64_t last, bad, total;
};

static void run_add(struct run *r, uint64_t start, uint64_t width)
{
	if (r->last && (start > r->last + 1 || r->last > start + 1))
		r->bad++;
	r->total += width;
	r->last = start + width - 1;
}

static double run_ratio(const struct run *r)
{
	return r->total ? (double)r->bad / (double)r->total : 0;
}

struct frag {
	struct r4_db *db;
	struct r4_frag *out;
	bool whole;
	uint8_t *seen;			/* nodes the walk has read, one bit per block */
	uint8_t *mark;			/* a subtree: nodes holding its items */
	uint64_t *oids;			/* objects the walk reached: open addressing */
	size_t ocap, on;
	uint64_t last;			/* the walk's last block read */
	double sum;			/* per-object fragmentation, summed */
	double leaf_used, twig_used;	/* bytes of items and their headers */
	r4_key *stack;			/* directories whose entries are still to walk */
	size_t nstack, capstack;
};

static bool bit_test(const uint8_t *m, uint64_t b)
{
	return m[b / 8] >> (b % 8) & 1;
}

static void bit_set(uint8_t *m, uint64_t b)
{
	m[b / 8] |= (uint8_t)(1u << (b % 8));
}

/* The slot of oid in table t (cap slots, a power of 2, 0 = empty), or
 * the empty one where it would go. */
static size_t oid_slot(const uint64_t *t, size_t cap, uint64_t oid)
{
	size_t j = (size_t)(oid * 0x9e3779b97f4a7c15u) & (cap - 1);

	while (t[j] && t[j] != oid)
		j = (j + 1) & (cap - 1);
	return j;
}

/* Add oid to the walk's objects: 1 added, 0 there already, -ENOMEM. */
static int oid_add(struct frag *f, uint64_t oid)
{
	size_t j;

	if (2 * (f->on + 1) > f->ocap) {
		size_t cap = f->ocap ? 2 * f->ocap : 1024;
		uint64_t *t = r4_calloc(cap, sizeof(*t));

		if (!t)
			return -ENOMEM;
		for (size_t i = 0; i < f->ocap; i++)
			if (f->oids[i])
				t[oid_slot(t, cap, f->oids[i])] = f->oids[i];
		r4_free(f->oids);
		f->oids = t;
		f->ocap = cap;
	}
	if (f->oids[j = oid_slot(f->oids, f->ocap, oid)])
		return 0;
	f->oids[j] = oid;
	f->on++;
	return 1;
}

static bool oid_has(const struct frag *f, uint64_t oid)
{
	return f->ocap && f->oids[oid_slot(f->oids, f->ocap, oid)];
}

/* The walk reads blocks [start, start + n). */
static void walk_read(struct frag *f, uint64_t start, uint64_t n)
{
	if (!f->out->read_blocks || start != f->last + 1)
		f->out->seeks++;
	f->out->read_blocks += n;
	f->last = start + n - 1;
}

/* The walk reaches the current item of p: it reads the nodes on the way
 * it has not read yet, root first, and a subtree's walk marks them. */
static void walk_path(struct frag *f, const struct r4_path *p)
{
	for (unsigned l = p->height; l >= p->level; l--) {
		uint64_t b = p->lv[l].node->blk;

		if (b >= f->db->block_count)
			continue;
		if (!bit_test(f->seen, b)) {
			bit_set(f->seen, b);
			walk_read(f, b, 1);
		}
		if (f->mark)
			bit_set(f->mark, b);
	}
}

/* The mode of a stat data item (0 without LW). */
static int sd_mode(struct r4_db *db, const struct r4_path *p, const uint8_t *body, unsigned len,
		   uint16_t *mode)
{
	struct r4_sd sd;

	if (r4_item_stat_decode(body, len, &sd))
		return R4_CORRUPT(&db->lg, p->lv[1].node->blk, "bad stat data: %s", r4_corrupt_last());
	*mode = r4_sd_has(&sd, R4_SDEXT_LW) ? sd.sd_mode : 0;
	return 0;
}

/* The walk reads the stat data of sdkey: its mode.  -ENOENT when the
 * tree has none. */
static int walk_stat(struct frag *f, const r4_key *sdkey, uint16_t *mode)
{
	struct r4_path p;
	unsigned pid, len;
	uint8_t *body;
	r4_key k;
	int rc;

	if ((rc = r4_tree_lookup(f->db, sdkey, R4_LEVEL_LEAF, &p)))
		return rc;
	if (!r4_path_item(f->db, &p, &k, &pid, &body, &len) || r4_key_cmp(&k, sdkey) ||
	    pid != R4_ITEM_STAT40)
		rc = -ENOENT;
	else if (!(rc = sd_mode(f->db, &p, body, len, mode)))
		walk_path(f, &p);
	r4_path_release(f->db, &p);
	return rc;
}

/* A directory's entries but "." and "..", in readdir order. */
struct ents {
	r4_key *k;
	size_t n, cap;
};

static int ents_add(struct r4_db *db, struct r4_path *p, struct ents *e)
{
	unsigned len, n;
	uint8_t *body;
	r4_key ik;
	int rc;

	r4_path_item(db, p, &ik, NULL, &body, &len);
	if ((rc = r4_item_cde_count(body, len, &n)))
		return R4_CORRUPT(&db->lg, p->lv[1].node->blk, "bad directory item");
	for (unsigned i = 0; i < n; i++) {
		struct r4_dirent de;
		char name[24];
		size_t nl;

		if ((rc = r4_item_cde_decode(&ik, body, len, i, &de)))
			return R4_CORRUPT(&db->lg, p->lv[1].node->blk, "bad directory item");
		nl = r4_key_entry_name(&de.de_key, name);
		if ((nl == 1 && name[0] == '.') || (nl == 2 && !memcmp(name, "..", 2)))
			continue;
		if (r4_grow(&e->k, &e->cap, e->n + 1, sizeof(*e->k), 64))
			return -ENOMEM;
		e->k[e->n++] = de.de_sdkey;
	}
	return 0;
}

/* The allocated units of an extent item (of node blk) into r; the walk
 * reads them too (EX_READ), the tree pass counts them (EX_COUNT). */
enum { EX_RUN, EX_READ, EX_COUNT };

static int extent_item(struct frag *f, uint64_t blk, const uint8_t *body, unsigned len,
		       struct run *r, int how)
{
	size_t n;

	if (r4_item_extent_count(body, len, &n))
		return R4_CORRUPT(&f->db->lg, blk, "bad extent item");
	for (size_t u = 0; u < n; u++) {
		uint64_t start = r4_le64_get(body + u * R4_EXTENT_UNIT + R4_EXTENT_START);
		uint64_t width = r4_le64_get(body + u * R4_EXTENT_UNIT + R4_EXTENT_WIDTH);

		if (start == R4_EXTENT_HOLE || start == R4_EXTENT_UNALLOC)
			continue;
		run_add(r, start, width);
		if (how == EX_READ)
			walk_read(f, start, width);
		if (how == EX_COUNT) {
			f->out->extents++;
			f->out->data_blocks += width;
		}
	}
	return 0;
}

/*
 * What measurefs calls an object's layout, in key order, into r: a
 * directory's entry items (the leaf of each), a regular file's body
 * (each allocated extent unit; the leaf of each tail or ctail item);
 * nothing for other objects.  walk: the walk reads it too, and a
 * directory's entries go to e.
 */
static int body_of(struct frag *f, const r4_key *sdkey, uint16_t mode, bool walk, struct run *r,
		   struct ents *e)
{
	struct r4_db *db = f->db;
	bool dir = S_ISDIR(mode);
	struct r4_path p;
	unsigned pid, len;
	uint8_t *body;
	r4_key k, ik;
	int rc;

	if (dir)
		r4_key_set(&k, r4_key_objectid(sdkey), R4_KEY_NAME, 0, 0, 0);
	else if (S_ISREG(mode))
		r4_key_body(&k, r4_key_locality(sdkey), r4_key_ordering(sdkey),
			    r4_key_objectid(sdkey), 0);
	else
		return 0;
	ik = k;
	for (int i = 3; i >= 0 && ik.el[i]-- == 0; i--)	/* just below k: the first of equals */
		;
	if ((rc = r4_tree_lookup(db, &ik, R4_LEVEL_LEAF, &p)))
		return rc;
	do {
		if (!r4_path_item(db, &p, &ik, &pid, &body, &len) || r4_key_cmp(&ik, &k) < 0)
			continue;
		if (ik.el[0] != k.el[0] || (!dir && (ik.el[1] != k.el[1] || ik.el[2] != k.el[2]))) {
			rc = 0;
			break;
		}
		if (walk)
			walk_path(f, &p);
		if (pid == R4_ITEM_EXTENT40) {
			if ((rc = extent_item(f, p.lv[2].node->blk, body, len, r,
					      walk ? EX_READ : EX_RUN)))
				break;
		} else {
			run_add(r, p.lv[p.level].node->blk, 1);
			if (e && pid == R4_ITEM_CDE40 && (rc = ents_add(db, &p, e)))
				break;
		}
	} while ((rc = r4_tree_next(db, &p)) > 0);
	r4_path_release(db, &p);
	return rc;
}

/* The walk meets the object sdkey: it reads its stat data; the first
 * time, counts it and (but a directory's, read when its turn comes) reads
 * its body.  *dir: a directory met for the first time. */
static int walk_object(struct frag *f, const r4_key *sdkey, bool *dir)
{
	struct run r = {0};
	uint16_t mode = 0;
	int rc;

	*dir = false;
	if ((rc = walk_stat(f, sdkey, &mode)))
		return rc == -ENOENT ? 0 : rc;	/* a dangling name: r4 fsck's business */
	if ((rc = oid_add(f, r4_key_objectid(sdkey))) <= 0)
		return rc;
	if (S_ISDIR(mode)) {
		f->out->dirs++;
		*dir = true;
		return 0;
	}
	if (S_ISREG(mode))
		f->out->files++;
	else
		f->out->others++;
	if ((rc = body_of(f, sdkey, mode, true, &r, NULL)))
		return rc;
	f->sum += run_ratio(&r);
	return 0;
}

static int walk(struct frag *f, const r4_key *start)
{
	struct ents e = {0};
	bool dir;
	int rc;

	if ((rc = walk_object(f, start, &dir)) || !dir)
		return rc;
	f->stack[f->nstack++] = *start;
	while (!rc && f->nstack) {
		r4_key d = f->stack[--f->nstack];
		struct run r = {0};
		size_t first;

		e.n = 0;
		if ((rc = body_of(f, &d, S_IFDIR, true, &r, &e)))
			break;
		f->sum += run_ratio(&r);
		first = f->nstack;
		for (size_t i = 0; i < e.n && !rc; i++)
			if (!(rc = walk_object(f, &e.k[i], &dir)) && dir &&
			    !(rc = r4_grow(&f->stack, &f->capstack, f->nstack + 1,
					   sizeof(*f->stack), 64)))
				f->stack[f->nstack++] = e.k[i];
		/* its subdirectories in readdir order: the first on top */
		for (size_t i = first, j = f->nstack; i + 1 < j; i++, j--) {
			r4_key t = f->stack[i];

			f->stack[i] = f->stack[j - 1];
			f->stack[j - 1] = t;
		}
	}
	r4_free(e.k);
	return rc;
}

static bool in_scope(const struct frag *f, uint64_t blk)
{
	return f->whole || (blk < f->db->block_count && bit_test(f->mark, blk));
}

/* Pass 2 from node blk: its pointers and extents into t (each node's
 * items before its children, as measurefs -T), leaves and twigs counted. */
static int tree(struct frag *f, uint64_t blk, unsigned level, struct run *t)
{
	struct r4_db *db = f->db;
	unsigned usable = db->bs - r4_node_hdr_size(db->node_pid), nr;
	const uint8_t *b;
	r4_node *n;
	int rc;

	if ((rc = r4_node_get(db, blk, level, &n)))
		return rc;
	b = n->data;
	nr = r4_node_nr(b);
	if (level == R4_LEVEL_LEAF) {
		f->out->leaves++;
		f->leaf_used += usable - r4_node_free(b);
	} else if (level == R4_LEVEL_TWIG) {
		f->out->twigs++;
		f->twig_used += usable - r4_node_free(b);
	}
	for (unsigned i = 0; i < nr && level > R4_LEVEL_LEAF; i++) {
		const uint8_t *body = b + r4_node_item_off(b, db->bs, i);
		unsigned len = r4_node_item_len(b, db->bs, i), pid = r4_node_item_pid(b, db->bs, i);
		uint64_t child;
		r4_key k;

		if (pid == R4_ITEM_NODEPTR40) {
			if (r4_item_nodeptr_decode(body, len, &child)) {
				rc = R4_CORRUPT(&db->lg, n->blk, "bad node pointer");
				break;
			}
			if (in_scope(f, child))
				run_add(t, child, 1);
			continue;
		}
		r4_node_key(b, db->bs, i, &k);
		if (pid != R4_ITEM_EXTENT40 || (!f->whole && !oid_has(f, r4_key_objectid(&k))))
			continue;
		if ((rc = extent_item(f, n->blk, body, len, t, EX_COUNT)))
			break;
	}
	for (unsigned i = 0; i < nr && !rc && level > R4_LEVEL_LEAF; i++) {
		uint64_t child;

		if (r4_node_item_pid(b, db->bs, i) == R4_ITEM_NODEPTR40 &&
		    !r4_item_nodeptr_decode(b + r4_node_item_off(b, db->bs, i),
					    r4_node_item_len(b, db->bs, i), &child) &&
		    in_scope(f, child))
			rc = tree(f, child, level - 1, t);
	}
	r4_node_put(db, n);
	return rc;
}

/* Pass 3: every stat data of the volume, in key order (measurefs -D). */
static int every_object(struct frag *f)
{
	struct r4_path p;
	unsigned pid, len;
	uint8_t *body;
	r4_key k = {{0}};
	int rc;

	f->sum = 0;
	f->out->objects = 0;
	if ((rc = r4_tree_lookup(f->db, &k, R4_LEVEL_LEAF, &p)))
		return rc;
	do {
		struct run r = {0};
		uint16_t mode = 0;

		if (!r4_path_item(f->db, &p, &k, &pid, &body, &len) || pid != R4_ITEM_STAT40)
			continue;
		if ((rc = sd_mode(f->db, &p, body, len, &mode)) ||
		    (rc = body_of(f, &k, mode, false, &r, NULL)))
			break;
		f->sum += run_ratio(&r);
		f->out->objects++;
	} while ((rc = r4_tree_next(f->db, &p)) > 0);
	r4_path_release(f->db, &p);
	return rc;
}

/* The free runs of the volume: how many, how large. */
static void free_space(const struct r4_db *db, struct r4_frag *out)
{
	uint64_t s, len;

	for (uint64_t from = 0; r4_alloc_next_run(db->alloc, from, &s, &len); from = s + len) {
		out->free_blocks += len;
		out->free_runs++;
		out->free_largest = R4_MAX(out->free_largest, len);
		out->free_at_end = s + len == db->block_count ? len : 0;
	}
}

int r4_frag(r4_db *db, const char *path, struct r4_frag *out)
{
	struct frag f = {.db = db, .whole = !path || !strcmp(path, "/")};
	struct r4_frag res = {.blocksize = db->bs};
	size_t bytes = (size_t)(db->block_count / 8 + 1);
	struct run t = {.last = db->root};
	struct r4_inode ino;
	unsigned usable;
	r4_key start;
	int rc;

	if (db->in_txn)
		return -EBUSY;
	if (f.whole) {
		r4_obj_root_key(&start);
	} else {
		if ((rc = r4_fs_resolve(db, path, &ino)))
			return r4_db_seen(db, rc);
		start = ino.sdkey;
		r4_obj_fini(&ino);
	}
	f.out = &res;
	if (!(f.seen = r4_calloc(bytes, 1)) || (!f.whole && !(f.mark = r4_calloc(bytes, 1))) ||
	    r4_grow(&f.stack, &f.capstack, 1, sizeof(*f.stack), 64)) {
		rc = -ENOMEM;
		goto out;
	}
	if ((rc = walk(&f, &start)))
		goto out;
	res.objects = f.on;
	if ((rc = tree(&f, db->root, db->height, &t)) || (f.whole && (rc = every_object(&f))))
		goto out;
	res.data_frag = res.objects ? f.sum / (double)res.objects : 0;
	res.tree_frag = run_ratio(&t);
	usable = db->bs - r4_node_hdr_size(db->node_pid);
	res.leaf_fill = res.leaves ? 100 * f.leaf_used / (double)res.leaves / usable : 0;
	res.twig_fill = res.twigs ? 100 * f.twig_used / (double)res.twigs / usable : 0;
	res.seeks_per_mib = res.read_blocks ? res.seeks / ((double)res.read_blocks * db->bs /
							   (1 << 20)) : 0;
	free_space(db, &res);
	*out = res;
out:
	r4_free(f.seen);
	r4_free(f.mark);
	r4_free(f.oids);
	r4_free(f.stack);
	return r4_db_seen(db, rc);
}
