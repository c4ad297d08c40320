/*
 * test_io.c - the I/O backends (engine/io_file.c, io_mem.c, io_fault.c) and
 * a partition's window (io_volume.c).
 *
 * File and memory images: round trips, short reads are -EIO, growth,
 * truncate, read-only handles, save/load between the two, allocation
 * failures.  The fault wrapper: the Nth read/write/sync fails once or for
 * good with the chosen errno and changes nothing; counters; recording mode
 * (reads see kept writes, only sync reaches inner); crash at write k for
 * many seeds, checking that synced data always survives, every unsynced
 * write is either whole or absent (or, torn, whole or absent per 512-byte
 * sector), that a seed replays the same image, and that the wrapper is
 * dead afterwards.
 */
#include "io.h"
#include "t.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

static char tmpdir[128];

static void path_in(char *buf, size_t n, const char *name)
{
	snprintf(buf, n, "%s/%s", tmpdir, name);
}

static void fill(uint8_t *b, size_t n, unsigned seed)
{
	for (size_t i = 0; i < n; i++)
		b[i] = (uint8_t)(seed * 131 + i * 7 + (i >> 9));
}

/* Common checks of any fresh, growable, read-write backend of `size` zero bytes. */
static void generic_rw(struct r4_io *io, uint64_t size)
{
	uint8_t w[10000], r[10000];
	uint64_t n = 0;

	CHECK_RC(r4_io_size(io, &n));
	CHECK_EQ(n, size);
	fill(w, sizeof(w), 1);
	CHECK_RC(r4_io_write(io, 100, w, sizeof(w)));
	memset(r, 0, sizeof(r));
	CHECK_RC(r4_io_read(io, 100, r, sizeof(r)));
	CHECK(!memcmp(w, r, sizeof(r)));
	CHECK_RC(r4_io_read(io, 0, r, 100));
	CHECK(r[0] == 0 && r[99] == 0);
	CHECK_RC(r4_io_size(io, &n));
	CHECK_EQ(n, R4_MAX(size, 10100));
	CHECK_EQ(r4_io_read(io, n - 10, r, 11), -EIO);		/* short */
	CHECK_EQ(r4_io_read(io, n + 4096, r, 1), -EIO);
	CHECK_RC(r4_io_read(io, n - 10, r, 10));
	CHECK_RC(r4_io_read(io, n, r, 0));
	CHECK_RC(r4_io_write(io, 1 << 20, w, 4096));		/* grows, hole reads zero */
	CHECK_RC(r4_io_size(io, &n));
	CHECK_EQ(n, (1 << 20) + 4096);
	CHECK_RC(r4_io_read(io, 500000, r, 4096));
	CHECK(r[0] == 0 && r[4095] == 0);
	CHECK_RC(r4_io_sync(io));
	CHECK_RC(r4_io_truncate(io, 5000));
	CHECK_RC(r4_io_size(io, &n));
	CHECK_EQ(n, 5000);
	CHECK_EQ(r4_io_read(io, 4000, r, 2000), -EIO);
	CHECK_RC(r4_io_truncate(io, 20000));			/* regrow: the cut part is zero */
	CHECK_RC(r4_io_read(io, 4000, r, 2000));
	CHECK(!memcmp(r, w + 3900, 1000));
	CHECK(r[1000] == 0 && r[1999] == 0);
}

static void test_mem(void)
{
	struct r4_io *io = NULL, *io2 = NULL;
	char p[256];
	const uint8_t *d;
	uint64_t n;
	uint8_t r[16];

	CHECK_RC(r4_io_mem_new(0, &io));
	if (io)
		generic_rw(io, 0);
	r4_io_close(io);
	io = NULL;
	CHECK_RC(r4_io_mem_new(65536, &io));
	if (!io)
		return;
	generic_rw(io, 65536);
	d = r4_io_mem_data(io, &n);
	CHECK(d && n == 20000 && d[100] == (uint8_t)(131 + (0 >> 9)));
	path_in(p, sizeof(p), "mem.img");
	CHECK_RC(r4_io_mem_save(io, p));
	CHECK_RC(r4_io_mem_load(p, &io2));
	if (io2) {
		const uint8_t *d2 = r4_io_mem_data(io2, &n);

		CHECK(n == 20000 && !memcmp(d, d2, 20000));
		r4_io_close(io2);
	}
	path_in(p, sizeof(p), "missing.img");
	CHECK_EQ(r4_io_mem_load(p, &io2), -ENOENT);
	path_in(p, sizeof(p), "no/such/dir.img");
	CHECK_EQ(r4_io_mem_save(io, p), -ENOENT);
	r4_io_close(io);

	/* allocation failures: -ENOMEM, no leak, the image unchanged */
	io = NULL;
	r4_heap_fail_at(1);
	CHECK_EQ(r4_io_mem_new(10, &io), -ENOMEM);
	r4_heap_fail_at(2);
	CHECK_EQ(r4_io_mem_new(10, &io), -ENOMEM);
	r4_heap_fail_at(0);
	CHECK(io == NULL);
	CHECK_RC(r4_io_mem_new(10, &io));
	if (!io)
		return;
	r4_heap_fail_at(1);
	CHECK_EQ(r4_io_write(io, 1 << 20, "x", 1), -ENOMEM);
	r4_heap_fail_at(0);
	CHECK_RC(r4_io_size(io, &n));
	CHECK_EQ(n, 10);
	CHECK_RC(r4_io_read(io, 0, r, 10));
	r4_io_close(io);
	r4_io_close(NULL);
}

static void test_file(void)
{
	struct r4_io *io = NULL, *ro = NULL, *m = NULL;
	char p[256];
	uint8_t r[64];
	uint64_t n;
	int fd;

	path_in(p, sizeof(p), "file.img");
	CHECK_EQ(r4_io_file_open(p, R4_IO_RW, &io), -ENOENT);
	fd = open(p, O_CREAT | O_WRONLY, 0644);
	CHECK(fd >= 0);
	if (fd >= 0)
		close(fd);
	CHECK_RC(r4_io_file_open(p, R4_IO_RW, &io));
	if (!io)
		return;
	generic_rw(io, 0);
	/* writev: the buffers one after another, 300 KiB of them (a batch
	 * big enough to start its writeback early), read back */
	{
		static uint8_t a[100 << 10], b[200 << 10], back[sizeof(a) + sizeof(b)];
		struct iovec v[] = {{a, sizeof(a)}, {b, sizeof(b)}};

		memset(a, 'a', sizeof(a));
		memset(b, 'b', sizeof(b));
		CHECK_RC(r4_io_writev(io, 1 << 20, v, 2));
		CHECK_RC(r4_io_sync(io));
		CHECK_RC(r4_io_read(io, 1 << 20, back, sizeof(back)));
		CHECK(!memcmp(back, a, sizeof(a)) && !memcmp(back + sizeof(a), b, sizeof(b)));
		CHECK_RC(r4_io_truncate(io, 20000));
	}
	r4_io_close(io);

	CHECK_RC(r4_io_file_open(p, 0, &ro));
	if (ro) {
		CHECK_RC(r4_io_size(ro, &n));
		CHECK_EQ(n, 20000);
		CHECK_EQ(r4_io_writev(ro, 0, &(struct iovec){r, 1}, 1), -EBADF);
		CHECK_RC(r4_io_read(ro, 100, r, 64));
		CHECK_EQ(r4_io_write(ro, 0, r, 1), -EBADF);
		CHECK_EQ(r4_io_truncate(ro, 0), -EBADF);
		CHECK_RC(r4_io_sync(ro));
		r4_io_close(ro);
	}
	/* the file and a memory copy of it agree */
	CHECK_RC(r4_io_mem_load(p, &m));
	if (m) {
		uint8_t a[20000], b[20000];

		CHECK_RC(r4_io_read(m, 0, a, sizeof(a)));
		CHECK_RC(r4_io_file_open(p, 0, &ro));
		if (ro) {
			CHECK_RC(r4_io_read(ro, 0, b, sizeof(b)));
			CHECK(!memcmp(a, b, sizeof(a)));
			r4_io_close(ro);
		}
		r4_io_close(m);
	}
	CHECK_EQ(r4_io_file_open(tmpdir, 0, &ro), -EISDIR);
	/* a character device is neither a file nor a block device */
	CHECK_EQ(r4_io_file_open("/dev/null", 0, &ro), -EINVAL);
	unlink(p);
	r4_heap_fail_at(1);
	CHECK_EQ(r4_io_file_open(p, 0, &ro), -ENOMEM);
	r4_heap_fail_at(0);
}

static void test_fault_fail(void)
{
	struct r4_io *inner = NULL, *f = NULL;
	struct r4_io_fault_stats st;
	uint8_t b[512], r[512];

	CHECK_RC(r4_io_mem_new(1 << 16, &inner));
	CHECK_EQ(r4_io_fault_wrap(NULL, &f), -EINVAL);
	CHECK_RC(r4_io_fault_wrap(inner, &f));
	if (!f)
		goto out;
	fill(b, sizeof(b), 3);
	CHECK_RC(r4_io_write(f, 0, b, 512));		/* pass-through */
	CHECK_RC(r4_io_read(f, 0, r, 512));
	CHECK(!memcmp(b, r, 512));

	r4_io_fault_fail(f, R4_IO_FAULT_WRITE, 3, -ENOSPC, false);	/* the third write, once */
	CHECK_RC(r4_io_write(f, 512, b, 512));
	CHECK_RC(r4_io_write(f, 1024, b, 512));
	CHECK_EQ(r4_io_write(f, 1536, b, 512), -ENOSPC);
	CHECK_RC(r4_io_read(inner, 1536, r, 512));
	CHECK(r[0] == 0 && r[511] == 0);		/* the failed write changed nothing */
	CHECK_RC(r4_io_write(f, 1536, b, 512));

	r4_io_fault_fail(f, R4_IO_FAULT_READ, 2, -EIO, true);	/* from the second read on */
	CHECK_RC(r4_io_read(f, 0, r, 512));
	CHECK_EQ(r4_io_read(f, 0, r, 512), -EIO);
	CHECK_EQ(r4_io_read(f, 0, r, 512), -EIO);
	r4_io_fault_fail(f, R4_IO_FAULT_READ, 0, 0, false);	/* disarm */
	CHECK_RC(r4_io_read(f, 0, r, 512));

	r4_io_fault_fail(f, R4_IO_FAULT_SYNC, 1, -EROFS, false);
	CHECK_EQ(r4_io_sync(f), -EROFS);
	CHECK_RC(r4_io_sync(f));

	r4_io_fault_stats(f, &st);
	CHECK_EQ(st.fs_reads, 5);
	CHECK_EQ(st.fs_writes, 5);
	CHECK_EQ(st.fs_syncs, 2);
	CHECK_EQ(st.fs_failed, 4);
	CHECK(!st.fs_crashed && st.fs_pending == 0);
	r4_io_fault_stats(inner, &st);			/* not a fault io: zeroes */
	CHECK_EQ(st.fs_writes, 0);
	r4_io_close(f);					/* inner stays open */
	CHECK_RC(r4_io_read(inner, 0, r, 512));
	CHECK(!memcmp(b, r, 512));
out:
	r4_io_close(inner);
}

static void test_fault_record(void)
{
	struct r4_io *inner = NULL, *f = NULL;
	struct r4_io_fault_stats st;
	uint8_t b[4096], r[4096];
	uint64_t n;

	CHECK_RC(r4_io_mem_new(8192, &inner));
	CHECK_RC(r4_io_fault_wrap(inner, &f));
	if (!f)
		goto out;
	r4_io_fault_record(f, true);
	fill(b, sizeof(b), 5);
	CHECK_RC(r4_io_write(f, 4096, b, 4096));
	CHECK_RC(r4_io_write(f, 10000, b, 100));	/* past inner's end */
	CHECK_RC(r4_io_write(f, 4096 + 10, "abc", 3));	/* overlaps, later wins */
	CHECK_RC(r4_io_read(inner, 4096, r, 4096));
	CHECK(r[0] == 0 && r[4095] == 0);		/* inner untouched before sync */
	CHECK_RC(r4_io_read(f, 4096, r, 4096));
	CHECK(!memcmp(r, b, 10) && !memcmp(r + 10, "abc", 3) && !memcmp(r + 13, b + 13, 4083));
	CHECK_RC(r4_io_size(f, &n));
	CHECK_EQ(n, 10100);
	CHECK_RC(r4_io_read(f, 9000, r, 1100));		/* the gap reads zero */
	CHECK(r[0] == 0 && !memcmp(r + 1000, b, 100));
	CHECK_EQ(r4_io_read(f, 10000, r, 101), -EIO);
	r4_io_fault_stats(f, &st);
	CHECK_EQ(st.fs_pending, 3);
	r4_io_fault_fail(f, R4_IO_FAULT_SYNC, 1, -EIO, false);
	CHECK_EQ(r4_io_sync(f), -EIO);			/* failed sync: still pending */
	r4_io_fault_stats(f, &st);
	CHECK_EQ(st.fs_pending, 3);
	CHECK_RC(r4_io_sync(f));
	r4_io_fault_stats(f, &st);
	CHECK_EQ(st.fs_pending, 0);
	CHECK_RC(r4_io_read(inner, 4096, r, 4096));
	CHECK(!memcmp(r + 10, "abc", 3) && r[20] == b[20]);
	CHECK_RC(r4_io_size(inner, &n));
	CHECK_EQ(n, 10100);
	/* unsynced writes are lost on close */
	CHECK_RC(r4_io_write(f, 0, b, 16));
	r4_io_close(f);
	f = NULL;
	CHECK_RC(r4_io_read(inner, 0, r, 16));
	CHECK(r[0] == 0 && r[15] == 0);
	/* recording off applies what is kept */
	CHECK_RC(r4_io_fault_wrap(inner, &f));
	if (!f)
		goto out;
	r4_io_fault_record(f, true);
	CHECK_RC(r4_io_write(f, 0, b, 16));
	r4_io_fault_record(f, false);
	CHECK_RC(r4_io_read(inner, 0, r, 16));
	CHECK(!memcmp(r, b, 16));
	r4_heap_fail_at(1);
	r4_io_fault_record(f, true);
	CHECK_EQ(r4_io_write(f, 0, b, 16), -ENOMEM);
	r4_heap_fail_at(0);
out:
	r4_io_close(f);
	r4_io_close(inner);
}

enum { NW = 12, WLEN = 2048, SYNC_AFTER = 4 };

/* Write NW blocks of pattern i+1 at offsets i*3000 (unaligned, no overlap),
 * sync after SYNC_AFTER, crash after write k; check the survivors. */
static int crash_run(uint64_t k, uint64_t seed, bool tear, uint8_t *img, size_t imglen,
		     struct r4_io_fault_stats *stp)
{
	struct r4_io *inner = NULL, *f = NULL;
	uint8_t b[WLEN];
	int bad = 0;

	if (r4_io_mem_new(imglen, &inner) || r4_io_fault_wrap(inner, &f))
		return 1000;
	r4_io_fault_crash_at(f, k, seed, tear);
	for (uint64_t i = 0; i < NW; i++) {
		int rc;

		memset(b, (int)(i + 1), sizeof(b));
		rc = r4_io_write(f, i * 3000, b, sizeof(b));
		bad += i < k ? rc != 0 : rc != -EIO;
		if (i + 1 == SYNC_AFTER)
			bad += (r4_io_sync(f) != 0) != (k <= SYNC_AFTER);	/* dead by then? */
	}
	bad += r4_io_sync(f) != -EIO;			/* dead after the crash */
	r4_io_fault_stats(f, stp);
	bad += !stp->fs_crashed;
	bad += r4_io_read(inner, 0, img, imglen) != 0;
	for (uint64_t i = 0; i < NW; i++) {
		const uint8_t *p = img + i * 3000;
		bool synced = i < SYNC_AFTER && k > SYNC_AFTER;

		if (i >= k) {				/* never written */
			for (int j = 0; j < WLEN; j++)
				bad += p[j] != 0;
			continue;
		}
		if (synced) {
			for (int j = 0; j < WLEN; j++)
				bad += p[j] != i + 1;
			continue;
		}
		/* unsynced: whole or nothing; torn last: whole or nothing per sector */
		uint64_t at = i * 3000, end = at + WLEN;
		bool whole = tear && i + 1 == k;
		uint8_t v0 = p[0];

		while (at < end) {
			uint64_t nx = R4_MIN((at / 512 + 1) * 512, end);
			uint8_t v = img[at];

			if (!whole)
				bad += v != v0;
			bad += v != 0 && v != i + 1;
			for (uint64_t j = at; j < nx; j++)
				bad += img[j] != v;
			at = nx;
		}
	}
	r4_io_close(f);
	r4_io_close(inner);
	return bad;
}

static void test_crash(void)
{
	static uint8_t img[NW * 3000], img2[NW * 3000];
	struct r4_io_fault_stats st;
	uint64_t applied = 0, dropped = 0, torn = 0;
	int bad = 0;

	for (uint64_t k = 1; k <= NW; k++)
		for (uint64_t seed = 1; seed <= 40; seed++)
			for (int tear = 0; tear < 2; tear++) {
				bad += crash_run(k, seed, tear, img, sizeof(img), &st);
				applied += st.fs_applied;
				dropped += st.fs_dropped;
				torn += st.fs_torn_sectors;
				CHECK_EQ(st.fs_writes, NW);
			}
	CHECK_EQ(bad, 0);
	CHECK(applied > 0 && dropped > 0 && torn > 0);	/* both outcomes happen */
	/* the same seed replays the same image; another seed differs somewhere */
	bad = crash_run(10, 77, true, img, sizeof(img), &st);
	bad += crash_run(10, 77, true, img2, sizeof(img2), &st);
	CHECK_EQ(bad, 0);
	CHECK(!memcmp(img, img2, sizeof(img)));
	bool differs = false;
	for (uint64_t seed = 1; seed < 20 && !differs; seed++) {
		crash_run(10, 77 + seed, true, img2, sizeof(img2), &st);
		differs = memcmp(img, img2, sizeof(img)) != 0;
	}
	CHECK(differs);
	printf("crash: %llu writes applied, %llu dropped, %llu sectors torn off\n",
	       (unsigned long long)applied, (unsigned long long)dropped, (unsigned long long)torn);
}

static void test_crash_now(void)
{
	struct r4_io *inner = NULL, *f = NULL;
	struct r4_io_fault_stats st;
	uint8_t b[1024], r[1024];
	int applied = 0;

	for (uint64_t seed = 0; seed < 16; seed++) {
		CHECK_RC(r4_io_mem_new(4096, &inner));
		CHECK_RC(r4_io_fault_wrap(inner, &f));
		if (!f)
			break;
		r4_io_fault_record(f, true);
		memset(b, 0x5a, sizeof(b));
		CHECK_RC(r4_io_write(f, 512, b, sizeof(b)));
		r4_io_fault_crash_now(f, seed, false);
		r4_io_fault_stats(f, &st);
		CHECK(st.fs_crashed && st.fs_applied + st.fs_dropped == 1);
		CHECK_EQ(r4_io_read(f, 0, r, 1), -EIO);
		CHECK_EQ(r4_io_write(f, 0, r, 1), -EIO);
		CHECK_RC(r4_io_read(inner, 512, r, sizeof(r)));
		CHECK(r[0] == r[1023] && (r[0] == 0 || r[0] == 0x5a));
		applied += r[0] == 0x5a;
		r4_io_close(f);
		r4_io_close(inner);
		f = inner = NULL;
	}
	CHECK(applied > 0 && applied < 16);
}

/* The log's last line (the partition errors' words). */
static char said[256];

static void say(void *ctx, int level, const char *msg)
{
	(void)ctx;
	(void)level;
	snprintf(said, sizeof(said), "%s", msg);
}

/* A partition's window (io_volume.c): an MBR made by hand, partition 1 at
 * sector 8 for 16 sectors; reads and writes land inside it, never past. */
static void test_partition(void)
{
	struct r4_logger lg = {.fn = say};
	uint8_t mbr[512] = {0}, w[4096], r[4096], out[16384];
	struct r4_io *io = NULL, *raw = NULL;
	uint64_t n = 0;
	char p[256];

	path_in(p, sizeof(p), "disk.img");
	unlink(p);
	CHECK_RC(r4_io_file_open(p, R4_IO_RW | R4_IO_CREATE, &raw));
	CHECK_RC(r4_io_truncate(raw, 64 * 512));
	mbr[446 + 4] = 0x83;				/* entry 1: Linux */
	r4_le32_put(mbr + 446 + 8, 8);			/* its first sector */
	r4_le32_put(mbr + 446 + 12, 16);		/* its sectors */
	mbr[510] = 0x55;
	mbr[511] = 0xaa;
	CHECK_RC(r4_io_write(raw, 0, mbr, sizeof(mbr)));
	memset(out, 0xee, sizeof(out));
	CHECK_RC(r4_io_write(raw, 24 * 512, out, sizeof(out)));	/* after the partition */
	r4_io_close(raw);

	CHECK_EQ(r4_io_open(p, 0, 2, &lg, &io), -ENXIO);
	snprintf((char *)out, sizeof(out), "'%s' has no partition 2 (it has 1)", p);
	CHECK(!strcmp(said, (char *)out));
	CHECK_RC(r4_io_open(p, R4_IO_RW, 1, &lg, &io));
	CHECK_RC(r4_io_size(io, &n));
	CHECK_EQ(n, 16 * 512);
	fill(w, sizeof(w), 3);
	CHECK_RC(r4_io_write(io, 8192 - 4096, w, 4096));	/* the last 4 KiB */
	CHECK_EQ(r4_io_write(io, 8192 - 4095, w, 4096), -ENOSPC);
	CHECK_EQ(r4_io_read(io, 8192 - 4095, r, 4096), -EIO);
	CHECK_EQ(r4_io_truncate(io, 1 << 20), -EINVAL);
	CHECK_RC(r4_io_read(io, 8192 - 4096, r, 4096));
	CHECK(!memcmp(w, r, sizeof(r)));
	CHECK_RC(r4_io_sync(io));
	r4_io_close(io);
	CHECK_RC(r4_io_file_open(p, 0, &raw));
	CHECK_RC(r4_io_read(raw, 16 * 512, r, 4096));	/* at sector 8 + 8 */
	CHECK(!memcmp(w, r, sizeof(r)));
	CHECK_RC(r4_io_read(raw, 24 * 512, r, 4096));
	CHECK(r[0] == 0xee && r[4095] == 0xee);
	r4_io_close(raw);
	unlink(p);
}

int main(void)
{
	snprintf(tmpdir, sizeof(tmpdir), "%s/r4io.XXXXXX", t_tmp());
	if (!mkdtemp(tmpdir)) {
		perror("mkdtemp");
		return 1;
	}
	test_mem();
	test_file();
	test_fault_fail();
	test_fault_record();
	test_crash();
	test_crash_now();
	test_partition();
	{
		char p[256];

		path_in(p, sizeof(p), "mem.img");
		unlink(p);
		rmdir(tmpdir);
	}
	return T_DONE();
}
