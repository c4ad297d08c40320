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
 * want (4 read, 2 set, 3 remove) of the extended attribute name of st, as
 * Linux's xattr_permission with the capability module: user.* only on a
 * regular file or directory (else -EPERM to write, -ENODATA to read, for
 * everyone), with read or write permission (-EACCES), in a sticky
 * directory written by its owner alone (-EPERM); trusted.* root's alone
 * (others: -EPERM to write, -ENODATA to read); security.* read by
 * anyone, written by root (-EPERM), but security.capability removed by
 * anyone who may write the file (a write removes it: Linux's killpriv,
 * which the kernel's FUSE sends as a removal by the writer); the POSIX
 * ACLs read by anyone,
 * written by the owner (-EPERM), none on a symlink (-EOPNOTSUPP to write,
 * -ENODATA to read), a default ACL on a directory alone (else -EACCES to
 * write, -ENODATA to read), for everyone.
 */
int r4_perm_xattr(struct r4_db *db, const struct r4_ident *who, const struct r4_stat *st,
		  const char *name, unsigned want);
/* Does listxattr show name to who?  trusted.* only to root. */
bool r4_perm_xattr_listed(const struct r4_ident *who, const char *name);

/* ---- inode flags (chattr, lsattr): what they are and what they refuse ----
 *
 * Flags are Linux's FS_IOC_GETFLAGS values (R4_FL_* in r4.h).  The stat
 * data's flags extension holds the word the kernel's Reiser4 keeps, its
 * inode's i_flags: the VFS's S_SYNC, S_NOATIME, S_APPEND, S_IMMUTABLE and
 * S_DIRSYNC bits; no other flag can be stored.  Unlike the rules above,
 * these bind every caller, trusted or root (as Linux's IS_IMMUTABLE and
 * IS_APPEND do): they are the object's, not its permissions.  Each rule
 * takes the object's flags (r4_stat.flags, r4_perm_flags_of) and answers 0
 * or -EPERM.
 */

/* The flags stored in sd (0 without the extension); bits r4 does not know
 * (a kernel's runtime bits) are left out. */
uint32_t r4_perm_flags_of(const struct r4_sd *sd);
/*
 * Set the bits of mask in st's flags to those of flags, for who: *word,
 * the stored word (sd_flags), becomes the new one (the bits r4 does not
 * know kept).  The owner (or root) only (-EPERM); R4_FL_IMMUTABLE and
 * R4_FL_APPEND set or cleared by root only (CAP_LINUX_IMMUTABLE: -EPERM);
 * a flag Reiser4 cannot store is -EOPNOTSUPP (R4_FL_DIRSYNC on a
 * non-directory is dropped, as ext4 does); while an object stays
 * immutable no other flag changes (-EPERM, as ext4).  who NULL: trusted.
 */
int r4_perm_flags_set(const struct r4_ident *who, const struct r4_stat *st, uint32_t flags,
		      uint32_t mask, uint32_t *word);
/* A change of the body of an object with flags fl (write, truncate,
 * fallocate): none when immutable; when append-only only one that adds
 * (adds: bytes at the end, or zeros in holes). */
int r4_perm_flags_body(uint32_t fl, bool adds);
/* A change of the attributes sa sets (chmod, chown, utimens, truncate):
 * none when immutable; when append-only, only times set to "now". */
int r4_perm_flags_setattr(uint32_t fl, const struct r4_setattr *sa);
/* Setting or removing an extended attribute, or R4L's settings of the
 * object that Linux would keep in them (rules, audit, plugins): not when
 * immutable or append-only. */
int r4_perm_flags_xattr(uint32_t fl);
/* An entry added to a directory with flags dir: not when immutable. */
int r4_perm_flags_add(uint32_t dir);
/* The entry of an object with flags victim removed from (or replaced in)
 * a directory with flags dir (unlink, rename): not from an immutable or
 * append-only directory, nor of an immutable or append-only object. */
int r4_perm_flags_remove(uint32_t dir, uint32_t victim);
/* A new name for an object with flags fl in a directory with flags dir:
 * not for an immutable or append-only object (Linux's vfs_link). */
int r4_perm_flags_link(uint32_t fl, uint32_t dir);
/* open(2) with oflags: for writing or O_TRUNC not when immutable; when
 * append-only, for writing with O_APPEND only, and no O_TRUNC. */
int r4_perm_flags_open(uint32_t fl, int oflags);

#endif
