/*
 * item_extent.c - the small codecs: extent40 (arrays of block runs),
 * nodeptr40 (one child block), plain40 (tail bytes), ctail40 (a cluster
 * shift and bytes of a disk cluster) and bbox40 (the safe-link record).
 *
 * Layouts: progs plugin/item/extent40, nodeptr40, plain40, ctail40,
 * bbox40; kernel plugin/item/extent.h, internal.c, tail.c, ctail.h,
 * blackbox.c and safe_link.c.
 * All little-endian, no padding.  Extents: a width of 0 is refused, and so
 * is a run or a total width that overflows 64 bits; start 1 (unallocated)
 * is accepted here, since only a committed image must not have it (the
 * checker's business, as is whether a block lies inside the volume).
 * What a block index means (file offset / block size) is the file
 * plugin's business.
 */
#include "item.h"

#include <assert.h>

/* ---- extent40 ---- */

int r4_item_extent_count(const uint8_t *body, size_t len, size_t *n)
{
	(void)body;
	if (len == 0 || len % R4_EXTENT_UNIT)
		return R4_CORRUPT(NULL, 0, "extent item of %zu bytes: not a non-zero multiple of "
				  "%d", len, R4_EXTENT_UNIT);
	*n = len / R4_EXTENT_UNIT;
	return 0;
}

int r4_item_extent_decode(const uint8_t *body, size_t len, struct r4_extent *out, size_t n)
{
	uint64_t total = 0;
	size_t count = 0;
	int rc;

	if ((rc = r4_item_extent_count(body, len, &count)))
		return rc;
	if (n != count)
		return -EINVAL;
	for (size_t i = 0; i < n; i++) {
		const uint8_t *u = body + i * R4_EXTENT_UNIT;
		uint64_t start = r4_le64_get(u + R4_EXTENT_START);
		uint64_t width = r4_le64_get(u + R4_EXTENT_WIDTH);

		if (width == 0)
			return R4_CORRUPT(NULL, 0, "extent unit %zu has width 0", i);
		if (start > R4_EXTENT_UNALLOC && start + width < start)
			return R4_CORRUPT(NULL, 0, "extent unit %zu: %llu + %llu blocks overflows",
					  i, (unsigned long long)start, (unsigned long long)width);
		if (total + width < total)
			return R4_CORRUPT(NULL, 0, "extent item wider than 2^64 blocks at unit %zu",
					  i);
		total += width;
		out[i].ex_start = start;
		out[i].ex_width = width;
	}
	return 0;
}

void r4_item_extent_encode(const struct r4_extent *e, size_t n, uint8_t *body)
{
	for (size_t i = 0; i < n; i++) {
		assert(e[i].ex_width > 0);
		r4_le64_put(body + i * R4_EXTENT_UNIT + R4_EXTENT_START, e[i].ex_start);
		r4_le64_put(body + i * R4_EXTENT_UNIT + R4_EXTENT_WIDTH, e[i].ex_width);
	}
}

uint64_t r4_item_extent_width(const struct r4_extent *e, size_t n)
{
	uint64_t w = 0;

	for (size_t i = 0; i < n; i++)
		w += e[i].ex_width;
	return w;
}

bool r4_item_extent_find(const struct r4_extent *e, size_t n, uint64_t blk, size_t *unit,
			 uint64_t *within)
{
	for (size_t i = 0; i < n; i++) {
		if (blk < e[i].ex_width) {
			*unit = i;
			*within = blk;
			return true;
		}
		blk -= e[i].ex_width;
	}
	return false;
}

/* ---- nodeptr40 ---- */

int r4_item_nodeptr_decode(const uint8_t *body, size_t len, uint64_t *blk)
{
	uint64_t b;

	if (len != R4_NODEPTR_SIZE)
		return R4_CORRUPT(NULL, 0, "node pointer item of %zu bytes (want %d)", len,
				  R4_NODEPTR_SIZE);
	b = r4_le64_get(body);
	if (b == 0)
		return R4_CORRUPT(NULL, 0, "node pointer to block 0");
	*blk = b;
	return 0;
}

void r4_item_nodeptr_encode(uint64_t blk, uint8_t *body)
{
	r4_le64_put(body, blk);
}

/* ---- plain40 ---- */

int r4_item_plain_decode(const uint8_t *body, size_t len, const uint8_t **data, size_t *n)
{
	if (len == 0)
		return R4_CORRUPT(NULL, 0, "empty tail item");
	*data = body;
	*n = len;
	return 0;
}

/* ---- ctail40 ---- */

int r4_item_ctail_decode(const uint8_t *body, size_t len, unsigned *shift, const uint8_t **data,
			 size_t *n)
{
	if (len <= R4_CTAIL_DATA)
		return R4_CORRUPT(NULL, 0, "ctail item of %zu bytes holds no data", len);
	*shift = body[R4_CTAIL_SHIFT];
	*data = body + R4_CTAIL_DATA;
	*n = len - R4_CTAIL_DATA;
	return 0;
}

void r4_item_ctail_encode(unsigned shift, const uint8_t *data, size_t n, uint8_t *body)
{
	assert(shift <= 0xff);
	body[R4_CTAIL_SHIFT] = (uint8_t)shift;
	memcpy(body + R4_CTAIL_DATA, data, n);
}

/* ---- bbox40 ---- */

int r4_item_bbox_decode(const uint8_t *body, size_t len, struct r4_safelink *out)
{
	struct r4_safelink sl;

	if (len != R4_SAFELINK_SIZE && len != R4_SAFELINK_TRUNC_SIZE)
		return R4_CORRUPT(NULL, 0, "black box of %zu bytes is no safe-link (want %d or %d)",
				  len, R4_SAFELINK_SIZE, R4_SAFELINK_TRUNC_SIZE);
	r4_key_decode(body, &sl.sl_sdkey);
	sl.sl_has_size = len == R4_SAFELINK_TRUNC_SIZE;
	sl.sl_size = sl.sl_has_size ? r4_le64_get(body + R4_KEY_SIZE) : 0;
	*out = sl;
	return 0;
}

void r4_item_bbox_encode(const struct r4_safelink *sl, uint8_t *body)
{
	r4_key_encode(&sl->sl_sdkey, body);
	if (sl->sl_has_size)
		r4_le64_put(body + R4_KEY_SIZE, sl->sl_size);
}
