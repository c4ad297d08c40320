/*
 * remote.c - what r4sh works on: an image it opened, or a live r4fuse
 * mount.  On a mount, R4L goes through the control file MNT/..reiser4
 * with a framed answer (parser/wire.c), run by the bridge as one unit with
 * this process's uid and gids; the verbs' reads are POSIX calls on the
 * mount.  What needs the image itself (.info, .fsck, .tree, begin, the
 * --atomic scripts) says so.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "sh.h"

#define FUSE_MAGIC 0x65735546	/* statfs f_type of every FUSE mount */

bool sh_is_mount(const char *dir)
{
	char ctl[PATH_MAX];
	struct statfs sf;
	struct stat st;

	if (stat(dir, &st) || !S_ISDIR(st.st_mode) || statfs(dir, &sf) ||
	    sf.f_type != FUSE_MAGIC)
		return false;
	snprintf(ctl, sizeof(ctl), "%s/..reiser4", dir);
	return !stat(ctl, &st) && S_ISREG(st.st_mode);
}

void sh_say_busy(const char *prog, const char *image, const char *hint)
{
	struct r4_holder h;

	if (r4_holder_find(image, &h))
		snprintf(h.what, sizeof(h.what), "in use by another program");
	fprintf(stderr, "%s: %s: %s%s%s\n", prog, image, h.what, hint ? "; " : "", hint ? hint : "");
}

int sh_partition_number(const char *prog, const char *arg, unsigned *out)
{
	char *end;
	unsigned long n = arg ? strtoul(arg, &end, 10) : 0;

	if (!arg || !*arg || *end || !n || n > 65535 || arg[0] == '-') {
		fprintf(stderr, "%s: --partition %s%s%s: want a partition number (1, 2, ...)\n",
			prog, arg ? "'" : "", arg ? arg : "needs N", arg ? "'" : "");
		return -1;
	}
	*out = (unsigned)n;
	return 0;
}

void sh_say_where(void *ctx, int level, const char *msg)
{
	if (level <= R4_LOG_ERR && !strstr(msg, " at block ") && strncmp(msg, "corrupt image", 13))
		fprintf(stderr, "%s: %s\n", (const char *)ctx, msg);
}

/* MNT + path, in buf. */
static const char *on_mount(const struct sh *sh, const char *path, char *buf, size_t n)
{
	snprintf(buf, n, "%s%s", sh->mount, strcmp(path, "/") ? path : "");
	return buf;
}

int sh_stat(struct sh *sh, const char *path, struct r4_stat *st)
{
	char p[PATH_MAX * 2];
	struct stat s;

	if (!sh->mount)
		return r4_stat(sh->db, path, st);
	if (lstat(on_mount(sh, path, p, sizeof(p)), &s))
		return -errno;
	*st = (struct r4_stat){.ino = s.st_ino, .mode = s.st_mode, .nlink = (uint32_t)s.st_nlink,
			       .uid = s.st_uid, .gid = s.st_gid, .size = (uint64_t)s.st_size,
			       .blocks = (uint64_t)s.st_blocks, .rdev = s.st_rdev,
			       .atime = s.st_atim, .mtime = s.st_mtim, .ctime = s.st_ctim};
	return 0;
}

int sh_readlink(struct sh *sh, const char *path, char *buf, size_t n, size_t *len)
{
	char p[PATH_MAX * 2];
	ssize_t r;

	if (!sh->mount)
		return r4_readlink(sh->db, path, buf, n, len);
	if ((r = readlink(on_mount(sh, path, p, sizeof(p)), buf, n)) < 0)
		return -errno;
	*len = (size_t)r;
	return 0;
}

int sh_readdir(struct sh *sh, const char *path, r4_dirent_fn fn, void *ctx)
{
	struct r4_dirpos pos = {0};
	char p[PATH_MAX * 2];
	struct dirent *e;
	DIR *d;
	int rc = 0;

	if (!sh->mount)
		return r4_readdir(sh->db, path, &pos, fn, ctx);
	if (!(d = opendir(on_mount(sh, path, p, sizeof(p)))))
		return -errno;
	while (!rc && (errno = 0, e = readdir(d)))
		rc = fn(ctx, e->d_name, strlen(e->d_name), e->d_ino,
			e->d_type == DT_DIR ? S_IFDIR : e->d_type == DT_LNK ? S_IFLNK
			: e->d_type == DT_REG ? S_IFREG : e->d_type == DT_FIFO ? S_IFIFO
			: e->d_type == DT_SOCK ? S_IFSOCK : e->d_type == DT_CHR ? S_IFCHR
			: e->d_type == DT_BLK ? S_IFBLK : 0);
	if (!e && errno)
		rc = -errno;
	closedir(d);
	return rc < 0 ? rc : 0;
}

int sh_rename(struct sh *sh, const char *from, const char *to)
{
	char a[PATH_MAX * 2], b[PATH_MAX * 2];

	if (!sh->mount)
		return r4_rename(sh->db, from, to, R4_RENAME_NOREPLACE);
	on_mount(sh, from, a, sizeof(a));
	on_mount(sh, to, b, sizeof(b));
	/* no replace: link-free check, then the move (a race can still replace) */
	if (!access(b, F_OK))
		return -EEXIST;
	return rename(a, b) ? -errno : 0;
}

/* Write all of buf to fd. */
int sh_mount_ask(const char *mount, const char *head, size_t hn, const char *src, size_t len,
		 char **ans, size_t *an)
{
	char ctl[PATH_MAX + 16];

	snprintf(ctl, sizeof(ctl), "%s/..reiser4", mount);
	return r4_wire_ask(ctl, head, hn, src, len, ans, an);
}

int sh_remote_run(struct sh *sh, const char *src, size_t len, const struct r4_run_opts *ro,
		  struct r4_run **out)
{
	char *head = NULL, *ans = NULL;
	size_t hn = 0, an = 0;
	FILE *h = open_memstream(&head, &hn);
	int rc;

	*out = NULL;
	if (!h)
		return -ENOMEM;
	/* the pragmas: R4L comments the bridge reads and removes */
	fprintf(h, "# r4 framed\n");
	if (ro->per_statement)
		fprintf(h, "# r4 per-statement\n");
	if (ro->exec.cwd && strcmp(ro->exec.cwd, "/"))
		fprintf(h, "# r4 cwd %s\n", ro->exec.cwd);
	if (sh->who_name[0]) {
		const struct r4_ident *w = &ro->exec.who;

		fprintf(h, "# r4 as %u:%u", w->uid, w->gid);
		for (size_t i = 0; i < w->ngroups; i++)
			fprintf(h, ",%u", w->groups[i]);
		fprintf(h, " %o\n", w->umask);
	}
	fclose(h);
	rc = sh_mount_ask(sh->mount, head, hn, src, len, &ans, &an);
	free(head);
	if (!rc)
		rc = r4_run_read(ans, an, ro->name, src, len, out);
	free(ans);
	return rc ? rc : (*out)->rc;
}
