/*
 * test_perm.c - the POSIX rules of engine/perm.c, through the handle calls
 * of the fs API for an identity set with r4_act_as: search on the real
 * directories above an object (issue 22, defect 2: a link through a
 * directory that lost its search bit), entries and the sticky bit, the
 * owner, umask and group of new objects, chmod/chown/utimens, open modes
 * and the clearing of set-id bits.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "t.h"

static char img[320];

static const struct r4_ident ROOT = {0, 0, NULL, 0, 022};
static const uint32_t G_USER[] = {100};
static const struct r4_ident USER = {1000, 1000, G_USER, 1, 022};
static const struct r4_ident OTHER = {2000, 2000, NULL, 0, 077};

static r4_db *fresh(void)
{
	struct r4_open_opts o = {.rw = true};
	struct r4_mkfs_opts m;
	r4_db *db = NULL;

	r4_mkfs_defaults(&m);
	CHECK_RC(r4_mkfs(img, 16u << 20, &m));
	CHECK_RC(r4_open(img, &o, &db));
	return db;
}

/* A new object name in dir, as the acting identity; its handle in *out. */
static int mk(r4_file *dir, const char *name, uint32_t mode, r4_file **out)
{
	struct r4_newobj n = {.mode = mode, .uid = 77, .gid = 77};

	return r4_file_make(dir, name, strlen(name), &n, out);
}

static int look(r4_file *dir, const char *name, r4_file **out)
{
	return r4_file_lookup(dir, name, strlen(name), out);
}

static int chmod_(r4_file *f, uint32_t mode)
{
	return r4_file_setattr(f, &(struct r4_setattr){.mask = R4_SET_MODE, .mode = mode});
}

static uint32_t mode_of(r4_file *f)
{
	struct r4_stat st = {0};

	return r4_file_stat(f, &st) ? 0 : st.mode;
}

/* Defect 2: the way to the source of a link is the directory it was
 * found in, as it is now, whatever name it was given since. */
static void test_link_way(void)
{
	r4_db *db = fresh();
	r4_file *root = NULL, *n1 = NULL, *n2 = NULL, *n3 = NULL;

	CHECK_RC(r4_file_root(db, &root));
	CHECK_RC(chmod_(root, 0777));
	CHECK_RC(r4_act_as(db, &USER, 0));
	/* (handles found by name: r4_file_make's is opened, its creator's) */
	CHECK_RC(mk(root, "n1", S_IFDIR | 0755, NULL));
	CHECK_RC(mk(root, "n2", S_IFDIR | 0755, NULL));
	CHECK_RC(look(root, "n1", &n1));
	CHECK_RC(look(root, "n2", &n2));
	CHECK_RC(mk(n1, "n3", S_IFREG | 0644, NULL));
	CHECK_RC(look(n1, "n3", &n3));
	CHECK_RC(r4_file_link(n3, n2, "n4", 2));
	CHECK_RC(r4_file_remove(n2, "n4", 2, false));
	CHECK_RC(chmod_(n1, 0644));
	CHECK_EQ(r4_file_link(n3, n2, "n4", 2), -EACCES);	/* n1 has no search */
	CHECK_EQ(r4_file_stat(n3, &(struct r4_stat){0}), -EACCES);
	CHECK_EQ(r4_file_access(n3, 4), -EACCES);
	CHECK_EQ(look(n1, "n3", &(r4_file *){NULL}), -EACCES);
	/* root searches anything; the trusted caller checks nothing */
	CHECK_RC(r4_act_as(db, &ROOT, 0));
	CHECK_RC(r4_file_stat(n3, &(struct r4_stat){0}));
	CHECK_RC(r4_act_as(db, NULL, 0));
	CHECK_RC(r4_file_link(n3, n2, "n4", 2));
	/* a directory's way is its "..": above it, not where it was found */
	CHECK_RC(r4_act_as(db, &USER, 0));
	CHECK_RC(chmod_(n1, 0755));
	CHECK_EQ(chmod_(root, 0700), -EPERM);	/* root's: USER does not own it */
	r4_act_as(db, NULL, 0);
	CHECK_RC(chmod_(root, 0700));
	CHECK_RC(r4_act_as(db, &USER, 0));
	CHECK_EQ(r4_file_stat(n2, &(struct r4_stat){0}), -EACCES);
	r4_act_as(db, NULL, 0);
	r4_file_close(n3);
	r4_file_close(n2);
	r4_file_close(n1);
	r4_file_close(root);
	r4_close(db);
}

/* Owner, umask and setgid directories; entries and the sticky bit. */
static void test_entries(void)
{
	r4_db *db = fresh();
	r4_file *root = NULL, *d = NULL, *f = NULL, *g = NULL, *t = NULL, *s = NULL;
	struct r4_stat st;

	CHECK_RC(r4_file_root(db, &root));
	CHECK_RC(chmod_(root, 01777));
	CHECK_RC(r4_act_as(db, &USER, 0));
	CHECK_RC(mk(root, "d", S_IFDIR | 0777, &d));
	CHECK_RC(r4_file_stat(d, &st));
	CHECK_EQ(st.mode, S_IFDIR | 0755);	/* umask 022 */
	CHECK_EQ(st.uid, 1000);			/* not r4_newobj's 77 */
	CHECK_EQ(st.gid, 1000);
	/* a setgid directory gives its group; a directory in it keeps setgid */
	CHECK_RC(r4_file_setattr(d, &(struct r4_setattr){.mask = R4_SET_MODE | R4_SET_GID,
							   .mode = 02777, .gid = 100}));
	CHECK_RC(r4_file_stat(d, &st));
	CHECK_EQ(st.mode, S_IFDIR | 02777);
	CHECK_RC(mk(d, "f", S_IFREG | 0666, &f));
	CHECK_RC(r4_file_stat(f, &st));
	CHECK_EQ(st.mode, S_IFREG | 0644);
	CHECK_EQ(st.gid, 100);
	CHECK_RC(mk(d, "g", S_IFDIR | 0777, &g));
	CHECK_RC(r4_file_stat(g, &st));
	CHECK_EQ(st.mode, S_IFDIR | 02755);
	CHECK_EQ(st.gid, 100);
	/* another user: umask 077, no write in d (0777: yes), sticky root */
	CHECK_RC(r4_act_as(db, &OTHER, 0));
	CHECK_EQ(mk(g, "x", S_IFREG | 0666, NULL), -EACCES);
	CHECK_RC(mk(root, "t", S_IFREG | 0666, &t));
	CHECK_RC(r4_file_stat(t, &st));
	CHECK_EQ(st.mode, S_IFREG | 0600);
	CHECK_EQ(r4_file_remove(root, "d", 1, true), -EPERM);	/* sticky, USER's */
	CHECK_EQ(r4_file_rename(root, "d", 1, root, "e", 1, 0), -EPERM);
	CHECK_EQ(r4_file_remove(d, "f", 1, false), 0);	/* d is not sticky */
	CHECK_RC(r4_act_as(db, &USER, 0));
	CHECK_EQ(r4_file_remove(root, "t", 1, false), -EPERM);
	CHECK_EQ(r4_file_rename(root, "t", 1, d, "t", 1, 0), -EPERM);
	/* a directory moved to another parent needs write on itself */
	CHECK_RC(mk(root, "s", S_IFDIR | 0755, &s));
	CHECK_RC(chmod_(s, 0555));
	CHECK_EQ(r4_file_rename(root, "s", 1, d, "s", 1, 0), -EACCES);
	CHECK_RC(r4_file_rename(root, "s", 1, root, "s2", 2, 0));
	CHECK_RC(r4_act_as(db, &ROOT, 0));
	CHECK_RC(r4_file_remove(root, "t", 1, false));
	r4_act_as(db, NULL, 0);
	r4_file_close(s);
	r4_file_close(t);
	r4_file_close(g);
	r4_file_close(f);
	r4_file_close(d);
	r4_file_close(root);
	r4_close(db);
}

/* chmod, chown, utimens, truncate; open modes; set-id bits. */
static void test_attrs(void)
{
	r4_db *db = fresh();
	r4_file *root = NULL, *f = NULL, *fn = NULL, *w = NULL, *x = NULL;
	struct r4_stat st;

	CHECK_RC(r4_file_root(db, &root));
	CHECK_RC(chmod_(root, 0777));
	CHECK_RC(r4_act_as(db, &USER, 0));
	CHECK_RC(mk(root, "f", S_IFREG | 0664, &f));	/* (opened: its creator's) */
	CHECK_RC(look(root, "f", &fn));			/* (a name: checked each time) */
	CHECK_RC(r4_file_write(f, 0, "hello", 5));
	CHECK_RC(chmod_(f, 06775));
	CHECK_RC(r4_file_stat(f, &st));
	CHECK_EQ(st.mode & 07777, 06775);
	/* chmod into a group USER is not in drops setgid */
	CHECK_RC(r4_file_setattr(f, &(struct r4_setattr){.mask = R4_SET_GID, .gid = 100}));
	CHECK_EQ(r4_file_setattr(f, &(struct r4_setattr){.mask = R4_SET_GID, .gid = 5}), -EPERM);
	CHECK_EQ(r4_file_setattr(f, &(struct r4_setattr){.mask = R4_SET_UID, .uid = 5}), -EPERM);
	CHECK_RC(r4_file_stat(f, &st));
	CHECK_EQ(st.mode & 07777, 0775);	/* the chgrp dropped the set-id bits */
	CHECK_RC(chmod_(f, 06775));
	/* another user */
	CHECK_RC(r4_act_as(db, &OTHER, 0));
	CHECK_EQ(chmod_(fn, 0777), -EPERM);
	CHECK_EQ(r4_file_setattr(fn, &(struct r4_setattr){.mask = R4_SET_MTIME}), -EPERM);
	CHECK_EQ(r4_file_setattr(fn, &(struct r4_setattr){.mask = R4_SET_MTIME_NOW}), -EACCES);
	CHECK_EQ(r4_file_setattr(fn, &(struct r4_setattr){.mask = R4_SET_SIZE}), -EACCES);
	CHECK_EQ(r4_file_reopen(fn, O_RDWR, &w), -EACCES);
	CHECK_EQ(r4_file_reopen(fn, O_RDONLY | O_TRUNC, &w), -EACCES);
	CHECK_EQ(r4_file_reopen(root, O_WRONLY, &w), -EISDIR);
	CHECK_EQ(r4_file_write(fn, 0, "x", 1), -EACCES);
	CHECK_RC(r4_file_reopen(fn, O_RDONLY, &w));
	CHECK_EQ(r4_file_write(w, 0, "x", 1), -EBADF);
	r4_file_close(w);
	w = NULL;
	/* a writer: times "now", and a write drops setuid (and setgid with g+x) */
	r4_act_as(db, NULL, 0);
	CHECK_RC(chmod_(fn, 06777));
	CHECK_RC(r4_act_as(db, &OTHER, 0));
	CHECK_RC(r4_file_setattr(fn, &(struct r4_setattr){.mask = R4_SET_MTIME_NOW}));
	CHECK_RC(r4_file_reopen(fn, O_WRONLY | O_TRUNC, &w));
	CHECK_RC(r4_file_stat(w, &st));
	CHECK_EQ(st.size, 0);
	CHECK_EQ(st.mode & 07777, 0777);
	r4_act_as(db, NULL, 0);
	CHECK_RC(chmod_(fn, 06777));
	CHECK_RC(r4_act_as(db, &OTHER, 0));
	CHECK_RC(r4_file_write(w, 0, "x", 1));
	CHECK_RC(r4_file_stat(w, &st));
	CHECK_EQ(st.mode & 07777, 0777);
	/* what the kernel sends before a writer's write: clearing set-id only */
	r4_act_as(db, NULL, 0);
	CHECK_RC(chmod_(fn, 06777));
	CHECK_RC(r4_act_as(db, &OTHER, 0));
	CHECK_RC(chmod_(fn, 0777));
	/* ... and with a truncate(2)'s size: the size is the writer's to set;
	 * the kernel's FUSE asks by the rule before Linux 6.2 (setgid only
	 * with g+x), the bits go by today's (also for a non-member) */
	r4_act_as(db, NULL, 0);
	CHECK_RC(chmod_(fn, 06666));
	CHECK_RC(r4_act_as(db, &OTHER, 0));
	CHECK_RC(r4_file_setattr(fn, &(struct r4_setattr){.mask = R4_SET_MODE | R4_SET_SIZE,
							.mode = 02666, .size = 3}));
	CHECK_RC(r4_file_stat(fn, &st));
	CHECK_EQ(st.mode & 07777, 0666);
	CHECK_EQ(st.size, 3);
	r4_act_as(db, NULL, 0);
	CHECK_RC(chmod_(fn, 06666));
	CHECK_RC(r4_act_as(db, &OTHER, 0));
	CHECK_RC(chmod_(fn, 02666));
	CHECK_EQ(mode_of(fn), S_IFREG | 0666);
	/* ... but not a mode that changes more, nor with an owner */
	r4_act_as(db, NULL, 0);
	CHECK_RC(chmod_(fn, 06777));
	CHECK_RC(r4_act_as(db, &OTHER, 0));
	CHECK_EQ(r4_file_setattr(fn, &(struct r4_setattr){.mask = R4_SET_MODE | R4_SET_SIZE,
							  .mode = 0770, .size = 3}), -EPERM);
	CHECK_EQ(r4_file_setattr(fn, &(struct r4_setattr){.mask = R4_SET_MODE | R4_SET_UID,
							  .mode = 0777, .uid = OTHER.uid}), -EPERM);
	CHECK_EQ(mode_of(fn), S_IFREG | 06777);
	CHECK_RC(chmod_(fn, 0777));
	/* an open for execve needs execute, not read */
	r4_act_as(db, NULL, 0);
	CHECK_RC(chmod_(fn, 0711));
	CHECK_RC(r4_act_as(db, &OTHER, 0));
	CHECK_EQ(r4_file_reopen(fn, O_RDONLY, &x), -EACCES);
	CHECK_RC(r4_file_reopen(fn, O_RDONLY | R4_O_EXEC, &x));
	r4_file_close(x);
	r4_act_as(db, NULL, 0);
	CHECK_RC(chmod_(fn, 0744));
	CHECK_RC(r4_act_as(db, &OTHER, 0));
	CHECK_EQ(r4_file_reopen(fn, O_RDONLY | R4_O_EXEC, &x), -EACCES);
	/* default_permissions: the kernel checks, the engine does not */
	CHECK_RC(r4_act_as(db, &OTHER, R4_AS_NOCHECK));
	CHECK_RC(chmod_(fn, 0700));
	r4_act_as(db, NULL, 0);
	CHECK_EQ(mode_of(fn), S_IFREG | 0700);
	r4_file_close(w);
	r4_file_close(fn);
	r4_file_close(f);
	r4_file_close(root);
	r4_close(db);
}

/* A write, truncate or fallocate (a punch too) by anyone but root drops setuid, and
 * setgid when the group may execute or the writer is not in the file's
 * group (Linux 6.2's rule; generic/683 and 685 saw a non-member's
 * fallocate keep it). */
static void test_setid_writes(void)
{
	static const struct {
		const struct r4_ident *who;
		uint32_t mode, after;
	} c[] = {
		{&USER, 06666, 02666},	/* in group 100: setgid stays without g+x */
		{&USER, 06676, 0676},
		{&OTHER, 06666, 0666},	/* not in group 100 */
		{&OTHER, 02666, 0666},
		{&OTHER, 04666, 0666},
		{&ROOT, 06676, 06676},	/* root's writes keep both */
	};
	r4_db *db = fresh();
	r4_file *root = NULL, *f = NULL;
	struct r4_stat st;

	CHECK_RC(r4_file_root(db, &root));
	CHECK_RC(mk(root, "sg", S_IFREG | 0666, &f));
	CHECK_RC(r4_file_setattr(f, &(struct r4_setattr){.mask = R4_SET_GID, .gid = 100}));
	for (size_t i = 0; i < sizeof(c) / sizeof(*c); i++)
		for (int op = 0; op < 5; op++) {
			static const char *const name[] = {"write", "truncate", "fallocate",
							   "zero range", "punch hole"};

			r4_act_as(db, NULL, 0);
			CHECK_RC(chmod_(f, c[i].mode));
			CHECK_RC(r4_act_as(db, c[i].who, 0));
			CHECK_RC(op == 0   ? r4_file_write(f, 0, "x", 1)
				 : op == 1 ? r4_file_setattr(f, &(struct r4_setattr){.mask = R4_SET_SIZE})
				 : op == 2 ? r4_file_fallocate(f, 0, 0, 65536)
				 : op == 3 ? r4_file_fallocate(f, R4_FALLOC_ZERO_RANGE, 0, 65536)
					   : r4_file_fallocate(f, R4_FALLOC_PUNCH_HOLE | R4_FALLOC_KEEP_SIZE,
							       0, 4096));
			CHECK_RC(r4_file_stat(f, &st));
			if ((st.mode & 07777) != c[i].after)
				printf("case %zu (%s): mode %o, not %o\n", i, name[op], st.mode & 07777,
				       c[i].after);
			CHECK_EQ(st.mode & 07777, c[i].after);
		}
	r4_act_as(db, NULL, 0);
	r4_file_close(f);
	r4_file_close(root);
	r4_close(db);
}

int main(void)
{
	char dir[128];

	snprintf(dir, sizeof(dir), "%s/r4permXXXXXX", t_tmp());
	if (!mkdtemp(dir))
		return 1;
	snprintf(img, sizeof(img), "%s/a.img", dir);
	test_link_way();
	test_entries();
	test_attrs();
	test_setid_writes();
	if (t_fail)
		fprintf(stderr, "images kept in %s\n", dir);
	else if (t_rmdir(dir))
		return 1;
	return T_DONE();
}
