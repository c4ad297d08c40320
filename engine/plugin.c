/*
 * plugin.c - the plugin registry (plugin.h): one table per plugin type,
 * in the kernel's type order, and the plugins whose behaviour is all data
 * (their methods live where the data is used: items in the codecs,
 * compression modes in ccreg.c, stat-data extensions in item_stat.c).
 * Labels are reiser4progs', so `mkfs.reiser4 -o`, `debugfs.reiser4 -l` and
 * r4 name plugins alike.
 */
#include "plugin.h"
#include "r4.h"

static const struct r4_plugin dirs[] = {
	{"dir", "hashed directory: an entry's key holds its name or the name's hash", NULL},
	{"dir32", "seekable hashed directory (31-bit hashes; r4 does not read it)", NULL},
};

#define ITEM(kind, at) (&(const struct r4_item_ops){kind, at})
static const struct r4_plugin items[] = {
	{"stat40", "stat data: mode, links, size, owner, times, plugin set",
	 ITEM("stat", R4_ITEM_AT_LEAF)},
	{"sde40", "single directory entry (r4 does not read it)", ITEM("sde", R4_ITEM_AT_LEAF)},
	{"cde40", "compound directory entries: names and the stat-data keys they lead to",
	 ITEM("cde", R4_ITEM_AT_LEAF)},
	{"nodeptr40", "node pointer: a child's block", ITEM("nodeptr", R4_ITEM_AT_TWIG |
							 R4_ITEM_AT_UPPER)},
	{NULL, NULL, NULL},
	{"extent40", "extents: runs of unformatted blocks of a file body",
	 ITEM("extent", R4_ITEM_AT_TWIG)},
	{"plain40", "tail: file body bytes kept in the leaf", ITEM("tail", R4_ITEM_AT_LEAF)},
	{"ctail40", "compressed tail: one disk cluster of a ccreg40 file",
	 ITEM("ctail", R4_ITEM_AT_LEAF)},
	{"bbox40", "black box: a safe-link of an object still open or being cut",
	 ITEM("blackbox", R4_ITEM_AT_LEAF)},
};
#undef ITEM

static const struct r4_plugin perms[] = {
	{"null", "no permission plugin: the mode bits decide (and r4's access rules)", NULL},
};

static const struct r4_plugin sdexts[] = {
	{"sdext_lw", "light-weight stat data: mode, links, size", NULL},
	{"sdext_unix", "owner, group, times, device or bytes", NULL},
	{"sdext_lt", "nanoseconds of the times", NULL},
	{"sdext_symlink", "a symlink's target", NULL},
	{"sdext_plugin_set", "the plugin-set members that differ from the root's", NULL},
	{"sdext_flags", "inode flags", NULL},
	{"sdext_caps", "capabilities (unused)", NULL},
	{"sdext_crypto", "cipher key data (unused)", NULL},
	{"sdext_heir_set", "the plugins children inherit", NULL},
};

static const struct r4_plugin formats[] = {
	{"format40", "disk format: super blocks, bitmaps, journal, one tree", NULL},
};

static const struct r4_plugin ciphers[] = {
	{"none", "no encryption (the only cipher left in Reiser4)", NULL},
};

static const struct r4_plugin digests[] = {
	{"sha256_32", "digest for cipher keys (unused)", NULL},
};

static const struct r4_plugin cmodes[] = {
	{"none", "never compress", NULL},
	{"latt", "compress; after a miss, try again on a lattice of clusters", NULL},
	{"ultim", "compress until the first cluster that does not shrink", NULL},
	{"force", "compress every cluster", NULL},
	{"conv", "like ultim, and a first cluster that does not shrink makes the file reg40",
	 NULL},
};

#define CLUSTER(shift) (&(const struct r4_cluster_ops){shift})
static const struct r4_plugin clusters[] = {
	{"64K", "64 KiB logical clusters", CLUSTER(16)},
	{"32K", "32 KiB logical clusters", CLUSTER(15)},
	{"16K", "16 KiB logical clusters", CLUSTER(14)},
	{"8K", "8 KiB logical clusters", CLUSTER(13)},
	{"4K", "4 KiB logical clusters", CLUSTER(12)},
};
#undef CLUSTER

#define TABLE(v) v, R4_ARRAY_SIZE(v)
static const struct ptype {
	const char *name;	/* the kernel's */
	const struct r4_plugin *v;
	size_t n;
} types[R4_PTYPE_NR] = {
	[R4_PTYPE_FILE] = {"file", r4_file_plugins, 5},
	[R4_PTYPE_DIR] = {"dir", TABLE(dirs)},
	[R4_PTYPE_ITEM] = {"item", TABLE(items)},
	[R4_PTYPE_NODE] = {"node", r4_node_plugins, 2},
	[R4_PTYPE_HASH] = {"hash", r4_hash_plugins, 5},
	[R4_PTYPE_FIBRE] = {"fibration", r4_fibre_plugins, 4},
	[R4_PTYPE_FORMATTING] = {"formatting", r4_formatting_plugins, 3},
	[R4_PTYPE_PERM] = {"perm", TABLE(perms)},
	[R4_PTYPE_SDEXT] = {"sd_ext", TABLE(sdexts)},
	[R4_PTYPE_FORMAT] = {"format", TABLE(formats)},
	[R4_PTYPE_JNODE] = {"jnode", NULL, 0},		/* memory only */
	[R4_PTYPE_CIPHER] = {"cipher", TABLE(ciphers)},
	[R4_PTYPE_DIGEST] = {"digest", TABLE(digests)},
	[R4_PTYPE_COMPRESSION] = {"compression", r4_compress_plugins, 3},
	[R4_PTYPE_CMODE] = {"compression_mode", TABLE(cmodes)},
	[R4_PTYPE_CLUSTER] = {"cluster", TABLE(clusters)},
	[R4_PTYPE_TXMOD] = {"txmod", NULL, 0},		/* a mount option, never on disk */
};
#undef TABLE

/* Plugin-set members (item.h R4_PSET_*): the stat-data slot index is the
 * position here. */
static const struct {
	const char *name;
	unsigned type;
} members[] = {
	{"file", R4_PTYPE_FILE}, {"dir", R4_PTYPE_DIR}, {"perm", R4_PTYPE_PERM},
	{"formatting", R4_PTYPE_FORMATTING}, {"hash", R4_PTYPE_HASH},
	{"fibration", R4_PTYPE_FIBRE}, {"sd", R4_PTYPE_ITEM}, {"dir_item", R4_PTYPE_ITEM},
	{"cipher", R4_PTYPE_CIPHER}, {"digest", R4_PTYPE_DIGEST},
	{"compression", R4_PTYPE_COMPRESSION}, {"compression_mode", R4_PTYPE_CMODE},
	{"cluster", R4_PTYPE_CLUSTER}, {"create", R4_PTYPE_FILE},
};

const struct r4_plugin *r4_plugin_get(unsigned type, unsigned id)
{
	if (type >= R4_PTYPE_NR || id >= types[type].n || !types[type].v[id].label)
		return NULL;
	return &types[type].v[id];
}

const char *r4_plugin_label(unsigned type, unsigned id)
{
	const struct r4_plugin *p = r4_plugin_get(type, id);

	return p ? p->label : NULL;
}

int r4_plugin_id(unsigned type, const char *label, size_t len)
{
	for (unsigned id = 0; type < R4_PTYPE_NR && id < types[type].n; id++) {
		const char *l = types[type].v[id].label;

		if (l && strlen(l) == len && !memcmp(l, label, len))
			return (int)id;
	}
	return -1;
}

bool r4_plugin_nth(size_t n, struct r4_plugin_info *out)
{
	for (unsigned t = 0; t < R4_PTYPE_NR; t++)
		for (unsigned id = 0; id < types[t].n; id++) {
			const struct r4_plugin *p = &types[t].v[id];

			if (p->label && n-- == 0) {
				*out = (struct r4_plugin_info){t, id, types[t].name, p->label, p->desc};
				return true;
			}
		}
	return false;
}

const char *r4_pset_member_name(unsigned m)
{
	return m < R4_ARRAY_SIZE(members) ? members[m].name : NULL;
}

int r4_pset_member(const char *name, size_t len, unsigned *type)
{
	for (unsigned m = 0; m < R4_ARRAY_SIZE(members); m++)
		if (strlen(members[m].name) == len && !memcmp(members[m].name, name, len)) {
			if (type)
				*type = members[m].type;
			return (int)m;
		}
	return -1;
}
