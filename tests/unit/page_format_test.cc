// page_format_test.cc — data page encode/decode and validation.

#include "page_format.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <random>
#include <set>
#include <vector>

#include "lsm_core.h"
#include "test_util.h"

namespace {

using lsm_test::Key;
using lsm_test::KeyGen;
using lsm_test::U8;

constexpr size_t kCap = 8136;

class BatchHolder {
 public:
  BatchHolder() { EXPECT_EQ(lsm_batch_create(&b_), LSM_OK); }
  ~BatchHolder() { lsm_batch_destroy(b_); }
  LsmBatch* get() { return b_; }
  void Fill(const std::vector<Key>& keys) {
    lsm_batch_clear(b_);
    for (const Key& k : keys)
      EXPECT_EQ(lsm_batch_add_key(b_, U8(k), k.size()), LSM_OK);
  }

 private:
  LsmBatch* b_ = nullptr;
};

// Sorted distinct keys whose encoding fits one page of kCap.
std::vector<Key> PageKeys(KeyGen* gen, size_t n, size_t max_len) {
  std::set<Key> s;
  while (s.size() < n) {
    Key k = gen->Next();
    if (k.size() > max_len) k.resize(max_len);
    s.insert(k);
  }
  return std::vector<Key>(s.begin(), s.end());
}

std::vector<uint8_t> Build(LsmBatch* b, const uint8_t* keep = nullptr,
                           size_t cap = kCap) {
  std::vector<uint8_t> page(cap);
  size_t len = 0;
  EXPECT_EQ(lsm_datapage_build(b, keep, page.data(), cap, &len), LSM_OK);
  EXPECT_LE(len, cap);
  page.resize(len);
  return page;
}

TEST(DataPageTest, RoundTrip) {
  KeyGen gen(1, 60);
  BatchHolder b, out;
  for (size_t n : {0, 1, 2, 15, 16, 17, 33, 100}) {
    std::vector<Key> keys = PageKeys(&gen, n, 60);
    b.Fill(keys);
    std::vector<uint8_t> page = Build(b.get());
    EXPECT_EQ(lsm_datapage_check(page.data(), page.size()), LSM_OK);
    lsm_batch_clear(out.get());
    ASSERT_EQ(lsm_batch_add_datapage(out.get(), page.data(), page.size()),
              LSM_OK);
    EXPECT_EQ(lsm_test::BatchKeys(out.get()), keys) << n << " keys";
  }
}

// What a forward scan of [lo, hi] must get from a page: the keys from the
// first one >= lo through the first one beyond the prefix bound hi.
std::vector<Key> ExpectedRange(const std::vector<Key>& keys, const Key* lo,
                               const Key* hi) {
  std::vector<Key> out;
  for (const Key& k : keys) {
    if (lo && lsm::CompareKeys(U8(k), k.size(), U8(*lo), lo->size()) < 0)
      continue;
    out.push_back(k);
    if (hi && lsm::BeyondPrefixUpper(U8(k), k.size(), U8(*hi), hi->size()))
      break;
  }
  return out;
}

// The ranged decode (point lookups, short ranges) against the full decode
// filtered by hand: random pages, random bounds (existing keys, keys between
// them, prefixes, none).
TEST(DataPageTest, RangeDecodeMatchesFilteredFullDecode) {
  KeyGen gen(7, 40);
  std::mt19937 rng(7);
  BatchHolder b, out;
  for (int round = 0; round < 300; round++) {
    size_t n = std::uniform_int_distribution<size_t>(0, 200)(rng);
    std::vector<Key> keys = PageKeys(&gen, n, 40);
    b.Fill(keys);
    std::vector<uint8_t> page = Build(b.get());
    for (int q = 0; q < 20; q++) {
      Key lo, hi;
      bool has_lo = rng() % 5 != 0, has_hi = rng() % 5 != 0;
      auto pick = [&](Key* k) {
        if (!keys.empty() && rng() % 2 == 0) {
          *k = keys[rng() % keys.size()];
          if (rng() % 3 == 0 && !k->empty()) k->resize(rng() % k->size());
        } else {
          *k = gen.Next();
        }
      };
      pick(&lo);
      pick(&hi);
      lsm_batch_clear(out.get());
      ASSERT_EQ(lsm_batch_add_datapage_range(
                    out.get(), page.data(), page.size(),
                    has_lo ? U8(lo) : nullptr, has_lo ? lo.size() : 0,
                    has_hi ? U8(hi) : nullptr, has_hi ? hi.size() : 0),
                LSM_OK);
      EXPECT_EQ(lsm_test::BatchKeys(out.get()),
                ExpectedRange(keys, has_lo ? &lo : nullptr,
                              has_hi ? &hi : nullptr))
          << "round " << round << ", " << n << " keys";
    }
  }
}

TEST(DataPageTest, RangeDecodeRejectsBadInput) {
  BatchHolder out;
  uint8_t tiny[2] = {0, 0};
  EXPECT_EQ(lsm_batch_add_datapage_range(out.get(), tiny, 2, nullptr, 0,
                                         nullptr, 0),
            LSM_CORRUPT);
  EXPECT_EQ(lsm_batch_add_datapage_range(out.get(), nullptr, 0, nullptr, 0,
                                         nullptr, 0),
            LSM_CORRUPT);
  EXPECT_EQ(lsm_batch_add_datapage_range(nullptr, tiny, 2, nullptr, 0, nullptr,
                                         0),
            LSM_INVALID);
  // a restart offset pointing outside the entry area
  KeyGen gen(9, 20);
  BatchHolder b;
  std::vector<Key> keys = PageKeys(&gen, 40, 20);
  b.Fill(keys);
  std::vector<uint8_t> page = Build(b.get());
  std::vector<uint8_t> bad = page;
  bad[bad.size() - 2] = 0xFF;  // the last restart offset
  bad[bad.size() - 1] = 0x7F;
  const Key& lo = keys.back();
  EXPECT_EQ(lsm_batch_add_datapage_range(out.get(), bad.data(), bad.size(),
                                         U8(lo), lo.size(), nullptr, 0),
            LSM_CORRUPT);
  EXPECT_EQ(lsm_batch_count(out.get()), 0u);
}

// Found by tests/fuzz/fuzz_datapage (regress/datapage/empty-page-trailing-
// bytes): an empty page's header followed by bytes was refused by the full
// decode but accepted by the range and lazy decoders, which stopped at the
// entry count.  Every decoder refuses it now.
TEST(DataPageTest, EmptyPageWithTrailingBytesIsCorruptForEveryDecoder) {
  std::vector<uint8_t> page(24, 0);  // nentries 0, nrestarts 0, then 20 bytes
  EXPECT_EQ(lsm_datapage_check(page.data(), 4), LSM_OK);
  EXPECT_EQ(lsm_datapage_check(page.data(), page.size()), LSM_CORRUPT);
  BatchHolder out;
  EXPECT_EQ(lsm_batch_add_datapage(out.get(), page.data(), page.size()), LSM_CORRUPT);
  const uint8_t lo[] = {1};
  EXPECT_EQ(lsm_batch_add_datapage_range(out.get(), page.data(), page.size(), lo, 1,
                                         nullptr, 0),
            LSM_CORRUPT);
  for (int backward = 0; backward < 2; backward++) {
    LsmMerge* m = nullptr;
    ASSERT_EQ(lsm_merge_create(1, backward, nullptr, 0, nullptr, 0, &m), LSM_OK);
    lsm_merge_set_lazy(m, 1);
    const uint8_t* k;
    size_t n;
    int need = -1;
    ASSERT_EQ(lsm_merge_next(m, &k, &n, &need), LSM_NEED_PAGE);
    EXPECT_EQ(lsm_merge_feed_datapage(m, need, page.data(), page.size(), nullptr),
              LSM_CORRUPT);
    lsm_merge_destroy(m);
  }
}

TEST(DataPageTest, AppendsToExistingBatchAndKeysStayValid) {
  KeyGen gen(2, 30);
  BatchHolder b, out;
  std::vector<Key> keys = PageKeys(&gen, 200, 30);
  b.Fill(keys);
  std::vector<uint8_t> page = Build(b.get());
  ASSERT_EQ(lsm_batch_add_key(out.get(), U8(Key("first")), 5), LSM_OK);
  const uint8_t* first;
  size_t flen;
  lsm_batch_get(out.get(), 0, &first, &flen);
  for (int i = 0; i < 100; i++)  // many blocks' worth
    ASSERT_EQ(lsm_batch_add_datapage(out.get(), page.data(), page.size()),
              LSM_OK);
  EXPECT_EQ(lsm_batch_count(out.get()), 1 + 100 * keys.size());
  // The first key did not move.
  const uint8_t* again;
  size_t alen;
  lsm_batch_get(out.get(), 0, &again, &alen);
  EXPECT_EQ(again, first);
  EXPECT_EQ(Key(reinterpret_cast<const char*>(first), flen), "first");
}

TEST(DataPageTest, PrefixCompressionSavesSpace) {
  // 8-byte big-endian integers + a 6-byte TID, like an int8 index.
  BatchHolder b;
  std::vector<Key> keys;
  for (uint64_t i = 0; i < 400; i++) {
    Key k(14, '\0');
    for (int j = 0; j < 8; j++)
      k[j] = static_cast<char>((i * 7919) >> (56 - 8 * j));
    k[13] = static_cast<char>(i);
    keys.push_back(k);
  }
  std::sort(keys.begin(), keys.end());
  b.Fill(keys);
  std::vector<uint8_t> page = Build(b.get());
  EXPECT_LT(page.size(), keys.size() * 12);  // vs 14 bytes raw
}

TEST(DataPageTest, KeepMask) {
  KeyGen gen(3, 50);
  BatchHolder b, out;
  std::vector<Key> keys = PageKeys(&gen, 90, 50);
  b.Fill(keys);
  std::mt19937 rng(3);
  for (int round = 0; round < 20; round++) {
    std::vector<uint8_t> keep(keys.size());
    std::vector<Key> want;
    for (size_t i = 0; i < keys.size(); i++) {
      keep[i] = static_cast<uint8_t>(round == 0 ? 0 : rng() % 3);  // 0 drops
      if (keep[i]) want.push_back(keys[i]);
    }
    std::vector<uint8_t> page = Build(b.get(), keep.data());
    EXPECT_EQ(lsm_datapage_check(page.data(), page.size()), LSM_OK);
    lsm_batch_clear(out.get());
    ASSERT_EQ(lsm_batch_add_datapage(out.get(), page.data(), page.size()),
              LSM_OK);
    EXPECT_EQ(lsm_test::BatchKeys(out.get()), want);
  }
}

TEST(DataPageTest, TooLargeAndOutOfOrder) {
  KeyGen gen(4, 200);
  BatchHolder b;
  std::vector<Key> keys = PageKeys(&gen, 2000, 200);
  b.Fill(keys);
  std::vector<uint8_t> page(kCap);
  size_t len = 0;
  EXPECT_EQ(lsm_datapage_build(b.get(), nullptr, page.data(), kCap, &len),
            LSM_TOO_LARGE);
  EXPECT_EQ(lsm_datapage_build(b.get(), nullptr, page.data(), 3, &len),
            LSM_TOO_LARGE);
  // Out of order or duplicate keys are refused.
  b.Fill({"b", "a"});
  EXPECT_EQ(lsm_datapage_build(b.get(), nullptr, page.data(), kCap, &len),
            LSM_INVALID);
  b.Fill({"a", "a"});
  EXPECT_EQ(lsm_datapage_build(b.get(), nullptr, page.data(), kCap, &len),
            LSM_INVALID);
  // ... unless the offending key is not kept.
  b.Fill({"a", "a", "b"});
  const uint8_t keep[] = {1, 0, 1};
  EXPECT_EQ(lsm_datapage_build(b.get(), keep, page.data(), kCap, &len), LSM_OK);
  // The longest key fits a page on its own.
  b.Fill({Key(LSM_MAX_KEY_SIZE, '\xff')});
  EXPECT_EQ(lsm_datapage_build(b.get(), nullptr, page.data(), kCap, &len),
            LSM_OK);
  EXPECT_EQ(lsm_batch_add_key(b.get(), U8(Key(LSM_MAX_KEY_SIZE + 1, 'a')),
                              LSM_MAX_KEY_SIZE + 1),
            LSM_TOO_LARGE);
}

// Every validation path: hand-made bad pages.
TEST(DataPageTest, CheckRejectsInconsistencies) {
  BatchHolder b;
  b.Fill({"apple", "apricot", "banana"});
  std::vector<uint8_t> good = Build(b.get());
  ASSERT_EQ(lsm_datapage_check(good.data(), good.size()), LSM_OK);
  auto check = [](std::vector<uint8_t> p) {
    return lsm_datapage_check(p.data(), p.size());
  };
  EXPECT_EQ(lsm_datapage_check(good.data(), 0), LSM_CORRUPT);
  EXPECT_EQ(lsm_datapage_check(good.data(), 3), LSM_CORRUPT);
  EXPECT_EQ(lsm_datapage_check(nullptr, 10), LSM_CORRUPT);
  // Length not exact.
  EXPECT_EQ(lsm_datapage_check(good.data(), good.size() - 1), LSM_CORRUPT);
  std::vector<uint8_t> longer = good;
  longer.push_back(0);
  EXPECT_EQ(check(longer), LSM_CORRUPT);
  // Wrong counts.
  std::vector<uint8_t> p = good;
  p[0] = 4;
  EXPECT_EQ(check(p), LSM_CORRUPT);
  p = good;
  p[2] = 2;
  EXPECT_EQ(check(p), LSM_CORRUPT);
  // Restart offset wrong.
  p = good;
  p[p.size() - 2] = 5;
  EXPECT_EQ(check(p), LSM_CORRUPT);
  // Entry 1 ("apricot" = shared 2 + "ricot"): shared larger than prev key.
  p = good;
  ASSERT_EQ(p[4 + 2 + 5], 2);  // shared of entry 1
  p[4 + 2 + 5] = 9;
  EXPECT_EQ(check(p), LSM_CORRUPT);
  // Out of order: make entry 1 "apaicot" < "apple".
  p = good;
  ASSERT_EQ(p[4 + 2 + 5 + 2], 'r');
  p[4 + 2 + 5 + 2] = 'a';
  EXPECT_EQ(check(p), LSM_CORRUPT);
  // Not a strict increase: entry 1 becomes "ap" + "" (a prefix of "apple").
  p = good;
  p[4 + 2 + 5 + 1] = 0;
  EXPECT_EQ(check(p), LSM_CORRUPT);
  // Empty page is valid.
  std::vector<uint8_t> empty = {0, 0, 0, 0};
  EXPECT_EQ(check(empty), LSM_OK);
}

// Random bytes and bit flips of valid pages: never a crash, and whatever is
// accepted decodes into strictly ascending keys of legal length.
TEST(DataPageTest, FuzzCheckNeverCrashes) {
  std::mt19937 rng(12345);
  KeyGen gen(5, 64);
  BatchHolder b, out;
  std::vector<std::vector<uint8_t>> valid;
  for (int i = 0; i < 20; i++) {
    b.Fill(PageKeys(&gen, 1 + rng() % 120, 64));
    valid.push_back(Build(b.get()));
  }
  auto verify = [&](const std::vector<uint8_t>& p) {
    LsmStatus st = lsm_datapage_check(p.data(), p.size());
    ASSERT_TRUE(st == LSM_OK || st == LSM_CORRUPT);
    lsm_batch_clear(out.get());
    ASSERT_EQ(lsm_batch_add_key(out.get(), U8(Key("x")), 1), LSM_OK);
    LsmStatus st2 = lsm_batch_add_datapage(out.get(), p.data(), p.size());
    ASSERT_EQ(st, st2);
    if (st != LSM_OK) {
      ASSERT_EQ(lsm_batch_count(out.get()), 1u);  // rolled back
      return;
    }
    std::vector<Key> keys = lsm_test::BatchKeys(out.get());
    for (size_t i = 2; i < keys.size(); i++) ASSERT_LT(keys[i - 1], keys[i]);
    for (const Key& k : keys) ASSERT_LE(k.size(), size_t{LSM_MAX_KEY_SIZE});
  };
  int structural_flips = 0;
  for (int iter = 0; iter < 20000; iter++) {
    std::vector<uint8_t> p;
    int kind = iter % 4;
    if (kind == 0) {
      p.resize(rng() % 600);
      for (auto& c : p) c = static_cast<uint8_t>(rng());
      if (p.size() >= 4 && rng() % 2) {  // plausible header
        p[0] = static_cast<uint8_t>(rng() % 40);
        p[1] = 0;
        p[2] = static_cast<uint8_t>((p[0] + 15) / 16);
        p[3] = 0;
      }
    } else if (kind == 1) {
      // One flip in the header or the restart array is always caught.
      p = valid[rng() % valid.size()];
      size_t nrestarts = p[2];
      size_t bit = rng() % (p.size() * 8);
      p[bit / 8] ^= static_cast<uint8_t>(1u << (bit % 8));
      if (bit / 8 < 4 || bit / 8 >= p.size() - 2 * nrestarts) {
        structural_flips++;
        ASSERT_EQ(lsm_datapage_check(p.data(), p.size()), LSM_CORRUPT)
            << "flipped byte " << bit / 8;
      }
    } else {
      p = valid[rng() % valid.size()];
      int flips = 1 + rng() % 8;
      for (int f = 0; f < flips; f++) {
        size_t bit = rng() % (p.size() * 8);
        p[bit / 8] ^= static_cast<uint8_t>(1u << (bit % 8));
      }
      if (kind == 3 && rng() % 2) p.resize(rng() % (p.size() + 1));
    }
    verify(p);
    if (HasFatalFailure()) return;
  }
  EXPECT_GT(structural_flips, 0);
}

}  // namespace

namespace {

// memcmp order, shorter first on a tie: the order every key comparison uses.
int ReferenceCompare(const std::string& a, const std::string& b) {
  size_t n = std::min(a.size(), b.size());
  int r = n == 0 ? 0 : std::memcmp(a.data(), b.data(), n);
  if (r != 0) return r < 0 ? -1 : 1;
  return a.size() < b.size() ? -1 : (a.size() > b.size() ? 1 : 0);
}

int Sign(int x) { return x < 0 ? -1 : (x > 0 ? 1 : 0); }

}  // namespace

// CompareKeys's 8-byte word path agrees with memcmp order: random bytes
// (high bits set), shared prefixes of every length around 8, ties by length.
TEST(SliceTest, CompareKeysMatchesMemcmpOrder) {
  std::mt19937_64 rng(11);
  for (int i = 0; i < 200000; i++) {
    std::string a(rng() % 20, '\0'), b;
    for (char& c : a) c = static_cast<char>(rng() % 4 == 0 ? 0xFF : rng() & 0xFF);
    b = a.substr(0, rng() % (a.size() + 1));  // a shared prefix
    size_t extra = rng() % 12;
    for (size_t j = 0; j < extra; j++)
      b.push_back(static_cast<char>(rng() % 3 == 0 ? 0x00 : rng() & 0xFF));
    const auto* pa = reinterpret_cast<const uint8_t*>(a.data());
    const auto* pb = reinterpret_cast<const uint8_t*>(b.data());
    ASSERT_EQ(Sign(lsm::CompareKeys(pa, a.size(), pb, b.size())),
              ReferenceCompare(a, b))
        << "case " << i;
    ASSERT_EQ(Sign(lsm::CompareKeys(pb, b.size(), pa, a.size())),
              ReferenceCompare(b, a))
        << "case " << i;
  }
}

// KeysEqual and BeyondPrefixUpper on the same kind of inputs.
TEST(SliceTest, EqualityAndPrefixBoundMatchMemcmp) {
  std::mt19937_64 rng(12);
  for (int i = 0; i < 200000; i++) {
    std::string a(rng() % 20, '\0'), b;
    for (char& c : a) c = static_cast<char>(rng() & 0xFF);
    b = a.substr(0, rng() % (a.size() + 1));
    if (rng() % 2) b = a;
    size_t extra = rng() % 12;
    for (size_t j = 0; j < extra; j++) b.push_back(static_cast<char>(rng() & 0xFF));
    if (!b.empty() && rng() % 3 == 0) b[rng() % b.size()] ^= 1;
    const auto* pa = reinterpret_cast<const uint8_t*>(a.data());
    const auto* pb = reinterpret_cast<const uint8_t*>(b.data());
    ASSERT_EQ(lsm::KeysEqual(pa, a.size(), pb, b.size()), a == b) << "case " << i;
    const size_t n = std::min(a.size(), b.size());
    const bool beyond = n != 0 && std::memcmp(pa, pb, n) > 0;
    ASSERT_EQ(lsm::BeyondPrefixUpper(pa, a.size(), pb, b.size()), beyond)
        << "case " << i;
  }
}
