/*
 * test_lock.c - one writer per image (engine/io_file.c, holder.c): a
 * second read-write r4_open of the same file is -EBUSY while a read-only
 * one works; r4_mkfs takes the lock too and, asked to, refuses to
 * overwrite a volume; the lock outlives the process that took it when a child
 * forked after the open still holds the descriptor (a daemon), and
 * r4_holder_find names that child.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "io.h"
#include "t.h"

static char dir[128], img[320];

static void my_comm(char *buf, size_t n)
{
	FILE *f = fopen("/proc/self/comm", "r");

	buf[0] = 0;
	if (f) {
		if (fgets(buf, (int)n, f))
			buf[strcspn(buf, "\n")] = 0;
		fclose(f);
	}
}

static void test_second_open(void)
{
	struct r4_open_opts rw = {.rw = true}, ro = {0};
	struct r4_mkfs_opts mo;
	struct r4_holder h;
	r4_db *a = NULL, *b = NULL;
	char comm[64], want[128];

	CHECK_RC(r4_open(img, &rw, &a));
	CHECK_EQ(r4_open(img, &rw, &b), -EBUSY);	/* even within one process */
	CHECK(!b);
	CHECK_RC(r4_open(img, &ro, &b));		/* readers need no lock */
	r4_close(b);
	b = NULL;
	r4_mkfs_defaults(&mo);
	CHECK_EQ(r4_mkfs(img, 16u << 20, &mo), -EBUSY);
	CHECK_RC(r4_stat(a, "/", &(struct r4_stat){0}));	/* mkfs changed nothing */

	CHECK_RC(r4_holder_find(img, &h));
	my_comm(comm, sizeof(comm));
	CHECK(h.held);
	CHECK_EQ(h.pid, getpid());
	CHECK(!strcmp(h.prog, comm));
	CHECK(!h.mount[0]);
	snprintf(want, sizeof(want), "in use by %s (pid %d)", comm, (int)getpid());
	CHECK(!strcmp(h.what, want));

	r4_close(a);
	CHECK_RC(r4_holder_find(img, &h));
	CHECK(!h.held);
	CHECK(!strcmp(h.what, "in use by another program"));
	CHECK_RC(r4_open(img, &rw, &b));		/* free again */
	r4_close(b);
	CHECK_EQ(r4_holder_find("/nonexistent/x.img", &h), -ENOENT);
}

static void test_mkfs_refuses(void)
{
	struct r4_mkfs_opts mo;
	char other[160];
	struct stat st;

	r4_mkfs_defaults(&mo);
	mo.no_overwrite = true;
	CHECK_EQ(r4_mkfs(img, 16u << 20, &mo), -EEXIST);	/* a volume is there */
	snprintf(other, sizeof(other), "%s/new.img", dir);
	CHECK_RC(r4_mkfs(other, 16u << 20, &mo));		/* made, at its size */
	CHECK(!stat(other, &st) && st.st_size == 16 << 20);
	CHECK_EQ(r4_mkfs(other, 16u << 20, &mo), -EEXIST);
	CHECK_RC(r4_mkfs(other, 16u << 20, NULL));		/* the library overwrites */
	unlink(other);
}

/* The I/O layer's part: a file made on request, the lock on the handle. */
static void test_io_lock(void)
{
	struct r4_io *a = NULL, *b = NULL;
	char p[160];

	snprintf(p, sizeof(p), "%s/io.img", dir);
	CHECK_EQ(r4_io_file_open(p, R4_IO_RW, &a), -ENOENT);
	CHECK_EQ(r4_io_file_open(p, R4_IO_CREATE, &a), -ENOENT);	/* (read-only: never made) */
	CHECK_RC(r4_io_file_open(p, R4_IO_RW | R4_IO_CREATE, &a));
	CHECK_EQ(r4_io_file_open(p, R4_IO_RW | R4_IO_CREATE, &b), -EBUSY);
	CHECK_RC(r4_io_file_open(p, 0, &b));
	r4_io_close(b);
	r4_io_close(a);
	CHECK_RC(r4_io_file_open(p, R4_IO_RW, &a));
	r4_io_close(a);
	unlink(p);
}

/* Wait (up to 10 s) until a read-write open works; 0 or its last error. */
static int open_when_free(void)
{
	struct r4_open_opts rw = {.rw = true};
	r4_db *db = NULL;
	int rc = -EBUSY;

	for (int i = 0; i < 1000 && rc == -EBUSY; i++) {
		if ((rc = r4_open(img, &rw, &db)) == -EBUSY)
			usleep(10000);
	}
	r4_close(db);
	return rc;
}

/*
 * A daemon's shape: the child opens the image, forks a grandchild and
 * exits at once, without closing anything.  The grandchild holds the lock
 * alone until told to go.
 */
static void test_fork(void)
{
	int ready[2], go[2], st;
	pid_t child, held_by = 0;
	struct r4_holder h;

	if (pipe(ready) || pipe(go)) {
		CHECK(!"pipe");
		return;
	}
	if ((child = fork()) == 0) {
		struct r4_open_opts rw = {.rw = true};
		r4_db *db = NULL;
		char c;

		if (r4_open(img, &rw, &db))
			_exit(1);
		if (fork() == 0) {	/* the daemon: holds the lock until go closes */
			pid_t me = getpid();

			close(go[1]);
			if (write(ready[1], &me, sizeof(me)) != sizeof(me))
				_exit(1);
			while (read(go[0], &c, 1) < 0 && errno == EINTR)
				;
			_exit(0);	/* (the descriptor goes with the process) */
		}
		_exit(0);		/* the parent leaves at once, as fuse_daemonize's does */
	}
	close(ready[1]);
	close(go[0]);
	CHECK(child > 0 && waitpid(child, &st, 0) == child && WIFEXITED(st) &&
	      WEXITSTATUS(st) == 0);
	CHECK(read(ready[0], &held_by, sizeof(held_by)) == sizeof(held_by));
	CHECK(held_by > 0);

	/* the parent is gone; the lock is still held, by the grandchild */
	struct r4_open_opts rw = {.rw = true};
	r4_db *db = NULL;

	CHECK_EQ(r4_open(img, &rw, &db), -EBUSY);
	CHECK_RC(r4_holder_find(img, &h));
	CHECK(h.held);
	CHECK_EQ(h.pid, held_by);
	close(go[1]);			/* the daemon leaves */
	close(ready[0]);
	CHECK_RC(open_when_free());
}

int main(void)
{
	snprintf(dir, sizeof(dir), "%s/r4-lock.XXXXXX", t_tmp());
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	snprintf(img, sizeof(img), "%s/a.img", dir);
	CHECK_RC(r4_mkfs(img, 16u << 20, NULL));
	test_io_lock();
	test_second_open();
	test_mkfs_refuses();
	test_fork();
	t_rmdir(dir);
	return T_DONE();
}
