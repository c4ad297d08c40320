/*
 * test_lang.c - the R4L conformance corpus (the .t files of tests/lang, LANGUAGE.md
 * section 11; the format is in tests/lang/README.md).
 *
 * Each case is one input and one expected outcome; this program runs
 * every case of every file and counts one check per case.  A failing case
 * prints its file, line and name, what was expected and what came out.
 * R4_LANG_DIR overrides the corpus directory, R4_LANG_CASE runs only the
 * cases whose name contains it.  R4_LANG_SEEDS=DIR writes each input to a
 * file there instead of running it: the seeds of the fuzz target (tests/fuzz).
 */
#include <dirent.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "r4_lang.h"
#include "t.h"

struct tcase {
	const char *file;
	unsigned line;
	char name[256];
	char *input;
	size_t inlen;
	char *expect;			/* the expected section's text */
	size_t explen;
	char kind[32];			/* "ast" or "diag" */
	char *setup;			/* run cases: R4L run first, as root */
	char *as;			/* UID:GID[,G...] the input runs as */
	char *cwd;
	char *clock;		/* "--- clock N": the engine's time (R4_TEST_CLOCK) */
	bool script;			/* --- script: one unit per statement */
	size_t exp_off, exp_end;	/* where the expected section's text lies in the file */
};

/* R4_LANG_BLESS=1: write what run cases produce into their outcome
 * sections (then read every change by hand before committing it). */
static struct bless {
	size_t off, end;
	char *text;
	size_t len;
} *blessed;
static size_t nblessed;

static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	size_t cap = 0, n = 0, got;

	if (!f)
		return NULL;
	do {
		if (n + 4096 > cap) {
			cap = (cap + 4096) * 2;
			buf = realloc(buf, cap + 1);
		}
		got = fread(buf + n, 1, cap - n, f);
		n += got;
	} while (got);
	fclose(f);
	buf[n] = 0;
	*len = n;
	return buf;
}

static int hexval(int c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10
		: c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

/* "input-escaped": \n \t \r \0 \\ \xHH stand for their bytes. */
static size_t unescape(char *s, size_t n)
{
	size_t o = 0;

	for (size_t i = 0; i < n; i++) {
		if (s[i] != '\\' || i + 1 >= n) {
			s[o++] = s[i];
			continue;
		}
		char c = s[++i];

		if (c == 'n')
			s[o++] = '\n';
		else if (c == 't')
			s[o++] = '\t';
		else if (c == 'r')
			s[o++] = '\r';
		else if (c == '0')
			s[o++] = 0;
		else if (c == 'x' && i + 2 < n && hexval(s[i + 1]) >= 0 && hexval(s[i + 2]) >= 0) {
			s[o++] = (char)(hexval(s[i + 1]) * 16 + hexval(s[i + 2]));
			i += 2;
		} else
			s[o++] = c;
	}
	return o;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static char *dup_range(const char *p, size_t n)
{
	char *s = malloc(n + 1);

	memcpy(s, p, n);
	s[n] = 0;
	return s;
}

static int run_case(struct tcase *tc);

static void free_case(struct tcase *tc)
{
	free(tc->input);
	free(tc->expect);
	free(tc->setup);
	free(tc->as);
	free(tc->cwd);
	free(tc->clock);
	memset(tc, 0, sizeof(*tc));
}

/* Split a file into cases and run each. */
static void run_file(const char *path, const char *only)
{
	size_t len;
	char *text = slurp(path, &len);
	struct tcase tc;
	const char *p, *end;
	unsigned line = 1;
	char *section = NULL;	/* "input", "input-escaped", "ast", ... */
	const char *sec_start = NULL;
	bool have = false;

	if (!text) {
		fprintf(stderr, "%s: %s\n", path, strerror(errno));
		t_fail++;
		return;
	}
	memset(&tc, 0, sizeof(tc));
	end = text + len;
	nblessed = 0;
	/* flush the open section into tc */
#define CLOSE_SECTION(at)							\
	do {									\
		if (section && sec_start) {					\
			size_t n_ = (size_t)((at) - sec_start);		\
			while (n_ && sec_start[n_ - 1] == '\n')		\
				n_--;						\
			if (!strcmp(section, "setup") || !strcmp(section, "as") || \
			    !strcmp(section, "cwd") || !strcmp(section, "clock")) { \
				char **f_ = section[0] == 's' ? &tc.setup :	\
					    section[0] == 'a' ? &tc.as :		\
					    section[1] == 'l' ? &tc.clock : &tc.cwd;	\
				free(*f_);					\
				*f_ = dup_range(sec_start, n_);			\
			} else if (!strcmp(section, "script")) {		\
				tc.script = true;				\
			} else if (!strncmp(section, "input", 5)) {		\
				free(tc.input);					\
				tc.input = dup_range(sec_start, n_);		\
				tc.inlen = strcmp(section, "input-escaped") ? n_ \
					   : unescape(tc.input, n_);		\
			} else {						\
				free(tc.expect);				\
				tc.exp_off = (size_t)(sec_start - text);	\
				tc.exp_end = tc.exp_off + n_;			\
				tc.explen = n_ ? n_ + 1 : 0;			\
				tc.expect = dup_range(sec_start, tc.explen);	\
				snprintf(tc.kind, sizeof(tc.kind), "%s", section); \
			}							\
		}								\
		free(section);							\
		section = NULL;							\
	} while (0)
	for (p = text; p < end; line++) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *next = nl ? nl + 1 : end;

		if (!strncmp(p, "=== ", 4) || !strncmp(p, "--- ", 4)) {
			CLOSE_SECTION(p);
			if (p[0] == '=') {
				if (have && (!only || strstr(tc.name, only)))
					run_case(&tc);
				free_case(&tc);
				tc.file = path;
				tc.line = line;
				snprintf(tc.name, sizeof(tc.name), "%.*s", (int)(next - p - 5), p + 4);
				have = true;
			} else {
				section = dup_range(p + 4, (size_t)(next - p - 4 - (nl != NULL)));
				sec_start = next;
			}
		}
		p = next;
	}
	CLOSE_SECTION(end);
	if (have && (!only || strstr(tc.name, only)))
		run_case(&tc);
	free_case(&tc);
	if (nblessed) {
		FILE *f = fopen(path, "wb");
		size_t at = 0;

		for (size_t i = 0; f && i < nblessed; i++) {
			fwrite(text + at, 1, blessed[i].off - at, f);
			fwrite(blessed[i].text, 1, blessed[i].len, f);
			at = blessed[i].end;
			free(blessed[i].text);
		}
		if (f) {
			fwrite(text + at, 1, len - at, f);
			fclose(f);
		}
		free(blessed);
		blessed = NULL;
		nblessed = 0;
	}
	free(text);
#undef CLOSE_SECTION
}

static void report(const struct tcase *tc, const char *got)
{
	fprintf(stderr, "%s:%u: FAILED: %s\n--- input\n%.*s\n--- expected %s\n%s--- got\n%s\n",
		tc->file, tc->line, tc->name, (int)tc->inlen, tc->input, tc->kind,
		tc->expect ? tc->expect : "", got);
}

/* Outputs may hold NUL bytes (a source line quoted verbatim). */
static bool same(const char *out, size_t n, const struct tcase *tc)
{
	return n == tc->explen && (!n || !memcmp(out, tc->expect, n));
}

static void write_seed(const struct tcase *tc)
{
	static unsigned n;
	const char *dir = getenv("R4_LANG_SEEDS");
	char path[1024];
	FILE *f;

	if (!dir)
		return;
	snprintf(path, sizeof(path), "%s/case-%04u", dir, n++);
	if ((f = fopen(path, "wb"))) {
		fwrite(tc->input ? tc->input : "", 1, tc->inlen, f);
		fclose(f);
	}
}

/* ---- run cases: an image, a setup, the input, the outcome ---- */

static char t_dir[64];		/* the scratch directory */
static char base_img[128];	/* a fresh image every case starts from */

static void put_escaped(FILE *f, const char *p, size_t n)
{
	fputc('"', f);
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)p[i];

		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c == '\n')
			fputs("\\n", f);
		else if (c == '\t')
			fputs("\\t", f);
		else if (c < 0x20 || c >= 0x7f)
			fprintf(f, "\\x%02x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}

struct names {
	char **v;
	size_t n;
};

static int collect_name(void *ctx, const char *name, size_t len, uint64_t ino, uint32_t type)
{
	struct names *ns = ctx;

	(void)ino;
	(void)type;
	if ((len == 1 && name[0] == '.') || (len == 2 && name[0] == '.' && name[1] == '.'))
		return 0;
	ns->v = realloc(ns->v, (ns->n + 1) * sizeof(*ns->v));
	ns->v[ns->n++] = dup_range(name, len);
	return 0;
}

/* Every object under dir, depth first in name order: path, mode, owner,
 * and a file's contents or a symlink's text.  Times are left out. */
static void dump_tree(r4_db *db, const char *dir, FILE *f)
{
	struct names ns = {0};
	struct r4_dirpos pos = {0};

	if (r4_readdir(db, dir, &pos, collect_name, &ns)) {
		fprintf(f, "%s: cannot list\n", dir);
		return;
	}
	if (ns.n)
		qsort(ns.v, ns.n, sizeof(*ns.v), cmp_str);
	for (size_t i = 0; i < ns.n; i++) {
		char path[4096], data[256];
		struct r4_stat st;
		size_t got = 0;

		snprintf(path, sizeof(path), "%s/%s", strcmp(dir, "/") ? dir : "", ns.v[i]);
		if (r4_stat(db, path, &st)) {
			fprintf(f, "%s: cannot stat\n", path);
			continue;
		}
		fprintf(f, "%s%s %04o %u:%u", path, S_ISDIR(st.mode) ? "/" : "", st.mode & 07777,
			st.uid, st.gid);
		if (S_ISREG(st.mode)) {
			fputc(' ', f);
			r4_read(db, path, 0, data, sizeof(data), &got);
			put_escaped(f, data, got < 80 ? got : 60);
			if (got >= 80)
				fprintf(f, "... (%llu bytes)", (unsigned long long)st.size);
		} else if (S_ISLNK(st.mode)) {
			fputs(" -> ", f);
			r4_readlink(db, path, data, sizeof(data), &got);
			put_escaped(f, data, got < sizeof(data) ? got : sizeof(data));
		} else if (!S_ISDIR(st.mode)) {
			fprintf(f, " type %o", st.mode >> 12);
		}
		if (!S_ISDIR(st.mode) && st.nlink > 1)
			fprintf(f, " links %u", st.nlink);
		fputc('\n', f);
		if (S_ISDIR(st.mode))
			dump_tree(db, path, f);
		free(ns.v[i]);
	}
	free(ns.v);
}

/* A digest of an image's bytes (FNV-1a), 0 if it cannot be read: a case
 * that must change nothing compares two of them. */
static uint64_t image_digest(const char *path)
{
	static unsigned char buf[1 << 16];
	FILE *f = fopen(path, "rb");
	uint64_t h = 14695981039346656037ull;
	size_t got;

	if (!f)
		return 0;
	while ((got = fread(buf, 1, sizeof(buf), f)))
		for (size_t i = 0; i < got; i++)
			h = (h ^ buf[i]) * 1099511628211ull;
	fclose(f);
	return h;
}

/* A fresh copy of the base image at path (its bytes are read once). */
static int fresh_image(const char *path)
{
	static char *base;
	static size_t n;
	FILE *f;
	int rc;

	if (!base && !(base = slurp(base_img, &n)))
		return -1;
	f = fopen(path, "wb");
	rc = f && fwrite(base, 1, n, f) == n ? 0 : -1;
	if (f && fclose(f))
		rc = -1;
	return rc;
}

/* Run src on the image at path: 0 and *out (the run), or the error. */
static int run_on(const char *path, const char *src, size_t len, const struct r4_run_opts *o,
		  struct r4_run **out)
{
	struct r4_open_opts oo = {.rw = true};
	r4_db *db;
	int rc;

	*out = NULL;
	if ((rc = r4_open(path, &oo, &db)))
		return rc;
	r4_run(db, src, len, o, out);
	rc = r4_sync(db);
	r4_close(db);
	return *out ? rc : -ENOMEM;
}

/* UID:GID[,G...] */
static void parse_as(const char *s, struct r4_ident *w, uint32_t *groups)
{
	char *end;

	w->uid = (uint32_t)strtoul(s, &end, 10);
	w->gid = *end == ':' ? (uint32_t)strtoul(end + 1, &end, 10) : w->uid;
	w->groups = groups;
	while (*end == ',' && w->ngroups < 16)
		groups[w->ngroups++] = (uint32_t)strtoul(end + 1, &end, 10);
}

/*
 * The outcome of a run case, as the "outcome" section spells it: each
 * value, the diagnostics, "exit N" (as r4 run would exit), then the
 * namespace.  A failed run must leave the image byte for byte as the
 * setup left it; that is checked here and reported in the outcome.
 */
static void run_outcome(const struct tcase *tc, FILE *f)
{
	char img[192];
	struct r4_run_opts ro = {.exec = {.who = {.umask = 022}, .read_objects = true}};
	uint32_t groups[16];
	struct r4_run *r = NULL;
	uint64_t before, after;
	r4_db *db;
	int rc;

	snprintf(img, sizeof(img), "%s/case.img", t_dir);
	if (tc->clock)
		setenv("R4_TEST_CLOCK", tc->clock, 1);	/* fixed times (audit records) */
	else
		unsetenv("R4_TEST_CLOCK");
	if (fresh_image(img)) {
		fprintf(f, "cannot copy the image\n");
		return;
	}
	if (tc->setup) {
		rc = run_on(img, tc->setup, strlen(tc->setup), NULL, &r);
		if (rc || r->rc) {
			fprintf(f, "setup failed: %s\n", r4_strerror(rc ? rc : r->rc));
			if (r)
				r4_diag_print(r->diags, f);
			r4_run_free(r);
			return;
		}
		r4_run_free(r);
	}
	before = image_digest(img);
	if (tc->as)
		parse_as(tc->as, &ro.exec.who, groups);
	ro.exec.cwd = tc->cwd;
	ro.per_statement = tc->script;
	rc = run_on(img, tc->input ? tc->input : "", tc->inlen, &ro, &r);
	if (r) {
		for (size_t i = 0; i < r->nvalues; i++) {
			const struct r4_run_value *v = &r->values[i];

			fputs("value ", f);
			if (v->path)
				fprintf(f, "%s ", v->path);
			if (v->err)
				fprintf(f, "(%s)", r4_strerror(v->err));
			else
				put_escaped(f, v->bytes, v->size);
			fputc('\n', f);
		}
		r4_diag_print(r->diags, f);
		fprintf(f, "exit %d\n", r->stage == R4_RUN_SYNTAX || r->stage == R4_RUN_CHECK ? 3
			: r->rc ? 1 : 0);
	}
	if (rc)
		fprintf(f, "sync or open failed: %s\n", r4_strerror(rc));
	after = image_digest(img);
	/* (a script's committed units stay: then only the namespace tells) */
	if (r && r->rc && !r->units && (!before || before != after))
		fprintf(f, "THE IMAGE CHANGED\n");
	r4_run_free(r);
	struct r4_open_opts oo = {0};

	if (r4_open(img, &oo, &db)) {
		fprintf(f, "cannot reopen the image\n");
		return;
	}
	dump_tree(db, "/", f);
	/* and the image is consistent, as the engine's checker sees it */
	struct r4_check_result cr;

	if (r4_check(db, NULL, &cr) || cr.problems)
		fprintf(f, "fsck: %llu problems\n", (unsigned long long)cr.problems);
	r4_close(db);
}

/* A reject case of the front end, run against an image: it must change nothing. */
static bool reject_unchanged(const struct tcase *tc)
{
	char img[192];
	struct r4_run *r = NULL;
	uint64_t before, after;
	bool ok;

	snprintf(img, sizeof(img), "%s/reject.img", t_dir);
	if (fresh_image(img))
		return false;
	before = image_digest(img);
	run_on(img, tc->input ? tc->input : "", tc->inlen, NULL, &r);
	after = image_digest(img);
	ok = r && r->rc == -EINVAL && before && before == after;
	if (!ok)
		fprintf(stderr, "%s:%u: %s: run against an image: rc %d, image %s\n", tc->file,
			tc->line, tc->name, r ? r->rc : -1, before && before == after ? "kept" : "CHANGED");
	r4_run_free(r);
	return ok;
}

static int run_case(struct tcase *tc)
{
	if (getenv("R4_LANG_SEEDS")) {
		write_seed(tc);
		return 0;
	}

	char *out = NULL;
	size_t outlen = 0;
	FILE *f = open_memstream(&out, &outlen);	/* outlen is set by fclose */
	r4_diags *d = r4_diag_new("<command>", tc->input ? tc->input : "", tc->inlen);
	r4_ast *ast = NULL;
	struct r4_plan *plan = NULL;
	struct r4_compile_opts co = {.per_statement = !strcmp(tc->kind, "plan-script")};
	int rc = r4_parse(tc->input ? tc->input : "", tc->inlen, d, &ast);
	bool ok;

	/* every kind but "ast" goes on to the checker and compiler */
	if (!rc && strcmp(tc->kind, "ast") && strcmp(tc->kind, "outcome"))
		rc = r4_compile(ast, &co, d, &plan);

	if (!strcmp(tc->kind, "ast")) {
		if (rc)
			r4_diag_print(d, f);
		else
			r4_ast_dump(ast, f);
		fclose(f);
		ok = !rc && same(out, outlen, tc);
	} else if (!strcmp(tc->kind, "diag")) {
		if (rc == -EINVAL)
			r4_diag_print(d, f);
		else if (!rc)
			r4_plan_explain(plan, tc->input ? tc->input : "", tc->inlen, f);
		fclose(f);
		ok = rc == -EINVAL && same(out, outlen, tc);
		if (reject_unchanged(tc))
			t_pass++;
		else
			t_fail++;
	} else if (!strcmp(tc->kind, "outcome")) {
		run_outcome(tc, f);
		fclose(f);
		ok = same(out, outlen, tc);
	} else if (!strncmp(tc->kind, "plan", 4)) {
		if (rc)
			r4_diag_print(d, f);
		else
			r4_plan_explain(plan, tc->input ? tc->input : "", tc->inlen, f);
		fclose(f);
		ok = !rc && same(out, outlen, tc);
	} else {
		fclose(f);
		fprintf(stderr, "%s:%u: case '%s' has no known expected section\n", tc->file,
			tc->line, tc->name);
		ok = false;
	}
	if (!ok && getenv("R4_LANG_BLESS") && tc->expect) {
		size_t n = outlen && out[outlen - 1] == '\n' ? outlen - 1 : outlen;
		char *t = malloc(n + 2);

		memcpy(t, out, n);
		if (tc->exp_off == tc->exp_end)
			t[n++] = '\n';	/* the section was empty: end the new text */
		blessed = realloc(blessed, (nblessed + 1) * sizeof(*blessed));
		blessed[nblessed++] = (struct bless){tc->exp_off, tc->exp_end, t, n};
		ok = true;
	}
	if (ok)
		t_pass++;
	else {
		t_fail++;
		report(tc, out);
	}
	free(out);
	r4_plan_free(plan);
	r4_ast_free(ast);
	r4_diag_free(d);
	return ok;
}

/* What a shell asks before running an entry (r4_lex_state). */
static void lex_states(void)
{
	static const struct {
		const char *src;
		unsigned depth;
		int quote, can_end;
	} cases[] = {
		{"", 0, 0, -1},		 {"# only a comment", 0, 0, -1},
		{"a <- b", 0, 0, 1},	 {"a <- b +", 0, 0, 0},
		{"a <-", 0, 0, 0},	 {"(if c then x", 1, 0, 1},
		{"tw/[ a; (b", 2, 0, 1}, {"a <- \"open", 0, '"', 0},
		{"a/`open", 0, '`', 0},	 {"if a then", 0, 0, 0},
		{"(a)\n", 0, 0, 1},	 {"a;", 0, 0, 0},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct r4_lex_state st;

		r4_lex_state(cases[i].src, strlen(cases[i].src), &st);
		if (st.depth == cases[i].depth && st.open_quote == cases[i].quote &&
		    st.can_end == cases[i].can_end) {
			t_pass++;
		} else {
			t_fail++;
			fprintf(stderr, "lex state of '%s': depth %u quote %d can_end %d\n",
				cases[i].src, st.depth, st.open_quote, st.can_end);
		}
	}
}


int main(void)
{
	const char *dir = getenv("R4_LANG_DIR") ? getenv("R4_LANG_DIR") : "tests/lang";
	const char *only = getenv("R4_LANG_CASE");
	char *names[256];
	size_t n = 0;
	DIR *dp = opendir(dir);
	struct dirent *e;

	if (!dp) {
		fprintf(stderr, "%s: %s\n", dir, strerror(errno));
		return 1;
	}
	struct r4_mkfs_opts mo;
	int rc;

	snprintf(t_dir, sizeof(t_dir), "%s/r4lang.XXXXXX", t_tmp());
	if (!mkdtemp(t_dir)) {
		perror("mkdtemp");
		return 1;
	}
	snprintf(base_img, sizeof(base_img), "%s/base.img", t_dir);
	r4_mkfs_defaults(&mo);
	if ((rc = r4_mkfs(base_img, 4 << 20, &mo))) {
		fprintf(stderr, "mkfs: %s\n", r4_strerror(rc));
		return 1;
	}
	while ((e = readdir(dp)) && n < 256) {
		size_t l = strlen(e->d_name);

		if (l > 2 && !strcmp(e->d_name + l - 2, ".t"))
			names[n++] = strdup(e->d_name);
	}
	closedir(dp);
	qsort(names, n, sizeof(*names), cmp_str);
	for (size_t i = 0; i < n; i++) {
		char path[1024];
		int before = t_pass + t_fail;

		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		run_file(path, only);
		printf("%s: %d cases\n", names[i], t_pass + t_fail - before);
		free(names[i]);
	}
	lex_states();
	t_rmdir(t_dir);
	return T_DONE();
}
