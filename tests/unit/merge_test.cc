// merge_test.cc — merging iterator against a std::set reference.

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <set>
#include <vector>

#include "lsm_core.h"
#include "test_util.h"

namespace {

using lsm_test::Key;
using lsm_test::KeyGen;
using lsm_test::U8;

// One source: its ascending keys cut into batches (some may be empty).
using Source = std::vector<std::vector<Key>>;

struct Bounds {
  bool has_lo = false, has_hi = false;
  Key lo, hi;
};

bool BeforeLo(const Bounds& b, const Key& k) { return b.has_lo && k < b.lo; }
bool BeyondHi(const Bounds& b, const Key& k) {
  return b.has_hi && !lsm_test::WithinHi(k, b.hi);
}

// Runs the merge protocol the way the shim does; checks that a source the
// iterator finished (its batch crossed the far bound) is never asked again.
// lazy: every batch goes in as a data page, decoded a piece at a time.
// many > 0: through lsm_merge_next_many, up to many keys a call.
std::vector<Key> RunMerge(const std::vector<Source>& sources, bool backward,
                          const Bounds& bounds, std::vector<int>* ask_order,
                          bool lazy = false, int many = 0) {
  const int n = static_cast<int>(sources.size());
  LsmMerge* m = nullptr;
  EXPECT_EQ(lsm_merge_create(
                n, backward, bounds.has_lo ? U8(bounds.lo) : nullptr,
                bounds.lo.size(), bounds.has_hi ? U8(bounds.hi) : nullptr,
                bounds.hi.size(), &m),
            LSM_OK);
  lsm_merge_set_lazy(m, lazy);
  LsmBatch* tmp = nullptr;
  EXPECT_EQ(lsm_batch_create(&tmp), LSM_OK);
  std::vector<uint8_t> page(65535);
  std::vector<size_t> fed(n, 0);
  std::vector<bool> crossed(n, false), done(n, false);
  std::vector<const std::vector<Key>*> current(n, nullptr);
  std::vector<Key> out;
  for (int steps = 0;; steps++) {
    if (steps > 10000000) {
      ADD_FAILURE() << "merge does not terminate";
      break;
    }
    const uint8_t* keys[64];
    size_t lens[64];
    int got = 1;
    int src = -1;
    LsmStatus st = many > 0
                       ? lsm_merge_next_many(m, keys, lens, many, &got, &src)
                       : lsm_merge_next(m, &keys[0], &lens[0], &src);
    if (many == 0 && st != LSM_OK) got = 0;
    if (st == LSM_END) break;
    if (st == LSM_OK) {
      EXPECT_TRUE(got >= 1 && got <= (many > 0 ? many : 1)) << got << " keys";
      // the iterator names the source whose batch holds the keys
      const int last = lsm_merge_last_source(m);
      for (int i = 0; i < got; i++) {
        out.emplace_back(reinterpret_cast<const char*>(keys[i]), lens[i]);
        EXPECT_TRUE(last >= 0 && last < n && current[last] != nullptr &&
                    std::find(current[last]->begin(), current[last]->end(),
                              out.back()) != current[last]->end())
            << "lsm_merge_last_source named source " << last;
      }
      continue;
    }
    EXPECT_EQ(got, 0) << "no keys with status " << st;
    EXPECT_EQ(lsm_merge_last_source(m), -1);
    if (st != LSM_NEED_PAGE) {
      ADD_FAILURE() << "status " << st;
      break;
    }
    if (src < 0 || src >= n || done[src] || crossed[src]) {
      ADD_FAILURE() << "asked for source " << src << " that is finished";
      break;
    }
    if (ask_order) ask_order->push_back(src);
    const Source& s = sources[src];
    if (fed[src] == s.size()) {
      lsm_merge_source_done(m, src);
      done[src] = true;
      continue;
    }
    const std::vector<Key>& batch =
        s[backward ? s.size() - 1 - fed[src] : fed[src]];
    fed[src]++;
    current[src] = &batch;
    LsmBatch* b = lsm_merge_source_batch(m, src);
    EXPECT_NE(b, nullptr);
    lsm_batch_clear(b);
    lsm_batch_clear(tmp);
    // A forward page with bounds is decoded from lo (keys below it are never
    // seen), so only a key beyond hi from lo on crosses.
    const bool from_lo = lazy && !backward && (bounds.has_lo || bounds.has_hi);
    for (const Key& k : batch) {
      EXPECT_EQ(lsm_batch_add_key(lazy ? tmp : b, U8(k), k.size()), LSM_OK);
      if (backward ? BeforeLo(bounds, k)
                   : BeyondHi(bounds, k) && !(from_lo && BeforeLo(bounds, k)))
        crossed[src] = true;
    }
    if (lazy) {
      // as the shim feeds a run page: through lsm_merge_feed_datapage, every
      // other page asking whether it holds a key in range (decoded whole)
      size_t len = 0;
      int in_range = -1;
      EXPECT_EQ(lsm_datapage_build(tmp, nullptr, page.data(), page.size(), &len),
                LSM_OK);
      EXPECT_EQ(lsm_merge_feed_datapage(m, src, page.data(), len,
                                        fed[src] % 2 ? &in_range : nullptr),
                LSM_OK);
      if (fed[src] % 2) {
        bool any = false;
        for (const Key& k : batch)
          any |= !BeforeLo(bounds, k) && !BeyondHi(bounds, k);
        EXPECT_EQ(in_range, any ? 1 : 0);
      }
      continue;
    }
    lsm_merge_source_ready(m, src);
  }
  lsm_merge_destroy(m);
  lsm_batch_destroy(tmp);
  return out;
}

std::vector<Key> Reference(const std::vector<Source>& sources, bool backward,
                           const Bounds& bounds) {
  std::set<Key> all;
  for (const Source& s : sources)
    for (const auto& batch : s)
      for (const Key& k : batch)
        if (!BeforeLo(bounds, k) && !BeyondHi(bounds, k)) all.insert(k);
  std::vector<Key> out(all.begin(), all.end());
  if (backward) std::reverse(out.begin(), out.end());
  return out;
}

// Random sources drawn from one universe (so keys repeat across sources),
// cut into random batches.
std::vector<Source> RandomSources(KeyGen* gen, const std::vector<Key>& universe,
                                  int n, size_t max_batch = 40) {
  std::vector<Source> sources(n);
  for (Source& s : sources) {
    double p = 0.02 + (gen->Uniform(0, 1000) / 1000.0) * 0.5;
    std::vector<Key> keys;
    for (const Key& k : universe)
      if (gen->Uniform(0, 1000000) < p * 1000000) keys.push_back(k);
    size_t i = 0;
    do {
      size_t take = gen->Uniform(0, 3) == 0 ? 0 : gen->Uniform(1, max_batch);
      take = std::min(take, keys.size() - i);
      s.emplace_back(keys.begin() + i, keys.begin() + i + take);
      i += take;
    } while (i < keys.size());
  }
  return sources;
}

Bounds RandomBounds(KeyGen* gen, const std::vector<Key>& universe) {
  Bounds b;
  auto pick = [&]() -> Key {
    switch (gen->Uniform(0, 3)) {
      case 0:
        return gen->Next();
      case 1: {
        const Key& k = universe[gen->Uniform(0, universe.size() - 1)];
        return k.substr(0, gen->Uniform(0, k.size()));  // prefix bound
      }
      default:
        return universe[gen->Uniform(0, universe.size() - 1)];
    }
  };
  b.has_lo = gen->Uniform(0, 2) != 0;
  b.has_hi = gen->Uniform(0, 2) != 0;
  if (b.has_lo) b.lo = pick();
  if (b.has_hi) b.hi = pick();
  if (b.has_lo && b.has_hi && gen->Uniform(0, 2) == 0)  // a prefix scan
    b.hi = b.lo.substr(0, gen->Uniform(0, b.lo.size()));
  if (b.has_lo && b.has_hi && b.hi < b.lo && gen->Uniform(0, 1))
    std::swap(b.lo, b.hi);
  return b;
}

TEST(MergeTest, RandomAgainstReference) {
  KeyGen gen(77, 24);
  for (int round = 0; round < 400; round++) {
    std::set<Key> u;
    size_t nu = gen.Uniform(1, 600);
    while (u.size() < nu) u.insert(gen.Next());
    std::vector<Key> universe(u.begin(), u.end());
    static const int kCounts[] = {1, 2, 3, 5, 17, 64};
    int n = kCounts[round % 6];
    std::vector<Source> sources = RandomSources(&gen, universe, n);
    Bounds bounds = RandomBounds(&gen, universe);
    for (bool backward : {false, true}) {
      for (int many : {0, 1, 3, 64}) {
        std::vector<Key> got =
            RunMerge(sources, backward, bounds, nullptr, false, many);
        if (HasFailure()) return;
        ASSERT_EQ(got, Reference(sources, backward, bounds))
            << "round " << round << " backward " << backward << " many "
            << many;
      }
    }
  }
}

// Lazy pages: batches of up to 300 keys (19 restart groups) decoded a piece
// at a time, against the same reference.
TEST(MergeTest, LazyPagesAgainstReference) {
  KeyGen gen(79, 24);
  for (int round = 0; round < 200; round++) {
    std::set<Key> u;
    size_t nu = gen.Uniform(1, 1500);
    while (u.size() < nu) u.insert(gen.Next());
    std::vector<Key> universe(u.begin(), u.end());
    static const int kCounts[] = {1, 2, 3, 5};
    int n = kCounts[round % 4];
    std::vector<Source> sources = RandomSources(&gen, universe, n, 300);
    Bounds bounds = RandomBounds(&gen, universe);
    for (bool backward : {false, true}) {
      for (int many : {0, 5, 64}) {
        std::vector<Key> got =
            RunMerge(sources, backward, bounds, nullptr, true, many);
        if (HasFailure()) return;
        ASSERT_EQ(got, Reference(sources, backward, bounds))
            << "round " << round << " backward " << backward << " many "
            << many;
      }
    }
  }
}

// A lazy page whose later restart group is damaged: the keys before it come
// out in order, then LSM_CORRUPT naming the source, in both directions.
TEST(MergeTest, LazyPieceFailingValidationIsReported) {
  std::vector<Key> keys;
  for (int i = 0; i < 200; i++) {
    char buf[16];
    snprintf(buf, sizeof(buf), "key%05d", i * 7);
    keys.push_back(buf);
  }
  LsmBatch* tmp = nullptr;
  ASSERT_EQ(lsm_batch_create(&tmp), LSM_OK);
  for (const Key& k : keys) ASSERT_EQ(lsm_batch_add_key(tmp, U8(k), k.size()), LSM_OK);
  std::vector<uint8_t> page(65535);
  size_t len = 0;
  ASSERT_EQ(lsm_datapage_build(tmp, nullptr, page.data(), page.size(), &len), LSM_OK);
  lsm_batch_destroy(tmp);
  // the restart offset of group 6 (of 13) points one byte off
  const size_t nr = page[2] | (page[3] << 8);
  ASSERT_EQ(nr, 13u);
  page[len - 2 * nr + 2 * 6] += 1;
  for (bool backward : {false, true}) {
    LsmMerge* m = nullptr;
    ASSERT_EQ(lsm_merge_create(1, backward, nullptr, 0, nullptr, 0, &m), LSM_OK);
    lsm_merge_set_lazy(m, 1);
    const uint8_t* k;
    size_t klen;
    int src;
    ASSERT_EQ(lsm_merge_next(m, &k, &klen, &src), LSM_NEED_PAGE);
    ASSERT_EQ(lsm_merge_feed_datapage(m, 0, page.data(), len, nullptr), LSM_OK);
    std::vector<Key> got;
    LsmStatus st;
    while ((st = lsm_merge_next(m, &k, &klen, &src)) == LSM_OK)
      got.emplace_back(reinterpret_cast<const char*>(k), klen);
    EXPECT_EQ(st, LSM_CORRUPT) << "backward " << backward;
    EXPECT_EQ(lsm_merge_last_source(m), 0);
    EXPECT_LT(got.size(), keys.size());
    for (size_t i = 0; i < got.size(); i++)
      EXPECT_EQ(got[i], backward ? keys[keys.size() - 1 - i] : keys[i]);
    lsm_merge_destroy(m);
  }
}

TEST(MergeTest, ManySources) {
  KeyGen gen(78, 16);
  std::set<Key> u;
  while (u.size() < 5000) u.insert(gen.Next());
  std::vector<Key> universe(u.begin(), u.end());
  std::vector<Source> sources = RandomSources(&gen, universe, 300);
  for (int i = 0; i < 4; i++) {
    Bounds bounds = i == 0 ? Bounds() : RandomBounds(&gen, universe);
    for (bool backward : {false, true}) {
      std::vector<Key> got = RunMerge(sources, backward, bounds, nullptr);
      ASSERT_EQ(got, Reference(sources, backward, bounds));
    }
  }
}

TEST(MergeTest, InitialRequestsInOrderAndDuplicatesOnce) {
  std::vector<Source> sources = {
      {{"a", "c", "e"}}, {{"a", "b", "c"}}, {{"c", "d"}, {"e", "f"}}};
  std::vector<int> asked;
  std::vector<Key> got = RunMerge(sources, false, Bounds(), &asked);
  EXPECT_EQ(got, (std::vector<Key>{"a", "b", "c", "d", "e", "f"}));
  ASSERT_GE(asked.size(), 3u);
  EXPECT_EQ(std::vector<int>(asked.begin(), asked.begin() + 3),
            (std::vector<int>{0, 1, 2}));
  got = RunMerge(sources, true, Bounds(), nullptr);
  EXPECT_EQ(got, (std::vector<Key>{"f", "e", "d", "c", "b", "a"}));
}

TEST(MergeTest, EmptyBatchesAreAskedAgain) {
  std::vector<Source> sources = {{{}, {}, {"k"}, {}}, {{}, {}}};
  EXPECT_EQ(RunMerge(sources, false, Bounds(), nullptr), std::vector<Key>{"k"});
  EXPECT_EQ(RunMerge(sources, true, Bounds(), nullptr), std::vector<Key>{"k"});
}

TEST(MergeTest, PrefixUpperBound) {
  // hi = "ab": "ab", "ab\0", "abz" (hi is a prefix) and "a" (a prefix of hi)
  // are within; "ac" and "b" are not.
  std::vector<Source> sources = {{{"a", "ab", "ab\0"}},
                                 {{"aa", "abz", "ac"}, {"b"}}};
  sources[0][0][2] = Key("ab\0", 3);
  Bounds b;
  b.has_hi = true;
  b.hi = "ab";
  EXPECT_EQ(RunMerge(sources, false, b, nullptr),
            (std::vector<Key>{"a", "aa", "ab", Key("ab\0", 3), "abz"}));
  EXPECT_EQ(RunMerge(sources, true, b, nullptr),
            (std::vector<Key>{"abz", Key("ab\0", 3), "ab", "aa", "a"}));
  b.has_lo = true;
  b.lo = "ab";
  EXPECT_EQ(RunMerge(sources, false, b, nullptr),
            (std::vector<Key>{"ab", Key("ab\0", 3), "abz"}));
  b.hi = "";  // empty prefix: everything is within
  EXPECT_EQ(RunMerge(sources, false, b, nullptr),
            (std::vector<Key>{"ab", Key("ab\0", 3), "abz", "ac", "b"}));
}

TEST(MergeTest, ZeroSources) {
  LsmMerge* m;
  ASSERT_EQ(lsm_merge_create(0, 0, nullptr, 0, nullptr, 0, &m), LSM_OK);
  const uint8_t* k;
  size_t len;
  int src;
  EXPECT_EQ(lsm_merge_next(m, &k, &len, &src), LSM_END);
  EXPECT_EQ(lsm_merge_source_batch(m, 0), nullptr);
  lsm_merge_destroy(m);
}

TEST(MergeTest, MisuseIsReported) {
  LsmMerge* m;
  ASSERT_EQ(lsm_merge_create(2, 0, nullptr, 0, nullptr, 0, &m), LSM_OK);
  const uint8_t* k;
  size_t len;
  int src;
  ASSERT_EQ(lsm_merge_next(m, &k, &len, &src), LSM_NEED_PAGE);
  ASSERT_EQ(src, 0);
  ASSERT_EQ(lsm_batch_add_key(lsm_merge_source_batch(m, 0), U8(Key("x")), 1),
            LSM_OK);
  lsm_merge_source_ready(m, 0);
  ASSERT_EQ(lsm_merge_next(m, &k, &len, &src), LSM_NEED_PAGE);
  ASSERT_EQ(src, 1);
  lsm_merge_source_done(m, 1);
  ASSERT_EQ(lsm_merge_next(m, &k, &len, &src), LSM_OK);
  lsm_merge_source_ready(m, 0);  // source 0 was not asked for
  EXPECT_EQ(lsm_merge_next(m, &k, &len, &src), LSM_INVALID);
  lsm_merge_destroy(m);

  ASSERT_EQ(lsm_merge_create(1, 0, nullptr, 0, nullptr, 0, &m), LSM_OK);
  lsm_merge_source_ready(m, 5);  // no such source
  EXPECT_EQ(lsm_merge_next(m, &k, &len, &src), LSM_INVALID);
  lsm_merge_destroy(m);
}

}  // namespace
