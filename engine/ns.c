/*
 * ns.c - names (docs/semantics.md, "Names"), and the one path walker the
 * fs API's calls by path and the executor use.
 *
 * Real entries come first: every name but "." and ".." can be an entry,
 * one that starts with ".." too, and is listed, looked up, made, renamed
 * and removed like any other.  A pseudo name ("..mode", pseudo.c's table)
 * names a pseudo file only where no entry has that name: name_rule says
 * so once, for r4_ns_resolve (the bridge, one name on a handle) and for
 * the walker (a path on inodes).  The one name kept from callers is the
 * root's "..r4", where r4 keeps what the format has no place for (meta.c).
 *
 * The walker knows no plan: the executor's result children and its
 * touches of entries reach it as hooks (struct r4_ns_walk, public in
 * r4.h: the executor is above the fs/ns API).  It can keep the absolute
 * path of what it reached, without symlinks, so ".." is the parent's
 * entry and the path's parent alike.  A walk inside the engine that
 * brings its own state (struct r4_ns_state), follows no symlink and keeps
 * no path (the fs API's) allocates nothing.
 */
#include <errno.h>
#include <string.h>
#include <sys/stat.h>

#include "ns.h"
#include "perm.h"

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

bool r4_ns_next(const char **p, const char **name, size_t *len)
{
	const char *s = *p;

	while (*s == '/')
		s++;
	if (!*s)
		return false;
	*name = s;
	while (*s && *s != '/')
		s++;
	*len = (size_t)(s - *name);
	*p = s;
	return true;
}

/*
 * The name rule: what name is under an object (dir: a directory, where
 * looking the name up gave found).  0 with *ps NULL: the entry; 0 with
 * *ps: that pseudo file; else why neither.
 */
static int name_rule(bool dir, int found, const char *name, size_t len,
		     const struct r4_pseudo_info **ps)
{
	*ps = NULL;
	if (dir && found != -ENOENT)
		return found;
	if (!r4_ns_pseudo_spelling(name, len))
		return dir ? -ENOENT : -ENOTDIR;
	return (*ps = r4_pseudo_lookup(name, len)) ? 0 : -ENOENT;
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
	rc = S_ISDIR(st.mode) ? r4_file_lookup(f, name, len, out) : -ENOENT;
	return name_rule(S_ISDIR(st.mode), rc, name, len, ps);
}

/* ================================ walker ================================ */

/* The path reached (R4_NS_PATH): "/" ... */
static int path_root(struct r4_ns_walk *w)
{
	if (!(w->flags & R4_NS_PATH))
		return 0;
	if (r4_grow(&w->path, &w->state->pcap, 2, 1, 64))
		return -ENOMEM;
	memcpy(w->path, "/", 2);
	w->state->plen = 1;
	return 0;
}

/* ... one name down ... */
static int path_down(struct r4_ns_walk *w, const char *name, size_t len)
{
	size_t need = w->state->plen + 1 + len + 1;

	if (!(w->flags & R4_NS_PATH))
		return 0;
	if (r4_grow(&w->path, &w->state->pcap, need, 1, 64))
		return -ENOMEM;
	if (w->state->plen > 1)
		w->path[w->state->plen++] = '/';
	memcpy(w->path + w->state->plen, name, len);
	w->state->plen += len;
	w->path[w->state->plen] = 0;
	return 0;
}

/* ... and one up. */
static void path_up(struct r4_ns_walk *w)
{
	char *s;

	if (!(w->flags & R4_NS_PATH))
		return;
	s = strrchr(w->path, '/');

	w->state->plen = s == w->path ? 1 : (size_t)(s - w->path);
	w->path[w->state->plen] = 0;
}

/* The walk moves to the object k names (name: its entry, for the report
 * of one pointing nowhere; NULL: the root). */
static int load(struct r4_ns_walk *w, const r4_key *k, const char *name, size_t len)
{
	struct r4_inode ino;
	int rc = r4_obj_load(w->db, k, &ino);

	if (rc == -ENOENT)
		rc = name ? R4_CORRUPT(&w->db->lg, 0, "entry '%.*s' points nowhere", (int)len, name)
			  : R4_CORRUPT(&w->db->lg, w->db->root, "no root directory");
	if (rc)
		return rc;
	if (w->state->loaded)
		r4_obj_fini(&w->state->ino);
	w->state->ino = ino;
	w->state->loaded = true;
	r4_fs_stat_of(w->db, &w->state->ino, &w->st);
	return 0;
}

static int at_root(struct r4_ns_walk *w)
{
	r4_key root;
	int rc;

	r4_obj_root_key(&root);
	if ((rc = load(w, &root, NULL, 0)) || (rc = path_root(w)))
		return rc;
	w->dir_ino = 0;
	return 0;
}

/* ".." */
static int up(struct r4_ns_walk *w)
{
	r4_key k;
	int rc;

	if (r4_key_objectid(&w->state->ino.sdkey) == R4_ROOT_OID)
		return 0;	/* the root's parent is the root */
	if ((rc = r4_dir_lookup(w->db, &w->state->ino, "..", 2, &k)) || (rc = load(w, &k, "..", 2)))
		return rc;
	path_up(w);
	w->dir_ino = 0;
	return 0;
}

/* Entry name of the directory reached, found at k. */
static int down(struct r4_ns_walk *w, const r4_key *k, const char *name, size_t len)
{
	uint64_t dir = w->st.ino;
	r4_key upkey = w->state->ino.sdkey;
	int rc;

	if ((rc = load(w, k, name, len)) || (rc = path_down(w, name, len)))
		return rc;
	w->dir_ino = dir;
	w->state->up = upkey;
	return 0;
}

/* Does the first name of rest apply to the symlink reached, not to what
 * it points at? */
static bool applies_to_link(struct r4_ns_walk *w, const char *rest)
{
	const struct r4_pseudo_info *ps;
	const char *name;
	size_t len;

	if (!r4_ns_next(&rest, &name, &len))
		return false;
	if ((w->flags & R4_NS_PSEUDO) && !name_rule(false, -ENOENT, name, len, &ps))
		return true;
	return w->claims && w->claims(w->ctx, w, name, len);
}

/* Splice the symlink's text in front of what is left, and go on from its
 * directory (relative text) or the root. */
static int follow(struct r4_ns_walk *w)
{
	size_t n = w->state->ino.sd.sd_symlink_len, left = strlen(w->state->text + w->state->pos);
	bool absolute;
	char *s;

	if (++w->state->links > R4_NS_MAX_LINKS)
		return -ELOOP;
	if (!n || !w->state->ino.symlink)
		return -ENOENT;
	if (!(s = r4_malloc(n + left + 2)))
		return -ENOMEM;
	memcpy(s, w->state->ino.symlink, n);
	s[n] = '/';
	memcpy(s + n + 1, w->state->text + w->state->pos, left + 1);
	absolute = s[0] == '/';
	r4_free(w->state->buf);
	w->state->text = w->state->buf = s;
	w->state->pos = 0;
	w->state->linkpart += n + 1;
	w->name = w->rest = NULL;
	if (absolute)
		return at_root(w);
	int rc = load(w, &w->state->up, "..", 2);

	if (!rc) {
		path_up(w);
		w->dir_ino = 0;
	}
	return rc;
}

void r4_path_memo_set(struct r4_db *db, struct r4_path_memo *m, const char *path, size_t len,
		      const r4_key *key)
{
	m->txn_seq = 0;	/* (nothing, unless all of it is kept) */
	if (!db->in_txn || r4_grow(&m->path, &m->cap, len + 1, 1, 64))
		return;
	memcpy(m->path, path, len);
	m->path[len] = 0;
	m->key = *key;
	m->gen = db->gen;
	m->txn_seq = db->txn_seq;
}

bool r4_path_memo_get(const struct r4_db *db, const struct r4_path_memo *m, const char *path,
		      size_t len, r4_key *key)
{
	if (!m->path || !db->in_txn || m->txn_seq != db->txn_seq || m->gen != db->gen ||
	    strlen(m->path) != len || memcmp(m->path, path, len))
		return false;
	*key = m->key;
	return true;
}

bool r4_ns_walked(struct r4_db *db, const char *dir, size_t len, r4_key *key)
{
	return r4_path_memo_get(db, &db->walked, dir, len, key);
}

static int stop(struct r4_ns_walk *w, enum r4_ns_end end)
{
	w->end = end;
	return 1;
}

/* Take the component w->name under the object reached (last: none
 * follows): 0 the walk goes on, 1 it ended there (w->end), or an error. */
static int step(struct r4_ns_walk *w, bool last)
{
	const char *name = w->name;
	size_t len = w->len;
	unsigned flags = w->state->plain ? 0 : w->flags;
	bool dir = S_ISDIR(w->st.mode), hooks = !w->state->plain;
	r4_key k;
	int rc;

	if (hooks && w->claims && w->claims(w->ctx, w, name, len))
		return stop(w, R4_NS_AT_CLAIMED);
	if ((flags & R4_NS_CHECKED) && w->state->own && !name_rule(false, -ENOENT, name, len, &w->ps))
		return stop(w, R4_NS_AT_PSEUDO);
	if (dir && !w->state->plain && !r4_perm_may(w->db, w->who, &w->st, 1)) {
		/* the entries are hidden from who: a pseudo name is the object's */
		if ((flags & R4_NS_PSEUDO) && !name_rule(true, -ENOENT, name, len, &w->ps))
			return stop(w, R4_NS_AT_PSEUDO);
		return -EACCES;
	}
	if (len == 1 && name[0] == '.')
		return dir ? 0 : -ENOTDIR;
	if (len == 2 && name[0] == '.' && name[1] == '.')
		return dir ? up(w) : -ENOTDIR;
	rc = -ENOENT;
	if (dir) {
		if (hooks && w->enter && (rc = w->enter(w->ctx, w, name, len)))
			return rc;
		rc = r4_dir_lookup(w->db, &w->state->ino, name, len, &k);
	}
	if (flags & R4_NS_PSEUDO)
		rc = name_rule(dir, rc, name, len, &w->ps);
	else if (!dir)
		rc = -ENOTDIR;
	if (rc == -ENOENT && dir && last && (flags & R4_NS_MISSING) &&
	    !((flags & R4_NS_PSEUDO) && r4_ns_pseudo_spelling(name, len))) {
		if (w->path)	/* (the directory reached, for r4_ns_walked) */
			r4_path_memo_set(w->db, &w->db->walked, w->path, w->state->plen,
					 &w->state->ino.sdkey);
		return stop(w, R4_NS_AT_MISSING);
	}
	if (rc)
		return rc;
	if (w->ps)
		return stop(w, R4_NS_AT_PSEUDO);
	if ((rc = down(w, &k, name, len)))
		return rc;
	if (S_ISLNK(w->st.mode) && (flags & (last ? R4_NS_FOLLOW_LAST : R4_NS_FOLLOW)) &&
	    !applies_to_link(w, w->rest))
		return follow(w);
	return 0;
}

/* Walk text from where w is (the start, when w->state->plain). */
static int run(struct r4_ns_walk *w, const char *text)
{
	struct r4_ns_state *s = w->state;

	s->text = text;
	s->pos = s->linkpart = 0;
	for (;;) {
		const char *r = s->text + s->pos, *peek, *next;
		size_t before = s->pos, n;
		int rc;

		if (!r4_ns_next(&r, &w->name, &w->len))
			break;
		s->own = !s->linkpart;
		w->rest = r;
		s->pos = (size_t)(r - s->text);
		s->linkpart = s->linkpart > s->pos - before ? s->linkpart - (s->pos - before) : 0;
		if (s->own && !s->plain)
			w->comp++;
		peek = r;
		bool last = !r4_ns_next(&peek, &next, &n);

		if (last && !s->plain && (w->flags & R4_NS_PARENT)) {
			w->end = R4_NS_AT_LAST;
			return 0;
		}
		if ((rc = step(w, last)))
			return rc < 0 ? rc : 0;
	}
	if (!s->plain && (w->flags & R4_NS_PARENT))
		return -EBUSY;	/* "/" has no parent entry */
	w->end = R4_NS_AT_OBJ;
	return 0;
}

int r4_ns_walk(struct r4_ns_walk *w, const char *from, const char *text)
{
	int rc;

	w->comp = -1;
	w->ps = NULL;
	if (!w->state) {
		if (!(w->state = r4_calloc(1, sizeof(*w->state))))
			return -ENOMEM;
		w->state->heap = true;
	}
	w->state->links = 0;
	w->state->plain = true;
	rc = at_root(w);
	if (!rc && from && text[0] != '/')
		rc = run(w, from);
	w->state->plain = false;
	if (!rc)
		rc = run(w, text);
	return rc ? r4_db_seen(w->db, rc) : 0;
}

struct r4_ns_state *r4_ns_state_new(void)
{
	return r4_calloc(1, sizeof(struct r4_ns_state));
}

void r4_ns_state_free(struct r4_ns_state *s)
{
	r4_free(s);
}

void r4_ns_take(struct r4_ns_walk *w, struct r4_inode *out)
{
	*out = w->state->ino;
	w->state->loaded = false;
}

void r4_ns_fini(struct r4_ns_walk *w)
{
	struct r4_ns_state *s = w->state;

	r4_free(w->path);
	w->path = NULL;
	if (!s)
		return;
	if (s->loaded)
		r4_obj_fini(&s->ino);
	s->loaded = false;
	r4_free(s->buf);
	s->buf = NULL;
	s->pcap = 0;
	if (s->heap) {
		r4_free(s);
		w->state = NULL;
	}
}
