// run_builder.cc — streaming sorted-run writer.

#include "run_builder.h"

#include <cstring>
#include <utility>

#include "hash.h"
#include "port.h"

namespace lsm {

RunBuilder::RunBuilder(size_t content_cap, std::unique_ptr<BloomBuilder> filter)
    : cap_(content_cap), data_(content_cap), filter_(std::move(filter)) {
  first_key_.reserve(LSM_MAX_KEY_SIZE);
  last_key_.reserve(LSM_MAX_KEY_SIZE);
}

void RunBuilder::Emit(uint32_t rel_page, LsmPageKind kind,
                      const uint8_t* content, size_t len) {
  std::vector<uint8_t> buf;
  if (!pool_.empty()) {
    buf = std::move(pool_.back());
    pool_.pop_back();
  }
  buf.assign(content, content + len);
  ready_.push_back(Page{rel_page, kind, std::move(buf)});
}

void RunBuilder::FlushDataPage() {
  size_t len = data_.Finish();
  Emit(++ndata_, LSM_PAGE_DATA, data_.buffer(), len);
  data_.Reset();
}

LsmStatus RunBuilder::Add(const uint8_t* key, size_t len,
                          size_t filter_prefix_len) {
  if (finished_ || broken_ || (key == nullptr && len > 0)) return LSM_INVALID;
  if (filter_ && filter_prefix_len > len) return LSM_INVALID;
  if (len > LSM_MAX_KEY_SIZE) return LSM_TOO_LARGE;
  if (count_ > 0 &&
      CompareKeys(key, len, last_key_.data(), last_key_.size()) <= 0)
    return LSM_INVALID;
  broken_ = true;
  if (!data_.Add(key, len)) {
    FlushDataPage();
    if (!data_.Add(key, len)) return LSM_INTERNAL;  // cap below minimum
  }
  if (data_.count() == 1) fences_.Add(key, len, ndata_ + 1);
  if (count_ == 0) first_key_.assign(key, key + len);
  last_key_.assign(key, key + len);
  count_++;
  if (filter_) {
    const uint64_t h = Hash64(key, filter_prefix_len, LSM_BLOOM_HASH_SEED);
    if (!have_hash_ || h != last_hash_) filter_->Add(h);
    have_hash_ = true;
    last_hash_ = h;
  }
  broken_ = false;
  return ready_.empty() ? LSM_OK : LSM_PAGE_READY;
}

LsmStatus RunBuilder::Finish() {
  if (finished_ || broken_ || count_ == 0) return LSM_INVALID;
  broken_ = true;
  if (!data_.empty()) FlushDataPage();

  const size_t prefix =
      RunHeaderPrefixSize(first_key_.size(), last_key_.size());
  std::vector<uint8_t> page(cap_);
  FenceList level_storage[2];
  const FenceList* level = &fences_;
  uint32_t height = 0;
  uint32_t next_rel = ndata_ + 1;
  while (FenceBlockSize(*level, 0, level->size()) > cap_ - prefix) {
    // Pack this level into fence pages of level height + 1.
    FenceList* up = &level_storage[height % 2];
    up->Clear();
    size_t begin = 0;
    while (begin < level->size()) {
      size_t end = begin;
      size_t size = kFencePageHeaderSize + 2;
      while (end < level->size() &&
             size + FenceEntrySize(level->key(end).size) <= cap_) {
        size += FenceEntrySize(level->key(end).size);
        end++;
      }
      if (end == begin) return LSM_INTERNAL;  // cap below minimum
      EncodeFixed32(page.data(), kFenceMagic);
      EncodeFixed16(page.data() + 4, kFormatVersion);
      EncodeFixed16(page.data() + 6, static_cast<uint16_t>(height + 1));
      size_t len = kFencePageHeaderSize +
                   EncodeFenceBlock(*level, begin, end,
                                    page.data() + kFencePageHeaderSize);
      Slice first = level->key(begin);
      up->Add(first.data, first.size, next_rel);
      Emit(next_rel++, LSM_PAGE_FENCE, page.data(), len);
      begin = end;
    }
    level = up;
    height++;
  }

  RunHeaderInfo info;
  info.nentries = count_;
  info.ndata_pages = ndata_;
  info.npages = next_rel;
  info.height = height;
  info.min_key = Slice(first_key_.data(), first_key_.size());
  info.max_key = Slice(last_key_.data(), last_key_.size());
  size_t len = EncodeRunHeaderPrefix(info, page.data());
  len += EncodeFenceBlock(*level, 0, level->size(), page.data() + len);
  Emit(0, LSM_PAGE_HEADER, page.data(), len);
  npages_ = next_rel;
  if (filter_) {
    filter_pages_ = filter_->NumPages(cap_);
    if (filter_pages_ == 0 ||
        filter_pages_ > 0xFFFFFFFFu - npages_)
      return LSM_INTERNAL;  // cap below minimum, or absurd size
  }
  finished_ = true;
  broken_ = false;
  return LSM_PAGE_READY;
}

LsmStatus RunBuilder::TakePage(LsmPageOut* out) {
  if (ready_.empty()) {
    if (filter_next_ >= filter_pages_) return LSM_END;
    // the filter's pages, after the header, encoded one at a time
    size_t len = 0;
    out_.content.resize(cap_);
    LsmStatus st =
        filter_->EncodePage(filter_next_, out_.content.data(), cap_, &len);
    if (st != LSM_OK) return st;
    out_.content.resize(len);
    out_.rel_page = npages_ + filter_next_++;
    out_.kind = LSM_PAGE_BLOOM;
  } else {
    if (out_.content.capacity() > 0) pool_.push_back(std::move(out_.content));
    out_ = std::move(ready_.front());
    ready_.pop_front();
  }
  out->rel_page = out_.rel_page;
  out->kind = out_.kind;
  out->content = out_.content.data();
  out->len = out_.content.size();
  return LSM_OK;
}

LsmStatus RunBuilder::Info(LsmRunInfo* out) const {
  if (!finished_) return LSM_INVALID;
  out->nentries = count_;
  out->npages = npages_ + filter_pages_;
  out->bloom_start = filter_ ? npages_ : 0;
  out->bloom_nblocks = filter_ ? filter_->nblocks() : 0;
  return LSM_OK;
}

}  // namespace lsm
