// page_format.h — content-area layouts of run pages: data pages, fence pages
// and the run header.  doc/core_notes.md has the byte-by-byte description.
//
// A content area is the part of a page between PostgreSQL's page header and
// the special space; the shim owns everything else (page kind, run id).  All
// integers are little-endian; "varint" is a LevelDB varint32.  Every decoder
// here is bounds-checked and returns LSM_CORRUPT on any inconsistency: page
// images come from disk and are never trusted.
//
// Data page (len = exactly the used bytes, as returned by the encoder):
//   u16 nentries, u16 nrestarts,
//   entries: varint shared, varint unshared, unshared key bytes
//            (key = previous key[0..shared) + unshared bytes; every
//            kRestartInterval-th entry, starting with entry 0, has shared = 0)
//   u16 restart[nrestarts]: content offset of entries 0, 16, 32, ...
//
// Fence block (shared by fence pages and the run header; it ends the content):
//   u16 n (>= 1),
//   entries: varint klen, key bytes, u32 child (relative page number)
//   u16 offset[n]: offset of each entry from the start of the block
// Entry i's key is the first key of child i; keys ascend.
//
// Fence page: u32 kFenceMagic, u16 kFormatVersion, u16 level, fence block.
//   level 1: children are data pages; level L > 1: fence pages of level L-1.
//
// Run header (relative page 0):
//   u32 kRunMagic, u16 kFormatVersion, u16 height, u64 nentries,
//   u32 ndata_pages, u32 npages, u16 min_len, min key, u16 max_len, max key,
//   fence block of the root (children are data pages if height == 0, else
//   fence pages of level `height`).

#ifndef LSM_CORE_PAGE_FORMAT_H_
#define LSM_CORE_PAGE_FORMAT_H_

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "coding.h"
#include "lsm_core.h"
#include "port.h"  // PostgreSQL firewall
#include "slice.h"

namespace lsm {

// On-disk constants: do not change without bumping kFormatVersion.
constexpr uint16_t kFormatVersion = 1;
constexpr uint32_t kRunMagic = 0x524D534C;    // "LSMR"
constexpr uint32_t kFenceMagic = 0x464D534C;  // "LSMF"
constexpr int kRestartInterval = 16;
constexpr size_t kDataPageHeaderSize = 4;
constexpr size_t kFencePageHeaderSize = 8;
constexpr size_t kRunHeaderFixedSize = 24;  // up to and excluding min_len
constexpr uint32_t kMaxRunHeight = 24;      // sanity bound when parsing

// Bytes one fence entry of a klen-byte key takes in a block, offset included.
constexpr size_t FenceEntrySize(size_t klen) {
  return (klen < 128 ? 1 : (klen < 16384 ? 2 : 3)) + klen + 4 + 2;
}
// Largest data page entry plus its restart slot.
constexpr size_t kMaxDataEntrySize = 1 + 2 + LSM_MAX_KEY_SIZE + 2;
// A fence page must hold two entries of the longest key.
constexpr size_t kMinFencePageCap =
    kFencePageHeaderSize + 2 + 2 * FenceEntrySize(LSM_MAX_KEY_SIZE);
// The header must hold min and max key and two root entries of the longest key.
constexpr size_t kMinHeaderCap = kRunHeaderFixedSize +
                                 2 * (2 + LSM_MAX_KEY_SIZE) + 2 +
                                 2 * FenceEntrySize(LSM_MAX_KEY_SIZE);
constexpr size_t kMinContentCap =
    kMinHeaderCap > kMinFencePageCap ? kMinHeaderCap : kMinFencePageCap;
// Offsets inside a content area are u16.
constexpr size_t kMaxContentCap = 65535;
// The smallest content area PostgreSQL gives us: 8192 - 24 - 32.
static_assert(kMinContentCap <= 8136, "an 8 kB page must hold a run header");
static_assert(kMaxDataEntrySize + kDataPageHeaderSize <= kMinContentCap,
              "a data page must hold the longest key");

// ---------------------------------------------------------------------------
// Data pages.

// Checks a data page's header against its length: the entry and restart
// counts (and that an empty page has nothing after its header); returns the
// restart array (it ends the content), or nullptr.
inline const uint8_t* DataPageRestarts(const uint8_t* content, size_t len,
                                       size_t* nentries, size_t* nrestarts) {
  if (content == nullptr || len < kDataPageHeaderSize) return nullptr;
  *nentries = DecodeFixed16(content);
  *nrestarts = DecodeFixed16(content + 2);
  if (*nrestarts != (*nentries + kRestartInterval - 1) / kRestartInterval)
    return nullptr;
  if (len < kDataPageHeaderSize + 2 * *nrestarts) return nullptr;
  // An empty page is its header alone (decoders that stop early, the range
  // and lazy ones, would not see bytes after it).
  if (*nrestarts == 0 && len != kDataPageHeaderSize) return nullptr;
  return content + len - 2 * *nrestarts;
}

// Decodes the lengths of the data-page entry at p (the entry area ends at
// limit): returns its unshared bytes, or nullptr if it overruns the area or
// makes a key longer than LSM_MAX_KEY_SIZE.
inline const uint8_t* DecodeDataEntry(const uint8_t* p, const uint8_t* limit,
                                      uint32_t* shared, uint32_t* ulen) {
  p = DecodeVarint32(p, limit, shared);
  if (p == nullptr) return nullptr;
  p = DecodeVarint32(p, limit, ulen);
  if (p == nullptr || *ulen > static_cast<size_t>(limit - p)) return nullptr;
  if (static_cast<size_t>(*shared) + *ulen > LSM_MAX_KEY_SIZE) return nullptr;
  return p;
}

// Is the key prev[0..shared) + unshared[0..ulen) strictly greater than prev?
// (It differs from prev first at `shared`.)
inline bool AscendsAfter(const Slice& prev, uint32_t shared,
                         const uint8_t* unshared, uint32_t ulen) {
  if (shared == 0)
    return CompareKeys(unshared, ulen, prev.data, prev.size) > 0;
  return ulen != 0 && !(shared < prev.size && unshared[0] <= prev.data[shared]);
}

// Validates a data page and feeds its keys, in order, to sink:
//   Slice sink->Append(prev_key, shared, unshared, ulen)
// which must store the key prev_key[0..shared) + unshared[0..ulen) and return
// a view of it that stays valid until the next Append.  LSM_OK or
// LSM_CORRUPT (the sink may have seen some keys).
template <typename Sink>
LsmStatus ParseDataPage(const uint8_t* content, size_t len, Sink* sink) {
  size_t nentries, nrestarts;
  const uint8_t* const restarts =
      DataPageRestarts(content, len, &nentries, &nrestarts);
  if (restarts == nullptr) return LSM_CORRUPT;
  const uint8_t* p = content + kDataPageHeaderSize;
  Slice prev;
  for (size_t i = 0; i < nentries; i++) {
    const bool restart = i % kRestartInterval == 0;
    if (restart && DecodeFixed16(restarts + 2 * (i / kRestartInterval)) !=
                       static_cast<size_t>(p - content))
      return LSM_CORRUPT;
    uint32_t shared, ulen;
    p = DecodeDataEntry(p, restarts, &shared, &ulen);
    if (p == nullptr) return LSM_CORRUPT;
    if (shared > prev.size || (restart && shared != 0)) return LSM_CORRUPT;
    if (i > 0 && !AscendsAfter(prev, shared, p, ulen)) return LSM_CORRUPT;
    prev = sink->Append(prev, shared, p, ulen);
    p += ulen;
  }
  if (p != restarts) return LSM_CORRUPT;
  return LSM_OK;
}

// Like ParseDataPage, but feeds only the keys a forward scan of [lo, hi]
// needs: it binary-searches the restart points for the last one below lo
// (lo may be null: from the start), skips the keys below lo, and stops after
// the first key beyond the prefix upper bound hi (null: no bound), which it
// does feed, so that a merging iterator sees the source end there.  Only the
// entries it decodes are validated.  The first key fed is always given whole
// (shared = 0).  Keys are compared with hi only from the restart group before
// the first restart key beyond hi (binary-searched too): the keys of earlier
// groups are below a restart key within hi, so within hi themselves.
template <typename Sink>
LsmStatus ParseDataPageRange(const uint8_t* content, size_t len,
                             const uint8_t* lo, size_t lolen,
                             const uint8_t* hi, size_t hilen, Sink* sink) {
  size_t nentries, nrestarts;
  const uint8_t* const restarts =
      DataPageRestarts(content, len, &nentries, &nrestarts);
  if (restarts == nullptr) return LSM_CORRUPT;

  // The key of restart point i (whole: restart keys share nothing), or
  // false if the page is damaged there.
  auto restart_key = [&](size_t i, const uint8_t** key, uint32_t* keylen) {
    size_t off = DecodeFixed16(restarts + 2 * i);
    if (off < kDataPageHeaderSize || off >= len - 2 * nrestarts) return false;
    uint32_t shared;
    *key = DecodeDataEntry(content + off, restarts, &shared, keylen);
    return *key != nullptr && shared == 0;
  };

  // The last restart point whose key is below lo.
  size_t first = 0;
  if (lo != nullptr && nrestarts > 1) {
    size_t l = 0, r = nrestarts;  // invariant: key(l) < lo, or l == 0
    while (r - l > 1) {
      size_t mid = l + (r - l) / 2;
      const uint8_t* p;
      uint32_t ulen;
      if (!restart_key(mid, &p, &ulen)) return LSM_CORRUPT;
      if (CompareKeys(p, ulen, lo, lolen) < 0)
        l = mid;
      else
        r = mid;
    }
    first = l;
  }
  // The first restart point at or after `first` whose key is beyond hi.
  size_t check_from = 0;
  if (hi != nullptr && nrestarts > 1) {
    size_t l = first, r = nrestarts;  // invariant: key(r) beyond hi, or r = n
    while (l < r) {
      size_t mid = l + (r - l) / 2;
      const uint8_t* p;
      uint32_t ulen;
      if (!restart_key(mid, &p, &ulen)) return LSM_CORRUPT;
      if (BeyondPrefixUpper(p, ulen, hi, hilen))
        r = mid;
      else
        l = mid + 1;
    }
    check_from = (r == 0 ? 0 : r - 1) * kRestartInterval;
  }
  if (nentries == 0) return LSM_OK;
  size_t off0 = DecodeFixed16(restarts + 2 * first);
  if (off0 < kDataPageHeaderSize || off0 >= len - 2 * nrestarts)
    return LSM_CORRUPT;

  uint8_t cur[LSM_MAX_KEY_SIZE];  // the key being skipped over
  size_t curlen = 0;
  bool feeding = false;
  Slice prev;
  const uint8_t* p = content + off0;
  for (size_t i = first * kRestartInterval; i < nentries; i++) {
    const bool restart = i % kRestartInterval == 0;
    uint32_t shared, ulen;
    p = DecodeDataEntry(p, restarts, &shared, &ulen);
    if (p == nullptr || (restart && shared != 0)) return LSM_CORRUPT;
    if (!feeding) {
      if (shared > curlen) return LSM_CORRUPT;
      if (ulen > 0) std::memcpy(cur + shared, p, ulen);
      curlen = shared + ulen;
      p += ulen;
      if (lo != nullptr && CompareKeys(cur, curlen, lo, lolen) < 0) continue;
      feeding = true;
      prev = sink->Append(Slice(), 0, cur, curlen);
    } else {
      if (shared > prev.size || !AscendsAfter(prev, shared, p, ulen))
        return LSM_CORRUPT;
      prev = sink->Append(prev, shared, p, ulen);
      p += ulen;
    }
    if (hi != nullptr && i >= check_from &&
        BeyondPrefixUpper(prev.data, prev.size, hi, hilen))
      break;
  }
  return LSM_OK;
}

// Validates a data page without keeping its keys.
LsmStatus CheckDataPage(const uint8_t* content, size_t len);

// Encodes strictly ascending keys into a data page.
class DataPageBuilder {
 public:
  // REQUIRES: kMinContentCap <= cap <= kMaxContentCap (or, for one-off
  // encodes, cap >= kDataPageHeaderSize).
  explicit DataPageBuilder(size_t cap);

  void Reset();
  // Appends key if it fits (true), else changes nothing (false).
  // REQUIRES: key > every key added since Reset; len <= LSM_MAX_KEY_SIZE.
  bool Add(const uint8_t* key, size_t len);
  // Writes the header and restart array; returns the content size.  The
  // content is buffer()[0..size) until the next Reset.
  size_t Finish();

  const uint8_t* buffer() const { return buf_.data(); }
  size_t count() const { return n_; }
  bool empty() const { return n_ == 0; }

 private:
  size_t cap_;
  std::vector<uint8_t> buf_;
  size_t pos_;
  size_t n_;
  std::vector<uint16_t> restarts_;
  std::vector<uint8_t> last_key_;
};

// ---------------------------------------------------------------------------
// Fence blocks, fence pages, run headers.

// In-memory list of fence entries (key, child), keys in one byte buffer.
class FenceList {
 public:
  void Add(const uint8_t* key, size_t len, uint32_t child) {
    entries_.push_back(Entry{keys_.size(), len, child});
    keys_.insert(keys_.end(), key, key + len);
  }
  size_t size() const { return entries_.size(); }
  Slice key(size_t i) const {
    return Slice(keys_.data() + entries_[i].off, entries_[i].len);
  }
  uint32_t child(size_t i) const { return entries_[i].child; }
  void Clear() {
    entries_.clear();
    keys_.clear();
  }

 private:
  struct Entry {
    size_t off, len;
    uint32_t child;
  };
  std::vector<Entry> entries_;
  std::vector<uint8_t> keys_;
};

// Size of a fence block holding entries [begin, end) of list.
size_t FenceBlockSize(const FenceList& list, size_t begin, size_t end);
// Writes entries [begin, end) of list as a fence block at out; returns bytes.
size_t EncodeFenceBlock(const FenceList& list, size_t begin, size_t end,
                        uint8_t* out);

struct RunHeaderInfo {
  uint64_t nentries;
  uint32_t ndata_pages;
  uint32_t npages;
  uint32_t height;
  Slice min_key, max_key;
};

// Size of a run header's fixed part plus min and max keys (before the root).
inline size_t RunHeaderPrefixSize(size_t min_len, size_t max_len) {
  return kRunHeaderFixedSize + 2 + min_len + 2 + max_len;
}
// Writes the header prefix at out; returns bytes (RunHeaderPrefixSize).
size_t EncodeRunHeaderPrefix(const RunHeaderInfo& info, uint8_t* out);
// Parses and validates a run header; *root_off receives the offset of the
// root fence block.
LsmStatus ParseRunHeader(const uint8_t* content, size_t len,
                         RunHeaderInfo* info, size_t* root_off);

// Descends one level (lsm_fence_find).
LsmStatus FenceFind(const uint8_t* content, size_t len, bool is_header,
                    LsmFindMode mode, const uint8_t* target, size_t tlen,
                    uint32_t* child, bool* child_is_data);

// Entry i of the fence block of a run header (is_header) or fence page
// (lsm_fence_entry).
LsmStatus FenceEntryAt(const uint8_t* content, size_t len, bool is_header,
                       size_t i, size_t* n, uint32_t* level, Slice* key,
                       uint32_t* child);

}  // namespace lsm

#endif  // LSM_CORE_PAGE_FORMAT_H_
