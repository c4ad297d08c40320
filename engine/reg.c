/*
 * reg.c - reg40 file bodies: tails and extents, the smart formatting
 * policy and both conversions, holes, and the pending data pages.
 *
 * A body is all tails (plain40 items in leaves) or all extents (extent40
 * items on the twig), never both once an operation ends.  The policy
 * (formatting plugin: 0 extents, 1 tails, 2 smart) picks tails while the
 * size is at most 4 blocks (16 KiB).  Tail files are small, so a change
 * rewrites the whole body; extent files keep their map as a run list,
 * edited and stored back.  Holes are hole units (start 0); the map covers
 * exactly the blocks up to the size (fsck.reiser4 rejects a size beyond
 * the last unit, docs/objects.md), so a sparse end is a trailing hole.
 *
 * Data of extent blocks changed in a transaction waits in db->pages until
 * commit (r4_page_flush); abort drops it.  st_bytes = tail bytes plus
 * allocated blocks times the block size, as fsck.reiser4 counts it.
 *
 * Compressed files (ccreg40: pset member `file` 4, or a ctail body) are
 * ccreg.c's; this file sends their reads, writes and truncates there, and
 * does the kernel's conversion of an incompressible one to reg40 (conv).
 */
#include "obj.h"

#include <stdlib.h>
#include <sys/stat.h>

#include "alloc.h"
#include "ccreg.h"
#include "io.h"
#include "jnl.h"
#include "key.h"
#include "plugin.h"
#include "tree.h"

struct r4_page {
	uint64_t blk;
	struct r4_page *next;
	uint8_t data[];
};

/* ---- pending pages ---- */

static size_t page_bucket(const struct r4_db *db, uint64_t blk)
{
	return (size_t)((blk * UINT64_C(0x9E3779B97F4A7C15)) >> 32) & (db->npage_buckets - 1);
}

static struct r4_page *page_find(struct r4_db *db, uint64_t blk)
{
	if (!db->pages)
		return NULL;
	for (struct r4_page *pg = db->pages[page_bucket(db, blk)]; pg; pg = pg->next)
		if (pg->blk == blk)
			return pg;
	return NULL;
}

static int pages_grow(struct r4_db *db)
{
	size_t nb = db->npage_buckets ? db->npage_buckets * 4 : 1024;
	struct r4_page **nh = r4_calloc(nb, sizeof(*nh));
	size_t old = db->npage_buckets;

	if (!nh)
		return -ENOMEM;
	for (size_t i = 0; i < old; i++)
		for (struct r4_page *pg = db->pages[i], *nx; pg; pg = nx) {
			nx = pg->next;
			db->npage_buckets = nb;
			size_t b = page_bucket(db, pg->blk);
			pg->next = nh[b];
			nh[b] = pg;
		}
	r4_free(db->pages);
	db->pages = nh;
	db->npage_buckets = nb;
	return 0;
}

/*
 * Page memory is kept for reuse, up to the memory bound: a big write
 * fills and spills its pages over and over, and handing them back to
 * malloc each time (which trims the heap and faults it in again) cost
 * more than copying the data (bench/RESULTS.md).
 */
static struct r4_page *page_alloc(struct r4_db *db)
{
	struct r4_page *pg = db->page_pool;

	if (!pg)
		return r4_malloc(sizeof(*pg) + db->bs);
	db->page_pool = pg->next;
	db->npool--;
	return pg;
}

static void page_free(struct r4_db *db, struct r4_page *pg)
{
	if (db->npool >= db->cache.dirty_bound) {
		r4_free(pg);
		return;
	}
	pg->next = db->page_pool;
	db->page_pool = pg;
	db->npool++;
}

void r4_page_pool_free(struct r4_db *db)
{
	while (db->page_pool) {
		struct r4_page *pg = db->page_pool;

		db->page_pool = pg->next;
		r4_free(pg);
	}
	db->npool = 0;
}

static bool is_fake_data(uint64_t blk);

/* The pending page of blk, made if needed: zeroed, or read from the image. */
static int page_get(struct r4_db *db, uint64_t blk, bool read_old, struct r4_page **out)
{
	struct r4_page *pg = page_find(db, blk);
	int rc;

	if (pg) {
		*out = pg;
		return 0;
	}
	if (db->npages >= db->npage_buckets * 2 && (rc = pages_grow(db)))
		return rc;
	if (!(pg = page_alloc(db)))
		return -ENOMEM;
	if (read_old) {
		if ((rc = r4_io_read(db->io, blk * db->bs, pg->data, db->bs))) {
			page_free(db, pg);
			return rc;
		}
	} else {
		memset(pg->data, 0, db->bs);
	}
	pg->blk = blk;
	size_t b = page_bucket(db, blk);
	pg->next = db->pages[b];
	db->pages[b] = pg;
	db->npages++;
	db->npages_real += !is_fake_data(blk);
	*out = pg;
	return 0;
}

static void page_drop(struct r4_db *db, uint64_t blk)
{
	if (!db->pages)
		return;
	for (struct r4_page **pp = &db->pages[page_bucket(db, blk)]; *pp; pp = &(*pp)->next)
		if ((*pp)->blk == blk) {
			struct r4_page *pg = *pp;

			*pp = pg->next;
			page_free(db, pg);
			db->npages--;
			db->npages_real -= !is_fake_data(blk);
			return;
		}
}

static void pages_clear(struct r4_db *db)
{
	for (size_t i = 0; i < db->npage_buckets; i++)
		for (struct r4_page *pg = db->pages[i], *nx; pg; pg = nx) {
			nx = pg->next;
			page_free(db, pg);
		}
	if (db->pages)
		memset(db->pages, 0, db->npage_buckets * sizeof(*db->pages));
	db->npages = 0;
	db->npages_real = 0;
}

int r4_page_each(struct r4_db *db, int (*fn)(void *ctx, uint64_t blk, const uint8_t *data),
		 void *ctx)
{
	int rc = 0;

	for (size_t i = 0; i < db->npage_buckets && !rc; i++)
		for (struct r4_page *pg = db->pages[i]; pg && !rc; pg = pg->next)
			rc = fn(ctx, pg->blk, pg->data);
	return rc;
}

/* A fake block's page gets its real number. */
static void page_rekey(struct r4_db *db, uint64_t from, uint64_t to)
{
	for (struct r4_page **pp = &db->pages[page_bucket(db, from)]; *pp; pp = &(*pp)->next)
		if ((*pp)->blk == from) {
			struct r4_page *pg = *pp;
			size_t b = page_bucket(db, to);

			*pp = pg->next;
			db->npages_real += is_fake_data(from) && !is_fake_data(to);
			pg->blk = to;
			pg->next = db->pages[b];
			db->pages[b] = pg;
			return;
		}
}

void r4_page_discard(struct r4_db *db)
{
	pages_clear(db);
	db->nfake_files = 0;
	db->fake_data = 0;
	db->fake_units = 0;
}

void r4_reg_forget_blocks(struct r4_db *db, uint64_t start, uint64_t count)
{
	if (is_fake_data(start))
		db->fake_data -= R4_MIN(count, db->fake_data);
	if (db->npages)
		for (uint64_t b = start; b < start + count; b++)
			page_drop(db, b);
	r4_alloc_free(db->alloc, start, count);
}

/* Read block blk's bytes [at, at + n) into buf: pending page or image. */
static int read_block(struct r4_db *db, uint64_t blk, uint32_t at, void *buf, size_t n)
{
	struct r4_page *pg = page_find(db, blk);

	if (pg) {
		memcpy(buf, pg->data + at, n);
		return 0;
	}
	if (blk >= db->block_count)
		return R4_CORRUPT(&db->lg, blk, "extent points outside the volume");
	return r4_io_read(db->io, blk * db->bs + at, buf, n);
}

/* ---- the body map ---- */

static void body_key(const struct r4_inode *ino, uint64_t off, r4_key *k)
{
	r4_key_body(k, r4_key_locality(&ino->sdkey), ino->sdkey.el[1],
		    r4_key_objectid(&ino->sdkey), off);
}

static bool is_body_of(const struct r4_inode *ino, const r4_key *k)
{
	return r4_key_type(k) == R4_KEY_BODY && r4_key_locality(k) == r4_key_locality(&ino->sdkey) &&
	       k->el[1] == ino->sdkey.el[1] && r4_key_objectid(k) == r4_key_objectid(&ino->sdkey);
}

void r4_reg_body_key(const struct r4_inode *ino, uint64_t off, r4_key *k)
{
	body_key(ino, off, k);
}

bool r4_reg_is_body(const struct r4_inode *ino, const r4_key *k)
{
	return is_body_of(ino, k);
}

enum body_kind { BODY_NONE, BODY_TAILS, BODY_EXTENTS, BODY_CTAILS };

static int body_kind(struct r4_db *db, const struct r4_inode *ino, enum body_kind *kind)
{
	struct r4_path p;
	unsigned pid;
	r4_key k;
	int rc;

	*kind = BODY_NONE;
	body_key(ino, 0, &k);
	if ((rc = r4_tree_lookup(db, &k, R4_LEVEL_LEAF, &p)))
		return rc;
	/* the first body item: at the found position or the next one */
	for (int step = 0; step < 2; step++) {
		r4_key ik;

		if (r4_path_item(db, &p, &ik, &pid, NULL, NULL) && is_body_of(ino, &ik)) {
			*kind = pid == R4_ITEM_EXTENT40  ? BODY_EXTENTS
				: pid == R4_ITEM_CTAIL40 ? BODY_CTAILS
							 : BODY_TAILS;
			break;
		}
		if (step == 0 && (rc = r4_tree_next(db, &p)) <= 0)
			break;
	}
	r4_path_release(db, &p);
	return rc < 0 ? rc : 0;
}

/* body_kind for a change: a bodiless inode is taken at its word, once (the
 * change gives it a body). */
static int body_kind_to_change(struct r4_db *db, struct r4_inode *ino, enum body_kind *kind)
{
	if (ino->bodiless) {
		ino->bodiless = false;
		*kind = BODY_NONE;
		return 0;
	}
	return body_kind(db, ino, kind);
}

/*
 * Visit the body items of ino overlapping [off, end): fn(ctx, item offset,
 * pid, body, len).  Stops at the first item past end or of another object.
 */
static int each_body_item(struct r4_db *db, const struct r4_inode *ino, uint64_t off,
			  uint64_t end,
			  int (*fn)(void *ctx, uint64_t ioff, unsigned pid, const uint8_t *b,
				    unsigned len),
			  void *ctx)
{
	struct r4_path p;
	uint8_t *body;
	unsigned pid, len;
	r4_key k;
	int rc;

	body_key(ino, off, &k);
	if ((rc = r4_tree_lookup(db, &k, R4_LEVEL_LEAF, &p)))
		return rc;
	if (!r4_path_item(db, &p, &k, &pid, &body, &len) || !is_body_of(ino, &k))
		goto next;
	for (;;) {
		if (r4_key_offset(&k) >= end)
			break;
		if ((rc = fn(ctx, r4_key_offset(&k), pid, body, len)))
			break;
next:
		if ((rc = r4_tree_next(db, &p)) <= 0)
			break;
		if (!r4_path_item(db, &p, &k, &pid, &body, &len) || !is_body_of(ino, &k)) {
			rc = 0;
			break;
		}
	}
	r4_path_release(db, &p);
	return rc < 0 ? rc : 0;
}

struct read_ctx {
	struct r4_db *db;
	uint64_t off, end;
	uint8_t *buf;
};

static int read_fn(void *ctx, uint64_t ioff, unsigned pid, const uint8_t *b, unsigned len)
{
	struct read_ctx *r = ctx;
	struct r4_db *db = r->db;

	if (pid == R4_ITEM_PLAIN40) {
		uint64_t from = R4_MAX(ioff, r->off), to = R4_MIN(ioff + len, r->end);

		if (from < to)
			memcpy(r->buf + (from - r->off), b + (from - ioff), to - from);
		return 0;
	}
	if (pid == R4_ITEM_CTAIL40)
		return -EAGAIN;		/* a ctail body without the ccreg40 plugin: ccreg.c reads it */
	if (pid != R4_ITEM_EXTENT40)
		return R4_CORRUPT(&db->lg, 0, "body item of plugin %u", pid);
	size_t n;
	int rc;

	if ((rc = r4_item_extent_count(b, len, &n)))
		return rc;
	for (size_t i = 0; i < n; i++) {
		uint64_t start = r4_le64_get(b + i * 16), width = r4_le64_get(b + i * 16 + 8);
		uint64_t uoff = ioff, uend = ioff + width * db->bs;

		ioff = uend;
		if (uend <= r->off || start == R4_EXTENT_HOLE)
			continue;
		if (uoff >= r->end)
			break;
		if (start == R4_EXTENT_UNALLOC)
			return R4_CORRUPT(&db->lg, start, "unallocated extent on disk");
		for (uint64_t o = R4_MAX(uoff, r->off), stop = R4_MIN(uend, r->end); o < stop;) {
			uint64_t blk = start + (o - uoff) / db->bs, k = 1;
			uint32_t at = (uint32_t)(o % db->bs);
			size_t cnt = R4_MIN(db->bs - at, stop - o);

			/* the blocks after it that hold no pending data, in one
			 * read: the host reads ahead from a large read as a disk
			 * does, and one call is cheaper than k */
			if (!page_find(db, blk))
				for (; o + cnt < stop && blk + k < db->block_count &&
				       !page_find(db, blk + k); k++)
					cnt = R4_MIN(cnt + db->bs, stop - o);
			if ((rc = k == 1 ? read_block(db, blk, at, r->buf + (o - r->off), cnt)
					 : r4_io_read(db->io, blk * db->bs + at, r->buf + (o - r->off),
						      cnt)))
				return rc;
			o += cnt;
		}
	}
	return 0;
}

static int reg40_read(struct r4_db *db, const struct r4_inode *ino, uint64_t off, void *buf,
		      size_t len, size_t *got)
{
	uint64_t size = ino->sd.sd_size;
	struct read_ctx r = {db, off, 0, buf};
	int rc;

	if (off >= size || len == 0) {
		*got = 0;
		return 0;
	}
	r.end = R4_MIN(size, off + len);
	memset(buf, 0, r.end - off);
	if ((rc = each_body_item(db, ino, off, r.end, read_fn, &r)) == -EAGAIN)
		return r4_ccreg_read(db, ino, off, buf, len, got);
	if (rc)
		return rc;
	*got = r.end - off;
	return 0;
}

/*
 * SEEK_DATA and SEEK_HOLE (r4_reg_seek): data is what the body's items
 * cover, tails and extent units other than holes (blocks written but not
 * placed yet too), and of a compressed body every cluster that has items
 * (a cluster without is a hole, read as zeros); the rest up to the size is
 * hole, and so is the end.
 */
struct seek_ctx {
	uint32_t bs;
	unsigned shift;			/* a compressed body's cluster shift (0: unknown) */
	uint64_t off, end;
	bool hole;			/* looking for a hole (else for data) */
	bool found;
	uint64_t at;			/* data: where found; hole: the first byte not
					   yet known to be data */
};

/* The data [a, b) of the body, met in order; 1: the answer is found. */
static int seek_data(struct seek_ctx *s, uint64_t a, uint64_t b)
{
	b = R4_MIN(b, s->end);
	if (b <= s->at || a >= b)
		return 0;
	if (s->hole) {
		if (a > s->at)
			return 1;	/* a hole at s->at */
		s->at = b;
		return 0;
	}
	s->at = R4_MAX(a, s->off);
	s->found = true;
	return 1;
}

static int seek_fn(void *ctx, uint64_t ioff, unsigned pid, const uint8_t *b, unsigned len)
{
	struct seek_ctx *s = ctx;
	size_t n;
	int rc;

	if (pid == R4_ITEM_PLAIN40)
		return seek_data(s, ioff, ioff + len);
	if (pid == R4_ITEM_CTAIL40) {
		uint64_t cs = ioff >> s->shift << s->shift;

		/* its key is its place in its cluster's stream: the
		 * cluster's bytes are data (a file of the default plugins
		 * with ctail items, which ccreg.c reads, too) */
		return s->shift ? seek_data(s, cs, cs + ((uint64_t)1 << s->shift)) : -EAGAIN;
	}
	if (pid != R4_ITEM_EXTENT40)
		return -EAGAIN;
	if ((rc = r4_item_extent_count(b, len, &n)))
		return rc;
	for (size_t i = 0; i < n; i++) {
		uint64_t start = r4_le64_get(b + i * 16), width = r4_le64_get(b + i * 16 + 8);
		uint64_t uend = ioff + width * s->bs;

		if (start != R4_EXTENT_HOLE && (rc = seek_data(s, ioff, uend)))
			return rc;
		ioff = uend;
	}
	return 0;
}

int r4_reg_seek(struct r4_db *db, const struct r4_inode *ino, uint64_t off, bool hole,
		uint64_t *out)
{
	const struct r4_cluster_ops *cl = r4_plugin_ops(R4_PTYPE_CLUSTER, ino->cluster);
	struct seek_ctx s = {db->bs, cl ? cl->shift : 0, off, ino->sd.sd_size, hole, false, off};
	int rc;

	if (off >= s.end)
		return -ENXIO;
	/* a body of other items, or of clusters of no known size, tells no
	 * holes: all data, as for file systems that keep no map (Linux's
	 * generic answer) */
	if ((rc = each_body_item(db, ino, off, s.end, seek_fn, &s)) == -EAGAIN) {
		*out = hole ? s.end : off;
		return 0;
	}
	if (rc)
		return rc;
	if (!hole && !s.found)
		return -ENXIO;
	*out = R4_MIN(s.at, s.end);
	return 0;
}

/* The whole content of a (small) file. */
static int read_all(struct r4_db *db, const struct r4_inode *ino, uint64_t want, uint8_t **out)
{
	uint8_t *buf = r4_calloc(1, want ? want : 1);
	size_t got;
	int rc;

	if (!buf)
		return -ENOMEM;
	if ((rc = r4_reg_read(db, ino, 0, buf, want, &got))) {
		r4_free(buf);
		return rc;
	}
	*out = buf;
	return 0;
}

/* Remove every body item; extents' blocks are freed when `free_blocks`. */
static int remove_body(struct r4_db *db, const struct r4_inode *ino, bool free_blocks)
{
	struct r4_path p;
	uint8_t *body;
	unsigned pid, len;
	r4_key k, last;
	int rc;

	body_key(ino, UINT64_MAX, &last);
	for (;;) {
		if ((rc = r4_tree_lookup(db, &last, R4_LEVEL_LEAF, &p)))
			return rc;
		if (!r4_path_item(db, &p, &k, &pid, &body, &len) || !is_body_of(ino, &k)) {
			r4_path_release(db, &p);
			return 0;
		}
		if (pid == R4_ITEM_EXTENT40 && free_blocks)
			for (unsigned i = 0; i + 16 <= len; i += 16) {
				uint64_t start = r4_le64_get(body + i), w = r4_le64_get(body + i + 8);

				if (start > R4_EXTENT_UNALLOC)
					r4_reg_forget_blocks(db, start, w);
			}
		if ((rc = r4_tree_remove(db, &p)))
			return rc;
	}
}

int r4_reg_remove_body(struct r4_db *db, const struct r4_inode *ino)
{
	return remove_body(db, ino, true);
}

static int count_fn(void *ctx, uint64_t ioff, unsigned pid, const uint8_t *b, unsigned len)
{
	(void)ioff;
	(void)pid;
	(void)b;
	(void)len;
	++*(uint64_t *)ctx;
	return 0;
}

/* Body items of ino from offset off on. */
static int body_items(struct r4_db *db, const struct r4_inode *ino, uint64_t off, uint64_t *n)
{
	*n = 0;
	return each_body_item(db, ino, off, UINT64_MAX, count_fn, n);
}

int r4_reg_remove_cost(struct r4_db *db, const struct r4_inode *ino, uint64_t *cost)
{
	uint64_t n;
	int rc = body_items(db, ino, 0, &n);

	if (!rc)
		*cost = r4_txn_remove_cost(db, n);
	return rc;
}

/* ---- what a change to a body can add to the commit (r4_txn_grab) ----
 *
 * Every public operation below grabs, after what it reads and before its
 * first change, the most it can add; E(db) of that is the stat data
 * saved at its end.
 */
#define E(db) r4_txn_insert_cost(db)

/* len bytes written into blocks: each new, or a page of a real one; the
 * new ones in up to `units` units (one for each hole the write meets),
 * with the growth of extent items when they are placed
 * (r4_txn_fake_cost). */
static uint64_t data_cost_in(const struct r4_db *db, uint64_t len, uint64_t units)
{
	return len ? r4_txn_fake_cost(db, (len + db->bs - 1) / db->bs + 1, units) : 0;
}

static uint64_t data_cost(const struct r4_db *db, uint64_t len)
{
	return data_cost_in(db, len, 1);
}

/* An extent map of `items` items stored again as `units` units. */
static uint64_t map_cost(const struct r4_db *db, uint64_t items, uint64_t units)
{
	uint64_t per = r4_tree_max_item(db) / R4_EXTENT_UNIT;

	return r4_txn_remove_cost(db, items) +
	       r4_txn_tree_cost(db, units / per + 1, units * R4_EXTENT_UNIT);
}

/* A tail body of size bytes written (write_tails cuts no piece under 256
 * bytes but the last). */
static uint64_t tails_cost(const struct r4_db *db, uint64_t size)
{
	return r4_txn_tree_cost(db, size / 256 + 2, size);
}

/* The body of ino, of the given kind, replaced by one that costs `add`:
 * grab both.  (Its items are counted: another program's tails may be
 * small; a new file's first write has none to count.) */
static int grab_rewrite(struct r4_db *db, const struct r4_inode *ino, unsigned kind, uint64_t add,
			bool removal)
{
	uint64_t cost = 0;
	int rc = kind == BODY_NONE ? 0 : r4_reg_remove_cost(db, ino, &cost);

	return rc ? rc : r4_txn_grab(db, cost + add + E(db), removal);
}

static int write_tails(struct r4_db *db, const struct r4_inode *ino, const uint8_t *data,
		       uint64_t size)
{
	unsigned max = r4_tree_max_item(db);
	struct r4_path p;
	r4_key k;
	int rc;

	for (uint64_t o = 0; o < size;) {
		unsigned n = (unsigned)R4_MIN((uint64_t)max, size - o), room;

		body_key(ino, o, &k);
		if ((rc = r4_tree_lookup(db, &k, R4_LEVEL_LEAF, &p)))
			return rc;
		/* fill what the leaf has left instead of splitting it (the tail
		 * continues in the next leaf), unless that piece would be tiny */
		room = p.level == R4_LEVEL_LEAF ? r4_tree_free(db, &p) : 0;
		room = room > R4_IH_SIZE ? room - R4_IH_SIZE : 0;
		if (room < n && room >= 256)
			n = room;
		if ((rc = r4_tree_insert(db, &p, &k, R4_ITEM_PLAIN40, data + o, n)))
			return rc;
		o += n;
	}
	return 0;
}

/* ---- extent maps ---- */

struct map {
	struct r4_extent *e;
	size_t n, cap;
	size_t items;		/* the extent items it was loaded from */
};

/* Room for n units in all. */
static int map_room(struct map *m, size_t n)
{
	struct r4_extent *ne;

	if (n <= m->cap)
		return 0;
	if (!(ne = r4_realloc(m->e, n * sizeof(*ne))))
		return -ENOMEM;
	m->e = ne;
	m->cap = n;
	return 0;
}

static int map_push(struct map *m, uint64_t start, uint64_t width)
{
	if (width == 0)
		return 0;
	if (m->n && ((start == 0 && m->e[m->n - 1].ex_start == 0) ||
		     (start > R4_EXTENT_UNALLOC &&
		      m->e[m->n - 1].ex_start + m->e[m->n - 1].ex_width == start &&
		      m->e[m->n - 1].ex_start > R4_EXTENT_UNALLOC))) {
		m->e[m->n - 1].ex_width += width;
		return 0;
	}
	if (r4_grow(&m->e, &m->cap, m->n + 1, sizeof(*m->e), 16))
		return -ENOMEM;
	m->e[m->n].ex_start = start;
	m->e[m->n].ex_width = width;
	m->n++;
	return 0;
}

static uint64_t map_blocks(const struct map *m)
{
	return r4_item_extent_width(m->e, m->n);
}

struct load_ctx {
	struct r4_db *db;
	struct map *m;
};

static int load_fn(void *ctx, uint64_t ioff, unsigned pid, const uint8_t *b, unsigned len)
{
	struct load_ctx *l = ctx;
	uint64_t have = map_blocks(l->m) * l->db->bs;
	int rc;

	if (pid != R4_ITEM_EXTENT40)
		return R4_CORRUPT(&l->db->lg, 0, "tail item in an extent file");
	if (ioff % l->db->bs || ioff < have)
		return R4_CORRUPT(&l->db->lg, 0, "extent item at offset %llu overlaps",
				  (unsigned long long)ioff);
	if ((rc = map_push(l->m, 0, (ioff - have) / l->db->bs)))
		return rc;
	l->m->items++;
	for (unsigned i = 0; i + 16 <= len; i += 16)
		if ((rc = map_push(l->m, r4_le64_get(b + i), r4_le64_get(b + i + 8))))
			return rc;
	return 0;
}

static int map_load(struct r4_db *db, const struct r4_inode *ino, struct map *m)
{
	struct load_ctx l = {db, m};

	memset(m, 0, sizeof(*m));
	return each_body_item(db, ino, 0, UINT64_MAX, load_fn, &l);
}

int r4_reg_map(struct r4_db *db, const struct r4_inode *ino, struct r4_extent **units,
	       size_t *n)
{
	struct map m = {0};
	enum body_kind kind;
	int rc = body_kind(db, ino, &kind);

	if (!rc && kind == BODY_EXTENTS)
		rc = map_load(db, ino, &m);

	if (rc) {
		r4_free(m.e);
		return rc;
	}
	*units = m.e;
	*n = m.n;
	return 0;
}

/* m's units as extent items of ino's body from off on, as many items as
 * the node size needs (p: the path the inserts use). */
static int insert_units(struct r4_db *db, const struct r4_inode *ino, uint64_t off,
			const struct map *m, struct r4_path *p)
{
	size_t per = r4_tree_max_item(db) / R4_EXTENT_UNIT, pieces = (m->n + per - 1) / per;
	uint8_t *buf;
	r4_key k;
	int rc = 0;

	/* pieces of even size: a map one unit too long for an item makes two
	 * halves with room to grow, not a full item and a one-unit one (which
	 * would stay for good: nothing merges extent items) */
	if (pieces)
		per = (m->n + pieces - 1) / pieces;
	if (!(buf = r4_malloc(R4_MIN(m->n, per) * R4_EXTENT_UNIT + 1)))
		return -ENOMEM;
	for (size_t i = 0; i < m->n && !rc; i += per) {
		size_t cnt = R4_MIN(per, m->n - i);

		r4_item_extent_encode(m->e + i, cnt, buf);
		body_key(ino, off, &k);
		if (!(rc = r4_tree_lookup(db, &k, R4_LEVEL_TWIG, p)))
			rc = r4_tree_insert(db, p, &k, R4_ITEM_EXTENT40, buf,
					    (unsigned)(cnt * R4_EXTENT_UNIT));
		off += r4_item_extent_width(m->e + i, cnt) * db->bs;
	}
	r4_free(buf);
	return rc;
}

static int map_store(struct r4_db *db, const struct r4_inode *ino, struct map *m)
{
	struct r4_path p;
	int rc = remove_body(db, ino, false);

	return rc ? rc : insert_units(db, ino, 0, m, &p);
}

static uint64_t map_allocated(const struct map *m)
{
	uint64_t n = 0;

	for (size_t i = 0; i < m->n; i++)
		if (m->e[i].ex_start > R4_EXTENT_UNALLOC)
			n += m->e[i].ex_width;
	return n;
}

/* Copy data into blocks [first, ...) of physical run start (new: no read). */
static int note_file(struct r4_db *db, const struct r4_inode *ino);

static int fill_blocks(struct r4_db *db, const struct r4_inode *ino, uint64_t start,
		       uint64_t bidx, uint64_t count, bool fresh, uint64_t off, const uint8_t *buf,
		       uint64_t len)
{
	int rc;

	if (count && (rc = note_file(db, ino)))
		return rc;
	for (uint64_t i = 0; i < count; i++) {
		uint64_t bo = (bidx + i) * db->bs;
		uint64_t from = R4_MAX(bo, off), to = R4_MIN(bo + db->bs, off + len);
		bool whole = from == bo && to == bo + db->bs;
		struct r4_page *pg;

		if ((rc = page_get(db, start + i, !fresh && !whole, &pg)))
			return rc;
		db->gen++;
		memcpy(pg->data + (from - bo), buf + (from - off), to - from);
	}
	return 0;
}

/* Remember ino for the commit's placement (r4_reg_place). */
static int note_file(struct r4_db *db, const struct r4_inode *ino)
{
	if (!db->nfake_files || r4_key_cmp(&db->fake_files[db->nfake_files - 1], &ino->sdkey)) {
		if (r4_grow(&db->fake_files, &db->fake_files_cap, db->nfake_files + 1,
			    sizeof(*db->fake_files), 16))
			return -ENOMEM;
		db->fake_files[db->nfake_files++] = ino->sdkey;
	}
	return 0;
}

/* n new data blocks: a run of fake numbers, real ones come at commit.
 * (The write grabbed their space: r4_txn_need counts them from now.) */
static int fake_run(struct r4_db *db, uint64_t n, uint64_t *start)
{
	*start = db->next_fake_data;
	db->next_fake_data += n;
	db->fake_data += n;
	db->fake_units++;
	return 0;
}

static bool is_fake_data(uint64_t blk)
{
	return (blk & R4_FAKE_DATA) == R4_FAKE_DATA;
}

/*
 * Write [off, off + len) into the map: allocated blocks are rewritten (as
 * pending pages), holes and the space past the end get new (fake) blocks.
 */
static int map_write(struct r4_db *db, const struct r4_inode *ino, struct map *m, uint64_t off,
		     const uint8_t *buf, uint64_t len)
{
	uint64_t first = off / db->bs, last = (off + len - 1) / db->bs, idx = 0;
	struct map out = {0};
	int rc = 0;

	if (map_blocks(m) <= last && (rc = map_push(m, 0, last + 1 - map_blocks(m))))
		return rc;
	for (size_t i = 0; i < m->n && !rc; i++) {
		struct r4_extent u = m->e[i];
		uint64_t a = R4_MAX(idx, first), b = R4_MIN(idx + u.ex_width - 1, last);

		if (a > b) {		/* no overlap */
			rc = map_push(&out, u.ex_start, u.ex_width);
		} else if (u.ex_start > R4_EXTENT_UNALLOC) {
			rc = map_push(&out, u.ex_start, u.ex_width);
			if (!rc)
				rc = fill_blocks(db, ino, u.ex_start + (a - idx), a, b - a + 1, false, off,
						 buf, len);
		} else {
			uint64_t s;

			if (!(rc = map_push(&out, 0, a - idx)) &&
			    !(rc = fake_run(db, b - a + 1, &s)) &&
			    !(rc = map_push(&out, s, b - a + 1)) &&
			    !(rc = fill_blocks(db, ino, s, a, b - a + 1, true, off, buf, len)))
				rc = map_push(&out, 0, idx + u.ex_width - 1 - b);
		}
		idx += u.ex_width;
	}
	r4_free(m->e);
	*m = out;
	return rc;
}

/* Keep blocks below `keep`; free the rest. */
static void map_cut(struct r4_db *db, struct map *m, uint64_t keep)
{
	uint64_t idx = 0;
	size_t n = 0;

	for (size_t i = 0; i < m->n; i++) {
		struct r4_extent *u = &m->e[i];

		if (idx >= keep) {
			if (u->ex_start > R4_EXTENT_UNALLOC)
				r4_reg_forget_blocks(db, u->ex_start, u->ex_width);
		} else if (idx + u->ex_width > keep) {
			uint64_t cut = idx + u->ex_width - keep;

			if (u->ex_start > R4_EXTENT_UNALLOC)
				r4_reg_forget_blocks(db, u->ex_start + (keep - idx), cut);
			u->ex_width -= cut;
			n = i + 1;
		} else {
			n = i + 1;
		}
		idx += u->ex_width;
	}
	m->n = n;
}

/* Make the map cover exactly the blocks of a file of `size` bytes. */
static int map_fit(struct r4_db *db, struct map *m, uint64_t size)
{
	uint64_t want = (size + db->bs - 1) / db->bs, have = map_blocks(m);

	if (have > want)
		map_cut(db, m, want);
	return have < want ? map_push(m, 0, want - have) : 0;
}

/* ---- delayed allocation and relocation ---- */

/*
 * At commit every file noted in the transaction gets real blocks for its
 * fake runs, after its previous block.  Its overwritten blocks (pending
 * pages of committed blocks) are relocated the same way, written once to
 * new blocks instead of twice through the journal, where that costs less:
 * in an extent item with at least two of them, or whose twig is dirty
 * anyway (ENGINE.md 4.4: the hybrid model's choice, by cost).  Relocation
 * edits the file's extent items one by one in place, so only the twigs
 * whose units change get dirty; the old blocks are freed at commit.
 */
struct placing {
	struct r4_db *db;
	uint64_t *over;		/* committed blocks with pages, sorted */
	size_t nover;
	bool relocate_all;	/* the memory bound: every overwrite goes */
	bool no_room;		/* relocation met ENOSPC: the rest is journalled */
	uint64_t hint;
};

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Index of the first of pl->over >= blk. */
static size_t over_at(const struct placing *pl, uint64_t blk)
{
	return r4_lower_bound(pl->over, pl->nover, blk);
}

/* Real blocks for [from, from + n), whose pages are keyed `from`.. now;
 * freeing `from`.. when they were committed blocks (relocation). */
static int move_run(struct placing *pl, struct map *out, uint64_t from, uint64_t n, bool reloc)
{
	struct r4_db *db = pl->db;

	for (uint64_t done = 0; done < n;) {
		uint64_t s, got;
		int rc = r4_alloc_alloc_run(db->alloc, pl->hint, n - done, &s, &got);

		if (rc == -ENOSPC && reloc) {	/* journal what is left */
			pl->no_room = true;
			return map_push(out, from + done, n - done);
		}
		if (rc)
			return rc;
		for (uint64_t k = 0; k < got; k++)
			page_rekey(db, from + done + k, s + k);
		if (reloc)
			r4_alloc_free(db->alloc, from + done, got);
		else
			db->fake_data -= R4_MIN(got, db->fake_data);
		if ((rc = map_push(out, s, got)))
			return rc;
		done += got;
		pl->hint = s + got;
	}
	return 0;
}

/* Relocate [from, from + n) to the free run at `to`. */
static int move_to(struct placing *pl, struct map *out, uint64_t from, uint64_t n, uint64_t to)
{
	struct r4_db *db = pl->db;
	uint64_t s, got;
	int rc = r4_alloc_alloc(db->alloc, to, n, &s, &got);

	if (rc)
		return rc;
	R4_INVARIANT(s == to && got == n);
	for (uint64_t k = 0; k < n; k++)
		page_rekey(db, from + k, s + k);
	r4_alloc_free(db->alloc, from, n);
	pl->hint = s + n;
	return map_push(out, s, n);
}

/*
 * One allocated unit: its runs of overwritten blocks move, the rest stays.
 * A run goes right after the block before it when that is free (move_run's
 * hint), so it joins the previous unit; else, when it ends the unit, right
 * before next (the next unit's first block, 0: none) when that is free, so
 * it joins the next.  Random overwrites relocate a block at a time, and a
 * block that lands beside neither neighbour is a unit of its own: units
 * fill twigs, and the more twigs a map takes, the more of them a
 * transaction's overwrites touch (each is written).
 */
static int relocate_unit(struct placing *pl, struct map *out, const struct r4_extent *u,
			 uint64_t next)
{
	uint64_t at = u->ex_start, end = u->ex_start + u->ex_width;
	struct r4_alloc *a = pl->db->alloc;
	int rc;

	for (size_t i = over_at(pl, at); i < pl->nover && pl->over[i] < end && !pl->no_room;) {
		size_t j = i + 1;

		while (j < pl->nover && pl->over[j] == pl->over[j - 1] + 1 && pl->over[j] < end)
			j++;
		uint64_t n = j - i;

		if ((rc = map_push(out, at, pl->over[i] - at)))
			return rc;
		if (pl->over[j - 1] + 1 == end && next > n && r4_alloc_is_used(a, pl->hint) &&
		    r4_alloc_run_at(a, next - n) >= n)
			rc = move_to(pl, out, pl->over[i], n, next - n);
		else
			rc = move_run(pl, out, pl->over[i], n, true);
		if (rc)
			return rc;
		at = pl->over[i] + n;
		i = j;
	}
	if ((rc = map_push(out, at, end - at)))
		return rc;
	pl->hint = end;
	return 0;
}

/* Overwritten blocks an allocated unit holds. */
static size_t unit_over(const struct placing *pl, const struct r4_extent *u)
{
	size_t j = over_at(pl, u->ex_start), k = j;

	if (u->ex_start <= R4_EXTENT_UNALLOC || is_fake_data(u->ex_start))
		return 0;
	while (k < pl->nover && pl->over[k] < u->ex_start + u->ex_width)
		k++;
	return k - j;
}

/* Overwritten blocks an item's units hold. */
static size_t item_over(const struct placing *pl, const struct map *m)
{
	size_t k = 0;

	for (size_t i = 0; i < m->n; i++)
		k += unit_over(pl, &m->e[i]);
	return k;
}

/* Put units in place of the current item (its first offset stays). */
static int item_replace(struct r4_db *db, const struct r4_inode *ino, struct r4_path *p,
			uint64_t ioff, unsigned len, const struct map *out)
{
	size_t per = r4_tree_max_item(db) / R4_EXTENT_UNIT;
	unsigned want = (unsigned)(out->n * R4_EXTENT_UNIT);
	uint8_t *body;
	unsigned pid, ilen;
	r4_key k;
	int rc;

	if (out->n <= per && (want == len || !r4_tree_resize(db, p, R4_MIN(want, len), (int)want - (int)len))) {
		r4_tree_touch(db, p);
		r4_path_item(db, p, &k, &pid, &body, &ilen);
		r4_item_extent_encode(out->e, out->n, body);
		return 0;
	}
	/* too big for its node: as several items */
	if ((rc = r4_tree_remove(db, p)))
		return rc;
	return insert_units(db, ino, ioff, out, p);
}

static int place_file(struct placing *pl, const r4_key *sdkey)
{
	struct r4_db *db = pl->db;
	struct r4_inode ino = {.sdkey = *sdkey};	/* body keys need only this */
	struct map m = {0}, out = {0};
	enum body_kind kind;
	uint64_t off = 0;
	int rc;

	if ((rc = body_kind(db, &ino, &kind)) || kind != BODY_EXTENTS)
		return rc;	/* removed, or back to tails: its blocks went with it */
	pl->hint = UINT64_MAX;	/* no previous block: after the last allocation */
	for (;;) {
		struct r4_path p;
		uint8_t *body;
		unsigned pid, len;
		r4_key k;
		size_t n;
		bool reloc, changed = false;

		body_key(&ino, off, &k);
		if ((rc = r4_tree_lookup(db, &k, R4_LEVEL_TWIG, &p)))
			break;
		if (!r4_path_item(db, &p, &k, &pid, &body, &len) || !is_body_of(&ino, &k) ||
		    pid != R4_ITEM_EXTENT40 || r4_key_offset(&k) != off) {
			r4_path_release(db, &p);
			break;	/* past the last item */
		}
		if ((rc = r4_item_extent_count(body, len, &n)) ||
		    (rc = map_room(&m, n)) ||
		    (rc = r4_item_extent_decode(body, len, m.e, n))) {
			r4_path_release(db, &p);
			break;
		}
		m.n = n;
		out.n = 0;
		size_t over = item_over(pl, &m);

		/* a relocated run splits its unit in three, and a clean twig gets
		 * dirty: only with room to spare beyond what the commit needs */
		reloc = !pl->no_room && (pl->relocate_all || p.lv[R4_LEVEL_TWIG].node->dirty ||
					 over >= 2) &&
			r4_txn_slack(db) > r4_txn_tree_cost(db, 1, 3 * over * R4_EXTENT_UNIT);
		for (size_t i = 0; i < m.n && !rc; i++) {
			const struct r4_extent *u = &m.e[i];

			if (is_fake_data(u->ex_start)) {
				rc = move_run(pl, &out, u->ex_start, u->ex_width, false);
				changed = true;
			} else if (reloc && unit_over(pl, u)) {
				const struct r4_extent *v = i + 1 < m.n ? &m.e[i + 1] : NULL;

				rc = relocate_unit(pl, &out, u,
						   v && v->ex_start > R4_EXTENT_UNALLOC &&
						   !is_fake_data(v->ex_start) ? v->ex_start : 0);
				changed = true;
			} else {
				rc = map_push(&out, u->ex_start, u->ex_width);
				if (u->ex_start > R4_EXTENT_UNALLOC)
					pl->hint = u->ex_start + u->ex_width;
			}
		}
		off += r4_item_extent_width(m.e, m.n) * db->bs;
		if (!rc && changed)
			rc = item_replace(db, &ino, &p, r4_key_offset(&k), len, &out);
		r4_path_release(db, &p);
		if (rc)
			break;
	}
	r4_free(m.e);
	r4_free(out.e);
	return rc;
}

static int cmp_sdkey(const void *a, const void *b)
{
	return r4_key_cmp(a, b);
}

static int place(struct r4_db *db, bool relocate_all)
{
	struct placing pl = {.db = db, .relocate_all = relocate_all};
	size_t n = 0;
	int rc = 0;

	if (!db->nfake_files)
		return 0;
	qsort(db->fake_files, db->nfake_files, sizeof(*db->fake_files), cmp_sdkey);
	for (size_t i = 0; i < db->nfake_files; i++)
		if (!n || r4_key_cmp(&db->fake_files[n - 1], &db->fake_files[i]))
			db->fake_files[n++] = db->fake_files[i];
	db->nfake_files = n;
	if (db->npages && !(pl.over = r4_malloc(db->npages * sizeof(*pl.over))))
		return -ENOMEM;
	for (size_t i = 0; i < db->npage_buckets; i++)
		for (struct r4_page *pg = db->pages[i]; pg; pg = pg->next)
			if (!is_fake_data(pg->blk) && r4_alloc_is_committed(db->alloc, pg->blk))
				pl.over[pl.nover++] = pg->blk;
	if (pl.nover)
		qsort(pl.over, pl.nover, sizeof(*pl.over), cmp_u64);
	for (size_t i = 0; i < n && !rc; i++)
		rc = place_file(&pl, &db->fake_files[i]);
	if (!rc) {
		assert(!db->fake_data);
		db->nfake_files = 0;
		db->fake_units = 0;
	}
	r4_free(pl.over);
	return rc;
}

int r4_reg_place(struct r4_db *db)
{
	return place(db, false);
}

/* ---- the repacker's move (repack.c) ---- */

enum { MOVE_CHUNK = 64 };	/* blocks copied at a time: 256 KiB */

/* A piece of a move: count blocks from block `from` to block `to`. */
struct move_seg {
	uint64_t from, to, count;
};

/* m's allocated blocks past the first skip, in order, laid into the runs
 * to[0, nto) until they are full (the rest stay): the new map in *out, the
 * pieces to copy in *seg. */
static int move_plan(const struct map *m, uint64_t skip, const struct r4_extent *to, size_t nto,
		     struct map *out, struct move_seg **seg, size_t *nseg)
{
	size_t t = 0, cap = 0;
	uint64_t used = 0;	/* blocks of to[t] taken */
	int rc = 0;

	for (size_t i = 0; i < m->n && !rc; i++) {
		const struct r4_extent *u = &m->e[i];
		uint64_t done = 0;

		if (u->ex_start <= R4_EXTENT_UNALLOC) {
			rc = map_push(out, u->ex_start, u->ex_width);
			continue;
		}
		/* the part before the range, and after it, stays */
		if (skip) {
			done = R4_MIN(skip, u->ex_width);
			skip -= done;
			rc = map_push(out, u->ex_start, done);
		}
		if (t == nto && done < u->ex_width && !rc)
			rc = map_push(out, u->ex_start + done, u->ex_width - done);
		while (t < nto && done < u->ex_width && !rc) {
			uint64_t k = R4_MIN(u->ex_width - done, to[t].ex_width - used);

			if ((rc = map_push(out, to[t].ex_start + used, k)) ||
			    (rc = r4_grow(seg, &cap, *nseg + 1, sizeof(**seg), 16) ? -ENOMEM : 0))
				break;
			(*seg)[(*nseg)++] = (struct move_seg){u->ex_start + done, to[t].ex_start + used, k};
			done += k;
			if ((used += k) == to[t].ex_width) {
				t++;
				used = 0;
				if (t == nto && done < u->ex_width)
					rc = map_push(out, u->ex_start + done, u->ex_width - done);
			}
		}
	}
	return rc ? rc : t == nto ? 0 : -EINVAL;
}

/* Copy a piece through buf (MOVE_CHUNK blocks): pending pages of this
 * transaction win over what the image holds, as reads see them. */
static int move_copy(struct r4_db *db, const struct move_seg *s, uint8_t *buf)
{
	for (uint64_t done = 0; done < s->count;) {
		uint64_t k = R4_MIN(s->count - done, MOVE_CHUNK), from = s->from + done;
		int rc = 0;

		if (from + k > db->block_count)
			return R4_CORRUPT(&db->lg, from, "extent points outside the volume");
		if (db->npages)
			for (uint64_t i = 0; i < k && !rc; i++)
				rc = read_block(db, from + i, 0, buf + i * db->bs, db->bs);
		else
			rc = r4_io_read(db->io, from * db->bs, buf, k * db->bs);
		if (rc || (rc = r4_io_write(db->io, (s->to + done) * db->bs, buf, k * db->bs)))
			return rc;
		done += k;
	}
	return 0;
}

/* Are the runs to[0, n) free in the working state and apart? */
static bool runs_free(const struct r4_db *db, const struct r4_extent *to, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		uint64_t s, len;

		if (!to[i].ex_width || !r4_alloc_next_run(db->alloc, to[i].ex_start, &s, &len) ||
		    s != to[i].ex_start || len < to[i].ex_width)
			return false;
		for (size_t j = 0; j < i; j++)
			if (to[j].ex_start < to[i].ex_start + to[i].ex_width &&
			    to[i].ex_start < to[j].ex_start + to[j].ex_width)
				return false;
	}
	return true;
}

int r4_reg_move(struct r4_db *db, const struct r4_inode *ino, uint64_t skip,
		const struct r4_extent *to, size_t nto)
{
	struct map m = {0}, out = {0};
	struct move_seg *seg = NULL;
	size_t nseg = 0;
	enum body_kind kind;
	uint64_t n = 0;
	uint8_t *buf = NULL;
	int rc;

	if ((rc = body_kind(db, ino, &kind)))
		return rc;
	if (kind != BODY_EXTENTS || r4_ccreg_is(ino) || !runs_free(db, to, nto))
		return -EINVAL;
	if ((rc = map_load(db, ino, &m)))
		goto out;
	for (size_t i = 0; i < m.n; i++)
		if (m.e[i].ex_start == R4_EXTENT_UNALLOC || is_fake_data(m.e[i].ex_start)) {
			rc = -EAGAIN;	/* new data, placed at commit */
			goto out;
		}
	for (size_t i = 0; i < nto; i++)
		n += to[i].ex_width;
	if ((rc = move_plan(&m, skip, to, nto, &out, &seg, &nseg)) ||
	    (rc = r4_txn_grab(db, n + map_cost(db, m.items, out.n), false)))
		goto out;
	if (!(buf = r4_malloc(MOVE_CHUNK * db->bs))) {
		rc = -ENOMEM;
		goto out;
	}
	/* the new blocks are free in the committed state: written now, they
	 * are durable before the commit point that makes the map use them */
	for (size_t i = 0; i < nto; i++)
		r4_alloc_mark_used(db->alloc, to[i].ex_start, to[i].ex_width);
	db->gen++;
	for (size_t i = 0; i < nseg && !rc; i++)
		rc = move_copy(db, &seg[i], buf);
	if (rc || (rc = map_store(db, ino, &out)))
		goto out;
	for (size_t i = 0; i < nseg; i++)
		r4_reg_forget_blocks(db, seg[i].from, seg[i].count);
out:
	r4_free(buf);
	r4_free(seg);
	r4_free(out.e);
	r4_free(m.e);
	return rc;
}

/* ---- policy and the public operations ---- */

/* A body r4 may change: reg40 or ccreg40 (the latter is ccreg.c's). */
static int writable_body(struct r4_db *db, const struct r4_inode *ino, enum body_kind kind)
{
	uint16_t id;

	if (r4_sd_has(&ino->sd, R4_SDEXT_PSET) &&
	    r4_item_pset_get(&ino->sd.sd_pset, R4_PSET_FILE, &id) && id != R4_FILE_REG40 &&
	    id != R4_FILE_CCREG40)
		return -EOPNOTSUPP;
	if (r4_ccreg_is(ino) && (kind == BODY_TAILS || kind == BODY_EXTENTS))
		return R4_CORRUPT(&db->lg, 0, "file %llx: ccreg40 file with a %s body",
				  (unsigned long long)r4_key_objectid(&ino->sdkey),
				  kind == BODY_TAILS ? "tail" : "extent");
	return 0;
}

/* Is the body ccreg.c's: a ccreg40 file, or ctails (then it becomes one)? */
static bool compressed_body(struct r4_inode *ino, enum body_kind kind)
{
	if (kind == BODY_CTAILS && !r4_ccreg_is(ino))
		r4_ccreg_init_sd(&ino->sd);
	return r4_ccreg_is(ino);
}

static const struct r4_file_ops *file_ops(const struct r4_inode *ino);

/* ---- formatting plugins: tails or extents for a body of a given size ---- */

static bool never_tails(uint64_t size, uint32_t bs)
{
	(void)size;
	(void)bs;
	return false;
}

static bool always_tails(uint64_t size, uint32_t bs)
{
	(void)size;
	(void)bs;
	return true;
}

static bool four_blocks(uint64_t size, uint32_t bs)
{
	return size <= 4 * (uint64_t)bs;
}

#define FORMATTING(fn) (&(const struct r4_formatting_ops){fn})
const struct r4_plugin r4_formatting_plugins[3] = {
	{"extents", "bodies in extents only (whole blocks)", FORMATTING(never_tails)},
	{"tails", "bodies in tails only (packed into the leaves)", FORMATTING(always_tails)},
	{"smart", "tails up to four blocks, extents beyond (the default)",
	 FORMATTING(four_blocks)},
};
#undef FORMATTING

static bool want_tails(const struct r4_db *db, const struct r4_inode *ino, uint64_t size)
{
	const struct r4_formatting_ops *f = r4_plugin_ops(R4_PTYPE_FORMATTING, ino->formatting);

	return f ? f->tails(size, db->bs) : four_blocks(size, db->bs);
}

static void set_size(struct r4_inode *ino, uint64_t size, uint64_t bytes)
{
	ino->sd.sd_size = size;
	ino->sd.sd_bytes_rdev = bytes;
}

/* Rewrite the whole body (of that kind) as tails holding data[0, size). */
static int to_tails(struct r4_db *db, struct r4_inode *ino, unsigned kind, const uint8_t *data,
		    uint64_t size)
{
	int rc;

	if ((kind != BODY_NONE && (rc = remove_body(db, ino, true))) ||
	    (rc = write_tails(db, ino, data, size)))
		return rc;
	set_size(ino, size, size);
	return 0;
}

/* ---- writes that leave the map alone or extend it at its end ---- */

struct over_ctx {
	struct r4_db *db;
	const struct r4_inode *ino;
	uint64_t off, end;	/* the part of the write inside the map */
	const uint8_t *buf;
	uint64_t len;		/* the whole write: buf holds [off, off + len) */
	bool check;		/* only look for holes, and count... */
	uint64_t fresh;		/* ... the real blocks without a page yet */
};

/* Rewrite the allocated blocks of [off, end) as pages; a hole: -EAGAIN. */
static int over_fn(void *ctx, uint64_t ioff, unsigned pid, const uint8_t *b, unsigned len)
{
	struct over_ctx *o = ctx;
	struct r4_db *db = o->db;
	int rc;

	if (pid != R4_ITEM_EXTENT40)
		return -EAGAIN;
	for (unsigned i = 0; i + R4_EXTENT_UNIT <= len; i += R4_EXTENT_UNIT) {
		uint64_t start = r4_le64_get(b + i), width = r4_le64_get(b + i + 8);
		uint64_t ublk = ioff / db->bs, uend = ioff + width * db->bs;

		ioff = uend;
		if (uend <= o->off)
			continue;
		if (uend - width * db->bs >= o->end)
			break;
		if (start <= R4_EXTENT_UNALLOC)
			return -EAGAIN;
		uint64_t a = R4_MAX(ublk, o->off / db->bs);
		uint64_t z = R4_MIN(ublk + width, (o->end + db->bs - 1) / db->bs);

		if (o->check) {
			for (uint64_t k = start + (a - ublk); !is_fake_data(start) &&
			     k < start + (z - ublk); k++)
				o->fresh += !page_find(db, k);
			continue;
		}

		if ((rc = fill_blocks(db, o->ino, start + (a - ublk), a, z - a, false, o->off, o->buf,
				      o->len)))
			return rc;
	}
	return 0;
}

/*
 * The common writes to an extent file without loading its map: blocks
 * already allocated are rewritten, and blocks right after the map's end
 * become one new (fake) run that extends the last unit or is added after
 * it.  -EAGAIN for anything else (holes, a gap after the end): the caller
 * takes the general path.  *added = blocks allocated.
 */
static int fast_write(struct r4_db *db, struct r4_inode *ino, uint64_t off, const uint8_t *buf,
		      uint64_t len, uint64_t *added)
{
	uint64_t first = off / db->bs, last = (off + len - 1) / db->bs, end, s, ls, lw;
	struct r4_path p;
	uint8_t *body;
	unsigned pid, ilen;
	r4_key k;
	int rc;

	*added = 0;
	body_key(ino, UINT64_MAX, &k);
	if ((rc = r4_tree_lookup(db, &k, R4_LEVEL_LEAF, &p)))
		return rc;
	if (!r4_path_item(db, &p, &k, &pid, &body, &ilen) || !is_body_of(ino, &k) ||
	    pid != R4_ITEM_EXTENT40 || ilen < R4_EXTENT_UNIT || ilen % R4_EXTENT_UNIT ||
	    r4_key_offset(&k) % db->bs) {
		rc = -EAGAIN;
		goto out;
	}
	end = r4_key_offset(&k) / db->bs;
	for (unsigned i = 0; i < ilen; i += R4_EXTENT_UNIT)
		end += r4_le64_get(body + i + 8);
	ls = r4_le64_get(body + ilen - R4_EXTENT_UNIT);
	lw = r4_le64_get(body + ilen - 8);
	if (first > end) {		/* a gap: holes to store */
		rc = -EAGAIN;
		goto out;
	}
	struct over_ctx o = {db, ino, off, R4_MIN(off + len, end * db->bs), buf, len, true, 0};
	uint64_t append = last < end ? 0 : last + 1 - R4_MAX(first, end);

	/* every block to rewrite allocated (else -EAGAIN), before any change:
	 * a page each for those not pending yet, the new blocks, at most one
	 * unit more (in place or as an item), and the stat data */
	if ((first < end && (rc = each_body_item(db, ino, off, o.end, over_fn, &o))) ||
	    (rc = r4_txn_grab(db, o.fresh + r4_txn_fake_cost(db, append, 1) + (append ? E(db) : 0) + E(db),
			      false)))
		goto out;
	o.check = false;
	if (first < end && (rc = each_body_item(db, ino, off, o.end, over_fn, &o)))
		goto out;
	if (last < end)
		goto out;
	/* append blocks [a, last] */
	uint64_t a = R4_MAX(first, end), n = last + 1 - a;

	if ((rc = fake_run(db, n, &s)) || (rc = fill_blocks(db, ino, s, a, n, true, off, buf, len)))
		goto out;
	*added = n;
	r4_path_item(db, &p, &k, &pid, &body, &ilen);
	if (ls > R4_EXTENT_UNALLOC && ls + lw == s) {
		r4_tree_touch(db, &p);
		r4_le64_put(body + ilen - 8, lw + n);
	} else if (ilen + R4_EXTENT_UNIT <= r4_tree_max_item(db) &&
		   !r4_tree_resize(db, &p, ilen, R4_EXTENT_UNIT)) {
		r4_path_item(db, &p, &k, &pid, &body, &ilen);
		r4_le64_put(body + ilen - R4_EXTENT_UNIT, s);
		r4_le64_put(body + ilen - 8, n);
	} else {
		uint8_t unit[R4_EXTENT_UNIT];

		r4_path_release(db, &p);
		r4_le64_put(unit, s);
		r4_le64_put(unit + 8, n);
		body_key(ino, a * db->bs, &k);
		if ((rc = r4_tree_lookup(db, &k, R4_LEVEL_TWIG, &p)))
			return rc;
		rc = r4_tree_insert(db, &p, &k, R4_ITEM_EXTENT40, unit, R4_EXTENT_UNIT);
	}
out:
	r4_path_release(db, &p);
	return rc;
}

/* Write into an extent body (converting a tail body first). */
static int extent_write(struct r4_db *db, struct r4_inode *ino, enum body_kind kind,
			uint64_t off, const uint8_t *buf, uint64_t len, uint64_t newsize)
{
	struct map m = {0};
	uint8_t *old = NULL;
	uint64_t oldsize = ino->sd.sd_size;
	uint64_t added;
	int rc;

	if (kind == BODY_EXTENTS && len &&
	    (rc = fast_write(db, ino, off, buf, len, &added)) != -EAGAIN) {
		if (!rc)
			set_size(ino, newsize, ino->sd.sd_bytes_rdev + added * db->bs);
		return rc;
	}
	if (kind == BODY_TAILS) {
		/* the tails become blocks, then the write: at most 3 + 3 units */
		if ((rc = read_all(db, ino, oldsize, &old)) ||
		    (rc = grab_rewrite(db, ino, kind, data_cost(db, oldsize) + data_cost(db, len) +
				       map_cost(db, 0, 6), false)) ||
		    (rc = remove_body(db, ino, true)))
			goto out;
		if (oldsize && (rc = map_write(db, ino, &m, 0, old, oldsize)))
			goto out;
	} else if ((rc = map_load(db, ino, &m)) ||
		   /* a write splits each hole it meets in up to 3 units */
		   (rc = r4_txn_grab(db, data_cost_in(db, len, m.n + 1) +
				     map_cost(db, m.items, 3 * m.n + 3) + E(db), false))) {
		goto out;
	}
	if (len && (rc = map_write(db, ino, &m, off, buf, len)))
		goto out;
	if ((rc = map_fit(db, &m, newsize)) || (rc = map_store(db, ino, &m)))
		goto out;
	set_size(ino, newsize, map_allocated(&m) * db->bs);
out:
	r4_free(old);
	r4_free(m.e);
	return rc;
}

/*
 * The transaction's pages outgrew the memory bound (the node cache's):
 * place the new data and relocate every overwritten block now, and write
 * them out (to blocks free in the committed state: safe before the commit
 * point), so they read back from the image.  Only what relocation could
 * not move (a full volume) stays in memory.
 */
int r4_reg_spill(struct r4_db *db)
{
	struct r4_wset s = {0};
	int rc;

	if (db->npages < db->cache.dirty_bound)
		return 0;
	if ((rc = place(db, true)))
		return rc;
	for (size_t i = 0; i < db->npage_buckets && !rc; i++)
		for (struct r4_page *pg = db->pages[i]; pg && !rc; pg = pg->next)
			if (!is_fake_data(pg->blk) && !r4_alloc_is_committed(db->alloc, pg->blk))
				rc = r4_wset_add(&s, pg->blk, pg->data, false);
	if (!rc && !(rc = r4_wset_write(db, &s)))
		for (size_t i = 0; i < s.n; i++)
			page_drop(db, s.v[i].blk);
	db->spilled += s.n;
	r4_free(s.v);
	return rc;
}

/* Write into a reg40 body of the given kind. */
static int write_body(struct r4_db *db, struct r4_inode *ino, unsigned kind, uint64_t off,
		      const uint8_t *buf, size_t len)
{
	uint64_t newsize = R4_MAX(ino->sd.sd_size, off + len);
	uint8_t *all;
	int rc;

	if (kind == BODY_EXTENTS || !want_tails(db, ino, newsize))
		return extent_write(db, ino, kind, off, buf, len, newsize);
	if (kind == BODY_NONE && off == 0 && len == newsize) {
		/* (nothing there: the tails are buf as it stands) */
		if (!(rc = grab_rewrite(db, ino, kind, tails_cost(db, newsize), false)))
			rc = to_tails(db, ino, kind, buf, newsize);
		return rc;
	}
	if ((rc = read_all(db, ino, newsize, &all)))
		return rc;
	memcpy(all + off, buf, len);
	if (!(rc = grab_rewrite(db, ino, kind, tails_cost(db, newsize), false)))
		rc = to_tails(db, ino, kind, all, newsize);
	r4_free(all);
	return rc;
}

/*
 * The kernel's cryptcompress2unixfile: the first cluster, which is all the
 * file holds, moves to extents and the plugin set goes, so the file is
 * reg40 from now on (formatting by the root's policy once reloaded).
 */
static int ccreg_to_reg(struct r4_db *db, struct r4_inode *ino)
{
	uint64_t size = ino->sd.sd_size;
	uint8_t *all;
	int rc;

	if ((rc = read_all(db, ino, size, &all)))
		return rc;
	if (!(rc = remove_body(db, ino, false))) {
		r4_ccreg_drop_sd(db, ino);
		set_size(ino, 0, 0);
		rc = extent_write(db, ino, BODY_NONE, 0, all, size, size);
	}
	r4_free(all);
	return rc;
}

/* A write to a ccreg40 file, and the rest as reg40 once conv converts it. */
static int ccreg40_write(struct r4_db *db, struct r4_inode *ino, unsigned kind, uint64_t off,
			 const uint8_t *buf, size_t len)
{
	struct r4_txn_op op;
	size_t done;
	bool convert;
	int rc;

	/* the clusters the write touches (and the old last one, zeros to its
	 * end), and, in mode conv, the whole file made reg40 */
	uint64_t cost = r4_ccreg_cost(db, ino, off, len), size = ino->sd.sd_size;

	if (ino->cmode == R4_CMODE_CONV)
		cost += data_cost(db, R4_MAX(size, off + len)) + map_cost(db, 0, 4);
	if ((rc = ino->cmode == R4_CMODE_CONV ? grab_rewrite(db, ino, kind, cost, false)
					      : r4_txn_grab(db, cost + E(db), false)))
		return rc;
	if ((rc = r4_txn_op_begin(db, &op)))	/* (what follows is grabbed for) */
		return rc;
	if (!(rc = r4_ccreg_write(db, ino, off, buf, len, &done, &convert)) && convert &&
	    !(rc = ccreg_to_reg(db, ino)))
		rc = write_body(db, ino, BODY_EXTENTS, off + done, buf + done, len - done);
	return r4_txn_op_end(db, &op, rc);
}

int r4_reg_write(struct r4_db *db, struct r4_inode *ino, uint64_t off, const void *buf,
		 size_t len)
{
	enum body_kind kind;
	int rc;

	if (len == 0)
		return 0;
	if (off + len < off || off + len > ((uint64_t)1 << 62))
		return -EFBIG;
	if ((rc = body_kind_to_change(db, ino, &kind)) || (rc = writable_body(db, ino, kind)))
		return rc;
	compressed_body(ino, kind);
	if ((rc = file_ops(ino)->write(db, ino, kind, off, buf, len)))
		return rc;
	r4_obj_touch(db, ino, true, true);
	return r4_obj_save(db, ino);
}

int r4_reg_new_tails(struct r4_db *db, struct r4_inode *ino, size_t n)
{
	int rc;

	/* as r4_reg_write's first write of n bytes at 0 would go: no body
	 * yet, reg40 (not ccreg40), its formatting wanting tails */
	if (!n || n > ((uint64_t)1 << 62) || r4_ccreg_is(ino) || writable_body(db, ino, BODY_NONE) ||
	    !want_tails(db, ino, n))
		return 0;
	if ((rc = r4_txn_grab(db, tails_cost(db, n), false)))
		return rc;
	set_size(ino, n, n);
	return 1;
}

int r4_reg_new_put(struct r4_db *db, const struct r4_inode *ino, const uint8_t *p, size_t n)
{
	assert(ino->sd.sd_size == n);
	return write_tails(db, ino, p, n);
}

/*
 * The most r4_reg_write of len bytes at the end of ino can grab, for a
 * caller that grabs before a change what a write after it will need (an
 * audit record: audit.c), the largest of its ways: a compressed file's
 * clusters (and its conversion), a tail body written again whole or
 * turned into extents, an extent map that grows or is stored again.
 */
int r4_reg_append_cost(struct r4_db *db, const struct r4_inode *ino, uint64_t len, uint64_t *cost)
{
	uint64_t size = ino->sd.sd_size, body = 0;
	enum body_kind kind;
	struct map m = {0};
	int rc;

	if ((rc = body_kind(db, ino, &kind)) ||
	    (kind != BODY_NONE && (rc = r4_reg_remove_cost(db, ino, &body))))
		return rc;
	if (r4_ccreg_is(ino) || kind == BODY_CTAILS)
		*cost = r4_ccreg_cost(db, ino, size, len) + data_cost(db, size + len) +
			map_cost(db, 0, 4);
	else if (kind != BODY_EXTENTS && want_tails(db, ino, size + len))
		*cost = tails_cost(db, size + len);
	else if (kind != BODY_EXTENTS)
		*cost = data_cost(db, size) + data_cost(db, len) + map_cost(db, 0, 6);
	else if (!(rc = map_load(db, ino, &m)))	/* (a fast append, or the map again) */
		*cost = 1 + data_cost_in(db, len, m.n + 1) + E(db) +
			map_cost(db, m.items, 3 * m.n + 3);
	r4_free(m.e);
	if (!rc)
		*cost += body + E(db);
	return rc;
}

/* ---- fallocate: where its zeros go, and what writing them grabs ---- */

static int span_add(struct r4_span **v, size_t *n, size_t *cap, uint64_t off, uint64_t end)
{
	if (off >= end)
		return 0;
	if (*n && (*v)[*n - 1].end == off) {
		(*v)[*n - 1].end = end;
		return 0;
	}
	if (r4_grow(v, cap, *n + 1, sizeof(**v), 8))
		return -ENOMEM;
	(*v)[(*n)++] = (struct r4_span){off, end};
	return 0;
}

int r4_reg_fill_spans(struct r4_db *db, const struct r4_inode *ino, uint64_t off, uint64_t end,
		      bool zero, struct r4_span **v, size_t *n)
{
	uint64_t size = ino->sd.sd_size, in = R4_MIN(end, size), at = 0;
	enum body_kind kind;
	struct map m = {0};
	size_t cap = 0;
	int rc;

	*v = NULL;
	*n = 0;
	if (zero)
		return span_add(v, n, &cap, off, end);
	if ((rc = body_kind(db, ino, &kind)))
		return rc;
	if (kind == BODY_EXTENTS && (rc = map_load(db, ino, &m)))
		goto out;
	/* holes: the map's, and past it (none for a tail or compressed body) */
	for (size_t i = 0; i < m.n && !rc; i++) {
		uint64_t a = at * db->bs, b = (at += m.e[i].ex_width) * db->bs;

		if (!m.e[i].ex_start)
			rc = span_add(v, n, &cap, R4_MAX(a, off), R4_MIN(b, in));
	}
	if (!rc && (kind == BODY_EXTENTS || (kind == BODY_NONE && !r4_ccreg_is(ino))))
		rc = span_add(v, n, &cap, R4_MAX(at * db->bs, off), in);
	if (!rc)
		rc = span_add(v, n, &cap, R4_MAX(off, size), end);
out:
	r4_free(m.e);
	if (rc) {
		r4_free(*v);
		*v = NULL;
		*n = 0;
	}
	return rc;
}

uint64_t r4_reg_fill_piece(const struct r4_inode *ino)
{
	return r4_ccreg_is(ino) ? (uint64_t)1 << 20 : (uint64_t)16 << 20;
}

bool r4_reg_fill_next(const struct r4_span *v, size_t n, uint64_t piece, size_t *i, uint64_t *o,
		      uint64_t *k)
{
	while (*i < n && *o >= v[*i].end)
		if (++*i < n)
			*o = v[*i].off;
	if (*i >= n)
		return false;
	*k = R4_MIN(v[*i].end, (*o / piece + 1) * piece) - *o;
	return true;
}

int r4_reg_fill_cost(struct r4_db *db, const struct r4_inode *ino, const struct r4_span *v,
		     size_t n, uint64_t piece, uint64_t *cost)
{
	uint64_t size = ino->sd.sd_size, body, o = n ? v[0].off : 0, k, c = 0, pieces = 0, blocks = 0;
	bool cc = r4_ccreg_is(ino);
	enum body_kind kind;
	struct map m = {0};
	size_t i = 0;
	int rc;

	if ((rc = body_kind(db, ino, &kind)) || (rc = body_items(db, ino, 0, &body)) ||
	    (kind == BODY_EXTENTS && (rc = map_load(db, ino, &m))))
		goto out;
	cc = cc || kind == BODY_CTAILS;
	for (; r4_reg_fill_next(v, n, piece, &i, &o, &k); o += k, pieces++) {
		uint64_t newsize = R4_MAX(size, o + k);

		/* each piece: the blocks it touches, new or a page of one that
		 * holds data, in a unit of their own (a compressed file's
		 * clusters of zeros take less) */
		blocks += (o + k + db->bs - 1) / db->bs - o / db->bs;
		if (!cc && kind != BODY_EXTENTS && want_tails(db, ino, newsize)) {
			/* (tails written again whole, each piece) */
			c += r4_txn_remove_cost(db, body) + tails_cost(db, newsize);
			body = newsize / 256 + 2;
			kind = BODY_TAILS;
		} else if (!cc && kind != BODY_EXTENTS) {
			/* what the body held becomes blocks */
			c += r4_txn_remove_cost(db, body) + data_cost(db, size) + map_cost(db, 0, 6);
			kind = BODY_EXTENTS;
		}
		size = newsize;
	}
	/* once: the new blocks, the path to them and the stat data, the map
	 * stored again (its items now, in as many as it needs, grown by 3
	 * units a piece at most; the pieces' items between are in nodes
	 * dirty already); a compressed file in mode conv made reg40 whole */
	c += r4_txn_fake_cost(db, blocks, pieces) + 2 + 2 * E(db);
	if (kind == BODY_EXTENTS)
		c += map_cost(db, m.items, 3 * (m.n + 3 * pieces) + 3);
	if (cc && ino->cmode == R4_CMODE_CONV)
		c += r4_txn_remove_cost(db, body) + data_cost(db, size) + map_cost(db, 0, 4 + 3 * pieces);
	*cost = c;
out:
	r4_free(m.e);
	return rc;
}

/* ---- fallocate's PUNCH_HOLE ---- */

/* Blocks [a, b) of the map become a hole; the blocks they held are freed
 * (at the commit, as a truncate frees them). */
static int map_hole(struct r4_db *db, struct map *m, uint64_t a, uint64_t b)
{
	struct map out = {0};
	uint64_t idx = 0;
	int rc = 0;

	db->fake_units++;	/* (a unit of new data cut in two) */
	for (size_t i = 0; i < m->n && !rc; idx += m->e[i++].ex_width) {
		struct r4_extent u = m->e[i];
		uint64_t from = R4_MAX(idx, a), to = R4_MIN(idx + u.ex_width, b);
		bool real = u.ex_start > R4_EXTENT_UNALLOC;

		if (from >= to) {
			rc = map_push(&out, u.ex_start, u.ex_width);
			continue;
		}
		if (real)
			r4_reg_forget_blocks(db, u.ex_start + (from - idx), to - from);
		if (!(rc = map_push(&out, u.ex_start, from - idx)) &&
		    !(rc = map_push(&out, R4_EXTENT_HOLE, to - from)))
			rc = map_push(&out, real ? u.ex_start + (to - idx) : u.ex_start,
				      idx + u.ex_width - to);
	}
	r4_free(m->e);
	*m = out;
	return rc;
}

/* Does block blk of the map hold data (not a hole, nor past the map)? */
static bool map_holds(const struct map *m, uint64_t blk)
{
	for (size_t i = 0; i < m->n; blk -= m->e[i++].ex_width)
		if (blk < m->e[i].ex_width)
			return m->e[i].ex_start > R4_EXTENT_UNALLOC;
	return false;
}

/*
 * An extent body: the whole blocks of [off, end) become a hole unit and
 * are freed, the parts of the one or two blocks at its edges that hold
 * data are zeroed in place.  The last block's bytes past the size are
 * zeros already, so a punch to the end frees that block whole.
 */
static int extent_punch(struct r4_db *db, struct r4_inode *ino, uint64_t off, uint64_t end)
{
	uint64_t bs = db->bs, first = (off + bs - 1) / bs;
	uint64_t last = (end == ino->sd.sd_size ? end + bs - 1 : end) / bs;
	uint8_t *zeros = NULL;
	struct map m;
	int rc;

	/* the map stored again with 2 units more at most (a unit cut in
	 * three: of new data, two to place), and the pages of the two edge
	 * blocks */
	if ((rc = map_load(db, ino, &m)) ||
	    (rc = r4_txn_grab(db, map_cost(db, m.items, m.n + 2) + data_cost(db, 2 * bs) +
				      r4_txn_fake_cost(db, 0, 1) + E(db), true)))
		goto out;
	for (int side = 0; side < 2 && !rc; side++) {
		uint64_t a = side ? last * bs : off, b = side ? end : R4_MIN(end, first * bs);

		if (a >= b || (side && last < first) || !map_holds(&m, a / bs))
			continue;
		if (!zeros && !(zeros = r4_calloc(1, bs)))
			rc = -ENOMEM;
		else
			rc = map_write(db, ino, &m, a, zeros, b - a);
	}
	if (!rc && first < last)
		rc = map_hole(db, &m, first, last);
	if (!rc && !(rc = map_store(db, ino, &m)))
		set_size(ino, ino->sd.sd_size, map_allocated(&m) * bs);
out:
	r4_free(zeros);
	r4_free(m.e);
	return rc;
}

/* A compressed body: its clusters' items in the range go, the edge
 * clusters are stored again. */
static int ccreg_punch(struct r4_db *db, struct r4_inode *ino, uint64_t off, uint64_t end)
{
	uint64_t n = 0;
	int rc;

	if ((rc = each_body_item(db, ino, off, end, count_fn, &n)) ||
	    (rc = r4_txn_grab(db, r4_ccreg_cost(db, ino, off, 1) + r4_txn_remove_cost(db, n) +
			      E(db), true)))
		return rc;
	return r4_ccreg_punch(db, ino, off, end);
}

int r4_reg_punch(struct r4_db *db, struct r4_inode *ino, uint64_t off, uint64_t end)
{
	uint64_t size = ino->sd.sd_size;
	enum body_kind kind;
	uint8_t *all = NULL;
	int rc;

	end = R4_MIN(end, size);
	if ((rc = body_kind(db, ino, &kind)) || (rc = writable_body(db, ino, kind)))
		return rc;
	if (off >= end || kind == BODY_NONE) {
		rc = r4_txn_grab(db, E(db), false);	/* (nothing to punch) */
	} else if (compressed_body(ino, kind)) {
		rc = ccreg_punch(db, ino, off, end);
	} else if (kind == BODY_EXTENTS) {
		rc = extent_punch(db, ino, off, end);
	} else if (!(rc = read_all(db, ino, size, &all)) &&
		   !(rc = grab_rewrite(db, ino, kind, tails_cost(db, size), true))) {
		/* tails hold every byte up to the size: zeros are written */
		memset(all + off, 0, end - off);
		rc = to_tails(db, ino, kind, all, size);
	}
	r4_free(all);
	if (rc)
		return rc;
	r4_obj_touch(db, ino, true, true);
	return r4_obj_save(db, ino);
}

/* ---- fallocate's COLLAPSE_RANGE and INSERT_RANGE ---- */

/* Blocks [a, a + n) cut out of the map (their blocks freed at the commit)
 * and what follows moved down; or (insert) a hole of n blocks put in at
 * a and what follows moved up.  (Past the map: holes, nothing to move.) */
static int map_splice(struct r4_db *db, struct map *m, uint64_t a, uint64_t n, bool insert)
{
	uint64_t idx = 0, from = insert ? a : a + n;	/* what follows, from */
	struct map out = {0};
	int rc = 0;

	db->fake_units++;	/* (a unit of new data cut in two) */
	for (size_t i = 0; i < m->n && !rc; idx += m->e[i++].ex_width) {
		struct r4_extent u = m->e[i];
		uint64_t end = idx + u.ex_width, rest = R4_MAX(idx, from);
		bool real = u.ex_start > R4_EXTENT_UNALLOC;

		if (a > idx)
			rc = map_push(&out, u.ex_start, R4_MIN(a, end) - idx);
		if (!rc && insert && idx <= a && a < end)
			rc = map_push(&out, R4_EXTENT_HOLE, n);
		if (!insert && real && R4_MAX(idx, a) < R4_MIN(end, from))
			r4_reg_forget_blocks(db, u.ex_start + (R4_MAX(idx, a) - idx),
					     R4_MIN(end, from) - R4_MAX(idx, a));
		if (!rc && rest < end)
			rc = map_push(&out, real ? u.ex_start + (rest - idx) : u.ex_start, end - rest);
	}
	r4_free(m->e);
	*m = out;
	return rc;
}

int r4_reg_shift(struct r4_db *db, struct r4_inode *ino, uint64_t off, uint64_t len, bool insert)
{
	uint64_t size = ino->sd.sd_size, bs = db->bs;
	uint64_t newsize = insert ? size + len : size - len;
	enum body_kind kind;
	struct map m = {0};
	uint8_t *all = NULL;
	size_t got;
	int rc;

	if (off % bs || len % bs || (insert ? off >= size : off + len >= size))
		return -EINVAL;
	if (insert && len > ((uint64_t)1 << 62) - size)
		return -EFBIG;
	if ((rc = body_kind(db, ino, &kind)) || (rc = writable_body(db, ino, kind)))
		return rc;
	if (compressed_body(ino, kind) || kind == BODY_TAILS)
		return -EOPNOTSUPP;
	if (!insert && want_tails(db, ino, newsize)) {
		/* it shrinks into tails, as a truncate does: what stays is read */
		if (!(all = r4_malloc(newsize)))
			return -ENOMEM;
		if ((rc = r4_reg_read(db, ino, 0, all, off, &got)) ||
		    (rc = r4_reg_read(db, ino, off + len, all + off, newsize - off, &got)) ||
		    (rc = grab_rewrite(db, ino, kind, tails_cost(db, newsize), true)) ||
		    (rc = to_tails(db, ino, kind, all, newsize)))
			goto out;
	} else if ((rc = map_load(db, ino, &m)) ||
		   /* the map stored again, 2 units more at most (a unit cut in
		    * two, a hole put between; of new data, two to place); a
		    * collapse is a removal */
		   (rc = r4_txn_grab(db, map_cost(db, m.items, m.n + 2) + r4_txn_fake_cost(db, 0, 1) +
					     E(db), !insert)) ||
		   (rc = map_splice(db, &m, off / bs, len / bs, insert)) ||
		   (rc = map_fit(db, &m, newsize)) || (rc = map_store(db, ino, &m))) {
		goto out;
	} else {
		set_size(ino, newsize, map_allocated(&m) * bs);
	}
	r4_obj_touch(db, ino, true, true);
	rc = r4_obj_save(db, ino);
out:
	r4_free(all);
	r4_free(m.e);
	return rc;
}

static int reg40_truncate(struct r4_db *db, struct r4_inode *ino, unsigned kind, uint64_t size)
{
	uint64_t old = ino->sd.sd_size;
	uint8_t *all = NULL;
	int rc;

	if (want_tails(db, ino, size)) {
		/* shrinks into (or stays in) tails; zeros fill a growth */
		if (!(rc = read_all(db, ino, size, &all)) &&
		    !(rc = grab_rewrite(db, ino, kind, tails_cost(db, size), size < old)))
			rc = to_tails(db, ino, kind, all, size);
	} else if (kind == BODY_EXTENTS && size < old) {
		struct map m;

		/* the map stored again, its last block zeroed past the end */
		if (!(rc = map_load(db, ino, &m)) &&
		    !(rc = r4_txn_grab(db, map_cost(db, m.items, m.n + 1) + data_cost(db, db->bs) +
				       E(db), true)) &&
		    !(rc = map_fit(db, &m, size))) {
			struct r4_extent *last = m.n ? &m.e[m.n - 1] : NULL;

			if (size % db->bs && last && last->ex_start > R4_EXTENT_UNALLOC) {
				/* zero the cut part of the last block */
				uint8_t *z = r4_calloc(1, db->bs);

				rc = z ? map_write(db, ino, &m, size, z, db->bs - size % db->bs)
				       : -ENOMEM;
				r4_free(z);
			}
			if (!rc && !(rc = map_store(db, ino, &m)))
				set_size(ino, size, map_allocated(&m) * db->bs);
			r4_free(m.e);
		}
	} else {
		/* grows past the tail limit: holes are implied past the map */
		rc = extent_write(db, ino, kind, 0, NULL, 0, size);
	}
	r4_free(all);
	return rc;
}

static int ccreg40_truncate(struct r4_db *db, struct r4_inode *ino, unsigned kind, uint64_t size)
{
	uint64_t n;
	int rc;

	(void)kind;
	/* the cluster the old or new end falls in, and the items past it */
	if ((rc = body_items(db, ino, size, &n)) ||
	    (rc = r4_txn_grab(db, r4_ccreg_cost(db, ino, size, 1) + r4_txn_remove_cost(db, n) +
			      E(db), size < ino->sd.sd_size)))
		return rc;
	return r4_ccreg_truncate(db, ino, size);
}

static int ccreg40_read(struct r4_db *db, const struct r4_inode *ino, uint64_t off, void *buf,
			size_t len, size_t *got)
{
	return r4_ccreg_read(db, ino, off, buf, len, got);
}

/* ---- file plugins: a regular file's body by its plugin, the rest by mode ---- */

#define FILE_OPS(type, rd, wr, tr) (&(const struct r4_file_ops){type, rd, wr, tr})
const struct r4_plugin r4_file_plugins[5] = {
	[R4_FILE_REG40] = {"reg40", "regular file: a body of tails or extents, by formatting",
			   FILE_OPS(S_IFREG, reg40_read, write_body, reg40_truncate)},
	{"dir40", "directory: entries in cde40 items, keyed by hash and fibration",
	 FILE_OPS(S_IFDIR, NULL, NULL, NULL)},
	{"sym40", "symlink: the target in its stat data", FILE_OPS(S_IFLNK, NULL, NULL, NULL)},
	{"spl40", "fifo, socket or device: no body", FILE_OPS(0, NULL, NULL, NULL)},
	[R4_FILE_CCREG40] = {"ccreg40", "compressed regular file: clusters of ctail40 items",
			     FILE_OPS(S_IFREG, ccreg40_read, ccreg40_write, ccreg40_truncate)},
};
#undef FILE_OPS

static const struct r4_file_ops *file_ops(const struct r4_inode *ino)
{
	return r4_plugin_ops(R4_PTYPE_FILE, r4_ccreg_is(ino) ? R4_FILE_CCREG40 : R4_FILE_REG40);
}

int r4_reg_read(struct r4_db *db, const struct r4_inode *ino, uint64_t off, void *buf,
		size_t len, size_t *got)
{
	return file_ops(ino)->read(db, ino, off, buf, len, got);
}

int r4_reg_truncate(struct r4_db *db, struct r4_inode *ino, uint64_t size)
{
	enum body_kind kind;
	int rc;

	if (size > ((uint64_t)1 << 62))
		return -EFBIG;
	if ((rc = body_kind(db, ino, &kind)) || (rc = writable_body(db, ino, kind)))
		return rc;
	compressed_body(ino, kind);
	if ((rc = file_ops(ino)->truncate(db, ino, kind, size)))
		return rc;
	r4_obj_touch(db, ino, true, true);
	return r4_obj_save(db, ino);
}

int r4_reg_reformat(struct r4_db *db, struct r4_inode *ino, unsigned formatting)
{
	struct r4_txn_op op;
	uint64_t size = ino->sd.sd_size;
	enum body_kind kind;
	uint8_t *all = NULL;
	bool tails;
	int rc;

	if ((rc = body_kind(db, ino, &kind)) || (rc = writable_body(db, ino, kind)))
		return rc;
	if (compressed_body(ino, kind))
		return -EOPNOTSUPP;
	r4_obj_set_plugin(db, ino, R4_PSET_FORMATTING, formatting);
	ino->formatting = formatting;
	tails = want_tails(db, ino, size);
	if (size && (tails ? kind != BODY_TAILS : kind != BODY_EXTENTS)) {
		if ((rc = read_all(db, ino, size, &all)) ||
		    (rc = grab_rewrite(db, ino, kind, tails ? tails_cost(db, size)
						      : data_cost(db, size) + map_cost(db, 0, 4),
				       false))) {
			r4_free(all);
			return rc;
		}
		if (!(rc = r4_txn_op_begin(db, &op))) {	/* (what follows is grabbed for) */
			if (tails) {
				rc = to_tails(db, ino, kind, all, size);
			} else if (!(rc = remove_body(db, ino, true))) {
				set_size(ino, 0, 0);
				rc = extent_write(db, ino, BODY_NONE, 0, all, size, size);
			}
			rc = r4_txn_op_end(db, &op, rc);
		}
		r4_free(all);
		if (rc)
			return rc;
	} else if ((rc = r4_txn_grab(db, E(db), false))) {
		return rc;
	}
	r4_obj_touch(db, ino, false, true);
	return r4_obj_save(db, ino);
}
