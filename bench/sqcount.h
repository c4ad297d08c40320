/*
 * sqcount.h - a SQLite VFS that counts xSync calls, for the benchmarks
 * that set r4's syncs beside SQLite's (bench/commit.c, bench/group.c):
 * the default VFS under the name SQ_COUNT_VFS, each file's methods table
 * swapped for a copy whose xSync counts, then calls the real one.
 */
#ifndef R4_BENCH_SQCOUNT_H
#define R4_BENCH_SQCOUNT_H

#include <sqlite3.h>
#include <stdint.h>

#define SQ_COUNT_VFS "r4bench-count"

static sqlite3_vfs *sq_real_vfs;
static sqlite3_vfs sq_count_vfs;
static volatile uint64_t *sq_syncs;	/* the count (shared memory for processes) */
static struct {
	const sqlite3_io_methods *real;
	sqlite3_io_methods copy;
} sq_meths[4];

static int sq_count_sync(sqlite3_file *f, int flags)
{
	__atomic_add_fetch(sq_syncs, 1, __ATOMIC_RELAXED);
	for (size_t i = 0; i < sizeof(sq_meths) / sizeof(sq_meths[0]); i++)
		if (f->pMethods == &sq_meths[i].copy)
			return sq_meths[i].real->xSync(f, flags);
	return SQLITE_IOERR_FSYNC;
}

/* The file object is the real VFS's own; only its methods table is
 * swapped. */
static int sq_count_open(sqlite3_vfs *vfs, const char *name, sqlite3_file *f, int flags,
			 int *oflags)
{
	int rc = sq_real_vfs->xOpen(sq_real_vfs, name, f, flags, oflags);

	(void)vfs;
	if (rc != SQLITE_OK || !f->pMethods)
		return rc;
	for (size_t i = 0; i < sizeof(sq_meths) / sizeof(sq_meths[0]); i++) {
		if (!sq_meths[i].real) {
			sq_meths[i].real = f->pMethods;
			sq_meths[i].copy = *f->pMethods;
			sq_meths[i].copy.xSync = sq_count_sync;
		}
		if (sq_meths[i].real == f->pMethods) {
			f->pMethods = &sq_meths[i].copy;
			return rc;
		}
	}
	return rc;	/* a fifth kind of file: not counted */
}

/* Register SQ_COUNT_VFS, counting into *count; SQLITE_OK or SQLite's error. */
static int sq_count_register(volatile uint64_t *count)
{
	sq_syncs = count;
	sq_real_vfs = sqlite3_vfs_find(NULL);
	sq_count_vfs = *sq_real_vfs;
	sq_count_vfs.zName = SQ_COUNT_VFS;
	sq_count_vfs.xOpen = sq_count_open;
	return sqlite3_vfs_register(&sq_count_vfs, 0);
}

#endif
