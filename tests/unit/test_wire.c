/*
 * test_wire.c - the framed answer of the control file (parser/wire.c):
 * a run written and read back is the same run (values with any bytes,
 * paths, errors and their words, diagnostics at their positions), and every cut or
 * damaged answer is refused with -EPROTO, never half read.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "r4_lang.h"
#include "t.h"

static const char src[] = "/a <- #s3:x\ny; /b; /nope/c";

/* A real run on a fresh image: values (one unreadable: a directory) and a
 * run-time error. */
static struct r4_run *a_run(const char *img)
{
	struct r4_open_opts o = {.rw = true};
	struct r4_mkfs_opts m;
	struct r4_run_opts ro = {.name = "<t>", .per_statement = true,
				 .exec = {.read_objects = true}};
	struct r4_run *r = NULL;
	r4_db *db = NULL;

	r4_mkfs_defaults(&m);
	CHECK_RC(r4_mkfs(img, 16u << 20, &m));
	CHECK_RC(r4_open(img, &o, &db));
	CHECK_RC(r4_mkdir(db, "/b", 0755, 0, 0));
	CHECK(r4_run(db, src, sizeof(src) - 1, &ro, &r) == -ENOENT);
	r4_close(db);
	return r;
}

static char *diags_text(const struct r4_run *r)
{
	char *t = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&t, &n);

	r4_diag_print(r->diags, f);
	fclose(f);
	return t;
}

int main(void)
{
	char dir[128], img[320], *buf = NULL, *d1, *d2;
	size_t n = 0;
	struct r4_run *r, *back = NULL;
	FILE *f;

	snprintf(dir, sizeof(dir), "%s/r4wireXXXXXX", t_tmp());
	if (!mkdtemp(dir))
		return 1;
	snprintf(img, sizeof(img), "%s/a.img", dir);
	r = a_run(img);
	CHECK(r && r->nvalues == 2 && r4_diag_count(r->diags) == 1);
	CHECK(r && r->nvalues == 2 && r->values[1].err == -EISDIR && r->values[1].why &&
	      !strcmp(r->values[1].why, "cannot read '/b': Is a directory"));
	f = open_memstream(&buf, &n);
	CHECK_RC(r4_run_write(r, f));
	fclose(f);
	CHECK_RC(r4_run_read(buf, n, "<t>", src, sizeof(src) - 1, &back));
	CHECK(back && back->stage == r->stage && back->rc == r->rc && back->units == r->units);
	CHECK(back && back->nvalues == r->nvalues);
	for (size_t i = 0; back && i < r->nvalues && i < back->nvalues; i++) {
		const struct r4_run_value *a = &r->values[i], *b = &back->values[i];

		CHECK(a->off == b->off && a->len == b->len && a->err == b->err);
		CHECK(a->size == b->size && !memcmp(a->bytes, b->bytes, a->size));
		CHECK((!a->path && !b->path) || (a->path && b->path && !strcmp(a->path, b->path)));
		CHECK((!a->why && !b->why) || (a->why && b->why && !strcmp(a->why, b->why)));
	}
	d1 = diags_text(r);
	d2 = back ? diags_text(back) : strdup("");
	CHECK(!strcmp(d1, d2));
	CHECK(strstr(d2, "<t>:2:8: error: cannot read '/nope'") != NULL);
	free(d1);
	free(d2);
	r4_run_free(back);
	/* every cut is refused; so is every answer with one byte changed into
	 * a digit or a space, unless it still reads as a whole answer */
	for (size_t cut = 0; cut < n; cut++) {
		back = NULL;
		CHECK(r4_run_read(buf, cut, "<t>", src, sizeof(src) - 1, &back) == -EPROTO);
		CHECK(back == NULL);
	}
	for (size_t at = 0; at < n; at++) {
		char save = buf[at];

		for (const char *c = "9 -"; *c; c++) {
			int rc;

			buf[at] = *c;
			back = NULL;
			rc = r4_run_read(buf, n, "<t>", src, sizeof(src) - 1, &back);
			CHECK((rc == 0) == (back != NULL) && (rc == 0 || rc == -EPROTO));
			r4_run_free(back);
		}
		buf[at] = save;
	}
	free(buf);
	r4_run_free(r);
	if (!t_fail && t_rmdir(dir))
		return 1;
	return T_DONE();
}
