// arena.cc — shared-memory chunk pool.

#include "arena.h"

#include <cstring>

#include "port.h"

namespace lsm {

const ArenaHeader* Arena::Header(const void* base) {
  if (base == nullptr) return nullptr;
  const ArenaHeader* h = static_cast<const ArenaHeader*>(base);
  if (h->magic != kArenaMagic) return nullptr;
  return h;
}

size_t Arena::RegionSize(uint32_t nchunks, uint32_t chunk_size) {
  if (nchunks == 0 || chunk_size < kMinChunkSize || chunk_size % 8 != 0)
    return 0;
  uint64_t total =
      kArenaHeaderSize + static_cast<uint64_t>(nchunks) * chunk_size;
  if (total > (uint64_t{1} << 32)) return 0;
  return static_cast<size_t>(total);
}

LsmStatus Arena::Init(void* base, uint32_t nchunks, uint32_t chunk_size) {
  if (base == nullptr || reinterpret_cast<uintptr_t>(base) % 8 != 0 ||
      RegionSize(nchunks, chunk_size) == 0)
    return LSM_INVALID;
  ArenaHeader* h = static_cast<ArenaHeader*>(base);
  std::memset(base, 0, kArenaHeaderSize);
  h->magic = kArenaMagic;
  h->chunk_size = chunk_size;
  h->nchunks = nchunks;
  h->nfree = nchunks;
  h->free_head = 0;
  h->next_unused = 0;
  return LSM_OK;
}

LsmStatus Arena::AllocChunk(void* base, uint32_t* chunk) {
  if (chunk == nullptr || Header(base) == nullptr) return LSM_INVALID;
  ArenaHeader* h = static_cast<ArenaHeader*>(base);
  uint8_t* b = static_cast<uint8_t*>(base);
  if (h->free_head != 0) {
    uint32_t c = h->free_head;
    std::memcpy(&h->free_head, b + c, sizeof(uint32_t));
    h->nfree--;
    *chunk = c;
    return LSM_OK;
  }
  if (h->next_unused < h->nchunks) {
    *chunk = kArenaHeaderSize + h->next_unused * h->chunk_size;
    // an atomic store: IsChunk may read it without the caller's lock
    __atomic_store_n(&h->next_unused, h->next_unused + 1, __ATOMIC_RELAXED);
    h->nfree--;
    return LSM_OK;
  }
  return LSM_NO_MEMORY;
}

bool Arena::IsChunk(const void* base, uint32_t chunk) {
  const ArenaHeader* h = Header(base);
  if (h == nullptr || chunk < kArenaHeaderSize) return false;
  uint32_t rel = chunk - kArenaHeaderSize;
  // Unlocked callers (a chunk they were given earlier) race only with
  // AllocChunk's increment: next_unused never shrinks after Init, so either
  // value read answers the same for a chunk already handed out.
  const uint32_t used = __atomic_load_n(&h->next_unused, __ATOMIC_RELAXED);
  return rel % h->chunk_size == 0 && rel / h->chunk_size < used;
}

LsmStatus Arena::FreeChunk(void* base, uint32_t chunk) {
  if (!IsChunk(base, chunk)) return LSM_INVALID;
  ArenaHeader* h = static_cast<ArenaHeader*>(base);
  if (h->nfree >= h->nchunks) return LSM_INVALID;  // double free
  std::memcpy(static_cast<uint8_t*>(base) + chunk, &h->free_head,
              sizeof(uint32_t));
  h->free_head = chunk;
  h->nfree++;
  return LSM_OK;
}

uint32_t Arena::FreeChunks(const void* base) {
  const ArenaHeader* h = Header(base);
  return h == nullptr ? 0 : h->nfree;
}

uint32_t Arena::ChunkSize(const void* base) {
  const ArenaHeader* h = Header(base);
  return h == nullptr ? 0 : h->chunk_size;
}

}  // namespace lsm
