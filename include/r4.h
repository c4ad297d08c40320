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

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>
#include <time.h>

/* The version every program says (--version). */
#define R4_VERSION "0.9"

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
/*
 * Room for need elements of size bytes in a growing array: pv points at the
 * array's pointer (a T **, NULL when empty) and cap holds its capacity in
 * elements.  When need > *cap the capacity doubles (from first, when the
 * array is empty) until need fits, and *pv and *cap change; else nothing
 * does.  -ENOMEM when the bytes overflow a size_t or the heap refuses; the
 * array and *cap are then as they were.
 */
int r4_grow(void *pv, size_t *cap, size_t need, size_t size, size_t first);
/*
 * Byte c as an R4L string literal writes it (LANGUAGE.md 2.4): \\ \" \n \t
 * \r, \xHH for the other bytes below 0x20 and 0x7f, itself otherwise (bytes
 * from 0x80 up too: UTF-8 stays readable).  Into out, NUL-terminated;
 * returns its length (1 to 4).  The one quoter of the dumps, explain and
 * the invert text.
 */
size_t r4_quote_byte(char out[static 5], unsigned char c);
/* A size: decimal with an optional K, M, G or T suffix (powers of 1024); 0 or -1. */
int r4_parse_size(const char *s, uint64_t *out);
/* Test hook: make the Nth allocation from now fail (0 = never). */
void r4_heap_fail_at(unsigned long n);

/* dir + "/" + name[0, len) (no second slash after the root); r4_free it,
 * NULL when out of memory. */
char *r4_path_join(const char *dir, const char *name, size_t len);

/* A growable byte buffer, always NUL-terminated after len bytes once it
 * holds any (engine/util.c); zeroed, it is empty.  The functions return 0
 * or -ENOMEM (then b is as it was). */
struct r4_buf {
	uint8_t *p;
	size_t len, cap;
};
void r4_buf_free(struct r4_buf *b);
int r4_buf_reserve(struct r4_buf *b, size_t n);		/* room for n bytes in all */
int r4_buf_set(struct r4_buf *b, const void *p, size_t n);	/* p may point into b */
int r4_buf_add(struct r4_buf *b, const void *p, size_t n);
int r4_buf_printf(struct r4_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int r4_buf_vprintf(struct r4_buf *b, const char *fmt, va_list ap)
	__attribute__((format(printf, 2, 0)));

typedef struct r4_db r4_db;
struct r4_io;

struct r4_open_opts {
	bool rw;			/* read-write; default read-only */
	size_t cache_nodes;		/* clean nodes kept in memory, and dirty ones a
					   transaction holds before it writes them out
					   early; 0 = default: 1/16 of the machine's
					   memory (64 MiB to 1 GiB of nodes) clean, 16384
					   (64 MiB) dirty (r4_info says which) */
	bool seconds_only;		/* new objects without the LARGE_TIMES extension (12
					   bytes less stat data, whole-second times), like the
					   kernel's 32bittimes mount option */
	void (*log)(void *ctx, int level, const char *msg);	/* NULL: quiet */
	void *log_ctx;
	/* For checkers (r4 fsck): */
	bool repair;			/* read-write even when the status block marks the
					   volume damaged */
	bool ignore_journal;		/* read-only only: read the image as it is in place,
					   without the journal's unplayed transactions (which
					   the caller checks itself); -EINVAL with rw */
	/* For a host that mounts the image as a block device itself (r4fuse's
	 * fuseblk mount): */
	bool bdev_no_excl;		/* a block device opened read-write without O_EXCL,
					   so the kernel can claim it for the mount */
	unsigned partition;		/* the volume is in this partition of the image (its
					   number in the MBR or GPT, /dev/sdaN's N); 0: the
					   whole image */
};

/*
 * Open an image file or block device, or an NBD export (path an NBD URI:
 * nbd://HOST[:PORT]/EXPORT, nbd+unix:///EXPORT?socket=PATH; docs/volumes.md),
 * the whole of it or one partition (opts->partition: -ENXIO, said in the
 * log, when there is no partition table or no such partition; the lock
 * below is still the whole file's).  -ENOENT/-EACCES from the OS,
 * -EMEDIUMTYPE when it holds no Reiser4 volume (no master super block
 * magic at 64 KiB, or too small for one), -EUCLEAN for a damaged super
 * block, tree root or journal
 * (the log names what and which block), -EINVAL for an unsupported block
 * size or format, -EROFS for a read-write open of a volume marked damaged.
 * Committed transactions the journal holds unplayed (a crash) are
 * replayed by a read-write open; a read-only open writes nothing and
 * shows them as if replayed.
 *
 * One writer per image: a read-write open takes the image's lock, an
 * open-file-description write lock on the whole file (and O_EXCL on a
 * block device, unless bdev_no_excl), held until r4_close, by whichever
 * processes share the descriptor after a fork.  -EBUSY when another
 * holds it (r4_holder_find says who); nothing was read or written then.
 * A read-only open takes no lock and may run beside a writer.  An NBD
 * export is not locked by r4: its server decides who writes.
 */
int r4_open(const char *path, const struct r4_open_opts *opts, r4_db **out);
/* The same over an I/O backend (tests: memory, fault injection).  The db
 * takes the backend over and closes it in r4_close, also on failure. */
int r4_open_io(struct r4_io *io, const struct r4_open_opts *opts, r4_db **out);
/* Abort any open transaction, play every committed one still held
 * unplayed in place (as r4_sync), release everything. */
void r4_close(r4_db *db);
/* Commit the open transaction, if any; make all committed state durable
 * and play it in place, so the image holds nothing for a replay (what
 * fsck.reiser4 wants; docs/engine.md, "Deferred flush"). */
int r4_sync(r4_db *db);

int r4_begin(r4_db *db);		/* -EBUSY if one is open; -EROFS read-only */
/* -EINVAL without a transaction; stored error if poisoned.  0: durable
 * (its journal header synced); written in place later, when the journal's
 * window plays it, or at r4_sync or r4_close. */
int r4_commit(r4_db *db);
void r4_abort(r4_db *db);
bool r4_in_txn(const r4_db *db);
/* The error that poisoned the open transaction, or 0 (it can still commit). */
int r4_txn_error(const r4_db *db);
/* A number that moves whenever the image changes through db, and only
 * then: a host that keeps what it read (a stat) knows it is still true
 * while the number has not moved. */
uint64_t r4_generation(const r4_db *db);
/*
 * Pin the clock: until r4_clock_unpin, every time the engine stamps (a
 * change's mtime and ctime, an audit record) is the moment of this call,
 * as one R4L unit happens at one moment.  false, changing nothing, when
 * the clock is pinned already (whoever pinned it unpins it).  The tests'
 * fixed clock (R4_CLOCK at open) still wins over a pinned one.
 */
bool r4_clock_pin(r4_db *db);
void r4_clock_unpin(r4_db *db);

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
	uint32_t flags;			/* inode flags (R4_FL_*; r4_file_setflags) */
};

enum {					/* r4_setattr mask */
	R4_SET_MODE = 1 << 0,		/* permission bits only (type kept) */
	R4_SET_UID = 1 << 1,
	R4_SET_GID = 1 << 2,
	R4_SET_SIZE = 1 << 3,
	R4_SET_ATIME = 1 << 4,
	R4_SET_MTIME = 1 << 5,
	R4_SET_CTIME = 1 << 6,
	R4_SET_ATIME_NOW = 1 << 7,	/* the time of the change (utimens UTIME_NOW): what a */
	R4_SET_MTIME_NOW = 1 << 8,	/* writer may set; R4_SET_ATIME/MTIME: the owner */
};

struct r4_setattr {
	unsigned mask;
	uint32_t mode, uid, gid;
	uint64_t size;
	struct timespec atime, mtime, ctime;
};

int r4_stat(r4_db *db, const char *path, struct r4_stat *st);

struct r4_ident {			/* who acts: permissions are checked for this identity */
	uint32_t uid, gid;
	const uint32_t *groups;		/* supplementary groups */
	size_t ngroups;
	uint32_t umask;
};

/*
 * Act as who (copied) in the handle calls (r4_file_*) from now on, until
 * the next r4_act_as; NULL (the default) is a trusted caller, for which
 * nothing is checked and new objects are owned as r4_newobj says.  For an
 * identity the handle calls enforce the POSIX rules of engine/perm.c
 * (docs/semantics.md, "Permissions"): search on the real directories above
 * an object (a directory's "..", the directory another object was looked
 * up or made in), write and search to change entries, the sticky bit,
 * chmod/chown/utimens rules, open modes; new objects belong to who, in a
 * setgid directory to its group, with who's umask; a write, truncate or
 * chown drops set-id bits.  R4_AS_NOCHECK keeps the owners, umask and
 * set-id rules but checks nothing (a host whose kernel checks: FUSE's
 * default_permissions).  The path calls stay trusted; r4_exec acts as its
 * own identity.  0 or -ENOMEM (nothing changed).
 */
enum { R4_AS_NOCHECK = 1 };
int r4_act_as(r4_db *db, const struct r4_ident *who, unsigned flags);

/* May who have want (a mix of 4 read, 2 write, 1 search/execute) on an
 * object with st's owner and mode?  (uid 0 may anything, but execute
 * only with some x bit or on a directory.) */
bool r4_permits(const struct r4_ident *who, const struct r4_stat *st, unsigned want);
/* r4_permits extended by the object's access rules (LANGUAGE.md 6.4):
 * a rule for who's uid decides, else the most permissive rule for one of
 * its groups, else its POSIX access ACL or the mode bits (docs/semantics.md,
 * "POSIX ACLs").  uid 0 is not bound by rules or ACLs. */
bool r4_allows(r4_db *db, const struct r4_ident *who, const struct r4_stat *st, unsigned want);
enum { R4_ACCESS_DENIED, R4_ACCESS_READ, R4_ACCESS_WRITE };
/* Are the object's contents computed text: an aggregate (a directory that
 * is also text, LANGUAGE.md 7) or an invert (a composition, 6.5)? */
bool r4_is_computed(r4_db *db, uint64_t ino);
/*
 * Would the text p[0..n), written to the aggregate at path, be refused
 * whatever is written after it?  -EINVAL when one of its whole lines (up
 * to its last newline) is malformed: the wrong number of fields, a NUL,
 * a name that cannot name a record, a record twice.  0 otherwise, and
 * when path is no aggregate.  Nothing is changed or checked for anyone:
 * writing the whole text (as R4L does) still decides, permissions too.
 * A host that gathers a text to write at close calls it at each write,
 * so that an invalid text fails the write(2) that brought it.
 */
int r4_aggr_check(r4_db *db, const char *path, const void *p, size_t n);

/* Is gid who's group or one of its supplementary groups? */
bool r4_in_group(const struct r4_ident *who, uint32_t gid);
/* r4_stat as who sees it: every directory on the way needs search
 * permission (-EACCES), and the object want (0: none).  who NULL checks
 * nothing; st may be NULL. */
int r4_access(r4_db *db, const char *path, const struct r4_ident *who, unsigned want,
	      struct r4_stat *st);
int r4_setattr(r4_db *db, const char *path, const struct r4_setattr *sa);

/* Create a regular file (-EEXIST), directory, special file (mode gives
 * S_IFIFO/S_IFSOCK/S_IFCHR/S_IFBLK) or symlink, owned by uid:gid. */
int r4_create(r4_db *db, const char *path, uint32_t mode, uint32_t uid, uint32_t gid);
int r4_mkdir(r4_db *db, const char *path, uint32_t mode, uint32_t uid, uint32_t gid);
int r4_mknod(r4_db *db, const char *path, uint32_t mode, uint64_t rdev, uint32_t uid,
	     uint32_t gid);
/*
 * The target (not empty: -ENOENT) lives in the stat data, so it is refused
 * with -ENAMETOOLONG, as by the kernel's Reiser4, when the stat data
 * outgrows one item of a node: on 4 KiB blocks a target of over 3,973
 * bytes with node40, 3,969 with node41 (12 more each with seconds_only).
 * Never more than R4_SYMLINK_MAX, what symlink(2) passes (PATH_MAX less
 * its NUL), which only larger blocks than r4 reads would reach.
 */
#define R4_SYMLINK_MAX 4095
int r4_symlink(r4_db *db, const char *target, const char *path, uint32_t uid, uint32_t gid);
/* Copies at most n bytes of the target (not NUL-terminated) and its full length. */
int r4_readlink(r4_db *db, const char *path, char *buf, size_t n, size_t *len);

int r4_link(r4_db *db, const char *oldpath, const char *newpath);
int r4_unlink(r4_db *db, const char *path);	/* -EISDIR for a directory */
int r4_rmdir(r4_db *db, const char *path);	/* -ENOTEMPTY, -ENOTDIR, -EBUSY for "/" */

enum { R4_RENAME_NOREPLACE = 1, R4_RENAME_EXCHANGE = 2, R4_RENAME_WHITEOUT = 4 };
/* rename(2) semantics: over a file or an empty directory; -EINVAL into its
 * own subtree; flags as renameat2(2).  R4_RENAME_WHITEOUT leaves at the
 * old name, in the same operation, a whiteout: a character device 0:0
 * with mode 0, owned as a new object of the identity r4_act_as set (else
 * 0:0); with R4_RENAME_EXCHANGE -EINVAL.  It is no removal: it may not
 * use the reserve kept for removals (-ENOSPC, nothing changed). */
int r4_rename(r4_db *db, const char *from, const char *to, unsigned flags);

/* Read up to len bytes at off (holes read as zeros); *got < len at EOF. */
int r4_read(r4_db *db, const char *path, uint64_t off, void *buf, size_t len, size_t *got);
/* Write len bytes at off, extending the file (holes stay sparse). */
int r4_write(r4_db *db, const char *path, uint64_t off, const void *buf, size_t len);
int r4_truncate(r4_db *db, const char *path, uint64_t size);

/*
 * Directory listing with a cursor that survives changes between calls:
 * entries are delivered in key order after the cursor; each delivered
 * entry advances it, before the callback runs (so the callback may
 * r4_dirpos_tell it).  The callback returns nonzero to stop (that entry
 * counts as not delivered, and the cursor goes back before it).  "." and
 * ".." come first.  The callback must not change the image (collect,
 * then act).
 */
struct r4_dirpos {
	uint64_t k[4];			/* key of the last delivered entry */
	uint32_t dup;			/* entries with that key already delivered */
	bool started;
};
typedef int (*r4_dirent_fn)(void *ctx, const char *name, size_t len, uint64_t ino,
			    uint32_t type /* S_IF* */);
int r4_readdir(r4_db *db, const char *path, struct r4_dirpos *pos, r4_dirent_fn fn, void *ctx);
/*
 * r4_readdir with each entry's attributes, taken from the object its entry
 * points at as the directory is walked (no path resolved per name): st is
 * what r4_stat of PATH/NAME gives (ino is st->ino).  With
 * R4_READDIR_NAMES no object is read and st is NULL: names and object ids
 * alone, the cheapest listing (an entry pointing nowhere goes unnoticed).
 * Cursor, order, stopping and errors as r4_readdir's.  A path call, so
 * trusted: nothing is checked for anyone, as for r4_stat and r4_readdir
 * (a host acting for a user checks search and read permission on PATH
 * first, e.g. with r4_access: then every entry's attributes are its to
 * see, as stat(2) of each would allow).
 */
enum { R4_READDIR_NAMES = 1 };
typedef int (*r4_dirstat_fn)(void *ctx, const char *name, size_t len, uint64_t ino,
			     const struct r4_stat *st /* NULL with R4_READDIR_NAMES */);
int r4_readdir_stat(r4_db *db, const char *path, struct r4_dirpos *pos, unsigned flags,
		    r4_dirstat_fn fn, void *ctx);
/*
 * Where a cursor stands as one number (a readdir offset, telldir): 0 at
 * the start, else 1 to 2^63 - 1, a digest of the key of the entry it
 * stands after, so the same for that entry in every listing of the
 * directory while the entry exists.  (Entries that share a key, which
 * only a degenerate hash makes, are told apart by their place among
 * them, which removing one of them moves.)  r4_file_dirseek turns it
 * back.
 */
uint64_t r4_dirpos_tell(const struct r4_dirpos *pos);

struct r4_statfs {
	uint32_t bsize;
	uint64_t blocks;
	uint64_t bfree;			/* free once what is pending is committed */
	uint64_t bavail;		/* what new data can get once what is pending is
					   committed: less the room commit needs and the
					   reserve kept for removals (docs/engine.md,
					   "Space") */
	uint64_t files;			/* objects, plus ffree */
	uint64_t ffree;			/* objects that could still be made: bavail (no
					   preallocated slots; each block holds one) */
	uint32_t namemax;
};
int r4_statfs(r4_db *db, struct r4_statfs *out);

/*
 * Open files and directories: a handle on an object by identity, not by
 * name, so renames do not affect it.  Unlinking the last name of an object a handle holds
 * leaves it readable and writable through the handle (nlink 0); the last
 * r4_file_close removes it.  On disk a safe-link records such an orphan
 * (committed with the unlink), and after a crash the next read-write
 * r4_open removes it.  Changes through a handle follow the transaction
 * rules of the path calls, and write the audit records of an audited
 * object or directory (LANGUAGE.md 6.4; docs/semantics.md, "Audit") as
 * the identity r4_act_as set, in the same operation: a log that is gone
 * refuses the change with -ENOENT, a log the change would destroy with
 * -EBUSY, and room for the records with -ENOSPC, each before it changes
 * anything.  Close every handle before r4_close.
 */
typedef struct r4_file r4_file;
int r4_file_open(r4_db *db, const char *path, r4_file **out);
/* One more (strong) handle on f's object, found the same way; not opened
 * (r4_file_reopen), whatever f was. */
int r4_file_dup(r4_file *f, r4_file **out);
/* Releases f whatever happens; an error is the orphan's removal failing
 * (the next read-write open finishes it). */
int r4_file_close(r4_file *f);
/* Make f weak: it still names its object but no longer keeps it, so
 * removing the last name destroys the object at once, and later calls on
 * f answer -ESTALE (a host's cache of objects it has only looked up).  If
 * f was the last handle on an orphan, the orphan goes, as at close. */
int r4_file_weaken(r4_file *f);
uint64_t r4_file_id(const r4_file *f);	/* the object id (st_ino) */
int r4_file_stat(r4_file *f, struct r4_stat *st);
int r4_file_read(r4_file *f, uint64_t off, void *buf, size_t len, size_t *got);
/* lseek(2)'s SEEK_DATA and SEEK_HOLE (whence) on a regular file (-EINVAL
 * for others): *out = where the first data, or hole, at or after off
 * starts.  Data is what the body's items hold (tails, extent units other
 * than holes, data written and not yet committed); the end of the file
 * is a hole; a compressed (ccreg40) file is all data.  -ENXIO for off at
 * or past the end, and for SEEK_DATA in the last hole, as Linux. */
int r4_file_seek(r4_file *f, uint64_t off, int whence, uint64_t *out);
/* r4_readdir on a held directory (one removed meanwhile lists nothing;
 * while a handle holds it, r4_file_stat of any handle on it gives its
 * stat when removed, nlink 0). */
int r4_file_readdir(r4_file *f, struct r4_dirpos *pos, r4_dirent_fn fn, void *ctx);
/* *pos = the cursor of directory f whose r4_dirpos_tell is tell (0: the
 * start), found by listing f; -EINVAL when no entry of f gives it (the
 * entry went). */
int r4_file_dirseek(r4_file *f, uint64_t tell, struct r4_dirpos *pos);
int r4_file_write(r4_file *f, uint64_t off, const void *buf, size_t len);
/* A write at the end as it is now (O_APPEND), audited as an append. */
int r4_file_append(r4_file *f, const void *buf, size_t len);
int r4_file_setattr(r4_file *f, const struct r4_setattr *sa);
/*
 * fallocate(2) of [off, off + len) (Linux's mode values).  r4 keeps no
 * preallocated blocks, so it writes zeros where blocks must come: mode 0
 * into the range's holes and past the end, growing the size to off + len
 * (a tail or compressed body only grows); R4_FALLOC_ZERO_RANGE over all of
 * the range.  With R4_FALLOC_KEEP_SIZE the size stays, and a range past
 * it is -EOPNOTSUPP (r4 cannot hold blocks past the end).
 * R4_FALLOC_PUNCH_HOLE, only with R4_FALLOC_KEEP_SIZE (alone
 * -EOPNOTSUPP, as Linux), makes the range read as zeros, the size kept
 * and the part past it ignored: an extent body's whole blocks inside
 * become a hole and are freed, its edge blocks are zeroed in place; a
 * tail body, which has no holes, gets zeros; a compressed body loses the
 * clusters inside (holes) and its edge clusters are rewritten.  A punch is
 * one operation, done whole or refused with -ENOSPC having changed
 * nothing; a removal, it may use the reserve.  R4_FALLOC_COLLAPSE_RANGE
 * removes the range and moves what follows down (the size shrinks by
 * len), R4_FALLOC_INSERT_RANGE puts a hole of len bytes in at off and
 * moves what follows up (the size grows by len): extent bodies only
 * (-EOPNOTSUPP for tails and compressed bodies), off and len multiples
 * of the block size and the range inside the file (a collapse must end
 * before the end, an insert begin before it), else -EINVAL; whole blocks
 * move, none is copied; one operation each, a collapse a removal.  With
 * R4_FALLOC_KEEP_SIZE, and any other mode or combination, -EOPNOTSUPP
 * (modes are exclusive, as Linux 6.12's vfs_fallocate says), after
 * -EINVAL for len 0.  Checked as a write
 * (-EBADF, -EACCES, -EISDIR, -EINVAL for other objects, -EFBIG past
 * 2^62), it drops set-id bits and stamps mtime and ctime as a write does,
 * and is audited as one write of len bytes.  Space is checked before any
 * change: a volume that cannot hold it refuses it whole with -ENOSPC.
 * Filling, at most 16 MiB (a compressed file: 1 MiB) is written per
 * operation; a longer range is
 * several (the memory bound runs between them), and one failing after the
 * space check (an I/O error; -ENOSPC where a compressed file's clusters
 * of zeros do not compress) leaves those before it done.
 */
enum {
	R4_FALLOC_KEEP_SIZE = 0x01,
	R4_FALLOC_PUNCH_HOLE = 0x02,
	R4_FALLOC_COLLAPSE_RANGE = 0x08,
	R4_FALLOC_ZERO_RANGE = 0x10,
	R4_FALLOC_INSERT_RANGE = 0x20,
};
int r4_file_fallocate(r4_file *f, unsigned mode, uint64_t off, uint64_t len);
int r4_file_readlink(r4_file *f, char *buf, size_t n, size_t *len);
/*
 * Inode flags (chattr(1), lsattr(1); docs/semantics.md, "Inode flags"), in
 * Linux's FS_IOC_GETFLAGS values; r4_stat.flags has an object's.  Reiser4
 * stores R4_FL_SYNC, _NOATIME, _APPEND, _IMMUTABLE and _DIRSYNC, in the
 * stat data's flags extension (added the first time one is set, then
 * kept, as the kernel keeps it); others, R4_FL_NODUMP too, are
 * -EOPNOTSUPP, and _DIRSYNC on a non-directory is dropped (as ext4).
 * r4_file_setflags sets the bits of mask to those of flags, for the
 * acting identity: its owner (or root) only (-EPERM); setting or clearing
 * _IMMUTABLE or _APPEND root only (CAP_LINUX_IMMUTABLE: -EPERM); while an
 * object stays immutable nothing else changes (-EPERM).  Only regular
 * files and directories have flags (-ENOTTY).  A change is one operation
 * that changes ctime and is audited as `setattr` 0; a full volume refuses
 * it before it changes anything (-ENOSPC).
 * What the flags refuse binds every caller, trusted and root too (-EPERM,
 * as Linux): an immutable object is not written, truncated, fallocated,
 * chmod/chown/utimens'd, opened for writing, linked, unlinked or renamed,
 * its extended attributes (and R4L's ..acl, ..audit, ..plugin) not set or
 * removed, and an immutable directory has no entry added or removed; an
 * append-only object is written only at its end (opened for writing with
 * O_APPEND only), neither truncated nor chmod/chown'd nor given explicit
 * times (only "now"), its extended attributes stay, it is not linked,
 * unlinked or renamed, and an append-only directory has entries added,
 * never removed.  R4L's changes (the calls by path) obey them too; SYNC,
 * NOATIME and DIRSYNC are kept and reported only.
 */
enum {
	R4_FL_SYNC = 0x8,		/* FS_SYNC_FL (chattr +S) */
	R4_FL_IMMUTABLE = 0x10,		/* FS_IMMUTABLE_FL (+i) */
	R4_FL_APPEND = 0x20,		/* FS_APPEND_FL (+a) */
	R4_FL_NODUMP = 0x40,		/* FS_NODUMP_FL (+d): not stored */
	R4_FL_NOATIME = 0x80,		/* FS_NOATIME_FL (+A) */
	R4_FL_DIRSYNC = 0x10000,	/* FS_DIRSYNC_FL (+D) */
};
int r4_file_setflags(r4_file *f, uint32_t flags, uint32_t mask);
/*
 * open(2) of f's object with flags (O_ACCMODE, O_TRUNC, O_APPEND,
 * R4_O_EXEC) for the acting identity: what its inode flags refuse
 * (-EPERM, above), the way to it (-EACCES), read and/or write as
 * asked, O_TRUNC needs write and empties the file in this call; a
 * directory opens read-only (-EISDIR).  *out: a strong handle that
 * remembers it was opened, so reads, writes and stats through it ask
 * no permission more (writes need a mode that writes: -EBADF; the inode
 * flags are asked at each change).
 */
int r4_file_reopen(r4_file *f, int flags, r4_file **out);
/* An open for execve(2): execute permission instead of read (the
 * kernel's __FMODE_EXEC, which FUSE passes in an OPEN's flags). */
#define R4_O_EXEC 040
/* access(2): may the acting identity reach f and have want (4, 2, 1) on it? */
int r4_file_access(r4_file *f, unsigned want);
/*
 * Were changes made through handles on f's object lost: done in a
 * transaction that was aborted (a host's group dropped, a commit that
 * failed)?  -EIO once per handle and loss, as the kernel's errseq reports
 * a lost writeback once per open file description (with report; without,
 * it only looks).  A handle sees the losses after it was opened.  A host
 * asks at fsync(2) (after committing) and close(2).
 */
int r4_file_error(r4_file *f, bool report);

/*
 * Extended attributes of an object, by handle (docs/semantics.md,
 * "Extended attributes"), with getxattr(2)'s contract: names in the
 * user., trusted. and security. namespaces (at most R4_XATTR_NAME_MAX
 * bytes: -ERANGE; none other can be stored: -EOPNOTSUPP when set, -ENODATA
 * when read or removed; "user." alone -EINVAL), values of at most
 * R4_XATTR_SIZE_MAX bytes (-E2BIG).  The names user.r4.* are r4's pseudo
 * files (a host serves them: r4_pseudo_read) and are never stored (-EPERM
 * when set).  The POSIX ACLs system.posix_acl_access and _default are
 * stored too, in Linux's value format, with Linux's rules (validity
 * -EINVAL, version -EOPNOTSUPP, the owner's -EPERM, a default ACL only on
 * a directory -EACCES; an empty value or a removal of none: removed, no
 * error; docs/semantics.md, "POSIX ACLs").  An object holds at most R4_XATTR_TOTAL_MAX bytes of names
 * and values, and names that list in R4_XATTR_LIST_MAX bytes (-ENOSPC).
 * The permission rules are perm.c's, as Linux's xattr_permission for the
 * identity r4_act_as set: user.* only on regular files and directories
 * (-EPERM to set, -ENODATA to read), read and write permission (-EACCES),
 * in a sticky directory set by its owner only (-EPERM); trusted.* root's
 * alone (others: -EPERM to set, -ENODATA to read, never listed);
 * security.* read by anyone, set by root.  A set or remove is one
 * operation that changes ctime and is audited as `setattr` 0; a full
 * volume refuses it before it changes anything (-ENOSPC).
 *   get:    the value into buf[0, size); *len its size, also when size is
 *           0 (nothing copied) or too small (-ERANGE); -ENODATA: none.
 *   set:    flags R4_XATTR_CREATE (-EEXIST when it exists) or
 *           R4_XATTR_REPLACE (-ENODATA when it does not); other bits -EINVAL.
 *   list:   the names the identity may see, each NUL-terminated, into
 *           buf[0, size); *len as for get.
 *   remove: -ENODATA when there is none.
 * By handle only (what the bridge has): a host with paths opens a handle
 * with r4_file_open (as r4 import does).
 */
#define R4_XATTR_NAME_MAX 255		/* XATTR_NAME_MAX */
#define R4_XATTR_SIZE_MAX 65536		/* XATTR_SIZE_MAX */
#define R4_XATTR_LIST_MAX 65536		/* XATTR_LIST_MAX: listxattr(2)'s largest answer */
#define R4_XATTR_TOTAL_MAX (256 << 10)	/* names and values of one object */
enum { R4_XATTR_CREATE = 1, R4_XATTR_REPLACE = 2 };	/* as XATTR_CREATE, XATTR_REPLACE */
int r4_file_getxattr(r4_file *f, const char *name, void *buf, size_t size, size_t *len);
int r4_file_setxattr(r4_file *f, const char *name, const void *value, size_t size, int flags);
int r4_file_listxattr(r4_file *f, char *buf, size_t size, size_t *len);
int r4_file_removexattr(r4_file *f, const char *name);

/*
 * The namespace by handle, for hosts that keep objects rather than paths
 * (a FUSE low-level bridge): a directory handle and one name
 * (name[0..len), no '/'), with the rules of the path calls.
 */
struct r4_newobj {
	uint32_t mode;			/* S_IFREG, S_IFDIR, S_IFLNK, S_IFIFO, ... and bits */
	uint32_t uid, gid;
	uint64_t rdev;			/* S_IFCHR, S_IFBLK */
	const char *target;		/* S_IFLNK */
};
int r4_file_root(r4_db *db, r4_file **out);
/*
 * A (strong) handle on the object whose id is id (r4_file_id, st_ino), for
 * a host that kept only the id: a file handle the kernel hands back after
 * it forgot the inode (FUSE's export support).  It was found by no name,
 * so the way to a file is not checked through it (a directory's, its ".."
 * chain, is).
 * Slow: an object's key holds the directory it was made in, which its id
 * does not tell, so every directory objects were made in is looked into
 * (one tree lookup each, and each of their stat data).  -ESTALE: none.
 */
int r4_file_find(r4_db *db, uint64_t id, r4_file **out);
int r4_file_lookup(r4_file *dir, const char *name, size_t len, r4_file **out);
/* out may be NULL: no handle on the new object; else one opened for
 * reading and writing, as open(2) with O_CREAT gives its creator */
int r4_file_make(r4_file *dir, const char *name, size_t len, const struct r4_newobj *n,
		 r4_file **out);
int r4_file_link(r4_file *f, r4_file *dir, const char *name, size_t len);
int r4_file_remove(r4_file *dir, const char *name, size_t len, bool want_dir);
int r4_file_rename(r4_file *fdir, const char *fname, size_t flen, r4_file *tdir,
		   const char *tname, size_t tlen, unsigned flags);

/* ---- transaction plans (LANGUAGE.md section 9; docs/plan.md) ----
 *
 * A plan is what the command language compiles to and the executor runs:
 * a numbered list of steps over handle registers (h0, h1, ...: objects)
 * and value registers (v0, v1, ...: bytes).  A value operand is a
 * register (>= 0), a constant of the plan (R4_PLAN_CONST_OF(k) <= -2) or
 * none (-1).  Jumps go forward only.  Each step keeps the byte range of
 * the source it came from, for explain and for run-time diagnostics.
 */
enum r4_plan_op {			/* order matters: the names in plan.c */
	R4_PLAN_BEGIN,			/* a unit starts (flags R4_PLAN_UNIT) or a tw group is marked; str: label */
	R4_PLAN_COMMIT,			/* ... and ends */
	R4_PLAN_LOOKUP,			/* h[a] = path str, from h[b] (-1: the current directory); flags R4_LOOK_* */
	R4_PLAN_DEREF,			/* h[a] = the path in v[b] (section 5.7) */
	R4_PLAN_READ,			/* v[a] = contents of h[b] */
	R4_PLAN_CONST,			/* v[a] = v[b] (a constant) */
	R4_PLAN_CONCAT,			/* v[a] = v[b] + v[c] */
	R4_PLAN_TEST,			/* v[a] = test flags (R4_TEST_*) of v[b] (, v[c]) or of h[b] */
	R4_PLAN_JUMP,			/* to step a */
	R4_PLAN_JUMPF,			/* to step b if v[a] is empty */
	R4_PLAN_JUMPT,			/* to step b if v[a] is not empty */
	R4_PLAN_WRITE,			/* replace the contents of h[a] by v[b] */
	R4_PLAN_APPEND,			/* append v[b] to h[a] */
	R4_PLAN_SYMLINK,		/* make h[a] (a missing name or a symlink) a symlink to v[b] */
	R4_PLAN_CREATE,			/* h[a] = new entry v[c] in directory h[b]; perm v[d], target v[e];
					   flags: R4_NEW_* type | format << 8 */
	R4_PLAN_LINK,			/* h[a] = new entry v[c] in directory h[b], a hard link to h[d] */
	R4_PLAN_UNLINK,			/* remove entry v[b] of directory h[a] */
	R4_PLAN_RENAME,			/* rename h[a] within its directory to v[b] */
	R4_PLAN_SETATTR,		/* write v[b] to pseudo file flags (R4_PSEUDO_*, maybe
					   | R4_SETATTR_APPEND) of h[a]; str: plugin type.  Like
					   RENAME and UNLINK, it leaves h[a] naming that pseudo
					   file: the assignment's value */
	R4_PLAN_WINDOW,			/* h[a] = window of h[b]: offset v[c], length v[d]; flags R4_WIN_* */
	R4_PLAN_RULE,			/* access rule on h[a]: id v[b]; flags R4_RULE_* */
	R4_PLAN_AUDIT,			/* audit h[a] into the log h[b] */
	R4_PLAN_SCOPE,			/* the current directory becomes h[a] */
	R4_PLAN_ENDSCOPE,		/* ... and is restored */
	R4_PLAN_GROUP,			/* an unordered group of a members: conflicts are tracked */
	R4_PLAN_MEMBER,			/* the next member starts */
	R4_PLAN_ENDGROUP,
	R4_PLAN_TRY,			/* named result b (str: its name) starts; on failure: undo to here,
					   bind the error, go to step a (its ENDTRY) */
	R4_PLAN_ENDTRY,			/* named result a ends */
	R4_PLAN_RESULT,			/* bind assign_result/assign_length: under h[a] (pseudo file flags)
					   when b is -1, else as named result b */
	R4_PLAN_RESVAL,			/* v[a] = child flags (0 assign_result, 1 assign_length) of named result b */
	R4_PLAN_YIELD,			/* hand a statement value to the host: h[a] (flags R4_YIELD_H) or v[a] */
	R4_PLAN_NOPS
};

#define R4_PLAN_CONST_OF(k) (-2 - (int32_t)(k))
#define R4_PLAN_IS_CONST(x) ((x) <= -2)
#define R4_PLAN_CONST_INDEX(x) ((size_t)(-2 - (x)))

enum {					/* R4_PLAN_BEGIN / COMMIT flags */
	R4_PLAN_UNIT = 1,		/* a unit (a transaction), not a tw mark inside one */
};
enum {					/* R4_PLAN_LOOKUP flags */
	R4_LOOK_CREATE = 1 << 0,	/* a missing last name becomes a regular file (section 5.2) */
	R4_LOOK_MISSING = 1 << 1,	/* a missing last name is a handle on (directory, name) */
	R4_LOOK_NOFOLLOW = 1 << 2,	/* a symlink as last name is itself */
	R4_LOOK_EXIST = 1 << 3,		/* ENOENT and ENOTDIR give an empty handle, not a failure */
};
enum {					/* R4_PLAN_TEST flags */
	R4_TEST_EQ, R4_TEST_NE, R4_TEST_LT, R4_TEST_GT, R4_TEST_LE, R4_TEST_GE,
	R4_TEST_NOT,			/* v[b] is empty */
	R4_TEST_TRUE,			/* v[b] is not empty */
	R4_TEST_EXIST,			/* h[b] resolved */
};
enum { R4_SETATTR_APPEND = 1 << 16 };	/* SETATTR of ..body with '<<-' */
enum {					/* R4_PLAN_YIELD flags */
	R4_YIELD_H = 1,
};
enum r4_pseudo {			/* pseudo files (LANGUAGE.md section 6) */
	R4_PSEUDO_NONE, R4_PSEUDO_UID, R4_PSEUDO_GID, R4_PSEUDO_MODE, R4_PSEUDO_TYPE,
	R4_PSEUDO_SIZE, R4_PSEUDO_NLINK, R4_PSEUDO_ATIME, R4_PSEUDO_MTIME, R4_PSEUDO_CTIME,
	R4_PSEUDO_OID, R4_PSEUDO_KEY, R4_PSEUDO_PLUGIN, R4_PSEUDO_LIST, R4_PSEUDO_BODY,
	R4_PSEUDO_NAME, R4_PSEUDO_UNLINK, R4_PSEUDO_ACL, R4_PSEUDO_AUDIT, R4_PSEUDO_INVERT,
	R4_PSEUDO_NEW, R4_PSEUDO_LINK, R4_PSEUDO_RANGE,
	R4_PSEUDO_COUNT
};
enum {					/* what a pseudo file allows */
	R4_PSF_READ = 1 << 0,
	R4_PSF_WRITE = 1 << 1,
	R4_PSF_BLOCK = 1 << 2,		/* takes a parameter block */
	R4_PSF_ONLY_BLOCK = 1 << 3,	/* ... and is nothing without one */
	R4_PSF_OCTAL = 1 << 4,		/* written as octal text: a NUMBER literal is a type error */
	R4_PSF_SUBTYPE = 1 << 5,	/* has children: ..plugin/<type> */
	R4_PSF_LEAF_BLOCK = 1 << 6,	/* its block may not be followed or assigned to */
};
enum { R4_NEW_REGULAR, R4_NEW_DIRECTORY, R4_NEW_SYMLINK, R4_NEW_AGGREGATE, R4_NEW_INVERT };
enum { R4_FORMAT_PASSWD, R4_FORMAT_COLON };
enum { R4_WIN_SHIFT, R4_WIN_ZERO, R4_WIN_OVERLAY };
enum {					/* R4_PLAN_RULE flags */
	R4_RULE_GID = 1 << 0,		/* the id is a gid (else a uid) */
	R4_RULE_DENIED = 0 << 1, R4_RULE_ACCESS_READ = 1 << 1, R4_RULE_ACCESS_WRITE = 2 << 1,
};

/* The words of those constants, indexed by value, NULL-terminated: what a
 * parameter block spells (type <- directory) and explain prints. */
extern const char *const r4_new_types[];	/* R4_NEW_* */
extern const char *const r4_formats[];		/* R4_FORMAT_* */
extern const char *const r4_win_modes[];	/* R4_WIN_* */
extern const char *const r4_accesses[];		/* R4_RULE_ACCESS_* >> 1 */

struct r4_pseudo_info {
	const char *name;		/* "..mode" */
	enum r4_pseudo id;
	unsigned flags;			/* R4_PSF_* */
};
/* The pseudo file spelled name[0..len) (with its leading ".."), or NULL.
 * "..owner" is "..uid". */
const struct r4_pseudo_info *r4_pseudo_lookup(const char *name, size_t len);
const char *r4_pseudo_name(enum r4_pseudo id);	/* "..uid", or "?" */
/* The word ..type gives an object of mode that is no aggregate, record or
 * invert: "regular", "directory", "symlink", "fifo", "socket", "chardev",
 * "blockdev" ("unknown" else). */
const char *r4_type_name(uint32_t mode);
/* The table's entry i, aliases included, in LANGUAGE.md's order; NULL past
 * its end: what ..list names and r4sh completes. */
const struct r4_pseudo_info *r4_pseudo_at(size_t i);

/*
 * Reading and writing pseudo files (engine/pseudo.c): what R4L's
 * PATH/..mode means, for a host that reaches them without the language
 * (the FUSE bridge's f/..mode, its xattrs).  path names the object, by the
 * rules of the path calls (no symlink followed); id is its pseudo file,
 * sub the member of ..plugin/<sub> (else NULL).  Both act for the identity
 * r4_act_as set, as R4L acts for its run's: search on the way (-EACCES),
 * read or write on the object where the pseudo file asks it, the owner's
 * or root's for chmod, chown, ..acl and ..audit (-EPERM).  Values are
 * LANGUAGE.md 6.1's text (-EINVAL when malformed); reading a write-only
 * pseudo file or writing a read-only one is -EACCES, a ..plugin member the
 * object lacks -ENOENT; ..new, ..link and ..range exist only in R4L
 * (-EINVAL).  why, when not NULL, gets the words R4L's diagnostic would
 * give before the error's name ("cannot read '/f/..unlink': it is
 * write-only"), or "" when there are none.
 *
 * r4_pseudo_read: the text into *out (NUL-terminated, the caller's to
 * r4_free) and *len.  A computed object's ..body (an aggregate's or
 * invert's text) reads each of an invert's file parts as R4L does: a
 * part's path is walked as one made at run time (symlinks followed, real
 * entries before pseudo names), so both give the same text.
 *
 * r4_pseudo_write: p[0, n) written as R4L's "path/..mode <- TEXT" is, in
 * the open transaction or, without one, in its own (committed, or undone
 * on failure).  *changed (may be NULL): whether it changed the image, for
 * a host that caches what it shows (the bridge: invalidate the kernel's
 * caches when true); the change is audited as R4L audits it.
 */
struct r4_why {
	char msg[600];
};
int r4_pseudo_read(r4_db *db, const char *path, enum r4_pseudo id, const char *sub, char **out,
		   size_t *len, struct r4_why *why);
int r4_pseudo_write(r4_db *db, const char *path, enum r4_pseudo id, const char *sub,
		    const void *p, size_t n, bool *changed, struct r4_why *why);

/*
 * The same pseudo files as R4L's executor reaches them: for its run's
 * identity, with the object it already holds (path and stat), and with
 * its own way to reach an invert's file parts.  r4_pseudo_read and
 * r4_pseudo_write above are these calls for the identity r4_act_as set.
 *
 * "The object's contents" (section 5.1: a file's data, a symlink's text,
 * an aggregate's or invert's text) is pseudo file R4_PSEUDO_NONE: what a
 * READ or WRITE of the object itself does.  Every call fills c->why
 * (when it is not NULL and still empty) with the words of a refusal it
 * makes itself ("cannot read '/a/..invert'"); the caller adds the
 * error's name.  They act in the open transaction.  A call that changes
 * the image first tells c->changes what it will change (all but
 * r4_pseudo_make, below).
 */
struct r4_pseudo_ctx {
	const struct r4_ident *who;	/* whose permissions are checked; NULL: none */
	const struct r4_ident *actor;	/* owns new objects, loses set-id bits, is the
					   audit records' uid (NULL: root) */
	struct r4_why *why;		/* the words of a failure, or NULL */
	/*
	 * An invert's file part at path, as who reaches it (section 6.5):
	 * p NULL reads its contents into *out (quiet: a failure fails
	 * nothing, it only says the part cannot be compared); else writes
	 * p[0, n) to it as "path <- p" does.  depth: the inverts being read,
	 * for the reads the part leads to.  NULL: the engine walks it with
	 * r4_ns_walk as the executor walks a path made at run time.
	 */
	int (*part)(void *arg, unsigned depth, const char *path, const uint8_t *p, size_t n,
		    bool quiet, struct r4_buf *out);
	/*
	 * Before a change, each unit of state it will change, for the
	 * executor's ',' groups (section 5.5): the contents (what 0) or
	 * pseudo file what (R4_PSEUDO_*) of object ino, or (what -1) the
	 * entry path in directory ino; path also names the unit in a
	 * diagnostic.  A failure it returns is the call's, made before
	 * anything changed.  NULL: none asked.
	 */
	int (*changes)(void *arg, uint64_t ino, int what, const char *path);
	void *arg;
	unsigned depth;			/* inverts being read, one inside another */
	uint64_t stored;		/* out: bytes a write stored (assign_length) */
	char *moved;			/* out: the object's path after a write renamed it
					   (..name, a record's name field); the caller's */
};

/* Pseudo file id (sub: ..plugin/<sub>) of the object st at path: its text
 * into b (replaced). */
int r4_pseudo_get(r4_db *db, struct r4_pseudo_ctx *c, const char *path,
		  const struct r4_stat *st, enum r4_pseudo id, const char *sub, struct r4_buf *b);
/* Write p[0, n) to it (append: '<<-', only the contents); dir: the
 * directory the object was found in (0: not known).  c->changes hears of
 * the contents and ..size a write of the contents changes, a renamed
 * entry's old and new names, an unlinked entry and its object. */
int r4_pseudo_put(r4_db *db, struct r4_pseudo_ctx *c, const char *path,
		  const struct r4_stat *st, uint64_t dir, enum r4_pseudo id, const char *sub,
		  const uint8_t *p, size_t n, bool append);

/* A ..range window (section 6.3) of a regular file or an aggregate. */
struct r4_window {
	uint64_t off, len;
	bool len_set;			/* else: to the end */
	unsigned mode;			/* R4_WIN_* */
};
/* F/..range/(offset <- O, length <- L, mode <- M): *w, the window of the
 * object st at path that O and L say (decimal text from 0; NULL: not
 * given, from 0 and to the end); mode is R4_WIN_*.  -EISDIR for a
 * directory that is no aggregate, -EINVAL for what is no file. */
int r4_pseudo_window(r4_db *db, struct r4_pseudo_ctx *c, const char *path,
		     const struct r4_stat *st, const uint8_t *off, size_t offn, const uint8_t *len,
		     size_t lenn, unsigned mode, struct r4_window *w);
int r4_pseudo_window_get(r4_db *db, struct r4_pseudo_ctx *c, const char *path,
			 const struct r4_stat *st, const struct r4_window *w, struct r4_buf *b);
int r4_pseudo_window_put(r4_db *db, struct r4_pseudo_ctx *c, const char *path,
			 const struct r4_stat *st, const struct r4_window *w, const uint8_t *p,
			 size_t n);

/* F/..acl/(uid|gid <- id, access <- R4_ACCESS_*): add or replace that
 * rule; id[0, n) is decimal text. */
int r4_pseudo_rule(r4_db *db, struct r4_pseudo_ctx *c, const char *path,
		   const struct r4_stat *st, const uint8_t *id, size_t n, bool gid,
		   unsigned access);
/* F/..audit/(log <- L): audit F into the log at path log. */
int r4_pseudo_audit_into(r4_db *db, struct r4_pseudo_ctx *c, const char *path,
			 const struct r4_stat *st, const char *log);

/*
 * A missing name written to (section 5.2), and what the calls below make:
 * make path, a new R4_NEW_* object (format: an aggregate's R4_FORMAT_*)
 * with permission bits perm less the umask, owned as perm.c says, in the
 * directory d (NULL: stat it); a symlink's target tgt[0, tlen); a regular
 * file's first contents tgt[0, tlen) (NULL: none), written as r4_pseudo_put
 * writes them (c->stored, c->moved), in the same call: a file that holds
 * them in tails gets its stat data stored once.  *st: the new object.  It
 * tells c->changes nothing of the entry: its caller names it.
 */
int r4_pseudo_make(r4_db *db, struct r4_pseudo_ctx *c, const char *path,
		   const struct r4_stat *d, unsigned type, unsigned format, uint32_t perm,
		   const uint8_t *tgt, size_t tlen, struct r4_stat *st);

/* ..new's parameter block (section 6.2), as R4L's plan holds it. */
struct r4_new {
	unsigned type, format;			/* R4_NEW_*, an aggregate's R4_FORMAT_* */
	const uint8_t *name, *perm, *target;	/* text; perm NULL: not given */
	size_t name_len, perm_len, target_len;
};
/*
 * D/..new/(name <- N, ...): the entry N (one trailing LF ignored; not ".",
 * ".." or a pseudo name) in the directory d at dir, a new object as
 * r4_pseudo_make makes it, with permission bits perm (1 to 4 octal digits;
 * not given: 0666 for a regular file or invert, else 0777); -EEXIST when
 * the name is taken.  *path: the new entry's path (NULL before the name is
 * checked; the caller's to r4_free, whether or not the call made it), *st:
 * the new object.
 */
int r4_pseudo_new(r4_db *db, struct r4_pseudo_ctx *c, const char *dir,
		  const struct r4_stat *d, const struct r4_new *nw, char **path, struct r4_stat *st);
/* LINK (section 5.3): the entry name[0, n) (as ..new's) in the directory d
 * at dir for the object st at target (a directory: -EPERM), if c->who may
 * add it there; recorded as a "link" (section 6.4).  *path: the new
 * entry's path (as r4_pseudo_new's), *out: its stat. */
int r4_pseudo_link(r4_db *db, struct r4_pseudo_ctx *c, const char *target,
		   const struct r4_stat *st, const char *dir, const struct r4_stat *d,
		   const uint8_t *name, size_t n, char **path, struct r4_stat *out);
/* T -> E (section 5.3): make path, an entry of the directory dir, a
 * symlink to tgt[0, n).  st: the object path names, NULL for none (then d:
 * the directory's stat, NULL: stat it).  A symlink is replaced; anything
 * else stays (-EISDIR, -EEXIST).  *out: the new symlink (out may be st). */
int r4_pseudo_symlink(r4_db *db, struct r4_pseudo_ctx *c, const char *path,
		      const struct r4_stat *st, uint64_t dir, const struct r4_stat *d,
		      const uint8_t *tgt, size_t n, struct r4_stat *out);

/* p[0, *n) less one trailing LF, as every value a pseudo file or
 * parameter block takes (section 6.1). */
void r4_pseudo_chop(const uint8_t *p, size_t *n);


/*
 * Names (docs/semantics.md, "Names"; engine/ns.c).  Real entries come
 * first: any name but "." and ".." may be an entry, "..x" too.  A name
 * spelled "..x" names a pseudo file only where no entry has that name.
 */
bool r4_ns_pseudo_spelling(const char *name, size_t len);
/* What name[0..len) under the held object f names: an entry (*out, a
 * handle on it; *ps NULL), else a pseudo file of the table (*ps; *out
 * NULL).  -ENOENT: neither; -ENOTDIR: f is no directory and the name no
 * pseudo name; -EINVAL: "." or "..". */
int r4_ns_resolve(r4_file *f, const char *name, size_t len, r4_file **out,
		  const struct r4_pseudo_info **ps);

/* The next component of *p (runs of '/' skipped), moving *p past it;
 * false at the end. */
bool r4_ns_next(const char **p, const char **name, size_t *len);

/* ---- the path walker (engine/ns.c), which the fs API's calls by path,
 * pseudo files and the executor use ----
 *
 * Component by component from the root, or from an absolute path given
 * as the start: "." is the object itself, ".." its parent (the root's is
 * the root).  In a directory the identity needs search permission, then a
 * name is its entry; with R4_NS_PSEUDO a "..x" no entry has is the pseudo
 * file of the object (where the identity may not search, the entries are
 * not asked and a pseudo name is the pseudo file).  Symlinks are followed
 * as the flags say, a relative target read in the link's directory, except
 * before a name that applies to the link itself (a pseudo name, a claimed
 * name); at most R4_NS_MAX_LINKS of them, then -ELOOP.
 */
#define R4_NS_MAX_LINKS 40
enum {
	R4_NS_FOLLOW = 1 << 0,		/* follow symlinks before the last component */
	R4_NS_FOLLOW_LAST = 1 << 1,	/* ... and as the last one */
	R4_NS_PSEUDO = 1 << 2,		/* "..x" that is no entry: a pseudo name */
	R4_NS_MISSING = 1 << 3,		/* a missing last name (no "..x" then) ends the walk */
	R4_NS_PARENT = 1 << 4,		/* end before the last component ("/": -EBUSY) */
	R4_NS_PATH = 1 << 5,		/* keep w->path */
	/* The text was checked by the compiler: a "..x" of its own (not of a
	 * symlink's text) is the pseudo name it was checked to be, even where
	 * an entry has that name (LANGUAGE.md 5.2).  R4L's own: a read of
	 * d/..mode is one LOOKUP of that whole text (only writes become
	 * SETATTR steps on d), so the walker must know which "..x" the
	 * compiler checked; hosts name a pseudo file by its id instead. */
	R4_NS_CHECKED = 1 << 6,
};

enum r4_ns_end {
	R4_NS_AT_OBJ,		/* the object the path names */
	R4_NS_AT_PSEUDO,	/* name is pseudo file ps of the object; rest follows it */
	R4_NS_AT_CLAIMED,	/* the caller claimed name under the object; rest follows */
	R4_NS_AT_MISSING,	/* the directory reached has no entry name (R4_NS_MISSING) */
	R4_NS_AT_LAST,		/* name is the last component, in the object (R4_NS_PARENT) */
};

struct r4_ns_state;		/* the engine's: where a walk is */
struct r4_ns_walk {
	/* set by the caller (the rest zeroed) */
	r4_db *db;
	const struct r4_ident *who;	/* who needs search permission (NULL: nobody) */
	unsigned flags;			/* R4_NS_* */
	/* Called before name is looked up in the directory reached (the
	 * executor's touch of the entry); an error ends the walk with it. */
	int (*enter)(void *ctx, const struct r4_ns_walk *w, const char *name, size_t len);
	/* Does the caller take name under the object reached (before any
	 * lookup, and before a symlink there is followed)? */
	bool (*claims)(void *ctx, const struct r4_ns_walk *w, const char *name, size_t len);
	void *ctx;

	/* where the walk is, until r4_ns_fini */
	char *path;		/* R4_NS_PATH: absolute, without symlinks; the caller
				 * may take it (and set it NULL) */
	struct r4_stat st;	/* the object reached */
	uint64_t dir_ino;	/* the directory it was found in (0: not known) */

	/* how it ended (r4_ns_walk gave 0), or where it failed */
	enum r4_ns_end end;
	const struct r4_pseudo_info *ps;	/* R4_NS_AT_PSEUDO */
	const char *name;	/* the component it ended or failed at ... */
	size_t len;
	const char *rest;	/* ... and what follows it (in the text or the walk's
				 * copy: valid while the text is, until r4_ns_fini) */
	int comp;		/* that component's index in the text, symlinks' text not
				 * counted; -1: it failed before the text (the start) */

	struct r4_ns_state *state;	/* the engine's (NULL: r4_ns_walk makes one) */
};

/*
 * Walk text (absolute, or relative to from: an absolute path without
 * symlinks, walked without checks; NULL: the root); both must stay valid
 * until r4_ns_fini.  0 with w->end set, or
 * -ENOENT, -ENOTDIR, -EACCES, -ELOOP (w->comp, w->name: which component),
 * -EBUSY (R4_NS_PARENT of "/"), -ENOMEM, -EIO, -EUCLEAN (an entry pointing
 * nowhere: the image is marked damaged), or what a hook returned.
 * r4_ns_fini w in either case.
 */
int r4_ns_walk(struct r4_ns_walk *w, const char *from, const char *text);
void r4_ns_fini(struct r4_ns_walk *w);
/* A walk's state for a caller that walks again and again (w->state: the
 * walk allocates none; r4_ns_fini readies it for the next); NULL on
 * -ENOMEM. */
struct r4_ns_state *r4_ns_state_new(void);
void r4_ns_state_free(struct r4_ns_state *s);

struct r4_step {
	uint8_t op;			/* enum r4_plan_op */
	uint32_t flags;
	int32_t a, b, c, d, e;
	const char *str;		/* path text, label, name; NUL-terminated, owned by the plan */
	uint32_t off, len;		/* source range */
};

struct r4_plan {
	struct r4_step *steps;
	size_t nsteps, cap;
	struct {
		const char *p;		/* owned by the plan */
		size_t len;
	} *consts;
	size_t nconsts, ccap;
	uint32_t *chash;		/* the constants by hash (r4_plan_const) */
	size_t chsize;
	unsigned nh, nv;		/* registers used */
	unsigned units;
};

/* An empty plan (NULL on -ENOMEM); r4_plan_free releases it and all it owns. */
struct r4_plan *r4_plan_new(void);
void r4_plan_free(struct r4_plan *p);
/* A deep copy of p (NULL on -ENOMEM). */
struct r4_plan *r4_plan_copy(const struct r4_plan *p);
/* Append a step (its str is copied); its index, or -ENOMEM. */
int r4_plan_add(struct r4_plan *p, const struct r4_step *s);
/* A constant of the plan (bytes copied; equal constants are shared):
 * 0 and *operand = R4_PLAN_CONST_OF(k), or -ENOMEM. */
int r4_plan_const(struct r4_plan *p, const void *bytes, size_t len, int32_t *operand);
const char *r4_plan_op_name(enum r4_plan_op op);	/* "LOOKUP", or "?" */
/*
 * The plan as a numbered listing (docs/plan.md): one line per step, its
 * operands, and its source range LINE:COL-LINE:COL computed from src.
 * Deterministic and independent of any image.  -EIO if f fails, -ENOMEM.
 */
int r4_plan_explain(const struct r4_plan *p, const char *src, size_t len, FILE *f);

/* ---- running plans (engine/exec.c; docs/plan.md, "Running a plan") ----
 *
 * The executor runs each unit of a plan (BEGIN/COMMIT with R4_PLAN_UNIT)
 * in one transaction: it commits completely or, on a run-time error, not
 * at all.  Units run in order; the first failing unit stops the run, and
 * the units before it stay committed.  On a read-only db a unit runs
 * without a transaction (a change then fails with -EROFS).
 */
/* A statement's value, handed to the host before its unit commits. */
struct r4_value {
	uint32_t off, len;		/* the source range of the YIELD (the statement) */
	const char *path;		/* an object: its absolute path (pseudo files and
					   windows end in their ..name); NULL for bytes */
	const void *bytes;		/* bytes; or the object's contents, when read */
	size_t size;
	int err;			/* an object's contents not read: 0 (not asked) or why */
	const char *why;		/* ... and in words, naming what failed ("cannot read
					   '/srv/news': No such file or directory" for an
					   invert's part); NULL or "" when there are none */
};

/*
 * A session: several runs in one transaction, for a host that spans a
 * transaction over many commands (r4sh's begin ... commit).  A run in a
 * session that fails is undone alone: the engine transaction is aborted
 * and the session's earlier runs are done again (the clock stays pinned
 * to the session's start, so they redo exactly the same).
 */
typedef struct r4_session r4_session;
int r4_session_begin(r4_db *db, r4_session **out);	/* -EBUSY if a txn is open */
int r4_session_commit(r4_session *s);	/* commit; ends the session whatever happens */
void r4_session_rollback(r4_session *s);	/* abort: the image as at r4_session_begin */
unsigned r4_session_runs(const r4_session *s);	/* runs that have stayed in it */
/*
 * Make s all or nothing (r4sh --atomic): it keeps no record of its runs,
 * so a script of any length run into it costs no memory for them, and a
 * run that fails breaks it, leaving only rollback.  For runs without TRY
 * steps (named results): a TRY that catches a failure must redo the
 * session's earlier runs, which such a session cannot, so the run fails.
 */
void r4_session_whole(r4_session *s);

struct r4_exec_opts {
	r4_session *session;		/* run inside this session's transaction, or NULL */
	struct r4_ident who;
	const char *cwd;		/* absolute; NULL = "/" */
	bool read_objects;		/* objects in values carry their contents */
	/* Values, in order, each valid only during the call.  Nonzero fails
	 * the unit with that (negative) error: nothing of it commits. */
	int (*yield)(void *ctx, const struct r4_value *v);
	void *ctx;
	const volatile int *cancel;	/* checked between steps: nonzero stops with -EINTR */
};

/* Why a run failed: one run-time error, at one step. */
struct r4_exec_error {
	int rc;				/* 0: the run succeeded */
	size_t step;			/* the failing step */
	uint32_t off, len;		/* its source range */
	int comp;			/* a path that did not resolve: the index of the
					   component that failed (0-based, in the step's path),
					   else -1 */
	char msg[600];			/* "cannot read '/bank/carol': No such file or directory" */
	int note_step;			/* another step the error concerns (a conflict), or -1 */
	char note[300];
	unsigned units;			/* units committed before the failure */
};

/* Run plan p against db.  0, or the failing unit's error (err says where
 * and why; err may be NULL). -EBUSY if a transaction is already open
 * (other than o->session's). */
int r4_exec(r4_db *db, const struct r4_plan *p, const struct r4_exec_opts *o,
	    struct r4_exec_error *err);

/* ---- volume ---- */

struct r4_mkfs_opts {
	uint32_t blocksize;		/* 0 = 4096 */
	const char *label;		/* up to 16 bytes */
	const uint8_t *uuid;		/* 16 bytes; NULL = random */
	bool node41;			/* CRC32C node checksums */
	unsigned hash, fibration, formatting;	/* plugin ids; ~0u = profile default */
	unsigned create;		/* regular-file plugin: 0 reg40 (default here), 4 ccreg40 */
	int64_t mtime;			/* tests: fixed time; < 0 = now */
	uint32_t mkfs_id;		/* tests: fixed; 0 = random */
	bool no_overwrite;		/* -EEXIST when path holds a Reiser4 volume already
					   (r4 mkfs without -f); checked under the lock */
	unsigned partition;		/* in this partition of path (r4_open_opts) */
	void (*log)(void *ctx, int level, const char *msg);	/* NULL: quiet */
	void *log_ctx;
};
void r4_mkfs_defaults(struct r4_mkfs_opts *o);
/* The smallest volume r4_mkfs makes: 256 blocks of 4 KiB. */
#define R4_MKFS_MIN_SIZE (UINT64_C(256) * 4096)
/*
 * Make a fresh format40 volume of `size` bytes on path (a file is created
 * if needed and grown to size; path may be an NBD URI, and the volume one
 * partition of it, as in r4_open; -EFBIG when a device, partition or
 * export is smaller than size).  It takes the image's lock (r4_open) first:
 * -EBUSY while another holds it.  With o->no_overwrite, -EEXIST when path
 * already holds a Reiser4 volume (the master super block's magic at byte
 * 65536).  Nothing was changed after either.  -EINVAL for options it
 * cannot make, -ENOSPC under R4_MKFS_MIN_SIZE, -errno of the I/O.
 */
int r4_mkfs(const char *path, uint64_t size, const struct r4_mkfs_opts *o);

/* ---- who holds an image ---- */

struct r4_holder {
	bool held;		/* a writer holds the image: a program's lock, a block
				   device's kernel mount or exclusive opener */
	pid_t pid;		/* the process holding the lock; 0 = not known */
	char prog[64];		/* its name (/proc/PID/comm); "" = not known */
	char mount[4096];	/* the mount point of the image (a fuse.r4 mount of
				   it, a mount of a loop device backed by it, or of
				   the block device); "" = none found */
	char fstype[64];	/* that mount's type: fuse.r4, fuseblk.r4, ... */
	char what[4400];	/* the one message for a refusal: "in use by r4fuse (pid
				   1234), mounted at /mnt/x"; "in use by another
				   program" when nothing was found */
};

/*
 * Who holds the image at path.  Probes its lock (F_OFD_GETLK), finds the
 * lock's holder in /proc/PID/fdinfo (an OFD lock shows no pid), its name
 * in /proc/PID/comm, and the mount point in /proc/self/mountinfo.  A
 * process this one may not look into stays unknown.  0 (out filled, held
 * or not) or -errno of stat(2).  The answer can be stale at once.
 */
int r4_holder_find(const char *path, struct r4_holder *out);
/* Is the mount at point (a real path) read-only now, by its mount flags
 * in /proc/self/mountinfo?  (A mount's own daemon asks this way: a statfs
 * of the mount would be a call to itself.)  False when none is there. */
bool r4_mount_ro(const char *point);

struct r4_info {
	uint32_t blocksize;
	uint64_t block_count, free_blocks, root, next_oid, file_count;
	unsigned height, node_pid, policy;
	uint32_t mkfs_id, version;
	uint8_t uuid[16];
	char label[17];
	unsigned hash, fibration, formatting, create;
	uint64_t status;
	uint64_t commits;		/* transactions that changed it since this open */
	size_t cache_nodes, dirty_nodes;	/* this open's bounds (r4_open_opts) */
};
int r4_info(r4_db *db, struct r4_info *out);

/*
 * A copy of the volume as its last commit left it, in a new file at path
 * (one that exists is overwritten; an image someone holds is -EBUSY): every
 * block the image holds now, zero blocks as holes, fsync'd before the
 * return.  A transaction open in memory (an r4sh session) is not in it, and
 * goes on.  The volume alone, also of a partition or an NBD export.
 * r4_io_open's errors, -errno of the writes, -ENOMEM.
 */
int r4_backup(r4_db *db, const char *path);

/* ---- plugins (engine/plugin.c, ENGINE.md 5) ---- */

/* Plugin types, numbered as the kernel numbers them (plugin_header.h). */
enum r4_ptype {
	R4_PTYPE_FILE, R4_PTYPE_DIR, R4_PTYPE_ITEM, R4_PTYPE_NODE, R4_PTYPE_HASH, R4_PTYPE_FIBRE,
	R4_PTYPE_FORMATTING, R4_PTYPE_PERM, R4_PTYPE_SDEXT, R4_PTYPE_FORMAT, R4_PTYPE_JNODE,
	R4_PTYPE_CIPHER, R4_PTYPE_DIGEST, R4_PTYPE_COMPRESSION, R4_PTYPE_CMODE, R4_PTYPE_CLUSTER,
	R4_PTYPE_TXMOD, R4_PTYPE_NR
};
struct r4_plugin_info {
	unsigned type, id;		/* id: what the disk stores */
	const char *type_name;		/* "hash" */
	const char *label;		/* "r5_hash": reiser4progs' label, what mkfs -o takes */
	const char *desc;
};
/* The n-th plugin r4 knows, types in order, ids in order; false past the last. */
bool r4_plugin_nth(size_t n, struct r4_plugin_info *out);
/* The label of plugin (type, id), NULL if r4 knows none. */
const char *r4_plugin_label(unsigned type, unsigned id);
/* The id of the plugin of that type labelled label[0, len), or -1. */
int r4_plugin_id(unsigned type, const char *label, size_t len);
/* A plugin-set member by name ("formatting", "hash", "create", ...): its
 * index on disk (0..13) and the plugin type it holds; -1 if none. */
int r4_pset_member(const char *name, size_t len, unsigned *type);
const char *r4_pset_member_name(unsigned member);	/* NULL past the last */

/* ---- the storage tree, for learners and tools (engine/dump.c) ---- */

struct r4_dump_item {
	char key[80];			/* debugfs style: "[2a:1(SD):0:2a:0]" */
	const char *kind;		/* "stat", "cde", "nodeptr", "extent", "tail", ... */
	unsigned len;			/* body bytes */
	uint64_t child;			/* nodeptr: the block it points to */
	unsigned units;			/* entries (cde), extent units, or 0 */
};

struct r4_dump_node {
	uint64_t blk;			/* (a new node's block is chosen at commit: it shows its
					   number in the cache, top bit set) */
	unsigned level;			/* 1 = leaf, 2 = twig, ... */
	unsigned nitems, free_space;
	const struct r4_dump_item *items;
};

/* Every node of the tree, depth first from the root (a node, then its
 * children), as the open transaction sees it.  fn's nonzero return stops
 * the walk and is returned. */
int r4_dump_tree(r4_db *db, int (*fn)(void *ctx, const struct r4_dump_node *n), void *ctx);

/*
 * The journal as it lies on the image (r4 logdump, docs/fsck.md): the
 * header (the last committed transaction's tx head) and the footer (the
 * last played one's, with the free-block, file and next-oid counters),
 * then each committed transaction the footer does not mark played, oldest
 * first, with its wander records and every (original -> wandered) block
 * pair; verbose adds what each wandered copy holds (the super block, a
 * bitmap block, a node's level and items, else its first bytes).  Text
 * appended to out.  Open the image read-only with ignore_journal to see
 * the journal before any replay.  -EUCLEAN for a broken journal (the log
 * says where; out keeps the lines before it).
 */
int r4_dump_journal(r4_db *db, bool verbose, struct r4_buf *out);

/* ---- the layout report: r4 frag (engine/frag.c, docs/repack.md) ---- */

struct r4_frag {
	double data_frag;		/* measurefs.reiser4 -D: the mean over objects of
					   bad ranges / blocks of each one's body */
	double tree_frag;		/* measurefs.reiser4 -T: bad ranges / blocks over the
					   node pointers and extent units, depth first */
	double leaf_fill, twig_fill;	/* percent of a node's room past its header that
					   items use, mean over the leaves, the twigs */
	double seeks_per_mib;		/* seeks / MiB the walk reads */
	uint64_t seeks, read_blocks;	/* the walk's: blocks not after the one read
					   before; blocks read (tree nodes and data) */
	uint64_t objects;		/* objects data_frag averages over */
	uint64_t files, dirs, others;	/* objects the walk reached, by type */
	uint64_t extents, data_blocks;	/* allocated extent units, the blocks they hold */
	uint64_t leaves, twigs;		/* formatted nodes of levels 1 and 2 */
	/* the volume's free space (always the whole volume's): blocks, runs
	   of them, the largest run, the run that ends the volume */
	uint64_t free_blocks, free_runs, free_largest, free_at_end;
	uint32_t blocksize;
};

/*
 * How the blocks of the volume (path NULL or "/") or of the subtree at
 * path lie: fragmentation as measurefs.reiser4 counts it, node packing,
 * and the seeks of a walk that reads the tree in readdir order, parent
 * directories first (docs/repack.md says each figure exactly).  For a
 * subtree, the figures count its objects, the nodes holding their items
 * and the pointers to those.  Read only; -EBUSY inside a transaction
 * (blocks are placed at commit), the path's errors as r4_stat's,
 * -EUCLEAN for an item that does not decode, -ENOMEM.
 */
int r4_frag(r4_db *db, const char *path, struct r4_frag *out);

/* ---- salvage: what a damaged volume still holds (engine/salvage.c, docs/salvage.md) ---- */

typedef struct r4_salvage r4_salvage;

struct r4_salvage_opts {
	unsigned partition;		/* the volume is in this partition (r4_open_opts) */
	void (*log)(void *ctx, int level, const char *msg);	/* NULL: quiet */
	void *log_ctx;
};

struct r4_salvage_info {
	uint32_t blocksize;
	uint64_t blocks;		/* the format super block's count, else the image's */
	bool msb_ok, fsb_ok;		/* the master and format super blocks decode */
	bool tree_whole;		/* every node from the root read: no scan was needed */
	uint64_t bitmaps, bitmaps_ok;	/* bitmap blocks the scan read, those whose
					   checksum holds */
	uint64_t bad_nodes;		/* nodes the tree points at that do not read */
	uint64_t scanned;		/* blocks the scan read (0: no scan) */
	uint64_t leaves, twigs;		/* nodes whose items were looked at */
	uint64_t objects;		/* objects found */
	unsigned jnl_tx;		/* committed transactions not played in place, read
					   from their wandered copies */
};

/*
 * Open a damaged volume for salvage, read-only (the image is never
 * written, nor locked: it may be in use), without trusting its tree:
 * the super blocks, read with every block after them through the
 * journal's committed but unplayed transactions (as a read-only r4_open
 * sees them; a journal that does not read is left out and reported),
 * the tree from the root as far as its nodes read, then,
 * when a node or the format super block did not, every block of the
 * volume for leaves and twigs of the volume's mkfs id (docs/salvage.md:
 * what is found and which copy of a key wins).  Everything it decides is
 * decided here; the walk, the reads and the report below only look.
 * Memory is that of the metadata, never of the data.  -EUCLEAN (and a log
 * line) when neither a format super block nor a node of a volume is
 * found; r4_io_open's errors; -ENOMEM.  open_io borrows io.
 */
int r4_salvage_open(const char *path, const struct r4_salvage_opts *o, r4_salvage **out);
int r4_salvage_open_io(struct r4_io *io, const struct r4_salvage_opts *o, r4_salvage **out);
void r4_salvage_close(r4_salvage *s);
void r4_salvage_info(const r4_salvage *s, struct r4_salvage_info *out);

enum {					/* r4_salvage_ent flags */
	R4_SALVAGE_GUESSED = 1 << 0,	/* no stat data: st is made up (a directory 0755, a
					   regular file 0644 of the size its body reaches, or
					   /lost+found itself 0700), ids and times 0 */
	R4_SALVAGE_ORPHAN = 1 << 1,	/* reached by no name: /lost+found/#OID */
};

struct r4_salvage_ent {
	const char *path;		/* in the volume: "/", "/a/b", "/lost+found/#77/c" */
	const char *link;		/* another name of an object given before (a hard
					   link): that one's path; NULL the first time */
	const char *target;		/* a symlink's target (target_len bytes, no NUL) */
	size_t target_len;
	struct r4_stat st;		/* st.ino: what r4_salvage_read takes */
	unsigned flags;			/* R4_SALVAGE_* */
};

/*
 * Every object reachable by names from path (NULL or "/": the root, then
 * what no name reaches under a made-up /lost+found: docs/salvage.md),
 * parent first, a directory's entries by name; fn's nonzero return stops
 * the walk and is returned.  A directory reached by a second name is
 * skipped (and reported).  Each walk starts the report's object lines
 * afresh.  -ENOENT when path names nothing found; -ENOMEM.
 */
int r4_salvage_walk(r4_salvage *s, const char *path,
		    int (*fn)(void *ctx, const struct r4_salvage_ent *e), void *ctx);

enum r4_salvage_kind {
	R4_SALVAGE_DATA,		/* bytes found: read them */
	R4_SALVAGE_HOLE,		/* a hole: zeros */
	R4_SALVAGE_LOST,		/* held by a node that does not read: reads give zeros
					   and -EIO */
};

/* What the body of object ino holds at off: its kind and where that ends
 * (for a compressed file, whole clusters).  -ENXIO at or past its size (the
 * walk's st.size), -ENOENT for no such object. */
int r4_salvage_segment(const r4_salvage *s, uint64_t ino, uint64_t off,
		       enum r4_salvage_kind *kind, uint64_t *end);
/*
 * Bytes [off, off + len) of object ino's body, all inside its size.  Holes
 * read as zeros.  Lost bytes, and those of a data block that does not
 * read or of a compressed cluster that does not decode, are zeros too and
 * make the call return -EIO, with buf filled all the same; such a block or
 * cluster becomes a line of the report.
 * -ENXIO past the size, -ENOENT for no such object.
 */
int r4_salvage_read(r4_salvage *s, uint64_t ino, uint64_t off, void *buf, size_t len);
/*
 * Object ino's extended attributes (user., trusted., security., POSIX
 * ACLs), from r4's record of them, each given to fn (which returns 0 to go
 * on); none when there is no record.  A record that lost bytes or does not
 * decode gives none and a line of the report.  What fn returns, else 0.
 */
int r4_salvage_xattrs(r4_salvage *s, uint64_t ino,
		      int (*fn)(void *ctx, const char *name, const void *value, size_t len),
		      void *ctx);

/*
 * What could not be read, as lines appended to out (docs/salvage.md says
 * each): a journal that does not read (why); the nodes that do not read,
 * in key order, with the keys they held; the items that do not decode and
 * the keys found in two copies; then, in the last walk's order, every
 * object with a part missing (by its path) and the data blocks its reads
 * met that do not read.  -ENOMEM.
 */
int r4_salvage_report(r4_salvage *s, struct r4_buf *out);

/* ---- the repacker: r4 repack (engine/repack.c, docs/repack.md) ---- */

/* What a pass did with one file whose body is in extents. */
enum r4_repack_what {
	R4_REPACK_IN_PLACE,	/* one run, at or after the previous file's: left alone */
	R4_REPACK_MOVED,	/* moved (with dry_run: would be) */
	R4_REPACK_NO_ROOM,	/* the free space has no run it fits, nor fewer runs
				   than it has now; or the space is reserved */
	R4_REPACK_BUSY,		/* it holds new data not placed yet, also after a
				   commit (a host's writer goes on writing it) */
};

struct r4_repack_file {
	const char *path;	/* the name the walk met it under */
	uint64_t ino;
	enum r4_repack_what what;
	uint64_t blocks;	/* its data blocks */
	uint64_t runs, new_runs;	/* runs of contiguous blocks before and after */
	uint64_t from, to;	/* its first block before and after */
};

struct r4_repack_stats {
	uint64_t files;		/* extent files met (a file of several names once) */
	uint64_t in_place, moved, no_room, busy;	/* files, as r4_repack_what */
	uint64_t blocks_moved;
	uint64_t runs_before, runs_after;	/* of the files moved */
	uint64_t commits;	/* transactions the pass committed */
	/* tree nodes (leaves, twigs) the node phase moved into walk order,
	 * and left for want of room (a pass over the whole volume only) */
	uint64_t nodes_moved, nodes_no_room;
	bool stopped;		/* o->stop ended it before the end of the walk */
};

struct r4_repack_opts {
	uint64_t commit_bytes;	/* commit after this much data moved (0: 4 MiB) */
	uint64_t piece_blocks;	/* blocks a file's move takes per operation at
				   most (0: 256): a host's callers wait for one */
	bool dry_run;		/* decide and report, write nothing (a read-only db
				   will do) */
	bool compact;		/* gather the free space past the files: a file in
				   one run moves too when a free run between the
				   previous file and it holds it (commits come
				   first where what the pass freed would); the
				   first twig's leaves follow the bodies as the
				   others follow it.  From block 0 over the whole
				   volume.  Repeated passes converge. */
	/* asked before each object the walk meets and between batches of
	   nodes, outside any operation: true ends the pass there, with what it
	   moved committed (a host's Ctrl-C); may be NULL */
	bool (*stop)(void *ctx);
	/* each extent file met, with the counts so far; may be NULL */
	void (*file)(void *ctx, const struct r4_repack_file *f, const struct r4_repack_stats *sofar);
	/* A host that shares db with other callers (r4fuse): the pass works in
	   the host's transaction, commits it through commit(ctx) (0 or the
	   commit's error), and leaves an error's transaction to the host; in
	   stop the host may let the others act on db (the pass looks again at
	   whatever it meets after).  NULL: the pass's own transactions. */
	int (*commit)(void *ctx);
	void *ctx;
};

/*
 * One pass of the repacker over path's subtree ("/": the whole volume;
 * a regular file: that file): a walk in the order a reader of the tree
 * goes (a directory's files in readdir order, then its subdirectories,
 * parent first) moves each extent file whose blocks are not one run at or
 * after the previous file's into one run there (or the first run after
 * it that holds it, or as few runs as the free space allows); then, for
 * the whole volume, the twigs and leaves out of key order or not packed
 * are made dirty for the commit to squeeze and place in one run after
 * the bodies.  Its own transactions, a commit every commit_bytes moved
 * (every 256 nodes): each is an ordinary
 * one, so a crash keeps the last committed state, and nothing users see
 * changes (contents, names, ids, modes, owners, times).  A second pass
 * finds what the first moved in place.  0 (*out filled, also when
 * stopped) or -errno: -EROFS (read-only, not dry_run), -EBUSY (inside a
 * transaction, without o->commit), -EINVAL (dry_run with o->commit), the
 * walk's (-ENOENT ...), an I/O error (the running transaction is aborted,
 * or with o->commit left to the host; earlier ones stay).
 */
int r4_repack(r4_db *db, const char *path, const struct r4_repack_opts *o,
	      struct r4_repack_stats *out);

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
	R4_CC_META,		/* r4's own records (/..r4, docs/semantics.md) */
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
	R4_CK_META_ORPHAN,	/* an r4 record (or attributes) of an object the tree does not hold */
	R4_CK_META_BAD,		/* an r4 record r4 cannot read (its object's rules deny all),
				   or attributes */
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
	unsigned partition;	/* r4_check_open: in this partition (r4_open_opts) */
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
