/*
 * lsm_core_bloom.h — part of the core's C API (included by lsm_core.h).
 *
 * Bloom filters of runs: a cache-local ("blocked") bloom filter, an array of
 * 64-byte blocks (512 bits, one cache line).  A key's 64-bit hash picks one
 * block and k bits inside it, so a probe reads one block.  A run's filter is
 * built by its run builder (lsm_core.h), which hashes the filter prefix of
 * each entry (the leading key columns; the shim says how long it is) with
 * lsm_hash64(..., LSM_BLOOM_HASH_SEED); probes hash the same prefix.  The
 * LsmBloomBuilder below builds a filter from hashes alone (tests, tools).
 *
 * This header is included at the end of lsm_core.h and relies on what that
 * file defined before it: LsmStatus and LSM_NOEXCEPT.  Include lsm_core.h,
 * not this file.  The rules of lsm_core.h apply (extern "C", noexcept, errors
 * as LsmStatus, no PostgreSQL calls).
 *
 * Filter pages.  A filter of N blocks is stored in lsm_bloom_builder_npages
 * consecutive pages; page i holds blocks [i * bpp, min((i + 1) * bpp, N)) with
 * bpp = lsm_bloom_blocks_per_page(cap), never a block split across pages.  So
 * the block of a hash is on page lsm_bloom_block_of(hash, N) / bpp.  Content
 * (little-endian):
 *
 *   0  u32 magic "LSMB" (0x424D534C)    16  u16 nblocks in this page (>= 1)
 *   4  u16 format version (1)           18  u16 reserved, 0
 *   6  u16 k, probes per key (1..12)    20  u64 keys added to the whole filter
 *   8  u32 total nblocks (>= 1)         28  12 bytes reserved, 0
 *  12  u32 first block of this page     40  nblocks * 64 bytes of blocks
 *
 * The 40-byte header makes every block one aligned cache line when the
 * content area starts 24 bytes into a 64-byte-aligned buffer (PostgreSQL's
 * page header); bpp is 126 for an 8152-byte content area.  Within a block, bit
 * b (0..511) is bit (b & 7) of byte (b >> 3).
 *
 * Hash use: block = ((hash >> 32) * N) >> 32; the bits are the top 9 bits of
 * h, h * 0x9e3779b9, h * 0x9e3779b9^2, ... (mod 2^32), h = the low 32 bits of
 * the hash.  Changing this changes the on-disk format.
 *
 * No false negatives: a hash that was added is always reported as possibly
 * present.  Probes given invalid arguments also answer "may contain" (1):
 * a damaged filter can cost a page read but never hide a key.
 */
#ifndef LSM_CORE_BLOOM_H
#define LSM_CORE_BLOOM_H

#ifndef LSM_CORE_H
#error "include lsm_core.h, not lsm_core_bloom.h"
#endif

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define LSM_BLOOM_BLOCK_BYTES		64	/* bytes per filter block */
#define LSM_BLOOM_MAX_BITS_PER_KEY	32
#define LSM_BLOOM_MAX_PROBES		12	/* largest k */
#define LSM_BLOOM_PAGE_HEADER_SIZE	40
/* Seed of lsm_hash64 for filter keys (run builders and probes).  On-disk
 * constant: changing it changes every filter. */
#define LSM_BLOOM_HASH_SEED			0x4C534D42

typedef struct LsmBloomBuilder LsmBloomBuilder;

/*
 * A filter sized for nkeys_expected keys at bits_per_key (1..32) bits each:
 * ceil(nkeys_expected * bits_per_key / 512) blocks, at least one.  Holds only
 * the bit array.  LSM_INVALID for out NULL or bits_per_key out of range
 * (0 means "no filter": do not build one), LSM_TOO_LARGE if the filter would
 * exceed 2^32 - 1 blocks, LSM_NO_MEMORY.  *out is NULL unless LSM_OK.
 */
LsmStatus	lsm_bloom_builder_create(uint64_t nkeys_expected, uint32_t bits_per_key,
									 LsmBloomBuilder **out) LSM_NOEXCEPT;
void		lsm_bloom_builder_destroy(LsmBloomBuilder *b) LSM_NOEXCEPT;	/* NULL ok */
/* Add a key's hash.  Any number of calls is correct: more than
 * nkeys_expected only raises the false-positive rate.  LSM_INVALID if b is
 * NULL. */
LsmStatus	lsm_bloom_builder_add(LsmBloomBuilder *b, uint64_t hash) LSM_NOEXCEPT;
/* The in-memory filter's answer (1: may contain, 0: surely absent). */
int			lsm_bloom_builder_may_contain(const LsmBloomBuilder *b, uint64_t hash) LSM_NOEXCEPT;
uint32_t	lsm_bloom_builder_nblocks(const LsmBloomBuilder *b) LSM_NOEXCEPT;	/* 0 if NULL */
uint32_t	lsm_bloom_builder_k(const LsmBloomBuilder *b) LSM_NOEXCEPT;	/* 0 if NULL */
uint64_t	lsm_bloom_builder_count(const LsmBloomBuilder *b) LSM_NOEXCEPT;	/* adds so far */

/* Whole blocks a content area of cap bytes holds after the page header; 0 if
 * cap cannot hold the header and one block. */
uint32_t	lsm_bloom_blocks_per_page(size_t cap) LSM_NOEXCEPT;
/* Pages the filter needs in content areas of cap bytes; 0 if b is NULL or
 * cap is too small. */
uint32_t	lsm_bloom_builder_npages(const LsmBloomBuilder *b, size_t cap) LSM_NOEXCEPT;
/* Write filter page i (0 <= i < npages) into content[0..cap); *len_out is the
 * number of bytes used.  LSM_INVALID for NULL arguments, i out of range or
 * cap too small.  The builder may be added to afterwards, but all pages of
 * one filter must be written without adds in between. */
LsmStatus	lsm_bloom_builder_page(const LsmBloomBuilder *b, uint32_t i,
								   uint8_t *content, size_t cap,
								   size_t *len_out) LSM_NOEXCEPT;

/* A validated filter page.  blocks points into the parsed content. */
typedef struct LsmBloomPageInfo
{
	uint32_t	k;				/* probes per key */
	uint32_t	nblocks_total;	/* blocks of the whole filter */
	uint32_t	first_block;	/* index of blocks[0] in the whole filter */
	uint32_t	nblocks;		/* blocks on this page */
	uint64_t	nkeys;			/* keys added to the whole filter */
	const uint8_t *blocks;		/* nblocks * 64 bytes */
} LsmBloomPageInfo;

/* Validate filter page content of len bytes (len as written: pd_lower).
 * LSM_OK, LSM_CORRUPT (also for content NULL), LSM_INVALID for out NULL.
 * The caller still checks that the page's position matches first_block and
 * that nblocks_total agrees with what it expects. */
LsmStatus	lsm_bloom_page_parse(const uint8_t *content, size_t len,
								 LsmBloomPageInfo *out) LSM_NOEXCEPT;
/* Probe a parsed page: LSM_OK with *may_contain set, or LSM_INVALID if the
 * hash's block is not on this page (or an argument is NULL). */
LsmStatus	lsm_bloom_page_probe(const LsmBloomPageInfo *page, uint64_t hash,
								 int *may_contain) LSM_NOEXCEPT;

/* Probe a whole filter assembled contiguously: blocks[0 .. nblocks_total*64).
 * 1 (may contain) or 0 (absent); 1 if blocks is NULL, nblocks_total is 0 or k
 * is not in 1..LSM_BLOOM_MAX_PROBES. */
int			lsm_bloom_may_contain(const uint8_t *blocks, uint32_t nblocks_total,
								  uint32_t k, uint64_t hash) LSM_NOEXCEPT;
/* The block a hash maps to (0 if nblocks_total is 0). */
uint32_t	lsm_bloom_block_of(uint64_t hash, uint32_t nblocks_total) LSM_NOEXCEPT;
/* Probe one 64-byte block (the hash's block); same answers and invalid-
 * argument rule as lsm_bloom_may_contain. */
int			lsm_bloom_block_may_contain(const uint8_t *block64, uint32_t k,
										uint64_t hash) LSM_NOEXCEPT;

/* k the builder uses for bits_per_key (1..32); 0 if out of range. */
uint32_t	lsm_bloom_num_probes(uint32_t bits_per_key) LSM_NOEXCEPT;
/* False-positive rate of a standard (non-blocked) bloom filter with
 * bits_per_key bits per key and the best integer k: (1 - e^(-k/bpk))^k.
 * 1.0 for bits_per_key <= 0 or NaN. */
double		lsm_bloom_theoretical_fpr(double bits_per_key) LSM_NOEXCEPT;
/* Model of this filter's false-positive rate when filled with the expected
 * number of keys (Poisson-distributed keys per block, k from
 * lsm_bloom_num_probes).  Notably higher than the standard rate at high
 * bits_per_key: e.g. ~1.2x at 10, ~1.8x at 16.  1.0 if out of range. */
double		lsm_bloom_expected_fpr(uint32_t bits_per_key) LSM_NOEXCEPT;

#ifdef __cplusplus
}
#endif

#endif
