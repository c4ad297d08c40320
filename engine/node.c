/*
 * node.c - node40 / node41 layout: validation, lookup and the editors that
 * keep a node's bookkeeping consistent (count, free space, body offsets).
 *
 * Above: tree.c, which decides what goes where; item.c, which interprets
 * bodies.  Below: nothing (raw buffers).  Invariants kept by every editor:
 *   1. bodies are contiguous, in item order, starting right after the header;
 *   2. free_space_start = end of the last body;
 *   3. free_space = bs - free_space_start - nr_items * 38.
 * Layout facts: reiser4progs plugin/node/node40, node41; kernel node40.c.
 */
#include "node.h"

unsigned r4_node_item_len(const uint8_t *b, uint32_t bs, unsigned i)
{
	unsigned end = i + 1 < r4_node_nr(b) ? r4_node_item_off(b, bs, i + 1)
					       : r4_le16_get(b + R4_NH_FREE_START);

	return end - r4_node_item_off(b, bs, i);
}

/* node41: CRC32C over the header before the checksum and everything after it */
static uint32_t node41_csum(const uint8_t *b, uint32_t bs)
{
	uint32_t c = r4_crc32c(~0u, b, R4_NH40_SIZE);

	return r4_crc32c(c, b + R4_NH41_SIZE, bs - R4_NH41_SIZE);
}

#define NODE(hdr, magic, csum) (&(const struct r4_node_ops){hdr, magic, csum})
const struct r4_plugin r4_node_plugins[2] = {
	[R4_NODE40] = {"node40", "formatted node: item headers and bodies, no checksum",
		       NODE(R4_NH40_SIZE, R4_NODE40_MAGIC, NULL)},
	[R4_NODE41] = {"node41", "node40 and a CRC32C of the node in its header",
		       NODE(R4_NH41_SIZE, R4_NODE41_MAGIC, node41_csum)},
};
#undef NODE

static const struct r4_node_ops *node_ops(unsigned pid)
{
	return r4_plugin_ops(R4_PTYPE_NODE, pid);
}

void r4_node_init(uint8_t *b, uint32_t bs, unsigned pid, unsigned level, uint32_t mkfs_id)
{
	memset(b, 0, bs);
	r4_node_format(b, bs, pid, level, mkfs_id);
}

void r4_node_format(uint8_t *b, uint32_t bs, unsigned pid, unsigned level, uint32_t mkfs_id)
{
	unsigned hdr = r4_node_hdr_size(pid);

	r4_le16_put(b + R4_NH_PID, (uint16_t)pid);
	r4_le16_put(b + R4_NH_FREE, (uint16_t)(bs - hdr));
	r4_le16_put(b + R4_NH_FREE_START, (uint16_t)hdr);
	r4_le32_put(b + R4_NH_MAGIC, node_ops(pid)->magic);
	r4_le32_put(b + R4_NH_MKFS_ID, mkfs_id);
	b[R4_NH_LEVEL] = (uint8_t)level;
}

void r4_node_seal(uint8_t *b, uint32_t bs)
{
	const struct r4_node_ops *o = node_ops(r4_le16_get(b + R4_NH_PID));

	if (o && o->csum)
		r4_le32_put(b + R4_NH41_CSUM, o->csum(b, bs));
}

/* Item plugins a level may hold (their rows say): leaves hold stat data,
 * entries, bodies and black boxes; twigs node pointers and extents; higher
 * levels pointers only. */
static bool item_fits_level(unsigned ipid, unsigned level)
{
	const struct r4_item_ops *io = r4_plugin_ops(R4_PTYPE_ITEM, ipid);
	unsigned at = level == R4_LEVEL_LEAF ? R4_ITEM_AT_LEAF : level == R4_LEVEL_TWIG
		      ? R4_ITEM_AT_TWIG : R4_ITEM_AT_UPPER;

	return io && (io->levels & at);
}

static int check_items(const struct r4_logger *lg, uint64_t blk, const uint8_t *b, uint32_t bs,
		       unsigned hdr)
{
	unsigned nr = r4_node_nr(b), level = r4_node_level(b);
	unsigned fss = r4_le16_get(b + R4_NH_FREE_START), prev = hdr;
	r4_key k, pk;

	if ((size_t)nr * R4_IH_SIZE > bs - hdr || fss < hdr || fss > bs - (size_t)nr * R4_IH_SIZE)
		return R4_CORRUPT(lg, blk, "item count %u or free space start %u out of range", nr,
				  fss);
	if (r4_node_free(b) != bs - fss - nr * R4_IH_SIZE)
		return R4_CORRUPT(lg, blk, "free space %u does not match the layout",
				  r4_node_free(b));
	if (nr == 0 && level != R4_LEVEL_LEAF)
		return R4_CORRUPT(lg, blk, "empty internal node");
	for (unsigned i = 0; i < nr; i++) {
		unsigned off = r4_node_item_off(b, bs, i), ipid = r4_node_item_pid(b, bs, i);

		if ((i == 0 && off != hdr) || off < prev || off > fss)
			return R4_CORRUPT(lg, blk, "item %u body offset %u out of range", i, off);
		if (i > 0 && off == prev)
			return R4_CORRUPT(lg, blk, "item %u has an empty body", i - 1);
		if (!item_fits_level(ipid, level))
			return R4_CORRUPT(lg, blk, "item %u: plugin %u not allowed at level %u", i,
					  ipid, level);
		r4_node_key(b, bs, i, &k);
		if (i > 0 && r4_key_cmp(&pk, &k) > 0)
			return R4_CORRUPT(lg, blk, "keys out of order at item %u", i);
		pk = k;
		prev = off;
	}
	if (nr > 0 && fss == prev)
		return R4_CORRUPT(lg, blk, "item %u has an empty body", nr - 1);
	return 0;
}

int r4_node_check(const struct r4_logger *lg, uint64_t blk, const uint8_t *b, uint32_t bs,
		  unsigned pid, uint32_t mkfs_id, unsigned want_level)
{
	unsigned npid = r4_le16_get(b + R4_NH_PID), level = r4_node_level(b);
	uint32_t magic = r4_le32_get(b + R4_NH_MAGIC);
	const struct r4_node_ops *o = node_ops(pid);

	if (npid != pid)
		return R4_CORRUPT(lg, blk, "node plugin %u, volume uses %u", npid, pid);
	if (!o)
		return R4_CORRUPT(lg, blk, "unknown node plugin %u", pid);
	if (magic != o->magic)
		return R4_CORRUPT(lg, blk, "bad node magic 0x%08x", magic);
	if (o->csum && r4_le32_get(b + R4_NH41_CSUM) != o->csum(b, bs))
		return R4_BADCSUM(lg, blk, "%s checksum", r4_plugin_label(R4_PTYPE_NODE, pid));
	if (r4_le32_get(b + R4_NH_MKFS_ID) != mkfs_id)
		return R4_CORRUPT(lg, blk, "node of another volume (mkfs id 0x%08x)",
				  r4_le32_get(b + R4_NH_MKFS_ID));
	if (level == 0 || level > R4_MAX_HEIGHT || (want_level && level != want_level))
		return R4_CORRUPT(lg, blk, "node level %u, expected %u", level, want_level);
	return check_items(lg, blk, b, bs, r4_node_hdr_size(pid));
}

/* r4_key_cmp of item i's key with k, decoding no more of it than it takes
 * (keys mostly differ in their first element: the lookup's inner loop). */
static int key_cmp_at(const uint8_t *b, uint32_t bs, unsigned i, const r4_key *k)
{
	const uint8_t *p = r4_node_ih_c(b, bs, i) + R4_IH_KEY;

	for (int e = 0; e < 4; e++) {
		uint64_t v = r4_le64_get(p + 8 * e);

		if (v != k->el[e])
			return v < k->el[e] ? -1 : 1;
	}
	return 0;
}

int r4_node_lookup_near(const uint8_t *b, uint32_t bs, const r4_key *k, int hint)
{
	int nr = (int)r4_node_nr(b), c;

	/* what the search below answers for key(hint) <= k < key(hint + 1),
	 * k equal to key(hint) only when that is the first such key */
	if (hint >= 0 && hint < nr && (c = key_cmp_at(b, bs, (unsigned)hint, k)) <= 0 &&
	    (c < 0 || hint == 0 || key_cmp_at(b, bs, (unsigned)hint - 1, k) < 0)) {
		if (hint + 1 == nr || (c = key_cmp_at(b, bs, (unsigned)hint + 1, k)) > 0)
			return hint;
		/* (one further: the place after an item just added) */
		if (c < 0 && (hint + 2 == nr || key_cmp_at(b, bs, (unsigned)hint + 2, k) > 0))
			return hint + 1;
	}
	return r4_node_lookup(b, bs, k);
}

int r4_node_lookup(const uint8_t *b, uint32_t bs, const r4_key *k)
{
	int lo = 0, hi = (int)r4_node_nr(b) - 1, ans = -1;

	while (lo <= hi) {
		int mid = lo + (hi - lo) / 2;

		if (key_cmp_at(b, bs, (unsigned)mid, k) < 0) {
			ans = mid;
			lo = mid + 1;
		} else {
			hi = mid - 1;
		}
	}
	/* ans = last key < k; the next one may equal k */
	if (ans + 1 < (int)r4_node_nr(b) && key_cmp_at(b, bs, (unsigned)(ans + 1), k) == 0)
		return ans + 1;
	return ans;
}

static void set_counts(uint8_t *b, uint32_t bs, unsigned nr, unsigned fss)
{
	r4_le16_put(b + R4_NH_NR_ITEMS, (uint16_t)nr);
	r4_le16_put(b + R4_NH_FREE_START, (uint16_t)fss);
	r4_le16_put(b + R4_NH_FREE, (uint16_t)(bs - fss - nr * R4_IH_SIZE));
}

static void shift_offsets(uint8_t *b, uint32_t bs, unsigned from, unsigned nr, int delta)
{
	for (unsigned i = from; i < nr; i++) {
		uint8_t *ih = r4_node_ih(b, bs, i);

		r4_le16_put(ih + R4_IH_OFFSET, (uint16_t)(r4_le16_get(ih + R4_IH_OFFSET) + delta));
	}
}

uint8_t *r4_node_insert(uint8_t *b, uint32_t bs, unsigned pos, const r4_key *k, unsigned pid,
			unsigned len)
{
	unsigned nr = r4_node_nr(b), fss = r4_le16_get(b + R4_NH_FREE_START);
	unsigned off = pos < nr ? r4_node_item_off(b, bs, pos) : fss;
	uint8_t *ih;

	if (r4_node_free(b) < len + R4_IH_SIZE)
		return NULL;
	memmove(b + off + len, b + off, fss - off);
	/* headers pos..nr-1 move one slot down (toward lower addresses) */
	memmove(r4_node_ih(b, bs, nr), r4_node_ih(b, bs, nr) + R4_IH_SIZE,
		(size_t)(nr - pos) * R4_IH_SIZE);
	shift_offsets(b, bs, pos + 1, nr + 1, (int)len);
	ih = r4_node_ih(b, bs, pos);
	memset(ih, 0, R4_IH_SIZE);
	r4_key_encode(k, ih + R4_IH_KEY);
	r4_le16_put(ih + R4_IH_OFFSET, (uint16_t)off);
	r4_le16_put(ih + R4_IH_PID, (uint16_t)pid);
	set_counts(b, bs, nr + 1, fss + len);
	return b + off;
}

void r4_node_remove(uint8_t *b, uint32_t bs, unsigned pos, unsigned count)
{
	unsigned nr = r4_node_nr(b), fss = r4_le16_get(b + R4_NH_FREE_START);
	unsigned off = r4_node_item_off(b, bs, pos);
	unsigned end = pos + count < nr ? r4_node_item_off(b, bs, pos + count) : fss;

	memmove(b + off, b + end, fss - end);
	memset(b + fss - (end - off), 0, end - off);
	/* headers pos+count..nr-1 move count slots up */
	memmove(r4_node_ih(b, bs, nr - 1 - count), r4_node_ih(b, bs, nr - 1),
		(size_t)(nr - pos - count) * R4_IH_SIZE);
	memset(r4_node_ih(b, bs, nr - 1), 0, (size_t)count * R4_IH_SIZE);
	shift_offsets(b, bs, pos, nr - count, -(int)(end - off));
	set_counts(b, bs, nr - count, fss - (end - off));
}

void r4_node_resize(uint8_t *b, uint32_t bs, unsigned pos, unsigned at, int delta)
{
	unsigned nr = r4_node_nr(b), fss = r4_le16_get(b + R4_NH_FREE_START);
	unsigned p = r4_node_item_off(b, bs, pos) + at;

	if (delta > 0) {
		memmove(b + p + delta, b + p, fss - p);
		memset(b + p, 0, (size_t)delta);
	} else {
		memmove(b + p, b + p - delta, fss - p + delta);
		memset(b + fss + delta, 0, (size_t)-delta);
	}
	shift_offsets(b, bs, pos + 1, nr, delta);
	set_counts(b, bs, nr, (unsigned)((int)fss + delta));
}

void r4_node_set_key(uint8_t *b, uint32_t bs, unsigned pos, const r4_key *k)
{
	r4_key_encode(k, r4_node_ih(b, bs, pos) + R4_IH_KEY);
}

unsigned r4_node_used(const uint8_t *b, uint32_t bs, unsigned from, unsigned to)
{
	unsigned fss = r4_le16_get(b + R4_NH_FREE_START);
	unsigned start = from < r4_node_nr(b) ? r4_node_item_off(b, bs, from) : fss;
	unsigned end = to < r4_node_nr(b) ? r4_node_item_off(b, bs, to) : fss;

	return end - start + (to - from) * R4_IH_SIZE;
}
