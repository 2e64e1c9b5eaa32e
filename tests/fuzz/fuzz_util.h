// fuzz_util.h — shared helpers of the libFuzzer targets in tests/fuzz.
//
// A target checks the decoder's contract, not only that it does not crash:
// FUZZ_CHECK aborts (libFuzzer then saves the input as a crash reproducer)
// when a decoder accepted bytes it should have refused, returned output
// inconsistent with its input, or failed on bytes it must accept.

#ifndef LSM_FUZZ_UTIL_H_
#define LSM_FUZZ_UTIL_H_

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

extern "C" {
#include "lsm_core.h"
}

#define FUZZ_CHECK(cond)                                                    \
  do {                                                                      \
    if (!(cond)) {                                                          \
      std::fprintf(stderr, "%s:%d: contract violated: %s\n", __FILE__,      \
                   __LINE__, #cond);                                        \
      std::abort();                                                         \
    }                                                                       \
  } while (0)

namespace fuzz {

using Key = std::string;  // bytes of one key

inline Key MakeKey(const uint8_t* p, size_t n) {
  return n == 0 ? Key() : Key(reinterpret_cast<const char*>(p), n);
}

inline const uint8_t* Bytes(const Key& k) {
  return reinterpret_cast<const uint8_t*>(k.data());
}

// memcmp order, shorter first on a common prefix (the core's key order).
inline int Compare(const Key& a, const Key& b) { return a.compare(b); }

// Is k beyond the prefix upper bound hi (its first |hi| bytes > hi)?
inline bool BeyondPrefix(const Key& k, const Key& hi) {
  size_t n = k.size() < hi.size() ? k.size() : hi.size();
  return n != 0 && std::memcmp(k.data(), hi.data(), n) > 0;
}

// A status every core call may return: never LSM_INTERNAL (an exception
// reached the C API), never a positive status a decoder does not define.
inline void CheckNoInternal(LsmStatus st) {
  FUZZ_CHECK(st != LSM_INTERNAL);
  FUZZ_CHECK(st != LSM_NO_MEMORY);
}

inline std::vector<Key> BatchKeys(const LsmBatch* b) {
  std::vector<Key> out;
  for (size_t i = 0; i < lsm_batch_count(b); i++) {
    const uint8_t* k;
    size_t n;
    lsm_batch_get(b, i, &k, &n);
    out.push_back(MakeKey(k, n));
  }
  return out;
}

inline void CheckStrictlyAscending(const std::vector<Key>& keys) {
  for (size_t i = 0; i < keys.size(); i++) {
    FUZZ_CHECK(keys[i].size() <= LSM_MAX_KEY_SIZE);
    if (i > 0) FUZZ_CHECK(Compare(keys[i - 1], keys[i]) < 0);
  }
}

// A cheap deterministic value of the input, to pick choices from it.
inline uint64_t InputHash(const uint8_t* data, size_t size) {
  return lsm_hash64(data, size, 0x66757A7A);
}

}  // namespace fuzz

#endif  // LSM_FUZZ_UTIL_H_
