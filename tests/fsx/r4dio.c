/*
 * r4dio - O_DIRECT writes beside buffered readers, as fstests generic/451
 * does them, for tests/bats/r4fuse_fstests.bats.
 *
 *   r4dio FILE SECONDS
 *
 * Two threads read FILE in a loop (open, read 640 KiB, close) while the
 * main thread writes it with asynchronous O_DIRECT writes of 640 KiB
 * (io_submit), each with a byte of its own, and after each write and an
 * fsync opens FILE again without O_DIRECT and reads it: what it reads must
 * be what was written, not pages the kernel cached from a read answered
 * before the write.  Runs for SECONDS, then prints "CYCLES cycles, STALE
 * stale" and exits 1 when STALE is not 0 (2: a usage or I/O error).
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/aio_abi.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define SIZE (640 << 10)

static const char *path;
static atomic_bool stop;

static void *reader(void *arg)
{
	char *buf = malloc(SIZE);

	(void)arg;
	while (buf && !atomic_load(&stop)) {
		int fd = open(path, O_RDONLY);

		if (fd >= 0) {
			if (pread(fd, buf, SIZE, 0) < 0)
				perror("r4dio: reader");
			close(fd);
		}
	}
	free(buf);
	return NULL;
}

static int fail(const char *what)
{
	fprintf(stderr, "r4dio: %s: %s\n", what, strerror(errno));
	return 2;
}

int main(int argc, char **argv)
{
	aio_context_t ctx = 0;
	struct iocb cb, *cbs[1] = {&cb};
	struct io_event ev;
	pthread_t th[2];
	unsigned long cycles = 0, stale = 0;
	char *wbuf, *rbuf = malloc(SIZE);
	time_t end;
	int fd;

	if (argc != 3) {
		fprintf(stderr, "usage: r4dio FILE SECONDS\n");
		return 2;
	}
	path = argv[1];
	end = time(NULL) + atol(argv[2]);
	if (!rbuf || posix_memalign((void **)&wbuf, 4096, SIZE))
		return fail("memory");
	if ((fd = open(path, O_RDWR | O_CREAT | O_DIRECT, 0600)) < 0)
		return fail(path);
	if (syscall(SYS_io_setup, 1, &ctx))
		return fail("io_setup");
	for (int i = 0; i < 2; i++)
		pthread_create(&th[i], NULL, reader, NULL);
	while (time(NULL) < end) {
		int rfd;

		memset(wbuf, 'A' + (int)(cycles % 26), SIZE);
		memset(&cb, 0, sizeof(cb));
		cb.aio_fildes = (unsigned)fd;
		cb.aio_lio_opcode = IOCB_CMD_PWRITE;
		cb.aio_buf = (unsigned long)wbuf;
		cb.aio_nbytes = SIZE;
		if (syscall(SYS_io_submit, ctx, 1, cbs) != 1 ||
		    syscall(SYS_io_getevents, ctx, 1, 1, &ev, NULL) != 1)
			return fail("io_submit");
		if (ev.res != SIZE) {
			errno = ev.res < 0 ? (int)-ev.res : EIO;
			return fail("write");
		}
		if (fsync(fd) || (rfd = open(path, O_RDONLY)) < 0)
			return fail("fsync, open");
		if (pread(rfd, rbuf, SIZE, 0) != SIZE)
			return fail("read");
		close(rfd);
		stale += memcmp(wbuf, rbuf, SIZE) != 0;
		cycles++;
	}
	atomic_store(&stop, true);
	for (int i = 0; i < 2; i++)
		pthread_join(th[i], NULL);
	syscall(SYS_io_destroy, ctx);
	close(fd);
	printf("%lu cycles, %lu stale\n", cycles, stale);
	free(wbuf);
	free(rbuf);
	return stale ? 1 : 0;
}
