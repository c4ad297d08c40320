/*
 * alloc.h - the format40 bitmap block allocator ("alloc" means disk
 * blocks, never heap; ENGINE.md 1.5 and 4.7).
 *
 * Two states, as the kernel's WORKING and COMMIT bitmaps: the working
 * bitmap sees every allocation of the running transaction at once; the
 * committed one is what the image holds.  Frees are deferred: a freed
 * block stays used in the working bitmap until r4_alloc_commit, so nothing
 * a transaction frees is handed out again by the same transaction and the
 * last committed tree stays intact until the new one is durable.
 * r4_alloc_abort returns the working state to the committed one exactly.
 *
 * Bit b of the volume is bit b % 8 of byte b / 8 of the zone's bitmap
 * data (bytes 4.. of its block); set = used.  Bits past the last block are
 * kept set (mkfs.reiser4 fills them with 0xff), so nothing there is ever
 * handed out.  All of the volume's bitmaps stay in memory: five bits per
 * block (working, committed, deferred, held, destination), 160 KiB for a
 * 1 GiB volume.
 */
#ifndef R4_ALLOC_H
#define R4_ALLOC_H

#include "r4_int.h"

struct r4_alloc;
struct r4_io;

/*
 * Read and verify every bitmap block of a volume of `blocks` blocks of bs
 * bytes: the Adler-32 of bytes 4..bs-1 must equal the le32 at byte 0
 * (-EBADMSG through R4_BADCSUM naming the block) and bit 0 must be set
 * (-EUCLEAN).  Also -EINVAL (bad bs or blocks), -EIO and others from io,
 * -ENOMEM.  io is only used during the call.
 */
int r4_alloc_load(struct r4_io *io, const struct r4_logger *lg, uint32_t bs, uint64_t blocks,
		  struct r4_alloc **out);
/*
 * A fresh allocator for mkfs: every block free except block 0 and the
 * bitmap block of every zone (bit 0 of each bitmap); the caller marks the
 * rest (r4_format_fresh_used lists what mkfs.reiser4 marks).  The first
 * r4_alloc_commit emits every bitmap block.  -EINVAL, -ENOMEM.
 */
int r4_alloc_new(uint32_t bs, uint64_t blocks, struct r4_alloc **out);
/* Accepts NULL. */
void r4_alloc_close(struct r4_alloc *a);

/*
 * Allocate from the first free block at or after hint, wrapping round to
 * the start of the volume: a run of *got blocks, 1 <= *got <= want, is
 * marked used from *start (the run there may be shorter than want: call
 * again for the rest).  A hint at or past the end means "after the last
 * allocation" (a cursor).  -EINVAL when want is 0, -ENOSPC when no block
 * is free.  Scans a word (64 blocks) at a time and skips full zones.
 */
int r4_alloc_alloc(struct r4_alloc *a, uint64_t hint, uint64_t want, uint64_t *start,
		   uint64_t *got);
/* The same for data: the first run at or after hint that continues it
 * or holds min(want, 64) blocks, so a file's new blocks do not crumble
 * into small holes; the plain first fit when no such run is left. */
int r4_alloc_alloc_run(struct r4_alloc *a, uint64_t hint, uint64_t want, uint64_t *start,
		       uint64_t *got);
/* The same from the top of the free space down, leaving the cursor alone:
 * the run ends at the highest free block.  For the journal's blocks, which
 * so stay out of the way of the data and nodes placed from the cursor. */
int r4_alloc_alloc_high(struct r4_alloc *a, uint64_t want, uint64_t *start, uint64_t *got);
/* Deferred free: the blocks stay used until r4_alloc_commit.  Blocks out of
 * the volume, already free or already freed in this transaction are
 * ignored, and so are bitmap blocks and block 0 (bit 0 of every bitmap). */
void r4_alloc_free(struct r4_alloc *a, uint64_t start, uint64_t count);
/* Immediate free of blocks allocated since the last commit and not in the
 * committed bitmap (the journal's wandered copies and records, a failed
 * step's fresh blocks); other blocks in the range are left alone, as are
 * bitmap blocks and block 0. */
void r4_alloc_release(struct r4_alloc *a, uint64_t start, uint64_t count);
/* Mark blocks used in the working state (clipped to the volume); this
 * cancels a deferred free of any of them. */
void r4_alloc_mark_used(struct r4_alloc *a, uint64_t start, uint64_t count);
/* Used in the working state (a deferred-freed block is still used); true
 * past the end. */
bool r4_alloc_is_used(const struct r4_alloc *a, uint64_t blk);
/* Free blocks as the image will have them after commit: free now plus
 * deferred frees. */
uint64_t r4_alloc_free_count(const struct r4_alloc *a);
/* Free blocks this transaction can still allocate (deferred frees are not). */
uint64_t r4_alloc_avail(const struct r4_alloc *a);
/* Runs of free blocks this transaction can allocate: new data placed by
 * r4_alloc_alloc_run in k requests takes at most runs + 2k pieces. */
uint64_t r4_alloc_runs(const struct r4_alloc *a);
/* Free blocks in the last committed state (what the super block says). */
uint64_t r4_alloc_committed_free_count(const struct r4_alloc *a);
/* The run of free blocks (working state) at or after from: true with its
 * start and length (from on, when from is free), false when none is left.
 * Allocates nothing: the repacker looks for where a file fits. */
bool r4_alloc_next_run(const struct r4_alloc *a, uint64_t from, uint64_t *start, uint64_t *len);
/* The first of those runs at or after from that holds n blocks: its start
 * in *at; false when there is none. */
bool r4_alloc_first_fit(const struct r4_alloc *a, uint64_t from, uint64_t n, uint64_t *at);
/* The length of the run of free blocks (working state) that starts at
 * blk: 0 when blk is used. */
uint64_t r4_alloc_run_at(const struct r4_alloc *a, uint64_t blk);

/*
 * Commit in two steps, as the journal needs them.  r4_alloc_encode: for
 * each bitmap block whose content changes (all of them after
 * r4_alloc_new), encode the next committed state (working minus deferred
 * frees) with its checksum into a bs-byte buffer and call emit(ctx, block
 * number, buffer), ascending; the buffer is valid only during the call.
 * Nothing changes, so a failed emit leaves r4_alloc_abort working.
 * Allocations after it (the journal's wandered copies and records) are not
 * in what it emitted; release them (r4_alloc_release) before
 * r4_alloc_apply, which makes working minus deferred frees the committed
 * state: only then can the deferred frees be handed out again.
 * r4_alloc_commit = encode + apply (mkfs, where nothing is journalled).
 */
int r4_alloc_encode(struct r4_alloc *a, int (*emit)(void *ctx, uint64_t blk, const uint8_t *buf),
		    void *ctx);
void r4_alloc_apply(struct r4_alloc *a);
int r4_alloc_commit(struct r4_alloc *a, int (*emit)(void *ctx, uint64_t blk, const uint8_t *buf),
		    void *ctx);
/* Used in the last committed state (true past the end): a block the
 * previous tree may need, so a commit must not write it before its commit
 * point (it goes through the journal). */
bool r4_alloc_is_committed(const struct r4_alloc *a, uint64_t blk);
/* Forget everything since the last commit: allocations, marks, deferred
 * frees (held blocks stay held). */
void r4_alloc_abort(struct r4_alloc *a);

/*
 * Blocks the journal holds while committed transactions wait to be played
 * (jnl.h): their wandered copies and records, and blocks a held copy is
 * still to be played onto that the tree freed meanwhile.  A held block is
 * used for this handle (never allocated, counted out of r4_alloc_avail
 * and r4_alloc_free_count) but free in every bitmap block encoded, as the
 * image's tree does not use it.
 * r4_alloc_hold: blk (used in the working state, not deferred-freed: a
 * log block the last commit allocated) is held from now on.
 * r4_alloc_unhold: a held blk becomes free at once (outside or inside a
 * transaction); nothing when it is not held.
 * r4_alloc_dest: mark or unmark blk as a copy's destination: a deferred
 * free of a marked block makes it held at r4_alloc_apply instead of free.
 */
void r4_alloc_hold(struct r4_alloc *a, uint64_t blk);
void r4_alloc_unhold(struct r4_alloc *a, uint64_t blk);
bool r4_alloc_is_held(const struct r4_alloc *a, uint64_t blk);
uint64_t r4_alloc_held(const struct r4_alloc *a);
void r4_alloc_dest(struct r4_alloc *a, uint64_t blk, bool on);

#endif
