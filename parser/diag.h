/*
 * diag.h - adding diagnostics, for the parser's own files (hosts only read
 * and print them, through r4_lang.h).
 */
#ifndef R4_DIAG_H
#define R4_DIAG_H

#include <stdarg.h>

#include "r4_lang.h"

/* 0 or -ENOMEM. */
int r4_diag_add(r4_diags *d, enum r4_diag_sev sev, r4_loc loc, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
int r4_diag_addv(r4_diags *d, enum r4_diag_sev sev, r4_loc loc, const char *fmt, va_list ap)
	__attribute__((format(printf, 4, 0)));

/* From now on d owns src (the text it was made with) and frees it. */
void r4_diag_own_source(r4_diags *d, char *src);
/* The text d was made with. */
const char *r4_diag_text(const r4_diags *d);

#endif
