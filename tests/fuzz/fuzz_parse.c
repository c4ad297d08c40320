/*
 * fuzz_parse.c - libFuzzer target: lex, parse and check any bytes
 * (r4_parse, r4_compile), dump and explain what compiles, print what does
 * not.  Neither may crash, leak or trip
 * a sanitizer.  Seeds: the inputs of the corpus tests/lang; regressions:
 * tests/fuzz/regress (replayed by `make check`).
 */
#include <stdint.h>
#include <stdio.h>

#include "r4_lang.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	FILE *null = fopen("/dev/null", "w");
	r4_diags *d = r4_diag_new("<fuzz>", (const char *)data, size);
	r4_ast *ast = NULL;
	struct r4_plan *plan = NULL;
	struct r4_compile_opts co = {.per_statement = size & 1};
	struct r4_lex_state st;

	if (d && null) {
		if (!r4_parse((const char *)data, size, d, &ast)) {
			r4_ast_dump(ast, null);
			if (!r4_compile(ast, &co, d, &plan))
				r4_plan_explain(plan, (const char *)data, size, null);
		}
		r4_diag_print(d, null);
		r4_lex_state((const char *)data, size, &st);
	}
	r4_plan_free(plan);
	r4_ast_free(ast);
	r4_diag_free(d);
	if (null)
		fclose(null);
	return 0;
}
