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
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "sh.h"

#define CMD(n) static int cmd_##n(struct sh *sh, int argc, char **argv)
CMD(ls); CMD(cat); CMD(cd); CMD(pwd); CMD(mkdir); CMD(rm); CMD(mv); CMD(cp); CMD(ln);
CMD(stat); CMD(tree); CMD(write); CMD(begin); CMD(commit); CMD(rollback); CMD(explain);
CMD(help); CMD(as); CMD(info); CMD(fsck); CMD(timer); CMD(echo); CMD(mode); CMD(read);
CMD(open); CMD(quit); CMD(dtree); CMD(unknown); CMD(once); CMD(output); CMD(shell);
CMD(backup);

/* Sorted by name (sh_find bisects).  Anything else is R4L. */
const struct sh_cmd sh_cmds[] = {
	{".as", 1, 1, 0, cmd_as, ".as USER|UID[:GID[,GID...]]",
	 "act as this identity: permissions are checked for it (root: .as 0)"},
	{".backup", 1, 1, SH_IMAGE | SH_LOCAL, cmd_backup, ".backup FILE",
	 "a copy of the image as committed, in FILE (an open begin goes on)"},
	{".dump", 0, 1, SH_IMAGE, sh_dump, ".dump [PATH]",
	 "an R4L script that makes PATH (default /) and everything under it again"},
	{".echo", 1, 1, 0, cmd_echo, ".echo on|off", "print each entry before running it"},
	{".fsck", 0, 0, SH_IMAGE | SH_LOCAL, cmd_fsck, ".fsck", "check the image (r4's checker, read-only)"},
	{".help", 0, 1, 0, cmd_help, ".help [VERB]", "this list, or one verb's help"},
	{".info", 0, 0, SH_IMAGE | SH_LOCAL, cmd_info, ".info", "the image: blocks, free, files, plugins"},
	{".mode", 1, 1, 0, cmd_mode, ".mode human|json|list|line|csv|box",
	 "how values and listings print: as they are, JSON objects, or records"},
	{".once", 1, 1, 0, cmd_once, ".once FILE", "the next entry's output to FILE"},
	{".open", 1, 1, 0, cmd_open, ".open IMAGE", "close this image, open another"},
	{".output", 0, 1, 0, cmd_output, ".output [FILE]",
	 "output to FILE from now on (no FILE: back to the terminal)"},
	{".quit", 0, 0, 0, cmd_quit, ".quit", "leave (an open transaction is rolled back)"},
	{".read", 1, 1, 0, cmd_read, ".read SCRIPT", "run a script here, as -f would"},
	{".shell", 1, 1, SH_RAW, cmd_shell, ".shell CMD", "run CMD in the system shell"},
	{".timer", 1, 1, 0, cmd_timer, ".timer on|off",
	 "print how long each entry took: real, user and system time"},
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
	{"ls", 0, -1, SH_IMAGE, cmd_ls, "ls [-l] [-a] [PATH...]",
	 "list directories; -a also shows '.', '..' and the pseudo names"},
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

CMD(unknown)
{
	(void)argc;
	sh_verb_error(sh, 0, -EINVAL, "no such command (.help lists them; a file named %s is read as ./%s)",
		      argv[0], argv[0]);
	return -EINVAL;
}

/* What a line such as ".foo" is: a mistyped dot command, not R4L. */
static const struct sh_cmd unknown_dot = {"", 0, -1, 0, cmd_unknown, "", ""};

const struct sh_cmd *sh_verb_of(const char *line, size_t len)
{
	size_t i = 0, w;
	const struct sh_cmd *c;

	while (i < len && space(line[i]))
		i++;
	/* (every verb begins with a letter or a dot: an R4L line, which
	 * mostly begins with a path, is told at its first byte) */
	if (i == len || !(line[i] == '.' || (line[i] >= 'a' && line[i] <= 'z')))
		return NULL;
	for (w = i; w < len && !space(line[w]); w++)
		;
	c = sh_find(line + i, w - i);
	if (!c && line[i] == '.' && w - i > 1 && line[i + 1] >= 'a' && line[i + 1] <= 'z')
		c = &unknown_dot;
	if (!c)
		return NULL;
	/* `ls <- "x"` writes the file ls: an operator after the word makes it R4L */
	while (w < len && space(line[w]))
		w++;
	if (w < len && (line[w] == '<' || (line[w] == '-' && w + 1 < len && line[w + 1] == '>')))
		return NULL;
	return c;
}

/* ---- helpers ---- */

/* Split a verb line into words ('…' and "…" group, no escapes); where
 * each is goes to l. */
static int split(const char *line, size_t len, char **argv, struct sh_line *l)
{
	int n = 0;
	size_t i = 0;

	while (i < len && n < SH_MAXARGS) {
		char q = 0, *w = malloc(len + 1);
		size_t o = 0;

		while (i < len && space(line[i]))
			i++;
		if (i >= len) {
			free(w);
			break;
		}
		l->at[n] = i;
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
		l->n[n] = i - l->at[n];
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

/* An error of the R4L being built in f, from here on, is about word arg
 * of the verb's line. */
static void blame(struct sh *sh, FILE *f, int arg)
{
	struct sh_line *l = &sh->line;

	fflush(f);
	if (l->nmap < SH_MAXARGS)
		l->map[l->nmap++] = (struct sh_blame){(size_t)ftell(f), arg};
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

char *sh_absolute(struct sh *sh, const char *path)
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

/* st's attributes into obj (times: seconds and nanoseconds). */
static void json_stat(json_t *o, const struct r4_stat *st)
{
	static const char *const tn[] = {"atime", "mtime", "ctime"};
	const struct timespec *t[] = {&st->atime, &st->mtime, &st->ctime};
	char mode[8];

	snprintf(mode, sizeof(mode), "%04o", st->mode & 07777);
	json_object_set_new(o, "type", json_string(r4_type_name(st->mode)));
	json_object_set_new(o, "mode", json_string(mode));
	json_object_set_new(o, "nlink", json_integer(st->nlink));
	json_object_set_new(o, "uid", json_integer(st->uid));
	json_object_set_new(o, "gid", json_integer(st->gid));
	json_object_set_new(o, "size", json_integer((json_int_t)st->size));
	for (int i = 0; i < 3; i++) {
		char k[16];

		snprintf(k, sizeof(k), "%s_nsec", tn[i]);
		json_object_set_new(o, tn[i], json_integer((json_int_t)t[i]->tv_sec));
		json_object_set_new(o, k, json_integer(t[i]->tv_nsec));
	}
}

/* One name ls shows (label: what it prints for it), or with lng its
 * attributes; in JSON mode an object: path, name, and with lng the
 * attributes ("?????? NAME", or no attributes, for a pseudo name). */
static void ls_entry(struct sh *sh, const char *dir, const char *name, const char *label,
		     bool lng)
{
	char *p, *a, t[4096];
	struct r4_stat st;
	bool ok = false, link = false;
	size_t n = 0;

	if (asprintf(&p, "%s/%s", dir, name) < 0)
		return;
	a = sh_absolute(sh, p);
	if (lng && !sh_stat(sh, a, &st)) {
		ok = true;
		link = S_ISLNK(st.mode) && !sh_readlink(sh, a, t, sizeof(t), &n);
		n = n < sizeof(t) ? n : sizeof(t);
	}
	if (sh->out != SH_HUMAN) {
		json_t *o = json_object();

		sh_json_bytes(o, "path", a, strlen(a));
		sh_json_bytes(o, "name", name, strlen(name));
		if (ok)
			json_stat(o, &st);
		if (link)
			sh_json_bytes(o, "target", t, n);
		sh_record(sh, o);
	} else if (!lng) {
		printf("%s\n", label);
	} else if (!ok) {
		printf("?????? %s\n", label);
	} else {
		printf("%c%04o %3u %5u %5u %10llu %s", sh_type_char(st.mode), st.mode & 07777,
		       st.nlink, st.uid, st.gid, (unsigned long long)st.size, label);
		if (link)
			printf(" -> %.*s", (int)n, t);
		putchar('\n');
	}
	free(a);
	free(p);
}

/* ls of one PATH: a directory's entries, or the object itself; with
 * shown, a "PATH:" line first (a blank one before when *shown). */
static int ls_one(struct sh *sh, const char *path, bool lng, bool all, int *shown)
{
	struct r4_run *r = NULL;
	char *q, **names = NULL;
	size_t n = 0, entries = 0;
	int rc;

	q = r4_path_quote(path);
	rc = r4l(sh, &r, "%s/..type; %s/..list", q, q);
	free(q);
	if (rc) {
		r4_run_free(r);
		return rc;
	}
	if (shown && sh->out == SH_HUMAN)
		printf("%s%s:\n", (*shown)++ ? "\n" : "", path);
	if (!dir_type(value0(r, 0))) {
		char *d, *nm;

		dir_name(path, &d, &nm);
		ls_entry(sh, d, nm, lng ? nm : path, lng);
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
	while (entries < n && !(names[entries][0] == '.' && names[entries][1] == '.' &&
				names[entries][2]))
		entries++;
	if (entries)
		qsort(names, entries, sizeof(*names), cmp_str);
	for (size_t i = 0; i < n; i++)
		ls_entry(sh, path, names[i], names[i], lng);
	free(names);
	r4_run_free(r);
	return 0;
}

/* Whether word w is an option (a '-' and more). */
static bool option(const char *w)
{
	return w[0] == '-' && w[1];
}

CMD(ls)
{
	bool lng = false, all = false;
	int paths = 0, rc = 0;

	for (int i = 1; i < argc; i++) {
		if (!option(argv[i])) {
			paths++;
			continue;
		}
		for (const char *o = argv[i] + 1; *o; o++) {
			if (*o == 'l' || *o == 'a') {
				*(*o == 'l' ? &lng : &all) = true;
				continue;
			}
			sh_verb_error(sh, i, -EINVAL, "no option '-%c' (ls [-l] [-a] [PATH...]; a name "
				      "starting with '-' is written ./%s)", *o, argv[i]);
			return -EINVAL;
		}
	}
	if (!paths)
		return ls_one(sh, ".", lng, all, NULL);
	for (int i = 1, shown = 0; i < argc; i++) {
		int one;

		if (option(argv[i]))
			continue;
		sh->line.arg = i;
		if ((one = ls_one(sh, argv[i], lng, all, paths > 1 ? &shown : NULL)) && !rc)
			rc = one;
	}
	return rc;
}

CMD(cat)
{
	int rc = 0;

	for (int i = 1; i < argc; i++) {
		char *q = r4_path_quote(argv[i]);
		struct r4_run *r = NULL;

		sh->line.arg = i;
		if (!(rc = r4l(sh, &r, "%s", q)) && r->nvalues) {
			const struct r4_run_value *v = &r->values[0];

			if (v->err) {
				sh_verb_error(sh, i, v->err, "cannot read '%s': %s", argv[i],
					      sh_unread(v));
				rc = v->err;
			} else if (sh->out != SH_HUMAN) {
				json_t *o = json_object();

				sh_json_bytes(o, "path", v->path ? v->path : argv[i],
					      strlen(v->path ? v->path : argv[i]));
				sh_json_bytes(o, "value", v->bytes, v->size);
				sh_record(sh, o);
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
	int rc;

	sh->line.arg = 1;
	rc = r4l(sh, &r, "%s/..type", q);
	free(q);
	if (!rc && !dir_type(value0(r, 0))) {
		sh_verb_error(sh, 1, -ENOTDIR, "'%s': %s", path, r4_strerror(-ENOTDIR));
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
	if (sh->out != SH_HUMAN) {
		json_t *o = json_object();

		sh_json_bytes(o, "cwd", sh->cwd, strlen(sh->cwd));
		sh_record(sh, o);
	} else {
		printf("%s\n", sh->cwd);
	}
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
		char *a = parents ? sh_absolute(sh, argv[i]) : strdup(argv[i]);

		blame(sh, f, i);
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
		char *qd, *lit, *a = sh_absolute(sh, argv[i]);
		struct r4_stat st;

		blame(sh, f, i);
		if (!strcmp(a, "/")) {
			sh_verb_error(sh, i, -EBUSY, "cannot remove '%s': it is the root", argv[i]);
			rc = -EBUSY;
		} else if (rec && !sh_stat(sh, a, &st) && S_ISDIR(st.mode) &&
			   (rc = rm_tree(sh, a, f))) {
			sh_verb_error(sh, i, rc, "cannot remove '%s': %s", argv[i], r4_strerror(rc));
		} else {
			parent_and_name(argv[i], &qd, &lit);
			fprintf(f, "%s/..unlink <- %s;\n", qd, lit);
			free(lit);
			free(qd);
		}
		free(a);
	}
	fclose(f);
	if (!rc)
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
	char *to = target_of(sh, argv[1], argv[2]), *fa = sh_absolute(sh, argv[1]),
	     *ta = sh_absolute(sh, to), *fd, *fn, *td, *tn;
	int rc = 0;

	(void)argc;
	dir_name(fa, &fd, &fn);
	dir_name(ta, &td, &tn);
	char *qf = r4_path_quote(fa), *qfd = r4_path_quote(fd), *qtd = r4_path_quote(td),
	     *lf = sh_literal(fn, strlen(fn)), *lt = sh_literal(tn, strlen(tn));
	struct r4_stat st;
	char *cmd = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&cmd, &len);

	sh->line.arg = 1;
	if (file_onto_aggregate(sh, fa, ta)) {
		/* as rename(2) over an aggregate does (docs/semantics.md): the
		 * file becomes its text, checked as a whole-text write, and its
		 * name goes, in one unit */
		char *qt = r4_path_quote(ta);

		blame(sh, f, 2);
		fprintf(f, "%s <- ", qt);
		blame(sh, f, 1);
		fprintf(f, "%s; %s/..unlink <- %s", qf, qfd, lf);
		free(qt);
	} else if (!strcmp(fd, td)) {
		fprintf(f, "%s/..name <- ", qf);
		blame(sh, f, 2);
		fprintf(f, "%s", lt);
	} else if (!sh_stat(sh, fa, &st) && S_ISDIR(st.mode)) {
		/* R4L renames within a directory and links files: a directory
		 * moves between directories through the engine, outside a
		 * transaction */
		if (sh->session) {
			sh_verb_error(sh, 1, -EBUSY, "a directory moves to another directory only outside "
				      "begin ... commit");
			rc = -EBUSY;
		} else if ((rc = sh_rename(sh, fa, ta))) {
			sh_verb_error(sh, rc == -EEXIST ? 2 : 1, rc, "cannot move '%s' to '%s': %s",
				      argv[1], argv[2], r4_strerror(rc));
		}
	} else {
		blame(sh, f, 2);
		fprintf(f, "%s/..link/(name <- %s, ", qtd, lt);
		blame(sh, f, 1);
		fprintf(f, "target <- %s); %s/..unlink <- %s", qf, qfd, lf);
	}
	fclose(f);
	if (len)
		rc = r4l(sh, NULL, "%s", cmd);
	free(cmd);
	free(qf), free(qfd), free(qtd), free(lf), free(lt);
	free(fd), free(fn), free(td), free(tn), free(fa), free(ta), free(to);
	return rc;
}

CMD(cp)
{
	char *to = target_of(sh, argv[1], argv[2]);
	char *qf = r4_path_quote(argv[1]), *qt = r4_path_quote(to), *cmd = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&cmd, &len);
	int rc;

	(void)argc;
	blame(sh, f, 2);
	fprintf(f, "%s <- ", qt);
	blame(sh, f, 1);
	fprintf(f, "%s", qf);
	fclose(f);
	rc = r4l(sh, NULL, "%s", cmd);
	free(qf), free(qt), free(to), free(cmd);
	return rc;
}

CMD(ln)
{
	bool sym = argc == 4 && !strcmp(argv[1], "-s");
	const char *tgt = argv[argc - 2], *name = argv[argc - 1];
	char *qd, *ln, *q;
	int rc;

	char *cmd = NULL;
	size_t len = 0;
	FILE *f;

	if (argc == 4 && !sym) {
		sh_verb_error(sh, 1, -EINVAL, "no option '%s' (ln [-s] TARGET NAME)", argv[1]);
		return -EINVAL;
	}
	sh->line.arg = argc - 1;
	if (sym) {
		char *qn = r4_path_quote(name), *lt = sh_literal(tgt, strlen(tgt));

		rc = r4l(sh, NULL, "%s -> %s", qn, lt);
		free(qn), free(lt);
		return rc;
	}
	parent_and_name(name, &qd, &ln);
	q = r4_path_quote(tgt);
	f = open_memstream(&cmd, &len);
	fprintf(f, "%s/..link/(name <- %s, ", qd, ln);
	blame(sh, f, argc - 2);
	fprintf(f, "target <- %s)", q);
	fclose(f);
	rc = r4l(sh, NULL, "%s", cmd);
	free(qd), free(ln), free(q), free(cmd);
	return rc;
}

/* st's time the attribute a names ("atime", "mtime", "ctime"), or NULL. */
static const struct timespec *time_of(const struct r4_stat *st, const char *a)
{
	return !st ? NULL : !strcmp(a, "atime") ? &st->atime : !strcmp(a, "mtime") ? &st->mtime
		: !strcmp(a, "ctime") ? &st->ctime : NULL;
}

/* stat in JSON: one object, its numbers as numbers, the times in
 * seconds and nanoseconds (from st when there), the plugin set as an
 * object; r's values are attrs' then the plugins'. */
static void stat_json(struct sh *sh, const char *path, const struct r4_run *r, const char *const *attrs,
		      size_t n, const struct r4_stat *st)
{
	json_t *o = json_object(), *pl = json_object();

	sh_json_bytes(o, "path", path, strlen(path));
	for (size_t i = 0; i < n; i++) {
		const char *v = value0(r, i), *a = attrs[i];
		bool num = !strcmp(a, "uid") || !strcmp(a, "gid") || !strcmp(a, "size") ||
			   !strcmp(a, "nlink") || !strcmp(a, "oid") || strstr(a, "time");

		if (num)
			json_object_set_new(o, a, json_integer((json_int_t)strtoull(v, NULL, 10)));
		else
			sh_json_bytes(o, a, v, strlen(v));
		const struct timespec *t = time_of(st, a);

		if (t) {
			char k[16];

			snprintf(k, sizeof(k), "%s_nsec", a);
			json_object_set_new(o, a, json_integer((json_int_t)t->tv_sec));
			json_object_set_new(o, k, json_integer(t->tv_nsec));
		}
	}
	/* "type label" lines */
	for (const char *s = value0(r, n), *e, *sp; *s; s = e + 1) {
		if (!(e = strchr(s, '\n')))
			break;
		if ((sp = memchr(s, ' ', (size_t)(e - s)))) {
			char *k = strndup(s, (size_t)(sp - s));

			sh_json_bytes(pl, k, sp + 1, (size_t)(e - sp - 1));
			free(k);
		}
	}
	json_object_set_new(o, "plugins", pl);
	sh_record(sh, o);
}

/* "NAME: 2026-12-07 01:28:40.782654565 +0000", as stat(1) prints a time. */
static void print_time(const char *name, const struct timespec *t)
{
	char day[64];
	struct tm tm;

	localtime_r(&t->tv_sec, &tm);
	strftime(day, sizeof(day), "%Y-%m-%d %H:%M:%S", &tm);
	printf("%s: %s.%09ld ", name, day, t->tv_nsec);
	strftime(day, sizeof(day), "%z", &tm);
	printf("%s\n", day);
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
	sh->line.arg = 1;
	if (!(rc = r4l(sh, &r, "%s", cmd))) {
		const char *p = r->values[0].path;
		size_t pn = p ? strlen(p) - strlen("/..type") : 0;
		char *at = p ? strndup(p, pn ? pn : 1) : NULL;
		struct r4_stat st;
		bool ns = at && !sh_stat(sh, at, &st);

		if (sh->out != SH_HUMAN) {
			stat_json(sh, at ? at : argv[1], r, attrs, sizeof(attrs) / sizeof(attrs[0]),
				  ns ? &st : NULL);
			free(at);
			r4_run_free(r);
			free(cmd);
			free(q);
			return 0;
		}
		printf("path: %s\n", at ? at : argv[1]);
		for (size_t i = 0; i < sizeof(attrs) / sizeof(attrs[0]); i++) {
			const struct timespec *t = time_of(ns ? &st : NULL, attrs[i]);

			if (t)
				print_time(attrs[i], t);
			else
				printf("%s: %s\n", attrs[i], value0(r, i));
		}
		free(at);
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
		if (sh->out != SH_HUMAN) {
			json_t *o = json_object();
			char *sub;

			if (asprintf(&sub, "%s/%s", strcmp(a, "/") ? a : "", c.v[i] + 1) >= 0) {
				sh_json_bytes(o, "path", sub, strlen(sub));
				free(sub);
			}
			json_object_set_new(o, "type", json_string(c.v[i][0] == 'd' ? "directory"
										: "other"));
			sh_record(sh, o);
		} else {
			printf("%*s%s%s\n", depth * 2, "", c.v[i] + 1, c.v[i][0] == 'd' ? "/" : "");
		}
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
	char *a = sh_absolute(sh, argc > 1 ? argv[1] : ".");
	struct r4_stat st;
	int rc;

	if ((rc = sh_stat(sh, a, &st))) {
		sh_verb_error(sh, argc > 1, rc, "cannot read '%s': %s", argc > 1 ? argv[1] : ".",
			      r4_strerror(rc));
	} else {
		if (sh->out == SH_HUMAN)
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
	sh->line.arg = 1;
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
	if (sh->out != SH_HUMAN) {
		json_t *o = json_object();

		sh_json_bytes(o, "image", sh->image, strlen(sh->image));
		json_object_set_new(o, "read_only", json_boolean(!sh->rw));
		json_object_set_new(o, "block_size", json_integer(in.blocksize));
		json_object_set_new(o, "blocks", json_integer((json_int_t)in.block_count));
		json_object_set_new(o, "free_blocks", json_integer((json_int_t)in.free_blocks));
		json_object_set_new(o, "files", json_integer((json_int_t)in.file_count));
		json_object_set_new(o, "tree_height", json_integer(in.height));
		sh_json_bytes(o, "label", in.label, strlen(in.label));
		json_object_set_new(o, "hash", json_string(r4_plugin_label(R4_PTYPE_HASH, in.hash)));
		json_object_set_new(o, "fibration",
				    json_string(r4_plugin_label(R4_PTYPE_FIBRE, in.fibration)));
		json_object_set_new(o, "formatting", json_string(
			r4_plugin_label(R4_PTYPE_FORMATTING, in.formatting)));
		sh_record(sh, o);
		return 0;
	}
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
	struct sh *sh = ctx;

	if (sh->out != SH_HUMAN) {
		json_t *o = json_object();

		json_object_set_new(o, "class", json_string(r4_check_class_name(p->cls)));
		if (p->path)
			sh_json_bytes(o, "path", p->path, strlen(p->path));
		sh_json_bytes(o, "problem", p->msg, strlen(p->msg));
		sh_record(sh, o);
		return;
	}
	printf("%s: %s%s%s\n", r4_check_class_name(p->cls), p->path ? p->path : "",
	       p->path ? ": " : "", p->msg);
}

CMD(fsck)
{
	struct r4_check_opts o = {.report = fsck_report, .ctx = sh};
	struct r4_check_result res;
	int rc;

	(void)argc;
	(void)argv;
	if ((rc = no_session(sh, ".fsck")))
		return rc;
	rc = r4_check(sh->db, &o, &res);
	if (rc) {
		sh_verb_error(sh, 0, rc, "%s", r4_strerror(rc));
	} else if (sh->out != SH_HUMAN) {
		json_t *j = json_object();

		sh_json_bytes(j, "image", sh->image, strlen(sh->image));
		json_object_set_new(j, "clean", json_boolean(!res.problems));
		json_object_set_new(j, "objects", json_integer((json_int_t)res.objects));
		json_object_set_new(j, "problems", json_integer((json_int_t)res.problems));
		sh_records_end(sh);	/* (the problems' listing, then this) */
		sh_record(sh, j);
	} else {
		printf("%s: %s, %llu objects, %llu problems\n", sh->image,
		       res.problems ? "problems found" : "clean", (unsigned long long)res.objects,
		       (unsigned long long)res.problems);
	}
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
	static const char *const names[] = {"human", "json", "list", "line", "csv", "box"};

	(void)argc;
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcmp(argv[1], names[i])) {
			sh->out = (enum sh_out)i;
			return 0;
		}
	sh_verb_error(sh, 1, -EINVAL, "human, json, list, line, csv or box, not '%s'", argv[1]);
	return -EINVAL;
}

CMD(read)
{
	struct sh_text t;
	const char *source = sh->source;
	int status = sh->status, rc;

	(void)argc;
	if ((rc = sh_text_read(argv[1], false, &t))) {
		fprintf(stderr, "r4sh: .read: %s: %s\n", argv[1], strerror(-rc));
		return rc;
	}
	sh->source = argv[1];
	sh->status = 0;
	rc = sh_script(sh, &t, false, false);
	sh->source = source;
	sh->status = status;
	sh_text_free(&t);
	return rc ? -EINVAL : 0;
}

CMD(open)
{
	int rc;

	struct sh old = {.db = sh->db, .image = sh->image, .mount = sh->mount, .rw = sh->rw};
	struct stat a, b;

	(void)argc;
	if ((rc = no_session(sh, ".open")))
		return rc;
	/* the same image again: closed first, or its own lock would refuse it */
	if (sh->image && !stat(sh->image, &a) && !stat(argv[1], &b) && a.st_dev == b.st_dev &&
	    a.st_ino == b.st_ino) {
		sh_close(sh);
		old = (struct sh){0};
	}
	/* else the image open stays open until the new one is */
	sh->db = NULL;
	sh->image = sh->mount = NULL;
	if ((rc = sh_open(sh, argv[1], true))) {
		free(sh->image);
		free(sh->mount);
		sh->db = old.db;
		sh->image = old.image;
		sh->mount = old.mount;
		sh->rw = old.rw;
		return rc;
	}
	sh_close(&old);
	free(old.image);
	strcpy(sh->cwd, "/");
	return 0;
}

CMD(output)
{
	return sh_output(sh, argc > 1 ? argv[1] : NULL);
}

CMD(once)
{
	int rc;

	(void)argc;
	if ((rc = sh_output(sh, argv[1])))
		return rc;
	sh->once = 2;		/* this entry, and the next */
	return 0;
}

CMD(shell)
{
	int st;

	(void)argc;
	fflush(stdout);
	if ((st = system(argv[1])) == -1) {
		sh_verb_error(sh, 1, -errno, "cannot run it: %s", strerror(errno));
		return -ECHILD;
	}
	if (WIFEXITED(st) && !WEXITSTATUS(st))
		return 0;
	sh_verb_error(sh, 1, -ECHILD, "%s %d", WIFEXITED(st) ? "exit status" : "killed by signal",
		      WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st));
	return -ECHILD;
}

CMD(backup)
{
	int rc;

	(void)argc;
	if ((rc = r4_backup(sh->db, argv[1])))
		sh_verb_error(sh, 1, rc, "cannot write '%s': %s", argv[1], r4_strerror(rc));
	return rc;
}

CMD(quit)
{
	(void)argc;
	(void)argv;
	sh->quit = true;
	return 0;
}

int sh_verb(struct sh *sh, const struct sh_cmd *c, const char *line, size_t len,
	    unsigned lineno)
{
	struct sh_line *l = &sh->line;
	char *argv[SH_MAXARGS];
	int argc, rc;

	*l = (struct sh_line){.verb = c->name, .text = line, .len = len, .lineno = lineno};
	if (c->flags & SH_RAW) {
		size_t i = 0;

		while (i < len && space(line[i]))
			i++;
		l->at[0] = i;
		l->n[0] = strlen(c->name);
		i += strlen(c->name);
		while (i < len && space(line[i]))
			i++;
		l->at[1] = i;
		l->n[1] = len - i;
		argv[0] = strdup(c->name);
		argv[1] = strndup(line + i, len - i);
		argc = 2;
	} else {
		argc = split(line, len, argv, l);
	}
	l->argc = argc;
	if (!c->name[0])
		l->verb = argv[0];	/* (unknown_dot: the word as typed) */
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
	sh_records_end(sh);
	for (int i = 0; i < argc; i++)
		free(argv[i]);
	l->verb = NULL;
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

/* The path P of the group P/( ... ) the word at start is a member of
 * (after its '(' or a ','), malloc'd; NULL when it is in none. */
static char *group_base(const char *line, int start)
{
	int i = start, depth = 0, end;

	while (i > 0 && space(line[i - 1]))
		i--;
	if (i == 0 || (line[i - 1] != '(' && line[i - 1] != ','))
		return NULL;
	/* back to the '(' that is still open */
	for (i--; i >= 0; i--) {
		if (line[i] == ')')
			depth++;
		else if (line[i] == '(' && depth-- == 0)
			break;
	}
	if (i <= 0 || line[i - 1] != '/')
		return NULL;
	/* the path before it: back to a space or an operator */
	for (end = i - 1; i > 0 && !space(line[i - 1]) && !strchr("(),;[<>=", line[i - 1]); i--)
		;
	return end > i ? strndup(line + i, (size_t)(end - i)) : strdup("/");
}

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
	/* a path: the names of its directory, and pseudo names after "..";
	 * a relative one inside a group P/( ... ) is under P */
	char *grp = text[0] == '/' ? NULL : group_base(line, start), *rel;
	char *dir = slash ? strndup(text, (size_t)(slash - text) + (slash == text)) : strdup(".");

	if (grp && asprintf(&rel, "%s/%s", grp, dir) >= 0) {
		free(dir);
		dir = rel;
	}
	free(grp);
	const char *base = slash ? slash + 1 : text;
	size_t prefix_len = slash ? (size_t)(slash - text) + 1 : 0;
	char *prefix = strndup(text, prefix_len), *a = sh_absolute(sh, dir);
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
	/* pseudo names: the engine's table, aliases included */
	for (size_t i = 0; base[0] == '.' && base[1] == '.' && r4_pseudo_at(i); i++)
		if (!strncmp(r4_pseudo_at(i)->name, base, strlen(base)))
			add(out, n, prefix, r4_pseudo_at(i)->name, "");
	free(prefix);
	free(dir);
	free(a);
}
