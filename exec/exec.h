/*
 * exec.h - what the executor's two files share: exec.c runs plans,
 * session.c keeps a session's runs so that it can do them again.  Built,
 * like them, on r4.h alone (-Iinclude -Iexec; make layering checks it).
 */
#ifndef R4_EXEC_H
#define R4_EXEC_H

#include "r4.h"

struct r4_exec_forced {		/* a TRY that failed in an earlier run of the unit */
	bool set;
	int err;
	uint64_t length;
};

/* A run that stays in a session: what it takes to do it again. */
struct r4_session_record {
	struct r4_plan *plan;
	struct r4_exec_forced *forced;	/* by step: the TRYs that failed */
	unsigned units;		/* units of the plan that ran (the first ones) */
	struct r4_exec_opts o;	/* identity and current directory, owned copies */
	uint32_t *groups;
	char *cwd;
};

/* exec.c.  Run p; with replay, redo that record's units (its session's
 * earlier run) straight into the open transaction.  0 or the failing
 * unit's error (err says where and why). */
int r4_exec_plan(r4_db *db, const struct r4_plan *p, const struct r4_exec_opts *o,
		 struct r4_exec_error *err, struct r4_session_record *replay);

/* session.c.  0 if a run may go into s on db: -EINVAL if s is another
 * db's or its transaction is gone, -EIO if s is broken. */
int r4_session_check(const r4_session *s, const r4_db *db);
/* A record of a run (p and o copied) kept by s, for r4_session_redo;
 * -ENOMEM.  s owns *out. */
int r4_session_keep(r4_session *s, const struct r4_plan *p, const struct r4_exec_opts *o,
		      struct r4_session_record **out);
/* Undo a failed run: abort the transaction, begin another and do s's
 * runs again, in order.  0, or the error, and then s is broken (only
 * rollback is left). */
int r4_session_redo(r4_session *s);

#endif
