/*
 * dump.c - the storage tree as data, for learners and tools: r4sh's
 * .tree walks it, and a picture of the tree can be drawn from it.  Nodes
 * come depth first from the root, each with its items.
 */
#include "db.h"
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
