/*
 * format.h - format40's fixed blocks and geometry: master super block,
 * format super block, journal header and footer, status block, transaction
 * heads and wander records, bitmap placement, and the backup copies that
 * reiser4progs keeps (ENGINE.md 1.2-1.8, 4.5-4.8).
 *
 * Sources: kernel fs/reiser4 dformat.h, disk_format40.h, wander.h,
 * status_flags.h, plugin/space/bitmap.c; reiser4progs 1.2.2
 * libreiser4/master.c, backup.c, filesystem.c (reiser4_fs_backup), pset.c,
 * status.c, plugin/format/format40/format40.[ch],
 * plugin/journal/journal40/journal40.h, plugin/alloc/alloc40/alloc40.c.
 *
 * Each structure has an offset enum (checked by _Static_assert) next to
 * its decoded native struct; only format.c touches the offsets.  Decoders
 * check length, magic and field ranges and report through R4_CORRUPT
 * naming the block; encoders write only the bytes of their structure into
 * the caller's block buffer and leave the rest of it alone, so a caller
 * that re-encodes a block it read keeps whatever else the block held.
 * Reserved bytes inside a structure are kept in the decoded struct as
 * read and written back unchanged (zero when the struct was zeroed).
 * Magic strings are always written canonically (NUL padded).
 *
 * Not here: bitmap contents (alloc.c), nodes (node.c), the journal's logic
 * (jnl.c).  No r4 extension to format40 exists yet.
 */
#ifndef R4_FORMAT_H
#define R4_FORMAT_H

#include "r4_int.h"

/* ---- fixed layout (ENGINE.md 1.2): block numbers for block size bs ---- */

#define R4_MSB_OFFSET 65536u		/* byte offset of the master super block */
#define R4_MIN_BLOCKSIZE 512u
#define R4_MAX_BLOCKSIZE 65536u
#define R4_FORMAT_BLOCKSIZE 4096u	/* the one size the kernel mounts on x86 (= PAGE_SIZE) */
#define R4_MSB_BLOCK(bs) (R4_MSB_OFFSET / (bs))
#define R4_FSB_BLOCK(bs) (R4_MSB_OFFSET / (bs) + 1)
#define R4_BITMAP0_BLOCK(bs) (R4_MSB_OFFSET / (bs) + 2)
#define R4_JHEADER_BLOCK(bs) (R4_MSB_OFFSET / (bs) + 3)
#define R4_JFOOTER_BLOCK(bs) (R4_MSB_OFFSET / (bs) + 4)
#define R4_STATUS_BLOCK(bs) (R4_MSB_OFFSET / (bs) + 5)
#define R4_BACKUP_START(bs) (R4_MSB_OFFSET / (bs) + 6)	/* first block after the fixed ones */

/*
 * Master super block, byte 65536 (kernel dformat.h reiser4_master_sb,
 * progs master.c):
 *   off size field         meaning
 *     0   16 magic         "ReIsEr4", NUL padded (only 8 bytes are compared)
 *    16    2 disk_pid      disk-format plugin, 0 = format40
 *    18    2 blksize       block size in bytes
 *    20   16 uuid          volume UUID
 *    36   16 label         volume label, NUL padded, not terminated when 16 long
 *    52    8 diskmap       block of the optional disk map, 0 = none (kernel only;
 *                          reiser4progs' copy of the struct ends at 52)
 */
enum {
	R4_MSB_MAGIC = 0,
	R4_MSB_DISK_PID = 16,
	R4_MSB_BLKSIZE = 18,
	R4_MSB_UUID = 20,
	R4_MSB_LABEL = 36,
	R4_MSB_DISKMAP = 52,
	R4_MSB_SIZE = 60,
	R4_MSB_PROGS_SIZE = R4_MSB_DISKMAP,	/* what a backup block copies */
};
_Static_assert(R4_MSB_DISK_PID + 2 == R4_MSB_BLKSIZE, "disk_pid is le16");
_Static_assert(R4_MSB_BLKSIZE + 2 == R4_MSB_UUID, "blksize is le16");
_Static_assert(R4_MSB_UUID + 16 == R4_MSB_LABEL, "uuid runs into label");
_Static_assert(R4_MSB_LABEL + 16 == R4_MSB_DISKMAP, "label runs into diskmap");
_Static_assert(R4_MSB_DISKMAP + 8 == R4_MSB_SIZE, "diskmap must be the last field");

struct r4_msb {
	uint16_t msb_disk_pid;
	uint32_t msb_blksize;
	uint8_t msb_uuid[16];
	char msb_label[16];		/* not NUL terminated when all 16 bytes are used */
	uint64_t msb_diskmap;
};

/*
 * Format40 super block, block 17 (kernel disk_format40.h format40_disk_super_block,
 * progs format40.h format40_super_t), 512 bytes:
 *   off size field         meaning
 *     0    8 block_count   blocks in the volume
 *     8    8 free_blocks   free blocks when the SB was last logged (the journal
 *                          footer / tx heads carry the live value, ENGINE.md 4.6)
 *    16    8 root_block    tree root
 *    24    8 oid           next object id to hand out
 *    32    8 file_count    objects in use
 *    40    8 flushes       unused, 0
 *    48    4 mkfs_id       random at mkfs, copied into node headers
 *    52   16 magic         "ReIsEr40FoRmAt", NUL padded
 *    68    2 tree_height   levels, >= 1
 *    70    2 policy        legacy tail policy id (2 = smart)
 *    72    8 flags         bit 0 = large keys
 *    80    4 version       4.0.N in the low bits; bit 31 = backups need updating
 *    84    4 node_pid      node plugin of the volume (0 node40, 1 node41)
 *    88  424 reserved      zero
 */
enum {
	R4_FSB_BLOCK_COUNT = 0,
	R4_FSB_FREE = 8,
	R4_FSB_ROOT = 16,
	R4_FSB_OID = 24,
	R4_FSB_FILES = 32,
	R4_FSB_FLUSHES = 40,
	R4_FSB_MKFS_ID = 48,
	R4_FSB_MAGIC = 52,
	R4_FSB_HEIGHT = 68,
	R4_FSB_POLICY = 70,
	R4_FSB_FLAGS = 72,
	R4_FSB_VERSION = 80,
	R4_FSB_NODE_PID = 84,
	R4_FSB_RESERVED = 88,
	R4_FSB_RESERVED_LEN = 424,
	R4_FSB_SIZE = 512,
};
_Static_assert(R4_FSB_MKFS_ID + 4 == R4_FSB_MAGIC, "mkfs_id is le32");
_Static_assert(R4_FSB_MAGIC + 16 == R4_FSB_HEIGHT, "magic runs into height");
_Static_assert(R4_FSB_FLAGS + 8 == R4_FSB_VERSION, "flags is le64");
_Static_assert(R4_FSB_NODE_PID + 4 == R4_FSB_RESERVED, "node_pid is le32");
_Static_assert(R4_FSB_RESERVED + R4_FSB_RESERVED_LEN == R4_FSB_SIZE, "super block is 512 bytes");

#define R4_FORMAT_VERSION 2u			/* format release 4.0.2 (reiser4progs 1.2.x) */
#define R4_FSB_UPDATE_BACKUP (1u << 31)		/* in sb_version: fsck must rewrite backups */
#define R4_FSB_LARGE_KEYS 1u			/* in sb_flags */
#define R4_FORMAT_MAX_HEIGHT 8u			/* kernel REISER4_MAX_ZTREE_HEIGHT */

struct r4_fsb {
	uint64_t sb_block_count, sb_free_blocks, sb_root_block, sb_oid, sb_file_count;
	uint64_t sb_flushes;
	uint32_t sb_mkfs_id;
	uint16_t sb_tree_height, sb_policy;
	uint64_t sb_flags;
	uint32_t sb_version;			/* as on disk, bit 31 included */
	uint32_t sb_node_pid;
	uint8_t sb_reserved[R4_FSB_RESERVED_LEN];	/* as read */
};

/*
 * Journal header, block 19 (kernel wander.h journal_header, progs
 * journal40.h); the rest of the block is zero.  No magic, no checksum.
 *   off size field             meaning
 *     0    8 last_committed    tx head of the newest committed transaction, 0 = none
 */
enum {
	R4_JH_LAST_COMMITTED = 0,
	R4_JH_SIZE = 8,
};
_Static_assert(R4_JH_LAST_COMMITTED + 8 == R4_JH_SIZE, "header is one le64");

struct r4_jh {
	uint64_t jh_last_committed;
};

/*
 * Journal footer, block 20 (kernel wander.h journal_footer); no magic.
 *   off size field             meaning
 *     0    8 last_flushed      tx head of the newest transaction fully played, 0 = none
 *     8    8 free_blocks       committed free-block count
 *    16    8 nr_files          committed number of objects ("used oids")
 *    24    8 next_oid          committed next object id
 */
enum {
	R4_JF_LAST_FLUSHED = 0,
	R4_JF_FREE_BLOCKS = 8,
	R4_JF_NR_FILES = 16,
	R4_JF_NEXT_OID = 24,
	R4_JF_SIZE = 32,
};
_Static_assert(R4_JF_NEXT_OID + 8 == R4_JF_SIZE, "footer is four le64");

struct r4_jf {
	uint64_t jf_last_flushed, jf_free_blocks, jf_nr_files, jf_next_oid;
};

/*
 * Transaction head, one block (kernel wander.h tx_header, progs
 * journal40_tx_header_t); zero after 64.
 *   off size field         meaning
 *     0    8 magic         "TxMagic4" (no NUL)
 *     8    8 id            transaction id, never filled in by the kernel (0)
 *    16    4 total         wander records of the transaction, this head included
 *    20    4 padding       0
 *    24    8 prev_tx       tx head of the previous committed transaction, 0 = none
 *    32    8 next_block    first wander record (the head itself when total = 1)
 *    40    8 free_blocks   committed counters after this transaction
 *    48    8 nr_files
 *    56    8 next_oid
 */
enum {
	R4_TH_MAGIC = 0,
	R4_TH_ID = 8,
	R4_TH_TOTAL = 16,
	R4_TH_PADDING = 20,
	R4_TH_PREV_TX = 24,
	R4_TH_NEXT_BLOCK = 32,
	R4_TH_FREE_BLOCKS = 40,
	R4_TH_NR_FILES = 48,
	R4_TH_NEXT_OID = 56,
	R4_TH_SIZE = 64,
};
_Static_assert(R4_TH_TOTAL + 4 == R4_TH_PADDING, "total is le32");
_Static_assert(R4_TH_PADDING + 4 == R4_TH_PREV_TX, "padding is le32");
_Static_assert(R4_TH_NEXT_OID + 8 == R4_TH_SIZE, "tx head is 64 bytes");

struct r4_th {
	uint64_t th_id;
	uint32_t th_total, th_padding;
	uint64_t th_prev_tx, th_next_block;
	uint64_t th_free_blocks, th_nr_files, th_next_oid;
};

/*
 * Wander record, one block (kernel wander.h wander_record_header and
 * wander_entry):
 *   off size field         meaning
 *     0    8 magic         "LogMagc4" (no NUL)
 *     8    8 id            unused, 0
 *    16    4 total         records of the transaction, tx head included
 *    20    4 serial        index of this record, 1 .. total-1
 *    24    8 next_block    next record; the last one points back to the tx head
 *    32  16n entries       (original le64, wandered le64); unused entries are
 *                          zero and only follow used ones
 * Entries per block: (bs - 32) / 16, 254 at 4 KiB.
 */
enum {
	R4_WR_MAGIC = 0,
	R4_WR_ID = 8,
	R4_WR_TOTAL = 16,
	R4_WR_SERIAL = 20,
	R4_WR_NEXT_BLOCK = 24,
	R4_WR_ENTRIES = 32,
	R4_WR_ENTRY_SIZE = 16,		/* original le64 at +0, wandered le64 at +8 */
};
_Static_assert(R4_WR_SERIAL + 4 == R4_WR_NEXT_BLOCK, "serial is le32");
_Static_assert(R4_WR_NEXT_BLOCK + 8 == R4_WR_ENTRIES, "entries follow next_block");

struct r4_wr {
	uint64_t wr_id;
	uint32_t wr_total, wr_serial;
	uint64_t wr_next_block;
	uint32_t wr_capacity;		/* entries the block can hold */
	uint32_t wr_nr_entries;		/* used entries (they come first) */
};

static inline uint32_t r4_wr_capacity(uint32_t bs)
{
	return (bs - R4_WR_ENTRIES) / R4_WR_ENTRY_SIZE;
}

/*
 * Status block, block 21 (kernel status_flags.h reiser4_status, progs status.c):
 *   off size field         meaning
 *     0   16 magic         "ReiSeR4StATusBl", NUL padded; all zero = old volume
 *    16    8 status        R4_ST_OK or a mask of the R4_ST_ flags below
 *    24    8 extended      extra detail (e.g. sector of an I/O error)
 *    32   80 stack         ten le64 return addresses (debug aid)
 *   112  256 message       text of the last error, NUL padded
 */
enum {
	R4_ST_MAGIC = 0,
	R4_ST_STATUS = 16,
	R4_ST_EXTENDED = 24,
	R4_ST_STACK = 32,
	R4_ST_STACK_DEPTH = 10,
	R4_ST_MESSAGE = 112,
	R4_ST_MESSAGE_LEN = 256,
	R4_ST_SIZE = 368,
};
_Static_assert(R4_ST_STACK + 8 * R4_ST_STACK_DEPTH == R4_ST_MESSAGE, "stack runs into message");
_Static_assert(R4_ST_MESSAGE + R4_ST_MESSAGE_LEN == R4_ST_SIZE, "message is the last field");

enum {				/* st_status values (status_flags.h) */
	R4_ST_OK = 0,
	R4_ST_CORRUPTED = 0x1,
	R4_ST_DAMAGED = 0x2,
	R4_ST_DESTROYED = 0x4,
	R4_ST_IOERROR = 0x8,
};

struct r4_status {
	bool st_present;		/* false: no magic (old volume), all fields 0 */
	uint64_t st_status, st_extended;
	uint64_t st_stack[R4_ST_STACK_DEPTH];
	char st_message[R4_ST_MESSAGE_LEN + 1];	/* NUL terminated */
};

/*
 * Backup block (reiser4progs only: libreiser4 reiser4_fs_backup; ENGINE.md
 * 1.8).  Every copy is identical; the rest of the block is zero:
 *   off size field         meaning
 *     0    1 version       backup version, 0
 *     1   52 master        master super block bytes 0..51 (no diskmap)
 *    53    8 reserved      0
 *    61   16 fmt magic     "ReIsEr40FoRmAt"
 *    77    8 block_count
 *    85    4 mkfs_id
 *    89    2 policy
 *    91    8 flags
 *    99    4 version       sb_version without bit 31
 *   103    8 reserved      0
 *   111    4 pset magic    "PsEt" (no NUL), only when the format version > 0
 *   115   56 pset          the root directory's plugin set: 14 le32 plugin ids,
 *                          indexed by progs' enum reiser4_pset_id (obj, dir,
 *                          perm, policy, hash, fibre, stat, diritem, crypto,
 *                          digest, compress, cmode, cluster, create)
 * mkfs.reiser4 1.2.2 with its default profile and -o create=reg40 writes
 * the ids {1, 0, 0, 2, 1, 2, 0, 2, 0, 0, 0, 4, 0, 0}: obj 1 dir40, policy
 * 2 smart, hash 1 r5, fibre 2 ext_1, diritem 2 cde40, cmode 4, create 0 reg40;
 * image bytes 0x73..0xaa of the backup block.
 */
enum {
	R4_BK_VERSION = 0,
	R4_BK_MASTER = 1,
	R4_BK_MASTER_PAD = R4_BK_MASTER + R4_MSB_PROGS_SIZE,
	R4_BK_FORMAT = R4_BK_MASTER_PAD + 8,
	R4_BK_FMT_MAGIC = R4_BK_FORMAT,
	R4_BK_FMT_COUNT = R4_BK_FORMAT + 16,
	R4_BK_FMT_MKFS_ID = R4_BK_FORMAT + 24,
	R4_BK_FMT_POLICY = R4_BK_FORMAT + 28,
	R4_BK_FMT_FLAGS = R4_BK_FORMAT + 30,
	R4_BK_FMT_VERSION = R4_BK_FORMAT + 38,
	R4_BK_FMT_RESERVED = R4_BK_FORMAT + 42,
	R4_BK_PSET = R4_BK_FORMAT + 50,	/* "PsEt" */
	R4_BK_PSET_IDS = R4_BK_PSET + 4,
	R4_BK_PSET_MEMBERS = 14,
	R4_BK_SIZE = R4_BK_PSET_IDS + 4 * R4_BK_PSET_MEMBERS,
};
_Static_assert(R4_BK_FORMAT == 61, "format part of a backup starts at byte 61");
_Static_assert(R4_BK_PSET == 111, "pset part of a backup starts at byte 111");
_Static_assert(R4_BK_SIZE == 171, "a backup is 171 bytes");

/* ---- codecs: 0 or -EUCLEAN through R4_CORRUPT (lg may be NULL) ---- */

/* buf holds len >= R4_MSB_SIZE bytes read at R4_MSB_OFFSET.  Checks magic,
 * disk_pid 0 and a power-of-two block size in 512..32768 (le16 field).  The engine
 * itself supports R4_FORMAT_BLOCKSIZE only: callers check that. */
int r4_msb_decode(const struct r4_logger *lg, const uint8_t *buf, size_t len, struct r4_msb *out);
void r4_msb_encode(const struct r4_msb *m, uint8_t *buf);

/* buf is block R4_FSB_BLOCK(bs).  Checks magic, block_count beyond the fixed
 * blocks, free <= count, root inside the volume past the fixed blocks,
 * height 1..R4_FORMAT_MAX_HEIGHT. */
int r4_fsb_decode(const struct r4_logger *lg, const uint8_t *buf, uint32_t bs, struct r4_fsb *out);
void r4_fsb_encode(const struct r4_fsb *sb, uint8_t *buf);

/* Header and footer, blocks of a volume of `blocks` blocks: tx head numbers
 * must be 0 or in [R4_BACKUP_START, blocks), free_blocks <= blocks. */
int r4_jh_decode(const struct r4_logger *lg, const uint8_t *buf, uint32_t bs, uint64_t blocks,
		 struct r4_jh *out);
void r4_jh_encode(const struct r4_jh *jh, uint8_t *buf);
int r4_jf_decode(const struct r4_logger *lg, const uint8_t *buf, uint32_t bs, uint64_t blocks,
		 struct r4_jf *out);
void r4_jf_encode(const struct r4_jf *jf, uint8_t *buf);

/* A tx head read from block blk: magic, total >= 1, prev_tx and next_block
 * 0 or in range, free_blocks <= blocks. */
int r4_th_decode(const struct r4_logger *lg, uint64_t blk, const uint8_t *buf, uint32_t bs,
		 uint64_t blocks, struct r4_th *out);
/* Writes bytes 0..63 and zeroes the rest of the bs-byte block. */
void r4_th_encode(const struct r4_th *th, uint8_t *buf, uint32_t bs);

/* A wander record read from block blk: magic, 1 <= serial < total,
 * next_block in range, each used entry's blocks in range and no used entry
 * after an unused one.  Entries are read with r4_wr_entry. */
int r4_wr_decode(const struct r4_logger *lg, uint64_t blk, const uint8_t *buf, uint32_t bs,
		 uint64_t blocks, struct r4_wr *out);
/* Writes the 32-byte head (wr_capacity and wr_nr_entries are ignored);
 * entries are set with r4_wr_entry_set, unused ones must be zeroed by the
 * caller (r4_wr_init does both: head plus zeroed entries). */
void r4_wr_encode(const struct r4_wr *wr, uint8_t *buf);
void r4_wr_init(const struct r4_wr *wr, uint8_t *buf, uint32_t bs);
void r4_wr_entry(const uint8_t *buf, uint32_t i, uint64_t *original, uint64_t *wandered);
void r4_wr_entry_set(uint8_t *buf, uint32_t i, uint64_t original, uint64_t wandered);

/* buf is block R4_STATUS_BLOCK(bs).  An all-zero magic decodes as
 * st_present = false (an old volume); any other wrong magic is -EUCLEAN. */
int r4_status_decode(const struct r4_logger *lg, const uint8_t *buf, uint32_t bs,
		     struct r4_status *out);
/* Writes the magic and all fields (bytes 0..367). */
void r4_status_encode(const struct r4_status *st, uint8_t *buf);

/* ---- geometry (ENGINE.md 1.5) ---- */

/* Blocks one bitmap block describes: (bs - 4) * 8, 32736 at 4 KiB. */
static inline uint64_t r4_format_bitmap_bits(uint32_t bs)
{
	return (uint64_t)(bs - 4) * 8;
}

/* Where bitmap block k lives: R4_BITMAP0_BLOCK for zone 0, else the first
 * block of its own zone. */
static inline uint64_t r4_format_bitmap_block(uint32_t bs, uint64_t k)
{
	return k == 0 ? R4_BITMAP0_BLOCK(bs) : k * r4_format_bitmap_bits(bs);
}

/* Bitmap blocks of a volume of `blocks` blocks. */
static inline uint64_t r4_format_bitmap_count(uint32_t bs, uint64_t blocks)
{
	return (blocks + r4_format_bitmap_bits(bs) - 1) / r4_format_bitmap_bits(bs);
}

/* The most backup blocks any volume has (the candidates grow by 3/2). */
#define R4_BACKUP_MAX 128

/*
 * Backup block numbers of a volume of `blocks` blocks, ascending, as
 * reiser4progs places them (backup.c): candidates start at 2 and are
 * multiplied by 3/2 (integer, blk * 3 >> 1); each is moved to the block
 * right after the first block of its bitmap zone, but never below
 * R4_BACKUP_START; repeats are skipped; it stops at the first candidate or
 * copy past the end, and a zone of a single block holds none.  At 4 KiB:
 * 22 only below 40965 blocks; 1 GiB: 22 32737 65473 130945 196417; 3 GiB
 * adds 294625 458305 687457.  Fills out[0..] (R4_BACKUP_MAX is enough) and
 * returns the count.
 */
size_t r4_format_backup_blocks(uint32_t bs, uint64_t blocks, uint64_t out[R4_BACKUP_MAX]);
/* The same, calling fn(ctx, blk) for each; stops at and returns fn's first nonzero. */
int r4_backup_layout(uint32_t bs, uint64_t blocks, int (*fn)(void *ctx, uint64_t blk),
		     void *ctx);

/*
 * The content of every backup block: zeroes all bs bytes of buf, then
 * writes the layout above from m and sb.  pset points at the root's
 * plugin-set part (what follows "PsEt": R4_BK_PSET_MEMBERS le32 ids, 56
 * bytes, or fewer) or is NULL for "PsEt" alone (progs without a tree);
 * neither is written when sb's version is 0.  pset_len is clipped to 56.
 */
void r4_format_backup_encode(const struct r4_msb *m, const struct r4_fsb *sb, const uint8_t *pset,
			     size_t pset_len, uint8_t *buf, uint32_t bs);
/* The same with the 14 plugin ids as numbers (pset14 may be NULL). */
void r4_backup_encode(const struct r4_msb *m, const struct r4_fsb *sb, const uint32_t *pset14,
		      uint8_t *buf, uint32_t bs);

/*
 * The blocks mkfs.reiser4 marks used before it builds the tree, ascending:
 * 0 .. R4_BACKUP_START-1 as one run (reserved area, super blocks, bitmap 0,
 * journal header and footer, status), then the bitmap block of every zone
 * k >= 1 and every backup block, each as a run of 1.  The tree itself (a
 * fresh mkfs.reiser4 image: root twig at 23, leaf at 24, so 25 blocks used
 * in zone 0) is allocated afterwards.  Calls fn(ctx, start, count); stops
 * at and returns fn's first nonzero.
 */
int r4_format_fresh_used(uint32_t bs, uint64_t blocks,
			 int (*fn)(void *ctx, uint64_t start, uint64_t count), void *ctx);

#endif
