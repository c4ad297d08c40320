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

const char *t_tmp(void)
{
	const char *d = getenv("TMPDIR");

	return d && *d ? d : "/tmp";
}

int t_fsck(const char *img)
{
	char cmd[4200];

	if (system("command -v fsck.reiser4 >/dev/null 2>&1"))
		return -1;
	snprintf(cmd, sizeof(cmd), "fsck.reiser4 --check -y '%s' >'%s.fsck' 2>&1", img, img);
	return system(cmd) == 0;
}

int t_rmdir(const char *dir)
{
	char cmd[4200];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd) ? -1 : 0;
}
