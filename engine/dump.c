/*
 * dump.c - the storage tree as data, for learners and tools: r4sh's
 * .tree walks it, and a picture of the tree can be drawn from it.  Nodes
 * come depth first from the root, each with its items.  And the journal
 * as it lies on the image, as text (r4 logdump).
 */
#include "db.h"
#include "format.h"
#include "io.h"
#include "item.h"
#include "key.h"
#include "node.h"
#include "tree.h"

/* What an item plugin's row calls its items ("stat", "cde", "tail", ...). */
static const char *kind_of(unsigned pid)
{
	const struct r4_item_ops *io = r4_plugin_ops(R4_PTYPE_ITEM, pid);

	return io ? io->kind : "?";
}

static int dump(struct r4_db *db, uint64_t blk, unsigned level,
		int (*fn)(void *ctx, const struct r4_dump_node *n), void *ctx, unsigned depth)
{
	struct r4_dump_item *items;
	struct r4_dump_node dn;
	r4_node *n;
	int rc;

	if (depth > 64)
		return R4_CORRUPT(&db->lg, blk, "tree deeper than 64 levels");
	if ((rc = r4_node_get(db, blk, level, &n)))
		return rc;
	const uint8_t *b = n->data;
	unsigned nr = r4_node_nr(b);

	if (!(items = r4_calloc(nr + 1, sizeof(*items)))) {
		r4_node_put(db, n);
		return -ENOMEM;
	}
	for (unsigned i = 0; i < nr; i++) {
		struct r4_dump_item *it = &items[i];
		const uint8_t *body = b + r4_node_item_off(b, db->bs, i);
		unsigned len = r4_node_item_len(b, db->bs, i), pid = r4_node_item_pid(b, db->bs, i);
		r4_key k;
		size_t units = 0;

		r4_node_key(b, db->bs, i, &k);
		r4_key_print(&k, it->key, sizeof(it->key));
		it->kind = kind_of(pid);
		it->len = len;
		if (pid == R4_ITEM_NODEPTR40)
			r4_item_nodeptr_decode(body, len, &it->child);
		else if (pid == R4_ITEM_CDE40 && !r4_item_cde_count(body, len, &it->units))
			;
		else if (pid == R4_ITEM_EXTENT40 && !r4_item_extent_count(body, len, &units))
			it->units = (unsigned)units;
	}
	dn = (struct r4_dump_node){n->blk, level, nr, r4_node_free(b), items};
	rc = fn(ctx, &dn);
	for (unsigned i = 0; i < nr && !rc && level > R4_LEVEL_LEAF; i++)
		if (!strcmp(items[i].kind, "nodeptr"))
			rc = dump(db, items[i].child, level - 1, fn, ctx, depth + 1);
	r4_free(items);
	r4_node_put(db, n);
	return rc;
}

int r4_dump_tree(r4_db *db, int (*fn)(void *ctx, const struct r4_dump_node *n), void *ctx)
{
	return r4_db_seen(db, dump(db, db->root, db->height, fn, ctx, 0));
}

/* ---- the journal (r4 logdump) ---- */

struct jdump {
	struct r4_db *db;
	bool verbose;
	struct r4_buf *out;
	unsigned ntx;
	uint8_t blk[R4_MAX_BLOCKSIZE];	/* a wandered copy (verbose) */
};

static const char *tx_head(uint64_t blk, char s[static 32])
{
	if (!blk)
		return "none";
	snprintf(s, 32, "tx head %llu", (unsigned long long)blk);
	return s;
}

static int dump_counters(struct r4_buf *out, uint64_t free_blocks, uint64_t files,
			 uint64_t next_oid)
{
	return r4_buf_printf(out, "free blocks %llu, files %llu, next oid 0x%llx\n",
			     (unsigned long long)free_blocks, (unsigned long long)files,
			     (unsigned long long)next_oid);
}

static int dump_tx(void *ctx, uint64_t blk, const struct r4_th *th)
{
	struct jdump *j = ctx;
	char s[32], p[32];
	int rc;

	if ((rc = r4_buf_printf(j->out, "transaction %u: %s, %u wander record%s, previous: %s\n"
				"  after it: ", ++j->ntx, tx_head(blk, s), th->th_total - 1,
				th->th_total == 2 ? "" : "s", tx_head(th->th_prev_tx, p))))
		return rc;
	return dump_counters(j->out, th->th_free_blocks, th->th_nr_files, th->th_next_oid);
}

/* What the wandered copy of block orig holds, after its pair. */
static int dump_copy(struct jdump *j, uint64_t orig, uint64_t wand)
{
	struct r4_db *db = j->db;
	const uint8_t *b = j->blk;
	uint64_t bits = r4_format_bitmap_bits(db->bs);
	struct r4_fsb sb;
	int rc;

	if ((rc = r4_io_read(db->io, wand * db->bs, j->blk, db->bs)))
		return rc;
	if (orig == R4_FSB_BLOCK(db->bs)) {
		if (r4_fsb_decode(NULL, b, db->bs, &sb))
			return r4_buf_printf(j->out, "  format super block (does not decode)");
		return r4_buf_printf(j->out, "  format super block: root %llu, height %u, "
				     "free blocks %llu", (unsigned long long)sb.sb_root_block,
				     sb.sb_tree_height, (unsigned long long)sb.sb_free_blocks);
	}
	if (orig == r4_format_bitmap_block(db->bs, orig / bits))
		return r4_buf_printf(j->out, "  bitmap block %llu", (unsigned long long)(orig / bits));
	if (r4_le16_get(b + R4_NH_PID) == db->node_pid &&
	    r4_le32_get(b + R4_NH_MAGIC) == (db->node_pid == R4_NODE41 ? R4_NODE41_MAGIC
									: R4_NODE40_MAGIC)) {
		unsigned level = r4_node_level(b);

		return r4_buf_printf(j->out, "  %s node, %u item%s%s",
				     level == R4_LEVEL_LEAF ? "leaf" : level == R4_LEVEL_TWIG ? "twig"
											   : "internal",
				     r4_node_nr(b), r4_node_nr(b) == 1 ? "" : "s",
				     r4_node_check(NULL, orig, b, db->bs, db->node_pid, db->mkfs_id, 0)
					     ? " (fails its check)" : "");
	}
	if ((rc = r4_buf_printf(j->out, "  data:")))
		return rc;
	for (unsigned i = 0; i < 16 && !rc; i++)
		rc = r4_buf_printf(j->out, " %02x", b[i]);
	return rc;
}

static int dump_rec(void *ctx, uint64_t blk, const struct r4_wr *wr, const uint8_t *buf)
{
	struct jdump *j = ctx;
	int rc;

	if ((rc = r4_buf_printf(j->out, "  wander record %u at block %llu: %u block%s\n",
				wr->wr_serial, (unsigned long long)blk, wr->wr_nr_entries,
				wr->wr_nr_entries == 1 ? "" : "s")))
		return rc;
	for (uint32_t i = 0; i < wr->wr_nr_entries && !rc; i++) {
		uint64_t orig, wand;

		r4_wr_entry(buf, i, &orig, &wand);
		if (!(rc = r4_buf_printf(j->out, "    %llu -> %llu", (unsigned long long)orig,
					 (unsigned long long)wand)) && j->verbose)
			rc = dump_copy(j, orig, wand);
		if (!rc)
			rc = r4_buf_printf(j->out, "\n");
	}
	return rc;
}

int r4_dump_journal(r4_db *db, bool verbose, struct r4_buf *out)
{
	struct r4_jnl_img im = r4_jnl_img_of(db);
	struct jdump *j;
	struct r4_jh jh;
	struct r4_jf jf;
	char s[32];
	int rc;

	if ((rc = r4_jnl_ends(&im, &jh, &jf)))
		return r4_db_seen(db, rc);
	if ((rc = r4_buf_printf(out, "journal header (block %u): last committed: %s\n",
				R4_JHEADER_BLOCK(db->bs), tx_head(jh.jh_last_committed, s))) ||
	    (rc = r4_buf_printf(out, "journal footer (block %u): last played: %s\n  ",
				R4_JFOOTER_BLOCK(db->bs), tx_head(jf.jf_last_flushed, s))) ||
	    (rc = dump_counters(out, jf.jf_free_blocks, jf.jf_nr_files, jf.jf_next_oid)))
		return rc;
	if (jh.jh_last_committed == jf.jf_last_flushed)
		return r4_buf_printf(out, "no unplayed transactions\n");
	if (!(j = r4_calloc(1, sizeof(*j))))
		return -ENOMEM;
	*j = (struct jdump){.db = db, .verbose = verbose, .out = out};
	rc = r4_jnl_walk(&im, &jh, &jf, &(struct r4_jnl_visit){.tx = dump_tx, .rec = dump_rec, .ctx = j});
	if (!rc)
		rc = r4_buf_printf(out, "%u committed transaction%s not played: a read-write open "
				   "replays %s\n", j->ntx, j->ntx == 1 ? "" : "s",
				   j->ntx == 1 ? "it" : "them");
	r4_free(j);
	return r4_db_seen(db, rc);
}
