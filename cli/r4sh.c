/*
 * r4sh.c - r4sh's options, the image (or the r4fuse mount that holds it:
 * the engine's lock says who), and main: a terminal gets the interactive
 * shell, -c runs each command as one unit, -f SCRIPT (or a pipe on stdin)
 * runs a script, checked first, one unit per statement (--atomic: one for
 * all).
 *
 * Exit codes: 0 ok, 1 a run-time failure, 2 usage, 3 a lexical, syntax
 * or check error.
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "exit.h"
#include "sh.h"

static struct sh *the_sh;	/* for the SIGINT handler */

static void on_sigint(int sig)
{
	(void)sig;
	if (the_sh)
		the_sh->cancel = 1;
}

static int usage(FILE *f)
{
	fprintf(f,
		"usage: r4sh [OPTIONS] IMAGE\n"
		"  (no option, on a terminal)  the interactive shell; .help lists the verbs\n"
		"  -c CMD          run CMD as one unit (a verb or R4L); may repeat\n"
		"  -f SCRIPT       run a script ('-': stdin; a pipe on stdin does the same):\n"
		"                  checked whole first, then one unit per statement\n"
		"  --atomic        the whole script is one unit\n"
		"  --dry-run       check and explain the script; touch nothing\n"
		"  --as USER|UID[:GID[,GID...]]  act as this identity (access checks)\n"
		"  --json          one JSON object per statement value\n"
		"  --quiet         no values; --echo: print each entry before it runs\n"
		"  -v, --verbose   a verb's error shows the R4L the verb ran, too\n"
		"  --read-only     open beside a writer (no lock), change nothing\n"
		"  --partition N   the volume is in partition N of IMAGE (MBR or GPT)\n"
		"  -h, --help      this; --version: the version\n"
		"IMAGE: a file, a block device or an NBD URI (nbd://HOST[:PORT]/EXPORT,\n"
		"  nbd+unix:///EXPORT?socket=PATH).\n"
		"Exit: 0 ok, 1 run-time failure, 2 usage, 3 lexical/syntax/check error.\n");
	return R4_EXIT_USAGE;
}

/* Work on a live mount instead of an image. */
static int use_mount(struct sh *sh, char *mount)
{
	free(sh->image);
	free(sh->mount);
	sh->mount = mount;
	sh->image = strdup(mount);
	sh->rw = true;
	return 0;
}

/*
 * The image is in use (the engine's lock, r4_open said -EBUSY).  When the
 * holder is an r4fuse mount of it, work through the mount, as if
 * MOUNTPOINT had been given; otherwise say who holds it.
 */
static int busy(struct sh *sh, const char *image)
{
	struct r4_holder h;

	if (!r4_holder_find(image, &h) && h.mount[0] && sh_is_mount(h.mount)) {
		if (!sh->quiet)
			fprintf(stderr, "r4sh: %s: %s: working through the mount\n", image, h.what);
		return use_mount(sh, strdup(h.mount));
	}
	sh_say_busy("r4sh", image, "--read-only opens it anyway, without changing it");
	return -EBUSY;
}

int sh_open(struct sh *sh, const char *image, bool rw)
{
	struct r4_open_opts o = {.rw = rw, .partition = sh->partition, .log = sh_say_where,
				 .log_ctx = (void *)"r4sh"};
	int rc;

	if (sh_is_mount(image))
		return use_mount(sh, strdup(image));
	if ((rc = r4_open(image, &o, &sh->db))) {
		sh->db = NULL;
		if (rc == -EBUSY)
			return busy(sh, image);
		fprintf(stderr, "r4sh: %s: %s\n", image, r4_strerror(rc));
		return rc;
	}
	free(sh->image);
	sh->image = strdup(image);
	sh->rw = rw;
	return 0;
}

void sh_close(struct sh *sh)
{
	if (sh->session) {
		r4_session_rollback(sh->session);
		sh->session = NULL;
	}
	if (sh->db) {
		int rc = sh->rw ? r4_sync(sh->db) : 0;

		if (rc) {
			fprintf(stderr, "r4sh: %s: %s\n", sh->image, r4_strerror(rc));
			sh->status = R4_EXIT_FAIL;
		}
		r4_close(sh->db);
		sh->db = NULL;
	}
	free(sh->mount);
	sh->mount = NULL;
}

/* Interactive: the prompt, history, Ctrl-C and Ctrl-D. */
static void interactive(struct sh *sh)
{
	const char *h = getenv("R4SH_HISTORY"), *home = getenv("HOME");
	char *path = NULL;
	struct sh_reader r = {0};

	if (!h && home && asprintf(&path, "%s/.r4sh_history", home) >= 0)
		h = path;
	le_init(h, sh_complete);
	sh->interactive = true;
	sh->source = "<stdin>";
	printf("r4sh on %s%s: .help for the verbs, .quit (or Ctrl-D) to leave\n", sh->image,
	       sh->rw ? "" : " (read-only)");
	for (;;) {
		sh->status = 0;
		sh_run(sh, &r);
		if (sh->quit && !sh->session)
			break;
		if (sh->session) {
			/* Ctrl-D or .quit with a transaction open: ask first */
			char *a = le_readline("a transaction is open: discard it and leave? [y/N] ");

			if (a && (a[0] == 'y' || a[0] == 'Y')) {
				free(a);
				r4_session_rollback(sh->session);
				sh->session = NULL;
				break;
			}
			free(a);
			sh->quit = false;
			continue;
		}
		break;
	}
	putchar('\n');
	le_done();
	free(path);
	sh->status = 0;	/* errors were answered as they came */
}

int sh_main(int argc, char **argv)
{
	static const struct option lo[] = {
		{"atomic", no_argument, NULL, 'A'}, {"dry-run", no_argument, NULL, 'D'},
		{"as", required_argument, NULL, 'u'}, {"json", no_argument, NULL, 'j'},
		{"quiet", no_argument, NULL, 'q'}, {"echo", no_argument, NULL, 'e'},
		{"read-only", no_argument, NULL, 'r'}, {"help", no_argument, NULL, 'h'},
		{"version", no_argument, NULL, 'V'}, {"partition", required_argument, NULL, 'P'},
		{"verbose", no_argument, NULL, 'v'},
		{NULL, 0, NULL, 0},
	};
	struct sh sh = {.cwd = "/", .who = {.umask = 022}, .source = "<command>",
			.saved_stdout = -1};
	const char *script = NULL, *as = NULL;
	char **cmds = calloc((size_t)argc + 1, sizeof(*cmds));
	bool atomic = false, dry = false, ro = false;
	int c, ncmds = 0;

	while ((c = getopt_long(argc, argv, "c:f:hv", lo, NULL)) != -1) {
		switch (c) {
		case 'c': cmds[ncmds++] = optarg; break;
		case 'f': script = optarg; break;
		case 'A': atomic = true; break;
		case 'D': dry = true; break;
		case 'u': as = optarg; break;
		case 'j': sh.out = SH_JSON; break;
		case 'q': sh.quiet = true; break;
		case 'e': sh.echo = true; break;
		case 'v': sh.verbose = true; break;
		case 'r': ro = true; break;
		case 'P':
			if (sh_partition_number("r4sh", optarg, &sh.partition)) {
				free(cmds);
				return R4_EXIT_USAGE;
			}
			break;
		case 'h': free(cmds); usage(stdout); return R4_EXIT_OK;
		case 'V': free(cmds); printf("r4sh %s\n", R4_VERSION); return R4_EXIT_OK;
		default: free(cmds); return usage(stderr);
		}
	}
	if (optind != argc - 1 || (script && ncmds)) {
		free(cmds);
		return usage(stderr);
	}
	the_sh = sh_current = &sh;
	signal(SIGINT, on_sigint);
	if (!dry && sh_open(&sh, argv[optind], !ro)) {
		free(cmds);
		return R4_EXIT_FAIL;
	}
	if (!dry)
		sh.image = sh.image ? sh.image : strdup(argv[optind]);
	if (as) {
		char *a[2] = {".as", (char *)as};
		const struct sh_cmd *v = sh_find(".as", 3);

		if (v->fn(&sh, 2, a)) {
			sh_close(&sh);
			free(sh.image);
			free(cmds);
			return R4_EXIT_USAGE;
		}
	}
	if (ncmds) {
		for (int i = 0; i < ncmds && !sh.status; i++) {
			struct sh_reader r = {.text = cmds[i], .len = strlen(cmds[i])};

			sh_run(&sh, &r);
		}
	} else if (script || !isatty(0)) {
		struct sh_text t;

		if (!script)
			script = "-";
		sh.source = strcmp(script, "-") ? script : "<stdin>";
		int rc = sh_text_read(script, true, &t);

		if (rc) {
			fprintf(stderr, "r4sh: %s: %s\n", script, strerror(-rc));
			sh.status = R4_EXIT_FAIL;
		} else {
			sh_script(&sh, &t, atomic, dry);
			sh_text_free(&t);
		}
	} else {
		interactive(&sh);
	}
	sh_close(&sh);
	free(sh.image);
	free(cmds);
	return sh.status;
}
