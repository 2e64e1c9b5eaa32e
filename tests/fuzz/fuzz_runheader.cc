// fuzz_runheader.cc — libFuzzer target: lsm_runheader_parse, the parser of a
// run's page 0 (every scan, VACUUM and check reads it first).
//
// Input: a run header's content area.  Contract checked:
//  - LSM_OK exactly when fence_ref.h's independent reading finds a valid
//    header (magic, version, height <= 24, 1 <= ndata_pages < npages,
//    nentries >= ndata_pages, min and max keys in bounds and ordered, a root
//    block whose header and offset array fit), else LSM_CORRUPT;
//  - the parsed fields equal the bytes; min_key and max_key point into the
//    input at their documented offsets;
//  - re-encoding round-trips: the header rebuilt from the parsed fields and
//    the root block parses to the same values;
//  - lsm_fence_find(is_header) refuses every header the parser refuses.

#include "fence_ref.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > 65535) return 0;
  LsmRunHeader h;
  std::memset(&h, 0, sizeof(h));
  LsmStatus st = lsm_runheader_parse(data, size, &h);
  fuzz::CheckNoInternal(st);
  FUZZ_CHECK(st == LSM_OK || st == LSM_CORRUPT);
  fuzz::RefHeader ref;
  const bool valid = fuzz::RefRunHeader(data, size, &ref);
  FUZZ_CHECK((st == LSM_OK) == valid);

  uint32_t child;
  int cid;
  LsmStatus fst = lsm_fence_find(data, size, 1, LSM_FIND_FIRST, nullptr, 0, &child, &cid);
  if (!valid) {
    FUZZ_CHECK(fst == LSM_CORRUPT);
    return 0;
  }
  FUZZ_CHECK(h.height == ref.height && h.nentries == ref.nentries &&
             h.ndata_pages == ref.ndata && h.npages == ref.npages);
  FUZZ_CHECK(h.min_key == data + ref.min_off && h.min_key_len == ref.min_len);
  FUZZ_CHECK(h.max_key == data + ref.max_off && h.max_key_len == ref.max_len);
  FUZZ_CHECK(h.min_key_len <= LSM_MAX_KEY_SIZE && h.max_key_len <= LSM_MAX_KEY_SIZE);
  FUZZ_CHECK(h.max_key + h.max_key_len <= data + size);

  // Rebuild: fixed part, min, max (from the parsed values), then the root.
  std::vector<uint8_t> out;
  auto put16 = [&](uint32_t v) {
    out.push_back(static_cast<uint8_t>(v));
    out.push_back(static_cast<uint8_t>(v >> 8));
  };
  auto put32 = [&](uint32_t v) {
    put16(v & 0xFFFF);
    put16(v >> 16);
  };
  put32(fuzz::kRunMagic);
  put16(fuzz::kFormatVersion);
  put16(h.height);
  put32(static_cast<uint32_t>(h.nentries));
  put32(static_cast<uint32_t>(h.nentries >> 32));
  put32(h.ndata_pages);
  put32(h.npages);
  put16(static_cast<uint32_t>(h.min_key_len));
  out.insert(out.end(), h.min_key, h.min_key + h.min_key_len);
  put16(static_cast<uint32_t>(h.max_key_len));
  out.insert(out.end(), h.max_key, h.max_key + h.max_key_len);
  out.insert(out.end(), data + ref.root_off, data + size);
  FUZZ_CHECK(out.size() == size && std::memcmp(out.data(), data, size) == 0);
  LsmRunHeader h2;
  FUZZ_CHECK(lsm_runheader_parse(out.data(), out.size(), &h2) == LSM_OK);
  FUZZ_CHECK(h2.nentries == h.nentries && h2.height == h.height &&
             h2.ndata_pages == h.ndata_pages && h2.npages == h.npages);
  FUZZ_CHECK(h2.min_key_len == h.min_key_len && h2.max_key_len == h.max_key_len);
  FUZZ_CHECK(h2.min_key_len == 0 || std::memcmp(h2.min_key, h.min_key, h.min_key_len) == 0);
  FUZZ_CHECK(h2.max_key_len == 0 || std::memcmp(h2.max_key, h.max_key, h.max_key_len) == 0);
  return 0;
}
