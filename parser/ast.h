/*
 * ast.h - the AST of R4L inside the parser (parser/ast.c builds and
 * prints it; grammar/parser.y calls the constructors; compile.c walks it).
 *
 * All nodes and their bytes live in one arena owned by the root
 * (R4_AST_COMMAND): r4_ast_free releases a whole parse at once, and a
 * parse that fails frees what it built the same way.
 */
#ifndef R4_AST_H
#define R4_AST_H

#include <stdbool.h>

#include "r4_lang.h"

enum r4_ast_kind {
	R4_AST_COMMAND,			/* kids: top-level statements (each a group) */
	R4_AST_BLOCK,			/* "( ... )" or "[ ... ]": kids are groups, ';'-ordered */
	R4_AST_GROUP,			/* kids: members of a ',' group (one kid: no comma) */
	R4_AST_ASSIGN,			/* op: R4_OP_*; a target path, b value, c named result or NULL */
	R4_AST_IF,			/* a cond, b then, c else or NULL */
	R4_AST_OR,			/* a, b */
	R4_AST_AND,
	R4_AST_NOT,			/* a */
	R4_AST_CMP,			/* op: R4_CMP_*; a, b */
	R4_AST_EXIST,			/* a: path */
	R4_AST_CONCAT,			/* a + b */
	R4_AST_DEREF,			/* * a */
	R4_AST_STRING,			/* bytes */
	R4_AST_NUMBER,			/* bytes: canonical decimal text */
	R4_AST_TW,			/* bytes: label (len 0: none); a: the block */
	R4_AST_PATH,			/* absolute; kids: components (none: "/") */
	R4_AST_WORD,			/* a path component: bytes */
	R4_AST_QWORD,			/* a quoted component: bytes */
	/* a bracketed component is an R4_AST_BLOCK among a path's kids */
};

enum { R4_OP_REPLACE, R4_OP_APPEND, R4_OP_SYMLINK };		/* <-  <<-  -> */
enum { R4_CMP_EQ, R4_CMP_NE, R4_CMP_LT, R4_CMP_GT, R4_CMP_LE, R4_CMP_GE };

struct r4_ast {
	enum r4_ast_kind kind;
	int op;
	r4_loc loc;
	struct r4_ast *a, *b, *c;
	struct r4_ast *kids, *last;	/* children, linked by next */
	struct r4_ast *next;
	size_t nkids;
	const char *bytes;		/* in the arena, NUL-terminated after len */
	size_t len;
	bool absolute;
	struct arena *arena;		/* the root's */
};

struct arena;

/* A new root with its arena; NULL on -ENOMEM. */
struct r4_ast *r4_ast_root(void);
/* Nodes and bytes from root's arena; NULL on -ENOMEM. */
struct r4_ast *r4_ast_new(struct r4_ast *root, enum r4_ast_kind kind, r4_loc loc);
char *r4_ast_bytes(struct r4_ast *root, const char *p, size_t len);
/* Append kid to parent's children (parent->last keeps it O(1)). */
void r4_ast_add(struct r4_ast *parent, struct r4_ast *kid);

#endif
