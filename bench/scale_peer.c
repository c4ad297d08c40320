/*
 * scale_peer.c - the small-file half of bench/scale.c, done by the peer:
 * reiser4progs' libreiser4 (1.2.2), on an image made by
 * `mkfs.reiser4 -o create=reg40`.
 *
 *   scale_peer small IMG N   create /d/fNNNNNNN (N files of 100 bytes, the
 *                            same names and bytes as scale.c), syncing every
 *                            1,000 files; then reopen read-only and read
 *                            every file back, comparing its bytes
 *
 * What "the same work" means here: each create first looks the name up (as
 * r4_create must, for -EEXIST); every 1,000 files reiser4_fs_sync and
 * aal_device_sync (fsync) stand in for r4_commit, which writes and syncs.
 * libreiser4 writes in place without the journal, as reiser4progs' own
 * tools do.  Files keep the volume's formatting policy (smart), which puts
 * 100 bytes in a tail item, so no per-file plugin stat data is stored.  The
 * tree cache is flushed above 16384 nodes, r4's default cache bound.
 *
 *   scale_peer ls IMG N      small's write phase, then list /d LS_REPS times
 *                            each way, each on a fresh open (not counted):
 *                            ls-names, reiser4_object_readdir of /d (name and
 *                            stat-data key of each entry: libreiser4's
 *                            readdir); ls-stat, the same plus each entry's
 *                            attributes: reiser4_object_obtain by the key the
 *                            entry holds (no lookup by name: the cheapest
 *                            public way) and reiser4_object_stat (light-
 *                            weight, unix and large-time extensions)
 *
 * Each phase runs in a child (fork + wait4) for its own peak RSS.  Used
 * blocks come from the format40 super block (block count - free blocks) of
 * the image file, read before and after.  Output lines as scale.c's.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <reiser4/libreiser4.h>

#include "bench.h"

#define FILES_PER_SYNC 1000
#define CACHE_LIMIT 16384

static uint64_t le64(const uint8_t *p)
{
	uint64_t v = 0;

	for (int i = 7; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

/* Used blocks per the format40 super block (block 17 of a 4 KiB volume). */
static int used_blocks(const char *img, uint64_t *used)
{
	uint8_t sb[16];
	int fd = open(img, O_RDONLY);
	ssize_t r = fd < 0 ? -1 : pread(fd, sb, sizeof(sb), 65536 + 4096);

	if (fd >= 0)
		close(fd);
	if (r != (ssize_t)sizeof(sb)) {
		fprintf(stderr, "scale_peer: %s: cannot read the super block\n", img);
		return 1;
	}
	*used = le64(sb) - le64(sb + 8);
	return 0;
}

static aal_exception_option_t on_exception(aal_exception_t *ex)
{
	fprintf(stderr, "scale_peer: libreiser4: %s\n", ex->message);
	return EXCEPTION_OPT_UNHANDLED;
}

static int cache_full(reiser4_tree_t *tree)
{
	return tree->nodes->real + tree->blocks->real > CACHE_LIMIT;
}

typedef struct {
	aal_device_t *dev;
	reiser4_fs_t *fs;
	reiser4_object_t *root;
} image_t;

static int image_open(image_t *im, const char *img, int rw)
{
	memset(im, 0, sizeof(*im));
	if (!(im->dev = aal_device_open(&file_ops, (void *)img, 512, rw ? O_RDWR : O_RDONLY)))
		return fprintf(stderr, "scale_peer: %s: cannot open\n", img), 1;
	if (!(im->fs = reiser4_fs_open(im->dev, 1))) {
		aal_device_close(im->dev);
		return fprintf(stderr, "scale_peer: %s: no reiser4 found\n", img), 1;
	}
	im->fs->tree->mpc_func = cache_full;
	if (!(im->root = reiser4_object_obtain(im->fs->tree, NULL, &im->fs->tree->key))) {
		reiser4_fs_close(im->fs);
		aal_device_close(im->dev);
		return fprintf(stderr, "scale_peer: %s: cannot open /\n", img), 1;
	}
	return 0;
}

static int image_sync(image_t *im)
{
	return reiser4_fs_sync(im->fs) || aal_device_sync(im->dev);
}

static void image_close(image_t *im)
{
	reiser4_object_close(im->root);
	reiser4_fs_close(im->fs);
	aal_device_close(im->dev);
}

static reiser4_object_t *child(image_t *im, reiser4_object_t *dir, const char *name)
{
	static entry_hint_t entry;

	if (reiser4_object_lookup(dir, name, &entry) != PRESENT)
		return NULL;
	return reiser4_object_obtain(im->fs->tree, dir, &entry.object);
}

static int small_write(const char *img, uint64_t n)
{
	uint8_t buf[FILE_BYTES];
	reiser4_object_t *d, *o;
	char name[32];
	image_t im;

	if (image_open(&im, img, 1))
		return 1;
	if (!(d = reiser4_dir_create(im.root, "d"))) {
		image_close(&im);
		return fprintf(stderr, "scale_peer: cannot create /d\n"), 1;
	}
	for (uint64_t i = 0; i < n; i++) {
		snprintf(name, sizeof(name), "f%07" PRIu64, i);
		small_content(i, buf);
		if ((o = child(&im, d, name))) {
			reiser4_object_close(o);
			fprintf(stderr, "scale_peer: /d/%s exists\n", name);
			goto bad;
		}
		if (!(o = reiser4_reg_create(d, name))) {
			fprintf(stderr, "scale_peer: cannot create /d/%s\n", name);
			goto bad;
		}
		if (reiser4_object_write(o, buf, sizeof(buf)) != (int64_t)sizeof(buf)) {
			reiser4_object_close(o);
			fprintf(stderr, "scale_peer: cannot write /d/%s\n", name);
			goto bad;
		}
		reiser4_object_close(o);
		if ((i + 1) % FILES_PER_SYNC == 0 && image_sync(&im)) {
			fprintf(stderr, "scale_peer: sync failed after /d/%s\n", name);
			goto bad;
		}
	}
	reiser4_object_close(d);
	if (image_sync(&im)) {
		image_close(&im);
		return fprintf(stderr, "scale_peer: final sync failed\n"), 1;
	}
	image_close(&im);
	return 0;
bad:
	reiser4_object_close(d);
	image_close(&im);
	return 1;
}

static int small_read(const char *img, uint64_t n)
{
	uint8_t want[FILE_BYTES], got[FILE_BYTES + 1];
	reiser4_object_t *d, *o;
	char name[32];
	image_t im;
	int rc = 0;

	if (image_open(&im, img, 0))
		return 1;
	if (!(d = child(&im, im.root, "d"))) {
		image_close(&im);
		return fprintf(stderr, "scale_peer: no /d\n"), 1;
	}
	for (uint64_t i = 0; i < n && !rc; i++) {
		int64_t r;

		snprintf(name, sizeof(name), "f%07" PRIu64, i);
		small_content(i, want);
		if (!(o = child(&im, d, name))) {
			fprintf(stderr, "scale_peer: cannot open /d/%s\n", name);
			rc = 1;
			break;
		}
		r = reiser4_object_read(o, got, sizeof(got));
		if (r != FILE_BYTES || memcmp(want, got, FILE_BYTES)) {
			fprintf(stderr, "scale_peer: /d/%s: wrong content (%" PRId64 " bytes)\n",
				name, r);
			rc = 1;
		}
		reiser4_object_close(o);
	}
	reiser4_object_close(d);
	image_close(&im);
	return rc;
}

/* ---- listing (issue 27 item 3) ---- */

#define LS_REPS 5

static int ls_once(const char *img, int stat, uint64_t n, double *secs)
{
	static entry_hint_t e;
	sdhint_lw_t lw;
	sdhint_unix_t ux;
	sdhint_lt_t lt;
	stat_hint_t hint;
	reiser4_object_t *d, *o;
	uint64_t got = 0, size = 0, len = 0;
	errno_t r;
	image_t im;
	double t0;

	if (image_open(&im, img, 0))
		return 1;
	t0 = now();
	if (!(d = child(&im, im.root, "d"))) {
		image_close(&im);
		return fprintf(stderr, "scale_peer: no /d\n"), 1;
	}
	while ((r = reiser4_object_readdir(d, &e)) > 0) {
		got++;
		len += strlen(e.name);	/* its name's bytes, as scale.c counts them */
		if (!stat)
			continue;
		if (!(o = reiser4_object_obtain(im.fs->tree, d, &e.object))) {
			fprintf(stderr, "scale_peer: cannot open /d/%s\n", e.name);
			r = -1;
			break;
		}
		memset(&hint, 0, sizeof(hint));
		hint.ext[SDEXT_LW_ID] = &lw;
		hint.ext[SDEXT_UNIX_ID] = &ux;
		hint.ext[SDEXT_LT_ID] = &lt;
		r = reiser4_object_stat(o, &hint);
		reiser4_object_close(o);
		if (r) {
			fprintf(stderr, "scale_peer: cannot stat /d/%s\n", e.name);
			r = -1;
			break;
		}
		size += lw.size;
	}
	reiser4_object_close(d);
	*secs = now() - t0;
	image_close(&im);
	if (r < 0 || got != n + 2 || (stat && size < n * FILE_BYTES)) {
		fprintf(stderr, "scale_peer: /d listed %" PRIu64 " entries, sizes %" PRIu64
			" (%d)\n", got, size, (int)r);
		return 1;
	}
	(void)len;
	return 0;
}

static int dbl_cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static int ls_phases(const char *img, uint64_t n)
{
	if (libreiser4_init())
		return fprintf(stderr, "scale_peer: cannot initialise libreiser4\n"), 1;
	aal_exception_set_handler(on_exception);
	for (int way = 0; way < 2; way++) {
		double secs[LS_REPS];

		for (int r = 0; r < LS_REPS; r++)
			if (ls_once(img, way, n, &secs[r]))
				return 1;
		qsort(secs, LS_REPS, sizeof(secs[0]), dbl_cmp);
		printf("phase=peer-%s n=%" PRIu64 " secs=%.4f min=%.4f reps=%d entries=%" PRIu64
		       "\n", way ? "ls-stat" : "ls-names", n, secs[LS_REPS / 2], secs[0], LS_REPS,
		       n + 2);
		fflush(stdout);
	}
	libreiser4_fini();
	return 0;
}

typedef int (*phase_fn)(const char *img, uint64_t n);

static int run_phase(const char *name, phase_fn fn, const char *img, uint64_t n)
{
	struct rusage ru;
	uint64_t used;
	double t0, secs;
	int status;
	pid_t pid;

	fflush(stdout);
	t0 = now();
	if ((pid = fork()) < 0)
		return perror("scale_peer: fork"), 1;
	if (pid == 0) {
		int rc;

		if (libreiser4_init()) {
			fprintf(stderr, "scale_peer: cannot initialise libreiser4\n");
			_exit(1);
		}
		aal_exception_set_handler(on_exception);
		rc = fn(img, n);
		libreiser4_fini();
		_exit(rc);
	}
	if (wait4(pid, &status, 0, &ru) < 0)
		return perror("scale_peer: wait4"), 1;
	secs = now() - t0;
	if (!WIFEXITED(status) || WEXITSTATUS(status)) {
		printf("phase=%s n=%" PRIu64 " FAILED status=%d secs=%.2f maxrss_kib=%ld\n", name,
		       n, status, secs, ru.ru_maxrss);
		return 1;
	}
	if (used_blocks(img, &used))
		return 1;
	printf("phase=%s n=%" PRIu64 " secs=%.3f rate=%.1f unit=files/s maxrss_kib=%ld used_after=%" PRIu64
	       "\n",
	       name, n, secs, (double)n / secs, ru.ru_maxrss, used);
	return 0;
}

int main(int argc, char **argv)
{
	uint64_t n, before, after;
	char *end;

	if (argc != 4 || (strcmp(argv[1], "small") && strcmp(argv[1], "ls"))) {
		fprintf(stderr, "usage: scale_peer small IMG N | scale_peer ls IMG N\n");
		return 2;
	}
	n = strtoull(argv[3], &end, 10);
	if (*end || !n) {
		fprintf(stderr, "scale_peer: bad count '%s'\n", argv[3]);
		return 2;
	}
	if (!strcmp(argv[1], "ls"))
		return run_phase("peer-small-write", small_write, argv[2], n) ||
		       ls_phases(argv[2], n);
	if (used_blocks(argv[2], &before) || run_phase("peer-small-write", small_write, argv[2], n) ||
	    used_blocks(argv[2], &after) || run_phase("peer-small-read", small_read, argv[2], n))
		return 1;
	printf("space n=%" PRIu64 " used_before=%" PRIu64 " used_after=%" PRIu64
	       " bytes_per_file=%.1f\n",
	       n, before, after, (double)(after - before) * 4096 / (double)n);
	return 0;
}
