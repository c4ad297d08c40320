/*
 * check.c - the image checker and its safe repairs (r4 fsck; r4.h
 * r4_check, docs/fsck.md).
 *
 * One pass over the image, then verdicts:
 *   1. super blocks: the format super block against the image, the backup
 *      copies against the super blocks;
 *   2. journal: header against footer; when they differ, the chain of tx
 *      heads from the header back to the footer, each with its records
 *      (r4_jnl_walk, whose rules replay follows too);
 *   3. the tree, depth first from the root, every node read straight from
 *      the image (not through the cache) and validated by r4_node_check,
 *      then: not empty, not reached twice, pointers inside the volume,
 *      each child's first key equal to its parent's delimiting key and its
 *      last key below the next one, item keys ascending across nodes, item
 *      bodies decoding.  Blocks in use (fixed area, nodes, extent blocks)
 *      go into a bitmap of one bit per block; objects into a hash keyed by
 *      oid holding counters only (names, entries, body end, bytes), so
 *      memory is O(blocks / 8 + objects), never the tree;
 *   4. if the tree is sound: the on-disk bitmap against the used set (each
 *      leaked range, each used-but-free range), the super block counters,
 *      and every object against its items and its names;
 *   5. the status block.
 * A damaged tree (a node that does not validate, keys out of order, an
 * item that does not decode) stops after step 3: counts from a partial
 * walk would make every later verdict, and every repair, wrong.
 *
 * Repairs (fix mode) run after the whole check, in one engine transaction
 * (r4_begin .. r4_commit), so they land together or not at all: bitmap
 * bits (r4_alloc_free / r4_alloc_mark_used), super block counters (the
 * db's fields, written by commit), stat data fields (r4_obj_load/save).
 * Nothing is repaired when the tree is damaged or the journal holds
 * unplayed transactions.  The status block is reset after a commit that
 * leaves nothing unrepaired.
 *
 * The rules for objects are those of docs/objects.md (what fsck.reiser4
 * --check enforces) plus r4's own nlink convention (docs/engine.md):
 * a directory has 2 + the directories whose ".." names it (so the root,
 * whose ".." names itself, has 3 + its subdirectories), anything else
 * one per name.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "alloc.h"
#include "ccreg.h"
#include "db.h"
#include "format.h"
#include "io.h"
#include "item.h"
#include "jnl.h"
#include "key.h"
#include "node.h"
#include "obj.h"
#include "plugin.h"
#include "tree.h"

/* ================================ state ================================ */

enum {					/* struct cobj flags */
	F_SD = 1 << 0,			/* stat data seen */
	F_BADSD = 1 << 1,		/* stat data does not decode or has no LW */
	F_REFKEY = 1 << 2,		/* el0/el1 are an entry's idea of the key, no SD yet */
	F_UNIX = 1 << 3,		/* stat data has the UNIX extension (bytes) */
	F_SYMEXT = 1 << 4,		/* stat data has the SYMLINK extension */
	F_DOT = 1 << 5,			/* directory: "." seen */
	F_DOTDOT = 1 << 6,		/* directory: ".." seen */
	F_ENTRIES = 1 << 7,		/* cde items under this oid */
	F_TAIL = 1 << 8,		/* tail items */
	F_EXTENT = 1 << 9,		/* extent items */
	F_CTAIL = 1 << 10,		/* ctail items, or a ccreg40 regular file (whose
					   clusters may all be holes): clusters checked,
					   size and bytes not */
	F_BODYBAD = 1 << 11,		/* body problem reported: size not judged */
	F_FIX_NLINK = 1 << 12,		/* repairs to make */
	F_FIX_SIZE = 1 << 13,
	F_FIX_BYTES = 1 << 14,
	F_FIX_DOT = 1 << 15,		/* directory: add or retarget "." */
	F_FIX_DOTDOT = 1 << 16,		/* directory: add or retarget ".." to its parent */
	F_FIX_LINK = 1 << 17,		/* orphan: give it a name in /lost+found */
	F_FIX_UNNAME = 1 << 18,		/* no stat data: remove the entries naming it */
	F_REACHED = 1 << 19,		/* directory: its chain of names reaches the root */
	F_CYCLE = 1 << 20,		/* directory: its chain of names loops */
	F_SAFELINK = 1 << 21,		/* an unlink safe-link names it: an orphan is due */
};

#define NO_OID UINT64_MAX

/* What the walk learns about one object id (about 112 bytes). */
struct cobj {
	uint64_t oid;			/* NO_OID: free slot */
	uint64_t el0, el1;		/* stat-data key: el0 (locality, type), el1 (ordering) */
	uint64_t sd_blk;		/* leaf holding the stat data */
	uint64_t parent;		/* directory of the first entry naming it, 0 none */
	uint64_t dot, dotdot;		/* directory: what its "." and ".." name */
	uint64_t size, bytes;		/* as stored */
	uint64_t nent, cde_bytes;	/* directory: entries, sum of (cde item length - 2) */
	uint64_t body_end, body_bytes;	/* file: end of the last body item, tails + blocks */
	uint32_t nlink, names, dotdot_refs, flags;
	uint16_t mode;
	uint8_t cc_shift, cc_compress;	/* regular file: its ccreg40 cluster shift, compression */
};

struct range {
	uint64_t start, count;
	bool leak;			/* true: free it; false: mark it used */
};

struct chk {
	struct r4_db *db;
	const struct r4_check_opts *o;
	struct r4_check_result *res;
	uint32_t bs;
	uint64_t blocks;
	uint8_t *used;			/* one bit per block, bitmap layout (bit b%8 of byte b/8) */
	uint8_t *fixed;			/* the fixed area: reserved, super, bitmap, backup blocks */
	uint8_t *buf[R4_MAX_HEIGHT + 1];	/* one node per level (walk) */
	uint8_t *blk;			/* scratch block */
	void *scratch;			/* unit arrays of cde and extent items */
	size_t scratch_len;

	struct cobj *tab;		/* open addressing by oid */
	size_t tcap, tcount;

	struct {			/* the ccreg40 disk cluster being gathered */
		bool open;
		uint64_t oid, start, blk;
		size_t n;
		uint8_t *buf;		/* 64 KiB, made at the first ctail item */
	} ccl;

	r4_key prev_max;		/* largest key of the last leaf item or twig extent */
	bool have_prev;
	bool tree_bad;			/* structure damaged: semantic pass skipped */
	bool will_fix;			/* fix mode and the fixes may be made */
	uint64_t max_oid;
	uint64_t done, total, last_progress;

	struct range *ranges;		/* bitmap repairs */
	size_t nranges, capranges;
	bool fix_free, fix_oid, fix_files;
	bool fix_names;			/* some F_FIX_UNNAME: directories to rescan */
	struct stale {			/* r4 records to remove */
		uint64_t oid;
		bool bad;		/* unreadable: its object keeps its owner's bits only */
		bool xattrs;		/* its attributes' (OID.x), not its record */
	} *stale;
	size_t nstale, capstale;
	enum { LF_UNKNOWN, LF_HAVE, LF_MAKE, LF_NONE } lf;	/* /lost+found for orphans */
	uint64_t lf_oid;

	struct r4_logger lg;		/* captures rejections of the codecs */
	char why[512];
	unsigned path_budget;		/* path look-ups left (each costs a directory scan) */
	char path[4096];
	char keytxt[R4_KEY_PRINT_SIZE];
};

/* ============================== reporting =============================== */

static const enum r4_check_class code_class[R4_CK_COUNT] = {
	[R4_CK_SB_FREE] = R4_CC_SUPER,		[R4_CK_SB_OID] = R4_CC_SUPER,
	[R4_CK_SB_FILES] = R4_CC_SUPER,		[R4_CK_SB_BACKUP] = R4_CC_SUPER,
	[R4_CK_SB_STATUS] = R4_CC_SUPER,	[R4_CK_SB_BAD] = R4_CC_SUPER,
	[R4_CK_JNL_PENDING] = R4_CC_JOURNAL,	[R4_CK_JNL_BAD] = R4_CC_JOURNAL,
	[R4_CK_NODE_BAD] = R4_CC_NODE,		[R4_CK_NODE_CSUM] = R4_CC_NODE,
	[R4_CK_NODE_EMPTY] = R4_CC_NODE,	[R4_CK_TREE_ORDER] = R4_CC_TREE,
	[R4_CK_TREE_DKEY] = R4_CC_TREE,		[R4_CK_TREE_PTR] = R4_CC_TREE,
	[R4_CK_TREE_TWICE] = R4_CC_TREE,	[R4_CK_ITEM_BAD] = R4_CC_ITEM,
	[R4_CK_ITEM_KEY] = R4_CC_ITEM,		[R4_CK_ITEM_NOSD] = R4_CC_ITEM,
	[R4_CK_BLK_TWICE] = R4_CC_BLOCK,	[R4_CK_BLK_RANGE] = R4_CC_BLOCK,
	[R4_CK_BMP_LEAK] = R4_CC_BITMAP,	[R4_CK_BMP_FREE] = R4_CC_BITMAP,
	[R4_CK_OBJ_SIZE] = R4_CC_OBJECT,	[R4_CK_OBJ_BYTES] = R4_CC_OBJECT,
	[R4_CK_OBJ_NLINK] = R4_CC_OBJECT,	[R4_CK_OBJ_BODY] = R4_CC_OBJECT,
	[R4_CK_OBJ_MODE] = R4_CC_OBJECT,	[R4_CK_NAME_DOT] = R4_CC_NAME,
	[R4_CK_NAME_DOTDOT] = R4_CC_NAME,	[R4_CK_NAME_DANGLING] = R4_CC_NAME,
	[R4_CK_NAME_ORPHAN] = R4_CC_NAME,	[R4_CK_NAME_LINKS] = R4_CC_NAME,
	[R4_CK_NAME_KEY] = R4_CC_NAME,		[R4_CK_META_ORPHAN] = R4_CC_META,
	[R4_CK_META_BAD] = R4_CC_META,
};

enum r4_check_class r4_check_class_of(enum r4_check_code code)
{
	return code > 0 && code < R4_CK_COUNT ? code_class[code] : R4_CC_SUPER;
}

const char *r4_check_class_name(enum r4_check_class cls)
{
	static const char *const names[] = {
		[R4_CC_SUPER] = "super",   [R4_CC_JOURNAL] = "journal", [R4_CC_NODE] = "node",
		[R4_CC_TREE] = "tree",	   [R4_CC_ITEM] = "item",	[R4_CC_BLOCK] = "block",
		[R4_CC_BITMAP] = "bitmap", [R4_CC_OBJECT] = "object",	[R4_CC_NAME] = "name",
		[R4_CC_META] = "r4 record",
	};

	return cls >= R4_CC_SUPER && cls <= R4_CC_META ? names[cls] : "?";
}

/* Where a problem is: fill in what is known, the rest stays empty. */
struct where {
	uint64_t blk, nblk, oid;
	const r4_key *key;
	const char *path;
};

#define AT_BLK(b) ((struct where){.blk = (b), .nblk = 1})

__attribute__((format(printf, 5, 6)))
static void problem(struct chk *c, enum r4_check_code code, struct where w, bool fixable,
		    const char *fmt, ...)
{
	struct r4_problem p = {0};
	char msg[640];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	p.cls = r4_check_class_of(code);
	p.code = code;
	p.blk = w.nblk ? w.blk : R4_CHECK_NOBLK;
	p.nblk = w.nblk;
	p.oid = w.oid;
	if (w.key) {
		r4_key_print(w.key, c->keytxt, sizeof(c->keytxt));
		p.key = c->keytxt;
	}
	p.path = w.path;
	p.msg = msg;
	p.fixable = fixable;
	p.fixed = fixable && c->will_fix;
	c->res->problems++;
	if (p.fixed)
		c->res->fixed++;
	if (c->o && c->o->report)
		c->o->report(c->o->ctx, &p);
}

/* The codecs report through R4_CORRUPT; keep the reason, drop the
 * provenance: "corrupt image at block N: WHY (file:line func)". */
static void capture(void *ctx, int level, const char *msg)
{
	char *why = ctx;
	const char *s = strstr(msg, ": ");

	if (level != R4_LOG_ERR)
		return;	/* (where in r4 it was found: R4_LOG_DEBUG) */
	snprintf(why, 512, "%s", s ? s + 2 : msg);
}

static void progress(struct chk *c, uint64_t n)
{
	c->done += n;
	if (c->o && c->o->progress && c->done - c->last_progress >= 4096) {
		c->last_progress = c->done;
		c->o->progress(c->o->ctx, c->done, R4_MAX(c->done, c->total));
	}
}

/* ============================== block sets ============================== */

static bool bit(const uint8_t *m, uint64_t b)
{
	return (m[b / 8] >> (b % 8)) & 1;
}

static void set_bit(uint8_t *m, uint64_t b)
{
	m[b / 8] |= (uint8_t)(1u << (b % 8));
}

static int mark_fixed(void *ctx, uint64_t start, uint64_t count)
{
	struct chk *c = ctx;

	for (uint64_t b = start; b < start + count && b < c->blocks; b++) {
		set_bit(c->fixed, b);
		set_bit(c->used, b);
	}
	return 0;
}

/* ============================== object table ============================ */

static size_t slot_of(const struct chk *c, uint64_t oid)
{
	return (size_t)((oid * UINT64_C(0x9E3779B97F4A7C15)) >> 17) & (c->tcap - 1);
}

static int tab_grow(struct chk *c)
{
	size_t ncap = c->tcap ? c->tcap * 2 : 256;
	struct cobj *nt = r4_malloc(ncap * sizeof(*nt)), *old = c->tab;
	size_t ocap = c->tcap;

	if (!nt)
		return -ENOMEM;
	for (size_t i = 0; i < ncap; i++)
		nt[i].oid = NO_OID;
	c->tab = nt;
	c->tcap = ncap;
	for (size_t i = 0; i < ocap; i++) {
		if (old[i].oid == NO_OID)
			continue;
		size_t s = slot_of(c, old[i].oid);
		while (nt[s].oid != NO_OID)
			s = (s + 1) & (ncap - 1);
		nt[s] = old[i];
	}
	r4_free(old);
	return 0;
}

/* The record of oid, created empty if new; NULL only for -ENOMEM. */
static struct cobj *obj_get(struct chk *c, uint64_t oid)
{
	size_t s;

	if (c->tcount + 1 > c->tcap / 10 * 7 && tab_grow(c))
		return NULL;
	for (s = slot_of(c, oid); c->tab[s].oid != NO_OID; s = (s + 1) & (c->tcap - 1))
		if (c->tab[s].oid == oid)
			return &c->tab[s];
	memset(&c->tab[s], 0, sizeof(c->tab[s]));
	c->tab[s].oid = oid;
	c->tcount++;
	return &c->tab[s];
}

static struct cobj *obj_find(const struct chk *c, uint64_t oid)
{
	if (!c->tcap)
		return NULL;
	for (size_t s = slot_of(c, oid); c->tab[s].oid != NO_OID; s = (s + 1) & (c->tcap - 1))
		if (c->tab[s].oid == oid)
			return &c->tab[s];
	return NULL;
}

static void obj_sdkey(const struct cobj *r, r4_key *k)
{
	k->el[0] = r->el0;
	k->el[1] = r->el1;
	k->el[2] = r->oid;
	k->el[3] = 0;
}

static void *scratch(struct chk *c, size_t n)
{
	if (n > c->scratch_len) {
		void *p = r4_realloc(c->scratch, n);

		if (!p)
			return NULL;
		c->scratch = p;
		c->scratch_len = n;
	}
	return c->scratch;
}

/* ============================ super, journal ============================ */

static int read_blk(struct chk *c, uint64_t blk, uint8_t *buf)
{
	return r4_io_read(c->db->io, blk * c->bs, buf, c->bs);
}

static int check_backups(struct chk *c)
{
	uint64_t bk[R4_BACKUP_MAX];
	size_t n = r4_format_backup_blocks(c->bs, c->blocks, bk);
	struct r4_msb msb;
	uint8_t *want = NULL;
	int rc;

	if ((rc = r4_io_read(c->db->io, R4_MSB_OFFSET, c->blk, c->bs)))
		return rc;
	if ((rc = r4_msb_decode(&c->lg, c->blk, c->bs, &msb))) {
		problem(c, R4_CK_SB_BAD, AT_BLK(R4_MSB_BLOCK(c->bs)), false, "master super block: %s",
			rc == -EMEDIUMTYPE ? "no Reiser4 magic" : c->why);
		return 0;
	}
	if (!(want = r4_malloc(c->bs)))
		return -ENOMEM;
	/* the super block parts only: the pset part follows the root's stat data */
	r4_format_backup_encode(&msb, &c->db->sb, NULL, 0, want, c->bs);
	for (size_t i = 0; i < n && !rc; i++) {
		if ((rc = read_blk(c, bk[i], c->blk)))
			break;
		if (memcmp(c->blk, want, R4_BK_PSET))
			problem(c, R4_CK_SB_BACKUP, AT_BLK(bk[i]), false,
				"backup copy of the super blocks differs from them");
	}
	r4_free(want);
	return rc;
}

struct jcheck {
	struct chk *c;
	const struct r4_jh *jh;
	const struct r4_jf *jf;
	uint64_t ntx;		/* transactions walked whole */
	bool said;		/* a break was reported */
};

static int jcheck_done(void *ctx, uint64_t blk, const struct r4_th *th)
{
	(void)blk, (void)th;
	((struct jcheck *)ctx)->ntx++;
	return 0;
}

/* Where r4_jnl_walk found the journal broken, in the checker's words (the
 * walk's rules; the codec's reason in c->why).  A head that does not read
 * stops the check, as any read error of the image does. */
static void jcheck_broken(void *ctx, const struct r4_jnl_break *b)
{
	struct jcheck *j = ctx;
	struct chk *c = j->c;
	bool bad = b->rc == -EUCLEAN || b->rc == -EBADMSG;
	const char *why = bad ? c->why : r4_strerror(b->rc);

	if (!bad && b->what != R4_JNL_RECORD)
		return;
	j->said = true;
	switch (b->what) {
	case R4_JNL_CHAIN:
		problem(c, R4_CK_JNL_BAD, AT_BLK(b->blk), false,
			"the transaction chain from the header (block %llu) does not reach the "
			"footer's (block %llu)", (unsigned long long)j->jh->jh_last_committed,
			(unsigned long long)j->jf->jf_last_flushed);
		break;
	case R4_JNL_HEAD:
		problem(c, R4_CK_JNL_BAD, AT_BLK(b->blk), false, "transaction head: %s", why);
		break;
	case R4_JNL_RECORD:
	case R4_JNL_SHORT:
		problem(c, R4_CK_JNL_BAD, AT_BLK(b->blk), false,
			"wander record %u of the transaction at block %llu: %s", b->serial,
			(unsigned long long)b->tx,
			b->what == R4_JNL_SHORT ? "ring closes early" : why);
		break;
	case R4_JNL_SERIAL:
		problem(c, R4_CK_JNL_BAD, AT_BLK(b->blk), false,
			"wander record says %u of %u, expected %u of %u", b->wr->wr_serial,
			b->wr->wr_total, b->serial, b->total);
		break;
	case R4_JNL_LONG:
		problem(c, R4_CK_JNL_BAD, AT_BLK(b->blk), false,
			"the records of the transaction do not lead back to its head");
		break;
	}
}

static int check_journal(struct chk *c)
{
	unsigned hb = R4_JHEADER_BLOCK(c->bs), fb = R4_JFOOTER_BLOCK(c->bs);
	struct r4_jnl_img im = {c->db->io, &c->lg, c->bs, c->blocks};
	struct r4_jh jh;
	struct r4_jf jf;
	struct jcheck j = {.c = c, .jh = &jh, .jf = &jf};
	struct r4_jnl_visit v = {.done = jcheck_done, .broken = jcheck_broken, .ctx = &j};
	int rc;

	if (c->db->replayed && c->db->rw) {
		/* the read-write open played them: reported as fixed */
		bool wf = c->will_fix;

		c->will_fix = true;
		problem(c, R4_CK_JNL_PENDING, AT_BLK(hb), true,
			"%u committed transaction%s not played; replayed at open", c->db->replayed,
			c->db->replayed == 1 ? " was" : "s were");
		c->will_fix = wf;
	}
	/* each end on its own, to say which does not decode */
	if ((rc = read_blk(c, hb, c->blk)))
		return rc;
	if (r4_jh_decode(&c->lg, c->blk, c->bs, c->blocks, &jh)) {
		problem(c, R4_CK_JNL_BAD, AT_BLK(hb), false, "journal header: %s", c->why);
		return 0;
	}
	if ((rc = read_blk(c, fb, c->blk)))
		return rc;
	if (r4_jf_decode(&c->lg, c->blk, c->bs, c->blocks, &jf)) {
		problem(c, R4_CK_JNL_BAD, AT_BLK(fb), false, "journal footer: %s", c->why);
		return 0;
	}
	if (jh.jh_last_committed == jf.jf_last_flushed)
		return 0;
	/* this handle's own window: transactions not yet played, or whose
	 * footer is still to come (its reads see them) */
	if (r4_jnl_own(c->db, jh.jh_last_committed, jf.jf_last_flushed))
		return 0;
	c->res->journal_pending = true;
	if ((rc = r4_jnl_walk(&im, &jh, &jf, &v)))
		return j.said ? 0 : rc;
	problem(c, R4_CK_JNL_PENDING, AT_BLK(hb), false,
		"%llu committed transaction%s not played (header: tx head %llu, footer: %llu); "
		"the image in place is the state before %s", (unsigned long long)j.ntx,
		j.ntx == 1 ? " is" : "s are", (unsigned long long)jh.jh_last_committed,
		(unsigned long long)jf.jf_last_flushed, j.ntx == 1 ? "it" : "them");
	return 0;
}

/* ================================= items ================================ */

static void note_oid(struct chk *c, uint64_t oid)
{
	if (oid > c->max_oid)
		c->max_oid = oid;
}

static int item_sd(struct chk *c, uint64_t blk, const r4_key *k, const uint8_t *body,
		   unsigned len)
{
	uint64_t oid = r4_key_objectid(k);
	struct cobj *r = obj_get(c, oid);
	struct r4_sd sd;
	struct where w = {.blk = blk, .nblk = 1, .oid = oid, .key = k};

	if (!r)
		return -ENOMEM;
	note_oid(c, oid);
	if (r->flags & F_SD) {
		problem(c, R4_CK_ITEM_KEY, w, false,
			"second stat data of object %llu (the first is in block %llu)",
			(unsigned long long)oid, (unsigned long long)r->sd_blk);
		return 0;
	}
	c->res->objects++;
	if ((r->flags & F_REFKEY) && (r->el0 != k->el[0] || r->el1 != k->el[1])) {
		problem(c, R4_CK_NAME_KEY, w, false,
			"an entry in directory %llu names this object with locality %llu and "
			"ordering %llx, its stat data has %llu and %llx", (unsigned long long)r->parent,
			(unsigned long long)(r->el0 >> 4), (unsigned long long)r->el1,
			(unsigned long long)r4_key_locality(k), (unsigned long long)k->el[1]);
	}
	r->flags = (r->flags & ~(uint32_t)F_REFKEY) | F_SD;
	r->el0 = k->el[0];
	r->el1 = k->el[1];
	r->sd_blk = blk;
	if (r4_item_stat_decode(body, len, &sd)) {
		problem(c, R4_CK_ITEM_BAD, w, false, "%s", r4_corrupt_last());
		r->flags |= F_BADSD;
		c->tree_bad = true;
		return 0;
	}
	if (!r4_sd_has(&sd, R4_SDEXT_LW)) {
		problem(c, R4_CK_OBJ_MODE, w, false, "stat data without the light-weight extension");
		r->flags |= F_BADSD;
		return 0;
	}
	r->mode = sd.sd_mode;
	r->nlink = sd.sd_nlink;
	{
		uint16_t cl = (uint16_t)c->db->pset.cluster, cz = (uint16_t)c->db->pset.compress;
		uint16_t file = R4_FILE_REG40;

		if (r4_sd_has(&sd, R4_SDEXT_PSET)) {
			r4_item_pset_get(&sd.sd_pset, R4_PSET_CLUSTER, &cl);
			r4_item_pset_get(&sd.sd_pset, R4_PSET_COMPRESSION, &cz);
			r4_item_pset_get(&sd.sd_pset, R4_PSET_FILE, &file);
		}
		if (S_ISREG(sd.sd_mode) && file == R4_FILE_CCREG40)
			r->flags |= F_CTAIL;
		const struct r4_cluster_ops *co = r4_plugin_ops(R4_PTYPE_CLUSTER, cl);

		r->cc_shift = co ? (uint8_t)co->shift : 0;
		r->cc_compress = (uint8_t)R4_MIN(cz, 0xff);
	}
	r->size = sd.sd_size;
	r->bytes = sd.sd_bytes_rdev;
	if (r4_sd_has(&sd, R4_SDEXT_UNIX))
		r->flags |= F_UNIX;
	if (r4_sd_has(&sd, R4_SDEXT_SYMLINK))
		r->flags |= F_SYMEXT;
	switch (sd.sd_mode & S_IFMT) {
	case S_IFREG: case S_IFDIR: case S_IFCHR: case S_IFBLK: case S_IFIFO: case S_IFSOCK:
		if (r->flags & F_SYMEXT)
			problem(c, R4_CK_OBJ_MODE, w, false,
				"mode 0%o with a symlink extension", sd.sd_mode);
		break;
	case S_IFLNK:
		if (!(r->flags & F_SYMEXT))
			problem(c, R4_CK_OBJ_MODE, w, false, "symlink without a target extension");
		break;
	default:
		problem(c, R4_CK_OBJ_MODE, w, false, "unknown file type in mode 0%o", sd.sd_mode);
		r->flags |= F_BADSD;
	}
	return 0;
}

static bool is_dot(const r4_key *k)
{
	return !k->el[1] && !k->el[2] && !k->el[3];
}

/* One unit of a cde item of directory d. */
static int entry(struct chk *c, uint64_t blk, struct cobj *d, const struct r4_dirent *e)
{
	uint64_t doid = d->oid, toid = r4_key_objectid(&e->de_sdkey);
	char sname[24];
	const char *name = sname;
	size_t len;
	struct cobj *t;
	r4_key want;
	struct where w = {.blk = blk, .nblk = 1, .oid = doid, .key = &e->de_key};

	if (r4_item_cde_hashed(&e->de_key)) {
		name = (const char *)e->de_name;
		len = e->de_namelen;
	} else {
		len = r4_key_entry_name(&e->de_key, sname);
	}
	r4_key_entry(&want, doid, name, len, c->db->pset.hash, c->db->pset.fibration);
	if (r4_key_cmp(&want, &e->de_key))
		problem(c, R4_CK_ITEM_KEY, w, false,
			"entry '%.*s' of directory %llu has a key its name does not hash to",
			(int)len, name, (unsigned long long)doid);
	if (!(t = obj_get(c, toid)))
		return -ENOMEM;
	d = obj_find(c, doid);		/* obj_get may have moved the table */
	c->res->entries++;
	if (is_dot(&e->de_key)) {
		d->flags |= F_DOT;
		d->dot = toid;
		return 0;
	}
	if (len == 2 && !memcmp(name, "..", 2)) {
		if (d->flags & F_DOTDOT)
			problem(c, R4_CK_NAME_DOTDOT, w, false, "directory %llu has a second '..'",
				(unsigned long long)doid);
		d->flags |= F_DOTDOT;
		d->dotdot = toid;
		t->dotdot_refs++;
	} else {
		t->names++;
		if (!t->parent)
			t->parent = doid;
	}
	if (t->flags & (F_SD | F_REFKEY)) {
		if (t->el0 != e->de_sdkey.el[0] || t->el1 != e->de_sdkey.el[1])
			problem(c, R4_CK_NAME_KEY, w, false,
				"entry '%.*s' names object %llu with locality %llu and ordering "
				"%llx, its stat data has %llu and %llx", (int)len, name,
				(unsigned long long)toid,
				(unsigned long long)r4_key_locality(&e->de_sdkey),
				(unsigned long long)e->de_sdkey.el[1],
				(unsigned long long)(t->el0 >> 4), (unsigned long long)t->el1);
	} else {
		t->flags |= F_REFKEY;
		t->el0 = e->de_sdkey.el[0];
		t->el1 = e->de_sdkey.el[1];
	}
	return 0;
}

static int item_cde(struct chk *c, uint64_t blk, const r4_key *k, const uint8_t *body,
		    unsigned len, r4_key *max)
{
	struct where w = {.blk = blk, .nblk = 1, .oid = r4_key_locality(k), .key = k};
	struct r4_dirent *e;
	struct cobj *d;
	unsigned n;
	int rc;

	rc = r4_item_cde_count(body, len, &n);
	if (!rc && n == 0)
		rc = R4_CORRUPT(&c->lg, blk, "no units");
	if (!rc) {
		if (!(e = scratch(c, (size_t)n * sizeof(*e))))
			return -ENOMEM;
		rc = r4_item_cde_decode_all(k, body, len, e, n);
	}
	if (rc) {
		problem(c, R4_CK_ITEM_BAD, w, false, "directory item does not decode: %s", c->why);
		c->tree_bad = true;
		return 0;
	}
	if (!(d = obj_get(c, r4_key_locality(k))))
		return -ENOMEM;
	d->flags |= F_ENTRIES;
	d->nent += n;
	d->cde_bytes += len - 2;
	for (unsigned i = 0; i < n; i++) {
		if ((rc = entry(c, blk, d, &e[i])))
			return rc;
		d = obj_find(c, r4_key_locality(k));
	}
	*max = e[n - 1].de_key;
	return 0;
}

/* Body items of one object come in offset order: they must follow on. */
static bool body_next(struct chk *c, struct cobj *r, uint64_t blk, const r4_key *k,
		      bool tail)
{
	uint64_t off = r4_key_offset(k);
	struct where w = {.blk = blk, .nblk = 1, .oid = r->oid, .key = k};

	if (r->flags & F_BODYBAD)
		return false;
	if ((r->flags & (tail ? F_EXTENT : F_TAIL))) {
		problem(c, R4_CK_OBJ_BODY, w, false,
			"file %llu mixes tails and extents (from offset %llu)",
			(unsigned long long)r->oid, (unsigned long long)off);
		r->flags |= F_BODYBAD;
		return false;
	}
	if (off != r->body_end) {
		problem(c, R4_CK_OBJ_BODY, w, false,
			"body item at offset %llu, the previous one ends at %llu",
			(unsigned long long)off, (unsigned long long)r->body_end);
		r->flags |= F_BODYBAD;
		return false;
	}
	r->flags |= tail ? F_TAIL : F_EXTENT;
	return true;
}

static int item_tail(struct chk *c, uint64_t blk, const r4_key *k, unsigned len, r4_key *max)
{
	struct cobj *r = obj_get(c, r4_key_objectid(k));

	if (!r)
		return -ENOMEM;
	note_oid(c, r->oid);
	if (body_next(c, r, blk, k, true)) {
		r->body_end += len;
		r->body_bytes += len;
	}
	*max = *k;
	max->el[3] += len - 1;
	return 0;
}

/* Claim blocks [s, s + n) for an extent unit: inside the volume, out of
 * the fixed area, not already in use. */
static void claim(struct chk *c, uint64_t blk, const r4_key *k, uint64_t s, uint64_t n)
{
	struct where w = {.blk = blk, .nblk = 1, .oid = r4_key_objectid(k), .key = k};
	uint64_t dup = 0, first = 0;

	if (s >= c->blocks || n > c->blocks - s) {
		problem(c, R4_CK_BLK_RANGE, w, false,
			"extent unit of blocks %llu..%llu runs past the volume (%llu blocks)",
			(unsigned long long)s, (unsigned long long)(s + n - 1),
			(unsigned long long)c->blocks);
		return;
	}
	for (uint64_t b = s; b < s + n; b++) {
		if (bit(c->fixed, b)) {
			problem(c, R4_CK_BLK_RANGE, w, false,
				"extent unit of blocks %llu..%llu covers block %llu of the fixed area",
				(unsigned long long)s, (unsigned long long)(s + n - 1),
				(unsigned long long)b);
			return;
		}
		if (bit(c->used, b)) {
			if (!dup++)
				first = b;
			continue;
		}
		set_bit(c->used, b);
		c->res->used_blocks++;
	}
	if (dup)
		problem(c, R4_CK_BLK_TWICE, w, false,
			"extent unit of blocks %llu..%llu uses %llu block%s already in use (first: "
			"%llu)", (unsigned long long)s, (unsigned long long)(s + n - 1),
			(unsigned long long)dup, dup == 1 ? "" : "s", (unsigned long long)first);
	c->res->extent_blocks += n;
	progress(c, n);
}

static int item_extent(struct chk *c, uint64_t blk, const r4_key *k, const uint8_t *body,
		       unsigned len, r4_key *max)
{
	struct where w = {.blk = blk, .nblk = 1, .oid = r4_key_objectid(k), .key = k};
	struct r4_extent *e;
	struct cobj *r;
	uint64_t width = 0;
	size_t n;
	bool ok;

	int rc = r4_item_extent_count(body, len, &n);

	if (!rc) {
		if (!(e = scratch(c, n * sizeof(*e))))
			return -ENOMEM;
		rc = r4_item_extent_decode(body, len, e, n);
	}
	if (rc) {
		problem(c, R4_CK_ITEM_BAD, w, false, "extent item does not decode: %s", c->why);
		c->tree_bad = true;
		return 0;
	}
	if (!(r = obj_get(c, r4_key_objectid(k))))
		return -ENOMEM;
	note_oid(c, r->oid);
	if (r4_key_offset(k) % c->bs) {
		problem(c, R4_CK_ITEM_KEY, w, false, "extent at offset %llu, not a block multiple",
			(unsigned long long)r4_key_offset(k));
		r->flags |= F_BODYBAD;
	}
	ok = body_next(c, r, blk, k, false);
	for (size_t i = 0; i < n; i++) {
		width += e[i].ex_width;
		if (e[i].ex_start == R4_EXTENT_HOLE)
			continue;
		if (e[i].ex_start == R4_EXTENT_UNALLOC) {
			problem(c, R4_CK_OBJ_BODY, w, false, "unallocated extent unit %zu", i);
			continue;
		}
		claim(c, blk, k, e[i].ex_start, e[i].ex_width);
		r = obj_find(c, r4_key_objectid(k));
		r->body_bytes += e[i].ex_width * c->bs;
	}
	if (ok)
		r->body_end += width * c->bs;
	*max = *k;
	max->el[3] += width * c->bs - 1;
	return 0;
}

/* The gathered disk cluster is complete: does it decompress, is its sum right? */
static void ctail_flush(struct chk *c)
{
	struct cobj *r = obj_find(c, c->ccl.oid);

	if (!c->ccl.open)
		return;
	c->ccl.open = false;
	if (!r || !(r->flags & F_SD) || (r->flags & (F_BADSD | F_BODYBAD)))
		return;
	c->why[0] = 0;
	if (r4_ccreg_check_cluster(&c->lg, c->ccl.blk, r->cc_compress, r->cc_shift, r->size,
				   c->ccl.start >> r->cc_shift, c->ccl.buf, c->ccl.n)) {
		problem(c, R4_CK_OBJ_BODY, (struct where){.blk = c->ccl.blk, .nblk = 1,
			.oid = r->oid}, false, "cluster at %llu: %s",
			(unsigned long long)c->ccl.start, c->why);
		r->flags |= F_BODYBAD;
	}
}

/* A ctail item: a piece of a ccreg40 disk cluster (ccreg.md). */
static int item_ctail(struct chk *c, uint64_t blk, const r4_key *k, const uint8_t *body,
		      unsigned len, r4_key *max)
{
	struct cobj *r = obj_get(c, r4_key_objectid(k));
	struct where w = {.blk = blk, .nblk = 1, .oid = r4_key_objectid(k), .key = k};
	uint64_t off = r4_key_offset(k), start;
	const uint8_t *data;
	const char *why = NULL;
	unsigned shift;
	size_t n;

	if (!r)
		return -ENOMEM;
	note_oid(c, r->oid);
	r->flags |= F_CTAIL;
	if (len <= R4_CTAIL_DATA || r4_item_ctail_decode(body, len, &shift, &data, &n)) {
		problem(c, R4_CK_ITEM_BAD, w, false, "ctail item of %u bytes holds no data", len);
		return 0;
	}
	*max = *k;
	max->el[3] += n - 1;
	if (!c->ccl.buf && !(c->ccl.buf = r4_malloc((size_t)1 << 16)))
		return -ENOMEM;
	start = shift <= 16 ? off & ~(((uint64_t)1 << shift) - 1) : off;
	if (c->ccl.open && (c->ccl.oid != r->oid || c->ccl.start != start))
		ctail_flush(c);
	if (r->flags & F_BODYBAD)
		return 0;
	if (shift == R4_CTAIL_UNPREPPED)
		why = "an unprepped cluster";
	else if ((r->flags & F_SD) && shift != r->cc_shift)
		why = "a cluster shift that is not the file's";
	else if (shift < 12 || shift > 16)
		why = "a cluster shift out of 12..16";
	else if (off + n > start + ((uint64_t)1 << shift))
		why = "data across a cluster boundary";
	else if (c->ccl.open ? off != start + c->ccl.n : off != start)
		why = "a gap in its disk cluster";
	if (why) {
		problem(c, R4_CK_OBJ_BODY, w, false, "ctail item with %s", why);
		r->flags |= F_BODYBAD;
		c->ccl.open = false;
		return 0;
	}
	if (!c->ccl.open) {
		c->ccl.open = true;
		c->ccl.oid = r->oid;
		c->ccl.start = start;
		c->ccl.blk = blk;
		c->ccl.n = 0;
	}
	memcpy(c->ccl.buf + c->ccl.n, data, n);
	c->ccl.n += n;
	return 0;
}

/* One leaf item or twig extent; *max gets its largest key. */
static int item(struct chk *c, uint64_t blk, const uint8_t *b, unsigned i, const r4_key *k,
		r4_key *max)
{
	unsigned pid = r4_node_item_pid(b, c->bs, i), len = r4_node_item_len(b, c->bs, i);
	const uint8_t *body = b + r4_node_item_off(b, c->bs, i);
	struct cobj *r;

	*max = *k;
	c->res->items++;
	switch (pid) {
	case R4_ITEM_STAT40:
		return item_sd(c, blk, k, body, len);
	case R4_ITEM_CDE40:
		return item_cde(c, blk, k, body, len, max);
	case R4_ITEM_EXTENT40:
		return item_extent(c, blk, k, body, len, max);
	case R4_ITEM_PLAIN40:
		return item_tail(c, blk, k, len, max);
	case R4_ITEM_CTAIL40:
		return item_ctail(c, blk, k, body, len, max);
	case R4_ITEM_BBOX40:
		/* an unlink safe-link: its object, left with nlink 0 while open,
		 * is no lost orphan (the next read-write open removes it) */
		if (r4_key_locality(k) == R4_SAFELINK_LOCALITY &&
		    r4_key_offset(k) == R4_SAFELINK_UNLINK) {
			if (!(r = obj_get(c, r4_key_objectid(k))))
				return -ENOMEM;
			r->flags |= F_SAFELINK;
		}
		return 0;
	default:
		problem(c, R4_CK_ITEM_BAD, (struct where){.blk = blk, .nblk = 1, .key = k}, false,
			"item %u: plugin %u is not supported", i, pid);
		c->tree_bad = true;
		return 0;
	}
}

/* ================================= tree ================================= */

static bool ptr_ok(struct chk *c, uint64_t parent, unsigned i, uint64_t child)
{
	const char *why = NULL;

	if (child >= c->blocks)
		why = "outside the volume";
	else if (bit(c->fixed, child))
		why = "into the fixed area";
	if (why)
		problem(c, R4_CK_TREE_PTR, AT_BLK(parent), false,
			"item %u points to block %llu, %s", i, (unsigned long long)child, why);
	return !why;
}

static int walk(struct chk *c, uint64_t blk, unsigned level, const r4_key *ldk,
		const r4_key *rdk);

/* Items of a checked node: order against what came before, the right
 * delimiting key, and (internal nodes) the children. */
static int walk_items(struct chk *c, uint64_t blk, unsigned level, const r4_key *rdk)
{
	const uint8_t *b = c->buf[level];
	unsigned nr = r4_node_nr(b);
	r4_key k, max, next;
	uint64_t child;
	int rc;

	for (unsigned i = 0; i < nr; i++) {
		r4_node_key(b, c->bs, i, &k);
		if (i + 1 < nr)
			r4_node_key(b, c->bs, i + 1, &next);
		else
			next = *rdk;
		if (r4_node_item_pid(b, c->bs, i) == R4_IPID_NODEPTR) {
			if (r4_item_nodeptr_decode(b + r4_node_item_off(b, c->bs, i),
						   r4_node_item_len(b, c->bs, i), &child)) {
				problem(c, R4_CK_ITEM_BAD, (struct where){.blk = blk, .nblk = 1,
					.key = &k}, false, "item %u: node pointer does not decode", i);
				c->tree_bad = true;
				continue;
			}
			if (!ptr_ok(c, blk, i, child)) {
				c->tree_bad = true;
				continue;
			}
			if ((rc = walk(c, child, level - 1, &k, &next)))
				return rc;
			continue;
		}
		if (c->have_prev && r4_key_cmp(&c->prev_max, &k) > 0) {
			problem(c, R4_CK_TREE_ORDER, (struct where){.blk = blk, .nblk = 1, .key = &k},
				false, "item %u: key below the end of the item before it", i);
			c->tree_bad = true;
		}
		if ((rc = item(c, blk, b, i, &k, &max)))
			return rc;
		if (r4_key_cmp(&max, rdk) > 0) {
			problem(c, R4_CK_TREE_DKEY, (struct where){.blk = blk, .nblk = 1, .key = &k},
				false, "item %u: reaches past the right delimiting key", i);
			c->tree_bad = true;
		}
		c->prev_max = max;
		c->have_prev = true;
	}
	return 0;
}

/* Node blk at `level`, between delimiting keys ldk (NULL for the root) and rdk. */
static int walk(struct chk *c, uint64_t blk, unsigned level, const r4_key *ldk,
		const r4_key *rdk)
{
	uint8_t *b = c->buf[level];
	struct r4_db *db = c->db;
	r4_key k;
	int rc;

	if (bit(c->used, blk)) {
		problem(c, R4_CK_TREE_TWICE, AT_BLK(blk), false,
			"node reached a second time (or used by an extent too)");
		c->tree_bad = true;
		return 0;
	}
	set_bit(c->used, blk);
	c->res->used_blocks++;
	c->res->nodes++;
	progress(c, 1);
	if ((rc = read_blk(c, blk, b)))
		return rc;
	if ((rc = r4_node_check(&c->lg, blk, b, c->bs, db->node_pid, db->mkfs_id, level))) {
		problem(c, rc == -EBADMSG ? R4_CK_NODE_CSUM : R4_CK_NODE_BAD, AT_BLK(blk), false,
			"%s", c->why);
		c->tree_bad = true;
		return 0;
	}
	if (r4_node_nr(b) == 0) {
		problem(c, R4_CK_NODE_EMPTY, AT_BLK(blk), false, "empty node at level %u", level);
		c->tree_bad = true;
		return 0;
	}
	r4_node_key(b, c->bs, 0, &k);
	if (ldk && r4_key_cmp(ldk, &k)) {
		char want[R4_KEY_PRINT_SIZE];

		r4_key_print(ldk, want, sizeof(want));
		problem(c, R4_CK_TREE_DKEY, (struct where){.blk = blk, .nblk = 1, .key = &k}, false,
			"first key differs from the parent's delimiting key %s", want);
		c->tree_bad = true;
	}
	return walk_items(c, blk, level, rdk);
}

/* ================================ bitmap ================================ */

static int add_range(struct chk *c, uint64_t start, uint64_t count, bool leak)
{
	if (r4_grow(&c->ranges, &c->capranges, c->nranges + 1, sizeof(*c->ranges), 64))
		return -ENOMEM;
	c->ranges[c->nranges++] = (struct range){start, count, leak};
	if (leak)
		problem(c, R4_CK_BMP_LEAK, (struct where){.blk = start, .nblk = count}, true,
			"%llu block%s used in the bitmap but reached by nothing (leaked)",
			(unsigned long long)count, count == 1 ? "" : "s");
	else
		problem(c, R4_CK_BMP_FREE, (struct where){.blk = start, .nblk = count}, true,
			"%llu block%s in use but free in the bitmap", (unsigned long long)count,
			count == 1 ? "" : "s");
	return 0;
}

/* Disk bitmap against the used set, range by range. */
static int check_bitmap(struct chk *c)
{
	uint64_t span = r4_format_bitmap_bits(c->bs), zones = r4_format_bitmap_count(c->bs, c->blocks);
	uint64_t run = 0, run_start = 0, real_free = 0;
	int kind = 0, rc;		/* of the open run: 1 leak, 2 used-but-free */

	for (uint64_t z = 0; z < zones; z++) {
		uint64_t end = R4_MIN((z + 1) * span, c->blocks);

		if ((rc = read_blk(c, r4_format_bitmap_block(c->bs, z), c->blk)))
			return rc;
		for (uint64_t b = z * span; b < end; b++) {
			uint64_t j = b - z * span;
			bool disk = (c->blk[4 + j / 8] >> (j % 8)) & 1, real = bit(c->used, b);
			int k = disk == real ? 0 : disk ? 1 : 2;

			real_free += !real;
			if (k == kind && k) {
				run++;
				continue;
			}
			if (kind && (rc = add_range(c, run_start, run, kind == 1)))
				return rc;
			kind = k;
			run_start = b;
			run = 1;
		}
	}
	if (kind && (rc = add_range(c, run_start, run, kind == 1)))
		return rc;
	if (c->db->sb.sb_free_blocks != real_free) {
		c->fix_free = true;
		problem(c, R4_CK_SB_FREE, AT_BLK(R4_FSB_BLOCK(c->bs)), true,
			"free block count %llu, should be %llu",
			(unsigned long long)c->db->sb.sb_free_blocks, (unsigned long long)real_free);
	}
	return 0;
}

/* ================================ objects =============================== */

struct name_find {
	uint64_t child;
	char name[R4_NAME_MAX + 1];
	bool found;
};

static int name_fn(void *ctx, const char *name, size_t len, const r4_key *sdkey)
{
	struct name_find *f = ctx;

	if (r4_key_objectid(sdkey) != f->child || (len == 1 && name[0] == '.') ||
	    (len == 2 && !memcmp(name, "..", 2)))
		return 0;
	snprintf(f->name, sizeof(f->name), "%.*s", (int)len, name);
	f->found = true;
	return 1;
}

/* The name of child in directory dir, through the engine (tree is sound). */
static bool name_in(struct chk *c, uint64_t dir, uint64_t child, struct name_find *f)
{
	struct cobj *d = obj_find(c, dir);
	struct r4_dirpos pos = {0};
	struct r4_inode ino;
	r4_key k;

	f->child = child;
	f->found = false;
	if (!d || !(d->flags & F_SD) || !c->path_budget)
		return false;
	c->path_budget--;
	obj_sdkey(d, &k);
	if (r4_obj_load(c->db, &k, &ino))
		return false;
	if (r4_dir_iterate(c->db, &ino, &pos, name_fn, f))
		f->found = false;
	r4_obj_fini(&ino);
	return f->found;
}

/* "/a/b" for oid (its first name up to the root), or NULL; then + "/leaf". */
static const char *path_of(struct chk *c, uint64_t oid, const char *leaf)
{
	char *p = c->path, *end = c->path + sizeof(c->path) - 1;
	struct name_find f;
	char *s = end;

	*s = 0;
	if (leaf) {
		size_t n = strlen(leaf);
		if (n + 1 > (size_t)(s - p))
			return NULL;
		s -= n;
		memcpy(s, leaf, n);
		*--s = '/';
	}
	for (unsigned depth = 0; oid != R4_ROOT_OID; depth++) {
		struct cobj *r = obj_find(c, oid);
		size_t n;

		if (!r || !r->parent || depth > 64 || !name_in(c, r->parent, oid, &f))
			return NULL;
		n = strlen(f.name);
		if (n + 1 > (size_t)(s - p))
			return NULL;
		s -= n;
		memcpy(s, f.name, n);
		*--s = '/';
		oid = r->parent;
	}
	if (!*s)
		*--s = '/';
	return s;
}

static struct where at_obj(struct chk *c, const struct cobj *r)
{
	return (struct where){.blk = r->sd_blk, .nblk = 1, .oid = r->oid,
			      .path = path_of(c, r->oid, NULL)};
}

/* Can orphans be given a name?  /lost+found must be a sound directory,
 * or absent (then the repair makes it). */
static bool lost_found(struct chk *c)
{
	struct r4_inode root;
	struct cobj *t;
	r4_key rk, k;
	int rc;

	if (c->lf != LF_UNKNOWN)
		return c->lf != LF_NONE;
	c->lf = LF_NONE;
	r4_obj_root_key(&rk);
	if (r4_obj_load(c->db, &rk, &root))
		return false;
	rc = r4_dir_lookup(c->db, &root, "lost+found", 10, &k);
	r4_obj_fini(&root);
	if (rc == -ENOENT) {
		c->lf = LF_MAKE;
	} else if (!rc && (t = obj_find(c, r4_key_objectid(&k))) && (t->flags & F_SD) &&
		   !(t->flags & F_BADSD) && S_ISDIR(t->mode) && t->names == 1) {
		c->lf = LF_HAVE;
		c->lf_oid = t->oid;
	}
	return c->lf != LF_NONE;
}

static void check_names(struct chk *c, struct cobj *r, bool dir)
{
	bool root = r->oid == R4_ROOT_OID, orphan = !root && !r->names;

	if (orphan && !dir && !r->nlink && (r->flags & F_SAFELINK))
		return;	/* unlinked while open: a safe-link has it removed */

	if (dir && root && r->names) {
		problem(c, R4_CK_NAME_LINKS, at_obj(c, r), false,
			"the root directory is named by %u entries", r->names);
	} else if (orphan) {
		bool ok = lost_found(c);

		if (ok)
			r->flags |= F_FIX_LINK;
		problem(c, R4_CK_NAME_ORPHAN, at_obj(c, r), ok,
			"object %llu (mode 0%o) is named by no entry", (unsigned long long)r->oid,
			r->mode);
	} else if (dir && r->names > 1) {
		problem(c, R4_CK_NAME_LINKS, at_obj(c, r), false,
			"directory named by %u entries", r->names);
	}
	if (!dir)
		return;
	if (!(r->flags & F_DOT) || r->dot != r->oid) {
		r->flags |= F_FIX_DOT;
		if (r->flags & F_DOT)
			problem(c, R4_CK_NAME_DOT, at_obj(c, r), true, "'.' names object %llu",
				(unsigned long long)r->dot);
		else
			problem(c, R4_CK_NAME_DOT, at_obj(c, r), true, "directory has no '.'");
	}
	/* an orphan's ".." is set by linking it; otherwise ".." must name
	 * the one directory holding its name */
	if (orphan) {
		if (!(r->flags & F_DOTDOT))
			problem(c, R4_CK_NAME_DOTDOT, at_obj(c, r), r->flags & F_FIX_LINK,
				"directory has no '..'");
		return;
	}
	if ((!root && r->names != 1) || (r->flags & F_CYCLE))
		return;			/* a loop of names is reported on its own */
	if (!(r->flags & F_DOTDOT)) {
		r->flags |= F_FIX_DOTDOT;
		problem(c, R4_CK_NAME_DOTDOT, at_obj(c, r), true, "directory has no '..'");
	} else if (r->dotdot != (root ? r->oid : r->parent)) {
		r->flags |= F_FIX_DOTDOT;
		problem(c, R4_CK_NAME_DOTDOT, at_obj(c, r), true,
			"'..' names object %llu, the directory is in %llu",
			(unsigned long long)r->dotdot, (unsigned long long)(root ? r->oid : r->parent));
	}
}

static void fix_field(struct chk *c, struct cobj *r, enum r4_check_code code, uint32_t flag,
		      const char *what, uint64_t have, uint64_t want)
{
	r->flags |= flag;
	problem(c, code, at_obj(c, r), true, "%s %llu, should be %llu", what,
		(unsigned long long)have, (unsigned long long)want);
}

/* What size a file's body gives: tails exactly their end; extents may end
 * up to a block short of theirs. */
static bool reg_size_ok(const struct chk *c, const struct cobj *r)
{
	if (r->flags & F_EXTENT)
		return r->size <= r->body_end && r->size + c->bs > r->body_end;
	return r->size == r->body_end;
}

static void check_object(struct chk *c, struct cobj *r)
{
	unsigned type = r->mode & S_IFMT;
	bool dir = type == S_IFDIR;

	if (!(r->flags & F_SD)) {
		if (r->names || r->dotdot_refs) {
			/* entries are removed; a ".." is left to the fix of
			 * its own directory, so those are not counted fixed */
			bool ok = r->names && !r->dotdot_refs;
			struct name_find f;
			const char *path = NULL;

			if (ok) {
				r->flags |= F_FIX_UNNAME;
				c->fix_names = true;
			}
			if (r->parent && name_in(c, r->parent, r->oid, &f))
				path = path_of(c, r->parent, f.name);
			problem(c, R4_CK_NAME_DANGLING, (struct where){.oid = r->oid, .path = path},
				ok, "%u entr%s (first in directory %llu) name%s object %llu, which "
				"has no stat data", r->names + r->dotdot_refs,
				r->names + r->dotdot_refs == 1 ? "y" : "ies",
				(unsigned long long)r->parent, r->names + r->dotdot_refs == 1 ? "s" : "",
				(unsigned long long)r->oid);
		}
		if (r->flags & (F_ENTRIES | F_TAIL | F_EXTENT | F_CTAIL | F_BODYBAD))
			problem(c, R4_CK_ITEM_NOSD, (struct where){.oid = r->oid}, false,
				"items of object %llu, which has no stat data",
				(unsigned long long)r->oid);
		return;
	}
	if (r->flags & F_BADSD)
		return;
	check_names(c, r, dir);
	if (dir && (r->flags & (F_TAIL | F_EXTENT | F_CTAIL)))
		problem(c, R4_CK_OBJ_MODE, at_obj(c, r), false, "directory with file body items");
	if (!dir && (r->flags & F_ENTRIES))
		problem(c, R4_CK_OBJ_MODE, at_obj(c, r), false,
			"mode 0%o but directory entries are filed under it", r->mode);
	if (type != S_IFREG && !dir && (r->flags & (F_TAIL | F_EXTENT | F_CTAIL)))
		problem(c, R4_CK_OBJ_MODE, at_obj(c, r), false,
			"mode 0%o but file body items are filed under it", r->mode);
	if (dir) {
		if (r->nlink != 2 + (uint64_t)r->dotdot_refs)
			fix_field(c, r, R4_CK_OBJ_NLINK, F_FIX_NLINK, "nlink", r->nlink,
				  2 + (uint64_t)r->dotdot_refs);
		if (r->size != r->nent)
			fix_field(c, r, R4_CK_OBJ_SIZE, F_FIX_SIZE, "size (entries)", r->size,
				  r->nent);
		if ((r->flags & F_UNIX) && r->bytes != r->cde_bytes)
			fix_field(c, r, R4_CK_OBJ_BYTES, F_FIX_BYTES, "bytes", r->bytes,
				  r->cde_bytes);
		return;
	}
	if (r->names && r->nlink != r->names)
		fix_field(c, r, R4_CK_OBJ_NLINK, F_FIX_NLINK, "nlink", r->nlink, r->names);
	if (type == S_IFREG && !(r->flags & (F_CTAIL | F_BODYBAD))) {
		if (!reg_size_ok(c, r))
			fix_field(c, r, R4_CK_OBJ_SIZE, F_FIX_SIZE, "size", r->size, r->body_end);
		if ((r->flags & F_UNIX) && r->bytes != r->body_bytes)
			fix_field(c, r, R4_CK_OBJ_BYTES, F_FIX_BYTES, "bytes", r->bytes,
				  r->body_bytes);
	} else if (type == S_IFLNK && (r->flags & F_UNIX) && r->bytes) {
		fix_field(c, r, R4_CK_OBJ_BYTES, F_FIX_BYTES, "bytes", r->bytes, 0);
	} else if (type != S_IFREG && type != S_IFLNK && r->size) {
		fix_field(c, r, R4_CK_OBJ_SIZE, F_FIX_SIZE, "size", r->size, 0);
	}
}

/* Directories named once whose chain of parents never reaches the root:
 * a loop (a/b/a...) that the counts cannot see, since every member has
 * its one name.  Each chain is walked once (F_REACHED marks the good). */
static int check_cycles(struct chk *c, struct cobj **v, size_t n)
{
	struct cobj **path = r4_malloc((n ? n : 1) * sizeof(*path));

	if (!path)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		struct cobj *x = v[i];
		size_t depth = 0;

		while (x && (x->flags & (F_SD | F_BADSD)) == F_SD && S_ISDIR(x->mode) &&
		       x->oid != R4_ROOT_OID && x->names == 1 && !(x->flags & (F_REACHED | F_CYCLE))) {
			size_t j;

			for (j = 0; j < depth && path[j] != x; j++)
				;
			if (j < depth) {	/* back at a directory of this walk */
				for (; j < depth; j++)
					path[j]->flags |= F_CYCLE;
				problem(c, R4_CK_NAME_ORPHAN, (struct where){.blk = x->sd_blk, .nblk = 1,
					.oid = x->oid}, false, "directory %llu is cut off from the "
					"root: its names form a loop", (unsigned long long)x->oid);
				break;
			}
			path[depth++] = x;
			x = obj_find(c, x->parent);
		}
		for (size_t j = 0; j < depth; j++)
			if (!(path[j]->flags & F_CYCLE))
				path[j]->flags |= F_REACHED;
	}
	r4_free(path);
	return 0;
}

static int cmp_oid(const void *a, const void *b)
{
	uint64_t x = (*(struct cobj *const *)a)->oid, y = (*(struct cobj *const *)b)->oid;

	return x < y ? -1 : x > y;
}

/* Objects in oid order, so reports are stable. */
static int check_objects(struct chk *c)
{
	struct cobj **v = r4_malloc((c->tcount ? c->tcount : 1) * sizeof(*v));
	size_t n = 0;

	if (!v)
		return -ENOMEM;
	for (size_t i = 0; i < c->tcap; i++)
		if (c->tab[i].oid != NO_OID)
			v[n++] = &c->tab[i];
	qsort(v, n, sizeof(*v), cmp_oid);
	if (check_cycles(c, v, n)) {
		r4_free(v);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++) {
		if ((v[i]->flags & F_SD) && (v[i]->mode & S_IFMT) == S_IFDIR)
			c->res->dirs++;
		check_object(c, v[i]);
	}
	r4_free(v);
	return 0;
}

/* ============================ r4's records ============================= */

/*
 * What r4 keeps beyond the format: "/..r4" holds per object a record
 * named by its oid (meta.c) and its extended attributes, named OID.x
 * (xattr.c).  Each must name an object the tree holds (one left by a
 * tool that removed the object goes in fix mode), and read.  A record r4
 * cannot read lets no one but root at its object; the fix removes it and
 * takes the group and other bits off the object's mode, so that nobody
 * who was kept out by its rules gets in (its owner could have rewritten
 * them anyway).  Attributes r4 cannot read are removed.
 */
static int stale_add(struct chk *c, uint64_t oid, bool bad, bool xattrs)
{
	if (r4_grow(&c->stale, &c->capstale, c->nstale + 1, sizeof(*c->stale), 16))
		return -ENOMEM;
	c->stale[c->nstale++] = (struct stale){oid, bad, xattrs};
	return 0;
}

/* Does oid's record (xattrs: its attributes) read?  -EUCLEAN: no. */
static int meta_reads(struct chk *c, uint64_t oid, bool xattrs)
{
	struct r4_xattrs x;
	struct r4_meta m;
	int rc = xattrs ? r4_xattr_load(c->db, oid, &x) : r4_meta_get(c->db, oid, &m);

	if (!rc && xattrs)
		r4_xattr_fini(&x);
	else if (!rc)
		r4_meta_fini(&m);
	return rc;
}

static int check_meta(struct chk *c)
{
	struct r4_stat st;
	char **v;
	size_t n;
	int rc;

	if (r4_stat(c->db, "/..r4", &st) || !S_ISDIR(st.mode))
		return 0;
	if ((rc = r4_fs_names(c->db, "/..r4", &v, &n)))
		return rc;
	for (size_t i = 0; i < n && rc >= 0; i++) {
		char *end, path[300];
		unsigned long long oid = strtoull(v[i], &end, 10);
		bool xattrs = end != v[i] && !strcmp(end, ".x");
		const struct cobj *r = (*end && !xattrs) || end == v[i] ? NULL : obj_find(c, oid);

		snprintf(path, sizeof(path), "/..r4/%s", v[i]);
		if (!r || !(r->flags & F_SD)) {
			problem(c, R4_CK_META_ORPHAN, (struct where){.path = path}, true,
				"%s of object %.*s, which the tree does not hold",
				xattrs ? "the extended attributes" : "an r4 record",
				(int)(xattrs ? (size_t)(end - v[i]) : strlen(v[i])), v[i]);
			rc = stale_add(c, oid, false, xattrs);
		} else if ((rc = meta_reads(c, oid, xattrs)) == -EUCLEAN) {
			problem(c, R4_CK_META_BAD, (struct where){.oid = oid, .path = path}, true,
				xattrs ? "extended attributes r4 cannot read: they go"
				       : "an r4 record r4 cannot read: its object's access rules allow "
					 "no one but root");
			rc = stale_add(c, oid, !xattrs, xattrs);
		}
	}
	r4_fs_names_free(v, n);
	return rc < 0 ? rc : 0;
}

static void check_counters(struct chk *c)
{
	struct r4_db *db = c->db;

	if (db->next_oid <= c->max_oid) {
		c->fix_oid = true;
		problem(c, R4_CK_SB_OID, AT_BLK(R4_FSB_BLOCK(c->bs)), true,
			"next object id %llu, but object %llu exists; should be %llu",
			(unsigned long long)db->next_oid, (unsigned long long)c->max_oid,
			(unsigned long long)(c->max_oid + 1));
	}
	if (db->file_count != c->res->objects) {
		c->fix_files = true;
		problem(c, R4_CK_SB_FILES, AT_BLK(R4_FSB_BLOCK(c->bs)), true,
			"file count %llu, %llu objects found", (unsigned long long)db->file_count,
			(unsigned long long)c->res->objects);
	}
}

/* ================================ repairs =============================== */

static int fix_object(struct chk *c, struct cobj *r)
{
	struct r4_inode ino;
	r4_key k;
	int rc;

	obj_sdkey(r, &k);
	if ((rc = r4_obj_load(c->db, &k, &ino)))
		return rc;
	if (r->flags & F_FIX_NLINK)
		ino.sd.sd_nlink = (r->mode & S_IFMT) == S_IFDIR ? 2 + r->dotdot_refs : r->names;
	if (r->flags & F_FIX_SIZE)
		ino.sd.sd_size = (r->mode & S_IFMT) == S_IFDIR ? r->nent
			: (r->mode & S_IFMT) == S_IFREG ? r->body_end : 0;
	if (r->flags & F_FIX_BYTES)
		ino.sd.sd_bytes_rdev = (r->mode & S_IFMT) == S_IFDIR ? r->cde_bytes
			: (r->mode & S_IFMT) == S_IFREG ? r->body_bytes : 0;
	rc = r4_obj_save(c->db, &ino);
	r4_obj_fini(&ino);
	return rc;
}

/* The repairs of names.  Problems are reported against the image as it
 * was found, and fix_object has made those counts right; each repair
 * below then keeps its own books: r4_dir_add and r4_dir_remove a
 * directory's size and bytes, set_dotdot the nlinks of the directories a
 * ".." stops and starts naming. */

static int load(struct chk *c, const struct cobj *r, struct r4_inode *ino)
{
	r4_key k;

	obj_sdkey(r, &k);
	return r4_obj_load(c->db, &k, ino);
}

/* A ".." naming directory oid appeared (+1) or went (-1). */
static int dotdot_nlink(struct chk *c, uint64_t oid, int delta)
{
	struct cobj *r = obj_find(c, oid);
	struct r4_inode ino;
	int rc;

	if (!r || !(r->flags & F_SD) || (r->flags & F_BADSD) || !S_ISDIR(r->mode))
		return 0;
	if ((rc = load(c, r, &ino)))
		return rc;
	ino.sd.sd_nlink += (uint32_t)delta;
	rc = r4_obj_save(c->db, &ino);
	r4_obj_fini(&ino);
	return rc;
}

/* Make ".." of directory r name directory `to` (which is in the table). */
static int set_dotdot(struct chk *c, struct cobj *r, uint64_t to)
{
	struct r4_inode d;
	r4_key k;
	int rc;

	obj_sdkey(obj_find(c, to), &k);
	if ((rc = load(c, r, &d)))
		return rc;
	if (r->flags & F_DOTDOT)
		rc = r4_dir_retarget(c->db, &d, "..", 2, &k);
	else
		rc = r4_dir_add(c->db, &d, "..", 2, &k);
	r4_obj_fini(&d);
	if (!rc && (r->flags & F_DOTDOT))
		rc = dotdot_nlink(c, r->dotdot, -1);
	if (!rc)
		rc = dotdot_nlink(c, to, +1);
	return rc;
}

static int set_dot(struct chk *c, struct cobj *r)
{
	struct r4_inode d;
	int rc;

	if ((rc = load(c, r, &d)))
		return rc;
	if (r->flags & F_DOT)
		rc = r4_dir_retarget(c->db, &d, ".", 1, &d.sdkey);
	else
		rc = r4_dir_add(c->db, &d, ".", 1, &d.sdkey);
	r4_obj_fini(&d);
	return rc;
}

/* /lost+found, made like e2fsck's (root's, mode 0700) when absent, and
 * entered in the table so set_dotdot can name it. */
static int make_lost_found(struct chk *c)
{
	struct r4_sd t = {.sd_mode = S_IFDIR | 0700};
	struct r4_inode root, lf;
	struct cobj *r;
	r4_key rk;
	int rc;

	r4_obj_root_key(&rk);
	if ((rc = r4_obj_load(c->db, &rk, &root)))
		return rc;
	rc = r4_obj_create(c->db, &root, "lost+found", 10, &t, NULL, 0, &lf);
	r4_obj_fini(&root);
	if (rc)
		return rc;
	if (!(r = obj_get(c, r4_key_objectid(&lf.sdkey)))) {
		r4_obj_fini(&lf);
		return -ENOMEM;
	}
	r->el0 = lf.sdkey.el[0];
	r->el1 = lf.sdkey.el[1];
	r->flags = F_SD | F_DOT | F_DOTDOT;
	r->mode = lf.sd.sd_mode;
	r->names = 1;
	c->lf_oid = r->oid;
	c->lf = LF_HAVE;
	r4_obj_fini(&lf);
	return 0;
}

/* An orphan gets the name "#OID" in /lost+found (e2fsck's "#INO"). */
static int link_orphan(struct chk *c, struct cobj *r)
{
	char name[48];
	struct r4_inode lf, ino;
	r4_key k;
	int rc = -EEXIST;

	if ((rc = load(c, obj_find(c, c->lf_oid), &lf)))
		return rc;
	obj_sdkey(r, &k);
	rc = -EEXIST;
	for (unsigned n = 0; rc == -EEXIST && n < 100; n++) {
		if (n)
			snprintf(name, sizeof(name), "#%llu.%u", (unsigned long long)r->oid, n);
		else
			snprintf(name, sizeof(name), "#%llu", (unsigned long long)r->oid);
		rc = r4_dir_add(c->db, &lf, name, strlen(name), &k);
	}
	r4_obj_fini(&lf);
	if (rc)
		return rc;
	if (S_ISDIR(r->mode))
		return set_dotdot(c, r, c->lf_oid);
	if ((rc = load(c, r, &ino)))
		return rc;
	ino.sd.sd_nlink = 1;
	rc = r4_obj_save(c->db, &ino);
	r4_obj_fini(&ino);
	return rc;
}

struct unname {
	struct chk *c;
	char (*names)[R4_NAME_MAX + 1];
	size_t n, cap;
	int rc;
};

static int unname_fn(void *ctx, const char *name, size_t len, const r4_key *sdkey)
{
	struct unname *u = ctx;
	struct cobj *t = obj_find(u->c, r4_key_objectid(sdkey));

	if (!t || !(t->flags & F_FIX_UNNAME) || (len == 1 && name[0] == '.') ||
	    (len == 2 && !memcmp(name, "..", 2)))
		return 0;
	if (r4_grow(&u->names, &u->cap, u->n + 1, sizeof(*u->names), 8))
		return u->rc = -ENOMEM;
	snprintf(u->names[u->n++], R4_NAME_MAX + 1, "%.*s", (int)len, name);
	return 0;
}

/* Remove, from directory d, every entry naming an object without stat data. */
static int unname(struct chk *c, struct cobj *d)
{
	struct unname u = {.c = c};
	struct r4_dirpos pos = {0};
	struct r4_inode ino;
	int rc;

	if ((rc = load(c, d, &ino)))
		return rc;
	rc = r4_dir_iterate(c->db, &ino, &pos, unname_fn, &u);
	if (u.rc)
		rc = u.rc;
	for (size_t i = 0; !rc && i < u.n; i++)
		rc = r4_dir_remove(c->db, &ino, u.names[i], strlen(u.names[i]));
	r4_obj_fini(&ino);
	r4_free(u.names);
	return rc;
}

static int repair_names(struct chk *c)
{
	int rc = 0;

	for (size_t i = 0; !rc && i < c->tcap; i++)
		if (c->tab[i].oid != NO_OID && (c->tab[i].flags & F_FIX_LINK) && c->lf == LF_MAKE)
			rc = make_lost_found(c);	/* before the loop: obj_get may move the table */
	for (size_t i = 0; !rc && i < c->tcap; i++) {
		struct cobj *r = &c->tab[i];

		if (r->oid == NO_OID)
			continue;
		if (c->fix_names && (r->flags & F_SD) && S_ISDIR(r->mode) && (r->flags & F_ENTRIES))
			rc = unname(c, r);
		if (!rc && (r->flags & F_FIX_DOT))
			rc = set_dot(c, r);
		if (!rc && (r->flags & F_FIX_DOTDOT))
			rc = set_dotdot(c, r, r->oid == R4_ROOT_OID ? r->oid : r->parent);
		if (!rc && (r->flags & F_FIX_LINK))
			rc = link_orphan(c, r);
	}
	return rc;
}

static int drop_record(struct chk *c, const struct stale *s)
{
	struct r4_inode ino;
	int rc;

	if (s->bad) {
		if ((rc = load(c, obj_find(c, s->oid), &ino)))
			return rc;
		ino.sd.sd_mode &= ~(uint32_t)077;
		r4_obj_touch(c->db, &ino, false, true);
		rc = r4_obj_save(c->db, &ino);
		r4_obj_fini(&ino);
		if (rc)
			return rc;
	}
	return s->xattrs ? r4_xattr_drop(c->db, s->oid) : r4_meta_drop(c->db, s->oid);
}

static int repair(struct chk *c)
{
	struct r4_db *db = c->db;
	int rc;

	if ((rc = r4_begin(db)))
		return rc;
	for (size_t i = 0; i < c->nranges; i++)
		if (c->ranges[i].leak)
			r4_alloc_free(db->alloc, c->ranges[i].start, c->ranges[i].count);
		else
			r4_alloc_mark_used(db->alloc, c->ranges[i].start, c->ranges[i].count);
	/* counters first: /lost+found takes the next oid and counts as a file */
	if (c->fix_oid)
		db->next_oid = c->max_oid + 1;
	if (c->fix_files)
		db->file_count = c->res->objects;
	for (size_t i = 0; i < c->tcap; i++) {
		struct cobj *r = &c->tab[i];

		if (r->oid != NO_OID && (r->flags & (F_FIX_NLINK | F_FIX_SIZE | F_FIX_BYTES)) &&
		    (rc = fix_object(c, r)))
			goto fail;
	}
	if ((rc = repair_names(c)))
		goto fail;
	for (size_t i = 0; i < c->nstale; i++)
		if ((rc = drop_record(c, &c->stale[i])))
			goto fail;
	/* counters and bitmap bits alone change no node: say the transaction
	 * changed something, so commit writes the bitmaps and super block */
	db->gen++;
	if ((rc = r4_commit(db)))
		goto fail;
	return 0;
fail:
	r4_abort(db);
	return rc;
}

/* Reset the status block to "consistent", as mkfs writes it. */
static int clear_status(struct chk *c)
{
	struct r4_status st = {.st_present = true};
	int rc;

	memset(c->blk, 0, c->bs);
	r4_status_encode(&st, c->blk);
	if ((rc = r4_io_write(c->db->io, (uint64_t)R4_STATUS_BLOCK(c->bs) * c->bs, c->blk,
			      c->bs)) || (rc = r4_io_sync(c->db->io)))
		return rc;
	c->db->damaged = 0;
	c->db->broken = false;
	return 0;
}

static int check_status(struct chk *c, bool *reset)
{
	struct r4_status st;
	int rc;

	*reset = false;
	if ((rc = read_blk(c, R4_STATUS_BLOCK(c->bs), c->blk)))
		return rc;
	if (r4_status_decode(&c->lg, c->blk, c->bs, &st)) {
		problem(c, R4_CK_SB_STATUS, AT_BLK(R4_STATUS_BLOCK(c->bs)), false,
			"status block: %s", c->why);
		return 0;
	}
	if (!st.st_status)
		return 0;
	/* reset only when this run leaves nothing else wrong */
	bool clean = c->res->problems == c->res->fixed;

	*reset = clean && c->will_fix;
	problem(c, R4_CK_SB_STATUS, AT_BLK(R4_STATUS_BLOCK(c->bs)), clean,
		"status block marks the volume damaged (0x%llx%s%s)",
		(unsigned long long)st.st_status, st.st_message[0] ? ": " : "", st.st_message);
	return 0;
}

/* ================================ driver ================================ */

static int setup(struct chk *c)
{
	size_t mapb = (size_t)(c->blocks / 8 + 1);

	if (!(c->used = r4_calloc(mapb, 1)) || !(c->fixed = r4_calloc(mapb, 1)) ||
	    !(c->blk = r4_malloc(c->bs)))
		return -ENOMEM;
	for (unsigned l = 1; l <= c->db->height && l <= R4_MAX_HEIGHT; l++)
		if (!(c->buf[l] = r4_malloc(c->bs)))
			return -ENOMEM;
	if (tab_grow(c))
		return -ENOMEM;
	r4_format_fresh_used(c->bs, c->blocks, mark_fixed, c);
	for (uint64_t b = 0; b < c->blocks; b++)
		if (bit(c->fixed, b))
			c->res->used_blocks++;
	return 0;
}

static void teardown(struct chk *c)
{
	r4_free(c->used);
	r4_free(c->fixed);
	r4_free(c->blk);
	for (unsigned l = 0; l <= R4_MAX_HEIGHT; l++)
		r4_free(c->buf[l]);
	r4_free(c->scratch);
	r4_free(c->ccl.buf);
	r4_free(c->tab);
	r4_free(c->ranges);
	r4_free(c->stale);
}

static int run(struct chk *c)
{
	r4_key max = r4_key_max();
	bool reset;
	int rc;

	if ((rc = setup(c)) || (rc = check_backups(c)) || (rc = check_journal(c)))
		return rc;
	c->total = c->blocks - R4_MIN(c->db->sb.sb_free_blocks, c->blocks);
	if ((rc = walk(c, c->db->root, c->db->height, NULL, &max)))
		return rc;
	ctail_flush(c);
	if (c->o && c->o->progress)
		c->o->progress(c->o->ctx, c->done, c->done);
	c->will_fix = c->o && c->o->fix && c->db->rw && !c->tree_bad && !c->res->journal_pending;
	if (c->tree_bad) {
		c->res->semantic_skipped = true;
	} else {
		if ((rc = check_bitmap(c)))
			return rc;
		check_counters(c);
		if ((rc = check_objects(c)) || (rc = check_meta(c)))
			return rc;
	}
	if ((rc = check_status(c, &reset)))
		return rc;
	if (c->will_fix && c->res->fixed && (rc = repair(c)))
		return rc;
	if (reset && (rc = clear_status(c)))
		return rc;
	return 0;
}

int r4_check(r4_db *db, const struct r4_check_opts *o, struct r4_check_result *out)
{
	struct chk c = {.db = db, .o = o, .res = out, .bs = db->bs, .blocks = db->block_count,
			.path_budget = 256};
	int rc;

	memset(out, 0, sizeof(*out));
	if (db->in_txn)
		return -EBUSY;
	if (o && o->fix && !db->rw && !db->ignore_journal)
		return -EROFS;
	c.lg.fn = capture;
	c.lg.ctx = c.why;
	rc = run(&c);
	teardown(&c);
	if (rc)
		out->fixed = 0;
	out->unfixed = out->problems - out->fixed;
	return rc;
}

/* ================================= open ================================= */

struct open_log {
	char why[512];
	uint64_t blk;
	bool got, located;
	bool journal;		/* the error came from reading the journal */
	void (*log)(void *ctx, int level, const char *msg);
	void *ctx;
};

static void open_log_fn(void *ctx, int level, const char *msg)
{
	struct open_log *ol = ctx;
	const char *at = strstr(msg, " at block ");

	if (!ol->got && level == R4_LOG_ERR && at) {
		ol->got = true;
		ol->blk = strtoull(at + 10, NULL, 10);
		capture(ol->why, level, msg);
	} else if (ol->got && !ol->located && level == R4_LOG_DEBUG) {
		/* where it was found, said right after: the journal's code? */
		ol->located = true;
		ol->journal = strstr(msg, "jnl.c") || strstr(msg, "_jh_decode") ||
			      strstr(msg, "_jf_decode") || strstr(msg, "_th_decode") ||
			      strstr(msg, "_wr_decode");
	}
	if (ol->log)
		ol->log(ol->ctx, level, msg);
}

int r4_check_open(const char *path, const struct r4_check_opts *o,
		  void (*log)(void *ctx, int level, const char *msg), r4_db **out)
{
	struct open_log ol = {.log = log, .ctx = o ? o->ctx : NULL};
	struct r4_open_opts oo = {.rw = o && o->fix, .log = open_log_fn, .log_ctx = &ol,
				  .partition = o ? o->partition : 0};
	r4_db *db = NULL;
	int rc;

	oo.repair = oo.rw;
	rc = r4_open(path, &oo, &db);
	if ((rc == -EUCLEAN || rc == -EBADMSG) && ol.journal) {
		/* the journal cannot be replayed: check the image as it is in
		 * place, read-only; check_journal says what is wrong with it */
		oo.rw = oo.repair = false;
		oo.ignore_journal = true;
		ol.got = ol.journal = false;
		rc = r4_open(path, &oo, &db);
	}
	if (rc == -EUCLEAN || rc == -EBADMSG) {
		struct r4_problem p = {.code = R4_CK_SB_BAD, .blk = ol.got ? ol.blk : R4_CHECK_NOBLK,
				       .nblk = ol.got, .msg = ol.got ? ol.why : r4_strerror(rc)};
		uint64_t bits = r4_format_bitmap_bits(R4_FORMAT_BLOCKSIZE);

		p.cls = R4_CC_SUPER;
		if (ol.got && (ol.blk == R4_BITMAP0_BLOCK(R4_FORMAT_BLOCKSIZE) ||
			       (ol.blk && ol.blk % bits == 0)))
			p.cls = R4_CC_BITMAP;
		else if (ol.got && ol.blk > R4_STATUS_BLOCK(R4_FORMAT_BLOCKSIZE))
			p.cls = R4_CC_NODE;
		if (o && o->report)
			o->report(o->ctx, &p);
	}
	if (rc)
		return rc;
	db->lg.fn = log;
	db->lg.ctx = o ? o->ctx : NULL;
	*out = db;
	return 0;
}
