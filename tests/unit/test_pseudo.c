/*
 * test_pseudo.c - the public pseudo-file calls (r4_pseudo_read,
 * r4_pseudo_write; engine/pseudo.c) for the identity r4_act_as sets: the
 * text of ..mode, ..uid, ..list, ..key, ..plugin/<sub>; chmod and chown
 * by the owner, a stranger and root; write-only and read-only pseudo
 * files; and each answer against R4L's for the same identity (the
 * executor reaches the same code, so the two must agree to the byte and
 * to the message).  Then the executor's own calls: what each change tells
 * r4_pseudo_ctx.changes, and ..new, LINK, T -> E, ..range and ..acl rules
 * from their parameters' text, with R4L's words for what they refuse.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "r4_lang.h"
#include "t.h"

static char img[300];

static const uint32_t no_groups[1];
static const struct r4_ident ROOT = {0, 0, no_groups, 0, 022};
static const struct r4_ident OWNER = {1000, 100, no_groups, 0, 022};
static const struct r4_ident STRANGER = {2000, 200, no_groups, 0, 022};

/* R4L's answer to src as who: its rc (or why its value could not be
 * read), its value's text or its message. */
static int r4l(r4_db *db, const struct r4_ident *who, const char *src, char *out, size_t n)
{
	struct r4_run_opts o = {.exec = {.who = *who, .read_objects = true}};
	struct r4_run *r = NULL;
	int rc = r4_run(db, src, strlen(src), &o, &r);

	out[0] = 0;
	if (r && r->nvalues && !rc && r->values[0].err)
		rc = r->values[0].err;
	else if (r && r->nvalues && !rc)
		snprintf(out, n, "%.*s", (int)r->values[0].size, r->values[0].bytes);
	else if (r && rc && r4_diag_get(r->diags, 0))
		snprintf(out, n, "%s", r4_diag_get(r->diags, 0)->msg);
	r4_run_free(r);
	return rc;
}

/* r4_pseudo_read as who: its rc, and its text or why into out. */
static int api_read(r4_db *db, const struct r4_ident *who, const char *path, enum r4_pseudo id,
		    const char *sub, char *out, size_t n)
{
	struct r4_why why;
	char *text = NULL;
	size_t len = 0;
	int rc;

	CHECK_RC(r4_act_as(db, who, 0));
	rc = r4_pseudo_read(db, path, id, sub, &text, &len, &why);
	if (!rc) {
		CHECK_EQ(strlen(text), len);
		snprintf(out, n, "%s", text);
	} else {
		snprintf(out, n, "%s: %s", why.msg, r4_strerror(rc));
	}
	r4_free(text);
	CHECK_RC(r4_act_as(db, NULL, 0));
	return rc;
}

static int api_write(r4_db *db, const struct r4_ident *who, const char *path, enum r4_pseudo id,
		     const char *text, char *why_out, size_t n, bool *changed)
{
	struct r4_why why;
	int rc;

	CHECK_RC(r4_act_as(db, who, 0));
	rc = r4_pseudo_write(db, path, id, NULL, text, strlen(text), changed, &why);
	snprintf(why_out, n, "%s: %s", why.msg, r4_strerror(rc));
	CHECK_RC(r4_act_as(db, NULL, 0));
	return rc;
}

/* The same read through both: equal rc, and equal text.  (A value R4L
 * cannot read has no message: the refusals' words are checked alone.) */
static void same_read(r4_db *db, const struct r4_ident *who, const char *path, enum r4_pseudo id,
		      const char *sub, int want)
{
	char a[700], b[900], src[300];

	snprintf(src, sizeof(src), "%s/%s%s%s", path, r4_pseudo_name(id), sub ? "/" : "",
		 sub ? sub : "");
	CHECK_EQ(api_read(db, who, path, id, sub, a, sizeof(a)), want);
	CHECK_EQ(r4l(db, who, src, b, sizeof(b)), want);
	if (!want && strcmp(a, b))
		fprintf(stderr, "api: [%s]\nr4l: [%s]\n", a, b);
	CHECK(want || !strcmp(a, b));
}

/* A refused write through both: equal rc and message, nothing changed. */
static void same_refusal(r4_db *db, const struct r4_ident *who, const char *path,
			 enum r4_pseudo id, const char *text, int want)
{
	char a[700], b[900], src[300];
	bool changed = true;

	snprintf(src, sizeof(src), "%s/%s <- \"%s\"", path, r4_pseudo_name(id), text);
	CHECK_EQ(api_write(db, who, path, id, text, a, sizeof(a), &changed), want);
	CHECK(changed);	/* (not written on failure) */
	CHECK_EQ(r4l(db, who, src, b, sizeof(b)), want);
	if (strcmp(a, b))
		fprintf(stderr, "api: [%s]\nr4l: [%s]\n", a, b);
	CHECK(!strcmp(a, b));
}

static void test_reads(r4_db *db)
{
	/* every name of the table a directory has, aliases too */
	static const char list[] = ".\n..\nf\nsecret\n..uid\n..owner\n..gid\n..mode\n..type\n"
				   "..size\n..nlink\n..atime\n..mtime\n..ctime\n..oid\n..key\n"
				   "..plugin\n..list\n..name\n..unlink\n..acl\n..audit\n..new\n"
				   "..link\n";
	char t[700];
	struct r4_stat st;

	CHECK_EQ(api_read(db, &OWNER, "/d/f", R4_PSEUDO_MODE, NULL, t, sizeof(t)), 0);
	CHECK(!strcmp(t, "0644"));
	CHECK_EQ(api_read(db, &STRANGER, "/d/f", R4_PSEUDO_UID, NULL, t, sizeof(t)), 0);
	CHECK(!strcmp(t, "1000"));
	CHECK_EQ(api_read(db, &OWNER, "/d", R4_PSEUDO_LIST, NULL, t, sizeof(t)), 0);
	CHECK(!strcmp(t, list));
	CHECK_EQ(api_read(db, NULL, "/d/f", R4_PSEUDO_KEY, NULL, t, sizeof(t)), 0);
	CHECK_RC(r4_stat(db, "/d/f", &st));
	char oid[40];

	snprintf(oid, sizeof(oid), ":%llx:0", (unsigned long long)st.ino);
	CHECK(strlen(t) > strlen(oid) && !strcmp(t + strlen(t) - strlen(oid), oid));
	CHECK_EQ(api_read(db, &OWNER, "/d/f", R4_PSEUDO_PLUGIN, "file", t, sizeof(t)), 0);
	CHECK(!strcmp(t, "reg40"));
	CHECK_EQ(api_read(db, &OWNER, "/d/f", R4_PSEUDO_BODY, NULL, t, sizeof(t)), 0);
	CHECK(!strcmp(t, "hello"));

	/* each as R4L gives it, for the owner and a stranger */
	static const enum r4_pseudo ids[] = {
		R4_PSEUDO_UID, R4_PSEUDO_GID, R4_PSEUDO_MODE, R4_PSEUDO_TYPE, R4_PSEUDO_SIZE,
		R4_PSEUDO_NLINK, R4_PSEUDO_OID, R4_PSEUDO_KEY, R4_PSEUDO_PLUGIN, R4_PSEUDO_LIST,
		R4_PSEUDO_NAME, R4_PSEUDO_ACL, R4_PSEUDO_AUDIT, R4_PSEUDO_INVERT,
	};
	for (size_t i = 0; i < sizeof(ids) / sizeof(ids[0]); i++) {
		same_read(db, &OWNER, "/d/f", ids[i], NULL, 0);
		same_read(db, &OWNER, "/d", ids[i], NULL, 0);
	}
	same_read(db, &STRANGER, "/d/f", R4_PSEUDO_BODY, NULL, 0);
	same_read(db, &STRANGER, "/d/secret", R4_PSEUDO_BODY, NULL, -EACCES);
	same_read(db, &STRANGER, "/d/secret", R4_PSEUDO_MODE, NULL, 0);
	same_read(db, &STRANGER, "/x/g", R4_PSEUDO_MODE, NULL, -EACCES);	/* search on the way */

	/* write-only (R4L's checker refuses it before it runs), an unknown
	 * ..plugin member: refused, in the executor's words */
	CHECK_EQ(api_read(db, &OWNER, "/d", R4_PSEUDO_UNLINK, NULL, t, sizeof(t)), -EACCES);
	CHECK(!strcmp(t, "cannot read '/d/..unlink': it is write-only: Permission denied"));
	same_read(db, &OWNER, "/d/f", R4_PSEUDO_PLUGIN, "colour", -ENOENT);
	CHECK_EQ(api_read(db, &OWNER, "/d/f", R4_PSEUDO_PLUGIN, "colour", t, sizeof(t)), -ENOENT);
	CHECK(!strcmp(t, "'/d/f/..plugin' has no member 'colour': No such file or directory"));

	/* what exists only in R4L, children of what has none, missing objects */
	CHECK_EQ(api_read(db, &OWNER, "/d", R4_PSEUDO_NEW, NULL, t, sizeof(t)), -EINVAL);
	CHECK_EQ(api_read(db, &OWNER, "/d/f", R4_PSEUDO_RANGE, NULL, t, sizeof(t)), -EINVAL);
	CHECK_EQ(api_read(db, &OWNER, "/d/f", R4_PSEUDO_MODE, "x", t, sizeof(t)), -ENOTDIR);
	CHECK_EQ(api_read(db, &OWNER, "/d/nope", R4_PSEUDO_MODE, NULL, t, sizeof(t)), -ENOENT);
}

static void test_writes(r4_db *db)
{
	char t[700];
	struct r4_stat st;
	bool changed = false;

	/* chmod: the owner may, a stranger may not (EPERM, as R4L says) */
	same_refusal(db, &STRANGER, "/d/f", R4_PSEUDO_MODE, "0600", -EPERM);
	CHECK_EQ(api_write(db, &STRANGER, "/d/f", R4_PSEUDO_MODE, "0600", t, sizeof(t), &changed),
		 -EPERM);
	CHECK(!strcmp(t, "cannot change '/d/f/..mode': Operation not permitted"));
	CHECK_EQ(api_write(db, &OWNER, "/d/f", R4_PSEUDO_MODE, "0600\n", t, sizeof(t), &changed), 0);
	CHECK(changed);
	CHECK_RC(r4_stat(db, "/d/f", &st));
	CHECK_EQ(st.mode, S_IFREG | 0600);

	/* chown: root's alone */
	same_refusal(db, &OWNER, "/d/f", R4_PSEUDO_UID, "2000", -EPERM);
	same_refusal(db, &STRANGER, "/d/f", R4_PSEUDO_UID, "2000", -EPERM);
	CHECK_EQ(api_write(db, &ROOT, "/d/f", R4_PSEUDO_UID, "2000", t, sizeof(t), &changed), 0);
	CHECK_RC(r4_stat(db, "/d/f", &st));
	CHECK_EQ(st.uid, 2000);
	CHECK_EQ(api_write(db, &ROOT, "/d/f", R4_PSEUDO_UID, "1000", t, sizeof(t), &changed), 0);

	/* malformed, read-only, a way the stranger may not search */
	same_refusal(db, &OWNER, "/d/f", R4_PSEUDO_MODE, "0999", -EINVAL);
	CHECK_EQ(api_write(db, &OWNER, "/d/f", R4_PSEUDO_NLINK, "3", t, sizeof(t), &changed),
		 -EACCES);
	CHECK(!strcmp(t, "cannot write '/d/f/..nlink': it is read-only: Permission denied"));
	same_refusal(db, &STRANGER, "/x/g", R4_PSEUDO_MODE, "0777", -EACCES);
	same_refusal(db, &STRANGER, "/d/f", R4_PSEUDO_BODY, "hi", -EACCES);
	same_refusal(db, &STRANGER, "/d", R4_PSEUDO_ACL, "uid 2000 write", -EPERM);

	/* the contents, and a name: as the owner, audited like R4L's */
	CHECK_EQ(api_write(db, &OWNER, "/d/f", R4_PSEUDO_BODY, "bye", t, sizeof(t), &changed), 0);
	CHECK_EQ(api_read(db, &OWNER, "/d/f", R4_PSEUDO_BODY, NULL, t, sizeof(t)), 0);
	CHECK(!strcmp(t, "bye"));
	CHECK_EQ(api_write(db, &OWNER, "/d/f", R4_PSEUDO_NAME, "g", t, sizeof(t), &changed), 0);
	CHECK_EQ(r4_stat(db, "/d/f", &st), -ENOENT);
	CHECK_RC(r4_stat(db, "/d/g", &st));
	CHECK_EQ(api_write(db, &OWNER, "/d/g", R4_PSEUDO_NAME, "f", t, sizeof(t), &changed), 0);

	/* in the caller's transaction: part of it, undone with it */
	CHECK_RC(r4_begin(db));
	CHECK_EQ(api_write(db, &OWNER, "/d/f", R4_PSEUDO_MTIME, "12345", t, sizeof(t), &changed), 0);
	CHECK(changed);
	CHECK(r4_in_txn(db));
	CHECK_RC(r4_stat(db, "/d/f", &st));
	CHECK_EQ(st.mtime.tv_sec, 12345);
	r4_abort(db);
	CHECK_RC(r4_stat(db, "/d/f", &st));
	CHECK(st.mtime.tv_sec != 12345);
}

/* An invert read and defined through the calls: its parts by path. */
static void test_invert(r4_db *db)
{
	char t[700], r[900];
	bool changed = false;

	CHECK_EQ(r4l(db, &ROOT, "/d/..new/(name <- \"inv\", type <- invert)", t, sizeof(t)), 0);
	CHECK_EQ(api_write(db, &OWNER, "/d/inv", R4_PSEUDO_INVERT, "(/d/p <- \"x\") + \"y\"", t,
			   sizeof(t), &changed), -EACCES);	/* root's, 0644 */
	CHECK_EQ(api_write(db, &ROOT, "/d/inv", R4_PSEUDO_INVERT, "(/d/p <- \"x\") + \"y\"", t,
			   sizeof(t), &changed), 0);
	CHECK(changed);
	CHECK_EQ(api_read(db, &ROOT, "/d/inv", R4_PSEUDO_BODY, NULL, t, sizeof(t)), 0);
	CHECK(!strcmp(t, "xy"));
	CHECK_EQ(api_read(db, &ROOT, "/d/inv", R4_PSEUDO_INVERT, NULL, t, sizeof(t)), 0);
	CHECK_EQ(r4l(db, &ROOT, "/d/inv/..invert", r, sizeof(r)), 0);
	CHECK(!strcmp(t, r));
	CHECK(!strcmp(t, "(/d/p <- \"x\") + \"y\"\n"));
	/* the canonical text written back changes nothing */
	CHECK_EQ(api_write(db, &ROOT, "/d/inv", R4_PSEUDO_INVERT, r, t, sizeof(t), &changed), 0);
	CHECK(!changed);
	same_read(db, &STRANGER, "/d/inv", R4_PSEUDO_SIZE, NULL, 0);
	same_read(db, &OWNER, "/d/inv", R4_PSEUDO_PLUGIN, NULL, 0);
}

/* The contents of the file at path, or the symlink's text (static buffer). */
static const char *contents_of(r4_db *db, const char *path)
{
	static char buf[256];
	size_t n = 0;

	buf[0] = 0;
	if (!r4_read(db, path, 0, buf, sizeof(buf) - 1, &n) ||
	    !r4_readlink(db, path, buf, sizeof(buf) - 1, &n))
		buf[n] = 0;
	return buf;
}

/* An invert whose parts go through symlinks, as a directory on the way
 * and as the last name: r4_pseudo_read walks them as R4L does (ns.c),
 * so both give the target's contents, and the same definition. */
static void test_invert_symlinks(r4_db *db)
{
	char t[700], r[900];
	bool changed = false;

	CHECK_EQ(r4l(db, &ROOT, "/d/real <- \"R\"; /ld -> \"/d\"; /d/lnk -> \"real\"; "
		     "/d/..new/(name <- \"inv2\", type <- invert)", t, sizeof(t)), 0);
	CHECK_EQ(api_write(db, &ROOT, "/d/inv2", R4_PSEUDO_INVERT,
			   "/ld/real + \"-\" + /d/lnk + (/ld/made <- \"M\")", t, sizeof(t),
			   &changed), 0);
	CHECK(!strcmp(contents_of(db, "/d/made"), "M"));	/* made through the link */
	CHECK_EQ(api_read(db, &OWNER, "/d/inv2", R4_PSEUDO_BODY, NULL, t, sizeof(t)), 0);
	CHECK_EQ(r4l(db, &OWNER, "/d/inv2", r, sizeof(r)), 0);
	CHECK(!strcmp(t, r));
	CHECK(!strcmp(t, "R-RM"));
	CHECK_EQ(api_read(db, &OWNER, "/d/inv2", R4_PSEUDO_INVERT, NULL, t, sizeof(t)), 0);
	CHECK_EQ(r4l(db, &OWNER, "/d/inv2/..invert", r, sizeof(r)), 0);
	CHECK(!strcmp(t, r));
	CHECK(!strcmp(t, "(/ld/real <- \"R\") + \"-\" + (/d/lnk <- \"R\") + "
		      "(/ld/made <- \"M\")\n"));
	/* an edited part is written through the link too */
	CHECK_EQ(api_write(db, &ROOT, "/d/inv2", R4_PSEUDO_INVERT,
			   "(/d/lnk <- \"S\") + /ld/made", t, sizeof(t), &changed), 0);
	CHECK(!strcmp(contents_of(db, "/d/real"), "S"));
	same_read(db, &OWNER, "/d/inv2", R4_PSEUDO_BODY, NULL, 0);
	same_read(db, &OWNER, "/d/inv2", R4_PSEUDO_SIZE, NULL, 0);
	/* a part beyond a directory the reader may not search: refused alike */
	CHECK_EQ(r4l(db, &ROOT, "/lx -> \"/x\"; /d/..new/(name <- \"inv3\", type <- invert)"
		     "/..invert <- \"/lx/g\"", t, sizeof(t)), 0);
	same_read(db, &OWNER, "/d/inv3", R4_PSEUDO_BODY, NULL, 0);
	same_read(db, &STRANGER, "/d/inv3", R4_PSEUDO_BODY, NULL, -EACCES);
}

/* What c->changes heard: one "ino what path" line per unit. */
struct heard {
	char text[600];
	int refuse;		/* returned for each unit (a ',' group's conflict) */
};

static int hear(void *arg, uint64_t ino, int what, const char *path)
{
	struct heard *h = arg;
	size_t n = strlen(h->text);

	snprintf(h->text + n, sizeof(h->text) - n, "%llu %d %s\n", (unsigned long long)ino, what,
		 path);
	return h->refuse;
}

/* The executor's way to pseudo.c, for who: h hears the changes, why the words. */
static struct r4_pseudo_ctx ctx_for(const struct r4_ident *who, struct heard *h,
				    struct r4_why *why)
{
	*h = (struct heard){"", 0};
	why->msg[0] = 0;
	return (struct r4_pseudo_ctx){.who = who, .actor = who, .why = why, .changes = hear,
				      .arg = h};
}

/* Did h hear exactly the units of want ("ino what path" lines), then forget them? */
static bool heard(struct heard *h, const char *want)
{
	bool same = !strcmp(h->text, want);

	if (!same)
		fprintf(stderr, "heard: [%s]\nwant:  [%s]\n", h->text, want);
	h->text[0] = 0;
	return same;
}

/* A line of heard text. */
static const char *unit(uint64_t ino, int what, const char *path)
{
	static char line[4][200];
	static unsigned k;
	char *l = line[k++ % 4];

	snprintf(l, sizeof(line[0]), "%llu %d %s\n", (unsigned long long)ino, what, path);
	return l;
}

/* r4_pseudo_ctx.changes: each change tells first what it will change (the
 * executor's ',' groups), and a refusal there is the call's, before anything changed. */
static void test_changes(r4_db *db)
{
	struct heard h;
	struct r4_why why;
	struct r4_pseudo_ctx c = ctx_for(&ROOT, &h, &why);
	struct r4_window win = {1, 1, true, R4_WIN_OVERLAY};
	struct r4_stat d, t;
	char want[600];

	CHECK_RC(r4_create(db, "/d/t", 0644, 1000, 100));
	CHECK_RC(r4_stat(db, "/d", &d));
	CHECK_RC(r4_stat(db, "/d/t", &t));
	CHECK_RC(r4_begin(db));
	CHECK_RC(r4_pseudo_put(db, &c, "/d/t", &t, d.ino, R4_PSEUDO_NONE, NULL,
			       (const uint8_t *)"abc", 3, false));
	snprintf(want, sizeof(want), "%s%s", unit(t.ino, 0, "/d/t"),
		 unit(t.ino, R4_PSEUDO_SIZE, "/d/t"));
	CHECK(heard(&h, want));
	CHECK_RC(r4_stat(db, "/d/t", &t));
	CHECK_RC(r4_pseudo_window_put(db, &c, "/d/t", &t, &win, (const uint8_t *)"B", 1));
	CHECK(heard(&h, want));
	CHECK(!strcmp(contents_of(db, "/d/t"), "aBc"));

	/* a rename: the object's ..name, its old and new entries */
	CHECK_RC(r4_pseudo_put(db, &c, "/d/t", &t, d.ino, R4_PSEUDO_NAME, NULL,
			       (const uint8_t *)"u\n", 2, false));
	CHECK(c.moved && !strcmp(c.moved, "/d/u"));
	r4_free(c.moved);
	c.moved = NULL;
	snprintf(want, sizeof(want), "%s%s%s", unit(t.ino, R4_PSEUDO_NAME, "/d/t"),
		 unit(d.ino, -1, "/d/t"), unit(d.ino, -1, "/d/u"));
	CHECK(heard(&h, want));

	/* refused where it tells: nothing changed, no words of pseudo.c's */
	h.refuse = -EBUSY;
	CHECK_EQ(r4_pseudo_put(db, &c, "/d/u", &t, d.ino, R4_PSEUDO_MODE, NULL,
			       (const uint8_t *)"0600", 4, false), -EBUSY);
	CHECK(heard(&h, unit(t.ino, R4_PSEUDO_MODE, "/d/u")));
	CHECK(!why.msg[0]);
	CHECK_RC(r4_stat(db, "/d/u", &t));
	CHECK_EQ(t.mode & 07777, 0644);
	h.refuse = 0;

	/* a rule, an audit setting: those pseudo files */
	CHECK_RC(r4_pseudo_rule(db, &c, "/d/u", &t, (const uint8_t *)"2000", 4, false, 2));
	CHECK(heard(&h, unit(t.ino, R4_PSEUDO_ACL, "/d/u")));
	CHECK_RC(r4_pseudo_audit_into(db, &c, "/d/u", &t, "/d/f"));
	CHECK(heard(&h, unit(t.ino, R4_PSEUDO_AUDIT, "/d/u")));

	/* an unlink: the directory's ..unlink, the entry, the object */
	CHECK_RC(r4_pseudo_put(db, &c, "/d", &d, 0, R4_PSEUDO_UNLINK, NULL, (const uint8_t *)"u",
			       1, false));
	snprintf(want, sizeof(want), "%s%s%s", unit(d.ino, R4_PSEUDO_UNLINK, "/d"),
		 unit(d.ino, -1, "/d/u"), unit(t.ino, 0, "/d/u"));
	CHECK(heard(&h, want));
	CHECK_EQ(r4_stat(db, "/d/u", &t), -ENOENT);
	r4_abort(db);
	CHECK_RC(r4_unlink(db, "/d/t"));
}

/* A refusal: rc is want and c->why says words (then forgotten). */
static bool refused(int rc, int want, struct r4_why *why, const char *words)
{
	bool same = rc == want && !strcmp(why->msg, words);

	if (!same)
		fprintf(stderr, "rc %d, why [%s]\nwant %d, [%s]\n", rc, why->msg, want, words);
	why->msg[0] = 0;
	return same;
}

/* ..new, LINK and T -> E: the entries they make, what they refuse in
 * R4L's words, and what they tell c->changes first. */
static void test_new_entries(r4_db *db)
{
	struct heard h;
	struct r4_why why;
	struct r4_pseudo_ctx c = ctx_for(&OWNER, &h, &why);
	struct r4_new nw = {R4_NEW_REGULAR, 0, (const uint8_t *)"n\n", (const uint8_t *)"640",
			    NULL, 2, 3, 0};
	struct r4_stat d, f, x, st;
	char *path = NULL, want[600];

	CHECK_RC(r4_stat(db, "/d", &d));
	CHECK_RC(r4_stat(db, "/d/f", &f));
	CHECK_RC(r4_stat(db, "/x", &x));
	CHECK_RC(r4_begin(db));

	/* ..new: the name less its LF, perm as given, else by type */
	CHECK_RC(r4_pseudo_new(db, &c, "/d", &d, &nw, &path, &st));
	CHECK(path && !strcmp(path, "/d/n"));
	CHECK_EQ(st.mode, S_IFREG | 0640);
	CHECK_EQ(st.uid, 1000);
	CHECK(heard(&h, unit(d.ino, -1, "/d/n")));
	r4_free(path);
	nw = (struct r4_new){R4_NEW_DIRECTORY, 0, (const uint8_t *)"sub", NULL, NULL, 3, 0, 0};
	CHECK_RC(r4_pseudo_new(db, &c, "/d", &d, &nw, &path, &st));
	CHECK_EQ(st.mode, S_IFDIR | 0755);	/* 0777 less the umask */
	r4_free(path);
	nw = (struct r4_new){R4_NEW_SYMLINK, 0, (const uint8_t *)"sl", NULL, (const uint8_t *)"n",
			     2, 0, 1};
	CHECK_RC(r4_pseudo_new(db, &c, "/d", &d, &nw, &path, &st));
	CHECK(!strcmp(contents_of(db, "/d/sl"), "n"));
	r4_free(path);
	h.text[0] = 0;

	/* refused: where, what name, what perm, a name taken, a directory
	 * the caller may not write */
	CHECK(refused(r4_pseudo_new(db, &c, "/d/f", &f, &nw, &path, &st), -ENOTDIR, &why,
		      "cannot create in '/d/f'"));
	nw = (struct r4_new){R4_NEW_REGULAR, 0, (const uint8_t *)"..x", NULL, NULL, 3, 0, 0};
	CHECK(refused(r4_pseudo_new(db, &c, "/d", &d, &nw, &path, &st), -EINVAL, &why,
		      "cannot create '..x' in '/d'"));
	nw.name = (const uint8_t *)"m";
	nw.name_len = 1;
	nw.perm = (const uint8_t *)"8";
	nw.perm_len = 1;
	CHECK(refused(r4_pseudo_new(db, &c, "/d", &d, &nw, &path, &st), -EINVAL, &why,
		      "'perm' takes 1 to 4 octal digits"));
	r4_free(path);
	nw.name = (const uint8_t *)"n";
	nw.perm = NULL;
	CHECK(refused(r4_pseudo_new(db, &c, "/d", &d, &nw, &path, &st), -EEXIST, &why,
		      "cannot create '/d/n'"));
	r4_free(path);
	c.who = c.actor = &STRANGER;
	CHECK(refused(r4_pseudo_new(db, &c, "/x", &x, &nw, &path, &st), -EACCES, &why,
		      "cannot change '/x/n'"));
	r4_free(path);
	CHECK(heard(&h, unit(x.ino, -1, "/x/n")));
	CHECK_EQ(r4_stat(db, "/x/n", &st), -ENOENT);
	c.who = c.actor = &OWNER;

	/* LINK: one more name of /d/f, its ..nlink changed */
	CHECK_RC(r4_pseudo_link(db, &c, "/d/f", &f, "/d", &d, (const uint8_t *)"l\n", 2, &path,
				&st));
	CHECK(path && !strcmp(path, "/d/l"));
	CHECK_EQ(st.ino, f.ino);
	CHECK_EQ(st.nlink, 2);
	snprintf(want, sizeof(want), "%s%s", unit(d.ino, -1, "/d/l"),
		 unit(f.ino, R4_PSEUDO_NLINK, "/d/f"));
	CHECK(heard(&h, want));
	r4_free(path);
	CHECK(refused(r4_pseudo_link(db, &c, "/x", &x, "/d", &d, (const uint8_t *)"l2", 2, &path,
				     &st), -EPERM, &why, "cannot link to '/x': it is a directory"));
	CHECK(refused(r4_pseudo_link(db, &c, "/d/f", &f, "/d/f", &f, (const uint8_t *)"l2", 2,
				     &path, &st), -ENOTDIR, &why, "cannot link in '/d/f'"));
	CHECK(refused(r4_pseudo_link(db, &c, "/d/f", &f, "/d", &d, (const uint8_t *)".", 1, &path,
				     &st), -EINVAL, &why, "cannot link '.' in '/d'"));
	CHECK(refused(r4_pseudo_link(db, &c, "/d/f", &f, "/d", &d, (const uint8_t *)"l", 1, &path,
				     &st), -EEXIST, &why, "cannot link '/d/l' to '/d/f'"));
	r4_free(path);
	h.text[0] = 0;

	/* T -> E: a missing name made a symlink, a symlink replaced; not
	 * another object, nor with an empty target */
	CHECK_RC(r4_pseudo_symlink(db, &c, "/d/s", NULL, d.ino, &d, (const uint8_t *)"f", 1, &st));
	CHECK(S_ISLNK(st.mode));
	CHECK(!strcmp(contents_of(db, "/d/s"), "f"));
	CHECK_RC(r4_pseudo_symlink(db, &c, "/d/s", &st, d.ino, NULL, (const uint8_t *)"l", 1, &st));
	CHECK(!strcmp(contents_of(db, "/d/s"), "l"));
	snprintf(want, sizeof(want), "%s%s", unit(d.ino, -1, "/d/s"), unit(d.ino, -1, "/d/s"));
	CHECK(heard(&h, want));
	CHECK(refused(r4_pseudo_symlink(db, &c, "/d/s", &st, d.ino, NULL, (const uint8_t *)"", 0,
					&st), -EINVAL, &why, "cannot make '/d/s' a symlink"));
	CHECK(!strcmp(contents_of(db, "/d/s"), "l"));
	CHECK(refused(r4_pseudo_symlink(db, &c, "/d/f", &f, d.ino, NULL, (const uint8_t *)"g", 1,
					&st), -EEXIST, &why, "cannot make '/d/f' a symlink"));
	CHECK(refused(r4_pseudo_symlink(db, &c, "/x", &x, 0, NULL, (const uint8_t *)"g", 1, &st),
		      -EISDIR, &why, "cannot make '/x' a symlink"));
	c.who = c.actor = &STRANGER;
	CHECK(refused(r4_pseudo_symlink(db, &c, "/d/s", &st, d.ino, NULL, (const uint8_t *)"g", 1,
					&st), -EACCES, &why, "cannot change '/d/s'"));
	r4_abort(db);
}

/* A ..range window and a rule from their parameters' text. */
static void test_parameters(r4_db *db)
{
	struct heard h;
	struct r4_why why;
	struct r4_pseudo_ctx c = ctx_for(&OWNER, &h, &why);
	struct r4_window w;
	struct r4_stat d, f, agg, lnk;
	struct r4_buf b = {0};
	char t[200];

	CHECK_EQ(r4l(db, &ROOT, "/d/..new/(name <- \"agg\", type <- aggregate); "
		     "/d/lnk -> \"f\"", t, sizeof(t)), 0);
	CHECK_RC(r4_stat(db, "/d", &d));
	CHECK_RC(r4_stat(db, "/d/f", &f));
	CHECK_RC(r4_stat(db, "/d/agg", &agg));
	CHECK_RC(r4_stat(db, "/d/lnk", &lnk));	/* (the link itself) */

	/* a window: of a file or an aggregate, offset and length decimal from 0 */
	CHECK_RC(r4_pseudo_window(db, &c, "/d/f", &f, (const uint8_t *)"2", 1,
				  (const uint8_t *)"3\n", 2, R4_WIN_ZERO, &w));
	CHECK(w.off == 2 && w.len == 3 && w.len_set && w.mode == R4_WIN_ZERO);
	CHECK_RC(r4_pseudo_window(db, &c, "/d/agg", &agg, NULL, 0, NULL, 0, R4_WIN_SHIFT, &w));
	CHECK(w.off == 0 && !w.len_set && w.mode == R4_WIN_SHIFT);
	CHECK(refused(r4_pseudo_window(db, &c, "/d/f", &f, (const uint8_t *)"-1", 2, NULL, 0, 0,
				       &w), -EINVAL, &why, "'offset' takes a decimal number from 0"));
	CHECK(refused(r4_pseudo_window(db, &c, "/d/f", &f, NULL, 0, (const uint8_t *)"3k", 2, 0,
				       &w), -EINVAL, &why, "'length' takes a decimal number from 0"));
	CHECK(refused(r4_pseudo_window(db, &c, "/d", &d, NULL, 0, NULL, 0, 0, &w), -EISDIR, &why,
		      "cannot take a window of '/d'"));
	CHECK(refused(r4_pseudo_window(db, &c, "/d/lnk", &lnk, NULL, 0, NULL, 0, 0, &w), -EINVAL,
		      &why, "cannot take a window of '/d/lnk': not a file"));
	CHECK(!h.text[0]);	/* (a window changes nothing) */

	/* a rule: the id decimal, below 2^32 - 1; refused before it tells */
	CHECK_RC(r4_begin(db));
	CHECK_RC(r4_pseudo_rule(db, &c, "/d/f", &f, (const uint8_t *)"2000\n", 5, true, 1));
	CHECK(heard(&h, unit(f.ino, R4_PSEUDO_ACL, "/d/f")));
	CHECK_RC(r4_pseudo_get(db, &c, "/d/f", &f, R4_PSEUDO_ACL, NULL, &b));
	CHECK(b.len == 14 && !memcmp(b.p, "gid 2000 read\n", 14));
	CHECK(refused(r4_pseudo_rule(db, &c, "/d/f", &f, (const uint8_t *)"4294967295", 10, true, 1),
		      -EINVAL, &why, "'gid' takes a decimal id"));
	CHECK(refused(r4_pseudo_rule(db, &c, "/d/f", &f, (const uint8_t *)"-1", 2, false, 1),
		      -EINVAL, &why, "'uid' takes a decimal id"));
	CHECK(!h.text[0]);
	r4_abort(db);
	r4_buf_free(&b);
}

int main(void)
{
	struct r4_open_opts o = {.rw = true};
	r4_db *db = NULL;
	char dir[256];

	snprintf(dir, sizeof(dir), "%s/r4pseudoXXXXXX", t_tmp());
	if (!mkdtemp(dir))
		return 1;
	snprintf(img, sizeof(img), "%s/a.img", dir);
	CHECK_RC(r4_mkfs(img, 16u << 20, NULL));
	CHECK_RC(r4_open(img, &o, &db));
	if (!db)
		return T_DONE();
	CHECK_RC(r4_mkdir(db, "/d", 0755, 1000, 100));
	CHECK_RC(r4_create(db, "/d/f", 0644, 1000, 100));
	CHECK_RC(r4_write(db, "/d/f", 0, "hello", 5));
	CHECK_RC(r4_create(db, "/d/secret", 0600, 1000, 100));
	CHECK_RC(r4_mkdir(db, "/x", 0700, 1000, 100));
	CHECK_RC(r4_create(db, "/x/g", 0644, 1000, 100));
	test_reads(db);
	test_writes(db);
	test_invert(db);
	test_invert_symlinks(db);
	test_changes(db);
	test_new_entries(db);
	test_parameters(db);
	r4_close(db);
	if (t_fail)
		fprintf(stderr, "image kept in %s\n", dir);
	else if (t_rmdir(dir))
		return 1;
	return T_DONE();
}
