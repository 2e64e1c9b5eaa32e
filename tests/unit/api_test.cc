// api_test.cc — every C API function answers invalid arguments with an
// error status (or a harmless no-op), never a crash or an exception.

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "lsm_core.h"
#include "test_util.h"

namespace {

using lsm_test::Key;
using lsm_test::U8;

TEST(ApiTest, StatusMessages) {
  for (int s = -6; s <= 5; s++) {
    const char* msg = lsm_status_message(static_cast<LsmStatus>(s));
    ASSERT_NE(msg, nullptr);
    EXPECT_GT(std::strlen(msg), 0u);
  }
  EXPECT_STRNE(lsm_status_message(LSM_CORRUPT),
               lsm_status_message(LSM_INVALID));
}

TEST(ApiTest, Hash) {
  // Reference value of XXH64("", seed 0): part of the on-disk format.
  EXPECT_EQ(lsm_hash64("", 0, 0), 0xEF46DB3751D8E999ull);
  EXPECT_EQ(lsm_hash64(nullptr, 0, 0), 0xEF46DB3751D8E999ull);
  EXPECT_EQ(lsm_hash64(nullptr, 10, 0), 0xEF46DB3751D8E999ull);
  EXPECT_NE(lsm_hash64("abc", 3, 0), lsm_hash64("abc", 3, 1));
  EXPECT_NE(lsm_hash64("abc", 3, 0), lsm_hash64("abd", 3, 0));
  EXPECT_EQ(lsm_hash64("abc", 3, 7), lsm_hash64("abc", 3, 7));
}

TEST(ApiTest, BatchInvalidArguments) {
  EXPECT_EQ(lsm_batch_create(nullptr), LSM_INVALID);
  lsm_batch_destroy(nullptr);
  lsm_batch_clear(nullptr);
  EXPECT_EQ(lsm_batch_add_key(nullptr, U8(Key("a")), 1), LSM_INVALID);
  EXPECT_EQ(lsm_batch_add_datapage(nullptr, U8(Key("abcd")), 4), LSM_INVALID);
  EXPECT_EQ(lsm_batch_count(nullptr), 0u);
  const uint8_t* k = U8(Key("x"));
  size_t len = 99;
  lsm_batch_get(nullptr, 0, &k, &len);
  EXPECT_EQ(k, nullptr);
  EXPECT_EQ(len, 0u);

  LsmBatch* b;
  ASSERT_EQ(lsm_batch_create(&b), LSM_OK);
  EXPECT_EQ(lsm_batch_add_key(b, nullptr, 3), LSM_INVALID);
  EXPECT_EQ(lsm_batch_add_key(b, nullptr, 0), LSM_OK);  // the empty key
  EXPECT_EQ(lsm_batch_add_datapage(b, nullptr, 10), LSM_CORRUPT);
  EXPECT_EQ(lsm_batch_count(b), 1u);
  lsm_batch_get(b, 5, &k, &len);  // out of range
  EXPECT_EQ(k, nullptr);
  lsm_batch_get(b, 0, nullptr, nullptr);
  lsm_batch_destroy(b);
}

TEST(ApiTest, PageFunctionsInvalidArguments) {
  LsmBatch* b;
  ASSERT_EQ(lsm_batch_create(&b), LSM_OK);
  std::vector<uint8_t> page(8136);
  size_t len;
  EXPECT_EQ(lsm_datapage_check(nullptr, 100), LSM_CORRUPT);
  EXPECT_EQ(
      lsm_datapage_build(nullptr, nullptr, page.data(), page.size(), &len),
      LSM_INVALID);
  EXPECT_EQ(lsm_datapage_build(b, nullptr, nullptr, page.size(), &len),
            LSM_INVALID);
  EXPECT_EQ(lsm_datapage_build(b, nullptr, page.data(), page.size(), nullptr),
            LSM_INVALID);
  ASSERT_EQ(lsm_batch_add_key(b, U8(Key("b")), 1), LSM_OK);
  ASSERT_EQ(lsm_batch_add_key(b, U8(Key("a")), 1), LSM_OK);  // out of order
  EXPECT_EQ(lsm_datapage_build(b, nullptr, page.data(), page.size(), &len),
            LSM_INVALID);
  lsm_batch_destroy(b);

  LsmRunHeader h;
  EXPECT_EQ(lsm_runheader_parse(nullptr, 100, &h), LSM_CORRUPT);
  EXPECT_EQ(lsm_runheader_parse(page.data(), page.size(), nullptr),
            LSM_INVALID);
  EXPECT_EQ(lsm_runheader_parse(page.data(), page.size(), &h), LSM_CORRUPT);

  uint32_t child;
  int is_data;
  EXPECT_EQ(lsm_fence_find(page.data(), page.size(), 1, LSM_FIND_FIRST, nullptr,
                           0, nullptr, &is_data),
            LSM_INVALID);
  EXPECT_EQ(lsm_fence_find(page.data(), page.size(), 1, LSM_FIND_FIRST, nullptr,
                           0, &child, nullptr),
            LSM_INVALID);
  EXPECT_EQ(
      lsm_fence_find(page.data(), page.size(), 1, static_cast<LsmFindMode>(9),
                     nullptr, 0, &child, &is_data),
      LSM_INVALID);
  EXPECT_EQ(lsm_fence_find(page.data(), page.size(), 0, LSM_FIND_LE, nullptr, 4,
                           &child, &is_data),
            LSM_INVALID);
  EXPECT_EQ(lsm_fence_find(nullptr, 100, 0, LSM_FIND_LE, nullptr, 0, &child,
                           &is_data),
            LSM_CORRUPT);
  EXPECT_EQ(lsm_fence_find(page.data(), page.size(), 0, LSM_FIND_LAST, nullptr,
                           0, &child, &is_data),
            LSM_CORRUPT);  // zeroes are no fence page
}

TEST(ApiTest, RunBuilderInvalidArguments) {
  LsmPageOut out;
  EXPECT_EQ(lsm_runbuilder_create(8136, 0, 0, nullptr), LSM_INVALID);
  EXPECT_EQ(lsm_runbuilder_add(nullptr, U8(Key("a")), 1, 0), LSM_INVALID);
  EXPECT_EQ(lsm_runbuilder_finish(nullptr), LSM_INVALID);
  EXPECT_EQ(lsm_runbuilder_take_page(nullptr, &out), LSM_INVALID);
  EXPECT_EQ(lsm_runbuilder_count(nullptr), 0u);
  lsm_runbuilder_destroy(nullptr);
}

TEST(ApiTest, MemtableInvalidArguments) {
  std::vector<uint64_t> region(lsm_arena_size(4, 8192) / 8);
  void* base = region.data();
  ASSERT_EQ(lsm_arena_init(base, 4, 8192), LSM_OK);
  LsmMemtable mt;
  lsm_memtable_init(nullptr);
  lsm_memtable_init(&mt);
  Key k("key");
  EXPECT_EQ(lsm_memtable_insert(nullptr, &mt, U8(k), 3), LSM_INVALID);
  EXPECT_EQ(lsm_memtable_insert(base, nullptr, U8(k), 3), LSM_INVALID);
  EXPECT_EQ(lsm_memtable_insert(base, &mt, nullptr, 3), LSM_INVALID);
  // A bogus chunk offset is ignored.
  LsmMemtable before = mt;
  lsm_memtable_add_chunk(base, &mt, 12345);
  lsm_memtable_add_chunk(base, &mt, 0);
  lsm_memtable_add_chunk(nullptr, &mt, 64);
  lsm_memtable_add_chunk(base, nullptr, 64);
  EXPECT_EQ(std::memcmp(&before, &mt, sizeof(mt)), 0);
  lsm_memtable_release(nullptr, &mt);
  lsm_memtable_release(base, nullptr);
  EXPECT_EQ(lsm_memtable_memory(nullptr, &mt), 0u);
  EXPECT_EQ(lsm_memtable_memory(base, nullptr), 0u);

  LsmBatch* b;
  ASSERT_EQ(lsm_batch_create(&b), LSM_OK);
  EXPECT_EQ(lsm_memtable_copy_range(nullptr, &mt, nullptr, 0, nullptr, 0, b),
            LSM_INVALID);
  EXPECT_EQ(lsm_memtable_copy_range(base, nullptr, nullptr, 0, nullptr, 0, b),
            LSM_INVALID);
  EXPECT_EQ(lsm_memtable_copy_range(base, &mt, nullptr, 0, nullptr, 0, nullptr),
            LSM_INVALID);
  lsm_batch_destroy(b);

  LsmMemtableIter it;
  lsm_memtable_seek(nullptr, &mt, nullptr, 0, &it);
  EXPECT_FALSE(lsm_memtable_iter_valid(&it));
  lsm_memtable_seek(base, nullptr, nullptr, 0, &it);
  EXPECT_FALSE(lsm_memtable_iter_valid(&it));
  lsm_memtable_seek(base, &mt, nullptr, 0, nullptr);
  EXPECT_FALSE(lsm_memtable_iter_valid(nullptr));
  lsm_memtable_iter_next(nullptr);
  lsm_memtable_iter_next(&it);
  const uint8_t* key = U8(k);
  size_t len = 5;
  lsm_memtable_iter_key(&it, &key, &len);
  EXPECT_EQ(key, nullptr);
  EXPECT_EQ(len, 0u);
  lsm_memtable_iter_key(nullptr, &key, &len);
  lsm_memtable_iter_key(&it, nullptr, nullptr);
}

TEST(ApiTest, MergeInvalidArguments) {
  LsmMerge* m = nullptr;
  EXPECT_EQ(lsm_merge_create(-1, 0, nullptr, 0, nullptr, 0, &m), LSM_INVALID);
  EXPECT_EQ(m, nullptr);
  EXPECT_EQ(lsm_merge_create(1 << 30, 0, nullptr, 0, nullptr, 0, &m),
            LSM_INVALID);
  EXPECT_EQ(lsm_merge_create(2, 0, nullptr, 0, nullptr, 0, nullptr),
            LSM_INVALID);
  lsm_merge_destroy(nullptr);
  EXPECT_EQ(lsm_merge_source_batch(nullptr, 0), nullptr);
  lsm_merge_source_ready(nullptr, 0);
  lsm_merge_source_done(nullptr, 0);
  const uint8_t* k;
  size_t len;
  int src;
  EXPECT_EQ(lsm_merge_next(nullptr, &k, &len, &src), LSM_INVALID);
  ASSERT_EQ(lsm_merge_create(2, 0, nullptr, 0, nullptr, 0, &m), LSM_OK);
  EXPECT_EQ(lsm_merge_source_batch(m, -1), nullptr);
  EXPECT_EQ(lsm_merge_source_batch(m, 2), nullptr);
  EXPECT_EQ(lsm_merge_next(m, nullptr, &len, &src), LSM_INVALID);
  EXPECT_EQ(lsm_merge_next(m, &k, nullptr, &src), LSM_INVALID);
  EXPECT_EQ(lsm_merge_next(m, &k, &len, nullptr), LSM_INVALID);
  int n = -1;
  EXPECT_EQ(lsm_merge_next_many(m, &k, &len, 0, &n, &src), LSM_INVALID);
  EXPECT_EQ(n, 0);
  EXPECT_EQ(lsm_merge_next_many(m, nullptr, &len, 1, &n, &src), LSM_INVALID);
  EXPECT_EQ(lsm_merge_next_many(m, &k, &len, 1, nullptr, &src), LSM_INVALID);
  EXPECT_EQ(lsm_merge_next_many(nullptr, &k, &len, 1, &n, &src), LSM_INVALID);
  lsm_merge_source_done(m, -3);
  EXPECT_EQ(lsm_merge_next(m, &k, &len, &src), LSM_INVALID);
  lsm_merge_destroy(m);
}

}  // namespace
