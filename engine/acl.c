/*
 * acl.c - POSIX ACLs (docs/semantics.md, "POSIX ACLs"): the two
 * attributes system.posix_acl_access and system.posix_acl_default, stored
 * by xattr.c like any other attribute, in the value format Linux passes
 * through getxattr(2) and setxattr(2):
 *
 *	4 bytes, little endian		version, 2
 *	then for each entry:
 *	  2 bytes			tag (R4_ACL_USER_OBJ ... R4_ACL_OTHER)
 *	  2 bytes			perm (4 read, 2 write, 1 execute)
 *	  4 bytes			id: a named user's uid, group's gid, else -1
 *
 * and the algorithms Linux runs on them (fs/posix_acl.c: the permission
 * check, chmod, creation in a directory with a default ACL), which perm.c
 * and fs.c call.
 *
 * Which objects have an ACL is known without reading their attributes: a
 * sorted table of object ids, read once per open (or after an abort) from
 * the attribute records ("..r4/OID.x"), kept as xattr.c stores and drops
 * them.  An image without "..r4" reads nothing; a permission check of an
 * object without an ACL is one binary search.
 */
#include <stdlib.h>

#include "acl.h"
#include "ns.h"

#define HEAD 4
#define ENTRY 8
#define NO_ID 0xffffffffu

bool r4_acl_name(const char *name)
{
	return !strcmp(name, R4_ACL_ACCESS) || !strcmp(name, R4_ACL_DEFAULT);
}

static uint32_t le32(const uint8_t *p)
{
	return p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

int r4_acl_parse(const void *v, size_t n, struct r4_acl *a)
{
	const uint8_t *p = v;

	a->e = NULL;
	a->n = 0;
	if (!n)
		return 0;
	if (n < HEAD || (n - HEAD) % ENTRY)
		return -EINVAL;
	if (le32(p) != 2)
		return -EOPNOTSUPP;
	if (n == HEAD)
		return 0;
	if (!(a->e = r4_malloc((n - HEAD) / ENTRY * sizeof(*a->e))))
		return -ENOMEM;
	for (p += HEAD; a->n < (n - HEAD) / ENTRY; p += ENTRY) {
		struct r4_acl_entry *e = &a->e[a->n++];

		e->tag = (uint16_t)(p[0] | p[1] << 8);
		e->perm = (uint16_t)(p[2] | p[3] << 8);
		e->id = e->tag == R4_ACL_USER || e->tag == R4_ACL_GROUP ? le32(p + 4) : NO_ID;
	}
	return 0;
}

int r4_acl_valid(const struct r4_acl *a)
{
	/* where the walk is: the tag expected next, in Linux's order */
	enum { OWNER, USERS, GROUPS, OTHER, DONE } at = OWNER;
	bool named = false;

	for (size_t i = 0; i < a->n; i++) {
		const struct r4_acl_entry *e = &a->e[i];

		if (e->perm & ~7u)
			return -EINVAL;
		switch (e->tag) {
		case R4_ACL_USER_OBJ:
			if (at != OWNER)
				return -EINVAL;
			at = USERS;
			break;
		case R4_ACL_USER:
		case R4_ACL_GROUP:
			if (at != (e->tag == R4_ACL_USER ? USERS : GROUPS) || e->id == NO_ID)
				return -EINVAL;
			named = true;
			break;
		case R4_ACL_GROUP_OBJ:
			if (at != USERS)
				return -EINVAL;
			at = GROUPS;
			break;
		case R4_ACL_MASK:
			if (at != GROUPS)
				return -EINVAL;
			at = OTHER;
			break;
		case R4_ACL_OTHER:
			if (at != OTHER && (at != GROUPS || named))
				return -EINVAL;
			at = DONE;
			break;
		default:
			return -EINVAL;
		}
	}
	return at == DONE ? 0 : -EINVAL;
}

int r4_acl_encode(const struct r4_acl *a, struct r4_buf *b)
{
	uint8_t head[HEAD] = {2, 0, 0, 0};
	int rc = r4_buf_add(b, head, HEAD);

	for (size_t i = 0; !rc && i < a->n; i++) {
		const struct r4_acl_entry *e = &a->e[i];
		uint32_t id = e->tag == R4_ACL_USER || e->tag == R4_ACL_GROUP ? e->id : NO_ID;
		uint8_t p[ENTRY] = {(uint8_t)e->tag, (uint8_t)(e->tag >> 8), (uint8_t)e->perm,
				    (uint8_t)(e->perm >> 8), (uint8_t)id, (uint8_t)(id >> 8),
				    (uint8_t)(id >> 16), (uint8_t)(id >> 24)};

		rc = r4_buf_add(b, p, ENTRY);
	}
	return rc;
}

void r4_acl_free(struct r4_acl *a)
{
	r4_free(a->e);
	a->e = NULL;
	a->n = 0;
}

/* The entry of tag (the first), or NULL. */
static struct r4_acl_entry *entry(const struct r4_acl *a, unsigned tag)
{
	for (size_t i = 0; i < a->n; i++)
		if (a->e[i].tag == tag)
			return &a->e[i];
	return NULL;
}

bool r4_acl_mode(const struct r4_acl *a, uint32_t *mode)
{
	uint32_t bits = 0;
	bool equiv = true;

	for (size_t i = 0; i < a->n; i++) {
		const struct r4_acl_entry *e = &a->e[i];

		if (e->tag == R4_ACL_USER_OBJ)
			bits |= (e->perm & 7u) << 6;
		else if (e->tag == R4_ACL_GROUP_OBJ && !entry(a, R4_ACL_MASK))
			bits |= (e->perm & 7u) << 3;
		else if (e->tag == R4_ACL_MASK)
			bits |= (e->perm & 7u) << 3;
		else if (e->tag == R4_ACL_OTHER)
			bits |= e->perm & 7u;
		if (e->tag == R4_ACL_USER || e->tag == R4_ACL_GROUP || e->tag == R4_ACL_MASK)
			equiv = false;
	}
	*mode = (*mode & ~0777u) | bits;
	return equiv;
}

bool r4_acl_permits(const struct r4_acl *a, const struct r4_ident *who, uint32_t uid,
		    uint32_t gid, unsigned want)
{
	const struct r4_acl_entry *mask = entry(a, R4_ACL_MASK), *hit = NULL;
	bool group = false;	/* a group entry matched, granting or not */

	want &= 7;
	for (size_t i = 0; i < a->n && !hit; i++) {
		const struct r4_acl_entry *e = &a->e[i];

		switch (e->tag) {
		case R4_ACL_USER_OBJ:
			if (who->uid == uid)
				return (e->perm & want) == want;	/* the owner: unmasked */
			break;
		case R4_ACL_USER:
			if (who->uid == e->id)
				hit = e;
			break;
		case R4_ACL_GROUP_OBJ:
		case R4_ACL_GROUP:
			if (r4_in_group(who, e->tag == R4_ACL_GROUP ? e->id : gid)) {
				group = true;
				if ((e->perm & want) == want)
					hit = e;
			}
			break;
		case R4_ACL_OTHER:
			return !group && (e->perm & want) == want;
		}
	}
	/* a named user, or a granting group: within the mask */
	return hit && (hit->perm & (mask ? mask->perm : 7u) & want) == want;
}

void r4_acl_chmod(struct r4_acl *a, uint32_t mode)
{
	struct r4_acl_entry *g = entry(a, R4_ACL_MASK);

	for (size_t i = 0; i < a->n; i++)
		if (a->e[i].tag == R4_ACL_USER_OBJ)
			a->e[i].perm = (mode >> 6) & 7;
		else if (a->e[i].tag == R4_ACL_OTHER)
			a->e[i].perm = mode & 7;
	if (g || (g = entry(a, R4_ACL_GROUP_OBJ)))
		g->perm = (mode >> 3) & 7;
}

bool r4_acl_create(struct r4_acl *a, uint32_t *mode)
{
	struct r4_acl_entry *g = entry(a, R4_ACL_MASK);
	bool more = g != NULL;

	for (size_t i = 0; i < a->n; i++) {
		struct r4_acl_entry *e = &a->e[i];

		if (e->tag == R4_ACL_USER_OBJ) {
			e->perm &= (*mode >> 6) & 7;
			*mode &= (uint32_t)e->perm << 6 | ~0700u;
		} else if (e->tag == R4_ACL_OTHER) {
			e->perm &= *mode & 7;
			*mode &= e->perm | ~07u;
		} else if (e->tag == R4_ACL_USER || e->tag == R4_ACL_GROUP) {
			more = true;
		}
	}
	/* the group class: the mask when there is one, else the owning group */
	if (g || (g = entry(a, R4_ACL_GROUP_OBJ))) {
		g->perm &= (*mode >> 3) & 7;
		*mode &= (uint32_t)g->perm << 3 | ~070u;
	}
	return more;
}

int r4_acl_from(struct r4_db *db, uint64_t oid, const struct r4_xattrs *x, const char *which,
		struct r4_acl *a)
{
	const uint8_t *v;
	size_t n;
	int rc = 0;

	a->e = NULL;
	a->n = 0;
	if (!r4_xattr_find(x, which, &v, &n) && (rc = r4_acl_parse(v, n, a)) != -ENOMEM &&
	    (rc || (rc = r4_acl_valid(a)))) {
		r4_acl_free(a);
		rc = R4_CORRUPT(&db->lg, 0, "object %llu: its %s does not read",
				(unsigned long long)oid, which);
	}
	return rc;
}

int r4_acl_get(struct r4_db *db, uint64_t oid, const char *which, struct r4_acl *a)
{
	struct r4_xattrs x;
	int rc;

	a->e = NULL;
	a->n = 0;
	if ((rc = r4_xattr_load(db, oid, &x)))
		return rc;
	rc = r4_acl_from(db, oid, &x, which, a);
	r4_xattr_fini(&x);
	return rc;
}

/* ---- which objects have one ---- */

/* R4_ACL_HAS_* of attributes x. */
static unsigned kinds_of(const struct r4_xattrs *x)
{
	const uint8_t *v;
	size_t n;

	return (!r4_xattr_find(x, R4_ACL_ACCESS, &v, &n) ? R4_ACL_HAS_ACCESS : 0) |
	       (!r4_xattr_find(x, R4_ACL_DEFAULT, &v, &n) ? R4_ACL_HAS_DEFAULT : 0);
}

/* Where oid is in the table, or would go. */
static size_t slot(const struct r4_db *db, uint64_t oid)
{
	size_t lo = 0, hi = db->nacl;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (db->acl[mid].oid < oid)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* oid has kinds (0: remove it).  Out of memory the table is forgotten:
 * the next question reads it again. */
static void put(struct r4_db *db, uint64_t oid, unsigned kinds)
{
	size_t i = slot(db, oid);
	bool there = i < db->nacl && db->acl[i].oid == oid;

	if (there && kinds) {
		db->acl[i].kinds = kinds;
	} else if (there) {
		memmove(&db->acl[i], &db->acl[i + 1], (db->nacl - i - 1) * sizeof(*db->acl));
		db->nacl--;
	} else if (kinds) {
		if (db->nacl == db->acl_cap) {
			size_t cap = db->acl_cap ? 2 * db->acl_cap : 16;
			void *p = r4_realloc(db->acl, cap * sizeof(*db->acl));

			if (!p) {
				r4_acl_forget(db);
				return;
			}
			db->acl = p;
			db->acl_cap = cap;
		}
		memmove(&db->acl[i + 1], &db->acl[i], (db->nacl - i) * sizeof(*db->acl));
		db->acl[i].oid = oid;
		db->acl[i].kinds = kinds;
		db->nacl++;
	}
}

/* Read the table from the records.  A record that does not read counts as
 * an ACL: the check reads it and refuses (r4_acl_get). */
static void learn(struct r4_db *db)
{
	char **v;
	size_t n;

	db->nacl = 0;
	db->acl_known = true;
	if (!r4_meta_present(db) || r4_fs_names(db, "/" R4_NS_PRIVATE, &v, &n))
		return;
	for (size_t i = 0; i < n && db->acl_known; i++) {
		char *end;
		uint64_t oid = strtoull(v[i], &end, 10);
		struct r4_xattrs x;

		if (strcmp(end, ".x"))
			continue;
		if (r4_xattr_load(db, oid, &x)) {
			put(db, oid, R4_ACL_HAS_ACCESS | R4_ACL_HAS_DEFAULT);
			continue;
		}
		put(db, oid, kinds_of(&x));
		r4_xattr_fini(&x);
	}
	r4_fs_names_free(v, n);
}

unsigned r4_acl_kinds(struct r4_db *db, uint64_t oid)
{
	size_t i;

	if (!db->acl_known)
		learn(db);
	if (!db->acl_known)
		return R4_ACL_HAS_ACCESS | R4_ACL_HAS_DEFAULT;	/* (no memory: read it) */
	i = slot(db, oid);
	return i < db->nacl && db->acl[i].oid == oid ? db->acl[i].kinds : 0;
}

void r4_acl_note(struct r4_db *db, uint64_t oid, const struct r4_xattrs *x)
{
	if (db->acl_known)
		put(db, oid, x ? kinds_of(x) : 0);
}

void r4_acl_forget(struct r4_db *db)
{
	r4_free(db->acl);
	db->acl = NULL;
	db->nacl = db->acl_cap = 0;
	db->acl_known = false;
}
