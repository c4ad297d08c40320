/*
 * exec.c - the plan executor: runs what the command language compiled
 * (LANGUAGE.md sections 5 and 6, docs/plan.md) against an open image.  It
 * sits above the engine (DESIGN.md section 3) and sees r4.h alone, and
 * exec.h, which it shares with session.c (the Makefile builds exec/ with
 * -Iinclude -Iexec; make layering checks it).
 *
 * Handles are resolved absolute paths: r4_ns_walk walks each path for
 * the acting identity (search permission), following symlinks (the fs API's
 * calls by path never do) and ending at pseudo names; the executor's own
 * names, result children, and its touches of entries reach the walker as
 * hooks.  What reading or writing an object, a pseudo file or a window
 * does is pseudo.c's (r4_pseudo_get, r4_pseudo_put ...): the executor
 * records first what a step uses, and what pseudo.c says a change will
 * change (the ',' groups), and turns the words pseudo.c gives back into
 * diagnostics.  Everything runs inside the unit's transaction.
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
#include <assert.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "exec.h"

#define REPLAY 1		/* run_steps: a TRY caught a failure, run the unit again */

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
	uint64_t gen;		/* ... as it was at this r4_generation */
	bool fresh;		/* st (and dst) hold a stat taken at gen */
	struct r4_stat dst;	/* H_MISSING: the directory */
	uint64_t dir_ino;	/* the directory holding the name (0 for the root) */
	enum r4_pseudo ps;	/* H_PSEUDO */
	char *sub;		/* ..plugin/<sub> */
	struct r4_window win;	/* H_WINDOW */
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

struct yielded {
	uint32_t off, len;
	char *path;
	struct r4_buf bytes;
	int err;
	char *why;		/* err in words (r4_value.why) */
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
	struct r4_exec_forced *forced;	/* by step */
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
	struct r4_session_record *rec;	/* its record in the session, or the one redone */
	bool replaying;		/* redoing a session's earlier run: no values, no record */
	unsigned inverts;	/* inverts being read, one inside another */
	struct r4_ns_state *walking;	/* the walks' state, kept from one to the next */
	bool walks;		/* a walk uses it */
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

	if (h->fresh && h->gen == r4_generation(x->db))
		return 0;
	if ((rc = r4_stat(x->db, h->path, &h->st)))
		return rc;
	h->fresh = h->kind != H_MISSING;	/* dst is not taken again */
	h->gen = r4_generation(x->db);
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
		if (r4_grow(&gr->t, &gr->cap, gr->n + 1, sizeof(*gr->t), 16))
			return -ENOMEM;
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
	/* mixed whole (murmur3's finalizer): the middle bits of one multiply
	 * of the object ids a script makes one after another fell in long
	 * runs, a hundred probes a slot in a unit of 100,000 new files */
	uint64_t h = ino * 31 + (uint64_t)ps;
	size_t at;

	h = (h ^ h >> 33) * UINT64_C(0xff51afd7ed558ccd);
	h = (h ^ h >> 33) * UINT64_C(0xc4ceb9fe1a85ec53);
	at = (size_t)(h ^ h >> 33) & (x->rsize - 1);

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

/* The walker asks: is name, under the object reached, a bound result
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
	bool first = !x->e->rc;

	x->e->comp = comp;
	fail(x, rc, "cannot %s '%.*s'", create ? "write" : "read", (int)(name + len - text), text);
	/* a bare 0 or 12 is a name: say how a number is written */
	if (first && rc == -ENOENT && strspn(text, "0123456789") == strlen(text))
		snprintf(x->e->msg + strlen(x->e->msg), sizeof(x->e->msg) - strlen(x->e->msg),
			 " (a number is written #%s)", text);
	return rc;
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
	int rc = 0, which = 0;
	bool claimed;

	switch (w->end) {
	case R4_NS_AT_MISSING:
		h->kind = H_MISSING;
		if (!(h->path = r4_path_join(w->path, w->name, w->len)))
			return -ENOMEM;
		h->dir_ino = w->st.ino;
		h->dst = w->st;	/* the directory, for make() */
		h->gen = r4_generation(x->db);
		h->fresh = true;
		return 0;
	case R4_NS_AT_PSEUDO:
		rc = pseudo_tail(x, w, text, create, h);
		break;
	case R4_NS_AT_CLAIMED:
		h->kind = H_BYTES;
		claimed = is_result_child(w->name, w->len, &which);
		assert(claimed);	/* (the claims hook said so) */
		(void)claimed;
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
	h->gen = r4_generation(x->db);
	h->fresh = true;
	return rc;
}

/*
 * Walk path text `text` from the object `from` (absolute path; NULL: the
 * current directory) with flags R4_LOOK_* and R4_NS_CHECKED or 0,
 * through r4_ns_walk; the handle goes to *h.
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
	bool create = flags & (R4_LOOK_CREATE | R4_LOOK_MISSING), own = false;
	int rc;

	/* (one state for the run's walks: a walk's allocation was a tenth of
	 * a script line's making of a file) */
	if (!x->walks && (x->walking || (x->walking = r4_ns_state_new()))) {
		w.state = x->walking;
		x->walks = own = true;
	}
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
		rc = fail(x, rc, "cannot read '%s'", from);
	else if (rc == -ENOENT || rc == -ENOTDIR || rc == -EACCES || rc == -ELOOP)
		rc = lookup_fail(x, text, w.comp, rc, create);
	else
		rc = fail(x, rc, "cannot read '%s'", w.path);
	r4_ns_fini(&w);
	if (own)
		x->walks = false;
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

/* ============================ pseudo files ============================== */

/*
 * What pseudo files and an object's contents are is pseudo.c's; the
 * executor hands it the object a handle holds, records what a read uses
 * and what pseudo.c says a change will change (the ',' groups), and makes
 * the words it gets back a diagnostic.
 */

static int read_handle(struct x *x, struct handle *h, struct r4_buf *b);
static int write_handle(struct x *x, struct handle *h, const uint8_t *p, size_t n, bool append);

/* An invert's file part, as this run reaches it: walked as the caller,
 * read or written as a statement would (r4.h, r4_pseudo_ctx.part). */
static int exec_part(void *arg, unsigned depth, const char *path, const uint8_t *p, size_t n,
		     bool quiet, struct r4_buf *out)
{
	struct x *x = arg;
	struct r4_exec_error saved = *x->e;
	struct handle h = {0};
	unsigned outer = x->inverts;
	int rc;

	x->inverts = depth;
	if (!(rc = walk(x, NULL, path, p ? R4_LOOK_CREATE : 0, &h)))
		rc = p ? write_handle(x, &h, p, n, false) : read_handle(x, &h, out);
	x->inverts = outer;
	handle_clear(&h);
	if (rc && quiet)
		*x->e = saved;	/* (only a comparison failed) */
	return rc;
}

/* What a change pseudo.c makes will change: the ',' groups' touches. */
static int exec_changes(void *arg, uint64_t ino, int what, const char *path)
{
	return touch(arg, ino, what, what < 0 ? base_name(path) : NULL, true, path);
}

/* pseudo.c acting for this run: its identity, its words into why. */
static struct r4_pseudo_ctx pctx(struct x *x, struct r4_why *why)
{
	why->msg[0] = 0;
	return (struct r4_pseudo_ctx){.who = &x->o->who, .actor = &x->o->who, .why = why,
				      .part = exec_part, .arg = x, .depth = x->inverts,
				      .changes = x->ngroups ? exec_changes : NULL};
}

/* A failure pseudo.c put in words becomes the diagnostic; one it did not
 * (a part's, already failed here; -ENOMEM) stays as it is. */
static int said(struct x *x, int rc, const struct r4_why *why)
{
	return rc && why->msg[0] ? fail(x, rc, "%s", why->msg) : rc;
}

/* The bytes of a handle (READ, and object values). */
static int read_handle(struct x *x, struct handle *h, struct r4_buf *b)
{
	struct r4_why why;
	struct r4_pseudo_ctx c = pctx(x, &why);
	bool ps = h->kind == H_PSEUDO && h->ps != R4_PSEUDO_BODY;
	int rc;

	switch (h->kind) {
	case H_OBJ:
	case H_PSEUDO:
	case H_WINDOW:
		if ((rc = h_stat(x, h)))
			return fail(x, rc, "cannot read '%s'", h->path);
		if ((rc = touch_obj(x, h->st.ino, ps ? (int)h->ps : 0, false, h->path)))
			return rc;
		if (h->kind == H_WINDOW)
			rc = r4_pseudo_window_get(x->db, &c, h->path, &h->st, &h->win, b);
		else
			rc = r4_pseudo_get(x->db, &c, h->path, &h->st,
					   h->kind == H_PSEUDO ? h->ps : R4_PSEUDO_NONE, h->sub, b);
		return said(x, rc, &why);
	case H_BYTES:
		return r4_buf_set(b, h->bytes.p, h->bytes.len);
	case H_MISSING:
		return fail(x, -ENOENT, "cannot read '%s'", h->path);
	default:
		/* the target of a named assignment that failed: empty bytes */
		return r4_buf_set(b, "", 0);
	}
}

/* Write pseudo file ps (sub: ..plugin/<sub>) of the object h, or its
 * contents (R4_PSEUDO_NONE); h follows the object when it is renamed. */
static int pseudo_put(struct x *x, struct handle *h, enum r4_pseudo ps, const char *sub,
		      const uint8_t *p, size_t n, bool append)
{
	struct r4_why why;
	struct r4_pseudo_ctx c;
	int rc;

	if ((rc = h_stat(x, h)) && ps == R4_PSEUDO_NONE)
		return fail(x, rc, "cannot write '%s'", h->path);
	if (rc)
		return fail(x, rc, "cannot write '%s/%s'", h->path, r4_pseudo_name(ps));
	c = pctx(x, &why);
	rc = r4_pseudo_put(x->db, &c, h->path, &h->st, h->dir_ino, ps, sub, p, n, append);
	if (c.moved) {
		r4_free(h->path);
		h->path = c.moved;
	}
	h->fresh = false;
	if (!rc)
		x->last_len = c.stored;
	return said(x, rc, &why);
}

/* Make h's name an object: a regular file for a missing name written to
 * (section 5.2), with the contents p[0, n) (p NULL: none), or (T -> E,
 * 5.3) a symlink to tgt[0, n), which may replace a symlink there. */
static int make(struct x *x, struct handle *h, const uint8_t *tgt, const uint8_t *p, size_t n)
{
	struct r4_why why;
	struct r4_pseudo_ctx c = pctx(x, &why);
	bool known = h->kind == H_MISSING && h->fresh && h->gen == r4_generation(x->db);
	const struct r4_stat *d = known ? &h->dst : NULL;
	int rc;

	if (tgt)
		rc = r4_pseudo_symlink(x->db, &c, h->path, h->kind == H_OBJ ? &h->st : NULL,
				       h->dir_ino, d, tgt, n, &h->st);
	else if (!(rc = touch_entry(x, h->dir_ino, base_name(h->path), true, h->path)))
		rc = r4_pseudo_make(x->db, &c, h->path, d, R4_NEW_REGULAR, 0, 0666, p, n, &h->st);
	if (c.moved) {
		r4_free(h->path);
		h->path = c.moved;
	}
	if (rc)
		return said(x, rc, &why);
	h->kind = H_OBJ;
	h->gen = r4_generation(x->db);
	h->fresh = !p;
	if (p)
		x->last_len = c.stored;
	return 0;
}

static int write_handle(struct x *x, struct handle *h, const uint8_t *p, size_t n, bool append)
{
	struct r4_why why;
	struct r4_pseudo_ctx c;
	int rc;

	switch (h->kind) {
	case H_MISSING:
		if (!append)	/* (made with them: one change, not two) */
			return make(x, h, NULL, p ? p : (const uint8_t *)"", n);
		if ((rc = make(x, h, NULL, NULL, 0)))
			return rc;
		/* fall through */
	case H_OBJ:
		return pseudo_put(x, h, R4_PSEUDO_NONE, NULL, p, n, append);
	case H_PSEUDO:
		return pseudo_put(x, h, h->ps, h->sub, p, n, append);
	case H_WINDOW:
		if (append)
			return fail(x, -EINVAL, "cannot append to a window of '%s'", h->path);
		if ((rc = h_stat(x, h)))
			return fail(x, rc, "cannot write '%s'", h->path);
		c = pctx(x, &why);
		if (!(rc = r4_pseudo_window_put(x->db, &c, h->path, &h->st, &h->win, p, n)))
			x->last_len = c.stored;
		return said(x, rc, &why);
	case H_BYTES:
		return fail(x, -EACCES, "cannot write a result child: it is read-only");
	default:
		return fail(x, -ENOENT, "cannot write an object that does not exist");
	}
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

/* A step that made nh (rc 0) puts it in its out register; else nh goes. */
static int made(struct x *x, struct handle *out, struct handle *nh, int rc)
{
	if (rc) {
		handle_clear(nh);
		return rc;
	}
	handle_clear(out);
	*out = *nh;
	x->last_len = 0;
	return 0;
}

static int step_create(struct x *x, const struct r4_step *s)
{
	struct handle *d = &x->h[s->b], nh = {0};
	struct r4_new n = {.type = s->flags & 0xff, .format = s->flags >> 8};
	struct r4_why why;
	struct r4_pseudo_ctx c = pctx(x, &why);
	int rc;

	val(x, s->c, &n.name, &n.name_len);
	if (s->d != -1)
		val(x, s->d, &n.perm, &n.perm_len);
	val(x, s->e, &n.target, &n.target_len);
	if (!(rc = need_obj(x, d, "create in")) &&
	    !(rc = said(x, r4_pseudo_new(x->db, &c, d->path, &d->st, &n, &nh.path, &nh.st), &why))) {
		nh.kind = H_OBJ;
		nh.dir_ino = d->st.ino;
		nh.gen = r4_generation(x->db);
		nh.fresh = true;
	}
	return made(x, &x->h[s->a], &nh, rc);
}

static int step_link(struct x *x, const struct r4_step *s)
{
	struct handle *d = &x->h[s->b], *t = &x->h[s->d], nh = {0};
	struct r4_why why;
	struct r4_pseudo_ctx c = pctx(x, &why);
	const uint8_t *name;
	size_t nlen;
	int rc;

	val(x, s->c, &name, &nlen);
	if ((rc = need_obj(x, d, "link in")) || (rc = need_obj(x, t, "link to")))
		return rc;
	if (!(rc = said(x, r4_pseudo_link(x->db, &c, t->path, &t->st, d->path, &d->st, name, nlen,
					  &nh.path, &nh.st), &why)))
		nh.kind = H_OBJ, nh.dir_ino = d->st.ino;
	return made(x, &x->h[s->a], &nh, rc);
}

static int step_window(struct x *x, const struct r4_step *s)
{
	struct handle *f = &x->h[s->b], w = {0};
	const uint8_t *off = NULL, *len = NULL;
	size_t offn = 0, lenn = 0;
	struct r4_why why;
	struct r4_pseudo_ctx c = pctx(x, &why);
	int rc;

	if ((rc = need_obj(x, f, "take a window of")))
		return rc;
	if ((rc = h_stat(x, f)))
		return fail(x, rc, "cannot read '%s'", f->path);
	if (s->c != -1)
		val(x, s->c, &off, &offn);
	if (s->d != -1)
		val(x, s->d, &len, &lenn);
	if ((rc = r4_pseudo_window(x->db, &c, f->path, &f->st, off, offn, len, lenn, s->flags,
				   &w.win)))
		return said(x, rc, &why);
	if (!(w.path = r4_memdup(f->path, strlen(f->path))))
		return -ENOMEM;
	w.kind = H_WINDOW;
	w.st = f->st;
	w.dir_ino = f->dir_ino;
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
	r4_pseudo_chop(p, &n);
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
		c = memcmp(a, b, na < nb ? na : nb);
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
	struct yielded y = {s->off, s->len, NULL, {0}, 0, NULL};
	struct handle *h = s->flags & R4_YIELD_H ? &x->h[s->a] : NULL;
	int rc = 0;

	if (h && h->kind == H_MISSING)
		return fail(x, -ENOENT, "cannot read '%s'", h->path);
	if (!x->o->yield)
		return 0;	/* (a host that keeps no values) */
	if ((rc = r4_grow(&x->ys, &x->yscap, x->nys + 1, sizeof(*x->ys), 8)))
		return rc;
	if (!h) {
		const uint8_t *p;
		size_t n;

		val(x, s->a, &p, &n);
		rc = r4_buf_set(&y.bytes, p, n);
	} else if (h->kind == H_BYTES) {
		rc = r4_buf_set(&y.bytes, h->bytes.p, h->bytes.len);
	} else if (h->kind == H_NONE || !h->path) {
		rc = r4_buf_set(&y.bytes, "", 0);
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
		const struct r4_pseudo_info *pi = h->kind == H_PSEUDO
			? r4_pseudo_lookup(suffix, strlen(suffix)) : NULL;

		/* a write-only pseudo file (..unlink) has no contents to show:
		 * its value is empty, not a failed read */
		if (pi && !(pi->flags & R4_PSF_READ)) {
			rc = r4_buf_set(&y.bytes, "", 0);
		} else if (x->o->read_objects) {
			struct r4_exec_error saved = *x->e;
			size_t groups = x->ngroups;

			/* a value that cannot be read is still a value: say why, do not
			 * fail; and the host's look is no member's use */
			x->ngroups = 0;
			y.err = read_handle(x, h, &y.bytes);
			x->ngroups = groups;
			if (y.err && !saved.rc && x->e->rc &&
			    !(y.why = r4_memdup(x->e->msg, strlen(x->e->msg))))
				rc = -ENOMEM;
			*x->e = saved;
			if (y.err == -ENOMEM)
				rc = y.err;
		}
	}
	if (rc) {
		r4_free(y.path);
		r4_free(y.why);
		r4_buf_free(&y.bytes);
		return rc;
	}
	x->ys[x->nys++] = y;
	return 0;
}

static int push_group(struct x *x)
{
	if (r4_grow(&x->groups, &x->groupcap, x->ngroups + 1, sizeof(*x->groups), 4))
		return -ENOMEM;
	x->groups[x->ngroups++] = (struct group){0};
	return 0;
}

static int push_cwd(struct x *x, const char *path)
{
	if (r4_grow(&x->cwd, &x->cwdcap, x->ncwd + 1, sizeof(*x->cwd), 8) ||
	    !(x->cwd[x->ncwd] = r4_memdup(path, strlen(path))))
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
	struct r4_why why;
	struct r4_pseudo_ctx c;
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
		h = &x->h[s->a];
		if (h->kind != H_OBJ && h->kind != H_MISSING)
			return fail(x, -EINVAL, "cannot make a symlink here");
		val(x, s->b, &p, &n);
		if (!(rc = make(x, h, p, NULL, n)))
			x->last_len = n;
		return rc;
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
		rc = pseudo_put(x, h, ps, s->str, p, n, s->flags & R4_SETATTR_APPEND);
		/* the value of the assignment is the pseudo file written */
		if (!rc && s->str && !(h->sub = r4_memdup(s->str, strlen(s->str))))
			return -ENOMEM;
		h->kind = H_PSEUDO;
		h->ps = ps;
		return rc;
	}
	case R4_PLAN_WINDOW:
		return step_window(x, s);
	case R4_PLAN_RULE:
		h = &x->h[s->a];
		if ((rc = need_obj(x, h, "set a rule on")) || (rc = h_stat(x, h)))
			return rc < 0 && !x->e->rc ? fail(x, rc, "cannot read '%s'", h->path) : rc;
		val(x, s->b, &p, &n);
		c = pctx(x, &why);
		return said(x, r4_pseudo_rule(x->db, &c, h->path, &h->st, p, n, s->flags & R4_RULE_GID,
					      s->flags >> 1), &why);
	case R4_PLAN_AUDIT: {
		struct handle *log = &x->h[s->b];

		h = &x->h[s->a];
		if ((rc = need_obj(x, h, "audit")) || (rc = need_obj(x, log, "audit into")))
			return rc;
		if ((rc = h_stat(x, h)))
			return fail(x, rc, "cannot read '%s'", h->path);
		c = pctx(x, &why);
		return said(x, r4_pseudo_audit_into(x->db, &c, h->path, &h->st, log->path), &why);
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
		r4_free(x->ys[i].why);
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

				x->forced[t] = (struct r4_exec_forced){true, rc, x->last_len};
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
				     y->bytes.len, y->err, y->why};
		int rc = x->o->yield(x->o->ctx, &v);

		if (rc)
			return rc < 0 ? rc : -ECANCELED;
	}
	return 0;
}

static int run_unit(struct x *x, size_t begin, size_t end)
{
	struct r4_db *db = x->db;
	/* in a session (or redoing one's run) the transaction is the session's */
	bool in_session = x->session || x->replaying, pin;
	int rc;

	if (!x->replaying)
		memset(x->forced + begin, 0, (end - begin) * sizeof(*x->forced));
	pin = r4_clock_pin(db);
	for (bool again = false;; again = true) {
		bool txn = in_session;

		if (again)	/* (the unit left nothing behind when it ended) */
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
			int rr = r4_session_redo(x->session);

			if (rr && rc == REPLAY) {
				x->step = begin;
				rc = fail(x, rr, "cannot redo the session's earlier commands");
			}
		}
		if (rc != REPLAY || x->replaying)
			break;
	}
	if (pin)
		r4_clock_unpin(db);
	reset_unit(x, begin, end);
	return rc;
}

int r4_exec_plan(r4_db *db, const struct r4_plan *p, const struct r4_exec_opts *o,
		 struct r4_exec_error *err, struct r4_session_record *replay)
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
	else if (x.session && (rc = r4_session_keep(x.session, p, o, &x.rec)))
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
	r4_ns_state_free(x.walking);
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
		int rc = r4_session_check(o->session, db);

		if (rc)
			return err->rc = rc;
	} else if (r4_in_txn(db)) {
		return err->rc = -EBUSY;
	}
	return r4_exec_plan(db, p, o, err, NULL);
}
