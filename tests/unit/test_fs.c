/*
 * test_fs.c - the fs API against a model (STYLE.md section 11).
 *
 * A seeded random workload (creates, writes with holes, truncates, links,
 * symlinks, specials, renames across directories and over targets,
 * deletes) runs against r4 and against a trivial in-memory model; after
 * every commit (and after reopening) the whole namespace of both must be
 * equal: path, type, size, content, mode, uid, gid, nlink, symlink text.
 * When fsck.reiser4 is installed, it must call the image consistent at
 * the end.  R4_SEED replays a run; R4_OPS sets its length
 * (1000 operations; make check-long: 5000).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include "t.h"

/* ---- the model ---- */

struct mobj {
	uint32_t mode, uid, gid, nlink;
	uint8_t *data;
	size_t size;
	uint64_t rdev;
	char *target;
	int refs;
};

struct mname {
	char *path;
	struct mobj *obj;
};

static struct mname *names;
static size_t nnames, capnames;
static unsigned long rng;
static unsigned long op_no;

static unsigned rnd(unsigned n)
{
	rng = rng * 6364136223846793005UL + 1442695040888963407UL;
	return n ? (unsigned)((rng >> 33) % n) : 0;
}

static struct mname *find(const char *path)
{
	for (size_t i = 0; i < nnames; i++)
		if (!strcmp(names[i].path, path))
			return &names[i];
	return NULL;
}

static void add_name(const char *path, struct mobj *o)
{
	if (nnames == capnames) {
		capnames = capnames ? capnames * 2 : 256;
		names = realloc(names, capnames * sizeof(*names));
	}
	names[nnames].path = strdup(path);
	names[nnames].obj = o;
	o->refs++;
	nnames++;
}

static void obj_unref(struct mobj *o)
{
	if (--o->refs == 0) {
		free(o->data);
		free(o->target);
		free(o);
	}
}

static void del_name(struct mname *n)
{
	free(n->path);
	obj_unref(n->obj);
	*n = names[--nnames];
}

static void parent_of(const char *path, char *out)
{
	const char *s = strrchr(path, '/');

	if (s == path)
		strcpy(out, "/");
	else {
		memcpy(out, path, (size_t)(s - path));
		out[s - path] = 0;
	}
}

static bool is_under(const char *path, const char *dir)
{
	size_t n = strlen(dir);

	return !strncmp(path, dir, n) && path[n] == '/';
}

static struct mobj *new_obj(uint32_t mode)
{
	struct mobj *o = calloc(1, sizeof(*o));

	o->mode = mode;
	o->uid = rnd(3) * 1000;
	o->gid = rnd(3) * 100;
	o->nlink = S_ISDIR(mode) ? 2 : 1;
	return o;
}

/* ---- random names and picks ---- */

static void rand_name(char *buf)
{
	static const char *const ext[] = {".c", ".h", ".o", ".txt", "", ""};
	unsigned kind = rnd(10), len;

	if (kind < 6)
		len = 1 + rnd(12);
	else if (kind < 8)
		len = 16 + rnd(16);
	else
		len = 24 + rnd(232);
	for (unsigned i = 0; i < len; i++) {
		unsigned c = rnd(100);

		buf[i] = c < 70 ? (char)('a' + rnd(26)) : c < 85 ? (char)('0' + rnd(10))
			 : c < 95 ? (char)(0x80 + rnd(0x7f)) : '-';
	}
	buf[len] = 0;
	const char *e = ext[rnd(6)];
	if (len + strlen(e) <= 255)
		strcat(buf, e);
	if (!strcmp(buf, ".") || !strcmp(buf, ".."))
		strcpy(buf, "dots");
}

/* A random directory path of the model ("/" included). */
static const char *pick_dir(void)
{
	size_t n = 0;

	for (size_t i = 0; i < nnames; i++)
		n += S_ISDIR(names[i].obj->mode);
	if (n == 0 || rnd(5) == 0)
		return "/";
	n = rnd((unsigned)n);
	for (size_t i = 0; i < nnames; i++)
		if (S_ISDIR(names[i].obj->mode) && n-- == 0)
			return names[i].path;
	return "/";
}

static struct mname *pick(uint32_t type)
{
	size_t n = 0;

	for (size_t i = 0; i < nnames; i++)
		n += !type || (names[i].obj->mode & S_IFMT) == type;
	if (!n)
		return NULL;
	n = rnd((unsigned)n);
	for (size_t i = 0; i < nnames; i++)
		if ((!type || (names[i].obj->mode & S_IFMT) == type) && n-- == 0)
			return &names[i];
	return NULL;
}

static void new_path(char *out)
{
	const char *d = pick_dir();
	char name[300];

	rand_name(name);
	snprintf(out, 4096, "%s/%s", strcmp(d, "/") ? d : "", name);
}

/* ---- operations: each applies to r4 and, if r4 succeeds, to the model ---- */

#define EXPECT_OK(call) do { int rc_ = (call); if (rc_) { t_fail++; fprintf(stderr, \
	"op %lu: %s: %s\n", op_no, #call, r4_strerror(rc_)); return; } t_pass++; } while (0)

static void op_create(r4_db *db)
{
	char p[4096];
	unsigned kind = rnd(10);
	struct mobj *o;

	new_path(p);
	if (find(p))
		return;
	if (kind < 6) {
		o = new_obj(S_IFREG | 0644);
		EXPECT_OK(r4_create(db, p, o->mode, o->uid, o->gid));
	} else if (kind < 8) {
		o = new_obj(S_IFDIR | 0755);
		EXPECT_OK(r4_mkdir(db, p, o->mode, o->uid, o->gid));
		char par[4096];
		parent_of(p, par);
		if (strcmp(par, "/"))
			find(par)->obj->nlink++;
	} else if (kind < 9) {
		char tgt[300];

		rand_name(tgt);
		o = new_obj(S_IFLNK | 0777);
		o->target = strdup(tgt);
		o->size = strlen(tgt);
		EXPECT_OK(r4_symlink(db, tgt, p, o->uid, o->gid));
	} else {
		static const uint32_t types[] = {S_IFIFO, S_IFSOCK, S_IFCHR, S_IFBLK};
		o = new_obj(types[rnd(4)] | 0600);
		if (S_ISCHR(o->mode) || S_ISBLK(o->mode))
			o->rdev = makedev(rnd(300), rnd(1000));
		EXPECT_OK(r4_mknod(db, p, o->mode, o->rdev, o->uid, o->gid));
	}
	add_name(p, o);
}

static void fill(uint8_t *b, size_t n)
{
	unsigned v = rnd(256), kind = rnd(3);

	for (size_t i = 0; i < n; i++)
		b[i] = kind == 0 ? (uint8_t)v : kind == 1 ? (uint8_t)rnd(256) : (uint8_t)('a' + i % 26);
}

static void op_write(r4_db *db, size_t maxsize)
{
	struct mname *n = pick(S_IFREG);
	size_t off, len;
	uint8_t *buf;

	if (!n)
		return;
	switch (rnd(4)) {
	case 0: off = n->obj->size; len = 1 + rnd(200); break;		/* append small */
	case 1: off = rnd(20000); len = 1 + rnd(5000); break;		/* around tails */
	case 2: off = rnd((unsigned)maxsize); len = 1 + rnd(70000); break; /* anywhere, holes */
	default: off = rnd((unsigned)(n->obj->size + 1)); len = 1 + rnd(9000); break;
	}
	if (off + len > maxsize)
		return;
	buf = malloc(len);
	fill(buf, len);
	EXPECT_OK(r4_write(db, n->path, off, buf, len));
	struct mobj *o = n->obj;
	if (off + len > o->size) {
		o->data = realloc(o->data, off + len);
		memset(o->data + o->size, 0, off + len - o->size);
		o->size = off + len;
	}
	memcpy(o->data + off, buf, len);
	free(buf);
}

static void op_truncate(r4_db *db, size_t maxsize)
{
	struct mname *n = pick(S_IFREG);
	size_t size;

	if (!n)
		return;
	size = rnd(3) ? rnd((unsigned)(n->obj->size + 1)) : rnd((unsigned)maxsize);
	EXPECT_OK(r4_truncate(db, n->path, size));
	struct mobj *o = n->obj;
	o->data = realloc(o->data, size + 1);
	if (size > o->size)
		memset(o->data + o->size, 0, size - o->size);
	o->size = size;
}

static void op_unlink(r4_db *db)
{
	struct mname *n = pick(0);
	bool empty = true;

	if (!n)
		return;
	if (S_ISDIR(n->obj->mode)) {
		for (size_t i = 0; i < nnames; i++)
			empty &= !is_under(names[i].path, n->path);
		if (!empty) {
			int rc = r4_rmdir(db, n->path);
			CHECK_EQ(rc, -ENOTEMPTY);
			return;
		}
		EXPECT_OK(r4_rmdir(db, n->path));
		char par[4096];
		parent_of(n->path, par);
		if (strcmp(par, "/"))
			find(par)->obj->nlink--;
	} else {
		EXPECT_OK(r4_unlink(db, n->path));
		n->obj->nlink--;
	}
	del_name(n);
}

static void op_link(r4_db *db)
{
	struct mname *n = pick(S_IFREG);
	char p[4096];

	if (!n || rnd(2))
		n = pick(S_IFLNK);
	if (!n)
		return;
	new_path(p);
	if (find(p))
		return;
	EXPECT_OK(r4_link(db, n->path, p));
	n->obj->nlink++;
	add_name(p, n->obj);
}

static void rename_prefix(const char *from, const char *to)
{
	size_t fl = strlen(from);

	for (size_t i = 0; i < nnames; i++)
		if (is_under(names[i].path, from)) {
			char buf[8192];

			snprintf(buf, sizeof(buf), "%s%s", to, names[i].path + fl);
			free(names[i].path);
			names[i].path = strdup(buf);
		}
}

static void op_rename(r4_db *db)
{
	struct mname *s = pick(0), *d;
	char to[4096], sp[4096], sparent[4096], dparent[4096];
	bool sdir;
	int rc;

	if (!s)
		return;
	if (rnd(3) == 0 && (d = pick(0)))
		snprintf(to, sizeof(to), "%s", d->path);
	else
		new_path(to);
	snprintf(sp, sizeof(sp), "%s", s->path);
	sdir = S_ISDIR(s->obj->mode);
	d = find(to);
	rc = r4_rename(db, sp, to, 0);
	/* what POSIX says must happen */
	int want = 0;
	if (!strcmp(sp, to) || (d && d->obj == s->obj))
		want = 0;
	else if (sdir && (is_under(to, sp)))
		want = -EINVAL;
	else if (d && sdir && !S_ISDIR(d->obj->mode))
		want = -ENOTDIR;
	else if (d && !sdir && S_ISDIR(d->obj->mode))
		want = -EISDIR;
	else if (d && S_ISDIR(d->obj->mode)) {
		for (size_t i = 0; i < nnames; i++)
			if (is_under(names[i].path, to))
				want = -ENOTEMPTY;
	}
	if (rc != want) {
		t_fail++;
		fprintf(stderr, "op %lu: rename %s -> %s = %d, want %d\n", op_no, sp, to, rc, want);
		return;
	}
	t_pass++;
	if (rc || !strcmp(sp, to) || (d && d->obj == s->obj))
		return;
	parent_of(sp, sparent);
	parent_of(to, dparent);
	if (d) {
		if (S_ISDIR(d->obj->mode) && strcmp(dparent, "/"))
			find(dparent)->obj->nlink--;
		if (!S_ISDIR(d->obj->mode))
			d->obj->nlink--;
		del_name(d);
		s = find(sp);
	}
	if (sdir && strcmp(sparent, dparent)) {
		if (strcmp(sparent, "/"))
			find(sparent)->obj->nlink--;
		if (strcmp(dparent, "/"))
			find(dparent)->obj->nlink++;
	}
	free(s->path);
	s->path = strdup(to);
	if (sdir)
		rename_prefix(sp, to);
}

/* ---- comparing r4 with the model ---- */

static bool paranoid, paranoid_commit, trace;
static unsigned long commits, fscked;	/* after-commit checks done */
static void check_after_commit(r4_db *db, const char *img);

struct seen {
	char **paths;
	size_t n, cap;
};

struct walk_ctx {
	r4_db *db;
	const char *dir;
	struct seen *seen;
	int rc;
};

static int compare_one(r4_db *db, const char *path)
{
	struct mname *m = find(path);
	struct r4_stat st;
	int rc;

	if (!m) {
		fprintf(stderr, "op %lu: %s exists in r4 only\n", op_no, path);
		return -1;
	}
	if ((rc = r4_stat(db, path, &st))) {
		fprintf(stderr, "op %lu: stat %s: %s\n", op_no, path, r4_strerror(rc));
		return -1;
	}
	struct mobj *o = m->obj;
	if (st.mode != o->mode || st.uid != o->uid || st.gid != o->gid ||
	    (!S_ISDIR(o->mode) && st.size != o->size) || st.nlink != o->nlink ||
	    ((S_ISCHR(o->mode) || S_ISBLK(o->mode)) && st.rdev != o->rdev)) {
		fprintf(stderr,
			"op %lu: %s: mode %o/%o uid %u/%u gid %u/%u size %llu/%zu nlink %u/%u\n",
			op_no, path, st.mode, o->mode, st.uid, o->uid, st.gid, o->gid,
			(unsigned long long)st.size, o->size, st.nlink, o->nlink);
		return -1;
	}
	if (S_ISREG(o->mode)) {
		uint8_t *buf = malloc(o->size + 1);
		size_t got = 0;

		rc = r4_read(db, path, 0, buf, o->size + 1, &got);
		if (rc || got != o->size || (o->size && memcmp(buf, o->data, o->size))) {
			fprintf(stderr, "op %lu: %s: content differs (rc %d, got %zu of %zu)\n", op_no,
				path, rc, got, o->size);
			free(buf);
			return -1;
		}
		free(buf);
	}
	if (S_ISLNK(o->mode)) {
		char buf[300];
		size_t len;

		if ((rc = r4_readlink(db, path, buf, sizeof(buf), &len)) || len != o->size ||
		    memcmp(buf, o->target, len)) {
			fprintf(stderr, "op %lu: %s: symlink differs\n", op_no, path);
			return -1;
		}
	}
	return 0;
}

static int walk_dir(r4_db *db, const char *dir, struct seen *seen);

static int walk_fn(void *ctx, const char *name, size_t len, uint64_t ino, uint32_t type)
{
	struct walk_ctx *w = ctx;
	char path[8192];

	(void)ino;
	if ((len == 1 && name[0] == '.') || (len == 2 && !memcmp(name, "..", 2)))
		return 0;
	snprintf(path, sizeof(path), "%s/%.*s", strcmp(w->dir, "/") ? w->dir : "", (int)len, name);
	if (w->seen->n == w->seen->cap) {
		w->seen->cap = w->seen->cap ? w->seen->cap * 2 : 256;
		w->seen->paths = realloc(w->seen->paths, w->seen->cap * sizeof(char *));
	}
	w->seen->paths[w->seen->n++] = strdup(path);
	if (compare_one(w->db, path)) {
		w->rc = -1;
		return 1;
	}
	if (type == S_IFDIR && walk_dir(w->db, path, w->seen)) {
		w->rc = -1;
		return 1;
	}
	return 0;
}

static int walk_dir(r4_db *db, const char *dir, struct seen *seen)
{
	struct walk_ctx w = {db, dir, seen, 0};
	struct r4_dirpos pos = {0};
	int rc = r4_readdir(db, dir, &pos, walk_fn, &w);

	if (rc) {
		fprintf(stderr, "op %lu: readdir %s: %s\n", op_no, dir, r4_strerror(rc));
		return -1;
	}
	return w.rc;
}

static void compare_all(r4_db *db)
{
	struct seen seen = {0};
	int rc = walk_dir(db, "/", &seen);

	if (!rc && seen.n != nnames) {
		fprintf(stderr, "op %lu: r4 has %zu names, the model %zu\n", op_no, seen.n, nnames);
		rc = -1;
	}
	for (size_t i = 0; i < seen.n; i++)
		free(seen.paths[i]);
	free(seen.paths);
	if (rc) {
		t_fail++;
		if (paranoid && r4_in_txn(db))
			fprintf(stderr, "commit of the broken state: %s\n", r4_strerror(r4_commit(db)));
	} else {
		t_pass++;
	}
}

/* ---- the run ---- */

/* Read path through libreiser4 (the r4p helper): 1 same as the model, 0
 * different, -1 when r4p is not built. */
static int r4p_same(const char *img, const struct mname *n)
{
	const char *b = getenv("R4_BUILD");
	char r4p[4096];
	int fd[2], st;
	pid_t pid;

	snprintf(r4p, sizeof(r4p), "%s/tests/r4p", b ? b : "build");
	if (access(r4p, X_OK) || pipe(fd))
		return -1;
	if ((pid = fork()) == 0) {
		dup2(fd[1], 1);
		close(fd[0]);
		close(fd[1]);
		execl(r4p, "r4p", "cat", img, n->path, (char *)NULL);
		_exit(127);
	}
	close(fd[1]);
	uint8_t *buf = malloc(n->obj->size + 4096);
	size_t got = 0;
	ssize_t k;

	while ((k = read(fd[0], buf + got, n->obj->size + 4096 - got)) > 0)
		got += (size_t)k;
	close(fd[0]);
	waitpid(pid, &st, 0);
	int same = WIFEXITED(st) && WEXITSTATUS(st) == 0 && got == n->obj->size &&
		   (got == 0 || !memcmp(buf, n->obj->data, got));
	if (!same)
		fprintf(stderr, "libreiser4 reads %s differently (%zu bytes of %zu)\n", n->path, got,
			n->obj->size);
	free(buf);
	return same;
}

/* A sample of the files, read through libreiser4. */
static void check_r4p(const char *img)
{
	unsigned checked = 0;

	for (size_t i = 0; i < nnames && checked < 40; i += 1 + rnd(5)) {
		int r;

		if (!S_ISREG(names[i].obj->mode))
			continue;
		if ((r = r4p_same(img, &names[i])) < 0) {
			printf("skip: libreiser4 helper r4p not built, read-back check skipped\n");
			return;
		}
		CHECK(r == 1);
		checked++;
	}
}

static void run(const char *img, unsigned long ops, size_t maxsize, bool node41)
{
	struct r4_mkfs_opts mo;
	struct r4_open_opts oo = {.rw = true, .cache_nodes = 256};
	r4_db *db = NULL;
	int rc;

	r4_mkfs_defaults(&mo);
	mo.node41 = node41;
	if (node41) {		/* the second run: other plugins, chosen by the seed */
		mo.hash = rnd(5);
		mo.fibration = rnd(4);
		printf("second image: hash %u, fibration %u, node41\n", mo.hash, mo.fibration);
	}
	CHECK_RC(r4_mkfs(img, 256ull << 20, &mo));
	CHECK_RC(rc = r4_open(img, &oo, &db));
	if (rc)
		return;
	for (op_no = 1; op_no <= ops; op_no++) {
		if (!r4_in_txn(db))
			r4_begin(db);
		unsigned k = rnd(100);
		if (trace)
			fprintf(stderr, "op %lu kind %u\n", op_no, k);
		if (k < 30)
			op_create(db);
		else if (k < 55)
			op_write(db, maxsize);
		else if (k < 62)
			op_truncate(db, maxsize);
		else if (k < 75)
			op_unlink(db);
		else if (k < 82)
			op_link(db);
		else
			op_rename(db);
		if (paranoid) {
			if (paranoid_commit && r4_in_txn(db))
				CHECK_RC(r4_commit(db));
			compare_all(db);
		}
		if ((rnd(50) == 0 || op_no == ops) && r4_in_txn(db)) {
			CHECK_RC(r4_commit(db));
			compare_all(db);
			check_after_commit(db, img);
		}
		if (rnd(500) == 0) {
			if (r4_in_txn(db))
				CHECK_RC(r4_commit(db));
			r4_close(db);
			db = NULL;
			CHECK_RC(rc = r4_open(img, &oo, &db));
			if (rc)
				return;
			compare_all(db);
		}
		if (t_fail)
			break;
	}
	if (r4_in_txn(db))
		CHECK_RC(r4_commit(db));
	r4_close(db);
	rc = t_fsck(img);
	if (rc < 0)
		printf("skip: fsck.reiser4 not installed, interop check skipped\n");
	else {
		CHECK(rc == 1);
		if (rc != 1)
			fprintf(stderr, "fsck.reiser4 --check failed on %s (see %s.fsck)\n", img, img);
	}
	check_r4p(img);
	printf("%s: %lu commits, each checked by r4 fsck, %lu by fsck.reiser4\n", img, commits,
	       fscked);
	commits = fscked = 0;
}

/* After every commit: r4's checker on the open handle, fsck.reiser4 on a
 * copy (even --check writes the status block and the super block), once
 * the handle has written the commit's footer (r4_sync): fsck.reiser4
 * 1.2.2 replays an unsettled commit right but then keeps the counters of
 * the footer it found (docs/engine.md). */
static void check_after_commit(r4_db *db, const char *img)
{
	struct r4_check_result res;
	char cmd[9000], copy[4200];
	int f;

	commits++;
	CHECK_RC(r4_check(db, NULL, &res));
	CHECK_EQ(res.problems, 0);
	CHECK_RC(r4_sync(db));
	snprintf(copy, sizeof(copy), "%s.commit", img);
	snprintf(cmd, sizeof(cmd), "cp --sparse=always '%s' '%s'", img, copy);
	if (system(cmd) || (f = t_fsck(copy)) < 0)
		return;
	fscked++;
	CHECK_EQ(f, 1);
	if (f != 1)
		fprintf(stderr, "fsck.reiser4 --check failed after commit %lu (see %s.fsck)\n",
			commits, copy);
	else
		unlink(copy);
}

int main(void)
{
	unsigned long seed = t_seed();
	const char *o = getenv("R4_OPS");
	unsigned long ops = o ? strtoul(o, NULL, 0) : 1000;
	char dir[128], img[320];

	rng = seed;
	paranoid = getenv("R4_PARANOID") != NULL;
	paranoid_commit = paranoid && !strcmp(getenv("R4_PARANOID"), "commit");
	trace = getenv("R4_TRACE") != NULL;
	snprintf(dir, sizeof(dir), "%s/r4fsXXXXXX", t_tmp());
	if (!mkdtemp(dir))
		return 1;
	snprintf(img, sizeof(img), "%s/a.img", dir);
	run(img, ops, 4u << 20, false);
	if (!t_fail) {
		while (nnames)
			del_name(&names[0]);
		snprintf(img, sizeof(img), "%s/b.img", dir);
		run(img, ops / 5, 1u << 20, true);
	}
	while (nnames)
		del_name(&names[0]);
	free(names);
	if (t_fail)
		fprintf(stderr, "failed with R4_SEED=%lu (images kept in %s)\n", seed, dir);
	else if (t_rmdir(dir))
		return 1;
	return T_DONE();
}
