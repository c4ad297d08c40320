/*
 * r4_int.h - what every engine file shares: byte-order helpers, the heap
 * funnel, keys, logging and the corruption-provenance macros.
 *
 * Not public: programs include r4.h only.  Every on-disk integer of Reiser4
 * is little-endian; it is read and written through r4_le*_get/put, never by
 * casting a buffer to a struct (STYLE.md section 5).
 */
#ifndef R4_INT_H
#define R4_INT_H

#include <assert.h>
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "r4.h"

/* ---- invariants (STYLE.md section 6) ---- */

/*
 * What only our code can break is asserted; disk data and user input never
 * are.  Cheap invariants (a counter, a neighbour's key, a state flag) use
 * assert(3) directly: on in every build without NDEBUG, and a failure
 * aborts with file, line and expression.  R4_INVARIANT is for the ones that
 * walk a whole structure (the cache's hash against its lists, a bitmap's
 * popcount against its counters), and for those that hold on every image
 * r4 check passes but that a crafted one could break (key order across a
 * parent's delimiting key): asserted only when R4_CHECK_INVARIANTS is
 * defined, which the sanitizer build (SAN=1, what make check runs) does.
 * Otherwise the expression is not evaluated, only type-checked, so a
 * predicate used only here is not an unused function.
 */
#ifdef R4_CHECK_INVARIANTS
#define R4_INVARIANT(e) assert(e)
#else
#define R4_INVARIANT(e) ((void)sizeof((e) ? 1 : 0))
#endif

/* ---- byte order ---- */

static inline uint16_t r4_le16_get(const uint8_t *p)
{
	return (uint16_t)(p[0] | (p[1] << 8));
}

static inline uint32_t r4_le32_get(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static inline uint64_t r4_le64_get(const uint8_t *p)
{
	return (uint64_t)r4_le32_get(p) | (uint64_t)r4_le32_get(p + 4) << 32;
}

static inline void r4_le16_put(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
}

static inline void r4_le32_put(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)(v >> 16);
	p[3] = (uint8_t)(v >> 24);
}

static inline void r4_le64_put(uint8_t *p, uint64_t v)
{
	r4_le32_put(p, (uint32_t)v);
	r4_le32_put(p + 4, (uint32_t)(v >> 32));
}

/* (the heap funnel, r4_malloc and friends, is in r4.h: the parser uses it too) */

/*
 * A pool of equal blocks (the node cache's buffers, util.c): carved from
 * 2 MiB chunks that the kernel may back with huge pages (MADV_HUGEPAGE),
 * so a transaction's thousands of new nodes fault in, and go at exit, a
 * chunk at a time instead of a page at a time.  A block put back is taken
 * again first; the chunks go at r4_pool_fini.  r4_pool_get is NULL when
 * memory is short, or when a test fails the allocation (r4_heap_fail_at),
 * as r4_malloc; with zero, the block reads as zeros (a chunk's fresh
 * memory is, a block taken again is cleared).  Under AddressSanitizer a
 * block put back is poisoned.
 */
struct r4_pool {
	size_t size;		/* of a block: a divisor of 2 MiB */
	void *free;		/* blocks put back, each holding the next's address */
	uint8_t *cur;		/* the rest of the newest chunk */
	size_t left;
	void **chunks;
	size_t nchunks, cap;
};

void r4_pool_init(struct r4_pool *p, size_t size);
void *r4_pool_get(struct r4_pool *p, bool zero);
void r4_pool_put(struct r4_pool *p, void *b);
void r4_pool_fini(struct r4_pool *p);

/* ---- keys (large keys: four 64-bit elements, ENGINE.md section 2) ---- */

typedef struct r4_key {
	uint64_t el[4];
} r4_key;

enum {				/* minor packing locality (key type), kassign.h */
	R4_KEY_NAME = 0,	/* directory entry */
	R4_KEY_SD = 1,		/* stat data */
	R4_KEY_ATTRNAME = 2,
	R4_KEY_ATTRBODY = 3,
	R4_KEY_BODY = 4,	/* file body: tail, extent, ctail */
};

#define R4_KEY_SIZE 32
#define R4_OID_MASK ((UINT64_C(1) << 60) - 1)

#define R4_ROOT_OID 42		/* the root directory's object id */

static inline uint64_t r4_key_locality(const r4_key *k) { return k->el[0] >> 4; }
static inline unsigned r4_key_type(const r4_key *k) { return (unsigned)(k->el[0] & 0xf); }
static inline uint64_t r4_key_ordering(const r4_key *k) { return k->el[1]; }
static inline uint64_t r4_key_objectid(const r4_key *k) { return k->el[2] & R4_OID_MASK; }
static inline uint64_t r4_key_offset(const r4_key *k) { return k->el[3]; }

static inline void r4_key_set(r4_key *k, uint64_t loc, unsigned type, uint64_t ord, uint64_t oid,
			      uint64_t off)
{
	k->el[0] = loc << 4 | (type & 0xf);
	k->el[1] = ord;
	k->el[2] = oid & R4_OID_MASK;
	k->el[3] = off;
}

static inline int r4_key_cmp(const r4_key *a, const r4_key *b)
{
	for (int i = 0; i < 4; i++)
		if (a->el[i] != b->el[i])
			return a->el[i] < b->el[i] ? -1 : 1;
	return 0;
}

static inline void r4_key_decode(const uint8_t *p, r4_key *k)
{
	for (int i = 0; i < 4; i++)
		k->el[i] = r4_le64_get(p + 8 * i);
}

static inline void r4_key_encode(const r4_key *k, uint8_t *p)
{
	for (int i = 0; i < 4; i++)
		r4_le64_put(p + 8 * i, k->el[i]);
}

/* The largest key; used as the right delimiting key of the rightmost node. */
static inline r4_key r4_key_max(void)
{
	r4_key k = {{UINT64_MAX, UINT64_MAX, UINT64_MAX, UINT64_MAX}};
	return k;
}

/* ---- logging and corruption provenance ---- */

/* Where log lines go; NULL logger means stderr. Set per db (r4_open). */
typedef void (*r4_log_fn)(void *ctx, int level, const char *msg);

struct r4_logger {
	r4_log_fn fn;
	void *ctx;
};

void r4_log(const struct r4_logger *lg, int level, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/*
 * Report rejected on-disk data: logs "corrupt image at block N: why"
 * (blk 0: not known here) and, at R4_LOG_DEBUG, where in r4 it was found;
 * returns -EUCLEAN (R4_CORRUPT) or -EBADMSG (R4_BADCSUM).  With lg NULL (a
 * decoder that knows no block) it logs nothing and keeps why for its
 * caller, who names the block: r4_corrupt_last().
 */
int r4_corrupt(const struct r4_logger *lg, int rc, uint64_t blk, const char *file, int line,
	       const char *func, const char *fmt, ...) __attribute__((format(printf, 7, 8)));
/* The words of this thread's last r4_corrupt with no logger ("" if none). */
const char *r4_corrupt_last(void);
void r4_corrupt_hook(void);

#define R4_CORRUPT(lg, blk, ...) \
	r4_corrupt((lg), -EUCLEAN, (blk), __FILE__, __LINE__, __func__, __VA_ARGS__)
#define R4_BADCSUM(lg, blk, ...) \
	r4_corrupt((lg), -EBADMSG, (blk), __FILE__, __LINE__, __func__, __VA_ARGS__)

/* ---- checksums (csum.c) ---- */

/* CRC32C (Castagnoli), reflected, as reiser4progs' crc32c_le(seed, buf, len):
 * no inversion inside; the caller picks the seed (node41 seeds with ~0). */
uint32_t r4_crc32c(uint32_t seed, const void *buf, size_t len);
/* Adler-32 of buf, as the bitmap block checksum of format40 uses it. */
uint32_t r4_adler32(const void *buf, size_t len);

#define R4_ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* Put the words of a failure into why (when not NULL and still empty: the
 * first reason stands); returns rc, for `return r4_why_set(why, rc, ...)`. */
int r4_why_set(struct r4_why *why, int rc, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
#define R4_MIN(a, b) ((a) < (b) ? (a) : (b))
#define R4_MAX(a, b) ((a) > (b) ? (a) : (b))

/* Index of the first of v[0, n), ascending, that is >= x (n: none). */
static inline size_t r4_lower_bound(const uint64_t *v, size_t n, uint64_t x)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (v[mid] < x)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

#endif
