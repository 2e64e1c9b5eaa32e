// test_util.h — helpers shared by the core unit tests.

#ifndef LSM_TESTS_UNIT_TEST_UTIL_H_
#define LSM_TESTS_UNIT_TEST_UTIL_H_

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "lsm_core.h"

namespace lsm_test {

// std::string compares like memcmp (char_traits<char> compares as unsigned
// char), shorter first on a common prefix: the core's key order.
using Key = std::string;

inline const uint8_t* U8(const Key& k) {
  return reinterpret_cast<const uint8_t*>(k.data());
}

// Keys designed to stress the order: a small alphabet with 0x00 and 0xFF (so
// keys share prefixes), random lengths, and keys that are prefixes or
// extensions of earlier ones.
class KeyGen {
 public:
  explicit KeyGen(uint32_t seed, size_t max_len = 200)
      : rng_(seed), max_len_(max_len) {}

  Key Next() {
    Key k;
    int kind = Uniform(0, 9);
    if (!recent_.empty() && kind == 0) {
      // a prefix of an earlier key
      const Key& r = recent_[Uniform(0, recent_.size() - 1)];
      k = r.substr(0, Uniform(1, r.size()));
    } else if (!recent_.empty() && kind == 1) {
      // an extension of an earlier key
      k = recent_[Uniform(0, recent_.size() - 1)];
      size_t extra = Uniform(1, 8);
      for (size_t i = 0; i < extra && k.size() < max_len_; i++) k += Byte();
    } else {
      size_t len = Uniform(1, max_len_);
      k.reserve(len);
      for (size_t i = 0; i < len; i++) k += Byte();
    }
    if (k.empty()) k += Byte();
    if (recent_.size() < 64)
      recent_.push_back(k);
    else
      recent_[Uniform(0, 63)] = k;
    return k;
  }

  char Byte() {
    static const uint8_t kAlphabet[] = {0x00, 0x01, 0x7F, 0x80,
                                        0xFE, 0xFF, 'a',  'b'};
    if (Uniform(0, 3) == 0) return static_cast<char>(Uniform(0, 255));
    return static_cast<char>(kAlphabet[Uniform(0, sizeof(kAlphabet) - 1)]);
  }

  size_t Uniform(size_t lo, size_t hi) {
    return std::uniform_int_distribution<size_t>(lo, hi)(rng_);
  }
  std::mt19937& rng() { return rng_; }

 private:
  std::mt19937 rng_;
  size_t max_len_;
  std::vector<Key> recent_;
};

// Reference for the prefix upper bound: k is within hi when the first
// min(|k|, |hi|) bytes of k are <= those of hi.
inline bool WithinHi(const Key& k, const Key& hi) {
  size_t n = std::min(k.size(), hi.size());
  return k.compare(0, n, hi, 0, n) <= 0;
}

inline std::vector<Key> BatchKeys(const LsmBatch* b) {
  std::vector<Key> out;
  for (size_t i = 0; i < lsm_batch_count(b); i++) {
    const uint8_t* k;
    size_t len;
    lsm_batch_get(b, i, &k, &len);
    out.emplace_back(reinterpret_cast<const char*>(k), len);
  }
  return out;
}

}  // namespace lsm_test

#endif  // LSM_TESTS_UNIT_TEST_UTIL_H_
