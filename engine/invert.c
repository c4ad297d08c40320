/*
 * invert.c - the text of an invert (LANGUAGE.md section 6.5): parsing a
 * definition into parts, and quoting bytes for the canonical text.
 *
 *	composition = part { "+" part } ;
 *	part        = path | STRING | "(" path "<-" STRING ")" ;
 *
 * Empty text (white space only) is no parts.  A path is '/' and the bytes
 * up to white space, '+', '(', ')', '"' or "<-"; a STRING is section 2.4's
 * quoted form.  What the parts mean (files to read, files to write first)
 * is pseudo.c's.
 */
#include <stdio.h>

#include "obj.h"

#define MAX_PARTS 256

void r4_invert_free(struct r4_part *v, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		r4_free(v[i].path);
		r4_free(v[i].text);
	}
	r4_free(v);
}

struct scan {
	const uint8_t *begin, *p, *end;
	char *why;
	size_t wn;
};

static int bad(struct scan *s, const char *what)
{
	snprintf(s->why, s->wn, "%s at byte %zu (an invert is paths and \"strings\" joined by "
		 "'+', a part may be (PATH <- \"text\"))", what, (size_t)(s->p - s->begin));
	return -EINVAL;
}

static void skip_ws(struct scan *s)
{
	while (s->p < s->end && (*s->p == ' ' || *s->p == '\t' || *s->p == '\n' || *s->p == '\r'))
		s->p++;
}

static bool at_arrow(const struct scan *s)
{
	return s->end - s->p >= 2 && s->p[0] == '<' && s->p[1] == '-';
}

static int hex(int c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10
	       : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

static int scan_string(struct scan *s, uint8_t **out, size_t *len)
{
	const uint8_t *q = ++s->p;
	uint8_t *t;
	size_t n = 0;

	/* the bytes are never more than the quoted text */
	while (q < s->end && *q != '"')
		q += *q == '\\' && q + 1 < s->end ? 2 : 1;
	if (q >= s->end)
		return bad(s, "an unterminated string");
	if (!(t = r4_malloc((size_t)(q - s->p) + 1)))
		return -ENOMEM;
	while (*s->p != '"') {
		uint8_t c = *s->p++;

		if (c == '\\') {
			int h1, h2;

			switch (c = *s->p++) {
			case '\\': case '"': break;
			case 'n': c = '\n'; break;
			case 't': c = '\t'; break;
			case 'r': c = '\r'; break;
			case '0':
				c = 0;
				if (*s->p >= '0' && *s->p <= '9')
					goto escape;
				break;
			case 'x':
				if (s->end - s->p < 2 || (h1 = hex(s->p[0])) < 0 || (h2 = hex(s->p[1])) < 0)
					goto escape;
				c = (uint8_t)(h1 << 4 | h2);
				s->p += 2;
				break;
			default:
				goto escape;
			}
		} else if (c == 0) {
			r4_free(t);
			return bad(s, "a NUL byte in a string");
		}
		t[n++] = c;
	}
	s->p++;
	*out = t;
	*len = n;
	return 0;
escape:
	r4_free(t);
	return bad(s, "an unknown escape");
}

static int scan_path(struct scan *s, char **out)
{
	const uint8_t *b = s->p;

	if (s->p >= s->end || *s->p != '/')
		return bad(s, "a part that is not an absolute path or a string");
	while (s->p < s->end && !strchr(" \t\n\r+()\"", *s->p) && !at_arrow(s)) {
		if (!*s->p)
			return bad(s, "a NUL byte in a path");
		s->p++;
	}
	if (s->p - b > 4096)
		return bad(s, "a path over 4096 bytes");
	return (*out = r4_memdup(b, (size_t)(s->p - b))) ? 0 : -ENOMEM;
}

static int scan_part(struct scan *s, struct r4_part *part)
{
	int rc;

	skip_ws(s);
	if (s->p < s->end && *s->p == '"')
		return scan_string(s, &part->text, &part->len);
	if (s->p >= s->end || *s->p != '(')
		return scan_path(s, &part->path);
	s->p++;
	skip_ws(s);
	if ((rc = scan_path(s, &part->path)))
		return rc;
	skip_ws(s);
	if (!at_arrow(s))
		return bad(s, "'<-' missing after a part's path");
	s->p += 2;
	skip_ws(s);
	if (s->p >= s->end || *s->p != '"')
		return bad(s, "a string missing after '<-'");
	if ((rc = scan_string(s, &part->text, &part->len)))
		return rc;
	skip_ws(s);
	if (s->p >= s->end || *s->p != ')')
		return bad(s, "')' missing");
	s->p++;
	return 0;
}

int r4_invert_parse(const uint8_t *p, size_t n, struct r4_part **parts, size_t *np, char *why,
		    size_t wn)
{
	struct scan s = {p, p, p + n, why, wn};
	struct r4_part *v = NULL;
	size_t k = 0, cap = 0;
	int rc = 0;

	why[0] = 0;
	skip_ws(&s);
	while (s.p < s.end) {
		if (k == MAX_PARTS) {
			rc = bad(&s, "more than 256 parts");
			break;
		}
		if ((rc = r4_grow(&v, &cap, k + 1, sizeof(*v), 4)))
			break;
		memset(&v[k], 0, sizeof(v[k]));
		if ((rc = scan_part(&s, &v[k++])))
			break;
		skip_ws(&s);
		if (s.p == s.end)
			break;
		if (*s.p != '+') {
			rc = bad(&s, "'+' expected");
			break;
		}
		s.p++;
		skip_ws(&s);
		if (s.p == s.end)
			rc = bad(&s, "a part missing after '+'");
	}
	if (rc) {
		r4_invert_free(v, k);
		return rc;
	}
	*parts = v;
	*np = k;
	return 0;
}

