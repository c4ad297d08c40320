/*
 * acl.h - engine-internal: POSIX ACLs (acl.c; docs/semantics.md, "POSIX
 * ACLs").  What an ACL is, in Linux's xattr format, and the algorithms
 * Linux runs on one (check, chmod, create); which objects have one, known
 * without reading their attributes.  The rules that use them are perm.c's
 * and fs.c's.
 */
#ifndef R4_ACL_H
#define R4_ACL_H

#include "db.h"
#include "obj.h"

#define R4_ACL_ACCESS "system.posix_acl_access"
#define R4_ACL_DEFAULT "system.posix_acl_default"

/* The tags, as Linux's ACL_USER_OBJ ... ACL_OTHER. */
enum {
	R4_ACL_USER_OBJ = 0x01, R4_ACL_USER = 0x02, R4_ACL_GROUP_OBJ = 0x04,
	R4_ACL_GROUP = 0x08, R4_ACL_MASK = 0x10, R4_ACL_OTHER = 0x20,
};
/* Which ACLs an object has (r4_acl_kinds). */
enum { R4_ACL_HAS_ACCESS = 1, R4_ACL_HAS_DEFAULT = 2 };

struct r4_acl_entry {
	uint16_t tag, perm;
	uint32_t id;		/* R4_ACL_USER's uid, R4_ACL_GROUP's gid */
};
struct r4_acl {
	struct r4_acl_entry *e;
	size_t n;		/* 0: none (a value that removes the ACL) */
};

/* Is name one of the two ACL attributes? */
bool r4_acl_name(const char *name);
/*
 * The ACL of an xattr value v[0, n): version 2, then entries of tag, perm
 * (16 bits each) and id (32), little endian, as posix_acl_from_xattr
 * reads them.  n 0 or a header alone: no entries (a removal).  -EINVAL
 * for a size that is no header and entries, -EOPNOTSUPP for another
 * version, -ENOMEM.  (Not yet r4_acl_valid.)
 */
int r4_acl_parse(const void *v, size_t n, struct r4_acl *a);
/* Is a an ACL Linux's posix_acl_valid accepts: each of USER_OBJ, named
 * users, GROUP_OBJ, named groups, MASK, OTHER in this order, the three
 * base entries once, MASK at most once and required with named entries,
 * perms of rwx alone, named ids not -1?  0 or -EINVAL. */
int r4_acl_valid(const struct r4_acl *a);
/* a's value into b (ids of the base entries -1, as Linux writes them). */
int r4_acl_encode(const struct r4_acl *a, struct r4_buf *b);
void r4_acl_free(struct r4_acl *a);
/* The permission bits a gives (owner, mask or else owning group, other)
 * into *mode's 0777; true when a says no more than they do (no named
 * entry, no mask: posix_acl_equiv_mode). */
bool r4_acl_mode(const struct r4_acl *a, uint32_t *mode);
/* May who, neither root nor trusted, have want (4, 2, 1) on an object of
 * owner uid, group gid with access ACL a (posix_acl_permission)? */
bool r4_acl_permits(const struct r4_acl *a, const struct r4_ident *who, uint32_t uid,
		    uint32_t gid, unsigned want);
/* chmod to mode: USER_OBJ, MASK (else GROUP_OBJ), OTHER follow (posix_acl_chmod). */
void r4_acl_chmod(struct r4_acl *a, uint32_t mode);
/* A directory's default ACL a made the access ACL of a new object of
 * *mode (posix_acl_create_masq): a and *mode's 0777 masked by each
 * other; true when a is more than the mode says (then store it). */
bool r4_acl_create(struct r4_acl *a, uint32_t *mode);

/* Object oid's ACL which (R4_ACL_ACCESS or _DEFAULT): a->n 0 when none;
 * -EUCLEAN when it does not read.  _from: out of its attributes x, loaded. */
int r4_acl_get(struct r4_db *db, uint64_t oid, const char *which, struct r4_acl *a);
int r4_acl_from(struct r4_db *db, uint64_t oid, const struct r4_xattrs *x, const char *which,
		struct r4_acl *a);
/* R4_ACL_HAS_* of object oid, from what the engine knows of all objects
 * (learned once per open and after an abort, kept by the changes). */
unsigned r4_acl_kinds(struct r4_db *db, uint64_t oid);
/* Object oid now has attributes x (NULL: none, it went). */
void r4_acl_note(struct r4_db *db, uint64_t oid, const struct r4_xattrs *x);
/* Forget what is known (an abort), or free it (close). */
void r4_acl_forget(struct r4_db *db);

#endif
