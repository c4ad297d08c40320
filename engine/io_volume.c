/*
 * io_volume.c - where a volume is: r4_io_open, what every program's image
 * path names (an NBD URI or a file or block device), and a partition of
 * it, a window [start, start + size) of that backend.
 *
 * The window is a wrapper of its own rather than an offset inside
 * io_file.c because it must wrap every backend (a partitioned disk served
 * over NBD), and because the backend below stays the whole disk: the
 * image's lock (io_file.c) is on the whole file, and the partition table
 * is read from it.  Nothing above io.h knows a window is there.
 *
 * The table is read by libblkid (MBR with its logical partitions, GPT),
 * numbered as the kernel numbers /dev/sdaN.  libblkid reads a file
 * descriptor: a file or device is probed by its path; a backend with none
 * (NBD) is probed through a sparse in-memory copy of the places a table
 * lives: the first and last MiB (MBR, GPT and its backup) and, for an
 * extended partition, the MiB at its start and after each logical one's
 * end, where fdisk and sfdisk put the boot records that chain them.
 */
#include "io.h"

#include <blkid/blkid.h>
#include <sys/mman.h>
#include <unistd.h>

struct part_io {
	struct r4_io io;	/* first: the vtable head */
	struct r4_io *inner;	/* the whole disk, owned */
	uint64_t start, size;
};

static struct part_io *part_of(struct r4_io *io)
{
	return (struct part_io *)io;
}

static int p_read(struct r4_io *io, uint64_t off, void *buf, size_t len)
{
	struct part_io *p = part_of(io);

	if (off > p->size || len > p->size - off)
		return -EIO;	/* past the partition's end: a short read */
	return r4_io_read(p->inner, p->start + off, buf, len);
}

static int p_write(struct r4_io *io, uint64_t off, const void *buf, size_t len)
{
	struct part_io *p = part_of(io);

	if (off > p->size || len > p->size - off)
		return -ENOSPC;	/* never into the next partition */
	return r4_io_write(p->inner, p->start + off, buf, len);
}

static int p_sync(struct r4_io *io)
{
	return r4_io_sync(part_of(io)->inner);
}

static int p_size(struct r4_io *io, uint64_t *bytes)
{
	*bytes = part_of(io)->size;
	return 0;
}

static int p_truncate(struct r4_io *io, uint64_t bytes)
{
	(void)io;
	(void)bytes;
	return -EINVAL;		/* a partition's size is the table's */
}

static void p_close(struct r4_io *io)
{
	r4_io_close(part_of(io)->inner);
	r4_free(io);
}

static const struct r4_io_ops r4_io_part_ops = {
	.read = p_read,
	.write = p_write,
	.sync = p_sync,
	.size = p_size,
	.truncate = p_truncate,
	.close = p_close,
};

/* ---- the partition table ---- */

#define MIB (UINT64_C(1) << 20)
#define SPARSE_MAX 64		/* MiB copied at most for a table read over NBD */

/* The sparse copy of a disk that has no descriptor (NBD) for libblkid. */
struct sparse {
	struct r4_io *io;
	uint64_t size;
	int fd;			/* a memfd as large as the disk, holes elsewhere */
	uint64_t have[SPARSE_MAX];	/* the MiBs copied (their offsets) */
	unsigned n;
	bool added;		/* a MiB was copied since the last probe */
};

/* Copy the MiB holding byte off into the memfd (once); a full copy quietly
 * stops there (the probe then sees zeros). */
static int sparse_add(struct sparse *s, uint64_t off)
{
	uint64_t at = off & ~(MIB - 1), len;
	void *m;
	int rc;

	if (at >= s->size || s->n == SPARSE_MAX)
		return 0;
	for (unsigned i = 0; i < s->n; i++)
		if (s->have[i] == at)
			return 0;
	len = s->size - at < MIB ? s->size - at : MIB;
	if ((m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, s->fd, (off_t)at)) ==
	    MAP_FAILED)
		return -errno;
	rc = r4_io_read(s->io, at, m, len);
	munmap(m, len);
	if (rc)
		return rc;
	s->have[s->n++] = at;
	s->added = true;
	return 0;
}

/* The MiBs the chain of an extended partition needs, as far as the last
 * probe found it. */
static int sparse_follow(struct sparse *s, blkid_partlist ls)
{
	int rc = 0;

	for (int i = 0; ls && i < blkid_partlist_numof_partitions(ls) && !rc; i++) {
		blkid_partition pa = blkid_partlist_get_partition(ls, i);
		uint64_t start = (uint64_t)blkid_partition_get_start(pa) * 512;
		uint64_t end = start + (uint64_t)blkid_partition_get_size(pa) * 512;

		if (blkid_partition_is_extended(pa))
			rc = sparse_add(s, start);
		else if (blkid_partition_is_logical(pa))
			rc = sparse_add(s, end);
	}
	return rc;
}

/* A probe of the disk's partition table: on path when it names a file or
 * device, else on s (filled as the chain needs).  *pr NULL: no table. */
static int probe_table(struct r4_io *io, const char *path, struct sparse *s, blkid_probe *pr)
{
	blkid_partlist ls;
	int rc;

	if (!r4_io_is_nbd_uri(path)) {
		if (!(*pr = blkid_new_probe_from_filename(path)))
			return errno ? -errno : -ENOMEM;
		return 0;
	}
	s->io = io;
	if ((rc = r4_io_size(io, &s->size)))
		return rc;
	if ((s->fd = memfd_create("r4-partition-table", MFD_CLOEXEC)) < 0)
		return -errno;
	if (ftruncate(s->fd, (off_t)s->size) < 0)
		return -errno;
	if ((rc = sparse_add(s, 0)) || (s->size > MIB && (rc = sparse_add(s, s->size - 1))))
		return rc;
	for (;;) {
		if (!(*pr = blkid_new_probe()) || blkid_probe_set_device(*pr, s->fd, 0, 0))
			return -ENOMEM;
		blkid_probe_enable_partitions(*pr, 1);
		ls = blkid_probe_get_partitions(*pr);
		s->added = false;
		if ((rc = sparse_follow(s, ls)) || !s->added)
			return rc;
		blkid_free_probe(*pr);	/* more of the chain is there now: again */
		*pr = NULL;
	}
}

/* "1, 2, 5": the numbers of the partitions a volume can be in. */
static void list_numbers(blkid_partlist ls, char *out, size_t cap)
{
	size_t k = 0;

	out[0] = 0;
	for (int i = 0; i < blkid_partlist_numof_partitions(ls) && k < cap; i++) {
		blkid_partition pa = blkid_partlist_get_partition(ls, i);

		if (!blkid_partition_is_extended(pa))
			k += (size_t)snprintf(out + k, cap - k, "%s%d", k ? ", " : "",
					      blkid_partition_get_partno(pa));
	}
}

/* Partition number n of the disk io (path names it): its bytes' place. */
static int find_partition(struct r4_io *io, const char *path, unsigned n,
			  const struct r4_logger *lg, uint64_t *start, uint64_t *size)
{
	struct sparse s = {.fd = -1};
	blkid_probe pr = NULL;
	blkid_partlist ls = NULL;
	blkid_partition pa = NULL;
	char nums[256];
	int rc;

	errno = 0;
	if ((rc = probe_table(io, path, &s, &pr)))
		goto out;
	blkid_probe_enable_partitions(pr, 1);
	if (!(ls = blkid_probe_get_partitions(pr)) || !blkid_partlist_get_table(ls)) {
		r4_log(lg, R4_LOG_ERR, "'%s' has no partition table", path);
		rc = -ENXIO;
		goto out;
	}
	pa = blkid_partlist_get_partition_by_partno(ls, (int)n);
	if (!pa || blkid_partition_is_extended(pa)) {
		list_numbers(ls, nums, sizeof(nums));
		if (pa)
			r4_log(lg, R4_LOG_ERR, "'%s': partition %u is the extended one, which holds "
			       "the logical ones (it has %s)", path, n, nums);
		else
			r4_log(lg, R4_LOG_ERR, "'%s' has no partition %u (it has %s)", path, n,
			       nums[0] ? nums : "none");
		rc = -ENXIO;
		goto out;
	}
	*start = (uint64_t)blkid_partition_get_start(pa) * 512;
	*size = (uint64_t)blkid_partition_get_size(pa) * 512;
out:
	if (pr)
		blkid_free_probe(pr);
	if (s.fd >= 0)
		close(s.fd);
	return rc;
}

int r4_io_open(const char *path, unsigned flags, unsigned partition,
	       const struct r4_logger *lg, struct r4_io **out)
{
	struct part_io *p;
	struct r4_io *io;
	int rc;

	rc = r4_io_is_nbd_uri(path) ? r4_io_nbd_open(path, flags, lg, &io)
				    : r4_io_file_open(path, flags, &io);
	if (rc || !partition) {
		if (!rc)
			*out = io;
		return rc;
	}
	if (!(p = r4_calloc(1, sizeof(*p)))) {
		r4_io_close(io);
		return -ENOMEM;
	}
	if ((rc = find_partition(io, path, partition, lg, &p->start, &p->size))) {
		r4_io_close(io);
		r4_free(p);
		return rc;
	}
	p->io.ops = &r4_io_part_ops;
	p->inner = io;
	*out = &p->io;
	return 0;
}
