// fuzz_datapage.cc — libFuzzer target: the data-page decoders.
//
// Input: a data page's content area (as lsm_datapage_build writes it and the
// shim hands it back from disk, len = pd_lower - header).  Contract checked:
//  - lsm_datapage_check and lsm_batch_add_datapage agree (LSM_OK or
//    LSM_CORRUPT, nothing else), and a refused page leaves the batch as it
//    was;
//  - an accepted page yields exactly the header's entry count of keys,
//    strictly ascending, none over LSM_MAX_KEY_SIZE;
//  - re-encoding round-trips: lsm_datapage_build of the decoded keys fits in
//    the input's length, decodes to the same keys and re-encodes to the same
//    bytes;
//  - lsm_batch_add_datapage_range over a valid page returns exactly the
//    keys from the first >= lo through the first beyond the prefix bound hi;
//    over a damaged page it may refuse, but what it returns still ascends
//    and is >= lo (it may run past hi: it trusts the restart keys' order);
//  - a lazy merge (forward and backward, lsm_merge_set_lazy) over the page
//    returns every key of a valid page in order, and ends in LSM_CORRUPT for
//    a damaged one.

#include "fuzz_util.h"

using fuzz::Key;

namespace {

constexpr size_t kCap = 8152;  // an 8 kB page's content area

// The keys of a merge over one source fed this page; *st its final status.
std::vector<Key> LazyMerge(const uint8_t* data, size_t size, bool backward,
                           LsmStatus* st) {
  std::vector<Key> keys;
  LsmMerge* m = nullptr;
  LsmStatus s = lsm_merge_create(1, backward ? 1 : 0, nullptr, 0, nullptr, 0, &m);
  FUZZ_CHECK(s == LSM_OK);
  lsm_merge_set_lazy(m, 1);
  bool fed = false;
  for (;;) {
    const uint8_t* k;
    size_t n;
    int need = -1;
    s = lsm_merge_next(m, &k, &n, &need);
    fuzz::CheckNoInternal(s);
    if (s == LSM_OK) {
      keys.push_back(fuzz::MakeKey(k, n));
      FUZZ_CHECK(keys.size() <= 0xFFFF);
      continue;
    }
    if (s == LSM_NEED_PAGE) {
      FUZZ_CHECK(need == 0);
      if (fed) {
        lsm_merge_source_done(m, 0);
        continue;
      }
      fed = true;
      s = lsm_merge_feed_datapage(m, 0, data, size, nullptr);
      fuzz::CheckNoInternal(s);
      if (s != LSM_OK) {
        FUZZ_CHECK(s == LSM_CORRUPT);
        break;
      }
      continue;
    }
    FUZZ_CHECK(s == LSM_END || s == LSM_CORRUPT);
    if (s == LSM_CORRUPT) FUZZ_CHECK(lsm_merge_last_source(m) == 0);
    break;
  }
  lsm_merge_destroy(m);
  *st = s;
  return keys;
}

// Bounds for the range decode, chosen from the input: keys of the page
// (exact, or cut to a prefix, or one byte more), or slices of the input.
void PickBounds(const uint8_t* data, size_t size, const std::vector<Key>& keys,
                Key* lo, bool* has_lo, Key* hi, bool* has_hi) {
  uint64_t h = fuzz::InputHash(data, size);
  *has_lo = h & 1;
  *has_hi = h & 2;
  auto pick = [&](unsigned shift) -> Key {
    uint64_t x = h >> shift;
    if (keys.empty()) {
      size_t off = size == 0 ? 0 : (x >> 4) % size;
      size_t n = size - off < 12 ? size - off : 12;
      return fuzz::MakeKey(data + off, n);
    }
    Key k = keys[(x >> 4) % keys.size()];
    switch (x & 3) {
      case 0:
        return k;
      case 1:
        return k.substr(0, k.size() / 2);
      case 2:
        return k + '\x00';
      default:
        if (!k.empty()) k.back() = static_cast<char>(k.back() + 1);
        return k;
    }
  };
  *lo = pick(2);
  *hi = pick(20);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > 65535) return 0;  // offsets in a content area are u16

  // 1. Check and full decode agree.
  LsmStatus check = lsm_datapage_check(data, size);
  FUZZ_CHECK(check == LSM_OK || check == LSM_CORRUPT);
  LsmBatch* b = nullptr;
  FUZZ_CHECK(lsm_batch_create(&b) == LSM_OK);
  static const uint8_t kSentinel[] = {0x42};
  FUZZ_CHECK(lsm_batch_add_key(b, kSentinel, 1) == LSM_OK);
  LsmStatus st = lsm_batch_add_datapage(b, data, size);
  FUZZ_CHECK(st == check);
  std::vector<Key> all = fuzz::BatchKeys(b);
  FUZZ_CHECK(!all.empty() && all[0] == "\x42");
  all.erase(all.begin());
  if (st != LSM_OK) FUZZ_CHECK(all.empty());  // refused: batch unchanged
  std::vector<Key> keys;
  if (st == LSM_OK) {
    keys = all;
    FUZZ_CHECK(size >= 4);
    FUZZ_CHECK(keys.size() == static_cast<size_t>(data[0] | (data[1] << 8)));
    fuzz::CheckStrictlyAscending(keys);

    // 2. Re-encoding round-trips.
    LsmBatch* kb = nullptr;
    FUZZ_CHECK(lsm_batch_create(&kb) == LSM_OK);
    for (const Key& k : keys)
      FUZZ_CHECK(lsm_batch_add_key(kb, fuzz::Bytes(k), k.size()) == LSM_OK);
    std::vector<uint8_t> enc(size > kCap ? size : kCap);
    size_t elen = 0;
    st = lsm_datapage_build(kb, nullptr, enc.data(), size, &elen);
    FUZZ_CHECK(st == LSM_OK);  // never larger than the input
    FUZZ_CHECK(elen <= size);
    FUZZ_CHECK(lsm_datapage_check(enc.data(), elen) == LSM_OK);
    lsm_batch_clear(kb);
    FUZZ_CHECK(lsm_batch_add_datapage(kb, enc.data(), elen) == LSM_OK);
    FUZZ_CHECK(fuzz::BatchKeys(kb) == keys);
    std::vector<uint8_t> enc2(enc.size());
    size_t elen2 = 0;
    FUZZ_CHECK(lsm_datapage_build(kb, nullptr, enc2.data(), elen, &elen2) == LSM_OK);
    FUZZ_CHECK(elen2 == elen && std::memcmp(enc.data(), enc2.data(), elen) == 0);
    // keep[]: every other key, still a valid page of those keys
    std::vector<uint8_t> keep(keys.size());
    std::vector<Key> kept;
    for (size_t i = 0; i < keys.size(); i++) {
      keep[i] = (i % 2 == 0);
      if (keep[i]) kept.push_back(keys[i]);
    }
    FUZZ_CHECK(lsm_datapage_build(kb, keep.data(), enc2.data(), kCap, &elen2) == LSM_OK);
    lsm_batch_clear(kb);
    FUZZ_CHECK(lsm_batch_add_datapage(kb, enc2.data(), elen2) == LSM_OK);
    FUZZ_CHECK(fuzz::BatchKeys(kb) == kept);
    lsm_batch_destroy(kb);
  }

  // 3. The range decode of a forward scan.
  Key lo, hi;
  bool has_lo, has_hi;
  PickBounds(data, size, keys, &lo, &has_lo, &hi, &has_hi);
  lsm_batch_clear(b);
  st = lsm_batch_add_datapage_range(
      b, data, size, has_lo ? fuzz::Bytes(lo) : nullptr, has_lo ? lo.size() : 0,
      has_hi ? fuzz::Bytes(hi) : nullptr, has_hi ? hi.size() : 0);
  fuzz::CheckNoInternal(st);
  FUZZ_CHECK(st == LSM_OK || st == LSM_CORRUPT);
  if (check == LSM_OK) {
    FUZZ_CHECK(st == LSM_OK);
    std::vector<Key> expect;
    for (const Key& k : keys) {
      if (has_lo && fuzz::Compare(k, lo) < 0) continue;
      expect.push_back(k);
      if (has_hi && fuzz::BeyondPrefix(k, hi)) break;
    }
    FUZZ_CHECK(fuzz::BatchKeys(b) == expect);
  } else if (st == LSM_OK) {
    // A damaged page the range decoder did not notice (it validates only the
    // entries it decodes, and trusts the restart keys' order to skip
    // comparing keys with hi): what it returns still ascends and is >= lo.
    // It may run on past hi (regress/datapage/range-past-hi-on-damaged-page);
    // the merge stops at the first key beyond hi, so a scan is unaffected.
    std::vector<Key> got = fuzz::BatchKeys(b);
    fuzz::CheckStrictlyAscending(got);
    for (size_t i = 0; i < got.size(); i++)
      if (has_lo) FUZZ_CHECK(fuzz::Compare(got[i], lo) >= 0);
  } else {
    FUZZ_CHECK(lsm_batch_count(b) == 0);
  }
  lsm_batch_destroy(b);

  // 4. Lazy decoding, both directions.
  for (int backward = 0; backward < 2; backward++) {
    LsmStatus mst;
    std::vector<Key> got = LazyMerge(data, size, backward, &mst);
    if (check == LSM_OK) {
      FUZZ_CHECK(mst == LSM_END);
      std::vector<Key> expect = keys;
      if (backward) expect.assign(keys.rbegin(), keys.rend());
      FUZZ_CHECK(got == expect);
    } else {
      FUZZ_CHECK(mst == LSM_CORRUPT);
    }
  }
  return 0;
}
