// run_builder.h — streams sorted keys into the pages of one sorted run.
//
// Data pages are emitted as soon as they are full (relative pages 1..nd, in
// order).  One fence entry per data page (its first key) is kept in memory;
// Finish() builds the fence tree bottom-up: while a level's entries do not fit
// in what remains of the header page, they are packed into fence pages
// (numbered after the data pages, level 1 first) and the first key of each
// fence page becomes an entry of the level above.  The top level is the
// header's root block; the header (page 0) follows the fence pages.  If
// the run has a bloom filter, the builder owns it: every key's filter prefix
// is hashed into it as the key is added, and its pages (numbered from the
// header's npages on) are encoded one at a time as they are taken, after the
// header.  Memory is bounded by one data page, the fence entries and the
// filter's bit array.
//
// Thread-safety: none.

#ifndef LSM_CORE_RUN_BUILDER_H_
#define LSM_CORE_RUN_BUILDER_H_

#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <vector>

#include "bloom.h"
#include "lsm_core.h"
#include "page_format.h"
#include "port.h"  // PostgreSQL firewall

namespace lsm {

class RunBuilder {
 public:
  // REQUIRES: ValidCapacity(content_cap).  filter: the run's bloom filter
  // (nullptr: none), sized by the caller.
  RunBuilder(size_t content_cap, std::unique_ptr<BloomBuilder> filter);

  static bool ValidCapacity(size_t cap) {
    return cap >= kMinContentCap && cap <= kMaxContentCap;
  }

  // filter_prefix_len: bytes of key the filter hashes (ignored without one).
  LsmStatus Add(const uint8_t* key, size_t len, size_t filter_prefix_len);
  LsmStatus Finish();
  LsmStatus TakePage(LsmPageOut* out);
  uint64_t count() const { return count_; }
  // LSM_INVALID before Finish().
  LsmStatus Info(LsmRunInfo* out) const;

 private:
  struct Page {
    uint32_t rel_page;
    LsmPageKind kind;
    std::vector<uint8_t> content;
  };

  // Queues a page holding content[0..len).
  void Emit(uint32_t rel_page, LsmPageKind kind, const uint8_t* content,
            size_t len);
  void FlushDataPage();

  const size_t cap_;
  DataPageBuilder data_;
  FenceList fences_;  // level-1 entries: (first key of data page i, i)
  std::vector<uint8_t> first_key_, last_key_;
  uint64_t count_ = 0;
  uint32_t ndata_ = 0;
  bool finished_ = false;
  bool broken_ = false;  // an exception left the builder half-updated
  std::deque<Page> ready_;
  Page out_;  // the page last returned by TakePage
  std::vector<std::vector<uint8_t>> pool_;  // recycled page buffers

  // The run's filter (nullptr: none).  Equal adjacent hashes (sorted keys
  // with equal prefixes) are added once.
  std::unique_ptr<BloomBuilder> filter_;
  bool have_hash_ = false;
  uint64_t last_hash_ = 0;
  uint32_t npages_ = 0;        // pages before the filter (header's npages)
  uint32_t filter_pages_ = 0;  // filter pages, emitted after the header
  uint32_t filter_next_ = 0;   // next filter page to encode
};

}  // namespace lsm

#endif  // LSM_CORE_RUN_BUILDER_H_
