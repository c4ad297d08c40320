/*
 * db.h - the open image: geometry, super block state, allocator, node
 * cache, the root directory's plugin set and the running transaction.
 *
 * One struct r4_db per open image (r4_open).  Engine modules reach it
 * through this header; programs see only the opaque r4_db of r4.h.
 */
#ifndef R4_DB_H
#define R4_DB_H

#include "r4_int.h"
#include "cache.h"
#include "format.h"
#include "node.h"
#include "jnl.h"
#include "txn.h"

struct r4_io;
struct r4_alloc;

/* The plugin choices that govern new objects (from the root's pset). */
struct r4_pset_defaults {
	unsigned hash, fibration, formatting, create, perm, sd, diritem;
	unsigned compress, compress_mode, cluster;
};

/* An object that r4_file handles hold open (fs.c). */
struct r4_held {
	r4_key sdkey;
	unsigned refs;
	bool orphaned;		/* lost its last name while held (an abort may have
				   given it back: the last close looks) */
	uint64_t changed;	/* the last transaction a handle changed it in (txn_seq) */
	uint64_t lost;		/* transactions aborted after such a change (r4_file_error) */
	r4_key way_dir;		/* the directory and name it was last looked up, made, */
	char *way_name;		/* linked or renamed as (NULL: none yet), for its audit */
	size_t way_len;		/* records' PATH (fs.c) */
	bool removed;		/* a directory removed while held: its stat then, */
	struct r4_stat last;	/* nlink 0, is what its handles stat (fs.c) */
	struct r4_held *next;
};

/* A path and the object it leads to, good while nothing changed since
 * (gen) in the same transaction (ns.c r4_path_memo_*). */
struct r4_path_memo {
	char *path;
	size_t cap;
	r4_key key;
	uint64_t gen, txn_seq;
};

/* tree.c: a lookup's path, kept for the next lookup of its region: where
 * that one starts its search at each level, and, while it still holds,
 * its way to the leaf without a descent (near_path) */
struct r4_near {
	r4_node *node[R4_MAX_HEIGHT + 2];	/* kept without references */
	uint64_t gen[R4_MAX_HEIGHT + 2];	/* node[l]->gen then */
	int pos[R4_MAX_HEIGHT + 2];
	uint64_t freed;		/* cache.moves + cache.evicted then */
	unsigned height;	/* 0: no path kept, only positions */
};

struct r4_db {
	struct r4_io *io;
	struct r4_logger lg;
	bool rw;
	bool seconds_only;	/* r4_open_opts.seconds_only */
	bool repair, ignore_journal;	/* r4_open_opts, for checkers */
	bool broken;		/* a commit failed half-way: no more writes until reopened */
	uint64_t damaged;	/* status block's state (0 = consistent) */

	uint32_t bs;		/* block size */
	unsigned node_pid;	/* node40 or node41 */
	uint32_t mkfs_id;
	uint64_t block_count;
	uint64_t root;		/* root block (may be fake inside a txn) */
	unsigned height;
	uint64_t next_oid;
	uint64_t file_count;
	uint64_t flags;		/* format40 flags (bit 0 large keys) */
	uint32_t version;
	unsigned policy;	/* format40 tail policy field */
	uint8_t uuid[16];
	char label[17];

	struct r4_fsb sb;	/* format super block as last read or written */
	struct r4_pset_defaults pset;
	struct r4_alloc *alloc;
	struct r4_cache cache;

	/* dirty data pages of extent files, by block number (reg.c) */
	struct r4_page **pages;
	size_t npage_buckets, npages;
	struct r4_page *page_pool;	/* freed pages kept for reuse (reg.c) */
	size_t npool;
	/* delayed allocation: new data blocks carry fake numbers from here
	 * until commit places them; the files that got some (by stat-data key) */
	uint64_t next_fake_data;
	uint64_t fake_data;	/* fake data blocks alive: free space they will take */
	uint64_t fake_units;	/* at least the extent units holding them (txn.c) */
	uint64_t spilled;	/* pages written out early (memory bound), ever */
	uint64_t flushed_early;	/* nodes written out early (memory bound), ever */
	r4_key *fake_files;
	size_t nfake_files, fake_files_cap;

	/* journal */
	uint64_t last_tx;	/* tx head of the newest committed transaction, 0 = none */
	uint64_t footer_tx;	/* the tx head the footer on disk names */
	struct r4_jwin jwin;	/* committed, not yet played or footer not yet written */
	uint8_t *jnl_batch;	/* jnl.c's buffer for runs of contiguous blocks */
	struct r4_jcounters jcnt;	/* the footer's (or newest replayed tx head's) counters */
	bool have_jcnt;
	unsigned replayed;	/* transactions recovery finished at open */

	uint64_t gen;		/* bumped by every change: tells a refusal from a failure */
	/* fs.c: the object the last r4_fs_make-like call made, for the call
	 * by that path that follows (a write of the new file); ns.c: the
	 * directory where the last walk found its last name missing, for the
	 * make of that name that follows (r4_ns_walked) */
	struct r4_path_memo made, walked;
	struct r4_obj_memo *memo;	/* obj.c: objects and names looked up last */
	/* tree.c: changes of items, counted per object in buckets shared by
	 * objects (a directory's entries count as the directory's), and of the
	 * root's stat data (every object's plugins fall back on it): how
	 * obj.c's memo tells that what it keeps still holds (r4_tree_changes) */
	uint64_t changed[4096];
	uint64_t changed_root;
	/* tree.c: the path the last lookup of a key of each region took; a
	 * region is the keys of one locality and type (a directory's entries,
	 * its children's stat data, their bodies), regions sharing a row */
	struct r4_near near[2048];

	/* transaction (txn.c) */
	const struct r4_txn_hooks *hooks;	/* the file layer's, from open */
	bool in_txn;
	uint64_t txn_seq;	/* transactions begun since open: the running one's number */
	uint64_t commits;	/* transactions that changed the volume, since open */
	int txn_err;		/* sticky: first failure after a change */
	uint64_t bfree_planned;	/* r4_statfs's bfree when a failed commit began planning */
	uint64_t saved_root, saved_file_count;	/* (next_oid never goes back: an id a host
						   has seen is not given to another object) */
	unsigned saved_height;
	int64_t clock_override;	/* tests: fixed time when >= 0 */
	bool clock_pinned;	/* one time for a whole R4L unit (r4_clock_pin) */
	struct timespec clock_pin;

	/* space (txn.c, r4_txn_*): what the running operation grabbed */
	struct {
		unsigned depth;		/* operations open (fs.c's calls nest a few) */
		uint64_t need0;		/* r4_txn_need when the outermost one began */
		uint64_t grabbed;	/* blocks it grabbed */
		uint64_t gen;		/* db->gen then: every grab comes before a change */
	} op;
	size_t npages_real;	/* pending pages of real blocks, not fake ones (reg.c) */
	/* the repacker's node phase (repack.c): when set, r4_tree_place puts a
	 * commit's new and moved leaves in the first free run at or after
	 * place_at that holds them all, its twigs in the free run right at
	 * place_twig when it holds them, and moves each past them */
	bool place_hint;
	uint64_t place_at, place_twig;

	struct r4_held *held;	/* objects r4_file handles hold (fs.c) */
	struct r4_actor {	/* who the handle calls act for (r4_act_as, perm.c) */
		bool set, check;	/* !set: trusted */
		struct r4_ident who;	/* (who.groups: groups, or more) */
		uint32_t groups[64];
		uint32_t *more;		/* a longer list, on the heap */
	} actor;
	bool meta_known, meta_present;	/* is there a "..r4" directory (meta.c)? */
	bool acl_known;		/* the objects with POSIX ACLs, by id (acl.c) */
	struct r4_acl_obj {
		uint64_t oid;
		unsigned kinds;	/* R4_ACL_HAS_* */
	} *acl;
	size_t nacl, acl_cap;
};

/*
 * A structure error (-EUCLEAN, -EBADMSG) met by a read-write handle: mark
 * the volume damaged in its status block (once), poison the transaction
 * and stop writing, so the next read-write open is refused until fsck.
 * Returns rc, so callers can `return r4_db_seen(db, rc);`.
 */
int r4_db_seen(struct r4_db *db, int rc);

#endif
