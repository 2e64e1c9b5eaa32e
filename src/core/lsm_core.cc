// lsm_core.cc — the extern "C" API of lsm_core.h.
//
// Error-handling regime at the C/C++ boundary: every function is a thin
// wrapper that catches every exception.  Status-returning functions map
// std::bad_alloc to LSM_NO_MEMORY and anything else to LSM_INTERNAL; void,
// integer and pointer functions swallow exceptions (none of them can throw in
// practice) and leave their outputs in a safe state.  Invalid arguments (NULL
// handles, out-of-range indexes) give LSM_INVALID, or a no-op / 0 / NULL for
// functions without a status.

#include "api_guard.h"
#include "lsm_core.h"

#include <cstring>
#include <memory>
#include <new>
#include <utility>

#include "arena.h"
#include "batch.h"
#include "bloom.h"
#include "hash.h"
#include "memtable.h"
#include "merge.h"
#include "page_format.h"
#include "port.h"
#include "run_builder.h"

struct LsmRunBuilder {
  LsmRunBuilder(size_t cap, std::unique_ptr<lsm::BloomBuilder> filter)
      : rep(cap, std::move(filter)) {}
  lsm::RunBuilder rep;
};

extern "C" {

const char* lsm_status_message(LsmStatus s) noexcept {
  switch (s) {
    case LSM_OK:
      return "success";
    case LSM_END:
      return "no more entries";
    case LSM_NEED_PAGE:
      return "a merge source needs its next page";
    case LSM_PAGE_READY:
      return "finished pages are waiting";
    case LSM_NEED_CHUNK:
      return "the memtable needs another shared-memory chunk";
    case LSM_NO_MEMORY:
      return "out of memory";
    case LSM_CORRUPT:
      return "page content failed validation";
    case LSM_INVALID:
      return "invalid argument or misuse of the lsm core API";
    case LSM_TOO_LARGE:
      return "key or entries too large";
    case LSM_INTERNAL:
      return "internal error in the lsm core";
  }
  return "unknown lsm status";
}

// ---------------------------------------------------------------------------
// Batches

LsmStatus lsm_batch_create(LsmBatch** out) noexcept {
  LSM_API_TRY
  if (out == nullptr) return LSM_INVALID;
  *out = nullptr;
  *out = new LsmBatch;
  return LSM_OK;
  LSM_API_CATCH_STATUS
}

void lsm_batch_destroy(LsmBatch* b) noexcept {
  LSM_API_TRY
  delete b;
  LSM_API_CATCH_RETURN()
}

void lsm_batch_clear(LsmBatch* b) noexcept {
  LSM_API_TRY
  if (b != nullptr) b->rep.Clear();
  LSM_API_CATCH_RETURN()
}

LsmStatus lsm_batch_add_datapage(LsmBatch* b, const uint8_t* content,
                                 size_t len) noexcept {
  LSM_API_TRY
  if (b == nullptr) return LSM_INVALID;
  return b->rep.AddDataPage(content, len);  // NULL content: LSM_CORRUPT
  LSM_API_CATCH_STATUS
}

LsmStatus lsm_batch_add_datapage_range(LsmBatch* b, const uint8_t* content,
                                       size_t len, const uint8_t* lo,
                                       size_t lolen, const uint8_t* hi,
                                       size_t hilen) noexcept {
  LSM_API_TRY
  if (b == nullptr || (lo == nullptr && lolen > 0) ||
      (hi == nullptr && hilen > 0))
    return LSM_INVALID;
  return b->rep.AddDataPageRange(content, len, lo, lolen, hi, hilen);
  LSM_API_CATCH_STATUS
}

LsmStatus lsm_batch_add_key(LsmBatch* b, const uint8_t* key,
                            size_t len) noexcept {
  LSM_API_TRY
  if (b == nullptr || (key == nullptr && len > 0)) return LSM_INVALID;
  if (len > LSM_MAX_KEY_SIZE) return LSM_TOO_LARGE;
  b->rep.Add(key, len);
  return LSM_OK;
  LSM_API_CATCH_STATUS
}

size_t lsm_batch_count(const LsmBatch* b) noexcept {
  LSM_API_TRY
  return b == nullptr ? 0 : b->rep.size();
  LSM_API_CATCH_RETURN(0)
}

void lsm_batch_get(const LsmBatch* b, size_t i, const uint8_t** key,
                   size_t* len) noexcept {
  LSM_API_TRY
  if (key == nullptr || len == nullptr) return;
  if (b == nullptr || i >= b->rep.size()) {
    *key = nullptr;
    *len = 0;
    return;
  }
  lsm::Slice k = b->rep.Get(i);
  *key = k.data;
  *len = k.size;
  LSM_API_CATCH_RETURN()
}

// ---------------------------------------------------------------------------
// Page content formats

LsmStatus lsm_datapage_check(const uint8_t* content, size_t len) noexcept {
  LSM_API_TRY
  return lsm::CheckDataPage(content, len);
  LSM_API_CATCH_STATUS
}

LsmStatus lsm_datapage_build(const LsmBatch* b, const uint8_t* keep,
                             uint8_t* content, size_t cap,
                             size_t* len_out) noexcept {
  LSM_API_TRY
  if (b == nullptr || content == nullptr || len_out == nullptr)
    return LSM_INVALID;
  if (cap > lsm::kMaxContentCap) cap = lsm::kMaxContentCap;  // u16 offsets
  if (cap < lsm::kDataPageHeaderSize) return LSM_TOO_LARGE;
  const lsm::Batch& batch = b->rep;
  lsm::DataPageBuilder builder(cap);
  lsm::Slice prev;
  bool have_prev = false;
  for (size_t i = 0; i < batch.size(); i++) {
    if (keep != nullptr && keep[i] == 0) continue;
    lsm::Slice k = batch.Get(i);
    if (have_prev && lsm::CompareKeys(prev, k) >= 0) return LSM_INVALID;
    if (!builder.Add(k.data, k.size)) return LSM_TOO_LARGE;
    prev = k;
    have_prev = true;
  }
  size_t len = builder.Finish();
  std::memcpy(content, builder.buffer(), len);
  *len_out = len;
  return LSM_OK;
  LSM_API_CATCH_STATUS
}

LsmStatus lsm_runheader_parse(const uint8_t* content, size_t len,
                              LsmRunHeader* out) noexcept {
  LSM_API_TRY
  if (out == nullptr) return LSM_INVALID;
  if (content == nullptr) return LSM_CORRUPT;
  lsm::RunHeaderInfo info;
  size_t root_off;
  LsmStatus st = lsm::ParseRunHeader(content, len, &info, &root_off);
  if (st != LSM_OK) return st;
  out->nentries = info.nentries;
  out->ndata_pages = info.ndata_pages;
  out->npages = info.npages;
  out->height = info.height;
  out->min_key = info.min_key.data;
  out->min_key_len = info.min_key.size;
  out->max_key = info.max_key.data;
  out->max_key_len = info.max_key.size;
  return LSM_OK;
  LSM_API_CATCH_STATUS
}

LsmStatus lsm_fence_find(const uint8_t* content, size_t len, int is_header,
                         LsmFindMode mode, const uint8_t* target, size_t tlen,
                         uint32_t* child, int* child_is_data) noexcept {
  LSM_API_TRY
  if (child == nullptr || child_is_data == nullptr) return LSM_INVALID;
  if ((mode == LSM_FIND_LE || mode == LSM_FIND_LT) && target == nullptr &&
      tlen > 0)
    return LSM_INVALID;
  if (mode != LSM_FIND_FIRST && mode != LSM_FIND_LAST && mode != LSM_FIND_LE &&
      mode != LSM_FIND_LT)
    return LSM_INVALID;
  if (content == nullptr) return LSM_CORRUPT;
  bool is_data = false;
  LsmStatus st = lsm::FenceFind(content, len, is_header != 0, mode, target,
                                tlen, child, &is_data);
  if (st == LSM_OK) *child_is_data = is_data ? 1 : 0;
  return st;
  LSM_API_CATCH_STATUS
}

LsmStatus lsm_fence_entry(const uint8_t* content, size_t len, int is_header,
                          size_t i, size_t* n, uint32_t* level,
                          const uint8_t** key, size_t* klen,
                          uint32_t* child) noexcept {
  LSM_API_TRY
  if (n == nullptr || level == nullptr || key == nullptr || klen == nullptr ||
      child == nullptr)
    return LSM_INVALID;
  if (content == nullptr) return LSM_CORRUPT;
  lsm::Slice k;
  LsmStatus st =
      lsm::FenceEntryAt(content, len, is_header != 0, i, n, level, &k, child);
  if (st == LSM_OK) {
    *key = k.data;
    *klen = k.size;
  }
  return st;
  LSM_API_CATCH_STATUS
}

// ---------------------------------------------------------------------------
// Run builder

LsmStatus lsm_runbuilder_create(size_t content_cap, uint32_t bloom_bits_per_key,
                                uint64_t bloom_expected_keys,
                                LsmRunBuilder** out) noexcept {
  LSM_API_TRY
  if (out == nullptr) return LSM_INVALID;
  *out = nullptr;
  if (!lsm::RunBuilder::ValidCapacity(content_cap)) return LSM_INVALID;
  std::unique_ptr<lsm::BloomBuilder> filter;
  if (bloom_bits_per_key != 0) {
    const uint32_t k = lsm::BloomNumProbes(bloom_bits_per_key);
    if (k == 0) return LSM_INVALID;
    const uint64_t nblocks = lsm::BloomNumBlocks(
        bloom_expected_keys > 0 ? bloom_expected_keys : 1, bloom_bits_per_key);
    if (nblocks > lsm::kBloomMaxBlocks ||
        nblocks > SIZE_MAX / lsm::kBloomBlockBytes)
      return LSM_TOO_LARGE;
    filter.reset(new lsm::BloomBuilder(static_cast<uint32_t>(nblocks), k));
  }
  *out = new LsmRunBuilder(content_cap, std::move(filter));
  return LSM_OK;
  LSM_API_CATCH_STATUS
}

void lsm_runbuilder_destroy(LsmRunBuilder* b) noexcept {
  LSM_API_TRY
  delete b;
  LSM_API_CATCH_RETURN()
}

LsmStatus lsm_runbuilder_add(LsmRunBuilder* b, const uint8_t* key, size_t len,
                             size_t filter_prefix_len) noexcept {
  LSM_API_TRY
  if (b == nullptr) return LSM_INVALID;
  return b->rep.Add(key, len, filter_prefix_len);
  LSM_API_CATCH_STATUS
}

LsmStatus lsm_runbuilder_finish(LsmRunBuilder* b) noexcept {
  LSM_API_TRY
  if (b == nullptr) return LSM_INVALID;
  return b->rep.Finish();
  LSM_API_CATCH_STATUS
}

LsmStatus lsm_runbuilder_take_page(LsmRunBuilder* b, LsmPageOut* out) noexcept {
  LSM_API_TRY
  if (b == nullptr || out == nullptr) return LSM_INVALID;
  return b->rep.TakePage(out);
  LSM_API_CATCH_STATUS
}

uint64_t lsm_runbuilder_count(const LsmRunBuilder* b) noexcept {
  LSM_API_TRY
  return b == nullptr ? 0 : b->rep.count();
  LSM_API_CATCH_RETURN(0)
}

LsmStatus lsm_runbuilder_info(const LsmRunBuilder* b, LsmRunInfo* out) noexcept {
  LSM_API_TRY
  if (b == nullptr || out == nullptr) return LSM_INVALID;
  return b->rep.Info(out);
  LSM_API_CATCH_STATUS
}

// ---------------------------------------------------------------------------
// Arena

size_t lsm_arena_size(uint32_t nchunks, uint32_t chunk_size) noexcept {
  LSM_API_TRY
  return lsm::Arena::RegionSize(nchunks, chunk_size);
  LSM_API_CATCH_RETURN(0)
}

LsmStatus lsm_arena_init(void* base, uint32_t nchunks,
                         uint32_t chunk_size) noexcept {
  LSM_API_TRY
  return lsm::Arena::Init(base, nchunks, chunk_size);
  LSM_API_CATCH_STATUS
}

LsmStatus lsm_arena_alloc_chunk(void* base, uint32_t* chunk) noexcept {
  LSM_API_TRY
  return lsm::Arena::AllocChunk(base, chunk);
  LSM_API_CATCH_STATUS
}

LsmStatus lsm_arena_free_chunk(void* base, uint32_t chunk) noexcept {
  LSM_API_TRY
  if (base == nullptr) return LSM_INVALID;
  return lsm::Arena::FreeChunk(base, chunk);  // LSM_INVALID for a non-chunk
  LSM_API_CATCH_STATUS
}

uint32_t lsm_arena_free_chunks(const void* base) noexcept {
  LSM_API_TRY
  return lsm::Arena::FreeChunks(base);
  LSM_API_CATCH_RETURN(0)
}

uint32_t lsm_arena_chunk_size(const void* base) noexcept {
  LSM_API_TRY
  return lsm::Arena::ChunkSize(base);
  LSM_API_CATCH_RETURN(0)
}

// ---------------------------------------------------------------------------
// Memtable

void lsm_memtable_init(LsmMemtable* mt) noexcept {
  LSM_API_TRY
  if (mt != nullptr) lsm::Memtable::Init(mt);
  LSM_API_CATCH_RETURN()
}

LsmStatus lsm_memtable_insert(void* base, LsmMemtable* mt, const uint8_t* key,
                              size_t len) noexcept {
  LSM_API_TRY
  return lsm::Memtable::Insert(base, mt, key, len);
  LSM_API_CATCH_STATUS
}

LsmStatus lsm_memtable_insert_many(void* base, LsmMemtable* mt,
                                   const LsmKeyRef* keys, size_t n,
                                   size_t* consumed) noexcept {
  LSM_API_TRY
  if (consumed == nullptr) return LSM_INVALID;
  *consumed = 0;
  if (base == nullptr || mt == nullptr || (keys == nullptr && n > 0))
    return LSM_INVALID;
  return lsm::Memtable::InsertMany(base, mt, keys, n, consumed);
  LSM_API_CATCH_STATUS
}

LsmStatus lsm_memtable_insert_log(void* base, LsmMemtable* mt,
                                  const uint8_t* content, size_t len,
                                  size_t* pos) noexcept {
  LSM_API_TRY
  if (base == nullptr || mt == nullptr || pos == nullptr ||
      (content == nullptr && len > 0) || *pos > len)
    return LSM_INVALID;
  return lsm::Memtable::InsertLog(base, mt, content, len, pos);
  LSM_API_CATCH_STATUS
}

void lsm_memtable_add_chunk(void* base, LsmMemtable* mt,
                            uint32_t chunk) noexcept {
  LSM_API_TRY
  if (base != nullptr && mt != nullptr)
    lsm::Memtable::AddChunk(base, mt, chunk);  // ignores non-chunk offsets
  LSM_API_CATCH_RETURN()
}

void lsm_memtable_release(void* base, LsmMemtable* mt) noexcept {
  LSM_API_TRY
  if (base != nullptr && mt != nullptr) lsm::Memtable::Release(base, mt);
  LSM_API_CATCH_RETURN()
}

LsmStatus lsm_memtable_add_filter(void* base, LsmMemtable* mt, uint32_t suffix,
                                  const uint32_t* chunks, uint32_t n) noexcept {
  LSM_API_TRY
  if (base == nullptr || mt == nullptr || chunks == nullptr) return LSM_INVALID;
  return lsm::Memtable::AddFilter(base, mt, suffix, chunks, n);
  LSM_API_CATCH_STATUS
}

uint32_t lsm_memtable_filter_chunks(const void* base, const LsmMemtable* mt) noexcept {
  LSM_API_TRY
  if (base == nullptr || mt == nullptr) return 0;
  return lsm::Memtable::FilterChunks(base, mt);
  LSM_API_CATCH_RETURN(0)
}

int lsm_memtable_may_contain(const void* base, const LsmMemtable* mt,
                             const uint8_t* prefix, size_t len) noexcept {
  LSM_API_TRY
  if (base == nullptr || mt == nullptr || (prefix == nullptr && len > 0))
    return 1;
  return lsm::Memtable::MayContain(base, mt, prefix, len) ? 1 : 0;
  LSM_API_CATCH_RETURN(1)
}

uint64_t lsm_memtable_memory(const void* base, const LsmMemtable* mt) noexcept {
  LSM_API_TRY
  if (base == nullptr || mt == nullptr) return 0;
  return lsm::Memtable::Memory(base, mt);
  LSM_API_CATCH_RETURN(0)
}

LsmStatus lsm_memtable_copy_range(const void* base, const LsmMemtable* mt,
                                  const uint8_t* lo, size_t lolen,
                                  const uint8_t* hi, size_t hilen,
                                  LsmBatch* b) noexcept {
  LSM_API_TRY
  if (base == nullptr || mt == nullptr || b == nullptr) return LSM_INVALID;
  return lsm::Memtable::CopyRange(base, mt, lo, lolen, hi, hilen, &b->rep);
  LSM_API_CATCH_STATUS
}

LsmStatus lsm_memtable_copy_chunk(const void* base, const LsmMemtable* mt,
                                  int backward, const uint8_t* lo, size_t lolen,
                                  const uint8_t* hi, size_t hilen,
                                  const uint8_t* resume, size_t resumelen,
                                  size_t max, LsmBatch* b, int* more) noexcept {
  LSM_API_TRY
  if (base == nullptr || mt == nullptr || b == nullptr || more == nullptr)
    return LSM_INVALID;
  return lsm::Memtable::CopyChunk(base, mt, backward != 0, lo, lolen, hi, hilen,
                                  resume, resumelen, max, &b->rep, more);
  LSM_API_CATCH_STATUS
}

void lsm_memtable_seek(const void* base, const LsmMemtable* mt,
                       const uint8_t* target, size_t tlen,
                       LsmMemtableIter* it) noexcept {
  LSM_API_TRY
  if (it == nullptr) return;
  it->base = base;
  it->node = 0;
  if (base == nullptr || mt == nullptr) return;
  it->node = lsm::Memtable::Seek(base, mt, target, tlen);
  LSM_API_CATCH_RETURN()
}

int lsm_memtable_iter_valid(const LsmMemtableIter* it) noexcept {
  LSM_API_TRY
  return it != nullptr && it->base != nullptr && it->node != 0;
  LSM_API_CATCH_RETURN(0)
}

void lsm_memtable_iter_next(LsmMemtableIter* it) noexcept {
  LSM_API_TRY
  if (lsm_memtable_iter_valid(it))
    it->node = lsm::Memtable::Next(it->base, it->node);
  LSM_API_CATCH_RETURN()
}

void lsm_memtable_iter_key(const LsmMemtableIter* it, const uint8_t** key,
                           size_t* len) noexcept {
  LSM_API_TRY
  if (key == nullptr || len == nullptr) return;
  if (!lsm_memtable_iter_valid(it)) {
    *key = nullptr;
    *len = 0;
    return;
  }
  lsm::Slice k = lsm::Memtable::Key(it->base, it->node);
  *key = k.data;
  *len = k.size;
  LSM_API_CATCH_RETURN()
}

// ---------------------------------------------------------------------------
// Merging iterator

LsmStatus lsm_merge_create(int nsources, int backward, const uint8_t* lo,
                           size_t lolen, const uint8_t* hi, size_t hilen,
                           LsmMerge** out) noexcept {
  LSM_API_TRY
  if (out == nullptr) return LSM_INVALID;
  *out = nullptr;
  if (nsources < 0 || nsources > lsm::kMaxMergeSources) return LSM_INVALID;
  *out = new LsmMerge(nsources, backward != 0, lo, lolen, hi, hilen);
  return LSM_OK;
  LSM_API_CATCH_STATUS
}

void lsm_merge_destroy(LsmMerge* m) noexcept {
  LSM_API_TRY
  delete m;
  LSM_API_CATCH_RETURN()
}

LsmBatch* lsm_merge_source_batch(LsmMerge* m, int src) noexcept {
  LSM_API_TRY
  return m == nullptr ? nullptr : m->rep.SourceBatch(src);
  LSM_API_CATCH_RETURN(nullptr)
}

void lsm_merge_source_ready(LsmMerge* m, int src) noexcept {
  LSM_API_TRY
  if (m != nullptr) m->rep.SourceReady(src);
  LSM_API_CATCH_RETURN()
}

void lsm_merge_source_done(LsmMerge* m, int src) noexcept {
  LSM_API_TRY
  if (m != nullptr) m->rep.SourceDone(src);
  LSM_API_CATCH_RETURN()
}

LsmStatus lsm_merge_next(LsmMerge* m, const uint8_t** key, size_t* len,
                         int* need_src) noexcept {
  LSM_API_TRY
  if (m == nullptr || key == nullptr || len == nullptr || need_src == nullptr)
    return LSM_INVALID;
  return m->rep.Next(key, len, need_src);
  LSM_API_CATCH_STATUS
}

LsmStatus lsm_merge_next_many(LsmMerge* m, const uint8_t** keys, size_t* lens,
                              int max, int* n, int* need_src) noexcept {
  LSM_API_TRY
  if (n != nullptr) *n = 0;
  if (m == nullptr || keys == nullptr || lens == nullptr || n == nullptr ||
      need_src == nullptr || max < 1)
    return LSM_INVALID;
  return m->rep.NextMany(keys, lens, max, n, need_src);
  LSM_API_CATCH_STATUS
}

LsmStatus lsm_merge_feed_datapage(LsmMerge* m, int src, const uint8_t* content,
                                  size_t len, int* in_range) noexcept {
  LSM_API_TRY
  if (m == nullptr) return LSM_INVALID;
  return m->rep.FeedDataPage(src, content, len, in_range);
  LSM_API_CATCH_STATUS
}

void lsm_merge_set_lazy(LsmMerge* m, int on) noexcept {
  if (m != nullptr) m->rep.SetLazy(on != 0);
}

int lsm_merge_last_source(const LsmMerge* m) noexcept {
  return m != nullptr ? m->rep.LastSource() : -1;
}

// ---------------------------------------------------------------------------
// Hashing

uint64_t lsm_hash64(const void* data, size_t len, uint64_t seed) noexcept {
  LSM_API_TRY
  return lsm::Hash64(data, len, seed);
  LSM_API_CATCH_RETURN(0)
}

// ---------------------------------------------------------------------------
// Process start-up

namespace {
// The objects pass through here, so the compiler cannot drop an allocation
// it sees freed unused.
void* volatile bind_sink = nullptr;
}  // namespace

void lsm_core_bind_runtime(void) noexcept {
  LSM_API_TRY
  // The operators one by one: plain, array, sized and aligned forms.
  uint64_t* one = new uint64_t(0);
  bind_sink = one;
  delete one;
  uint8_t* arr = new uint8_t[64];
  bind_sink = arr;
  delete[] arr;
  void* aligned = ::operator new[](64, std::align_val_t(64));
  bind_sink = aligned;
  ::operator delete[](aligned, std::align_val_t(64));
  // And as the core's objects use them: a batch holding a key (its block),
  // a merge of two sources (its source array), both destroyed.
  auto batch = std::make_unique<LsmBatch>();
  const uint8_t key[1] = {0};
  batch->rep.Add(key, sizeof(key));
  bind_sink = batch.get();
  auto merge = std::make_unique<LsmMerge>(2, false, nullptr, 0, nullptr, 0);
  bind_sink = merge.get();
  merge.reset();
  batch.reset();
  bind_sink = nullptr;
  LSM_API_CATCH_RETURN()
}

}  // extern "C"
