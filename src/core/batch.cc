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

uint8_t* Batch::AppendUninitialized(size_t len) {
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

LsmStatus Batch::AddDataPage(const uint8_t* content, size_t len) {
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

}  // namespace lsm
