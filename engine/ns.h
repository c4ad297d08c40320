/*
 * ns.h - engine-internal: which names are entries and which are pseudo
 * files, and the engine's side of the one path walker (ns.c;
 * docs/semantics.md, "Names"; the walker itself is public, r4.h).
 */
#ifndef R4_NS_H
#define R4_NS_H

#include <stdbool.h>
#include <stddef.h>

#include "r4.h"
#include "obj.h"

/* r4's own records (meta.c): a directory of this name in the root. */
#define R4_NS_PRIVATE "..r4"

/* "." or "..": never an entry a caller makes, removes or renames. */
bool r4_ns_dot(const char *name, size_t len);
/* The root's R4_NS_PRIVATE (in_root: the directory is the root): not
 * listed, looked up, made, removed or renamed through the fs API's
 * handle calls or listings. */
bool r4_ns_private(bool in_root, const char *name, size_t len);

/* ---- the path walker (r4.h's struct r4_ns_walk) ----
 *
 * Where a walk is: the engine's part of struct r4_ns_walk.  A caller
 * inside the engine may bring its own, zeroed (w->state set before
 * r4_ns_walk): then a walk that follows no symlink and keeps no path
 * allocates nothing.  Else r4_ns_walk allocates one and r4_ns_fini frees
 * it.
 */
struct r4_ns_state {
	struct r4_inode ino;	/* the object reached, loaded (r4_ns_take) */
	bool loaded;
	size_t plen, pcap;	/* of w->path */
	const char *text;	/* what is walked: the caller's, or buf */
	char *buf;		/* a copy, once symlinks' text is spliced in */
	size_t pos;		/* where in text */
	size_t linkpart;	/* bytes of text from pos that came from symlinks */
	unsigned links;		/* symlinks followed */
	bool own;		/* the component is of the text, not a symlink's */
	r4_key up;		/* the directory the object was found in */
	bool plain;		/* walking the start: no checks, flags or hooks */
	bool heap;		/* r4_ns_walk allocated it */
};

/* The object reached, to *out (r4_obj_fini it); w keeps no hold on it. */
void r4_ns_take(struct r4_ns_walk *w, struct r4_inode *out);
/* Is dir[0, len) (an absolute path without symlinks) the directory where
 * the last walk with R4_NS_PATH found its last name missing, with nothing
 * changed since in this transaction?  Then *key is its stat data's: a
 * make of that name, which walks to it again, need not. */
bool r4_ns_walked(struct r4_db *db, const char *dir, size_t len, r4_key *key);
/* m = path[0, len) and key, as of now; does m hold path[0, len) (*key its
 * object) with nothing changed since in this transaction? */
void r4_path_memo_set(struct r4_db *db, struct r4_path_memo *m, const char *path, size_t len,
		      const r4_key *key);
bool r4_path_memo_get(const struct r4_db *db, const struct r4_path_memo *m, const char *path,
		      size_t len, r4_key *key);

#endif
