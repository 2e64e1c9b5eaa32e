// run_builder.cc — streaming sorted-run writer.

#include "run_builder.h"

#include <cstring>
#include <utility>

#include "port.h"

namespace lsm {

RunBuilder::RunBuilder(size_t content_cap)
    : cap_(content_cap), data_(content_cap) {
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

LsmStatus RunBuilder::Add(const uint8_t* key, size_t len) {
  if (finished_ || broken_ || (key == nullptr && len > 0)) return LSM_INVALID;
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
  finished_ = true;
  broken_ = false;
  return LSM_PAGE_READY;
}

LsmStatus RunBuilder::TakePage(LsmPageOut* out) {
  if (ready_.empty()) return LSM_END;
  if (out_.content.capacity() > 0) pool_.push_back(std::move(out_.content));
  out_ = std::move(ready_.front());
  ready_.pop_front();
  out->rel_page = out_.rel_page;
  out->kind = out_.kind;
  out->content = out_.content.data();
  out->len = out_.content.size();
  return LSM_OK;
}

}  // namespace lsm
