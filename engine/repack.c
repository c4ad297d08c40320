/*
 * repack.c - the repacker (r4_repack, docs/repack.md): one pass over a
 * subtree in the order a reader walks it, moving each file whose body is
 * out of that order, or in pieces, into one run after the previous file's.
 *
 * The walk: a directory's leaves, its regular files in readdir order,
 * then its subdirectories in readdir order, each walked the same way
 * (parent first).  The target t, where the next file belongs, starts at the first
 * block of the first extent file met and moves forward.  A file in one run
 * at or after t is in place (t goes past its end); any other file moves:
 * into the first free run at or after t that holds it (the run at t when
 * the pass is appending into free space), else, a file in pieces only,
 * the first run anywhere that holds it, else as few of the largest free
 * runs as are fewer than the runs it has; t follows it.  A file that finds
 * no room stays (skipped); t follows it too when it is one run, as there
 * is nowhere better for it.  A file in one run is never moved backwards or
 * split, so after a pass every file it reached is one run, in walk order,
 * and the next pass moves nothing (unless this one wrapped round, or found
 * no room for a file: the next may find room in what this one freed).
 *
 * A file moves into a place chosen for all of it, a piece (at most
 * piece_blocks, 1 MiB) per operation of the pass's transaction
 * (r4_reg_move: grab, copy, map stored again, old blocks freed at
 * commit), committed every commit_bytes moved, before a stop, and at the
 * end.  A host that shares the db (r4fuse) may let its other callers in
 * between objects and between pieces (o->stop): the walk's cursor is a
 * key, and each object and piece is looked at afresh.  Memory: a
 * batch of a directory's entries per level of the walk, one file's map,
 * the ids of the hard-linked files met.  A dry run makes the same choices
 * in the allocator's working state only (marks and deferred frees, never
 * reused, as within one transaction) and takes them back at the end.
 */
#include "obj.h"

#include <limits.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "alloc.h"
#include "tree.h"
#include "txn.h"

enum {
	BATCH = 256,			/* entries of a directory read at a time */
	DEFAULT_COMMIT = 4 << 20,	/* bytes moved per transaction */
	PIECE = 256,			/* blocks moved per operation at most (1 MiB) */
};

struct ent {
	r4_key sdkey;
	char *name;
	size_t len;
};

struct batch {
	struct ent v[BATCH];
	size_t n;
};

struct pass {
	struct r4_db *db;
	const struct r4_repack_opts *o;
	struct r4_repack_stats *st;
	bool started;		/* t is set: the first extent file was met */
	uint64_t t;		/* the target: where the next file belongs */
	uint64_t since;		/* blocks moved since the last commit */
	uint64_t nt;		/* the node phase's: the block after the last twig's leaves */
	uint64_t at;		/* where the batch's leaves go */
	uint64_t t0, tt;	/* where the bodies ended; where the next twigs go */
	bool led;		/* nt follows a twig's leaves (else it is where they start) */
	bool twigs_move;	/* the twigs are not in place: each moves */
	size_t batch, leaves;	/* nodes it made dirty since the last commit, leaves of them */
	struct r4_extent *own;	/* runs of leaves the walk placed, sorted */
	size_t nown, ocap;
	uint64_t *links;	/* ids of files with several names met, sorted */
	size_t nlinks, lcap;
	char *path;		/* the path of what the walk is at */
	size_t plen, pcap;
};

/* The walk stopped on o->stop (unwinds like an error, is none). */
#define STOPPED 1

/* ---- the walk ---- */

static int collect(void *ctx, const char *name, size_t len, const r4_key *sdkey)
{
	struct batch *b = ctx;
	struct ent *e = &b->v[b->n];

	if ((len == 1 && name[0] == '.') || (len == 2 && !memcmp(name, "..", 2)))
		return 0;
	if (b->n == BATCH)
		return 1;	/* the cursor stays before this one */
	if (!(e->name = r4_memdup(name, len)))
		return -ENOMEM;
	e->len = len;
	e->sdkey = *sdkey;
	b->n++;
	return 0;
}

static void batch_free(struct batch *b)
{
	for (size_t i = 0; i < b->n; i++)
		r4_free(b->v[i].name);
	b->n = 0;
}

/* The path one name further down (undone by setting ps->plen back). */
static int path_push(struct pass *ps, const char *name, size_t len)
{
	bool root = ps->plen == 1;	/* "/" has its slash */
	size_t at = ps->plen + !root;

	if (r4_grow(&ps->path, &ps->pcap, at + len + 1, 1, 256))
		return -ENOMEM;
	ps->path[at - 1] = '/';
	memcpy(ps->path + at, name, len);
	ps->path[at + len] = 0;
	ps->plen = at + len;
	return 0;
}

static int visit_file(struct pass *ps, const struct r4_inode *ino, bool last_try);
static int commit(struct pass *ps);
static int walk_dir(struct pass *ps, const struct r4_inode *dir);
static int dir_leaves(struct pass *ps, const struct r4_inode *dir);
static bool owned(const struct pass *ps, uint64_t blk);

/*
 * A regular file or a directory the walk meets (ino; its path in
 * ps->path): a directory walked, a file visited.  A file holding new data
 * not placed yet (a host's writer wrote it in the transaction the pass
 * shares) is visited once more after a commit places it.
 */
static int visit(struct pass *ps, struct r4_inode *ino)
{
	r4_key k = ino->sdkey;
	int rc;

	if (S_ISDIR(ino->sd.sd_mode))
		return walk_dir(ps, ino);
	if ((rc = visit_file(ps, ino, false)) != -EAGAIN)
		return rc;
	r4_obj_fini(ino);
	if ((rc = commit(ps)) || (rc = r4_obj_load(ps->db, &k, ino)))
		return rc == -ENOENT ? 0 : rc;
	return visit_file(ps, ino, true);
}

/*
 * Directory dir (its path in ps->path): its files, then its
 * subdirectories.  Before each entry the host may stop the pass, or let
 * others change the tree (o->commit): the cursor is a key, so the walk
 * goes on after a change as readdir does, and an entry gone meanwhile is
 * passed by.
 */
static int walk_dir(struct pass *ps, const struct r4_inode *dir)
{
	struct batch *b = r4_malloc(sizeof(*b));
	size_t plen = ps->plen;
	int rc = 0;

	if (!b)
		return -ENOMEM;
	b->n = 0;
	rc = dir_leaves(ps, dir);
	for (int subdirs = 0; subdirs < 2 && !rc; subdirs++) {
		struct r4_dirpos pos = {0};

		do {
			batch_free(b);
			if ((rc = r4_dir_iterate(ps->db, dir, &pos, collect, b)))
				break;
			for (size_t i = 0; i < b->n && !rc; i++) {
				struct r4_inode ino;

				if (ps->o->stop && ps->o->stop(ps->o->ctx)) {
					rc = STOPPED;
					break;
				}
				if ((rc = r4_obj_load(ps->db, &b->v[i].sdkey, &ino))) {
					rc = rc == -ENOENT ? 0 : rc;	/* removed meanwhile */
					continue;
				}
				if (S_ISDIR(ino.sd.sd_mode) == subdirs &&
				    (S_ISDIR(ino.sd.sd_mode) || S_ISREG(ino.sd.sd_mode)) &&
				    !(rc = path_push(ps, b->v[i].name, b->v[i].len)))
					rc = visit(ps, &ino);
				ps->plen = plen;
				ps->path[plen] = 0;
				r4_obj_fini(&ino);
			}
		} while (!rc && b->n == BATCH);
	}
	batch_free(b);
	r4_free(b);
	return rc;
}

/* ---- one file ---- */

/* Is oid met already?  (Remembers it.) */
static int seen_before(struct pass *ps, uint64_t oid, bool *seen)
{
	size_t lo = r4_lower_bound(ps->links, ps->nlinks, oid);

	if ((*seen = lo < ps->nlinks && ps->links[lo] == oid))
		return 0;
	if (r4_grow(&ps->links, &ps->lcap, ps->nlinks + 1, sizeof(*ps->links), 64))
		return -ENOMEM;
	memmove(ps->links + lo + 1, ps->links + lo, (ps->nlinks - lo) * sizeof(*ps->links));
	ps->links[lo] = oid;
	ps->nlinks++;
	return 0;
}

static int cmp_start(const void *a, const void *b)
{
	const struct r4_extent *x = a, *y = b;

	return x->ex_start < y->ex_start ? -1 : x->ex_start > y->ex_start;
}

/* The largest free runs, fewer than max of them, that hold n blocks (the
 * last one cut to what is left), in block order: how many, or 0. */
static size_t largest_runs(const struct r4_alloc *a, uint64_t n, size_t max, struct r4_extent *v)
{
	size_t k = 0, got = 0;
	uint64_t s, len, sum = 0;

	if (max < 2)
		return 0;
	/* the max - 1 longest, longest first */
	for (uint64_t from = 0; r4_alloc_next_run(a, from, &s, &len); from = s + len) {
		size_t i = k;

		if (k == max - 1) {
			if (len <= v[k - 1].ex_width)
				continue;
			i = k - 1;	/* in place of the shortest */
		} else {
			k++;
		}
		for (; i > 0 && v[i - 1].ex_width < len; i--)
			v[i] = v[i - 1];
		v[i] = (struct r4_extent){s, len};
	}
	while (got < k && sum < n) {
		v[got].ex_width = R4_MIN(v[got].ex_width, n - sum);
		sum += v[got++].ex_width;
	}
	if (sum < n)
		return 0;
	qsort(v, got, sizeof(*v), cmp_start);
	return got;
}

/* Where the file goes (f: its blocks, runs, first block): runs in *to
 * (room for f->runs), how many, or 0 when the free space has no room. */
static size_t choose(const struct pass *ps, const struct r4_repack_file *f, struct r4_extent *to)
{
	const struct r4_alloc *a = ps->db->alloc;
	uint64_t at;

	if (r4_alloc_first_fit(a, ps->t, f->blocks, &at) ||
	    (f->runs > 1 && r4_alloc_first_fit(a, 0, f->blocks, &at))) {
		to[0] = (struct r4_extent){at, f->blocks};
		return 1;
	}
	return f->runs > 1 ? largest_runs(a, f->blocks, f->runs, to) : 0;
}

/*
 * Compacting: is there a free run between t and the file (one run, at or
 * after t) that holds it?  Where what this transaction freed is a part of
 * the run at t (the previous file's old place, say), it is committed
 * first, so that the file can move there.
 */
static int room_before(struct pass *ps, const struct r4_repack_file *f, bool *room)
{
	const struct r4_alloc *a = ps->db->alloc;
	uint64_t at;
	int rc = 0;

	*room = false;
	if (!ps->o->compact)
		return 0;
	if (ps->since && r4_alloc_run_at(a, ps->t) < f->blocks && !ps->o->dry_run &&
	    (rc = commit(ps)))
		return rc;
	*room = r4_alloc_first_fit(a, ps->t, f->blocks, &at) && at < f->from;
	return 0;
}

/* Has a real pass moved its commit_bytes since its last commit? */
static bool commit_due(const struct pass *ps)
{
	uint64_t limit = ps->o->commit_bytes ? ps->o->commit_bytes : DEFAULT_COMMIT;

	return !ps->o->dry_run && ps->since * ps->db->bs >= limit;
}

/* Commit what the pass did (a transaction that changed nothing writes
 * nothing, and is not counted). */
static int commit(struct pass *ps)
{
	uint64_t before = ps->db->commits;
	int rc = !ps->db->in_txn ? 0 : ps->o->commit ? ps->o->commit(ps->o->ctx) : r4_commit(ps->db);

	ps->st->commits += ps->db->commits - before;
	ps->since = 0;
	return rc;
}

/* The part [off, off + n) of the runs to[0, nto) laid end to end, in
 * sub: how many runs. */
static size_t slice(const struct r4_extent *to, size_t nto, uint64_t off, uint64_t n,
		    struct r4_extent *sub)
{
	size_t k = 0;

	for (size_t i = 0; i < nto && n; i++) {
		uint64_t w;

		if (off >= to[i].ex_width) {
			off -= to[i].ex_width;
			continue;
		}
		w = R4_MIN(to[i].ex_width - off, n);
		sub[k++] = (struct r4_extent){to[i].ex_start + off, w};
		n -= w;
		off = 0;
	}
	return k;
}

/* Are the runs v[0, n) free in the working state? */
static bool still_free(const struct r4_alloc *a, const struct r4_extent *v, size_t n)
{
	uint64_t s, len;

	for (size_t i = 0; i < n; i++)
		if (!r4_alloc_next_run(a, v[i].ex_start, &s, &len) || s != v[i].ex_start ||
		    len < v[i].ex_width)
			return false;
	return true;
}

/* Can the transaction take n more blocks, the reserve kept? */
static bool room_for(struct r4_db *db, uint64_t n)
{
	return r4_alloc_avail(db->alloc) >= r4_txn_need(db) + n + r4_txn_reserve(db);
}

/*
 * A dry run's move of the file (f; its map[0, n)) to where it would go, in
 * the working bitmap only (what a real one grabs beyond the blocks, the
 * map stored again, is not counted): -ENOSPC when there is no room.
 */
static int dry_move(struct pass *ps, const struct r4_repack_file *f, const struct r4_extent *map,
		    size_t n, struct r4_extent *to, size_t *nto)
{
	struct r4_db *db = ps->db;

	if (!(*nto = choose(ps, f, to)) || !room_for(db, f->blocks))
		return -ENOSPC;
	for (size_t i = 0; i < *nto; i++)
		r4_alloc_mark_used(db->alloc, to[i].ex_start, to[i].ex_width);
	for (size_t i = 0; i < n; i++)
		if (map[i].ex_start > R4_EXTENT_UNALLOC)
			r4_alloc_free(db->alloc, map[i].ex_start, map[i].ex_width);
	return 0;
}

/*
 * Move the file (f) into one place chosen for all of it (to, room for
 * f->runs + 1 runs, and as many again after them: *nto runs), at most
 * PIECE blocks per operation of the pass's transaction (begun if none is
 * open), so that a host's other callers wait for one piece at most:
 * between pieces the host may let them in (o->stop; STOPPED when it says
 * so).  The place is chosen inside the first operation, after what
 * beginning it may allocate (the memory bound's early writes); when a
 * piece's part of it was taken meanwhile, the rest goes to the first run
 * after what moved that holds it (else the first anywhere).  Short of
 * room, a transaction that moved something is committed first (its old
 * blocks come back) and the piece tried once more.  Each piece looks at
 * the file afresh: one removed or changed meanwhile (its blocks not those
 * planned, new data) stays as it is now.  -ENOSPC: nothing moved for want
 * of room; *moved: the blocks moved.
 */
static int move(struct pass *ps, const struct r4_inode *ino, const struct r4_repack_file *f,
		struct r4_extent *to, size_t *nto, uint64_t *moved)
{
	struct r4_db *db = ps->db;
	struct r4_extent *sub = to + f->runs + 1;
	const struct r4_inode *cur = ino;
	struct r4_inode now;
	bool again = false;
	int rc = 0;

	*moved = 0;
	while (*moved < f->blocks) {
		uint64_t k = R4_MIN(f->blocks - *moved, ps->o->piece_blocks ? ps->o->piece_blocks
										 : (uint64_t)PIECE), at;
		struct r4_txn_op op;
		size_t nsub = 0;

		if ((!db->in_txn && (rc = r4_begin(db))) || (rc = r4_txn_op_begin(db, &op)))
			break;
		/* (room for the whole file first, beyond the reserve, so that
		 * one that cannot move whole is not left in more pieces) */
		if (!*moved && (!(*nto = choose(ps, f, to)) ||
				!room_for(db, f->blocks)))
			*nto = 0;
		if (*nto && !still_free(db->alloc, sub, nsub = slice(to, *nto, *moved, k, sub))) {
			at = to[*nto - 1].ex_start + to[*nto - 1].ex_width;
			*nto = slice(to, *nto, 0, *moved, sub);
			memcpy(to, sub, *nto * sizeof(*to));
			if (r4_alloc_first_fit(db->alloc, at, f->blocks - *moved, &at) ||
			    r4_alloc_first_fit(db->alloc, 0, f->blocks - *moved, &at))
				to[(*nto)++] = (struct r4_extent){at, f->blocks - *moved};
			nsub = slice(to, *nto, *moved, k, sub);
		}
		rc = r4_txn_op_end(db, &op, nsub ? r4_reg_move(db, cur, *moved, sub, nsub) : -ENOSPC);
		if (rc == -ENOSPC && !again && ps->since && !db->txn_err && !(rc = commit(ps))) {
			again = true;	/* once more, with the old blocks back */
			continue;
		}
		if (rc)
			break;
		again = false;
		*moved += k;
		ps->since += k;
		if (*moved == f->blocks)
			break;
		/* between pieces: the host's turn, then the file afresh */
		if ((commit_due(ps) && (rc = commit(ps))) ||
		    (ps->o->stop && ps->o->stop(ps->o->ctx) && (rc = STOPPED)))
			break;
		if (cur == &now)
			r4_obj_fini(&now);
		cur = &now;
		if ((rc = r4_obj_load(db, &ino->sdkey, &now)))
			break;
	}
	if (cur == &now)
		r4_obj_fini(&now);
	/* what moved stays moved: the file, changed or gone meanwhile, or
	 * short of room for the rest, stays as it is now */
	if (*moved && (rc == -ENOSPC || rc == -EINVAL || rc == -EAGAIN || rc == -ENOENT))
		rc = 0;
	return rc;
}

/* The allocated blocks of map[0, n) into f (blocks, runs, first block;
 * *end: past the last): whether it holds new data not placed yet. */
static bool runs_of(const struct r4_extent *map, size_t n, struct r4_repack_file *f,
		    uint64_t *end)
{
	bool pending = false;

	f->blocks = f->runs = 0;
	for (size_t i = 0; i < n; i++) {
		const struct r4_extent *u = &map[i];

		pending = pending || u->ex_start == R4_EXTENT_UNALLOC ||
			  (u->ex_start & R4_FAKE_DATA) == R4_FAKE_DATA;
		if (u->ex_start <= R4_EXTENT_UNALLOC)
			continue;
		if (!f->blocks)
			f->from = u->ex_start;
		f->runs += !f->blocks || u->ex_start != *end;
		f->blocks += u->ex_width;
		*end = u->ex_start + u->ex_width;
	}
	return pending;
}

/* A regular file the walk meets: in place, moved, or skipped, told to
 * o->file; a commit when enough was moved.  One with new data not placed
 * yet is -EAGAIN (a commit would place it), and on the last try busy. */
static int visit_file(struct pass *ps, const struct r4_inode *ino, bool last_try)
{
	struct r4_db *db = ps->db;
	struct r4_repack_stats *st = ps->st;
	struct r4_repack_file f = {.path = ps->path, .ino = r4_key_objectid(&ino->sdkey)};
	struct r4_extent *map = NULL, *to = NULL;
	uint64_t end = 0, moved = 0;
	size_t n = 0, nto = 0;
	bool seen = false, pending, stopped = false, room;
	int rc;

	if ((rc = r4_reg_map(db, ino, &map, &n)))
		return rc;
	if ((pending = runs_of(map, n, &f, &end)) && !last_try) {
		rc = -EAGAIN;
		goto out;
	}
	if (!f.blocks || (ino->sd.sd_nlink > 1 && ((rc = seen_before(ps, f.ino, &seen)) || seen)))
		goto out;	/* no blocks, or met under another name */
	st->files++;
	if (!ps->started) {
		ps->t = f.from;
		ps->started = true;
	}
	f.to = f.from;
	f.new_runs = f.runs;
	if (pending) {
		f.what = R4_REPACK_BUSY;
	} else if (f.runs == 1 && f.from >= ps->t && !(rc = room_before(ps, &f, &room)) && !room) {
		f.what = R4_REPACK_IN_PLACE;
	} else if (rc) {
		goto out;
	} else if (!(to = r4_malloc(2 * (f.runs + 1) * sizeof(*to)))) {
		rc = -ENOMEM;
		goto out;
	} else {
		rc = ps->o->dry_run ? dry_move(ps, &f, map, n, to, &nto)
				    : move(ps, ino, &f, to, &nto, &moved);
		stopped = rc == STOPPED;
		if (rc == -ENOSPC) {
			f.what = R4_REPACK_NO_ROOM;
			rc = 0;
		} else if (rc && !stopped) {
			goto out;
		} else {
			struct r4_repack_file now = f;

			f.what = R4_REPACK_MOVED;
			f.to = to[0].ex_start;
			f.new_runs = nto;
			end = to[nto - 1].ex_start + to[nto - 1].ex_width;
			/* a real move: where the file is now (moved in pieces,
			 * the host's callers may have changed it between) */
			r4_free(map);
			map = NULL;
			if (!ps->o->dry_run && !(rc = r4_reg_map(db, ino, &map, &n)) &&
			    (runs_of(map, n, &now, &end), now.blocks)) {
				f.to = now.from;
				f.new_runs = now.runs;
			}
			if (rc && rc != -ENOENT)	/* (removed meanwhile: where it went) */
				goto out;
			rc = stopped ? STOPPED : 0;
			st->blocks_moved += ps->o->dry_run ? f.blocks : moved;
			st->runs_before += f.runs;
			st->runs_after += f.new_runs;
		}
	}
	/* t follows the file where it is now (a file in one run with no room
	 * after t too: there is nowhere better for it) */
	if (f.what == R4_REPACK_MOVED || (f.new_runs == 1 && !pending))
		ps->t = end;
	st->in_place += f.what == R4_REPACK_IN_PLACE;
	st->moved += f.what == R4_REPACK_MOVED;
	st->no_room += f.what == R4_REPACK_NO_ROOM;
	st->busy += f.what == R4_REPACK_BUSY;
	if (ps->o->file)
		ps->o->file(ps->o->ctx, &f, st);
	if (!rc && commit_due(ps))
		rc = commit(ps);
out:
	r4_free(to);
	r4_free(map);
	return rc;
}

/* ---- the node phase ---- */

/*
 * After the bodies, over the whole volume: the twigs in key order, each
 * with its leaves but those the walk placed (dir_leaves).  The aim is the
 * twigs together in key order right after the bodies (twig_plan: all
 * move unless they lie so already, one whose leaves stay alone), and the
 * other leaves after them in key order in consecutive blocks, as far as
 * the free space allows.  nt is the block after the previous twig's last
 * leaf (where it is, or where its batch will put it; at first, past the
 * twigs' run after where the bodies ended, t0).  A twig is in place when its leaves lie in
 * consecutive blocks in key order, each packed against its neighbour,
 * and begin at nt, or elsewhere when the free run at nt cannot hold them
 * (nt is used, or the run is short: moving the twig would not make it
 * follow); the first twig, when they begin at or after t0 (or no run
 * from nt on holds them, as the batch's run is sought from there).  nt
 * then moves past its last leaf.  That is the rule a pass places by, so a
 * layout a pass made is in place for the next, wherever the free space
 * made it jump or wrap.
 *
 * Any other twig is moved by the commit's own rules: its leaves, it and
 * the nodes above it are made dirty, so the commit squeezes the leaves
 * and twigs into their dirty neighbours (under db->place_hint the leaves
 * once more after the twigs) and relocates every one of them (a dirty
 * node under a dirty parent moves); under db->place_hint r4_tree_place
 * puts the leaves in one run at db->place_at, in key order, and the twigs
 * in the run at db->place_twig: the twigs the phase moves go together,
 * in key order, right before the leaves (room for as many as the tree
 * has), so measurefs' order (each node's pointers, then its children)
 * finds all of them in sequence.  A batch of twigs is one run: its first
 * twig's leaves go to the first free run at nt that holds them (else from
 * the start of the volume); a twig joins the batch while that run holds
 * it too, else the batch is committed first.  A transaction moves about
 * NODE_BATCH nodes; it grabs what its dirty nodes can take, as any
 * operation does, before it makes one dirty.  The phase goes round again
 * while a round moved something (at most NODE_ROUNDS), so what a round's
 * commits freed is there for the twigs that belong in it.
 */
enum { NODE_BATCH = 256, NODE_ROUNDS = 8 };

/* Commit what the node phase made dirty, its leaves placed at ps->at. */
static int node_commit(struct pass *ps)
{
	struct r4_db *db = ps->db;
	int rc = 0;

	if (ps->o->dry_run) {
		r4_alloc_mark_used(db->alloc, ps->at, ps->leaves);
	} else {
		db->place_hint = true;
		db->place_at = ps->at;
		db->place_twig = ps->tt;
		rc = commit(ps);
		db->place_hint = false;
		ps->tt = db->place_twig;
	}
	if (ps->leaves)
		ps->nt = ps->o->dry_run || db->place_at == ps->at ? ps->at + ps->leaves
								  : db->place_at;	/* (squeezed: fewer) */
	ps->batch = ps->leaves = 0;
	return rc;
}

/* Make twig's leaves, it and the path above it dirty, after a grab for
 * them: -ENOSPC when there is no room (nothing changes). */
static int dirty_twig(struct pass *ps, struct r4_path *p, const uint64_t *leaf, size_t n)
{
	struct r4_db *db = ps->db;
	struct r4_txn_op op;
	int rc;

	if ((!db->in_txn && (rc = r4_begin(db))) || (rc = r4_txn_op_begin(db, &op)))
		return rc;
	/* a block each for its place, and its share of the journal's records */
	rc = r4_txn_grab(db, 2 * (n + db->height), false);
	for (size_t i = 0; i < n && !rc; i++) {
		r4_node *x;

		if (!(rc = r4_node_get(db, leaf[i], R4_LEVEL_LEAF, &x))) {
			r4_node_dirty(db, x);
			r4_node_put(db, x);
		}
	}
	for (unsigned l = R4_LEVEL_TWIG; l <= db->height && !rc; l++)
		r4_node_dirty(db, p->lv[l].node);
	return r4_txn_op_end(db, &op, rc);
}

/* Is leaf a packed against b, its right neighbour under the same twig, as
 * the commit's squeeze leaves them (r4_tree_leaf_packed)? */
static int packed(struct r4_db *db, uint64_t a, uint64_t b, bool *yes)
{
	r4_node *x, *y;
	int rc;

	if ((rc = r4_node_get(db, a, R4_LEVEL_LEAF, &x)))
		return rc;
	if (!(rc = r4_node_get(db, b, R4_LEVEL_LEAF, &y))) {
		*yes = r4_tree_leaf_packed(db, x, y);
		r4_node_put(db, y);
	}
	r4_node_put(db, x);
	return rc;
}

/* The twig at p's leaves into leaf (grown as *cap), *n of them; *in_place:
 * consecutive in key order, packed, and at nt or with no room there. */
static int twig_leaves(struct pass *ps, const struct r4_path *p, uint64_t **leaf, size_t *cap,
		       size_t *n, bool *in_place)
{
	struct r4_db *db = ps->db;
	const r4_node *t = p->lv[R4_LEVEL_TWIG].node;
	unsigned nr = r4_node_nr(t->data);
	uint64_t at;
	int rc = 0;

	*n = 0;
	*in_place = true;
	for (unsigned i = 0, prev = UINT_MAX; i < nr && !rc; i++) {
		if (r4_node_item_pid(t->data, db->bs, i) != R4_IPID_NODEPTR)
			continue;
		uint64_t blk = r4_le64_get(t->data + r4_node_item_off(t->data, db->bs, i));

		if (owned(ps, blk))
			continue;	/* (placed by the walk) */
		if (r4_grow(leaf, cap, *n + 1, sizeof(**leaf), 64))
			return -ENOMEM;
		uint64_t *l = *leaf + *n;

		l[0] = blk;
		*in_place = *in_place && (!*n || l[0] == l[-1] + 1);
		/* (leaves with an extent between are no neighbours) */
		if (*in_place && *n && prev + 1 == i)
			rc = packed(db, l[-1], l[0], in_place);
		prev = i;
		++*n;
	}
	if (rc || !*in_place || !*n)
		return rc;
	/* the first: at or after where the bodies ended, or no run from nt on
	 * (past the twigs' room, where its batch would go) holds them */
	if (!ps->led && !ps->o->compact)
		*in_place = (*leaf)[0] >= ps->t0 || !r4_alloc_first_fit(db->alloc, ps->nt, *n, &at);
	else if ((*leaf)[0] != ps->nt)
		*in_place = r4_alloc_run_at(db->alloc, ps->nt) < *n;
	return 0;
}

/* The twig whose keys hold *k, into p; *k becomes the next twig's first
 * key (the next pointer of the lowest level above that has one), *more
 * says whether there is one. */
static int twig_at(struct r4_db *db, r4_key *k, struct r4_path *p, bool *more)
{
	int rc;

	if ((rc = r4_tree_lookup(db, k, R4_LEVEL_TWIG, p)))
		return rc;
	*more = false;
	for (unsigned l = R4_LEVEL_TWIG + 1; l <= db->height && !*more; l++) {
		const r4_node *up = p->lv[l].node;
		unsigned pos = (unsigned)p->lv[l].pos;

		if ((*more = pos + 1 < (unsigned)r4_node_nr(up->data)))
			r4_node_key(up->data, db->bs, pos + 1, k);
	}
	return 0;
}

/* ---- a directory's leaves ---- */

/*
 * Before a directory's files, once the pass's target is set: the
 * directory's leaves, those whose first item is of its locality (its
 * object id: its entries, its children's stat data and tails; the root's
 * also the one its own stat data begins), in key order.
 * They are in place when they lie in consecutive blocks in key order,
 * each packed against its neighbour under the same twig, at or after t,
 * and end right before the body of the directory's first file with data
 * blocks (plain passes) or have no free run between t and them that
 * holds them.  Else they move: right before that body when the file is
 * in one run (a plain pass leaves it where it is) and the blocks before
 * it are free, else to the first free run at or after t that holds them
 * all; with none, they stay, left to the node phase.  Moved: what the
 * pass did before is committed, then the leaves, their twigs and the
 * nodes above are made dirty and committed at once under db->place_hint,
 * the leaves at their place (the twigs from the top: place_twig 0 is a
 * used block; the node phase moves them).  t moves past them, and the run
 * is remembered (own) so that the node phase leaves it alone.
 */
struct dleaf {
	uint64_t blk;
	r4_key dk;	/* its key in its twig, to find it again */
};

/* Is blk in a run of leaves the walk placed? */
static bool owned(const struct pass *ps, uint64_t blk)
{
	size_t lo = 0, hi = ps->nown;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (ps->own[mid].ex_start <= blk)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo && blk < ps->own[lo - 1].ex_start + ps->own[lo - 1].ex_width;
}

/* Remember n leaves from s on as placed by the walk. */
static int own(struct pass *ps, uint64_t s, uint64_t n)
{
	size_t i = ps->nown;

	if (!n)
		return 0;
	if (r4_grow(&ps->own, &ps->ocap, ps->nown + 1, sizeof(*ps->own), 64))
		return -ENOMEM;
	for (; i > 0 && ps->own[i - 1].ex_start > s; i--)
		ps->own[i] = ps->own[i - 1];
	ps->own[i] = (struct r4_extent){s, n};
	ps->nown++;
	return 0;
}

/* Directory oid's leaves into *v (grown as *cap), *n of them under
 * *twigs twigs; *in_place: consecutive in key order, packed. */
static int find_leaves(struct pass *ps, uint64_t oid, struct dleaf **v, size_t *cap, size_t *n,
		       size_t *twigs, bool *in_place)
{
	struct r4_db *db = ps->db;
	bool more = true, done = false;
	r4_key k;
	int rc = 0;

	*n = *twigs = 0;
	*in_place = true;
	r4_key_set(&k, oid, R4_KEY_NAME, 0, 0, 0);
	for (bool first = true; more && !done && !rc; first = false) {
		struct r4_path p;
		size_t n0 = *n;

		if ((rc = twig_at(db, &k, &p, &more)))
			break;
		const r4_node *t = p.lv[R4_LEVEL_TWIG].node;
		unsigned nr = r4_node_nr(t->data), prev = UINT_MAX;

		for (unsigned i = first ? (unsigned)R4_MAX(p.lv[R4_LEVEL_TWIG].pos, 0) : 0;
		     i < nr && !done && !rc; i++) {
			r4_key dk, f;
			r4_node *x;
			unsigned m;

			r4_node_key(t->data, db->bs, i, &dk);
			if ((done = r4_key_locality(&dk) > oid) ||
			    r4_node_item_pid(t->data, db->bs, i) != R4_IPID_NODEPTR)
				continue;
			uint64_t blk = r4_le64_get(t->data + r4_node_item_off(t->data, db->bs, i));

			if (owned(ps, blk) || (rc = r4_node_get(db, blk, R4_LEVEL_LEAF, &x)))
				continue;
			if ((m = r4_node_nr(x->data)))
				r4_node_key(x->data, db->bs, 0, &f);
			r4_node_put(db, x);
			/* (a leaf is its first item's directory's; the root's
			 * stat data, below it, the root's) */
			if (!m || R4_MAX(r4_key_locality(&f), R4_ROOT_OID) != oid)
				continue;
			if (r4_grow(v, cap, *n + 1, sizeof(**v), 64)) {
				rc = -ENOMEM;
				break;
			}
			(*v)[*n] = (struct dleaf){blk, dk};
			*in_place = *in_place && (!*n || blk == (*v)[*n - 1].blk + 1);
			/* (leaves with an extent between are no neighbours) */
			if (*in_place && *n > n0 && prev + 1 == i)
				rc = packed(db, (*v)[*n - 1].blk, blk, in_place);
			prev = i;
			++*n;
		}
		*twigs += *n > n0;
		r4_path_release(db, &p);
	}
	return rc;
}

/* Make the leaves v[0, n) (under twigs twigs), their twigs and the nodes
 * above dirty, after a grab for them: -ENOSPC when there is no room. */
static int dirty_leaves(struct pass *ps, const struct dleaf *v, size_t n, size_t twigs)
{
	struct r4_db *db = ps->db;
	struct r4_txn_op op;
	int rc;

	if ((!db->in_txn && (rc = r4_begin(db))) || (rc = r4_txn_op_begin(db, &op)))
		return rc;
	rc = r4_txn_grab(db, 2 * (n + twigs * db->height), false);
	for (size_t i = 0; i < n && !rc; i++) {
		struct r4_path p;
		r4_node *x;

		if ((rc = r4_tree_lookup(db, &v[i].dk, R4_LEVEL_TWIG, &p)))
			break;
		if (!(rc = r4_node_get(db, v[i].blk, R4_LEVEL_LEAF, &x))) {
			r4_node_dirty(db, x);
			r4_node_put(db, x);
		}
		for (unsigned l = R4_LEVEL_TWIG; l <= db->height && !rc; l++)
			r4_node_dirty(db, p.lv[l].node);
		r4_path_release(db, &p);
	}
	return r4_txn_op_end(db, &op, rc);
}

/* The first file of dir in walk order with data blocks: where its body
 * begins (*blk, 0 when none), and whether it is in one run. */
static int first_body(struct pass *ps, const struct r4_inode *dir, uint64_t *blk, bool *one)
{
	struct batch *b = r4_malloc(sizeof(*b));
	struct r4_dirpos pos = {0};
	int rc = 0;

	*blk = 0;
	if (!b)
		return -ENOMEM;
	b->n = 0;
	do {
		batch_free(b);
		if ((rc = r4_dir_iterate(ps->db, dir, &pos, collect, b)))
			break;
		for (size_t i = 0; i < b->n && !*blk && !rc; i++) {
			struct r4_repack_file f = {0};
			struct r4_extent *map = NULL;
			struct r4_inode ino;
			uint64_t end;
			size_t n = 0;

			if ((rc = r4_obj_load(ps->db, &b->v[i].sdkey, &ino))) {
				rc = rc == -ENOENT ? 0 : rc;
				continue;
			}
			if (S_ISREG(ino.sd.sd_mode) && !(rc = r4_reg_map(ps->db, &ino, &map, &n)) &&
			    !runs_of(map, n, &f, &end) && f.blocks) {
				*blk = f.from;
				*one = f.runs == 1;
			}
			r4_free(map);
			r4_obj_fini(&ino);
		}
	} while (!rc && !*blk && b->n == BATCH);
	batch_free(b);
	r4_free(b);
	return rc;
}

static int dir_leaves(struct pass *ps, const struct r4_inode *dir)
{
	struct r4_db *db = ps->db;
	const struct r4_alloc *a = db->alloc;
	struct dleaf *v = NULL;
	size_t cap = 0, n, twigs;
	uint64_t at, body = 0;
	bool in_place, one = false;
	int rc = 0;

	if (!ps->started || db->height < R4_LEVEL_TWIG ||
	    (rc = find_leaves(ps, r4_key_objectid(&dir->sdkey), &v, &cap, &n, &twigs,
			      &in_place)) || !n ||
	    (!ps->o->compact && (rc = first_body(ps, dir, &body, &one))))
		goto out;
	if (in_place && v[0].blk >= ps->t &&
	    ((!ps->o->compact && v[n - 1].blk + 1 == body) ||
	     !(r4_alloc_first_fit(a, ps->t, n, &at) && at < v[0].blk))) {
		at = v[0].blk;
		goto placed;
	}
	/* (what the pass did before committed first: its old blocks come
	 * back, and its nodes are not placed as these are; the leaves are then
	 * found again: a commit gives nodes new since it, a host's too, their
	 * blocks, and may squeeze them) */
	if (!ps->o->dry_run && db->in_txn && db->cache.ndirty &&
	    ((rc = commit(ps)) || (rc = find_leaves(ps, r4_key_objectid(&dir->sdkey), &v, &cap, &n,
						     &twigs, &in_place)) || !n))
		goto out;
	/* right before the first body when it stays where it is (plain: in
	 * one run after t), else the first free run at t that holds them */
	if (one && body >= ps->t + n && r4_alloc_run_at(a, body - n) >= n)
		at = body - n;
	else if (!r4_alloc_first_fit(a, ps->t, n, &at))
		goto out;	/* no room: the node phase's */
	if (ps->o->dry_run) {
		ps->st->nodes_moved += n + twigs;
		r4_alloc_mark_used(db->alloc, at, n);
		goto placed;
	}
	if ((rc = dirty_leaves(ps, v, n, twigs))) {
		if (rc == -ENOSPC) {
			ps->st->nodes_no_room += n + twigs;
			rc = 0;
		}
		goto out;
	}
	ps->st->nodes_moved += n + twigs;
	db->place_hint = true;
	db->place_at = at;
	db->place_twig = 0;
	rc = commit(ps);
	db->place_hint = false;
	if (rc)
		goto out;
	n = db->place_at - at;	/* (squeezed: fewer) */
placed:
	if (!(rc = own(ps, at, n)))
		ps->t = at + n;
out:
	r4_free(v);
	return rc;
}

/* One round of the node phase over the twigs in key order, from nt. */
static int node_round(struct pass *ps, uint64_t **leaf, size_t *cap)
{
	struct r4_db *db = ps->db;
	struct r4_repack_stats *st = ps->st;
	bool more = true;
	r4_key k, here;
	int rc = 0;

	memset(&k, 0, sizeof(k));
	ps->led = false;
	while (more && !rc) {
		struct r4_path p;
		size_t n = 0;
		bool in_place = true;

		/* (a host lets its callers in only with no batch dirty: their
		 * commits would place its nodes without the pass's hint) */
		if (!ps->batch && ps->o->stop && ps->o->stop(ps->o->ctx)) {
			rc = STOPPED;
			break;
		}
		here = k;
		if ((rc = twig_at(db, &k, &p, &more)))
			break;
		rc = twig_leaves(ps, &p, leaf, cap, &n, &in_place);
		/* (leaves in place under a twig that moves: the twig alone) */
		bool alone = in_place && ps->twigs_move;

		if (rc || (in_place && !alone)) {
			if (n) {
				ps->nt = (*leaf)[n - 1] + 1;
				ps->led = true;
			}
			r4_path_release(db, &p);
			continue;
		}
		/* the batch first, when it is full, or its run cannot hold this
		 * twig too, or the grab for it is refused (what the batch moved
		 * comes back at its commit); then this twig again */
		bool full = ps->batch && (ps->batch >= NODE_BATCH ||
					  (!alone && ps->leaves &&
					   r4_alloc_run_at(db->alloc, ps->at) < ps->leaves + n));

		rc = full || ps->o->dry_run ? 0 : dirty_twig(ps, &p, *leaf, alone ? 0 : n);
		r4_path_release(db, &p);
		if (full || (rc == -ENOSPC && ps->batch)) {
			rc = node_commit(ps);
			k = here;
			more = true;
			continue;
		}
		if (rc == -ENOSPC || (!rc && alone)) {
			st->nodes_no_room += rc ? (alone ? 0 : n) + 1 : 0;
			st->nodes_moved += !rc;
			ps->batch += !rc;
			if (n) {
				ps->nt = (*leaf)[n - 1] + 1;
				ps->led = true;
			}
			rc = 0;
			continue;
		}
		if (rc)
			break;
		/* the batch's run: the first at nt that holds the twig's leaves,
		 * else the first from the start */
		if (!ps->leaves && !r4_alloc_first_fit(db->alloc, ps->nt, n, &ps->at) &&
		    !r4_alloc_first_fit(db->alloc, 0, n, &ps->at))
			ps->at = ps->nt;	/* none: the commit's own rule */
		st->nodes_moved += n + 1;
		ps->batch += n + 1;
		ps->leaves += n;
		ps->nt = ps->at + ps->leaves;
		ps->led = true;
	}
	if ((!rc || rc == STOPPED) && ps->batch) {
		int c = node_commit(ps);

		rc = c ? c : rc;
	}
	return rc;
}

/*
 * Where the twigs go (ps->tt) and whether they move (ps->twigs_move): they
 * are in place when they lie in key order in consecutive blocks at or
 * after where the bodies ended (compacting: with no free run between that
 * holds them); else they move to the first free run there that holds them
 * all.  *twigs: how many there are.
 */
static int twig_plan(struct pass *ps, uint64_t *twigs)
{
	struct r4_db *db = ps->db;
	uint64_t first = 0, at;
	bool more = true, placed = true;
	r4_key k;
	int rc = 0;

	memset(&k, 0, sizeof(k));
	*twigs = 0;
	while (more && !rc) {
		struct r4_path p;

		if (!(rc = twig_at(db, &k, &p, &more))) {
			uint64_t blk = p.lv[R4_LEVEL_TWIG].node->blk;

			first = *twigs ? first : blk;
			placed = placed && blk == first + *twigs;
			++*twigs;
			r4_path_release(db, &p);
		}
	}
	placed = placed && first >= ps->t0 &&
		 !(ps->o->compact && r4_alloc_first_fit(db->alloc, ps->t0, *twigs, &at) && at < first);
	ps->twigs_move = !placed;
	if (placed)
		ps->tt = first;
	else if (!r4_alloc_first_fit(db->alloc, ps->t0, *twigs, &ps->tt))
		ps->tt = ps->t0;
	return rc;
}

static int node_phase(struct pass *ps)
{
	uint64_t *leaf = NULL, twigs, moved;
	size_t cap = 0;
	int rc = 0;

	/* from where the bodies ended: the twigs, then the leaves the walk
	 * did not place */
	ps->t0 = ps->started ? ps->t : 0;
	/* rounds, until one moves nothing: what a round frees (the places its
	 * twigs left) may be where a later twig belongs */
	for (unsigned round = 0; round < NODE_ROUNDS && !rc; round++) {
		if ((rc = twig_plan(ps, &twigs)))
			break;
		moved = ps->st->nodes_moved;
		ps->st->nodes_no_room = 0;	/* (what the last round left) */
		ps->nt = ps->tt + twigs;
		rc = node_round(ps, &leaf, &cap);
		if (ps->o->dry_run || ps->st->nodes_moved == moved)
			break;
	}
	r4_free(leaf);
	return rc;
}

/* ---- a pass ---- */

int r4_repack(r4_db *db, const char *path, const struct r4_repack_opts *o,
	      struct r4_repack_stats *out)
{
	struct pass ps = {.db = db, .o = o, .st = out};
	struct r4_inode top;
	bool whole;
	int rc;

	memset(out, 0, sizeof(*out));
	if (!db->rw && !o->dry_run)
		return -EROFS;
	if (o->commit ? o->dry_run : db->in_txn)
		return o->commit ? -EINVAL : -EBUSY;
	if ((rc = r4_fs_resolve(db, path, &top)))
		return r4_db_seen(db, rc);
	/* the path as given, without trailing slashes */
	ps.plen = 1;
	if (!(rc = path_push(&ps, path + 1, strlen(path + 1)))) {
		while (ps.plen > 1 && ps.path[ps.plen - 1] == '/')
			ps.path[--ps.plen] = 0;
		/* (any spelling of the root: "/", "/.", "/a/..") */
		whole = r4_key_objectid(&top.sdkey) == R4_ROOT_OID;
		ps.started = o->compact && whole;	/* t from block 0 */
		rc = S_ISDIR(top.sd.sd_mode) || S_ISREG(top.sd.sd_mode) ? visit(&ps, &top) : 0;
		/* the nodes, for the whole volume */
		if (!rc && whole && !(rc = o->dry_run ? 0 : commit(&ps)))
			rc = node_phase(&ps);
	}
	r4_obj_fini(&top);
	if (rc == STOPPED) {
		out->stopped = true;
		rc = 0;
	}
	if (o->dry_run)
		r4_alloc_abort(db->alloc);	/* the marks of the choices made */
	else if (!rc)
		rc = commit(&ps);
	if (rc && db->in_txn && !o->commit)
		r4_abort(db);
	r4_free(ps.links);
	r4_free(ps.own);
	r4_free(ps.path);
	return r4_db_seen(db, rc);
}
