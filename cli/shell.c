/*
 * shell.c - the one input loop of r4sh, for a terminal, -c, -f and stdin,
 * and what it does with an entry: a verb (cmds.c) or R4L through r4_run.
 *
 * An entry is complete when it is a verb line, or when the scanner says
 * R4L text can end there (LANGUAGE.md 2.5: no open bracket or quote, the
 * last token can end a statement).  A script is first cut into entries,
 * all of them checked, and only then run.
 */
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "sh.h"

/* ---- output ---- */

char sh_type_char(uint32_t mode)
{
	switch (mode & S_IFMT) {
	case S_IFREG: return '-';
	case S_IFDIR: return 'd';
	case S_IFLNK: return 'l';
	case S_IFCHR: return 'c';
	case S_IFBLK: return 'b';
	case S_IFIFO: return 'p';
	case S_IFSOCK: return 's';
	default: return '?';
	}
}

/* p[0, n) in base64 (RFC 4648, padded), malloc'd. */
static char *base64(const unsigned char *p, size_t n)
{
	static const char abc[] =
		"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	char *out = malloc((n + 2) / 3 * 4 + 1), *o = out;

	if (!out)
		return NULL;
	for (size_t i = 0; i < n; i += 3) {
		uint32_t v = (uint32_t)p[i] << 16 | (i + 1 < n ? (uint32_t)p[i + 1] << 8 : 0) |
			     (i + 2 < n ? p[i + 2] : 0);

		*o++ = abc[v >> 18 & 63];
		*o++ = abc[v >> 12 & 63];
		*o++ = i + 1 < n ? abc[v >> 6 & 63] : '=';
		*o++ = i + 2 < n ? abc[v & 63] : '=';
	}
	*o = 0;
	return out;
}

void sh_json_bytes(json_t *obj, const char *key, const void *p, size_t n)
{
	json_t *v = json_stringn(p, n);	/* NULL: not UTF-8 (or a NUL inside) */
	char k[64], *b;

	if (v) {
		json_object_set_new(obj, key, v);
		return;
	}
	snprintf(k, sizeof(k), "%s_base64", key);
	if ((b = base64(p, n)))
		json_object_set_new(obj, k, json_string(b));
	free(b);
}

void sh_json_error(json_t *obj, const char *msg, int rc)
{
	sh_json_bytes(obj, "error", msg, strlen(msg));
	json_object_set_new(obj, "errno", json_integer(rc < 0 ? -rc : rc));
}

void sh_json_line(json_t *obj)
{
	if (obj) {
		json_dumpf(obj, stdout, JSON_PRESERVE_ORDER);
		putchar('\n');
	}
	json_decref(obj);
}

/* ---- a directory's names ---- */

int sh_names_add(void *ctx, const char *name, size_t len, uint64_t ino, uint32_t type)
{
	struct sh_names *l = ctx;

	(void)ino;
	(void)type;
	if ((len == 1 && name[0] == '.') || (len == 2 && name[0] == '.' && name[1] == '.'))
		return 0;
	if (r4_grow(&l->v, &l->cap, l->n + 1, sizeof(*l->v), 32) ||
	    !(l->v[l->n] = strndup(name, len)))
		return -ENOMEM;
	l->n++;
	return 0;
}

static int cmp_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

void sh_names_sort(struct sh_names *l)
{
	if (l->n)
		qsort(l->v, l->n, sizeof(*l->v), cmp_name);
}

void sh_names_free(struct sh_names *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->v[i]);
	free(l->v);
	*l = (struct sh_names){0};
}

/* ---- listings: records in the modes of .mode ---- */

/* A field's text: a string as it is, a number in decimal, a boolean as
 * true or false, an object as
 * "key=value" words (tmp: room for the number; *own: what to free). */
static const char *field(json_t *v, char tmp[static 32], char **own)
{
	const char *k;
	json_t *x;
	size_t n;
	FILE *f;

	*own = NULL;
	if (json_is_boolean(v))
		return json_is_true(v) ? "true" : "false";
	if (json_is_integer(v)) {
		snprintf(tmp, 32, "%lld", (long long)json_integer_value(v));
		return tmp;
	}
	if (!json_is_object(v) || !(f = open_memstream(own, &n)))
		return json_is_string(v) ? json_string_value(v) : "";
	json_object_foreach(v, k, x)
		fprintf(f, "%s%s=%s", ftell(f) ? " " : "", k,
			json_is_string(x) ? json_string_value(x) : "");
	fclose(f);
	return *own;
}

/* Characters of UTF-8 text s, as a terminal shows them (one per code point). */
static size_t width(const char *s)
{
	size_t n = 0;

	for (; *s; s++)
		n += ((unsigned char)*s & 0xc0) != 0x80;
	return n;
}

static void csv_field(const char *s)
{
	if (!strpbrk(s, ",\"\r\n")) {
		fputs(s, stdout);
		return;
	}
	putchar('"');
	for (; *s; s++) {
		if (*s == '"')
			putchar('"');
		putchar(*s);
	}
	putchar('"');
}

/* A box's rule: left, the columns' widths + 2 in line, joints, right. */
static void box_rule(const size_t *w, size_t n, const char *l, const char *mid, const char *r)
{
	fputs(l, stdout);
	for (size_t c = 0; c < n; c++) {
		for (size_t i = 0; i < w[c] + 2; i++)
			fputs("\u2500", stdout);
		fputs(c + 1 < n ? mid : r, stdout);
	}
	putchar('\n');
}

static void box_row(const size_t *w, size_t n, const char *const *cells)
{
	for (size_t c = 0; c < n; c++)
		printf("\u2502 %s%*s ", cells[c], (int)(w[c] - width(cells[c])), "");
	printf("\u2502\n");
}

/* The box of the records held: columns are the first record's keys. */
static void box(json_t *rows)
{
	json_t *first = json_array_get(rows, 0), *v;
	size_t n = json_object_size(first), c = 0, i;
	const char **keys = calloc(n ? n : 1, sizeof(*keys)), **cells = calloc(n ? n : 1,
									     sizeof(*cells));
	size_t *w = calloc(n ? n : 1, sizeof(*w));
	char (*tmp)[32] = calloc(n ? n : 1, sizeof(*tmp));
	const char *k;

	if (!keys || !cells || !w || !tmp)
		goto out;
	json_object_foreach(first, k, v) {
		keys[c] = k;
		w[c] = width(k);
		c++;
	}
	json_array_foreach(rows, i, v)
		for (c = 0; c < n; c++) {
			char *own;
			size_t x = width(field(json_object_get(v, keys[c]), tmp[c], &own));

			w[c] = x > w[c] ? x : w[c];
			free(own);
		}
	box_rule(w, n, "\u250c", "\u252c", "\u2510");
	box_row(w, n, keys);
	box_rule(w, n, "\u251c", "\u253c", "\u2524");
	json_array_foreach(rows, i, v) {
		char **own = calloc(n ? n : 1, sizeof(*own));

		for (c = 0; c < n && own; c++)
			cells[c] = field(json_object_get(v, keys[c]), tmp[c], &own[c]);
		if (own)
			box_row(w, n, cells);
		for (c = 0; c < n && own; c++)
			free(own[c]);
		free(own);
	}
	box_rule(w, n, "\u2514", "\u2534", "\u2518");
out:
	free(keys);
	free(cells);
	free(w);
	free(tmp);
}

void sh_record(struct sh *sh, json_t *rec)
{
	json_t *v;
	const char *k;
	char tmp[32], *own;
	bool first = true;

	switch (sh->out) {
	case SH_HUMAN:
	case SH_JSON:
		sh_json_line(rec);
		return;
	case SH_BOX:
		if (!sh->rows)
			sh->rows = json_array();
		json_array_append_new(sh->rows, rec);
		return;
	case SH_CSV:
		if (!sh->header) {
			json_object_foreach(rec, k, v) {
				fputs(first ? "" : ",", stdout);
				csv_field(k);
				first = false;
			}
			putchar('\n');
			sh->header = true;
			first = true;
		}
		json_object_foreach(rec, k, v) {
			fputs(first ? "" : ",", stdout);
			csv_field(field(v, tmp, &own));
			free(own);
			first = false;
		}
		putchar('\n');
		break;
	case SH_LIST:
		json_object_foreach(rec, k, v) {
			printf("%s%s", first ? "" : "|", field(v, tmp, &own));
			free(own);
			first = false;
		}
		putchar('\n');
		break;
	case SH_LINE: {
		size_t kw = 0;

		json_object_foreach(rec, k, v)
			kw = strlen(k) > kw ? strlen(k) : kw;
		if (sh->header)
			putchar('\n');		/* (a blank line between records) */
		json_object_foreach(rec, k, v) {
			printf("%*s = %s\n", (int)kw, k, field(v, tmp, &own));
			free(own);
		}
		sh->header = true;
		break;
	}
	}
	json_decref(rec);
}

void sh_records_end(struct sh *sh)
{
	if (sh->rows && json_array_size(sh->rows))
		box(sh->rows);
	json_decref(sh->rows);
	sh->rows = NULL;
	sh->header = false;
}

/* ---- where output goes: .output, .once ---- */

int sh_output(struct sh *sh, const char *path)
{
	int fd;

	fflush(stdout);
	sh->once = 0;
	if (!path || !strcmp(path, "stdout")) {
		if (sh->saved_stdout < 0)
			return 0;
		dup2(sh->saved_stdout, STDOUT_FILENO);
		close(sh->saved_stdout);
		sh->saved_stdout = -1;
		return 0;
	}
	if ((fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666)) < 0) {
		int rc = -errno;

		sh_verb_error(sh, 1, rc, "cannot write '%s': %s", path, r4_strerror(rc));
		return rc;
	}
	if (sh->saved_stdout < 0)
		sh->saved_stdout = dup(STDOUT_FILENO);
	dup2(fd, STDOUT_FILENO);
	close(fd);
	return 0;
}

void sh_entry_done(struct sh *sh)
{
	if (sh->once && !--sh->once)
		sh_output(sh, NULL);
}

static json_t *json_range(const r4_diags *d, uint32_t off, uint32_t len)
{
	unsigned l1, c1, l2, c2;
	char s[64];

	r4_diag_position(d, off, &l1, &c1);
	r4_diag_position(d, len ? off + len - 1 : off, &l2, &c2);
	snprintf(s, sizeof(s), "%u:%u-%u:%u", l1, c1, l2, c2);
	return json_string(s);
}

const char *sh_unread(const struct r4_run_value *v)
{
	static const char own[] = "cannot read '";
	size_t n = v->path ? strlen(v->path) : 0;

	if (v->why && !(v->path && !strncmp(v->why, own, sizeof(own) - 1) &&
			!strncmp(v->why + sizeof(own) - 1, v->path, n) &&
			!strncmp(v->why + sizeof(own) - 1 + n, "':", 2)))
		return v->why;
	return r4_strerror(v->err);
}

/* A statement's value: its bytes (an object: its contents) on stdout. */
static void print_value(struct sh *sh, const struct r4_run *r, const struct r4_run_value *v)
{
	if (sh->out == SH_JSON) {
		json_t *o = json_object();

		json_object_set_new(o, "statement", json_integer(++sh->stmt));
		json_object_set_new(o, "range", json_range(r->diags, v->off, v->len));
		if (v->path)
			sh_json_bytes(o, "path", v->path, strlen(v->path));
		if (v->err)
			sh_json_error(o, sh_unread(v), v->err);
		else
			sh_json_bytes(o, "value", v->bytes, v->size);
		sh_json_line(o);
		return;
	}
	if (sh->quiet)
		return;
	if (v->err) {
		/* a directory's value is the directory: nothing to show */
		if (v->err != -EISDIR)
			fprintf(stderr, "r4sh: %s: %s\n", v->path, sh_unread(v));
		return;
	}
	fwrite(v->bytes, 1, v->size, stdout);
	if (v->size && v->bytes[v->size - 1] != '\n')
		putchar('\n');
}

static void print_diags(struct sh *sh, const struct r4_run *r)
{
	fflush(stdout);
	if (sh->out == SH_JSON) {
		/* the first error: where, what, its errno (EINVAL before run time) */
		const struct r4_diag *d = r4_diag_get(r->diags, 0);

		if (d) {
			json_t *o = json_object();

			if (r->stage == R4_RUN_RUNTIME)
				json_object_set_new(o, "statement", json_integer(++sh->stmt));
			json_object_set_new(o, "range", json_range(r->diags, d->loc.off,
								   d->loc.len));
			sh_json_error(o, d->msg, r->stage == R4_RUN_RUNTIME ? r->rc : EINVAL);
			json_object_set_new(o, "stage", json_string(
				r->stage == R4_RUN_SYNTAX ? "syntax" :
				r->stage == R4_RUN_CHECK ? "check" : "run"));
			sh_json_line(o);
			fflush(stdout);
		}
	}
	r4_diag_print(r->diags, stderr);
}

void sh_verb_error(struct sh *sh, int arg, int rc, const char *fmt, ...)
{
	const struct sh_line *l = &sh->line;
	size_t at = 0, n = 0;
	char *msg = NULL;
	va_list ap;

	va_start(ap, fmt);
	if (vasprintf(&msg, fmt, ap) < 0)
		msg = NULL;
	va_end(ap);
	fflush(stdout);
	if (!l->verb) {
		fprintf(stderr, "r4sh: %s\n", msg ? msg : r4_strerror(rc));
		free(msg);
		return;
	}
	if (arg >= 0 && arg < l->argc) {
		at = l->at[arg];
		n = l->n[arg];
	}
	if (sh->out == SH_JSON) {
		json_t *o = json_object();

		json_object_set_new(o, "verb", json_string(l->verb));
		if (arg > 0 && arg < l->argc)
			sh_json_bytes(o, "operand", l->text + at, n);
		json_object_set_new(o, "line", json_integer(l->lineno));
		json_object_set_new(o, "column", json_integer((json_int_t)at + 1));
		sh_json_error(o, msg ? msg : r4_strerror(rc), rc);
		sh_json_line(o);
		fflush(stdout);
	}
	fprintf(stderr, "%s:%u:%zu: error: %s: %s\n%.*s\n", sh->source, l->lineno, at + 1, l->verb,
		msg ? msg : r4_strerror(rc), (int)l->len, l->text);
	for (size_t i = 0; i < at; i++)
		fputc(l->text[i] == '\t' ? '\t' : ' ', stderr);
	fputc('^', stderr);
	for (size_t i = 1; i < n; i++)
		fputc('~', stderr);
	fputc('\n', stderr);
	free(msg);
}

/* The first error of a verb's R4L run, as the verb's (-v: the R4L too). */
static void verb_diags(struct sh *sh, const struct r4_run *r)
{
	const struct r4_diag *d = NULL;

	if (sh->verbose)
		print_diags(sh, r);
	for (size_t i = 0; (d = r4_diag_get(r->diags, i)); i++)
		if (d->sev == R4_DIAG_ERROR)
			break;
	int arg = sh->line.arg;

	for (int i = 0; d && i < sh->line.nmap && sh->line.map[i].off <= d->loc.off; i++)
		arg = sh->line.map[i].arg;
	sh_verb_error(sh, arg, r->rc, "%s", d ? d->msg : r4_strerror(r->rc));
}

/* ---- R4L entries ---- */

static double seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static struct r4_run_opts run_opts(struct sh *sh, bool per_statement, unsigned line)
{
	struct r4_run_opts ro = {.name = sh->source, .per_statement = per_statement,
				 .first_line = line};

	ro.exec.session = sh->session;
	ro.exec.who = sh->who;
	ro.exec.cwd = sh->cwd;
	ro.exec.read_objects = true;
	ro.exec.cancel = &sh->cancel;
	return ro;
}

/* Lex, parse, check and compile src (from the script's line `line`;
 * 0: its own text); print its diagnostics (none with quiet), and with
 * show_plan its plan.  0, -EINVAL (errors) or -ENOMEM; *tries (may be
 * NULL) is set when the plan has a TRY step. */
static int front_end(struct sh *sh, const char *src, size_t len, unsigned line,
		     bool per_statement, bool show_plan, bool quiet, bool *tries)
{
	struct r4_compile_opts co = {.per_statement = per_statement};
	r4_diags *d = r4_diag_new(sh->source, src, len);
	struct r4_plan *plan = NULL;
	r4_ast *ast = NULL;
	int rc;

	if (!d)
		return -ENOMEM;
	r4_diag_first_line(d, line);
	if (!(rc = r4_parse(src, len, d, &ast)))
		rc = r4_compile(ast, &co, d, &plan);
	if (!rc && show_plan)
		r4_plan_explain(plan, src, len, stdout);
	else if (rc && !quiet)
		r4_diag_print(d, stderr);
	for (size_t i = 0; !rc && tries && i < plan->nsteps; i++)
		*tries |= plan->steps[i].op == R4_PLAN_TRY;
	r4_plan_free(plan);
	r4_ast_free(ast);
	r4_diag_free(d);
	return rc;
}

/* explain: the plan or the diagnostics; the exit code. */
static int explain(struct sh *sh, const char *src, size_t len, bool per_statement)
{
	int rc = front_end(sh, src, len, 0, per_statement, true, false, NULL);

	return !rc ? 0 : rc == -EINVAL ? 3 : 1;
}

/* r4_run on the image, or through the mount's control file. */
static int run(struct sh *sh, const char *src, size_t len, const struct r4_run_opts *ro,
	       struct r4_run **r)
{
	int rc;

	if (!sh->mount)
		return r4_run(sh->db, src, len, ro, r);
	if ((rc = sh_remote_run(sh, src, len, ro, r)) && !*r)
		fprintf(stderr, "r4sh: %s: the control file: %s\n", sh->mount, r4_strerror(rc));
	if (*r)
		r4_diag_first_line((*r)->diags, ro->first_line);
	return rc;
}

static int sh_r4l_at(struct sh *sh, const char *src, size_t len, unsigned line,
		     bool per_statement, bool say_stop);

int sh_r4l(struct sh *sh, const char *src, size_t len, bool per_statement, bool dry)
{
	if (dry)
		return explain(sh, src, len, per_statement);
	return sh_r4l_at(sh, src, len, 0, per_statement, per_statement);
}

/* sh_r4l of src, a script's part from its line `line` (0: src is all
 * there is); say_stop: a run-time failure says how many statements
 * committed before it. */
/* The run of src (as sh_r4l_at), not reported yet; NULL (said why) when
 * it could not start. */
/* run_opts for a script's part from its line `line`. */
static struct r4_run_opts part_opts(struct sh *sh, bool per_statement, unsigned line)
{
	struct r4_run_opts ro = run_opts(sh, per_statement, line);

	/* --quiet shows no value (print_value), so reading each object a
	 * statement names for its value is work thrown away: a 100-byte write
	 * read its file back; a value that cannot be read fails nothing */
	if (sh->quiet && sh->out != SH_JSON) {
		ro.exec.read_objects = false;
		ro.drop_values = true;
	}
	return ro;
}

static struct r4_run *run_part(struct sh *sh, const char *src, size_t len, unsigned line,
			       bool per_statement)
{
	struct r4_run_opts ro = part_opts(sh, per_statement, line);
	struct r4_run *r = NULL;
	int rc;

	if (!sh->db && !sh->mount) {
		fprintf(stderr, "r4sh: no image is open (.open IMAGE)\n");
		return NULL;
	}
	rc = run(sh, src, len, &ro, &r);
	if (!r && !sh->mount)
		fprintf(stderr, "r4sh: %s\n", r4_strerror(rc));
	return r;
}

/* What run r shows (values, diagnostics, with say_stop how many statements
 * committed before a run-time failure); its exit code.  Frees r. */
static int report(struct sh *sh, struct r4_run *r, bool say_stop)
{
	int rc = r->rc;

	for (size_t i = 0; i < r->nvalues; i++)
		print_value(sh, r, &r->values[i]);
	if (r4_diag_count(r->diags))
		print_diags(sh, r);
	if (rc && say_stop && r->stage == R4_RUN_RUNTIME)
		fprintf(stderr, "r4sh: stopped: %u statement%s before this one committed\n",
			sh->done + r->units, sh->done + r->units == 1 ? "" : "s");
	sh->done += r->units;
	fflush(stdout);
	rc = r->stage == R4_RUN_SYNTAX || r->stage == R4_RUN_CHECK ? 3 : rc ? 1 : 0;
	r4_run_free(r);
	fflush(stdout);
	return rc;
}

static int sh_r4l_at(struct sh *sh, const char *src, size_t len, unsigned line,
		     bool per_statement, bool say_stop)
{
	struct r4_run *r = run_part(sh, src, len, line, per_statement);

	return r ? report(sh, r, say_stop) : 1;
}

int sh_r4l_quiet(struct sh *sh, const char *src, size_t len, struct r4_run **out)
{
	struct r4_run_opts ro = run_opts(sh, false, 0);
	struct r4_run *r = NULL;
	int rc;

	*out = NULL;
	if (!sh->db && !sh->mount) {
		fprintf(stderr, "r4sh: no image is open (.open IMAGE)\n");
		return -EBADF;
	}
	rc = run(sh, src, len, &ro, &r);
	if (!r)
		return rc;
	if (rc && sh->line.verb)
		verb_diags(sh, r);
	else if (rc)
		print_diags(sh, r);
	*out = r;
	return rc;
}

char *sh_literal(const void *bytes, size_t len)
{
	char *s = malloc(len + 32);
	int n;

	if (!s)
		return NULL;
	n = snprintf(s, 32, "#s%zu:", len);
	memcpy(s + n, bytes, len);
	s[n + len] = 0;
	return s;
}

/* ---- reading entries ---- */

/* The next line of r (without its LF), malloc'd; NULL at the end. */
static char *next_line(struct sh *sh, struct sh_reader *r, bool first)
{
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;

	if (r->text) {
		const char *nl;
		size_t k;

		if (r->pos >= r->len && !(r->pos == 0 && r->len == 0 && r->line == 0))
			return NULL;
		nl = memchr(r->text + r->pos, '\n', r->len - r->pos);
		k = nl ? (size_t)(nl - (r->text + r->pos)) : r->len - r->pos;
		line = malloc(k + 1);
		memcpy(line, r->text + r->pos, k);
		line[k] = 0;
		r->pos += k + 1;
		r->line++;
		return line;
	}
	if (!r->f) {
		char prompt[4200];

		if (first)
			snprintf(prompt, sizeof(prompt), "r4%s%s%s:%s%s> ", sh->who_name[0] ? "(" : "",
				 sh->who_name, sh->who_name[0] ? ")" : "", sh->cwd,
				 sh->session ? "*" : "");
		else
			snprintf(prompt, sizeof(prompt), "...> ");
		r->line++;
		line = le_readline(prompt);
		if (!line && sh->cancel) {
			/* Ctrl-C: an empty line; the loop drops the entry */
			printf("^C\n");
			line = strdup("");
		}
		return line;
	}
	if ((n = getline(&line, &cap, r->f)) < 0) {
		free(line);
		return NULL;
	}
	if (n && line[n - 1] == '\n')
		line[n - 1] = 0;
	r->line++;
	return line;
}

static struct sh_reader *body_reader;

int sh_read_body(struct sh *sh, char **body, size_t *len)
{
	FILE *m = open_memstream(body, len);
	char *line;

	if (!m)
		return -ENOMEM;
	while ((line = next_line(sh, body_reader, false))) {
		if (!strcmp(line, ".")) {
			free(line);
			break;
		}
		fputs(line, m);
		fputc('\n', m);
		free(line);
	}
	fclose(m);
	return 0;
}

static bool complete(const char *src, size_t len)
{
	struct r4_lex_state st;

	r4_lex_state(src, len, &st);
	return st.depth == 0 && !st.open_quote && st.can_end != 0;
}

/* Time spent so far: real, and the user and system time of this process
 * and of the commands .shell ran. */
struct times {
	double real, user, sys;
};

static struct times now(void)
{
	struct rusage self, kids;
	struct times t = {seconds(), 0, 0};

	getrusage(RUSAGE_SELF, &self);
	getrusage(RUSAGE_CHILDREN, &kids);
	t.user = (double)(self.ru_utime.tv_sec + kids.ru_utime.tv_sec) +
		 (double)(self.ru_utime.tv_usec + kids.ru_utime.tv_usec) / 1e6;
	t.sys = (double)(self.ru_stime.tv_sec + kids.ru_stime.tv_sec) +
		(double)(self.ru_stime.tv_usec + kids.ru_stime.tv_usec) / 1e6;
	return t;
}

/* What ends every entry: .timer's line (when it was on as the entry
 * began), a .once's end. */
static void entry_end(struct sh *sh, bool timed, const struct times *t0)
{
	if (timed && sh->timer) {
		struct times t = now();

		fflush(stdout);
		fprintf(stderr, "time: real %.3f s, user %.3f s, sys %.3f s\n", t.real - t0->real,
			t.user - t0->user, t.sys - t0->sys);
	}
	sh_entry_done(sh);
}

/* One entry: a verb or R4L.  Updates sh->status. */
static void entry(struct sh *sh, const char *text, size_t len)
{
	const struct sh_cmd *c = sh_verb_of(text, len);
	struct times t0 = now();
	bool timed = sh->timer;
	int rc;

	if (sh->echo)
		printf("%.*s\n", (int)len, text);
	if (c) {
		if (sh_verb(sh, c, text, len, 1))
			sh->status = sh->status ? sh->status : 1;
	} else if ((rc = sh_r4l(sh, text, len, false, false)) && (!sh->status || rc == 3)) {
		sh->status = rc;
	}
	entry_end(sh, timed, &t0);
}

/* One entry read from r: into the history when typed, then run.  A
 * Ctrl-C that interrupted it is spent with it: the next line typed is a
 * new entry. */
static void take(struct sh *sh, const struct sh_reader *r, const char *text, size_t len)
{
	bool typed = !r->f && !r->text;

	if (typed)
		le_add(text);
	entry(sh, text, len);
	if (typed)
		sh->cancel = 0;
}

int sh_run(struct sh *sh, struct sh_reader *r)
{
	char *buf = NULL;
	size_t len = 0, cap = 0;
	char *line;

	body_reader = r;
	while (!sh->quit && (line = next_line(sh, r, len == 0))) {
		size_t n = strlen(line);

		if (!r->f && !r->text && sh->cancel) {
			/* Ctrl-C while typing: the entry is dropped */
			sh->cancel = 0;
			len = 0;
			free(line);
			continue;
		}
		if (len == 0 && sh_verb_of(line, n)) {
			take(sh, r, line, n);
			free(line);
			continue;
		}
		if (r4_grow(&buf, &cap, len + n + 2, 1, 256)) {
			fprintf(stderr, "r4sh: %s\n", r4_strerror(-ENOMEM));
			free(line);
			sh->status = 1;
			len = 0;
			break;
		}
		if (len)
			buf[len++] = '\n';
		memcpy(buf + len, line, n);
		len += n;
		free(line);
		buf[len] = 0;
		if (complete(buf, len)) {
			take(sh, r, buf, len);
			len = 0;
		}
	}
	if (len)	/* the input ended inside an entry: say what is missing */
		take(sh, r, buf, len);
	free(buf);
	return sh->status;
}

/* ---- scripts: cut into entries, check all, then run ---- */

struct piece {
	size_t off, len;		/* in the script, from the start of a line */
	const struct sh_cmd *verb;	/* or R4L */
	size_t body_off, body_len;	/* write PATH: the lines up to "." */
	uint64_t sum;			/* a verb's text and body, as checked */
	unsigned line;			/* a verb's line */
};

/* A part of an R4L piece the check took alone: its length, and its text's
 * sum, which the run compares (a mapped script may change under it). */
struct cut {
	size_t len;
	uint64_t sum;
	unsigned line;			/* its first */
};

static uint64_t text_sum(const char *s, size_t n)
{
	uint64_t h = 0x9e3779b97f4a7c15ull ^ n, w;

	for (; n >= 8; s += 8, n -= 8) {
		memcpy(&w, s, 8);
		h = (h ^ w) * 0xff51afd7ed558ccdull;
		h ^= h >> 32;
	}
	for (; n; n--)
		h = (h ^ (unsigned char)*s++) * 0x100000001b3ull;
	return h;
}

static uint64_t piece_sum(const char *text, const struct piece *p)
{
	return text_sum(text + p->off, p->len) ^ text_sum(text + p->body_off, p->body_len);
}

/* A mapped script's pages before upto go back to the page cache (they
 * are read again if needed): what a pass has left behind costs no memory.
 * In whole MiBs: a fault maps the pages around it too (fault-around, 64 KiB
 * by default), so pages just behind the reader would come straight back. */
static void let_go(const struct sh_text *t, size_t *from, size_t upto)
{
	size_t end = upto / (1 << 20) * (1 << 20);

	if (t->mapped && end > *from) {
		madvise(t->text + *from, end - *from, MADV_DONTNEED);
		*from = end;
	}
}

/* A mapped script cut short under r4sh: reading past its new end faults.
 * What committed stays; the transaction open goes with the process. */
static void script_shrank(int sig)
{
	static const char msg[] = "r4sh: the script file was cut short while it ran; stopped\n";

	(void)sig;
	if (write(STDERR_FILENO, msg, sizeof(msg) - 1) < 0)
		_exit(1);
	_exit(1);
}

/*
 * How much of an R4L part src[0..len) to check or run next, alone: whole
 * lines holding whole statements, about SH_CHUNK bytes, so that a script
 * of any length is parsed, compiled and run in bounded memory (its
 * statements are units of their own, or of the --atomic session, so
 * nothing joins them).  A statement longer than that is taken whole.
 */
#define SH_CHUNK (64 * 1024)
#define SH_FIRST (4 * 1024)	/* run_ahead's first part */

static size_t chunk_len(const char *src, size_t len)
{
	size_t at = SH_CHUNK;

	while (at < len) {
		const char *nl = memchr(src + at, '\n', len - at);
		size_t end = nl ? (size_t)(nl - src) + 1 : len;

		if (end == len || complete(src, end))
			return end;
		at = end > 2 * at ? end : 2 * at;	/* (each try lexes from src: not at every line) */
	}
	return len;
}

/* The whole lines of src[0..len) up to the first line end past want
 * bytes: the part to try first, which holds whole statements if it checks. */
static size_t part_guess(const char *src, size_t len, size_t want)
{
	const char *nl = len > want ? memchr(src + want, '\n', len - want) : NULL;

	return nl ? (size_t)(nl - src) + 1 : len;
}

/*
 * Check the next part of an R4L piece src[0..len), from the script's line
 * `line`; its length.  First the whole lines up to the first line end past
 * SH_CHUNK, taken as they are: if they check, they hold whole statements
 * (a cut inside one leaves a string, a bracket or an operator open, which
 * is an error).  Else chunk_len's part, lexed to find the cut, checked with
 * its diagnostics shown (*bad then set if it has errors).
 */
static size_t check_part(struct sh *sh, const char *src, size_t len, unsigned line,
			 bool *tries, int *bad)
{
	size_t n = part_guess(src, len, SH_CHUNK);

	if (n < len && !front_end(sh, src, n, line, true, false, true, tries))
		return n;
	n = chunk_len(src, len);
	if (front_end(sh, src, n, line, true, false, false, tries))
		*bad = 1;
	return n;
}

/* The number of the line holding text[off], counted on from *line at
 * text[*seen]. */
static unsigned line_at(const char *text, size_t off, size_t *seen, unsigned *line)
{
	for (; *seen < off; ++*seen)
		*line += text[*seen] == '\n';
	return *line;
}

/* A copy of the script with everything outside [off, off+len) blanked
 * (LF kept), so R4L positions stay the script's. */
static char *alone(const char *text, size_t len, size_t off, size_t n)
{
	char *s = malloc(len + 1);

	for (size_t i = 0; i < len; i++)
		s[i] = (i >= off && i < off + n) || text[i] == '\n' ? text[i] : ' ';
	s[len] = 0;
	return s;
}

/* What the run r of a part of an --atomic script leaves: a run-time
 * failure, shown once the rest checks (*failed), or its status (NULL: it
 * could not start, 1). */
static void part_done(struct sh *sh, struct r4_run *r, int *status, struct r4_run **failed)
{
	if (!r)
		*status = 1;
	else if (r->stage == R4_RUN_RUNTIME)
		*failed = r;
	else
		*status = report(sh, r, false);
}

/*
 * The parts of an --atomic script of R4L alone, made ready (lexed, parsed,
 * checked and compiled: r4_run_prepare) in a thread of their own, at most
 * AHEAD parts ahead of the run: the next part's front end runs on a second
 * core while the executor runs this one.  They share only the script's
 * text, which neither changes; the volume is the running thread's alone.
 * The parts are cut as run_checking cuts them.
 */
enum { AHEAD = 2 };

struct prep {
	size_t off, n;			/* the part: text[off, off + n) */
	unsigned line;			/* the script's line it starts on */
	struct r4_run *r;		/* prepared; NULL: it could not be (-ENOMEM) */
};

struct ahead {
	const struct sh_text *t;
	struct r4_run_opts ro;
	pthread_t thread;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct prep q[AHEAD];		/* ready, in order, from q[first] */
	size_t first, count;
	bool stop;			/* the run wants no more */
	bool done;			/* the thread made the last part ready */
};

/* The part of text[0, len) from o, on the script's line `line`, prepared
 * (r4_run_prepare with base's options): the whole lines up to past want
 * bytes, or chunk_len's cut when they hold no whole statements (a
 * front-end error that a longer cut could end). */
static struct prep prepare_part(const struct r4_run_opts *base, const char *text, size_t len,
				size_t o, unsigned line, size_t want)
{
	struct prep p = {.off = o, .n = part_guess(text + o, len - o, want), .line = line};
	struct r4_run_opts ro = *base;

	ro.first_line = line;
	r4_run_prepare(text + o, p.n, &ro, &p.r);
	if (p.r && p.n < len - o && p.r->stage != R4_RUN_OK) {
		r4_run_free(p.r);
		p.r = NULL;
		p.n = chunk_len(text + o, len - o);
		r4_run_prepare(text + o, p.n, &ro, &p.r);
	}
	return p;
}

/* Run part p, prepared, if it checked; then what it leaves (part_done). */
static void run_prepared(struct sh *sh, const struct prep *p, int *status,
			 struct r4_run **failed)
{
	struct r4_run_opts ro = part_opts(sh, true, p->line);

	if (p->r && p->r->stage == R4_RUN_OK)
		r4_run_exec(sh->db, p->r, &ro);
	if (!p->r)
		fprintf(stderr, "r4sh: %s\n", r4_strerror(-ENOMEM));
	part_done(sh, p->r, status, failed);
}

static void *ahead_main(void *arg)
{
	struct ahead *a = arg;
	const char *text = a->t->text;
	size_t len = a->t->len, seen = 0;
	unsigned lineno = 1;

	for (size_t o = 0; o < len;) {
		/* (the first part small: the run waits for it, not for the rest) */
		struct prep p = prepare_part(&a->ro, text, len, o, line_at(text, o, &seen, &lineno),
					     o ? SH_CHUNK : SH_FIRST);

		o += p.n;
		pthread_mutex_lock(&a->mu);
		while (a->count == AHEAD && !a->stop)
			pthread_cond_wait(&a->cv, &a->mu);
		if (a->stop) {
			pthread_mutex_unlock(&a->mu);
			r4_run_free(p.r);
			return NULL;
		}
		a->q[(a->first + a->count++) % AHEAD] = p;
		pthread_cond_broadcast(&a->cv);
		pthread_mutex_unlock(&a->mu);
	}
	pthread_mutex_lock(&a->mu);
	a->done = true;
	pthread_cond_broadcast(&a->cv);
	pthread_mutex_unlock(&a->mu);
	return NULL;
}

/* The next part made ready; false: there are no more. */
static bool ahead_next(struct ahead *a, struct prep *p)
{
	bool got;

	pthread_mutex_lock(&a->mu);
	while (!a->count && !a->done)
		pthread_cond_wait(&a->cv, &a->mu);
	if ((got = a->count)) {
		*p = a->q[a->first];
		a->first = (a->first + 1) % AHEAD;
		a->count--;
		pthread_cond_broadcast(&a->cv);
	}
	pthread_mutex_unlock(&a->mu);
	return got;
}

/* Stop the thread and drop what it made ready and was not run. */
static void ahead_end(struct ahead *a)
{
	pthread_mutex_lock(&a->mu);
	a->stop = true;
	pthread_cond_broadcast(&a->cv);
	pthread_mutex_unlock(&a->mu);
	pthread_join(a->thread, NULL);
	for (; a->count; a->count--, a->first = (a->first + 1) % AHEAD)
		r4_run_free(a->q[a->first].r);
	pthread_cond_destroy(&a->cv);
	pthread_mutex_destroy(&a->mu);
}

/*
 * Run the parts made ready ahead while each checks and runs; the offset
 * of the script where this stopped, *status and *failed as run_checking
 * keeps them; pages behind it let go from *gone on (let_go).  Without a
 * thread (it could not start): 0, nothing done.
 */
static size_t run_ahead(struct sh *sh, const struct sh_text *t, const struct r4_run_opts *base,
			size_t *gone, int *status, struct r4_run **failed)
{
	struct ahead a = {.t = t, .ro = *base};
	sigset_t block, old;
	bool started;
	size_t o = 0;
	struct prep p;

	if (pthread_mutex_init(&a.mu, NULL))
		return 0;
	if (pthread_cond_init(&a.cv, NULL)) {
		pthread_mutex_destroy(&a.mu);
		return 0;
	}
	/* (signals such as SIGINT go to this thread, the one that runs; the
	 * faults of a script cut short go to whichever read it) */
	sigfillset(&block);
	sigdelset(&block, SIGBUS);
	sigdelset(&block, SIGSEGV);
	pthread_sigmask(SIG_BLOCK, &block, &old);
	started = !pthread_create(&a.thread, NULL, ahead_main, &a);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (!started) {
		pthread_cond_destroy(&a.cv);
		pthread_mutex_destroy(&a.mu);
		return 0;
	}
	while (!*status && !*failed && ahead_next(&a, &p)) {
		run_prepared(sh, &p, status, failed);
		o = p.off + p.n;
		let_go(t, gone, o);
	}
	ahead_end(&a);
	return o;
}

/*
 * An --atomic script of R4L alone (no verb line; no named result, so no
 * TRY: its session keeps no runs) is checked and run in one pass, part by
 * part: all or nothing, a part that fails its check takes back what ran
 * before it, which gives what a check of the whole first would have.  The
 * parts after a failure are still checked, so every error shows, and a
 * run-time failure gives way to a check error after it (which a whole
 * check would have found first).  Each part is parsed and compiled once,
 * not twice, and ahead of its run while the parts before it run
 * (run_ahead); after a failure, the rest here.  Its status; the caller
 * rolls the session back unless 0.
 */
static int run_checking(struct sh *sh, const struct sh_text *t)
{
	struct r4_run_opts base = part_opts(sh, true, 0);
	struct r4_run *failed = NULL;	/* a run-time failure, shown once the rest checks */
	int status = 0, bad = 0;
	size_t seen = 0, gone = 0, o;
	unsigned lineno = 1;
	bool tries = false;

	assert(sh->db && !sh->mount);	/* (--atomic: an image) */
	o = run_ahead(sh, t, &base, &gone, &status, &failed);
	for (size_t n; o < t->len && status != 1; o += n) {
		unsigned at = line_at(t->text, o, &seen, &lineno);

		if (failed && sh->cancel)
			break;	/* (interrupted: no more checking either) */
		if (status || failed) {
			n = check_part(sh, t->text + o, t->len - o, at, &tries, &bad);
			status = bad ? 3 : status;
		} else {	/* (no thread for run_ahead: the parts one by one) */
			struct prep p = prepare_part(&base, t->text, t->len, o, at, SH_CHUNK);

			run_prepared(sh, &p, &status, &failed);
			n = p.n;
		}
		let_go(t, &gone, o + n);
	}
	if (failed && status == 3)
		r4_run_free(failed);
	else if (failed)
		status = report(sh, failed, false);
	return status;
}

/* The run found the script's text not as the check saw it: stop. */
static int changed(struct sh *sh, unsigned line)
{
	fprintf(stderr, "r4sh: %s: the script changed after it was checked; stopped before "
		"its line %u\n", sh->source, line);
	return 1;
}

/* Does p[0..n) hold "<="?  (memchr: memmem's set-up costs more than a
 * line's whole scan) */
static bool holds_le(const char *p, size_t n)
{
	const char *end = p + n;

	while ((p = memchr(p, '<', (size_t)(end - p))) && ++p < end)
		if (*p == '=')
			return true;
	return false;
}

int sh_script(struct sh *sh, const struct sh_text *t, bool atomic, bool dry)
{
	const char *text = t->text;
	size_t len = t->len;
	struct piece *pc = NULL;
	size_t np = 0, at = 0, r4l_start = (size_t)-1, seen = 0, gone = 0;
	unsigned lineno = 1, done;
	FILE *held = NULL;
	int out = -1;
	int rc = 0, bad = 0;
	bool tries = false, fast, named = false;
	struct cut *cut = NULL;		/* where the check cut R4L pieces */
	size_t ncut = 0, cap = 0, k = 0;
	struct sigaction bus = {.sa_handler = script_shrank}, old_bus;

	if (t->mapped)
		sigaction(SIGBUS, &bus, &old_bus);

	/* cut: verb lines where an R4L entry could end, the rest R4L */
	while (at < len) {
		const char *nl = memchr(text + at, '\n', len - at);
		size_t end = nl ? (size_t)(nl - text) : len, next = nl ? end + 1 : len;
		const struct sh_cmd *c = NULL;

		/* (the cheap test first: lexing the chunk so far at every line
		 * would make cutting quadratic) */
		if ((c = sh_verb_of(text + at, end - at)) && r4l_start != (size_t)-1 &&
		    !complete(text + r4l_start, at - r4l_start))
			c = NULL;
		if (c) {
			if (r4l_start != (size_t)-1) {
				pc = realloc(pc, (np + 1) * sizeof(*pc));
				pc[np++] = (struct piece){.off = r4l_start, .len = at - r4l_start};
				r4l_start = (size_t)-1;
			}
			pc = realloc(pc, (np + 1) * sizeof(*pc));
			pc[np] = (struct piece){.off = at, .len = end - at, .verb = c};
			if (!strcmp(c->name, "write")) {
				/* its body: the lines up to a lone "." */
				size_t b = next;

				while (next < len) {
					const char *n2 = memchr(text + next, '\n', len - next);
					size_t e2 = n2 ? (size_t)(n2 - text) : len;

					if (e2 - next == 1 && text[next] == '.') {
						pc[np].body_off = b;
						pc[np].body_len = next - b;
						next = n2 ? e2 + 1 : len;
						b = (size_t)-1;
						break;
					}
					next = n2 ? e2 + 1 : len;
				}
				if (b != (size_t)-1) {
					pc[np].body_off = b;
					pc[np].body_len = next - b;
				}
			}
			np++;
		} else if (r4l_start == (size_t)-1) {
			r4l_start = at;
		}
		/* (might it hold a named result, a TRY? "<=" is in one line) */
		named = named || holds_le(text + at, next - at);
		at = next;
		let_go(t, &gone, at);
	}
	if (r4l_start != (size_t)-1) {
		pc = realloc(pc, (np + 1) * sizeof(*pc));
		pc[np++] = (struct piece){.off = r4l_start, .len = len - r4l_start};
	}
	/* an --atomic script of R4L alone: checked as it runs (run_checking) */
	fast = atomic && !dry && sh->db && !sh->mount && !sh->session && !sh->echo && !sh->timer &&
	       np == 1 && !pc[0].verb && !named;
	/* else check everything before anything runs (a mistyped dot command too) */
	gone = 0;
	for (size_t i = 0; i < np && !fast; i++) {
		line_at(text, pc[i].off, &seen, &lineno);
		if (pc[i].verb) {
			pc[i].sum = piece_sum(text, &pc[i]);
			pc[i].line = lineno;
			if (!pc[i].verb->name[0] &&
			    sh_verb(sh, pc[i].verb, text + pc[i].off, pc[i].len, lineno))
				bad = 1;
		}
		for (size_t o = pc[i].off, n; !pc[i].verb && o < pc[i].off + pc[i].len; o += n) {
			unsigned at_line = line_at(text, o, &seen, &lineno);

			n = check_part(sh, text + o, pc[i].off + pc[i].len - o, at_line, &tries, &bad);
			if (r4_grow(&cut, &cap, ncut + 1, sizeof(*cut), 64)) {
				fprintf(stderr, "r4sh: %s\n", r4_strerror(-ENOMEM));
				bad = 1;
				break;
			}
			cut[ncut++] = (struct cut){n, text_sum(text + o, n), at_line};
			let_go(t, &gone, o + n);
		}
	}
	if (bad) {
		sh->status = 3;
		goto end;
	}
	gone = 0;
	if (dry) {
		for (size_t i = 0; i < np; i++) {
			if (pc[i].verb) {
				printf("%.*s\n", (int)pc[i].len, text + pc[i].off);
				continue;
			}
			char *s = alone(text, len, pc[i].off, pc[i].len);

			explain(sh, s, len, true);
			free(s);
		}
		goto end;
	}
	if (atomic && sh->mount) {
		fprintf(stderr, "r4sh: --atomic: not on a mount, where each command is a unit of its "
			"own (put the script in one command, or use the image)\n");
		sh->status = 1;
		goto end;
	}
	if (atomic && sh->db && !sh->session) {
		if ((rc = r4_session_begin(sh->db, &sh->session))) {
			fprintf(stderr, "r4sh: cannot begin: %s\n", r4_strerror(rc));
			sh->status = 1;
			goto end;
		}
		/* all or nothing: no run of it is undone alone, so none is kept
		 * to be done again, unless a TRY may need that */
		if (!tries)
			r4_session_whole(sh->session);
	}
	/* --atomic: what the script prints is held until it has committed; a
	 * script rolled back shows no values of statements that did not stay */
	if (atomic && sh->session) {
		fflush(stdout);
		if ((held = tmpfile()) && (out = dup(STDOUT_FILENO)) >= 0)
			dup2(fileno(held), STDOUT_FILENO);
	}
	done = sh->done;	/* (a script .read from a script counts afresh) */
	sh->done = 0;
	if (fast)
		sh->status = run_checking(sh, t);
	for (size_t i = 0; i < np && !fast && !sh->status && !sh->quit; i++) {
		struct times t0 = now();
		bool timed = sh->timer;

		if (sh->echo)
			printf("%.*s\n", (int)pc[i].len, text + pc[i].off);
		if (pc[i].verb) {
			struct sh_reader br = {.text = text + pc[i].body_off, .len = pc[i].body_len};

			body_reader = &br;
			if (piece_sum(text, &pc[i]) != pc[i].sum)
				sh->status = changed(sh, pc[i].line);
			else if (sh_verb(sh, pc[i].verb, text + pc[i].off, pc[i].len, pc[i].line))
				sh->status = 1;
		}
		for (size_t o = pc[i].off, n; !pc[i].verb && o < pc[i].off + pc[i].len &&
		     !sh->status; o += n, k++) {
			n = cut[k].len;
			if (text_sum(text + o, n) != cut[k].sum)
				sh->status = changed(sh, cut[k].line);
			else
				sh->status = sh_r4l_at(sh, text + o, n, cut[k].line, true, !atomic);
			let_go(t, &gone, o + n);
		}
		entry_end(sh, timed, &t0);
	}
	sh->done = done;
	if (atomic && sh->session) {
		if (sh->status) {
			r4_session_rollback(sh->session);
			if (sh->status != 3)	/* (a check error: as if nothing ran) */
				fprintf(stderr, "r4sh: --atomic: nothing of the script was "
					"committed\n");
		} else if ((rc = r4_session_commit(sh->session))) {
			fprintf(stderr, "r4sh: commit: %s\n", r4_strerror(rc));
			sh->status = 1;
		}
		sh->session = NULL;
	}
	if (out >= 0) {
		char buf[65536];
		size_t n;

		fflush(stdout);
		dup2(out, STDOUT_FILENO);
		close(out);
		rewind(held);
		while (!sh->status && (n = fread(buf, 1, sizeof(buf), held)))
			fwrite(buf, 1, n, stdout);
	}
	if (held)
		fclose(held);
end:
	if (t->mapped)
		sigaction(SIGBUS, &old_bus, NULL);
	free(pc);
	free(cut);
	return sh->status;
}

int sh_text_read(const char *path, bool dash, struct sh_text *t)
{
	struct stat st;
	int fd;

	*t = (struct sh_text){0};
	if (!(dash && !strcmp(path, "-")) && (fd = open(path, O_RDONLY | O_CLOEXEC)) >= 0) {
		if (!fstat(fd, &st) && S_ISREG(st.st_mode) && st.st_size > 0 &&
		    (t->text = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0)) !=
		    MAP_FAILED) {
			t->len = (size_t)st.st_size;
			t->mapped = true;
			close(fd);
			return 0;
		}
		t->text = NULL;
		close(fd);
	}
	return sh_read_file(path, dash, &t->text, &t->len);
}

void sh_text_free(struct sh_text *t)
{
	if (t->mapped)
		munmap(t->text, t->len);
	else
		free(t->text);
	*t = (struct sh_text){0};
}

int sh_read_file(const char *path, bool dash, char **text, size_t *len)
{
	FILE *f = dash && !strcmp(path, "-") ? stdin : fopen(path, "rb"), *m;
	char buf[65536];
	size_t n;
	int rc = 0;

	if (!f)
		return -errno;
	if (!(m = open_memstream(text, len))) {
		rc = -errno;
	} else {
		while ((n = fread(buf, 1, sizeof(buf), f)))
			fwrite(buf, 1, n, m);
		if (ferror(f))
			rc = -EIO;
		fclose(m);
		if (rc)
			free(*text);
	}
	if (f != stdin)
		fclose(f);
	return rc;
}
