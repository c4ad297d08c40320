/*
 * group_preload.c - counts r4fuse's syncs and commits for bench/group.sh
 * (LD_PRELOAD into r4fuse).  The engine syncs with fdatasync and writes
 * the journal header, once per commit, with one 4 KiB pwrite of block
 * R4_JHEADER_BLOCK (format.h: 65536 / 4096 + 3 = 19 for 4 KiB blocks).
 * The counters (syncs, header writes) live in the file R4_GROUP_COUNTS
 * names (16 bytes, made by the caller), mapped shared, so the benchmark
 * reads them before and after its timed span.  Without it nothing counts.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#define HEADER_OFF (19 * 4096)

static volatile uint64_t *cnt;
static int (*real_fdatasync)(int);
static ssize_t (*real_pwrite)(int, const void *, size_t, off_t);

__attribute__((constructor)) static void init(void)
{
	const char *path = getenv("R4_GROUP_COUNTS");
	int fd;
	void *m;

	real_fdatasync = (int (*)(int))dlsym(RTLD_NEXT, "fdatasync");
	real_pwrite = (ssize_t (*)(int, const void *, size_t, off_t))dlsym(RTLD_NEXT, "pwrite");
	if (!path || (fd = open(path, O_RDWR)) < 0)
		return;
	m = mmap(NULL, 2 * sizeof(uint64_t), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (m != MAP_FAILED)
		cnt = m;
}

int fdatasync(int fd)
{
	if (cnt)
		__atomic_add_fetch(&cnt[0], 1, __ATOMIC_RELAXED);
	return real_fdatasync(fd);
}

ssize_t pwrite(int fd, const void *buf, size_t len, off_t off)
{
	if (cnt && off == HEADER_OFF && len == 4096)
		__atomic_add_fetch(&cnt[1], 1, __ATOMIC_RELAXED);
	return real_pwrite(fd, buf, len, off);
}
