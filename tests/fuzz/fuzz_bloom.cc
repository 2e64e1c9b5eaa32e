// fuzz_bloom.cc — libFuzzer target: bloom filter pages (lsm_bloom_page_parse,
// lsm_bloom_page_probe), read by every filtered point lookup.
//
// Input: a filter page's content area.  Contract checked:
//  - LSM_OK exactly when the documented header (lsm_core_bloom.h) is valid:
//    magic, version, 1 <= k <= 12, total >= 1, 1 <= nblocks, first + nblocks
//    <= total, len == 40 + 64 * nblocks, reserved bytes zero; the parsed
//    fields equal the bytes and blocks points 40 bytes into the input;
//  - a probe answers LSM_OK exactly for hashes whose block is on the page,
//    and its answer is the documented bit test (the top 9 bits of h, h *
//    0x9e3779b9, ... of the hash's low 32 bits), computed here independently;
//  - round trip: a filter built from hashes taken from the input
//    (lsm_bloom_builder_*) writes pages that parse, describe the filter
//    (first block = i * blocks per page) and answer "may contain" for every
//    hash that was added (no false negatives), page by page and assembled.

#include "fuzz_util.h"

namespace {

constexpr uint32_t kMagic = 0x424D534C;  // "LSMB"

uint32_t Le16(const uint8_t* p) { return p[0] | (p[1] << 8); }
uint32_t Le32(const uint8_t* p) { return Le16(p) | (Le16(p + 2) << 16); }
uint64_t Le64(const uint8_t* p) {
  return Le32(p) | (static_cast<uint64_t>(Le32(p + 4)) << 32);
}

uint32_t RefBlockOf(uint64_t hash, uint32_t total) {
  return static_cast<uint32_t>(((hash >> 32) * total) >> 32);
}

bool RefMayContain(const uint8_t* block, uint32_t k, uint64_t hash) {
  uint32_t h = static_cast<uint32_t>(hash);
  for (uint32_t i = 0; i < k; i++) {
    uint32_t bit = h >> 23;
    if (!(block[bit / 8] & (1u << (bit % 8)))) return false;
    h *= 0x9e3779b9u;
  }
  return true;
}

// A hash whose block is b in a filter of total blocks, low bits lo.
uint64_t HashInBlock(uint32_t b, uint32_t total, uint32_t lo) {
  uint64_t hi = ((static_cast<uint64_t>(b) << 32) + total - 1) / total;
  return (hi << 32) | lo;
}

void ParseAndProbe(const uint8_t* data, size_t size) {
  LsmBloomPageInfo info;
  LsmStatus st = lsm_bloom_page_parse(data, size, &info);
  fuzz::CheckNoInternal(st);
  FUZZ_CHECK(st == LSM_OK || st == LSM_CORRUPT);
  bool valid = size >= 40 + 64 && Le32(data) == kMagic && Le16(data + 4) == 1;
  uint32_t k = 0, total = 0, first = 0, n = 0;
  if (valid) {
    k = Le16(data + 6);
    total = Le32(data + 8);
    first = Le32(data + 12);
    n = Le16(data + 16);
    valid = k >= 1 && k <= 12 && total >= 1 && n >= 1 &&
            static_cast<uint64_t>(first) + n <= total && size == 40 + 64ull * n &&
            Le16(data + 18) == 0;
    for (size_t i = 28; valid && i < 40; i++) valid = data[i] == 0;
  }
  FUZZ_CHECK((st == LSM_OK) == valid);
  if (!valid) return;
  FUZZ_CHECK(info.k == k && info.nblocks_total == total && info.first_block == first &&
             info.nblocks == n && info.nkeys == Le64(data + 20));
  FUZZ_CHECK(info.blocks == data + 40);

  // hashes: from the input, and one landing in each block of the page (and
  // just outside it)
  std::vector<uint64_t> hashes;
  for (size_t i = 0; i < 16; i++) hashes.push_back(lsm_hash64(data, size, i));
  const uint32_t lo = static_cast<uint32_t>(Le32(data + 40));
  for (uint32_t b = first; b < first + n && hashes.size() < 600; b++)
    hashes.push_back(HashInBlock(b, total, lo ^ b));
  if (first > 0) hashes.push_back(HashInBlock(first - 1, total, lo));
  if (first + n < total) hashes.push_back(HashInBlock(first + n, total, lo));
  for (uint64_t hash : hashes) {
    int may = -1;
    st = lsm_bloom_page_probe(&info, hash, &may);
    uint32_t b = RefBlockOf(hash, total);
    FUZZ_CHECK(b == lsm_bloom_block_of(hash, total));
    if (b < first || b >= first + n) {
      FUZZ_CHECK(st == LSM_INVALID);
      continue;
    }
    FUZZ_CHECK(st == LSM_OK);
    const uint8_t* block = info.blocks + 64ull * (b - first);
    FUZZ_CHECK(may == (RefMayContain(block, k, hash) ? 1 : 0));
    FUZZ_CHECK(lsm_bloom_block_may_contain(block, k, hash) == may);
  }
}

void BuildRoundTrip(const uint8_t* data, size_t size) {
  if (size < 2) return;
  const uint32_t bits = 1 + data[0] % LSM_BLOOM_MAX_BITS_PER_KEY;
  // content areas from one block per page up to an 8 kB page's
  const size_t caps[] = {40 + 64, 40 + 64 * 3, 8152};
  const size_t cap = caps[data[1] % 3];
  std::vector<uint64_t> hashes;
  for (size_t off = 2; off + 8 <= size && hashes.size() < 4096; off += 8)
    hashes.push_back(Le64(data + off));
  LsmBloomBuilder* b = nullptr;
  FUZZ_CHECK(lsm_bloom_builder_create(hashes.size(), bits, &b) == LSM_OK);
  for (uint64_t h : hashes) FUZZ_CHECK(lsm_bloom_builder_add(b, h) == LSM_OK);
  const uint32_t total = lsm_bloom_builder_nblocks(b);
  const uint32_t bpp = lsm_bloom_blocks_per_page(cap);
  const uint32_t npages = lsm_bloom_builder_npages(b, cap);
  FUZZ_CHECK(total >= 1 && bpp >= 1 && npages == (total + bpp - 1) / bpp);
  std::vector<uint8_t> page(cap), all;
  for (uint32_t i = 0; i < npages; i++) {
    size_t len = 0;
    FUZZ_CHECK(lsm_bloom_builder_page(b, i, page.data(), cap, &len) == LSM_OK);
    FUZZ_CHECK(len <= cap);
    LsmBloomPageInfo info;
    FUZZ_CHECK(lsm_bloom_page_parse(page.data(), len, &info) == LSM_OK);
    FUZZ_CHECK(info.nblocks_total == total && info.first_block == i * bpp &&
               info.k == lsm_bloom_builder_k(b) && info.nkeys == hashes.size());
    all.insert(all.end(), info.blocks, info.blocks + 64ull * info.nblocks);
    for (uint64_t h : hashes) {
      uint32_t blk = RefBlockOf(h, total);
      if (blk / bpp != i) continue;
      int may = 0;
      FUZZ_CHECK(lsm_bloom_page_probe(&info, h, &may) == LSM_OK);
      FUZZ_CHECK(may == 1);
    }
  }
  FUZZ_CHECK(all.size() == 64ull * total);
  for (uint64_t h : hashes) {
    FUZZ_CHECK(lsm_bloom_may_contain(all.data(), total, lsm_bloom_builder_k(b), h) == 1);
    FUZZ_CHECK(lsm_bloom_builder_may_contain(b, h) == 1);
  }
  size_t len;
  FUZZ_CHECK(lsm_bloom_builder_page(b, npages, page.data(), cap, &len) == LSM_INVALID);
  lsm_bloom_builder_destroy(b);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > 65535) return 0;
  ParseAndProbe(data, size);
  BuildRoundTrip(data, size);
  LsmBloomPageInfo info;
  FUZZ_CHECK(lsm_bloom_page_parse(nullptr, 0, &info) == LSM_CORRUPT);
  FUZZ_CHECK(lsm_bloom_page_parse(data, size, nullptr) == LSM_INVALID);
  return 0;
}
