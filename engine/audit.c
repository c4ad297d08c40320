/*
 * audit.c - the audit records of LANGUAGE.md 6.4, written by the engine:
 * by the fs API's handle calls (fs.c) for the identity r4_act_as set, and
 * for R4L's changes (pseudo.c: r4_audit_change).  One place, so
 * that every host writes the same line.
 *
 * A record is "SECONDS UID OP PATH LENGTH\n" appended to the log an
 * object's ..audit names (meta.c keeps the setting).  A change that
 * records reads the setting, resolves the log and formats its records
 * before it changes anything (r4_audit_add), grabs the room they need in
 * its operation (r4_audit_grab: r4_reg_append_cost), and after the change
 * appends them to the log objects resolved before (r4_audit_write), never
 * by path again: so a missing log refuses the change (-ENOENT) and a full
 * volume refuses it (-ENOSPC) with nothing changed, and once the change is
 * made nothing it does (a rename that moves the log's directory) can keep
 * its records from being written (docs/semantics.md, "Audit").
 *
 * PATH is the caller's: the path of a path call, or for a handle call the
 * place fs.c finds (r4_audit_path climbs ".." for a directory's path).
 */
#include "audit.h"

#include <assert.h>
#include <stdio.h>
#include <sys/stat.h>
#include <time.h>

#include "ns.h"
#include "txn.h"

int r4_audit_of(struct r4_db *db, uint64_t ino, r4_key *log, char **logpath, bool *on)
{
	struct r4_inode l;
	struct r4_meta m;
	int rc;

	*on = false;
	*logpath = NULL;
	/* first, so that an image without records pays nothing per change */
	if (!r4_meta_present(db))
		return 0;
	if ((rc = r4_meta_get(db, ino, &m)))
		return rc;
	*logpath = m.audit;
	m.audit = NULL;
	r4_meta_fini(&m);
	if (!*logpath)
		return 0;
	if ((rc = r4_fs_resolve(db, *logpath, &l)))
		return rc;
	if (S_ISREG(l.sd.sd_mode) && r4_key_objectid(&l.sdkey) != ino) {
		*log = l.sdkey;
		*on = true;
	}
	r4_obj_fini(&l);
	return 0;
}

/* The time a change made now is stamped with (obj.c's clock): the tests'
 * fixed clock, the executor's unit, else now. */
static long long audit_clock(const struct r4_db *db)
{
	struct timespec ts;

	if (db->clock_override >= 0)
		return (long long)db->clock_override;
	if (db->clock_pinned)
		return (long long)db->clock_pin.tv_sec;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (long long)ts.tv_sec;
}

int r4_audit_add(struct r4_db *db, struct r4_audit *a, uint32_t uid, uint64_t ino,
		 const r4_key *log, const char *op, const char *path, uint64_t len)
{
	size_t pn = r4_escape_path(NULL, path, strlen(path)), n;
	char *line;

	for (unsigned i = 0; i < a->n; i++)
		if (a->v[i].ino == ino)
			return 0;	/* (a directory both ends of a rename are in) */
	assert(a->n < R4_AUDIT_MAX);
	/* (two 20-digit numbers, a 10-digit one, spaces, LF, NUL) */
	if (!(line = r4_malloc(pn + strlen(op) + 64)))
		return -ENOMEM;
	n = (size_t)sprintf(line, "%lld %u %s ", audit_clock(db), uid, op);
	n += r4_escape_path(line + n, path, strlen(path));
	n += (size_t)sprintf(line + n, " %llu\n", (unsigned long long)len);
	a->v[a->n++] = (struct r4_audit_rec){ino, *log, line, n};
	return 0;
}

bool r4_audit_is_log(const struct r4_audit *a, uint64_t oid)
{
	for (unsigned i = 0; i < a->n; i++)
		if (r4_key_objectid(&a->v[i].log) == oid)
			return true;
	return false;
}

/* Is record i the first of a's records into its log?  (A log's records
 * are appended together, in order: one write each.) */
static bool first_into(const struct r4_audit *a, unsigned i)
{
	for (unsigned j = 0; j < i; j++)
		if (!r4_key_cmp(&a->v[j].log, &a->v[i].log))
			return false;
	return true;
}

/* The records of a into the log of record i, together. */
static int lines_into(const struct r4_audit *a, unsigned i, struct r4_buf *b)
{
	int rc = 0;

	for (unsigned j = i; j < a->n && !rc; j++)
		if (!r4_key_cmp(&a->v[j].log, &a->v[i].log))
			rc = r4_buf_add(b, a->v[j].line, a->v[j].len);
	return rc;
}

int r4_audit_grab(struct r4_db *db, struct r4_audit *a)
{
	uint64_t total = 0;
	int rc = 0;

	for (unsigned i = 0; i < a->n && !rc; i++) {
		struct r4_buf b = {0};
		struct r4_inode l;
		uint64_t cost;

		if (!first_into(a, i))
			continue;
		if (!(rc = lines_into(a, i, &b)) && !(rc = r4_obj_load(db, &a->v[i].log, &l))) {
			if (!(rc = r4_reg_append_cost(db, &l, b.len, &cost)))
				total += cost;
			r4_obj_fini(&l);
		}
		r4_buf_free(&b);
	}
	return rc || !a->n ? rc : r4_txn_grab(db, total, false);
}

int r4_audit_write(struct r4_db *db, struct r4_audit *a)
{
	struct r4_txn_op op;
	int rc;

	if (!a->n)
		return 0;
	/* nested in the change's operation, which grabbed for it */
	if ((rc = r4_txn_op_begin(db, &op)))
		return rc;
	for (unsigned i = 0; i < a->n && !rc; i++) {
		struct r4_buf b = {0};
		struct r4_inode l;

		if (!first_into(a, i))
			continue;
		if (!(rc = lines_into(a, i, &b)) && !(rc = r4_obj_load(db, &a->v[i].log, &l))) {
			rc = r4_reg_write(db, &l, l.sd.sd_size, b.p, b.len);
			r4_obj_fini(&l);
		}
		r4_buf_free(&b);
	}
	return r4_txn_op_end(db, &op, rc);
}

void r4_audit_fini(struct r4_audit *a)
{
	for (unsigned i = 0; i < a->n; i++)
		r4_free(a->v[i].line);
	a->n = 0;
}

/* ---- PATH: a directory's path, climbing ".." ---- */

struct name_of {
	uint64_t oid;
	struct r4_buf *b;	/* the path so far, built from its end */
	bool found;
};

static int name_fn(void *ctx, const char *name, size_t len, const r4_key *sdkey)
{
	struct name_of *n = ctx;
	struct r4_buf *b = n->b;
	int rc;

	if (r4_key_objectid(sdkey) != n->oid || r4_ns_dot(name, len))
		return 0;
	/* "/name" in front of what is there */
	if ((rc = r4_buf_reserve(b, b->len + len + 2)))
		return rc;
	memmove(b->p + len + 1, b->p, b->len);
	b->p[0] = '/';
	memcpy(b->p + 1, name, len);
	b->len += len + 1;
	n->found = true;
	return 1;
}

int r4_audit_path(struct r4_db *db, const r4_key *dir, const char *name, size_t len, char **out)
{
	struct r4_buf b = {0};
	r4_key cur = *dir, root;
	unsigned depth = 0;
	int rc = 0;

	r4_obj_root_key(&root);
	if (len && (rc = r4_buf_printf(&b, "/%.*s", (int)len, name)))
		return rc;
	while (!rc && r4_key_cmp(&cur, &root)) {
		struct r4_inode d, up;
		struct r4_dirpos pos = {0};
		struct name_of n = {r4_key_objectid(&cur), &b, false};

		if (++depth > 100000)
			rc = R4_CORRUPT(&db->lg, 0, "loop in the directory tree");
		else if (!(rc = r4_obj_load(db, &cur, &d))) {
			if (!(rc = r4_dir_lookup(db, &d, "..", 2, &cur)) &&
			    !(rc = r4_obj_load(db, &cur, &up))) {
				rc = r4_dir_iterate(db, &up, &pos, name_fn, &n);
				if (!rc && !n.found)
					rc = R4_CORRUPT(&db->lg, 0, "directory %llu is not in its '..'",
							(unsigned long long)n.oid);
				r4_obj_fini(&up);
			}
			r4_obj_fini(&d);
		}
	}
	if (!rc && !b.len)
		rc = r4_buf_add(&b, "/", 1);
	if (!rc && !(rc = r4_buf_add(&b, "", 1)))
		*out = (char *)b.p, b.p = NULL;
	r4_buf_free(&b);
	return rc;
}

/* ---- R4L's records ---- */

/* A log that is gone refuses every change of what it audits: say which
 * log, and how to go on.  The setting is object of's: the one at path or
 * its directory (a create, unlink or rename records for the directory). */
static int log_missing(struct r4_db *db, struct r4_why *why, int rc, const char *path,
		       uint64_t of, const char *lp)
{
	const char *slash = strrchr(path, '/');
	int n = (int)strlen(path);
	struct r4_stat st;
	char *dir;

	if ((r4_stat(db, path, &st) || st.ino != of) && slash &&
	    (dir = r4_memdup(path, slash > path ? (size_t)(slash - path) : 1))) {
		if (!r4_stat(db, dir, &st) && st.ino == of)
			n = slash > path ? (int)(slash - path) : 0;
		r4_free(dir);
	}
	return r4_why_set(why, rc, "cannot audit '%s': the audit log '%s' is missing (make it "
			  "again, or turn auditing off: %.*s/..audit <- \"\")", path, lp, n, path);
}

int r4_audit_change(struct r4_db *db, uint32_t uid, uint64_t ino, uint64_t dir, const char *op,
		    const char *path, uint64_t len, struct r4_why *why)
{
	struct r4_audit a = {0};
	struct r4_txn_op t;
	int rc = 0;

	for (int i = 0; i < 2 && !rc; i++) {
		uint64_t of = i ? dir : ino;
		char *lp = NULL;
		bool on;
		r4_key log;

		if (!of || (i && dir == ino))
			continue;
		if ((rc = r4_audit_of(db, of, &log, &lp, &on)) && lp &&
		    (rc == -ENOENT || rc == -ENOTDIR))
			rc = log_missing(db, why, rc, path, of, lp);
		else if (rc)
			rc = lp ? r4_why_set(why, rc, "cannot audit '%s' into '%s'", path, lp)
				: r4_why_set(why, rc, "cannot read the audit setting of '%s'", path);
		else if (on)
			rc = r4_audit_add(db, &a, uid, of, &log, op, path, len);
		r4_free(lp);
	}
	if (!rc && a.n && !(rc = r4_txn_op_begin(db, &t))) {
		if (!(rc = r4_audit_grab(db, &a)))
			rc = r4_audit_write(db, &a);
		if ((rc = r4_txn_op_end(db, &t, rc)))
			r4_why_set(why, rc, "cannot audit '%s'", path);
	}
	r4_audit_fini(&a);
	return rc;
}
