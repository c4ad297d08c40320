/*
 * node.c - r4fuse's node table: what the kernel knows by an inode id.
 *
 * Inodes: the kernel's inode is the engine's object, one per object
 * however many names it has.  A node keeps a weak engine handle on its
 * object (r4_file_weaken): a name the kernel still remembers does not keep
 * a removed object alive; an open file's handle does (the orphans of
 * engine/fs.c), and so does a directory node's once it may be removed
 * (node_keep).  Node ids are object ids (the root is FUSE's 1); the pseudo
 * files, the control file and the meta view get ids with the top bit set.
 * A node lives while something refers to it (refs): the kernel (lookups
 * less forgets), a child node, an open handle.  It remembers the name it
 * was last found under, for what the engine knows only by path.
 *
 * Also here: the kernel's caches after a change it did not make (the
 * invalidation thread, at the end).  All under the mutex unless it says
 * otherwise.
 */
#include "bridge.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <syslog.h>

#define SYNTH (1ULL << 63)	/* the ids of nodes that are no objects */
#define CONTROL_ID (SYNTH | 1)
#define META_ID (SYNTH | 2)

/* ---- the table ---- */

static size_t slot(fuse_ino_t id)
{
	return (size_t)((id * 0x9E3779B97F4A7C15ULL) >> 17) & (B.ntab - 1);
}

struct node *node_find(fuse_ino_t id)
{
	if (!B.ntab)
		return NULL;
	for (struct node *n = B.tab[slot(id)]; n; n = n->next)
		if (n->id == id)
			return n;
	return NULL;
}

/* An object of the tree the kernel may ask for (not the meta view's). */
int node_find_obj(fuse_ino_t id, struct node **out)
{
	struct node *n = node_find(id);

	if (!n)
		return -ESTALE;
	if (n->kind != K_OBJ)
		return n->kind == K_META ? -EPERM : -EINVAL;
	*out = n;
	return 0;
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

int node_root(void)
{
	int rc;

	if (!(B.root = calloc(1, sizeof(*B.root))))
		return -ENOMEM;
	if ((rc = r4_file_root(B.db, &B.root->obj)) ||
	    (B.root->id = FUSE_ROOT_ID, rc = node_insert(B.root)))
		return rc;
	B.root->kind = K_OBJ;
	B.root->refs = 1;	/* (never forgotten) */
	return 0;
}

void node_unref(struct node *n)
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
int node_place(struct node *n, struct node *parent, const char *name)
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

/* The node of the object f names, found as name in parent (name NULL:
 * where is not known, node_dot); takes f. */
int node_obj(r4_file *f, struct node *parent, const char *name, struct node **out)
{
	fuse_ino_t id = r4_file_id(f) == r4_file_id(B.root->obj) ? FUSE_ROOT_ID : r4_file_id(f);
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
	if (name && (rc = node_place(n, parent, name)) && !n->refs) {
		node_unref((n->refs = 1, n));
		return rc;
	}
	*out = n;
	return rc;
}

/*
 * The kernel's "." and ".." of node id, which it asks only to make the
 * inode of a file handle again (export support, br_init): "." is id's own
 * node, made again from the object's id if the kernel had forgotten it
 * (r4_file_find: slow); ".." a directory's parent, by its ".." entry.  A
 * node made so knows no name (node_names: -ESTALE) until a lookup by name
 * places it; the kernel looks a directory's name up at once (it
 * reconnects directories to the root), a file's never.
 */
int node_dot(fuse_ino_t id, bool dotdot, struct node **out)
{
	struct node *n = node_find(id);
	r4_file *f;
	int rc;

	if (!dotdot && n) {
		*out = n;
		return 0;
	}
	if (dotdot && n == B.root) {
		*out = B.root;
		return 0;
	}
	if (dotdot)
		rc = !n || n->kind != K_OBJ ? -ESTALE : r4_file_lookup(n->obj, "..", 2, &f);
	else
		rc = id & SYNTH ? -ESTALE : r4_file_find(B.db, id, &f);
	return rc ? rc : node_obj(f, NULL, NULL, out);
}

/* The node of a pseudo file, the control file or a meta view object:
 * its id is a hash of where it is, so that each lookup finds it again. */
int node_synth(enum kind kind, struct node *parent, const char *name, struct node **out)
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
void node_looked_up(struct node *n)
{
	if (!n->nlookup++)
		n->refs++;
}

void node_forget(fuse_ino_t id, uint64_t k)
{
	struct node *n = node_find(id);

	if (!n || n == B.root)
		return;
	n->nlookup = k < n->nlookup ? n->nlookup - k : 0;
	if (!n->nlookup)
		node_unref(n);
}

void node_close_all(void)
{
	for (size_t i = 0; i < B.ntab; i++)
		for (struct node *n = B.tab[i]; n; n = n->next) {
			r4_file_close(n->obj);
			n->obj = NULL;
		}
}

void node_free_all(void)
{
	for (size_t i = 0; i < B.ntab; i++)
		for (struct node *n = B.tab[i], *next; n; n = next) {
			next = n->next;
			free(n->name);
			free(n);
		}
	free(B.tab);
}

/* ---- names and paths ---- */

/* The names an object or meta view node was last found under, joined
 * ("/a/b"; the root's is ""), unchecked; -ESTALE when one is not known
 * (node_dot). */
int node_names(struct node *n, char **out)
{
	size_t len = 0, at;
	char *p;

	for (struct node *m = n; m && m != B.root && m->id != META_ID; m = m->parent) {
		if (!m->name)
			return -ESTALE;
		len += 1 + strlen(m->name);
	}
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
 * files, the meta view, messages): the names it was last found under.
 * An object's path is checked to still lead to it (-ESTALE when a change
 * the kernel did not make moved it).  The meta view's nodes are paths of
 * the view: /..meta/a/b is "/a/b".
 */
int node_path(struct node *n, char **out)
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

/* n was moved to name in p: its node is placed there, with a handle
 * found there (the engine checks the way to an object it was found by). */
int node_moved(struct node *n, struct node *p, const char *name)
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

/*
 * Node n may be a directory about to be removed (rmdir, a rename over
 * it): if it is, its node holds it from now on (a strong handle), so that
 * while the kernel knows it (a process's working directory, with no
 * descriptor open) it answers as ext4's removed directory does: stat with
 * nlink 0, an empty listing (docs/engine.md, "Directories are never
 * orphans").  It costs nothing: a directory goes at once, held or not.
 * Not a file, which a strong handle would keep as an orphan.
 */
void node_keep(struct node *n)
{
	struct r4_stat st;
	r4_file *f;

	if (n && n->kind == K_OBJ && n != B.root && !r4_file_stat(n->obj, &st) &&
	    S_ISDIR(st.mode) && !r4_file_dup(n->obj, &f)) {
		r4_file_close(n->obj);
		n->obj = f;
	}
}

/* The node of name in p, if the kernel has one. */
struct node *node_child(struct node *p, const char *name)
{
	r4_file *f;
	struct node *n;

	if (r4_file_lookup(p->obj, name, strlen(name), &f))
		return NULL;
	n = node_find(r4_file_id(f));
	r4_file_close(f);
	return n;
}

/*
 * ---- the kernel's caches after a change it did not make ----
 *
 * A control-file command, a pseudo file or an extended attribute written
 * may have touched any object, so what the kernel caches of every object
 * node goes: attributes and pages, and the names that no longer name
 * their node's object (still_named: the others stay, so that a working
 * directory in the mount stays one).
 *
 * Attributes are marked stale by the handler itself, before it replies
 * (node_invalidate_all): that notification only marks the inode, under no
 * lock of the kernel's, so the next stat(2) of any object asks the bridge,
 * and so does the next read(2): libfuse asks for auto_inval_data, so a
 * read checks stale attributes first and a changed size or mtime drops
 * the file's cached pages.
 *
 * Names and pages are dropped by the invalidation thread, after the reply.
 * Dropping a name locks its directory's inode (and a page its page), and
 * the process whose call made the change may hold that lock until the
 * reply: setxattr(2) holds its inode's, so a handler that dropped the
 * names in a directory it set an attribute of waited for itself (issue
 * 21).  No handler waits for the thread, so the thread waits at most until
 * the workers have answered the requests of whoever holds the lock.  It
 * takes the ids and the changed names under the mutex (looking each name
 * up in the engine there) and notifies without it: it never touches a
 * node the mutex does not keep alive, nor holds the mutex while the
 * kernel may make it wait.  Invalidations asked for while it works are
 * done by its next pass.  serve stops it once the session loop has ended,
 * before the session's device is closed.
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

/*
 * Does m's name in its parent still name m's object (under the mutex)?
 * Then the kernel's entry is still right and stays: dropping it would
 * unhash a directory's dentry even where it is a process's working
 * directory, whose getcwd(2) then fails (ENOENT) until something looks
 * the path up again.  The name is resolved as a lookup does (resolve in
 * ops.c: an entry first, and not one that became a pseudo file's text);
 * the handle it gives becomes m's, as a lookup's would (node_obj: an
 * aborted transaction's ids come again).  The engine acts as no one here
 * (whoever let the mutex go left it so, br_unlock or the repacker): the
 * bridge checks a caller's way to a name at its lookup, not here.
 */
static bool still_named(struct node *m)
{
	const struct r4_pseudo_info *ps;
	r4_file *f;
	bool same;

	if (!B.db || !m->obj || m->parent->kind != K_OBJ || !m->parent->obj ||
	    r4_ns_resolve(m->parent->obj, m->name, strlen(m->name), &f, &ps))
		return false;	/* (the image closed; or gone, a pseudo file's now) */
	if (!f)
		return false;
	same = r4_file_id(f) == m->id && !r4_is_computed(B.db, m->id);
	if (same && !r4_file_weaken(f))
		r4_file_close(m->obj), m->obj = f, f = NULL;
	r4_file_close(f);
	return same;
}

/* The object nodes the kernel knows (under the mutex), with their names
 * if names and the name no longer names the node's object (still_named);
 * *n gets how many.  NULL when out of memory. */
static struct stale *stale_nodes(bool names, size_t *n)
{
	struct stale *v = calloc(B.nnodes + 1, sizeof(*v));

	*n = 0;
	for (size_t i = 0; v && i < B.ntab; i++)
		for (struct node *m = B.tab[i]; m; m = m->next) {
			if (m->kind != K_OBJ)
				continue;	/* (the others are never cached) */
			v[*n].id = m->id;
			if (names && m->parent && !still_named(m)) {
				v[*n].parent = m->parent->id;
				v[*n].name = strdup(m->name);	/* (NULL: the inode alone) */
			}
			++*n;
		}
	if (!v)
		br_log(LOG_ERR, "r4fuse: out of memory: the kernel's caches stay as they are");
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

void node_invalidator_start(void)
{
	int err = pthread_create(&INV.thread, NULL, invalidator, NULL);

	if (err)
		br_log(LOG_ERR, "r4fuse: no invalidation thread (%s): names the control file, "
		       "pseudo files or xattrs change stay cached for entry_timeout", strerror(err));
	INV.started = !err;
}

/* Once the session loop has ended, so that no handler asks for more.  After
 * an unmount the kernel's notifications answer at once.  After a signal,
 * with the mount still up, a pass may still wait for a lock whose holder's
 * request no worker will read: then only aborting the connection (fusectl)
 * ends it. */
void node_invalidator_stop(void)
{
	pthread_mutex_lock(&B.mu);
	INV.stop = true;
	pthread_cond_signal(&INV.wake);
	pthread_mutex_unlock(&B.mu);
	if (INV.started)
		pthread_join(INV.thread, NULL);
	INV.started = false;
}

/* After a change of one object's attributes the kernel does not know of
 * (outside the mutex): its attributes stale now. */
void node_invalidate_attrs(fuse_ino_t id)
{
	fuse_lowlevel_notify_inval_inode(B.se, id, -1, 0);	/* (-1: no pages) */
}

/* After a change the kernel did not make (outside the mutex): attributes
 * stale now, names and pages by the invalidation thread. */
void node_invalidate_all(void)
{
	struct stale *v;
	size_t n;

	br_mu_lock();
	v = stale_nodes(false, &n);
	INV.asked = true;
	pthread_cond_signal(&INV.wake);
	pthread_mutex_unlock(&B.mu);
	for (size_t i = 0; i < n; i++)
		fuse_lowlevel_notify_inval_inode(B.se, v[i].id, -1, 0);	/* (-1: no pages) */
	free(v);
}
