/*
 * r4fuse.c - an r4 image as a mounted file system (libfuse3, the
 * low-level API).  Thin: each fb_<op> translates its arguments, takes the
 * one bridge mutex, makes the r4_file_* calls and replies with fb_err(rc).
 *
 * Inodes: the kernel's inode is the engine's object, one per object
 * however many names it has.  A node keeps a weak engine handle on its
 * object (r4_file_weaken): a name the kernel still remembers does not keep
 * a removed object alive; an open file's handle does (the orphans of
 * engine/fs.c).  Node ids are object ids (the root is FUSE's 1); the pseudo
 * files, the control file and the meta view get ids with the top bit set.
 *
 * Transactions: POSIX calls are grouped into one engine transaction,
 * committed every commit= seconds (default 5), by fsync and unmount, and
 * after every call with -o sync.  A grouped call that fails after it
 * changed something poisons the group: the group is aborted, as a crash
 * would lose it, and the error logged.
 *
 * Reiser4 semantics through POSIX:
 *  - the pseudo files of every directory by name (cat dir/..owner, echo
 *    0700 > dir/..mode), never in readdir, read and written through
 *    r4_run as the calling process's uid and gids;
 *  - /..meta: every object as a directory of its pseudo files and
 *    children, so that files reach theirs (..meta/etc/hosts/..mode);
 *  - the control file /..reiser4: write an R4L command, read back its
 *    values (or its diagnostics): one unit per command; written
 *    write-only, each complete command runs at its write(2), which
 *    fails with its error;
 *  - user.r4.NAME extended attributes for the pseudo file ..NAME, asked
 *    for by name (listed with -o list_pseudo_xattrs);
 *  - audit records (..audit) of the POSIX changes of audited objects.
 * Changes those make behind the kernel's back invalidate its caches:
 * attributes at once, names and pages by the invalidation thread.
 */
#define FUSE_USE_VERSION 31

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <fuse_lowlevel.h>
#include <linux/falloc.h>
#include <pthread.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/loop.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include "r4_lang.h"

#if FUSE_VERSION >= FUSE_MAKE_VERSION(3, 12)
/* (libfuse declares it for FUSE_USE_VERSION >= 312 only; the 3.1 loop of
 * 3.14 leaks its configuration) */
int fuse_session_loop_mt_312(struct fuse_session *se, struct fuse_loop_config *config);
#endif

#define CONTROL "..reiser4"	/* in the root */
#define META "..meta"		/* in the root */
#define XATTR "user.r4."	/* user.r4.mode is ..mode */
#define SYNTH (1ULL << 63)	/* the ids of nodes that are no objects */
#define CONTROL_ID (SYNTH | 1)
#define META_ID (SYNTH | 2)

enum kind {
	K_OBJ,			/* an object of the tree */
	K_PSEUDO,		/* a pseudo file of its parent node (..mode) */
	K_CONTROL,		/* /..reiser4 */
	K_META,			/* an object seen through /..meta, as a directory */
};

/* What the kernel knows by a node id. */
struct node {
	fuse_ino_t id;
	enum kind kind;
	uint64_t nlookup;		/* the kernel's references: lookups less forgets */
	unsigned refs;			/* nlookup > 0, child nodes, open handles */
	unsigned opens;			/* open handles */
	r4_file *obj;			/* K_OBJ: weak (the root's: strong) */
	struct node *parent;		/* the directory it was last found in (K_OBJ), its
					   owner (K_PSEUDO), the view's parent (K_META) */
	char *name;			/* its name there */
	struct node *next;		/* in the table's chain */
};

struct bridge {
	r4_db *db;
	char *image;
	struct fuse_session *se;
	pthread_mutex_t mu;
	pthread_cond_t wake;
	pthread_t committer;
	bool stop, sync, ro, debug, started;
	bool errors_continue;		/* -o errors=continue: a dropped group leaves it writable */
	struct handle *handles;		/* open files, for what a dropped group lost */
	bool kernel_perms;		/* -o default_permissions: the kernel checks */
	bool list_xattrs;		/* -o list_pseudo_xattrs: listxattr names them */
	unsigned commit_secs;
	double entry_timeout, attr_timeout;
	struct node **tab;		/* nodes by id */
	size_t ntab, nnodes;
	struct node *root;
};

static struct bridge B = {.mu = PTHREAD_MUTEX_INITIALIZER, .wake = PTHREAD_COND_INITIALIZER,
			  .commit_secs = 5, .entry_timeout = 1, .attr_timeout = 1};

/* A handle on a pseudo file or the control file: what was written, what
 * there is to read. */
struct special {
	bool control;
	bool whole;			/* an aggregate's (invert's) text: applied whole at close */
	bool wronly;			/* opened write-only: no answer can be read */
	int err;			/* a text refused at write(2): nothing runs */
	char *path;			/* the pseudo file's path */
	char *in;			/* written, not yet run */
	size_t nin;
	size_t base;			/* the file offset in[0] was written at */
	char *out;			/* the text read returns */
	size_t nout, rpos;		/* (the control file reads from rpos, not the file
					   offset its writes moved) */
	bool have_out, written;
	uint32_t umask;			/* the writer's, as its last write(2) found it */
};

/* What fi->fh holds for every open file and directory. */
struct handle {
	struct node *n;
	r4_file *file;			/* a regular file or directory, held: unlink (to
					   its last close) does not remove it */
	bool append;			/* O_APPEND: each write goes to the end */
	struct special *sp;		/* or a pseudo file or the control file */
	struct r4_dirpos *cur;		/* a directory: cur[i] resumes at entry i */
	size_t ncur, capcur;
	char *list;			/* a meta view directory: its names, one per line */
	size_t nlist;
	struct handle *prev, *next;	/* in B.handles */
};

static struct handle *handle_of(const struct fuse_file_info *fi)
{
	return fi ? (struct handle *)(uintptr_t)fi->fh : NULL;
}

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

/* ---- nodes (all under the mutex) ---- */

static size_t slot(fuse_ino_t id)
{
	return (size_t)((id * 0x9E3779B97F4A7C15ULL) >> 17) & (B.ntab - 1);
}

static struct node *node_find(fuse_ino_t id)
{
	if (!B.ntab)
		return NULL;
	for (struct node *n = B.tab[slot(id)]; n; n = n->next)
		if (n->id == id)
			return n;
	return NULL;
}

/* Into the table, under n->id. */
static int node_insert(struct node *n)
{
	if (B.nnodes >= B.ntab) {
		size_t old = B.ntab, cap = old ? 2 * old : 1024;
		struct node **tab = calloc(cap, sizeof(*tab)), **was = B.tab;

		if (!tab)
			return -ENOMEM;
		B.tab = tab;
		B.ntab = cap;
		for (size_t i = 0; i < old; i++)
			for (struct node *m = was[i], *next; m; m = next) {
				next = m->next;
				m->next = B.tab[slot(m->id)];
				B.tab[slot(m->id)] = m;
			}
		free(was);
	}
	n->next = B.tab[slot(n->id)];
	B.tab[slot(n->id)] = n;
	B.nnodes++;
	return 0;
}

static void node_unref(struct node *n)
{
	while (n && !--n->refs) {
		struct node *parent = n->parent, **pp = &B.tab[slot(n->id)];

		while (*pp != n)
			pp = &(*pp)->next;
		*pp = n->next;
		B.nnodes--;
		r4_file_close(n->obj);	/* (weak: removes nothing) */
		free(n->name);
		free(n);
		n = parent;
	}
}

/* n was found as name in parent: remember where (renames move it). */
static int node_place(struct node *n, struct node *parent, const char *name)
{
	char *nm;

	if (n->parent == parent && n->name && !strcmp(n->name, name))
		return 0;
	if (!(nm = strdup(name)))
		return -ENOMEM;
	free(n->name);
	n->name = nm;
	if (parent)
		parent->refs++;
	node_unref(n->parent);
	n->parent = parent;
	return 0;
}

/* The node of the object f names, found as name in parent; takes f. */
static int node_obj(r4_file *f, struct node *parent, const char *name, struct node **out)
{
	fuse_ino_t id = r4_file_id(f);
	struct node *n = node_find(id);
	int rc;

	if ((rc = r4_file_weaken(f))) {
		r4_file_close(f);
		return rc;
	}
	if (n) {
		/* the new handle: an aborted transaction's ids come again */
		if (n == B.root)
			r4_file_close(f);
		else
			r4_file_close(n->obj), n->obj = f;
	} else if (!(n = calloc(1, sizeof(*n))) ||
		   (n->id = id, rc = node_insert(n))) {
		r4_file_close(f);
		free(n);
		return rc ? rc : -ENOMEM;
	} else {
		n->kind = K_OBJ;
		n->obj = f;
	}
	if ((rc = node_place(n, parent, name)) && !n->refs) {
		node_unref((n->refs = 1, n));
		return rc;
	}
	*out = n;
	return rc;
}

/* The node of a pseudo file, the control file or a meta view object:
 * its id is a hash of where it is, so that each lookup finds it again. */
static int node_synth(enum kind kind, struct node *parent, const char *name, struct node **out)
{
	uint64_t h = 1469598103934665603ULL ^ parent->id;
	struct node *n;
	int rc;

	for (const char *c = name; *c; c++)
		h = (h ^ (unsigned char)*c) * 1099511628211ULL;
	h = kind == K_CONTROL ? CONTROL_ID : parent == B.root && kind == K_META ? META_ID
	    : SYNTH | (h & ~SYNTH) | 3;
	for (;; h = SYNTH | ((h + 1) & ~SYNTH)) {
		if (!(n = node_find(h)))
			break;
		if (n->kind == kind && n->parent == parent && !strcmp(n->name, name)) {
			*out = n;
			return 0;
		}
		if (kind == K_CONTROL || h == META_ID)
			return -EIO;	/* (cannot be: those have one place) */
	}
	if (!(n = calloc(1, sizeof(*n))) || !(n->name = strdup(name)) ||
	    (n->id = h, rc = node_insert(n))) {
		if (n)
			free(n->name);
		free(n);
		return -ENOMEM;
	}
	n->kind = kind;
	n->parent = parent;
	parent->refs++;
	*out = n;
	return 0;
}

/* One more kernel reference (a lookup answered). */
static void node_looked_up(struct node *n)
{
	if (!n->nlookup++)
		n->refs++;
}

static void node_forget(fuse_ino_t id, uint64_t k)
{
	struct node *n = node_find(id);

	if (!n || n == B.root)
		return;
	n->nlookup = k < n->nlookup ? n->nlookup - k : 0;
	if (!n->nlookup)
		node_unref(n);
}

/* The names an object or meta view node was last found under, joined
 * ("/a/b"; the root's is ""), unchecked. */
static int node_names(struct node *n, char **out)
{
	size_t len = 0, at;
	char *p;

	for (struct node *m = n; m && m != B.root && m->id != META_ID; m = m->parent)
		len += 1 + strlen(m->name);
	if (!(p = malloc(len + 1)))
		return -ENOMEM;
	at = len;
	p[len] = 0;
	for (struct node *m = n; m && m != B.root && m->id != META_ID; m = m->parent) {
		size_t k = strlen(m->name);

		at -= k;
		memcpy(p + at, m->name, k);
		p[--at] = '/';
	}
	*out = p;
	return 0;
}

/*
 * The path of a node, for what the engine knows only by path (pseudo
 * files through r4_run, messages): the names it was last found under.
 * An object's path is checked to still lead to it (-ESTALE when a change
 * the kernel did not make moved it).  The meta view's nodes are paths of
 * the view: /..meta/a/b is "/a/b".
 */
static int node_path(struct node *n, char **out)
{
	char *p;
	int rc;

	if (n == B.root || n->id == META_ID)
		return (*out = strdup("/")) ? 0 : -ENOMEM;
	if (n->kind == K_CONTROL)
		return (*out = strdup("/" CONTROL)) ? 0 : -ENOMEM;
	if (n->kind == K_PSEUDO) {
		if ((rc = node_path(n->parent, &p)))
			return rc;
		rc = asprintf(out, "%s/%s", strcmp(p, "/") ? p : "", n->name) < 0 ? -ENOMEM : 0;
		free(p);
		return rc;
	}
	if ((rc = node_names(n, &p)))
		return rc;
	if (n->kind == K_OBJ) {
		struct r4_stat st;

		if ((rc = r4_stat(B.db, p, &st)) || st.ino != r4_file_id(n->obj)) {
			free(p);
			return rc && rc != -ENOENT ? rc : -ESTALE;
		}
	}
	*out = p;
	return 0;
}

/* ---- errors and transactions ---- */

/* The one place engine codes become FUSE results (a positive errno). */
static int fb_err(const char *op, struct node *n, int rc)
{
	char *path = NULL;

	if (rc >= 0)
		return 0;
	if (rc == -EUCLEAN || rc == -EBADMSG || rc < -4095 ||
	    !strcmp(r4_strerror(rc), "Unknown error")) {
		if (n && node_path(n, &path))
			path = NULL;
		if (rc == -EUCLEAN || rc == -EBADMSG)
			logmsg(LOG_ERR, "r4fuse: %s %s: the image is damaged (%s)", op,
			       path ? path : "(an unlinked object)", r4_strerror(rc));
		else
			logmsg(LOG_ERR, "r4fuse: %s %s: unexpected %d", op,
			       path ? path : "(an unlinked object)", rc);
		free(path);
		return EIO;
	}
	return -rc;
}

/*
 * The group is dropped (under the mutex): a commit failed, or a call
 * failed half-way.  Its changes are lost: the log says which open files
 * had some (r4_file_error then reports it to each of their descriptors,
 * at fsync and close, once), and unless -o errors=continue the mount
 * turns read-only, as ext4's errors=remount-ro.
 */
static void drop_group(const char *why)
{
	unsigned n = 0;

	r4_abort(B.db);
	logmsg(LOG_ERR, "r4fuse: %s: the changes since the last commit are lost", why);
	for (struct handle *h = B.handles, *o; h; h = h->next) {
		char *path = NULL;

		for (o = B.handles; o != h && o->n != h->n; o = o->next)
			;
		if (o != h || !h->file || !r4_file_error(h->file, false))
			continue;	/* (a file once, by its first handle) */
		/* (by the name it was last found under: the group may have made it) */
		if (n++ < 20)
			logmsg(LOG_ERR, "r4fuse: lost: changes to %s (inode %llu)",
			       node_names(h->n, &path) ? "?" : path,
			       (unsigned long long)r4_file_id(h->file));
		free(path);
	}
	if (n > 20)
		logmsg(LOG_ERR, "r4fuse: lost: and changes to %u more open files", n - 20);
	if (!B.errors_continue && !B.ro) {
		B.ro = true;
		logmsg(LOG_ERR, "r4fuse: %s: mounted read-only now (errors=remount-ro); unmount, "
		       "check it (r4 fsck) and mount it again", B.image);
	}
}

/* Commit the group (under the mutex). */
static int commit_group(void)
{
	int rc = 0;

	if (r4_in_txn(B.db) && (rc = r4_commit(B.db))) {
		char why[128];

		snprintf(why, sizeof(why), "commit failed (%s)", r4_strerror(rc));
		drop_group(why);
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
static int change_end(const char *op, int rc)
{
	if (rc && r4_txn_error(B.db)) {
		char why[128];

		snprintf(why, sizeof(why), "%s failed after a change (%s)", op, r4_strerror(rc));
		drop_group(why);
	} else if (!rc && B.sync) {
		rc = commit_group();
	}
	return rc;
}

/* A call refused for want of space changed nothing (the group is open and
 * usable); once the group is committed, what it freed and the last
 * commit's log blocks come back (docs/engine.md, "Space"): worth one more
 * try.  (A call an audit record undid left no group: it stays refused.) */
static bool regroup(int rc)
{
	return rc == -ENOSPC && r4_in_txn(B.db) && !r4_txn_error(B.db) && !commit_group();
}

/* A change: the group opened, the call, its end (and once more, refused). */
#define CHANGE(op, call) \
	(!(rc = change_begin()) && regroup(rc = change_end(op, (call))) && !(rc = change_begin()) \
	 ? (rc = change_end(op, (call))) : rc)

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

/* ---- audit records (LANGUAGE.md 6.4, docs/semantics.md) ----
 *
 * A POSIX change of an audited object, or of an entry of an audited
 * directory, appends the executor's record to the log in the change's
 * transaction (r4_audit_append).  The engine cannot undo one call of a
 * group, so a call that changes audited objects
 *  - reads their settings and checks that each log is there before it
 *    changes anything: a log renamed away fails it with ENOENT and the
 *    group stays (and an unlink is recorded although the setting goes
 *    with the object's last name);
 *  - commits the group first, so that a record that cannot be written
 *    after the change (a full volume) undoes this call alone: the group,
 *    then holding nothing else, is dropped.
 * An image with no r4 records pays a flag test per object (r4_audit_log).
 */
#define MAX_AUDITED 4	/* a rename: its object, the one replaced, two directories */

struct audit {
	uint32_t uid;			/* the calling process's */
	unsigned n;
	struct audited {
		uint64_t ino;
		char *log;		/* the setting, read before the change */
		const char *op;		/* "write", ... */
		char *path;
		uint64_t len;
	} v[MAX_AUDITED];
};

struct other_name {
	uint64_t ino;
	char *name;
};

static int other_name_fn(void *ctx, const char *name, size_t len, uint64_t ino, uint32_t type)
{
	struct other_name *o = ctx;

	(void)type;
	if (ino != o->ino || (name[0] == '.' && (len == 1 || (len == 2 && name[1] == '.'))))
		return 0;
	o->name = strndup(name, len);
	return 1;
}

/* The name n was last found under went (a hard link removed, the file
 * still open or linked): another name of its object in that directory, if
 * it has one, becomes n's name.  -ESTALE when there is none. */
static int node_refind(struct node *n)
{
	struct other_name o = {r4_file_id(n->obj), NULL};
	struct r4_dirpos pos = {0};
	int rc;

	if (!n->parent || n->parent->kind != K_OBJ)
		return -ESTALE;
	rc = r4_file_readdir(n->parent->obj, &pos, other_name_fn, &o);
	if (!o.name)
		return rc < 0 ? rc : -ESTALE;
	rc = node_place(n, n->parent, o.name);
	free(o.name);
	return rc;
}

/* Where a record says the change was: the object n (name NULL) or the
 * entry name of directory n, by the names they were last found under.  An
 * object's name removed since is replaced by another in the same
 * directory; with none there, the removed one is still the best known. */
static int audit_path(struct node *n, const char *name, char **out)
{
	char *p = NULL;
	int rc = node_path(n, &p);

	if (rc == -ESTALE && !name && n->kind == K_OBJ && !node_refind(n))
		rc = node_path(n, &p);
	if (rc == -ESTALE)
		rc = node_names(n, &p);
	if (!rc && name)
		rc = asprintf(out, "%s/%s", strcmp(p, "/") ? p : "", name) < 0 ? -ENOMEM : 0;
	else if (!rc)
		*out = p, p = NULL;
	free(p);
	return rc;
}

/* Before a change of object ino (0: none) that op will record as at n (or
 * its entry name), len: its log, which must be there (-ENOENT). */
static int audit_add(struct audit *a, uint64_t ino, const char *op, struct node *n,
		     const char *name, uint64_t len)
{
	struct audited *v;
	char *log = NULL;
	int rc;

	if (!ino || B.ro)
		return 0;	/* (read-only: the change is refused anyway) */
	for (unsigned i = 0; i < a->n; i++)
		if (a->v[i].ino == ino)
			return 0;	/* (a directory both ends of a rename are in) */
	if (a->n == MAX_AUDITED)
		return -EIO;	/* (no call changes more) */
	if ((rc = r4_audit_log(B.db, ino, &log)) || !log)
		return rc;
	v = &a->v[a->n];
	/* (0: no record after all, the object is its own log) */
	if ((rc = r4_audit_append(B.db, log, ino, a->uid, NULL, NULL, 0)) <= 0 ||
	    (rc = audit_path(n, name, &v->path))) {
		r4_free(log);
		return rc;
	}
	v->ino = ino;
	v->log = log;
	v->op = op;
	v->len = len;
	a->n++;
	return 0;
}

static void audit_fini(struct audit *a)
{
	for (unsigned i = 0; i < a->n; i++) {
		r4_free(a->v[i].log);
		free(a->v[i].path);
	}
	a->n = 0;
}

/* Before the change: the group so far is committed (see above). */
static int audit_begin(struct audit *a)
{
	return a->n ? commit_group() : 0;
}

/* After the call (rc): its records, then change_end.  One that cannot be
 * written undoes the call, the only one in the group. */
static int audit_end(struct audit *a, const char *op, int rc)
{
	for (unsigned i = 0; !rc && i < a->n; i++) {
		struct audited *v = &a->v[i];

		rc = r4_audit_append(B.db, v->log, v->ino, a->uid, v->op, v->path, v->len);
		if (rc && r4_in_txn(B.db)) {
			logmsg(LOG_ERR, "r4fuse: %s %s: cannot audit into '%s' (%s): the call is "
			       "undone", op, v->path, v->log, r4_strerror(rc));
			r4_abort(B.db);
		}
	}
	return change_end(op, rc);
}

/* CHANGE for a call that may change the audited objects of a: their
 * records follow the call in its transaction. */
#define CHANGE_AUDITED(op, a, call) \
	(!(rc = audit_begin(a)) && !(rc = change_begin()) && \
	 regroup(rc = audit_end(a, op, (call))) && !(rc = change_begin()) \
	 ? (rc = audit_end(a, op, (call))) : rc)

/* ---- who calls ---- */

/* The calling process as the engine's identity; g holds its groups. */
struct caller {
	struct r4_ident who;
	uint32_t g[64];
};

static void caller_get(fuse_req_t req, struct caller *c)
{
	const struct fuse_ctx *fc = fuse_req_ctx(req);
	gid_t groups[64];
	int ng = 0;

	/* (root passes every check: its groups are not asked for) */
	if (fc->uid && ((ng = fuse_req_getgroups(req, 64, groups)) < 0 || ng > 64))
		ng = 0;
	for (int i = 0; i < ng; i++)
		c->g[i] = groups[i];
	c->who = (struct r4_ident){fc->uid, fc->gid, c->g, (size_t)ng, fc->umask};
}

/*
 * The mutex, and the engine acting as c for the handle calls: it checks
 * the POSIX rules itself (engine/perm.c), or with default_permissions
 * leaves checking to the kernel but still gives new objects their owner,
 * umask and group.  (r4_act_as cannot fail for 64 groups.)
 */
static void lock_as(const struct caller *c)
{
	pthread_mutex_lock(&B.mu);
	r4_act_as(B.db, &c->who, B.kernel_perms ? R4_AS_NOCHECK : 0);
}

static void unlock(void)
{
	r4_act_as(B.db, NULL, 0);
	pthread_mutex_unlock(&B.mu);
}

/*
 * The umask of the calling process, for what it makes through the
 * control file and pseudo files: FUSE passes one only with the calls that
 * create (mkdir, mknod, create), so it is read from /proc (its Umask:
 * line, Linux 4.7) at each write(2), and kept with the text for the read,
 * flush or release that runs it (when the writer may be gone).  Unknown: 022.
 */
static void caller_umask(fuse_req_t req, struct caller *c)
{
	const struct fuse_ctx *fc = fuse_req_ctx(req);
	char path[64], line[128];
	unsigned um = 022;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)fc->pid);
	if (fc->pid > 0 && (f = fopen(path, "re"))) {
		while (fgets(line, sizeof(line), f))
			if (sscanf(line, "Umask: %o", &um) == 1)
				break;
		fclose(f);
	}
	c->who.umask = um & 0777;
}

/* ---- pseudo files and the control file ---- */

static bool is_pseudo(const char *name)
{
	return r4_ns_pseudo_spelling(name, strlen(name));
}

/* The control file or the meta view: names of the mount root the bridge
 * keeps for itself, before any entry of that name (docs/semantics.md). */
static bool is_special(const struct node *p, const char *name)
{
	return p == B.root && (!strcmp(name, CONTROL) || !strcmp(name, META));
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
static void ctl_parse(const struct caller *c, const char **src, size_t *len, struct ctl *cl)
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
		} else if (!strncmp(line, "as ", 3) && c->who.uid == 0) {
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

/*
 * Run R4L src as the caller (or cl's identity); its values, or its
 * diagnostics, as text.  The grouped POSIX changes commit first: a
 * command is a unit of its own.  *changed says whether it changed the
 * volume (the kernel's caches are then stale).
 */
static int run_r4l(const struct caller *c, const char *src, size_t len, char **out, size_t *nout,
		   bool values_only, const struct ctl *cl, bool *changed)
{
	struct r4_run_opts ro = {.name = "<control>", .exec = {.read_objects = true}};
	struct r4_run *r = NULL;
	struct r4_info before, after;
	FILE *f;
	int rc;

	ro.exec.who = cl && cl->have_as ? cl->as.who : c->who;
	if (cl) {
		ro.exec.cwd = cl->cwd;
		ro.per_statement = cl->per_statement;
	}
	if ((rc = commit_group()))
		return rc;
	r4_info(B.db, &before);
	rc = r4_run(B.db, src, len, &ro, &r);
	r4_info(B.db, &after);
	if (changed)
		*changed = after.commits != before.commits;
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

/* The text of the pseudo file at path (a value of its own, as R4L reads it). */
static int pseudo_text(const struct caller *c, const char *path, char **out, size_t *n)
{
	char *q = r4_path_quote(path);
	int rc = q ? run_r4l(c, q, strlen(q), out, n, true, NULL, NULL) : -ENOMEM;

	free(q);
	return rc;
}

/* path <- the bytes v[0..n). */
static int pseudo_write(const struct caller *c, const char *path, const char *v, size_t n,
			bool *changed)
{
	char *q = r4_path_quote(path), *cmd = q ? malloc(strlen(q) + n + 40) : NULL, *out = NULL;
	size_t len, nout = 0;
	int rc;

	if (!cmd) {
		free(q);
		return -ENOMEM;
	}
	len = (size_t)sprintf(cmd, "%s <- #s%zu:", q, n);
	memcpy(cmd + len, v, n);
	rc = run_r4l(c, cmd, len + n, &out, &nout, true, NULL, changed);
	free(out);
	free(cmd);
	free(q);
	return rc;
}

/* Run what was written to s: the control file's command, or the pseudo
 * file's new contents; the command's error, or the write's. */
static int special_flush(const struct caller *c, struct special *s, bool *changed)
{
	int rc = 0;

	if (s->err || !s->written)
		return s->err;
	s->written = false;
	free(s->out);
	s->out = NULL;
	s->nout = 0;
	if (s->control) {
		struct ctl cl = {0};
		const char *src = s->in ? s->in : "";
		size_t n = s->nin;

		ctl_parse(c, &src, &n, &cl);
		rc = run_r4l(c, src, n, &s->out, &s->nout, false, &cl, changed);
		free(cl.cwd);
		s->have_out = true;
		s->rpos = 0;	/* the answer is the diagnostics, read back */
	} else {
		rc = pseudo_write(c, s->path, s->in ? s->in : "", s->nin, changed);
	}
	free(s->in);
	s->in = NULL;
	s->nin = 0;
	return rc;
}

/*
 * ---- the kernel's caches after a change it did not make ----
 *
 * A control-file command, a pseudo file or an extended attribute written
 * may have touched any object, so what the kernel caches of every object
 * node goes: attributes, names and pages.
 *
 * Attributes are marked stale by the handler itself, before it replies
 * (invalidate_all): that notification only marks the inode, under no lock
 * of the kernel's, so the next stat(2) of any object asks the bridge, and
 * so does the next read(2): libfuse asks for auto_inval_data, so a read
 * checks stale attributes first and a changed size or mtime drops the
 * file's cached pages.
 *
 * Names and pages are dropped by the invalidation thread, after the reply.
 * Dropping a name locks its directory's inode (and a page its page), and
 * the process whose call made the change may hold that lock until the
 * reply: setxattr(2) holds its inode's, so a handler that dropped the
 * names in a directory it set an attribute of waited for itself (issue
 * 21).  No handler waits for the thread, so the thread waits at most until
 * the workers have answered the requests of whoever holds the lock.  It
 * takes the ids and names under the mutex and notifies without it: it
 * never touches a node the mutex does not keep alive.  Invalidations asked
 * for while it works are done by its next pass.  serve stops it once the
 * session loop has ended, before the session's device is closed.
 */
static struct {
	pthread_t thread;
	pthread_cond_t wake;
	bool started, stop, asked;	/* (stop and asked under the mutex) */
} INV = {.wake = PTHREAD_COND_INITIALIZER};

struct stale {
	fuse_ino_t id, parent;
	char *name;			/* its name in parent; NULL: the inode alone */
};

/* The object nodes the kernel knows (under the mutex), with their names
 * if names; *n gets how many.  NULL when out of memory. */
static struct stale *stale_nodes(bool names, size_t *n)
{
	struct stale *v = calloc(B.nnodes + 1, sizeof(*v));

	*n = 0;
	for (size_t i = 0; v && i < B.ntab; i++)
		for (struct node *m = B.tab[i]; m; m = m->next) {
			if (m->kind != K_OBJ)
				continue;	/* (the others are never cached) */
			v[*n].id = m->id;
			if (names && m->parent) {
				v[*n].parent = m->parent->id;
				v[*n].name = strdup(m->name);	/* (NULL: the inode alone) */
			}
			++*n;
		}
	if (!v)
		logmsg(LOG_ERR, "r4fuse: out of memory: the kernel's caches stay as they are");
	return v;
}

static void *invalidator(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&B.mu);
	for (;;) {
		struct stale *v;
		size_t n;

		while (!INV.asked && !INV.stop)
			pthread_cond_wait(&INV.wake, &B.mu);
		if (INV.stop)
			break;
		INV.asked = false;
		v = stale_nodes(true, &n);
		pthread_mutex_unlock(&B.mu);
		for (size_t i = 0; i < n; i++) {
			if (v[i].name)
				fuse_lowlevel_notify_inval_entry(B.se, v[i].parent, v[i].name,
								 strlen(v[i].name));
			fuse_lowlevel_notify_inval_inode(B.se, v[i].id, 0, 0);
			free(v[i].name);
		}
		free(v);
		pthread_mutex_lock(&B.mu);
	}
	pthread_mutex_unlock(&B.mu);
	return NULL;
}

static void invalidator_start(void)
{
	int err = pthread_create(&INV.thread, NULL, invalidator, NULL);

	if (err)
		logmsg(LOG_ERR, "r4fuse: no invalidation thread (%s): names the control file, "
		       "pseudo files or xattrs change stay cached for entry_timeout", strerror(err));
	INV.started = !err;
}

/* Once the session loop has ended, so that no handler asks for more.  After
 * an unmount the kernel's notifications answer at once.  After a signal,
 * with the mount still up, a pass may still wait for a lock whose holder's
 * request no worker will read: then only aborting the connection (fusectl)
 * ends it. */
static void invalidator_stop(void)
{
	pthread_mutex_lock(&B.mu);
	INV.stop = true;
	pthread_cond_signal(&INV.wake);
	pthread_mutex_unlock(&B.mu);
	if (INV.started)
		pthread_join(INV.thread, NULL);
	INV.started = false;
}

/* After a change the kernel did not make (outside the mutex): attributes
 * stale now, names and pages by the invalidation thread. */
static void invalidate_all(void)
{
	struct stale *v;
	size_t n;

	pthread_mutex_lock(&B.mu);
	v = stale_nodes(false, &n);
	INV.asked = true;
	pthread_cond_signal(&INV.wake);
	pthread_mutex_unlock(&B.mu);
	for (size_t i = 0; i < n; i++)
		fuse_lowlevel_notify_inval_inode(B.se, v[i].id, -1, 0);	/* (-1: no pages) */
	free(v);
}

/* An object of the tree the kernel may ask for (not the meta view's). */
static int obj_node(fuse_ino_t id, struct node **out)
{
	struct node *n = node_find(id);

	if (!n)
		return -ESTALE;
	if (n->kind != K_OBJ)
		return n->kind == K_META ? -EPERM : -EINVAL;
	*out = n;
	return 0;
}

/* ---- attributes ---- */

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

/*
 * The attributes of n as the caller sees them (under the mutex): an
 * object's own; a meta view object is a directory; a pseudo file is a
 * regular file owned as its object, the size of its text (one that
 * cannot be read, ..unlink, still exists).
 */
static int attr_of(const struct caller *c, struct node *n, struct stat *st)
{
	struct r4_stat r;
	char *path = NULL, *owner = NULL, *text = NULL;
	size_t len = 0;
	int rc;

	if (n->kind == K_OBJ) {
		/* (stat(2) by name: the engine checks the way to it) */
		if ((rc = r4_file_stat(n->obj, &r)))
			return rc;
		fill(st, &r);
		return 0;
	}
	if ((rc = node_path(n, &path)))
		return rc;
	if (n->kind == K_META) {
		if (!(rc = r4_access(B.db, path, B.kernel_perms ? NULL : &c->who, 0, &r))) {
			fill(st, &r);
			st->st_mode = S_IFDIR | (r.mode & 0777) | ((r.mode & 0444) >> 2);
			st->st_nlink = 2;
			st->st_size = 0;
		}
	} else if (!(rc = node_path(n->parent, &owner)) &&
		   !(rc = r4_access(B.db, owner, B.kernel_perms ? NULL : &c->who, 0, &r))) {
		if (n->kind == K_PSEUDO) {
			int trc = pseudo_text(c, path, &text, &len);

			if (trc == -ENOENT || trc == -EINVAL)
				rc = trc;
		}
		if (!rc) {
			fill(st, &r);
			st->st_mode = S_IFREG | (n->kind == K_CONTROL ? 0666 : 0644);
			st->st_nlink = 1;
			st->st_size = (off_t)len;
			st->st_blocks = 0;
		}
	}
	if (!rc)
		st->st_ino = n->id;
	free(text);
	free(owner);
	free(path);
	return rc;
}

/* Pseudo files and the meta view change under the kernel: never cached. */
static double timeout_of(const struct node *n, double t)
{
	return n->kind == K_OBJ ? t : 0;
}

static void entry_of(struct node *n, const struct stat *st, struct fuse_entry_param *e)
{
	memset(e, 0, sizeof(*e));
	e->ino = n->id;
	e->attr = *st;
	e->attr_timeout = timeout_of(n, B.attr_timeout);
	e->entry_timeout = timeout_of(n, B.entry_timeout);
}

/* Answer an entry (a lookup's or a new object's): the kernel holds one
 * more reference, unless the answer did not reach it. */
static void reply_entry(fuse_req_t req, int rc, const struct fuse_entry_param *e,
			struct fuse_file_info *fi)
{
	if (rc) {
		fuse_reply_err(req, rc);
		return;
	}
	if (fi ? fuse_reply_create(req, e, fi) : fuse_reply_entry(req, e)) {
		pthread_mutex_lock(&B.mu);
		node_forget(e->ino, 1);
		pthread_mutex_unlock(&B.mu);
	}
}

/* ---- the operations ---- */

/* name in directory node p (under the mutex): its node, looked up once more. */
static int lookup_in(const struct caller *c, struct node *p, const char *name,
		     struct fuse_entry_param *e)
{
	struct node *n = NULL;
	struct stat st;
	r4_file *f;
	char *path = NULL;
	int rc;

	if (strlen(name) > 255)
		return -ENAMETOOLONG;
	if (p->kind == K_OBJ && !is_special(p, name)) {
		const struct r4_pseudo_info *ps;

		/* an entry first, else a pseudo file of the table */
		rc = r4_ns_resolve(p->obj, name, strlen(name), &f, &ps);
		if (!rc && ps) {
			rc = (rc = r4_file_access(p->obj, 1)) ? rc : node_synth(K_PSEUDO, p, name, &n);
		} else if (!rc && r4_is_computed(B.db, r4_file_id(f))) {
			/* an aggregate or invert is its text here, a file read
			 * and written like a pseudo file; the meta view reaches
			 * an aggregate's records */
			r4_file_close(f);
			rc = node_synth(K_PSEUDO, p, name, &n);
		} else if (!rc) {
			rc = node_obj(f, p, name, &n);
		}
	} else if (p->kind == K_OBJ || p->kind == K_META) {
		enum kind k = !is_pseudo(name) ? K_META : p != B.root ? K_PSEUDO
			      : !strcmp(name, CONTROL) ? K_CONTROL : !strcmp(name, META) ? K_META
			      : K_PSEUDO;

		if (k == K_META && p->kind == K_META) {
			/* a child in the view: it must exist */
			char *pp = NULL;

			if (!(rc = node_path(p, &pp)))
				rc = asprintf(&path, "%s/%s", strcmp(pp, "/") ? pp : "", name) < 0
				     ? -ENOMEM : r4_access(B.db, path, B.kernel_perms ? NULL : &c->who,
							   0, NULL);
			free(pp);
		} else {
			rc = p->kind == K_OBJ ? r4_file_access(p->obj, 1) : 0;
		}
		if (!rc)
			rc = node_synth(k, p, name, &n);
	} else {
		rc = -ENOTDIR;
	}
	free(path);
	if (!rc && (rc = attr_of(c, n, &st)) && !n->refs)
		node_unref((n->refs = 1, n));	/* (a pseudo name there is not) */
	if (rc)
		return rc;
	node_looked_up(n);
	entry_of(n, &st, e);
	return 0;
}

static void fb_lookup(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	struct fuse_entry_param e;
	struct caller c;
	struct node *p = NULL;
	int rc;

	caller_get(req, &c);
	lock_as(&c);
	p = node_find(parent);
	rc = p ? lookup_in(&c, p, name, &e) : -ESTALE;
	rc = fb_err("lookup", p, rc);
	unlock();
	reply_entry(req, rc, &e, NULL);
}

static void fb_forget(fuse_req_t req, fuse_ino_t id, uint64_t k)
{
	pthread_mutex_lock(&B.mu);
	node_forget(id, k);
	pthread_mutex_unlock(&B.mu);
	fuse_reply_none(req);
}

static void fb_forget_multi(fuse_req_t req, size_t count, struct fuse_forget_data *v)
{
	pthread_mutex_lock(&B.mu);
	for (size_t i = 0; i < count; i++)
		node_forget(v[i].ino, v[i].nlookup);
	pthread_mutex_unlock(&B.mu);
	fuse_reply_none(req);
}

static void fb_getattr(fuse_req_t req, fuse_ino_t id, struct fuse_file_info *fi)
{
	struct caller c;
	struct stat st;
	struct node *n;
	int rc;

	caller_get(req, &c);
	lock_as(&c);
	n = node_find(id);
	if (n && fi && handle_of(fi)->file) {
		struct r4_stat r;

		/* fstat(2): through the open file, which asks for no way to it */
		if (!(rc = r4_file_stat(handle_of(fi)->file, &r)))
			fill(&st, &r);
		rc = fb_err("getattr", n, rc);
	} else {
		rc = fb_err("getattr", n, n ? attr_of(&c, n, &st) : -ESTALE);
	}
	unlock();
	if (rc)
		fuse_reply_err(req, rc);
	else
		fuse_reply_attr(req, &st, timeout_of(n, B.attr_timeout));
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
	fuse_req_t req;
	char *buf;
	size_t size, used;
	struct handle *h;
	struct r4_dirpos *pos;
};

/* One entry more, numbered ncur + 1 (0 is the start); 1 when full. */
static int dir_add(struct fill_ctx *c, const char *name, uint64_t ino, uint32_t type)
{
	struct stat st = {.st_ino = ino, .st_mode = type};
	size_t n = fuse_add_direntry(c->req, c->buf + c->used, c->size - c->used, name, &st,
				     (off_t)c->h->ncur + 1);

	if (n > c->size - c->used)
		return 1;	/* this entry comes next time */
	c->used += n;
	return 0;
}

static int dir_fn(void *ctx, const char *name, size_t len, uint64_t ino, uint32_t type)
{
	struct fill_ctx *c = ctx;
	char n[256];
	int rc;

	if (len > 255)
		return 0;
	memcpy(n, name, len);
	n[len] = 0;
	if (is_special(c->h->n, n))
		return 0;	/* the control file's or meta view's name comes first */
	if (cur_put(c->h, c->pos))
		return -ENOMEM;
	if ((rc = dir_add(c, n, ino, type)))
		return rc;
	c->h->ncur++;
	return 0;
}

static void fb_readdir(fuse_req_t req, fuse_ino_t id, size_t size, off_t off,
		       struct fuse_file_info *fi)
{
	struct handle *h = handle_of(fi);
	struct r4_dirpos pos = {0};
	struct fill_ctx c = {req, malloc(size), size, 0, h, &pos};
	int rc = 0;

	(void)id;
	if (!c.buf) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	if (h->list) {
		/* the meta view: the names read at opendir, entry i at offset i */
		size_t i = 0;

		for (char *s = h->list, *e; s < h->list + h->nlist; s = e + 1, i++) {
			if (!(e = memchr(s, '\n', (size_t)(h->list + h->nlist - s))))
				break;
			if (i < (size_t)off)
				continue;
			*e = 0;
			h->ncur = i;
			rc = dir_add(&c, s, 0xffffffff, 0);	/* (unknown; 0 would hide it) */
			*e = '\n';
			if (rc)
				break;
		}
		fuse_reply_buf(req, c.buf, c.used);
		free(c.buf);
		return;
	}
	/*
	 * Offsets are stable across changes: offset i resumes at the cursor
	 * (a key, r4_readdir) that stood before entry i of this open
	 * directory, so entries added or removed between calls neither
	 * repeat nor hide the others.
	 */
	if (off < 0 || (off && (size_t)off > h->ncur)) {
		free(c.buf);
		fuse_reply_err(req, EINVAL);	/* no offset this directory handed out */
		return;
	}
	if (off)
		pos = h->cur[off];
	h->ncur = (size_t)off;
	pthread_mutex_lock(&B.mu);
	rc = r4_file_readdir(h->file, &pos, dir_fn, &c);
	if (rc > 0)
		rc = 0;
	if (!rc)
		rc = cur_put(h, &pos);	/* where the next call goes on */
	rc = fb_err("readdir", h->n, rc);
	pthread_mutex_unlock(&B.mu);
	if (rc)
		fuse_reply_err(req, rc);
	else
		fuse_reply_buf(req, c.buf, c.used);
	free(c.buf);
}

static struct handle *handle_new(struct node *n)
{
	struct handle *h = calloc(1, sizeof(*h));

	if (h) {
		h->n = n;
		n->refs++;
		n->opens++;
		if ((h->next = B.handles))
			h->next->prev = h;
		B.handles = h;
	}
	return h;
}

static void handle_free(struct handle *h)
{
	if (h->prev)
		h->prev->next = h->next;
	else
		B.handles = h->next;
	if (h->next)
		h->next->prev = h->prev;
	h->n->opens--;
	node_unref(h->n);
	free(h->cur);
	free(h->list);
	free(h);
}

/* The names of a meta view directory: ".", "..", the object's entries and
 * its pseudo names (R4L's ..list, cmd), one per line. */
static int meta_list(const struct caller *c, const char *cmd, struct handle *h)
{
	char *list = NULL;
	size_t n = 0;
	FILE *f;
	int rc = run_r4l(c, cmd, strlen(cmd), &list, &n, true, NULL, NULL);

	if (!rc && !(f = open_memstream(&h->list, &h->nlist)))
		rc = -ENOMEM;
	if (!rc) {
		fputs(".\n..\n", f);
		for (char *s = list, *e; s < list + n; s = e + 1) {
			if (!(e = memchr(s, '\n', (size_t)(list + n - s))))
				break;
			if ((e - s != 1 || *s != '.') && (e - s != 2 || memcmp(s, "..", 2)))
				fwrite(s, 1, (size_t)(e - s + 1), f);
		}
		fclose(f);
	}
	free(list);
	return rc;
}

/* A directory is held by identity; the meta view's lists its names. */
static void fb_opendir(fuse_req_t req, fuse_ino_t id, struct fuse_file_info *fi)
{
	struct handle *h = NULL;
	struct caller c;
	struct node *n;
	char *path = NULL, *cmd = NULL, *q;
	int rc;

	caller_get(req, &c);
	lock_as(&c);
	n = node_find(id);
	if (!n) {
		rc = -ESTALE;
	} else if (n->kind == K_META) {
		/* an object's entries, then its pseudo names (..list) */
		if (!(rc = node_path(n, &path)) && !(rc = r4_access(B.db, path, B.kernel_perms ? NULL
								    : &c.who, 0, NULL))) {
			q = r4_path_quote(path);
			if (!(h = handle_new(n)) || !q || asprintf(&cmd, "%s/..list", q) < 0)
				rc = -ENOMEM;
			else
				rc = meta_list(&c, cmd, h);
			free(cmd);
			free(q);
		}
	} else if (n->kind != K_OBJ) {
		rc = -ENOTDIR;
	} else if (!(h = handle_new(n))) {
		rc = -ENOMEM;
	} else {
		rc = r4_file_reopen(n->obj, O_RDONLY, &h->file);
	}
	if (rc && h) {
		handle_free(h);
		h = NULL;
	}
	rc = fb_err("opendir", n, rc);
	unlock();
	free(path);
	if (rc) {
		fuse_reply_err(req, rc);
		return;
	}
	fi->fh = (uint64_t)(uintptr_t)h;
	if (fuse_reply_open(req, fi)) {
		lock_as(&c);
		r4_file_close(h->file);
		handle_free(h);
		unlock();
	}
}

static void fb_releasedir(fuse_req_t req, fuse_ino_t id, struct fuse_file_info *fi)
{
	struct handle *h = handle_of(fi);

	(void)id;
	pthread_mutex_lock(&B.mu);
	r4_file_close(h->file);	/* (a directory is never an orphan) */
	handle_free(h);
	pthread_mutex_unlock(&B.mu);
	fuse_reply_err(req, 0);
}

/*
 * A new object as name in directory p (under the mutex); the engine gives
 * it its owner, mode and group (the caller's, its umask, a setgid
 * directory's).  *out gets a (strong) handle on it when asked.
 */
static int make(const struct caller *c, const char *op, struct node *p, const char *name,
		struct r4_newobj *o, struct fuse_entry_param *e, r4_file **out)
{
	struct audit a = {.uid = c->who.uid};
	struct node *n;
	struct stat st;
	r4_file *f = NULL, *g;
	int rc;

	if (p->kind != K_OBJ)
		return p->kind == K_META ? -EPERM : -ENOTDIR;
	if (is_special(p, name))
		return -EEXIST;	/* the control file, the meta view */
	if (!(rc = audit_add(&a, r4_file_id(p->obj), "create", p, name, 0)))
		CHANGE_AUDITED(op, &a, r4_file_make(p->obj, name, strlen(name), o, &f));
	audit_fini(&a);
	if (rc) {
		r4_file_close(f);	/* (made, then undone: its record failed) */
		return rc;
	}
	/* the node names it (a handle found in p); *out has it open, as made */
	if ((rc = r4_file_dup(f, &g))) {
		r4_file_close(f);
		return rc;
	}
	if (out)
		*out = f;
	else
		r4_file_close(f);
	if (!(rc = node_obj(g, p, name, &n)) && (rc = attr_of(c, n, &st)) && !n->refs)
		node_unref((n->refs = 1, n));
	if (rc) {
		if (out)
			r4_file_close(*out);
		return rc;
	}
	node_looked_up(n);
	entry_of(n, &st, e);
	return 0;
}

static void make_reply(fuse_req_t req, const char *op, fuse_ino_t parent, const char *name,
		       struct r4_newobj *o)
{
	struct fuse_entry_param e;
	struct caller c;
	struct node *p = NULL;
	int rc;

	caller_get(req, &c);
	lock_as(&c);
	rc = obj_node(parent, &p);
	rc = fb_err(op, p, rc ? rc : make(&c, op, p, name, o, &e, NULL));
	unlock();
	reply_entry(req, rc, &e, NULL);
}

static void fb_mkdir(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode)
{
	struct r4_newobj o = {.mode = S_IFDIR | (mode & 07777)};

	make_reply(req, "mkdir", parent, name, &o);
}

static void fb_mknod(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode, dev_t rdev)
{
	struct r4_newobj o = {.mode = mode, .rdev = rdev};

	make_reply(req, "mknod", parent, name, &o);
}

static void fb_symlink(fuse_req_t req, const char *target, fuse_ino_t parent, const char *name)
{
	struct r4_newobj o = {.mode = S_IFLNK | 0777, .target = target};

	make_reply(req, "symlink", parent, name, &o);
}

/* The object id of entry name of directory node p, for its audit record;
 * 0 when there is none, or none can be (no lookup then). */
static uint64_t entry_ino(struct node *p, const char *name)
{
	r4_file *f;
	uint64_t id;

	if (!r4_audit_maybe(B.db) || r4_file_lookup(p->obj, name, strlen(name), &f))
		return 0;
	id = r4_file_id(f);
	r4_file_close(f);
	return id;
}

static void fb_unlink_or_rmdir(fuse_req_t req, fuse_ino_t parent, const char *name, bool dir)
{
	struct caller c;
	struct audit a = {0};
	struct node *p = NULL;
	int rc;

	caller_get(req, &c);
	a.uid = c.who.uid;
	lock_as(&c);
	if (!(rc = obj_node(parent, &p)) && !(rc = is_special(p, name) ? -EACCES : 0) &&
	    !(rc = audit_add(&a, entry_ino(p, name), "unlink", p, name, strlen(name))) &&
	    !(rc = audit_add(&a, r4_file_id(p->obj), "unlink", p, name, strlen(name))))
		CHANGE_AUDITED(dir ? "rmdir" : "unlink", &a,
			       r4_file_remove(p->obj, name, strlen(name), dir));
	audit_fini(&a);
	if (rc == -ENOENT && r4_pseudo_lookup(name, strlen(name)))
		rc = -EACCES;	/* a pseudo file, no entry of that name */
	rc = fb_err(dir ? "rmdir" : "unlink", p, rc);
	unlock();
	fuse_reply_err(req, rc);
}

static void fb_unlink(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	fb_unlink_or_rmdir(req, parent, name, false);
}

static void fb_rmdir(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	fb_unlink_or_rmdir(req, parent, name, true);
}

/* n was moved to name in p: its node is placed there, with a handle
 * found there (the engine checks the way to an object it was found by). */
static int node_moved(struct node *n, struct node *p, const char *name)
{
	r4_file *f;
	int rc;

	if (!r4_file_lookup(p->obj, name, strlen(name), &f)) {
		if (r4_file_id(f) == n->id && !(rc = r4_file_weaken(f)))
			r4_file_close(n->obj), n->obj = f, f = NULL;
		r4_file_close(f);
	}
	return node_place(n, p, name);
}

/* The node of name in p, if the kernel has one (under the mutex). */
static struct node *child_node(struct node *p, const char *name)
{
	r4_file *f;
	struct node *n;

	if (r4_file_lookup(p->obj, name, strlen(name), &f))
		return NULL;
	n = node_find(r4_file_id(f));
	r4_file_close(f);
	return n;
}

/* What a rename of name in p to newname in q records: a rename of the
 * object and of both directories, and of the object exchanged with it, or
 * an unlink of the one it replaces. */
static int rename_audits(struct audit *a, struct node *p, const char *name, struct node *q,
			 const char *newname, unsigned flags)
{
	uint64_t moved = entry_ino(p, name), over = entry_ino(q, newname);
	size_t nn = strlen(newname);
	int rc;

	if ((rc = audit_add(a, moved, "rename", q, newname, nn)) ||
	    (rc = audit_add(a, r4_file_id(p->obj), "rename", q, newname, nn)) ||
	    (rc = audit_add(a, r4_file_id(q->obj), "rename", q, newname, nn)))
		return rc;
	if (flags & RENAME_EXCHANGE)
		return audit_add(a, over, "rename", p, name, strlen(name));
	return flags & RENAME_NOREPLACE ? 0 : audit_add(a, over, "unlink", q, newname, nn);
}

static void fb_rename(fuse_req_t req, fuse_ino_t parent, const char *name, fuse_ino_t newparent,
		      const char *newname, unsigned flags)
{
	struct node *p = NULL, *q = NULL, *a, *b;
	struct audit au = {0};
	struct caller c;
	int rc;

	caller_get(req, &c);
	au.uid = c.who.uid;
	lock_as(&c);
	if ((rc = obj_node(parent, &p)) || (rc = obj_node(newparent, &q)))
		goto out;
	if (is_special(p, name) || is_special(q, newname)) {
		rc = -EINVAL;
		goto out;
	}
	if ((flags & ~(unsigned)(RENAME_NOREPLACE | RENAME_EXCHANGE))) {
		rc = -EINVAL;
		goto out;
	}
	a = child_node(p, name);
	b = child_node(q, newname);
	if ((rc = rename_audits(&au, p, name, q, newname, flags)) ||
	    CHANGE_AUDITED("rename", &au,
			   r4_file_rename(p->obj, name, strlen(name), q->obj, newname,
					  strlen(newname),
					  (flags & RENAME_NOREPLACE ? R4_RENAME_NOREPLACE : 0) |
					  (flags & RENAME_EXCHANGE ? R4_RENAME_EXCHANGE : 0))))
		goto out;
	/* the nodes follow their objects (and their engine handles the way
	 * they are reached now) */
	if (a && (rc = node_moved(a, q, newname)))
		goto out;
	if (b && (flags & RENAME_EXCHANGE))
		rc = node_moved(b, p, name);
out:
	audit_fini(&au);
	rc = fb_err("rename", p, rc);
	unlock();
	fuse_reply_err(req, rc);
}

static void fb_link(fuse_req_t req, fuse_ino_t id, fuse_ino_t newparent, const char *newname)
{
	struct fuse_entry_param e;
	struct node *n = NULL, *p;
	struct stat s;
	struct caller c;
	struct audit a = {0};
	int rc;

	caller_get(req, &c);
	a.uid = c.who.uid;
	lock_as(&c);
	if (!(rc = obj_node(id, &n)) && !(rc = obj_node(newparent, &p)) &&
	    !(rc = is_special(p, newname) ? -EEXIST : 0) &&
	    !(rc = audit_add(&a, r4_file_id(n->obj), "link", p, newname, 0)) &&
	    !(rc = audit_add(&a, r4_file_id(p->obj), "link", p, newname, 0)) &&
	    !CHANGE_AUDITED("link", &a, r4_file_link(n->obj, p->obj, newname, strlen(newname))) &&
	    !(rc = node_place(n, p, newname)) && !(rc = attr_of(&c, n, &s))) {
		node_looked_up(n);
		entry_of(n, &s, &e);
	}
	audit_fini(&a);
	rc = fb_err("link", n, rc);
	unlock();
	reply_entry(req, rc, &e, NULL);
}

static void fb_readlink(fuse_req_t req, fuse_ino_t id)
{
	char buf[4096];
	struct caller c;
	struct node *n = NULL;
	size_t len = 0;
	int rc;

	caller_get(req, &c);
	lock_as(&c);
	if (!(rc = obj_node(id, &n)))
		rc = r4_file_readlink(n->obj, buf, sizeof(buf) - 1, &len);
	rc = fb_err("readlink", n, rc);
	unlock();
	if (rc) {
		fuse_reply_err(req, rc);
		return;
	}
	buf[len < sizeof(buf) - 1 ? len : sizeof(buf) - 1] = 0;
	fuse_reply_readlink(req, buf);
}

/* The change of fb_setattr, and its record: a size set is a truncate (the
 * times truncate(2) sets with it are part of it), else a setattr. */
static int setattr_audited(const struct caller *c, struct node *n, struct handle *h,
			   const struct r4_setattr *sa)
{
	bool size = sa->mask & R4_SET_SIZE;
	struct audit a = {.uid = c->who.uid};
	int rc;

	if (!(rc = audit_add(&a, r4_file_id(n->obj), size ? "truncate" : "setattr", n, NULL,
			     size ? sa->size : 0)))
		CHANGE_AUDITED("setattr", &a, r4_file_setattr(h && h->file ? h->file : n->obj, sa));
	audit_fini(&a);
	return rc;
}

/* chmod, chown, truncate, utimens: on the open file, or the object. */
static void fb_setattr(fuse_req_t req, fuse_ino_t id, struct stat *attr, int to_set,
		       struct fuse_file_info *fi)
{
	struct handle *h = handle_of(fi);
	struct r4_setattr sa = {0};
	struct stat out;
	struct caller c;
	struct node *n;
	int rc;

	if (to_set & FUSE_SET_ATTR_MODE) {
		sa.mask |= R4_SET_MODE;
		sa.mode = attr->st_mode;
	}
	if (to_set & FUSE_SET_ATTR_UID) {
		sa.mask |= R4_SET_UID;
		sa.uid = attr->st_uid;
	}
	if (to_set & FUSE_SET_ATTR_GID) {
		sa.mask |= R4_SET_GID;
		sa.gid = attr->st_gid;
	}
	if (to_set & FUSE_SET_ATTR_SIZE) {
		sa.mask |= R4_SET_SIZE;
		sa.size = (uint64_t)attr->st_size;
	}
	if (to_set & FUSE_SET_ATTR_ATIME_NOW) {
		sa.mask |= R4_SET_ATIME_NOW;
	} else if (to_set & FUSE_SET_ATTR_ATIME) {
		sa.mask |= R4_SET_ATIME;
		sa.atime = attr->st_atim;
	}
	if (to_set & FUSE_SET_ATTR_MTIME_NOW) {
		sa.mask |= R4_SET_MTIME_NOW;
	} else if (to_set & FUSE_SET_ATTR_MTIME) {
		sa.mask |= R4_SET_MTIME;
		sa.mtime = attr->st_mtim;
	}
	caller_get(req, &c);
	lock_as(&c);
	n = node_find(id);
	if (!n) {
		rc = -ESTALE;
	} else if (n->kind != K_OBJ) {
		/* O_TRUNC before a pseudo file's write is no change */
		rc = sa.mask == R4_SET_SIZE ? attr_of(&c, n, &out) : -EPERM;
		goto out;
	} else if (!sa.mask || !(rc = setattr_audited(&c, n, h, &sa))) {
		rc = attr_of(&c, n, &out);
	}
out:
	rc = fb_err("setattr", n, rc);
	unlock();
	if (rc)
		fuse_reply_err(req, rc);
	else
		fuse_reply_attr(req, &out, timeout_of(n, B.attr_timeout));
}

static void fb_access(fuse_req_t req, fuse_ino_t id, int mask)
{
	struct stat s;
	struct caller c;
	struct node *n;
	int rc;

	caller_get(req, &c);
	lock_as(&c);
	n = node_find(id);
	if (!n)
		rc = -ESTALE;
	else if (n->kind != K_OBJ)
		rc = attr_of(&c, n, &s);	/* the view and pseudo files: what may be read */
	else if (!(rc = r4_file_access(n->obj, (unsigned)mask & 7)) && (mask & W_OK) && B.ro)
		rc = -EROFS;
	rc = fb_err("access", n, rc);
	unlock();
	fuse_reply_err(req, rc);
}

/* A handle on a pseudo file or the control file (under the mutex). */
static int special_open(struct node *n, struct fuse_file_info *fi)
{
	struct handle *h = NULL;
	struct special *s = calloc(1, sizeof(*s));
	int rc = -ENOMEM;

	if (!s || (rc = node_path(n, &s->path)) || !(h = handle_new(n))) {
		if (s)
			free(s->path);
		free(s);
		return rc;
	}
	s->control = n->kind == K_CONTROL;
	s->whole = n->kind == K_PSEUDO && !is_pseudo(n->name);
	s->wronly = (fi->flags & O_ACCMODE) == O_WRONLY;
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

/* Close h (under the mutex); the last close of an unlinked file removes
 * it, in the group. */
static int handle_close(struct handle *h)
{
	int rc = 0;

	if (h->file && (rc = r4_file_close(h->file)))
		rc = change_end("release", rc);
	if (h->sp)
		special_free(h->sp);
	handle_free(h);
	return rc;
}

static void fb_open(fuse_req_t req, fuse_ino_t id, struct fuse_file_info *fi)
{
	struct handle *h = NULL;
	struct r4_stat st;
	struct caller c;
	struct node *n;
	int flags = fi->flags & (O_ACCMODE | O_TRUNC);
	int rc;

	caller_get(req, &c);
	lock_as(&c);
	n = node_find(id);
	if (!n) {
		rc = -ESTALE;
	} else if (n->kind == K_META) {
		rc = -EISDIR;
	} else if (n->kind != K_OBJ) {
		rc = special_open(n, fi);
	} else if (B.ro && ((flags & O_ACCMODE) != O_RDONLY || (flags & O_TRUNC))) {
		rc = -EROFS;
	} else if (!(rc = r4_file_stat(n->obj, &st)) && !(rc = S_ISDIR(st.mode) ? -EISDIR : 0)) {
		if (!(h = handle_new(n))) {
			rc = -ENOMEM;
		} else if ((flags & O_TRUNC) && st.size) {
			/* open(O_TRUNC): libfuse asks for it atomically, with the open */
			struct audit a = {.uid = c.who.uid};

			if (!(rc = audit_add(&a, st.ino, "truncate", n, NULL, 0)))
				CHANGE_AUDITED("open (O_TRUNC)", &a, r4_file_reopen(n->obj, flags, &h->file));
			audit_fini(&a);
		} else {
			rc = r4_file_reopen(n->obj, flags, &h->file);
		}
		if (h)
			h->append = (fi->flags & O_APPEND) != 0;
		if (rc && h) {
			r4_file_close(h->file);
			handle_free(h);
			h = NULL;
		}
		if (h) {
			fi->fh = (uint64_t)(uintptr_t)h;
			fi->keep_cache = 1;	/* only the bridge changes it (or says so) */
			/* a close(2) reports lost changes (fb_flush); reading ones have none
			 * to report: no FLUSH round trip */
			fi->noflush = (fi->flags & O_ACCMODE) == O_RDONLY;
		}
	}
	rc = fb_err("open", n, rc);
	unlock();
	if (rc) {
		fuse_reply_err(req, rc);
	} else if (fuse_reply_open(req, fi)) {
		lock_as(&c);
		handle_close(handle_of(fi));
		unlock();
	}
}

static void fb_create(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode,
		      struct fuse_file_info *fi)
{
	struct r4_newobj o = {.mode = S_IFREG | (mode & 07777)};
	struct fuse_entry_param e;
	struct handle *h = NULL;
	struct caller c;
	struct node *p = NULL;
	r4_file *f = NULL;
	int rc;

	caller_get(req, &c);
	lock_as(&c);
	if (!(rc = obj_node(parent, &p)) && !(rc = make(&c, "create", p, name, &o, &e, &f))) {
		if (!(h = handle_new(node_find(e.ino)))) {
			r4_file_close(f);
			node_forget(e.ino, 1);
			rc = -ENOMEM;
		} else {
			h->file = f;
			h->append = (fi->flags & O_APPEND) != 0;
			fi->fh = (uint64_t)(uintptr_t)h;
			fi->keep_cache = 1;
			fi->noflush = (fi->flags & O_ACCMODE) == O_RDONLY;	/* (see fb_open) */
		}
	}
	rc = fb_err("create", p, rc);
	unlock();
	if (rc) {
		fuse_reply_err(req, rc);
	} else if (fuse_reply_create(req, &e, fi)) {
		lock_as(&c);
		handle_close(h);
		node_forget(e.ino, 1);
		unlock();
	}
}

static void fb_read(fuse_req_t req, fuse_ino_t id, size_t size, off_t off,
		    struct fuse_file_info *fi)
{
	struct handle *h = handle_of(fi);
	struct special *s = h->sp;
	char *buf = malloc(size ? size : 1);
	bool changed = false;
	struct caller c;
	size_t got = 0;
	int rc = 0;

	(void)id;
	if (!buf) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	caller_get(req, &c);
	if (s)
		c.who.umask = s->umask;	/* (a command run at its read) */
	lock_as(&c);
	if (s) {
		if (s->written)
			special_flush(&c, s, &changed);
		if (!s->have_out && !s->control) {
			rc = pseudo_text(&c, s->path, &s->out, &s->nout);
			s->have_out = !rc;
		}
		size_t at = s->control ? s->rpos : (size_t)off;

		if (!rc && at < s->nout) {
			got = s->nout - at < size ? s->nout - at : size;
			memcpy(buf, s->out + at, got);
			if (s->control)
				s->rpos += got;
		}
	} else {
		rc = r4_file_read(h->file, (uint64_t)off, buf, size, &got);
	}
	rc = fb_err("read", h->n, rc);
	unlock();
	if (changed)
		invalidate_all();
	if (rc)
		fuse_reply_err(req, rc);
	else
		fuse_reply_buf(req, buf, got);
	free(buf);
}

/* Is the command written to s whole: a complete entry (LANGUAGE.md 2.5,
 * as r4sh decides) that a newline ends? */
static bool ctl_whole(const struct special *s)
{
	struct r4_lex_state ls;

	if (!s->nin || s->in[s->nin - 1] != '\n')
		return false;
	r4_lex_state(s->in, s->nin, &ls);
	return !ls.depth && !ls.open_quote && ls.can_end == 1;
}

/*
 * What write(2) says, so that `echo TEXT > FILE` (whose shell ignores
 * close(2)) sees a failure:
 *  - a pseudo file takes its value at once (echo 0999 > d/..mode fails);
 *  - an aggregate's text is applied whole at close, but a malformed line
 *    fails the write that brought it, and then nothing is applied;
 *  - the control file opened write-only runs its command once the text
 *    is a complete entry ending in a newline, and fails the write with
 *    its error; opened for reading too, when it is read, or closed unread.
 */
static int special_write(const struct caller *c, struct special *s, const char *buf, size_t n,
			 off_t off, bool *changed)
{
	size_t at = (size_t)off, end;
	int rc;

	if (s->err)
		return s->err;
	if (at < s->base)
		return -EINVAL;	/* into a command that ran already */
	off -= (off_t)s->base;
	end = (size_t)off + n;
	if (end > s->nin) {
		char *in = realloc(s->in, end + 1);

		if (!in)
			return -ENOMEM;
		s->in = in;
		memset(s->in + s->nin, 0, end - s->nin);
		s->nin = end;
	}
	memcpy(s->in + off, buf, n);
	s->written = true;
	s->umask = c->who.umask;
	s->have_out = false;
	if (s->whole) {
		s->err = r4_aggr_check(B.db, s->path, s->in, s->nin);
		return s->err;
	}
	if (!s->control)
		return special_flush(c, s, changed);
	if (!s->wronly || !ctl_whole(s))
		return 0;
	rc = special_flush(c, s, changed);
	s->base = rc ? at : at + n;	/* a failed write(2) leaves the file offset */
	return rc;
}

/* A write through h (under the mutex); O_APPEND: at the end as it is now. */
static int write_at(struct handle *h, const char *buf, size_t n, off_t off)
{
	struct r4_stat st;
	int rc;

	if (h->append && (rc = r4_file_stat(h->file, &st)))
		return rc;
	return r4_file_write(h->file, h->append ? st.size : (uint64_t)off, buf, n);
}

static void fb_write(fuse_req_t req, fuse_ino_t id, const char *buf, size_t n, off_t off,
		     struct fuse_file_info *fi)
{
	struct handle *h = handle_of(fi);
	bool changed = false;
	struct caller c;
	struct audit a = {0};
	int rc;

	(void)id;
	caller_get(req, &c);
	if (h->sp)
		caller_umask(req, &c);
	a.uid = c.who.uid;
	lock_as(&c);
	if (h->sp)
		rc = special_write(&c, h->sp, buf, n, off, &changed);
	else if (!(rc = audit_add(&a, r4_file_id(h->file), h->append ? "append" : "write", h->n,
				  NULL, n)))
		CHANGE_AUDITED("write", &a, write_at(h, buf, n, off));
	audit_fini(&a);
	rc = fb_err("write", h->n, rc);
	unlock();
	if (changed)
		invalidate_all();
	if (rc)
		fuse_reply_err(req, rc);
	else
		fuse_reply_write(req, n);
}

static void fb_flush(fuse_req_t req, fuse_ino_t id, struct fuse_file_info *fi)
{
	struct handle *h = handle_of(fi);
	bool changed = false;
	struct caller c;
	int rc = 0;

	(void)id;
	caller_get(req, &c);
	if (h->sp) {
		/* a command written and closed unread still runs */
		c.who.umask = h->sp->umask;
		lock_as(&c);
		rc = fb_err("flush", h->n, special_flush(&c, h->sp, &changed));
		unlock();
		if (changed)
			invalidate_all();
	} else if (h->file) {
		/* close(2) of a descriptor whose changes were lost says so */
		lock_as(&c);
		rc = fb_err("close", h->n, r4_file_error(h->file, true));
		unlock();
	}
	fuse_reply_err(req, rc);
}

static void fb_release(fuse_req_t req, fuse_ino_t id, struct fuse_file_info *fi)
{
	struct handle *h = handle_of(fi);
	bool changed = false;
	struct caller c;
	int rc;

	(void)id;
	caller_get(req, &c);
	if (h->sp)
		c.who.umask = h->sp->umask;
	lock_as(&c);
	if (h->sp)
		special_flush(&c, h->sp, &changed);
	rc = handle_close(h);
	rc = rc ? fb_err("release", NULL, rc) : 0;
	unlock();
	if (changed)
		invalidate_all();
	fuse_reply_err(req, rc);
}

/* fsync(2), fdatasync(2): the group committed and durable; and 0 only if
 * no change made through the file's handles was lost since this
 * descriptor last heard of it (r4_file_error). */
static void fb_fsync(fuse_req_t req, fuse_ino_t id, int datasync, struct fuse_file_info *fi)
{
	struct handle *h = handle_of(fi);
	int rc, lost;

	(void)id;
	(void)datasync;
	pthread_mutex_lock(&B.mu);
	rc = r4_in_txn(B.db) ? commit_group() : 0;
	if (!rc)
		rc = r4_sync(B.db);
	lost = h && h->file ? r4_file_error(h->file, true) : 0;
	rc = fb_err("fsync", NULL, rc ? rc : lost);
	pthread_mutex_unlock(&B.mu);
	fuse_reply_err(req, rc);
}

static void fb_statfs(fuse_req_t req, fuse_ino_t id)
{
	struct statvfs sv = {0};
	struct r4_statfs s;
	int rc;

	(void)id;
	pthread_mutex_lock(&B.mu);
	rc = fb_err("statfs", NULL, r4_statfs(B.db, &s));
	pthread_mutex_unlock(&B.mu);
	if (rc) {
		fuse_reply_err(req, rc);
		return;
	}
	sv.f_bsize = sv.f_frsize = s.bsize;
	sv.f_blocks = s.blocks;
	sv.f_bfree = s.bfree;
	sv.f_bavail = s.bavail;		/* less the reserve for removals: df's Avail */
	sv.f_flag = B.ro ? ST_RDONLY : 0;
	sv.f_files = s.files;
	sv.f_ffree = sv.f_favail = s.ffree;
	sv.f_namemax = s.namemax;
	fuse_reply_statfs(req, &sv);
}

/*
 * ---- extended attributes: user.r4.NAME is the pseudo file ..NAME ----
 *
 * Generic tools copy every attribute listxattr names (cp -a, rsync -aX,
 * tar --xattrs) and put back what they copied.  The pseudo attributes are
 * not a file's data: copied out they put r4's oid, key and plugin on host
 * files; put back, user.r4.name renamed rsync's temporary file (and rsync
 * failed), and the read-only ones failed the copy.  So:
 *  - listxattr names none (r4 stores no attributes of its own, so it lists
 *    nothing), unless -o list_pseudo_xattrs asks for them (getfattr -d);
 *  - getxattr reads any pseudo file on request (getfattr -n user.r4.mode);
 *  - setxattr sets only what chmod, chown and touch set: mode, uid (owner),
 *    gid, atime and mtime, with the same rules.  The name, the body and
 *    the rest are EPERM: an attribute a tool replays must not rename,
 *    rewrite or remove anything (the pseudo files by name, the meta view
 *    and the control file still reach them);
 *  - no attribute can be removed: EPERM for a pseudo one, ENODATA else.
 */

static const char *const xattr_names[] = {
	"uid", "gid", "mode", "type", "size", "nlink", "atime", "mtime", "ctime", "oid", "key",
	"plugin", "name", NULL,
};

/* The pseudo file of the attribute name (user.r4.mode: ..mode), or NULL. */
static const struct r4_pseudo_info *xattr_pseudo(const char *name)
{
	size_t k = strlen(XATTR);
	char dots[32];

	if (strncmp(name, XATTR, k) || strlen(name + k) + 3 > sizeof(dots))
		return NULL;
	sprintf(dots, "..%s", name + k);
	return r4_pseudo_lookup(dots, strlen(dots));
}

/* 0 when setxattr may set name, else the positive errno it answers. */
static int xattr_settable(const char *name)
{
	const struct r4_pseudo_info *ps = xattr_pseudo(name);

	if (!ps)
		return ENOTSUP;	/* r4 stores no attributes of its own */
	switch (ps->id) {
	case R4_PSEUDO_UID:
	case R4_PSEUDO_GID:
	case R4_PSEUDO_MODE:
	case R4_PSEUDO_ATIME:
	case R4_PSEUDO_MTIME:
		return 0;
	default:
		return EPERM;
	}
}

/* The pseudo file an attribute name of n stands for ("/a/..mode"). */
static int xattr_path(fuse_ino_t id, const char *name, char **out)
{
	struct node *n = node_find(id);
	size_t k = strlen(XATTR);
	char *path;
	int rc;

	if (strncmp(name, XATTR, k) || !name[k] || strchr(name + k, '/'))
		return -ENODATA;
	if (!n)
		return -ESTALE;
	if (n->kind == K_PSEUDO || n->kind == K_CONTROL)
		return -ENODATA;	/* (a pseudo file has no pseudo files) */
	if ((rc = node_path(n, &path)))
		return rc;
	rc = asprintf(out, "%s/..%s", strcmp(path, "/") ? path : "", name + k) < 0 ? -ENOMEM : 0;
	free(path);
	return rc;
}

static void fb_getxattr(fuse_req_t req, fuse_ino_t id, const char *name, size_t size)
{
	char *p = NULL, *text = NULL;
	struct caller c;
	size_t n = 0;
	int rc;

	if (!xattr_pseudo(name)) {
		/* (security.capability before every first write: no lock) */
		fuse_reply_err(req, ENODATA);
		return;
	}
	caller_get(req, &c);
	lock_as(&c);
	if (!(rc = xattr_path(id, name, &p)))
		rc = pseudo_text(&c, p, &text, &n);
	/* (a pseudo file of a pseudo file, or one the object lacks, is none) */
	rc = rc == -ENOENT || rc == -ENODATA ? ENODATA : fb_err("getxattr", NULL, rc);
	unlock();
	if (rc)
		fuse_reply_err(req, rc);
	else if (!size)
		fuse_reply_xattr(req, n);
	else if (n > size)
		fuse_reply_err(req, ERANGE);
	else
		fuse_reply_buf(req, text, n);
	free(text);
	free(p);
}

static void fb_setxattr(fuse_req_t req, fuse_ino_t id, const char *name, const char *value,
			size_t size, int flags)
{
	bool changed = false;
	struct caller c;
	char *p = NULL;
	int rc;

	(void)flags;
	if ((rc = xattr_settable(name))) {
		fuse_reply_err(req, rc);
		return;
	}
	caller_get(req, &c);
	lock_as(&c);
	if (!(rc = xattr_path(id, name, &p)))
		rc = pseudo_write(&c, p, value, size, &changed);
	rc = rc == -ENODATA ? ENOTSUP : fb_err("setxattr", NULL, rc);	/* (of a pseudo file) */
	unlock();
	if (changed)
		invalidate_all();	/* the kernel's cached mode, owner, times */
	free(p);
	fuse_reply_err(req, rc);
}

/* Nothing, or with -o list_pseudo_xattrs the metadata names of an object
 * (..body and ..list are left out: they can be large). */
static void fb_listxattr(fuse_req_t req, fuse_ino_t id, size_t size)
{
	char list[512], *at = list;
	struct node *n;
	size_t need;

	pthread_mutex_lock(&B.mu);
	n = B.list_xattrs ? node_find(id) : NULL;
	if (n && n->kind != K_PSEUDO && n->kind != K_CONTROL)
		for (int i = 0; xattr_names[i]; i++)
			at += sprintf(at, "%s%s", XATTR, xattr_names[i]) + 1;
	pthread_mutex_unlock(&B.mu);
	need = (size_t)(at - list);
	if (!size)
		fuse_reply_xattr(req, need);
	else if (size < need)
		fuse_reply_err(req, ERANGE);
	else
		fuse_reply_buf(req, list, need);
}

static void fb_removexattr(fuse_req_t req, fuse_ino_t id, const char *name)
{
	(void)id;
	fuse_reply_err(req, xattr_pseudo(name) ? EPERM : ENODATA);	/* a pseudo file cannot go */
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
static int fallocate_range(r4_file *f, int mode, off_t off, off_t len, char *buf,
			   struct audit *a)
{
	bool zero = mode & FALLOC_FL_ZERO_RANGE;
	struct r4_statfs sf;
	struct r4_stat st;
	int rc;

	if ((rc = r4_file_stat(f, &st)) || (rc = r4_statfs(B.db, &sf)))
		return rc;
	if ((mode & FALLOC_FL_KEEP_SIZE) && (uint64_t)(off + len) > st.size)
		return -EOPNOTSUPP;	/* blocks past the end: none in r4 */
	if ((uint64_t)len / sf.bsize + 1 > sf.bavail)
		return -ENOSPC;
	if ((rc = audit_begin(a)) || (rc = change_begin()))
		return rc;
	for (off_t at = off; !rc && at < off + len;) {
		size_t n = (size_t)(off + len - at < (1 << 20) ? off + len - at : 1 << 20), got = 0;

		if (zero || (uint64_t)at >= st.size)
			memset(buf, 0, n);
		else if ((rc = r4_file_read(f, (uint64_t)at, buf, n, &got)))
			break;
		else if (got < n)
			memset(buf + got, 0, n - got);
		if (!(rc = r4_file_write(f, (uint64_t)at, buf, n)))
			at += (off_t)n;
	}
	return audit_end(a, "fallocate", rc);
}

static void fb_fallocate(fuse_req_t req, fuse_ino_t id, int mode, off_t off, off_t len,
			 struct fuse_file_info *fi)
{
	struct handle *h = handle_of(fi);
	struct caller c;
	struct audit a = {0};
	char *buf;
	int rc;

	(void)id;
	if (mode & ~(FALLOC_FL_KEEP_SIZE | FALLOC_FL_ZERO_RANGE)) {
		fuse_reply_err(req, EOPNOTSUPP);
		return;
	}
	if (off < 0 || len <= 0 || off > INT64_MAX - len) {
		fuse_reply_err(req, EINVAL);
		return;
	}
	if (!h->file) {
		fuse_reply_err(req, EBADF);
		return;
	}
	if (!(buf = malloc(1 << 20))) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	caller_get(req, &c);
	a.uid = c.who.uid;
	lock_as(&c);
	/* (its record: a write of the range, which it rewrites) */
	if (!(rc = audit_add(&a, r4_file_id(h->file), "write", h->n, NULL, (uint64_t)len)))
		rc = fallocate_range(h->file, mode, off, len, buf, &a);
	audit_fini(&a);
	rc = fb_err("fallocate", h->n, rc);
	unlock();
	free(buf);
	fuse_reply_err(req, rc);
}

static void fb_init(void *data, struct fuse_conn_info *conn)
{
	(void)data;
	/* O_TRUNC comes with the open, so that it happens with the
	 * permission check and the handle (see fb_open) */
	if (conn->capable & FUSE_CAP_ATOMIC_O_TRUNC)
		conn->want |= FUSE_CAP_ATOMIC_O_TRUNC;
	/* a read checks stale attributes first, and a changed mtime or size
	 * drops the cached pages: invalidate_all counts on it (libfuse's
	 * default, asked for here so that it stays) */
	if (conn->capable & FUSE_CAP_AUTO_INVAL_DATA)
		conn->want |= FUSE_CAP_AUTO_INVAL_DATA;
	pthread_create(&B.committer, NULL, committer, NULL);
	B.started = true;
	invalidator_start();
}

/* Commit, make durable and close the image: its lock goes with it.  Every
 * node lets go of its engine handle first (the nodes stay: the kernel may
 * still forget them). */
static void close_image(void)
{
	int rc;

	if (!B.db)
		return;
	commit_group();
	if ((rc = r4_sync(B.db)))
		logmsg(LOG_ERR, "r4fuse: %s: unmount: %s", B.image, r4_strerror(rc));
	for (size_t i = 0; i < B.ntab; i++)
		for (struct node *n = B.tab[i]; n; n = n->next) {
			r4_file_close(n->obj);
			n->obj = NULL;
		}
	r4_close(B.db);
	B.db = NULL;
}

/*
 * The kernel's DESTROY, or the session's end without one.  A fuseblk
 * mount's unmount waits for this reply, so the image is final, and its
 * lock free, when umount returns (docs/r4fuse.md, "Unmount"); a plain
 * fuse mount gets no DESTROY, and this runs once the loop has ended.
 */
static void fb_destroy(void *data)
{
	(void)data;
	pthread_mutex_lock(&B.mu);
	B.stop = true;
	pthread_cond_signal(&B.wake);
	pthread_mutex_unlock(&B.mu);
	if (B.started)
		pthread_join(B.committer, NULL);
	B.started = false;
	pthread_mutex_lock(&B.mu);
	close_image();
	pthread_mutex_unlock(&B.mu);
}

static const struct fuse_lowlevel_ops fb_ops = {
	.init = fb_init,
	.destroy = fb_destroy,
	.lookup = fb_lookup,
	.forget = fb_forget,
	.forget_multi = fb_forget_multi,
	.getattr = fb_getattr,
	.setattr = fb_setattr,
	.readlink = fb_readlink,
	.mknod = fb_mknod,
	.mkdir = fb_mkdir,
	.unlink = fb_unlink,
	.rmdir = fb_rmdir,
	.symlink = fb_symlink,
	.rename = fb_rename,
	.link = fb_link,
	.open = fb_open,
	.create = fb_create,
	.read = fb_read,
	.write = fb_write,
	.flush = fb_flush,
	.release = fb_release,
	.fsync = fb_fsync,
	.opendir = fb_opendir,
	.readdir = fb_readdir,
	.releasedir = fb_releasedir,
	.fsyncdir = fb_fsync,
	.statfs = fb_statfs,
	.setxattr = fb_setxattr,
	.getxattr = fb_getxattr,
	.listxattr = fb_listxattr,
	.removexattr = fb_removexattr,
	.access = fb_access,
	.fallocate = fb_fallocate,
};

/* ---- options and main ---- */

struct opts {
	char *image;
	unsigned commit;
	char *cache, *errors;
	double entry_timeout, attr_timeout;
	int sync, ro, help, kernel_perms, secs;
	int list_xattrs;
};

#define OPT(t, p) {t, offsetof(struct opts, p), 1}
static const struct fuse_opt fb_opts[] = {
	{"commit=%u", offsetof(struct opts, commit), 0},
	{"cache=%s", offsetof(struct opts, cache), 0},
	{"errors=%s", offsetof(struct opts, errors), 0},
	{"entry_timeout=%lf", offsetof(struct opts, entry_timeout), 0},
	{"attr_timeout=%lf", offsetof(struct opts, attr_timeout), 0},
	OPT("sync", sync),
	OPT("ro", ro),
	OPT("default_permissions", kernel_perms),
	OPT("32bittimes", secs),
	OPT("list_pseudo_xattrs", list_xattrs),
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

static void usage(FILE *f)
{
	fprintf(f,
		"usage: r4fuse IMAGE MOUNTPOINT [-f] [-d] [-s] [-o OPTIONS]\n"
		"  -o ro            mount read-only\n"
		"  -o sync          commit after every call\n"
		"  -o commit=SECS   group calls into one commit every SECS seconds (default 5)\n"
		"  -o default_permissions  the kernel checks mode bits (else r4fuse does)\n"
		"  -o cache=SIZE    memory for clean tree nodes (K, M, G; default 64M)\n"
		"  -o errors=remount-ro|continue  after changes are lost (a failed commit):\n"
		"                   refuse changes from then on (the default), or go on\n"
		"  -o 32bittimes    new objects keep whole-second times (12 bytes less each)\n"
		"  -o entry_timeout=SECS, attr_timeout=SECS  how long the kernel may keep\n"
		"                   names and attributes (default 1)\n"
		"  -o list_pseudo_xattrs  listxattr names the user.r4.* attributes (getfattr\n"
		"                   -d shows them; cp -a, rsync -aX, tar --xattrs copy them)\n"
		"  and libfuse's options: allow_other, max_idle_threads, clone_fd, ...\n");
}

/* Open the image as the options say (B.db); nonzero: the message is out. */
static int open_image(struct opts *o)
{
	struct r4_open_opts oo = {.rw = !o->ro, .log = engine_log, .seconds_only = o->secs};
	struct r4_holder h;
	int rc;

	if (o->cache) {
		uint64_t bytes;

		if (r4_parse_size(o->cache, &bytes) || bytes < 4096) {
			fprintf(stderr, "r4fuse: cache=%s: want a size like 64M\n", o->cache);
			return 2;
		}
		oo.cache_nodes = (size_t)(bytes / 4096);	/* 4 KiB nodes */
	}
	/* root mounts a block device as fuseblk itself: no O_EXCL (below) */
	oo.bdev_no_excl = geteuid() == 0;
	rc = r4_open(o->image, &oo, &B.db);
	if (rc == -EROFS && oo.rw) {
		/* marked damaged: readable, never written until checked */
		fprintf(stderr, "r4fuse: %s: mounted read-only\n", o->image);
		o->ro = 1;
		oo.rw = false;
		rc = r4_open(o->image, &oo, &B.db);
	}
	if (rc == -EBUSY) {	/* the lock: one writer per image */
		if (r4_holder_find(o->image, &h))
			snprintf(h.what, sizeof(h.what), "in use by another program");
		fprintf(stderr, "r4fuse: %s: %s\n", o->image, h.what);
		return 1;
	}
	if (rc) {
		fprintf(stderr, "r4fuse: %s: cannot mount it: %s\n", o->image, r4_strerror(rc));
		return 1;
	}
	B.ro = o->ro;
	if (!(B.root = calloc(1, sizeof(*B.root))) || (rc = r4_file_root(B.db, &B.root->obj)) ||
	    (B.root->id = FUSE_ROOT_ID, rc = node_insert(B.root))) {
		fprintf(stderr, "r4fuse: %s: %s\n", o->image, r4_strerror(rc ? rc : -ENOMEM));
		return 1;
	}
	B.root->kind = K_OBJ;
	B.root->refs = 1;	/* (never forgotten) */
	return 0;
}

/* ---- the mount: fuseblk over a loop device, or plain fuse ----
 *
 * The kernel sends a FUSE server DESTROY, and waits for the answer, only
 * when it unmounts a fuseblk file system: a plain fuse mount is gone from
 * the kernel, and umount has returned, while the server may still be
 * committing.  So a read-write mount by root is a fuseblk mount, whose
 * unmount returns once fb_destroy has closed the image: of the image
 * itself when that is a block device, else of a loop device attached here
 * to the image file.  The loop device is only what the kernel wants to
 * see; nothing reads or writes through it.  It is attached with autoclear
 * and our descriptor closed once mounted, so it goes when the mount does.
 * Without root or loop devices the mount is plain fuse, with a warning;
 * read-only mounts are plain fuse (nothing to finish).  docs/r4fuse.md,
 * "Unmount", has the why.
 */
struct mnt {
	bool blk;		/* fuseblk (-o blkdev) */
	char source[4096];	/* fsname: the loop device, the device, or the image's path */
	int loopfd;		/* the loop device attached here, until mounted; or -1 */
};

/* Bind the loop device fd to back: LOOP_CONFIGURE (Linux 5.8), else the
 * two older calls; autoclear either way. */
static int loop_bind(int fd, int back, const char *image)
{
	struct loop_config cfg = {.fd = (uint32_t)back};

	cfg.info.lo_flags = LO_FLAGS_AUTOCLEAR;
	snprintf((char *)cfg.info.lo_file_name, sizeof(cfg.info.lo_file_name), "%s", image);
	if (!ioctl(fd, LOOP_CONFIGURE, &cfg))
		return 0;
	if (errno != EINVAL && errno != ENOTTY)
		return -errno;
	if (ioctl(fd, LOOP_SET_FD, back) < 0)
		return -errno;
	if (ioctl(fd, LOOP_SET_STATUS64, &cfg.info) < 0) {
		int rc = -errno;

		ioctl(fd, LOOP_CLR_FD, 0);
		return rc;
	}
	return 0;
}

/* A free loop device on the image file (m->source, m->loopfd). */
static int attach_loop(const char *image, struct mnt *m)
{
	int ctl = open("/dev/loop-control", O_RDWR | O_CLOEXEC), back = -1, rc = -EBUSY;

	if (ctl < 0)
		return -errno;
	if ((back = open(image, O_RDWR | O_CLOEXEC)) < 0) {
		rc = -errno;
		goto out;
	}
	for (int tries = 0; tries < 8 && rc == -EBUSY; tries++) {	/* (raced for it: next) */
		int nr = ioctl(ctl, LOOP_CTL_GET_FREE), fd;

		if (nr < 0) {
			rc = -errno;
			break;
		}
		snprintf(m->source, sizeof(m->source), "/dev/loop%d", nr);
		if ((fd = open(m->source, O_RDWR | O_CLOEXEC)) < 0) {
			rc = -errno;
			break;
		}
		if (!(rc = loop_bind(fd, back, image)))
			m->loopfd = fd;
		else
			close(fd);
	}
out:
	if (back >= 0)
		close(back);	/* (the loop device holds its own reference) */
	close(ctl);
	return rc;
}

/* The plain fuse mount: the image's path as source (r4sh finds it there). */
static void plain_mount(const char *image, struct mnt *m, const char *why)
{
	if (m->loopfd >= 0)
		close(m->loopfd);	/* (autoclear: the loop device goes) */
	m->loopfd = -1;
	m->blk = false;
	if (!realpath(image, m->source))
		snprintf(m->source, sizeof(m->source), "%s", image);
	if (why)
		fprintf(stderr, "r4fuse: %s: a plain fuse mount (%s): unmount returns before the "
			"image is final; wait for r4fuse to exit before using the image\n", image,
			why);
}

static void plan_mount(const struct opts *o, struct mnt *m)
{
	struct stat st;
	char why[128];
	int rc;

	m->loopfd = -1;
	if (o->ro) {
		plain_mount(o->image, m, NULL);
	} else if (geteuid() != 0) {
		plain_mount(o->image, m, "not root");
	} else if (!stat(o->image, &st) && S_ISBLK(st.st_mode)) {
		m->blk = true;
		if (!realpath(o->image, m->source))
			snprintf(m->source, sizeof(m->source), "%s", o->image);
	} else if ((rc = attach_loop(o->image, m))) {
		snprintf(why, sizeof(why), "no loop device: %s", r4_strerror(rc));
		plain_mount(o->image, m, why);
	} else {
		m->blk = true;
	}
}

/* base's options, and the mount's: subtype, source (escaped for fuse_opt),
 * blkdev. */
static int mount_args(const struct fuse_args *base, const struct mnt *m, struct fuse_args *out)
{
	char *opt = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&opt, &n);
	int rc = 0;

	if (!f)
		return -1;
	fputs("-osubtype=r4,fsname=", f);
	for (const char *c = m->source; *c; c++) {
		if (*c == ',' || *c == '\\')
			fputc('\\', f);
		fputc(*c, f);
	}
	if (m->blk)
		fputs(",blkdev", f);
	fclose(f);
	for (int i = 0; i < base->argc && !rc; i++)
		rc = fuse_opt_add_arg(out, base->argv[i]);
	if (!rc)
		rc = fuse_opt_add_arg(out, opt);
	free(opt);
	return rc;
}

/* The session, mounted (B.se); a fuseblk mount that fails is tried again
 * as a plain one.  Nonzero: libfuse said why. */
static int mount_session(const struct fuse_args *base, const char *image, const char *mp,
			 struct mnt *m)
{
	for (;;) {
		struct fuse_args args = FUSE_ARGS_INIT(0, NULL);
		int rc = -1;

		if (!mount_args(base, m, &args) &&
		    (B.se = fuse_session_new(&args, &fb_ops, sizeof(fb_ops), NULL)))
			rc = fuse_session_mount(B.se, mp);
		fuse_opt_free_args(&args);
		if (!rc)
			break;
		if (B.se)
			fuse_session_destroy(B.se);
		B.se = NULL;
		if (!m->blk)
			return -1;
		plain_mount(image, m, "the fuseblk mount failed");
	}
	if (m->loopfd >= 0)
		close(m->loopfd);	/* the mount holds it now; autoclear when it lets go */
	m->loopfd = -1;
	return 0;
}

/* libfuse's worker threads: up to 16, as many idle as -o max_idle_threads
 * says (default 10). */
static int loop_mt(const struct fuse_cmdline_opts *co)
{
#if FUSE_VERSION >= FUSE_MAKE_VERSION(3, 12)
	struct fuse_loop_config *cfg = fuse_loop_cfg_create();
	int rc;

	if (!cfg)
		return -ENOMEM;
	fuse_loop_cfg_set_clone_fd(cfg, (unsigned)co->clone_fd);
	fuse_loop_cfg_set_idle_threads(cfg, co->max_idle_threads != UINT_MAX
				       ? co->max_idle_threads : 10);
	fuse_loop_cfg_set_max_threads(cfg, 16);
	rc = fuse_session_loop_mt_312(B.se, cfg);
	fuse_loop_cfg_destroy(cfg);
	return rc;
#else
	return fuse_session_loop_mt(B.se, co->clone_fd);
#endif
}

/* Mount and serve until unmounted. */
static int serve(const struct fuse_args *args, const struct fuse_cmdline_opts *co,
		 const struct opts *o)
{
	struct mnt m = {0};
	int rc = 1;

	plan_mount(o, &m);
	if (mount_session(args, o->image, co->mountpoint, &m))
		return 1;
	if (!fuse_set_signal_handlers(B.se)) {
		fuse_daemonize(co->foreground);
		rc = co->singlethread ? fuse_session_loop(B.se) : loop_mt(co);
		invalidator_stop();
		fuse_remove_signal_handlers(B.se);
	}
	fuse_session_unmount(B.se);
	fuse_session_destroy(B.se);	/* (runs fb_destroy, unless DESTROY came) */
	B.se = NULL;
	return rc ? 1 : 0;
}

int fuse_bridge_main(int argc, char **argv);

int fuse_bridge_main(int argc, char **argv)
{
	struct fuse_args args = FUSE_ARGS_INIT(argc, argv);
	struct opts o = {.commit = 5, .entry_timeout = 1, .attr_timeout = 1};
	struct fuse_cmdline_opts co = {0};
	int rc = 2;

	if (fuse_opt_parse(&args, &o, fb_opts, opt_proc) < 0)
		goto out;
	if (o.help || !o.image) {
		usage(o.help ? stdout : stderr);
		rc = o.help ? 0 : 2;
		goto out;
	}
	if (fuse_parse_cmdline(&args, &co) || !co.mountpoint) {
		if (!co.mountpoint)
			usage(stderr);
		goto out;
	}
	if (o.errors && strcmp(o.errors, "remount-ro") && strcmp(o.errors, "continue")) {
		fprintf(stderr, "r4fuse: errors=%s: want remount-ro or continue\n", o.errors);
		rc = 2;
		goto out;
	}
	B.errors_continue = o.errors && !strcmp(o.errors, "continue");
	B.sync = o.sync;
	B.kernel_perms = o.kernel_perms;
	B.list_xattrs = o.list_xattrs;
	B.commit_secs = o.commit ? o.commit : 5;
	B.entry_timeout = o.entry_timeout;
	B.attr_timeout = o.attr_timeout;
	B.debug = co.foreground || co.debug;
	B.image = o.image;
	if ((rc = open_image(&o)))
		goto out;
	openlog("r4fuse", LOG_PID, LOG_DAEMON);
	/* default_permissions: the kernel checks mode bits; else the bridge does */
	if (B.kernel_perms)
		fuse_opt_add_arg(&args, "-odefault_permissions");
	if (o.ro)
		fuse_opt_add_arg(&args, "-oro");
	rc = serve(&args, &co, &o);
out:
	/* (fb_destroy closed the image if the mount was served) */
	pthread_mutex_lock(&B.mu);
	close_image();
	for (size_t i = 0; i < B.ntab; i++)
		for (struct node *n = B.tab[i], *next; n; n = next) {
			next = n->next;
			free(n->name);
			free(n);
		}
	free(B.tab);
	pthread_mutex_unlock(&B.mu);
	fuse_opt_free_args(&args);
	free(co.mountpoint);
	free(o.cache);
	free(o.errors);
	free(o.image);
	return rc;
}
