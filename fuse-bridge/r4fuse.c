/*
 * r4fuse.c - an r4 image as a mounted file system (libfuse3, the
 * low-level API): the session.  Options, opening the image, the mount
 * (fuseblk or plain), the serving loop, the group of calls and its
 * committer, who calls and the one mutex, the log.  The rest of the
 * bridge (bridge.h lists what each file offers the others):
 *   node.c     the kernel's inodes as the engine's objects, and the
 *              kernel's caches after changes it did not make
 *   ops.c      the POSIX operations: translate, one engine call, reply
 *   special.c  pseudo files, the control file, the meta view, xattrs
 *
 * Transactions: POSIX calls are grouped into one engine transaction,
 * committed every commit= seconds (default 5), by fsync and unmount, and
 * after every call with -o sync; concurrent fsyncs share commits (group
 * commit, br_durable), and so do the control file's commands (special.c,
 * run_r4l).  A grouped call that fails after it
 * changed something poisons the group: the group is aborted, as a crash
 * would lose it, and the error logged.
 */
#include "bridge.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <semaphore.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/loop.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/sysmacros.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>


#if FUSE_VERSION >= FUSE_MAKE_VERSION(3, 12)
/* (libfuse declares it for FUSE_USE_VERSION >= 312 only; the 3.1 loop of
 * 3.14 leaks its configuration) */
int fuse_session_loop_mt_312(struct fuse_session *se, struct fuse_loop_config *config);
#endif

struct bridge B = {.mu = PTHREAD_MUTEX_INITIALIZER, .wake = PTHREAD_COND_INITIALIZER,
		   .committed = PTHREAD_COND_INITIALIZER, .joined = PTHREAD_COND_INITIALIZER,
		   .commit_secs = 5, .entry_timeout = 1, .attr_timeout = 1};

/* ---- the log ---- */

void br_log(int level, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	if (B.debug) {
		vfprintf(stderr, fmt, ap);
		fputc('\n', stderr);
	} else {
		vsyslog(level, fmt, ap);
	}
	va_end(ap);
}

/* The engine's messages (recovery, damage found) go to the same log;
 * where in r4 damage was found (R4_LOG_DEBUG) only with -d or -f. */
static void engine_log(void *ctx, int level, const char *msg)
{
	(void)ctx;
	if (level == R4_LOG_DEBUG && !B.debug)
		return;
	if (!B.db) {	/* opening: the user is still there to read it */
		fprintf(stderr, "r4fuse: %s: %s\n", B.image, msg);
		return;
	}
	br_log(level <= R4_LOG_ERR ? LOG_ERR : level == R4_LOG_WARN ? LOG_WARNING : LOG_INFO,
	       "r4fuse: %s: %s", B.image ? B.image : "", msg);
}


/* ---- the group of calls ---- */

/*
 * The group is dropped (under the mutex): a commit failed, or a call
 * failed half-way.  Its changes are lost: the log says which open files
 * had some (r4_file_error then reports it to each of their descriptors,
 * at fsync and close, once), and unless -o errors=continue the mount
 * turns read-only, as ext4's errors=remount-ro.
 */
static void drop_group(const char *why)
{
	unsigned n = 0;

	r4_abort(B.db);
	br_log(LOG_ERR, "r4fuse: %s: the changes since the last commit are lost", why);
	for (struct handle *h = B.handles, *o; h; h = h->next) {
		char *path = NULL;

		for (o = B.handles; o != h && o->n != h->n; o = o->next)
			;
		if (o != h || !h->file || !r4_file_error(h->file, false))
			continue;	/* (a file once, by its first handle) */
		/* (by the name it was last found under: the group may have made it) */
		if (n++ < 20)
			br_log(LOG_ERR, "r4fuse: lost: changes to %s (inode %llu)",
			       node_names(h->n, &path) ? "?" : path,
			       (unsigned long long)r4_file_id(h->file));
		free(path);
	}
	if (n > 20)
		br_log(LOG_ERR, "r4fuse: lost: and changes to %u more open files", n - 20);
	if (!B.errors_continue && !B.ro) {
		B.ro = true;
		br_log(LOG_ERR, "r4fuse: %s: mounted read-only now (errors=remount-ro); unmount, "
		       "check it (r4 fsck) and mount it again", B.image);
	}
}

/* Commit the group (under the mutex).  Every change counted so far is in
 * it, or in an earlier commit, or was lost with a dropped group (reported
 * by r4_file_error): either way no fsync needs to wait for it any more. */
int br_commit(void)
{
	uint64_t upto = __atomic_load_n(&B.changes, __ATOMIC_RELAXED);
	int rc = 0;

	if (r4_in_txn(B.db) && (rc = r4_commit(B.db))) {
		char why[128];

		snprintf(why, sizeof(why), "commit failed (%s)", r4_strerror(rc));
		drop_group(why);
		return rc;
	}
	B.durable = upto;
	return 0;
}

uint64_t br_changes_now(void)
{
	return __atomic_load_n(&B.changes, __ATOMIC_SEQ_CST);
}

/*
 * Group commit.  An fsync whose changes are not durable yet either waits
 * for the commit in progress (another fsync leads it) and looks again, or
 * leads the next one.  A leader first waits, with the mutex released, for
 * the other fsync clients that have changes not yet durable (the callers
 * of the last second's fsyncs, below) to join it, at most about as long
 * as the last commit took: the processes that made changes while the last
 * commit ran then share this one, where each would otherwise wait for a
 * commit of its own.  A lone client has nobody to wait for and commits at
 * once: two syncs per durable change.  The commit itself runs under the
 * mutex (the engine has one transaction at a time).
 */
enum {
	CLIENTS = 32,			/* fsync clients followed */
	GATHER_MAX_NS = 10000000,	/* the longest a leader waits (10 ms) */
};

struct client {
	pid_t pid;			/* 0: a free slot */
	uint64_t changed;		/* B.changes after its last change */
	uint64_t fsync_ns;		/* its last fsync (CLOCK_MONOTONIC) */
	bool joined;			/* waiting for the leader's commit */
};

static struct client clients[CLIENTS];

uint64_t br_mono_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

void br_wait_until(pthread_cond_t *cv, uint64_t end)
{
	uint64_t now = br_mono_ns();
	struct timespec t;

	if (now >= end)
		return;
	clock_gettime(CLOCK_REALTIME, &t);
	t.tv_nsec += (long)(end - now);
	t.tv_sec += t.tv_nsec / 1000000000;
	t.tv_nsec %= 1000000000;
	br_may_block();
	pthread_cond_timedwait(cv, &B.mu, &t);
}

/* pid's slot; with make, a new one if it has none (the longest idle goes). */
static struct client *client_of(pid_t pid, bool make)
{
	struct client *old = NULL;

	if (!pid)
		return NULL;
	for (struct client *c = clients; c < clients + CLIENTS; c++) {
		if (c->pid == pid)
			return c;
		if (!c->joined && (!old || c->fsync_ns < old->fsync_ns))
			old = c;
	}
	if (!make || !old)
		return NULL;
	*old = (struct client){.pid = pid};
	return old;
}

/* Is a client other than me likely to fsync soon changes the next commit
 * would cover (made since the last commit, an fsync of its own in the last
 * second, not joined yet)? */
static bool others_pending(const struct client *me, uint64_t now)
{
	for (const struct client *c = clients; c < clients + CLIENTS; c++)
		if (c->pid && c != me && !c->joined && c->changed > B.durable &&
		    now - c->fsync_ns < 1000000000u)
			return true;
	return false;
}

/* The leader, before its commit: until no other client is pending or
 * until end, the mutex released while it waits for them to join. */
static void gather_clients(pid_t pid, uint64_t end)
{
	uint64_t now;

	while ((now = br_mono_ns()) < end && others_pending(client_of(pid, false), now))
		br_wait_until(&B.joined, end);
}

int br_durable(uint64_t want, pid_t pid)
{
	struct client *me = client_of(pid, true);
	uint64_t t0;
	int rc = 0;

	if (me)
		me->fsync_ns = br_mono_ns();
	while (B.durable < want) {
		if (B.leading) {	/* a follower: its changes are in that commit */
			if ((me = client_of(pid, false)))
				me->joined = true;	/* (a joined slot stays its) */
			pthread_cond_signal(&B.joined);
			br_may_block();
			pthread_cond_wait(&B.committed, &B.mu);
			if (me)
				me->joined = false;
			continue;	/* (a spurious wake-up, or a failed commit) */
		}
		B.leading = true;
		t0 = br_mono_ns();
		gather_clients(pid, t0 + (B.commit_ns < GATHER_MAX_NS ? B.commit_ns : GATHER_MAX_NS));
		if (B.durable < want) {	/* (else the timer's commit, or the control file's) */
			t0 = br_mono_ns();
			br_may_block();	/* (a commit is long: the others are read) */
			rc = br_commit();
			B.commit_ns = br_mono_ns() - t0;
		}
		B.leading = false;
		pthread_cond_broadcast(&B.committed);
		if (rc)
			break;	/* (the changes are lost: r4_file_error says so) */
	}
	return rc;
}

/* Before a change: the group is open. */
int br_change_begin(void)
{
	if (B.ro)
		return -EROFS;
	return r4_in_txn(B.db) ? 0 : r4_begin(B.db);
}

/* After a change: -o sync commits now; a failure that poisoned the group
 * aborts it. */
int br_change_end(const char *op, int rc)
{
	/* (counted whatever rc: a refusal costs an fsync a commit at worst) */
	uint64_t n = __atomic_add_fetch(&B.changes, 1, __ATOMIC_SEQ_CST);
	struct client *cl = client_of(B.pid, false);

	if (cl)
		cl->changed = n;
	if (rc && r4_txn_error(B.db)) {
		char why[128];

		snprintf(why, sizeof(why), "%s failed after a change (%s)", op, r4_strerror(rc));
		drop_group(why);
	} else if (!rc && B.sync) {
		rc = br_commit();
	}
	return rc;
}

/* A call refused for want of space changed nothing (the group is open and
 * usable); once the group is committed, what it freed and the last
 * commit's log blocks come back (docs/engine.md, "Space"): worth one more
 * try. */
bool br_regroup(int rc)
{
	return rc == -ENOSPC && r4_in_txn(B.db) && !r4_txn_error(B.db) && !br_commit();
}

/* Commits the group every commit= seconds, until stopped. */
static void *committer(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&B.mu);
	while (!B.stop) {
		struct timespec t;

		clock_gettime(CLOCK_REALTIME, &t);
		t.tv_sec += B.commit_secs;
		pthread_cond_timedwait(&B.wake, &B.mu, &t);
		if (!B.stop)
			br_commit();
	}
	pthread_mutex_unlock(&B.mu);
	return NULL;
}

/* ---- who calls ---- */

void br_caller(fuse_req_t req, struct caller *c)
{
	const struct fuse_ctx *fc = fuse_req_ctx(req);
	gid_t groups[64];
	int ng = 0;

	/* (root passes every check: its groups are not asked for) */
	if (fc->uid && ((ng = fuse_req_getgroups(req, 64, groups)) < 0 || ng > 64))
		ng = 0;
	for (int i = 0; i < ng; i++)
		c->g[i] = groups[i];
	c->who = (struct r4_ident){fc->uid, fc->gid, c->g, (size_t)ng, fc->umask};
	c->pid = fc->pid;
}

/*
 * The mutex, and the engine acting as c for the handle calls: it checks
 * the POSIX rules itself (engine/perm.c), or with default_permissions
 * leaves checking to the kernel but still gives new objects their owner,
 * umask and group.  (r4_act_as cannot fail for 64 groups.)
 */
void br_lock_as(const struct caller *c)
{
	br_mu_lock();
	br_as(c);
}

void br_as(const struct caller *c)
{
	B.pid = c->pid;
	r4_act_as(B.db, &c->who, B.kernel_perms ? R4_AS_NOCHECK : 0);
}

/* A request's start: who calls, and the engine acting as them. */
void br_enter(fuse_req_t req, struct caller *c)
{
	br_caller(req, c);
	br_lock_as(c);
}

void br_unlock(void)
{
	r4_act_as(B.db, NULL, 0);
	B.pid = 0;
	pthread_mutex_unlock(&B.mu);
}

/* ---- start and end ---- */

void br_init(void *data, struct fuse_conn_info *conn)
{
	(void)data;
	/* O_TRUNC comes with the open, so that it happens with the
	 * permission check and the handle (see fb_open) */
	if (conn->capable & FUSE_CAP_ATOMIC_O_TRUNC)
		conn->want |= FUSE_CAP_ATOMIC_O_TRUNC;
	/* a read checks stale attributes first, and a changed mtime or size
	 * drops the cached pages: node_invalidate_all counts on it (libfuse's
	 * default, asked for here so that it stays) */
	if (conn->capable & FUSE_CAP_AUTO_INVAL_DATA)
		conn->want |= FUSE_CAP_AUTO_INVAL_DATA;
	/* file handles (name_to_handle_at, NFS) outlive the kernel's inode:
	 * it asks "." of the node id, and ".." to reconnect a directory
	 * (node_dot); node ids are object ids, generation 0 (ids are never
	 * given out twice: docs/engine.md) */
	if (conn->capable & FUSE_CAP_EXPORT_SUPPORT)
		conn->want |= FUSE_CAP_EXPORT_SUPPORT;
	/* the mode a process creates with comes unmasked, with its umask:
	 * the engine applies the umask, or a directory's default ACL instead
	 * (docs/r4fuse.md, "POSIX ACLs") */
	if (conn->capable & FUSE_CAP_DONT_MASK)
		conn->want |= FUSE_CAP_DONT_MASK;
	/* with default_permissions the kernel checks, so it must know ACLs:
	 * it reads them (getxattr) and caches them; without, it passes them
	 * through as attributes and the engine checks */
	if (B.kernel_perms && (conn->capable & FUSE_CAP_POSIX_ACL))
		conn->want |= FUSE_CAP_POSIX_ACL;
	/* a directory's inode flags (lsattr -d, chattr): fb_ioctl */
	if (conn->capable & FUSE_CAP_IOCTL_DIR)
		conn->want |= FUSE_CAP_IOCTL_DIR;
	pthread_create(&B.committer, NULL, committer, NULL);
	B.started = true;
	node_invalidator_start();
}

/* Commit, make durable and close the image: its lock goes with it.  Every
 * node lets go of its engine handle first (the nodes stay: the kernel may
 * still forget them). */
static void close_image(void)
{
	int rc;

	if (!B.db)
		return;
	br_commit();
	if ((rc = r4_sync(B.db)))
		br_log(LOG_ERR, "r4fuse: %s: unmount: %s", B.image, r4_strerror(rc));
	node_close_all();
	r4_close(B.db);
	B.db = NULL;
}

/*
 * The kernel's DESTROY, or the session's end without one.  A fuseblk
 * mount's unmount waits for this reply, so the image is final, and its
 * lock free, when umount returns (docs/r4fuse.md, "Unmount"); a plain
 * fuse mount gets no DESTROY, and this runs once the loop has ended.
 */
void br_destroy(void *data)
{
	(void)data;
	br_mu_lock();
	B.stop = true;
	pthread_cond_signal(&B.wake);
	pthread_mutex_unlock(&B.mu);
	if (B.started)
		pthread_join(B.committer, NULL);
	B.started = false;
	br_mu_lock();
	rp_end();
	close_image();
	pthread_mutex_unlock(&B.mu);
}

/* ---- mount -o remount ---- */

/*
 * `mount -t fuse.r4 -o remount,OPTS SOURCE DIR` runs mount.fuse.r4 with
 * remount among its options; libfuse cannot remount, so this does it
 * with mount(2) here and serves nothing.  The flags are the mount's as
 * they are (statvfs), changed by what OPTS says (mount(8) passes only
 * what the command line and fstab give); r4fuse's own options cannot
 * change on a live mount and are ignored.  Read-only: the kernel flushes
 * and refuses changes from then on; an fsync of DIR then commits the
 * daemon's group, so the image holds everything written before.
 * Read-write needs a daemon that opened the image for writing (holds its
 * lock): one mounted read-only refuses.
 */
static const struct {
	const char *on, *off;		/* the options that set and clear it */
	unsigned long ms, st;		/* the flag to mount(2), from statvfs(3) */
} remount_flags[] = {
	{"ro", "rw", MS_RDONLY, ST_RDONLY},
	{"nosuid", "suid", MS_NOSUID, ST_NOSUID},
	{"nodev", "dev", MS_NODEV, ST_NODEV},
	{"noexec", "exec", MS_NOEXEC, ST_NOEXEC},
	{"noatime", "atime", MS_NOATIME, ST_NOATIME},
	{"nodiratime", "diratime", MS_NODIRATIME, ST_NODIRATIME},
	{"relatime", "norelatime", MS_RELATIME, ST_RELATIME},
};
#define NREMOUNT (sizeof(remount_flags) / sizeof(remount_flags[0]))

/* argv's -o options, joined as ",A,B,...,", and its first two words. */
static void gather(int argc, char **argv, char *opts, size_t size, const char **src,
		   const char **dir)
{
	size_t n = 0;

	for (int i = 1; i < argc; i++) {
		const char *o = !strcmp(argv[i], "-o") && i + 1 < argc ? argv[++i]
				: !strncmp(argv[i], "-o", 2) ? argv[i] + 2 : NULL;

		if (o)
			n += (size_t)snprintf(opts + n, n < size ? size - n : 0, ",%s", o);
		else if (argv[i][0] != '-')
			*(*src ? dir : src) = argv[i];
	}
	snprintf(opts + (n < size ? n : size - 1), n < size ? size - n : 1, ",");
}

static int remount(const char *src, const char *dir, char *opts)
{
	char real[PATH_MAX];
	struct statvfs sv;
	struct r4_holder h;
	unsigned long fl;
	int fd, rc;

	if (!src || !dir) {
		fprintf(stderr, "mount.fuse.r4: remount: want SOURCE DIR -o remount[,OPTIONS]\n");
		return 2;
	}
	if (!realpath(dir, real) || statvfs(real, &sv)) {
		fprintf(stderr, "mount.fuse.r4: %s: %s\n", dir, strerror(errno));
		return 1;
	}
	if ((rc = r4_holder_find(src, &h)) || strcmp(h.mount, real)) {
		fprintf(stderr, "mount.fuse.r4: %s: %s\n", src,
			rc ? r4_strerror(rc) : "not mounted there by r4fuse");
		return 1;
	}
	fl = 0;
	for (size_t i = 0; i < NREMOUNT; i++)
		fl |= sv.f_flag & remount_flags[i].st ? remount_flags[i].ms : 0;
	for (char *save, *o = strtok_r(opts, ",", &save); o; o = strtok_r(NULL, ",", &save))
		for (size_t i = 0; i < NREMOUNT; i++)
			if (!strcmp(o, remount_flags[i].on))
				fl |= remount_flags[i].ms;
			else if (!strcmp(o, remount_flags[i].off))
				fl &= ~remount_flags[i].ms;
	if (!(fl & MS_RDONLY) && !h.held) {
		fprintf(stderr, "mount.fuse.r4: %s: served read-only (r4fuse -o ro holds no lock); "
			"unmount it and mount it read-write\n", real);
		return 1;
	}
	if (mount(src, real, NULL, MS_REMOUNT | fl, NULL)) {
		fprintf(stderr, "mount.fuse.r4: %s: remount: %s\n", real, strerror(errno));
		return 1;
	}
	if ((fl & MS_RDONLY) && h.held) {
		if ((fd = open(real, O_RDONLY | O_DIRECTORY)) < 0 || fsync(fd)) {
			fprintf(stderr, "mount.fuse.r4: %s: commit: %s\n", real, strerror(errno));
			rc = 1;
		}
		if (fd >= 0)
			close(fd);
	}
	return rc;
}

/* ---- options and main ---- */

struct opts {
	char *image;
	unsigned commit;
	int partition;			/* -o partition=N, --partition N: 0 the whole image */
	char *cache, *errors;
	double entry_timeout, attr_timeout;
	int sync, ro, help, version, kernel_perms, secs;
	int list_xattrs;
	int dev, suid;			/* 1: dev, suid; 0: nodev, nosuid; -1: neither */
};

#define OPT(t, p) {t, offsetof(struct opts, p), 1}
static const struct fuse_opt opt_specs[] = {
	{"commit=%u", offsetof(struct opts, commit), 0},
	{"partition=%i", offsetof(struct opts, partition), 0},
	{"--partition %i", offsetof(struct opts, partition), 0},
	{"cache=%s", offsetof(struct opts, cache), 0},
	{"errors=%s", offsetof(struct opts, errors), 0},
	{"entry_timeout=%lf", offsetof(struct opts, entry_timeout), 0},
	{"attr_timeout=%lf", offsetof(struct opts, attr_timeout), 0},
	OPT("sync", sync),
	OPT("ro", ro),
	OPT("default_permissions", kernel_perms),
	OPT("32bittimes", secs),
	OPT("list_pseudo_xattrs", list_xattrs),
	OPT("dev", dev),
	{"nodev", offsetof(struct opts, dev), 0},
	OPT("suid", suid),
	{"nosuid", offsetof(struct opts, suid), 0},
	OPT("-h", help),
	OPT("--help", help),
	OPT("-V", version),
	OPT("--version", version),
	FUSE_OPT_END,
};

static int opt_proc(void *data, const char *arg, int key, struct fuse_args *out)
{
	struct opts *o = data;

	(void)out;
	if (key == FUSE_OPT_KEY_NONOPT && !o->image) {
		o->image = strdup(arg);
		return 0;	/* the image is ours; the mount point goes to libfuse */
	}
	/* what mount(8) passes from fstab that is no business of libfuse's */
	static const char *const mount_only[] = {"rw", "defaults", "auto", "noauto", "user",
						 "users", "nofail", "_netdev", "exec", NULL};

	if (key == FUSE_OPT_KEY_OPT) {
		for (int i = 0; mount_only[i]; i++)
			if (!strcmp(arg, mount_only[i]))
				return 0;
		if (!strncmp(arg, "x-", 2))
			return 0;
	}
	return 1;
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: r4fuse IMAGE MOUNTPOINT [-f] [-d] [-s] [-o OPTIONS]\n"
		"       r4fuse -h | --help | -V | --version\n"
		"  IMAGE: a file, a block device or an NBD URI (nbd://HOST[:PORT]/EXPORT,\n"
		"  nbd+unix:///EXPORT?socket=PATH)\n"
		"  -o ro            mount read-only\n"
		"  -o partition=N, --partition N  the volume is in partition N of IMAGE\n"
		"                   (MBR or GPT, numbered as /dev/sdaN)\n"
		"  -o sync          commit after every call\n"
		"  -o commit=SECS   group calls into one commit every SECS seconds (default 5)\n"
		"  -o default_permissions  the kernel checks mode bits (else r4fuse does)\n"
		"  -o cache=SIZE    memory for tree nodes (K, M, G; default: 1/16 of memory,\n"
		"                   64M to 1G clean, 64M dirty)\n"
		"  -o errors=remount-ro|continue  after changes are lost (a failed commit):\n"
		"                   refuse changes from then on (the default), or go on\n"
		"  -o 32bittimes    new objects keep whole-second times (12 bytes less each)\n"
		"  -o entry_timeout=SECS, attr_timeout=SECS  how long the kernel may keep\n"
		"                   names and attributes (default 1)\n"
		"  -o list_pseudo_xattrs  listxattr names the user.r4.* attributes (getfattr\n"
		"                   -d shows them; cp -a, rsync -aX, tar --xattrs copy them)\n"
		"  -o dev, -o suid  (root) device files and set-id bits work (default: nodev,\n"
		"                   nosuid; as mount.fuse.r4, dev,suid unless nodev, nosuid)\n"
		"  -o remount[,ro|rw,nosuid,...]  change a live mount's flags (what\n"
		"                   mount -o remount runs; ro also commits)\n"
		"  and libfuse's options: allow_other, max_idle_threads, clone_fd, ...\n");
}

/*
 * dev and suid for the kernel's mount: as root, what -o asks; without
 * either, nodev,nosuid for r4fuse (libfuse's default) and dev,suid for
 * mount.fuse.r4, since mount(8) passes a helper only nodev and nosuid:
 * dev and suid are mount(2)'s defaults, so `mount -o dev,suid` passes
 * neither (libfuse's mount.fuse reads it so too).  A user's mount is
 * nosuid,nodev whatever is asked (fusermount3).
 */
static void add_dev_suid(const struct opts *o, const char *argv0, struct fuse_args *args)
{
	const char *base = strrchr(argv0, '/');
	bool helper = !strcmp(base ? base + 1 : argv0, "mount.fuse.r4");

	if (geteuid() != 0)
		return;
	if (o->dev > 0 || (o->dev < 0 && helper))
		fuse_opt_add_arg(args, "-odev");
	if (o->suid > 0 || (o->suid < 0 && helper))
		fuse_opt_add_arg(args, "-osuid");
}

/* Open the image as the options say (B.db); nonzero: the message is out. */
static int open_image(struct opts *o)
{
	struct r4_open_opts oo = {.rw = !o->ro, .log = engine_log, .seconds_only = o->secs,
				  .partition = (unsigned)o->partition};
	struct r4_holder h;
	int rc;

	if (o->cache) {
		uint64_t bytes;

		if (r4_parse_size(o->cache, &bytes) || bytes < 4096) {
			fprintf(stderr, "r4fuse: cache=%s: want a size like 64M\n", o->cache);
			return 2;
		}
		oo.cache_nodes = (size_t)(bytes / 4096);	/* 4 KiB nodes */
	}
	/* root mounts a block device as fuseblk itself: no O_EXCL (below) */
	oo.bdev_no_excl = geteuid() == 0;
	rc = r4_open(o->image, &oo, &B.db);
	if (rc == -EROFS && oo.rw) {
		/* marked damaged: readable, never written until checked */
		fprintf(stderr, "r4fuse: %s: mounted read-only\n", o->image);
		o->ro = 1;
		oo.rw = false;
		rc = r4_open(o->image, &oo, &B.db);
	}
	if (rc == -EBUSY) {	/* the lock: one writer per image */
		if (r4_holder_find(o->image, &h))
			snprintf(h.what, sizeof(h.what), "in use by another program");
		fprintf(stderr, "r4fuse: %s: %s\n", o->image, h.what);
		return 1;
	}
	if (rc) {
		fprintf(stderr, "r4fuse: %s: cannot mount it: %s\n", o->image, r4_strerror(rc));
		return 1;
	}
	B.ro = o->ro;
	if ((rc = node_root())) {
		fprintf(stderr, "r4fuse: %s: %s\n", o->image, r4_strerror(rc));
		return 1;
	}
	return 0;
}

/* ---- the mount: fuseblk over a loop device, or plain fuse ----
 *
 * The kernel sends a FUSE server DESTROY, and waits for the answer, only
 * when it unmounts a fuseblk file system: a plain fuse mount is gone from
 * the kernel, and umount has returned, while the server may still be
 * committing.  So a read-write mount by root is a fuseblk mount, whose
 * unmount returns once br_destroy has closed the image: of the image
 * itself when that is a block device, else of a loop device attached here
 * to the image file (to a memory file for an NBD export).  The loop
 * device is only what the kernel wants to
 * see; nothing reads or writes through it.  It is attached with autoclear
 * and our descriptor closed once mounted, so it goes when the mount does.
 * Without root or loop devices the mount is plain fuse, with a warning;
 * read-only mounts are plain fuse (nothing to finish).  docs/r4fuse.md,
 * "Unmount", has the why.
 */
struct mnt {
	bool blk;		/* fuseblk (-o blkdev) */
	char source[4096];	/* fsname: the loop device, the device, or the image's path */
	int loopfd;		/* the loop device attached here, until mounted; or -1 */
};

/* Bind the loop device fd to back: LOOP_CONFIGURE (Linux 5.8), else the
 * two older calls; autoclear either way. */
static int loop_bind(int fd, int back, const char *image)
{
	struct loop_config cfg = {.fd = (uint32_t)back};

	cfg.info.lo_flags = LO_FLAGS_AUTOCLEAR;
	snprintf((char *)cfg.info.lo_file_name, sizeof(cfg.info.lo_file_name), "%s", image);
	if (!ioctl(fd, LOOP_CONFIGURE, &cfg))
		return 0;
	if (errno != EINVAL && errno != ENOTTY)
		return -errno;
	if (ioctl(fd, LOOP_SET_FD, back) < 0)
		return -errno;
	if (ioctl(fd, LOOP_SET_STATUS64, &cfg.info) < 0) {
		int rc = -errno;

		ioctl(fd, LOOP_CLR_FD, 0);
		return rc;
	}
	return 0;
}

/* A free loop device (m->source, m->loopfd) on the image file, or, for an
 * image with no local file (an NBD URI), on a small memory file that only
 * stands in for it: nothing reads or writes through the device either way. */
static int attach_loop(const char *image, bool local, struct mnt *m)
{
	int ctl = open("/dev/loop-control", O_RDWR | O_CLOEXEC), back = -1, rc = -EBUSY;

	if (ctl < 0)
		return -errno;
	back = local ? open(image, O_RDWR | O_CLOEXEC) : memfd_create("r4fuse", MFD_CLOEXEC);
	if (back < 0 || (!local && ftruncate(back, 1 << 20) < 0)) {
		rc = -errno;
		goto out;
	}
	for (int tries = 0; tries < 8 && rc == -EBUSY; tries++) {	/* (raced for it: next) */
		int nr = ioctl(ctl, LOOP_CTL_GET_FREE), fd;

		if (nr < 0) {
			rc = -errno;
			break;
		}
		snprintf(m->source, sizeof(m->source), "/dev/loop%d", nr);
		/* (without udev, as in most containers, a new loop device has
		 * no node yet: make it, block major 7) */
		if ((fd = open(m->source, O_RDWR | O_CLOEXEC)) < 0 && errno == ENOENT &&
		    (!mknod(m->source, S_IFBLK | 0660, makedev(7, (unsigned)nr)) || errno == EEXIST))
			fd = open(m->source, O_RDWR | O_CLOEXEC);
		if (fd < 0) {
			rc = -errno;
			break;
		}
		if (!(rc = loop_bind(fd, back, image)))
			m->loopfd = fd;
		else
			close(fd);
	}
out:
	if (back >= 0)
		close(back);	/* (the loop device holds its own reference) */
	close(ctl);
	return rc;
}

/* The plain fuse mount: the image's path as source (r4sh finds it there). */
static void plain_mount(const char *image, struct mnt *m, const char *why)
{
	if (m->loopfd >= 0)
		close(m->loopfd);	/* (autoclear: the loop device goes) */
	m->loopfd = -1;
	m->blk = false;
	if (!realpath(image, m->source))
		snprintf(m->source, sizeof(m->source), "%s", image);
	if (why)
		fprintf(stderr, "r4fuse: %s: a plain fuse mount (%s): unmount returns before the "
			"image is final; wait for r4fuse to exit before using the image\n", image,
			why);
}

static void plan_mount(const struct opts *o, struct mnt *m)
{
	struct stat st;
	bool local = !stat(o->image, &st);	/* (no file, yet it opened: an NBD URI) */
	char why[128];
	int rc;

	m->loopfd = -1;
	if (o->ro) {
		plain_mount(o->image, m, NULL);
	} else if (geteuid() != 0) {
		plain_mount(o->image, m, "not root");
	} else if (local && S_ISBLK(st.st_mode)) {
		m->blk = true;
		if (!realpath(o->image, m->source))
			snprintf(m->source, sizeof(m->source), "%s", o->image);
	} else if ((rc = attach_loop(o->image, local, m))) {
		snprintf(why, sizeof(why), "no loop device: %s", r4_strerror(rc));
		plain_mount(o->image, m, why);
	} else {
		m->blk = true;
	}
}

/* base's options, and the mount's: subtype, source (escaped for fuse_opt),
 * blkdev. */
static int mount_args(const struct fuse_args *base, const struct mnt *m, struct fuse_args *out)
{
	char *opt = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&opt, &n);
	int rc = 0;

	if (!f)
		return -1;
	fputs("-osubtype=r4,fsname=", f);
	for (const char *c = m->source; *c; c++) {
		if (*c == ',' || *c == '\\')
			fputc('\\', f);
		fputc(*c, f);
	}
	if (m->blk)
		fputs(",blkdev", f);
	fclose(f);
	for (int i = 0; i < base->argc && !rc; i++)
		rc = fuse_opt_add_arg(out, base->argv[i]);
	if (!rc)
		rc = fuse_opt_add_arg(out, opt);
	free(opt);
	return rc;
}

/* The session, mounted (B.se); a fuseblk mount that fails is tried again
 * as a plain one.  Nonzero: libfuse said why. */
static int mount_session(const struct fuse_args *base, const char *image, const char *mp,
			 struct mnt *m)
{
	for (;;) {
		struct fuse_args args = FUSE_ARGS_INIT(0, NULL);
		int rc = -1;

		if (!mount_args(base, m, &args) &&
		    (B.se = fuse_session_new(&args, &fb_ops, sizeof(fb_ops), NULL)))
			rc = fuse_session_mount(B.se, mp);
		fuse_opt_free_args(&args);
		if (!rc)
			break;
		if (B.se)
			fuse_session_destroy(B.se);
		B.se = NULL;
		if (!m->blk)
			return -1;
		plain_mount(image, m, "the fuseblk mount failed");
	}
	if (m->loopfd >= 0)
		close(m->loopfd);	/* the mount holds it now; autoclear when it lets go */
	m->loopfd = -1;
	return 0;
}

/* ---- the serving loop ----
 *
 * One thread at a time reads /dev/fuse (the reader) and answers what it
 * read itself; just before it would wait (the mutex held by another, a
 * commit, an fsync gathering others: br_may_block) it hands the reading
 * to an idle worker, or starts one (up to LOOP_MAX).  So the calls of
 * one process, one after the other (LOOKUP, CREATE, GETXATTR, WRITE,
 * FLUSH, RELEASE for a new file), are all answered by the thread that
 * just answered the last, while a call that waits never holds up the
 * others.  libfuse's loop keeps a second thread reading while one
 * answers, and the kernel wakes its readers in turn, so each of those
 * calls went to another thread: creating small files ran 1.8x slower on
 * the 2-core VM under load (bench/RESULTS.md, "FUSE creation, round
 * two").  -o clone_fd or -o max_idle_threads=N ask for libfuse's loop.
 */
#define LOOP_MAX 16

static struct {
	pthread_mutex_t mu;
	pthread_cond_t turn;		/* the reading is free, or the end */
	sem_t finish;			/* a worker saw the end */
	bool reading;			/* a thread reads, or was told to */
	bool end;
	unsigned threads, idle;		/* started; waiting for the reading */
	int error;
	pthread_t tid[LOOP_MAX];
} L = {.mu = PTHREAD_MUTEX_INITIALIZER, .turn = PTHREAD_COND_INITIALIZER};

static __thread bool reader;		/* this thread holds the reading */

static void *worker(void *arg);

/* Under L.mu: one thread more (all signals blocked: the main thread's),
 * none once the loop ends (loop_own joins them). */
static bool start_worker(void)
{
	sigset_t all, old;
	int rc;

	if (L.threads >= LOOP_MAX || L.end)
		return false;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	rc = pthread_create(&L.tid[L.threads], NULL, worker, NULL);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc)
		return false;
	L.threads++;
	return true;
}

void br_may_block(void)
{
	if (!reader)
		return;
	pthread_mutex_lock(&L.mu);
	if (L.idle || start_worker()) {	/* (else it waits holding the reading) */
		reader = L.reading = false;
		pthread_cond_signal(&L.turn);
	}
	pthread_mutex_unlock(&L.mu);
}

void br_mu_lock(void)
{
	if (pthread_mutex_trylock(&B.mu)) {
		br_may_block();
		pthread_mutex_lock(&B.mu);
	}
}

/* Wait for the reading; false at the end. */
static bool take_reading(void)
{
	bool end;

	pthread_mutex_lock(&L.mu);
	L.idle++;
	while (L.reading && !L.end)
		pthread_cond_wait(&L.turn, &L.mu);
	L.idle--;
	if (!(end = L.end))
		reader = L.reading = true;
	pthread_mutex_unlock(&L.mu);
	return !end;
}

static void loop_end(int res)
{
	pthread_mutex_lock(&L.mu);
	if (res < 0 && !L.error)
		L.error = res;
	L.end = true;
	pthread_cond_broadcast(&L.turn);
	pthread_mutex_unlock(&L.mu);
	fuse_session_exit(B.se);
	sem_post(&L.finish);
}

static void free_buf(void *buf)
{
	free(((struct fuse_buf *)buf)->mem);
}

/* Cancelled only while reading (at the end, by a signal). */
static void *worker(void *arg)
{
	struct fuse_buf buf = {.mem = NULL};
	int res;

	(void)arg;
	pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, NULL);
	pthread_cleanup_push(free_buf, &buf);
	while (reader || take_reading()) {
		pthread_setcancelstate(PTHREAD_CANCEL_ENABLE, NULL);
		res = fuse_session_receive_buf(B.se, &buf);
		pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, NULL);
		if (res == -EINTR || res == -EAGAIN)
			continue;
		if (res <= 0 || fuse_session_exited(B.se)) {
			loop_end(res);
			break;
		}
		fuse_session_process_buf(B.se, &buf);
	}
	pthread_cleanup_pop(1);
	return NULL;
}

static int loop_own(void)
{
	int rc = 0;

	if (sem_init(&L.finish, 0, 0))
		return -errno;
	pthread_mutex_lock(&L.mu);
	if (!start_worker())
		rc = -ENOMEM;
	pthread_mutex_unlock(&L.mu);
	while (!rc && !fuse_session_exited(B.se))
		sem_wait(&L.finish);	/* (a signal ends it: libfuse's handler exits) */
	pthread_mutex_lock(&L.mu);
	L.end = true;
	pthread_cond_broadcast(&L.turn);
	for (unsigned i = 0; i < L.threads; i++)
		pthread_cancel(L.tid[i]);
	pthread_mutex_unlock(&L.mu);
	for (unsigned i = 0; i < L.threads; i++)
		pthread_join(L.tid[i], NULL);
	sem_destroy(&L.finish);
	fuse_session_reset(B.se);
	return rc ? rc : L.error;
}

/* libfuse's worker threads (-o clone_fd, -o max_idle_threads=N): up to
 * 16, as many idle as max_idle_threads says (default 10). */
static int loop_mt(const struct fuse_cmdline_opts *co)
{
#if FUSE_VERSION >= FUSE_MAKE_VERSION(3, 12)
	struct fuse_loop_config *cfg = fuse_loop_cfg_create();
	int rc;

	if (!cfg)
		return -ENOMEM;
	fuse_loop_cfg_set_clone_fd(cfg, (unsigned)co->clone_fd);
	fuse_loop_cfg_set_idle_threads(cfg, co->max_idle_threads != UINT_MAX
				       ? co->max_idle_threads : 10);
	fuse_loop_cfg_set_max_threads(cfg, 16);
	rc = fuse_session_loop_mt_312(B.se, cfg);
	fuse_loop_cfg_destroy(cfg);
	return rc;
#else
	return fuse_session_loop_mt(B.se, co->clone_fd);
#endif
}

/* Mount and serve until unmounted. */
static int serve(const struct fuse_args *args, const struct fuse_cmdline_opts *co,
		 const struct opts *o)
{
	struct mnt m = {0};
	int rc = 1;

	plan_mount(o, &m);
	if (mount_session(args, o->image, co->mountpoint, &m))
		return 1;
	B.mountpoint = realpath(co->mountpoint, NULL);
	if (!fuse_set_signal_handlers(B.se)) {
		fuse_daemonize(co->foreground);
		rc = co->singlethread ? fuse_session_loop(B.se)
		     : co->clone_fd || co->max_idle_threads != UINT_MAX ? loop_mt(co)
		     : loop_own();
		node_invalidator_stop();
		fuse_remove_signal_handlers(B.se);
	}
	fuse_session_unmount(B.se);
	fuse_session_destroy(B.se);	/* (runs br_destroy, unless DESTROY came) */
	B.se = NULL;
	free(B.mountpoint);
	B.mountpoint = NULL;
	return rc ? 1 : 0;
}

int fuse_bridge_main(int argc, char **argv);

int fuse_bridge_main(int argc, char **argv)
{
	struct fuse_args args = FUSE_ARGS_INIT(argc, argv);
	struct opts o = {.commit = 5, .entry_timeout = 1, .attr_timeout = 1, .dev = -1, .suid = -1};
	struct fuse_cmdline_opts co = {0};
	const char *src = NULL, *dir = NULL;
	char all[4096];
	int rc = 2;

	/* --partition=N as -opartition=N (the same length): fuse_opt would
	 * also match it against "--partition %i" and fail */
	for (int i = 1; i < argc; i++)
		if (!strncmp(argv[i], "--partition=", 12))
			memcpy(argv[i], "-opartition=", 12);
	gather(argc, argv, all, sizeof(all), &src, &dir);
	if (strstr(all, ",remount,"))
		return remount(src, dir, all);
	if (fuse_opt_parse(&args, &o, opt_specs, opt_proc) < 0)
		goto out;
	if (o.version) {
		printf("r4fuse %s (libfuse %s)\n", R4_VERSION, fuse_pkgversion());
		rc = 0;
		goto out;
	}
	if (o.help || !o.image) {
		usage(o.help ? stdout : stderr);
		rc = o.help ? 0 : 2;
		goto out;
	}
	if (fuse_parse_cmdline(&args, &co) || !co.mountpoint) {
		if (!co.mountpoint)
			usage(stderr);
		goto out;
	}
	if (o.partition < 0 || o.partition > 65535) {
		fprintf(stderr, "r4fuse: partition=%d: want a partition number (1, 2, ...)\n",
			o.partition);
		rc = 2;
		goto out;
	}
	if (o.errors && strcmp(o.errors, "remount-ro") && strcmp(o.errors, "continue")) {
		fprintf(stderr, "r4fuse: errors=%s: want remount-ro or continue\n", o.errors);
		rc = 2;
		goto out;
	}
	B.errors_continue = o.errors && !strcmp(o.errors, "continue");
	B.sync = o.sync;
	B.kernel_perms = o.kernel_perms;
	B.list_xattrs = o.list_xattrs;
	B.commit_secs = o.commit ? o.commit : 5;
	B.entry_timeout = o.entry_timeout;
	B.attr_timeout = o.attr_timeout;
	B.debug = co.foreground || co.debug;
	B.image = o.image;
	if ((rc = open_image(&o)))
		goto out;
	openlog("r4fuse", LOG_PID, LOG_DAEMON);
	/* default_permissions: the kernel checks mode bits; else the bridge does */
	if (B.kernel_perms)
		fuse_opt_add_arg(&args, "-odefault_permissions");
	if (o.ro)
		fuse_opt_add_arg(&args, "-oro");
	add_dev_suid(&o, argv[0], &args);
	rc = serve(&args, &co, &o);
out:
	/* (br_destroy closed the image if the mount was served) */
	pthread_mutex_lock(&B.mu);
	close_image();
	node_free_all();
	pthread_mutex_unlock(&B.mu);
	fuse_opt_free_args(&args);
	free(co.mountpoint);
	free(o.cache);
	free(o.errors);
	free(o.image);
	return rc;
}
