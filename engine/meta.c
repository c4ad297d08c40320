/*
 * meta.c - what r4 knows of an object beyond the format's stat data: that
 * a directory is an aggregate (and its records' order), access rules, the
 * audit log, an invert's parts (LANGUAGE.md sections 6.4, 6.5, 7).
 *
 * The format has no place for these (an unknown stat-data extension or
 * plugin id is fatal to fsck.reiser4), so they live in ordinary objects
 * every Reiser4 tool keeps: a directory "..r4" in the root, hidden because
 * its name is a pseudo name, holding one regular file per object, named by
 * the object id in decimal, of text lines (docs/semantics.md):
 *
 *	aggregate passwd		or "aggregate colon", or "invert"
 *	order 65540 65547		record object ids, in order
 *	rule uid 1001 write		or gid; denied, read, write
 *	audit /var/log/pw.audit		the log's path (\xHH escapes)
 *	part /srv/motd.head		invert parts, in order: a file ...
 *	text 2d2d20			... or literal bytes, in hex
 *
 * An object whose record is empty has no file.  Until the first record is
 * written the directory does not exist, and an image without it pays one
 * cached lookup per open.
 *
 * The audit records themselves are audit.c's.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "db.h"
#include "ns.h"
#include "obj.h"

#define META_DIR "/" R4_NS_PRIVATE

void r4_meta_fini(struct r4_meta *m)
{
	r4_free(m->order);
	r4_free(m->audit);
	r4_invert_free(m->parts, m->nparts);
	memset(m, 0, sizeof(*m));
}

bool r4_meta_empty(const struct r4_meta *m)
{
	return !m->kind && !m->nrules && !m->audit;
}

static void meta_path(char *s, size_t n, uint64_t oid)
{
	snprintf(s, n, META_DIR "/%llu", (unsigned long long)oid);
}

/* Is there a "..r4" directory?  Known once per transaction. */
bool r4_meta_present(struct r4_db *db)
{
	struct r4_stat st;

	if (!db->meta_known) {
		db->meta_present = !r4_stat(db, META_DIR, &st) && S_ISDIR(st.mode);
		db->meta_known = true;
	}
	return db->meta_present;
}

int r4_meta_dir(struct r4_db *db)
{
	int rc;

	if (r4_meta_present(db))
		return 0;
	if ((rc = r4_mkdir(db, META_DIR, 0700, 0, 0)))
		return rc;
	db->meta_present = true;
	return 0;
}

/* ---- text ---- */

size_t r4_escape_path(char *out, const char *p, size_t n)
{
	size_t k = 0;

	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)p[i];

		if (c < 0x20 || c == 0x7f || c == '\\') {
			if (out)
				sprintf(out + k, "\\x%02x", c);
			k += 4;
		} else {
			if (out)
				out[k] = (char)c;
			k++;
		}
	}
	if (out)
		out[k] = 0;
	return k;
}

static int hexval(int c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10
	       : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

/* Undo r4_escape_path (or hex when `hex`) of s[0, n) into a new string. */
static int unescape(const char *s, size_t n, bool hex, uint8_t **out, size_t *len)
{
	uint8_t *d = r4_malloc(n + 1);
	size_t k = 0;

	if (!d)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		if (hex || (s[i] == '\\' && i + 3 < n && s[i + 1] == 'x')) {
			size_t at = hex ? i : i + 2;
			int hi = at + 1 < n ? hexval(s[at]) : -1, lo = at + 1 < n ? hexval(s[at + 1]) : -1;

			if (hi < 0 || lo < 0) {
				r4_free(d);
				return -EUCLEAN;
			}
			d[k++] = (uint8_t)(hi << 4 | lo);
			i = at + 1;
		} else {
			d[k++] = (uint8_t)s[i];
		}
	}
	d[k] = 0;
	*out = d;
	*len = k;
	return 0;
}

static int add_part(struct r4_meta *m, char *path, uint8_t *text, size_t len)
{
	struct r4_part *v = r4_realloc(m->parts, (m->nparts + 1) * sizeof(*v));

	if (!v)
		return -ENOMEM;
	m->parts = v;
	v[m->nparts++] = (struct r4_part){path, text, len};
	return 0;
}

int r4_meta_add_part(struct r4_meta *m, const char *path, const uint8_t *text, size_t len)
{
	char *p = path ? r4_memdup(path, strlen(path)) : NULL;
	uint8_t *t = path ? NULL : (uint8_t *)r4_memdup(text, len);
	int rc;

	if ((path && !p) || (!path && !t))
		rc = -ENOMEM;
	else if (!(rc = add_part(m, p, t, len)))
		return 0;
	r4_free(p);
	r4_free(t);
	return rc;
}

static int parse_line(struct r4_meta *m, const char *s, size_t n)
{
	const char *sp = memchr(s, ' ', n);
	size_t w = sp ? (size_t)(sp - s) : n;
	const char *a = sp ? sp + 1 : s + n;
	size_t an = n - (size_t)(a - s);
	char word[16];
	uint8_t *bytes;
	size_t len;
	int rc;

	if (w >= sizeof(word))
		return -EUCLEAN;
	memcpy(word, s, w);
	word[w] = 0;
	if (!strcmp(word, "aggregate")) {
		m->kind = R4_META_AGGREGATE;
		m->format = an == 5 && !memcmp(a, "colon", 5) ? R4_FORMAT_COLON : R4_FORMAT_PASSWD;
		return 0;
	}
	if (!strcmp(word, "invert")) {
		m->kind = R4_META_INVERT;
		return 0;
	}
	if (!strcmp(word, "order")) {
		char *t = r4_memdup(a, an), *p = t, *e;

		if (!t)
			return -ENOMEM;
		for (rc = 0; *p && !rc;) {
			uint64_t v = strtoull(p, &e, 10);
			uint64_t *o;

			if (e == p) {
				rc = -EUCLEAN;
				break;
			}
			if (!(o = r4_realloc(m->order, (m->norder + 1) * sizeof(*o)))) {
				rc = -ENOMEM;
				break;
			}
			m->order = o;
			o[m->norder++] = v;
			p = e + (*e == ' ');
		}
		r4_free(t);
		return rc;
	}
	if (!strcmp(word, "uid") || !strcmp(word, "gid")) {
		char t[64];
		char acc[16];
		unsigned long id;

		if (an >= sizeof(t) || m->nrules >= R4_MAX_RULES)
			return -EUCLEAN;
		memcpy(t, a, an);
		t[an] = 0;
		if (sscanf(t, "%lu %15s", &id, acc) != 2)
			return -EUCLEAN;
		for (unsigned k = 0; r4_accesses[k]; k++)
			if (!strcmp(acc, r4_accesses[k])) {
				m->rules[m->nrules++] = (struct r4_rule){(uint32_t)id, word[0] == 'g',
									 (uint8_t)k};
				return 0;
			}
		return -EUCLEAN;
	}
	if (!strcmp(word, "audit")) {
		if ((rc = unescape(a, an, false, &bytes, &len)))
			return rc;
		r4_free(m->audit);
		m->audit = (char *)bytes;
		return 0;
	}
	if (!strcmp(word, "part") || !strcmp(word, "text")) {
		if ((rc = unescape(a, an, word[0] == 't', &bytes, &len)))
			return rc;
		if (word[0] == 'p')
			rc = add_part(m, (char *)bytes, NULL, 0);
		else
			rc = add_part(m, NULL, bytes, len);
		if (rc)
			r4_free(bytes);
		return rc;
	}
	return -EUCLEAN;
}

static int parse(struct r4_meta *m, const char *s, size_t n)
{
	int rc = 0;

	while (n && !rc) {
		const char *lf = memchr(s, '\n', n);
		size_t k = lf ? (size_t)(lf - s) : n;

		if (k)
			rc = parse_line(m, s, k);
		s += k + (lf != NULL);
		n -= k + (lf != NULL);
	}
	return rc;
}

struct text {			/* a record being written: the first error sticks */
	struct r4_buf b;
	int rc;
};

static void put(struct text *t, const char *s, size_t n)
{
	if (!t->rc)
		t->rc = r4_buf_add(&t->b, s, n);
}

static void putf(struct text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void putf(struct text *t, const char *fmt, ...)
{
	va_list ap;

	if (t->rc)
		return;
	va_start(ap, fmt);
	t->rc = r4_buf_vprintf(&t->b, fmt, ap);
	va_end(ap);
}

static void put_escaped(struct text *t, const char *s)
{
	size_t n = r4_escape_path(NULL, s, strlen(s));

	if (!t->rc && !(t->rc = r4_buf_reserve(&t->b, t->b.len + n + 1)))
		t->b.len += r4_escape_path((char *)t->b.p + t->b.len, s, strlen(s));
}

static void format(struct text *t, const struct r4_meta *m)
{
	if (m->kind == R4_META_AGGREGATE)
		putf(t, "aggregate %s\n", r4_formats[m->format == R4_FORMAT_COLON]);
	else if (m->kind == R4_META_INVERT)
		put(t, "invert\n", 7);
	if (m->norder) {
		put(t, "order", 5);
		for (size_t i = 0; i < m->norder; i++)
			putf(t, " %llu", (unsigned long long)m->order[i]);
		put(t, "\n", 1);
	}
	for (unsigned i = 0; i < m->nrules; i++)
		putf(t, "%s %u %s\n", m->rules[i].gid ? "gid" : "uid", m->rules[i].id,
		     r4_accesses[m->rules[i].access]);
	if (m->audit) {
		put(t, "audit ", 6);
		put_escaped(t, m->audit);
		put(t, "\n", 1);
	}
	for (size_t i = 0; i < m->nparts; i++) {
		const struct r4_part *p = &m->parts[i];

		if (p->path) {
			put(t, "part ", 5);
			put_escaped(t, p->path);
		} else {
			put(t, "text ", 5);
			for (size_t k = 0; k < p->len; k++)
				putf(t, "%02x", p->text[k]);
		}
		put(t, "\n", 1);
	}
}

/* ---- the store ---- */

int r4_meta_read(struct r4_db *db, const char *path, uint64_t max, struct r4_buf *b)
{
	struct r4_stat st;
	size_t got;
	int rc;

	memset(b, 0, sizeof(*b));
	if (!r4_meta_present(db))
		return 0;
	if ((rc = r4_stat(db, path, &st)))
		return rc == -ENOENT ? 0 : rc;
	if (!S_ISREG(st.mode) || st.size > max)
		return R4_CORRUPT(&db->lg, 0, "'%s' is not an r4 record", path);
	if ((rc = r4_buf_reserve(b, (size_t)st.size)) ||
	    (rc = r4_read(db, path, 0, b->p, (size_t)st.size, &got)) || (got != st.size && (rc = -EIO)))
		r4_buf_free(b);
	else
		b->len = got;
	return rc;
}

int r4_meta_get(struct r4_db *db, uint64_t oid, struct r4_meta *m)
{
	struct r4_buf b;
	char path[48];
	int rc;

	memset(m, 0, sizeof(*m));
	meta_path(path, sizeof(path), oid);
	if ((rc = r4_meta_read(db, path, 1u << 24, &b)))
		return rc;
	if ((rc = parse(m, (const char *)b.p, b.len)) == -EUCLEAN)
		R4_CORRUPT(&db->lg, 0, "'%s' holds a line r4 cannot read", path);
	r4_buf_free(&b);
	if (rc)
		r4_meta_fini(m);
	return rc;
}

int r4_meta_put(struct r4_db *db, uint64_t oid, const struct r4_meta *m)
{
	struct text t = {0};
	char path[48];
	struct r4_stat st;
	int rc;

	meta_path(path, sizeof(path), oid);
	if (r4_meta_empty(m) && !m->nparts && !m->norder)
		return r4_meta_unlink(db, path);
	if ((rc = r4_meta_dir(db)))
		return rc;
	format(&t, m);
	if ((rc = t.rc))
		goto out;
	rc = r4_stat(db, path, &st);
	if (rc == -ENOENT)
		rc = r4_create(db, path, 0600, 0, 0);
	else if (!rc && st.size > t.b.len)
		rc = r4_truncate(db, path, t.b.len);
	if (!rc)
		rc = r4_write(db, path, 0, t.b.p, t.b.len);
out:
	r4_buf_free(&t.b);
	return rc;
}

int r4_meta_unlink(struct r4_db *db, const char *path)
{
	int rc;

	if (!r4_meta_present(db))
		return 0;
	rc = r4_unlink(db, path);
	return rc == -ENOENT ? 0 : rc;
}

int r4_meta_drop(struct r4_db *db, uint64_t oid)
{
	char path[48];

	meta_path(path, sizeof(path), oid);
	return r4_meta_unlink(db, path);
}

unsigned r4_meta_kind(struct r4_db *db, uint64_t oid, unsigned *format)
{
	struct r4_meta m;
	unsigned k;

	if (r4_meta_get(db, oid, &m))
		return R4_META_NONE;
	k = m.kind;
	if (format)
		*format = m.format;
	r4_meta_fini(&m);
	return k;
}

bool r4_is_computed(r4_db *db, uint64_t ino)
{
	return r4_meta_kind(db, ino, NULL) != R4_META_NONE;
}
