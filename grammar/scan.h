/*
 * scan.h - what grammar/lexer.l and grammar/parser.y share, and
 * parser/parse.c drives: the context of one parse (yyextra of the
 * scanner, the parse-param of the parser).
 */
#ifndef R4_SCAN_H
#define R4_SCAN_H

#include <stdbool.h>

#include "ast.h"

#define R4_MAX_ERRORS 20
#define R4_MAX_DEPTH 200		/* brackets open at once */

/* A token's value: bytes in the AST arena. */
struct r4_tok {
	const char *p;
	size_t len;
};

struct r4_parse_ctx {
	const char *src;		/* the caller's text: read this, never buf */
	size_t len;
	char *buf;			/* flex's copy (+ two NULs), which it edits as it scans */
	r4_diags *diags;
	struct r4_ast *root;
	int nomem;			/* an allocation failed: -ENOMEM at the end */
	bool capped;			/* R4_MAX_ERRORS reached: the lexer ends the input */

	/* scanner state */
	uint32_t pos;			/* offset of the next byte */
	r4_loc tokloc;			/* the token being scanned (YY_USER_ACTION) */
	int last;			/* the last token returned (0: none yet) */
	int prev;			/* the one before it */
	unsigned depth;
	struct {
		char ch;		/* '(' '[' '{' */
		r4_loc loc;
	} open[R4_MAX_DEPTH];
	bool mismatch;			/* the last closing bracket matched no opener */
	char mis_open;			/* ... which opener was on top (0: none) */
	r4_loc mis_loc;			/* ... and where */
	int open_quote;			/* for r4_lex_state: '"' or '`' when unterminated */
};

/* Diagnostics from the scanner and the parser: counted, capped. */
void r4_scan_error(struct r4_parse_ctx *ctx, r4_loc loc, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
void r4_scan_note(struct r4_parse_ctx *ctx, r4_loc loc, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Can a token of this kind (a token number of parser.y) end a statement? */
bool r4_scan_can_end(int token);

#endif
