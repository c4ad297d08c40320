/*
 * diag.c - diagnostics: a list per source text, a line map built when
 * first needed, and the caret printing of LANGUAGE.md section 8.
 */
#include <errno.h>
#include <stdarg.h>
#include <string.h>

#include "diag.h"
#include "r4.h"

struct r4_diags {
	char *name;
	const char *src;
	size_t len;
	struct r4_diag *v;
	size_t n, cap, errors;
	uint32_t *lines;		/* offset of each line's first byte */
	size_t nlines;
	unsigned first_line;		/* the number of src's first line, less one */
	char *owned;			/* src, when the list owns it (r4_run) */
};

r4_diags *r4_diag_new(const char *name, const char *src, size_t len)
{
	r4_diags *d = r4_calloc(1, sizeof(*d));

	if (!d || !(d->name = r4_memdup(name, strlen(name)))) {
		r4_free(d);
		return NULL;
	}
	d->src = src;
	d->len = len;
	return d;
}

void r4_diag_free(r4_diags *d)
{
	if (!d)
		return;
	for (size_t i = 0; i < d->n; i++)
		r4_free(d->v[i].msg);
	r4_free(d->v);
	r4_free(d->lines);
	r4_free(d->name);
	r4_free(d->owned);
	r4_free(d);
}

const char *r4_diag_text(const r4_diags *d)
{
	return d->src;
}

void r4_diag_own_source(r4_diags *d, char *src)
{
	d->owned = src;
}

void r4_diag_first_line(r4_diags *d, unsigned line)
{
	d->first_line = line ? line - 1 : 0;
}

size_t r4_diag_count(const r4_diags *d)
{
	return d->n;
}

size_t r4_diag_errors(const r4_diags *d)
{
	return d->errors;
}

const struct r4_diag *r4_diag_get(const r4_diags *d, size_t i)
{
	return i < d->n ? &d->v[i] : NULL;
}

int r4_diag_addv(r4_diags *d, enum r4_diag_sev sev, r4_loc loc, const char *fmt, va_list ap)
{
	char buf[512];
	int n;

	if (r4_grow(&d->v, &d->cap, d->n + 1, sizeof(*d->v), 8))
		return -ENOMEM;
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	if (n < 0)
		n = 0;
	if (!(d->v[d->n].msg = r4_memdup(buf, strlen(buf))))
		return -ENOMEM;
	d->v[d->n].sev = sev;
	d->v[d->n].loc = loc;
	d->n++;
	d->errors += sev == R4_DIAG_ERROR;
	return 0;
}

int r4_diag_add(r4_diags *d, enum r4_diag_sev sev, r4_loc loc, const char *fmt, ...)
{
	va_list ap;
	int rc;

	va_start(ap, fmt);
	rc = r4_diag_addv(d, sev, loc, fmt, ap);
	va_end(ap);
	return rc;
}

static int line_map(r4_diags *d)
{
	size_t n = 1;

	if (d->lines)
		return 0;
	for (size_t i = 0; i < d->len; i++)
		n += d->src[i] == '\n';
	if (!(d->lines = r4_malloc(n * sizeof(*d->lines))))
		return -ENOMEM;
	d->lines[0] = 0;
	d->nlines = 1;
	for (size_t i = 0; i < d->len; i++)
		if (d->src[i] == '\n')
			d->lines[d->nlines++] = (uint32_t)(i + 1);
	return 0;
}

/* The line holding off (0-based), by binary search. */
static size_t line_of(const r4_diags *d, uint32_t off)
{
	size_t lo = 0, hi = d->nlines;

	while (hi - lo > 1) {
		size_t mid = (lo + hi) / 2;

		if (d->lines[mid] <= off)
			lo = mid;
		else
			hi = mid;
	}
	return lo;
}

void r4_diag_position(const r4_diags *d, uint32_t off, unsigned *line, unsigned *col)
{
	size_t l;

	if (line_map((r4_diags *)d)) {
		*line = *col = 0;
		return;
	}
	l = line_of(d, off);
	*line = d->first_line + (unsigned)l + 1;
	*col = off - d->lines[l] + 1;
}

static void print_one(const r4_diags *d, const struct r4_diag *g, FILE *f)
{
	uint32_t off = g->loc.off > d->len ? (uint32_t)d->len : g->loc.off;
	size_t l = line_of(d, off);
	uint32_t start = d->lines[l], end = start;

	while (end < d->len && d->src[end] != '\n')
		end++;
	fprintf(f, "%s:%zu:%u: %s: %s\n", d->name, d->first_line + l + 1, off - start + 1,
		g->sev == R4_DIAG_ERROR ? "error" : "note", g->msg);
	fwrite(d->src + start, 1, end - start, f);
	fputc('\n', f);
	for (uint32_t i = start; i < off; i++)
		fputc(d->src[i] == '\t' ? '\t' : ' ', f);
	fputc('^', f);
	/* '~' under the rest of the range, up to the end of this line */
	for (uint32_t i = off + 1; i < off + g->loc.len && i < end; i++)
		fputc(d->src[i] == '\t' ? '\t' : '~', f);
	fputc('\n', f);
}

int r4_diag_print(const r4_diags *d, FILE *f)
{
	if (line_map((r4_diags *)d))
		return -ENOMEM;
	for (size_t i = 0; i < d->n; i++)
		print_one(d, &d->v[i], f);
	return ferror(f) ? -EIO : 0;
}
