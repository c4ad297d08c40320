/*
 * exec.c - the plan executor: runs what the command language compiled
 * (LANGUAGE.md sections 5 and 6, docs/plan.md) against an open image.
 *
 * Handles are resolved absolute paths: ns.c's walker walks each path for
 * the acting identity (search permission), following symlinks (the fs API's
 * calls by path never do) and ending at pseudo names; the executor's own
 * names, result children, and its touches of entries reach the walker as
 * hooks.  Changes go through the fs API of r4.h inside the unit's
 * transaction.
 *
 * Undo for named results: the engine has no partial rollback, so when a
 * step fails inside a TRY the executor aborts the unit's transaction,
 * remembers that this TRY fails (with its errno), and runs the unit again
 * from its start; reaching that TRY it binds the error and jumps past it.
 * A unit is deterministic for a given image (serializable, one clock value
 * for the whole unit, values handed to the host only at commit), so the
 * second run redoes exactly what preceded the TRY.  Each failure forces
 * one more TRY, so a unit runs at most 1 + (its TRY steps) times.
 */
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "db.h"
#include "ns.h"
#include "obj.h"
#include "perm.h"

#define REPLAY 1		/* run_steps: a TRY caught a failure, run the unit again */
#define MAX_INVERT_DEPTH 8	/* inverts read inside inverts (then ELOOP) */

enum hkind {
	H_NONE,			/* unset, or an exist-test that did not resolve */
	H_OBJ,			/* an object */
	H_MISSING,		/* a name its directory does not hold (path: where it would be) */
	H_PSEUDO,		/* a pseudo file of an object */
	H_WINDOW,		/* ..range of a regular file */
	H_BYTES,		/* a result child: read-only bytes */
};

struct handle {
	enum hkind kind;
	char *path;		/* absolute, no symlink before the last component */
	struct r4_stat st;	/* the object (H_OBJ, H_PSEUDO, H_WINDOW) ... */
	uint64_t gen;		/* ... as it was at this db->gen (every change bumps it) */
	bool fresh;		/* st (and dst) hold a stat taken at gen */
	struct r4_stat dst;	/* H_MISSING: the directory */
	uint64_t dir_ino;	/* the directory holding the name (0 for the root) */
	enum r4_pseudo ps;	/* H_PSEUDO */
	char *sub;		/* ..plugin/<sub> */
	uint64_t woff, wlen;	/* H_WINDOW */
	bool wlen_set;
	unsigned wmode;
	struct r4_buf bytes;	/* H_BYTES */
};

struct result {			/* the children of an assignment's target, or of a named result */
	uint64_t ino;
	enum r4_pseudo ps;
	int err;
	uint64_t length;
	bool bound;
};

struct touch {			/* a unit of state a member of a ',' group used (section 5.5) */
	uint64_t ino;		/* the object, or the directory of an entry */
	int what;		/* -1 an entry, 0 contents, else a pseudo file */
	char *name;		/* the entry */
	bool write;
	unsigned member;
	size_t step;
};

struct group {
	unsigned member;
	struct touch *t;
	size_t n, cap;
};

struct forced {			/* a TRY that failed in an earlier run of the unit */
	bool set;
	int err;
	uint64_t length;
};

struct yielded {
	uint32_t off, len;
	char *path;
	struct r4_buf bytes;
	int err;
};

struct x {
	struct r4_db *db;
	const struct r4_plan *p;
	const struct r4_exec_opts *o;
	struct r4_exec_error *e;

	struct handle *h;
	struct r4_buf *v;
	char **cwd;		/* the scope stack; cwd[ncwd - 1] is the current directory */
	size_t ncwd, cwdcap;
	size_t *tries;		/* open TRY steps */
	size_t ntries;
	struct forced *forced;	/* by step */
	struct result *named;	/* by named-result id */
	size_t nnamed;
	struct result *res;	/* result children of objects */
	size_t nres, rescap;
	uint32_t *rtab;		/* ... by (object, pseudo file): index + 1, 0 = empty */
	size_t rsize;
	struct group *groups;
	size_t ngroups, groupcap;
	struct yielded *ys;
	size_t nys, yscap;
	uint64_t last_len;	/* bytes the last change stored */
	size_t step;		/* the step running */
	struct r4_session *session;	/* o->session */
	struct record *rec;	/* this run's record in the session, or the one replayed */
	bool replaying;		/* redoing a session's earlier run: no values, no record */
	unsigned inverts;	/* inverts being read, one inside another */
};

/* A run that stays in a session: what it takes to do it again. */
struct record {
	struct r4_plan *plan;
	struct forced *forced;	/* by step: the TRYs that failed */
	unsigned units;		/* units of the plan that ran (the first ones) */
	struct r4_exec_opts o;	/* identity and current directory, owned copies */
	uint32_t *groups;
	char *cwd;
};

struct r4_session {
	struct r4_db *db;
	struct record **v;
	size_t n, cap;
	bool broken;		/* an earlier run could not be redone: only rollback is left */
};

/* ================================ helpers =============================== */

static int fail(struct x *x, int rc, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static int fail(struct x *x, int rc, const char *fmt, ...)
{
	struct r4_exec_error *e = x->e;
	va_list ap;
	size_t n;

	if (e->rc)
		return rc;
	e->rc = rc;
	e->step = x->step;
	e->off = x->p->steps[x->step].off;
	e->len = x->p->steps[x->step].len;
	va_start(ap, fmt);
	vsnprintf(e->msg, sizeof(e->msg), fmt, ap);
	va_end(ap);
	n = strlen(e->msg);
	snprintf(e->msg + n, sizeof(e->msg) - n, ": %s", r4_strerror(rc));
	return rc;
}

static void handle_clear(struct handle *h)
{
	r4_free(h->path);
	r4_free(h->sub);
	r4_buf_free(&h->bytes);
	*h = (struct handle){0};
}

/* h->st, taken again only when something changed since it was taken. */
static int h_stat(struct x *x, struct handle *h)
{
	int rc;

	if (h->fresh && h->gen == x->db->gen)
		return 0;
	if ((rc = r4_stat(x->db, h->path, &h->st)))
		return rc;
	h->fresh = h->kind != H_MISSING;	/* dst is not taken again */
	h->gen = x->db->gen;
	return 0;
}

/* A value operand: a register or a constant (none: empty). */
static void val(struct x *x, int32_t op, const uint8_t **p, size_t *n)
{
	static const uint8_t empty[1];

	if (R4_PLAN_IS_CONST(op)) {
		size_t k = R4_PLAN_CONST_INDEX(op);

		*p = (const uint8_t *)x->p->consts[k].p;
		*n = x->p->consts[k].len;
	} else if (op >= 0 && x->v[op].p) {
		*p = x->v[op].p;
		*n = x->v[op].len;
	} else {
		*p = empty;
		*n = 0;
	}
}

/* The last component of an absolute path ("/" for the root). */
static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');

	return s && s[1] ? s + 1 : path;
}

/* Cut an absolute path to its parent, in place. */
static void to_parent(char *path)
{
	char *s = strrchr(path, '/');

	if (s == path)
		path[1] = 0;
	else if (s)
		*s = 0;
}

static char *dir_of(const char *path)
{
	char *d = r4_memdup(path, strlen(path));

	if (d)
		to_parent(d);
	return d;
}

/* Section 5.2's permission check for the acting identity: want is a mix
 * of 4 (read), 2 (write), 1 (search/execute). */
static bool may(const struct x *x, const struct r4_stat *st, unsigned want)
{
	/* (root's execute rule does not apply to R4L: it runs nothing) */
	return x->o->who.uid == 0 || r4_allows(x->db, &x->o->who, st, want);
}

/* What the object is to an aggregate (R4_ROLE_*), and the format. */
static unsigned role_of(struct x *x, const char *path, const struct r4_stat *st, unsigned *format)
{
	return r4_aggr_role(x->db, path, st, format);
}


static bool is_owner(const struct x *x, const struct r4_stat *st)
{
	return r4_perm_owns(&x->o->who, st);
}

/* One trailing LF of a value written to a metadata pseudo file is ignored. */
static void chop_lf(const uint8_t *p, size_t *n)
{
	if (*n && p[*n - 1] == '\n')
		(*n)--;
}

/* Decimal text (what '#' literals produce), optionally negative. */
static int parse_int(const uint8_t *p, size_t n, bool neg_ok, int64_t *out)
{
	bool neg = false;
	uint64_t v = 0;

	chop_lf(p, &n);
	if (n && p[0] == '-' && neg_ok) {
		neg = true;
		p++;
		n--;
	}
	if (!n || n > 19)
		return -EINVAL;
	for (size_t i = 0; i < n; i++) {
		if (p[i] < '0' || p[i] > '9')
			return -EINVAL;
		v = v * 10 + (p[i] - '0');
	}
	if (v > INT64_MAX)
		return -EINVAL;
	*out = neg ? -(int64_t)v : (int64_t)v;
	return 0;
}

/* 1 to 4 octal digits. */
static int parse_mode(const uint8_t *p, size_t n, uint32_t *out)
{
	uint32_t m = 0;

	chop_lf(p, &n);
	if (!n || n > 4)
		return -EINVAL;
	for (size_t i = 0; i < n; i++) {
		if (p[i] < '0' || p[i] > '7')
			return -EINVAL;
		m = m << 3 | (uint32_t)(p[i] - '0');
	}
	*out = m;
	return 0;
}

/* A name for a new entry: what may be created, linked or renamed to.  Not
 * "..x": R4L spells that a pseudo name, so could not reach the entry. */
static int check_name(const uint8_t *p, size_t n)
{
	if (!n || memchr(p, '/', n) || memchr(p, 0, n))
		return -EINVAL;
	if (n > 255)
		return -ENAMETOOLONG;
	if (p[0] == '.' && (n == 1 || p[1] == '.'))
		return -EINVAL;	/* ".", "..", and pseudo names */
	return 0;
}

static int read_all(struct r4_db *db, const char *path, uint64_t off, uint64_t len, struct r4_buf *b)
{
	size_t got;
	int rc;

	if (len > SIZE_MAX / 2)
		return -EFBIG;
	if ((rc = r4_buf_reserve(b, (size_t)len + 1)))
		return rc;
	if ((rc = r4_read(db, path, off, b->p, (size_t)len, &got)))
		return rc;
	b->len = got;
	b->p[got] = 0;
	return 0;
}

/* ============================ conflict tracking ========================= */

static bool same_unit(const struct touch *a, uint64_t ino, int what, const char *name)
{
	if (a->ino != ino || a->what != what)
		return false;
	return what != -1 || !strcmp(a->name, name);
}

/* The members of every open ',' group must be independent (section 5.5). */
static int touch(struct x *x, uint64_t ino, int what, const char *name, bool write,
		 const char *path)
{
	for (size_t g = 0; g < x->ngroups; g++) {
		struct group *gr = &x->groups[g];

		for (size_t i = 0; i < gr->n; i++) {
			struct touch *t = &gr->t[i];

			if (t->member == gr->member || !(write || t->write) ||
			    !same_unit(t, ino, what, name))
				continue;
			x->e->note_step = (int)t->step;
			snprintf(x->e->note, sizeof(x->e->note), "the other member %s it here",
				 t->write ? "changes" : "uses");
			return fail(x, -EBUSY, "conflict: '%s' is %s by two members of a ',' group",
				    path, write ? "changed" : "used");
		}
		if (gr->n == gr->cap) {
			size_t cap = gr->cap ? gr->cap * 2 : 16;
			struct touch *t = r4_realloc(gr->t, cap * sizeof(*t));

			if (!t)
				return -ENOMEM;
			gr->t = t;
			gr->cap = cap;
		}
		struct touch *t = &gr->t[gr->n];

		*t = (struct touch){ino, what, NULL, write, gr->member, x->step};
		if (name && !(t->name = r4_memdup(name, strlen(name))))
			return -ENOMEM;
		gr->n++;
	}
	return 0;
}

static int touch_entry(struct x *x, uint64_t dir, const char *name, bool write, const char *path)
{
	return x->ngroups ? touch(x, dir, -1, name, write, path) : 0;
}

static int touch_obj(struct x *x, uint64_t ino, int what, bool write, const char *path)
{
	return x->ngroups ? touch(x, ino, what, NULL, write, path) : 0;
}

static void group_free(struct group *g)
{
	for (size_t i = 0; i < g->n; i++)
		r4_free(g->t[i].name);
	r4_free(g->t);
}

/* ================================ results =============================== */

static size_t result_slot(const struct x *x, uint64_t ino, enum r4_pseudo ps)
{
	uint64_t h = (ino * 31 + (uint64_t)ps) * UINT64_C(0x9e3779b97f4a7c15);
	size_t at = (size_t)(h >> 32) & (x->rsize - 1);

	while (x->rtab[at]) {
		const struct result *r = &x->res[x->rtab[at] - 1];

		if (r->ino == ino && r->ps == ps)
			break;
		at = (at + 1) & (x->rsize - 1);
	}
	return at;
}

static struct result *result_of(struct x *x, uint64_t ino, enum r4_pseudo ps)
{
	size_t at;

	if (!x->nres)
		return NULL;
	at = result_slot(x, ino, ps);
	return x->rtab[at] ? &x->res[x->rtab[at] - 1] : NULL;
}

static int bind_result(struct x *x, uint64_t ino, enum r4_pseudo ps, int err, uint64_t length)
{
	struct result *r = result_of(x, ino, ps);

	if (!r) {
		if (x->nres == x->rescap) {
			size_t cap = x->rescap ? x->rescap * 2 : 8;
			struct result *n = r4_realloc(x->res, cap * sizeof(*n));
			uint32_t *t = r4_calloc(cap * 2, sizeof(*t));

			if (!n || !t) {
				if (n)
					x->res = n;
				r4_free(t);
				return -ENOMEM;
			}
			x->res = n;
			x->rescap = cap;
			r4_free(x->rtab);
			x->rtab = t;	/* rebuilt below, at most half full */
			x->rsize = cap * 2;
			for (size_t i = 0; i < x->nres; i++)
				x->rtab[result_slot(x, x->res[i].ino, x->res[i].ps)] = (uint32_t)i + 1;
		}
		r = &x->res[x->nres++];
		*r = (struct result){ino, ps, 0, 0, false};
		x->rtab[result_slot(x, ino, ps)] = (uint32_t)x->nres;
	}
	*r = (struct result){ino, ps, err, length, true};
	return 0;
}

static bool is_result_child(const char *name, size_t len, int *which)
{
	if (len == 13 && !memcmp(name, "assign_result", 13))
		*which = 0;
	else if (len == 13 && !memcmp(name, "assign_length", 13))
		*which = 1;
	else
		return false;
	return true;
}

static int result_text(const struct result *r, int which, struct r4_buf *b)
{
	b->len = 0;
	if (which == 0)
		return r4_buf_printf(b, "%d", r->err < 0 ? -r->err : r->err);
	return r4_buf_printf(b, "%llu", (unsigned long long)r->length);
}

/* ================================ lookup ================================ */

/* ns.c's walker asks: is name, under the object reached, a bound result
 * child of it (then the walk ends there, and a symlink is itself)? */
static bool claims(void *ctx, const struct r4_ns_walk *w, const char *name, size_t len)
{
	int which;

	return is_result_child(name, len, &which) && result_of(ctx, w->st.ino, R4_PSEUDO_NONE);
}

/* ... and before it looks name up in the directory reached: its touch. */
static int enter(void *ctx, const struct r4_ns_walk *w, const char *name, size_t len)
{
	struct x *x = ctx;
	char *next;
	int rc;

	if (!x->ngroups)
		return 0;
	if (!(next = r4_path_join(w->path, name, len)))
		return -ENOMEM;
	rc = touch_entry(x, w->st.ino, base_name(next), false, next);
	r4_free(next);
	return rc;
}

/* A name that cannot be resolved: the step's path up to and including
 * component comp. */
static int lookup_fail(struct x *x, const char *text, int comp, int rc, bool create)
{
	const char *r = text, *name = r;
	size_t len = 0;

	for (int k = 0; k <= comp && r4_ns_next(&r, &name, &len); k++)
		;
	x->e->comp = comp;
	return fail(x, rc, "cannot %s '%.*s'", create ? "write" : "read",
		    (int)(name + len - text), text);
}

/* What follows a pseudo name: ..plugin/<type>, or a result child of the
 * pseudo file. */
static int pseudo_tail(struct x *x, struct r4_ns_walk *w, const char *text, bool create,
		       struct handle *h)
{
	const char *r = w->rest, *name;
	size_t len;
	int which;

	h->kind = H_PSEUDO;
	h->ps = w->ps->id;
	if (!r4_ns_next(&r, &name, &len))
		return 0;
	if (is_result_child(name, len, &which)) {
		struct result *res = result_of(x, w->st.ino, w->ps->id);

		if (!res)
			return lookup_fail(x, text, w->comp + 1, -ENOENT, create);
		h->kind = H_BYTES;
		return result_text(res, which, &h->bytes);
	}
	if (w->ps->id != R4_PSEUDO_PLUGIN)
		return lookup_fail(x, text, w->comp + 1, -ENOTDIR, create);
	return (h->sub = r4_memdup(name, len)) ? 0 : -ENOMEM;
}

/* Where the walk ended, as a handle. */
static int ended(struct x *x, struct r4_ns_walk *w, const char *text, bool create,
		 struct handle *h)
{
	const char *r = w->rest, *name;
	size_t len;
	int rc = 0, which;

	switch (w->end) {
	case R4_NS_AT_MISSING:
		h->kind = H_MISSING;
		if (!(h->path = r4_path_join(w->path, w->name, w->len)))
			return -ENOMEM;
		h->dir_ino = w->st.ino;
		h->dst = w->st;	/* the directory, for make() */
		h->gen = x->db->gen;
		h->fresh = true;
		return 0;
	case R4_NS_AT_PSEUDO:
		rc = pseudo_tail(x, w, text, create, h);
		break;
	case R4_NS_AT_CLAIMED:
		h->kind = H_BYTES;
		is_result_child(w->name, w->len, &which);
		if ((rc = result_text(result_of(x, w->st.ino, R4_PSEUDO_NONE), which, &h->bytes)))
			return rc;
		if (r4_ns_next(&r, &name, &len))
			return lookup_fail(x, text, w->comp, -ENOTDIR, create);
		break;
	default:
		h->kind = H_OBJ;
	}
	h->path = w->path;
	w->path = NULL;
	h->st = w->st;
	h->dir_ino = w->dir_ino;
	h->gen = x->db->gen;
	h->fresh = true;
	return rc;
}

/*
 * Walk path text `text` from the object `from` (absolute path; NULL: the
 * current directory) with flags R4_LOOK_* and ns.c's R4_NS_CHECKED or 0,
 * through ns.c's walker; the handle goes to *h.
 */
static int walk_ns(struct x *x, const char *from, const char *text, unsigned flags,
		   unsigned checked, struct handle *h)
{
	struct r4_ns_walk w = {
		.db = x->db,
		.who = &x->o->who,
		.flags = checked | R4_NS_PATH | R4_NS_PSEUDO | R4_NS_FOLLOW |
			 (flags & R4_LOOK_NOFOLLOW ? 0 : R4_NS_FOLLOW_LAST) |
			 (flags & (R4_LOOK_CREATE | R4_LOOK_MISSING) ? R4_NS_MISSING : 0),
		.enter = enter,
		.claims = claims,
		.ctx = x,
	};
	bool create = flags & (R4_LOOK_CREATE | R4_LOOK_MISSING);
	int rc;

	handle_clear(h);
	if (text[0] == '/')
		from = "/";
	else if (!from)
		from = x->cwd[x->ncwd - 1];
	rc = r4_ns_walk(&w, from, text);
	if (!rc)
		rc = ended(x, &w, text, create, h);
	else if ((rc == -ENOENT || rc == -ENOTDIR) && (flags & R4_LOOK_EXIST))
		rc = 0;		/* an empty handle: P does not exist */
	else if (w.comp < 0)
		rc = fail(x, r4_db_seen(x->db, rc), "cannot read '%s'", from);
	else if (rc == -ENOENT || rc == -ENOTDIR || rc == -EACCES || rc == -ELOOP)
		rc = lookup_fail(x, text, w.comp, rc, create);
	else
		rc = fail(x, r4_db_seen(x->db, rc), "cannot read '%s'", w.path);
	r4_ns_fini(&w);
	if (rc)
		handle_clear(h);
	return rc;
}

/* A path of bytes made at run time: a real "..x" comes before the pseudo
 * name (docs/semantics.md, "Names"). */
static int walk(struct x *x, const char *from, const char *text, unsigned flags,
		struct handle *h)
{
	return walk_ns(x, from, text, flags, 0, h);
}

/* ============================ reading values ============================ */

static const char *type_name(uint32_t mode)
{
	switch (mode & S_IFMT) {
	case S_IFREG: return "regular";
	case S_IFDIR: return "directory";
	case S_IFLNK: return "symlink";
	case S_IFIFO: return "fifo";
	case S_IFSOCK: return "socket";
	case S_IFCHR: return "chardev";
	case S_IFBLK: return "blockdev";
	default: return "unknown";
	}
}

/* Is the object an invert (section 6.5): a regular file r4 composes? */
static bool is_invert(struct x *x, const struct r4_stat *st)
{
	return S_ISREG(st->mode) && r4_meta_present(x->db) &&
	       r4_meta_kind(x->db, st->ino, NULL) == R4_META_INVERT;
}

/* Are the object's contents computed text (an aggregate, a record, an invert)? */
static bool is_computed(struct x *x, const char *path, const struct r4_stat *st)
{
	return S_ISDIR(st->mode) ? role_of(x, path, st, NULL) != R4_ROLE_NONE : is_invert(x, st);
}

/* ..type: the file type, or what it is to an aggregate, or invert. */
static const char *object_type(struct x *x, const char *path, const struct r4_stat *st)
{
	unsigned f;

	if (is_invert(x, st))
		return "invert";
	switch (S_ISDIR(st->mode) ? role_of(x, path, st, &f) : R4_ROLE_NONE) {
	case R4_ROLE_AGGREGATE: return "aggregate";
	case R4_ROLE_RECORD: return "record";
	default: return type_name(st->mode);
	}
}

/* Section 6.4's audit record for a change of the object ino (reached as
 * path), appended to its log in the unit's transaction; nothing when the
 * object is not audited or is the log itself. */
static int audit(struct x *x, uint64_t ino, const char *op, const char *path, uint64_t len)
{
	char *log = NULL;
	int rc;

	if ((rc = r4_audit_log(x->db, ino, &log)))
		return fail(x, rc, "cannot read the audit setting of '%s'", path);
	if (log && (rc = r4_audit_append(x->db, log, ino, x->o->who.uid, op, path, len)))
		rc = fail(x, rc, "cannot audit '%s' into '%s'", path, log);
	r4_free(log);
	return rc;
}

/* Audit a change of an entry in directory dir (path: the entry's). */
static int audit_entry(struct x *x, uint64_t obj, uint64_t dir, const char *op, const char *path,
		       uint64_t len)
{
	int rc = obj ? audit(x, obj, op, path, len) : 0;

	if (!rc && dir && dir != obj)
		rc = audit(x, dir, op, path, len);
	return rc;
}

/* ..acl's text: one rule per line. */
static int acl_text(struct x *x, const struct handle *h, struct r4_buf *b)
{
	struct r4_meta m;
	int rc;

	if ((rc = r4_meta_get(x->db, h->st.ino, &m)))
		return fail(x, rc, "cannot read '%s/..acl'", h->path);
	for (unsigned i = 0; i < m.nrules && !rc; i++)
		rc = r4_buf_printf(b, "%s %u %s\n", m.rules[i].gid ? "gid" : "uid", m.rules[i].id,
				r4_accesses[m.rules[i].access]);
	r4_meta_fini(&m);
	return rc;
}

static int audit_text(struct x *x, const struct handle *h, struct r4_buf *b)
{
	struct r4_meta m;
	int rc;

	if ((rc = r4_meta_get(x->db, h->st.ino, &m)))
		return fail(x, rc, "cannot read '%s/..audit'", h->path);
	rc = m.audit ? r4_buf_printf(b, "%s", m.audit) : 0;
	r4_meta_fini(&m);
	return rc;
}

static int key_text(struct x *x, const char *path, struct r4_buf *b)
{
	struct r4_inode ino;
	int rc;

	if ((rc = r4_fs_resolve(x->db, path, &ino)))
		return rc;
	const r4_key *k = &ino.sdkey;

	if (x->db->flags & 1)
		rc = r4_buf_printf(b, "%llx:%x:%llx:%llx:%llx", (unsigned long long)r4_key_locality(k),
				r4_key_type(k), (unsigned long long)r4_key_ordering(k),
				(unsigned long long)r4_key_objectid(k),
				(unsigned long long)r4_key_offset(k));
	else
		rc = r4_buf_printf(b, "%llx:%x:%llx:%llx", (unsigned long long)r4_key_locality(k),
				r4_key_type(k), (unsigned long long)r4_key_objectid(k),
				(unsigned long long)r4_key_offset(k));
	r4_obj_fini(&ino);
	return rc;
}

/* The plugin-set members that govern an object: "type label" lines, or
 * the label of one (sub). */
/*
 * ..plugin: one line "member label" per plugin-set member that governs the
 * object (docs/plan.md); an aggregate or invert names r4's plugin instead
 * of reg40/dir40, and an aggregate adds its format.
 */
static int plugin_text(struct x *x, const char *path, const struct r4_stat *st, const char *sub,
		       struct r4_buf *b)
{
	static const unsigned reg[] = {R4_PSET_FILE, R4_PSET_FORMATTING, ~0u},
		ccreg[] = {R4_PSET_FILE, R4_PSET_COMPRESSION, R4_PSET_CMODE, R4_PSET_CLUSTER, ~0u},
		dir[] = {R4_PSET_FILE, R4_PSET_HASH, R4_PSET_FIBRATION, ~0u},
		other[] = {R4_PSET_FILE, ~0u};
	struct member {
		const char *name, *label;
	} m[6];
	struct r4_inode ino;
	const unsigned *set;
	size_t n = 0;
	unsigned format = 0, type;
	int rc;

	if ((rc = r4_fs_resolve(x->db, path, &ino)))
		return rc;
	bool agg = S_ISDIR(st->mode) && role_of(x, path, st, &format) == R4_ROLE_AGGREGATE;

	set = S_ISDIR(st->mode) ? dir : !S_ISREG(st->mode) ? other
	      : r4_obj_plugin(x->db, &ino, R4_PSET_FILE) == 4 ? ccreg : reg;
	for (; *set != ~0u; set++) {
		const char *name = r4_pset_member_name(*set);

		unsigned id = r4_obj_plugin(x->db, &ino, *set);

		r4_pset_member(name, strlen(name), &type);
		m[n++] = (struct member){name, r4_plugin_label(type, id)};
		if (*set == R4_PSET_FILE && agg) {
			m[0].label = "aggregate";
			m[n++] = (struct member){"format", r4_formats[format == R4_FORMAT_COLON]};
		} else if (*set == R4_PSET_FILE && is_invert(x, st)) {
			m[0].label = "invert";
		}
	}
	r4_obj_fini(&ino);
	for (size_t i = 0; i < n; i++) {
		const char *label = m[i].label ? m[i].label : "?";

		if (sub && !strcmp(sub, m[i].name))
			return r4_buf_printf(b, "%s", label);
		if (!sub && (rc = r4_buf_printf(b, "%s %s\n", m[i].name, label)))
			return rc;
	}
	return sub ? fail(x, -ENOENT, "'%s/..plugin' has no member '%s'", path, sub) : 0;
}

struct list_ctx {
	struct r4_buf *b;
	int rc;
};

static int list_fn(void *ctx, const char *name, size_t len, uint64_t ino, uint32_t type)
{
	struct list_ctx *l = ctx;

	(void)ino;
	(void)type;
	if ((l->rc = r4_buf_add(l->b, name, len)) || (l->rc = r4_buf_add(l->b, "\n", 1)))
		return 1;
	return 0;
}

/* Section 6.1's ..list: the entries, then the pseudo names that apply. */
static int list_text(struct x *x, const char *path, const struct r4_stat *st, struct r4_buf *b)
{
	static const enum r4_pseudo common[] = {
		R4_PSEUDO_UID, R4_PSEUDO_GID, R4_PSEUDO_MODE, R4_PSEUDO_TYPE, R4_PSEUDO_SIZE,
		R4_PSEUDO_NLINK, R4_PSEUDO_ATIME, R4_PSEUDO_MTIME, R4_PSEUDO_CTIME, R4_PSEUDO_OID,
		R4_PSEUDO_KEY, R4_PSEUDO_PLUGIN, R4_PSEUDO_LIST, R4_PSEUDO_BODY, R4_PSEUDO_NAME,
		R4_PSEUDO_ACL, R4_PSEUDO_AUDIT,
	};
	static const enum r4_pseudo dir_only[] = {R4_PSEUDO_UNLINK, R4_PSEUDO_NEW, R4_PSEUDO_LINK};
	int rc;

	if (S_ISDIR(st->mode)) {
		struct r4_dirpos pos = {0};
		struct list_ctx l = {b, 0};

		if (!may(x, st, 4))
			return fail(x, -EACCES, "cannot read '%s/..list'", path);
		if ((rc = r4_readdir(x->db, path, &pos, list_fn, &l)) || (rc = l.rc))
			return rc;
	}
	for (size_t i = 0; i < R4_ARRAY_SIZE(common); i++) {
		if (common[i] == R4_PSEUDO_BODY && S_ISDIR(st->mode) &&
		    role_of(x, path, st, NULL) == R4_ROLE_NONE)
			continue;
		if ((rc = r4_buf_printf(b, "%s\n", r4_pseudo_name(common[i]))))
			return rc;
	}
	if ((S_ISREG(st->mode) || role_of(x, path, st, NULL) == R4_ROLE_AGGREGATE) &&
	    (rc = r4_buf_printf(b, "%s\n", r4_pseudo_name(R4_PSEUDO_RANGE))))
		return rc;
	if (is_invert(x, st) && (rc = r4_buf_printf(b, "%s\n", r4_pseudo_name(R4_PSEUDO_INVERT))))
		return rc;
	for (size_t i = 0; S_ISDIR(st->mode) && i < R4_ARRAY_SIZE(dir_only); i++)
		if ((rc = r4_buf_printf(b, "%s\n", r4_pseudo_name(dir_only[i]))))
			return rc;
	return 0;
}

static int contents(struct x *x, const char *path, const struct r4_stat *st, struct r4_buf *b);
static int read_handle(struct x *x, struct handle *h, struct r4_buf *b);

/* b += p[0, n) as a section 2.4 string, quotes included. */
static int buf_quote(struct r4_buf *b, const uint8_t *p, size_t n)
{
	size_t k = r4_quote(NULL, p, n);
	int rc;

	if ((rc = r4_buf_reserve(b, b->len + k + 1)))
		return rc;
	r4_quote((char *)b->p + b->len, p, n);
	b->len += k;
	return 0;
}

/* The current contents of an invert's file part, read as the caller. */
static int part_contents(struct x *x, const char *path, struct r4_buf *b)
{
	struct handle h = {0};
	int rc;

	if (!(rc = walk(x, NULL, path, 0, &h)))
		rc = read_handle(x, &h, b);
	handle_clear(&h);
	return rc;
}

/*
 * An invert's text (section 6.5): its parts' contents concatenated, or,
 * canonical, the definition that writes them back: "(P <- \"...\")" per
 * file part, "..." per literal, joined by " + ", ending in LF.
 */
static int invert_text(struct x *x, const char *path, const struct r4_stat *st, bool canonical,
		       struct r4_buf *b)
{
	struct r4_buf part = {0};
	struct r4_meta m;
	int rc;

	b->len = 0;
	if (x->inverts >= MAX_INVERT_DEPTH)
		return fail(x, -ELOOP, "cannot read '%s': inverts nest more than %d deep", path,
			    MAX_INVERT_DEPTH);
	if ((rc = r4_meta_get(x->db, st->ino, &m)))
		return fail(x, r4_db_seen(x->db, rc), "cannot read '%s'", path);
	x->inverts++;
	for (size_t i = 0; i < m.nparts && !rc; i++) {
		const struct r4_part *pt = &m.parts[i];

		if (canonical && i && (rc = r4_buf_add(b, " + ", 3)))
			break;
		if (!pt->path) {
			rc = canonical ? buf_quote(b, pt->text, pt->len) : r4_buf_add(b, pt->text, pt->len);
			continue;
		}
		if ((rc = part_contents(x, pt->path, &part)))
			break;
		if (!canonical)
			rc = r4_buf_add(b, part.p, part.len);
		else if (!(rc = r4_buf_printf(b, "(%s <- ", pt->path)) &&
			 !(rc = buf_quote(b, part.p, part.len)))
			rc = r4_buf_add(b, ")", 1);
	}
	if (!rc && canonical && m.nparts)
		rc = r4_buf_add(b, "\n", 1);
	x->inverts--;
	r4_buf_free(&part);
	r4_meta_fini(&m);
	return rc;
}

/* The contents of an object (section 5.1): a file's data, a symlink's text. */
static int contents(struct x *x, const char *path, const struct r4_stat *st, struct r4_buf *b)
{
	int rc;

	b->len = 0;
	if (S_ISDIR(st->mode)) {
		unsigned role = role_of(x, path, st, NULL);
		char *text, *agg = NULL;
		size_t n;

		if (role != R4_ROLE_AGGREGATE && role != R4_ROLE_RECORD)
			return fail(x, -EISDIR, "cannot read '%s'", path);
		if (!may(x, st, 4))
			return fail(x, -EACCES, "cannot read '%s'", path);
		if (role == R4_ROLE_RECORD && !(agg = dir_of(path)))
			return -ENOMEM;
		rc = r4_aggr_text(x->db, &x->o->who, agg ? agg : path, agg ? base_name(path) : NULL,
				  &text, &n);
		r4_free(agg);
		if (rc)
			return fail(x, r4_db_seen(x->db, rc), "cannot read '%s'", path);
		rc = r4_buf_set(b, text, n);
		r4_free(text);
		return rc;
	}
	if (!may(x, st, 4))
		return fail(x, -EACCES, "cannot read '%s'", path);
	if (is_invert(x, st))
		return invert_text(x, path, st, false, b);
	if (S_ISLNK(st->mode)) {
		if ((rc = r4_buf_reserve(b, (size_t)st->size + 1)))
			return rc;
		size_t n;

		if ((rc = r4_readlink(x->db, path, (char *)b->p, (size_t)st->size, &n)))
			return fail(x, rc, "cannot read '%s'", path);
		b->len = R4_MIN(n, (size_t)st->size);
		b->p[b->len] = 0;
		return 0;
	}
	if (!S_ISREG(st->mode))
		return fail(x, -EINVAL, "cannot read '%s': not a file", path);
	if ((rc = read_all(x->db, path, 0, st->size, b)))
		return fail(x, rc, "cannot read '%s'", path);
	return 0;
}

static int pseudo_read(struct x *x, const struct handle *h, struct r4_buf *b)
{
	const struct r4_stat *st = &h->st;
	const char *path = h->path;

	b->len = 0;
	if (r4_buf_reserve(b, 64))
		return -ENOMEM;
	b->p[0] = 0;
	switch (h->ps) {
	case R4_PSEUDO_UID: return r4_buf_printf(b, "%u", st->uid);
	case R4_PSEUDO_GID: return r4_buf_printf(b, "%u", st->gid);
	case R4_PSEUDO_MODE: return r4_buf_printf(b, "%04o", st->mode & 07777);
	case R4_PSEUDO_TYPE: return r4_buf_printf(b, "%s", object_type(x, path, st));
	case R4_PSEUDO_SIZE:
		if (is_computed(x, path, st)) {
			int rc = contents(x, path, st, b);
			size_t len = b->len;

			return rc ? rc : (b->len = 0, r4_buf_printf(b, "%zu", len));
		}
		return r4_buf_printf(b, "%llu", (unsigned long long)st->size);
	case R4_PSEUDO_NLINK: return r4_buf_printf(b, "%u", st->nlink);
	case R4_PSEUDO_ATIME: return r4_buf_printf(b, "%lld", (long long)st->atime.tv_sec);
	case R4_PSEUDO_MTIME: return r4_buf_printf(b, "%lld", (long long)st->mtime.tv_sec);
	case R4_PSEUDO_CTIME: return r4_buf_printf(b, "%lld", (long long)st->ctime.tv_sec);
	case R4_PSEUDO_OID: return r4_buf_printf(b, "%llu", (unsigned long long)st->ino);
	case R4_PSEUDO_KEY: return key_text(x, path, b);
	case R4_PSEUDO_PLUGIN: return plugin_text(x, path, st, h->sub, b);
	case R4_PSEUDO_LIST: return list_text(x, path, st, b);
	case R4_PSEUDO_BODY: return contents(x, path, st, b);
	case R4_PSEUDO_NAME: return r4_buf_printf(b, "%s", base_name(path));
	case R4_PSEUDO_ACL: return acl_text(x, h, b);
	case R4_PSEUDO_AUDIT: return audit_text(x, h, b);
	case R4_PSEUDO_INVERT:
		if (!is_invert(x, st))
			return 0;	/* not an invert: no definition */
		if (!may(x, st, 4))
			return fail(x, -EACCES, "cannot read '%s/..invert'", path);
		return invert_text(x, path, st, true, b);
	default:
		return fail(x, -EACCES, "cannot read '%s/%s': it is write-only", path,
			    r4_pseudo_name(h->ps));
	}
}

static int window_read(struct x *x, const struct handle *h, struct r4_buf *b)
{
	uint64_t size = h->st.size, end;

	b->len = 0;
	if (is_computed(x, h->path, &h->st)) {
		int rc = contents(x, h->path, &h->st, b);

		if (rc)
			return rc;
		size = b->len;
		end = h->wlen_set && h->wlen < size - R4_MIN(h->woff, size) ? h->woff + h->wlen : size;
		b->len = h->woff >= size ? 0 : (size_t)(end - h->woff);
		memmove(b->p, b->p + R4_MIN(h->woff, size), b->len);
		return 0;
	}
	if (!may(x, &h->st, 4))
		return fail(x, -EACCES, "cannot read '%s'", h->path);
	if (h->woff >= size)
		return r4_buf_set(b, "", 0);
	end = h->wlen_set && h->wlen < size - h->woff ? h->woff + h->wlen : size;
	return read_all(x->db, h->path, h->woff, end - h->woff, b);
}

/* The bytes of a handle (READ, and object values). */
static int read_handle(struct x *x, struct handle *h, struct r4_buf *b)
{
	int rc;

	switch (h->kind) {
	case H_OBJ:
		if ((rc = h_stat(x, h)))
			return fail(x, rc, "cannot read '%s'", h->path);
		if ((rc = touch_obj(x, h->st.ino, 0, false, h->path)))
			return rc;
		return contents(x, h->path, &h->st, b);
	case H_PSEUDO:
		if ((rc = h_stat(x, h)))
			return fail(x, rc, "cannot read '%s'", h->path);
		if ((rc = touch_obj(x, h->st.ino, h->ps == R4_PSEUDO_BODY ? 0 : (int)h->ps, false,
				    h->path)))
			return rc;
		return pseudo_read(x, h, b);
	case H_WINDOW:
		if ((rc = h_stat(x, h)))
			return fail(x, rc, "cannot read '%s'", h->path);
		if ((rc = touch_obj(x, h->st.ino, 0, false, h->path)))
			return rc;
		return window_read(x, h, b);
	case H_BYTES:
		return r4_buf_set(b, h->bytes.p, h->bytes.len);
	case H_MISSING:
		return fail(x, -ENOENT, "cannot read '%s'", h->path);
	default:
		/* the target of a named assignment that failed: empty bytes */
		return r4_buf_set(b, "", 0);
	}
}

/* =============================== changing =============================== */

/* May the caller add or remove entries of directory d (path dir), and, in
 * a sticky directory, remove or rename the entry's object st (perm.c)? */
static int may_change(struct x *x, const struct r4_stat *d, const struct r4_stat *st,
		      const char *dir, const char *path)
{
	int rc = r4_perm_entry(x->db, &x->o->who, d, st);

	if (rc == -ENOTDIR)
		return fail(x, rc, "cannot change '%s'", dir);
	if (rc == -EPERM)
		return fail(x, rc, "cannot change '%s': the directory is sticky", path);
	return rc ? fail(x, rc, "cannot change '%s'", path) : 0;
}

/* The same, for the directory at path dir. */
static int may_change_dir(struct x *x, const char *dir, const struct r4_stat *st,
			  const char *path)
{
	struct r4_stat d;
	int rc;

	if ((rc = r4_stat(x->db, dir, &d)))
		return fail(x, rc, "cannot change '%s'", dir);
	return may_change(x, &d, st, dir, path);
}


/* Make a missing name (section 5.2): a regular file, a directory or a symlink. */
static int make(struct x *x, struct handle *h, uint32_t type, uint32_t perm, const uint8_t *tgt,
		size_t tlen)
{
	char *dir = dir_of(h->path);
	struct r4_stat d;
	uint32_t mode = type | (perm & 07777), uid = 0, gid = 0;
	int rc;

	if (!dir)
		return -ENOMEM;
	if (h->fresh && h->gen == x->db->gen)
		d = h->dst;
	else if ((rc = r4_stat(x->db, dir, &d))) {
		rc = fail(x, rc, "cannot change '%s'", dir);
		goto out;
	}
	if ((rc = may_change(x, &d, NULL, dir, h->path)))
		goto out;
	r4_perm_new(&x->o->who, &d, &mode, &uid, &gid);
	if ((rc = touch_entry(x, h->dir_ino, base_name(h->path), true, h->path)))
		goto out;
	if (type == S_IFLNK && (!tlen || memchr(tgt, 0, tlen)))
		rc = -EINVAL;
	else
		rc = r4_fs_make(x->db, h->path, mode, uid, gid, tgt, tlen, &h->st);
	if (rc) {
		rc = fail(x, rc, "cannot create '%s'", h->path);
		goto out;
	}
	h->kind = H_OBJ;
	h->gen = x->db->gen;
	h->fresh = true;
	rc = audit(x, d.ino, "create", h->path, 0);
out:
	r4_free(dir);
	return rc;
}

/* A write drops set-id bits as perm.c says. */
static int clear_suid(struct x *x, const struct handle *h)
{
	struct r4_setattr sa = {.mask = R4_SET_MODE};

	sa.mode = r4_perm_after_write(&x->o->who, &h->st);
	return sa.mode == h->st.mode ? 0 : r4_setattr(x->db, h->path, &sa);
}

/* Write an aggregate's text (section 7). */
static int aggr_put(struct x *x, struct handle *h, const uint8_t *p, size_t n, bool append)
{
	char why[200];
	int rc;

	if ((rc = touch_obj(x, h->st.ino, 0, true, h->path)))
		return rc;
	rc = r4_aggr_write(x->db, &x->o->who, h->path, p, n, append, why, sizeof(why));
	if (rc && why[0])
		return fail(x, r4_db_seen(x->db, rc), "cannot write '%s': %s", h->path, why);
	if (rc)
		return fail(x, r4_db_seen(x->db, rc), "cannot write '%s'", h->path);
	x->last_len = n;
	return audit(x, h->st.ino, append ? "append" : "write", h->path, n);
}

/* A field's value: no ':' or LF (one trailing LF is dropped).  Writing
 * the name field renames the record; h follows it. */
static int field_put(struct x *x, struct handle *h, unsigned format, const uint8_t *p, size_t *n,
		     bool append)
{
	char *rec = NULL, *agg = NULL, *to = NULL;
	struct r4_stat rst;
	int rc = 0;

	chop_lf(p, n);
	if (memchr(p, ':', *n) || memchr(p, '\n', *n) || memchr(p, 0, *n))
		return fail(x, -EINVAL, "cannot write '%s': a field holds no ':', line feed or NUL",
			    h->path);
	if (!r4_aggr_is_name_field(format, h->path))
		return 0;
	if (append)
		return fail(x, -EINVAL, "cannot append to '%s': it names the record", h->path);
	if ((rc = check_name(p, *n)))
		return fail(x, -EINVAL, "cannot write '%s': '%.*s' cannot name a record", h->path,
			    (int)*n, (const char *)p);
	if (!(rec = dir_of(h->path)) || !(agg = dir_of(rec)) ||
	    !(to = r4_path_join(agg, (const char *)p, *n))) {
		rc = -ENOMEM;
		goto out;
	}
	if (!strcmp(to, rec))
		goto out;
	if ((rc = r4_stat(x->db, rec, &rst))) {
		rc = fail(x, rc, "cannot rename '%s'", rec);
		goto out;
	}
	if (!may(x, &h->st, 2)) {
		rc = fail(x, -EACCES, "cannot write '%s'", h->path);
		goto out;
	}
	if ((rc = may_change_dir(x, agg, &rst, rec)))
		goto out;
	if ((rc = r4_rename(x->db, rec, to, R4_RENAME_NOREPLACE))) {
		rc = fail(x, rc, "cannot rename '%s' to '%s'", rec, to);
		goto out;
	}
	char *np = r4_path_join(to, base_name(h->path), strlen(base_name(h->path)));

	if (!np) {
		rc = -ENOMEM;
		goto out;
	}
	r4_free(h->path);
	h->path = np;
	rc = audit(x, rst.ino, "rename", to, *n);
out:
	r4_free(rec);
	r4_free(agg);
	r4_free(to);
	return rc;
}

/* Replace (append: extend) a regular file's contents. */
static int put_contents(struct x *x, struct handle *h, const uint8_t *p, size_t n, bool append)
{
	unsigned format = 0;
	int rc;

	if ((rc = h_stat(x, h)))
		return fail(x, rc, "cannot write '%s'", h->path);
	if (S_ISDIR(h->st.mode)) {
		unsigned role = role_of(x, h->path, &h->st, NULL);

		if (role == R4_ROLE_AGGREGATE)
			return aggr_put(x, h, p, n, append);
		if (role == R4_ROLE_RECORD)
			return fail(x, -EOPNOTSUPP, "cannot write '%s': write its aggregate or "
				    "one of its fields", h->path);
		return fail(x, -EISDIR, "cannot write '%s'", h->path);
	}
	if (!S_ISREG(h->st.mode))
		return fail(x, -EINVAL, "cannot write '%s': not a file", h->path);
	if (is_invert(x, &h->st))
		return fail(x, -EOPNOTSUPP, "cannot write '%s': an invert is its parts (write them, "
			    "or its ..invert)", h->path);
	if (!may(x, &h->st, 2))
		return fail(x, -EACCES, "cannot write '%s'", h->path);
	if (role_of(x, h->path, &h->st, &format) == R4_ROLE_FIELD &&
	    (rc = field_put(x, h, format, p, &n, append)))
		return rc;
	if ((rc = touch_obj(x, h->st.ino, 0, true, h->path)) ||
	    (rc = touch_obj(x, h->st.ino, R4_PSEUDO_SIZE, true, h->path)))
		return rc;
	if (append)
		rc = r4_write(x->db, h->path, h->st.size, p, n);
	else if (!(rc = n ? r4_write(x->db, h->path, 0, p, n) : 0) && h->st.size > n)
		rc = r4_truncate(x->db, h->path, n);
	if (!rc)
		rc = clear_suid(x, h);
	if (rc)
		return fail(x, rc, "cannot write '%s'", h->path);
	x->last_len = n;
	return audit(x, h->st.ino, append ? "append" : "write", h->path, n);
}

/* A symlink's text, replaced in place (..body of a symlink). */
static int set_link_text(struct x *x, struct handle *h, const uint8_t *p, size_t n)
{
	int rc;

	if (!n || memchr(p, 0, n))
		return fail(x, -EINVAL, "cannot write '%s/..body'", h->path);
	if (!may(x, &h->st, 2))
		return fail(x, -EACCES, "cannot write '%s/..body'", h->path);
	if ((rc = r4_fs_set_symlink(x->db, h->path, p, n)))
		return fail(x, rc, "cannot write '%s/..body'", h->path);
	x->last_len = n;
	return 0;
}

static int do_rename(struct x *x, struct handle *h, const uint8_t *p, size_t n)
{
	char *to = NULL, *dir = NULL;
	int rc;

	chop_lf(p, &n);
	if (!strcmp(h->path, "/"))
		return fail(x, -EBUSY, "cannot rename '/'");
	if ((rc = check_name(p, n)))
		return fail(x, rc, "cannot rename '%s' to '%.*s'", h->path, (int)n, (const char *)p);
	if (!(dir = dir_of(h->path)) || !(to = r4_path_join(dir, (const char *)p, n))) {
		rc = -ENOMEM;
		goto out;
	}
	if (!strcmp(to, h->path))
		goto out;	/* its own name */
	if ((rc = may_change_dir(x, dir, &h->st, h->path)) ||
	    (rc = touch_entry(x, h->dir_ino, base_name(h->path), true, h->path)) ||
	    (rc = touch_entry(x, h->dir_ino, base_name(to), true, to)))
		goto out;
	unsigned format = 0;
	bool record = S_ISDIR(h->st.mode) && role_of(x, h->path, &h->st, &format) == R4_ROLE_RECORD;

	if ((rc = r4_rename(x->db, h->path, to, R4_RENAME_NOREPLACE))) {
		rc = fail(x, rc, "cannot rename '%s' to '%.*s'", h->path, (int)n, (const char *)p);
		goto out;
	}
	if ((record && (rc = r4_aggr_renamed(x->db, to, format))) ||
	    (rc = audit_entry(x, h->st.ino, h->dir_ino, "rename", to, n))) {
		rc = fail(x, rc, "cannot rename '%s'", h->path);
		goto out;
	}
	r4_free(h->path);
	h->path = to;
	to = NULL;
	x->last_len = n;
out:
	r4_free(to);
	r4_free(dir);
	return rc;
}

/* A name to remove from the directory h: any entry but "." and "..", a
 * "..x" too (docs/semantics.md, "Names"), but not r4's own records. */
static int removable(const struct handle *h, const uint8_t *p, size_t n)
{
	const char *s = (const char *)p;

	if (!n || memchr(p, '/', n) || memchr(p, 0, n) || r4_ns_dot(s, n) ||
	    r4_ns_private(!strcmp(h->path, "/"), s, n))
		return -EINVAL;
	return n > 255 ? -ENAMETOOLONG : 0;
}

static int do_unlink(struct x *x, struct handle *h, const uint8_t *p, size_t n)
{
	struct r4_stat st;
	char *path;
	int rc;

	chop_lf(p, &n);
	if (!S_ISDIR(h->st.mode))
		return fail(x, -ENOTDIR, "cannot remove entries of '%s'", h->path);
	if ((rc = removable(h, p, n)))
		return fail(x, rc, "cannot remove '%.*s' from '%s'", (int)n, (const char *)p,
			    h->path);
	if (!(path = r4_path_join(h->path, (const char *)p, n)))
		return -ENOMEM;
	if ((rc = r4_stat(x->db, path, &st))) {
		rc = fail(x, rc, "cannot remove '%s'", path);
	} else if (!(rc = may_change_dir(x, h->path, &st, path)) &&
		   !(rc = touch_entry(x, h->st.ino, base_name(path), true, path)) &&
		   !(rc = touch_obj(x, st.ino, 0, true, path))) {
		bool record = S_ISDIR(st.mode) && role_of(x, path, &st, NULL) == R4_ROLE_RECORD;

		/* recorded first: the object's last name takes its audit setting
		 * with it (a failure below undoes the record with the unit) */
		if ((rc = audit_entry(x, st.ino, h->st.ino, "unlink", path, n)))
			goto out;
		rc = record ? r4_aggr_rmtree(x->db, path) : S_ISDIR(st.mode) ? r4_rmdir(x->db, path)
		     : r4_unlink(x->db, path);
		if (rc)
			rc = fail(x, rc, "cannot remove '%s'", path);
		else
			x->last_len = n;
	}
out:
	r4_free(path);
	return rc;
}

static int write_handle(struct x *x, struct handle *h, const uint8_t *p, size_t n, bool append);

/* Try to read h as the caller: the bytes, or an error that fails nothing. */
static int try_read(struct x *x, struct handle *h, struct r4_buf *b)
{
	struct r4_exec_error saved = *x->e;
	int rc = read_handle(x, h, b);

	if (rc)
		*x->e = saved;
	return rc;
}

/* Do two part lists say the same? */
static bool same_parts(const struct r4_part *a, size_t na, const struct r4_part *b, size_t nb)
{
	if (na != nb)
		return false;
	for (size_t i = 0; i < na; i++) {
		if (!a[i].path != !b[i].path)
			return false;
		if (a[i].path ? strcmp(a[i].path, b[i].path)
		    : a[i].len != b[i].len || memcmp(a[i].text, b[i].text, a[i].len))
			return false;
	}
	return true;
}

/*
 * X/..invert <- text (section 6.5): each (P <- S) part first writes S to P
 * (created as a missing name is), unless P already holds S; then the part
 * list becomes X's, unless it already is.  So the canonical text written
 * back changes nothing, and an edited one changes exactly what was edited.
 */
static int invert_define(struct x *x, struct handle *h, const uint8_t *p, size_t n)
{
	struct r4_part *parts = NULL;
	struct r4_buf cur = {0};
	struct r4_meta m = {0};
	size_t np = 0;
	char why[200];
	bool changed = false;
	int rc;

	if (!is_invert(x, &h->st))
		return fail(x, -EOPNOTSUPP, "cannot write '%s/..invert': not an invert (make one "
			    "with ..new/(..., type <- invert))", h->path);
	if (!may(x, &h->st, 2))
		return fail(x, -EACCES, "cannot write '%s/..invert'", h->path);
	if ((rc = touch_obj(x, h->st.ino, 0, true, h->path)))
		return rc;
	if ((rc = r4_invert_parse(p, n, &parts, &np, why, sizeof(why))))
		return rc == -EINVAL ? fail(x, rc, "cannot write '%s/..invert': %s", h->path, why)
		       : rc;
	for (size_t i = 0; i < np && !rc; i++) {
		struct handle ph = {0};

		if (!parts[i].path || !parts[i].text)
			continue;
		if ((rc = walk(x, NULL, parts[i].path, R4_LOOK_CREATE, &ph)))
			break;
		if (ph.kind == H_MISSING || try_read(x, &ph, &cur) || cur.len != parts[i].len ||
		    memcmp(cur.p, parts[i].text, cur.len)) {
			rc = write_handle(x, &ph, parts[i].text, parts[i].len, false);
			changed = true;
		}
		handle_clear(&ph);
	}
	if (!rc && (rc = r4_meta_get(x->db, h->st.ino, &m)))
		rc = fail(x, r4_db_seen(x->db, rc), "cannot write '%s/..invert'", h->path);
	if (!rc && !same_parts(m.parts, m.nparts, parts, np)) {
		r4_invert_free(m.parts, m.nparts);
		m.parts = NULL;
		m.nparts = 0;
		for (size_t i = 0; i < np && !rc; i++)
			rc = r4_meta_add_part(&m, parts[i].path, parts[i].text, parts[i].len);
		if (rc || (rc = r4_meta_put(x->db, h->st.ino, &m)))
			rc = fail(x, rc, "cannot write '%s/..invert'", h->path);
		changed = true;
	}
	r4_meta_fini(&m);
	r4_invert_free(parts, np);
	r4_buf_free(&cur);
	if (rc)
		return rc;
	x->last_len = n;
	return changed ? audit(x, h->st.ino, "write", h->path, n) : 0;
}

/* Change the object's meta record with fn (owner or root only, section 6.4). */
static int meta_change(struct x *x, struct handle *h, const char *what,
		       int (*fn)(struct x *x, struct r4_meta *m, void *arg), void *arg)
{
	struct r4_meta m;
	int rc;

	if (!is_owner(x, &h->st))
		return fail(x, -EPERM, "cannot change '%s/%s': only its owner may", h->path, what);
	if ((rc = r4_meta_get(x->db, h->st.ino, &m)))
		return fail(x, rc, "cannot change '%s/%s'", h->path, what);
	if (!(rc = fn(x, &m, arg)) && (rc = r4_meta_put(x->db, h->st.ino, &m)))
		rc = fail(x, rc, "cannot change '%s/%s'", h->path, what);
	r4_meta_fini(&m);
	return rc ? rc : audit(x, h->st.ino, "setattr", h->path, 0);
}

static int set_rule(struct x *x, struct r4_meta *m, void *arg)
{
	const struct r4_rule *r = arg;

	for (unsigned i = 0; i < m->nrules; i++)
		if (m->rules[i].gid == r->gid && m->rules[i].id == r->id) {
			m->rules[i] = *r;
			return 0;
		}
	if (m->nrules == R4_MAX_RULES)
		return fail(x, -ENOSPC, "an object holds at most %d access rules", R4_MAX_RULES);
	m->rules[m->nrules++] = *r;
	return 0;
}

struct text {
	const uint8_t *p;
	size_t n;
};

/* ..acl <- text: "uid N ACCESS" / "gid N ACCESS" lines replace the rules. */
static int set_rules(struct x *x, struct r4_meta *m, void *arg)
{
	const struct text *t = arg;
	const uint8_t *p = t->p;
	size_t n = t->n;
	int rc = 0;

	m->nrules = 0;
	while (n && !rc) {
		const uint8_t *lf = memchr(p, '\n', n);
		size_t k = lf ? (size_t)(lf - p) : n;
		char line[80], kind[8], acc[16];
		unsigned long id;
		int used = 0;
		struct r4_rule r = {0};

		if (k >= sizeof(line))
			return fail(x, -EINVAL, "an access rule is 'uid N ACCESS' or 'gid N ACCESS'");
		memcpy(line, p, k);
		line[k] = 0;
		if (k) {
			if (sscanf(line, "%7s %lu %15s%n", kind, &id, acc, &used) != 3 ||
			    (size_t)used != k || id > UINT32_MAX - 1 ||
			    (strcmp(kind, "uid") && strcmp(kind, "gid")))
				return fail(x, -EINVAL, "'%s' is not an access rule ('uid N ACCESS' or "
					    "'gid N ACCESS')", line);
			r.id = (uint32_t)id;
			r.gid = kind[0] == 'g';
			r.access = 0xff;
			for (unsigned a = 0; r4_accesses[a]; a++)
				if (!strcmp(acc, r4_accesses[a]))
					r.access = (uint8_t)a;
			if (r.access == 0xff)
				return fail(x, -EINVAL, "'%s': access is denied, read or write", line);
			rc = set_rule(x, m, &r);
		}
		p += k + (lf != NULL);
		n -= k + (lf != NULL);
	}
	return rc;
}

/* ..audit <- the log's absolute path (an existing regular file), or empty. */
static int set_audit(struct x *x, struct r4_meta *m, void *arg)
{
	const char *log = arg;
	struct r4_stat st;
	int rc;

	r4_free(m->audit);
	m->audit = NULL;
	if (!log)
		return 0;
	if (log[0] != '/')
		return fail(x, -EINVAL, "the audit log is named by an absolute path");
	if ((rc = r4_stat(x->db, log, &st)))
		return fail(x, rc, "cannot audit into '%s'", log);
	if (!S_ISREG(st.mode))
		return fail(x, -EINVAL, "cannot audit into '%s': not a file", log);
	return (m->audit = r4_memdup(log, strlen(log))) ? 0 : -ENOMEM;
}

/* ..plugin/file <- "reg40" on an invert: it keeps its text as plain data. */
static int invert_freeze(struct x *x, struct handle *h)
{
	struct r4_buf text = {0};
	struct r4_meta m;
	int rc;

	if (!may(x, &h->st, 2))
		return fail(x, -EACCES, "cannot write '%s'", h->path);
	if ((rc = touch_obj(x, h->st.ino, 0, true, h->path)) ||
	    (rc = touch_obj(x, h->st.ino, R4_PSEUDO_SIZE, true, h->path)) ||
	    (rc = contents(x, h->path, &h->st, &text)))
		goto out;
	if ((rc = r4_meta_get(x->db, h->st.ino, &m)))
		goto failed;
	r4_invert_free(m.parts, m.nparts);
	m.parts = NULL;
	m.nparts = 0;
	m.kind = R4_META_NONE;
	rc = r4_meta_put(x->db, h->st.ino, &m);
	r4_meta_fini(&m);
	if (!rc && text.len)
		rc = r4_write(x->db, h->path, 0, text.p, text.len);
failed:
	if (rc)
		rc = fail(x, r4_db_seen(x->db, rc), "cannot convert '%s'", h->path);
	else
		rc = audit(x, h->st.ino, "write", h->path, text.len);
	h->fresh = false;
out:
	r4_buf_free(&text);
	return rc;
}

/* ..plugin/file <- "aggregate" (or "aggregate colon") turns a text file
 * into an aggregate; "reg40" turns an aggregate back into a text file.
 * The object is replaced by a new one of the same name, owner and mode. */
static int convert(struct x *x, struct handle *h, const uint8_t *p, size_t n)
{
	struct r4_db *db = x->db;
	struct r4_buf text = {0};
	unsigned format = R4_FORMAT_PASSWD, role;
	bool to_agg;
	char *dir;
	int rc;

	chop_lf(p, &n);
	role = S_ISDIR(h->st.mode) ? role_of(x, h->path, &h->st, &format) : R4_ROLE_NONE;
	if (n == 9 && !memcmp(p, "aggregate", 9))
		to_agg = true;
	else if (n == 16 && !memcmp(p, "aggregate passwd", 16))
		to_agg = true;
	else if (n == 15 && !memcmp(p, "aggregate colon", 15))
		to_agg = true, format = R4_FORMAT_COLON;
	else if (n == 5 && !memcmp(p, "reg40", 5))
		to_agg = false;
	else
		return fail(x, -EOPNOTSUPP, "cannot switch '%s/..plugin/file' to '%.*s': r4 converts "
			    "between reg40 and aggregate", h->path, (int)n, (const char *)p);
	if (!to_agg && is_invert(x, &h->st))
		return invert_freeze(x, h);
	if (to_agg ? role == R4_ROLE_AGGREGATE : S_ISREG(h->st.mode))
		return 0;	/* already */
	if (to_agg ? !S_ISREG(h->st.mode) : role != R4_ROLE_AGGREGATE)
		return fail(x, -EOPNOTSUPP, "cannot switch '%s/..plugin/file' to '%.*s': it is "
			    "not a %s", h->path, (int)n, (const char *)p,
			    to_agg ? "regular file" : "aggregate");
	if (!(dir = dir_of(h->path)))
		return -ENOMEM;
	rc = may_change_dir(x, dir, &h->st, h->path);
	r4_free(dir);
	if (rc || (rc = touch_obj(x, h->st.ino, 0, true, h->path)) ||
	    (rc = contents(x, h->path, &h->st, &text)))
		goto out;
	uint32_t perm = h->st.mode & 07777;
	struct r4_stat st;
	char why[200] = "";

	if (to_agg) {
		/* a directory may be searched where the file could be read */
		perm |= (perm & 0444) >> 2;
		if (!(rc = r4_unlink(db, h->path)) &&
		    !(rc = r4_mkdir(db, h->path, perm, h->st.uid, h->st.gid)) &&
		    !(rc = r4_stat(db, h->path, &st)) && !(rc = r4_aggr_make(db, st.ino, format)))
			rc = r4_aggr_write(db, NULL, h->path, text.p, text.len, false, why,
					   sizeof(why));
	} else {
		perm &= 07666;
		if (!(rc = r4_aggr_rmtree(db, h->path)) &&
		    !(rc = r4_create(db, h->path, perm, h->st.uid, h->st.gid)) && text.len)
			rc = r4_write(db, h->path, 0, text.p, text.len);
	}
	if (rc)
		rc = fail(x, r4_db_seen(db, rc), why[0] ? "cannot convert '%s': %s"
			  : "cannot convert '%s'%s", h->path, why);
	else
		rc = audit(x, h->dir_ino, "create", h->path, text.len);
	h->fresh = false;
out:
	r4_buf_free(&text);
	return rc;
}

/* ..plugin/formatting of a regular file (its body is laid out again) and
 * ..plugin/hash of an empty directory: the owner's to switch. */
static int switch_plugin(struct x *x, struct handle *h, const char *sub, const uint8_t *p, size_t n)
{
	unsigned type;
	int member = r4_pset_member(sub, strlen(sub), &type), id, rc;

	chop_lf(p, &n);
	if (member != R4_PSET_FORMATTING && member != R4_PSET_HASH)
		return fail(x, -EOPNOTSUPP, "cannot switch '%s/..plugin/%s': r4 switches file, "
			    "formatting and hash", h->path, sub);
	if ((id = r4_plugin_id(type, (const char *)p, n)) < 0)
		return fail(x, -EINVAL, "cannot switch '%s/..plugin/%s': '%.*s' is no %s plugin",
			    h->path, sub, (int)n, (const char *)p, sub);
	if (!is_owner(x, &h->st))
		return fail(x, -EPERM, "cannot switch '%s/..plugin/%s': only its owner may", h->path,
			    sub);
	if (is_computed(x, h->path, &h->st))
		return fail(x, -EOPNOTSUPP, "cannot switch '%s/..plugin/%s' of %s", h->path, sub,
			    S_ISDIR(h->st.mode) ? "an aggregate" : "an invert");
	if ((rc = touch_obj(x, h->st.ino, 0, true, h->path)))
		return rc;
	rc = r4_fs_set_plugin(x->db, h->path, (unsigned)member, (unsigned)id);
	if (rc == -ENOTEMPTY)
		return fail(x, rc, "cannot switch '%s/..plugin/hash': a directory changes its hash "
			    "only while it is empty", h->path);
	if (rc == -EOPNOTSUPP)
		return fail(x, rc, "cannot switch '%s/..plugin/%s': %s", h->path, sub,
			    member == R4_PSET_FORMATTING ? "only a regular file that is not "
			    "compressed has a formatting"
			    : "only a directory has a hash");
	if (rc)
		return fail(x, rc, "cannot switch '%s/..plugin/%s'", h->path, sub);
	return audit(x, h->st.ino, "setattr", h->path, n);
}

/* May the caller make change sa of h (perm.c; sa narrowed, set-id bits
 * dropped as the change does)? */
static int setattr_perm(struct x *x, const struct handle *h, const char *pn,
			struct r4_setattr *sa)
{
	int rc = r4_perm_setattr(x->db, &x->o->who, &h->st, sa, false);

	if (rc == -EPERM)
		return fail(x, rc, "cannot change '%s/%s'", h->path, pn);
	if (rc)
		return fail(x, rc, "cannot write '%s/%s'", h->path, pn);
	r4_perm_setattr_effects(&x->o->who, &h->st, sa);
	return 0;
}

/* Write pseudo file ps (sub: ..plugin/<sub>) of object h (section 6.1). */
static int pseudo_write(struct x *x, struct handle *h, enum r4_pseudo ps, const char *sub,
			const uint8_t *p, size_t n)
{
	struct r4_setattr sa = {0};
	const char *pn = r4_pseudo_name(ps);
	size_t raw = n;
	int64_t num = 0;
	uint32_t mode;
	int rc;

	if ((rc = h_stat(x, h)))
		return fail(x, rc, "cannot write '%s/%s'", h->path, pn);
	if ((rc = touch_obj(x, h->st.ino, ps == R4_PSEUDO_BODY ? 0 : (int)ps, true, h->path)))
		return rc;
	switch (ps) {
	case R4_PSEUDO_BODY:
		if (S_ISLNK(h->st.mode))
			return set_link_text(x, h, p, n);
		return put_contents(x, h, p, n, false);
	case R4_PSEUDO_NAME:
		return do_rename(x, h, p, n);
	case R4_PSEUDO_UNLINK:
		return do_unlink(x, h, p, n);
	case R4_PSEUDO_ACL:
		rc = meta_change(x, h, pn, set_rules, &(struct text){p, n});
		if (!rc)
			x->last_len = n;
		return rc;
	case R4_PSEUDO_AUDIT: {
		char *log;

		chop_lf(p, &n);
		if (memchr(p, 0, n))
			return fail(x, -EINVAL, "the audit log is named by a path");
		if (!(log = r4_memdup(p, n)))
			return -ENOMEM;
		rc = meta_change(x, h, pn, set_audit, n ? log : NULL);
		r4_free(log);
		if (!rc)
			x->last_len = raw;
		return rc;
	}
	case R4_PSEUDO_INVERT:
		return invert_define(x, h, p, n);
	case R4_PSEUDO_PLUGIN:
		if (!sub)
			break;
		if (!strcmp(sub, "file")) {
			if (!(rc = convert(x, h, p, n)))
				x->last_len = raw;
			return rc;
		}
		if (!(rc = switch_plugin(x, h, sub, p, n)))
			x->last_len = raw;
		return rc;
	case R4_PSEUDO_MODE:
		if (parse_mode(p, n, &mode))
			return fail(x, -EINVAL, "'%s' takes 1 to 4 octal digits", pn);
		sa.mask = R4_SET_MODE;
		sa.mode = mode;
		goto set;
	case R4_PSEUDO_UID:
	case R4_PSEUDO_GID:
		if (parse_int(p, n, false, &num) || num > UINT32_MAX - 1)
			return fail(x, -EINVAL, "'%s' takes a decimal id", pn);
		if (ps == R4_PSEUDO_UID) {
			sa.mask = R4_SET_UID;
			sa.uid = (uint32_t)num;
		} else {
			sa.mask = R4_SET_GID;
			sa.gid = (uint32_t)num;
		}
		goto set;
	case R4_PSEUDO_SIZE:
		if (parse_int(p, n, false, &num))
			return fail(x, -EINVAL, "'%s' takes a decimal size", pn);
		if (is_computed(x, h->path, &h->st))
			return fail(x, -EOPNOTSUPP, "cannot write '%s/%s': the size of %s is its "
				    "text's", h->path, pn, S_ISDIR(h->st.mode) ? "an aggregate"
				    : "an invert");
		if (S_ISDIR(h->st.mode))
			return fail(x, -EISDIR, "cannot write '%s/%s'", h->path, pn);
		if (!S_ISREG(h->st.mode))
			return fail(x, -EINVAL, "cannot write '%s/%s': not a file", h->path, pn);
		sa.mask = R4_SET_SIZE | R4_SET_MTIME_NOW;
		sa.size = (uint64_t)num;
		if ((rc = setattr_perm(x, h, pn, &sa)) || (rc = touch_obj(x, h->st.ino, 0, true, h->path)))
			return rc;
		goto apply;
	case R4_PSEUDO_ATIME:
	case R4_PSEUDO_MTIME:
		if (parse_int(p, n, true, &num))
			return fail(x, -EINVAL, "'%s' takes decimal seconds", pn);
		if (num < 0 || num > UINT32_MAX)
			return fail(x, -EINVAL, "cannot write '%s/%s': the format stores times from "
				    "0 to 4294967295", h->path, pn);
		sa.mask = ps == R4_PSEUDO_ATIME ? R4_SET_ATIME : R4_SET_MTIME;
		sa.atime.tv_sec = sa.mtime.tv_sec = (time_t)num;
		goto set;
	default:
		break;
	}
	return fail(x, -EACCES, "cannot write '%s/%s': it is read-only", h->path, pn);
set:
	if ((rc = setattr_perm(x, h, pn, &sa)))
		return rc;
apply:
	if ((rc = r4_setattr(x->db, h->path, &sa)))
		return fail(x, rc, "cannot write '%s/%s'", h->path, pn);
	x->last_len = raw;
	return audit(x, h->st.ino, ps == R4_PSEUDO_SIZE ? "truncate" : "setattr", h->path, raw);
}

/* Section 6.3 on an aggregate: its text, read, changed in memory, written
 * back whole (the records then follow it). */
static int window_write_text(struct x *x, struct handle *h, const uint8_t *p, size_t n)
{
	static const uint8_t zeros[64];
	struct r4_buf t = {0}, o = {0};
	uint64_t size, len, stored = n, from;
	int rc;

	if (is_invert(x, &h->st))
		return fail(x, -EOPNOTSUPP, "cannot write '%s/..range': an invert is its parts",
			    h->path);
	if ((rc = contents(x, h->path, &h->st, &t)))
		return rc;
	size = t.len;
	if (h->woff > size) {
		rc = fail(x, -EINVAL, "cannot write '%s/..range': a window of an aggregate starts "
			  "within its text (%llu bytes)", h->path, (unsigned long long)size);
		goto out;
	}
	len = h->wlen_set ? h->wlen : size - h->woff;
	rc = r4_buf_add(&o, t.p, (size_t)h->woff);
	switch (h->wmode) {
	case R4_WIN_ZERO:
		stored = R4_MIN(n, len);
		if (!rc)
			rc = r4_buf_add(&o, p, (size_t)stored);
		for (uint64_t k = stored; k < len && !rc; k += sizeof(zeros))
			rc = r4_buf_add(&o, zeros, (size_t)R4_MIN(len - k, sizeof(zeros)));
		from = h->woff + len;
		break;
	case R4_WIN_OVERLAY:
		stored = R4_MIN(n, len);
		if (!rc)
			rc = r4_buf_add(&o, p, (size_t)stored);
		from = h->woff + stored;
		break;
	default:	/* shift */
		if (!rc)
			rc = r4_buf_add(&o, p, n);
		from = h->woff + R4_MIN(len, size - h->woff);
		break;
	}
	if (!rc && from < size)
		rc = r4_buf_add(&o, t.p + from, (size_t)(size - from));
	if (!rc && !(rc = aggr_put(x, h, o.p, o.len, false)))
		x->last_len = stored;
out:
	r4_buf_free(&t);
	r4_buf_free(&o);
	return rc;
}

/* Section 6.3: write D through a window. */
static int window_write(struct x *x, struct handle *h, const uint8_t *p, size_t n)
{
	struct r4_db *db = x->db;
	struct r4_buf tail = {0};
	uint64_t size, len, end, stored = n;
	int rc;

	if ((rc = h_stat(x, h)))
		return fail(x, rc, "cannot write '%s'", h->path);
	if (is_computed(x, h->path, &h->st))
		return window_write_text(x, h, p, n);
	if (!may(x, &h->st, 2))
		return fail(x, -EACCES, "cannot write '%s'", h->path);
	if ((rc = touch_obj(x, h->st.ino, 0, true, h->path)) ||
	    (rc = touch_obj(x, h->st.ino, R4_PSEUDO_SIZE, true, h->path)))
		return rc;
	size = h->st.size;
	len = h->wlen_set ? h->wlen : (h->woff < size ? size - h->woff : 0);
	if (h->woff > size && (rc = r4_truncate(db, h->path, h->woff)))
		goto out;
	if (h->woff > size)
		size = h->woff;
	switch (h->wmode) {
	case R4_WIN_ZERO:
		/* exactly length bytes: D, then zero bytes (a hole past the end) */
		stored = R4_MIN(n, len);
		if (stored && (rc = r4_write(db, h->path, h->woff, p, (size_t)stored)))
			goto out;
		size = R4_MAX(size, h->woff + stored);
		end = h->woff + len;
		for (uint64_t at = h->woff + stored; at < R4_MIN(end, size) && !rc;) {
			static const uint8_t zeros[65536];
			size_t k = (size_t)R4_MIN(R4_MIN(end, size) - at, sizeof(zeros));

			rc = r4_write(db, h->path, at, zeros, k);
			at += k;
		}
		if (!rc && end > size)
			rc = r4_truncate(db, h->path, end);
		break;
	case R4_WIN_OVERLAY:
		stored = R4_MIN(n, len);
		if (stored)
			rc = r4_write(db, h->path, h->woff, p, (size_t)stored);
		break;
	default:	/* shift */
		end = len < size - h->woff ? h->woff + len : size;
		if ((rc = read_all(db, h->path, end, size - end, &tail)))
			break;
		if (n && (rc = r4_write(db, h->path, h->woff, p, n)))
			break;
		if (tail.len && (rc = r4_write(db, h->path, h->woff + n, tail.p, tail.len)))
			break;
		if (size > h->woff + n + tail.len)
			rc = r4_truncate(db, h->path, h->woff + n + tail.len);
		break;
	}
out:
	r4_buf_free(&tail);
	if (!rc)
		rc = clear_suid(x, h);
	if (rc)
		return fail(x, rc, "cannot write '%s/..range'", h->path);
	x->last_len = stored;
	return audit(x, h->st.ino, "write", h->path, stored);
}

static int write_handle(struct x *x, struct handle *h, const uint8_t *p, size_t n, bool append)
{
	int rc;

	switch (h->kind) {
	case H_MISSING:
		if ((rc = make(x, h, S_IFREG, 0666, NULL, 0)))
			return rc;
		/* fall through */
	case H_OBJ:
		return put_contents(x, h, p, n, append);
	case H_PSEUDO:
		if (append && h->ps == R4_PSEUDO_BODY && !S_ISLNK(h->st.mode))
			return put_contents(x, h, p, n, true);
		if (append)
			return fail(x, -EINVAL, "cannot append to '%s/%s'", h->path,
				    r4_pseudo_name(h->ps));
		return pseudo_write(x, h, h->ps, h->sub, p, n);
	case H_WINDOW:
		if (append)
			return fail(x, -EINVAL, "cannot append to a window of '%s'", h->path);
		return window_write(x, h, p, n);
	case H_BYTES:
		return fail(x, -EACCES, "cannot write a result child: it is read-only");
	default:
		return fail(x, -ENOENT, "cannot write an object that does not exist");
	}
}

/* T -> E (section 5.3): make h a symlink, replacing a symlink. */
static int symlink_handle(struct x *x, struct handle *h, const uint8_t *p, size_t n)
{
	char *dir;
	int rc;

	if (h->kind == H_OBJ && S_ISLNK(h->st.mode)) {
		if (!(dir = dir_of(h->path)))
			return -ENOMEM;
		rc = may_change_dir(x, dir, &h->st, h->path);
		r4_free(dir);
		if (rc || (rc = touch_entry(x, h->dir_ino, base_name(h->path), true, h->path)))
			return rc;
		if (!n || memchr(p, 0, n))
			return fail(x, -EINVAL, "cannot make '%s' a symlink", h->path);
		if ((rc = r4_unlink(x->db, h->path)))
			return fail(x, rc, "cannot replace '%s'", h->path);
		h->kind = H_MISSING;
	}
	if (h->kind == H_OBJ)
		return fail(x, S_ISDIR(h->st.mode) ? -EISDIR : -EEXIST, "cannot make '%s' a symlink",
			    h->path);
	if (h->kind != H_MISSING)
		return fail(x, -EINVAL, "cannot make a symlink here");
	if ((rc = make(x, h, S_IFLNK, 0777, p, n)))
		return rc;
	x->last_len = n;
	return 0;
}

/* ============================== steps ============================== */

static int need_obj(struct x *x, struct handle *h, const char *what)
{
	if (h->kind == H_OBJ)
		return 0;
	if (h->kind == H_MISSING)
		return fail(x, -ENOENT, "cannot %s '%s'", what, h->path);
	return fail(x, -EINVAL, "cannot %s this: not an object", what);
}

static int step_create(struct x *x, const struct r4_step *s)
{
	struct handle *d = &x->h[s->b], *out = &x->h[s->a];
	unsigned type = s->flags & 0xff;
	const uint8_t *name, *perm, *tgt;
	size_t nlen, plen, tlen;
	uint32_t mode = type == R4_NEW_REGULAR || type == R4_NEW_INVERT ? 0666 : 0777;
	struct handle nh = {0};
	struct r4_stat st;
	int rc;

	val(x, s->c, &name, &nlen);
	val(x, s->d, &perm, &plen);
	val(x, s->e, &tgt, &tlen);
	if ((rc = need_obj(x, d, "create in")))
		return rc;
	if (!S_ISDIR(d->st.mode))
		return fail(x, -ENOTDIR, "cannot create in '%s'", d->path);
	chop_lf(name, &nlen);
	if ((rc = check_name(name, nlen)))
		return fail(x, rc, "cannot create '%.*s' in '%s'", (int)nlen, (const char *)name,
			    d->path);
	if (s->d != -1 && parse_mode(perm, plen, &mode))
		return fail(x, -EINVAL, "'perm' takes 1 to 4 octal digits");
	if (!(nh.path = r4_path_join(d->path, (const char *)name, nlen)))
		return -ENOMEM;
	nh.kind = H_MISSING;
	nh.dir_ino = d->st.ino;
	rc = r4_stat(x->db, nh.path, &st);
	if (!rc)
		rc = fail(x, -EEXIST, "cannot create '%s'", nh.path);
	else if (rc == -ENOENT)
		rc = make(x, &nh, type == R4_NEW_DIRECTORY || type == R4_NEW_AGGREGATE ? S_IFDIR
			  : type == R4_NEW_SYMLINK ? S_IFLNK : S_IFREG, mode, tgt, tlen);
	else
		rc = fail(x, rc, "cannot create '%s'", nh.path);
	if (!rc && type == R4_NEW_AGGREGATE && (rc = r4_aggr_make(x->db, nh.st.ino, s->flags >> 8)))
		rc = fail(x, rc, "cannot create '%s'", nh.path);
	if (!rc && type == R4_NEW_INVERT &&
	    (rc = r4_meta_put(x->db, nh.st.ino, &(struct r4_meta){.kind = R4_META_INVERT})))
		rc = fail(x, rc, "cannot create '%s'", nh.path);
	if (rc) {
		handle_clear(&nh);
		return rc;
	}
	handle_clear(out);
	*out = nh;
	x->last_len = 0;
	return 0;
}

static int step_link(struct x *x, const struct r4_step *s)
{
	struct handle *d = &x->h[s->b], *t = &x->h[s->d], *out = &x->h[s->a];
	struct handle nh = {0};
	const uint8_t *name;
	size_t nlen;
	int rc;

	val(x, s->c, &name, &nlen);
	if ((rc = need_obj(x, d, "link in")) || (rc = need_obj(x, t, "link to")))
		return rc;
	if (!S_ISDIR(d->st.mode))
		return fail(x, -ENOTDIR, "cannot link in '%s'", d->path);
	if (S_ISDIR(t->st.mode))
		return fail(x, -EPERM, "cannot link to '%s': it is a directory", t->path);
	chop_lf(name, &nlen);
	if ((rc = check_name(name, nlen)))
		return fail(x, rc, "cannot link '%.*s' in '%s'", (int)nlen, (const char *)name,
			    d->path);
	if (!(nh.path = r4_path_join(d->path, (const char *)name, nlen)))
		return -ENOMEM;
	if (!(rc = may_change_dir(x, d->path, NULL, nh.path)) &&
	    !(rc = touch_entry(x, d->st.ino, base_name(nh.path), true, nh.path)) &&
	    !(rc = touch_obj(x, t->st.ino, R4_PSEUDO_NLINK, true, t->path))) {
		if ((rc = r4_link(x->db, t->path, nh.path)))
			rc = fail(x, rc, "cannot link '%s' to '%s'", nh.path, t->path);
		else if (!(rc = r4_stat(x->db, nh.path, &nh.st)) &&
			 !(rc = audit_entry(x, t->st.ino, d->st.ino, "link", nh.path, 0)))
			nh.kind = H_OBJ, nh.dir_ino = d->st.ino;
	}
	if (rc) {
		handle_clear(&nh);
		return rc;
	}
	handle_clear(out);
	*out = nh;
	x->last_len = 0;
	return 0;
}

static int step_window(struct x *x, const struct r4_step *s)
{
	struct handle *f = &x->h[s->b], w = {0};
	const uint8_t *p;
	size_t n;
	int64_t off = 0, len = 0;
	int rc;

	if ((rc = need_obj(x, f, "take a window of")))
		return rc;
	if ((rc = h_stat(x, f)))
		return fail(x, rc, "cannot read '%s'", f->path);
	if (S_ISDIR(f->st.mode) && role_of(x, f->path, &f->st, NULL) != R4_ROLE_AGGREGATE)
		return fail(x, -EISDIR, "cannot take a window of '%s'", f->path);
	if (!S_ISREG(f->st.mode) && !S_ISDIR(f->st.mode))
		return fail(x, -EINVAL, "cannot take a window of '%s': not a file", f->path);
	if (s->c != -1) {
		val(x, s->c, &p, &n);
		if (parse_int(p, n, true, &off) || off < 0)
			return fail(x, -EINVAL, "'offset' takes a decimal number from 0");
	}
	if (s->d != -1) {
		val(x, s->d, &p, &n);
		if (parse_int(p, n, true, &len) || len < 0)
			return fail(x, -EINVAL, "'length' takes a decimal number from 0");
	}
	if (!(w.path = r4_memdup(f->path, strlen(f->path))))
		return -ENOMEM;
	w.kind = H_WINDOW;
	w.st = f->st;
	w.dir_ino = f->dir_ino;
	w.woff = (uint64_t)off;
	w.wlen = (uint64_t)len;
	w.wlen_set = s->d != -1;
	w.wmode = s->flags;
	handle_clear(&x->h[s->a]);
	x->h[s->a] = w;
	return 0;
}

static int step_deref(struct x *x, const struct r4_step *s)
{
	const uint8_t *p;
	size_t n;
	char *path;
	int rc;

	val(x, s->b, &p, &n);
	chop_lf(p, &n);
	if (!n || memchr(p, 0, n))
		return fail(x, -EINVAL, "cannot dereference %s", n ? "a path with a NUL byte"
			    : "empty bytes");
	if (!(path = r4_memdup(p, n)))
		return -ENOMEM;
	rc = walk(x, NULL, path, R4_LOOK_MISSING, &x->h[s->a]);
	if (rc && x->e->comp >= 0) {
		/* the range is the dereference's, the path the bytes' */
		x->e->comp = -1;
		snprintf(x->e->msg, sizeof(x->e->msg), "cannot resolve '%s': %s", path,
			 r4_strerror(rc));
	}
	r4_free(path);
	return rc;
}

static int step_test(struct x *x, const struct r4_step *s)
{
	const uint8_t *a, *b;
	size_t na, nb;
	bool t;
	int c;

	if (s->flags == R4_TEST_EXIST) {
		t = x->h[s->b].kind != H_NONE;
	} else {
		val(x, s->b, &a, &na);
		val(x, s->c, &b, &nb);
		c = memcmp(a, b, R4_MIN(na, nb));
		if (!c)
			c = na < nb ? -1 : na > nb;
		switch (s->flags) {
		case R4_TEST_EQ: t = c == 0; break;
		case R4_TEST_NE: t = c != 0; break;
		case R4_TEST_LT: t = c < 0; break;
		case R4_TEST_GT: t = c > 0; break;
		case R4_TEST_LE: t = c <= 0; break;
		case R4_TEST_GE: t = c >= 0; break;
		case R4_TEST_NOT: t = na == 0; break;
		default: t = na != 0; break;
		}
	}
	return r4_buf_set(&x->v[s->a], "1", t);
}

static int step_result(struct x *x, const struct r4_step *s)
{
	struct handle *h = &x->h[s->a];

	if (s->b >= 0) {
		x->named[s->b] = (struct result){0, 0, 0, x->last_len, true};
		return 0;
	}
	if (h->kind != H_OBJ && h->kind != H_PSEUDO)
		return 0;
	return bind_result(x, h->st.ino, (enum r4_pseudo)s->flags, 0, x->last_len);
}

static int step_resval(struct x *x, const struct r4_step *s)
{
	struct result *r = &x->named[s->b];

	if (!r->bound) {
		const char *name = "?";

		for (size_t i = 0; i < x->p->nsteps; i++)
			if (x->p->steps[i].op == R4_PLAN_TRY && x->p->steps[i].b == s->b)
				name = x->p->steps[i].str;
		return fail(x, -ENOENT, "named result '%s' is not bound: its assignment did not run",
			    name);
	}
	return result_text(r, s->flags ? 1 : 0, &x->v[s->a]);
}

static int step_yield(struct x *x, const struct r4_step *s)
{
	struct yielded y = {s->off, s->len, NULL, {0}, 0};
	struct handle *h;
	int rc = 0;

	if (x->nys == x->yscap) {
		size_t cap = x->yscap ? x->yscap * 2 : 8;
		struct yielded *n = r4_realloc(x->ys, cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		x->ys = n;
		x->yscap = cap;
	}
	if (!(s->flags & R4_YIELD_H)) {
		const uint8_t *p;
		size_t n;

		val(x, s->a, &p, &n);
		rc = r4_buf_set(&y.bytes, p, n);
	} else if ((h = &x->h[s->a])->kind == H_BYTES) {
		rc = r4_buf_set(&y.bytes, h->bytes.p, h->bytes.len);
	} else if (h->kind == H_NONE || !h->path) {
		rc = r4_buf_set(&y.bytes, "", 0);
	} else if (h->kind == H_MISSING) {
		return fail(x, -ENOENT, "cannot read '%s'", h->path);
	} else {
		const char *suffix = h->kind == H_PSEUDO ? r4_pseudo_name(h->ps)
				     : h->kind == H_WINDOW ? "..range" : NULL;
		size_t n = strlen(h->path);

		if (!(y.path = r4_malloc(n + 40 + (h->sub ? strlen(h->sub) : 0))))
			return -ENOMEM;
		strcpy(y.path, h->path);
		if (suffix)
			sprintf(y.path + n, "%s%s%s%s", n > 1 ? "/" : "", suffix, h->sub ? "/" : "",
				h->sub ? h->sub : "");
		if (x->o->read_objects) {
			struct r4_exec_error saved = *x->e;
			size_t groups = x->ngroups;

			/* a value that cannot be read is still a value: say why, do not
			 * fail; and the host's look is no member's use */
			x->ngroups = 0;
			y.err = read_handle(x, h, &y.bytes);
			x->ngroups = groups;
			*x->e = saved;
			if (y.err == -ENOMEM)
				rc = y.err;
		}
	}
	if (rc) {
		r4_free(y.path);
		r4_buf_free(&y.bytes);
		return rc;
	}
	x->ys[x->nys++] = y;
	return 0;
}

static int push_group(struct x *x)
{
	if (x->ngroups == x->groupcap) {
		size_t cap = x->groupcap ? x->groupcap * 2 : 4;
		struct group *g = r4_realloc(x->groups, cap * sizeof(*g));

		if (!g)
			return -ENOMEM;
		x->groups = g;
		x->groupcap = cap;
	}
	x->groups[x->ngroups++] = (struct group){0};
	return 0;
}

static int push_cwd(struct x *x, const char *path)
{
	if (x->ncwd == x->cwdcap) {
		size_t cap = x->cwdcap ? x->cwdcap * 2 : 8;
		char **c = r4_realloc(x->cwd, cap * sizeof(*c));

		if (!c)
			return -ENOMEM;
		x->cwd = c;
		x->cwdcap = cap;
	}
	if (!(x->cwd[x->ncwd] = r4_memdup(path, strlen(path))))
		return -ENOMEM;
	x->ncwd++;
	return 0;
}

/* One step; *next is where to go on (already s + 1). */
static int step(struct x *x, const struct r4_step *s, size_t *next)
{
	const uint8_t *p, *q;
	size_t n, m;
	struct handle *h;
	int rc;

	switch ((enum r4_plan_op)s->op) {
	case R4_PLAN_BEGIN:
	case R4_PLAN_COMMIT:
		return 0;	/* tw marks: the group joins its unit */
	case R4_PLAN_LOOKUP: {
		const char *from = NULL;

		if (s->b >= 0) {
			h = &x->h[s->b];
			if (h->kind != H_OBJ)
				return need_obj(x, h, "look into");
			from = h->path;
		}
		/* the base handle may be the one written: walk from a copy */
		char *base = from ? r4_memdup(from, strlen(from)) : NULL;

		if (from && !base)
			return -ENOMEM;
		/* names the compiler checked: its pseudo names are pseudo files */
		rc = walk_ns(x, base, s->str, s->flags, R4_NS_CHECKED, &x->h[s->a]);
		r4_free(base);
		return rc;
	}
	case R4_PLAN_DEREF:
		return step_deref(x, s);
	case R4_PLAN_READ:
		return read_handle(x, &x->h[s->b], &x->v[s->a]);
	case R4_PLAN_CONST:
		val(x, s->b, &p, &n);
		return r4_buf_set(&x->v[s->a], p, n);
	case R4_PLAN_CONCAT: {
		struct r4_buf t = {0};

		val(x, s->b, &p, &n);
		val(x, s->c, &q, &m);
		if ((rc = r4_buf_reserve(&t, n + m + 1)))
			return rc;
		memcpy(t.p, p, n);
		memcpy(t.p + n, q, m);
		t.len = n + m;
		t.p[t.len] = 0;
		r4_buf_free(&x->v[s->a]);
		x->v[s->a] = t;
		return 0;
	}
	case R4_PLAN_TEST:
		return step_test(x, s);
	case R4_PLAN_JUMP:
		*next = (size_t)s->a;
		return 0;
	case R4_PLAN_JUMPF:
	case R4_PLAN_JUMPT:
		val(x, s->a, &p, &n);
		if ((n == 0) == (s->op == R4_PLAN_JUMPF))
			*next = (size_t)s->b;
		return 0;
	case R4_PLAN_WRITE:
	case R4_PLAN_APPEND:
		val(x, s->b, &p, &n);
		return write_handle(x, &x->h[s->a], p, n, s->op == R4_PLAN_APPEND);
	case R4_PLAN_SYMLINK:
		val(x, s->b, &p, &n);
		return symlink_handle(x, &x->h[s->a], p, n);
	case R4_PLAN_CREATE:
		return step_create(x, s);
	case R4_PLAN_LINK:
		return step_link(x, s);
	case R4_PLAN_UNLINK:
	case R4_PLAN_RENAME:
	case R4_PLAN_SETATTR: {
		enum r4_pseudo ps = s->op == R4_PLAN_UNLINK ? R4_PSEUDO_UNLINK : s->op ==
				    R4_PLAN_RENAME ? R4_PSEUDO_NAME
				    : (enum r4_pseudo)(s->flags & 0xffff);

		h = &x->h[s->a];
		if ((rc = need_obj(x, h, "change")))
			return rc;
		val(x, s->b, &p, &n);
		if ((s->flags & R4_SETATTR_APPEND) && ps == R4_PSEUDO_BODY &&
		    !S_ISLNK(h->st.mode))
			rc = put_contents(x, h, p, n, true);
		else if (s->flags & R4_SETATTR_APPEND)
			rc = fail(x, -EINVAL, "cannot append to '%s/%s'", h->path,
				  r4_pseudo_name(ps));
		else
			rc = pseudo_write(x, h, ps, s->str, p, n);
		/* the value of the assignment is the pseudo file written */
		if (!rc && s->str && !(h->sub = r4_memdup(s->str, strlen(s->str))))
			return -ENOMEM;
		h->kind = H_PSEUDO;
		h->ps = ps;
		return rc;
	}
	case R4_PLAN_WINDOW:
		return step_window(x, s);
	case R4_PLAN_RULE: {
		const uint8_t *idp;
		size_t idn;
		int64_t id;

		h = &x->h[s->a];
		if ((rc = need_obj(x, h, "set a rule on")) || (rc = h_stat(x, h)))
			return rc < 0 && !x->e->rc ? fail(x, rc, "cannot read '%s'", h->path) : rc;
		val(x, s->b, &idp, &idn);
		if (parse_int(idp, idn, false, &id) || id > UINT32_MAX - 1)
			return fail(x, -EINVAL, "'%s' takes a decimal id",
				    s->flags & R4_RULE_GID ? "gid" : "uid");
		struct r4_rule r = {(uint32_t)id, (s->flags & R4_RULE_GID) != 0,
				    (uint8_t)(s->flags >> 1)};

		if ((rc = touch_obj(x, h->st.ino, R4_PSEUDO_ACL, true, h->path)))
			return rc;
		return meta_change(x, h, "..acl", set_rule, &r);
	}
	case R4_PLAN_AUDIT: {
		struct handle *log = &x->h[s->b];

		h = &x->h[s->a];
		if ((rc = need_obj(x, h, "audit")) || (rc = need_obj(x, log, "audit into")))
			return rc;
		if ((rc = h_stat(x, h)))
			return fail(x, rc, "cannot read '%s'", h->path);
		if ((rc = touch_obj(x, h->st.ino, R4_PSEUDO_AUDIT, true, h->path)))
			return rc;
		return meta_change(x, h, "..audit", set_audit, log->path);
	}
	case R4_PLAN_SCOPE:
		h = &x->h[s->a];
		if (h->kind != H_OBJ)
			return need_obj(x, h, "enter");
		return push_cwd(x, h->path);
	case R4_PLAN_ENDSCOPE:
		r4_free(x->cwd[--x->ncwd]);
		return 0;
	case R4_PLAN_GROUP:
		return push_group(x);
	case R4_PLAN_MEMBER:
		x->groups[x->ngroups - 1].member++;
		return 0;
	case R4_PLAN_ENDGROUP:
		group_free(&x->groups[--x->ngroups]);
		return 0;
	case R4_PLAN_TRY: {
		size_t at = (size_t)(s - x->p->steps);

		if (x->forced[at].set) {
			/* it failed in an earlier run: bind the error, go on after it */
			x->named[s->b] = (struct result){0, 0, x->forced[at].err,
							 x->forced[at].length, true};
			*next = (size_t)s->a + 1;
			return 0;
		}
		x->tries[x->ntries++] = at;
		x->last_len = 0;
		return 0;
	}
	case R4_PLAN_ENDTRY:
		x->ntries--;
		return 0;
	case R4_PLAN_RESULT:
		return step_result(x, s);
	case R4_PLAN_RESVAL:
		return step_resval(x, s);
	case R4_PLAN_YIELD:
		return step_yield(x, s);
	default:
		return fail(x, -EINVAL, "unknown plan step");
	}
}

/* ================================ units ================================= */

/* The register a step writes, as handle (*is_h) or value; -1 for none. */
static int32_t written(const struct r4_step *s, bool *is_h)
{
	switch ((enum r4_plan_op)s->op) {
	case R4_PLAN_LOOKUP: case R4_PLAN_DEREF: case R4_PLAN_CREATE: case R4_PLAN_LINK:
	case R4_PLAN_WINDOW:
		*is_h = true;
		return s->a;
	case R4_PLAN_READ: case R4_PLAN_CONST: case R4_PLAN_CONCAT: case R4_PLAN_TEST:
	case R4_PLAN_RESVAL:
		*is_h = false;
		return s->a;
	default:
		return -1;
	}
}

/* Forget what a run of the unit [begin, end) left in registers and tables
 * (only its own registers: a script's plan has many units). */
static void reset_unit(struct x *x, size_t begin, size_t end)
{
	for (size_t i = begin; i < end; i++) {
		bool is_h;
		int32_t r = written(&x->p->steps[i], &is_h);

		if (r >= 0 && is_h)
			handle_clear(&x->h[r]);
		else if (r >= 0)
			r4_buf_free(&x->v[r]);
	}
	while (x->ncwd > 1)
		r4_free(x->cwd[--x->ncwd]);
	while (x->ngroups)
		group_free(&x->groups[--x->ngroups]);
	for (size_t i = 0; i < x->nys; i++) {
		r4_free(x->ys[i].path);
		r4_buf_free(&x->ys[i].bytes);
	}
	x->nys = 0;
	if (x->nres)
		memset(x->rtab, 0, x->rsize * sizeof(*x->rtab));
	x->nres = 0;
	x->ntries = 0;
	if (x->named)
		memset(x->named, 0, x->nnamed * sizeof(*x->named));
	x->last_len = 0;
}

/* Steps [from, to) of a unit: 0, REPLAY (a TRY caught a failure), or the error. */
static int run_steps(struct x *x, size_t from, size_t to)
{
	for (size_t i = from; i < to;) {
		size_t next = i + 1;
		int rc;

		x->step = i;
		if (x->o->cancel && *x->o->cancel)
			rc = fail(x, -EINTR, "interrupted");
		else
			rc = step(x, &x->p->steps[i], &next);
		if (rc) {
			if (!x->e->rc)
				fail(x, rc, "%s failed", r4_plan_op_name((enum r4_plan_op)x->p->steps[i].op));
			if (x->ntries && rc != -EINTR) {
				size_t t = x->tries[x->ntries - 1];
				unsigned units = x->e->units;

				x->forced[t] = (struct forced){true, rc, x->last_len};
				*x->e = (struct r4_exec_error){.comp = -1, .note_step = -1, .units = units};
				return REPLAY;
			}
			return rc;
		}
		i = next;
	}
	return 0;
}

/* Hand the unit's values to the host. */
static int deliver(struct x *x)
{
	for (size_t i = 0; i < x->nys && x->o->yield; i++) {
		struct yielded *y = &x->ys[i];
		struct r4_value v = {y->off, y->len, y->path, y->bytes.p ? (void *)y->bytes.p : "",
				     y->bytes.len, y->err};
		int rc = x->o->yield(x->o->ctx, &v);

		if (rc)
			return rc < 0 ? rc : -ECANCELED;
	}
	return 0;
}

static int replay_session(struct r4_session *ss);

static int run_unit(struct x *x, size_t begin, size_t end)
{
	struct r4_db *db = x->db;
	/* in a session (or redoing one's run) the transaction is the session's */
	bool pin = !db->clock_pinned, in_session = x->session || x->replaying;
	int rc;

	if (!x->replaying)
		memset(x->forced + begin, 0, (end - begin) * sizeof(*x->forced));
	if (pin) {
		clock_gettime(CLOCK_REALTIME, &db->clock_pin);
		db->clock_pinned = true;
	}
	for (;;) {
		bool txn = in_session;

		reset_unit(x, begin, end);
		if (!in_session) {
			rc = r4_begin(db);
			if (rc && rc != -EROFS) {
				x->step = begin;
				fail(x, rc, "cannot begin a transaction");
				break;
			}
			txn = !rc;
		}
		rc = run_steps(x, begin + 1, end);
		if (!rc && !x->replaying) {
			x->step = end;
			if ((rc = deliver(x)))
				fail(x, rc, "the host stopped the unit");
			else if (!in_session && txn && (rc = r4_commit(db)))
				fail(x, rc, "cannot commit");
			else
				txn = false;
		}
		if (rc && txn && !in_session) {
			r4_abort(db);
		} else if (rc && x->session) {
			/* undo just this unit: the session's runs, done again */
			int rr;

			r4_abort(db);
			if ((rr = r4_begin(db)) || (rr = replay_session(x->session))) {
				x->session->broken = true;
				if (rc == REPLAY) {
					x->step = begin;
					rc = fail(x, rr, "cannot redo the session's earlier commands");
				}
			}
		}
		if (rc != REPLAY || x->replaying)
			break;
	}
	if (pin)
		db->clock_pinned = false;
	reset_unit(x, begin, end);
	return rc;
}

static void record_free(struct record *r)
{
	if (!r)
		return;
	r4_plan_free(r->plan);
	r4_free(r->forced);
	r4_free(r->groups);
	r4_free(r->cwd);
	r4_free(r);
}

/* A record of this run for its session: a copy of the plan and the options. */
static int record_new(struct r4_session *ss, const struct r4_plan *p,
		      const struct r4_exec_opts *o, struct record **out)
{
	struct record *r = r4_calloc(1, sizeof(*r));
	size_t ng = o->who.ngroups;

	if (!r)
		return -ENOMEM;
	r->o = *o;
	r->o.yield = NULL;
	r->o.cancel = NULL;
	r->o.read_objects = false;
	if (!(r->plan = r4_plan_copy(p)) ||
	    !(r->forced = r4_calloc(p->nsteps + 1, sizeof(*r->forced))) ||
	    (ng && !(r->groups = r4_malloc(ng * sizeof(*r->groups)))) ||
	    (o->cwd && !(r->cwd = r4_memdup(o->cwd, strlen(o->cwd))))) {
		record_free(r);
		return -ENOMEM;
	}
	if (ng)
		memcpy(r->groups, o->who.groups, ng * sizeof(*r->groups));
	r->o.who.groups = r->groups;
	r->o.cwd = r->cwd;
	if (ss->n == ss->cap) {
		size_t cap = ss->cap ? ss->cap * 2 : 8;
		struct record **v = r4_realloc(ss->v, cap * sizeof(*v));

		if (!v) {
			record_free(r);
			return -ENOMEM;
		}
		ss->v = v;
		ss->cap = cap;
	}
	ss->v[ss->n++] = r;
	*out = r;
	return 0;
}

static int exec_plan(struct r4_db *db, const struct r4_plan *p, const struct r4_exec_opts *o,
		     struct r4_exec_error *err, struct record *replay);

/* Do the session's runs again, in order, into the open transaction. */
static int replay_session(struct r4_session *ss)
{
	for (size_t i = 0; i < ss->n; i++) {
		struct r4_exec_error e;
		int rc;

		if (ss->v[i]->units && (rc = exec_plan(ss->db, ss->v[i]->plan, &ss->v[i]->o, &e,
						       ss->v[i])))
			return rc;
	}
	return 0;
}

/* Run p; with replay, redo that record's units (its session's earlier run). */
static int exec_plan(struct r4_db *db, const struct r4_plan *p, const struct r4_exec_opts *o,
		     struct r4_exec_error *err, struct record *replay)
{
	struct x x = {.db = db, .p = p, .o = o, .e = err, .session = o->session,
		      .rec = replay, .replaying = replay != NULL};
	const char *cwd = x.o->cwd ? x.o->cwd : "/";
	unsigned max_units = replay ? replay->units : UINT_MAX;
	struct r4_stat st;
	int rc = 0;

	*x.e = (struct r4_exec_error){0};
	x.e->comp = -1;
	x.e->note_step = -1;
	if (replay)
		x.session = NULL;	/* (its units run straight into the transaction) */
	for (size_t i = 0; i < p->nsteps; i++) {
		const struct r4_step *s = &p->steps[i];

		if ((s->op == R4_PLAN_TRY || s->op == R4_PLAN_RESULT || s->op == R4_PLAN_RESVAL) &&
		    s->b >= 0 && (size_t)s->b >= x.nnamed)
			x.nnamed = (size_t)s->b + 1;
	}
	x.h = r4_calloc(p->nh + 1, sizeof(*x.h));
	x.v = r4_calloc(p->nv + 1, sizeof(*x.v));
	x.tries = r4_calloc(p->nsteps + 1, sizeof(*x.tries));
	x.forced = r4_calloc(p->nsteps + 1, sizeof(*x.forced));
	x.named = r4_calloc(x.nnamed + 1, sizeof(*x.named));
	if (!x.h || !x.v || !x.tries || !x.forced || !x.named || push_cwd(&x, cwd)) {
		rc = -ENOMEM;
		goto out;
	}
	if (cwd[0] != '/' || (rc = r4_stat(db, cwd, &st)) || !S_ISDIR(st.mode)) {
		rc = rc ? rc : -ENOTDIR;
		snprintf(x.e->msg, sizeof(x.e->msg), "bad current directory '%s': %s", cwd,
			 r4_strerror(rc));
		x.e->rc = rc;
		goto out;
	}
	if (replay)
		memcpy(x.forced, replay->forced, p->nsteps * sizeof(*x.forced));
	else if (x.session && (rc = record_new(x.session, p, o, &x.rec)))
		goto out;
	for (size_t i = 0; i < p->nsteps && !rc && x.e->units < max_units; i++) {
		size_t end = i + 1;

		if (p->steps[i].op != R4_PLAN_BEGIN || !(p->steps[i].flags & R4_PLAN_UNIT))
			continue;
		while (end < p->nsteps && !(p->steps[end].op == R4_PLAN_COMMIT &&
					    (p->steps[end].flags & R4_PLAN_UNIT)))
			end++;
		if (end == p->nsteps) {
			x.step = i;
			rc = fail(&x, -EINVAL, "a unit without its COMMIT");
			break;
		}
		if (!(rc = run_unit(&x, i, end))) {
			x.e->units++;
			if (x.rec && !replay) {
				/* it stays in the session: remember how to redo it */
				memcpy(x.rec->forced + i, x.forced + i,
				       (end + 1 - i) * sizeof(*x.forced));
				x.rec->units++;
			}
		}
		i = end;
	}
out:
	if (rc && !x.e->rc)
		x.e->rc = rc;
	if (x.h)
		reset_unit(&x, 0, p->nsteps);
	while (x.ncwd)
		r4_free(x.cwd[--x.ncwd]);
	r4_free(x.cwd);
	r4_free(x.h);
	r4_free(x.v);
	r4_free(x.tries);
	r4_free(x.forced);
	r4_free(x.named);
	r4_free(x.res);
	r4_free(x.rtab);
	r4_free(x.groups);
	r4_free(x.ys);
	return rc;
}

int r4_exec(r4_db *db, const struct r4_plan *p, const struct r4_exec_opts *o,
	    struct r4_exec_error *err)
{
	static const struct r4_exec_opts defaults = {.who = {.umask = 022}};
	struct r4_exec_error local;

	if (!o)
		o = &defaults;
	if (!err)
		err = &local;
	*err = (struct r4_exec_error){.comp = -1, .note_step = -1};
	if (o->session) {
		if (o->session->db != db || !r4_in_txn(db))
			return err->rc = -EINVAL;
		if (o->session->broken)
			return err->rc = -EIO;
	} else if (r4_in_txn(db)) {
		return err->rc = -EBUSY;
	}
	return exec_plan(db, p, o, err, NULL);
}

/* ================================ sessions ============================== */

int r4_session_begin(r4_db *db, r4_session **out)
{
	r4_session *s;
	int rc;

	if (!(s = r4_calloc(1, sizeof(*s))))
		return -ENOMEM;
	if ((rc = r4_begin(db))) {
		r4_free(s);
		return rc;
	}
	s->db = db;
	clock_gettime(CLOCK_REALTIME, &db->clock_pin);
	db->clock_pinned = true;
	*out = s;
	return 0;
}

static void session_end(r4_session *s)
{
	s->db->clock_pinned = false;
	for (size_t i = 0; i < s->n; i++)
		record_free(s->v[i]);
	r4_free(s->v);
	r4_free(s);
}

int r4_session_commit(r4_session *s)
{
	int rc;

	if (!s)
		return -EINVAL;
	if (s->broken) {
		r4_abort(s->db);
		rc = -EIO;
	} else if ((rc = r4_commit(s->db)) && r4_in_txn(s->db)) {
		r4_abort(s->db);
	}
	session_end(s);
	return rc;
}

void r4_session_rollback(r4_session *s)
{
	if (!s)
		return;
	r4_abort(s->db);
	session_end(s);
}

unsigned r4_session_runs(const r4_session *s)
{
	unsigned n = 0;

	for (size_t i = 0; s && i < s->n; i++)
		n += s->v[i]->units > 0;
	return n;
}
