/*
 * r4.h - the one public header of the r4 engine: a userspace Reiser4
 * (format40) that opens an image file or block device and changes it in
 * transactions.
 *
 * Conventions (for every function below):
 *  - 0 on success or a negative errno; results go through out-pointers,
 *    which are written only on success.
 *  - Paths are absolute ('/'-separated; empty components and trailing
 *    slashes are ignored), are not NUL-terminated necessarily when a length
 *    is passed, and never follow symlinks: a symlink met as an intermediate
 *    component is -ENOTDIR.  A component over 255 bytes is -ENAMETOOLONG
 *    before anything is touched.
 *  - Nothing consumes its arguments.  What a function hands back is the
 *    caller's; release it with the matching _close/_free (they accept NULL).
 *  - Transactions: r4_begin / r4_commit / r4_abort.  A change made outside
 *    an explicit transaction commits on its own (autocommit).  No change
 *    reaches the image before commit; abort discards everything.  After a
 *    failure in the middle of a change the transaction is poisoned: every
 *    later call returns the stored error until r4_abort.
 */
#ifndef R4_H
#define R4_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

enum { R4_LOG_ERR = 0, R4_LOG_WARN = 1, R4_LOG_INFO = 2, R4_LOG_DEBUG = 3 };

/* Text for a negative errno (or 0); never NULL. */
const char *r4_strerror(int rc);

typedef struct r4_db r4_db;
struct r4_io;

struct r4_open_opts {
	bool rw;			/* read-write; default read-only */
	size_t cache_nodes;		/* clean nodes kept in memory; 0 = default (16384) */
	bool seconds_only;		/* new objects without the LARGE_TIMES extension (12
					   bytes less stat data, whole-second times), like the
					   kernel's 32bittimes mount option */
	void (*log)(void *ctx, int level, const char *msg);	/* NULL: stderr */
	void *log_ctx;
};

/*
 * Open an image file or block device.  -ENOENT/-EACCES from the OS,
 * -EUCLEAN for a missing or damaged super block or tree root (the log
 * names what and which block), -EINVAL for an unsupported block size or
 * format, -EROFS for a read-write open of a volume marked damaged.
 */
int r4_open(const char *path, const struct r4_open_opts *opts, r4_db **out);
/* The same over an I/O backend (tests: memory, fault injection).  The db
 * takes the backend over and closes it in r4_close, also on failure. */
int r4_open_io(struct r4_io *io, const struct r4_open_opts *opts, r4_db **out);
/* Abort any open transaction, release everything. */
void r4_close(r4_db *db);
/* Commit the open transaction, if any; make all committed state durable. */
int r4_sync(r4_db *db);

int r4_begin(r4_db *db);		/* -EBUSY if one is open; -EROFS read-only */
int r4_commit(r4_db *db);		/* -EINVAL without a transaction; stored error if poisoned */
void r4_abort(r4_db *db);
bool r4_in_txn(const r4_db *db);

/* ---- objects ---- */

struct r4_stat {
	uint64_t ino;			/* object id */
	uint32_t mode;			/* type and permission bits, as st_mode */
	uint32_t nlink;
	uint32_t uid, gid;
	uint64_t size;
	uint64_t blocks;		/* 512-byte units of space the object uses */
	uint64_t rdev;
	struct timespec atime, mtime, ctime;
};

enum {					/* r4_setattr mask */
	R4_SET_MODE = 1 << 0,		/* permission bits only (type kept) */
	R4_SET_UID = 1 << 1,
	R4_SET_GID = 1 << 2,
	R4_SET_SIZE = 1 << 3,
	R4_SET_ATIME = 1 << 4,
	R4_SET_MTIME = 1 << 5,
	R4_SET_CTIME = 1 << 6,
};

struct r4_setattr {
	unsigned mask;
	uint32_t mode, uid, gid;
	uint64_t size;
	struct timespec atime, mtime, ctime;
};

int r4_stat(r4_db *db, const char *path, struct r4_stat *st);
int r4_setattr(r4_db *db, const char *path, const struct r4_setattr *sa);

/* Create a regular file (-EEXIST), directory, special file (mode gives
 * S_IFIFO/S_IFSOCK/S_IFCHR/S_IFBLK) or symlink, owned by uid:gid. */
int r4_create(r4_db *db, const char *path, uint32_t mode, uint32_t uid, uint32_t gid);
int r4_mkdir(r4_db *db, const char *path, uint32_t mode, uint32_t uid, uint32_t gid);
int r4_mknod(r4_db *db, const char *path, uint32_t mode, uint64_t rdev, uint32_t uid,
	     uint32_t gid);
/* The target lives in the stat data: up to 2047 bytes (-ENAMETOOLONG). */
int r4_symlink(r4_db *db, const char *target, const char *path, uint32_t uid, uint32_t gid);
/* Copies at most n bytes of the target (not NUL-terminated) and its full length. */
int r4_readlink(r4_db *db, const char *path, char *buf, size_t n, size_t *len);

int r4_link(r4_db *db, const char *oldpath, const char *newpath);
int r4_unlink(r4_db *db, const char *path);	/* -EISDIR for a directory */
int r4_rmdir(r4_db *db, const char *path);	/* -ENOTEMPTY, -ENOTDIR, -EBUSY for "/" */

enum { R4_RENAME_NOREPLACE = 1, R4_RENAME_EXCHANGE = 2 };
/* rename(2) semantics: over a file or an empty directory; -EINVAL into its
 * own subtree; flags as renameat2(2). */
int r4_rename(r4_db *db, const char *from, const char *to, unsigned flags);

/* Read up to len bytes at off (holes read as zeros); *got < len at EOF. */
int r4_read(r4_db *db, const char *path, uint64_t off, void *buf, size_t len, size_t *got);
/* Write len bytes at off, extending the file (holes stay sparse). */
int r4_write(r4_db *db, const char *path, uint64_t off, const void *buf, size_t len);
int r4_truncate(r4_db *db, const char *path, uint64_t size);

/*
 * Directory listing with a cursor that survives changes between calls:
 * entries are delivered in key order after the cursor; each delivered
 * entry advances it.  The callback returns nonzero to stop (that entry
 * counts as not delivered).  "." and ".." come first.  The callback
 * must not change the image (collect, then act).
 */
struct r4_dirpos {
	uint64_t k[4];			/* key of the last delivered entry */
	uint32_t dup;			/* entries with that key already delivered */
	bool started;
};
typedef int (*r4_dirent_fn)(void *ctx, const char *name, size_t len, uint64_t ino,
			    uint32_t type /* S_IF* */);
int r4_readdir(r4_db *db, const char *path, struct r4_dirpos *pos, r4_dirent_fn fn, void *ctx);

struct r4_statfs {
	uint32_t bsize;
	uint64_t blocks, bfree, files, ffree;
	uint32_t namemax;
};
int r4_statfs(r4_db *db, struct r4_statfs *out);

/* ---- volume ---- */

struct r4_mkfs_opts {
	uint32_t blocksize;		/* 0 = 4096 */
	const char *label;		/* up to 16 bytes */
	const uint8_t *uuid;		/* 16 bytes; NULL = random */
	bool node41;			/* CRC32C node checksums */
	unsigned hash, fibration, formatting;	/* plugin ids; ~0u = profile default */
	unsigned create;		/* regular-file plugin: 0 reg40 (default here) */
	int64_t mtime;			/* tests: fixed time; < 0 = now */
	uint32_t mkfs_id;		/* tests: fixed; 0 = random */
};
void r4_mkfs_defaults(struct r4_mkfs_opts *o);
/* Make a fresh format40 volume of `size` bytes on path (created if needed). */
int r4_mkfs(const char *path, uint64_t size, const struct r4_mkfs_opts *o);

struct r4_info {
	uint32_t blocksize;
	uint64_t block_count, free_blocks, root, next_oid, file_count;
	unsigned height, node_pid, policy;
	uint32_t mkfs_id, version;
	uint8_t uuid[16];
	char label[17];
	unsigned hash, fibration, formatting, create;
	uint64_t status;
};
int r4_info(r4_db *db, struct r4_info *out);
const char *r4_plugin_label(unsigned type, unsigned id);
enum { R4_PTYPE_FILE = 0, R4_PTYPE_NODE = 2, R4_PTYPE_HASH = 3, R4_PTYPE_FIBRE = 4,
       R4_PTYPE_FORMATTING = 5 };

#endif
