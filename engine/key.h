/*
 * key.h - hash and fibration plugins, and key assignment for large keys.
 *
 * The key type itself (r4_key, four native 64-bit elements) and its field
 * accessors live in r4_int.h; this module builds the keys of directory
 * entries, stat data and file bodies the way the kernel's kassign.c and
 * reiser4progs' key_large plugin do (ENGINE.md sections 2.1-2.4), and
 * prints them the way debugfs.reiser4 does.  Short (3-element) keys are
 * not supported.
 *
 * Plugin ids are the on-disk ids of ENGINE.md section 5.3; labels are
 * reiser4progs' (what debugfs.reiser4 prints and mkfs -o accepts).
 *
 * Entry key layout (large keys, name N of len bytes in directory D):
 *   el0 = oid(D) << 4 | R4_KEY_NAME
 *   el1 = fibre (bits 63..57) | H (bit 56) | N[0..6] big-end-first in 55..0
 *   el2 = N[7..14], all 64 bits (no band: r4_key_objectid() would mask it)
 *   el3 = N[15..22] if len <= 23, else hash(N[15..len-1]) and H = 1
 * "." is all zero past el0; ".." is an ordinary short name.
 */
#ifndef R4_KEY_H
#define R4_KEY_H

#include "r4_int.h"

enum {				/* hash plugin ids, as stored in a plugin set */
	R4_HASH_RUPASOV = 0,
	R4_HASH_R5 = 1,
	R4_HASH_TEA = 2,
	R4_HASH_FNV1 = 3,
	R4_HASH_DEG = 4,	/* constant: only for testing collisions */
	R4_HASH_COUNT
};

enum {				/* fibration plugin ids */
	R4_FIBRE_LEXIC = 0,	/* everything in fibre 0 */
	R4_FIBRE_DOT_O = 1,	/* "*.o" in fibre 1 */
	R4_FIBRE_EXT_1 = 2,	/* "*.x": fibre = 'x' (mkfs default) */
	R4_FIBRE_EXT_3 = 3,	/* "*.xyz": fibre = x + y + z */
	R4_FIBRE_COUNT
};

#define R4_KEY_FIBRE_SHIFT 57				/* fibre: el1 bits 63..57 */
#define R4_KEY_FIBRE_MASK (UINT64_C(0x7f) << R4_KEY_FIBRE_SHIFT)
#define R4_KEY_LONGNAME (UINT64_C(1) << 56)		/* H: el3 holds a hash */
#define R4_KEY_INLINE_MAX 23	/* longest name kept whole in an entry key */
#define R4_KEY_HASHED_FROM 15	/* a long name's hash covers bytes 15.. */

/*
 * 64-bit hash of name[0..len) by hash plugin id (the rows are
 * r4_hash_plugins, plugin.h).  An unknown id gives 0; check ids read from
 * disk with r4_plugin_get first.
 */
uint64_t r4_hash(unsigned id, const char *name, size_t len);

/*
 * Fibre of name[0..len) by fibration plugin id, already shifted into el1
 * (only bits 63..57 can be set; a fibre value's bit 7 is lost, as on disk).
 * An unknown id gives 0.
 */
uint64_t r4_fibre(unsigned id, const char *name, size_t len);

/*
 * Key of the entry name[0..len) in directory dir_oid, hashed and fibred
 * by the directory's plugins.  The name must not contain NUL bytes (the
 * namespace layer refuses them); len 0 gives the same key as ".".
 */
void r4_key_entry(r4_key *k, uint64_t dir_oid, const char *name, size_t len, unsigned hash_id,
		  unsigned fibre_id);
/* Stat-data key: (locality, SD, ordering, oid, 0). */
void r4_key_sd(r4_key *k, uint64_t locality, uint64_t ordering, uint64_t oid);
/* Body key (tail, extent): (locality, FB, ordering, oid, byte offset). */
void r4_key_body(r4_key *k, uint64_t locality, uint64_t ordering, uint64_t oid, uint64_t offset);

/* True if an entry key holds a hash, so the unit must store the name. */
bool r4_key_entry_is_long(const r4_key *k);
/*
 * The name an entry key holds whole (".", or up to 23 bytes), written to
 * out NUL-terminated; returns its length.  A long (hashed) key or a key of
 * another type writes "" and returns 0.  Zero bytes inside the packed
 * fields are skipped, as reiser4progs' get_name does.
 */
size_t r4_key_entry_name(const r4_key *k, char out[24]);

/*
 * Print k as debugfs.reiser4 does, "[29:1(SD):0:2a:0]": locality, type
 * (NAME, SD, AN, AB, FB; an unknown type prints as "ff(?)"), ordering, the
 * whole el2, offset, in lowercase hex.  Returns what snprintf returns:
 * the length the full text needs, truncated to fit n; a buffer of
 * R4_KEY_PRINT_SIZE bytes always holds all of it.
 */
#define R4_KEY_PRINT_SIZE 80
int r4_key_print(const r4_key *k, char *buf, size_t n);

#endif
