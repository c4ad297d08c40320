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
#include "tree.h"

#define R4_ROOT_LOCALITY 41
#define R4_FIRST_OID 0x10000
#define R4_NAME_MAX 255

struct r4_inode {
	r4_key sdkey;
	struct r4_sd sd;
	uint8_t *symlink;	/* owned copy of the target (sd.st_symlink points here) */
	unsigned hash, fibre, formatting;	/* effective plugins */
	unsigned create;			/* file plugin of new regular files */
	unsigned compress, cmode, cluster;	/* ccreg40: plugin ids, as in the pset */
	struct r4_item_hint sd_at;	/* where its stat data was read or stored last */
	bool bodiless;		/* known to have no body items: made in this transaction,
				   nothing changed since (fs.c, db->made); spares a write
				   the lookups that find and remove an old body */
};

/* The effective plugin of plugin-set member `member` (item.h R4_PSET_*):
 * the object's own slot, else the root's, else what the kernel assumes. */
unsigned r4_obj_plugin(const struct r4_db *db, const struct r4_inode *ino, unsigned member);

void r4_obj_root_key(r4_key *k);
int r4_obj_load(struct r4_db *db, const r4_key *sdkey, struct r4_inode *ino);
/* ino, as its stat data reads now, for r4_obj_load to answer from while the
 * tree stays as it is in this transaction (obj.c's memo). */
void r4_obj_memo_put(struct r4_db *db, const struct r4_inode *ino);
int r4_obj_save(struct r4_db *db, struct r4_inode *ino);
void r4_obj_fini(struct r4_inode *ino);
void r4_obj_touch(struct r4_db *db, struct r4_inode *ino, bool m, bool c);
/*
 * Can sd be stored?  -ENAMETOOLONG, as the kernel answers, for a symlink
 * target longer than symlink(2) passes (R4_SYMLINK_MAX) or a stat data
 * larger than one item (the target lives in it, and an item in one node:
 * 3,973 bytes of target on 4 KiB node40 blocks); else 0.  r4_obj_create
 * checks before it changes anything; a change of target checks first.
 */
int r4_obj_sd_fits(const struct r4_db *db, const struct r4_sd *sd);
/*
 * ts as the stat data holds a time: every time that enters it goes
 * through here.  Seconds are 32 bits, read back unsigned (the kernel's
 * static_stat.c: 1970-01-01 to 2106-02-07 06:28:15 UTC); a time outside
 * is clamped to the nearer end with nanoseconds 0, as the kernel's
 * timestamp_truncate clamps to a format's range, not wrapped.
 */
void r4_obj_time(const struct timespec *ts, uint32_t *sec, uint32_t *nsec);
/*
 * An explicit time ts about to be set on ino (utimensat, r4 import): when
 * it has nanoseconds and ino's stat data has no room for them (no
 * LARGE_TIMES extension: the root mkfs makes, objects reiser4progs or a
 * seconds_only db made), the extension is added for r4_obj_save to
 * write, unless db keeps whole seconds (seconds_only) or the stat data
 * would outgrow its item (a symlink's longest target).
 */
void r4_obj_ns_room(const struct r4_db *db, struct r4_inode *ino, const struct timespec *ts);

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
 * uid, gid, rdev, symlink); returns the loaded inode.  A regular file's
 * first contents body[0, n) (NULL: none) go in with it when they go in
 * tails (r4_reg_new_tails): its stat data is stored once, with their size
 * (out's size n tells); else the caller writes them after. */
int r4_obj_create(struct r4_db *db, struct r4_inode *dir, const char *name, size_t len,
		  const struct r4_sd *tmpl, const uint8_t *body, size_t n, struct r4_inode *out);
/* The object r4_obj_create would make from tmpl as name in dir, not yet
 * in the tree: its stat data and plugins, keyed by the next object id.
 * For a caller that grabs, before its first change, what writing into an
 * object it is about to make can take (r4_reg_append_cost). */
void r4_obj_prepare(const struct r4_db *db, const struct r4_inode *dir, const char *name,
		    size_t len, const struct r4_sd *tmpl, struct r4_inode *out);
/* Remove every item of the object (stat data, body, entries of a dir). */
int r4_obj_destroy(struct r4_db *db, struct r4_inode *ino);

/* The object at an absolute path (fs.c; tests and tools).  r4_obj_fini it. */
int r4_fs_resolve(struct r4_db *db, const char *path, struct r4_inode *out);
/* r4_create, r4_mkdir and r4_symlink in one (mode gives the type), with
 * the new object's stat (fs.c, for exec.c).  A symlink's target is
 * target[0, tlen); a regular file's first contents, stored with it when
 * they go in tails (r4_obj_create: st->size tells), else left to the
 * caller to write. */
int r4_fs_make(struct r4_db *db, const char *path, uint32_t mode, uint32_t uid, uint32_t gid,
	       const uint8_t *target, size_t tlen, struct r4_stat *st);
/* Has directory d a default ACL, which new objects in it start from
 * instead of the umask (acl.c; every creation of fs.c applies it)? */
bool r4_fs_default_acl(struct r4_db *db, const struct r4_stat *d);
/* Finish what safe-links record (fs.c): orphans a crash left are
 * removed, interrupted truncates done, in one transaction.  r4_open runs
 * it for a read-write handle. */
int r4_fs_finish_orphans(struct r4_db *db);
/* What r4_stat says of a loaded object. */
void r4_fs_stat_of(const struct r4_db *db, const struct r4_inode *ino, struct r4_stat *st);
/* The names in directory path but "." and "..", in directory order:
 * *v[0, *n), the caller's to r4_fs_names_free. */
int r4_fs_names(struct r4_db *db, const char *path, char ***v, size_t *n);
void r4_fs_names_free(char **v, size_t n);

/* What r4 knows beyond the stat data (meta.c, docs/semantics.md). */
enum { R4_META_NONE, R4_META_AGGREGATE, R4_META_INVERT };
#define R4_MAX_RULES 16
struct r4_rule {
	uint32_t id;
	bool gid;		/* a group's rule (else a user's) */
	uint8_t access;		/* R4_ACCESS_* */
};
struct r4_part {		/* one part of an invert */
	char *path;		/* a file (absolute path), or NULL: */
	uint8_t *text;		/* literal bytes */
	size_t len;
};
struct r4_meta {
	unsigned kind, format;	/* R4_META_*; an aggregate's R4_FORMAT_* */
	uint64_t *order;	/* an aggregate's records, by object id */
	size_t norder;
	struct r4_rule rules[R4_MAX_RULES];
	unsigned nrules;
	char *audit;		/* the audit log's path, or NULL */
	struct r4_part *parts;
	size_t nparts;
};
/* The object's record (all zero when it has none). */
int r4_meta_get(struct r4_db *db, uint64_t oid, struct r4_meta *m);
/* Store it (an empty one removes the record), inside the caller's
 * transaction or one of its own. */
int r4_meta_put(struct r4_db *db, uint64_t oid, const struct r4_meta *m);
int r4_meta_drop(struct r4_db *db, uint64_t oid);	/* the object is gone */
void r4_meta_fini(struct r4_meta *m);
bool r4_meta_empty(const struct r4_meta *m);
int r4_meta_add_part(struct r4_meta *m, const char *path, const uint8_t *text, size_t len);
/* R4_META_* of the object (and its format), R4_META_NONE on any error. */
unsigned r4_meta_kind(struct r4_db *db, uint64_t oid, unsigned *format);
bool r4_meta_present(struct r4_db *db);	/* is there any record? */
/* Make the records' directory if there is none (in the caller's
 * operation, which grabbed for it: 3 r4_txn_insert_cost). */
int r4_meta_dir(struct r4_db *db);
/* The file path of that directory, whole, into *b (empty when there is
 * none); -EUCLEAN when it is no regular file, or larger than max. */
int r4_meta_read(struct r4_db *db, const char *path, uint64_t max, struct r4_buf *b);
/* Remove the file path of that directory, if there is one. */
int r4_meta_unlink(struct r4_db *db, const char *path);

/*
 * Extended attributes (xattr.c; docs/semantics.md, "Extended attributes"):
 * an object's in a record of their own, "/..r4/OID.x", read only by the
 * attribute calls of fs.c.  In memory they are that record's bytes.
 */
/* The largest record: its magic, the most names the list allows (two
 * bytes each) with their lengths, and the names' and values' bytes. */
#define R4_XATTR_RECORD_MAX (8 + 5 * (R4_XATTR_LIST_MAX / 2) + R4_XATTR_TOTAL_MAX)
struct r4_xattrs {
	struct r4_buf b;	/* the record (empty: no attribute) */
};
/* Can name be stored?  set: -ERANGE, -EOPNOTSUPP, -EINVAL, -EPERM as
 * r4.h says; else (get, remove) -ERANGE, -EINVAL, or -ENODATA for a name
 * nothing can be stored under. */
int r4_xattr_name(const char *name, bool set);
/* Object oid's attributes (none: empty); -EUCLEAN for a damaged record. */
int r4_xattr_load(struct r4_db *db, uint64_t oid, struct r4_xattrs *x);
/* Is x a record r4 writes: its magic, each attribute whole with a name
 * that can be stored, in order, within the limits? */
bool r4_xattr_well_formed(const struct r4_xattrs *x);
void r4_xattr_fini(struct r4_xattrs *x);
/* The attribute after *at (0: the first), false after the last. */
bool r4_xattr_next(const struct r4_xattrs *x, size_t *at, const char **name, size_t *nlen,
		   const uint8_t **value, size_t *vlen);
/* name's value (pointing into x), or -ENODATA. */
int r4_xattr_find(const struct r4_xattrs *x, const char *name, const uint8_t **value,
		  size_t *vlen);
/* In x only: name set to value[0, vlen) as flags allow (R4_XATTR_*:
 * -EEXIST, -ENODATA; the object's limits: -ENOSPC), or removed (-ENODATA
 * when absent).  x is unchanged on failure. */
int r4_xattr_set(struct r4_xattrs *x, const char *name, const void *value, size_t vlen,
		 int flags);
int r4_xattr_remove(struct r4_xattrs *x, const char *name);
/* Store x as oid's record in the caller's operation: grabs (removal: may
 * use the reserve) before it changes anything. */
int r4_xattr_store(struct r4_db *db, uint64_t oid, const struct r4_xattrs *x, bool removal);
/* What storing x as oid's record can take (what r4_xattr_store grabs),
 * and what making one of len bytes where it has none can. */
int r4_xattr_store_cost(struct r4_db *db, uint64_t oid, const struct r4_xattrs *x,
			uint64_t *cost);
int r4_xattr_make_cost(struct r4_db *db, uint64_t oid, size_t len, uint64_t *cost);
/* What removing oid's record can add to the commit, and removing it (the
 * object went: inside an operation that grabbed for it). */
int r4_xattr_drop_cost(struct r4_db *db, uint64_t oid, uint64_t *cost);
int r4_xattr_drop(struct r4_db *db, uint64_t oid);

/* Aggregates (aggr.c, LANGUAGE.md section 7). */
enum { R4_ROLE_NONE, R4_ROLE_AGGREGATE, R4_ROLE_RECORD, R4_ROLE_FIELD };
/* What the object st at path is to an aggregate (and the format). */
unsigned r4_aggr_role(struct r4_db *db, const char *path, const struct r4_stat *st,
		      unsigned *format);
/* The text of the aggregate at path (record: only that record's line) as
 * who may read it (NULL: everything); *out is the caller's to r4_free. */
int r4_aggr_text(struct r4_db *db, const struct r4_ident *who, const char *path,
		 const char *record, char **out, size_t *len);
/* Make the records match the text (append: add them), each change checked
 * for who; why gets a message for EINVAL and EACCES. */
int r4_aggr_write(struct r4_db *db, const struct r4_ident *who, const char *path,
		  const uint8_t *p, size_t n, bool append, char *why, size_t wn);
int r4_aggr_make(struct r4_db *db, uint64_t ino, unsigned format);
/* After a record was renamed (rec: its new path), its name field follows. */
int r4_aggr_renamed(struct r4_db *db, const char *rec, unsigned format);
bool r4_aggr_is_name_field(unsigned format, const char *path);
int r4_aggr_field_check(unsigned format, const char *field, const char *p, size_t n, char *why,
			size_t wn);
int r4_aggr_rmtree(struct r4_db *db, const char *path);
uint64_t r4_aggr_ino(struct r4_db *db, const char *path);

/* p[0, n) with bytes below 0x20, 0x7f and '\' as \xHH, NUL-terminated
 * into out (NULL: only count); returns the length. */
size_t r4_escape_path(char *out, const char *p, size_t n);

/* Inverts (invert.c, LANGUAGE.md section 6.5).  A definition's parts: a
 * path, a literal (path NULL), or a path with text to write to it first
 * (both set); EINVAL with why for other text. */
int r4_invert_parse(const uint8_t *p, size_t n, struct r4_part **parts, size_t *np, char *why,
		    size_t wn);
void r4_invert_free(struct r4_part *v, size_t n);

/* Give the object its own plugin in a plugin-set member, or drop its slot
 * when id is the root's (fsck.reiser4 wants only differing slots). */
void r4_obj_set_plugin(const struct r4_db *db, struct r4_inode *ino, unsigned member, unsigned id);
/* ..plugin/<member> <- id where a conversion exists (fs.c): a regular
 * file's formatting, an empty directory's hash; else -EOPNOTSUPP. */
int r4_fs_set_plugin(struct r4_db *db, const char *path, unsigned member, unsigned id);
/* A symlink's target becomes target[0, n) (r4_obj_sd_fits: -ENAMETOOLONG). */
int r4_fs_set_symlink(struct r4_db *db, const char *path, const uint8_t *target, size_t n);

/* Regular file bodies */
int r4_reg_read(struct r4_db *db, const struct r4_inode *ino, uint64_t off, void *buf,
		size_t len, size_t *got);
int r4_reg_write(struct r4_db *db, struct r4_inode *ino, uint64_t off, const void *buf,
		 size_t len);
/*
 * The first contents, n bytes, of ino, a regular file r4_obj_create is
 * making (before its first change): 1 when they go in tails as a first
 * write would put them there, what they take grabbed and ino's size set
 * to n (r4_reg_new_put them once its stat data is stored); 0: not so, a
 * write puts them (r4_reg_write, after).
 */
int r4_reg_new_tails(struct r4_db *db, struct r4_inode *ino, size_t n);
int r4_reg_new_put(struct r4_db *db, const struct r4_inode *ino, const uint8_t *p, size_t n);
int r4_reg_truncate(struct r4_db *db, struct r4_inode *ino, uint64_t size);
/* lseek's SEEK_DATA (hole false) and SEEK_HOLE from off (< the size, else
 * -ENXIO; SEEK_DATA in the last hole too): holes are where no item (tail,
 * extent unit other than a hole) holds data, and the end; a compressed
 * file is all data. */
int r4_reg_seek(struct r4_db *db, const struct r4_inode *ino, uint64_t off, bool hole,
		uint64_t *out);
/* The most r4_reg_write of len bytes at ino's end can grab (it reads the
 * body's items). */
int r4_reg_append_cost(struct r4_db *db, const struct r4_inode *ino, uint64_t len, uint64_t *cost);
/*
 * fallocate (fs.c r4_file_fallocate): where zeros go so that [off, end)
 * holds blocks: with zero all of it, else what holds no data, the holes
 * of an extent body and what lies past the end (a tail or compressed body
 * keeps no blocks to give: only its end grows).  *v: the spans in order,
 * adjacent ones joined (r4_free it).
 */
struct r4_span {
	uint64_t off, end;
};
int r4_reg_fill_spans(struct r4_db *db, const struct r4_inode *ino, uint64_t off, uint64_t end,
		      bool zero, struct r4_span **v, size_t *n);
/* How much of them one operation writes: 16 MiB; 1 MiB of a compressed
 * file, whose write grabs for clusters as if they did not compress. */
uint64_t r4_reg_fill_piece(const struct r4_inode *ino);
/* The next piece [*o, *o + *k) of spans v[0, n), cut at multiples of
 * piece (*i, *o: where the walk is, 0 and v[0].off to begin); false
 * after the last. */
bool r4_reg_fill_next(const struct r4_span *v, size_t n, uint64_t piece, size_t *i, uint64_t *o,
		      uint64_t *k);
/* What writing v's pieces, one operation each, takes in all, generously:
 * each piece's blocks (as if a compressed file's did not compress), path
 * and stat data, the map stored again once (or tails each time, or a
 * compressed file made reg40); checked before the first, so that a
 * volume that cannot hold it refuses the whole fallocate. */
int r4_reg_fill_cost(struct r4_db *db, const struct r4_inode *ino, const struct r4_span *v,
		     size_t n, uint64_t piece, uint64_t *cost);
/*
 * fallocate's PUNCH_HOLE of [off, end) (fs.c r4_file_fallocate): after it
 * the range reads as zeros, the size stays, what lies past it is left
 * alone.  An extent body: its whole blocks become a hole unit and are
 * freed, the edge blocks' parts zeroed in place.  A tail body has no
 * holes (tails hold every byte up to the size): its bytes become zeros,
 * the body written again as tails.  A compressed body: the clusters wholly
 * inside lose their items (a cluster without items reads as zeros), the
 * edge clusters are rewritten.  One operation: it grabs, before any
 * change, a removal's room (the map stored again, 2 units more; the edge
 * blocks or clusters), touches mtime and ctime and saves the stat data.
 */
int r4_reg_punch(struct r4_db *db, struct r4_inode *ino, uint64_t off, uint64_t end);
/*
 * fallocate's COLLAPSE_RANGE (insert false): bytes [off, off + len) go
 * and what follows moves down by len, the size shrinks by len; or
 * INSERT_RANGE: a hole of len bytes goes in at off, what follows moves up,
 * the size grows by len.  The extent map is cut and stored again (whole
 * blocks move, none is copied; a collapse frees the blocks cut out, at
 * the commit); a collapse to a size the formatting policy keeps in tails
 * makes the body tails, as a truncate does.  -EINVAL unless off and len
 * are multiples of the block size and the range lies inside the file (a
 * collapse must leave data after it: off + len < size; an insert: off <
 * size), -EFBIG where the size would pass 2^62, -EOPNOTSUPP for a tail or
 * compressed body.  One operation: it grabs the map stored again (2 units
 * more), or the tails written, and the stat data; a collapse is a
 * removal.  Touches mtime and ctime, saves.
 */
int r4_reg_shift(struct r4_db *db, struct r4_inode *ino, uint64_t off, uint64_t len, bool insert);
/* Switch the formatting policy (0 extents, 1 tails, 2 smart) and lay the
 * body out again as it says; -EOPNOTSUPP for a compressed file. */
int r4_reg_reformat(struct r4_db *db, struct r4_inode *ino, unsigned formatting);

/* The extent map of an extent file: every unit in order (holes included);
 * *units is the caller's to r4_free.  None (*n 0) for a body of tails or
 * compressed clusters, or no body. */
int r4_reg_map(struct r4_db *db, const struct r4_inode *ino, struct r4_extent **units,
	       size_t *n);
/*
 * The repacker's move (repack.c, docs/repack.md): the allocated blocks of
 * extent file ino, in order, past the first skip of them, into the runs
 * to[0, nto), which are free in the working state, apart, and filled
 * exactly (the blocks after them stay where they are: a body is moved in
 * pieces); its map is stored again pointing there (holes stay), the data
 * is copied to the new blocks at once (free in the committed state: safe
 * before the commit point, whose sync makes them durable before the map
 * that names them), and the old blocks are freed at commit.  The stat
 * data is not touched: size, blocks and times stay.  An operation's part:
 * it grabs the blocks and the map stored again before any change
 * (-ENOSPC, nothing changed).  -EINVAL for no extent body or runs that do
 * not fit, -EAGAIN when the body holds new data of the running
 * transaction (placed at commit).
 */
int r4_reg_move(struct r4_db *db, const struct r4_inode *ino, uint64_t skip,
		const struct r4_extent *to, size_t nto);
/* The key of byte off of ino's body, and whether k is a key of its body. */
void r4_reg_body_key(const struct r4_inode *ino, uint64_t off, r4_key *k);
bool r4_reg_is_body(const struct r4_inode *ino, const r4_key *k);
/* Remove every body item of a file, freeing its extents' blocks. */
int r4_reg_remove_body(struct r4_db *db, const struct r4_inode *ino);
/* What removing ino's body can add to the commit (r4_txn_remove_cost of
 * its items; it reads them). */
int r4_reg_remove_cost(struct r4_db *db, const struct r4_inode *ino, uint64_t *cost);
/* The memory bound for pages: when the transaction's pending pages reach
 * the node cache's bound, place and write them out early.  Between
 * operations only. */
int r4_reg_spill(struct r4_db *db);
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
