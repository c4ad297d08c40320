/*
 * r4call.c - the reiser4() call for programs (lib/r4call.h, docs/library.md).
 *
 * Both ways end in a struct r4_run: on an image, r4_run's own; on a
 * mount, the control file's framed answer read back with r4_run_read
 * (as r4sh on a mount does, cli/remote.c).  The run is then copied into
 * one block of memory, the caller's struct reiser4_result.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include "r4_lang.h"
#include "r4call.h"

#define FUSE_MAGIC 0x65735546		/* statfs f_type of every FUSE mount */
#define CONTROL "..reiser4"		/* the control file, at the mount's root */

/* Why the command did not run, when it did not (status REISER4_NOTRUN). */
struct why {
	int err;			/* positive errno */
	char msg[4600];
};

__attribute__((format(printf, 3, 4)))
static int fail(struct why *w, int err, const char *fmt, ...)
{
	char msg[sizeof(w->msg)];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);	/* (the arguments may be w->msg) */
	va_end(ap);
	w->err = err;
	memcpy(w->msg, msg, sizeof(msg));
	return -err;
}

/* ---- on an image ---- */

/* The engine's last error message while opening (it names what broke). */
static void keep_log(void *ctx, int level, const char *msg)
{
	struct why *w = ctx;

	if (level <= R4_LOG_ERR)
		snprintf(w->msg, sizeof(w->msg), "%s", msg);
}

/* The umask, read without changing it (umask(2) would, for a moment,
 * for every thread). */
static uint32_t current_umask(void)
{
	FILE *f = fopen("/proc/self/status", "re");
	char line[128];
	unsigned m = 022;

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "Umask: %o", &m) == 1)
			break;
	if (f)
		fclose(f);
	return m & 0777;
}

/* Run src on the image at path as the calling process (its uid, gids and
 * umask: what the bridge would check on a mount), from "/". */
static int on_image(const char *path, const char *src, size_t len, struct r4_run **run,
		    struct why *w)
{
	struct r4_open_opts oo = {.rw = true, .log = keep_log, .log_ctx = w};
	struct r4_run_opts ro = {.name = "<reiser4>", .exec = {.read_objects = true}};
	uint32_t *groups = NULL;
	gid_t *g = NULL;
	int n = getgroups(0, NULL), rc;
	r4_db *db;

	if (n > 0 && (!(g = calloc((size_t)n, sizeof(*g))) ||
		      !(groups = calloc((size_t)n, sizeof(*groups))))) {
		free(g);
		return -ENOMEM;
	}
	if (n > 0 && (n = getgroups(n, g)) < 0)
		n = 0;
	for (int i = 0; i < n; i++)
		groups[i] = g[i];
	free(g);
	ro.exec.who = (struct r4_ident){.uid = getuid(), .gid = getgid(), .groups = groups,
					.ngroups = n > 0 ? (size_t)n : 0,
					.umask = current_umask()};
	w->msg[0] = 0;
	if ((rc = r4_open(path, &oo, &db))) {
		struct r4_holder h;

		free(groups);
		if (rc == -ENOMEM)
			return rc;
		if (rc == -EBUSY && !r4_holder_find(path, &h))
			return fail(w, EBUSY, "R4_IMAGE %s: %s", path, h.what);
		if (w->msg[0])
			return fail(w, -rc, "R4_IMAGE %s: %s", path, w->msg);
		return fail(w, -rc, "R4_IMAGE %s: %s", path, r4_strerror(rc));
	}
	rc = r4_run(db, src, len, &ro, run);
	free(groups);
	if (*run) {
		int s = r4_sync(db);

		if (s && !rc) {
			r4_run_free(*run);
			*run = NULL;
			rc = fail(w, -s, "R4_IMAGE %s: cannot write it out: %s", path, r4_strerror(s));
		}
	}
	r4_close(db);
	return rc;
}

/* ---- on a mount ---- */

/*
 * The current directory's path.  getcwd(2) fails with ENOENT where the
 * kernel has unhashed the directory's entry, which an older r4fuse's
 * invalidation did to every cached name after a change through the
 * control file (r4fuse now keeps the names a change left as they were):
 * the path is then the kernel's own (" (deleted)" added), and looking it
 * up hashes the directory again.
 */
static char *current_dir(void)
{
	static const char deleted[] = " (deleted)";
	char *dir = getcwd(NULL, 0), buf[PATH_MAX + sizeof(deleted)];
	struct stat a, b;
	ssize_t n;

	if (dir || errno != ENOENT)
		return dir;
	n = readlink("/proc/self/cwd", buf, sizeof(buf) - 1);
	if (n > (ssize_t)strlen(deleted) && !strcmp(buf + n - strlen(deleted), deleted))
		n -= (ssize_t)strlen(deleted);
	if (n <= 0 || buf[0] != '/')
		return errno = ENOENT, NULL;
	buf[n] = 0;
	if (stat(buf, &a) || stat(".", &b) || a.st_dev != b.st_dev || a.st_ino != b.st_ino)
		return errno = ENOENT, NULL;
	return strdup(buf);
}

/*
 * The r4fuse mount holding the current directory: its root in *root, the
 * current directory below it ("/" or "/a/b") in *cwd (both malloc'd).
 * The root is the last directory up from the current one on the same
 * device; it is a mount of ours if it is FUSE and has the control file.
 */
static int find_mount(char **root, char **cwd, struct why *w)
{
	char ctl[PATH_MAX + sizeof(CONTROL) + 1], *dir = current_dir();
	struct stat here, up, st;
	struct statfs sf;
	size_t n;

	if (!dir)
		return fail(w, errno, "cannot find the current directory: %s", strerror(errno));
	if (stat(dir, &here)) {
		fail(w, errno, "%s: %s", dir, strerror(errno));
		free(dir);
		return -w->err;
	}
	/* dir[0..n) is the highest directory yet on the current one's device */
	n = strlen(dir);
	while (n > 1) {
		size_t at = (size_t)((char *)memrchr(dir, '/', n) - dir);
		bool same;
		char c;

		at = at ? at : 1;
		c = dir[at];
		dir[at] = 0;
		same = !stat(dir, &up) && up.st_dev == here.st_dev;
		dir[at] = c;
		if (!same)
			break;
		n = at;
	}
	*cwd = strdup(n == 1 ? dir : dir[n] ? dir + n : "/");
	dir[n] = 0;
	*root = dir;
	if (!*cwd) {
		free(dir);
		return -ENOMEM;
	}
	snprintf(ctl, sizeof(ctl), "%s/%s", n == 1 ? "" : dir, CONTROL);
	if (!statfs(dir, &sf) && sf.f_type == FUSE_MAGIC && !stat(ctl, &st) && S_ISREG(st.st_mode))
		return 0;
	free(*root);
	free(*cwd);
	return fail(w, ENOENT, "R4_IMAGE is not set and no r4 mount holds the current directory");
}

/* Write all of buf to fd. */
/*
 * Run src through the control file of the mount holding the current
 * directory: the pragmas ask for the framed answer and start relative
 * paths here; the bridge runs it as this process (docs/r4fuse.md).
 */
static int on_mount(const char *src, size_t len, struct r4_run **run, struct why *w)
{
	char *root = NULL, *cwd = NULL, *head = NULL, *ans = NULL, ctl[PATH_MAX + 16];
	size_t hn = 0, an = 0;
	FILE *h;
	int rc;

	if ((rc = find_mount(&root, &cwd, w)))
		return rc;
	if (strchr(cwd, '\n')) {
		rc = fail(w, EINVAL, "%s: the current directory's name holds a newline", cwd);
		goto out;
	}
	if (!(h = open_memstream(&head, &hn))) {
		rc = -ENOMEM;
		goto out;
	}
	fprintf(h, "# r4 framed\n");
	if (strcmp(cwd, "/"))
		fprintf(h, "# r4 cwd %s\n", cwd);
	if (fclose(h)) {
		rc = -ENOMEM;
		goto out;
	}
	snprintf(ctl, sizeof(ctl), "%s/%s", strcmp(root, "/") ? root : "", CONTROL);
	if ((rc = r4_wire_ask(ctl, head, hn, src, len, &ans, &an))) {
		rc = rc == -ENOMEM ? rc : fail(w, -rc, "%s: %s", ctl, strerror(-rc));
		goto out;
	}
	if ((rc = r4_run_read(ans, an, "<reiser4>", src, len, run)))
		rc = rc == -ENOMEM ? rc : fail(w, -rc, "%s: %s", ctl,
					       "the answer is not the framed form");
	else
		rc = (*run)->rc;
out:
	free(ans);
	free(head);
	free(root);
	free(cwd);
	return rc;
}

/* ---- the result: one block ---- */

static const int status_of[] = {
	[R4_RUN_OK] = REISER4_OK, [R4_RUN_SYNTAX] = REISER4_SYNTAX,
	[R4_RUN_CHECK] = REISER4_CHECK, [R4_RUN_RUNTIME] = REISER4_RUNTIME,
};

/* Copy n bytes and a NUL to *p, advancing it. */
static const char *put(char **p, const char *s, size_t n)
{
	char *at = *p;

	if (n)
		memcpy(at, s, n);
	at[n] = 0;
	*p += n + 1;
	return at;
}

/* run (or, with run NULL, w) as a result; NULL on ENOMEM. */
static struct reiser4_result *result(const struct r4_run *run, const struct why *w)
{
	size_t nv = run ? run->nvalues : 0, nd = run ? r4_diag_count(run->diags) : 1, size;
	char *report = NULL, *p;
	size_t rn = 0;
	struct reiser4_result *r;
	struct reiser4_value *v;
	struct reiser4_diag *d;
	FILE *f = open_memstream(&report, &rn);

	if (!f)
		return NULL;
	if (run)
		r4_diag_print(run->diags, f);
	else
		fprintf(f, "reiser4: %s\n", w->msg);
	if (fclose(f))
		return NULL;
	size = sizeof(*r) + nv * sizeof(*v) + nd * sizeof(*d) + rn + 1;
	for (size_t i = 0; i < nv; i++)
		size += run->values[i].size + 1 +
			(run->values[i].path ? strlen(run->values[i].path) + 1 : 0);
	for (size_t i = 0; run && i < nd; i++)
		size += strlen(r4_diag_get(run->diags, i)->msg) + 1;
	if (!run)
		size += strlen(w->msg) + 1;
	if (!(r = calloc(1, size))) {
		free(report);
		return NULL;
	}
	v = (struct reiser4_value *)(r + 1);
	d = (struct reiser4_diag *)(v + nv);
	p = (char *)(d + nd);
	*r = (struct reiser4_result){.nvalues = nv, .values = v, .ndiags = nd, .diags = d};
	r->report = put(&p, report, rn);
	free(report);
	if (!run) {
		r->status = REISER4_NOTRUN;
		r->err = w->err;
		d[0] = (struct reiser4_diag){.err = w->err, .msg = put(&p, w->msg, strlen(w->msg))};
		return r;
	}
	r->status = status_of[run->stage];
	r->err = -run->rc;
	for (size_t i = 0; i < nv; i++) {
		const struct r4_run_value *s = &run->values[i];

		v[i] = (struct reiser4_value){.len = s->size, .err = -s->err, .off = s->off,
					      .span = s->len};
		v[i].bytes = put(&p, s->bytes, s->size);
		if (s->path)
			v[i].path = put(&p, s->path, strlen(s->path));
		r4_diag_position(run->diags, s->off, &v[i].line, &v[i].col);
	}
	for (size_t i = 0; i < nd; i++) {
		const struct r4_diag *s = r4_diag_get(run->diags, i);

		d[i] = (struct reiser4_diag){.err = s->sev == R4_DIAG_NOTE ? 0 : r->err,
					     .off = s->loc.off, .span = s->loc.len};
		d[i].msg = put(&p, s->msg, strlen(s->msg));
		r4_diag_position(run->diags, s->loc.off, &d[i].line, &d[i].col);
	}
	return r;
}

int reiser4(const char *cmd, size_t len, struct reiser4_result **out)
{
	const char *image = getenv("R4_IMAGE");
	struct r4_run *run = NULL;
	struct why w = {0};
	int rc;

	*out = NULL;
	if (image && *image)
		rc = on_image(image, cmd, len, &run, &w);
	else
		rc = on_mount(cmd, len, &run, &w);
	if (rc == -ENOMEM && !run) {
		errno = ENOMEM;
		return -1;
	}
	*out = result(run, &w);
	r4_run_free(run);
	if (!*out) {
		errno = ENOMEM;
		return -1;
	}
	if ((*out)->status == REISER4_OK)
		return 0;
	errno = (*out)->err;
	return -1;
}

void reiser4_result_free(struct reiser4_result *r)
{
	free(r);
}
