/*
 * format.c - codecs of format40's fixed blocks, journal control blocks and
 * records, and reiser4progs' backup blocks (layouts in format.h).
 *
 * Every decoder copies fields out through r4_le*_get and checks them
 * against the volume's geometry before anything else sees them: an image
 * is untrusted input, so a bad value becomes R4_CORRUPT naming the block,
 * never an assert.  Encoders write canonical magics and the fields of
 * their struct, nothing else of the caller's buffer (r4_th_encode and the
 * backup encoder zero the whole block, as the on-disk format wants).
 *
 * Backup placement follows reiser4progs 1.2.2 (libreiser4/backup.c over
 * alloc40's zone regions): candidate c runs 3, 4, 6, 9, 13, ... (c * 3 / 2
 * from 2); its zone [z, z + n) gives the copy z + 1 (none when n = 1),
 * raised to R4_BACKUP_START; copies at or below the previous one are
 * skipped and the walk ends at the first candidate or copy past the end.
 * The result is checked byte for byte against mkfs.reiser4 images by
 * tests/unit/test_format.c.
 */
#include "format.h"

static const char msb_magic[] = "ReIsEr4";
static const char fsb_magic[] = "ReIsEr40FoRmAt";
static const char st_magic[] = "ReiSeR4StATusBl";
static const char th_magic[8] = {'T', 'x', 'M', 'a', 'g', 'i', 'c', '4'};
static const char wr_magic[8] = {'L', 'o', 'g', 'M', 'a', 'g', 'c', '4'};
static const char pset_magic[4] = {'P', 's', 'E', 't'};

/* A 16-byte magic field: the string, NUL padded. */
static void put_magic16(uint8_t *p, const char *s)
{
	memset(p, 0, 16);
	memcpy(p, s, strlen(s));
}

static bool blocksize_ok(uint32_t bs)
{
	return bs >= R4_MIN_BLOCKSIZE && bs <= R4_MAX_BLOCKSIZE && !(bs & (bs - 1));
}

/* A block number that may name a journal block: 0 (none) or past the fixed blocks. */
static bool jblock_ok(uint64_t b, uint32_t bs, uint64_t blocks)
{
	return b == 0 || (b >= R4_BACKUP_START(bs) && b < blocks);
}

/* ---- master super block ---- */

int r4_msb_decode(const struct r4_logger *lg, const uint8_t *buf, size_t len, struct r4_msb *out)
{
	uint64_t blk = R4_MSB_BLOCK(R4_FORMAT_BLOCKSIZE);
	struct r4_msb m;

	if (len < R4_MSB_SIZE)
		return R4_CORRUPT(lg, blk, "master super block cut short at %zu bytes", len);
	/* the kernel compares the string with its NUL: 8 bytes */
	if (memcmp(buf + R4_MSB_MAGIC, msb_magic, sizeof(msb_magic)))
		return -EMEDIUMTYPE;	/* no Reiser4 volume at all: r4_strerror says so */
	m.msb_disk_pid = r4_le16_get(buf + R4_MSB_DISK_PID);
	m.msb_blksize = r4_le16_get(buf + R4_MSB_BLKSIZE);
	memcpy(m.msb_uuid, buf + R4_MSB_UUID, 16);
	memcpy(m.msb_label, buf + R4_MSB_LABEL, 16);
	m.msb_diskmap = r4_le64_get(buf + R4_MSB_DISKMAP);
	if (!blocksize_ok(m.msb_blksize))
		return R4_CORRUPT(lg, blk, "block size %u is not a power of two in 512..32768",
				  m.msb_blksize);
	if (m.msb_disk_pid != 0)
		return R4_CORRUPT(lg, blk, "disk format plugin %u is not format40", m.msb_disk_pid);
	*out = m;
	return 0;
}

void r4_msb_encode(const struct r4_msb *m, uint8_t *buf)
{
	put_magic16(buf + R4_MSB_MAGIC, msb_magic);
	r4_le16_put(buf + R4_MSB_DISK_PID, m->msb_disk_pid);
	r4_le16_put(buf + R4_MSB_BLKSIZE, (uint16_t)m->msb_blksize);
	memcpy(buf + R4_MSB_UUID, m->msb_uuid, 16);
	memcpy(buf + R4_MSB_LABEL, m->msb_label, 16);
	r4_le64_put(buf + R4_MSB_DISKMAP, m->msb_diskmap);
}

/* ---- format40 super block ---- */

int r4_fsb_decode(const struct r4_logger *lg, const uint8_t *buf, uint32_t bs, struct r4_fsb *out)
{
	uint64_t blk = R4_FSB_BLOCK(bs);
	struct r4_fsb sb;

	if (memcmp(buf + R4_FSB_MAGIC, fsb_magic, sizeof(fsb_magic)))
		return R4_CORRUPT(lg, blk, "no format40 super block (wrong magic)");
	sb.sb_block_count = r4_le64_get(buf + R4_FSB_BLOCK_COUNT);
	sb.sb_free_blocks = r4_le64_get(buf + R4_FSB_FREE);
	sb.sb_root_block = r4_le64_get(buf + R4_FSB_ROOT);
	sb.sb_oid = r4_le64_get(buf + R4_FSB_OID);
	sb.sb_file_count = r4_le64_get(buf + R4_FSB_FILES);
	sb.sb_flushes = r4_le64_get(buf + R4_FSB_FLUSHES);
	sb.sb_mkfs_id = r4_le32_get(buf + R4_FSB_MKFS_ID);
	sb.sb_tree_height = r4_le16_get(buf + R4_FSB_HEIGHT);
	sb.sb_policy = r4_le16_get(buf + R4_FSB_POLICY);
	sb.sb_flags = r4_le64_get(buf + R4_FSB_FLAGS);
	sb.sb_version = r4_le32_get(buf + R4_FSB_VERSION);
	sb.sb_node_pid = r4_le32_get(buf + R4_FSB_NODE_PID);
	memcpy(sb.sb_reserved, buf + R4_FSB_RESERVED, R4_FSB_RESERVED_LEN);
	if (sb.sb_block_count <= R4_BACKUP_START(bs) || sb.sb_block_count > (UINT64_C(1) << 62))
		return R4_CORRUPT(lg, blk, "block count %llu out of range",
				  (unsigned long long)sb.sb_block_count);
	if (sb.sb_free_blocks > sb.sb_block_count)
		return R4_CORRUPT(lg, blk, "%llu free blocks of %llu",
				  (unsigned long long)sb.sb_free_blocks,
				  (unsigned long long)sb.sb_block_count);
	if (sb.sb_root_block < R4_BACKUP_START(bs) || sb.sb_root_block >= sb.sb_block_count)
		return R4_CORRUPT(lg, blk, "root block %llu outside the volume",
				  (unsigned long long)sb.sb_root_block);
	if (sb.sb_tree_height < 1 || sb.sb_tree_height > R4_FORMAT_MAX_HEIGHT)
		return R4_CORRUPT(lg, blk, "tree height %u", sb.sb_tree_height);
	*out = sb;
	return 0;
}

void r4_fsb_encode(const struct r4_fsb *sb, uint8_t *buf)
{
	r4_le64_put(buf + R4_FSB_BLOCK_COUNT, sb->sb_block_count);
	r4_le64_put(buf + R4_FSB_FREE, sb->sb_free_blocks);
	r4_le64_put(buf + R4_FSB_ROOT, sb->sb_root_block);
	r4_le64_put(buf + R4_FSB_OID, sb->sb_oid);
	r4_le64_put(buf + R4_FSB_FILES, sb->sb_file_count);
	r4_le64_put(buf + R4_FSB_FLUSHES, sb->sb_flushes);
	r4_le32_put(buf + R4_FSB_MKFS_ID, sb->sb_mkfs_id);
	put_magic16(buf + R4_FSB_MAGIC, fsb_magic);
	r4_le16_put(buf + R4_FSB_HEIGHT, sb->sb_tree_height);
	r4_le16_put(buf + R4_FSB_POLICY, sb->sb_policy);
	r4_le64_put(buf + R4_FSB_FLAGS, sb->sb_flags);
	r4_le32_put(buf + R4_FSB_VERSION, sb->sb_version);
	r4_le32_put(buf + R4_FSB_NODE_PID, sb->sb_node_pid);
	memcpy(buf + R4_FSB_RESERVED, sb->sb_reserved, R4_FSB_RESERVED_LEN);
}

/* ---- journal header and footer ---- */

int r4_jh_decode(const struct r4_logger *lg, const uint8_t *buf, uint32_t bs, uint64_t blocks,
		 struct r4_jh *out)
{
	struct r4_jh jh;

	jh.jh_last_committed = r4_le64_get(buf + R4_JH_LAST_COMMITTED);
	if (!jblock_ok(jh.jh_last_committed, bs, blocks))
		return R4_CORRUPT(lg, R4_JHEADER_BLOCK(bs),
				  "last committed tx head %llu out of range",
				  (unsigned long long)jh.jh_last_committed);
	*out = jh;
	return 0;
}

void r4_jh_encode(const struct r4_jh *jh, uint8_t *buf)
{
	r4_le64_put(buf + R4_JH_LAST_COMMITTED, jh->jh_last_committed);
}

int r4_jf_decode(const struct r4_logger *lg, const uint8_t *buf, uint32_t bs, uint64_t blocks,
		 struct r4_jf *out)
{
	uint64_t blk = R4_JFOOTER_BLOCK(bs);
	struct r4_jf jf;

	jf.jf_last_flushed = r4_le64_get(buf + R4_JF_LAST_FLUSHED);
	jf.jf_free_blocks = r4_le64_get(buf + R4_JF_FREE_BLOCKS);
	jf.jf_nr_files = r4_le64_get(buf + R4_JF_NR_FILES);
	jf.jf_next_oid = r4_le64_get(buf + R4_JF_NEXT_OID);
	if (!jblock_ok(jf.jf_last_flushed, bs, blocks))
		return R4_CORRUPT(lg, blk, "last flushed tx head %llu out of range",
				  (unsigned long long)jf.jf_last_flushed);
	if (jf.jf_free_blocks > blocks)
		return R4_CORRUPT(lg, blk, "%llu free blocks of %llu",
				  (unsigned long long)jf.jf_free_blocks,
				  (unsigned long long)blocks);
	*out = jf;
	return 0;
}

void r4_jf_encode(const struct r4_jf *jf, uint8_t *buf)
{
	r4_le64_put(buf + R4_JF_LAST_FLUSHED, jf->jf_last_flushed);
	r4_le64_put(buf + R4_JF_FREE_BLOCKS, jf->jf_free_blocks);
	r4_le64_put(buf + R4_JF_NR_FILES, jf->jf_nr_files);
	r4_le64_put(buf + R4_JF_NEXT_OID, jf->jf_next_oid);
}

/* ---- tx head and wander record ---- */

int r4_th_decode(const struct r4_logger *lg, uint64_t blk, const uint8_t *buf, uint32_t bs,
		 uint64_t blocks, struct r4_th *out)
{
	struct r4_th th;

	if (memcmp(buf + R4_TH_MAGIC, th_magic, sizeof(th_magic)))
		return R4_CORRUPT(lg, blk, "no transaction head (wrong magic)");
	th.th_id = r4_le64_get(buf + R4_TH_ID);
	th.th_total = r4_le32_get(buf + R4_TH_TOTAL);
	th.th_padding = r4_le32_get(buf + R4_TH_PADDING);
	th.th_prev_tx = r4_le64_get(buf + R4_TH_PREV_TX);
	th.th_next_block = r4_le64_get(buf + R4_TH_NEXT_BLOCK);
	th.th_free_blocks = r4_le64_get(buf + R4_TH_FREE_BLOCKS);
	th.th_nr_files = r4_le64_get(buf + R4_TH_NR_FILES);
	th.th_next_oid = r4_le64_get(buf + R4_TH_NEXT_OID);
	if (th.th_total < 1 || th.th_total > blocks)
		return R4_CORRUPT(lg, blk, "transaction of %u records", th.th_total);
	if (!jblock_ok(th.th_prev_tx, bs, blocks) || th.th_prev_tx == blk)
		return R4_CORRUPT(lg, blk, "previous tx head %llu out of range",
				  (unsigned long long)th.th_prev_tx);
	if (!jblock_ok(th.th_next_block, bs, blocks))
		return R4_CORRUPT(lg, blk, "first wander record %llu out of range",
				  (unsigned long long)th.th_next_block);
	if (th.th_free_blocks > blocks)
		return R4_CORRUPT(lg, blk, "%llu free blocks of %llu",
				  (unsigned long long)th.th_free_blocks,
				  (unsigned long long)blocks);
	*out = th;
	return 0;
}

void r4_th_encode(const struct r4_th *th, uint8_t *buf, uint32_t bs)
{
	memset(buf, 0, bs);
	memcpy(buf + R4_TH_MAGIC, th_magic, sizeof(th_magic));
	r4_le64_put(buf + R4_TH_ID, th->th_id);
	r4_le32_put(buf + R4_TH_TOTAL, th->th_total);
	r4_le32_put(buf + R4_TH_PADDING, th->th_padding);
	r4_le64_put(buf + R4_TH_PREV_TX, th->th_prev_tx);
	r4_le64_put(buf + R4_TH_NEXT_BLOCK, th->th_next_block);
	r4_le64_put(buf + R4_TH_FREE_BLOCKS, th->th_free_blocks);
	r4_le64_put(buf + R4_TH_NR_FILES, th->th_nr_files);
	r4_le64_put(buf + R4_TH_NEXT_OID, th->th_next_oid);
}

void r4_wr_entry(const uint8_t *buf, uint32_t i, uint64_t *original, uint64_t *wandered)
{
	const uint8_t *e = buf + R4_WR_ENTRIES + (size_t)i * R4_WR_ENTRY_SIZE;

	*original = r4_le64_get(e);
	*wandered = r4_le64_get(e + 8);
}

void r4_wr_entry_set(uint8_t *buf, uint32_t i, uint64_t original, uint64_t wandered)
{
	uint8_t *e = buf + R4_WR_ENTRIES + (size_t)i * R4_WR_ENTRY_SIZE;

	r4_le64_put(e, original);
	r4_le64_put(e + 8, wandered);
}

int r4_wr_decode(const struct r4_logger *lg, uint64_t blk, const uint8_t *buf, uint32_t bs,
		 uint64_t blocks, struct r4_wr *out)
{
	struct r4_wr wr;
	uint64_t orig, wand;
	uint32_t i;

	if (memcmp(buf + R4_WR_MAGIC, wr_magic, sizeof(wr_magic)))
		return R4_CORRUPT(lg, blk, "no wander record (wrong magic)");
	wr.wr_id = r4_le64_get(buf + R4_WR_ID);
	wr.wr_total = r4_le32_get(buf + R4_WR_TOTAL);
	wr.wr_serial = r4_le32_get(buf + R4_WR_SERIAL);
	wr.wr_next_block = r4_le64_get(buf + R4_WR_NEXT_BLOCK);
	wr.wr_capacity = r4_wr_capacity(bs);
	if (wr.wr_total < 2 || wr.wr_total > blocks || wr.wr_serial < 1 ||
	    wr.wr_serial >= wr.wr_total)
		return R4_CORRUPT(lg, blk, "wander record %u of %u", wr.wr_serial, wr.wr_total);
	if (wr.wr_next_block < R4_BACKUP_START(bs) || wr.wr_next_block >= blocks)
		return R4_CORRUPT(lg, blk, "next wander record %llu out of range",
				  (unsigned long long)wr.wr_next_block);
	for (i = 0; i < wr.wr_capacity; i++) {
		r4_wr_entry(buf, i, &orig, &wand);
		if (!orig && !wand)
			break;
		if (orig < R4_MSB_BLOCK(bs) || orig >= blocks || wand < R4_BACKUP_START(bs) ||
		    wand >= blocks)
			return R4_CORRUPT(lg, blk, "entry %u maps %llu to %llu, outside the volume",
					  i, (unsigned long long)orig, (unsigned long long)wand);
	}
	wr.wr_nr_entries = i;
	for (; i < wr.wr_capacity; i++) {
		r4_wr_entry(buf, i, &orig, &wand);
		if (orig || wand)
			return R4_CORRUPT(lg, blk, "entry %u used after an unused one", i);
	}
	*out = wr;
	return 0;
}

void r4_wr_encode(const struct r4_wr *wr, uint8_t *buf)
{
	memcpy(buf + R4_WR_MAGIC, wr_magic, sizeof(wr_magic));
	r4_le64_put(buf + R4_WR_ID, wr->wr_id);
	r4_le32_put(buf + R4_WR_TOTAL, wr->wr_total);
	r4_le32_put(buf + R4_WR_SERIAL, wr->wr_serial);
	r4_le64_put(buf + R4_WR_NEXT_BLOCK, wr->wr_next_block);
}

void r4_wr_init(const struct r4_wr *wr, uint8_t *buf, uint32_t bs)
{
	memset(buf, 0, bs);
	r4_wr_encode(wr, buf);
}

/* ---- status block ---- */

int r4_status_decode(const struct r4_logger *lg, const uint8_t *buf, uint32_t bs,
		     struct r4_status *out)
{
	static const uint8_t zero16[16];
	struct r4_status st;

	memset(&st, 0, sizeof(st));
	if (!memcmp(buf + R4_ST_MAGIC, zero16, 16)) {
		*out = st;		/* no status block yet: an old volume, fine */
		return 0;
	}
	if (memcmp(buf + R4_ST_MAGIC, st_magic, sizeof(st_magic)))
		return R4_CORRUPT(lg, R4_STATUS_BLOCK(bs), "no status block (wrong magic)");
	st.st_present = true;
	st.st_status = r4_le64_get(buf + R4_ST_STATUS);
	st.st_extended = r4_le64_get(buf + R4_ST_EXTENDED);
	for (int i = 0; i < R4_ST_STACK_DEPTH; i++)
		st.st_stack[i] = r4_le64_get(buf + R4_ST_STACK + 8 * i);
	memcpy(st.st_message, buf + R4_ST_MESSAGE, R4_ST_MESSAGE_LEN);
	st.st_message[R4_ST_MESSAGE_LEN] = 0;
	*out = st;
	return 0;
}

void r4_status_encode(const struct r4_status *st, uint8_t *buf)
{
	put_magic16(buf + R4_ST_MAGIC, st_magic);
	r4_le64_put(buf + R4_ST_STATUS, st->st_status);
	r4_le64_put(buf + R4_ST_EXTENDED, st->st_extended);
	for (int i = 0; i < R4_ST_STACK_DEPTH; i++)
		r4_le64_put(buf + R4_ST_STACK + 8 * i, st->st_stack[i]);
	memset(buf + R4_ST_MESSAGE, 0, R4_ST_MESSAGE_LEN);
	memcpy(buf + R4_ST_MESSAGE, st->st_message, strnlen(st->st_message, R4_ST_MESSAGE_LEN));
}

/* ---- backups and geometry ---- */

size_t r4_format_backup_blocks(uint32_t bs, uint64_t blocks, uint64_t out[R4_BACKUP_MAX])
{
	uint64_t span = r4_format_bitmap_bits(bs), cand = 2, prev = 0;
	size_t n = 0;

	if (blocks > (UINT64_C(1) << 62))
		return 0;	/* no such volume: r4_fsb_decode refuses it */
	while (n < R4_BACKUP_MAX) {
		uint64_t zone, width, copy;

		cand = cand * 3 >> 1;
		if (cand <= prev)
			continue;
		if (cand > blocks)
			break;
		zone = cand / span * span;
		width = blocks > zone ? R4_MIN(span, blocks - zone) : 0;
		copy = width == 1 ? 0 : zone + 1;
		if (copy < R4_BACKUP_START(bs))
			copy = R4_BACKUP_START(bs);
		if (copy > blocks)
			break;
		if (copy <= prev)
			continue;
		out[n++] = prev = copy;
	}
	return n;
}

int r4_backup_layout(uint32_t bs, uint64_t blocks, int (*fn)(void *ctx, uint64_t blk),
		     void *ctx)
{
	uint64_t blk[R4_BACKUP_MAX];
	size_t n = r4_format_backup_blocks(bs, blocks, blk);
	int rc;

	for (size_t i = 0; i < n; i++)
		if ((rc = fn(ctx, blk[i])))
			return rc;
	return 0;
}

void r4_format_backup_encode(const struct r4_msb *m, const struct r4_fsb *sb, const uint8_t *pset,
			     size_t pset_len, uint8_t *buf, uint32_t bs)
{
	uint8_t msb[R4_MSB_SIZE];

	memset(buf, 0, bs);
	buf[R4_BK_VERSION] = 0;
	memset(msb, 0, sizeof(msb));
	r4_msb_encode(m, msb);
	memcpy(buf + R4_BK_MASTER, msb, R4_MSB_PROGS_SIZE);
	put_magic16(buf + R4_BK_FMT_MAGIC, fsb_magic);
	r4_le64_put(buf + R4_BK_FMT_COUNT, sb->sb_block_count);
	r4_le32_put(buf + R4_BK_FMT_MKFS_ID, sb->sb_mkfs_id);
	r4_le16_put(buf + R4_BK_FMT_POLICY, sb->sb_policy);
	r4_le64_put(buf + R4_BK_FMT_FLAGS, sb->sb_flags);
	r4_le32_put(buf + R4_BK_FMT_VERSION, sb->sb_version & ~R4_FSB_UPDATE_BACKUP);
	if ((sb->sb_version & ~R4_FSB_UPDATE_BACKUP) == 0)
		return;		/* version 0 backups carry no plugin set */
	memcpy(buf + R4_BK_PSET, pset_magic, sizeof(pset_magic));
	if (pset)
		memcpy(buf + R4_BK_PSET_IDS, pset,
		       R4_MIN(pset_len, (size_t)4 * R4_BK_PSET_MEMBERS));
}

void r4_backup_encode(const struct r4_msb *m, const struct r4_fsb *sb, const uint32_t *pset14,
		      uint8_t *buf, uint32_t bs)
{
	uint8_t ids[4 * R4_BK_PSET_MEMBERS];

	if (pset14)
		for (int i = 0; i < R4_BK_PSET_MEMBERS; i++)
			r4_le32_put(ids + 4 * i, pset14[i]);
	r4_format_backup_encode(m, sb, pset14 ? ids : NULL, sizeof(ids), buf, bs);
}

int r4_format_fresh_used(uint32_t bs, uint64_t blocks,
			 int (*fn)(void *ctx, uint64_t start, uint64_t count), void *ctx)
{
	uint64_t bk[R4_BACKUP_MAX], nmaps = r4_format_bitmap_count(bs, blocks), k = 1;
	size_t n = r4_format_backup_blocks(bs, blocks, bk), i = 0;
	int rc;

	if ((rc = fn(ctx, 0, R4_MIN((uint64_t)R4_BACKUP_START(bs), blocks))))
		return rc;
	/* merge the two ascending lists: bitmap blocks k >= 1 and backups */
	while (k < nmaps || i < n) {
		uint64_t b;

		if (i >= n || (k < nmaps && r4_format_bitmap_block(bs, k) < bk[i]))
			b = r4_format_bitmap_block(bs, k++);
		else
			b = bk[i++];
		if (b >= R4_BACKUP_START(bs) && (rc = fn(ctx, b, 1)))
			return rc;
	}
	return 0;
}
