/* t.c - counters and seed of the test harness (t.h). */
#include "t.h"

int t_pass, t_fail;

unsigned long t_seed(void)
{
	const char *s = getenv("R4_SEED");
	unsigned long seed = s ? strtoul(s, NULL, 0) : (unsigned long)time(NULL);

	printf("seed: R4_SEED=%lu\n", seed);
	return seed;
}
