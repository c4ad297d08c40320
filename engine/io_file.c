/*
 * io_file.c - the file / block-device backend of the I/O vtable (io.h).
 *
 * pread, pwrite and pwritev are retried on EINTR and looped on short
 * transfers, so a caller sees all bytes or an error; a read that hits the
 * end of the file is -EIO.  sync is fdatasync (the image's size only changes through
 * truncate, which also fsyncs nothing: the caller syncs after it).  The size
 * of a block device comes from BLKGETSIZE64, since st_size is 0 there.
 * This is the only engine file allowed pread/pwrite/fdatasync (STYLE.md
 * section 8); it knows nothing about blocks or Reiser4.
 *
 * One writer per image (docs/engine.md, "The lock"): a read-write open
 * takes an open-file-description lock (F_OFD_SETLK, a write lock on the
 * whole file) on its own descriptor before anything reads or writes, and
 * keeps it until close.  An OFD lock belongs to the open file description,
 * not to the process: a daemon that forks after opening keeps it when the
 * parent exits, which a POSIX record lock would not survive.  A block
 * device opened read-write also gets O_EXCL, the kernel's own rule (EBUSY
 * while it is mounted or another program claims it), unless the caller
 * mounts it itself (R4_IO_SHARED: the kernel's claim then keeps everyone
 * else out).  A conflict is -EBUSY, and nothing was read or written.
 *
 * Writeback starts early: each large write (a commit's batch, an early
 * flush's) is handed to a thread of the handle's own, started at the
 * first one and woken when four wait, which asks the kernel to start
 * writing them out (sync_file_range SYNC_FILE_RANGE_WRITE) while the
 * caller goes on, so the sync that follows waits for little: a commit of
 * 30 MB waited 20 ms in fdatasync, 0.4 ms so.  The sync is still
 * fdatasync, which alone makes anything durable; the thread only starts
 * what it would.  The thread holds every signal blocked; a handle carried
 * into a child by fork (r4fuse's daemon) starts its own there.
 */
#include "io.h"

#include <fcntl.h>
#include <limits.h>
#include <linux/fs.h>
#include <pthread.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

enum {
	KICK_MIN = 64 << 10,	/* bytes: a write smaller than this is the sync's */
	KICK_QUEUE = 64,	/* writes waiting for the thread; more: the sync's */
	KICK_WAKE = 4,		/* writes waiting when the thread is woken (a wake
				   costs the writer more than the queue's wait) */
};

/* The writeback starter: ranges written, not yet handed to the kernel. */
struct kicker {
	pthread_t thread;
	pid_t pid;		/* the process that started it; 0: none */
	pthread_mutex_t mu;
	pthread_cond_t cv;
	bool stop;
	unsigned head, tail;	/* queue[tail % KICK_QUEUE .. head % KICK_QUEUE) */
	struct {
		uint64_t off, len;
	} queue[KICK_QUEUE];
};

struct file_io {
	struct r4_io io;	/* first: the vtable head */
	int fd;
	bool rw;
	bool blkdev;
	struct kicker k;
};

static struct file_io *file_of(struct r4_io *io)
{
	return (struct file_io *)io;
}

static void *kick_main(void *arg)
{
	struct file_io *f = arg;
	struct kicker *k = &f->k;

	pthread_mutex_lock(&k->mu);
	for (;;) {
		while (k->head - k->tail < KICK_WAKE && !k->stop)
			pthread_cond_wait(&k->cv, &k->mu);
		if (k->head == k->tail)
			break;	/* stopped, and nothing left */
		while (k->tail != k->head) {	/* (all of them, once woken) */
			uint64_t off = k->queue[k->tail % KICK_QUEUE].off;
			uint64_t len = k->queue[k->tail % KICK_QUEUE].len;

			k->tail++;
			pthread_mutex_unlock(&k->mu);
			/* (a failure is the sync's to find: it writes what this did not) */
			(void)sync_file_range(f->fd, (off_t)off, (off_t)len,
					      SYNC_FILE_RANGE_WRITE);
			pthread_mutex_lock(&k->mu);
		}
	}
	pthread_mutex_unlock(&k->mu);
	return NULL;
}

/* This process's thread, started at the first call; false: there is none
 * (it could not start: the sync does all). */
static bool kick_thread(struct file_io *f)
{
	struct kicker *k = &f->k;
	sigset_t all, old;
	int rc;

	if (k->pid == getpid())
		return true;
	/* none yet, or the parent's (fork keeps the memory, not the thread) */
	*k = (struct kicker){0};
	if (pthread_mutex_init(&k->mu, NULL))
		return false;
	if (pthread_cond_init(&k->cv, NULL)) {
		pthread_mutex_destroy(&k->mu);
		return false;
	}
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	rc = pthread_create(&k->thread, NULL, kick_main, f);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc) {
		pthread_cond_destroy(&k->cv);
		pthread_mutex_destroy(&k->mu);
		return false;
	}
	k->pid = getpid();
	return true;
}

/* Have writeback of [off, off + len) started (the file's header). */
static void kick(struct file_io *f, uint64_t off, uint64_t len)
{
	struct kicker *k = &f->k;

	if (len < KICK_MIN || !kick_thread(f))
		return;
	pthread_mutex_lock(&k->mu);
	if (k->head - k->tail < KICK_QUEUE) {
		k->queue[k->head % KICK_QUEUE].off = off;
		k->queue[k->head % KICK_QUEUE].len = len;
		k->head++;
		if (k->head - k->tail >= KICK_WAKE)
			pthread_cond_signal(&k->cv);
	}
	pthread_mutex_unlock(&k->mu);
}

static void kick_stop(struct file_io *f)
{
	struct kicker *k = &f->k;

	if (k->pid != getpid())
		return;
	pthread_mutex_lock(&k->mu);
	k->stop = true;
	pthread_cond_signal(&k->cv);
	pthread_mutex_unlock(&k->mu);
	pthread_join(k->thread, NULL);
	pthread_cond_destroy(&k->cv);
	pthread_mutex_destroy(&k->mu);
	k->pid = 0;
}

static int f_read(struct r4_io *io, uint64_t off, void *buf, size_t len)
{
	struct file_io *f = file_of(io);
	uint8_t *p = buf;

	if (off > (uint64_t)INT64_MAX || len > (uint64_t)INT64_MAX - off)
		return -EINVAL;
	while (len) {
		ssize_t n = pread(f->fd, p, len, (off_t)off);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			return -EIO;	/* short read: the end of the file */
		p += n;
		off += (uint64_t)n;
		len -= (size_t)n;
	}
	return 0;
}

static int f_write(struct r4_io *io, uint64_t off, const void *buf, size_t len)
{
	struct file_io *f = file_of(io);
	const uint8_t *p = buf;
	uint64_t at = off, all = len;

	if (!f->rw)
		return -EBADF;
	if (off > (uint64_t)INT64_MAX || len > (uint64_t)INT64_MAX - off)
		return -EINVAL;
	while (len) {
		ssize_t n = pwrite(f->fd, p, len, (off_t)off);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			return -EIO;	/* no progress: the device is full or gone */
		p += n;
		off += (uint64_t)n;
		len -= (size_t)n;
	}
	kick(f, at, all);
	return 0;
}

static int f_writev(struct r4_io *io, uint64_t off, const struct iovec *v, int n)
{
	struct file_io *f = file_of(io);
	struct iovec part[IOV_MAX];
	uint64_t at = off, all = 0;
	int k = 0;

	if (!f->rw)
		return -EBADF;
	if (n < 0 || n > IOV_MAX)
		return -EINVAL;
	for (int i = 0; i < n; i++)
		all += v[i].iov_len;
	if (off > (uint64_t)INT64_MAX || all > (uint64_t)INT64_MAX - off)
		return -EINVAL;
	memcpy(part, v, (size_t)n * sizeof(*v));
	while (k < n) {
		ssize_t got = pwritev(f->fd, part + k, n - k, (off_t)off);

		if (got < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (got == 0)
			return -EIO;	/* no progress: the device is full or gone */
		off += (uint64_t)got;
		/* (a short write: on from where it stopped) */
		for (size_t left = (size_t)got; left;) {
			size_t step = R4_MIN(left, part[k].iov_len);

			part[k].iov_base = (uint8_t *)part[k].iov_base + step;
			part[k].iov_len -= step;
			left -= step;
			if (!part[k].iov_len)
				k++;
		}
		while (k < n && !part[k].iov_len)
			k++;
	}
	kick(f, at, all);
	return 0;
}

static int f_sync(struct r4_io *io)
{
	struct file_io *f = file_of(io);

	if (!f->rw)
		return 0;
	while (fdatasync(f->fd) < 0)
		if (errno != EINTR)
			return -errno;
	return 0;
}

static int f_size(struct r4_io *io, uint64_t *bytes)
{
	struct file_io *f = file_of(io);
	struct stat st;
	uint64_t n;

	if (f->blkdev) {
		if (ioctl(f->fd, BLKGETSIZE64, &n) < 0)
			return -errno;
		*bytes = n;
		return 0;
	}
	if (fstat(f->fd, &st) < 0)
		return -errno;
	*bytes = (uint64_t)st.st_size;
	return 0;
}

static int f_truncate(struct r4_io *io, uint64_t bytes)
{
	struct file_io *f = file_of(io);

	if (!f->rw)
		return -EBADF;
	if (f->blkdev || bytes > (uint64_t)INT64_MAX)
		return -EINVAL;
	while (ftruncate(f->fd, (off_t)bytes) < 0)
		if (errno != EINTR)
			return -errno;
	return 0;
}

static void f_close(struct r4_io *io)
{
	struct file_io *f = file_of(io);

	kick_stop(f);
	close(f->fd);
	r4_free(f);
}

static const struct r4_io_ops r4_io_file_ops = {
	.read = f_read,
	.write = f_write,
	.writev = f_writev,
	.sync = f_sync,
	.size = f_size,
	.truncate = f_truncate,
	.close = f_close,
};

/* The open(2) flags for path: O_EXCL for a block device written (its
 * meaning there: no mount, no other exclusive opener), O_CREAT for a
 * regular file that may be made. */
static int open_flags(const char *path, unsigned flags)
{
	bool rw = flags & R4_IO_RW;
	int of = (rw ? O_RDWR : O_RDONLY) | O_CLOEXEC;
	struct stat st;

	if (!stat(path, &st) && S_ISBLK(st.st_mode))
		return rw && !(flags & R4_IO_SHARED) ? of | O_EXCL : of;
	return rw && (flags & R4_IO_CREATE) ? of | O_CREAT : of;
}

/* The image's lock: a write lock on the whole file, held by the open
 * file description (so by every process that shares it after a fork). */
static int lock_image(int fd)
{
	struct flock fl = {.l_type = F_WRLCK, .l_whence = SEEK_SET};	/* l_pid 0: OFD's rule */

	while (fcntl(fd, F_OFD_SETLK, &fl) < 0) {
		if (errno == EAGAIN || errno == EACCES)
			return -EBUSY;
		if (errno != EINTR)
			return -errno;
	}
	return 0;
}

int r4_io_file_open(const char *path, unsigned flags, struct r4_io **out)
{
	bool rw = flags & R4_IO_RW;
	struct file_io *f;
	struct stat st;
	int fd, rc;

	if (!(f = r4_calloc(1, sizeof(*f))))
		return -ENOMEM;
	if ((fd = open(path, open_flags(path, flags), 0644)) < 0) {
		rc = -errno;
		goto out_free;
	}
	if (fstat(fd, &st) < 0) {
		rc = -errno;
		goto out_close;
	}
	if (!S_ISREG(st.st_mode) && !S_ISBLK(st.st_mode)) {
		rc = S_ISDIR(st.st_mode) ? -EISDIR : -EINVAL;
		goto out_close;
	}
	if (rw && (rc = lock_image(fd)))
		goto out_close;
	f->io.ops = &r4_io_file_ops;
	f->fd = fd;
	f->rw = rw;
	f->blkdev = S_ISBLK(st.st_mode);
	*out = &f->io;
	return 0;
out_close:
	close(fd);
out_free:
	r4_free(f);
	return rc;
}
