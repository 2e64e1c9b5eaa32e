// coding.h — little-endian fixed-width integers and varints for page formats.
//
// All multi-byte integers in page content areas are little-endian; varints are
// LevelDB/protobuf style (7 bits per byte, low group first, high bit = more).
// Decoders are bounds-checked and never read past `limit`.

#ifndef LSM_CORE_CODING_H_
#define LSM_CORE_CODING_H_

#include <cstddef>
#include <cstdint>

#include "port.h"  // PostgreSQL firewall

namespace lsm {

inline void EncodeFixed16(uint8_t* p, uint16_t v) {
  p[0] = static_cast<uint8_t>(v);
  p[1] = static_cast<uint8_t>(v >> 8);
}

inline void EncodeFixed32(uint8_t* p, uint32_t v) {
  for (int i = 0; i < 4; i++) p[i] = static_cast<uint8_t>(v >> (8 * i));
}

inline void EncodeFixed64(uint8_t* p, uint64_t v) {
  for (int i = 0; i < 8; i++) p[i] = static_cast<uint8_t>(v >> (8 * i));
}

inline uint16_t DecodeFixed16(const uint8_t* p) {
  return static_cast<uint16_t>(p[0] | (p[1] << 8));
}

inline uint32_t DecodeFixed32(const uint8_t* p) {
  return static_cast<uint32_t>(p[0]) | (static_cast<uint32_t>(p[1]) << 8) |
         (static_cast<uint32_t>(p[2]) << 16) |
         (static_cast<uint32_t>(p[3]) << 24);
}

inline uint64_t DecodeFixed64(const uint8_t* p) {
  return static_cast<uint64_t>(DecodeFixed32(p)) |
         (static_cast<uint64_t>(DecodeFixed32(p + 4)) << 32);
}

// Bytes needed to encode v as a varint.
inline size_t VarintLength(uint32_t v) {
  size_t n = 1;
  while (v >= 128) {
    v >>= 7;
    n++;
  }
  return n;
}

// Writes v at p; returns the byte after it.  REQUIRES: room for 5 bytes.
inline uint8_t* EncodeVarint32(uint8_t* p, uint32_t v) {
  while (v >= 128) {
    *p++ = static_cast<uint8_t>(v | 128);
    v >>= 7;
  }
  *p++ = static_cast<uint8_t>(v);
  return p;
}

// Parses a varint32 in [p, limit).  Returns the byte after it, or nullptr if
// it is truncated or longer than 5 bytes.
inline const uint8_t* DecodeVarint32(const uint8_t* p, const uint8_t* limit,
                                     uint32_t* v) {
  if (p < limit && *p < 128) {  // fast path: one byte
    *v = *p;
    return p + 1;
  }
  uint32_t result = 0;
  for (uint32_t shift = 0; shift <= 28 && p < limit; shift += 7) {
    uint32_t byte = *p++;
    if (byte & 128) {
      result |= (byte & 127) << shift;
    } else {
      result |= byte << shift;
      *v = result;
      return p;
    }
  }
  return nullptr;
}

}  // namespace lsm

#endif  // LSM_CORE_CODING_H_
