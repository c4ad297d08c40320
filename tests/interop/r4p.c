/*
 * r4p.c - test helper that reads and writes Reiser4 images through
 * reiser4progs' libreiser4, so tests can check r4 against an independent
 * implementation.  It lives under tests/ only; r4 itself never links it.
 *
 *   r4p put IMG SRCDIR     copy a host tree (files, dirs, symlinks) into /
 *   r4p cat IMG PATH       write a file's bytes to stdout (follows symlinks)
 *   r4p ls IMG PATH        one line per entry, sorted by name (bytewise):
 *                          "TYPE SIZE NAME" (TYPE - d l c b p s ?), and
 *                          " -> TARGET" after a symlink's name
 *   r4p ccput IMG NAME SRCFILE [CLUSTER]
 *                          copy a host file into /NAME as a ccreg40
 *                          (compressed) file, with compression mode "none"
 *                          and plugin gzip1 in its own plugin set: the only
 *                          ccreg40 files libreiser4 1.2.2 writes (raw
 *                          clusters, no checksum); CLUSTER (64K .. 4K) sets
 *                          its cluster plugin too
 *   r4p gen IMG SEED N [--text]
 *                          create N files of assorted sizes (0 B .. 1 MiB)
 *                          under /gen-SEED/ in a few nested directories,
 *                          content a function of SEED and the file number
 *                          (--text: printable lines only), and print
 *                          "PATH SIZE CRC32" for each (CRC32 as zlib's, hex)
 *
 * The image must hold a Reiser4 made by mkfs.reiser4 (any profile).  New
 * regular files of put and gen are reg40 with the "tails" formatting
 * policy, all their bytes in tail items: libreiser4 1.2.2 leaves the
 * extents it writes unallocated, and compresses nothing (ccput's ccreg40
 * files hold raw clusters only).  put and gen replay the journal
 * first, write without journaling (as reiser4progs' own tools do) and sync
 * before they exit.  cat and ls open the image read-only and do not replay.
 * Exit status: 0 ok, 1 error (message on stderr), 2 usage.  Size images
 * generously: when the image fills up, libreiser4 leaves the file being
 * written half made (fsck.reiser4 then finds a fixable corruption).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <reiser4/libreiser4.h>

#define BUF_SIZE (64 * 1024)
#define GEN_MAX_SIZE (1024 * 1024)
/* Flush the tree when this many nodes and data blocks are cached. */
#define CACHE_LIMIT 4096

static const char *prog = "r4p";

/*
 * Under LeakSanitizer (make SAN=1): libreiser4_fini() frees the contents of
 * the print streams libreiser4_init() made, not the streams, so ignore
 * exactly that leak.  libaal has no frame pointers: unwind the slow way so
 * the suppression can see who called aal_calloc.
 */
const char *__lsan_default_options(void);
const char *__lsan_default_suppressions(void);
const char *__lsan_default_options(void)
{
	return "fast_unwind_on_malloc=0:print_suppressions=0";
}
const char *__lsan_default_suppressions(void)
{
	return "leak:aal_stream_create\n";
}

static void die_usage(void)
{
	fprintf(stderr,
		"usage: r4p put IMG SRCDIR\n"
		"       r4p cat IMG PATH\n"
		"       r4p ls IMG PATH\n"
		"       r4p ccput IMG NAME SRCFILE [CLUSTER]\n"
		"       r4p gen IMG SEED N [--text]\n");
	exit(2);
}

/* libaal reports errors through exceptions; print them, answer nothing. */
static aal_exception_option_t on_exception(aal_exception_t *ex)
{
	static const char *const kind[] = { "", "info", "message", "warning",
		"error", "fatal", "bug" };
	const char *k = (unsigned)ex->type < sizeof(kind) / sizeof(kind[0]) ?
		kind[ex->type] : "?";

	fprintf(stderr, "%s: libreiser4 %s: %s\n", prog, k, ex->message);
	return EXCEPTION_OPT_UNHANDLED;
}

static int cache_full(reiser4_tree_t *tree)
{
	return tree->nodes->real + tree->blocks->real > CACHE_LIMIT;
}

typedef struct {
	aal_device_t *dev;
	reiser4_fs_t *fs;
	int rw;
} image_t;

static int image_open(image_t *im, const char *path, int rw)
{
	memset(im, 0, sizeof(*im));
	im->rw = rw;
	if (!(im->dev = aal_device_open(&file_ops, (void *)path, 512,
					rw ? O_RDWR : O_RDONLY))) {
		fprintf(stderr, "%s: %s: cannot open: %s\n", prog, path,
			strerror(errno));
		return -1;
	}
	if (!(im->fs = reiser4_fs_open(im->dev, 1))) {
		fprintf(stderr, "%s: %s: no Reiser4 file system found\n", prog, path);
		aal_device_close(im->dev);
		return -1;
	}
	if (rw) {
		/* Play back committed transactions, then write in place. */
		if (!(im->fs->journal = reiser4_journal_open(im->fs, im->dev))) {
			fprintf(stderr, "%s: %s: cannot open the journal\n", prog, path);
			goto fail;
		}
		if (reiser4_journal_replay(im->fs->journal)) {
			fprintf(stderr, "%s: %s: journal replay failed\n", prog, path);
			reiser4_journal_close(im->fs->journal);
			im->fs->journal = NULL;
			goto fail;
		}
		reiser4_journal_close(im->fs->journal);
		im->fs->journal = NULL;
		im->fs->tree->mpc_func = cache_full;
	}
	return 0;
fail:
	reiser4_fs_close(im->fs);
	aal_device_close(im->dev);
	return -1;
}

/* Sync (read-write only) and close; returns -1 if the sync failed. */
static int image_close(image_t *im)
{
	int rc = 0;

	if (im->rw && reiser4_fs_sync(im->fs)) {
		fprintf(stderr, "%s: sync of the file system failed\n", prog);
		rc = -1;
	}
	reiser4_fs_close(im->fs);
	if (im->rw && aal_device_sync(im->dev)) {
		fprintf(stderr, "%s: sync of the image failed\n", prog);
		rc = -1;
	}
	aal_device_close(im->dev);
	return rc;
}

static int group_of(reiser4_object_t *o);
static int64_t read_link(reiser4_object_t *o, char *buf, size_t size);

/*
 * Open PATH (absolute, or relative to the directory FROM), following
 * symlinks in every component and, if FOLLOW, in the last one too.  Our own
 * walk, not reiser4_semantic_open(): that one frees an object twice when a
 * symlink on the way dangles.
 */
static reiser4_object_t *walk(image_t *im, reiser4_object_t *from,
			      const char *path, int follow, int depth)
{
	reiser4_tree_t *tree = im->fs->tree;
	static entry_hint_t entry;
	char buf[PATH_MAX], *save = NULL, *comp, *next_comp;
	reiser4_object_t *cur, *next;

	if (snprintf(buf, sizeof(buf), "%s", path) >= (int)sizeof(buf)) {
		fprintf(stderr, "%s: %s: path too long\n", prog, path);
		return NULL;
	}
	if (!(cur = reiser4_object_obtain(tree, NULL, path[0] == '/' || !from ?
					  &tree->key : &from->info.object))) {
		fprintf(stderr, "%s: %s: cannot open the start directory\n", prog, path);
		return NULL;
	}
	for (comp = strtok_r(buf, "/", &save); comp; comp = next_comp) {
		next_comp = strtok_r(NULL, "/", &save);
		if (group_of(cur) != DIR_OBJECT) {
			fprintf(stderr, "%s: %s: not a directory on the way\n", prog, path);
			goto fail;
		}
		if (reiser4_object_lookup(cur, comp, &entry) != PRESENT) {
			fprintf(stderr, "%s: %s: not found\n", prog, path);
			goto fail;
		}
		if (!(next = reiser4_object_obtain(tree, cur, &entry.object))) {
			fprintf(stderr, "%s: %s: cannot open %s\n", prog, path, comp);
			goto fail;
		}
		if (group_of(next) == SYM_OBJECT && (next_comp || follow)) {
			static char target[REISER4_MAX_BLKSIZE + 1];
			char copy[sizeof(target)];

			if (depth >= 8) {
				fprintf(stderr, "%s: %s: too many levels of symlinks\n",
					prog, path);
				reiser4_object_close(next);
				goto fail;
			}
			if (read_link(next, target, sizeof(target)) < 0) {
				fprintf(stderr, "%s: %s: cannot read symlink %s\n",
					prog, path, comp);
				reiser4_object_close(next);
				goto fail;
			}
			reiser4_object_close(next);
			memcpy(copy, target, sizeof(copy));
			if (!(next = walk(im, cur, copy, 1, depth + 1)))
				goto fail;
		}
		reiser4_object_close(cur);
		cur = next;
	}
	return cur;
fail:
	reiser4_object_close(cur);
	return NULL;
}

static reiser4_object_t *open_path(image_t *im, const char *path, int follow)
{
	return walk(im, NULL, path, follow, 0);
}

/* A symlink's target, NUL-terminated; sym40 reads all of it, whatever the
   count asked, so BUF must hold a block. */
static int64_t read_link(reiser4_object_t *o, char *buf, size_t size)
{
	int64_t r;

	memset(buf, 0, size);
	if ((r = reiser4_object_read(o, buf, size - 1)) < 0)
		return -1;
	buf[size - 1] = 0;
	return r;
}

static int group_of(reiser4_object_t *o)
{
	return reiser4_psobj(o)->p.id.group;
}

/* ---- crc32 (the zlib / IEEE 802.3 one) ---------------------------------- */

static uint32_t crc_table[256];

static void crc_init(void)
{
	for (uint32_t i = 0; i < 256; i++) {
		uint32_t c = i;
		for (int k = 0; k < 8; k++)
			c = c & 1 ? 0xEDB88320u ^ (c >> 1) : c >> 1;
		crc_table[i] = c;
	}
}

static uint32_t crc32_update(uint32_t crc, const unsigned char *p, size_t n)
{
	crc = ~crc;
	while (n--)
		crc = crc_table[(crc ^ *p++) & 0xff] ^ (crc >> 8);
	return ~crc;
}

/* ---- writing ------------------------------------------------------------ */

/* The child NAME of DIR, opened, or NULL if there is none. */
static reiser4_object_t *child(image_t *im, reiser4_object_t *dir,
			       const char *name)
{
	static entry_hint_t entry;

	if (reiser4_object_lookup(dir, name, &entry) != PRESENT)
		return NULL;
	return reiser4_object_obtain(im->fs->tree, dir, &entry.object);
}

/* Open or create the directory NAME in DIR. */
static reiser4_object_t *mkdir_in(image_t *im, reiser4_object_t *dir,
				  const char *name)
{
	reiser4_object_t *o = child(im, dir, name);

	if (o) {
		if (group_of(o) == DIR_OBJECT)
			return o;
		fprintf(stderr, "%s: %s: exists and is not a directory\n", prog, name);
		reiser4_object_close(o);
		return NULL;
	}
	if (!(o = reiser4_dir_create(dir, name)))
		fprintf(stderr, "%s: %s: cannot create directory\n", prog, name);
	return o;
}

static reiser4_object_t *create_reg(image_t *im, reiser4_object_t *dir,
				    const char *name)
{
	static reiser4_plug_t *policy;
	reiser4_plug_t *saved;
	reiser4_object_t *o = child(im, dir, name);

	if (o) {
		fprintf(stderr, "%s: %s: already exists\n", prog, name);
		reiser4_object_close(o);
		return NULL;
	}
	/* libreiser4 1.2.2 leaves the extents it writes unallocated, so new
	   files get the "tails" formatting policy (stored in their stat data,
	   as it differs from the volume's): their bytes go into tail items,
	   whatever their size.  The child inherits it from the parent's pset. */
	if (!policy && !(policy = reiser4_factory_ifind(POLICY_PLUG_TYPE,
							 TAIL_ALWAYS_ID))) {
		fprintf(stderr, "%s: no tails policy plugin\n", prog);
		return NULL;
	}
	saved = dir->info.pset.plug[PSET_POLICY];
	dir->info.pset.plug[PSET_POLICY] = policy;
	o = reiser4_reg_create(dir, name);
	dir->info.pset.plug[PSET_POLICY] = saved;
	if (!o)
		fprintf(stderr, "%s: %s: cannot create file\n", prog, name);
	return o;
}

static int write_all(reiser4_object_t *o, const void *p, size_t n)
{
	const char *c = p;

	while (n) {
		int64_t w = reiser4_object_write(o, (void *)c, n);
		if (w <= 0) {
			fprintf(stderr, "%s: write failed\n", prog);
			return -1;
		}
		c += w;
		n -= (size_t)w;
	}
	return 0;
}

static int put_tree(image_t *im, reiser4_object_t *dir, const char *src)
{
	struct dirent **names;
	int n, rc = 0;

	if ((n = scandir(src, &names, NULL, alphasort)) < 0) {
		fprintf(stderr, "%s: %s: %s\n", prog, src, strerror(errno));
		return -1;
	}
	for (int i = 0; i < n; i++) {
		const char *name = names[i]->d_name;
		char path[PATH_MAX];
		struct stat st;
		reiser4_object_t *o = NULL;

		if (!strcmp(name, ".") || !strcmp(name, "..") || rc)
			goto next;
		snprintf(path, sizeof(path), "%s/%s", src, name);
		if (lstat(path, &st)) {
			fprintf(stderr, "%s: %s: %s\n", prog, path, strerror(errno));
			rc = -1;
			goto next;
		}
		if (S_ISDIR(st.st_mode)) {
			if (!(o = mkdir_in(im, dir, name)) || put_tree(im, o, path))
				rc = -1;
		} else if (S_ISREG(st.st_mode)) {
			static char buf[BUF_SIZE];
			ssize_t r;
			int fd = open(path, O_RDONLY);

			if (fd < 0) {
				fprintf(stderr, "%s: %s: %s\n", prog, path, strerror(errno));
				rc = -1;
				goto next;
			}
			if (!(o = create_reg(im, dir, name)))
				rc = -1;
			while (!rc && (r = read(fd, buf, sizeof(buf))) != 0) {
				if (r < 0) {
					fprintf(stderr, "%s: %s: %s\n", prog, path,
						strerror(errno));
					rc = -1;
				} else if (write_all(o, buf, (size_t)r)) {
					fprintf(stderr, "%s: %s: copy failed\n", prog, path);
					rc = -1;
				}
			}
			close(fd);
		} else if (S_ISLNK(st.st_mode)) {
			char target[PATH_MAX];
			ssize_t len = readlink(path, target, sizeof(target) - 1);
			reiser4_object_t *old;

			if (len < 0) {
				fprintf(stderr, "%s: %s: %s\n", prog, path, strerror(errno));
				rc = -1;
				goto next;
			}
			target[len] = 0;
			if ((old = child(im, dir, name))) {
				fprintf(stderr, "%s: %s: already exists\n", prog, name);
				reiser4_object_close(old);
				rc = -1;
			} else if (!(o = reiser4_sym_create(dir, name, target))) {
				fprintf(stderr, "%s: %s: cannot create symlink\n", prog, path);
				rc = -1;
			}
		} else {
			fprintf(stderr, "%s: %s: special file skipped\n", prog, path);
		}
next:
		if (o)
			reiser4_object_close(o);
		free(names[i]);
	}
	free(names);
	return rc;
}

/* /NAME as a ccreg40 file holding SRC's bytes (r4p ccput). */
static int cmd_ccput(const char *img, const char *name, const char *src, const char *cl)
{
	static const char *const clusters[] = { "64K", "32K", "16K", "8K", "4K" };
	reiser4_plug_t *none, *gzip, *cluster = NULL, *saved[3];
	reiser4_object_t *root, *o = NULL;
	static char buf[BUF_SIZE];
	image_t im;
	ssize_t r;
	int fd, rc = 0;

	/* libreiser4 writes a ccreg40 cluster only when it need not compress
	   it: mode "none" and a compression id it calls uncompressed (odd,
	   plugin.h reiser4_compressed), so the file gets those in its pset */
	none = reiser4_factory_ifind(CMODE_PLUG_TYPE, CMODE_NONE_ID);
	gzip = reiser4_factory_ifind(COMPRESS_PLUG_TYPE, COMPRESS_GZIP1_ID);
	for (unsigned i = 0; cl && i < sizeof(clusters) / sizeof(clusters[0]); i++)
		if (!strcmp(cl, clusters[i]))
			cluster = reiser4_factory_ifind(CLUSTER_PLUG_TYPE, i);
	if (!none || !gzip || (cl && !cluster)) {
		fprintf(stderr, "%s: no such compression, mode or cluster plugin\n", prog);
		return 1;
	}
	if ((fd = open(src, O_RDONLY)) < 0) {
		fprintf(stderr, "%s: %s: %s\n", prog, src, strerror(errno));
		return 1;
	}
	if (image_open(&im, img, 1)) {
		close(fd);
		return 1;
	}
	if (!(root = open_path(&im, "/", 1))) {
		image_close(&im);
		close(fd);
		return 1;
	}
	saved[0] = root->info.pset.plug[PSET_CMODE];
	saved[1] = root->info.pset.plug[PSET_COMPRESS];
	saved[2] = root->info.pset.plug[PSET_CLUSTER];
	root->info.pset.plug[PSET_CMODE] = none;
	root->info.pset.plug[PSET_COMPRESS] = gzip;
	if (cluster)
		root->info.pset.plug[PSET_CLUSTER] = cluster;
	if ((o = child(&im, root, name))) {
		fprintf(stderr, "%s: %s: already exists\n", prog, name);
		rc = -1;
	} else if (!(o = reiser4_ccreg_create(root, name, NULL))) {
		fprintf(stderr, "%s: %s: cannot create file\n", prog, name);
		rc = -1;
	}
	root->info.pset.plug[PSET_CMODE] = saved[0];
	root->info.pset.plug[PSET_COMPRESS] = saved[1];
	root->info.pset.plug[PSET_CLUSTER] = saved[2];
	while (!rc && (r = read(fd, buf, sizeof(buf))) != 0) {
		if (r < 0) {
			fprintf(stderr, "%s: %s: %s\n", prog, src, strerror(errno));
			rc = -1;
		} else if (write_all(o, buf, (size_t)r)) {
			rc = -1;
		}
	}
	close(fd);
	if (o)
		reiser4_object_close(o);
	reiser4_object_close(root);
	if (image_close(&im))
		rc = -1;
	return rc ? 1 : 0;
}

static int cmd_put(const char *img, const char *src)
{
	image_t im;
	reiser4_object_t *root;
	int rc;

	if (image_open(&im, img, 1))
		return 1;
	if (!(root = open_path(&im, "/", 1))) {
		image_close(&im);
		return 1;
	}
	rc = put_tree(&im, root, src);
	reiser4_object_close(root);
	if (image_close(&im))
		rc = -1;
	return rc ? 1 : 0;
}

/* ---- gen ---------------------------------------------------------------- */

static uint64_t mix64(uint64_t *s)
{
	uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
	return z ^ (z >> 31);
}

/* Sizes at the edges of tails, blocks, extents and clusters. */
static const uint32_t edge_sizes[] = { 0, 1, 4095, 4096, 4097, 100, 8191,
	16384, 65535, 65536, 65537, 3000, 131072, GEN_MAX_SIZE - 1, GEN_MAX_SIZE,
	2, 12288, 200000 };

static uint32_t gen_size(uint64_t *s, unsigned i)
{
	uint64_t r = mix64(s);

	if (i % 3 == 0 && i / 3 < sizeof(edge_sizes) / sizeof(edge_sizes[0]))
		return edge_sizes[i / 3];
	switch (r % 10) {
	case 0: case 1: case 2: case 3: case 4:
		return (uint32_t)(mix64(s) % 4097);                  /* tails */
	case 5: case 6: case 7:
		return (uint32_t)(4096 + mix64(s) % (65536 - 4096)); /* medium */
	default:
		return (uint32_t)(65536 + mix64(s) % (GEN_MAX_SIZE - 65536 + 1));
	}
}

/* Fill P with N bytes of content of kind K (0 random, 1 text, 2 runs). */
static void gen_fill(uint64_t *s, int k, unsigned char *p, size_t n)
{
	static const char alpha[] =
		"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 .,-";

	for (size_t j = 0; j < n; j++) {
		uint64_t r = mix64(s);
		if (k == 0) {
			p[j] = (unsigned char)r;
		} else if (k == 1) {
			p[j] = r % 61 == 0 ? '\n' :
				(unsigned char)alpha[r % (sizeof(alpha) - 1)];
		} else {
			/* Runs of one byte (often zero): compressible data. */
			size_t len = 1 + r % 700, m = n - j < len ? n - j : len;
			memset(p + j, r >> 32 & 1 ? 0 : (int)(r >> 40 & 0xff), m);
			j += m - 1;
		}
	}
}

static int cmd_gen(const char *img, const char *seed_s, const char *n_s, int text)
{
	static const char *const dirs[] = { "", "d1", "d1/d2", "d1/d2/d3", "e" };
	enum { NDIRS = sizeof(dirs) / sizeof(dirs[0]) };
	reiser4_object_t *d[NDIRS] = { 0 }, *root = NULL;
	char *end, top[64];
	unsigned long long seed;
	unsigned long n;
	unsigned char *buf;
	image_t im;
	int rc = -1;

	errno = 0;
	seed = strtoull(seed_s, &end, 10);
	if (errno || *end || !*seed_s)
		die_usage();
	n = strtoul(n_s, &end, 10);
	if (errno || *end || !*n_s || n > 1000000)
		die_usage();
	if (!(buf = malloc(GEN_MAX_SIZE))) {
		fprintf(stderr, "%s: out of memory\n", prog);
		return 1;
	}
	if (image_open(&im, img, 1)) {
		free(buf);
		return 1;
	}
	snprintf(top, sizeof(top), "gen-%llu", seed);
	if (!(root = open_path(&im, "/", 1)) || !(d[0] = mkdir_in(&im, root, top)))
		goto out;
	for (int i = 1; i < NDIRS; i++) {
		const char *slash = strrchr(dirs[i], '/');
		reiser4_object_t *parent = slash ? d[i - 1] : d[0];
		if (!(d[i] = mkdir_in(&im, parent, slash ? slash + 1 : dirs[i])))
			goto out;
	}
	for (unsigned long i = 0; i < n; i++) {
		uint64_t s = seed * 0x100000001B3ull ^ (i + 1) * 0x9E3779B97F4A7C15ull;
		uint32_t size = gen_size(&s, (unsigned)i);
		uint64_t r = mix64(&s);     /* drawn with --text too: same names */
		int kind = text ? 1 : (int)(r % 3);
		unsigned di = (unsigned)(mix64(&s) % NDIRS);
		char name[128];
		reiser4_object_t *o;

		/* Short names fit in the key; long ones are hashed. */
		if (mix64(&s) % 4 == 0)
			snprintf(name, sizeof(name),
				 "a-rather-long-file-name-number-%06lu.data", i);
		else
			snprintf(name, sizeof(name), "f%lu", i);
		gen_fill(&s, kind, buf, size);
		if (!(o = create_reg(&im, d[di], name)))
			goto out;
		if (write_all(o, buf, size)) {
			reiser4_object_close(o);
			goto out;
		}
		reiser4_object_close(o);
		printf("/%s%s%s/%s %u %08x\n", top, *dirs[di] ? "/" : "", dirs[di],
		       name, size, crc32_update(0, buf, size));
	}
	rc = 0;
out:
	for (int i = NDIRS - 1; i >= 0; i--)
		if (d[i])
			reiser4_object_close(d[i]);
	if (root)
		reiser4_object_close(root);
	if (image_close(&im))
		rc = -1;
	free(buf);
	if (fflush(stdout))
		rc = -1;
	return rc ? 1 : 0;
}

/* ---- reading ------------------------------------------------------------ */

static int cmd_cat(const char *img, const char *path)
{
	static char buf[BUF_SIZE];
	reiser4_object_t *o;
	image_t im;
	int rc = 0;
	int64_t r;

	if (image_open(&im, img, 0))
		return 1;
	if (!(o = open_path(&im, path, 1))) {
		image_close(&im);
		return 1;
	}
	if (group_of(o) != REG_OBJECT) {
		fprintf(stderr, "%s: %s: not a regular file\n", prog, path);
		rc = -1;
	} else if (reiser4_object_reset(o)) {
		rc = -1;
	}
	while (!rc && (r = reiser4_object_read(o, buf, sizeof(buf))) != 0) {
		if (r < 0) {
			fprintf(stderr, "%s: %s: read failed\n", prog, path);
			rc = -1;
		} else if (fwrite(buf, 1, (size_t)r, stdout) != (size_t)r) {
			fprintf(stderr, "%s: write to stdout failed\n", prog);
			rc = -1;
		}
	}
	reiser4_object_close(o);
	image_close(&im);
	if (fflush(stdout))
		rc = -1;
	return rc ? 1 : 0;
}

typedef struct {
	char *name;
	char type;
	uint64_t size;
	char *target;
} lsent_t;

static char type_char(reiser4_object_t *o, uint16_t mode)
{
	switch (group_of(o)) {
	case REG_OBJECT: return '-';
	case DIR_OBJECT: return 'd';
	case SYM_OBJECT: return 'l';
	default:
		if (S_ISCHR(mode)) return 'c';
		if (S_ISBLK(mode)) return 'b';
		if (S_ISFIFO(mode)) return 'p';
		if (S_ISSOCK(mode)) return 's';
		return '?';
	}
}

/* Fill E (but its name) from the object O. */
static int describe(reiser4_object_t *o, lsent_t *e)
{
	sdhint_lw_t lw;
	stat_hint_t st;

	memset(&st, 0, sizeof(st));
	memset(&lw, 0, sizeof(lw));
	st.extmask = 1 << SDEXT_LW_ID;
	st.ext[SDEXT_LW_ID] = &lw;
	if (reiser4_object_stat(o, &st))
		return -1;
	e->type = type_char(o, lw.mode);
	e->size = lw.size;
	e->target = NULL;
	if (e->type == 'l') {
		static char t[REISER4_MAX_BLKSIZE + 1];

		if (read_link(o, t, sizeof(t)) < 0 || !(e->target = strdup(t)))
			return -1;
	}
	return 0;
}

static int cmp_ent(const void *a, const void *b)
{
	return strcmp(((const lsent_t *)a)->name, ((const lsent_t *)b)->name);
}

static void print_ent(const lsent_t *e)
{
	printf("%c %llu %s", e->type, (unsigned long long)e->size, e->name);
	if (e->target)
		printf(" -> %s", e->target);
	printf("\n");
}

static int cmd_ls(const char *img, const char *path)
{
	static entry_hint_t entry;
	reiser4_object_t *dir;
	lsent_t *ents = NULL;
	size_t n = 0, cap = 0;
	image_t im;
	int rc = 0;

	if (image_open(&im, img, 0))
		return 1;
	/* Like ls -l: a symlink named on the command line is shown, not
	   followed. */
	if (!(dir = open_path(&im, path, 0))) {
		image_close(&im);
		return 1;
	}
	if (group_of(dir) != DIR_OBJECT) {
		lsent_t e;

		if (describe(dir, &e)) {
			rc = -1;
		} else {
			e.name = (char *)path;
			print_ent(&e);
			free(e.target);
		}
		goto out;
	}
	if (reiser4_object_reset(dir)) {
		rc = -1;
		goto out;
	}
	while (reiser4_object_readdir(dir, &entry) > 0) {
		reiser4_object_t *o;

		if (!strcmp(entry.name, ".") || !strcmp(entry.name, ".."))
			continue;
		if (n == cap) {
			lsent_t *m = realloc(ents, (cap = cap ? 2 * cap : 64) * sizeof(*m));
			if (!m) {
				fprintf(stderr, "%s: out of memory\n", prog);
				rc = -1;
				break;
			}
			ents = m;
		}
		if (!(o = reiser4_object_obtain(im.fs->tree, dir, &entry.object))) {
			fprintf(stderr, "%s: %s/%s: cannot open\n", prog, path, entry.name);
			rc = -1;
			continue;
		}
		if (describe(o, &ents[n])) {
			fprintf(stderr, "%s: %s/%s: cannot stat\n", prog, path, entry.name);
			rc = -1;
		} else if (!(ents[n].name = strdup(entry.name))) {
			free(ents[n].target);
			rc = -1;
		} else {
			n++;
		}
		reiser4_object_close(o);
	}
	if (n)
		qsort(ents, n, sizeof(*ents), cmp_ent);
	for (size_t i = 0; i < n; i++) {
		print_ent(&ents[i]);
		free(ents[i].name);
		free(ents[i].target);
	}
	free(ents);
out:
	reiser4_object_close(dir);
	image_close(&im);
	if (fflush(stdout))
		rc = -1;
	return rc ? 1 : 0;
}

int main(int argc, char **argv)
{
	int rc;

	if (argc < 2)
		die_usage();
	crc_init();
	if (libreiser4_init()) {
		fprintf(stderr, "%s: cannot initialise libreiser4\n", prog);
		return 1;
	}
	aal_exception_set_handler(on_exception);
	if (!strcmp(argv[1], "put") && argc == 4)
		rc = cmd_put(argv[2], argv[3]);
	else if (!strcmp(argv[1], "ccput") && (argc == 5 || argc == 6))
		rc = cmd_ccput(argv[2], argv[3], argv[4], argc == 6 ? argv[5] : NULL);
	else if (!strcmp(argv[1], "cat") && argc == 4)
		rc = cmd_cat(argv[2], argv[3]);
	else if (!strcmp(argv[1], "ls") && argc == 4)
		rc = cmd_ls(argv[2], argv[3]);
	else if (!strcmp(argv[1], "gen") && (argc == 5 ||
		 (argc == 6 && !strcmp(argv[5], "--text"))))
		rc = cmd_gen(argv[2], argv[3], argv[4], argc == 6);
	else
		die_usage();
	libreiser4_fini();
	return rc;
}
