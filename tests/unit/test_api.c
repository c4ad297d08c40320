/*
 * test_api.c - exact outcomes of the fs API's rules: errnos of refusals,
 * renameat2 flags (RENAME_WHITEOUT's whiteouts), nlink bookkeeping, st_blocks, nanosecond times, the
 * readdir cursor across changes, transactions (abort restores, a failure
 * after a change poisons), and images byte-for-byte untouched by a
 * refused or aborted change; the helpers r4.h offers programs too
 * (r4_grow, r4_quote_byte).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "t.h"

static char img[320];

static r4_db *fresh(void)
{
	struct r4_open_opts oo = {.rw = true};
	r4_db *db = NULL;

	CHECK_RC(r4_mkfs(img, 64u << 20, NULL));
	CHECK_RC(r4_open(img, &oo, &db));
	return db;
}

/* The same, files made compressed (ccreg40, mkfs.reiser4's default). */
static r4_db *fresh_ccreg(void)
{
	struct r4_open_opts oo = {.rw = true};
	struct r4_mkfs_opts mo;
	r4_db *db = NULL;

	r4_mkfs_defaults(&mo);
	mo.create = 4;
	CHECK_RC(r4_mkfs(img, 64u << 20, &mo));
	CHECK_RC(r4_open(img, &oo, &db));
	return db;
}

/* A cheap digest of the image file. */
static unsigned long long image_sum(void)
{
	FILE *f = fopen(img, "rb");
	unsigned long long h = 1469598103934665603ull;
	int c;

	if (!f)
		return 0;
	while ((c = getc(f)) != EOF)
		h = (h ^ (unsigned)c) * 1099511628211ull;
	fclose(f);
	return h;
}

static void test_refusals(r4_db *db)
{
	char longname[300];

	memset(longname, 'x', 257);	/* "/" and a 256-byte name */
	longname[0] = '/';
	longname[257] = 0;
	CHECK_EQ(r4_create(db, longname, 0644, 0, 0), -ENAMETOOLONG);
	CHECK_EQ(r4_create(db, "relative", 0644, 0, 0), -EINVAL);
	CHECK_RC(r4_mkdir(db, "/d", 0755, 1, 2));
	CHECK_RC(r4_create(db, "/d/f", 0600, 1, 2));
	CHECK_EQ(r4_create(db, "/d/f", 0600, 1, 2), -EEXIST);
	CHECK_EQ(r4_mkdir(db, "/d/f/x", 0755, 0, 0), -ENOTDIR);
	CHECK_EQ(r4_create(db, "/nope/f", 0644, 0, 0), -ENOENT);
	CHECK_EQ(r4_rmdir(db, "/d"), -ENOTEMPTY);
	CHECK_EQ(r4_rmdir(db, "/d/f"), -ENOTDIR);
	CHECK_EQ(r4_unlink(db, "/d"), -EISDIR);
	CHECK_EQ(r4_rmdir(db, "/"), -EBUSY);
	CHECK_EQ(r4_link(db, "/d", "/d2"), -EPERM);
	CHECK_EQ(r4_rename(db, "/d", "/d/sub", 0), -EINVAL);
	CHECK_EQ(r4_mkdir(db, "/d/.", 0755, 0, 0), -EEXIST);
	CHECK_RC(r4_symlink(db, "f", "/d/l", 0, 0));
	CHECK_EQ(r4_stat(db, "/d/l/x", &(struct r4_stat){0}), -ENOTDIR);
	CHECK_EQ(r4_mknod(db, "/d/bad", S_IFDIR | 0755, 0, 0, 0), -EINVAL);
}

static void test_nlink_and_blocks(r4_db *db)
{
	struct r4_stat st, root;
	char buf[20000];

	CHECK_RC(r4_stat(db, "/", &root));
	CHECK_RC(r4_mkdir(db, "/n", 0755, 0, 0));
	CHECK_RC(r4_mkdir(db, "/n/a", 0755, 0, 0));
	CHECK_RC(r4_mkdir(db, "/n/b", 0755, 0, 0));
	CHECK_RC(r4_stat(db, "/n", &st));
	CHECK_EQ(st.nlink, 4);
	CHECK_EQ(st.size, 4);		/* entries: . .. a b */
	CHECK_EQ(st.blocks, 1);		/* 4 x 50 bytes */
	CHECK_RC(r4_stat(db, "/", &st));
	CHECK_EQ(st.nlink, root.nlink + 1);
	CHECK_RC(r4_rename(db, "/n/a", "/a", 0));
	CHECK_RC(r4_stat(db, "/n", &st));
	CHECK_EQ(st.nlink, 3);
	CHECK_RC(r4_stat(db, "/", &st));
	CHECK_EQ(st.nlink, root.nlink + 2);
	CHECK_RC(r4_stat(db, "/a/..", &st));
	CHECK_EQ(st.ino, root.ino);	/* ".." follows the move */

	memset(buf, 'z', sizeof(buf));
	CHECK_RC(r4_create(db, "/n/t", 0644, 0, 0));
	CHECK_RC(r4_write(db, "/n/t", 0, buf, 1000));
	CHECK_RC(r4_stat(db, "/n/t", &st));
	CHECK_EQ(st.blocks, 2);		/* 1000 tail bytes */
	CHECK_RC(r4_write(db, "/n/t", 0, buf, sizeof(buf)));
	CHECK_RC(r4_stat(db, "/n/t", &st));
	CHECK_EQ(st.blocks, 5 * 8);	/* 20000 bytes: 5 extent blocks */
	CHECK_RC(r4_truncate(db, "/n/t", 1u << 30));
	CHECK_RC(r4_stat(db, "/n/t", &st));
	CHECK_EQ(st.blocks, 5 * 8);	/* the rest is a hole */
	CHECK_EQ(st.size, 1u << 30);
	CHECK_RC(r4_link(db, "/n/t", "/n/t2"));
	CHECK_RC(r4_stat(db, "/n/t2", &st));
	CHECK_EQ(st.nlink, 2);
	CHECK_RC(r4_unlink(db, "/n/t"));
	CHECK_RC(r4_stat(db, "/n/t2", &st));
	CHECK_EQ(st.nlink, 1);
}

static void test_rename_flags(r4_db *db)
{
	struct r4_stat a, b, st;
	size_t got;
	char buf[8];

	CHECK_RC(r4_mkdir(db, "/r", 0755, 0, 0));
	CHECK_RC(r4_create(db, "/r/a", 0644, 0, 0));
	CHECK_RC(r4_write(db, "/r/a", 0, "AAAA", 4));
	CHECK_RC(r4_mkdir(db, "/r/b", 0755, 0, 0));
	CHECK_RC(r4_stat(db, "/r/a", &a));
	CHECK_RC(r4_stat(db, "/r/b", &b));
	CHECK_EQ(r4_rename(db, "/r/a", "/r/b", R4_RENAME_NOREPLACE), -EEXIST);
	CHECK_EQ(r4_rename(db, "/r/a", "/r/none", R4_RENAME_EXCHANGE), -ENOENT);
	CHECK_EQ(r4_rename(db, "/r/a", "/r/b", 0), -EISDIR);
	CHECK_RC(r4_rename(db, "/r/a", "/r/b", R4_RENAME_EXCHANGE));
	CHECK_RC(r4_stat(db, "/r/a", &st));
	CHECK_EQ(st.ino, b.ino);
	CHECK_RC(r4_stat(db, "/r/b", &st));
	CHECK_EQ(st.ino, a.ino);
	CHECK_RC(r4_read(db, "/r/b", 0, buf, sizeof(buf), &got));
	CHECK(got == 4 && !memcmp(buf, "AAAA", 4));
	CHECK_EQ(r4_rename(db, "/r/a", "/r/b", R4_RENAME_EXCHANGE | R4_RENAME_NOREPLACE), -EINVAL);
	/* over an existing file: the old one goes */
	CHECK_RC(r4_create(db, "/r/c", 0644, 0, 0));
	CHECK_RC(r4_rename(db, "/r/c", "/r/b", 0));
	CHECK_EQ(r4_stat(db, "/r/c", &st), -ENOENT);
	CHECK_RC(r4_stat(db, "/r/b", &st));
	CHECK_EQ(st.size, 0);
	/* a directory over an empty directory, across parents */
	CHECK_RC(r4_mkdir(db, "/r/a/inner", 0755, 0, 0));
	CHECK_RC(r4_mkdir(db, "/r2", 0755, 0, 0));
	CHECK_RC(r4_mkdir(db, "/r2/empty", 0755, 0, 0));
	CHECK_RC(r4_rename(db, "/r/a", "/r2/empty", 0));
	CHECK_RC(r4_stat(db, "/r2/empty/inner", &st));
	CHECK_RC(r4_stat(db, "/r2", &st));
	CHECK_EQ(st.nlink, 3);
	CHECK_RC(r4_rename(db, "/r2/empty", "/r2/empty", 0));	/* same name: nothing */
}

/* Stamp path's mtime and ctime 1000 (an old time any change replaces). */
static void stamp_old(r4_db *db, const char *path)
{
	struct r4_setattr sa = {.mask = R4_SET_MTIME | R4_SET_CTIME};

	sa.mtime.tv_sec = sa.ctime.tv_sec = 1000;
	CHECK_RC(r4_setattr(db, path, &sa));
}

/* Did a change stamp path's mtime (m) and ctime since stamp_old? */
static void check_stamped(r4_db *db, const char *path, bool m)
{
	struct r4_stat st;

	CHECK_RC(r4_stat(db, path, &st));
	CHECK(st.ctime.tv_sec > 1000);
	CHECK(m ? st.mtime.tv_sec > 1000 : st.mtime.tv_sec == 1000);
}

/* rename(2) changes both directories' mtime and ctime, and the ctime of
 * what it moves and of what it replaces (its link count drops) or
 * exchanges with (generic/309). */
static void test_rename_times(r4_db *db)
{
	static const char *const all[] = {"/rt1", "/rt2", "/rt1/a", "/rt2/a", "/rt2/b"};

	CHECK_RC(r4_mkdir(db, "/rt1", 0755, 0, 0));
	CHECK_RC(r4_mkdir(db, "/rt2", 0755, 0, 0));
	CHECK_RC(r4_create(db, "/rt1/a", 0644, 0, 0));
	CHECK_RC(r4_create(db, "/rt2/a", 0644, 0, 0));
	CHECK_RC(r4_link(db, "/rt2/a", "/rt2/b"));	/* replaced, it lives on as b */
	for (size_t i = 0; i < sizeof(all) / sizeof(*all); i++)
		stamp_old(db, all[i]);
	CHECK_RC(r4_rename(db, "/rt1/a", "/rt2/a", 0));
	check_stamped(db, "/rt1", true);
	check_stamped(db, "/rt2", true);
	check_stamped(db, "/rt2/a", false);
	check_stamped(db, "/rt2/b", false);
	/* exchanged across directories, and within one */
	CHECK_RC(r4_create(db, "/rt1/a", 0644, 0, 0));
	for (size_t i = 0; i < sizeof(all) / sizeof(*all); i++)
		stamp_old(db, all[i]);
	CHECK_RC(r4_rename(db, "/rt1/a", "/rt2/b", R4_RENAME_EXCHANGE));
	check_stamped(db, "/rt1", true);
	check_stamped(db, "/rt2", true);
	check_stamped(db, "/rt1/a", false);
	check_stamped(db, "/rt2/b", false);
	stamp_old(db, "/rt2");
	CHECK_RC(r4_rename(db, "/rt2/a", "/rt2/b", R4_RENAME_EXCHANGE));
	check_stamped(db, "/rt2", true);
}

static void test_times(r4_db *db)
{
	struct r4_setattr sa = {0};
	struct r4_stat st;

	CHECK_RC(r4_create(db, "/tm", 0644, 0, 0));
	sa.mask = R4_SET_ATIME | R4_SET_MTIME | R4_SET_MODE | R4_SET_UID | R4_SET_GID;
	sa.atime.tv_sec = 1000000000;
	sa.atime.tv_nsec = 123456789;
	sa.mtime.tv_sec = 1700000000;
	sa.mtime.tv_nsec = 999999999;
	sa.mode = 04711;
	sa.uid = 42;
	sa.gid = 43;
	CHECK_RC(r4_setattr(db, "/tm", &sa));
	CHECK_RC(r4_stat(db, "/tm", &st));
	CHECK_EQ(st.atime.tv_sec, 1000000000);
	CHECK_EQ(st.atime.tv_nsec, 123456789);
	CHECK_EQ(st.mtime.tv_nsec, 999999999);
	CHECK_EQ(st.mode, S_IFREG | 04711);
	CHECK_EQ(st.uid, 42);
	CHECK_EQ(st.gid, 43);
	/* outside the format's unsigned 32-bit seconds: clamped, not wrapped
	 * (touch -d @4294967296 stored 0) */
	sa.mask = R4_SET_ATIME | R4_SET_MTIME | R4_SET_CTIME;
	sa.atime = (struct timespec){4294967296, 5};
	sa.mtime = (struct timespec){-1, 5};
	sa.ctime = (struct timespec){4294967295, 7};
	CHECK_RC(r4_setattr(db, "/tm", &sa));
	CHECK_RC(r4_stat(db, "/tm", &st));
	CHECK_EQ(st.atime.tv_sec, 4294967295);
	CHECK_EQ(st.atime.tv_nsec, 0);
	CHECK_EQ(st.mtime.tv_sec, 0);
	CHECK_EQ(st.mtime.tv_nsec, 0);
	CHECK_EQ(st.ctime.tv_sec, 4294967295);
	CHECK_EQ(st.ctime.tv_nsec, 7);
	/* before 1970: the lower end, as generic/258's touch -d 1960-01-01
	 * (which read back as 2096 while seconds were cast) */
	sa.mask = R4_SET_ATIME | R4_SET_MTIME;
	sa.atime = (struct timespec){-315619200, 5};
	sa.mtime = (struct timespec){-1, 999999999};	/* 1969-12-31 23:59:59.999999999 */
	CHECK_RC(r4_setattr(db, "/tm", &sa));
	CHECK_RC(r4_stat(db, "/tm", &st));
	CHECK(st.atime.tv_sec == 0 && st.atime.tv_nsec == 0);
	CHECK(st.mtime.tv_sec == 0 && st.mtime.tv_nsec == 0);
}

/* Explicit nanoseconds on stat data that had no room for them (the root
 * mkfs makes, an object a seconds_only db made) are kept: the stat data
 * gets the LARGE_TIMES extension; a seconds_only db still keeps whole
 * seconds.  (r4 import of a tree onto the root kept its whole seconds.) */
static void test_times_room(void)
{
	struct r4_setattr sa = {.mask = R4_SET_ATIME | R4_SET_MTIME,
				.atime = {1000000000, 123456789}, .mtime = {1100000000, 5}};
	struct r4_open_opts so = {.rw = true, .seconds_only = true}, oo = {.rw = true};
	struct r4_mkfs_opts mo;
	struct r4_stat st;
	r4_db *db = NULL;

	r4_mkfs_defaults(&mo);
	CHECK_RC(r4_mkfs(img, 64u << 20, &mo));
	CHECK_RC(r4_open(img, &so, &db));
	if (!db)
		return;
	CHECK_RC(r4_create(db, "/old", 0644, 0, 0));
	CHECK_RC(r4_setattr(db, "/", &sa));
	CHECK_RC(r4_stat(db, "/", &st));
	CHECK(st.atime.tv_sec == 1000000000 && st.atime.tv_nsec == 0);
	r4_close(db);
	CHECK_RC(r4_open(img, &oo, &db));
	if (!db)
		return;
	CHECK_RC(r4_setattr(db, "/", &sa));
	CHECK_RC(r4_setattr(db, "/old", &sa));
	r4_close(db);
	CHECK_RC(r4_open(img, &oo, &db));
	if (!db)
		return;
	for (int i = 0; i < 2; i++) {
		CHECK_RC(r4_stat(db, i ? "/old" : "/", &st));
		CHECK(st.atime.tv_sec == 1000000000 && st.atime.tv_nsec == 123456789);
		CHECK(st.mtime.tv_sec == 1100000000 && st.mtime.tv_nsec == 5);
	}
	r4_close(db);
	CHECK(t_fsck(img) != 0);	/* (clean, or no fsck.reiser4 here) */
}

/* An open file of path (made), its handle. */
static r4_file *opened(r4_db *db, const char *path)
{
	r4_file *f = NULL;

	CHECK_RC(r4_create(db, path, 0644, 0, 0));
	CHECK_RC(r4_file_open(db, path, &f));
	return f;
}

/* Does path hold only zeros in [off, off + len)? */
static bool zeros_at(r4_db *db, const char *path, uint64_t off, size_t len)
{
	static uint8_t buf[1 << 16];
	size_t got = 0;

	if (len > sizeof(buf) || r4_read(db, path, off, buf, len, &got) || got != len)
		return false;
	for (size_t i = 0; i < len; i++)
		if (buf[i])
			return false;
	return true;
}

/*
 * fallocate (r4_file_fallocate): mode 0 gives holes and the space past
 * the end blocks and keeps the data, ZERO_RANGE writes zeros, KEEP_SIZE
 * keeps the size; the modes r4 cannot do, and a volume that cannot hold
 * the range, change nothing.  (Set-id bits: test_perm; the record:
 * test_audit.)
 */
static void test_fallocate(void)
{
	struct r4_stat st, st2;
	struct r4_statfs sf, sf2;
	r4_db *db = fresh();
	r4_file *f, *g, *h;
	char buf[8];
	size_t got;

	if (!db)
		return;
	f = opened(db, "/fa");
	CHECK_RC(r4_file_write(f, 0, "abc", 3));
	CHECK_RC(r4_file_write(f, 3 << 20, "end", 3));	/* a hole of 3 MiB before it */
	CHECK_RC(r4_file_stat(f, &st));
	CHECK(st.blocks < 64);
	CHECK_RC(r4_file_fallocate(f, 0, 0, 4 << 20));
	CHECK_RC(r4_file_stat(f, &st));
	CHECK_EQ(st.size, 4 << 20);
	CHECK_EQ(st.blocks, (4 << 20) / 512);
	CHECK_RC(r4_read(db, "/fa", 0, buf, 3, &got));
	CHECK(got == 3 && !memcmp(buf, "abc", 3));
	CHECK_RC(r4_read(db, "/fa", 3 << 20, buf, 3, &got));
	CHECK(got == 3 && !memcmp(buf, "end", 3));
	CHECK(zeros_at(db, "/fa", 3, 4096) && zeros_at(db, "/fa", (3 << 20) + 3, 4096));
	/* ZERO_RANGE (with KEEP_SIZE: inside the file) */
	CHECK_RC(r4_file_fallocate(f, R4_FALLOC_ZERO_RANGE | R4_FALLOC_KEEP_SIZE, 1, (3 << 20) + 1));
	CHECK_RC(r4_read(db, "/fa", 0, buf, 1, &got));
	CHECK(got == 1 && buf[0] == 'a');
	CHECK(zeros_at(db, "/fa", 1, 4096) && zeros_at(db, "/fa", 3 << 20, 2));
	CHECK_RC(r4_read(db, "/fa", (3 << 20) + 2, buf, 1, &got));
	CHECK(got == 1 && buf[0] == 'd');
	/* refused, changing nothing */
	CHECK_RC(r4_file_stat(f, &st));
	CHECK_EQ(r4_file_fallocate(f, R4_FALLOC_KEEP_SIZE, 4 << 20, 1), -EOPNOTSUPP);
	CHECK_EQ(r4_file_fallocate(f, 0, 0, 0), -EINVAL);
	CHECK_EQ(r4_file_fallocate(f, 0, UINT64_C(1) << 62, 1), -EFBIG);
	CHECK_RC(r4_file_open(db, "/", &g));
	CHECK_EQ(r4_file_fallocate(g, 0, 0, 1), -EISDIR);
	r4_file_close(g);
	CHECK_RC(r4_file_stat(f, &st2));
	CHECK(st2.size == st.size && st2.blocks == st.blocks);
	/* more than one operation's piece (16 MiB), into a new file */
	g = opened(db, "/fb");
	CHECK_RC(r4_file_fallocate(g, 0, 1000, 20 << 20));
	CHECK_RC(r4_file_stat(g, &st));
	CHECK_EQ(st.size, 1000 + (20 << 20));
	CHECK(zeros_at(db, "/fb", 0, 4096) && zeros_at(db, "/fb", 16 << 20, 4096));
	/* a tail body: made blocks by the first of the pieces; one in tails
	 * only grows */
	h = opened(db, "/fd");
	CHECK_RC(r4_file_write(h, 0, "abc", 3));
	CHECK_RC(r4_file_fallocate(h, 0, 0, 20 << 20));
	CHECK_RC(r4_file_stat(h, &st));
	CHECK(st.size == 20 << 20 && st.blocks == (20 << 20) / 512);
	CHECK(zeros_at(db, "/fd", 3, 4096) && zeros_at(db, "/fd", 16 << 20, 4096));
	r4_file_close(h);
	h = opened(db, "/fe");
	CHECK_RC(r4_pseudo_write(db, "/fe", R4_PSEUDO_PLUGIN, "formatting", "tails", 5, NULL,
				 NULL));
	CHECK_RC(r4_file_write(h, 0, "abc", 3));
	CHECK_RC(r4_file_fallocate(h, R4_FALLOC_ZERO_RANGE, 1, 20000));
	CHECK_RC(r4_read(db, "/fe", 0, buf, 2, &got));
	CHECK(got == 2 && !memcmp(buf, "a", 2));
	CHECK_RC(r4_file_stat(h, &st));
	CHECK_EQ(st.size, 20001);
	r4_file_close(h);
	CHECK_RC(r4_sync(db));
	/* a volume that cannot hold it refuses the whole, in one piece or many */
	h = opened(db, "/fc");
	CHECK_RC(r4_statfs(db, &sf));
	CHECK_EQ(r4_file_fallocate(h, 0, 0, (sf.bavail + 1) * sf.bsize), -ENOSPC);
	CHECK_RC(r4_file_fallocate(h, 0, 0, (sf.bavail - 2048) * sf.bsize));
	CHECK_RC(r4_file_stat(h, &st));
	CHECK_RC(r4_statfs(db, &sf));
	CHECK_EQ(r4_file_fallocate(h, 0, st.size, (sf.bavail + 1) * sf.bsize), -ENOSPC);
	CHECK_RC(r4_file_stat(h, &st2));
	CHECK_RC(r4_statfs(db, &sf2));
	CHECK_EQ(st2.size, st.size);
	CHECK_EQ(st2.blocks, st.blocks);
	CHECK_EQ(sf2.bavail, sf.bavail);
	CHECK_EQ(r4_txn_error(db), 0);
	r4_file_close(h);
	r4_file_close(g);
	r4_file_close(f);
	r4_close(db);
	CHECK(t_fsck(img) != 0);	/* (clean, or no fsck.reiser4 here) */
}

/* fallocate of a compressed file (ccreg40, mkfs.reiser4's default): its
 * end grows by clusters of zeros; zero range writes them over its data. */
static void test_fallocate_ccreg(void)
{
	struct r4_stat st;
	r4_db *db;
	r4_file *f;
	char buf[4];
	size_t got;

	if (!(db = fresh_ccreg()))
		return;
	f = opened(db, "/cc");
	CHECK_RC(r4_file_write(f, 0, "abcd", 4));
	CHECK_RC(r4_file_fallocate(f, 0, 0, 20 << 20));
	CHECK_RC(r4_file_fallocate(f, R4_FALLOC_ZERO_RANGE | R4_FALLOC_KEEP_SIZE, 1, 18 << 20));
	CHECK_RC(r4_file_stat(f, &st));
	CHECK_EQ(st.size, 20 << 20);
	CHECK_RC(r4_read(db, "/cc", 0, buf, 4, &got));
	CHECK(got == 4 && !memcmp(buf, "a\0\0\0", 4));
	CHECK(zeros_at(db, "/cc", 17 << 20, 4096) && zeros_at(db, "/cc", (20 << 20) - 4096, 4096));
	r4_file_close(f);
	r4_close(db);
	CHECK(t_fsck(img) != 0);
}

/* r4_check finds nothing in the open image. */
static void check_clean(r4_db *db)
{
	struct r4_check_result res;

	CHECK_RC(r4_sync(db));
	CHECK_RC(r4_check(db, NULL, &res));
	CHECK_EQ(res.problems, 0);
}

/* Bytes [off, off + len) of path are m's there (m: a model of the file). */
static bool same_at(r4_db *db, const char *path, const uint8_t *m, uint64_t off, size_t len)
{
	static uint8_t buf[1 << 19];
	size_t got = 0;

	return len <= sizeof(buf) && !r4_read(db, path, off, buf, len, &got) && got == len &&
	       !memcmp(buf, m + off, len);
}

/* An open file at path holding m[0, n), made here (no zero byte, other
 * bytes in each block), committed. */
static r4_file *committed(r4_db *db, const char *path, uint8_t *m, size_t n)
{
	r4_file *f = opened(db, path);

	for (size_t i = 0; i < n; i++)
		m[i] = (uint8_t)(i * 7 + i / 4096 + 1) | 1;
	CHECK_RC(r4_file_write(f, 0, m, n));
	CHECK_RC(r4_sync(db));
	return f;
}

/* Punch [off, off + len) of f (path, model m of size bytes): the model's
 * bytes there become zeros, and the file reads as the model. */
static void punched(r4_db *db, r4_file *f, const char *path, uint8_t *m, uint64_t size,
		    uint64_t off, uint64_t len)
{
	struct r4_stat st;

	CHECK_RC(r4_file_fallocate(f, R4_FALLOC_PUNCH_HOLE | R4_FALLOC_KEEP_SIZE, off, len));
	if (off < size)
		memset(m + off, 0, (size_t)((off + len < size ? off + len : size) - off));
	CHECK_RC(r4_file_stat(f, &st));
	CHECK_EQ(st.size, size);
	CHECK(same_at(db, path, m, 0, (size_t)size));
}

/*
 * PUNCH_HOLE (with KEEP_SIZE): the range reads as zeros, the size stays.
 * In extents the whole blocks inside become a hole (SEEK_HOLE finds it,
 * st_blocks drops), committed blocks or blocks of this transaction; the
 * edges are zeroed in place; past the end nothing happens.  A tail body
 * gets zeros.  Mode combinations Linux refuses are refused.  Both
 * checkers find the image clean.
 */
static void test_punch(void)
{
	enum { BS = 4096, N = 40 * BS };
	static uint8_t m[N];
	struct r4_stat st, st2;
	r4_db *db = fresh();
	r4_file *f, *t;
	uint64_t o;

	if (!db)
		return;
	f = committed(db, "/p", m, N);
	CHECK_RC(r4_file_stat(f, &st));
	CHECK_EQ(st.blocks, N / 512);
	/* the middle: blocks 3..13 go, 10000..12287 and 57344..59999 zeroed;
	 * mtime and ctime stamped */
	CHECK_RC(r4_file_setattr(f, &(struct r4_setattr){.mask = R4_SET_MTIME | R4_SET_CTIME,
							  .mtime = {1, 0}, .ctime = {1, 0}}));
	punched(db, f, "/p", m, N, 10000, 50000);
	CHECK_RC(r4_file_stat(f, &st));
	CHECK_EQ(st.blocks, (N - 11 * BS) / 512);
	CHECK(st.mtime.tv_sec > 1 && st.ctime.tv_sec > 1);
	CHECK_RC(r4_file_seek(f, 0, SEEK_HOLE, &o));
	CHECK_EQ(o, 3 * BS);
	CHECK_RC(r4_file_seek(f, 3 * BS, SEEK_DATA, &o));
	CHECK_EQ(o, 14 * BS);
	/* the first block, a part of one block, the last bytes and past the end */
	punched(db, f, "/p", m, N, 0, BS);
	CHECK_RC(r4_file_seek(f, 0, SEEK_HOLE, &o));
	CHECK_EQ(o, 0);
	punched(db, f, "/p", m, N, 20 * BS + 1, 100);
	punched(db, f, "/p", m, N, N - 100, 1 << 20);
	punched(db, f, "/p", m, N, N + 5, 10);
	CHECK_RC(r4_file_stat(f, &st));
	CHECK_EQ(st.blocks, (N - 12 * BS) / 512);
	/* blocks new in this transaction (not placed yet: in a part, and
	 * whole) and pages of committed ones; then the whole file */
	CHECK_RC(r4_begin(db));
	memcpy(m + 5 * BS, "new", 3);
	CHECK_RC(r4_file_write(f, 5 * BS, "new", 3));
	memcpy(m + 6 * BS, "more", 4);
	CHECK_RC(r4_file_write(f, 6 * BS, "more", 4));
	memcpy(m + 20 * BS, "page", 4);
	CHECK_RC(r4_file_write(f, 20 * BS, "page", 4));
	punched(db, f, "/p", m, N, 5 * BS + 1, 1);
	punched(db, f, "/p", m, N, 6 * BS, BS);
	punched(db, f, "/p", m, N, 16 * BS, 8 * BS);
	CHECK_RC(r4_commit(db));
	CHECK_RC(r4_file_stat(f, &st));
	CHECK_EQ(st.blocks, (N - 19 * BS) / 512);
	CHECK(same_at(db, "/p", m, 0, N));
	check_clean(db);
	punched(db, f, "/p", m, N, 0, N);
	CHECK_RC(r4_file_stat(f, &st));
	CHECK(st.size == N && st.blocks == 0);
	CHECK_EQ(r4_file_seek(f, 0, SEEK_DATA, &o), -ENXIO);
	/* written again over the hole */
	CHECK_RC(r4_file_write(f, 5 * BS, "x", 1));
	m[5 * BS] = 'x';
	CHECK(same_at(db, "/p", m, 0, N));
	/* a tail body: zeros */
	t = opened(db, "/t");
	CHECK_RC(r4_file_write(t, 0, m + 5 * BS - 1000, 3000));
	memcpy(m, m + 5 * BS - 1000, 3000);
	punched(db, t, "/t", m, 3000, 999, 2);
	punched(db, t, "/t", m, 3000, 2000, 5000);
	CHECK_RC(r4_file_seek(t, 0, SEEK_HOLE, &o));
	CHECK_EQ(o, 3000);
	/* refused, changing nothing: PUNCH_HOLE without KEEP_SIZE or with
	 * another mode, a length of 0 */
	CHECK_RC(r4_file_stat(t, &st));
	CHECK_EQ(r4_file_fallocate(t, R4_FALLOC_PUNCH_HOLE, 0, 1), -EOPNOTSUPP);
	CHECK_EQ(r4_file_fallocate(t, R4_FALLOC_PUNCH_HOLE | R4_FALLOC_ZERO_RANGE |
					      R4_FALLOC_KEEP_SIZE, 0, 1), -EOPNOTSUPP);
	CHECK_EQ(r4_file_fallocate(t, R4_FALLOC_PUNCH_HOLE | R4_FALLOC_KEEP_SIZE, 0, 0), -EINVAL);
	CHECK_RC(r4_file_stat(t, &st2));
	CHECK(st2.mtime.tv_sec == st.mtime.tv_sec && st2.mtime.tv_nsec == st.mtime.tv_nsec);
	CHECK(same_at(db, "/t", m, 0, 3000));
	check_clean(db);
	r4_file_close(t);
	r4_file_close(f);
	r4_close(db);
	CHECK(t_fsck(img) != 0);
}

/* PUNCH_HOLE in a compressed file (64 KiB clusters): the clusters inside
 * lose their items (holes, read as zeros), the edge ones are rewritten. */
static void test_punch_ccreg(void)
{
	enum { CL = 65536, N = 5 * CL + 1000 };
	static uint8_t m[N];
	struct r4_stat st, st2;
	char *plugin = NULL;
	size_t len;
	r4_db *db;
	r4_file *f;

	if (!(db = fresh_ccreg()))
		return;
	for (size_t i = 0; i < N; i++)	/* (bytes that compress: it stays ccreg40) */
		m[i] = (uint8_t)(i % 61 + i / CL + 1);
	f = opened(db, "/cc");
	CHECK_RC(r4_file_write(f, 0, m, N));
	CHECK_RC(r4_file_stat(f, &st));
	/* clusters 1 and 2 go, 0 and 3 are cut */
	punched(db, f, "/cc", m, N, CL - 10, 2 * CL + 20);
	CHECK_RC(r4_file_stat(f, &st2));
	CHECK(st2.blocks < st.blocks);
	/* the last, short cluster whole; a part of one; all */
	punched(db, f, "/cc", m, N, 5 * CL, 1 << 20);
	punched(db, f, "/cc", m, N, 4 * CL + 7, 3);
	check_clean(db);
	punched(db, f, "/cc", m, N, 0, N);
	CHECK_RC(r4_file_stat(f, &st));
	CHECK_EQ(st.blocks, 0);
	CHECK_RC(r4_pseudo_read(db, "/cc", R4_PSEUDO_PLUGIN, "file", &plugin, &len, NULL));
	CHECK(plugin && !strcmp(plugin, "ccreg40"));
	r4_free(plugin);
	/* no collapse or insert in clusters */
	CHECK_EQ(r4_file_fallocate(f, R4_FALLOC_COLLAPSE_RANGE, 0, CL), -EOPNOTSUPP);
	CHECK_EQ(r4_file_fallocate(f, R4_FALLOC_INSERT_RANGE, 0, CL), -EOPNOTSUPP);
	r4_file_close(f);
	check_clean(db);	/* (a compressed file of holes only: no items) */
	r4_close(db);
	CHECK(t_fsck(img) != 0);
}

/* COLLAPSE_RANGE and INSERT_RANGE of n bytes at off on model m of *size
 * bytes (room for the insert), done on f too; then the file reads as m. */
static void shifted(r4_db *db, r4_file *f, const char *path, uint8_t *m, uint64_t *size,
		    bool insert, uint64_t off, uint64_t n)
{
	struct r4_stat st;

	CHECK_RC(r4_file_fallocate(f, insert ? R4_FALLOC_INSERT_RANGE : R4_FALLOC_COLLAPSE_RANGE,
				   off, n));
	if (insert) {
		memmove(m + off + n, m + off, *size - off);
		memset(m + off, 0, n);
		*size += n;
	} else {
		memmove(m + off, m + off + n, *size - off - n);
		*size -= n;
	}
	CHECK_RC(r4_file_stat(f, &st));
	CHECK_EQ(st.size, *size);
	CHECK(same_at(db, path, m, 0, *size));
}

/*
 * COLLAPSE_RANGE and INSERT_RANGE, block-aligned, in extents: the blocks
 * after the range move (a collapse frees those cut out, an insert puts a
 * hole in), committed or of this transaction, the last partial block too.
 * Unaligned ranges, ranges not inside the file, KEEP_SIZE and tail bodies
 * are refused, changing nothing.
 */
static void test_collapse_insert(void)
{
	enum { BS = 4096, N = 40 * BS + 100 };
	static uint8_t m[N + 16 * BS];
	uint64_t size = N, o;
	struct r4_stat st;
	r4_db *db = fresh();
	r4_file *f, *t;

	if (!db)
		return;
	f = committed(db, "/s", m, N);
	shifted(db, f, "/s", m, &size, false, 4 * BS, 8 * BS);
	CHECK_RC(r4_file_stat(f, &st));
	CHECK_EQ(st.blocks, 33 * BS / 512);
	shifted(db, f, "/s", m, &size, true, 2 * BS, 3 * BS);
	CHECK_RC(r4_file_stat(f, &st));
	CHECK_EQ(st.blocks, 33 * BS / 512);
	CHECK_RC(r4_file_seek(f, 0, SEEK_HOLE, &o));
	CHECK_EQ(o, 2 * BS);
	CHECK_RC(r4_file_seek(f, 2 * BS, SEEK_DATA, &o));
	CHECK_EQ(o, 5 * BS);
	/* blocks of this transaction, and the last partial one */
	CHECK_RC(r4_begin(db));
	memcpy(m + 10 * BS, "new", 3);
	CHECK_RC(r4_file_write(f, 10 * BS, "new", 3));
	shifted(db, f, "/s", m, &size, false, 8 * BS, 2 * BS);
	shifted(db, f, "/s", m, &size, true, 0, BS);
	shifted(db, f, "/s", m, &size, false, size / BS * BS - BS, BS);
	CHECK_RC(r4_commit(db));
	check_clean(db);
	/* refused, changing nothing */
	CHECK_EQ(r4_file_fallocate(f, R4_FALLOC_COLLAPSE_RANGE, 1, BS), -EINVAL);
	CHECK_EQ(r4_file_fallocate(f, R4_FALLOC_INSERT_RANGE, BS, 100), -EINVAL);
	CHECK_EQ(r4_file_fallocate(f, R4_FALLOC_COLLAPSE_RANGE, 0, size / BS * BS + BS), -EINVAL);
	CHECK_EQ(r4_file_fallocate(f, R4_FALLOC_INSERT_RANGE, size / BS * BS + BS, BS), -EINVAL);
	CHECK_EQ(r4_file_fallocate(f, R4_FALLOC_INSERT_RANGE | R4_FALLOC_KEEP_SIZE, 0, BS),
		 -EOPNOTSUPP);
	CHECK_EQ(r4_file_fallocate(f, R4_FALLOC_INSERT_RANGE | R4_FALLOC_COLLAPSE_RANGE, 0, BS),
		 -EOPNOTSUPP);
	CHECK(same_at(db, "/s", m, 0, size));
	t = opened(db, "/t");
	CHECK_RC(r4_pseudo_write(db, "/t", R4_PSEUDO_PLUGIN, "formatting", "tails", 5, NULL,
				 NULL));
	CHECK_RC(r4_file_write(t, 0, m, 3 * BS));
	CHECK_EQ(r4_file_fallocate(t, R4_FALLOC_COLLAPSE_RANGE, 0, BS), -EOPNOTSUPP);
	CHECK_EQ(r4_file_fallocate(t, R4_FALLOC_INSERT_RANGE, 0, BS), -EOPNOTSUPP);
	CHECK(same_at(db, "/t", m, 0, 3 * BS));
	/* collapsed to 4 blocks or less: tails (smart), as a truncate makes it */
	shifted(db, f, "/s", m, &size, false, BS, size / BS * BS - 3 * BS);
	CHECK_RC(r4_file_stat(f, &st));
	CHECK(size == 3 * BS + 100 && st.blocks == (size + 511) / 512);
	r4_file_close(t);
	r4_file_close(f);
	check_clean(db);
	r4_close(db);
	CHECK(t_fsck(img) != 0);
}

/* statfs's object counts: files - ffree is the number of objects (df -i's
 * Used), and ffree what could still be made. */
static void test_statfs_inodes(r4_db *db)
{
	struct r4_statfs a, b;
	struct r4_info in;

	CHECK_RC(r4_statfs(db, &a));
	CHECK_RC(r4_info(db, &in));
	CHECK(a.files >= a.ffree);
	CHECK_EQ(a.files - a.ffree, in.file_count);
	CHECK_EQ(a.ffree, a.bavail);
	CHECK_RC(r4_mkdir(db, "/sf", 0755, 0, 0));
	CHECK_RC(r4_create(db, "/sf/a", 0644, 0, 0));
	CHECK_RC(r4_symlink(db, "a", "/sf/l", 0, 0));
	CHECK_RC(r4_statfs(db, &b));
	CHECK_EQ(b.files - b.ffree, a.files - a.ffree + 3);
}

struct names {
	char seen[400][8];
	int n, round;
};

static int collect(void *ctx, const char *name, size_t len, uint64_t ino, uint32_t type)
{
	struct names *nm = ctx;

	(void)ino;
	(void)type;
	if (nm->n >= 400 || len >= 8 || ++nm->round > 50)
		return 1;		/* a partial listing: this entry is not delivered */
	memcpy(nm->seen[nm->n], name, len);
	nm->seen[nm->n++][len] = 0;
	return 0;
}

/* Entries present throughout a listing that is interrupted by changes are
 * delivered exactly once. */
static void test_readdir_cursor(r4_db *db)
{
	struct r4_dirpos pos = {0};
	struct names nm = {.n = 0};
	char p[64];
	int rc, rounds = 0;

	CHECK_RC(r4_mkdir(db, "/rd", 0755, 0, 0));
	for (int i = 0; i < 200; i++) {
		snprintf(p, sizeof(p), "/rd/k%03d", i);
		CHECK_RC(r4_create(db, p, 0644, 0, 0));
	}
	do {
		int before = nm.n;

		nm.round = 0;
		rc = r4_readdir(db, "/rd", &pos, collect, &nm);
		/* between calls: add new names and remove some not yet listed */
		snprintf(p, sizeof(p), "/rd/n%03d", rounds);
		r4_create(db, p, 0644, 0, 0);
		snprintf(p, sizeof(p), "/rd/k%03d", 199 - rounds);
		r4_unlink(db, p);
		if (nm.n == before)
			break;
	} while (!rc && ++rounds < 20);
	CHECK_RC(rc);
	for (int i = 0; i < 150; i++) {	/* k000..k149 were never removed */
		int count = 0;

		snprintf(p, sizeof(p), "k%03d", i);
		for (int j = 0; j < nm.n; j++)
			count += !strcmp(nm.seen[j], p);
		CHECK_EQ(count, 1);
	}
	CHECK(!strcmp(nm.seen[0], ".") && !strcmp(nm.seen[1], ".."));
}

/* r4_readdir_stat: every entry's attributes equal r4_stat's of its path,
 * "." and ".." included; names-only delivers the same names, no st. */
struct rs_list {
	char name[16][16];
	struct r4_stat st[16];
	uint64_t ino[16];
	bool had_st[16];
	int n;
};

static int rs_collect(void *ctx, const char *name, size_t len, uint64_t ino,
		      const struct r4_stat *st)
{
	struct rs_list *l = ctx;

	if (l->n >= 16 || len >= 16)
		return -ERANGE;
	memcpy(l->name[l->n], name, len);
	l->name[l->n][len] = 0;
	l->ino[l->n] = ino;
	if ((l->had_st[l->n] = st != NULL))
		memcpy(&l->st[l->n], st, sizeof(*st));
	l->n++;
	return 0;
}

static void test_readdir_stat(r4_db *db)
{
	static const char *const want[] = {".", "..", "data", "dev", "hard", "link", "sub"};
	const size_t nwant = sizeof(want) / sizeof(want[0]);
	struct rs_list l = {.n = 0}, nl = {.n = 0};
	struct r4_stat st;
	char p[64];
	int seen = 0;

	CHECK_RC(r4_mkdir(db, "/rs", 0750, 12, 34));
	CHECK_RC(r4_create(db, "/rs/data", 0640, 5, 6));
	CHECK_RC(r4_write(db, "/rs/data", 0, "some bytes", 10));
	CHECK_RC(r4_link(db, "/rs/data", "/rs/hard"));
	CHECK_RC(r4_mkdir(db, "/rs/sub", 0700, 7, 8));
	CHECK_RC(r4_symlink(db, "data", "/rs/link", 9, 10));
	CHECK_RC(r4_mknod(db, "/rs/dev", S_IFCHR | 0600, makedev(4, 5), 0, 0));
	CHECK_RC(r4_readdir_stat(db, "/rs", &(struct r4_dirpos){0}, 0, rs_collect, &l));
	CHECK_EQ(l.n, nwant);
	for (int i = 0; i < l.n; i++) {
		memset(&st, 0, sizeof(st));
		snprintf(p, sizeof(p), "/rs/%s", l.name[i]);
		CHECK_RC(r4_stat(db, p, &st));
		CHECK(l.had_st[i]);
		CHECK(!memcmp(&l.st[i], &st, sizeof(st)));
		CHECK_EQ(l.ino[i], st.ino);
		for (size_t j = 0; j < nwant; j++)
			seen += !strcmp(l.name[i], want[j]);
	}
	CHECK_EQ(seen, nwant);
	CHECK_RC(r4_stat(db, "/rs/data", &st));
	CHECK(st.nlink == 2 && st.size == 10 && st.uid == 5);

	CHECK_RC(r4_readdir_stat(db, "/rs", &(struct r4_dirpos){0}, R4_READDIR_NAMES, rs_collect,
				 &nl));
	CHECK_EQ(nl.n, l.n);
	for (int i = 0; i < nl.n && i < l.n; i++) {
		CHECK(!strcmp(nl.name[i], l.name[i]));	/* same key order */
		CHECK(!nl.had_st[i]);
		CHECK_EQ(nl.ino[i], l.ino[i]);
	}
	CHECK_EQ(r4_readdir_stat(db, "/rs/data", &(struct r4_dirpos){0}, 0, rs_collect, &l),
		 -ENOTDIR);
	CHECK_EQ(r4_readdir_stat(db, "/rs/none", &(struct r4_dirpos){0}, 0, rs_collect, &l),
		 -ENOENT);
}

/* Names that start with "..": real entries come first (docs/semantics.md,
 * "Names"); a pseudo name resolves only where no entry has it. */
static bool listed(r4_db *db, const char *dir, const char *name)
{
	struct r4_dirpos pos = {0};
	struct names nm = {.n = 0};

	CHECK_RC(r4_readdir(db, dir, &pos, collect, &nm));
	for (int i = 0; i < nm.n; i++)
		if (!strcmp(nm.seen[i], name))
			return true;
	return false;
}

static void test_dotdot_names(r4_db *db)
{
	const struct r4_newobj reg = {S_IFREG | 0644, 0, 0, 0, NULL};
	const struct r4_pseudo_info *ps;
	struct r4_stat st;
	r4_file *root, *d, *f;

	CHECK_RC(r4_mkdir(db, "/dd", 0755, 0, 0));
	CHECK_RC(r4_create(db, "/dd/..x", 0600, 0, 0));
	CHECK(listed(db, "/dd", "..x"));
	CHECK_RC(r4_stat(db, "/dd/..x", &st));
	CHECK_EQ(st.mode, S_IFREG | 0600);

	CHECK_RC(r4_file_root(db, &root));
	CHECK_RC(r4_file_lookup(root, "dd", 2, &d));
	CHECK_RC(r4_file_lookup(d, "..x", 3, &f));
	CHECK_RC(r4_file_close(f));
	/* made, renamed to and from, removed by handle */
	CHECK_RC(r4_file_make(d, "..y", 3, &reg, NULL));
	CHECK(listed(db, "/dd", "..y"));
	CHECK_RC(r4_file_rename(d, "..y", 3, d, "plain", 5, 0));
	CHECK(!listed(db, "/dd", "..y") && listed(db, "/dd", "plain"));
	CHECK_RC(r4_file_rename(d, "plain", 5, d, "..z", 3, 0));
	CHECK(listed(db, "/dd", "..z"));
	CHECK_RC(r4_file_rename(d, "..z", 3, root, "..top", 5, 0));
	CHECK(listed(db, "/", "..top"));
	CHECK_RC(r4_file_remove(root, "..top", 5, false));

	/* the one resolver: an entry first, else the pseudo file */
	CHECK_RC(r4_ns_resolve(d, "..x", 3, &f, &ps));
	CHECK(f && !ps);
	CHECK_RC(r4_file_close(f));
	CHECK_RC(r4_ns_resolve(d, "..mode", 6, &f, &ps));
	CHECK(!f && ps && ps->id == R4_PSEUDO_MODE);
	CHECK_EQ(r4_ns_resolve(d, "..nosuch", 8, &f, &ps), -ENOENT);
	CHECK_EQ(r4_ns_resolve(d, "..", 2, &f, &ps), -EINVAL);
	CHECK_RC(r4_file_make(d, "..mode", 6, &reg, NULL));
	CHECK_RC(r4_ns_resolve(d, "..mode", 6, &f, &ps));
	CHECK(f && !ps);
	CHECK_RC(r4_file_close(f));
	CHECK_RC(r4_file_remove(d, "..mode", 6, false));

	/* "." and ".." stay special; the root's "..r4" is r4's own */
	CHECK_EQ(r4_file_make(d, "..", 2, &reg, NULL), -EEXIST);
	CHECK_EQ(r4_file_make(root, "..r4", 4, &reg, NULL), -EPERM);
	CHECK_EQ(r4_file_lookup(root, "..r4", 4, &f), -ENOENT);

	/* a directory holding only "..x" empties and goes */
	CHECK_EQ(r4_rmdir(db, "/dd"), -ENOTEMPTY);
	CHECK_RC(r4_file_remove(d, "..x", 3, false));
	CHECK_RC(r4_file_close(d));
	CHECK_RC(r4_file_close(root));
	CHECK_RC(r4_rmdir(db, "/dd"));
}

/* Deleting everything gives every block back (after commit: frees are
 * deferred until then). */
static void test_space_reclaimed(r4_db *db)
{
	struct r4_statfs a, b;
	static char buf[300000];
	char p[64];

	CHECK_RC(r4_statfs(db, &a));
	CHECK_RC(r4_begin(db));
	CHECK_RC(r4_mkdir(db, "/sp", 0755, 0, 0));
	for (int i = 0; i < 300; i++) {
		snprintf(p, sizeof(p), "/sp/f%03d-with-a-name-long-enough-to-be-hashed", i);
		CHECK_RC(r4_create(db, p, 0644, 0, 0));
		CHECK_RC(r4_write(db, p, (uint64_t)i * 1000, buf, (size_t)(i * 997) % sizeof(buf)));
	}
	CHECK_RC(r4_commit(db));
	CHECK_RC(r4_statfs(db, &b));
	CHECK(b.bfree < a.bfree);
	CHECK_RC(r4_begin(db));
	for (int i = 0; i < 300; i++) {
		snprintf(p, sizeof(p), "/sp/f%03d-with-a-name-long-enough-to-be-hashed", i);
		CHECK_RC(r4_unlink(db, p));
	}
	CHECK_RC(r4_rmdir(db, "/sp"));
	CHECK_RC(r4_commit(db));
	CHECK_RC(r4_statfs(db, &b));
	CHECK_EQ(b.bfree, a.bfree);
	CHECK_EQ(b.files, a.files);
}

static int count_fn(void *ctx, const char *name, size_t len, uint64_t ino, uint32_t type)
{
	(void)name;
	(void)len;
	(void)ino;
	(void)type;
	++*(int *)ctx;
	return 0;
}

/* Symlink targets: as long as the kernel's Reiser4 takes them (the stat
 * data they live in fits one item of a node; on larger blocks than r4
 * reads, no longer than symlink(2) passes, R4_SYMLINK_MAX).  Targets of
 * 2048 bytes and more were refused. */
static void test_symlink_limits(void)
{
	static const struct {
		bool node41, seconds_only;
		size_t max;
	} v[] = {
		{false, false, 3973},	/* 4096 - 28 (node40) - 38 (item) - 56 (stat data) - 1 */
		{true, false, 3969},	/* node41's header has 4 bytes more */
		{false, true, 3985},	/* no nanoseconds: 12 bytes less of stat data */
	};
	static char tgt[8192];
	char back[8192];

	memset(tgt, 'a', sizeof(tgt));
	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		struct r4_newobj lnk = {.mode = S_IFLNK | 0777, .target = tgt};
		struct r4_mkfs_opts mo;
		struct r4_stat st;
		r4_file *root = NULL, *f = NULL;
		r4_db *db = NULL;
		size_t len = 0;

		struct r4_open_opts oo = {.rw = true, .seconds_only = v[i].seconds_only};

		r4_mkfs_defaults(&mo);
		mo.node41 = v[i].node41;
		CHECK_RC(r4_mkfs(img, 64u << 20, &mo));
		CHECK_RC(r4_open(img, &oo, &db));
		if (!db)
			continue;
		tgt[v[i].max + 1] = 0;
		CHECK_EQ(r4_symlink(db, tgt, "/over", 0, 0), -ENAMETOOLONG);
		CHECK_RC(r4_file_root(db, &root));
		if (root)
			CHECK_EQ(r4_file_make(root, "over", 4, &lnk, NULL), -ENAMETOOLONG);
		tgt[v[i].max] = 0;
		CHECK_RC(r4_symlink(db, tgt, "/max", 0, 0));
		if (root)
			CHECK_RC(r4_file_make(root, "max2", 4, &lnk, &f));
		CHECK_RC(r4_readlink(db, "/max", back, sizeof(back), &len));
		CHECK_EQ(len, v[i].max);
		CHECK(!memcmp(back, tgt, len));
		CHECK_RC(r4_stat(db, "/max", &st));
		CHECK_EQ(st.size, v[i].max);
		CHECK_EQ(r4_stat(db, "/over", &st), -ENOENT);
		tgt[v[i].max] = 'a';
		tgt[v[i].max + 1] = 'a';
		r4_file_close(f);
		r4_file_close(root);
		r4_close(db);
		CHECK(t_fsck(img) != 0);	/* clean, or fsck.reiser4 missing */
	}
}

/* deg_hash gives every long name the same hash: 300 names sharing their
 * first 15 bytes all get one key, spread over several items and leaves.
 * Lookup, listing, unlink and rename must still tell them apart. */
struct tells {
	char name[160][64];
	uint64_t tell[160];
	int n, max;
	const struct r4_dirpos *pos;	/* the listing's cursor */
};

static int tell_fn(void *ctx, const char *name, size_t len, uint64_t ino, uint32_t type)
{
	struct tells *t = ctx;

	(void)ino;
	(void)type;
	if (t->n >= t->max)
		return 1;
	snprintf(t->name[t->n], sizeof(t->name[0]), "%.*s", (int)len, name);
	t->tell[t->n++] = r4_dirpos_tell(t->pos);	/* (past this entry) */
	return 0;
}

/* The entries of f listed from tell on (at most max); their count. */
static int list_from(r4_file *f, uint64_t tell, struct tells *t, int max)
{
	struct r4_dirpos pos;

	t->n = 0;
	t->max = max;
	t->pos = &pos;
	CHECK_RC(r4_file_dirseek(f, tell, &pos));
	CHECK_RC(r4_file_readdir(f, &pos, tell_fn, t));
	return t->n;
}

/* A position as a number (r4_dirpos_tell) names the entry it follows in
 * any listing, and r4_file_dirseek finds it again (generic/676).  Where
 * entries share a key (deg_hash), it is a place among them: removing one
 * of them moves the others'; with keys of their own (gone), removing an
 * entry takes its position alone. */
static void test_dir_tell(r4_db *db, const char *dir, int count, bool gone)
{
	static struct tells all, again, one;
	r4_file *f = NULL, *g = NULL;
	struct r4_dirpos pos;
	char p[160];

	CHECK_RC(r4_file_open(db, dir, &f));
	CHECK_RC(r4_file_open(db, dir, &g));
	if (!f || !g)
		return;
	CHECK_EQ(list_from(f, 0, &all, 160), count);
	CHECK_EQ(list_from(g, 0, &again, 160), count);
	for (int i = 0; i < all.n; i++) {
		CHECK(all.tell[i] && all.tell[i] < (UINT64_C(1) << 63));
		CHECK_EQ(all.tell[i], again.tell[i]);
		for (int j = 0; j < i; j++)
			if (all.tell[j] == all.tell[i])
				CHECK_EQ(j, i);
	}
	for (int i = 0; i < all.n; i += 25) {
		CHECK_EQ(list_from(i % 2 ? f : g, all.tell[i], &one, 1), i + 1 < all.n);
		CHECK(i + 1 == all.n || !strcmp(one.name[0], all.name[i + 1]));
	}
	CHECK_EQ(list_from(f, all.tell[all.n - 1], &one, 1), 0);
	CHECK_EQ(r4_file_dirseek(f, 12345, &pos), -EINVAL);	/* (no entry's) */
	if (gone) {
		snprintf(p, sizeof(p), "%s/%.63s", dir, all.name[count / 2]);
		CHECK_RC(r4_unlink(db, p));
		CHECK_EQ(r4_file_dirseek(f, all.tell[count / 2], &pos), -EINVAL);
		CHECK_EQ(list_from(g, all.tell[count / 2 - 1], &one, 1), 1);
		CHECK(!strcmp(one.name[0], all.name[count / 2 + 1]));
	}
	r4_file_close(g);
	r4_file_close(f);
}

static void test_readdir_tell(r4_db *db)
{
	char p[128];

	CHECK_RC(r4_mkdir(db, "/tl", 0755, 0, 0));
	for (int i = 0; i < 150; i++) {
		snprintf(p, sizeof(p), i % 3 ? "/tl/%d" : "/tl/a-name-longer-than-a-key-holds-%d", i);
		CHECK_RC(r4_create(db, p, 0644, 0, 0));
	}
	test_dir_tell(db, "/tl", 152, true);
}

static void test_collisions(void)
{
	struct r4_open_opts oo = {.rw = true, .cache_nodes = 16};
	struct r4_mkfs_opts mo;
	struct r4_stat st;
	r4_db *db = NULL;
	char p[128];
	int n = 0;

	r4_mkfs_defaults(&mo);
	mo.hash = 4;		/* deg_hash */
	CHECK_RC(r4_mkfs(img, 64u << 20, &mo));
	CHECK_RC(r4_open(img, &oo, &db));
	if (!db)
		return;
	CHECK_RC(r4_begin(db));
	CHECK_RC(r4_mkdir(db, "/c", 0755, 0, 0));
	for (int i = 0; i < 300; i++) {
		snprintf(p, sizeof(p), "/c/same-prefix-1234-%04d-tail-of-the-name", i);
		CHECK_RC(r4_create(db, p, 0644, (uint32_t)i, 0));
	}
	CHECK_EQ(r4_create(db, "/c/same-prefix-1234-0150-tail-of-the-name", 0644, 0, 0), -EEXIST);
	CHECK_RC(r4_commit(db));
	for (int i = 0; i < 300; i += 7) {
		snprintf(p, sizeof(p), "/c/same-prefix-1234-%04d-tail-of-the-name", i);
		CHECK_RC(r4_stat(db, p, &st));
		CHECK_EQ(st.uid, i);
	}
	CHECK_RC(r4_readdir(db, "/c", &(struct r4_dirpos){0}, count_fn, &n));
	CHECK_EQ(n, 302);
	CHECK_RC(r4_begin(db));
	for (int i = 0; i < 300; i += 2) {
		snprintf(p, sizeof(p), "/c/same-prefix-1234-%04d-tail-of-the-name", i);
		CHECK_RC(r4_unlink(db, p));
	}
	CHECK_RC(r4_rename(db, "/c/same-prefix-1234-0001-tail-of-the-name",
			   "/c/same-prefix-1234-0001-renamed-within-the-run", 0));
	CHECK_RC(r4_commit(db));
	CHECK_EQ(r4_stat(db, "/c/same-prefix-1234-0000-tail-of-the-name", &st), -ENOENT);
	CHECK_RC(r4_stat(db, "/c/same-prefix-1234-0001-renamed-within-the-run", &st));
	CHECK_EQ(st.uid, 1);
	CHECK_RC(r4_stat(db, "/c/same-prefix-1234-0299-tail-of-the-name", &st));
	CHECK_EQ(st.uid, 299);
	n = 0;
	CHECK_RC(r4_readdir(db, "/c", &(struct r4_dirpos){0}, count_fn, &n));
	CHECK_EQ(n, 152);
	test_dir_tell(db, "/c", 152, false);
	r4_close(db);
	int fsck = t_fsck(img);

	if (fsck < 0)
		printf("skip: fsck.reiser4 not installed, interop check skipped\n");
	else
		CHECK(fsck == 1);
}

/* path is a whiteout: a character device 0:0 with mode 0, owned uid:gid. */
static void check_whiteout(r4_db *db, const char *path, uint32_t uid, uint32_t gid)
{
	struct r4_stat st;

	CHECK_RC(r4_stat(db, path, &st));
	CHECK_EQ(st.mode, S_IFCHR);
	CHECK_EQ(st.rdev, 0);
	CHECK_EQ(st.nlink, 1);
	CHECK_EQ(st.size, 0);
	CHECK(st.uid == uid && st.gid == gid);
}

/* The file at path holds exactly want (at most 15 bytes). */
static bool holds(r4_db *db, const char *path, const char *want)
{
	char buf[16];
	size_t got = 0;

	return !r4_read(db, path, 0, buf, sizeof(buf), &got) && got == strlen(want) &&
	       !memcmp(buf, want, got);
}

static uint64_t objects(r4_db *db)
{
	struct r4_info in;

	CHECK_RC(r4_info(db, &in));
	return in.file_count;
}

/*
 * renameat2's RENAME_WHITEOUT: the object moves as without the flag (over
 * another name, refused by NOREPLACE; a directory to another parent), and
 * in the same operation a whiteout takes its old name, owned as a new
 * object of the acting identity there (a setgid directory's group).
 * EXCHANGE with it is EINVAL.  On a full volume it is refused (it makes
 * an object: it may not take the removals' reserve) and the image is
 * untouched, where a plain rename is done.
 */
static void test_rename_whiteout(void)
{
	struct r4_ident who = {1000, 1000, NULL, 0, 022};
	struct r4_setattr sa = {.mask = R4_SET_MODE | R4_SET_GID, .mode = 02777, .gid = 77};
	struct r4_stat a, w, w2, st;
	r4_file *root = NULL, *fw, *fw2;
	unsigned long long sum;
	uint64_t n0;
	r4_db *db = fresh();

	if (!db)
		return;
	CHECK_RC(t_run(db, "/..new/(name <- \"w\"; type <- directory); /w/a <- \"AAAA\"; "
		      "/w/c <- \"CC\""));
	CHECK_RC(r4_stat(db, "/w/a", &a));
	CHECK_RC(r4_stat(db, "/w", &w));
	n0 = objects(db);
	/* to a new name */
	CHECK_RC(r4_rename(db, "/w/a", "/w/b", R4_RENAME_WHITEOUT));
	check_whiteout(db, "/w/a", 0, 0);
	CHECK_RC(r4_stat(db, "/w/b", &st));
	CHECK_EQ(st.ino, a.ino);
	CHECK(holds(db, "/w/b", "AAAA"));
	CHECK_RC(r4_stat(db, "/w", &st));
	CHECK(st.size == w.size + 1 && st.nlink == w.nlink);
	CHECK_EQ(objects(db), n0 + 1);
	/* over another file, which goes */
	CHECK_RC(r4_rename(db, "/w/b", "/w/c", R4_RENAME_WHITEOUT));
	check_whiteout(db, "/w/b", 0, 0);
	CHECK(holds(db, "/w/c", "AAAA"));
	CHECK_EQ(objects(db), n0 + 1);
	/* refusals change nothing */
	CHECK_EQ(r4_rename(db, "/w/c", "/w/a", R4_RENAME_WHITEOUT | R4_RENAME_NOREPLACE), -EEXIST);
	CHECK_EQ(r4_rename(db, "/w/c", "/w/a", R4_RENAME_WHITEOUT | R4_RENAME_EXCHANGE), -EINVAL);
	CHECK_EQ(r4_rename(db, "/w/c", "/w/x", 8), -EINVAL);
	CHECK_EQ(r4_rename(db, "/w/none", "/w/x", R4_RENAME_WHITEOUT), -ENOENT);
	CHECK(holds(db, "/w/c", "AAAA"));
	check_whiteout(db, "/w/a", 0, 0);
	CHECK_EQ(r4_stat(db, "/w/x", &st), -ENOENT);
	CHECK_EQ(objects(db), n0 + 1);
	/* NOREPLACE onto a free name */
	CHECK_RC(r4_rename(db, "/w/c", "/w/e", R4_RENAME_WHITEOUT | R4_RENAME_NOREPLACE));
	check_whiteout(db, "/w/c", 0, 0);
	CHECK(holds(db, "/w/e", "AAAA"));
	/* a directory to another parent, by the handle call as an identity,
	 * out of a setgid directory */
	CHECK_RC(r4_setattr(db, "/w", &sa));
	CHECK_RC(r4_mkdir(db, "/w/d", 0777, 0, 0));
	CHECK_RC(r4_mkdir(db, "/w/d/sub", 0755, 0, 0));
	CHECK_RC(r4_mkdir(db, "/w2", 0777, 0, 0));
	CHECK_RC(r4_stat(db, "/w", &w));
	CHECK_RC(r4_stat(db, "/w2", &w2));
	CHECK_RC(r4_act_as(db, &who, 0));
	CHECK_RC(r4_file_root(db, &root));
	fw = t_at(root, "w");
	fw2 = t_at(root, "w2");
	CHECK_EQ(r4_file_rename(fw, "d", 1, fw2, "d", 1, R4_RENAME_WHITEOUT | R4_RENAME_EXCHANGE),
		 -EINVAL);
	CHECK_RC(r4_file_rename(fw, "d", 1, fw2, "d", 1, R4_RENAME_WHITEOUT));
	CHECK_RC(r4_act_as(db, NULL, 0));
	check_whiteout(db, "/w/d", 1000, 77);
	CHECK_RC(r4_stat(db, "/w2/d/sub", &st));
	CHECK_RC(r4_stat(db, "/w2/d/..", &st));
	CHECK_EQ(st.ino, w2.ino);
	CHECK_RC(r4_stat(db, "/w", &st));
	CHECK_EQ(st.nlink, w.nlink - 1);
	CHECK_RC(r4_stat(db, "/w2", &st));
	CHECK_EQ(st.nlink, w2.nlink + 1);
	r4_file_close(fw);
	r4_file_close(fw2);
	r4_file_close(root);
	check_clean(db);
	/* a full volume */
	t_fill(db, "/fill");
	CHECK_RC(r4_sync(db));
	sum = image_sum();
	n0 = objects(db);
	CHECK_EQ(r4_rename(db, "/w/e", "/w/f", R4_RENAME_WHITEOUT), -ENOSPC);
	CHECK(!r4_in_txn(db));
	CHECK(image_sum() == sum);
	CHECK(holds(db, "/w/e", "AAAA"));
	CHECK_EQ(r4_stat(db, "/w/f", &st), -ENOENT);
	CHECK_EQ(objects(db), n0);
	CHECK_RC(r4_rename(db, "/w/e", "/w/f", 0));
	CHECK(holds(db, "/w/f", "AAAA"));
	CHECK_RC(r4_unlink(db, "/fill"));
	check_clean(db);
	r4_close(db);
	t_both_clean(img, "whiteouts");
}

static void test_transactions(void)
{
	struct r4_open_opts oo = {.rw = true};
	unsigned long long sum;
	struct r4_stat st;
	r4_db *db = NULL;

	CHECK_RC(r4_mkfs(img, 64u << 20, NULL));
	sum = image_sum();
	CHECK_RC(r4_open(img, &oo, &db));
	CHECK_RC(r4_begin(db));
	CHECK_RC(r4_mkdir(db, "/x", 0755, 0, 0));
	char big[100000];
	memset(big, 7, sizeof(big));
	CHECK_RC(r4_create(db, "/x/f", 0644, 0, 0));
	CHECK_RC(r4_write(db, "/x/f", 0, big, sizeof(big)));
	CHECK_RC(r4_stat(db, "/x/f", &st));
	r4_abort(db);
	CHECK_EQ(r4_stat(db, "/x", &st), -ENOENT);
	r4_close(db);
	CHECK(image_sum() == sum);	/* abort: the image was never touched */

	/* refusals do not poison; nothing reaches the image before commit */
	CHECK_RC(r4_open(img, &oo, &db));
	CHECK_RC(r4_begin(db));
	CHECK_RC(r4_mkdir(db, "/y", 0755, 0, 0));
	CHECK_EQ(r4_mkdir(db, "/y", 0755, 0, 0), -EEXIST);
	CHECK_RC(r4_create(db, "/y/f", 0644, 0, 0));
	CHECK(image_sum() == sum);
	CHECK_RC(r4_commit(db));
	CHECK(image_sum() != sum);
	CHECK_RC(r4_stat(db, "/y/f", &st));
	/* read-only handles refuse changes */
	r4_close(db);
	oo.rw = false;
	CHECK_RC(r4_open(img, &oo, &db));
	CHECK_EQ(r4_create(db, "/z", 0644, 0, 0), -EROFS);
	CHECK_EQ(r4_begin(db), -EROFS);
	r4_close(db);
}

/* A call by path right after a make of that path skips the walk while
 * nothing changed since (fs.c made_here): whatever changes the way to the
 * path in between, or an abort, must be seen. */
static void test_made_path(void)
{
	struct r4_open_opts oo = {.rw = true};
	char got[8];
	size_t n;
	r4_db *db = NULL;

	CHECK_RC(r4_mkfs(img, 64u << 20, NULL));
	CHECK_RC(r4_open(img, &oo, &db));
	CHECK_RC(r4_begin(db));
	CHECK_RC(r4_mkdir(db, "/a", 0755, 0, 0));
	CHECK_RC(r4_create(db, "/a/f", 0644, 0, 0));
	CHECK_RC(r4_write(db, "/a/f", 0, "one", 3));	/* the made object itself */
	CHECK_RC(r4_create(db, "/a/g", 0644, 0, 0));
	CHECK_RC(r4_rename(db, "/a", "/b", 0));
	CHECK_EQ(r4_write(db, "/a/g", 0, "x", 1), -ENOENT);
	CHECK_RC(r4_create(db, "/b/h", 0644, 0, 0));
	CHECK_RC(r4_unlink(db, "/b/h"));
	CHECK_EQ(r4_write(db, "/b/h", 0, "x", 1), -ENOENT);
	CHECK_RC(r4_create(db, "/b/i", 0644, 0, 0));
	r4_abort(db);	/* /b/i made, then thrown away: the same gen may come back */
	CHECK_RC(r4_begin(db));
	CHECK_RC(r4_mkdir(db, "/b", 0755, 0, 0));
	CHECK_EQ(r4_write(db, "/b/i", 0, "x", 1), -ENOENT);
	CHECK_RC(r4_create(db, "/b/j", 0644, 0, 0));
	CHECK_RC(r4_commit(db));
	CHECK_RC(r4_write(db, "/b/j", 0, "two", 3));	/* its own transaction */
	CHECK_RC(r4_read(db, "/b/j", 0, got, sizeof(got), &n));
	CHECK(n == 3 && !memcmp(got, "two", 3));
	CHECK_EQ(r4_read(db, "/b/f", 0, got, sizeof(got), &n), -ENOENT);
	r4_close(db);
}

/* The memo of objects and names (obj.c) never answers from a state the
 * tree has left: a name looked up missing, then made; an object stat'ed,
 * then changed; a directory renamed and its name looked up again; every
 * one of them across an abort (where the same gen comes back). */
static void test_lookup_memo(void)
{
	struct r4_open_opts oo = {.rw = true};
	struct r4_stat st;
	r4_db *db = NULL;

	CHECK_RC(r4_mkfs(img, 64u << 20, NULL));
	CHECK_RC(r4_open(img, &oo, &db));
	CHECK_RC(r4_begin(db));
	CHECK_RC(r4_mkdir(db, "/d", 0755, 0, 0));
	CHECK_EQ(r4_stat(db, "/d/f", &st), -ENOENT);
	CHECK_EQ(r4_stat(db, "/d/f", &st), -ENOENT);	/* (from the memo) */
	CHECK_RC(r4_create(db, "/d/f", 0644, 0, 0));
	CHECK_RC(r4_stat(db, "/d/f", &st));
	CHECK_EQ(st.size, 0);
	CHECK_RC(r4_write(db, "/d/f", 0, "abc", 3));
	CHECK_RC(r4_stat(db, "/d/f", &st));
	CHECK_EQ(st.size, 3);
	CHECK_RC(r4_stat(db, "/d", &st));
	CHECK_EQ(st.nlink, 2);
	CHECK_RC(r4_mkdir(db, "/d/sub", 0755, 0, 0));
	CHECK_RC(r4_stat(db, "/d", &st));
	CHECK_EQ(st.nlink, 3);
	CHECK_RC(r4_rename(db, "/d", "/e", 0));
	CHECK_EQ(r4_stat(db, "/d/f", &st), -ENOENT);
	CHECK_RC(r4_stat(db, "/e/f", &st));
	/* changes elsewhere keep what holds; changes here end it (the memo
	 * follows each object's and each directory's own changes) */
	CHECK_RC(r4_mkdir(db, "/o", 0755, 0, 0));
	for (int i = 0; i < 50; i++) {
		char p[32];

		snprintf(p, sizeof(p), "/o/x%d", i);
		CHECK_RC(r4_create(db, p, 0644, 0, 0));
		CHECK_RC(r4_stat(db, "/e/f", &st));
		CHECK_EQ(st.size, 3);
	}
	CHECK_RC(r4_link(db, "/e/f", "/o/hard"));
	CHECK_RC(r4_stat(db, "/e/f", &st));
	CHECK_EQ(st.nlink, 2);
	CHECK_RC(r4_rename(db, "/o/hard", "/e/g2", 0));
	CHECK_EQ(r4_stat(db, "/o/hard", &st), -ENOENT);
	CHECK_RC(r4_stat(db, "/e/g2", &st));
	CHECK_RC(r4_unlink(db, "/e/g2"));
	CHECK_RC(r4_stat(db, "/e/f", &st));
	CHECK_EQ(st.nlink, 1);
	CHECK_RC(r4_commit(db));
	CHECK_RC(r4_begin(db));
	CHECK_RC(r4_stat(db, "/e/f", &st));
	CHECK_RC(r4_unlink(db, "/e/f"));
	CHECK_EQ(r4_stat(db, "/e/f", &st), -ENOENT);
	r4_abort(db);	/* the unlink undone: the memo's answer goes with it */
	CHECK_RC(r4_begin(db));
	CHECK_RC(r4_stat(db, "/e/f", &st));
	CHECK_EQ(st.size, 3);
	CHECK_RC(r4_create(db, "/e/g", 0644, 0, 0));
	CHECK_RC(r4_stat(db, "/e/g", &st));
	r4_abort(db);
	CHECK_EQ(r4_stat(db, "/e/g", &st), -ENOENT);
	CHECK_RC(r4_begin(db));
	CHECK_EQ(r4_stat(db, "/e/g", &st), -ENOENT);
	/* a file just made is written without looking for a body (fs.c
	 * made_here): as tails, as extents, and written again after */
	{
		static char big[20000], got[20000];
		size_t n;

		for (size_t i = 0; i < sizeof(big); i++)
			big[i] = (char)('a' + i % 23);
		CHECK_RC(r4_create(db, "/e/big", 0644, 0, 0));
		CHECK_RC(r4_write(db, "/e/big", 0, big, sizeof(big)));
		CHECK_RC(r4_read(db, "/e/big", 0, got, sizeof(got), &n));
		CHECK(n == sizeof(big) && !memcmp(got, big, n));
		CHECK_RC(r4_create(db, "/e/c", 0644, 0, 0));
		CHECK_RC(r4_write(db, "/e/c", 0, "abc", 3));
		CHECK_RC(r4_write(db, "/e/c", 1, "Z", 1));
		CHECK_RC(r4_read(db, "/e/c", 0, got, sizeof(got), &n));
		CHECK(n == 3 && !memcmp(got, "aZc", 3));
	}
	/* what a walk finds after a change (the object kept as its stat data
	 * was just stored, the name as just entered) is what a fresh open
	 * reads, nanoseconds and all */
	{
		static const char *const paths[] = {"/e", "/e/c", "/e/n", "/e/nd"};
		struct r4_setattr sa = {.mask = R4_SET_MTIME | R4_SET_MODE, .mode = 0600,
					.mtime = {1234567, 987654321}};
		struct r4_stat before[4], after[4];

		CHECK_RC(r4_create(db, "/e/n", 0644, 0, 0));
		CHECK_RC(r4_write(db, "/e/n", 0, "xy", 2));
		CHECK_RC(r4_setattr(db, "/e/n", &sa));
		CHECK_RC(r4_mkdir(db, "/e/nd", 0755, 0, 0));
		CHECK_RC(r4_setattr(db, "/e/nd", &sa));
		for (int i = 0; i < 4; i++)
			CHECK_RC(r4_stat(db, paths[i], &before[i]));
		CHECK_RC(r4_commit(db));
		r4_close(db);
		db = NULL;
		CHECK_RC(r4_open(img, &oo, &db));
		for (int i = 0; i < 4; i++) {
			CHECK_RC(r4_stat(db, paths[i], &after[i]));
			CHECK(before[i].mode == after[i].mode && before[i].nlink == after[i].nlink &&
			      before[i].size == after[i].size &&
			      before[i].mtime.tv_sec == after[i].mtime.tv_sec &&
			      before[i].mtime.tv_nsec == after[i].mtime.tv_nsec &&
			      before[i].ctime.tv_nsec == after[i].ctime.tv_nsec);
		}
		CHECK_EQ(after[2].mtime.tv_nsec, 987654321);
		CHECK_EQ(after[2].size, 2);
	}
	r4_close(db);
	t_both_clean(img, "the memo and made files");
}

/* A stat data is stored again where it was read or stored last, without
 * a lookup (struct r4_item_hint), only while it is still there: the
 * directory's, between creates that split its leaf and move items to
 * new ones, removals that empty leaves, and commits that renumber nodes,
 * each time with a time of its own; the last one is what reads back. */
static void test_sd_hint(void)
{
	struct r4_open_opts oo = {.rw = true};
	struct r4_setattr sa = {.mask = R4_SET_MTIME};
	struct r4_stat st;
	r4_db *db = NULL;
	char p[64];

	CHECK_RC(r4_mkfs(img, 64u << 20, NULL));
	CHECK_RC(r4_open(img, &oo, &db));
	CHECK_RC(r4_begin(db));
	CHECK_RC(r4_mkdir(db, "/d", 0755, 0, 0));
	for (int i = 0; i < 3000; i++) {
		/* (the root's entries sort before /d's stat data: they push it
		 * on in its leaf and split it off) */
		snprintf(p, sizeof(p), "%s/f%05d", i % 3 ? "/d" : "", i);
		CHECK_RC(r4_create(db, p, 0644, 0, 0));
		if (i % 7 == 0) {
			sa.mtime = (struct timespec){1000000 + i, 0};
			CHECK_RC(r4_setattr(db, "/d", &sa));
		}
		if (i % 500 == 499) {
			CHECK_RC(r4_commit(db));
			CHECK_RC(r4_begin(db));
		}
	}
	for (int i = 0; i < 3000; i += 2) {
		snprintf(p, sizeof(p), "%s/f%05d", i % 3 ? "/d" : "", i);
		CHECK_RC(r4_unlink(db, p));
		if (i % 14 == 0) {
			sa.mtime = (struct timespec){2000000 + i, 0};
			CHECK_RC(r4_setattr(db, "/d", &sa));
		}
	}
	sa.mtime = (struct timespec){3000000, 0};
	CHECK_RC(r4_setattr(db, "/d", &sa));
	CHECK_RC(r4_commit(db));
	r4_close(db);
	db = NULL;
	CHECK_RC(r4_open(img, &oo, &db));
	CHECK_RC(r4_stat(db, "/d", &st));
	CHECK_EQ(st.mtime.tv_sec, 3000000);
	CHECK_EQ(st.nlink, 2);
	r4_close(db);
	t_both_clean(img, "stat data stored where it was found last");
}

/* A name whose key is above every entry of its directory is known
 * missing without a lookup (obj.c's memo of a directory's top key), only
 * while the directory's entries change by adds the memo follows: names
 * made in order, one below the top, and then a rename, a link and an
 * unlink into it, an abort, each of them seen at once. */
static void test_dir_top(void)
{
	struct r4_open_opts oo = {.rw = true};
	struct r4_stat st;
	r4_db *db = NULL;
	char p[64];

	CHECK_RC(r4_mkfs(img, 64u << 20, NULL));
	CHECK_RC(r4_open(img, &oo, &db));
	CHECK_RC(r4_begin(db));
	CHECK_RC(r4_mkdir(db, "/d", 0755, 0, 0));
	CHECK_RC(r4_mkdir(db, "/x", 0755, 0, 0));
	CHECK_RC(r4_create(db, "/x/zz9", 0644, 0, 0));
	CHECK_RC(r4_create(db, "/x/zz8", 0644, 0, 0));
	for (int i = 0; i < 300; i++) {
		snprintf(p, sizeof(p), "/d/f%04d", i);
		CHECK_EQ(r4_stat(db, p, &st), -ENOENT);
		CHECK_RC(r4_create(db, p, 0644, 0, 0));
		CHECK_RC(r4_stat(db, p, &st));
	}
	CHECK_RC(r4_create(db, "/d/a0", 0644, 0, 0));	/* (below the top) */
	CHECK_RC(r4_stat(db, "/d/a0", &st));
	CHECK_EQ(r4_stat(db, "/d/zz9", &st), -ENOENT);
	CHECK_RC(r4_rename(db, "/x/zz9", "/d/zz9", 0));	/* (above it) */
	CHECK_RC(r4_stat(db, "/d/zz9", &st));
	CHECK_EQ(r4_stat(db, "/d/zz8", &st), -ENOENT);
	CHECK_RC(r4_link(db, "/x/zz8", "/d/zz8"));
	CHECK_RC(r4_stat(db, "/d/zz8", &st));
	CHECK_RC(r4_unlink(db, "/d/zz8"));
	CHECK_EQ(r4_stat(db, "/d/zz8", &st), -ENOENT);
	CHECK_RC(r4_commit(db));
	CHECK_RC(r4_begin(db));
	CHECK_EQ(r4_stat(db, "/d/g", &st), -ENOENT);
	CHECK_RC(r4_create(db, "/d/g", 0644, 0, 0));
	CHECK_RC(r4_stat(db, "/d/g", &st));
	r4_abort(db);
	CHECK_RC(r4_begin(db));
	CHECK_EQ(r4_stat(db, "/d/g", &st), -ENOENT);
	CHECK_RC(r4_create(db, "/d/g", 0644, 0, 0));
	CHECK_RC(r4_commit(db));
	r4_close(db);
	t_both_clean(img, "a directory's top key");
}

static int count_entry(void *ctx, const char *name, size_t len, uint64_t ino, uint32_t type)
{
	(void)name;
	(void)len;
	(void)ino;
	(void)type;
	++*(unsigned *)ctx;
	return 0;
}

/* Entries added in no order, short names (in the key) and long ones (in
 * the unit), land in the middle of full directory items (obj.c
 * cde_add_in_place) and at their ends: each is found, the listing has
 * them all, both checkers pass the image. */
static void test_dir_inserts(void)
{
	struct r4_open_opts oo = {.rw = true};
	struct r4_stat st;
	char path[160];
	unsigned n = 0;
	struct r4_dirpos pos = {0};
	r4_db *db = NULL;

	CHECK_RC(r4_mkfs(img, 64u << 20, NULL));
	CHECK_RC(r4_open(img, &oo, &db));
	CHECK_RC(r4_begin(db));
	CHECK_RC(r4_mkdir(db, "/d", 0755, 0, 0));
	for (unsigned i = 0; i < 600; i++) {
		unsigned k = (i * 379) % 600;	/* (379 is prime to 600: each k once) */

		snprintf(path, sizeof(path), k % 3 ? "/d/f%u" : "/d/a-long-name-kept-in-its-unit-%u", k);
		CHECK_RC(r4_create(db, path, 0644, 0, 0));
	}
	CHECK_RC(r4_commit(db));
	for (unsigned k = 0; k < 600; k++) {
		snprintf(path, sizeof(path), k % 3 ? "/d/f%u" : "/d/a-long-name-kept-in-its-unit-%u", k);
		CHECK_RC(r4_stat(db, path, &st));
	}
	CHECK_RC(r4_readdir(db, "/d", &pos, count_entry, &n));
	CHECK_EQ(n, 602);
	r4_close(db);
	t_both_clean(img, "entries added in no order");
}

/* r4_grow doubles from first and keeps the array as it was when the heap
 * refuses or the bytes would overflow; r4_quote_byte writes R4L's escapes. */
static void test_helpers(void)
{
	int *v = NULL, *was;
	size_t cap = 0;
	char e[5];

	CHECK_RC(r4_grow(&v, &cap, 1, sizeof(*v), 4));
	CHECK(v && cap == 4);
	if (!v)
		return;
	v[3] = 7;
	CHECK_RC(r4_grow(&v, &cap, 4, sizeof(*v), 4));	/* room already */
	CHECK_EQ(cap, 4);
	CHECK_RC(r4_grow(&v, &cap, 9, sizeof(*v), 4));
	CHECK(cap == 16 && v[3] == 7);
	was = v;
	r4_heap_fail_at(1);
	CHECK_EQ(r4_grow(&v, &cap, 17, sizeof(*v), 4), -ENOMEM);
	r4_heap_fail_at(0);
	CHECK(v == was && cap == 16 && v[3] == 7);
	CHECK_EQ(r4_grow(&v, &cap, SIZE_MAX / 2 + 2, 1, 4), -ENOMEM);	/* the count overflows */
	CHECK_EQ(r4_grow(&v, &cap, SIZE_MAX / 4 + 1, sizeof(*v), 4), -ENOMEM);	/* the bytes do */
	CHECK(v == was && cap == 16 && v[3] == 7);
	r4_free(v);
	v = NULL;
	cap = 0;
	CHECK_RC(r4_grow(&v, &cap, 100, 1, 0));	/* first 0 counts as 1 */
	CHECK_EQ(cap, 128);
	r4_free(v);

	CHECK(r4_quote_byte(e, '\\') == 2 && !strcmp(e, "\\\\"));
	CHECK(r4_quote_byte(e, '"') == 2 && !strcmp(e, "\\\""));
	CHECK(r4_quote_byte(e, '\n') == 2 && !strcmp(e, "\\n"));
	CHECK(r4_quote_byte(e, '\t') == 2 && !strcmp(e, "\\t"));
	CHECK(r4_quote_byte(e, '\r') == 2 && !strcmp(e, "\\r"));
	CHECK(r4_quote_byte(e, 0) == 4 && !strcmp(e, "\\x00"));
	CHECK(r4_quote_byte(e, 0x1b) == 4 && !strcmp(e, "\\x1b"));
	CHECK(r4_quote_byte(e, 0x7f) == 4 && !strcmp(e, "\\x7f"));
	CHECK(r4_quote_byte(e, 'a') == 1 && !strcmp(e, "a"));
	CHECK(r4_quote_byte(e, 0xc3) == 1 && (unsigned char)e[0] == 0xc3 && !e[1]);	/* UTF-8 raw */
}

int main(void)
{
	char dir[128];
	r4_db *db;

	snprintf(dir, sizeof(dir), "%s/r4apiXXXXXX", t_tmp());
	if (!mkdtemp(dir))
		return 1;
	snprintf(img, sizeof(img), "%s/a.img", dir);
	db = fresh();
	if (db) {
		test_refusals(db);
		test_nlink_and_blocks(db);
		test_rename_flags(db);
		test_rename_times(db);
		test_times(db);
		test_statfs_inodes(db);
		test_readdir_cursor(db);
		test_readdir_tell(db);
		test_readdir_stat(db);
		test_dotdot_names(db);
		test_space_reclaimed(db);
		r4_close(db);
	}
	test_fallocate();
	test_fallocate_ccreg();
	test_punch();
	test_punch_ccreg();
	test_collapse_insert();
	test_symlink_limits();
	test_times_room();
	test_rename_whiteout();
	test_collisions();
	test_transactions();
	test_made_path();
	test_lookup_memo();
	test_sd_hint();
	test_dir_top();
	test_dir_inserts();
	test_helpers();
	int fsck = t_fsck(img);

	if (fsck < 0)
		printf("skip: fsck.reiser4 not installed, interop check skipped\n");
	else
		CHECK(fsck == 1);
	if (t_rmdir(dir))
		return 1;
	return T_DONE();
}
