/*
 * r4.c - the r4 multi-call program: admin subcommands (mkfs, info, ls,
 * r4.c - the r4 multi-call program: admin subcommands (mkfs, info, ls,
 * cat, import and export (copy.c), fsck, dump, frag, logdump) and the
 * parse-only dump of the command language.
 *
 * Thin: parse options, call the engine, print, map errors to exit codes.
 * The names r4sh and r4fuse are reserved for the shell and the FUSE
 * bridge (they will dispatch on argv[0]).
 */
#include <stdbool.h>
#include <errno.h>
#include <malloc.h>
#include <limits.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <uuid/uuid.h>

#include "exit.h"
#include "sh.h"
#include "r4.h"
#include "r4_lang.h"

static const char *sh_prog = "r4";
static unsigned partition;	/* --partition N, taken out of any subcommand's options */

/* What the engine says while r4 works on an image: its errors and
 * warnings (what is damaged, and where), on stderr. */
static void say(void *ctx, int level, const char *msg)
{
	(void)ctx;
	if (level <= R4_LOG_WARN)
		fprintf(stderr, "%s: %s\n", sh_prog, msg);
}

int fuse_bridge_main(int argc, char **argv);	/* fuse-bridge/r4fuse.c */

static int usage(FILE *f)
{
	fprintf(f,
		"usage: %s mkfs [-f] [-d DIR] IMAGE SIZE [--label L] [--uuid U] [--node node40|node41]\n"
		"                [-o TYPE=PLUGIN[,TYPE=PLUGIN...]]  (-f, --force: over a volume;\n"
		"                                       -d DIR: filled from DIR, as r4 import fills)\n"
		"       %s info IMAGE\n"
		"       %s ls [-1 | -l] IMAGE [PATH]  list a directory, sorted by name (-l, the\n"
		"                                       default: type, mode, links, owner, size;\n"
		"                                       -1: names alone)\n"
		"       %s cat IMAGE PATH      write a file's bytes to stdout\n"
		"       %s import IMAGE SRCDIR [DEST]  copy a host tree into the image, keeping\n"
		"                                       modes, owners, times, links, holes, xattrs\n"
		"       %s export [-p] [--pseudo] IMAGE [PATH] DEST  copy PATH (default /) out\n"
		"                                       into host directory DEST, keeping the same\n"
		"                                       (-p: owners also when not root; --pseudo:\n"
		"                                       r4's oid, key, plugin as user.r4.* xattrs)\n"
		"       %s export --salvage [--list] IMAGE [PATH] DEST  from a damaged volume:\n"
		"                                       what it still holds, then what could not\n"
		"                                       be read (--list: list it; docs/salvage.md)\n"
		"       %s fsck IMAGE [-n | --fix | -y]  check the image; repair what is safe\n"
		"                                       (-n: read-only, even while in use)\n"
		"       %s repack [-n | --dry-run] [-v] [--compact] [--commit SIZE] [--rate SIZE]\n"
		"                 IMAGE|MNT [PATH]      file bodies and nodes into walk order, one run each\n"
		"                                       (-n: say what would move; -v: each file moved;\n"
		"                                       --compact: the free space gathered past them;\n"
		"                                       MNT: on a live mount, --rate SIZE per second)\n"
		"       %s repack --stop MNT   stop the pass a mount runs, and follow it to its end\n"
		"       %s dump [--dot] IMAGE  the storage tree: nodes, items, keys (--dot: Graphviz)\n"
		"       %s frag [--json] IMAGE [PATH]  the layout: fragmentation, packing, seeks\n"
		"       %s logdump [-v] IMAGE  the journal: header, footer, transactions not played\n"
		"                                       (-v: what each wandered copy holds)\n"
		"       %s plugins [TYPE]      the plugins r4 knows: type, id, label, what it does\n"
		"       %s parse (-c CMD | -f SCRIPT)  the AST of an R4L command, or its errors\n"
		"       %s explain [--script] (-c CMD | -f SCRIPT)  its transaction plan\n"
		"       %s run [--script] [--as UID[:GID[,G...]]] [--cwd DIR] (-c CMD | -f SCRIPT) IMAGE\n"
		"                                       run it, print each statement's value\n"
		"       %s --version; %s SUBCOMMAND -h (--help): its usage\n"
		"IMAGE: a file, a block device or an NBD URI (nbd://HOST[:PORT]/EXPORT,\n"
		"  nbd+unix:///EXPORT?socket=PATH); --partition N: the volume is in its\n"
		"  partition N (MBR or GPT, numbered as /dev/sdaN), with every subcommand.\n"
		"SIZE takes K, M, G or T suffixes (powers of 1024).\n"
		"TYPE=PLUGIN: hash=r5_hash|rupasov_hash|tea_hash|fnv1_hash|deg_hash,\n"
		"  fibration=lexic_fibre|dot_o_fibre|ext_1_fibre|ext_3_fibre,\n"
		"  formatting=smart|tails|extents, node=node40|node41, create=reg40\n",
		sh_prog, sh_prog, sh_prog, sh_prog, sh_prog, sh_prog, sh_prog, sh_prog, sh_prog,
		sh_prog, sh_prog, sh_prog, sh_prog, sh_prog, sh_prog, sh_prog, sh_prog, sh_prog,
		sh_prog);
	return R4_EXIT_USAGE;
}

/* One TYPE=PLUGIN pair of -o. */
static int set_plugin(struct r4_mkfs_opts *o, const char *type, const char *label)
{
	static const unsigned types[] = {R4_PTYPE_HASH, R4_PTYPE_FIBRE, R4_PTYPE_FORMATTING,
					 R4_PTYPE_NODE, R4_PTYPE_FILE};
	static const char *const names[] = {"hash", "fibration", "formatting", "node", "create"};

	for (size_t t = 0; t < sizeof(types) / sizeof(types[0]); t++) {
		if (strcmp(type, names[t]))
			continue;
		int id = r4_plugin_id(types[t], label, strlen(label));

		if (id >= 0) {
			switch (types[t]) {
			case R4_PTYPE_HASH: o->hash = (unsigned)id; break;
			case R4_PTYPE_FIBRE: o->fibration = (unsigned)id; break;
			case R4_PTYPE_FORMATTING: o->formatting = (unsigned)id; break;
			case R4_PTYPE_NODE: o->node41 = id == 1; break;
			default:
				if (id != 0) {
					fprintf(stderr, "%s: create=%s: only reg40 is supported yet\n",
						sh_prog, label);
					return -1;
				}
				o->create = (unsigned)id;
			}
			return 0;
		}
		fprintf(stderr, "%s: unknown %s plugin '%s'\n", sh_prog, type, label);
		return -1;
	}
	fprintf(stderr, "%s: unknown plugin type '%s'\n", sh_prog, type);
	return -1;
}

static int parse_plugins(struct r4_mkfs_opts *o, char *arg)
{
	for (char *save = NULL, *pair = strtok_r(arg, ",", &save); pair;
	     pair = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(pair, '=');

		if (!eq) {
			fprintf(stderr, "%s: -o %s: expected TYPE=PLUGIN\n", sh_prog, pair);
			return -1;
		}
		*eq = 0;
		if (set_plugin(o, pair, eq + 1))
			return -1;
	}
	return 0;
}

static int cmd_mkfs(int argc, char **argv)
{
	static const struct option lopts[] = {
		{"label", required_argument, NULL, 'L'}, {"uuid", required_argument, NULL, 'U'},
		{"node", required_argument, NULL, 'n'}, {"force", no_argument, NULL, 'f'},
		{"root-directory", required_argument, NULL, 'd'}, {NULL, 0, NULL, 0}};
	const char *fill = NULL;
	struct stat dir;
	struct r4_mkfs_opts o;
	uuid_t uu;
	uint64_t size;
	int c, rc;

	r4_mkfs_defaults(&o);
	o.no_overwrite = true;
	o.partition = partition;
	o.log = say;
	while ((c = getopt_long(argc, argv, "fd:L:U:o:", lopts, NULL)) != -1) {
		switch (c) {
		case 'f':
			o.no_overwrite = false;
			break;
		case 'd':
			fill = optarg;
			break;
		case 'L':
			if (strlen(optarg) > 16) {
				fprintf(stderr, "%s: label '%s' is longer than 16 bytes\n", sh_prog,
					optarg);
				return R4_EXIT_USAGE;
			}
			o.label = optarg;
			break;
		case 'U':
			if (uuid_parse(optarg, uu)) {
				fprintf(stderr, "%s: bad uuid '%s'\n", sh_prog, optarg);
				return R4_EXIT_USAGE;
			}
			o.uuid = uu;
			break;
		case 'n':
			if (set_plugin(&o, "node", optarg))
				return R4_EXIT_USAGE;
			break;
		case 'o':
			if (parse_plugins(&o, optarg))
				return R4_EXIT_USAGE;
			break;
		default:
			return usage(stderr);
		}
	}
	if (argc - optind != 2)
		return usage(stderr);
	if (r4_parse_size(argv[optind + 1], &size)) {
		fprintf(stderr, "%s: bad size '%s'\n", sh_prog, argv[optind + 1]);
		return R4_EXIT_USAGE;
	}
	/* (DIR is looked at first: a volume is made only to be filled) */
	if (fill && (rc = stat(fill, &dir) < 0 ? errno : S_ISDIR(dir.st_mode) ? 0 : ENOTDIR)) {
		fprintf(stderr, "%s: mkfs -d '%s': %s\n", sh_prog, fill, strerror(rc));
		return R4_EXIT_FAIL;
	}
	if ((rc = r4_mkfs(argv[optind], size, &o))) {
		if (rc == -EBUSY)
			sh_say_busy(sh_prog, argv[optind], NULL);
		else if (rc == -EEXIST)
			fprintf(stderr, "%s: %s: holds a Reiser4 volume already; -f (--force) "
				"overwrites it\n", sh_prog, argv[optind]);
		else if (rc == -EFBIG)
			fprintf(stderr, "%s: cannot make '%s': %s is larger than the %s\n", sh_prog,
				argv[optind], argv[optind + 1], partition ? "partition" : "device");
		else if (rc == -ENOSPC && size < R4_MKFS_MIN_SIZE)
			fprintf(stderr, "%s: cannot make '%s': %s is too small for a Reiser4 "
				"volume (at least %lluM)\n", sh_prog, argv[optind], argv[optind + 1],
				(unsigned long long)(R4_MKFS_MIN_SIZE >> 20));
		else
			fprintf(stderr, "%s: cannot make '%s': %s\n", sh_prog, argv[optind],
				r4_strerror(rc));
		return R4_EXIT_FAIL;
	}
	struct r4_open_opts oo = {.log = say, .partition = partition};

	return fill && cp_mkfs_fill(argv[optind], fill, &oo) ? R4_EXIT_FAIL : R4_EXIT_OK;
}

static void print_info(const struct r4_info *in)
{
	char uu[37];

	uuid_unparse(in->uuid, uu);
	printf("format:        format40 (4.0.%u)\n", in->version & 0x7fffffffu);
	printf("block size:    %u\n", in->blocksize);
	printf("blocks:        %llu\n", (unsigned long long)in->block_count);
	printf("free blocks:   %llu\n", (unsigned long long)in->free_blocks);
	printf("uuid:          %s\n", uu);
	printf("label:         %s\n", in->label[0] ? in->label : "<none>");
	printf("mkfs id:       0x%08x\n", in->mkfs_id);
	printf("node plugin:   %s\n", r4_plugin_label(R4_PTYPE_NODE, in->node_pid));
	printf("tree height:   %u\n", in->height);
	printf("root block:    %llu\n", (unsigned long long)in->root);
	printf("files:         %llu\n", (unsigned long long)in->file_count);
	printf("next oid:      0x%llx\n", (unsigned long long)in->next_oid);
	printf("hash:          %s\n", r4_plugin_label(R4_PTYPE_HASH, in->hash));
	printf("fibration:     %s\n", r4_plugin_label(R4_PTYPE_FIBRE, in->fibration));
	printf("formatting:    %s\n", r4_plugin_label(R4_PTYPE_FORMATTING, in->formatting));
	printf("create:        %s\n", r4_plugin_label(R4_PTYPE_FILE, in->create));
	printf("status:        %s\n", in->status ? "damaged" : "consistent");
}

/* r4 plugins [TYPE]: the registry (engine/plugin.c), as debugfs.reiser4 -l
 * lists reiser4progs' but by the kernel's type numbers. */
static int cmd_plugins(int argc, char **argv)
{
	struct r4_plugin_info pi;
	bool any = false;

	if (argc > 2)
		return usage(stderr);
	for (size_t i = 0; r4_plugin_nth(i, &pi); i++) {
		if (argc == 2 && strcmp(argv[1], pi.type_name))
			continue;
		printf("%-16s %2u  %-16s %s\n", pi.type_name, pi.id, pi.label, pi.desc);
		any = true;
	}
	if (!any) {
		fprintf(stderr, "%s: plugins: no plugin type '%s'\n", sh_prog, argv[1]);
		return R4_EXIT_USAGE;
	}
	return R4_EXIT_OK;
}

static int cmd_info(int argc, char **argv)
{
	struct r4_open_opts oo = {.log = say, .partition = partition};
	struct r4_info in;
	r4_db *db = NULL;
	int rc;

	if (argc != 2)
		return usage(stderr);
	if ((rc = r4_open(argv[1], &oo, &db))) {
		fprintf(stderr, "%s: cannot open image '%s': %s\n", sh_prog, argv[1],
			r4_strerror(rc));
		return R4_EXIT_FAIL;
	}
	rc = r4_info(db, &in);
	if (!rc)
		print_info(&in);
	else
		fprintf(stderr, "%s: '%s': %s\n", sh_prog, argv[1], r4_strerror(rc));
	r4_close(db);
	return rc ? R4_EXIT_FAIL : R4_EXIT_OK;
}

static int open_ro(const char *path, r4_db **db)
{
	struct r4_open_opts oo = {.log = say, .partition = partition};
	int rc = r4_open(path, &oo, db);

	if (rc)
		fprintf(stderr, "%s: cannot open image '%s': %s\n", sh_prog, path, r4_strerror(rc));
	return rc;
}

/* A record label's text: Graphviz's record syntax escapes {}|<>" and \. */
static void dot_text(const char *t)
{
	for (; *t; t++) {
		if (strchr("{}|<>\"\\ ", *t))
			putchar('\\');
		putchar(*t);
	}
}

/* One node as a Graphviz record: a header field, then one field per
 * item; a node pointer's field is a port its edge leaves from. */
static int dot_node(void *ctx, const struct r4_dump_node *n)
{
	(void)ctx;
	printf("  n%llu [label=\"{%s %llu\\n%u item%s, %u bytes free", (unsigned long long)n->blk,
	       n->level == 1 ? "leaf" : n->level == 2 ? "twig" : "internal",
	       (unsigned long long)n->blk, n->nitems, n->nitems == 1 ? "" : "s", n->free_space);
	for (unsigned i = 0; i < n->nitems; i++) {
		const struct r4_dump_item *it = &n->items[i];

		printf("|<i%u>", i);
		dot_text(it->key);
		printf(" %s", it->kind);
		if (it->units)
			printf(" (%u)", it->units);
	}
	printf("}\"];\n");
	for (unsigned i = 0; i < n->nitems; i++)
		if (!strcmp(n->items[i].kind, "nodeptr"))
			printf("  n%llu:i%u -> n%llu;\n", (unsigned long long)n->blk, i,
			       (unsigned long long)n->items[i].child);
	return 0;
}

/* r4 dump [--dot] IMAGE: every node of the storage tree, as text or as
 * a Graphviz digraph (nodes, items, keys; dot -Tsvg renders it). */
static int cmd_dump(int argc, char **argv)
{
	bool dot = argc == 3 && !strcmp(argv[1], "--dot");
	struct r4_info in;
	r4_db *db;
	int rc;

	if ((argc != 2 && !dot) || argv[argc - 1][0] == '-')
		return usage(stderr);
	if (open_ro(argv[argc - 1], &db))
		return R4_EXIT_FAIL;
	if (!(rc = r4_info(db, &in))) {
		if (dot)
			printf("digraph r4 {\n  node [shape=record, fontname=monospace, fontsize=10];\n");
		else
			printf("the storage tree of %s: height %u\n", argv[argc - 1], in.height);
		rc = r4_dump_tree(db, dot ? dot_node : sh_print_node, &in.height);
		if (dot)
			printf("}\n");
	}
	if (rc)
		fprintf(stderr, "%s: dump '%s': %s\n", sh_prog, argv[argc - 1], r4_strerror(rc));
	r4_close(db);
	return rc ? R4_EXIT_FAIL : R4_EXIT_OK;
}

/*
 * r4 logdump [-v] IMAGE: the journal as it lies (debugfs.reiser4 -j):
 * header, footer, each committed transaction not played with its wander
 * records.  Read-only with the journal ignored, so nothing is replayed,
 * not even in memory; beside a writer it says so.
 */
static int cmd_logdump(int argc, char **argv)
{
	struct r4_open_opts oo = {.log = say, .ignore_journal = true, .partition = partition};
	bool verbose = argc == 3 && !strcmp(argv[1], "-v");
	const char *image = argv[argc - 1];
	struct r4_buf out = {0};
	struct r4_holder h;
	r4_db *db;
	int rc;

	if ((argc != 2 && !verbose) || image[0] == '-')
		return usage(stderr);
	if ((rc = r4_open(image, &oo, &db))) {
		fprintf(stderr, "%s: cannot open image '%s': %s\n", sh_prog, image, r4_strerror(rc));
		return R4_EXIT_FAIL;
	}
	if (!r4_holder_find(image, &h) && h.held)
		printf("note: %s is %s; its journal can change while it is read, and its "
		       "commits show as not played until they are played in place (the oldest "
		       "once it holds many, all at a sync or the unmount)\n", image, h.what);
	rc = r4_dump_journal(db, verbose, &out);
	r4_close(db);
	if (out.len)
		fwrite(out.p, 1, out.len, stdout);
	r4_buf_free(&out);
	if (rc)
		fprintf(stderr, "%s: logdump '%s': %s\n", sh_prog, image, r4_strerror(rc));
	return rc ? R4_EXIT_FAIL : R4_EXIT_OK;
}

/*
 * r4 frag [--json] IMAGE [PATH]: the layout report of the volume or of
 * the subtree at PATH (docs/repack.md): aligned lines, or one JSON object
 * whose keys are r4.h's struct r4_frag fields.
 */
static int cmd_frag(int argc, char **argv)
{
	static const struct option lopts[] = {{"json", no_argument, NULL, 'j'}, {NULL, 0, NULL, 0}};
	const char *image, *path;
	struct r4_frag fr;
	bool json = false;
	r4_db *db;
	int rc;

	while ((rc = getopt_long(argc, argv, "", lopts, NULL)) != -1) {
		if (rc != 'j')
			return usage(stderr);
		json = true;
	}
	if (argc - optind < 1 || argc - optind > 2)
		return usage(stderr);
	image = argv[optind];
	path = argc - optind > 1 ? argv[optind + 1] : "/";
	if (open_ro(image, &db))
		return R4_EXIT_FAIL;
	rc = r4_frag(db, path, &fr);
	r4_close(db);
	if (rc) {
		fprintf(stderr, "%s: frag '%s': %s\n", sh_prog, path, r4_strerror(rc));
		return R4_EXIT_FAIL;
	}
	if (json) {
		/* the path as sh_json_bytes gives it; the figures with the
		 * decimals the report has */
		json_t *o = json_object(), *v;
		const char *key;

		sh_json_bytes(o, "path", path, strlen(path));
		json_object_foreach(o, key, v) {
			char *t = json_dumps(v, JSON_ENCODE_ANY);

			printf("{\"%s\": %s", key, t ? t : "null");
			free(t);
		}
		json_decref(o);
		printf(", \"data_frag\": %.6f, \"tree_frag\": %.6f, \"leaf_fill\": %.2f, "
		       "\"twig_fill\": %.2f, \"seeks_per_mib\": %.2f, \"seeks\": %llu, "
		       "\"read_blocks\": %llu, \"objects\": %llu, \"files\": %llu, \"dirs\": %llu, "
		       "\"others\": %llu, \"extents\": %llu, \"data_blocks\": %llu, "
		       "\"leaves\": %llu, \"twigs\": %llu, \"free_blocks\": %llu, "
		       "\"free_runs\": %llu, \"free_largest\": %llu, \"free_at_end\": %llu, "
		       "\"blocksize\": %u}\n",
		       fr.data_frag, fr.tree_frag, fr.leaf_fill, fr.twig_fill, fr.seeks_per_mib,
		       (unsigned long long)fr.seeks, (unsigned long long)fr.read_blocks,
		       (unsigned long long)fr.objects, (unsigned long long)fr.files,
		       (unsigned long long)fr.dirs, (unsigned long long)fr.others,
		       (unsigned long long)fr.extents, (unsigned long long)fr.data_blocks,
		       (unsigned long long)fr.leaves, (unsigned long long)fr.twigs,
		       (unsigned long long)fr.free_blocks, (unsigned long long)fr.free_runs,
		       (unsigned long long)fr.free_largest, (unsigned long long)fr.free_at_end,
		       fr.blocksize);
		return R4_EXIT_OK;
	}
	printf("layout of %s%s\n", path, strcmp(path, "/") ? "" : " (the whole volume)");
	printf("data fragmentation:  %.6f   (measurefs.reiser4 -D, over %llu objects)\n",
	       fr.data_frag, (unsigned long long)fr.objects);
	printf("tree fragmentation:  %.6f   (measurefs.reiser4 -T)\n", fr.tree_frag);
	printf("leaf packing:        %.2f%%   (%llu leaves)\n", fr.leaf_fill,
	       (unsigned long long)fr.leaves);
	printf("twig packing:        %.2f%%   (%llu twigs)\n", fr.twig_fill,
	       (unsigned long long)fr.twigs);
	printf("seeks per MiB:       %.2f   (%llu seeks, %llu blocks read in walk order)\n",
	       fr.seeks_per_mib, (unsigned long long)fr.seeks, (unsigned long long)fr.read_blocks);
	printf("objects:             %llu files, %llu directories, %llu other\n",
	       (unsigned long long)fr.files, (unsigned long long)fr.dirs,
	       (unsigned long long)fr.others);
	printf("extents:             %llu   (%llu data blocks)\n", (unsigned long long)fr.extents,
	       (unsigned long long)fr.data_blocks);
	printf("free space:          %llu blocks in %llu runs   (largest %llu, %llu at the end)\n",
	       (unsigned long long)fr.free_blocks, (unsigned long long)fr.free_runs,
	       (unsigned long long)fr.free_largest, (unsigned long long)fr.free_at_end);
	return R4_EXIT_OK;
}

static int cmd_cat(int argc, char **argv)
{
	static char buf[1 << 16];
	r4_db *db = NULL;
	uint64_t off = 0;
	size_t got;
	int rc;

	if (argc != 3)
		return usage(stderr);
	if (open_ro(argv[1], &db))
		return R4_EXIT_FAIL;
	while (!(rc = r4_read(db, argv[2], off, buf, sizeof(buf), &got)) && got) {
		if (fwrite(buf, 1, got, stdout) != got) {
			rc = -EIO;
			break;
		}
		off += got;
	}
	if (rc)
		fprintf(stderr, "%s: cannot read '%s': %s\n", sh_prog, argv[2], r4_strerror(rc));
	r4_close(db);
	return rc ? R4_EXIT_FAIL : R4_EXIT_OK;
}

struct ls_ent {
	char *name;
	size_t len;
	struct r4_stat st;	/* (the long form's) */
};

struct ls_list {
	struct ls_ent *e;
	size_t n, cap;
};

static int ls_collect(void *ctx, const char *name, size_t len, uint64_t ino,
		      const struct r4_stat *st)
{
	struct ls_list *l = ctx;

	(void)ino;
	if (r4_grow(&l->e, &l->cap, l->n + 1, sizeof(*l->e), 64) ||
	    !(l->e[l->n].name = r4_memdup(name, len)))
		return -ENOMEM;
	l->e[l->n].len = len;
	if (st)
		l->e[l->n].st = *st;
	l->n++;
	return 0;
}

static int ent_cmp(const void *a, const void *b)
{
	const struct ls_ent *x = a, *y = b;
	int c = memcmp(x->name, y->name, x->len < y->len ? x->len : y->len);

	return c ? c : (x->len > y->len) - (x->len < y->len);
}

/*
 * One line per entry, sorted by name (bytes): -l (the default) type, mode,
 * nlink, uid, gid, size, name; -1 the name alone, no object read.  The
 * attributes come from the directory walk (r4_readdir_stat), not from a
 * path resolved per name.
 */
static int cmd_ls(int argc, char **argv)
{
	const char *dir;
	struct ls_list l = {0};
	struct r4_dirpos pos = {0};
	bool names = false;
	r4_db *db = NULL;
	int c, rc;

	opterr = 0;
	while ((c = getopt(argc, argv, "1l")) != -1) {
		if (c == '?') {
			fprintf(stderr, "%s: ls: unknown option '-%c'\n", sh_prog, optopt);
			return usage(stderr);
		}
		names = c == '1';	/* the last of -1 and -l wins, as in ls(1) */
	}
	if (argc - optind < 1 || argc - optind > 2)
		return usage(stderr);
	dir = argc - optind > 1 ? argv[optind + 1] : "/";
	if (open_ro(argv[optind], &db))
		return R4_EXIT_FAIL;
	rc = r4_readdir_stat(db, dir, &pos, names ? R4_READDIR_NAMES : 0, ls_collect, &l);
	if (!rc) {
		qsort(l.e, l.n, sizeof(*l.e), ent_cmp);
		for (size_t i = 0; i < l.n; i++) {
			const struct r4_stat *st = &l.e[i].st;

			if (names)
				printf("%s\n", l.e[i].name);
			else
				printf("%c%04o %3u %5u %5u %10llu %s\n", sh_type_char(st->mode),
				       st->mode & 07777, st->nlink, st->uid, st->gid,
				       (unsigned long long)st->size, l.e[i].name);
		}
	}
	if (rc)
		fprintf(stderr, "%s: cannot list '%s': %s\n", sh_prog, dir, r4_strerror(rc));
	for (size_t i = 0; i < l.n; i++)
		free(l.e[i].name);
	free(l.e);
	r4_close(db);
	return rc ? R4_EXIT_FAIL : R4_EXIT_OK;
}

/* r4 import, r4 export: copy.c's */
static int cmd_import(int argc, char **argv)
{
	struct r4_open_opts oo = {.log = say, .partition = partition};
	int rc = cp_import(argc, argv, &oo);

	return rc == -EINVAL ? usage(stderr) : rc;
}

static int cmd_export(int argc, char **argv)
{
	struct r4_open_opts oo = {.log = say, .partition = partition};
	int rc = cp_export(argc, argv, &oo);

	return rc == -EINVAL ? usage(stderr) : rc;
}

/* ---- fsck ---- */

/* fsck's exit codes are e2fsck's (docs/fsck.md), not the R4_EXIT_ ones:
 * scripts that run fsck tools test these bits. */
enum {
	FSCK_CLEAN = 0,
	FSCK_FIXED = 1,		/* problems found, all repaired */
	FSCK_UNFIXED = 4,	/* problems left uncorrected */
	FSCK_OPERROR = 8,	/* could not open, read or write */
	FSCK_USAGE = 16,
};

struct fsck_ui {
	bool fix;
	bool bar;		/* stderr is a terminal */
	bool drawn;		/* a progress line is on the screen */
	enum r4_check_class last;	/* class of the last problem reported */
};

static void fsck_clear_bar(struct fsck_ui *ui)
{
	if (ui->drawn) {
		fputs("\r\033[K", stderr);
		ui->drawn = false;
	}
}

static void fsck_progress(void *ctx, uint64_t done, uint64_t total)
{
	struct fsck_ui *ui = ctx;

	if (!ui->bar || !total)
		return;
	fprintf(stderr, "\rchecking %3u%% (%llu/%llu blocks)", (unsigned)(done * 100 / total),
		(unsigned long long)done, (unsigned long long)total);
	ui->drawn = true;
}

/* One line per problem: WHERE: CLASS: WHAT [fixed]. */
static void fsck_report(void *ctx, const struct r4_problem *p)
{
	struct fsck_ui *ui = ctx;
	char where[4400];
	size_t n = 0;

	where[0] = 0;
	if (p->blk != R4_CHECK_NOBLK && p->nblk > 1)
		n += (size_t)snprintf(where + n, sizeof(where) - n, "blocks %llu-%llu",
				      (unsigned long long)p->blk,
				      (unsigned long long)(p->blk + p->nblk - 1));
	else if (p->blk != R4_CHECK_NOBLK)
		n += (size_t)snprintf(where + n, sizeof(where) - n, "block %llu",
				      (unsigned long long)p->blk);
	if (p->oid && n < sizeof(where))
		n += (size_t)snprintf(where + n, sizeof(where) - n, "%sobject %llu", n ? ", " : "",
				      (unsigned long long)p->oid);
	if (p->path && n < sizeof(where))
		n += (size_t)snprintf(where + n, sizeof(where) - n, "%s'%s'", n ? " " : "", p->path);
	if (p->key && n < sizeof(where))
		n += (size_t)snprintf(where + n, sizeof(where) - n, "%skey %s", n ? ", " : "", p->key);
	fsck_clear_bar(ui);
	ui->last = p->cls;
	printf("%s: %s: %s%s\n", n ? where : "volume", r4_check_class_name(p->cls), p->msg,
	       ui->fix ? (p->fixed ? " [fixed]" : " [not fixed]") : p->fixable ? " [fixable]" : "");
}

/* What r4_check_open logs that fsck's report does not say (its ctx is the report's). */
static void fsck_where(void *ctx, int level, const char *msg)
{
	(void)ctx;
	sh_say_where((void *)sh_prog, level, msg);
}

/*
 * A check of an image in use (e2fsck on a mounted file system): refused
 * (true), unless -n asks for it anyway; then it reads a moving target and
 * says so.  --fix needs the lock, which refuses by itself.
 */
static bool fsck_in_use(const char *image, bool no)
{
	struct r4_holder h;

	if (r4_holder_find(image, &h) || !h.held)
		return false;
	if (!no) {
		fprintf(stderr, "%s: %s: %s; not checked: -n checks it anyway, read-only\n",
			sh_prog, image, h.what);
		return true;
	}
	fprintf(stderr, "%s: %s: %s; checking it anyway, read-only: it can change while it is "
		"read, so problems may show that are not there\n", sh_prog, image, h.what);
	return false;
}

static int cmd_fsck(int argc, char **argv)
{
	static const struct option lopts[] = {
		{"fix", no_argument, NULL, 'f'},
		{"yes", no_argument, NULL, 'y'},
		{"no", no_argument, NULL, 'n'},
		{NULL, 0, NULL, 0},
	};
	struct fsck_ui ui = {.bar = isatty(STDERR_FILENO)};
	struct r4_check_opts co = {.report = fsck_report, .progress = fsck_progress, .ctx = &ui,
				   .partition = partition};
	struct r4_check_result res;
	bool no = false;
	r4_db *db = NULL;
	int c, rc;

	opterr = 0;
	while ((c = getopt_long(argc, argv, "yn", lopts, NULL)) != -1) {
		switch (c) {
		case 'f': case 'y': ui.fix = true; break;
		case 'n': no = true; break;
		default:
			fprintf(stderr, "%s: fsck: unknown option '%s'\n", sh_prog, argv[optind - 1]);
			usage(stderr);
			return FSCK_USAGE;
		}
	}
	if (optind != argc - 1 || (no && ui.fix)) {
		if (no && ui.fix)
			fprintf(stderr, "%s: fsck: -n and --fix exclude each other\n", sh_prog);
		usage(stderr);
		return FSCK_USAGE;
	}
	co.fix = ui.fix;
	if (!ui.fix && fsck_in_use(argv[optind], no))
		return FSCK_OPERROR;
	if ((rc = r4_check_open(argv[optind], &co, fsck_where, &db))) {
		if (rc == -EBUSY) {	/* --fix: a writer holds it */
			sh_say_busy(sh_prog, argv[optind], NULL);
			return FSCK_OPERROR;
		}
		/* no usable super block: nothing could be checked */
		if ((rc != -EUCLEAN && rc != -EBADMSG) || ui.last == R4_CC_SUPER) {
			fprintf(stderr, "%s: cannot open image '%s': %s\n", sh_prog, argv[optind],
				r4_strerror(rc));
			return FSCK_OPERROR;
		}
		printf("%s: 1 problem, 0 fixed, 1 left uncorrected (the volume does not open)\n",
		       argv[optind]);
		return FSCK_UNFIXED;
	}
	rc = r4_check(db, &co, &res);
	fsck_clear_bar(&ui);
	r4_close(db);
	if (rc) {
		fprintf(stderr, "%s: fsck '%s': %s%s\n", sh_prog, argv[optind], r4_strerror(rc),
			ui.fix ? " (no repair was written)" : "");
		return FSCK_OPERROR;
	}
	if (res.semantic_skipped)
		printf("%s: the tree is damaged: bitmap and object checks were skipped\n",
		       argv[optind]);
	if (!res.problems)
		printf("%s: clean, %llu objects, %llu nodes, %llu blocks in use\n", argv[optind],
		       (unsigned long long)res.objects, (unsigned long long)res.nodes,
		       (unsigned long long)res.used_blocks);
	else
		printf("%s: %llu problem%s, %llu fixed, %llu left uncorrected\n", argv[optind],
		       (unsigned long long)res.problems, res.problems == 1 ? "" : "s",
		       (unsigned long long)res.fixed, (unsigned long long)res.unfixed);
	return res.unfixed ? FSCK_UNFIXED : res.problems ? FSCK_FIXED : FSCK_CLEAN;
}

/* ---- repack ---- */

/* One line of the layout (r4 frag's figures) that repack prints before
 * and after its pass. */
static void repack_layout(const char *when, const struct r4_frag *fr)
{
	printf("layout %s data fragmentation %.6f, tree fragmentation %.6f, leaves %.2f%% "
	       "packed, twigs %.2f%% packed, %.2f seeks per MiB\n", when, fr->data_frag,
	       fr->tree_frag, fr->leaf_fill, fr->twig_fill, fr->seeks_per_mib);
}

static volatile sig_atomic_t repack_interrupted;

static void repack_on_signal(int sig)
{
	(void)sig;
	repack_interrupted = 1;
}

struct repack_ui {
	bool dry, verbose;
	bool stop_only;		/* --stop: stop the pass a mount runs, and follow it */
	bool bar;		/* stderr is a terminal */
	bool drawn;		/* a progress line is on the screen */
};

static bool repack_stop(void *ctx)
{
	(void)ctx;
	return repack_interrupted;
}

static void repack_clear_bar(struct repack_ui *ui)
{
	if (ui->drawn) {
		fputs("\r\033[K", stderr);
		ui->drawn = false;
	}
}

/* On a terminal, the progress line: the counts so far. */
static void repack_bar(struct repack_ui *ui, const struct r4_repack_stats *so)
{
	if (ui->bar) {
		fprintf(stderr, "\rrepacking: %llu files, %llu moved (%llu blocks)",
			(unsigned long long)so->files, (unsigned long long)so->moved,
			(unsigned long long)so->blocks_moved);
		ui->drawn = true;
	}
}

static void repack_file(void *ctx, const struct r4_repack_file *f,
			const struct r4_repack_stats *so)
{
	struct repack_ui *ui = ctx;

	if (f->what != R4_REPACK_IN_PLACE && (ui->dry || ui->verbose)) {
		repack_clear_bar(ui);
		if (f->what == R4_REPACK_MOVED)
			printf("%s %s: %llu blocks in %llu run%s, to %llu run%s at block %llu\n",
			       ui->dry ? "would move" : "moved", f->path,
			       (unsigned long long)f->blocks, (unsigned long long)f->runs,
			       f->runs == 1 ? "" : "s", (unsigned long long)f->new_runs,
			       f->new_runs == 1 ? "" : "s", (unsigned long long)f->to);
		else
			printf("skipped %s: %llu blocks in %llu run%s: %s\n", f->path,
			       (unsigned long long)f->blocks, (unsigned long long)f->runs,
			       f->runs == 1 ? "" : "s", f->what == R4_REPACK_BUSY
			       ? "being written (new data not placed yet)"
			       : "no room for it in the free space");
	}
	repack_bar(ui, so);
}

/* The lines of a pass: what it did with files and nodes. */
static void repack_summary(const char *path, const struct repack_ui *ui,
			   const struct r4_repack_stats *st)
{
	printf("%s: %llu file%s with data blocks: %llu %s", path, (unsigned long long)st->files,
	       st->files == 1 ? "" : "s", (unsigned long long)st->moved,
	       ui->dry ? "would move" : "moved");
	if (st->moved)
		printf(" (%llu blocks, %llu runs into %llu)", (unsigned long long)st->blocks_moved,
		       (unsigned long long)st->runs_before, (unsigned long long)st->runs_after);
	printf(", %llu in place, %llu skipped%s\n", (unsigned long long)st->in_place,
	       (unsigned long long)(st->no_room + st->busy), ui->dry ? " (dry run: nothing written)" : "");
	if (st->no_room)
		printf("skipped %llu: no room for them in the free space\n",
		       (unsigned long long)st->no_room);
	if (st->busy)
		printf("skipped %llu: being written (new data not placed yet)\n",
		       (unsigned long long)st->busy);
	if (st->nodes_moved || st->nodes_no_room)
		printf("tree nodes: %llu %s into walk order, %llu left for want of room\n",
		       (unsigned long long)st->nodes_moved, ui->dry ? "would move" : "moved",
		       (unsigned long long)st->nodes_no_room);
}

/* ---- repack on a live mount: through its control file (fuse-bridge/repack.c) ---- */

/* One question to the mount's repacker ("start ...", "status SEQ",
 * "stop"): its answer, or -errno (the mount's, or the repacker's
 * refusal). */
static int repack_ask(const char *mnt, const char *what, char **ans)
{
	char *head = NULL;
	size_t an;
	int n, rc, err;

	if ((n = asprintf(&head, "# r4 repack %s\n", what)) < 0)
		return -ENOMEM;
	rc = sh_mount_ask(mnt, head, (size_t)n, "", 0, ans, &an);
	free(head);
	if (!rc && sscanf(*ans, "error %d", &err) == 1) {
		free(*ans);
		*ans = NULL;
		rc = -err;
	}
	return rc;
}

/* What an answer says: the counts, the layouts, the state; its file lines
 * go to the ui as the engine's callback would.  True while running. */
static bool repack_heard(char *ans, struct repack_ui *ui, struct r4_repack_stats *st,
			 struct r4_frag *fr, bool *have, unsigned long long *seq, char *state,
			 size_t nstate)
{
	for (char *line = strtok(ans, "\n"); line; line = strtok(NULL, "\n")) {
		unsigned long long v[11];
		char what[16];
		int at = 0;

		if (!strncmp(line, "state ", 6)) {
			snprintf(state, nstate, "%s", line + 6);
		} else if (sscanf(line, "stats %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu",
				  &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &v[7], &v[8],
				  &v[9], &v[10]) == 11) {
			*st = (struct r4_repack_stats){
				.files = v[0], .in_place = v[1], .moved = v[2], .no_room = v[3],
				.busy = v[4], .blocks_moved = v[5], .runs_before = v[6],
				.runs_after = v[7], .commits = v[8], .nodes_moved = v[9],
				.nodes_no_room = v[10]};
		} else if (!strncmp(line, "before ", 7) || !strncmp(line, "after ", 6)) {
			int i = line[0] == 'a';
			struct r4_frag *f = &fr[i];

			have[i] = sscanf(strchr(line, ' '), "%lf %lf %lf %lf %lf", &f->data_frag,
					 &f->tree_frag, &f->leaf_fill, &f->twig_fill,
					 &f->seeks_per_mib) == 5;
		} else if (sscanf(line, "next %llu", &v[0]) == 1) {
			*seq = v[0];
		} else if (sscanf(line, "file %llu %15s %llu %llu %llu %llu %n", &v[0], what, &v[1],
				  &v[2], &v[3], &v[4], &at) == 6 && at) {
			struct r4_repack_file f = {.path = line + at, .blocks = v[1], .runs = v[2],
						   .new_runs = v[3], .to = v[4]};

			f.what = !strcmp(what, "moved") ? R4_REPACK_MOVED
				 : !strcmp(what, "busy") ? R4_REPACK_BUSY : R4_REPACK_NO_ROOM;
			repack_file(ui, &f, st);
		}
	}
	repack_bar(ui, st);
	return !strcmp(state, "running");
}

/*
 * One pass on the mount MNT: it runs in the mount's bridge, throttled
 * beside its other calls; this asks how it goes every tenth of a second
 * (no file of the mount stays open between, so it can be unmounted: the
 * pass then stops).  Ctrl-C asks it to stop and waits for that.  *st, and
 * fr[0], fr[1] (have[]): its counts, the layout before and after.  0 when
 * it ended, 2 when it stopped (*why says why), 1 on an error (said).
 */
static int repack_mount(const char *mnt, const char *path, const struct r4_repack_opts *ro,
			uint64_t rate, struct repack_ui *ui, struct r4_repack_stats *st,
			struct r4_frag *fr, bool *have, const char **why)
{
	bool stopping = ui->stop_only, running, seq_known;
	unsigned long long seq = 0;
	char state[64] = "", *ans = NULL, *q = NULL;
	int rc;

	if (ui->stop_only)
		q = strdup("stop");
	else if (asprintf(&q, "start %llu %llu %d %s", (unsigned long long)ro->commit_bytes,
			  (unsigned long long)rate, ui->verbose | ro->compact << 1, path) < 0)
		q = NULL;
	if (!q)
		return 1;
	rc = repack_ask(mnt, q, &ans);
	free(q);
	running = !rc && repack_heard(ans, ui, st, fr, have, &seq, state, sizeof(state));
	seq_known = !rc;	/* (the mount answered once) */
	if (!rc && ui->stop_only && !running) {
		free(ans);
		fprintf(stderr, "%s: repack --stop %s: no pass runs on this mount\n", sh_prog, mnt);
		return 1;
	}
	while (running) {
		free(ans);
		ans = NULL;
		if (repack_interrupted && !stopping) {
			stopping = true;
			if ((rc = repack_ask(mnt, "stop", &ans)))
				break;
			free(ans);
			ans = NULL;
		}
		usleep(100000);
		if (asprintf(&q, "status %llu", seq) < 0) {
			q = NULL;
			rc = -ENOMEM;
		} else {
			rc = repack_ask(mnt, q, &ans);
		}
		free(q);
		running = !rc && repack_heard(ans, ui, st, fr, have, &seq, state, sizeof(state));
	}
	free(ans);
	repack_clear_bar(ui);
	if (rc == -ENOENT || rc == -ENOTCONN || (rc == -EROFS && seq_known)) {
		fprintf(stderr, "%s: repack %s: the mount %s: its pass stopped there, what it "
			"moved is committed; run it again to go on\n", sh_prog, mnt,
			rc == -EROFS ? "turned read-only" : "went away");
		return 1;
	}
	if (rc || !strncmp(state, "failed ", 7)) {
		if (!rc)
			rc = -atoi(state + 7);
		fprintf(stderr, "%s: repack %s '%s': %s%s\n", sh_prog, mnt, path,
			rc == -EBUSY ? "a pass runs on this mount already (r4 repack --stop MNT "
				       "stops it)" : r4_strerror(rc),
			st->commits ? " (what was moved before it stays)" : "");
		return 1;
	}
	if (strncmp(state, "stopped", 7))
		return 0;
	*why = !strcmp(state + 7, " unmount")	  ? "the mount is being unmounted"
	       : !strcmp(state + 7, " read-only") ? "the mount turned read-only"
						  : "interrupted";
	return 2;
}

/* One pass on the open image db: *st, and the layout before (first) and
 * after (not for a dry run); 0 or -errno. */
static int repack_image(r4_db *db, const char *path, const struct r4_repack_opts *ro, bool first,
			struct r4_repack_stats *st, struct r4_frag *fr, bool *have)
{
	int rc;

	if (first && (rc = r4_frag(db, path, &fr[0])))
		return rc;
	have[0] = true;
	if ((rc = r4_repack(db, path, ro, st)) || (rc = r4_sync(db)) || ro->dry_run)
		return rc;
	have[1] = !(rc = r4_frag(db, path, &fr[1]));
	return rc;
}

/*
 * r4 repack [-n | --dry-run] [-v] [--commit SIZE] [--rate SIZE] IMAGE|MNT [PATH]:
 * one pass of the repacker over PATH's subtree (docs/repack.md), on an
 * image or in a live mount's bridge.  A summary line, one line per kind of
 * skip, the layout before and after (r4 frag's figures), and with -n (or
 * -v) a line per file moved or skipped.  Ctrl-C stops it after the file
 * being moved; what was moved stays, and a second run goes on.
 */
static int cmd_repack(int argc, char **argv)
{
	static const struct option lopts[] = {
		{"dry-run", no_argument, NULL, 'n'}, {"verbose", no_argument, NULL, 'v'},
		{"commit", required_argument, NULL, 'c'}, {"rate", required_argument, NULL, 'r'},
		{"compact", no_argument, NULL, 'C'}, {"stop", no_argument, NULL, 'S'},
		{NULL, 0, NULL, 0},
	};
	enum { COMPACT_PASSES = 8 };
	struct repack_ui ui = {.bar = isatty(STDERR_FILENO)};
	struct r4_repack_opts ro = {.stop = repack_stop, .file = repack_file, .ctx = &ui};
	struct r4_open_opts oo = {.log = say, .partition = partition};
	struct r4_repack_stats st;
	struct r4_frag fr[2];
	bool have[2] = {false, false}, live;
	struct sigaction sa = {.sa_handler = repack_on_signal};
	struct r4_holder h;
	const char *image, *path, *why = "interrupted";
	uint64_t rate = 0, *size;
	unsigned passes;
	r4_db *db = NULL;
	int c, rc;

	opterr = 0;
	while ((c = getopt_long(argc, argv, "nv", lopts, NULL)) != -1) {
		switch (c) {
		case 'n': ui.dry = true; break;
		case 'v': ui.verbose = true; break;
		case 'C': ro.compact = true; break;
		case 'S': ui.stop_only = true; break;
		case 'c':
		case 'r':
			size = c == 'c' ? &ro.commit_bytes : &rate;
			if (r4_parse_size(optarg, size) || !*size) {
				fprintf(stderr, "%s: repack: bad size '%s'\n", sh_prog, optarg);
				return R4_EXIT_USAGE;
			}
			break;
		default:
			fprintf(stderr, "%s: repack: unknown option '%s'\n", sh_prog, argv[optind - 1]);
			return usage(stderr);
		}
	}
	if (argc - optind < 1 || argc - optind > 2)
		return usage(stderr);
	image = argv[optind];
	path = argc - optind == 2 ? argv[optind + 1] : "/";
	if (path[0] != '/') {
		fprintf(stderr, "%s: repack: '%s': a path in the volume starts with '/'\n", sh_prog,
			path);
		return R4_EXIT_USAGE;
	}
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	if ((live = sh_is_mount(image)) && ui.dry) {
		fprintf(stderr, "%s: repack -n: %s is a mount; a dry run reads the image: "
			"r4 repack -n IMAGE, beside the mount\n", sh_prog, image);
		return R4_EXIT_USAGE;
	}
	if (ui.stop_only && (!live || argc - optind > 1)) {
		fprintf(stderr, "%s: repack --stop: give the mount point alone\n", sh_prog);
		return R4_EXIT_USAGE;
	}
	if (rate && !live) {
		fprintf(stderr, "%s: repack: --rate is for a live mount (an image is repacked at "
			"full speed)\n", sh_prog);
		return R4_EXIT_USAGE;
	}
	ro.dry_run = ui.dry;
	oo.rw = !ui.dry;
	if (!live && (rc = r4_open(image, &oo, &db))) {
		if (rc == -EBUSY)
			sh_say_busy(sh_prog, image, "repack its mount point to repack it live");
		else
			fprintf(stderr, "%s: cannot open image '%s': %s\n", sh_prog, image,
				r4_strerror(rc));
		return R4_EXIT_FAIL;
	}
	/* a dry run reads beside a writer, as r4 frag does: it says so */
	if (ui.dry && !r4_holder_find(image, &h) && h.held)
		printf("note: %s is %s; this plans against its last commit\n", image, h.what);
	/* --compact: passes until one moves no file (at most COMPACT_PASSES) */
	for (passes = 1;; passes++) {
		memset(&st, 0, sizeof(st));
		if (live) {
			struct r4_frag pf[2];
			bool ph[2] = {false, false};

			if ((rc = repack_mount(image, path, &ro, rate, &ui, &st, pf, ph, &why)) == 1)
				return R4_EXIT_FAIL;
			if (passes == 1 && (have[0] = ph[0]))
				fr[0] = pf[0];
			if ((have[1] = ph[1]))
				fr[1] = pf[1];
		} else {
			rc = repack_image(db, path, &ro, passes == 1, &st, fr, have);
			repack_clear_bar(&ui);
			if (rc) {
				r4_close(db);
				fprintf(stderr, "%s: repack '%s': %s%s\n", sh_prog, path,
					r4_strerror(rc), st.commits || passes > 1
					? " (what was moved before it stays)" : " (nothing was changed)");
				return R4_EXIT_FAIL;
			}
			rc = st.stopped ? 2 : 0;
		}
		repack_summary(path, &ui, &st);
		if (rc || !ro.compact || ui.dry || !st.moved || passes == COMPACT_PASSES)
			break;
	}
	if (db)
		r4_close(db);
	if (have[0])
		repack_layout(ui.dry ? "now:   " : "before:", &fr[0]);
	if (have[1])
		repack_layout("after: ", &fr[1]);
	if (ro.compact && !rc)
		printf("compact: %u pass%s; %s\n", passes, passes == 1 ? "" : "es",
		       st.moved ? "the last still moved files: run it again to go on"
				: "the last moved nothing");
	if (rc == 2) {
		printf("stopped: %s; what was moved is committed, run it again to go on\n", why);
		return R4_EXIT_FAIL;
	}
	return R4_EXIT_OK;
}

/*
 * r4 parse -c CMD | -f SCRIPT ('-' for stdin): the AST dump, one line per
 * statement; r4 explain [--script] ...: the plan (--script: one unit per
 * statement, as the batch runner runs a script).  Errors: the
 * diagnostics and exit 3.
 */
/* The text of -c CMD or -f SCRIPT ('-': stdin), and its SOURCE name. */
static int read_source(const char *flag, const char *arg, char **text, size_t *len,
		       const char **name)
{
	if (!strcmp(flag, "-c")) {
		*name = "<command>";
		if (!(*text = strdup(arg)))
			return -1;
		*len = strlen(*text);
		return 0;
	}
	int rc = sh_read_file(arg, true, text, len);

	*name = strcmp(arg, "-") ? arg : "<stdin>";
	if (rc)
		fprintf(stderr, "%s: cannot read '%s': %s\n", sh_prog, arg, strerror(-rc));
	return rc ? -1 : 0;
}

static int cmd_parse(int argc, char **argv, bool explain)
{
	struct r4_compile_opts co = {0};
	struct r4_plan *plan = NULL;
	const char *name;
	char *text = NULL;
	size_t len = 0;
	r4_diags *d;
	r4_ast *ast = NULL;
	int rc;

	if (explain && argc == 4 && !strcmp(argv[1], "--script")) {
		co.per_statement = true;
		argc--;
		argv++;
	}
	if (argc != 3 || (strcmp(argv[1], "-c") && strcmp(argv[1], "-f")))
		return usage(stderr);
	if (read_source(argv[1], argv[2], &text, &len, &name))
		return R4_EXIT_FAIL;
	if (!(d = r4_diag_new(name, text, len))) {
		free(text);
		return R4_EXIT_FAIL;
	}
	rc = r4_parse(text, len, d, &ast);
	if (!rc && explain)
		rc = r4_compile(ast, &co, d, &plan);
	if (!rc && explain)
		r4_plan_explain(plan, text, len, stdout);
	else if (!rc)
		r4_ast_dump(ast, stdout);
	else if (rc == -EINVAL)
		r4_diag_print(d, stderr);
	else
		fprintf(stderr, "%s: parse: %s\n", sh_prog, r4_strerror(rc));
	r4_plan_free(plan);
	r4_ast_free(ast);
	r4_diag_free(d);
	free(text);
	return !rc ? R4_EXIT_OK : rc == -EINVAL ? R4_EXIT_SYNTAX : R4_EXIT_FAIL;
}

/* UID[:GID[,GID...]] */
static int parse_ident(char *s, struct r4_ident *w, uint32_t *groups, size_t max)
{
	char *end;

	w->uid = w->gid = (uint32_t)strtoul(s, &end, 10);
	if (end == s)
		return -1;
	if (*end == ':') {
		s = end + 1;
		w->gid = (uint32_t)strtoul(s, &end, 10);
		if (end == s)
			return -1;
		while (*end == ',' && w->ngroups < max) {
			s = end + 1;
			groups[w->ngroups++] = (uint32_t)strtoul(s, &end, 10);
			if (end == s)
				return -1;
		}
	}
	w->groups = groups;
	return *end ? -1 : 0;
}

/*
 * r4 run [--script] [--as UID[:GID[,G...]]] [--cwd DIR] (-c CMD | -f SCRIPT)
 * IMAGE: run an R4L command (or a script, one unit per statement) against
 * IMAGE and print each statement's value (an object: its contents) on
 * its own line.  Diagnostics go to stderr; exit 0, 1 (run time), 3.
 */
static int cmd_run(int argc, char **argv)
{
	static const struct option lo[] = {
		{"script", no_argument, NULL, 's'}, {"as", required_argument, NULL, 'a'},
		{"cwd", required_argument, NULL, 'd'}, {"command", required_argument, NULL, 'c'},
		{"file", required_argument, NULL, 'f'}, {NULL, 0, NULL, 0},
	};
	struct r4_run_opts ro = {.exec = {.who = {.umask = 022}, .read_objects = true}};
	struct r4_open_opts oo = {.rw = true, .log = say, .partition = partition};
	uint32_t groups[64];
	const char *flag = NULL, *arg = NULL;
	struct r4_run *r = NULL;
	char *text = NULL;
	size_t len = 0;
	r4_db *db;
	int c, rc;

	optind = 1;
	while ((c = getopt_long(argc, argv, "c:f:", lo, NULL)) != -1) {
		switch (c) {
		case 's': ro.per_statement = true; break;
		case 'a':
			if (parse_ident(optarg, &ro.exec.who, groups, 64))
				return usage(stderr);
			break;
		case 'd': ro.exec.cwd = optarg; break;
		case 'c': flag = "-c"; arg = optarg; break;
		case 'f': flag = "-f"; arg = optarg; break;
		default: return usage(stderr);
		}
	}
	if (!flag || optind != argc - 1)
		return usage(stderr);
	if (read_source(flag, arg, &text, &len, &ro.name))
		return R4_EXIT_FAIL;
	if ((rc = r4_open(argv[optind], &oo, &db))) {
		if (rc == -EBUSY)
			sh_say_busy(sh_prog, argv[optind], NULL);
		else
			fprintf(stderr, "%s: %s: %s\n", sh_prog, argv[optind], r4_strerror(rc));
		free(text);
		return R4_EXIT_FAIL;
	}
	rc = r4_run(db, text, len, &ro, &r);
	if (r) {
		for (size_t i = 0; i < r->nvalues; i++) {
			const struct r4_run_value *v = &r->values[i];

			if (v->err == -EISDIR && v->path)
				printf("%s\n", v->path);	/* a directory */
			else if (v->err && v->path)
				fprintf(stderr, "%s: cannot read '%s': %s\n", sh_prog, v->path,
					sh_unread(v));
			else if (v->size)
				fwrite(v->bytes, 1, v->size, stdout);
			if (!v->err && v->size && v->bytes[v->size - 1] != '\n')
				putchar('\n');
		}
		fflush(stdout);
		r4_diag_print(r->diags, stderr);
	} else {
		fprintf(stderr, "%s: run: %s\n", sh_prog, r4_strerror(rc));
	}
	c = !r ? R4_EXIT_FAIL : r->stage == R4_RUN_SYNTAX || r->stage == R4_RUN_CHECK
	    ? R4_EXIT_SYNTAX : rc ? R4_EXIT_FAIL : R4_EXIT_OK;
	r4_run_free(r);
	if ((rc = r4_sync(db)) && c == R4_EXIT_OK) {
		fprintf(stderr, "%s: %s: %s\n", sh_prog, argv[optind], r4_strerror(rc));
		c = R4_EXIT_FAIL;
	}
	r4_close(db);
	free(text);
	return c;
}

static int cmd_parse_ast(int argc, char **argv)
{
	return cmd_parse(argc, argv, false);
}

static int cmd_explain(int argc, char **argv)
{
	return cmd_parse(argc, argv, true);
}

/* r4's subcommands. */
static const struct {
	const char *name;
	int (*fn)(int argc, char **argv);
} subcommands[] = {
	{"mkfs", cmd_mkfs},	{"info", cmd_info},	  {"ls", cmd_ls},	  {"cat", cmd_cat},
	{"import", cmd_import}, {"export", cmd_export}, {"fsck", cmd_fsck}, {"repack", cmd_repack},
	{"dump", cmd_dump},	{"frag", cmd_frag},	  {"plugins", cmd_plugins},
	{"parse", cmd_parse_ast}, {"explain", cmd_explain}, {"run", cmd_run},
	{"logdump", cmd_logdump},
};

/*
 * SUB -h / --help: its lines of the usage (with their continuations, and
 * the notes on SIZE and TYPE=PLUGIN when they use them), on stdout.
 */
static int usage_of(const char *sub)
{
	char *text = NULL, *line, *save = NULL;
	size_t n = 0, len = strlen(sub);
	FILE *f = open_memstream(&text, &n);
	bool in = false, size = false, plugin = false, note = false;

	if (!f)
		return R4_EXIT_FAIL;
	usage(f);
	fclose(f);
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		const char *p = line + (strncmp(line, "usage: ", 7) ? 0 : 7);
		bool head;

		while (*p == ' ')
			p++;
		if ((head = !strncmp(p, "r4 ", 3))) {	/* a subcommand's first line */
			in = !strncmp(p + 3, sub, len) && (p[3 + len] == ' ' || !p[3 + len]);
		} else if (line[0] != ' ') {		/* a note */
			in = false;
			note = (!strncmp(line, "SIZE", 4) && size) ||
			       (!strncmp(line, "TYPE=PLUGIN", 11) && plugin);
		}
		if (in) {
			size = size || strstr(line, "SIZE");
			plugin = plugin || strstr(line, "TYPE=PLUGIN");
		}
		if (in || (note && !head))
			printf("%s%s\n", head ? "usage: " : "", head ? p : line);
	}
	free(text);
	return R4_EXIT_OK;
}

/*
 * --partition N or --partition=N anywhere among a subcommand's arguments
 * (before a "--"; for r4 run, not the text of its -c or -f): the volume is
 * in partition N of the image, for every subcommand; taken out of argv.
 */
static int take_partition(int *argc, char **argv)
{
	bool script = !strcmp(argv[1], "run");

	for (int a = 2; a < *argc && strcmp(argv[a], "--"); a++) {
		const char *v = NULL;
		int n = 1;

		if (script && (!strcmp(argv[a - 1], "-c") || !strcmp(argv[a - 1], "-f")))
			continue;
		if (!strncmp(argv[a], "--partition=", 12)) {
			v = argv[a] + 12;
		} else if (!strcmp(argv[a], "--partition")) {
			n = 2;
			v = a + 1 < *argc ? argv[a + 1] : NULL;
		} else {
			continue;
		}
		if (sh_partition_number(sh_prog, v, &partition))
			return -1;
		memmove(&argv[a], &argv[a + n], (size_t)(*argc - a - n + 1) * sizeof(*argv));
		*argc -= n;
		a--;
	}
	return 0;
}

int main(int argc, char **argv)
{
	const char *base = strrchr(argv[0], '/');

	/* one binary, three names: as r4sh it is the shell, as r4fuse the bridge */
	if (!strcmp(base ? base + 1 : argv[0], "r4sh")) {
		/* a script runs part by part, each freeing what it took: with
		 * glibc's default the heap's top went back to the kernel and came
		 * again, zeroed, ten times a part (a tenth of a long script's time) */
		mallopt(M_TRIM_THRESHOLD, 64 << 20);
		mallopt(M_TOP_PAD, 16 << 20);
		return sh_main(argc, argv);
	}
	if (!strcmp(base ? base + 1 : argv[0], "r4fuse") ||
	    !strcmp(base ? base + 1 : argv[0], "mount.fuse.r4"))	/* mount -t fuse.r4 */
		return fuse_bridge_main(argc, argv);
	if (argc < 2)
		return usage(stderr);
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help") || !strcmp(argv[1], "help")) {
		usage(stdout);
		return R4_EXIT_OK;
	}
	if (!strcmp(argv[1], "--version")) {
		printf("r4 %s\n", R4_VERSION);
		return R4_EXIT_OK;
	}
	for (size_t i = 0; i < sizeof(subcommands) / sizeof(subcommands[0]); i++) {
		if (strcmp(argv[1], subcommands[i].name))
			continue;
		if (take_partition(&argc, argv))
			return R4_EXIT_USAGE;
		for (int a = 2; a < argc && strcmp(argv[a], "--"); a++)
			if (!strcmp(argv[a], "--help") ||
			    (!strcmp(argv[a], "-h") && strcmp(argv[a - 1], "-c") &&
			     strcmp(argv[a - 1], "-f")))
				return usage_of(argv[1]);
		return subcommands[i].fn(argc - 1, argv + 1);
	}
	fprintf(stderr, "%s: unknown command '%s'\n", sh_prog, argv[1]);
	return usage(stderr);
}
