/*
 * item_stat.c - the stat40 codec: stat-data item body <-> struct r4_sd.
 *
 * Layout (progs plugin/item/stat40 + plugin/sdext/..., kernel static_stat.c):
 *
 *   le16 mask0 | bodies of the extensions set in mask0, by increasing bit |
 *   [le16 mask1 | bodies of ids 16..30 | [le16 mask2 | ... ]]
 *
 * A later mask is read where the previous one's bodies end, and only if
 * bit 15 of the previous mask is set; at most 4 masks.  Only ids 0..8
 * exist, so masks after the first can only be 0x0000 or 0x8000; we keep
 * their number (sd_nmasks) so such bodies still round-trip.
 *
 * Extension sizes: all fixed except SYMLINK (LW size + 1: the kernel sizes
 * it by i_size and checks the NUL there; progs by strlen, so we also
 * refuse a NUL inside), PLUGIN and HEIR (2 + 4 * count; the kernel would
 * read a zero count as 2 bytes, fsck.reiser4 as 0, so zero is refused),
 * CRYPTO (2 + the digest's key-id size; sha256_32, the only digest, has
 * 4).  No plugin-set member stores private state after its slot: every
 * kernel plugin's pops->load is NULL.
 *
 * Not here: what the fields mean to objects (obj*.c), which pset members
 * an object must store (plugin.c), the stat-data key (key.c).
 */
#include "item.h"

#include <assert.h>

#define MASK_BITS 15	/* extension bits per 16-bit mask; bit 15 chains */
#define CARRIED ((UINT64_C(1) << R4_SDEXT_CAPS) | (UINT64_C(1) << R4_SDEXT_CRYPTO))

/* ---- plugin sets ---- */

static int pset_decode(const uint8_t *p, size_t rem, struct r4_pset *ps, const char *what,
		       size_t *used)
{
	unsigned seen = 0;
	unsigned count;

	if (rem < R4_SDEXT_PSET_HDR)
		return R4_CORRUPT(NULL, 0, "stat data: %s set truncated (%zu bytes left)", what,
				  rem);
	count = r4_le16_get(p);
	if (count == 0)
		return R4_CORRUPT(NULL, 0, "stat data: %s set with no slots", what);
	if (count > R4_PSET_NR)
		return R4_CORRUPT(NULL, 0, "stat data: %s set of %u slots (at most %u members)",
				  what, count, (unsigned)R4_PSET_NR);
	if (rem < R4_SDEXT_PSET_HDR + (size_t)count * R4_SDEXT_PSET_SLOT)
		return R4_CORRUPT(NULL, 0, "stat data: %s set of %u slots truncated (%zu bytes)",
				  what, count, rem);
	ps->ps_count = count;
	for (unsigned i = 0; i < count; i++) {
		const uint8_t *s = p + R4_SDEXT_PSET_HDR + (size_t)i * R4_SDEXT_PSET_SLOT;
		unsigned m = r4_le16_get(s);

		if (m >= R4_PSET_NR)
			return R4_CORRUPT(NULL, 0, "stat data: %s set slot %u: unknown member %u",
					  what, i, m);
		if (seen & (1u << m))
			return R4_CORRUPT(NULL, 0, "stat data: %s set slot %u: member %u repeated",
					  what, i, m);
		seen |= 1u << m;
		ps->ps_slot[i].member = (uint16_t)m;
		ps->ps_slot[i].id = r4_le16_get(s + 2);
	}
	*used = R4_SDEXT_PSET_HDR + (size_t)count * R4_SDEXT_PSET_SLOT;
	return 0;
}

static size_t pset_size(const struct r4_pset *ps)
{
	return R4_SDEXT_PSET_HDR + (size_t)ps->ps_count * R4_SDEXT_PSET_SLOT;
}

static void pset_encode(const struct r4_pset *ps, uint8_t *p)
{
	r4_le16_put(p, (uint16_t)ps->ps_count);
	for (unsigned i = 0; i < ps->ps_count; i++) {
		uint8_t *s = p + R4_SDEXT_PSET_HDR + (size_t)i * R4_SDEXT_PSET_SLOT;

		r4_le16_put(s, ps->ps_slot[i].member);
		r4_le16_put(s + 2, ps->ps_slot[i].id);
	}
}

void r4_item_pset_clear(struct r4_pset *ps, unsigned member)
{
	for (unsigned i = 0; i < ps->ps_count; i++)
		if (ps->ps_slot[i].member == member) {
			memmove(&ps->ps_slot[i], &ps->ps_slot[i + 1],
				(ps->ps_count - i - 1) * sizeof(ps->ps_slot[0]));
			ps->ps_count--;
			return;
		}
}

bool r4_item_pset_get(const struct r4_pset *ps, unsigned member, uint16_t *id)
{
	for (unsigned i = 0; i < ps->ps_count; i++)
		if (ps->ps_slot[i].member == member) {
			*id = ps->ps_slot[i].id;
			return true;
		}
	return false;
}

void r4_item_pset_set(struct r4_pset *ps, unsigned member, uint16_t id)
{
	unsigned i;

	assert(member < R4_PSET_NR);
	for (i = 0; i < ps->ps_count; i++) {
		if (ps->ps_slot[i].member == member) {
			ps->ps_slot[i].id = id;
			return;
		}
		if (ps->ps_slot[i].member > member)
			break;
	}
	assert(ps->ps_count < R4_PSET_NR);
	memmove(&ps->ps_slot[i + 1], &ps->ps_slot[i], (ps->ps_count - i) * sizeof(ps->ps_slot[0]));
	ps->ps_slot[i].member = (uint16_t)member;
	ps->ps_slot[i].id = id;
	ps->ps_count++;
}

/* ---- extension sizes ---- */

static size_t ext_size(const struct r4_sd *st, unsigned ext)
{
	switch (ext) {
	case R4_SDEXT_LW:
		return R4_SDEXT_LW_SIZE;
	case R4_SDEXT_UNIX:
		return R4_SDEXT_UNIX_SIZE;
	case R4_SDEXT_LT:
		return R4_SDEXT_LT_SIZE;
	case R4_SDEXT_SYMLINK:
		return st->sd_symlink_len + 1;
	case R4_SDEXT_PSET:
		return pset_size(&st->sd_pset);
	case R4_SDEXT_FLAGS:
		return R4_SDEXT_FLAGS_SIZE;
	case R4_SDEXT_CAPS:
		return R4_SDEXT_CAPS_SIZE;
	case R4_SDEXT_CRYPTO:
		return R4_SDEXT_CRYPTO_SIZE;
	case R4_SDEXT_HSET:
		return pset_size(&st->sd_hset);
	}
	assert(!"unknown stat-data extension");
	return 0;
}

static unsigned nmasks(const struct r4_sd *st)
{
	return st->sd_nmasks ? st->sd_nmasks : 1;
}

size_t r4_item_stat_size(const struct r4_sd *st)
{
	size_t n = 2 * (size_t)nmasks(st);

	for (unsigned e = 0; e < R4_SDEXT_NR; e++)
		if (r4_sd_has(st, e))
			n += ext_size(st, e);
	return n;
}

/* ---- decode ---- */

/* Decode extension `ext` at p (rem bytes left); *used = its size. */
static int ext_decode(struct r4_sd *st, unsigned ext, const uint8_t *p, size_t rem,
		      size_t *used)
{
	static const char *const name[R4_SDEXT_NR] = {
		"light-weight", "unix", "large-times", "symlink", "plugin-set",
		"flags", "capabilities", "crypto", "heir-set",
	};
	size_t need = 0;
	uint16_t digest = 0;

	switch (ext) {
	case R4_SDEXT_SYMLINK:
		if (!r4_sd_has(st, R4_SDEXT_LW))
			return R4_CORRUPT(NULL, 0, "stat data: symlink without light-weight "
					  "extension (no size)");
		if (st->sd_size >= rem)
			return R4_CORRUPT(NULL, 0, "stat data: symlink of %llu bytes truncated "
					  "(%zu left)", (unsigned long long)st->sd_size, rem);
		if (p[st->sd_size] != 0)
			return R4_CORRUPT(NULL, 0, "stat data: symlink not NUL-terminated at size "
					  "%llu", (unsigned long long)st->sd_size);
		if (memchr(p, 0, (size_t)st->sd_size))
			return R4_CORRUPT(NULL, 0, "stat data: symlink target has a NUL before "
					  "its size %llu", (unsigned long long)st->sd_size);
		st->sd_symlink = p;
		st->sd_symlink_len = (size_t)st->sd_size;
		*used = st->sd_symlink_len + 1;
		return 0;
	case R4_SDEXT_PSET:
		return pset_decode(p, rem, &st->sd_pset, "plugin", used);
	case R4_SDEXT_HSET:
		return pset_decode(p, rem, &st->sd_hset, "heir", used);
	case R4_SDEXT_CRYPTO:
		if (r4_sd_has(st, R4_SDEXT_PSET) &&
		    r4_item_pset_get(&st->sd_pset, R4_PSET_DIGEST, &digest) && digest != 0)
			return R4_CORRUPT(NULL, 0, "stat data: crypto extension with unknown digest "
					  "%u: cannot size it", digest);
		break;
	default:
		break;
	}
	need = ext_size(st, ext);
	if (rem < need)
		return R4_CORRUPT(NULL, 0, "stat data: %s extension truncated (%zu of %zu bytes)",
				  name[ext], rem, need);
	switch (ext) {
	case R4_SDEXT_LW:
		st->sd_mode = r4_le16_get(p);
		st->sd_nlink = r4_le32_get(p + 2);
		st->sd_size = r4_le64_get(p + 6);
		break;
	case R4_SDEXT_UNIX:
		st->sd_uid = r4_le32_get(p);
		st->sd_gid = r4_le32_get(p + 4);
		st->sd_atime = r4_le32_get(p + 8);
		st->sd_mtime = r4_le32_get(p + 12);
		st->sd_ctime = r4_le32_get(p + 16);
		st->sd_bytes_rdev = r4_le64_get(p + 20);
		break;
	case R4_SDEXT_LT:
		st->sd_atime_ns = r4_le32_get(p);
		st->sd_mtime_ns = r4_le32_get(p + 4);
		st->sd_ctime_ns = r4_le32_get(p + 8);
		break;
	case R4_SDEXT_FLAGS:
		st->sd_flags = r4_le32_get(p);
		break;
	case R4_SDEXT_CAPS:
		st->sd_cap_effective = r4_le32_get(p);
		st->sd_cap_permitted = r4_le32_get(p + 4);
		break;
	case R4_SDEXT_CRYPTO:
		st->sd_crypto_keysize = r4_le16_get(p);
		memcpy(st->sd_crypto_keyid, p + 2, sizeof(st->sd_crypto_keyid));
		break;
	}
	*used = need;
	return 0;
}

int r4_item_stat_decode(const uint8_t *body, size_t len, struct r4_sd *out)
{
	struct r4_sd st;
	size_t pos = 0;
	unsigned k;
	int rc;

	memset(&st, 0, sizeof(st));
	for (k = 0;; k++) {
		unsigned mask;

		if (len - pos < 2)
			return R4_CORRUPT(NULL, 0, "stat data: extension mask %u truncated "
					  "(item of %zu bytes)", k, len);
		mask = r4_le16_get(body + pos);
		pos += 2;
		for (unsigned b = 0; b < MASK_BITS; b++) {
			unsigned ext = 16 * k + b;
			size_t used;

			if (!(mask & (1u << b)))
				continue;
			if (ext >= R4_SDEXT_NR)
				return R4_CORRUPT(NULL, 0, "stat data: unknown extension %u (mask %u = "
						  "%#x): cannot size it", ext, k, mask);
			st.sd_mask |= UINT64_C(1) << ext;
			if ((rc = ext_decode(&st, ext, body + pos, len - pos, &used)))
				return rc;
			pos += used;
		}
		if (!(mask & R4_SDEXT_CHAIN))
			break;
		if (k + 1 == R4_SD_MAX_MASKS)
			return R4_CORRUPT(NULL, 0, "stat data: more than %u extension masks",
					  (unsigned)R4_SD_MAX_MASKS);
	}
	if (pos != len)
		return R4_CORRUPT(NULL, 0, "stat data: %zu unused bytes after the last extension",
				  len - pos);
	st.sd_nmasks = k + 1;
	st.sd_carried = st.sd_mask & CARRIED;
	*out = st;
	return 0;
}

/* ---- encode ---- */

static void ext_encode(const struct r4_sd *st, unsigned ext, uint8_t *p)
{
	switch (ext) {
	case R4_SDEXT_LW:
		r4_le16_put(p, st->sd_mode);
		r4_le32_put(p + 2, st->sd_nlink);
		r4_le64_put(p + 6, st->sd_size);
		break;
	case R4_SDEXT_UNIX:
		r4_le32_put(p, st->sd_uid);
		r4_le32_put(p + 4, st->sd_gid);
		r4_le32_put(p + 8, st->sd_atime);
		r4_le32_put(p + 12, st->sd_mtime);
		r4_le32_put(p + 16, st->sd_ctime);
		r4_le64_put(p + 20, st->sd_bytes_rdev);
		break;
	case R4_SDEXT_LT:
		r4_le32_put(p, st->sd_atime_ns);
		r4_le32_put(p + 4, st->sd_mtime_ns);
		r4_le32_put(p + 8, st->sd_ctime_ns);
		break;
	case R4_SDEXT_SYMLINK:
		assert(!r4_sd_has(st, R4_SDEXT_LW) || st->sd_symlink_len == st->sd_size);
		if (st->sd_symlink_len)
			memcpy(p, st->sd_symlink, st->sd_symlink_len);
		p[st->sd_symlink_len] = 0;
		break;
	case R4_SDEXT_PSET:
		assert(st->sd_pset.ps_count > 0 && st->sd_pset.ps_count <= R4_PSET_NR);
		pset_encode(&st->sd_pset, p);
		break;
	case R4_SDEXT_FLAGS:
		r4_le32_put(p, st->sd_flags);
		break;
	case R4_SDEXT_CAPS:
		r4_le32_put(p, st->sd_cap_effective);
		r4_le32_put(p + 4, st->sd_cap_permitted);
		break;
	case R4_SDEXT_CRYPTO:
		r4_le16_put(p, st->sd_crypto_keysize);
		memcpy(p + 2, st->sd_crypto_keyid, sizeof(st->sd_crypto_keyid));
		break;
	case R4_SDEXT_HSET:
		assert(st->sd_hset.ps_count > 0 && st->sd_hset.ps_count <= R4_PSET_NR);
		pset_encode(&st->sd_hset, p);
		break;
	}
}

void r4_item_stat_reread(const struct r4_sd *st, struct r4_sd *out)
{
	/* field by field into *out as ext_decode sets them: the extensions
	 * there (stored straight, not built aside and copied: the copy read
	 * back what the stores had not yet written, a stall per field) */
	assert(out != st);
	memset(out, 0, sizeof(*out));
	out->sd_mask = st->sd_mask;
	out->sd_nmasks = nmasks(st);
	out->sd_carried = st->sd_mask & CARRIED;
	if (r4_sd_has(st, R4_SDEXT_LW)) {
		out->sd_mode = st->sd_mode;
		out->sd_nlink = st->sd_nlink;
		out->sd_size = st->sd_size;
	}
	if (r4_sd_has(st, R4_SDEXT_UNIX)) {
		out->sd_uid = st->sd_uid;
		out->sd_gid = st->sd_gid;
		out->sd_atime = st->sd_atime;
		out->sd_mtime = st->sd_mtime;
		out->sd_ctime = st->sd_ctime;
		out->sd_bytes_rdev = st->sd_bytes_rdev;
	}
	if (r4_sd_has(st, R4_SDEXT_LT)) {
		out->sd_atime_ns = st->sd_atime_ns;
		out->sd_mtime_ns = st->sd_mtime_ns;
		out->sd_ctime_ns = st->sd_ctime_ns;
	}
	if (r4_sd_has(st, R4_SDEXT_SYMLINK)) {
		out->sd_symlink = st->sd_symlink;
		out->sd_symlink_len = st->sd_symlink_len;
	}
	if (r4_sd_has(st, R4_SDEXT_PSET))
		out->sd_pset = st->sd_pset;
	if (r4_sd_has(st, R4_SDEXT_FLAGS))
		out->sd_flags = st->sd_flags;
	if (r4_sd_has(st, R4_SDEXT_CAPS)) {
		out->sd_cap_effective = st->sd_cap_effective;
		out->sd_cap_permitted = st->sd_cap_permitted;
	}
	if (r4_sd_has(st, R4_SDEXT_CRYPTO)) {
		out->sd_crypto_keysize = st->sd_crypto_keysize;
		memcpy(out->sd_crypto_keyid, st->sd_crypto_keyid, sizeof(out->sd_crypto_keyid));
	}
	if (r4_sd_has(st, R4_SDEXT_HSET))
		out->sd_hset = st->sd_hset;
}

static bool pset_same(const struct r4_pset *a, const struct r4_pset *b)
{
	return a->ps_count == b->ps_count &&
	       !memcmp(a->ps_slot, b->ps_slot, a->ps_count * sizeof(a->ps_slot[0]));
}

bool r4_item_stat_same(const struct r4_sd *a, const struct r4_sd *b)
{
	return a->sd_mask == b->sd_mask && a->sd_nmasks == b->sd_nmasks &&
	       a->sd_carried == b->sd_carried && a->sd_mode == b->sd_mode &&
	       a->sd_nlink == b->sd_nlink && a->sd_size == b->sd_size && a->sd_uid == b->sd_uid &&
	       a->sd_gid == b->sd_gid && a->sd_atime == b->sd_atime && a->sd_mtime == b->sd_mtime &&
	       a->sd_ctime == b->sd_ctime && a->sd_bytes_rdev == b->sd_bytes_rdev &&
	       a->sd_atime_ns == b->sd_atime_ns && a->sd_mtime_ns == b->sd_mtime_ns &&
	       a->sd_ctime_ns == b->sd_ctime_ns && a->sd_symlink_len == b->sd_symlink_len &&
	       (!a->sd_symlink_len || !memcmp(a->sd_symlink, b->sd_symlink, a->sd_symlink_len)) &&
	       pset_same(&a->sd_pset, &b->sd_pset) && pset_same(&a->sd_hset, &b->sd_hset) &&
	       a->sd_flags == b->sd_flags && a->sd_cap_effective == b->sd_cap_effective &&
	       a->sd_cap_permitted == b->sd_cap_permitted &&
	       a->sd_crypto_keysize == b->sd_crypto_keysize &&
	       !memcmp(a->sd_crypto_keyid, b->sd_crypto_keyid, sizeof(a->sd_crypto_keyid));
}

void r4_item_stat_encode(const struct r4_sd *st, uint8_t *body)
{
	unsigned n = nmasks(st);
	size_t pos = 0;

	assert(n <= R4_SD_MAX_MASKS);
	assert(!(st->sd_mask >> R4_SDEXT_NR));
	for (unsigned k = 0; k < n; k++) {
		unsigned mask = (unsigned)(st->sd_mask >> (16 * k)) & 0x7fff;

		if (k + 1 < n)
			mask |= R4_SDEXT_CHAIN;
		r4_le16_put(body + pos, (uint16_t)mask);
		pos += 2;
		for (unsigned b = 0; b < MASK_BITS; b++) {
			unsigned ext = 16 * k + b;

			if (ext < R4_SDEXT_NR && r4_sd_has(st, ext)) {
				ext_encode(st, ext, body + pos);
				pos += ext_size(st, ext);
			}
		}
	}
}
