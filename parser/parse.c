/*
 * parse.c - drives the generated scanner and parser (grammar/): one
 * r4_parse_ctx per parse, no globals, so any number of parses can run in
 * one process.
 */
#include <errno.h>
#include <stdarg.h>
#include <string.h>

#include "diag.h"
#include "r4.h"
#include "scan.h"
#include "parser.h"
#include "lexer.h"

static void report(struct r4_parse_ctx *ctx, enum r4_diag_sev sev, r4_loc loc,
		   const char *fmt, va_list ap)
{
	if (ctx->capped)
		return;
	if (r4_diag_addv(ctx->diags, sev, loc, fmt, ap)) {
		ctx->nomem = 1;
		ctx->capped = true;
		return;
	}
	if (sev == R4_DIAG_ERROR && r4_diag_errors(ctx->diags) >= R4_MAX_ERRORS) {
		r4_diag_add(ctx->diags, R4_DIAG_NOTE, loc, "too many errors (%d); stopping here",
			    R4_MAX_ERRORS);
		ctx->capped = true;	/* the scanner ends the input */
	}
}

void r4_scan_error(struct r4_parse_ctx *ctx, r4_loc loc, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	report(ctx, R4_DIAG_ERROR, loc, fmt, ap);
	va_end(ap);
}

void r4_scan_note(struct r4_parse_ctx *ctx, r4_loc loc, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	report(ctx, R4_DIAG_NOTE, loc, fmt, ap);
	va_end(ap);
}

/* Set up ctx and a scanner over a private copy of src ending in the two
 * NUL bytes flex's in-place buffers need. */
static int start(struct r4_parse_ctx *ctx, const char *src, size_t len, r4_diags *d,
		 yyscan_t *sc)
{
	char *copy;

	if (len > UINT32_MAX - 2)
		return -E2BIG;		/* offsets are 32-bit */
	memset(ctx, 0, sizeof(*ctx));
	if (!(copy = r4_malloc(len + 2)))
		return -ENOMEM;
	memcpy(copy, src, len);
	copy[len] = copy[len + 1] = 0;
	ctx->src = src;
	ctx->buf = copy;
	ctx->len = len;
	ctx->diags = d;
	if (!(ctx->root = r4_ast_root()))
		goto nomem;
	if (r4yylex_init_extra(ctx, sc))
		goto nomem;
	if (!r4yy_scan_buffer(copy, len + 2, *sc)) {
		r4yylex_destroy(*sc);
		goto nomem;
	}
	return 0;
nomem:
	r4_ast_free(ctx->root);
	r4_free(copy);
	return -ENOMEM;
}

static void finish(struct r4_parse_ctx *ctx, yyscan_t sc)
{
	r4yylex_destroy(sc);
	r4_free(ctx->buf);
}

int r4_parse(const char *src, size_t len, r4_diags *d, r4_ast **out)
{
	struct r4_parse_ctx ctx;
	size_t before = r4_diag_errors(d);
	yyscan_t sc;
	int rc;

	if ((rc = start(&ctx, src, len, d, &sc)))
		return rc;
	rc = r4yyparse(sc, &ctx);
	finish(&ctx, sc);
	if (ctx.nomem || rc == 2) {
		r4_ast_free(ctx.root);
		return -ENOMEM;
	}
	if (rc || r4_diag_errors(d) > before) {
		r4_ast_free(ctx.root);
		return -EINVAL;
	}
	*out = ctx.root;
	return 0;
}

void r4_lex_state(const char *src, size_t len, struct r4_lex_state *out)
{
	struct r4_parse_ctx ctx;
	r4_diags *d = r4_diag_new("", src, len);
	R4YYSTYPE val;
	R4YYLTYPE loc;
	yyscan_t sc;

	memset(out, 0, sizeof(*out));
	out->can_end = -1;
	if (!d || start(&ctx, src, len, d, &sc)) {
		r4_diag_free(d);
		return;
	}
	while (r4yylex(&val, &loc, sc) != END && !ctx.capped)
		;
	out->depth = ctx.depth;
	out->open_quote = ctx.open_quote;
	out->can_end = ctx.last == 0 ? -1 : ctx.last == NL || r4_scan_can_end(ctx.last);
	finish(&ctx, sc);
	r4_ast_free(ctx.root);
	r4_diag_free(d);
}
