/*
 * audit.h - engine-internal: the audit records of LANGUAGE.md 6.4, written
 * by the engine for every change it records (audit.c).
 *
 * A change records in three steps, all inside its operation (txn.h's
 * bracket), so that once it is made its records can be written:
 *
 *   struct r4_audit a = {0};
 *   r4_audit_add(db, &a, ...)		before any change: the setting read,
 *   r4_audit_grab(db, &a)		the log resolved, the room grabbed
 *   ... the change ...
 *   r4_audit_write(db, &a)		appended to the logs, by object
 *   r4_audit_fini(&a)
 */
#ifndef R4_AUDIT_H
#define R4_AUDIT_H

#include "db.h"
#include "obj.h"

#define R4_AUDIT_MAX 4	/* a rename: its object, the one it replaces, two directories */

/* The records of one change, read and formatted before it changes anything. */
struct r4_audit {
	unsigned n;
	struct r4_audit_rec {
		uint64_t ino;		/* the object recorded */
		r4_key log;		/* its log, resolved before the change */
		char *line;		/* "SECONDS UID OP PATH LENGTH\n" */
		size_t len;
	} v[R4_AUDIT_MAX];
};

/*
 * Does the change of object ino record, and where: *on false when ino is
 * not audited (an image with no r4 record answers without a lookup), is
 * its own log (changes to a log are not audited) or its log is no regular
 * file.  -ENOENT (-ENOTDIR) when the log its setting names is gone; -EIO,
 * -EUCLEAN, -ENOMEM when the setting cannot be read.  *logpath (NULL when
 * not on) is the caller's to r4_free.
 */
int r4_audit_of(struct r4_db *db, uint64_t ino, r4_key *log, char **logpath, bool *on);
/* Add the record of op by uid on ino (its log: r4_audit_of) at path,
 * length len.  A second record of the same object is left out. */
int r4_audit_add(struct r4_db *db, struct r4_audit *a, uint32_t uid, uint64_t ino,
		 const r4_key *log, const char *op, const char *path, uint64_t len);
/* Is oid the log of one of a's records? */
bool r4_audit_is_log(const struct r4_audit *a, uint64_t oid);
/* Grab, in the running operation before its first change, the most that
 * appending a's records can take (-ENOSPC: nothing changed). */
int r4_audit_grab(struct r4_db *db, struct r4_audit *a);
/* Append a's records to their logs, by object, in the running operation,
 * after its change (what r4_audit_grab grabbed pays for it). */
int r4_audit_write(struct r4_db *db, struct r4_audit *a);
void r4_audit_fini(struct r4_audit *a);

/* The path of entry name[0, len) of directory dir (len 0: of dir itself),
 * found by climbing ".." and finding each directory's name in its parent;
 * r4_free it. */
int r4_audit_path(struct r4_db *db, const r4_key *dir, const char *name, size_t len, char **out);

/* Section 6.4's record of a change by uid of the object ino and of the
 * directory dir of its entry (0: none), at path, in their logs, in the
 * open transaction: R4L's changes (pseudo.c), whose units roll
 * back whole.  why: which setting or log failed. */
int r4_audit_change(struct r4_db *db, uint32_t uid, uint64_t ino, uint64_t dir, const char *op,
		    const char *path, uint64_t len, struct r4_why *why);

#endif
