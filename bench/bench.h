/*
 * bench.h - what the r4 benchmark (scale.c) and its libreiser4 peer
 * (scale_peer.c) must share so their runs compare: the file size, the
 * content every small file gets, and the clock.
 */
#ifndef R4_BENCH_H
#define R4_BENCH_H

#include <stdint.h>
#include <string.h>
#include <time.h>

#define FILE_BYTES 100

static inline double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static inline uint64_t mix64(uint64_t z)
{
	z += 0x9E3779B97F4A7C15ull;
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
	return z ^ (z >> 31);
}

/* The content of small file i: FILE_BYTES bytes, different for every file. */
static inline void small_content(uint64_t i, uint8_t *p)
{
	for (unsigned j = 0; j < FILE_BYTES; j += 8) {
		uint64_t r = mix64(i * 131 + j);

		memcpy(p + j, &r, FILE_BYTES - j < 8 ? FILE_BYTES - j : 8);
	}
}

#endif
