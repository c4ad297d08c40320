/* bench/age.c - the aging workload of bench/age.sh (issue 24 item 4).
 *
 *   age ROOT SEED ROUNDS OPS MIB DIRS
 *
 * applies, under ROOT (a mounted file system, empty), ROUNDS rounds of OPS
 * operations each: creates, appends, overwrites and deletes of files spread
 * over DIRS directories and one large directory, with MIB MiB of live data
 * as the level it churns around.  Everything is drawn from a
 * pseudo-random generator seeded with SEED and a model of the tree kept
 * here (never from what the file system answers), so one seed gives the
 * same calls, bytes and final tree on any file system.
 *
 * The tree: ROOT/big and ROOT/tT/dNN (DIRS directories under four top
 * directories t0..t3), made first.  Files are named fNNNNNN by a counter
 * that never repeats.  One operation:
 *   - create (a third of creates in big/, the rest in a random directory):
 *     a new file of a size drawn from a mix in the spirit of Impressions
 *     (a log-uniform body with a heavy tail): 40% 100 B-16 KiB, 47%
 *     16-256 KiB, 12% 256 KiB-1 MiB, 1% 1-8 MiB, written in 64 KiB calls;
 *   - append: 4-128 KiB (log-uniform) at the end of a random live file;
 *   - overwrite: 4-64 KiB at a random offset inside a random live file of
 *     at least 4 KiB (pwrite, the size does not change);
 *   - delete: unlink a random live file.
 * Below MIB of live data the mix is create 40, append 35, overwrite 15,
 * delete 10 (in 100); at or above it, 20, 25, 15, 40, so the tree fills
 * and then churns around MIB, as Geriatrix ages to a target use.  Every
 * 50 operations the file system is synced: time passes, each batch is its
 * own commit, and appends to different files interleave on the disk as
 * they do in a long life.  The sync is fsync(2) of ROOT, which commits
 * r4fuse's whole group (syncfs(2) does not reach a FUSE daemon), then
 * syncfs(2) of ROOT, which writes back ext4's delayed allocations.
 *
 * Prints one line: ops by kind, bytes written, live files and bytes, and
 * the files in big/.  Exit 1 on any failed call (with the call and path).
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define CHUNK (64u * 1024u)
#define SYNC_EVERY 50
#define TOPS 4

struct file {
	unsigned dir; /* 0: big, 1..DIRS: tT/dNN */
	unsigned id;
	uint64_t size;
};

static uint64_t rng;
static unsigned char buf[CHUNK];

static uint64_t next(void)
{
	/* splitmix64 */
	uint64_t z = (rng += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static uint64_t below(uint64_t n) { return n ? next() % n : 0; }

/* log-uniform in [lo, hi) */
static uint64_t logu(uint64_t lo, uint64_t hi)
{
	double u = (double)(next() >> 11) / 9007199254740992.0;
	uint64_t v = (uint64_t)((double)lo * pow((double)hi / (double)lo, u));
	return v < lo ? lo : v < hi ? v : hi - 1;
}

static const char *root;
static unsigned ndirs;

static size_t dir_path(char *out, size_t n, unsigned dir)
{
	int len = dir == 0 ? snprintf(out, n, "%s/big", root)
			   : snprintf(out, n, "%s/t%u/d%02u", root, (dir - 1) % TOPS, dir - 1);
	return len < 0 ? 0 : (size_t)len < n ? (size_t)len : n - 1;
}

static void file_path(char *out, size_t n, const struct file *f)
{
	size_t len = dir_path(out, n, f->dir);
	snprintf(out + len, n - len, "/f%06u", f->id);
}

static void die(const char *what, const char *path)
{
	fprintf(stderr, "age: %s %s: %s\n", what, path, strerror(errno));
	exit(1);
}

/* write LEN fresh pseudo-random bytes at OFF of the open FD */
static void put(int fd, uint64_t off, uint64_t len, const char *path)
{
	while (len) {
		size_t n = len < CHUNK ? (size_t)len : CHUNK;
		for (size_t i = 0; i < n; i += 8) {
			uint64_t x = next();
			memcpy(buf + i, &x, n - i < 8 ? n - i : 8);
		}
		ssize_t w = pwrite(fd, buf, n, (off_t)off);
		if (w != (ssize_t)n)
			die("pwrite", path);
		off += n;
		len -= n;
	}
}

static void sync_all(int rootfd)
{
	if (fsync(rootfd))
		die("fsync", root);
	if (syncfs(rootfd))
		die("syncfs", root);
}

static uint64_t create_size(void)
{
	uint64_t p = below(100);
	if (p < 40)
		return logu(100, 16 << 10);
	if (p < 87)
		return logu(16 << 10, 256 << 10);
	if (p < 99)
		return logu(256 << 10, 1 << 20);
	return logu(1 << 20, 8 << 20);
}

int main(int argc, char **argv)
{
	if (argc != 7) {
		fprintf(stderr, "usage: age ROOT SEED ROUNDS OPS MIB DIRS\n");
		return 2;
	}
	root = argv[1];
	if (strlen(root) > 1024) {
		fprintf(stderr, "age: ROOT too long\n");
		return 2;
	}
	rng = strtoull(argv[2], NULL, 10);
	unsigned rounds = (unsigned)strtoul(argv[3], NULL, 10);
	unsigned ops = (unsigned)strtoul(argv[4], NULL, 10);
	uint64_t target = strtoull(argv[5], NULL, 10) << 20;
	ndirs = (unsigned)strtoul(argv[6], NULL, 10);
	if (!ndirs || ndirs > 99) {
		fprintf(stderr, "age: DIRS must be 1 to 99\n");
		return 2;
	}

	char p[4096];
	for (unsigned t = 0; t < TOPS && t < ndirs; t++) {
		snprintf(p, sizeof p, "%s/t%u", root, t);
		if (mkdir(p, 0755))
			die("mkdir", p);
	}
	for (unsigned d = 0; d <= ndirs; d++) {
		dir_path(p, sizeof p, d);
		if (mkdir(p, 0755))
			die("mkdir", p);
	}
	int rootfd = open(root, O_RDONLY | O_DIRECTORY);
	if (rootfd < 0)
		die("open", root);

	size_t cap = 1024, nlive = 0;
	struct file *live = malloc(cap * sizeof *live);
	if (!live)
		return 1;
	unsigned ids = 0;
	uint64_t bytes = 0, written = 0, count[4] = { 0 };
	static const unsigned fill[4] = { 40, 35, 15, 10 }, churn[4] = { 20, 25, 15, 40 };

	for (unsigned r = 0; r < rounds; r++) {
		for (unsigned o = 0; o < ops; o++) {
			const unsigned *mix = bytes < target ? fill : churn;
			unsigned x = (unsigned)below(100), kind = 0;
			while (kind < 3 && x >= mix[kind])
				x -= mix[kind++];
			if (nlive == 0)
				kind = 0;
			if (kind == 0) {
				if (nlive == cap && !(live = realloc(live, (cap *= 2) * sizeof *live)))
					return 1;
				struct file *f = &live[nlive++];
				f->dir = below(3) == 0 ? 0 : 1 + (unsigned)below(ndirs);
				f->id = ids++;
				f->size = create_size();
				file_path(p, sizeof p, f);
				int fd = open(p, O_WRONLY | O_CREAT | O_EXCL, 0644);
				if (fd < 0)
					die("create", p);
				put(fd, 0, f->size, p);
				if (close(fd))
					die("close", p);
				bytes += f->size;
				written += f->size;
			} else if (kind == 1 || kind == 2) {
				struct file *f = &live[below(nlive)];
				uint64_t off, len;
				if (kind == 1) {
					off = f->size;
					len = logu(4 << 10, 128 << 10);
				} else {
					if (f->size < 4096) {
						count[kind]++;
						continue; /* drawn all the same: the sequence stays one */
					}
					len = logu(4 << 10, 64 << 10);
					if (len > f->size)
						len = f->size;
					off = below(f->size - len + 1);
				}
				file_path(p, sizeof p, f);
				int fd = open(p, O_WRONLY);
				if (fd < 0)
					die("open", p);
				put(fd, off, len, p);
				if (close(fd))
					die("close", p);
				if (off + len > f->size) {
					bytes += off + len - f->size;
					f->size = off + len;
				}
				written += len;
			} else {
				size_t i = below(nlive);
				file_path(p, sizeof p, &live[i]);
				if (unlink(p))
					die("unlink", p);
				bytes -= live[i].size;
				live[i] = live[--nlive];
			}
			count[kind]++;
			if ((r * ops + o + 1) % SYNC_EVERY == 0)
				sync_all(rootfd);
		}
	}
	sync_all(rootfd);
	size_t inbig = 0;
	for (size_t i = 0; i < nlive; i++)
		inbig += live[i].dir == 0;
	printf("age: creates=%llu appends=%llu overwrites=%llu deletes=%llu written_mib=%.1f "
	       "live_files=%zu live_mib=%.1f big_files=%zu\n",
	       (unsigned long long)count[0], (unsigned long long)count[1],
	       (unsigned long long)count[2], (unsigned long long)count[3],
	       (double)written / 1048576.0, nlive, (double)bytes / 1048576.0, inbig);
	free(live);
	close(rootfd);
	return 0;
}
