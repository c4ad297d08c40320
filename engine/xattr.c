/*
 * xattr.c - extended attributes: the user., trusted. and security.
 * attributes of an object and its POSIX ACLs (system.posix_acl_access and
 * _default, whose values acl.c reads), kept as r4 keeps what the format
 * has no place for (meta.c): a regular file "OID.x" in the root's hidden
 * "..r4", read only by the attribute calls (fs.c's r4_file_*xattr) and,
 * for an object with an ACL, its permission checks (acl.c knows which
 * objects have one), so that no other call pays for them.  Its bytes
 * (docs/semantics.md, "Extended attributes"):
 *
 *	"R4XATTR1"			8 bytes
 *	then, for each attribute, names in strcmp order, each once:
 *	  1 byte			the name's length, 1..255
 *	  4 bytes, little endian	the value's length, 0..65536
 *	  the name (no NUL), the value
 *
 * An object without attributes has no file.  A change stores the whole
 * record again: the old file goes and a new one is made, what both can
 * take grabbed before either (r4_obj_prepare, r4_reg_append_cost).  The
 * permission rules are perm.c's (r4_perm_xattr).
 */
#include <stdio.h>
#include <sys/stat.h>

#include "acl.h"
#include "db.h"
#include "ns.h"
#include "obj.h"
#include "txn.h"

#define MAGIC "R4XATTR1"
#define MAGIC_LEN 8
#define HEAD 5			/* an attribute's two lengths */
#define E(db) r4_txn_insert_cost(db)

static const char *const spaces[] = {"user.", "trusted.", "security.", NULL};

int r4_xattr_name(const char *name, bool set)
{
	size_t n = name ? strlen(name) : 0;

	if (!n || n > R4_XATTR_NAME_MAX)
		return -ERANGE;
	if (r4_acl_name(name))
		return 0;	/* system.* holds these two (acl.c) */
	for (unsigned i = 0; spaces[i]; i++) {
		size_t k = strlen(spaces[i]);

		if (strncmp(name, spaces[i], k))
			continue;
		if (n == k)
			return -EINVAL;	/* a namespace alone, as Linux answers */
		if (!strncmp(name, "user.r4.", 8))
			return set ? -EPERM : -ENODATA;	/* the pseudo files' */
		return 0;
	}
	return set ? -EOPNOTSUPP : -ENODATA;
}

static void record_path(char *s, size_t n, uint64_t oid)
{
	snprintf(s, n, "/" R4_NS_PRIVATE "/%llu.x", (unsigned long long)oid);
}

void r4_xattr_fini(struct r4_xattrs *x)
{
	r4_buf_free(&x->b);
}

bool r4_xattr_next(const struct r4_xattrs *x, size_t *at, const char **name, size_t *nlen,
		   const uint8_t **value, size_t *vlen)
{
	size_t pos = *at ? *at : MAGIC_LEN;
	const uint8_t *p;

	if (pos + HEAD > x->b.len)
		return false;
	p = x->b.p + pos;
	*nlen = p[0];
	*vlen = p[1] | (size_t)p[2] << 8 | (size_t)p[3] << 16 | (size_t)p[4] << 24;
	*name = (const char *)p + HEAD;
	*value = p + HEAD + *nlen;
	*at = pos + HEAD + *nlen + *vlen;
	return true;
}

/* Where name is in x: [*pos, *end) (true), or where it would go (*pos ==
 * *end, false). */
static bool locate(const struct r4_xattrs *x, const char *name, size_t *pos, size_t *end)
{
	size_t at = 0, nl, vl, k = strlen(name);
	const char *n;
	const uint8_t *v;

	*pos = *end = MAGIC_LEN;
	while (r4_xattr_next(x, &at, &n, &nl, &v, &vl)) {
		int c = memcmp(n, name, nl < k ? nl : k);

		if (!c && nl == k) {
			*end = at;
			return true;
		}
		if (c > 0 || (!c && nl > k))
			return false;	/* (sorted: name would be here) */
		*pos = *end = at;
	}
	return false;
}

/* The totals the limits bound: names and values, and the names' list. */
static void totals(const struct r4_xattrs *x, size_t *total, size_t *list)
{
	size_t at = 0, nl, vl;
	const char *n;
	const uint8_t *v;

	*total = *list = 0;
	while (r4_xattr_next(x, &at, &n, &nl, &v, &vl)) {
		*total += nl + vl;
		*list += nl + 1;
	}
}

/* Is v[0, n) an ACL r4 stores: valid, with entries (acl.c)? */
static bool acl_well_formed(const uint8_t *v, size_t n)
{
	struct r4_acl a;
	bool ok = !r4_acl_parse(v, n, &a) && a.n && !r4_acl_valid(&a);

	r4_acl_free(&a);
	return ok;
}

bool r4_xattr_well_formed(const struct r4_xattrs *x)
{
	const uint8_t *p = x->b.p;
	size_t at = MAGIC_LEN, total, list;
	char prev[R4_XATTR_NAME_MAX + 1] = "", name[R4_XATTR_NAME_MAX + 1];

	if (x->b.len <= MAGIC_LEN || memcmp(p, MAGIC, MAGIC_LEN))
		return false;	/* (an empty record is never written) */
	while (at < x->b.len) {
		size_t nl = p[at], vl;

		if (at + HEAD > x->b.len)
			return false;
		vl = p[at + 1] | (size_t)p[at + 2] << 8 | (size_t)p[at + 3] << 16 |
		     (size_t)p[at + 4] << 24;
		if (!nl || vl > R4_XATTR_SIZE_MAX || at + HEAD + nl + vl > x->b.len)
			return false;
		memcpy(name, p + at + HEAD, nl);
		name[nl] = 0;
		if (strlen(name) != nl || r4_xattr_name(name, true) ||
		    (at > MAGIC_LEN && strcmp(prev, name) >= 0) ||
		    (r4_acl_name(name) && !acl_well_formed(p + at + HEAD + nl, vl)))
			return false;
		memcpy(prev, name, nl + 1);
		at += HEAD + nl + vl;
	}
	totals(x, &total, &list);
	return total <= R4_XATTR_TOTAL_MAX && list <= R4_XATTR_LIST_MAX;
}

int r4_xattr_load(struct r4_db *db, uint64_t oid, struct r4_xattrs *x)
{
	char path[48];
	int rc;

	record_path(path, sizeof(path), oid);
	if ((rc = r4_meta_read(db, path, R4_XATTR_RECORD_MAX, &x->b)) || !x->b.len ||
	    r4_xattr_well_formed(x))
		return rc;
	r4_xattr_fini(x);
	return R4_CORRUPT(&db->lg, 0, "'%s' holds attributes r4 cannot read", path);
}

int r4_xattr_find(const struct r4_xattrs *x, const char *name, const uint8_t **value,
		  size_t *vlen)
{
	size_t pos, end, at, nl;
	const char *n;

	if (!locate(x, name, &pos, &end))
		return -ENODATA;
	at = pos;
	r4_xattr_next(x, &at, &n, &nl, value, vlen);
	return 0;
}

int r4_xattr_set(struct r4_xattrs *x, const char *name, const void *value, size_t vlen,
		 int flags)
{
	size_t nl = strlen(name), pos, end, total, list;
	bool found = locate(x, name, &pos, &end);
	uint8_t head[HEAD] = {(uint8_t)nl, (uint8_t)vlen, (uint8_t)(vlen >> 8),
			      (uint8_t)(vlen >> 16), (uint8_t)(vlen >> 24)};
	struct r4_buf b = {0};
	int rc;

	if (found && (flags & R4_XATTR_CREATE))
		return -EEXIST;
	if (!found && (flags & R4_XATTR_REPLACE))
		return -ENODATA;
	totals(x, &total, &list);
	if (found) {
		total -= end - pos - HEAD;
		list -= nl + 1;
	}
	if (total + nl + vlen > R4_XATTR_TOTAL_MAX || list + nl + 1 > R4_XATTR_LIST_MAX)
		return -ENOSPC;
	/* what comes before it, it, what comes after it */
	rc = x->b.len ? r4_buf_add(&b, x->b.p, pos) : r4_buf_add(&b, MAGIC, MAGIC_LEN);
	if (!rc)
		rc = r4_buf_add(&b, head, HEAD);
	if (!rc)
		rc = r4_buf_add(&b, name, nl);
	if (!rc && vlen)
		rc = r4_buf_add(&b, value, vlen);
	if (!rc && x->b.len > end)
		rc = r4_buf_add(&b, x->b.p + end, x->b.len - end);
	if (rc) {
		r4_buf_free(&b);
		return rc;
	}
	r4_buf_free(&x->b);
	x->b = b;
	return 0;
}

int r4_xattr_remove(struct r4_xattrs *x, const char *name)
{
	size_t pos, end;

	if (!locate(x, name, &pos, &end))
		return -ENODATA;
	memmove(x->b.p + pos, x->b.p + end, x->b.len - end);
	x->b.len -= end - pos;
	if (x->b.len == MAGIC_LEN)
		x->b.len = 0;	/* the last one: no record */
	return 0;
}

/* ---- the store ---- */

int r4_xattr_drop_cost(struct r4_db *db, uint64_t oid, uint64_t *cost)
{
	struct r4_inode rec;
	uint64_t body = 0;
	char path[48];
	int rc;

	*cost = 0;
	if (!r4_meta_present(db))
		return 0;
	record_path(path, sizeof(path), oid);
	if ((rc = r4_fs_resolve(db, path, &rec)))
		return rc == -ENOENT ? 0 : rc;
	if (S_ISREG(rec.sd.sd_mode))
		rc = r4_reg_remove_cost(db, &rec, &body);
	r4_obj_fini(&rec);
	/* its body and stat data, its entry and the directory */
	*cost = body + r4_txn_remove_cost(db, 2) + 2 * E(db);
	return rc;
}

int r4_xattr_drop(struct r4_db *db, uint64_t oid)
{
	char path[48];
	int rc;

	record_path(path, sizeof(path), oid);
	if (!(rc = r4_meta_unlink(db, path)))
		r4_acl_note(db, oid, NULL);
	return rc;
}

/* What making oid's record of len bytes can take: "..r4" when there is
 * none, the file (stat data, entry, directory) and its body, as the
 * objects it makes will be (r4_obj_prepare). */
int r4_xattr_make_cost(struct r4_db *db, uint64_t oid, size_t len, uint64_t *cost)
{
	struct r4_sd t = {.sd_mode = S_IFDIR | 0700};
	struct r4_inode dir, root, file;
	char name[32];
	uint64_t body;
	r4_key k;
	int rc;

	*cost = 3 * E(db);
	if (r4_meta_present(db)) {
		if ((rc = r4_fs_resolve(db, "/" R4_NS_PRIVATE, &dir)))
			return rc;
	} else {
		r4_obj_root_key(&k);
		if ((rc = r4_obj_load(db, &k, &root)))
			return rc;
		r4_obj_prepare(db, &root, R4_NS_PRIVATE, strlen(R4_NS_PRIVATE), &t, &dir);
		r4_obj_fini(&root);
		*cost += 3 * E(db);
	}
	t.sd_mode = S_IFREG | 0600;
	snprintf(name, sizeof(name), "%llu.x", (unsigned long long)oid);
	r4_obj_prepare(db, &dir, name, strlen(name), &t, &file);
	r4_obj_fini(&dir);
	if (!(rc = r4_reg_append_cost(db, &file, len, &body)))
		*cost += body;
	r4_obj_fini(&file);
	return rc;
}

int r4_xattr_store_cost(struct r4_db *db, uint64_t oid, const struct r4_xattrs *x,
			uint64_t *cost)
{
	uint64_t drop, make = 0;
	int rc;

	if ((rc = r4_xattr_drop_cost(db, oid, &drop)) ||
	    (x->b.len && (rc = r4_xattr_make_cost(db, oid, x->b.len, &make))))
		return rc;
	*cost = drop + make;
	return 0;
}

int r4_xattr_store(struct r4_db *db, uint64_t oid, const struct r4_xattrs *x, bool removal)
{
	uint64_t cost;
	char path[48];
	int rc;

	if ((rc = r4_xattr_store_cost(db, oid, x, &cost)) ||
	    (rc = r4_txn_grab(db, cost, removal)))
		return rc;
	/* (the calls below are operations within the caller's, grabbed for) */
	if ((rc = r4_xattr_drop(db, oid)) || !x->b.len)
		return rc;
	record_path(path, sizeof(path), oid);
	if ((rc = r4_meta_dir(db)) || (rc = r4_create(db, path, 0600, 0, 0)) ||
	    (rc = r4_write(db, path, 0, x->b.p, x->b.len)))
		return rc;
	r4_acl_note(db, oid, x);	/* (a failure above fails the transaction) */
	return 0;
}
