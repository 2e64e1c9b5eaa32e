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

// The sign of memcmp(a, b, n).  Most keys differ in their first 8 bytes (an
// int8 key is a flag byte and 8 bytes): those are compared as one big-endian
// word, without a call.
inline int ComparePrefix(const uint8_t* a, const uint8_t* b, size_t n) {
  if (n >= 8) {
    uint64_t x, y;
    std::memcpy(&x, a, 8);
    std::memcpy(&y, b, 8);
    if (x != y) {
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
      x = __builtin_bswap64(x);
      y = __builtin_bswap64(y);
#endif
      return x < y ? -1 : 1;
    }
    a += 8;
    b += 8;
    n -= 8;
  }
  return n == 0 ? 0 : std::memcmp(a, b, n);
}

// <0, 0, >0 like memcmp; a proper prefix sorts first.
inline int CompareKeys(const uint8_t* a, size_t alen, const uint8_t* b,
                       size_t blen) {
  int r = ComparePrefix(a, b, alen < blen ? alen : blen);
  if (r != 0) return r;
  return alen < blen ? -1 : (alen > blen ? 1 : 0);
}

inline int CompareKeys(const Slice& a, const Slice& b) {
  return CompareKeys(a.data, a.size, b.data, b.size);
}

inline bool KeysEqual(const uint8_t* a, size_t alen, const uint8_t* b,
                      size_t blen) {
  return alen == blen && ComparePrefix(a, b, alen) == 0;
}

// True if key k lies beyond the prefix upper bound hi: the first
// min(klen, hilen) bytes of k compare greater than those of hi.  A key that is
// a prefix of hi, or has hi as a prefix, is within the bound.  Monotone: if k
// is beyond hi, so is every key greater than k.
inline bool BeyondPrefixUpper(const uint8_t* k, size_t klen, const uint8_t* hi,
                              size_t hilen) {
  return ComparePrefix(k, hi, klen < hilen ? klen : hilen) > 0;
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
