/*
 * test_ns.c - the one path walker (engine/ns.c): ".", ".." and the root's
 * parent, symlinks (relative, absolute, chains, loops, the last one kept),
 * real entries before pseudo names (and the compiler's checked text, where
 * a pseudo name is the pseudo file), missing last names, the parent of the
 * last component, search permission, and the caller's hooks.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ns.h"
#include "t.h"

static char dir[64], img[128];
static r4_db *db;

/* Walk text (from: NULL, the root) with flags; its return. */
static int walk(struct r4_ns_walk *w, unsigned flags, const char *from, const char *text)
{
	*w = (struct r4_ns_walk){.db = db, .flags = flags | R4_NS_PATH};
	return r4_ns_walk(w, from, text);
}

/* Does text walk, with flags, to the object at path (found in directory
 * up), of type fmt? */
static bool reaches(unsigned flags, const char *text, const char *path, const char *up,
		    unsigned fmt)
{
	struct r4_ns_walk w;
	struct r4_stat st;
	bool ok = !walk(&w, flags, NULL, text) && w.end == R4_NS_AT_OBJ &&
		  !strcmp(w.path, path) && (w.st.mode & S_IFMT) == fmt;

	if (ok && up)
		ok = !r4_stat(db, up, &st) && st.ino == w.dir_ino;
	if (!ok)
		fprintf(stderr, "walk of '%s' did not reach '%s'\n", text, path);
	r4_ns_fini(&w);
	return ok;
}

/* text fails with rc at component comp. */
static bool fails(unsigned flags, const char *text, int rc, int comp)
{
	struct r4_ns_walk w;
	int got = walk(&w, flags, NULL, text);
	bool ok = got == rc && w.comp == comp;

	if (!ok)
		fprintf(stderr, "walk of '%s': %d at %d, not %d at %d\n", text, got, w.comp, rc,
			comp);
	r4_ns_fini(&w);
	return ok;
}

static void setup(void)
{
	struct r4_mkfs_opts mo;
	struct r4_open_opts o = {.rw = true};

	unlink(img);
	r4_mkfs_defaults(&mo);
	CHECK_RC(r4_mkfs(img, 16 << 20, &mo));
	CHECK_RC(r4_open(img, &o, &db));
	CHECK_RC(r4_mkdir(db, "/d", 0755, 0, 0));
	CHECK_RC(r4_create(db, "/d/f", 0644, 0, 0));
	CHECK_RC(r4_create(db, "/d/..foo", 0644, 0, 0));
	CHECK_RC(r4_create(db, "/d/..mode", 0644, 0, 0));
	CHECK_RC(r4_symlink(db, "f", "/d/rel", 0, 0));
	CHECK_RC(r4_symlink(db, "/d/f", "/d/abs", 0, 0));
	CHECK_RC(r4_symlink(db, "../d/rel", "/d/chain", 0, 0));
	CHECK_RC(r4_symlink(db, "/d/..mode", "/d/tomode", 0, 0));
	CHECK_RC(r4_symlink(db, "/d", "/tod", 0, 0));
	CHECK_RC(r4_symlink(db, "loop", "/loop", 0, 0));
	CHECK_RC(r4_mkdir(db, "/s", 0700, 0, 0));
	CHECK_RC(r4_create(db, "/s/x", 0644, 0, 0));
}

static void test_dots(void)
{
	CHECK(reaches(0, "/d/f", "/d/f", "/d", S_IFREG));
	CHECK(reaches(0, "//d/./f/", "/d/f", "/d", S_IFREG));
	CHECK(reaches(0, "/d/../d/f", "/d/f", "/d", S_IFREG));
	CHECK(reaches(0, "/../..", "/", NULL, S_IFDIR));	/* the root's parent */
	CHECK(reaches(0, "/", "/", NULL, S_IFDIR));
	CHECK(fails(0, "/d/f/.", -ENOTDIR, 2));
	CHECK(fails(0, "/d/f/x", -ENOTDIR, 2));
	CHECK(fails(0, "/d/nope/x", -ENOENT, 1));

	struct r4_ns_walk w;

	CHECK_RC(walk(&w, 0, "/d", "../d/./f"));	/* relative to an absolute start */
	CHECK(!strcmp(w.path, "/d/f"));
	r4_ns_fini(&w);
	CHECK_RC(walk(&w, 0, "/d", "/s"));	/* an absolute text ignores the start */
	CHECK(!strcmp(w.path, "/s"));
	r4_ns_fini(&w);
	CHECK_EQ(walk(&w, 0, "/nope", "f"), -ENOENT);
	CHECK_EQ(w.comp, -1);			/* the start failed */
	r4_ns_fini(&w);
}

static void test_symlinks(void)
{
	const unsigned all = R4_NS_FOLLOW | R4_NS_FOLLOW_LAST;

	CHECK(reaches(0, "/d/rel", "/d/rel", "/d", S_IFLNK));
	CHECK(fails(0, "/tod/f", -ENOTDIR, 1));		/* the fs API follows none */
	CHECK(reaches(R4_NS_FOLLOW, "/tod/f", "/d/f", "/d", S_IFREG));
	CHECK(reaches(R4_NS_FOLLOW, "/d/rel", "/d/rel", "/d", S_IFLNK));
	CHECK(reaches(all, "/d/rel", "/d/f", "/d", S_IFREG));
	CHECK(reaches(all, "/d/abs", "/d/f", "/d", S_IFREG));
	CHECK(reaches(all, "/d/chain", "/d/f", "/d", S_IFREG));
	CHECK(reaches(all, "/tod/chain", "/d/f", "/d", S_IFREG));
	CHECK(fails(all, "/loop", -ELOOP, 0));
	/* a loop met later is named by the step's own component */
	CHECK(fails(all, "/d/../loop/x", -ELOOP, 2));
	CHECK(fails(R4_NS_FOLLOW, "/loop/x", -ELOOP, 0));
}

static void test_names(void)
{
	const unsigned ps = R4_NS_PSEUDO | R4_NS_FOLLOW | R4_NS_FOLLOW_LAST;
	struct r4_ns_walk w;

	/* real entries first, in the fs API's walks and the executor's */
	CHECK(reaches(0, "/d/..foo", "/d/..foo", "/d", S_IFREG));
	CHECK(fails(0, "/d/..uid", -ENOENT, 1));
	CHECK(reaches(ps, "/d/..foo", "/d/..foo", "/d", S_IFREG));
	CHECK(reaches(ps, "/d/..mode", "/d/..mode", "/d", S_IFREG));
	CHECK(fails(ps, "/d/..nosuch", -ENOENT, 1));
	CHECK(fails(ps, "/d/f/..nosuch", -ENOENT, 2));
	CHECK(fails(ps, "/d/f/x", -ENOTDIR, 2));

	/* then the pseudo name, with what follows it */
	CHECK_RC(walk(&w, ps, NULL, "/d/..plugin/hash"));
	CHECK(w.end == R4_NS_AT_PSEUDO && w.ps->id == R4_PSEUDO_PLUGIN);
	CHECK(!strcmp(w.path, "/d") && !strcmp(w.rest, "/hash"));
	r4_ns_fini(&w);
	CHECK_RC(walk(&w, ps, NULL, "/d/f/..uid"));
	CHECK(w.end == R4_NS_AT_PSEUDO && w.ps->id == R4_PSEUDO_UID && !strcmp(w.path, "/d/f"));
	r4_ns_fini(&w);
	/* a pseudo name under a symlink is the link's */
	CHECK_RC(walk(&w, ps, NULL, "/d/rel/..type"));
	CHECK(w.end == R4_NS_AT_PSEUDO && S_ISLNK(w.st.mode) && !strcmp(w.path, "/d/rel"));
	r4_ns_fini(&w);

	/* the compiler's text: its own pseudo names are pseudo files, a
	 * symlink's text is resolved as any */
	CHECK_RC(walk(&w, ps | R4_NS_CHECKED, NULL, "/d/..mode"));
	CHECK(w.end == R4_NS_AT_PSEUDO && w.ps->id == R4_PSEUDO_MODE && !strcmp(w.path, "/d"));
	r4_ns_fini(&w);
	CHECK(reaches(ps | R4_NS_CHECKED, "/d/..foo", "/d/..foo", "/d", S_IFREG));
	CHECK(reaches(ps | R4_NS_CHECKED, "/d/tomode", "/d/..mode", "/d", S_IFREG));
}

static void test_ends(void)
{
	const unsigned ps = R4_NS_PSEUDO | R4_NS_FOLLOW | R4_NS_FOLLOW_LAST;
	struct r4_ns_walk w;

	CHECK_RC(walk(&w, ps | R4_NS_MISSING, NULL, "/tod/new"));
	CHECK(w.end == R4_NS_AT_MISSING && !strcmp(w.path, "/d") && S_ISDIR(w.st.mode));
	CHECK(w.len == 3 && !memcmp(w.name, "new", 3));
	r4_ns_fini(&w);
	/* a "..x" is never made through a walk that knows pseudo names */
	CHECK(fails(ps | R4_NS_MISSING, "/d/..zz", -ENOENT, 1));
	CHECK(fails(ps | R4_NS_MISSING, "/d/nope/new", -ENOENT, 1));
	CHECK(fails(ps | R4_NS_MISSING, "/d/f/new", -ENOTDIR, 2));

	CHECK_RC(walk(&w, R4_NS_PARENT, NULL, "/d/../d/f"));
	CHECK(w.end == R4_NS_AT_LAST && !strcmp(w.path, "/d") && w.len == 1 && *w.name == 'f');
	r4_ns_fini(&w);
	CHECK_RC(walk(&w, R4_NS_PARENT, NULL, "/d/.."));	/* callers refuse ".." */
	CHECK(w.end == R4_NS_AT_LAST && !strcmp(w.path, "/d") && w.len == 2);
	r4_ns_fini(&w);
	CHECK(fails(R4_NS_PARENT, "/", -EBUSY, -1));

	struct r4_inode ino;

	CHECK_RC(walk(&w, 0, NULL, "/d/f"));
	r4_ns_take(&w, &ino);
	r4_ns_fini(&w);
	CHECK(S_ISREG(ino.sd.sd_mode));
	r4_obj_fini(&ino);
}

static void test_search(void)
{
	const struct r4_ident user = {1000, 1000, NULL, 0, 022};
	struct r4_ns_walk w;

	w = (struct r4_ns_walk){.db = db, .who = &user, .flags = R4_NS_PSEUDO};
	CHECK_EQ(r4_ns_walk(&w, NULL, "/s/x"), -EACCES);
	CHECK_EQ(w.comp, 1);
	r4_ns_fini(&w);
	w = (struct r4_ns_walk){.db = db, .who = &user, .flags = R4_NS_PSEUDO};
	CHECK_EQ(r4_ns_walk(&w, NULL, "/s/."), -EACCES);
	r4_ns_fini(&w);
	/* the entries are hidden, the directory's pseudo files are not */
	w = (struct r4_ns_walk){.db = db, .who = &user, .flags = R4_NS_PSEUDO};
	CHECK_RC(r4_ns_walk(&w, NULL, "/s/..mode"));
	CHECK(w.end == R4_NS_AT_PSEUDO);
	r4_ns_fini(&w);
	/* the start is walked without checks */
	w = (struct r4_ns_walk){.db = db, .who = &user};
	CHECK_RC(r4_ns_walk(&w, "/s/x", ""));
	CHECK(S_ISREG(w.st.mode));
	r4_ns_fini(&w);
}

struct seen {
	char names[256];
	int stop_at;		/* enter fails at this call (0: never) */
	int calls;
};

static int enter(void *ctx, const struct r4_ns_walk *w, const char *name, size_t len)
{
	struct seen *s = ctx;

	(void)w;
	strncat(s->names, name, len);
	strcat(s->names, ",");
	return ++s->calls == s->stop_at ? -EBUSY : 0;
}

static bool claims(void *ctx, const struct r4_ns_walk *w, const char *name, size_t len)
{
	(void)ctx;
	(void)w;
	return len == 4 && !memcmp(name, "mine", 4);
}

static void test_hooks(void)
{
	struct seen s = {{0}, 0, 0};
	struct r4_ns_walk w = {.db = db, .enter = enter, .claims = claims, .ctx = &s,
			       .flags = R4_NS_PATH | R4_NS_FOLLOW | R4_NS_FOLLOW_LAST};

	/* each entry looked up is entered, symlinks' names too */
	CHECK_RC(r4_ns_walk(&w, NULL, "/tod/./chain"));
	CHECK(!strcmp(s.names, "tod,d,chain,d,rel,f,"));
	r4_ns_fini(&w);
	/* a claimed name ends the walk, and is the link's */
	w = (struct r4_ns_walk){.db = db, .enter = enter, .claims = claims, .ctx = &s,
				.flags = R4_NS_PATH | R4_NS_FOLLOW | R4_NS_FOLLOW_LAST};
	CHECK_RC(r4_ns_walk(&w, NULL, "/d/rel/mine/more"));
	CHECK(w.end == R4_NS_AT_CLAIMED && S_ISLNK(w.st.mode) && !strcmp(w.rest, "/more"));
	r4_ns_fini(&w);
	s = (struct seen){{0}, 2, 0};
	w = (struct r4_ns_walk){.db = db, .enter = enter, .ctx = &s, .flags = R4_NS_PATH};
	CHECK_EQ(r4_ns_walk(&w, NULL, "/d/f"), -EBUSY);
	CHECK(!strcmp(w.path, "/d"));
	r4_ns_fini(&w);
}

int main(void)
{
	snprintf(dir, sizeof(dir), "%s/r4ns.XXXXXX", t_tmp());
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	snprintf(img, sizeof(img), "%s/img", dir);
	setup();
	if (db) {
		test_dots();
		test_symlinks();
		test_names();
		test_ends();
		test_search();
		test_hooks();
		r4_close(db);
	}
	if (t_rmdir(dir))
		return 1;
	return T_DONE();
}
