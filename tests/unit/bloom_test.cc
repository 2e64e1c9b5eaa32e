// bloom_test.cc — blocked bloom filters: no false negatives, measured
// false-positive rates, page encoding round trips, corrupt pages, API misuse.

#include "bloom.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <random>
#include <utility>
#include <vector>

#include "lsm_core.h"

namespace {

constexpr size_t kCap = 8152;  // content area of an 8 kB page (lsm.h)
constexpr size_t kBlock = LSM_BLOOM_BLOCK_BYTES;
constexpr size_t kHeader = LSM_BLOOM_PAGE_HEADER_SIZE;

using Page =
    std::vector<uint8_t>;  // exactly the used bytes: ASan sees overruns

class Bloom {
 public:
  Bloom(uint64_t nkeys, uint32_t bits) {
    EXPECT_EQ(lsm_bloom_builder_create(nkeys, bits, &b_), LSM_OK);
  }
  ~Bloom() { lsm_bloom_builder_destroy(b_); }
  Bloom(const Bloom&) = delete;
  Bloom& operator=(const Bloom&) = delete;
  LsmBloomBuilder* get() const { return b_; }
  void Add(uint64_t h) { ASSERT_EQ(lsm_bloom_builder_add(b_, h), LSM_OK); }
  bool MayContain(uint64_t h) const {
    return lsm_bloom_builder_may_contain(b_, h) != 0;
  }

 private:
  LsmBloomBuilder* b_ = nullptr;
};

std::vector<Page> Serialise(const Bloom& b, size_t cap) {
  std::vector<Page> pages;
  const uint32_t n = lsm_bloom_builder_npages(b.get(), cap);
  std::vector<uint8_t> buf(cap);
  for (uint32_t i = 0; i < n; i++) {
    std::fill(buf.begin(), buf.end(), 0xAB);
    size_t len = 0;
    EXPECT_EQ(lsm_bloom_builder_page(b.get(), i, buf.data(), cap, &len),
              LSM_OK);
    EXPECT_LE(len, cap);
    for (size_t j = len; j < cap; j++)
      if (buf[j] != 0xAB) {
        ADD_FAILURE() << "page " << i << " wrote past len at " << j;
        break;
      }
    pages.emplace_back(buf.begin(), buf.begin() + len);
  }
  return pages;
}

// Parsed pages of one filter plus the filter reassembled contiguously.
struct Loaded {
  Loaded() = default;
  Loaded(Loaded&&) = default;  // keeps the pages' buffers
  Loaded(const Loaded&) = delete;

  std::vector<Page> pages;  // infos point into these
  std::vector<LsmBloomPageInfo> infos;
  std::vector<uint8_t> blocks;
  uint32_t nblocks = 0;
  uint32_t k = 0;
  uint32_t bpp = 0;

  bool MayContain(uint64_t h) const {
    return lsm_bloom_may_contain(blocks.data(), nblocks, k, h) != 0;
  }
  // Probe the one page holding the hash's block, as the shim does.
  bool PageMayContain(uint64_t h) const {
    const uint32_t block = lsm_bloom_block_of(h, nblocks);
    const LsmBloomPageInfo& info = infos.at(block / bpp);
    int r1 = -1;
    EXPECT_EQ(lsm_bloom_page_probe(&info, h, &r1), LSM_OK);
    const int r2 = lsm_bloom_block_may_contain(
        info.blocks + static_cast<size_t>(block - info.first_block) * kBlock,
        info.k, h);
    EXPECT_EQ(r1, r2);
    return r1 != 0;
  }
};

Loaded Load(std::vector<Page> pages_in, size_t cap) {
  Loaded l;
  l.pages = std::move(pages_in);
  const std::vector<Page>& pages = l.pages;
  l.bpp = lsm_bloom_blocks_per_page(cap);
  for (size_t i = 0; i < pages.size(); i++) {
    LsmBloomPageInfo info;
    EXPECT_EQ(lsm_bloom_page_parse(pages[i].data(), pages[i].size(), &info),
              LSM_OK)
        << "page " << i;
    if (i == 0) {
      l.nblocks = info.nblocks_total;
      l.k = info.k;
    }
    EXPECT_EQ(info.nblocks_total, l.nblocks);
    EXPECT_EQ(info.k, l.k);
    EXPECT_EQ(info.first_block, i * l.bpp);
    EXPECT_EQ(info.nblocks,
              std::min<uint64_t>(l.bpp, l.nblocks - info.first_block));
    EXPECT_EQ(l.blocks.size(), info.first_block * kBlock);
    l.blocks.insert(l.blocks.end(), info.blocks,
                    info.blocks + info.nblocks * kBlock);
    l.infos.push_back(info);
  }
  EXPECT_EQ(l.blocks.size(), static_cast<size_t>(l.nblocks) * kBlock);
  return l;
}

// Order-preserving encoding of an int8 (sign bit flipped, big-endian), hashed
// as the shim hashes a key's leading column.
uint64_t Int8KeyHash(int64_t v) {
  const uint64_t u = static_cast<uint64_t>(v) ^ (uint64_t{1} << 63);
  uint8_t key[8];
  for (int i = 0; i < 8; i++) key[i] = static_cast<uint8_t>(u >> (56 - 8 * i));
  return lsm_hash64(key, sizeof(key), 0);
}

// ---------------------------------------------------------------------------
// Parameters and models

TEST(Bloom, Sizing) {
  struct Case {
    uint64_t nkeys;
    uint32_t bits;
    uint32_t nblocks;
  } cases[] = {{0, 10, 1},           {1, 10, 1},     {51, 10, 1},   {52, 10, 2},
               {512, 1, 1},          {513, 1, 2},    {16, 32, 1},   {17, 32, 2},
               {1000000, 10, 19532}, {8064, 8, 126}, {8065, 8, 127}};
  for (const Case& c : cases) {
    Bloom b(c.nkeys, c.bits);
    EXPECT_EQ(lsm_bloom_builder_nblocks(b.get()), c.nblocks)
        << c.nkeys << " keys, " << c.bits << " bits";
    EXPECT_EQ(lsm_bloom_builder_k(b.get()), lsm_bloom_num_probes(c.bits));
    EXPECT_EQ(lsm_bloom_builder_count(b.get()), 0u);
  }
  EXPECT_EQ(lsm_bloom_blocks_per_page(kCap), 126u);
}

TEST(Bloom, ProbeCountIsTheModelOptimum) {
  EXPECT_EQ(lsm_bloom_num_probes(0), 0u);
  EXPECT_EQ(lsm_bloom_num_probes(33), 0u);
  for (uint32_t bits = 1; bits <= LSM_BLOOM_MAX_BITS_PER_KEY; bits++) {
    uint32_t best = 0;
    double best_rate = 2;
    for (uint32_t k = 1; k <= LSM_BLOOM_MAX_PROBES; k++) {
      double r = lsm::BloomBlockedFpRate(bits, k);
      if (r < best_rate) {
        best_rate = r;
        best = k;
      }
    }
    EXPECT_EQ(lsm_bloom_num_probes(bits), best) << bits << " bits per key";
    EXPECT_DOUBLE_EQ(lsm_bloom_expected_fpr(bits), best_rate);
  }
}

TEST(Bloom, Models) {
  // Known values of the standard rate: 10 bits, k = 7: 0.819%.
  EXPECT_NEAR(lsm_bloom_theoretical_fpr(10), 0.008194, 0.000005);
  EXPECT_NEAR(lsm_bloom_theoretical_fpr(1), 1 - std::exp(-1.0), 1e-12);
  EXPECT_EQ(lsm_bloom_theoretical_fpr(0), 1.0);
  EXPECT_EQ(lsm_bloom_theoretical_fpr(-3), 1.0);
  EXPECT_EQ(lsm_bloom_theoretical_fpr(std::nan("")), 1.0);
  EXPECT_EQ(lsm_bloom_expected_fpr(0), 1.0);
  EXPECT_EQ(lsm_bloom_expected_fpr(33), 1.0);
  for (uint32_t bits = 1; bits <= LSM_BLOOM_MAX_BITS_PER_KEY; bits++) {
    const double std_rate = lsm_bloom_theoretical_fpr(bits);
    const double blocked = lsm_bloom_expected_fpr(bits);
    // A blocked filter is never better than a standard one.
    EXPECT_GE(blocked, std_rate * 0.999) << bits;
    if (bits > 1) {
      EXPECT_LT(std_rate, lsm_bloom_theoretical_fpr(bits - 1)) << bits;
      EXPECT_LT(blocked, lsm_bloom_expected_fpr(bits - 1)) << bits;
    }
  }
}

// ---------------------------------------------------------------------------
// No false negatives

TEST(Bloom, NoFalseNegativesRandomHashes) {
  constexpr uint64_t kN = 1000000;
  std::mt19937_64 rng(1);
  std::vector<uint64_t> hashes(kN);
  for (uint64_t& h : hashes) h = rng();
  Bloom b(kN, 10);
  for (uint64_t h : hashes) b.Add(h);
  EXPECT_EQ(lsm_bloom_builder_count(b.get()), kN);
  Loaded l = Load(Serialise(b, kCap), kCap);
  size_t missing = 0;
  for (uint64_t h : hashes) {
    if (!b.MayContain(h) || !l.MayContain(h) || !l.PageMayContain(h)) missing++;
  }
  EXPECT_EQ(missing, 0u);
}

TEST(Bloom, NoFalseNegativesEveryBitsPerKey) {
  std::mt19937_64 rng(2);
  for (uint32_t bits = 1; bits <= LSM_BLOOM_MAX_BITS_PER_KEY; bits++) {
    const uint64_t n = 20000;
    std::vector<uint64_t> hashes(n);
    for (uint64_t& h : hashes) h = rng();
    Bloom b(n, bits);
    for (uint64_t h : hashes) b.Add(h);
    Loaded l = Load(Serialise(b, kCap), kCap);
    size_t missing = 0;
    for (uint64_t h : hashes)
      if (!b.MayContain(h) || !l.MayContain(h) || !l.PageMayContain(h))
        missing++;
    EXPECT_EQ(missing, 0u) << bits << " bits per key";
  }
}

// The realistic case: sequential int8 keys, hashed with lsm_hash64.
TEST(Bloom, SequentialInt8Keys) {
  constexpr int64_t kN = 1000000;
  Bloom b(kN, 10);
  for (int64_t v = 1; v <= kN; v++) b.Add(Int8KeyHash(v));
  Loaded l = Load(Serialise(b, kCap), kCap);
  size_t missing = 0;
  for (int64_t v = 1; v <= kN; v++) {
    const uint64_t h = Int8KeyHash(v);
    if (!b.MayContain(h) || !l.MayContain(h)) missing++;
  }
  EXPECT_EQ(missing, 0u);
  // Absent keys: the next million integers, and negative ones.
  uint64_t fp = 0, probes = 0;
  for (int64_t v = kN + 1; v <= 2 * kN; v++, probes++)
    fp += l.MayContain(Int8KeyHash(v));
  for (int64_t v = -1; v >= -kN / 4; v--, probes++)
    fp += l.MayContain(Int8KeyHash(v));
  const double rate = static_cast<double>(fp) / probes;
  std::printf(
      "sequential int8 keys, 10 bits/key: fp rate %.4f%% (%llu of "
      "%llu), standard bloom %.4f%%\n",
      100 * rate, static_cast<unsigned long long>(fp),
      static_cast<unsigned long long>(probes),
      100 * lsm_bloom_theoretical_fpr(10));
  EXPECT_LE(rate, 1.3 * lsm_bloom_theoretical_fpr(10));
}

// Adding more keys than announced stays correct; fewer gives a low rate.
TEST(Bloom, OverAndUnderfilled) {
  std::mt19937_64 rng(3);
  {
    Bloom b(1000, 10);
    std::vector<uint64_t> hashes(100000);
    for (uint64_t& h : hashes) h = rng();
    for (uint64_t h : hashes) b.Add(h);
    EXPECT_EQ(lsm_bloom_builder_nblocks(b.get()), 20u);
    for (uint64_t h : hashes) ASSERT_TRUE(b.MayContain(h));
  }
  {
    Bloom b(1000000, 10);
    std::vector<uint64_t> hashes(10);
    for (uint64_t& h : hashes) h = rng();
    for (uint64_t h : hashes) b.Add(h);
    for (uint64_t h : hashes) ASSERT_TRUE(b.MayContain(h));
    size_t fp = 0;
    for (int i = 0; i < 100000; i++) fp += b.MayContain(rng());
    EXPECT_EQ(fp, 0u);
  }
}

// ---------------------------------------------------------------------------
// False-positive rates

TEST(Bloom, FalsePositiveRates) {
  struct Case {
    uint32_t bits;
    uint64_t absent;  // enough for a few thousand false positives
  } cases[] = {{5, 1000000}, {8, 1000000}, {10, 1000000}, {16, 4000000}};
  constexpr uint64_t kKeys = 1000000;
  std::mt19937_64 rng(4);
  std::printf(
      "bits/key  k  measured   blocked model  standard  "
      "measured/standard  measured/model\n");
  for (const Case& c : cases) {
    Bloom b(kKeys, c.bits);
    for (uint64_t i = 0; i < kKeys; i++) b.Add(rng());
    uint64_t fp = 0;
    for (uint64_t i = 0; i < c.absent; i++) fp += b.MayContain(rng());
    const double rate = static_cast<double>(fp) / c.absent;
    const double standard = lsm_bloom_theoretical_fpr(c.bits);
    const double model = lsm_bloom_expected_fpr(c.bits);
    std::printf("%8u %2u  %.5f%%  %.5f%%      %.5f%%  %17.3f  %14.3f\n", c.bits,
                lsm_bloom_num_probes(c.bits), 100 * rate, 100 * model,
                100 * standard, rate / standard, rate / model);
    // The model of the blocked layout predicts the measurement.
    EXPECT_GT(rate, 0.9 * model) << c.bits;
    EXPECT_LT(rate, 1.1 * model) << c.bits;
    if (c.bits <= 10) {
      EXPECT_LE(rate, 1.3 * standard) << c.bits;
    } else {
      // One 512-bit block per key costs more at high bits per key: the
      // model says 1.80x the standard rate at 16 bits (the Poisson spread
      // of keys per block), so 1.3x is out of reach for any layout of this
      // kind.  Guard against regressions beyond the model instead.
      EXPECT_LE(rate, 2.0 * standard) << c.bits;
    }
  }
}

// ---------------------------------------------------------------------------
// Pages

struct PageCase {
  uint64_t nkeys;
  uint32_t bits;
  size_t cap;
};

class BloomPages : public ::testing::TestWithParam<PageCase> {};

TEST_P(BloomPages, RoundTrip) {
  const PageCase c = GetParam();
  std::mt19937_64 rng(c.nkeys * 31 + c.bits * 7 + c.cap);
  Bloom b(c.nkeys, c.bits);
  std::vector<uint64_t> added(c.nkeys);
  for (uint64_t& h : added) {
    h = rng();
    b.Add(h);
  }
  const uint32_t nblocks = lsm_bloom_builder_nblocks(b.get());
  const uint32_t bpp = lsm_bloom_blocks_per_page(c.cap);
  ASSERT_GT(bpp, 0u);
  const uint32_t npages = lsm_bloom_builder_npages(b.get(), c.cap);
  EXPECT_EQ(npages, (nblocks + bpp - 1) / bpp);
  std::vector<Page> pages = Serialise(b, c.cap);
  ASSERT_EQ(pages.size(), npages);
  for (const Page& p : pages) {
    LsmBloomPageInfo info;
    ASSERT_EQ(lsm_bloom_page_parse(p.data(), p.size(), &info), LSM_OK);
    EXPECT_EQ(p.size(), kHeader + info.nblocks * kBlock);
    EXPECT_EQ(info.nkeys, c.nkeys);
    EXPECT_EQ(info.k, lsm_bloom_num_probes(c.bits));
  }
  Loaded l = Load(pages, c.cap);
  EXPECT_EQ(l.nblocks, nblocks);
  // Same answers for present and absent hashes, whole-filter and per page.
  std::vector<uint64_t> probes = added;
  for (int i = 0; i < 100000; i++) probes.push_back(rng());
  size_t diff = 0, page_diff = 0, positives = 0;
  for (uint64_t h : probes) {
    const bool want = b.MayContain(h);
    positives += want;
    diff += l.MayContain(h) != want;
    page_diff += l.PageMayContain(h) != want;
  }
  EXPECT_EQ(diff, 0u);
  EXPECT_EQ(page_diff, 0u);
  EXPECT_GE(positives, added.size());
}

INSTANTIATE_TEST_SUITE_P(
    Sizes, BloomPages,
    ::testing::Values(PageCase{0, 10, kCap},       // one empty block
                      PageCase{1, 1, kCap},        //
                      PageCase{8064, 8, kCap},     // exactly one full page
                      PageCase{8065, 8, kCap},     // one block on page 2
                      PageCase{100000, 10, kCap},  // 16 pages
                      PageCase{5000, 10, kHeader + kBlock},  // 1 block/page
                      PageCase{5000, 10, 200},               // 2 blocks/page
                      PageCase{20000, 32, 65535},
                      // more than 0xFFFF blocks fit: clamped per page
                      PageCase{65536 * 16, 32, 8u << 20}));

// Add sets a key's bits later (after prefetching its block); every read of
// the bits must see every key added before it, whatever the number pending.
TEST(Bloom, PendingAddsAreSeenByEveryRead) {
  std::mt19937_64 rng(6);
  const uint32_t kBlocks = 5000, kProbes = 6;
  lsm::BloomBuilder b(kBlocks, kProbes);
  std::vector<uint8_t> want(kBlocks * kBlock, 0);
  std::vector<uint64_t> added;
  std::vector<uint8_t> buf(kCap);
  for (int i = 0; i < 2000; i++) {
    uint64_t h = rng();
    b.Add(h);
    added.push_back(h);
    lsm::BloomBlockAdd(want.data() + static_cast<size_t>(lsm::BloomBlockOf(h, kBlocks)) * kBlock,
                       kProbes, h);
    // reads at every count early on, then at irregular intervals
    if (i < 40 || i % 37 == 0) {
      if (i % 3 == 0) {
        ASSERT_TRUE(b.MayContain(h)) << i;
        ASSERT_TRUE(b.MayContain(added[i / 2])) << i;
      } else if (i % 3 == 1) {
        size_t len;
        for (uint32_t pg = 0; pg < b.NumPages(kCap); pg++)
          ASSERT_EQ(b.EncodePage(pg, buf.data(), kCap, &len), LSM_OK);
      }
      ASSERT_EQ(std::memcmp(b.data(), want.data(), want.size()), 0) << i;
    }
  }
  EXPECT_EQ(b.count(), 2000u);
}

// The builder's bytes are exactly the reassembled pages' blocks.
TEST(Bloom, PagesHoldTheBitArray) {
  std::mt19937_64 rng(5);
  lsm::BloomBuilder b(300, 7);
  for (int i = 0; i < 15000; i++) b.Add(rng());
  std::vector<uint8_t> all;
  std::vector<uint8_t> buf(kCap);
  for (uint32_t i = 0; i < b.NumPages(kCap); i++) {
    size_t len;
    ASSERT_EQ(b.EncodePage(i, buf.data(), kCap, &len), LSM_OK);
    LsmBloomPageInfo info;
    ASSERT_EQ(lsm::ParseBloomPage(buf.data(), len, &info), LSM_OK);
    all.insert(all.end(), info.blocks, info.blocks + info.nblocks * kBlock);
  }
  ASSERT_EQ(all.size(), 300 * kBlock);
  EXPECT_EQ(std::memcmp(all.data(), b.data(), all.size()), 0);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(b.data()) % kBlock, 0u);
}

// The byte layout is on-disk format: pin it.
TEST(Bloom, GoldenLayout) {
  // One block, k = 1 (1 bit per key): bit = top 9 bits of the low word.
  Bloom b(0, 1);
  ASSERT_EQ(lsm_bloom_builder_k(b.get()), 1u);
  b.Add(0x1234567800800000ull);  // bit 1
  b.Add(0x00000000FF800000ull);  // bit 511
  b.Add(0xFFFFFFFF3C000000ull);  // bit 120 (0x3C000000 >> 23)
  uint8_t page[kHeader + kBlock + 8];
  size_t len = 0;
  ASSERT_EQ(lsm_bloom_builder_page(b.get(), 0, page, sizeof(page), &len),
            LSM_OK);
  ASSERT_EQ(len, kHeader + kBlock);
  const uint8_t header[kHeader] = {
      'L', 'S', 'M', 'B',              // magic
      1,   0,                          // version
      1,   0,                          // k
      1,   0,   0,   0,                // total blocks
      0,   0,   0,   0,                // first block
      1,   0,                          // blocks here
      0,   0,                          // reserved
      3,   0,   0,   0,   0, 0, 0, 0,  // keys added
      0,   0,   0,   0,   0, 0, 0, 0, 0, 0, 0, 0};
  EXPECT_EQ(std::memcmp(page, header, kHeader), 0);
  uint8_t block[kBlock] = {};
  block[0] = 0x02;
  block[15] = 0x01;
  block[63] = 0x80;
  EXPECT_EQ(std::memcmp(page + kHeader, block, kBlock), 0);

  // k probes: h, h * 0x9e3779b9, ... (mod 2^32), top 9 bits each.
  uint8_t blk[kBlock] = {};
  const uint32_t low = 0xDEADBEEF;
  uint32_t h = low;
  for (int i = 0; i < 4; i++) {
    blk[(h >> 23) >> 3] |= static_cast<uint8_t>(1u << ((h >> 23) & 7));
    h *= 0x9e3779b9u;
  }
  EXPECT_EQ(lsm_bloom_block_may_contain(blk, 4, low), 1);
  EXPECT_EQ(lsm_bloom_block_may_contain(blk, 5, low),
            (blk[(h >> 23) >> 3] >> ((h >> 23) & 7)) & 1);
  lsm::BloomBuilder one(1, 4);
  one.Add(low);
  EXPECT_EQ(std::memcmp(one.data(), blk, kBlock), 0);

  // Block selection: fastrange on the high word.
  EXPECT_EQ(lsm_bloom_block_of(0x00000000FFFFFFFFull, 4), 0u);
  EXPECT_EQ(lsm_bloom_block_of(0x4000000000000000ull, 4), 1u);
  EXPECT_EQ(lsm_bloom_block_of(0x8000000000000000ull, 4), 2u);
  EXPECT_EQ(lsm_bloom_block_of(0xFFFFFFFF00000000ull, 4), 3u);
  EXPECT_EQ(lsm_bloom_block_of(0xFFFFFFFF00000000ull, 0xFFFFFFFFu),
            0xFFFFFFFEu);
  EXPECT_EQ(lsm_bloom_block_of(0x1234, 0), 0u);
}

// ---------------------------------------------------------------------------
// Corrupt pages

class BloomCorrupt : public ::testing::Test {
 protected:
  void SetUp() override {
    std::mt19937_64 rng(6);
    bloom_.reset(new Bloom(30000, 10));  // 586 blocks: 5 pages, last partial
    for (int i = 0; i < 30000; i++) bloom_->Add(rng());
    pages_ = Serialise(*bloom_, kCap);
    ASSERT_EQ(pages_.size(), 5u);
  }
  static LsmStatus Parse(const Page& p, LsmBloomPageInfo* info) {
    // An exact-size heap copy, so ASan catches any read past len.
    std::unique_ptr<uint8_t[]> copy(new uint8_t[p.size() > 0 ? p.size() : 1]);
    if (!p.empty()) std::memcpy(copy.get(), p.data(), p.size());
    LsmStatus st = lsm_bloom_page_parse(copy.get(), p.size(), info);
    if (st == LSM_OK) {
      EXPECT_GE(info->blocks, copy.get());
      EXPECT_LE(info->blocks + info->nblocks * kBlock, copy.get() + p.size());
      info->blocks = nullptr;  // copy is gone
    }
    return st;
  }
  static Page WithField(Page p, size_t off, size_t width, uint64_t v) {
    for (size_t i = 0; i < width; i++)
      p[off + i] = static_cast<uint8_t>(v >> (8 * i));
    return p;
  }

  std::unique_ptr<Bloom> bloom_;
  std::vector<Page> pages_;
};

TEST_F(BloomCorrupt, Truncated) {
  LsmBloomPageInfo info;
  for (const Page& p : pages_) {
    for (size_t len = 0; len < p.size(); len++)
      EXPECT_EQ(Parse(Page(p.begin(), p.begin() + len), &info), LSM_CORRUPT)
          << len;
    for (size_t extra = 1; extra <= 2 * kBlock; extra++) {
      Page longer = p;
      longer.resize(p.size() + extra, 0);
      EXPECT_EQ(Parse(longer, &info), LSM_CORRUPT) << extra;
    }
  }
  EXPECT_EQ(lsm_bloom_page_parse(nullptr, 1000, &info), LSM_CORRUPT);
  EXPECT_EQ(lsm_bloom_page_parse(pages_[0].data(), pages_[0].size(), nullptr),
            LSM_INVALID);
}

TEST_F(BloomCorrupt, BadHeaderFields) {
  const Page& p = pages_[1];  // first 126, n 126, total 586
  const Page& last = pages_[4];
  LsmBloomPageInfo info;
  ASSERT_EQ(Parse(p, &info), LSM_OK);
  ASSERT_EQ(info.first_block, 126u);
  ASSERT_EQ(info.nblocks_total, 586u);
  const Page bad[] = {
      WithField(p, 0, 1, 'X'),           // magic
      WithField(p, 0, 4, 0x524D534C),    // "LSMR": a run header
      WithField(p, 4, 2, 0),             // version
      WithField(p, 4, 2, 2),             //
      WithField(p, 6, 2, 0),             // k
      WithField(p, 6, 2, 13),            //
      WithField(p, 6, 2, 0xFFFF),        //
      WithField(p, 8, 4, 0),             // total
      WithField(p, 8, 4, 251),           // total < first + n
      WithField(p, 12, 4, 461),          // first + n > total
      WithField(p, 12, 4, 0xFFFFFFFF),   // first + n overflows u32
      WithField(p, 16, 2, 0),            // n
      WithField(p, 16, 2, 125),          // n != blocks in len
      WithField(p, 16, 2, 127),          //
      WithField(p, 16, 2, 0xFFFF),       //
      WithField(p, 18, 2, 1),            // reserved
      WithField(p, 39, 1, 0x80),         // reserved tail
      WithField(last, 12, 4, 587 - 82),  // last page: one block too far
  };
  for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
    EXPECT_EQ(Parse(bad[i], &info), LSM_CORRUPT) << "case " << i;
  // Still consistent: parses (the shim checks page position and total).
  EXPECT_EQ(Parse(WithField(p, 6, 2, 12), &info), LSM_OK);
  EXPECT_EQ(Parse(WithField(p, 8, 4, 252), &info), LSM_OK);
  EXPECT_EQ(Parse(WithField(p, 12, 4, 0), &info), LSM_OK);
  EXPECT_EQ(Parse(WithField(p, 20, 8, ~0ull), &info), LSM_OK);
}

TEST_F(BloomCorrupt, RandomDamageNeverCrashes) {
  std::mt19937_64 rng(7);
  size_t corrupt = 0, ok = 0;
  for (int iter = 0; iter < 20000; iter++) {
    const Page& orig = pages_[rng() % pages_.size()];
    Page p = orig;
    const int nflips = 1 + static_cast<int>(rng() % 4);
    bool header_hit = false;  // a byte whose change must be detected
    for (int f = 0; f < nflips; f++) {
      // Half the flips land in the header.
      const size_t off = (rng() & 1) ? rng() % kHeader : rng() % p.size();
      const uint8_t mask = static_cast<uint8_t>(1 + rng() % 255);
      p[off] ^= mask;
      if (off < 6 || (off >= 16 && off < 20) || off >= 28)
        header_hit |= off < kHeader;
    }
    if (rng() % 8 == 0) p.resize(rng() % (p.size() + 1));
    if (rng() % 16 == 0)
      p.resize(p.size() + rng() % 200, static_cast<uint8_t>(rng()));
    std::unique_ptr<uint8_t[]> copy(new uint8_t[p.size() > 0 ? p.size() : 1]);
    if (!p.empty()) std::memcpy(copy.get(), p.data(), p.size());
    LsmBloomPageInfo info;
    const LsmStatus st = lsm_bloom_page_parse(copy.get(), p.size(), &info);
    ASSERT_TRUE(st == LSM_OK || st == LSM_CORRUPT) << st;
    if (st == LSM_CORRUPT) {
      corrupt++;
      continue;
    }
    ok++;
    // Magic, version, block count and reserved bytes admit no other value;
    // a single flip there is always caught.
    if (nflips == 1 && p.size() == orig.size()) {
      EXPECT_FALSE(header_hit) << iter;
    }
    // Probing what parsed stays inside the page.
    for (int i = 0; i < 32; i++) {
      const uint64_t h = rng();
      int r = -1;
      const LsmStatus ps = lsm_bloom_page_probe(&info, h, &r);
      ASSERT_TRUE(ps == LSM_OK || ps == LSM_INVALID);
      const uint32_t block = lsm_bloom_block_of(h, info.nblocks_total);
      if (block >= info.first_block &&
          block - info.first_block < info.nblocks) {
        ASSERT_EQ(ps, LSM_OK);
        EXPECT_EQ(r, lsm_bloom_block_may_contain(
                         info.blocks + (block - info.first_block) * kBlock,
                         info.k, h));
      } else {
        ASSERT_EQ(ps, LSM_INVALID);
      }
    }
    // A damaged filter assembled from this one page, probed as a whole.
    if (info.first_block == 0 && info.nblocks == info.nblocks_total)
      (void)lsm_bloom_may_contain(info.blocks, info.nblocks_total, info.k,
                                  rng());
  }
  std::printf("random damage: %zu corrupt, %zu parsed\n", corrupt, ok);
  EXPECT_GT(corrupt, 5000u);
  EXPECT_GT(ok, 1000u);
}

// ---------------------------------------------------------------------------
// API misuse

TEST(Bloom, ApiMisuse) {
  LsmBloomBuilder* b = reinterpret_cast<LsmBloomBuilder*>(uintptr_t{8});
  EXPECT_EQ(lsm_bloom_builder_create(100, 0, &b), LSM_INVALID);
  EXPECT_EQ(b, nullptr);
  b = reinterpret_cast<LsmBloomBuilder*>(uintptr_t{8});
  EXPECT_EQ(lsm_bloom_builder_create(100, 33, &b), LSM_INVALID);
  EXPECT_EQ(b, nullptr);
  EXPECT_EQ(lsm_bloom_builder_create(100, 10, nullptr), LSM_INVALID);
  // 2^32 blocks and beyond: too large (never allocated).
  EXPECT_EQ(lsm_bloom_builder_create(uint64_t{1} << 36, 32, &b), LSM_TOO_LARGE);
  EXPECT_EQ(lsm_bloom_builder_create(~uint64_t{0}, 1, &b), LSM_TOO_LARGE);
  EXPECT_EQ(lsm_bloom_builder_create(~uint64_t{0}, 32, &b), LSM_TOO_LARGE);
  EXPECT_EQ(b, nullptr);
  EXPECT_EQ(lsm::BloomNumBlocks((uint64_t{1} << 41) - 1, 1), uint64_t{1} << 32);
  EXPECT_EQ(lsm::BloomNumBlocks((uint64_t{1} << 41) - 512, 1),
            (uint64_t{1} << 32) - 1);

  lsm_bloom_builder_destroy(nullptr);
  EXPECT_EQ(lsm_bloom_builder_add(nullptr, 1), LSM_INVALID);
  EXPECT_EQ(lsm_bloom_builder_may_contain(nullptr, 1), 1);
  EXPECT_EQ(lsm_bloom_builder_nblocks(nullptr), 0u);
  EXPECT_EQ(lsm_bloom_builder_k(nullptr), 0u);
  EXPECT_EQ(lsm_bloom_builder_count(nullptr), 0u);
  EXPECT_EQ(lsm_bloom_builder_npages(nullptr, kCap), 0u);

  EXPECT_EQ(lsm_bloom_blocks_per_page(0), 0u);
  EXPECT_EQ(lsm_bloom_blocks_per_page(kHeader + kBlock - 1), 0u);
  EXPECT_EQ(lsm_bloom_blocks_per_page(kHeader + kBlock), 1u);
  EXPECT_EQ(lsm_bloom_blocks_per_page(~size_t{0}), 0xFFFFu);

  Bloom bloom(1000, 10);  // 20 blocks
  b = bloom.get();
  std::vector<uint8_t> buf(kCap);
  size_t len = 12345;
  EXPECT_EQ(lsm_bloom_builder_npages(b, kHeader + kBlock - 1), 0u);
  EXPECT_EQ(lsm_bloom_builder_npages(b, kHeader + kBlock), 20u);
  EXPECT_EQ(lsm_bloom_builder_npages(b, kCap), 1u);
  EXPECT_EQ(lsm_bloom_builder_page(nullptr, 0, buf.data(), kCap, &len),
            LSM_INVALID);
  EXPECT_EQ(lsm_bloom_builder_page(b, 0, nullptr, kCap, &len), LSM_INVALID);
  EXPECT_EQ(lsm_bloom_builder_page(b, 0, buf.data(), kCap, nullptr),
            LSM_INVALID);
  EXPECT_EQ(
      lsm_bloom_builder_page(b, 0, buf.data(), kHeader + kBlock - 1, &len),
      LSM_INVALID);
  EXPECT_EQ(lsm_bloom_builder_page(b, 0, buf.data(), 0, &len), LSM_INVALID);
  EXPECT_EQ(lsm_bloom_builder_page(b, 1, buf.data(), kCap, &len), LSM_INVALID);
  EXPECT_EQ(lsm_bloom_builder_page(b, 0xFFFFFFFFu, buf.data(), kCap, &len),
            LSM_INVALID);
  EXPECT_EQ(len, 12345u);  // untouched on failure
  ASSERT_EQ(lsm_bloom_builder_page(b, 0, buf.data(), kCap, &len), LSM_OK);
  EXPECT_EQ(len, kHeader + 20 * kBlock);

  // Invalid probes answer "may contain", never hide a key.
  const uint8_t zeros[2 * kBlock] = {};
  EXPECT_EQ(lsm_bloom_may_contain(zeros, 2, 3, 42), 0);  // the valid case
  EXPECT_EQ(lsm_bloom_may_contain(nullptr, 2, 3, 42), 1);
  EXPECT_EQ(lsm_bloom_may_contain(zeros, 0, 3, 42), 1);
  EXPECT_EQ(lsm_bloom_may_contain(zeros, 2, 0, 42), 1);
  EXPECT_EQ(lsm_bloom_may_contain(zeros, 2, 13, 42), 1);
  EXPECT_EQ(lsm_bloom_block_may_contain(zeros, 3, 42), 0);
  EXPECT_EQ(lsm_bloom_block_may_contain(nullptr, 3, 42), 1);
  EXPECT_EQ(lsm_bloom_block_may_contain(zeros, 0, 42), 1);
  EXPECT_EQ(lsm_bloom_block_may_contain(zeros, 13, 42), 1);

  LsmBloomPageInfo info{3, 2, 0, 2, 0, zeros};
  int r = -1;
  EXPECT_EQ(lsm_bloom_page_probe(&info, 42, &r), LSM_OK);
  EXPECT_EQ(r, 0);
  EXPECT_EQ(lsm_bloom_page_probe(nullptr, 42, &r), LSM_INVALID);
  EXPECT_EQ(lsm_bloom_page_probe(&info, 42, nullptr), LSM_INVALID);
  info.k = 0;
  EXPECT_EQ(lsm_bloom_page_probe(&info, 42, &r), LSM_INVALID);
  info.k = 3;
  info.blocks = nullptr;
  EXPECT_EQ(lsm_bloom_page_probe(&info, 42, &r), LSM_INVALID);
  // A hash whose block lives on another page.
  LsmBloomPageInfo second{3, 4, 2, 2, 0, zeros};
  EXPECT_EQ(lsm_bloom_page_probe(&second, 0x0000000012345678ull, &r),
            LSM_INVALID);  // block 0
  EXPECT_EQ(lsm_bloom_page_probe(&second, 0xFFFFFFFF12345678ull, &r), LSM_OK);
}

// Measures the false-positive rate by k for each bits per key, next to the
// model.  Run with --gtest_also_run_disabled_tests --gtest_filter=*Measure*.
TEST(Bloom, DISABLED_MeasureProbes) {
  std::mt19937_64 rng(8);
  for (uint32_t bits = 1; bits <= LSM_BLOOM_MAX_BITS_PER_KEY; bits++) {
    const uint64_t nblocks = 400;
    const uint64_t nkeys = nblocks * 512 / bits;
    const uint64_t probes = bits <= 12 ? 2000000 : 10000000;
    std::printf("%2u bits (k=%2u):", bits, lsm_bloom_num_probes(bits));
    for (uint32_t k = 1; k <= LSM_BLOOM_MAX_PROBES; k++) {
      lsm::BloomBuilder b(static_cast<uint32_t>(nblocks), k);
      for (uint64_t i = 0; i < nkeys; i++) b.Add(rng());
      uint64_t fp = 0;
      for (uint64_t i = 0; i < probes; i++) fp += b.MayContain(rng());
      std::printf(" %u:%.2e/%.2e", k, static_cast<double>(fp) / probes,
                  lsm::BloomBlockedFpRate(bits, k));
    }
    std::printf("\n");
  }
}

}  // namespace
