/*
 * test_delay.c - delayed allocation of data blocks (issue 3): nothing gets
 * a block number before commit; at commit each file's new data is placed
 * in one run after its previous block, so files written in turns, or
 * appended over several transactions, stay contiguous; data written and
 * dropped in one transaction never costs a block; overwrites leave the map
 * alone.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cache.h"
#include "db.h"
#include "obj.h"
#include "t.h"

static char dir[64], img[128];
static uint8_t chunk[65536];

/* Units of a file's extent map; -1 when it cannot be read. */
static long units(r4_db *db, const char *path, struct r4_extent *first, size_t *nfake)
{
	struct r4_inode ino;
	struct r4_extent *e = NULL;
	size_t n = 0;

	if (r4_fs_resolve(db, path, &ino))
		return -1;
	if (r4_reg_map(db, &ino, &e, &n)) {
		r4_obj_fini(&ino);
		return -1;
	}
	*nfake = 0;
	for (size_t i = 0; i < n; i++)
		*nfake += (e[i].ex_start & R4_FAKE_DATA) == R4_FAKE_DATA;
	if (n && first)
		*first = e[0];
	r4_free(e);
	r4_obj_fini(&ino);
	return (long)n;
}

static uint64_t bfree(r4_db *db)
{
	struct r4_statfs sf;

	CHECK_RC(r4_statfs(db, &sf));
	return sf.bfree;
}

int main(void)
{
	struct r4_open_opts oo = {.rw = true};
	struct r4_extent a, b;
	size_t fake, n;
	uint8_t got[65536];
	r4_db *db = NULL;

	snprintf(dir, sizeof(dir), "%s/r4-delay.XXXXXX", t_tmp());
	if (!mkdtemp(dir))
		return 2;
	snprintf(img, sizeof(img), "%s/d.img", dir);
	for (size_t i = 0; i < sizeof(chunk); i++)
		chunk[i] = (uint8_t)(i * 13 + 5);
	CHECK_RC(r4_mkfs(img, 64u << 20, NULL));
	CHECK_RC(r4_open(img, &oo, &db));
	if (!db)
		return T_DONE();

	/* two files written in turns, 32 chunks of 64 KiB each, one transaction */
	CHECK_RC(r4_begin(db));
	CHECK_RC(r4_create(db, "/a", 0644, 0, 0));
	CHECK_RC(r4_create(db, "/b", 0644, 0, 0));
	uint64_t free0 = bfree(db);
	for (unsigned i = 0; i < 32; i++) {
		CHECK_RC(r4_write(db, "/a", i * sizeof(chunk), chunk, sizeof(chunk)));
		CHECK_RC(r4_write(db, "/b", i * sizeof(chunk), chunk, sizeof(chunk)));
	}
	CHECK_EQ(units(db, "/a", &a, &fake), 32);	/* fake runs, in turns with /b's */
	CHECK_EQ(fake, 32);
	CHECK(bfree(db) < free0);	/* counted as used already */
	CHECK_RC(r4_commit(db));
	CHECK_EQ(units(db, "/a", &a, &fake), 1);
	CHECK_EQ(fake, 0);
	CHECK_EQ(a.ex_width, 512);
	CHECK_EQ(units(db, "/b", &b, &fake), 1);
	CHECK_EQ(b.ex_width, 512);
	CHECK(a.ex_start + a.ex_width == b.ex_start || b.ex_start + b.ex_width == a.ex_start);

	/* appended over four transactions: still one run */
	for (unsigned t = 0; t < 4; t++) {
		CHECK_RC(r4_begin(db));
		CHECK_RC(r4_write(db, "/b", (32 + t) * sizeof(chunk), chunk, sizeof(chunk)));
		CHECK_RC(r4_create(db, t == 0 ? "/x0" : t == 1 ? "/x1" : t == 2 ? "/x2" : "/x3",
				   0644, 0, 0));
		CHECK_RC(r4_commit(db));
	}
	CHECK_EQ(units(db, "/b", &b, &fake), 1);
	CHECK_EQ(b.ex_width, 512 + 64);

	/* written and truncated away before commit: no block spent on data */
	uint64_t free1 = bfree(db);
	CHECK_RC(r4_begin(db));
	for (unsigned i = 0; i < 16; i++)
		CHECK_RC(r4_write(db, "/a", (32 + i) * sizeof(chunk), chunk, sizeof(chunk)));
	CHECK_RC(r4_truncate(db, "/a", 32 * sizeof(chunk)));
	CHECK_RC(r4_commit(db));
	CHECK_EQ(units(db, "/a", &a, &fake), 1);
	CHECK_EQ(a.ex_width, 512);
	CHECK(free1 - bfree(db) <= 2);	/* a node or two at most */

	/* one overwritten block goes through the journal: the map stays */
	struct r4_extent a0 = a;
	CHECK_RC(r4_begin(db));
	CHECK_RC(r4_write(db, "/a", 77 * 4096 + 100, chunk, 3000));
	/* a read of a run of blocks around it before the commit: the pending
	 * block's new bytes amid the others' (read in one call each side) */
	CHECK_RC(r4_read(db, "/a", 70 * 4096, got, 16 * 4096, &n));
	CHECK_EQ(n, 16 * 4096);
	size_t bad = 0;

	for (size_t x = 70 * 4096; x < 86 * 4096 && !bad; x++) {
		size_t w = x - (77 * 4096 + 100);
		uint8_t want = x >= 77 * 4096 + 100 && w < 3000 ? chunk[w] : chunk[x % sizeof(chunk)];

		if (got[x - 70 * 4096] != want)
			bad = x;	/* the first wrong byte */
	}
	CHECK_EQ(bad, 0);
	CHECK_RC(r4_commit(db));
	CHECK_EQ(units(db, "/a", &a, &fake), 1);
	CHECK(a.ex_start == a0.ex_start && a.ex_width == a0.ex_width);

	/* many in one extent item are relocated: written once, elsewhere; the
	 * old blocks are free again, the space used the same */
	uint64_t free2 = bfree(db);
	struct r4_stat st0, st1;
	CHECK_RC(r4_stat(db, "/a", &st0));
	CHECK_RC(r4_begin(db));
	for (unsigned i = 0; i < 40; i++)
		CHECK_RC(r4_write(db, "/a", (i * 7919u % 500) * 4096 + 100, chunk, 5000));
	CHECK_RC(r4_commit(db));
	CHECK(units(db, "/a", &a, &fake) > 40);
	CHECK_EQ(fake, 0);
	CHECK_EQ(bfree(db), free2);
	CHECK_RC(r4_stat(db, "/a", &st1));
	CHECK_EQ(st1.blocks, st0.blocks);
	for (unsigned i = 0; i < 40; i++) {
		CHECK_RC(r4_read(db, "/a", (i * 7919u % 500) * 4096 + 100, got, 5000, &n));
		CHECK(n == 5000 && !memcmp(got, chunk, 5000));
	}
	CHECK_RC(r4_read(db, "/a", 1000 * 4096 / 2, got, 100, &n));	/* untouched: block 250 */
	CHECK(n == 100 && !memcmp(got, chunk + (250 * 4096) % sizeof(chunk), 100));

	/* a transaction bigger than memory (the bound: 256 blocks): new data is
	 * placed and written out early; pages never pile up past the bound
	 * plus one write's worth */
	r4_close(db);
	db = NULL;
	struct r4_open_opts small = {.rw = true, .cache_nodes = 256};
	CHECK_RC(r4_open(img, &small, &db));
	if (!db)
		return T_DONE();
	static uint8_t mib[1 << 20];
	size_t peak = 0;
	CHECK_RC(r4_begin(db));
	CHECK_RC(r4_create(db, "/big", 0644, 0, 0));
	for (unsigned i = 0; i < 40; i++) {
		memset(mib, (int)(i + 1), sizeof(mib));
		CHECK_RC(r4_write(db, "/big", (uint64_t)i << 20, mib, sizeof(mib)));
		peak = db->npages > peak ? db->npages : peak;
	}
	CHECK(db->spilled > 0);
	CHECK(peak <= 256 + 256);
	printf("40 MiB in one transaction, bound 256 blocks: peak %zu pending pages, %llu "
	       "written early\n", peak, (unsigned long long)db->spilled);
	CHECK_RC(r4_write(db, "/big", 5u << 20, "changed", 7));	/* a page written out, rewritten */
	CHECK_RC(r4_commit(db));
	r4_close(db);
	db = NULL;
	CHECK_RC(r4_open(img, &oo, &db));
	if (!db)
		return T_DONE();
	bool same = true;
	for (unsigned i = 0; i < 40 && same; i++) {
		uint8_t want[4096];

		memset(want, (int)(i + 1), sizeof(want));
		if (i == 5)
			memcpy(want, "changed", 7);
		CHECK_RC(r4_read(db, "/big", (uint64_t)i << 20, got, 4096, &n));
		same = n == 4096 && !memcmp(got, want, 4096);
		memset(want, (int)(i + 1), sizeof(want));
		CHECK_RC(r4_read(db, "/big", ((uint64_t)i << 20) + 1044480, got, 4096, &n));
		same = same && n == 4096 && !memcmp(got, want, 4096);
	}
	CHECK(same);
	CHECK_EQ(units(db, "/big", &a, &fake), 1);

	/* dirty nodes under the bound too: 6000 files in one transaction with
	 * 64 nodes of cache; once aborted (nothing of it visible, the checker
	 * clean), once committed (all there) */
	r4_close(db);
	db = NULL;
	struct r4_open_opts tiny = {.rw = true, .cache_nodes = 64};
	CHECK_RC(r4_open(img, &tiny, &db));
	if (!db)
		return T_DONE();
	uint64_t free3 = bfree(db);
	for (int pass = 0; pass < 2; pass++) {
		size_t dpeak = 0;
		char name[64];

		CHECK_RC(r4_begin(db));
		CHECK_RC(r4_mkdir(db, "/many", 0755, 0, 0));
		for (unsigned i = 0; i < 6000; i++) {
			snprintf(name, sizeof(name), "/many/file-%05u", i);
			CHECK_RC(r4_create(db, name, 0644, 0, 0));
			CHECK_RC(r4_write(db, name, 0, name, strlen(name)));
			dpeak = db->cache.ndirty > dpeak ? db->cache.ndirty : dpeak;
		}
		CHECK(db->flushed_early > 0);
		CHECK(dpeak <= 64 + 8);
		printf("6000 files in one transaction, 64 nodes of cache: peak %zu dirty nodes, "
		       "%llu written early (%s)\n", dpeak, (unsigned long long)db->flushed_early,
		       pass ? "committed" : "aborted");
		if (pass == 0) {
			r4_abort(db);
			struct r4_stat st;
			CHECK_EQ(r4_stat(db, "/many", &st), -ENOENT);
			CHECK_EQ(bfree(db), free3);
		} else {
			CHECK_RC(r4_commit(db));
		}
		struct r4_check_result res;
		CHECK_RC(r4_check(db, NULL, &res));
		CHECK_EQ(res.problems, 0);
	}
	r4_close(db);
	db = NULL;
	CHECK_RC(r4_open(img, &oo, &db));
	if (!db)
		return T_DONE();
	bool all = true;
	for (unsigned i = 0; i < 6000 && all; i++) {
		char name[64];

		snprintf(name, sizeof(name), "/many/file-%05u", i);
		all = !r4_read(db, name, 0, got, sizeof(got), &n) && n == strlen(name) &&
		      !memcmp(got, name, n);
	}
	CHECK(all);

	/* and everything reads back */
	CHECK_RC(r4_read(db, "/b", 35 * sizeof(chunk), got, sizeof(got), &n));
	CHECK(n == sizeof(got) && !memcmp(got, chunk, n));
	r4_close(db);
	CHECK_EQ(t_fsck(img), 1);
	if (!getenv("R4_KEEP"))
		t_rmdir(dir);
	return T_DONE();
}
