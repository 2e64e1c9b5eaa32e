// slice.h — a pointer + length view of a key, and the key orders.
//
// Keys are byte strings ordered by memcmp, shorter first on a common prefix.

#ifndef LSM_CORE_SLICE_H_
#define LSM_CORE_SLICE_H_

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "port.h"  // PostgreSQL firewall

namespace lsm {

struct Slice {
  const uint8_t* data = nullptr;
  size_t size = 0;

  Slice() = default;
  Slice(const uint8_t* d, size_t n) : data(d), size(n) {}
};

// <0, 0, >0 like memcmp; a proper prefix sorts first.
inline int CompareKeys(const uint8_t* a, size_t alen, const uint8_t* b,
                       size_t blen) {
  size_t n = alen < blen ? alen : blen;
  int r = n == 0 ? 0 : std::memcmp(a, b, n);
  if (r != 0) return r;
  return alen < blen ? -1 : (alen > blen ? 1 : 0);
}

inline int CompareKeys(const Slice& a, const Slice& b) {
  return CompareKeys(a.data, a.size, b.data, b.size);
}

inline bool KeysEqual(const uint8_t* a, size_t alen, const uint8_t* b,
                      size_t blen) {
  return alen == blen && (alen == 0 || std::memcmp(a, b, alen) == 0);
}

// True if key k lies beyond the prefix upper bound hi: the first
// min(klen, hilen) bytes of k compare greater than those of hi.  A key that is
// a prefix of hi, or has hi as a prefix, is within the bound.  Monotone: if k
// is beyond hi, so is every key greater than k.
inline bool BeyondPrefixUpper(const uint8_t* k, size_t klen, const uint8_t* hi,
                              size_t hilen) {
  size_t n = klen < hilen ? klen : hilen;
  return n != 0 && std::memcmp(k, hi, n) > 0;
}

// Length of the longest common prefix of a and b.
inline size_t SharedPrefixLength(const uint8_t* a, size_t alen,
                                 const uint8_t* b, size_t blen) {
  size_t n = alen < blen ? alen : blen;
  size_t i = 0;
  while (i + 8 <= n) {
    uint64_t x, y;
    std::memcpy(&x, a + i, 8);
    std::memcpy(&y, b + i, 8);
    if (x != y) break;
    i += 8;
  }
  while (i < n && a[i] == b[i]) i++;
  return i;
}

}  // namespace lsm

#endif  // LSM_CORE_SLICE_H_
