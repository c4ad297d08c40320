/*
 * wa.c - write amplification (issue 3 item 9): bytes written to the image
 * per byte of user data, for new files and for random overwrites.
 *
 *   wa new IMG NFILES FILE_MIB FILES_PER_TXN
 *        mkfs IMG, then write NFILES files /w00000 ... of FILE_MIB MiB each in
 *        1 MiB r4_write calls, committing every FILES_PER_TXN files; r4_sync,
 *        r4_close.  Then reopen read-only and compare every byte.
 *   wa over IMG FILE_MIB TOTAL_MIB SEED
 *        mkfs IMG, write /f (FILE_MIB MiB, committed every 64 MiB, closed):
 *        not measured.  Then reopen and overwrite TOTAL_MIB MiB in aligned
 *        4 KiB r4_writes at random block offsets (SEED), 256 per r4_begin /
 *        r4_commit (1 MiB transactions); r4_sync, r4_close.  Then reopen
 *        read-only and compare every block with the model.
 *   wa posix-fill PATH FILE_MIB
 *   wa posix-over PATH FILE_MIB TOTAL_MIB SEED
 *   wa posix-verify PATH FILE_MIB TOTAL_MIB SEED
 *        the same overwrite workload on a plain file with pwrite, and fsync
 *        where r4 commits (bench/run.sh runs it on ext4 data=journal and
 *        counts the loop device's sectors written); verify replays the
 *        seed to rebuild the model.
 *
 * The measured span runs from r4_open to r4_close, so it holds every write
 * the engine makes for the workload (open and close included) and nothing
 * else: nothing is printed in it and engine log messages wait (iocount.h).
 * Bytes written are the wchar delta of /proc/self/io; pwrite bytes and
 * fdatasync calls come from link-time wrappers and must agree with it.
 * Block b's content at version v (0 = as filled, +1 per overwrite) is
 * derived from (b, v), so the model is one counter per block.  Output,
 * key=value lines for bench/run.sh:
 *
 *   phase=wa-over file_mib=F bytes_user=U bytes_written=W wa=X syncs=S txns=T secs=S ...
 *
 * Exit status 0 when every call worked and every byte compared equal, 1
 * otherwise (what and where on stderr), 2 for usage.  Time is reported,
 * never judged.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bench.h"
#include "iocount.h"
#include "r4.h"

#define BLK 4096u
#define MIB (1024u * 1024u)
#define BLKS_PER_MIB (MIB / BLK)
#define OVER_PER_TXN 256	/* 4 KiB overwrites per transaction: 1 MiB */
#define FILL_MIB_PER_TXN 64

/* ---- content and model ---- */

/* Block b of a file at version v: 8-byte words from (b, v). */
static void block_content(uint64_t b, uint32_t v, uint8_t *p)
{
	uint64_t base = mix64(b * 0x100000001B3ull ^ ((uint64_t)v << 44) ^ 0x7A11);

	for (unsigned j = 0; j < BLK; j += 8) {
		uint64_t r = mix64(base + j);

		memcpy(p + j, &r, 8);
	}
}

/* The overwrite sequence: splitmix64 from the seed, one draw per write. */
static uint64_t rng_next(uint64_t *s)
{
	*s += 0x9E3779B97F4A7C15ull;
	return mix64(*s);
}

/* Which version of block b is there: the newest v <= max that matches, or -1. */
static long which_version(uint64_t b, uint32_t max, const uint8_t *got)
{
	uint8_t want[BLK];

	for (long v = (long)max; v >= 0; v--) {
		block_content(b, (uint32_t)v, want);
		if (!memcmp(want, got, BLK))
			return v;
	}
	return -1;
}

static int fail(const char *what, const char *subject, int rc)
{
	fprintf(stderr, "wa: %s '%s': %s\n", what, subject, r4_strerror(rc));
	return 1;
}

static int open_db(const char *img, bool rw, r4_db **db)
{
	struct r4_open_opts o = { .rw = rw, .log = iolog_keep };
	int rc = r4_open(img, &o, db);

	return rc ? fail("cannot open image", img, rc) : 0;
}

static int make_image(const char *img, uint64_t size)
{
	struct r4_mkfs_opts o;
	int rc;

	r4_mkfs_defaults(&o);
	unlink(img);
	if ((rc = r4_mkfs(img, size, &o)))
		return fail("cannot make image", img, rc);
	return 0;
}

/* Compare len bytes of a file read at off (a multiple of BLK) with the model. */
static int compare_blocks(const char *path, uint64_t off, const uint8_t *got, size_t len,
			  const uint32_t *ver, uint64_t blk0)
{
	uint8_t want[BLK];

	for (size_t i = 0; i < len; i += BLK) {
		uint64_t b = (off + i) / BLK;
		uint32_t v = ver ? ver[b] : 0;

		block_content(blk0 + b, v, want);
		if (memcmp(want, got + i, BLK)) {
			long had = which_version(blk0 + b, v, got + i);

			if (had >= 0)
				fprintf(stderr,
					"wa: '%s': block %" PRIu64 " (offset %" PRIu64 ") holds "
					"version %ld, expected %" PRIu32 "\n",
					path, b, off + i, had, v);
			else
				fprintf(stderr,
					"wa: '%s': block %" PRIu64 " (offset %" PRIu64 ") holds "
					"bytes of no version 0..%" PRIu32 "\n",
					path, b, off + i, v);
			return 1;
		}
	}
	return 0;
}

/* Read a whole file of mib MiB back in 1 MiB chunks and compare. */
static int verify_file(r4_db *db, const char *path, uint64_t mib, const uint32_t *ver,
		       uint64_t blk0, uint8_t *buf)
{
	struct r4_stat st;
	size_t got;
	int rc;

	if ((rc = r4_stat(db, path, &st)))
		return fail("cannot stat", path, rc);
	if (st.size != mib * MIB) {
		fprintf(stderr, "wa: '%s': size %" PRIu64 ", expected %" PRIu64 "\n", path,
			st.size, mib * MIB);
		return 1;
	}
	for (uint64_t c = 0; c < mib; c++) {
		if ((rc = r4_read(db, path, c * MIB, buf, MIB, &got)))
			return fail("cannot read", path, rc);
		if (got != MIB) {
			fprintf(stderr, "wa: '%s': short read at MiB %" PRIu64 ": %zu bytes\n",
				path, c, got);
			return 1;
		}
		if (compare_blocks(path, c * MIB, buf, MIB, ver, blk0))
			return 1;
	}
	return 0;
}

static void fill_chunk(uint64_t blk0, uint8_t *buf)
{
	for (unsigned i = 0; i < BLKS_PER_MIB; i++)
		block_content(blk0 + i, 0, buf + (size_t)i * BLK);
}

/* A measured span: wchar and counters at its start. */
struct span {
	uint64_t wchar;
	struct io_counts c;
	double t;
};

static void span_start(struct span *s)
{
	s->c = cnt;
	s->wchar = io_wchar();
	s->t = now();
}

static void span_print(const struct span *s, const char *phase, const char *extra,
		       uint64_t user, uint64_t txns)
{
	double secs = now() - s->t;
	uint64_t w = io_wchar() - s->wchar;
	uint64_t pw = cnt.pwrite_bytes - s->c.pwrite_bytes;
	uint64_t syncs = cnt.syncs - s->c.syncs;

	printf("phase=%s %s bytes_user=%" PRIu64 " bytes_written=%" PRIu64 " wa=%.3f"
	       " pwrite_bytes=%" PRIu64 " pwrites=%" PRIu64 " syncs=%" PRIu64 " txns=%" PRIu64
	       " syncs_per_txn=%.2f secs=%.2f rate=%.1f unit=MiB/s\n",
	       phase, extra, user, w, (double)w / (double)user, pw,
	       cnt.pwrites - s->c.pwrites, syncs, txns, txns ? (double)syncs / (double)txns : 0.0,
	       secs, (double)user / MIB / secs);
	if (pw != w)
		printf("warning: phase=%s wchar delta %" PRIu64 " != pwrite bytes %" PRIu64
		       " (something else wrote in the span)\n",
		       phase, w, pw);
}

/* ---- wa new ---- */

static int wa_new(const char *img, uint64_t nfiles, uint64_t fmib, uint64_t per_txn)
{
	uint8_t *buf = malloc(MIB);
	r4_db *db = NULL;
	struct span sp;
	char path[32], extra[96];
	uint64_t i = 0, c = 0, txns = 0;
	int rc = 0;

	if (!buf)
		return 1;
	if (make_image(img, nfiles * fmib * MIB / 4 * 5 + 256ull * MIB))
		goto out1;
	span_start(&sp);
	if (open_db(img, true, &db))
		goto out1;
	for (i = 0; i < nfiles; i++) {
		snprintf(path, sizeof(path), "/w%05" PRIu64, i);
		if (i % per_txn == 0 && (rc = r4_begin(db)))
			goto bad;
		if ((rc = r4_create(db, path, S_IFREG | 0644, 0, 0)))
			goto bad;
		for (c = 0; c < fmib; c++) {
			fill_chunk((i * fmib + c) * BLKS_PER_MIB, buf);
			if ((rc = r4_write(db, path, c * MIB, buf, MIB)))
				goto bad;
		}
		if ((i + 1) % per_txn == 0 || i + 1 == nfiles) {
			if ((rc = r4_commit(db)))
				goto bad;
			txns++;
		}
	}
	if ((rc = r4_sync(db)))
		goto bad;
	r4_close(db);
	db = NULL;
	snprintf(extra, sizeof(extra),
		 "files=%" PRIu64 " file_mib=%" PRIu64 " files_per_txn=%" PRIu64, nfiles, fmib,
		 per_txn);
	span_print(&sp, "wa-new", extra, nfiles * fmib * MIB, txns);
	iolog_flush("wa");

	sp.t = now();
	if (open_db(img, false, &db))
		goto out1;
	for (i = 0; i < nfiles; i++) {
		snprintf(path, sizeof(path), "/w%05" PRIu64, i);
		if (verify_file(db, path, fmib, NULL, i * fmib * BLKS_PER_MIB, buf))
			goto out1;
	}
	printf("phase=wa-new-verify files=%" PRIu64 " secs=%.2f ok\n", nfiles, now() - sp.t);
	r4_close(db);
	free(buf);
	return 0;
bad:
	iolog_flush("wa");
	fprintf(stderr, "wa: '%s' at MiB %" PRIu64 ": %s\n", path, c, r4_strerror(rc));
out1:
	iolog_flush("wa");
	r4_close(db);
	free(buf);
	return 1;
}

/* ---- wa over ---- */

/* Write /f: mib MiB of version 0, committing every FILL_MIB_PER_TXN MiB. */
static int fill_r4(const char *img, uint64_t mib, uint8_t *buf)
{
	r4_db *db = NULL;
	struct span sp;
	char extra[64];
	uint64_t c = 0, txns = 0;
	int rc;

	span_start(&sp);
	if (open_db(img, true, &db))
		return 1;
	if ((rc = r4_create(db, "/f", S_IFREG | 0644, 0, 0)))
		goto bad;
	for (c = 0; c < mib; c++) {
		if (c % FILL_MIB_PER_TXN == 0 && (rc = r4_begin(db)))
			goto bad;
		fill_chunk(c * BLKS_PER_MIB, buf);
		if ((rc = r4_write(db, "/f", c * MIB, buf, MIB)))
			goto bad;
		if ((c + 1) % FILL_MIB_PER_TXN == 0 || c + 1 == mib) {
			if ((rc = r4_commit(db)))
				goto bad;
			txns++;
		}
	}
	if ((rc = r4_sync(db)))
		goto bad;
	r4_close(db);
	snprintf(extra, sizeof(extra), "file_mib=%" PRIu64, mib);
	span_print(&sp, "wa-fill", extra, mib * MIB, txns);
	iolog_flush("wa");
	return 0;
bad:
	iolog_flush("wa");
	fprintf(stderr, "wa: filling '/f' at MiB %" PRIu64 ": %s\n", c, r4_strerror(rc));
	r4_close(db);
	return 1;
}

static int wa_over(const char *img, uint64_t fmib, uint64_t tmib, uint64_t seed)
{
	uint64_t nblk = fmib * BLKS_PER_MIB, nwrites = tmib * BLKS_PER_MIB, s = seed;
	uint32_t *ver = calloc(nblk, sizeof(*ver));
	uint8_t *buf = malloc(MIB);
	uint64_t w = 0, txns = 0, b = 0;
	r4_db *db = NULL;
	struct span sp;
	char extra[96];
	int rc = 0;

	if (!ver || !buf)
		goto out;
	/* room for the file, a quarter more, and the journal's copies */
	if (make_image(img, fmib * MIB / 4 * 5 + 256ull * MIB) || fill_r4(img, fmib, buf))
		goto out;
	span_start(&sp);
	if (open_db(img, true, &db))
		goto out;
	for (w = 0; w < nwrites; w++) {
		if (w % OVER_PER_TXN == 0 && (rc = r4_begin(db)))
			goto bad;
		b = rng_next(&s) % nblk;
		block_content(b, ++ver[b], buf);
		if ((rc = r4_write(db, "/f", b * BLK, buf, BLK)))
			goto bad;
		if ((w + 1) % OVER_PER_TXN == 0 || w + 1 == nwrites) {
			if ((rc = r4_commit(db)))
				goto bad;
			txns++;
		}
	}
	if ((rc = r4_sync(db)))
		goto bad;
	r4_close(db);
	db = NULL;
	snprintf(extra, sizeof(extra),
		 "file_mib=%" PRIu64 " over_mib=%" PRIu64 " seed=%" PRIu64 " writes_per_txn=%d",
		 fmib, tmib, seed, OVER_PER_TXN);
	span_print(&sp, "wa-over", extra, nwrites * BLK, txns);
	iolog_flush("wa");

	sp.t = now();
	if (open_db(img, false, &db) || verify_file(db, "/f", fmib, ver, 0, buf))
		goto out;
	printf("phase=wa-over-verify file_mib=%" PRIu64 " secs=%.2f ok\n", fmib, now() - sp.t);
	r4_close(db);
	free(ver);
	free(buf);
	return 0;
bad:
	iolog_flush("wa");
	fprintf(stderr,
		"wa: overwrite %" PRIu64 " (block %" PRIu64 ", transaction %" PRIu64 ", seed %" PRIu64
		"): %s\n",
		w, b, txns, seed, r4_strerror(rc));
out:
	iolog_flush("wa");
	r4_close(db);
	free(ver);
	free(buf);
	return 1;
}

/* ---- the same overwrites on a plain file (the ext4 peer) ---- */

static int sys_fail(const char *what, const char *path)
{
	fprintf(stderr, "wa: %s '%s': %s\n", what, path, strerror(errno));
	return 1;
}

static int posix_fill(const char *path, uint64_t mib)
{
	uint8_t *buf = malloc(MIB);
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644), rc = 1;
	double t0 = now();

	if (!buf || fd < 0) {
		rc = sys_fail("cannot create", path);
		goto out;
	}
	for (uint64_t c = 0; c < mib; c++) {
		fill_chunk(c * BLKS_PER_MIB, buf);
		if (pwrite(fd, buf, MIB, (off_t)(c * MIB)) != (ssize_t)MIB) {
			rc = sys_fail("cannot write", path);
			goto out;
		}
	}
	if (fsync(fd)) {
		rc = sys_fail("cannot fsync", path);
		goto out;
	}
	printf("phase=wa-fill-posix file_mib=%" PRIu64 " secs=%.2f\n", mib, now() - t0);
	rc = 0;
out:
	if (fd >= 0)
		close(fd);
	free(buf);
	return rc;
}

static int posix_over(const char *path, uint64_t fmib, uint64_t tmib, uint64_t seed, bool verify)
{
	uint64_t nblk = fmib * BLKS_PER_MIB, nwrites = tmib * BLKS_PER_MIB, s = seed, txns = 0;
	uint32_t *ver = calloc(nblk, sizeof(*ver));
	uint8_t *buf = malloc(MIB);
	int fd = open(path, verify ? O_RDONLY : O_RDWR), rc = 1;
	double t0 = now();

	if (!ver || !buf || fd < 0) {
		rc = sys_fail("cannot open", path);
		goto out;
	}
	for (uint64_t w = 0; w < nwrites; w++) {
		uint64_t b = rng_next(&s) % nblk;

		++ver[b];
		if (verify)
			continue;
		block_content(b, ver[b], buf);
		if (pwrite(fd, buf, BLK, (off_t)(b * BLK)) != (ssize_t)BLK) {
			rc = sys_fail("cannot write", path);
			goto out;
		}
		if (((w + 1) % OVER_PER_TXN == 0 || w + 1 == nwrites)) {
			if (fsync(fd)) {
				rc = sys_fail("cannot fsync", path);
				goto out;
			}
			txns++;
		}
	}
	if (!verify) {
		printf("phase=wa-over-posix file_mib=%" PRIu64 " over_mib=%" PRIu64 " seed=%" PRIu64
		       " writes_per_txn=%d bytes_user=%" PRIu64 " txns=%" PRIu64
		       " secs=%.2f rate=%.1f unit=MiB/s\n",
		       fmib, tmib, seed, OVER_PER_TXN, nwrites * BLK, txns, now() - t0,
		       (double)tmib / (now() - t0));
		rc = 0;
		goto out;
	}
	for (uint64_t c = 0; c < fmib; c++) {
		if (pread(fd, buf, MIB, (off_t)(c * MIB)) != (ssize_t)MIB) {
			rc = sys_fail("cannot read", path);
			goto out;
		}
		if (compare_blocks(path, c * MIB, buf, MIB, ver, 0))
			goto out;
	}
	printf("phase=wa-over-posix-verify file_mib=%" PRIu64 " secs=%.2f ok\n", fmib, now() - t0);
	rc = 0;
out:
	if (fd >= 0)
		close(fd);
	free(ver);
	free(buf);
	return rc;
}

/* ---- driver ---- */

static bool num(const char *s, uint64_t *v)
{
	char *end;

	errno = 0;
	*v = strtoull(s, &end, 10);
	return !errno && *s && !*end;
}

int main(int argc, char **argv)
{
	static const struct {
		const char *name;
		int nargs;	/* numbers after the path; all but a seed nonzero */
	} modes[] = { { "new", 3 }, { "over", 3 }, { "posix-fill", 1 }, { "posix-over", 3 },
		      { "posix-verify", 3 } };
	uint64_t a[3] = { 0, 0, 0 };
	int mode = -1;

	for (int i = 0; argc > 1 && i < (int)(sizeof(modes) / sizeof(modes[0])); i++)
		if (!strcmp(argv[1], modes[i].name))
			mode = i;
	if (mode < 0 || argc != 3 + modes[mode].nargs)
		goto usage;
	for (int i = 0; i < modes[mode].nargs; i++)
		if (!num(argv[3 + i], &a[i]) || (!a[i] && !(i == 2 && mode != 0)))
			goto usage;
	switch (mode) {
	case 0:
		return wa_new(argv[2], a[0], a[1], a[2]);
	case 1:
		return wa_over(argv[2], a[0], a[1], a[2]);
	case 2:
		return posix_fill(argv[2], a[0]);
	default:
		return posix_over(argv[2], a[0], a[1], a[2], mode == 4);
	}
usage:
	fprintf(stderr, "usage: wa new IMG NFILES FILE_MIB FILES_PER_TXN\n"
			"       wa over IMG FILE_MIB TOTAL_MIB SEED\n"
			"       wa posix-fill PATH FILE_MIB\n"
			"       wa posix-over|posix-verify PATH FILE_MIB TOTAL_MIB SEED\n");
	return 2;
}
