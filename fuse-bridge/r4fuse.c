/*
 * r4fuse.c - an r4 image as a mounted file system (libfuse3, the
 * high-level path API).  Thin: each fb_<op> translates its arguments,
 * takes the one bridge mutex, makes one r4_* call and returns fb_err(rc).
 *
 * Transactions: POSIX calls are grouped into one engine transaction,
 * committed every commit= seconds (default 5), by fsync, statfs-sync and
 * unmount, and after every call with -o sync.  A grouped call that fails
 * after it changed something poisons the group: the group is aborted, as
 * a crash would lose it, and the error logged.
 *
 * Reiser4 semantics through POSIX:
 *  - the pseudo files of every object by name (cat dir/..owner, echo 0700
 *    > f/..mode), never in readdir: read and written through r4_run as
 *    the calling process's uid and gids;
 *  - the control file /..reiser4: write an R4L command, read back its
 *    values (or its diagnostics): one unit per command.
 */
#define FUSE_USE_VERSION 31

#include <errno.h>
#include <fcntl.h>
#include <linux/falloc.h>
#include <fuse.h>
#include <pthread.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include "r4_lang.h"

#define CONTROL "/..reiser4"
#define META "/..meta"
#define XATTR "user.r4."	/* user.r4.mode is ..mode */
#define HIDDEN ".fuse_hidden"	/* libfuse's stand-in name for an open file unlinked */

/*
 * Open files unlinked: libfuse renames such a file to a hidden name and
 * unlinks that at the last close, so that the kernel can still reach it
 * by path (fstat(2) asks by path).  The bridge turns the rename into the
 * engine's unlink, which keeps the object as an orphan, and remembers the
 * name: the engine has no entry for it, so it shows up nowhere, and the
 * calls on it go to the held object.
 */
struct hidden {
	char *name;			/* the basename libfuse chose */
	r4_file *file;
	struct hidden *next;
};

struct bridge {
	r4_db *db;
	char *image;
	pthread_mutex_t mu;
	pthread_cond_t wake;
	pthread_t committer;
	bool stop, sync, ro, debug;
	bool kernel_perms;		/* -o default_permissions: the kernel checks */
	unsigned commit_secs;
	int lockfd;
	struct hidden *hidden;
};

static struct bridge B = {.mu = PTHREAD_MUTEX_INITIALIZER, .wake = PTHREAD_COND_INITIALIZER,
			  .commit_secs = 5, .lockfd = -1};

/* A handle on a pseudo file or the control file: what was written, what
 * there is to read. */
struct special {
	bool control;
	char *path;			/* the pseudo file's path */
	char *in;			/* written, not yet run */
	size_t nin;
	char *out;			/* the text read returns */
	size_t nout, rpos;		/* (the control file reads from rpos, not the file
					   offset its writes moved) */
	bool have_out, written;
};

/* What fi->fh holds for every open file and directory. */
struct handle {
	r4_file *file;			/* a regular file, held by identity: renames and
					   unlink (to its last close) do not touch it */
	bool append;			/* O_APPEND: each write goes to the end */
	char *name;			/* its path at open, for messages */
	struct special *sp;		/* or a pseudo file or the control file */
	struct r4_dirpos *cur;		/* a directory (file) or meta view directory
					   (meta): cur[i] resumes at entry i */
	char *meta;
	size_t ncur, capcur;
};

static struct handle *handle_of(const struct fuse_file_info *fi)
{
	return (struct handle *)(uintptr_t)fi->fh;
}

static const char *base_of(const char *path)
{
	const char *b = path ? strrchr(path, '/') : NULL;

	return b ? b + 1 : path ? path : "";
}

/* The held object a hidden name stands for (under the mutex), or NULL. */
static struct hidden **hidden_at(const char *path)
{
	const char *b = base_of(path);

	if (strncmp(b, HIDDEN, strlen(HIDDEN)))
		return NULL;
	for (struct hidden **pp = &B.hidden; *pp; pp = &(*pp)->next)
		if (!strcmp((*pp)->name, b))
			return pp;
	return NULL;
}

static r4_file *hidden_file(const char *path)
{
	struct hidden **pp = hidden_at(path);

	return pp ? (*pp)->file : NULL;
}

/* The path for messages (libfuse gives none with a handle). */
static const char *name_of(const char *path, const struct fuse_file_info *fi)
{
	const struct handle *h = fi ? handle_of(fi) : NULL;

	return path ? path : h && h->name ? h->name : h && h->sp ? h->sp->path : "(open file)";
}
#define NAME(path) name_of(path, fi)

static void logmsg(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void logmsg(int level, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	if (B.debug) {
		vfprintf(stderr, fmt, ap);
		fputc('\n', stderr);
	} else {
		vsyslog(level, fmt, ap);
	}
	va_end(ap);
}

/* The engine's messages (recovery, damage found) go to the same log. */
static void engine_log(void *ctx, int level, const char *msg)
{
	(void)ctx;
	if (!B.db) {	/* opening: the user is still there to read it */
		fprintf(stderr, "r4fuse: %s: %s\n", B.image, msg);
		return;
	}
	logmsg(level <= R4_LOG_ERR ? LOG_ERR : level == R4_LOG_WARN ? LOG_WARNING : LOG_INFO,
	       "r4fuse: %s: %s", B.image ? B.image : "", msg);
}

/* The one place engine codes become FUSE results. */
static int fb_err(const char *op, const char *path, int rc)
{
	if (rc >= 0)
		return rc;
	if (rc == -EUCLEAN || rc == -EBADMSG) {
		logmsg(LOG_ERR, "r4fuse: %s %s: the image is damaged (%s)", op, path,
		       r4_strerror(rc));
		return -EIO;
	}
	if (rc < -4095 || !strcmp(r4_strerror(rc), "Unknown error")) {
		logmsg(LOG_ERR, "r4fuse: %s %s: unexpected %d", op, path, rc);
		return -EIO;
	}
	return rc;
}

/* ---- transactions ---- */

/* Commit the group (under the mutex). */
static int commit_group(void)
{
	int rc = 0;

	if (r4_in_txn(B.db) && (rc = r4_commit(B.db))) {
		logmsg(LOG_ERR, "r4fuse: commit failed, the last %u s of changes are lost: %s",
		       B.commit_secs, r4_strerror(rc));
		if (r4_in_txn(B.db))
			r4_abort(B.db);
	}
	return rc;
}

/* Before a change: the group is open. */
static int change_begin(void)
{
	if (B.ro)
		return -EROFS;
	return r4_in_txn(B.db) ? 0 : r4_begin(B.db);
}

/* After a change: -o sync commits now; a failure that poisoned the group
 * aborts it. */
static int change_end(const char *op, const char *path, int rc)
{
	if (rc && r4_txn_error(B.db)) {
		logmsg(LOG_ERR, "r4fuse: %s %s failed after a change (%s): the uncommitted "
		       "group is dropped", op, path, r4_strerror(rc));
		r4_abort(B.db);
	} else if (!rc && B.sync) {
		rc = commit_group();
	}
	return fb_err(op, path, rc);
}

static void *committer(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&B.mu);
	while (!B.stop) {
		struct timespec t;

		clock_gettime(CLOCK_REALTIME, &t);
		t.tv_sec += B.commit_secs;
		pthread_cond_timedwait(&B.wake, &B.mu, &t);
		if (!B.stop)
			commit_group();
	}
	pthread_mutex_unlock(&B.mu);
	return NULL;
}

/* ---- pseudo files and the control file ---- */

/* Is the last component of path a pseudo name ("..x")? */
static bool is_pseudo(const char *path)
{
	const char *b = strrchr(path, '/');

	b = b ? b + 1 : path;
	return b[0] == '.' && b[1] == '.' && b[2];
}

/* A path in the meta view (/..meta/a/b names the object /a/b, shown as a
 * directory of its pseudo files and children): the object's path, or
 * NULL for a path outside the view. */
static char *meta_real(const char *path)
{
	size_t n = strlen(META);

	if (strncmp(path, META, n) || (path[n] && path[n] != '/'))
		return NULL;
	return strdup(path[n] ? path + n : "/");
}

/* Run R4L src as the calling process; its values, or its diagnostics,
 * as text.  The grouped POSIX changes commit first: a command is a unit
 * of its own. */
/* The calling process as the engine's identity; g holds its groups. */
struct caller {
	struct r4_ident who;
	uint32_t g[64];
};

static void caller_get(struct caller *c)
{
	struct fuse_context *fc = fuse_get_context();
	gid_t groups[64];
	int ng = fc ? fuse_getgroups(64, groups) : 0;

	if (ng < 0 || ng > 64)
		ng = 0;
	for (int i = 0; i < ng; i++)
		c->g[i] = groups[i];
	c->who = (struct r4_ident){fc ? fc->uid : 0, fc ? fc->gid : 0, c->g, (size_t)ng,
				   fc ? fc->umask : 022};
}

/*
 * How a client asks the control file to run its command: leading lines
 * "# r4 WORD [ARGS]" (R4L comments, removed before the run):
 *   framed          answer in the framed form of parser/wire.c (r4sh does)
 *   per-statement   one unit per statement, as a script runs
 *   cwd PATH        relative paths start at PATH
 *   as UID:GID[,G...] UMASK   run as that identity (a root caller only)
 */
struct ctl {
	bool framed, per_statement;
	char *cwd;
	struct caller as;
	bool have_as;
};

/* Read the pragmas at the start of *src; *src and *len move past them. */
static void ctl_parse(const char **src, size_t *len, struct ctl *cl)
{
	static const char tag[] = "# r4 ";

	while (*len > sizeof(tag) - 1 && !memcmp(*src, tag, sizeof(tag) - 1)) {
		const char *nl = memchr(*src, '\n', *len);
		size_t n = nl ? (size_t)(nl - *src) : *len;
		char *line = strndup(*src + sizeof(tag) - 1, n - (sizeof(tag) - 1)), *e;

		if (!line)
			break;
		if (!strcmp(line, "framed")) {
			cl->framed = true;
		} else if (!strcmp(line, "per-statement")) {
			cl->per_statement = true;
		} else if (!strncmp(line, "cwd /", 5)) {
			free(cl->cwd);
			cl->cwd = strdup(line + 4);
		} else if (!strncmp(line, "as ", 3) && fuse_get_context()->uid == 0) {
			struct r4_ident *w = &cl->as.who;
			unsigned long v = strtoul(line + 3, &e, 10);

			w->uid = (uint32_t)v;
			w->gid = *e == ':' ? (uint32_t)strtoul(e + 1, &e, 10) : w->uid;
			w->ngroups = 0;
			w->groups = cl->as.g;
			while (*e == ',' && w->ngroups < 64)
				cl->as.g[w->ngroups++] = (uint32_t)strtoul(e + 1, &e, 10);
			w->umask = *e == ' ' ? (uint32_t)strtoul(e + 1, NULL, 8) & 0777 : 022;
			cl->have_as = true;
		}	/* (anything else, and "as" from a non-root caller: ignored) */
		free(line);
		*src += nl ? n + 1 : n;
		*len -= nl ? n + 1 : n;
	}
}

static int run_r4l_as(const char *src, size_t len, char **out, size_t *nout, bool values_only,
		      const struct ctl *cl)
{
	struct caller c;
	struct r4_run_opts ro = {.name = "<control>", .exec = {.read_objects = true}};
	struct r4_run *r = NULL;
	FILE *f;
	int rc;

	caller_get(&c);
	ro.exec.who = cl && cl->have_as ? cl->as.who : c.who;
	if (cl) {
		ro.exec.cwd = cl->cwd;
		ro.per_statement = cl->per_statement;
	}
	if ((rc = commit_group()))
		return rc;
	rc = r4_run(B.db, src, len, &ro, &r);
	if (!r)
		return rc;
	f = open_memstream(out, nout);
	if (cl && cl->framed) {
		r4_run_write(r, f);
		fclose(f);
		r4_run_free(r);
		return rc;
	}
	for (size_t i = 0; i < r->nvalues; i++) {
		const struct r4_run_value *v = &r->values[i];

		if (v->err) {
			/* a value the caller may not read says so (a directory: nothing) */
			if (!values_only && v->err != -EISDIR)
				fprintf(f, "cannot read '%s': %s\n", v->path, r4_strerror(v->err));
			continue;
		}
		fwrite(v->bytes, 1, v->size, f);
		if (!values_only && v->size && v->bytes[v->size - 1] != '\n')
			fputc('\n', f);
	}
	if (rc && !values_only)
		r4_diag_print(r->diags, f);
	fclose(f);
	r4_run_free(r);
	return rc;
}

static int run_r4l(const char *src, size_t len, char **out, size_t *nout, bool values_only)
{
	return run_r4l_as(src, len, out, nout, values_only, NULL);
}

/* The text of a pseudo file (a value of its own, as R4L reads it). */
static int pseudo_text(const char *path, char **out, size_t *n)
{
	char *q = r4_path_quote(path);
	int rc = run_r4l(q, strlen(q), out, n, true);

	free(q);
	return rc;
}

static int special_open(const char *path, struct fuse_file_info *fi)
{
	struct handle *h = calloc(1, sizeof(*h));
	struct special *s = calloc(1, sizeof(*s));

	if (!h || !s || !(s->path = strdup(path))) {
		free(h);
		free(s);
		return -ENOMEM;
	}
	s->control = !strcmp(path, CONTROL);
	h->sp = s;
	fi->fh = (uint64_t)(uintptr_t)h;
	fi->direct_io = 1;	/* sizes are not known ahead */
	return 0;
}

static void special_free(struct special *s)
{
	free(s->in);
	free(s->out);
	free(s->path);
	free(s);
}

/* Run what was written: the control file's command, or the pseudo file's
 * new contents. */
static int special_flush(struct special *s)
{
	int rc = 0;

	if (!s->written)
		return 0;
	s->written = false;
	free(s->out);
	s->out = NULL;
	s->nout = 0;
	if (s->control) {
		struct ctl cl = {0};
		const char *src = s->in ? s->in : "";
		size_t n = s->nin;

		ctl_parse(&src, &n, &cl);
		run_r4l_as(src, n, &s->out, &s->nout, false, &cl);
		free(cl.cwd);
		s->have_out = true;
		s->rpos = 0;
		rc = 0;	/* the answer is the diagnostics, read back */
	} else {
		char *q = r4_path_quote(s->path), *cmd;
		size_t n = strlen(q);

		cmd = malloc(n + s->nin + 40);
		n = (size_t)sprintf(cmd, "%s <- #s%zu:", q, s->nin);
		memcpy(cmd + n, s->in ? s->in : "", s->nin);
		rc = run_r4l(cmd, n + s->nin, &s->out, &s->nout, true);
		free(cmd);
		free(q);
		free(s->out);
		s->out = NULL;
		s->nout = 0;
	}
	free(s->in);
	s->in = NULL;
	s->nin = 0;
	return rc;
}

/* ---- permissions without default_permissions ----
 *
 * With -o default_permissions the kernel checks mode bits for the
 * calling process.  Without it the bridge does, here, with the POSIX
 * rules: search on every directory of a path (r4_access walks it once),
 * read/write at open, write and search on a directory to change its
 * entries (and the sticky bit's owner rule), ownership for chmod, chown
 * and explicit times.  Each returns 0 or the errno, under the mutex.
 */

/* The caller may reach path and have want on it. */
static int perm(const char *path, unsigned want)
{
	struct caller c;

	if (B.kernel_perms)
		return 0;
	caller_get(&c);
	return r4_access(B.db, path, &c.who, want, NULL);
}

/* The directory holding path's last component, in a buffer of PATH_MAX. */
static void parent_of(const char *path, char *dir)
{
	const char *slash = strrchr(path, '/');
	size_t n = slash && slash != path ? (size_t)(slash - path) : 1;

	memcpy(dir, path, n);
	dir[n] = 0;
}

/*
 * The caller may add or remove the entry path in its directory; when the
 * entry exists and the directory is sticky, only root and the owners of
 * the directory or the entry may remove it.  *dst gets the directory's
 * stat (for the group of new objects).
 */
static int perm_entry(const char *path, bool removing, struct r4_stat *dst)
{
	char dir[4096];
	struct caller c;
	struct r4_stat d, st;
	int rc;

	caller_get(&c);
	if (strlen(path) >= sizeof(dir))
		return -ENAMETOOLONG;
	parent_of(path, dir);
	if ((rc = r4_access(B.db, dir, B.kernel_perms ? NULL : &c.who, B.kernel_perms ? 0 : 3,
			    &d)))
		return rc;
	if (dst)
		*dst = d;
	if (B.kernel_perms || !removing || !(d.mode & S_ISVTX) || !c.who.uid ||
	    c.who.uid == d.uid)
		return 0;
	if ((rc = r4_stat(B.db, path, &st)))
		return rc == -ENOENT ? 0 : rc;
	return st.uid == c.who.uid ? 0 : -EPERM;
}

/* chmod, chown and utimens by the caller on an object with stat st;
 * *sa may be narrowed (a non-member's chmod drops setgid). */
static int perm_setattr(const struct r4_stat *st, struct r4_setattr *sa, bool times_now)
{
	struct caller c;
	bool owner;

	if (B.kernel_perms)
		return 0;
	caller_get(&c);
	owner = !c.who.uid || c.who.uid == st->uid;
	if (sa->mask & R4_SET_MODE) {
		uint32_t was = st->mode & 07777, cleared = was & ~sa->mode & 07777;

		/* the kernel drops setuid and setgid before a non-owner's write
		 * (file_remove_privs), as a chmod from the writer: let that one by */
		if (!owner && sa->mask == R4_SET_MODE && cleared && !(cleared & ~(S_ISUID | S_ISGID)) &&
		    (sa->mode & 07777) == (was & ~cleared) && r4_permits(&c.who, st, 2))
			return 0;
		if (!owner)
			return -EPERM;
		if (c.who.uid && !r4_in_group(&c.who, (sa->mask & R4_SET_GID) ? sa->gid : st->gid))
			sa->mode &= ~(uint32_t)S_ISGID;
	}
	if ((sa->mask & R4_SET_UID) && c.who.uid && sa->uid != st->uid)
		return -EPERM;
	if ((sa->mask & R4_SET_GID) && c.who.uid && (!owner || !r4_in_group(&c.who, sa->gid)))
		return -EPERM;
	if (sa->mask & (R4_SET_ATIME | R4_SET_MTIME)) {
		if (!owner && !times_now)
			return -EPERM;
		if (!owner && !r4_permits(&c.who, st, 2))
			return -EACCES;
	}
	if ((sa->mask & R4_SET_SIZE) && !r4_permits(&c.who, st, 2))
		return -EACCES;
	return 0;
}

/* r4_stat, with the caller's search permission on the way. */
static int stat_as_caller(const char *path, struct r4_stat *st)
{
	struct caller c;

	if (B.kernel_perms)
		return r4_stat(B.db, path, st);
	caller_get(&c);
	return r4_access(B.db, path, &c.who, 0, st);
}

/* ---- the operations ---- */

static void fill(struct stat *st, const struct r4_stat *r)
{
	memset(st, 0, sizeof(*st));
	st->st_ino = r->ino;
	st->st_mode = r->mode;
	st->st_nlink = r->nlink;
	st->st_uid = r->uid;
	st->st_gid = r->gid;
	st->st_size = (off_t)r->size;
	st->st_blocks = (blkcnt_t)r->blocks;
	st->st_rdev = r->rdev;
	st->st_blksize = 4096;
	st->st_atim = r->atime;
	st->st_mtim = r->mtime;
	st->st_ctim = r->ctime;
}

static int fb_getattr(const char *path, struct stat *st, struct fuse_file_info *fi)
{
	struct r4_stat r;
	int rc;

	struct handle *h = fi ? handle_of(fi) : NULL;

	pthread_mutex_lock(&B.mu);
	r4_file *held = h && h->file ? h->file : hidden_file(path);

	if (held) {	/* by identity: an unlinked file too */
		if (!(rc = r4_file_stat(held, &r)))
			fill(st, &r);
		pthread_mutex_unlock(&B.mu);
		return fb_err("getattr", NAME(path), rc);
	}
	pthread_mutex_unlock(&B.mu);
	if (h && h->sp)		/* (libfuse gives no path with a handle) */
		path = h->sp->path;
	char *real = meta_real(path);

	if (real && !is_pseudo(real)) {
		/* every object of the meta view is a directory */
		pthread_mutex_lock(&B.mu);
		if (!(rc = stat_as_caller(real, &r))) {
			fill(st, &r);
			st->st_mode = S_IFDIR | (r.mode & 0777) | ((r.mode & 0444) >> 2);
			st->st_nlink = 2;
			st->st_size = 0;
		}
		pthread_mutex_unlock(&B.mu);
		free(real);
		return fb_err("getattr", path, rc);
	}
	if (real)
		path = real;
	pthread_mutex_lock(&B.mu);
	if (!strcmp(path, CONTROL) || is_pseudo(path)) {
		char *dir = strdup(path), *slash = dir ? strrchr(dir, '/') : NULL;
		char *text = NULL;
		size_t n = 0;

		if (slash)
			*slash = 0;
		rc = !slash ? -ENOMEM : stat_as_caller(*dir ? dir : "/", &r);
		if (!rc && strcmp(path, CONTROL)) {
			/* a pseudo file that cannot be read (..unlink) still exists */
			int trc = pseudo_text(path, &text, &n);

			if (trc == -ENOENT || trc == -EINVAL)
				rc = trc;
		}
		if (!rc) {
			fill(st, &r);
			st->st_mode = S_IFREG | (strcmp(path, CONTROL) ? 0644 : 0666);
			st->st_nlink = 1;
			st->st_size = (off_t)n;
			st->st_blocks = 0;
		}
		free(text);
		free(dir);
	} else if (!(rc = stat_as_caller(path, &r))) {
		fill(st, &r);
	}
	pthread_mutex_unlock(&B.mu);
	rc = fb_err("getattr", path, rc);
	free(real);
	return rc;
}

/* cur[ncur] = the cursor before entry ncur (after the one before it). */
static int cur_put(struct handle *h, const struct r4_dirpos *pos)
{
	if (h->ncur == h->capcur) {
		size_t cap = h->capcur ? 2 * h->capcur : 64;
		struct r4_dirpos *cur = realloc(h->cur, cap * sizeof(*cur));

		if (!cur)
			return -ENOMEM;
		h->cur = cur;
		h->capcur = cap;
	}
	h->cur[h->ncur] = *pos;
	return 0;
}

struct fill_ctx {
	void *buf;
	fuse_fill_dir_t filler;
	struct handle *h;
	struct r4_dirpos *pos;
};

static int dir_fn(void *ctx, const char *name, size_t len, uint64_t ino, uint32_t type)
{
	struct fill_ctx *c = ctx;
	struct handle *h = c->h;
	struct stat st = {.st_ino = ino, .st_mode = type};
	char n[256];

	if (len > 255)
		return 0;
	memcpy(n, name, len);
	n[len] = 0;
	if (cur_put(h, c->pos))
		return -ENOMEM;
	if (c->filler(c->buf, n, &st, (off_t)h->ncur + 1, 0))
		return 1;	/* the buffer is full: this entry comes next time */
	h->ncur++;
	return 0;
}
static int fb_readdir(const char *path, void *buf, fuse_fill_dir_t filler, off_t off,
		      struct fuse_file_info *fi, enum fuse_readdir_flags flags)
{
	struct handle *h = handle_of(fi);
	struct r4_dirpos pos = {0};
	struct fill_ctx c = {buf, filler, h, &pos};
	int rc;

	(void)path;	/* (none: nullpath_ok) */
	(void)flags;
	if (!h)
		return -EBADF;
	if (h->meta) {
		/* the meta view: an object's entries, then its pseudo names (..list),
		 * all in one call */
		char *q = r4_path_quote(h->meta), *cmd = NULL, *list = NULL;
		size_t n = 0;

		pthread_mutex_lock(&B.mu);
		rc = q && asprintf(&cmd, "%s/..list", q) >= 0
		     ? run_r4l(cmd, strlen(cmd), &list, &n, true) : -ENOMEM;
		free(cmd);
		pthread_mutex_unlock(&B.mu);
		if (!rc) {
			filler(buf, ".", NULL, 0, 0);
			filler(buf, "..", NULL, 0, 0);
			for (char *s = list, *e; s && s < list + n; s = e + 1) {
				if (!(e = memchr(s, '\n', (size_t)(list + n - s))))
					break;
				*e = 0;
				if (strcmp(s, ".") && strcmp(s, ".."))
					filler(buf, s, NULL, 0, 0);
			}
		}
		free(list);
		free(q);
		return fb_err("readdir", h->meta, rc);
	}
	/*
	 * Offsets are stable across changes: offset i resumes at the cursor
	 * (a key, r4_readdir) that stood before entry i of this open
	 * directory, so entries added or removed between calls neither
	 * repeat nor hide the others.
	 */
	if (off < 0 || (off && (size_t)off > h->ncur))
		return -EINVAL;	/* no offset this directory handed out */
	if (off)
		pos = h->cur[off];
	h->ncur = (size_t)off;
	pthread_mutex_lock(&B.mu);
	rc = r4_file_readdir(h->file, &pos, dir_fn, &c);
	pthread_mutex_unlock(&B.mu);
	if (!rc)
		rc = cur_put(h, &pos);	/* where the next call goes on */
	return fb_err("readdir", "(a directory)", rc);
}

/* A directory is held by identity; the meta view's by the object's path. */
static int fb_opendir(const char *path, struct fuse_file_info *fi)
{
	struct handle *h = calloc(1, sizeof(*h));
	int rc = 0;

	if (!h)
		return -ENOMEM;
	pthread_mutex_lock(&B.mu);
	if ((h->meta = meta_real(path)))
		rc = perm(h->meta, 0);
	else if (!(rc = perm(path, 4)))
		rc = r4_file_open(B.db, path, &h->file);
	pthread_mutex_unlock(&B.mu);
	if (rc) {
		free(h);
		return fb_err("opendir", path, rc);
	}
	fi->fh = (uint64_t)(uintptr_t)h;
	return 0;
}

static int fb_releasedir(const char *path, struct fuse_file_info *fi)
{
	struct handle *h = handle_of(fi);

	(void)path;
	if (!h)
		return 0;
	if (h->file) {
		pthread_mutex_lock(&B.mu);
		r4_file_close(h->file);	/* (a directory is never an orphan) */
		pthread_mutex_unlock(&B.mu);
	}
	free(h->meta);
	free(h->cur);
	free(h);
	return 0;
}

/* A handle on the regular file at path (under the mutex). */
static int file_open(const char *path, struct fuse_file_info *fi)
{
	struct handle *h = calloc(1, sizeof(*h));
	int rc;

	r4_file *held = hidden_file(path);

	if (!h)
		return -ENOMEM;
	if ((rc = held ? r4_file_dup(held, &h->file) : r4_file_open(B.db, path, &h->file))) {
		free(h);
		return rc;
	}
	h->append = (fi->flags & O_APPEND) != 0;
	h->name = strdup(path);
	fi->fh = (uint64_t)(uintptr_t)h;
	fi->noflush = 1;	/* close(2) has nothing to do here: no FLUSH round trip */
	return 0;
}

/*
 * A new object at path (under the mutex): the caller owns it, the
 * umask applies, and in a setgid directory it takes the directory's
 * group (a new directory keeps setgid), as the kernel does for its own
 * file systems.
 */
static int make(const char *op, const char *path, mode_t mode, dev_t rdev, const char *target)
{
	struct fuse_context *fc = fuse_get_context();
	struct r4_stat d;
	uint32_t uid = fc->uid, gid = fc->gid, m = mode & ~(mode_t)fc->umask;
	int rc;

	if (is_pseudo(path) || !strcmp(path, CONTROL))
		return -EACCES;	/* pseudo names are never directory entries */
	if ((rc = perm_entry(path, false, &d)))
		return fb_err(op, path, rc);
	if (d.mode & S_ISGID) {
		gid = d.gid;
		if (S_ISDIR(mode))
			m |= S_ISGID;
	}
	if ((rc = change_begin()))
		return fb_err(op, path, rc);
	switch (mode & S_IFMT) {
	case S_IFDIR: rc = r4_mkdir(B.db, path, m, uid, gid); break;
	case S_IFREG: rc = r4_create(B.db, path, m, uid, gid); break;
	case S_IFLNK: rc = r4_symlink(B.db, target, path, uid, gid); break;
	default: rc = r4_mknod(B.db, path, m, rdev, uid, gid); break;
	}
	return change_end(op, path, rc);
}

static int fb_mkdir(const char *path, mode_t mode)
{
	int rc;

	pthread_mutex_lock(&B.mu);
	rc = make("mkdir", path, S_IFDIR | (mode & 07777), 0, NULL);
	pthread_mutex_unlock(&B.mu);
	return rc;
}

static int fb_mknod(const char *path, mode_t mode, dev_t rdev)
{
	int rc;

	pthread_mutex_lock(&B.mu);
	rc = make("mknod", path, mode, rdev, NULL);
	pthread_mutex_unlock(&B.mu);
	return rc;
}

static int fb_symlink(const char *target, const char *path)
{
	int rc;

	pthread_mutex_lock(&B.mu);
	rc = make("symlink", path, S_IFLNK | 0777, 0, target);
	pthread_mutex_unlock(&B.mu);
	return rc;
}

static int fb_create(const char *path, mode_t mode, struct fuse_file_info *fi)
{
	int rc;

	pthread_mutex_lock(&B.mu);
	if (!(rc = make("create", path, S_IFREG | (mode & 07777), 0, NULL)))
		rc = fb_err("create", path, file_open(path, fi));
	pthread_mutex_unlock(&B.mu);
	return rc;
}

/* A change under the mutex, after the caller's permission check. */
#define CHECKED_CHANGE(op, path, check, call)                      \
	do {                                                       \
		int rc_;                                           \
		pthread_mutex_lock(&B.mu);                         \
		if (!(rc_ = (check)) && !(rc_ = change_begin()))   \
			rc_ = change_end(op, path, (call));        \
		else                                               \
			rc_ = fb_err(op, path, rc_);               \
		pthread_mutex_unlock(&B.mu);                       \
		return rc_;                                        \
	} while (0)

static int fb_unlink(const char *path)
{
	struct hidden **pp, *hd;
	int rc;

	pthread_mutex_lock(&B.mu);
	if ((pp = hidden_at(path))) {
		/* libfuse's last close of an unlinked file: the orphan goes */
		hd = *pp;
		*pp = hd->next;
		rc = r4_file_close(hd->file);
		free(hd->name);
		free(hd);
		pthread_mutex_unlock(&B.mu);
		return rc ? change_end("unlink", path, rc) : 0;
	}
	pthread_mutex_unlock(&B.mu);
	CHECKED_CHANGE("unlink", path, perm_entry(path, true, NULL), r4_unlink(B.db, path));
}

/* libfuse hides an open file it is asked to unlink (or rename over):
 * unlink it in the engine, holding it, under the name libfuse chose. */
static int hide(const char *from, const char *to)
{
	struct hidden *hd = calloc(1, sizeof(*hd));
	int rc;

	if (!hd || !(hd->name = strdup(base_of(to)))) {
		free(hd);
		return -ENOMEM;
	}
	pthread_mutex_lock(&B.mu);
	if (!(rc = perm_entry(from, true, NULL)) && !(rc = r4_file_open(B.db, from, &hd->file))) {
		if (!(rc = change_begin()))
			rc = change_end("unlink", from, r4_unlink(B.db, from));
		else
			rc = fb_err("unlink", from, rc);
	}
	if (!rc) {
		hd->next = B.hidden;
		B.hidden = hd;
	} else if (hd->file) {
		r4_file_close(hd->file);
	}
	pthread_mutex_unlock(&B.mu);
	if (rc) {
		free(hd->name);
		free(hd);
	}
	return rc;
}

static int fb_rmdir(const char *path)
{
	CHECKED_CHANGE("rmdir", path, perm_entry(path, true, NULL), r4_rmdir(B.db, path));
}

/* rename: both entries may change; a directory that changes parent
 * needs write permission on itself (its ".." changes). */
static int perm_rename(const char *from, const char *to)
{
	char a[4096], b[4096];
	struct r4_stat st;
	int rc;

	if ((rc = perm_entry(from, true, NULL)) || (rc = perm_entry(to, true, NULL)) ||
	    B.kernel_perms || (rc = r4_stat(B.db, from, &st)) || !S_ISDIR(st.mode))
		return rc;
	if (strlen(from) >= sizeof(a) || strlen(to) >= sizeof(b))
		return -ENAMETOOLONG;
	parent_of(from, a);
	parent_of(to, b);
	return strcmp(a, b) ? perm(from, 2) : 0;
}

static int fb_rename(const char *from, const char *to, unsigned flags)
{
	if (is_pseudo(to) || is_pseudo(from))
		return -EINVAL;
	if (!flags && !strncmp(base_of(to), HIDDEN, strlen(HIDDEN)))
		return hide(from, to);
	CHECKED_CHANGE("rename", from, perm_rename(from, to),
		       r4_rename(B.db, from, to,
				 (flags & RENAME_NOREPLACE ? R4_RENAME_NOREPLACE : 0) |
				 (flags & RENAME_EXCHANGE ? R4_RENAME_EXCHANGE : 0)));
}

static int fb_link(const char *from, const char *to)
{
	int rc;

	if (is_pseudo(to))
		return -EINVAL;
	CHECKED_CHANGE("link", from, (rc = perm(from, 0)) ? rc : perm_entry(to, false, NULL),
		       r4_link(B.db, from, to));
}

static int fb_readlink(const char *path, char *buf, size_t n)
{
	size_t len;
	int rc;

	pthread_mutex_lock(&B.mu);
	if (!(rc = perm(path, 0)))
		rc = r4_readlink(B.db, path, buf, n - 1, &len);
	pthread_mutex_unlock(&B.mu);
	if (!rc)
		buf[len < n - 1 ? len : n - 1] = 0;
	return fb_err("readlink", path, rc);
}

/* chmod, chown, truncate, utimens: on the open file (by identity), or
 * at path; times_now says both times are "now" (no ownership needed). */
static int setattr(const char *op, const char *path, struct r4_setattr *sa,
		   const struct fuse_file_info *fi, bool times_now)
{
	struct handle *h = fi ? handle_of(fi) : NULL;
	struct r4_stat st;
	r4_file *held;
	int rc;

	if ((h && h->sp) || (path && (is_pseudo(path) || !strcmp(path, CONTROL))))
		return sa->mask == R4_SET_SIZE ? 0 : -EPERM;	/* O_TRUNC before a write */
	pthread_mutex_lock(&B.mu);
	held = h && h->file ? h->file : hidden_file(path);
	if (held)
		rc = r4_file_stat(held, &st);
	else if (!(rc = perm(path, 0)))
		rc = r4_stat(B.db, path, &st);
	if (!rc) {
		struct r4_setattr chk = *sa;

		if (h && h->file)	/* ftruncate: the file was opened for writing */
			chk.mask &= ~(unsigned)R4_SET_SIZE;
		rc = perm_setattr(&st, &chk, times_now);
		sa->mode = chk.mode;	/* (setgid dropped) */
	}
	if (!rc && !(rc = change_begin()))
		rc = change_end(op, NAME(path), held ? r4_file_setattr(held, sa)
						     : r4_setattr(B.db, path, sa));
	else
		rc = fb_err(op, NAME(path), rc);
	pthread_mutex_unlock(&B.mu);
	return rc;
}

static int fb_chmod(const char *path, mode_t mode, struct fuse_file_info *fi)
{
	struct r4_setattr sa = {.mask = R4_SET_MODE, .mode = mode};

	return setattr("chmod", path, &sa, fi, false);
}

static int fb_chown(const char *path, uid_t uid, gid_t gid, struct fuse_file_info *fi)
{
	struct r4_setattr sa = {0};

	if (uid != (uid_t)-1) {
		sa.mask |= R4_SET_UID;
		sa.uid = uid;
	}
	if (gid != (gid_t)-1) {
		sa.mask |= R4_SET_GID;
		sa.gid = gid;
	}
	return setattr("chown", path, &sa, fi, false);
}

static int fb_truncate(const char *path, off_t size, struct fuse_file_info *fi)
{
	struct r4_setattr sa = {.mask = R4_SET_SIZE, .size = (uint64_t)size};

	if (size < 0)
		return -EINVAL;
	return setattr("truncate", path, &sa, fi, false);
}

static int fb_utimens(const char *path, const struct timespec tv[2], struct fuse_file_info *fi)
{
	struct r4_setattr sa = {0};
	struct timespec now;
	bool all_now = true;

	clock_gettime(CLOCK_REALTIME, &now);
	for (int i = 0; i < 2; i++) {
		struct timespec t = !tv || tv[i].tv_nsec == UTIME_NOW ? now : tv[i];

		if (tv && tv[i].tv_nsec == UTIME_OMIT)
			continue;
		if (tv && tv[i].tv_nsec != UTIME_NOW)
			all_now = false;
		sa.mask |= i ? R4_SET_MTIME : R4_SET_ATIME;
		if (i)
			sa.mtime = t;
		else
			sa.atime = t;
	}
	return setattr("utimens", path, &sa, fi, all_now);
}

static int fb_access(const char *path, int mask)
{
	struct r4_stat st;
	int rc;

	pthread_mutex_lock(&B.mu);
	rc = perm(path, (unsigned)mask & 7);
	if (!rc && (mask & W_OK) && B.ro && !(rc = r4_stat(B.db, path, &st)))
		rc = -EROFS;
	pthread_mutex_unlock(&B.mu);
	return rc == -ENOENT ? rc : fb_err("access", path, rc);
}

/*
 * open(O_TRUNC) of an existing file: libfuse asks for atomic O_TRUNC, so
 * the truncation comes with the open (under the mutex).  A refused
 * truncation closes the handle again.
 */
static int truncate_open(struct fuse_file_info *fi)
{
	struct handle *h = handle_of(fi);
	struct r4_setattr sa = {.mask = R4_SET_SIZE, .size = 0};
	struct r4_stat st;
	int rc;

	if (!(rc = r4_file_stat(h->file, &st)) && st.size && !(rc = change_begin()))
		rc = change_end("open (O_TRUNC)", h->name, r4_file_setattr(h->file, &sa));
	if (rc) {
		r4_file_close(h->file);
		free(h->name);
		free(h);
		fi->fh = 0;
	}
	return rc;
}

static int fb_open(const char *path, struct fuse_file_info *fi)
{
	struct r4_stat st;
	int rc;

	char *real = meta_real(path);

	if (real) {
		rc = is_pseudo(real) ? special_open(real, fi) : -EISDIR;
		free(real);
		return rc;
	}
	if (!strcmp(path, CONTROL) || is_pseudo(path))
		return special_open(path, fi);
	if (B.ro && (fi->flags & O_ACCMODE) != O_RDONLY)
		return -EROFS;
	pthread_mutex_lock(&B.mu);
	unsigned want = (fi->flags & O_ACCMODE) == O_RDONLY ? 4 : (fi->flags & O_ACCMODE) ==
			O_WRONLY ? 2 : 6;

	if (fi->flags & O_TRUNC)
		want |= 2;
	if (hidden_file(path))
		rc = file_open(path, fi);	/* (through /proc/PID/fd) */
	else if (!(rc = stat_as_caller(path, &st)) && !(rc = S_ISDIR(st.mode) ? -EISDIR : 0) &&
		 !(rc = perm(path, want)))
		rc = file_open(path, fi);
	if (!rc && (fi->flags & O_TRUNC))
		rc = truncate_open(fi);
	pthread_mutex_unlock(&B.mu);
	return fb_err("open", path, rc);
}
/* A pseudo file was written: the kernel's cached attributes of its object
 * are stale (chmod through ..mode).  Outside the mutex: the kernel may
 * call back. */
static void invalidate_owner(const char *path)
{
	char *dir = strdup(path), *slash = dir ? strrchr(dir, '/') : NULL;

	if (slash) {
		*slash = 0;
		fuse_invalidate_path(fuse_get_context()->fuse, *dir ? dir : "/");
	}
	free(dir);
}

static int fb_read(const char *path, char *buf, size_t n, off_t off, struct fuse_file_info *fi)
{
	struct handle *h = handle_of(fi);
	struct special *s = h ? h->sp : NULL;
	size_t got = 0;
	int rc;

	pthread_mutex_lock(&B.mu);
	if (s) {
		rc = 0;
		if (s->written)
			special_flush(s);
		if (!s->have_out && !s->control) {
			rc = pseudo_text(s->path, &s->out, &s->nout);
			s->have_out = !rc;
		}
		size_t at = s->control ? s->rpos : (size_t)off;

		if (!rc && at < s->nout) {
			got = s->nout - at < n ? s->nout - at : n;
			memcpy(buf, s->out + at, got);
			if (s->control)
				s->rpos += got;
		}
	} else if (h && h->file) {
		rc = r4_file_read(h->file, (uint64_t)off, buf, n, &got);
	} else {
		rc = -EBADF;
	}
	pthread_mutex_unlock(&B.mu);
	return rc ? fb_err("read", NAME(path), rc) : (int)got;
}

static int fb_write(const char *path, const char *buf, size_t n, off_t off,
		    struct fuse_file_info *fi)
{
	struct handle *h = handle_of(fi);
	struct special *s = h ? h->sp : NULL;

	if (s) {
		size_t end = (size_t)off + n;

		pthread_mutex_lock(&B.mu);
		if (end > s->nin) {
			char *in = realloc(s->in, end + 1);

			if (!in) {
				pthread_mutex_unlock(&B.mu);
				return -ENOMEM;
			}
			s->in = in;
			memset(s->in + s->nin, 0, end - s->nin);
			s->nin = end;
		}
		memcpy(s->in + off, buf, n);
		s->written = true;
		s->have_out = false;
		/* a pseudo file takes its value at once, so write(2) says whether
		 * it was accepted (echo 0999 > d/..mode fails there); the control
		 * file runs its command when it is read or closed */
		int rc = s->control ? 0 : special_flush(s);

		pthread_mutex_unlock(&B.mu);
		if (!s->control && !rc)
			invalidate_owner(s->path);
		return rc ? fb_err("write", path, rc) : (int)n;
	}
	struct r4_stat st;
	int rc;

	if (!h || !h->file)
		return -EBADF;
	pthread_mutex_lock(&B.mu);
	if (!(rc = change_begin())) {
		/* O_APPEND: the end as it is now, under the mutex */
		if (h->append && !(rc = r4_file_stat(h->file, &st)))
			off = (off_t)st.size;
		if (!rc)
			rc = r4_file_write(h->file, (uint64_t)off, buf, n);
		rc = change_end("write", NAME(path), rc);
	} else {
		rc = fb_err("write", NAME(path), rc);
	}
	pthread_mutex_unlock(&B.mu);
	return rc ? rc : (int)n;
}

static int fb_flush(const char *path, struct fuse_file_info *fi)
{
	struct handle *h = handle_of(fi);
	struct special *s = h ? h->sp : NULL;
	int rc = 0;

	if (s) {
		/* a command written and closed unread still runs */
		bool changed = s->written && !s->control;

		pthread_mutex_lock(&B.mu);
		rc = special_flush(s);
		pthread_mutex_unlock(&B.mu);
		if (changed)
			invalidate_owner(s->path);
	}
	return fb_err("flush", NAME(path), rc);
}

static int fb_release(const char *path, struct fuse_file_info *fi)
{
	struct handle *h = handle_of(fi);
	int rc = 0;

	if (!h)
		return 0;
	pthread_mutex_lock(&B.mu);
	if (h->sp)
		special_flush(h->sp);
	/* the last close of an unlinked file removes it, in the group */
	if (h->file && (rc = r4_file_close(h->file)))
		rc = change_end("release", NAME(path), rc);
	pthread_mutex_unlock(&B.mu);
	if (h->sp)
		special_free(h->sp);
	free(h->name);
	free(h);
	return rc;
}
static int fb_fsync(const char *path, int datasync, struct fuse_file_info *fi)
{
	int rc;

	(void)datasync;
	(void)fi;
	pthread_mutex_lock(&B.mu);
	rc = r4_in_txn(B.db) ? commit_group() : 0;
	if (!rc)
		rc = r4_sync(B.db);
	pthread_mutex_unlock(&B.mu);
	return fb_err("fsync", NAME(path), rc);
}

static int fb_statfs(const char *path, struct statvfs *sv)
{
	struct r4_statfs s;
	int rc;

	pthread_mutex_lock(&B.mu);
	rc = r4_statfs(B.db, &s);
	pthread_mutex_unlock(&B.mu);
	if (!rc) {
		memset(sv, 0, sizeof(*sv));
		sv->f_bsize = sv->f_frsize = s.bsize;
		sv->f_blocks = s.blocks;
		sv->f_bfree = sv->f_bavail = s.bfree;
		sv->f_files = s.files;
		sv->f_ffree = sv->f_favail = s.ffree;
		sv->f_namemax = s.namemax;
	}
	return fb_err("statfs", path, rc);
}

/* ---- extended attributes: user.r4.NAME is the pseudo file ..NAME ---- */

static const char *const xattr_names[] = {
	"uid", "gid", "mode", "type", "size", "nlink", "atime", "mtime", "ctime", "oid", "key",
	"plugin", "name", NULL,
};

/* The pseudo file an attribute name stands for ("/a/..mode"), or NULL. */
static char *xattr_path(const char *path, const char *name)
{
	char *real = meta_real(path), *p = NULL;
	size_t n = strlen(XATTR);

	if (!strncmp(name, XATTR, n) && name[n] && !strchr(name + n, '/') &&
	    asprintf(&p, "%s/..%s", real ? (strcmp(real, "/") ? real : "") : (strcmp(path, "/")
		     ? path : ""), name + n) < 0)
		p = NULL;
	free(real);
	return p;
}

static int fb_getxattr(const char *path, const char *name, char *value, size_t size)
{
	char *p = xattr_path(path, name), *text = NULL;
	size_t n = 0;
	int rc;

	if (!p)
		return -ENODATA;
	pthread_mutex_lock(&B.mu);
	rc = pseudo_text(p, &text, &n);
	pthread_mutex_unlock(&B.mu);
	if (!rc && size && n > size)
		rc = -ERANGE;
	else if (!rc && size)
		memcpy(value, text, n);
	free(text);
	free(p);
	/* an unknown pseudo name is no attribute */
	return rc == -ENOENT && !is_pseudo(path) ? -ENODATA : rc ? fb_err("getxattr", path, rc)
	       : (int)n;
}

static int fb_setxattr(const char *path, const char *name, const char *value, size_t size,
		       int flags)
{
	char *p = xattr_path(path, name), *q, *cmd;
	char *out = NULL;
	size_t n = 0;
	int rc;

	(void)flags;
	if (!p)
		return -ENOTSUP;	/* only the user.r4. names */
	q = r4_path_quote(p);
	cmd = malloc(strlen(q) + size + 40);
	n = (size_t)sprintf(cmd, "%s <- #s%zu:", q, size);
	memcpy(cmd + n, value, size);
	pthread_mutex_lock(&B.mu);
	rc = run_r4l(cmd, n + size, &out, &n, true);
	pthread_mutex_unlock(&B.mu);
	if (!rc)
		invalidate_owner(p);	/* the kernel's cached mode, owner, size */
	free(out);
	free(cmd);
	free(q);
	free(p);
	return fb_err("setxattr", path, rc);
}

static int fb_listxattr(const char *path, char *list, size_t size)
{
	size_t need = 0;

	(void)path;
	for (int i = 0; xattr_names[i]; i++)
		need += strlen(XATTR) + strlen(xattr_names[i]) + 1;
	if (!size)
		return (int)need;
	if (size < need)
		return -ERANGE;
	for (int i = 0; xattr_names[i]; i++)
		list += sprintf(list, "%s%s", XATTR, xattr_names[i]) + 1;
	return (int)need;
}

static int fb_removexattr(const char *path, const char *name)
{
	(void)path;
	(void)name;
	return -ENOTSUP;	/* a pseudo file cannot go */
}

/*
 * fallocate: the modes done fully.  r4 keeps no preallocated extents, so
 * space is allocated the way writing does: mode 0 (and KEEP_SIZE inside
 * the file) rewrites the range with what it holds, so holes get blocks
 * and the size grows to the end; ZERO_RANGE writes zeros.  The space is
 * checked first, so that a full volume refuses the call before it
 * changes anything.  Punching holes, collapsing and inserting ranges
 * answer EOPNOTSUPP.
 */
static int fb_fallocate(const char *path, int mode, off_t off, off_t len,
			struct fuse_file_info *fi)
{
	struct handle *h = handle_of(fi);
	bool zero = mode & FALLOC_FL_ZERO_RANGE;
	struct r4_statfs sf;
	struct r4_stat st;
	char *buf;
	int rc;

	if (mode & ~(FALLOC_FL_KEEP_SIZE | FALLOC_FL_ZERO_RANGE))
		return -EOPNOTSUPP;
	if (off < 0 || len <= 0 || off > INT64_MAX - len)
		return -EINVAL;
	if (!h || !h->file)
		return -EBADF;
	if (!(buf = malloc(1 << 20)))
		return -ENOMEM;
	pthread_mutex_lock(&B.mu);
	if (!(rc = r4_file_stat(h->file, &st)) && !(rc = r4_statfs(B.db, &sf))) {
		if ((mode & FALLOC_FL_KEEP_SIZE) && (uint64_t)(off + len) > st.size)
			rc = -EOPNOTSUPP;	/* blocks past the end: none in r4 */
		else if ((uint64_t)len / sf.bsize + 16 > sf.bfree)
			rc = -ENOSPC;
		else
			rc = change_begin();
	}
	for (off_t at = off; !rc && at < off + len;) {
		size_t n = (size_t)(off + len - at < (1 << 20) ? off + len - at : 1 << 20), got = 0;

		if (zero || (uint64_t)at >= st.size)
			memset(buf, 0, n);
		else if ((rc = r4_file_read(h->file, (uint64_t)at, buf, n, &got)))
			break;
		else if (got < n)
			memset(buf + got, 0, n - got);
		if (!(rc = r4_file_write(h->file, (uint64_t)at, buf, n)))
			at += (off_t)n;
	}
	rc = change_end("fallocate", NAME(path), rc);
	pthread_mutex_unlock(&B.mu);
	free(buf);
	return rc;
}

static void *fb_init(struct fuse_conn_info *conn, struct fuse_config *cfg)
{
	(void)conn;
	cfg->use_ino = 1;		/* inode numbers are object ids */
	cfg->nullpath_ok = 1;		/* fh names the object */
	cfg->hard_remove = 0;		/* open files unlinked: see struct hidden */
	pthread_create(&B.committer, NULL, committer, NULL);
	return NULL;
}

static void fb_destroy(void *data)
{
	(void)data;
	pthread_mutex_lock(&B.mu);
	B.stop = true;
	pthread_cond_signal(&B.wake);
	pthread_mutex_unlock(&B.mu);
	pthread_join(B.committer, NULL);
	pthread_mutex_lock(&B.mu);
	commit_group();
	int rc = r4_sync(B.db);

	if (rc)
		logmsg(LOG_ERR, "r4fuse: %s: unmount: %s", B.image, r4_strerror(rc));
	r4_close(B.db);
	B.db = NULL;
	pthread_mutex_unlock(&B.mu);
}

static const struct fuse_operations fb_ops = {
	.getattr = fb_getattr,
	.readlink = fb_readlink,
	.mknod = fb_mknod,
	.mkdir = fb_mkdir,
	.unlink = fb_unlink,
	.rmdir = fb_rmdir,
	.symlink = fb_symlink,
	.rename = fb_rename,
	.link = fb_link,
	.chmod = fb_chmod,
	.chown = fb_chown,
	.truncate = fb_truncate,
	.open = fb_open,
	.read = fb_read,
	.write = fb_write,
	.statfs = fb_statfs,
	.flush = fb_flush,
	.release = fb_release,
	.fsync = fb_fsync,
	.readdir = fb_readdir,
	.opendir = fb_opendir,
	.releasedir = fb_releasedir,
	.init = fb_init,
	.destroy = fb_destroy,
	.create = fb_create,
	.utimens = fb_utimens,
	.getxattr = fb_getxattr,
	.setxattr = fb_setxattr,
	.listxattr = fb_listxattr,
	.removexattr = fb_removexattr,
	.fallocate = fb_fallocate,
	.access = fb_access,
};

/* ---- options and main ---- */

struct opts {
	char *image;
	unsigned commit;
	char *cache;
	int sync, ro, help, kernel_perms, secs;
};

#define OPT(t, p) {t, offsetof(struct opts, p), 1}
static const struct fuse_opt fb_opts[] = {
	{"commit=%u", offsetof(struct opts, commit), 0},
	{"cache=%s", offsetof(struct opts, cache), 0},
	OPT("sync", sync),
	OPT("ro", ro),
	OPT("default_permissions", kernel_perms),
	OPT("32bittimes", secs),
	OPT("-h", help),
	OPT("--help", help),
	FUSE_OPT_END,
};

static int opt_proc(void *data, const char *arg, int key, struct fuse_args *out)
{
	struct opts *o = data;

	(void)out;
	if (key == FUSE_OPT_KEY_NONOPT && !o->image) {
		o->image = strdup(arg);
		return 0;	/* the image is ours; the mount point goes to libfuse */
	}
	/* what mount(8) passes from fstab that is no business of libfuse's */
	static const char *const mount_only[] = {"rw", "defaults", "auto", "noauto", "user",
						 "users", "nofail", "_netdev", "dev", "exec",
						 "suid", NULL};

	if (key == FUSE_OPT_KEY_OPT) {
		for (int i = 0; mount_only[i]; i++)
			if (!strcmp(arg, mount_only[i]))
				return 0;
		if (!strncmp(arg, "x-", 2))
			return 0;
	}
	return 1;
}

int fuse_bridge_main(int argc, char **argv);

int fuse_bridge_main(int argc, char **argv)
{
	struct fuse_args args = FUSE_ARGS_INIT(argc, argv);
	struct opts o = {.commit = 5};
	struct r4_open_opts oo = {0};
	int rc;

	if (fuse_opt_parse(&args, &o, fb_opts, opt_proc) < 0)
		return 2;
	if (o.help || !o.image) {
		fprintf(o.help ? stdout : stderr,
			"usage: r4fuse IMAGE MOUNTPOINT [-f] [-d] [-s] [-o OPTIONS]\n"
			"  -o ro            mount read-only\n"
			"  -o sync          commit after every call\n"
			"  -o commit=SECS   group calls into one commit every SECS seconds (default 5)\n"
			"  -o default_permissions  the kernel checks mode bits (else r4fuse does)\n"
			"  -o cache=SIZE    memory for clean tree nodes (K, M, G; default 64M)\n"
			"  -o 32bittimes    new objects keep whole-second times (12 bytes less each)\n"
			"  and libfuse's options: allow_other, default_permissions, ...\n");
		fuse_opt_free_args(&args);
		free(o.image);
		return o.help ? 0 : 2;
	}
	B.sync = o.sync;
	B.ro = o.ro;
	B.kernel_perms = o.kernel_perms;
	B.commit_secs = o.commit ? o.commit : 5;
	for (int i = 0; i < args.argc; i++)
		if (!strcmp(args.argv[i], "-d") || !strcmp(args.argv[i], "-f"))
			B.debug = true;
	oo.rw = !o.ro;
	oo.log = engine_log;
	oo.seconds_only = o.secs;
	B.image = o.image;
	if (o.cache) {
		uint64_t bytes;

		if (r4_parse_size(o.cache, &bytes) || bytes < 4096) {
			fprintf(stderr, "r4fuse: cache=%s: want a size like 64M\n", o.cache);
			free(o.cache);
			fuse_opt_free_args(&args);
			free(o.image);
			return 2;
		}
		oo.cache_nodes = (size_t)(bytes / 4096);	/* 4 KiB nodes */
		free(o.cache);
	}
	if (!o.ro) {
		/* the lock r4sh takes: one writer per image */
		struct flock fl = {.l_type = F_WRLCK, .l_whence = SEEK_SET};

		B.lockfd = open(o.image, O_RDWR | O_CLOEXEC);
		if (B.lockfd < 0 || fcntl(B.lockfd, F_SETLK, &fl) < 0) {
			fprintf(stderr, "r4fuse: %s: %s\n", o.image, B.lockfd < 0 ? strerror(errno)
				: "in use by another program (r4sh or r4fuse)");
			fuse_opt_free_args(&args);
			free(o.image);
			return 1;
		}
	}
	rc = r4_open(o.image, &oo, &B.db);
	if (rc == -EROFS && oo.rw) {
		/* marked damaged: readable, never written until checked */
		fprintf(stderr, "r4fuse: %s: mounted read-only\n",
			o.image);
		close(B.lockfd);
		B.lockfd = -1;
		o.ro = 1;
		B.ro = true;
		oo.rw = false;
		rc = r4_open(o.image, &oo, &B.db);
	}
	if (rc) {
		fprintf(stderr, "r4fuse: %s: cannot mount it: %s\n", o.image, r4_strerror(rc));
		fuse_opt_free_args(&args);
		free(o.image);
		return 1;
	}
	openlog("r4fuse", LOG_PID, LOG_DAEMON);
	/* default_permissions: the kernel checks mode bits; else the bridge does */
	if (B.kernel_perms)
		fuse_opt_add_arg(&args, "-odefault_permissions");
	if (o.ro)
		fuse_opt_add_arg(&args, "-oro");
	/* the image's full path names the mount (r4sh IMAGE finds it there) */
	char real[4096], *fsname = NULL;
	size_t fsn = 0;
	FILE *fs = realpath(o.image, real) ? open_memstream(&fsname, &fsn) : NULL;

	if (fs) {
		fputs("-ofsname=", fs);
		for (const char *c = real; *c; c++) {
			if (*c == ',' || *c == '\\')
				fputc('\\', fs);	/* (fuse_opt's escape) */
			fputc(*c, fs);
		}
		fclose(fs);
	}
	fuse_opt_add_arg(&args, fsname ? fsname : "-ofsname=r4");
	free(fsname);
	fuse_opt_add_arg(&args, "-osubtype=r4");
	/* thread pool defaults, before the user's -o so those win (3.14 warns
	 * about its own unset defaults) */
	fuse_opt_insert_arg(&args, 1, "-omax_threads=16,max_idle_threads=10");
	/* attributes are asked for every time: libfuse's path API gives each
	 * name of a hard-linked file its own kernel inode, so a cached size or
	 * nlink of one name would go stale when the other changes (the data
	 * follows: auto_inval_data drops pages when the attributes moved) */
	fuse_opt_insert_arg(&args, 1, "-oattr_timeout=0");
	rc = fuse_main(args.argc, args.argv, &fb_ops, NULL);
	if (B.db)	/* never mounted: destroy did not run */
		r4_close(B.db);
	fuse_opt_free_args(&args);
	free(B.image);
	if (B.lockfd >= 0)
		close(B.lockfd);
	return rc ? 1 : 0;
}
