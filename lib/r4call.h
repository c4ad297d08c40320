/*
 * r4call.h - the reiser4() call for programs (libr4call, docs/library.md,
 * reiser4(3)): run one R4L command and get its values and diagnostics back
 * as data.
 *
 * Where the command runs: on the image the environment variable R4_IMAGE
 * names, if it is set and not empty (the library opens it itself); else on
 * the r4fuse mount that holds the current directory (through its control
 * file MNT/..reiser4, as the calling process, relative paths starting at
 * the current directory).
 *
 * Link with `pkg-config --cflags --libs r4call`.  This header is all of
 * the library's interface: it declares no name of r4's own headers, and
 * it is not reiser4progs' <reiser4/libreiser4.h>.
 */
#ifndef R4CALL_H
#define R4CALL_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* How far the command got (struct reiser4_result.status). */
enum reiser4_status {
	REISER4_OK = 0,			/* every unit committed */
	REISER4_SYNTAX = 1,		/* a lexical or syntax error: nothing ran */
	REISER4_CHECK = 2,		/* a check-time error: nothing ran */
	REISER4_RUNTIME = 3,		/* a unit failed: it was rolled back */
	REISER4_NOTRUN = 4,		/* no image or mount to run it on, or it could not
					   be reached (or the image not written out after) */
};

/* A statement's value, in the order the statements ran. */
struct reiser4_value {
	const char *bytes;		/* the value, or an object's contents; a NUL
					   follows, but bytes may hold NULs: use len */
	size_t len;
	const char *path;		/* an object: its absolute path; NULL for bytes */
	int err;			/* 0, or why an object's contents are not in bytes
					   (an errno: EISDIR for a directory, EACCES) */
	unsigned line, col;		/* where the statement starts (1-based, bytes) */
	size_t off, span;		/* its byte range in the command */
};

/* A diagnostic: an error, or a note about the error before it. */
struct reiser4_diag {
	int err;			/* the error's errno (EINVAL for syntax and check
					   errors); 0 for a note */
	const char *msg;		/* "cannot read '/bank/carol': No such file or
					   directory" */
	unsigned line, col;		/* 1-based, in bytes; 0 when it has no position in
					   the command (status REISER4_NOTRUN) */
	size_t off, span;		/* its byte range in the command */
};

struct reiser4_result {
	int status;			/* enum reiser4_status */
	int err;			/* 0, or the errno of the failure */
	size_t nvalues;
	const struct reiser4_value *values;	/* of the units that committed */
	size_t ndiags;
	const struct reiser4_diag *diags;
	const char *report;		/* the diagnostics as r4sh prints them (with the
					   source line and a caret); "" when none */
};

/*
 * Run the R4L command cmd[0..len) as one unit (binary-safe; group
 * statements with tw/[ ] or run them separately as you need).  *out is
 * set to the result, whatever the outcome, unless memory runs out first
 * (then it is NULL); free it with reiser4_result_free.
 * Returns 0 when every unit committed, else -1 with errno set to the
 * result's err (ENOMEM with *out NULL).
 */
int reiser4(const char *cmd, size_t len, struct reiser4_result **out);

/* Free a result (NULL is fine). */
void reiser4_result_free(struct reiser4_result *r);

#ifdef __cplusplus
}
#endif

#endif
