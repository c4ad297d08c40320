/*
 * ops.h - the names of bench/scale.c's `ops` volumes (issue 27 item 4),
 * shared with its SQLite peer (ops_sqlite.c) so that both store and look
 * up the same paths: flat, /d/fI; tree3, /d/aA/bB/fI with F = ceil(cbrt N)
 * entries a level.
 */
#ifndef R4_BENCH_OPS_H
#define R4_BENCH_OPS_H

#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "bench.h"

struct ops_names {
	bool tree;		/* tree3 (else flat) */
	bool append;		/* new names after all the others (ops_new_path) */
	uint64_t fan;		/* tree3: entries per directory level */
};

static inline void ops_names_init(struct ops_names *o, uint64_t n, bool tree, bool append)
{
	o->tree = tree;
	o->append = append;
	for (o->fan = 1; o->fan * o->fan * o->fan < n; o->fan++)
		;
}

/* The directory of file i, with its trailing slash. */
static inline void ops_dir(const struct ops_names *o, uint64_t i, char *path, size_t size)
{
	if (o->tree)
		snprintf(path, size, "/d/a%" PRIu64 "/b%" PRIu64 "/", i / (o->fan * o->fan),
			 i / o->fan % o->fan);
	else
		snprintf(path, size, "/d/");
}

/* File i of the volume. */
static inline void ops_path(const struct ops_names *o, uint64_t i, char *path, size_t size)
{
	size_t l;

	ops_dir(o, i, path, size);
	l = strlen(path);
	snprintf(path + l, size - l, "f%07" PRIu64, i);
}

/*
 * New file k's path: in the directory of a random existing file r, named
 * "fRRRRRRRnK", so that it sorts right after r's name and lands at a
 * random place of the directory (a short name is in the entry's key, in
 * order); with o->append "gNNNNNNN" (n + k), after every name there is:
 * the directory grows at one end, the best case.  r is drawn from the
 * run's seed apart from the stats' draws, the same for every side.
 */
static inline void ops_new_path(const struct ops_names *o, uint64_t k, uint64_t n, uint64_t seed,
				char *path, size_t size)
{
	uint64_t r = mix64((seed ^ 0x5eed) + k) % n;
	size_t l;

	ops_dir(o, r, path, size);
	l = strlen(path);
	if (o->append)
		snprintf(path + l, size - l, "g%07" PRIu64, n + k);
	else
		snprintf(path + l, size - l, "f%07" PRIu64 "n%" PRIu64, r, k);
}

#endif
