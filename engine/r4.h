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

/*
 * The heap: every allocation of r4 (engine and parser) goes through these,
 * so a test can fail the Nth one and the sanitizers see each.  Same
 * contracts as malloc/calloc/realloc/free; r4_memdup copies n bytes and
 * adds a NUL.
 */
void *r4_malloc(size_t n);
void *r4_calloc(size_t n, size_t size);
void *r4_realloc(void *p, size_t n);
void r4_free(void *p);
char *r4_memdup(const void *p, size_t n);
/* Test hook: make the Nth allocation from now fail (0 = never). */
void r4_heap_fail_at(unsigned long n);

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
	/* For checkers (r4 fsck): */
	bool repair;			/* read-write even when the status block marks the
					   volume damaged */
	bool ignore_journal;		/* read-only only: read the image as it is in place,
					   without the journal's unplayed transactions (which
					   the caller checks itself); -EINVAL with rw */
};

/*
 * Open an image file or block device.  -ENOENT/-EACCES from the OS,
 * -EUCLEAN for a missing or damaged super block, tree root or journal
 * (the log names what and which block), -EINVAL for an unsupported block
 * size or format, -EROFS for a read-write open of a volume marked damaged.
 * Committed transactions the journal holds unplayed (a crash) are
 * replayed by a read-write open; a read-only open writes nothing and
 * shows them as if replayed.
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

/* ---- consistency check and repair: r4 fsck (engine/check.c, docs/fsck.md) ---- */

/* What part of the image a problem lies in.  Order matters: it is the
 * order the checker works in, and reports come in it. */
enum r4_check_class {
	R4_CC_SUPER = 1,	/* master, format super block, backups, status block */
	R4_CC_JOURNAL,		/* journal header, footer, transaction chain */
	R4_CC_NODE,		/* one node: header, checksum, level, layout, emptiness */
	R4_CC_TREE,		/* between nodes: key order, delimiting keys, pointers */
	R4_CC_ITEM,		/* an item body, or items no object owns */
	R4_CC_BLOCK,		/* a block used twice, or outside the volume */
	R4_CC_BITMAP,		/* the bitmap against the blocks in use; free count */
	R4_CC_OBJECT,		/* stat data against the object's items */
	R4_CC_NAME,		/* directory entries: ".", "..", dangling, orphans */
};

/* The exact finding (each belongs to one class, r4_check_class_of). */
enum r4_check_code {
	R4_CK_SB_FREE = 1,	/* free-block count differs from the free blocks */
	R4_CK_SB_OID,		/* next oid not above every oid in the tree */
	R4_CK_SB_FILES,		/* file count differs from the objects found */
	R4_CK_SB_BACKUP,	/* a backup block differs from the super blocks */
	R4_CK_SB_STATUS,	/* the status block marks the volume damaged */
	R4_CK_SB_BAD,		/* the volume does not open: super block, bitmap, root */
	R4_CK_JNL_PENDING,	/* committed transactions not yet played */
	R4_CK_JNL_BAD,		/* journal header, footer or tx chain unreadable */
	R4_CK_NODE_BAD,		/* node does not validate (magic, level, layout, order) */
	R4_CK_NODE_CSUM,	/* node41 checksum mismatch */
	R4_CK_NODE_EMPTY,	/* node with no items */
	R4_CK_TREE_ORDER,	/* keys not ascending across items or nodes */
	R4_CK_TREE_DKEY,	/* child's keys disagree with its parent's delimiting keys */
	R4_CK_TREE_PTR,		/* node pointer outside the volume or into the fixed area */
	R4_CK_TREE_TWICE,	/* a node reached twice */
	R4_CK_ITEM_BAD,		/* item body does not decode */
	R4_CK_ITEM_KEY,		/* item or entry key wrong for its content */
	R4_CK_ITEM_NOSD,	/* items of an object that has no stat data */
	R4_CK_BLK_TWICE,	/* block used by two nodes or extents */
	R4_CK_BLK_RANGE,	/* extent outside the volume or into the fixed area */
	R4_CK_BMP_LEAK,		/* used in the bitmap, reached by nothing */
	R4_CK_BMP_FREE,		/* in use, free in the bitmap */
	R4_CK_OBJ_SIZE,		/* size differs from the items */
	R4_CK_OBJ_BYTES,	/* bytes (st_blocks) differs from the items */
	R4_CK_OBJ_NLINK,	/* nlink differs from the names counted */
	R4_CK_OBJ_BODY,		/* body items: gap, tails mixed with extents, unallocated */
	R4_CK_OBJ_MODE,		/* stat data: no LW, unknown type, items of the wrong kind */
	R4_CK_NAME_DOT,		/* "." missing or not naming the directory */
	R4_CK_NAME_DOTDOT,	/* ".." missing or not naming the parent */
	R4_CK_NAME_DANGLING,	/* entry naming an object with no stat data */
	R4_CK_NAME_ORPHAN,	/* object that no entry names */
	R4_CK_NAME_LINKS,	/* directory with more than one name */
	R4_CK_NAME_KEY,		/* entry's stat-data key differs from the object's */
	R4_CK_COUNT
};

#define R4_CHECK_NOBLK UINT64_MAX

/* One finding; every pointer is valid only during the report callback. */
struct r4_problem {
	enum r4_check_class cls;
	enum r4_check_code code;
	uint64_t blk;		/* first block concerned, or R4_CHECK_NOBLK */
	uint64_t nblk;		/* blocks in the range from blk (bitmap ranges), else 1 */
	uint64_t oid;		/* object concerned, 0 = none */
	const char *key;	/* item key, debugfs style "[2a:1(SD):0:10001:0]", or NULL */
	const char *path;	/* a path of the object or entry, when known, or NULL */
	const char *msg;	/* what is wrong, with what was found and expected */
	bool fixable;		/* r4_check with fix repairs it */
	bool fixed;		/* the repair is part of this run's commit (fix mode) */
};

struct r4_check_opts {
	bool fix;		/* repair what is safe, in one transaction; the db must be rw */
	void (*report)(void *ctx, const struct r4_problem *p);	/* NULL: count only */
	void (*progress)(void *ctx, uint64_t done, uint64_t total);	/* blocks; may be NULL */
	void *ctx;
};

struct r4_check_result {
	uint64_t problems;	/* reported */
	uint64_t fixed;		/* repaired: written by the committed transaction */
	uint64_t unfixed;	/* problems - fixed */
	uint64_t nodes, items, objects, dirs, entries, extent_blocks;
	uint64_t used_blocks;	/* fixed area + nodes + extent blocks */
	bool journal_pending;	/* committed transactions not yet played */
	bool semantic_skipped;	/* tree damage: bitmap and object checks not run */
};

/*
 * Check the open image: super blocks, journal, every node and item, the
 * bitmap against the blocks in use, stat data against items and names
 * (docs/fsck.md lists each check).  Problems go to o->report as they are
 * found (o may be NULL).  With o->fix the repairs docs/fsck.md calls safe
 * are made in one transaction and committed, unless the tree itself is
 * damaged or the journal holds unplayed transactions (nothing is changed
 * then).  Returns 0 when the check ran to its end, whatever it found
 * (*out says what); -EIO from reading, -ENOMEM, -EBUSY inside a
 * transaction, -EROFS for fix on a read-only db, or the commit's error
 * (then nothing was repaired).  *out is written in every case.
 */
int r4_check(r4_db *db, const struct r4_check_opts *o, struct r4_check_result *out);

/*
 * Open an image for r4_check: as r4_open (read-write when o->fix), except
 * that a volume the status block marks damaged opens read-write too,
 * which is what a repair needs.  When the volume does not open because it
 * is damaged (-EUCLEAN, -EBADMSG), the reason is reported to o->report as
 * one R4_CK_SB_BAD problem naming the block, and the error is returned.
 * log as in r4_open_opts (NULL: quiet).
 */
int r4_check_open(const char *path, const struct r4_check_opts *o,
		  void (*log)(void *ctx, int level, const char *msg), r4_db **out);

/* The class of a code; a short label of a class ("node", "bitmap"). */
enum r4_check_class r4_check_class_of(enum r4_check_code code);
const char *r4_check_class_name(enum r4_check_class cls);

#endif
