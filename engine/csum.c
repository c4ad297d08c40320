/*
 * csum.c - the two checksums of format40: CRC32C and Adler-32.
 *
 * r4_crc32c is the reflected CRC-32C (Castagnoli, polynomial 0x1EDC6F41,
 * reflected 0x82F63B78) in the raw form reiser4progs' crc32c_le (libaux)
 * and the kernel's crc32c_le compute: no inversion on entry or exit, the
 * caller picks the seed.  node41 seeds with ~0 and stores the raw result,
 * so crc32c_le(~0, "123456789") = 0x1CF96D7C, the bitwise NOT of the
 * textbook check value 0xE3069283.  Because nothing is inverted,
 * r4_crc32c(r4_crc32c(s, a), b) == r4_crc32c(s, a || b).
 *
 * r4_adler32 is zlib's Adler-32 started at 1, which is what alloc40 calls
 * (aux_adler32(0, ...): a zero start value means 1) over the blocksize - 4
 * bytes that follow the checksum word of a bitmap block.
 *
 * Speed: CRC32C runs slice-by-8 over tables built from the polynomial at
 * load; input words are assembled with r4_le32_get, so the code is
 * independent of host byte order and alignment.  Adler-32 defers the
 * modulo for ADLER_NMAX bytes, the most that cannot overflow 32 bits.
 * tests/unit/test_key.c checks both functions against bit-at-a-time
 * references and libreiser4 values.
 *
 * Nothing here knows about blocks or nodes: node.c and alloc.c decide what
 * bytes are covered and where the sum is stored.
 */
#include "r4_int.h"

enum { CRC32C_POLY = 0x82f63b78 };	/* 0x1EDC6F41 reflected */

/* Slice-by-8 tables, built once when the program is loaded (before any
 * thread): crc_tab[0] is the classic byte table, crc_tab[k][n] advances
 * crc_tab[k - 1][n] by one more zero byte. */
static uint32_t crc_tab[8][256];

__attribute__((constructor)) static void crc_tab_init(void)
{
	for (unsigned n = 0; n < 256; n++) {
		uint32_t c = n;

		for (int b = 0; b < 8; b++)
			c = c & 1 ? c >> 1 ^ CRC32C_POLY : c >> 1;
		crc_tab[0][n] = c;
	}
	for (unsigned n = 0; n < 256; n++)
		for (int k = 1; k < 8; k++)
			crc_tab[k][n] = crc_tab[0][crc_tab[k - 1][n] & 0xff] ^ crc_tab[k - 1][n] >> 8;
}

uint32_t r4_crc32c(uint32_t seed, const void *buf, size_t len)
{
	const uint8_t *p = buf;
	uint32_t crc = seed;

	/* Head: bytes until p is 8-aligned, so the main loop's loads are aligned. */
	while (len && ((uintptr_t)p & 7)) {
		crc = crc_tab[0][(crc ^ *p++) & 0xff] ^ (crc >> 8);
		len--;
	}
	while (len >= 8) {
		uint32_t lo = crc ^ r4_le32_get(p);
		uint32_t hi = r4_le32_get(p + 4);

		crc = crc_tab[7][lo & 0xff] ^ crc_tab[6][(lo >> 8) & 0xff] ^
		      crc_tab[5][(lo >> 16) & 0xff] ^ crc_tab[4][lo >> 24] ^
		      crc_tab[3][hi & 0xff] ^ crc_tab[2][(hi >> 8) & 0xff] ^
		      crc_tab[1][(hi >> 16) & 0xff] ^ crc_tab[0][hi >> 24];
		p += 8;
		len -= 8;
	}
	while (len--)
		crc = crc_tab[0][(crc ^ *p++) & 0xff] ^ (crc >> 8);
	return crc;
}

enum {
	ADLER_BASE = 65521,	/* largest prime below 2^16 */
	ADLER_NMAX = 5552,	/* largest n with 255n(n+1)/2 + (n+1)(BASE-1) < 2^32 */
};

uint32_t r4_adler32(const void *buf, size_t len)
{
	const uint8_t *p = buf;
	uint32_t s1 = 1, s2 = 0;

	while (len) {
		size_t n = len < ADLER_NMAX ? len : ADLER_NMAX;

		len -= n;
		for (; n >= 8; n -= 8, p += 8) {
			for (int i = 0; i < 8; i++) {	/* unrolled by the compiler */
				s1 += p[i];
				s2 += s1;
			}
		}
		while (n--) {
			s1 += *p++;
			s2 += s1;
		}
		s1 %= ADLER_BASE;
		s2 %= ADLER_BASE;
	}
	return s2 << 16 | s1;
}
