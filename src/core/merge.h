// merge.h — merging iterator over n sources delivered as ascending batches.
//
// Yields the union of the sources in ascending order (descending when
// backward), each distinct key once, restricted to keys >= lo and within the
// prefix upper bound hi (see BeyondPrefixUpper).  The source that yielded the
// last key stays out of the heap while its next key still comes first (one
// comparison with the heap's top; none with a single source, as after
// compact()), otherwise it replaces the top and sinks; so a key costs O(1)
// comparisons on runs from one source and O(log n) at worst.  Keys ascend
// strictly within a source, so the duplicate check (keys equal across
// sources) is made only when the yielding source changes, and a batch whose
// far end lies within the bounds is not checked against them key by key.
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
  // Next, then the current source's following keys while they stay first,
  // up to max in all (lsm_merge_next_many).  REQUIRES: max >= 1.
  LsmStatus NextMany(const uint8_t** keys, size_t* lens, int max, int* n,
                     int* need_src);
  // Decodes a run's data page into src's batch and marks it ready
  // (lsm_merge_feed_datapage).
  LsmStatus FeedDataPage(int src, const uint8_t* content, size_t len,
                         int* in_range);
  // Sources decode data pages lazily (Batch::SetLazy), in the scan's
  // direction; a piece that fails validation makes Next() return
  // LSM_CORRUPT, with LastSource() naming the source.
  void SetLazy(bool on);
  // The source of the key Next() last returned (-1 before the first and
  // after LSM_NEED_PAGE or LSM_END): lets the caller name the page it came
  // from when the key turns out to be malformed.
  int LastSource() const { return pending_ >= 0 ? pending_ : failed_src_; }

 private:
  enum class State : uint8_t { kNeed, kActive, kDone };

  struct Source {
    LsmBatch batch;
    size_t pos = 0;  // index of the current key in batch
    State state = State::kNeed;
    bool within = false;  // no key of the batch lies beyond the far bound
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
  // Puts a ready source at its first key on the near side of the bounds
  // (decoding further pieces of a lazy page as needed) and into the heap;
  // leaves it kNeed (nothing in range yet) or kDone.
  void Position(int src);
  // Decodes the next piece of src's lazy page; false if none or it failed.
  bool NextPieceOf(int src);
  void SiftDown(size_t i);
  void SiftUp(size_t i);
  void PopTop();
  // Moves the current source past its current key; it stays current while
  // its next key comes before every other source's.
  void AdvanceCurrent();

  const int n_;
  const bool backward_;
  bool has_lo_, has_hi_;
  std::vector<uint8_t> lo_, hi_;
  std::unique_ptr<Source[]> sources_;
  std::vector<int> heap_;   // active sources other than current_
  int current_ = -1;        // active source whose key comes first (-1: none)
  std::vector<int> need_;  // sources to ask for, FIFO from need_head_
  size_t need_head_ = 0;
  int pending_ = -1;  // source of the last key returned, to advance
  // The last key returned, for de-duplication: in its source's batch
  // (last_src_ >= 0), or copied into last_buf_ when that batch was used up.
  bool has_last_ = false;
  Slice last_;
  int last_src_ = -1;
  std::unique_ptr<uint8_t[]> last_buf_;  // LSM_MAX_KEY_SIZE bytes
  bool misuse_ = false;
  LsmStatus failed_ = LSM_OK;  // a lazy piece failed validation
  int failed_src_ = -1;
};

}  // namespace lsm

// The C API's opaque merge handle (lsm_core.h).
struct LsmMerge {
  template <typename... Args>
  explicit LsmMerge(Args&&... args) : rep(std::forward<Args>(args)...) {}
  lsm::MergingIterator rep;
};

#endif  // LSM_CORE_MERGE_H_
