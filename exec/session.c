/*
 * session.c - sessions (r4_session_begin ... r4_session_commit): several
 * runs of the executor in one transaction.  The engine has no partial
 * rollback, so each run that stays in a session leaves a record (its plan,
 * its options, the TRYs that failed in it); to undo a failed run alone,
 * the executor aborts the transaction and the session does its recorded
 * runs again (r4_session_redo), the clock pinned to the session's start so
 * they redo exactly the same.  Built on r4.h alone, like exec.c.
 */
#include <errno.h>
#include <string.h>

#include "exec.h"

struct r4_session {
	struct r4_db *db;
	struct r4_session_record **v;
	size_t n, cap;
	bool broken;		/* an earlier run could not be redone: only rollback is left */
	bool whole;		/* r4_session_whole: no records, no redo */
};

static void record_free(struct r4_session_record *r)
{
	if (!r)
		return;
	r4_plan_free(r->plan);
	r4_free(r->forced);
	r4_free(r->groups);
	r4_free(r->cwd);
	r4_free(r);
}

int r4_session_keep(r4_session *ss, const struct r4_plan *p, const struct r4_exec_opts *o,
		      struct r4_session_record **out)
{
	struct r4_session_record *r;
	size_t ng = o->who.ngroups;

	*out = NULL;
	if (ss->whole)
		return 0;
	if (!(r = r4_calloc(1, sizeof(*r))))
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
	if (r4_grow(&ss->v, &ss->cap, ss->n + 1, sizeof(*ss->v), 8)) {
		record_free(r);
		return -ENOMEM;
	}
	ss->v[ss->n++] = r;
	*out = r;
	return 0;
}

/* Do the session's runs again, in order, into the open transaction. */
static int replay(r4_session *ss)
{
	for (size_t i = 0; i < ss->n; i++) {
		struct r4_exec_error e;
		int rc;

		if (ss->v[i]->units && (rc = r4_exec_plan(ss->db, ss->v[i]->plan, &ss->v[i]->o, &e,
						       ss->v[i])))
			return rc;
	}
	return 0;
}

int r4_session_check(const r4_session *s, const r4_db *db)
{
	if (s->db != db)
		return -EINVAL;
	if (s->broken)
		return -EIO;	/* (its transaction is gone too) */
	return r4_in_txn(db) ? 0 : -EINVAL;
}

int r4_session_redo(r4_session *s)
{
	int rc;

	r4_abort(s->db);
	if (s->whole) {
		s->broken = true;
		return -ENOTRECOVERABLE;
	}
	if ((rc = r4_begin(s->db)) || (rc = replay(s)))
		s->broken = true;
	return rc;
}

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
	r4_clock_pin(db);
	*out = s;
	return 0;
}

void r4_session_whole(r4_session *s)
{
	s->whole = true;
}

static void session_end(r4_session *s)
{
	r4_clock_unpin(s->db);
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
