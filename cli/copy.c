/*
 * copy.c - trees between the host and an image: r4 import (host -> image),
 * r4 mkfs -d (a new volume filled the same way) and r4 export (image ->
 * host, the job of debugfs's rdump), whose host writer (copy.h) also
 * writes what r4 export --salvage finds (salvage.c).
 *
 * Both ways keep the same things: contents with their holes (only the
 * data ranges SEEK_DATA / SEEK_HOLE find are copied, then the size is
 * set), modes, owners, nanosecond atime and mtime (set after a file's
 * contents and a directory's children), symlinks, special files, hard
 * links (an object met a second time becomes a link to the first copy)
 * and extended attributes.  Both show a progress line on a terminal and
 * end with one summary line (cp_summary).
 *
 * An import is one transaction: whole, or nothing changed.  An export
 * writes host files one by one: a path that fails is said and counted,
 * the others are copied, and the exit is 1 at the end.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <search.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

#include "copy.h"
#include "exit.h"
#include "sh.h"

static const char *const prog = "r4";

/* An object of several names, by its id (export: r4's object id; import:
 * the host's device and inode), and the path its first copy got. */
struct cp_seen {
	uint64_t dev, ino;
	char *path;
};

static int seen_cmp(const void *a, const void *b)
{
	const struct cp_seen *x = a, *y = b;

	return x->dev != y->dev ? (x->dev > y->dev) - (x->dev < y->dev)
				: (x->ino > y->ino) - (x->ino < y->ino);
}

static void seen_free(void *p)
{
	struct cp_seen *s = p;

	free(s->path);
	free(s);
}

/* The path the first copy of object (dev, ino) got, or NULL after
 * noting path as that copy's (then also NULL when out of memory). */
static const char *cp_seen(struct cp *c, uint64_t dev, uint64_t ino, const char *path)
{
	struct cp_seen key = {dev, ino, NULL}, *s, **at;

	if ((at = tfind(&key, &c->seen, seen_cmp)))
		return (*at)->path;
	if (!(s = malloc(sizeof(*s))) || !(s->path = strdup(path))) {
		free(s);
		return NULL;
	}
	s->dev = dev;
	s->ino = ino;
	if (!tsearch(s, &c->seen, seen_cmp))
		seen_free(s);
	return NULL;
}

static double since(const struct timespec *a, const struct timespec *b)
{
	return (double)(b->tv_sec - a->tv_sec) + (double)(b->tv_nsec - a->tv_nsec) / 1e9;
}

void cp_clear_bar(struct cp *c)
{
	if (c->barred)
		fputs("\r\033[K", stderr);
	c->barred = false;
}

void cp_tick(struct cp *c, const char *path)
{
	struct timespec now;
	size_t n;

	if (!c->bar)
		return;
	clock_gettime(CLOCK_MONOTONIC, &now);
	if (c->barred && since(&c->shown, &now) < 0.2)
		return;
	c->shown = now;
	n = strlen(path);	/* (its last 40 bytes) */
	fprintf(stderr, "\r\033[K%s %llu files, %llu directories, %llu bytes: %s%s", c->verb,
		(unsigned long long)c->files, (unsigned long long)c->dirs,
		(unsigned long long)c->bytes, n > 40 ? "..." : "", path + (n > 40 ? n - 37 : 0));
	c->barred = true;
}

void cp_fail(struct cp *c, const char *path, int rc)
{
	cp_clear_bar(c);
	fprintf(stderr, "%s: export '%s': %s\n", prog, path, r4_strerror(rc));
	c->failed++;
}

static void count(FILE *f, uint64_t n, const char *one, const char *many, const char *sep)
{
	fprintf(f, "%llu %s%s", (unsigned long long)n, n == 1 ? one : many, sep);
}

void cp_summary(struct cp *c, const char *tail)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	cp_clear_bar(c);
	printf("%s ", c->verb);
	count(stdout, c->files, "file", "files", ", ");
	count(stdout, c->dirs, "directory", "directories", ", ");
	count(stdout, c->symlinks, "symlink", "symlinks", ", ");
	count(stdout, c->specials, "special file", "special files", ", ");
	count(stdout, c->links, "hard link", "hard links", ": ");
	count(stdout, c->bytes, "byte", "bytes", "");
	printf(" in %.2f s", since(&c->t0, &now));
	if (c->failed)
		printf("; %llu failed", (unsigned long long)c->failed);
	printf("%s%s\n", tail ? "; " : "", tail ? tail : "");
	fflush(stdout);
}

void cp_start(struct cp *c, const char *verb)
{
	memset(c, 0, sizeof(*c));
	c->verb = verb;
	c->bar = isatty(STDERR_FILENO);
	clock_gettime(CLOCK_MONOTONIC, &c->t0);
}

void cp_end(struct cp *c)
{
	tdestroy(c->seen, seen_free);
	c->seen = NULL;
	free(c->dest);
	free(c->skip);
	free(c->open);
	c->dest = c->skip = NULL;
	c->open = NULL;
}

/* dir + "/" + name into buf (n bytes): 0 or -ENAMETOOLONG. */
static int join(char *buf, size_t n, const char *dir, const char *name)
{
	int k = snprintf(buf, n, "%s/%s", strcmp(dir, "/") ? dir : "", name);

	return k < 0 || (size_t)k >= n ? -ENAMETOOLONG : 0;
}

static char buf[1 << 20];	/* the bytes on their way */

/* ---------------------------------------------------------------- import */

/* A host file or directory opened without touching its atime where the
 * host allows (the owner's, or root's), else as it can. */
static int open_src(const char *path, int flags)
{
	int fd = open(path, flags | O_RDONLY | O_NOATIME | O_CLOEXEC);

	if (fd < 0 && errno == EPERM)
		fd = open(path, flags | O_RDONLY | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

/*
 * The extended attributes of host object src onto dst, which import just
 * made: each through r4_file_setxattr, so r4 keeps what it keeps on the
 * mount (docs/semantics.md).  A name r4 cannot store (-EOPNOTSUPP: a
 * namespace other than user., trusted., security. and the POSIX ACLs) is
 * said and left out; any other refusal fails the import.
 */
static int import_xattrs(struct cp *c, const char *src, const char *dst)
{
	static char names[R4_XATTR_LIST_MAX], value[R4_XATTR_SIZE_MAX];
	ssize_t n = llistxattr(src, names, sizeof(names));
	r4_file *f;
	int rc;

	if (n <= 0)
		return n < 0 && errno != ENOTSUP ? -errno : 0;
	if ((rc = r4_file_open(c->db, dst, &f)))
		return rc;
	for (const char *name = names; name < names + n && !rc; name += strlen(name) + 1) {
		ssize_t len = lgetxattr(src, name, value, sizeof(value));

		if (len < 0) {
			rc = errno == ENODATA ? 0 : -errno;	/* (gone meanwhile) */
		} else if ((rc = r4_file_setxattr(f, name, value, (size_t)len, 0)) == -EOPNOTSUPP) {
			cp_clear_bar(c);
			fprintf(stderr, "%s: %s: attribute '%s' not kept: %s\n", prog, src, name,
				r4_strerror(rc));
			rc = 0;
		}
	}
	r4_file_close(f);
	return rc;
}

/* The data ranges of host file fd (size bytes) into the new file dst,
 * then its size: holes stay holes. */
static int import_body(struct cp *c, int fd, const char *dst, uint64_t size)
{
	off_t at = 0, end;
	r4_file *f;
	int rc;

	if ((rc = r4_file_open(c->db, dst, &f)))
		return rc;
	while (!rc && (uint64_t)at < size) {
		off_t data = lseek(fd, at, SEEK_DATA);

		if (data < 0 && errno == ENXIO)
			break;				/* a hole to the end */
		if (data < 0 && errno == EINVAL) {	/* (no SEEK_DATA here: all data) */
			data = at;
			end = (off_t)size;
		} else if (data < 0 || (end = lseek(fd, data, SEEK_HOLE)) < 0) {
			rc = -errno;
			break;
		}
		for (at = data; !rc && at < end;) {
			size_t want = (uint64_t)(end - at) < sizeof(buf) ? (size_t)(end - at)
									 : sizeof(buf);
			ssize_t got = pread(fd, buf, want, at);

			if (got <= 0) {
				rc = got < 0 ? -errno : 0;
				end = at;		/* (it shrank meanwhile) */
				break;
			}
			rc = r4_file_write(f, (uint64_t)at, buf, (size_t)got);
			at += got;
			c->bytes += (uint64_t)got;
			cp_tick(c, dst);
		}
	}
	if (!rc) {
		struct r4_setattr sa = {.mask = R4_SET_SIZE, .size = size};

		rc = r4_file_setattr(f, &sa);
	}
	r4_file_close(f);
	return rc;
}

/* What import sets last: the permission bits (after whatever a write or
 * an attribute did to them) and the times. */
static int import_attrs(struct cp *c, const struct stat *st, const char *dst)
{
	struct r4_setattr sa = {
		.mask = R4_SET_ATIME | R4_SET_MTIME | (S_ISLNK(st->st_mode) ? 0 : R4_SET_MODE),
		.mode = st->st_mode & 07777, .atime = st->st_atim, .mtime = st->st_mtim,
	};

	return r4_setattr(c->db, dst, &sa);
}

static int import_tree(struct cp *c, const char *src, const char *dst);

/* The children of host directory src into dst. */
static int import_children(struct cp *c, const char *src, const char *dst)
{
	int rc, fd = open_src(src, O_DIRECTORY);
	struct dirent *de;
	DIR *d;

	if (fd < 0)
		return fd;
	if (!(d = fdopendir(fd))) {
		rc = -errno;
		close(fd);
		return rc;
	}
	rc = 0;
	while (!rc && (errno = 0, de = readdir(d))) {
		char s2[PATH_MAX], d2[PATH_MAX];

		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (!(rc = join(s2, sizeof(s2), src, de->d_name)) &&
		    !(rc = join(d2, sizeof(d2), dst, de->d_name)))
			rc = import_tree(c, s2, d2);
	}
	if (!rc && errno)
		rc = -errno;
	closedir(d);
	return rc;
}

/*
 * Copy host path src (of any type) to image path dst, with what r4 keeps
 * of it.  A directory that exists already is copied into (it takes src's
 * attributes, as cp -a SRC/. DEST gives DEST those of SRC); any other
 * name that exists is -EEXIST.
 */
static int import_one(struct cp *c, const char *src, const char *dst)
{
	struct stat st;
	const char *first;
	int rc, fd;

	if (lstat(src, &st) < 0)
		return -errno;
	cp_tick(c, dst);
	if (S_ISDIR(st.st_mode)) {
		/* ("/" is there always) */
		rc = strcmp(dst, "/") ? r4_mkdir(c->db, dst, st.st_mode & 07777, st.st_uid,
						 st.st_gid) : -EEXIST;
		if (rc == -EEXIST) {
			struct r4_setattr sa = {.mask = R4_SET_UID | R4_SET_GID, .uid = st.st_uid,
						.gid = st.st_gid};

			rc = r4_setattr(c->db, dst, &sa);
		}
		if (rc || (rc = import_xattrs(c, src, dst)) || (rc = import_children(c, src, dst)))
			return rc;
		c->dirs++;
		return import_attrs(c, &st, dst);
	}
	if (st.st_nlink > 1 && (first = cp_seen(c, st.st_dev, st.st_ino, dst))) {
		if ((rc = r4_link(c->db, first, dst)))
			return rc;
		c->links++;
		return 0;
	}
	if (S_ISLNK(st.st_mode)) {
		char t[PATH_MAX];
		ssize_t n = readlink(src, t, sizeof(t) - 1);

		if (n < 0)
			return -errno;
		t[n] = 0;
		rc = r4_symlink(c->db, t, dst, st.st_uid, st.st_gid);
		c->symlinks++;
	} else if (!S_ISREG(st.st_mode)) {
		rc = r4_mknod(c->db, dst, st.st_mode, st.st_rdev, st.st_uid, st.st_gid);
		c->specials++;
	} else if ((fd = open_src(src, 0)) < 0) {
		return fd;
	} else {
		if (!(rc = r4_create(c->db, dst, st.st_mode & 07777, st.st_uid, st.st_gid)))
			rc = import_body(c, fd, dst, (uint64_t)st.st_size);
		close(fd);
		c->files++;
	}
	if (rc || (rc = import_xattrs(c, src, dst)))
		return rc;
	return import_attrs(c, &st, dst);
}

/* import_one, and the failing path (the deepest) into c->where. */
static int import_tree(struct cp *c, const char *src, const char *dst)
{
	int rc = import_one(c, src, dst);

	if (rc && !c->where[0])
		snprintf(c->where, sizeof(c->where), "%s", src);
	return rc;
}

/* mkdir -p of dst's parents. */
static int make_parents(r4_db *db, const char *dst)
{
	char p[PATH_MAX];
	int rc;

	snprintf(p, sizeof(p), "%s", dst);
	for (char *s = p + 1; (s = strchr(s, '/')); s++) {
		*s = 0;
		if ((rc = r4_mkdir(db, p, 0755, 0, 0)) && rc != -EEXIST)
			return rc;
		*s = '/';
	}
	return 0;
}

/* Host tree src into dst of image (a path), in one transaction; the
 * summary, or the failure and what it left ("nothing was changed").
 * 0 or -errno (said). */
static int import_into(const char *image, const char *src, const char *dst,
		       const struct r4_open_opts *base, const char *left)
{
	struct r4_open_opts oo = *base;
	struct cp c;
	int rc;

	cp_start(&c, "imported");
	oo.rw = true;
	if ((rc = r4_open(image, &oo, &c.db))) {
		if (rc == -EBUSY)
			sh_say_busy(prog, image, NULL);
		else
			fprintf(stderr, "%s: cannot open image '%s': %s\n", prog, image,
				r4_strerror(rc));
		return rc;
	}
	if (!(rc = r4_begin(c.db)) && !(rc = make_parents(c.db, dst)) &&
	    !(rc = import_tree(&c, src, dst)))
		rc = r4_commit(c.db);
	cp_end(&c);
	if (rc) {
		cp_clear_bar(&c);
		fprintf(stderr, "%s: cannot import '%s': %s (%s)\n", prog,
			c.where[0] ? c.where : src, r4_strerror(rc), left);
	}
	r4_close(c.db);
	if (!rc)
		cp_summary(&c, NULL);
	return rc;
}

int cp_import(int argc, char **argv, const struct r4_open_opts *base)
{
	if (argc < 3 || argc > 4)
		return -EINVAL;
	if (argc > 3 && argv[3][0] != '/') {
		fprintf(stderr, "%s: import: '%s': a path in the volume starts with '/'\n", prog,
			argv[3]);
		return R4_EXIT_USAGE;
	}
	return import_into(argv[1], argv[2], argc > 3 ? argv[3] : "/", base,
			   "nothing was changed") ? R4_EXIT_FAIL : R4_EXIT_OK;
}

int cp_mkfs_fill(const char *image, const char *dir, const struct r4_open_opts *base)
{
	return import_into(image, dir, "/", base, "the new volume stays empty");
}

/* ------------------------------------------------------- the host writer */

/* A directory the walk is inside: its attributes wait until it leaves. */
struct cp_dir {
	struct cp_obj o;		/* o.path its own copy */
	char *host;
};

/* Whether volume path p is under directory d (or d itself). */
static bool under(const char *p, const char *d)
{
	size_t n = strlen(d);

	return !strcmp(d, "/") || (!strncmp(p, d, n) && (p[n] == '/' || !p[n]));
}

/* The host path of volume path p, under PATH: NULL when out of memory. */
static char *host_of(const struct cp *c, const char *p)
{
	char *h;

	return asprintf(&h, "%s%s", c->dest, p + (strcmp(c->top, "/") ? strlen(c->top) : 0)) < 0
		       ? NULL : h;
}

int cp_dest(struct cp *c, const char *top, uint32_t mode, const char *dest)
{
	struct stat hs;
	const char *name;
	size_t end = strlen(top);
	int rc;

	/* (a directory PATH's mode comes last, so 0700 until then) */
	if (mkdir(dest, S_ISDIR(mode) ? 0700 : 0777) < 0 &&
	    (rc = errno != EEXIST ? errno : stat(dest, &hs) < 0 ? errno
					    : S_ISDIR(hs.st_mode) ? 0 : ENOTDIR)) {
		fprintf(stderr, "%s: export: cannot make '%s': %s\n", prog, dest, strerror(rc));
		return -rc;
	}
	c->top = top;
	if (S_ISDIR(mode))
		return (c->dest = strdup(dest)) ? 0 : -ENOMEM;
	while (end > 1 && top[end - 1] == '/')
		end--;
	for (name = top + end; name > top && name[-1] != '/'; name--)
		;
	return asprintf(&c->dest, "%s/%.*s", dest, (int)(top + end - name), name) < 0 ? -ENOMEM
											: 0;
}

struct put_ctx {
	struct cp *c;
	const char *host;
	int fd;
};

/* One attribute onto the copy; one the host refuses is said and left out. */
static int put_xattr(void *ctx, const char *name, const void *value, size_t len)
{
	struct put_ctx *p = ctx;

	if ((p->fd >= 0 ? fsetxattr(p->fd, name, value, len, 0)
			: lsetxattr(p->host, name, value, len, 0)) < 0) {
		cp_clear_bar(p->c);
		fprintf(stderr, "%s: export '%s': attribute '%s' not kept: %s\n", prog, p->host,
			name, strerror(errno));
	}
	return 0;
}

/* Owner, attributes, permission bits and times of the host copy (fd
 * open on it, or -1): chown first (it clears set-id bits and
 * capabilities), the mode after the attributes (an ACL moves it). */
static int put_attrs(struct cp *c, const struct cp_obj *o, const char *host, int fd)
{
	struct timespec ts[2] = {o->st.atime, o->st.mtime};
	struct put_ctx p = {c, host, fd};
	int rc;

	if (c->owners && (fd >= 0 ? fchown(fd, o->st.uid, o->st.gid)
				  : lchown(host, o->st.uid, o->st.gid)) < 0)
		return -errno;
	if ((rc = c->src->xattrs(c->src->ctx, o, put_xattr, &p)))
		return rc;
	if (!S_ISLNK(o->st.mode) && (fd >= 0 ? fchmod(fd, o->st.mode & 07777)
					     : chmod(host, o->st.mode & 07777)) < 0)
		return -errno;
	if ((fd >= 0 ? futimens(fd, ts) : utimensat(AT_FDCWD, host, ts, AT_SYMLINK_NOFOLLOW)) < 0)
		return -errno;
	return 0;
}

/* The data ranges of o's body into host file fd, then its size. */
static int put_body(struct cp *c, const struct cp_obj *o, int fd)
{
	const struct cp_src *s = c->src;
	uint64_t at = 0, data, end;
	size_t got;
	int rc = 0;

	while (at < o->st.size) {
		if ((rc = s->seek(s->ctx, o, at, &data, &end)) == -ENXIO) {
			rc = 0;
			break;				/* a hole to the end */
		}
		if (rc)
			return rc;
		for (at = data; at < end; at += got) {
			size_t want = end - at < sizeof(buf) ? (size_t)(end - at) : sizeof(buf);

			if ((rc = s->read(s->ctx, o, at, buf, want, &got)))
				return rc;
			if (!got) {
				end = at;
				break;
			}
			for (size_t done = 0; done < got;) {
				ssize_t w = pwrite(fd, buf + done, got - done, (off_t)(at + done));

				if (w < 0)
					return -errno;
				done += (size_t)w;
			}
			c->bytes += got;
			cp_tick(c, o->path);
		}
	}
	return ftruncate(fd, (off_t)o->st.size) < 0 ? -errno : 0;
}

/* The directory the walk leaves: its attributes. */
static void leave(struct cp *c)
{
	struct cp_dir *d = &c->open[--c->nopen];
	int rc = put_attrs(c, &d->o, d->host, -1);

	if (rc)
		cp_fail(c, d->o.path, rc);
	free((char *)d->o.path);
	free(d->host);
}

void cp_done(struct cp *c)
{
	while (c->nopen)
		leave(c);
}

/* A directory: made (0700 while its children are written), or one there
 * already copied into; its attributes when the walk leaves it. */
static int put_dir(struct cp *c, const struct cp_obj *o, char *host)
{
	struct cp_dir *d;
	struct stat hs;
	int rc;

	if (mkdir(host, 0700) < 0 && (errno != EEXIST || stat(host, &hs) < 0 ||
				      !S_ISDIR(hs.st_mode)))
		return -errno;
	if ((rc = r4_grow(&c->open, &c->capopen, c->nopen + 1, sizeof(*c->open), 16)))
		return rc;
	d = &c->open[c->nopen];
	d->o = *o;
	if (!(d->o.path = strdup(o->path)))
		return -ENOMEM;
	d->host = host;
	c->nopen++;
	c->dirs++;
	return 0;
}

static int put_node(struct cp *c, const struct cp_obj *o, char *host)
{
	const char *first;
	int rc = 0, fd = -1;

	if (S_ISDIR(o->st.mode))
		return put_dir(c, o, host);
	if ((o->again || o->st.nlink > 1) && (first = cp_seen(c, 0, o->st.ino, host))) {
		rc = link(first, host) < 0 ? -errno : 0;
		c->links += !rc;
		goto out;
	}
	if (S_ISLNK(o->st.mode)) {
		rc = symlink(o->target ? o->target : "", host) < 0 ? -errno : 0;
		c->symlinks += !rc;
	} else if (S_ISREG(o->st.mode)) {
		if ((fd = open(host, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600)) < 0)
			rc = -errno;
		else
			rc = put_body(c, o, fd);
		c->files += !rc;
	} else {
		rc = mknod(host, o->st.mode & (S_IFMT | 0600), (dev_t)o->st.rdev) < 0 ? -errno : 0;
		c->specials += !rc;
	}
	if (!rc)
		rc = put_attrs(c, o, host, fd);
	if (fd >= 0 && close(fd) < 0 && !rc)
		rc = -errno;
out:
	free(host);
	return rc;
}

int cp_put(struct cp *c, const struct cp_obj *o)
{
	char *host;
	int rc;

	while (c->nopen && !under(o->path, c->open[c->nopen - 1].o.path))
		leave(c);
	if (c->skip && under(o->path, c->skip))
		return 0;
	cp_tick(c, o->path);
	if (!(host = host_of(c, o->path)))
		rc = -ENOMEM;
	else if ((rc = put_node(c, o, host)) && S_ISDIR(o->st.mode))
		free(host);
	if (rc) {
		cp_fail(c, o->path, rc);
		if (S_ISDIR(o->st.mode)) {
			free(c->skip);
			c->skip = strdup(o->path);
		}
	}
	return rc;
}

/* ------------------------------------------- export: the image's tree */

/* The source over an open image: the file the walk is at. */
struct tree {
	r4_db *db;
	r4_file *f;			/* o's, opened for its body and attributes */
	bool pseudo;
};

static int tree_seek(void *ctx, const struct cp_obj *o, uint64_t off, uint64_t *data,
		     uint64_t *end)
{
	struct tree *t = ctx;
	int rc;

	(void)o;
	if ((rc = r4_file_seek(t->f, off, SEEK_DATA, data)))
		return rc;
	return r4_file_seek(t->f, *data, SEEK_HOLE, end);
}

static int tree_read(void *ctx, const struct cp_obj *o, uint64_t off, void *to, size_t len,
		     size_t *got)
{
	(void)o;
	return r4_file_read(((struct tree *)ctx)->f, off, to, len, got);
}

/* The extended attributes; with --pseudo, r4's pseudo attributes too
 * (user.* attributes are for files and directories alone, on Linux). */
static int tree_xattrs(void *ctx, const struct cp_obj *o, cp_xattr_fn *fn, void *fn_ctx)
{
	static const char *const pseudo[] = {"oid", "key", "plugin"};
	static char names[R4_XATTR_LIST_MAX], value[R4_XATTR_SIZE_MAX];
	struct tree *t = ctx;
	size_t n, len;
	r4_file *f;
	int rc;

	if ((rc = r4_file_open(t->db, o->path, &f)))
		return rc;
	rc = r4_file_listxattr(f, names, sizeof(names), &n);
	for (const char *name = names; !rc && name < names + n; name += strlen(name) + 1)
		if (!(rc = r4_file_getxattr(f, name, value, sizeof(value), &len)))
			rc = fn(fn_ctx, name, value, len);
	r4_file_close(f);
	if (rc || !t->pseudo || !(S_ISREG(o->st.mode) || S_ISDIR(o->st.mode)))
		return rc;
	for (size_t i = 0; !rc && i < sizeof(pseudo) / sizeof(pseudo[0]); i++) {
		char dots[16], xname[32], *text = NULL;

		snprintf(dots, sizeof(dots), "..%s", pseudo[i]);
		snprintf(xname, sizeof(xname), "user.r4.%s", pseudo[i]);
		if (!(rc = r4_pseudo_read(t->db, o->path, r4_pseudo_lookup(dots, strlen(dots))->id,
					  NULL, &text, &len, NULL)))
			rc = fn(fn_ctx, xname, text, len);
		r4_free(text);
	}
	return rc;
}

/* Image path p and what is below it, through the writer; a failure is
 * said and counted there. */
static void tree_walk(struct cp *c, struct tree *t, const char *p)
{
	struct cp_obj o = {.path = p};
	char target[R4_SYMLINK_MAX + 1];
	struct r4_dirpos pos = {0};
	struct sh_names l = {0};
	size_t n;
	int rc;

	if ((rc = r4_stat(t->db, p, &o.st)) ||
	    (S_ISLNK(o.st.mode) && (rc = r4_readlink(t->db, p, target, sizeof(target) - 1, &n))) ||
	    (S_ISREG(o.st.mode) && (rc = r4_file_open(t->db, p, &t->f)))) {
		cp_fail(c, p, rc);
		return;
	}
	if (S_ISLNK(o.st.mode)) {
		target[n < sizeof(target) - 1 ? n : sizeof(target) - 1] = 0;
		o.target = target;
	}
	rc = cp_put(c, &o);
	if (t->f)
		r4_file_close(t->f);
	t->f = NULL;
	if (rc || !S_ISDIR(o.st.mode))
		return;
	if ((rc = r4_readdir(t->db, p, &pos, sh_names_add, &l)))
		cp_fail(c, p, rc);
	for (size_t i = 0; !rc && i < l.n; i++) {
		char child[PATH_MAX];

		if (join(child, sizeof(child), p, l.v[i]))
			cp_fail(c, p, -ENAMETOOLONG);
		else
			tree_walk(c, t, child);
	}
	sh_names_free(&l);
}

static const struct cp_src tree_src = {tree_seek, tree_read, tree_xattrs, NULL};

/*
 * r4 export [-p] [--pseudo] IMAGE [PATH] DEST, and with --salvage [--list]
 * (salvage.c): PATH's subtree (default /) into host directory DEST, made
 * if missing (cp_dest).  The image opens read-only, so beside a writer
 * too: then its last committed state is what comes out.
 */
int cp_export(int argc, char **argv, const struct r4_open_opts *base)
{
	static const struct option lopts[] = {
		{"owners", no_argument, NULL, 'p'}, {"pseudo", no_argument, NULL, 'P'},
		{"salvage", no_argument, NULL, 'S'}, {"list", no_argument, NULL, 'l'},
		{NULL, 0, NULL, 0}};
	struct r4_open_opts oo = *base;
	const char *image, *path, *dest;
	bool salvage = false, list = false;
	struct r4_holder h;
	struct cp_src src = tree_src;
	struct tree t = {0};
	struct r4_stat st;
	struct cp c;
	int opt, rc;

	cp_start(&c, "exported");
	c.owners = geteuid() == 0;
	while ((opt = getopt_long(argc, argv, "p", lopts, NULL)) != -1) {
		if (opt == 'p')
			c.owners = true;
		else if (opt == 'P')
			c.pseudo = true;
		else if (opt == 'S')
			salvage = true;
		else if (opt == 'l')
			list = true;
		else
			return -EINVAL;
	}
	if (argc - optind < 2 - list || argc - optind > 3 - list || (list && !salvage))
		return -EINVAL;
	if (salvage && c.pseudo) {
		fprintf(stderr, "%s: export --salvage: no --pseudo: a damaged volume's keys and "
			"plugins are not vouched for\n", prog);
		return R4_EXIT_USAGE;
	}
	image = argv[optind];
	path = argc - optind == 3 - list ? argv[optind + 1] : "/";
	dest = list ? NULL : argv[argc - 1];
	if (path[0] != '/') {
		fprintf(stderr, "%s: export: '%s': a path in the volume starts with '/'\n", prog,
			path);
		return R4_EXIT_USAGE;
	}
	if (!r4_holder_find(image, &h) && h.held)
		fprintf(stderr, "%s: %s: %s; %s its last committed state\n", prog, image, h.what,
			salvage ? "salvaging" : "exporting");
	if (!c.owners && !list)
		fprintf(stderr, "%s: export: not run as root: the copies belong to you "
			"(-p keeps the owners where the host allows)\n", prog);
	if (salvage) {
		c.verb = "salvaged";
		return cp_salvage(&c, image, path, dest, base);
	}
	if ((rc = r4_open(image, &oo, &t.db))) {
		fprintf(stderr, "%s: cannot open image '%s': %s\n", prog, image, r4_strerror(rc));
		return R4_EXIT_FAIL;
	}
	t.pseudo = c.pseudo;
	src.ctx = &t;
	c.src = &src;
	if ((rc = r4_stat(t.db, path, &st)))
		fprintf(stderr, "%s: export '%s': %s\n", prog, path, r4_strerror(rc));
	else if (!(rc = cp_dest(&c, path, st.mode, dest)))
		tree_walk(&c, &t, path);
	cp_done(&c);
	r4_close(t.db);
	if (!rc)
		cp_summary(&c, NULL);
	cp_end(&c);
	return rc || c.failed ? R4_EXIT_FAIL : R4_EXIT_OK;
}
