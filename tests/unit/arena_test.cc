// arena_test.cc — shared-memory chunk pool.

#include "arena.h"

#include <gtest/gtest.h>

#include <cstring>
#include <set>
#include <vector>

#include "lsm_core.h"

namespace {

std::vector<uint64_t> Region(uint32_t nchunks, uint32_t chunk_size) {
  size_t size = lsm_arena_size(nchunks, chunk_size);
  return std::vector<uint64_t>((size + 7) / 8, 0xDEADBEEFDEADBEEFull);
}

TEST(ArenaTest, SizeRejectsBadParameters) {
  EXPECT_EQ(lsm_arena_size(0, 65536), 0u);
  EXPECT_EQ(lsm_arena_size(4, 100), 0u);        // below minimum
  EXPECT_EQ(lsm_arena_size(4, 8192 + 4), 0u);   // not 8-aligned
  EXPECT_EQ(lsm_arena_size(70000, 65536), 0u);  // beyond 4 GiB
  EXPECT_EQ(lsm_arena_size(4, 65536), lsm::kArenaHeaderSize + 4 * 65536u);
  EXPECT_EQ(lsm_arena_size(65535, 65536),
            lsm::kArenaHeaderSize + 65535ull * 65536u);
}

TEST(ArenaTest, AllocFreeExhaustion) {
  const uint32_t kChunks = 10, kSize = 8192;
  auto region = Region(kChunks, kSize);
  void* base = region.data();
  ASSERT_EQ(lsm_arena_init(base, kChunks, kSize), LSM_OK);
  EXPECT_EQ(lsm_arena_chunk_size(base), kSize);
  EXPECT_EQ(lsm_arena_free_chunks(base), kChunks);

  std::set<uint32_t> got;
  for (uint32_t i = 0; i < kChunks; i++) {
    uint32_t c = 0;
    ASSERT_EQ(lsm_arena_alloc_chunk(base, &c), LSM_OK);
    EXPECT_NE(c, 0u);
    EXPECT_GE(c, lsm::kArenaHeaderSize);
    EXPECT_EQ((c - lsm::kArenaHeaderSize) % kSize, 0u);
    EXPECT_LE(c + kSize, lsm_arena_size(kChunks, kSize));
    EXPECT_TRUE(got.insert(c).second) << "chunk handed out twice";
    EXPECT_EQ(lsm_arena_free_chunks(base), kChunks - i - 1);
  }
  uint32_t c = 12345;
  EXPECT_EQ(lsm_arena_alloc_chunk(base, &c), LSM_NO_MEMORY);

  // Free three, get the same three back, then exhaustion again.
  std::vector<uint32_t> freed(got.begin(), std::next(got.begin(), 3));
  for (uint32_t f : freed) EXPECT_EQ(lsm::Arena::FreeChunk(base, f), LSM_OK);
  EXPECT_EQ(lsm_arena_free_chunks(base), 3u);
  std::set<uint32_t> again;
  for (int i = 0; i < 3; i++) {
    ASSERT_EQ(lsm_arena_alloc_chunk(base, &c), LSM_OK);
    again.insert(c);
  }
  EXPECT_EQ(again, std::set<uint32_t>(freed.begin(), freed.end()));
  EXPECT_EQ(lsm_arena_alloc_chunk(base, &c), LSM_NO_MEMORY);
}

TEST(ArenaTest, FreeRejectsNonChunks) {
  auto region = Region(4, 8192);
  void* base = region.data();
  ASSERT_EQ(lsm_arena_init(base, 4, 8192), LSM_OK);
  uint32_t c;
  ASSERT_EQ(lsm_arena_alloc_chunk(base, &c), LSM_OK);
  EXPECT_EQ(lsm::Arena::FreeChunk(base, 0), LSM_INVALID);
  EXPECT_EQ(lsm::Arena::FreeChunk(base, c + 8), LSM_INVALID);
  EXPECT_EQ(lsm::Arena::FreeChunk(base, c + 8192), LSM_INVALID);  // unused
  EXPECT_EQ(lsm::Arena::FreeChunk(base, c), LSM_OK);
  EXPECT_EQ(lsm::Arena::FreeChunk(base, c), LSM_INVALID);  // double free
}

TEST(ArenaTest, InvalidArguments) {
  auto region = Region(4, 8192);
  void* base = region.data();
  uint32_t c;
  EXPECT_EQ(lsm_arena_init(nullptr, 4, 8192), LSM_INVALID);
  EXPECT_EQ(lsm_arena_init(base, 0, 8192), LSM_INVALID);
  EXPECT_EQ(lsm_arena_init(base, 4, 16), LSM_INVALID);
  EXPECT_EQ(lsm_arena_init(static_cast<char*>(base) + 4, 3, 8192),
            LSM_INVALID);  // misaligned
  // Not initialised: the magic is missing.
  EXPECT_EQ(lsm_arena_alloc_chunk(base, &c), LSM_INVALID);
  EXPECT_EQ(lsm_arena_free_chunks(base), 0u);
  EXPECT_EQ(lsm_arena_chunk_size(base), 0u);
  ASSERT_EQ(lsm_arena_init(base, 4, 8192), LSM_OK);
  EXPECT_EQ(lsm_arena_alloc_chunk(base, nullptr), LSM_INVALID);
  EXPECT_EQ(lsm_arena_alloc_chunk(nullptr, &c), LSM_INVALID);
  EXPECT_EQ(lsm_arena_free_chunks(nullptr), 0u);
  EXPECT_EQ(lsm_arena_chunk_size(nullptr), 0u);
}

}  // namespace
