// merge.cc — heap-based merging iterator with bounds and de-duplication.

#include "merge.h"

#include <cstring>
#include <utility>

#include "port.h"

namespace lsm {

MergingIterator::MergingIterator(int nsources, bool backward, const uint8_t* lo,
                                 size_t lolen, const uint8_t* hi, size_t hilen)
    : n_(nsources),
      backward_(backward),
      has_lo_(lo != nullptr),
      has_hi_(hi != nullptr),
      sources_(new Source[nsources > 0 ? nsources : 1]) {
  if (has_lo_) lo_.assign(lo, lo + lolen);
  if (has_hi_) hi_.assign(hi, hi + hilen);
  heap_.reserve(n_);
  need_.reserve(n_ + 1);
  for (int i = 0; i < n_; i++) need_.push_back(i);
  last_buf_.reset(new uint8_t[LSM_MAX_KEY_SIZE]);
}

LsmBatch* MergingIterator::SourceBatch(int src) {
  if (src < 0 || src >= n_) return nullptr;
  return &sources_[src].batch;
}

void MergingIterator::SetLazy(bool on) {
  const Batch::Lazy mode = !on ? Batch::Lazy::kOff
                               : backward_ ? Batch::Lazy::kBackward
                                           : Batch::Lazy::kForward;
  for (int i = 0; i < n_; i++) sources_[i].batch.rep.SetLazy(mode);
}

void MergingIterator::SourceReady(int src) {
  if (src < 0 || src >= n_ || sources_[src].state != State::kNeed) {
    misuse_ = true;
    return;
  }
  Position(src);
}

bool MergingIterator::NextPieceOf(int src) {
  Batch& b = sources_[src].batch.rep;
  if (!b.HasMorePieces()) return false;
  LsmStatus st = b.NextPiece();
  if (st != LSM_OK) {
    failed_ = st;
    failed_src_ = src;
    sources_[src].state = State::kDone;
    return false;
  }
  return true;
}

void MergingIterator::Position(int src) {
  Source& s = sources_[src];
  const Batch& b = s.batch.rep;
again:
  const size_t count = b.size();
  // Binary search for the first key not on the near side of the scan.
  size_t lo = 0, hi = count;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    Slice k = b.Get(mid);
    bool near_side = backward_ ? !BeyondHi(k) : BeforeLo(k);
    if (near_side)
      lo = mid + 1;
    else
      hi = mid;
  }
  if (!backward_) {
    if (lo == count) {
      // Nothing >= lo here: ask again, unless the batch also reached beyond
      // hi (an empty range), which no later key can undo.
      if (count > 0 && BeyondHi(b.Get(count - 1))) s.state = State::kDone;
      else if (NextPieceOf(src)) goto again;
      return;
    }
    s.pos = lo;
    if (BeyondHi(b.Get(s.pos))) {
      s.state = State::kDone;
      return;
    }
  } else {
    if (lo == 0) {
      // Everything is beyond hi: ask again, unless the batch also reached
      // below lo.
      if (count > 0 && BeforeLo(b.Get(0))) s.state = State::kDone;
      else if (NextPieceOf(src)) goto again;
      return;
    }
    s.pos = lo - 1;
    if (BeforeLo(b.Get(s.pos))) {
      s.state = State::kDone;
      return;
    }
  }
  // The batch's far end within the bounds: so is every key before it.
  s.within = backward_ ? !BeforeLo(b.Get(0)) : !BeyondHi(b.Get(count - 1));
  s.state = State::kActive;
  heap_.push_back(src);
  SiftUp(heap_.size() - 1);
}

LsmStatus MergingIterator::FeedDataPage(int src, const uint8_t* content,
                                        size_t len, int* in_range) {
  if (src < 0 || src >= n_ || sources_[src].state != State::kNeed)
    return LSM_INVALID;
  Batch& b = sources_[src].batch.rep;
  b.Clear();
  // A forward scan decodes only what it needs of the page (point lookups);
  // otherwise a lazy source decodes its first piece (SetLazy), unless the
  // caller asks whether the page holds a key in range.
  LsmStatus st =
      !backward_ && (has_lo_ || has_hi_)
          ? b.AddDataPageRange(content, len, has_lo_ ? lo_.data() : nullptr,
                               lo_.size(), has_hi_ ? hi_.data() : nullptr,
                               hi_.size())
          : b.AddDataPage(content, len, in_range == nullptr);
  if (st != LSM_OK) return st;
  if (in_range != nullptr) {
    *in_range = 0;
    for (size_t i = 0; i < b.size(); i++) {
      Slice k = b.Get(i);
      if (!BeforeLo(k) && !BeyondHi(k)) {
        *in_range = 1;
        break;
      }
    }
  }
  SourceReady(src);
  return LSM_OK;
}

void MergingIterator::SourceDone(int src) {
  if (src < 0 || src >= n_ || sources_[src].state == State::kActive) {
    misuse_ = true;
    return;
  }
  sources_[src].state = State::kDone;
}

void MergingIterator::SiftDown(size_t i) {
  const size_t n = heap_.size();
  int x = heap_[i];
  for (;;) {
    size_t c = 2 * i + 1;
    if (c >= n) break;
    if (c + 1 < n && Before(heap_[c + 1], heap_[c])) c++;
    if (!Before(heap_[c], x)) break;
    heap_[i] = heap_[c];
    i = c;
  }
  heap_[i] = x;
}

void MergingIterator::SiftUp(size_t i) {
  int x = heap_[i];
  while (i > 0) {
    size_t p = (i - 1) / 2;
    if (!Before(x, heap_[p])) break;
    heap_[i] = heap_[p];
    i = p;
  }
  heap_[i] = x;
}

void MergingIterator::PopTop() {
  heap_[0] = heap_.back();
  heap_.pop_back();
  if (!heap_.empty()) SiftDown(0);
}

void MergingIterator::AdvanceCurrent() {
  const int src = current_;
  Source& s = sources_[src];
  bool exhausted;
  if (!backward_) {
    exhausted = ++s.pos >= s.batch.rep.size();
  } else {
    exhausted = s.pos == 0;
    if (!exhausted) s.pos--;
  }
  if (exhausted) {
    // The caller refills the batch next: keep the last key out of it.
    if (last_src_ == src) {
      std::memcpy(last_buf_.get(), last_.data, last_.size);
      last_.data = last_buf_.get();
      last_src_ = -1;
    }
    s.state = State::kNeed;
    current_ = -1;
    // the rest of a lazy page before the caller's next batch
    if (NextPieceOf(src)) {
      Position(src);
      if (s.state == State::kNeed) need_.push_back(src);
      return;
    }
    if (s.state == State::kNeed) need_.push_back(src);
    return;
  }
  if (!s.within) {
    Slice k = Current(src);
    if (backward_ ? BeforeLo(k) : BeyondHi(k)) {
      s.state = State::kDone;  // past the far bound: never asked again
      current_ = -1;
      return;
    }
  }
  // Still first?  Otherwise it takes the heap top's place and sinks.
  if (!heap_.empty() && !Before(src, heap_[0])) {
    current_ = heap_[0];
    heap_[0] = src;
    SiftDown(0);
  }
}

LsmStatus MergingIterator::Next(const uint8_t** key, size_t* len,
                                int* need_src) {
  if (misuse_) return LSM_INVALID;
  if (failed_ != LSM_OK) return failed_;
  if (pending_ >= 0) {
    // The caller could not have touched the current source since we
    // returned its key (misuse would have been flagged).
    if (current_ != pending_) return LSM_INTERNAL;
    pending_ = -1;
    AdvanceCurrent();
  }
  for (;;) {
    if (failed_ != LSM_OK) return failed_;
    if (current_ < 0) {
      while (need_head_ < need_.size()) {
        int src = need_[need_head_];
        if (sources_[src].state == State::kNeed) {
          *need_src = src;
          return LSM_NEED_PAGE;
        }
        need_head_++;
      }
      need_.clear();
      need_head_ = 0;
      if (heap_.empty()) return LSM_END;
      current_ = heap_[0];
      PopTop();
    }
    const int cur = current_;
    Slice k = Current(cur);
    // Keys ascend strictly within a source: only another source can repeat
    // the last key.
    if (has_last_ && cur != last_src_ &&
        KeysEqual(k.data, k.size, last_.data, last_.size)) {
      AdvanceCurrent();  // the same key from another source
      continue;
    }
    last_ = k;
    last_src_ = cur;
    has_last_ = true;
    pending_ = cur;
    *key = k.data;
    *len = k.size;
    return LSM_OK;
  }
}

LsmStatus MergingIterator::NextMany(const uint8_t** keys, size_t* lens,
                                    int max, int* n, int* need_src) {
  *n = 0;
  LsmStatus st = Next(&keys[0], &lens[0], need_src);
  if (st != LSM_OK) return st;
  int got = 1;
  // Next left the key's source current at it (pending_): take its following
  // keys while they are in its batch, within the far bound, and strictly
  // before the heap top's key (a tie goes through Next, which de-duplicates).
  Source& s = sources_[current_];
  const Batch& b = s.batch.rep;
  const bool single = heap_.empty();
  const Slice top = single ? Slice() : Current(heap_[0]);
  while (got < max) {
    size_t pos;
    if (!backward_) {
      if (s.pos + 1 >= b.size()) break;
      pos = s.pos + 1;
    } else {
      if (s.pos == 0) break;
      pos = s.pos - 1;
    }
    const Slice k = b.Get(pos);
    if (!s.within && (backward_ ? BeforeLo(k) : BeyondHi(k))) break;
    if (!single) {
      const int c = CompareKeys(k, top);
      if (backward_ ? c <= 0 : c >= 0) break;
    }
    s.pos = pos;
    last_ = k;
    keys[got] = k.data;
    lens[got] = k.size;
    got++;
  }
  *n = got;
  return LSM_OK;
}

}  // namespace lsm
