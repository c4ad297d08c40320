/*
 * test_acl.c - POSIX ACLs (engine/acl.c; docs/semantics.md, "POSIX ACLs"):
 *  - the value format and posix_acl_valid's rules, entry by entry;
 *  - the algorithms: the check (owner, named users and groups within the
 *    mask, a matching group that grants nothing denies), the mode an ACL
 *    implies, chmod, creation's masking;
 *  - through the handle calls: set, get, list, remove, the errors
 *    (EINVAL, EOPNOTSUPP, EPERM, EACCES, ENODATA), the mode a set gives
 *    (and setgid lost), an ACL the mode says stores nothing;
 *  - enforcement for other identities, after r4's access rules (..acl),
 *    chmod's effect, inheritance of a
 *    default ACL by files and directories (no umask) but not symlinks;
 *  - an abort forgets an ACL set in it, the record goes with its object,
 *    and r4's checker and fsck.reiser4 call the image clean; a stored
 *    ACL that does not read denies, and the checker reports it.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "acl.h"
#include "t.h"

static char dir[256], img[300];

enum { UO = R4_ACL_USER_OBJ, U = R4_ACL_USER, GO = R4_ACL_GROUP_OBJ, G = R4_ACL_GROUP,
       M = R4_ACL_MASK, O = R4_ACL_OTHER };

/* The value of the entries e[0, n) (tag, perm, id each), version ver. */
static size_t value(uint8_t *out, uint32_t ver, const uint32_t *e, size_t n)
{
	size_t len = 4;

	out[0] = (uint8_t)ver;
	out[1] = out[2] = out[3] = 0;
	for (size_t i = 0; i < n; i++, len += 8) {
		uint32_t t = e[3 * i], p = e[3 * i + 1], id = e[3 * i + 2];
		uint8_t b[8] = {(uint8_t)t, (uint8_t)(t >> 8), (uint8_t)p, (uint8_t)(p >> 8),
				(uint8_t)id, (uint8_t)(id >> 8), (uint8_t)(id >> 16),
				(uint8_t)(id >> 24)};

		memcpy(out + len, b, 8);
	}
	return len;
}

/* posix_acl_valid's answer for entries e[0, n) (each tag, perm, id). */
static int valid(const uint32_t *e, size_t n)
{
	uint8_t v[256];
	struct r4_acl a;
	int rc = r4_acl_parse(v, value(v, 2, e, n), &a);

	if (!rc)
		rc = r4_acl_valid(&a);
	r4_acl_free(&a);
	return rc;
}

#define N(e) (sizeof(e) / sizeof(e[0]) / 3)
#define NONE 0xffffffffu

static void test_format(void)
{
	static const uint32_t base[] = {UO, 6, 7, GO, 4, 7, O, 4, 7};
	static const uint32_t named[] = {UO, 6, 0, U, 6, 1001, U, 4, 1002, GO, 4, 0,
					 G, 2, 50, M, 6, 0, O, 0, 0};
	static const uint32_t nomask[] = {UO, 6, 0, U, 6, 1001, GO, 4, 0, O, 0, 0};
	static const uint32_t noother[] = {UO, 6, 0, GO, 4, 0};
	static const uint32_t nogroup[] = {UO, 6, 0, O, 4, 0};
	static const uint32_t noowner[] = {GO, 4, 0, O, 4, 0};
	static const uint32_t order[] = {UO, 6, 0, GO, 4, 0, U, 6, 1001, M, 6, 0, O, 0, 0};
	static const uint32_t twice[] = {UO, 6, 0, UO, 6, 0, GO, 4, 0, O, 0, 0};
	static const uint32_t after[] = {UO, 6, 0, GO, 4, 0, O, 0, 0, O, 0, 0};
	static const uint32_t maskpos[] = {UO, 6, 0, M, 6, 0, GO, 4, 0, O, 0, 0};
	static const uint32_t twomask[] = {UO, 6, 0, GO, 4, 0, M, 6, 0, M, 6, 0, O, 0, 0};
	static const uint32_t perm[] = {UO, 8, 0, GO, 4, 0, O, 0, 0};
	static const uint32_t tag[] = {UO, 6, 0, 0x40, 4, 0, GO, 4, 0, O, 0, 0};
	static const uint32_t noid[] = {UO, 6, 0, U, 6, NONE, GO, 4, 0, M, 6, 0, O, 0, 0};
	static const uint32_t justmask[] = {UO, 6, 0, GO, 4, 0, M, 6, 0, O, 0, 0};
	static const struct {
		const uint32_t *e;
		size_t n;
	} bad[] = {
		{nomask, N(nomask)}, {noother, N(noother)}, {nogroup, N(nogroup)},
		{noowner, N(noowner)}, {order, N(order)}, {twice, N(twice)}, {after, N(after)},
		{maskpos, N(maskpos)}, {twomask, N(twomask)}, {perm, N(perm)}, {tag, N(tag)},
		{noid, N(noid)},
	};
	uint8_t v[256], w[256];
	struct r4_acl a;
	struct r4_buf b = {0};
	size_t n;

	/* sizes and versions */
	CHECK_RC(r4_acl_parse(NULL, 0, &a));
	CHECK_EQ(a.n, 0);
	CHECK_RC(r4_acl_parse(v, value(v, 2, NULL, 0), &a));
	CHECK_EQ(a.n, 0);
	CHECK_EQ(r4_acl_parse(v, 2, &a), -EINVAL);
	CHECK_EQ(r4_acl_parse(v, value(v, 2, base, 3) - 1, &a), -EINVAL);
	CHECK_EQ(r4_acl_parse(v, value(v, 3, base, 3), &a), -EOPNOTSUPP);
	/* posix_acl_valid */
	CHECK_RC(valid(base, N(base)));
	CHECK_RC(valid(named, N(named)));
	CHECK_RC(valid(justmask, N(justmask)));
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		CHECK_EQ(valid(bad[i].e, bad[i].n), -EINVAL);
	/* encoded back with the base entries' ids -1, as Linux writes them */
	CHECK_RC(r4_acl_parse(v, value(v, 2, named, N(named)), &a));
	CHECK_RC(r4_acl_encode(&a, &b));
	{
		uint32_t norm[N(named) * 3];

		memcpy(norm, named, sizeof(norm));
		for (size_t i = 0; i < N(named); i++)
			if (norm[3 * i] != U && norm[3 * i] != G)
				norm[3 * i + 2] = NONE;
		n = value(w, 2, norm, N(named));
	}
	CHECK(b.len == n && !memcmp(b.p, w, n));
	r4_buf_free(&b);
	r4_acl_free(&a);
}

/* An ACL of the entries e[0, n). */
static void acl_of(struct r4_acl *a, const uint32_t *e, size_t n)
{
	uint8_t v[256];

	CHECK_RC(r4_acl_parse(v, value(v, 2, e, n), a));
	CHECK_RC(r4_acl_valid(a));
}

static void test_algorithms(void)
{
	/* owner 100 rw, user 200 rwx and 300 -, group 10 (owning) r, group 20
	 * rw, group 30 -, mask rw, other r */
	static const uint32_t e[] = {UO, 6, 0, U, 7, 200, U, 0, 300, GO, 4, 0, G, 6, 20,
				     G, 0, 30, M, 6, 0, O, 4, 0};
	static const uint32_t plain[] = {UO, 7, 0, GO, 5, 0, O, 1, 0};
	uint32_t g20[] = {20}, g10_30[] = {10, 30}, g30[] = {30};
	struct r4_ident owner = {100, 10, NULL, 0, 0}, u200 = {200, 99, NULL, 0, 0},
			u300 = {300, 99, NULL, 0, 0}, ing10 = {400, 10, NULL, 0, 0},
			ing20 = {400, 99, g20, 1, 0}, ing1030 = {400, 99, g10_30, 2, 0},
			ing30 = {400, 99, g30, 1, 0}, other = {500, 99, NULL, 0, 0};
	struct r4_acl a;
	uint32_t mode;

	acl_of(&a, e, N(e));
	CHECK(r4_acl_permits(&a, &owner, 100, 10, 6));
	CHECK(!r4_acl_permits(&a, &owner, 100, 10, 1));
	CHECK(r4_acl_permits(&a, &u200, 100, 10, 6));	/* rwx within mask rw */
	CHECK(!r4_acl_permits(&a, &u200, 100, 10, 1));
	CHECK(!r4_acl_permits(&a, &u300, 100, 10, 4));	/* named: not other's r */
	CHECK(r4_acl_permits(&a, &ing10, 100, 10, 4));
	CHECK(!r4_acl_permits(&a, &ing10, 100, 10, 2));
	CHECK(r4_acl_permits(&a, &ing20, 100, 10, 6));
	CHECK(r4_acl_permits(&a, &ing1030, 100, 10, 4));	/* any granting group */
	CHECK(!r4_acl_permits(&a, &ing30, 100, 10, 4));	/* a group matched: not other */
	CHECK(r4_acl_permits(&a, &other, 100, 10, 4));
	CHECK(!r4_acl_permits(&a, &other, 100, 10, 2));
	/* the mode it implies: the mask for the group class */
	mode = S_IFREG | 04777;
	CHECK(!r4_acl_mode(&a, &mode));
	CHECK_EQ(mode, S_IFREG | 04664);
	/* chmod: owner, mask, other */
	r4_acl_chmod(&a, 0751);
	CHECK_EQ(a.e[0].perm, 7);
	CHECK_EQ(a.e[3].perm, 4);	/* the owning group stays */
	CHECK_EQ(a.e[6].perm, 5);
	CHECK_EQ(a.e[7].perm, 1);
	/* creation: mode 0640 masks the default, which masks the mode */
	r4_acl_free(&a);
	acl_of(&a, e, N(e));
	mode = S_IFREG | 0640;
	CHECK(r4_acl_create(&a, &mode));
	CHECK_EQ(mode, S_IFREG | 0640);
	CHECK_EQ(a.e[0].perm, 6);
	CHECK_EQ(a.e[1].perm, 7);	/* named entries stay, the mask limits them */
	CHECK_EQ(a.e[6].perm, 4);
	CHECK_EQ(a.e[7].perm, 0);
	r4_acl_free(&a);
	/* no mask: the owning group's entry is the group class */
	acl_of(&a, plain, N(plain));
	mode = 0666;
	CHECK(!r4_acl_create(&a, &mode));
	CHECK_EQ(mode, 0640);
	CHECK(r4_acl_mode(&a, &mode));
	CHECK_EQ(mode, 0640);
	r4_acl_chmod(&a, 0705);
	CHECK_EQ(a.e[1].perm, 0);
	r4_acl_free(&a);
}

/* ---- through the handle calls ---- */

static r4_file *root;

/* The image open again, root on its root. */
static r4_db *reopen(void)
{
	r4_db *db = t_open_rw(img);

	if (db)
		CHECK_RC(r4_file_root(db, &root));
	return db;
}

static r4_db *fresh(void)
{
	r4_db *db;

	unlink(img);
	CHECK_RC(r4_mkfs(img, 32u << 20, NULL));
	if (!(db = reopen()))
		return NULL;
	CHECK_RC(r4_create(db, "/f", 0644, 0, 0));
	CHECK_RC(r4_mkdir(db, "/d", 0755, 0, 0));
	CHECK_RC(r4_setattr(db, "/f", &(struct r4_setattr){.mask = R4_SET_MODE | R4_SET_UID |
							   R4_SET_GID, .mode = 02640, .uid = 1000, .gid = 50}));
	CHECK_RC(r4_setattr(db, "/d", &(struct r4_setattr){.mask = R4_SET_MODE | R4_SET_UID,
							   .mode = 0777, .uid = 1000}));
	return db;
}

static void done(r4_db *db)
{
	r4_file_close(root);
	root = NULL;
	r4_close(db);
}

static int set(r4_file *f, const char *name, const uint32_t *e, size_t n)
{
	uint8_t v[256];

	return r4_file_setxattr(f, name, v, value(v, 2, e, n), 0);
}

/* f's ACL name: its entries' count (-errno when it has none) and e[]. */
static long get(r4_file *f, const char *name, struct r4_acl *a)
{
	uint8_t v[256];
	size_t len;
	int rc = r4_file_getxattr(f, name, v, sizeof(v), &len);

	a->e = NULL;
	a->n = 0;
	return rc ? rc : r4_acl_parse(v, len, a) ? -1 : (long)a->n;
}

static uint32_t mode_of(r4_file *f)
{
	struct r4_stat st;

	CHECK_RC(r4_file_stat(f, &st));
	return st.mode & 07777;
}

/* db closed with f and opened again, *f on "/f" again; NULL when it did
 * not open. */
static r4_db *again(r4_db *db, r4_file **f)
{
	r4_file_close(*f);
	done(db);
	if ((db = reopen()))
		*f = t_at(root, "f");
	return db;
}

/* r4_file_access(f, want) as who. */
static int may(r4_db *db, r4_file *f, const struct r4_ident *who, unsigned want)
{
	int rc;

	CHECK_RC(r4_act_as(db, who, 0));
	rc = r4_file_access(f, want);
	CHECK_RC(r4_act_as(db, NULL, 0));
	return rc;
}

static const struct r4_ident OWNER = {1000, 1000, NULL, 0, 022};
static const struct r4_ident U1001 = {1001, 1001, NULL, 0, 022};
static const struct r4_ident U1002 = {1002, 1002, NULL, 0, 077};

static void test_calls(void)
{
	static const uint32_t named[] = {UO, 6, 0, U, 6, 1001, GO, 4, 0, M, 4, 0, O, 0, 0};
	static const uint32_t base[] = {UO, 7, 0, GO, 5, 0, O, 1, 0};
	static const uint32_t nomask[] = {UO, 6, 0, U, 6, 1001, GO, 4, 0, O, 0, 0};
	r4_file *f, *d;
	struct r4_acl a;
	char names[256];
	size_t len;
	r4_db *db = fresh();

	if (!db)
		return;
	f = t_at(root, "f");
	d = t_at(root, "d");
	CHECK_EQ(get(f, R4_ACL_ACCESS, &a), -ENODATA);
	CHECK_EQ(get(f, R4_ACL_DEFAULT, &a), -ENODATA);
	CHECK_EQ(get(d, R4_ACL_DEFAULT, &a), -ENODATA);
	/* who may set: the owner (or root) */
	CHECK_RC(r4_act_as(db, &U1001, 0));
	CHECK_EQ(set(f, R4_ACL_ACCESS, named, N(named)), -EPERM);
	CHECK_EQ(r4_file_removexattr(f, R4_ACL_ACCESS), -EPERM);
	CHECK_EQ(get(f, R4_ACL_ACCESS, &a), -ENODATA);	/* (read by anyone) */
	CHECK_RC(r4_act_as(db, &OWNER, 0));
	/* malformed, invalid, a default ACL on a file */
	CHECK_EQ(r4_file_setxattr(f, R4_ACL_ACCESS, "xyz", 3, 0), -EINVAL);
	CHECK_EQ(set(f, R4_ACL_ACCESS, nomask, N(nomask)), -EINVAL);
	CHECK_EQ(set(f, R4_ACL_DEFAULT, base, N(base)), -EACCES);
	CHECK_RC(r4_file_removexattr(f, R4_ACL_DEFAULT));
	CHECK_RC(r4_file_removexattr(f, R4_ACL_ACCESS));	/* none: no error, as Linux */
	/* an ACL the mode says: the mode, nothing stored; setgid goes (1000
	 * is not in group 50) */
	CHECK_RC(set(f, R4_ACL_ACCESS, base, N(base)));
	CHECK_EQ(mode_of(f), 0751);
	CHECK_EQ(get(f, R4_ACL_ACCESS, &a), -ENODATA);
	/* a named entry: stored, the mode's group bits the mask */
	CHECK_RC(set(f, R4_ACL_ACCESS, named, N(named)));
	CHECK_EQ(mode_of(f), 0640);
	CHECK_EQ(get(f, R4_ACL_ACCESS, &a), 5);
	CHECK(a.e[1].tag == U && a.e[1].id == 1001 && a.e[1].perm == 6);
	r4_acl_free(&a);
	CHECK_RC(r4_file_listxattr(f, names, sizeof(names), &len));
	CHECK(len == sizeof(R4_ACL_ACCESS) && !strcmp(names, R4_ACL_ACCESS));
	/* enforced: 1001 named rw within mask r; 1002 other, nothing */
	CHECK_RC(r4_act_as(db, &U1001, 0));
	CHECK_RC(r4_file_access(f, 4));
	CHECK_EQ(r4_file_access(f, 2), -EACCES);
	CHECK_RC(r4_act_as(db, &U1002, 0));
	CHECK_EQ(r4_file_access(f, 4), -EACCES);
	/* chmod moves the mask */
	CHECK_RC(r4_act_as(db, &OWNER, 0));
	CHECK_RC(r4_file_setattr(f, &(struct r4_setattr){.mask = R4_SET_MODE, .mode = 0664}));
	CHECK_EQ(get(f, R4_ACL_ACCESS, &a), 5);
	CHECK(a.e[3].tag == M && a.e[3].perm == 6 && a.e[4].perm == 4 && a.e[2].perm == 4);
	r4_acl_free(&a);
	CHECK_RC(r4_act_as(db, &U1001, 0));
	CHECK_RC(r4_file_access(f, 2));
	CHECK_RC(r4_act_as(db, &U1002, 0));
	CHECK_RC(r4_file_access(f, 4));
	/* an empty value removes; then the mode alone */
	CHECK_RC(r4_act_as(db, &OWNER, 0));
	CHECK_RC(r4_file_setxattr(f, R4_ACL_ACCESS, NULL, 0, 0));
	CHECK_EQ(get(f, R4_ACL_ACCESS, &a), -ENODATA);
	CHECK_RC(r4_act_as(db, &U1001, 0));
	CHECK_RC(r4_file_access(f, 4));	/* (other's r of 0664 now) */
	CHECK_EQ(r4_file_access(f, 2), -EACCES);
	CHECK_RC(r4_act_as(db, NULL, 0));
	r4_file_close(f);
	r4_file_close(d);
	done(db);
	t_both_clean(img, "set, get, remove");
}

/* A default ACL: what files and directories made in it get, umask aside. */
static void test_inherit(void)
{
	static const uint32_t dflt[] = {UO, 7, 0, U, 7, 1001, GO, 5, 0, M, 7, 0, O, 5, 0};
	struct r4_newobj file = {.mode = S_IFREG | 0666}, sub = {.mode = S_IFDIR | 0777},
			 lnk = {.mode = S_IFLNK | 0777, .target = "f"};
	r4_file *d, *f, *s, *l, *g;
	struct r4_stat st;
	struct r4_acl a;
	r4_db *db = fresh();

	if (!db)
		return;
	d = t_at(root, "d");
	CHECK_RC(r4_act_as(db, &OWNER, 0));
	CHECK_RC(set(d, R4_ACL_DEFAULT, dflt, N(dflt)));
	CHECK_EQ(get(d, R4_ACL_DEFAULT, &a), 5);
	r4_acl_free(&a);
	CHECK_EQ(get(d, R4_ACL_ACCESS, &a), -ENODATA);
	/* as 1002, umask 077: not applied */
	CHECK_RC(r4_act_as(db, &U1002, 0));
	CHECK_RC(r4_file_make(d, "f", 1, &file, &f));
	CHECK_RC(r4_file_make(d, "s", 1, &sub, &s));
	CHECK_RC(r4_file_make(d, "l", 1, &lnk, &l));
	CHECK_RC(r4_act_as(db, NULL, 0));
	CHECK_EQ(mode_of(f), 0664);	/* (other r-x of the default, masked) */
	CHECK_EQ(get(f, R4_ACL_ACCESS, &a), 5);
	CHECK(a.e[1].perm == 7 && a.e[3].perm == 6);	/* user 1001 rwx, mask rw */
	r4_acl_free(&a);
	CHECK_EQ(get(f, R4_ACL_DEFAULT, &a), -ENODATA);
	CHECK_EQ(mode_of(s), 0775);
	CHECK_EQ(get(s, R4_ACL_ACCESS, &a), 5);
	r4_acl_free(&a);
	CHECK_EQ(get(s, R4_ACL_DEFAULT, &a), 5);
	r4_acl_free(&a);
	CHECK_EQ(get(l, R4_ACL_ACCESS, &a), -ENODATA);
	/* what R4L makes there too (as root, umask 022) */
	CHECK_RC(t_run(db, "/d/r4l <- \"x\""));
	CHECK_RC(r4_stat(db, "/d/r4l", &st));
	CHECK_EQ(st.mode & 07777, 0664);
	g = t_at(d, "r4l");
	CHECK_EQ(get(g, R4_ACL_ACCESS, &a), 5);
	r4_acl_free(&a);
	r4_file_close(g);
	CHECK_RC(r4_file_remove(d, "r4l", 3, false));
	/* 1001 writes what 1002 made */
	CHECK_RC(r4_act_as(db, &U1001, 0));
	CHECK_RC(r4_file_access(f, 6));
	/* a grandchild inherits again; without a default ACL the umask */
	CHECK_RC(r4_file_make(s, "g", 1, &file, &g));
	CHECK_EQ(get(g, R4_ACL_ACCESS, &a), 5);
	r4_acl_free(&a);
	r4_file_close(g);
	CHECK_RC(r4_act_as(db, &(struct r4_ident){0, 0, NULL, 0, 077}, 0));
	CHECK_RC(r4_file_make(root, "plain", 5, &file, &g));
	CHECK_EQ(mode_of(g), 0600);
	r4_file_close(g);
	CHECK_RC(r4_act_as(db, NULL, 0));
	/* the records go with their objects */
	CHECK_RC(r4_file_remove(d, "f", 1, false));
	CHECK_RC(r4_file_remove(s, "g", 1, false));
	r4_file_close(f);
	r4_file_close(l);
	r4_file_close(s);
	CHECK_RC(r4_file_remove(d, "s", 1, true));
	CHECK_RC(r4_file_remove(d, "l", 1, false));
	r4_file_close(d);
	done(db);
	t_both_clean(img, "inheritance, removal");
	/* (no record but the directory's is left: reopened, the table agrees) */
	if ((db = t_open_rw(img))) {
		char **v;
		size_t n;

		CHECK_RC(r4_fs_names(db, "/..r4", &v, &n));
		CHECK_EQ(n, 1);
		r4_fs_names_free(v, n);
		r4_close(db);
	}
}

/* An abort forgets an ACL set in it: enforcement is the mode's again. */
static void test_abort(void)
{
	static const uint32_t deny[] = {UO, 6, 0, U, 0, 1001, GO, 6, 0, M, 6, 0, O, 6, 0};
	r4_file *f;
	struct r4_acl a;
	r4_db *db = fresh();

	if (!db)
		return;
	f = t_at(root, "f");
	CHECK_RC(r4_setattr(db, "/f", &(struct r4_setattr){.mask = R4_SET_MODE, .mode = 0666}));
	CHECK_RC(r4_begin(db));
	CHECK_RC(set(f, R4_ACL_ACCESS, deny, N(deny)));
	CHECK_EQ(may(db, f, &U1001, 4), -EACCES);
	/* a mask of nothing: the mode alone (Linux's acl_permission_check) */
	CHECK_RC(r4_act_as(db, &OWNER, 0));
	CHECK_RC(r4_file_setattr(f, &(struct r4_setattr){.mask = R4_SET_MODE, .mode = 0604}));
	CHECK_RC(may(db, f, &U1001, 4));
	r4_abort(db);
	CHECK_EQ(get(f, R4_ACL_ACCESS, &a), -ENODATA);
	CHECK_RC(may(db, f, &U1001, 6));
	/* committed, then reopened: the table is read from the records */
	CHECK_RC(set(f, R4_ACL_ACCESS, deny, N(deny)));
	if (!(db = again(db, &f)))
		return;
	CHECK_EQ(may(db, f, &U1001, 4), -EACCES);
	CHECK_RC(may(db, f, &U1002, 6));
	r4_file_close(f);
	done(db);
	t_both_clean(img, "an abort");
}

/* r4's access rules (..acl) come before an ACL: a rule for the caller
 * decides; without one, the ACL. */
static void test_rules(void)
{
	static const uint32_t deny[] = {UO, 6, 0, U, 0, 1001, GO, 6, 0, M, 6, 0, O, 6, 0};
	r4_file *f;
	r4_db *db = fresh();

	if (!db)
		return;
	f = t_at(root, "f");
	CHECK_RC(set(f, R4_ACL_ACCESS, deny, N(deny)));
	CHECK_EQ(may(db, f, &U1001, 4), -EACCES);
	CHECK_RC(may(db, f, &U1002, 6));
	CHECK_RC(t_run(db, "/f/..acl/(uid <- #1001; access <- read)"));
	CHECK_RC(t_run(db, "/f/..acl/(uid <- #1002; access <- denied)"));
	CHECK_RC(may(db, f, &U1001, 4));
	CHECK_EQ(may(db, f, &U1001, 2), -EACCES);
	CHECK_EQ(may(db, f, &U1002, 4), -EACCES);
	r4_file_close(f);
	done(db);
	t_both_clean(img, "rules and an ACL");
}

/* A stored ACL that does not read: the record is damaged (r4 fsck says
 * so, and --fix removes it); until then the object denies all but root. */
static void test_damaged(void)
{
	static const char rec[] = "R4XATTR1\x17\x0c\x00\x00\x00system.posix_acl_access"
				  "\x02\x00\x00\x00\x01\x00\x06\x00\xff\xff\xff\xff";
	struct r4_check_opts o = {.fix = true};
	struct r4_check_result res;
	char path[64];
	r4_file *f, *l;
	r4_db *db = fresh();

	if (!db)
		return;
	f = t_at(root, "f");
	CHECK_RC(r4_symlink(db, "f", "/l", 0, 0));
	l = t_at(root, "l");
	CHECK_EQ(r4_file_setxattr(l, R4_ACL_ACCESS, "\x02\0\0\0", 4, 0), -EOPNOTSUPP);
	r4_file_close(l);
	CHECK_RC(r4_setattr(db, "/f", &(struct r4_setattr){.mask = R4_SET_MODE, .mode = 0666}));
	snprintf(path, sizeof(path), "/..r4/%llu.x", (unsigned long long)r4_file_id(f));
	CHECK_RC(r4_mkdir(db, "/..r4", 0700, 0, 0));
	CHECK_RC(r4_create(db, path, 0600, 0, 0));
	CHECK_RC(r4_write(db, path, 0, rec, sizeof(rec) - 1));
	if (!(db = again(db, &f)))
		return;
	CHECK_EQ(may(db, f, &U1001, 4), -EACCES);
	r4_file_close(f);
	CHECK_RC(r4_check(db, NULL, &res));
	CHECK_EQ(res.problems, 1);
	CHECK_RC(r4_check(db, &o, &res));
	CHECK_EQ(res.fixed, 1);
	done(db);
	t_both_clean(img, "the fix");
}

int main(void)
{
	snprintf(dir, sizeof(dir), "%s/r4acl.XXXXXX", t_tmp());
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	snprintf(img, sizeof(img), "%s/img", dir);
	test_format();
	test_algorithms();
	test_calls();
	test_inherit();
	test_abort();
	test_rules();
	test_damaged();
	t_rmdir(dir);
	return T_DONE();
}
