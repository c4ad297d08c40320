/*
 * util.c - heap funnel, logging, corruption provenance, error text.
 *
 * All engine heap use goes through r4_malloc and friends so that a test can
 * fail the Nth allocation (r4_heap_fail_at) and LeakSanitizer sees every
 * error path.  The engine never prints except through r4_log.
 */
#include "r4_int.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>

#ifdef __SANITIZE_ADDRESS__
#include <sanitizer/asan_interface.h>
#define POISON(p, n) ASAN_POISON_MEMORY_REGION(p, n)
#define UNPOISON(p, n) ASAN_UNPOISON_MEMORY_REGION(p, n)
#else
#define POISON(p, n) ((void)(p), (void)(n))
#define UNPOISON(p, n) ((void)(p), (void)(n))
#endif

static unsigned long heap_countdown;	/* 0 = off; one process, tests only */

void r4_heap_fail_at(unsigned long n)
{
	heap_countdown = n;
}

static bool heap_should_fail(void)
{
	if (heap_countdown == 0)
		return false;
	return --heap_countdown == 0;
}

void *r4_malloc(size_t n)
{
	return heap_should_fail() ? NULL : malloc(n ? n : 1);
}

void *r4_calloc(size_t n, size_t size)
{
	return heap_should_fail() ? NULL : calloc(n ? n : 1, size ? size : 1);
}

void *r4_realloc(void *p, size_t n)
{
	return heap_should_fail() ? NULL : realloc(p, n ? n : 1);
}

void r4_free(void *p)
{
	free(p);
}

/* ---- the block pool ---- */

#define POOL_CHUNK ((size_t)2 << 20)

void r4_pool_init(struct r4_pool *p, size_t size)
{
	assert(size && POOL_CHUNK % size == 0 && size >= sizeof(void *));
	*p = (struct r4_pool){.size = size};
}

/* A 2 MiB chunk at a 2 MiB boundary (where a huge page can back it):
 * twice that mapped, the rest given back. */
static uint8_t *pool_chunk(void)
{
	uint8_t *m = mmap(NULL, 2 * POOL_CHUNK, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uintptr_t at;
	size_t head;

	if (m == MAP_FAILED)
		return NULL;
	at = ((uintptr_t)m + POOL_CHUNK - 1) & ~(uintptr_t)(POOL_CHUNK - 1);
	head = at - (uintptr_t)m;
	if (head)
		munmap(m, head);
	munmap((uint8_t *)at + POOL_CHUNK, POOL_CHUNK - head);
	(void)madvise((void *)at, POOL_CHUNK, MADV_HUGEPAGE);	/* (a hint: THP may be off) */
	return (uint8_t *)at;
}

void *r4_pool_get(struct r4_pool *p, bool zero)
{
	void *b;

	if (heap_should_fail())
		return NULL;
	if (p->free) {
		b = p->free;
		UNPOISON(b, p->size);
		p->free = *(void **)b;
		return zero ? memset(b, 0, p->size) : b;
	}
	if (!p->left) {
		uint8_t *c;

		if (r4_grow(&p->chunks, &p->cap, p->nchunks + 1, sizeof(*p->chunks), 8) ||
		    !(c = pool_chunk()))
			return NULL;
		p->chunks[p->nchunks++] = c;
		p->cur = c;
		p->left = POOL_CHUNK;
	}
	b = p->cur;
	p->cur += p->size;
	p->left -= p->size;
	return b;
}

void r4_pool_put(struct r4_pool *p, void *b)
{
	if (!b)
		return;
	*(void **)b = p->free;
	p->free = b;
	POISON((uint8_t *)b + sizeof(void *), p->size - sizeof(void *));
}

void r4_pool_fini(struct r4_pool *p)
{
	for (size_t i = 0; i < p->nchunks; i++) {
		UNPOISON(p->chunks[i], POOL_CHUNK);
		munmap(p->chunks[i], POOL_CHUNK);
	}
	r4_free(p->chunks);
	*p = (struct r4_pool){.size = p->size};
}

char *r4_memdup(const void *p, size_t n)
{
	char *q = r4_malloc(n + 1);

	if (q) {
		memcpy(q, p, n);
		q[n] = 0;
	}
	return q;
}

int r4_grow(void *pv, size_t *cap, size_t need, size_t size, size_t first)
{
	size_t n = *cap ? *cap : R4_MAX(first, 1);
	void *p;

	if (need <= *cap)
		return 0;
	while (n < need) {
		if (n > SIZE_MAX / 2)
			return -ENOMEM;
		n *= 2;
	}
	if (size && n > SIZE_MAX / size)
		return -ENOMEM;
	memcpy(&p, pv, sizeof(p));	/* (a T * read as a void *: same representation) */
	if (!(p = r4_realloc(p, n * size)))
		return -ENOMEM;
	memcpy(pv, &p, sizeof(p));
	*cap = n;
	return 0;
}

size_t r4_quote_byte(char out[static 5], unsigned char c)
{
	const char *e = c == '\\' ? "\\\\" : c == '"' ? "\\\"" : c == '\n' ? "\\n"
			: c == '\t' ? "\\t" : c == '\r' ? "\\r" : NULL;

	if (e)
		return (size_t)sprintf(out, "%s", e);
	if (c < 0x20 || c == 0x7f)
		return (size_t)sprintf(out, "\\x%02x", c);
	out[0] = (char)c;
	out[1] = 0;
	return 1;
}

void r4_buf_free(struct r4_buf *b)
{
	r4_free(b->p);
	*b = (struct r4_buf){0};
}

int r4_buf_reserve(struct r4_buf *b, size_t n)
{
	return r4_grow(&b->p, &b->cap, n, 1, 64);
}

int r4_buf_set(struct r4_buf *b, const void *p, size_t n)
{
	int rc;

	if ((rc = r4_buf_reserve(b, n + 1)))
		return rc;
	if (n)
		memmove(b->p, p, n);
	b->len = n;
	b->p[n] = 0;
	return 0;
}

int r4_buf_add(struct r4_buf *b, const void *p, size_t n)
{
	int rc;

	if ((rc = r4_buf_reserve(b, b->len + n + 1)))
		return rc;
	if (n)
		memcpy(b->p + b->len, p, n);
	b->len += n;
	b->p[b->len] = 0;
	return 0;
}

int r4_buf_vprintf(struct r4_buf *b, const char *fmt, va_list ap)
{
	va_list again;
	int n, rc;

	va_copy(again, ap);
	n = vsnprintf(NULL, 0, fmt, ap);	/* measured first: any length fits */
	if (n < 0 || (rc = r4_buf_reserve(b, b->len + (size_t)n + 1))) {
		va_end(again);
		return n < 0 ? -EINVAL : rc;
	}
	vsnprintf((char *)b->p + b->len, (size_t)n + 1, fmt, again);
	va_end(again);
	b->len += (size_t)n;
	return 0;
}

int r4_buf_printf(struct r4_buf *b, const char *fmt, ...)
{
	va_list ap;
	int rc;

	va_start(ap, fmt);
	rc = r4_buf_vprintf(b, fmt, ap);
	va_end(ap);
	return rc;
}

int r4_why_set(struct r4_why *why, int rc, const char *fmt, ...)
{
	va_list ap;

	if (!why || why->msg[0])
		return rc;
	va_start(ap, fmt);
	vsnprintf(why->msg, sizeof(why->msg), fmt, ap);
	va_end(ap);
	return rc;
}

char *r4_path_join(const char *dir, const char *name, size_t len)
{
	size_t d = strlen(dir);
	char *s = r4_malloc(d + len + 2);

	if (!s)
		return NULL;
	memcpy(s, dir, d);
	if (d > 1 || dir[0] != '/')
		s[d++] = '/';
	memcpy(s + d, name, len);
	s[d + len] = 0;
	return s;
}

__attribute__((format(printf, 3, 0)))
static void vlog(const struct r4_logger *lg, int level, const char *fmt, va_list ap)
{
	char msg[512];

	vsnprintf(msg, sizeof(msg), fmt, ap);
	if (lg && lg->fn)
		lg->fn(lg->ctx, level, msg);
	else if (!lg)
		fprintf(stderr, "r4: %s\n", msg);
}

void r4_log(const struct r4_logger *lg, int level, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlog(lg, level, fmt, ap);
	va_end(ap);
}

void r4_corrupt_hook(void)
{
}

/* The words of the last rejection reported with no logger (this thread's). */
static _Thread_local char last_why[384];

int r4_corrupt(const struct r4_logger *lg, int rc, uint64_t blk, const char *file, int line,
	       const char *func, const char *fmt, ...)
{
	const char *what = rc == -EBADMSG ? "checksum mismatch" : "corrupt image";
	char why[384];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
#ifdef R4_DEBUG
	r4_corrupt_hook();
#endif
	if (!lg) {	/* a decoder that knows no block: its caller says it */
		memcpy(last_why, why, sizeof(why));
		return rc;
	}
	/* (block 0 is never a tree block: 0 is "not known here") */
	if (blk)
		r4_log(lg, R4_LOG_ERR, "%s at block %llu: %s", what, (unsigned long long)blk, why);
	else
		r4_log(lg, R4_LOG_ERR, "%s: %s", what, why);
	r4_log(lg, R4_LOG_DEBUG, "(found by %s:%d %s)", file, line, func);
	return rc;
}

const char *r4_corrupt_last(void)
{
	return last_why;
}

const char *r4_strerror(int rc)
{
	if (rc == 0)
		return "Success";
	if (rc == -EUCLEAN)
		return "Structure needs cleaning (corrupt image)";
	if (rc == -EMEDIUMTYPE)
		return "not a Reiser4 volume (no Reiser4 super block at offset 65536)";
	return strerror(rc < 0 ? -rc : rc);
}

int r4_parse_size(const char *s, uint64_t *out)
{
	char *end;
	unsigned long long v = strtoull(s, &end, 10);
	int shift = 0;

	if (end == s)
		return -1;
	switch (*end) {
	case 'k': case 'K': shift = 10; end++; break;
	case 'm': case 'M': shift = 20; end++; break;
	case 'g': case 'G': shift = 30; end++; break;
	case 't': case 'T': shift = 40; end++; break;
	default: break;
	}
	if (*end || v > (UINT64_MAX >> shift))
		return -1;
	*out = (uint64_t)v << shift;
	return 0;
}
