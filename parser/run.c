/*
 * run.c - r4_run, the one call embedders use: a command string in, its
 * values and diagnostics out (the shell, the batch runner and the FUSE
 * control file all come through here).
 */
#include <assert.h>
#include <errno.h>
#include <string.h>

#include "diag.h"
#include "r4_lang.h"

struct collect {
	struct r4_run *r;
	const struct r4_exec_opts *user;
	size_t cap;			/* of r->values */
	bool drop;			/* r4_run_opts.drop_values */
};

static int collect(void *ctx, const struct r4_value *v)
{
	struct collect *c = ctx;
	struct r4_run *r = c->r;
	struct r4_run_value *o;

	if (c->drop)
		return c->user->yield ? c->user->yield(c->user->ctx, v) : 0;
	if (r4_grow(&r->values, &c->cap, r->nvalues + 1, sizeof(*r->values), 16))
		return -ENOMEM;
	o = &r->values[r->nvalues];
	*o = (struct r4_run_value){v->off, v->len, NULL, NULL, v->size, v->err, NULL};
	if (!(o->bytes = r4_memdup(v->bytes, v->size)) ||
	    (v->path && !(o->path = r4_memdup(v->path, strlen(v->path)))) ||
	    (v->why && v->why[0] && !(o->why = r4_memdup(v->why, strlen(v->why))))) {
		r4_free(o->bytes);
		r4_free(o->path);
		return -ENOMEM;
	}
	r->nvalues++;
	return c->user->yield ? c->user->yield(c->user->ctx, v) : 0;
}

static bool word_byte(unsigned char b)
{
	return b > 0x20 && b != 0x7f && !strchr("/\\()[]{}<>;,+*\"'`#", b);
}

/*
 * A path that did not resolve: the range from the start of the step's
 * range through component comp (LANGUAGE.md 5.2: "the path up to and
 * including the first missing component").  The range holds names (words,
 * `quoted' names), '/' and whitespace only.
 */
static r4_loc narrow(const char *src, r4_loc loc, int comp)
{
	size_t i = loc.off, end = (size_t)loc.off + loc.len;
	int k = -1;

	while (i < end) {
		unsigned char b = (unsigned char)src[i];

		if (b == '/' || b == ' ' || b == '\t' || b == '\r' || b == '\n') {
			i++;
			continue;
		}
		k++;
		if (b == '`') {
			int depth = 0;

			do {
				depth += src[i] == '`' ? 1 : src[i] == '\'' ? -1 : 0;
				i++;
			} while (i < end && depth > 0);
		} else {
			while (i < end && (word_byte((unsigned char)src[i]) || src[i] == '-'))
				i++;
		}
		if (k == comp)
			return (r4_loc){loc.off, (uint32_t)(i - loc.off)};
	}
	return loc;
}

static int runtime_diag(struct r4_run *r, const char *src, const struct r4_plan *p,
			const struct r4_exec_error *e)
{
	r4_loc loc = {e->off, e->len};
	int rc;

	if (e->comp >= 0 && e->step < p->nsteps && p->steps[e->step].op == R4_PLAN_LOOKUP)
		loc = narrow(src, loc, e->comp);
	if ((rc = r4_diag_add(r->diags, R4_DIAG_ERROR, loc, "%s", e->msg[0] ? e->msg :
			      r4_strerror(e->rc))))
		return rc;
	if (e->note_step >= 0 && (size_t)e->note_step < p->nsteps) {
		const struct r4_step *s = &p->steps[e->note_step];

		rc = r4_diag_add(r->diags, R4_DIAG_NOTE, (r4_loc){s->off, s->len}, "%s", e->note);
	}
	return rc;
}

static const struct r4_run_opts run_defaults = {.exec = {.who = {.umask = 022}}};

int r4_run_prepare(const char *src, size_t len, const struct r4_run_opts *o,
		   struct r4_run **out)
{
	struct r4_compile_opts co = {0};
	r4_ast *ast = NULL;
	struct r4_run *r;
	char *copy;
	int rc;

	if (!o)
		o = &run_defaults;
	if (!(r = r4_calloc(1, sizeof(*r))) || !(copy = r4_malloc(len + 1))) {
		r4_free(r);
		return -ENOMEM;
	}
	memcpy(copy, src, len);
	copy[len] = 0;
	/* the diagnostics borrow the text: the run owns this copy (diags[0]) */
	if (!(r->diags = r4_diag_new(o->name ? o->name : "<command>", copy, len))) {
		r4_free(copy);
		r4_free(r);
		return -ENOMEM;
	}
	r4_diag_own_source(r->diags, copy);
	r4_diag_first_line(r->diags, o->first_line);
	*out = r;
	co.per_statement = o->per_statement;
	if ((rc = r4_parse(copy, len, r->diags, &ast))) {
		r->stage = R4_RUN_SYNTAX;
		return r->rc = rc;
	}
	/* the tree goes before the run, which can use its memory */
	rc = r4_compile(ast, &co, r->diags, &r->plan);
	r4_ast_free(ast);
	if (rc) {
		r->stage = R4_RUN_CHECK;
		return r->rc = rc;
	}
	return 0;
}

int r4_run_exec(r4_db *db, struct r4_run *r, const struct r4_run_opts *o)
{
	struct r4_exec_opts xo;
	struct r4_exec_error e;
	struct collect c;
	int rc;

	assert(r->plan && r->stage == R4_RUN_OK && !r->rc);
	if (!o)
		o = &run_defaults;
	xo = o->exec;
	c = (struct collect){r, &o->exec, 0, o->drop_values};
	/* (values nobody keeps are not made) */
	xo.yield = o->drop_values && !o->exec.yield ? NULL : collect;
	xo.ctx = &c;
	rc = r4_exec(db, r->plan, &xo, &e);
	r->units = e.units;
	if (rc) {
		r->stage = R4_RUN_RUNTIME;
		if (runtime_diag(r, r4_diag_text(r->diags), r->plan, &e))
			rc = -ENOMEM;
	}
	r4_plan_free(r->plan);
	r->plan = NULL;
	return r->rc = rc;
}

int r4_run(r4_db *db, const char *src, size_t len, const struct r4_run_opts *o,
	   struct r4_run **out)
{
	int rc = r4_run_prepare(src, len, o, out);

	return rc || !*out ? rc : r4_run_exec(db, *out, o);
}

void r4_run_free(struct r4_run *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->nvalues; i++) {
		r4_free(r->values[i].path);
		r4_free(r->values[i].bytes);
		r4_free(r->values[i].why);
	}
	r4_free(r->values);
	r4_plan_free(r->plan);
	r4_diag_free(r->diags);
	r4_free(r);
}

char *r4_path_quote(const char *path)
{
	size_t n = strlen(path);
	char *s = r4_malloc(n * 3 + 4), *o = s;
	const char *p = path;

	if (!s)
		return NULL;
	if (*p == '/')
		*o++ = '/';
	while (*p) {
		const char *e;

		while (*p == '/')
			p++;
		if (!*p)
			break;
		for (e = p; *e && *e != '/'; e++)
			;
		if (o > s && o[-1] != '/')
			*o++ = '/';
		/* a `quoted' name keeps every byte; its quotes must balance */
		*o++ = '`';
		memcpy(o, p, (size_t)(e - p));
		o += e - p;
		*o++ = '\'';
		p = e;
	}
	if (o == s)
		*o++ = '.';
	*o = 0;
	return s;
}
