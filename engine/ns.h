/*
 * ns.h - engine-internal: which names are entries and which are pseudo
 * files, and the one path walker (ns.c; docs/semantics.md, "Names").
 */
#ifndef R4_NS_H
#define R4_NS_H

#include <stdbool.h>
#include <stddef.h>

#include "r4.h"
#include "obj.h"

/* r4's own records (meta.c): a directory of this name in the root. */
#define R4_NS_PRIVATE "..r4"
/* Symlinks followed in one walk, then -ELOOP (LANGUAGE.md 5.2). */
#define R4_NS_MAX_LINKS 40

/* "." or "..": never an entry a caller makes, removes or renames. */
bool r4_ns_dot(const char *name, size_t len);
/* The root's R4_NS_PRIVATE (in_root: the directory is the root): not
 * listed, looked up, made, removed or renamed through the fs API's
 * handle calls or listings. */
bool r4_ns_private(bool in_root, const char *name, size_t len);
/* The next component of *p (runs of '/' skipped), moving *p past it;
 * false at the end. */
bool r4_ns_next(const char **p, const char **name, size_t *len);

/* ---- the path walker ----
 *
 * Component by component from the root, or from an absolute path given
 * as the start: "." is the object itself, ".." its parent (the root's is
 * the root).  In a directory the identity needs search permission, then a
 * name is its entry; with R4_NS_PSEUDO a "..x" no entry has is the pseudo
 * file of the object (where the identity may not search, the entries are
 * not asked and a pseudo name is the pseudo file).  Symlinks are followed
 * as the flags say, a relative target read in the link's directory, except
 * before a name that applies to the link itself (a pseudo name, a claimed
 * name); at most R4_NS_MAX_LINKS of them, then -ELOOP.
 */
enum {
	R4_NS_FOLLOW = 1 << 0,		/* follow symlinks before the last component */
	R4_NS_FOLLOW_LAST = 1 << 1,	/* ... and as the last one */
	R4_NS_PSEUDO = 1 << 2,		/* "..x" that is no entry: a pseudo name */
	R4_NS_MISSING = 1 << 3,		/* a missing last name (no "..x" then) ends the walk */
	R4_NS_PARENT = 1 << 4,		/* end before the last component ("/": -EBUSY) */
	R4_NS_PATH = 1 << 5,		/* keep w->path */
	/* The text was checked by the compiler: a "..x" of its own (not of a
	 * symlink's text) is the pseudo name it was checked to be, even where
	 * an entry has that name (LANGUAGE.md 5.2).  R4L's own: a read of
	 * d/..mode is one LOOKUP of that whole text (only writes become
	 * SETATTR steps on d), so the walker must know which "..x" the
	 * compiler checked; hosts name a pseudo file by its id instead. */
	R4_NS_CHECKED = 1 << 6,
};

enum r4_ns_end {
	R4_NS_AT_OBJ,		/* the object the path names */
	R4_NS_AT_PSEUDO,	/* name is pseudo file ps of the object; rest follows it */
	R4_NS_AT_CLAIMED,	/* the caller claimed name under the object; rest follows */
	R4_NS_AT_MISSING,	/* the directory reached has no entry name (R4_NS_MISSING) */
	R4_NS_AT_LAST,		/* name is the last component, in the object (R4_NS_PARENT) */
};

struct r4_ns_walk {
	/* set by the caller */
	struct r4_db *db;
	const struct r4_ident *who;	/* who needs search permission (NULL: nobody) */
	unsigned flags;			/* R4_NS_* */
	/* Called before name is looked up in the directory reached (the
	 * executor's touch of the entry); an error ends the walk with it. */
	int (*enter)(void *ctx, const struct r4_ns_walk *w, const char *name, size_t len);
	/* Does the caller take name under the object reached (before any
	 * lookup, and before a symlink there is followed)? */
	bool (*claims)(void *ctx, const struct r4_ns_walk *w, const char *name, size_t len);
	void *ctx;

	/* where the walk is, until r4_ns_fini */
	char *path;		/* R4_NS_PATH: absolute, without symlinks; the caller
				 * may take it (and set it NULL) */
	struct r4_inode ino;	/* the object, loaded (r4_ns_take) */
	struct r4_stat st;
	uint64_t dir_ino;	/* the directory it was found in (0: not known) */

	/* how it ended (r4_ns_walk gave 0), or where it failed */
	enum r4_ns_end end;
	const struct r4_pseudo_info *ps;	/* R4_NS_AT_PSEUDO */
	const char *name;	/* the component it ended or failed at ... */
	size_t len;
	const char *rest;	/* ... and what follows it (in the text or the walk's
				 * copy: valid while the text is, until r4_ns_fini) */
	int comp;		/* that component's index in the text, symlinks' text not
				 * counted; -1: it failed before the text (the start) */

	/* private */
	bool loaded;
	size_t plen, pcap;
	const char *text;	/* what is walked: the caller's, or buf */
	char *buf;		/* a copy, once symlinks' text is spliced in */
	size_t pos;		/* where in text */
	size_t linkpart;	/* bytes of text from pos that came from symlinks */
	unsigned links;		/* symlinks followed */
	bool own;		/* the component is of the text, not a symlink's */
	r4_key up;		/* the directory the object was found in */
	bool plain;		/* walking the start: no checks, flags or hooks */
};

/*
 * Walk text (absolute, or relative to from: an absolute path without
 * symlinks, walked without checks; NULL: the root); both must stay valid
 * until r4_ns_fini.  0 with w->end set, or
 * -ENOENT, -ENOTDIR, -EACCES, -ELOOP (w->comp, w->name: which component),
 * -EBUSY (R4_NS_PARENT of "/"), -ENOMEM, -EIO, -EUCLEAN (an entry pointing
 * nowhere), or what a hook returned.  r4_ns_fini w in either case.
 */
int r4_ns_walk(struct r4_ns_walk *w, const char *from, const char *text);
/* The object reached, to *out (r4_obj_fini it); w keeps no hold on it. */
void r4_ns_take(struct r4_ns_walk *w, struct r4_inode *out);
void r4_ns_fini(struct r4_ns_walk *w);

#endif
