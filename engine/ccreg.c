/*
 * ccreg.c - ccreg40 file bodies: logical clusters stored as disk clusters
 * of ctail40 items, compressed with lzo1, gzip1 or zstd1 when that pays.
 *
 * The file is cut into logical clusters of 1 << shift bytes (shift 12..16
 * from the pset's `cluster` member: 64K is id 0, 4K id 4).  Cluster i
 * holds file bytes [i << shift, (i + 1) << shift); its logical size
 * (lsize) is that, clipped at the file size.  Its disk cluster is the
 * byte stream the ctail items of keys [i << shift, (i + 1) << shift) hold,
 * in key order, with no gap: either the lsize raw bytes, or (when the
 * stream is shorter than lsize, which is how a reader tells) the
 * compressed bytes followed by the le32 Adler-32 of those bytes (kernel
 * cryptcompress.c: reiser4_deflate_cluster, dc_set_checksum,
 * need_inflate).  A cluster without items is a hole: zeros.  An unprepped
 * cluster (shift 0xff) is the kernel's in-memory placeholder and is
 * refused, as the kernel's read and fsck.reiser4 do.
 *
 * Writes and truncates rewrite each cluster they touch whole: read and
 * decompress the old one, patch it, remove its items, compress and insert
 * the new stream.  There is no page cache: a cluster is never left dirty
 * across calls, so nothing here survives an operation except the items.
 * The compression mode decides per cluster whether to try (kernel
 * compress_mode.c); the state the kernel keeps per inode in memory (lattd's
 * lattice factor, ultim's "off") lives for one r4 operation.  Conv mode
 * is the kernel's dispatch (file_conversion.c): r4_ccreg_write reports the
 * dispatch point and reg.c makes the file reg40.
 *
 * The three compressors are Debian's liblzo2, zlib and libzstd, called
 * with the kernel's parameters (plugin/compress/compress.c).  What lives
 * where, and what r4 decides where the kernel is silent: docs/ccreg.md.
 */
#include "ccreg.h"

#include <assert.h>
#include <sys/stat.h>

#define ZLIB_CONST
#include <lzo/lzo1x.h>
#include <zlib.h>
#include <zstd.h>
#include <zstd_errors.h>

#include "key.h"
#include "plugin.h"
#include "tree.h"

enum {
	CC_CSUM = 4,		/* le32 Adler-32 after a compressed stream (DC_CHECKSUM_SIZE) */
	CC_MAX_LATTICE = 32,	/* lattd's largest lattice factor (MAX_LATTICE_FACTOR) */
	CC_GZIP_LEVEL = 1,	/* Z_BEST_SPEED (GZIP1_DEF_LEVEL) */
	CC_GZIP_WBITS = 15,	/* raw deflate, 32K window (-GZIP1_DEF_WINBITS) */
	CC_GZIP_MEMLEVEL = 9,	/* MAX_MEM_LEVEL */
	CC_ZSTD_LEVEL = 3,	/* ZSTD_DEF_LEVEL */
};

/* ======================= compression plugins ========================== */

/* Each is a row of r4_compress_plugins (plugin.h says what the ops do). */

/* ---- lzo1: LZO1X-1 (the kernel's lzo1x_1_compress, lzo1x_decompress_safe) ---- */

static size_t lzo_bound(size_t n)
{
	return n + n / 16 + 64 + 3;	/* lzo1_overrun */
}

static int lzo_deflate(const uint8_t *src, size_t n, uint8_t *dst, size_t cap, size_t *out)
{
	lzo_uint olen = cap;
	void *wrk;
	int rc;

	if (lzo_init() != LZO_E_OK)
		return -EINVAL;
	if (!(wrk = r4_malloc(LZO1X_1_MEM_COMPRESS)))
		return -ENOMEM;
	rc = lzo1x_1_compress(src, n, dst, &olen, wrk);
	r4_free(wrk);
	if (rc != LZO_E_OK || olen > cap)
		return -ENOSPC;
	*out = olen;
	return 0;
}

static int lzo_inflate(const uint8_t *src, size_t n, uint8_t *dst, size_t cap, size_t *out)
{
	lzo_uint olen = cap;

	if (lzo_init() != LZO_E_OK)
		return -EINVAL;
	if (lzo1x_decompress_safe(src, n, dst, &olen, NULL) != LZO_E_OK)
		return -EUCLEAN;
	*out = olen;
	return 0;
}

/* ---- gzip1: raw deflate (no zlib header), level 1, window 2^15, memLevel 9 ---- */

static voidpf z_alloc(voidpf opaque, uInt items, uInt size)
{
	(void)opaque;
	return r4_calloc(items, size);
}

static void z_free(voidpf opaque, voidpf p)
{
	(void)opaque;
	r4_free(p);
}

static size_t gzip_bound(size_t n)
{
	return n + n / 1000 + 64;	/* deflateBound's stored-blocks worst case, rounded up */
}

static int gzip_deflate(const uint8_t *src, size_t n, uint8_t *dst, size_t cap, size_t *out)
{
	z_stream zs = {.zalloc = z_alloc, .zfree = z_free};
	int rc = deflateInit2(&zs, CC_GZIP_LEVEL, Z_DEFLATED, -CC_GZIP_WBITS, CC_GZIP_MEMLEVEL,
			      Z_DEFAULT_STRATEGY);

	if (rc != Z_OK)
		return rc == Z_MEM_ERROR ? -ENOMEM : -EINVAL;
	zs.next_in = src;
	zs.avail_in = (uInt)n;
	zs.next_out = dst;
	zs.avail_out = (uInt)cap;
	rc = deflate(&zs, Z_FINISH);
	*out = zs.total_out;
	deflateEnd(&zs);
	if (rc == Z_MEM_ERROR)
		return -ENOMEM;
	return rc == Z_STREAM_END ? 0 : -ENOSPC;
}

static int gzip_inflate(const uint8_t *src, size_t n, uint8_t *dst, size_t cap, size_t *out)
{
	z_stream zs = {.zalloc = z_alloc, .zfree = z_free};
	int rc = inflateInit2(&zs, -CC_GZIP_WBITS);

	if (rc != Z_OK)
		return rc == Z_MEM_ERROR ? -ENOMEM : -EINVAL;
	zs.next_in = src;
	zs.avail_in = (uInt)n;
	zs.next_out = dst;
	zs.avail_out = (uInt)cap;
	rc = inflate(&zs, Z_SYNC_FLUSH);
	if (rc == Z_OK && !zs.avail_in && zs.avail_out) {
		/* raw inflate may want one byte past the stream (the kernel's
		 * gzip1_decompress feeds a zero byte the same way) */
		static const uint8_t zero;

		zs.next_in = &zero;
		zs.avail_in = 1;
		rc = inflate(&zs, Z_FINISH);
	}
	*out = zs.total_out;
	inflateEnd(&zs);
	if (rc == Z_MEM_ERROR)
		return -ENOMEM;
	return rc == Z_STREAM_END ? 0 : -EUCLEAN;
}

/* ---- zstd1: one zstd frame at level 3 (zstd_compress_cctx, zstd_decompress_dctx) ---- */

static size_t zstd_bound(size_t n)
{
	return ZSTD_compressBound(n);
}

static int zstd_deflate(const uint8_t *src, size_t n, uint8_t *dst, size_t cap, size_t *out)
{
	size_t r = ZSTD_compress(dst, cap, src, n, CC_ZSTD_LEVEL);

	if (ZSTD_isError(r))
		return ZSTD_getErrorCode(r) == ZSTD_error_memory_allocation ? -ENOMEM : -ENOSPC;
	*out = r;
	return 0;
}

static int zstd_inflate(const uint8_t *src, size_t n, uint8_t *dst, size_t cap, size_t *out)
{
	size_t r = ZSTD_decompress(dst, cap, src, n);

	if (ZSTD_isError(r))
		return ZSTD_getErrorCode(r) == ZSTD_error_memory_allocation ? -ENOMEM : -EUCLEAN;
	*out = r;
	return 0;
}

/* By pset id, as the kernel's compression_plugins[] (min_size_deflate: lzo1
 * and zstd1 256, gzip1 64). */
#define COMPRESS(min, name) (&(const struct r4_compress_ops){min, name##_bound, name##_deflate, \
							    name##_inflate})
const struct r4_plugin r4_compress_plugins[3] = {
	{"lzo1", "LZO1X-1: fast, the default", COMPRESS(256, lzo)},
	{"gzip1", "deflate at level 1 (zlib)", COMPRESS(64, gzip)},
	{"zstd1", "Zstandard at level 3", COMPRESS(256, zstd)},
};
#undef COMPRESS

static const struct r4_compress_ops *cc_plugin(unsigned id)
{
	return r4_plugin_ops(R4_PTYPE_COMPRESSION, id);
}

/* ========================= one operation's state ====================== */

struct cc {
	struct r4_db *db;
	const struct r4_inode *ino;
	const struct r4_compress_ops *plug;
	unsigned shift;
	size_t clsize;
	unsigned cmode;		/* enum r4_cmode */
	bool on;		/* compression on (lattd, ultim, conv: compression_is_on) */
	unsigned factor;	/* lattd's lattice factor */
	uint64_t blk;		/* node of the last disk cluster loaded, for messages */
	uint8_t *dc;		/* a disk cluster: clsize bytes */
	uint8_t *lc;		/* a logical cluster: clsize bytes */
	uint8_t *out;		/* compressor output: bound(clsize) + CC_CSUM bytes, made on demand */
	size_t outcap;
};

static uint64_t oid_of(const struct cc *c)
{
	return r4_key_objectid(&c->ino->sdkey);
}

static void cc_close(struct cc *c)
{
	r4_free(c->dc);
	r4_free(c->lc);
	r4_free(c->out);
}

/* The file's cluster size, compressor and mode (bad pset ids are corruption). */
static int cc_open(struct r4_db *db, const struct r4_inode *ino, struct cc *c)
{
	const struct r4_cluster_ops *cl = r4_plugin_ops(R4_PTYPE_CLUSTER, ino->cluster);
	uint64_t oid = r4_key_objectid(&ino->sdkey);

	memset(c, 0, sizeof(*c));
	if (!cl)
		return R4_CORRUPT(&db->lg, 0, "file %llx: unknown cluster plugin %u",
				  (unsigned long long)oid, ino->cluster);
	if (!(c->plug = cc_plugin(ino->compress)))
		return R4_CORRUPT(&db->lg, 0, "file %llx: unknown compression plugin %u",
				  (unsigned long long)oid, ino->compress);
	if (!r4_plugin_get(R4_PTYPE_CMODE, ino->cmode))
		return R4_CORRUPT(&db->lg, 0, "file %llx: unknown compression mode %u",
				  (unsigned long long)oid, ino->cmode);
	c->db = db;
	c->ino = ino;
	c->shift = cl->shift;
	c->clsize = (size_t)1 << c->shift;
	c->cmode = ino->cmode;
	c->on = true;		/* as init_inode_data_cryptcompress leaves it */
	c->factor = 1;
	if (!(c->dc = r4_malloc(c->clsize)) || !(c->lc = r4_malloc(c->clsize))) {
		cc_close(c);
		return -ENOMEM;
	}
	return 0;
}

/* Bytes of cluster idx in a file of `size` bytes. */
static size_t lsize_of(const struct cc *c, uint64_t idx, uint64_t size)
{
	uint64_t start = idx << c->shift;

	return size <= start ? 0 : (size_t)R4_MIN((uint64_t)c->clsize, size - start);
}

/* ============================ disk clusters =========================== */

/* One ctail item met while gathering cluster [start, start + clsize). */
static int dc_take(struct cc *c, uint64_t start, uint64_t off, unsigned pid, const uint8_t *body,
		   unsigned len, size_t *have)
{
	const struct r4_logger *lg = &c->db->lg;
	unsigned long long o = off;
	const uint8_t *data;
	unsigned shift;
	size_t n;
	int rc;

	if (pid != R4_ITEM_CTAIL40)
		return R4_CORRUPT(lg, c->blk, "file %llx: item of plugin %u at offset %llu of a "
				  "compressed file", (unsigned long long)oid_of(c), pid, o);
	if ((rc = r4_item_ctail_decode(body, len, &shift, &data, &n)))
		return R4_CORRUPT(lg, c->blk, "file %llx: empty ctail item at offset %llu",
				  (unsigned long long)oid_of(c), o);
	if (shift == R4_CTAIL_UNPREPPED)
		return R4_CORRUPT(lg, c->blk, "file %llx: unprepped disk cluster at offset %llu",
				  (unsigned long long)oid_of(c), o);
	if (shift != c->shift)
		return R4_CORRUPT(lg, c->blk, "file %llx: ctail item at offset %llu has cluster "
				  "shift %u, the file's is %u", (unsigned long long)oid_of(c), o,
				  shift, c->shift);
	if (off != start + *have)
		return R4_CORRUPT(lg, c->blk, "file %llx: disk cluster at %llu has a gap before "
				  "offset %llu", (unsigned long long)oid_of(c),
				  (unsigned long long)start, o);
	if (n > c->clsize - *have)
		return R4_CORRUPT(lg, c->blk, "file %llx: ctail item at offset %llu crosses the "
				  "cluster boundary", (unsigned long long)oid_of(c), o);
	memcpy(c->dc + *have, data, n);
	*have += n;
	return 0;
}

/* Gather the disk cluster of cluster idx into c->dc: *n bytes, 0 for a hole. */
static int dc_load(struct cc *c, uint64_t idx, size_t *n)
{
	struct r4_db *db = c->db;
	uint64_t start = idx << c->shift;
	struct r4_path p;
	uint8_t *body;
	unsigned pid, len;
	size_t have = 0;
	r4_key k;
	int rc;

	r4_reg_body_key(c->ino, start, &k);
	if ((rc = r4_tree_lookup(db, &k, R4_LEVEL_LEAF, &p)))
		return rc;
	/* the lookup stops at the last item <= the cluster's key: the
	 * cluster's first item, or one before it */
	for (int step = 0;; step++) {
		if (step && (rc = r4_tree_next(db, &p)) <= 0)
			break;
		if (!r4_path_item(db, &p, &k, &pid, &body, &len) || !r4_reg_is_body(c->ino, &k) ||
		    r4_key_offset(&k) < start) {
			if (step == 0)
				continue;
			break;
		}
		if (r4_key_offset(&k) >= start + c->clsize)
			break;
		c->blk = p.lv[R4_LEVEL_LEAF].node->blk;
		if ((rc = dc_take(c, start, r4_key_offset(&k), pid, body, len, &have)))
			break;
	}
	r4_path_release(db, &p);
	if (rc < 0)
		return rc;
	*n = have;
	return 0;
}

/* Remove the file's items of offsets [from, upto]; *units = their data bytes. */
static int dc_remove(struct cc *c, uint64_t from, uint64_t upto, uint64_t *units)
{
	struct r4_db *db = c->db;
	struct r4_path p;
	uint8_t *body;
	unsigned pid, len;
	r4_key k, last;
	int rc;

	r4_reg_body_key(c->ino, upto, &last);
	for (;;) {
		if ((rc = r4_tree_lookup(db, &last, R4_LEVEL_LEAF, &p)))
			return rc;
		if (!r4_path_item(db, &p, &k, &pid, &body, &len) || !r4_reg_is_body(c->ino, &k) ||
		    r4_key_offset(&k) < from) {
			r4_path_release(db, &p);
			return 0;
		}
		*units += len > R4_CTAIL_DATA ? len - R4_CTAIL_DATA : 0;
		if ((rc = r4_tree_remove(db, &p)))
			return rc;
	}
}

/* Insert n bytes of stream s as the disk cluster at file offset start. */
static int dc_insert(struct cc *c, uint64_t start, const uint8_t *s, size_t n)
{
	struct r4_db *db = c->db;
	unsigned max = r4_tree_max_item(db);
	struct r4_path p;
	uint8_t *item;
	r4_key k;
	int rc = 0;

	if (!(item = r4_malloc(max)))
		return -ENOMEM;
	for (size_t o = 0; o < n && !rc;) {
		size_t cnt = R4_MIN((size_t)max - R4_CTAIL_DATA, n - o);
		unsigned room;

		r4_reg_body_key(c->ino, start + o, &k);
		if ((rc = r4_tree_lookup(db, &k, R4_LEVEL_LEAF, &p)))
			break;
		/* fill what the leaf has left rather than split it, as tails do */
		room = p.level == R4_LEVEL_LEAF ? r4_tree_free(db, &p) : 0;
		room = room > R4_IH_SIZE + R4_CTAIL_DATA ? room - R4_IH_SIZE - R4_CTAIL_DATA : 0;
		if (room < cnt && room >= 256)
			cnt = room;
		r4_item_ctail_encode(c->shift, s + o, cnt, item);
		rc = r4_tree_insert(db, &p, &k, R4_ITEM_CTAIL40, item,
				    (unsigned)(cnt + R4_CTAIL_DATA));
		o += cnt;
	}
	r4_free(item);
	return rc;
}

/* ========================= clusters: the transform ==================== */

/* A compressed stream s of n bytes (checksum included) into out: lsize bytes. */
static int inflate_cluster(const struct r4_logger *lg, uint64_t blk, uint64_t oid,
			   unsigned compress, uint64_t start, const uint8_t *s, size_t n,
			   uint8_t *out, size_t lsize)
{
	const struct r4_compress_ops *pl = cc_plugin(compress);
	unsigned long long o = start;
	uint32_t want, got;
	size_t len = 0;
	int rc;

	if (n <= CC_CSUM)
		return R4_CORRUPT(lg, blk, "file %llx: compressed cluster at %llu of %zu bytes "
				  "has no room for its checksum", (unsigned long long)oid, o, n);
	want = r4_le32_get(s + n - CC_CSUM);
	if ((got = r4_adler32(s, n - CC_CSUM)) != want)
		return R4_BADCSUM(lg, blk, "file %llx: cluster at %llu: checksum %08x, computed "
				  "%08x", (unsigned long long)oid, o, want, got);
	rc = pl->inflate(s, n - CC_CSUM, out, lsize, &len);
	if (rc == -ENOMEM)
		return rc;
	if (rc || len != lsize)
		return R4_CORRUPT(lg, blk, "file %llx: cluster at %llu does not %s-decompress to "
				  "its %zu bytes", (unsigned long long)oid, o,
				  r4_plugin_label(R4_PTYPE_COMPRESSION, compress), lsize);
	return 0;
}

/* Cluster idx of a file of `size` bytes into c->lc; *dlen = its stored bytes. */
static int cluster_read(struct cc *c, uint64_t idx, uint64_t size, size_t *dlen)
{
	size_t lsize = lsize_of(c, idx, size), n;
	int rc;

	if ((rc = dc_load(c, idx, &n)))
		return rc;
	*dlen = n;
	if (n == 0)
		memset(c->lc, 0, lsize);	/* no disk cluster: a hole */
	else if (n >= lsize)
		memcpy(c->lc, c->dc, lsize);	/* raw (longer: the kernel reads its head too) */
	else
		return inflate_cluster(&c->db->lg, c->blk, oid_of(c), c->ino->compress,
				       idx << c->shift, c->dc, n, c->lc, lsize);
	return 0;
}

/* Should cluster idx of lsize bytes be tried (should_compress, the mode's should_deflate)? */
static bool should_compress(const struct cc *c, uint64_t idx, size_t lsize)
{
	if (lsize < c->plug->min_deflate)
		return false;
	switch (c->cmode) {
	case R4_CMODE_NONE:
		return false;
	case R4_CMODE_FORCE:
		return true;
	case R4_CMODE_LATTD:
		return c->on || idx % c->factor == 0;
	default:			/* ultim, conv */
		return c->on;
	}
}

/* The mode's accept_hook and discard_hook (the latter for complete clusters only). */
static void compressed(struct cc *c, bool accepted, bool complete)
{
	if (c->cmode == R4_CMODE_LATTD && accepted) {
		c->on = true;
		c->factor = 1;
	} else if (c->cmode == R4_CMODE_LATTD && complete) {
		c->on = false;
		if (c->factor < CC_MAX_LATTICE)
			c->factor <<= 1;
	} else if (c->cmode == R4_CMODE_ULTIM && !accepted && complete) {
		c->on = false;
	}
}

/* Store the lsize bytes of c->lc as cluster idx (which has no items now). */
static int cluster_store(struct cc *c, uint64_t idx, size_t lsize, size_t *dlen)
{
	const uint8_t *s = c->lc;
	size_t n = lsize, len = 0;
	int rc;

	if (lsize && should_compress(c, idx, lsize)) {
		if (!c->out) {
			c->outcap = c->plug->bound(c->clsize);
			if (!(c->out = r4_malloc(c->outcap + CC_CSUM)))
				return -ENOMEM;
		}
		rc = c->plug->deflate(c->lc, lsize, c->out, c->outcap, &len);
		if (rc == -ENOMEM)
			return rc;
		/* kept only when it saves more than its checksum costs (save_compressed) */
		if (!rc && len + CC_CSUM < lsize) {
			r4_le32_put(c->out + len, r4_adler32(c->out, len));
			s = c->out;
			n = len + CC_CSUM;
		}
		compressed(c, s == c->out, lsize == c->clsize);
	}
	*dlen = n;
	return n ? dc_insert(c, idx << c->shift, s, n) : 0;
}

/*
 * Cluster idx of a file of oldsize bytes becomes lsize bytes long: its old
 * bytes stay (up to lsize), zeros follow them, and n bytes of src land at
 * `at` in it.  *delta gets the change in stored bytes.
 */
static int cluster_rewrite(struct cc *c, uint64_t idx, uint64_t oldsize, size_t lsize,
			   const uint8_t *src, size_t at, size_t n, int64_t *delta)
{
	uint64_t start = idx << c->shift, units = 0;
	size_t oldl = lsize_of(c, idx, oldsize), keep = 0, dlen, nlen;
	int rc;

	assert(at + n <= lsize && lsize <= c->clsize);
	/* the old cluster is read (and so checked) before anything changes */
	if (oldl && !(at == 0 && n >= lsize)) {
		if ((rc = cluster_read(c, idx, oldsize, &dlen)))
			return rc;
		keep = R4_MIN(oldl, lsize);
	} else if ((rc = dc_load(c, idx, &dlen))) {
		return rc;
	}
	memset(c->lc + keep, 0, lsize - keep);
	if (n)
		memcpy(c->lc + at, src, n);
	if ((rc = dc_remove(c, start, start + c->clsize - 1, &units)) ||
	    (rc = cluster_store(c, idx, lsize, &nlen)))
		return rc;
	*delta += (int64_t)nlen - (int64_t)dlen;
	return 0;
}

/* ========================== conv: the dispatch ========================= */

/*
 * Conversion is off for good: mode lattd, stored (disable_conversion).  A
 * slot equal to the root's is left out instead: fsck.reiser4 wants only
 * the members that differ from the root's stored.
 */
static void disable_conversion(struct cc *c, struct r4_inode *ino)
{
	struct r4_pset *ps = &ino->sd.sd_pset;

	if (c->db->pset.compress_mode != R4_CMODE_LATTD) {
		ino->sd.sd_mask |= 1u << R4_SDEXT_PSET;
		r4_item_pset_set(ps, R4_PSET_CMODE, R4_CMODE_LATTD);
	} else {
		unsigned n = 0;

		for (unsigned i = 0; i < ps->ps_count; i++)
			if (ps->ps_slot[i].member != R4_PSET_CMODE)
				ps->ps_slot[n++] = ps->ps_slot[i];
		ps->ps_count = n;
	}
	ino->cmode = c->cmode = R4_CMODE_LATTD;
}

/*
 * The kernel's write_dispatch_hook for a write piece at pos of a file of
 * `size` bytes, in conv mode: a hole in the first cluster, or a file
 * already past it, turns conversion off; a write starting where a complete
 * first cluster ends decides: stored in less than half its size, the file
 * stays ccreg40 (conversion off), otherwise *convert.
 */
static int dispatch(struct cc *c, struct r4_inode *ino, uint64_t pos, uint64_t size,
		    bool *convert)
{
	size_t n;
	int rc;

	if (c->cmode != R4_CMODE_CONV)
		return 0;
	if (pos > size || size > c->clsize) {
		disable_conversion(c, ino);
		return 0;
	}
	if (pos < c->clsize)
		return 0;
	if ((rc = dc_load(c, 0, &n)))
		return rc;
	if (n && n >= c->clsize / 2)
		*convert = true;
	else
		disable_conversion(c, ino);
	return 0;
}

/* ============================== operations ============================ */

bool r4_ccreg_is(const struct r4_inode *ino)
{
	uint16_t id;

	return r4_sd_has(&ino->sd, R4_SDEXT_PSET) &&
	       r4_item_pset_get(&ino->sd.sd_pset, R4_PSET_FILE, &id) && id == R4_FILE_CCREG40;
}

void r4_ccreg_init_sd(struct r4_sd *sd)
{
	sd->sd_mask |= 1u << R4_SDEXT_PSET;
	r4_item_pset_set(&sd->sd_pset, R4_PSET_FILE, R4_FILE_CCREG40);
}

void r4_ccreg_drop_sd(struct r4_db *db, struct r4_inode *ino)
{
	ino->sd.sd_mask &= ~(UINT64_C(1) << R4_SDEXT_PSET);
	memset(&ino->sd.sd_pset, 0, sizeof(ino->sd.sd_pset));
	ino->formatting = db->pset.formatting;
	ino->compress = db->pset.compress;
	ino->cmode = db->pset.compress_mode;
	ino->cluster = db->pset.cluster;
}

int r4_ccreg_read(struct r4_db *db, const struct r4_inode *ino, uint64_t off, void *buf,
		  size_t len, size_t *got)
{
	uint64_t size = ino->sd.sd_size, end;
	uint8_t *out = buf;
	struct cc c;
	size_t dlen;
	int rc;

	if (off >= size || len == 0) {
		*got = 0;
		return 0;
	}
	end = R4_MIN(size, off + len);
	if ((rc = cc_open(db, ino, &c)))
		return rc;
	for (uint64_t idx = off >> c.shift; idx <= (end - 1) >> c.shift; idx++) {
		uint64_t cs = idx << c.shift, from = R4_MAX(off, cs), to = R4_MIN(end, cs + c.clsize);

		if ((rc = cluster_read(&c, idx, size, &dlen)))
			break;
		memcpy(out + (from - off), c.lc + (from - cs), to - from);
	}
	cc_close(&c);
	if (!rc)
		*got = end - off;
	return rc;
}

int r4_ccreg_write(struct r4_db *db, struct r4_inode *ino, uint64_t off, const void *buf,
		   size_t len, size_t *done, bool *convert)
{
	uint64_t cur = ino->sd.sd_size, end = off + len;
	const uint8_t *src = buf;
	int64_t delta = 0;
	struct cc c;
	int rc;

	*done = 0;
	*convert = false;
	if (len == 0)
		return 0;
	if ((rc = cc_open(db, ino, &c)))
		return rc;
	if (off > cur && (cur & (c.clsize - 1)) && (cur >> c.shift) < (off >> c.shift)) {
		/* the old last cluster gets its zeros first (the kernel's hole window) */
		uint64_t idx = cur >> c.shift;

		if (!(rc = dispatch(&c, ino, off, cur, convert)) &&
		    !(rc = cluster_rewrite(&c, idx, cur, c.clsize, NULL, 0, 0, &delta)))
			cur = (idx + 1) << c.shift;
	}
	for (uint64_t idx = off >> c.shift; !rc && idx <= (end - 1) >> c.shift; idx++) {
		uint64_t cs = idx << c.shift, pos = R4_MAX(off, cs);
		uint64_t pend = R4_MIN(end, cs + c.clsize);
		size_t lsize = (size_t)R4_MIN((uint64_t)c.clsize, R4_MAX(cur, pend) - cs);

		if ((rc = dispatch(&c, ino, pos, cur, convert)) || *convert)
			break;
		if ((rc = cluster_rewrite(&c, idx, cur, lsize, src + (pos - off), (size_t)(pos - cs),
					  (size_t)(pend - pos), &delta)))
			break;
		cur = R4_MAX(cur, pend);
		*done = (size_t)(pend - off);
	}
	cc_close(&c);
	if (rc)
		return rc;
	ino->sd.sd_size = R4_MAX(ino->sd.sd_size, cur);
	ino->sd.sd_bytes_rdev = (uint64_t)((int64_t)ino->sd.sd_bytes_rdev + delta);
	return 0;
}

uint64_t r4_ccreg_cost(struct r4_db *db, const struct r4_inode *ino, uint64_t off, uint64_t len)
{
	const struct r4_cluster_ops *cl = r4_plugin_ops(R4_PTYPE_CLUSTER, ino->cluster);
	unsigned shift = cl ? cl->shift : 16;
	uint64_t clsize = (uint64_t)1 << shift;
	/* dc_insert fills a leaf's rest (256 bytes or more), then whole items */
	uint64_t items = clsize / (r4_tree_max_item(db) - R4_CTAIL_DATA) + 3;
	uint64_t clusters = (len ? (off + len - 1) >> shift : off >> shift) - (off >> shift) + 2;

	return clusters * (r4_txn_remove_cost(db, items) +
			   r4_txn_tree_cost(db, items, clsize + items * R4_CTAIL_DATA));
}

int r4_ccreg_truncate(struct r4_db *db, struct r4_inode *ino, uint64_t size)
{
	uint64_t old = ino->sd.sd_size, units = 0;
	int64_t delta = 0;
	struct cc c;
	int rc;

	if ((rc = cc_open(db, ino, &c)))
		return rc;
	if (c.cmode == R4_CMODE_CONV)
		disable_conversion(&c, ino);	/* setattr_dispatch_hook */
	if (size < old) {
		uint64_t keep = ((size + c.clsize - 1) >> c.shift) << c.shift;

		if (size & (c.clsize - 1))
			rc = cluster_rewrite(&c, size >> c.shift, old, (size_t)(size & (c.clsize - 1)),
					     NULL, 0, 0, &delta);
		if (!rc && !(rc = dc_remove(&c, keep, UINT64_MAX, &units)))
			delta -= (int64_t)units;
	} else if (size > old && (old & (c.clsize - 1))) {
		uint64_t idx = old >> c.shift;

		rc = cluster_rewrite(&c, idx, old, lsize_of(&c, idx, size), NULL, 0, 0, &delta);
	}
	cc_close(&c);
	if (rc)
		return rc;
	ino->sd.sd_size = size;
	ino->sd.sd_bytes_rdev = (uint64_t)((int64_t)ino->sd.sd_bytes_rdev + delta);
	return 0;
}

int r4_ccreg_punch(struct r4_db *db, struct r4_inode *ino, uint64_t off, uint64_t end)
{
	uint64_t size = ino->sd.sd_size, units = 0, whole, upto;
	uint8_t *zeros = NULL;
	int64_t delta = 0;
	struct cc c;
	int rc;

	assert(off < end && end <= size);
	if ((rc = cc_open(db, ino, &c)))
		return rc;
	/* the clusters wholly inside go, the last one with the end (its
	 * logical size ends there); the one or two cut in part are rewritten
	 * with zeros there, unless they are holes */
	whole = ((off + c.clsize - 1) >> c.shift) << c.shift;
	upto = end == size ? end : (end >> c.shift) << c.shift;
	if (whole < upto && !(rc = dc_remove(&c, whole, upto - 1, &units)))
		delta -= (int64_t)units;
	for (int side = 0; side < 2 && !rc; side++) {
		uint64_t a = side ? R4_MAX(off, upto) : off, b = side ? end : R4_MIN(end, whole);
		uint64_t idx = a >> c.shift, cs = idx << c.shift;
		size_t n;

		if (a >= b || (side && whole > upto) || (rc = dc_load(&c, idx, &n)) || !n)
			continue;
		if (!zeros && !(zeros = r4_calloc(1, c.clsize)))
			rc = -ENOMEM;
		else
			rc = cluster_rewrite(&c, idx, size, lsize_of(&c, idx, size), zeros,
					     (size_t)(a - cs), (size_t)(b - a), &delta);
	}
	r4_free(zeros);
	cc_close(&c);
	if (!rc)
		ino->sd.sd_bytes_rdev = (uint64_t)((int64_t)ino->sd.sd_bytes_rdev + delta);
	return rc;
}

int r4_ccreg_inflate(const struct r4_logger *lg, uint64_t blk, uint64_t oid, unsigned compress,
		     unsigned shift, uint64_t size, uint64_t idx, const uint8_t *s, size_t n,
		     uint8_t *out)
{
	uint64_t start = idx << shift;
	size_t lsize;

	if (start >= size)
		return R4_CORRUPT(lg, blk, "cluster at %llu lies past the file's %llu bytes",
				  (unsigned long long)start, (unsigned long long)size);
	lsize = (size_t)R4_MIN((uint64_t)1 << shift, size - start);
	if (n >= lsize) {
		memcpy(out, s, lsize);	/* raw (longer: the kernel reads its head too) */
		return 0;
	}
	if (!cc_plugin(compress))
		return R4_CORRUPT(lg, blk, "unknown compression plugin %u", compress);
	return inflate_cluster(lg, blk, oid, compress, start, s, n, out, lsize);
}

int r4_ccreg_check_cluster(const struct r4_logger *lg, uint64_t blk, unsigned compress,
			   unsigned shift, uint64_t size, uint64_t idx, const uint8_t *s,
			   size_t n)
{
	uint8_t *out;
	int rc;

	if (!(out = r4_malloc((size_t)1 << shift)))
		return -ENOMEM;
	rc = r4_ccreg_inflate(lg, blk, 0, compress, shift, size, idx, s, n, out);
	r4_free(out);
	return rc;
}
