// hash.h — 64-bit hashing of keys (xxHash64).
//
// Used for bloom filters and key-encoding fingerprints, so the function is
// part of the on-disk format: do not change without bumping the format
// version.

#ifndef LSM_CORE_HASH_H_
#define LSM_CORE_HASH_H_

#include <cstddef>
#include <cstdint>

#include "port.h"  // PostgreSQL firewall

namespace lsm {

uint64_t Hash64(const void* data, size_t len, uint64_t seed);

}  // namespace lsm

#endif  // LSM_CORE_HASH_H_
