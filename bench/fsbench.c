/*
 * fsbench.c - the workloads of the FUSE benchmark (issue 6 item 7), as
 * plain POSIX calls on a mounted file system, timed with clock_gettime.
 * It knows nothing of r4: bench/fuse.sh runs it on r4fuse, fuse2fs and
 * libfuse's passthrough example alike, mounting and unmounting between
 * the steps.
 *
 *   fsbench create DIR N     mkdir DIR, then N times open(O_CREAT|O_EXCL),
 *                            write 100 bytes, close (DIR/fNNNNNNN)
 *   fsbench check DIR N      stat every file (a regular file of 100 bytes),
 *                            then open, read and close every file, comparing
 *                            its bytes: two phases, two lines
 *   fsbench rm DIR N         rm -rf DIR: read the names (as rm's fts does for
 *                            a directory this size), unlink each, rmdir DIR;
 *                            N files must have gone
 *   fsbench write FILE MIB   MIB sequential 1 MiB writes, fsync, close
 *   fsbench read FILE MIB    the same in 1 MiB reads, comparing every byte
 *                            and that the file ends there
 *
 * Every command first prints the space the file system says is used, and
 * again after its work: (f_blocks - f_bfree) * f_frsize of statvfs on the
 * parent directory of DIR or FILE.  Output, key=value lines for fuse.sh:
 *
 *   phase=create n=N secs=S rate=R unit=files/s used_before=B used_after=A
 *
 * The small files' content is bench.h's (different for every file); the
 * big file's is a cheap pattern: a fixed pseudo-random MiB with every
 * 4 KiB block stamped with its own file offset, so a block read from the
 * wrong place or a torn block differs.  Exit status 0 when every call
 * worked and every byte compared equal, 1 otherwise (the failing call on
 * stderr), 2 for usage.  Time is reported, never judged.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "bench.h"

#define MIB (1024u * 1024u)
#define STAMP 4096u		/* every block of this size starts with its offset */

static int fail(const char *what, const char *subject)
{
	int e = errno;

	fprintf(stderr, "fsbench: %s '%s': %s\n", what, subject, strerror(e));
	return 1;
}

/* Bytes in use on the file system holding path's parent directory. */
static int used_bytes(const char *path, uint64_t *used)
{
	char dir[4096];
	struct statvfs sv;
	char *slash;

	snprintf(dir, sizeof(dir), "%s", path);
	slash = strrchr(dir, '/');
	if (slash == dir)
		slash[1] = 0;
	else if (slash)
		*slash = 0;
	else
		snprintf(dir, sizeof(dir), ".");
	if (statvfs(dir, &sv))
		return fail("cannot statvfs", dir);
	*used = (uint64_t)(sv.f_blocks - sv.f_bfree) * sv.f_frsize;
	return 0;
}

static void report(const char *phase, uint64_t n, double secs, const char *unit,
		   uint64_t before, uint64_t after)
{
	printf("phase=%s n=%" PRIu64 " secs=%.3f rate=%.1f unit=%s used_before=%" PRIu64
	       " used_after=%" PRIu64 "\n",
	       phase, n, secs, (double)n / secs, unit, before, after);
}

static void file_path(char *p, size_t size, const char *dir, uint64_t i)
{
	snprintf(p, size, "%s/f%07" PRIu64, dir, i);
}

/* ---- small files ---- */

static int small_create(const char *dir, uint64_t n)
{
	uint8_t buf[FILE_BYTES];
	char path[4096];
	uint64_t before, after;
	double t0, secs;

	if (mkdir(dir, 0755))
		return fail("cannot mkdir", dir);
	if (used_bytes(dir, &before))
		return 1;
	t0 = now();
	for (uint64_t i = 0; i < n; i++) {
		int fd;

		file_path(path, sizeof(path), dir, i);
		small_content(i, buf);
		if ((fd = open(path, O_CREAT | O_EXCL | O_WRONLY, 0644)) < 0)
			return fail("cannot create", path);
		if (write(fd, buf, sizeof(buf)) != (ssize_t)sizeof(buf)) {
			fail("cannot write", path);
			close(fd);
			return 1;
		}
		if (close(fd))
			return fail("cannot close", path);
	}
	secs = now() - t0;
	if (used_bytes(dir, &after))
		return 1;
	report("create", n, secs, "files/s", before, after);
	return 0;
}

static int small_check(const char *dir, uint64_t n)
{
	uint8_t want[FILE_BYTES], got[4096];
	char path[4096];
	uint64_t used;
	struct stat st;
	double t0, secs;

	if (used_bytes(dir, &used))
		return 1;
	t0 = now();
	for (uint64_t i = 0; i < n; i++) {
		file_path(path, sizeof(path), dir, i);
		if (stat(path, &st))
			return fail("cannot stat", path);
		if (!S_ISREG(st.st_mode) || st.st_size != FILE_BYTES) {
			fprintf(stderr, "fsbench: '%s': mode %o, %jd bytes\n", path,
				(unsigned)st.st_mode, (intmax_t)st.st_size);
			return 1;
		}
	}
	secs = now() - t0;
	report("stat", n, secs, "files/s", used, used);
	t0 = now();
	for (uint64_t i = 0; i < n; i++) {
		ssize_t len;
		int fd;

		file_path(path, sizeof(path), dir, i);
		small_content(i, want);
		if ((fd = open(path, O_RDONLY)) < 0)
			return fail("cannot open", path);
		if ((len = read(fd, got, sizeof(got))) < 0) {
			fail("cannot read", path);
			close(fd);
			return 1;
		}
		close(fd);
		if (len != FILE_BYTES || memcmp(want, got, FILE_BYTES)) {
			fprintf(stderr, "fsbench: '%s': wrong content (%zd bytes)\n", path, len);
			return 1;
		}
	}
	secs = now() - t0;
	report("read", n, secs, "files/s", used, used);
	return 0;
}

static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/*
 * rm -rf dir, for a directory of files: all names first, then one unlinkat
 * each (in name order, which is also the order they were made), then the
 * directory.  The count of files removed goes to *gone.
 */
static int remove_tree(const char *dir, uint64_t *gone)
{
	char **names = NULL;
	size_t nn = 0, cap = 0;
	struct dirent *de;
	int rc = 1, dfd;
	DIR *d;

	if ((dfd = open(dir, O_RDONLY | O_DIRECTORY)) < 0 || !(d = fdopendir(dfd))) {
		if (dfd >= 0)
			close(dfd);
		return fail("cannot open directory", dir);
	}
	while ((errno = 0, de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (nn == cap) {
			char **more = realloc(names, (cap = cap ? cap * 2 : 1024) * sizeof(*names));

			if (!more)
				goto out;
			names = more;
		}
		if (!(names[nn] = strdup(de->d_name)))
			goto out;
		nn++;
	}
	if (errno) {
		fail("cannot read directory", dir);
		goto out;
	}
	qsort(names, nn, sizeof(*names), cmp_names);
	for (size_t i = 0; i < nn; i++) {
		if (unlinkat(dfd, names[i], 0)) {
			fail("cannot unlink", names[i]);
			goto out;
		}
	}
	*gone = nn;
	rc = 0;
out:
	closedir(d);
	for (size_t i = 0; i < nn; i++)
		free(names[i]);
	free(names);
	if (!rc && rmdir(dir))
		rc = fail("cannot rmdir", dir);
	return rc;
}

static int small_rm(const char *dir, uint64_t n)
{
	uint64_t before, after, gone = 0;
	double t0, secs;

	if (used_bytes(dir, &before))
		return 1;
	t0 = now();
	if (remove_tree(dir, &gone))
		return 1;
	secs = now() - t0;
	if (gone != n) {
		fprintf(stderr, "fsbench: '%s' held %" PRIu64 " files, not %" PRIu64 "\n", dir,
			gone, n);
		return 1;
	}
	if (used_bytes(dir, &after))
		return 1;
	report("rm", n, secs, "files/s", before, after);
	return 0;
}

/* ---- one big file ---- */

/* MiB c of the big file: base, with every STAMP block's first 8 bytes set
 * to its file offset. */
static void big_content(const uint8_t *base, uint64_t c, uint8_t *p)
{
	memcpy(p, base, MIB);
	for (uint64_t off = 0; off < MIB; off += STAMP) {
		uint64_t at = c * MIB + off;

		memcpy(p + off, &at, sizeof(at));
	}
}

static uint8_t *big_base(void)
{
	uint8_t *base = malloc(MIB);

	for (size_t j = 0; base && j < MIB; j += 8) {
		uint64_t r = mix64(j);

		memcpy(base + j, &r, 8);
	}
	return base;
}

static int big_write(const char *file, uint64_t mib)
{
	uint8_t *base = big_base(), *buf = malloc(MIB);
	uint64_t before, after;
	double t0, secs;
	int rc = 1, fd = -1;

	if (!base || !buf || used_bytes(file, &before))
		goto out;
	t0 = now();
	if ((fd = open(file, O_CREAT | O_TRUNC | O_WRONLY, 0644)) < 0) {
		fail("cannot create", file);
		goto out;
	}
	for (uint64_t c = 0; c < mib; c++) {
		big_content(base, c, buf);
		for (size_t done = 0; done < MIB;) {
			ssize_t w = write(fd, buf + done, MIB - done);

			if (w <= 0) {
				fprintf(stderr, "fsbench: '%s': write at MiB %" PRIu64 ": %s\n",
					file, c, w ? strerror(errno) : "wrote nothing");
				goto out;
			}
			done += (size_t)w;
		}
	}
	if (fsync(fd)) {
		fail("cannot fsync", file);
		goto out;
	}
	rc = close(fd);
	fd = -1;
	if (rc) {
		fail("cannot close", file);
		goto out;
	}
	secs = now() - t0;
	if ((rc = used_bytes(file, &after)))
		goto out;
	report("seq-write", mib, secs, "MiB/s", before, after);
out:
	if (fd >= 0)
		close(fd);
	free(base);
	free(buf);
	return rc;
}

/* Read MIB bytes (or up to the end) into p; the count read in *got. */
static int read_full(int fd, uint8_t *p, size_t len, size_t *got)
{
	size_t done = 0;

	while (done < len) {
		ssize_t r = read(fd, p + done, len - done);

		if (r < 0)
			return -1;
		if (!r)
			break;
		done += (size_t)r;
	}
	*got = done;
	return 0;
}

static int big_read(const char *file, uint64_t mib)
{
	uint8_t *base = big_base(), *want = malloc(MIB), *got = malloc(MIB);
	uint64_t used;
	double t0, secs;
	int rc = 1, fd = -1;
	size_t len;

	if (!base || !want || !got || used_bytes(file, &used))
		goto out;
	t0 = now();
	if ((fd = open(file, O_RDONLY)) < 0) {
		fail("cannot open", file);
		goto out;
	}
	for (uint64_t c = 0; c < mib; c++) {
		if (read_full(fd, got, MIB, &len)) {
			fail("cannot read", file);
			goto out;
		}
		big_content(base, c, want);
		if (len != MIB || memcmp(want, got, MIB)) {
			fprintf(stderr, "fsbench: '%s': wrong content in MiB %" PRIu64
				" (%zu bytes read)\n", file, c, len);
			goto out;
		}
	}
	if (read_full(fd, got, 1, &len) || len) {
		fprintf(stderr, "fsbench: '%s': longer than %" PRIu64 " MiB\n", file, mib);
		goto out;
	}
	secs = now() - t0;
	report("seq-read", mib, secs, "MiB/s", used, used);
	rc = 0;
out:
	if (fd >= 0)
		close(fd);
	free(base);
	free(want);
	free(got);
	return rc;
}

/* ---- driver ---- */

static const struct {
	const char *name;
	int (*fn)(const char *path, uint64_t n);
} cmds[] = {
	{"create", small_create}, {"check", small_check}, {"rm", small_rm},
	{"write", big_write},	  {"read", big_read},
};

int main(int argc, char **argv)
{
	uint64_t n;
	char *end;

	if (argc == 4) {
		n = strtoull(argv[3], &end, 10);
		if (*end || !n) {
			fprintf(stderr, "fsbench: bad count '%s'\n", argv[3]);
			return 2;
		}
		for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
			if (!strcmp(argv[1], cmds[i].name))
				return cmds[i].fn(argv[2], n) ? 1 : 0;
	}
	fprintf(stderr, "usage: fsbench create|check|rm DIR N\n"
			"       fsbench write|read FILE MIB\n");
	return 2;
}
