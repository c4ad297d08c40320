/*
 * test_alloc.c - the bitmap allocator (engine/alloc.c).
 *
 * Allocation order, hints and wrapping, -ENOSPC, deferred frees (never
 * reused before commit), release, commit emitting exactly the changed
 * bitmap blocks with valid checksums, abort restoring the committed state,
 * emit failure leaving it intact, allocation-failure sweeps, a randomized
 * run against a trivial model (R4_SEED replays), speed on a 256 GiB
 * volume, rejection of every single-bit flip of a bitmap block, and
 * fixtures from mkfs.reiser4 (64 MiB, 1 GiB, 3 GiB): the loaded bitmap is
 * exactly what mkfs marks, and rebuilding it with r4_alloc_new plus
 * r4_format_fresh_used gives mkfs's bitmap blocks byte for byte.
 */
#include "alloc.h"
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

/* emit into an io, counting blocks and checking each checksum */
struct sink {
	struct r4_io *io;
	int n;
	uint64_t last;
	int fail_at;		/* fail the nth emit with -EIO, 0 = never */
	bool bad_csum;
};

static int emit_io(void *ctx, uint64_t blk, const uint8_t *buf)
{
	struct sink *s = ctx;

	if (++s->n == s->fail_at)
		return -EIO;
	if (r4_le32_get(buf) != r4_adler32(buf + 4, 4092))
		s->bad_csum = true;
	s->last = blk;
	return s->io ? r4_io_write(s->io, blk * 4096, buf, 4096) : 0;
}

static void test_basic(void)
{
	const uint64_t blocks = 100000;		/* 4 zones, the last partial */
	struct r4_alloc *a = NULL, *b = NULL;
	struct r4_io *io = NULL;
	struct sink s = {0};
	uint64_t st, got, free0;

	CHECK_EQ(r4_alloc_new(4096, 0, &a), -EINVAL);
	CHECK_EQ(r4_alloc_new(1000, blocks, &a), -EINVAL);
	CHECK_RC(r4_alloc_new(4096, blocks, &a));
	if (!a)
		return;
	/* block 0 and the bitmaps of zones 1..3 are used; 18 too (zone 0's bitmap) */
	CHECK_EQ(r4_alloc_free_count(a), blocks - 5);
	CHECK(r4_alloc_is_used(a, 0) && r4_alloc_is_used(a, 18) && r4_alloc_is_used(a, 32736));
	CHECK(r4_alloc_is_used(a, 98208) && !r4_alloc_is_used(a, 1) && !r4_alloc_is_used(a, 99999));
	CHECK(r4_alloc_is_used(a, blocks) && r4_alloc_is_used(a, UINT64_MAX));
	r4_alloc_mark_used(a, 0, 22);
	CHECK_EQ(r4_alloc_free_count(a), blocks - 3 - 22);	/* 0 and 18 were used */
	free0 = r4_alloc_free_count(a);

	CHECK_RC(r4_alloc_alloc(a, 22, 1, &st, &got));
	CHECK(st == 22 && got == 1);
	CHECK_RC(r4_alloc_alloc(a, 0, 10, &st, &got));
	CHECK(st == 23 && got == 10);
	CHECK_RC(r4_alloc_alloc(a, 32730, 100, &st, &got));	/* runs stop at a used block */
	CHECK(st == 32730 && got == 6);
	CHECK_RC(r4_alloc_alloc(a, 32736, 100, &st, &got));
	CHECK(st == 32737 && got == 100);
	CHECK_RC(r4_alloc_alloc(a, UINT64_MAX, 5, &st, &got));	/* cursor */
	CHECK(st == 32837 && got == 5);
	CHECK_RC(r4_alloc_alloc(a, 99998, 10, &st, &got));	/* the end stops a run */
	CHECK(st == 99998 && got == 2);
	CHECK_RC(r4_alloc_alloc(a, 99999, 1, &st, &got));	/* wraps round */
	CHECK(st == 33 && got == 1);
	CHECK_EQ(r4_alloc_alloc(a, 0, 0, &st, &got), -EINVAL);
	CHECK_RC(r4_alloc_alloc_high(a, 4, &st, &got));	/* the top: 99998..99999 are taken */
	CHECK(st == 99994 && got == 4);
	CHECK_RC(r4_alloc_alloc(a, UINT64_MAX, 1, &st, &got));	/* the cursor did not move */
	CHECK(st == 34 && got == 1);
	r4_alloc_release(a, 99994, 4);
	r4_alloc_release(a, 34, 1);
	CHECK_EQ(r4_alloc_free_count(a), free0 - 1 - 10 - 6 - 100 - 5 - 2 - 1);

	/* first commit after new: every bitmap block, ascending */
	CHECK_RC(r4_io_mem_new(blocks * 4096, &io));
	s.io = io;
	CHECK_RC(r4_alloc_commit(a, emit_io, &s));
	CHECK(s.n == 4 && s.last == 98208 && !s.bad_csum);
	CHECK_EQ(r4_alloc_committed_free_count(a), r4_alloc_free_count(a));
	s.n = 0;
	CHECK_RC(r4_alloc_commit(a, emit_io, &s));
	CHECK_EQ(s.n, 0);			/* nothing changed */
	r4_alloc_mark_used(a, 22, 1);		/* touched but unchanged */
	CHECK_RC(r4_alloc_commit(a, emit_io, &s));
	CHECK_EQ(s.n, 0);

	/* deferred free: used until commit, never handed out before */
	free0 = r4_alloc_free_count(a);
	r4_alloc_free(a, 23, 10);
	r4_alloc_free(a, 23, 10);		/* twice: counted once */
	r4_alloc_free(a, 200, 5);		/* already free: ignored */
	CHECK_EQ(r4_alloc_free_count(a), free0 + 10);
	CHECK(r4_alloc_is_used(a, 23) && r4_alloc_is_used(a, 32));
	CHECK_RC(r4_alloc_alloc(a, 23, 1, &st, &got));
	CHECK(st == 34 && got == 1);
	CHECK_EQ(r4_alloc_free_count(a), free0 + 9);
	CHECK_RC(r4_alloc_commit(a, emit_io, &s));
	CHECK(s.n == 1 && s.last == 18 && !s.bad_csum);
	CHECK(!r4_alloc_is_used(a, 23) && r4_alloc_is_used(a, 34));
	CHECK_EQ(r4_alloc_free_count(a), free0 + 9);
	CHECK_RC(r4_alloc_alloc(a, 23, 20, &st, &got));
	CHECK(st == 23 && got == 10);		/* reused after commit */

	/* abort: back to the last commit exactly */
	r4_alloc_free(a, 22, 1);
	r4_alloc_mark_used(a, 50000, 7);
	CHECK_RC(r4_alloc_alloc(a, 60000, 3, &st, &got));
	r4_alloc_abort(a);
	CHECK_EQ(r4_alloc_free_count(a), free0 + 9);
	CHECK(!r4_alloc_is_used(a, 23) && !r4_alloc_is_used(a, 50000));
	CHECK(!r4_alloc_is_used(a, 60000));
	CHECK(r4_alloc_is_used(a, 22));

	/* the image written by the emits loads to the same state */
	CHECK_RC(r4_alloc_load(io, &quiet, 4096, blocks, &b));
	if (b) {
		bool same = true;

		for (uint64_t i = 0; i < blocks + 70; i++)
			same &= r4_alloc_is_used(a, i) == r4_alloc_is_used(b, i);
		CHECK(same);
		CHECK_EQ(r4_alloc_free_count(b), r4_alloc_free_count(a));
	}
	r4_alloc_close(b);

	/* release: only blocks not in the committed bitmap */
	CHECK_RC(r4_alloc_alloc(a, 40000, 4, &st, &got));
	CHECK(st == 40000 && got == 4);
	free0 = r4_alloc_free_count(a);
	r4_alloc_release(a, 39990, 30);		/* 40000..40003 new; 32736.. committed: kept */
	CHECK_EQ(r4_alloc_free_count(a), free0 + 4);
	CHECK(!r4_alloc_is_used(a, 40000) && r4_alloc_is_used(a, 32737));
	r4_alloc_release(a, 32737, 1);
	CHECK(r4_alloc_is_used(a, 32737));
	free0 = r4_alloc_free_count(a);
	r4_alloc_free(a, 32737, 2);		/* marking again cancels a deferred free */
	r4_alloc_mark_used(a, 32738, 1);
	CHECK_EQ(r4_alloc_free_count(a), free0 + 1);
	r4_alloc_abort(a);

	/* emit failure: nothing applied, abort still restores */
	r4_alloc_free(a, 32737, 100);
	r4_alloc_mark_used(a, 70000, 1);
	s.n = 0;
	s.fail_at = 2;
	CHECK_EQ(r4_alloc_commit(a, emit_io, &s), -EIO);
	CHECK(r4_alloc_is_used(a, 32737) && r4_alloc_is_used(a, 70000));
	r4_alloc_abort(a);
	CHECK(r4_alloc_is_used(a, 32737) && !r4_alloc_is_used(a, 70000));
	s.fail_at = 0;
	r4_alloc_close(a);
	r4_io_close(io);
}

static void test_enospc(void)
{
	struct r4_alloc *a = NULL;
	uint64_t st, got, n = 0;

	CHECK_RC(r4_alloc_new(4096, 64, &a));
	if (!a)
		return;
	r4_alloc_mark_used(a, 0, 22);
	while (r4_alloc_alloc(a, 0, 3, &st, &got) == 0)
		n += got;
	CHECK_EQ(n, 64 - 22);
	CHECK_EQ(r4_alloc_free_count(a), 0);
	CHECK_EQ(r4_alloc_alloc(a, 5, 1, &st, &got), -ENOSPC);
	r4_alloc_free(a, 40, 2);
	CHECK_EQ(r4_alloc_alloc(a, 5, 1, &st, &got), -ENOSPC);	/* deferred: still full */
	CHECK_EQ(r4_alloc_free_count(a), 2);
	CHECK_RC(r4_alloc_commit(a, emit_io, &(struct sink){0}));
	CHECK_RC(r4_alloc_alloc(a, 5, 5, &st, &got));
	CHECK(st == 40 && got == 2);
	r4_alloc_close(a);
}

static void test_heap_failures(void)
{
	struct r4_alloc *a;
	int rc = -ENOMEM;
	unsigned long k;

	for (k = 1; k < 20 && rc == -ENOMEM; k++) {
		a = NULL;
		r4_heap_fail_at(k);
		rc = r4_alloc_new(4096, 100000, &a);
		r4_heap_fail_at(0);
		CHECK(rc == 0 || rc == -ENOMEM);
		CHECK(rc == 0 ? a != NULL : a == NULL);
		r4_alloc_close(a);
	}
	CHECK_EQ(rc, 0);
	CHECK(k > 5);		/* several allocations were each failed once */
}

/* Block 0 and the bitmap blocks: never freed. */
static bool pinned_blk(uint64_t b)
{
	return b == 0 || b == 18 || b % 32736 == 0;
}

/* Randomized: the allocator beside bool arrays (working, committed, deferred). */
static void test_model(unsigned long seed)
{
	enum { N = 70000 };	/* 3 zones */
	static bool work[N], comm[N], defr[N];
	struct r4_alloc *a = NULL, *b = NULL;
	struct r4_io *io = NULL;
	struct sink s = {0};
	uint64_t st, got;
	int bad = 0, op;

	srand((unsigned)seed);
	CHECK_RC(r4_alloc_new(4096, N, &a));
	CHECK_RC(r4_io_mem_new((uint64_t)N * 4096, &io));
	if (!a || !io)
		goto out;
	s.io = io;
	memset(work, 0, sizeof(work));
	memset(defr, 0, sizeof(defr));
	for (uint64_t i = 0; i < N; i++)
		work[i] = r4_alloc_is_used(a, i);
	memcpy(comm, work, sizeof(work));
	for (op = 0; op < 3000 && !bad; op++) {
		uint64_t x = (uint64_t)rand() % N, c = 1 + (uint64_t)rand() % 300;
		int r = rand() % 100;

		if (r < 40) {
			uint64_t want = 1 + (uint64_t)rand() % 50, exp = x;
			int rc = r4_alloc_alloc(a, x, want, &st, &got);

			while (exp < N && work[exp])
				exp++;
			if (exp == N)
				for (exp = 0; exp < x && work[exp]; exp++)
					;
			if (rc) {
				bad += rc != -ENOSPC || (exp < N && !work[exp]);
				continue;
			}
			bad += st != exp || got < 1 || got > want;
			for (uint64_t i = st; i < st + got; i++) {
				bad += work[i];
				work[i] = true;
			}
			bad += got < want && st + got < N && !work[st + got] ? 1 : 0;
		} else if (r < 48) {	/* from the top: ends at the highest free block */
			uint64_t want = 1 + (uint64_t)rand() % 50, hi = N;
			int rc = r4_alloc_alloc_high(a, want, &st, &got);

			while (hi > 0 && work[hi - 1])
				hi--;
			if (rc) {
				bad += rc != -ENOSPC || hi != 0;
				continue;
			}
			bad += st + got != hi || got < 1 || got > want;
			for (uint64_t i = st; i < st + got; i++) {
				bad += work[i];
				work[i] = true;
			}
			bad += got < want && st > 0 && !work[st - 1] ? 1 : 0;
		} else if (r < 65) {
			r4_alloc_free(a, x, c);
			for (uint64_t i = x; i < x + c && i < N; i++)
				if (work[i] && !pinned_blk(i))
					defr[i] = true;
		} else if (r < 75) {
			r4_alloc_mark_used(a, x, c);
			for (uint64_t i = x; i < x + c && i < N; i++) {
				work[i] = true;
				defr[i] = false;
			}
		} else if (r < 80) {
			r4_alloc_release(a, x, c);
			for (uint64_t i = x; i < x + c && i < N; i++)
				if (work[i] && !comm[i] && !defr[i] && !pinned_blk(i))
					work[i] = false;
		} else if (r < 92) {
			CHECK_RC(r4_alloc_commit(a, emit_io, &s));
			for (uint64_t i = 0; i < N; i++) {
				if (defr[i])
					work[i] = false;
				defr[i] = false;
			}
			memcpy(comm, work, sizeof(work));
		} else {
			r4_alloc_abort(a);
			memcpy(work, comm, sizeof(work));
			memset(defr, 0, sizeof(defr));
		}
		uint64_t nf = 0, runs = 0;
		for (uint64_t i = 0; i < N; i++) {
			bad += r4_alloc_is_used(a, i) != work[i];
			nf += !work[i] || defr[i];
			runs += !work[i] && (i == 0 || work[i - 1]);
		}
		bad += nf != r4_alloc_free_count(a);
		bad += runs != r4_alloc_runs(a);
	}
	if (bad)
		fprintf(stderr, "model: mismatch at op %d (R4_SEED=%lu)\n", op, seed);
	CHECK_EQ(bad, 0);
	/* the emitted image is the committed state */
	CHECK_RC(r4_alloc_load(io, &quiet, 4096, N, &b));
	if (b) {
		bad = 0;
		for (uint64_t i = 0; i < N; i++)
			bad += r4_alloc_is_used(b, i) != comm[i];
		CHECK_EQ(bad, 0);
		CHECK(!s.bad_csum);
	}
out:
	r4_alloc_close(b);
	r4_alloc_close(a);
	r4_io_close(io);
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void test_speed(void)
{
	const uint64_t blocks = UINT64_C(1) << 26;	/* 256 GiB of 4 KiB blocks */
	struct r4_alloc *a = NULL;
	uint64_t st, got, n = 0;
	double t0, t;
	bool ok = true;

	CHECK_RC(r4_alloc_new(4096, blocks, &a));
	if (!a)
		return;
	r4_alloc_mark_used(a, 0, blocks - 1000);	/* 999 free: one is a bitmap */
	CHECK_EQ(r4_alloc_free_count(a), 999);
	t0 = now_s();
	for (int i = 0; i < 999 && ok; i++) {
		ok = r4_alloc_alloc(a, 0, 1, &st, &got) == 0 && got == 1;
		n += ok;
		r4_alloc_free(a, st, 1);	/* deferred: the next search goes further */
	}
	ok = ok && r4_alloc_alloc(a, 0, 1, &st, &got) == -ENOSPC;
	t = now_s() - t0;
	CHECK(ok && n == 999);
	CHECK_EQ(r4_alloc_free_count(a), 999);
	printf("speed: 999 allocations from block 0 on a nearly full %llu-block volume: %.3f s\n",
	       (unsigned long long)blocks, t);
	CHECK(t < 2.0);
	r4_alloc_close(a);
}

/* ---- fixtures from mkfs.reiser4 ---- */

static bool have_mkfs(void)
{
	return !system("command -v mkfs.reiser4 >/dev/null 2>&1");
}

static int mark_cb(void *ctx, uint64_t start, uint64_t count)
{
	r4_alloc_mark_used(ctx, start, count);
	return 0;
}

/* compare emitted bitmap blocks with the image's */
struct cmp {
	struct r4_io *img;
	int n, same;
};

static int emit_cmp(void *ctx, uint64_t blk, const uint8_t *buf)
{
	struct cmp *c = ctx;
	uint8_t d[4096];

	c->n++;
	if (!r4_io_read(c->img, blk * 4096, d, 4096) && !memcmp(d, buf, 4096))
		c->same++;
	return 0;
}

static void bitflips(struct r4_io *io)
{
	struct r4_alloc *a = NULL;
	uint8_t blk[4096];
	int rejected = 0, badcsum = 0;

	CHECK_RC(r4_io_read(io, 18 * 4096, blk, 4096));
	nlog = 0;
	for (int bit = 0; bit < 4096 * 8; bit++) {
		int rc;

		blk[bit / 8] ^= (uint8_t)(1 << bit % 8);
		(void)r4_io_write(io, 18 * 4096, blk, 4096);
		rc = r4_alloc_load(io, &quiet, 4096, 16384, &a);
		rejected += rc != 0;
		badcsum += rc == -EBADMSG;
		r4_alloc_close(a);
		a = NULL;
		blk[bit / 8] ^= (uint8_t)(1 << bit % 8);
	}
	CHECK_EQ(rejected, 4096 * 8);
	CHECK_EQ(badcsum, 4096 * 8);
	CHECK_EQ(nlog, 4096 * 8);
	(void)r4_io_write(io, 18 * 4096, blk, 4096);
	CHECK_RC(r4_alloc_load(io, &quiet, 4096, 16384, &a));
	r4_alloc_close(a);
	a = NULL;
	/* bit 0 clear with a valid checksum: still refused */
	blk[4] &= 0xfe;
	r4_le32_put(blk, r4_adler32(blk + 4, 4092));
	(void)r4_io_write(io, 18 * 4096, blk, 4096);
	CHECK_EQ(r4_alloc_load(io, &quiet, 4096, 16384, &a), -EUCLEAN);
	CHECK(a == NULL);
	/* a short image: -EIO */
	CHECK_RC(r4_io_truncate(io, 10 * 4096));
	CHECK_EQ(r4_alloc_load(io, &quiet, 4096, 16384, &a), -EIO);
}

static void check_image(const char *path, uint64_t blocks)
{
	struct r4_alloc *a = NULL, *fresh = NULL;
	struct r4_io *io = NULL;
	struct cmp c = {0};
	uint8_t sbb[4096];
	struct r4_fsb sb;
	bool same = true;

	CHECK_RC(r4_io_file_open(path, 0, &io));
	if (!io)
		return;
	CHECK_RC(r4_io_read(io, 17 * 4096, sbb, 4096));
	CHECK_RC(r4_fsb_decode(NULL, sbb, 4096, &sb));
	CHECK_EQ(sb.sb_block_count, blocks);
	CHECK_RC(r4_alloc_load(io, NULL, 4096, blocks, &a));
	CHECK_RC(r4_alloc_new(4096, blocks, &fresh));
	if (!a || !fresh)
		goto out;
	CHECK_EQ(r4_alloc_free_count(a), sb.sb_free_blocks);
	/* what mkfs marks, then its tree: twig 23 and leaf 24 */
	CHECK_RC(r4_format_fresh_used(4096, blocks, mark_cb, fresh));
	r4_alloc_mark_used(fresh, 23, 2);
	for (uint64_t i = 0; i < blocks + 100; i++)
		same &= r4_alloc_is_used(a, i) == r4_alloc_is_used(fresh, i);
	CHECK(same);
	CHECK_EQ(r4_alloc_free_count(fresh), sb.sb_free_blocks);
	c.img = io;
	CHECK_RC(r4_alloc_commit(fresh, emit_cmp, &c));
	CHECK_EQ(c.n, (int)r4_format_bitmap_count(4096, blocks));
	CHECK_EQ(c.same, c.n);		/* byte for byte, checksums and 0xff tail included */
	c.n = 0;
	CHECK_RC(r4_alloc_commit(a, emit_cmp, &c));
	CHECK_EQ(c.n, 0);
	printf("%s: %llu blocks, %d bitmap blocks identical to mkfs.reiser4's\n",
	       strrchr(path, '/') + 1, (unsigned long long)blocks, c.same);
out:
	r4_alloc_close(fresh);
	r4_alloc_close(a);
	r4_io_close(io);
}

static void test_mkfs_images(void)
{
	static const struct {
		const char *name, *size;
		uint64_t blocks;
	} imgs[] = {
		{"a.img", "64M", 16384},
		{"b.img", "1G", 262144},
		{"c.img", "3G", 786432},
	};
	char dir[128], path[512], cmd[1536];

	if (!have_mkfs()) {
		printf("skip: mkfs.reiser4 not installed, no image fixtures\n");
		return;
	}
	snprintf(dir, sizeof(dir), "%s/r4alloc.XXXXXX", t_tmp());
	if (!mkdtemp(dir)) {
		CHECK(!"mkdtemp");
		return;
	}
	for (size_t i = 0; i < R4_ARRAY_SIZE(imgs); i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, imgs[i].name);
		snprintf(cmd, sizeof(cmd),
			 "truncate -s %s '%s' && mkfs.reiser4 -y -f -o create=reg40 "
			 "-U 01234567-89ab-cdef-0123-456789abcdef -L lbl '%s' >/dev/null 2>&1",
			 imgs[i].size, path, path);
		CHECK_EQ(system(cmd), 0);
		check_image(path, imgs[i].blocks);
		if (i == 0) {
			struct r4_io *mem = NULL;

			CHECK_RC(r4_io_mem_load(path, &mem));
			if (mem)
				bitflips(mem);
			r4_io_close(mem);
		}
		unlink(path);
	}
	rmdir(dir);
}

int main(void)
{
	unsigned long seed = t_seed();

	test_basic();
	test_enospc();
	test_heap_failures();
	test_model(seed);
	test_speed();
	test_mkfs_images();
	return T_DONE();
}
