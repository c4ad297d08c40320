/*
 * sh.h - r4sh, the transactional shell and batch runner (cli/shell.c: the
 * one input loop; cli/cmds.c: the verbs, as a table; cli/lineedit.c:
 * libedit behind three calls; cli/r4sh.c: options and the image).
 */
#ifndef R4_SH_H
#define R4_SH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include <jansson.h>

#include "r4_lang.h"

/* .mode: how values and listings print (docs/r4sh.md "Modes") */
enum sh_out { SH_HUMAN, SH_JSON, SH_LIST, SH_LINE, SH_CSV, SH_BOX };

enum { SH_MAXARGS = 64 };		/* words of a verb line */

/* The verb line running (cmds.c): its errors name the verb and point
 * into the line as the user wrote it (sh_verb_error). */
struct sh_line {
	const char *verb;		/* NULL: no verb is running */
	const char *text;		/* the line */
	size_t len;
	unsigned lineno;		/* its line in SOURCE */
	size_t at[SH_MAXARGS], n[SH_MAXARGS];	/* each word's place in text */
	int argc;
	int arg;			/* the word the next error is about (0: the verb) */
	struct sh_blame {		/* or: an error at R4L offset off or later */
		size_t off;		/* of the command the verb built is about */
		int arg;		/* word arg */
	} map[SH_MAXARGS];
	int nmap;
};

struct sh {
	r4_db *db;
	char *image;			/* its path */
	char *mount;			/* or a live r4fuse mount (remote.c), db NULL */
	unsigned partition;		/* --partition N: the volume is in partition N */
	bool rw;			/* (the engine holds the image's lock while db is
					   open read-write) */
	enum sh_out out;
	bool echo, timer, quiet, interactive;
	bool verbose;			/* -v: a verb's errors show the R4L it ran */
	struct sh_line line;		/* the verb running */
	char cwd[4096];			/* the current directory in the image */
	struct r4_ident who;		/* the acting identity */
	uint32_t groups[64];
	char who_name[64];		/* as given to --as / .as, "" for root */
	r4_session *session;		/* an open begin ... commit */
	volatile int cancel;		/* Ctrl-C while a command runs */
	int status;			/* exit code so far: 0, 1 (run time), 3 (check) */
	bool quit;
	const char *source;		/* SOURCE of diagnostics: the script, "<command>", "<stdin>" */
	unsigned stmt;			/* statements answered (JSON numbering) */
	json_t *rows;			/* a listing's records (SH_BOX: until its end) */
	bool header;			/* SH_CSV: the listing's header is out */
	int saved_stdout;		/* .output/.once: the real stdout, or -1 */
	int once;			/* .once: entries until stdout comes back */
	unsigned done;			/* R4L units of the running script committed so far */
};

/* SH_IMAGE: needs an image or a mount; SH_LOCAL: the image itself, not a
 * mount; SH_RAW: gets the rest of the line unsplit (argv[1]) */
enum { SH_IMAGE = 1 << 0, SH_TXN_OK = 1 << 1, SH_RAW = 1 << 2, SH_LOCAL = 1 << 3 };

struct sh_cmd {
	const char *name;
	int min, max;			/* arguments (max -1: any) */
	unsigned flags;			/* SH_* */
	int (*fn)(struct sh *sh, int argc, char **argv);
	const char *usage, *help;
};

extern const struct sh_cmd sh_cmds[];
/* The verb spelled name[0..len), or NULL. */
const struct sh_cmd *sh_find(const char *name, size_t len);
/* Is this line a verb (its first word names one, and no assignment
 * operator follows it)? */
const struct sh_cmd *sh_verb_of(const char *line, size_t len);
/* Run one verb line, line lineno of SOURCE: 0 or -errno (reported
 * already). */
int sh_verb(struct sh *sh, const struct sh_cmd *c, const char *line, size_t len,
	    unsigned lineno);
/*
 * An error (-errno rc) of the verb running, in the user's words:
 * "SOURCE:L:C: error: VERB: MESSAGE", then the verb's line with a caret
 * under word arg (its operand; 0: the verb); in JSON mode also an object
 * on stdout.  Outside a verb: "r4sh: MESSAGE".
 */
void sh_verb_error(struct sh *sh, int arg, int rc, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/*
 * JSON output (jansson; docs/r4sh.md "JSON"): obj[key] = p[0, n) as a
 * string when the bytes are UTF-8 (without NUL), else obj[key_base64] =
 * their base64; an error as "error" (its text) and "errno" (a number);
 * obj printed as one line, then freed.
 */
void sh_json_bytes(json_t *obj, const char *key, const void *p, size_t n);
void sh_json_error(json_t *obj, const char *msg, int rc);
void sh_json_line(json_t *obj);
/*
 * One record of a listing (ls, stat, tree, pwd, cat) outside the human
 * mode, taken over: printed as the mode says (json: an object a line;
 * list: values joined by '|'; line: "key = value" lines; csv: a header,
 * then rows; box: a table once the listing ends).  sh_records_end ends a
 * listing (sh_verb calls it after each verb).
 */
void sh_record(struct sh *sh, json_t *rec);
void sh_records_end(struct sh *sh);
/* After each entry: a .once ends with the entry after it. */
void sh_entry_done(struct sh *sh);
/* stdout to path (NULL: back to the real one): 0, or -errno (said). */
int sh_output(struct sh *sh, const char *path);
/* A directory's names but "." and "..", as r4_readdir or sh_readdir hand
 * them to sh_names_add (its ctx: a struct sh_names); sorted bytewise by
 * sh_names_sort. */
struct sh_names {
	char **v;
	size_t n, cap;
};
int sh_names_add(void *ctx, const char *name, size_t len, uint64_t ino, uint32_t type);
void sh_names_sort(struct sh_names *l);
void sh_names_free(struct sh_names *l);
/* path (relative to the current directory) as absolute and lexically
 * clean ("." and ".." folded), malloc'd. */
char *sh_absolute(struct sh *sh, const char *path);
/* Why value v was not read, after its path: its words when they name
 * something else (an invert's part), else the errno's. */
const char *sh_unread(const struct r4_run_value *v);
/* The letter ls -l gives a file of mode's type ('?': no type it knows). */
char sh_type_char(uint32_t mode);
/* One node of r4_dump_tree as .tree and `r4 dump` print it; ctx points
 * to the tree's height (unsigned). */
int sh_print_node(void *ctx, const struct r4_dump_node *n);
/* The text of the rest of a `write PATH` entry, read from the input. */
int sh_read_body(struct sh *sh, char **body, size_t *len);

/*
 * Run R4L src as one unit (per_statement: one per statement; the script's
 * SOURCE and positions), print its values and diagnostics.  dry: check and
 * explain only.  Returns 0, 1 or 3 (the exit code of this command).
 */
int sh_r4l(struct sh *sh, const char *src, size_t len, bool per_statement, bool dry);
/* Run R4L built by a verb, quietly: its values go to vals (may be NULL). */
int sh_r4l_quiet(struct sh *sh, const char *src, size_t len, struct r4_run **out);
/* An R4L string literal of bytes: #sN:bytes. */
char *sh_literal(const void *bytes, size_t len);

/* .dump [PATH] (dump.c): an R4L script that makes the subtree again, on
 * stdout; 0, or the first -errno (each said on stderr as it came). */
int sh_dump(struct sh *sh, int argc, char **argv);

/* What the shell works on (remote.c): the image, or a mount, where R4L
 * goes through the control file and reads are POSIX calls. */
bool sh_is_mount(const char *dir);		/* an r4fuse mount point? */
/* Write head and src to mount's control file, its answer in *ans
 * (malloc'd, *an bytes), or -errno (the open's, the write's, the read's). */
int sh_mount_ask(const char *mount, const char *head, size_t hn, const char *src, size_t len,
		 char **ans, size_t *an);
/* "PROG: IMAGE: in use by r4fuse (pid 123), mounted at /mnt[; HINT]", on
 * stderr: an -EBUSY open, in r4_holder_find's words. */
void sh_say_busy(const char *prog, const char *image, const char *hint);
/* --partition's N (1 or more) in *out; else says why on stderr, -1. */
int sh_partition_number(const char *prog, const char *arg, unsigned *out);
/* An r4_open_opts log (ctx: the program's name) that says, on stderr, what
 * the engine logs about where the volume is (its partition, its NBD
 * server) and not the damage it finds, which the caller reports. */
void sh_say_where(void *ctx, int level, const char *msg);
int sh_remote_run(struct sh *sh, const char *src, size_t len, const struct r4_run_opts *ro,
		  struct r4_run **out);
int sh_stat(struct sh *sh, const char *path, struct r4_stat *st);
int sh_readlink(struct sh *sh, const char *path, char *buf, size_t n, size_t *len);
/* Every entry of the directory, "." and ".." included. */
int sh_readdir(struct sh *sh, const char *path, r4_dirent_fn fn, void *ctx);
int sh_rename(struct sh *sh, const char *from, const char *to);	/* never replaces */

/* The input: a line at a time. */
struct sh_reader {
	FILE *f;			/* NULL: the line editor */
	const char *text;		/* or a string (-c), read once */
	size_t len, pos;
	unsigned line;			/* lines read so far */
};
int sh_run(struct sh *sh, struct sh_reader *r);
/* A script's text: a regular file is mapped, so that a long script costs
 * no memory (sh_script lets go of the pages it has passed); anything else
 * is read whole. */
struct sh_text {
	char *text;
	size_t len;
	bool mapped;
};
/* path (with dash, "-" is stdin): 0, or -errno (nothing to free). */
int sh_text_read(const char *path, bool dash, struct sh_text *t);
void sh_text_free(struct sh_text *t);
/* A whole script: checked first, then run (-f SCRIPT, piped stdin). */
int sh_script(struct sh *sh, const struct sh_text *t, bool atomic, bool dry);

/* The whole file at path (with dash, "-" is stdin) into *text (malloc'd,
 * *len bytes): 0, or -errno (nothing to free). */
int sh_read_file(const char *path, bool dash, char **text, size_t *len);

/* Line editing (lineedit.c): a line without its LF, or NULL at the end.
 * Completion asks fn for the candidates of the word text, which spans
 * [start, end) of line (malloc'd strings, whole words). */
typedef void (*le_candidates_fn)(const char *line, int start, int end, const char *text,
				 char ***out, size_t *n);
void le_init(const char *history, le_candidates_fn fn);
char *le_readline(const char *prompt);
void le_add(const char *entry);
void le_done(void);

/* Tab completion (cmds.c): verbs, names in the image, pseudo names,
 * parameter names inside ..new/( and its kin. */
void sh_complete(const char *line, int start, int end, const char *text, char ***out,
		 size_t *n);
extern struct sh *sh_current;

/*
 * Trees between the host and an image (copy.c): r4 import, r4 export
 * (argv[0] is the subcommand; R4_EXIT_*, or -EINVAL for a usage error,
 * which the caller answers with its usage), and the import of dir into
 * the new volume at image that r4 mkfs -d makes (0 or -errno, said).
 * base: the options every open starts from (the logger, the partition);
 * import makes its open read-write.
 */
int cp_import(int argc, char **argv, const struct r4_open_opts *base);
int cp_export(int argc, char **argv, const struct r4_open_opts *base);
int cp_mkfs_fill(const char *image, const char *dir, const struct r4_open_opts *base);

int sh_main(int argc, char **argv);
/* Open (or reopen) the image, locked when read-write. */
int sh_open(struct sh *sh, const char *image, bool rw);
void sh_close(struct sh *sh);

#endif
