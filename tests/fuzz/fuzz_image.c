/*
 * fuzz_image.c - libFuzzer target for damaged images: open, read, check
 * and change a volume whose blocks the input edits.
 *
 * At start a 2 MiB volume is made in a temporary file and filled through
 * the public API (directories, tail files, an extent file, a symlink, a
 * hard link and 300 small files, so the tree has twigs), synced and
 * loaded into memory; a second copy then takes three more transactions
 * and a power cut (io_fault.c), so that its journal holds transactions
 * an open replays.  An input is a list of edits of the first image (of
 * the second when the input's length is odd), each
 *
 *	u16 block (an index into the blocks that hold anything), u16 offset,
 *	u8 length, that many bytes
 *
 * applied to a copy.  Then, on a RAM image of the copy: a read-only open,
 * a walk of every directory (readdir, stat and read of each entry, or its
 * link), and r4_check; a read-write open, a transaction that makes,
 * writes and removes files, r4_check with repair, and r4_sync.  Every
 * call may fail, only cleanly: a crash, a sanitizer report, a leak or a
 * hang (-timeout) is what the fuzzer reports.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "io.h"
#include "r4.h"

#define BS 4096u
#define IMG_SIZE (2u << 20)
#define WALK_ENTRIES 2000	/* a loop of directories ends here */
#define WALK_DEPTH 8

/* the two images, and the blocks of each that hold anything */
static struct seed {
	uint8_t b[IMG_SIZE];
	uint16_t used[IMG_SIZE / BS];
	unsigned nused;
} seeds[2];
static uint8_t work[IMG_SIZE];

static void die(const char *what, int rc)
{
	fprintf(stderr, "fuzz_image: %s: %s\n", what, r4_strerror(rc));
	exit(2);
}

static void fill(r4_db *db)
{
	static const char big[20000] = "extent";
	char path[64];
	int rc;

	if ((rc = r4_begin(db)) || (rc = r4_mkdir(db, "/a", 0755, 0, 0)) ||
	    (rc = r4_mkdir(db, "/a/b", 0700, 1, 1)) || (rc = r4_mkdir(db, "/many", 0755, 0, 0)) ||
	    (rc = r4_create(db, "/a/t", S_IFREG | 0644, 0, 0)) ||
	    (rc = r4_write(db, "/a/t", 0, "tail bytes", 10)) ||
	    (rc = r4_create(db, "/a/b/x", S_IFREG | 0600, 1, 1)) ||
	    (rc = r4_write(db, "/a/b/x", 0, big, sizeof(big))) ||
	    (rc = r4_symlink(db, "/a/t", "/a/ln", 0, 0)) || (rc = r4_link(db, "/a/t", "/hard")))
		die("fill", rc);
	for (unsigned i = 0; i < 300; i++) {
		snprintf(path, sizeof(path), "/many/f%03u", i);
		if ((rc = r4_create(db, path, S_IFREG | 0644, 0, 0)) ||
		    (rc = r4_write(db, path, 0, path, strlen(path))))
			die(path, rc);
	}
	if ((rc = r4_commit(db)))
		die("commit", rc);
}

/* A RAM image holding work. */
static struct r4_io *image(void)
{
	struct r4_io *io;

	if (r4_io_mem_new(IMG_SIZE, &io))
		return NULL;
	if (r4_io_write(io, 0, work, IMG_SIZE)) {
		r4_io_close(io);
		return NULL;
	}
	return io;
}

static void keep(struct seed *sd, struct r4_io *io)
{
	const uint8_t *d;
	uint64_t size;

	if (!(d = r4_io_mem_data(io, &size)) || size != IMG_SIZE)
		die("image size", -EINVAL);
	memcpy(sd->b, d, IMG_SIZE);
	for (unsigned b = 0; b < IMG_SIZE / BS; b++)
		for (unsigned i = 0; i < BS; i++)
			if (sd->b[b * BS + i]) {
				sd->used[sd->nused++] = (uint16_t)b;
				break;
			}
}

/* The second image: the first, three transactions more, a power cut. */
static void unplayed(void)
{
	struct r4_open_opts o = {.rw = true};
	struct r4_io *io, *cut;
	struct r4_stat st;
	r4_db *db;
	int rc;

	if ((rc = r4_io_mem_new(IMG_SIZE, &io)) || (rc = r4_io_write(io, 0, seeds[0].b, IMG_SIZE)) ||
	    (rc = r4_io_fault_wrap(io, &cut)))
		die("second image", rc);
	r4_io_fault_record(cut, true);
	if ((rc = r4_open_io(cut, &o, &db)))
		die("open for the second image", rc);
	if ((rc = r4_begin(db)) || (rc = r4_create(db, "/j1", S_IFREG | 0644, 0, 0)) ||
	    (rc = r4_write(db, "/j1", 0, "journal", 7)) || (rc = r4_commit(db)) ||
	    (rc = r4_begin(db)) || (rc = r4_rename(db, "/many/f001", "/a/f001", 0)) ||
	    (rc = r4_unlink(db, "/many/f002")) || (rc = r4_commit(db)) || (rc = r4_begin(db)) ||
	    (rc = r4_mkdir(db, "/j2", 0755, 0, 0)) || (rc = r4_write(db, "/a/t", 5, "TAIL", 4)) ||
	    (rc = r4_commit(db)))
		die("second image's transactions", rc);
	r4_io_fault_crash_now(cut, 1, false);
	r4_close(db);
	keep(&seeds[1], io);
	r4_io_close(io);
	/* (what it is for: /j2 only after a replay) */
	memcpy(work, seeds[1].b, IMG_SIZE);
	if (!(io = image()) || (rc = r4_open_io(io, &(struct r4_open_opts){.ignore_journal = true}, &db)))
		die("second image, its journal ignored", io ? rc : -ENOMEM);
	rc = r4_stat(db, "/j2", &st);
	r4_close(db);
	if (rc != -ENOENT || !(io = image()) || r4_open_io(io, &(struct r4_open_opts){0}, &db))
		die("second image: no transactions unplayed", rc ? rc : -EINVAL);
	rc = r4_stat(db, "/j2", &st);
	r4_close(db);
	if (rc)
		die("second image replayed", rc);
}

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	char tmp[] = "/tmp/r4-fuzz-image.XXXXXX";
	struct r4_open_opts o = {.rw = true};
	struct r4_mkfs_opts mo;
	struct r4_io *io;
	r4_db *db;
	int fd, rc;

	(void)argc;
	(void)argv;
	if ((fd = mkstemp(tmp)) < 0)
		die("mkstemp", -errno);
	close(fd);
	r4_mkfs_defaults(&mo);
	if ((rc = r4_mkfs(tmp, IMG_SIZE, &mo)) || (rc = r4_open(tmp, &o, &db)))
		die("mkfs", rc);
	fill(db);
	if ((rc = r4_sync(db)))
		die("sync", rc);
	r4_close(db);
	rc = r4_io_mem_load(tmp, &io);
	unlink(tmp);
	if (rc)
		die("load", rc);
	keep(&seeds[0], io);
	r4_io_close(io);
	unplayed();
	return 0;
}

struct walk {
	r4_db *db;
	char names[WALK_ENTRIES][256];
	unsigned n;
};

static int collect(void *ctx, const char *name, size_t len, uint64_t ino, uint32_t type)
{
	struct walk *w = ctx;

	(void)ino;
	(void)type;
	if (w->n == WALK_ENTRIES)
		return 1;
	if (len < sizeof(w->names[0]) && !(len == 1 && name[0] == '.') &&
	    !(len == 2 && name[0] == '.' && name[1] == '.')) {
		memcpy(w->names[w->n], name, len);
		w->names[w->n++][len] = '\0';
	}
	return 0;
}

static void walk(struct walk *w, const char *dir, unsigned depth)
{
	static uint8_t buf[64 << 10];
	unsigned from = w->n, to;
	struct r4_dirpos pos = {0};
	char path[4096];

	if (depth > WALK_DEPTH || r4_readdir(w->db, dir, &pos, collect, w) < 0)
		return;
	to = w->n;
	for (unsigned i = from; i < to; i++) {
		struct r4_stat st;
		size_t got;

		if (snprintf(path, sizeof(path), "%s/%s", strcmp(dir, "/") ? dir : "", w->names[i]) >=
		    (int)sizeof(path) || r4_stat(w->db, path, &st))
			continue;
		if (S_ISDIR(st.mode))
			walk(w, path, depth + 1);
		else if (S_ISLNK(st.mode))
			(void)r4_readlink(w->db, path, (char *)buf, sizeof(buf), &got);
		else if (S_ISREG(st.mode))
			for (uint64_t off = 0; off < (1u << 20) &&
			     !r4_read(w->db, path, off, buf, sizeof(buf), &got) && got; off += got)
				;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *in, size_t len);
int LLVMFuzzerTestOneInput(const uint8_t *in, size_t len)
{
	static struct walk w;
	struct r4_open_opts ro = {0}, rw = {.rw = true};
	struct r4_check_result res;
	struct r4_check_opts co = {0}, fix = {.fix = true};
	const struct seed *sd = &seeds[len & 1];
	struct r4_io *io;
	r4_db *db;

	memcpy(work, sd->b, IMG_SIZE);
	while (len >= 5) {
		unsigned blk = sd->used[(in[0] | in[1] << 8) % sd->nused];
		unsigned off = (in[2] | in[3] << 8) % BS;
		size_t n = in[4];

		in += 5;
		len -= 5;
		if (n > len)
			n = len;
		if (n > BS - off)
			n = BS - off;
		memcpy(work + (size_t)blk * BS + off, in, n);
		in += n;
		len -= n;
	}
	if ((io = image()) && !r4_open_io(io, &ro, &db)) {
		w.db = db;
		w.n = 0;
		walk(&w, "/", 0);
		(void)r4_check(db, &co, &res);
		r4_close(db);
	}
	if ((io = image()) && !r4_open_io(io, &rw, &db)) {
		if (!r4_begin(db)) {
			(void)r4_create(db, "/new", S_IFREG | 0644, 0, 0);
			(void)r4_write(db, "/new", 0, seeds[0].b, 9000);
			(void)r4_mkdir(db, "/many/d", 0755, 0, 0);
			(void)r4_unlink(db, "/many/f007");
			(void)r4_rename(db, "/a/t", "/a/b/t2", 0);
			(void)r4_commit(db);
		}
		(void)r4_check(db, &fix, &res);
		(void)r4_sync(db);
		r4_close(db);
	}
	return 0;
}
