/*
 * audit.c - the audit records (..audit; LANGUAGE.md 6.4, docs/semantics.md)
 * of r4fuse's POSIX changes, which the bridge writes until the engine does
 * (docs/architecture.md, "Still on its way").
 *
 * A POSIX change of an audited object, or of an entry of an audited
 * directory, appends the executor's record to the log in the change's
 * transaction (r4_audit_append).  The engine cannot undo one call of a
 * group, so a call that changes audited objects
 *  - reads their settings and checks that each log is there before it
 *    changes anything: a log renamed away fails it with ENOENT and the
 *    group stays (and an unlink is recorded although the setting goes
 *    with the object's last name);
 *  - commits the group first, so that a record that cannot be written
 *    after the change (a full volume) undoes this call alone: the group,
 *    then holding nothing else, is dropped.
 * An image with no r4 records pays a flag test per object (r4_audit_log).
 * A call goes audit_add (each object), then CHANGE_AUDITED (bridge.h:
 * audit_begin, the call, audit_end), then audit_fini.
 */
#include "bridge.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>

/* Where a record says the change was: the object n (name NULL) or the
 * entry name of directory n, by the names they were last found under.  An
 * object's name removed since is replaced by another in the same
 * directory; with none there, the removed one is still the best known. */
static int audit_path(struct node *n, const char *name, char **out)
{
	char *p = NULL;
	int rc = node_path(n, &p);

	if (rc == -ESTALE && !name && n->kind == K_OBJ && !node_refind(n))
		rc = node_path(n, &p);
	if (rc == -ESTALE)
		rc = node_names(n, &p);
	if (!rc && name)
		rc = asprintf(out, "%s/%s", strcmp(p, "/") ? p : "", name) < 0 ? -ENOMEM : 0;
	else if (!rc)
		*out = p, p = NULL;
	free(p);
	return rc;
}

/* Before a change of object ino (0: none) that op will record as at n (or
 * its entry name), len: its log, which must be there (-ENOENT). */
int audit_add(struct audit *a, uint64_t ino, const char *op, struct node *n, const char *name,
	      uint64_t len)
{
	struct audited *v;
	char *log = NULL;
	int rc;

	if (!ino || B.ro)
		return 0;	/* (read-only: the change is refused anyway) */
	for (unsigned i = 0; i < a->n; i++)
		if (a->v[i].ino == ino)
			return 0;	/* (a directory both ends of a rename are in) */
	if (a->n == MAX_AUDITED)
		return -EIO;	/* (no call changes more) */
	if ((rc = r4_audit_log(B.db, ino, &log)) || !log)
		return rc;
	v = &a->v[a->n];
	/* (0: no record after all, the object is its own log) */
	if ((rc = r4_audit_append(B.db, log, ino, a->uid, NULL, NULL, 0)) <= 0 ||
	    (rc = audit_path(n, name, &v->path))) {
		r4_free(log);
		return rc;
	}
	v->ino = ino;
	v->log = log;
	v->op = op;
	v->len = len;
	a->n++;
	return 0;
}

void audit_fini(struct audit *a)
{
	for (unsigned i = 0; i < a->n; i++) {
		r4_free(a->v[i].log);
		free(a->v[i].path);
	}
	a->n = 0;
}

/* Before the change: the group so far is committed (see above). */
int audit_begin(struct audit *a)
{
	return a->n ? br_commit() : 0;
}

/* After the call (rc): its records, then br_change_end.  One that cannot
 * be written undoes the call, the only one in the group. */
int audit_end(struct audit *a, const char *op, int rc)
{
	for (unsigned i = 0; !rc && i < a->n; i++) {
		struct audited *v = &a->v[i];

		rc = r4_audit_append(B.db, v->log, v->ino, a->uid, v->op, v->path, v->len);
		if (rc && r4_in_txn(B.db)) {
			br_log(LOG_ERR, "r4fuse: %s %s: cannot audit into '%s' (%s): the call is "
			       "undone", op, v->path, v->log, r4_strerror(rc));
			r4_abort(B.db);
		}
	}
	return br_change_end(op, rc);
}

/* The object id of entry name of directory node p, for its audit record;
 * 0 when there is none, or none can be (no lookup then). */
uint64_t audit_entry_ino(struct node *p, const char *name)
{
	r4_file *f;
	uint64_t id;

	if (!r4_audit_maybe(B.db) || r4_file_lookup(p->obj, name, strlen(name), &f))
		return 0;
	id = r4_file_id(f);
	r4_file_close(f);
	return id;
}

/* What a rename of name in p to newname in q records: a rename of the
 * object and of both directories, and of the object exchanged with it, or
 * an unlink of the one it replaces. */
int audit_rename(struct audit *a, struct node *p, const char *name, struct node *q,
		 const char *newname, unsigned flags)
{
	uint64_t moved = audit_entry_ino(p, name), over = audit_entry_ino(q, newname);
	size_t nn = strlen(newname);
	int rc;

	if ((rc = audit_add(a, moved, "rename", q, newname, nn)) ||
	    (rc = audit_add(a, r4_file_id(p->obj), "rename", q, newname, nn)) ||
	    (rc = audit_add(a, r4_file_id(q->obj), "rename", q, newname, nn)))
		return rc;
	if (flags & RENAME_EXCHANGE)
		return audit_add(a, over, "rename", p, name, strlen(name));
	return flags & RENAME_NOREPLACE ? 0 : audit_add(a, over, "unlink", q, newname, nn);
}
