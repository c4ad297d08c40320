/*
 * r4_lang.h - the public header of r4's command language front end
 * (LANGUAGE.md, "R4L"): parse a command into an AST, print it, and report
 * diagnostics the way LANGUAGE.md section 8 says.
 *
 * Conventions, as in include/r4.h: 0 or a negative errno; out-pointers are
 * written only on success; nothing consumes its arguments; what a
 * function hands back is the caller's, released with the matching _free
 * (which accepts NULL).
 */
#ifndef R4_LANG_H
#define R4_LANG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "r4.h"

/* A byte range of the source: [off, off + len).  len 0 is one position
 * (the end of input, a missing operand). */
typedef struct r4_loc {
	uint32_t off, len;
} r4_loc;

/* ---- diagnostics ---- */

enum r4_diag_sev { R4_DIAG_ERROR, R4_DIAG_NOTE };

struct r4_diag {
	r4_loc loc;
	enum r4_diag_sev sev;
	char *msg;			/* owned by the list */
};

/* A list of diagnostics about one source text.  It borrows src (which must
 * outlive it) and copies name ("<command>", "<stdin>" or a script path). */
typedef struct r4_diags r4_diags;

/* NULL on -ENOMEM. */
r4_diags *r4_diag_new(const char *name, const char *src, size_t len);
void r4_diag_free(r4_diags *d);
size_t r4_diag_count(const r4_diags *d);		/* all, notes included */
size_t r4_diag_errors(const r4_diags *d);		/* errors only */
const struct r4_diag *r4_diag_get(const r4_diags *d, size_t i);	/* NULL past the end */
/* src is a script's part that begins at the start of its line `line`
 * (1-based; 0 or 1: src is the whole text): positions count from there. */
void r4_diag_first_line(r4_diags *d, unsigned line);
/* Line and column (1-based, in bytes) of a source offset. */
void r4_diag_position(const r4_diags *d, uint32_t off, unsigned *line, unsigned *col);
/* Every diagnostic, in order: "NAME:LINE:COL: error: MSG", the source
 * line, and a caret line ('^' at the range's first byte, '~' under the
 * rest of it on that line, the line's TABs copied).  -EIO if f fails. */
int r4_diag_print(const r4_diags *d, FILE *f);

/* ---- parsing ---- */

/* A parsed command.  Opaque to hosts; parser/ast.h inside the parser. */
typedef struct r4_ast r4_ast;

/*
 * Lex and parse src[0..len) (binary-safe: NUL bytes are read as bytes,
 * and rejected where LANGUAGE.md rejects them).  Every lexical and syntax
 * error found goes to d (at most 20, recovering at statement separators).
 * 0 and *out on success; -EINVAL when there were errors (d says which, and
 * nothing is handed back); -ENOMEM.
 */
int r4_parse(const char *src, size_t len, r4_diags *d, r4_ast **out);
void r4_ast_free(r4_ast *ast);

/* The number of top-level statements of a parsed command. */
size_t r4_ast_statements(const r4_ast *ast);

/*
 * The parse-only dump: one line per top-level statement, each expression
 * fully bracketed (docs/language.md, "AST dump").  Deterministic: the same
 * text gives the same dump.  -EIO if f fails.
 */
int r4_ast_dump(const r4_ast *ast, FILE *f);

/* ---- checking and compiling (docs/language.md, docs/plan.md) ---- */

struct r4_compile_opts {
	bool per_statement;		/* a script: one unit per top-level statement; else the
					   whole command is one unit */
};

/*
 * Check a parsed command (every check-time rule of LANGUAGE.md: pseudo
 * names and parameters, read-only and write-only pseudo files, named
 * result scopes, conflicts the text shows in ',' groups, type errors) and
 * compile it into a plan (include/r4.h).  The checks use the text and the
 * engine's table of pseudo files only, never an image.  Errors go to d;
 * then -EINVAL and no plan.  0 and *out (r4_plan_free it); -ENOMEM.
 * o may be NULL (one unit).
 */
int r4_compile(const r4_ast *ast, const struct r4_compile_opts *o, r4_diags *d,
	       struct r4_plan **out);

/*
 * What the scanner knows at the end of src, for a shell deciding whether
 * an entry is complete (LANGUAGE.md 2.5): it is when depth is 0, no quote
 * is open and the last token can end a statement (or there is none).
 */
struct r4_lex_state {
	unsigned depth;			/* open brackets */
	int open_quote;			/* 0, '"' or '`' */
	int can_end;			/* 1: the last token can end a statement; -1: no token */
};
void r4_lex_state(const char *src, size_t len, struct r4_lex_state *out);

/* ---- running: the reiser4() call of r4 ---- */

enum r4_run_stage {
	R4_RUN_OK,			/* every unit committed */
	R4_RUN_SYNTAX,			/* a lexical or syntax error: nothing ran */
	R4_RUN_CHECK,			/* a check-time error: nothing ran */
	R4_RUN_RUNTIME,			/* a unit failed and was rolled back */
};

struct r4_run_opts {
	const char *name;		/* SOURCE for diagnostics; NULL: "<command>" */
	unsigned first_line;		/* the command is a script's part from this line
					   (r4_diag_first_line); 0: its own text */
	bool per_statement;		/* a script: one unit per top-level statement; else
					   the whole command is one unit */
	struct r4_exec_opts exec;	/* identity, current directory, values (include/r4.h);
					   exec.yield, if set, sees each value too */
	bool drop_values;		/* keep no values in the run (a host that shows none) */
};

struct r4_run_value {			/* a statement's value (struct r4_value, owned) */
	uint32_t off, len;
	char *path;			/* an object's path, or NULL for bytes */
	char *bytes;			/* NUL-added; binary-safe with size */
	size_t size;
	int err;
	char *why;			/* err in words (struct r4_value), or NULL */
};

struct r4_run {
	enum r4_run_stage stage;
	int rc;				/* 0, -EINVAL for front-end errors, or the run-time errno */
	r4_diags *diags;		/* every diagnostic; a run-time error is one error (and
					   maybe a note) at the failing step's range */
	struct r4_run_value *values;	/* of the units that committed, in order */
	size_t nvalues;
	unsigned units;			/* units committed */
	struct r4_plan *plan;		/* r4_run_prepare's, until r4_run_exec runs it */
};

/*
 * Run the command src[0..len) (binary-safe) against db: lex, parse, check
 * and compile it, then execute it, as one unit (or one per statement with
 * o->per_statement).  The identity and the current directory are
 * o->exec's (o may be NULL: root, "/", umask 022).  *out is written
 * unless -ENOMEM comes first, whatever the outcome: its diagnostics, its
 * values; free it with r4_run_free.  Returns (*out)->rc.
 */
int r4_run(r4_db *db, const char *src, size_t len, const struct r4_run_opts *o,
	   struct r4_run **out);
void r4_run_free(struct r4_run *r);
/*
 * r4_run in two halves, for a host that gets a script's next part ready
 * while this one runs (r4sh --atomic): r4_run_prepare lexes, parses,
 * checks and compiles src, and touches no volume, so another thread may
 * run a command meanwhile; *out as r4_run writes it, stage R4_RUN_SYNTAX
 * or R4_RUN_CHECK on a front-end error.  r4_run_exec then runs a run so
 * prepared without one, with the same o.  Each returns the run's rc.
 */
int r4_run_prepare(const char *src, size_t len, const struct r4_run_opts *o,
		   struct r4_run **out);
int r4_run_exec(r4_db *db, struct r4_run *r, const struct r4_run_opts *o);

/* A run's outcome as bytes (parser/wire.c: the control file's framed
 * answer) and back.  r4_run_read rebuilds it for the client, whose
 * command src[0..len) the diagnostics point into (name is their SOURCE);
 * -EPROTO for anything malformed. */
int r4_run_write(const struct r4_run *r, FILE *f);
int r4_run_read(const char *text, size_t n, const char *name, const char *src, size_t len,
		struct r4_run **out);
/* A client of a mount's control file ctl: writes head[0, hn) (its
 * pragmas) and src[0, len), then reads the whole answer, which the bridge
 * gives once the command ran, into *ans (malloc'd: free it; NULL on an
 * error).  0 or a negative errno of the open, a write or a read. */
int r4_wire_ask(const char *ctl, const char *head, size_t hn, const char *src, size_t len,
		char **ans, size_t *an);

/* A host path as an R4L path: each component `quoted', so that any name
 * (spaces, keywords, brackets) is taken literally; relative stays
 * relative, "" is ".".  NULL on -ENOMEM; r4_free it.  (A component
 * holding an unbalanced ` or ' cannot be quoted: use *"path" instead.) */
char *r4_path_quote(const char *path);

#endif
