/* exit.h - the exit codes of every r4 program (STYLE.md section 3). */
#ifndef R4_EXIT_H
#define R4_EXIT_H

enum {
	R4_EXIT_OK = 0,
	R4_EXIT_FAIL = 1,	/* a run-time error */
	R4_EXIT_USAGE = 2,
	R4_EXIT_SYNTAX = 3,	/* lexical, syntax or check error (the language) */
};

#endif
