/*
 * ns.c - names (docs/semantics.md, "Names").
 *
 * Real entries come first: every name but "." and ".." can be an entry,
 * one that starts with ".." too, and is listed, looked up, made, renamed
 * and removed like any other.  A pseudo name ("..mode", pseudo.c's table)
 * names a pseudo file only where no entry has that name (r4_ns_resolve).
 * The one name kept from callers is the root's "..r4", where r4 keeps
 * what the format has no place for (meta.c).
 */
#include <errno.h>
#include <string.h>
#include <sys/stat.h>

#include "r4.h"
#include "ns.h"

bool r4_ns_dot(const char *name, size_t len)
{
	return (len == 1 && name[0] == '.') || (len == 2 && name[0] == '.' && name[1] == '.');
}

bool r4_ns_private(bool in_root, const char *name, size_t len)
{
	return in_root && len == sizeof(R4_NS_PRIVATE) - 1 && !memcmp(name, R4_NS_PRIVATE, len);
}

bool r4_ns_pseudo_spelling(const char *name, size_t len)
{
	return len > 2 && name[0] == '.' && name[1] == '.';
}

int r4_ns_resolve(r4_file *f, const char *name, size_t len, r4_file **out,
		  const struct r4_pseudo_info **ps)
{
	struct r4_stat st;
	int rc;

	*out = NULL;
	*ps = NULL;
	if (r4_ns_dot(name, len))
		return -EINVAL;
	if ((rc = r4_file_stat(f, &st)))
		return rc;
	if (S_ISDIR(st.mode)) {
		rc = r4_file_lookup(f, name, len, out);
		if (rc != -ENOENT || !r4_ns_pseudo_spelling(name, len))
			return rc;
	} else if (!r4_ns_pseudo_spelling(name, len)) {
		return -ENOTDIR;
	}
	return (*ps = r4_pseudo_lookup(name, len)) ? 0 : -ENOENT;
}
