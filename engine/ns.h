/*
 * ns.h - engine-internal: which names are entries and which are pseudo
 * files (ns.c; docs/semantics.md, "Names").
 */
#ifndef R4_NS_H
#define R4_NS_H

#include <stdbool.h>
#include <stddef.h>

/* r4's own records (meta.c): a directory of this name in the root. */
#define R4_NS_PRIVATE "..r4"

/* "." or "..": never an entry a caller makes, removes or renames. */
bool r4_ns_dot(const char *name, size_t len);
/* The root's R4_NS_PRIVATE (in_root: the directory is the root): not
 * listed, looked up, made, removed or renamed through the fs API's
 * handle calls or listings. */
bool r4_ns_private(bool in_root, const char *name, size_t len);

#endif
