// bloom.h — cache-local (blocked) bloom filters of runs, and their pages.
//
// The filter is an array of 64-byte blocks (512 bits, one cache line).  The
// upper 32 bits of a key's 64-bit hash pick the block (fastrange), the lower
// 32 bits the k bits inside it (the top 9 bits of h, h * 0x9e3779b9, ...), so
// adding or probing a key touches one cache line.  This is RocksDB's
// FastLocalBloom layout.  The page layout is described in lsm_core_bloom.h;
// like every decoder of the core, ParseBloomPage is bounds-checked and
// returns LSM_CORRUPT on any inconsistency.

#ifndef LSM_CORE_BLOOM_H_
#define LSM_CORE_BLOOM_H_

#include <cstddef>
#include <cstdint>
#include <memory>

#include "lsm_core.h"
#include "port.h"  // PostgreSQL firewall

namespace lsm {

// On-disk constants: do not change without bumping kBloomFormatVersion.
constexpr uint32_t kBloomMagic = 0x424D534C;  // "LSMB"
constexpr uint16_t kBloomFormatVersion = 1;
constexpr size_t kBloomBlockBytes = 64;
constexpr uint32_t kBloomBlockBits = 512;
constexpr size_t kBloomPageHeaderSize = 40;
constexpr uint32_t kBloomMaxProbes = 12;
constexpr uint32_t kBloomMaxBitsPerKey = 32;
constexpr uint64_t kBloomMaxBlocks = 0xFFFFFFFFu;  // block indexes are u32
constexpr uint32_t kBloomProbeMultiplier = 0x9e3779b9u;

static_assert(kBloomBlockBytes == LSM_BLOOM_BLOCK_BYTES, "C API constant");
static_assert(kBloomPageHeaderSize == LSM_BLOOM_PAGE_HEADER_SIZE,
              "C API constant");
static_assert(kBloomMaxProbes == LSM_BLOOM_MAX_PROBES, "C API constant");
static_assert(kBloomMaxBitsPerKey == LSM_BLOOM_MAX_BITS_PER_KEY,
              "C API constant");
static_assert(kBloomBlockBits == 8 * kBloomBlockBytes, "block size");

// The block of a hash in a filter of nblocks blocks (fastrange on the upper
// 32 bits).  0 if nblocks is 0.
inline uint32_t BloomBlockOf(uint64_t hash, uint32_t nblocks) {
  return static_cast<uint32_t>(((hash >> 32) * nblocks) >> 32);
}

// Sets the k bits of hash in its block.
inline void BloomBlockAdd(uint8_t* block, uint32_t k, uint64_t hash) {
  uint32_t h = static_cast<uint32_t>(hash);
  for (uint32_t i = 0; i < k; i++) {
    const uint32_t bit = h >> (32 - 9);
    block[bit >> 3] = static_cast<uint8_t>(block[bit >> 3] | (1u << (bit & 7)));
    h *= kBloomProbeMultiplier;
  }
}

// True if all k bits of hash are set in its block.
inline bool BloomBlockMayContain(const uint8_t* block, uint32_t k,
                                 uint64_t hash) {
  uint32_t h = static_cast<uint32_t>(hash);
  for (uint32_t i = 0; i < k; i++) {
    const uint32_t bit = h >> (32 - 9);
    if ((block[bit >> 3] & (1u << (bit & 7))) == 0) return false;
    h *= kBloomProbeMultiplier;
  }
  return true;
}

// k for bits_per_key (1..kBloomMaxBitsPerKey), tuned by measurement for the
// blocked layout; 0 if out of range.  Not part of the format: every page
// records its k.
uint32_t BloomNumProbes(uint32_t bits_per_key);

// Blocks a filter for nkeys keys at bits_per_key needs (at least 1); more
// than kBloomMaxBlocks means "too large".  REQUIRES: bits_per_key in range.
uint64_t BloomNumBlocks(uint64_t nkeys, uint32_t bits_per_key);

// Whole blocks after the header in a content area of cap bytes (at most
// 0xFFFF: the per-page count is a u16); 0 if not even one fits.
uint32_t BloomBlocksPerPage(size_t cap);

// Builds a filter in memory and encodes it into pages.
class BloomBuilder {
 public:
  // REQUIRES: 1 <= nblocks <= kBloomMaxBlocks, 1 <= k <= kBloomMaxProbes.
  // Throws std::bad_alloc.
  BloomBuilder(uint32_t nblocks, uint32_t k);

  // A filter larger than the cache costs a miss per key when its bits are
  // set at once (a run's filter is ~1.25 bytes a key: 12 MB for 10 million
  // keys).  Add prefetches the key's block and sets its bits kPending adds
  // later, when the block has arrived; whatever reads the bits drains the
  // keys still pending first.
  void Add(uint64_t hash) {
    const uint32_t block = BloomBlockOf(hash, nblocks_);
    __builtin_prefetch(BlockPtr(block), 1);
    Pending& slot = pending_[npending_ % kPending];
    if (npending_ >= kPending) BloomBlockAdd(BlockPtr(slot.block), k_, slot.hash);
    slot.block = block;
    slot.hash = hash;
    npending_++;
    count_++;
  }
  bool MayContain(uint64_t hash) const {
    Drain();
    return BloomBlockMayContain(BlockPtr(BloomBlockOf(hash, nblocks_)), k_,
                                hash);
  }

  uint32_t nblocks() const { return nblocks_; }
  uint32_t num_probes() const { return k_; }
  uint64_t count() const { return count_; }
  const uint8_t* data() const {
    Drain();
    return bits_.get();
  }

  // Pages needed in content areas of cap bytes; 0 if cap is too small.
  uint32_t NumPages(size_t cap) const;
  // Writes page i.  LSM_INVALID if cap is too small or i >= NumPages(cap).
  LsmStatus EncodePage(uint32_t i, uint8_t* content, size_t cap,
                       size_t* len_out) const;

 private:
  struct AlignedDelete {
    void operator()(uint8_t* p) const;
  };

  uint8_t* BlockPtr(uint32_t block) const {
    return bits_.get() + static_cast<size_t>(block) * kBloomBlockBytes;
  }

  // Sets the bits of the keys still pending (the bits are a cache of the
  // keys added: reading them is logically const).
  void Drain() const {
    const uint64_t n = npending_ < kPending ? npending_ : kPending;
    for (uint64_t i = 0; i < n; i++)
      BloomBlockAdd(BlockPtr(pending_[i].block), k_, pending_[i].hash);
    npending_ = 0;
  }

  static constexpr uint64_t kPending = 16;
  struct Pending {
    uint32_t block;
    uint64_t hash;
  };

  uint32_t nblocks_;
  uint32_t k_;
  uint64_t count_ = 0;
  std::unique_ptr<uint8_t[], AlignedDelete> bits_;  // 64-byte aligned
  mutable Pending pending_[kPending];
  mutable uint64_t npending_ = 0;  // adds since the last drain
};

// Validates a filter page (lsm_bloom_page_parse).
LsmStatus ParseBloomPage(const uint8_t* content, size_t len,
                         LsmBloomPageInfo* out);

// lsm_bloom_theoretical_fpr / lsm_bloom_expected_fpr.
double BloomStandardFpRate(double bits_per_key);
double BloomBlockedFpRate(double bits_per_key, uint32_t k);

}  // namespace lsm

#endif  // LSM_CORE_BLOOM_H_
