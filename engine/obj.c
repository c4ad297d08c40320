/*
 * obj.c - stat data and directories.
 *
 * Stat data: r4_obj_load finds the stat40 item by key and decodes it;
 * r4_obj_save re-encodes it in place (resizing the item when extensions
 * come or go).  New objects get LW + UNIX + LARGE_TIMES (+ SYMLINK), the
 * 56-byte stat data the kernel writes, and no plugin set: they inherit the
 * root's, which is what fsck.reiser4 expects of objects that do not
 * differ.  A regular file made in a directory whose `create` member is
 * ccreg40 gets a plugin set of that one member, as the kernel writes it.
 *
 * Directories: entries are units of cde40 items keyed by name (key.c).
 * Units with equal keys (long names whose hashes collide) are told apart by
 * their stored names and may run across items, so searches start just
 * before the key (key_pred) and scan forward.  A unit is added or removed
 * by decoding the item, editing the array and encoding it again; an item
 * that outgrows its node is replaced by two.  dir40 keeps in its stat
 * data: size = number of entries, bytes = sum of unit sizes (fsck.reiser4
 * checks both, docs/objects.md).
 *
 * The file layer's transaction hooks (r4_obj_hooks, txn.h) end this file:
 * what open, commit, abort and close do beside the tree (the root's plugin
 * set, orphans, pending pages, handles' objects), for the lower half,
 * which does not see objects.
 */
#include "obj.h"

#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>

#include "acl.h"
#include "ccreg.h"
#include "key.h"
#include "perm.h"
#include "plugin.h"
#include "tree.h"

void r4_obj_root_key(r4_key *k)
{
	r4_key_sd(k, R4_ROOT_LOCALITY, 0, R4_ROOT_OID);
}

void r4_obj_time(const struct timespec *ts, uint32_t *sec, uint32_t *nsec)
{
	if (ts->tv_sec < 0 || (uint64_t)ts->tv_sec > UINT32_MAX) {
		*sec = ts->tv_sec < 0 ? 0 : UINT32_MAX;
		*nsec = 0;
		return;
	}
	*sec = (uint32_t)ts->tv_sec;
	*nsec = (uint32_t)ts->tv_nsec;
}

void r4_obj_ns_room(const struct r4_db *db, struct r4_inode *ino, const struct timespec *ts)
{
	uint32_t sec, ns;
	struct r4_sd sd = ino->sd;

	r4_obj_time(ts, &sec, &ns);
	if (!ns || db->seconds_only || r4_sd_has(&sd, R4_SDEXT_LT))
		return;
	sd.sd_mask |= 1u << R4_SDEXT_LT;
	if (!r4_obj_sd_fits(db, &sd))
		ino->sd.sd_mask = sd.sd_mask;
}

static void now(const struct r4_db *db, uint32_t *sec, uint32_t *nsec)
{
	struct timespec ts;

	if (db->clock_override >= 0)
		ts = (struct timespec){.tv_sec = (time_t)db->clock_override};
	else if (db->clock_pinned)
		ts = db->clock_pin;
	else
		clock_gettime(CLOCK_REALTIME, &ts);
	r4_obj_time(&ts, sec, nsec);
}

void r4_obj_touch(struct r4_db *db, struct r4_inode *ino, bool m, bool c)
{
	uint32_t s, ns;

	now(db, &s, &ns);
	if (!r4_sd_has(&ino->sd, R4_SDEXT_LT))
		ns = 0;		/* whole-second stat data (seconds_only, libreiser4) */
	if (m) {
		ino->sd.sd_mtime = s;
		ino->sd.sd_mtime_ns = ns;
	}
	if (c) {
		ino->sd.sd_ctime = s;
		ino->sd.sd_ctime_ns = ns;
	}
}

/* Effective plugins: the object's own pset slot, else the root's
 * (r4_obj_plugin). */
static void effective_plugins(const struct r4_db *db, struct r4_inode *ino)
{
	if (!r4_sd_has(&ino->sd, R4_SDEXT_PSET)) {	/* (most objects: all the root's) */
		ino->hash = db->pset.hash;
		ino->fibre = db->pset.fibration;
		ino->formatting = db->pset.formatting;
		ino->create = db->pset.create;
		ino->compress = db->pset.compress;
		ino->cmode = db->pset.compress_mode;
		ino->cluster = db->pset.cluster;
		return;
	}
	ino->hash = r4_obj_plugin(db, ino, R4_PSET_HASH);
	ino->fibre = r4_obj_plugin(db, ino, R4_PSET_FIBRATION);
	ino->formatting = r4_obj_plugin(db, ino, R4_PSET_FORMATTING);
	ino->create = r4_obj_plugin(db, ino, R4_PSET_CREATE);
	ino->compress = r4_obj_plugin(db, ino, R4_PSET_COMPRESSION);
	ino->cmode = r4_obj_plugin(db, ino, R4_PSET_CMODE);
	ino->cluster = r4_obj_plugin(db, ino, R4_PSET_CLUSTER);
}

/* The plugin-set members db->pset keeps, the root's or the defaults. */
static const struct {
	unsigned member;
	size_t off;
} root_slots[] = {
	{R4_PSET_HASH, offsetof(struct r4_pset_defaults, hash)},
	{R4_PSET_FIBRATION, offsetof(struct r4_pset_defaults, fibration)},
	{R4_PSET_FORMATTING, offsetof(struct r4_pset_defaults, formatting)},
	{R4_PSET_CREATE, offsetof(struct r4_pset_defaults, create)},
	{R4_PSET_PERM, offsetof(struct r4_pset_defaults, perm)},
	{R4_PSET_SD, offsetof(struct r4_pset_defaults, sd)},
	{R4_PSET_DIRITEM, offsetof(struct r4_pset_defaults, diritem)},
	{R4_PSET_COMPRESSION, offsetof(struct r4_pset_defaults, compress)},
	{R4_PSET_CMODE, offsetof(struct r4_pset_defaults, compress_mode)},
	{R4_PSET_CLUSTER, offsetof(struct r4_pset_defaults, cluster)},
};

/* The root's plugin for plugin-set member `member` (item.h R4_PSET_*): what
 * an object without a slot of its own has. */
static unsigned root_plugin(const struct r4_db *db, unsigned member)
{
	for (size_t i = 0; i < R4_ARRAY_SIZE(root_slots); i++)
		if (root_slots[i].member == member)
			return *(const unsigned *)((const char *)&db->pset + root_slots[i].off);
	return 0;	/* file, dir, cipher, digest: not the root's to set */
}

/* The root directory's plugin set: the defaults of every new object. */
static int load_root_pset(struct r4_db *db)
{
	struct r4_pset_defaults *d = &db->pset;
	struct r4_inode root;
	uint16_t id;
	r4_key k;
	int rc;

	d->hash = R4_HASH_R5;
	d->fibration = R4_FIBRE_DOT_O;	/* the kernel's built-in default */
	d->formatting = 2;
	d->create = 0;
	r4_obj_root_key(&k);
	if ((rc = r4_obj_load(db, &k, &root)))
		return rc == -ENOENT ? R4_CORRUPT(&db->lg, db->root, "no root directory") : rc;
	if (!S_ISDIR(root.sd.sd_mode))
		rc = R4_CORRUPT(&db->lg, db->root, "the root is not a directory");
	for (size_t i = 0; i < R4_ARRAY_SIZE(root_slots); i++)
		if (r4_item_pset_get(&root.sd.sd_pset, root_slots[i].member, &id))
			*(unsigned *)((char *)d + root_slots[i].off) = id;
	if (!rc && (!r4_plugin_get(R4_PTYPE_HASH, d->hash) ||
		    !r4_plugin_get(R4_PTYPE_FIBRE, d->fibration) ||
		    !r4_plugin_get(R4_PTYPE_FORMATTING, d->formatting)))
		rc = R4_CORRUPT(&db->lg, db->root, "root plugin set names unknown plugins");
	r4_obj_fini(&root);
	/* the root's own plugins become the effective defaults at load time */
	return rc;
}

unsigned r4_obj_plugin(const struct r4_db *db, const struct r4_inode *ino, unsigned member)
{
	uint32_t mode = ino->sd.sd_mode;
	uint16_t id;

	if (r4_sd_has(&ino->sd, R4_SDEXT_PSET) && r4_item_pset_get(&ino->sd.sd_pset, member, &id))
		return id;
	if (member == R4_PSET_FILE)	/* guessed from the mode, as the kernel does */
		return S_ISREG(mode) ? 0 : S_ISDIR(mode) ? 1 : S_ISLNK(mode) ? 2 : 3;
	return root_plugin(db, member);
}

static int find_sd(struct r4_db *db, const r4_key *sdkey, struct r4_path *p, uint8_t **body,
		   unsigned *len)
{
	unsigned pid;
	r4_key k;
	int rc;

	if ((rc = r4_tree_lookup(db, sdkey, R4_LEVEL_LEAF, p)))
		return rc;
	if (!r4_path_item(db, p, &k, &pid, body, len) || r4_key_cmp(&k, sdkey) ||
	    pid != R4_ITEM_STAT40) {
		r4_path_release(db, p);
		return -ENOENT;
	}
	return 0;
}

/*
 * A memo of objects loaded and names looked up, for path walks that load
 * the same directories and look the same names up again and again (a
 * script's "/dNN/f <- ..." walks the root and dNN for the statement, then
 * again to make f, and the next lines do the same).  An object's entry
 * holds while no item of it has changed, nor the root's stat data (its
 * plugins fall back on the root's); a name's while no entry of its
 * directory has (r4_tree_changes, counted by the tree's item editors), in
 * the same transaction (db->txn_seq): never across a commit or an abort.
 * Direct-mapped tables; symlinks (their target is owned) are not kept.
 * Plain memory: r4_close frees it whole.
 */
static int obj_load(struct r4_db *db, const r4_key *sdkey, struct r4_inode *ino);
static int obj_from_sd(struct r4_db *db, const r4_key *sdkey, const uint8_t *body, unsigned len,
		       uint64_t blk, struct r4_inode *ino);

enum { MEMO_OBJS = 1024, MEMO_NAMES = 4096, MEMO_NAME_MAX = 64, MEMO_TOPS = 256 };

struct memo_obj {
	uint64_t txn_seq, changes;
	bool used;
	struct r4_inode ino;
};

struct r4_obj_memo {
	struct memo_obj obj[MEMO_OBJS];
	struct {
		uint64_t txn_seq, changes;
		bool used;
		r4_key dir, sdkey;
		int rc;		/* 0 or -ENOENT */
		size_t len;
		char name[MEMO_NAME_MAX];
	} name[MEMO_NAMES];
	/* a tag of the name each row of name[] holds, 0 none: a lookup reads
	 * the row (three cache lines, seldom in the CPU's caches) only when
	 * its tag matches */
	uint32_t name_tag[MEMO_NAMES];
	/* a directory whose every entry has a key <= top: a name whose key is
	 * above it is missing, no lookup needed (names made in order, as a
	 * script's f0001, f0002, ... are, each go after the last) */
	struct {
		uint64_t txn_seq, changes;
		bool used;
		r4_key dir, top;
	} top[MEMO_TOPS];
};

#define MEMO_FRESH(db, e, oid) ((e).used && (e).txn_seq == (db)->txn_seq && \
				(e).changes == r4_tree_changes(db, oid))

static struct r4_obj_memo *memo(struct r4_db *db)
{
	if (!db->in_txn)
		return NULL;	/* (nothing to tell a state from the next by) */
	if (!db->memo)
		db->memo = r4_calloc(1, sizeof(*db->memo));
	return db->memo;
}

static bool memo_obj_get(struct r4_db *db, const r4_key *sdkey, struct r4_inode *ino)
{
	struct r4_obj_memo *m = memo(db);
	uint64_t oid = r4_key_objectid(sdkey);
	struct memo_obj *e = m ? &m->obj[oid % MEMO_OBJS] : NULL;

	if (!e || !MEMO_FRESH(db, *e, oid) || r4_key_cmp(&e->ino.sdkey, sdkey))
		return false;
	*ino = e->ino;
	return true;
}

/* Object oid's entry, good from now on (its contents the caller's). */
static struct memo_obj *memo_obj_now(struct r4_db *db, uint64_t oid)
{
	struct r4_obj_memo *m = memo(db);
	struct memo_obj *e = m ? &m->obj[oid % MEMO_OBJS] : NULL;

	if (e) {
		e->txn_seq = db->txn_seq;
		e->changes = r4_tree_changes(db, oid);
		e->used = true;
	}
	return e;
}

void r4_obj_memo_put(struct r4_db *db, const struct r4_inode *ino)
{
	struct memo_obj *e = ino->symlink ? NULL : memo_obj_now(db, r4_key_objectid(&ino->sdkey));

	if (e)
		e->ino = *ino;
}

int r4_obj_load(struct r4_db *db, const r4_key *sdkey, struct r4_inode *ino)
{
	int rc;

	if (memo_obj_get(db, sdkey, ino))
		return 0;
	if (!(rc = obj_load(db, sdkey, ino)))
		r4_obj_memo_put(db, ino);
	return rc;
}

/* ino from the stat data body[0..len) of object sdkey (found in block blk,
 * which a complaint names). */
static int obj_from_sd(struct r4_db *db, const r4_key *sdkey, const uint8_t *body, unsigned len,
		       uint64_t blk, struct r4_inode *ino)
{
	int rc;

	memset(ino, 0, sizeof(*ino));
	rc = r4_item_stat_decode(body, len, &ino->sd);
	if (rc) {
		return R4_CORRUPT(&db->lg, blk, "bad stat data of object %llx: %s",
				  (unsigned long long)r4_key_objectid(sdkey), r4_corrupt_last());
	} else if (!r4_sd_has(&ino->sd, R4_SDEXT_LW)) {
		return R4_CORRUPT(&db->lg, blk, "stat data of object %llx has no mode",
				  (unsigned long long)r4_key_objectid(sdkey));
	} else if (S_ISLNK(ino->sd.sd_mode) && !r4_sd_has(&ino->sd, R4_SDEXT_SYMLINK)) {
		/* (r4_check: "symlink without a target extension") */
		return R4_CORRUPT(&db->lg, blk, "symlink %llx has no target",
				  (unsigned long long)r4_key_objectid(sdkey));
	} else if (ino->sd.sd_symlink) {
		if (!(ino->symlink = (uint8_t *)r4_memdup(ino->sd.sd_symlink,
							   ino->sd.sd_symlink_len)))
			return -ENOMEM;
		ino->sd.sd_symlink = ino->symlink;
	}
	ino->sdkey = *sdkey;
	effective_plugins(db, ino);
	return 0;
}

static int obj_load(struct r4_db *db, const r4_key *sdkey, struct r4_inode *ino)
{
	struct r4_path p;
	uint8_t *body;
	unsigned len;
	int rc;

	memset(ino, 0, sizeof(*ino));
	if ((rc = find_sd(db, sdkey, &p, &body, &len)))
		return rc;
	if (!(rc = obj_from_sd(db, sdkey, body, len, p.lv[1].node->blk, ino)))
		r4_tree_hint(db, &p, false, &ino->sd_at);
	r4_path_release(db, &p);
	return rc;
}

void r4_obj_fini(struct r4_inode *ino)
{
	if (ino) {
		r4_free(ino->symlink);
		ino->symlink = NULL;
		ino->sd.sd_symlink = NULL;
	}
}

/* Is ino what a load reads from the stat data body[0, len)? */
static bool reads_as(struct r4_db *db, const struct r4_inode *ino, const uint8_t *body,
		     unsigned len)
{
	struct r4_inode got;
	bool same = !obj_from_sd(db, &ino->sdkey, body, len, 0, &got) &&
		    r4_item_stat_same(&got.sd, &ino->sd) && got.hash == ino->hash &&
		    got.fibre == ino->fibre && got.formatting == ino->formatting &&
		    got.create == ino->create && got.compress == ino->compress &&
		    got.cmode == ino->cmode && got.cluster == ino->cluster;

	r4_obj_fini(&got);
	return same;
}

/* *out: ino as a load reads it back once its stat data is stored, as
 * body[0, len), where ino->sd_at says (r4_item_stat_reread: no decode;
 * r4_obj_fini it, since a symlink's target is copied). */
static int obj_as_stored(struct r4_db *db, const struct r4_inode *ino, const uint8_t *body,
			 unsigned len, struct r4_inode *out)
{
	memset(out, 0, sizeof(*out));
	out->sdkey = ino->sdkey;
	out->sd_at = ino->sd_at;
	r4_item_stat_reread(&ino->sd, &out->sd);
	if (out->sd.sd_symlink) {
		if (!(out->symlink = (uint8_t *)r4_memdup(out->sd.sd_symlink, out->sd.sd_symlink_len)))
			return -ENOMEM;
		out->sd.sd_symlink = out->symlink;
	}
	effective_plugins(db, out);
	R4_INVARIANT(reads_as(db, out, body, len));
	return 0;
}

/* The object whose stat data was just stored (as body[0, len)) where
 * saved->sd_at says, for the next walk through it: as a load would read
 * it back, so nothing the stat data cannot hold is kept; a symlink, whose
 * target the memo does not keep, not at all. */
static void memo_saved(struct r4_db *db, const struct r4_inode *saved, const uint8_t *body,
		       unsigned len)
{
	struct memo_obj *e = S_ISLNK(saved->sd.sd_mode) || !saved->sd_at.set ? NULL :
			     memo_obj_now(db, r4_key_objectid(&saved->sdkey));

	if (e)
		obj_as_stored(db, saved, body, len, &e->ino);	/* (no symlink: no failure) */
}

int r4_obj_save(struct r4_db *db, struct r4_inode *ino)
{
	size_t want = r4_item_stat_size(&ino->sd);
	r4_node *n = r4_tree_at(db, &ino->sd_at, &ino->sdkey, R4_ITEM_STAT40);
	struct r4_path p;
	uint8_t *body;
	unsigned len;
	int rc;

	/* (where it was read or stored last, no lookup, when it stays that size) */
	if (n && r4_node_item_len(n->data, db->bs, ino->sd_at.pos) == want) {
		r4_tree_touch_at(db, n, ino->sd_at.pos);
		body = n->data + r4_node_item_off(n->data, db->bs, ino->sd_at.pos);
		r4_item_stat_encode(&ino->sd, body);
		memo_saved(db, ino, body, (unsigned)want);
		r4_node_put(db, n);
		return 0;
	}
	r4_node_put(db, n);
	if ((rc = find_sd(db, &ino->sdkey, &p, &body, &len)))
		return rc == -ENOENT ? -EUCLEAN : rc;
	r4_tree_hint(db, &p, false, &ino->sd_at);
	if (want != len && (rc = r4_tree_resize(db, &p, R4_MIN(want, len), (int)want - (int)len))) {
		/* no room in place: replace the item */
		uint8_t *buf = r4_malloc(want);

		if (!buf) {
			r4_path_release(db, &p);
			return -ENOMEM;
		}
		r4_item_stat_encode(&ino->sd, buf);
		if (!(rc = r4_tree_remove(db, &p)) &&
		    !(rc = r4_tree_lookup(db, &ino->sdkey, R4_LEVEL_LEAF, &p)))
			rc = r4_tree_insert(db, &p, &ino->sdkey, R4_ITEM_STAT40, buf, (unsigned)want);
		r4_free(buf);
		return rc;
	}
	r4_tree_touch(db, &p);
	r4_path_item(db, &p, NULL, NULL, &body, NULL);
	r4_item_stat_encode(&ino->sd, body);
	memo_saved(db, ino, body, (unsigned)want);
	r4_path_release(db, &p);
	return 0;
}

/* ---- directory entries ---- */

/* The key just below k (for "everything >= k" searches among duplicates). */
static r4_key key_pred(const r4_key *k)
{
	r4_key r = *k;

	for (int i = 3; i >= 0; i--)
		if (r.el[i]-- != 0)
			break;
	return r;
}

static bool is_dir_item(const r4_key *ik, unsigned pid, uint64_t dir_oid)
{
	return pid == R4_ITEM_CDE40 && r4_key_locality(ik) == dir_oid &&
	       r4_key_type(ik) == R4_KEY_NAME;
}

/* Does unit e carry `name`?  Short names live in the key. */
static bool entry_is(const struct r4_dirent *e, const r4_key *ek, const char *name, size_t len)
{
	if (r4_key_cmp(&e->de_key, ek))
		return false;
	if (!r4_item_cde_hashed(ek))
		return true;
	return e->de_namelen == len && !memcmp(e->de_name, name, len);
}

/* A decoded cde item: a private copy of its body, so units stay valid
 * while the tree changes. */
struct cde {
	r4_key ikey;
	uint8_t *body;
	unsigned len;
	struct r4_dirent *e;
	unsigned n;
};

static void cde_free(struct cde *c)
{
	r4_free(c->body);
	r4_free(c->e);
	memset(c, 0, sizeof(*c));
}

static int cde_load(struct r4_db *db, struct r4_path *p, struct cde *c, unsigned extra)
{
	uint8_t *body;
	unsigned len;
	int rc;

	memset(c, 0, sizeof(*c));
	r4_path_item(db, p, &c->ikey, NULL, &body, &len);
	if (!(c->body = r4_malloc(len)))
		return -ENOMEM;
	memcpy(c->body, body, len);
	c->len = len;
	if ((rc = r4_item_cde_count(c->body, len, &c->n)))
		goto bad;
	if (!(c->e = r4_calloc(c->n + extra, sizeof(*c->e)))) {
		cde_free(c);
		return -ENOMEM;
	}
	if ((rc = r4_item_cde_decode_all(&c->ikey, c->body, len, c->e, c->n)))
		goto bad;
	return 0;
bad:
	rc = R4_CORRUPT(&db->lg, p->lv[1].node->blk, "bad directory item");
	cde_free(c);
	return rc;
}

/*
 * Walk the units of dir with key >= from (in order), calling fn on each;
 * fn returns 0 to go on, 1 to stop (the path then rests on that unit's
 * item, *unit its index), or < 0.
 */
/* First unit of the cde item (body, len, key ik) with key >= from, by
 * binary search; n if none.  -EUCLEAN for a unit that does not decode. */
static int first_unit_from(const r4_key *ik, const uint8_t *body, unsigned len, unsigned n,
			   const r4_key *from, unsigned *out)
{
	unsigned lo = 0, hi = n;
	r4_key k;

	/* (the unit found is decoded whole, and checked, by the caller) */
	(void)len;
	while (lo < hi) {
		unsigned mid = lo + (hi - lo) / 2;

		r4_item_cde_unit_key(ik, body, mid, &k);
		if (r4_key_cmp(&k, from) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	*out = lo;
	return 0;
}

/*
 * Walk the units of dir with key >= from (in order), calling fn on each;
 * fn returns 0 to go on, 1 to stop (the path then rests on that unit's
 * item, *unit its index), or < 0.  Units are decoded in place, one at a
 * time: fn must not change the tree.
 */
static int scan_entries(struct r4_db *db, uint64_t dir_oid, const r4_key *from,
			int (*fn)(void *ctx, const struct r4_dirent *e), void *ctx,
			struct r4_path *p, unsigned *unit)
{
	r4_key pk = key_pred(from), ik;
	unsigned pid, len, n, i;
	uint8_t *body;
	int rc;

	if ((rc = r4_tree_lookup(db, &pk, R4_LEVEL_LEAF, p)))
		return rc;
	if (!r4_path_item(db, p, &ik, &pid, NULL, NULL) || !is_dir_item(&ik, pid, dir_oid))
		goto next;
	for (;;) {
		struct r4_dirent e;

		r4_path_item(db, p, &ik, NULL, &body, &len);
		if ((rc = r4_item_cde_count(body, len, &n)) ||
		    (rc = first_unit_from(&ik, body, len, n, from, &i)))
			goto bad;
		for (; i < n; i++) {
			if ((rc = r4_item_cde_decode(&ik, body, len, i, &e)))
				goto bad;
			if ((rc = fn(ctx, &e)) != 0) {
				if (unit)
					*unit = i;
				if (rc < 0)
					r4_path_release(db, p);
				return rc;
			}
		}
next:
		if ((rc = r4_tree_next(db, p)) <= 0)
			break;
		if (!r4_path_item(db, p, &ik, &pid, NULL, NULL) || !is_dir_item(&ik, pid, dir_oid)) {
			rc = 0;
			break;
		}
	}
	r4_path_release(db, p);
	return rc;
bad:
	rc = R4_CORRUPT(&db->lg, p->lv[1].node->blk, "bad directory item");
	r4_path_release(db, p);
	return rc;
}

struct find_ctx {
	const r4_key *ek;
	const char *name;
	size_t len;
	r4_key sdkey;
};

static int find_fn(void *ctx, const struct r4_dirent *e)
{
	struct find_ctx *f = ctx;

	if (r4_key_cmp(&e->de_key, f->ek) > 0)
		return -ENOENT;
	if (!entry_is(e, f->ek, f->name, f->len))
		return 0;
	f->sdkey = e->de_sdkey;
	return 1;
}

/* Find name in dir: 1 found (path on its item, *unit), or < 0 (-ENOENT). */
/* Find name (entry key ek) in dir: 1 found (path on its item, *unit), or
 * < 0 (-ENOENT; then *past, if not NULL, says whether the search ran past
 * the directory's last entry: none has a key above ek). */
static int find_entry(struct r4_db *db, const struct r4_inode *dir, const char *name,
		      size_t len, const r4_key *ek, struct find_ctx *f, struct r4_path *p,
		      unsigned *unit, bool *past)
{
	int rc;

	f->ek = ek;
	f->name = name;
	f->len = len;
	rc = scan_entries(db, r4_key_objectid(&dir->sdkey), ek, find_fn, f, p, unit);
	if (past)
		*past = rc == 0;
	if (rc == 0)
		rc = -ENOENT;
	f->ek = NULL;
	return rc;
}

/* dir's entry in the memo's tops: *top if it holds (fresh), else false. */
static bool memo_top_get(struct r4_db *db, const struct r4_inode *dir, r4_key *top)
{
	struct r4_obj_memo *m = memo(db);
	uint64_t doid = r4_key_objectid(&dir->sdkey);

	if (!m || !MEMO_FRESH(db, m->top[doid % MEMO_TOPS], doid) ||
	    r4_key_cmp(&m->top[doid % MEMO_TOPS].dir, &dir->sdkey))
		return false;
	*top = m->top[doid % MEMO_TOPS].top;
	return true;
}

/* Every entry of dir has a key <= top, as the tree reads now. */
static void memo_top_put(struct r4_db *db, const struct r4_inode *dir, const r4_key *top)
{
	struct r4_obj_memo *m = memo(db);
	uint64_t doid = r4_key_objectid(&dir->sdkey);

	if (!m)
		return;
	m->top[doid % MEMO_TOPS].txn_seq = db->txn_seq;
	m->top[doid % MEMO_TOPS].changes = r4_tree_changes(db, doid);
	m->top[doid % MEMO_TOPS].used = true;
	m->top[doid % MEMO_TOPS].dir = dir->sdkey;
	m->top[doid % MEMO_TOPS].top = *top;
}

/* name's row in dir doid, and its tag (*tag, never 0). */
static unsigned memo_name_slot(uint64_t doid, const char *name, size_t len, uint32_t *tag)
{
	uint64_t h = doid;

	for (size_t k = 0; k < len; k++)
		h = (h ^ (unsigned char)name[k]) * 0x100000001b3ull;
	*tag = (uint32_t)(h >> 32) | 1;
	return (unsigned)(h % MEMO_NAMES);
}

/* name in dir is at sdkey (rc 0) or missing (rc -ENOENT), as the tree
 * reads now. */
static void memo_name_put(struct r4_db *db, const struct r4_inode *dir, const char *name,
			  size_t len, const r4_key *sdkey, int rc)
{
	struct r4_obj_memo *m = len <= MEMO_NAME_MAX ? memo(db) : NULL;
	uint64_t doid = r4_key_objectid(&dir->sdkey);
	uint32_t tag;
	unsigned i = memo_name_slot(doid, name, len, &tag);

	if (!m)
		return;
	m->name_tag[i] = tag;
	m->name[i].txn_seq = db->txn_seq;
	m->name[i].changes = r4_tree_changes(db, doid);
	m->name[i].used = true;
	m->name[i].dir = dir->sdkey;
	m->name[i].sdkey = rc ? (r4_key){{0}} : *sdkey;
	m->name[i].rc = rc;
	m->name[i].len = len;
	memcpy(m->name[i].name, name, len);
}

int r4_dir_lookup(struct r4_db *db, const struct r4_inode *dir, const char *name, size_t len,
		  r4_key *sdkey)
{
	struct r4_obj_memo *m = len <= MEMO_NAME_MAX ? memo(db) : NULL;
	uint64_t doid = r4_key_objectid(&dir->sdkey);
	uint32_t tag;
	unsigned i = memo_name_slot(doid, name, len, &tag), unit;
	struct find_ctx f;
	struct r4_path p;
	int rc;

	r4_key ek, top;
	bool past;

	if (m && m->name_tag[i] == tag && MEMO_FRESH(db, m->name[i], doid) && m->name[i].len == len &&
	    !r4_key_cmp(&m->name[i].dir, &dir->sdkey) && !memcmp(m->name[i].name, name, len)) {
		*sdkey = m->name[i].sdkey;
		return m->name[i].rc;
	}
	r4_key_entry(&ek, doid, name, len, dir->hash, dir->fibre);
	if (memo_top_get(db, dir, &top) && r4_key_cmp(&ek, &top) > 0) {
		return -ENOENT;	/* (above every entry: the top answers again, no row) */
	} else if ((rc = find_entry(db, dir, name, len, &ek, &f, &p, &unit, &past)) >= 0) {
		r4_path_release(db, &p);
		*sdkey = f.sdkey;
		rc = 0;
	} else if (rc == -ENOENT && past) {
		memo_top_put(db, dir, &ek);
	}
	if (rc == 0 || rc == -ENOENT)
		memo_name_put(db, dir, name, len, &f.sdkey, rc);
	return rc;
}

/* Write units e[0..n) back as the item at p: in place when the node has
 * room; else the first units that fit stay in place and the rest become a
 * new item after it (appending to a full node so leaves it full).
 * Releases p. */
static int cde_store(struct r4_db *db, struct r4_path *p, unsigned oldlen,
		     const struct r4_dirent *e, unsigned n)
{
	size_t avail = oldlen + r4_tree_free(db, p), size = R4_CDE_HDR;
	uint8_t *buf, *body;
	unsigned k;
	int rc;

	if (avail > r4_tree_max_item(db))
		avail = r4_tree_max_item(db);
	for (k = 0; k < n && size + r4_item_cde_unit_size(&e[k]) <= avail; k++)
		size += r4_item_cde_unit_size(&e[k]);
	if (k == 0) {
		/* not even one unit fits beside the others: move the whole item */
		if (!(buf = r4_malloc(r4_item_cde_size(e, n))))
			return r4_path_release(db, p), -ENOMEM;
		rc = r4_tree_remove(db, p);
		k = 0;
		goto rest;
	}
	if ((rc = r4_tree_resize(db, p, R4_MIN(oldlen, (unsigned)size),
				 (int)size - (int)oldlen))) {
		r4_path_release(db, p);
		return rc;
	}
	r4_path_item(db, p, NULL, NULL, &body, NULL);
	r4_item_cde_encode(e, k, body);
	r4_tree_set_key(db, p, &e[0].de_key);
	r4_path_release(db, p);
	if (k == n)
		return 0;
	if (!(buf = r4_malloc(r4_item_cde_size(e + k, n - k))))
		return -ENOMEM;
rest:
	/* the rest, as one new item (cut in two if it exceeds a node) */
	while (!rc && k < n) {
		unsigned m = 0;

		for (size = R4_CDE_HDR; k + m < n; m++) {
			if (size + r4_item_cde_unit_size(&e[k + m]) > r4_tree_max_item(db))
				break;
			size += r4_item_cde_unit_size(&e[k + m]);
		}
		r4_item_cde_encode(e + k, m, buf);
		if (!(rc = r4_tree_lookup(db, &e[k].de_key, R4_LEVEL_LEAF, p)))
			rc = r4_tree_insert(db, p, &e[k].de_key, R4_ITEM_CDE40, buf,
					    (unsigned)size);
		k += m;
	}
	r4_free(buf);
	return rc;
}

static void dir_account(struct r4_inode *dir, const struct r4_dirent *e, int sign)
{
	dir->sd.sd_size += (uint64_t)(int64_t)sign;
	dir->sd.sd_bytes_rdev += (uint64_t)((int64_t)sign * (int64_t)r4_item_cde_unit_size(e));
}

/* Take back what cde_add_in_place added to the offsets of units 0..k. */
static void undo_offsets(uint8_t *body, unsigned k, unsigned at, unsigned usz)
{
	for (unsigned i = 0; i < k; i++) {
		uint8_t *o = body + R4_CDE_HDR + i * R4_CDE_UH_SIZE + R4_CDE_UH_OFFSET;

		r4_le16_put(o, (uint16_t)(r4_le16_get(o) - (i < at ? R4_CDE_UH_SIZE : usz)));
	}
}

/*
 * ne as a new unit of the cde item at p, edited in place: 1 done; 2 when
 * ne goes after every unit but the node has no room for it, or the item
 * would be too big (the caller makes it an item of its own after this
 * one, as cde_store would); 0 when it cannot be (ne would come first and
 * change the item's key, or the item does not check as cde_load checks
 * it: the caller's cde_load and cde_store then do as always), < 0 an
 * error.  What it leaves is what cde_store would write: the units in key
 * order (ne after its equals), bodies packed in the same order.  Decoding
 * the item into an array and encoding it whole was most of adding an
 * entry to a directory of a thousand.  p stays the caller's.
 */
static int cde_add_in_place(struct r4_db *db, struct r4_path *p, const struct r4_dirent *ne)
{
	uint8_t one[R4_CDE_HDR + R4_CDE_UH_SIZE + R4_CDE_OBJID_SIZE + R4_NAME_MAX + 1];
	unsigned usz = (unsigned)r4_item_cde_unit_size(ne), len, n, at, hend, bat, off, prev_off;
	uint8_t *body;
	r4_key ik, k;
	bool room;
	int rc;

	r4_path_item(db, p, &ik, NULL, &body, &len);
	if (r4_item_cde_count(body, len, &n) || !n || n >= UINT16_MAX || len < R4_CDE_HDR +
	    n * R4_CDE_UH_SIZE)
		return 0;
	room = r4_tree_free(db, p) >= usz && len + usz <= r4_tree_max_item(db);
	r4_item_cde_unit_key(&ik, body, 0, &k);
	if (r4_key_cmp(&k, &ik))
		return 0;
	/* at: the first unit whose key is above the new one (a binary search
	 * compares both neighbours of where it ends) */
	for (unsigned lo = at = 0, hi = n, mid; lo < hi; at = lo) {
		mid = lo + (hi - lo) / 2;
		r4_item_cde_unit_key(&ik, body, mid, &k);
		if (r4_key_cmp(&k, &ne->de_key) <= 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (at == 0 || (!room && at < n))
		return 0;
	/* what the moves below rely on: unit bodies in order inside the item,
	 * the first unit's key the item's (units' own contents stay as they
	 * are; the slow way decodes and checks them whole; the order of the
	 * unit keys, which every lookup's binary search takes on trust, is
	 * fsck's to check).  The same pass gives each offset what the moves
	 * will add before it (a header; the new body too from `at` on), taken
	 * back if a later one does not check or nothing moves. */
	hend = R4_CDE_HDR + n * R4_CDE_UH_SIZE;
	prev_off = 0;
	bat = len;
	for (unsigned i = 0; i < n; i++, prev_off = off) {
		uint8_t *o = body + R4_CDE_HDR + i * R4_CDE_UH_SIZE + R4_CDE_UH_OFFSET;

		off = r4_le16_get(o);
		if ((i == 0 ? off != hend : off <= prev_off) || off >= len) {
			undo_offsets(body, i, at, usz);
			return 0;
		}
		if (i == at)
			bat = off;
		if (room)
			r4_le16_put(o, (uint16_t)(off + (i < at ? R4_CDE_UH_SIZE : usz)));
	}
	if (!room)
		return 2;
	if ((rc = r4_tree_resize(db, p, len, (int)usz))) {
		undo_offsets(body, n, at, usz);
		return rc;
	}
	r4_path_item(db, p, NULL, NULL, &body, NULL);
	/* [headers 0..at) [new] [headers at..n) [bodies 0..at) [new] [bodies at..n) */
	memmove(body + bat + usz, body + bat, len - bat);
	memmove(body + hend + R4_CDE_UH_SIZE, body + hend, bat - hend);
	memmove(body + R4_CDE_HDR + (at + 1) * R4_CDE_UH_SIZE, body + R4_CDE_HDR + at * R4_CDE_UH_SIZE,
		(size_t)(n - at) * R4_CDE_UH_SIZE);
	r4_item_cde_encode(ne, 1, one);
	memcpy(body + R4_CDE_HDR + at * R4_CDE_UH_SIZE, one + R4_CDE_HDR, R4_CDE_UH_SIZE);
	r4_le16_put(body + R4_CDE_HDR + at * R4_CDE_UH_SIZE + R4_CDE_UH_OFFSET,
		    (uint16_t)(bat + R4_CDE_UH_SIZE));
	memcpy(body + bat + R4_CDE_UH_SIZE, one + R4_CDE_HDR + R4_CDE_UH_SIZE,
	       usz - R4_CDE_UH_SIZE);
	r4_le16_put(body + R4_CDE_COUNT, (uint16_t)(n + 1));
	return 1;
}

/* Add an entry known not to exist yet. */
static int dir_insert(struct r4_db *db, struct r4_inode *dir, const char *name, size_t len,
		      const r4_key *target)
{
	uint64_t doid = r4_key_objectid(&dir->sdkey);
	struct r4_dirent ne = {0};
	struct r4_path p;
	struct cde c;
	r4_key ik, top;
	unsigned pid, at;
	bool topped = memo_top_get(db, dir, &top);	/* (before the changes below) */
	int rc;

	r4_key_entry(&ne.de_key, doid, name, len, dir->hash, dir->fibre);
	ne.de_sdkey = *target;
	ne.de_sdkey.el[3] = 0;
	if (r4_item_cde_hashed(&ne.de_key)) {
		ne.de_name = (const uint8_t *)name;
		ne.de_namelen = len;
	}
	if ((rc = r4_tree_lookup(db, &ne.de_key, R4_LEVEL_LEAF, &p)))
		return rc;
	if (!r4_path_item(db, &p, &ik, &pid, NULL, NULL) || !is_dir_item(&ik, pid, doid) ||
	    p.level != R4_LEVEL_LEAF || (rc = cde_add_in_place(db, &p, &ne)) == 2) {
		/* no item of this directory precedes the key, or the one that
		 * does has no room for it at its end: a new one, after it */
		uint8_t buf[R4_CDE_HDR + R4_CDE_UH_SIZE + R4_CDE_OBJID_SIZE + R4_NAME_MAX + 1];

		r4_item_cde_encode(&ne, 1, buf);
		rc = r4_tree_insert(db, &p, &ne.de_key, R4_ITEM_CDE40, buf,
				    (unsigned)r4_item_cde_size(&ne, 1));
	} else if (rc != 0) {
		r4_path_release(db, &p);
		rc = rc > 0 ? 0 : rc;
	} else {
		if ((rc = cde_load(db, &p, &c, 1)))
			return r4_path_release(db, &p), rc;
		for (at = c.n; at > 0 && r4_key_cmp(&c.e[at - 1].de_key, &ne.de_key) > 0; at--)
			;
		memmove(c.e + at + 1, c.e + at, (c.n - at) * sizeof(*c.e));
		c.e[at] = ne;
		rc = cde_store(db, &p, c.len, c.e, c.n + 1);
		cde_free(&c);
	}
	if (!rc) {
		dir_account(dir, &ne, +1);
		r4_obj_touch(db, dir, true, true);
		rc = r4_obj_save(db, dir);
	}
	if (!rc) {	/* (the next walk through dir looks the new name up) */
		memo_name_put(db, dir, name, len, &ne.de_sdkey, 0);
		if (topped)
			memo_top_put(db, dir, r4_key_cmp(&ne.de_key, &top) > 0 ? &ne.de_key : &top);
	}
	return rc;
}

int r4_dir_add(struct r4_db *db, struct r4_inode *dir, const char *name, size_t len,
	       const r4_key *target)
{
	r4_key k;
	int rc;

	if ((rc = r4_dir_lookup(db, dir, name, len, &k)) != -ENOENT)
		return rc ? rc : -EEXIST;
	return dir_insert(db, dir, name, len, target);
}

/* The cde item holding name's entry in dir, decoded into *c (its unit:
 * *unit), at *p: cde_free and release both after. */
static int entry_load(struct r4_db *db, const struct r4_inode *dir, const char *name, size_t len,
		      struct r4_path *p, struct cde *c, unsigned *unit)
{
	struct find_ctx f;
	r4_key ek;
	int rc;

	r4_key_entry(&ek, r4_key_objectid(&dir->sdkey), name, len, dir->hash, dir->fibre);
	if ((rc = find_entry(db, dir, name, len, &ek, &f, p, unit, NULL)) < 0)
		return rc;
	if ((rc = cde_load(db, p, c, 0)))
		r4_path_release(db, p);
	return rc;
}

int r4_dir_remove(struct r4_db *db, struct r4_inode *dir, const char *name, size_t len)
{
	struct r4_path p;
	struct cde c;
	unsigned unit;
	int rc;

	if ((rc = entry_load(db, dir, name, len, &p, &c, &unit)))
		return rc;
	dir_account(dir, &c.e[unit], -1);
	if (c.n == 1) {
		rc = r4_tree_remove(db, &p);
	} else {
		memmove(c.e + unit, c.e + unit + 1, (c.n - unit - 1) * sizeof(*c.e));
		rc = cde_store(db, &p, c.len, c.e, c.n - 1);
	}
	cde_free(&c);
	if (!rc) {
		r4_obj_touch(db, dir, true, true);
		rc = r4_obj_save(db, dir);
	}
	return rc;
}

int r4_dir_retarget(struct r4_db *db, const struct r4_inode *dir, const char *name, size_t len,
		    const r4_key *target)
{
	struct r4_path p;
	struct cde c;
	unsigned unit;
	int rc;

	if ((rc = entry_load(db, dir, name, len, &p, &c, &unit)))
		return rc;
	c.e[unit].de_sdkey = *target;
	c.e[unit].de_sdkey.el[3] = 0;
	rc = cde_store(db, &p, c.len, c.e, c.n);
	cde_free(&c);
	return rc;
}

struct iter_ctx {
	struct r4_dirpos *pos;
	int (*fn)(void *ctx, const char *name, size_t len, const r4_key *sdkey);
	void *ctx;
	unsigned skip;
};

static int iter_fn(void *ctx, const struct r4_dirent *e)
{
	struct iter_ctx *it = ctx;
	struct r4_dirpos *pos = it->pos, was = *pos;
	char shortname[24];
	const char *name = (const char *)e->de_name;
	size_t len = e->de_namelen;
	r4_key last;
	int rc;

	memcpy(last.el, pos->k, sizeof(last.el));
	if (pos->started && !r4_key_cmp(&e->de_key, &last) && it->skip) {
		it->skip--;
		return 0;
	}
	if (!name) {
		len = r4_key_entry_name(&e->de_key, shortname);
		name = shortname;
	}
	/* past the entry while the callback runs (r4_dirpos_tell), back if
	 * it stops there */
	if (pos->started && !r4_key_cmp(&e->de_key, &last)) {
		pos->dup++;
	} else {
		memcpy(pos->k, e->de_key.el, sizeof(pos->k));
		pos->dup = 1;
		pos->started = true;
	}
	if ((rc = it->fn(it->ctx, name, len, &e->de_sdkey))) {
		*pos = was;
		return rc < 0 ? rc : 1;
	}
	return 0;
}

/* splitmix64's finalizer: every bit of x moves about half of the result's */
static uint64_t mix(uint64_t x)
{
	x = (x ^ (x >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	x = (x ^ (x >> 27)) * UINT64_C(0x94d049bb133111eb);
	return x ^ (x >> 31);
}

uint64_t r4_dirpos_tell(const struct r4_dirpos *pos)
{
	uint64_t h = 0;

	if (!pos->started)
		return 0;
	/* (k[0] is the directory's: the same for all its entries) */
	for (unsigned i = 1; i < 4; i++)
		h = mix(h ^ pos->k[i]);
	h = mix(h ^ pos->dup) >> 1;
	return h ? h : 1;
}

int r4_dir_iterate(struct r4_db *db, const struct r4_inode *dir, struct r4_dirpos *pos,
		   int (*fn)(void *ctx, const char *name, size_t len, const r4_key *sdkey),
		   void *ctx)
{
	struct iter_ctx it = {pos, fn, ctx, pos->started ? pos->dup : 0};
	struct r4_path p;
	r4_key from;
	int rc;

	if (pos->started)
		memcpy(from.el, pos->k, sizeof(from.el));
	else
		r4_key_set(&from, r4_key_objectid(&dir->sdkey), R4_KEY_NAME, 0, 0, 0);
	rc = scan_entries(db, r4_key_objectid(&dir->sdkey), &from, iter_fn, &it, &p, NULL);
	if (rc == 1) {
		r4_path_release(db, &p);
		rc = 0;
	}
	return rc;
}

static int count_fn(void *ctx, const struct r4_dirent *e)
{
	(void)e;
	return ++*(unsigned *)ctx > 2 ? 1 : 0;
}

int r4_dir_is_empty(struct r4_db *db, const struct r4_inode *dir, bool *empty)
{
	unsigned n = 0;
	struct r4_path p;
	r4_key from;
	int rc;

	r4_key_set(&from, r4_key_objectid(&dir->sdkey), R4_KEY_NAME, 0, 0, 0);
	rc = scan_entries(db, r4_key_objectid(&dir->sdkey), &from, count_fn, &n, &p, NULL);
	if (rc == 1)
		r4_path_release(db, &p);
	if (rc < 0)
		return rc;
	*empty = n <= 2;
	return 0;
}

/* ---- creating and destroying objects ---- */

static void sd_set_plugin(const struct r4_db *db, struct r4_sd *sd, unsigned member, unsigned id);

/*
 * What a new object takes from its directory, as the kernel's create does
 * (ENGINE.md 5.1): a directory every member its directory has other than
 * the root's, a regular file its formatting, and a ccreg40 file its
 * compression, mode and cluster too.  (Heir sets, which no tool here
 * writes, are not read.)
 */
static void inherit(const struct r4_db *db, const struct r4_inode *dir, struct r4_sd *sd)
{
	static const struct {
		unsigned member;
		bool reg, ccreg;	/* a reg40, a ccreg40 file takes it too */
	} m[] = {
		{R4_PSET_FORMATTING, true, false}, {R4_PSET_HASH, false, false},
		{R4_PSET_FIBRATION, false, false}, {R4_PSET_CREATE, false, false},
		{R4_PSET_COMPRESSION, false, true}, {R4_PSET_CMODE, false, true},
		{R4_PSET_CLUSTER, false, true},
	};
	uint16_t file = 0;
	bool cc = r4_sd_has(sd, R4_SDEXT_PSET) &&
		  r4_item_pset_get(&sd->sd_pset, R4_PSET_FILE, &file) && file == R4_FILE_CCREG40;

	for (size_t i = 0; i < R4_ARRAY_SIZE(m); i++)
		if (S_ISDIR(sd->sd_mode) || (S_ISREG(sd->sd_mode) && (cc ? m[i].ccreg : m[i].reg)))
			sd_set_plugin(db, sd, m[i].member, r4_obj_plugin(db, dir, m[i].member));
}

int r4_obj_sd_fits(const struct r4_db *db, const struct r4_sd *sd)
{
	if (r4_sd_has(sd, R4_SDEXT_SYMLINK) && sd->sd_symlink_len > R4_SYMLINK_MAX)
		return -ENAMETOOLONG;
	return r4_item_stat_size(sd) > r4_tree_max_item(db) ? -ENAMETOOLONG : 0;
}

void r4_obj_prepare(const struct r4_db *db, const struct r4_inode *dir, const char *name,
		    size_t len, const struct r4_sd *tmpl, struct r4_inode *out)
{
	uint64_t doid = r4_key_objectid(&dir->sdkey);
	struct r4_inode ino = {0};
	r4_key ek;

	r4_key_entry(&ek, doid, name, len, dir->hash, dir->fibre);
	r4_key_sd(&ino.sdkey, doid, ek.el[1], db->next_oid);
	ino.sd = *tmpl;
	ino.sd.sd_mask |= 1u << R4_SDEXT_LW | 1u << R4_SDEXT_UNIX;
	if (!db->seconds_only)
		ino.sd.sd_mask |= 1u << R4_SDEXT_LT;
	now(db, &ino.sd.sd_atime, &ino.sd.sd_atime_ns);
	if (db->seconds_only)
		ino.sd.sd_atime_ns = 0;
	ino.sd.sd_mtime = ino.sd.sd_ctime = ino.sd.sd_atime;
	ino.sd.sd_mtime_ns = ino.sd.sd_ctime_ns = ino.sd.sd_atime_ns;
	ino.sd.sd_nlink = S_ISDIR(tmpl->sd_mode) ? 2 : 1;
	if (S_ISDIR(tmpl->sd_mode)) {
		ino.sd.sd_size = 0;
		ino.sd.sd_bytes_rdev = 0;
	}
	if (tmpl->sd_symlink) {
		ino.sd.sd_mask |= 1u << R4_SDEXT_SYMLINK;
		ino.sd.sd_size = tmpl->sd_symlink_len;
	}
	if (S_ISREG(tmpl->sd_mode) && dir->create == R4_FILE_CCREG40)
		r4_ccreg_init_sd(&ino.sd);	/* the directory's `create` plugin (kernel default profile) */
	inherit(db, dir, &ino.sd);
	effective_plugins(db, &ino);
	*out = ino;
}

int r4_obj_create(struct r4_db *db, struct r4_inode *dir, const char *name, size_t len,
		  const struct r4_sd *tmpl, const uint8_t *body, size_t n, struct r4_inode *out)
{
	struct r4_inode ino;
	struct r4_path p;
	uint8_t small[256], *buf;	/* (a symlink's may not fit) */
	r4_key ek;
	size_t size;
	int rc;

	/* refuse before the first change, so the transaction stays usable */
	if ((rc = r4_dir_lookup(db, dir, name, len, &ek)) != -ENOENT)
		return rc ? rc : -EEXIST;
	r4_obj_prepare(db, dir, name, len, tmpl, &ino);
	if ((rc = r4_obj_sd_fits(db, &ino.sd)))
		return rc;
	if (body && (!S_ISREG(tmpl->sd_mode) || (rc = r4_reg_new_tails(db, &ino, n)) <= 0)) {
		if (rc)
			return rc;
		body = NULL;	/* (the caller writes them) */
	}
	size = r4_item_stat_size(&ino.sd);
	if (!(buf = size <= sizeof(small) ? small : r4_malloc(size)))
		return -ENOMEM;
	r4_item_stat_encode(&ino.sd, buf);
	if (!(rc = r4_tree_lookup(db, &ino.sdkey, R4_LEVEL_LEAF, &p))) {
		r4_tree_hint(db, &p, true, &ino.sd_at);
		rc = r4_tree_insert(db, &p, &ino.sdkey, R4_ITEM_STAT40, buf, (unsigned)size);
	}
	if (!rc && body)
		rc = r4_reg_new_put(db, &ino, body, n);
	/* the object as its stat data now reads, from the bytes just stored */
	if (!rc) {
		db->next_oid++;
		db->file_count++;
		rc = obj_as_stored(db, &ino, buf, (unsigned)size, out);
	}
	if (buf != small)
		r4_free(buf);
	if (rc)
		return rc;
	if (S_ISDIR(tmpl->sd_mode)) {
		/* "." and "..": the new directory's first item */
		if ((rc = dir_insert(db, out, ".", 1, &out->sdkey)) ||
		    (rc = dir_insert(db, out, "..", 2, &dir->sdkey)))
			goto fail;
		dir->sd.sd_nlink++;
	}
	if ((rc = dir_insert(db, dir, name, len, &out->sdkey)))
		goto fail;
	return 0;
fail:
	r4_obj_fini(out);	/* out is written only on success */
	return rc;
}

/* Remove every item with key in [from, upto): a directory's entries, a
 * stat data.  (File bodies, whose extents hold blocks, go through
 * r4_reg_remove_body.) */
static int remove_range(struct r4_db *db, const r4_key *from, const r4_key *upto)
{
	struct r4_path p;
	r4_key k;
	int rc;

	r4_key below = key_pred(upto);

	for (;;) {
		/* the last item below upto */
		if ((rc = r4_tree_lookup(db, &below, R4_LEVEL_LEAF, &p)))
			return rc;
		if (!r4_path_item(db, &p, &k, NULL, NULL, NULL) || r4_key_cmp(&k, from) < 0) {
			r4_path_release(db, &p);
			return 0;
		}
		if ((rc = r4_tree_remove(db, &p)))
			return rc;
	}
}

int r4_obj_destroy(struct r4_db *db, struct r4_inode *ino)
{
	uint64_t oid = r4_key_objectid(&ino->sdkey);
	r4_key from, upto;
	int rc;

	if (S_ISDIR(ino->sd.sd_mode)) {
		r4_key_set(&from, oid, R4_KEY_NAME, 0, 0, 0);
		r4_key_set(&upto, oid, R4_KEY_SD, 0, 0, 0);
		if ((rc = remove_range(db, &from, &upto)))
			return rc;
	}
	if (S_ISREG(ino->sd.sd_mode) && (rc = r4_reg_remove_body(db, ino)))
		return rc;
	from = ino->sdkey;
	upto = from;
	upto.el[3] = 1;
	if ((rc = remove_range(db, &from, &upto)))
		return rc;
	db->file_count--;
	return 0;
}

/* Slot `member` of sd's plugin set holds id, or goes when id is the root's
 * (fsck.reiser4 wants only the slots that differ). */
static void sd_set_plugin(const struct r4_db *db, struct r4_sd *sd, unsigned member, unsigned id)
{
	if (id == root_plugin(db, member)) {
		r4_item_pset_clear(&sd->sd_pset, member);
		if (!sd->sd_pset.ps_count)
			sd->sd_mask &= ~(UINT64_C(1) << R4_SDEXT_PSET);
		return;
	}
	if (!r4_sd_has(sd, R4_SDEXT_PSET)) {
		memset(&sd->sd_pset, 0, sizeof(sd->sd_pset));
		sd->sd_mask |= UINT64_C(1) << R4_SDEXT_PSET;
	}
	r4_item_pset_set(&sd->sd_pset, member, (uint16_t)id);
}

void r4_obj_set_plugin(const struct r4_db *db, struct r4_inode *ino, unsigned member, unsigned id)
{
	sd_set_plugin(db, &ino->sd, member, id);
}

/* ---- the file layer's transaction hooks (txn.h) ---- */

static int hook_open(struct r4_db *db)
{
	int rc = load_root_pset(db);

	if (!rc && db->rw && !db->repair)
		rc = r4_fs_finish_orphans(db);
	return rc;
}

static void hook_aborted(struct r4_db *db)
{
	/* what handles changed in it is lost: their next r4_file_error says so */
	for (struct r4_held *h = db->held; h; h = h->next)
		h->lost += h->changed == db->txn_seq;
	r4_page_discard(db);
	db->meta_known = false;	/* the transaction may have made "..r4" */
	r4_acl_forget(db);	/* (and set or removed ACLs) */
}

static void hook_close(struct r4_db *db)
{
	r4_page_discard(db);
	r4_page_pool_free(db);
	r4_free(db->pages);
	r4_free(db->fake_files);
	r4_perm_free(db);
	r4_acl_forget(db);
	while (db->held) {	/* (handles left open: their objects stay orphans) */
		struct r4_held *h = db->held;

		db->held = h->next;
		r4_free(h->way_name);
		r4_free(h);
	}
}

const struct r4_txn_hooks r4_obj_hooks = {
	.open = hook_open,
	.place = r4_reg_place,
	.each_page = r4_page_each,
	.spill = r4_reg_spill,
	.committed = r4_page_discard,
	.aborted = hook_aborted,
	.close = hook_close,
};
