/*
 * plan.c - transaction plans: building them and explain (r4.h;
 * docs/plan.md), and the words the language shares with the engine: the
 * table of pseudo file names (what reading and writing one does is
 * pseudo.c's) and the names of constants.  The executor is exec.c.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "r4_int.h"

static const char *const op_names[R4_PLAN_NOPS] = {
	[R4_PLAN_BEGIN] = "BEGIN",	[R4_PLAN_COMMIT] = "COMMIT",
	[R4_PLAN_LOOKUP] = "LOOKUP",	[R4_PLAN_DEREF] = "DEREF",
	[R4_PLAN_READ] = "READ",	[R4_PLAN_CONST] = "CONST",
	[R4_PLAN_CONCAT] = "CONCAT",	[R4_PLAN_TEST] = "TEST",
	[R4_PLAN_JUMP] = "JUMP",	[R4_PLAN_JUMPF] = "JUMPF",
	[R4_PLAN_JUMPT] = "JUMPT",	[R4_PLAN_WRITE] = "WRITE",
	[R4_PLAN_APPEND] = "APPEND",	[R4_PLAN_SYMLINK] = "SYMLINK",
	[R4_PLAN_CREATE] = "CREATE",	[R4_PLAN_LINK] = "LINK",
	[R4_PLAN_UNLINK] = "UNLINK",	[R4_PLAN_RENAME] = "RENAME",
	[R4_PLAN_SETATTR] = "SETATTR",	[R4_PLAN_WINDOW] = "WINDOW",
	[R4_PLAN_RULE] = "RULE",	[R4_PLAN_AUDIT] = "AUDIT",
	[R4_PLAN_SCOPE] = "SCOPE",	[R4_PLAN_ENDSCOPE] = "ENDSCOPE",
	[R4_PLAN_GROUP] = "GROUP",	[R4_PLAN_MEMBER] = "MEMBER",
	[R4_PLAN_ENDGROUP] = "ENDGROUP", [R4_PLAN_TRY] = "TRY",
	[R4_PLAN_ENDTRY] = "ENDTRY",	[R4_PLAN_RESULT] = "RESULT",
	[R4_PLAN_RESVAL] = "RESVAL",	[R4_PLAN_YIELD] = "YIELD",
};

const char *r4_plan_op_name(enum r4_plan_op op)
{
	return op < R4_PLAN_NOPS && op_names[op] ? op_names[op] : "?";
}

/* ================================ building ============================== */

struct r4_plan *r4_plan_new(void)
{
	return r4_calloc(1, sizeof(struct r4_plan));
}

void r4_plan_free(struct r4_plan *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->nsteps; i++)
		r4_free((char *)p->steps[i].str);
	for (size_t i = 0; i < p->nconsts; i++)
		r4_free((char *)p->consts[i].p);
	r4_free(p->steps);
	r4_free(p->consts);
	r4_free(p->chash);
	r4_free(p);
}

struct r4_plan *r4_plan_copy(const struct r4_plan *p)
{
	struct r4_plan *c = r4_plan_new();
	int32_t k;

	if (!c)
		return NULL;
	for (size_t i = 0; i < p->nsteps; i++)
		if (r4_plan_add(c, &p->steps[i]) < 0)
			goto fail;
	for (size_t i = 0; i < p->nconsts; i++)
		if (r4_plan_const(c, p->consts[i].p, p->consts[i].len, &k) ||
		    k != R4_PLAN_CONST_OF(i))
			goto fail;	/* (the constants of a plan are distinct) */
	c->nh = p->nh;
	c->nv = p->nv;
	c->units = p->units;
	return c;
fail:
	r4_plan_free(c);
	return NULL;
}

int r4_plan_add(struct r4_plan *p, const struct r4_step *s)
{
	struct r4_step *st;

	if (r4_grow(&p->steps, &p->cap, p->nsteps + 1, sizeof(*p->steps), 32))
		return -ENOMEM;
	st = &p->steps[p->nsteps];
	*st = *s;
	if (s->str && !(st->str = r4_memdup(s->str, strlen(s->str))))
		return -ENOMEM;
	return (int)p->nsteps++;
}

/* Eight bytes a step (a byte at a time, hashing the 100-byte constants
 * of a 100,000-line script was a tenth of compiling it); the top bits of
 * the last multiply folded down, as the table takes the low ones. */
static uint32_t const_hash(const void *bytes, size_t len)
{
	const uint8_t *b = bytes;
	uint64_t h = UINT64_C(0x9e3779b97f4a7c15) ^ len, w;

	for (; len >= 8; b += 8, len -= 8) {
		memcpy(&w, b, 8);
		h = (h ^ w) * UINT64_C(0xff51afd7ed558ccd);
		h ^= h >> 32;
	}
	w = 0;
	memcpy(&w, b, len);
	h = (h ^ w) * UINT64_C(0xc4ceb9fe1a85ec53);
	return (uint32_t)(h ^ h >> 29 ^ h >> 47);
}

/* The constants by hash (open addressing; slot = index + 1, 0 = empty),
 * kept at most half full. */
static int const_rehash(struct r4_plan *p)
{
	size_t size = p->chsize ? p->chsize * 2 : 64;
	uint32_t *t = r4_calloc(size, sizeof(*t));

	if (!t)
		return -ENOMEM;
	for (size_t i = 0; i < p->nconsts; i++) {
		size_t at = const_hash(p->consts[i].p, p->consts[i].len) & (size - 1);

		while (t[at])
			at = (at + 1) & (size - 1);
		t[at] = (uint32_t)i + 1;
	}
	r4_free(p->chash);
	p->chash = t;
	p->chsize = size;
	return 0;
}

int r4_plan_const(struct r4_plan *p, const void *bytes, size_t len, int32_t *operand)
{
	size_t at;
	char *c;

	if ((p->nconsts + 1) * 2 > p->chsize && const_rehash(p))
		return -ENOMEM;
	at = const_hash(bytes, len) & (p->chsize - 1);
	for (; p->chash[at]; at = (at + 1) & (p->chsize - 1)) {
		size_t i = p->chash[at] - 1;

		if (p->consts[i].len == len && !memcmp(p->consts[i].p, bytes, len)) {
			*operand = R4_PLAN_CONST_OF(i);
			return 0;
		}
	}
	if (r4_grow(&p->consts, &p->ccap, p->nconsts + 1, sizeof(*p->consts), 16) ||
	    !(c = r4_memdup(bytes, len)))
		return -ENOMEM;
	p->consts[p->nconsts].p = c;
	p->consts[p->nconsts].len = len;
	*operand = R4_PLAN_CONST_OF(p->nconsts);
	p->nconsts++;
	p->chash[at] = (uint32_t)p->nconsts;
	return 0;
}

/* ================================ explain =============================== */

struct buf {
	char s[1024];
	size_t n;
};

__attribute__((format(printf, 2, 3)))
static void put(struct buf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (b->n >= sizeof(b->s))
		return;
	va_start(ap, fmt);
	n = vsnprintf(b->s + b->n, sizeof(b->s) - b->n, fmt, ap);
	va_end(ap);
	if (n > 0)
		b->n = R4_MIN(b->n + (size_t)n, sizeof(b->s) - 1);
}

/* A constant as a string literal (r4_quote_byte); long ones cut. */
static void put_const(struct buf *b, const struct r4_plan *p, int32_t x)
{
	size_t k = R4_PLAN_CONST_INDEX(x), len = p->consts[k].len;
	const unsigned char *s = (const unsigned char *)p->consts[k].p;
	char e[5];

	put(b, "\"");
	for (size_t i = 0; i < len && i < 40; i++) {
		r4_quote_byte(e, s[i]);
		put(b, "%s", e);
	}
	put(b, len > 40 ? "\"..." : "\"");
}

static void put_v(struct buf *b, const struct r4_plan *p, int32_t x)
{
	if (R4_PLAN_IS_CONST(x))
		put_const(b, p, x);
	else if (x >= 0)
		put(b, "v%d", x);
	else
		put(b, "-");
}

static const char *const test_names[] = {"eq", "ne", "lt", "gt", "le", "ge", "not", "true",
					 "exist"};
/* The table of pseudo files: what the language and the engine (pseudo.c)
 * both read. */

#define RW (R4_PSF_READ | R4_PSF_WRITE)
static const struct r4_pseudo_info pseudo[] = {	/* LANGUAGE.md 6.1 and 6.2 */
	{"..uid", R4_PSEUDO_UID, RW},
	{"..owner", R4_PSEUDO_UID, RW},
	{"..gid", R4_PSEUDO_GID, RW},
	{"..mode", R4_PSEUDO_MODE, RW | R4_PSF_OCTAL},
	{"..type", R4_PSEUDO_TYPE, R4_PSF_READ},
	{"..size", R4_PSEUDO_SIZE, RW},
	{"..nlink", R4_PSEUDO_NLINK, R4_PSF_READ},
	{"..atime", R4_PSEUDO_ATIME, RW},
	{"..mtime", R4_PSEUDO_MTIME, RW},
	{"..ctime", R4_PSEUDO_CTIME, R4_PSF_READ},
	{"..oid", R4_PSEUDO_OID, R4_PSF_READ},
	{"..key", R4_PSEUDO_KEY, R4_PSF_READ},
	{"..plugin", R4_PSEUDO_PLUGIN, R4_PSF_READ | R4_PSF_SUBTYPE},
	{"..list", R4_PSEUDO_LIST, R4_PSF_READ},
	{"..body", R4_PSEUDO_BODY, RW},
	{"..name", R4_PSEUDO_NAME, RW},
	{"..unlink", R4_PSEUDO_UNLINK, R4_PSF_WRITE},
	{"..acl", R4_PSEUDO_ACL, RW | R4_PSF_BLOCK | R4_PSF_LEAF_BLOCK},
	{"..audit", R4_PSEUDO_AUDIT, RW | R4_PSF_BLOCK | R4_PSF_LEAF_BLOCK},
	{"..invert", R4_PSEUDO_INVERT, RW},
	{"..new", R4_PSEUDO_NEW, R4_PSF_BLOCK | R4_PSF_ONLY_BLOCK},
	{"..link", R4_PSEUDO_LINK, R4_PSF_BLOCK | R4_PSF_ONLY_BLOCK},
	{"..range", R4_PSEUDO_RANGE, R4_PSF_BLOCK | R4_PSF_ONLY_BLOCK},
};
#undef RW

const struct r4_pseudo_info *r4_pseudo_lookup(const char *name, size_t len)
{
	for (size_t i = 0; i < R4_ARRAY_SIZE(pseudo); i++)
		if (strlen(pseudo[i].name) == len && !memcmp(pseudo[i].name, name, len))
			return &pseudo[i];
	return NULL;
}

const struct r4_pseudo_info *r4_pseudo_at(size_t i)
{
	return i < R4_ARRAY_SIZE(pseudo) ? &pseudo[i] : NULL;
}

const char *r4_pseudo_name(enum r4_pseudo id)
{
	for (size_t i = 0; i < R4_ARRAY_SIZE(pseudo); i++)
		if (pseudo[i].id == id)
			return pseudo[i].name;
	return "?";
}

const char *const r4_new_types[] = {"regular", "directory", "symlink", "aggregate", "invert",
				    NULL};
const char *const r4_formats[] = {"passwd", "colon", NULL};
const char *const r4_win_modes[] = {"shift", "zero", "overlay", NULL};
const char *const r4_accesses[] = {"denied", "read", "write", NULL};

/* Could the name be spelled as a bare word (LANGUAGE.md 2.3)? */
static bool bare(const char *w, size_t n)
{
	static const char *const kw[] = {"if", "then", "else", "not", "and", "or", "exist",
					 "eq", "ne", "lt", "gt", "le", "ge", "tw"};

	if (!n || w[n - 1] == '-')
		return false;
	for (size_t i = 0; i < n; i++) {
		unsigned char ch = (unsigned char)w[i];

		if (ch <= 0x20 || ch == 0x7f || strchr("/\\()[]{}<>;,+*\"'`#", ch))
			return false;
	}
	for (size_t i = 0; i < sizeof(kw) / sizeof(kw[0]); i++)
		if (strlen(kw[i]) == n && !memcmp(kw[i], w, n))
			return false;
	return true;
}

/* A path text: components that are no bare word in `...' quotes. */
static void put_path(struct buf *b, const char *path)
{
	const char *s = path;

	if (*s == '/') {
		put(b, "/");
		s++;
	}
	while (*s) {
		const char *e = strchr(s, '/');
		size_t n = e ? (size_t)(e - s) : strlen(s);

		if (bare(s, n))
			put(b, "%.*s", (int)n, s);
		else
			put(b, "`%.*s'", (int)n, s);
		s += n;
		if (*s == '/') {
			put(b, "/");
			s++;
		}
	}
}

static void operands(struct buf *b, const struct r4_plan *p, const struct r4_step *s)
{
	switch (s->op) {
	case R4_PLAN_BEGIN:
	case R4_PLAN_COMMIT:
		if (s->str)
			put(b, "%s", s->str);
		break;
	case R4_PLAN_LOOKUP:
		put(b, "h%d = ", s->a);
		if (s->b >= 0)
			put(b, "h%d/", s->b);
		put_path(b, s->str);
		if (s->flags & R4_LOOK_CREATE)
			put(b, "  create");
		if (s->flags & R4_LOOK_MISSING)
			put(b, "  missing");
		if (s->flags & R4_LOOK_NOFOLLOW)
			put(b, "  nofollow");
		if (s->flags & R4_LOOK_EXIST)
			put(b, "  exist-test");
		break;
	case R4_PLAN_DEREF:
		put(b, "h%d = *", s->a);
		put_v(b, p, s->b);
		break;
	case R4_PLAN_READ:
		put(b, "v%d = h%d", s->a, s->b);
		break;
	case R4_PLAN_CONST:
		put(b, "v%d = ", s->a);
		put_v(b, p, s->b);
		break;
	case R4_PLAN_CONCAT:
		put(b, "v%d = ", s->a);
		put_v(b, p, s->b);
		put(b, " + ");
		put_v(b, p, s->c);
		break;
	case R4_PLAN_TEST:
		put(b, "v%d = %s ", s->a, s->flags < 9 ? test_names[s->flags] : "?");
		if (s->flags == R4_TEST_EXIST) {
			put(b, "h%d", s->b);
		} else {
			put_v(b, p, s->b);
			if (s->flags <= R4_TEST_GE) {
				put(b, " ");
				put_v(b, p, s->c);
			}
		}
		break;
	case R4_PLAN_JUMP:
		put(b, "-> %d", s->a);
		break;
	case R4_PLAN_JUMPF:
	case R4_PLAN_JUMPT:
		put_v(b, p, s->a);
		put(b, " -> %d", s->b);
		break;
	case R4_PLAN_WRITE:
	case R4_PLAN_APPEND:
	case R4_PLAN_SYMLINK:
		/* the opcode says replace or append: both read "h <- v" (LANGUAGE.md 9) */
		put(b, "h%d %s ", s->a, s->op == R4_PLAN_SYMLINK ? "->" : "<-");
		put_v(b, p, s->b);
		break;
	case R4_PLAN_CREATE:
		put(b, "h%d = h%d/", s->a, s->b);
		put_v(b, p, s->c);
		put(b, "  %s", (s->flags & 0xff) < 5 ? r4_new_types[s->flags & 0xff] : "?");
		if (s->d != -1) {
			put(b, " perm ");
			put_v(b, p, s->d);
		}
		if (s->e != -1) {
			put(b, " target ");
			put_v(b, p, s->e);
		}
		if ((s->flags & 0xff) == R4_NEW_AGGREGATE)
			put(b, " format %s", r4_formats[(s->flags >> 8) == R4_FORMAT_COLON]);
		break;
	case R4_PLAN_LINK:
		put(b, "h%d = h%d/", s->a, s->b);
		put_v(b, p, s->c);
		put(b, " -> h%d", s->d);
		break;
	case R4_PLAN_UNLINK:
	case R4_PLAN_RENAME:
		put(b, "h%d ", s->a);
		put_v(b, p, s->b);
		break;
	case R4_PLAN_SETATTR:
		put(b, "h%d %s", s->a, r4_pseudo_name((enum r4_pseudo)(s->flags & 0xffff)));
		if (s->str)
			put(b, "/%s", s->str);
		put(b, s->flags & R4_SETATTR_APPEND ? " <<- " : " <- ");
		put_v(b, p, s->b);
		break;
	case R4_PLAN_WINDOW:
		put(b, "h%d = h%d offset ", s->a, s->b);
		put_v(b, p, s->c);
		put(b, " length ");
		put_v(b, p, s->d);
		put(b, "  %s", s->flags < 3 ? r4_win_modes[s->flags] : "?");
		break;
	case R4_PLAN_RULE:
		put(b, "h%d %s ", s->a, s->flags & R4_RULE_GID ? "gid" : "uid");
		put_v(b, p, s->b);
		put(b, " %s", (s->flags >> 1) < 3 ? r4_accesses[s->flags >> 1] : "?");
		break;
	case R4_PLAN_AUDIT:
		put(b, "h%d log h%d", s->a, s->b);
		break;
	case R4_PLAN_SCOPE:
		put(b, "h%d", s->a);
		break;
	case R4_PLAN_GROUP:
		put(b, "%d members", s->a);
		break;
	case R4_PLAN_TRY:
		put(b, "r%d %s -> %d", s->b, s->str ? s->str : "", s->a);
		break;
	case R4_PLAN_ENDTRY:
		put(b, "r%d", s->a);
		break;
	case R4_PLAN_RESULT:
		put(b, "h%d", s->a);
		if (s->flags)
			put(b, " %s", r4_pseudo_name((enum r4_pseudo)s->flags));
		if (s->b >= 0)
			put(b, " -> r%d", s->b);
		break;
	case R4_PLAN_RESVAL:
		put(b, "v%d = r%d/%s", s->a, s->b, s->flags ? "assign_length" : "assign_result");
		break;
	case R4_PLAN_YIELD:
		if (s->flags & R4_YIELD_H)
			put(b, "h%d", s->a);
		else
			put_v(b, p, s->a);
		break;
	default:
		break;
	}
}

/* 1-based line and column of off; starts[] holds the offset of each
 * line's first byte (n lines). */
static void position(const size_t *starts, size_t n, size_t len, uint32_t off, unsigned *line,
		     unsigned *col)
{
	size_t lo = 0, hi = n;

	if (off > len)
		off = (uint32_t)len;
	while (hi - lo > 1) {	/* the last line starting at or before off */
		size_t mid = (lo + hi) / 2;

		if (starts[mid] <= off)
			lo = mid;
		else
			hi = mid;
	}
	*line = (unsigned)lo + 1;
	*col = (unsigned)(off - starts[lo]) + 1;
}

int r4_plan_explain(const struct r4_plan *p, const char *src, size_t len, FILE *f)
{
	size_t n = 1, *starts;

	for (size_t i = 0; i < len; i++)
		n += src[i] == '\n';
	if (!(starts = r4_malloc(n * sizeof(*starts))))
		return -ENOMEM;
	starts[0] = 0;
	n = 1;
	for (size_t i = 0; i < len; i++)
		if (src[i] == '\n')
			starts[n++] = i + 1;
	for (size_t i = 0; i < p->nsteps; i++) {
		const struct r4_step *s = &p->steps[i];
		struct buf b = {.n = 0};
		unsigned l1, c1, l2, c2;

		b.s[0] = 0;
		put(&b, "%-7s ", r4_plan_op_name(s->op));
		operands(&b, p, s);
		position(starts, n, len, s->off, &l1, &c1);
		position(starts, n, len, s->len ? s->off + s->len - 1 : s->off, &l2, &c2);
		/* the range in column 42, or one space after a long line */
		fprintf(f, "%2zu  %-36s %u:%u-%u:%u\n", i, b.s, l1, c1, l2, c2);
	}
	r4_free(starts);
	return ferror(f) ? -EIO : 0;
}
