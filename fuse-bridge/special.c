/*
 * special.c - Reiser4 semantics through POSIX: what r4fuse serves that is
 * no object of the tree.
 *  - the pseudo files of every directory by name (cat dir/..owner, echo
 *    0700 > dir/..mode), never in readdir, read and written with the
 *    engine's r4_pseudo_read and r4_pseudo_write for the calling process
 *    (a value reads as a line, ending in a newline);
 *  - /..meta: every object as a directory of its pseudo files and
 *    children, so that files reach theirs (..meta/etc/hosts/..mode);
 *  - the control file /..reiser4: write an R4L command, read back its
 *    values (or its diagnostics): one unit per command, commands of
 *    several processes sharing commits (run_r4l); written write-only,
 *    each complete command runs at its write(2), which fails with its
 *    error;
 *  - extended attributes: those users store, by one engine call each,
 *    and user.r4.NAME for the pseudo file ..NAME, asked for by name
 *    (listed with -o list_pseudo_xattrs).
 * What a pseudo file is, reads and does is engine/pseudo.c's: here a
 * node becomes an object's path and a pseudo file of the table, one call.
 * This is the one file of the bridge that uses the language (r4_lang.h),
 * and only for the control file: the text a process writes there is R4L,
 * run by r4_run, a unit of its own (in a session it may share).  Changes
 * made behind the kernel's back (a command, a pseudo file written)
 * invalidate its caches
 * (node_invalidate_all): attributes at once, names and pages by the
 * invalidation thread.  ops.c hands an operation on such a node here.
 */
#include "bridge.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <syslog.h>

#include "r4_lang.h"

#define XATTR "user.r4."	/* user.r4.mode is ..mode */

/* A handle on a pseudo file or the control file: what was written, what
 * there is to read. */
struct special {
	bool control;
	bool whole;			/* an aggregate's (invert's) text: applied whole at close */
	bool wronly;			/* opened write-only: no answer can be read */
	int err;			/* a text refused at write(2): nothing runs */
	char *obj;			/* a pseudo file's object (whole: the object) ... */
	enum r4_pseudo id;		/* ... and which of its pseudo files */
	char *in;			/* written, not yet run */
	size_t nin;
	size_t base;			/* the file offset in[0] was written at */
	char *out;			/* the text read returns */
	size_t nout, rpos;		/* (the control file reads from rpos, not the file
					   offset its writes moved) */
	bool have_out, written;
	uint32_t umask;			/* the writer's, as its last write(2) found it */
};

/* ---- names ---- */

static bool is_pseudo(const char *name)
{
	return r4_ns_pseudo_spelling(name, strlen(name));
}

/* The control file or the meta view: names of the mount root the bridge
 * keeps for itself, before any entry of that name (docs/semantics.md). */
bool sp_reserved(const struct node *p, const char *name)
{
	return p == B.root && (!strcmp(name, CONTROL) || !strcmp(name, META));
}

/* May the caller reach path (with default_permissions the kernel checks)?
 * st, if asked for, gets its attributes. */
static int reach(const struct caller *c, const char *path, struct r4_stat *st)
{
	return r4_access(B.db, path, B.kernel_perms ? NULL : &c->who, 0, st);
}

int sp_lookup(const struct caller *c, struct node *p, const char *name, struct node **out)
{
	enum kind k;
	char *path = NULL, *pp = NULL;
	int rc;

	if (p->kind != K_OBJ && p->kind != K_META)
		return -ENOTDIR;
	k = !is_pseudo(name) ? K_META : p != B.root ? K_PSEUDO
	    : !strcmp(name, CONTROL) ? K_CONTROL : !strcmp(name, META) ? K_META : K_PSEUDO;
	if (k == K_META && p->kind == K_META) {
		/* a child in the view: it must exist */
		if (!(rc = node_path(p, &pp)))
			rc = asprintf(&path, "%s/%s", strcmp(pp, "/") ? pp : "", name) < 0
			     ? -ENOMEM : reach(c, path, NULL);
		free(pp);
		free(path);
	} else {
		rc = p->kind == K_OBJ ? r4_file_access(p->obj, 1) : 0;
	}
	return rc ? rc : node_synth(k, p, name, out);
}

/* ---- running R4L ---- */

/*
 * How a client asks the control file to run its command: leading lines
 * "# r4 WORD [ARGS]" (R4L comments, removed before the run):
 *   framed          answer in the framed form of parser/wire.c (r4sh does)
 *   per-statement   one unit per statement, as a script runs
 *   cwd PATH        relative paths start at PATH
 *   as UID:GID[,G...] UMASK   run as that identity (a root caller only)
 *   repack ARGS     no R4L: the repacker's start, status or stop (repack.c)
 */
struct ctl {
	bool framed, per_statement;
	bool at_write;			/* (no pragma) run by write(2): see ctl_lead */
	char *cwd, *repack;
	struct caller as;
	bool have_as;
};

/* Read the pragmas at the start of *src; *src and *len move past them. */
static void ctl_parse(const struct caller *c, const char **src, size_t *len, struct ctl *cl)
{
	static const char tag[] = "# r4 ";

	while (*len > sizeof(tag) - 1 && !memcmp(*src, tag, sizeof(tag) - 1)) {
		const char *nl = memchr(*src, '\n', *len);
		size_t n = nl ? (size_t)(nl - *src) : *len;
		char *line = strndup(*src + sizeof(tag) - 1, n - (sizeof(tag) - 1)), *e;

		if (!line)
			break;
		if (!strcmp(line, "framed")) {
			cl->framed = true;
		} else if (!strcmp(line, "per-statement")) {
			cl->per_statement = true;
		} else if (!strncmp(line, "repack ", 7)) {
			free(cl->repack);
			cl->repack = strdup(line + 7);
		} else if (!strncmp(line, "cwd /", 5)) {
			free(cl->cwd);
			cl->cwd = strdup(line + 4);
		} else if (!strncmp(line, "as ", 3) && c->who.uid == 0) {
			struct r4_ident *w = &cl->as.who;
			unsigned long v = strtoul(line + 3, &e, 10);

			w->uid = (uint32_t)v;
			w->gid = *e == ':' ? (uint32_t)strtoul(e + 1, &e, 10) : w->uid;
			w->ngroups = 0;
			w->groups = cl->as.g;
			while (*e == ',' && w->ngroups < 64)
				cl->as.g[w->ngroups++] = (uint32_t)strtoul(e + 1, &e, 10);
			w->umask = *e == ' ' ? (uint32_t)strtoul(e + 1, NULL, 8) & 0777 : 022;
			cl->have_as = true;
		}	/* (anything else, and "as" from a non-root caller: ignored) */
		free(line);
		*src += nl ? n + 1 : n;
		*len -= nl ? n + 1 : n;
	}
}

/*
 * ---- commands share commits ----
 *
 * Commands written by several processes at once share one commit, each
 * still a unit of its own.  The first to arrive leads: it waits (the
 * mutex released) for the other processes that wrote a command in the
 * last second and are not waiting yet, at most about as long as the last
 * batch took (10 ms at most; nobody to wait for: no wait), then takes
 * every command waiting, runs them one after another into one session
 * (r4_session_begin: one that fails is undone alone, by the session
 * doing its earlier runs again) and commits once.  Commands arriving
 * meanwhile wait for the next batch, which one of them leads.  Each
 * command gets its own answer; a failed commit fails every command that
 * had something in it.  The grouped POSIX changes commit first, outside
 * the session: a command undone must not take them along.
 */
enum {
	CTL_CLIENTS = 32,		/* writers of commands followed */
	CTL_GATHER_MAX_NS = 10000000,	/* the longest a leader waits (10 ms) */
	CTL_SCRIPT_MAX = 65536,		/* a longer per-statement text runs alone */
};

struct ctl_cmd {
	const struct caller *c;		/* who wrote it (all of it lives on the writer's
					   stack, which waits until done) */
	const char *src;
	size_t len;
	const struct ctl *cl;
	struct r4_run *r;		/* its run (NULL: it failed before, rc says why) */
	int rc;
	bool lost;			/* it ran, but the shared commit failed (rc) */
	bool changed, done;
	struct ctl_cmd *next;
};

static struct {
	struct ctl_cmd *head, **tail;	/* waiting for a leader to take them */
	bool leading;			/* a leader gathers or runs a batch */
	pthread_cond_t joined, done;	/* a command queued; a batch ended */
	uint64_t batch_ns;		/* how long the last batch took */
	struct {
		pid_t pid;		/* 0: a free slot */
		uint64_t ns;		/* its last command (CLOCK_MONOTONIC) */
		bool waiting;		/* queued or in a batch */
	} cl[CTL_CLIENTS];
} G = {.tail = &G.head, .joined = PTHREAD_COND_INITIALIZER, .done = PTHREAD_COND_INITIALIZER};

/* pid's slot, a new one if it has none (the longest idle goes), or -1. */
static int ctl_client(pid_t pid)
{
	int old = -1;

	if (!pid)
		return -1;
	for (int i = 0; i < CTL_CLIENTS; i++) {
		if (G.cl[i].pid == pid)
			return i;
		if (!G.cl[i].waiting && (old < 0 || G.cl[i].ns < G.cl[old].ns))
			old = i;
	}
	if (old >= 0)
		G.cl[old].pid = pid;
	return old;
}

static void ctl_waiting(pid_t pid, bool on)
{
	int i = ctl_client(pid);

	if (i >= 0) {
		G.cl[i].waiting = on;
		G.cl[i].ns = br_mono_ns();
	}
}

/* Will a process likely write a command soon (one in the last second,
 * not waiting now)? */
static bool ctl_others(uint64_t now)
{
	for (int i = 0; i < CTL_CLIENTS; i++)
		if (G.cl[i].pid && !G.cl[i].waiting && now - G.cl[i].ns < 1000000000u)
			return true;
	return false;
}

/*
 * Does k run alone, each of its units committing by itself, as on an
 * image?  A long script one unit per statement (r4sh -f on a mount): in
 * the session its transaction would grow with every statement, and one
 * that fails would do all those before it again.
 */
static bool ctl_alone(const struct ctl_cmd *k)
{
	return k->cl->per_statement && k->len > CTL_SCRIPT_MAX;
}

/* Run k, in the session ss or (NULL) alone. */
static void ctl_run(struct ctl_cmd *k, r4_session *ss)
{
	struct r4_run_opts ro = {.name = "<control>", .exec = {.read_objects = true, .session = ss}};

	ro.exec.who = k->cl->have_as ? k->cl->as.who : k->c->who;
	ro.exec.cwd = k->cl->cwd;
	ro.per_statement = k->cl->per_statement;
	br_as(k->c);
	k->rc = r4_run(B.db, k->src, k->len, &ro, &k->r);
}

/* Run the commands of list into one session and commit it. */
static void ctl_batch(struct ctl_cmd *list)
{
	struct ctl_cmd *one = NULL;
	struct r4_info before, after;
	r4_session *ss = NULL;
	unsigned n = 0;
	int rc;

	if ((rc = br_commit())) {	/* (a failed commit lost the group: said in the log) */
		for (struct ctl_cmd *k = list; k; k = k->next)
			k->rc = rc;
		return;
	}
	r4_info(B.db, &before);
	for (struct ctl_cmd *k = list; k; k = k->next) {
		if (ctl_alone(k)) {
			ctl_run(k, NULL);
		} else {
			n++;
			one = k;
		}
	}
	/* (one command of one unit commits alone, without the session's
	 * record of it; a read-only volume: each runs alone, and reads) */
	if ((n > 1 || (n == 1 && one->cl->per_statement)) && r4_session_begin(B.db, &ss))
		ss = NULL;
	for (struct ctl_cmd *k = list; k; k = k->next)
		if (!ctl_alone(k))
			ctl_run(k, ss);
	if (ss && (rc = r4_session_commit(ss))) {
		br_log(LOG_ERR, "r4fuse: %s: commit of the control file's commands failed (%s)",
		       B.image, r4_strerror(rc));
		for (struct ctl_cmd *k = list; k; k = k->next)
			if (!ctl_alone(k) && k->r && (!k->rc || k->r->units)) {
				k->rc = rc;
				k->lost = true;
			}
	}
	r4_info(B.db, &after);
	for (struct ctl_cmd *k = list; k; k = k->next)
		k->changed = after.commits != before.commits;
}

/*
 * Lead a batch: gather, take every command waiting, run and commit.  A
 * command run by write(2) gathers none: the kernel lets one write(2) of
 * the control file at a time reach r4fuse (FUSE holds the file's inode
 * lock over a write, and libfuse 3.14 cannot ask for parallel direct
 * writes), so no other write could join while it waits.  Commands run
 * at read(2) or close(2) arrive together.
 */
static void ctl_lead(const struct ctl_cmd *me)
{
	uint64_t now, t0 = br_mono_ns(), wait = me->cl->at_write ? 0 : G.batch_ns;
	uint64_t end = t0 + (wait < CTL_GATHER_MAX_NS ? wait : CTL_GATHER_MAX_NS);
	struct ctl_cmd *list;

	G.leading = true;
	while ((now = br_mono_ns()) < end && ctl_others(now))
		br_wait_until(&G.joined, end);
	list = G.head;
	G.head = NULL;
	G.tail = &G.head;
	t0 = br_mono_ns();
	/* (a commit is long: the others are read meanwhile, unless there are
	 * none to expect: handing the reading to another thread and taking it
	 * back costs a lone client two thread switches a command) */
	if (list->next || ctl_others(t0))
		br_may_block();
	ctl_batch(list);
	G.batch_ns = br_mono_ns() - t0;
	for (struct ctl_cmd *k = list; k; k = k->next) {
		ctl_waiting(k->c->pid, false);
		k->done = true;
	}
	G.leading = false;
	pthread_cond_broadcast(&G.done);
}

/*
 * Run the control file's R4L src as the caller (or cl's identity), a unit
 * of its own in a commit it may share with other processes' commands (as
 * the grouped POSIX changes, committed first); its values, or its
 * diagnostics, as text.  *changed says whether the commit changed the
 * volume (the kernel's caches are then stale).
 */
static int run_r4l(const struct caller *c, const char *src, size_t len, char **out, size_t *nout,
		   const struct ctl *cl, bool *changed)
{
	struct ctl_cmd me = {.c = c, .src = src, .len = len, .cl = cl};
	struct r4_run *r;
	FILE *f;

	if (B.ro) {
		ctl_batch(&me);	/* (nothing to share) */
	} else {
		*G.tail = &me;
		G.tail = &me.next;
		ctl_waiting(c->pid, true);
		pthread_cond_signal(&G.joined);
		while (!me.done) {
			if (!G.leading) {
				ctl_lead(&me);
				continue;
			}
			br_may_block();
			pthread_cond_wait(&G.done, &B.mu);
		}
		br_as(c);
	}
	*changed = me.changed;
	if (!(r = me.r))
		return me.rc;
	if (!(f = open_memstream(out, nout))) {
		r4_run_free(r);
		return -ENOMEM;
	}
	if (me.lost) {
		/* the shared commit failed: none of this command is there */
		char msg[128];

		snprintf(msg, sizeof(msg), "cannot commit: %s", r4_strerror(me.rc));
		if (cl->framed)
			fprintf(f, "r4-answer 1 %d %d 0 0 1\ndiag %d 0 0 %zu\n%s\n", (int)R4_RUN_RUNTIME,
				me.rc, (int)R4_DIAG_ERROR, strlen(msg), msg);
		else
			fprintf(f, "<control>: error: %s\n", msg);
	} else if (cl->framed) {
		r4_run_write(r, f);
	} else {
		for (size_t i = 0; i < r->nvalues; i++) {
			const struct r4_run_value *v = &r->values[i];

			if (v->err) {
				/* a value the caller may not read says so (a directory: nothing) */
				if (v->err != -EISDIR)
					fprintf(f, "cannot read '%s': %s\n", v->path,
						r4_strerror(v->err));
				continue;
			}
			fwrite(v->bytes, 1, v->size, f);
			if (v->size && v->bytes[v->size - 1] != '\n')
				fputc('\n', f);
		}
		if (me.rc)
			r4_diag_print(r->diags, f);
	}
	fclose(f);
	r4_run_free(r);
	return me.rc;
}

/* ---- pseudo files: one engine call each ---- */

/*
 * The engine acting for c with every check (on), or as the bridge's other
 * calls do (off: with -o default_permissions the kernel checks).  A pseudo
 * file is read and written with every check either way: the kernel
 * checks its own mode bits (sp_stat's), never what writing it does (a
 * chown, a chmod, access rules), as R4L acts for its caller.
 */
static void act_checked(const struct caller *c, bool on)
{
	r4_act_as(B.db, &c->who, on || !B.kernel_perms ? 0 : R4_AS_NOCHECK);
}

/*
 * Which pseudo file node n is: *obj the path of its object, *id the file.
 * Under an object the engine's name rule says it (an entry there, an
 * aggregate or invert served as its text, is its own ..body: *whole);
 * in the meta view a "..x" is always the pseudo file (-ENOENT: no such).
 */
static int pseudo_of(struct node *n, char **obj, enum r4_pseudo *id, bool *whole)
{
	const struct r4_pseudo_info *ps = NULL;
	struct node *p = n->parent;
	r4_file *f = NULL;
	int rc = 0;

	if (p->kind == K_OBJ)
		rc = r4_ns_resolve(p->obj, n->name, strlen(n->name), &f, &ps);
	else
		ps = r4_pseudo_lookup(n->name, strlen(n->name));
	*whole = f != NULL;
	r4_file_close(f);
	if (rc || (!*whole && !ps))
		return rc ? rc : -ENOENT;
	*id = ps ? ps->id : R4_PSEUDO_BODY;
	return node_path(ps ? p : n, obj);
}

/* The text of pseudo file id of the object at obj, as c reads it (as R4L
 * and the attributes read it: the engine's value). */
static int pseudo_read(const struct caller *c, const char *obj, enum r4_pseudo id, char **out,
		       size_t *n)
{
	int rc;

	act_checked(c, true);
	rc = r4_pseudo_read(B.db, obj, id, NULL, out, n, NULL);
	act_checked(c, false);
	return rc;
}

/*
 * ... as a read(2) of the file returns it, and its st_size counts it:
 * text ends in a newline, as /proc's and /sys's do, so that `cat d/..mode`
 * ends its line.  ..body (an object's contents, an aggregate's or invert's
 * text) is returned as it is; an empty text stays empty.
 */
static int pseudo_file_text(const struct caller *c, const char *obj, enum r4_pseudo id, char **out,
			    size_t *n)
{
	int rc = pseudo_read(c, obj, id, out, n);
	char *p;

	if (rc || id == R4_PSEUDO_BODY || !*n || (*out)[*n - 1] == '\n')
		return rc;
	if (!(p = realloc(*out, *n + 2))) {
		free(*out);
		*out = NULL;
		return -ENOMEM;
	}
	p[(*n)++] = '\n';
	p[*n] = 0;
	*out = p;
	return 0;
}

/* Pseudo file id of the object at obj <- v[0, n), as c: a unit of its own,
 * as R4L's "obj/..x <- v" is (the grouped POSIX changes commit first, and
 * a refusal undoes only what it did). */
static int pseudo_write(const struct caller *c, const char *obj, enum r4_pseudo id, const char *v,
			size_t n, bool *changed)
{
	int rc;

	if (B.ro)
		return -EROFS;
	if ((rc = br_commit()))
		return rc;
	act_checked(c, true);
	rc = r4_pseudo_write(B.db, obj, id, NULL, v, n, changed, NULL);
	act_checked(c, false);
	return rc;
}

/* ---- attributes and the meta view's names ---- */

/*
 * A meta view object is a directory.  A pseudo file is a regular file
 * owned as its object, with its times, the size of what a read returns,
 * and a mode that says what the table lets it do: 0444 read, 0222 write,
 * 0644 both, 0 neither (..new, ..link, ..range: parameter blocks, R4L's
 * alone).  One that cannot be read (..unlink, a fifo's ..body, one the
 * caller may not read, an invert's ..size while a part is missing) still
 * exists, of size 0.
 */
int sp_stat(const struct caller *c, struct node *n, struct r4_stat *st)
{
	char *path = NULL, *owner = NULL, *obj = NULL, *text = NULL;
	uint32_t perm = 0666;	/* (the control file's) */
	enum r4_pseudo id;
	size_t len = 0;
	bool whole;
	int rc;

	if ((rc = node_path(n, &path)))
		return rc;
	if (n->kind == K_META) {
		if (!(rc = reach(c, path, st))) {
			st->mode = S_IFDIR | (st->mode & 0777) | ((st->mode & 0444) >> 2);
			st->nlink = 2;
			st->size = 0;
		}
	} else if (!(rc = node_path(n->parent, &owner)) && !(rc = reach(c, owner, st))) {
		if (n->kind == K_PSEUDO && !(rc = pseudo_of(n, &obj, &id, &whole))) {
			unsigned f = r4_pseudo_lookup(r4_pseudo_name(id),
						      strlen(r4_pseudo_name(id)))->flags;

			perm = f & R4_PSF_READ ? (f & R4_PSF_WRITE ? 0644 : 0444)
			       : f & R4_PSF_WRITE ? 0222 : 0;
			if (f & R4_PSF_READ && pseudo_file_text(c, obj, id, &text, &len))
				len = 0;
		}
		if (!rc) {
			st->mode = S_IFREG | perm;
			st->nlink = 1;
			st->size = len;
			st->blocks = 0;
		}
	}
	if (!rc)
		st->ino = n->id;
	free(text);
	free(obj);
	free(owner);
	free(path);
	return rc;
}

/* ".", "..", then the names of list[0, n) (..list's text) but those. */
static int meta_names(const char *list, size_t n, char **names, size_t *len)
{
	FILE *f = open_memstream(names, len);

	if (!f)
		return -ENOMEM;
	fputs(".\n..\n", f);
	for (const char *s = list, *e; s < list + n; s = e + 1) {
		if (!(e = memchr(s, '\n', (size_t)(list + n - s))))
			break;
		if ((e - s != 1 || *s != '.') && (e - s != 2 || memcmp(s, "..", 2)))
			fwrite(s, 1, (size_t)(e - s + 1), f);
	}
	fclose(f);
	return 0;
}

/* An object's entries, then its pseudo names (..list). */
int sp_list(const struct caller *c, struct node *n, char **names, size_t *len)
{
	char *path = NULL, *list = NULL;
	size_t nlist = 0;
	int rc;

	if (!(rc = node_path(n, &path)) && !(rc = reach(c, path, NULL)) &&
	    !(rc = pseudo_read(c, path, R4_PSEUDO_LIST, &list, &nlist)))
		rc = meta_names(list, nlist, names, len);
	r4_free(list);
	free(path);
	return rc;
}

/* ---- pseudo files and the control file, open ---- */

/*
 * The umask of the calling process, for what it makes through the
 * control file and pseudo files: FUSE passes one only with the calls that
 * create (mkdir, mknod, create), so it is read from /proc (its Umask:
 * line, Linux 4.7) at each write(2), and kept with the text for the read,
 * flush or release that runs it (when the writer may be gone).  Unknown: 022.
 */
static void caller_umask(fuse_req_t req, struct caller *c)
{
	const struct fuse_ctx *fc = fuse_req_ctx(req);
	char path[64], line[128];
	unsigned um = 022;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)fc->pid);
	if (fc->pid > 0 && (f = fopen(path, "re"))) {
		while (fgets(line, sizeof(line), f))
			if (sscanf(line, "Umask: %o", &um) == 1)
				break;
		fclose(f);
	}
	c->who.umask = um & 0777;
}

void sp_caller(fuse_req_t req, const struct special *s, bool writes, struct caller *c)
{
	br_caller(req, c);
	if (s && writes)
		caller_umask(req, c);
	else if (s)
		c->who.umask = s->umask;	/* (a command run at its read, flush or release) */
}

/* The text of pseudo file or control file n, opened as fi says. */
int sp_open(struct node *n, struct fuse_file_info *fi, struct special **out)
{
	struct special *s = calloc(1, sizeof(*s));
	int rc;

	if (!s)
		return -ENOMEM;
	s->control = n->kind == K_CONTROL;
	if (!s->control && (rc = pseudo_of(n, &s->obj, &s->id, &s->whole))) {
		free(s);
		return rc;
	}
	s->wronly = (fi->flags & O_ACCMODE) == O_WRONLY;
	fi->direct_io = 1;	/* sizes are not known ahead */
	*out = s;
	return 0;
}

void sp_free(struct special *s)
{
	if (!s)
		return;
	free(s->in);
	free(s->out);
	free(s->obj);
	free(s);
}

/* ---- read, write, close ---- */

/* Run what was written to s: the control file's command, or the pseudo
 * file's new contents; the command's error, or the write's.  at_write:
 * by write(2), else by read(2) or close(2). */
static int flush(const struct caller *c, struct special *s, bool *changed, bool at_write)
{
	int rc = 0;

	if (s->err || !s->written)
		return s->err;
	s->written = false;
	free(s->out);
	s->out = NULL;
	s->nout = 0;
	if (s->control) {
		struct ctl cl = {.at_write = at_write};
		const char *src = s->in ? s->in : "";
		size_t n = s->nin;

		ctl_parse(c, &src, &n, &cl);
		rc = cl.repack ? rp_control(c, cl.repack, &s->out, &s->nout)
			       : run_r4l(c, src, n, &s->out, &s->nout, &cl, changed);
		free(cl.cwd);
		free(cl.repack);
		s->have_out = true;
		s->rpos = 0;	/* the answer is the diagnostics, read back */
	} else {
		rc = pseudo_write(c, s->obj, s->id, s->in ? s->in : "", s->nin, changed);
	}
	free(s->in);
	s->in = NULL;
	s->nin = 0;
	return rc;
}

int sp_flush(const struct caller *c, struct special *s, bool *changed)
{
	return flush(c, s, changed, false);
}

/* A command written runs first (its answer is what is read); a pseudo
 * file's text is read when first asked for, and again after a write. */
int sp_read(const struct caller *c, struct special *s, char *buf, size_t size, off_t off,
	    size_t *got, bool *changed)
{
	size_t at;
	int rc = 0;

	if (s->written)
		sp_flush(c, s, changed);
	if (!s->have_out && !s->control) {
		free(s->out);
		s->out = NULL;
		s->nout = 0;
		rc = pseudo_file_text(c, s->obj, s->id, &s->out, &s->nout);
		s->have_out = !rc;
	}
	at = s->control ? s->rpos : (size_t)off;
	if (!rc && at < s->nout) {
		*got = s->nout - at < size ? s->nout - at : size;
		memcpy(buf, s->out + at, *got);
		if (s->control)
			s->rpos += *got;
	}
	return rc;
}

/* Is the command written to s whole: a complete entry (LANGUAGE.md 2.5,
 * as r4sh decides) that a newline ends? */
static bool ctl_whole(const struct special *s)
{
	struct r4_lex_state ls;

	if (!s->nin || s->in[s->nin - 1] != '\n')
		return false;
	r4_lex_state(s->in, s->nin, &ls);
	return !ls.depth && !ls.open_quote && ls.can_end == 1;
}

/*
 * What write(2) says, so that `echo TEXT > FILE` (whose shell ignores
 * close(2)) sees a failure:
 *  - a pseudo file takes its value at once (echo 0999 > d/..mode fails);
 *  - an aggregate's text is applied whole at close, but a malformed line
 *    fails the write that brought it, and then nothing is applied;
 *  - the control file opened write-only runs its command once the text
 *    is a complete entry ending in a newline, and fails the write with
 *    its error; opened for reading too, when it is read, or closed unread.
 */
int sp_write(const struct caller *c, struct special *s, const char *buf, size_t n, off_t off,
	     bool *changed)
{
	size_t at = (size_t)off, end;
	int rc;

	if (s->err)
		return s->err;
	if (at < s->base)
		return -EINVAL;	/* into a command that ran already */
	off -= (off_t)s->base;
	end = (size_t)off + n;
	if (end > s->nin) {
		char *in = realloc(s->in, end + 1);

		if (!in)
			return -ENOMEM;
		s->in = in;
		memset(s->in + s->nin, 0, end - s->nin);
		s->nin = end;
	}
	memcpy(s->in + off, buf, n);
	s->written = true;
	s->umask = c->who.umask;
	s->have_out = false;
	if (s->whole) {
		s->err = r4_aggr_check(B.db, s->obj, s->in, s->nin);
		return s->err;
	}
	if (!s->control)
		return flush(c, s, changed, true);
	if (!s->wronly || !ctl_whole(s))
		return 0;
	rc = flush(c, s, changed, true);
	s->base = rc ? at : at + n;	/* a failed write(2) leaves the file offset */
	return rc;
}

/*
 * ---- extended attributes ----
 *
 * What users store (user.*, trusted.*, security.*) is the engine's: what
 * can be stored, the rules, the limits (r4_file_*xattr, one call on the
 * node's object; docs/semantics.md).  The meta view's directories, pseudo
 * files and the control file store none.  user.r4.NAME is the pseudo file
 * ..NAME, never stored.  Generic tools copy every attribute listxattr
 * names (cp -a, rsync -aX, tar --xattrs) and put back what they copied;
 * the pseudo attributes are not a file's data: copied out they put r4's
 * oid, key and plugin on host files; put back, user.r4.name renamed
 * rsync's temporary file (and rsync failed), and the read-only ones
 * failed the copy.  So:
 *  - listxattr names the stored attributes, and the pseudo ones only
 *    when -o list_pseudo_xattrs asks for them (getfattr -d);
 *  - getxattr reads any pseudo file on request (getfattr -n user.r4.mode);
 *  - setxattr sets only what chmod, chown and touch set: mode, uid (owner),
 *    gid, atime and mtime, with the same rules.  The name, the body and
 *    the rest are EPERM: an attribute a tool replays must not rename,
 *    rewrite or remove anything (the pseudo files by name, the meta view
 *    and the control file still reach them);
 *  - no pseudo attribute can be removed (EPERM).
 */

static const char *const xattr_names[] = {
	"uid", "gid", "mode", "type", "size", "nlink", "atime", "mtime", "ctime", "oid", "key",
	"plugin", "name", NULL,
};

/* The pseudo file of the attribute name (user.r4.mode: ..mode), or NULL. */
static const struct r4_pseudo_info *xattr_pseudo(const char *name)
{
	size_t k = strlen(XATTR);
	char dots[32];

	if (strncmp(name, XATTR, k) || strlen(name + k) + 3 > sizeof(dots))
		return NULL;
	sprintf(dots, "..%s", name + k);
	return r4_pseudo_lookup(dots, strlen(dots));
}

/* 0 when setxattr may set pseudo file ps, else the positive errno it
 * answers. */
static int xattr_settable(const struct r4_pseudo_info *ps)
{
	switch (ps->id) {
	case R4_PSEUDO_UID:
	case R4_PSEUDO_GID:
	case R4_PSEUDO_MODE:
	case R4_PSEUDO_ATIME:
	case R4_PSEUDO_MTIME:
		return 0;
	default:
		return EPERM;
	}
}

/* The path of the object whose pseudo files node id's attributes are. */
static int xattr_object(fuse_ino_t id, char **out)
{
	struct node *n = node_find(id);

	if (!n)
		return -ESTALE;
	if (n->kind == K_PSEUDO || n->kind == K_CONTROL)
		return -ENODATA;	/* (a pseudo file has no pseudo files) */
	return node_path(n, out);
}

/* The object of node id, which stores attributes: NULL with *rc, else. */
static struct node *xattr_node(fuse_ino_t id, int none, int *rc)
{
	struct node *n = node_find(id);

	*rc = !n ? -ESTALE : n->kind != K_OBJ ? none : 0;
	return *rc ? NULL : n;
}

/* The answer to a getxattr or listxattr of size: the size asked for, a
 * buffer too small (the engine said ERANGE), or the bytes. */
static void xattr_reply(fuse_req_t req, int rc, size_t size, const char *p, size_t n)
{
	if (rc)
		fuse_reply_err(req, rc);
	else if (!size)
		fuse_reply_xattr(req, n);
	else if (n > size)
		fuse_reply_err(req, ERANGE);
	else
		fuse_reply_buf(req, p, n);
}

void sp_getxattr(fuse_req_t req, fuse_ino_t id, const char *name, size_t size)
{
	const struct r4_pseudo_info *ps = xattr_pseudo(name);
	char *p = NULL, *text = NULL, *value = size ? malloc(size) : NULL;
	struct caller c;
	struct node *n;
	size_t len = 0;
	int rc;

	br_enter(req, &c);
	if (!ps) {
		if ((n = xattr_node(id, -ENODATA, &rc)))
			rc = size && !value ? -ENOMEM
			     : r4_file_getxattr(n->obj, name, value, size, &len);
		rc = fb_err("getxattr", n, rc);
	} else {
		if (!(rc = xattr_object(id, &p)))
			rc = pseudo_read(&c, p, ps->id, &text, &len);
		/* (a pseudo file of a pseudo file, or one the object lacks, is none) */
		rc = rc == -ENOENT || rc == -ENODATA ? ENODATA : fb_err("getxattr", NULL, rc);
	}
	br_unlock();
	xattr_reply(req, rc, size, ps ? text : value, len);
	r4_free(text);
	free(value);
	free(p);
}

void sp_setxattr(fuse_req_t req, fuse_ino_t id, const char *name, const char *value, size_t size,
		 int flags)
{
	const struct r4_pseudo_info *ps = xattr_pseudo(name);
	bool changed = false;
	struct caller c;
	struct node *n;
	char *p = NULL;
	int rc;

	if (ps && (rc = xattr_settable(ps))) {
		fuse_reply_err(req, rc);
		return;
	}
	br_enter(req, &c);
	if (!ps) {
		flags = (flags & XATTR_CREATE ? R4_XATTR_CREATE : 0) |
			(flags & XATTR_REPLACE ? R4_XATTR_REPLACE : 0) |
			(flags & ~(XATTR_CREATE | XATTR_REPLACE));
		if ((n = xattr_node(id, -EOPNOTSUPP, &rc)))
			CHANGE("setxattr", r4_file_setxattr(n->obj, name, value, size, flags));
		rc = fb_err("setxattr", n, rc);
	} else {
		if (!(rc = xattr_object(id, &p)))
			rc = pseudo_write(&c, p, ps->id, value, size, &changed);
		rc = rc == -ENODATA ? ENOTSUP : fb_err("setxattr", NULL, rc);	/* (of a pseudo file) */
	}
	br_unlock();
	/* the kernel's cached mode, owner, times; an access ACL sets the mode
	 * (the kernel forgets what it cached only with FUSE_CAP_POSIX_ACL) */
	if (changed || (!rc && !strncmp(name, "system.posix_acl_", 17)))
		node_invalidate_all();
	free(p);
	fuse_reply_err(req, rc);
}

/* The stored names, and with -o list_pseudo_xattrs the metadata names of
 * an object (..body and ..list are left out: they can be large). */
void sp_listxattr(fuse_req_t req, fuse_ino_t id, size_t size)
{
	size_t cap = R4_XATTR_LIST_MAX + 512, len = 0;
	char *list = malloc(cap);
	struct caller c;
	struct node *n;
	int rc = list ? 0 : ENOMEM;

	br_enter(req, &c);
	n = node_find(id);
	if (!rc && n && n->kind == K_OBJ)
		rc = fb_err("listxattr", n, r4_file_listxattr(n->obj, list, cap, &len));
	if (!rc && B.list_xattrs && n && n->kind != K_PSEUDO && n->kind != K_CONTROL)
		for (int i = 0; xattr_names[i]; i++)
			len += (size_t)sprintf(list + len, "%s%s", XATTR, xattr_names[i]) + 1;
	br_unlock();
	xattr_reply(req, rc, size, list, len);
	free(list);
}

void sp_removexattr(fuse_req_t req, fuse_ino_t id, const char *name)
{
	struct caller c;
	struct node *n;
	int rc;

	if (xattr_pseudo(name)) {
		fuse_reply_err(req, EPERM);	/* a pseudo file cannot go */
		return;
	}
	br_enter(req, &c);
	if ((n = xattr_node(id, -ENODATA, &rc)))
		CHANGE("removexattr", r4_file_removexattr(n->obj, name));
	rc = fb_err("removexattr", n, rc);
	br_unlock();
	fuse_reply_err(req, rc);
}
