// batch.cc — key list with stable storage.

#include "batch.h"

#include <cstring>

#include "page_format.h"
#include "port.h"

namespace lsm {

uint8_t* Batch::Allocate(size_t len) {
  if (cur_block_ < blocks_.size() && used_ + len <= kBlockSize) {
    uint8_t* p = blocks_[cur_block_].get() + used_;
    used_ += len;
    return p;
  }
  // Move to the next block (reusing one kept by Clear when there is one).
  size_t next = cur_block_ < blocks_.size() ? cur_block_ + 1 : blocks_.size();
  if (next == blocks_.size()) {
    blocks_.emplace_back(new uint8_t[kBlockSize]);
  }
  cur_block_ = next;
  used_ = len;
  return blocks_[cur_block_].get();
}

uint8_t* Batch::AppendSlow(size_t len) {
  // Grow geometrically (reserve(size + 1) would reallocate on every key),
  // and before allocating storage so a throw leaves the batch unchanged.
  if (entries_.size() == entries_.capacity())
    entries_.reserve(entries_.capacity() < 64 ? 64 : entries_.capacity() * 2);
  uint8_t* p = Allocate(len);
  entries_.push_back(Entry{p, len});
  return p;
}

void Batch::Add(const uint8_t* key, size_t len) {
  uint8_t* p = AppendUninitialized(len);
  if (len > 0) std::memcpy(p, key, len);
}

namespace {

// Decode sink that assembles each key directly in the batch's storage.
class BatchSink {
 public:
  explicit BatchSink(Batch* b) : b_(b) {}
  Slice Append(const Slice& prev, size_t shared, const uint8_t* unshared,
               size_t ulen) {
    uint8_t* p = b_->AppendUninitialized(shared + ulen);
    if (shared > 0) std::memcpy(p, prev.data, shared);
    if (ulen > 0) std::memcpy(p + shared, unshared, ulen);
    return Slice(p, shared + ulen);
  }

 private:
  Batch* b_;
};

}  // namespace

LsmStatus Batch::AddDataPage(const uint8_t* content, size_t len,
                             bool allow_lazy) {
  if (lazy_ != Lazy::kOff && allow_lazy && entries_.empty()) {
    size_t nentries, nrestarts;
    if (DataPageRestarts(content, len, &nentries, &nrestarts) == nullptr)
      return LSM_CORRUPT;
    if (len > page_cap_) {
      page_.reset(new uint8_t[len]);
      page_cap_ = len;
    }
    if (edge_ == nullptr) edge_.reset(new uint8_t[LSM_MAX_KEY_SIZE]);
    std::memcpy(page_.get(), content, len);
    page_len_ = len;
    page_entries_ = nentries;
    page_groups_ = nrestarts;
    groups_left_ = nrestarts;
    piece_ = 1;
    edge_len_ = 0;
    if (nrestarts == 0) return LSM_OK;
    LsmStatus st = NextPiece();
    if (st != LSM_OK) Clear();
    return st;
  }
  Mark m = GetMark();
  BatchSink sink(this);
  LsmStatus st = ParseDataPage(content, len, &sink);
  if (st != LSM_OK) Rewind(m);
  return st;
}

LsmStatus Batch::AddDataPageRange(const uint8_t* content, size_t len,
                                  const uint8_t* lo, size_t lolen,
                                  const uint8_t* hi, size_t hilen) {
  Mark m = GetMark();
  BatchSink sink(this);
  LsmStatus st = ParseDataPageRange(content, len, lo, lolen, hi, hilen, &sink);
  if (st != LSM_OK) Rewind(m);
  return st;
}

LsmStatus Batch::NextPiece() {
  ClearKeys();
  const size_t n = piece_ < groups_left_ ? piece_ : groups_left_;
  const bool backward = lazy_ == Lazy::kBackward;
  const size_t g0 = backward ? groups_left_ - n : page_groups_ - groups_left_;
  const bool first = groups_left_ == page_groups_;
  groups_left_ -= n;
  piece_ *= 2;
  LsmStatus st = DecodeGroups(g0, g0 + n);
  if (st == LSM_OK && !entries_.empty()) {
    // across pieces: ascending from (forward) or to (backward) the edge key
    const Entry& near = backward ? entries_.back() : entries_.front();
    const Entry& far = backward ? entries_.front() : entries_.back();
    if (!first) {
      int c = CompareKeys(near.data, near.len, edge_.get(), edge_len_);
      if (backward ? c >= 0 : c <= 0) st = LSM_CORRUPT;
    }
    std::memcpy(edge_.get(), far.data, far.len);
    edge_len_ = far.len;
  }
  if (st != LSM_OK) {
    ClearKeys();
    groups_left_ = 0;
  }
  return st;
}

LsmStatus Batch::DecodeGroups(size_t g0, size_t g1) {
  const uint8_t* const content = page_.get();
  const size_t len = page_len_;
  const uint8_t* const restarts = content + len - 2 * page_groups_;
  auto restart_at = [&](size_t g) -> const uint8_t* {
    if (g == page_groups_) return restarts;
    size_t off = DecodeFixed16(restarts + 2 * g);
    if (off < kDataPageHeaderSize || off >= len - 2 * page_groups_)
      return nullptr;
    return content + off;
  };
  const uint8_t* p = restart_at(g0);
  if (p == nullptr) return LSM_CORRUPT;
  const size_t end_entry =
      g1 * kRestartInterval < page_entries_ ? g1 * kRestartInterval : page_entries_;
  BatchSink sink(this);
  Slice prev;
  for (size_t i = g0 * kRestartInterval; i < end_entry; i++) {
    const bool restart = i % kRestartInterval == 0;
    if (restart && p != restart_at(i / kRestartInterval)) return LSM_CORRUPT;
    uint32_t shared, ulen;
    p = DecodeDataEntry(p, restarts, &shared, &ulen);
    if (p == nullptr) return LSM_CORRUPT;
    if (shared > prev.size || (restart && shared != 0)) return LSM_CORRUPT;
    if (i > g0 * kRestartInterval && !AscendsAfter(prev, shared, p, ulen))
      return LSM_CORRUPT;
    prev = sink.Append(prev, shared, p, ulen);
    p += ulen;
  }
  if (p != restart_at(g1)) return LSM_CORRUPT;
  return LSM_OK;
}

}  // namespace lsm
