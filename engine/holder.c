/*
 * holder.c - who holds an image: the answer behind every "in use by ..."
 * refusal (r4_holder_find in r4.h; the lock itself is io_file.c's).
 *
 * The lock is an open-file-description lock, and the kernel reports no
 * pid for those (F_OFD_GETLK gives -1), so the holder is found the long
 * way, as lslocks does:
 *  1. F_OFD_GETLK on a descriptor of our own says whether a writer holds
 *     the image at all;
 *  2. /proc/PID/fd/N naming the same file (dev and inode; a block device
 *     by its device number) whose /proc/PID/fdinfo/N shows a `lock:` line
 *     with OFDLCK and WRITE is the holder, /proc/PID/comm its name;
 *  3. /proc/self/mountinfo gives the mount point: a fuse.r4 mount whose
 *     source is the image's real path (r4fuse's plain mount), a mount of a
 *     loop device whose backing file is the image (r4fuse's fuseblk
 *     mount, docs/r4fuse.md), or a mount of the block device itself.
 * A block device mounted by the kernel, or opened O_EXCL by some program,
 * is held too, with or without a lock.
 *
 * Everything here is best effort: a process we may not look into (another
 * user's, another pid namespace) leaves the pid unknown, and the answer
 * can be stale the moment it is given.  The message is built here alone,
 * so every program words a refusal the same way.
 */
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "r4_int.h"

/* The file the image is: what /proc/PID/fd links and loop devices are
 * compared with. */
struct target {
	struct stat st;
	char real[PATH_MAX];	/* realpath, or the path as given */
};

static bool same_file(const struct target *t, const struct stat *st)
{
	if (S_ISBLK(t->st.st_mode))
		return S_ISBLK(st->st_mode) && st->st_rdev == t->st.st_rdev;
	return st->st_dev == t->st.st_dev && st->st_ino == t->st.st_ino;
}

/* Does an open file description with an OFD write lock show in this
 * fdinfo file? ("lock:\t1: OFDLCK ADVISORY  WRITE -1 fe:00:123 0 EOF") */
static bool fdinfo_write_locked(const char *path)
{
	char line[256];
	bool yes = false;
	FILE *f = fopen(path, "re");

	if (!f)
		return false;
	while (!yes && fgets(line, sizeof(line), f))
		yes = !strncmp(line, "lock:", 5) && strstr(line, "OFDLCK") && strstr(line, " WRITE ");
	fclose(f);
	return yes;
}

/* Does process pid hold the image's lock through one of its descriptors? */
static bool pid_holds(const struct target *t, const char *pid)
{
	char path[2 * NAME_MAX + 32];
	struct dirent *e;
	struct stat st;
	bool yes = false;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%s/fd", pid);
	if (!(d = opendir(path)))
		return false;	/* gone, or not ours to look into */
	while (!yes && (e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/%s/fd/%s", pid, e->d_name);
		if (stat(path, &st) || !same_file(t, &st))
			continue;
		snprintf(path, sizeof(path), "/proc/%s/fdinfo/%s", pid, e->d_name);
		yes = fdinfo_write_locked(path);
	}
	closedir(d);
	return yes;
}

/* The lock's holder: pid and name into out (left unknown if not found).
 * After a fork both processes share the description; the newest (the
 * highest pid, a daemon's child) is named. */
static void find_holder(const struct target *t, struct r4_holder *out)
{
	char path[2 * NAME_MAX + 32];
	struct dirent *e;
	long best = 0;
	DIR *d;
	FILE *f;

	if (!(d = opendir("/proc")))
		return;
	while ((e = readdir(d))) {
		char *end;
		long pid = strtol(e->d_name, &end, 10);

		if (*end || pid <= best || !pid_holds(t, e->d_name))
			continue;
		best = pid;
	}
	closedir(d);
	if (!best)
		return;
	out->pid = (pid_t)best;
	snprintf(path, sizeof(path), "/proc/%ld/comm", best);
	if ((f = fopen(path, "re"))) {
		if (fgets(out->prog, sizeof(out->prog), f))
			out->prog[strcspn(out->prog, "\n")] = 0;
		fclose(f);
	}
}

/* mountinfo's octal escapes (\040 for a space) undone in place. */
static void unescape(char *s)
{
	char *o = s;

	for (; *s; s++) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] >= '0' && s[2] <= '7' &&
		    s[3] >= '0' && s[3] <= '7') {
			*o++ = (char)((s[1] - '0') << 6 | (s[2] - '0') << 3 | (s[3] - '0'));
			s += 3;
		} else {
			*o++ = *s;
		}
	}
	*o = 0;
}

/* Is the block device maj:min a loop device backed by the image? */
static bool loop_of(const struct target *t, unsigned maj, unsigned min)
{
	char path[96], back[PATH_MAX + 16];
	struct stat st;
	size_t n;
	FILE *f;

	snprintf(path, sizeof(path), "/sys/dev/block/%u:%u/loop/backing_file", maj, min);
	if (!(f = fopen(path, "re")))
		return false;	/* not a loop device, or not bound */
	n = fgets(back, sizeof(back), f) ? strcspn(back, "\n") : 0;
	fclose(f);
	back[n] = 0;
	if (!n)
		return false;
	/* (the path the kernel remembers; the inode settles renames and links) */
	return !strcmp(back, t->real) || (!stat(back, &st) && same_file(t, &st));
}

/* One line of /proc/self/mountinfo, split in place:
 * ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTIONS... - FSTYPE SOURCE SUPER. */
struct mline {
	char *point, *opts, *type, *src;	/* point and src unescaped */
	unsigned maj, min;
};

static bool mline_split(char *line, struct mline *m)
{
	char *sep = strstr(line, " - "), *fld[6] = {0}, *save;

	if (!sep)
		return false;
	*sep = 0;
	fld[0] = strtok_r(line, " ", &save);
	for (int i = 1; i < 6 && fld[i - 1]; i++)
		fld[i] = strtok_r(NULL, " ", &save);
	if (!fld[5] || sscanf(fld[2], "%u:%u", &m->maj, &m->min) != 2)
		return false;
	m->type = strtok_r(sep + 3, " ", &save);
	m->src = strtok_r(NULL, " ", &save);
	if (!m->type || !m->src)
		return false;
	unescape(m->src);
	unescape(fld[4]);
	m->point = fld[4];
	m->opts = fld[5];
	return true;
}

/* The image's mount, if any: mount point and type into out; true when the
 * kernel holds the image itself (a block device mounted). */
static bool find_mount(const struct target *t, struct r4_holder *out)
{
	char *line = NULL;
	size_t cap = 0;
	bool kernel = false;
	FILE *f = fopen("/proc/self/mountinfo", "re");

	if (!f)
		return false;
	while (!out->mount[0] && getline(&line, &cap, f) > 0) {
		struct mline m;
		bool hit;

		if (!mline_split(line, &m))
			continue;
		if (S_ISBLK(t->st.st_mode))
			hit = makedev(m.maj, m.min) == t->st.st_rdev;
		else
			hit = (!strcmp(m.type, "fuse.r4") && !strcmp(m.src, t->real)) ||
			      (m.maj && loop_of(t, m.maj, m.min));
		if (!hit)
			continue;
		snprintf(out->mount, sizeof(out->mount), "%s", m.point);
		snprintf(out->fstype, sizeof(out->fstype), "%s", m.type);
		kernel = S_ISBLK(t->st.st_mode);
	}
	free(line);
	fclose(f);
	return kernel;
}

bool r4_mount_ro(const char *point)
{
	char *line = NULL;
	size_t cap = 0;
	bool ro = false;
	FILE *f = fopen("/proc/self/mountinfo", "re");

	if (!f)
		return false;
	/* (the last mount on point is the one seen there) */
	while (getline(&line, &cap, f) > 0) {
		struct mline m;

		if (mline_split(line, &m) && !strcmp(m.point, point))
			ro = !strcmp(m.opts, "ro") || !strncmp(m.opts, "ro,", 3);
	}
	free(line);
	fclose(f);
	return ro;
}

/* Is a write lock on the image's whole file held by someone? */
static bool lock_held(const char *path)
{
	struct flock fl = {.l_type = F_WRLCK, .l_whence = SEEK_SET};
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	bool held;

	if (fd < 0)
		return false;
	held = !fcntl(fd, F_OFD_GETLK, &fl) && fl.l_type != F_UNLCK;
	close(fd);
	return held;
}

/* A block device another program opened O_EXCL (EBUSY on ours). */
static bool bdev_claimed(const char *path)
{
	int fd = open(path, O_RDONLY | O_EXCL | O_CLOEXEC | O_NONBLOCK);

	if (fd >= 0)
		close(fd);
	return fd < 0 && errno == EBUSY;
}

/* The one wording of a refusal. */
static void describe(struct r4_holder *h)
{
	size_t n;

	if (h->pid)
		n = (size_t)snprintf(h->what, sizeof(h->what), "in use by %s (pid %d)",
				     h->prog[0] ? h->prog : "a process", (int)h->pid);
	else if (h->mount[0] && strncmp(h->fstype, "fuse", 4))
		n = (size_t)snprintf(h->what, sizeof(h->what), "in use by the kernel (%s)",
				     h->fstype);
	else
		n = (size_t)snprintf(h->what, sizeof(h->what), "in use by another program");
	if (h->mount[0] && n < sizeof(h->what))
		snprintf(h->what + n, sizeof(h->what) - n, ", mounted at %s", h->mount);
}

int r4_holder_find(const char *path, struct r4_holder *out)
{
	struct target t;

	memset(out, 0, sizeof(*out));
	if (stat(path, &t.st) < 0)
		return -errno;
	if (!realpath(path, t.real))
		snprintf(t.real, sizeof(t.real), "%s", path);
	out->held = lock_held(path);
	if (out->held)
		find_holder(&t, out);
	if (find_mount(&t, out))
		out->held = true;
	if (!out->held && S_ISBLK(t.st.st_mode))
		out->held = bdev_claimed(path);
	describe(out);
	return 0;
}
