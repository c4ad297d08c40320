/*
 * parser.y - the R4L grammar (LANGUAGE.md sections 3 and 4), a pure LALR(1)
 * parser with no conflicts.  Actions only build AST nodes (parser/ast.c);
 * syntax errors are worded in report_error, and recovery happens at
 * top-level statement separators, whose tokens the scanner tells apart
 * from the ';' inside brackets (TSEMI vs SEMI).
 */
%require "3.8"
%define api.pure full
%define api.prefix {r4yy}
%locations
%define api.location.type {r4_loc}
%define parse.error custom
%param {void *scanner}
%parse-param {struct r4_parse_ctx *ctx}
%expect 0

%code requires {
#include "scan.h"
}

%code provides {
int r4yylex(R4YYSTYPE *lval, R4YYLTYPE *lloc, void *scanner);
void r4yyerror(R4YYLTYPE *lloc, void *scanner, struct r4_parse_ctx *ctx, const char *msg);
}

%code {
#include <errno.h>
#include <string.h>

#include "r4.h"

/* A node spans its first to its last child; an empty rule is the
 * position after the previous symbol. */
#define YYLLOC_DEFAULT(Cur, Rhs, N)						\
	do {									\
		if (N) {							\
			(Cur).off = YYRHSLOC(Rhs, 1).off;			\
			(Cur).len = YYRHSLOC(Rhs, N).off + YYRHSLOC(Rhs, N).len - \
				    YYRHSLOC(Rhs, 1).off;			\
		} else {							\
			(Cur).off = YYRHSLOC(Rhs, 0).off + YYRHSLOC(Rhs, 0).len; \
			(Cur).len = 0;						\
		}								\
	} while (0)

#define NODE(dst, expr) do { if (!((dst) = (expr))) YYNOMEM; } while (0)

static struct r4_ast *node(struct r4_parse_ctx *ctx, enum r4_ast_kind kind, int op, r4_loc loc,
			   struct r4_ast *a, struct r4_ast *b, struct r4_ast *c);
static struct r4_ast *leaf(struct r4_parse_ctx *ctx, enum r4_ast_kind kind, r4_loc loc,
			   struct r4_tok t);
static struct r4_ast *list(struct r4_parse_ctx *ctx, enum r4_ast_kind kind, r4_loc loc,
			   struct r4_ast *first);
static struct r4_ast *more(struct r4_ast *l, r4_loc loc, struct r4_ast *kid);
}

%union {
	struct r4_tok tok;
	struct r4_ast *node;
}

%token <tok> WORD "a word" QWORD "a quoted name" STRING "a string" NUMBER "a number"
%token IF "'if'" THEN "'then'" ELSE "'else'" NOT "'not'" AND "'and'" OR "'or'"
%token EXIST "'exist'" TW "'tw'"
%token EQ "'eq'" NE "'ne'" LT "'lt'" GT "'gt'" LE "'le'" GE "'ge'"
%token ASSIGN "'<-'" APPEND "'<<-'" SYMLINK "'->'" NAMED "'<='"
%token PLUS "'+'" STAR "'*'" COMMA "','" SEMI "';'" TSEMI "';' at top level"
%token SLASH "'/'" LPAREN "'('" RPAREN "')'" LBRACK "'['" RBRACK "']'"
%token LBRACE "'{'" RBRACE "'}'"
%token NL "newline"
%token END 0 "end of input"

%type <node> stmt group block groups expr target primary path comps comp

%precedence THEN
%precedence ELSE
%precedence ASSIGN APPEND SYMLINK
%left OR
%left AND
%precedence NOT
%nonassoc EQ NE LT GT LE GE
%left PLUS
%precedence STAR

%%

/* command = [ stmts [ ";" | NL ] ] END */
command
	: %empty
	| stmts
	| stmts tsep
	;

/* stmts = group { ( ";" | NL ) group } */
stmts
	: stmt
	| stmts tsep stmt
	;

/* a separator ends error recovery: the next statement's errors count */
tsep	: TSEMI				{ yyerrok; }
	| NL				{ yyerrok; }
	;

stmt
	: group				{ r4_ast_add(ctx->root, $1); $$ = $1; }
	| error				{ $$ = NULL; }
	;

/* block = group { ";" group } [ ";" ] */
block
	: groups
	| groups SEMI			{ $$ = $1; $$->loc = @$; }
	;

groups
	: group				{ NODE($$, list(ctx, R4_AST_BLOCK, @$, $1)); }
	| groups SEMI group		{ $$ = more($1, @$, $3); }
	;

/* group = expr { "," expr } */
group
	: expr				{ NODE($$, list(ctx, R4_AST_GROUP, @$, $1)); }
	| group COMMA expr		{ $$ = more($1, @$, $3); }
	;

expr
	: target ASSIGN expr		{ NODE($$, node(ctx, R4_AST_ASSIGN, R4_OP_REPLACE, @$, $1, $3, NULL)); }
	| target APPEND expr		{ NODE($$, node(ctx, R4_AST_ASSIGN, R4_OP_APPEND, @$, $1, $3, NULL)); }
	| target SYMLINK expr		{ NODE($$, node(ctx, R4_AST_ASSIGN, R4_OP_SYMLINK, @$, $1, $3, NULL)); }
	| IF expr THEN expr %prec THEN	{ NODE($$, node(ctx, R4_AST_IF, 0, @$, $2, $4, NULL)); }
	| IF expr THEN expr ELSE expr	{ NODE($$, node(ctx, R4_AST_IF, 0, @$, $2, $4, $6)); }
	| expr OR expr			{ NODE($$, node(ctx, R4_AST_OR, 0, @$, $1, $3, NULL)); }
	| expr AND expr			{ NODE($$, node(ctx, R4_AST_AND, 0, @$, $1, $3, NULL)); }
	| NOT expr			{ NODE($$, node(ctx, R4_AST_NOT, 0, @$, $2, NULL, NULL)); }
	| expr EQ expr			{ NODE($$, node(ctx, R4_AST_CMP, R4_CMP_EQ, @$, $1, $3, NULL)); }
	| expr NE expr			{ NODE($$, node(ctx, R4_AST_CMP, R4_CMP_NE, @$, $1, $3, NULL)); }
	| expr LT expr			{ NODE($$, node(ctx, R4_AST_CMP, R4_CMP_LT, @$, $1, $3, NULL)); }
	| expr GT expr			{ NODE($$, node(ctx, R4_AST_CMP, R4_CMP_GT, @$, $1, $3, NULL)); }
	| expr LE expr			{ NODE($$, node(ctx, R4_AST_CMP, R4_CMP_LE, @$, $1, $3, NULL)); }
	| expr GE expr			{ NODE($$, node(ctx, R4_AST_CMP, R4_CMP_GE, @$, $1, $3, NULL)); }
	| EXIST path			{ NODE($$, node(ctx, R4_AST_EXIST, 0, @$, $2, NULL, NULL)); }
	| expr PLUS expr		{ NODE($$, node(ctx, R4_AST_CONCAT, 0, @$, $1, $3, NULL)); }
	| STAR expr			{ NODE($$, node(ctx, R4_AST_DEREF, 0, @$, $2, NULL, NULL)); }
	| primary
	;

primary
	: path
	| STRING			{ NODE($$, leaf(ctx, R4_AST_STRING, @$, $1)); }
	| NUMBER			{ NODE($$, leaf(ctx, R4_AST_NUMBER, @$, $1)); }
	| TW SLASH LBRACK block RBRACK	{ NODE($$, node(ctx, R4_AST_TW, 0, @$, $4, NULL, NULL)); }
	| TW SLASH WORD LBRACK block RBRACK
					{ NODE($$, leaf(ctx, R4_AST_TW, @$, $3)); $$->a = $5; }
	;

/* target = [ path "<=" ] path: the assignment node gets the named result as c */
target
	: path
	| path NAMED path		{ $$ = $3; $$->c = $1; }
	;

/* path = "/" | [ "/" ] comp { "/" comp } */
path
	: SLASH				{ NODE($$, node(ctx, R4_AST_PATH, 0, @$, NULL, NULL, NULL));
					  $$->absolute = true; }
	| comps
	| SLASH comps			{ $$ = $2; $$->absolute = true; $$->loc = @$; }
	;

comps
	: comp				{ NODE($$, list(ctx, R4_AST_PATH, @$, $1)); }
	| comps SLASH comp		{ $$ = more($1, @$, $3); }
	;

comp
	: WORD				{ NODE($$, leaf(ctx, R4_AST_WORD, @$, $1)); }
	| QWORD				{ NODE($$, leaf(ctx, R4_AST_QWORD, @$, $1)); }
	| LPAREN block RPAREN		{ $$ = $2; $$->loc = @$; }
	;

%%

static struct r4_ast *node(struct r4_parse_ctx *ctx, enum r4_ast_kind kind, int op, r4_loc loc,
			   struct r4_ast *a, struct r4_ast *b, struct r4_ast *c)
{
	struct r4_ast *n = r4_ast_new(ctx->root, kind, loc);

	if (n) {
		n->op = op;
		n->a = a;
		n->b = b;
		n->c = c;
		/* a named result sits on the target path until its assignment */
		if (kind == R4_AST_ASSIGN && a->c) {
			n->c = a->c;
			a->c = NULL;
		}
	}
	return n;
}

static struct r4_ast *leaf(struct r4_parse_ctx *ctx, enum r4_ast_kind kind, r4_loc loc,
			   struct r4_tok t)
{
	struct r4_ast *n = r4_ast_new(ctx->root, kind, loc);

	if (n) {
		n->bytes = t.p;
		n->len = t.len;
	}
	return n;
}

static struct r4_ast *list(struct r4_parse_ctx *ctx, enum r4_ast_kind kind, r4_loc loc,
			   struct r4_ast *first)
{
	struct r4_ast *n = r4_ast_new(ctx->root, kind, loc);

	if (n)
		r4_ast_add(n, first);
	return n;
}

static struct r4_ast *more(struct r4_ast *l, r4_loc loc, struct r4_ast *kid)
{
	l->loc = loc;
	r4_ast_add(l, kid);
	return l;
}

void r4yyerror(R4YYLTYPE *lloc, void *scanner, struct r4_parse_ctx *ctx, const char *msg)
{
	/* with parse.error custom, Bison calls this only when memory runs out */
	(void)lloc;
	(void)scanner;
	(void)msg;
	ctx->nomem = 1;
}

static bool is_closer(int t)
{
	return t == RPAREN || t == RBRACK || t == RBRACE;
}

static char closer_char(int t)
{
	return t == RPAREN ? ')' : t == RBRACK ? ']' : '}';
}

static char opener_for(char c)
{
	return c == '(' ? ')' : c == '[' ? ']' : '}';
}

/* "expecting ..." for what the parser could have taken. */
static void expecting(const yypcontext_t *yyctx, char *buf, size_t n)
{
	yysymbol_kind_t exp[YYNTOKENS];
	int k = yypcontext_expected_tokens(yyctx, exp, YYNTOKENS);
	bool operand = false;
	size_t used = 0;

	buf[0] = 0;
	for (int i = 0; i < k; i++) {
		operand |= exp[i] == YYSYMBOL_STRING;
		if (exp[i] == YYSYMBOL_THEN) {
			snprintf(buf, n, ", expecting 'then'");
			return;
		}
	}
	if (operand) {
		snprintf(buf, n, ", expecting an expression");
		return;
	}
	if (k <= 0 || k > 4)
		return;
	for (int i = 0; i < k && used < n; i++) {
		const char *name = exp[i] == YYSYMBOL_TSEMI ? "';'" : yysymbol_name(exp[i]);

		used += (size_t)snprintf(buf + used, n - used, "%s%s", !i ? ", expecting " :
					 i + 1 == k ? " or " : ", ", name);
	}
}

/* Could this token start an operand? */
static bool starts_operand(int t)
{
	return t == WORD || t == QWORD || t == STRING || t == NUMBER ||
	       t == LPAREN || t == STAR || t == NOT || t == IF || t == EXIST || t == TW;
}

/* How a message names the unexpected token: literals quote the source. */
static const char *token_text(struct r4_parse_ctx *ctx, yysymbol_kind_t la, r4_loc loc,
			      char *buf, size_t n)
{
	const char *kind = la == YYSYMBOL_WORD ? "word" : la == YYSYMBOL_QWORD ? "quoted name"
		: la == YYSYMBOL_STRING ? "string" : la == YYSYMBOL_NUMBER ? "number" : NULL;
	bool printable = true;

	if (la == YYSYMBOL_YYEOF)
		return "end of input";
	if (la == YYSYMBOL_TSEMI)
		return "';'";
	if (!kind)
		return yysymbol_name(la);
	for (uint32_t i = 0; i < loc.len; i++)
		printable &= (unsigned char)ctx->src[loc.off + i] >= 0x20 &&
			     ctx->src[loc.off + i] != 0x7f;
	if (!printable || loc.len > 24)
		snprintf(buf, n, "%s", kind);
	else
		snprintf(buf, n, "%s %.*s", kind, (int)loc.len, ctx->src + loc.off);
	return buf;
}

static int yyreport_syntax_error(const yypcontext_t *yyctx, void *scanner,
				 struct r4_parse_ctx *ctx)
{
	yysymbol_kind_t la = yypcontext_token(yyctx);
	r4_loc loc = *yypcontext_location(yyctx);
	bool eof = la == YYSYMBOL_YYEOF;
	/* the unexpected token and the one before it (EOF is not counted as last) */
	int t = eof ? 0 : ctx->last, before = eof ? ctx->last : ctx->prev;
	char exp[160], tbuf[64];

	(void)scanner;
	if (la == YYSYMBOL_YYerror || ctx->capped)
		return 0;		/* the scanner has said it */
	if (!eof && is_closer(t) && ctx->mismatch) {
		if (!ctx->mis_open) {
			r4_scan_error(ctx, loc, "'%c' closes nothing", closer_char(t));
		} else {
			r4_scan_error(ctx, loc, "'%c' does not match '%c'", closer_char(t),
				      ctx->mis_open);
			r4_scan_note(ctx, ctx->mis_loc, "'%c' opened here; it closes with '%c'",
				     ctx->mis_open, opener_for(ctx->mis_open));
		}
		return 0;
	}
	if (eof && ctx->depth) {
		char o = ctx->open[ctx->depth - 1].ch;

		r4_scan_error(ctx, loc, "unexpected end of input: '%c' is not closed", o);
		r4_scan_note(ctx, ctx->open[ctx->depth - 1].loc, "'%c' opened here", o);
		return 0;
	}
	const char *what = token_text(ctx, la, loc, tbuf, sizeof(tbuf));

	if (before == NL) {
		r4_scan_error(ctx, loc, "unexpected %s: the newline ended the previous statement",
			      what);
		return 0;
	}
	if ((t == ASSIGN || t == APPEND || t == SYMLINK || t == NAMED) && r4_scan_can_end(before)) {
		r4_scan_error(ctx, loc, "unexpected %s: %s", what,
			      before == STRING ? "a string is not a target" :
			      before == NUMBER ? "a number is not a target" :
			      "only a path can be a target");
		return 0;
	}
	if (t >= EQ && t <= GE && r4_scan_can_end(before)) {
		r4_scan_error(ctx, loc, "unexpected %s: comparisons do not chain; bracket one of "
			      "them", what);
		return 0;
	}
	if (t == LBRACK) {
		r4_scan_error(ctx, loc, "unexpected '[': brackets '[ ]' only follow 'tw/'");
		return 0;
	}
	if (t == LBRACE || t == RBRACE) {
		r4_scan_error(ctx, loc, "unexpected %s: '{ }' are reserved", what);
		return 0;
	}
	if ((t == SEMI || t == TSEMI) && (before == SEMI || before == TSEMI || before == 0 ||
					  before == LPAREN || before == LBRACK)) {
		r4_scan_error(ctx, loc, "empty statement before ';'");
		return 0;
	}
	if (is_closer(t) && (before == LPAREN || before == LBRACK)) {
		r4_scan_error(ctx, loc, "empty brackets");
		return 0;
	}
	if (t == LPAREN && (before == WORD || before == QWORD || before == RPAREN)) {
		r4_scan_error(ctx, loc, "unexpected '(': a bracket after a name needs a '/' "
			      "before it");
		return 0;
	}
	expecting(yyctx, exp, sizeof(exp));
	if (la == YYSYMBOL_NL) {
		r4_scan_error(ctx, loc, "unexpected newline%s: a newline after an operand ends the "
			      "statement; break lines after an operator or inside brackets", exp);
		return 0;
	}
	if ((t == ELSE || t == THEN) && !strstr(exp, "'then'")) {
		r4_scan_error(ctx, loc, "unexpected %s: no 'if' is open here", what);
		return 0;
	}
	if (starts_operand(t) && r4_scan_can_end(before) && !strstr(exp, "'then'")) {
		r4_scan_error(ctx, loc, "unexpected %s after an operand: an operator or a separator "
			      "is missing", what);
		return 0;
	}
	r4_scan_error(ctx, loc, "unexpected %s%s", what, exp);
	return 0;
}

bool r4_scan_can_end(int t)
{
	return t == WORD || t == QWORD || t == STRING || t == NUMBER || t == RPAREN ||
	       t == RBRACK || t == RBRACE;
}
