/*
 * lineedit.c - line editing for r4sh behind four calls: libedit's
 * readline interface, with a history file and completion of verbs, paths
 * and pseudo names (the image's names come from the shell, cmds.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <editline/readline.h>

#include "sh.h"

static char *history_path;
static le_candidates_fn candidates;
static char **cands;
static size_t ncands;

static char *next_candidate(const char *text, int state)
{
	static size_t i;

	(void)text;
	if (!state)
		i = 0;
	return i < ncands ? strdup(cands[i++]) : NULL;
}

static char **complete(const char *text, int start, int end)
{
	for (size_t i = 0; i < ncands; i++)
		free(cands[i]);
	free(cands);
	cands = NULL;
	ncands = 0;
	candidates(rl_line_buffer, start, end, text, &cands, &ncands);
	rl_attempted_completion_over = 1;	/* no file names of the host */
	if (!ncands)
		return NULL;
	/* a directory goes on with '/', a whole name with a space */
	rl_completion_append_character = ncands == 1 && cands[0][strlen(cands[0]) - 1] == '/'
					 ? '\0' : ' ';
	return rl_completion_matches(text, next_candidate);
}

void le_init(const char *history, le_candidates_fn fn)
{
	rl_readline_name = "r4sh";
	/* the terminal's own stream: .output moves stdout, not the prompt */
	int fd = dup(STDOUT_FILENO);

	if (fd >= 0 && !(rl_outstream = fdopen(fd, "w")))
		close(fd);
	candidates = fn;
	rl_attempted_completion_function = complete;
	/* words break at spaces and R4L's brackets and operators, not at '/' */
	rl_basic_word_break_characters = " \t\n\"()[],;<>=";
	using_history();
	stifle_history(1000);
	if (history && *history) {
		history_path = strdup(history);
		read_history(history_path);
	}
}

char *le_readline(const char *prompt)
{
	return readline(prompt);
}

void le_add(const char *entry)
{
	if (entry && *entry)
		add_history(entry);
}

void le_done(void)
{
	for (size_t i = 0; i < ncands; i++)
		free(cands[i]);
	free(cands);
	cands = NULL;
	ncands = 0;
	if (history_path) {
		write_history(history_path);
		free(history_path);
		history_path = NULL;
	}
}
