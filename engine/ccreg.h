/*
 * ccreg.h - compressed regular files (ccreg40, the kernel's
 * "cryptcompress" file plugin): what ccreg.c offers reg.c and the checker.
 *
 * A ccreg40 file is cut into logical clusters (4..64 KiB, the pset's
 * `cluster` member); each is stored as one disk cluster of ctail40 items
 * (item.h), compressed by the pset's `compression` plugin when that pays,
 * raw otherwise.  docs/ccreg.md says what lives where and what r4 decides
 * where the kernel is silent.  Every function here takes a loaded inode
 * whose effective plugins (obj.c) are set.
 */
#ifndef R4_CCREG_H
#define R4_CCREG_H

#include "obj.h"

#define R4_FILE_REG40 0
#define R4_FILE_CCREG40 4

/* Compression modes (pset member cmode; kernel compress_mode.c ids). */
enum r4_cmode {
	R4_CMODE_NONE = 0,	/* never compress */
	R4_CMODE_LATTD = 1,	/* adaptive: off after a miss, retried on a lattice */
	R4_CMODE_ULTIM = 2,	/* off for good after the first miss */
	R4_CMODE_FORCE = 3,	/* always try */
	R4_CMODE_CONV = 4,	/* like ultim, and an incompressible first cluster makes reg40 */
};

/* Is ino a ccreg40 file by its stat data (pset member `file` is 4)? */
bool r4_ccreg_is(const struct r4_inode *ino);

/* Bytes [off, off + len) of a ccreg40 file, clipped at its size; holes
 * (clusters without items) read as zeros.  -EUCLEAN for a broken disk
 * cluster, -EBADMSG for a wrong checksum, -ENOMEM. */
int r4_ccreg_read(struct r4_db *db, const struct r4_inode *ino, uint64_t off, void *buf,
		  size_t len, size_t *got);

/*
 * Write buf at off, rewriting every cluster the write touches (and the old
 * last cluster when the write starts past the end).  Updates size and bytes
 * in ino->sd but does not save it.  With compression mode conv, *convert
 * says the kernel's dispatch point was reached with an incompressible
 * first cluster: *done bytes were written, and the caller turns the file
 * into reg40 before writing the rest.  Otherwise *done = len.
 */
int r4_ccreg_write(struct r4_db *db, struct r4_inode *ino, uint64_t off, const void *buf,
		   size_t len, size_t *done, bool *convert);

/* What r4_ccreg_write of len bytes at off can add to the commit: every
 * cluster it touches, and the old last one, removed and stored again
 * (r4_txn_grab). */
uint64_t r4_ccreg_cost(struct r4_db *db, const struct r4_inode *ino, uint64_t off, uint64_t len);

/* Cut or extend to size, rewriting the cluster the new or old end falls in. */
int r4_ccreg_truncate(struct r4_db *db, struct r4_inode *ino, uint64_t size);

/* fallocate's PUNCH_HOLE of [off, end), off < end <= the size: clusters
 * wholly inside lose their items (a hole, read as zeros, as the kernel's
 * cryptcompress reads a cluster without items), the partial ones at the
 * edges are rewritten with zeros there.  Updates bytes in ino->sd but does
 * not save it. */
int r4_ccreg_punch(struct r4_db *db, struct r4_inode *ino, uint64_t off, uint64_t end);

/* The stat data of a new ccreg40 file: pset member `file` = 4, as the kernel's
 * create_object_cryptcompress stores it (the other members are inherited). */
void r4_ccreg_init_sd(struct r4_sd *sd);

/* Forget what makes ino a ccreg40 file (the whole plugin-set extension, as
 * the kernel's conversion to a unix file drops it).  Its body must be gone. */
void r4_ccreg_drop_sd(struct r4_db *db, struct r4_inode *ino);

/*
 * The logical bytes of one disk cluster, for those that gather its stream
 * themselves (salvage): the stream s of n bytes (n > 0) is cluster `idx`
 * of file oid of `size` bytes with cluster shift `shift` and compression
 * plugin `compress`; its lsize bytes (the cluster clipped at the size) go
 * to out.  Raw when n >= lsize, else checked (Adler-32) and inflated.  0,
 * -ENOMEM, or -EUCLEAN / -EBADMSG (a wrong checksum) with the reason
 * logged.
 */
int r4_ccreg_inflate(const struct r4_logger *lg, uint64_t blk, uint64_t oid, unsigned compress,
		     unsigned shift, uint64_t size, uint64_t idx, const uint8_t *s, size_t n,
		     uint8_t *out);

/*
 * Check one disk cluster as fsck.reiser4 would and as a read would: the
 * stream s of n bytes (n > 0) is cluster `idx` of a file of `size` bytes
 * with cluster shift `shift` and compression plugin `compress`.  0, or
 * -EUCLEAN / -EBADMSG with the reason logged.  For the checker.
 */
int r4_ccreg_check_cluster(const struct r4_logger *lg, uint64_t blk, unsigned compress,
			   unsigned shift, uint64_t size, uint64_t idx, const uint8_t *s,
			   size_t n);

#endif
