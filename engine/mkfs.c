/*
 * mkfs.c - making a fresh format40 volume, as mkfs.reiser4 1.2.2 lays it
 * out (ENGINE.md 1.2, 1.11): 64 KiB of zeros, master and format super
 * blocks, bitmaps, journal header and footer, status block, backup blocks,
 * and a tree of height 2 (a root twig over one leaf) holding the root
 * directory: its stat data with the full plugin set of the profile, and a
 * cde40 item with "." and "..", both pointing at the root itself.
 *
 * The image is opened, created if missing, with its lock (io_file.c)
 * before anything is read: a volume in use is -EBUSY and untouched.  On
 * request (r4 mkfs without -f) one that already holds a Reiser4 volume is
 * -EEXIST, as mkfs.reiser4 and mke2fs ask before they overwrite one; the
 * check is made here, under the lock, so nothing can write one meanwhile.
 */
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>
#include <uuid/uuid.h>

#include "alloc.h"
#include "format.h"
#include "io.h"
#include "item.h"
#include "key.h"
#include "node.h"
#include "obj.h"
#include "plugin.h"

void r4_mkfs_defaults(struct r4_mkfs_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->blocksize = 4096;
	o->hash = R4_HASH_R5;
	o->fibration = R4_FIBRE_EXT_1;	/* mkfs.reiser4's profile */
	o->formatting = 2;		/* smart */
	o->create = 0;			/* reg40 */
	o->mtime = -1;
}

/* The root's plugin set: the 12 members mkfs.reiser4 writes, in its order. */
static void root_pset(const struct r4_mkfs_opts *o, struct r4_pset *ps)
{
	const uint16_t ids[][2] = {
		{R4_PSET_PERM, 0}, {R4_PSET_FORMATTING, (uint16_t)o->formatting},
		{R4_PSET_HASH, (uint16_t)o->hash}, {R4_PSET_FIBRATION, (uint16_t)o->fibration},
		{R4_PSET_SD, 0}, {R4_PSET_DIRITEM, R4_ITEM_CDE40}, {R4_PSET_CIPHER, 0},
		{R4_PSET_DIGEST, 0}, {R4_PSET_COMPRESSION, 0}, {R4_PSET_CMODE, 4},
		{R4_PSET_CLUSTER, 0}, {R4_PSET_CREATE, (uint16_t)o->create},
	};

	memset(ps, 0, sizeof(*ps));
	for (size_t i = 0; i < R4_ARRAY_SIZE(ids); i++)
		r4_item_pset_set(ps, ids[i][0], ids[i][1]);
}

/* The root leaf: stat data and the "." / ".." item. */
static void build_leaf(uint8_t *leaf, uint32_t bs, unsigned npid, uint32_t mkfs_id,
		       const struct r4_mkfs_opts *o, uint32_t now)
{
	struct r4_dirent e[2] = {0};
	struct r4_sd sd = {0};
	r4_key sdkey;

	r4_obj_root_key(&sdkey);
	sd.sd_mask = 1u << R4_SDEXT_LW | 1u << R4_SDEXT_UNIX | 1u << R4_SDEXT_PSET;
	sd.sd_mode = S_IFDIR | 0755;
	sd.sd_nlink = 3;		/* ".", "..", and the root's own name */
	sd.sd_size = 2;
	sd.sd_atime = sd.sd_mtime = sd.sd_ctime = now;
	r4_key_entry(&e[0].de_key, R4_ROOT_OID, ".", 1, o->hash, o->fibration);
	r4_key_entry(&e[1].de_key, R4_ROOT_OID, "..", 2, o->hash, o->fibration);
	e[0].de_sdkey = e[1].de_sdkey = sdkey;
	sd.sd_bytes_rdev = r4_item_cde_unit_size(&e[0]) + r4_item_cde_unit_size(&e[1]);
	root_pset(o, &sd.sd_pset);

	r4_node_init(leaf, bs, npid, R4_LEVEL_LEAF, mkfs_id);
	r4_item_stat_encode(&sd, r4_node_insert(leaf, bs, 0, &sdkey, R4_ITEM_STAT40,
						(unsigned)r4_item_stat_size(&sd)));
	r4_item_cde_encode(e, 2, r4_node_insert(leaf, bs, 1, &e[0].de_key, R4_ITEM_CDE40,
						 (unsigned)r4_item_cde_size(e, 2)));
	r4_node_seal(leaf, bs);
}

struct mk {
	struct r4_io *io;
	struct r4_alloc *alloc;
	uint32_t bs;
	uint8_t *buf;
	const uint8_t *backup;
};

static int emit(void *ctx, uint64_t blk, const uint8_t *buf)
{
	struct mk *m = ctx;

	return r4_io_write(m->io, blk * m->bs, buf, m->bs);
}

static int mark_backup(void *ctx, uint64_t blk)
{
	r4_alloc_mark_used(((struct mk *)ctx)->alloc, blk, 1);
	return 0;
}

static int write_backup(void *ctx, uint64_t blk)
{
	struct mk *m = ctx;

	return emit(m, blk, m->backup);
}

/* A Reiser4 volume is there: the master super block's magic (format.h). */
static int holds_volume(struct r4_io *io, bool *yes)
{
	static const char magic[8] = "ReIsEr4";
	uint8_t buf[sizeof(magic)];
	uint64_t bytes;
	int rc;

	*yes = false;
	if ((rc = r4_io_size(io, &bytes)) || bytes < R4_MSB_OFFSET + sizeof(buf))
		return rc;
	if ((rc = r4_io_read(io, R4_MSB_OFFSET, buf, sizeof(buf))))
		return rc;
	*yes = !memcmp(buf, magic, sizeof(magic));
	return 0;
}

/* Under the lock: refuse a volume if asked to, then make a regular file
 * at least `size` bytes (a block device is what it is). */
static int prepare(struct r4_io *io, uint64_t size, bool no_overwrite)
{
	uint64_t bytes;
	bool vol;
	int rc;

	if (no_overwrite && ((rc = holds_volume(io, &vol)) || (rc = vol ? -EEXIST : 0)))
		return rc;
	if ((rc = r4_io_size(io, &bytes)) || bytes >= size)
		return rc;
	rc = r4_io_truncate(io, size);
	return rc == -EINVAL ? -EFBIG : rc;	/* a block device, a partition, an export */
}

static int make_volume(struct mk *m, const struct r4_mkfs_opts *o, uint64_t blocks)
{
	uint32_t bs = m->bs, mkfs_id = o->mkfs_id, now;
	unsigned npid = o->node41 ? 1 : 0;
	uint32_t pset14[R4_BK_PSET_MEMBERS] = {1, 0, 0, o->formatting, o->hash, o->fibration, 0,
					       R4_ITEM_CDE40, 0, 0, 0, 4, 0, o->create};
	uint8_t *bk = NULL;
	struct r4_msb msb = {0};
	struct r4_fsb sb = {0};
	struct r4_status st = {0};
	uint64_t twig, leaf, got;
	uuid_t uu;
	int rc;

	if (o->uuid)
		memcpy(msb.msb_uuid, o->uuid, 16);
	else {
		uuid_generate(uu);
		memcpy(msb.msb_uuid, uu, 16);
	}
	if (!mkfs_id) {
		uuid_generate(uu);
		mkfs_id = r4_le32_get(uu) | 1;
	}
	struct timespec t0 = {.tv_sec = o->mtime >= 0 ? (time_t)o->mtime : time(NULL)};
	uint32_t ns;

	r4_obj_time(&t0, &now, &ns);
	msb.msb_blksize = bs;
	if (o->label)
		memcpy(msb.msb_label, o->label, strnlen(o->label, sizeof(msb.msb_label)));

	/* everything before the tree: reserved area, fixed blocks, bitmaps, backups */
	r4_alloc_mark_used(m->alloc, 0, R4_BACKUP_START(bs));
	if ((rc = r4_backup_layout(bs, blocks, mark_backup, m)))
		return rc;
	if ((rc = r4_alloc_alloc(m->alloc, R4_BACKUP_START(bs), 1, &twig, &got)) ||
	    (rc = r4_alloc_alloc(m->alloc, twig + 1, 1, &leaf, &got)))
		return rc;

	sb.sb_block_count = blocks;
	sb.sb_root_block = twig;
	sb.sb_oid = R4_FIRST_OID;
	sb.sb_file_count = 1;
	sb.sb_mkfs_id = mkfs_id;
	sb.sb_tree_height = 2;
	sb.sb_policy = (uint16_t)o->formatting;
	sb.sb_flags = 1;		/* large keys */
	sb.sb_version = R4_FORMAT_VERSION;
	sb.sb_node_pid = npid;
	sb.sb_free_blocks = r4_alloc_free_count(m->alloc);

	/* zero the first 64 KiB and the fixed blocks, so stale signatures go */
	memset(m->buf, 0, bs);
	for (uint64_t b = 0; b < R4_BACKUP_START(bs); b++)
		if ((rc = emit(m, b, m->buf)))
			return rc;
	r4_msb_encode(&msb, m->buf);
	if ((rc = r4_io_write(m->io, R4_MSB_OFFSET, m->buf, bs)))
		return rc;
	memset(m->buf, 0, bs);
	r4_fsb_encode(&sb, m->buf);
	if ((rc = emit(m, R4_FSB_BLOCK(bs), m->buf)))
		return rc;
	memset(m->buf, 0, bs);
	r4_status_encode(&st, m->buf);
	if ((rc = emit(m, R4_STATUS_BLOCK(bs), m->buf)))
		return rc;
	if (!(bk = r4_malloc(bs)))
		return -ENOMEM;
	r4_backup_encode(&msb, &sb, pset14, bk, bs);
	m->backup = bk;
	rc = r4_backup_layout(bs, blocks, write_backup, m);
	r4_free(bk);
	if (rc)
		return rc;

	/* the tree: a twig pointing at the one leaf */
	build_leaf(m->buf, bs, npid, mkfs_id, o, now);
	if ((rc = emit(m, leaf, m->buf)))
		return rc;
	r4_key k;
	r4_obj_root_key(&k);
	r4_node_init(m->buf, bs, npid, R4_LEVEL_TWIG, mkfs_id);
	r4_item_nodeptr_encode(leaf, r4_node_insert(m->buf, bs, 0, &k, R4_ITEM_NODEPTR40, 8));
	r4_node_seal(m->buf, bs);
	if ((rc = emit(m, twig, m->buf)))
		return rc;
	if ((rc = r4_alloc_commit(m->alloc, emit, m)))
		return rc;
	return r4_io_sync(m->io);
}

int r4_mkfs(const char *path, uint64_t size, const struct r4_mkfs_opts *o)
{
	struct r4_mkfs_opts def;
	struct mk m = {0};
	uint64_t blocks;
	int rc;

	if (!o) {
		r4_mkfs_defaults(&def);
		o = &def;
	}
	m.bs = o->blocksize ? o->blocksize : 4096;
	if (m.bs != 4096)
		return -EINVAL;		/* the fixed layout is defined for 4 KiB blocks */
	if (!r4_plugin_get(R4_PTYPE_HASH, o->hash) || !r4_plugin_get(R4_PTYPE_FIBRE, o->fibration) ||
	    !r4_plugin_get(R4_PTYPE_FORMATTING, o->formatting) ||
	    (o->create != 0 && o->create != 4))
		return -EINVAL;
	blocks = size / m.bs;
	if (size < R4_MKFS_MIN_SIZE)
		return -ENOSPC;		/* too small for a useful volume */
	/* the lock first: nothing is looked at or changed while another holds it */
	struct r4_logger lg = {.fn = o->log, .ctx = o->log_ctx};

	/* (a partition of a file that is not there is not made either) */
	if ((rc = r4_io_open(path, R4_IO_RW | (o->partition ? 0 : R4_IO_CREATE), o->partition,
			     &lg, &m.io)))
		return rc;
	rc = prepare(m.io, size, o->no_overwrite);
	if (!rc && !(m.buf = r4_malloc(m.bs)))
		rc = -ENOMEM;
	if (!rc && !(rc = r4_alloc_new(m.bs, blocks, &m.alloc)))
		rc = make_volume(&m, o, blocks);
	r4_alloc_close(m.alloc);
	r4_free(m.buf);
	r4_io_close(m.io);
	return rc;
}
