/*
 * item.h - codecs for item bodies: stat data (stat40), directory entries
 * (cde40), extents (extent40), internal pointers (nodeptr40), tails
 * (plain40), compressed file bodies (ctail40) and black boxes (bbox40,
 * safe-links).  ENGINE.md 1.10, 2, 5.
 *
 * A codec is a pure function over one item body (const uint8_t *body,
 * size_t len): it never sees the node, the item header or the tree.  The
 * tree layer finds an item, decodes it into the native struct below, edits
 * that, asks the codec for the encoded size (every encoder has a _size
 * partner, so room can be made before anything is written) and encodes a
 * new body in place.  Decoders trust nothing: every rejection goes through
 * R4_CORRUPT with the reason (the codecs have no logger or block number of
 * their own, so they pass NULL and block 0; the caller that knows the
 * block may log again with it).  Encoders trust their input: it comes from
 * our own code, so they only assert.
 *
 * Byte-exactness: for every body these decoders accept, encode(decode(b))
 * reproduces b.  Layouts come from reiser4progs 1.2.2 (plugin/item/...,
 * plugin/sdext/..., plugin/key/key_large) and the kernel (static_stat.c,
 * cde.c, kassign.c, safe_link.c); the offsets live in the enums below.
 *
 * Borrowed pointers: r4_sd.sd_symlink and r4_dirent.de_name, when filled
 * by a decoder, point into the decoded body and are valid only while that
 * body is (for a node: until the node is changed or put).  Copy them
 * before editing the node they came from.
 */
#ifndef R4_ITEM_H
#define R4_ITEM_H

#include "r4_int.h"

/* Item plugin ids, as stored in the item header (forward.h item_id; do not renumber). */
enum r4_item_id {
	R4_ITEM_STAT40 = 0,
	R4_ITEM_SDE40 = 1,	/* legacy single-entry directory item: not supported */
	R4_ITEM_CDE40 = 2,
	R4_ITEM_NODEPTR40 = 3,
	R4_ITEM_EXTENT40 = 5,
	R4_ITEM_PLAIN40 = 6,	/* tail */
	R4_ITEM_CTAIL40 = 7,	/* cryptcompress (ccreg40) body: ccreg.c */
	R4_ITEM_BBOX40 = 8,
};

/* ================================ stat40 ================================ */

/*
 * Stat-data extensions; the id is the bit number in the extension mask.
 * Order matters: extension bodies follow the masks in increasing id order.
 * Bit 15 of each 16-bit mask is not an extension: it says another mask
 * follows (at most 4 masks).  Ids 16..62 would live in the later masks
 * (id = 16 * mask index + bit, as in progs' stat40_traverse), but none
 * exists, so any bit other than 0..8 and the chain bits is unsizeable and
 * rejected.
 */
enum r4_sdext {
	R4_SDEXT_LW = 0,	/* light weight: mode, nlink, size */
	R4_SDEXT_UNIX = 1,	/* uid, gid, a/m/ctime, rdev-or-bytes */
	R4_SDEXT_LT = 2,	/* large times: nanoseconds */
	R4_SDEXT_SYMLINK = 3,	/* target, NUL-terminated, length = LW size */
	R4_SDEXT_PSET = 4,	/* plugin set */
	R4_SDEXT_FLAGS = 5,	/* inode flags */
	R4_SDEXT_CAPS = 6,	/* capabilities: unused by the kernel */
	R4_SDEXT_CRYPTO = 7,	/* crypto-stat: unused since ciphers were removed */
	R4_SDEXT_HSET = 8,	/* heir set: same layout as the plugin set */
	R4_SDEXT_NR = 9,
};
#define R4_SDEXT_CHAIN 0x8000u	/* bit 15: another 16-bit mask follows */
#define R4_SD_MAX_MASKS 4

enum {				/* fixed extension sizes (bytes) */
	R4_SDEXT_LW_SIZE = 14,	/* le16 mode, le32 nlink, le64 size */
	R4_SDEXT_UNIX_SIZE = 28, /* le32 uid, gid, atime, mtime, ctime; le64 rdev|bytes */
	R4_SDEXT_LT_SIZE = 12,	/* le32 atime_ns, mtime_ns, ctime_ns */
	R4_SDEXT_FLAGS_SIZE = 4, /* le32 */
	R4_SDEXT_CAPS_SIZE = 8,	/* le32 effective, le32 permitted */
	R4_SDEXT_CRYPTO_SIZE = 6, /* le16 key size, then the digest's key id: 4 bytes for sha256_32 */
	R4_SDEXT_PSET_HDR = 2,	/* le16 slot count, then slots */
	R4_SDEXT_PSET_SLOT = 4,	/* le16 member, le16 plugin id; no per-plugin state on disk */
};

/*
 * Plugin-set members (kernel plugin.h pset_member == progs PSET_*): the
 * index stored in each PLUGIN/HEIR slot.  Order matters: it is on disk.
 * 'file' (0) and 'dir' (1) exist on disk but mkfs leaves them out of the
 * root: they are guessed from the mode bits when absent.  The root made by
 * mkfs.reiser4 1.2.2 carries the 12 members 2..13 in that order (perm 0,
 * formatting 2 smart, hash 1 r5, fibration 2 ext_1, sd 0 stat40, diritem 2
 * cde40, cipher 0, digest 0, compression 0 lzo1, cmode 4 conv, cluster 0
 * 64K, create 0 reg40 with -o create=reg40; ccreg40 = 4 by default).
 * Other objects store only the members that differ from the root's
 * (fsck.reiser4 calls a full copy "wrong plugin set", though libreiser4's
 * own object creation writes one).  The kernel rejects a member >= 14 and
 * a repeated member.
 */
enum r4_pset_member {
	R4_PSET_FILE = 0,	/* object plugin: reg40 0, dir40 1, sym40 2, spl40 3, ccreg40 4 */
	R4_PSET_DIR = 1,	/* dir plugin: hashed 0, dir32 1 */
	R4_PSET_PERM = 2,	/* "permission" */
	R4_PSET_FORMATTING = 3,	/* tail policy: never 0, always 1, smart 2 */
	R4_PSET_HASH = 4,	/* rupasov 0, r5 1, tea 2, fnv1 3, degenerate 4 */
	R4_PSET_FIBRATION = 5,	/* lexic 0, dot_o 1, ext_1 2, ext_3 3 */
	R4_PSET_SD = 6,		/* "statdata": stat40 0 */
	R4_PSET_DIRITEM = 7,	/* sde40 1, cde40 2 */
	R4_PSET_CIPHER = 8,	/* "crypto": none 0 */
	R4_PSET_DIGEST = 9,	/* sha256_32 0 */
	R4_PSET_COMPRESSION = 10, /* lzo1 0, gzip1 1, zstd1 2 */
	R4_PSET_CMODE = 11,	/* "compressMode": none 0, lattd 1, ultim 2, force 3, conv 4 */
	R4_PSET_CLUSTER = 12,	/* 64K 0, 32K 1, 16K 2, 8K 3, 4K 4 */
	R4_PSET_CREATE = 13,	/* file plugin for new regular files */
	R4_PSET_NR = 14,
};

/* One plugin (or heir) set, slots in disk order. */
struct r4_pset {
	unsigned ps_count;	/* 1..R4_PSET_NR when the extension is present */
	struct r4_pset_slot {
		uint16_t member;	/* enum r4_pset_member */
		uint16_t id;		/* plugin id within the member's type */
	} ps_slot[R4_PSET_NR];
};

/*
 * Native stat data (struct r4_stat in r4.h is the public, stat(2)-like view;
 * this is the on-disk one).  Only the fields of extensions present in sd_mask are
 * meaningful; the decoder zeroes the rest.
 *
 * sd_bytes_rdev is the UNIX extension's one u64, a union on disk: for
 * S_IFCHR/S_IFBLK it is the device number, for everything else "bytes"
 * (the kernel's inode_get_bytes).  Both the kernel and progs pick the
 * meaning from the LW mode.  fsck.reiser4 checks bytes (not for spl40)
 * against: reg40 = sum of tail item lengths + allocated extent blocks *
 * blocksize, dir40 = sum over its cde40 items of (item length - 2), i.e.
 * of r4_item_cde_unit_size; sym40 = 0.  The kernel stores rdev as its
 * internal dev_t (major << 20 | minor); libreiser4 stores whatever
 * number it is handed (glibc makedev: 0x440 for 4,64 in our fixture).
 */
struct r4_sd {
	uint64_t sd_mask;	/* bit e set: extension e (enum r4_sdext) present */
	unsigned sd_nmasks;	/* 16-bit masks on disk; 0 in encode = as few as needed */
	uint64_t sd_carried;	/* decode out: present extensions r4 keeps but gives no meaning */
	/* LW */
	uint16_t sd_mode;
	uint32_t sd_nlink;
	uint64_t sd_size;
	/* UNIX */
	uint32_t sd_uid, sd_gid;
	uint32_t sd_atime, sd_mtime, sd_ctime;	/* seconds */
	uint64_t sd_bytes_rdev;
	/* LT */
	uint32_t sd_atime_ns, sd_mtime_ns, sd_ctime_ns;
	/* SYMLINK: not NUL-terminated here; decoded, it borrows the body */
	const uint8_t *sd_symlink;
	size_t sd_symlink_len;	/* == sd_size */
	/* PSET, HSET */
	struct r4_pset sd_pset, sd_hset;
	/* FLAGS */
	uint32_t sd_flags;
	/* CAPS */
	uint32_t sd_cap_effective, sd_cap_permitted;
	/* CRYPTO */
	uint16_t sd_crypto_keysize;
	uint8_t sd_crypto_keyid[4];
};

static inline bool r4_sd_has(const struct r4_sd *st, unsigned ext)
{
	return (st->sd_mask >> ext) & 1;
}

/* Is sd_bytes_rdev a device number (mode is a char or block device)? */
static inline bool r4_sd_is_dev(uint16_t mode)
{
	return (mode & 0170000) == 0020000 || (mode & 0170000) == 0060000;
}

/* Bytes r4_item_stat_encode will write for st. */
size_t r4_item_stat_size(const struct r4_sd *st);

/*
 * Decode a stat40 body.  Returns 0 or -EUCLEAN: truncated mask or
 * extension, a bit without a known extension, more than 4 masks, a plugin
 * set with no slots, a bad or repeated member, a symlink without LW, not
 * NUL-terminated at sd_size or with a NUL inside, a crypto-stat whose
 * digest is unknown, or bytes left after the last extension.  *out is
 * written only on success; out->sd_symlink then borrows body.
 */
int r4_item_stat_decode(const uint8_t *body, size_t len, struct r4_sd *out);

/* Encode st into body, which has r4_item_stat_size(st) bytes. */
void r4_item_stat_encode(const struct r4_sd *st, uint8_t *body);
/* *out: what r4_item_stat_decode reads from what r4_item_stat_encode
 * writes of st, without the bytes (a symlink's target borrows st's). */
void r4_item_stat_reread(const struct r4_sd *st, struct r4_sd *out);
/* Do a and b hold the same stat data (every field decode writes)? */
bool r4_item_stat_same(const struct r4_sd *a, const struct r4_sd *b);

/* Plugin-set helpers: the slot of member m, or its id. */
bool r4_item_pset_get(const struct r4_pset *ps, unsigned member, uint16_t *id);
/* Set member m to id, keeping slots in member order (as progs and the kernel write). */
void r4_item_pset_set(struct r4_pset *ps, unsigned member, uint16_t id);
void r4_item_pset_clear(struct r4_pset *ps, unsigned member);

/* ================================ cde40 ================================= */

/*
 * Body: le16 count; count unit headers of 26 bytes (de_id: ordering,
 * objectid, offset of the entry key, 3 x le64; then le16 offset of the
 * unit body from the start of the item); then the unit bodies in the same
 * order, packed: obj_key_id (24 bytes: the first three elements of the
 * target's stat-data key as stored, so el0 = locality << 4 | 1, then
 * ordering, then band|objectid), followed, for long names only, by the
 * whole name and a NUL.
 *
 * A name is stored exactly when the entry key is "hashed": bit 56 of the
 * key's ordering (R4_CDE_HASHED).  Key building sets it for names longer
 * than 23 bytes; 23 bytes or fewer (exactly 23 included) are packed whole
 * into the key (7 + 8 + 8 bytes), so '..' and all short names cost 50
 * bytes; "." has ordering = objectid = offset = 0.
 *
 * The item key is the key of unit 0; every entry key shares its el0 (the
 * directory's oid << 4, type 0).  All entries of one item belong to one
 * directory and are in key order.
 */
enum {
	R4_CDE_COUNT = 0,	/* le16 */
	R4_CDE_HDR = 2,		/* first unit header */
	R4_CDE_UH_DEID = 0,	/* 24 bytes: el1, el2, el3 of the entry key */
	R4_CDE_UH_OFFSET = 24,	/* le16 body offset within the item */
	R4_CDE_UH_SIZE = 26,
	R4_CDE_OBJID_SIZE = 24,	/* el0, el1, el2 of the target's stat-data key */
	R4_CDE_INLINE_MAX = 23,	/* longest name that lives in the key alone */
};
#define R4_CDE_HASHED (UINT64_C(1) << 56)

struct r4_dirent {
	r4_key de_key;		/* full entry key: item key's el0 + de_id */
	r4_key de_sdkey;	/* target's stat-data key; el3 (offset) = 0 */
	const uint8_t *de_name;	/* long names only (stored, no NUL); NULL for short */
	size_t de_namelen;	/* 0 for short names: the caller unpacks them from de_key */
};

static inline bool r4_item_cde_hashed(const r4_key *entry_key)
{
	return (entry_key->el[1] & R4_CDE_HASHED) != 0;
}

/* Number of units; checks that the count and unit headers fit. */
int r4_item_cde_count(const uint8_t *body, size_t len, unsigned *n);

/*
 * Decode unit i (i < count).  ikey is the item key (for el0).  Checks the
 * unit's body offset (after the headers, increasing, inside the item, the
 * first right after the headers) and its exact size: 24 bytes, or for a
 * hashed key 24 + a non-empty name + NUL, ending where the next unit (or
 * the item) starts.  -EUCLEAN otherwise.  out->de_name borrows body.
 */
int r4_item_cde_decode(const r4_key *ikey, const uint8_t *body, size_t len, unsigned i,
		       struct r4_dirent *out);

/* The key of unit i < count alone (its header; nothing checked): what a
 * binary search over the units compares. */
void r4_item_cde_unit_key(const r4_key *ikey, const uint8_t *body, unsigned i, r4_key *out);
/* Decode every unit (n = count) into out[]: r4_item_cde_decode for each, plus key order. */
int r4_item_cde_decode_all(const r4_key *ikey, const uint8_t *body, size_t len,
			   struct r4_dirent *out, unsigned n);

/* What one unit costs inside an item: header 26 + obj_key_id 24 + (name + NUL if long). */
size_t r4_item_cde_unit_size(const struct r4_dirent *e);

/* Encoded size of an item holding e[0..n): 2 + the unit sizes. */
size_t r4_item_cde_size(const struct r4_dirent *e, size_t n);

/* Encode e[0..n) (n >= 1, all of one directory, in key order) into body. */
void r4_item_cde_encode(const struct r4_dirent *e, size_t n, uint8_t *body);

/* =============================== extent40 =============================== */

/*
 * Body: units of (le64 start, le64 width) in blocks; start 0 is a hole,
 * 1 is unallocated (never on disk after a commit), otherwise blocks
 * start .. start + width - 1.  The item key's offset is the file offset
 * of the first block (a multiple of the block size).
 */
enum { R4_EXTENT_START = 0, R4_EXTENT_WIDTH = 8, R4_EXTENT_UNIT = 16 };
#define R4_EXTENT_HOLE 0
#define R4_EXTENT_UNALLOC 1

struct r4_extent {
	uint64_t ex_start;
	uint64_t ex_width;
};

/* Units in an extent item: len must be a non-zero multiple of 16. */
int r4_item_extent_count(const uint8_t *body, size_t len, size_t *n);

/* Decode all n units (n from r4_item_extent_count); rejects width 0 and overflows. */
int r4_item_extent_decode(const uint8_t *body, size_t len, struct r4_extent *out, size_t n);

static inline size_t r4_item_extent_size(size_t n)
{
	return n * R4_EXTENT_UNIT;
}

void r4_item_extent_encode(const struct r4_extent *e, size_t n, uint8_t *body);

/* Blocks covered by e[0..n). */
uint64_t r4_item_extent_width(const struct r4_extent *e, size_t n);

/*
 * The unit covering block index `blk` (counted from the item's first
 * block) and the index within that unit; false if blk is past the end.
 */
bool r4_item_extent_find(const struct r4_extent *e, size_t n, uint64_t blk, size_t *unit,
			 uint64_t *within);

/* =============================== nodeptr40 ============================== */

/* Body: le64 child block; the item key is the child's left delimiting key. */
#define R4_NODEPTR_SIZE 8

/* -EUCLEAN unless len == 8 and the block is not 0. */
int r4_item_nodeptr_decode(const uint8_t *body, size_t len, uint64_t *blk);
void r4_item_nodeptr_encode(uint64_t blk, uint8_t *body);

/* ================================ plain40 =============================== */

/*
 * Body: raw file bytes; the item key's offset is the file offset of the
 * first.  Decoding only refuses an empty tail; data borrows body.
 */
int r4_item_plain_decode(const uint8_t *body, size_t len, const uint8_t **data, size_t *n);

/* ================================ ctail40 =============================== */

/*
 * Body: u8 cluster shift, then units of one byte each: a piece of a disk
 * cluster, the stored form of one logical cluster of a ccreg40 file
 * (kernel plugin/item/ctail.h ctail_item_format; progs
 * plugin/item/ctail40).  The item key's offset is the file offset of the
 * cluster plus the piece's position in the disk cluster, so the items of
 * one disk cluster have contiguous keys inside [cluster start, cluster
 * start + cluster size).  A shift of 0xff marks an "unprepped" cluster
 * (the kernel's placeholder while a cluster waits for flush: one item of
 * one unit), which must never be read and fsck.reiser4 calls fatal.
 */
enum { R4_CTAIL_SHIFT = 0, R4_CTAIL_DATA = 1 };
#define R4_CTAIL_UNPREPPED 0xff

/*
 * Decode a ctail body: its shift and its units (data borrows body).
 * -EUCLEAN for a body with no unit.  Whether the shift fits the file is
 * the file plugin's business.
 */
int r4_item_ctail_decode(const uint8_t *body, size_t len, unsigned *shift, const uint8_t **data,
			 size_t *n);
/* Encode shift and n bytes of data into body (n + 1 bytes). */
void r4_item_ctail_encode(unsigned shift, const uint8_t *data, size_t n, uint8_t *body);

/* ================================ bbox40 ================================ */

/*
 * Body: opaque to the tree; the only user is the safe-link: the 32-byte
 * stat-data key of the object, then for a truncate link its le64 target
 * size (32 or 40 bytes).  The item key is (locality = root oid + 1 = 43,
 * type 0, ordering 0, objectid = object's oid, offset = link type).
 */
enum { R4_SAFELINK_UNLINK = 0, R4_SAFELINK_TRUNCATE = 1 };
#define R4_SAFELINK_SIZE 32
#define R4_SAFELINK_TRUNC_SIZE 40
#define R4_SAFELINK_LOCALITY 43

struct r4_safelink {
	r4_key sl_sdkey;
	bool sl_has_size;	/* 40-byte form (truncate) */
	uint64_t sl_size;
};

int r4_item_bbox_decode(const uint8_t *body, size_t len, struct r4_safelink *out);

static inline size_t r4_item_bbox_size(const struct r4_safelink *sl)
{
	return sl->sl_has_size ? R4_SAFELINK_TRUNC_SIZE : R4_SAFELINK_SIZE;
}

void r4_item_bbox_encode(const struct r4_safelink *sl, uint8_t *body);

#endif
