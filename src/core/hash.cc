// hash.cc — xxHash64 wrapper.

#include "hash.h"

#include <xxhash.h>

#include "port.h"

namespace lsm {

uint64_t Hash64(const void* data, size_t len, uint64_t seed) {
  static const uint8_t kEmpty = 0;
  if (data == nullptr) {  // XXH64 wants a valid pointer; NULL hashes as ""
    data = &kEmpty;
    len = 0;
  }
  return XXH64(data, len, seed);
}

}  // namespace lsm
