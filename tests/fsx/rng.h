/* rng.h - the seeded generator of r4fsx and r4writer (splitmix64): a
 * run is replayed from its printed seed. */
#ifndef R4_FSX_RNG_H
#define R4_FSX_RNG_H

#include <stdint.h>

static inline uint64_t splitmix(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

#endif
