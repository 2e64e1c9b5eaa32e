// fuzz_logpage.cc — libFuzzer target: log page replay into a memtable
// (lsm_memtable_insert_log), what recovery does with every log page.
//
// Input: a log page's content area (entries: native-endian u16 length, then
// that many key bytes).  Contract checked against a reading of the
// documented layout:
//  - the call ends LSM_OK with *pos == len when every entry is well formed,
//    else LSM_CORRUPT (length 0 or past the end) or LSM_TOO_LARGE (over
//    LSM_MAX_KEY_SIZE) with *pos at that entry; LSM_NEED_CHUNK only asks for
//    room (the call is repeated after a chunk is added, as the shim does);
//  - the memtable then holds exactly the distinct keys of the entries
//    before *pos: a full copy, a bounded copy and chunked copies in both
//    directions return them sorted, each once; entry counts and key bytes
//    agree.

#include <algorithm>
#include <set>

#include "fuzz_util.h"

using fuzz::Key;

namespace {

constexpr uint32_t kChunkSize = 16384;
constexpr uint32_t kChunks = 48;

std::vector<uint8_t>& ArenaMemory() {
  static std::vector<uint8_t> mem(lsm_arena_size(kChunks, kChunkSize) + 64);
  return mem;
}

std::vector<Key> CopyAll(void* base, const LsmMemtable* mt, const Key* lo, const Key* hi) {
  LsmBatch* b = nullptr;
  FUZZ_CHECK(lsm_batch_create(&b) == LSM_OK);
  FUZZ_CHECK(lsm_memtable_copy_range(base, mt, lo ? fuzz::Bytes(*lo) : nullptr,
                                     lo ? lo->size() : 0, hi ? fuzz::Bytes(*hi) : nullptr,
                                     hi ? hi->size() : 0, b) == LSM_OK);
  std::vector<Key> keys = fuzz::BatchKeys(b);
  lsm_batch_destroy(b);
  return keys;
}

// A scan in chunks of max keys, resuming by key.
std::vector<Key> CopyChunks(void* base, const LsmMemtable* mt, bool backward, size_t max) {
  std::vector<Key> out;
  LsmBatch* b = nullptr;
  FUZZ_CHECK(lsm_batch_create(&b) == LSM_OK);
  Key resume;
  bool has_resume = false;
  for (int rounds = 0;; rounds++) {
    FUZZ_CHECK(rounds < 100000);
    lsm_batch_clear(b);
    int more = -1;
    FUZZ_CHECK(lsm_memtable_copy_chunk(base, mt, backward ? 1 : 0, nullptr, 0, nullptr, 0,
                                       has_resume ? fuzz::Bytes(resume) : nullptr,
                                       resume.size(), max, b, &more) == LSM_OK);
    std::vector<Key> got = fuzz::BatchKeys(b);
    FUZZ_CHECK(got.size() <= max);
    fuzz::CheckStrictlyAscending(got);
    if (backward) {
      out.insert(out.end(), got.rbegin(), got.rend());
      if (!got.empty()) resume = got.front();
    } else {
      out.insert(out.end(), got.begin(), got.end());
      if (!got.empty()) resume = got.back();
    }
    has_resume = true;
    if (!more) break;
    FUZZ_CHECK(!got.empty());
  }
  lsm_batch_destroy(b);
  if (backward) std::reverse(out.begin(), out.end());
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > 8192) return 0;  // a log page's content area is smaller

  // The reference reading of the page.
  std::vector<Key> entries;
  size_t ref_pos = 0;
  LsmStatus ref = LSM_OK;
  while (ref_pos < size) {
    if (size - ref_pos < 2) {
      ref = LSM_CORRUPT;
      break;
    }
    uint16_t klen;
    std::memcpy(&klen, data + ref_pos, 2);
    if (klen == 0 || size - ref_pos - 2 < klen) {
      ref = LSM_CORRUPT;
      break;
    }
    if (klen > LSM_MAX_KEY_SIZE) {
      ref = LSM_TOO_LARGE;
      break;
    }
    entries.push_back(fuzz::MakeKey(data + ref_pos + 2, klen));
    ref_pos += 2 + klen;
  }

  std::vector<uint8_t>& mem = ArenaMemory();
  void* base = mem.data();
  FUZZ_CHECK(lsm_arena_init(base, kChunks, kChunkSize) == LSM_OK);
  LsmMemtable mt;
  lsm_memtable_init(&mt);
  size_t pos = 0;
  LsmStatus st;
  int chunks = 0;
  for (;;) {
    st = lsm_memtable_insert_log(base, &mt, data, size, &pos);
    fuzz::CheckNoInternal(st);
    FUZZ_CHECK(pos <= size);
    if (st != LSM_NEED_CHUNK) break;
    uint32_t chunk;
    FUZZ_CHECK(lsm_arena_alloc_chunk(base, &chunk) == LSM_OK);  // room enough
    lsm_memtable_add_chunk(base, &mt, chunk);
    FUZZ_CHECK(++chunks <= static_cast<int>(kChunks));
  }
  FUZZ_CHECK(st == ref);
  FUZZ_CHECK(pos == ref_pos);

  std::set<Key> distinct(entries.begin(), entries.end());
  std::vector<Key> expect(distinct.begin(), distinct.end());
  uint64_t key_bytes = 0;
  for (const Key& k : expect) key_bytes += k.size();
  FUZZ_CHECK(mt.nentries == expect.size());
  FUZZ_CHECK(mt.key_bytes == key_bytes);
  FUZZ_CHECK(CopyAll(base, &mt, nullptr, nullptr) == expect);

  // iterator
  LsmMemtableIter it;
  std::vector<Key> iter;
  lsm_memtable_seek(base, &mt, nullptr, 0, &it);
  for (; lsm_memtable_iter_valid(&it); lsm_memtable_iter_next(&it)) {
    const uint8_t* k;
    size_t n;
    lsm_memtable_iter_key(&it, &k, &n);
    iter.push_back(fuzz::MakeKey(k, n));
    FUZZ_CHECK(iter.size() <= expect.size());
  }
  FUZZ_CHECK(iter == expect);

  if (!expect.empty()) {
    uint64_t h = fuzz::InputHash(data, size);
    Key lo = expect[h % expect.size()];
    Key hi = expect[(h >> 20) % expect.size()];
    if (h & (1u << 8)) lo = lo.substr(0, lo.size() / 2);
    if (h & (1u << 9)) hi = hi.substr(0, (hi.size() + 1) / 2);
    std::vector<Key> want;
    for (const Key& k : expect)
      if (fuzz::Compare(k, lo) >= 0 && !fuzz::BeyondPrefix(k, hi)) want.push_back(k);
    FUZZ_CHECK(CopyAll(base, &mt, &lo, &hi) == want);
    const size_t max = 1 + (h >> 40) % 64;
    FUZZ_CHECK(CopyChunks(base, &mt, false, max) == expect);
    FUZZ_CHECK(CopyChunks(base, &mt, true, max) == expect);
  }
  lsm_memtable_release(base, &mt);
  FUZZ_CHECK(lsm_arena_free_chunks(base) == kChunks);
  return 0;
}
