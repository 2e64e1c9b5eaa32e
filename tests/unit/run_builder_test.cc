// run_builder_test.cc — sorted runs in an in-memory page store, searched with
// lsm_fence_find.

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>
#include <set>
#include <vector>

#include "lsm_core.h"
#include "page_format.h"
#include "test_util.h"

namespace {

using lsm_test::Key;
using lsm_test::KeyGen;
using lsm_test::U8;

constexpr size_t kCap = 8136;

struct StoredPage {
  LsmPageKind kind;
  std::vector<uint8_t> content;
};

// A run written into an in-memory page store, plus what the test learned.
struct BuiltRun {
  std::map<uint32_t, StoredPage> pages;
  LsmRunHeader hdr;
  std::vector<Key> first_keys;  // first key of data page i at [i - 1]
};

// Builds a run from sorted distinct keys, checking the emission protocol.
void BuildRun(const std::vector<Key>& keys, size_t cap, BuiltRun* run) {
  LsmRunBuilder* b = nullptr;
  ASSERT_EQ(lsm_runbuilder_create(cap, 0, 0, &b), LSM_OK);
  uint32_t next_data = 1, next_fence = 0;
  bool seen_fence = false, seen_header = false;
  auto drain = [&]() {
    LsmPageOut out;
    LsmStatus st;
    while ((st = lsm_runbuilder_take_page(b, &out)) == LSM_OK) {
      ASSERT_FALSE(seen_header) << "header must be last";
      ASSERT_LE(out.len, cap);
      ASSERT_TRUE(out.content != nullptr);
      ASSERT_EQ(run->pages.count(out.rel_page), 0u) << "page emitted twice";
      if (out.kind == LSM_PAGE_DATA) {
        ASSERT_FALSE(seen_fence);
        ASSERT_EQ(out.rel_page, next_data++);
      } else if (out.kind == LSM_PAGE_FENCE) {
        if (!seen_fence) next_fence = next_data;  // right after the data pages
        ASSERT_EQ(out.rel_page, next_fence++);
        seen_fence = true;
      } else {
        ASSERT_EQ(out.kind, LSM_PAGE_HEADER);
        ASSERT_EQ(out.rel_page, 0u);
        seen_header = true;
      }
      run->pages[out.rel_page] = StoredPage{
          out.kind, std::vector<uint8_t>(out.content, out.content + out.len)};
    }
    ASSERT_EQ(st, LSM_END);
  };
  for (const Key& k : keys) {
    LsmStatus st = lsm_runbuilder_add(b, U8(k), k.size(), 0);
    ASSERT_TRUE(st == LSM_OK || st == LSM_PAGE_READY) << st;
    if (st == LSM_PAGE_READY) drain();
    if (::testing::Test::HasFatalFailure()) return;
  }
  EXPECT_EQ(lsm_runbuilder_count(b), keys.size());
  LsmStatus st = lsm_runbuilder_finish(b);
  ASSERT_TRUE(st == LSM_OK || st == LSM_PAGE_READY);
  drain();
  ASSERT_TRUE(seen_header);
  EXPECT_EQ(lsm_runbuilder_add(b, U8(Key("zzz")), 3, 0), LSM_INVALID);
  EXPECT_EQ(lsm_runbuilder_finish(b), LSM_INVALID);
  lsm_runbuilder_destroy(b);

  const StoredPage& h = run->pages[0];
  ASSERT_EQ(lsm_runheader_parse(h.content.data(), h.content.size(), &run->hdr),
            LSM_OK);
  EXPECT_EQ(run->hdr.nentries, keys.size());
  EXPECT_EQ(run->hdr.npages, run->pages.size());
  EXPECT_EQ(Key(reinterpret_cast<const char*>(run->hdr.min_key),
                run->hdr.min_key_len),
            keys.front());
  EXPECT_EQ(Key(reinterpret_cast<const char*>(run->hdr.max_key),
                run->hdr.max_key_len),
            keys.back());
  for (uint32_t i = 1; i < run->hdr.npages; i++) {
    ASSERT_EQ(run->pages.count(i), 1u);
    EXPECT_EQ(run->pages[i].kind,
              i <= run->hdr.ndata_pages ? LSM_PAGE_DATA : LSM_PAGE_FENCE);
  }
}

// Walks data pages 1..nd; they must hold exactly keys, in order.
void CheckWalk(BuiltRun* run, const std::vector<Key>& keys) {
  LsmBatch* b;
  ASSERT_EQ(lsm_batch_create(&b), LSM_OK);
  std::vector<Key> all;
  for (uint32_t i = 1; i <= run->hdr.ndata_pages; i++) {
    const StoredPage& p = run->pages[i];
    ASSERT_EQ(lsm_datapage_check(p.content.data(), p.content.size()), LSM_OK);
    lsm_batch_clear(b);
    ASSERT_EQ(lsm_batch_add_datapage(b, p.content.data(), p.content.size()),
              LSM_OK);
    std::vector<Key> page_keys = lsm_test::BatchKeys(b);
    ASSERT_FALSE(page_keys.empty());
    run->first_keys.push_back(page_keys.front());
    all.insert(all.end(), page_keys.begin(), page_keys.end());
  }
  lsm_batch_destroy(b);
  EXPECT_EQ(all, keys);
}

// Descends from the header; returns the data page reached.
uint32_t Descend(const BuiltRun& run, LsmFindMode mode, const Key& target,
                 int* depth) {
  const StoredPage* p = &run.pages.at(0);
  int is_header = 1;
  *depth = 0;
  for (;;) {
    uint32_t child = 0;
    int is_data = -1;
    LsmStatus st =
        lsm_fence_find(p->content.data(), p->content.size(), is_header, mode,
                       U8(target), target.size(), &child, &is_data);
    EXPECT_EQ(st, LSM_OK);
    if (st != LSM_OK) return 0;
    if (is_data) {
      EXPECT_GE(child, 1u);
      EXPECT_LE(child, run.hdr.ndata_pages);
      return child;
    }
    EXPECT_GT(child, run.hdr.ndata_pages);
    EXPECT_LT(child, run.hdr.npages);
    if (++*depth > 30) {
      ADD_FAILURE() << "fence tree too deep";
      return 0;
    }
    p = &run.pages.at(child);
    EXPECT_EQ(p->kind, LSM_PAGE_FENCE);
    is_header = 0;
  }
}

// Expected data page for LE/LT: the last page whose first key <= (<) target,
// or page 1.
uint32_t Expected(const BuiltRun& run, LsmFindMode mode, const Key& target) {
  const auto& f = run.first_keys;
  auto it = mode == LSM_FIND_LE ? std::upper_bound(f.begin(), f.end(), target)
                                : std::lower_bound(f.begin(), f.end(), target);
  size_t n = static_cast<size_t>(it - f.begin());
  return n == 0 ? 1 : static_cast<uint32_t>(n);
}

void CheckSearches(const BuiltRun& run, const std::vector<Key>& keys,
                   KeyGen* gen, int ntargets) {
  int depth;
  EXPECT_EQ(Descend(run, LSM_FIND_FIRST, Key(), &depth), 1u);
  EXPECT_EQ(static_cast<uint32_t>(depth), run.hdr.height);
  EXPECT_EQ(Descend(run, LSM_FIND_LAST, Key(), &depth), run.hdr.ndata_pages);
  std::vector<Key> targets;
  for (int i = 0; i < ntargets; i++) {
    targets.push_back(gen->Next());
    const Key& k = keys[gen->Uniform(0, keys.size() - 1)];
    targets.push_back(k);  // exact hits, including page first keys
    targets.push_back(k.substr(0, gen->Uniform(0, k.size())));
  }
  targets.push_back(keys.front());
  targets.push_back(keys.back());
  targets.push_back(keys.back() + '\xff');
  targets.push_back(Key());
  for (const Key& t : targets) {
    for (LsmFindMode mode : {LSM_FIND_LE, LSM_FIND_LT}) {
      uint32_t got = Descend(run, mode, t, &depth);
      ASSERT_EQ(got, Expected(run, mode, t));
      ASSERT_EQ(static_cast<uint32_t>(depth), run.hdr.height);
    }
    // The page reached by LE holds the first key >= t, or that key is the
    // first key of the next page (or there is none).
    uint32_t le = Descend(run, LSM_FIND_LE, t, &depth);
    auto first_ge = std::lower_bound(keys.begin(), keys.end(), t);
    if (first_ge != keys.end() && le < run.hdr.ndata_pages) {
      ASSERT_LE(*first_ge, run.first_keys[le]);  // first key of page le + 1
    }
    if (first_ge != keys.end() && le > 1) {
      ASSERT_GE(*first_ge, run.first_keys[le - 1]);
    }
    // The page reached by LT holds the last key < t (if any).
    uint32_t lt = Descend(run, LSM_FIND_LT, t, &depth);
    if (first_ge != keys.begin()) {
      const Key& last_lt = *(first_ge - 1);
      ASSERT_GE(last_lt, run.first_keys[lt - 1]);
      if (lt < run.hdr.ndata_pages) {
        ASSERT_LT(last_lt, run.first_keys[lt]);
      }
    }
  }
}

std::vector<Key> SortedKeys(KeyGen* gen, size_t n) {
  std::set<Key> s;
  while (s.size() < n) s.insert(gen->Next());
  return std::vector<Key>(s.begin(), s.end());
}

class RunBuilderSizes : public ::testing::TestWithParam<size_t> {};

TEST_P(RunBuilderSizes, BuildWalkAndSearch) {
  KeyGen gen(static_cast<uint32_t>(GetParam()));
  std::vector<Key> keys = SortedKeys(&gen, GetParam());
  BuiltRun run;
  BuildRun(keys, kCap, &run);
  if (HasFatalFailure()) return;
  CheckWalk(&run, keys);
  if (HasFatalFailure()) return;
  CheckSearches(run, keys, &gen, 300);
  if (GetParam() <= 2) {
    EXPECT_EQ(run.hdr.ndata_pages, 1u);
    EXPECT_EQ(run.hdr.height, 0u);
    EXPECT_EQ(run.hdr.npages, 2u);
  }
}

INSTANTIATE_TEST_SUITE_P(Sizes, RunBuilderSizes,
                         ::testing::Values(1, 2, 100, 100000));

// Long keys (~1500 bytes) make the fence tree several levels high.
TEST(RunBuilderTest, LongKeysHeightAtLeastTwo) {
  std::mt19937 rng(99);
  std::set<Key> s;
  while (s.size() < 2000) {
    Key k(1400 + rng() % 137, '\0');
    for (auto& c : k) c = static_cast<char>(rng());
    s.insert(k);
  }
  std::vector<Key> keys(s.begin(), s.end());
  BuiltRun run;
  BuildRun(keys, kCap, &run);
  if (HasFatalFailure()) return;
  EXPECT_GE(run.hdr.height, 2u);
  CheckWalk(&run, keys);
  if (HasFatalFailure()) return;
  KeyGen gen(99);
  CheckSearches(run, keys, &gen, 200);
}

// Maximum-size keys with the smallest accepted content area.
TEST(RunBuilderTest, MaxKeysAtMinimumCapacity) {
  for (size_t n : {1, 2, 3, 50, 400}) {
    std::vector<Key> keys;
    for (size_t i = 0; i < n; i++) {
      Key k(LSM_MAX_KEY_SIZE, '\x7f');
      k[0] = static_cast<char>(i >> 8);
      k[1] = static_cast<char>(i);
      keys.push_back(k);
    }
    BuiltRun run;
    BuildRun(keys, lsm::kMinContentCap, &run);
    if (HasFatalFailure()) return;
    CheckWalk(&run, keys);
    if (HasFatalFailure()) return;
    KeyGen gen(static_cast<uint32_t>(n));
    CheckSearches(run, keys, &gen, 50);
    if (HasFatalFailure()) return;
  }
}

TEST(RunBuilderTest, BadCallsAreRefused) {
  LsmRunBuilder* b = nullptr;
  EXPECT_EQ(lsm_runbuilder_create(100, 0, 0, &b), LSM_INVALID);  // below minimum
  EXPECT_EQ(b, nullptr);
  EXPECT_EQ(lsm_runbuilder_create(lsm::kMinContentCap - 1, 0, 0, &b), LSM_INVALID);
  EXPECT_EQ(lsm_runbuilder_create(70000, 0, 0, &b), LSM_INVALID);
  EXPECT_EQ(lsm_runbuilder_create(kCap, 0, 0, nullptr), LSM_INVALID);
  ASSERT_EQ(lsm_runbuilder_create(kCap, 0, 0, &b), LSM_OK);
  LsmPageOut out;
  EXPECT_EQ(lsm_runbuilder_take_page(b, &out), LSM_END);
  EXPECT_EQ(lsm_runbuilder_finish(b), LSM_INVALID);  // no keys
  EXPECT_EQ(lsm_runbuilder_add(b, U8(Key("m")), 1, 0), LSM_OK);
  EXPECT_EQ(lsm_runbuilder_add(b, U8(Key("m")), 1, 0), LSM_INVALID);  // dup
  EXPECT_EQ(lsm_runbuilder_add(b, U8(Key("a")), 1, 0), LSM_INVALID);  // order
  EXPECT_EQ(lsm_runbuilder_add(b, U8(Key("ma")), 2, 0), LSM_OK);
  Key big(LSM_MAX_KEY_SIZE + 1, 'z');
  EXPECT_EQ(lsm_runbuilder_add(b, U8(big), big.size(), 0), LSM_TOO_LARGE);
  EXPECT_EQ(lsm_runbuilder_add(b, nullptr, 3, 0), LSM_INVALID);
  EXPECT_EQ(lsm_runbuilder_count(b), 2u);
  EXPECT_EQ(lsm_runbuilder_take_page(b, nullptr), LSM_INVALID);
  lsm_runbuilder_destroy(b);
  lsm_runbuilder_destroy(nullptr);
}

// Random bytes and bit flips in header and fence pages: never a crash, and a
// child that is returned lies in the run's page range.
TEST(RunBuilderTest, FuzzFenceFindAndHeaderParse) {
  std::mt19937 rng(2024);
  std::set<Key> s;
  while (s.size() < 3000) {
    Key k(200 + rng() % 1300, '\0');
    for (auto& c : k) c = static_cast<char>(rng());
    s.insert(k);
  }
  std::vector<Key> keys(s.begin(), s.end());
  BuiltRun run;
  BuildRun(keys, kCap, &run);
  if (HasFatalFailure()) return;
  ASSERT_GE(run.hdr.height, 1u);
  std::vector<const StoredPage*> samples = {&run.pages[0]};
  for (uint32_t i = run.hdr.ndata_pages + 1; i < run.hdr.npages; i++)
    samples.push_back(&run.pages[i]);
  for (int iter = 0; iter < 20000; iter++) {
    const StoredPage* base = samples[rng() % samples.size()];
    std::vector<uint8_t> p = base->content;
    int is_header = base->kind == LSM_PAGE_HEADER;
    if (iter % 5 == 0) {
      for (auto& c : p) c = static_cast<uint8_t>(rng());
    } else {
      int flips = 1 + rng() % 6;
      for (int f = 0; f < flips; f++) {
        size_t bit = rng() % (p.size() * 8);
        p[bit / 8] ^= static_cast<uint8_t>(1u << (bit % 8));
      }
      if (rng() % 4 == 0) p.resize(rng() % (p.size() + 1));
    }
    if (rng() % 8 == 0) is_header = !is_header;
    const Key& t = keys[rng() % keys.size()];
    uint32_t child = 0;
    int is_data = 0;
    LsmStatus st = lsm_fence_find(p.data(), p.size(), is_header,
                                  static_cast<LsmFindMode>(rng() % 4), U8(t),
                                  t.size(), &child, &is_data);
    ASSERT_TRUE(st == LSM_OK || st == LSM_CORRUPT) << st;
    if (st == LSM_OK) {
      ASSERT_NE(child, 0u);
    }
    LsmRunHeader h;
    st = lsm_runheader_parse(p.data(), p.size(), &h);
    ASSERT_TRUE(st == LSM_OK || st == LSM_CORRUPT);
    if (st == LSM_OK) {
      ASSERT_LE(h.min_key + h.min_key_len, p.data() + p.size());
      ASSERT_LE(h.max_key + h.max_key_len, p.data() + p.size());
    }
  }
}

}  // namespace

// Collects the data-page children of a fence node in order, checking
// separators ascend and equal the first key of their child.
void WalkFenceEntries(const BuiltRun& run, uint32_t rel, bool is_header,
                      uint32_t want_level, std::vector<uint32_t>* data) {
  const StoredPage& p = run.pages.at(rel);
  size_t n = 0;
  uint32_t level = 0;
  const uint8_t* key;
  size_t klen;
  uint32_t child;
  ASSERT_EQ(lsm_fence_entry(p.content.data(), p.content.size(), is_header, 0,
                            &n, &level, &key, &klen, &child),
            LSM_OK);
  if (want_level != 0) {
    ASSERT_EQ(level, want_level);
  }
  Key prev;
  for (size_t i = 0; i < n; i++) {
    size_t n2;
    uint32_t level2;
    ASSERT_EQ(lsm_fence_entry(p.content.data(), p.content.size(), is_header, i,
                              &n2, &level2, &key, &klen, &child),
              LSM_OK);
    ASSERT_EQ(n2, n);
    Key sep(reinterpret_cast<const char*>(key), klen);
    if (i > 0) {
      ASSERT_LT(prev, sep);
    }
    prev = sep;
    if (level == 1) {
      ASSERT_GE(child, 1u);
      ASSERT_LE(child, run.hdr.ndata_pages);
      ASSERT_EQ(sep, run.first_keys[child - 1]);
      data->push_back(child);
    } else {
      WalkFenceEntries(run, child, false, level - 1, data);
      if (::testing::Test::HasFatalFailure()) return;
    }
  }
  size_t n3;
  uint32_t level3;
  EXPECT_EQ(lsm_fence_entry(p.content.data(), p.content.size(), is_header, n,
                            &n3, &level3, &key, &klen, &child),
            LSM_END);
}

// lsm_fence_entry enumerates the whole fence tree: every data page once, in
// order, under the separator that is its first key; garbage is LSM_CORRUPT.
TEST(RunBuilderTest, FenceEntriesWalkTheTree) {
  std::mt19937 rng(77);
  std::set<Key> s;
  while (s.size() < 3000) {
    Key k(300 + rng() % 1200, '\0');
    for (auto& c : k) c = static_cast<char>(rng());
    s.insert(k);
  }
  std::vector<Key> keys(s.begin(), s.end());
  BuiltRun run;
  BuildRun(keys, kCap, &run);
  if (HasFatalFailure()) return;
  ASSERT_GE(run.hdr.height, 1u);
  CheckWalk(&run, keys);  // fills run.first_keys
  if (HasFatalFailure()) return;
  std::vector<uint32_t> data;
  WalkFenceEntries(run, 0, true, run.hdr.height + 1, &data);
  if (HasFatalFailure()) return;
  ASSERT_EQ(data.size(), run.hdr.ndata_pages);
  for (size_t i = 0; i < data.size(); i++) EXPECT_EQ(data[i], i + 1);

  size_t n;
  uint32_t level, child;
  const uint8_t* key;
  size_t klen;
  EXPECT_EQ(lsm_fence_entry(nullptr, 10, 0, 0, &n, &level, &key, &klen, &child),
            LSM_CORRUPT);
  const StoredPage& hdr = run.pages.at(0);
  EXPECT_EQ(lsm_fence_entry(hdr.content.data(), hdr.content.size(), 1, 0,
                            nullptr, &level, &key, &klen, &child),
            LSM_INVALID);
  for (int iter = 0; iter < 20000; iter++) {
    const StoredPage& base =
        run.pages.at(iter % 3 == 0 ? 0 : run.hdr.ndata_pages + 1 +
                                             rng() % (run.hdr.npages -
                                                      run.hdr.ndata_pages - 1));
    std::vector<uint8_t> p = base.content;
    for (int f = 0; f < 1 + static_cast<int>(rng() % 6); f++) {
      size_t bit = rng() % (p.size() * 8);
      p[bit / 8] ^= static_cast<uint8_t>(1u << (bit % 8));
    }
    if (rng() % 4 == 0) p.resize(rng() % (p.size() + 1));
    LsmStatus st = lsm_fence_entry(p.data(), p.size(), base.kind == LSM_PAGE_HEADER,
                                   rng() % 64, &n, &level, &key, &klen, &child);
    ASSERT_TRUE(st == LSM_OK || st == LSM_END || st == LSM_CORRUPT) << st;
    if (st == LSM_OK) {
      ASSERT_GE(key, p.data());
      ASSERT_LE(key + klen, p.data() + p.size());
    }
  }
}
