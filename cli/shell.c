/*
 * shell.c - the one input loop of r4sh, for a terminal, -c, -f and stdin,
 * and what it does with an entry: a verb (cmds.c) or R4L through r4_run.
 *
 * An entry is complete when it is a verb line, or when the scanner says
 * R4L text can end there (LANGUAGE.md 2.5: no open bracket or quote, the
 * last token can end a statement).  A script is first cut into entries,
 * all of them checked, and only then run.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

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

void sh_json_string(FILE *f, const char *p, size_t n)
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
			fprintf(f, "\\u%04x", c);	/* bytes, read as Latin-1 */
		else
			fputc(c, f);
	}
	fputc('"', f);
}

static void json_range(FILE *f, const r4_diags *d, uint32_t off, uint32_t len)
{
	unsigned l1, c1, l2, c2;

	r4_diag_position(d, off, &l1, &c1);
	r4_diag_position(d, len ? off + len - 1 : off, &l2, &c2);
	fprintf(f, "\"%u:%u-%u:%u\"", l1, c1, l2, c2);
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
		printf("{\"statement\": %u, \"range\": ", ++sh->stmt);
		json_range(stdout, r->diags, v->off, v->len);
		if (v->path) {
			printf(", \"path\": ");
			sh_json_string(stdout, v->path, strlen(v->path));
		}
		if (v->err) {
			printf(", \"unread\": \"%s\"", r4_strerror(v->err));
			if (v->why) {
				printf(", \"why\": ");
				sh_json_string(stdout, v->why, strlen(v->why));
			}
		} else {
			printf(", \"value\": ");
			sh_json_string(stdout, v->bytes, v->size);
		}
		printf("}\n");
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
	if (sh->out == SH_JSON && r->stage == R4_RUN_RUNTIME) {
		const struct r4_diag *d = r4_diag_get(r->diags, 0);

		if (d) {
			printf("{\"statement\": %u, \"range\": ", ++sh->stmt);
			json_range(stdout, r->diags, d->loc.off, d->loc.len);
			printf(", \"error\": ");
			sh_json_string(stdout, d->msg, strlen(d->msg));
			printf(", \"errno\": \"%s\"}\n", r4_strerror(r->rc));
		}
	}
	r4_diag_print(r->diags, stderr);
}

/* ---- R4L entries ---- */

static double seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static struct r4_run_opts run_opts(struct sh *sh, bool per_statement)
{
	struct r4_run_opts ro = {.name = sh->source, .per_statement = per_statement};

	ro.exec.session = sh->session;
	ro.exec.who = sh->who;
	ro.exec.cwd = sh->cwd;
	ro.exec.read_objects = true;
	ro.exec.cancel = &sh->cancel;
	return ro;
}

/* Lex, parse, check and compile src; print its diagnostics, and with
 * show_plan its plan.  0, -EINVAL (errors: printed) or -ENOMEM. */
static int front_end(struct sh *sh, const char *src, size_t len, bool per_statement,
		     bool show_plan)
{
	struct r4_compile_opts co = {.per_statement = per_statement};
	r4_diags *d = r4_diag_new(sh->source, src, len);
	struct r4_plan *plan = NULL;
	r4_ast *ast = NULL;
	int rc;

	if (!d)
		return -ENOMEM;
	if (!(rc = r4_parse(src, len, d, &ast)))
		rc = r4_compile(ast, &co, d, &plan);
	if (!rc && show_plan)
		r4_plan_explain(plan, src, len, stdout);
	else if (rc)
		r4_diag_print(d, stderr);
	r4_plan_free(plan);
	r4_ast_free(ast);
	r4_diag_free(d);
	return rc;
}

/* explain: the plan or the diagnostics; the exit code. */
static int explain(struct sh *sh, const char *src, size_t len, bool per_statement)
{
	int rc = front_end(sh, src, len, per_statement, true);

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
	return rc;
}

int sh_r4l(struct sh *sh, const char *src, size_t len, bool per_statement, bool dry)
{
	struct r4_run_opts ro = run_opts(sh, per_statement);
	struct r4_run *r = NULL;
	double t0 = seconds();
	int rc;

	if (dry)
		return explain(sh, src, len, per_statement);
	if (!sh->db && !sh->mount) {
		fprintf(stderr, "r4sh: no image is open (.open IMAGE)\n");
		return 1;
	}
	rc = run(sh, src, len, &ro, &r);
	if (!r) {
		if (!sh->mount)
			fprintf(stderr, "r4sh: %s\n", r4_strerror(rc));
		return 1;
	}
	for (size_t i = 0; i < r->nvalues; i++)
		print_value(sh, r, &r->values[i]);
	if (r4_diag_count(r->diags))
		print_diags(sh, r);
	if (rc && per_statement && r->stage == R4_RUN_RUNTIME)
		fprintf(stderr, "r4sh: stopped: %u statement%s before this one committed\n",
			r->units, r->units == 1 ? "" : "s");
	fflush(stdout);
	if (sh->timer)
		fprintf(stderr, "time: %.3f s\n", seconds() - t0);
	rc = r->stage == R4_RUN_SYNTAX || r->stage == R4_RUN_CHECK ? 3 : rc ? 1 : 0;
	r4_run_free(r);
	fflush(stdout);
	return rc;
}

int sh_r4l_quiet(struct sh *sh, const char *src, size_t len, struct r4_run **out)
{
	struct r4_run_opts ro = run_opts(sh, false);
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
	if (rc)
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

/* One entry: a verb or R4L.  Updates sh->status. */
static void entry(struct sh *sh, const char *text, size_t len)
{
	const struct sh_cmd *c = sh_verb_of(text, len);
	int rc;

	if (sh->echo)
		printf("%.*s\n", (int)len, text);
	if (c) {
		if (sh_verb(sh, c, text, len))
			sh->status = sh->status ? sh->status : 1;
		return;
	}
	rc = sh_r4l(sh, text, len, false, false);
	if (rc && (!sh->status || rc == 3))
		sh->status = rc;
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
	size_t off, len;		/* in the script */
	const struct sh_cmd *verb;	/* or R4L */
	size_t body_off, body_len;	/* write PATH: the lines up to "." */
};

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

int sh_script(struct sh *sh, const char *text, size_t len, bool atomic, bool dry)
{
	struct piece *pc = NULL;
	size_t np = 0, at = 0, r4l_start = (size_t)-1;
	int rc = 0, bad = 0;

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
				pc[np++] = (struct piece){r4l_start, at - r4l_start, NULL, 0, 0};
				r4l_start = (size_t)-1;
			}
			pc = realloc(pc, (np + 1) * sizeof(*pc));
			pc[np] = (struct piece){at, end - at, c, 0, 0};
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
		at = next;
	}
	if (r4l_start != (size_t)-1) {
		pc = realloc(pc, (np + 1) * sizeof(*pc));
		pc[np++] = (struct piece){r4l_start, len - r4l_start, NULL, 0, 0};
	}
	/* check everything before anything runs */
	for (size_t i = 0; i < np; i++) {
		if (pc[i].verb)
			continue;
		char *s = alone(text, len, pc[i].off, pc[i].len);

		if (front_end(sh, s, len, true, false))
			bad = 1;
		free(s);
	}
	if (bad) {
		free(pc);
		return sh->status = 3;
	}
	if (dry) {
		for (size_t i = 0; i < np; i++) {
			if (pc[i].verb) {
				printf("%.*s\n", (int)pc[i].len, text + pc[i].off);
				continue;
			}
			char *s = alone(text, len, pc[i].off, pc[i].len);

			explain(sh, s, len, !atomic);
			free(s);
		}
		free(pc);
		return 0;
	}
	if (atomic && sh->mount) {
		fprintf(stderr, "r4sh: --atomic: not on a mount, where each command is a unit of its "
			"own (put the script in one command, or use the image)\n");
		free(pc);
		return sh->status = 1;
	}
	if (atomic && sh->db && !sh->session && (rc = r4_session_begin(sh->db, &sh->session))) {
		fprintf(stderr, "r4sh: cannot begin: %s\n", r4_strerror(rc));
		free(pc);
		return sh->status = 1;
	}
	for (size_t i = 0; i < np && !sh->status && !sh->quit; i++) {
		if (sh->echo)
			printf("%.*s\n", (int)pc[i].len, text + pc[i].off);
		if (pc[i].verb) {
			struct sh_reader br = {.text = text + pc[i].body_off, .len = pc[i].body_len};

			body_reader = &br;
			if (sh_verb(sh, pc[i].verb, text + pc[i].off, pc[i].len))
				sh->status = 1;
			continue;
		}
		char *s = alone(text, len, pc[i].off, pc[i].len);

		sh->status = sh_r4l(sh, s, len, !atomic, false);
		free(s);
	}
	if (atomic && sh->session) {
		if (sh->status) {
			r4_session_rollback(sh->session);
			fprintf(stderr, "r4sh: --atomic: nothing of the script was committed\n");
		} else if ((rc = r4_session_commit(sh->session))) {
			fprintf(stderr, "r4sh: commit: %s\n", r4_strerror(rc));
			sh->status = 1;
		}
		sh->session = NULL;
	}
	free(pc);
	return sh->status;
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
