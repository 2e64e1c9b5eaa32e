// memtable.h — a skiplist whose nodes live in arena chunks (LevelDB style).
//
// The LsmMemtable struct (lsm_core.h) is plain data in shared memory; it and
// the nodes hold only 32-bit offsets from the arena base, never pointers, so
// any process mapping the arena can use them.  The memtable never allocates
// process memory; it asks the caller for chunks (LSM_NEED_CHUNK).
//
// Chunk layout: a 4-byte link to the next chunk the memtable owns (0 = end),
// 4 bytes of padding, then nodes packed at 4-byte alignment.  Nodes never span
// chunks.  Node layout (offset n, 4-aligned):
//   n+0  uint16 key_len
//   n+2  uint8  height (1..kMaxHeight)
//   n+3  uint8  reserved (0)
//   n+4  uint32 next[height]       offsets of successor nodes, 0 = none
//   ...  key bytes, padded to a multiple of 4
// A node therefore takes at most len + kMaxNodeOverhead bytes (55 <= 64, the
// margin the shim reserves before calling insert).  The head node (height
// kMaxHeight, empty key) is placed in the first chunk by AddChunk, so a
// non-empty memtable always has one.
//
// Thread-safety: none; REQUIRES lines in lsm_core.h name the locks.

#ifndef LSM_CORE_MEMTABLE_H_
#define LSM_CORE_MEMTABLE_H_

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "batch.h"
#include "lsm_core.h"
#include "port.h"  // PostgreSQL firewall
#include "slice.h"

namespace lsm {

constexpr int kMaxHeight = 12;
constexpr uint32_t kBranching = 4;
constexpr uint32_t kChunkLinkSize = 8;  // link word + padding
constexpr uint32_t kNodeHeaderSize = 4;
constexpr uint32_t kMaxNodeOverhead = kNodeHeaderSize + 4 * kMaxHeight + 3;
constexpr uint64_t kMemtableSeed = 0x9E3779B97F4A7C15ull;
constexpr uint64_t kFilterSeed = 0x6d656d66696c7472ull;  // "memfiltr"
constexpr uint32_t kFilterBlockBytes = 64;
// The key filter is up to kMaxFilterChunks arena chunks.  Each chunk's
// blocks start kFilterDataOffset bytes in (a cache line: the first 8 are the
// chunk's link word).  The first kFilterDirBlocks blocks of the first chunk
// are its directory: a u32 count, then each chunk's arena offset, the first
// chunk's first; the blocks after them and every block of the other chunks
// hold the bits.
constexpr uint32_t kFilterDataOffset = 64;
constexpr uint32_t kMaxFilterChunks = LSM_MEMTABLE_MAX_FILTER_CHUNKS;
constexpr uint32_t kFilterDirBlocks = 4;  // (1 + 63) u32 = 256 bytes
static_assert(4 * (1 + kMaxFilterChunks) <= kFilterDirBlocks * kFilterBlockBytes,
              "the filter directory fits its blocks");
// Keys one InsertMany call takes at most (its per-key state is on the stack).
constexpr size_t kInsertManyMax = 64;

class Memtable {
 public:
  static void Init(LsmMemtable* mt);
  static LsmStatus Insert(void* base, LsmMemtable* mt, const uint8_t* key,
                          size_t len);
  // Inserts keys[0..*consumed): as many from the front as fit in the current
  // chunk, at most kInsertManyMax (lsm_memtable_insert_many).
  static LsmStatus InsertMany(void* base, LsmMemtable* mt, const LsmKeyRef* keys,
                              size_t n, size_t* consumed);
  // Inserts the entries of a log page from *pos on (lsm_memtable_insert_log).
  static LsmStatus InsertLog(void* base, LsmMemtable* mt,
                             const uint8_t* content, size_t len, size_t* pos);
  // Adds chunk to mt (places the head node if mt has none).  Returns
  // LSM_INVALID (and changes nothing) if chunk is not an arena chunk.
  static LsmStatus AddChunk(void* base, LsmMemtable* mt, uint32_t chunk);
  static void Release(void* base, LsmMemtable* mt);
  // The key filter (lsm_memtable_add_filter, lsm_memtable_may_contain).
  static LsmStatus AddFilter(void* base, LsmMemtable* mt, uint32_t suffix,
                             const uint32_t* chunks, uint32_t n);
  static uint32_t FilterChunks(const void* base, const LsmMemtable* mt);
  static bool MayContain(const void* base, const LsmMemtable* mt,
                         const uint8_t* prefix, size_t len);
  static uint64_t Memory(const void* base, const LsmMemtable* mt);
  // First node with key >= target (target nullptr: first node); 0 if none.
  static uint32_t Seek(const void* base, const LsmMemtable* mt,
                       const uint8_t* target, size_t tlen);
  static LsmStatus CopyRange(const void* base, const LsmMemtable* mt,
                             const uint8_t* lo, size_t lolen, const uint8_t* hi,
                             size_t hilen, Batch* b);
  // One chunk of a streaming scan of [lo, hi] (see lsm_memtable_copy_chunk).
  static LsmStatus CopyChunk(const void* base, const LsmMemtable* mt,
                             bool backward, const uint8_t* lo, size_t lolen,
                             const uint8_t* hi, size_t hilen,
                             const uint8_t* resume, size_t rlen, size_t max,
                             Batch* b, int* more);

  // Node accessors.  REQUIRES: node != 0.
  static uint32_t Next(const void* base, uint32_t node) {
    return NextArray(base, node)[0];
  }
  static Slice Key(const void* base, uint32_t node) {
    const uint8_t* p = static_cast<const uint8_t*>(base) + node;
    uint16_t klen;
    std::memcpy(&klen, p, sizeof(klen));
    return Slice(p + kNodeHeaderSize + 4 * p[2], klen);
  }

  // Bytes a node of the given key length and height occupies.
  static uint32_t NodeSize(size_t len, int height) {
    return static_cast<uint32_t>((kNodeHeaderSize + 4 * height + len + 3) &
                                 ~size_t{3});
  }

 private:
  static const uint32_t* NextArray(const void* base, uint32_t node) {
    return reinterpret_cast<const uint32_t*>(static_cast<const uint8_t*>(base) +
                                             node + kNodeHeaderSize);
  }
  static uint32_t* NextArray(void* base, uint32_t node) {
    return reinterpret_cast<uint32_t*>(static_cast<uint8_t*>(base) + node +
                                       kNodeHeaderSize);
  }
  static int RandomHeight(uint64_t* rng);
  // The arena offset of filter chunk i (i < FilterChunks).
  static uint32_t FilterChunk(const void* base, const LsmMemtable* mt, uint32_t i);
  // The filter's block of a prefix hash, and its 4 bits in that block;
  // nullptr if the directory is damaged (then every answer is "maybe").
  static const uint8_t* FilterBlock(const void* base, const LsmMemtable* mt,
                                    uint64_t h, uint32_t bits[4]);
  static void FilterAdd(void* base, LsmMemtable* mt, const uint8_t* key,
                        size_t len);
  // Last node < key (key nullptr: the last node); 0 if none.  O(log n).
  static uint32_t FindLessThan(const void* base, const LsmMemtable* mt,
                               const uint8_t* key, size_t len);
  // First node >= key; fills prev[0..max_height) when prev != nullptr.
  static uint32_t FindGreaterOrEqual(const void* base, const LsmMemtable* mt,
                                     const uint8_t* key, size_t len,
                                     uint32_t* prev);
  static uint32_t PlaceNode(void* base, LsmMemtable* mt, const uint8_t* key,
                            size_t len, int height);
};

}  // namespace lsm

#endif  // LSM_CORE_MEMTABLE_H_
