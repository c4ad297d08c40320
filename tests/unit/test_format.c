/*
 * test_format.c - the fixed-block codecs and geometry of engine/format.c.
 *
 * Round trips of every codec (decode(encode(x)) == x and encode(decode(b))
 * == b), rejection of bad magics and out-of-range fields, and fixtures made
 * on the spot by mkfs.reiser4 1.2.2 in a temporary directory (64 MiB,
 * 1 GiB and 3 GiB sparse images, one with node41): the master and format
 * super blocks are decoded and compared with what `debugfs.reiser4 -s`
 * prints, every fixed block is re-encoded to identical bytes, and the
 * backup blocks are found exactly where r4_format_backup_blocks says, with
 * the bytes r4_backup_encode makes.  Without mkfs.reiser4 those parts are
 * skipped with a printed reason.  Rejections log through a counting logger.
 */
#include "format.h"
#include "io.h"
#include "t.h"

#include <unistd.h>

static int nlog;

static void count_log(void *ctx, int level, const char *msg)
{
	(void)ctx;
	(void)msg;
	nlog += level == R4_LOG_ERR;	/* (each rejection: one error line) */
}

static const struct r4_logger quiet = {count_log, NULL};

static const uint8_t test_uuid[16] = {0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef,
				      0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef};

/* mkfs.reiser4's default root plugin set with create=reg40 (format.h). */
static const uint32_t progs_pset[R4_BK_PSET_MEMBERS] = {1, 0, 0, 2, 1, 2, 0, 2, 0, 0, 0, 4, 0, 0};

static void test_msb(void)
{
	uint8_t buf[4096], again[4096];
	struct r4_msb m = {0}, d;

	m.msb_blksize = 4096;
	memcpy(m.msb_uuid, test_uuid, 16);
	memcpy(m.msb_label, "0123456789abcdef", 16);
	m.msb_diskmap = 0x1122334455667788ull;
	memset(buf, 0xa5, sizeof(buf));
	r4_msb_encode(&m, buf);
	CHECK(!memcmp(buf, "ReIsEr4\0\0\0\0\0\0\0\0\0", 16));
	CHECK_EQ(buf[R4_MSB_SIZE], 0xa5);	/* the rest of the block is the caller's */
	CHECK_RC(r4_msb_decode(&quiet, buf, R4_MSB_SIZE, &d));
	CHECK_EQ(d.msb_blksize, 4096);
	CHECK_EQ(d.msb_disk_pid, 0);
	CHECK(!memcmp(d.msb_uuid, test_uuid, 16));
	CHECK(!memcmp(d.msb_label, "0123456789abcdef", 16));
	CHECK(d.msb_diskmap == m.msb_diskmap);
	memcpy(again, buf, sizeof(buf));
	r4_msb_encode(&d, again);
	CHECK(!memcmp(buf, again, sizeof(buf)));

	nlog = 0;
	CHECK_EQ(r4_msb_decode(&quiet, buf, R4_MSB_SIZE - 1, &d), -EUCLEAN);
	memcpy(again, buf, sizeof(buf));
	again[3] ^= 1;		/* no magic: no Reiser4 volume (no log line) */
	CHECK_EQ(r4_msb_decode(&quiet, again, sizeof(again), &d), -EMEDIUMTYPE);
	memcpy(again, buf, sizeof(buf));
	again[7] = 'x';		/* the NUL is part of the magic */
	CHECK_EQ(r4_msb_decode(&quiet, again, sizeof(again), &d), -EMEDIUMTYPE);
	const uint16_t bad_bs[] = {0, 1, 256, 4095, 4097, 6144};
	for (size_t i = 0; i < R4_ARRAY_SIZE(bad_bs); i++) {
		memcpy(again, buf, sizeof(buf));
		r4_le16_put(again + R4_MSB_BLKSIZE, bad_bs[i]);
		CHECK_EQ(r4_msb_decode(&quiet, again, sizeof(again), &d), -EUCLEAN);
	}
	memcpy(again, buf, sizeof(buf));
	r4_le16_put(again + R4_MSB_DISK_PID, 1);
	CHECK_EQ(r4_msb_decode(&quiet, again, sizeof(again), &d), -EUCLEAN);
	CHECK_EQ(nlog, 8);
}

static void fill_fsb(struct r4_fsb *sb)
{
	memset(sb, 0, sizeof(*sb));
	sb->sb_block_count = 262144;
	sb->sb_free_blocks = 262100;
	sb->sb_root_block = 23;
	sb->sb_oid = 0x10000;
	sb->sb_file_count = 1;
	sb->sb_flushes = 7;
	sb->sb_mkfs_id = 0xdeadbeef;
	sb->sb_tree_height = 2;
	sb->sb_policy = 2;
	sb->sb_flags = R4_FSB_LARGE_KEYS;
	sb->sb_version = R4_FORMAT_VERSION | R4_FSB_UPDATE_BACKUP;
	sb->sb_node_pid = 1;
	for (int i = 0; i < R4_FSB_RESERVED_LEN; i++)
		sb->sb_reserved[i] = (uint8_t)(i * 7 + 1);
}

static bool fsb_eq(const struct r4_fsb *a, const struct r4_fsb *b)
{
	return a->sb_block_count == b->sb_block_count && a->sb_free_blocks == b->sb_free_blocks &&
	       a->sb_root_block == b->sb_root_block && a->sb_oid == b->sb_oid &&
	       a->sb_file_count == b->sb_file_count && a->sb_flushes == b->sb_flushes &&
	       a->sb_mkfs_id == b->sb_mkfs_id && a->sb_tree_height == b->sb_tree_height &&
	       a->sb_policy == b->sb_policy && a->sb_flags == b->sb_flags &&
	       a->sb_version == b->sb_version && a->sb_node_pid == b->sb_node_pid &&
	       !memcmp(a->sb_reserved, b->sb_reserved, sizeof(a->sb_reserved));
}

static void test_fsb(void)
{
	uint8_t buf[4096], again[4096];
	struct r4_fsb sb, d;

	fill_fsb(&sb);
	memset(buf, 0, sizeof(buf));
	r4_fsb_encode(&sb, buf);
	CHECK(!memcmp(buf + R4_FSB_MAGIC, "ReIsEr40FoRmAt\0\0", 16));
	CHECK_RC(r4_fsb_decode(&quiet, buf, 4096, &d));
	CHECK(fsb_eq(&sb, &d));
	memset(again, 0, sizeof(again));
	r4_fsb_encode(&d, again);
	CHECK(!memcmp(buf, again, sizeof(buf)));

	struct {
		int off, width;
		uint64_t val;
	} bad[] = {
		{R4_FSB_BLOCK_COUNT, 8, 0},		{R4_FSB_BLOCK_COUNT, 8, 22},
		{R4_FSB_BLOCK_COUNT, 8, UINT64_MAX},	{R4_FSB_FREE, 8, 262145},
		{R4_FSB_ROOT, 8, 0},			{R4_FSB_ROOT, 8, 21},
		{R4_FSB_ROOT, 8, 262144},		{R4_FSB_HEIGHT, 2, 0},
		{R4_FSB_HEIGHT, 2, 9},			{R4_FSB_MAGIC + 2, 1, 'X'},
	};
	nlog = 0;
	for (size_t i = 0; i < R4_ARRAY_SIZE(bad); i++) {
		memcpy(again, buf, sizeof(buf));
		if (bad[i].width == 8)
			r4_le64_put(again + bad[i].off, bad[i].val);
		else if (bad[i].width == 2)
			r4_le16_put(again + bad[i].off, (uint16_t)bad[i].val);
		else
			again[bad[i].off] = (uint8_t)bad[i].val;
		CHECK_EQ(r4_fsb_decode(&quiet, again, 4096, &d), -EUCLEAN);
	}
	CHECK_EQ(nlog, (int)R4_ARRAY_SIZE(bad));
}

static void test_journal_blocks(void)
{
	uint8_t buf[4096], again[4096];
	const uint64_t blocks = 16384;
	struct r4_jh jh = {12345}, jh2;
	struct r4_jf jf = {222, 16000, 5, 0x10005}, jf2;
	struct r4_th th = {0, 3, 0, 90, 101, 16000, 5, 0x10005}, th2;
	struct r4_wr wr = {0, 3, 1, 102, 0, 0}, wr2;
	uint64_t o, w;

	memset(buf, 0, sizeof(buf));
	r4_jh_encode(&jh, buf);
	CHECK_EQ(r4_le64_get(buf), 12345);
	CHECK_RC(r4_jh_decode(&quiet, buf, 4096, blocks, &jh2));
	CHECK(jh2.jh_last_committed == 12345);
	memset(buf, 0, sizeof(buf));
	CHECK_RC(r4_jh_decode(&quiet, buf, 4096, blocks, &jh2));	/* fresh mkfs: all zero */
	CHECK(jh2.jh_last_committed == 0);
	nlog = 0;
	r4_le64_put(buf, 21);
	CHECK_EQ(r4_jh_decode(&quiet, buf, 4096, blocks, &jh2), -EUCLEAN);
	r4_le64_put(buf, blocks);
	CHECK_EQ(r4_jh_decode(&quiet, buf, 4096, blocks, &jh2), -EUCLEAN);

	memset(buf, 0, sizeof(buf));
	r4_jf_encode(&jf, buf);
	CHECK_RC(r4_jf_decode(&quiet, buf, 4096, blocks, &jf2));
	CHECK(!memcmp(&jf, &jf2, sizeof(jf)));	/* four uint64_t: no padding */
	CHECK_EQ(r4_le64_get(buf + 8), 16000);
	r4_le64_put(buf + R4_JF_FREE_BLOCKS, blocks + 1);
	CHECK_EQ(r4_jf_decode(&quiet, buf, 4096, blocks, &jf2), -EUCLEAN);
	r4_jf_encode(&jf, buf);
	r4_le64_put(buf + R4_JF_LAST_FLUSHED, 3);
	CHECK_EQ(r4_jf_decode(&quiet, buf, 4096, blocks, &jf2), -EUCLEAN);

	memset(buf, 0xee, sizeof(buf));
	r4_th_encode(&th, buf, 4096);
	CHECK(!memcmp(buf, "TxMagic4", 8));
	CHECK_EQ(buf[4095], 0);
	CHECK_RC(r4_th_decode(&quiet, 100, buf, 4096, blocks, &th2));
	CHECK(th2.th_total == 3 && th2.th_prev_tx == 90 && th2.th_next_block == 101 &&
	      th2.th_free_blocks == 16000 && th2.th_nr_files == 5 && th2.th_next_oid == 0x10005);
	r4_th_encode(&th2, again, 4096);
	CHECK(!memcmp(buf, again, sizeof(buf)));
	CHECK_EQ(r4_th_decode(&quiet, 100, buf, 4096, 50, &th2), -EUCLEAN);
	CHECK_EQ(r4_th_decode(&quiet, 90, buf, 4096, blocks, &th2), -EUCLEAN);	/* its own prev */
	memcpy(again, buf, sizeof(buf));
	again[0] = 't';
	CHECK_EQ(r4_th_decode(&quiet, 100, again, 4096, blocks, &th2), -EUCLEAN);
	th.th_total = 0;
	r4_th_encode(&th, again, 4096);
	CHECK_EQ(r4_th_decode(&quiet, 100, again, 4096, blocks, &th2), -EUCLEAN);

	CHECK_EQ(r4_wr_capacity(4096), 254);
	r4_wr_init(&wr, buf, 4096);
	for (uint32_t i = 0; i < 10; i++)
		r4_wr_entry_set(buf, i, 1000 + i, 2000 + i);
	CHECK(!memcmp(buf, "LogMagc4", 8));
	CHECK_RC(r4_wr_decode(&quiet, 101, buf, 4096, blocks, &wr2));
	CHECK(wr2.wr_total == 3 && wr2.wr_serial == 1 && wr2.wr_next_block == 102 &&
	      wr2.wr_capacity == 254 && wr2.wr_nr_entries == 10);
	r4_wr_entry(buf, 9, &o, &w);
	CHECK(o == 1009 && w == 2009);
	CHECK_EQ(r4_le64_get(buf + R4_WR_ENTRIES + 16 * 9 + 8), 2009);
	r4_wr_entry_set(buf, 253, 1, 2);	/* used after unused */
	CHECK_EQ(r4_wr_decode(&quiet, 101, buf, 4096, blocks, &wr2), -EUCLEAN);
	r4_wr_entry_set(buf, 253, 0, 0);
	r4_wr_entry_set(buf, 3, 1000, blocks);	/* wandered past the end */
	CHECK_EQ(r4_wr_decode(&quiet, 101, buf, 4096, blocks, &wr2), -EUCLEAN);
	r4_wr_entry_set(buf, 3, 1003, 2003);
	r4_le32_put(buf + R4_WR_SERIAL, 3);	/* serial must be below total */
	CHECK_EQ(r4_wr_decode(&quiet, 101, buf, 4096, blocks, &wr2), -EUCLEAN);
	r4_le32_put(buf + R4_WR_SERIAL, 0);
	CHECK_EQ(r4_wr_decode(&quiet, 101, buf, 4096, blocks, &wr2), -EUCLEAN);
	r4_le32_put(buf + R4_WR_SERIAL, 2);
	CHECK_RC(r4_wr_decode(&quiet, 101, buf, 4096, blocks, &wr2));
	buf[3] ^= 0x20;
	CHECK_EQ(r4_wr_decode(&quiet, 101, buf, 4096, blocks, &wr2), -EUCLEAN);
	CHECK_EQ(nlog, 13);
}

static void test_status(void)
{
	uint8_t buf[4096], again[4096];
	struct r4_status st = {0}, d;

	memset(buf, 0, sizeof(buf));
	CHECK_RC(r4_status_decode(&quiet, buf, 4096, &d));
	CHECK(!d.st_present && d.st_status == 0);
	st.st_status = R4_ST_DAMAGED | R4_ST_IOERROR;
	st.st_extended = 77;
	for (int i = 0; i < R4_ST_STACK_DEPTH; i++)
		st.st_stack[i] = 0x1000u + (unsigned)i;
	snprintf(st.st_message, sizeof(st.st_message), "%s", "bad block 99");
	r4_status_encode(&st, buf);
	CHECK(!memcmp(buf, "ReiSeR4StATusBl", 16));
	CHECK_RC(r4_status_decode(&quiet, buf, 4096, &d));
	CHECK(d.st_present && d.st_status == 10 && d.st_extended == 77 && d.st_stack[9] == 0x1009);
	CHECK(!strcmp(d.st_message, "bad block 99"));
	memset(again, 0, sizeof(again));
	r4_status_encode(&d, again);
	CHECK(!memcmp(buf, again, sizeof(buf)));
	memset(st.st_message, 'm', R4_ST_MESSAGE_LEN);	/* 256 bytes, no NUL on disk */
	r4_status_encode(&st, buf);
	CHECK_RC(r4_status_decode(&quiet, buf, 4096, &d));
	CHECK_EQ(strlen(d.st_message), R4_ST_MESSAGE_LEN);
	CHECK_EQ(buf[R4_ST_SIZE], 0);
	nlog = 0;
	buf[5] ^= 1;
	CHECK_EQ(r4_status_decode(&quiet, buf, 4096, &d), -EUCLEAN);
	CHECK_EQ(nlog, 1);
}

static size_t backups(uint64_t blocks, uint64_t *out)
{
	return r4_format_backup_blocks(4096, blocks, out);
}

struct used_list {
	uint64_t start[256], count[256];
	size_t n;
};

static int collect_used(void *ctx, uint64_t start, uint64_t count)
{
	struct used_list *u = ctx;

	if (u->n < 256) {
		u->start[u->n] = start;
		u->count[u->n] = count;
	}
	u->n++;
	return 0;
}

static int count_cb(void *ctx, uint64_t blk)
{
	(void)blk;
	return ++*(int *)ctx == 2 ? -EINTR : 0;
}

static void test_geometry(void)
{
	static const uint64_t g1[] = {22, 32737, 65473, 130945, 196417};
	static const uint64_t g3[] = {22, 32737, 65473, 130945, 196417, 294625, 458305, 687457};
	uint64_t b[R4_BACKUP_MAX];
	struct used_list u = {0};
	int calls = 0;
	size_t n;

	CHECK_EQ(r4_format_bitmap_bits(4096), 32736);
	CHECK_EQ(r4_format_bitmap_block(4096, 0), 18);
	CHECK_EQ(r4_format_bitmap_block(4096, 1), 32736);
	CHECK_EQ(r4_format_bitmap_block(4096, 5), 5 * 32736);
	CHECK_EQ(r4_format_bitmap_count(4096, 16384), 1);
	CHECK_EQ(r4_format_bitmap_count(4096, 32736), 1);
	CHECK_EQ(r4_format_bitmap_count(4096, 32737), 2);
	CHECK_EQ(r4_format_bitmap_count(4096, 262144), 9);
	CHECK_EQ(R4_BACKUP_START(4096), 22);
	CHECK_EQ(R4_STATUS_BLOCK(4096), 21);

	n = backups(16384, b);
	CHECK(n == 1 && b[0] == 22);
	n = backups(40964, b);
	CHECK(n == 1 && b[0] == 22);
	n = backups(40965, b);		/* the candidate 40965 lands in zone 1 */
	CHECK(n == 2 && b[1] == 32737);
	n = backups(262144, b);
	CHECK(n == R4_ARRAY_SIZE(g1) && !memcmp(b, g1, sizeof(g1)));
	n = backups(786432, b);
	CHECK(n == R4_ARRAY_SIZE(g3) && !memcmp(b, g3, sizeof(g3)));
	n = backups(UINT64_C(1) << 40, b);	/* 4 PiB: ascending, after bitmap blocks */
	CHECK(n > 20 && n < R4_BACKUP_MAX);
	for (size_t i = 1; i < n; i++)
		CHECK(b[i] > b[i - 1] && b[i] % 32736 == 1);
	n = backups(23, b);
	CHECK(n == 1 && b[0] == 22);
	n = backups(20, b);
	CHECK_EQ(n, 0);
	CHECK_EQ(r4_backup_layout(4096, 786432, count_cb, &calls), -EINTR);
	CHECK_EQ(calls, 2);

	CHECK_RC(r4_format_fresh_used(4096, 262144, collect_used, &u));
	/* 0..21, then backup 22, bitmaps 1..8 and backups 32737 65473 130945 196417 */
	CHECK_EQ(u.n, 1 + 1 + 8 + 4);
	CHECK(u.start[0] == 0 && u.count[0] == 22);
	CHECK(u.start[1] == 22 && u.count[1] == 1);
	CHECK(u.start[2] == 32736 && u.start[3] == 32737 && u.start[4] == 65472);
	CHECK(u.start[5] == 65473 && u.start[6] == 98208 && u.start[7] == 130944);
	CHECK(u.start[11] == 196417 && u.start[12] == 229152 && u.start[13] == 261888);
	for (size_t i = 1; i < u.n && i < 256; i++)
		CHECK(u.count[i] == 1 && u.start[i] > u.start[i - 1]);
}

/* ---- fixtures from mkfs.reiser4 ---- */

static bool have_progs(void)
{
	return !system("command -v mkfs.reiser4 >/dev/null 2>&1") &&
	       !system("command -v debugfs.reiser4 >/dev/null 2>&1");
}

/* One "key:\tvalue" line of `debugfs.reiser4 -s`, in the section starting at `sect`. */
static bool debugfs_field(const char *img, const char *sect, const char *key, char *val, size_t n)
{
	char cmd[512], line[512];
	bool in = false, found = false;
	FILE *p;

	snprintf(cmd, sizeof(cmd), "debugfs.reiser4 -s '%s' 2>/dev/null", img);
	if (!(p = popen(cmd, "r")))
		return false;
	while (fgets(line, sizeof(line), p)) {
		size_t kl = strlen(key);

		if (!strncmp(line, sect, strlen(sect)))
			in = true;
		else if (in && !found && !strncmp(line, key, kl) && line[kl] == ':') {
			const char *v = line + kl + 1;

			v += strspn(v, "\t ");
			snprintf(val, n, "%.*s", (int)strcspn(v, "\n"), v);
			found = true;
		}
	}
	pclose(p);
	return found;
}

static uint64_t debugfs_num(const char *img, const char *sect, const char *key)
{
	char v[128];

	if (!debugfs_field(img, sect, key, v, sizeof(v)))
		return UINT64_MAX - 1;
	return strtoull(v, NULL, 0);
}

static void check_image(const char *img, uint64_t want_blocks, unsigned npid)
{
	uint8_t blk[4096], enc[4096], bk[4096], pset[4 * R4_BK_PSET_MEMBERS];
	const char *fsec = "Format super block", *msec = "Master super block";
	uint64_t b[R4_BACKUP_MAX], isbk[R4_BACKUP_MAX];
	struct r4_io *io = NULL;
	struct r4_msb msb;
	struct r4_fsb sb;
	struct r4_status st;
	struct r4_jh jh;
	struct r4_jf jf;
	char v[128];
	size_t n, nfound = 0;

	CHECK_RC(r4_io_file_open(img, 0, &io));
	if (!io)
		return;
	CHECK_RC(r4_io_read(io, R4_MSB_OFFSET, blk, 4096));
	CHECK_RC(r4_msb_decode(NULL, blk, 4096, &msb));
	CHECK_EQ(msb.msb_blksize, debugfs_num(img, msec, "blksize"));
	CHECK(!memcmp(msb.msb_uuid, test_uuid, 16));
	CHECK(debugfs_field(img, msec, "label", v, sizeof(v)) && !strcmp(v, "lbl"));
	CHECK(!strncmp(msb.msb_label, "lbl", 16));
	memset(enc, 0, sizeof(enc));
	r4_msb_encode(&msb, enc);
	CHECK(!memcmp(blk, enc, sizeof(blk)));

	CHECK_RC(r4_io_read(io, 17 * 4096, blk, 4096));
	CHECK_RC(r4_fsb_decode(NULL, blk, 4096, &sb));
	CHECK_EQ(sb.sb_block_count, want_blocks);
	CHECK_EQ(sb.sb_block_count, debugfs_num(img, fsec, "blocks"));
	CHECK_EQ(sb.sb_free_blocks, debugfs_num(img, fsec, "free blocks"));
	CHECK_EQ(sb.sb_root_block, debugfs_num(img, fsec, "root block"));
	CHECK_EQ(sb.sb_oid, debugfs_num(img, fsec, "next oid"));
	CHECK_EQ(sb.sb_file_count, debugfs_num(img, fsec, "file count"));
	CHECK_EQ(sb.sb_tree_height, debugfs_num(img, fsec, "tree height"));
	CHECK_EQ(sb.sb_mkfs_id, debugfs_num(img, fsec, "mkfs id"));
	CHECK_EQ(sb.sb_version, debugfs_num(img, fsec, "version"));
	CHECK_EQ(sb.sb_policy, debugfs_num(img, fsec, "tail policy"));
	CHECK(debugfs_field(img, fsec, "key policy", v, sizeof(v)) && !strcmp(v, "LARGE"));
	CHECK_EQ(sb.sb_flags, R4_FSB_LARGE_KEYS);
	CHECK_EQ(sb.sb_node_pid, npid);
	CHECK_EQ(sb.sb_root_block, 23);
	CHECK_EQ(sb.sb_tree_height, 2);
	CHECK_EQ(sb.sb_oid, 0x10000);
	memset(enc, 0, sizeof(enc));
	r4_fsb_encode(&sb, enc);
	CHECK(!memcmp(blk, enc, sizeof(blk)));

	CHECK_RC(r4_io_read(io, 19 * 4096, blk, 4096));
	CHECK_RC(r4_jh_decode(NULL, blk, 4096, sb.sb_block_count, &jh));
	memset(enc, 0, sizeof(enc));
	r4_jh_encode(&jh, enc);
	CHECK(!memcmp(blk, enc, sizeof(blk)) && jh.jh_last_committed == 0);
	CHECK_RC(r4_io_read(io, 20 * 4096, blk, 4096));
	CHECK_RC(r4_jf_decode(NULL, blk, 4096, sb.sb_block_count, &jf));
	memset(enc, 0, sizeof(enc));
	r4_jf_encode(&jf, enc);
	CHECK(!memcmp(blk, enc, sizeof(blk)) && jf.jf_last_flushed == 0);
	CHECK_RC(r4_io_read(io, 21 * 4096, blk, 4096));
	CHECK_RC(r4_status_decode(NULL, blk, 4096, &st));
	CHECK(st.st_present && st.st_status == R4_ST_OK);
	memset(enc, 0, sizeof(enc));
	r4_status_encode(&st, enc);
	CHECK(!memcmp(blk, enc, sizeof(blk)));

	/* backups: exactly at the computed blocks, and the encoder's bytes */
	n = r4_format_backup_blocks(4096, sb.sb_block_count, b);
	r4_backup_encode(&msb, &sb, progs_pset, bk, 4096);
	for (int i = 0; i < R4_BK_PSET_MEMBERS; i++)
		r4_le32_put(pset + 4 * i, progs_pset[i]);
	r4_format_backup_encode(&msb, &sb, pset, sizeof(pset), enc, 4096);
	CHECK(!memcmp(bk, enc, sizeof(bk)));
	for (size_t i = 0; i < n; i++) {
		CHECK_RC(r4_io_read(io, b[i] * 4096, blk, 4096));
		CHECK(!memcmp(blk, bk, sizeof(blk)));
	}
	/* no backup anywhere else a backup could be: block 22 and each zone's second block */
	for (uint64_t z = 0; z < r4_format_bitmap_count(4096, sb.sb_block_count); z++) {
		uint64_t c = z ? z * 32736 + 1 : 22;

		if (c >= sb.sb_block_count)
			break;
		CHECK_RC(r4_io_read(io, c * 4096, blk, 4096));
		if (!memcmp(blk, bk, sizeof(blk)) && nfound < R4_BACKUP_MAX)
			isbk[nfound++] = c;
	}
	CHECK_EQ(nfound, n);
	CHECK(!memcmp(isbk, b, n * sizeof(b[0])));
	printf("%s: %llu blocks, %zu backups, last at %llu\n", strrchr(img, '/') + 1,
	       (unsigned long long)sb.sb_block_count, n, (unsigned long long)b[n - 1]);
	r4_io_close(io);
}

static void test_mkfs_images(void)
{
	static const struct {
		const char *name, *size, *opts;
		uint64_t blocks;
		unsigned npid;
	} imgs[] = {
		{"a.img", "64M", "create=reg40", 16384, 0},
		{"n41.img", "64M", "create=reg40,node=node41", 16384, 1},
		{"b.img", "1G", "create=reg40", 262144, 0},
		{"c.img", "3G", "create=reg40", 786432, 0},
	};
	char dir[128], path[512], cmd[1536];

	if (!have_progs()) {
		printf("skip: mkfs.reiser4/debugfs.reiser4 not installed, no image fixtures\n");
		return;
	}
	snprintf(dir, sizeof(dir), "%s/r4fmt.XXXXXX", t_tmp());
	if (!mkdtemp(dir)) {
		CHECK(!"mkdtemp");
		return;
	}
	for (size_t i = 0; i < R4_ARRAY_SIZE(imgs); i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, imgs[i].name);
		snprintf(cmd, sizeof(cmd),
			 "truncate -s %s '%s' && mkfs.reiser4 -y -f -o %s "
			 "-U 01234567-89ab-cdef-0123-456789abcdef -L lbl '%s' >/dev/null 2>&1",
			 imgs[i].size, path, imgs[i].opts, path);
		CHECK_EQ(system(cmd), 0);
		check_image(path, imgs[i].blocks, imgs[i].npid);
		unlink(path);
	}
	rmdir(dir);
}

int main(void)
{
	test_msb();
	test_fsb();
	test_journal_blocks();
	test_status();
	test_geometry();
	test_mkfs_images();
	return T_DONE();
}
