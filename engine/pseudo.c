/*
 * pseudo.c - what a pseudo file is (LANGUAGE.md section 6): the table of
 * their names, what reading each gives and what writing each does, for
 * the executor (exec/exec.c, through r4_pseudo_ctx) and for hosts that reach them
 * without the language (r4_pseudo_read and r4_pseudo_write in r4.h: the
 * FUSE bridge).  One place, so R4L's f/..mode and the mount's f/..mode
 * cannot disagree.
 *
 * Above: exec.c, which resolves paths, keeps handles, records what the
 * members of a ',' group touch (what a change will change it hears from
 * here, through c->changes) and formats diagnostics from the words this
 * file puts in c->why.  Below: the fs API (r4_stat, r4_write, r4_setattr,
 * ...), perm.c for every permission rule, meta.c (rules, audit, invert
 * parts), aggr.c (an aggregate's text), invert.c (an invert's syntax).
 *
 * An invert's file parts are paths that must be resolved as the caller
 * would (symlinks, pseudo names): the executor hands in its own walk
 * (c->part, which also records what a ',' group touches); the public
 * calls walk them with ns.c's walker as the executor does, so both give
 * the same text.
 *
 * Audit records (section 6.4) of the changes made here are written here,
 * with audit.c's r4_audit_change, in the same transaction as the change.
 */
#include <limits.h>
#include <stdio.h>
#include <sys/stat.h>

#include "audit.h"
#include "db.h"
#include "ns.h"
#include "obj.h"
#include "perm.h"

#define MAX_INVERT_DEPTH 8	/* inverts read inside inverts (then ELOOP) */
/* The words of a refusal, into c->why (the first reason stands). */
#define SAY(c, ...) r4_why_set((c)->why, __VA_ARGS__)

/* ================================ values ================================ */

void r4_pseudo_chop(const uint8_t *p, size_t *n)
{
	if (*n && p[*n - 1] == '\n')
		(*n)--;
}

/* Decimal (neg_ok: a leading '-'), one trailing LF ignored. */
static int decimal(const uint8_t *p, size_t n, bool neg_ok, int64_t *out)
{
	bool neg = false;
	uint64_t v = 0;

	r4_pseudo_chop(p, &n);
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

/* Permission bits (what, for the words): 1 to 4 octal digits. */
static int octal(struct r4_pseudo_ctx *c, const char *what, const uint8_t *p, size_t n,
		 uint32_t *out)
{
	uint32_t m = 0;
	size_t i = 0;

	r4_pseudo_chop(p, &n);
	while (i < n && n <= 4 && p[i] >= '0' && p[i] <= '7')
		m = m << 3 | (uint32_t)(p[i++] - '0');
	if (!n || i < n)
		return SAY(c, -EINVAL, "'%s' takes 1 to 4 octal digits", what);
	*out = m;
	return 0;
}

/* A name for a new entry: not ".", ".." or "..x" (R4L spells that a
 * pseudo name, so could not reach the entry); -ENAMETOOLONG past 255. */
static int newname(const uint8_t *p, size_t n)
{
	if (!n || memchr(p, '/', n) || memchr(p, 0, n))
		return -EINVAL;
	if (n > 255)
		return -ENAMETOOLONG;
	if (p[0] == '.' && (n == 1 || p[1] == '.'))
		return -EINVAL;	/* ".", "..", and pseudo names */
	return 0;
}

/* A uid or gid (what, for the words): decimal, below 2^32 - 1. */
static int id_of(struct r4_pseudo_ctx *c, const char *what, const uint8_t *p, size_t n,
		 uint32_t *id)
{
	int64_t v;

	if (decimal(p, n, false, &v) || v > UINT32_MAX - 1)
		return SAY(c, -EINVAL, "'%s' takes a decimal id", what);
	*id = (uint32_t)v;
	return 0;
}

/* ================================ helpers =============================== */

/* want (4 read, 2 write) on st for c->who (perm.c; access rules too). */
static bool may(struct r4_db *db, const struct r4_pseudo_ctx *c, const struct r4_stat *st,
		unsigned want)
{
	return r4_perm_may(db, c->who, st, want);
}

/* The last component of an absolute path ("/" for the root). */
static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');

	return s && s[1] ? s + 1 : path;
}

/* The parent of an absolute path; r4_free it. */
static char *dir_of(const char *path)
{
	char *d = r4_memdup(path, strlen(path)), *s;

	if (d && (s = strrchr(d, '/')))
		s[s == d] = 0;
	return d;
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

/* Section 6.4's record of a change of ino (and of dir, its entry's
 * directory, when not 0), as the actor. */
static int audit(struct r4_db *db, struct r4_pseudo_ctx *c, uint64_t ino, uint64_t dir,
		 const char *op, const char *path, uint64_t len)
{
	return r4_audit_change(db, c->actor ? c->actor->uid : 0, ino, dir, op, path, len, c->why);
}

/* Before a change: tell c->changes that it changes the contents (what 0)
 * or pseudo file what of object ino, or (what -1) the entry path in
 * directory ino. */
static int tell(struct r4_pseudo_ctx *c, uint64_t ino, int what, const char *path)
{
	return c->changes ? c->changes(c->arg, ino, what, path) : 0;
}

/* ... what writing p[0, n) to pseudo file id (sub: ..plugin/<sub>) of the
 * object st at path, found in directory dir, changes; R4_PSEUDO_NONE: its
 * contents, R4_PSEUDO_RANGE: a window of them. */
static int tell_put(struct r4_db *db, struct r4_pseudo_ctx *c, const char *path,
		    const struct r4_stat *st, uint64_t dir, enum r4_pseudo id, const char *sub,
		    const uint8_t *p, size_t n)
{
	bool body = id == R4_PSEUDO_NONE || id == R4_PSEUDO_BODY || id == R4_PSEUDO_RANGE;
	struct r4_stat victim;
	char *to, *parent = NULL;
	int rc;

	if (!c->changes)
		return 0;
	if ((rc = tell(c, st->ino, body ? 0 : (int)id, path)))
		return rc;
	switch (id) {
	case R4_PSEUDO_NONE:
	case R4_PSEUDO_BODY:
	case R4_PSEUDO_RANGE:
		return S_ISLNK(st->mode) ? 0 : tell(c, st->ino, R4_PSEUDO_SIZE, path);
	case R4_PSEUDO_SIZE:
	case R4_PSEUDO_INVERT:
		return tell(c, st->ino, 0, path);
	case R4_PSEUDO_PLUGIN:
		if (!(rc = tell(c, st->ino, 0, path)) && sub && !strcmp(sub, "file"))
			rc = tell(c, st->ino, R4_PSEUDO_SIZE, path);
		return rc;
	case R4_PSEUDO_NAME:
	case R4_PSEUDO_UNLINK:
		r4_pseudo_chop(p, &n);
		if (id == R4_PSEUDO_NAME && !(parent = dir_of(path)))
			return -ENOMEM;
		if (!(to = r4_path_join(parent ? parent : path, (const char *)p, n))) {
			r4_free(parent);
			return -ENOMEM;
		}
		if (id == R4_PSEUDO_NAME) {
			if (strcmp(to, path) && !(rc = tell(c, dir, -1, path)))
				rc = tell(c, dir, -1, to);
		} else if (!(rc = tell(c, st->ino, -1, to)) && !r4_stat(db, to, &victim)) {
			rc = tell(c, victim.ino, 0, to);
		}
		r4_free(to);
		r4_free(parent);
		return rc;
	default:
		return 0;
	}
}

/* ============================ reading values ============================ */

const char *r4_type_name(uint32_t mode)
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
static bool is_invert(struct r4_db *db, const struct r4_stat *st)
{
	return S_ISREG(st->mode) && r4_meta_present(db) &&
	       r4_meta_kind(db, st->ino, NULL) == R4_META_INVERT;
}

/* What the object is to an aggregate (R4_ROLE_*), and the format. */
static unsigned role_of(struct r4_db *db, const char *path, const struct r4_stat *st,
			unsigned *format)
{
	return r4_aggr_role(db, path, st, format);
}

/* Are the object's contents computed text (an aggregate, a record, an invert)? */
static bool is_computed(struct r4_db *db, const char *path, const struct r4_stat *st)
{
	return S_ISDIR(st->mode) ? role_of(db, path, st, NULL) != R4_ROLE_NONE : is_invert(db, st);
}

/* ..type: the file type, or what it is to an aggregate, or invert. */
static const char *object_type(struct r4_db *db, const char *path, const struct r4_stat *st)
{
	unsigned f;

	if (is_invert(db, st))
		return "invert";
	switch (S_ISDIR(st->mode) ? role_of(db, path, st, &f) : R4_ROLE_NONE) {
	case R4_ROLE_AGGREGATE: return "aggregate";
	case R4_ROLE_RECORD: return "record";
	default: return r4_type_name(st->mode);
	}
}

/* ..acl's text: one rule per line. */
static int acl_text(struct r4_db *db, struct r4_pseudo_ctx *c, const char *path,
		    const struct r4_stat *st, struct r4_buf *b)
{
	struct r4_meta m;
	int rc;

	if ((rc = r4_meta_get(db, st->ino, &m)))
		return SAY(c, rc, "cannot read '%s/..acl'", path);
	for (unsigned i = 0; i < m.nrules && !rc; i++)
		rc = r4_buf_printf(b, "%s %u %s\n", m.rules[i].gid ? "gid" : "uid", m.rules[i].id,
				   r4_accesses[m.rules[i].access]);
	r4_meta_fini(&m);
	return rc;
}

static int audit_text(struct r4_db *db, struct r4_pseudo_ctx *c, const char *path,
		      const struct r4_stat *st, struct r4_buf *b)
{
	struct r4_meta m;
	int rc;

	if ((rc = r4_meta_get(db, st->ino, &m)))
		return SAY(c, rc, "cannot read '%s/..audit'", path);
	rc = m.audit ? r4_buf_printf(b, "%s", m.audit) : 0;
	r4_meta_fini(&m);
	return rc;
}

static int key_text(struct r4_db *db, const char *path, struct r4_buf *b)
{
	struct r4_inode ino;
	int rc;

	if ((rc = r4_fs_resolve(db, path, &ino)))
		return rc;
	const r4_key *k = &ino.sdkey;

	if (db->flags & 1)
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

/*
 * ..plugin: one line "member label" per plugin-set member that governs the
 * object (docs/plan.md), or the label of one (sub); an aggregate or invert
 * names r4's plugin instead of reg40/dir40, and an aggregate adds its format.
 */
static int plugin_text(struct r4_db *db, struct r4_pseudo_ctx *c, const char *path,
		       const struct r4_stat *st, const char *sub, struct r4_buf *b)
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

	if ((rc = r4_fs_resolve(db, path, &ino)))
		return rc;
	bool agg = S_ISDIR(st->mode) && role_of(db, path, st, &format) == R4_ROLE_AGGREGATE;

	set = S_ISDIR(st->mode) ? dir : !S_ISREG(st->mode) ? other
	      : r4_obj_plugin(db, &ino, R4_PSET_FILE) == 4 ? ccreg : reg;
	for (; *set != ~0u; set++) {
		const char *name = r4_pset_member_name(*set);
		unsigned id = r4_obj_plugin(db, &ino, *set);

		r4_pset_member(name, strlen(name), &type);
		m[n++] = (struct member){name, r4_plugin_label(type, id)};
		if (*set == R4_PSET_FILE && agg) {
			m[0].label = "aggregate";
			m[n++] = (struct member){"format", r4_formats[format == R4_FORMAT_COLON]};
		} else if (*set == R4_PSET_FILE && is_invert(db, st)) {
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
	return sub ? SAY(c, -ENOENT, "'%s/..plugin' has no member '%s'", path, sub) : 0;
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

/* Does pseudo file id apply to the object (docs/plan.md, "..list")? */
static bool applies(struct r4_db *db, const char *path, const struct r4_stat *st,
		    enum r4_pseudo id)
{
	switch (id) {
	case R4_PSEUDO_BODY:
		return !S_ISDIR(st->mode) || role_of(db, path, st, NULL) != R4_ROLE_NONE;
	case R4_PSEUDO_RANGE:
		return S_ISREG(st->mode) || role_of(db, path, st, NULL) == R4_ROLE_AGGREGATE;
	case R4_PSEUDO_INVERT:
		return is_invert(db, st);
	case R4_PSEUDO_UNLINK:
	case R4_PSEUDO_NEW:
	case R4_PSEUDO_LINK:
		return S_ISDIR(st->mode);
	default:
		return true;
	}
}

/* Section 6.1's ..list: the entries, then every name of the pseudo file
 * table that applies (aliases too: each opens by its name). */
static int list_text(struct r4_db *db, struct r4_pseudo_ctx *c, const char *path,
		     const struct r4_stat *st, struct r4_buf *b)
{
	const struct r4_pseudo_info *ps;
	int rc;

	if (S_ISDIR(st->mode)) {
		struct r4_dirpos pos = {0};
		struct list_ctx l = {b, 0};

		if (!may(db, c, st, 4))
			return SAY(c, -EACCES, "cannot read '%s/..list'", path);
		if ((rc = r4_readdir(db, path, &pos, list_fn, &l)) || (rc = l.rc))
			return rc;
	}
	for (size_t i = 0; (ps = r4_pseudo_at(i)); i++)
		if (applies(db, path, st, ps->id) && (rc = r4_buf_printf(b, "%s\n", ps->name)))
			return rc;
	return 0;
}

/* b += p[0, n) as a section 2.4 string, quotes included. */
static int buf_quote(struct r4_buf *b, const uint8_t *p, size_t n)
{
	char e[5];
	int rc = r4_buf_add(b, "\"", 1);

	for (size_t i = 0; !rc && i < n; i++)
		rc = r4_buf_add(b, e, r4_quote_byte(e, p[i]));
	return rc ? rc : r4_buf_add(b, "\"", 1);
}

static int part_walked(struct r4_db *db, struct r4_pseudo_ctx *c, const char *path,
		       const uint8_t *p, size_t n, bool quiet, struct r4_buf *out);

/* An invert's file part, read (p NULL) or written, as c says parts are reached. */
static int part(struct r4_db *db, struct r4_pseudo_ctx *c, const char *path, const uint8_t *p,
		size_t n, bool quiet, struct r4_buf *out)
{
	struct r4_pseudo_ctx in = {.who = c->who, .actor = c->actor, .why = c->why,
				   .depth = c->depth + 1};

	if (c->part)
		return c->part(c->arg, c->depth + 1, path, p, n, quiet, out);
	return part_walked(db, &in, path, p, n, quiet, out);
}

/*
 * An invert's text (section 6.5): its parts' contents concatenated, or,
 * canonical, the definition that writes them back: "(P <- \"...\")" per
 * file part, "..." per literal, joined by " + ", ending in LF.
 */
static int invert_text(struct r4_db *db, struct r4_pseudo_ctx *c, const char *path,
		       const struct r4_stat *st, bool canonical, struct r4_buf *b)
{
	struct r4_buf pc = {0};
	struct r4_meta m;
	int rc;

	b->len = 0;
	if (c->depth >= MAX_INVERT_DEPTH)
		return SAY(c, -ELOOP, "cannot read '%s': inverts nest more than %d deep", path,
			   MAX_INVERT_DEPTH);
	if ((rc = r4_meta_get(db, st->ino, &m)))
		return SAY(c, r4_db_seen(db, rc), "cannot read '%s'", path);
	for (size_t i = 0; i < m.nparts && !rc; i++) {
		const struct r4_part *pt = &m.parts[i];

		if (canonical && i && (rc = r4_buf_add(b, " + ", 3)))
			break;
		if (!pt->path) {
			rc = canonical ? buf_quote(b, pt->text, pt->len) : r4_buf_add(b, pt->text, pt->len);
			continue;
		}
		if ((rc = part(db, c, pt->path, NULL, 0, false, &pc)))
			break;
		if (!canonical)
			rc = r4_buf_add(b, pc.p, pc.len);
		else if (!(rc = r4_buf_printf(b, "(%s <- ", pt->path)) &&
			 !(rc = buf_quote(b, pc.p, pc.len)))
			rc = r4_buf_add(b, ")", 1);
	}
	if (!rc && canonical && m.nparts)
		rc = r4_buf_add(b, "\n", 1);
	r4_buf_free(&pc);
	r4_meta_fini(&m);
	return rc;
}

/* The contents of an object (section 5.1): a file's data, a symlink's
 * text, an aggregate's, record's or invert's text. */
static int contents(struct r4_db *db, struct r4_pseudo_ctx *c, const char *path,
		    const struct r4_stat *st, struct r4_buf *b)
{
	int rc;

	b->len = 0;
	if (S_ISDIR(st->mode)) {
		unsigned role = role_of(db, path, st, NULL);
		char *text, *agg = NULL;
		size_t n;

		if (role != R4_ROLE_AGGREGATE && role != R4_ROLE_RECORD)
			return SAY(c, -EISDIR, "cannot read '%s'", path);
		if (!may(db, c, st, 4))
			return SAY(c, -EACCES, "cannot read '%s'", path);
		if (role == R4_ROLE_RECORD && !(agg = dir_of(path)))
			return -ENOMEM;
		rc = r4_aggr_text(db, c->who, agg ? agg : path, agg ? base_name(path) : NULL, &text,
				  &n);
		r4_free(agg);
		if (rc)
			return SAY(c, r4_db_seen(db, rc), "cannot read '%s'", path);
		rc = r4_buf_set(b, text, n);
		r4_free(text);
		return rc;
	}
	if (!may(db, c, st, 4))
		return SAY(c, -EACCES, "cannot read '%s'", path);
	if (is_invert(db, st))
		return invert_text(db, c, path, st, false, b);
	if (S_ISLNK(st->mode)) {
		size_t n;

		if ((rc = r4_buf_reserve(b, (size_t)st->size + 1)))
			return rc;
		if ((rc = r4_readlink(db, path, (char *)b->p, (size_t)st->size, &n)))
			return SAY(c, rc, "cannot read '%s'", path);
		b->len = R4_MIN(n, (size_t)st->size);
		b->p[b->len] = 0;
		return 0;
	}
	if (!S_ISREG(st->mode))
		return SAY(c, -EINVAL, "cannot read '%s': not a file", path);
	if ((rc = read_all(db, path, 0, st->size, b)))
		return SAY(c, rc, "cannot read '%s'", path);
	return 0;
}

int r4_pseudo_get(struct r4_db *db, struct r4_pseudo_ctx *c, const char *path,
		  const struct r4_stat *st, enum r4_pseudo id, const char *sub, struct r4_buf *b)
{
	b->len = 0;
	if (r4_buf_reserve(b, 64))
		return -ENOMEM;
	b->p[0] = 0;
	switch (id) {
	case R4_PSEUDO_NONE:
	case R4_PSEUDO_BODY: return contents(db, c, path, st, b);
	case R4_PSEUDO_UID: return r4_buf_printf(b, "%u", st->uid);
	case R4_PSEUDO_GID: return r4_buf_printf(b, "%u", st->gid);
	case R4_PSEUDO_MODE: return r4_buf_printf(b, "%04o", st->mode & 07777);
	case R4_PSEUDO_TYPE: return r4_buf_printf(b, "%s", object_type(db, path, st));
	case R4_PSEUDO_SIZE:
		if (is_computed(db, path, st)) {
			int rc = contents(db, c, path, st, b);
			size_t len = b->len;

			return rc ? rc : (b->len = 0, r4_buf_printf(b, "%zu", len));
		}
		return r4_buf_printf(b, "%llu", (unsigned long long)st->size);
	case R4_PSEUDO_NLINK: return r4_buf_printf(b, "%u", st->nlink);
	case R4_PSEUDO_ATIME: return r4_buf_printf(b, "%lld", (long long)st->atime.tv_sec);
	case R4_PSEUDO_MTIME: return r4_buf_printf(b, "%lld", (long long)st->mtime.tv_sec);
	case R4_PSEUDO_CTIME: return r4_buf_printf(b, "%lld", (long long)st->ctime.tv_sec);
	case R4_PSEUDO_OID: return r4_buf_printf(b, "%llu", (unsigned long long)st->ino);
	case R4_PSEUDO_KEY: return key_text(db, path, b);
	case R4_PSEUDO_PLUGIN: return plugin_text(db, c, path, st, sub, b);
	case R4_PSEUDO_LIST: return list_text(db, c, path, st, b);
	case R4_PSEUDO_NAME: return r4_buf_printf(b, "%s", base_name(path));
	case R4_PSEUDO_ACL: return acl_text(db, c, path, st, b);
	case R4_PSEUDO_AUDIT: return audit_text(db, c, path, st, b);
	case R4_PSEUDO_INVERT:
		if (!is_invert(db, st))
			return 0;	/* not an invert: no definition */
		if (!may(db, c, st, 4))
			return SAY(c, -EACCES, "cannot read '%s/..invert'", path);
		return invert_text(db, c, path, st, true, b);
	default:
		return SAY(c, -EACCES, "cannot read '%s/%s': it is write-only", path,
			   r4_pseudo_name(id));
	}
}

int r4_pseudo_window_get(struct r4_db *db, struct r4_pseudo_ctx *c, const char *path,
			 const struct r4_stat *st, const struct r4_window *w, struct r4_buf *b)
{
	uint64_t size = st->size, end;

	b->len = 0;
	if (is_computed(db, path, st)) {
		int rc = contents(db, c, path, st, b);

		if (rc)
			return rc;
		size = b->len;
		end = w->len_set && w->len < size - R4_MIN(w->off, size) ? w->off + w->len : size;
		b->len = w->off >= size ? 0 : (size_t)(end - w->off);
		memmove(b->p, b->p + R4_MIN(w->off, size), b->len);
		return 0;
	}
	if (!may(db, c, st, 4))
		return SAY(c, -EACCES, "cannot read '%s'", path);
	if (w->off >= size)
		return r4_buf_set(b, "", 0);
	end = w->len_set && w->len < size - w->off ? w->off + w->len : size;
	return read_all(db, path, w->off, end - w->off, b);
}

/* =============================== changing =============================== */

/* May c->who add entries to directory d (path dir), and, in a sticky
 * directory, remove or rename the entry path of st (perm.c)? */
static int may_change(struct r4_db *db, struct r4_pseudo_ctx *c, const struct r4_stat *d,
		      const struct r4_stat *st, const char *dir, const char *path)
{
	int rc = r4_perm_entry(db, c->who, d, st);

	if (rc == -ENOTDIR)
		return SAY(c, rc, "cannot change '%s'", dir);
	if (rc == -EPERM)
		return SAY(c, rc, "cannot change '%s': the directory is sticky", path);
	return rc ? SAY(c, rc, "cannot change '%s'", path) : 0;
}

/* ... of the directory at dir. */
static int may_change_in(struct r4_db *db, struct r4_pseudo_ctx *c, const char *dir,
			 const struct r4_stat *st, const char *path)
{
	struct r4_stat d;
	int rc;

	if ((rc = r4_stat(db, dir, &d)))
		return SAY(c, rc, "cannot change '%s'", dir);
	return may_change(db, c, &d, st, dir, path);
}

/* ... of the directory path is in. */
static int may_change_own(struct r4_db *db, struct r4_pseudo_ctx *c, const struct r4_stat *st,
			  const char *path)
{
	char *dir = dir_of(path);
	int rc = dir ? may_change_in(db, c, dir, st, path) : -ENOMEM;

	r4_free(dir);
	return rc;
}

/*
 * The first contents p[0, n) of the regular file st at path, just made in
 * the directory dir, as r4_pseudo_put writes them.  r4_fs_make stored them
 * with it when they go in tails (st->size n): kept when the write would
 * have put them as they are (no change to tell first, a plain file the
 * writer may write, no set-id bit to clear), else taken out again for the
 * write to do what it does.
 */
static int made_contents(struct r4_db *db, struct r4_pseudo_ctx *c, const char *path,
			 struct r4_stat *st, uint64_t dir, const uint8_t *p, size_t n)
{
	int rc;

	if (st->size == n && n && !c->changes && may(db, c, st, 2) && !is_invert(db, st) &&
	    role_of(db, path, st, NULL) == R4_ROLE_NONE &&
	    r4_perm_after_write(c->actor, st) == st->mode) {
		c->stored = n;
		return audit(db, c, st->ino, 0, "write", path, n);
	}
	if (st->size && (rc = r4_truncate(db, path, 0)))
		return SAY(c, rc, "cannot write '%s'", path);
	st->size = 0;
	if ((rc = r4_pseudo_put(db, c, path, st, dir, R4_PSEUDO_NONE, NULL, p, n, false)))
		return rc;
	return r4_stat(db, c->moved ? c->moved : path, st);
}

int r4_pseudo_make(struct r4_db *db, struct r4_pseudo_ctx *c, const char *path,
		   const struct r4_stat *d, unsigned type, unsigned format, uint32_t perm,
		   const uint8_t *tgt, size_t tlen, struct r4_stat *st)
{
	uint32_t ifmt = type == R4_NEW_DIRECTORY || type == R4_NEW_AGGREGATE ? S_IFDIR
			: type == R4_NEW_SYMLINK ? S_IFLNK : S_IFREG;
	uint32_t mode = ifmt | (perm & 07777), uid = 0, gid = 0;
	unsigned afmt = 0;
	char *dir = dir_of(path);
	struct r4_stat ds, made;
	int rc;

	if (!dir)
		return -ENOMEM;
	if (!d && (rc = r4_stat(db, dir, &ds))) {
		rc = SAY(c, rc, "cannot change '%s'", dir);
		goto out;
	}
	if (!d)
		d = &ds;
	if ((rc = may_change(db, c, d, NULL, dir, path)))
		goto out;
	/* an empty directory here would be a record of empty fields (a
	 * passwd one with no uid): records come from their text */
	if (ifmt == S_IFDIR && role_of(db, dir, d, &afmt) == R4_ROLE_AGGREGATE) {
		rc = SAY(c, -EOPNOTSUPP, "cannot create '%s': a record is made by writing its line "
			 "to its aggregate (%s <<- \"%s%s\\n\")", path, dir, base_name(path),
			 afmt == R4_FORMAT_PASSWD ? ":x:UID:GID:GECOS:HOME:SHELL" : ":FIELD...");
		goto out;
	}
	r4_perm_new(c->actor, d, r4_fs_default_acl(db, d), &mode, &uid, &gid);
	if (ifmt == S_IFLNK && (!tlen || memchr(tgt, 0, tlen)))
		rc = -EINVAL;
	else if (!(rc = r4_fs_make(db, path, mode, uid, gid,
				   ifmt == S_IFLNK || (type == R4_NEW_REGULAR && !c->changes) ? tgt : NULL,
				   tlen, &made)) &&
		 type == R4_NEW_AGGREGATE)
		rc = r4_aggr_make(db, made.ino, format);
	else if (!rc && type == R4_NEW_INVERT)
		rc = r4_meta_put(db, made.ino, &(struct r4_meta){.kind = R4_META_INVERT});
	if (rc) {
		rc = SAY(c, rc, "cannot create '%s'", path);
		goto out;
	}
	if (!(rc = audit(db, c, d->ino, 0, "create", path, 0)) && type == R4_NEW_REGULAR && tgt)
		rc = made_contents(db, c, path, &made, d->ino, tgt, tlen);
	if (!rc)
		*st = made;
out:
	r4_free(dir);
	return rc;
}

/* The entry name[0, n) (one trailing LF ignored) of a new object in the
 * directory at dir, as R4L may name it: its path into *path (r4_free it). */
static int entry_path(struct r4_pseudo_ctx *c, const char *how, const char *dir,
		      const uint8_t *name, size_t n, char **path)
{
	int rc;

	r4_pseudo_chop(name, &n);
	if ((rc = newname(name, n)))
		return SAY(c, rc, "cannot %s '%.*s' in '%s'", how, (int)n, (const char *)name, dir);
	return (*path = r4_path_join(dir, (const char *)name, n)) ? 0 : -ENOMEM;
}

int r4_pseudo_new(struct r4_db *db, struct r4_pseudo_ctx *c, const char *dir,
		  const struct r4_stat *d, const struct r4_new *nw, char **path, struct r4_stat *st)
{
	uint32_t perm = nw->type == R4_NEW_REGULAR || nw->type == R4_NEW_INVERT ? 0666 : 0777;
	struct r4_stat there;
	int rc;

	*path = NULL;
	if (!S_ISDIR(d->mode))
		return SAY(c, -ENOTDIR, "cannot create in '%s'", dir);
	if ((rc = entry_path(c, "create", dir, nw->name, nw->name_len, path)))
		return rc;
	if (nw->perm && (rc = octal(c, "perm", nw->perm, nw->perm_len, &perm)))
		return rc;
	if ((rc = r4_stat(db, *path, &there)) != -ENOENT)
		return SAY(c, rc ? rc : -EEXIST, "cannot create '%s'", *path);
	if ((rc = tell(c, d->ino, -1, *path)))
		return rc;
	return r4_pseudo_make(db, c, *path, NULL, nw->type, nw->format, perm,
			      nw->type == R4_NEW_SYMLINK ? nw->target : NULL, nw->target_len, st);
}

int r4_pseudo_link(struct r4_db *db, struct r4_pseudo_ctx *c, const char *target,
		   const struct r4_stat *st, const char *dir, const struct r4_stat *d,
		   const uint8_t *name, size_t n, char **path, struct r4_stat *out)
{
	struct r4_stat ds;
	int rc;

	*path = NULL;
	if (!S_ISDIR(d->mode))
		return SAY(c, -ENOTDIR, "cannot link in '%s'", dir);
	if (S_ISDIR(st->mode))
		return SAY(c, -EPERM, "cannot link to '%s': it is a directory", target);
	if ((rc = entry_path(c, "link", dir, name, n, path)) ||
	    (rc = tell(c, d->ino, -1, *path)) || (rc = tell(c, st->ino, R4_PSEUDO_NLINK, target)))
		return rc;
	if ((rc = r4_stat(db, dir, &ds)))
		return SAY(c, rc, "cannot change '%s'", dir);
	if ((rc = may_change(db, c, &ds, NULL, dir, *path)))
		return rc;
	if ((rc = r4_link(db, target, *path)))
		return SAY(c, rc, "cannot link '%s' to '%s'", *path, target);
	if ((rc = r4_stat(db, *path, out)))
		return rc;
	return audit(db, c, st->ino, ds.ino, "link", *path, 0);
}

int r4_pseudo_symlink(struct r4_db *db, struct r4_pseudo_ctx *c, const char *path,
		      const struct r4_stat *st, uint64_t dir, const struct r4_stat *d,
		      const uint8_t *tgt, size_t n, struct r4_stat *out)
{
	int rc;

	if (st && !S_ISLNK(st->mode))
		return SAY(c, S_ISDIR(st->mode) ? -EISDIR : -EEXIST, "cannot make '%s' a symlink",
			   path);
	if ((st && (rc = may_change_own(db, c, st, path))) || (rc = tell(c, dir, -1, path)))
		return rc;
	if (st && (!n || memchr(tgt, 0, n)))
		return SAY(c, -EINVAL, "cannot make '%s' a symlink", path);
	if (st && (rc = r4_unlink(db, path)))
		return SAY(c, rc, "cannot replace '%s'", path);
	return r4_pseudo_make(db, c, path, st ? NULL : d, R4_NEW_SYMLINK, 0, 0777, tgt, n, out);
}

/* A write drops set-id bits as perm.c says. */
static int clear_suid(struct r4_db *db, struct r4_pseudo_ctx *c, const char *path,
		      const struct r4_stat *st)
{
	struct r4_setattr sa = {.mask = R4_SET_MODE};

	sa.mode = r4_perm_after_write(c->actor, st);
	return sa.mode == st->mode ? 0 : r4_setattr(db, path, &sa);
}

/* Write an aggregate's text (section 7). */
static int aggr_put(struct r4_db *db, struct r4_pseudo_ctx *c, const char *path,
		    const struct r4_stat *st, const uint8_t *p, size_t n, bool append)
{
	char why[200];
	int rc;

	rc = r4_aggr_write(db, c->who, path, p, n, append, why, sizeof(why));
	if (rc && why[0])
		return SAY(c, r4_db_seen(db, rc), "cannot write '%s': %s", path, why);
	if (rc)
		return SAY(c, r4_db_seen(db, rc), "cannot write '%s'", path);
	c->stored = n;
	return audit(db, c, st->ino, 0, append ? "append" : "write", path, n);
}

/* A field's value: no ':' or LF (one trailing LF is dropped).  Writing
 * the name field renames the record: c->moved is the field's new path. */
static int field_put(struct r4_db *db, struct r4_pseudo_ctx *c, const char *path,
		     const struct r4_stat *st, unsigned format, const uint8_t *p, size_t *n,
		     bool append)
{
	char *rec = NULL, *agg = NULL, *to = NULL, why[160];
	struct r4_stat rst;
	int rc = 0;

	r4_pseudo_chop(p, n);
	if (append) {	/* the value it makes is judged */
		struct r4_buf v = {0};

		if (!(rc = read_all(db, path, 0, st->size, &v)) && !(rc = r4_buf_add(&v, p, *n)))
			rc = r4_aggr_field_check(format, base_name(path), (const char *)v.p, v.len,
						 why, sizeof(why));
		r4_buf_free(&v);
		if (rc == -EINVAL)
			return SAY(c, rc, "cannot append to '%s': %s", path, why);
		if (rc)
			return SAY(c, rc, "cannot append to '%s'", path);
	} else if (r4_aggr_field_check(format, base_name(path), (const char *)p, *n, why,
				       sizeof(why))) {
		return SAY(c, -EINVAL, "cannot write '%s': %s", path, why);
	}
	if (!r4_aggr_is_name_field(format, path))
		return 0;
	if (append)
		return SAY(c, -EINVAL, "cannot append to '%s': it names the record", path);
	if ((rc = newname(p, *n)))
		return SAY(c, -EINVAL, "cannot write '%s': '%.*s' cannot name a record", path,
			   (int)*n, (const char *)p);
	if (!(rec = dir_of(path)) || !(agg = dir_of(rec)) ||
	    !(to = r4_path_join(agg, (const char *)p, *n))) {
		rc = -ENOMEM;
		goto out;
	}
	if (!strcmp(to, rec))
		goto out;
	if ((rc = r4_stat(db, rec, &rst))) {
		rc = SAY(c, rc, "cannot rename '%s'", rec);
		goto out;
	}
	if (!may(db, c, st, 2)) {
		rc = SAY(c, -EACCES, "cannot write '%s'", path);
		goto out;
	}
	if ((rc = may_change_in(db, c, agg, &rst, rec)))
		goto out;
	if ((rc = r4_rename(db, rec, to, R4_RENAME_NOREPLACE))) {
		rc = SAY(c, rc, "cannot rename '%s' to '%s'", rec, to);
		goto out;
	}
	if (!(c->moved = r4_path_join(to, base_name(path), strlen(base_name(path))))) {
		rc = -ENOMEM;
		goto out;
	}
	rc = audit(db, c, rst.ino, 0, "rename", to, *n);
out:
	r4_free(rec);
	r4_free(agg);
	r4_free(to);
	return rc;
}

/* Replace (append: extend) the contents of the object (section 5.1). */
static int put_contents(struct r4_db *db, struct r4_pseudo_ctx *c, const char *path,
			const struct r4_stat *st, const uint8_t *p, size_t n, bool append)
{
	unsigned format = 0;
	int rc;

	if (S_ISDIR(st->mode)) {
		unsigned role = role_of(db, path, st, NULL);

		if (role == R4_ROLE_AGGREGATE)
			return aggr_put(db, c, path, st, p, n, append);
		if (role == R4_ROLE_RECORD)
			return SAY(c, -EOPNOTSUPP, "cannot write '%s': write its aggregate or one of "
				   "its fields", path);
		return SAY(c, -EISDIR, "cannot write '%s'", path);
	}
	if (!S_ISREG(st->mode))
		return SAY(c, -EINVAL, "cannot write '%s': not a file", path);
	if (is_invert(db, st))
		return SAY(c, -EOPNOTSUPP, "cannot write '%s': an invert is its parts (write them, "
			   "or its ..invert)", path);
	if (!may(db, c, st, 2))
		return SAY(c, -EACCES, "cannot write '%s'", path);
	if (role_of(db, path, st, &format) == R4_ROLE_FIELD &&
	    (rc = field_put(db, c, path, st, format, p, &n, append)))
		return rc;
	if (c->moved)
		path = c->moved;	/* the name field, renamed with its record */
	if (append)
		rc = r4_write(db, path, st->size, p, n);
	else if (!(rc = n ? r4_write(db, path, 0, p, n) : 0) && st->size > n)
		rc = r4_truncate(db, path, n);
	if (!rc)
		rc = clear_suid(db, c, path, st);
	if (rc)
		return SAY(c, rc, "cannot write '%s'", path);
	c->stored = n;
	return audit(db, c, st->ino, 0, append ? "append" : "write", path, n);
}

/* A symlink's text, replaced in place (..body of a symlink). */
static int set_link_text(struct r4_db *db, struct r4_pseudo_ctx *c, const char *path,
			 const struct r4_stat *st, const uint8_t *p, size_t n)
{
	int rc;

	if (!n || memchr(p, 0, n))
		return SAY(c, -EINVAL, "cannot write '%s/..body'", path);
	if (!may(db, c, st, 2))
		return SAY(c, -EACCES, "cannot write '%s/..body'", path);
	if ((rc = r4_fs_set_symlink(db, path, p, n)))
		return SAY(c, rc, "cannot write '%s/..body'", path);
	c->stored = n;
	return 0;
}

/* ..name <- a new name in the same directory. */
static int do_rename(struct r4_db *db, struct r4_pseudo_ctx *c, const char *path,
		     const struct r4_stat *st, uint64_t dir_ino, const uint8_t *p, size_t n)
{
	char *to = NULL, *dir = NULL;
	int rc;

	r4_pseudo_chop(p, &n);
	if (!strcmp(path, "/"))
		return SAY(c, -EBUSY, "cannot rename '/'");
	if ((rc = newname(p, n)))
		return SAY(c, rc, "cannot rename '%s' to '%.*s'", path, (int)n, (const char *)p);
	if (!(dir = dir_of(path)) || !(to = r4_path_join(dir, (const char *)p, n))) {
		rc = -ENOMEM;
		goto out;
	}
	if (!strcmp(to, path))
		goto out;	/* its own name */
	if ((rc = may_change_in(db, c, dir, st, path)))
		goto out;
	unsigned format = 0;
	bool record = S_ISDIR(st->mode) && role_of(db, path, st, &format) == R4_ROLE_RECORD;

	if (record && (memchr(p, ':', n) || memchr(p, '\n', n))) {
		rc = SAY(c, -EINVAL, "cannot rename '%s' to '%.*s': a record's name holds no ':' "
			 "or line feed", path, (int)n, (const char *)p);
		goto out;
	}
	if ((rc = r4_rename(db, path, to, R4_RENAME_NOREPLACE))) {
		rc = SAY(c, rc, "cannot rename '%s' to '%.*s'", path, (int)n, (const char *)p);
		goto out;
	}
	if ((record && (rc = r4_aggr_renamed(db, to, format))) ||
	    (rc = audit(db, c, st->ino, dir_ino, "rename", to, n))) {
		rc = SAY(c, rc, "cannot rename '%s'", path);
		goto out;
	}
	c->moved = to;
	to = NULL;
	c->stored = n;
out:
	r4_free(to);
	r4_free(dir);
	return rc;
}

/* A name to remove from the directory at path: any entry but "." and
 * "..", a "..x" too (docs/semantics.md, "Names"), but not r4's own records. */
static int removable(const char *path, const uint8_t *p, size_t n)
{
	const char *s = (const char *)p;

	if (!n || memchr(p, '/', n) || memchr(p, 0, n) || r4_ns_dot(s, n) ||
	    r4_ns_private(!strcmp(path, "/"), s, n))
		return -EINVAL;
	return n > 255 ? -ENAMETOOLONG : 0;
}

/* ..unlink <- the name of an entry to remove (a whole record of an aggregate). */
static int do_unlink(struct r4_db *db, struct r4_pseudo_ctx *c, const char *dpath,
		     const struct r4_stat *d, const uint8_t *p, size_t n)
{
	struct r4_stat st;
	char *path;
	int rc;

	r4_pseudo_chop(p, &n);
	if (!S_ISDIR(d->mode))
		return SAY(c, -ENOTDIR, "cannot remove entries of '%s'", dpath);
	if ((rc = removable(dpath, p, n)))
		return SAY(c, rc, "cannot remove '%.*s' from '%s'", (int)n, (const char *)p, dpath);
	if (!(path = r4_path_join(dpath, (const char *)p, n)))
		return -ENOMEM;
	if ((rc = r4_stat(db, path, &st))) {
		rc = SAY(c, rc, "cannot remove '%s'", path);
	} else if (!(rc = may_change_in(db, c, dpath, &st, path))) {
		bool record = S_ISDIR(st.mode) && role_of(db, path, &st, NULL) == R4_ROLE_RECORD;

		/* recorded first: the object's last name takes its audit setting
		 * with it (a failure below undoes the record with the unit) */
		if ((rc = audit(db, c, st.ino, d->ino, "unlink", path, n)))
			goto out;
		rc = record ? r4_aggr_rmtree(db, path) : S_ISDIR(st.mode) ? r4_rmdir(db, path)
		     : r4_unlink(db, path);
		if (rc)
			rc = SAY(c, rc, "cannot remove '%s'", path);
		else
			c->stored = n;
	}
out:
	r4_free(path);
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
static int invert_define(struct r4_db *db, struct r4_pseudo_ctx *c, const char *path,
			 const struct r4_stat *st, const uint8_t *p, size_t n)
{
	struct r4_part *parts = NULL;
	struct r4_buf cur = {0};
	struct r4_meta m = {0};
	size_t np = 0;
	char why[200];
	bool changed = false;
	int rc;

	if (!is_invert(db, st))
		return SAY(c, -EOPNOTSUPP, "cannot write '%s/..invert': not an invert (make one "
			   "with ..new/(..., type <- invert))", path);
	if (!may(db, c, st, 2))
		return SAY(c, -EACCES, "cannot write '%s/..invert'", path);
	if ((rc = r4_invert_parse(p, n, &parts, &np, why, sizeof(why))))
		return rc == -EINVAL ? SAY(c, rc, "cannot write '%s/..invert': %s", path, why) : rc;
	for (size_t i = 0; i < np && !rc; i++) {
		if (!parts[i].path || !parts[i].text)
			continue;
		if (part(db, c, parts[i].path, NULL, 0, true, &cur) || cur.len != parts[i].len ||
		    memcmp(cur.p, parts[i].text, cur.len)) {
			rc = part(db, c, parts[i].path, parts[i].text, parts[i].len, false, NULL);
			changed = true;
		}
	}
	if (!rc && (rc = r4_meta_get(db, st->ino, &m)))
		rc = SAY(c, r4_db_seen(db, rc), "cannot write '%s/..invert'", path);
	if (!rc && !same_parts(m.parts, m.nparts, parts, np)) {
		r4_invert_free(m.parts, m.nparts);
		m.parts = NULL;
		m.nparts = 0;
		for (size_t i = 0; i < np && !rc; i++)
			rc = r4_meta_add_part(&m, parts[i].path, parts[i].text, parts[i].len);
		if (rc || (rc = r4_meta_put(db, st->ino, &m)))
			rc = SAY(c, rc, "cannot write '%s/..invert'", path);
		changed = true;
	}
	r4_meta_fini(&m);
	r4_invert_free(parts, np);
	r4_buf_free(&cur);
	if (rc)
		return rc;
	c->stored = n;
	return changed ? audit(db, c, st->ino, 0, "write", path, n) : 0;
}

typedef int meta_fn(struct r4_db *db, struct r4_pseudo_ctx *c, struct r4_meta *m, void *arg);

/* Change the object's meta record with fn (owner or root only, section 6.4). */
static int meta_change(struct r4_db *db, struct r4_pseudo_ctx *c, const char *path,
		       const struct r4_stat *st, const char *what, meta_fn *fn, void *arg)
{
	struct r4_meta m;
	int rc;

	if (!r4_perm_owns(c->who, st))
		return SAY(c, -EPERM, "cannot change '%s/%s': only its owner may", path, what);
	if (r4_perm_flags_xattr(st->flags))
		return SAY(c, -EPERM, "cannot change '%s/%s': it is immutable or append-only", path,
			   what);
	if ((rc = r4_meta_get(db, st->ino, &m)))
		return SAY(c, rc, "cannot change '%s/%s'", path, what);
	if (!(rc = fn(db, c, &m, arg)) && (rc = r4_meta_put(db, st->ino, &m)))
		rc = SAY(c, rc, "cannot change '%s/%s'", path, what);
	r4_meta_fini(&m);
	return rc ? rc : audit(db, c, st->ino, 0, "setattr", path, 0);
}

static int set_rule(struct r4_db *db, struct r4_pseudo_ctx *c, struct r4_meta *m, void *arg)
{
	const struct r4_rule *r = arg;

	(void)db;
	for (unsigned i = 0; i < m->nrules; i++)
		if (m->rules[i].gid == r->gid && m->rules[i].id == r->id) {
			m->rules[i] = *r;
			return 0;
		}
	if (m->nrules == R4_MAX_RULES)
		return SAY(c, -ENOSPC, "an object holds at most %d access rules", R4_MAX_RULES);
	m->rules[m->nrules++] = *r;
	return 0;
}

struct text {
	const uint8_t *p;
	size_t n;
};

/* ..acl <- text: "uid N ACCESS" / "gid N ACCESS" lines replace the rules. */
static int set_rules(struct r4_db *db, struct r4_pseudo_ctx *c, struct r4_meta *m, void *arg)
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
			return SAY(c, -EINVAL, "an access rule is 'uid N ACCESS' or 'gid N ACCESS'");
		memcpy(line, p, k);
		line[k] = 0;
		if (k) {
			if (sscanf(line, "%7s %lu %15s%n", kind, &id, acc, &used) != 3 ||
			    (size_t)used != k || id > UINT32_MAX - 1 ||
			    (strcmp(kind, "uid") && strcmp(kind, "gid")))
				return SAY(c, -EINVAL, "'%s' is not an access rule ('uid N ACCESS' or "
					   "'gid N ACCESS')", line);
			r.id = (uint32_t)id;
			r.gid = kind[0] == 'g';
			r.access = 0xff;
			for (unsigned a = 0; r4_accesses[a]; a++)
				if (!strcmp(acc, r4_accesses[a]))
					r.access = (uint8_t)a;
			if (r.access == 0xff)
				return SAY(c, -EINVAL, "'%s': access is denied, read or write", line);
			rc = set_rule(db, c, m, &r);
		}
		p += k + (lf != NULL);
		n -= k + (lf != NULL);
	}
	return rc;
}

/* ..audit <- the log's absolute path (an existing regular file), or empty. */
static int set_audit(struct r4_db *db, struct r4_pseudo_ctx *c, struct r4_meta *m, void *arg)
{
	const char *log = arg;
	struct r4_stat st;
	int rc;

	r4_free(m->audit);
	m->audit = NULL;
	if (!log)
		return 0;
	if (log[0] != '/')
		return SAY(c, -EINVAL, "the audit log is named by an absolute path");
	if ((rc = r4_stat(db, log, &st)))
		return SAY(c, rc, "cannot audit into '%s'", log);
	if (!S_ISREG(st.mode))
		return SAY(c, -EINVAL, "cannot audit into '%s': not a file", log);
	return (m->audit = r4_memdup(log, strlen(log))) ? 0 : -ENOMEM;
}

int r4_pseudo_rule(struct r4_db *db, struct r4_pseudo_ctx *c, const char *path,
		   const struct r4_stat *st, const uint8_t *id, size_t n, bool gid, unsigned access)
{
	struct r4_rule r = {0, gid, (uint8_t)access};
	int rc;

	if ((rc = id_of(c, gid ? "gid" : "uid", id, n, &r.id)) ||
	    (rc = tell(c, st->ino, R4_PSEUDO_ACL, path)))
		return rc;
	return meta_change(db, c, path, st, "..acl", set_rule, &r);
}

int r4_pseudo_audit_into(struct r4_db *db, struct r4_pseudo_ctx *c, const char *path,
			 const struct r4_stat *st, const char *log)
{
	int rc = tell(c, st->ino, R4_PSEUDO_AUDIT, path);

	return rc ? rc : meta_change(db, c, path, st, "..audit", set_audit, (void *)log);
}

/* ..plugin/file <- "reg40" on an invert: it keeps its text as plain data. */
static int invert_freeze(struct r4_db *db, struct r4_pseudo_ctx *c, const char *path,
			 const struct r4_stat *st)
{
	struct r4_buf text = {0};
	struct r4_meta m;
	int rc;

	if (!may(db, c, st, 2))
		return SAY(c, -EACCES, "cannot write '%s'", path);
	if ((rc = contents(db, c, path, st, &text)))
		goto out;
	if ((rc = r4_meta_get(db, st->ino, &m)))
		goto failed;
	r4_invert_free(m.parts, m.nparts);
	m.parts = NULL;
	m.nparts = 0;
	m.kind = R4_META_NONE;
	rc = r4_meta_put(db, st->ino, &m);
	r4_meta_fini(&m);
	if (!rc && text.len)
		rc = r4_write(db, path, 0, text.p, text.len);
failed:
	if (rc)
		rc = SAY(c, r4_db_seen(db, rc), "cannot convert '%s'", path);
	else
		rc = audit(db, c, st->ino, 0, "write", path, text.len);
out:
	r4_buf_free(&text);
	return rc;
}

/* ..plugin/file <- "aggregate" (or "aggregate colon") turns a text file
 * into an aggregate; "reg40" turns an aggregate back into a text file.
 * The object is replaced by a new one of the same name, owner and mode. */
static int convert(struct r4_db *db, struct r4_pseudo_ctx *c, const char *path,
		   const struct r4_stat *st, uint64_t dir_ino, const uint8_t *p, size_t n)
{
	struct r4_buf text = {0};
	unsigned format = R4_FORMAT_PASSWD, role;
	bool to_agg;
	int rc;

	r4_pseudo_chop(p, &n);
	role = S_ISDIR(st->mode) ? role_of(db, path, st, &format) : R4_ROLE_NONE;
	if (n == 9 && !memcmp(p, "aggregate", 9))
		to_agg = true;
	else if (n == 16 && !memcmp(p, "aggregate passwd", 16))
		to_agg = true;
	else if (n == 15 && !memcmp(p, "aggregate colon", 15))
		to_agg = true, format = R4_FORMAT_COLON;
	else if (n == 5 && !memcmp(p, "reg40", 5))
		to_agg = false;
	else
		return SAY(c, -EOPNOTSUPP, "cannot switch '%s/..plugin/file' to '%.*s': r4 converts "
			   "between reg40 and aggregate", path, (int)n, (const char *)p);
	if (!to_agg && is_invert(db, st))
		return invert_freeze(db, c, path, st);
	if (to_agg ? role == R4_ROLE_AGGREGATE : S_ISREG(st->mode))
		return 0;	/* already */
	if (to_agg ? !S_ISREG(st->mode) : role != R4_ROLE_AGGREGATE)
		return SAY(c, -EOPNOTSUPP, "cannot switch '%s/..plugin/file' to '%.*s': it is not "
			   "a %s", path, (int)n, (const char *)p,
			   to_agg ? "regular file" : "aggregate");
	if ((rc = may_change_own(db, c, st, path)) || (rc = contents(db, c, path, st, &text)))
		goto out;
	uint32_t perm = st->mode & 07777;
	struct r4_stat ns;
	char why[200] = "";

	if (to_agg) {
		/* a directory may be searched where the file could be read */
		perm |= (perm & 0444) >> 2;
		if (!(rc = r4_unlink(db, path)) &&
		    !(rc = r4_mkdir(db, path, perm, st->uid, st->gid)) &&
		    !(rc = r4_stat(db, path, &ns)) && !(rc = r4_aggr_make(db, ns.ino, format)))
			rc = r4_aggr_write(db, NULL, path, text.p, text.len, false, why, sizeof(why));
	} else {
		perm &= 07666;
		if (!(rc = r4_aggr_rmtree(db, path)) &&
		    !(rc = r4_create(db, path, perm, st->uid, st->gid)) && text.len)
			rc = r4_write(db, path, 0, text.p, text.len);
	}
	if (rc)
		rc = SAY(c, r4_db_seen(db, rc), why[0] ? "cannot convert '%s': %s"
			 : "cannot convert '%s'%s", path, why);
	else
		rc = audit(db, c, dir_ino, 0, "create", path, text.len);
out:
	r4_buf_free(&text);
	return rc;
}

/* ..plugin/formatting of a regular file (its body is laid out again) and
 * ..plugin/hash of an empty directory: the owner's to switch. */
static int switch_plugin(struct r4_db *db, struct r4_pseudo_ctx *c, const char *path,
			 const struct r4_stat *st, const char *sub, const uint8_t *p, size_t n)
{
	unsigned type;
	int member = r4_pset_member(sub, strlen(sub), &type), id, rc;

	r4_pseudo_chop(p, &n);
	if (member != R4_PSET_FORMATTING && member != R4_PSET_HASH)
		return SAY(c, -EOPNOTSUPP, "cannot switch '%s/..plugin/%s': r4 switches file, "
			   "formatting and hash", path, sub);
	if ((id = r4_plugin_id(type, (const char *)p, n)) < 0)
		return SAY(c, -EINVAL, "cannot switch '%s/..plugin/%s': '%.*s' is no %s plugin",
			   path, sub, (int)n, (const char *)p, sub);
	if (!r4_perm_owns(c->who, st))
		return SAY(c, -EPERM, "cannot switch '%s/..plugin/%s': only its owner may", path, sub);
	if (r4_perm_flags_xattr(st->flags))
		return SAY(c, -EPERM, "cannot switch '%s/..plugin/%s': it is immutable or "
			   "append-only", path, sub);
	if (is_computed(db, path, st))
		return SAY(c, -EOPNOTSUPP, "cannot switch '%s/..plugin/%s' of %s", path, sub,
			   S_ISDIR(st->mode) ? "an aggregate" : "an invert");
	rc = r4_fs_set_plugin(db, path, (unsigned)member, (unsigned)id);
	if (rc == -ENOTEMPTY)
		return SAY(c, rc, "cannot switch '%s/..plugin/hash': a directory changes its hash "
			   "only while it is empty", path);
	if (rc == -EOPNOTSUPP)
		return SAY(c, rc, "cannot switch '%s/..plugin/%s': %s", path, sub,
			   member == R4_PSET_FORMATTING ? "only a regular file that is not "
			   "compressed has a formatting" : "only a directory has a hash");
	if (rc)
		return SAY(c, rc, "cannot switch '%s/..plugin/%s'", path, sub);
	return audit(db, c, st->ino, 0, "setattr", path, n);
}

/* May c->who make change sa of st (perm.c; sa narrowed, set-id bits
 * dropped as the change does)? */
static int setattr_perm(struct r4_db *db, struct r4_pseudo_ctx *c, const char *path,
			const struct r4_stat *st, const char *pn, struct r4_setattr *sa)
{
	int rc = r4_perm_setattr(db, c->who, st, sa, false);

	if (rc == -EPERM)
		return SAY(c, rc, "cannot change '%s/%s'", path, pn);
	if (rc)
		return SAY(c, rc, "cannot write '%s/%s'", path, pn);
	r4_perm_setattr_effects(c->actor, st, sa);
	return 0;
}

/* ..uid, ..gid, ..mode, ..size, ..atime, ..mtime <- text: what setattr it asks. */
static int setattr_of(struct r4_db *db, struct r4_pseudo_ctx *c, const char *path,
		      const struct r4_stat *st, enum r4_pseudo ps, const uint8_t *p, size_t n,
		      struct r4_setattr *sa)
{
	const char *pn = r4_pseudo_name(ps);
	int64_t num = 0;

	switch (ps) {
	case R4_PSEUDO_MODE:
		sa->mask = R4_SET_MODE;
		return octal(c, pn, p, n, &sa->mode);
	case R4_PSEUDO_UID:
		sa->mask = R4_SET_UID;
		return id_of(c, pn, p, n, &sa->uid);
	case R4_PSEUDO_GID:
		sa->mask = R4_SET_GID;
		return id_of(c, pn, p, n, &sa->gid);
	case R4_PSEUDO_SIZE:
		if (decimal(p, n, false, &num))
			return SAY(c, -EINVAL, "'%s' takes a decimal size", pn);
		if (is_computed(db, path, st))
			return SAY(c, -EOPNOTSUPP, "cannot write '%s/%s': the size of %s is its text's",
				   path, pn, S_ISDIR(st->mode) ? "an aggregate" : "an invert");
		if (S_ISDIR(st->mode))
			return SAY(c, -EISDIR, "cannot write '%s/%s'", path, pn);
		if (!S_ISREG(st->mode))
			return SAY(c, -EINVAL, "cannot write '%s/%s': not a file", path, pn);
		sa->mask = R4_SET_SIZE | R4_SET_MTIME_NOW;
		sa->size = (uint64_t)num;
		return 0;
	case R4_PSEUDO_ATIME:
	case R4_PSEUDO_MTIME:
		if (decimal(p, n, true, &num))
			return SAY(c, -EINVAL, "'%s' takes decimal seconds", pn);
		if (num < 0 || num > UINT32_MAX)
			return SAY(c, -EINVAL, "cannot write '%s/%s': the format stores times from 0 "
				   "to 4294967295", path, pn);
		sa->mask = ps == R4_PSEUDO_ATIME ? R4_SET_ATIME : R4_SET_MTIME;
		sa->atime.tv_sec = sa->mtime.tv_sec = (time_t)num;
		return 0;
	default:
		return SAY(c, -EACCES, "cannot write '%s/%s': it is read-only", path, pn);
	}
}

int r4_pseudo_put(struct r4_db *db, struct r4_pseudo_ctx *c, const char *path,
		  const struct r4_stat *st, uint64_t dir, enum r4_pseudo id, const char *sub,
		  const uint8_t *p, size_t n, bool append)
{
	struct r4_setattr sa = {0};
	const char *pn = r4_pseudo_name(id);
	size_t raw = n;
	int rc;

	if ((rc = tell_put(db, c, path, st, dir, id, sub, p, n)))
		return rc;
	if (id == R4_PSEUDO_NONE || (append && id == R4_PSEUDO_BODY && !S_ISLNK(st->mode)))
		return put_contents(db, c, path, st, p, n, append);
	if (append)
		return SAY(c, -EINVAL, "cannot append to '%s/%s'", path, pn);
	switch (id) {
	case R4_PSEUDO_BODY:
		if (S_ISLNK(st->mode))
			return set_link_text(db, c, path, st, p, n);
		return put_contents(db, c, path, st, p, n, false);
	case R4_PSEUDO_NAME:
		return do_rename(db, c, path, st, dir, p, n);
	case R4_PSEUDO_UNLINK:
		return do_unlink(db, c, path, st, p, n);
	case R4_PSEUDO_ACL:
		rc = meta_change(db, c, path, st, pn, set_rules, &(struct text){p, n});
		break;
	case R4_PSEUDO_AUDIT: {
		char *log;

		r4_pseudo_chop(p, &n);
		if (memchr(p, 0, n))
			return SAY(c, -EINVAL, "the audit log is named by a path");
		if (!(log = r4_memdup(p, n)))
			return -ENOMEM;
		rc = meta_change(db, c, path, st, pn, set_audit, n ? log : NULL);
		r4_free(log);
		break;
	}
	case R4_PSEUDO_INVERT:
		return invert_define(db, c, path, st, p, n);
	case R4_PSEUDO_PLUGIN:
		if (!sub)
			return SAY(c, -EACCES, "cannot write '%s/%s': it is read-only", path, pn);
		rc = !strcmp(sub, "file") ? convert(db, c, path, st, dir, p, n)
		     : switch_plugin(db, c, path, st, sub, p, n);
		break;
	default:
		if ((rc = setattr_of(db, c, path, st, id, p, n, &sa)) ||
		    (rc = setattr_perm(db, c, path, st, pn, &sa)))
			return rc;
		if ((rc = r4_setattr(db, path, &sa)))
			return SAY(c, rc, "cannot write '%s/%s'", path, pn);
		rc = audit(db, c, st->ino, 0, id == R4_PSEUDO_SIZE ? "truncate" : "setattr", path,
			   raw);
		break;
	}
	if (!rc)
		c->stored = raw;
	return rc;
}

/* A window's offset or length (what): decimal, from 0; p NULL: 0. */
static int window_number(struct r4_pseudo_ctx *c, const char *what, const uint8_t *p, size_t n,
			 uint64_t *out)
{
	int64_t v = 0;

	if (p && (decimal(p, n, true, &v) || v < 0))
		return SAY(c, -EINVAL, "'%s' takes a decimal number from 0", what);
	*out = (uint64_t)v;
	return 0;
}

int r4_pseudo_window(struct r4_db *db, struct r4_pseudo_ctx *c, const char *path,
		     const struct r4_stat *st, const uint8_t *off, size_t offn, const uint8_t *len,
		     size_t lenn, unsigned mode, struct r4_window *w)
{
	int rc;

	if (S_ISDIR(st->mode) && !r4_is_computed(db, st->ino))	/* (an aggregate) */
		return SAY(c, -EISDIR, "cannot take a window of '%s'", path);
	if (!S_ISREG(st->mode) && !S_ISDIR(st->mode))
		return SAY(c, -EINVAL, "cannot take a window of '%s': not a file", path);
	if ((rc = window_number(c, "offset", off, offn, &w->off)) ||
	    (rc = window_number(c, "length", len, lenn, &w->len)))
		return rc;
	w->len_set = len != NULL;
	w->mode = mode;
	return 0;
}

/* Section 6.3 on an aggregate: its text, read, changed in memory, written
 * back whole (the records then follow it). */
static int window_put_text(struct r4_db *db, struct r4_pseudo_ctx *c, const char *path,
			   const struct r4_stat *st, const struct r4_window *w, const uint8_t *p,
			   size_t n)
{
	static const uint8_t zeros[64];
	struct r4_buf t = {0}, o = {0};
	uint64_t size, len, stored = n, from;
	int rc;

	if (is_invert(db, st))
		return SAY(c, -EOPNOTSUPP, "cannot write '%s/..range': an invert is its parts", path);
	if ((rc = contents(db, c, path, st, &t)))
		return rc;
	size = t.len;
	if (w->off > size) {
		rc = SAY(c, -EINVAL, "cannot write '%s/..range': a window of an aggregate starts "
			 "within its text (%llu bytes)", path, (unsigned long long)size);
		goto out;
	}
	len = w->len_set ? w->len : size - w->off;
	rc = r4_buf_add(&o, t.p, (size_t)w->off);
	switch (w->mode) {
	case R4_WIN_ZERO:
		stored = R4_MIN(n, len);
		if (!rc)
			rc = r4_buf_add(&o, p, (size_t)stored);
		for (uint64_t k = stored; k < len && !rc; k += sizeof(zeros))
			rc = r4_buf_add(&o, zeros, (size_t)R4_MIN(len - k, sizeof(zeros)));
		from = w->off + len;
		break;
	case R4_WIN_OVERLAY:
		stored = R4_MIN(n, len);
		if (!rc)
			rc = r4_buf_add(&o, p, (size_t)stored);
		from = w->off + stored;
		break;
	default:	/* shift */
		if (!rc)
			rc = r4_buf_add(&o, p, n);
		from = w->off + R4_MIN(len, size - w->off);
		break;
	}
	if (!rc && from < size)
		rc = r4_buf_add(&o, t.p + from, (size_t)(size - from));
	if (!rc && !(rc = aggr_put(db, c, path, st, o.p, o.len, false)))
		c->stored = stored;
out:
	r4_buf_free(&t);
	r4_buf_free(&o);
	return rc;
}

int r4_pseudo_window_put(struct r4_db *db, struct r4_pseudo_ctx *c, const char *path,
			 const struct r4_stat *st, const struct r4_window *w, const uint8_t *p,
			 size_t n)
{
	struct r4_buf tail = {0};
	uint64_t size, len, end, stored = n;
	int rc;

	if ((rc = tell_put(db, c, path, st, 0, R4_PSEUDO_RANGE, NULL, p, n)))
		return rc;
	if (is_computed(db, path, st))
		return window_put_text(db, c, path, st, w, p, n);
	if (!may(db, c, st, 2))
		return SAY(c, -EACCES, "cannot write '%s'", path);
	size = st->size;
	len = w->len_set ? w->len : (w->off < size ? size - w->off : 0);
	if (w->off > size && (rc = r4_truncate(db, path, w->off)))
		goto out;
	if (w->off > size)
		size = w->off;
	switch (w->mode) {
	case R4_WIN_ZERO:
		/* exactly length bytes: D, then zero bytes (a hole past the end) */
		stored = R4_MIN(n, len);
		if (stored && (rc = r4_write(db, path, w->off, p, (size_t)stored)))
			goto out;
		size = R4_MAX(size, w->off + stored);
		end = w->off + len;
		for (uint64_t at = w->off + stored; at < R4_MIN(end, size) && !rc;) {
			static const uint8_t zeros[65536];
			size_t k = (size_t)R4_MIN(R4_MIN(end, size) - at, sizeof(zeros));

			rc = r4_write(db, path, at, zeros, k);
			at += k;
		}
		if (!rc && end > size)
			rc = r4_truncate(db, path, end);
		break;
	case R4_WIN_OVERLAY:
		stored = R4_MIN(n, len);
		if (stored)
			rc = r4_write(db, path, w->off, p, (size_t)stored);
		break;
	default:	/* shift */
		end = len < size - w->off ? w->off + len : size;
		if ((rc = read_all(db, path, end, size - end, &tail)))
			break;
		if (n && (rc = r4_write(db, path, w->off, p, n)))
			break;
		if (tail.len && (rc = r4_write(db, path, w->off + n, tail.p, tail.len)))
			break;
		if (size > w->off + n + tail.len)
			rc = r4_truncate(db, path, w->off + n + tail.len);
		break;
	}
out:
	r4_buf_free(&tail);
	if (!rc)
		rc = clear_suid(db, c, path, st);
	if (rc)
		return SAY(c, rc, "cannot write '%s/..range'", path);
	c->stored = stored;
	return audit(db, c, st->ino, 0, "write", path, stored);
}

/* ============================ the public calls ========================== */

/* The directory an object's entry is in (0: the root has none, or unknown). */
static uint64_t dir_ino(struct r4_db *db, const char *path)
{
	struct r4_stat d;
	char *dir;
	uint64_t ino = 0;

	if (strcmp(path, "/") && (dir = dir_of(path))) {
		if (!r4_stat(db, dir, &d))
			ino = d.ino;
		r4_free(dir);
	}
	return ino;
}

/* What a part's walk reached: the object (*obj its path, r4_free it; *st,
 * *dir the directory it was found in), and the pseudo file of it (*id,
 * ..plugin's *sub, r4_free it) where it ended at one.  A missing last
 * name (R4_NS_MISSING) is made a regular file, as R4L makes one. */
static int part_end(struct r4_db *db, struct r4_pseudo_ctx *c, struct r4_ns_walk *w,
		    char **obj, struct r4_stat *st, uint64_t *dir, enum r4_pseudo *id, char **sub)
{
	const char *r = w->rest, *name;
	size_t len;

	*st = w->st;
	*dir = w->dir_ino;
	if (w->end == R4_NS_AT_MISSING) {
		struct r4_stat d = w->st;

		if (!(*obj = r4_path_join(w->path, w->name, w->len)))
			return -ENOMEM;
		r4_ns_fini(w);
		*dir = d.ino;
		return r4_pseudo_make(db, c, *obj, &d, R4_NEW_REGULAR, 0, 0666, NULL, 0, st);
	}
	*obj = w->path;
	w->path = NULL;
	if (w->end != R4_NS_AT_PSEUDO)
		return 0;
	*id = w->ps->id;
	if (!r4_ns_next(&r, &name, &len))
		return 0;
	if (*id != R4_PSEUDO_PLUGIN || r4_ns_next(&r, &(const char *){0}, &(size_t){0}))
		return -ENOTDIR;	/* (a pseudo file has no children but ..plugin's) */
	return (*sub = r4_memdup(name, len)) ? 0 : -ENOMEM;
}

/*
 * An invert's file part for the public calls, reached as R4L reaches a
 * path made at run time (ns.c's walker, as exec.c walks: symlinks
 * followed, real entries before pseudo names, search on the way for
 * c->who): the object or, where the walk ends at a pseudo name, that
 * pseudo file.  So r4_pseudo_read and R4L give an invert the same text.
 */
static int part_walked(struct r4_db *db, struct r4_pseudo_ctx *c, const char *path,
		       const uint8_t *p, size_t n, bool quiet, struct r4_buf *out)
{
	struct r4_ns_walk w = {
		.db = db,
		.who = c->who,
		.flags = R4_NS_PATH | R4_NS_PSEUDO | R4_NS_FOLLOW | R4_NS_FOLLOW_LAST |
			 (p ? R4_NS_MISSING : 0),
	};
	struct r4_why saved = {""};
	enum r4_pseudo id = R4_PSEUDO_NONE;
	char *obj = NULL, *sub = NULL;
	struct r4_stat st;
	uint64_t dir = 0;
	int rc;

	if (quiet && c->why)
		saved = *c->why;
	if (!(rc = r4_ns_walk(&w, NULL, path)))
		rc = part_end(db, c, &w, &obj, &st, &dir, &id, &sub);
	r4_ns_fini(&w);
	if (rc)
		SAY(c, r4_db_seen(db, rc), "cannot %s '%s'", p ? "write" : "read", path);
	else if (p)
		rc = r4_pseudo_put(db, c, obj, &st, dir, id, sub, p, n, false);
	else
		rc = r4_pseudo_get(db, c, obj, &st, id, sub, out);
	if (rc && quiet && c->why)
		*c->why = saved;
	r4_free(c->moved);
	c->moved = NULL;
	r4_free(obj);
	r4_free(sub);
	return rc;
}

/* An id the public calls take: a pseudo file, not only a parameter block;
 * sub only for ..plugin. */
static int public_id(enum r4_pseudo id, const char *sub)
{
	const char *name = r4_pseudo_name(id);
	const struct r4_pseudo_info *pi = r4_pseudo_lookup(name, strlen(name));

	if (!pi || (pi->flags & R4_PSF_ONLY_BLOCK))
		return -EINVAL;
	return sub && id != R4_PSEUDO_PLUGIN ? -ENOTDIR : 0;
}

int r4_pseudo_read(r4_db *db, const char *path, enum r4_pseudo id, const char *sub, char **out,
		   size_t *len, struct r4_why *why)
{
	struct r4_pseudo_ctx c = {.who = r4_perm_checked(db), .actor = r4_perm_actor(db), .why = why};
	struct r4_buf b = {0};
	struct r4_stat st;
	int rc;

	if (why)
		why->msg[0] = 0;
	if ((rc = public_id(id, sub)))
		return rc;
	if ((rc = r4_access(db, path, c.who, 0, &st)))
		return SAY(&c, rc, "cannot read '%s'", path);
	if ((rc = r4_pseudo_get(db, &c, path, &st, id, sub, &b))) {
		r4_buf_free(&b);
		return rc;
	}
	*out = (char *)b.p;
	*len = b.len;
	return 0;
}

int r4_pseudo_write(r4_db *db, const char *path, enum r4_pseudo id, const char *sub,
		    const void *p, size_t n, bool *changed, struct r4_why *why)
{
	struct r4_pseudo_ctx c = {.who = r4_perm_checked(db), .actor = r4_perm_actor(db), .why = why};
	bool own = !r4_in_txn(db), moved;
	struct r4_stat st;
	uint64_t gen;
	int rc;

	if (why)
		why->msg[0] = 0;
	if ((rc = public_id(id, sub)) || (own && (rc = r4_begin(db))))
		return rc;
	gen = db->gen;	/* (every change bumps it; commit sets it back to 0) */
	if ((rc = r4_access(db, path, c.who, 0, &st)))
		SAY(&c, rc, "cannot read '%s'", path);	/* (the way to it, as R4L says) */
	else
		rc = r4_pseudo_put(db, &c, path, &st, dir_ino(db, path), id, sub, p, n, false);
	moved = db->gen != gen;
	r4_free(c.moved);
	if (own && rc)
		r4_abort(db);
	else if (own)
		rc = r4_commit(db);
	if (!rc && changed)
		*changed = moved;
	return rc;
}
