/*
 * perm.h - engine-internal: the POSIX permission rules, once (perm.c).
 *
 * Each rule takes the identity it is checked for; who NULL means a
 * trusted caller, which every rule lets through.  The handle calls of
 * fs.c check the identity r4_act_as set; the executor checks its run's
 * identity with the same functions.
 */
#ifndef R4_PERM_H
#define R4_PERM_H

#include "db.h"
#include "obj.h"

/* The identity the handle calls check (NULL: trusted, or R4_AS_NOCHECK). */
const struct r4_ident *r4_perm_checked(const struct r4_db *db);
/* The identity new objects belong to and set-id bits are cleared for,
 * even under R4_AS_NOCHECK (NULL: trusted, owners as the caller gives). */
const struct r4_ident *r4_perm_actor(const struct r4_db *db);
/* r4_close: forget the identity. */
void r4_perm_free(struct r4_db *db);

/* May who have want (4 read, 2 write, 1 search) on st?  who NULL: yes. */
bool r4_perm_may(struct r4_db *db, const struct r4_ident *who, const struct r4_stat *st,
		 unsigned want);
/* Is who st's owner (or root, or trusted)?  What chmod, and r4's own
 * settings (rules, audit), ask. */
bool r4_perm_owns(const struct r4_ident *who, const struct r4_stat *st);
/* Search permission on directory dir and every directory above it (up
 * through ".." to the root): -EACCES. */
int r4_perm_search(struct r4_db *db, const struct r4_ident *who, const struct r4_inode *dir);
/*
 * May who reach ino: a directory through its ancestors; another object
 * through up, the directory it was found in under name (and those above
 * up).  When up no longer names ino (the name went), the way is unknown
 * and nothing above is asked, as for an open file.  up NULL: none known.
 */
int r4_perm_reach(struct r4_db *db, const struct r4_ident *who, const struct r4_inode *ino,
		  const r4_key *up, const char *name, size_t len);
/* Add (victim NULL) or remove/replace the entry of victim in directory d:
 * write and search on d (-EACCES); in a sticky d only root and the owners
 * of d or victim (-EPERM).  -ENOTDIR when d is none. */
int r4_perm_entry(struct r4_db *db, const struct r4_ident *who, const struct r4_stat *d,
		  const struct r4_stat *victim);
/* A directory moved to another parent changes its "..": write on it. */
int r4_perm_move_dir(struct r4_db *db, const struct r4_ident *who, const struct r4_stat *d);
/* The owner and mode of a new object in directory d: who's uid, its gid
 * or a setgid directory's (a new directory keeps setgid), the umask off
 * the permission bits unless acl (d has a default ACL, which masks them
 * instead: r4_acl_create).  who NULL: as given. */
void r4_perm_new(const struct r4_ident *who, const struct r4_stat *d, bool acl, uint32_t *mode,
		 uint32_t *uid, uint32_t *gid);
/* A new name for src: no directory (-EPERM). */
int r4_perm_link(const struct r4_stat *src);
/*
 * chmod, chown, utimens and truncate of st by who, sa narrowed as Linux
 * does: chmod by the owner (or root; a writer may only clear set-id bits,
 * as the kernel does before a write), setgid dropped when who is not of
 * the group; chown by root, chgrp by the owner to a group of its own;
 * explicit times by the owner, "now" also by a writer; a size needs write
 * unless writer (a file opened for writing).  -EPERM, -EACCES.
 */
int r4_perm_setattr(struct r4_db *db, const struct r4_ident *who, const struct r4_stat *st,
		    struct r4_setattr *sa, bool writer);
/* What a change by who does to the set-id bits of a non-directory st
 * (Linux's setattr_should_drop_suidgid): a chown drops setuid, and
 * setgid with group execute or when who is neither root nor in st's
 * group; so does a write, truncate or fallocate by anyone but root.  sa
 * gains R4_SET_MODE when bits go. */
void r4_perm_setattr_effects(const struct r4_ident *who, const struct r4_stat *st,
			     struct r4_setattr *sa);
/* The mode after who wrote to st (set-id bits cleared as above). */
uint32_t r4_perm_after_write(const struct r4_ident *who, const struct r4_stat *st);
/* open(2) of st with flags: read and/or write as O_ACCMODE asks, O_TRUNC
 * needs write; a directory opens read-only (-EISDIR). */
int r4_perm_open(struct r4_db *db, const struct r4_ident *who, const struct r4_stat *st,
		 int flags);

/*
 * want (4 read, 2 set or remove) of the extended attribute name of st, as
 * Linux's xattr_permission with the capability module: user.* only on a
 * regular file or directory (else -EPERM to write, -ENODATA to read, for
 * everyone), with read or write permission (-EACCES), in a sticky
 * directory written by its owner alone (-EPERM); trusted.* root's alone
 * (others: -EPERM to write, -ENODATA to read); security.* read by
 * anyone, written by root (-EPERM); the POSIX ACLs read by anyone,
 * written by the owner (-EPERM), none on a symlink (-EOPNOTSUPP to write,
 * -ENODATA to read), a default ACL on a directory alone (else -EACCES to
 * write, -ENODATA to read), for everyone.
 */
int r4_perm_xattr(struct r4_db *db, const struct r4_ident *who, const struct r4_stat *st,
		  const char *name, unsigned want);
/* Does listxattr show name to who?  trusted.* only to root. */
bool r4_perm_xattr_listed(const struct r4_ident *who, const char *name);

#endif
