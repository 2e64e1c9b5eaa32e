// downward_test.cc — the one-call-per-page paths of the C API (issue 13,
// "data flows down"): a run builder that owns its bloom filter, feeding run
// data pages to the merging iterator, and replaying a log page into a
// memtable.  Each is checked against the old composition of per-key calls
// (which the shim used to make), byte for byte, and the run builder against
// golden digests recorded from the old path before the change: the on-disk
// format must not move.

#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "lsm_core.h"
#include "test_util.h"

namespace {

using lsm_test::Key;
using lsm_test::KeyGen;
using lsm_test::U8;

constexpr size_t kCap = 8152;  // an 8 kB page's content area (LSM_CONTENT_CAP)

struct Page {
  LsmPageKind kind;
  std::vector<uint8_t> content;
};
using Pages = std::map<uint32_t, Page>;

// ---------------------------------------------------------------------------
// Run builder with its filter vs. the old path

// A case of the golden table: keys like encoded entries (column bytes, then a
// 6-byte TID); prefix_mode 0: the filter hashes all columns (len - 6), 1: a
// 9-byte first column repeated 1..3 times (equal adjacent prefixes).
struct Case {
  uint32_t seed;
  size_t n, minlen, maxlen;
  uint32_t bits;
  int prefix_mode;
  uint32_t npages, bloom_start, nblocks;
  uint64_t digest;
};

// Recorded with the old path (lsm_runbuilder_* without a filter, plus a
// separate lsm_bloom_builder_* fed by the shim with de-duplicated hashes of
// the filter prefix, its pages placed after the header's npages) at commit
// cafa2d0, before the run builder owned its filter.
const Case kGolden[] = {
    {1, 20000, 15, 15, 10, 1, 20, 16, 391, 0xf130406af505daa3ull},
    {2, 3000, 15, 300, 16, 0, 62, 61, 94, 0x6d9eda308fafc258ull},
    {3, 20000, 150, 250, 32, 0, 515, 505, 1250, 0xf7ec63c9a0cca6b0ull},
    {4, 1, 15, 15, 10, 0, 3, 2, 1, 0x191e91044809e02dull},
    {5, 200000, 15, 15, 10, 1, 180, 148, 3907, 0xb0c845cc91679dc0ull},
};

std::vector<Key> CaseKeys(const Case& c, std::vector<size_t>* prefix) {
  std::mt19937_64 rng(c.seed);
  std::vector<Key> keys;
  Key col;
  for (size_t i = 0; i < c.n; i++) {
    Key k;
    if (c.prefix_mode == 1) {
      uint64_t r = rng();
      if (i == 0 || (r & 3) == 0) {
        col.assign(9, 0);
        uint64_t v = i * 1000003ull;
        for (int b = 0; b < 8; b++) col[1 + b] = static_cast<char>(v >> (56 - 8 * b));
      }
      k = col;
      for (int b = 0; b < 6; b++) k += static_cast<char>(uint64_t{i} >> (40 - 8 * b));
      prefix->push_back(9);
    } else {
      size_t len = c.minlen + rng() % (c.maxlen - c.minlen + 1);
      for (int b = 0; b < 8; b++) k += static_cast<char>(uint64_t{i} >> (56 - 8 * b));
      while (k.size() < len - 6) k += static_cast<char>(rng() & 0xFF);
      for (int b = 0; b < 6; b++) k += static_cast<char>(rng() & 0xFF);
      prefix->push_back(k.size() - 6);
    }
    keys.push_back(k);
  }
  return keys;
}

// Order-independent digest of a run's pages (as recorded in kGolden).
uint64_t Digest(const Pages& pages) {
  uint64_t d = 0;
  for (const auto& [rel, p] : pages)
    d ^= lsm_hash64(p.content.data(), p.content.size(), rel * 16 + p.kind) *
             0x9E3779B97F4A7C15ull +
         rel;
  return d;
}

void Take(LsmRunBuilder* b, Pages* pages) {
  LsmPageOut o;
  LsmStatus st;
  while ((st = lsm_runbuilder_take_page(b, &o)) == LSM_OK) {
    ASSERT_LE(o.len, kCap);
    ASSERT_EQ(pages->count(o.rel_page), 0u) << "page " << o.rel_page << " twice";
    (*pages)[o.rel_page] = Page{o.kind, std::vector<uint8_t>(o.content, o.content + o.len)};
  }
  ASSERT_EQ(st, LSM_END);
}

// The new path: one call per key, pages of every kind come back.
void BuildNew(const std::vector<Key>& keys, const std::vector<size_t>& prefix,
              uint32_t bits, uint64_t expected, Pages* pages, LsmRunInfo* info) {
  LsmRunBuilder* b = nullptr;
  ASSERT_EQ(lsm_runbuilder_create(kCap, bits, expected, &b), LSM_OK);
  for (size_t i = 0; i < keys.size(); i++) {
    LsmStatus st = lsm_runbuilder_add(b, U8(keys[i]), keys[i].size(), prefix[i]);
    ASSERT_TRUE(st == LSM_OK || st == LSM_PAGE_READY) << st;
    if (st == LSM_PAGE_READY) Take(b, pages);
    if (::testing::Test::HasFatalFailure()) break;
  }
  EXPECT_EQ(lsm_runbuilder_info(b, info), LSM_INVALID);  // not finished
  EXPECT_EQ(lsm_runbuilder_finish(b), LSM_PAGE_READY);
  Take(b, pages);
  EXPECT_EQ(lsm_runbuilder_info(b, info), LSM_OK);
  lsm_runbuilder_destroy(b);
}

// The old path, as the shim composed it: a filterless run builder, and a
// bloom builder fed with the de-duplicated hash of each key's filter prefix,
// its pages written after the run's other pages.
void BuildOld(const std::vector<Key>& keys, const std::vector<size_t>& prefix,
              uint32_t bits, uint64_t expected, Pages* pages, LsmRunInfo* info) {
  LsmRunBuilder* b = nullptr;
  LsmBloomBuilder* f = nullptr;
  ASSERT_EQ(lsm_runbuilder_create(kCap, 0, 0, &b), LSM_OK);
  if (bits > 0) {
    ASSERT_EQ(lsm_bloom_builder_create(expected > 0 ? expected : 1, bits, &f), LSM_OK);
  }
  bool have = false;
  uint64_t last = 0;
  for (size_t i = 0; i < keys.size(); i++) {
    LsmStatus st = lsm_runbuilder_add(b, U8(keys[i]), keys[i].size(), 0);
    if (st == LSM_PAGE_READY) Take(b, pages);
    if (f != nullptr) {
      uint64_t h = lsm_hash64(keys[i].data(), prefix[i], LSM_BLOOM_HASH_SEED);
      if (!(have && h == last)) lsm_bloom_builder_add(f, h);
      have = true;
      last = h;
    }
  }
  lsm_runbuilder_finish(b);
  Take(b, pages);
  uint32_t first = pages->rbegin()->first + 1;
  info->nentries = lsm_runbuilder_count(b);
  info->npages = first;
  info->bloom_start = 0;
  info->bloom_nblocks = 0;
  if (f != nullptr) {
    std::vector<uint8_t> page(kCap);
    uint32_t np = lsm_bloom_builder_npages(f, kCap);
    for (uint32_t i = 0; i < np; i++) {
      size_t len;
      ASSERT_EQ(lsm_bloom_builder_page(f, i, page.data(), kCap, &len), LSM_OK);
      (*pages)[first + i] = Page{LSM_PAGE_BLOOM, std::vector<uint8_t>(page.begin(), page.begin() + len)};
    }
    info->npages = first + np;
    info->bloom_start = first;
    info->bloom_nblocks = lsm_bloom_builder_nblocks(f);
  }
  lsm_runbuilder_destroy(b);
  lsm_bloom_builder_destroy(f);
}

void ExpectSamePages(const Pages& a, const Pages& b) {
  ASSERT_EQ(a.size(), b.size());
  for (const auto& [rel, p] : a) {
    auto it = b.find(rel);
    ASSERT_NE(it, b.end()) << "page " << rel;
    EXPECT_EQ(p.kind, it->second.kind) << "page " << rel;
    EXPECT_TRUE(p.content == it->second.content) << "page " << rel << " differs";
  }
}

TEST(RunFilterTest, PagesMatchGoldenDigestsOfTheOldPath) {
  for (const Case& c : kGolden) {
    SCOPED_TRACE(c.seed);
    std::vector<size_t> prefix;
    std::vector<Key> keys = CaseKeys(c, &prefix);
    Pages pages;
    LsmRunInfo info;
    BuildNew(keys, prefix, c.bits, keys.size(), &pages, &info);
    if (HasFatalFailure()) return;
    EXPECT_EQ(info.nentries, keys.size());
    EXPECT_EQ(info.npages, c.npages);
    EXPECT_EQ(info.bloom_start, c.bloom_start);
    EXPECT_EQ(info.bloom_nblocks, c.nblocks);
    EXPECT_EQ(pages.size(), c.npages);  // pages 0 .. npages-1, each once
    EXPECT_EQ(Digest(pages), c.digest);
    // the header counts the pages before the filter
    LsmRunHeader hdr;
    ASSERT_EQ(lsm_runheader_parse(pages[0].content.data(), pages[0].content.size(), &hdr), LSM_OK);
    EXPECT_EQ(hdr.npages, c.bloom_start);
  }
}

TEST(RunFilterTest, SameBytesAsTheOldPathOnRandomInput) {
  std::mt19937 rng(77);
  for (int round = 0; round < 12; round++) {
    SCOPED_TRACE(round);
    KeyGen gen(1000 + round, round % 3 == 0 ? 600 : 60);
    std::set<Key> set;
    size_t n = 1 + rng() % (round < 6 ? 3000 : 40000);
    while (set.size() < n) {
      Key k = gen.Next();
      if (k.size() >= 2) set.insert(k);
    }
    std::vector<Key> keys(set.begin(), set.end());
    std::vector<size_t> prefix;
    // prefixes of varying length, often shared by neighbours
    for (const Key& k : keys) prefix.push_back(std::min<size_t>(k.size(), 1 + round % 5));
    uint32_t bits = round == 4 ? 0 : 1 + rng() % 32;
    uint64_t expected = round == 5 ? 0 : keys.size() / (1 + round % 3);
    Pages a, b;
    LsmRunInfo ia, ib;
    BuildNew(keys, prefix, bits, expected, &a, &ia);
    BuildOld(keys, prefix, bits, expected, &b, &ib);
    if (HasFatalFailure()) return;
    ExpectSamePages(a, b);
    EXPECT_EQ(ia.nentries, ib.nentries);
    EXPECT_EQ(ia.npages, ib.npages);
    EXPECT_EQ(ia.bloom_start, ib.bloom_start);
    EXPECT_EQ(ia.bloom_nblocks, ib.bloom_nblocks);
    // no false negatives through the emitted filter pages
    if (bits > 0) {
      for (size_t i = 0; i < keys.size(); i += 7) {
        uint64_t h = lsm_hash64(keys[i].data(), prefix[i], LSM_BLOOM_HASH_SEED);
        uint32_t block = lsm_bloom_block_of(h, ia.bloom_nblocks);
        uint32_t pg = ia.bloom_start + block / lsm_bloom_blocks_per_page(kCap);
        LsmBloomPageInfo pi;
        ASSERT_EQ(lsm_bloom_page_parse(a[pg].content.data(), a[pg].content.size(), &pi), LSM_OK);
        int may = 0;
        ASSERT_EQ(lsm_bloom_page_probe(&pi, h, &may), LSM_OK);
        ASSERT_EQ(may, 1) << "key " << i;
      }
    }
  }
}

TEST(RunFilterTest, BadCallsAreRefused) {
  LsmRunBuilder* b = nullptr;
  EXPECT_EQ(lsm_runbuilder_create(kCap, LSM_BLOOM_MAX_BITS_PER_KEY + 1, 10, &b), LSM_INVALID);
  EXPECT_EQ(b, nullptr);
  ASSERT_EQ(lsm_runbuilder_create(kCap, 10, 10, &b), LSM_OK);
  EXPECT_EQ(lsm_runbuilder_add(b, U8(Key("abc")), 3, 4), LSM_INVALID);  // prefix > len
  EXPECT_EQ(lsm_runbuilder_add(b, U8(Key("abc")), 3, 3), LSM_OK);
  LsmRunInfo info;
  EXPECT_EQ(lsm_runbuilder_info(b, &info), LSM_INVALID);
  EXPECT_EQ(lsm_runbuilder_info(nullptr, &info), LSM_INVALID);
  EXPECT_EQ(lsm_runbuilder_finish(b), LSM_PAGE_READY);
  EXPECT_EQ(lsm_runbuilder_info(b, nullptr), LSM_INVALID);
  Pages pages;
  Take(b, &pages);
  EXPECT_EQ(lsm_runbuilder_info(b, &info), LSM_OK);
  EXPECT_EQ(info.npages, 3u);  // header, one data page, one filter page
  EXPECT_EQ(pages[2].kind, LSM_PAGE_BLOOM);
  lsm_runbuilder_destroy(b);
  // without a filter the prefix length is ignored
  ASSERT_EQ(lsm_runbuilder_create(kCap, 0, 0, &b), LSM_OK);
  EXPECT_EQ(lsm_runbuilder_add(b, U8(Key("abc")), 3, 99), LSM_OK);
  lsm_runbuilder_destroy(b);  // unfinished: no leak (ASan build)
}

// ---------------------------------------------------------------------------
// Scan feeding: one call per data page vs. decode + ready + a per-key check

// Data pages of a run of sorted keys (content areas).
std::vector<std::vector<uint8_t>> DataPages(const std::vector<Key>& keys) {
  Pages pages;
  LsmRunInfo info;
  std::vector<size_t> prefix(keys.size(), 0);
  BuildNew(keys, prefix, 0, 0, &pages, &info);
  std::vector<std::vector<uint8_t>> out;
  for (auto& [rel, p] : pages)
    if (p.kind == LSM_PAGE_DATA) out.push_back(p.content);
  return out;
}

struct ScanResult {
  std::vector<Key> keys;
  std::vector<int> in_range;  // per page fed to source 0
};

// Two sources, both runs; feed_new selects the one-call path.
ScanResult Scan(const std::vector<std::vector<std::vector<uint8_t>>>& runs,
                bool backward, const Key* lo, const Key* hi, bool feed_new) {
  ScanResult r;
  LsmMerge* m = nullptr;
  EXPECT_EQ(lsm_merge_create(static_cast<int>(runs.size()), backward,
                             lo ? U8(*lo) : nullptr, lo ? lo->size() : 0,
                             hi ? U8(*hi) : nullptr, hi ? hi->size() : 0, &m),
            LSM_OK);
  std::vector<size_t> next(runs.size(), 0);
  for (;;) {
    const uint8_t* k;
    size_t len;
    int need;
    LsmStatus st = lsm_merge_next(m, &k, &len, &need);
    if (st == LSM_END) break;
    if (st == LSM_OK) {
      r.keys.emplace_back(reinterpret_cast<const char*>(k), len);
      continue;
    }
    EXPECT_EQ(st, LSM_NEED_PAGE);
    if (st != LSM_NEED_PAGE) break;
    const auto& pages = runs[need];
    if (next[need] >= pages.size()) {
      lsm_merge_source_done(m, need);
      continue;
    }
    size_t i = next[need]++;
    const auto& content = backward ? pages[pages.size() - 1 - i] : pages[i];
    if (feed_new) {
      int in = -1;
      EXPECT_EQ(lsm_merge_feed_datapage(m, need, content.data(), content.size(),
                                        need == 0 ? &in : nullptr),
                LSM_OK);
      if (need == 0) r.in_range.push_back(in);
    } else {
      // the old shim: decode into the source's batch, mark it ready, then
      // look at every key to see whether the page held one in range
      LsmBatch* b = lsm_merge_source_batch(m, need);
      lsm_batch_clear(b);
      if (!backward && (lo || hi))
        EXPECT_EQ(lsm_batch_add_datapage_range(b, content.data(), content.size(),
                                               lo ? U8(*lo) : nullptr, lo ? lo->size() : 0,
                                               hi ? U8(*hi) : nullptr, hi ? hi->size() : 0),
                  LSM_OK);
      else
        EXPECT_EQ(lsm_batch_add_datapage(b, content.data(), content.size()), LSM_OK);
      int in = 0;
      for (size_t j = 0; j < lsm_batch_count(b); j++) {
        const uint8_t* bk;
        size_t bl;
        lsm_batch_get(b, j, &bk, &bl);
        Key key(reinterpret_cast<const char*>(bk), bl);
        if ((!lo || key >= *lo) && (!hi || lsm_test::WithinHi(key, *hi))) in = 1;
      }
      if (need == 0) r.in_range.push_back(in);
      lsm_merge_source_ready(m, need);
    }
  }
  lsm_merge_destroy(m);
  return r;
}

TEST(MergeFeedTest, OneCallPerPageMatchesTheOldFeeding) {
  KeyGen gen(5, 40);
  std::set<Key> a, b;
  while (a.size() < 6000) a.insert(gen.Next());
  while (b.size() < 3000) b.insert(gen.Next());
  std::vector<std::vector<std::vector<uint8_t>>> runs = {
      DataPages(std::vector<Key>(a.begin(), a.end())),
      DataPages(std::vector<Key>(b.begin(), b.end()))};
  std::vector<Key> all(a.begin(), a.end());
  std::mt19937 rng(9);
  for (int i = 0; i < 200; i++) {
    Key lo = all[rng() % all.size()], hi = all[rng() % all.size()];
    if (hi < lo) std::swap(lo, hi);
    hi = hi.substr(0, 1 + rng() % hi.size());  // a prefix upper bound
    bool backward = (i % 3) == 1;
    const Key* plo = (i % 4) == 0 ? nullptr : &lo;
    const Key* phi = (i % 5) == 0 ? nullptr : &hi;
    ScanResult n = Scan(runs, backward, plo, phi, true);
    ScanResult o = Scan(runs, backward, plo, phi, false);
    ASSERT_EQ(n.keys, o.keys) << i;
    ASSERT_EQ(n.in_range, o.in_range) << i;
  }
  // a corrupt page is refused and leaves the source unfed
  LsmMerge* m = nullptr;
  ASSERT_EQ(lsm_merge_create(1, 0, nullptr, 0, nullptr, 0, &m), LSM_OK);
  const uint8_t* k;
  size_t len;
  int need;
  ASSERT_EQ(lsm_merge_next(m, &k, &len, &need), LSM_NEED_PAGE);
  std::vector<uint8_t> bad = runs[0][0];
  bad[0] ^= 0xFF;
  bad.resize(bad.size() / 2);
  EXPECT_EQ(lsm_merge_feed_datapage(m, 0, bad.data(), bad.size(), nullptr), LSM_CORRUPT);
  EXPECT_EQ(lsm_merge_feed_datapage(m, 1, bad.data(), bad.size(), nullptr), LSM_INVALID);
  EXPECT_EQ(lsm_merge_feed_datapage(nullptr, 0, bad.data(), bad.size(), nullptr), LSM_INVALID);
  lsm_merge_destroy(m);
}

// ---------------------------------------------------------------------------
// Log replay: one call per log page vs. one insert per entry

class Arena {
 public:
  Arena(uint32_t nchunks, uint32_t chunk_size)
      : region_((lsm_arena_size(nchunks, chunk_size) + 7) / 8) {
    EXPECT_EQ(lsm_arena_init(base(), nchunks, chunk_size), LSM_OK);
    lsm_memtable_init(&mt_);
  }
  void* base() { return region_.data(); }
  LsmMemtable* mt() { return &mt_; }
  bool AddChunk() {
    uint32_t c;
    if (lsm_arena_alloc_chunk(base(), &c) != LSM_OK) return false;
    lsm_memtable_add_chunk(base(), &mt_, c);
    return true;
  }
  std::vector<Key> Keys() {
    std::vector<Key> out;
    LsmMemtableIter it;
    for (lsm_memtable_seek(base(), &mt_, nullptr, 0, &it); lsm_memtable_iter_valid(&it);
         lsm_memtable_iter_next(&it)) {
      const uint8_t* k;
      size_t l;
      lsm_memtable_iter_key(&it, &k, &l);
      out.emplace_back(reinterpret_cast<const char*>(k), l);
    }
    return out;
  }

 private:
  std::vector<uint64_t> region_;
  LsmMemtable mt_;
};

std::vector<uint8_t> LogPage(const std::vector<Key>& keys) {
  std::vector<uint8_t> p;
  for (const Key& k : keys) {
    uint16_t l = static_cast<uint16_t>(k.size());
    uint8_t hdr[2];
    std::memcpy(hdr, &l, 2);
    p.insert(p.end(), hdr, hdr + 2);
    p.insert(p.end(), k.begin(), k.end());
  }
  return p;
}

TEST(LogReplayTest, OneCallPerPageMatchesPerEntryInserts) {
  KeyGen gen(11, 300);
  Arena a(64, 16384), b(64, 16384);
  for (int page = 0; page < 12; page++) {
    std::vector<Key> keys;
    size_t bytes = 0;
    while (bytes < 8000) {
      keys.push_back(gen.Next());
      bytes += 2 + keys.back().size();
    }
    if (page % 4 == 0) keys.push_back(keys.front());  // duplicates are fine
    std::vector<uint8_t> content = LogPage(keys);
    size_t pos = 0;
    int calls = 0;
    LsmStatus st;
    while ((st = lsm_memtable_insert_log(a.base(), a.mt(), content.data(), content.size(),
                                         &pos)) == LSM_NEED_CHUNK) {
      ASSERT_LT(pos, content.size());
      ASSERT_TRUE(a.AddChunk());
      ASSERT_LT(++calls, 100);
    }
    ASSERT_EQ(st, LSM_OK);
    EXPECT_EQ(pos, content.size());
    for (const Key& k : keys)
      for (;;) {
        LsmStatus s = lsm_memtable_insert(b.base(), b.mt(), U8(k), k.size());
        if (s != LSM_NEED_CHUNK) {
          ASSERT_EQ(s, LSM_OK);
          break;
        }
        ASSERT_TRUE(b.AddChunk());
      }
  }
  EXPECT_EQ(a.Keys(), b.Keys());
  EXPECT_EQ(a.mt()->nentries, b.mt()->nentries);
}

TEST(LogReplayTest, MalformedEntriesStopAtTheirOffset) {
  Arena a(8, 16384);
  ASSERT_TRUE(a.AddChunk());
  std::vector<uint8_t> good = LogPage({"alpha", "beta"});
  std::vector<uint8_t> zero = good;
  zero.push_back(0);
  zero.push_back(0);  // a zero length
  size_t pos = 0;
  EXPECT_EQ(lsm_memtable_insert_log(a.base(), a.mt(), zero.data(), zero.size(), &pos), LSM_CORRUPT);
  EXPECT_EQ(pos, good.size());
  EXPECT_EQ(a.mt()->nentries, 2u);
  std::vector<uint8_t> past = LogPage({"gamma"});
  past.pop_back();  // the entry runs past the end
  pos = 0;
  EXPECT_EQ(lsm_memtable_insert_log(a.base(), a.mt(), past.data(), past.size(), &pos), LSM_CORRUPT);
  EXPECT_EQ(pos, 0u);
  std::vector<uint8_t> odd = {5};  // half a length
  pos = 0;
  EXPECT_EQ(lsm_memtable_insert_log(a.base(), a.mt(), odd.data(), odd.size(), &pos), LSM_CORRUPT);
  Key big(LSM_MAX_KEY_SIZE + 1, 'x');
  std::vector<uint8_t> large = LogPage({big});
  pos = 0;
  EXPECT_EQ(lsm_memtable_insert_log(a.base(), a.mt(), large.data(), large.size(), &pos), LSM_TOO_LARGE);
  EXPECT_EQ(pos, 0u);
  pos = 3;
  EXPECT_EQ(lsm_memtable_insert_log(a.base(), a.mt(), good.data(), 2, &pos), LSM_INVALID);
  EXPECT_EQ(lsm_memtable_insert_log(a.base(), a.mt(), nullptr, 0, nullptr), LSM_INVALID);
  pos = 0;
  EXPECT_EQ(lsm_memtable_insert_log(a.base(), a.mt(), nullptr, 0, &pos), LSM_OK);
}

}  // namespace
