/*
 * key.c - hash plugins, fibration plugins and large-key assignment.
 *
 * Owns the functions that turn a name into the 64-bit values of an entry
 * key, and the printing of keys for dumps.  It knows nothing of items or
 * trees: the cde item code stores what r4_key_entry computes, obj.c picks
 * the directory's hash and fibration ids from its plugin set.
 *
 * Every value here is on-disk format, so each function reproduces the
 * reiser4progs 1.2.2 plugin of the same id bit for bit (plugin/hash/,
 * plugin/fibre/, plugin/key/key_large/), which agrees with the kernel's
 * kassign.c, fibration.c and hash.c except where noted below:
 *
 *  - rupasov: the powers of ten are 32-bit unsigned in progs and 32-bit
 *    signed in the kernel, so the two differ once a power or the leading
 *    term has bit 31 set (tails of 11+ bytes, or a first byte below '0').
 *    We follow progs, so fsck.reiser4 agrees with what we write.  Its
 *    value for len 0 (never used for keys: a hashed tail is 9+ bytes) is
 *    the one progs' loops converge to, as if name[0] were NUL.
 *  - r5 and fnv1 stop at a NUL in the kernel, use len in progs; names
 *    never hold NUL, so the two agree on every real name.
 *  - tea is the reiser3 TEA hash "blindly upgraded" to 64-bit arithmetic
 *    (it is no longer TEA, but it is the format).
 *
 * Fibres are 8-bit values shifted left by 57, so a fibre's bit 7 falls off
 * the key: ext_1 of "x.c" is 'c' = 0x63 -> el1 bits 63..57 = 0x63, and
 * ext_1 of "x.\xe9" keeps 0x69.  Bit 56 (H) marks a long name.
 *
 * tests/unit/test_key.c pins all of it to values printed by libreiser4.
 */
#include "key.h"
#include "plugin.h"

#include <inttypes.h>
#include <stdio.h>

/* ---- hash plugins ---- */

/*
 * The "yura" hash: name bytes read as decimal digits (byte - '0', so any
 * byte is a "digit"), plus the sum of 40..255 past the name, times 128.
 */
static uint64_t hash_rupasov(const uint8_t *s, size_t len)
{
	uint64_t a = 0;
	uint32_t pow = 1;	/* 10^(len - 1 - i) mod 2^32 */
	size_t lo;

	if (len == 0)
		return (uint64_t)(uint32_t)(0 - '0') << 7;
	for (size_t i = len - 1; i >= 1; i--) {
		a += (uint64_t)(int64_t)(s[i] - '0') * pow;	/* digit sign-extends */
		pow *= 10;
	}
	if (len == 1)
		a = (uint64_t)(int64_t)(s[0] - '0');
	else
		a += (uint32_t)((uint32_t)(s[0] - '0') * pow);	/* 32-bit product */
	if (len < 256) {
		lo = len > 40 ? len : 40;
		a += (uint64_t)(lo + 255) * (256 - lo) / 2;	/* sum of lo..255 */
	}
	return a << 7;
}

static uint64_t hash_r5(const uint8_t *s, size_t len)
{
	uint64_t a = 0;

	for (size_t i = 0; i < len; i++) {
		a += (uint64_t)s[i] << 4;
		a += s[i] >> 4;
		a *= 11;
	}
	return a;
}

/* Four bytes, first one lowest. */
static uint64_t tea_word(const uint8_t *s)
{
	return (uint64_t)s[0] | (uint64_t)s[1] << 8 | (uint64_t)s[2] << 16 | (uint64_t)s[3] << 24;
}

/* One Davies-Meyer step: h += E_{a,b,c,d}(h), TEA rounds in 64-bit words. */
static void tea_mix(uint64_t h[2], const uint64_t m[4], int rounds)
{
	uint64_t b0 = h[0], b1 = h[1], sum = 0;

	while (rounds--) {
		sum += 0x9e3779b9;
		b0 += ((b1 << 4) + m[0]) ^ (b1 + sum) ^ ((b1 >> 5) + m[1]);
		b1 += ((b0 << 4) + m[2]) ^ (b0 + sum) ^ ((b0 >> 5) + m[3]);
	}
	h[0] += b0;
	h[1] += b1;
}

static uint64_t hash_tea(const uint8_t *s, size_t len)
{
	uint64_t h[2] = {0x9464a485, 0x542e1a94};
	uint64_t m[4], pad;
	size_t words, i;

	pad = (uint64_t)len | (uint64_t)len << 8;
	pad |= pad << 16;
	for (; len >= 16; len -= 16, s += 16) {
		for (i = 0; i < 4; i++)
			m[i] = tea_word(s + 4 * i);
		tea_mix(h, m, 6);
	}
	/*
	 * The last 0..15 bytes: whole words first, then the word after them
	 * starts from pad and shifts the leftover bytes in from the right
	 * (first byte highest, unlike tea_word); later words are pad.
	 */
	words = len / 4;
	for (i = 0; i < 4; i++)
		m[i] = i < words ? tea_word(s + 4 * i) : pad;
	if (words < 4)
		for (i = 4 * words; i < len; i++)
			m[words] = m[words] << 8 | s[i];
	tea_mix(h, m, 10);
	return h[0] ^ h[1];
}

static uint64_t hash_fnv1(const uint8_t *s, size_t len)
{
	uint64_t a = UINT64_C(0xcbf29ce484222325);

	for (size_t i = 0; i < len; i++) {
		a *= UINT64_C(0x100000001b3);
		a ^= s[i];
	}
	return a;
}

static uint64_t hash_deg(const uint8_t *s, size_t len)
{
	(void)s;
	(void)len;
	return UINT64_C(0xc0c0c0c010101010);
}

#define HASH(fn) (&(const struct r4_hash_ops){fn})
const struct r4_plugin r4_hash_plugins[5] = {
	[R4_HASH_RUPASOV] = {"rupasov_hash", "Rupasov's hash, the first of reiserfs", HASH(hash_rupasov)},
	[R4_HASH_R5] = {"r5_hash", "r5, the default: fast, well spread", HASH(hash_r5)},
	[R4_HASH_TEA] = {"tea_hash", "Davies-Meyer over TEA, from reiserfs", HASH(hash_tea)},
	[R4_HASH_FNV1] = {"fnv1_hash", "64-bit FNV-1", HASH(hash_fnv1)},
	[R4_HASH_DEG] = {"deg_hash", "constant: every long name collides (for tests)",
			 HASH(hash_deg)},
};
#undef HASH

uint64_t r4_hash(unsigned id, const char *name, size_t len)
{
	const struct r4_hash_ops *h = r4_plugin_ops(R4_PTYPE_HASH, id);

	return h ? h->hash((const uint8_t *)name, len) : 0;
}

/* ---- fibration plugins: an 8-bit fibre number per name ---- */

static uint8_t fibre_lexic(const uint8_t *s, size_t len)
{
	(void)s;
	(void)len;
	return 0;
}

static uint8_t fibre_dot_o(const uint8_t *s, size_t len)
{
	return len > 2 && s[len - 2] == '.' && s[len - 1] == 'o';
}

static uint8_t fibre_ext_1(const uint8_t *s, size_t len)
{
	return len > 2 && s[len - 2] == '.' ? s[len - 1] : 0;
}

static uint8_t fibre_ext_3(const uint8_t *s, size_t len)
{
	if (len > 4 && s[len - 4] == '.')
		return (uint8_t)(s[len - 3] + s[len - 2] + s[len - 1]);
	return 0;
}

#define FIBRE(fn) (&(const struct r4_fibre_ops){fn})
const struct r4_plugin r4_fibre_plugins[4] = {
	[R4_FIBRE_LEXIC] = {"lexic_fibre", "one fibre: entries in name order", FIBRE(fibre_lexic)},
	[R4_FIBRE_DOT_O] = {"dot_o_fibre", "*.o names after the others", FIBRE(fibre_dot_o)},
	[R4_FIBRE_EXT_1] = {"ext_1_fibre", "names grouped by a 1-letter extension (the default)",
			    FIBRE(fibre_ext_1)},
	[R4_FIBRE_EXT_3] = {"ext_3_fibre", "names grouped by a 3-letter extension",
			    FIBRE(fibre_ext_3)},
};
#undef FIBRE

uint64_t r4_fibre(unsigned id, const char *name, size_t len)
{
	const struct r4_fibre_ops *f = r4_plugin_ops(R4_PTYPE_FIBRE, id);

	/* uint64 << 57 keeps the low 7 bits, as the 64-bit shift on disk did */
	return f ? (uint64_t)f->fibre((const uint8_t *)name, len) << R4_KEY_FIBRE_SHIFT : 0;
}

/* ---- key assignment ---- */

/*
 * Up to width bytes of s (n of them present) into a width-byte field at
 * the low end of a 64-bit value, first byte highest, zero padded: "ab" in
 * 7 bytes is 0x0061620000000000.
 */
static uint64_t pack(const char *s, size_t n, unsigned width)
{
	uint64_t v = 0;

	for (unsigned i = 0; i < width; i++)
		v = v << 8 | (i < n ? (uint8_t)s[i] : 0);
	return v;
}

void r4_key_entry(r4_key *k, uint64_t dir_oid, const char *name, size_t len, unsigned hash_id,
		  unsigned fibre_id)
{
	r4_key_set(k, dir_oid, R4_KEY_NAME, 0, 0, 0);
	if (len == 1 && name[0] == '.')
		return;		/* the smallest key of the directory */
	k->el[1] = pack(name, len, 7);
	if (len > 7)
		k->el[2] = pack(name + 7, len - 7, 8);	/* whole element: no band */
	if (len > R4_KEY_INLINE_MAX) {
		k->el[1] |= R4_KEY_LONGNAME;
		k->el[3] = r4_hash(hash_id, name + R4_KEY_HASHED_FROM, len - R4_KEY_HASHED_FROM);
	} else if (len > 15) {
		k->el[3] = pack(name + 15, len - 15, 8);
	}
	k->el[1] |= r4_fibre(fibre_id, name, len);
}

void r4_key_sd(r4_key *k, uint64_t locality, uint64_t ordering, uint64_t oid)
{
	r4_key_set(k, locality, R4_KEY_SD, ordering, oid, 0);
}

void r4_key_body(r4_key *k, uint64_t locality, uint64_t ordering, uint64_t oid, uint64_t offset)
{
	r4_key_set(k, locality, R4_KEY_BODY, ordering, oid, offset);
}

bool r4_key_entry_is_long(const r4_key *k)
{
	return (k->el[1] & R4_KEY_LONGNAME) != 0;
}

/* Append the nonzero bytes of the low width bytes of v, highest first. */
static size_t unpack(uint64_t v, unsigned width, char *out)
{
	size_t n = 0;

	for (int shift = 8 * (int)width - 8; shift >= 0; shift -= 8) {
		char c = (char)(uint8_t)(v >> shift);

		if (c)
			out[n++] = c;
	}
	return n;
}

size_t r4_key_entry_name(const r4_key *k, char out[24])
{
	size_t n = 0;

	if (r4_key_type(k) != R4_KEY_NAME || r4_key_entry_is_long(k)) {
		out[0] = '\0';
		return 0;
	}
	if (!k->el[1] && !k->el[2] && !k->el[3]) {
		out[n++] = '.';
	} else {
		n += unpack(k->el[1], 7, out);		/* drops fibre and H */
		n += unpack(k->el[2], 8, out + n);
		n += unpack(k->el[3], 8, out + n);
	}
	out[n] = '\0';
	return n;
}

int r4_key_print(const r4_key *k, char *buf, size_t n)
{
	static const char *const types[] = {"NAME", "SD", "AN", "AB", "FB"};
	unsigned t = r4_key_type(k);
	const char *tname = "?";

	if (t < R4_ARRAY_SIZE(types))
		tname = types[t];
	else
		t = 0xff;	/* progs maps an unknown minor to 0xff before printing */
	return snprintf(buf, n, "[%" PRIx64 ":%x(%s):%" PRIx64 ":%" PRIx64 ":%" PRIx64 "]",
			r4_key_locality(k), t, tname, k->el[1], k->el[2], k->el[3]);
}
