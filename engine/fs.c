/*
 * fs.c - the POSIX-like API of r4.h over objects: path resolution, and
 * each operation's rules (what may be unlinked, renamed over what, how
 * nlink moves).
 *
 * Every call that changes the image runs in txn.c's bracket
 * (r4_txn_op_begin .. _end): inside the open transaction, or in one of
 * its own (autocommit).  A call that fails before changing
 * anything (db->gen unchanged) leaves the transaction usable; one that
 * fails after a change poisons it (an autocommit one is aborted at once),
 * so no half-done operation can be committed.  A structure error met by
 * any call of a read-write handle marks the volume damaged (r4_db_seen).
 * A change through a handle writes its audit records (audit.c) in its
 * operation, read and grabbed for before it changes anything.
 */
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "acl.h"
#include "alloc.h"
#include "audit.h"
#include "db.h"
#include "item.h"
#include "ns.h"
#include "obj.h"
#include "perm.h"
#include "tree.h"

/* ---- paths ---- */

static int check_path(const char *path)
{
	const char *p = path, *name;
	size_t len;

	if (!path || path[0] != '/')
		return -EINVAL;
	while (r4_ns_next(&p, &name, &len))
		if (len > R4_NAME_MAX)
			return -ENAMETOOLONG;
	return 0;
}

/*
 * Walk an absolute path with ns.c's walker as the calls by path do: real
 * entries only (a "..x" is an entry or nothing), no symlink followed; with
 * who, each directory passed needs search permission for who (-EACCES).
 */
static int walk_path(struct r4_db *db, const char *path, unsigned flags,
		     const struct r4_ident *who, struct r4_ns_walk *w, struct r4_ns_state *s)
{
	int rc;

	*s = (struct r4_ns_state){0};
	*w = (struct r4_ns_walk){.db = db, .who = who, .flags = flags, .state = s};
	if ((rc = check_path(path)))
		return rc;
	return r4_ns_walk(w, NULL, path);
}

static int resolve_as(struct r4_db *db, const char *path, const struct r4_ident *who,
		      struct r4_inode *out)
{
	struct r4_ns_walk w;
	struct r4_ns_state ws;
	r4_key key;
	int rc;

	/* (the object made last was made at path with nothing changed since:
	 * making it walked to its directory and added the entry, so a walk
	 * now would end on it; a walk without who, no permission to check.
	 * A script's "/d/f <- ..." makes f, then writes it by its path.) */
	if (!who && r4_path_memo_get(db, &db->made, path, strlen(path), &key)) {
		if ((rc = r4_obj_load(db, &key, out)))
			return rc;
		out->bodiless = S_ISREG(out->sd.sd_mode);
		return 0;
	}
	rc = walk_path(db, path, 0, who, &w, &ws);

	if (!rc)
		r4_ns_take(&w, out);
	r4_ns_fini(&w);
	return rc;
}

static int resolve(struct r4_db *db, const char *path, struct r4_inode *out)
{
	return resolve_as(db, path, NULL, out);
}

/* The directory holding the last component (. and .. too: callers refuse
 * them), and that component; "/" has none (-EBUSY). */
static int resolve_parent(struct r4_db *db, const char *path, struct r4_inode *dir,
			  const char **name, size_t *len)
{
	const char *last = strrchr(path, '/');
	struct r4_ns_walk w;
	struct r4_ns_state ws;
	r4_key key;
	int rc;

	/* (the walk that found the name missing has just been there: a
	 * walk without who, no permission to check, ends where it did) */
	if (last && last[1] && !check_path(path) &&
	    r4_ns_walked(db, path, last == path ? 1 : (size_t)(last - path), &key) &&
	    !r4_ns_dot(last + 1, strlen(last + 1)) && !(rc = r4_obj_load(db, &key, dir))) {
		*name = last + 1;
		*len = strlen(last + 1);
		return 0;
	}
	rc = walk_path(db, path, R4_NS_PARENT, NULL, &w, &ws);

	if (!rc && !S_ISDIR(w.st.mode))
		rc = -ENOTDIR;
	if (!rc) {
		const char *p = path;

		r4_ns_take(&w, dir);
		while (r4_ns_next(&p, name, len))
			;	/* w.name is in w's copy of path: the same name in path */
	}
	r4_ns_fini(&w);
	return rc;
}

static bool in_root(const struct r4_inode *dir)
{
	return r4_key_objectid(&dir->sdkey) == R4_ROOT_OID;
}

/* ---- transaction wrapper ----
 *
 * r4_txn_op_begin .. r4_txn_op_end (txn.h) around every change.  Each
 * operation grabs the most blocks its commit can need (r4_txn_grab) after
 * its checks and before its first change, so a full volume refuses it
 * with -ENOSPC and nothing changed.  Removals may use the reserve.
 */
#define E(db) r4_txn_insert_cost(db)

int r4_fs_set_symlink(struct r4_db *db, const char *path, const uint8_t *target, size_t n)
{
	struct r4_inode ino;
	struct r4_sd grown;
	struct r4_txn_op op;
	uint8_t *t;
	int rc;

	if ((rc = check_path(path)) || (rc = r4_txn_op_begin(db, &op)))
		return rc;
	if ((rc = resolve(db, path, &ino)))
		return r4_txn_op_end(db, &op, rc);
	grown = ino.sd;
	grown.sd_symlink_len = n;
	if (!S_ISLNK(ino.sd.sd_mode))
		rc = -EINVAL;
	else if (!n)
		rc = -ENOENT;
	else if (!(rc = r4_obj_sd_fits(db, &grown))) {
		if (!(t = (uint8_t *)r4_memdup(target, n)))
			rc = -ENOMEM;
		else if ((rc = r4_txn_grab(db, E(db), false)))	/* its stat data, grown */
			r4_free(t);
	}
	if (!rc) {
		r4_free(ino.symlink);
		ino.symlink = t;
		ino.sd.sd_symlink = t;
		ino.sd.sd_symlink_len = n;
		ino.sd.sd_size = n;
		r4_obj_touch(db, &ino, true, true);
		rc = r4_obj_save(db, &ino);
	}
	r4_obj_fini(&ino);
	return r4_txn_op_end(db, &op, rc);
}

/* What destroying ino can add to the commit: its body, its stat data (a
 * directory: with its "." and ".."), and what r4 knew of it (its record,
 * its attributes). */
static int destroy_cost(struct r4_db *db, const struct r4_inode *ino, uint64_t *cost)
{
	uint64_t body = 0, xattrs;
	int rc;

	if ((S_ISREG(ino->sd.sd_mode) && (rc = r4_reg_remove_cost(db, ino, &body))) ||
	    (rc = r4_xattr_drop_cost(db, r4_key_objectid(&ino->sdkey), &xattrs)))
		return rc;
	*cost = body + r4_txn_remove_cost(db, 2) + (r4_meta_present(db) ? 3 * E(db) : 0) + xattrs;
	return 0;
}

static int destroy(struct r4_db *db, struct r4_inode *ino);

static struct r4_held *held_find(struct r4_db *db, const r4_key *k);

/* ... and what drop_link can (an orphan: its stat data and safe-link). */
static int drop_cost(struct r4_db *db, const struct r4_inode *ino, uint64_t *cost)
{
	bool dir = S_ISDIR(ino->sd.sd_mode);

	*cost = 2 * E(db);
	if (!dir && ino->sd.sd_nlink <= 1 && held_find(db, &ino->sdkey))
		return 0;
	if (dir || ino->sd.sd_nlink <= 1)
		return destroy_cost(db, ino, cost);
	return 0;
}

/* Grab for a name of ino removed: the entry, its directory, ino's drop. */
static int grab_drop(struct r4_db *db, const struct r4_inode *ino, uint64_t more)
{
	uint64_t cost;
	int rc = drop_cost(db, ino, &cost);

	return rc ? rc : r4_txn_grab(db, cost + more + 2 * E(db), true);
}

/* ---- reading ---- */

void r4_fs_stat_of(const struct r4_db *db, const struct r4_inode *ino, struct r4_stat *st)
{
	const struct r4_sd *sd = &ino->sd;

	(void)db;
	memset(st, 0, sizeof(*st));
	st->ino = r4_key_objectid(&ino->sdkey);
	st->mode = sd->sd_mode;
	st->nlink = sd->sd_nlink;
	st->uid = sd->sd_uid;
	st->gid = sd->sd_gid;
	st->size = sd->sd_size;
	if (r4_sd_is_dev(sd->sd_mode))	/* stored as the kernel's dev_t: major << 20 | minor */
		st->rdev = makedev((unsigned)(sd->sd_bytes_rdev >> 20),
				   (unsigned)(sd->sd_bytes_rdev & 0xfffff));
	else
		st->blocks = (sd->sd_bytes_rdev + 511) / 512;
	st->atime.tv_sec = sd->sd_atime;
	st->mtime.tv_sec = sd->sd_mtime;
	st->ctime.tv_sec = sd->sd_ctime;
	st->atime.tv_nsec = sd->sd_atime_ns;
	st->mtime.tv_nsec = sd->sd_mtime_ns;
	st->ctime.tv_nsec = sd->sd_ctime_ns;
	st->flags = r4_perm_flags_of(sd);
}

int r4_fs_resolve(struct r4_db *db, const char *path, struct r4_inode *out)
{
	return resolve(db, path, out);
}

int r4_stat(r4_db *db, const char *path, struct r4_stat *st)
{
	struct r4_inode ino;
	int rc;

	if ((rc = resolve(db, path, &ino)))
		return r4_db_seen(db, rc);
	r4_fs_stat_of(db, &ino, st);
	r4_obj_fini(&ino);
	return 0;
}

int r4_access(r4_db *db, const char *path, const struct r4_ident *who, unsigned want,
	      struct r4_stat *st)
{
	struct r4_inode ino;
	struct r4_stat s;
	int rc;

	if ((rc = resolve_as(db, path, who, &ino)))
		return r4_db_seen(db, rc);
	r4_fs_stat_of(db, &ino, &s);
	r4_obj_fini(&ino);
	if (st)
		*st = s;
	return want && !r4_allows(db, who, &s, want) ? -EACCES : 0;
}

int r4_readlink(r4_db *db, const char *path, char *buf, size_t n, size_t *len)
{
	struct r4_inode ino;
	int rc;

	if ((rc = resolve(db, path, &ino)))
		return r4_db_seen(db, rc);
	if (!S_ISLNK(ino.sd.sd_mode)) {
		rc = -EINVAL;
	} else {
		memcpy(buf, ino.symlink, R4_MIN(n, ino.sd.sd_symlink_len));
		*len = ino.sd.sd_symlink_len;
	}
	r4_obj_fini(&ino);
	return rc;
}

int r4_read(r4_db *db, const char *path, uint64_t off, void *buf, size_t len, size_t *got)
{
	struct r4_inode ino;
	int rc;

	if ((rc = resolve(db, path, &ino)))
		return r4_db_seen(db, rc);
	if (S_ISDIR(ino.sd.sd_mode))
		rc = -EISDIR;
	else if (!S_ISREG(ino.sd.sd_mode))
		rc = -EINVAL;
	else
		rc = r4_reg_read(db, &ino, off, buf, len, got);
	r4_obj_fini(&ino);
	return r4_db_seen(db, rc);
}

struct rd_ctx {
	struct r4_db *db;
	r4_dirent_fn fn;	/* r4_readdir's callback, or */
	r4_dirstat_fn sfn;	/* r4_readdir_stat's */
	unsigned flags;		/* R4_READDIR_* (sfn only) */
	void *ctx;
	bool root;		/* listing the root */
};

/* One entry: the object it names is loaded (its type, its attributes)
 * unless the caller asked for names alone. */
static int rd_fn(void *ctx, const char *name, size_t len, const r4_key *sdkey)
{
	struct rd_ctx *r = ctx;
	struct r4_inode ino;
	struct r4_stat st;
	int rc;

	if (r4_ns_private(r->root, name, len))
		return 0;	/* r4's own records (meta.c) are never listed */
	if (r->sfn && (r->flags & R4_READDIR_NAMES))
		return r->sfn(r->ctx, name, len, r4_key_objectid(sdkey), NULL);
	if ((rc = r4_obj_load(r->db, sdkey, &ino)))
		return rc == -ENOENT ? R4_CORRUPT(&r->db->lg, 0, "entry '%.*s' points nowhere",
						  (int)len, name)
				     : rc;
	if (r->sfn) {
		r4_fs_stat_of(r->db, &ino, &st);	/* as r4_stat would give it */
		rc = r->sfn(r->ctx, name, len, st.ino, &st);
	} else {
		rc = r->fn(r->ctx, name, len, r4_key_objectid(sdkey), ino.sd.sd_mode & S_IFMT);
	}
	r4_obj_fini(&ino);
	return rc;
}

static int readdir_at(struct r4_db *db, const char *path, struct r4_dirpos *pos,
		      struct rd_ctx *r)
{
	struct r4_inode dir;
	int rc;

	if ((rc = resolve(db, path, &dir)))
		return r4_db_seen(db, rc);
	r->root = in_root(&dir);
	rc = S_ISDIR(dir.sd.sd_mode) ? r4_dir_iterate(db, &dir, pos, rd_fn, r) : -ENOTDIR;
	r4_obj_fini(&dir);
	return r4_db_seen(db, rc);
}

int r4_readdir(r4_db *db, const char *path, struct r4_dirpos *pos, r4_dirent_fn fn, void *ctx)
{
	struct rd_ctx r = {.db = db, .fn = fn, .ctx = ctx};

	return readdir_at(db, path, pos, &r);
}

int r4_readdir_stat(r4_db *db, const char *path, struct r4_dirpos *pos, unsigned flags,
		    r4_dirstat_fn fn, void *ctx)
{
	struct rd_ctx r = {.db = db, .sfn = fn, .flags = flags, .ctx = ctx};

	return readdir_at(db, path, pos, &r);
}

struct names {
	char **v;
	size_t n, cap;
	int rc;
};

static int names_fn(void *ctx, const char *name, size_t len, uint64_t ino, uint32_t type)
{
	struct names *s = ctx;

	(void)ino;
	(void)type;
	if (r4_ns_dot(name, len))
		return 0;
	if (r4_grow(&s->v, &s->cap, s->n + 1, sizeof(*s->v), 16) ||
	    !(s->v[s->n] = r4_memdup(name, len))) {
		s->rc = -ENOMEM;
		return 1;
	}
	s->n++;
	return 0;
}

int r4_fs_names(struct r4_db *db, const char *path, char ***v, size_t *n)
{
	struct r4_dirpos pos = {0};
	struct names s = {0};
	int rc = r4_readdir(db, path, &pos, names_fn, &s);

	if (rc >= 0)
		rc = s.rc;	/* (names_fn stops the listing only for it) */
	if (rc) {
		r4_fs_names_free(s.v, s.n);
		return rc;
	}
	*v = s.v;
	*n = s.n;
	return 0;
}

void r4_fs_names_free(char **v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		r4_free(v[i]);
	r4_free(v);
}

int r4_statfs(r4_db *db, struct r4_statfs *out)
{
	memset(out, 0, sizeof(*out));
	out->bsize = db->bs;
	out->blocks = db->block_count;
	out->bfree = r4_txn_bfree(db);
	/* once what is pending is committed: the transaction's own frees too,
	 * and the last commit's log blocks (the next r4_begin settles them on
	 * a nearly full volume) */
	uint64_t avail = r4_alloc_free_count(db->alloc) + r4_jnl_held(db);
	uint64_t keep = r4_txn_need(db) + r4_txn_reserve(db);

	out->bavail = R4_MIN(out->bfree, avail > keep ? avail - keep : 0);
	/* Objects need no preallocated slots: each block new data can get
	 * could hold one more (a stat data and its entry), so the free count is
	 * bavail and the total the objects there are plus that (df -i: Used
	 * is the object count, as on file systems with dynamic inodes). */
	out->ffree = out->bavail;
	out->files = db->file_count + out->ffree;
	out->namemax = R4_NAME_MAX;
	return 0;
}

/* ---- creating ---- */

/* The entry an operation works on: its directory (loaded) and name. */
struct at {
	struct r4_inode dir;
	const char *name;
	size_t len;
};

static int at_path(struct r4_db *db, const char *path, struct at *a)
{
	return resolve_parent(db, path, &a->dir, &a->name, &a->len);
}

/* Grab n blocks for a new entry a->name; a name that is taken is -EEXIST
 * before it is -ENOSPC, as the kernel answers. */
static int grab_entry(struct r4_db *db, struct at *a, uint64_t n)
{
	r4_key k;
	int rc = r4_txn_grab(db, n, false);

	if (rc == -ENOSPC && !r4_dir_lookup(db, &a->dir, a->name, a->len, &k))
		rc = -EEXIST;
	return rc;
}

/* x as object oid's attributes, in the caller's operation, which grabbed
 * for them (r4_xattr_store_cost) before its first change. */
static int xattrs_after(struct r4_db *db, uint64_t oid, const struct r4_xattrs *x)
{
	struct r4_txn_op op;
	int rc = r4_txn_op_begin(db, &op);

	if (!rc)
		rc = r4_txn_op_end(db, &op, r4_xattr_store(db, oid, x, false));
	return rc;
}

bool r4_fs_default_acl(struct r4_db *db, const struct r4_stat *d)
{
	return r4_acl_kinds(db, d->ino) & R4_ACL_HAS_DEFAULT;
}

/*
 * A new object of *mode in directory d as Linux's posix_acl_create: when
 * d has a default ACL, it and the mode the object is made with (*mode,
 * no umask) mask each other; the result is the object's access ACL unless
 * the mode says it all, and a directory inherits the default ACL.  x gets
 * the object's attributes.
 */
static int acl_new(struct r4_db *db, const struct r4_stat *d, uint32_t *mode,
		   struct r4_xattrs *x)
{
	struct r4_acl a = {0};
	struct r4_buf b = {0};
	int rc;

	if (S_ISLNK(*mode) || !r4_fs_default_acl(db, d))
		return 0;
	if ((rc = r4_acl_get(db, d->ino, R4_ACL_DEFAULT, &a)) || !a.n)
		return rc;
	if (S_ISDIR(*mode) && !(rc = r4_acl_encode(&a, &b)))
		rc = r4_xattr_set(x, R4_ACL_DEFAULT, b.p, b.len, 0);
	r4_buf_free(&b);
	if (!rc && r4_acl_create(&a, mode) && !(rc = r4_acl_encode(&a, &b)))
		rc = r4_xattr_set(x, R4_ACL_ACCESS, b.p, b.len, 0);
	r4_buf_free(&b);
	r4_acl_free(&a);
	return rc;
}

/* A new object from tmpl as name in dir, before any change: its stat
 * data *t (in a directory with a default ACL, with its ACLs' mode:
 * acl_new), its attributes x (r4_xattr_fini them) and what making it
 * grabs (*cost). */
static int make_plan(struct r4_db *db, const struct r4_inode *dir, const char *name, size_t len,
		     const struct r4_sd *tmpl, struct r4_sd *t, struct r4_xattrs *x, uint64_t *cost)
{
	struct r4_stat d;
	uint32_t mode = tmpl->sd_mode;
	int rc;

	if (r4_ns_dot(name, len))
		return -EEXIST;
	if ((rc = r4_perm_flags_add(r4_perm_flags_of(&dir->sd))))
		return rc;
	r4_fs_stat_of(db, dir, &d);
	*cost = 0;
	if ((rc = acl_new(db, &d, &mode, x)) ||
	    (x->b.len && (rc = r4_xattr_make_cost(db, db->next_oid, x->b.len, cost))))
		return rc;
	*t = *tmpl;
	t->sd_mode = (uint16_t)mode;
	*cost += 3 * E(db);	/* stat data, entry, directory; the attributes */
	return 0;
}

/* A new regular file's first contents. */
struct bytes {
	const uint8_t *p;
	size_t n;
};

/* ... made, once grabbed for, with the first contents b (NULL: none)
 * when they go in with it (r4_obj_create); its stat, and its key, to
 * those not NULL. */
static int make_done(struct r4_db *db, struct r4_inode *dir, const char *name, size_t len,
		     const struct r4_sd *t, const struct r4_xattrs *x, const struct bytes *b,
		     struct r4_stat *st, r4_key *key)
{
	struct r4_inode ino;
	int rc = r4_obj_create(db, dir, name, len, t, b ? b->p : NULL, b ? b->n : 0, &ino);

	if (rc)
		return rc;
	if (st)
		r4_fs_stat_of(db, &ino, st);
	if (key)
		*key = ino.sdkey;
	if (x->b.len)
		rc = xattrs_after(db, r4_key_objectid(&ino.sdkey), x);
	else if (S_ISREG(ino.sd.sd_mode) && !ino.sd.sd_size)
		r4_obj_memo_put(db, &ino);	/* (as it reads: a write to it comes next) */
	r4_obj_fini(&ino);
	return rc;
}

/* A new object named a->name (make_plan, make_done). */
static int make_at(struct r4_db *db, struct at *a, const struct r4_sd *tmpl,
		   const struct bytes *b, struct r4_stat *st, r4_key *key)
{
	struct r4_xattrs x = {0};
	struct r4_sd t;
	uint64_t cost;
	int rc;

	if (!(rc = make_plan(db, &a->dir, a->name, a->len, tmpl, &t, &x, &cost)) &&
	    !(rc = grab_entry(db, a, cost)))
		rc = make_done(db, &a->dir, a->name, a->len, &t, &x, b, st, key);
	r4_xattr_fini(&x);
	return rc;
}

static int make(struct r4_db *db, const char *path, const struct r4_sd *tmpl,
		const struct bytes *b, struct r4_stat *st)
{
	struct r4_stat made;
	struct at a;
	struct r4_txn_op op;
	r4_key key;
	int rc;

	if ((rc = check_path(path)) || (rc = r4_txn_op_begin(db, &op)))
		return rc;
	if (!(rc = at_path(db, path, &a))) {
		rc = make_at(db, &a, tmpl, b, &made, &key);
		r4_obj_fini(&a.dir);
	}
	/* (a file made with its contents has a body: the next write to it
	 * walks, where resolve would take it for bodiless) */
	if (!(rc = r4_txn_op_end(db, &op, rc)) && !(b && made.size))
		r4_path_memo_set(db, &db->made, path, strlen(path), &key);
	if (!rc && st)
		*st = made;
	return rc;
}

static void tmpl_init(struct r4_sd *t, uint32_t mode, uint32_t uid, uint32_t gid)
{
	memset(t, 0, sizeof(*t));
	t->sd_mode = (uint16_t)mode;
	t->sd_uid = uid;
	t->sd_gid = gid;
}

/*
 * The stat data of a new object: a regular file, a directory, a special
 * file (its device number must fit the kernel's encoding) or a symlink
 * (its target lives in the stat data: r4_obj_sd_fits).
 */
static int newobj_tmpl(const struct r4_newobj *n, struct r4_sd *t)
{
	uint32_t type = n->mode & S_IFMT;

	memset(t, 0, sizeof(*t));
	t->sd_mode = (uint16_t)(type | (n->mode & 07777));
	t->sd_uid = n->uid;
	t->sd_gid = n->gid;
	switch (type) {
	case S_IFREG: case S_IFDIR: case S_IFIFO: case S_IFSOCK:
		return 0;
	case S_IFCHR: case S_IFBLK:
		if (major(n->rdev) >= 1u << 12 || minor(n->rdev) >= 1u << 20)
			return -EOVERFLOW;
		t->sd_bytes_rdev = (uint64_t)major(n->rdev) << 20 | minor(n->rdev);
		return 0;
	case S_IFLNK:
		if (!n->target || !n->target[0])
			return -ENOENT;
		t->sd_symlink_len = strlen(n->target);
		t->sd_mode = S_IFLNK | 0777;
		t->sd_symlink = (const uint8_t *)n->target;
		return 0;
	default:
		return -EINVAL;
	}
}

static int make_new(struct r4_db *db, const char *path, const struct r4_newobj *n)
{
	struct r4_sd t;
	int rc = newobj_tmpl(n, &t);

	return rc ? rc : make(db, path, &t, NULL, NULL);
}

int r4_create(r4_db *db, const char *path, uint32_t mode, uint32_t uid, uint32_t gid)
{
	return make_new(db, path, &(struct r4_newobj){S_IFREG | (mode & 07777), uid, gid, 0, NULL});
}

int r4_mkdir(r4_db *db, const char *path, uint32_t mode, uint32_t uid, uint32_t gid)
{
	return make_new(db, path, &(struct r4_newobj){S_IFDIR | (mode & 07777), uid, gid, 0, NULL});
}

int r4_mknod(r4_db *db, const char *path, uint32_t mode, uint64_t rdev, uint32_t uid,
	     uint32_t gid)
{
	if (S_ISDIR(mode) || S_ISLNK(mode))
		return -EINVAL;
	return make_new(db, path, &(struct r4_newobj){mode, uid, gid, rdev, NULL});
}

int r4_fs_make(struct r4_db *db, const char *path, uint32_t mode, uint32_t uid, uint32_t gid,
	       const uint8_t *target, size_t tlen, struct r4_stat *st)
{
	struct r4_sd t;

	if (S_ISLNK(mode) && !tlen)
		return -ENOENT;
	if (!S_ISLNK(mode) && !S_ISDIR(mode) && !S_ISREG(mode))
		return -EINVAL;
	tmpl_init(&t, S_ISLNK(mode) ? S_IFLNK | 0777 : mode, uid, gid);
	if (S_ISLNK(mode)) {
		t.sd_symlink = target;
		t.sd_symlink_len = tlen;
	}
	return make(db, path, &t, S_ISREG(mode) && target ? &(struct bytes){target, tlen} : NULL,
		    st);
}

int r4_symlink(r4_db *db, const char *target, const char *path, uint32_t uid, uint32_t gid)
{
	return make_new(db, path, &(struct r4_newobj){S_IFLNK | 0777, uid, gid, 0, target});
}

/* ---- changing ---- */

/* Only a regular file has a body to write or truncate. */
static int has_body(const struct r4_inode *ino)
{
	return S_ISDIR(ino->sd.sd_mode) ? -EISDIR : S_ISREG(ino->sd.sd_mode) ? 0 : -EINVAL;
}

int r4_write(r4_db *db, const char *path, uint64_t off, const void *buf, size_t len)
{
	struct r4_inode ino;
	struct r4_txn_op op;
	int rc;

	if ((rc = check_path(path)) || (rc = r4_txn_op_begin(db, &op)))
		return rc;
	if (!(rc = resolve(db, path, &ino))) {
		if (!(rc = has_body(&ino)) &&
		    !(rc = r4_perm_flags_body(r4_perm_flags_of(&ino.sd), off == ino.sd.sd_size)))
			rc = r4_reg_write(db, &ino, off, buf, len);
		r4_obj_fini(&ino);
	}
	return r4_txn_op_end(db, &op, rc);
}

static int do_truncate(struct r4_db *db, struct r4_inode *ino, uint64_t size)
{
	int rc = has_body(ino);

	return rc ? rc : r4_reg_truncate(db, ino, size);
}

int r4_truncate(r4_db *db, const char *path, uint64_t size)
{
	struct r4_inode ino;
	struct r4_txn_op op;
	int rc;

	if ((rc = check_path(path)) || (rc = r4_txn_op_begin(db, &op)))
		return rc;
	if (!(rc = resolve(db, path, &ino))) {
		if (!(rc = r4_perm_flags_body(r4_perm_flags_of(&ino.sd), false)))
			rc = do_truncate(db, &ino, size);
		r4_obj_fini(&ino);
	}
	return r4_txn_op_end(db, &op, rc);
}

/* sa to ino's stat data (and a size to its body). */
static int apply_sd(struct r4_db *db, struct r4_inode *ino, const struct r4_setattr *sa)
{
	struct r4_sd *sd = &ino->sd;
	int rc;

	if ((rc = r4_perm_flags_setattr(r4_perm_flags_of(sd), sa)))
		return rc;
	/* (a truncate grabs for the stat data too) */
	if ((sa->mask & R4_SET_SIZE) ? (rc = do_truncate(db, ino, sa->size))
				     : (rc = r4_txn_grab(db, E(db), false)))
		return rc;
	if (sa->mask & R4_SET_MODE)
		sd->sd_mode = (uint16_t)((sd->sd_mode & S_IFMT) | (sa->mode & 07777));
	if (sa->mask & R4_SET_UID)
		sd->sd_uid = sa->uid;
	if (sa->mask & R4_SET_GID)
		sd->sd_gid = sa->gid;
	if (sa->mask & R4_SET_ATIME)
		r4_obj_ns_room(db, ino, &sa->atime);
	if (sa->mask & R4_SET_MTIME)
		r4_obj_ns_room(db, ino, &sa->mtime);
	if (sa->mask & R4_SET_CTIME)
		r4_obj_ns_room(db, ino, &sa->ctime);
	r4_obj_touch(db, ino, false, true);
	if (sa->mask & R4_SET_ATIME)
		r4_obj_time(&sa->atime, &sd->sd_atime, &sd->sd_atime_ns);
	if (sa->mask & R4_SET_MTIME)
		r4_obj_time(&sa->mtime, &sd->sd_mtime, &sd->sd_mtime_ns);
	if (sa->mask & R4_SET_CTIME)
		r4_obj_time(&sa->ctime, &sd->sd_ctime, &sd->sd_ctime_ns);
	/* "now": the change's time, which r4_obj_touch gave ctime */
	if (sa->mask & R4_SET_ATIME_NOW) {
		sd->sd_atime = sd->sd_ctime;
		sd->sd_atime_ns = sd->sd_ctime_ns;
	}
	if (sa->mask & R4_SET_MTIME_NOW) {
		sd->sd_mtime = sd->sd_ctime;
		sd->sd_mtime_ns = sd->sd_ctime_ns;
	}
	return r4_obj_save(db, ino);
}

/* A chmod of ino to mode: its access ACL follows (posix_acl_chmod), the
 * attributes to store into x (none: empty), what that takes grabbed. */
static int acl_chmod(struct r4_db *db, const struct r4_inode *ino, uint32_t mode,
		     struct r4_xattrs *x)
{
	uint64_t oid = r4_key_objectid(&ino->sdkey), cost;
	struct r4_acl a;
	struct r4_buf b = {0};
	int rc;

	if (!(r4_acl_kinds(db, oid) & R4_ACL_HAS_ACCESS))
		return 0;
	/* (the record read once: its ACL, then all of it stored again) */
	if ((rc = r4_xattr_load(db, oid, x)) || (rc = r4_acl_from(db, oid, x, R4_ACL_ACCESS, &a)) ||
	    !a.n) {
		r4_xattr_fini(x);	/* (nothing to store) */
		return rc;
	}
	r4_acl_chmod(&a, mode);
	if (!(rc = r4_acl_encode(&a, &b)) && !(rc = r4_xattr_set(x, R4_ACL_ACCESS, b.p, b.len, 0)) &&
	    !(rc = r4_xattr_store_cost(db, oid, x, &cost)))
		rc = r4_txn_grab(db, cost, false);
	r4_buf_free(&b);
	r4_acl_free(&a);
	return rc;
}

/* chmod, chown, utimens and truncate on a loaded object. */
static int apply_setattr(struct r4_db *db, struct r4_inode *ino, const struct r4_setattr *sa)
{
	struct r4_xattrs x = {0};
	int rc = 0;

	if (sa->mask & R4_SET_MODE)
		rc = acl_chmod(db, ino, sa->mode, &x);
	if (!rc && !(rc = apply_sd(db, ino, sa)) && x.b.len)
		rc = xattrs_after(db, r4_key_objectid(&ino->sdkey), &x);
	r4_xattr_fini(&x);
	return rc;
}

int r4_setattr(r4_db *db, const char *path, const struct r4_setattr *sa)
{
	struct r4_inode ino;
	struct r4_txn_op op;
	int rc;

	if ((rc = check_path(path)) || (rc = r4_txn_op_begin(db, &op)))
		return rc;
	if ((rc = resolve(db, path, &ino)))
		return r4_txn_op_end(db, &op, rc);
	rc = apply_setattr(db, &ino, sa);
	r4_obj_fini(&ino);
	return r4_txn_op_end(db, &op, rc);
}

/* ---- open objects: handles by identity, orphans and safe-links ----
 *
 * An r4_file names its object by stat-data key, so renames do not
 * matter to it, and unlinking the last name of a held object leaves the
 * object in the tree with nlink 0 (an orphan), recorded by a safe-link
 * item in the same transaction (ENGINE.md 4.10: bbox40, locality 43,
 * objectid = the object's, offset = UNLINK, body = its stat-data key).
 * The last close removes both.  After a crash, the next read-write open
 * finds the safe-links and finishes the removals.  A held object that
 * lost its last name is marked; at the last close its stat data says
 * whether it still is an orphan (an aborted transaction may have given it
 * its name back).  Other closes read nothing.
 */

struct r4_file {
	struct r4_db *db;
	struct r4_held *held;		/* NULL: weak (r4_file_weaken) */
	r4_key key;			/* the object's stat-data key */
	uint64_t seen;			/* held->lost when this handle last reported it */
	int oflags;			/* opened (r4_file_reopen, by path): O_ACCMODE; else -1 */
	bool has_up;			/* the way it was found, for r4_perm_reach: */
	r4_key up;			/* its directory, */
	char *upname;			/* and its name there */
	size_t uplen;
};

static struct r4_held *held_find(struct r4_db *db, const r4_key *k)
{
	for (struct r4_held *h = db->held; h; h = h->next)
		if (!r4_key_cmp(&h->sdkey, k))
			return h;
	return NULL;
}

static void safelink_key(r4_key *k, uint64_t oid)
{
	r4_key_set(k, R4_SAFELINK_LOCALITY, R4_KEY_NAME, 0, oid, R4_SAFELINK_UNLINK);
}

static int safelink_add(struct r4_db *db, const struct r4_inode *ino)
{
	struct r4_safelink sl = {.sl_sdkey = ino->sdkey};
	uint8_t body[R4_SAFELINK_SIZE];
	struct r4_path p;
	r4_key k, at;
	int rc;

	safelink_key(&k, r4_key_objectid(&ino->sdkey));
	if ((rc = r4_tree_lookup(db, &k, R4_LEVEL_LEAF, &p)))
		return rc;
	if (r4_path_item(db, &p, &at, NULL, NULL, NULL) && !r4_key_cmp(&at, &k)) {
		r4_path_release(db, &p);
		return 0;	/* there already */
	}
	r4_item_bbox_encode(&sl, body);
	return r4_tree_insert(db, &p, &k, R4_ITEM_BBOX40, body, sizeof(body));
}

/* Remove the item at exactly key k, if there is one. */
static int item_del(struct r4_db *db, const r4_key *k)
{
	struct r4_path p;
	r4_key at;
	int rc;

	if ((rc = r4_tree_lookup(db, k, R4_LEVEL_LEAF, &p)))
		return rc;
	if (!r4_path_item(db, &p, &at, NULL, NULL, NULL) || r4_key_cmp(&at, k)) {
		r4_path_release(db, &p);
		return 0;
	}
	return r4_tree_remove(db, &p);
}

/* Remove the object at sdkey if it is (still) an orphan, then its safe-link. */
static int finish_orphan(struct r4_db *db, const r4_key *sdkey)
{
	struct r4_inode ino;
	uint64_t cost = 0;
	bool orphan = false;
	r4_key k;
	int rc = r4_obj_load(db, sdkey, &ino);
	bool loaded = !rc;

	if (rc && rc != -ENOENT)
		return rc;
	if (loaded && (orphan = ino.sd.sd_nlink == 0 && !S_ISDIR(ino.sd.sd_mode)))
		rc = destroy_cost(db, &ino, &cost);
	else
		rc = 0;
	/* the object, and the safe-link */
	if (!rc && !(rc = r4_txn_grab(db, cost + E(db), true)) && orphan)
		rc = destroy(db, &ino);
	if (loaded)
		r4_obj_fini(&ino);
	if (rc)
		return rc;
	safelink_key(&k, r4_key_objectid(sdkey));
	return item_del(db, &k);
}

int r4_fs_finish_orphans(struct r4_db *db)
{
	unsigned done = 0;
	int rc;

	for (;;) {
		struct r4_safelink sl;
		struct r4_txn_op op;
		struct r4_path p;
		uint8_t *body;
		unsigned pid, len;
		r4_key k;

		r4_key_set(&k, R4_SAFELINK_LOCALITY, R4_KEY_NAME, 0, 0, 0);
		if ((rc = r4_tree_lookup(db, &k, R4_LEVEL_LEAF, &p)))
			break;
		/* the first item at or after the locality's start */
		if ((!r4_path_item(db, &p, &k, NULL, NULL, NULL) ||
		     r4_key_locality(&k) != R4_SAFELINK_LOCALITY) && (rc = r4_tree_next(db, &p)) <= 0) {
			r4_path_release(db, &p);
			break;
		}
		if (!r4_path_item(db, &p, &k, &pid, &body, &len) ||
		    r4_key_locality(&k) != R4_SAFELINK_LOCALITY) {
			r4_path_release(db, &p);
			rc = 0;
			break;
		}
		if (pid != R4_ITEM_BBOX40 || (rc = r4_item_bbox_decode(body, len, &sl))) {
			r4_path_release(db, &p);
			rc = R4_CORRUPT(&db->lg, 0, "item %u at the safe-link locality is no safe-link",
					pid);
			break;
		}
		r4_path_release(db, &p);
		if ((!db->in_txn && (rc = r4_begin(db))) || (rc = r4_txn_op_begin(db, &op)))
			break;
		if (r4_key_offset(&k) == R4_SAFELINK_TRUNCATE && sl.sl_has_size) {
			/* the kernel's: a truncate a crash interrupted */
			struct r4_inode ino;

			if (!(rc = r4_obj_load(db, &sl.sl_sdkey, &ino))) {
				rc = S_ISREG(ino.sd.sd_mode) ? r4_reg_truncate(db, &ino, sl.sl_size) : 0;
				r4_obj_fini(&ino);
			}
			if (!rc || rc == -ENOENT)
				rc = item_del(db, &k);
		} else {
			rc = finish_orphan(db, &sl.sl_sdkey);
			if (!rc)	/* a stray (its key's oid is not the body's) goes too */
				rc = item_del(db, &k);
		}
		if ((rc = r4_txn_op_end(db, &op, rc)))
			break;
		done++;
	}
	if (!rc && db->in_txn)
		rc = r4_commit(db);
	if (rc && db->in_txn)
		r4_abort(db);
	if (!rc && done)
		r4_log(&db->lg, R4_LOG_INFO, "safe-links: %u operation%s a crash interrupted "
		       "finished (files unlinked while open)", done, done == 1 ? "" : "s");
	return r4_db_seen(db, rc);
}

/* A handle on the object at sdkey. */
static int hold(struct r4_db *db, const r4_key *sdkey, r4_file **out)
{
	struct r4_file *f = r4_calloc(1, sizeof(*f));
	struct r4_held *h;

	if (!f)
		return -ENOMEM;
	if (!(h = held_find(db, sdkey))) {
		if (!(h = r4_calloc(1, sizeof(*h)))) {
			r4_free(f);
			return -ENOMEM;
		}
		h->sdkey = *sdkey;
		h->next = db->held;
		db->held = h;
	}
	h->refs++;
	f->db = db;
	f->held = h;
	f->key = *sdkey;
	f->seen = h->lost;
	f->oflags = -1;
	*out = f;
	return 0;
}

/* f was found as name in directory dir (its way, for r4_perm_reach). */
static int set_up(r4_file *f, const r4_key *dir, const char *name, size_t len)
{
	char *n = r4_memdup(name, len);

	if (!n)
		return -ENOMEM;
	r4_free(f->upname);
	f->upname = n;
	f->uplen = len;
	f->up = *dir;
	f->has_up = true;
	return 0;
}

/* The held object at sdkey (if any) was last met as name in dir: where
 * its audit records say it is (audit_obj).  Without memory the old name
 * stays, which audit_obj checks. */
static void held_way(struct r4_db *db, const r4_key *sdkey, const r4_key *dir, const char *name,
		     size_t len)
{
	struct r4_held *h = held_find(db, sdkey);
	char *n;

	if (!h || !(n = r4_memdup(name, len)))
		return;
	r4_free(h->way_name);
	h->way_name = n;
	h->way_len = len;
	h->way_dir = *dir;
}

/* A handle on sdkey found as name in dir. */
static int hold_at(struct r4_db *db, const r4_key *sdkey, const r4_key *dir, const char *name,
		   size_t len, r4_file **out)
{
	r4_file *f;
	int rc = hold(db, sdkey, &f);

	if (!rc && (rc = set_up(f, dir, name, len)))
		r4_file_close(f);
	if (!rc) {
		held_way(db, sdkey, dir, name, len);
		*out = f;
	}
	return rc;
}

/* The way to f's object, for the acting identity (an opened handle, one
 * open(2) checked, needs none). */
static int file_reach(r4_file *f, const struct r4_inode *ino)
{
	const struct r4_ident *who = r4_perm_checked(f->db);

	if (!who || f->oflags >= 0)
		return 0;
	return r4_db_seen(f->db, r4_perm_reach(f->db, who, ino, f->has_up ? &f->up : NULL,
					       f->upname, f->uplen));
}

/* Through a handle not opened: the way, and want (4, 2) on the object. */
static int file_may(r4_file *f, const struct r4_inode *ino, unsigned want)
{
	const struct r4_ident *who = r4_perm_checked(f->db);
	struct r4_stat st;
	int rc;

	if (!who || f->oflags >= 0)
		return 0;
	if ((rc = file_reach(f, ino)))
		return rc;
	r4_fs_stat_of(f->db, ino, &st);
	return r4_perm_may(f->db, who, &st, want) ? 0 : -EACCES;
}

/* May f write its object's body (a write, a fallocate; adds: one that
 * only adds, r4_perm_flags_body): a regular file, a handle opened for
 * writing, or the way and write permission. */
static int file_may_write(r4_file *f, const struct r4_inode *ino, bool adds)
{
	int rc = has_body(ino);

	if (rc || (rc = r4_perm_flags_body(r4_perm_flags_of(&ino->sd), adds)))
		return rc;
	return (f->oflags & O_ACCMODE) == O_RDONLY ? -EBADF : file_may(f, ino, 2);
}

/* ---- audit records of the handle calls (audit.c) ----
 *
 * Each change through a handle records, for the acting identity, what
 * docs/semantics.md says, read and grabbed for before it changes anything.
 * PATH: an entry's, from its directory (r4_audit_path climbs ".."); an
 * object's, a directory's own path, else where it was last met (held_way,
 * or the handle's way) while that name still leads to it, else another
 * name of it in that directory, else the name it went by.
 */

static uint32_t actor_uid(const struct r4_db *db)
{
	const struct r4_ident *who = r4_perm_actor(db);

	return who ? who->uid : 0;
}

/* A log that is gone refuses every change of what it audits (ENOENT, all
 * a handle call can say): the host's log says which log and how to go on.
 * The setting is the object's at entry name of dir (len 0: dir's). */
static void log_gone(struct r4_db *db, const char *lp, const r4_key *dir, const char *name,
		     size_t len)
{
	char *p = NULL;

	if (!r4_audit_path(db, dir, name, len, &p))
		r4_log(&db->lg, R4_LOG_WARN, "cannot audit '%s': the audit log '%s' is missing "
		       "(make it again, or turn auditing off: %s%s..audit <- \"\")", p, lp,
		       strcmp(p, "/") ? p : "", "/");
	r4_free(p);
}

/* The record of op on object oid, at entry name of directory dir. */
static int audit_entry(struct r4_db *db, struct r4_audit *a, uint64_t oid, const r4_key *dir,
		       const char *name, size_t len, const char *op, uint64_t n)
{
	char *lp = NULL, *path = NULL;
	r4_key log;
	bool on;
	int rc = r4_audit_of(db, oid, &log, &lp, &on);

	if ((rc == -ENOENT || rc == -ENOTDIR) && lp)
		log_gone(db, lp, dir, name, oid == r4_key_objectid(dir) ? 0 : len);
	if (!rc && on && !(rc = r4_audit_path(db, dir, name, len, &path)))
		rc = r4_audit_add(db, a, actor_uid(db), oid, &log, op, path, n);
	r4_free(path);
	r4_free(lp);
	return rc;
}

struct other_name {
	uint64_t oid;
	char *name;
	size_t len;
};

static int other_name_fn(void *ctx, const char *name, size_t len, const r4_key *sdkey)
{
	struct other_name *o = ctx;

	if (r4_key_objectid(sdkey) != o->oid || r4_ns_dot(name, len))
		return 0;
	if (!(o->name = r4_memdup(name, len)))
		return -ENOMEM;
	o->len = len;
	return 1;
}

/* The path of non-directory ino met as name in dir (see above). */
static int way_path(struct r4_db *db, const struct r4_inode *ino, const r4_key *dir,
		    const char *name, size_t len, char **out)
{
	struct other_name o = {r4_key_objectid(&ino->sdkey), NULL, 0};
	struct r4_dirpos pos = {0};
	struct r4_inode d;
	r4_key k;
	int rc = r4_obj_load(db, dir, &d);

	if (rc == -ENOENT) {	/* its directory went too: the name alone */
		*out = r4_memdup(name, len);
		return *out ? 0 : -ENOMEM;
	}
	if (rc)
		return rc;
	rc = r4_dir_lookup(db, &d, name, len, &k);
	if ((rc == -ENOENT || (!rc && r4_key_cmp(&k, &ino->sdkey))) &&
	    !(rc = r4_dir_iterate(db, &d, &pos, other_name_fn, &o)) && o.name) {
		/* the name it went by is gone: another in dir, met from now on */
		held_way(db, &ino->sdkey, dir, o.name, o.len);
		name = o.name;
		len = o.len;
	}
	r4_obj_fini(&d);
	if (!rc)
		rc = r4_audit_path(db, dir, name, len, out);
	r4_free(o.name);
	return rc;
}

/* The record of op on f's object ino (a write, a truncate, a setattr). */
static int audit_obj(r4_file *f, struct r4_audit *a, const struct r4_inode *ino, const char *op,
		     uint64_t n)
{
	struct r4_db *db = f->db;
	struct r4_held *h = held_find(db, &f->key);
	char *lp = NULL, *path = NULL;
	r4_key log;
	bool on;
	int rc = r4_audit_of(db, r4_key_objectid(&ino->sdkey), &log, &lp, &on);

	if ((rc == -ENOENT || rc == -ENOTDIR) && lp) {
		if (S_ISDIR(ino->sd.sd_mode))
			log_gone(db, lp, &ino->sdkey, NULL, 0);
		else if (h && h->way_name)
			log_gone(db, lp, &h->way_dir, h->way_name, h->way_len);
		else if (f->has_up)
			log_gone(db, lp, &f->up, f->upname, f->uplen);
	}
	if (rc || !on)
		goto out;
	if (h && h->way_name)
		rc = way_path(db, ino, &h->way_dir, h->way_name, h->way_len, &path);
	else if (f->has_up && !S_ISDIR(ino->sd.sd_mode))
		rc = way_path(db, ino, &f->up, f->upname, f->uplen, &path);
	else	/* a directory (or the root: no way) */
		rc = r4_audit_path(db, &ino->sdkey, NULL, 0, &path);
	if (!rc)
		rc = r4_audit_add(db, a, actor_uid(db), r4_key_objectid(&ino->sdkey), &log, op, path,
				  n);
out:
	r4_free(path);
	r4_free(lp);
	return rc;
}

/* Removing ino's name destroys it (no handle keeps it)? */
static bool destroys(struct r4_db *db, const struct r4_inode *ino)
{
	return S_ISDIR(ino->sd.sd_mode) || (ino->sd.sd_nlink <= 1 && !held_find(db, &ino->sdkey));
}

int r4_file_open(r4_db *db, const char *path, r4_file **out)
{
	struct r4_inode ino;
	struct at a;
	int rc;

	if ((rc = check_path(path)) || (rc = resolve(db, path, &ino)))
		return r4_db_seen(db, rc);
	/* (its way: the directory it is in, for its records' PATH) */
	if (!strcmp(path, "/") || (rc = resolve_parent(db, path, &a.dir, &a.name, &a.len))) {
		rc = hold(db, &ino.sdkey, out);
	} else {
		rc = hold_at(db, &ino.sdkey, &a.dir.sdkey, a.name, a.len, out);
		r4_obj_fini(&a.dir);
	}
	if (!rc)
		(*out)->oflags = O_RDWR;	/* (a trusted open) */
	r4_obj_fini(&ino);
	return rc;
}

int r4_file_dup(r4_file *f, r4_file **out)
{
	r4_file *g;
	int rc = hold(f->db, &f->key, &g);

	if (!rc && f->has_up && (rc = set_up(g, &f->up, f->upname, f->uplen)))
		r4_file_close(g);
	if (rc)
		return rc;
	*out = g;
	return 0;
}

/* One hold less on h; the last removes an orphan. */
static int unhold(struct r4_db *db, struct r4_held *h)
{
	struct r4_held **pp;
	struct r4_txn_op op;
	int rc = 0;

	if (--h->refs)
		return 0;
	for (pp = &db->held; *pp != h; pp = &(*pp)->next)
		;
	*pp = h->next;
	if (db->rw && h->orphaned) {
		struct r4_inode ino;

		/* an orphan goes with its last handle */
		if (!(rc = r4_obj_load(db, &h->sdkey, &ino))) {
			bool orphan = ino.sd.sd_nlink == 0 && !S_ISDIR(ino.sd.sd_mode);

			r4_obj_fini(&ino);
			if (orphan && !(rc = r4_txn_op_begin(db, &op)))
				rc = r4_txn_op_end(db, &op, finish_orphan(db, &h->sdkey));
		} else if (rc == -ENOENT) {
			rc = 0;
		}
	}
	r4_free(h->way_name);
	r4_free(h);
	return rc;
}

int r4_file_close(r4_file *f)
{
	struct r4_held *h;
	struct r4_db *db;

	if (!f)
		return 0;
	db = f->db;
	h = f->held;
	r4_free(f->upname);
	r4_free(f);
	return h ? unhold(db, h) : 0;
}

uint64_t r4_file_id(const r4_file *f)
{
	return r4_key_objectid(&f->key);
}

int r4_file_error(r4_file *f, bool report)
{
	struct r4_held *h = f->held;

	if (!h || h->lost == f->seen)
		return 0;
	if (report)
		f->seen = h->lost;
	return -EIO;
}

int r4_file_weaken(r4_file *f)
{
	struct r4_held *h = f->held;

	f->held = NULL;
	return h ? unhold(f->db, h) : 0;
}

/* The held object, loaded. */
static int file_load(r4_file *f, struct r4_inode *ino)
{
	int rc = r4_obj_load(f->db, &f->key, ino);

	/* gone from under its handle: a weak one's last name went, or an abort
	   undid its creation */
	return r4_db_seen(f->db, rc == -ENOENT ? -ESTALE : rc);
}

/* A held directory and one component of it (fresh: a name to make). */
static int at_file(r4_file *d, const char *name, size_t len, bool fresh, struct at *a)
{
	int rc;

	if (!len || memchr(name, '/', len) || memchr(name, 0, len))
		return -EINVAL;
	if (len > R4_NAME_MAX)
		return -ENAMETOOLONG;
	if ((rc = file_load(d, &a->dir)))
		return rc;
	if (!S_ISDIR(a->dir.sd.sd_mode)) {
		r4_obj_fini(&a->dir);
		return -ENOTDIR;
	}
	if (r4_ns_private(in_root(&a->dir), name, len)) {
		r4_obj_fini(&a->dir);
		return fresh ? -EPERM : -ENOENT;	/* r4's own records (meta.c) */
	}
	/* search on it and every directory above it */
	if ((rc = r4_perm_search(d->db, r4_perm_checked(d->db), &a->dir))) {
		r4_obj_fini(&a->dir);
		return r4_db_seen(d->db, rc);
	}
	a->name = name;
	a->len = len;
	return 0;
}

/* The stat of f's object, reached by the acting identity.  A directory
 * removed while a handle (any) held it answers as it was then, with
 * nlink 0, as long as one does (ext4's inode of a removed directory
 * lives to its last close); there is no way to it left to check. */
int r4_file_stat(r4_file *f, struct r4_stat *st)
{
	struct r4_inode ino;
	struct r4_held *h;
	int rc = file_load(f, &ino);

	if (rc == -ESTALE && (h = held_find(f->db, &f->key)) && h->removed) {
		*st = h->last;
		return 0;
	}
	if (rc)
		return rc;
	if (!(rc = file_reach(f, &ino)))
		r4_fs_stat_of(f->db, &ino, st);
	r4_obj_fini(&ino);
	return rc;
}

int r4_file_read(r4_file *f, uint64_t off, void *buf, size_t len, size_t *got)
{
	struct r4_inode ino;
	int rc;

	if ((rc = file_load(f, &ino)))
		return rc;
	rc = S_ISDIR(ino.sd.sd_mode) ? -EISDIR : !S_ISREG(ino.sd.sd_mode) ? -EINVAL
	     : (rc = file_may(f, &ino, 4)) ? rc : r4_reg_read(f->db, &ino, off, buf, len, got);
	r4_obj_fini(&ino);
	return r4_db_seen(f->db, rc);
}

int r4_file_seek(r4_file *f, uint64_t off, int whence, uint64_t *out)
{
	struct r4_inode ino;
	int rc;

	if (whence != SEEK_DATA && whence != SEEK_HOLE)
		return -EINVAL;
	if ((rc = file_load(f, &ino)))
		return rc;
	rc = !S_ISREG(ino.sd.sd_mode) ? -EINVAL : (rc = file_reach(f, &ino)) ? rc
	     : r4_reg_seek(f->db, &ino, off, whence == SEEK_HOLE, out);
	r4_obj_fini(&ino);
	return r4_db_seen(f->db, rc);
}

int r4_file_readdir(r4_file *f, struct r4_dirpos *pos, r4_dirent_fn fn, void *ctx)
{
	struct rd_ctx r = {.db = f->db, .fn = fn, .ctx = ctx};
	struct r4_inode dir;
	int rc;

	if ((rc = file_load(f, &dir)))
		return rc == -ESTALE ? 0 : rc;	/* removed while open: no entries */
	r.root = in_root(&dir);
	rc = !S_ISDIR(dir.sd.sd_mode) ? -ENOTDIR : (rc = file_may(f, &dir, 4)) ? rc
	     : r4_dir_iterate(f->db, &dir, pos, rd_fn, &r);
	r4_obj_fini(&dir);
	return r4_db_seen(f->db, rc);
}

struct seek_ctx {
	const struct r4_dirpos *at;	/* the listing's cursor */
	struct r4_dirpos found;
	uint64_t tell;
};

static int seek_fn(void *ctx, const char *name, size_t len, const r4_key *sdkey)
{
	struct seek_ctx *s = ctx;

	(void)name;
	(void)len;
	(void)sdkey;
	if (r4_dirpos_tell(s->at) != s->tell)
		return 0;
	s->found = *s->at;	/* (the cursor goes back before it: the stop) */
	return 1;
}

int r4_file_dirseek(r4_file *f, uint64_t tell, struct r4_dirpos *pos)
{
	struct r4_dirpos at = {0};
	struct seek_ctx s = {.at = &at, .tell = tell};
	struct r4_inode dir;
	int rc;

	if (!tell) {
		*pos = at;
		return 0;
	}
	if ((rc = file_load(f, &dir)))
		return rc == -ESTALE ? -EINVAL : rc;	/* removed while open: no entries */
	rc = !S_ISDIR(dir.sd.sd_mode) ? -ENOTDIR : (rc = file_may(f, &dir, 4)) ? rc
	     : r4_dir_iterate(f->db, &dir, &at, seek_fn, &s);
	r4_obj_fini(&dir);
	if (!rc && !s.found.started)
		rc = -EINVAL;
	if (!rc)
		*pos = s.found;
	return r4_db_seen(f->db, rc);
}

/* A change through an open file: r4_file_write, _append (sa NULL: the
 * bytes buf[0, len) at off, or at the end) and r4_file_setattr (sa).
 * Checked for the opener, audited, applied: one operation. */
static int file_change(r4_file *f, uint64_t off, bool append, const void *buf, size_t len,
		       const struct r4_setattr *sa)
{
	struct r4_setattr s = sa ? *sa : (struct r4_setattr){0};
	bool size = s.mask & R4_SET_SIZE;
	const char *what = sa ? (size ? "truncate" : "setattr") : append ? "append" : "write";
	struct r4_audit au = {0};
	struct r4_inode ino;
	struct r4_stat st;
	struct r4_txn_op op;
	int rc;

	if ((rc = r4_txn_op_begin(f->db, &op)))
		return rc;
	op.held = f->held;
	if ((rc = file_load(f, &ino)))
		goto out;
	r4_fs_stat_of(f->db, &ino, &st);
	if (sa) {
		bool writer = f->oflags >= 0 && (f->oflags & O_ACCMODE) != O_RDONLY;

		/* a size set is a truncate (with the times it sets), else a setattr */
		if (!(rc = file_reach(f, &ino)))
			rc = r4_perm_setattr(f->db, r4_perm_checked(f->db), &st, &s, writer);
	} else {
		rc = file_may_write(f, &ino, append || off == st.size);
	}
	if (rc || (rc = audit_obj(f, &au, &ino, what, sa ? (size ? s.size : 0) : len)) ||
	    (rc = r4_audit_grab(f->db, &au)))
		goto fini;
	if (sa) {
		r4_perm_setattr_effects(r4_perm_actor(f->db), &st, &s);
		rc = apply_setattr(f->db, &ino, &s);
	} else {
		/* a write drops set-id bits (saved with the write) */
		ino.sd.sd_mode = (uint16_t)r4_perm_after_write(r4_perm_actor(f->db), &st);
		rc = r4_reg_write(f->db, &ino, append ? st.size : off, buf, len);
	}
	if (!rc)
		rc = r4_audit_write(f->db, &au);
fini:
	r4_obj_fini(&ino);
out:
	r4_audit_fini(&au);
	return r4_txn_op_end(f->db, &op, rc);
}

int r4_file_write(r4_file *f, uint64_t off, const void *buf, size_t len)
{
	return file_change(f, off, false, buf, len, NULL);
}

int r4_file_append(r4_file *f, const void *buf, size_t len)
{
	return file_change(f, 0, true, buf, len, NULL);
}

int r4_file_setattr(r4_file *f, const struct r4_setattr *sa)
{
	return file_change(f, 0, false, NULL, 0, sa);
}

int r4_file_setflags(r4_file *f, uint32_t flags, uint32_t mask)
{
	struct r4_db *db = f->db;
	struct r4_audit au = {0};
	struct r4_inode ino;
	struct r4_stat st;
	struct r4_txn_op op;
	uint32_t word;
	int rc;

	if ((rc = r4_txn_op_begin(db, &op)))
		return rc;
	op.held = f->held;
	if ((rc = file_load(f, &ino)))
		goto out;
	r4_fs_stat_of(db, &ino, &st);
	word = ino.sd.sd_flags;
	if (!S_ISREG(st.mode) && !S_ISDIR(st.mode))
		rc = -ENOTTY;	/* (what ioctl(2) answers for them) */
	else if (!(rc = file_reach(f, &ino)) &&
		 !(rc = r4_perm_flags_set(r4_perm_checked(db), &st, flags, mask, &word)) &&
		 !(rc = audit_obj(f, &au, &ino, "setattr", 0)) && !(rc = r4_audit_grab(db, &au)) &&
		 !(rc = r4_txn_grab(db, E(db), false))) {	/* its stat data, grown */
		if (word || r4_sd_has(&ino.sd, R4_SDEXT_FLAGS))
			ino.sd.sd_mask |= UINT64_C(1) << R4_SDEXT_FLAGS;
		ino.sd.sd_flags = word;
		r4_obj_touch(db, &ino, false, true);
		if (!(rc = r4_obj_save(db, &ino)))
			rc = r4_audit_write(db, &au);
	}
	r4_obj_fini(&ino);
out:
	r4_audit_fini(&au);
	return r4_txn_op_end(db, &op, rc);
}

/* ---- extended attributes (xattr.c keeps them, perm.c decides) ---- */

/* f's object, loaded, for want (4, 2) of its attribute name: the way to
 * it and r4_perm_xattr.  (An opened handle asks for no way.) */
static int xattr_at(r4_file *f, const char *name, unsigned want, struct r4_inode *ino,
		    struct r4_stat *st)
{
	int rc = file_load(f, ino);

	if (rc)
		return rc;
	r4_fs_stat_of(f->db, ino, st);
	if ((rc = file_reach(f, ino)) ||
	    (rc = r4_perm_xattr(f->db, r4_perm_checked(f->db), st, name, want)))
		r4_obj_fini(ino);
	return r4_db_seen(f->db, rc);
}

/* bytes p[0, n) to a caller's buf[0, size) as getxattr(2) answers. */
static int xattr_reply(const void *p, size_t n, void *buf, size_t size, size_t *len)
{
	*len = n;
	if (size && n > size)
		return -ERANGE;
	if (size && n)
		memcpy(buf, p, n);
	return 0;
}

int r4_file_getxattr(r4_file *f, const char *name, void *buf, size_t size, size_t *len)
{
	struct r4_xattrs x;
	struct r4_inode ino;
	struct r4_stat st;
	const uint8_t *v;
	size_t n;
	int rc;

	*len = 0;
	if ((rc = r4_xattr_name(name, false)) || (rc = xattr_at(f, name, 4, &ino, &st)))
		return rc;
	if (!(rc = r4_xattr_load(f->db, st.ino, &x))) {
		if (!(rc = r4_xattr_find(&x, name, &v, &n)))
			rc = xattr_reply(v, n, buf, size, len);
		r4_xattr_fini(&x);
	}
	r4_obj_fini(&ino);
	return r4_db_seen(f->db, rc);
}

int r4_file_listxattr(r4_file *f, char *buf, size_t size, size_t *len)
{
	const struct r4_ident *who = r4_perm_actor(f->db);
	struct r4_buf names = {0};
	struct r4_xattrs x;
	struct r4_inode ino;
	const uint8_t *v;
	const char *n;
	size_t at = 0, nl, vl;
	int rc;

	*len = 0;
	if ((rc = file_load(f, &ino)))
		return rc;
	if (!(rc = file_reach(f, &ino)) && !(rc = r4_xattr_load(f->db, r4_file_id(f), &x))) {
		while (!rc && r4_xattr_next(&x, &at, &n, &nl, &v, &vl)) {
			char name[R4_XATTR_NAME_MAX + 1];

			memcpy(name, n, nl);
			name[nl] = 0;
			if (r4_perm_xattr_listed(who, name))
				rc = r4_buf_add(&names, name, nl + 1);
		}
		if (!rc)
			rc = xattr_reply(names.p, names.len, buf, size, len);
		r4_xattr_fini(&x);
	}
	r4_buf_free(&names);
	r4_obj_fini(&ino);
	return r4_db_seen(f->db, rc);
}

/*
 * ACL name of the object ino (st) in x: acl set (mode: ino's, the setter
 * who), or removed (acl NULL) as Linux's set_acl does: an access ACL sets
 * the permission bits it implies and stores only what they cannot say
 * (posix_acl_update_mode: a setter neither root nor in the group loses
 * setgid); a removal of none is no error.
 */
static int acl_apply(const struct r4_ident *who, struct r4_inode *ino, const struct r4_stat *st,
		     struct r4_xattrs *x, const char *name, struct r4_acl *acl)
{
	struct r4_buf b = {0};
	uint32_t mode = st->mode;
	int rc;

	if (acl && !strcmp(name, R4_ACL_ACCESS)) {
		if (r4_acl_mode(acl, &mode))
			acl = NULL;	/* the mode says it all */
		if (who && who->uid && !r4_in_group(who, st->gid))
			mode &= ~(uint32_t)S_ISGID;
		ino->sd.sd_mode = (uint16_t)mode;
	}
	if (!acl)
		return (rc = r4_xattr_remove(x, name)) == -ENODATA ? 0 : rc;
	if (!(rc = r4_acl_encode(acl, &b)))
		rc = r4_xattr_set(x, name, b.p, b.len, 0);
	r4_buf_free(&b);
	return rc;
}

/* Set name of f's object to value[0, n) as flags say, or remove it (ACL
 * name: to acl, or remove it when acl has no entries): checked for the
 * acting identity, audited, stored, in one operation. */
static int xattr_change(r4_file *f, const char *name, const void *value, size_t n, int flags,
			bool remove, struct r4_acl *acl)
{
	struct r4_audit au = {0};
	struct r4_xattrs x = {0};
	struct r4_inode ino;
	struct r4_stat st;
	struct r4_txn_op op;
	int rc;

	if ((rc = r4_txn_op_begin(f->db, &op)))
		return rc;
	op.held = f->held;
	if ((rc = xattr_at(f, name, remove ? 3 : 2, &ino, &st))) {
		/* (removing a default ACL of a non-directory: nothing, as Linux) */
		if (rc == -EACCES && acl && !acl->n && !strcmp(name, R4_ACL_DEFAULT) &&
		    !r4_file_stat(f, &st) && !S_ISDIR(st.mode))
			rc = 0;
		goto out;
	}
	if ((rc = r4_perm_flags_xattr(st.flags)) || (acl && acl->n && (rc = r4_acl_valid(acl))))
		goto fini;
	if (!(rc = r4_xattr_load(f->db, st.ino, &x)))
		rc = acl ? acl_apply(r4_perm_actor(f->db), &ino, &st, &x, name, acl->n ? acl : NULL)
		   : remove ? r4_xattr_remove(&x, name) : r4_xattr_set(&x, name, value, n, flags);
	/* the record, the object's ctime, then what it stores */
	if (!rc && !(rc = audit_obj(f, &au, &ino, "setattr", 0)) &&
	    !(rc = r4_audit_grab(f->db, &au)) && !(rc = r4_txn_grab(f->db, E(f->db), remove)) &&
	    !(rc = r4_xattr_store(f->db, st.ino, &x, remove))) {
		r4_obj_touch(f->db, &ino, false, true);
		if (!(rc = r4_obj_save(f->db, &ino)))
			rc = r4_audit_write(f->db, &au);
	}
fini:
	r4_obj_fini(&ino);
out:
	r4_xattr_fini(&x);
	r4_audit_fini(&au);
	return r4_txn_op_end(f->db, &op, rc);
}

int r4_file_setxattr(r4_file *f, const char *name, const void *value, size_t size, int flags)
{
	struct r4_acl acl;
	int rc;

	if (flags & ~(R4_XATTR_CREATE | R4_XATTR_REPLACE))
		return -EINVAL;
	if ((rc = r4_xattr_name(name, true)))
		return rc;
	if (size > R4_XATTR_SIZE_MAX)
		return -E2BIG;
	if (!r4_acl_name(name))
		return xattr_change(f, name, value, size, flags, false, NULL);
	/* (an ACL's flags say nothing, as Linux's) */
	if ((rc = r4_acl_parse(value, size, &acl)))
		return rc;
	rc = xattr_change(f, name, NULL, 0, 0, !acl.n, &acl);
	r4_acl_free(&acl);
	return rc;
}

int r4_file_removexattr(r4_file *f, const char *name)
{
	struct r4_acl none = {0};
	int rc = r4_xattr_name(name, false);

	return rc ? rc : xattr_change(f, name, NULL, 0, 0, true, r4_acl_name(name) ? &none : NULL);
}

/* A fallocate: where its zeros go (r4_reg_fill_spans), the pieces they
 * are written in (r4_reg_fill_piece, r4_reg_fill_next) and where their
 * walk is, and a buffer of zeros. */
struct fill {
	r4_file *f;
	unsigned mode;
	uint64_t off, len;
	struct r4_span *v;
	size_t n, i;
	uint64_t piece, o;
	uint8_t *buf;
};

/*
 * Its first operation: checked, audited, set-id bits dropped; a punch,
 * collapse or insert done (its only operation); else room for every piece
 * checked, and the first piece written.  When the spans fit
 * in one piece, that piece runs from the first to the end of the last,
 * with the file's data between them read back and written again, and is
 * the only one (all of it one operation).
 */
static int fill_first(struct fill *fl)
{
	r4_file *f = fl->f;
	struct r4_db *db = f->db;
	struct r4_audit au = {0};
	struct r4_inode ino;
	struct r4_stat st;
	struct r4_txn_op op;
	uint64_t end = fl->off + fl->len, k = 0, cost, most = 0;
	size_t got = 0;
	bool whole;
	int rc;

	if ((rc = r4_txn_op_begin(db, &op)))
		return rc;
	op.held = f->held;
	if ((rc = file_load(f, &ino)))
		goto out;
	r4_fs_stat_of(db, &ino, &st);
	if ((rc = file_may_write(f, &ino, !(fl->mode & ~R4_FALLOC_KEEP_SIZE))))
		goto fini;
	if (fl->mode & (R4_FALLOC_PUNCH_HOLE | R4_FALLOC_COLLAPSE_RANGE | R4_FALLOC_INSERT_RANGE)) {
		if (!(rc = audit_obj(f, &au, &ino, "write", fl->len)) &&
		    !(rc = r4_audit_grab(db, &au))) {
			ino.sd.sd_mode = (uint16_t)r4_perm_after_write(r4_perm_actor(db), &st);
			rc = fl->mode & R4_FALLOC_PUNCH_HOLE
				     ? r4_reg_punch(db, &ino, fl->off, end)
				     : r4_reg_shift(db, &ino, fl->off, fl->len,
						    fl->mode == R4_FALLOC_INSERT_RANGE);
			if (!rc)
				rc = r4_audit_write(db, &au);
		}
		goto fini;
	}
	if ((fl->mode & R4_FALLOC_KEEP_SIZE) && end > st.size) {
		rc = -EOPNOTSUPP;	/* blocks past the end: none in r4 */
		goto fini;
	}
	fl->piece = r4_reg_fill_piece(&ino);
	if ((rc = r4_reg_fill_spans(db, &ino, fl->off, end, fl->mode & R4_FALLOC_ZERO_RANGE,
				    &fl->v, &fl->n)) ||
	    (rc = audit_obj(f, &au, &ino, "write", fl->len)))
		goto fini;
	if ((whole = fl->n && fl->v[fl->n - 1].end - fl->v[0].off <= fl->piece)) {
		fl->v[0].end = fl->v[fl->n - 1].end;
		fl->n = 1;
	} else if ((rc = r4_reg_fill_cost(db, &ino, fl->v, fl->n, fl->piece, &cost)) ||
		   (rc = r4_txn_room(db, cost, false))) {
		goto fini;
	}
	for (size_t j = 0; j < fl->n; j++)
		most = R4_MAX(most, R4_MIN(fl->v[j].end - fl->v[j].off, fl->piece));
	if ((rc = r4_audit_grab(db, &au)))
		goto fini;
	if (most && !(fl->buf = r4_calloc(1, most))) {
		rc = -ENOMEM;
		goto fini;
	}
	fl->o = fl->n ? fl->v[0].off : 0;
	if (whole) {
		k = fl->v[0].end - fl->o;
		fl->i = fl->n;	/* (the only piece) */
	} else {
		r4_reg_fill_next(fl->v, fl->n, fl->piece, &fl->i, &fl->o, &k);
	}
	if (whole && !(fl->mode & R4_FALLOC_ZERO_RANGE) &&
	    (rc = r4_reg_read(db, &ino, fl->o, fl->buf, k, &got)))
		goto fini;
	/* as a write: set-id bits go, the times are stamped */
	ino.sd.sd_mode = (uint16_t)r4_perm_after_write(r4_perm_actor(db), &st);
	if (k) {
		rc = r4_reg_write(db, &ino, fl->o, fl->buf, k);
	} else if (!(rc = r4_txn_grab(db, E(db), false))) {
		r4_obj_touch(db, &ino, true, true);
		rc = r4_obj_save(db, &ino);
	}
	if (!rc)
		rc = r4_audit_write(db, &au);
	fl->o += k;
fini:
	r4_obj_fini(&ino);
out:
	r4_audit_fini(&au);
	return r4_txn_op_end(db, &op, rc);
}

/* One more piece of zeros, an operation of its own. */
static int fill_piece(struct fill *fl, uint64_t k)
{
	struct r4_inode ino;
	struct r4_txn_op op;
	int rc;

	if ((rc = r4_txn_op_begin(fl->f->db, &op)))
		return rc;
	op.held = fl->f->held;
	if (!(rc = file_load(fl->f, &ino))) {
		rc = r4_reg_write(fl->f->db, &ino, fl->o, fl->buf, k);
		r4_obj_fini(&ino);
	}
	return r4_txn_op_end(fl->f->db, &op, rc);
}

int r4_file_fallocate(r4_file *f, unsigned mode, uint64_t off, uint64_t len)
{
	struct fill fl = {.f = f, .mode = mode, .off = off, .len = len};
	uint64_t k;
	int rc;

	if (!len)
		return -EINVAL;
	/* one mode, and KEEP_SIZE, which PUNCH_HOLE needs and COLLAPSE_RANGE
	 * and INSERT_RANGE refuse (Linux's vfs_fallocate) */
	switch (mode & ~(unsigned)R4_FALLOC_KEEP_SIZE) {
	case 0:
	case R4_FALLOC_ZERO_RANGE:
		break;
	case R4_FALLOC_PUNCH_HOLE:
		if (!(mode & R4_FALLOC_KEEP_SIZE))
			return -EOPNOTSUPP;
		break;
	case R4_FALLOC_COLLAPSE_RANGE:
	case R4_FALLOC_INSERT_RANGE:
		if (mode & R4_FALLOC_KEEP_SIZE)
			return -EOPNOTSUPP;
		break;
	default:
		return -EOPNOTSUPP;
	}
	if (off + len < off || off + len > ((uint64_t)1 << 62))
		return -EFBIG;
	rc = fill_first(&fl);
	while (!rc && r4_reg_fill_next(fl.v, fl.n, fl.piece, &fl.i, &fl.o, &k)) {
		rc = fill_piece(&fl, k);
		fl.o += k;
	}
	r4_free(fl.v);
	r4_free(fl.buf);
	return rc;
}

int r4_fs_set_plugin(struct r4_db *db, const char *path, unsigned member, unsigned id)
{
	struct r4_inode ino;
	struct r4_txn_op op;
	bool empty;
	int rc;

	if ((rc = check_path(path)) || (rc = r4_txn_op_begin(db, &op)))
		return rc;
	if (!(rc = resolve(db, path, &ino))) {
		if (member == R4_PSET_FORMATTING && S_ISREG(ino.sd.sd_mode)) {
			rc = r4_reg_reformat(db, &ino, id);
		} else if (member == R4_PSET_HASH && S_ISDIR(ino.sd.sd_mode)) {
			/* "." and ".." are keyed by their bytes, not hashed: an
			 * empty directory changes no key */
			if (!(rc = r4_dir_is_empty(db, &ino, &empty)) && !empty)
				rc = -ENOTEMPTY;
			if (!rc && !(rc = r4_txn_grab(db, E(db), false))) {
				r4_obj_set_plugin(db, &ino, R4_PSET_HASH, id);
				ino.hash = id;
				r4_obj_touch(db, &ino, false, true);
				rc = r4_obj_save(db, &ino);
			}
		} else {
			rc = -EOPNOTSUPP;
		}
		r4_obj_fini(&ino);
	}
	return r4_txn_op_end(db, &op, rc);
}

/* The object goes, and what r4 knew of it (meta.c, xattr.c).  A held one
 * (a directory: never an orphan) leaves its handles its stat, nlink 0
 * (r4_file_stat). */
static int destroy(struct r4_db *db, struct r4_inode *ino)
{
	uint64_t oid = r4_key_objectid(&ino->sdkey);
	struct r4_held *h = held_find(db, &ino->sdkey);
	struct r4_stat last;
	int rc;

	if (h) {
		r4_obj_touch(db, ino, false, true);
		r4_fs_stat_of(db, ino, &last);
		last.nlink = 0;
	}
	if ((rc = r4_obj_destroy(db, ino)) || (rc = r4_meta_drop(db, oid)) ||
	    (rc = r4_xattr_drop(db, oid)))
		return rc;
	if (h) {
		h->removed = true;
		h->last = last;
	}
	return 0;
}

/*
 * One name less for ino: destroyed at nlink 0 (directories at 1: their
 * "..").  An object an r4_file holds stays, with nlink 0 and a safe-link
 * naming it, until the last handle closes (open files).
 */
static int drop_link(struct r4_db *db, struct r4_inode *ino)
{
	bool dir = S_ISDIR(ino->sd.sd_mode);
	struct r4_held *h;
	int rc;

	if (!dir && ino->sd.sd_nlink <= 1 && (h = held_find(db, &ino->sdkey))) {
		h->orphaned = true;
		ino->sd.sd_nlink = 0;
		r4_obj_touch(db, ino, false, true);
		if ((rc = r4_obj_save(db, ino)))
			return rc;
		return safelink_add(db, ino);
	}
	if (dir || ino->sd.sd_nlink <= 1)
		return destroy(db, ino);
	ino->sd.sd_nlink--;
	r4_obj_touch(db, ino, false, true);
	return r4_obj_save(db, ino);
}

/* May the acting identity change the entry of ino in dir (ino NULL: add
 * one)?  Trusted: yes. */
static int may_entry(struct r4_db *db, struct r4_inode *dir, const struct r4_inode *ino)
{
	const struct r4_ident *who = r4_perm_checked(db);
	struct r4_stat d, v;

	if (!who)
		return 0;
	r4_fs_stat_of(db, dir, &d);
	if (ino)
		r4_fs_stat_of(db, ino, &v);
	return r4_perm_entry(db, who, &d, ino ? &v : NULL);
}

/* The records of the name a->name of ino removed (the handle call's):
 * the object's and its directory's, read before the setting goes with the
 * object's last name.  A log that a record goes to is not destroyed. */
static int remove_audit(struct r4_db *db, struct at *a, const struct r4_inode *ino,
			struct r4_audit *au)
{
	uint64_t oid = r4_key_objectid(&ino->sdkey);
	int rc;

	if ((rc = audit_entry(db, au, oid, &a->dir.sdkey, a->name, a->len, "unlink", a->len)) ||
	    (rc = audit_entry(db, au, r4_key_objectid(&a->dir.sdkey), &a->dir.sdkey, a->name,
			      a->len, "unlink", a->len)))
		return rc;
	if (r4_audit_is_log(au, oid) && destroys(db, ino))
		return -EBUSY;
	return r4_audit_grab(db, au);
}

/* Remove a->name; au: a handle call, for the acting identity, recorded. */
static int remove_at(struct r4_db *db, struct at *a, bool want_dir, struct r4_audit *au)
{
	struct r4_inode ino;
	r4_key k;
	int rc;

	if (r4_ns_dot(a->name, a->len))
		return want_dir ? (a->len == 1 ? -EINVAL : -ENOTEMPTY) : -EISDIR;
	if ((rc = r4_dir_lookup(db, &a->dir, a->name, a->len, &k)) ||
	    (rc = r4_obj_load(db, &k, &ino)))
		return rc;
	if ((au && (rc = may_entry(db, &a->dir, &ino))) ||
	    (rc = r4_perm_flags_remove(r4_perm_flags_of(&a->dir.sd), r4_perm_flags_of(&ino.sd)))) {
		/* (refused before anything changed) */
	} else if (want_dir && !S_ISDIR(ino.sd.sd_mode)) {
		rc = -ENOTDIR;
	} else if (!want_dir && S_ISDIR(ino.sd.sd_mode)) {
		rc = -EISDIR;
	} else if (want_dir) {
		bool empty;

		if (!(rc = r4_dir_is_empty(db, &ino, &empty)) && !empty)
			rc = -ENOTEMPTY;
		if (!rc && au)
			rc = remove_audit(db, a, &ino, au);
		if (!rc && !(rc = grab_drop(db, &ino, 0)) &&
		    !(rc = r4_dir_remove(db, &a->dir, a->name, a->len))) {
			a->dir.sd.sd_nlink--;		/* its ".." */
			if (!(rc = r4_obj_save(db, &a->dir)))
				rc = destroy(db, &ino);
		}
	} else if ((!au || !(rc = remove_audit(db, a, &ino, au))) &&
		   !(rc = grab_drop(db, &ino, 0)) &&
		   !(rc = r4_dir_remove(db, &a->dir, a->name, a->len))) {
		rc = drop_link(db, &ino);
	}
	if (!rc && au)
		rc = r4_audit_write(db, au);
	r4_obj_fini(&ino);
	return rc;
}

static int remove_name(struct r4_db *db, const char *path, bool want_dir)
{
	struct at a;
	struct r4_txn_op op;
	int rc;

	if ((rc = check_path(path)) || (rc = r4_txn_op_begin(db, &op)))
		return rc;
	if (!(rc = at_path(db, path, &a))) {
		rc = remove_at(db, &a, want_dir, NULL);
		r4_obj_fini(&a.dir);
	}
	return r4_txn_op_end(db, &op, rc);
}

int r4_unlink(r4_db *db, const char *path)
{
	return remove_name(db, path, false);
}

int r4_rmdir(r4_db *db, const char *path)
{
	return remove_name(db, path, true);
}

/* One more name, a->name, for the loaded object ino. */
static int link_at(struct r4_db *db, struct r4_inode *ino, struct at *a)
{
	int rc;

	if (S_ISDIR(ino->sd.sd_mode))
		return -EPERM;
	if (ino->sd.sd_nlink >= UINT32_MAX - 1)
		return -EMLINK;
	if (!ino->sd.sd_nlink)
		return -ENOENT;	/* an orphan gets no name back (linkat's rule) */
	if (r4_ns_dot(a->name, a->len))
		return -EEXIST;
	if ((rc = r4_perm_flags_link(r4_perm_flags_of(&ino->sd), r4_perm_flags_of(&a->dir.sd))) ||
	    (rc = grab_entry(db, a, 3 * E(db))) ||	/* entry, both stat data */
	    (rc = r4_dir_add(db, &a->dir, a->name, a->len, &ino->sdkey)))
		return rc;
	ino->sd.sd_nlink++;
	r4_obj_touch(db, ino, false, true);
	held_way(db, &ino->sdkey, &a->dir.sdkey, a->name, a->len);
	return r4_obj_save(db, ino);
}

int r4_link(r4_db *db, const char *oldpath, const char *newpath)
{
	struct r4_inode ino;
	struct at a;
	struct r4_txn_op op;
	int rc;

	if ((rc = check_path(oldpath)) || (rc = check_path(newpath)) ||
	    (rc = r4_txn_op_begin(db, &op)))
		return rc;
	if ((rc = resolve(db, oldpath, &ino)))
		return r4_txn_op_end(db, &op, rc);
	if (S_ISDIR(ino.sd.sd_mode)) {
		rc = -EPERM;
	} else if (!(rc = at_path(db, newpath, &a))) {
		rc = link_at(db, &ino, &a);
		r4_obj_fini(&a.dir);
	}
	r4_obj_fini(&ino);
	return r4_txn_op_end(db, &op, rc);
}

/* Is directory `top` an ancestor of (or equal to) directory `d`?  Walks
 * up through ".." entries. */
static int is_ancestor(struct r4_db *db, const r4_key *top, const struct r4_inode *d, bool *yes)
{
	r4_key cur = d->sdkey, root, up;
	struct r4_inode ino;
	int rc;

	r4_obj_root_key(&root);
	*yes = false;
	for (unsigned depth = 0; depth < 100000; depth++) {
		if (!r4_key_cmp(&cur, top)) {
			*yes = true;
			return 0;
		}
		if (!r4_key_cmp(&cur, &root))
			return 0;
		if ((rc = r4_obj_load(db, &cur, &ino)))
			return rc;
		rc = r4_dir_lookup(db, &ino, "..", 2, &up);
		r4_obj_fini(&ino);
		if (rc)
			return rc == -ENOENT ? R4_CORRUPT(&db->lg, 0, "directory without '..'") : rc;
		cur = up;
	}
	return R4_CORRUPT(&db->lg, 0, "loop in the directory tree");
}

/* A directory moved from parent `from` to `to`: its ".." and both nlinks. */
static int move_dir(struct r4_db *db, struct r4_inode *d, struct r4_inode *from,
		    struct r4_inode *to)
{
	int rc;

	if (!r4_key_cmp(&from->sdkey, &to->sdkey))
		return 0;
	if ((rc = r4_dir_retarget(db, d, "..", 2, &to->sdkey)))
		return rc;
	from->sd.sd_nlink--;
	to->sd.sd_nlink++;
	return 0;
}

struct rename_ctx {
	struct r4_inode fdir, tdir, src, dst;
	const char *fname, *tname;
	size_t flen, tlen;
	bool have_dst, same_dir;
	struct r4_audit *au;	/* the handle call: for the acting identity, recorded */
	struct r4_sd wt;	/* R4_RENAME_WHITEOUT: the whiteout's stat data, */
	struct r4_xattrs wx;	/* its attributes (make_plan) */
};

/* renameat2(2)'s flags: EXCHANGE alone, the others in any mix. */
static int check_rename_flags(unsigned flags)
{
	unsigned all = R4_RENAME_NOREPLACE | R4_RENAME_EXCHANGE | R4_RENAME_WHITEOUT;

	return (flags & ~all) || ((flags & R4_RENAME_EXCHANGE) && flags != R4_RENAME_EXCHANGE)
	       ? -EINVAL : 0;
}

static void rename_fini(struct rename_ctx *r)
{
	r4_obj_fini(&r->fdir);
	r4_obj_fini(&r->tdir);
	r4_obj_fini(&r->src);
	r4_obj_fini(&r->dst);
	r4_xattr_fini(&r->wx);
}

/* The whiteout RENAME_WHITEOUT leaves at the old name: a character
 * device 0:0 with mode 0, made as a new object there (its owner, a
 * default ACL's), and what making it grabs (*cost). */
static int whiteout_plan(struct r4_db *db, struct rename_ctx *r, uint64_t *cost)
{
	struct r4_newobj o = {S_IFCHR, 0, 0, 0, NULL};
	struct r4_stat d;
	struct r4_sd t;
	int rc;

	r4_fs_stat_of(db, &r->fdir, &d);
	r4_perm_new(r4_perm_actor(db), &d, r4_fs_default_acl(db, &d), &o.mode, &o.uid, &o.gid);
	if ((rc = newobj_tmpl(&o, &t)))
		return rc;
	return make_plan(db, &r->fdir, r->fname, r->flen, &t, &r->wt, &r->wx, cost);
}

static int rename_exchange(struct r4_db *db, struct rename_ctx *r)
{
	struct r4_inode *tdir = r->same_dir ? &r->fdir : &r->tdir;
	int rc;

	if ((rc = r4_dir_retarget(db, &r->fdir, r->fname, r->flen, &r->dst.sdkey)) ||
	    (rc = r4_dir_retarget(db, tdir, r->tname, r->tlen, &r->src.sdkey)))
		return rc;
	if (S_ISDIR(r->src.sd.sd_mode) && (rc = move_dir(db, &r->src, &r->fdir, tdir)))
		return rc;
	if (S_ISDIR(r->dst.sd.sd_mode) && (rc = move_dir(db, &r->dst, tdir, &r->fdir)))
		return rc;
	return 0;
}

static int rename_move(struct r4_db *db, struct rename_ctx *r)
{
	struct r4_inode *tdir = r->same_dir ? &r->fdir : &r->tdir;
	bool sdir = S_ISDIR(r->src.sd.sd_mode);
	int rc;

	if (r->have_dst) {
		bool ddir = S_ISDIR(r->dst.sd.sd_mode), empty;

		if (sdir && !ddir)
			return -ENOTDIR;
		if (!sdir && ddir)
			return -EISDIR;
		if (ddir && (rc = r4_dir_is_empty(db, &r->dst, &empty)))
			return rc;
		if (ddir && !empty)
			return -ENOTEMPTY;
		if ((rc = r4_dir_retarget(db, tdir, r->tname, r->tlen, &r->src.sdkey)))
			return rc;
		if (ddir)
			tdir->sd.sd_nlink--;
		if ((rc = ddir ? destroy(db, &r->dst) : drop_link(db, &r->dst)))
			return rc;
	} else if ((rc = r4_dir_add(db, tdir, r->tname, r->tlen, &r->src.sdkey))) {
		return rc;
	}
	if ((rc = r4_dir_remove(db, &r->fdir, r->fname, r->flen)))
		return rc;
	if (sdir && (rc = move_dir(db, &r->src, &r->fdir, tdir)))
		return rc;
	return 0;
}

/* Both entries change (in sticky directories: the owners' rule); a
 * directory that moves to another parent changes its "..". */
static int rename_perm(struct r4_db *db, struct rename_ctx *r, unsigned flags)
{
	const struct r4_ident *who = r->au ? r4_perm_checked(db) : NULL;
	struct r4_stat s, d;
	int rc;

	if (!who)
		return 0;
	r4_fs_stat_of(db, &r->src, &s);
	if (r->have_dst)
		r4_fs_stat_of(db, &r->dst, &d);
	if ((rc = may_entry(db, &r->fdir, &r->src)) ||
	    (rc = may_entry(db, r->same_dir ? &r->fdir : &r->tdir, r->have_dst ? &r->dst : NULL)))
		return rc;
	if (r->same_dir)
		return 0;
	if (S_ISDIR(s.mode) && (rc = r4_perm_move_dir(db, who, &s)))
		return rc;
	if (r->have_dst && (flags & R4_RENAME_EXCHANGE) && S_ISDIR(d.mode))
		return r4_perm_move_dir(db, who, &d);
	return 0;
}

/* What the objects' and directories' flags refuse: both entries change. */
static int rename_flags(const struct rename_ctx *r)
{
	uint32_t to = r4_perm_flags_of(r->same_dir ? &r->fdir.sd : &r->tdir.sd);
	int rc = r4_perm_flags_remove(r4_perm_flags_of(&r->fdir.sd), r4_perm_flags_of(&r->src.sd));

	if (rc)
		return rc;
	return r->have_dst ? r4_perm_flags_remove(to, r4_perm_flags_of(&r->dst.sd))
			   : r4_perm_flags_add(to);
}

static int rename_checks(struct r4_db *db, struct rename_ctx *r, unsigned flags)
{
	bool inside;
	int rc;

	if ((rc = rename_perm(db, r, flags)) || (rc = rename_flags(r)))
		return rc;
	if (r4_ns_dot(r->fname, r->flen) || r4_ns_dot(r->tname, r->tlen))
		return -EINVAL;
	if (r->have_dst && (flags & R4_RENAME_NOREPLACE))
		return -EEXIST;
	if (!r->have_dst && (flags & R4_RENAME_EXCHANGE))
		return -ENOENT;
	/* a directory may not move into its own subtree */
	if (S_ISDIR(r->src.sd.sd_mode) &&
	    ((rc = is_ancestor(db, &r->src.sdkey, r->same_dir ? &r->fdir : &r->tdir, &inside)) ||
	     inside))
		return rc ? rc : -EINVAL;
	if (r->have_dst && (flags & R4_RENAME_EXCHANGE) && S_ISDIR(r->dst.sd.sd_mode) &&
	    ((rc = is_ancestor(db, &r->dst.sdkey, &r->fdir, &inside)) || inside))
		return rc ? rc : -EINVAL;
	return 0;
}

/* The records of the handle call's rename: the object's, both
 * directories', at its new path; the one it exchanges with, at its new
 * path, or the one it replaces (unlink), which must not be a log the
 * records go to. */
static int rename_audit(struct r4_db *db, struct rename_ctx *r, unsigned flags)
{
	const r4_key *fk = &r->fdir.sdkey, *tk = &r->tdir.sdkey;
	uint64_t dst = r->have_dst ? r4_key_objectid(&r->dst.sdkey) : 0;
	int rc;

	if ((rc = audit_entry(db, r->au, r4_key_objectid(&r->src.sdkey), tk, r->tname, r->tlen,
			      "rename", r->tlen)) ||
	    (rc = audit_entry(db, r->au, r4_key_objectid(fk), tk, r->tname, r->tlen, "rename",
			      r->tlen)) ||
	    (rc = audit_entry(db, r->au, r4_key_objectid(tk), tk, r->tname, r->tlen, "rename",
			      r->tlen)))
		return rc;
	if (dst && (flags & R4_RENAME_EXCHANGE))
		rc = audit_entry(db, r->au, dst, fk, r->fname, r->flen, "rename", r->flen);
	else if (dst && !(rc = audit_entry(db, r->au, dst, tk, r->tname, r->tlen, "unlink",
					   r->tlen)) &&
		 r4_audit_is_log(r->au, dst) && destroys(db, &r->dst))
		rc = -EBUSY;
	return rc ? rc : r4_audit_grab(db, r->au);
}

/* Is r a regular file renamed over an aggregate (rename_into)? */
static bool into_aggregate(struct r4_db *db, const struct rename_ctx *r, unsigned flags)
{
	return r->have_dst && !(flags & R4_RENAME_EXCHANGE) && S_ISREG(r->src.sd.sd_mode) &&
	       S_ISDIR(r->dst.sd.sd_mode) &&
	       r4_meta_kind(db, r4_key_objectid(&r->dst.sdkey), NULL) == R4_META_AGGREGATE;
}

/*
 * A regular file renamed over an aggregate: the aggregate takes the
 * file's text, parsed and checked as a whole-text write is (an invalid
 * line is EINVAL, a field the caller may not write EACCES: nothing
 * changed), and the file's name goes; the aggregate keeps its object, its
 * records and their fields' owners and rules.  This is what `sed -i`
 * (which renames its temporary file over the original) and mv need to
 * edit /etc/passwd; replacing the directory by a plain file would lose
 * the records.  One operation: all of it or nothing.  Recorded as a
 * write of the aggregate and an unlink of the file.
 */
static int rename_into(struct r4_db *db, struct rename_ctx *r, unsigned flags)
{
	const struct r4_ident *who = r->au ? r4_perm_checked(db) : NULL;
	uint64_t n = r->src.sd.sd_size;
	char *agg = NULL, *src = NULL, why[200] = "";
	uint8_t *text = NULL;
	size_t got = 0;
	int rc;

	if (flags & R4_RENAME_WHITEOUT)
		return -EINVAL;
	if (n > 1u << 24)
		return -EFBIG;
	if ((rc = may_entry(db, &r->fdir, &r->src)) ||
	    (rc = r4_perm_flags_remove(r4_perm_flags_of(&r->fdir.sd),
				       r4_perm_flags_of(&r->src.sd))) ||
	    (rc = r4_audit_path(db, &r->tdir.sdkey, r->tname, r->tlen, &agg)) ||
	    (rc = r4_audit_path(db, &r->fdir.sdkey, r->fname, r->flen, &src)))
		goto out;
	if (!(text = r4_malloc((size_t)n + 1))) {
		rc = -ENOMEM;
		goto out;
	}
	if ((rc = r4_read(db, src, 0, text, (size_t)n, &got)))
		goto out;
	/* the plain calls below are nested in this operation, which grabs
	 * for them: at most, every record of the text made (a directory and
	 * its seven fields, their entries, stat data and bodies) and every
	 * record on disk removed, the order rewritten, the name removed */
	size_t lines = 1;

	for (size_t i = 0; i < got; i++)
		lines += text[i] == '\n';
	if ((rc = r4_txn_grab(db, ((uint64_t)lines + r->dst.sd.sd_nlink + 4) * 32 * E(db),
			      false)))
		goto out;
	if (r->au &&
	    ((rc = audit_entry(db, r->au, r4_key_objectid(&r->dst.sdkey), &r->tdir.sdkey,
			       r->tname, r->tlen, "write", got)) ||
	     (rc = audit_entry(db, r->au, r4_key_objectid(&r->src.sdkey), &r->fdir.sdkey,
			       r->fname, r->flen, "unlink", r->flen)) ||
	     (rc = audit_entry(db, r->au, r4_key_objectid(&r->fdir.sdkey), &r->fdir.sdkey,
			       r->fname, r->flen, "unlink", r->flen)) ||
	     (rc = r4_audit_grab(db, r->au))))
		goto out;
	if ((rc = r4_aggr_write(db, who, agg, text, got, false, why, sizeof(why)))) {
		/* the handle call has no words: the host's log gets them */
		if (why[0])
			r4_log(&db->lg, R4_LOG_WARN, "cannot rename '%s' over '%s': %s", src, agg,
			       why);
		goto out;
	}
	rc = r4_unlink(db, src);
out:
	r4_free(text);
	r4_free(agg);
	r4_free(src);
	return rc;
}

/* rename(2) with r's directories loaded and its names set. */
static int rename_at(struct r4_db *db, struct rename_ctx *r, unsigned flags)
{
	uint64_t wcost = 0;
	r4_key k;
	int rc;

	r->same_dir = !r4_key_cmp(&r->fdir.sdkey, &r->tdir.sdkey);
	if (r4_ns_dot(r->fname, r->flen) || r4_ns_dot(r->tname, r->tlen))
		return -EINVAL;
	if ((rc = r4_dir_lookup(db, &r->fdir, r->fname, r->flen, &k)) ||
	    (rc = r4_obj_load(db, &k, &r->src)))
		return rc;
	rc = r4_dir_lookup(db, &r->tdir, r->tname, r->tlen, &k);
	if (rc && rc != -ENOENT)
		return rc;
	if (!rc) {
		if ((rc = r4_obj_load(db, &k, &r->dst)))
			return rc;
		r->have_dst = true;
		if (flags & R4_RENAME_NOREPLACE)
			return -EEXIST;	/* (before the same-file case, as Linux) */
		if (!r4_key_cmp(&r->src.sdkey, &r->dst.sdkey))
			return 1;	/* same object: rename(2) does nothing */
		if (into_aggregate(db, r, flags))
			return rename_into(db, r, flags);
	}
	if ((rc = rename_checks(db, r, flags)) || (r->au && (rc = rename_audit(db, r, flags))) ||
	    ((flags & R4_RENAME_WHITEOUT) && (rc = whiteout_plan(db, r, &wcost))))
		return rc;
	/* two entries, four stat data, a "..", and what the name replaced
	 * held; a whiteout is no removal's, and may not take the reserve */
	if ((rc = r->have_dst && !(flags & R4_RENAME_EXCHANGE) ? grab_drop(db, &r->dst, 4 * E(db))
		  : r4_txn_grab(db, 7 * E(db), true)) ||
	    (wcost && (rc = r4_txn_grab(db, wcost, false))))
		return rc;
	rc = (flags & R4_RENAME_EXCHANGE) ? rename_exchange(db, r) : rename_move(db, r);
	if (!rc && (flags & R4_RENAME_WHITEOUT))
		rc = make_done(db, &r->fdir, r->fname, r->flen, &r->wt, &r->wx, NULL, NULL, NULL);
	if (rc)
		return rc;
	/* both directories' entries changed, and the objects moved (the one
	 * replaced lost a link: drop_link stamped it) */
	r4_obj_touch(db, &r->fdir, true, true);
	r4_obj_touch(db, &r->tdir, true, true);
	r4_obj_touch(db, &r->src, false, true);
	held_way(db, &r->src.sdkey, &r->tdir.sdkey, r->tname, r->tlen);
	if (r->have_dst && (flags & R4_RENAME_EXCHANGE)) {
		r4_obj_touch(db, &r->dst, false, true);
		held_way(db, &r->dst.sdkey, &r->fdir.sdkey, r->fname, r->flen);
	}
	if ((rc = r4_obj_save(db, &r->src)))
		return rc;
	if (r->have_dst && (flags & R4_RENAME_EXCHANGE) && (rc = r4_obj_save(db, &r->dst)))
		return rc;
	if ((rc = r4_obj_save(db, &r->fdir)))
		return rc;
	return r->same_dir ? 0 : r4_obj_save(db, &r->tdir);
}

static int rename_in(struct r4_db *db, struct rename_ctx *r, const char *from, const char *to,
		     unsigned flags)
{
	int rc;

	if ((rc = resolve_parent(db, from, &r->fdir, &r->fname, &r->flen)))
		return rc;
	if ((rc = resolve_parent(db, to, &r->tdir, &r->tname, &r->tlen)))
		return rc;
	return rename_at(db, r, flags);
}

int r4_rename(r4_db *db, const char *from, const char *to, unsigned flags)
{
	struct rename_ctx r;
	struct r4_txn_op op;
	int rc;

	if ((rc = check_rename_flags(flags)) || (rc = check_path(from)) || (rc = check_path(to)) ||
	    (rc = r4_txn_op_begin(db, &op)))
		return rc;
	memset(&r, 0, sizeof(r));
	rc = rename_in(db, &r, from, to, flags);
	if (rc == 1)
		rc = 0;
	rename_fini(&r);
	return r4_txn_op_end(db, &op, rc);
}

/* ---- the namespace by handle ---- */

int r4_file_root(r4_db *db, r4_file **out)
{
	r4_key k;

	r4_obj_root_key(&k);
	return hold(db, &k, out);
}

/*
 * The stat-data key of object oid.  A key's locality is the directory the
 * object was made in, which its id does not tell: so each locality in
 * turn, from its first stat data item to its last (a lookup per
 * locality, names and bodies skipped).  -ESTALE: none.
 */
static int find_sd(struct r4_db *db, uint64_t oid, r4_key *out)
{
	for (uint64_t loc = 0;;) {
		struct r4_path p;
		r4_key want, k;
		int more, rc;

		r4_key_set(&want, loc, R4_KEY_SD, 0, 0, 0);
		if ((rc = r4_tree_lookup(db, &want, R4_LEVEL_LEAF, &p)))
			return rc;
		/* (the item found is the last at or before want) */
		more = r4_path_item(db, &p, &k, NULL, NULL, NULL) && !r4_key_cmp(&k, &want)
		       ? 1 : r4_tree_next(db, &p);
		while (more > 0) {
			if (!r4_path_item(db, &p, &k, NULL, NULL, NULL))
				more = 0;
			else if (r4_key_locality(&k) != loc || r4_key_type(&k) != R4_KEY_SD ||
				 r4_key_objectid(&k) == oid)
				break;
			else
				more = r4_tree_next(db, &p);
		}
		r4_path_release(db, &p);
		if (more <= 0)
			return more < 0 ? more : -ESTALE;	/* (the end of the tree) */
		if (r4_key_locality(&k) == loc && r4_key_type(&k) == R4_KEY_SD) {
			*out = k;
			return 0;
		}
		/* the next locality that has items (this one's bodies skipped) */
		loc = r4_key_locality(&k) > loc ? r4_key_locality(&k) : loc + 1;
	}
}

int r4_file_find(r4_db *db, uint64_t id, r4_file **out)
{
	r4_key k;
	int rc = find_sd(db, id, &k);

	return rc ? r4_db_seen(db, rc) : hold(db, &k, out);
}

int r4_file_lookup(r4_file *dir, const char *name, size_t len, r4_file **out)
{
	struct at a;
	r4_key k;
	int rc;

	if ((rc = at_file(dir, name, len, false, &a)))
		return rc;
	rc = r4_dir_lookup(dir->db, &a.dir, name, len, &k);
	r4_obj_fini(&a.dir);
	return rc ? r4_db_seen(dir->db, rc) : hold_at(dir->db, &k, &dir->key, name, len, out);
}

int r4_file_make(r4_file *dir, const char *name, size_t len, const struct r4_newobj *n,
		 r4_file **out)
{
	struct r4_db *db = dir->db;
	struct r4_audit au = {0};
	struct r4_sd t;
	struct at a;
	struct r4_txn_op op;
	r4_key k;
	int rc;

	if ((rc = r4_txn_op_begin(db, &op)))
		return rc;
	if (!(rc = at_file(dir, name, len, true, &a))) {
		struct r4_newobj o = *n;
		struct r4_stat d;

		/* owned by the acting identity, its umask (unless the directory
		 * has a default ACL: make_at), a setgid directory's group */
		r4_fs_stat_of(db, &a.dir, &d);
		r4_perm_new(r4_perm_actor(db), &d, r4_fs_default_acl(db, &d), &o.mode, &o.uid,
			    &o.gid);
		if (!(rc = may_entry(db, &a.dir, NULL)) && !(rc = newobj_tmpl(&o, &t)) &&
		    !(rc = audit_entry(db, &au, d.ino, &a.dir.sdkey, name, len, "create", 0)) &&
		    !(rc = r4_audit_grab(db, &au)) && !(rc = make_at(db, &a, &t, NULL, NULL, &k)))
			rc = r4_audit_write(db, &au);
		r4_obj_fini(&a.dir);
	}
	r4_audit_fini(&au);
	if ((rc = r4_txn_op_end(db, &op, rc)))
		return rc;
	if (!out || (rc = hold_at(db, &k, &dir->key, name, len, out)))
		return rc;
	(*out)->oflags = O_RDWR;	/* (its creator's, as open(2) with O_CREAT) */
	return 0;
}

int r4_file_link(r4_file *f, r4_file *dir, const char *name, size_t len)
{
	struct r4_db *db = f->db;
	struct r4_audit au = {0};
	struct r4_inode ino;
	struct at a;
	struct r4_txn_op op;
	int rc;

	if ((rc = r4_txn_op_begin(db, &op)))
		return rc;
	if (!(rc = file_load(f, &ino))) {
		/* the way to the object, as to the new name's directory */
		if (!(rc = file_reach(f, &ino)) && !(rc = at_file(dir, name, len, true, &a))) {
			if (!(rc = may_entry(db, &a.dir, NULL)) &&
			    !(rc = audit_entry(db, &au, r4_key_objectid(&ino.sdkey), &a.dir.sdkey,
					       name, len, "link", 0)) &&
			    !(rc = audit_entry(db, &au, r4_key_objectid(&a.dir.sdkey), &a.dir.sdkey,
					       name, len, "link", 0)) &&
			    !(rc = r4_audit_grab(db, &au)) && !(rc = link_at(db, &ino, &a)))
				rc = r4_audit_write(db, &au);
			r4_obj_fini(&a.dir);
		}
		r4_obj_fini(&ino);
	}
	r4_audit_fini(&au);
	return r4_txn_op_end(db, &op, rc);
}

int r4_file_remove(r4_file *dir, const char *name, size_t len, bool want_dir)
{
	struct r4_db *db = dir->db;
	struct r4_audit au = {0};
	struct at a;
	struct r4_txn_op op;
	int rc;

	if ((rc = r4_txn_op_begin(db, &op)))
		return rc;
	if (!(rc = at_file(dir, name, len, false, &a))) {
		rc = remove_at(db, &a, want_dir, &au);
		r4_obj_fini(&a.dir);
	}
	r4_audit_fini(&au);
	return r4_txn_op_end(db, &op, rc);
}

int r4_file_rename(r4_file *fdir, const char *fname, size_t flen, r4_file *tdir,
		   const char *tname, size_t tlen, unsigned flags)
{
	struct r4_db *db = fdir->db;
	struct r4_audit au = {0};
	struct rename_ctx r;
	struct at a, b;
	struct r4_txn_op op;
	int rc;

	if ((rc = check_rename_flags(flags)) || (rc = r4_txn_op_begin(db, &op)))
		return rc;
	memset(&r, 0, sizeof(r));
	r.au = &au;
	if (!(rc = at_file(fdir, fname, flen, false, &a))) {
		r.fdir = a.dir;
		if (!(rc = at_file(tdir, tname, tlen, true, &b))) {
			r.tdir = b.dir;
			r.fname = fname;
			r.flen = flen;
			r.tname = tname;
			r.tlen = tlen;
			if (!(rc = rename_at(db, &r, flags)))
				rc = r4_audit_write(db, &au);
			else if (rc == 1)
				rc = 0;	/* (the same object: nothing done, nothing recorded) */
		}
	}
	r4_audit_fini(&au);
	rename_fini(&r);
	return r4_txn_op_end(db, &op, rc);
}

int r4_file_readlink(r4_file *f, char *buf, size_t n, size_t *len)
{
	struct r4_inode ino;
	int rc;

	if ((rc = file_load(f, &ino)))
		return rc;
	if ((rc = file_reach(f, &ino))) {
		/* refused */
	} else if (!S_ISLNK(ino.sd.sd_mode)) {
		rc = -EINVAL;
	} else {
		memcpy(buf, ino.symlink, R4_MIN(n, ino.sd.sd_symlink_len));
		*len = ino.sd.sd_symlink_len;
	}
	r4_obj_fini(&ino);
	return rc;
}

int r4_file_reopen(r4_file *f, int flags, r4_file **out)
{
	struct r4_stat st;
	r4_file *g = NULL;
	int rc;

	if ((flags & O_ACCMODE) != O_RDONLY && !f->db->rw)
		return -EROFS;
	if ((rc = r4_file_stat(f, &st)) || (rc = r4_perm_flags_open(st.flags, flags)) ||
	    (rc = r4_perm_open(f->db, r4_perm_checked(f->db), &st, flags)) ||
	    (rc = r4_file_dup(f, &g)))
		return rc;
	g->oflags = flags & O_ACCMODE;
	/* O_TRUNC: emptied through the new handle (set-id bits go too) */
	if ((flags & O_TRUNC) && S_ISREG(st.mode) && st.size &&
	    (rc = r4_file_setattr(g, &(struct r4_setattr){.mask = R4_SET_SIZE}))) {
		r4_file_close(g);
		return rc;
	}
	*out = g;
	return 0;
}

int r4_file_access(r4_file *f, unsigned want)
{
	struct r4_stat st;
	int rc = r4_file_stat(f, &st);

	if (!rc && (want & 2))	/* (immutable: -EPERM, as Linux) */
		rc = r4_perm_flags_open(st.flags, O_WRONLY | O_APPEND);
	if (!rc && !r4_perm_may(f->db, r4_perm_checked(f->db), &st, want))
		rc = -EACCES;
	return rc;
}
