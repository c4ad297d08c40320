/*
 * copy.h - the host writer of r4 export (copy.c), with its two sources:
 * an image's tree read through r4_db (copy.c) and what a damaged volume
 * still holds (salvage.c, r4 export --salvage).
 *
 * A source walks its objects parent first and hands each to cp_put; the
 * writer makes the host copy under DEST (contents with holes kept, modes,
 * owners with -p or as root, nanosecond times, symlinks, hard links as
 * links, special files, extended attributes), shows the progress line,
 * says and counts what fails, and gives a directory its attributes once
 * the walk has left it (so a 0555 one can be filled).  cp_summary ends a
 * run with one line.
 */
#ifndef R4_CLI_COPY_H
#define R4_CLI_COPY_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "r4.h"

/* One object, as a source gives it. */
struct cp_obj {
	const char *path;		/* in the volume, under the walk's PATH */
	struct r4_stat st;		/* st.ino: the object's identity for links */
	const char *target;		/* a symlink's target */
	bool again;			/* a name of an object given before, as far as
					   the source knows (else st.nlink > 1 says so) */
};

typedef int cp_xattr_fn(void *ctx, const char *name, const void *value, size_t len);

/* What the writer asks of a source (ctx is the source's). */
struct cp_src {
	/* The first data of o's body at or after off: [*data, *end);
	 * -ENXIO when only holes remain. */
	int (*seek)(void *ctx, const struct cp_obj *o, uint64_t off, uint64_t *data,
		    uint64_t *end);
	/* Up to len bytes at off, inside a data range; *got 0: the body ended. */
	int (*read)(void *ctx, const struct cp_obj *o, uint64_t off, void *buf, size_t len,
		    size_t *got);
	/* Each extended attribute of o to fn; fn's nonzero return is returned. */
	int (*xattrs)(void *ctx, const struct cp_obj *o, cp_xattr_fn *fn, void *fn_ctx);
	void *ctx;
};

struct cp_dir;

/* One run of a copy: what it counted, the progress line, the objects of
 * several names met so far; export: where the copies go. */
struct cp {
	const char *verb;		/* "imported", "exported", "salvaged" */
	uint64_t files, dirs, symlinks, specials, links, bytes, failed;
	struct timespec t0, shown;
	bool bar;			/* stderr is a terminal: the progress line */
	bool barred;			/* ... and one is on the screen */
	void *seen;			/* tsearch tree of objects of several names */
	/* import: */
	r4_db *db;
	char where[PATH_MAX];		/* the host path that failed */
	/* export: */
	bool owners;			/* chown what is made (root, or -p) */
	bool pseudo;			/* r4's pseudo attributes as user.r4.NAME */
	const struct cp_src *src;
	const char *top;		/* the walk's PATH */
	char *dest;			/* the host path PATH becomes */
	char *skip;			/* a directory that failed: its subtree is not written */
	struct cp_dir *open;		/* directories the walk is inside, outermost first */
	size_t nopen, capopen;
};

void cp_start(struct cp *c, const char *verb);
/* The progress line, at most five times a second, on a terminal only. */
void cp_tick(struct cp *c, const char *path);
void cp_clear_bar(struct cp *c);
/* A failure at volume path path: said below the progress line, counted. */
void cp_fail(struct cp *c, const char *path, int rc);
/* The closing line on stdout: "exported 3 files, 2 directories, 1 symlink,
 * 0 special files, 1 hard link: 4096 bytes in 0.01 s[; 1 failed][; tail]". */
void cp_summary(struct cp *c, const char *tail);
void cp_end(struct cp *c);

/*
 * Export: where PATH (of type mode) goes.  DEST is made if missing; a
 * directory PATH becomes DEST itself (cp -a PATH/. DEST), anything else
 * DEST/NAME.  0, or -errno (said).
 */
int cp_dest(struct cp *c, const char *top, uint32_t mode, const char *dest);
/* The host copy of o (under PATH): 0, or -errno (said and counted; a
 * directory's subtree is then not written). */
int cp_put(struct cp *c, const struct cp_obj *o);
/* The attributes of the directories the walk is still inside. */
void cp_done(struct cp *c);

/* r4 export --salvage (salvage.c): IMAGE's PATH through c into dest, or
 * listed when dest is NULL (--list); the exit code. */
int cp_salvage(struct cp *c, const char *image, const char *path, const char *dest,
	       const struct r4_open_opts *base);

#endif
