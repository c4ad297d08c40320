/*
 * salvage.c - what a damaged volume still holds (r4.h r4_salvage_*,
 * docs/salvage.md): the engine half of r4 salvage and r4 export --salvage.
 *
 * Nothing here trusts the tree, and nothing writes: the image is opened
 * read-only (r4_io_open without R4_IO_RW) and read through the io vtable
 * alone, never through a db or its cache.  Four steps at open:
 *
 *   1. super blocks: the master's block size (4096 when it does not
 *      decode) and the format super block's root, height, block count,
 *      node plugin and mkfs id.  When the journal holds transactions
 *      committed but not played in place, every read from then on goes
 *      through r4_jnl_view (their wandered copies, as a read-only open
 *      sees them: super blocks, bitmaps, nodes, data alike), and the super
 *      blocks are read again; a journal that does not read is left out
 *      (a line of the report).  When the format super block does not
 *      decode, the block count is the image's size and the node plugin and
 *      mkfs id are those most node headers of the volume carry (a first
 *      scan counts them); the root is then unknown.
 *   2. the tree from the root, as far as nodes read and pass
 *      r4_node_check: every leaf and twig reached gives its items; every
 *      pointer to a node that does not (and the root itself) gives a lost
 *      range, the keys [its delimiting key, the next one) that node held.
 *   3. when anything was lost: every block of the volume, read in order,
 *      that holds a leaf or a twig of this volume (r4_node_check with its
 *      mkfs id), the bitmap ignored for finding them.  Of such a node
 *      only the items inside a lost range count: the rest of the key
 *      space the tree still answers for.
 *   4. choosing between copies: every item spans keys (an extent's or a
 *      tail's bytes, a directory item's entries, one key else).  Items
 *      are taken by rank, and an item whose span overlaps one already
 *      taken is dropped: first those reached from the tree, then those in
 *      blocks a bitmap block that passes its checksum marks used, then
 *      those whose bitmap block is unreadable, last those marked free (a
 *      freed block holding an older copy: it only fills what nothing else
 *      does).  The node header's flush id would order copies, but no
 *      kernel maintains it, so within one rank the copy in the fuller node,
 *      then the lower block, is taken, and the report says so.
 *
 * Then the items taken become objects (a hash by object id): stat data,
 * entries (name and the child's stat-data key), body pieces (extent units
 * from twigs, tails and a compressed file's ctail items from leaves: block
 * numbers and offsets, never data).  Memory is that of the metadata
 * (items, objects, the nodes reached, one bitmap block at a time); data is
 * read when r4_salvage_read asks, a compressed file's a cluster at a time.
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "ccreg.h"
#include "format.h"
#include "io.h"
#include "item.h"
#include "jnl.h"
#include "key.h"
#include "node.h"
#include "ns.h"
#include "obj.h"

enum {				/* an item's rank: who vouches for the node it is in */
	RANK_FREE = 0,		/* found by the scan in a block the bitmap marks free */
	RANK_UNKNOWN = 1,	/* found by the scan, its bitmap block unreadable */
	RANK_USED = 2,		/* found by the scan in a block the bitmap marks used */
	RANK_TREE = 3,		/* reached from the root */
};

/* A key range [lo, hi) whose node could not be read.  The walk of the
 * tree finds them in key order, disjoint: lost_meets searches them. */
struct lost {
	r4_key lo, hi;
	uint64_t blk;
	unsigned level;
	char why[96];
};

/* An item found, with the keys it spans [lo, hi]. */
struct cand {
	r4_key lo, hi;
	uint64_t blk;
	uint16_t idx;
	uint16_t used;		/* bytes of its node in use: the fuller copy is preferred */
	uint8_t rank;
};

/* A piece of a body: bytes [off, off + len) of the file, or, for a ctail,
 * of the disk cluster stream its key places there (a cluster's stream
 * starts at the cluster's first byte and is as long as its items). */
enum { P_EXTENT, P_TAIL, P_CTAIL };
struct piece {
	uint64_t off, len;
	uint64_t blk;		/* extent: its first block (0: a hole); else the leaf */
	uint32_t boff;		/* tail, ctail: the bytes' offset in the leaf */
	uint8_t kind;
};

struct sent {			/* one directory entry but "." and ".." */
	char *name;
	r4_key sdkey;
};

enum {				/* struct sobj flags */
	O_SD = 1 << 0,		/* stat data found */
	O_KEY = 1 << 1,		/* key known (from stat data, an entry or a body item) */
	O_DIR = 1 << 2,		/* directory items found */
	O_CTAIL = 1 << 3,	/* compressed (ctail) items found: its body is clusters */
	O_NAMED = 1 << 4,	/* named by an entry of some directory found */
	O_SEEN = 1 << 5,	/* given by the walk */
	O_OLDSD = 1 << 6,	/* stat data from a block the bitmap marks free */
};

struct sobj {
	uint64_t oid;
	unsigned flags;
	uint64_t sdblk;		/* where the stat data was */
	r4_key sdkey;
	struct r4_sd sd;
	uint8_t *symlink;
	struct sent *ents;
	size_t nents, capents;
	struct piece *pcs;
	size_t npcs, cappcs;
	uint8_t shift;		/* O_CTAIL: the cluster shift of its items */
	char *path;		/* the first name the walk gave it */
};

struct r4_salvage {
	struct r4_io *io;	/* the image, through the journal's view when it has one */
	struct r4_io *base;	/* the image as given */
	bool own_io;		/* closing closes base */
	char jnl_why[200];	/* the journal does not read: why ("": it does) */
	struct r4_logger lg;
	uint32_t bs;
	uint64_t blocks;
	uint32_t mkfs_id;
	unsigned pid;
	uint64_t root;
	unsigned height;
	struct r4_salvage_info info;
	uint8_t *zone;		/* the bitmap block of the zone the scan is in */
	uint64_t zone_no;	/* its zone + 1 (0: none yet) */
	bool zone_ok;		/* it read and its checksum holds */
	uint64_t *reached;	/* nodes reached from the root: a set (block + 1; 0 empty) */
	size_t capreached, nreached;
	struct lost *lost;
	size_t nlost, caplost;
	struct cand *cand;
	size_t ncand, capcand;
	struct sobj *obj;	/* open addressing by oid; oid 0 = empty */
	size_t capobj, nobj;
	struct pair {		/* copies of equal rank: the block taken, the one left */
		uint64_t took, left;
		r4_key first;
		uint64_t n;
	} *pairs;
	size_t npairs, cappairs;
	struct r4_buf notes;	/* report lines of the build (items) */
	struct r4_buf walk;	/* report lines of the walk and the reads */
	uint8_t *blk;		/* one block */
	uint64_t cached;	/* block in tail (UINT64_MAX: none) */
	uint8_t *tail;
	struct {		/* the last cluster of a compressed body read */
		uint64_t oid;	/* (0: none) */
		uint64_t idx;
		bool ok;	/* it decoded into lc */
		uint8_t *dc;	/* its disk cluster stream, made on demand: 64K */
		uint8_t *lc;	/* its logical bytes: 64K */
	} cc;
};

static bool bit(const uint8_t *m, uint64_t b)
{
	return m[b / 8] >> (b % 8) & 1;
}

/* The slot of blk in the set of reached nodes, or the empty one where it goes. */
static size_t reached_slot(const struct r4_salvage *s, uint64_t blk)
{
	size_t j = (size_t)((blk + 1) * 0x9e3779b97f4a7c15u) & (s->capreached - 1);

	while (s->reached[j] && s->reached[j] != blk + 1)
		j = (j + 1) & (s->capreached - 1);
	return j;
}

static bool was_reached(const struct r4_salvage *s, uint64_t blk)
{
	return s->capreached && s->reached[reached_slot(s, blk)];
}

/* blk is reached: 0 or -ENOMEM. */
static int reach(struct r4_salvage *s, uint64_t blk)
{
	if (2 * (s->nreached + 1) > s->capreached) {
		size_t cap = s->capreached ? 2 * s->capreached : 64;
		uint64_t *old = s->reached, n = s->capreached;

		if (!(s->reached = r4_calloc(cap, sizeof(*s->reached)))) {
			s->reached = old;
			return -ENOMEM;
		}
		s->capreached = cap;
		for (size_t i = 0; i < n; i++)
			if (old[i])
				s->reached[reached_slot(s, old[i] - 1)] = old[i];
		r4_free(old);
	}
	s->reached[reached_slot(s, blk)] = blk + 1;
	s->nreached++;
	return 0;
}

static int note(struct r4_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int note(struct r4_buf *b, const char *fmt, ...)
{
	va_list ap;
	int rc;

	va_start(ap, fmt);
	rc = r4_buf_vprintf(b, fmt, ap);
	va_end(ap);
	return rc ? rc : r4_buf_add(b, "\n", 1);
}

static const char *level_name(unsigned level)
{
	return level == R4_LEVEL_LEAF ? "leaf" : level == R4_LEVEL_TWIG ? "twig" : "internal node";
}

/* ============================== objects =============================== */

/* The slot of oid in t (cap slots, a power of 2; oid 0 marks a free
 * slot, and no item of object 0 is taken), or the free one where it goes. */
static size_t obj_slot(const struct sobj *t, size_t cap, uint64_t oid)
{
	size_t j = (size_t)(oid * 0x9e3779b97f4a7c15u) & (cap - 1);

	while (t[j].oid && t[j].oid != oid)
		j = (j + 1) & (cap - 1);
	return j;
}

static struct sobj *obj_find(const struct r4_salvage *s, uint64_t oid)
{
	struct sobj *o = s->capobj ? &s->obj[obj_slot(s->obj, s->capobj, oid)] : NULL;

	return o && o->oid ? o : NULL;
}

/* The object oid (not 0), made when new; NULL when out of memory. */
static struct sobj *obj_get(struct r4_salvage *s, uint64_t oid)
{
	struct sobj *o = obj_find(s, oid);

	assert(oid);
	if (o)
		return o;
	if (2 * (s->nobj + 1) > s->capobj) {
		size_t cap = s->capobj ? 2 * s->capobj : 256;
		struct sobj *t = r4_calloc(cap, sizeof(*t));

		if (!t)
			return NULL;
		for (size_t i = 0; i < s->capobj; i++)
			if (s->obj[i].oid)
				t[obj_slot(t, cap, s->obj[i].oid)] = s->obj[i];
		r4_free(s->obj);
		s->obj = t;
		s->capobj = cap;
	}
	o = &s->obj[obj_slot(s->obj, s->capobj, oid)];
	o->oid = oid;
	s->nobj++;
	return o;
}

/* What an item says about its object's key: locality and ordering. */
static void obj_key(struct sobj *o, const r4_key *sdkey)
{
	if (!(o->flags & O_KEY)) {
		o->sdkey = *sdkey;
		o->flags |= O_KEY;
	}
}

static int add_piece(struct sobj *o, const struct piece *p)
{
	int rc;

	if ((rc = r4_grow(&o->pcs, &o->cappcs, o->npcs + 1, sizeof(*o->pcs), 4)))
		return rc;
	o->pcs[o->npcs++] = *p;
	return 0;
}

/* ============================ lost ranges ============================= */

static int add_lost(struct r4_salvage *s, const r4_key *lo, const r4_key *hi, uint64_t blk,
		    unsigned level, const char *why)
{
	struct lost *l;
	int rc;

	if ((rc = r4_grow(&s->lost, &s->caplost, s->nlost + 1, sizeof(*s->lost), 8)))
		return rc;
	l = &s->lost[s->nlost++];
	*l = (struct lost){*lo, *hi, blk, level, ""};
	snprintf(l->why, sizeof(l->why), "%s", why && *why ? why : "does not read");
	s->info.bad_nodes++;
	return 0;
}

/* The lost range that [lo, hi] meets, or NULL. */
static const struct lost *lost_meets(const struct r4_salvage *s, const r4_key *lo, const r4_key *hi)
{
	size_t a = 0, z = s->nlost;

	while (a < z) {		/* the first range ending past lo */
		size_t m = a + (z - a) / 2;

		if (r4_key_cmp(&s->lost[m].hi, lo) <= 0)
			a = m + 1;
		else
			z = m;
	}
	return a < s->nlost && r4_key_cmp(hi, &s->lost[a].lo) >= 0 ? &s->lost[a] : NULL;
}

/* ============================ the items =============================== */

/* The keys item i of node b spans: an extent's or a tail's last byte, a
 * directory item's last entry, else its own key. */
static int item_span(const uint8_t *b, uint32_t bs, unsigned i, r4_key *lo, r4_key *hi)
{
	unsigned pid = r4_node_item_pid(b, bs, i), len = r4_node_item_len(b, bs, i);
	const uint8_t *body = b + r4_node_item_off(b, bs, i);
	uint64_t bytes = 0;
	int rc;

	r4_node_key(b, bs, i, lo);
	*hi = *lo;
	if (pid == R4_ITEM_EXTENT40) {
		size_t n;

		if ((rc = r4_item_extent_count(body, len, &n)))
			return rc;
		for (size_t u = 0; u < n; u++) {	/* saturating: a crafted width */
			uint64_t w = r4_le64_get(body + u * R4_EXTENT_UNIT + R4_EXTENT_WIDTH);

			bytes = w > (UINT64_MAX - bytes) / bs ? UINT64_MAX : bytes + w * bs;
		}
	} else if (pid == R4_ITEM_PLAIN40 || pid == R4_ITEM_CTAIL40) {
		bytes = len - (pid == R4_ITEM_CTAIL40);	/* a ctail's first byte is its shift */
	} else if (pid == R4_ITEM_CDE40) {
		struct r4_dirent de;
		unsigned n;

		if ((rc = r4_item_cde_count(body, len, &n)) ||
		    (n && (rc = r4_item_cde_decode(lo, body, len, n - 1, &de))))
			return rc;
		if (n)
			*hi = de.de_key;
	}
	if (bytes)
		hi->el[3] = lo->el[3] > UINT64_MAX - (bytes - 1) ? UINT64_MAX : lo->el[3] + bytes - 1;
	return 0;
}

/* The items of a node that passed its check: every one of a node reached
 * from the tree, those inside a lost range of one the scan found. */
static int collect(struct r4_salvage *s, uint64_t blk, const uint8_t *b, unsigned rank)
{
	unsigned nr = r4_node_nr(b);
	int rc;

	for (unsigned i = 0; i < nr; i++) {
		struct cand c = {.blk = blk, .idx = (uint16_t)i, .rank = (uint8_t)rank,
				 .used = (uint16_t)(s->bs - r4_node_free(b))};

		if (r4_node_item_pid(b, s->bs, i) == R4_ITEM_NODEPTR40)
			continue;
		if (item_span(b, s->bs, i, &c.lo, &c.hi)) {
			if (rank == RANK_TREE &&
			    (rc = note(&s->notes, "block %llu item %u: does not decode (%s)",
				       (unsigned long long)blk, i, r4_corrupt_last())))
				return rc;
			continue;
		}
		if (rank != RANK_TREE && !lost_meets(s, &c.lo, &c.hi))
			continue;
		if ((rc = r4_grow(&s->cand, &s->capcand, s->ncand + 1, sizeof(*s->cand), 64)))
			return rc;
		s->cand[s->ncand++] = c;
	}
	if (r4_node_level(b) == R4_LEVEL_LEAF)
		s->info.leaves++;
	else
		s->info.twigs++;
	return 0;
}

static int read_node(struct r4_salvage *s, uint64_t blk, unsigned level, const char **why)
{
	int rc;

	*why = "";
	if (blk >= s->blocks) {
		*why = "past the end of the volume";
		return -EUCLEAN;
	}
	if ((rc = r4_io_read(s->io, blk * s->bs, s->blk, s->bs))) {
		*why = "read error";
		return rc;
	}
	if ((rc = r4_node_check(NULL, blk, s->blk, s->bs, s->pid, s->mkfs_id, level)))
		*why = r4_corrupt_last();
	return rc;
}

/* Step 2: the tree below blk, which holds keys [lo, hi). */
static int walk_tree(struct r4_salvage *s, uint64_t blk, unsigned level, const r4_key *lo,
		     const r4_key *hi)
{
	const char *why;
	uint64_t *kids;
	r4_key *keys;
	unsigned nr;
	int rc;

	if (was_reached(s, blk))
		return add_lost(s, lo, hi, blk, level, "reached twice");
	if (read_node(s, blk, level, &why))
		return add_lost(s, lo, hi, blk, level, why);
	if ((rc = reach(s, blk)))
		return rc;
	if (level <= R4_LEVEL_TWIG && (rc = collect(s, blk, s->blk, RANK_TREE)))
		return rc;
	if (level == R4_LEVEL_LEAF)
		return 0;
	/* the node buffer is reused below: take the pointers first */
	nr = r4_node_nr(s->blk);
	kids = r4_calloc(nr + 1, sizeof(*kids));
	keys = r4_calloc(nr + 1, sizeof(*keys));
	if (!kids || !keys) {
		r4_free(kids);
		r4_free(keys);
		return -ENOMEM;
	}
	/* child i holds [its key, the next item's key); kids[i] 0: no pointer */
	for (unsigned i = 0; i < nr; i++) {
		unsigned len = r4_node_item_len(s->blk, s->bs, i);

		r4_node_key(s->blk, s->bs, i, &keys[i]);
		if (r4_node_item_pid(s->blk, s->bs, i) == R4_ITEM_NODEPTR40 &&
		    r4_item_nodeptr_decode(s->blk + r4_node_item_off(s->blk, s->bs, i), len,
					   &kids[i]))
			kids[i] = UINT64_MAX;
	}
	keys[nr] = *hi;
	rc = 0;
	for (unsigned i = 0; i < nr && !rc; i++)
		if (kids[i])
			rc = walk_tree(s, kids[i], level - 1, &keys[i], &keys[i + 1]);
	r4_free(kids);
	r4_free(keys);
	return rc;
}

/* ============================== the scan ============================== */

/* The scan enters zone z: its bitmap block, and whether it passes its
 * checksum (a scan goes zone by zone; no bitmap is kept). */
static void enter_zone(struct r4_salvage *s, uint64_t z)
{
	uint64_t blk = r4_format_bitmap_block(s->bs, z);

	s->zone_ok = !r4_io_read(s->io, blk * s->bs, s->zone, s->bs) &&
		     r4_le32_get(s->zone) == r4_adler32(s->zone + 4, s->bs - 4);
	s->zone_no = z + 1;
	s->info.bitmaps++;
	s->info.bitmaps_ok += s->zone_ok;
}

/* The rank of a node the scan found at blk, in the zone it is in. */
static unsigned rank_of(const struct r4_salvage *s, uint64_t blk)
{
	uint64_t span = r4_format_bitmap_bits(s->bs);

	assert(s->zone_no == blk / span + 1);
	if (!s->zone_ok)
		return RANK_UNKNOWN;
	return bit(s->zone + 4, blk % span) ? RANK_USED : RANK_FREE;
}

/* Does b hold a node header of plugin pid (its magic)? */
static bool looks_like_node(const uint8_t *b, unsigned pid)
{
	return r4_le16_get(b + R4_NH_PID) == pid &&
	       r4_le32_get(b + R4_NH_MAGIC) == (pid == R4_NODE41 ? R4_NODE41_MAGIC
								  : R4_NODE40_MAGIC);
}

enum { CHUNK = 64 };		/* blocks the scan reads at a time */

/* Read blocks [b, b + n) into buf; a chunk that fails is read block by
 * block, and a block that fails is zeroed (no node there). */
static void read_chunk(struct r4_salvage *s, uint64_t b, uint64_t n, uint8_t *buf)
{
	if (!r4_io_read(s->io, b * s->bs, buf, n * s->bs))
		return;
	for (uint64_t i = 0; i < n; i++)
		if (r4_io_read(s->io, (b + i) * s->bs, buf + i * s->bs, s->bs))
			memset(buf + i * s->bs, 0, s->bs);
}

/* Step 1 without a format super block: the node plugin and mkfs id most
 * node headers carry. */
static int guess_volume(struct r4_salvage *s, uint8_t *buf)
{
	struct tally { uint32_t id; unsigned pid; uint64_t n; } tally[16] = {{0}};
	size_t nt = 0, best = 0;

	for (uint64_t b = R4_BACKUP_START(s->bs); b < s->blocks; b += CHUNK) {
		uint64_t n = R4_MIN((uint64_t)CHUNK, s->blocks - b);

		read_chunk(s, b, n, buf);
		for (uint64_t i = 0; i < n; i++) {
			const uint8_t *nb = buf + i * s->bs;
			unsigned pid = looks_like_node(nb, R4_NODE40) ? R4_NODE40
				       : looks_like_node(nb, R4_NODE41) ? R4_NODE41 : 2;
			uint32_t id = r4_le32_get(nb + R4_NH_MKFS_ID);
			size_t t;

			if (pid == 2)
				continue;
			for (t = 0; t < nt && (tally[t].id != id || tally[t].pid != pid); t++)
				;
			if (t == nt && nt < R4_ARRAY_SIZE(tally))
				tally[nt++] = (struct tally){id, pid, 0};
			if (t < nt)
				tally[t].n++;
		}
	}
	if (!nt)
		return -EUCLEAN;
	for (size_t t = 1; t < nt; t++)
		if (tally[t].n > tally[best].n)
			best = t;
	s->mkfs_id = tally[best].id;
	s->pid = tally[best].pid;
	return 0;
}

/* Step 3: every leaf and twig of the volume the tree did not reach. */
static int scan(struct r4_salvage *s, uint8_t *buf)
{
	int rc;

	for (uint64_t b = R4_BACKUP_START(s->bs); b < s->blocks; b += CHUNK) {
		uint64_t n = R4_MIN((uint64_t)CHUNK, s->blocks - b);

		read_chunk(s, b, n, buf);
		s->info.scanned += n;
		for (uint64_t i = 0; i < n; i++) {
			const uint8_t *nb = buf + i * s->bs;

			if (s->zone_no != (b + i) / r4_format_bitmap_bits(s->bs) + 1)
				enter_zone(s, (b + i) / r4_format_bitmap_bits(s->bs));
			if (was_reached(s, b + i) || !looks_like_node(nb, s->pid) ||
			    r4_node_level(nb) > R4_LEVEL_TWIG ||
			    r4_node_check(NULL, b + i, nb, s->bs, s->pid, s->mkfs_id, 0))
				continue;
			if ((rc = collect(s, b + i, nb, rank_of(s, b + i))))
				return rc;
		}
	}
	return 0;
}

/* ========================== choosing copies =========================== */

static int cmp_rank(const void *a, const void *b)
{
	const struct cand *x = a, *y = b;
	int c;

	if (x->rank != y->rank)
		return x->rank > y->rank ? -1 : 1;
	if ((c = r4_key_cmp(&x->lo, &y->lo)))
		return c;
	return x->blk < y->blk ? -1 : x->blk > y->blk;
}

/* Within one rank, which copy first: the fuller node, then the lower block. */
static int cmp_pref(const void *a, const void *b)
{
	const struct cand *x = a, *y = b;

	if (x->used != y->used)
		return x->used > y->used ? -1 : 1;
	if (x->blk != y->blk)
		return x->blk < y->blk ? -1 : 1;
	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

static int cmp_lo(const void *a, const void *b)
{
	return r4_key_cmp(&((const struct cand *)a)->lo, &((const struct cand *)b)->lo);
}

static int cmp_blk(const void *a, const void *b)
{
	const struct cand *x = a, *y = b;

	if (x->blk != y->blk)
		return x->blk < y->blk ? -1 : 1;
	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

static bool meets(const struct cand *x, const struct cand *y)
{
	return r4_key_cmp(&x->lo, &y->hi) <= 0 && r4_key_cmp(&y->lo, &x->hi) <= 0;
}

/* The taken item among t[0, n) (disjoint, sorted by lo) that c meets. */
static const struct cand *taken_meets(const struct cand *t, size_t n, const r4_key *lo,
				      const r4_key *hi)
{
	size_t a = 0, z = n;

	while (a < z) {		/* the first whose hi >= lo */
		size_t m = a + (z - a) / 2;

		if (r4_key_cmp(&t[m].hi, lo) < 0)
			a = m + 1;
		else
			z = m;
	}
	return a < n && r4_key_cmp(&t[a].lo, hi) <= 0 ? &t[a] : NULL;
}

/* Item c was dropped for o, its equal: noted by the pair of blocks. */
static int note_pair(struct r4_salvage *s, const struct cand *o, const struct cand *c)
{
	struct pair *p;
	size_t i;
	int rc;

	for (i = 0; i < s->npairs && (s->pairs[i].took != o->blk || s->pairs[i].left != c->blk);
	     i++)
		;
	if (i == s->npairs) {
		if ((rc = r4_grow(&s->pairs, &s->cappairs, i + 1, sizeof(*s->pairs), 8)))
			return rc;
		s->pairs[s->npairs++] = (struct pair){o->blk, c->blk, c->lo, 0};
	}
	p = &s->pairs[i];
	p->n++;
	return 0;
}

/*
 * One cluster c[0, n) of items of one rank that overlap in a chain: each
 * in order of preference is taken unless it meets an item of a higher
 * rank (t[0, nt), silently: that is what ranks are for) or one of the
 * cluster taken before it (a line of the report: the choice was a guess).
 */
static int cluster(struct r4_salvage *s, struct cand *c, size_t n, struct cand **t, size_t *nt,
		   size_t *cap, size_t higher)
{
	size_t from = *nt;
	int rc;

	if (n > 1)
		qsort(c, n, sizeof(*c), cmp_pref);
	for (size_t i = 0; i < n; i++) {
		const struct cand *o = NULL;

		if (taken_meets(*t, higher, &c[i].lo, &c[i].hi))
			continue;
		for (size_t j = from; j < *nt && !o; j++)
			if (meets(&(*t)[j], &c[i]))
				o = &(*t)[j];
		if (o) {
			if (c[i].rank != RANK_TREE && (rc = note_pair(s, o, &c[i])))
				return rc;
			continue;
		}
		if ((rc = r4_grow(t, cap, *nt + 1, sizeof(**t), 64)))
			return rc;
		(*t)[(*nt)++] = c[i];
	}
	return 0;
}

/* Step 4: keep of s->cand the items taken, rank by rank. */
static int choose(struct r4_salvage *s)
{
	struct cand *t = NULL;
	size_t nt = 0, cap = 0;
	int rc = 0;

	qsort(s->cand, s->ncand, sizeof(*s->cand), cmp_rank);
	for (size_t i = 0, j; i < s->ncand && !rc; i = j) {
		size_t higher = nt;

		for (j = i; j < s->ncand && s->cand[j].rank == s->cand[i].rank && !rc;) {
			r4_key hi = s->cand[j].hi;
			size_t m = j + 1;

			for (; m < s->ncand && s->cand[m].rank == s->cand[j].rank &&
			       r4_key_cmp(&s->cand[m].lo, &hi) <= 0; m++)
				if (r4_key_cmp(&s->cand[m].hi, &hi) > 0)
					hi = s->cand[m].hi;
			rc = cluster(s, &s->cand[j], m - j, &t, &nt, &cap, higher);
			j = m;
		}
		qsort(t, nt, sizeof(*t), cmp_lo);
	}
	r4_free(s->cand);
	s->cand = rc ? NULL : t;
	s->ncand = s->capcand = rc ? 0 : nt;
	if (rc)
		r4_free(t);
	return rc;
}

/* ========================= items to objects =========================== */

static int take_sd(struct r4_salvage *s, const struct cand *c, const r4_key *k,
		   const uint8_t *body, unsigned len)
{
	struct sobj *o;
	struct r4_sd sd;

	if (r4_item_stat_decode(body, len, &sd))
		return 1;
	if (!(o = obj_get(s, r4_key_objectid(k))))
		return -ENOMEM;
	o->sdkey = *k;
	o->flags |= O_SD | O_KEY | (c->rank == RANK_FREE ? O_OLDSD : 0);
	o->sdblk = c->blk;
	o->sd = sd;
	if (sd.sd_symlink) {
		if (!(o->symlink = (uint8_t *)r4_memdup(sd.sd_symlink, sd.sd_symlink_len)))
			return -ENOMEM;
		o->sd.sd_symlink = o->symlink;
	}
	return 0;
}

/* A directory item: its entries but "." and "..", each naming its object.
 * An entry whose name could leave a path ('/' or NUL in it) or that names
 * object 0 is skipped, and said. */
static int take_cde(struct r4_salvage *s, const struct cand *c, const r4_key *k,
		    const uint8_t *body, unsigned len)
{
	struct sobj *d = obj_get(s, r4_key_locality(k)), *child;
	unsigned n;
	int rc;

	if (!d)
		return -ENOMEM;
	if (r4_item_cde_count(body, len, &n))
		return 1;
	d->flags |= O_DIR;
	for (unsigned i = 0; i < n; i++) {
		struct r4_dirent de;
		char shortname[24];
		const char *name = shortname;
		size_t nl;

		if (r4_item_cde_decode(k, body, len, i, &de))
			return 1;
		if (de.de_name) {
			name = (const char *)de.de_name;
			nl = de.de_namelen;
		} else {
			nl = r4_key_entry_name(&de.de_key, shortname);
		}
		if ((nl == 1 && name[0] == '.') || (nl == 2 && !memcmp(name, "..", 2)) || !nl)
			continue;
		if (memchr(name, '/', nl) || memchr(name, 0, nl) || !r4_key_objectid(&de.de_sdkey)) {
			if ((rc = note(&s->notes, "block %llu item %u entry %u: %s, skipped",
				       (unsigned long long)c->blk, c->idx, i,
				       r4_key_objectid(&de.de_sdkey) ? "a name with '/' or NUL in it"
								     : "it names object 0")))
				return rc;
			continue;
		}
		if (!(child = obj_get(s, r4_key_objectid(&de.de_sdkey))))
			return -ENOMEM;
		d = obj_find(s, r4_key_locality(k));	/* obj_get may have moved it */
		obj_key(child, &de.de_sdkey);
		child->flags |= O_NAMED;
		if ((rc = r4_grow(&d->ents, &d->capents, d->nents + 1, sizeof(*d->ents), 8)))
			return rc;
		if (!(d->ents[d->nents].name = r4_memdup(name, nl)))
			return -ENOMEM;
		d->ents[d->nents++].sdkey = de.de_sdkey;
	}
	return 0;
}

/* An extent item at file offset off: a piece per unit (holes included). */
static int take_extent(struct r4_salvage *s, struct sobj *o, uint64_t blk, uint64_t off,
		       const uint8_t *body, unsigned len)
{
	struct r4_extent *e;
	size_t n;
	int rc = 0;

	if (r4_item_extent_count(body, len, &n))
		return 1;
	if (!(e = r4_calloc(n, sizeof(*e))))
		return -ENOMEM;
	if (r4_item_extent_decode(body, len, e, n))
		rc = 1;
	for (size_t u = 0; u < n && !rc; u++) {
		uint64_t start = e[u].ex_start == R4_EXTENT_UNALLOC ? 0 : e[u].ex_start;

		if (e[u].ex_width > (UINT64_MAX - off) / s->bs ||
		    (start && (start >= s->blocks || e[u].ex_width > s->blocks - start))) {
			R4_CORRUPT(NULL, blk, "extent unit %zu: past the end of the file or the "
				   "volume", u);
			rc = 1;
			break;
		}
		rc = add_piece(o, &(struct piece){off, e[u].ex_width * s->bs, start, 0, P_EXTENT});
		off += e[u].ex_width * s->bs;
	}
	r4_free(e);
	return rc;
}

/* A ctail item at stream offset off: a piece of its cluster's stream.  The
 * cluster shift is the item's; one that is not a cluster size's (the
 * kernel's unprepped 0xff) or differs from the object's other items' is
 * corruption. */
static int take_ctail(struct sobj *o, uint64_t blk, uint64_t off, const uint8_t *b,
		      const uint8_t *body, unsigned len)
{
	const uint8_t *data;
	unsigned shift;
	size_t n;

	if (r4_item_ctail_decode(body, len, &shift, &data, &n))
		return 1;
	if (shift < 12 || shift > 16 || (o->flags & O_CTAIL && shift != o->shift)) {
		R4_CORRUPT(NULL, blk, "a ctail item with cluster shift %u%s", shift,
			   o->flags & O_CTAIL ? ", its file's others another" : "");
		return 1;
	}
	if (off > UINT64_MAX - n || (off >> shift) != ((off + n - 1) >> shift)) {
		R4_CORRUPT(NULL, blk, "a ctail item crosses its cluster's end");
		return 1;
	}
	o->flags |= O_CTAIL;
	o->shift = (uint8_t)shift;
	return add_piece(o, &(struct piece){off, n, blk, (uint32_t)(data - b), P_CTAIL});
}

/* A body item (tail, extent, ctail) of its object. */
static int take_body(struct r4_salvage *s, uint64_t blk, const r4_key *k, unsigned pid,
		     const uint8_t *b, const uint8_t *body, unsigned len)
{
	struct sobj *o = obj_get(s, r4_key_objectid(k));
	r4_key sdkey;

	if (!o)
		return -ENOMEM;
	r4_key_sd(&sdkey, r4_key_locality(k), r4_key_ordering(k), r4_key_objectid(k));
	obj_key(o, &sdkey);
	if (pid == R4_ITEM_CTAIL40)
		return take_ctail(o, blk, r4_key_offset(k), b, body, len);
	if (pid == R4_ITEM_EXTENT40)
		return take_extent(s, o, blk, r4_key_offset(k), body, len);
	if (r4_key_offset(k) > UINT64_MAX - len) {
		R4_CORRUPT(NULL, blk, "a tail ends past 2^64 bytes");
		return 1;
	}
	return add_piece(o, &(struct piece){r4_key_offset(k), len, blk, (uint32_t)(body - b),
					    P_TAIL});
}

static int cmp_piece(const void *a, const void *b)
{
	const struct piece *x = a, *y = b;

	return x->off < y->off ? -1 : x->off > y->off;
}

/* The items taken, node by node, into objects. */
static int build(struct r4_salvage *s)
{
	const char *why;
	int rc = 0;

	qsort(s->cand, s->ncand, sizeof(*s->cand), cmp_blk);
	for (size_t i = 0; i < s->ncand && !rc; i++) {
		const struct cand *c = &s->cand[i];
		unsigned pid, len;
		const uint8_t *body;
		r4_key k;

		if ((i == 0 || c->blk != c[-1].blk) && read_node(s, c->blk, 0, &why)) {
			rc = note(&s->notes, "block %llu: does not read again (%s)",
				  (unsigned long long)c->blk, why);
			while (i + 1 < s->ncand && s->cand[i + 1].blk == c->blk)
				i++;
			continue;
		}
		pid = r4_node_item_pid(s->blk, s->bs, c->idx);
		len = r4_node_item_len(s->blk, s->bs, c->idx);
		body = s->blk + r4_node_item_off(s->blk, s->bs, c->idx);
		r4_node_key(s->blk, s->bs, c->idx, &k);
		if (pid != R4_ITEM_BBOX40 &&
		    !(pid == R4_ITEM_CDE40 ? r4_key_locality(&k) : r4_key_objectid(&k))) {
			rc = note(&s->notes, "block %llu item %u: an item of object 0",
				  (unsigned long long)c->blk, c->idx);
			continue;
		}
		switch (pid) {
		case R4_ITEM_STAT40:
			rc = take_sd(s, c, &k, body, len);
			break;
		case R4_ITEM_CDE40:
			rc = take_cde(s, c, &k, body, len);
			break;
		case R4_ITEM_EXTENT40:
		case R4_ITEM_PLAIN40:
		case R4_ITEM_CTAIL40:
			rc = take_body(s, c->blk, &k, pid, s->blk, body, len);
			break;
		default:	/* black boxes (safe links): nothing to copy */
			break;
		}
		if (rc == 1)
			rc = note(&s->notes, "block %llu item %u: does not decode (%s)",
				  (unsigned long long)c->blk, c->idx, r4_corrupt_last());
	}
	for (size_t i = 0; i < s->capobj && !rc; i++) {
		struct sobj *o = &s->obj[i];
		size_t n = 0;

		if (o->npcs > 1)
			qsort(o->pcs, o->npcs, sizeof(*o->pcs), cmp_piece);
		if (!(o->flags & O_CTAIL))
			continue;
		/* a body is clusters or blocks and tails, not both: the
		 * clusters win (ccreg40 files have only them) */
		for (size_t j = 0; j < o->npcs; j++)
			if (o->pcs[j].kind == P_CTAIL)
				o->pcs[n++] = o->pcs[j];
		if (n < o->npcs)
			rc = note(&s->notes, "object %llu: compressed clusters and %zu tail or "
				  "extent item%s, which are left out", (unsigned long long)o->oid,
				  o->npcs - n, o->npcs - n == 1 ? "" : "s");
		o->npcs = n;
	}
	s->info.objects = s->nobj;
	qsort(s->cand, s->ncand, sizeof(*s->cand), cmp_lo);	/* for taken_meets */
	return rc;
}

/* =============================== open ================================= */

static void supers(struct r4_salvage *s)
{
	uint8_t m[R4_MSB_SIZE];
	struct r4_msb msb;
	struct r4_fsb fsb;
	uint64_t size = 0;

	s->bs = R4_FORMAT_BLOCKSIZE;
	s->info.msb_ok = s->info.fsb_ok = false;
	if (!r4_io_read(s->io, R4_MSB_OFFSET, m, sizeof(m)) &&
	    !r4_msb_decode(NULL, m, sizeof(m), &msb) && msb.msb_blksize == R4_FORMAT_BLOCKSIZE)
		s->info.msb_ok = true;
	r4_io_size(s->io, &size);
	s->blocks = size / s->bs;
	if (!r4_io_read(s->io, (uint64_t)R4_FSB_BLOCK(s->bs) * s->bs, s->blk, s->bs) &&
	    !r4_fsb_decode(NULL, s->blk, s->bs, &fsb) && fsb.sb_node_pid <= R4_NODE41) {
		s->info.fsb_ok = true;
		s->blocks = R4_MIN(fsb.sb_block_count, s->blocks);
		s->root = fsb.sb_root_block;
		s->height = fsb.sb_tree_height;
		s->mkfs_id = fsb.sb_mkfs_id;
		s->pid = fsb.sb_node_pid;
	}
}

/* The first error line of a journal walk: why it stopped (its own
 * "journal: " dropped, which the report's line starts with). */
static void jnl_log(void *ctx, int level, const char *msg)
{
	struct r4_salvage *s = ctx;
	const char *j = strstr(msg, ": journal: ");

	if (level == R4_LOG_ERR && !s->jnl_why[0])
		snprintf(s->jnl_why, sizeof(s->jnl_why), "%.*s%s",
			 j ? (int)(j - msg) + 2 : (int)strlen(msg), msg, j ? j + 11 : "");
}

/*
 * Committed transactions not yet played in place: read them as a
 * read-only open would (their wandered copies, newest wins), then the
 * super blocks again through them.  A journal that does not read is left
 * out, with a line of the report: the blocks as they lie in place are
 * still what the volume held one commit or more before.
 */
static int journal(struct r4_salvage *s)
{
	struct r4_logger lg = {jnl_log, s};
	struct r4_jnl_img im = {s->base, &lg, s->bs, s->blocks};
	struct r4_io *view;
	unsigned ntx;
	int rc = r4_jnl_view(&im, &view, &ntx);

	if (rc == -ENOMEM)
		return rc;
	if (rc) {		/* r4_salvage_report says it */
		if (!s->jnl_why[0])
			snprintf(s->jnl_why, sizeof(s->jnl_why), "%s", r4_strerror(rc));
		return 0;
	}
	if (!view)
		return 0;
	s->io = view;
	s->info.jnl_tx = ntx;
	r4_log(&s->lg, R4_LOG_INFO, "journal: %u committed transaction%s read from the journal "
	       "(the image is unchanged)", ntx, ntx == 1 ? "" : "s");
	supers(s);
	return 0;
}

static int setup(struct r4_salvage *s)
{
	r4_key lo = {{0}}, hi = r4_key_max();
	uint8_t *buf;
	int rc;

	if (!(s->blk = r4_malloc(R4_FORMAT_BLOCKSIZE)) ||
	    !(s->tail = r4_malloc(R4_FORMAT_BLOCKSIZE)) || !(s->zone = r4_malloc(R4_FORMAT_BLOCKSIZE)))
		return -ENOMEM;
	s->cached = UINT64_MAX;
	supers(s);
	if ((rc = journal(s)))
		return rc;
	s->info.blocksize = s->bs;
	s->info.blocks = s->blocks;
	if (s->blocks <= R4_BACKUP_START(s->bs))
		return -EUCLEAN;
	if (!(buf = r4_malloc((size_t)CHUNK * s->bs)))
		return -ENOMEM;
	if (s->info.fsb_ok)
		rc = walk_tree(s, s->root, s->height, &lo, &hi);
	else if (!(rc = guess_volume(s, buf)))
		rc = add_lost(s, &lo, &hi, R4_FSB_BLOCK(s->bs), 0,
			      "the format super block does not decode");
	if (!rc && s->nlost)
		rc = scan(s, buf);
	r4_free(buf);
	s->info.tree_whole = s->info.fsb_ok && !s->nlost;
	if (!rc)
		rc = choose(s);
	if (!rc)
		rc = build(s);
	return rc;
}

static void sobj_fini(struct sobj *o)
{
	r4_free(o->symlink);
	for (size_t i = 0; i < o->nents; i++)
		r4_free(o->ents[i].name);
	r4_free(o->ents);
	r4_free(o->pcs);
	r4_free(o->path);
}

void r4_salvage_close(r4_salvage *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->capobj; i++)
		if (s->obj[i].oid)
			sobj_fini(&s->obj[i]);
	r4_free(s->obj);
	r4_free(s->zone);
	r4_free(s->reached);
	r4_free(s->lost);
	r4_free(s->cand);
	r4_free(s->pairs);
	r4_buf_free(&s->notes);
	r4_buf_free(&s->walk);
	r4_free(s->blk);
	r4_free(s->tail);
	r4_free(s->cc.dc);
	r4_free(s->cc.lc);
	if (s->io != s->base)
		r4_io_close(s->io);	/* the journal's view */
	if (s->own_io)
		r4_io_close(s->base);
	r4_free(s);
}

int r4_salvage_open_io(struct r4_io *io, const struct r4_salvage_opts *o, r4_salvage **out)
{
	r4_salvage *s = r4_calloc(1, sizeof(*s));
	int rc;

	if (!s)
		return -ENOMEM;
	s->io = s->base = io;
	if (o)
		s->lg = (struct r4_logger){o->log, o->log_ctx};
	if ((rc = setup(s))) {
		if (rc == -EUCLEAN)
			r4_log(&s->lg, R4_LOG_ERR, "no Reiser4 volume to salvage: no super block "
			       "decodes and no node of one was found");
		r4_salvage_close(s);
		return rc;
	}
	*out = s;
	return 0;
}

int r4_salvage_open(const char *path, const struct r4_salvage_opts *o, r4_salvage **out)
{
	struct r4_logger lg = {o ? o->log : NULL, o ? o->log_ctx : NULL};
	struct r4_io *io;
	int rc;

	/* read-only: no R4_IO_RW, so the backend refuses every write */
	if ((rc = r4_io_open(path, 0, o ? o->partition : 0, &lg, &io)))
		return rc;
	if ((rc = r4_salvage_open_io(io, o, out))) {
		r4_io_close(io);
		return rc;
	}
	(*out)->own_io = true;
	return 0;
}

void r4_salvage_info(const r4_salvage *s, struct r4_salvage_info *out)
{
	*out = s->info;
}

/* ============================ body segments ============================ */

/* The size of o's body: its stat data's, else where its last piece ends
 * (for clusters, where the last one ends: a compressed stream does not say
 * how long its cluster is). */
static uint64_t body_size(const struct sobj *o)
{
	uint64_t end;

	if (o->flags & O_SD)
		return o->sd.sd_size;
	if (!o->npcs)
		return 0;
	end = o->pcs[o->npcs - 1].off + o->pcs[o->npcs - 1].len;
	if (o->flags & O_CTAIL)
		end = R4_MAX(end, ((end - 1) >> o->shift << o->shift) + ((uint64_t)1 << o->shift));
	return end;
}

/* The lost range that holds body bytes [from, to] of o, or NULL. */
static const struct lost *body_lost(const struct r4_salvage *s, const struct sobj *o,
				    uint64_t from, uint64_t to)
{
	const r4_key *k = &o->sdkey;
	r4_key lo, hi;

	r4_key_body(&lo, r4_key_locality(k), r4_key_ordering(k), o->oid, from);
	r4_key_body(&hi, r4_key_locality(k), r4_key_ordering(k), o->oid, to);
	return lost_meets(s, &lo, &hi);
}

/* The first piece of o ending past off (o->npcs: none). */
static size_t piece_at(const struct sobj *o, uint64_t off)
{
	size_t a = 0, z = o->npcs;

	while (a < z) {
		size_t m = a + (z - a) / 2;

		if (o->pcs[m].off + o->pcs[m].len <= off)
			a = m + 1;
		else
			z = m;
	}
	return a;
}

/* One cluster of a compressed body. */
struct ccl {
	uint64_t start;		/* its first byte */
	size_t lsize;		/* its bytes (clipped at the size) */
	size_t first, n;	/* its pieces: o->pcs[first, first + n) */
	size_t have;		/* the bytes of its stream, when they follow each other */
	bool whole;		/* they do, from its first byte on */
	enum r4_salvage_kind kind;
	const struct lost *lost;	/* R4_SALVAGE_LOST: the node that held it */
};

/*
 * Cluster idx of o (O_CTAIL; its start below the size): a hole when it
 * has no items (zeros, as the kernel reads it) unless a lost node held
 * keys of it; lost when a lost node may have held part of its stream (a
 * gap in it, or the end of a stream shorter than the cluster, where a
 * compressed stream's rest and checksum would be); data else, which
 * r4_salvage_read decodes (and reports, when that fails).
 */
static void cc_cluster(const struct r4_salvage *s, const struct sobj *o, uint64_t idx,
		       struct ccl *c)
{
	uint64_t cs = idx << o->shift, at;

	*c = (struct ccl){.start = cs, .whole = true, .kind = R4_SALVAGE_DATA};
	c->lsize = (size_t)R4_MIN((uint64_t)1 << o->shift, body_size(o) - cs);
	c->first = piece_at(o, cs);
	for (at = cs; c->first + c->n < o->npcs &&
		      o->pcs[c->first + c->n].off >> o->shift == idx; c->n++) {
		const struct piece *p = &o->pcs[c->first + c->n];

		c->whole = c->whole && p->off == at;
		at = p->off + p->len;
	}
	c->have = (size_t)(at - cs);
	/* (the node named is the first lost one meeting the cluster, as the
	 * report's line for the segment finds it) */
	c->lost = body_lost(s, o, cs, cs + c->lsize - 1);
	if (!c->n)
		c->kind = c->lost ? R4_SALVAGE_LOST : R4_SALVAGE_HOLE;
	else if (c->lost && (!c->whole || (c->have < c->lsize &&
					   body_lost(s, o, cs + c->have, cs + c->lsize - 1))))
		c->kind = R4_SALVAGE_LOST;
	else
		c->lost = NULL;
}

enum {
	CC_RUN = 1024,		/* clusters a segment spans at most: each is a search */
	CC_MAX = 1 << 16,	/* the largest cluster (shift 16, take_ctail) */
};

/* The segment of compressed body o at off < size: clusters of one kind
 * (lost: held by one node). */
static void cc_segment(const struct r4_salvage *s, const struct sobj *o, uint64_t off,
		       enum r4_salvage_kind *kind, uint64_t *end)
{
	uint64_t size = body_size(o), idx = off >> o->shift;
	struct ccl c, d;

	cc_cluster(s, o, idx, &c);
	*kind = c.kind;
	*end = c.start + c.lsize;
	for (unsigned i = 1; i < CC_RUN && *end < size; i++) {
		cc_cluster(s, o, ++idx, &d);
		if (d.kind != c.kind || d.lost != c.lost)
			break;
		*end = d.start + d.lsize;
	}
}

/* The segment of o's body at off < size: kind, its end, and the piece
 * holding it (or NULL; always for a compressed body). */
static void segment(const struct r4_salvage *s, const struct sobj *o, uint64_t off,
		    enum r4_salvage_kind *kind, uint64_t *end, const struct piece **pc)
{
	uint64_t size = body_size(o);
	size_t a = piece_at(o, off);

	*pc = NULL;
	if (o->flags & O_CTAIL) {
		cc_segment(s, o, off, kind, end);
		return;
	}
	if (a < o->npcs && o->pcs[a].off <= off) {
		*pc = &o->pcs[a];
		*end = R4_MIN(size, o->pcs[a].off + o->pcs[a].len);
		*kind = o->pcs[a].kind == P_EXTENT && !o->pcs[a].blk ? R4_SALVAGE_HOLE
								      : R4_SALVAGE_DATA;
		return;
	}
	*end = a < o->npcs ? R4_MIN(size, o->pcs[a].off) : size;
	*kind = body_lost(s, o, off, *end - 1) ? R4_SALVAGE_LOST : R4_SALVAGE_HOLE;
}

static const struct sobj *body_of(const r4_salvage *s, uint64_t ino)
{
	const struct sobj *o = obj_find(s, ino);

	return o && (o->flags & O_KEY) ? o : NULL;
}

int r4_salvage_segment(const r4_salvage *s, uint64_t ino, uint64_t off,
		       enum r4_salvage_kind *kind, uint64_t *end)
{
	const struct sobj *o = body_of(s, ino);
	const struct piece *pc;

	if (!o)
		return -ENOENT;
	if (off >= body_size(o))
		return -ENXIO;
	segment(s, o, off, kind, end, &pc);
	return 0;
}

/* The words of the object: its path, else its key. */
static const char *who(const struct sobj *o, char k[static R4_KEY_PRINT_SIZE])
{
	if (o->path)
		return o->path;
	r4_key_print(&o->sdkey, k, R4_KEY_PRINT_SIZE);
	return k;
}

/* Bytes [off, off + n) of the data blocks from block start on, into buf;
 * each block that does not read is zeros and a line of the report
 * (-EIO). */
static int read_blocks(r4_salvage *s, const struct sobj *o, uint64_t start, uint64_t off,
		       uint8_t *buf, size_t n)
{
	uint64_t first = start + off / s->bs;
	char k[R4_KEY_PRINT_SIZE];
	int rc = 0, r;

	if (first < s->blocks && (off + n + s->bs - 1) / s->bs + start <= s->blocks &&
	    !r4_io_read(s->io, start * s->bs + off, buf, n))
		return 0;
	for (size_t done = 0; done < n;) {	/* block by block */
		uint64_t b = start + (off + done) / s->bs, in = (off + done) % s->bs;
		size_t m = (size_t)R4_MIN(n - done, s->bs - in);

		if (b >= s->blocks || r4_io_read(s->io, b * s->bs + in, buf + done, m)) {
			memset(buf + done, 0, m);
			if ((r = note(&s->walk, "%s: data block %llu does not read", who(o, k),
				      (unsigned long long)b)))
				return r;
			rc = -EIO;
		}
		done += m;
	}
	return rc;
}

/* The compression plugin of o: its plugin set's, else the root's, else
 * the default (lzo1). */
static unsigned compress_of(const r4_salvage *s, const struct sobj *o)
{
	const struct sobj *root;
	uint16_t id;
	r4_key rk;

	if (o->flags & O_SD && r4_sd_has(&o->sd, R4_SDEXT_PSET) &&
	    r4_item_pset_get(&o->sd.sd_pset, R4_PSET_COMPRESSION, &id))
		return id;
	r4_obj_root_key(&rk);
	root = obj_find(s, r4_key_objectid(&rk));
	if (root && root->flags & O_SD && r4_sd_has(&root->sd, R4_SDEXT_PSET) &&
	    r4_item_pset_get(&root->sd.sd_pset, R4_PSET_COMPRESSION, &id))
		return id;
	return 0;
}

/*
 * Cluster c of compressed body o into s->cc.lc: its stream gathered from
 * its items' leaves, then inflated as ccreg.c reads it.  A stream whose
 * checksum holds but that does not inflate by o's plugin is tried with the
 * others (the plugin set that named it may be what was lost).  What does
 * not come out is a line of the report, as a lost range (-EIO).
 */
static int cc_decode(r4_salvage *s, const struct sobj *o, const struct ccl *c)
{
	unsigned want = compress_of(s, o);
	char k[R4_KEY_PRINT_SIZE];
	int rc = c->whole ? 0 : -EUCLEAN;

	if (s->cc.oid == o->oid && s->cc.idx == c->start >> o->shift)
		return s->cc.ok ? 0 : -EIO;
	if (!s->cc.dc && (!(s->cc.dc = r4_malloc(CC_MAX)) || !(s->cc.lc = r4_malloc(CC_MAX))))
		return -ENOMEM;
	s->cc.oid = o->oid;
	s->cc.idx = c->start >> o->shift;
	for (size_t i = c->first; i < c->first + c->n && !rc; i++) {
		const struct piece *p = &o->pcs[i];

		if (s->cached != p->blk && r4_io_read(s->io, p->blk * s->bs, s->tail, s->bs))
			rc = -EIO;	/* read once at open: it went bad since */
		else
			memcpy(s->cc.dc + (p->off - c->start), s->tail + p->boff, p->len);
		s->cached = rc ? UINT64_MAX : p->blk;
	}
	if (!rc)
		rc = r4_ccreg_inflate(NULL, o->pcs[c->first].blk, o->oid, want, o->shift,
				      body_size(o), s->cc.idx, s->cc.dc, c->have, s->cc.lc);
	for (unsigned id = 0; rc == -EUCLEAN && c->whole && id < 3; id++)
		if (id != want)
			rc = r4_ccreg_inflate(NULL, 0, o->oid, id, o->shift, body_size(o),
					      s->cc.idx, s->cc.dc, c->have, s->cc.lc);
	if (rc == -ENOMEM) {
		s->cc.oid = 0;
		return rc;
	}
	if ((s->cc.ok = !rc))
		return 0;
	rc = note(&s->walk, "%s: bytes %llu to %llu lost (block %llu)", who(o, k),
		  (unsigned long long)c->start, (unsigned long long)(c->start + c->lsize - 1),
		  (unsigned long long)o->pcs[c->first].blk);
	return rc ? rc : -EIO;
}

/* Bytes [off, off + len) of compressed body o, inside its size, into p. */
static int cc_read(r4_salvage *s, const struct sobj *o, uint64_t off, uint8_t *p, size_t len)
{
	int rc = 0, r;

	while (len) {
		struct ccl c;
		size_t in, n;

		cc_cluster(s, o, off >> o->shift, &c);
		in = (size_t)(off - c.start);
		n = R4_MIN(len, c.lsize - in);
		r = c.kind == R4_SALVAGE_DATA ? cc_decode(s, o, &c)
		    : c.kind == R4_SALVAGE_LOST ? -EIO : 0;
		if (r == -ENOMEM || (r && r != -EIO))
			return r;
		if (r || c.kind != R4_SALVAGE_DATA)
			memset(p, 0, n);
		else
			memcpy(p, s->cc.lc + in, n);
		rc = rc ? rc : r;
		p += n;
		off += n;
		len -= n;
	}
	return rc;
}

int r4_salvage_read(r4_salvage *s, uint64_t ino, uint64_t off, void *buf, size_t len)
{
	const struct sobj *o = body_of(s, ino);
	uint8_t *p = buf;
	int rc = 0, r;

	if (!o)
		return -ENOENT;
	if (off > body_size(o) || len > body_size(o) - off)
		return -ENXIO;
	if (o->flags & O_CTAIL)
		return cc_read(s, o, off, p, len);
	while (len) {
		enum r4_salvage_kind kind;
		const struct piece *pc;
		uint64_t end;
		size_t n;

		segment(s, o, off, &kind, &end, &pc);
		n = (size_t)R4_MIN((uint64_t)len, end - off);
		if (kind != R4_SALVAGE_DATA) {
			memset(p, 0, n);
			if (kind == R4_SALVAGE_LOST && !rc)
				rc = -EIO;
		} else if (pc->kind == P_EXTENT) {
			if ((r = read_blocks(s, o, pc->blk, off - pc->off, p, n)) && !rc)
				rc = r;
		} else {
			if (s->cached != pc->blk &&
			    r4_io_read(s->io, pc->blk * s->bs, s->tail, s->bs)) {
				memset(p, 0, n);	/* read once at open: it went bad since */
				rc = rc ? rc : -EIO;
			} else {
				s->cached = pc->blk;
				memcpy(p, s->tail + pc->boff + (off - pc->off), n);
			}
		}
		p += n;
		off += n;
		len -= n;
	}
	return rc;
}

/* ================================ walk ================================= */

struct walk {
	r4_salvage *s;
	int (*fn)(void *ctx, const struct r4_salvage_ent *e);
	void *ctx;
	bool lf;		/* /lost+found given */
	unsigned depth;		/* of give_dir */
	struct sobj *priv;	/* the root's private directory (R4_NS_PRIVATE), or NULL */
};

static int cmp_ent(const void *a, const void *b)
{
	return strcmp(((const struct sent *)a)->name, ((const struct sent *)b)->name);
}

/* Did the scan find again, in a block not marked free, entries of
 * directory oid in [a, z)?  Then the node lost was found elsewhere. */
static bool found_again(const r4_salvage *s, uint64_t oid, const r4_key *a, const r4_key *z)
{
	size_t lo = 0, hi = s->ncand;

	while (lo < hi) {	/* the first item ending at or past a */
		size_t m = lo + (hi - lo) / 2;

		if (r4_key_cmp(&s->cand[m].hi, a) < 0)
			lo = m + 1;
		else
			hi = m;
	}
	for (; lo < s->ncand && r4_key_cmp(&s->cand[lo].lo, z) < 0; lo++)
		if (s->cand[lo].rank > RANK_FREE && r4_key_type(&s->cand[lo].lo) == R4_KEY_NAME &&
		    r4_key_locality(&s->cand[lo].lo) == oid)
			return true;
	return false;
}

/* What is missing of o, first met at path: lines of the report. */
static int problems(r4_salvage *s, const struct sobj *o, const char *path, bool guessed)
{
	char k[R4_KEY_PRINT_SIZE], h[R4_KEY_PRINT_SIZE];
	const struct lost *l;
	r4_key lo, hi;
	int rc = 0;

	if (!(o->flags & O_SD)) {
		const char *what = !guessed ? "nothing else of it found, skipped"
				   : o->flags & O_DIR ? "exported as a directory"
						      : "exported as a regular file";
		char where[40] = "";

		if (!(o->flags & O_KEY)) {	/* known by its entries or body alone */
			snprintf(k, sizeof(k), "of object %llu", (unsigned long long)o->oid);
		} else {
			r4_key_print(&o->sdkey, k, sizeof(k));
			if ((l = lost_meets(s, &o->sdkey, &o->sdkey)))
				snprintf(where, sizeof(where), " (block %llu)",
					 (unsigned long long)l->blk);
		}
		if ((rc = note(&s->walk, "%s: stat data %s %s%s; %s", path, k,
			       *where ? "lost" : "not found", where, what)) || !guessed)
			return rc;
	}
	if ((o->flags & O_OLDSD) &&
	    (rc = note(&s->walk, "%s: stat data from block %llu, which the bitmap marks free: "
		       "maybe an older copy", path, (unsigned long long)o->sdblk)))
		return rc;
	bool reg = o->flags & O_SD ? S_ISREG(o->sd.sd_mode) : !(o->flags & O_DIR);

	for (uint64_t off = 0, size = body_size(o), end; !rc && reg && off < size; off = end) {
		enum r4_salvage_kind kind;
		const struct piece *pc;

		segment(s, o, off, &kind, &end, &pc);
		if (kind == R4_SALVAGE_LOST)
			rc = note(&s->walk, "%s: bytes %llu to %llu lost (block %llu)", path,
				  (unsigned long long)off, (unsigned long long)end - 1,
				  (unsigned long long)body_lost(s, o, off, end - 1)->blk);
	}
	if (rc || !(o->flags & O_DIR || (o->flags & O_SD && S_ISDIR(o->sd.sd_mode))))
		return rc;
	lo = (r4_key){{o->oid << 4 | R4_KEY_NAME, 0, 0, 0}};
	hi = (r4_key){{o->oid << 4 | R4_KEY_NAME, UINT64_MAX, UINT64_MAX, UINT64_MAX}};
	for (size_t i = 0; i < s->nlost && !rc; i++) {
		const struct lost *m = &s->lost[i];
		r4_key a = r4_key_cmp(&lo, &m->lo) > 0 ? lo : m->lo;
		r4_key z = r4_key_cmp(&hi, &m->hi) < 0 ? hi : m->hi;

		if (r4_key_cmp(&a, &z) >= 0 || found_again(s, o->oid, &a, &z))
			continue;
		r4_key_print(&a, k, sizeof(k));
		r4_key_print(&z, h, sizeof(h));
		rc = note(&s->walk, "%s: entries %s to %s may be lost (block %llu)", path, k, h,
			  (unsigned long long)m->blk);
	}
	return rc;
}

static int give(struct walk *w, struct sobj *o, const char *path, unsigned flags);

enum { MAX_DEPTH = 1024 };	/* directories deeper are not walked (the stack) */

/* What directory d holds, by name, but the private directory, which is
 * r4's (r4_salvage_walk).  (The walk adds no object, so the table's
 * pointers stay.) */
static int give_dir(struct walk *w, struct sobj *d, const char *path)
{
	int rc = 0;

	if (w->depth == MAX_DEPTH)
		return note(&w->s->walk, "%s: deeper than %d directories, not walked", path,
			    MAX_DEPTH);
	if (d->nents > 1)
		qsort(d->ents, d->nents, sizeof(*d->ents), cmp_ent);
	w->depth++;
	for (size_t i = 0; i < d->nents && !rc; i++) {
		char *p = r4_path_join(path, d->ents[i].name, strlen(d->ents[i].name));

		if (!p) {
			rc = -ENOMEM;
			break;
		}
		/* (every entry's object was made with it: take_cde) */
		struct sobj *o = obj_find(w->s, r4_key_objectid(&d->ents[i].sdkey));

		rc = o == w->priv ? 0 : give(w, o, p, 0);
		r4_free(p);
	}
	w->depth--;
	return rc;
}

/* Give o at path to the walk's function, then what it holds. */
static int give(struct walk *w, struct sobj *o, const char *path, unsigned flags)
{
	struct r4_salvage_ent e = {.path = path, .flags = flags};
	bool guessed = !(o->flags & O_SD) && (o->flags & O_DIR || o->npcs);
	struct r4_inode ino = {.sdkey = o->sdkey, .sd = o->sd};
	int rc;

	if (o->flags & O_SEEN) {
		if ((o->flags & O_DIR) || S_ISDIR(o->sd.sd_mode))
			return note(&w->s->walk, "%s: a second name of directory %s, skipped",
				    path, o->path);
		e.link = o->path;
	} else if ((rc = problems(w->s, o, path, guessed))) {
		return rc;
	} else if (!(o->flags & O_SD) && !guessed) {
		return 0;
	}
	if (o->flags & O_SD) {
		r4_fs_stat_of(NULL, &ino, &e.st);
	} else {
		e.flags |= R4_SALVAGE_GUESSED;
		e.st = (struct r4_stat){.ino = o->oid, .nlink = 1, .size = body_size(o),
					.mode = o->flags & O_DIR ? S_IFDIR | 0755 : S_IFREG | 0644};
	}
	if (S_ISLNK(e.st.mode)) {
		e.target = (const char *)o->symlink;
		e.target_len = o->symlink ? o->sd.sd_symlink_len : 0;
	}
	if (!(o->flags & O_SEEN)) {
		o->flags |= O_SEEN;
		if (!(o->path = r4_memdup(path, strlen(path))))
			return -ENOMEM;
	}
	if ((rc = w->fn(w->ctx, &e)) || e.link || !S_ISDIR(e.st.mode))
		return rc;
	return give_dir(w, o, path);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Everything no name reached, under /lost+found/#OID: first what no
 * directory found names, then the rest (directories that name each other). */
static int orphans(struct walk *w)
{
	r4_salvage *s = w->s;
	uint64_t *v = r4_calloc(s->nobj + 1, sizeof(*v));
	size_t n = 0;
	int rc = 0;

	if (!v)
		return -ENOMEM;
	for (size_t i = 0; i < s->capobj; i++) {
		const struct sobj *o = &s->obj[i];

		if (o->oid && !(o->flags & O_SEEN) && (o->flags & (O_SD | O_DIR) || o->npcs))
			v[n++] = o->oid;
	}
	qsort(v, n, sizeof(*v), cmp_u64);
	for (int pass = 0; pass < 2 && !rc; pass++)
		for (size_t i = 0; i < n && !rc; i++) {
			struct sobj *o = obj_find(s, v[i]);
			char path[48];

			if ((o->flags & O_SEEN) || (pass == 0 && (o->flags & O_NAMED)))
				continue;
			if (!w->lf) {
				struct r4_salvage_ent e = {
					.path = "/lost+found", .flags = R4_SALVAGE_GUESSED,
					.st = {.mode = S_IFDIR | 0700, .nlink = 2}};

				w->lf = true;
				if ((rc = w->fn(w->ctx, &e)))
					break;
			}
			snprintf(path, sizeof(path), "/lost+found/#%llu", (unsigned long long)o->oid);
			if (!(rc = note(&s->walk, "%s: found by no name", path)))
				rc = give(w, o, path, R4_SALVAGE_ORPHAN);
		}
	r4_free(v);
	return rc;
}

/* The object at path, by the entries found (r4_salvage_walk). */
static struct sobj *resolve(r4_salvage *s, const char *path)
{
	r4_key rk;
	struct sobj *o;

	r4_obj_root_key(&rk);
	o = obj_find(s, r4_key_objectid(&rk));
	for (const char *p = path; o && *p;) {
		size_t n;

		while (*p == '/')
			p++;
		if (!*p)
			break;
		n = strcspn(p, "/");
		size_t i;
		for (i = 0; i < o->nents && (strlen(o->ents[i].name) != n ||
					     memcmp(o->ents[i].name, p, n)); i++)
			;
		o = i < o->nents ? obj_find(s, r4_key_objectid(&o->ents[i].sdkey)) : NULL;
		p += n;
	}
	return o;
}

int r4_salvage_xattrs(r4_salvage *s, uint64_t ino,
		      int (*fn)(void *ctx, const char *name, const void *value, size_t len),
		      void *ctx)
{
	char name[R4_XATTR_NAME_MAX + 1], path[sizeof(R4_NS_PRIVATE) + sizeof(name) + 1];
	struct r4_xattrs x = {0};
	struct sobj *rec;
	const uint8_t *v;
	const char *n;
	size_t at = 0, nl, vl;
	uint64_t size;
	int rc;

	snprintf(name, sizeof(name), "%llu.x", (unsigned long long)ino);
	snprintf(path, sizeof(path), "/" R4_NS_PRIVATE "/%s", name);
	if (!(rec = resolve(s, path)) || !(size = body_size(rec)))
		return 0;
	if (size > R4_XATTR_RECORD_MAX)
		return note(&s->walk, "#%llu: its attributes' record (%s) is too large to be one, "
			    "left out", (unsigned long long)ino, name);
	if ((rc = r4_buf_reserve(&x.b, (size_t)size)))
		return rc;
	x.b.len = (size_t)size;
	if ((rc = r4_salvage_read(s, rec->oid, 0, x.b.p, x.b.len)) == -EIO)
		rc = note(&s->walk, "#%llu: its attributes' record (%s) lost bytes, left out",
			  (unsigned long long)ino, name);
	else if (!rc && !r4_xattr_well_formed(&x))
		rc = note(&s->walk, "#%llu: its attributes' record (%s) does not decode, left out",
			  (unsigned long long)ino, name);
	else
		while (!rc && r4_xattr_next(&x, &at, &n, &nl, &v, &vl)) {
			memcpy(name, n, nl);
			name[nl] = 0;
			rc = fn(ctx, name, v, vl);
		}
	r4_xattr_fini(&x);
	return rc;
}

int r4_salvage_walk(r4_salvage *s, const char *path,
		    int (*fn)(void *ctx, const struct r4_salvage_ent *e), void *ctx)
{
	struct walk w = {s, fn, ctx, false, 0, NULL};
	bool whole = !path || !path[strspn(path, "/")];
	struct sobj *o;
	r4_key rk;
	int rc;

	for (size_t i = 0; i < s->capobj; i++) {	/* a walk again: from scratch */
		s->obj[i].flags &= ~(unsigned)O_SEEN;
		r4_free(s->obj[i].path);
		s->obj[i].path = NULL;
	}
	s->walk.len = 0;
	s->cc.oid = 0;		/* a cluster that failed is said again */
	if (whole) {
		r4_obj_root_key(&rk);
		if (!(o = obj_get(s, r4_key_objectid(&rk))))
			return -ENOMEM;
		obj_key(o, &rk);
		if (!(o->flags & O_SD))
			o->flags |= O_DIR;	/* the root is a directory even with nothing found */
	} else if (!(o = resolve(s, path)) || !(o->flags & (O_SD | O_DIR) || o->npcs)) {
		return -ENOENT;
	}
	/* r4's private directory is not walked, and what it holds counts as
	 * met (no orphans): the attributes' records come with their objects
	 * (r4_salvage_xattrs) */
	if ((w.priv = resolve(s, "/" R4_NS_PRIVATE))) {
		w.priv->flags |= O_SEEN;
		for (size_t i = 0; i < w.priv->nents; i++) {
			struct sobj *r = obj_find(s, r4_key_objectid(&w.priv->ents[i].sdkey));

			if (r)
				r->flags |= O_SEEN;
		}
	}
	if ((rc = give(&w, o, whole ? "/" : path, 0)) || !whole)
		return rc;
	o = resolve(s, "/lost+found");
	w.lf = o && (o->flags & O_SEEN) && (o->flags & O_DIR || S_ISDIR(o->sd.sd_mode));
	return orphans(&w);
}

/* =============================== report =============================== */

int r4_salvage_report(r4_salvage *s, struct r4_buf *out)
{
	int rc = 0;

	if (s->jnl_why[0])
		rc = note(out, "journal: %s; not read, so transactions committed but not played "
			  "are not seen", s->jnl_why);

	for (size_t i = 0; i < s->nlost && !rc; i++) {
		const struct lost *l = &s->lost[i];
		char lo[R4_KEY_PRINT_SIZE], hi[R4_KEY_PRINT_SIZE];

		r4_key_print(&l->lo, lo, sizeof(lo));
		r4_key_print(&l->hi, hi, sizeof(hi));
		if (!l->level)
			rc = note(out, "block %llu: %s; every key lost from the tree",
				  (unsigned long long)l->blk, l->why);
		else
			rc = note(out, "block %llu: %s (level %u) unreadable: %s; keys %s to %s",
				  (unsigned long long)l->blk, l->level == s->height
				  ? "the root" : level_name(l->level), l->level, l->why, lo, hi);
	}
	for (size_t i = 0; i < s->npairs && !rc; i++) {
		const struct pair *p = &s->pairs[i];
		char k[R4_KEY_PRINT_SIZE];

		r4_key_print(&p->first, k, sizeof(k));
		rc = note(out, "blocks %llu and %llu hold copies of the same keys (%llu item%s from "
			  "%s): took block %llu", (unsigned long long)p->took,
			  (unsigned long long)p->left, (unsigned long long)p->n, p->n == 1 ? "" : "s",
			  k, (unsigned long long)p->took);
	}
	if (!rc && s->notes.len)
		rc = r4_buf_add(out, s->notes.p, s->notes.len);
	if (!rc && s->walk.len)
		rc = r4_buf_add(out, s->walk.p, s->walk.len);
	return rc;
}
