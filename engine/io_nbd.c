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
 */
#include "io.h"

#include <libnbd.h>

#define NBD_PIECE (4u << 20)	/* bytes per request: below every server's limit */

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
	int e = nbd_get_errno();

	return e > 0 ? -e : -EIO;
}

/* len bytes at off, read into or written from p, a request per piece. */
static int n_io(struct nbd_io *n, uint64_t off, uint8_t *p, size_t len, bool write)
{
	while (len) {
		size_t k = len < NBD_PIECE ? len : NBD_PIECE;

		if ((write ? nbd_pwrite(n->h, p, k, off, 0) : nbd_pread(n->h, p, k, off, 0)) < 0)
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

	if (!n->rw || nbd_can_flush(n->h) != 1)
		return 0;
	return nbd_flush(n->h, 0) < 0 ? nbd_rc() : 0;
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

	nbd_shutdown(n->h, 0);	/* a clean disconnect: the server flushes */
	nbd_close(n->h);
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

	if (!(n = r4_calloc(1, sizeof(*n))))
		return -ENOMEM;
	if (!(n->h = nbd_create())) {
		rc = nbd_rc();
		goto fail;
	}
	if (nbd_connect_uri(n->h, uri) < 0 || (size = nbd_get_size(n->h)) < 0) {
		rc = nbd_rc();
		r4_log(lg, R4_LOG_ERR, "%s: %s", uri, nbd_get_error());
		goto fail;
	}
	n->rw = flags & R4_IO_RW;
	if (n->rw && nbd_is_read_only(n->h) == 1) {
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
		nbd_close(n->h);
	r4_free(n);
	return rc;
}
