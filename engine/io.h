/*
 * io.h - the block I/O vtable: the engine touches an image only through it
 * (STYLE.md section 8).
 *
 * Every operation takes byte offsets and returns 0 or a negative errno; a
 * read that cannot deliver all `len` bytes (past the end, short file) is
 * -EIO, never a partial success.  The backends:
 *   io_file.c   a regular file or a block device; the only engine file that
 *               may call pread/pwrite/fdatasync (make layering checks);
 *   io_nbd.c    an NBD export (libnbd), named by an nbd:// URI; the only
 *               engine file that may call libnbd;
 *   io_volume.c a window of another backend (one partition), and
 *               r4_io_open: what a path names, as every program opens it;
 *   io_mem.c    the image in RAM, growable, loadable from / savable to a file;
 *   io_fault.c  a wrapper over another backend that fails the Nth read,
 *               write or sync, and in crash mode keeps the writes since the
 *               last sync so a test can produce what a power cut would leave.
 * A handle is used by one thread at a time; the backends do no locking.
 * Blocks, caching and the journal are the layers above (cache.c, jnl.c).
 */
#ifndef R4_IO_H
#define R4_IO_H

#include <sys/uio.h>

#include "r4_int.h"

struct r4_io;

struct r4_io_ops {
	/* Exactly len bytes at off, or -EIO (short), or the backend's -errno. */
	int (*read)(struct r4_io *io, uint64_t off, void *buf, size_t len);
	/* All len bytes at off; writing past the end grows the image. */
	int (*write)(struct r4_io *io, uint64_t off, const void *buf, size_t len);
	/* Optional, as write: the n buffers of v one after another at off
	 * (NULL: a caller gathers them into one buffer for write). */
	int (*writev)(struct r4_io *io, uint64_t off, const struct iovec *v, int n);
	/* Everything written before returns is durable once this returns 0. */
	int (*sync)(struct r4_io *io);
	/* Current size in bytes (a block device's capacity). */
	int (*size)(struct r4_io *io, uint64_t *bytes);
	/* Set the size (grow with zeros or cut); -EINVAL on a block device. */
	int (*truncate)(struct r4_io *io, uint64_t bytes);
	/* Release the handle; never fails. */
	void (*close)(struct r4_io *io);
};

/* The common head of every backend's handle (the backend's struct embeds it first). */
struct r4_io {
	const struct r4_io_ops *ops;
};

static inline int r4_io_read(struct r4_io *io, uint64_t off, void *buf, size_t len)
{
	return io->ops->read(io, off, buf, len);
}

static inline int r4_io_write(struct r4_io *io, uint64_t off, const void *buf, size_t len)
{
	return io->ops->write(io, off, buf, len);
}

static inline int r4_io_writev(struct r4_io *io, uint64_t off, const struct iovec *v, int n)
{
	return io->ops->writev(io, off, v, n);
}

static inline int r4_io_sync(struct r4_io *io)
{
	return io->ops->sync(io);
}

static inline int r4_io_size(struct r4_io *io, uint64_t *bytes)
{
	return io->ops->size(io, bytes);
}

static inline int r4_io_truncate(struct r4_io *io, uint64_t bytes)
{
	return io->ops->truncate(io, bytes);
}

/* Accepts NULL. */
static inline void r4_io_close(struct r4_io *io)
{
	if (io)
		io->ops->close(io);
}

/* ---- io_file.c ---- */

enum {				/* r4_io_file_open's flags */
	R4_IO_RW = 1,			/* read-write, and the image's lock */
	R4_IO_CREATE = 2,		/* with R4_IO_RW: a missing file is made (mode 0644) */
	R4_IO_SHARED = 4,		/* with R4_IO_RW: a block device without O_EXCL (the
					   caller mounts it, and the kernel's claim excludes) */
};

/*
 * Open a regular file or a block device, read-only or (R4_IO_RW)
 * read-write; the file must exist unless R4_IO_CREATE.  A read-write handle
 * holds the image's lock (an OFD write lock on the whole file, and O_EXCL
 * for a block device) until r4_io_close; the handle's descriptor is its
 * one owner, so a process that forks after opening keeps it.  Size of a
 * device comes from BLKGETSIZE64.  Errors: -EBUSY when another open file
 * holds the lock, or a block device is mounted or claimed (nothing was
 * read or written); open(2)'s -errno (-ENOENT, -EACCES, -EROFS, ...),
 * -ENOMEM.  Writes are not durable until r4_io_sync (fdatasync).  On a
 * read-only handle write and truncate return -EBADF.
 */
int r4_io_file_open(const char *path, unsigned flags, struct r4_io **out);

/* ---- io_nbd.c ---- */

/* Whether path is an NBD URI (nbd://, nbds://, nbd+unix://, ...), which
 * r4_io_open hands to io_nbd.c instead of opening a file of that name. */
bool r4_io_is_nbd_uri(const char *path);

/*
 * Connect to the NBD export uri names (libnbd's nbd_connect_uri: nbd://HOST
 * [:PORT]/EXPORT, nbd+unix:///EXPORT?socket=PATH, ...), read-only or
 * (R4_IO_RW) read-write.  Its size is the export's; truncate is -EINVAL, as
 * on a block device; sync is the server's flush.  No lock is taken: who
 * may write an export is the server's business (docs/volumes.md).  Errors
 * (libnbd's words logged to lg): the connection's -errno (-ECONNREFUSED,
 * -ENOENT for a missing socket, ...), -EROFS for R4_IO_RW on a read-only
 * export, -ENOMEM.
 */
int r4_io_nbd_open(const char *uri, unsigned flags, const struct r4_logger *lg,
		   struct r4_io **out);

/* ---- io_volume.c ---- */

/*
 * Open what path names: an NBD URI (io_nbd.c) or a file or block device
 * (io_file.c, flags as r4_io_file_open's, the lock on the whole file);
 * with partition > 0, only that partition of it (the number the image's
 * MBR or GPT gives it, as libblkid reads the table: /dev/sdaN's N), a
 * window no read or write leaves.  The window's size is the partition's;
 * truncate is -EINVAL and a write past its end -ENOSPC.  -ENXIO, logged to
 * lg in words, when the image has no partition table or no such
 * partition (or it is an extended one, a container of others); the
 * backends' errors.
 */
int r4_io_open(const char *path, unsigned flags, unsigned partition,
	       const struct r4_logger *lg, struct r4_io **out);

/* ---- io_mem.c ---- */

/* An image of `size` zero bytes in RAM; writes past the end grow it.  -ENOMEM. */
int r4_io_mem_new(uint64_t size, struct r4_io **out);
/* A RAM image holding a copy of the file at path.  -errno of open/read, -ENOMEM. */
int r4_io_mem_load(const char *path, struct r4_io **out);
/* Write the whole RAM image to path (created or truncated).  -errno, -EIO. */
int r4_io_mem_save(struct r4_io *io, const char *path);
/* The bytes of a RAM image (valid until the next write, truncate or close)
 * and their count; NULL and 0 when io is not a RAM image. */
const uint8_t *r4_io_mem_data(struct r4_io *io, uint64_t *size);

/* ---- io_fault.c ---- */

/*
 * Wrap inner, borrowing it: the wrapper passes every call through until
 * told otherwise, and r4_io_close(wrapper) does NOT close inner, so a test
 * can inspect or reopen inner after a simulated crash.  -ENOMEM.
 */
int r4_io_fault_wrap(struct r4_io *inner, struct r4_io **out);
/* The wrapper takes inner over: closing it closes inner (R4_TEST_FAULT, db.c). */
void r4_io_fault_own(struct r4_io *io);

enum r4_io_fault_op {		/* which call a failure targets */
	R4_IO_FAULT_READ,
	R4_IO_FAULT_WRITE,
	R4_IO_FAULT_SYNC,
};

/*
 * Fail the nth call of kind op from now (1 = the next one) with err (a
 * negative errno, e.g. -EIO); with persistent, that call and every later
 * one of the kind fails.  nth = 0 disarms the kind.  A failed write changes
 * nothing; a failed sync leaves the unsynced writes unsynced.
 */
void r4_io_fault_fail(struct r4_io *io, enum r4_io_fault_op op, uint64_t nth, int err,
		      bool persistent);

/*
 * Crash mode.  r4_io_fault_record(io, true) starts keeping writes in the
 * wrapper instead of passing them on: reads see them, sync hands them to
 * inner in order and then syncs inner, so inner always holds exactly the
 * synced state.  Turning recording off first applies what is kept (as a
 * sync without the inner sync).
 *
 * r4_io_fault_crash_at(io, k, seed, tear) arms a power cut right after the
 * k-th write from now (recording turns on): the k-th write is kept, then
 * each kept write is applied to inner, in order, or dropped, by a PRNG
 * seeded with seed; with tear the last one (write k) is instead applied
 * sector by sector (512 bytes, aligned on absolute offsets), each sector
 * kept or dropped.  From then on every call returns -EIO (the wrapper is
 * dead) until it is closed; inner holds the post-crash image.
 * r4_io_fault_crash_now does the same at once, with the last kept write as
 * the one torn.  k = 0 disarms.
 */
void r4_io_fault_record(struct r4_io *io, bool on);
void r4_io_fault_crash_at(struct r4_io *io, uint64_t k, uint64_t seed, bool tear);
void r4_io_fault_crash_now(struct r4_io *io, uint64_t seed, bool tear);

struct r4_io_fault_stats {
	uint64_t fs_reads, fs_writes, fs_syncs;	/* calls seen, failed ones included */
	uint64_t fs_failed;			/* calls failed on purpose */
	uint64_t fs_pending;			/* writes kept, not yet synced */
	uint64_t fs_applied, fs_dropped;	/* at the crash: writes applied / dropped */
	uint64_t fs_torn_sectors;		/* at the crash: sectors torn off the last write */
	bool fs_crashed;
};

void r4_io_fault_stats(struct r4_io *io, struct r4_io_fault_stats *out);

#endif
