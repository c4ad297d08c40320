/*
 * test_flags.c - inode flags (r4_file_setflags, r4_stat.flags; the rules
 * at the end of engine/perm.c; docs/semantics.md, "Inode flags"):
 *  - what is stored: the kernel's i_flags word in the stat data's flags
 *    extension (S_SYNC 1, S_NOATIME 2, S_APPEND 4, S_IMMUTABLE 8,
 *    S_DIRSYNC 64), added when first needed and kept; across a reopen;
 *    what cannot be stored (-EOPNOTSUPP); DIRSYNC only on a directory;
 *  - who may set: the owner, root alone for immutable and append-only,
 *    nothing else while an object stays immutable;
 *  - every refusal of an immutable or append-only file and directory,
 *    through the handle calls as root, as a trusted caller, through the
 *    calls by path and R4L; what stays allowed;
 *  - a change is audited as setattr, stamps ctime, and a full volume
 *    refuses it with ENOSPC and nothing changed;
 *  - r4's checker and fsck.reiser4 call the image clean.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "obj.h"
#include "t.h"

static char dir[256], img[300];

static const struct r4_ident ROOT = {0, 0, NULL, 0, 022};
static const struct r4_ident USER = {1000, 1000, NULL, 0, 022};
static const struct r4_ident OTHER = {2000, 2000, NULL, 0, 022};

static r4_file *root;

/* A fresh image with what setup (R4L) makes, open, root on its root. */
static r4_db *fresh(const char *setup, uint64_t size)
{
	r4_db *db;

	unlink(img);
	CHECK_RC(r4_mkfs(img, size, NULL));
	if (!(db = t_open_rw(img)))
		return NULL;
	CHECK_RC(t_run(db, setup));
	CHECK_RC(r4_file_root(db, &root));
	return db;
}

static void done(r4_db *db)
{
	r4_file_close(root);
	root = NULL;
	r4_close(db);
}

static uint32_t flags_of(r4_file *f)
{
	struct r4_stat st = {0};

	CHECK_RC(r4_file_stat(f, &st));
	return st.flags;
}

/* The stored word of path's stat data; -1 without the extension. */
static long long word_of(r4_db *db, const char *path)
{
	struct r4_inode ino;
	long long w;

	if (r4_fs_resolve(db, path, &ino))
		return -2;
	w = r4_sd_has(&ino.sd, R4_SDEXT_FLAGS) ? (long long)ino.sd.sd_flags : -1;
	r4_obj_fini(&ino);
	return w;
}

static char *contents(r4_db *db, const char *path)
{
	static char buf[256];
	size_t got = 0;

	buf[0] = 0;
	if (!r4_read(db, path, 0, buf, sizeof(buf) - 1, &got))
		buf[got] = 0;
	return buf;
}

#define SETUP "/f <- \"data\"; /g <- \"\"; /..new/(name <- \"d\"; type <- directory); " \
	"/d/in <- \"x\""

/* What is stored, and what cannot be. */
static void test_stored(void)
{
	r4_file *f, *d, *g, *l;
	struct r4_inode ino;
	struct r4_stat st;
	r4_db *db = fresh(SETUP, 16u << 20);

	if (!db)
		return;
	f = t_at(root, "f");
	d = t_at(root, "d");
	CHECK_EQ(word_of(db, "/f"), -1);	/* none until needed */
	CHECK_EQ(flags_of(f), 0);
	/* a flag Reiser4 cannot store: refused, nothing added */
	CHECK_EQ(r4_file_setflags(f, R4_FL_NODUMP, ~0u), -EOPNOTSUPP);
	CHECK_EQ(r4_file_setflags(f, 0x80000, ~0u), -EOPNOTSUPP);	/* FS_EXTENT_FL */
	CHECK_EQ(word_of(db, "/f"), -1);
	CHECK_RC(r4_file_setflags(f, 0, ~0u));
	CHECK_EQ(word_of(db, "/f"), -1);	/* (nothing to store) */
	CHECK_RC(r4_file_setflags(f, R4_FL_IMMUTABLE | R4_FL_NOATIME, ~0u));
	CHECK_EQ(word_of(db, "/f"), 8 | 2);	/* S_IMMUTABLE | S_NOATIME */
	CHECK_EQ(flags_of(f), R4_FL_IMMUTABLE | R4_FL_NOATIME);
	CHECK_RC(r4_file_setflags(f, 0, R4_FL_IMMUTABLE));
	CHECK_RC(r4_file_setflags(f, R4_FL_APPEND | R4_FL_SYNC, R4_FL_APPEND | R4_FL_SYNC));
	CHECK_EQ(word_of(db, "/f"), 4 | 2 | 1);
	/* DIRSYNC: a directory's, dropped on a file (as ext4) */
	CHECK_RC(r4_file_setflags(f, R4_FL_DIRSYNC, R4_FL_DIRSYNC));
	CHECK_EQ(flags_of(f), R4_FL_APPEND | R4_FL_SYNC | R4_FL_NOATIME);
	CHECK_RC(r4_file_setflags(d, R4_FL_DIRSYNC, ~0u));
	CHECK_EQ(word_of(db, "/d"), 64);
	CHECK_EQ(flags_of(d), R4_FL_DIRSYNC);
	/* cleared: the extension stays, 0 (as the kernel keeps it) */
	CHECK_RC(r4_file_setflags(d, 0, ~0u));
	CHECK_EQ(word_of(db, "/d"), 0);
	CHECK_EQ(flags_of(d), 0);
	/* only regular files and directories */
	CHECK_RC(r4_symlink(db, "f", "/l", 0, 0));
	CHECK_RC(r4_file_lookup(root, "l", 1, &l));
	CHECK_EQ(r4_file_setflags(l, R4_FL_NOATIME, ~0u), -ENOTTY);
	r4_file_close(l);
	/* bits r4 does not know (a kernel's runtime ones) are kept, not shown */
	CHECK_RC(r4_begin(db));
	CHECK_RC(r4_fs_resolve(db, "/g", &ino));
	ino.sd.sd_mask |= UINT64_C(1) << R4_SDEXT_FLAGS;
	ino.sd.sd_flags = 1u << 12;	/* S_NOSEC */
	CHECK_RC(r4_obj_save(db, &ino));
	r4_obj_fini(&ino);
	CHECK_RC(r4_commit(db));
	g = t_at(root, "g");
	CHECK_EQ(flags_of(g), 0);
	CHECK_RC(r4_file_setflags(g, R4_FL_NOATIME, ~0u));
	CHECK_EQ(word_of(db, "/g"), (1 << 12) | 2);
	r4_file_close(g);
	r4_file_close(f);
	r4_file_close(d);
	done(db);
	t_both_clean(img, "flags set");

	/* kept across a close */
	if (!(db = t_open_rw(img)))
		return;
	CHECK_RC(r4_stat(db, "/f", &st));
	CHECK_EQ(st.flags, R4_FL_APPEND | R4_FL_SYNC | R4_FL_NOATIME);
	r4_close(db);
}

/* Who may set them. */
static void test_who(void)
{
	r4_file *f, *o;
	r4_db *db = fresh(SETUP "; /f/..uid <- \"1000\"; /g/..mode <- \"0666\"", 16u << 20);

	if (!db)
		return;
	f = t_at(root, "f");
	o = t_at(root, "g");	/* root's, writable by all */
	CHECK_RC(r4_act_as(db, &USER, 0));
	CHECK_RC(r4_file_setflags(f, R4_FL_NOATIME, ~0u));	/* the owner */
	CHECK_EQ(r4_file_setflags(f, R4_FL_IMMUTABLE, ~0u), -EPERM);	/* root's alone */
	CHECK_EQ(r4_file_setflags(f, R4_FL_APPEND, R4_FL_APPEND), -EPERM);
	CHECK_EQ(r4_file_setflags(o, R4_FL_NOATIME, ~0u), -EPERM);	/* not its owner */
	CHECK_EQ(r4_file_setflags(o, R4_FL_NODUMP, ~0u), -EPERM);	/* (EPERM first) */
	CHECK_RC(r4_act_as(db, &ROOT, 0));
	CHECK_RC(r4_file_setflags(f, R4_FL_IMMUTABLE, R4_FL_IMMUTABLE));
	CHECK_RC(r4_act_as(db, &USER, 0));
	/* while it stays immutable, nothing else changes */
	CHECK_EQ(r4_file_setflags(f, 0, R4_FL_NOATIME), -EPERM);
	CHECK_EQ(r4_file_setflags(f, 0, R4_FL_IMMUTABLE), -EPERM);
	CHECK_EQ(flags_of(f), R4_FL_IMMUTABLE | R4_FL_NOATIME);
	CHECK_RC(r4_act_as(db, &ROOT, 0));
	CHECK_EQ(r4_file_setflags(f, R4_FL_IMMUTABLE, ~0u), -EPERM);
	CHECK_RC(r4_file_setflags(f, R4_FL_IMMUTABLE | R4_FL_NOATIME, ~0u));	/* the same */
	CHECK_RC(r4_file_setflags(f, R4_FL_SYNC, ~0u));	/* cleared with the others */
	CHECK_EQ(flags_of(f), R4_FL_SYNC);
	CHECK_RC(r4_act_as(db, &OTHER, 0));
	CHECK_EQ(r4_file_setflags(f, 0, ~0u), -EPERM);
	CHECK_RC(r4_act_as(db, NULL, 0));
	r4_file_close(f);
	r4_file_close(o);
	done(db);
}

/* Every change of an immutable file, as root, trusted and by path. */
static void immutable_file(r4_db *db, r4_file *f)
{
	struct r4_setattr sa[] = {
		{.mask = R4_SET_MODE, .mode = 0600},	{.mask = R4_SET_UID, .uid = 1},
		{.mask = R4_SET_GID, .gid = 1},		{.mask = R4_SET_SIZE, .size = 1},
		{.mask = R4_SET_MTIME_NOW},		{.mask = R4_SET_ATIME},
	};
	r4_file *g = NULL;

	CHECK_EQ(r4_file_write(f, 0, "x", 1), -EPERM);
	CHECK_EQ(r4_file_write(f, 4, "x", 1), -EPERM);	/* at its end too */
	CHECK_EQ(r4_file_append(f, "x", 1), -EPERM);
	for (size_t i = 0; i < sizeof(sa) / sizeof(sa[0]); i++)
		CHECK_EQ(r4_file_setattr(f, &sa[i]), -EPERM);
	CHECK_EQ(r4_file_fallocate(f, 0, 0, 8192), -EPERM);
	CHECK_EQ(r4_file_reopen(f, O_WRONLY, &g), -EPERM);
	CHECK_EQ(r4_file_reopen(f, O_RDWR | O_APPEND, &g), -EPERM);
	CHECK_EQ(r4_file_reopen(f, O_RDONLY | O_TRUNC, &g), -EPERM);
	CHECK_EQ(r4_file_access(f, 2), -EPERM);
	CHECK_RC(r4_file_access(f, 4));
	CHECK_RC(r4_file_reopen(f, O_RDONLY, &g));
	r4_file_close(g);
	CHECK_EQ(r4_file_setxattr(f, "user.a", "1", 1, 0), -EPERM);
	CHECK_EQ(r4_file_removexattr(f, "user.k"), -EPERM);
	CHECK_EQ(r4_file_remove(root, "f", 1, false), -EPERM);
	CHECK_EQ(r4_file_rename(root, "f", 1, root, "h", 1, 0), -EPERM);
	CHECK_EQ(r4_file_rename(root, "g", 1, root, "f", 1, 0), -EPERM);	/* replaced */
	CHECK_EQ(r4_file_rename(root, "g", 1, root, "f", 1, R4_RENAME_EXCHANGE), -EPERM);
	CHECK_EQ(r4_file_link(f, root, "h", 1), -EPERM);
	/* the calls by path, R4L's */
	CHECK_EQ(r4_write(db, "/f", 0, "x", 1), -EPERM);
	CHECK_EQ(r4_truncate(db, "/f", 0), -EPERM);
	CHECK_EQ(r4_setattr(db, "/f", &sa[0]), -EPERM);
	CHECK_EQ(r4_unlink(db, "/f"), -EPERM);
	CHECK_EQ(r4_rename(db, "/f", "/h", 0), -EPERM);
	CHECK_EQ(r4_link(db, "/f", "/h"), -EPERM);
}

static void test_immutable(void)
{
	struct r4_stat before, after;
	r4_file *f, *d, *in;
	size_t len;
	r4_db *db = fresh(SETUP, 16u << 20);

	if (!db)
		return;
	f = t_at(root, "f");
	d = t_at(root, "d");
	CHECK_RC(r4_file_setxattr(f, "user.k", "v", 1, 0));
	CHECK_RC(r4_file_setflags(f, R4_FL_IMMUTABLE, R4_FL_IMMUTABLE));
	CHECK_RC(r4_file_stat(f, &before));
	CHECK_RC(r4_act_as(db, &ROOT, 0));
	immutable_file(db, f);
	CHECK_RC(r4_act_as(db, NULL, 0));	/* trusted: bound too */
	immutable_file(db, f);
	CHECK(t_run(db, "/f <- \"x\"") != 0);
	CHECK(t_run(db, "/f/..mode <- \"0600\"") != 0);
	CHECK(t_run(db, "rm /f") != 0);
	CHECK(t_run(db, "/f/..audit/(log <- /g)") != 0);
	CHECK(t_run(db, "/f/..plugin/formatting <- \"tails\"") != 0);
	CHECK_RC(r4_file_stat(f, &after));
	CHECK(!memcmp(&before, &after, sizeof(before)));	/* nothing changed, ctime neither */
	CHECK(!strcmp(contents(db, "/f"), "data"));
	CHECK_RC(r4_file_getxattr(f, "user.k", NULL, 0, &len));
	/* reading, and clearing the flag, stay allowed */
	CHECK_RC(t_run(db, "/g <- /f"));
	CHECK_RC(r4_file_setflags(f, 0, R4_FL_IMMUTABLE));
	CHECK_RC(r4_file_write(f, 0, "D", 1));

	/* an immutable directory: no entry added or removed; its files change */
	CHECK_RC(r4_file_setflags(d, R4_FL_IMMUTABLE, ~0u));
	CHECK_RC(r4_act_as(db, &ROOT, 0));
	CHECK_EQ(r4_file_make(d, "new", 3, &(struct r4_newobj){.mode = S_IFREG | 0644}, NULL),
		 -EPERM);
	CHECK_EQ(r4_file_make(d, "sub", 3, &(struct r4_newobj){.mode = S_IFDIR | 0755}, NULL),
		 -EPERM);
	CHECK_EQ(r4_file_remove(d, "in", 2, false), -EPERM);
	CHECK_EQ(r4_file_rename(d, "in", 2, d, "in2", 3, 0), -EPERM);
	CHECK_EQ(r4_file_rename(d, "in", 2, root, "out", 3, 0), -EPERM);
	CHECK_EQ(r4_file_rename(root, "g", 1, d, "g", 1, 0), -EPERM);
	CHECK_EQ(r4_file_link(f, d, "f", 1), -EPERM);
	CHECK_EQ(r4_file_remove(root, "d", 1, true), -EPERM);	/* (not empty anyway) */
	CHECK_EQ(r4_file_setattr(d, &(struct r4_setattr){.mask = R4_SET_MODE, .mode = 0700}),
		 -EPERM);
	in = t_at(d, "in");
	CHECK_RC(r4_file_write(in, 0, "y", 1));
	CHECK_RC(r4_act_as(db, NULL, 0));
	CHECK_EQ(r4_mkdir(db, "/d/sub", 0755, 0, 0), -EPERM);
	CHECK_EQ(r4_unlink(db, "/d/in"), -EPERM);
	CHECK(t_run(db, "/d/new <- \"y\"") != 0);
	CHECK(!strcmp(contents(db, "/d/in"), "y"));
	r4_file_close(in);
	r4_file_close(f);
	r4_file_close(d);
	done(db);
	t_both_clean(img, "an immutable file and directory");
}

static void test_append(void)
{
	r4_file *f, *d, *g = NULL;
	r4_db *db = fresh(SETUP, 16u << 20);

	if (!db)
		return;
	f = t_at(root, "f");
	d = t_at(root, "d");
	CHECK_RC(r4_file_setflags(f, R4_FL_APPEND, ~0u));
	CHECK_RC(r4_file_setflags(d, R4_FL_APPEND, ~0u));
	CHECK_RC(r4_act_as(db, &ROOT, 0));
	/* written at its end only */
	CHECK_EQ(r4_file_write(f, 0, "x", 1), -EPERM);
	CHECK_EQ(r4_file_write(f, 9, "x", 1), -EPERM);
	CHECK_RC(r4_file_write(f, 4, "1", 1));
	CHECK_RC(r4_file_append(f, "2", 1));
	CHECK_EQ(r4_file_reopen(f, O_WRONLY, &g), -EPERM);
	CHECK_EQ(r4_file_reopen(f, O_WRONLY | O_APPEND | O_TRUNC, &g), -EPERM);
	CHECK_RC(r4_file_reopen(f, O_WRONLY | O_APPEND, &g));
	CHECK_RC(r4_file_append(g, "3", 1));
	r4_file_close(g);
	CHECK_RC(r4_file_access(f, 2));
	CHECK_EQ(r4_file_setattr(f, &(struct r4_setattr){.mask = R4_SET_SIZE}), -EPERM);
	CHECK_EQ(r4_file_setattr(f, &(struct r4_setattr){.mask = R4_SET_MODE, .mode = 0600}),
		 -EPERM);
	CHECK_EQ(r4_file_setattr(f, &(struct r4_setattr){.mask = R4_SET_MTIME}), -EPERM);
	CHECK_RC(r4_file_setattr(f, &(struct r4_setattr){.mask = R4_SET_MTIME_NOW}));
	CHECK_EQ(r4_file_fallocate(f, R4_FALLOC_ZERO_RANGE, 0, 2), -EPERM);
	CHECK_EQ(r4_file_fallocate(f, R4_FALLOC_PUNCH_HOLE | R4_FALLOC_KEEP_SIZE, 0, 2), -EPERM);
	CHECK_EQ(r4_file_fallocate(f, R4_FALLOC_COLLAPSE_RANGE, 0, 4096), -EPERM);
	CHECK_EQ(r4_file_fallocate(f, R4_FALLOC_INSERT_RANGE, 0, 4096), -EPERM);
	CHECK_RC(r4_file_fallocate(f, 0, 0, 8192));	/* zeros where nothing is: allowed */
	CHECK_EQ(r4_file_setxattr(f, "user.a", "1", 1, 0), -EPERM);
	CHECK_EQ(r4_file_remove(root, "f", 1, false), -EPERM);
	CHECK_EQ(r4_file_rename(root, "f", 1, root, "h", 1, 0), -EPERM);
	CHECK_EQ(r4_file_link(f, root, "h", 1), -EPERM);
	/* a directory: entries added, never removed */
	CHECK_RC(r4_file_make(d, "new", 3, &(struct r4_newobj){.mode = S_IFREG | 0644}, NULL));
	CHECK_RC(r4_file_rename(root, "g", 1, d, "g", 1, 0));
	CHECK_EQ(r4_file_rename(d, "g", 1, d, "new", 3, 0), -EPERM);	/* replaces one */
	CHECK_EQ(r4_file_rename(d, "g", 1, root, "g", 1, 0), -EPERM);
	CHECK_EQ(r4_file_remove(d, "in", 2, false), -EPERM);
	CHECK_RC(r4_act_as(db, NULL, 0));
	CHECK_EQ(r4_write(db, "/f", 0, "x", 1), -EPERM);
	CHECK_EQ(r4_truncate(db, "/f", 0), -EPERM);
	CHECK_EQ(r4_unlink(db, "/d/in"), -EPERM);
	CHECK(t_run(db, "/f <- \"x\"") != 0);
	CHECK_RC(t_run(db, "/d/more <- \"m\""));
	CHECK_EQ(r4_file_setflags(f, 0, ~0u), 0);
	CHECK_RC(r4_file_setattr(f, &(struct r4_setattr){.mask = R4_SET_SIZE, .size = 7}));
	CHECK(!strcmp(contents(db, "/f"), "data123"));
	r4_file_close(f);
	r4_file_close(d);
	done(db);
	t_both_clean(img, "an append-only file and directory");
}

/* Audited as setattr; ctime stamped; a full volume refuses it whole (in
 * one transaction the flags of NFULL files, set one after another after a
 * fill, outgrow the room left). */
#define NFULL 1500
static void test_audit_full(void)
{
	struct r4_stat st;
	char log[256], p[16];
	size_t before = 0, got = 0;
	int i, rc = 0;
	r4_file *f;
	r4_db *db = fresh("/f <- \"x\"; /log <- \"\"; /f/..audit/(log <- /log)", 16u << 20);

	if (!db)
		return;
	f = t_at(root, "f");
	CHECK_RC(r4_read(db, "/log", 0, log, sizeof(log) - 1, &before));	/* (the setup's) */
	CHECK_RC(r4_act_as(db, &ROOT, 0));
	CHECK_RC(r4_file_setflags(f, R4_FL_NOATIME, ~0u));
	CHECK_EQ(r4_file_setflags(f, R4_FL_NODUMP, ~0u), -EOPNOTSUPP);	/* refused: no record */
	CHECK_RC(r4_act_as(db, NULL, 0));
	CHECK_RC(r4_read(db, "/log", before, log, sizeof(log) - 1, &got));
	log[got] = 0;
	CHECK(!strcmp(log, "1700000000 0 setattr /f 0\n"));
	CHECK_RC(r4_file_stat(f, &st));
	CHECK_EQ(st.ctime.tv_sec, 1700000000);
	r4_file_close(f);
	done(db);

	/* the volume filled, then flags set on one file after another in one
	 * transaction until one is refused: that one has none */
	db = fresh("/f <- \"x\"", 16u << 20);
	if (!db)
		return;
	for (i = 0; i < NFULL; i++) {
		snprintf(p, sizeof(p), "/e%d", i);
		CHECK_RC(r4_create(db, p, 0644, 0, 0));
	}
	t_fill(db, "/fill");
	CHECK_RC(r4_begin(db));
	for (i = 0; i < NFULL && !rc; i++) {
		snprintf(p, sizeof(p), "/e%d", i);
		f = t_at(root, p + 1);
		if ((rc = r4_file_setflags(f, R4_FL_IMMUTABLE, ~0u))) {
			CHECK_EQ(rc, -ENOSPC);
			CHECK_EQ(flags_of(f), 0);
			CHECK_EQ(word_of(db, p), -1);
		}
		r4_file_close(f);
	}
	CHECK_EQ(rc, -ENOSPC);
	printf("# %d flags set before the volume was full\n", i - 1);
	CHECK_RC(r4_txn_error(db));
	CHECK_RC(r4_commit(db));
	done(db);
	t_both_clean(img, "a full volume");
}

int main(void)
{
	snprintf(dir, sizeof(dir), "%s/r4flagsXXXXXX", t_tmp());
	if (!mkdtemp(dir))
		return 1;
	snprintf(img, sizeof(img), "%s/a.img", dir);
	test_stored();
	test_who();
	test_immutable();
	test_append();
	test_audit_full();
	if (t_fail)
		fprintf(stderr, "images kept in %s\n", dir);
	else if (t_rmdir(dir))
		return 1;
	return T_DONE();
}
