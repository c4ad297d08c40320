/*
 * aggr.c - aggregates (LANGUAGE.md section 7): a directory that is also
 * read and written as text, like /etc/passwd.
 *
 * On disk an aggregate is a plain dir40 directory whose meta record
 * (meta.c) says "aggregate passwd" (or colon) and lists its records'
 * object ids in order; each record is a subdirectory named after its first
 * field, holding one regular file per field.  Everything else follows
 * from the files: their owners, modes and access rules are the fields'.
 *
 * Reading builds the text as the reader may see it (a field it cannot
 * read is empty); writing parses the whole text first (nothing changes on
 * EINVAL), then makes the records match, touching only what differs, each
 * change checked for the writer.  The caller's transaction makes it all
 * or nothing.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "db.h"
#include "obj.h"

static const char *const passwd_fields[] = {"name", "passwd", "uid", "gid", "gecos", "home",
					    "shell"};
#define NPASSWD 7

struct field {
	const char *p;
	size_t n;
};

struct rec {			/* a record of the text */
	struct field *f;
	size_t nf;
};

struct old {			/* a record on disk */
	char *name;
	uint64_t ino;
	size_t rank;		/* position in the stored order (SIZE_MAX: not listed) */
	size_t seq;		/* readdir position */
	bool keep;
};

struct olds {
	struct old *v;
	size_t n, cap;
	int rc;
};

static void field_name(unsigned format, size_t i, char *out, size_t n)
{
	if (format == R4_FORMAT_PASSWD)
		snprintf(out, n, "%s", passwd_fields[i]);
	else
		snprintf(out, n, "%zu", i + 1);
}

static bool valid_name(const char *p, size_t n)
{
	return n && n <= R4_NAME_MAX && !memchr(p, '/', n) && !memchr(p, 0, n) &&
	       !(p[0] == '.' && (n == 1 || p[1] == '.'));
}

/* A uid or gid: decimal, 0 to 4294967294 ((uid_t)-1 means "no id" to
 * chown(2), so no account has it). */
static bool valid_id(const char *p, size_t n)
{
	uint64_t v = 0;

	if (!n || n > 10)
		return false;
	for (size_t i = 0; i < n; i++) {
		if (p[i] < '0' || p[i] > '9')
			return false;
		v = v * 10 + (uint64_t)(p[i] - '0');
	}
	return v <= 4294967294u;
}

/* One rule for a field's value, in a whole text or written alone: no byte
 * that would end the field or its line, and a passwd uid or gid a number.
 * field is the field's file name (field_name's). */
int r4_aggr_field_check(unsigned format, const char *field, const char *p, size_t n, char *why,
			size_t wn)
{
	if (memchr(p, ':', n) || memchr(p, '\n', n) || memchr(p, 0, n)) {
		snprintf(why, wn, "a field holds no ':', line feed or NUL");
		return -EINVAL;
	}
	if (format == R4_FORMAT_PASSWD && (!strcmp(field, "uid") || !strcmp(field, "gid")) &&
	    !valid_id(p, n)) {
		snprintf(why, wn, "%s '%.*s' is not a number from 0 to 4294967294", field,
			 (int)R4_MIN(n, 64), p);
		return -EINVAL;
	}
	return 0;
}

/* ---- the records on disk ---- */

static int old_fn(void *ctx, const char *name, size_t len, uint64_t ino, uint32_t type)
{
	struct olds *o = ctx;

	if (type != S_IFDIR || (name[0] == '.' && (len == 1 || (len == 2 && name[1] == '.'))))
		return 0;	/* only directories are records */
	if (r4_grow(&o->v, &o->cap, o->n + 1, sizeof(*o->v), 16) ||
	    !(o->v[o->n].name = r4_memdup(name, len))) {
		o->rc = -ENOMEM;
		return 1;
	}
	o->v[o->n].ino = ino;
	o->v[o->n].seq = o->n;
	o->v[o->n].keep = false;
	o->n++;
	return 0;
}

static int by_rank(const void *a, const void *b)
{
	const struct old *x = a, *y = b;

	if (x->rank != y->rank)
		return x->rank < y->rank ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static void olds_free(struct olds *o)
{
	for (size_t i = 0; i < o->n; i++)
		r4_free(o->v[i].name);
	r4_free(o->v);
}

/* The aggregate's records in stored order (those the order does not list
 * last, in directory order). */
static int load_olds(struct r4_db *db, const char *path, const struct r4_meta *m, struct olds *o)
{
	struct r4_dirpos pos = {0};
	int rc;

	memset(o, 0, sizeof(*o));
	if ((rc = r4_readdir(db, path, &pos, old_fn, o)) || (rc = o->rc)) {
		olds_free(o);
		return rc;
	}
	for (size_t i = 0; i < o->n; i++) {
		o->v[i].rank = SIZE_MAX;
		for (size_t k = 0; k < m->norder; k++)
			if (m->order[k] == o->v[i].ino) {
				o->v[i].rank = k;
				break;
			}
	}
	if (o->n)
		qsort(o->v, o->n, sizeof(*o->v), by_rank);
	return 0;
}

/* ---- reading ---- */

/* A field's value as who sees it: empty when it may not read it. */
static int read_field(struct r4_db *db, const struct r4_ident *who, const char *path,
		      struct r4_buf *b)
{
	struct r4_stat st;
	size_t got;
	char *s;
	int rc;

	if ((rc = r4_stat(db, path, &st)))
		return rc == -ENOENT ? 0 : rc;
	if (!S_ISREG(st.mode) || (who && !r4_allows(db, who, &st, 4)) || !st.size)
		return 0;
	if (st.size > 1u << 20)
		return -EFBIG;
	if (!(s = r4_malloc((size_t)st.size)))
		return -ENOMEM;
	if (!(rc = r4_read(db, path, 0, s, (size_t)st.size, &got)))
		rc = r4_buf_add(b, s, got);
	r4_free(s);
	return rc;
}

/* The number of fields a colon record has: files 1, 2, ... */
static size_t colon_count(struct r4_db *db, const char *rec)
{
	struct r4_stat st;
	size_t n = 0;

	for (;;) {
		char name[24], *p;
		int rc;

		snprintf(name, sizeof(name), "%zu", n + 1);
		if (!(p = r4_path_join(rec, name, strlen(name))))
			break;
		rc = r4_stat(db, p, &st);
		r4_free(p);
		if (rc || !S_ISREG(st.mode))
			break;
		n++;
	}
	return n ? n : 1;
}

static int record_line(struct r4_db *db, const struct r4_ident *who, unsigned format,
		       const char *agg, const char *name, struct r4_buf *b)
{
	char *rec = r4_path_join(agg, name, strlen(name));
	struct r4_stat st;
	size_t nf;
	int rc = 0;

	if (!rec)
		return -ENOMEM;
	if ((rc = r4_stat(db, rec, &st)))
		goto out;
	nf = format == R4_FORMAT_PASSWD ? NPASSWD : colon_count(db, rec);
	bool search = !who || r4_allows(db, who, &st, 1);

	for (size_t i = 0; i < nf && !rc; i++) {
		char fname[24], *fp;

		if (i && (rc = r4_buf_add(b, ":", 1)))
			break;
		if (i == 0) {	/* the name is the directory's */
			rc = r4_buf_add(b, name, strlen(name));
			continue;
		}
		if (!search)
			continue;
		field_name(format, i, fname, sizeof(fname));
		if (!(fp = r4_path_join(rec, fname, strlen(fname)))) {
			rc = -ENOMEM;
			break;
		}
		rc = read_field(db, who, fp, b);
		r4_free(fp);
	}
	if (!rc)
		rc = r4_buf_add(b, "\n", 1);
out:
	r4_free(rec);
	return rc;
}

int r4_aggr_text(struct r4_db *db, const struct r4_ident *who, const char *path,
		 const char *record, char **out, size_t *len)
{
	struct r4_buf b = {0};
	struct r4_meta m;
	struct olds o;
	int rc;

	*out = NULL;
	*len = 0;
	if ((rc = r4_meta_get(db, r4_aggr_ino(db, path), &m)))
		return rc;
	if (m.kind != R4_META_AGGREGATE) {
		r4_meta_fini(&m);
		return -EINVAL;
	}
	if (record) {
		rc = record_line(db, who, m.format, path, record, &b);
	} else if (!(rc = load_olds(db, path, &m, &o))) {
		for (size_t i = 0; i < o.n && !rc; i++)
			rc = record_line(db, who, m.format, path, o.v[i].name, &b);
		olds_free(&o);
	}
	r4_meta_fini(&m);
	if (!rc && !b.p)
		rc = r4_buf_add(&b, "", 0);
	if (rc) {
		r4_free(b.p);
		return rc;
	}
	*out = (char *)b.p;
	*len = b.len;
	return 0;
}

uint64_t r4_aggr_ino(struct r4_db *db, const char *path)
{
	struct r4_stat st;

	return r4_stat(db, path, &st) ? 0 : st.ino;
}

/* What an object at path is to the aggregates: R4_ROLE_*. */
unsigned r4_aggr_role(struct r4_db *db, const char *path, const struct r4_stat *st,
		      unsigned *format)
{
	char *p;
	unsigned role = R4_ROLE_NONE, k;
	struct r4_stat up;

	if (!r4_meta_present(db))
		return R4_ROLE_NONE;
	if (S_ISDIR(st->mode) && r4_meta_kind(db, st->ino, format) == R4_META_AGGREGATE)
		return R4_ROLE_AGGREGATE;
	if (!strcmp(path, "/") || !(p = r4_memdup(path, strlen(path))))
		return R4_ROLE_NONE;
	for (int level = 0; level < 2; level++) {
		char *s = strrchr(p, '/');

		if (!s)
			break;
		if (s == p)
			s[1] = 0;
		else
			*s = 0;
		if (r4_stat(db, p, &up) || !S_ISDIR(up.mode))
			break;
		k = r4_meta_kind(db, up.ino, format);
		if (k == R4_META_AGGREGATE) {
			if (level == 0 && S_ISDIR(st->mode))
				role = R4_ROLE_RECORD;
			else if (level == 1 && S_ISREG(st->mode))
				role = R4_ROLE_FIELD;
			break;
		}
		if (level == 0 && (S_ISDIR(st->mode) || !strcmp(p, "/")))
			break;
	}
	r4_free(p);
	return role;
}

/* ---- writing ---- */

static void set_msg(char *why, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static void set_msg(char *why, size_t n, const char *fmt, ...)
{
	va_list ap;

	if (!why || !n || why[0])
		return;
	va_start(ap, fmt);
	vsnprintf(why, n, fmt, ap);
	va_end(ap);
}

/* Parse text into records (borrowing its bytes); EINVAL for a line of the
 * wrong shape. */
static int parse_text(unsigned format, const uint8_t *p, size_t n, struct rec **out, size_t *nout,
		      char *why, size_t wn)
{
	struct rec *v = NULL;
	size_t nv = 0, cap = 0, line = 0;
	int rc = 0;

	while (n && !rc) {
		const uint8_t *lf = memchr(p, '\n', n);
		size_t k = lf ? (size_t)(lf - p) : n;
		struct rec r = {0};
		size_t nf = 1;

		line++;
		if (memchr(p, 0, k)) {
			set_msg(why, wn, "line %zu holds a NUL byte", line);
			rc = -EINVAL;
			break;
		}
		for (size_t i = 0; i < k; i++)
			nf += p[i] == ':';
		if (format == R4_FORMAT_PASSWD && nf != NPASSWD) {
			set_msg(why, wn, "line %zu has %zu fields, a passwd record has %d", line, nf,
				NPASSWD);
			rc = -EINVAL;
			break;
		}
		if (r4_grow(&v, &cap, nv + 1, sizeof(*v), 16) ||
		    !(r.f = r4_calloc(nf, sizeof(*r.f)))) {
			rc = -ENOMEM;
			break;
		}
		r.nf = nf;
		size_t at = 0, fi = 0;

		for (size_t i = 0; i <= k; i++)
			if (i == k || p[i] == ':') {
				r.f[fi++] = (struct field){(const char *)p + at, i - at};
				at = i + 1;
			}
		v[nv++] = r;
		if (!valid_name(r.f[0].p, r.f[0].n)) {
			set_msg(why, wn, "line %zu: '%.*s' cannot name a record", line,
				(int)R4_MIN(r.f[0].n, 64), r.f[0].p);
			rc = -EINVAL;
			break;
		}
		for (size_t i = 1; i < nf && !rc; i++) {
			char fname[24], bad[160];

			field_name(format, i, fname, sizeof(fname));
			if ((rc = r4_aggr_field_check(format, fname, r.f[i].p, r.f[i].n, bad,
						      sizeof(bad))))
				set_msg(why, wn, "line %zu: %s", line, bad);
		}
		if (rc)
			break;
		for (size_t j = 0; j + 1 < nv; j++)
			if (v[j].f[0].n == r.f[0].n && !memcmp(v[j].f[0].p, r.f[0].p, r.f[0].n)) {
				set_msg(why, wn, "line %zu: record '%.*s' appears twice", line,
					(int)R4_MIN(r.f[0].n, 64), r.f[0].p);
				rc = -EINVAL;
				break;
			}
		p += k + (lf != NULL);
		n -= k + (lf != NULL);
	}
	if (rc) {
		for (size_t i = 0; i < nv; i++)
			r4_free(v[i].f);
		r4_free(v);
		return rc;
	}
	*out = v;
	*nout = nv;
	return 0;
}

static void recs_free(struct rec *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		r4_free(v[i].f);
	r4_free(v);
}

static int put_file(struct r4_db *db, const char *path, const char *p, size_t n, uint64_t old)
{
	int rc = n ? r4_write(db, path, 0, p, n) : 0;

	if (!rc && old > n)
		rc = r4_truncate(db, path, n);
	return rc;
}

/* Remove a directory and what it holds (records hold files only; a
 * directory inside one is removed with its contents too). */
int r4_aggr_rmtree(struct r4_db *db, const char *path)
{
	char **v;
	size_t n;
	int rc;

	if ((rc = r4_fs_names(db, path, &v, &n)))
		return rc;
	for (size_t i = 0; i < n && !rc; i++) {
		char *p = r4_path_join(path, v[i], strlen(v[i]));
		struct r4_stat st;

		if (!p) {
			rc = -ENOMEM;
			break;
		}
		if (!(rc = r4_stat(db, p, &st)))
			rc = S_ISDIR(st.mode) ? r4_aggr_rmtree(db, p) : r4_unlink(db, p);
		r4_free(p);
	}
	if (!rc)
		rc = r4_rmdir(db, path);
	r4_fs_names_free(v, n);
	return rc;
}

/* Make one record's fields match r (a new record when `fresh`); dry:
 * only check that who may (a new record needs nothing more). */
static int apply_record(struct r4_db *db, const struct r4_ident *who, unsigned format,
			const char *agg, const struct r4_stat *ast, const struct rec *r, bool fresh,
			bool dry, char *why, size_t wn)
{
	char *rec = r4_path_join(agg, r->f[0].p, r->f[0].n);
	struct r4_stat rst;
	size_t had = 0;
	int rc = 0;

	if (!rec)
		return -ENOMEM;
	if (fresh && dry)
		goto out;
	if (fresh) {
		if ((rc = r4_mkdir(db, rec, 0755, ast->uid, ast->gid)))
			goto out;
	} else if (format == R4_FORMAT_COLON) {
		had = colon_count(db, rec);
	}
	if ((rc = r4_stat(db, rec, &rst)))
		goto out;
	for (size_t i = 0; i < r->nf && !rc; i++) {
		char fname[24], *fp;
		struct r4_stat fst;
		struct r4_buf cur = {0};

		field_name(format, i, fname, sizeof(fname));
		if (!(fp = r4_path_join(rec, fname, strlen(fname)))) {
			rc = -ENOMEM;
			break;
		}
		rc = fresh ? -ENOENT : r4_stat(db, fp, &fst);
		if (rc == -ENOENT) {
			/* a new field file, owned like the aggregate */
			if (!fresh && who && !r4_allows(db, who, &rst, 3)) {
				set_msg(why, wn, "cannot add field '%s' to '%s'", fname, rec);
				rc = -EACCES;
			} else if (dry) {
				rc = 0;
			} else if (!(rc = r4_create(db, fp, 0644, ast->uid, ast->gid))) {
				rc = put_file(db, fp, r->f[i].p, r->f[i].n, 0);
			}
		} else if (!rc) {
			bool readable = !who || r4_allows(db, who, &fst, 4);

			if (!(rc = read_field(db, NULL, fp, &cur)) &&
			    !(cur.len == r->f[i].n && (!cur.len || !memcmp(cur.p, r->f[i].p, cur.len))) &&
			    !(!r->f[i].n && !readable)) {
				if (who && !r4_allows(db, who, &fst, 2)) {
					set_msg(why, wn, "cannot write '%s'", fp);
					rc = -EACCES;
				} else if (!dry) {
					rc = put_file(db, fp, r->f[i].p, r->f[i].n, fst.size);
				}
			}
			r4_free(cur.p);
		}
		if (rc && why && !why[0])
			set_msg(why, wn, "cannot write '%s'", fp);
		r4_free(fp);
	}
	/* a colon record that lost fields */
	for (size_t i = r->nf; i < had && !rc; i++) {
		char fname[24], *fp;

		field_name(format, i, fname, sizeof(fname));
		if (!(fp = r4_path_join(rec, fname, strlen(fname)))) {
			rc = -ENOMEM;
			break;
		}
		if (who && !r4_allows(db, who, &rst, 3)) {
			set_msg(why, wn, "cannot remove field '%s' of '%s'", fname, rec);
			rc = -EACCES;
		} else if (!dry) {
			rc = r4_unlink(db, fp);
		}
		r4_free(fp);
	}
out:
	r4_free(rec);
	return rc;
}

int r4_aggr_check(r4_db *db, const char *path, const void *text, size_t n)
{
	const uint8_t *p = text, *lf = n ? memrchr(p, '\n', n) : NULL;
	struct r4_stat st;
	struct r4_meta m;
	struct rec *v = NULL;
	size_t nv = 0;
	int rc = 0;

	/* a line is judged alone, so lines that are whole never get better:
	 * what follows cannot make them valid */
	if (!lf || r4_stat(db, path, &st) || r4_meta_get(db, st.ino, &m))
		return 0;
	if (m.kind == R4_META_AGGREGATE &&
	    !(rc = parse_text(m.format, p, (size_t)(lf - p) + 1, &v, &nv, NULL, 0)))
		recs_free(v, nv);
	r4_meta_fini(&m);
	return rc;
}

/* r4_aggr_write's work; dry: every check, no change. */
static int aggr_apply(struct r4_db *db, const struct r4_ident *who, const char *path,
		      const uint8_t *p, size_t n, bool append, bool dry, char *why, size_t wn)
{
	struct r4_stat ast;
	struct r4_meta m;
	struct olds o = {0};
	struct rec *v = NULL;
	size_t nv = 0;
	uint64_t *order = NULL;
	size_t norder = 0;
	bool entries_ok;
	int rc;

	if (why && wn)
		why[0] = 0;
	if ((rc = r4_stat(db, path, &ast)) || (rc = r4_meta_get(db, ast.ino, &m)))
		return rc;
	if (m.kind != R4_META_AGGREGATE) {
		r4_meta_fini(&m);
		return -EINVAL;
	}
	if ((rc = parse_text(m.format, p, n, &v, &nv, why, wn)) ||
	    (rc = load_olds(db, path, &m, &o)))
		goto out;
	entries_ok = !who || r4_allows(db, who, &ast, 3);
	/* which old records stay */
	for (size_t i = 0; i < nv; i++)
		for (size_t k = 0; k < o.n; k++)
			if (strlen(o.v[k].name) == v[i].f[0].n &&
			    !memcmp(o.v[k].name, v[i].f[0].p, v[i].f[0].n)) {
				if (append) {
					set_msg(why, wn, "record '%s' exists already", o.v[k].name);
					rc = -EINVAL;
					goto out;
				}
				o.v[k].keep = true;
			}
	if (!(order = r4_calloc(o.n + nv + 1, sizeof(*order)))) {
		rc = -ENOMEM;
		goto out;
	}
	for (size_t k = 0; k < o.n; k++) {
		if (o.v[k].keep || append) {
			if (append)
				order[norder++] = o.v[k].ino;
			continue;
		}
		char *rp = r4_path_join(path, o.v[k].name, strlen(o.v[k].name));

		if (!rp) {
			rc = -ENOMEM;
			goto out;
		}
		if (!entries_ok) {
			set_msg(why, wn, "cannot remove record '%s'", rp);
			rc = -EACCES;
		} else if (!dry) {
			rc = r4_aggr_rmtree(db, rp);
		}
		r4_free(rp);
		if (rc)
			goto out;
	}
	for (size_t i = 0; i < nv && !rc; i++) {
		bool fresh = true;
		char *rp;
		struct r4_stat rst;

		for (size_t k = 0; k < o.n; k++)
			if (o.v[k].keep && strlen(o.v[k].name) == v[i].f[0].n &&
			    !memcmp(o.v[k].name, v[i].f[0].p, v[i].f[0].n))
				fresh = false;
		if (fresh && !entries_ok) {
			set_msg(why, wn, "cannot add record '%.*s' to '%s'", (int)v[i].f[0].n,
				v[i].f[0].p, path);
			rc = -EACCES;
			break;
		}
		if ((rc = apply_record(db, who, m.format, path, &ast, &v[i], fresh, dry, why, wn)))
			break;
		if (dry && fresh) {
			order[norder++] = 0;	/* (a new record: a new order, checked above) */
			continue;
		}
		if (!(rp = r4_path_join(path, v[i].f[0].p, v[i].f[0].n))) {
			rc = -ENOMEM;
			break;
		}
		rc = r4_stat(db, rp, &rst);
		r4_free(rp);
		if (!rc)
			order[norder++] = rst.ino;
	}
	if (rc)
		goto out;
	if (norder != m.norder || (norder && memcmp(order, m.order, norder * sizeof(*order)))) {
		if (!entries_ok) {
			set_msg(why, wn, "cannot reorder the records of '%s'", path);
			rc = -EACCES;
			goto out;
		}
		if (dry)
			goto out;
		r4_free(m.order);
		m.order = order;
		m.norder = norder;
		order = NULL;
		rc = r4_meta_put(db, ast.ino, &m);
	}
out:
	r4_free(order);
	olds_free(&o);
	recs_free(v, nv);
	r4_meta_fini(&m);
	return rc;
}

/* Checked whole before the first change, so that a refusal (EACCES half-way
 * through the records) changes nothing even where the caller's
 * transaction goes on (a host's group of calls, r4_file_rename). */
int r4_aggr_write(struct r4_db *db, const struct r4_ident *who, const char *path,
		  const uint8_t *p, size_t n, bool append, char *why, size_t wn)
{
	int rc = who ? aggr_apply(db, who, path, p, n, append, true, why, wn) : 0;

	return rc ? rc : aggr_apply(db, who, path, p, n, append, false, why, wn);
}

/* The record's directory was renamed to name: its name field follows. */
int r4_aggr_renamed(struct r4_db *db, const char *rec, unsigned format)
{
	const char *name = strrchr(rec, '/') + 1;
	char fname[24], *fp;
	struct r4_stat st;
	int rc;

	field_name(format, 0, fname, sizeof(fname));
	if (!(fp = r4_path_join(rec, fname, strlen(fname))))
		return -ENOMEM;
	rc = r4_stat(db, fp, &st);
	if (!rc)
		rc = put_file(db, fp, name, strlen(name), st.size);
	r4_free(fp);
	return rc == -ENOENT ? 0 : rc;
}

bool r4_aggr_is_name_field(unsigned format, const char *path)
{
	const char *b = strrchr(path, '/') + 1;
	char fname[24];

	field_name(format, 0, fname, sizeof(fname));
	return !strcmp(b, fname);
}

int r4_aggr_make(struct r4_db *db, uint64_t ino, unsigned format)
{
	struct r4_meta m = {.kind = R4_META_AGGREGATE, .format = format};

	return r4_meta_put(db, ino, &m);
}
