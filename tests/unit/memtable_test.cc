// memtable_test.cc — arena skiplist against std::set.

#include "memtable.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <set>
#include <vector>

#include "arena.h"
#include "lsm_core.h"
#include "test_util.h"

namespace {

using lsm_test::Key;
using lsm_test::KeyGen;
using lsm_test::U8;

// An arena in process memory plus one memtable, fed like the shim does.
class MemtableFixture {
 public:
  MemtableFixture(uint32_t nchunks, uint32_t chunk_size)
      : nchunks_(nchunks),
        region_((lsm_arena_size(nchunks, chunk_size) + 7) / 8) {
    EXPECT_EQ(lsm_arena_init(base(), nchunks, chunk_size), LSM_OK);
    lsm_memtable_init(&mt_);
  }

  void* base() { return region_.data(); }
  LsmMemtable* mt() { return &mt_; }
  uint32_t nchunks() const { return nchunks_; }
  int need_chunk_calls() const { return need_chunk_calls_; }

  // A key filter of n chunks taken from the arena (as the shim takes them);
  // on failure the chunks go back.  LSM_NO_MEMORY if the arena has fewer.
  LsmStatus AddFilter(uint32_t suffix, uint32_t n) {
    std::vector<uint32_t> chunks(n);
    for (uint32_t i = 0; i < n; i++) {
      if (lsm_arena_alloc_chunk(base(), &chunks[i]) != LSM_OK) {
        for (uint32_t j = 0; j < i; j++) lsm_arena_free_chunk(base(), chunks[j]);
        return LSM_NO_MEMORY;
      }
    }
    LsmStatus st = lsm_memtable_add_filter(base(), &mt_, suffix, chunks.data(), n);
    if (st != LSM_OK)
      for (uint32_t c : chunks) lsm_arena_free_chunk(base(), c);
    return st;
  }

  // Inserts, adding chunks on LSM_NEED_CHUNK; returns the final status.
  LsmStatus Insert(const Key& k) {
    for (;;) {
      LsmMemtable before = mt_;
      LsmStatus st = lsm_memtable_insert(base(), &mt_, U8(k), k.size());
      if (st != LSM_NEED_CHUNK) return st;
      need_chunk_calls_++;
      // NEED_CHUNK must change nothing.
      EXPECT_EQ(std::memcmp(&before, &mt_, sizeof(mt_)), 0);
      uint32_t c;
      LsmStatus ast = lsm_arena_alloc_chunk(base(), &c);
      if (ast != LSM_OK) return ast;
      lsm_memtable_add_chunk(base(), &mt_, c);
    }
  }

  std::vector<Key> Scan(const uint8_t* target = nullptr, size_t tlen = 0) {
    std::vector<Key> out;
    LsmMemtableIter it;
    lsm_memtable_seek(base(), &mt_, target, tlen, &it);
    for (; lsm_memtable_iter_valid(&it); lsm_memtable_iter_next(&it)) {
      const uint8_t* k;
      size_t len;
      lsm_memtable_iter_key(&it, &k, &len);
      out.emplace_back(reinterpret_cast<const char*>(k), len);
    }
    return out;
  }

 private:
  uint32_t nchunks_;
  std::vector<uint64_t> region_;
  LsmMemtable mt_;
  int need_chunk_calls_ = 0;
};

TEST(MemtableTest, EmptyMemtable) {
  MemtableFixture f(4, 8192);
  EXPECT_TRUE(f.Scan().empty());
  EXPECT_EQ(lsm_memtable_memory(f.base(), f.mt()), 0u);
  LsmBatch* b;
  ASSERT_EQ(lsm_batch_create(&b), LSM_OK);
  EXPECT_EQ(
      lsm_memtable_copy_range(f.base(), f.mt(), nullptr, 0, nullptr, 0, b),
      LSM_OK);
  EXPECT_EQ(lsm_batch_count(b), 0u);
  lsm_batch_destroy(b);
  // The first insert asks for a chunk.
  Key k("abc");
  EXPECT_EQ(lsm_memtable_insert(f.base(), f.mt(), U8(k), k.size()),
            LSM_NEED_CHUNK);
}

// Each seek lands on the first key >= its target, and the next key follows:
// seeks descend every level, so a tower linked out of order at any level
// sends some of them astray.
void ExpectSeeksMatch(MemtableFixture* f, const std::set<Key>& ref,
                      const std::vector<Key>& targets) {
  for (const Key& t : targets) {
    LsmMemtableIter it;
    lsm_memtable_seek(f->base(), f->mt(), U8(t), t.size(), &it);
    auto want = ref.lower_bound(t);
    ASSERT_EQ(lsm_memtable_iter_valid(&it) != 0, want != ref.end());
    if (want == ref.end()) continue;
    const uint8_t* k;
    size_t len;
    lsm_memtable_iter_key(&it, &k, &len);
    ASSERT_EQ(Key(reinterpret_cast<const char*>(k), len), *want);
    lsm_memtable_iter_next(&it);
    ++want;
    ASSERT_EQ(lsm_memtable_iter_valid(&it) != 0, want != ref.end());
  }
}

TEST(MemtableTest, RandomKeysAgainstStdSet) {
  const uint32_t kChunkSize = 64 * 1024;
  MemtableFixture f(1024, kChunkSize);
  KeyGen gen(42);
  std::set<Key> ref;
  uint64_t key_bytes = 0;
  for (int i = 0; i < 100000; i++) {
    Key k = gen.Next();
    ASSERT_EQ(f.Insert(k), LSM_OK);
    if (ref.insert(k).second) key_bytes += k.size();
  }
  EXPECT_EQ(f.mt()->nentries, ref.size());
  EXPECT_EQ(f.mt()->key_bytes, key_bytes);
  EXPECT_GT(f.need_chunk_calls(), 1);
  EXPECT_EQ(lsm_memtable_memory(f.base(), f.mt()),
            static_cast<uint64_t>(f.mt()->nchunks) * kChunkSize);
  EXPECT_EQ(f.mt()->nchunks, f.nchunks() - lsm_arena_free_chunks(f.base()));

  // Full iteration.
  std::vector<Key> all = f.Scan();
  ASSERT_EQ(all.size(), ref.size());
  EXPECT_TRUE(std::equal(all.begin(), all.end(), ref.begin()));

  // Seeks to random targets (present or not).
  std::vector<Key> targets;
  for (int i = 0; i < 2000; i++) targets.push_back(gen.Next());
  ExpectSeeksMatch(&f, ref, targets);
}

// lsm_memtable_insert_many as the shim calls it: batches in arrival order,
// with duplicates inside a batch and of keys already present, a chunk added
// when the first key does not fit (small chunks: many calls stop early).
TEST(MemtableTest, InsertManyAgainstStdSet) {
  for (uint32_t chunk_size : {4096u, 64u * 1024}) {
    MemtableFixture f(4096, chunk_size);
    KeyGen gen(chunk_size, 60);
    std::set<Key> ref;
    std::vector<Key> seen;
    uint64_t key_bytes = 0;
    int short_calls = 0;
    for (int round = 0; round < 600; round++) {
      std::vector<Key> batch;
      size_t n = gen.Uniform(1, 150);
      for (size_t i = 0; i < n; i++) {
        size_t kind = gen.Uniform(0, 19);
        if (kind == 0 && !batch.empty())
          batch.push_back(batch[gen.Uniform(0, batch.size() - 1)]);
        else if (kind == 1 && !seen.empty())
          batch.push_back(seen[gen.Uniform(0, seen.size() - 1)]);
        else
          batch.push_back(gen.Next());
      }
      std::vector<LsmKeyRef> refs;
      for (const Key& k : batch)
        refs.push_back(LsmKeyRef{U8(k), static_cast<int>(k.size())});
      size_t done = 0;
      while (done < refs.size()) {
        size_t consumed = 99;
        LsmMemtable before = *f.mt();
        LsmStatus st = lsm_memtable_insert_many(
            f.base(), f.mt(), refs.data() + done, refs.size() - done, &consumed);
        if (st == LSM_NEED_CHUNK) {
          ASSERT_EQ(consumed, 0u);
          EXPECT_EQ(std::memcmp(&before, f.mt(), sizeof(before)), 0);
          uint32_t c;
          ASSERT_EQ(lsm_arena_alloc_chunk(f.base(), &c), LSM_OK);
          lsm_memtable_add_chunk(f.base(), f.mt(), c);
          continue;
        }
        ASSERT_EQ(st, LSM_OK);
        ASSERT_GE(consumed, 1u);
        ASSERT_LE(consumed, std::min<size_t>(refs.size() - done, 64));
        if (consumed < std::min<size_t>(refs.size() - done, 64)) short_calls++;
        for (size_t i = done; i < done + consumed; i++)
          if (ref.insert(batch[i]).second) key_bytes += batch[i].size();
        done += consumed;
        ASSERT_LE(f.mt()->chunk_used, chunk_size);
      }
      for (const Key& k : batch) seen.push_back(k);
    }
    EXPECT_GT(short_calls, 10);
    EXPECT_EQ(f.mt()->nentries, ref.size());
    EXPECT_EQ(f.mt()->key_bytes, key_bytes);
    std::vector<Key> all = f.Scan();
    ASSERT_EQ(all.size(), ref.size());
    EXPECT_TRUE(std::equal(all.begin(), all.end(), ref.begin()));
    // every key present, and random targets
    std::vector<Key> targets(ref.begin(), ref.end());
    for (int i = 0; i < 2000; i++) targets.push_back(gen.Next());
    ExpectSeeksMatch(&f, ref, targets);
    // and single inserts after batched ones still find their places
    for (int i = 0; i < 2000; i++) {
      Key k = gen.Next();
      ASSERT_EQ(f.Insert(k), LSM_OK);
      ref.insert(k);
    }
    all = f.Scan();
    EXPECT_TRUE(all.size() == ref.size() &&
                std::equal(all.begin(), all.end(), ref.begin()));
  }
}

TEST(MemtableTest, InsertManyErrors) {
  MemtableFixture f(8, 4096);
  Key ok("abc"), big(LSM_MAX_KEY_SIZE + 1, 'z');
  size_t consumed = 7;
  LsmKeyRef first_big[] = {{U8(big), static_cast<int>(big.size())},
                           {U8(ok), 3}};
  // no chunk yet
  EXPECT_EQ(lsm_memtable_insert_many(f.base(), f.mt(), first_big + 1, 1,
                                     &consumed),
            LSM_NEED_CHUNK);
  EXPECT_EQ(consumed, 0u);
  ASSERT_EQ(f.Insert(Key("a")), LSM_OK);
  EXPECT_EQ(lsm_memtable_insert_many(f.base(), f.mt(), first_big, 2, &consumed),
            LSM_TOO_LARGE);
  EXPECT_EQ(consumed, 0u);
  // a bad key after good ones ends the call before it
  LsmKeyRef then_big[] = {{U8(ok), 3}, {U8(big), static_cast<int>(big.size())}};
  EXPECT_EQ(lsm_memtable_insert_many(f.base(), f.mt(), then_big, 2, &consumed),
            LSM_OK);
  EXPECT_EQ(consumed, 1u);
  EXPECT_EQ(lsm_memtable_insert_many(f.base(), f.mt(), then_big + 1, 1,
                                     &consumed),
            LSM_TOO_LARGE);
  LsmKeyRef negative[] = {{U8(ok), -1}};
  EXPECT_EQ(lsm_memtable_insert_many(f.base(), f.mt(), negative, 1, &consumed),
            LSM_INVALID);
  EXPECT_EQ(lsm_memtable_insert_many(f.base(), f.mt(), nullptr, 0, &consumed),
            LSM_OK);
  EXPECT_EQ(consumed, 0u);
  EXPECT_EQ(f.Scan(), (std::vector<Key>{"a", "abc"}));
}

TEST(MemtableTest, DuplicateInsertIsNoOp) {
  MemtableFixture f(4, 8192);
  Key k("\x00\xff key", 6);
  ASSERT_EQ(f.Insert(k), LSM_OK);
  LsmMemtable before = *f.mt();
  ASSERT_EQ(lsm_memtable_insert(f.base(), f.mt(), U8(k), k.size()), LSM_OK);
  EXPECT_EQ(std::memcmp(&before, f.mt(), sizeof(before)), 0);
  EXPECT_EQ(f.Scan(), std::vector<Key>{k});
  // A prefix and an extension are different keys.
  ASSERT_EQ(f.Insert(k.substr(0, 3)), LSM_OK);
  ASSERT_EQ(f.Insert(k + '\0'), LSM_OK);
  EXPECT_EQ(f.mt()->nentries, 3u);
  EXPECT_EQ(f.Scan(), (std::vector<Key>{k.substr(0, 3), k, k + '\0'}));
}

TEST(MemtableTest, DuplicateInsertIntoFullChunkIsOk) {
  MemtableFixture f(8, 4096);
  Key big(1500, 'x');
  ASSERT_EQ(f.Insert(big), LSM_OK);
  ASSERT_EQ(f.Insert(big + "y"), LSM_OK);
  // The chunk now has less room than another long key needs.
  ASSERT_EQ(lsm_memtable_insert(f.base(), f.mt(), U8(big + "z"), 1501),
            LSM_NEED_CHUNK);
  EXPECT_EQ(lsm_memtable_insert(f.base(), f.mt(), U8(big), big.size()), LSM_OK);
}

// The shim adds a chunk only when chunk_used + len + 64 > chunk size, then
// retries: that must never be answered with NEED_CHUNK again.
TEST(MemtableTest, ShimReservationIsEnough) {
  const uint32_t kChunkSize = 4096;
  MemtableFixture f(2000, kChunkSize);
  KeyGen gen(7, LSM_MAX_KEY_SIZE);
  for (int i = 0; i < 5000; i++) {
    Key k = gen.Next();
    if (f.mt()->cur_chunk == 0 ||
        f.mt()->chunk_used + k.size() + 64 > kChunkSize) {
      uint32_t c;
      ASSERT_EQ(lsm_arena_alloc_chunk(f.base(), &c), LSM_OK);
      lsm_memtable_add_chunk(f.base(), f.mt(), c);
    }
    ASSERT_EQ(lsm_memtable_insert(f.base(), f.mt(), U8(k), k.size()), LSM_OK)
        << "key of " << k.size() << " bytes, chunk_used " << f.mt()->chunk_used;
  }
  EXPECT_LE(lsm::kMaxNodeOverhead, 64u);
}

TEST(MemtableTest, NeedChunkProtocolAndExhaustion) {
  MemtableFixture f(3, 4096);
  KeyGen gen(3, 100);
  LsmStatus st = LSM_OK;
  int n = 0;
  while ((st = f.Insert(gen.Next())) == LSM_OK) n++;
  EXPECT_EQ(st, LSM_NO_MEMORY);  // from the arena
  EXPECT_GT(n, 10);
  EXPECT_EQ(f.mt()->nchunks, 3u);
  EXPECT_EQ(lsm_arena_free_chunks(f.base()), 0u);
  EXPECT_EQ(f.Scan().size(), f.mt()->nentries);
}

TEST(MemtableTest, TooLargeKey) {
  MemtableFixture f(4, 8192);
  Key k(LSM_MAX_KEY_SIZE + 1, 'a');
  EXPECT_EQ(f.Insert(k), LSM_TOO_LARGE);
  EXPECT_EQ(f.Insert(k.substr(0, LSM_MAX_KEY_SIZE)), LSM_OK);
}

TEST(MemtableTest, ReleaseReturnsAllChunks) {
  MemtableFixture f(200, 4096);
  KeyGen gen(9);
  for (int round = 0; round < 3; round++) {
    for (int i = 0; i < 3000; i++) ASSERT_EQ(f.Insert(gen.Next()), LSM_OK);
    EXPECT_GT(f.mt()->nchunks, 10u);
    lsm_memtable_release(f.base(), f.mt());
    EXPECT_EQ(lsm_arena_free_chunks(f.base()), f.nchunks());
    EXPECT_EQ(f.mt()->nchunks, 0u);
    EXPECT_EQ(f.mt()->head, 0u);
    EXPECT_EQ(f.mt()->nentries, 0u);
    EXPECT_TRUE(f.Scan().empty());
  }
}

// The memtable holds only offsets: a copy of the arena at another address
// (another process's mapping) reads the same keys.
TEST(MemtableTest, RelocatableArena) {
  MemtableFixture f(64, 8192);
  KeyGen gen(11);
  std::set<Key> ref;
  for (int i = 0; i < 2000; i++) {
    Key k = gen.Next();
    ASSERT_EQ(f.Insert(k), LSM_OK);
    ref.insert(k);
  }
  size_t size = lsm_arena_size(64, 8192);
  std::vector<uint64_t> copy((size + 7) / 8);
  std::memcpy(copy.data(), f.base(), size);
  LsmMemtable mt2 = *f.mt();
  std::vector<Key> got;
  LsmMemtableIter it;
  lsm_memtable_seek(copy.data(), &mt2, nullptr, 0, &it);
  for (; lsm_memtable_iter_valid(&it); lsm_memtable_iter_next(&it)) {
    const uint8_t* k;
    size_t len;
    lsm_memtable_iter_key(&it, &k, &len);
    EXPECT_GE(k, reinterpret_cast<const uint8_t*>(copy.data()));
    got.emplace_back(reinterpret_cast<const char*>(k), len);
  }
  EXPECT_TRUE(std::equal(got.begin(), got.end(), ref.begin(), ref.end()));
  // And it can keep growing there.
  Key extra("zzz-extra");
  ASSERT_EQ(lsm_memtable_insert(copy.data(), &mt2, U8(extra), extra.size()),
            LSM_OK);
}

TEST(MemtableTest, CopyRangeAgainstReference) {
  MemtableFixture f(512, 65536);
  KeyGen gen(5, 40);
  std::set<Key> ref;
  for (int i = 0; i < 20000; i++) {
    Key k = gen.Next();
    ASSERT_EQ(f.Insert(k), LSM_OK);
    ref.insert(k);
  }
  LsmBatch* b;
  ASSERT_EQ(lsm_batch_create(&b), LSM_OK);
  for (int i = 0; i < 500; i++) {
    bool has_lo = gen.Uniform(0, 4) != 0, has_hi = gen.Uniform(0, 4) != 0;
    Key lo = gen.Next(), hi = gen.Next();
    if (gen.Uniform(0, 1)) hi = hi.substr(0, gen.Uniform(0, hi.size()));
    if (has_lo && has_hi && gen.Uniform(0, 1)) {
      // a narrow range: hi is a prefix of lo
      hi = lo.substr(0, gen.Uniform(1, lo.size()));
    }
    std::vector<Key> want;
    for (auto it = has_lo ? ref.lower_bound(lo) : ref.begin(); it != ref.end();
         ++it) {
      if (has_hi && !lsm_test::WithinHi(*it, hi)) break;
      want.push_back(*it);
    }
    lsm_batch_clear(b);
    ASSERT_EQ(lsm_memtable_copy_range(f.base(), f.mt(),
                                      has_lo ? U8(lo) : nullptr, lo.size(),
                                      has_hi ? U8(hi) : nullptr, hi.size(), b),
              LSM_OK);
    ASSERT_EQ(lsm_test::BatchKeys(b), want) << "case " << i;
  }
  lsm_batch_destroy(b);
}

// Streaming scans: chunks of any size, forward and backward, resumed by key,
// give exactly the keys of the range; keys inserted between chunks (as by
// concurrent inserts) never make a scan repeat or skip an older key.
TEST(MemtableTest, CopyChunkAgainstReference) {
  MemtableFixture f(512, 65536);
  KeyGen gen(7, 24);
  std::set<Key> ref;
  for (int i = 0; i < 3000; i++) {
    Key k = gen.Next();
    ASSERT_EQ(f.Insert(k), LSM_OK);
    ref.insert(k);
  }
  LsmBatch* b;
  ASSERT_EQ(lsm_batch_create(&b), LSM_OK);
  for (int i = 0; i < 300; i++) {
    const bool backward = gen.Uniform(0, 1) != 0;
    bool has_lo = gen.Uniform(0, 3) != 0, has_hi = gen.Uniform(0, 3) != 0;
    Key lo = gen.Next(), hi = gen.Next();
    if (gen.Uniform(0, 1)) hi = hi.substr(0, gen.Uniform(0, hi.size()));
    if (has_lo && has_hi && gen.Uniform(0, 1))
      hi = lo.substr(0, gen.Uniform(1, lo.size()));
    if (gen.Uniform(0, 9) == 0) hi = Key(gen.Uniform(1, 3), '\xFF');
    const size_t max = gen.Uniform(0, 3) == 0 ? 1 + gen.Uniform(0, 3) : 8 + gen.Uniform(0, 300);
    const bool concurrent = gen.Uniform(0, 3) == 0;
    std::set<Key> before = ref;  // keys present when the scan started

    std::vector<Key> got;
    Key resume;
    bool have_resume = false;
    for (int chunk = 0;; chunk++) {
      ASSERT_LT(chunk, 100000) << "case " << i << " does not end";
      lsm_batch_clear(b);
      int more = -1;
      ASSERT_EQ(lsm_memtable_copy_chunk(
                    f.base(), f.mt(), backward, has_lo ? U8(lo) : nullptr,
                    lo.size(), has_hi ? U8(hi) : nullptr, hi.size(),
                    have_resume ? U8(resume) : nullptr, resume.size(), max, b,
                    &more),
                LSM_OK);
      std::vector<Key> keys = lsm_test::BatchKeys(b);
      ASSERT_LE(keys.size(), max);
      ASSERT_TRUE(std::is_sorted(keys.begin(), keys.end()));
      if (backward)
        got.insert(got.begin(), keys.begin(), keys.end());
      else
        got.insert(got.end(), keys.begin(), keys.end());
      if (!keys.empty()) {
        resume = backward ? keys.front() : keys.back();
        have_resume = true;
      }
      if (!more) break;
      ASSERT_EQ(keys.size(), max) << "more is set only on a full chunk";
      if (concurrent && max >= 8) {
        Key k = gen.Next();
        ASSERT_EQ(f.Insert(k), LSM_OK);
        ref.insert(k);
      }
    }
    ASSERT_TRUE(std::is_sorted(got.begin(), got.end())) << "case " << i;
    ASSERT_TRUE(std::adjacent_find(got.begin(), got.end()) == got.end())
        << "case " << i << ": a key was returned twice";
    // every key of the range that existed at the start is there; new keys
    // may or may not be
    std::set<Key> got_set(got.begin(), got.end());
    for (const Key& k : before) {
      bool in = (!has_lo || k >= lo) && (!has_hi || lsm_test::WithinHi(k, hi));
      if (in) {
        ASSERT_TRUE(got_set.count(k)) << "case " << i << ": missed a key";
      }
    }
    for (const Key& k : got) {
      ASSERT_TRUE(ref.count(k));
      ASSERT_TRUE((!has_lo || k >= lo) && (!has_hi || lsm_test::WithinHi(k, hi)))
          << "case " << i << ": a key outside the range";
    }
  }
  lsm_batch_destroy(b);
}

// The key filter: never a false "no" for a prefix the memtable holds (with
// any suffix of the filter's length), few false "maybe"s, nothing but
// may_contain sees it, and release returns its chunk.
TEST(MemtableTest, KeyFilter) {
  const uint32_t kSuffix = 6;
  MemtableFixture f(64, 64 * 1024);
  uint32_t free0 = lsm_arena_free_chunks(f.base());
  // one filter, on an empty memtable, in a chunk of the arena
  ASSERT_EQ(f.AddFilter(kSuffix, 1), LSM_OK);
  EXPECT_EQ(f.AddFilter(kSuffix, 1), LSM_INVALID);
  EXPECT_EQ(lsm_arena_free_chunks(f.base()), free0 - 1);
  EXPECT_EQ(lsm_memtable_memory(f.base(), f.mt()), 0u);

  KeyGen gen(7, 40);
  std::set<Key> prefixes;
  std::set<Key> keys;
  while (keys.size() < 20000) {
    Key p = gen.Next();
    Key k = p + std::string("tid:") + static_cast<char>(keys.size() & 0xff) +
            static_cast<char>((keys.size() >> 8) & 0xff);  // 6 suffix bytes
    ASSERT_EQ(k.size(), p.size() + kSuffix);
    ASSERT_EQ(f.Insert(k), LSM_OK);
    prefixes.insert(p);
    keys.insert(k);
  }
  // every key is still found by a scan (the filter chunk is not a node chunk)
  EXPECT_EQ(f.Scan().size(), keys.size());
  for (const Key& p : prefixes)
    ASSERT_EQ(lsm_memtable_may_contain(f.base(), f.mt(), U8(p), p.size()), 1)
        << "a false negative";
  int fp = 0, probes = 0;
  KeyGen other(8, 40);
  for (int i = 0; i < 20000; i++) {
    Key p = other.Next() + "x";
    if (prefixes.count(p)) continue;
    probes++;
    fp += lsm_memtable_may_contain(f.base(), f.mt(), U8(p), p.size());
  }
  // 20,000 keys in 1,019 blocks of 512 bits (26 bits a key): well under 1%
  EXPECT_LT(fp, probes / 100) << fp << " false positives in " << probes;
  // not on a memtable with entries; the caller keeps the chunks then
  {
    MemtableFixture g(4, 4096);
    ASSERT_EQ(g.Insert(Key("abcdefgh")), LSM_OK);
    const uint32_t free_g = lsm_arena_free_chunks(g.base());
    EXPECT_EQ(g.AddFilter(kSuffix, 1), LSM_INVALID);
    EXPECT_EQ(lsm_arena_free_chunks(g.base()), free_g);
    EXPECT_EQ(g.mt()->filter, 0u);
  }
  // without a filter: always "maybe"
  LsmMemtable plain;
  lsm_memtable_init(&plain);
  EXPECT_EQ(lsm_memtable_may_contain(f.base(), &plain, U8(Key("zz")), 2), 1);
  // release returns the data chunks and the filter's
  lsm_memtable_release(f.base(), f.mt());
  EXPECT_EQ(lsm_arena_free_chunks(f.base()), free0);
  EXPECT_EQ(f.mt()->filter, 0u);
}

// As the shim and the rebuild from log pages do: the filter comes after the
// memtable's first data chunk, in chunks that other memtables used before
// (the arena hands freed chunks out again, their old bytes in them).  The
// filter must start empty, and the memtable's own data chunk is refused.
TEST(MemtableTest, KeyFilterOnReusedChunks) {
  const uint32_t kSuffix = 6;
  const uint32_t kChunk = 4096;
  MemtableFixture f(20, kChunk);
  uint32_t data;
  ASSERT_EQ(lsm_arena_alloc_chunk(f.base(), &data), LSM_OK);
  lsm_memtable_add_chunk(f.base(), f.mt(), data);
  EXPECT_EQ(lsm_memtable_add_filter(f.base(), f.mt(), kSuffix, &data, 1), LSM_INVALID)
      << "the memtable's own data chunk";
  // dirty four chunks and give them back: the filter gets these
  std::set<uint32_t> dirty;
  for (int i = 0; i < 4; i++) {
    uint32_t c;
    ASSERT_EQ(lsm_arena_alloc_chunk(f.base(), &c), LSM_OK);
    std::memset(static_cast<uint8_t*>(f.base()) + c, 0xFF, kChunk);
    dirty.insert(c);
  }
  for (uint32_t c : dirty) ASSERT_EQ(lsm_arena_free_chunk(f.base(), c), LSM_OK);
  ASSERT_EQ(f.AddFilter(kSuffix, 4), LSM_OK);
  ASSERT_EQ(lsm_memtable_filter_chunks(f.base(), f.mt()), 4u);
  const uint8_t* dir = static_cast<const uint8_t*>(f.base()) + f.mt()->filter;
  for (uint32_t i = 0; i < 4; i++) {
    uint32_t c;
    std::memcpy(&c, dir + 4 * (1 + i), sizeof(c));
    EXPECT_EQ(dirty.count(c), 1u) << "filter chunk " << i << " was not a reused one";
  }
  KeyGen gen(13, 24);
  std::set<Key> prefixes;
  int n = 0;
  while (prefixes.size() < 300) {
    Key p = gen.Next();
    if (!prefixes.insert(p).second) continue;
    ASSERT_EQ(f.Insert(p + std::string("tid:") + static_cast<char>(n & 0xff) +
                       static_cast<char>(n >> 8)), LSM_OK);
    n++;
  }
  for (const Key& p : prefixes)
    ASSERT_EQ(lsm_memtable_may_contain(f.base(), f.mt(), U8(p), p.size()), 1);
  // 300 keys in 4 chunks (246 blocks of 512 bits): a few false "maybe"s, not
  // the all-"maybe" of bits left over from the chunks' last use
  KeyGen other(14, 24);
  int fp = 0, probes = 0;
  for (int i = 0; i < 5000; i++) {
    Key p = other.Next() + "z";
    if (prefixes.count(p)) continue;
    probes++;
    fp += lsm_memtable_may_contain(f.base(), f.mt(), U8(p), p.size());
  }
  EXPECT_LT(fp, probes / 50) << fp << " false positives in " << probes;
  lsm_memtable_release(f.base(), f.mt());
  EXPECT_EQ(lsm_arena_free_chunks(f.base()), 20u);
}

// A filter of several chunks: every chunk takes bits (a filter of one fixed
// chunk fills up in a large memtable and then says "maybe" to everything),
// no false "no", the false "maybe"s fall with the chunks, the arena gives
// fewer chunks when it has fewer, the count is capped, release returns all.
TEST(MemtableTest, KeyFilterOfManyChunks) {
  const uint32_t kSuffix = 6;
  const uint32_t kChunk = 4096;  // 63 blocks a chunk, the first 59
  KeyGen gen(11, 30);
  std::vector<Key> keys;
  std::set<Key> prefixes;
  while (keys.size() < 4000) {
    Key p = gen.Next();
    if (!prefixes.insert(p).second) continue;
    keys.push_back(p + std::string("tid:") + static_cast<char>(keys.size() & 0xff) +
                   static_cast<char>((keys.size() >> 8) & 0xff));
  }
  std::vector<Key> absent;
  KeyGen other(12, 30);
  while (absent.size() < 20000) {
    Key p = other.Next() + "y";
    if (!prefixes.count(p)) absent.push_back(p);
  }

  // false "maybe"s of a filter of nchunks over the same keys
  auto false_positives = [&](uint32_t nchunks) {
    MemtableFixture f(400, kChunk);
    uint32_t free0 = lsm_arena_free_chunks(f.base());
    EXPECT_EQ(f.AddFilter(kSuffix, nchunks), LSM_OK);
    EXPECT_EQ(lsm_memtable_filter_chunks(f.base(), f.mt()), nchunks);
    EXPECT_EQ(lsm_arena_free_chunks(f.base()), free0 - nchunks);
    for (const Key& k : keys) EXPECT_EQ(f.Insert(k), LSM_OK);
    // every chunk of the filter holds bits
    const uint8_t* b = static_cast<const uint8_t*>(f.base());
    const uint8_t* dir = b + f.mt()->filter;
    uint32_t n;
    std::memcpy(&n, dir, sizeof(n));
    EXPECT_EQ(n, nchunks);
    for (uint32_t i = 0; i < n; i++) {
      uint32_t chunk;
      std::memcpy(&chunk, dir + 4 * (1 + i), sizeof(chunk));
      int set = 0;
      for (uint32_t j = lsm::kFilterDataOffset + (i == 0 ? 256 : 0); j < kChunk; j++)
        set += b[chunk + j] != 0;
      EXPECT_GT(set, 0) << "filter chunk " << i << " of " << n << " holds no bits";
    }
    for (const Key& k : keys) {
      const size_t plen = k.size() - kSuffix;
      EXPECT_EQ(lsm_memtable_may_contain(f.base(), f.mt(), U8(k), plen), 1)
          << "a false negative";
    }
    int fp = 0;
    for (const Key& p : absent)
      fp += lsm_memtable_may_contain(f.base(), f.mt(), U8(p), p.size());
    EXPECT_EQ(f.Scan().size(), keys.size());
    lsm_memtable_release(f.base(), f.mt());
    EXPECT_EQ(lsm_arena_free_chunks(f.base()), free0);
    return fp;
  };
  const int fp1 = false_positives(1);    // 59 blocks: 7.6 bits a key
  const int fp16 = false_positives(16);  // 1,004 blocks: 128 bits a key
  EXPECT_GT(fp1, static_cast<int>(absent.size()) / 100) << "one chunk holds them all?";
  EXPECT_LT(fp16 * 10, fp1);
  EXPECT_LT(fp16, static_cast<int>(absent.size()) / 500);

  // the chunks must be 1 to 63 distinct arena chunks, on an empty memtable
  // without a filter; a refused call changes nothing (the caller keeps them)
  {
    MemtableFixture f(100, kChunk);
    std::vector<uint32_t> c(64);
    for (uint32_t& x : c) ASSERT_EQ(lsm_arena_alloc_chunk(f.base(), &x), LSM_OK);
    const LsmMemtable before = *f.mt();
    EXPECT_EQ(lsm_memtable_add_filter(f.base(), f.mt(), kSuffix, c.data(), 0), LSM_INVALID);
    EXPECT_EQ(lsm_memtable_add_filter(f.base(), f.mt(), kSuffix, c.data(), 64), LSM_INVALID);
    std::vector<uint32_t> twice = {c[0], c[1], c[0]};
    EXPECT_EQ(lsm_memtable_add_filter(f.base(), f.mt(), kSuffix, twice.data(), 3), LSM_INVALID);
    std::vector<uint32_t> stray = {c[0], c[1] + 8};  // not a chunk's start
    EXPECT_EQ(lsm_memtable_add_filter(f.base(), f.mt(), kSuffix, stray.data(), 2), LSM_INVALID);
    EXPECT_EQ(std::memcmp(&before, f.mt(), sizeof(before)), 0);
    EXPECT_EQ(lsm_arena_free_chunks(f.base()), 36u);
    // 63 is the most; release returns them all, the directory's chunk last
    ASSERT_EQ(lsm_memtable_add_filter(f.base(), f.mt(), kSuffix, c.data(), 63), LSM_OK);
    EXPECT_EQ(lsm_memtable_filter_chunks(f.base(), f.mt()), 63u);
    EXPECT_EQ(lsm_memtable_add_filter(f.base(), f.mt(), kSuffix, c.data() + 63, 1), LSM_INVALID);
    lsm_memtable_release(f.base(), f.mt());
    EXPECT_EQ(lsm_memtable_filter_chunks(f.base(), f.mt()), 0u);
    EXPECT_EQ(lsm_arena_free_chunks(f.base()), 99u);
    EXPECT_EQ(lsm_arena_free_chunk(f.base(), c[63]), LSM_OK);
    EXPECT_EQ(lsm_arena_free_chunks(f.base()), 100u);
    EXPECT_EQ(lsm_arena_free_chunk(f.base(), c[63] + 8), LSM_INVALID);
  }
}

}  // namespace
