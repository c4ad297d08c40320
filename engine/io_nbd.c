/*
 * io_nbd.c - an NBD export as a backend of the I/O vtable (io.h), through
 * libnbd: a remote disk (nbd://HOST[:PORT]/EXPORT), a local server's
 * socket (nbd+unix:///EXPORT?socket=PATH), whatever nbd_connect_uri takes.
 *
 * Like a block device: the size is the export's and does not change
 * (truncate is -EINVAL, a write past the end -ENOSPC), and sync is the
 * server's flush (NBD_CMD_FLUSH; a server that offers none writes through).
 * Requests are cut into pieces no server refuses.  No lock: one writer
 * per export is the server's to enforce (docs/volumes.md, "NBD").  The
 * only engine file that calls libnbd; it knows nothing about blocks.
 *
 * libnbd is loaded (dlopen) when the first export is opened, not linked:
 * it brings the TLS, XML and Unicode libraries, 2.7 ms of every start of
 * a program that never opens an export (r4 ls, r4sh on an image file).
 */
#include "io.h"

#include <dlfcn.h>
#include <libnbd.h>
#include <pthread.h>

#define NBD_PIECE (4u << 20)	/* bytes per request: below every server's limit */

/* The libnbd calls this file makes: lib.nbd_NAME, loaded. */
#define NBD_CALLS(X) X(create) X(close) X(connect_uri) X(get_size) X(is_read_only) \
	X(can_flush) X(flush) X(pread) X(pwrite) X(shutdown) X(get_errno) X(get_error)

static struct {
#define NBD_SLOT(f) __typeof__(nbd_##f) *nbd_##f;
	NBD_CALLS(NBD_SLOT)
#undef NBD_SLOT
} lib;
static pthread_once_t lib_once = PTHREAD_ONCE_INIT;
static char lib_why[256];	/* why it could not be loaded; "" if it was */

static void lib_load(void)
{
	void *so = dlopen("libnbd.so.0", RTLD_NOW | RTLD_LOCAL);

	if (!so) {
		snprintf(lib_why, sizeof(lib_why), "%s", dlerror());
		return;
	}
	/* (POSIX's way from dlsym's object pointer to a function pointer) */
#define NBD_LOAD(f) \
	if (!(*(void **)&lib.nbd_##f = dlsym(so, "nbd_" #f))) { \
		snprintf(lib_why, sizeof(lib_why), "libnbd.so.0 has no nbd_" #f); \
		return; \
	}
	NBD_CALLS(NBD_LOAD)
#undef NBD_LOAD
}

struct nbd_io {
	struct r4_io io;	/* first: the vtable head */
	struct nbd_handle *h;
	uint64_t size;
	bool rw;
};

static struct nbd_io *nbd_of(struct r4_io *io)
{
	return (struct nbd_io *)io;
}

/* The -errno of libnbd's last failure on this thread. */
static int nbd_rc(void)
{
	int e = lib.nbd_get_errno();

	return e > 0 ? -e : -EIO;
}

/* len bytes at off, read into or written from p, a request per piece. */
static int n_io(struct nbd_io *n, uint64_t off, uint8_t *p, size_t len, bool write)
{
	while (len) {
		size_t k = len < NBD_PIECE ? len : NBD_PIECE;

		if ((write ? lib.nbd_pwrite(n->h, p, k, off, 0) : lib.nbd_pread(n->h, p, k, off, 0)) < 0)
			return nbd_rc();
		p += k;
		off += k;
		len -= k;
	}
	return 0;
}

static int n_read(struct r4_io *io, uint64_t off, void *buf, size_t len)
{
	struct nbd_io *n = nbd_of(io);

	if (off > n->size || len > n->size - off)
		return -EIO;	/* past the end: a short read */
	return n_io(n, off, buf, len, false);
}

static int n_write(struct r4_io *io, uint64_t off, const void *buf, size_t len)
{
	struct nbd_io *n = nbd_of(io);

	if (!n->rw)
		return -EBADF;
	if (off > n->size || len > n->size - off)
		return -ENOSPC;	/* an export does not grow */
	return n_io(n, off, (uint8_t *)buf, len, true);	/* (only read from) */
}

static int n_sync(struct r4_io *io)
{
	struct nbd_io *n = nbd_of(io);

	if (!n->rw || lib.nbd_can_flush(n->h) != 1)
		return 0;
	return lib.nbd_flush(n->h, 0) < 0 ? nbd_rc() : 0;
}

static int n_size(struct r4_io *io, uint64_t *bytes)
{
	*bytes = nbd_of(io)->size;
	return 0;
}

static int n_truncate(struct r4_io *io, uint64_t bytes)
{
	(void)bytes;
	return nbd_of(io)->rw ? -EINVAL : -EBADF;
}

static void n_close(struct r4_io *io)
{
	struct nbd_io *n = nbd_of(io);

	lib.nbd_shutdown(n->h, 0);	/* a clean disconnect: the server flushes */
	lib.nbd_close(n->h);
	r4_free(n);
}

static const struct r4_io_ops r4_io_nbd_ops = {
	.read = n_read,
	.write = n_write,
	.sync = n_sync,
	.size = n_size,
	.truncate = n_truncate,
	.close = n_close,
};

bool r4_io_is_nbd_uri(const char *path)
{
	size_t k = strspn(path, "abcdefghijklmnopqrstuvwxyz+");

	return !strncmp(path, "nbd", 3) && !strncmp(path + k, "://", 3);
}

int r4_io_nbd_open(const char *uri, unsigned flags, const struct r4_logger *lg,
		   struct r4_io **out)
{
	struct nbd_io *n;
	int64_t size;
	int rc;

	pthread_once(&lib_once, lib_load);
	if (lib_why[0]) {
		r4_log(lg, R4_LOG_ERR, "%s: libnbd is needed for an NBD export (Debian: libnbd0): %s",
		       uri, lib_why);
		return -ENOSYS;
	}
	if (!(n = r4_calloc(1, sizeof(*n))))
		return -ENOMEM;
	if (!(n->h = lib.nbd_create())) {
		rc = nbd_rc();
		goto fail;
	}
	if (lib.nbd_connect_uri(n->h, uri) < 0 || (size = lib.nbd_get_size(n->h)) < 0) {
		rc = nbd_rc();
		r4_log(lg, R4_LOG_ERR, "%s: %s", uri, lib.nbd_get_error());
		goto fail;
	}
	n->rw = flags & R4_IO_RW;
	if (n->rw && lib.nbd_is_read_only(n->h) == 1) {
		r4_log(lg, R4_LOG_ERR, "%s: the server exports it read-only", uri);
		rc = -EROFS;
		goto fail;
	}
	n->io.ops = &r4_io_nbd_ops;
	n->size = (uint64_t)size;
	*out = &n->io;
	return 0;
fail:
	if (n->h)
		lib.nbd_close(n->h);
	r4_free(n);
	return rc;
}
