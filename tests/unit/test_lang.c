/*
 * test_lang.c - the R4L conformance corpus (the .t files of tests/lang, LANGUAGE.md
 * section 11; the format is in tests/lang/README.md).
 *
 * Each case is one input and one expected outcome; this program runs
 * every case of every file and counts one check per case.  A failing case
 * prints its file, line and name, what was expected and what came out.
 * R4_LANG_DIR overrides the corpus directory, R4_LANG_CASE runs only the
 * cases whose name contains it.  R4_LANG_SEEDS=DIR also writes each input
 * to a file there: the seeds of the fuzz target (tests/fuzz).
 */
#include <dirent.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
};

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

static char *dup_range(const char *p, size_t n)
{
	char *s = malloc(n + 1);

	memcpy(s, p, n);
	s[n] = 0;
	return s;
}

static int run_case(struct tcase *tc);

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
	/* flush the open section into tc */
#define CLOSE_SECTION(at)							\
	do {									\
		if (section && sec_start) {					\
			size_t n_ = (size_t)((at) - sec_start);		\
			while (n_ && sec_start[n_ - 1] == '\n')		\
				n_--;						\
			if (!strncmp(section, "input", 5)) {			\
				free(tc.input);					\
				tc.input = dup_range(sec_start, n_);		\
				tc.inlen = strcmp(section, "input-escaped") ? n_ \
					   : unescape(tc.input, n_);		\
			} else {						\
				free(tc.expect);				\
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
				free(tc.input);
				free(tc.expect);
				memset(&tc, 0, sizeof(tc));
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
	free(tc.input);
	free(tc.expect);
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

static int run_case(struct tcase *tc)
{
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
	if (!rc && strcmp(tc->kind, "ast"))
		rc = r4_compile(ast, &co, d, &plan);

	write_seed(tc);
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

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
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
	return T_DONE();
}
