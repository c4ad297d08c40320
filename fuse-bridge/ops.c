/*
 * ops.c - r4fuse's POSIX operations: the table libfuse calls (fb_ops).
 *
 * Each fb_<op> translates the request, takes the mutex acting as the
 * caller (br_lock_as: the engine checks the POSIX rules, engine/perm.c),
 * makes one engine call on its nodes' handles (r4_file_*), and replies
 * with fb_err(rc), the one place engine codes become FUSE results.  A
 * change joins the group of calls (CHANGE: br_change_begin, br_change_end);
 * the engine writes its audit records (engine/audit.c).
 * A node that is no object (a pseudo file, the control file, the meta
 * view) has special.c make that one call instead (sp_*); the session and
 * the group are r4fuse.c's, the nodes node.c's.
 */
#include "bridge.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/falloc.h>
#include <linux/fs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <syslog.h>
#include <unistd.h>

static struct handle *handle_of(const struct fuse_file_info *fi)
{
	return fi ? (struct handle *)(uintptr_t)fi->fh : NULL;
}

int fb_err(const char *op, struct node *n, int rc)
{
	char *path = NULL;

	if (rc >= 0)
		return 0;
	if (rc == -EUCLEAN || rc == -EBADMSG || rc < -4095 ||
	    !strcmp(r4_strerror(rc), "Unknown error")) {
		if (n && node_path(n, &path))
			path = NULL;
		if (rc == -EUCLEAN || rc == -EBADMSG)
			br_log(LOG_ERR, "r4fuse: %s %s: the image is damaged (%s)", op,
			       path ? path : "(an unlinked object)", r4_strerror(rc));
		else
			br_log(LOG_ERR, "r4fuse: %s %s: unexpected %d", op,
			       path ? path : "(an unlinked object)", rc);
		free(path);
		return EIO;
	}
	return -rc;
}

/* ---- attributes and entries ---- */

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

/* The attributes of n as the caller sees them: an object's own (stat(2)
 * by name: the engine checks the way to it); the others' are special.c's. */
static int attr_of(const struct caller *c, struct node *n, struct stat *st)
{
	struct r4_stat r;
	int rc = n->kind == K_OBJ ? r4_file_stat(n->obj, &r) : sp_stat(c, n, &r);

	if (!rc)
		fill(st, &r);
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
static void reply_entry(fuse_req_t req, int rc, const struct fuse_entry_param *e)
{
	if (rc) {
		fuse_reply_err(req, rc);
		return;
	}
	if (fuse_reply_entry(req, e)) {
		br_mu_lock();
		node_forget(e->ino, 1);
		pthread_mutex_unlock(&B.mu);
	}
}

/* ---- names ---- */

/* name in object directory p, by the engine's name rule: an entry first,
 * else a pseudo file of the table. */
static int resolve(struct node *p, const char *name, struct node **out)
{
	const struct r4_pseudo_info *ps;
	r4_file *f;
	int rc = r4_ns_resolve(p->obj, name, strlen(name), &f, &ps);

	if (rc)
		return rc;
	if (ps)
		return (rc = r4_file_access(p->obj, 1)) ? rc : node_synth(K_PSEUDO, p, name, out);
	if (r4_is_computed(B.db, r4_file_id(f))) {
		/* an aggregate or invert is its text here, a file read and
		 * written like a pseudo file; the meta view reaches an
		 * aggregate's records */
		r4_file_close(f);
		return node_synth(K_PSEUDO, p, name, out);
	}
	return node_obj(f, p, name, out);
}

/* name in directory node p (id: the kernel's "." and ".." of a file
 * handle, node_dot): its node, looked up once more. */
static int lookup_in(const struct caller *c, fuse_ino_t id, struct node *p, const char *name,
		     struct fuse_entry_param *e)
{
	struct node *n = NULL;
	struct stat st;
	int rc;

	if (strlen(name) > 255)
		rc = -ENAMETOOLONG;
	else if (!strcmp(name, ".") || !strcmp(name, ".."))
		rc = node_dot(id, name[1] == '.', &n);
	else if (!p)
		rc = -ESTALE;
	else if (p->kind == K_OBJ && !sp_reserved(p, name))
		rc = resolve(p, name, &n);
	else
		rc = sp_lookup(c, p, name, &n);
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

	br_enter(req, &c);
	p = node_find(parent);
	rc = fb_err("lookup", p, lookup_in(&c, parent, p, name, &e));
	br_unlock();
	reply_entry(req, rc, &e);
}

static void fb_forget(fuse_req_t req, fuse_ino_t id, uint64_t k)
{
	br_mu_lock();
	node_forget(id, k);
	pthread_mutex_unlock(&B.mu);
	fuse_reply_none(req);
}

static void fb_forget_multi(fuse_req_t req, size_t count, struct fuse_forget_data *v)
{
	br_mu_lock();
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

	br_enter(req, &c);
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
	br_unlock();
	if (rc)
		fuse_reply_err(req, rc);
	else
		fuse_reply_attr(req, &st, timeout_of(n, B.attr_timeout));
}

/* ---- handles ---- */

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
	free(h->marks);
	free(h->list);
	free(h);
}

/* Close h; the last close of an unlinked file removes it, in the group. */
static int handle_close(struct handle *h)
{
	int rc = 0;

	if (h->file && (rc = r4_file_close(h->file)))
		rc = br_change_end("release", rc);
	sp_free(h->sp);
	handle_free(h);
	return rc;
}

/* ---- directories ---- */

/*
 * A directory's readdir offsets are the engine's r4_dirpos_tell of the
 * cursor after each entry: the same for an entry in every open of the
 * directory while it exists, and found again by r4_file_dirseek.  Each
 * handle keeps the cursors of the offsets it handed out (a table open
 * by tell), so that they stay valid while it is open, even after their
 * entries went, and seeking to one costs no listing.
 */
struct mark {
	uint64_t tell;			/* 0: a free slot */
	struct r4_dirpos pos;
};

static struct mark *mark_slot(struct mark *m, size_t cap, uint64_t tell)
{
	size_t i = (size_t)tell & (cap - 1);

	while (m[i].tell && m[i].tell != tell)
		i = (i + 1) & (cap - 1);
	return &m[i];
}

static int mark_put(struct handle *h, const struct r4_dirpos *pos)
{
	uint64_t tell = r4_dirpos_tell(pos);
	struct mark *s;

	if (2 * (h->nmarks + 1) > h->capmarks) {
		size_t cap = h->capmarks ? 2 * h->capmarks : 256;
		struct mark *m = calloc(cap, sizeof(*m));

		if (!m)
			return -ENOMEM;
		for (size_t i = 0; i < h->capmarks; i++)
			if (h->marks[i].tell)
				*mark_slot(m, cap, h->marks[i].tell) = h->marks[i];
		free(h->marks);
		h->marks = m;
		h->capmarks = cap;
	}
	s = mark_slot(h->marks, h->capmarks, tell);
	h->nmarks += !s->tell;
	*s = (struct mark){tell, *pos};
	return 0;
}

/* The cursor of offset off: one this handle gave, or the engine finds it
 * (another open of the directory gave it). */
static int mark_get(struct handle *h, off_t off, struct r4_dirpos *pos)
{
	struct mark *s;

	if (off < 0)
		return -EINVAL;
	if (h->capmarks && (s = mark_slot(h->marks, h->capmarks, (uint64_t)off))->tell) {
		*pos = s->pos;
		return 0;
	}
	return r4_file_dirseek(h->file, (uint64_t)off, pos);
}

/* A READDIRPLUS entry, looked up once the listing is done (plus_fill). */
struct plus {
	char name[256];
	uint64_t ino;
	uint32_t type;
	off_t off;
};

struct fill_ctx {
	fuse_req_t req;
	char *buf;
	size_t size, used;
	struct handle *h;
	struct r4_dirpos *pos;
	struct plus *plus;		/* READDIRPLUS: the entries, their room kept in buf */
	size_t nplus;
};

/* One entry more; off: where the next call goes on; 1 when full. */
static int dir_add(struct fill_ctx *c, const char *name, uint64_t ino, uint32_t type, off_t off)
{
	struct stat st = {.st_ino = ino, .st_mode = type};
	size_t n;

	if (c->plus) {	/* (its size depends on the name alone) */
		n = fuse_add_direntry_plus(c->req, NULL, 0, name, NULL, off);
		if (n > c->size - c->used)
			return 1;
		c->used += n;
		c->plus[c->nplus++] = (struct plus){.ino = ino, .type = type, .off = off};
		strcpy(c->plus[c->nplus - 1].name, name);
		return 0;
	}
	n = fuse_add_direntry(c->req, c->buf + c->used, c->size - c->used, name, &st, off);
	if (n > c->size - c->used)
		return 1;	/* this entry comes next time */
	c->used += n;
	return 0;
}

static int dir_fn(void *ctx, const char *name, size_t len, uint64_t ino, uint32_t type)
{
	struct fill_ctx *c = ctx;
	char n[256];

	if (len > 255)
		return 0;
	memcpy(n, name, len);
	n[len] = 0;
	if (sp_reserved(c->h->n, n))
		return 0;	/* the control file's or meta view's name comes first */
	/* (c->pos stands after this entry already) */
	if (mark_put(c->h, c->pos))
		return -ENOMEM;
	return dir_add(c, n, ino, type, (off_t)r4_dirpos_tell(c->pos));
}

/* A meta view directory: the names read at opendir, entry i at offset i. */
static void list_fill(struct fill_ctx *c, off_t off)
{
	struct handle *h = c->h;
	size_t i = 0;

	for (char *s = h->list, *e; s < h->list + h->nlist; s = e + 1, i++) {
		int rc;

		if (!(e = memchr(s, '\n', (size_t)(h->list + h->nlist - s))))
			break;
		if (i < (size_t)off)
			continue;
		*e = 0;
		rc = dir_add(c, s, 0xffffffff, 0, (off_t)i + 1);	/* (unknown; 0 would hide it) */
		*e = '\n';
		if (rc)
			break;
	}
}

static void fb_readdir(fuse_req_t req, fuse_ino_t id, size_t size, off_t off,
		       struct fuse_file_info *fi)
{
	struct handle *h = handle_of(fi);
	struct r4_dirpos pos = {0};
	struct fill_ctx c = {req, malloc(size), size, 0, h, &pos, NULL, 0};
	int rc = 0;

	(void)id;
	if (!c.buf) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	if (h->list) {
		list_fill(&c, off);
		fuse_reply_buf(req, c.buf, c.used);
		free(c.buf);
		return;
	}
	br_mu_lock();
	if (!(rc = mark_get(h, off, &pos)) && (rc = r4_file_readdir(h->file, &pos, dir_fn, &c)) > 0)
		rc = 0;
	rc = fb_err("readdir", h->n, rc);
	pthread_mutex_unlock(&B.mu);
	if (rc)
		fuse_reply_err(req, rc);
	else
		fuse_reply_buf(req, c.buf, c.used);
	free(c.buf);
}

/*
 * READDIRPLUS's entries, each with what a lookup of its name gives (under
 * the mutex, acting as the caller): the kernel then asks no LOOKUP per
 * name of ls -l and the like, and counts each entry as one (so does
 * node_looked_up here).  "." and "..", which the kernel does not count,
 * and a name the caller may not look up or that went meanwhile, come as
 * names alone (node id 0): the kernel looks those up itself if it must.
 */
static void plus_fill(const struct caller *cl, struct fill_ctx *c)
{
	struct node *d = c->h->n;
	size_t used = 0;

	for (size_t i = 0; i < c->nplus; i++) {
		struct plus *p = &c->plus[i];
		struct fuse_entry_param e;

		if (!c->h->file || !strcmp(p->name, ".") || !strcmp(p->name, "..") ||
		    lookup_in(cl, d->id, d, p->name, &e)) {
			memset(&e, 0, sizeof(e));
			e.attr.st_ino = p->ino;
			e.attr.st_mode = p->type;
		}
		p->ino = e.ino;	/* (now: the reference the kernel holds, if any) */
		used += fuse_add_direntry_plus(c->req, c->buf + used, c->size - used, p->name, &e,
					       p->off);
	}
	c->used = used;
}

static void fb_readdirplus(fuse_req_t req, fuse_ino_t id, size_t size, off_t off,
			   struct fuse_file_info *fi)
{
	struct handle *h = handle_of(fi);
	struct r4_dirpos pos = {0};
	size_t most = size / fuse_add_direntry_plus(req, NULL, 0, "", NULL, 0) + 1;
	struct fill_ctx c = {req, malloc(size), size, 0, h, &pos, calloc(most, sizeof(struct plus)), 0};
	struct caller cl;
	int rc = 0;

	(void)id;
	if (!c.buf || !c.plus) {
		free(c.buf);
		free(c.plus);
		fuse_reply_err(req, ENOMEM);
		return;
	}
	br_enter(req, &cl);
	if (h->list)
		list_fill(&c, off);
	else if (!(rc = mark_get(h, off, &pos)) &&
		 (rc = r4_file_readdir(h->file, &pos, dir_fn, &c)) > 0)
		rc = 0;
	if (!rc)
		plus_fill(&cl, &c);
	rc = fb_err("readdirplus", h->n, rc);
	br_unlock();
	if (rc) {
		fuse_reply_err(req, rc);
	} else if (fuse_reply_buf(req, c.buf, c.used)) {
		/* the kernel did not get them: nor the references */
		br_mu_lock();
		for (size_t i = 0; i < c.nplus; i++)
			if (c.plus[i].ino)
				node_forget(c.plus[i].ino, 1);
		pthread_mutex_unlock(&B.mu);
	}
	free(c.buf);
	free(c.plus);
}

/* Answer an open(2) or opendir(3) of n (under the mutex, which it lets
 * go) with h, or h goes: the call failed, or the answer did not reach the
 * kernel. */
static void reply_open(fuse_req_t req, const char *op, const struct caller *c, struct node *n,
		       struct handle *h, int rc, struct fuse_file_info *fi)
{
	if (rc && h) {
		r4_file_close(h->file);
		handle_free(h);
	}
	rc = fb_err(op, n, rc);
	br_unlock();
	if (rc) {
		fuse_reply_err(req, rc);
		return;
	}
	fi->fh = (uint64_t)(uintptr_t)h;
	if (fuse_reply_open(req, fi)) {
		br_lock_as(c);
		handle_close(h);
		br_unlock();
	}
}

/* A directory is held by identity; the meta view's lists its names. */
static void fb_opendir(fuse_req_t req, fuse_ino_t id, struct fuse_file_info *fi)
{
	struct handle *h = NULL;
	struct caller c;
	struct node *n;
	int rc;

	br_enter(req, &c);
	n = node_find(id);
	if (!n)
		rc = -ESTALE;
	else if (n->kind != K_OBJ && n->kind != K_META)
		rc = -ENOTDIR;
	else if (!(h = handle_new(n)))
		rc = -ENOMEM;
	else if (n->kind == K_META)
		rc = sp_list(&c, n, &h->list, &h->nlist);
	else
		rc = r4_file_reopen(n->obj, O_RDONLY, &h->file);
	reply_open(req, "opendir", &c, n, h, rc, fi);
}

static void fb_releasedir(fuse_req_t req, fuse_ino_t id, struct fuse_file_info *fi)
{
	struct handle *h = handle_of(fi);

	(void)id;
	br_mu_lock();
	r4_file_close(h->file);	/* (a directory is never an orphan) */
	handle_free(h);
	pthread_mutex_unlock(&B.mu);
	fuse_reply_err(req, 0);
}

/* ---- making, linking, removing, renaming ---- */

/*
 * A new object as name in directory p; the engine gives it its owner,
 * mode and group (the caller's, its umask, a setgid directory's).  *out
 * gets a (strong) handle on it when asked.
 */
static int make(const struct caller *c, const char *op, struct node *p, const char *name,
		struct r4_newobj *o, struct fuse_entry_param *e, r4_file **out)
{
	struct node *n;
	struct stat st;
	r4_file *f = NULL, *g;
	int rc;

	if (p->kind != K_OBJ)
		return p->kind == K_META ? -EPERM : -ENOTDIR;
	if (sp_reserved(p, name))
		return -EEXIST;	/* the control file, the meta view */
	if (CHANGE(op, r4_file_make(p->obj, name, strlen(name), o, &f)))
		return rc;
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

	br_enter(req, &c);
	rc = node_find_obj(parent, &p);
	rc = fb_err(op, p, rc ? rc : make(&c, op, p, name, o, &e, NULL));
	br_unlock();
	reply_entry(req, rc, &e);
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

static void fb_unlink_or_rmdir(fuse_req_t req, fuse_ino_t parent, const char *name, bool dir)
{
	struct caller c;
	struct node *p = NULL;
	int rc;

	br_enter(req, &c);
	if (!(rc = node_find_obj(parent, &p)) && !(rc = sp_reserved(p, name) ? -EACCES : 0)) {
		if (dir)
			node_keep(node_child(p, name));
		CHANGE(dir ? "rmdir" : "unlink", r4_file_remove(p->obj, name, strlen(name), dir));
	}
	if (rc == -ENOENT && r4_pseudo_lookup(name, strlen(name)))
		rc = -EACCES;	/* a pseudo file, no entry of that name */
	rc = fb_err(dir ? "rmdir" : "unlink", p, rc);
	br_unlock();
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

static void fb_rename(fuse_req_t req, fuse_ino_t parent, const char *name, fuse_ino_t newparent,
		      const char *newname, unsigned flags)
{
	struct node *p = NULL, *q = NULL, *a, *b;
	struct caller c;
	bool stale = false;
	int rc;

	br_enter(req, &c);
	if ((rc = node_find_obj(parent, &p)) || (rc = node_find_obj(newparent, &q)))
		goto out;
	if (sp_reserved(p, name) || sp_reserved(q, newname)) {
		rc = -EINVAL;
		goto out;
	}
	if ((flags & ~(unsigned)(RENAME_NOREPLACE | RENAME_EXCHANGE | RENAME_WHITEOUT))) {
		rc = -EINVAL;
		goto out;
	}
	a = node_child(p, name);
	b = node_child(q, newname);
	if (!(flags & RENAME_EXCHANGE))
		node_keep(b);	/* (replaced) */
	if (CHANGE("rename", r4_file_rename(p->obj, name, strlen(name), q->obj, newname,
					     strlen(newname),
					     (flags & RENAME_NOREPLACE ? R4_RENAME_NOREPLACE : 0) |
					     (flags & RENAME_EXCHANGE ? R4_RENAME_EXCHANGE : 0) |
					     (flags & RENAME_WHITEOUT ? R4_RENAME_WHITEOUT : 0))))
		goto out;
	/* the nodes follow their objects (and their engine handles the way
	 * they are reached now) */
	if (a && (rc = node_moved(a, q, newname)))
		goto out;
	if (b && (flags & RENAME_EXCHANGE))
		rc = node_moved(b, p, name);
	/* a file renamed over an aggregate became its text (the engine's
	 * rule): the name still leads to the aggregate, which the kernel
	 * thinks is the file now */
	stale = !rc && a && node_child(q, newname) != a;
out:
	rc = fb_err("rename", p, rc);
	br_unlock();
	if (stale)
		node_invalidate_all();
	fuse_reply_err(req, rc);
}

static void fb_link(fuse_req_t req, fuse_ino_t id, fuse_ino_t newparent, const char *newname)
{
	struct fuse_entry_param e;
	struct node *n = NULL, *p;
	struct stat s;
	struct caller c;
	int rc;

	br_enter(req, &c);
	if (!(rc = node_find_obj(id, &n)) && !(rc = node_find_obj(newparent, &p)) &&
	    !(rc = sp_reserved(p, newname) ? -EEXIST : 0) &&
	    !CHANGE("link", r4_file_link(n->obj, p->obj, newname, strlen(newname))) &&
	    !(rc = node_place(n, p, newname)) && !(rc = attr_of(&c, n, &s))) {
		node_looked_up(n);
		entry_of(n, &s, &e);
	}
	rc = fb_err("link", n, rc);
	br_unlock();
	reply_entry(req, rc, &e);
}

static void fb_readlink(fuse_req_t req, fuse_ino_t id)
{
	char buf[4096];
	struct caller c;
	struct node *n = NULL;
	size_t len = 0;
	int rc;

	br_enter(req, &c);
	if (!(rc = node_find_obj(id, &n)))
		rc = r4_file_readlink(n->obj, buf, sizeof(buf) - 1, &len);
	rc = fb_err("readlink", n, rc);
	br_unlock();
	if (rc) {
		fuse_reply_err(req, rc);
		return;
	}
	buf[len < sizeof(buf) - 1 ? len : sizeof(buf) - 1] = 0;
	fuse_reply_readlink(req, buf);
}

/* ---- attributes set, access ---- */

/* What of attr to_set asks for, as the engine's r4_setattr. */
static void setattr_of(const struct stat *attr, int to_set, struct r4_setattr *sa)
{
	if (to_set & FUSE_SET_ATTR_MODE) {
		sa->mask |= R4_SET_MODE;
		sa->mode = attr->st_mode;
	}
	if (to_set & FUSE_SET_ATTR_UID) {
		sa->mask |= R4_SET_UID;
		sa->uid = attr->st_uid;
	}
	if (to_set & FUSE_SET_ATTR_GID) {
		sa->mask |= R4_SET_GID;
		sa->gid = attr->st_gid;
	}
	if (to_set & FUSE_SET_ATTR_SIZE) {
		sa->mask |= R4_SET_SIZE;
		sa->size = (uint64_t)attr->st_size;
	}
	if (to_set & FUSE_SET_ATTR_ATIME_NOW) {
		sa->mask |= R4_SET_ATIME_NOW;
	} else if (to_set & FUSE_SET_ATTR_ATIME) {
		sa->mask |= R4_SET_ATIME;
		sa->atime = attr->st_atim;
	}
	if (to_set & FUSE_SET_ATTR_MTIME_NOW) {
		sa->mask |= R4_SET_MTIME_NOW;
	} else if (to_set & FUSE_SET_ATTR_MTIME) {
		sa->mask |= R4_SET_MTIME;
		sa->mtime = attr->st_mtim;
	}
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

	setattr_of(attr, to_set, &sa);
	br_enter(req, &c);
	n = node_find(id);
	if (!n)
		rc = -ESTALE;
	else if (n->kind != K_OBJ)	/* O_TRUNC before a pseudo file's write is no change */
		rc = sa.mask == R4_SET_SIZE ? attr_of(&c, n, &out) : -EPERM;
	else if (!sa.mask ||
		 !CHANGE("setattr", r4_file_setattr(h && h->file ? h->file : n->obj, &sa)))
		rc = attr_of(&c, n, &out);
	rc = fb_err("setattr", n, rc);
	br_unlock();
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

	br_enter(req, &c);
	n = node_find(id);
	if (!n)
		rc = -ESTALE;
	else if (n->kind != K_OBJ)
		rc = attr_of(&c, n, &s);	/* the view and pseudo files: what may be read */
	else if (!(rc = r4_file_access(n->obj, (unsigned)mask & 7)) && (mask & W_OK) && B.ro)
		rc = -EROFS;
	rc = fb_err("access", n, rc);
	br_unlock();
	fuse_reply_err(req, rc);
}

/* ---- open, create, read, write, close ---- */

/* Regular file n opened as h with flags (access mode, O_TRUNC): held by
 * identity; O_TRUNC with the open, as libfuse asks for it (atomically). */
static int open_obj(struct node *n, int flags, struct handle *h)
{
	struct r4_stat st;
	int rc;

	if (B.ro && ((flags & O_ACCMODE) != O_RDONLY || (flags & O_TRUNC)))
		return -EROFS;
	if ((rc = r4_file_stat(n->obj, &st)))
		return rc;
	if (S_ISDIR(st.mode))
		return -EISDIR;
	if (!(flags & O_TRUNC) || !st.size)
		return r4_file_reopen(n->obj, flags, &h->file);
	return CHANGE("open (O_TRUNC)", r4_file_reopen(n->obj, flags, &h->file));
}

/* h has a regular file open, as fi asked. */
static void file_opened(struct handle *h, struct fuse_file_info *fi)
{
	h->append = (fi->flags & O_APPEND) != 0;
	h->direct = (fi->flags & O_DIRECT) != 0;
	/*
	 * Only the bridge changes the file (or says so), so the kernel may
	 * keep its cached pages across opens; but beside O_DIRECT writes it
	 * may keep stale ones: a buffered read the bridge answered before
	 * such a write, whose pages the kernel cached after the write
	 * dropped them (fstests generic/451).  Once a file was written so,
	 * each open drops them.
	 */
	fi->keep_cache = !h->n->direct_written;
	/* a close(2) reports lost changes (fb_flush); reading ones have none
	 * to report: no FLUSH round trip */
	fi->noflush = (fi->flags & O_ACCMODE) == O_RDONLY;
}

static void fb_open(fuse_req_t req, fuse_ino_t id, struct fuse_file_info *fi)
{
	struct handle *h = NULL;
	struct caller c;
	struct node *n;
	int rc;

	br_enter(req, &c);
	n = node_find(id);
	if (!n)
		rc = -ESTALE;
	else if (n->kind == K_META)
		rc = -EISDIR;
	else if (!(h = handle_new(n)))
		rc = -ENOMEM;
	else if (n->kind != K_OBJ)
		rc = sp_open(n, fi, &h->sp);
	else
		rc = open_obj(n, fi->flags & (O_ACCMODE | O_TRUNC | O_APPEND | R4_O_EXEC), h);
	if (!rc && !h->sp)
		file_opened(h, fi);
	reply_open(req, "open", &c, n, h, rc, fi);
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

	br_enter(req, &c);
	if (!(rc = node_find_obj(parent, &p)) && !(rc = make(&c, "create", p, name, &o, &e, &f))) {
		if (!(h = handle_new(node_find(e.ino)))) {
			r4_file_close(f);
			node_forget(e.ino, 1);
			rc = -ENOMEM;
		} else {
			h->file = f;
			fi->fh = (uint64_t)(uintptr_t)h;
			file_opened(h, fi);
		}
	}
	rc = fb_err("create", p, rc);
	br_unlock();
	if (rc) {
		fuse_reply_err(req, rc);
	} else if (fuse_reply_create(req, &e, fi)) {
		br_lock_as(&c);
		handle_close(h);
		node_forget(e.ino, 1);
		br_unlock();
	}
}

static void fb_read(fuse_req_t req, fuse_ino_t id, size_t size, off_t off,
		    struct fuse_file_info *fi)
{
	struct handle *h = handle_of(fi);
	char *buf = malloc(size ? size : 1);
	bool changed = false;
	struct caller c;
	size_t got = 0;
	int rc;

	(void)id;
	if (!buf) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	sp_caller(req, h->sp, false, &c);
	br_lock_as(&c);
	if (h->sp)
		rc = sp_read(&c, h->sp, buf, size, off, &got, &changed);
	else
		rc = r4_file_read(h->file, (uint64_t)off, buf, size, &got);
	rc = fb_err("read", h->n, rc);
	br_unlock();
	if (changed)
		node_invalidate_all();
	if (rc)
		fuse_reply_err(req, rc);
	else
		fuse_reply_buf(req, buf, got);
	free(buf);
}

static void fb_write(fuse_req_t req, fuse_ino_t id, const char *buf, size_t n, off_t off,
		     struct fuse_file_info *fi)
{
	struct handle *h = handle_of(fi);
	bool changed = false;
	struct caller c;
	int rc;

	(void)id;
	sp_caller(req, h->sp, true, &c);
	br_lock_as(&c);
	if (h->sp)
		rc = sp_write(&c, h->sp, buf, n, off, &changed);
	else if (h->append)	/* at the end as it is now */
		CHANGE("write", r4_file_append(h->file, buf, n));
	else
		CHANGE("write", r4_file_write(h->file, (uint64_t)off, buf, n));
	if (!rc && h->direct)
		h->n->direct_written = true;
	rc = fb_err("write", h->n, rc);
	br_unlock();
	if (changed)
		node_invalidate_all();
	if (rc)
		fuse_reply_err(req, rc);
	else
		fuse_reply_write(req, n);
}

/* lseek(2)'s SEEK_DATA and SEEK_HOLE (the kernel answers the others): an
 * object's from its items (the engine); a pseudo file or the control file
 * tells no holes, data to its size, as Linux answers for a file system
 * that keeps no map. */
static void fb_lseek(fuse_req_t req, fuse_ino_t id, off_t off, int whence,
		     struct fuse_file_info *fi)
{
	struct handle *h = handle_of(fi);
	struct caller c;
	struct stat st;
	uint64_t at = 0;
	int rc;

	(void)id;
	br_enter(req, &c);
	if (whence != SEEK_DATA && whence != SEEK_HOLE)
		rc = -EINVAL;
	else if (off < 0)
		rc = -ENXIO;
	else if (h->file)
		rc = r4_file_seek(h->file, (uint64_t)off, whence, &at);
	else if (!(rc = attr_of(&c, h->n, &st)))
		rc = off >= st.st_size ? -ENXIO : (at = whence == SEEK_DATA ? (uint64_t)off
						       : (uint64_t)st.st_size, 0);
	rc = fb_err("lseek", h->n, rc);
	br_unlock();
	if (rc)
		fuse_reply_err(req, rc);
	else
		fuse_reply_lseek(req, (off_t)at);
}

/* close(2): a command written and closed unread still runs; a descriptor
 * whose changes were lost says so. */
static void fb_flush(fuse_req_t req, fuse_ino_t id, struct fuse_file_info *fi)
{
	struct handle *h = handle_of(fi);
	bool changed = false;
	struct caller c;
	int rc = 0;

	(void)id;
	sp_caller(req, h->sp, false, &c);
	br_lock_as(&c);
	if (h->sp)
		rc = fb_err("flush", h->n, sp_flush(&c, h->sp, &changed));
	else if (h->file)
		rc = fb_err("close", h->n, r4_file_error(h->file, true));
	br_unlock();
	if (changed)
		node_invalidate_all();
	fuse_reply_err(req, rc);
}

static void fb_release(fuse_req_t req, fuse_ino_t id, struct fuse_file_info *fi)
{
	struct handle *h = handle_of(fi);
	bool changed = false;
	struct caller c;
	int rc;

	(void)id;
	sp_caller(req, h->sp, false, &c);
	br_lock_as(&c);
	if (h->sp)
		sp_flush(&c, h->sp, &changed);
	rc = handle_close(h);
	rc = rc ? fb_err("release", NULL, rc) : 0;
	br_unlock();
	if (changed)
		node_invalidate_all();
	fuse_reply_err(req, rc);
}

/*
 * fsync(2), fdatasync(2): every change made before it arrived is durable
 * (the whole group's, not only this file's); and 0 only if no change made
 * through the file's handles was lost since this descriptor last heard of
 * it (r4_file_error).
 *
 * Group commit (br_durable): what it needs is counted on arrival, before
 * the mutex, so an fsync that waited while another's commit ran finds its
 * changes committed by that one and returns without a commit of its own.
 * A commit is durable when r4_commit returns (header synced:
 * docs/engine.md), so nothing more is synced here; the footer goes with
 * the next commit or at unmount.
 */
static void fb_fsync(fuse_req_t req, fuse_ino_t id, int datasync, struct fuse_file_info *fi)
{
	uint64_t want = br_changes_now();
	struct handle *h = handle_of(fi);
	int rc = 0, lost;

	(void)datasync;
	br_mu_lock();
	/* the root's fsync is how a remount read-only ends (r4fuse.c remount):
	 * a repack pass stops first, and everything is settled, so the image
	 * is final when the remount returns */
	bool ro = id == FUSE_ROOT_ID && B.mountpoint && r4_mount_ro(B.mountpoint);

	if (ro)
		rp_read_only();
	rc = br_durable(ro ? br_changes_now() : want, fuse_req_ctx(req)->pid);
	if (!rc && ro)
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
	br_mu_lock();
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

/* fallocate(2): one engine call, whose modes are Linux's values */
_Static_assert(FALLOC_FL_KEEP_SIZE == R4_FALLOC_KEEP_SIZE &&
		       FALLOC_FL_PUNCH_HOLE == R4_FALLOC_PUNCH_HOLE &&
		       FALLOC_FL_COLLAPSE_RANGE == R4_FALLOC_COLLAPSE_RANGE &&
		       FALLOC_FL_ZERO_RANGE == R4_FALLOC_ZERO_RANGE &&
		       FALLOC_FL_INSERT_RANGE == R4_FALLOC_INSERT_RANGE,
	       "r4.h's fallocate modes are Linux's");

static void fb_fallocate(fuse_req_t req, fuse_ino_t id, int mode, off_t off, off_t len,
			 struct fuse_file_info *fi)
{
	struct handle *h = handle_of(fi);
	struct caller c;
	int rc;

	(void)id;
	if (off < 0 || len <= 0) {
		fuse_reply_err(req, EINVAL);
		return;
	}
	if (!h->file) {
		fuse_reply_err(req, EBADF);
		return;
	}
	br_enter(req, &c);
	CHANGE("fallocate", r4_file_fallocate(h->file, (unsigned)mode, (uint64_t)off, (uint64_t)len));
	rc = fb_err("fallocate", h->n, rc);
	br_unlock();
	fuse_reply_err(req, rc);
}

/* ---- ioctl: inode flags ----
 *
 * The kernel's FUSE asks for a regular file's or directory's flags
 * (chattr, lsattr: FS_IOC_GETFLAGS/SETFLAGS; xfs_io: FS_IOC_FSGETXATTR/
 * FSSETXATTR) with an ioctl of its own on a handle it opened for it, the
 * data in and out as cmd says.  Both kinds are one engine call
 * (r4_file_stat's flags, r4_file_setflags); xflags translate to the
 * flags they mean, and an xflag or field r4 has no flag for is
 * EOPNOTSUPP.  Every other ioctl: ENOTTY.
 */

static const struct {
	uint32_t x, fl;
} xflag_map[] = {
	{FS_XFLAG_IMMUTABLE, R4_FL_IMMUTABLE}, {FS_XFLAG_APPEND, R4_FL_APPEND},
	{FS_XFLAG_SYNC, R4_FL_SYNC},	       {FS_XFLAG_NOATIME, R4_FL_NOATIME},
	{FS_XFLAG_NODUMP, R4_FL_NODUMP},
};
#define NXFLAGS (sizeof(xflag_map) / sizeof(xflag_map[0]))

/* The flags of a set (flags, and mask: those the request speaks of) from
 * cmd's data in[0, n). */
static int ioctl_flags_in(unsigned cmd, const void *in, size_t n, uint32_t *flags, uint32_t *mask)
{
	struct fsxattr fa;
	unsigned int fl;

	if (cmd == FS_IOC_SETFLAGS) {
		if (n < sizeof(fl))
			return -EINVAL;
		memcpy(&fl, in, sizeof(fl));
		*flags = fl;
		*mask = ~(uint32_t)0;
		return 0;
	}
	if (n < sizeof(fa))
		return -EINVAL;
	memcpy(&fa, in, sizeof(fa));
	*flags = *mask = 0;
	for (size_t i = 0; i < NXFLAGS; i++) {
		*mask |= xflag_map[i].fl;
		if (fa.fsx_xflags & xflag_map[i].x) {
			*flags |= xflag_map[i].fl;
			fa.fsx_xflags &= ~xflag_map[i].x;
		}
	}
	return fa.fsx_xflags || fa.fsx_extsize || fa.fsx_projid || fa.fsx_cowextsize ? -EOPNOTSUPP
										    : 0;
}

static void fb_ioctl(fuse_req_t req, fuse_ino_t id, int cmd, void *arg, struct fuse_file_info *fi,
		     unsigned flags, const void *in, size_t in_size, size_t out_size)
{
	struct handle *h = handle_of(fi);
	unsigned c = (unsigned)cmd;
	bool get = c == FS_IOC_GETFLAGS || c == FS_IOC_FSGETXATTR;
	struct fsxattr fa = {0};
	unsigned int fl = 0;
	uint32_t set, mask;
	struct r4_stat st;
	struct caller who;
	int rc;

	(void)arg;
	(void)flags;
	if (!get && c != FS_IOC_SETFLAGS && c != FS_IOC_FSSETXATTR) {
		fuse_reply_err(req, ENOTTY);
		return;
	}
	if (!h || !h->file) {	/* (a pseudo file, the control file, the meta view) */
		fuse_reply_err(req, ENOTTY);
		return;
	}
	if (get && out_size < (c == FS_IOC_GETFLAGS ? sizeof(fl) : sizeof(fa))) {
		fuse_reply_err(req, EINVAL);
		return;
	}
	br_enter(req, &who);
	if (get)
		rc = r4_file_stat(h->file, &st);
	else if (!(rc = ioctl_flags_in(c, in, in_size, &set, &mask)))
		CHANGE("ioctl", r4_file_setflags(h->file, set, mask));
	rc = fb_err("ioctl", h->n, rc);
	br_unlock();
	if (!rc && !get)	/* (the kernel keeps the ctime it had) */
		node_invalidate_attrs(id);
	if (rc) {
		fuse_reply_err(req, rc);
	} else if (c == FS_IOC_GETFLAGS) {
		fl = st.flags;
		fuse_reply_ioctl(req, 0, &fl, sizeof(fl));
	} else if (c == FS_IOC_FSGETXATTR) {
		for (size_t i = 0; i < NXFLAGS; i++)
			if (st.flags & xflag_map[i].fl)
				fa.fsx_xflags |= xflag_map[i].x;
		fuse_reply_ioctl(req, 0, &fa, sizeof(fa));
	} else {
		fuse_reply_ioctl(req, 0, NULL, 0);
	}
}

const struct fuse_lowlevel_ops fb_ops = {
	.init = br_init,
	.destroy = br_destroy,
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
	.readdirplus = fb_readdirplus,
	.releasedir = fb_releasedir,
	.fsyncdir = fb_fsync,
	.statfs = fb_statfs,
	.setxattr = sp_setxattr,
	.getxattr = sp_getxattr,
	.listxattr = sp_listxattr,
	.removexattr = sp_removexattr,
	.access = fb_access,
	.fallocate = fb_fallocate,
	.lseek = fb_lseek,
	.ioctl = fb_ioctl,
};
