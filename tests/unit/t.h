/*
 * t.h - the tiny harness of the engine's C test programs.
 *
 * CHECK(expr) counts a pass or prints file:line and the expression;
 * CHECK_RC(call) expects 0 and prints r4_strerror of anything else.
 * T_DONE() prints "N passed, M failed" and returns the exit code.
 * Random tests take their seed from R4_SEED or the clock and print it.
 */
#ifndef R4_T_H
#define R4_T_H

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "r4.h"

extern int t_pass, t_fail;

#define CHECK(e) do { if (e) t_pass++; else { t_fail++; \
	fprintf(stderr, "%s:%d: FAILED: %s\n", __FILE__, __LINE__, #e); } } while (0)
#define CHECK_RC(e) do { int t_rc_ = (e); if (t_rc_ == 0) t_pass++; else { t_fail++; \
	fprintf(stderr, "%s:%d: FAILED: %s = %d (%s)\n", __FILE__, __LINE__, #e, t_rc_, \
		r4_strerror(t_rc_)); } } while (0)
#define CHECK_EQ(a, b) do { long long t_a_ = (long long)(a), t_b_ = (long long)(b); \
	if (t_a_ == t_b_) t_pass++; else { t_fail++; fprintf(stderr, \
	"%s:%d: FAILED: %s == %s (%lld != %lld)\n", __FILE__, __LINE__, #a, #b, t_a_, t_b_); } } while (0)
#define T_DONE() (printf("%d passed, %d failed\n", t_pass, t_fail), t_fail ? 1 : 0)

unsigned long t_seed(void);
/* The folder for a test's scratch directory: $TMPDIR or /tmp (tests/run.sh
 * points TMPDIR at tmpfs, where the many image copies and fsyncs are cheap). */
const char *t_tmp(void);
/* fsck.reiser4 --check -y on img (its output kept in img.fsck): 1 consistent,
 * 0 not, -1 when reiser4progs is not installed (the caller prints a skip). */
int t_fsck(const char *img);
/* r4's checker (no problems) and fsck.reiser4 (consistent; a skip line
 * when it is not installed) on the closed img, after what (CHECKs). */
void t_both_clean(const char *img, const char *what);
/* r4_open_io over the borrowed image img through a pass-through fault
 * wrapper (io_fault.c), which *fw gets unless fw is NULL. */
struct r4_io;
int t_open_wrapped(struct r4_io *img, const struct r4_open_opts *oo, r4_db **db,
		   struct r4_io **fw);
/* The object named name in directory d (a CHECK that it is there). */
r4_file *t_at(r4_file *d, const char *name);
/* rm -rf of a test's temporary directory: 0 or -1. */
int t_rmdir(const char *dir);
/* img opened read-write (a CHECK), its clock fixed at 1700000000 (what
 * audit records and times say); NULL when it did not open. */
r4_db *t_open_rw(const char *img);
/* r4_run of the R4L src in its own unit: its code. */
int t_run(r4_db *db, const char *src);
/* Fill the volume with the file path, in ever smaller pieces. */
void t_fill(r4_db *db, const char *path);

#endif
