/*
 * io_mem.c - an image held in RAM, for fast unit tests and for building an
 * image before it is saved.
 *
 * Writes past the end grow the image (capacity doubles, new bytes are
 * zero); reads past the end are -EIO like a short read from a file; sync
 * does nothing.  r4_io_mem_load / r4_io_mem_save copy a whole file in and
 * out with stdio (no pread/pwrite: those belong to io_file.c), so a test
 * can run mkfs.reiser4 on a file, work on it in memory and dump the result
 * for fsck.reiser4.  Knows nothing about blocks.
 */
#include "io.h"

#include <stdio.h>

struct mem_io {
	struct r4_io io;	/* first: the vtable head */
	uint8_t *data;
	uint64_t size;
	size_t cap;
};

static const struct r4_io_ops r4_io_mem_ops;

static struct mem_io *mem_of(struct r4_io *io)
{
	return (struct mem_io *)io;
}

/* Make room for `need` bytes; bytes past size are kept zero. */
static int mem_reserve(struct mem_io *m, uint64_t need)
{
	size_t old = m->cap;

	if (need > SIZE_MAX || r4_grow(&m->data, &m->cap, (size_t)need, 1, 4096))
		return -ENOMEM;
	memset(m->data + old, 0, m->cap - old);
	return 0;
}

static int m_read(struct r4_io *io, uint64_t off, void *buf, size_t len)
{
	struct mem_io *m = mem_of(io);

	if (off > m->size || len > m->size - off)
		return -EIO;
	memcpy(buf, m->data + off, len);
	return 0;
}

static int m_write(struct r4_io *io, uint64_t off, const void *buf, size_t len)
{
	struct mem_io *m = mem_of(io);
	int rc;

	if (len > UINT64_MAX - off)
		return -EINVAL;
	if ((rc = mem_reserve(m, off + len)))
		return rc;
	memcpy(m->data + off, buf, len);
	if (off + len > m->size)
		m->size = off + len;
	return 0;
}

static int m_sync(struct r4_io *io)
{
	(void)io;
	return 0;
}

static int m_size(struct r4_io *io, uint64_t *bytes)
{
	*bytes = mem_of(io)->size;
	return 0;
}

static int m_truncate(struct r4_io *io, uint64_t bytes)
{
	struct mem_io *m = mem_of(io);
	int rc;

	if (bytes > m->size) {
		if ((rc = mem_reserve(m, bytes)))
			return rc;
	} else {
		memset(m->data + bytes, 0, (size_t)(m->size - bytes));	/* keep the tail zero */
	}
	m->size = bytes;
	return 0;
}

static void m_close(struct r4_io *io)
{
	struct mem_io *m = mem_of(io);

	r4_free(m->data);
	r4_free(m);
}

static const struct r4_io_ops r4_io_mem_ops = {
	.read = m_read,
	.write = m_write,
	.sync = m_sync,
	.size = m_size,
	.truncate = m_truncate,
	.close = m_close,
};

int r4_io_mem_new(uint64_t size, struct r4_io **out)
{
	struct mem_io *m = r4_calloc(1, sizeof(*m));

	if (!m)
		return -ENOMEM;
	m->io.ops = &r4_io_mem_ops;
	if (size > SIZE_MAX || !(m->data = r4_calloc(1, size ? (size_t)size : 1))) {
		r4_free(m);
		return -ENOMEM;
	}
	m->size = size;
	m->cap = (size_t)size;
	*out = &m->io;
	return 0;
}

int r4_io_mem_load(const char *path, struct r4_io **out)
{
	struct r4_io *io = NULL;
	FILE *f;
	long n;
	int rc = 0;

	if (!(f = fopen(path, "rb")))
		return -errno;
	if (fseek(f, 0, SEEK_END) || (n = ftell(f)) < 0 || fseek(f, 0, SEEK_SET)) {
		rc = -EIO;
		goto out;
	}
	if ((rc = r4_io_mem_new((uint64_t)n, &io)))
		goto out;
	if (n && fread(mem_of(io)->data, 1, (size_t)n, f) != (size_t)n) {
		rc = -EIO;
		r4_io_close(io);
		goto out;
	}
	*out = io;
out:
	fclose(f);
	return rc;
}

int r4_io_mem_save(struct r4_io *io, const char *path)
{
	struct mem_io *m = mem_of(io);
	FILE *f;
	int rc = 0;

	if (io->ops != &r4_io_mem_ops)
		return -EINVAL;
	if (!(f = fopen(path, "wb")))
		return -errno;
	if (m->size && fwrite(m->data, 1, (size_t)m->size, f) != m->size)
		rc = -EIO;
	if (fclose(f) && !rc)
		rc = -EIO;
	return rc;
}

const uint8_t *r4_io_mem_data(struct r4_io *io, uint64_t *size)
{
	if (io->ops != &r4_io_mem_ops) {
		*size = 0;
		return NULL;
	}
	*size = mem_of(io)->size;
	return mem_of(io)->data;
}
