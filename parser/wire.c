/*
 * wire.c - a run's outcome as bytes and back: what the FUSE control file
 * answers a client that asks for it framed (docs/r4fuse.md), so that
 * r4sh on a mount gets the same struct r4_run as on an image.
 *
 *   r4-answer 1 STAGE RC UNITS NVALUES NDIAGS LF
 *   value OFF LEN ERR PATHLEN SIZE WHYLEN LF  PATH-BYTES VALUE-BYTES WHY-BYTES LF
 *                                                                   (NVALUES times)
 *   diag SEV OFF LEN MSGLEN LF  MSG-BYTES LF                       (NDIAGS times)
 *
 * Numbers are decimal (RC and ERR negative errnos); payloads are counted,
 * so any byte may be in them.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "diag.h"
#include "r4_lang.h"

int r4_run_write(const struct r4_run *r, FILE *f)
{
	size_t nd = r4_diag_count(r->diags);

	fprintf(f, "r4-answer 1 %d %d %u %zu %zu\n", (int)r->stage, r->rc, r->units, r->nvalues,
		nd);
	for (size_t i = 0; i < r->nvalues; i++) {
		const struct r4_run_value *v = &r->values[i];
		size_t pl = v->path ? strlen(v->path) : 0, wl = v->why ? strlen(v->why) : 0;

		fprintf(f, "value %" PRIu32 " %" PRIu32 " %d %zu %zu %zu\n", v->off, v->len, v->err,
			pl, v->size, wl);
		fwrite(v->path ? v->path : "", 1, pl, f);
		fwrite(v->bytes ? v->bytes : "", 1, v->size, f);
		fwrite(v->why ? v->why : "", 1, wl, f);
		fputc('\n', f);
	}
	for (size_t i = 0; i < nd; i++) {
		const struct r4_diag *d = r4_diag_get(r->diags, i);

		fprintf(f, "diag %d %" PRIu32 " %" PRIu32 " %zu\n%s\n", (int)d->sev, d->loc.off,
			d->loc.len, strlen(d->msg), d->msg);
	}
	return ferror(f) ? -EIO : 0;
}

/* A cursor over the answer. */
struct rd {
	const char *p, *end;
};

/* The header line starting with word: its numbers into v[0..n). */
static int header(struct rd *rd, const char *word, long long *v, int n)
{
	const char *nl = memchr(rd->p, '\n', (size_t)(rd->end - rd->p));
	size_t wl = strlen(word);
	char line[256], *s, *e;

	if (!nl || (size_t)(nl - rd->p) >= sizeof(line) || strncmp(rd->p, word, wl) ||
	    rd->p[wl] != ' ')
		return -EPROTO;
	memcpy(line, rd->p + wl, (size_t)(nl - rd->p) - wl);
	line[(nl - rd->p) - (ptrdiff_t)wl] = 0;
	s = line;
	for (int i = 0; i < n; i++) {
		v[i] = strtoll(s, &e, 10);
		if (e == s)
			return -EPROTO;
		s = e;
	}
	if (*s)
		return -EPROTO;
	rd->p = nl + 1;
	return 0;
}

/* n payload bytes, then LF. */
static int payload(struct rd *rd, size_t n, const char **at)
{
	if ((size_t)(rd->end - rd->p) < n + 1 || rd->p[n] != '\n')
		return -EPROTO;
	*at = rd->p;
	rd->p += n + 1;
	return 0;
}

static int read_values(struct rd *rd, struct r4_run *r, size_t n)
{
	if (n && !(r->values = r4_calloc(n, sizeof(*r->values))))
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		struct r4_run_value *v = &r->values[i];
		long long h[6];
		const char *at;
		int rc;

		if ((rc = header(rd, "value", h, 6)))
			return rc;
		if (h[0] < 0 || h[1] < 0 || h[3] < 0 || h[4] < 0 || h[5] < 0 || h[0] > UINT32_MAX ||
		    h[1] > UINT32_MAX || h[3] > LLONG_MAX / 4 || h[4] > LLONG_MAX / 4 ||
		    h[5] > LLONG_MAX / 4)
			return -EPROTO;
		if ((rc = payload(rd, (size_t)(h[3] + h[4] + h[5]), &at)))
			return rc;
		v->off = (uint32_t)h[0];
		v->len = (uint32_t)h[1];
		v->err = (int)h[2];
		v->size = (size_t)h[4];
		if ((h[3] && !(v->path = r4_memdup(at, (size_t)h[3]))) ||
		    !(v->bytes = r4_memdup(at + h[3], (size_t)h[4])) ||
		    (h[5] && !(v->why = r4_memdup(at + h[3] + h[4], (size_t)h[5]))))
			return -ENOMEM;
		r->nvalues++;
	}
	return 0;
}

int r4_run_read(const char *text, size_t n, const char *name, const char *src, size_t len,
		struct r4_run **out)
{
	struct rd rd = {text, text + n};
	struct r4_run *r;
	long long h[5];
	char *copy;
	int rc;

	*out = NULL;
	if (n < 12 || strncmp(text, "r4-answer 1 ", 12))
		return -EPROTO;
	rd.p += 10;
	if ((rc = header(&rd, "1", h, 5)))
		return rc;
	if (h[0] < R4_RUN_OK || h[0] > R4_RUN_RUNTIME || h[3] < 0 || h[4] < 0)
		return -EPROTO;
	if (!(r = r4_calloc(1, sizeof(*r))) || !(copy = r4_malloc(len + 1))) {
		r4_free(r);
		return -ENOMEM;
	}
	memcpy(copy, src, len);
	copy[len] = 0;
	if (!(r->diags = r4_diag_new(name ? name : "<command>", copy, len))) {
		r4_free(copy);
		r4_free(r);
		return -ENOMEM;
	}
	r4_diag_own_source(r->diags, copy);
	r->stage = (enum r4_run_stage)h[0];
	r->rc = (int)h[1];
	r->units = (unsigned)h[2];
	rc = read_values(&rd, r, (size_t)h[3]);
	for (long long i = 0; !rc && i < h[4]; i++) {
		long long d[4];
		const char *msg;

		if (!(rc = header(&rd, "diag", d, 4)) && d[3] >= 0 &&
		    !(rc = payload(&rd, (size_t)d[3], &msg))) {
			if (d[1] < 0 || d[2] < 0 || (size_t)(d[1] + d[2]) > len ||
			    (d[0] != R4_DIAG_ERROR && d[0] != R4_DIAG_NOTE))
				rc = -EPROTO;	/* positions must fall in the text sent */
			else
				rc = r4_diag_add(r->diags, (enum r4_diag_sev)d[0],
						 (r4_loc){(uint32_t)d[1], (uint32_t)d[2]}, "%.*s",
						 (int)d[3], msg);
		}
	}
	if (rc) {
		r4_run_free(r);
		return rc;
	}
	*out = r;
	return 0;
}

static int write_all(int fd, const char *buf, size_t n)
{
	while (n) {
		ssize_t w = write(fd, buf, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return w < 0 ? -errno : -EIO;
		buf += w;
		n -= (size_t)w;
	}
	return 0;
}

int r4_wire_ask(const char *ctl, const char *head, size_t hn, const char *src, size_t len,
		char **ans, size_t *an)
{
	char buf[65536];
	ssize_t r = 0;
	FILE *a;
	int fd, rc;

	*ans = NULL;
	*an = 0;
	if ((fd = open(ctl, O_RDWR | O_CLOEXEC)) < 0)
		return -errno;
	if (!(a = open_memstream(ans, an))) {
		close(fd);
		return -ENOMEM;
	}
	rc = write_all(fd, head, hn);
	if (!rc)
		rc = write_all(fd, src, len);
	/* reading runs the command; the answer is read to its end */
	while (!rc && ((r = read(fd, buf, sizeof(buf))) > 0 || (r < 0 && errno == EINTR)))
		if (r > 0)
			fwrite(buf, 1, (size_t)r, a);
	if (!rc && r < 0)
		rc = -errno;
	if (fclose(a) && !rc)
		rc = -ENOMEM;
	close(fd);
	if (rc) {
		free(*ans);
		*ans = NULL;
		*an = 0;
	}
	return rc;
}
