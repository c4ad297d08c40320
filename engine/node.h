/*
 * node.h - node40 / node41 formatted-node layout (ENGINE.md section 1.9).
 *
 * A node is one block:
 *   [header][body 0][body 1]...[body n-1][free][ih n-1]...[ih 1][ih 0]
 * Bodies grow up from the header (28 bytes node40, 32 node41 with a CRC32C
 * at byte 28); 38-byte item headers (32-byte key, u16 body offset, u16
 * flags, u16 item plugin id) grow down from the end.  An item's length is
 * the next item's offset minus its own (the last: free_space_start).
 *
 * These functions work on a raw buffer of `bs` bytes.  r4_node_check is the
 * only one that trusts nothing; the accessors assume a checked node, and the
 * editors keep the header fields (count, free space, offsets) consistent.
 */
#ifndef R4_NODE_H
#define R4_NODE_H

#include "plugin.h"

enum {				/* node header, node40.h */
	R4_NH_PID = 0,		/* le16 node plugin id, 0 node40, 1 node41 */
	R4_NH_NR_ITEMS = 2,	/* le16 */
	R4_NH_FREE = 4,		/* le16 free bytes */
	R4_NH_FREE_START = 6,	/* le16 offset of the first free byte */
	R4_NH_MAGIC = 8,	/* le32 */
	R4_NH_MKFS_ID = 12,	/* le32 copy of the format super block's mkfs_id */
	R4_NH_FLUSH_ID = 16,	/* le64, never maintained by the kernel */
	R4_NH_FLAGS = 24,	/* le16 */
	R4_NH_LEVEL = 26,	/* u8, 1 = leaf */
	R4_NH_PAD = 27,
	R4_NH40_SIZE = 28,
	R4_NH41_CSUM = 28,	/* le32 CRC32C, node41 only */
	R4_NH41_SIZE = 32,
};

enum {				/* item header (large keys) */
	R4_IH_KEY = 0,
	R4_IH_OFFSET = 32,
	R4_IH_FLAGS = 34,
	R4_IH_PID = 36,
	R4_IH_SIZE = 38,
};
_Static_assert(R4_IH_KEY + R4_KEY_SIZE == R4_IH_OFFSET, "key runs into offset");

enum { R4_NODE40 = 0, R4_NODE41 = 1 };
#define R4_NODE40_MAGIC 0x52344653u
#define R4_NODE41_MAGIC 0x19051966u
#define R4_LEVEL_LEAF 1
#define R4_LEVEL_TWIG 2
#define R4_MAX_HEIGHT 8

/* The header size of node plugin pid (node40 for an id r4 does not know). */
static inline unsigned r4_node_hdr_size(unsigned pid)
{
	return ((const struct r4_node_ops *)r4_node_plugins[pid == R4_NODE41].ops)->header;
}

static inline unsigned r4_node_nr(const uint8_t *b) { return r4_le16_get(b + R4_NH_NR_ITEMS); }
static inline unsigned r4_node_level(const uint8_t *b) { return b[R4_NH_LEVEL]; }
static inline unsigned r4_node_free(const uint8_t *b) { return r4_le16_get(b + R4_NH_FREE); }

static inline uint8_t *r4_node_ih(uint8_t *b, uint32_t bs, unsigned i)
{
	return b + bs - (size_t)(i + 1) * R4_IH_SIZE;
}

static inline const uint8_t *r4_node_ih_c(const uint8_t *b, uint32_t bs, unsigned i)
{
	return b + bs - (size_t)(i + 1) * R4_IH_SIZE;
}

static inline void r4_node_key(const uint8_t *b, uint32_t bs, unsigned i, r4_key *k)
{
	r4_key_decode(r4_node_ih_c(b, bs, i) + R4_IH_KEY, k);
}

static inline unsigned r4_node_item_pid(const uint8_t *b, uint32_t bs, unsigned i)
{
	return r4_le16_get(r4_node_ih_c(b, bs, i) + R4_IH_PID);
}

static inline unsigned r4_node_item_off(const uint8_t *b, uint32_t bs, unsigned i)
{
	return r4_le16_get(r4_node_ih_c(b, bs, i) + R4_IH_OFFSET);
}

unsigned r4_node_item_len(const uint8_t *b, uint32_t bs, unsigned i);

/* Format an empty node (r4_node_format: b reads as zeros already). */
void r4_node_init(uint8_t *b, uint32_t bs, unsigned pid, unsigned level, uint32_t mkfs_id);
void r4_node_format(uint8_t *b, uint32_t bs, unsigned pid, unsigned level, uint32_t mkfs_id);

/*
 * Validate a node read from block `blk`: plugin id and magic, mkfs_id,
 * level (if want_level != 0), node41 checksum, item count, body offsets
 * (first right after the header, increasing, inside the free-space start),
 * free-space bookkeeping, item key order and item plugins allowed at the
 * level.  Returns 0, -EUCLEAN (R4_CORRUPT) or -EBADMSG (checksum).
 */
int r4_node_check(const struct r4_logger *lg, uint64_t blk, const uint8_t *b, uint32_t bs,
		  unsigned pid, uint32_t mkfs_id, unsigned want_level);

/* Recompute the node41 checksum (no-op for node40); call before writing. */
void r4_node_seal(uint8_t *b, uint32_t bs);

/*
 * Binary search: the position of the last item whose key is <= k, or -1
 * when k is below the first item's key.  Among equal keys, the first.
 */
int r4_node_lookup(const uint8_t *b, uint32_t bs, const r4_key *k);
/* r4_node_lookup, trying position hint first (two comparisons when k
 * falls there, as lookups near the last one do). */
int r4_node_lookup_near(const uint8_t *b, uint32_t bs, const r4_key *k, int hint);

/*
 * Editors.  The caller checks space first (r4_node_free() >= len + 38 for
 * an insert, >= delta for a grow).
 *  insert: a new item at position pos with an uninitialised body of len
 *          bytes; returns the body.
 *  remove: items [pos, pos+count).
 *  resize: grow (delta > 0: insert delta bytes at byte `at` of the body)
 *          or shrink (delta < 0: remove -delta bytes at `at`) item pos.
 */
uint8_t *r4_node_insert(uint8_t *b, uint32_t bs, unsigned pos, const r4_key *k, unsigned pid,
			unsigned len);
void r4_node_remove(uint8_t *b, uint32_t bs, unsigned pos, unsigned count);
void r4_node_resize(uint8_t *b, uint32_t bs, unsigned pos, unsigned at, int delta);
void r4_node_set_key(uint8_t *b, uint32_t bs, unsigned pos, const r4_key *k);

static inline uint8_t *r4_node_body(uint8_t *b, uint32_t bs, unsigned i)
{
	return b + r4_node_item_off(b, bs, i);
}

/* Bytes of bodies + headers used by items [from, to). */
unsigned r4_node_used(const uint8_t *b, uint32_t bs, unsigned from, unsigned to);

#endif
