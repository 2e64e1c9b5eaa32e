// bloom.cc — blocked bloom filters, their pages, and the extern "C" API of
// lsm_core_bloom.h (same error-handling regime as lsm_core.cc: every
// function catches every exception; status functions map std::bad_alloc to
// LSM_NO_MEMORY and anything else to LSM_INTERNAL).

#include "api_guard.h"
#include "bloom.h"

#include <atomic>
#include <cmath>
#include <cstring>
#include <new>

#include "coding.h"
#include "port.h"

namespace lsm {

namespace {

// k by bits per key: the k minimising BloomBlockedFpRate (clamped to
// kBloomMaxProbes).  Measurements of this exact layout and probe sequence
// (bloom_test.cc, DISABLED_MeasureProbes) agree with the model to within
// noise.  Lower than the standard optimum (~0.69 * bits) at high bits per
// key, because blocks holding more keys than average dominate the rate.
constexpr uint8_t kProbesByBits[kBloomMaxBitsPerKey + 1] = {
    0,                                // 0: no filter
    1,  1,  2,  3,  3,  4,  5,  5,    // 1..8
    6,  7,  7,  8,  8,  9,  9,  10,   // 9..16
    10, 10, 11, 11, 12, 12, 12, 12,   // 17..24
    12, 12, 12, 12, 12, 12, 12, 12};  // 25..32

// Header field offsets (lsm_core_bloom.h).
constexpr size_t kOffMagic = 0;
constexpr size_t kOffVersion = 4;
constexpr size_t kOffK = 6;
constexpr size_t kOffTotal = 8;
constexpr size_t kOffFirst = 12;
constexpr size_t kOffCount = 16;
constexpr size_t kOffReserved16 = 18;
constexpr size_t kOffNKeys = 20;
constexpr size_t kOffReservedTail = 28;
static_assert(kOffReservedTail + 12 == kBloomPageHeaderSize, "header layout");

}  // namespace

uint32_t BloomNumProbes(uint32_t bits_per_key) {
  if (bits_per_key == 0 || bits_per_key > kBloomMaxBitsPerKey) return 0;
  return kProbesByBits[bits_per_key];
}

uint64_t BloomNumBlocks(uint64_t nkeys, uint32_t bits_per_key) {
  // nkeys * bits_per_key could overflow; anything past this is too large.
  const uint64_t limit = (kBloomMaxBlocks + 1) * kBloomBlockBits;
  if (nkeys > limit / bits_per_key) return kBloomMaxBlocks + 1;
  const uint64_t bits = nkeys * bits_per_key;
  const uint64_t n = (bits + kBloomBlockBits - 1) / kBloomBlockBits;
  return n == 0 ? 1 : n;
}

uint32_t BloomBlocksPerPage(size_t cap) {
  if (cap < kBloomPageHeaderSize + kBloomBlockBytes) return 0;
  const size_t n = (cap - kBloomPageHeaderSize) / kBloomBlockBytes;
  return n > 0xFFFF ? 0xFFFF : static_cast<uint32_t>(n);
}

// ---------------------------------------------------------------------------
// Builder

void BloomBuilder::AlignedDelete::operator()(uint8_t* p) const {
  ::operator delete[](p, std::align_val_t(kBloomBlockBytes));
}

BloomBuilder::BloomBuilder(uint32_t nblocks, uint32_t k)
    : nblocks_(nblocks), k_(k) {
  const size_t bytes = static_cast<size_t>(nblocks) * kBloomBlockBytes;
  bits_.reset(static_cast<uint8_t*>(
      ::operator new[](bytes, std::align_val_t(kBloomBlockBytes))));
  std::memset(bits_.get(), 0, bytes);
}

uint32_t BloomBuilder::NumPages(size_t cap) const {
  const uint32_t bpp = BloomBlocksPerPage(cap);
  if (bpp == 0) return 0;
  return static_cast<uint32_t>((static_cast<uint64_t>(nblocks_) + bpp - 1) /
                               bpp);
}

LsmStatus BloomBuilder::EncodePage(uint32_t i, uint8_t* content, size_t cap,
                                   size_t* len_out) const {
  const uint32_t bpp = BloomBlocksPerPage(cap);
  if (bpp == 0 || i >= NumPages(cap)) return LSM_INVALID;
  const uint64_t first = static_cast<uint64_t>(i) * bpp;
  const uint64_t left = nblocks_ - first;
  const uint32_t n = static_cast<uint32_t>(left < bpp ? left : bpp);
  std::memset(content, 0, kBloomPageHeaderSize);
  EncodeFixed32(content + kOffMagic, kBloomMagic);
  EncodeFixed16(content + kOffVersion, kBloomFormatVersion);
  EncodeFixed16(content + kOffK, static_cast<uint16_t>(k_));
  EncodeFixed32(content + kOffTotal, nblocks_);
  EncodeFixed32(content + kOffFirst, static_cast<uint32_t>(first));
  EncodeFixed16(content + kOffCount, static_cast<uint16_t>(n));
  EncodeFixed64(content + kOffNKeys, count_);
  const size_t bytes = static_cast<size_t>(n) * kBloomBlockBytes;
  Drain();
  std::memcpy(content + kBloomPageHeaderSize,
              BlockPtr(static_cast<uint32_t>(first)), bytes);
  *len_out = kBloomPageHeaderSize + bytes;
  return LSM_OK;
}

// ---------------------------------------------------------------------------
// Pages

LsmStatus ParseBloomPage(const uint8_t* content, size_t len,
                         LsmBloomPageInfo* out) {
  if (content == nullptr || len < kBloomPageHeaderSize + kBloomBlockBytes)
    return LSM_CORRUPT;
  if (DecodeFixed32(content + kOffMagic) != kBloomMagic ||
      DecodeFixed16(content + kOffVersion) != kBloomFormatVersion)
    return LSM_CORRUPT;
  const uint32_t k = DecodeFixed16(content + kOffK);
  const uint32_t total = DecodeFixed32(content + kOffTotal);
  const uint32_t first = DecodeFixed32(content + kOffFirst);
  const uint32_t n = DecodeFixed16(content + kOffCount);
  if (k == 0 || k > kBloomMaxProbes) return LSM_CORRUPT;
  if (total == 0 || n == 0) return LSM_CORRUPT;
  if (static_cast<uint64_t>(first) + n > total) return LSM_CORRUPT;
  // len is exactly the header and n blocks (n <= 0xFFFF: no overflow).
  if ((len - kBloomPageHeaderSize) / kBloomBlockBytes != n ||
      (len - kBloomPageHeaderSize) % kBloomBlockBytes != 0)
    return LSM_CORRUPT;
  if (DecodeFixed16(content + kOffReserved16) != 0) return LSM_CORRUPT;
  for (size_t off = kOffReservedTail; off < kBloomPageHeaderSize; off++)
    if (content[off] != 0) return LSM_CORRUPT;
  out->k = k;
  out->nblocks_total = total;
  out->first_block = first;
  out->nblocks = n;
  out->nkeys = DecodeFixed64(content + kOffNKeys);
  out->blocks = content + kBloomPageHeaderSize;
  return LSM_OK;
}

// ---------------------------------------------------------------------------
// Models

double BloomStandardFpRate(double bits_per_key) {
  if (!(bits_per_key > 0)) return 1.0;  // also NaN
  double best = 1.0;
  for (int k = 1; k <= 100; k++) {
    const double f = std::pow(1.0 - std::exp(-k / bits_per_key), k);
    if (f < best) best = f;
  }
  return best;
}

// Keys per block are Poisson distributed with mean 512 / bits_per_key; a
// block holding j keys has each bit set with probability 1 - (1-1/512)^(kj).
double BloomBlockedFpRate(double bits_per_key, uint32_t k) {
  if (!(bits_per_key > 0) || k == 0) return 1.0;
  const double m = kBloomBlockBits;
  const double lambda = m / bits_per_key;
  const double log_lambda = std::log(lambda);
  const double log_miss = std::log1p(-1.0 / m);  // log(1 - 1/m)
  const int jmax = static_cast<int>(lambda + 20 * std::sqrt(lambda) + 40);
  double log_p = -lambda;  // log P(j = 0)
  double sum = 0;
  for (int j = 0; j <= jmax; j++) {
    if (j > 0) log_p += log_lambda - std::log(static_cast<double>(j));
    const double fill = -std::expm1(static_cast<double>(k) * j * log_miss);
    sum += std::exp(log_p) * std::pow(fill, static_cast<double>(k));
  }
  return sum;
}

}  // namespace lsm

// ---------------------------------------------------------------------------
// C API

struct LsmBloomBuilder {
  LsmBloomBuilder(uint32_t nblocks, uint32_t k) : rep(nblocks, k) {}
  lsm::BloomBuilder rep;
};

extern "C" {

LsmStatus lsm_bloom_builder_create(uint64_t nkeys_expected,
                                   uint32_t bits_per_key,
                                   LsmBloomBuilder** out) noexcept {
  LSM_API_TRY
  if (out == nullptr) return LSM_INVALID;
  *out = nullptr;
  const uint32_t k = lsm::BloomNumProbes(bits_per_key);
  if (k == 0) return LSM_INVALID;
  const uint64_t nblocks = lsm::BloomNumBlocks(nkeys_expected, bits_per_key);
  if (nblocks > lsm::kBloomMaxBlocks ||
      nblocks > SIZE_MAX / lsm::kBloomBlockBytes)
    return LSM_TOO_LARGE;
  *out = new LsmBloomBuilder(static_cast<uint32_t>(nblocks), k);
  return LSM_OK;
  LSM_API_CATCH_STATUS
}

void lsm_bloom_builder_destroy(LsmBloomBuilder* b) noexcept {
  LSM_API_TRY
  delete b;
  LSM_API_CATCH_RETURN()
}

LsmStatus lsm_bloom_builder_add(LsmBloomBuilder* b, uint64_t hash) noexcept {
  LSM_API_TRY
  if (b == nullptr) return LSM_INVALID;
  b->rep.Add(hash);
  return LSM_OK;
  LSM_API_CATCH_STATUS
}

int lsm_bloom_builder_may_contain(const LsmBloomBuilder* b,
                                  uint64_t hash) noexcept {
  LSM_API_TRY
  if (b == nullptr) return 1;
  return b->rep.MayContain(hash) ? 1 : 0;
  LSM_API_CATCH_RETURN(1)
}

uint32_t lsm_bloom_builder_nblocks(const LsmBloomBuilder* b) noexcept {
  LSM_API_TRY
  return b == nullptr ? 0 : b->rep.nblocks();
  LSM_API_CATCH_RETURN(0)
}

uint32_t lsm_bloom_builder_k(const LsmBloomBuilder* b) noexcept {
  LSM_API_TRY
  return b == nullptr ? 0 : b->rep.num_probes();
  LSM_API_CATCH_RETURN(0)
}

uint64_t lsm_bloom_builder_count(const LsmBloomBuilder* b) noexcept {
  LSM_API_TRY
  return b == nullptr ? 0 : b->rep.count();
  LSM_API_CATCH_RETURN(0)
}

uint32_t lsm_bloom_blocks_per_page(size_t cap) noexcept {
  LSM_API_TRY
  return lsm::BloomBlocksPerPage(cap);
  LSM_API_CATCH_RETURN(0)
}

uint32_t lsm_bloom_builder_npages(const LsmBloomBuilder* b,
                                  size_t cap) noexcept {
  LSM_API_TRY
  return b == nullptr ? 0 : b->rep.NumPages(cap);
  LSM_API_CATCH_RETURN(0)
}

LsmStatus lsm_bloom_builder_page(const LsmBloomBuilder* b, uint32_t i,
                                 uint8_t* content, size_t cap,
                                 size_t* len_out) noexcept {
  LSM_API_TRY
  if (b == nullptr || content == nullptr || len_out == nullptr)
    return LSM_INVALID;
  return b->rep.EncodePage(i, content, cap, len_out);
  LSM_API_CATCH_STATUS
}

LsmStatus lsm_bloom_page_parse(const uint8_t* content, size_t len,
                               LsmBloomPageInfo* out) noexcept {
  LSM_API_TRY
  if (out == nullptr) return LSM_INVALID;
  return lsm::ParseBloomPage(content, len, out);  // NULL content: LSM_CORRUPT
  LSM_API_CATCH_STATUS
}

LsmStatus lsm_bloom_page_probe(const LsmBloomPageInfo* page, uint64_t hash,
                               int* may_contain) noexcept {
  LSM_API_TRY
  if (page == nullptr || may_contain == nullptr || page->blocks == nullptr ||
      page->k == 0 || page->k > lsm::kBloomMaxProbes)
    return LSM_INVALID;
  const uint32_t block = lsm::BloomBlockOf(hash, page->nblocks_total);
  if (block < page->first_block || block - page->first_block >= page->nblocks)
    return LSM_INVALID;
  const uint8_t* p =
      page->blocks +
      static_cast<size_t>(block - page->first_block) * lsm::kBloomBlockBytes;
  *may_contain = lsm::BloomBlockMayContain(p, page->k, hash) ? 1 : 0;
  return LSM_OK;
  LSM_API_CATCH_STATUS
}

int lsm_bloom_may_contain(const uint8_t* blocks, uint32_t nblocks_total,
                          uint32_t k, uint64_t hash) noexcept {
  LSM_API_TRY
  if (blocks == nullptr || nblocks_total == 0 || k == 0 ||
      k > lsm::kBloomMaxProbes)
    return 1;
  const uint32_t block = lsm::BloomBlockOf(hash, nblocks_total);
  return lsm::BloomBlockMayContain(
             blocks + static_cast<size_t>(block) * lsm::kBloomBlockBytes, k,
             hash)
             ? 1
             : 0;
  LSM_API_CATCH_RETURN(1)
}

uint32_t lsm_bloom_block_of(uint64_t hash, uint32_t nblocks_total) noexcept {
  return lsm::BloomBlockOf(hash, nblocks_total);
}

int lsm_bloom_block_may_contain(const uint8_t* block64, uint32_t k,
                                uint64_t hash) noexcept {
  LSM_API_TRY
  if (block64 == nullptr || k == 0 || k > lsm::kBloomMaxProbes) return 1;
  return lsm::BloomBlockMayContain(block64, k, hash) ? 1 : 0;
  LSM_API_CATCH_RETURN(1)
}

uint32_t lsm_bloom_num_probes(uint32_t bits_per_key) noexcept {
  return lsm::BloomNumProbes(bits_per_key);
}

double lsm_bloom_theoretical_fpr(double bits_per_key) noexcept {
  LSM_API_TRY
  return lsm::BloomStandardFpRate(bits_per_key);
  LSM_API_CATCH_RETURN(1.0)
}

double lsm_bloom_expected_fpr(uint32_t bits_per_key) noexcept {
  LSM_API_TRY
  const uint32_t k = lsm::BloomNumProbes(bits_per_key);
  if (k == 0) return 1.0;
  // The model sums a few hundred terms (about 20 us): the planner asks for
  // it on every plan of a query on an lsm index, so each value is computed
  // once per process.  The bit pattern of a rate (> 0) is never 0, which
  // marks an empty entry; racing threads store the same value.
  static std::atomic<uint64_t> memo[lsm::kBloomMaxBitsPerKey + 1];
  uint64_t bits = memo[bits_per_key].load(std::memory_order_relaxed);
  double rate;
  if (bits != 0) {
    std::memcpy(&rate, &bits, sizeof(rate));
    return rate;
  }
  rate = lsm::BloomBlockedFpRate(bits_per_key, k);
  std::memcpy(&bits, &rate, sizeof(bits));
  memo[bits_per_key].store(bits, std::memory_order_relaxed);
  return rate;
  LSM_API_CATCH_RETURN(1.0)
}

}  // extern "C"
