/*
 * perm.c - every POSIX permission rule of r4, once, and the access rules
 * of LANGUAGE.md 6.4 that extend the mode bits.
 *
 * Who asks: the handle calls of fs.c, for the identity a host set with
 * r4_act_as (the FUSE bridge: the calling process), and the executor, for
 * its run's identity (r4_exec_opts.who).  Neither of them, nor the bridge,
 * decides a rule itself.  The rules follow Linux's VFS where POSIX leaves
 * a choice: search on every directory on the way, write and search to
 * change an entry, the sticky bit, setgid inheritance and the umask for
 * new objects, chown and chmod by the owner, the clearing of set-id bits
 * (setattr_should_drop_suidgid), utimens "now" for writers, open modes,
 * extended attributes (xattr_permission), POSIX ACLs in place of the mode
 * bits (acl.c runs their algorithm).
 *
 * Every function lets a trusted caller (who NULL) through.  uid 0 passes
 * every check but executing a file without any x bit (R4L executes
 * nothing).  Nothing here changes the image.
 */
#include <fcntl.h>
#include <sys/stat.h>

#include "acl.h"
#include "perm.h"

/* ---- the acting identity (r4_act_as) ---- */

/* Without allocation for up to 64 groups (a FUSE host's): such a call
 * cannot fail. */
int r4_act_as(r4_db *db, const struct r4_ident *who, unsigned flags)
{
	struct r4_actor *a = &db->actor;
	uint32_t *g = a->groups;

	if (!who) {
		a->set = false;
		return 0;
	}
	if (who->ngroups > 64 && !(g = r4_malloc(who->ngroups * sizeof(*g))))
		return -ENOMEM;
	if (who->ngroups)
		memcpy(g, who->groups, who->ngroups * sizeof(*g));
	if (g != a->more) {
		r4_free(a->more);
		a->more = g == a->groups ? NULL : g;
	}
	a->who = *who;
	a->who.groups = g;
	a->check = !(flags & R4_AS_NOCHECK);
	a->set = true;
	return 0;
}

const struct r4_ident *r4_perm_checked(const struct r4_db *db)
{
	return db->actor.set && db->actor.check ? &db->actor.who : NULL;
}

const struct r4_ident *r4_perm_actor(const struct r4_db *db)
{
	return db->actor.set ? &db->actor.who : NULL;
}

void r4_perm_free(struct r4_db *db)
{
	r4_free(db->actor.more);
	db->actor.more = NULL;
	db->actor.set = false;
}

/* ---- mode bits and access rules ---- */

bool r4_in_group(const struct r4_ident *who, uint32_t gid)
{
	if (who->gid == gid)
		return true;
	for (size_t i = 0; i < who->ngroups; i++)
		if (who->groups[i] == gid)
			return true;
	return false;
}

bool r4_permits(const struct r4_ident *who, const struct r4_stat *st, unsigned want)
{
	unsigned bits = st->mode & 07;

	if (who->uid == 0)	/* root: execute needs one x bit on a non-directory */
		return !(want & 1) || S_ISDIR(st->mode) || (st->mode & 0111);
	if (st->uid == who->uid)
		bits = (st->mode >> 6) & 07;
	else if (r4_in_group(who, st->gid))
		bits = (st->mode >> 3) & 07;
	return (bits & want) == want;
}

/* The mode bits, or an access ACL in their place (docs/semantics.md,
 * "POSIX ACLs"); who is not root.  As Linux's acl_permission_check, the
 * ACL is asked only when the group class (the mask) has a permission. */
static bool posix_permits(struct r4_db *db, const struct r4_ident *who, const struct r4_stat *st,
			  unsigned want)
{
	struct r4_acl a;
	bool ok;

	if (!(st->mode & 070) || !(r4_acl_kinds(db, st->ino) & R4_ACL_HAS_ACCESS))
		return r4_permits(who, st, want);
	if (r4_acl_get(db, st->ino, R4_ACL_ACCESS, &a))
		return false;	/* an ACL that cannot be read allows nothing */
	ok = a.n ? r4_acl_permits(&a, who, st->uid, st->gid, want) : r4_permits(who, st, want);
	r4_acl_free(&a);
	return ok;
}

bool r4_allows(r4_db *db, const struct r4_ident *who, const struct r4_stat *st, unsigned want)
{
	struct r4_meta m;
	int best = -1;

	if (who->uid == 0 || !r4_meta_present(db))
		return r4_permits(who, st, want);
	if (r4_meta_get(db, st->ino, &m))
		return false;	/* rules that cannot be read allow nothing */
	for (unsigned i = 0; i < m.nrules; i++) {
		const struct r4_rule *r = &m.rules[i];

		if (!r->gid && r->id == who->uid) {
			best = r->access;
			break;
		}
		if (r->gid && r4_in_group(who, r->id) && r->access > best)
			best = r->access;
	}
	r4_meta_fini(&m);
	if (best < 0)
		return posix_permits(db, who, st, want);
	/* denied: nothing; read: reading (and searching a directory); write:
	 * that and writing.  Executing a file also needs its mode bits. */
	unsigned bits = best == R4_ACCESS_WRITE ? 6 : best == R4_ACCESS_READ ? 4 : 0;

	if (!bits)
		return false;
	if ((want & 1) && !S_ISDIR(st->mode) && !posix_permits(db, who, st, 1))
		return false;
	return (bits & want & 6) == (want & 6);
}

bool r4_perm_may(struct r4_db *db, const struct r4_ident *who, const struct r4_stat *st,
		 unsigned want)
{
	return !who || r4_allows(db, who, st, want);
}

bool r4_perm_owns(const struct r4_ident *who, const struct r4_stat *st)
{
	return !who || who->uid == 0 || who->uid == st->uid;
}

/* ---- the way to an object ---- */

int r4_perm_search(struct r4_db *db, const struct r4_ident *who, const struct r4_inode *dir)
{
	struct r4_inode cur;
	struct r4_stat st;
	r4_key k = dir->sdkey, root;
	int rc;

	if (!who || who->uid == 0)
		return 0;	/* root searches every directory */
	r4_obj_root_key(&root);
	for (unsigned depth = 0; depth < 100000; depth++) {
		if ((rc = r4_obj_load(db, &k, &cur)))
			return rc;
		r4_fs_stat_of(db, &cur, &st);
		if (!S_ISDIR(st.mode))
			rc = -ENOTDIR;
		else if (!r4_allows(db, who, &st, 1))
			rc = -EACCES;
		else if (!r4_key_cmp(&k, &root))
			rc = 1;
		else
			rc = r4_dir_lookup(db, &cur, "..", 2, &k);
		r4_obj_fini(&cur);
		if (rc)
			return rc > 0 ? 0 : rc;
	}
	return R4_CORRUPT(&db->lg, 0, "loop in the directory tree");
}

int r4_perm_reach(struct r4_db *db, const struct r4_ident *who, const struct r4_inode *ino,
		  const r4_key *up, const char *name, size_t len)
{
	struct r4_inode d;
	r4_key k, root;
	int rc;

	if (!who || who->uid == 0)
		return 0;
	r4_obj_root_key(&root);
	if (!r4_key_cmp(&ino->sdkey, &root))
		return 0;
	if (S_ISDIR(ino->sd.sd_mode)) {
		/* a directory has one way: its ".." */
		if ((rc = r4_dir_lookup(db, ino, "..", 2, &k)))
			return rc == -ENOENT ? 0 : rc;
	} else if (!up) {
		return 0;
	} else {
		k = *up;
	}
	if ((rc = r4_obj_load(db, &k, &d)))
		return rc == -ENOENT ? 0 : rc;	/* (its directory went: as an open file) */
	if (!S_ISDIR(ino->sd.sd_mode)) {
		r4_key at;

		/* the name it was found under went: the way is unknown */
		if (!S_ISDIR(d.sd.sd_mode) || r4_dir_lookup(db, &d, name, len, &at) ||
		    r4_key_cmp(&at, &ino->sdkey)) {
			r4_obj_fini(&d);
			return 0;
		}
	}
	rc = r4_perm_search(db, who, &d);
	r4_obj_fini(&d);
	return rc;
}

/* ---- entries ---- */

int r4_perm_entry(struct r4_db *db, const struct r4_ident *who, const struct r4_stat *d,
		  const struct r4_stat *victim)
{
	if (!S_ISDIR(d->mode))
		return -ENOTDIR;
	if (!who)
		return 0;
	if (!r4_allows(db, who, d, 3))
		return -EACCES;
	if (victim && (d->mode & S_ISVTX) && who->uid != 0 && who->uid != d->uid &&
	    who->uid != victim->uid)
		return -EPERM;
	return 0;
}

int r4_perm_move_dir(struct r4_db *db, const struct r4_ident *who, const struct r4_stat *d)
{
	return r4_perm_may(db, who, d, 2) ? 0 : -EACCES;
}

void r4_perm_new(const struct r4_ident *who, const struct r4_stat *d, bool acl, uint32_t *mode,
		 uint32_t *uid, uint32_t *gid)
{
	if (!who)
		return;
	*uid = who->uid;
	*gid = who->gid;
	if (!S_ISLNK(*mode) && !acl)
		*mode &= ~(who->umask & 0777);
	if (d->mode & S_ISGID) {
		*gid = d->gid;
		if (S_ISDIR(*mode))
			*mode |= S_ISGID;
	}
}

int r4_perm_link(const struct r4_stat *src)
{
	return S_ISDIR(src->mode) ? -EPERM : 0;
}

/* ---- attributes ---- */

static uint32_t drop_setid(const struct r4_ident *who, const struct r4_stat *st);

/* A mode that only clears set-id bits, set by one who may write: what the
 * kernel sends before a write by a non-owner (file_remove_privs), or with
 * the size of a truncate(2) (whose size the rules below check). */
static bool drops_privs(struct r4_db *db, const struct r4_ident *who, const struct r4_stat *st,
			const struct r4_setattr *sa)
{
	uint32_t was = st->mode & 07777, cleared = was & ~sa->mode & 07777;

	return !(sa->mask & (R4_SET_UID | R4_SET_GID)) && cleared &&
	       !(cleared & ~(uint32_t)(S_ISUID | S_ISGID)) && (sa->mode & 07777) == (was & ~cleared) &&
	       r4_allows(db, who, st, 2);
}

int r4_perm_setattr(struct r4_db *db, const struct r4_ident *who, const struct r4_stat *st,
		    struct r4_setattr *sa, bool writer)
{
	bool owner = r4_perm_owns(who, st);

	if (!who)
		return 0;
	if (sa->mask & R4_SET_MODE) {
		if (!owner && !drops_privs(db, who, st, sa))
			return -EPERM;
		if (!owner)	/* (the kernel's FUSE asks by the rule before 6.2) */
			sa->mode = (sa->mode & ~(uint32_t)07777) | (drop_setid(who, st) & 07777);
		if (owner && who->uid &&
		    !r4_in_group(who, (sa->mask & R4_SET_GID) ? sa->gid : st->gid))
			sa->mode &= ~(uint32_t)S_ISGID;
	}
	if ((sa->mask & R4_SET_UID) && who->uid && (!owner || sa->uid != st->uid))
		return -EPERM;
	if ((sa->mask & R4_SET_GID) && who->uid &&
	    (!owner || (sa->gid != st->gid && !r4_in_group(who, sa->gid))))
		return -EPERM;
	if ((sa->mask & (R4_SET_ATIME | R4_SET_MTIME)) && !owner)
		return -EPERM;
	if ((sa->mask & (R4_SET_ATIME_NOW | R4_SET_MTIME_NOW)) && !owner &&
	    !r4_allows(db, who, st, 2))
		return -EACCES;
	if ((sa->mask & R4_SET_SIZE) && !writer && !r4_allows(db, who, st, 2))
		return -EACCES;
	return 0;
}

/* st's mode less the set-id bits a change by who clears (chown: also
 * root's), as Linux's setattr_should_drop_suidgid: setuid always; setgid
 * when the group may execute, or when who is neither root nor in the
 * file's group (setattr_should_drop_sgid, since Linux 6.2). */
static uint32_t drop_setid(const struct r4_ident *who, const struct r4_stat *st)
{
	uint32_t m = st->mode & ~(uint32_t)S_ISUID;

	if ((st->mode & S_ISGID) &&
	    ((st->mode & S_IXGRP) || (who->uid && !r4_in_group(who, st->gid))))
		m &= ~(uint32_t)S_ISGID;
	return m;
}

void r4_perm_setattr_effects(const struct r4_ident *who, const struct r4_stat *st,
			     struct r4_setattr *sa)
{
	bool chown = sa->mask & (R4_SET_UID | R4_SET_GID);

	if (!who || S_ISDIR(st->mode) || (sa->mask & R4_SET_MODE) ||
	    !(st->mode & (S_ISUID | S_ISGID)))
		return;
	if (!chown && !((sa->mask & R4_SET_SIZE) && who->uid))
		return;
	if (drop_setid(who, st) != st->mode) {
		sa->mask |= R4_SET_MODE;
		sa->mode = drop_setid(who, st);
	}
}

uint32_t r4_perm_after_write(const struct r4_ident *who, const struct r4_stat *st)
{
	if (!who || who->uid == 0 || S_ISDIR(st->mode))
		return st->mode;
	return drop_setid(who, st);
}

int r4_perm_open(struct r4_db *db, const struct r4_ident *who, const struct r4_stat *st,
		 int flags)
{
	int acc = flags & O_ACCMODE;
	unsigned want = flags & R4_O_EXEC ? 1 : acc == O_RDONLY ? 4 : acc == O_WRONLY ? 2 : 6;

	if (flags & O_TRUNC)
		want |= 2;
	if (S_ISDIR(st->mode) && (want & 2))
		return -EISDIR;
	return r4_perm_may(db, who, st, want) ? 0 : -EACCES;
}

/* ---- extended attributes ---- */

static bool in_space(const char *name, const char *space)
{
	return !strncmp(name, space, strlen(space));
}

int r4_perm_xattr(struct r4_db *db, const struct r4_ident *who, const struct r4_stat *st,
		  const char *name, unsigned want)
{
	bool write = want & 2, remove = want & 1;

	want &= 6;
	if (r4_acl_name(name)) {
		/* (none on a symlink, a default ACL only on a directory, for
		 * everyone) */
		if (S_ISLNK(st->mode))
			return write ? -EOPNOTSUPP : -ENODATA;
		if (!S_ISDIR(st->mode) && !strcmp(name, R4_ACL_DEFAULT))
			return write ? -EACCES : -ENODATA;
		return !write || r4_perm_owns(who, st) ? 0 : -EPERM;
	}
	if (in_space(name, "user.")) {
		/* (a rule of types, for everyone) */
		if (!S_ISREG(st->mode) && !S_ISDIR(st->mode))
			return write ? -EPERM : -ENODATA;
		if (!who)
			return 0;
		if (write && S_ISDIR(st->mode) && (st->mode & S_ISVTX) && !r4_perm_owns(who, st))
			return -EPERM;
		return r4_perm_may(db, who, st, want) ? 0 : -EACCES;
	}
	if (!who || who->uid == 0)
		return 0;
	/* a file's capabilities go with a write (Linux's file_remove_privs),
	 * which the kernel's FUSE asks as a removal by the writer: anyone who
	 * may write the file may remove them, which gives nothing more */
	if (remove && !strcmp(name, "security.capability"))
		return r4_perm_may(db, who, st, 2) ? 0 : -EPERM;
	/* trusted.*: CAP_SYS_ADMIN; security.*: any reader, and the capability
	 * module's CAP_SYS_ADMIN to write */
	if (in_space(name, "trusted."))
		return write ? -EPERM : -ENODATA;
	return write ? -EPERM : 0;
}

bool r4_perm_xattr_listed(const struct r4_ident *who, const char *name)
{
	return !who || who->uid == 0 || !in_space(name, "trusted.");
}

/* ---- inode flags (chattr, lsattr) ----
 *
 * The flags extension's word is the kernel's inode i_flags (static_stat.c
 * loads and saves it as it is), so each flag Reiser4 can store is the VFS
 * bit that means it there.
 */

static const struct {
	uint32_t fl;		/* FS_IOC_GETFLAGS value */
	uint32_t bit;		/* the kernel's S_* bit in the stored word */
} stored_flags[] = {
	{R4_FL_SYNC, 1u << 0},	    /* S_SYNC */
	{R4_FL_NOATIME, 1u << 1},   /* S_NOATIME */
	{R4_FL_APPEND, 1u << 2},    /* S_APPEND */
	{R4_FL_IMMUTABLE, 1u << 3}, /* S_IMMUTABLE */
	{R4_FL_DIRSYNC, 1u << 6},   /* S_DIRSYNC */
};
#define NSTORED (sizeof(stored_flags) / sizeof(stored_flags[0]))

uint32_t r4_perm_flags_of(const struct r4_sd *sd)
{
	uint32_t fl = 0;

	if (!r4_sd_has(sd, R4_SDEXT_FLAGS))
		return 0;
	for (size_t i = 0; i < NSTORED; i++)
		if (sd->sd_flags & stored_flags[i].bit)
			fl |= stored_flags[i].fl;
	return fl;
}

int r4_perm_flags_set(const struct r4_ident *who, const struct r4_stat *st, uint32_t flags,
		      uint32_t mask, uint32_t *word)
{
	uint32_t storable = 0, want = (st->flags & ~mask) | (flags & mask);

	if (!r4_perm_owns(who, st))
		return -EPERM;
	if (((want ^ st->flags) & (R4_FL_IMMUTABLE | R4_FL_APPEND)) && who && who->uid)
		return -EPERM;	/* (CAP_LINUX_IMMUTABLE) */
	if (!S_ISDIR(st->mode))
		want &= ~(uint32_t)R4_FL_DIRSYNC;
	for (size_t i = 0; i < NSTORED; i++)
		storable |= stored_flags[i].fl;
	if (want & ~storable)
		return -EOPNOTSUPP;
	if ((st->flags & want & R4_FL_IMMUTABLE) && want != st->flags)
		return -EPERM;
	for (size_t i = 0; i < NSTORED; i++)
		*word = (want & stored_flags[i].fl) ? *word | stored_flags[i].bit
						    : *word & ~stored_flags[i].bit;
	return 0;
}

/* An object whose names and attributes stay as they are. */
static bool pinned(uint32_t fl)
{
	return fl & (R4_FL_IMMUTABLE | R4_FL_APPEND);
}

int r4_perm_flags_body(uint32_t fl, bool adds)
{
	return (fl & R4_FL_IMMUTABLE) || ((fl & R4_FL_APPEND) && !adds) ? -EPERM : 0;
}

int r4_perm_flags_setattr(uint32_t fl, const struct r4_setattr *sa)
{
	unsigned now = R4_SET_ATIME_NOW | R4_SET_MTIME_NOW | R4_SET_CTIME;

	if (!sa->mask)
		return 0;
	return (fl & R4_FL_IMMUTABLE) || ((fl & R4_FL_APPEND) && (sa->mask & ~now)) ? -EPERM : 0;
}

int r4_perm_flags_xattr(uint32_t fl)
{
	return pinned(fl) ? -EPERM : 0;
}

int r4_perm_flags_add(uint32_t dir)
{
	return dir & R4_FL_IMMUTABLE ? -EPERM : 0;
}

int r4_perm_flags_remove(uint32_t dir, uint32_t victim)
{
	return pinned(dir) || pinned(victim) ? -EPERM : 0;
}

int r4_perm_flags_link(uint32_t fl, uint32_t dir)
{
	return pinned(fl) ? -EPERM : r4_perm_flags_add(dir);
}

int r4_perm_flags_open(uint32_t fl, int oflags)
{
	bool write = (oflags & O_ACCMODE) != O_RDONLY;

	if ((oflags & O_TRUNC) || (write && !(oflags & O_APPEND)))
		return r4_perm_flags_body(fl, false);
	return write ? r4_perm_flags_body(fl, true) : 0;
}
