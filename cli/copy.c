/*
 * copy.c - trees between the host and an image: r4 import (host -> image),
 * r4 mkfs -d (a new volume filled the same way) and r4 export (image ->
 * host, the job of debugfs's rdump).
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

#include "exit.h"
#include "sh.h"
#include "r4.h"

static const char *const prog = "r4";

/* One run of a copy: what it counted, the progress line, the objects
 * of several names met so far. */
struct cp {
	const char *verb;		/* "imported", "exported" */
	r4_db *db;
	uint64_t files, dirs, symlinks, specials, links, bytes, failed;
	struct timespec t0, shown;
	bool bar;			/* stderr is a terminal: the progress line */
	bool barred;			/* ... and one is on the screen */
	/* export: */
	bool owners;			/* chown what is made (root, or -p) */
	bool pseudo;			/* r4's pseudo attributes as user.r4.NAME */
	void *seen;			/* tsearch tree of struct cp_seen */
	char where[PATH_MAX];		/* import: the host path that failed */
};

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

static void cp_clear_bar(struct cp *c)
{
	if (c->barred)
		fputs("\r\033[K", stderr);
	c->barred = false;
}

/* The progress line, at most five times a second, on a terminal only
 * (the path's last 40 bytes). */
static void cp_tick(struct cp *c, const char *path)
{
	struct timespec now;
	size_t n;

	if (!c->bar)
		return;
	clock_gettime(CLOCK_MONOTONIC, &now);
	if (c->barred && since(&c->shown, &now) < 0.2)
		return;
	c->shown = now;
	n = strlen(path);
	fprintf(stderr, "\r\033[K%s %llu files, %llu directories, %llu bytes: %s%s", c->verb,
		(unsigned long long)c->files, (unsigned long long)c->dirs,
		(unsigned long long)c->bytes, n > 40 ? "..." : "", path + (n > 40 ? n - 37 : 0));
	c->barred = true;
}

/* An export's failure at image path path: said below the progress
 * line, counted. */
static void export_fail(struct cp *c, const char *path, int rc)
{
	cp_clear_bar(c);
	fprintf(stderr, "%s: export '%s': %s\n", prog, path, r4_strerror(rc));
	c->failed++;
}

static void count(FILE *f, uint64_t n, const char *one, const char *many, const char *sep)
{
	fprintf(f, "%llu %s%s", (unsigned long long)n, n == 1 ? one : many, sep);
}

/* The one closing line of a copy, on stdout:
 * "exported 3 files, 2 directories, 1 symlink, 0 special files,
 * 1 hard link: 4096 bytes in 0.01 s[; 1 failed]". */
static void cp_summary(struct cp *c)
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
	printf("\n");
	fflush(stdout);
}

static void cp_start(struct cp *c, const char *verb)
{
	memset(c, 0, sizeof(*c));
	c->verb = verb;
	c->bar = isatty(STDERR_FILENO);
	clock_gettime(CLOCK_MONOTONIC, &c->t0);
}

static void cp_end(struct cp *c)
{
	tdestroy(c->seen, seen_free);
	c->seen = NULL;
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
		cp_summary(&c);
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

/* ---------------------------------------------------------------- export */

/* The extended attributes of image path src onto host path dst (which
 * fd has open, or -1); with --pseudo, r4's pseudo attributes too. */
static int export_xattrs(struct cp *c, const char *src, const char *dst, int fd, uint32_t mode)
{
	static const char *const pseudo[] = {"oid", "key", "plugin"};
	static char names[R4_XATTR_LIST_MAX], value[R4_XATTR_SIZE_MAX];
	size_t n, len;
	r4_file *f;
	int rc;

	if ((rc = r4_file_open(c->db, src, &f)))
		return rc;
	rc = r4_file_listxattr(f, names, sizeof(names), &n);
	for (const char *name = names; !rc && name < names + n; name += strlen(name) + 1) {
		if ((rc = r4_file_getxattr(f, name, value, sizeof(value), &len)))
			break;
		if ((fd >= 0 ? fsetxattr(fd, name, value, len, 0)
			     : lsetxattr(dst, name, value, len, 0)) < 0) {
			cp_clear_bar(c);
			fprintf(stderr, "%s: export '%s': attribute '%s' not kept: %s\n", prog, dst,
				name, strerror(errno));
		}
	}
	r4_file_close(f);
	/* (user.* attributes are for files and directories alone, on Linux) */
	if (rc || !c->pseudo || !(S_ISREG(mode) || S_ISDIR(mode)))
		return rc;
	for (size_t i = 0; !rc && i < sizeof(pseudo) / sizeof(pseudo[0]); i++) {
		char dots[16], xname[32], *text = NULL;
		const struct r4_pseudo_info *ps;

		snprintf(dots, sizeof(dots), "..%s", pseudo[i]);
		snprintf(xname, sizeof(xname), "user.r4.%s", pseudo[i]);
		ps = r4_pseudo_lookup(dots, strlen(dots));
		if (!(rc = r4_pseudo_read(c->db, src, ps->id, NULL, &text, &len, NULL)) &&
		    lsetxattr(dst, xname, text, len, 0) < 0)
			rc = -errno;
		r4_free(text);
	}
	return rc;
}

/* The data ranges of image file src into host file fd, then its size. */
static int export_body(struct cp *c, const char *src, int fd, uint64_t size)
{
	uint64_t at = 0, data, end;
	size_t got;
	r4_file *f;
	int rc;

	if ((rc = r4_file_open(c->db, src, &f)))
		return rc;
	while (!rc && at < size) {
		if ((rc = r4_file_seek(f, at, SEEK_DATA, &data)) == -ENXIO) {
			rc = 0;
			break;				/* a hole to the end */
		}
		if (rc || (rc = r4_file_seek(f, data, SEEK_HOLE, &end)))
			break;
		for (at = data; !rc && at < end; at += got) {
			size_t want = end - at < sizeof(buf) ? (size_t)(end - at) : sizeof(buf);

			if ((rc = r4_file_read(f, at, buf, want, &got)))
				break;
			if (!got) {
				end = at;
				break;
			}
			for (size_t done = 0; done < got;) {
				ssize_t w = pwrite(fd, buf + done, got - done, (off_t)(at + done));

				if (w < 0) {
					rc = -errno;
					break;
				}
				done += (size_t)w;
			}
			c->bytes += got;
			cp_tick(c, src);
		}
	}
	r4_file_close(f);
	if (!rc && ftruncate(fd, (off_t)size) < 0)
		rc = -errno;
	return rc;
}

/* Owner, attributes, permission bits and times of the host copy dst (fd
 * open on it, or -1) from st: chown first (it clears set-id bits and
 * capabilities), the mode after the attributes (an ACL moves it). */
static int export_attrs(struct cp *c, const char *src, const char *dst, int fd,
			const struct r4_stat *st)
{
	struct timespec ts[2] = {st->atime, st->mtime};
	int rc;

	if (c->owners && (fd >= 0 ? fchown(fd, st->uid, st->gid)
				  : lchown(dst, st->uid, st->gid)) < 0)
		return -errno;
	if ((rc = export_xattrs(c, src, dst, fd, st->mode)))
		return rc;
	if (!S_ISLNK(st->mode) && (fd >= 0 ? fchmod(fd, st->mode & 07777)
					   : chmod(dst, st->mode & 07777)) < 0)
		return -errno;
	if ((fd >= 0 ? futimens(fd, ts) : utimensat(AT_FDCWD, dst, ts, AT_SYMLINK_NOFOLLOW)) < 0)
		return -errno;
	return 0;
}

struct names {
	char **v;
	size_t n, cap;
};

static int collect(void *ctx, const char *name, size_t len, uint64_t ino, uint32_t type)
{
	struct names *l = ctx;

	(void)ino;
	(void)type;
	if ((len == 1 && name[0] == '.') || (len == 2 && !memcmp(name, "..", 2)))
		return 0;
	if (r4_grow(&l->v, &l->cap, l->n + 1, sizeof(*l->v), 32) ||
	    !(l->v[l->n] = r4_memdup(name, len)))
		return -ENOMEM;
	l->n++;
	return 0;
}

static void export_tree(struct cp *c, const char *src, const char *dst);

/* The children of image directory src into host directory dst; 0, or
 * the listing's error (the children's are said and counted). */
static int export_children(struct cp *c, const char *src, const char *dst)
{
	struct r4_dirpos pos = {0};
	struct names l = {0};
	int rc = r4_readdir(c->db, src, &pos, collect, &l);

	for (size_t i = 0; i < l.n; i++) {
		char s2[PATH_MAX], d2[PATH_MAX];

		if (!rc && (join(s2, sizeof(s2), src, l.v[i]) || join(d2, sizeof(d2), dst, l.v[i])))
			export_fail(c, src, -ENAMETOOLONG);
		else if (!rc)
			export_tree(c, s2, d2);
		r4_free(l.v[i]);
	}
	r4_free(l.v);
	return rc;
}

/* Image path src to host path dst: a directory into one that exists
 * already too, anything else to a name that does not.  A failure is
 * said (the image path and why) and counted. */
static void export_tree(struct cp *c, const char *src, const char *dst)
{
	const char *first;
	struct r4_stat st;
	int rc, fd = -1;

	cp_tick(c, src);
	if ((rc = r4_stat(c->db, src, &st)))
		goto out;
	if (S_ISDIR(st.mode)) {
		struct stat hs;

		/* (0700 while its children are written: a 0555 one too) */
		if (mkdir(dst, 0700) < 0) {
			rc = -errno;
			if (rc != -EEXIST || stat(dst, &hs) < 0 || !S_ISDIR(hs.st_mode))
				goto out;
			rc = 0;
		}
		c->dirs++;
		if (!(rc = export_children(c, src, dst)))
			rc = export_attrs(c, src, dst, -1, &st);
		goto out;
	}
	if (st.nlink > 1 && (first = cp_seen(c, 0, st.ino, dst))) {
		if (link(first, dst) < 0)
			rc = -errno;
		else
			c->links++;
		goto out;
	}
	if (S_ISLNK(st.mode)) {
		char t[R4_SYMLINK_MAX + 1];
		size_t n;

		if (!(rc = r4_readlink(c->db, src, t, sizeof(t) - 1, &n))) {
			t[n < sizeof(t) - 1 ? n : sizeof(t) - 1] = 0;
			if (symlink(t, dst) < 0)
				rc = -errno;
			else
				c->symlinks++;
		}
	} else if (S_ISREG(st.mode)) {
		if ((fd = open(dst, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600)) < 0) {
			rc = -errno;
		} else if (!(rc = export_body(c, src, fd, st.size))) {
			c->files++;
		}
	} else if (mknod(dst, st.mode & (S_IFMT | 0600), (dev_t)st.rdev) < 0) {
		rc = -errno;
	} else {
		c->specials++;
	}
	if (!rc)
		rc = export_attrs(c, src, dst, fd, &st);
out:
	if (fd >= 0 && close(fd) < 0 && !rc)
		rc = -errno;
	if (rc)
		export_fail(c, src, rc);
}

/* The last name of path (trailing slashes ignored) into out. */
static int last_name(const char *path, char *out, size_t n)
{
	size_t end = strlen(path), start;

	while (end > 1 && path[end - 1] == '/')
		end--;
	for (start = end; start > 0 && path[start - 1] != '/'; start--)
		;
	if (end - start + 1 > n)
		return -ENAMETOOLONG;
	memcpy(out, path + start, end - start);
	out[end - start] = 0;
	return 0;
}

/*
 * r4 export [-p] [--pseudo] IMAGE [PATH] DEST: PATH's subtree (default /)
 * into host directory DEST, made if missing; a directory PATH's contents
 * go into DEST (as cp -a PATH/. DEST, DEST taking PATH's attributes), any
 * other PATH becomes DEST/NAME.  The image opens read-only, so beside a
 * writer too: then its last committed state is what comes out.
 */
int cp_export(int argc, char **argv, const struct r4_open_opts *base)
{
	/* --salvage: a damaged volume, read without trusting its tree
	 * (salvage.c) */
	for (int i = 1; i < argc && strcmp(argv[i], "--"); i++)
		if (!strcmp(argv[i], "--salvage")) {
			memmove(argv + i, argv + i + 1, (size_t)(argc - i) * sizeof(*argv));
			return cmd_salvage(argc - 1, argv, base);
		}
	static const struct option lopts[] = {
		{"owners", no_argument, NULL, 'p'}, {"pseudo", no_argument, NULL, 'P'},
		{NULL, 0, NULL, 0}};
	struct r4_open_opts oo = *base;
	const char *image, *path, *dest;
	char top[PATH_MAX], name[NAME_MAX + 2];
	struct r4_holder h;
	struct r4_stat st;
	struct stat hs;
	struct cp c;
	int opt, rc;

	cp_start(&c, "exported");
	c.owners = geteuid() == 0;
	while ((opt = getopt_long(argc, argv, "p", lopts, NULL)) != -1) {
		if (opt == 'p')
			c.owners = true;
		else if (opt == 'P')
			c.pseudo = true;
		else
			return -EINVAL;
	}
	if (argc - optind < 2 || argc - optind > 3)
		return -EINVAL;
	image = argv[optind];
	path = argc - optind == 3 ? argv[optind + 1] : "/";
	dest = argv[argc - 1];
	if (path[0] != '/') {
		fprintf(stderr, "%s: export: '%s': a path in the volume starts with '/'\n", prog,
			path);
		return R4_EXIT_USAGE;
	}
	if (!r4_holder_find(image, &h) && h.held)
		fprintf(stderr, "%s: %s: %s; exporting its last committed state\n", prog, image,
			h.what);
	if ((rc = r4_open(image, &oo, &c.db))) {
		fprintf(stderr, "%s: cannot open image '%s': %s\n", prog, image, r4_strerror(rc));
		return R4_EXIT_FAIL;
	}
	if ((rc = r4_stat(c.db, path, &st))) {
		fprintf(stderr, "%s: export '%s': %s\n", prog, path, r4_strerror(rc));
		r4_close(c.db);
		return R4_EXIT_FAIL;
	}
	/* (a directory PATH's mode comes last, so 0700 until then) */
	if (mkdir(dest, S_ISDIR(st.mode) ? 0700 : 0777) < 0 &&
	    (rc = errno != EEXIST ? errno : stat(dest, &hs) < 0 ? errno
					    : S_ISDIR(hs.st_mode) ? 0 : ENOTDIR)) {
		fprintf(stderr, "%s: export: cannot make '%s': %s\n", prog, dest, strerror(rc));
		r4_close(c.db);
		return R4_EXIT_FAIL;
	}
	if (!c.owners)
		fprintf(stderr, "%s: export: not run as root: the copies belong to you "
			"(-p keeps the owners where the host allows)\n", prog);
	if (S_ISDIR(st.mode))
		export_tree(&c, path, dest);
	else if (last_name(path, name, sizeof(name)) || join(top, sizeof(top), dest, name))
		export_fail(&c, path, -ENAMETOOLONG);
	else
		export_tree(&c, path, top);
	cp_end(&c);
	r4_close(c.db);
	cp_summary(&c);
	return c.failed ? R4_EXIT_FAIL : R4_EXIT_OK;
}
