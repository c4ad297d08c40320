/*
 * bridge.h - what the files of r4fuse share (the program exports nothing
 * beyond fuse_bridge_main, which cli/r4.c calls).  A group a file, each
 * with its prefix:
 *   r4fuse.c   br_     the session: options, the image, the mount, the
 *                      group of calls and its committer, who calls and the
 *                      one mutex, the log
 *   node.c     node_   the node table: the kernel's inode ids and the
 *                      engine's handles, lookup counts, forget; the
 *                      kernel's caches after changes it did not make
 *   ops.c      fb_     the POSIX operations (fb_<op>), fb_err, the ops table
 *   special.c  sp_     the special files: pseudo files, the control file,
 *                      the meta view, xattrs (stored: the engine's)
 *   repack.c   rp_     the repacker on the mount: a pass run by a thread
 *                      of its own, asked through the control file
 * Everything below runs under B.mu unless it says otherwise.
 */
#ifndef R4_FUSE_BRIDGE_H
#define R4_FUSE_BRIDGE_H

#define FUSE_USE_VERSION 31

#include <fuse_lowlevel.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "r4.h"

#define CONTROL "..reiser4"	/* in the root */
#define META "..meta"		/* in the root */

enum kind {
	K_OBJ,			/* an object of the tree */
	K_PSEUDO,		/* a pseudo file of its parent node (..mode) */
	K_CONTROL,		/* /..reiser4 */
	K_META,			/* an object seen through /..meta, as a directory */
};

/* What the kernel knows by a node id. */
struct node {
	fuse_ino_t id;
	enum kind kind;
	uint64_t nlookup;		/* the kernel's references: lookups less forgets */
	unsigned refs;			/* nlookup > 0, child nodes, open handles */
	unsigned opens;			/* open handles */
	r4_file *obj;			/* K_OBJ: weak (the root's: strong) */
	struct node *parent;		/* the directory it was last found in (K_OBJ), its
					   owner (K_PSEUDO), the view's parent (K_META) */
	char *name;			/* its name there (NULL: not known yet, node_dot) */
	bool direct_written;		/* written through an O_DIRECT descriptor: no
					   cached pages kept across opens (ops.c) */
	struct node *next;		/* in the table's chain */
};

/* The one bridge of the process (r4fuse.c). */
struct bridge {
	r4_db *db;
	char *image;
	char *mountpoint;		/* where it is mounted (realpath), or NULL */
	struct fuse_session *se;
	pthread_mutex_t mu;
	pthread_cond_t wake;
	pthread_t committer;
	bool stop, sync, ro, debug, started;
	bool errors_continue;		/* -o errors=continue: a dropped group leaves it writable */
	struct handle *handles;		/* open files, for what a dropped group lost */
	bool kernel_perms;		/* -o default_permissions: the kernel checks */
	bool list_xattrs;		/* -o list_pseudo_xattrs: listxattr names them */
	unsigned commit_secs;
	/* Group commit (r4fuse.c, br_durable): changes counts the changes
	 * made (bumped under the mutex, read without it: atomic), durable how
	 * many of them the last successful commit covered; leading: an fsync
	 * is gathering or committing, the others wait for committed; joined:
	 * one more of them waits (the leader looks again); pid: who holds the
	 * mutex (br_lock_as; 0: nobody known). */
	uint64_t changes, durable;
	bool leading;
	pthread_cond_t committed, joined;
	uint64_t commit_ns;		/* how long the last commit took */
	pid_t pid;
	double entry_timeout, attr_timeout;
	struct node **tab;		/* nodes by id */
	size_t ntab, nnodes;
	struct node *root;
};

extern struct bridge B;

/* The calling process as the engine's identity; g holds its groups. */
struct caller {
	struct r4_ident who;
	uint32_t g[64];
	pid_t pid;			/* the calling thread (fuse_req_ctx) */
};

/* What fi->fh holds for every open file and directory. */
struct handle {
	struct node *n;
	r4_file *file;			/* a regular file or directory, held: unlink (to
					   its last close) does not remove it */
	bool append;			/* O_APPEND: each write goes to the end */
	bool direct;			/* O_DIRECT: its writes pass the kernel's page cache by */
	struct special *sp;		/* or a pseudo file or the control file (special.c) */
	struct mark *marks;		/* a directory: the offsets handed out (ops.c) */
	size_t nmarks, capmarks;
	char *list;			/* a meta view directory: its names, one per line */
	size_t nlist;
	struct handle *prev, *next;	/* in B.handles */
};

/* ---- r4fuse.c: the session ---- */

void br_log(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Commit the group; a failed commit drops it (its error is returned).
 * Once it returns 0, every change counted so far (B.changes) is durable. */
int br_commit(void);
/* The changes made so far, read outside the mutex: what an fsync arriving
 * now must see durable. */
uint64_t br_changes_now(void);
/* fsync by pid: the changes up to want (br_changes_now on arrival)
 * durable, by a commit of this call's or another's (group commit); 0 or
 * the failed commit's error. */
int br_durable(uint64_t want, pid_t pid);
/* Before a change: the group is open (-EROFS once read-only). */
int br_change_begin(void);
/* After a change (rc): -o sync commits now; a failure that poisoned the
 * group aborts it. */
int br_change_end(const char *op, int rc);
/* Is rc a refusal for want of space that a commit of the group may cure
 * (then committed)? */
bool br_regroup(int rc);
/* Who sends req (its groups asked for unless it is root). */
void br_caller(fuse_req_t req, struct caller *c);
/* The serving loop (r4fuse.c): a request's thread that is about to wait
 * lets another read the next requests; br_mu_lock takes B.mu so. */
void br_may_block(void);
void br_mu_lock(void);
/* CLOCK_MONOTONIC in nanoseconds. */
uint64_t br_mono_ns(void);
/* Wait on cv (with B.mu, which it releases meanwhile) until it is
 * signalled or the monotonic clock reaches end; reading goes to another
 * thread first (br_may_block). */
void br_wait_until(pthread_cond_t *cv, uint64_t end);
/* Take the mutex, the engine acting as c; br_unlock undoes both. */
void br_lock_as(const struct caller *c);
/* The engine acting as c again (the mutex held: after a wait that let
 * others take it). */
void br_as(const struct caller *c);
void br_enter(fuse_req_t req, struct caller *c);	/* br_caller, then br_lock_as */
void br_unlock(void);
void br_init(void *data, struct fuse_conn_info *conn);
void br_destroy(void *data);

/* ---- node.c: the node table ---- */

struct node *node_find(fuse_ino_t id);
/* The node of an object of the tree by id: -ESTALE (none), -EPERM (the
 * meta view's), -EINVAL (a pseudo or control file). */
int node_find_obj(fuse_ino_t id, struct node **out);
/* The root's node (B.root), on B.db's root directory. */
int node_root(void);
void node_unref(struct node *n);
int node_place(struct node *n, struct node *parent, const char *name);
int node_obj(r4_file *f, struct node *parent, const char *name, struct node **out);
int node_dot(fuse_ino_t id, bool dotdot, struct node **out);
int node_synth(enum kind kind, struct node *parent, const char *name, struct node **out);
void node_looked_up(struct node *n);
void node_forget(fuse_ino_t id, uint64_t k);
int node_names(struct node *n, char **out);
int node_path(struct node *n, char **out);
int node_moved(struct node *n, struct node *p, const char *name);
struct node *node_child(struct node *p, const char *name);
void node_keep(struct node *n);
/* Every node lets go of its engine handle (the image closes). */
void node_close_all(void);
/* The table and its nodes freed (the session is over). */
void node_free_all(void);
/* The invalidation thread; node_invalidate_all runs outside the mutex. */
void node_invalidator_start(void);
void node_invalidator_stop(void);
void node_invalidate_all(void);
void node_invalidate_attrs(fuse_ino_t id);

/* ---- ops.c: the POSIX operations ---- */

extern const struct fuse_lowlevel_ops fb_ops;
/* The one place engine codes become FUSE results (a positive errno). */
int fb_err(const char *op, struct node *n, int rc);

/* ---- special.c: pseudo files, the control file, the meta view, xattrs ---- */

struct special;
/* Is name in p one the bridge keeps for itself (the control file, the
 * meta view)? */
bool sp_reserved(const struct node *p, const char *name);
/* name in p, a reserved name or one in the meta view (or -ENOTDIR). */
int sp_lookup(const struct caller *c, struct node *p, const char *name, struct node **out);
/* The attributes of a node that is no object, as the caller sees them. */
int sp_stat(const struct caller *c, struct node *n, struct r4_stat *st);
/* The names of a meta view directory, one per line (*names: malloc'd). */
int sp_list(const struct caller *c, struct node *n, char **names, size_t *len);
/* Who calls on s (NULL: no special file); writes: at write(2). */
void sp_caller(fuse_req_t req, const struct special *s, bool writes, struct caller *c);
int sp_open(struct node *n, struct fuse_file_info *fi, struct special **out);
void sp_free(struct special *s);
int sp_read(const struct caller *c, struct special *s, char *buf, size_t size, off_t off,
	    size_t *got, bool *changed);
int sp_write(const struct caller *c, struct special *s, const char *buf, size_t n, off_t off,
	     bool *changed);
int sp_flush(const struct caller *c, struct special *s, bool *changed);
void sp_getxattr(fuse_req_t req, fuse_ino_t id, const char *name, size_t size);
void sp_setxattr(fuse_req_t req, fuse_ino_t id, const char *name, const char *value, size_t size,
		 int flags);
void sp_listxattr(fuse_req_t req, fuse_ino_t id, size_t size);
void sp_removexattr(fuse_req_t req, fuse_ino_t id, const char *name);

/* ---- repack.c: the repacker on the mount ---- */

/* The control file's "# r4 repack ARGS" (start, status, stop) for c: its
 * answer in *out (malloc'd), or -errno. */
int rp_control(const struct caller *c, const char *args, char **out, size_t *nout);
/* At unmount, B.stop set: a running pass stops and ends. */
void rp_end(void);
/* The mount turned read-only: a running pass stops and commits first. */
void rp_read_only(void);

/* A change (sets int rc): the group opened, the call, change_end; and
 * once more after a commit when refused for want of space. */
#define CHANGE(op, call) \
	(!(rc = br_change_begin()) && br_regroup(rc = br_change_end(op, (call))) && \
	 !(rc = br_change_begin()) ? (rc = br_change_end(op, (call))) : rc)

#endif
