/*
 * test_xattr.c - extended attributes through the handle calls
 * (r4_file_getxattr, _setxattr, _listxattr, _removexattr; engine/xattr.c,
 * the rules of engine/perm.c; docs/semantics.md, "Extended attributes"):
 *  - set, get, list, remove; the flags; getxattr(2)'s size probe; names
 *    with any byte; the namespaces and the names that cannot be stored;
 *    the limits, exactly;
 *  - the rules as uid 1000: types, read and write permission, access
 *    rules, the sticky bit, trusted.* and security.*;
 *  - the record goes with its object (the last name, the last close of an
 *    open file, a directory); an abort leaves nothing; a full volume
 *    refuses a set with ENOSPC and nothing changed; a change is audited;
 *  - records of bodies in extents, tails or compressed clusters;
 *  - r4's checker and fsck.reiser4 call the image clean after each, and
 *    r4's checker reports (and its fix removes) a record of an object
 *    that is gone and one that does not read.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "t.h"

static char dir[256], img[300];

static const struct r4_ident USER = {1000, 1000, NULL, 0, 022};

static r4_file *root;	/* the open image's root */

/* The image open, root on its root. */
static r4_db *reopen(void)
{
	r4_db *db = t_open_rw(img);

	if (db)
		CHECK_RC(r4_file_root(db, &root));
	return db;
}

/* A fresh image of size bytes, open, with the regular files "/f" and
 * "/g", and what setup (R4L, or NULL) makes. */
static r4_db *fresh(const char *setup, uint64_t size)
{
	r4_db *db;

	unlink(img);
	CHECK_RC(r4_mkfs(img, size, NULL));
	if ((db = reopen()))
		CHECK_RC(t_run(db, setup ? setup : "/f <- \"x\"; /g <- \"y\""));
	return db;
}

/* The root's handle closed, then db. */
static void done(r4_db *db)
{
	r4_file_close(root);
	root = NULL;
	r4_close(db);
}

/* A directory or file at path, and its mode and owner. */
static void make(r4_db *db, const char *path, uint32_t mode, uint32_t uid)
{
	struct r4_setattr sa = {.mask = R4_SET_MODE | R4_SET_UID, .mode = mode & 07777, .uid = uid};

	CHECK_RC(S_ISDIR(mode) ? r4_mkdir(db, path, 0755, 0, 0) : r4_create(db, path, 0644, 0, 0));
	CHECK_RC(r4_setattr(db, path, &sa));
}

static int set(r4_file *f, const char *name, const char *v, int flags)
{
	return r4_file_setxattr(f, name, v, strlen(v), flags);
}

/* name's value as a string ("" and rc when there is none). */
static const char *get(r4_file *f, const char *name, int *rc)
{
	static char buf[256];
	size_t len = 0;

	*rc = r4_file_getxattr(f, name, buf, sizeof(buf) - 1, &len);
	buf[*rc ? 0 : len] = 0;
	return buf;
}

/* The names listxattr gives, '|' for each NUL ("" on an error). */
static const char *names(r4_file *f)
{
	static char buf[4096];
	size_t len = 0;

	if (r4_file_listxattr(f, buf, sizeof(buf) - 1, &len))
		return "(error)";
	for (size_t i = 0; i < len; i++)
		if (!buf[i])
			buf[i] = '|';
	buf[len] = 0;
	return buf;
}

static bool exists(r4_db *db, const char *path)
{
	struct r4_stat st;

	return !r4_stat(db, path, &st);
}

/* The record's path of object oid. */
static const char *record(uint64_t oid)
{
	static char p[64];

	snprintf(p, sizeof(p), "/..r4/%llu.x", (unsigned long long)oid);
	return p;
}

/* Set, get, list, remove, flags, the size probe, odd names, namespaces. */
static void test_calls(void)
{
	static const char odd[] = "user.\x01 \n\\/\xff\xc3\xa9..x";
	r4_file *f;
	char buf[8];
	size_t len;
	int rc;
	r4_db *db = fresh(NULL, 32u << 20);

	if (!db)
		return;
	f = t_at(root, "f");
	CHECK(!strcmp(names(f), ""));
	CHECK_EQ(r4_file_getxattr(f, "user.a", buf, sizeof(buf), &len), -ENODATA);
	CHECK_RC(set(f, "user.b", "two", 0));
	CHECK_RC(set(f, "user.a", "one", R4_XATTR_CREATE));
	CHECK_RC(set(f, "trusted.t", "tee", 0));
	CHECK_RC(set(f, "security.s", "ess", 0));
	CHECK_RC(set(f, odd, "odd", 0));
	CHECK_RC(r4_file_setxattr(f, "user.empty", NULL, 0, 0));
	CHECK(!strcmp(get(f, "user.a", &rc), "one") && !rc);
	CHECK(!strcmp(get(f, "user.b", &rc), "two") && !rc);
	CHECK(!strcmp(get(f, odd, &rc), "odd") && !rc);
	CHECK(!strcmp(get(f, "user.empty", &rc), "") && !rc);
	CHECK(!strcmp(names(f), "security.s|trusted.t|user.\x01 \n\\/\xff\xc3\xa9..x|user.a|user.b|"
				"user.empty|"));
	/* getxattr(2)'s contract: size 0 asks, a short buffer is ERANGE */
	CHECK_RC(r4_file_getxattr(f, "user.b", NULL, 0, &len));
	CHECK_EQ(len, 3);
	CHECK_EQ(r4_file_getxattr(f, "user.b", buf, 2, &len), -ERANGE);
	CHECK_EQ(len, 3);
	CHECK_RC(r4_file_listxattr(f, NULL, 0, &len));
	CHECK_EQ(len, strlen(names(f)));
	CHECK_EQ(r4_file_listxattr(f, buf, 4, &len), -ERANGE);
	/* the flags */
	CHECK_EQ(set(f, "user.a", "x", R4_XATTR_CREATE), -EEXIST);
	CHECK_EQ(set(f, "user.c", "x", R4_XATTR_REPLACE), -ENODATA);
	CHECK_EQ(set(f, "user.c", "x", 4), -EINVAL);
	CHECK_RC(set(f, "user.a", "uno", R4_XATTR_REPLACE));
	CHECK(!strcmp(get(f, "user.a", &rc), "uno"));
	CHECK_RC(set(f, "user.a", "un", 0));
	CHECK(!strcmp(get(f, "user.a", &rc), "un"));
	/* what cannot be stored */
	CHECK_EQ(set(f, "system.posix_acl_other", "x", 0), -EOPNOTSUPP);	/* (test_acl.c: ACLs) */
	CHECK_EQ(set(f, "other.x", "x", 0), -EOPNOTSUPP);
	CHECK_EQ(set(f, "user.r4.mode", "0600", 0), -EPERM);
	CHECK_EQ(set(f, "user.r4.nosuch", "x", 0), -EPERM);
	CHECK_EQ(set(f, "user.", "x", 0), -EINVAL);
	CHECK_EQ(set(f, "", "x", 0), -ERANGE);
	get(f, "system.posix_acl_other", &rc);
	CHECK_EQ(rc, -ENODATA);
	get(f, "user.r4.mode", &rc);
	CHECK_EQ(rc, -ENODATA);
	CHECK_EQ(r4_file_removexattr(f, "system.posix_acl_other"), -ENODATA);
	/* remove */
	CHECK_RC(r4_file_removexattr(f, "user.b"));
	CHECK_EQ(r4_file_removexattr(f, "user.b"), -ENODATA);
	get(f, "user.b", &rc);
	CHECK_EQ(rc, -ENODATA);
	CHECK(exists(db, record(r4_file_id(f))));
	CHECK_RC(r4_file_removexattr(f, odd));
	CHECK_RC(r4_file_removexattr(f, "user.a"));
	CHECK_RC(r4_file_removexattr(f, "user.empty"));
	CHECK_RC(r4_file_removexattr(f, "trusted.t"));
	CHECK_RC(r4_file_removexattr(f, "security.s"));
	CHECK(!strcmp(names(f), ""));
	CHECK(!exists(db, record(r4_file_id(f))));	/* none left: no record */
	CHECK_RC(set(f, "user.kept", "across a close", 0));
	r4_file_close(f);
	done(db);
	t_both_clean(img, "set, replace, remove");

	if (!(db = reopen()))
		return;
	f = t_at(root, "f");
	CHECK(!strcmp(get(f, "user.kept", &rc), "across a close") && !rc);
	r4_file_close(f);
	done(db);
}

/* The limits, exactly: a name's length, a value's size, an object's
 * total of names and values, its list of names. */
static void test_limits(void)
{
	static char big[R4_XATTR_SIZE_MAX + 1];
	char name[R4_XATTR_NAME_MAX + 2];
	r4_file *f, *g;
	size_t len, total = 0;
	int rc = 0;
	r4_db *db = fresh(NULL, 64u << 20);

	if (!db)
		return;
	memset(big, 'v', sizeof(big));
	f = t_at(root, "f");
	g = t_at(root, "g");
	memset(name, 'n', sizeof(name));
	memcpy(name, "user.", 5);
	name[R4_XATTR_NAME_MAX + 1] = 0;
	CHECK_EQ(set(f, name, "x", 0), -ERANGE);
	CHECK_EQ(r4_file_getxattr(f, name, NULL, 0, &len), -ERANGE);
	name[R4_XATTR_NAME_MAX] = 0;
	CHECK_RC(set(f, name, "x", 0));
	CHECK_EQ(r4_file_setxattr(f, "user.big", big, R4_XATTR_SIZE_MAX + 1, 0), -E2BIG);
	CHECK_RC(r4_file_removexattr(f, name));
	/* the total: three values of the largest size, then one that fills it */
	CHECK_RC(r4_begin(db));
	for (int i = 0; i < 3; i++) {
		char n[] = "user.0";

		n[5] = (char)('a' + i);
		CHECK_RC(r4_file_setxattr(f, n, big, R4_XATTR_SIZE_MAX, 0));
		total += strlen(n) + R4_XATTR_SIZE_MAX;
	}
	CHECK_EQ(r4_file_setxattr(f, "user.d", big, R4_XATTR_TOTAL_MAX - total - 5, 0), -ENOSPC);
	CHECK_RC(r4_file_setxattr(f, "user.d", big, R4_XATTR_TOTAL_MAX - total - 6, 0));
	CHECK_EQ(r4_file_setxattr(f, "user.e", NULL, 0, 0), -ENOSPC);
	/* a replacement counts the value it replaces out */
	CHECK_RC(r4_file_setxattr(f, "user.a", big, R4_XATTR_SIZE_MAX, 0));
	CHECK_RC(r4_file_getxattr(f, "user.d", NULL, 0, &len));
	CHECK_EQ(len, R4_XATTR_TOTAL_MAX - total - 6);
	CHECK_RC(r4_txn_error(db));
	CHECK_RC(r4_commit(db));
	/* the list of names: 256 names of 255 bytes fill its 64 KiB */
	CHECK_RC(r4_begin(db));
	for (int i = 0; i < 257 && !rc; i++) {
		name[5] = (char)('a' + i / 26 / 26 % 26);
		name[6] = (char)('a' + i / 26 % 26);
		name[7] = (char)('a' + i % 26);
		rc = set(g, name, "", 0);
		CHECK(i < 256 ? rc == 0 : rc == -ENOSPC);
	}
	CHECK_RC(r4_file_listxattr(g, NULL, 0, &len));
	CHECK_EQ(len, R4_XATTR_LIST_MAX);
	CHECK_RC(r4_commit(db));
	r4_file_close(g);
	r4_file_close(f);
	done(db);
	t_both_clean(img, "the limits");
}

/* Which objects may have which attributes, and who may do what, as uid
 * 1000 (and the trusted caller). */
static void test_rules(void)
{
	r4_file *f, *p, *l, *d, *s, *u, *h, *a;
	size_t len;
	int rc;
	r4_db *db = fresh(NULL, 32u << 20);

	if (!db)
		return;
	make(db, "/priv", S_IFREG | 0600, 0);
	make(db, "/d", S_IFDIR | 0700, 0);
	make(db, "/d/h", S_IFREG | 0644, 0);
	make(db, "/s", S_IFDIR | 01777, 0);
	make(db, "/u", S_IFDIR | 01777, 1000);
	make(db, "/a", S_IFREG | 0600, 0);
	CHECK_RC(r4_symlink(db, "f", "/l", 0, 0));
	CHECK_RC(t_run(db, "/a/..acl/(uid <- #1000; access <- read)"));
	f = t_at(root, "f");
	p = t_at(root, "priv");
	l = t_at(root, "l");
	d = t_at(root, "d");
	s = t_at(root, "s");
	u = t_at(root, "u");
	h = t_at(d, "h");
	a = t_at(root, "a");
	/* types: user.* only on regular files and directories, for everyone */
	CHECK_EQ(set(l, "user.x", "1", 0), -EPERM);
	get(l, "user.x", &rc);
	CHECK_EQ(rc, -ENODATA);
	CHECK_RC(set(l, "trusted.x", "1", 0));
	CHECK_RC(set(f, "user.x", "1", 0));
	CHECK_RC(set(f, "trusted.x", "t", 0));
	CHECK_RC(set(f, "security.x", "s", 0));
	CHECK_RC(set(p, "user.x", "p", 0));
	CHECK_RC(set(h, "user.x", "h", 0));
	CHECK_RC(set(s, "user.x", "s", 0));	/* root may, on the sticky directory */
	CHECK_RC(set(a, "user.x", "a", 0));

	CHECK_RC(r4_act_as(db, &USER, 0));
	/* user.*: read permission to read, write permission to write */
	CHECK(!strcmp(get(f, "user.x", &rc), "1") && !rc);
	CHECK_EQ(set(f, "user.x", "2", 0), -EACCES);
	CHECK_EQ(r4_file_removexattr(f, "user.x"), -EACCES);
	get(p, "user.x", &rc);
	CHECK_EQ(rc, -EACCES);
	get(p, "user.none", &rc);
	CHECK_EQ(rc, -EACCES);		/* permission before existence */
	CHECK(!strcmp(get(a, "user.x", &rc), "a") && !rc);	/* its access rule reads */
	CHECK_EQ(set(a, "user.x", "b", 0), -EACCES);
	get(h, "user.x", &rc);
	CHECK_EQ(rc, -EACCES);		/* the way: no search on /d */
	CHECK_EQ(r4_file_listxattr(h, NULL, 0, &len), -EACCES);
	/* a sticky directory: its owner only, whoever may write it */
	CHECK_EQ(set(s, "user.y", "1", 0), -EPERM);
	CHECK_RC(set(u, "user.y", "1", 0));
	/* trusted.*: root's; invisible to others */
	get(f, "trusted.x", &rc);
	CHECK_EQ(rc, -ENODATA);
	CHECK_EQ(set(f, "trusted.y", "1", 0), -EPERM);
	CHECK_EQ(r4_file_removexattr(f, "trusted.x"), -EPERM);
	CHECK(!strcmp(names(f), "security.x|user.x|"));
	/* security.*: read by anyone, written by root */
	CHECK(!strcmp(get(f, "security.x", &rc), "s") && !rc);
	CHECK(!strcmp(get(p, "security.none", &rc), "") && rc == -ENODATA);
	CHECK_EQ(set(f, "security.y", "1", 0), -EPERM);
	CHECK_EQ(r4_file_removexattr(f, "security.x"), -EPERM);
	/* the owner of a file may */
	CHECK_RC(r4_act_as(db, NULL, 0));
	CHECK_RC(r4_file_setattr(f, &(struct r4_setattr){.mask = R4_SET_UID, .uid = 1000}));
	CHECK_RC(r4_act_as(db, &USER, 0));
	CHECK_RC(set(f, "user.x", "2", 0));
	CHECK_RC(r4_file_removexattr(f, "user.x"));
	/* R4_AS_NOCHECK (a kernel that checks): nothing is checked, but a
	 * listing still hides trusted.* */
	CHECK_RC(r4_act_as(db, &USER, R4_AS_NOCHECK));
	CHECK(!strcmp(get(p, "user.x", &rc), "p") && !rc);
	CHECK(!strcmp(names(f), "security.x|"));
	CHECK_RC(r4_act_as(db, NULL, 0));
	CHECK(!strcmp(names(f), "security.x|trusted.x|"));

	r4_file_close(a);
	r4_file_close(h);
	r4_file_close(u);
	r4_file_close(s);
	r4_file_close(d);
	r4_file_close(l);
	r4_file_close(p);
	r4_file_close(f);
	done(db);
	t_both_clean(img, "the rules");
}

/* The record goes with its object: the last name, the last close of an
 * open file whose names went, a directory; a rename or link keeps it. */
static void test_removal(void)
{
	r4_file *f, *g, *d;
	uint64_t fo, go, dof;
	int rc;
	r4_db *db = fresh(NULL, 32u << 20);

	if (!db)
		return;
	make(db, "/d", S_IFDIR | 0755, 0);
	f = t_at(root, "f");
	g = t_at(root, "g");
	d = t_at(root, "d");
	fo = r4_file_id(f);
	go = r4_file_id(g);
	dof = r4_file_id(d);
	CHECK_RC(set(f, "user.a", "f", 0));
	CHECK_RC(set(g, "user.a", "g", 0));
	CHECK_RC(set(d, "user.a", "d", 0));
	CHECK_RC(r4_file_rename(root, "f", 1, d, "moved", 5, 0));
	CHECK_RC(r4_file_link(f, root, "f2", 2));
	CHECK(!strcmp(get(f, "user.a", &rc), "f") && !rc);
	CHECK_RC(r4_file_remove(d, "moved", 5, false));
	CHECK(exists(db, record(fo)));			/* another name is left */
	r4_file_close(f);
	CHECK_RC(r4_file_remove(root, "f2", 2, false));
	CHECK(!exists(db, record(fo)));
	/* open: the record stays with the orphan, and goes at its last close */
	CHECK_RC(r4_file_remove(root, "g", 1, false));
	CHECK(exists(db, record(go)));
	CHECK(!strcmp(get(g, "user.a", &rc), "g") && !rc);
	r4_file_close(g);
	CHECK(!exists(db, record(go)));
	CHECK_RC(r4_file_remove(root, "d", 1, true));
	CHECK(!exists(db, record(dof)));
	r4_file_close(d);
	done(db);
	t_both_clean(img, "the objects removed");
}

/* An aborted transaction leaves nothing: not the attribute, not "..r4". */
static void test_abort(void)
{
	r4_file *f;
	int rc;
	r4_db *db = fresh(NULL, 32u << 20);

	if (!db)
		return;
	f = t_at(root, "f");
	CHECK_RC(r4_begin(db));
	CHECK_RC(set(f, "user.a", "1", 0));
	CHECK(exists(db, "/..r4"));
	r4_abort(db);
	get(f, "user.a", &rc);
	CHECK_EQ(rc, -ENODATA);
	CHECK(!exists(db, "/..r4"));
	CHECK_RC(set(f, "user.a", "1", 0));
	CHECK_RC(r4_begin(db));
	CHECK_RC(set(f, "user.a", "2", 0));
	CHECK_RC(r4_file_removexattr(f, "user.a"));
	r4_abort(db);
	CHECK(!strcmp(get(f, "user.a", &rc), "1") && !rc);
	r4_file_close(f);
	done(db);
	t_both_clean(img, "an abort");
}

/* A full volume refuses a set with ENOSPC before it changes anything; the
 * transaction goes on.  A removal may still be made. */
static void test_full(void)
{
	static char big[R4_XATTR_SIZE_MAX];
	r4_file *f;
	unsigned ok = 0;
	size_t len;
	int rc = 0;
	r4_db *db = fresh(NULL, 16u << 20);

	if (!db)
		return;
	f = t_at(root, "f");
	CHECK_RC(set(f, "user.small", "1", 0));
	t_fill(db, "/fill");
	CHECK_RC(r4_begin(db));
	for (unsigned i = 0; i < 4 && !(rc = r4_file_setxattr(f, "user.big", big, sizeof(big), 0));
	     i++)
		ok++;
	CHECK_EQ(rc, -ENOSPC);
	CHECK_RC(r4_txn_error(db));
	CHECK_RC(r4_file_getxattr(f, "user.small", NULL, 0, &len));
	CHECK_EQ(r4_file_getxattr(f, "user.big", NULL, 0, &len), ok ? 0 : -ENODATA);
	CHECK_RC(r4_file_removexattr(f, "user.small"));
	CHECK_RC(r4_commit(db));
	printf("# %u sets of 64 KiB before the volume was full\n", ok);
	r4_file_close(f);
	done(db);
	t_both_clean(img, "a full volume");
}

/* A set or remove on an audited object records `setattr` 0, as the
 * acting identity. */
static void test_audit(void)
{
	r4_file *f;
	char log[256];
	size_t got = 0;
	r4_db *db = fresh("/f <- \"x\"; /log <- \"\"; /f/..mode <- \"0666\"; "
			  "/f/..audit/(log <- /log)", 32u << 20);

	if (!db)
		return;
	f = t_at(root, "f");
	CHECK_RC(set(f, "user.a", "1", 0));
	CHECK_RC(r4_act_as(db, &USER, 0));
	CHECK_RC(r4_file_removexattr(f, "user.a"));
	CHECK_EQ(set(f, "trusted.a", "1", 0), -EPERM);	/* refused: no record */
	CHECK_RC(r4_act_as(db, NULL, 0));
	CHECK_RC(r4_read(db, "/log", 0, log, sizeof(log) - 1, &got));
	log[got] = 0;
	CHECK(!strcmp(log, "1700000000 0 setattr /f 0\n"
			   "1700000000 0 setattr /f 0\n"
			   "1700000000 1000 setattr /f 0\n"));
	r4_file_close(f);
	done(db);
}

/* Whatever a new file's plugins (its body as extents, tails, compressed
 * clusters), a change grabs what storing the record can take (asserted
 * at the end of each operation) and the image stays clean. */
static void test_volumes(void)
{
	static const struct {
		unsigned formatting, create;
	} v[] = {{0, 0}, {1, 0}, {2, 0}, {~0u, 4}};
	static char big[R4_XATTR_SIZE_MAX];
	r4_file *f;

	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		struct r4_mkfs_opts m;
		r4_db *db;

		r4_mkfs_defaults(&m);
		if (v[i].formatting != ~0u)
			m.formatting = v[i].formatting;
		m.create = v[i].create;
		unlink(img);
		CHECK_RC(r4_mkfs(img, 32u << 20, &m));
		if (!(db = reopen()))
			return;
		CHECK_RC(r4_create(db, "/f", 0644, 0, 0));
		f = t_at(root, "f");
		memset(big, (int)i, sizeof(big));
		CHECK_RC(set(f, "user.small", "s", 0));
		CHECK_RC(r4_file_setxattr(f, "user.a", big, sizeof(big), 0));
		CHECK_RC(r4_file_setxattr(f, "user.b", big, 100, 0));
		CHECK_RC(r4_file_setxattr(f, "user.a", big, 5000, 0));
		CHECK_RC(r4_file_removexattr(f, "user.small"));
		CHECK_RC(r4_file_setxattr(f, "user.c", big, sizeof(big), 0));
		r4_file_close(f);
		done(db);
		t_both_clean(img, v[i].create ? "a ccreg40 volume" : "a volume's formatting");
	}
}

/* r4's checker: a record of an object that is gone, and one that does
 * not read, are reported, and the fix removes them (the object keeps its
 * mode: attributes are no access rules). */
static void test_check(void)
{
	static const char junk[] = "R4XATTR1\x03\x01\x00\x00\x00zzz?";
	struct r4_check_opts o = {.fix = true};
	struct r4_check_result res;
	r4_file *f;
	struct r4_stat st;
	char bad[64];
	r4_db *db = fresh(NULL, 32u << 20);

	if (!db)
		return;
	f = t_at(root, "f");
	CHECK_RC(set(f, "user.a", "1", 0));
	snprintf(bad, sizeof(bad), "%s", record(r4_file_id(f)));
	r4_file_close(f);
	CHECK_RC(r4_create(db, "/..r4/999999.x", 0600, 0, 0));
	CHECK_RC(r4_write(db, "/..r4/999999.x", 0, "R4XATTR1\x01\x00\x00\x00\x00u", 14));
	CHECK_RC(r4_write(db, bad, 0, junk, sizeof(junk) - 1));
	CHECK_RC(r4_check(db, NULL, &res));
	CHECK_EQ(res.problems, 2);
	CHECK_RC(r4_check(db, &o, &res));
	CHECK_EQ(res.fixed, 2);
	CHECK(!exists(db, bad) && !exists(db, "/..r4/999999.x"));
	CHECK(!r4_stat(db, "/f", &st) && (st.mode & 07777) == 0644);
	done(db);
	t_both_clean(img, "the fix");
}

int main(void)
{
	snprintf(dir, sizeof(dir), "%s/r4xattr.XXXXXX", t_tmp());
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	snprintf(img, sizeof(img), "%s/img", dir);
	test_calls();
	test_limits();
	test_rules();
	test_removal();
	test_abort();
	test_full();
	test_audit();
	test_volumes();
	test_check();
	t_rmdir(dir);
	return T_DONE();
}
