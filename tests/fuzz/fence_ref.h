// fence_ref.h — an independent reading of the fence block and run header
// layouts of doc/page_format.md, the oracle of fuzz_fence and
// fuzz_runheader.  Written from the documented format, not from the core's
// code, so that the two can disagree.

#ifndef LSM_FUZZ_FENCE_REF_H_
#define LSM_FUZZ_FENCE_REF_H_

#include "fuzz_util.h"

namespace fuzz {

constexpr uint32_t kRunMagic = 0x524D534C;    // "LSMR"
constexpr uint32_t kFenceMagic = 0x464D534C;  // "LSMF"
constexpr uint16_t kFormatVersion = 1;
constexpr uint32_t kMaxHeight = 24;

inline uint32_t Le16(const uint8_t* p) { return p[0] | (p[1] << 8); }
inline uint32_t Le32(const uint8_t* p) {
  return Le16(p) | (static_cast<uint32_t>(Le16(p + 2)) << 16);
}
inline uint64_t Le64(const uint8_t* p) {
  return Le32(p) | (static_cast<uint64_t>(Le32(p + 4)) << 32);
}

struct RefEntry {
  bool ok = false;  // the entry decodes within the block
  Key key;
  uint32_t child = 0;
};

// Entries of the fence block block[0..len); false if its header or offset
// array does not fit.
inline bool RefFenceBlock(const uint8_t* block, size_t len,
                          std::vector<RefEntry>* out) {
  out->clear();
  if (len < 2) return false;
  size_t n = Le16(block);
  if (n == 0 || 2 + 2 * n > len) return false;
  size_t end = len - 2 * n;  // entries lie in [2, end)
  for (size_t i = 0; i < n; i++) {
    RefEntry e;
    size_t off = Le16(block + end + 2 * i);
    if (off >= 2 && off < end) {
      // varint32 klen, at most 5 bytes
      uint32_t klen = 0;
      size_t p = off;
      bool done = false;
      for (int shift = 0; shift <= 28 && p < end; shift += 7) {
        uint8_t b = block[p++];
        klen |= static_cast<uint32_t>(b & 127) << shift;
        if (!(b & 128)) {
          done = true;
          break;
        }
      }
      if (done && klen <= LSM_MAX_KEY_SIZE && end - p >= klen + 4ull) {
        e.ok = true;
        e.key = MakeKey(block + p, klen);
        e.child = Le32(block + p + klen);
      }
    }
    out->push_back(e);
  }
  return true;
}

struct RefHeader {
  uint32_t height;
  uint64_t nentries;
  uint32_t ndata, npages;
  size_t min_off, min_len, max_off, max_len;
  size_t root_off;  // the root fence block, to the end of the content
};

// The run header of content[0..len), or false if it is not a valid one
// (the root block itself is checked by RefFenceBlock).
inline bool RefRunHeader(const uint8_t* c, size_t len, RefHeader* h) {
  if (len < 24 + 4) return false;
  if (Le32(c) != kRunMagic || Le16(c + 4) != kFormatVersion) return false;
  h->height = Le16(c + 6);
  h->nentries = Le64(c + 8);
  h->ndata = Le32(c + 16);
  h->npages = Le32(c + 20);
  if (h->height > kMaxHeight || h->ndata == 0 || h->npages <= h->ndata ||
      h->nentries < h->ndata)
    return false;
  size_t pos = 24;
  h->min_len = Le16(c + pos);
  h->min_off = pos + 2;
  if (h->min_len > LSM_MAX_KEY_SIZE || h->min_off + h->min_len + 2 > len)
    return false;
  pos = h->min_off + h->min_len;
  h->max_len = Le16(c + pos);
  h->max_off = pos + 2;
  if (h->max_len > LSM_MAX_KEY_SIZE || h->max_off + h->max_len > len)
    return false;
  if (Compare(MakeKey(c + h->min_off, h->min_len),
              MakeKey(c + h->max_off, h->max_len)) > 0)
    return false;
  h->root_off = h->max_off + h->max_len;
  std::vector<RefEntry> root;
  return RefFenceBlock(c + h->root_off, len - h->root_off, &root);
}

}  // namespace fuzz

#endif  // LSM_FUZZ_FENCE_REF_H_
