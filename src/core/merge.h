// merge.h — merging iterator over n sources delivered as ascending batches.
//
// Yields the union of the sources in ascending order (descending when
// backward), each distinct key once, restricted to keys >= lo and within the
// prefix upper bound hi (see BeyondPrefixUpper).  Sources are kept in a binary
// heap ordered by their current key, so each key costs O(log n) comparisons.
//
// Protocol: Next() returns LSM_NEED_PAGE for every source whose batch is used
// up (initially all, in order 0..n-1); the caller refills SourceBatch(src) and
// calls SourceReady(src), or SourceDone(src).  The key of an LSM_OK stays in
// its source's batch, untouched until the next call to Next().  Calling
// SourceReady/SourceDone on a source that was not asked for is misuse: Next()
// then returns LSM_INVALID.
//
// Thread-safety: none.

#ifndef LSM_CORE_MERGE_H_
#define LSM_CORE_MERGE_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "batch.h"
#include "lsm_core.h"
#include "port.h"  // PostgreSQL firewall
#include "slice.h"

namespace lsm {

// Most sources one merge accepts (a guard against absurd arguments).
constexpr int kMaxMergeSources = 1 << 20;

class MergingIterator {
 public:
  // REQUIRES: nsources >= 0.  Bounds are copied.
  MergingIterator(int nsources, bool backward, const uint8_t* lo, size_t lolen,
                  const uint8_t* hi, size_t hilen);

  int nsources() const { return n_; }
  LsmBatch* SourceBatch(int src);
  void SourceReady(int src);
  void SourceDone(int src);
  LsmStatus Next(const uint8_t** key, size_t* len, int* need_src);
  // Decodes a run's data page into src's batch and marks it ready
  // (lsm_merge_feed_datapage).
  LsmStatus FeedDataPage(int src, const uint8_t* content, size_t len,
                         int* in_range);
  // The source of the key Next() last returned (-1 before the first and
  // after LSM_NEED_PAGE or LSM_END): lets the caller name the page it came
  // from when the key turns out to be malformed.
  int LastSource() const { return pending_; }

 private:
  enum class State : uint8_t { kNeed, kActive, kDone };

  struct Source {
    LsmBatch batch;
    size_t pos = 0;  // index of the current key in batch
    State state = State::kNeed;
  };

  Slice Current(int src) const {
    const Source& s = sources_[src];
    return s.batch.rep.Get(s.pos);
  }
  bool BeforeLo(const Slice& k) const {
    return has_lo_ && CompareKeys(k.data, k.size, lo_.data(), lo_.size()) < 0;
  }
  bool BeyondHi(const Slice& k) const {
    return has_hi_ && BeyondPrefixUpper(k.data, k.size, hi_.data(), hi_.size());
  }
  // Heap order: true if source a's key comes before source b's.
  bool Before(int a, int b) const {
    int c = CompareKeys(Current(a), Current(b));
    return backward_ ? c > 0 : c < 0;
  }
  void SiftDown(size_t i);
  void SiftUp(size_t i);
  void PopTop();
  // Moves the heap's top source past its current key.
  void AdvanceTop();

  const int n_;
  const bool backward_;
  bool has_lo_, has_hi_;
  std::vector<uint8_t> lo_, hi_;
  std::unique_ptr<Source[]> sources_;
  std::vector<int> heap_;
  std::vector<int> need_;  // sources to ask for, FIFO from need_head_
  size_t need_head_ = 0;
  int pending_ = -1;  // source of the last key returned, to advance
  bool has_last_ = false;
  std::vector<uint8_t> last_;  // last key returned, for de-duplication
  bool misuse_ = false;
};

}  // namespace lsm

// The C API's opaque merge handle (lsm_core.h).
struct LsmMerge {
  template <typename... Args>
  explicit LsmMerge(Args&&... args) : rep(std::forward<Args>(args)...) {}
  lsm::MergingIterator rep;
};

#endif  // LSM_CORE_MERGE_H_
