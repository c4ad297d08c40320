/*
 * salvage.c - r4 export --salvage [--list] IMAGE [PATH] [DEST]
 * (docs/salvage.md): what a damaged volume still holds, listed, or copied
 * to a host directory by export's writer (copy.h), then the report of
 * what could not be read.
 *
 * The engine (r4.h r4_salvage_*) decides everything: what is found, under
 * which name, which bytes are data, holes or lost.  This file only hands
 * it on: a hole and a lost range both stay holes in the copy (the report
 * has the lost ones), and the bytes of a data block that does not read
 * come as zeros (the report has those too).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "copy.h"
#include "exit.h"
#include "sh.h"

static int salv_seek(void *ctx, const struct cp_obj *o, uint64_t off, uint64_t *data,
		     uint64_t *end)
{
	enum r4_salvage_kind kind;
	int rc;

	for (; !(rc = r4_salvage_segment(ctx, o->st.ino, off, &kind, end)); off = *end)
		if (kind == R4_SALVAGE_DATA) {
			*data = off;
			return 0;
		}
	return rc;			/* -ENXIO at the size */
}

static int salv_read(void *ctx, const struct cp_obj *o, uint64_t off, void *buf, size_t len,
		     size_t *got)
{
	int rc = r4_salvage_read(ctx, o->st.ino, off, buf, len);

	*got = len;
	return rc == -EIO ? 0 : rc;	/* (zeros for what did not read: reported) */
}

static int salv_xattrs(void *ctx, const struct cp_obj *o, cp_xattr_fn *fn, void *fn_ctx)
{
	return r4_salvage_xattrs(ctx, o->st.ino, fn, fn_ctx);
}

struct run {
	struct cp *c;
	r4_salvage *s;
	const char *top, *dest;		/* PATH; DEST (NULL: --list) */
	bool said;			/* DEST could not be made (said) */
};

static void list_one(const struct r4_salvage_ent *e)
{
	printf("%c %04o %5u %5u %10llu %s", sh_type_char(e->st.mode), e->st.mode & 07777,
	       e->st.uid, e->st.gid, (unsigned long long)e->st.size, e->path);
	if (e->link)
		printf(" => %s", e->link);
	else if (e->target)
		printf(" -> %.*s", (int)e->target_len, e->target);
	printf("%s\n", e->flags & R4_SALVAGE_GUESSED ? "  (no stat data)" : "");
}

static int each(void *ctx, const struct r4_salvage_ent *e)
{
	struct run *r = ctx;
	struct cp_obj o = {.path = e->path, .st = e->st, .again = e->link != NULL};
	char *target = NULL;
	int rc;

	if (!r->dest) {
		list_one(e);
		return 0;
	}
	/* the walk gives PATH first: where it goes */
	if (!r->c->dest && (rc = cp_dest(r->c, r->top, e->st.mode, r->dest))) {
		r->said = true;
		return rc;
	}
	if (e->target && !(o.target = target = strndup(e->target, e->target_len)))
		return -ENOMEM;
	rc = cp_put(r->c, &o);
	free(target);
	return rc == -ENOMEM ? rc : 0;		/* (the others are said, counted) */
}

int cp_salvage(struct cp *c, const char *image, const char *path, const char *dest,
	       const struct r4_open_opts *base)
{
	struct r4_salvage_opts so = {.partition = base->partition, .log = base->log,
				     .log_ctx = base->log_ctx};
	struct cp_src src = {salv_seek, salv_read, salv_xattrs, NULL};
	struct run r = {c, NULL, NULL, dest, false};
	struct r4_salvage_info info;
	struct r4_buf rep = {0};
	char *top;
	int rc;

	if (!(top = strdup(path)))
		return R4_EXIT_FAIL;
	for (size_t n = strlen(top); n > 1 && top[n - 1] == '/'; n--)
		top[n - 1] = 0;		/* "/a/" is "/a" */
	r.top = top;
	if ((rc = r4_salvage_open(image, &so, &r.s))) {
		fprintf(stderr, "r4: salvage: cannot open '%s': %s\n", image, r4_strerror(rc));
		free(top);
		return R4_EXIT_FAIL;
	}
	src.ctx = r.s;
	c->src = &src;
	rc = r4_salvage_walk(r.s, top, each, &r);
	cp_done(c);
	if (rc && !r.said)
		fprintf(stderr, "r4: salvage '%s': %s\n", top, r4_strerror(rc));
	else if ((rc = r4_salvage_report(r.s, &rep)) == 0 && rep.len)
		fwrite(rep.p, 1, rep.len, stderr);
	r4_salvage_info(r.s, &info);
	if (!rc && dest) {
		const char *end = rep.len ? "some of the volume could not be read (above)"
					  : "nothing lost";
		char tail[128];

		if (info.jnl_tx)
			snprintf(tail, sizeof(tail), "%u committed transaction%s read from the "
				 "journal; %s", info.jnl_tx, info.jnl_tx == 1 ? "" : "s", end);
		else
			snprintf(tail, sizeof(tail), "%s", end);
		cp_summary(c, tail);
	}
	if (!rc && rep.len)
		rc = -EIO;
	r4_buf_free(&rep);
	r4_salvage_close(r.s);
	cp_end(c);
	free(top);
	return rc || c->failed ? R4_EXIT_FAIL : R4_EXIT_OK;
}
