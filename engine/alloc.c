/*
 * alloc.c - the format40 bitmap allocator (alloc.h).
 *
 * State: three bit arrays over the whole volume, in 64-bit words with
 * block b at bit b % 64 of word b / 64 (byte order of the words never
 * matters: bytes are taken out with shifts) -
 *   work    every allocation and mark of the running transaction;
 *   commit  the last committed bitmap, what the image holds;
 *   defer   blocks freed in the running transaction, still set in work;
 *   held    blocks the journal keeps (jnl.h's window): set in work and
 *           commit, clear in every bitmap block written (the image has
 *           them free), so encoding compares against commit & ~held;
 *   dest    blocks a held wandered copy is still to be played onto: a
 *           deferred free of one becomes held at apply, not free -
 * plus per zone (one bitmap block) its count of free bits in work, so
 * allocation skips full zones, and a touched flag, so commit and abort
 * visit only zones that changed; and the number of runs of free bits in
 * work (a run's first bit is clear, the one before it set), kept as the
 * words change: what placing new data can split it into (alloc.h).  Bits from `blocks` up to the end of the
 * last zone (and of the last word) are set in work and commit and never
 * cleared; there is always at least one such bit, so a scan for a run of
 * clear bits stops inside the arrays.  Invariants: defer is a subset of work, held
 * of work (and of commit once applied); outside touched zones
 * work == commit and defer is empty; an allocation takes only clear bits of
 * work (a block allocated twice: asserted; a free of a block already free
 * or freed is ignored, as alloc.h says, and callers that must free exactly
 * once assert it on the free count); nfree is the sum of
 * zfree, and after apply or abort each touched zone's count is that of the
 * clear bits of commit (zone_ok, counts_ok; under R4_CHECK_INVARIANTS, as
 * they recount what apply touched: untouched zones equal commit already),
 * and nruns that of the runs of clear bits of work (runs_ok).
 *
 * Zones are (bs - 4) * 8 bits, a whole number of bytes but not of words
 * (32736 bits = 511.5 words at 4 KiB): a zone's passes go word by word,
 * masking the words it shares with its neighbours (word_mask), and its
 * encoding byte by byte only at its ends.
 *
 * Not here: where bitmap blocks are written (the caller's emit, later the
 * journal), free-space reservation for balancing, discard.
 */
#include "alloc.h"

#include "format.h"
#include "io.h"

enum {
	Z_TOUCHED = 1,		/* changed since the last commit or abort */
	Z_FORCE = 2,		/* emit at the next commit even if unchanged (mkfs) */
	CSUM = 4,		/* bytes of the checksum at the start of a bitmap block */
};

struct r4_alloc {
	uint32_t bs;
	uint64_t blocks;
	uint64_t span;			/* bits per zone */
	uint64_t nzones;
	size_t nwords;
	uint64_t *work, *commit, *defer;
	uint64_t *held;			/* kept for the journal: in work and commit, free on disk */
	uint64_t *dest;			/* where a copy the journal holds is still to be played */
	uint32_t *zfree;		/* free bits of work in each zone */
	uint8_t *zstate;		/* Z_ flags */
	size_t *zlo, *zhi;		/* words of each zone changed since the last commit or
					   abort: [zlo, zhi], or zlo > zhi for none */
	uint64_t nfree;			/* free bits of work below blocks */
	uint64_t nruns;			/* runs of free bits of work */
	uint64_t ndefer;		/* bits set in defer */
	uint64_t nheld;			/* bits set in held */
	uint64_t commit_free;		/* free bits of commit below blocks */
	uint64_t cursor;		/* end of the last allocation */
	uint8_t *buf;			/* one bitmap block for emit */
};

static uint8_t get_byte(const uint64_t *w, uint64_t g)
{
	return (uint8_t)(w[g / 8] >> (g % 8 * 8));
}

static void set_byte(uint64_t *w, uint64_t g, uint8_t v)
{
	unsigned sh = (unsigned)(g % 8 * 8);

	w[g / 8] = (w[g / 8] & ~((uint64_t)0xff << sh)) | (uint64_t)v << sh;
}

static bool test_bit(const uint64_t *w, uint64_t b)
{
	return w[b / 64] >> (b % 64) & 1;
}

/* Mask of bits [lo, hi) of word i, for a range [lo, hi) that overlaps it. */
static uint64_t word_mask(size_t i, uint64_t lo, uint64_t hi)
{
	uint64_t base = (uint64_t)i * 64, m = ~UINT64_C(0);

	if (lo > base)
		m &= ~UINT64_C(0) << (lo - base);
	if (hi < base + 64)
		m &= ~UINT64_C(0) >> (base + 64 - hi);
	return m;
}

/* Runs of clear bits of work beginning in words [i0, i1] (block 0 is
 * always used, so a run never begins before the volume). */
static uint64_t run_starts(const struct r4_alloc *a, size_t i0, size_t i1)
{
	uint64_t n = 0;

	for (size_t i = i0; i <= i1 && i < a->nwords; i++) {
		uint64_t before = a->work[i] << 1 | (i ? a->work[i - 1] >> 63 : 1);

		n += (uint64_t)__builtin_popcountll(~a->work[i] & before);
	}
	return n;
}

/* Words [i0, i1] of work are about to change (runs_end after): the runs
 * beginning in them and in the word after, whose first bit's neighbour
 * they hold. */
static uint64_t runs_begin(const struct r4_alloc *a, size_t i0, size_t i1)
{
	return run_starts(a, i0, i1 + 1);
}

static void runs_end(struct r4_alloc *a, size_t i0, size_t i1, uint64_t before)
{
	a->nruns = a->nruns + run_starts(a, i0, i1 + 1) - before;
}

static bool runs_ok(const struct r4_alloc *a)
{
	return a->nruns == run_starts(a, 0, a->nwords - 1);
}

/* Zone z's deferred frees are blocks in use (before apply folds them in). */
static bool defer_ok(const struct r4_alloc *a, uint64_t z)
{
	uint64_t g0 = z * (a->span / 8);

	for (uint64_t j = 0; j < a->span / 8; j++)
		if (get_byte(a->defer, g0 + j) & ~get_byte(a->work, g0 + j))
			return false;
	return true;
}

/* After apply or abort, zone z of commit has zfree[z] clear bits. */
static bool zone_ok(const struct r4_alloc *a, uint64_t z)
{
	uint64_t g0 = z * (a->span / 8), clear = 0;

	for (uint64_t j = 0; j < a->span / 8; j++)
		clear += (uint64_t)(8 - __builtin_popcount(get_byte(a->commit, g0 + j)));
	return clear == a->zfree[z];
}

/* The free count kept as blocks come and go equals the zones' counts
 * (each recounted from its bits when it was last touched). */
static bool counts_ok(const struct r4_alloc *a)
{
	uint64_t sum = 0;

	for (uint64_t z = 0; z < a->nzones; z++)
		sum += a->zfree[z];
	return sum == a->nfree && a->nfree == a->commit_free && a->ndefer == 0 && runs_ok(a);
}

static uint64_t zone_end(const struct r4_alloc *a, uint64_t z)
{
	return (z + 1) * a->span;
}

/* Recount the free bits of zone z in work. */
static void recount_zone(struct r4_alloc *a, uint64_t z)
{
	uint64_t lo = z * a->span, hi = zone_end(a, z), used = 0;

	for (size_t i = (size_t)(lo / 64); i <= (size_t)((hi - 1) / 64); i++)
		used += (uint64_t)__builtin_popcountll(a->work[i] & word_mask(i, lo, hi));
	a->zfree[z] = (uint32_t)(a->span - used);
}

/* Set bits [lo, hi) of work (one zone at most); returns how many were clear. */
static uint64_t work_set(struct r4_alloc *a, uint64_t lo, uint64_t hi)
{
	size_t i0 = (size_t)(lo / 64), i1 = (size_t)((hi - 1) / 64);
	uint64_t n = 0, runs = runs_begin(a, i0, i1);

	for (size_t i = i0; i <= i1; i++) {
		uint64_t m = word_mask(i, lo, hi);

		n += (uint64_t)__builtin_popcountll(m & ~a->work[i]);
		a->work[i] |= m;
	}
	runs_end(a, i0, i1, runs);
	return n;
}

/* Calls fn for each piece of [start, start + count) clipped to the volume
 * and cut at zone boundaries. */
static void for_each_piece(struct r4_alloc *a, uint64_t start, uint64_t count,
			   void (*fn)(struct r4_alloc *, uint64_t z, uint64_t lo, uint64_t hi))
{
	uint64_t end;

	if (start >= a->blocks || count == 0)
		return;
	end = count > a->blocks - start ? a->blocks : start + count;
	while (start < end) {
		uint64_t z = start / a->span, hi = R4_MIN(end, zone_end(a, z));

		fn(a, z, start, hi);
		a->zstate[z] |= Z_TOUCHED;
		a->zlo[z] = R4_MIN(a->zlo[z], (size_t)(start / 64));
		a->zhi[z] = R4_MAX(a->zhi[z], (size_t)((hi - 1) / 64));
		start = hi;
	}
}

/* Marking used also cancels a deferred free of the same blocks. */
static void mark_piece(struct r4_alloc *a, uint64_t z, uint64_t lo, uint64_t hi)
{
	uint64_t n = work_set(a, lo, hi);

	a->zfree[z] -= (uint32_t)n;
	a->nfree -= n;
	for (size_t i = (size_t)(lo / 64); (uint64_t)i * 64 < hi; i++) {
		uint64_t d = a->defer[i] & word_mask(i, lo, hi);

		a->ndefer -= (uint64_t)__builtin_popcountll(d);
		a->defer[i] &= ~d;
	}
}

/* The bits of word i that are never freed: bit 0 of zone z and its bitmap block. */
static uint64_t pinned(const struct r4_alloc *a, uint64_t z, size_t i)
{
	uint64_t b0 = z * a->span, map = r4_format_bitmap_block(a->bs, z), m = 0;

	if (b0 / 64 == i)
		m |= UINT64_C(1) << (b0 % 64);
	if (map / 64 == i)
		m |= UINT64_C(1) << (map % 64);
	return m;
}

static void defer_piece(struct r4_alloc *a, uint64_t z, uint64_t lo, uint64_t hi)
{
	for (size_t i = (size_t)(lo / 64); (uint64_t)i * 64 < hi; i++) {
		uint64_t m = word_mask(i, lo, hi) & a->work[i] & ~a->defer[i] & ~pinned(a, z, i);

		a->ndefer += (uint64_t)__builtin_popcountll(m);
		a->defer[i] |= m;
	}
}

static void release_piece(struct r4_alloc *a, uint64_t z, uint64_t lo, uint64_t hi)
{
	size_t i0 = (size_t)(lo / 64), i1 = (size_t)((hi - 1) / 64);
	uint64_t runs = runs_begin(a, i0, i1);

	for (size_t i = i0; i <= i1; i++) {
		uint64_t m = word_mask(i, lo, hi) & a->work[i] & ~a->commit[i] & ~a->defer[i] &
			     ~pinned(a, z, i);
		uint64_t n = (uint64_t)__builtin_popcountll(m);

		a->work[i] &= ~m;
		a->zfree[z] += (uint32_t)n;
		a->nfree += n;
	}
	runs_end(a, i0, i1, runs);
}

void r4_alloc_mark_used(struct r4_alloc *a, uint64_t start, uint64_t count)
{
	for_each_piece(a, start, count, mark_piece);
}

void r4_alloc_free(struct r4_alloc *a, uint64_t start, uint64_t count)
{
	for_each_piece(a, start, count, defer_piece);
}

void r4_alloc_release(struct r4_alloc *a, uint64_t start, uint64_t count)
{
	for_each_piece(a, start, count, release_piece);
}

/* Allocate [b, b + n), which the search found clear: never a block twice
 * (all n bits were clear, so nfree drops by exactly n). */
static void take_run(struct r4_alloc *a, uint64_t b, uint64_t n)
{
	uint64_t before = a->nfree;

	assert(n > 0 && b + n <= a->blocks);
	r4_alloc_mark_used(a, b, n);
	assert(before - a->nfree == n);
	(void)before;
}

bool r4_alloc_is_used(const struct r4_alloc *a, uint64_t blk)
{
	return blk >= a->blocks || test_bit(a->work, blk);
}

uint64_t r4_alloc_free_count(const struct r4_alloc *a)
{
	return a->nfree + a->ndefer;
}

uint64_t r4_alloc_avail(const struct r4_alloc *a)
{
	return a->nfree;
}

uint64_t r4_alloc_runs(const struct r4_alloc *a)
{
	return a->nruns;
}

uint64_t r4_alloc_committed_free_count(const struct r4_alloc *a)
{
	return a->commit_free;
}

/* The first clear bit of work in [from, to), or UINT64_MAX. */
static uint64_t find_free(const struct r4_alloc *a, uint64_t from, uint64_t to)
{
	uint64_t p = from;

	while (p < to) {
		uint64_t z = p / a->span, zend = R4_MIN(zone_end(a, z), to);
		size_t i;
		uint64_t w;

		if (a->zfree[z] == 0) {
			p = zone_end(a, z);
			continue;
		}
		i = (size_t)(p / 64);
		w = ~a->work[i] & (~UINT64_C(0) << (p % 64));
		for (;;) {
			if (w) {
				uint64_t b = (uint64_t)i * 64 + (uint64_t)__builtin_ctzll(w);

				return b < to ? b : UINT64_MAX;
			}
			if ((uint64_t)++i * 64 >= zend)
				break;
			w = ~a->work[i];
		}
		p = zend;
	}
	return UINT64_MAX;
}

/* Length of the run of clear bits of work from b, at most want. */
static uint64_t free_run(const struct r4_alloc *a, uint64_t b, uint64_t want)
{
	uint64_t n = 0;

	while (n < want) {
		uint64_t q = b + n, w = a->work[q / 64] >> (q % 64);

		if (w) {
			n += (uint64_t)__builtin_ctzll(w);
			break;
		}
		n += 64 - q % 64;	/* bits past the end are set: this stops */
	}
	return R4_MIN(n, want);
}

bool r4_alloc_next_run(const struct r4_alloc *a, uint64_t from, uint64_t *start, uint64_t *len)
{
	uint64_t b = from < a->blocks ? find_free(a, from, a->blocks) : UINT64_MAX;

	if (b == UINT64_MAX)
		return false;
	*start = b;
	*len = free_run(a, b, a->blocks - b);
	return true;
}

bool r4_alloc_first_fit(const struct r4_alloc *a, uint64_t from, uint64_t n, uint64_t *at)
{
	uint64_t s, len;

	for (; r4_alloc_next_run(a, from, &s, &len); from = s + len)
		if (len >= n) {
			*at = s;
			return true;
		}
	return false;
}

uint64_t r4_alloc_run_at(const struct r4_alloc *a, uint64_t blk)
{
	return r4_alloc_is_used(a, blk) ? 0 : free_run(a, blk, a->blocks - blk);
}

int r4_alloc_alloc(struct r4_alloc *a, uint64_t hint, uint64_t want, uint64_t *start,
		   uint64_t *got)
{
	uint64_t h = hint < a->blocks ? hint : a->cursor, b, n;

	if (want == 0)
		return -EINVAL;
	if (a->nfree == 0)
		return -ENOSPC;
	if (h >= a->blocks)
		h = 0;
	if ((b = find_free(a, h, a->blocks)) == UINT64_MAX &&
	    (b = find_free(a, 0, h)) == UINT64_MAX)
		return -ENOSPC;	/* unreachable while nfree is right */
	n = free_run(a, b, want);
	take_run(a, b, n);
	a->cursor = b + n;
	*start = b;
	*got = n;
	return 0;
}

int r4_alloc_alloc_run(struct r4_alloc *a, uint64_t hint, uint64_t want, uint64_t *start,
		       uint64_t *got)
{
	uint64_t h = hint < a->blocks ? hint : a->cursor, need = R4_MIN(want, 64), b, n;

	if (want == 0)
		return -EINVAL;
	if (h >= a->blocks)
		h = 0;
	/* a run that continues the hint, or one of `need` blocks, first fit
	 * from the hint round the volume; else whatever there is */
	for (uint64_t pass = 0, from = h, to = a->blocks; pass < 2; pass++, from = 0, to = h)
		while (from < to && (b = find_free(a, from, to)) != UINT64_MAX) {
			n = free_run(a, b, want);
			if (n >= need || b == hint) {
				take_run(a, b, n);
				a->cursor = b + n;
				*start = b;
				*got = n;
				return 0;
			}
			from = b + n;
		}
	return r4_alloc_alloc(a, hint, want, start, got);
}

/* The last clear bit of work below to, or UINT64_MAX. */
static uint64_t find_free_back(const struct r4_alloc *a, uint64_t to)
{
	while (to > 0) {
		uint64_t z = (to - 1) / a->span, lo = z * a->span;

		for (size_t i = (size_t)((to - 1) / 64); a->zfree[z]; i--) {
			uint64_t w = ~a->work[i] & word_mask(i, lo, to);

			if (w)
				return (uint64_t)i * 64 + 63 - (uint64_t)__builtin_clzll(w);
			if ((uint64_t)i * 64 <= lo)
				break;
		}
		to = lo;
	}
	return UINT64_MAX;
}

int r4_alloc_alloc_high(struct r4_alloc *a, uint64_t want, uint64_t *start, uint64_t *got)
{
	uint64_t b, n = 1;

	if (want == 0)
		return -EINVAL;
	if (a->nfree == 0 || (b = find_free_back(a, a->blocks)) == UINT64_MAX)
		return -ENOSPC;
	while (n < want && n <= b && !test_bit(a->work, b - n))
		n++;
	take_run(a, b + 1 - n, n);
	*start = b + 1 - n;
	*got = n;
	return 0;
}

/* Encode zone z's next committed bitmap (work minus defer) into a->buf;
 * returns whether it differs from the committed one. */
static bool encode_zone(struct r4_alloc *a, uint64_t z)
{
	uint64_t g0 = z * (a->span / 8), end = g0 + a->span / 8;
	uint8_t *out = a->buf + CSUM - g0;
	bool changed = false;

	for (uint64_t g = g0; g < end;) {
		if (g % 8 || end - g < 8) {	/* (a zone's first and last bytes) */
			uint8_t h = get_byte(a->held, g);
			uint8_t v = (uint8_t)(get_byte(a->work, g) & ~get_byte(a->defer, g) & ~h);

			changed |= v != (uint8_t)(get_byte(a->commit, g) & ~h);
			out[g++] = v;
			continue;
		}
		size_t i = (size_t)(g / 8);
		uint64_t h = a->held[i], v = a->work[i] & ~a->defer[i] & ~h;

		changed |= v != (a->commit[i] & ~h);
		for (unsigned b = 0; b < 8; b++)
			out[g + b] = (uint8_t)(v >> (8 * b));
		g += 8;
	}
	r4_le32_put(a->buf, r4_adler32(a->buf + CSUM, a->bs - CSUM));
	return changed;
}

int r4_alloc_encode(struct r4_alloc *a, int (*emit)(void *ctx, uint64_t blk, const uint8_t *buf),
		    void *ctx)
{
	int rc;

	for (uint64_t z = 0; z < a->nzones; z++) {
		if (!a->zstate[z])
			continue;
		if ((encode_zone(a, z) || (a->zstate[z] & Z_FORCE)) &&
		    (rc = emit(ctx, r4_format_bitmap_block(a->bs, z), a->buf)))
			return rc;
	}
	return 0;
}

/* The zone's words that changed since the last commit or abort (the
 * others are as committed): 0 when none did. */
static bool zone_changed(struct r4_alloc *a, uint64_t z, size_t *i0, size_t *i1)
{
	*i0 = a->zlo[z];
	*i1 = a->zhi[z];
	a->zlo[z] = SIZE_MAX;
	a->zhi[z] = 0;
	return *i0 <= *i1;
}

void r4_alloc_apply(struct r4_alloc *a)
{
	uint64_t kept = 0;

	for (uint64_t z = 0; z < a->nzones; z++) {
		uint64_t lo = z * a->span, hi = zone_end(a, z), runs;
		size_t i0, i1;

		if (!a->zstate[z])
			continue;
		R4_INVARIANT(defer_ok(a, z));
		a->zstate[z] = 0;
		if (!zone_changed(a, z, &i0, &i1))
			continue;
		runs = runs_begin(a, i0, i1);
		for (size_t i = i0; i <= i1; i++) {
			uint64_t m = word_mask(i, lo, hi), d = a->defer[i] & m, h = a->held[i];
			/* a freed block the journal still has a copy for stays used */
			uint64_t k = d & a->dest[i] & ~h;

			a->work[i] = (a->work[i] & ~d) | k;
			a->commit[i] = (a->commit[i] & ~m) | (a->work[i] & m);
			a->defer[i] &= ~m;
			a->held[i] = h | k;
			a->zfree[z] += (uint32_t)__builtin_popcountll(d & ~k);
			if (k)
				kept += (uint64_t)__builtin_popcountll(k);
		}
		runs_end(a, i0, i1, runs);
		R4_INVARIANT(zone_ok(a, z));
	}
	a->nfree += a->ndefer - kept;
	a->nheld += kept;
	a->ndefer = 0;
	a->commit_free = a->nfree;
	R4_INVARIANT(counts_ok(a));
}

int r4_alloc_commit(struct r4_alloc *a, int (*emit)(void *ctx, uint64_t blk, const uint8_t *buf),
		    void *ctx)
{
	int rc = r4_alloc_encode(a, emit, ctx);

	if (!rc)
		r4_alloc_apply(a);
	return rc;
}

bool r4_alloc_is_committed(const struct r4_alloc *a, uint64_t blk)
{
	return blk >= a->blocks || test_bit(a->commit, blk);
}

void r4_alloc_abort(struct r4_alloc *a)
{
	for (uint64_t z = 0; z < a->nzones; z++) {
		uint64_t lo = z * a->span, hi = zone_end(a, z), runs;
		size_t i0, i1;

		if (!(a->zstate[z] & Z_TOUCHED))
			continue;
		a->zstate[z] &= (uint8_t)~Z_TOUCHED;
		if (!zone_changed(a, z, &i0, &i1))
			continue;
		runs = runs_begin(a, i0, i1);
		for (size_t i = i0; i <= i1; i++) {
			uint64_t m = word_mask(i, lo, hi), w = a->work[i] & m, c = a->commit[i] & m;

			a->zfree[z] += (uint32_t)__builtin_popcountll(w & ~c);
			a->zfree[z] -= (uint32_t)__builtin_popcountll(c & ~w);
			a->work[i] = (a->work[i] & ~m) | c;
			a->defer[i] &= ~m;
		}
		runs_end(a, i0, i1, runs);
		R4_INVARIANT(zone_ok(a, z));
	}
	a->nfree = a->commit_free;
	a->ndefer = 0;
	R4_INVARIANT(counts_ok(a));
}

void r4_alloc_hold(struct r4_alloc *a, uint64_t blk)
{
	uint64_t m = UINT64_C(1) << (blk % 64);

	assert(blk < a->blocks && (a->work[blk / 64] & m) && !(a->defer[blk / 64] & m));
	if (!(a->held[blk / 64] & m)) {
		a->held[blk / 64] |= m;
		a->nheld++;
	}
}

void r4_alloc_unhold(struct r4_alloc *a, uint64_t blk)
{
	size_t i = (size_t)(blk / 64);
	uint64_t m = UINT64_C(1) << (blk % 64), runs;

	if (blk >= a->blocks || !(a->held[i] & m))
		return;
	assert(a->work[i] & a->commit[i] & m && !(a->defer[i] & m));
	runs = runs_begin(a, i, i);
	a->held[i] &= ~m;
	a->work[i] &= ~m;
	a->commit[i] &= ~m;
	runs_end(a, i, i, runs);
	a->zfree[blk / a->span]++;
	a->nfree++;
	a->commit_free++;
	a->nheld--;
}

bool r4_alloc_is_held(const struct r4_alloc *a, uint64_t blk)
{
	return blk < a->blocks && test_bit(a->held, blk);
}

uint64_t r4_alloc_held(const struct r4_alloc *a)
{
	return a->nheld;
}

void r4_alloc_dest(struct r4_alloc *a, uint64_t blk, bool on)
{
	uint64_t m = UINT64_C(1) << (blk % 64);

	if (blk >= a->blocks)
		return;
	if (on)
		a->dest[blk / 64] |= m;
	else
		a->dest[blk / 64] &= ~m;
}

void r4_alloc_close(struct r4_alloc *a)
{
	if (!a)
		return;
	r4_free(a->work);
	r4_free(a->commit);
	r4_free(a->defer);
	r4_free(a->held);
	r4_free(a->dest);
	r4_free(a->zfree);
	r4_free(a->zstate);
	r4_free(a->zlo);
	r4_free(a->zhi);
	r4_free(a->buf);
	r4_free(a);
}

/* Everything but the bitmap contents: arrays zeroed, past-end bits set. */
static int create(uint32_t bs, uint64_t blocks, struct r4_alloc **out)
{
	struct r4_alloc *a;
	uint64_t nbits;

	if (bs < R4_MIN_BLOCKSIZE || bs > R4_MAX_BLOCKSIZE || (bs & (bs - 1)) || blocks == 0 ||
	    blocks > (UINT64_C(1) << 48))
		return -EINVAL;
	if (!(a = r4_calloc(1, sizeof(*a))))
		return -ENOMEM;
	a->bs = bs;
	a->blocks = blocks;
	a->span = r4_format_bitmap_bits(bs);
	a->nzones = r4_format_bitmap_count(bs, blocks);
	nbits = a->nzones * a->span;
	a->nwords = (size_t)(nbits / 64 + 1);	/* at least one set bit after the last zone */
	if (!(a->work = r4_calloc(a->nwords, 8)) || !(a->commit = r4_calloc(a->nwords, 8)) ||
	    !(a->defer = r4_calloc(a->nwords, 8)) || !(a->held = r4_calloc(a->nwords, 8)) ||
	    !(a->dest = r4_calloc(a->nwords, 8)) ||
	    !(a->zfree = r4_calloc((size_t)a->nzones, sizeof(*a->zfree))) ||
	    !(a->zstate = r4_calloc((size_t)a->nzones, 1)) ||
	    !(a->zlo = r4_malloc((size_t)a->nzones * sizeof(*a->zlo))) ||
	    !(a->zhi = r4_calloc((size_t)a->nzones, sizeof(*a->zhi))) || !(a->buf = r4_malloc(bs))) {
		r4_alloc_close(a);
		return -ENOMEM;
	}
	for (uint64_t z = 0; z < a->nzones; z++)
		a->zlo[z] = SIZE_MAX;
	for (size_t i = (size_t)(blocks / 64); i < a->nwords; i++)
		a->work[i] = a->commit[i] = word_mask(i, blocks, (uint64_t)a->nwords * 64);
	*out = a;
	return 0;
}

/* After the bit arrays are filled: counters from the bits. */
static void count_all(struct r4_alloc *a)
{
	a->nfree = 0;
	for (uint64_t z = 0; z < a->nzones; z++) {
		recount_zone(a, z);
		a->nfree += a->zfree[z];
	}
	a->commit_free = a->nfree;
	a->ndefer = 0;
	a->nruns = run_starts(a, 0, a->nwords - 1);
}

int r4_alloc_new(uint32_t bs, uint64_t blocks, struct r4_alloc **out)
{
	struct r4_alloc *a;
	int rc;

	if ((rc = create(bs, blocks, &a)))
		return rc;
	for (uint64_t z = 0; z < a->nzones; z++) {
		uint64_t bit0 = z * a->span, map = r4_format_bitmap_block(bs, z);

		a->work[bit0 / 64] |= UINT64_C(1) << (bit0 % 64);
		if (map < blocks)
			a->work[map / 64] |= UINT64_C(1) << (map % 64);
	}
	memcpy(a->commit, a->work, a->nwords * 8);
	count_all(a);
	memset(a->zstate, Z_FORCE, (size_t)a->nzones);
	*out = a;
	return 0;
}

int r4_alloc_load(struct r4_io *io, const struct r4_logger *lg, uint32_t bs, uint64_t blocks,
		  struct r4_alloc **out)
{
	struct r4_alloc *a;
	int rc;

	if ((rc = create(bs, blocks, &a)))
		return rc;
	for (uint64_t z = 0; z < a->nzones; z++) {
		uint64_t blk = r4_format_bitmap_block(bs, z), g0 = z * (a->span / 8);
		uint32_t want, have;

		if ((rc = r4_io_read(io, blk * bs, a->buf, bs)))
			goto fail;
		want = r4_le32_get(a->buf);
		have = r4_adler32(a->buf + CSUM, bs - CSUM);
		if (want != have) {
			rc = R4_BADCSUM(lg, blk,
					"bitmap of zone %llu: stored Adler-32 %08x, computed %08x",
					(unsigned long long)z, want, have);
			goto fail;
		}
		if (!(a->buf[CSUM] & 1)) {
			rc = R4_CORRUPT(lg, blk, "bitmap of zone %llu: bit 0 (block %llu) is clear",
					(unsigned long long)z, (unsigned long long)(z * a->span));
			goto fail;
		}
		for (uint64_t j = 0; j < a->span / 8; j++)
			set_byte(a->work, g0 + j,
				 (uint8_t)(get_byte(a->work, g0 + j) | a->buf[CSUM + j]));
	}
	memcpy(a->commit, a->work, a->nwords * 8);
	count_all(a);
	*out = a;
	return 0;
fail:
	r4_alloc_close(a);
	return rc;
}
