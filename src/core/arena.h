// arena.h — a pool of fixed-size chunks carved from one shared-memory region.
//
// Layout of the region (in memory only, never on disk):
//   offset 0:                  ArenaHeader (kArenaHeaderSize bytes)
//   offset kArenaHeaderSize + i * chunk_size:  chunk i, i = 0 .. nchunks-1
// Chunks are named by their 32-bit offset from the region's base, so offset 0
// (the header) means "no chunk" and the whole region must fit in 4 GiB.  A free
// chunk's first 4 bytes link to the next free chunk.  Chunks that were never
// handed out are not on the free list: they are taken in order from
// next_unused, so init touches only the header.
//
// Thread-safety: none.  REQUIRES: the caller's arena lock for every call that
// changes the arena (Init, AllocChunk, FreeChunk).  IsChunk of a chunk handed
// out earlier may run without it (see there).

#ifndef LSM_CORE_ARENA_H_
#define LSM_CORE_ARENA_H_

#include <cstddef>
#include <cstdint>

#include "lsm_core.h"
#include "port.h"  // PostgreSQL firewall

namespace lsm {

// Smallest chunk: must hold a memtable head node plus the largest node.
constexpr uint32_t kMinChunkSize = 4096;
constexpr uint32_t kArenaHeaderSize = 64;
constexpr uint32_t kArenaMagic = 0x4C534D41;  // "AMSL" little-endian

struct ArenaHeader {
  uint32_t magic;
  uint32_t chunk_size;
  uint32_t nchunks;
  uint32_t nfree;        // free chunks, including never-used ones
  uint32_t free_head;    // offset of first recycled chunk; 0 = none
  uint32_t next_unused;  // index of the first never-used chunk
};
static_assert(sizeof(ArenaHeader) <= kArenaHeaderSize, "arena header");

class Arena {
 public:
  // Bytes needed for the region, or 0 if the parameters are invalid
  // (nchunks == 0, chunk_size < kMinChunkSize or not a multiple of 8, or the
  // region would exceed 4 GiB).
  static size_t RegionSize(uint32_t nchunks, uint32_t chunk_size);

  // LSM_INVALID unless base is 8-byte aligned and RegionSize() accepts the
  // parameters.
  static LsmStatus Init(void* base, uint32_t nchunks, uint32_t chunk_size);
  // LSM_OK with *chunk set, LSM_NO_MEMORY when every chunk is in use,
  // LSM_INVALID if base is not an initialised arena.
  static LsmStatus AllocChunk(void* base, uint32_t* chunk);
  // Returns chunk to the pool.  LSM_INVALID if it is not a chunk offset.
  static LsmStatus FreeChunk(void* base, uint32_t chunk);
  // 0 if base is not an initialised arena.
  static uint32_t FreeChunks(const void* base);
  static uint32_t ChunkSize(const void* base);
  // True if chunk is the offset of one of the arena's chunks.  Safe without
  // the lock that serialises AllocChunk/FreeChunk for a chunk the caller was
  // handed earlier (next_unused is read and written atomically and only
  // grows); the answer is not "free or in use".
  static bool IsChunk(const void* base, uint32_t chunk);

 private:
  static const ArenaHeader* Header(const void* base);
};

}  // namespace lsm

#endif  // LSM_CORE_ARENA_H_
