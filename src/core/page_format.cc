// page_format.cc — data page, fence page and run header encoders/decoders.

#include "page_format.h"

#include <cstring>

#include "port.h"

namespace lsm {

// ---------------------------------------------------------------------------
// Data pages.

namespace {

// Decode sink for CheckDataPage: rebuilds each key in place in one buffer.
class CheckSink {
 public:
  Slice Append(const Slice& /*prev*/, size_t shared, const uint8_t* unshared,
               size_t ulen) {
    // buf_[0..shared) already holds the previous key's prefix.
    if (ulen > 0) std::memcpy(buf_ + shared, unshared, ulen);
    return Slice(buf_, shared + ulen);
  }

 private:
  uint8_t buf_[LSM_MAX_KEY_SIZE];
};

}  // namespace

LsmStatus CheckDataPage(const uint8_t* content, size_t len) {
  CheckSink sink;
  return ParseDataPage(content, len, &sink);
}

DataPageBuilder::DataPageBuilder(size_t cap) : cap_(cap), buf_(cap) {
  restarts_.reserve(cap / 16);
  last_key_.reserve(LSM_MAX_KEY_SIZE);
  Reset();
}

void DataPageBuilder::Reset() {
  pos_ = kDataPageHeaderSize;
  n_ = 0;
  restarts_.clear();
  last_key_.clear();
}

bool DataPageBuilder::Add(const uint8_t* key, size_t len) {
  const bool restart = n_ % kRestartInterval == 0;
  size_t shared = restart ? 0
                          : SharedPrefixLength(last_key_.data(),
                                               last_key_.size(), key, len);
  size_t ulen = len - shared;
  size_t entry = VarintLength(static_cast<uint32_t>(shared)) +
                 VarintLength(static_cast<uint32_t>(ulen)) + ulen;
  size_t nrestarts = restarts_.size() + (restart ? 1 : 0);
  if (n_ >= 0xFFFF || pos_ + entry + 2 * nrestarts > cap_) return false;
  if (restart) restarts_.push_back(static_cast<uint16_t>(pos_));
  uint8_t* p = buf_.data() + pos_;
  p = EncodeVarint32(p, static_cast<uint32_t>(shared));
  p = EncodeVarint32(p, static_cast<uint32_t>(ulen));
  if (ulen > 0) std::memcpy(p, key + shared, ulen);
  pos_ += entry;
  n_++;
  last_key_.resize(shared);
  last_key_.insert(last_key_.end(), key + shared, key + len);
  return true;
}

size_t DataPageBuilder::Finish() {
  EncodeFixed16(buf_.data(), static_cast<uint16_t>(n_));
  EncodeFixed16(buf_.data() + 2, static_cast<uint16_t>(restarts_.size()));
  size_t pos = pos_;
  for (uint16_t r : restarts_) {
    EncodeFixed16(buf_.data() + pos, r);
    pos += 2;
  }
  return pos;
}

// ---------------------------------------------------------------------------
// Fence blocks.

size_t FenceBlockSize(const FenceList& list, size_t begin, size_t end) {
  size_t size = 2;
  for (size_t i = begin; i < end; i++) size += FenceEntrySize(list.key(i).size);
  return size;
}

size_t EncodeFenceBlock(const FenceList& list, size_t begin, size_t end,
                        uint8_t* out) {
  const size_t n = end - begin;
  EncodeFixed16(out, static_cast<uint16_t>(n));
  uint8_t* p = out + 2;
  // Offsets go after all entries; write entries first, remembering offsets.
  size_t entries_size = 0;
  for (size_t i = begin; i < end; i++)
    entries_size += FenceEntrySize(list.key(i).size) - 2;
  uint8_t* offsets = out + 2 + entries_size;
  for (size_t i = begin; i < end; i++) {
    EncodeFixed16(offsets + 2 * (i - begin), static_cast<uint16_t>(p - out));
    Slice k = list.key(i);
    p = EncodeVarint32(p, static_cast<uint32_t>(k.size));
    if (k.size > 0) std::memcpy(p, k.data, k.size);
    p += k.size;
    EncodeFixed32(p, list.child(i));
    p += 4;
  }
  return 2 + entries_size + 2 * n;
}

namespace {

// A validated view of a fence block; entries are checked when read.
class FenceBlockView {
 public:
  // LSM_CORRUPT unless block[0..len) has a plausible header and offsets.
  LsmStatus Init(const uint8_t* block, size_t len) {
    if (len < 2) return LSM_CORRUPT;
    n_ = DecodeFixed16(block);
    if (n_ == 0 || 2 + 2 * n_ > len) return LSM_CORRUPT;
    block_ = block;
    entries_end_ = len - 2 * n_;
    return LSM_OK;
  }
  size_t size() const { return n_; }
  // Entry i, bounds-checked.
  LsmStatus Get(size_t i, Slice* key, uint32_t* child) const {
    size_t off = DecodeFixed16(block_ + entries_end_ + 2 * i);
    if (off < 2 || off >= entries_end_) return LSM_CORRUPT;
    const uint8_t* limit = block_ + entries_end_;
    uint32_t klen;
    const uint8_t* p = DecodeVarint32(block_ + off, limit, &klen);
    if (p == nullptr || klen > LSM_MAX_KEY_SIZE ||
        static_cast<size_t>(limit - p) < static_cast<size_t>(klen) + 4)
      return LSM_CORRUPT;
    *key = Slice(p, klen);
    *child = DecodeFixed32(p + klen);
    return LSM_OK;
  }

 private:
  const uint8_t* block_ = nullptr;
  size_t n_ = 0;
  size_t entries_end_ = 0;
};

}  // namespace

// ---------------------------------------------------------------------------
// Run header.

size_t EncodeRunHeaderPrefix(const RunHeaderInfo& info, uint8_t* out) {
  EncodeFixed32(out, kRunMagic);
  EncodeFixed16(out + 4, kFormatVersion);
  EncodeFixed16(out + 6, static_cast<uint16_t>(info.height));
  EncodeFixed64(out + 8, info.nentries);
  EncodeFixed32(out + 16, info.ndata_pages);
  EncodeFixed32(out + 20, info.npages);
  uint8_t* p = out + kRunHeaderFixedSize;
  EncodeFixed16(p, static_cast<uint16_t>(info.min_key.size));
  if (info.min_key.size > 0)
    std::memcpy(p + 2, info.min_key.data, info.min_key.size);
  p += 2 + info.min_key.size;
  EncodeFixed16(p, static_cast<uint16_t>(info.max_key.size));
  if (info.max_key.size > 0)
    std::memcpy(p + 2, info.max_key.data, info.max_key.size);
  p += 2 + info.max_key.size;
  return static_cast<size_t>(p - out);
}

LsmStatus ParseRunHeader(const uint8_t* content, size_t len,
                         RunHeaderInfo* info, size_t* root_off) {
  if (content == nullptr || len < kRunHeaderFixedSize + 4) return LSM_CORRUPT;
  if (DecodeFixed32(content) != kRunMagic ||
      DecodeFixed16(content + 4) != kFormatVersion)
    return LSM_CORRUPT;
  info->height = DecodeFixed16(content + 6);
  info->nentries = DecodeFixed64(content + 8);
  info->ndata_pages = DecodeFixed32(content + 16);
  info->npages = DecodeFixed32(content + 20);
  if (info->height > kMaxRunHeight || info->ndata_pages == 0 ||
      info->npages <= info->ndata_pages || info->nentries < info->ndata_pages)
    return LSM_CORRUPT;
  size_t pos = kRunHeaderFixedSize;
  size_t min_len = DecodeFixed16(content + pos);
  pos += 2;
  if (min_len > LSM_MAX_KEY_SIZE || len - pos < min_len + 2) return LSM_CORRUPT;
  info->min_key = Slice(content + pos, min_len);
  pos += min_len;
  size_t max_len = DecodeFixed16(content + pos);
  pos += 2;
  if (max_len > LSM_MAX_KEY_SIZE || len - pos < max_len) return LSM_CORRUPT;
  info->max_key = Slice(content + pos, max_len);
  pos += max_len;
  if (CompareKeys(info->min_key, info->max_key) > 0) return LSM_CORRUPT;
  FenceBlockView root;
  if (root.Init(content + pos, len - pos) != LSM_OK) return LSM_CORRUPT;
  *root_off = pos;
  return LSM_OK;
}

// ---------------------------------------------------------------------------
// Fence search.

LsmStatus FenceFind(const uint8_t* content, size_t len, bool is_header,
                    LsmFindMode mode, const uint8_t* target, size_t tlen,
                    uint32_t* child, bool* child_is_data) {
  size_t block_off;
  bool is_data;
  uint32_t min_child = 1, max_child = UINT32_MAX;
  if (is_header) {
    RunHeaderInfo info;
    LsmStatus st = ParseRunHeader(content, len, &info, &block_off);
    if (st != LSM_OK) return st;
    is_data = info.height == 0;
    if (is_data) {
      max_child = info.ndata_pages;
    } else {
      min_child = info.ndata_pages + 1;
      max_child = info.npages - 1;
    }
  } else {
    if (content == nullptr || len < kFencePageHeaderSize) return LSM_CORRUPT;
    if (DecodeFixed32(content) != kFenceMagic ||
        DecodeFixed16(content + 4) != kFormatVersion)
      return LSM_CORRUPT;
    uint16_t level = DecodeFixed16(content + 6);
    if (level == 0 || level > kMaxRunHeight) return LSM_CORRUPT;
    is_data = level == 1;
    block_off = kFencePageHeaderSize;
  }

  FenceBlockView block;
  if (block.Init(content + block_off, len - block_off) != LSM_OK)
    return LSM_CORRUPT;
  size_t idx;
  switch (mode) {
    case LSM_FIND_FIRST:
      idx = 0;
      break;
    case LSM_FIND_LAST:
      idx = block.size() - 1;
      break;
    case LSM_FIND_LE:
    case LSM_FIND_LT: {
      // Count the entries whose separator qualifies (a prefix of the block,
      // as separators ascend); the answer is the last of them.
      const int limit = mode == LSM_FIND_LE ? 0 : -1;
      size_t lo = 0, hi = block.size();
      while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        Slice key;
        uint32_t c;
        if (block.Get(mid, &key, &c) != LSM_OK) return LSM_CORRUPT;
        if (CompareKeys(key.data, key.size, target, tlen) <= limit)
          lo = mid + 1;
        else
          hi = mid;
      }
      idx = lo == 0 ? 0 : lo - 1;
      break;
    }
    default:
      return LSM_INVALID;
  }
  Slice key;
  uint32_t c;
  if (block.Get(idx, &key, &c) != LSM_OK) return LSM_CORRUPT;
  if (c < min_child || c > max_child) return LSM_CORRUPT;
  *child = c;
  *child_is_data = is_data;
  return LSM_OK;
}

// ---------------------------------------------------------------------------
// Fence entries one at a time (lsm_fence_entry: verification, inspection).

LsmStatus FenceEntryAt(const uint8_t* content, size_t len, bool is_header,
                       size_t i, size_t* n, uint32_t* level, Slice* key,
                       uint32_t* child) {
  size_t block_off;
  if (is_header) {
    RunHeaderInfo info;
    LsmStatus st = ParseRunHeader(content, len, &info, &block_off);
    if (st != LSM_OK) return st;
    *level = info.height + 1;
  } else {
    if (content == nullptr || len < kFencePageHeaderSize) return LSM_CORRUPT;
    if (DecodeFixed32(content) != kFenceMagic ||
        DecodeFixed16(content + 4) != kFormatVersion)
      return LSM_CORRUPT;
    *level = DecodeFixed16(content + 6);
    if (*level == 0 || *level > kMaxRunHeight) return LSM_CORRUPT;
    block_off = kFencePageHeaderSize;
  }
  FenceBlockView block;
  if (block.Init(content + block_off, len - block_off) != LSM_OK)
    return LSM_CORRUPT;
  *n = block.size();
  if (i >= block.size()) return LSM_END;
  return block.Get(i, key, child);
}

}  // namespace lsm
