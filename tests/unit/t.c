/* t.c - counters, seed and helpers of the test harness (t.h). */
#include "t.h"

#include <string.h>

#include "io.h"
#include "r4_lang.h"

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

void t_both_clean(const char *img, const char *what)
{
	struct r4_open_opts o = {0};
	struct r4_check_result res;
	r4_db *db = NULL;
	int f;

	CHECK_RC(r4_open(img, &o, &db));
	if (db) {
		CHECK_RC(r4_check(db, NULL, &res));
		if (res.problems)
			fprintf(stderr, "r4_check after %s: %llu problems\n", what,
				(unsigned long long)res.problems);
		CHECK_EQ(res.problems, 0);
		r4_close(db);
	}
	if ((f = t_fsck(img)) < 0)
		printf("skip: fsck.reiser4 not installed (%s)\n", what);
	else if (f != 1)
		fprintf(stderr, "fsck.reiser4 after %s: see %s.fsck\n", what, img);
	CHECK(f != 0);
}

int t_open_wrapped(struct r4_io *img, const struct r4_open_opts *oo, r4_db **db,
		   struct r4_io **fw)
{
	struct r4_io *w = NULL;
	int rc;

	if ((rc = r4_io_fault_wrap(img, &w)))
		return rc;
	if (fw)
		*fw = w;
	return r4_open_io(w, oo, db);
}

r4_file *t_at(r4_file *d, const char *name)
{
	r4_file *f = NULL;

	CHECK_RC(r4_file_lookup(d, name, strlen(name), &f));
	return f;
}

int t_rmdir(const char *dir)
{
	char cmd[4200];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd) ? -1 : 0;
}

r4_db *t_open_rw(const char *img)
{
	struct r4_open_opts o = {.rw = true};
	r4_db *db = NULL;

	setenv("R4_TEST_CLOCK", "1700000000", 1);
	CHECK_RC(r4_open(img, &o, &db));
	unsetenv("R4_TEST_CLOCK");
	return db;
}

int t_run(r4_db *db, const char *src)
{
	struct r4_run *r = NULL;
	int rc = r4_run(db, src, strlen(src), NULL, &r);

	r4_run_free(r);
	return rc;
}

void t_fill(r4_db *db, const char *path)
{
	static char buf[1 << 16];
	uint64_t off = 0;

	CHECK_RC(r4_create(db, path, 0644, 0, 0));
	for (size_t n = sizeof(buf); n; n /= 4)
		while (!r4_write(db, path, off, buf, n))
			off += n;
}
