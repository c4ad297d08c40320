/*
 * plugin.h - the plugin registry (ENGINE.md 5, docs/plugins.md).
 *
 * A Reiser4 plugin is (type, id) -> a label, a description and a method
 * vector; the id is what the disk stores (item headers, node headers, the
 * stat data's plugin set).  Here every plugin is one row of data in its
 * owner's table (hashes and fibrations in key.c, formattings in reg.c,
 * compressions in ccreg.c, node layouts in node.c, the rest in plugin.c),
 * indexed by id, and the engine reaches behaviour through the row's ops:
 * nothing switches on a plugin id outside its own table.  A row whose
 * label is NULL is an id no plugin has (item id 4, say).
 */
#ifndef R4_PLUGIN_H
#define R4_PLUGIN_H

#include "r4_int.h"

struct r4_plugin {
	const char *label;	/* reiser4progs' label */
	const char *desc;
	const void *ops;	/* the type's operations (below), or NULL */
};

/* The row of (type, id), or NULL when r4 knows no such plugin. */
const struct r4_plugin *r4_plugin_get(unsigned type, unsigned id);

static inline const void *r4_plugin_ops(unsigned type, unsigned id)
{
	const struct r4_plugin *p = r4_plugin_get(type, id);

	return p ? p->ops : NULL;
}

/* ---- the operations of each type that has some ---- */

struct r4_hash_ops {		/* 64-bit hash of a long name's tail */
	uint64_t (*hash)(const uint8_t *name, size_t len);
};

struct r4_fibre_ops {		/* the fibre (0..127 kept) a name's key falls in */
	uint8_t (*fibre)(const uint8_t *name, size_t len);
};

struct r4_formatting_ops {	/* tails (true) or extents for a body of that size */
	bool (*tails)(uint64_t size, uint32_t blocksize);
};

struct r4_db;
struct r4_inode;

struct r4_file_ops {		/* an object plugin */
	uint32_t type;		/* S_IFMT of its objects; 0: fifos, sockets, devices */
	/* a regular file's body, reg.c's body kind given (NULL for the others) */
	int (*read)(struct r4_db *db, const struct r4_inode *ino, uint64_t off, void *buf,
		    size_t len, size_t *got);
	int (*write)(struct r4_db *db, struct r4_inode *ino, unsigned kind, uint64_t off,
		     const uint8_t *buf, size_t len);
	int (*truncate)(struct r4_db *db, struct r4_inode *ino, unsigned kind, uint64_t size);
};

struct r4_node_ops {		/* a formatted node's layout */
	unsigned header;	/* header bytes */
	uint32_t magic;
	/* the checksum the header keeps, or NULL (node40 keeps none) */
	uint32_t (*csum)(const uint8_t *node, uint32_t blocksize);
};

struct r4_item_ops {
	const char *kind;	/* what r4 dump calls it */
	uint8_t levels;		/* R4_ITEM_AT_* where a node may hold it */
};
enum { R4_ITEM_AT_LEAF = 1, R4_ITEM_AT_TWIG = 2, R4_ITEM_AT_UPPER = 4 };

/*
 * deflate: compress n bytes of src into dst (cap >= bound(n) bytes);
 * -ENOSPC when the result does not fit (the cluster is then stored raw),
 * -ENOMEM.  inflate: decompress into dst (cap bytes): *out bytes, or
 * -EUCLEAN for a stream that is not the plugin's (or decodes to more).
 */
struct r4_compress_ops {
	size_t min_deflate;	/* shorter clusters are stored raw (min_size_deflate) */
	size_t (*bound)(size_t n);
	int (*deflate)(const uint8_t *src, size_t n, uint8_t *dst, size_t cap, size_t *out);
	int (*inflate)(const uint8_t *src, size_t n, uint8_t *dst, size_t cap, size_t *out);
};

struct r4_cluster_ops {		/* a ccreg40 file's logical cluster */
	unsigned shift;		/* 1 << shift bytes */
};

/* ---- the tables the modules own (indexed by id) ---- */

extern const struct r4_plugin r4_hash_plugins[5], r4_fibre_plugins[4];	/* key.c */
extern const struct r4_plugin r4_file_plugins[5], r4_formatting_plugins[3];	/* reg.c */
extern const struct r4_plugin r4_compress_plugins[3];			/* ccreg.c */
extern const struct r4_plugin r4_node_plugins[2];			/* node.c */

#endif
