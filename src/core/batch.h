// batch.h — an owned, ordered list of keys.
//
// Keys are copied into large blocks that are never moved or freed until the
// batch is destroyed, so a key returned by Get() stays valid until Clear() or
// destruction, even while more keys are added.  Clear() keeps the blocks for
// reuse: a batch refilled page after page allocates nothing once warm.  There
// is no per-key heap allocation.
//
// Lazy pages (merge sources of scans, SetLazy): AddDataPage on an empty batch
// keeps a copy of the page and decodes only one piece of it, the first
// restart groups (forward) or the last ones (backward); NextPiece() replaces
// the keys with the next piece, pieces doubling up to the rest of the page.
// A scan that stops after a few keys (ORDER BY ... LIMIT, max()) decodes
// about one restart group per run.  Every piece is validated as the whole
// page would be: restart offsets, prefix lengths, ascending keys, also
// across pieces.
//
// Thread-safety: none.

#ifndef LSM_CORE_BATCH_H_
#define LSM_CORE_BATCH_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "lsm_core.h"
#include "port.h"  // PostgreSQL firewall
#include "slice.h"

namespace lsm {

class Batch {
 public:
  Batch() = default;
  Batch(const Batch&) = delete;
  Batch& operator=(const Batch&) = delete;
  Batch(Batch&&) = default;
  Batch& operator=(Batch&&) = default;

  void Clear() {
    ClearKeys();
    groups_left_ = 0;
  }
  size_t size() const { return entries_.size(); }
  Slice Get(size_t i) const { return Slice(entries_[i].data, entries_[i].len); }

  // Appends a copy of key.  REQUIRES: len <= LSM_MAX_KEY_SIZE.
  // Throws std::bad_alloc.
  void Add(const uint8_t* key, size_t len);

  // Reserves len bytes of stable storage for a key being assembled and
  // records it as the next entry; returns where to write it.  Inline: a
  // page's decode calls it for every key (the slow path grows the storage).
  uint8_t* AppendUninitialized(size_t len) {
    if (entries_.size() < entries_.capacity() && cur_block_ < blocks_.size() &&
        used_ + len <= kBlockSize) {
      uint8_t* p = blocks_[cur_block_].get() + used_;
      used_ += len;
      entries_.push_back(Entry{p, len});
      return p;
    }
    return AppendSlow(len);
  }

  // Undo point for a failed multi-key append (decode of a corrupt page).
  struct Mark {
    size_t nentries, block, used;
  };
  Mark GetMark() const { return Mark{entries_.size(), cur_block_, used_}; }
  void Rewind(const Mark& m) {
    entries_.resize(m.nentries);
    cur_block_ = m.block;
    used_ = m.used;
  }

  // Appends the entries of a data page's content; LSM_CORRUPT (batch
  // unchanged) if the page fails validation.  Lazy, allow_lazy and the batch
  // empty: the first piece only.
  LsmStatus AddDataPage(const uint8_t* content, size_t len,
                        bool allow_lazy = true);

  enum class Lazy : uint8_t { kOff, kForward, kBackward };
  void SetLazy(Lazy mode) { lazy_ = mode; }
  // Pieces of the lazy page not decoded yet.
  bool HasMorePieces() const { return groups_left_ > 0; }
  // Replaces the keys with the next piece.  LSM_CORRUPT (no more pieces) if
  // it fails validation.  REQUIRES: HasMorePieces().
  LsmStatus NextPiece();
  // Appends what a forward scan of [lo, hi] needs of a data page (see
  // ParseDataPageRange); LSM_CORRUPT (batch unchanged) on a bad entry.
  LsmStatus AddDataPageRange(const uint8_t* content, size_t len,
                             const uint8_t* lo, size_t lolen,
                             const uint8_t* hi, size_t hilen);

 private:
  static constexpr size_t kBlockSize = 32 * 1024;
  static_assert(kBlockSize >= LSM_MAX_KEY_SIZE, "a block holds any key");

  struct Entry {
    const uint8_t* data;
    size_t len;
  };

  uint8_t* Allocate(size_t len);
  uint8_t* AppendSlow(size_t len);
  void ClearKeys() {
    entries_.clear();
    cur_block_ = 0;
    used_ = 0;
  }
  // Appends restart groups [g0, g1) of the lazy page, validated.
  LsmStatus DecodeGroups(size_t g0, size_t g1);

  std::vector<Entry> entries_;
  std::vector<std::unique_ptr<uint8_t[]>> blocks_;
  size_t cur_block_ = 0;  // block being filled (== blocks_.size(): none)
  size_t used_ = 0;       // bytes used in blocks_[cur_block_]

  // The lazy page: its copy, shape, and what is left to decode.
  Lazy lazy_ = Lazy::kOff;
  std::unique_ptr<uint8_t[]> page_;
  size_t page_cap_ = 0;
  size_t page_len_ = 0, page_entries_ = 0, page_groups_ = 0;
  size_t groups_left_ = 0;  // forward: [groups - left, groups); backward: [0, left)
  size_t piece_ = 0;        // groups in the next piece
  // The key next to the pieces decoded so far (forward: the last one,
  // backward: the first one): the next piece must ascend from (to) it.
  std::unique_ptr<uint8_t[]> edge_;
  size_t edge_len_ = 0;
};

}  // namespace lsm

// The C API's opaque batch handle (lsm_core.h).
struct LsmBatch {
  lsm::Batch rep;
};

#endif  // LSM_CORE_BATCH_H_
