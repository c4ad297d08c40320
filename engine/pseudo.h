/*
 * pseudo.h - engine-internal: the pseudo files of LANGUAGE.md section 6
 * (pseudo.c) as the executor reaches them: for its run's identity, with
 * the object it already holds (path and stat), and with its own way to
 * reach an invert's file parts.  r4.h's r4_pseudo_read and r4_pseudo_write
 * are the same calls for the identity r4_act_as set.
 *
 * "The object's contents" (section 5.1: a file's data, a symlink's text,
 * an aggregate's or invert's text) is pseudo file R4_PSEUDO_NONE: what a
 * READ or WRITE of the object itself does.  Every call fills c->why
 * (when it is not NULL and still empty) with the words of a refusal it
 * makes itself ("cannot read '/a/..invert'"); the caller adds the
 * error's name.
 */
#ifndef R4_PSEUDO_H
#define R4_PSEUDO_H

#include "r4_int.h"

struct r4_pseudo_ctx {
	const struct r4_ident *who;	/* whose permissions are checked; NULL: none */
	const struct r4_ident *actor;	/* owns new objects, loses set-id bits, is the
					   audit records' uid (NULL: root) */
	struct r4_why *why;		/* the words of a failure, or NULL */
	/*
	 * An invert's file part at path, as who reaches it (section 6.5):
	 * p NULL reads its contents into *out (quiet: a failure fails
	 * nothing, it only says the part cannot be compared); else writes
	 * p[0, n) to it as "path <- p" does.  depth: the inverts being read,
	 * for the reads the part leads to.  NULL: pseudo.c walks it with
	 * ns.c's walker as the executor walks a path made at run time.
	 */
	int (*part)(void *arg, unsigned depth, const char *path, const uint8_t *p, size_t n,
		    bool quiet, struct r4_buf *out);
	void *arg;
	unsigned depth;			/* inverts being read, one inside another */
	uint64_t stored;		/* out: bytes a write stored (assign_length) */
	char *moved;			/* out: the object's path after a write renamed it
					   (..name, a record's name field); the caller's */
};

/* Pseudo file id (sub: ..plugin/<sub>) of the object st at path: its text
 * into b (replaced). */
int r4_pseudo_get(struct r4_db *db, struct r4_pseudo_ctx *c, const char *path,
		  const struct r4_stat *st, enum r4_pseudo id, const char *sub, struct r4_buf *b);
/* Write p[0, n) to it (append: '<<-', only the contents); dir: the
 * directory the object was found in (0: not known). */
int r4_pseudo_put(struct r4_db *db, struct r4_pseudo_ctx *c, const char *path,
		  const struct r4_stat *st, uint64_t dir, enum r4_pseudo id, const char *sub,
		  const uint8_t *p, size_t n, bool append);

/* A ..range window (section 6.3) of a regular file or an aggregate. */
struct r4_window {
	uint64_t off, len;
	bool len_set;			/* else: to the end */
	unsigned mode;			/* R4_WIN_* */
};
int r4_pseudo_window_get(struct r4_db *db, struct r4_pseudo_ctx *c, const char *path,
			 const struct r4_stat *st, const struct r4_window *w, struct r4_buf *b);
int r4_pseudo_window_put(struct r4_db *db, struct r4_pseudo_ctx *c, const char *path,
			 const struct r4_stat *st, const struct r4_window *w, const uint8_t *p,
			 size_t n);

/* F/..acl/(uid|gid <- id, access <- R4_ACCESS_*): add or replace that rule. */
int r4_pseudo_rule(struct r4_db *db, struct r4_pseudo_ctx *c, const char *path,
		   const struct r4_stat *st, uint32_t id, bool gid, unsigned access);
/* F/..audit/(log <- L): audit F into the log at path log. */
int r4_pseudo_audit_into(struct r4_db *db, struct r4_pseudo_ctx *c, const char *path,
			 const struct r4_stat *st, const char *log);

/*
 * D/..new (section 6.2) and a missing name written to (5.2): make path, a
 * new R4_NEW_* object (format: an aggregate's R4_FORMAT_*) with permission
 * bits perm less the umask, owned as perm.c says, in the directory d
 * (NULL: stat it); a symlink's target tgt[0, tlen).  *st: the new object.
 */
int r4_pseudo_make(struct r4_db *db, struct r4_pseudo_ctx *c, const char *path,
		   const struct r4_stat *d, unsigned type, unsigned format, uint32_t perm,
		   const uint8_t *tgt, size_t tlen, struct r4_stat *st);
/* LINK (section 5.3): the entry path, in the directory at dir, for the
 * object st at target, if c->who may add it there; recorded as a "link"
 * (section 6.4).  *out: its stat. */
int r4_pseudo_link(struct r4_db *db, struct r4_pseudo_ctx *c, const char *target,
		   const struct r4_stat *st, const char *dir, const char *path,
		   struct r4_stat *out);
/* May c->who add an entry to the directory at dir, or (st) remove or
 * replace the entry path of st there (perm.c: write, search, sticky)? */
int r4_pseudo_may_change(struct r4_db *db, struct r4_pseudo_ctx *c, const char *dir,
			 const struct r4_stat *st, const char *path);

/* The values pseudo files and parameter blocks take (section 6.1): one
 * trailing LF ignored; decimal (neg_ok: a leading '-'), 1 to 4 octal
 * digits, a name for a new entry (not ".", ".." or a "..x" R4L would
 * take for a pseudo name).  -EINVAL (-ENAMETOOLONG) when malformed. */
void r4_pseudo_chop(const uint8_t *p, size_t *n);
int r4_pseudo_int(const uint8_t *p, size_t n, bool neg_ok, int64_t *out);
int r4_pseudo_octal(const uint8_t *p, size_t n, uint32_t *out);
int r4_pseudo_newname(const uint8_t *p, size_t n);

#endif
