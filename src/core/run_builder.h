// run_builder.h — streams sorted keys into the pages of one sorted run.
//
// Data pages are emitted as soon as they are full (relative pages 1..nd, in
// order).  One fence entry per data page (its first key) is kept in memory;
// Finish() builds the fence tree bottom-up: while a level's entries do not fit
// in what remains of the header page, they are packed into fence pages
// (numbered after the data pages, level 1 first) and the first key of each
// fence page becomes an entry of the level above.  The top level is the
// header's root block; the header (page 0) is emitted last.  Memory is
// bounded by one data page plus the fence entries.
//
// Thread-safety: none.

#ifndef LSM_CORE_RUN_BUILDER_H_
#define LSM_CORE_RUN_BUILDER_H_

#include <cstddef>
#include <cstdint>
#include <deque>
#include <vector>

#include "lsm_core.h"
#include "page_format.h"
#include "port.h"  // PostgreSQL firewall

namespace lsm {

class RunBuilder {
 public:
  // REQUIRES: ValidCapacity(content_cap).
  explicit RunBuilder(size_t content_cap);

  static bool ValidCapacity(size_t cap) {
    return cap >= kMinContentCap && cap <= kMaxContentCap;
  }

  LsmStatus Add(const uint8_t* key, size_t len);
  LsmStatus Finish();
  LsmStatus TakePage(LsmPageOut* out);
  uint64_t count() const { return count_; }

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
};

}  // namespace lsm

#endif  // LSM_CORE_RUN_BUILDER_H_
