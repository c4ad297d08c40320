/*
 * iocount.h - how the write-amplification and commit benchmarks (wa.c,
 * commit.c) count what the engine writes and syncs.
 *
 *  - io_wchar(): the process's `wchar` from /proc/self/io, the bytes passed
 *    to write(2)-like calls (pwrite included), whether or not they reached
 *    the disk yet.  A delta around a workload is what the engine wrote to
 *    the image, as long as nothing else writes in that span: no printing
 *    (stdout, stderr) until the span ends, engine log messages kept in
 *    memory (iolog_*) and printed afterwards.
 *  - cnt_*: the programs link with -Wl,--wrap=pwrite -Wl,--wrap=fdatasync
 *    (bench/run.sh), so every pwrite and fdatasync in libr4engine.a (the
 *    engine's only writes and syncs are in engine/io_file.c) goes through
 *    the counters below first.  Shared libraries (libsqlite3) are not
 *    wrapped; commit.c counts SQLite's syncs through a VFS shim instead.
 *
 * Include it in one translation unit only: it defines the wrappers.
 */
#ifndef R4_BENCH_IOCOUNT_H
#define R4_BENCH_IOCOUNT_H

#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

struct io_counts {
	uint64_t pwrites, pwrite_bytes, syncs;
};

static struct io_counts cnt;

ssize_t __real_pwrite(int fd, const void *buf, size_t len, off_t off);
ssize_t __wrap_pwrite(int fd, const void *buf, size_t len, off_t off);
int __real_fdatasync(int fd);
int __wrap_fdatasync(int fd);

ssize_t __wrap_pwrite(int fd, const void *buf, size_t len, off_t off)
{
	ssize_t n = __real_pwrite(fd, buf, len, off);

	cnt.pwrites++;
	if (n > 0)
		cnt.pwrite_bytes += (uint64_t)n;
	return n;
}

int __wrap_fdatasync(int fd)
{
	cnt.syncs++;
	return __real_fdatasync(fd);
}

/* wchar of this process, or UINT64_MAX when /proc/self/io can't be read. */
static uint64_t io_wchar(void)
{
	char line[128];
	uint64_t v = UINT64_MAX;
	FILE *f = fopen("/proc/self/io", "r");

	if (!f)
		return v;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "wchar: %" SCNu64, &v) == 1)
			break;
	fclose(f);
	return v;
}

/* Engine log messages, held back while a span is measured. */
static char iolog_buf[8192];
static size_t iolog_len;
static unsigned iolog_lost;

static void iolog_keep(void *ctx, int level, const char *msg)
{
	size_t n = strlen(msg);

	(void)ctx;
	(void)level;
	if (iolog_len + n + 2 > sizeof(iolog_buf)) {
		iolog_lost++;
		return;
	}
	memcpy(iolog_buf + iolog_len, msg, n);
	iolog_len += n;
	iolog_buf[iolog_len++] = '\n';
	iolog_buf[iolog_len] = '\0';
}

/* Print what the engine logged (to stderr), after the measured span. */
static void iolog_flush(const char *prog)
{
	if (iolog_len)
		fprintf(stderr, "%s: engine log:\n%s", prog, iolog_buf);
	if (iolog_lost)
		fprintf(stderr, "%s: %u more engine log messages dropped\n", prog, iolog_lost);
	iolog_len = 0;
	iolog_lost = 0;
}

#endif
