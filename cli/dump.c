/*
 * dump.c - r4sh's .dump: an R4L script that makes a subtree again, as
 * sqlite3's .dump makes a database again (docs/r4sh.md, ".dump").
 *
 * The tree is read the way the other verbs read it: sh_readdir for a
 * directory's entries, sh_stat and sh_readlink for a symlink, and R4L
 * (a dereference of the path, which reaches any name) for everything
 * else, whose numbers, type, rules and audit setting R4L gives alike on
 * an image and on a mount (where an aggregate is a file of its text); so
 * it works on both, as the acting identity.  The script comes in passes, because order matters
 * when it runs: everything is made first (contents, links, aggregates),
 * then inverts are defined (their parts exist by then), then owners,
 * modes, rules and times are set, children before their directory (a
 * 0555 directory still takes its entries; its mtime is not moved by
 * them), owners before modes (chown clears set-id bits), and audit comes
 * last (turning it on writes to the log, which is then written back).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "sh.h"

/* One object met, for the passes after the first. */
struct dnode {
	char *path;
	struct r4_stat st;
	char type[16];			/* as ..type says it */
	char *acl, *audit, *invert;	/* their text ("" for none) */
};

struct dump {
	struct sh *sh;
	FILE *out;
	int rc;				/* the first error: the exit status is 1 */
	struct dnode *post;		/* every object, children before parents */
	size_t n;
	struct {
		uint64_t ino;
		char *path;
	} *seen;			/* objects with more than one name */
	size_t nseen;
};

/* A string literal as R4L reads it (language.md 2.4): printable ASCII and
 * UTF-8 as they are, every other byte escaped, so any bytes go through
 * and the script stays text; LF too, except in contents (text), where a
 * line break is what the reader expects (a string may hold one). */
static void put_bytes(FILE *f, const unsigned char *p, size_t n, bool text)
{
	fputc('"', f);
	for (size_t i = 0; i < n; i++) {
		unsigned char c = p[i];
		size_t k = 0;

		if (c == '"' || c == '\\') {
			fprintf(f, "\\%c", c);
			continue;
		}
		if ((c == '\n' && text) || (c >= 0x20 && c < 0x7f)) {
			fputc(c, f);
			continue;
		}
		if (c == '\t' || c == '\r' || c == '\n') {
			fputs(c == '\t' ? "\\t" : c == '\r' ? "\\r" : "\\n", f);
			continue;
		}
		/* a whole UTF-8 sequence (no overlongs, surrogates or > U+10FFFF) */
		if (c >= 0xc2 && c <= 0xdf)
			k = 1;
		else if (c >= 0xe0 && c <= 0xef)
			k = 2;
		else if (c >= 0xf0 && c <= 0xf4)
			k = 3;
		if (k && i + k < n) {
			bool ok = true;

			for (size_t j = 1; j <= k; j++)
				ok = ok && (p[i + j] & 0xc0) == 0x80;
			if (ok && ((c == 0xe0 && p[i + 1] < 0xa0) || (c == 0xed && p[i + 1] > 0x9f) ||
				   (c == 0xf0 && p[i + 1] < 0x90) || (c == 0xf4 && p[i + 1] > 0x8f)))
				ok = false;
			if (ok) {
				fwrite(p + i, 1, k + 1, f);
				i += k;
				continue;
			}
		}
		fprintf(f, "\\x%02x", c);
	}
	fputc('"', f);
}

static void put_str(FILE *f, const void *p, size_t n)
{
	put_bytes(f, p, n, false);
}

static bool word_byte(unsigned char c)
{
	return c > 0x20 && c != 0x7f && !strchr("/\\()[]{}<>;,+*\"'`#-", c);
}

/* How name is spelled in a path: 0 as it is (a word), 1 quoted, -1 not
 * at all (a '..x' name, which R4L reads as a pseudo file, control bytes,
 * quotes that do not balance). */
static int spelling(const char *name, size_t n)
{
	static const char *const kw[] = {"if", "then", "else", "not", "and", "or", "exist",
					 "eq", "ne", "lt", "gt", "le", "ge", "tw"};
	bool word = word_byte((unsigned char)name[0]) && name[n - 1] != '-';
	unsigned depth = 1;

	if (n >= 2 && name[0] == '.' && name[1] == '.')
		return -1;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)name[i];

		if (c < 0x20 || c == 0x7f)
			return -1;
		if (!word_byte(c) && c != '-')
			word = false;
		/* a quoted name ends at the "'" that closes its '`' */
		if (c == '`')
			depth++;
		else if (c == '\'' && !--depth)
			return -1;
	}
	for (size_t i = 0; word && i < sizeof(kw) / sizeof(kw[0]); i++)
		if (strlen(kw[i]) == n && !memcmp(kw[i], name, n))
			word = false;
	if (word)
		return 0;
	return depth == 1 ? 1 : -1;
}

/* An absolute path as R4L text, to f: its names as words or quoted, or,
 * where one cannot be spelled, the dereference (*"PATH"). */
static void put_path(FILE *f, const char *path)
{
	const char *s, *e, *rest = path;

	/* up to the last name no token spells: a dereference, which follows
	 * a symlink at its end, so a symlink's own name must be spelled
	 * (attrs) */
	for (s = path; *s; s = e) {
		while (*s == '/')
			s++;
		for (e = s; *e && *e != '/'; e++)
			;
		if (e > s && spelling(s, (size_t)(e - s)) < 0)
			rest = e;
	}
	if (rest > path) {
		fputs("(*", f);
		put_str(f, path, (size_t)(rest - path));
		fputc(')', f);
	} else if (!path[1]) {
		fputc('/', f);
		return;
	}
	for (s = rest; *s; s = e) {
		while (*s == '/')
			s++;
		if (!*s)
			break;
		for (e = s; *e && *e != '/'; e++)
			;
		if (spelling(s, (size_t)(e - s)))
			fprintf(f, "/`%.*s'", (int)(e - s), s);
		else
			fprintf(f, "/%.*s", (int)(e - s), s);
	}
}

/* The directory of path and its last name (malloc'd, both). */
static void split_path(const char *path, char **dir, const char **name)
{
	const char *s = strrchr(path, '/');

	*dir = s == path ? strdup("/") : strndup(path, (size_t)(s - path));
	*name = s + 1;
}

/* R4L that reads path (as the dereference, which reaches any name),
 * followed by what ("/..type", or "" for the object itself). */
static int ask(struct dump *d, const char *path, const char *what, struct r4_run **r)
{
	char *src = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&src, &len);
	int rc;

	fputs("(*", f);
	put_str(f, path, strlen(path));
	fprintf(f, ")%s", what);
	fclose(f);
	rc = sh_r4l_quiet(d->sh, src, len, r);
	free(src);
	return rc;
}

/* A value of r: its bytes (NUL-ended) and size, or "" on none. */
static const char *val(const struct r4_run *r, size_t i, size_t *n)
{
	if (!r || i >= r->nvalues || r->values[i].err) {
		if (n)
			*n = 0;
		return "";
	}
	if (n)
		*n = r->values[i].size;
	return r->values[i].bytes;
}

/* What cannot go into the script: said on stderr (in the verb's words)
 * unless said is true (R4L said it), and as a comment in the script. */
static void leave_out(struct dump *d, int rc, const char *path, const char *why, bool said)
{
	if (!why)
		why = r4_strerror(rc);
	if (!said)
		sh_verb_error(d->sh, d->sh->line.arg, rc ? rc : -EINVAL, "cannot dump '%s': %s",
			      path, why);
	fprintf(d->out, "# left out: ");
	put_str(d->out, path, strlen(path));
	fprintf(d->out, " (%s)\n", why);
	if (!d->rc)
		d->rc = rc ? rc : -EINVAL;
}

/* ask, for what the dump needs: a failure (the run's, or its value's: a
 * file the acting identity may not read) is left out, said. */
static int need(struct dump *d, const char *path, const char *what, struct r4_run **r)
{
	int rc = ask(d, path, what, r);

	if (rc) {
		leave_out(d, rc, path, NULL, true);
	} else {
		for (size_t i = 0; !rc && i < (*r)->nvalues; i++)
			rc = (*r)->values[i].err;
		if (!rc && !(*r)->nvalues)
			rc = -EIO;
		if (rc)
			leave_out(d, rc, path, NULL, false);
	}
	return rc;
}


/* "D/..new/(name <- "N"" (or ..link) without its closing bracket. */
static void put_new(FILE *f, const char *path, const char *verb)
{
	char *dir;
	const char *name;

	split_path(path, &dir, &name);
	if (dir[1])
		put_path(f, dir);
	fprintf(f, "/..%s/(name <- ", verb);
	put_str(f, name, strlen(name));
	free(dir);
}

/* Whether every name of path can be spelled (put_path writes no
 * dereference). */
static bool plain(const char *path)
{
	for (const char *s = path, *e; *s; s = e) {
		while (*s == '/')
			s++;
		for (e = s; *e && *e != '/'; e++)
			;
		if (e > s && spelling(s, (size_t)(e - s)) < 0)
			return false;
	}
	return true;
}

/* Pass 1 for a directory's entries: each walked, in name order (in: the
 * aggregate text made them already). */
static void walk(struct dump *d, const char *path, bool made);

static void walk_entries(struct dump *d, const char *path, bool in, bool agg)
{
	struct sh_names c = {0};
	struct r4_run *r = NULL;
	int rc;

	/* an aggregate's and a record's entries from their ..list: on a mount
	 * an aggregate is a file of its text (docs/r4fuse.md); the entries
	 * come first, "." and ".." among them, then the pseudo names */
	if (agg || in) {
		if (!need(d, path, "/..list", &r))
			for (char *l = r->values[0].bytes, *e; (e = strchr(l, '\n')); l = e + 1) {
				if (l[0] == '.' && l[1] == '.' && e - l > 2)
					break;
				sh_names_add(&c, l, (size_t)(e - l), 0, 0);
			}
		r4_run_free(r);
	} else if ((rc = sh_readdir(d->sh, path, sh_names_add, &c))) {
		leave_out(d, rc, path, NULL, false);
	}
	sh_names_sort(&c);
	for (size_t i = 0; i < c.n; i++) {
		char *sub;

		if (asprintf(&sub, "%s/%s", path[1] ? path : "", c.v[i]) >= 0) {
			bool rec = in;

			/* an aggregate's records came with its text */
			if (agg) {
				struct r4_run *t = NULL;

				rec = !ask(d, sub, "/..type", &t) && !strcmp(val(t, 0, NULL), "record");
				r4_run_free(t);
			}
			walk(d, sub, rec);
			free(sub);
		}
	}
	sh_names_free(&c);
}

/* A file's contents, or an aggregate's text: "PATH <- "BYTES"". */
static void put_contents(struct dump *d, const char *path, const char *what, const char *b,
			 size_t n)
{
	FILE *f = d->out;

	if (what) {
		put_new(f, path, "new");
		fprintf(f, "%s)", what);
	} else if (plain(path)) {
		put_path(f, path);
	} else {
		put_new(f, path, "new");
		fputc(')', f);
	}
	fputs(" <- ", f);
	put_bytes(f, (const unsigned char *)b, n, true);
	fputc('\n', f);
}

/*
 * Pass 1 for path and what is under it: make it (made: the aggregate text
 * around it made it already: a record or a field), then its entries; its
 * node goes to d->post after theirs, when the script makes it.
 */
static void walk(struct dump *d, const char *path, bool made)
{
	FILE *f = d->out;
	struct dnode nd = {.path = strdup(path)};
	struct r4_run *r = NULL;
	const char *name = strrchr(path, '/') + 1, *b;
	size_t n;
	bool keep = false;
	int rc;

	nd.acl = strdup("");
	nd.audit = strdup("");
	nd.invert = strdup("");
	if (path[1] && name[0] == '.' && name[1] == '.') {
		leave_out(d, 0, path, "R4L makes no name that starts with '..'", false);
		goto out;
	}
	/* (on a mount an aggregate's records are not on its own paths: R4L
	 * reads them below) */
	if ((rc = sh_stat(d->sh, path, &nd.st)) && !(d->sh->mount && rc == -ENOTDIR)) {
		leave_out(d, rc, path, NULL, false);
		goto out;
	}
	if (S_ISCHR(nd.st.mode) || S_ISBLK(nd.st.mode) || S_ISFIFO(nd.st.mode) ||
	    S_ISSOCK(nd.st.mode)) {
		leave_out(d, 0, path, "R4L makes no device, fifo or socket", false);
		goto out;
	}
	/*
	 * All but a symlink (which a dereference would follow) as R4L says it,
	 * alike on an image and a mount (where an aggregate and an invert are
	 * files of their text, with times of their own): the type, the
	 * numbers, rules and audit.
	 */
	if (rc || !S_ISLNK(nd.st.mode)) {
		static const char *const an[] = {"type", "mode", "uid", "gid", "nlink", "oid",
						 "atime", "mtime", "acl", "audit"};
		char *what = NULL, *q = NULL;
		size_t wn = 0, qn = 0;
		FILE *w = open_memstream(&what, &wn), *qf = open_memstream(&q, &qn);

		put_str(qf, path, strlen(path));
		fclose(qf);
		/* (ask puts the first "(*PATH)") */
		for (size_t i = 0; i < sizeof(an) / sizeof(an[0]); i++)
			fprintf(w, "%s%s%s/..%s", i ? "; (*" : "", i ? q : "", i ? ")" : "", an[i]);
		fclose(w);
		free(q);
		rc = need(d, path, what, &r);
		free(what);
		if (rc)
			goto out;
		snprintf(nd.type, sizeof(nd.type), "%s", val(r, 0, NULL));
		nd.st.mode = (uint32_t)strtoul(val(r, 1, NULL), NULL, 8) |
			     (!strcmp(nd.type, "regular") || !strcmp(nd.type, "invert") ? S_IFREG
			      : !strcmp(nd.type, "symlink") ? S_IFLNK : S_IFDIR);
		nd.st.uid = (uint32_t)strtoul(val(r, 2, NULL), NULL, 10);
		nd.st.gid = (uint32_t)strtoul(val(r, 3, NULL), NULL, 10);
		nd.st.nlink = (uint32_t)strtoul(val(r, 4, NULL), NULL, 10);
		nd.st.ino = strtoull(val(r, 5, NULL), NULL, 10);
		nd.st.atime.tv_sec = (time_t)strtoll(val(r, 6, NULL), NULL, 10);
		nd.st.mtime.tv_sec = (time_t)strtoll(val(r, 7, NULL), NULL, 10);
		free(nd.acl);
		nd.acl = strdup(val(r, 8, NULL));
		free(nd.audit);
		nd.audit = strdup(val(r, 9, NULL));
		r4_run_free(r);
		r = NULL;
	}
	/* a second name of an object met before: a hard link to the first */
	for (size_t i = 0; !S_ISDIR(nd.st.mode) && nd.st.nlink > 1 && !made && i < d->nseen; i++) {
		if (d->seen[i].ino != nd.st.ino)
			continue;
		put_new(f, path, "link");
		fputs(", target <- ", f);
		put_path(f, d->seen[i].path);
		fputs(")\n", f);
		goto out;
	}

	if (S_ISLNK(nd.st.mode)) {
		char t[4096];

		if ((rc = sh_readlink(d->sh, path, t, sizeof(t), &n))) {
			leave_out(d, rc, path, NULL, false);
			goto out;
		}
		if (plain(path)) {
			put_path(f, path);
			fputs(" -> ", f);
		} else {
			put_new(f, path, "new");
			fputs(", type <- symlink, target <- ", f);
		}
		put_str(f, t, n < sizeof(t) ? n : sizeof(t));
		fputs(plain(path) ? "\n" : ")\n", f);
		keep = true;
	} else if (!strcmp(nd.type, "invert")) {
		/* made empty here, defined in pass 2, when its parts exist */
		if (need(d, path, "/..invert", &r))
			goto out;
		free(nd.invert);
		nd.invert = strdup(val(r, 0, NULL));
		if (!made) {
			put_new(f, path, "new");
			fputs(", type <- invert)\n", f);
		}
		keep = true;
	} else if (S_ISREG(nd.st.mode)) {
		if (need(d, path, "", &r))
			goto out;
		b = val(r, 0, &n);
		if (!made)
			put_contents(d, path, NULL, b, n);
		keep = true;
	} else if (!strcmp(nd.type, "aggregate")) {
		bool colon = false;

		if (!ask(d, path, "/..plugin/format", &r))
			colon = !strncmp(val(r, 0, NULL), "colon", 5);
		r4_run_free(r);
		r = NULL;
		if (need(d, path, "/..body", &r))
			goto out;
		b = val(r, 0, &n);
		if (!made)
			put_contents(d, path, colon ? ", type <- aggregate, format <- colon"
					 : ", type <- aggregate, format <- passwd", b, n);
		keep = true;
		walk_entries(d, path, false, true);
	} else if (S_ISDIR(nd.st.mode)) {
		if (!made && path[1]) {
			put_new(f, path, "new");
			fputs(", type <- directory)\n", f);
		}
		keep = true;
		/* (the probe: the engine's listing does not ask who reads) */
		if (!need(d, path, "/..list", &r))
			walk_entries(d, path, made || !strcmp(nd.type, "record"), false);
	}
out:
	r4_run_free(r);
	if (!keep) {
		free(nd.path);
		free(nd.acl);
		free(nd.audit);
		free(nd.invert);
		return;
	}
	if (!S_ISDIR(nd.st.mode) && nd.st.nlink > 1) {
		d->seen = realloc(d->seen, (d->nseen + 1) * sizeof(*d->seen));
		d->seen[d->nseen].ino = nd.st.ino;
		d->seen[d->nseen++].path = strdup(path);
	}
	d->post = realloc(d->post, (d->n + 1) * sizeof(*d->post));
	d->post[d->n++] = nd;
}

/* One "PATH/..NAME <- " of pass 3 (a line's statements apart by "; "). */
static void put_set(FILE *f, const char *path, const char *name, bool first)
{
	if (!first)
		fputs("; ", f);
	put_path(f, path);
	fprintf(f, "%s..%s <- ", path[1] ? "/" : "", name);
}

/* Pass 3 for one object, one line: owner, group, mode, rules, times. */
static void attrs(struct dump *d, const struct dnode *nd)
{
	FILE *f = d->out;
	const char *p = nd->path, *name = strrchr(p, '/') + 1;

	if (S_ISLNK(nd->st.mode) && spelling(name, strlen(name)) < 0) {
		fputs("# the owner and times of ", f);
		put_str(f, p, strlen(p));
		fputs(" stay the new ones: only a dereference reaches that name, and it "
		      "follows the symlink\n", f);
		return;
	}
	put_set(f, p, "uid", true);
	fprintf(f, "#%u", nd->st.uid);
	put_set(f, p, "gid", false);
	fprintf(f, "#%u", nd->st.gid);
	if (!S_ISLNK(nd->st.mode)) {
		put_set(f, p, "mode", false);
		fprintf(f, "\"%04o\"", nd->st.mode & 07777);
	}
	/* each rule ("uid 1001 read") as the block that adds it */
	for (const char *s = nd->acl, *e; *s; s = *e ? e + 1 : e) {
		char kind[4];
		unsigned id;
		char acc[16];

		e = strchrnul(s, '\n');
		if (sscanf(s, "%3s %u %15s", kind, &id, acc) != 3)
			continue;
		fputs("; ", f);
		put_path(f, p);
		fprintf(f, "%s..acl/(%s <- #%u, access <- %s)", p[1] ? "/" : "", kind, id, acc);
	}
	put_set(f, p, "atime", false);
	fprintf(f, "#%lld", (long long)nd->st.atime.tv_sec);
	put_set(f, p, "mtime", false);
	fprintf(f, "#%lld\n", (long long)nd->st.mtime.tv_sec);
}

int sh_dump(struct sh *sh, int argc, char **argv)
{
	struct dump d = {.sh = sh, .out = stdout};
	const char *arg = argc > 1 ? argv[1] : "/";
	char *path, when[64];
	struct r4_stat st;
	time_t now = time(NULL);
	struct tm tm;
	FILE *f = d.out;
	int rc;

	path = sh_absolute(sh, arg);
	sh->line.arg = argc > 1;
	if ((rc = sh_stat(sh, path, &st))) {
		sh_verb_error(sh, argc > 1, rc, "cannot read '%s': %s", arg, r4_strerror(rc));
		free(path);
		return rc;
	}
	gmtime_r(&now, &tm);
	strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S UTC", &tm);
	fprintf(f, "# r4sh .dump of %s on %s %s, %s\n", path, sh->mount ? "the mount" : "the image",
		sh->mount ? sh->mount : sh->image, when);
	fprintf(f, "# Run it into an empty image: r4sh --quiet -f THIS IMAGE.  Times are whole\n"
		"# seconds; ctime, extended attributes, POSIX ACLs and inode flags are not in it.\n");
	fprintf(f, "\n# The objects and their contents\n");
	/* the directories above path, as mkdir -p makes them */
	for (char *s = path + 1; path[1] && (s = strchr(s, '/')); s++) {
		*s = 0;
		fprintf(f, "if not exist ");
		put_path(f, path);
		fprintf(f, " then ");
		put_new(f, path, "new");
		fprintf(f, ", type <- directory)\n");
		*s = '/';
	}
	walk(&d, path, false);

	bool any = false;

	for (size_t i = 0; i < d.n; i++) {
		if (!d.post[i].invert[0])
			continue;
		if (!any)
			fprintf(f, "\n# Inverts, now that their parts exist\n");
		any = true;
		put_path(f, d.post[i].path);
		fputs("/..invert <- ", f);
		put_bytes(f, (const unsigned char *)d.post[i].invert, strlen(d.post[i].invert), true);
		fputc('\n', f);
	}
	fprintf(f, "\n# Owners, modes, rules and times: each directory after what is in it\n");
	for (size_t i = 0; i < d.n; i++)
		attrs(&d, &d.post[i]);
	any = false;
	for (size_t i = 0; i < d.n; i++) {
		size_t an = strlen(d.post[i].audit);

		if (!an)
			continue;
		if (!any)
			fprintf(f, "\n# Audit, last: turning it on writes to the log\n");
		any = true;
		if (d.post[i].audit[an - 1] == '\n')
			d.post[i].audit[--an] = 0;
		put_path(f, d.post[i].path);
		fputs("/..audit/(log <- ", f);
		put_path(f, d.post[i].audit);
		fputs(")\n", f);
	}
	/* the logs in the tree as they were, after the audit records above */
	for (size_t i = 0; any && i < d.n; i++) {
		for (size_t j = 0; j < d.n; j++) {
			struct r4_run *r = NULL;
			size_t n;

			if (strcmp(d.post[j].audit, d.post[i].path))
				continue;
			if (!ask(&d, d.post[i].path, "", &r)) {
				const char *b = val(r, 0, &n);

				put_path(f, d.post[i].path);
				fputs(" <- ", f);
				put_bytes(f, (const unsigned char *)b, n, true);
				fputc('\n', f);
				attrs(&d, &d.post[i]);
			}
			r4_run_free(r);
			break;
		}
	}
	for (size_t i = 0; i < d.n; i++) {
		free(d.post[i].path);
		free(d.post[i].acl);
		free(d.post[i].audit);
		free(d.post[i].invert);
	}
	for (size_t i = 0; i < d.nseen; i++)
		free(d.seen[i].path);
	free(d.seen);
	free(d.post);
	free(path);
	fflush(f);
	return d.rc;
}
