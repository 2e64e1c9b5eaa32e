// fuzz_fence.cc — libFuzzer target: lsm_fence_find over fence pages and run
// headers (the root fence block), the descent every index lookup makes.
//
// Input: a content area, tried both as a fence page and as a run header.
// Contract checked against fence_ref.h (an independent reading of the
// documented layout):
//  - a page whose header or block layout is invalid is LSM_CORRUPT in every
//    mode;
//  - FIRST and LAST return the child of the first / last entry, or
//    LSM_CORRUPT when that entry does not decode or its child is outside
//    the run (header: data pages 1..ndata_pages if height 0, else fence
//    pages ndata_pages+1..npages-1);
//  - on a block whose entries all decode and ascend, LE and LT return the
//    child of the last separator <= (<) the target, the first child if none
//    qualifies; on any block, an answer is the child of some entry that
//    decodes, inside the run;
//  - child_is_data is height == 0 (header) or level == 1 (fence page).

#include "fence_ref.h"

using fuzz::Key;
using fuzz::RefEntry;

namespace {

void CheckOne(const uint8_t* data, size_t size, int is_header) {
  bool valid;
  size_t block_off = 0;
  uint32_t min_child = 1, max_child = UINT32_MAX;
  bool is_data = false;
  if (is_header) {
    fuzz::RefHeader h;
    valid = fuzz::RefRunHeader(data, size, &h);
    if (valid) {
      block_off = h.root_off;
      is_data = h.height == 0;
      if (is_data) {
        max_child = h.ndata;
      } else {
        min_child = h.ndata + 1;
        max_child = h.npages - 1;
      }
    }
  } else {
    valid = size >= 8 && fuzz::Le32(data) == fuzz::kFenceMagic &&
            fuzz::Le16(data + 4) == fuzz::kFormatVersion &&
            fuzz::Le16(data + 6) >= 1 && fuzz::Le16(data + 6) <= fuzz::kMaxHeight;
    if (valid) {
      block_off = 8;
      is_data = fuzz::Le16(data + 6) == 1;
    }
  }
  std::vector<RefEntry> entries;
  if (valid) valid = fuzz::RefFenceBlock(data + block_off, size - block_off, &entries);

  // targets: every separator, a prefix of it, one byte more, an empty key
  std::vector<Key> targets = {Key()};
  for (size_t i = 0; i < entries.size() && targets.size() < 64; i++) {
    if (!entries[i].ok) continue;
    const Key& k = entries[i].key;
    targets.push_back(k);
    targets.push_back(k.substr(0, k.size() / 2));
    targets.push_back(k + '\x00');
  }
  if (!valid && size > 0) targets.push_back(fuzz::MakeKey(data, size < 16 ? size : 16));

  bool all_ok = valid;
  for (size_t i = 0; valid && i < entries.size(); i++) {
    if (!entries[i].ok || (i > 0 && entries[i - 1].ok &&
                           fuzz::Compare(entries[i - 1].key, entries[i].key) >= 0))
      all_ok = false;
  }
  auto in_run = [&](uint32_t c) { return c >= min_child && c <= max_child; };

  for (int mode = LSM_FIND_FIRST; mode <= LSM_FIND_LT; mode++) {
    for (size_t t = 0; t < targets.size(); t++) {
      if ((mode == LSM_FIND_FIRST || mode == LSM_FIND_LAST) && t > 0) break;
      uint32_t child = 0xDEADBEEF;
      int cid = -1;
      LsmStatus st = lsm_fence_find(data, size, is_header, static_cast<LsmFindMode>(mode),
                                    fuzz::Bytes(targets[t]), targets[t].size(), &child,
                                    &cid);
      fuzz::CheckNoInternal(st);
      FUZZ_CHECK(st == LSM_OK || st == LSM_CORRUPT);
      if (!valid) {
        FUZZ_CHECK(st == LSM_CORRUPT);
        continue;
      }
      if (st == LSM_OK) {
        FUZZ_CHECK(in_run(child));
        FUZZ_CHECK(cid == (is_data ? 1 : 0));
      }
      long expect = -1;  // index of the entry whose child is the answer
      if (mode == LSM_FIND_FIRST) {
        expect = 0;
      } else if (mode == LSM_FIND_LAST) {
        expect = static_cast<long>(entries.size()) - 1;
      } else if (all_ok) {
        expect = 0;
        for (size_t i = 0; i < entries.size(); i++) {
          int c = fuzz::Compare(entries[i].key, targets[t]);
          if (mode == LSM_FIND_LE ? c <= 0 : c < 0) expect = static_cast<long>(i);
        }
      }
      if (expect >= 0) {
        const RefEntry& e = entries[expect];
        if (e.ok && in_run(e.child)) {
          FUZZ_CHECK(st == LSM_OK);
          FUZZ_CHECK(child == e.child);
        } else {
          FUZZ_CHECK(st == LSM_CORRUPT);
        }
      } else if (st == LSM_OK) {
        bool found = false;
        for (const RefEntry& e : entries) found = found || (e.ok && e.child == child);
        FUZZ_CHECK(found);
      }
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > 65535) return 0;
  CheckOne(data, size, 0);
  CheckOne(data, size, 1);
  // bad arguments are refused, not read
  uint32_t child;
  int cid;
  FUZZ_CHECK(lsm_fence_find(nullptr, 0, 1, LSM_FIND_FIRST, nullptr, 0, &child, &cid) ==
             LSM_CORRUPT);
  return 0;
}
