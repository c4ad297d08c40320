/*
 * test_audit.c - the audit records the engine writes for the fs API's
 * handle calls (engine/audit.c; docs/semantics.md, "Audit"):
 *  - each operation with its exact record, PATH as the engine finds it
 *    (after a rename, a link removed, the last name removed while open);
 *  - a missing log refuses the change with ENOENT, nothing changed and
 *    the transaction usable;
 *  - a full volume refuses an audited change with ENOSPC before it;
 *  - a rename that moves the log's directory still records (by object);
 *  - removing the log a record goes to is refused (EBUSY);
 *  - a file renamed over an aggregate: a write of it, an unlink of the file.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "t.h"

static char dir[256], img[300];

/* The contents of path, as a string (static buffer). */
static const char *contents(r4_db *db, const char *path)
{
	static char buf[4096];
	size_t got = 0;

	if (r4_read(db, path, 0, buf, sizeof(buf) - 1, &got))
		return "(missing)";
	buf[got] = 0;
	return buf;
}

/* A fresh image of size bytes, set up by R4L; open. */
static r4_db *fresh(const char *setup, uint64_t size)
{
	r4_db *db;

	unlink(img);
	CHECK_RC(r4_mkfs(img, size, NULL));
	if ((db = t_open_rw(img)))
		CHECK_RC(t_run(db, setup));
	return db;
}

static int chmod_of(r4_file *f, uint32_t mode)
{
	return r4_file_setattr(f, &(struct r4_setattr){.mask = R4_SET_MODE, .mode = mode});
}

#define MKDIR(d) "/..new/(name <- \"" d "\"; type <- directory); "
#define SETUP MKDIR("srv") "/srv/f <- \"x\"; /srv/log <- \"\"; " \
	"/srv/f/..audit/(log <- /srv/log); " MKDIR("d") "/d/log <- \"\"; " \
	"/d/..audit/(log <- /d/log)"

/* Each handle call's record, as uid 1001. */
static void test_records(void)
{
	static const char srv[] =
		"1700000000 0 setattr /srv/f 0\n"
		"1700000000 1001 truncate /srv/f 0\n"
		"1700000000 1001 write /srv/f 5\n"
		"1700000000 1001 append /srv/f 1\n"
		"1700000000 1001 write /srv/f 50\n"	/* fallocate: one write of its length */
		"1700000000 1001 write /srv/f 20\n"	/* a punch too */
		"1700000000 1001 truncate /srv/f 3\n"
		"1700000000 1001 setattr /srv/f 0\n"
		"1700000000 1001 rename /srv/g 1\n"
		"1700000000 1001 write /srv/g 1\n"	/* the open file follows its rename */
		"1700000000 1001 link /srv/h 0\n"
		"1700000000 1001 unlink /srv/h 1\n"
		"1700000000 1001 write /srv/g 1\n"	/* its other name in that directory */
		"1700000000 1001 unlink /srv/g 1\n"
		"1700000000 1001 write /srv/g 1\n";	/* open, no name: the one it had */
	static const char d[] =
		"1700000000 0 setattr /d 0\n"
		"1700000000 1001 create /d/new 0\n"
		"1700000000 1001 create /d/sub 0\n"
		"1700000000 1001 rename /d/renamed 7\n"
		"1700000000 1001 unlink /d/sub 3\n"
		"1700000000 1001 rename /srv/moved 5\n"
		"1700000000 1001 create /d/a 0\n"
		"1700000000 1001 rename /d/a 1\n";
	struct r4_ident who = {1001, 1001, NULL, 0, 022};
	r4_file *root = NULL, *s, *dd, *f, *h = NULL, *n = NULL;
	r4_db *db = fresh(SETUP, 32u << 20);

	if (!db)
		return;
	CHECK_RC(r4_act_as(db, &who, R4_AS_NOCHECK));
	CHECK_RC(r4_file_root(db, &root));
	s = t_at(root, "srv");
	dd = t_at(root, "d");
	f = t_at(s, "f");
	CHECK_RC(r4_file_reopen(f, O_RDWR | O_TRUNC, &h));
	CHECK_RC(r4_file_write(h, 0, "hello", 5));
	CHECK_RC(r4_file_append(h, "!", 1));
	CHECK_RC(r4_file_fallocate(h, 0, 50, 50));
	CHECK_RC(r4_file_fallocate(h, R4_FALLOC_PUNCH_HOLE | R4_FALLOC_KEEP_SIZE, 10, 20));
	CHECK_RC(r4_file_setattr(f, &(struct r4_setattr){.mask = R4_SET_SIZE, .size = 3}));
	CHECK_RC(chmod_of(f, 0600));
	CHECK_RC(r4_file_rename(s, "f", 1, s, "g", 1, 0));
	CHECK_RC(r4_file_write(h, 0, "H", 1));
	CHECK_RC(r4_file_link(h, s, "h", 1));
	CHECK_RC(r4_file_remove(s, "h", 1, false));
	CHECK_RC(r4_file_write(h, 1, "E", 1));
	CHECK_RC(r4_file_remove(s, "g", 1, false));
	CHECK_RC(r4_file_write(h, 2, "L", 1));
	CHECK_RC(r4_file_close(h));
	/* a directory's entries: the objects themselves are not audited */
	CHECK_RC(r4_file_make(dd, "new", 3, &(struct r4_newobj){.mode = 0100644}, &n));
	CHECK_RC(r4_file_write(n, 0, "data", 4));
	CHECK_RC(r4_file_close(n));
	CHECK_RC(r4_file_make(dd, "sub", 3, &(struct r4_newobj){.mode = 040755}, NULL));
	CHECK_RC(r4_file_rename(dd, "new", 3, dd, "renamed", 7, 0));
	CHECK_RC(r4_file_remove(dd, "sub", 3, true));
	CHECK_RC(r4_file_rename(dd, "renamed", 7, s, "moved", 5, 0));
	/* over another name: the directory's record once */
	CHECK_RC(r4_file_make(dd, "a", 1, &(struct r4_newobj){.mode = 0100644}, NULL));
	CHECK_RC(r4_file_rename(s, "moved", 5, dd, "a", 1, 0));
	/* changes to the log itself are not recorded */
	CHECK_RC(t_run(db, "/srv/log/..audit/(log <- /srv/log)"));
	CHECK_RC(r4_file_close(f));
	f = t_at(s, "log");
	CHECK_RC(r4_file_setattr(f, &(struct r4_setattr){.mask = R4_SET_MTIME_NOW}));
	CHECK(!strcmp(contents(db, "/srv/log"), srv));
	CHECK(!strcmp(contents(db, "/d/log"), d));
	r4_file_close(f);
	r4_file_close(s);
	r4_file_close(dd);
	r4_file_close(root);
	r4_close(db);
}

/* A log renamed away: each audited change is refused with ENOENT before
 * it changes anything; the group of changes goes on. */
static void test_missing_log(void)
{
	r4_file *root = NULL, *s, *dd, *f, *h = NULL;
	struct r4_stat st;
	r4_db *db = fresh(SETUP, 32u << 20);

	if (!db)
		return;
	CHECK_RC(r4_file_root(db, &root));
	s = t_at(root, "srv");
	dd = t_at(root, "d");
	f = t_at(s, "f");
	CHECK_RC(r4_file_reopen(f, O_RDWR, &h));
	CHECK_RC(r4_rename(db, "/srv/log", "/srv/log.1", 0));
	CHECK_RC(r4_begin(db));
	CHECK_RC(r4_create(db, "/other", 0644, 0, 0));
	CHECK_EQ(r4_file_write(h, 0, "y", 1), -ENOENT);
	CHECK_EQ(r4_file_append(h, "y", 1), -ENOENT);
	CHECK_EQ(chmod_of(f, 0600), -ENOENT);
	CHECK_EQ(r4_file_setattr(f, &(struct r4_setattr){.mask = R4_SET_SIZE}), -ENOENT);
	CHECK_EQ(r4_file_rename(s, "f", 1, s, "g", 1, 0), -ENOENT);
	CHECK_EQ(r4_file_link(f, s, "h", 1), -ENOENT);
	CHECK_EQ(r4_file_remove(s, "f", 1, false), -ENOENT);
	CHECK_RC(r4_txn_error(db));
	CHECK_RC(r4_rename(db, "/d/log", "/d/log.1", 0));
	CHECK_EQ(r4_file_make(dd, "x", 1, &(struct r4_newobj){.mode = 0100644}, NULL), -ENOENT);
	CHECK_RC(r4_txn_error(db));
	CHECK_RC(r4_commit(db));
	CHECK_RC(r4_stat(db, "/srv/f", &st));
	CHECK_EQ(st.mode, 0100644);
	CHECK_EQ(st.size, 1);
	CHECK(!strcmp(contents(db, "/srv/f"), "x"));
	CHECK_EQ(r4_stat(db, "/srv/g", &st), -ENOENT);
	CHECK_EQ(r4_stat(db, "/srv/h", &st), -ENOENT);
	CHECK_EQ(r4_stat(db, "/d/x", &st), -ENOENT);
	CHECK_RC(r4_stat(db, "/other", &st));
	CHECK(!strcmp(contents(db, "/srv/log.1"), "1700000000 0 setattr /srv/f 0\n"));
	r4_file_close(h);
	r4_file_close(f);
	r4_file_close(s);
	r4_file_close(dd);
	r4_file_close(root);
	r4_close(db);
}

/* A full volume: the chmod whose record would not fit is refused with
 * ENOSPC before it changes anything; the group is not poisoned. */
static void test_full_volume(void)
{
	r4_file *root = NULL, *s, *f;
	struct r4_stat st, lg;
	unsigned ok = 0;
	int rc = 0;
	r4_db *db = fresh(SETUP, 16u << 20);

	if (!db)
		return;
	t_fill(db, "/fill");
	CHECK_RC(r4_file_root(db, &root));
	s = t_at(root, "srv");
	f = t_at(s, "f");
	CHECK_RC(r4_begin(db));
	for (unsigned i = 0; i < 100000 && !(rc = chmod_of(f, i % 2 ? 0644 : 0600)); i++)
		ok++;
	CHECK_EQ(rc, -ENOSPC);
	CHECK_RC(r4_txn_error(db));
	CHECK_RC(r4_commit(db));
	CHECK_RC(r4_stat(db, "/srv/f", &st));
	CHECK_EQ(st.mode & 07777, ok % 2 ? 0600 : 0644);
	CHECK_RC(r4_stat(db, "/srv/log", &lg));
	CHECK_EQ(lg.size, (ok + 1) * strlen("1700000000 0 setattr /srv/f 0\n"));
	printf("# %u chmods recorded before the volume was full\n", ok);
	r4_file_close(f);
	r4_file_close(s);
	r4_file_close(root);
	r4_close(db);
	CHECK(t_fsck(img) != 0);
}

/* The log's directory moved by the change itself: its record is written
 * to the log object resolved before; later changes find no log. */
static void test_log_dir_moved(void)
{
	r4_file *root = NULL, *a;
	struct r4_stat st;
	r4_db *db = fresh(MKDIR("a") "/a/log <- \"\"; /a/..audit/(log <- /a/log)",
				32u << 20);

	if (!db)
		return;
	CHECK_RC(r4_file_root(db, &root));
	a = t_at(root, "a");
	CHECK_RC(r4_file_rename(root, "a", 1, root, "b", 1, 0));
	CHECK(!strcmp(contents(db, "/b/log"),
		      "1700000000 0 setattr /a 0\n1700000000 0 rename /b 1\n"));
	CHECK_EQ(r4_file_make(a, "x", 1, &(struct r4_newobj){.mode = 0100644}, NULL), -ENOENT);
	/* the log a record goes to is not removed from under it */
	CHECK_RC(r4_rename(db, "/b", "/a", 0));
	CHECK_EQ(r4_file_remove(a, "log", 3, false), -EBUSY);
	CHECK_RC(r4_stat(db, "/a/log", &st));
	r4_file_close(a);
	r4_file_close(root);
	r4_close(db);
}

/* A file's text written into it as a new file name in d. */
static void new_file(r4_file *d, const char *name, const char *text)
{
	r4_file *n = NULL;

	CHECK_RC(r4_file_make(d, name, strlen(name), &(struct r4_newobj){.mode = 0100644}, &n));
	if (n) {
		CHECK_RC(r4_file_write(n, 0, text, strlen(text)));
		CHECK_RC(r4_file_close(n));
	}
}

/* A file renamed over an aggregate becomes its text (docs/semantics.md),
 * as the caller may write it; a text that does not parse, or touches a
 * field the caller may not write, changes nothing and records nothing. */
static void test_aggregate(void)
{
	static const char on[] = "1700000000 0 setattr /etc/passwd 0\n";
	struct r4_ident who = {1001, 1001, NULL, 0, 022};
	r4_file *root = NULL, *etc;
	struct r4_stat st;
	r4_db *db = fresh(MKDIR("etc") "/etc/..mode <- \"0777\"; "
			  "/etc/..new/(name <- \"passwd\", type <- aggregate) <- "
			  "\"root:x:0:0:root:/root:/bin/sh\\nalice:x:1001:1001:Alice:/home/alice:/bin/bash\\n"
			  "bob:x:1002:1002:Bob:/home/bob:/bin/sh\\n\"; "
			  "/etc/passwd/alice/shell/..acl/(uid <- #1001, access <- write); "
			  "/log <- \"\"; /etc/passwd/..audit/(log <- /log)", 32u << 20);

	if (!db)
		return;
	CHECK_RC(r4_act_as(db, &who, 0));
	CHECK_RC(r4_file_root(db, &root));
	etc = t_at(root, "etc");
	new_file(etc, "bad", "root:x:0:0:root:/root:/bin/sh\nalice:x:abc:1001:Alice:/home/alice:/bin/zsh\n");
	CHECK_EQ(r4_file_rename(etc, "bad", 3, etc, "passwd", 6, 0), -EINVAL);
	new_file(etc, "uid", "root:x:0:0:root:/root:/bin/sh\nalice:x:0:1001:Alice:/home/alice:/bin/zsh\n");
	CHECK_EQ(r4_file_rename(etc, "uid", 3, etc, "passwd", 6, 0), -EACCES);
	CHECK_EQ(r4_file_rename(etc, "uid", 3, etc, "passwd", 6, R4_RENAME_NOREPLACE), -EEXIST);
	/* refused by a later record than one it may change: checked whole
	 * first, so a host's open transaction goes on */
	new_file(etc, "mid", "root:x:0:0:root:/root:/bin/sh\nalice:x:1001:1001:Alice:/home/alice:/bin/zsh\n"
		 "bob:x:1002:1002:Bob:/home/bob:/bin/zsh\n");
	CHECK_RC(r4_begin(db));
	CHECK_EQ(r4_file_rename(etc, "mid", 3, etc, "passwd", 6, 0), -EACCES);
	CHECK(!r4_txn_error(db));
	CHECK_RC(r4_commit(db));
	CHECK_RC(r4_stat(db, "/etc/bad", &st));
	CHECK(!strcmp(contents(db, "/etc/passwd/alice/uid"), "1001"));
	CHECK(!strcmp(contents(db, "/log"), on));
	CHECK(!strcmp(contents(db, "/etc/passwd/alice/shell"), "/bin/bash"));
	new_file(etc, "new", "root:x:0:0:root:/root:/bin/sh\nalice:x:1001:1001:Alice:/home/alice:/bin/zsh\n"
		 "bob:x:1002:1002:Bob:/home/bob:/bin/sh\n");
	CHECK_RC(r4_file_rename(etc, "new", 3, etc, "passwd", 6, 0));
	CHECK_EQ(r4_stat(db, "/etc/new", &st), -ENOENT);
	CHECK(!strcmp(contents(db, "/etc/passwd/alice/shell"), "/bin/zsh"));
	CHECK(!strcmp(contents(db, "/etc/passwd/root/shell"), "/bin/sh"));
	CHECK_RC(r4_stat(db, "/etc/passwd", &st));
	CHECK(S_ISDIR(st.mode));
	CHECK(!strcmp(contents(db, "/log"), "1700000000 0 setattr /etc/passwd 0\n"
					    "1700000000 1001 write /etc/passwd 113\n"));
	r4_file_close(etc);
	r4_file_close(root);
	r4_close(db);
}

int main(void)
{
	snprintf(dir, sizeof(dir), "%s/r4audit.XXXXXX", t_tmp());
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	snprintf(img, sizeof(img), "%s/img", dir);
	test_records();
	test_missing_log();
	test_full_volume();
	test_log_dir_moved();
	test_aggregate();
	t_rmdir(dir);
	return T_DONE();
}
