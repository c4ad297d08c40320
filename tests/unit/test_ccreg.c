/*
 * test_ccreg.c - compressed regular files (ccreg40, engine/ccreg.c).
 *
 * - Round trips beside a model, per compression plugin (lzo1, gzip1,
 *   zstd1) and cluster size (64K, 16K, 4K): compressible and incompressible
 *   data, holes, overwrites inside a cluster, truncates both ways across
 *   cluster boundaries, sizes off the cluster grid; each image ends with
 *   r4_check and fsck.reiser4 --check.
 * - Compression modes: conv turns a file whose first cluster does not
 *   compress into reg40, keeps one that does (mode lattd from then on);
 *   none stores raw.
 * - The kernel's format by hand: clusters compressed here with liblzo2,
 *   zlib and libzstd, the Adler-32 after them, put into ctail items, are
 *   read byte-exact, and fsck.reiser4 agrees; a flipped byte, a wrong
 *   shift, an unprepped cluster and a stream that does not decompress are
 *   refused with the reason and change nothing; r4_check reports them.
 * - Interop: libreiser4 (tests/r4p ccput) writes ccreg40 files on a
 *   mkfs.reiser4 image and r4 reads them; r4 writes ccreg40 files and
 *   libreiser4 (r4p cat) and debugfs.reiser4 -k read them.  libreiser4
 *   1.2.2 reads and writes only raw clusters, so that direction uses data
 *   that does not compress; debugfs.reiser4 -k prints with printf, so only
 *   text files shorter than its 4096-byte buffer come out byte-exact.
 * Steps needing reiser4progs print "skip:" lines when it is absent.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define ZLIB_CONST
#include <lzo/lzo1x.h>
#include <zlib.h>
#include <zstd.h>

#include "ccreg.h"
#include "db.h"
#include "key.h"
#include "obj.h"
#include "t.h"
#include "tree.h"

#define MAX_FILE (1u << 20)

static char dir[160], img[200];
static uint8_t *model;
static size_t msize;

static bool have(const char *tool)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "command -v %s >/dev/null 2>&1", tool);
	return !system(cmd);
}

static uint64_t mix(uint64_t *s)
{
	uint64_t z = (*s += UINT64_C(0x9E3779B97F4A7C15));

	z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
	return z ^ (z >> 31);
}

/* Compressible: words from a small vocabulary. */
static void fill_text(uint8_t *p, size_t n, uint64_t seed)
{
	static const char *const w[] = {"reiser4 ", "cluster ", "ctail ", "lzo ", "zstd\n",
					"gzip ", "dancing ", "tree "};

	for (size_t i = 0; i < n;) {
		const char *s = w[mix(&seed) % 8];

		for (; *s && i < n; s++)
			p[i++] = (uint8_t)*s;
	}
}

/* Incompressible: random bytes. */
static void fill_rand(uint8_t *p, size_t n, uint64_t seed)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)mix(&seed);
}

/* Random letters and digits: incompressible for lzo1, no NUL or '%'. */
static void fill_alnum(uint8_t *p, size_t n, uint64_t seed)
{
	static const char a[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";

	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)a[mix(&seed) % 62];
}

static r4_db *open_img(bool rw)
{
	struct r4_open_opts o = {.rw = rw};
	r4_db *db = NULL;

	CHECK_RC(r4_open(img, &o, &db));
	return db;
}

/* An r4-made volume whose root creates ccreg40 files (lzo1, conv, 64K). */
static r4_db *fresh(void)
{
	struct r4_mkfs_opts m;

	r4_mkfs_defaults(&m);
	m.create = R4_FILE_CCREG40;
	CHECK_RC(r4_mkfs(img, 64u << 20, &m));
	return open_img(true);
}

static void fsck_ok(const char *what)
{
	int v = t_fsck(img);

	if (v < 0) {
		printf("skip: fsck.reiser4 not installed (%s)\n", what);
		return;
	}
	if (v != 1) {
		char cmd[400];

		fprintf(stderr, "fsck.reiser4 after %s says:\n", what);
		snprintf(cmd, sizeof(cmd), "grep -iE 'should|wrong|found|corrupt|fatal|fix' '%s.fsck' "
			 ">&2", img);
		if (system(cmd))
			fprintf(stderr, "(see %s.fsck)\n", img);
	}
	CHECK(v == 1);
}

static void check_clean(r4_db *db)
{
	struct r4_check_result res;

	CHECK_RC(r4_check(db, NULL, &res));
	CHECK_EQ(res.problems, 0);
}

/* Set member m of ps to id, or drop its slot when id is the root's (fsck.reiser4
 * wants only the members that differ from the root's stored). */
static void pset_put(struct r4_pset *ps, unsigned m, unsigned id, unsigned root)
{
	unsigned n = 0;

	if (id == ~0u)
		return;
	if (id != root) {
		r4_item_pset_set(ps, m, (uint16_t)id);
		return;
	}
	for (unsigned i = 0; i < ps->ps_count; i++)
		if (ps->ps_slot[i].member != m)
			ps->ps_slot[n++] = ps->ps_slot[i];
	ps->ps_count = n;
}

/* The file's own plugin-set slots (~0u: leave that member alone). */
static void set_plugins(r4_db *db, const char *path, unsigned compress, unsigned cmode,
			unsigned cluster)
{
	struct r4_inode ino;

	CHECK_RC(r4_begin(db));
	CHECK_RC(r4_fs_resolve(db, path, &ino));
	ino.sd.sd_mask |= 1u << R4_SDEXT_PSET;
	pset_put(&ino.sd.sd_pset, R4_PSET_COMPRESSION, compress, db->pset.compress);
	pset_put(&ino.sd.sd_pset, R4_PSET_CMODE, cmode, db->pset.compress_mode);
	pset_put(&ino.sd.sd_pset, R4_PSET_CLUSTER, cluster, db->pset.cluster);
	CHECK_RC(r4_obj_save(db, &ino));
	r4_obj_fini(&ino);
	CHECK_RC(r4_commit(db));
}

static bool is_ccreg(r4_db *db, const char *path, unsigned *cmode)
{
	struct r4_inode ino;
	bool cc;

	if (r4_fs_resolve(db, path, &ino))
		return false;
	cc = r4_ccreg_is(&ino);
	if (cmode)
		*cmode = ino.cmode;
	r4_obj_fini(&ino);
	return cc;
}

/* ---- the model ---- */

static void m_write(r4_db *db, const char *path, uint64_t off, const uint8_t *p, size_t n)
{
	CHECK_RC(r4_write(db, path, off, p, n));
	if (off > msize)
		memset(model + msize, 0, off - msize);
	memcpy(model + off, p, n);
	msize = R4_MAX(msize, off + n);
}

static void m_trunc(r4_db *db, const char *path, size_t size)
{
	CHECK_RC(r4_truncate(db, path, size));
	if (size > msize)
		memset(model + msize, 0, size - msize);
	msize = size;
}

/* The file equals the model, read whole and in odd pieces. */
static void m_verify(r4_db *db, const char *path, const char *step)
{
	static uint8_t buf[MAX_FILE];
	struct r4_stat st;
	size_t got = 0, o = 0;
	bool same = true;

	CHECK_RC(r4_stat(db, path, &st));
	CHECK_EQ(st.size, msize);
	CHECK_RC(r4_read(db, path, 0, buf, MAX_FILE, &got));
	CHECK_EQ(got, msize);
	if (got != msize || memcmp(buf, model, msize))
		same = false;
	while (o < msize && same) {
		size_t n = R4_MIN((size_t)7777, msize - o);

		memset(buf, 0xee, n);
		if (r4_read(db, path, o, buf, n, &got) || got != n || memcmp(buf, model + o, n))
			same = false;
		o += n;
	}
	if (!same)
		fprintf(stderr, "%s: %s differs from the model after %s\n", img, path, step);
	CHECK(same);
}

/* ---- round trips ---- */

static void workload(const char *label, unsigned compress, unsigned cluster)
{
	static uint8_t data[MAX_FILE];
	size_t cl = (size_t)65536 >> cluster;
	struct r4_stat st;
	char what[64];
	r4_db *db = fresh();

	if (!db)
		return;
	snprintf(what, sizeof(what), "%s, %zu-byte clusters", label, cl);
	msize = 0;
	CHECK_RC(r4_create(db, "/f", 0644, 0, 0));
	CHECK(is_ccreg(db, "/f", NULL));
	set_plugins(db, "/f", compress, R4_CMODE_LATTD, cluster);
	fill_text(data, 2 * cl + cl / 2 + 123, 1);
	m_write(db, "/f", 0, data, 2 * cl + cl / 2 + 123);
	m_verify(db, "/f", "a compressible write");
	CHECK_RC(r4_stat(db, "/f", &st));
	CHECK(st.blocks * 512 < st.size / 2);	/* it did compress */
	fill_rand(data, cl + cl / 3, 2);
	m_write(db, "/f", cl / 2, data, cl + cl / 3);
	m_verify(db, "/f", "random data across a boundary");
	fill_text(data, 100, 3);
	m_write(db, "/f", cl / 3, data, 100);
	m_verify(db, "/f", "an overwrite inside a cluster");
	fill_text(data, 3000, 4);
	m_write(db, "/f", 5 * cl + 77, data, 3000);
	m_verify(db, "/f", "a write past a hole");
	m_trunc(db, "/f", 3 * cl + 5);
	m_verify(db, "/f", "a truncate down across clusters");
	m_trunc(db, "/f", 7 * cl - 9);
	m_verify(db, "/f", "a truncate up");
	fill_rand(data, 10, 5);
	m_write(db, "/f", msize - 3, data, 10);
	m_verify(db, "/f", "a write over the end");
	m_trunc(db, "/f", 2 * cl);
	m_verify(db, "/f", "a truncate to a cluster boundary");
	fill_text(data, 1, 6);
	m_write(db, "/f", 2 * cl, data, 1);
	m_verify(db, "/f", "one byte into a new cluster");
	CHECK(is_ccreg(db, "/f", NULL));
	check_clean(db);
	r4_close(db);
	db = open_img(false);
	if (db) {
		m_verify(db, "/f", "reopening");
		r4_close(db);
	}
	fsck_ok(what);
}

/* ---- compression modes ---- */

static void modes(void)
{
	static uint8_t data[200000];
	unsigned cmode = 0;
	struct r4_stat st;
	r4_db *db = fresh();

	if (!db)
		return;
	/* conv: an incompressible first cluster makes the file reg40 */
	fill_rand(data, sizeof(data), 7);
	CHECK_RC(r4_create(db, "/rand", 0644, 0, 0));
	CHECK_RC(r4_write(db, "/rand", 0, data, sizeof(data)));
	CHECK(!is_ccreg(db, "/rand", NULL));
	msize = 0;
	memcpy(model, data, sizeof(data));
	msize = sizeof(data);
	m_verify(db, "/rand", "the conversion to reg40");
	/* the same in two writes: the second reaches the dispatch point */
	CHECK_RC(r4_create(db, "/rand2", 0644, 0, 0));
	CHECK_RC(r4_write(db, "/rand2", 0, data, 65536));
	CHECK(is_ccreg(db, "/rand2", NULL));
	CHECK_RC(r4_write(db, "/rand2", 65536, data + 65536, 1000));
	CHECK(!is_ccreg(db, "/rand2", NULL));
	msize = 66536;
	m_verify(db, "/rand2", "a conversion at the second write");
	/* conv: a compressible one stays, with mode lattd in its own pset */
	fill_text(data, sizeof(data), 8);
	CHECK_RC(r4_create(db, "/text", 0644, 0, 0));
	CHECK_RC(r4_write(db, "/text", 0, data, sizeof(data)));
	CHECK(is_ccreg(db, "/text", &cmode));
	CHECK_EQ(cmode, R4_CMODE_LATTD);
	/* conv: a hole in the first cluster ends conversion too */
	CHECK_RC(r4_create(db, "/hole", 0644, 0, 0));
	CHECK_RC(r4_write(db, "/hole", 1000, "x", 1));
	CHECK(is_ccreg(db, "/hole", &cmode));
	CHECK_EQ(cmode, R4_CMODE_LATTD);
	/* none: stored raw */
	CHECK_RC(r4_create(db, "/raw", 0644, 0, 0));
	set_plugins(db, "/raw", ~0u, R4_CMODE_NONE, ~0u);
	CHECK_RC(r4_write(db, "/raw", 0, data, sizeof(data)));
	CHECK_RC(r4_stat(db, "/raw", &st));
	CHECK(st.blocks * 512 >= sizeof(data));
	CHECK(is_ccreg(db, "/raw", NULL));
	/* force compresses what lattd would give up on (text after noise) */
	CHECK_RC(r4_create(db, "/force", 0644, 0, 0));
	set_plugins(db, "/force", 2, R4_CMODE_FORCE, ~0u);
	CHECK_RC(r4_write(db, "/force", 0, data, sizeof(data)));
	CHECK_RC(r4_stat(db, "/force", &st));
	CHECK(st.blocks * 512 < sizeof(data) / 2);
	check_clean(db);
	r4_close(db);
	fsck_ok("the compression modes");
}

/* ---- the kernel's format, built by hand ---- */

static size_t compress_with(unsigned plug, const uint8_t *src, size_t n, uint8_t *dst, size_t cap)
{
	if (plug == 0) {
		static uint8_t wrk[LZO1X_1_MEM_COMPRESS];
		lzo_uint out = cap;

		if (lzo_init() != LZO_E_OK || lzo1x_1_compress(src, n, dst, &out, wrk) != LZO_E_OK)
			return 0;
		return out;
	}
	if (plug == 1) {
		z_stream zs = {0};
		size_t out;

		if (deflateInit2(&zs, 1, Z_DEFLATED, -15, 9, Z_DEFAULT_STRATEGY) != Z_OK)
			return 0;
		zs.next_in = src;
		zs.avail_in = (uInt)n;
		zs.next_out = dst;
		zs.avail_out = (uInt)cap;
		out = deflate(&zs, Z_FINISH) == Z_STREAM_END ? zs.total_out : 0;
		deflateEnd(&zs);
		return out;
	}
	size_t r = ZSTD_compress(dst, cap, src, n, 3);

	return ZSTD_isError(r) ? 0 : r;
}

/* Put ctail items holding s[0, n) at file offset off of the file at path. */
static void put_ctails(r4_db *db, const char *path, uint64_t off, unsigned shift,
		       const uint8_t *s, size_t n, size_t piece)
{
	static uint8_t item[4096];
	struct r4_inode ino;
	struct r4_path p;
	r4_key k;

	CHECK_RC(r4_fs_resolve(db, path, &ino));
	for (size_t o = 0; o < n;) {
		size_t cnt = R4_MIN(piece, n - o);

		item[0] = (uint8_t)shift;
		memcpy(item + 1, s + o, cnt);
		r4_reg_body_key(&ino, off + o, &k);
		CHECK_RC(r4_tree_lookup(db, &k, R4_LEVEL_LEAF, &p));
		CHECK_RC(r4_tree_insert(db, &p, &k, R4_ITEM_CTAIL40, item, (unsigned)cnt + 1));
		o += cnt;
	}
	r4_obj_fini(&ino);
}

static void set_size(r4_db *db, const char *path, uint64_t size)
{
	struct r4_inode ino;

	CHECK_RC(r4_fs_resolve(db, path, &ino));
	ino.sd.sd_size = size;
	CHECK_RC(r4_obj_save(db, &ino));
	r4_obj_fini(&ino);
}

static uint32_t file_sum(void)
{
	static uint8_t buf[1 << 16];
	FILE *f = fopen(img, "rb");
	uint32_t a = 1;
	size_t n;

	if (!f)
		return 0;
	while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
		a = (uint32_t)adler32(a, buf, (uInt)n);
	fclose(f);
	return a;
}

/* Read /v through a read-only handle: the error, and the image unchanged. */
static int read_ro(void)
{
	static uint8_t buf[40000];
	uint32_t before = file_sum();
	size_t got;
	r4_db *db = open_img(false);
	int rc;

	if (!db)
		return -EIO;
	rc = r4_read(db, "/v", 0, buf, sizeof(buf), &got);
	r4_close(db);
	CHECK_EQ(file_sum(), before);
	return rc;
}

enum { V_GOOD, V_FLIP, V_SHIFT, V_UNPREPPED, V_GARBAGE };

/*
 * /v: two 16K clusters and 5000 bytes; cluster 0 text compressed by
 * plugin `plug` plus its Adler-32, in two items; cluster 1 raw random.
 */
static void vector(unsigned plug, int how)
{
	static uint8_t text[16384], comp[32768], rnd[5000], buf[40000];
	size_t n = 0, got = 0;
	unsigned shift = 14;
	r4_db *db = fresh();
	int rc;

	if (!db)
		return;
	fill_text(text, sizeof(text), 9 + plug);
	fill_rand(rnd, sizeof(rnd), 10);
	n = compress_with(plug, text, sizeof(text), comp, sizeof(comp) - 4);
	CHECK(n > 0 && n + 4 < sizeof(text));
	if (how == V_GARBAGE)
		fill_rand(comp, n, 11);	/* not a stream of the plugin, checksum right */
	r4_le32_put(comp + n, (uint32_t)adler32(1, comp, (uInt)n));
	n += 4;
	if (how == V_FLIP)
		comp[n / 2] ^= 0x10;
	if (how == V_SHIFT)
		shift = 13;
	CHECK_RC(r4_create(db, "/v", 0644, 0, 0));
	set_plugins(db, "/v", plug, R4_CMODE_LATTD, 2);
	CHECK_RC(r4_begin(db));
	if (how == V_UNPREPPED)
		put_ctails(db, "/v", 0, R4_CTAIL_UNPREPPED, (const uint8_t *)"", 1, 1);
	else
		put_ctails(db, "/v", 0, shift, comp, n, R4_MIN(n / 2 + 1, (size_t)1500));
	put_ctails(db, "/v", 16384, 14, rnd, sizeof(rnd), 2500);
	set_size(db, "/v", 16384 + sizeof(rnd));
	CHECK_RC(r4_commit(db));
	r4_close(db);
	rc = read_ro();
	if (how == V_GOOD) {
		CHECK_RC(rc);
		db = open_img(false);
		if (db) {
			CHECK_RC(r4_read(db, "/v", 0, buf, sizeof(buf), &got));
			CHECK_EQ(got, 16384 + sizeof(rnd));
			CHECK(!memcmp(buf, text, sizeof(text)) &&
			      !memcmp(buf + 16384, rnd, sizeof(rnd)));
			check_clean(db);
			r4_close(db);
		}
		fsck_ok("a hand-built compressed cluster");
		/* r4 rewrites a cluster of it and keeps the other */
		db = open_img(true);
		if (db) {
			CHECK_RC(r4_write(db, "/v", 16384 + 10, "abc", 3));
			CHECK_RC(r4_read(db, "/v", 0, buf, sizeof(buf), &got));
			CHECK(!memcmp(buf, text, sizeof(text)) &&
			      !memcmp(buf + 16394, "abc", 3));
			r4_close(db);
		}
		fsck_ok("a rewrite beside a hand-built cluster");
		return;
	}
	CHECK_EQ(rc, how == V_FLIP ? -EBADMSG : -EUCLEAN);
	db = open_img(false);
	if (db) {
		struct r4_check_result res;

		CHECK_RC(r4_check(db, NULL, &res));	/* r4's checker finds it too */
		CHECK(res.problems >= 1);
		r4_close(db);
	}
	if (how == V_FLIP) {
		/* fsck.reiser4 checks the same sum: the vector is the format it knows */
		int v = t_fsck(img);

		if (v >= 0)
			CHECK(v == 0);
		return;
	}
	/* a write to the broken cluster is refused too */
	db = open_img(true);
	if (db) {
		CHECK(r4_write(db, "/v", 100, "x", 1) < 0);
		r4_close(db);
	}
}

static void vectors(void)
{
	for (unsigned plug = 0; plug < 3; plug++)
		vector(plug, V_GOOD);
	vector(0, V_FLIP);
	vector(1, V_FLIP);
	vector(2, V_SHIFT);
	vector(0, V_UNPREPPED);
	vector(0, V_GARBAGE);
	vector(2, V_GARBAGE);
}

/* ---- interop with reiser4progs ---- */

static const char *r4p(void)
{
	static char path[300];
	const char *b = getenv("B");

	snprintf(path, sizeof(path), "%s/tests/r4p", b ? b : "build");
	return access(path, X_OK) ? NULL : path;
}

static bool save(const char *path, const uint8_t *p, size_t n)
{
	FILE *f = fopen(path, "wb");
	bool ok = f && fwrite(p, 1, n, f) == n;

	if (f)
		fclose(f);
	return ok;
}

/* Does the output of cmd equal p[0, n)? */
static bool same_output(const char *cmd, const uint8_t *p, size_t n)
{
	static uint8_t buf[MAX_FILE + 1];
	FILE *f = popen(cmd, "r");
	size_t got;

	if (!f)
		return false;
	got = fread(buf, 1, sizeof(buf), f);
	return pclose(f) == 0 && got == n && !memcmp(buf, p, n);
}

/* (a) libreiser4 writes ccreg40 files on a mkfs.reiser4 volume, r4 reads them. */
static void from_libreiser4(void)
{
	static uint8_t rnd[150000], txt[100000], buf[MAX_FILE];
	char cmd[1024], src[200];
	const char *tool = r4p();
	size_t got;
	r4_db *db;

	if (!tool || !have("mkfs.reiser4")) {
		printf("skip: r4p or mkfs.reiser4 missing, libreiser4 -> r4 not checked\n");
		return;
	}
	snprintf(cmd, sizeof(cmd), "rm -f '%s' && truncate -s 64M '%s' && mkfs.reiser4 -y -f '%s' "
		 ">/dev/null 2>&1", img, img, img);
	CHECK(!system(cmd));
	fill_rand(rnd, sizeof(rnd), 12);
	fill_text(txt, sizeof(txt), 13);
	snprintf(src, sizeof(src), "%s/src", dir);
	CHECK(save(src, rnd, sizeof(rnd)));
	snprintf(cmd, sizeof(cmd), "'%s' ccput '%s' rnd '%s'", tool, img, src);
	CHECK(!system(cmd));
	CHECK(save(src, txt, sizeof(txt)));
	snprintf(cmd, sizeof(cmd), "'%s' ccput '%s' txt '%s' 16K", tool, img, src);
	CHECK(!system(cmd));
	fsck_ok("libreiser4's ccreg40 files");
	if (!(db = open_img(false)))
		return;
	CHECK(is_ccreg(db, "/rnd", NULL) && is_ccreg(db, "/txt", NULL));
	CHECK_RC(r4_read(db, "/rnd", 0, buf, sizeof(buf), &got));
	CHECK(got == sizeof(rnd) && !memcmp(buf, rnd, sizeof(rnd)));
	CHECK_RC(r4_read(db, "/txt", 0, buf, sizeof(buf), &got));
	CHECK(got == sizeof(txt) && !memcmp(buf, txt, sizeof(txt)));
	r4_close(db);
	/* r4 goes on writing libreiser4's file (its own 16K clusters, gzip1, none) */
	if (!(db = open_img(true)))
		return;
	memcpy(model, txt, sizeof(txt));
	msize = sizeof(txt);
	m_write(db, "/txt", 40000, rnd, 30000);
	m_trunc(db, "/txt", 90001);
	m_verify(db, "/txt", "r4's writes to libreiser4's file");
	r4_close(db);
	fsck_ok("r4's writes to libreiser4's ccreg40 file");
}

/* (b) r4 writes ccreg40 files, libreiser4 and debugfs.reiser4 read them. */
static void to_libreiser4(void)
{
	static uint8_t small[3000], mid[60000], big[300000];
	const char *tool = r4p();
	char cmd[1024];
	r4_db *db;

	if (!tool || !have("mkfs.reiser4")) {
		printf("skip: r4p or mkfs.reiser4 missing, r4 -> libreiser4 not checked\n");
		return;
	}
	snprintf(cmd, sizeof(cmd), "rm -f '%s' && truncate -s 64M '%s' && mkfs.reiser4 -y -f '%s' "
		 ">/dev/null 2>&1", img, img, img);
	CHECK(!system(cmd));
	fill_alnum(small, sizeof(small), 14);
	fill_rand(mid, sizeof(mid), 15);
	fill_rand(big, sizeof(big), 16);
	if (!(db = open_img(true)))
		return;
	CHECK_RC(r4_create(db, "/small", 0644, 0, 0));
	CHECK_RC(r4_write(db, "/small", 0, small, sizeof(small)));
	CHECK_RC(r4_create(db, "/mid", 0644, 0, 0));
	CHECK_RC(r4_write(db, "/mid", 0, mid, sizeof(mid)));	/* conv: no dispatch point yet */
	CHECK_RC(r4_create(db, "/big", 0644, 0, 0));
	set_plugins(db, "/big", ~0u, R4_CMODE_NONE, 3);
	CHECK_RC(r4_write(db, "/big", 0, big, 100000));
	CHECK_RC(r4_write(db, "/big", 100000, big + 100000, sizeof(big) - 100000));
	CHECK(is_ccreg(db, "/small", NULL) && is_ccreg(db, "/mid", NULL) &&
	      is_ccreg(db, "/big", NULL));
	r4_close(db);
	fsck_ok("r4's ccreg40 files on a mkfs.reiser4 volume");
	snprintf(cmd, sizeof(cmd), "'%s' cat '%s' /small", tool, img);
	CHECK(same_output(cmd, small, sizeof(small)));
	snprintf(cmd, sizeof(cmd), "'%s' cat '%s' /mid", tool, img);
	CHECK(same_output(cmd, mid, sizeof(mid)));
	snprintf(cmd, sizeof(cmd), "'%s' cat '%s' /big", tool, img);
	CHECK(same_output(cmd, big, sizeof(big)));
	if (!have("debugfs.reiser4")) {
		printf("skip: debugfs.reiser4 not installed\n");
		return;
	}
	snprintf(cmd, sizeof(cmd), "debugfs.reiser4 -k /small '%s' 2>/dev/null", img);
	CHECK(same_output(cmd, small, sizeof(small)));
}

int main(void)
{
	static const char *const labels[] = {"lzo1", "gzip1", "zstd1"};

	snprintf(dir, sizeof(dir), "%s/r4ccXXXXXX", t_tmp());
	if (!mkdtemp(dir))
		return 1;
	snprintf(img, sizeof(img), "%s/cc.img", dir);
	if (!(model = malloc(MAX_FILE + 65536)))
		return 1;
	for (unsigned plug = 0; plug < 3; plug++)
		for (unsigned cl = 0; cl <= 4; cl += 2)
			workload(labels[plug], plug, cl);
	modes();
	vectors();
	from_libreiser4();
	to_libreiser4();
	free(model);
	if (!t_fail && t_rmdir(dir))
		return 1;
	if (t_fail)
		fprintf(stderr, "images and fsck.reiser4 reports kept in %s\n", dir);
	return T_DONE();
}
