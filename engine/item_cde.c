/*
 * item_cde.c - the cde40 codec: compound directory item <-> r4_dirent[].
 *
 *   le16 count | count x (de_id[24] le16 off) | count x (obj_key_id[24] [name NUL])
 *
 * (progs plugin/item/cde40/cde40.[ch], kernel plugin/item/cde.c,
 * kassign.c build_obj_key_id / build_de_id_by_key.)  de_id is el1..el3 of
 * the entry key, whose el0 is the item key's; obj_key_id is el0..el2 of the
 * target's stat-data key copied as stored (el0 keeps the type nibble 1).
 * A unit stores its name iff its key is hashed (R4_CDE_HASHED in the
 * ordering, set by key building for names over 23 bytes): progs sizes a
 * unit by that bit, not by the name.
 *
 * We accept only packed items: the first body right after the headers and
 * each unit exactly as long as its contents, which is what progs and the
 * kernel write, and what makes encode(decode(b)) == b.  Hashing names and
 * packing short names into keys belong to key.c; inserting, cutting and
 * merging units to the tree layer, which uses r4_item_cde_unit_size.
 */
#include "item.h"

#include <assert.h>

int r4_item_cde_count(const uint8_t *body, size_t len, unsigned *n)
{
	unsigned count = 0;

	if (len < R4_CDE_HDR)
		return R4_CORRUPT(NULL, 0, "cde item of %zu bytes has no unit count", len);
	count = r4_le16_get(body + R4_CDE_COUNT);
	if (count == 0)
		return R4_CORRUPT(NULL, 0, "cde item with no entries");
	if (R4_CDE_HDR + (size_t)count * R4_CDE_UH_SIZE > len)
		return R4_CORRUPT(NULL, 0, "cde item of %zu bytes cannot hold %u unit headers", len,
				  count);
	*n = count;
	return 0;
}

static unsigned unit_off(const uint8_t *body, unsigned i)
{
	return r4_le16_get(body + R4_CDE_HDR + (size_t)i * R4_CDE_UH_SIZE + R4_CDE_UH_OFFSET);
}

void r4_item_cde_unit_key(const r4_key *ikey, const uint8_t *body, unsigned i, r4_key *out)
{
	const uint8_t *uh = body + R4_CDE_HDR + (size_t)i * R4_CDE_UH_SIZE;

	out->el[0] = ikey->el[0];
	for (int k = 0; k < 3; k++)
		out->el[k + 1] = r4_le64_get(uh + R4_CDE_UH_DEID + 8 * k);
}

int r4_item_cde_decode(const r4_key *ikey, const uint8_t *body, size_t len, unsigned i,
		       struct r4_dirent *out)
{
	const uint8_t *ub;
	size_t start, off, end;
	struct r4_dirent e;
	unsigned n = 0;
	int rc;

	if ((rc = r4_item_cde_count(body, len, &n)))
		return rc;
	if (i >= n)
		return -EINVAL;
	start = R4_CDE_HDR + (size_t)n * R4_CDE_UH_SIZE;
	off = unit_off(body, i);
	end = i + 1 < n ? unit_off(body, i + 1) : len;
	if (i == 0 && off != start)
		return R4_CORRUPT(NULL, 0, "cde unit 0 body at %zu, not right after the %u "
				  "headers (%zu)", off, n, start);
	if (off < start || end > len || off >= end)
		return R4_CORRUPT(NULL, 0, "cde unit %u body [%zu, %zu) not increasing inside "
				  "[%zu, %zu)", i, off, end, start, len);
	ub = body + off;
	r4_item_cde_unit_key(ikey, body, i, &e.de_key);
	if (end - off < R4_CDE_OBJID_SIZE)
		return R4_CORRUPT(NULL, 0, "cde unit %u body of %zu bytes has no object key",
				  i, end - off);
	for (int k = 0; k < 3; k++)
		e.de_sdkey.el[k] = r4_le64_get(ub + 8 * k);
	e.de_sdkey.el[3] = 0;
	e.de_name = NULL;
	e.de_namelen = 0;
	if (!r4_item_cde_hashed(&e.de_key)) {
		if (end - off != R4_CDE_OBJID_SIZE)
			return R4_CORRUPT(NULL, 0, "cde unit %u: short-name entry of %zu bytes "
					  "(want %d)", i, end - off, R4_CDE_OBJID_SIZE);
	} else {
		const uint8_t *name = ub + R4_CDE_OBJID_SIZE;
		size_t room = end - off - R4_CDE_OBJID_SIZE;
		const uint8_t *nul = room ? memchr(name, 0, room) : NULL;

		if (!nul)
			return R4_CORRUPT(NULL, 0, "cde unit %u: long name not NUL-terminated "
					  "inside its unit", i);
		if ((size_t)(nul - name) + 1 != room)
			return R4_CORRUPT(NULL, 0, "cde unit %u: %zu bytes after the long name",
					  i, room - (size_t)(nul - name) - 1);
		if (nul == name)
			return R4_CORRUPT(NULL, 0, "cde unit %u: hashed key with an empty name", i);
		e.de_name = name;
		e.de_namelen = (size_t)(nul - name);
	}
	*out = e;
	return 0;
}

int r4_item_cde_decode_all(const r4_key *ikey, const uint8_t *body, size_t len,
			   struct r4_dirent *out, unsigned n)
{
	unsigned count = 0;
	int rc;

	if ((rc = r4_item_cde_count(body, len, &count)))
		return rc;
	if (n != count)
		return -EINVAL;
	for (unsigned i = 0; i < n; i++) {
		if ((rc = r4_item_cde_decode(ikey, body, len, i, &out[i])))
			return rc;
		if (i > 0 && r4_key_cmp(&out[i - 1].de_key, &out[i].de_key) > 0)
			return R4_CORRUPT(NULL, 0, "cde units %u and %u out of key order", i - 1, i);
	}
	if (r4_key_cmp(&out[0].de_key, ikey) != 0)
		return R4_CORRUPT(NULL, 0, "cde item key is not its first entry's key");
	return 0;
}

size_t r4_item_cde_unit_size(const struct r4_dirent *e)
{
	size_t n = R4_CDE_UH_SIZE + R4_CDE_OBJID_SIZE;

	if (r4_item_cde_hashed(&e->de_key))
		n += e->de_namelen + 1;
	return n;
}

size_t r4_item_cde_size(const struct r4_dirent *e, size_t n)
{
	size_t sz = R4_CDE_HDR;

	for (size_t i = 0; i < n; i++)
		sz += r4_item_cde_unit_size(&e[i]);
	return sz;
}

void r4_item_cde_encode(const struct r4_dirent *e, size_t n, uint8_t *body)
{
	size_t off = R4_CDE_HDR + n * R4_CDE_UH_SIZE;

	assert(n >= 1 && n <= UINT16_MAX);
	r4_le16_put(body + R4_CDE_COUNT, (uint16_t)n);
	for (size_t i = 0; i < n; i++) {
		uint8_t *uh = body + R4_CDE_HDR + i * R4_CDE_UH_SIZE;
		bool hashed = r4_item_cde_hashed(&e[i].de_key);

		assert(e[i].de_key.el[0] == e[0].de_key.el[0]);
		assert(hashed == (e[i].de_namelen > 0));
		assert(off <= UINT16_MAX);
		for (int k = 0; k < 3; k++) {
			r4_le64_put(uh + R4_CDE_UH_DEID + 8 * k, e[i].de_key.el[k + 1]);
			r4_le64_put(body + off + 8 * k, e[i].de_sdkey.el[k]);
		}
		r4_le16_put(uh + R4_CDE_UH_OFFSET, (uint16_t)off);
		off += R4_CDE_OBJID_SIZE;
		if (hashed) {
			memcpy(body + off, e[i].de_name, e[i].de_namelen);
			body[off + e[i].de_namelen] = 0;
			off += e[i].de_namelen + 1;
		}
	}
}
