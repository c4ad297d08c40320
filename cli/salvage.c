/*
 * salvage.c - r4 export --salvage [--list] IMAGE [PATH] [DEST] (docs/salvage.md):
 * what a damaged volume still holds, listed or copied to a host directory,
 * then the report of what could not be read.
 *
 * The engine (r4.h r4_salvage_*) decides everything: what is found, under
 * which name, which bytes are data, holes or lost.  This file writes what
 * it is given, plainly: directories, files (holes and lost ranges left as
 * holes), symlinks, hard links, special files; modes and times always,
 * owners when run as root.  Directories get their modes and times last,
 * deepest first, so a read-only directory can still be filled.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "exit.h"
#include "r4.h"
#include "sh.h"

struct out {
	r4_salvage *s;
	const char *top;		/* the walk's PATH */
	const char *dest;		/* NULL: --list */
	bool root;			/* chown what is written */
	struct made {			/* directories made, to finish last */
		char *path;
		struct r4_stat st;
	} *dirs;
	size_t ndirs, capdirs;
	uint64_t files, dirs_n, others, bytes, failed;
	uint8_t *buf;
};

enum { BUF = 1 << 20 };

/* DEST + the entry's path below the walk's PATH; NULL when out of memory. */
static char *host_path(const struct out *o, const char *path)
{
	size_t skip = strcmp(o->top, "/") ? strlen(o->top) : 0;
	char *p;

	if (asprintf(&p, "%s%s", o->dest, path + skip) < 0)
		return NULL;
	return p;
}

/* The body of e into fd: data where there is some, holes elsewhere (a
 * hole, or lost bytes: the report has them, as it has the data blocks
 * that did not read, whose bytes come as zeros). */
static int copy_body(struct out *o, const struct r4_salvage_ent *e, int fd)
{
	uint64_t off = 0, end;
	enum r4_salvage_kind kind;
	int rc;

	while (off < e->st.size && !(rc = r4_salvage_segment(o->s, e->st.ino, off, &kind, &end))) {
		for (; kind == R4_SALVAGE_DATA && off < end;) {
			size_t n = (size_t)(end - off < BUF ? end - off : BUF);

			if ((rc = r4_salvage_read(o->s, e->st.ino, off, o->buf, n)) && rc != -EIO)
				return rc;
			if (pwrite(fd, o->buf, n, (off_t)off) != (ssize_t)n)
				return -errno;
			o->bytes += n;
			off += n;
		}
		off = end;
	}
	return ftruncate(fd, (off_t)e->st.size) ? -errno : 0;
}

static void set_meta(const struct out *o, const char *p, const struct r4_stat *st)
{
	struct timespec t[2] = {st->atime, st->mtime};

	if (o->root)
		(void)lchown(p, st->uid, st->gid);
	if (!S_ISLNK(st->mode))
		(void)chmod(p, st->mode & 07777);
	(void)utimensat(AT_FDCWD, p, t, AT_SYMLINK_NOFOLLOW);
}

static int write_node(struct out *o, const struct r4_salvage_ent *e, const char *p);

struct xa {
	const char *path;		/* on the host */
};

/* One attribute onto the copy; one the host refuses is said and left out. */
static int put_xattr(void *ctx, const char *name, const void *value, size_t len)
{
	const struct xa *a = ctx;

	if (lsetxattr(a->path, name, value, len, 0))
		fprintf(stderr, "r4: salvage: %s: attribute '%s' not kept: %s\n", a->path, name,
			strerror(errno));
	return 0;
}

static int write_one(struct out *o, const struct r4_salvage_ent *e, const char *p)
{
	int rc = write_node(o, e, p);
	struct xa a = {p};

	return rc || e->link ? rc : r4_salvage_xattrs(o->s, e->st.ino, put_xattr, &a);
}

static int write_node(struct out *o, const struct r4_salvage_ent *e, const char *p)
{
	uint32_t m = e->st.mode;
	int fd, rc = 0;

	if (e->link) {
		char *to = host_path(o, e->link);

		rc = !to ? -ENOMEM : link(to, p) ? -errno : 0;
		free(to);
		return rc;
	}
	if (S_ISDIR(m)) {
		/* DEST itself stands for the walk's PATH; /lost+found may be there */
		if (strcmp(e->path, o->top) && mkdir(p, 0700) &&
		    !(errno == EEXIST && (e->flags & R4_SALVAGE_GUESSED)))
			return -errno;
		if ((rc = r4_grow(&o->dirs, &o->capdirs, o->ndirs + 1, sizeof(*o->dirs), 64)))
			return rc;
		if (!(o->dirs[o->ndirs].path = strdup(p)))
			return -ENOMEM;
		o->dirs[o->ndirs++].st = e->st;
		o->dirs_n++;
		return 0;
	}
	if (S_ISREG(m)) {
		if ((fd = open(p, O_WRONLY | O_CREAT | O_EXCL, 0600)) < 0)
			return -errno;
		rc = copy_body(o, e, fd);
		close(fd);
		o->files++;
	} else if (S_ISLNK(m)) {
		char *t = strndup(e->target ? e->target : "", e->target_len);

		rc = !t ? -ENOMEM : symlink(t, p) ? -errno : 0;
		free(t);
		o->others++;
	} else {
		rc = mknod(p, m & (S_IFMT | 07777), (dev_t)e->st.rdev) ? -errno : 0;
		o->others++;
	}
	if (!rc)
		set_meta(o, p, &e->st);
	return rc;
}

static int each(void *ctx, const struct r4_salvage_ent *e)
{
	struct out *o = ctx;
	char *p;
	int rc;

	if (!o->dest) {
		printf("%c %04o %5u %5u %10llu %s", sh_type_char(e->st.mode), e->st.mode & 07777,
		       e->st.uid, e->st.gid, (unsigned long long)e->st.size, e->path);
		if (e->link)
			printf(" => %s", e->link);
		else if (e->target)
			printf(" -> %.*s", (int)e->target_len, e->target);
		printf("%s\n", e->flags & R4_SALVAGE_GUESSED ? "  (no stat data)" : "");
		return 0;
	}
	/* DEST stands for PATH; a PATH that is no directory goes into it */
	if (!strcmp(e->path, o->top) && !S_ISDIR(e->st.mode))
		rc = asprintf(&p, "%s/%s", o->dest, strrchr(o->top, '/') ? strrchr(o->top, '/') + 1
									: o->top);
	else
		rc = (p = host_path(o, e->path)) ? 0 : -1;
	if (rc < 0)
		return -ENOMEM;
	if ((rc = write_one(o, e, p)) == -ENOMEM) {
		free(p);
		return rc;
	}
	if (rc) {
		fprintf(stderr, "r4: salvage: cannot write '%s': %s\n", p, r4_strerror(rc));
		o->failed++;
	}
	free(p);
	return 0;
}

int cmd_salvage(int argc, char **argv, const struct r4_open_opts *base)
{
	static const struct option lopts[] = {{"list", no_argument, NULL, 'l'},
					       {NULL, 0, NULL, 0}};
	struct r4_salvage_opts so = {.partition = base->partition, .log = base->log,
				     .log_ctx = base->log_ctx};
	struct out o = {.root = geteuid() == 0};
	struct r4_buf rep = {0};
	bool list = false, lost;
	int rc, nargs;

	while ((rc = getopt_long(argc, argv, "", lopts, NULL)) != -1) {
		if (rc != 'l')
			return R4_EXIT_USAGE;
		list = true;
	}
	nargs = argc - optind;
	if (nargs < (list ? 1 : 2) || nargs > (list ? 2 : 3)) {
		fprintf(stderr, "usage: r4 export --salvage --list IMAGE [PATH]\n"
			"       r4 export --salvage IMAGE [PATH] DEST\n");
		return R4_EXIT_USAGE;
	}
	o.top = nargs == (list ? 2 : 3) ? argv[optind + 1] : "/";
	for (size_t n = strlen(o.top); n > 1 && o.top[n - 1] == '/'; n--)
		argv[optind + 1][n - 1] = 0;	/* "/a/" is "/a" */
	if (!list) {
		o.dest = argv[argc - 1];
		if (mkdir(o.dest, 0700) && errno != EEXIST) {
			fprintf(stderr, "r4: salvage: cannot make '%s': %s\n", o.dest,
				strerror(errno));
			return R4_EXIT_FAIL;
		}
		if (!(o.buf = malloc(BUF)))
			return R4_EXIT_FAIL;
	}
	if ((rc = r4_salvage_open(argv[optind], &so, &o.s))) {
		fprintf(stderr, "r4: salvage: cannot open '%s': %s\n", argv[optind],
			r4_strerror(rc));
		free(o.buf);
		return R4_EXIT_FAIL;
	}
	rc = r4_salvage_walk(o.s, o.top, each, &o);
	for (size_t i = o.ndirs; i-- > 0;) {	/* deepest first */
		set_meta(&o, o.dirs[i].path, &o.dirs[i].st);
		free(o.dirs[i].path);
	}
	free(o.dirs);
	free(o.buf);
	if (rc)
		fprintf(stderr, "r4: salvage '%s': %s\n", o.top, r4_strerror(rc));
	else if ((rc = r4_salvage_report(o.s, &rep)) == 0 && rep.len)
		fwrite(rep.p, 1, rep.len, stderr);
	if (!rc && o.dest)
		fprintf(stderr, "r4: salvage: %llu files, %llu directories, %llu others, %llu "
			"bytes; %s\n", (unsigned long long)o.files, (unsigned long long)o.dirs_n,
			(unsigned long long)o.others, (unsigned long long)o.bytes,
			rep.len ? "some of the volume could not be read (above)"
				: "nothing lost");
	lost = rep.len > 0;
	r4_buf_free(&rep);
	r4_salvage_close(o.s);
	return rc || o.failed || lost ? R4_EXIT_FAIL : R4_EXIT_OK;
}
