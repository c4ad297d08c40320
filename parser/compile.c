/*
 * compile.c - the checker and compiler: AST -> transaction plan
 * (LANGUAGE.md sections 5, 6 and 9; docs/plan.md).
 *
 * One walk does both.  Every expression is compiled in one of three
 * modes: for its bytes (value: a value operand), for the object it names
 * (object: a handle register), or as a statement whose value goes to the
 * host (yield: YIELD steps, pushed down into the branches of an if and the
 * members of a bracket, so no register has to hold "object or bytes").
 * Check-time errors are reported as they are found and the walk goes on,
 * so one run reports them all; a plan is handed back only without errors.
 */
#include <errno.h>
#include <stdarg.h>
#include <string.h>

#include "ast.h"
#include "diag.h"
#include "r4.h"
#include "r4_lang.h"

#define NAME_MAX_BYTES 255

/* A named result in scope (section 5.4). */
struct binding {
	const struct r4_ast *name;	/* its path */
	int id;
	int group, member;		/* the ',' group member that bound it (0: none) */
};

/* A plain path a ',' member reads or writes (section 5.5). */
struct touch {
	unsigned scope;			/* 0: absolute; else the scope it is relative to */
	char *text;			/* the path as spelled, with its pseudo name */
	bool write;
	r4_loc loc;
	int group, member;
};

struct cc {
	struct r4_plan *p;
	r4_diags *d;
	int nomem;
	struct binding *bind;
	size_t nbind, capbind;
	int nresults;
	struct touch *touch;
	size_t ntouch, captouch;
	unsigned scope, nscopes;	/* the current scope's id; ids handed out */
	int group, member, ngroups;	/* the innermost ',' group member being compiled */
	int32_t acc;			/* block_value: the bytes so far */
};

enum { MODE_VALUE, MODE_OBJECT, MODE_YIELD };

__attribute__((format(printf, 3, 4)))
static void error(struct cc *c, r4_loc loc, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	if (r4_diag_addv(c->d, R4_DIAG_ERROR, loc, fmt, ap))
		c->nomem = 1;
	va_end(ap);
}

__attribute__((format(printf, 3, 4)))
static void note(struct cc *c, r4_loc loc, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	if (r4_diag_addv(c->d, R4_DIAG_NOTE, loc, fmt, ap))
		c->nomem = 1;
	va_end(ap);
}

/* ================================ emitting ============================== */

static int emit(struct cc *c, enum r4_plan_op op, unsigned flags, int32_t a, int32_t b,
		int32_t cc_, const char *str, r4_loc loc)
{
	struct r4_step s = {.op = (uint8_t)op, .flags = flags, .a = a, .b = b, .c = cc_, .d = -1,
			    .e = -1, .str = str, .off = loc.off, .len = loc.len};
	int i = r4_plan_add(c->p, &s);

	if (i < 0) {
		c->nomem = 1;
		return 0;
	}
	return i;
}

static int32_t newh(struct cc *c)
{
	return (int32_t)c->p->nh++;
}

static int32_t newv(struct cc *c)
{
	return (int32_t)c->p->nv++;
}

static int32_t konst(struct cc *c, const char *bytes, size_t len)
{
	int32_t x = -1;

	if (r4_plan_const(c->p, bytes, len, &x))
		c->nomem = 1;
	return x;
}

/* Point jump step at at the next step to be emitted. */
static void land(struct cc *c, int at, bool in_b)
{
	if (c->nomem)
		return;
	if (in_b)
		c->p->steps[at].b = (int32_t)c->p->nsteps;
	else
		c->p->steps[at].a = (int32_t)c->p->nsteps;
}

/* ================================ helpers =============================== */

static bool is_name(const struct r4_ast *comp)
{
	return comp->kind == R4_AST_WORD || comp->kind == R4_AST_QWORD;
}

static bool is_pseudo_spelling(const struct r4_ast *comp)
{
	return is_name(comp) && comp->len > 2 && comp->bytes[0] == '.' && comp->bytes[1] == '.';
}

static bool is_result_child(const struct r4_ast *comp)
{
	return is_name(comp) && ((comp->len == 13 && !memcmp(comp->bytes, "assign_result", 13)) ||
				 (comp->len == 13 && !memcmp(comp->bytes, "assign_length", 13)));
}

/* A path of names only (no bracket). */
static bool plain_path(const struct r4_ast *p)
{
	if (p->kind != R4_AST_PATH)
		return false;
	for (const struct r4_ast *k = p->kids; k; k = k->next)
		if (!is_name(k))
			return false;
	return true;
}

/* Components from..upto (exclusive) as one text, '/'-joined; with the
 * leading '/' when lead.  Components never hold '/' or NUL (checked). */
static char *join(struct cc *c, const struct r4_ast *from, const struct r4_ast *upto, bool lead)
{
	size_t n = 2;
	char *s, *o;

	for (const struct r4_ast *k = from; k && k != upto; k = k->next)
		n += (is_name(k) ? k->len : 1) + 1;
	if (!(s = r4_malloc(n))) {
		c->nomem = 1;
		return NULL;
	}
	o = s;
	if (lead)
		*o++ = '/';
	for (const struct r4_ast *k = from; k && k != upto; k = k->next) {
		if (k != from)
			*o++ = '/';
		if (is_name(k)) {
			memcpy(o, k->bytes, k->len);
			o += k->len;
		} else {
			*o++ = '?';	/* a bracket: only in texts already in error */
		}
	}
	if (o == s)
		*o++ = '.';
	*o = 0;
	return s;
}

static r4_loc span(r4_loc a, r4_loc b)
{
	return (r4_loc){a.off, b.off + b.len - a.off};
}

/* Section 5.2: non-empty, no '/' or NUL, at most 255 bytes. */
static void check_component(struct cc *c, const struct r4_ast *k)
{
	if (!k->len)
		error(c, k->loc, "empty name");
	else if (memchr(k->bytes, '/', k->len))
		error(c, k->loc, "a name cannot hold '/'");
	else if (memchr(k->bytes, 0, k->len))
		error(c, k->loc, "a name cannot hold a NUL byte");
	else if (k->len > NAME_MAX_BYTES)
		error(c, k->loc, "name of %zu bytes: at most %d are allowed", k->len,
		      NAME_MAX_BYTES);
}

static void record(struct cc *c, const struct r4_ast *path, bool write, r4_loc loc)
{
	struct touch *t;

	if (!c->group)
		return;
	if (r4_grow(&c->touch, &c->captouch, c->ntouch + 1, sizeof(*c->touch), 16)) {
		c->nomem = 1;
		return;
	}
	t = &c->touch[c->ntouch];
	if (!(t->text = join(c, path->kids, NULL, path->absolute)))
		return;
	t->scope = path->absolute ? 0 : c->scope;
	t->write = write;
	t->loc = loc;
	t->group = c->group;
	t->member = c->member;
	c->ntouch++;
}

/* ============================ named results ============================= */

static bool same_names(const struct r4_ast *a, const struct r4_ast *b, size_t n)
{
	const struct r4_ast *x = a->kids, *y = b->kids;

	for (size_t i = 0; i < n; i++, x = x->next, y = y->next)
		if (!x || !y || !is_name(x) || x->len != y->len || memcmp(x->bytes, y->bytes, x->len))
			return false;
	return true;
}

/* The binding a path starts with (innermost first), or NULL. */
static const struct binding *bound(struct cc *c, const struct r4_ast *path)
{
	for (size_t i = c->nbind; i-- > 0;) {
		const struct r4_ast *n = c->bind[i].name;

		if (n->absolute == path->absolute && path->nkids >= n->nkids &&
		    same_names(n, path, n->nkids))
			return &c->bind[i];
	}
	return NULL;
}

static void bind(struct cc *c, const struct r4_ast *name, int id)
{
	if (r4_grow(&c->bind, &c->capbind, c->nbind + 1, sizeof(*c->bind), 8)) {
		c->nomem = 1;
		return;
	}
	c->bind[c->nbind++] = (struct binding){name, id, c->group, c->member};
}

/* A use of named result b by path: only N/assign_result and N/assign_length,
 * read.  Returns the child (0 result, 1 length) or -1 after an error. */
static int result_use(struct cc *c, const struct binding *b, const struct r4_ast *path, bool write)
{
	const struct r4_ast *k = path->kids;

	for (size_t i = 0; i < b->name->nkids; i++)
		k = k->next;
	if (b->group && b->group == c->group && b->member != c->member) {
		error(c, path->loc, "named result bound by another member of this ',' group");
		note(c, b->name->loc, "bound here");
		return -1;
	}
	if (!k) {
		error(c, path->loc, "a named result is not an object: use its children "
		      "'assign_result' and 'assign_length'");
		return -1;
	}
	if (!is_result_child(k) || k->next) {
		error(c, k->loc, "a named result has only the children 'assign_result' and "
		      "'assign_length'");
		return -1;
	}
	if (write) {
		error(c, path->loc, "'%s' of a named result is read-only", k->bytes);
		return -1;
	}
	return k->bytes[7] == 'l';
}

/* =============================== parameters ============================= */

enum { P_VALUE, P_REF, P_CONST };

struct param {
	const char *name;
	int kind;
	bool required;
	const char *const *consts;	/* P_CONST: the allowed words, index = value */
};


static const struct param new_params[] = {
	{"name", P_VALUE, true, NULL},	    {"type", P_CONST, false, r4_new_types},
	{"perm", P_VALUE, false, NULL},	    {"target", P_VALUE, false, NULL},
	{"format", P_CONST, false, r4_formats}, {NULL, 0, false, NULL},
};
static const struct param link_params[] = {
	{"name", P_VALUE, true, NULL}, {"target", P_REF, true, NULL}, {NULL, 0, false, NULL},
};
static const struct param range_params[] = {
	{"offset", P_VALUE, false, NULL}, {"length", P_VALUE, false, NULL},
	{"mode", P_CONST, false, r4_win_modes}, {NULL, 0, false, NULL},
};
static const struct param acl_params[] = {
	{"uid", P_VALUE, false, NULL}, {"gid", P_VALUE, false, NULL},
	{"access", P_CONST, true, r4_accesses}, {NULL, 0, false, NULL},
};
static const struct param audit_params[] = {
	{"log", P_REF, true, NULL}, {NULL, 0, false, NULL},
};

static const struct param *params_of(enum r4_pseudo id)
{
	switch (id) {
	case R4_PSEUDO_NEW: return new_params;
	case R4_PSEUDO_LINK: return link_params;
	case R4_PSEUDO_RANGE: return range_params;
	case R4_PSEUDO_ACL: return acl_params;
	case R4_PSEUDO_AUDIT: return audit_params;
	default: return NULL;
	}
}

#define MAX_PARAMS 5

/* The members of a parameter block, each 'name <- expr', matched to the
 * table: set[i] is the member for parameter i. */
static bool match_params(struct cc *c, const struct r4_ast *block, const struct r4_pseudo_info *ps,
			 const struct param *tab, const struct r4_ast *set[MAX_PARAMS])
{
	bool ok = true, malformed = false;

	memset(set, 0, MAX_PARAMS * sizeof(set[0]));
	for (const struct r4_ast *g = block->kids; g; g = g->next)
		for (const struct r4_ast *m = g->kids; m; m = m->next) {
			const struct r4_ast *t = m->a;
			size_t i;

			if (m->kind != R4_AST_ASSIGN || m->op != R4_OP_REPLACE || m->c ||
			    t->absolute || t->nkids != 1 || t->kids->kind != R4_AST_WORD) {
				error(c, m->loc, "each member of a '%s' block is 'parameter <- value'",
				      ps->name);
				ok = false;
				malformed = true;
				continue;
			}
			for (i = 0; tab[i].name; i++)
				if (strlen(tab[i].name) == t->kids->len &&
				    !memcmp(tab[i].name, t->kids->bytes, t->kids->len))
					break;
			if (!tab[i].name) {
				error(c, t->loc, "unknown parameter '%s' of '%s'", t->kids->bytes,
				      ps->name);
				ok = false;
			} else if (set[i]) {
				error(c, t->loc, "parameter '%s' given twice", tab[i].name);
				note(c, set[i]->a->loc, "first given here");
				ok = false;
			} else {
				set[i] = m;
			}
		}
	for (size_t i = 0; tab[i].name && !malformed; i++)
		if (tab[i].required && !set[i]) {
			error(c, block->loc, "'%s' needs the parameter '%s'", ps->name, tab[i].name);
			ok = false;
		}
	return ok;
}

/* A constant parameter: a bare word or a string naming one of the constants. */
static int const_param(struct cc *c, const struct param *pm, const struct r4_ast *m)
{
	const struct r4_ast *v = m->b;
	const char *w = NULL;
	size_t len = 0;

	if (v->kind == R4_AST_STRING) {
		w = v->bytes;
		len = v->len;
	} else if (v->kind == R4_AST_PATH && !v->absolute && v->nkids == 1 &&
		   v->kids->kind == R4_AST_WORD) {
		w = v->kids->bytes;
		len = v->kids->len;
	}
	for (int i = 0; w && pm->consts[i]; i++)
		if (strlen(pm->consts[i]) == len && !memcmp(pm->consts[i], w, len))
			return i;
	char list[128] = "";

	for (int i = 0; pm->consts[i]; i++)
		snprintf(list + strlen(list), sizeof(list) - strlen(list), "%s%s", i ? ", " : "",
			 pm->consts[i]);
	error(c, v->loc, "'%s' takes one of: %s", pm->name, list);
	return -1;
}

/* ============================== expressions ============================= */

static int32_t value(struct cc *c, const struct r4_ast *e);
static int32_t object(struct cc *c, const struct r4_ast *e, int32_t dst);
static void yield(struct cc *c, const struct r4_ast *e);
static int32_t block_value(struct cc *c, const struct r4_ast *b);
static int32_t block_object(struct cc *c, const struct r4_ast *b, int32_t dst);
static void block_yield(struct cc *c, const struct r4_ast *b);

/* h = LOOKUP of components [from, upto) from base; into dst if >= 0.
 * No components: "/" when lead, else "." (the base, or the current
 * directory). */
static int32_t lookup(struct cc *c, int32_t base, const struct r4_ast *from,
		      const struct r4_ast *upto, bool lead, unsigned flags, int32_t dst, r4_loc loc)
{
	char *text = join(c, from, upto, lead);
	int32_t h = dst >= 0 ? dst : newh(c);

	emit(c, R4_PLAN_LOOKUP, flags, h, base, -1, text, loc);
	r4_free(text);
	return h;
}

/* The range of components [from, upto), from the leading '/' if lead. */
static r4_loc seg_loc(const struct r4_ast *path, const struct r4_ast *from,
		      const struct r4_ast *upto, bool lead)
{
	const struct r4_ast *last = from;

	if (from == upto)
		return lead ? (r4_loc){path->loc.off, 1} : (from ? from->loc : path->loc);
	while (last->next && last->next != upto)
		last = last->next;
	return span(lead ? path->loc : from->loc, last->loc);
}

/* The object components [from, upto) name from base: base itself when
 * there are none (or the root when lead); -1 for "the current directory". */
static int32_t prefix(struct cc *c, int32_t base, const struct r4_ast *path,
		      const struct r4_ast *from, const struct r4_ast *upto, bool lead)
{
	if (from == upto && !lead)
		return base;
	return lookup(c, base, from, upto, lead, 0, -1, seg_loc(path, from, upto, lead));
}

/* A parameter block after pseudo file ps of object h (-1: the current
 * directory, "."): the new object, or the window. */
static int32_t param_block(struct cc *c, int32_t h, const struct r4_pseudo_info *ps,
			   const struct r4_ast *block, r4_loc loc, int32_t dst)
{
	const struct param *tab = params_of(ps->id);
	const struct r4_ast *set[MAX_PARAMS];
	int32_t v[MAX_PARAMS], out;
	int k[MAX_PARAMS];
	struct r4_step s = {0};

	if (!match_params(c, block, ps, tab, set))
		return dst >= 0 ? dst : newh(c);
	if (h < 0)
		h = lookup(c, -1, NULL, NULL, false, 0, -1, loc);
	for (size_t i = 0; i < MAX_PARAMS; i++) {
		v[i] = -1;
		k[i] = 0;
	}
	/* values in the order written */
	for (const struct r4_ast *g = block->kids; g; g = g->next)
		for (const struct r4_ast *m = g->kids; m; m = m->next)
			for (size_t i = 0; tab[i].name; i++) {
				if (set[i] != m)
					continue;
				if (tab[i].kind == P_CONST)
					k[i] = const_param(c, &tab[i], m);
				else if (tab[i].kind == P_REF)
					v[i] = object(c, m->b, -1);
				else
					v[i] = value(c, m->b);
			}
	for (size_t i = 0; i < MAX_PARAMS; i++)
		k[i] = k[i] < 0 ? 0 : k[i];
	out = dst >= 0 ? dst : newh(c);
	s.a = out;
	s.b = h;
	s.c = s.d = s.e = -1;
	s.off = loc.off;
	s.len = loc.len;
	switch (ps->id) {
	case R4_PSEUDO_NEW:
		s.op = R4_PLAN_CREATE;
		s.c = v[0];
		s.d = v[2];
		s.e = v[3];
		s.flags = (unsigned)k[1] | (unsigned)k[4] << 8;
		if (k[1] == R4_NEW_SYMLINK && !set[3])
			error(c, block->loc, "a symlink made by '..new' needs the parameter 'target'");
		break;
	case R4_PSEUDO_LINK:
		s.op = R4_PLAN_LINK;
		s.c = v[0];
		s.d = v[1];
		break;
	case R4_PSEUDO_RANGE:
		s.op = R4_PLAN_WINDOW;
		s.c = v[0];
		s.d = v[1];
		s.flags = (unsigned)k[2];
		if (k[2] == R4_WIN_ZERO && !set[1])
			error(c, block->loc, "a window in mode 'zero' needs the parameter 'length'");
		break;
	case R4_PSEUDO_ACL:
		s.op = R4_PLAN_RULE;
		s.a = h;
		s.b = set[0] ? v[0] : v[1];
		s.flags = (set[0] ? 0 : R4_RULE_GID) | (unsigned)k[2] << 1;
		if (!set[0] == !set[1])
			error(c, block->loc, "'..acl' takes exactly one of 'uid' and 'gid'");
		break;
	case R4_PSEUDO_AUDIT:
		s.op = R4_PLAN_AUDIT;
		s.a = h;
		s.b = v[0];
		break;
	default:
		break;
	}
	if (r4_plan_add(c->p, &s) < 0)
		c->nomem = 1;
	return out;
}

/* A scope bracket with h the object it runs in (-1: where we are). */
static int32_t scope(struct cc *c, int32_t h, const struct r4_ast *block, int mode, int32_t dst)
{
	unsigned outer = c->scope;
	int32_t r = -1;

	if (h >= 0) {
		emit(c, R4_PLAN_SCOPE, 0, h, -1, -1, NULL, block->loc);
		c->scope = ++c->nscopes;
	}
	if (mode == MODE_OBJECT)
		r = block_object(c, block, dst);
	else if (mode == MODE_VALUE)
		r = block_value(c, block);
	else
		block_yield(c, block);
	c->scope = outer;
	if (h >= 0)
		emit(c, R4_PLAN_ENDSCOPE, 0, -1, -1, -1, NULL, block->loc);
	return r;
}

/*
 * A path up to (not including) component upto, for its object.  Names
 * gather into one LOOKUP; a bracket ends the gathering: after a pseudo
 * file taking parameters it is that block (CREATE, LINK, WINDOW, ...),
 * else a scope whose single member is the object later names are looked
 * up in.  flags apply to the last LOOKUP.  With want_target, a pseudo
 * name at the end is not looked up: the object it belongs to is returned
 * and *last_ps says which pseudo file (the caller writes it); *last_ps
 * also reports a final parameter block.
 */
static int32_t path_object(struct cc *c, const struct r4_ast *path, const struct r4_ast *upto,
			   unsigned flags, int32_t dst, const struct r4_pseudo_info **last_ps,
			   bool want_target)
{
	const struct r4_ast *from = path->kids, *prev = NULL;
	const struct r4_pseudo_info *ps = NULL;
	bool lead = path->absolute, in_pseudo = false;
	int32_t base = -1;

	if (last_ps)
		*last_ps = NULL;
	for (const struct r4_ast *k = path->kids; k != upto; prev = k, k = k->next) {
		bool last = k->next == upto;

		if (is_name(k)) {
			check_component(c, k);
			if (in_pseudo && is_result_child(k)) {
				continue;
			} else if (in_pseudo && ps && ps->id == R4_PSEUDO_PLUGIN) {
				ps = NULL;	/* ..plugin/<type> */
				continue;
			} else if (in_pseudo) {
				error(c, k->loc, "pseudo file '%s' has no children",
				      ps ? ps->name : prev->bytes);
				return newh(c);
			}
			if (!is_pseudo_spelling(k))
				continue;
			if (!(ps = r4_pseudo_lookup(k->bytes, k->len))) {
				error(c, k->loc, "unknown pseudo file '%s'", k->bytes);
				return newh(c);
			}
			in_pseudo = !(ps->flags & R4_PSF_BLOCK) || !k->next || k->next == upto ||
				    k->next->kind != R4_AST_BLOCK;
			if ((ps->flags & R4_PSF_ONLY_BLOCK) && in_pseudo) {
				error(c, k->loc, "'%s' needs a parameter block: '%s/(...)'", ps->name,
				      ps->name);
				return newh(c);
			}
			if (want_target && last) {
				if (last_ps)
					*last_ps = ps;
				/* the object the pseudo file belongs to: a symlink is itself */
				int32_t h = from == k && !lead ? base
					    : lookup(c, base, from, k, lead, R4_LOOK_NOFOLLOW, -1,
						     seg_loc(path, from, k, lead));

				return h >= 0 ? h : lookup(c, -1, NULL, NULL, false, 0, dst, k->loc);
			}
			continue;
		}
		/* a bracket */
		if (in_pseudo) {
			error(c, k->loc, "pseudo file '%s' has no children", ps ? ps->name : "");
			return newh(c);
		}
		if (prev && ps && is_pseudo_spelling(prev) && (ps->flags & R4_PSF_BLOCK)) {
			int32_t h = prefix(c, base, path, from, prev, lead);

			if ((ps->flags & R4_PSF_LEAF_BLOCK) && (!last || want_target))
				error(c, k->loc, "a '%s' block has no object to look into or assign "
				      "to", ps->name);
			base = param_block(c, h, ps, k, span(path->loc, k->loc), last ? dst : -1);
			if (last_ps && last)
				*last_ps = ps;
		} else {
			base = scope(c, prefix(c, base, path, from, k, lead), k, MODE_OBJECT,
				     last ? dst : -1);
		}
		ps = NULL;
		from = k->next;
		lead = false;
	}
	if (from == upto && !lead && base >= 0)
		return base;
	return lookup(c, base, from, upto, lead, flags, dst, seg_loc(path, from, upto, lead));
}

/* Does this path name a pseudo file that cannot be read? */
static void check_readable(struct cc *c, const struct r4_ast *path)
{
	const struct r4_ast *k = path->last;

	if (k && is_pseudo_spelling(k)) {
		const struct r4_pseudo_info *ps = r4_pseudo_lookup(k->bytes, k->len);

		if (ps && !(ps->flags & R4_PSF_READ) && !(ps->flags & R4_PSF_ONLY_BLOCK))
			error(c, k->loc, "'%s' is write-only", ps->name);
	}
}

/* Does path end in a scope bracket (not a parameter block)?  Then its
 * value is that bracket's value, bytes or not. */
static bool ends_in_scope(const struct r4_ast *path)
{
	const struct r4_ast *k = path->kids, *before = NULL;

	if (!path->last || path->last->kind != R4_AST_BLOCK)
		return false;
	for (; k != path->last; k = k->next)
		before = k;
	/* after a pseudo name: a parameter block, or an error path_object reports */
	return !before || !is_pseudo_spelling(before);
}

/* The bracket at the end of such a path, in mode. */
static int32_t scoped_tail(struct cc *c, const struct r4_ast *path, int mode)
{
	int32_t h = -1;

	if (path->nkids > 1 || path->absolute)
		h = path_object(c, path, path->last, 0, -1, NULL, false);
	return scope(c, h, path->last, mode, -1);
}

static int32_t path_value(struct cc *c, const struct r4_ast *path)
{
	const struct binding *b = bound(c, path);
	int32_t h, v;

	if (b) {
		int child = result_use(c, b, path, false);

		v = newv(c);
		emit(c, R4_PLAN_RESVAL, child < 0 ? 0 : (unsigned)child, v, b->id, -1, NULL,
		     path->loc);
		return v;
	}
	if (ends_in_scope(path))
		return scoped_tail(c, path, MODE_VALUE);
	if (plain_path(path))
		record(c, path, false, path->loc);
	check_readable(c, path);
	h = path_object(c, path, NULL, 0, -1, NULL, false);
	v = newv(c);
	emit(c, R4_PLAN_READ, 0, v, h, -1, NULL, path->loc);
	return v;
}

static int32_t assign(struct cc *c, const struct r4_ast *e, int32_t dst);

/* Bytes where an object is needed (section 5.1): a type error the text shows. */
static int32_t not_object(struct cc *c, const struct r4_ast *e, const char *what)
{
	error(c, e->loc, "%s is bytes, not an object", what);
	return newh(c);
}

static int32_t object(struct cc *c, const struct r4_ast *e, int32_t dst)
{
	int32_t h, v;
	int j, j2;

	switch (e->kind) {
	case R4_AST_PATH: {
		const struct binding *b = bound(c, e);

		if (b) {
			result_use(c, b, e, false);
			error(c, e->loc, "a named result's children are bytes, not objects");
			return newh(c);
		}
		if (plain_path(e))
			record(c, e, false, e->loc);
		return path_object(c, e, NULL, 0, dst, NULL, false);
	}
	case R4_AST_ASSIGN:
		return assign(c, e, dst);
	case R4_AST_DEREF:
		if (e->a->kind == R4_AST_ASSIGN)
			error(c, e->loc, "'*' applies to this assignment's value: bracket the "
			      "dereference, '(*P) <- ...', to assign through it");
		v = value(c, e->a);
		h = dst >= 0 ? dst : newh(c);
		emit(c, R4_PLAN_DEREF, 0, h, v, -1, NULL, e->loc);
		return h;
	case R4_AST_IF:
		if (!e->c)
			return not_object(c, e, "an 'if' without 'else' (when false)");
		h = dst >= 0 ? dst : newh(c);
		v = value(c, e->a);
		j = emit(c, R4_PLAN_JUMPF, 0, v, -1, -1, NULL, e->loc);
		object(c, e->b, h);
		j2 = emit(c, R4_PLAN_JUMP, 0, -1, -1, -1, NULL, e->loc);
		land(c, j, true);
		object(c, e->c, h);
		land(c, j2, false);
		return h;
	case R4_AST_TW:
		emit(c, R4_PLAN_BEGIN, 0, -1, -1, -1, e->len ? e->bytes : NULL, e->loc);
		h = block_object(c, e->a, dst);
		emit(c, R4_PLAN_COMMIT, 0, -1, -1, -1, e->len ? e->bytes : NULL, e->loc);
		return h;
	case R4_AST_BLOCK:
		return block_object(c, e, dst);
	case R4_AST_GROUP:
		if (e->nkids == 1)
			return object(c, e->kids, dst);
		return not_object(c, e, "a ',' group");
	case R4_AST_STRING:
		return not_object(c, e, "a string");
	case R4_AST_NUMBER:
		return not_object(c, e, "a number");
	case R4_AST_CONCAT:
		return not_object(c, e, "a concatenation");
	default:
		return not_object(c, e, "a test");
	}
}

static int32_t value(struct cc *c, const struct r4_ast *e)
{
	int32_t a, b, v, h;
	int j, j2;

	switch (e->kind) {
	case R4_AST_STRING:
	case R4_AST_NUMBER:
		return konst(c, e->bytes, e->len);
	case R4_AST_PATH:
		return path_value(c, e);
	case R4_AST_CONCAT:
		a = value(c, e->a);
		b = value(c, e->b);
		v = newv(c);
		emit(c, R4_PLAN_CONCAT, 0, v, a, b, NULL, e->loc);
		return v;
	case R4_AST_CMP:
		a = value(c, e->a);
		b = value(c, e->b);
		v = newv(c);
		emit(c, R4_PLAN_TEST, (unsigned)e->op, v, a, b, NULL, e->loc);
		return v;
	case R4_AST_NOT:
		a = value(c, e->a);
		v = newv(c);
		emit(c, R4_PLAN_TEST, R4_TEST_NOT, v, a, -1, NULL, e->loc);
		return v;
	case R4_AST_AND:
	case R4_AST_OR:
		/* and: false at the first empty operand; or: true at the first non-empty */
		v = newv(c);
		a = value(c, e->a);
		j = emit(c, e->kind == R4_AST_AND ? R4_PLAN_JUMPF : R4_PLAN_JUMPT, 0, a, -1, -1,
			 NULL, e->loc);
		b = value(c, e->b);
		emit(c, R4_PLAN_TEST, R4_TEST_TRUE, v, b, -1, NULL, e->loc);
		j2 = emit(c, R4_PLAN_JUMP, 0, -1, -1, -1, NULL, e->loc);
		land(c, j, true);
		emit(c, R4_PLAN_CONST, 0, v, konst(c, "1", e->kind == R4_AST_OR), -1, NULL, e->loc);
		land(c, j2, false);
		return v;
	case R4_AST_EXIST:
		h = path_object(c, e->a, NULL, R4_LOOK_EXIST, -1, NULL, false);
		v = newv(c);
		emit(c, R4_PLAN_TEST, R4_TEST_EXIST, v, h, -1, NULL, e->loc);
		return v;
	case R4_AST_IF:
		v = newv(c);
		a = value(c, e->a);
		j = emit(c, R4_PLAN_JUMPF, 0, a, -1, -1, NULL, e->loc);
		b = value(c, e->b);
		emit(c, R4_PLAN_CONST, 0, v, b, -1, NULL, e->loc);
		j2 = emit(c, R4_PLAN_JUMP, 0, -1, -1, -1, NULL, e->loc);
		land(c, j, true);
		emit(c, R4_PLAN_CONST, 0, v, e->c ? value(c, e->c) : konst(c, "", 0), -1, NULL,
		     e->loc);
		land(c, j2, false);
		return v;
	case R4_AST_TW:
		emit(c, R4_PLAN_BEGIN, 0, -1, -1, -1, e->len ? e->bytes : NULL, e->loc);
		v = block_value(c, e->a);
		emit(c, R4_PLAN_COMMIT, 0, -1, -1, -1, e->len ? e->bytes : NULL, e->loc);
		return v;
	case R4_AST_BLOCK:
		return block_value(c, e);
	case R4_AST_ASSIGN:
	case R4_AST_DEREF:
		h = object(c, e, -1);
		v = newv(c);
		emit(c, R4_PLAN_READ, 0, v, h, -1, NULL, e->loc);
		return v;
	default:
		error(c, e->loc, "not a value");
		return -1;
	}
}

/* The target of an assignment and what it is written through. */
static int32_t assign(struct cc *c, const struct r4_ast *e, int32_t dst)
{
	const struct r4_ast *t = e->a, *named = e->c;
	const struct r4_pseudo_info *ps = NULL;
	int try_at = 0, id = -1;
	bool pseudo_target;
	int32_t v, h;

	if (named) {
		id = c->nresults++;
		char *text = join(c, named->kids, NULL, named->absolute);

		for (const struct r4_ast *k = named->kids; k; k = k->next)
			if (!is_name(k))
				error(c, k->loc, "a named result is spelled with names only");
		try_at = emit(c, R4_PLAN_TRY, 0, -1, id, -1, text, named->loc);
		r4_free(text);
	}
	/* the value first, completely (section 5.3) */
	if (e->op == R4_OP_SYMLINK && plain_path(e->b)) {
		char *text = join(c, e->b->kids, NULL, e->b->absolute);

		v = text ? konst(c, text, strlen(text)) : -1;
		r4_free(text);
	} else {
		v = value(c, e->b);
	}
	if (bound(c, t)) {
		result_use(c, bound(c, t), t, true);
		h = newh(c);
	} else {
		const struct r4_ast *lastk = t->last, *prevk = t->kids;

		while (prevk && prevk->next && prevk->next != lastk)
			prevk = prevk->next;
		if (t->nkids >= 2 && is_name(lastk) && is_pseudo_spelling(prevk) &&
		    prevk->len == 8 && !memcmp(prevk->bytes, "..plugin", 8)) {
			/* ..plugin/<type>: switch that plugin (section 6.1) */
			check_component(c, lastk);
			h = path_object(c, t, prevk, R4_LOOK_NOFOLLOW, dst, NULL, false);
			emit(c, R4_PLAN_SETATTR, R4_PSEUDO_PLUGIN, h, v, -1, lastk->bytes, e->loc);
			emit(c, R4_PLAN_RESULT, R4_PSEUDO_PLUGIN, h, id, -1, NULL, e->loc);
			goto done;
		}
		pseudo_target = lastk && is_pseudo_spelling(lastk);
		if (pseudo_target && e->op == R4_OP_SYMLINK)
			error(c, e->loc, "'->' makes a symlink: its target cannot be a pseudo file");
		h = path_object(c, t, NULL, e->op == R4_OP_SYMLINK ? R4_LOOK_MISSING |
				R4_LOOK_NOFOLLOW : R4_LOOK_CREATE, dst, &ps, true);
		if (plain_path(t))
			record(c, t, true, t->loc);
		if (ps && pseudo_target) {
			if (!(ps->flags & R4_PSF_WRITE)) {
				error(c, lastk->loc, "'%s' is read-only", ps->name);
			} else if ((ps->flags & R4_PSF_OCTAL) && e->b->kind == R4_AST_NUMBER) {
				error(c, e->b->loc, "'%s' takes octal text such as \"0644\"; #%s is the "
				      "decimal text '%s'", ps->name, e->b->bytes, e->b->bytes);
			} else if (e->op == R4_OP_APPEND && ps->id != R4_PSEUDO_BODY) {
				error(c, e->loc, "'<<-' appends to contents: '%s' can only be replaced",
				      ps->name);
			}
			enum r4_plan_op op = ps->id == R4_PSEUDO_NAME ? R4_PLAN_RENAME
					     : ps->id == R4_PSEUDO_UNLINK ? R4_PLAN_UNLINK
					     : R4_PLAN_SETATTR;
			unsigned fl = op != R4_PLAN_SETATTR ? 0 : (unsigned)ps->id |
				      (e->op == R4_OP_APPEND ? R4_SETATTR_APPEND : 0);

			emit(c, op, fl, h, v, -1, NULL, e->loc);
			emit(c, R4_PLAN_RESULT, ps->id, h, id, -1, NULL, e->loc);
			goto done;
		}
		if (ps && ps->id == R4_PSEUDO_RANGE && e->op == R4_OP_APPEND)
			error(c, e->loc, "'<<-' on a window: a window is written with '<-'");
		emit(c, e->op == R4_OP_REPLACE ? R4_PLAN_WRITE : e->op == R4_OP_APPEND
		     ? R4_PLAN_APPEND : R4_PLAN_SYMLINK, 0, h, v, -1, NULL, e->loc);
		/* windows and parameter-block targets: results only when named */
		if (!ps || id >= 0)
			emit(c, R4_PLAN_RESULT, 0, h, id, -1, NULL, e->loc);
	}
done:
	if (named) {
		int end = emit(c, R4_PLAN_ENDTRY, 0, id, -1, -1, NULL, named->loc);

		if (!c->nomem)
			c->p->steps[try_at].a = end;
		bind(c, named, id);
	}
	return h;
}

/* ================================ brackets ============================== */

/* Conflicts the text shows between members of group g (section 5.5). */
static void check_conflicts(struct cc *c, int g, size_t first)
{
	for (size_t i = first; i < c->ntouch; i++) {
		struct touch *b = &c->touch[i];

		if (b->group != g)
			continue;
		for (size_t j = first; j < i; j++) {
			struct touch *a = &c->touch[j];
			unsigned l, col;

			if (a->group != g || a->member == b->member || a->scope != b->scope ||
			    strcmp(a->text, b->text) || (!a->write && !b->write))
				continue;
			r4_diag_position(c->d, a->loc.off, &l, &col);
			error(c, b->loc, "conflict: '%s' is also %s at %u:%u", b->text,
			      a->write ? "written" : "read", l, col);
			note(c, a->loc, "the other member of the ',' group %s it here",
			     a->write ? "writes" : "reads");
			return;
		}
	}
}

/* Run a ',' group: members with conflict tracking; fn compiles each. */
static void group(struct cc *c, const struct r4_ast *g, void (*fn)(struct cc *, const struct r4_ast *))
{
	int outer_g = c->group, outer_m = c->member, id = ++c->ngroups, m = 0;
	size_t first = c->ntouch;

	emit(c, R4_PLAN_GROUP, 0, (int32_t)g->nkids, -1, -1, NULL, g->loc);
	c->group = id;
	for (const struct r4_ast *e = g->kids; e; e = e->next) {
		if (e != g->kids)
			emit(c, R4_PLAN_MEMBER, 0, -1, -1, -1, NULL, e->loc);
		c->member = ++m;
		fn(c, e);
	}
	emit(c, R4_PLAN_ENDGROUP, 0, -1, -1, -1, NULL, g->loc);
	check_conflicts(c, id, first);
	for (size_t i = first; i < c->ntouch; i++)
		r4_free(c->touch[i].text);
	c->ntouch = first;
	c->group = outer_g;
	c->member = outer_m;
}

/* A bracket's members run in order; its named results end with it. */
static size_t open_bracket(struct cc *c)
{
	return c->nbind;
}

static void close_bracket(struct cc *c, size_t mark)
{
	c->nbind = mark;
}

static void yield_group(struct cc *c, const struct r4_ast *g)
{
	if (g->nkids == 1)
		yield(c, g->kids);
	else
		group(c, g, yield);
}

static void block_yield(struct cc *c, const struct r4_ast *b)
{
	size_t mark = open_bracket(c);

	for (const struct r4_ast *g = b->kids; g; g = g->next)
		yield_group(c, g);
	close_bracket(c, mark);
}

/* The bytes of members, concatenated in source order. */
static void concat_member(struct cc *c, const struct r4_ast *e)
{
	int32_t v = value(c, e), r;

	if (c->acc == -1) {
		c->acc = v;
		return;
	}
	r = newv(c);
	emit(c, R4_PLAN_CONCAT, 0, r, c->acc, v, NULL, e->loc);
	c->acc = r;
}

static int32_t block_value(struct cc *c, const struct r4_ast *b)
{
	size_t mark = open_bracket(c);
	int32_t saved = c->acc, v;

	c->acc = -1;
	for (const struct r4_ast *g = b->kids; g; g = g->next) {
		if (g->nkids == 1)
			concat_member(c, g->kids);
		else
			group(c, g, concat_member);
	}
	v = c->acc;
	c->acc = saved;
	close_bracket(c, mark);
	return v;
}

static int32_t block_object(struct cc *c, const struct r4_ast *b, int32_t dst)
{
	size_t mark = open_bracket(c);
	int32_t h;

	if (b->nkids != 1 || b->kids->nkids != 1) {
		close_bracket(c, mark);
		return not_object(c, b, "a bracket of several members (their bytes joined)");
	}
	h = object(c, b->kids->kids, dst);
	close_bracket(c, mark);
	return h;
}

/* =============================== statements ============================= */

static void yield(struct cc *c, const struct r4_ast *e)
{
	int32_t v, h;
	int j, j2;

	switch (e->kind) {
	case R4_AST_IF:
		v = value(c, e->a);
		j = emit(c, R4_PLAN_JUMPF, 0, v, -1, -1, NULL, e->loc);
		yield(c, e->b);
		j2 = emit(c, R4_PLAN_JUMP, 0, -1, -1, -1, NULL, e->loc);
		land(c, j, true);
		if (e->c)
			yield(c, e->c);
		else
			emit(c, R4_PLAN_YIELD, 0, konst(c, "", 0), -1, -1, NULL, e->loc);
		land(c, j2, false);
		return;
	case R4_AST_TW:
		emit(c, R4_PLAN_BEGIN, 0, -1, -1, -1, e->len ? e->bytes : NULL, e->loc);
		block_yield(c, e->a);
		emit(c, R4_PLAN_COMMIT, 0, -1, -1, -1, e->len ? e->bytes : NULL, e->loc);
		return;
	case R4_AST_BLOCK:
		block_yield(c, e);
		return;
	case R4_AST_GROUP:
		yield_group(c, e);
		return;
	case R4_AST_PATH:
		if (ends_in_scope(e)) {
			scoped_tail(c, e, MODE_YIELD);
			return;
		}
		if (e->last && e->last->kind == R4_AST_BLOCK && e->nkids > 1) {
			const struct r4_ast *k = e->kids;

			while (k->next != e->last)
				k = k->next;
			/* ..acl and ..audit blocks have no object to yield */
			const struct r4_pseudo_info *ps = r4_pseudo_lookup(k->bytes, k->len);

			if (ps && (ps->flags & R4_PSF_LEAF_BLOCK)) {
				path_object(c, e, NULL, 0, -1, NULL, false);
				emit(c, R4_PLAN_YIELD, 0, konst(c, "", 0), -1, -1, NULL, e->loc);
				return;
			}
		}
		if (bound(c, e)) {
			emit(c, R4_PLAN_YIELD, 0, value(c, e), -1, -1, NULL, e->loc);
			return;
		}
		check_readable(c, e);
		h = object(c, e, -1);
		emit(c, R4_PLAN_YIELD, R4_YIELD_H, h, -1, -1, NULL, e->loc);
		return;
	case R4_AST_ASSIGN:
	case R4_AST_DEREF:
		h = object(c, e, -1);
		emit(c, R4_PLAN_YIELD, R4_YIELD_H, h, -1, -1, NULL, e->loc);
		return;
	default:
		v = value(c, e);
		emit(c, R4_PLAN_YIELD, 0, v, -1, -1, NULL, e->loc);
		return;
	}
}

/* A unit: BEGIN, its statements, COMMIT.  A unit that is one tw group
 * carries that group's label instead of a second pair of marks. */
static void unit(struct cc *c, const struct r4_ast *first, const struct r4_ast *upto)
{
	const struct r4_ast *only = first->next == upto && first->nkids == 1 ? first->kids : NULL;
	r4_loc loc = first->loc;
	const char *label = NULL;

	for (const struct r4_ast *s = first; s != upto; s = s->next)
		loc = span(first->loc, s->loc);
	if (only && only->kind == R4_AST_TW) {
		label = only->len ? only->bytes : NULL;
		emit(c, R4_PLAN_BEGIN, R4_PLAN_UNIT, -1, -1, -1, label, loc);
		block_yield(c, only->a);
	} else {
		emit(c, R4_PLAN_BEGIN, R4_PLAN_UNIT, -1, -1, -1, NULL, loc);
		for (const struct r4_ast *s = first; s && s != upto; s = s->next)
			yield(c, s);
	}
	emit(c, R4_PLAN_COMMIT, R4_PLAN_UNIT, -1, -1, -1, label, loc);
	c->p->units++;
	c->nbind = 0;			/* named results end with their unit */
}

int r4_compile(const r4_ast *ast, const struct r4_compile_opts *o, r4_diags *d,
	       struct r4_plan **out)
{
	struct cc c = {.d = d, .scope = 1, .nscopes = 1};
	size_t before = r4_diag_errors(d);
	int rc = 0;

	if (!(c.p = r4_plan_new()))
		return -ENOMEM;
	if (ast->kids) {
		if (o && o->per_statement) {
			for (const struct r4_ast *s = ast->kids; s; s = s->next)
				unit(&c, s, s->next);
		} else {
			unit(&c, ast->kids, NULL);
		}
	}
	for (size_t i = 0; i < c.ntouch; i++)
		r4_free(c.touch[i].text);
	r4_free(c.touch);
	r4_free(c.bind);
	if (c.nomem)
		rc = -ENOMEM;
	else if (r4_diag_errors(d) > before)
		rc = -EINVAL;
	if (rc) {
		r4_plan_free(c.p);
		return rc;
	}
	*out = c.p;
	return 0;
}
