/*
 * obj.h - objects: loading and saving stat data, directories (cde40
 * entries), regular files (tails and extents), symlinks and specials.
 *
 * An object is named by its stat-data key (locality = the directory it was
 * created in, ordering = from its first name, objectid).  Entries point at
 * that key, so a rename never moves an object's items.  Data of extent
 * files waits in dirty pages (by block number) until commit.
 */
#ifndef R4_OBJ_H
#define R4_OBJ_H

#include "db.h"
#include "item.h"

#define R4_ROOT_LOCALITY 41
#define R4_ROOT_OID 42
#define R4_FIRST_OID 0x10000
#define R4_NAME_MAX 255

struct r4_inode {
	r4_key sdkey;
	struct r4_sd sd;
	uint8_t *symlink;	/* owned copy of the target (sd.st_symlink points here) */
	unsigned hash, fibre, formatting;	/* effective plugins */
	unsigned create;			/* file plugin of new regular files */
	unsigned compress, cmode, cluster;	/* ccreg40: plugin ids, as in the pset */
};

void r4_obj_root_key(r4_key *k);
int r4_obj_load(struct r4_db *db, const r4_key *sdkey, struct r4_inode *ino);
int r4_obj_save(struct r4_db *db, struct r4_inode *ino);
void r4_obj_fini(struct r4_inode *ino);
void r4_obj_touch(struct r4_db *db, struct r4_inode *ino, bool m, bool c);

/* Directories */
int r4_dir_lookup(struct r4_db *db, const struct r4_inode *dir, const char *name, size_t len,
		  r4_key *sdkey);
int r4_dir_add(struct r4_db *db, struct r4_inode *dir, const char *name, size_t len,
	       const r4_key *target);
int r4_dir_remove(struct r4_db *db, struct r4_inode *dir, const char *name, size_t len);
/* Point an existing entry at another object. */
int r4_dir_retarget(struct r4_db *db, const struct r4_inode *dir, const char *name, size_t len,
		    const r4_key *target);
int r4_dir_iterate(struct r4_db *db, const struct r4_inode *dir, struct r4_dirpos *pos,
		   int (*fn)(void *ctx, const char *name, size_t len, const r4_key *sdkey),
		   void *ctx);
/* Does dir hold anything but "." and ".."? */
int r4_dir_is_empty(struct r4_db *db, const struct r4_inode *dir, bool *empty);

/* New objects: entry `name` in dir, stat data filled from *tmpl (mode,
 * uid, gid, rdev, symlink); returns the loaded inode. */
int r4_obj_create(struct r4_db *db, struct r4_inode *dir, const char *name, size_t len,
		  const struct r4_sd *tmpl, struct r4_inode *out);
/* Remove every item of the object (stat data, body, entries of a dir). */
int r4_obj_destroy(struct r4_db *db, struct r4_inode *ino);

/* The object at an absolute path (fs.c; tests and tools).  r4_obj_fini it. */
int r4_fs_resolve(struct r4_db *db, const char *path, struct r4_inode *out);
/* r4_create, r4_mkdir and r4_symlink in one (mode gives the type), with
 * the new object's stat (fs.c, for exec.c). */
int r4_fs_make(struct r4_db *db, const char *path, uint32_t mode, uint32_t uid, uint32_t gid,
	       const uint8_t *target, size_t tlen, struct r4_stat *st);
/* The next component of *p (runs of '/' skipped), moving *p past it;
 * false at the end (fs.c). */
bool r4_path_next(const char **p, const char **name, size_t *len);
/* Finish what safe-links record (fs.c): orphans a crash left are
 * removed, interrupted truncates done, in one transaction.  r4_open runs
 * it for a read-write handle. */
int r4_fs_finish_orphans(struct r4_db *db);
/* What r4_stat says of a loaded object. */
void r4_fs_stat_of(const struct r4_db *db, const struct r4_inode *ino, struct r4_stat *st);

/* Regular file bodies */
int r4_reg_read(struct r4_db *db, const struct r4_inode *ino, uint64_t off, void *buf,
		size_t len, size_t *got);
int r4_reg_write(struct r4_db *db, struct r4_inode *ino, uint64_t off, const void *buf,
		 size_t len);
int r4_reg_truncate(struct r4_db *db, struct r4_inode *ino, uint64_t size);

/* The extent map of an extent file: every unit in order (holes included);
 * *units is the caller's to r4_free.  -EUCLEAN for a tail body. */
int r4_reg_map(struct r4_db *db, const struct r4_inode *ino, struct r4_extent **units,
	       size_t *n);
/* The key of byte off of ino's body, and whether k is a key of its body. */
void r4_reg_body_key(const struct r4_inode *ino, uint64_t off, r4_key *k);
bool r4_reg_is_body(const struct r4_inode *ino, const r4_key *k);
/* Remove every body item of a file, freeing its extents' blocks. */
int r4_reg_remove_body(struct r4_db *db, const struct r4_inode *ino);
/* Release data blocks (deferred until commit) and drop their pending pages. */
void r4_reg_forget_blocks(struct r4_db *db, uint64_t start, uint64_t count);

/* Commit support: give the data blocks written in this transaction (fake
 * numbers so far) real ones, file by file, each file's runs in order
 * after its previous block (delayed allocation).  -ENOSPC, -ENOMEM leave
 * the rest to abort. */
int r4_reg_place(struct r4_db *db);

/* Dirty data pages (pending until commit): hand each to fn (commit), or
 * drop them all (after commit, or abort, which also forgets the fake
 * numbers). */
int r4_page_each(struct r4_db *db, int (*fn)(void *ctx, uint64_t blk, const uint8_t *data),
		 void *ctx);
void r4_page_discard(struct r4_db *db);
/* Free the page memory kept for reuse (r4_close). */
void r4_page_pool_free(struct r4_db *db);

#endif
