/*
 * cmds.c - r4sh's verbs, as data: one table of names, argument counts,
 * usage and help (`.help` prints from it), and a handler each.  Verbs that
 * change the image compile to R4L and run through r4_run, so they obey the
 * acting identity and join an open transaction; verbs that only look
 * (ls -l, tree) may read the engine directly.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sh.h"

#define CMD(n) static int cmd_##n(struct sh *sh, int argc, char **argv)
CMD(ls); CMD(cat); CMD(cd); CMD(pwd); CMD(mkdir); CMD(rm); CMD(mv); CMD(cp); CMD(ln);
CMD(stat); CMD(tree); CMD(write); CMD(begin); CMD(commit); CMD(rollback); CMD(explain);
CMD(help); CMD(as); CMD(info); CMD(fsck); CMD(timer); CMD(echo); CMD(mode); CMD(read);
CMD(open); CMD(quit); CMD(dtree);

/* Sorted by name (sh_find bisects).  Anything else is R4L. */
const struct sh_cmd sh_cmds[] = {
	{".as", 1, 1, 0, cmd_as, ".as USER|UID[:GID[,GID...]]",
	 "act as this identity: permissions are checked for it (root: .as 0)"},
	{".echo", 1, 1, 0, cmd_echo, ".echo on|off", "print each entry before running it"},
	{".fsck", 0, 0, SH_IMAGE | SH_LOCAL, cmd_fsck, ".fsck", "check the image (r4's checker, read-only)"},
	{".help", 0, 1, 0, cmd_help, ".help [VERB]", "this list, or one verb's help"},
	{".info", 0, 0, SH_IMAGE | SH_LOCAL, cmd_info, ".info", "the image: blocks, free, files, plugins"},
	{".mode", 1, 1, 0, cmd_mode, ".mode human|json",
	 "how values print: as they are, or one JSON object per statement"},
	{".open", 1, 1, 0, cmd_open, ".open IMAGE", "close this image, open another"},
	{".quit", 0, 0, 0, cmd_quit, ".quit", "leave (an open transaction is rolled back)"},
	{".read", 1, 1, 0, cmd_read, ".read SCRIPT", "run a script here, as -f would"},
	{".timer", 1, 1, 0, cmd_timer, ".timer on|off", "print how long each entry took"},
	{".tree", 0, 0, SH_IMAGE | SH_LOCAL, cmd_dtree, ".tree",
	 "the storage tree: its nodes by level, and the items in them with their keys"},
	{"begin", 0, 0, SH_IMAGE | SH_LOCAL, cmd_begin, "begin",
	 "start a transaction that spans the next entries"},
	{"cat", 1, -1, SH_IMAGE, cmd_cat, "cat PATH...", "print files"},
	{"cd", 0, 1, SH_IMAGE, cmd_cd, "cd [PATH]", "change the current directory (default /)"},
	{"commit", 0, 0, SH_IMAGE | SH_LOCAL, cmd_commit, "commit", "make the open transaction durable"},
	{"cp", 2, 2, SH_IMAGE, cmd_cp, "cp FROM TO", "copy a file's contents (TO may be a directory)"},
	{"explain", 1, 1, SH_RAW, cmd_explain, "explain CMD",
	 "print the transaction plan of an R4L command, without running it"},
	{"ln", 2, 3, SH_IMAGE, cmd_ln, "ln [-s] TARGET NAME", "a hard link, or with -s a symlink"},
	{"ls", 0, 3, SH_IMAGE, cmd_ls, "ls [-l] [-a] [PATH]",
	 "list a directory; -a also shows '.', '..' and the pseudo names"},
	{"mkdir", 1, -1, SH_IMAGE, cmd_mkdir, "mkdir [-p] PATH...",
	 "make directories; -p: and their missing parents"},
	{"mv", 2, 2, SH_IMAGE, cmd_mv, "mv FROM TO", "rename or move (TO may be a directory)"},
	{"pwd", 0, 0, 0, cmd_pwd, "pwd", "print the current directory"},
	{"rm", 1, -1, SH_IMAGE, cmd_rm, "rm [-r] PATH...",
	 "remove entries; -r: directories with everything in them"},
	{"rollback", 0, 0, SH_IMAGE | SH_LOCAL, cmd_rollback, "rollback",
	 "undo everything since begin: the image is as it was"},
	{"stat", 1, 1, SH_IMAGE, cmd_stat, "stat PATH", "every pseudo attribute of an object"},
	{"tree", 0, 1, SH_IMAGE, cmd_tree, "tree [PATH]", "the namespace under PATH"},
	{"write", 1, 1, SH_IMAGE, cmd_write, "write PATH",
	 "replace a file with the lines that follow, up to a line holding only '.'"},
	{NULL, 0, 0, 0, NULL, NULL, NULL},
};

const struct sh_cmd *sh_find(const char *name, size_t len)
{
	size_t lo = 0, hi = sizeof(sh_cmds) / sizeof(sh_cmds[0]) - 1;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		int c = strncmp(sh_cmds[mid].name, name, len);

		if (!c && sh_cmds[mid].name[len])
			c = 1;
		if (!c)
			return &sh_cmds[mid];
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

static bool space(char c)
{
	return c == ' ' || c == '\t' || c == '\r';
}

const struct sh_cmd *sh_verb_of(const char *line, size_t len)
{
	size_t i = 0, w;
	const struct sh_cmd *c;

	while (i < len && space(line[i]))
		i++;
	for (w = i; w < len && !space(line[w]); w++)
		;
	if (w == i || !(c = sh_find(line + i, w - i)))
		return NULL;
	/* `ls <- "x"` writes the file ls: an operator after the word makes it R4L */
	while (w < len && space(line[w]))
		w++;
	if (w < len && (line[w] == '<' || (line[w] == '-' && w + 1 < len && line[w + 1] == '>')))
		return NULL;
	return c;
}

/* ---- helpers ---- */

/* Split a verb line into words ('…' and "…" group, no escapes). */
static int split(const char *line, size_t len, char **argv, int max)
{
	int n = 0;
	size_t i = 0;

	while (i < len && n < max) {
		char q = 0, *w = malloc(len + 1);
		size_t o = 0;

		while (i < len && space(line[i]))
			i++;
		if (i >= len) {
			free(w);
			break;
		}
		while (i < len && (q || !space(line[i]))) {
			if (!q && (line[i] == '\'' || line[i] == '"'))
				q = line[i];
			else if (q && line[i] == q)
				q = 0;
			else
				w[o++] = line[i];
			i++;
		}
		w[o] = 0;
		argv[n++] = w;
	}
	return n;
}

/* An R4L command from a format; runs quietly (values to *out). */
static int r4l(struct sh *sh, struct r4_run **out, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int r4l(struct sh *sh, struct r4_run **out, const char *fmt, ...)
{
	struct r4_run *r = NULL;
	char *s = NULL;
	va_list ap;
	int rc, n;

	va_start(ap, fmt);
	n = vasprintf(&s, fmt, ap);
	va_end(ap);
	if (n < 0)
		return -ENOMEM;
	rc = sh_r4l_quiet(sh, s, (size_t)n, &r);
	free(s);
	if (out)
		*out = r;
	else
		r4_run_free(r);
	return rc;
}

/* The directory part and the last name of a path ("a/b" -> "a", "b"). */
static void dir_name(const char *path, char **dir, char **name)
{
	const char *s;
	size_t n = strlen(path);

	while (n > 1 && path[n - 1] == '/')
		n--;
	s = memrchr(path, '/', n);
	if (!s) {
		*dir = strdup(".");
		*name = strndup(path, n);
	} else {
		*dir = s == path ? strdup("/") : strndup(path, (size_t)(s - path));
		*name = strndup(s + 1, n - (size_t)(s - path) - 1);
	}
}

/* The directory of path as an R4L path, and its last name as a literal
 * (both malloc'd): what ..new, ..link and ..unlink take. */
static void parent_and_name(const char *path, char **qdir, char **lit)
{
	char *d, *nm;

	dir_name(path, &d, &nm);
	*qdir = r4_path_quote(d);
	*lit = sh_literal(nm, strlen(nm));
	free(d);
	free(nm);
}

/* A path as absolute and lexically clean ("." and ".." folded). */
static char *absolute(struct sh *sh, const char *path)
{
	size_t cap = strlen(sh->cwd) + strlen(path) + 3;
	char *out = malloc(cap), *in = malloc(cap);
	size_t o = 0;

	snprintf(in, cap, "%s/%s", path[0] == '/' ? "" : sh->cwd, path);
	for (char *tok = strtok(in, "/"); tok; tok = strtok(NULL, "/")) {
		if (!strcmp(tok, "."))
			continue;
		if (!strcmp(tok, "..")) {
			while (o > 0 && out[o - 1] != '/')
				o--;
			if (o > 0)
				o--;
			continue;
		}
		out[o++] = '/';
		memcpy(out + o, tok, strlen(tok));
		o += strlen(tok);
	}
	if (!o)
		out[o++] = '/';
	out[o] = 0;
	free(in);
	return out;
}

/* The value of a one-statement run, as a string ("" if none). */
static const char *value0(const struct r4_run *r, size_t i)
{
	return r && i < r->nvalues && !r->values[i].err ? r->values[i].bytes : "";
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* ---- the verbs ---- */

/* A ..type that names entries: a directory, an aggregate or its record. */
static bool dir_type(const char *type)
{
	return !strcmp(type, "directory") || !strcmp(type, "aggregate") || !strcmp(type, "record");
}

static void ls_long(struct sh *sh, const char *dir, const char *name)
{
	char *p, *a;
	struct r4_stat st;

	if (asprintf(&p, "%s/%s", dir, name) < 0)
		return;
	a = absolute(sh, p);
	if (!sh_stat(sh, a, &st)) {
		printf("%c%04o %3u %5u %5u %10llu %s", sh_type_char(st.mode), st.mode & 07777,
		       st.nlink, st.uid, st.gid, (unsigned long long)st.size, name);
		if (S_ISLNK(st.mode)) {
			char t[4096];
			size_t n;

			if (!sh_readlink(sh, a, t, sizeof(t), &n))
				printf(" -> %.*s", (int)(n < sizeof(t) ? n : sizeof(t)), t);
		}
		putchar('\n');
	} else {
		printf("?????? %s\n", name);	/* a pseudo name */
	}
	free(a);
	free(p);
}

CMD(ls)
{
	bool lng = false, all = false;
	const char *path = ".";
	struct r4_run *r = NULL;
	char *q, **names = NULL;
	size_t n = 0;
	int rc;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-l"))
			lng = true;
		else if (!strcmp(argv[i], "-a"))
			all = true;
		else if (!strcmp(argv[i], "-la") || !strcmp(argv[i], "-al"))
			lng = all = true;
		else
			path = argv[i];
	}
	q = r4_path_quote(path);
	rc = r4l(sh, &r, "%s/..type; %s/..list", q, q);
	free(q);
	if (rc) {
		r4_run_free(r);
		return rc;
	}
	if (!dir_type(value0(r, 0))) {
		char *d, *nm;

		dir_name(path, &d, &nm);
		if (lng)
			ls_long(sh, d, nm);
		else
			printf("%s\n", path);
		free(d);
		free(nm);
		r4_run_free(r);
		return 0;
	}
	/* the entries sorted, then (with -a) the pseudo names in ..list order */
	for (char *s = (char *)value0(r, 1), *e; *s; s = e + 1) {
		if (!(e = strchr(s, '\n')))
			break;
		*e = 0;
		if (s[0] == '.' && !all)
			continue;
		names = realloc(names, (n + 1) * sizeof(*names));
		names[n++] = s;
	}
	size_t entries = 0;

	while (entries < n && !(names[entries][0] == '.' && names[entries][1] == '.' &&
				names[entries][2]))
		entries++;
	if (entries)
		qsort(names, entries, sizeof(*names), cmp_str);
	for (size_t i = 0; i < n; i++) {
		if (lng)
			ls_long(sh, path, names[i]);
		else
			printf("%s\n", names[i]);
	}
	free(names);
	r4_run_free(r);
	return 0;
}

CMD(cat)
{
	int rc = 0;

	for (int i = 1; i < argc; i++) {
		char *q = r4_path_quote(argv[i]);
		struct r4_run *r = NULL;

		if (!(rc = r4l(sh, &r, "%s", q)) && r->nvalues) {
			const struct r4_run_value *v = &r->values[0];

			if (v->err) {
				fprintf(stderr, "r4sh: cat: %s: %s\n", argv[i], sh_unread(v));
				rc = v->err;
			} else {
				fwrite(v->bytes, 1, v->size, stdout);
				/* a last line without LF still ends the output line */
				if (v->size && v->bytes[v->size - 1] != '\n')
					putchar('\n');
			}
		}
		r4_run_free(r);
		free(q);
		if (rc)
			break;
	}
	return rc;
}

CMD(cd)
{
	const char *path = argc > 1 ? argv[1] : "/";
	char *q = r4_path_quote(path);
	struct r4_run *r = NULL;
	int rc = r4l(sh, &r, "%s/..type", q);

	free(q);
	if (!rc && !dir_type(value0(r, 0))) {
		fprintf(stderr, "r4sh: cd: %s: %s\n", path, r4_strerror(-ENOTDIR));
		rc = -ENOTDIR;
	} else if (!rc) {
		/* the value's path is where the walk ended: symlinks followed */
		const char *p = r->values[0].path;
		size_t n = strlen(p) - strlen("/..type");

		if (n == 0)
			n = 1;
		snprintf(sh->cwd, sizeof(sh->cwd), "%.*s", (int)n, p);
	}
	r4_run_free(r);
	return rc;
}

CMD(pwd)
{
	(void)argc;
	(void)argv;
	printf("%s\n", sh->cwd);
	return 0;
}

CMD(mkdir)
{
	bool parents = argc > 1 && !strcmp(argv[1], "-p");
	char *cmd = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&cmd, &len);
	int rc;

	for (int i = parents ? 2 : 1; i < argc; i++) {
		char *a = parents ? absolute(sh, argv[i]) : strdup(argv[i]);

		if (parents) {
			/* each missing component, in order */
			for (char *s = a + 1; ; s++) {
				if (*s && *s != '/')
					continue;
				char c = *s, *qd, *lit, *qp;

				*s = 0;
				parent_and_name(a, &qd, &lit);
				qp = r4_path_quote(a);
				fprintf(f, "if not exist %s then %s/..new/(name <- %s, type <- directory);\n",
					qp, qd, lit);
				free(lit);
				free(qd);
				free(qp);
				*s = c;
				if (!c)
					break;
			}
		} else {
			char *qd, *lit;

			parent_and_name(a, &qd, &lit);
			fprintf(f, "%s/..new/(name <- %s, type <- directory);\n", qd, lit);
			free(lit);
			free(qd);
		}
		free(a);
	}
	fclose(f);
	rc = len ? r4l(sh, NULL, "%s", cmd) : 0;
	free(cmd);
	return rc;
}

struct collect {
	char **v;
	size_t n;
};

static int collect_fn(void *ctx, const char *name, size_t len, uint64_t ino, uint32_t type)
{
	struct collect *c = ctx;

	(void)ino;
	if ((len == 1 && name[0] == '.') || (len == 2 && name[0] == '.' && name[1] == '.'))
		return 0;
	c->v = realloc(c->v, (c->n + 1) * sizeof(*c->v));
	/* the type rides in front of the name: 'd' for directories */
	c->v[c->n] = malloc(len + 2);
	c->v[c->n][0] = type == S_IFDIR ? 'd' : '-';
	memcpy(c->v[c->n] + 1, name, len);
	c->v[c->n][len + 1] = 0;
	c->n++;
	return 0;
}

/* Unlinks for everything under absolute path a, deepest first. */
static int rm_tree(struct sh *sh, const char *a, FILE *f)
{
	struct collect c = {0};
	char *qa = r4_path_quote(a);
	int rc = sh_readdir(sh, a, collect_fn, &c);

	for (size_t i = 0; i < c.n; i++) {
		if (!rc && c.v[i][0] == 'd') {
			char *sub;

			if (asprintf(&sub, "%s/%s", strcmp(a, "/") ? a : "", c.v[i] + 1) >= 0) {
				rc = rm_tree(sh, sub, f);
				free(sub);
			}
		}
		if (!rc) {
			char *lit = sh_literal(c.v[i] + 1, strlen(c.v[i] + 1));

			fprintf(f, "%s/..unlink <- %s;\n", qa, lit);
			free(lit);
		}
		free(c.v[i]);
	}
	free(c.v);
	free(qa);
	return rc;
}

CMD(rm)
{
	bool rec = argc > 1 && !strcmp(argv[1], "-r");
	char *cmd = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&cmd, &len);
	int rc = 0;

	for (int i = rec ? 2 : 1; i < argc && !rc; i++) {
		char *qd, *lit, *a = absolute(sh, argv[i]);
		struct r4_stat st;

		if (rec && !sh_stat(sh, a, &st) && S_ISDIR(st.mode))
			rc = rm_tree(sh, a, f);
		parent_and_name(argv[i], &qd, &lit);
		fprintf(f, "%s/..unlink <- %s;\n", qd, lit);
		free(lit);
		free(qd);
		free(a);
	}
	fclose(f);
	if (rc)
		fprintf(stderr, "r4sh: rm: %s\n", r4_strerror(rc));
	else
		rc = r4l(sh, NULL, "%s", cmd);
	free(cmd);
	return rc;
}

/* TO, or TO/basename(FROM) when TO is a directory. */
static char *target_of(struct sh *sh, const char *from, const char *to)
{
	char *q = r4_path_quote(to), *d, *nm, *t;
	struct r4_run *r = NULL;
	bool dir;

	r4l(sh, &r, "if exist %s then %s/..type", q, q);
	dir = !strcmp(value0(r, 0), "directory");
	r4_run_free(r);
	free(q);
	if (!dir)
		return strdup(to);
	dir_name(from, &d, &nm);
	if (asprintf(&t, "%s/%s", to, nm) < 0)
		t = NULL;
	free(d);
	free(nm);
	return t;
}

/* Is path an aggregate, and from a regular file (not an invert)? */
static bool file_onto_aggregate(struct sh *sh, const char *from, const char *path)
{
	char *qf = r4_path_quote(from), *q = r4_path_quote(path);
	struct r4_run *r = NULL;
	bool yes;

	r4l(sh, &r, "if exist %s then %s/..type; if exist %s then %s/..type", q, q, qf, qf);
	yes = !strcmp(value0(r, 0), "aggregate") && !strcmp(value0(r, 1), "regular");
	r4_run_free(r);
	free(q);
	free(qf);
	return yes;
}

CMD(mv)
{
	char *to = target_of(sh, argv[1], argv[2]), *fa = absolute(sh, argv[1]),
	     *ta = absolute(sh, to), *fd, *fn, *td, *tn;
	int rc;

	(void)argc;
	dir_name(fa, &fd, &fn);
	dir_name(ta, &td, &tn);
	char *qf = r4_path_quote(fa), *qfd = r4_path_quote(fd), *qtd = r4_path_quote(td),
	     *lf = sh_literal(fn, strlen(fn)), *lt = sh_literal(tn, strlen(tn));
	struct r4_stat st;

	if (file_onto_aggregate(sh, fa, ta)) {
		/* as rename(2) over an aggregate does (docs/semantics.md): the
		 * file becomes its text, checked as a whole-text write, and its
		 * name goes, in one unit */
		char *qt = r4_path_quote(ta);

		rc = r4l(sh, NULL, "%s <- %s; %s/..unlink <- %s", qt, qf, qfd, lf);
		free(qt);
	} else if (!strcmp(fd, td)) {
		rc = r4l(sh, NULL, "%s/..name <- %s", qf, lt);
	} else if (!sh_stat(sh, fa, &st) && S_ISDIR(st.mode)) {
		/* R4L renames within a directory and links files: a directory
		 * moves between directories through the engine, outside a
		 * transaction */
		if (sh->session) {
			fprintf(stderr, "r4sh: mv: a directory moves to another directory only "
				"outside begin ... commit\n");
			rc = -EBUSY;
		} else if ((rc = sh_rename(sh, fa, ta))) {
			fprintf(stderr, "r4sh: mv: %s: %s\n", argv[1], r4_strerror(rc));
		}
	} else {
		rc = r4l(sh, NULL, "%s/..link/(name <- %s, target <- %s); %s/..unlink <- %s", qtd,
			 lt, qf, qfd, lf);
	}
	free(qf), free(qfd), free(qtd), free(lf), free(lt);
	free(fd), free(fn), free(td), free(tn), free(fa), free(ta), free(to);
	return rc;
}

CMD(cp)
{
	char *to = target_of(sh, argv[1], argv[2]);
	char *qf = r4_path_quote(argv[1]), *qt = r4_path_quote(to);
	int rc = r4l(sh, NULL, "%s <- %s", qt, qf);

	(void)argc;
	free(qf), free(qt), free(to);
	return rc;
}

CMD(ln)
{
	bool sym = argc == 4 && !strcmp(argv[1], "-s");
	const char *tgt = argv[argc - 2], *name = argv[argc - 1];
	char *qd, *ln, *q;
	int rc;

	if (argc == 4 && !sym) {
		fprintf(stderr, "usage: ln [-s] TARGET NAME\n");
		return -EINVAL;
	}
	if (sym) {
		char *qn = r4_path_quote(name), *lt = sh_literal(tgt, strlen(tgt));

		rc = r4l(sh, NULL, "%s -> %s", qn, lt);
		free(qn), free(lt);
		return rc;
	}
	parent_and_name(name, &qd, &ln);
	q = r4_path_quote(tgt);
	rc = r4l(sh, NULL, "%s/..link/(name <- %s, target <- %s)", qd, ln, q);
	free(qd), free(ln), free(q);
	return rc;
}

CMD(stat)
{
	static const char *const attrs[] = {"type", "mode", "uid", "gid", "size", "nlink",
					    "atime", "mtime", "ctime", "oid", "key", "name"};
	char *q = r4_path_quote(argv[1]), *cmd = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&cmd, &len);
	struct r4_run *r = NULL;
	int rc;

	(void)argc;
	for (size_t i = 0; i < sizeof(attrs) / sizeof(attrs[0]); i++)
		fprintf(f, "%s%s/..%s", i ? "; " : "", q, attrs[i]);
	fprintf(f, "; %s/..plugin", q);
	fclose(f);
	if (!(rc = r4l(sh, &r, "%s", cmd))) {
		const char *p = r->values[0].path;
		size_t pn = p ? strlen(p) - strlen("/..type") : 0;

		printf("path: %.*s\n", p ? (int)(pn ? pn : 1) : (int)strlen(argv[1]), p ? p : argv[1]);
		for (size_t i = 0; i < sizeof(attrs) / sizeof(attrs[0]); i++)
			printf("%s: %s\n", attrs[i], value0(r, i));
		/* the plugin set: "type label" lines */
		for (const char *s = value0(r, sizeof(attrs) / sizeof(attrs[0])), *e; *s; s = e + 1) {
			if (!(e = strchr(s, '\n')))
				break;
			printf("plugin: %.*s\n", (int)(e - s), s);
		}
	}
	r4_run_free(r);
	free(cmd);
	free(q);
	return rc;
}

static void tree_walk(struct sh *sh, const char *a, int depth)
{
	struct collect c = {0};

	if (sh_readdir(sh, a, collect_fn, &c))
		return;
	if (c.n)
		qsort(c.v, c.n, sizeof(*c.v), cmp_str);
	/* (sorted with the type in front: a name order within each type is
	 * not wanted; sort by the names themselves) */
	for (size_t i = 0; i < c.n; i++)
		for (size_t j = i + 1; j < c.n; j++)
			if (strcmp(c.v[j] + 1, c.v[i] + 1) < 0) {
				char *t = c.v[i];

				c.v[i] = c.v[j];
				c.v[j] = t;
			}
	for (size_t i = 0; i < c.n; i++) {
		printf("%*s%s%s\n", depth * 2, "", c.v[i] + 1, c.v[i][0] == 'd' ? "/" : "");
		if (c.v[i][0] == 'd') {
			char *sub;

			if (asprintf(&sub, "%s/%s", strcmp(a, "/") ? a : "", c.v[i] + 1) >= 0) {
				tree_walk(sh, sub, depth + 1);
				free(sub);
			}
		}
		free(c.v[i]);
	}
	free(c.v);
}

CMD(tree)
{
	char *a = absolute(sh, argc > 1 ? argv[1] : ".");
	struct r4_stat st;
	int rc;

	if ((rc = sh_stat(sh, a, &st))) {
		fprintf(stderr, "r4sh: tree: %s: %s\n", argc > 1 ? argv[1] : ".", r4_strerror(rc));
	} else {
		printf("%s\n", a);
		tree_walk(sh, a, 1);
	}
	free(a);
	return rc;
}

CMD(write)
{
	char *body = NULL, *q = r4_path_quote(argv[1]), *lit;
	size_t len = 0;
	int rc;

	(void)argc;
	if ((rc = sh_read_body(sh, &body, &len))) {
		free(q);
		return rc;
	}
	lit = sh_literal(body, len);
	rc = r4l(sh, NULL, "%s <- %s", q, lit);
	free(lit);
	free(body);
	free(q);
	return rc;
}

/* What may not run inside begin ... commit: -EBUSY, saying so. */
static int no_session(struct sh *sh, const char *verb)
{
	if (!sh->session)
		return 0;
	fprintf(stderr, "r4sh: %s: a transaction is open: commit or rollback first\n", verb);
	return -EBUSY;
}

CMD(begin)
{
	int rc;

	(void)argc;
	(void)argv;
	if ((rc = no_session(sh, "begin")))
		return rc;
	if ((rc = r4_session_begin(sh->db, &sh->session)))
		fprintf(stderr, "r4sh: begin: %s\n", r4_strerror(rc));
	return rc;
}

CMD(commit)
{
	int rc;

	(void)argc;
	(void)argv;
	if (!sh->session) {
		fprintf(stderr, "r4sh: commit: no transaction is open\n");
		return -EINVAL;
	}
	rc = r4_session_commit(sh->session);
	sh->session = NULL;
	if (rc)
		fprintf(stderr, "r4sh: commit failed, nothing of the transaction stays: %s\n",
			r4_strerror(rc));
	return rc;
}

CMD(rollback)
{
	(void)argc;
	(void)argv;
	if (!sh->session) {
		fprintf(stderr, "r4sh: rollback: no transaction is open\n");
		return -EINVAL;
	}
	r4_session_rollback(sh->session);
	sh->session = NULL;
	return 0;
}

CMD(explain)
{
	(void)argc;
	return sh_r4l(sh, argv[1], strlen(argv[1]), false, true) ? -EINVAL : 0;
}

CMD(help)
{
	(void)sh;
	if (argc > 1) {
		const struct sh_cmd *c = sh_find(argv[1], strlen(argv[1]));

		if (!c) {
			fprintf(stderr, "r4sh: .help: no verb '%s'\n", argv[1]);
			return -ENOENT;
		}
		printf("%s\n    %s\n", c->usage, c->help);
		return 0;
	}
	printf("Verbs (anything else is an R4L command; one entry is one transaction):\n");
	for (const struct sh_cmd *c = sh_cmds; c->name; c++)
		printf("  %-30s %s\n", c->usage, c->help);
	return 0;
}

/* USER from the image's /etc/passwd (name:x:uid:gid:...), else UID[:GID[,G...]]. */
CMD(as)
{
	const char *s = argv[1];
	char *end;
	struct r4_ident w = {.umask = sh->who.umask};

	(void)argc;
	if (sh->mount && getuid() != 0) {
		fprintf(stderr, "r4sh: .as: on a mount, commands run as this process; only root "
			"may act as another identity\n");
		return -EPERM;
	}
	w.uid = (uint32_t)strtoul(s, &end, 10);
	if (end != s && (!*end || *end == ':')) {
		w.gid = w.uid;
		if (*end == ':')
			w.gid = (uint32_t)strtoul(end + 1, &end, 10);
		while (*end == ',' && w.ngroups < 64)
			sh->groups[w.ngroups++] = (uint32_t)strtoul(end + 1, &end, 10);
		if (*end) {
			fprintf(stderr, "r4sh: .as: '%s' is not UID[:GID[,GID...]]\n", s);
			return -EINVAL;
		}
	} else {
		struct r4_run *r = NULL;
		bool found = false;

		if ((sh->db || sh->mount) &&
		    !r4l(sh, &r, "if exist /etc/passwd then /etc/passwd") && r->nvalues) {
			for (char *l = (char *)value0(r, 0), *e; *l; l = e + 1) {
				char name[256];
				unsigned uid, gid;

				if (!(e = strchr(l, '\n')))
					e = l + strlen(l);
				if (sscanf(l, "%255[^:]:%*[^:]:%u:%u", name, &uid, &gid) == 3 &&
				    !strcmp(name, s)) {
					w.uid = uid;
					w.gid = gid;
					found = true;
					break;
				}
				if (!*e)
					break;
			}
		}
		r4_run_free(r);
		if (!found) {
			fprintf(stderr, "r4sh: .as: no user '%s' in the image's /etc/passwd\n", s);
			return -ENOENT;
		}
	}
	w.groups = sh->groups;
	sh->who = w;
	snprintf(sh->who_name, sizeof(sh->who_name), "%s", w.uid == 0 && !strcmp(s, "0") ? "" : s);
	return 0;
}

CMD(info)
{
	struct r4_info in;
	int rc;

	(void)argc;
	(void)argv;
	if ((rc = r4_info(sh->db, &in)))
		return rc;
	printf("image: %s%s\nblock size: %u\nblocks: %llu\nfree blocks: %llu\nfiles: %llu\n"
	       "tree height: %u\nlabel: %s\nhash: %s\nfibration: %s\nformatting: %s\n",
	       sh->image, sh->rw ? "" : " (read-only)", in.blocksize,
	       (unsigned long long)in.block_count, (unsigned long long)in.free_blocks,
	       (unsigned long long)in.file_count, in.height, in.label,
	       r4_plugin_label(R4_PTYPE_HASH, in.hash), r4_plugin_label(R4_PTYPE_FIBRE, in.fibration),
	       r4_plugin_label(R4_PTYPE_FORMATTING, in.formatting));
	return 0;
}

static void fsck_report(void *ctx, const struct r4_problem *p)
{
	(void)ctx;
	printf("%s: %s%s%s\n", r4_check_class_name(p->cls), p->path ? p->path : "",
	       p->path ? ": " : "", p->msg);
}

CMD(fsck)
{
	struct r4_check_opts o = {.report = fsck_report};
	struct r4_check_result res;
	int rc;

	(void)argc;
	(void)argv;
	if ((rc = no_session(sh, ".fsck")))
		return rc;
	rc = r4_check(sh->db, &o, &res);
	if (rc)
		fprintf(stderr, "r4sh: .fsck: %s\n", r4_strerror(rc));
	else
		printf("%s: %s, %llu objects, %llu problems\n", sh->image,
		       res.problems ? "problems found" : "clean", (unsigned long long)res.objects,
		       (unsigned long long)res.problems);
	return rc ? rc : res.problems ? -EUCLEAN : 0;
}

static int on_off(const char *verb, const char *arg, bool *flag)
{
	if (!strcmp(arg, "on") || !strcmp(arg, "off")) {
		*flag = !strcmp(arg, "on");
		return 0;
	}
	fprintf(stderr, "r4sh: %s: on or off, not '%s'\n", verb, arg);
	return -EINVAL;
}

int sh_print_node(void *ctx, const struct r4_dump_node *n)
{
	unsigned top = *(unsigned *)ctx, ind = (top - n->level) * 4;

	printf("%*slevel %u (%s), block %llu: %u item%s, %u bytes free\n", ind, "", n->level,
	       n->level == 1 ? "leaf" : n->level == 2 ? "twig" : "internal",
	       (unsigned long long)n->blk, n->nitems, n->nitems == 1 ? "" : "s", n->free_space);
	for (unsigned i = 0; i < n->nitems; i++) {
		const struct r4_dump_item *it = &n->items[i];

		printf("%*s  %s %s", ind, "", it->key, it->kind);
		if (!strcmp(it->kind, "nodeptr"))
			printf(" -> block %llu\n", (unsigned long long)it->child);
		else if (!strcmp(it->kind, "cde"))
			printf(", %u entr%s\n", it->units, it->units == 1 ? "y" : "ies");
		else if (!strcmp(it->kind, "extent"))
			printf(", %u unit%s\n", it->units, it->units == 1 ? "" : "s");
		else
			printf(", %u bytes\n", it->len);
	}
	return 0;
}

CMD(dtree)
{
	struct r4_info in;
	int rc;

	(void)argc;
	(void)argv;
	if ((rc = r4_info(sh->db, &in)))
		return rc;
	printf("the storage tree of %s: height %u\n", sh->image, in.height);
	if ((rc = r4_dump_tree(sh->db, sh_print_node, &in.height)))
		fprintf(stderr, "r4sh: .tree: %s\n", r4_strerror(rc));
	return rc;
}

CMD(timer)
{
	(void)argc;
	return on_off(".timer", argv[1], &sh->timer);
}

CMD(echo)
{
	(void)argc;
	return on_off(".echo", argv[1], &sh->echo);
}

CMD(mode)
{
	(void)argc;
	if (!strcmp(argv[1], "human") || !strcmp(argv[1], "json")) {
		sh->out = argv[1][0] == 'j' ? SH_JSON : SH_HUMAN;
		return 0;
	}
	fprintf(stderr, "r4sh: .mode: human or json, not '%s'\n", argv[1]);
	return -EINVAL;
}

CMD(read)
{
	char *text = NULL;
	size_t len = 0;
	const char *source = sh->source;
	int status = sh->status, rc;

	(void)argc;
	if ((rc = sh_read_file(argv[1], false, &text, &len))) {
		fprintf(stderr, "r4sh: .read: %s: %s\n", argv[1], strerror(-rc));
		return rc;
	}
	sh->source = argv[1];
	sh->status = 0;
	rc = sh_script(sh, text, len, false, false);
	sh->source = source;
	sh->status = status;
	free(text);
	return rc ? -EINVAL : 0;
}

CMD(open)
{
	int rc;

	(void)argc;
	if ((rc = no_session(sh, ".open")))
		return rc;
	sh_close(sh);
	if ((rc = sh_open(sh, argv[1], true)))
		return rc;
	strcpy(sh->cwd, "/");
	return 0;
}

CMD(quit)
{
	(void)argc;
	(void)argv;
	sh->quit = true;
	return 0;
}

int sh_verb(struct sh *sh, const struct sh_cmd *c, const char *line, size_t len)
{
	char *argv[64];
	int argc, rc;

	if (c->flags & SH_RAW) {
		size_t i = 0;

		while (i < len && space(line[i]))
			i++;
		i += strlen(c->name);
		while (i < len && space(line[i]))
			i++;
		argv[0] = strdup(c->name);
		argv[1] = strndup(line + i, len - i);
		argc = 2;
	} else {
		argc = split(line, len, argv, 64);
	}
	if (argc - 1 < c->min || (c->max >= 0 && argc - 1 > c->max) ||
	    ((c->flags & SH_RAW) && !argv[1][0])) {
		fprintf(stderr, "usage: %s\n", c->usage);
		rc = -EINVAL;
	} else if ((c->flags & SH_IMAGE) && !sh->db && !sh->mount) {
		fprintf(stderr, "r4sh: %s: no image is open (.open IMAGE)\n", c->name);
		rc = -EBADF;
	} else if ((c->flags & SH_LOCAL) && sh->mount) {
		fprintf(stderr, "r4sh: %s: not on a mount, where each command is a unit of its own "
			"(r4sh --read-only IMAGE works beside the mount)\n", c->name);
		rc = -EOPNOTSUPP;
	} else {
		rc = c->fn(sh, argc, argv);
	}
	for (int i = 0; i < argc; i++)
		free(argv[i]);
	return rc;
}

/* ---- completion ---- */

struct sh *sh_current;

static void add(char ***out, size_t *n, const char *prefix, const char *name, const char *suffix)
{
	char *s;

	if (asprintf(&s, "%s%s%s", prefix, name, suffix) < 0)
		return;
	*out = realloc(*out, (*n + 1) * sizeof(**out));
	(*out)[(*n)++] = s;
}

static const char *const block_params[][6] = {
	{"..new/(", "name", "type", "perm", "target", "format"},
	{"..link/(", "name", "target", NULL, NULL, NULL},
	{"..range/(", "offset", "length", "mode", NULL, NULL},
	{"..acl/(", "uid", "gid", "access", NULL, NULL},
	{"..audit/(", "log", NULL, NULL, NULL, NULL},
};

static const char *const pseudo_names[] = {
	"..uid", "..owner", "..gid", "..mode", "..type", "..size", "..nlink", "..atime",
	"..mtime", "..ctime", "..oid", "..key", "..plugin", "..list", "..body", "..name",
	"..unlink", "..acl", "..audit", "..invert", "..new", "..link", "..range", NULL,
};

void sh_complete(const char *line, int start, int end, const char *text, char ***out,
		 size_t *n)
{
	struct sh *sh = sh_current;
	size_t tl = strlen(text);
	const char *slash = strrchr(text, '/');

	(void)end;
	*out = NULL;
	*n = 0;
	/* the first word: a verb */
	int w = 0;

	while (w < start && space(line[w]))
		w++;
	if (w == start)
		for (const struct sh_cmd *c = sh_cmds; c->name; c++)
			if (!strncmp(c->name, text, tl))
				add(out, n, "", c->name, "");
	/* inside an open parameter block: its parameter names */
	for (size_t b = 0; b < sizeof(block_params) / sizeof(block_params[0]); b++) {
		const char *open = NULL;

		for (const char *p = line; (p = strstr(p, block_params[b][0])) && p < line + start;
		     p++)
			open = p;
		if (!open || memchr(open, ')', (size_t)(line + start - open)))
			continue;
		for (int k = 1; k < 6 && block_params[b][k]; k++)
			if (!strncmp(block_params[b][k], text, tl))
				add(out, n, "", block_params[b][k], "");
		return;
	}
	if (!sh || (!sh->db && !sh->mount))
		return;
	/* a path: the names of its directory, and pseudo names after ".." */
	char *dir = slash ? strndup(text, (size_t)(slash - text) + (slash == text)) : strdup(".");
	const char *base = slash ? slash + 1 : text;
	size_t prefix_len = slash ? (size_t)(slash - text) + 1 : 0;
	char *prefix = strndup(text, prefix_len), *a = absolute(sh, dir);
	struct collect c = {0};

	if (!sh_readdir(sh, a, collect_fn, &c)) {
		if (c.n)
			qsort(c.v, c.n, sizeof(*c.v), cmp_str);
		for (size_t i = 0; i < c.n; i++)
			if (!strncmp(c.v[i] + 1, base, strlen(base)) &&
			    (base[0] == '.' || c.v[i][1] != '.'))
				add(out, n, prefix, c.v[i] + 1, c.v[i][0] == 'd' ? "/" : "");
	}
	for (size_t i = 0; i < c.n; i++)
		free(c.v[i]);
	free(c.v);
	if (base[0] == '.' && base[1] == '.')
		for (int i = 0; pseudo_names[i]; i++)
			if (!strncmp(pseudo_names[i], base, strlen(base)))
				add(out, n, prefix, pseudo_names[i], "");
	free(prefix);
	free(dir);
	free(a);
}
