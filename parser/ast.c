/*
 * ast.c - AST nodes in an arena, and the parse-only dump
 * (docs/language.md, "AST dump").
 */
#include "ast.h"

#include <errno.h>
#include <string.h>

#include "r4.h"

/* ================================ arena ================================= */

struct chunk {
	struct chunk *next;
	size_t used, size;
	max_align_t data[];
};

struct arena {
	struct chunk *head;
};

static void *arena_get(struct arena *ar, size_t n)
{
	struct chunk *c = ar->head;

	n = (n + sizeof(max_align_t) - 1) / sizeof(max_align_t) * sizeof(max_align_t);
	if (!c || c->size - c->used < n) {
		size_t size = n > 16384 ? n : 16384;

		if (!(c = r4_malloc(sizeof(*c) + size)))
			return NULL;
		c->next = ar->head;
		c->used = 0;
		c->size = size;
		ar->head = c;
	}
	void *p = (char *)c->data + c->used;

	c->used += n;
	return p;
}

struct r4_ast *r4_ast_root(void)
{
	struct arena *ar = r4_calloc(1, sizeof(*ar));
	struct r4_ast *root;

	if (!ar)
		return NULL;
	if (!(root = arena_get(ar, sizeof(*root)))) {
		r4_free(ar);
		return NULL;
	}
	memset(root, 0, sizeof(*root));
	root->kind = R4_AST_COMMAND;
	root->arena = ar;
	root->absolute = true;
	return root;
}

void r4_ast_free(r4_ast *root)
{
	struct arena *ar;

	if (!root)
		return;
	ar = root->arena;
	for (struct chunk *c = ar->head, *n; c; c = n) {
		n = c->next;
		r4_free(c);
	}
	r4_free(ar);
}

struct r4_ast *r4_ast_new(struct r4_ast *root, enum r4_ast_kind kind, r4_loc loc)
{
	struct r4_ast *n = arena_get(root->arena, sizeof(*n));

	if (n) {
		memset(n, 0, sizeof(*n));
		n->kind = kind;
		n->loc = loc;
		n->arena = root->arena;
	}
	return n;
}

char *r4_ast_bytes(struct r4_ast *root, const char *p, size_t len)
{
	char *b = arena_get(root->arena, len + 1);

	if (b) {
		memcpy(b, p, len);
		b[len] = 0;
	}
	return b;
}

void r4_ast_add(struct r4_ast *parent, struct r4_ast *kid)
{
	kid->next = NULL;
	if (parent->last)
		parent->last->next = kid;
	else
		parent->kids = kid;
	parent->last = kid;
	parent->nkids++;
}

size_t r4_ast_statements(const r4_ast *ast)
{
	return ast ? ast->nkids : 0;
}

/* ================================= dump ================================= */

static const char *const cmp_names[] = {"eq", "ne", "lt", "gt", "le", "ge"};
static const char *const op_names[] = {"<-", "<<-", "->"};

/* A string as R4L writes it (r4_quote_byte). */
static void put_string(FILE *f, const char *p, size_t len)
{
	char e[5];

	fputc('"', f);
	for (size_t i = 0; i < len; i++)
		fwrite(e, 1, r4_quote_byte(e, (unsigned char)p[i]), f);
	fputc('"', f);
}

/* A quoted name prints as `...' with its bytes, or as `"..."' (escaped
 * like a string) when it holds control bytes. */
static void put_qword(FILE *f, const char *p, size_t len)
{
	bool plain = true;

	for (size_t i = 0; i < len; i++)
		plain &= (unsigned char)p[i] >= 0x20 && (unsigned char)p[i] != 0x7f;
	fputc('`', f);
	if (plain)
		fwrite(p, 1, len, f);
	else
		put_string(f, p, len);
	fputc('\'', f);
}

static void dump(FILE *f, const struct r4_ast *n);

static void dump_block(FILE *f, const struct r4_ast *b)
{
	fputc('(', f);
	for (const struct r4_ast *g = b->kids; g; g = g->next) {
		if (g != b->kids)
			fputs(" ; ", f);
		dump(f, g);
	}
	fputc(')', f);
}

static void dump_path(FILE *f, const struct r4_ast *p)
{
	if (!p->kids) {
		fputc('/', f);
		return;
	}
	for (const struct r4_ast *c = p->kids; c; c = c->next) {
		if (c != p->kids || p->absolute)
			fputc('/', f);
		if (c->kind == R4_AST_WORD) {
			fwrite(c->bytes, 1, c->len, f);	/* words hold no special byte */
		} else if (c->kind == R4_AST_QWORD) {
			put_qword(f, c->bytes, c->len);
		} else {
			dump_block(f, c);
		}
	}
}

static void dump2(FILE *f, const char *op, const struct r4_ast *a, const struct r4_ast *b)
{
	fprintf(f, "(%s ", op);
	dump(f, a);
	if (b) {
		fputc(' ', f);
		dump(f, b);
	}
	fputc(')', f);
}

static void dump(FILE *f, const struct r4_ast *n)
{
	switch (n->kind) {
	case R4_AST_COMMAND:
		break;
	case R4_AST_BLOCK:
		dump_block(f, n);
		break;
	case R4_AST_GROUP:
		for (const struct r4_ast *e = n->kids; e; e = e->next) {
			if (e != n->kids)
				fputs(" , ", f);
			dump(f, e);
		}
		break;
	case R4_AST_ASSIGN:
		if (n->c) {
			fputs("(<= ", f);
			dump_path(f, n->c);
			fputc(' ', f);
		}
		dump2(f, op_names[n->op], n->a, n->b);
		if (n->c)
			fputc(')', f);
		break;
	case R4_AST_IF:
		fputs("(if ", f);
		dump(f, n->a);
		fputc(' ', f);
		dump(f, n->b);
		if (n->c) {
			fputc(' ', f);
			dump(f, n->c);
		}
		fputc(')', f);
		break;
	case R4_AST_OR:
		dump2(f, "or", n->a, n->b);
		break;
	case R4_AST_AND:
		dump2(f, "and", n->a, n->b);
		break;
	case R4_AST_NOT:
		dump2(f, "not", n->a, NULL);
		break;
	case R4_AST_CMP:
		dump2(f, cmp_names[n->op], n->a, n->b);
		break;
	case R4_AST_EXIST:
		dump2(f, "exist", n->a, NULL);
		break;
	case R4_AST_CONCAT:
		dump2(f, "+", n->a, n->b);
		break;
	case R4_AST_DEREF:
		dump2(f, "*", n->a, NULL);
		break;
	case R4_AST_STRING:
		put_string(f, n->bytes, n->len);
		break;
	case R4_AST_NUMBER:
		fprintf(f, "#%s", n->bytes);
		break;
	case R4_AST_TW:
		fputs("(tw", f);
		if (n->len)
			fprintf(f, " %s", n->bytes);
		fputc(' ', f);
		dump_block(f, n->a);
		fputc(')', f);
		break;
	case R4_AST_PATH:
		dump_path(f, n);
		break;
	case R4_AST_WORD:
	case R4_AST_QWORD:
		break;			/* printed by dump_path */
	}
}

int r4_ast_dump(const r4_ast *ast, FILE *f)
{
	for (const struct r4_ast *s = ast->kids; s; s = s->next) {
		dump(f, s);
		fputc('\n', f);
	}
	return ferror(f) ? -EIO : 0;
}
