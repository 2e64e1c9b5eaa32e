// picker.h — the compaction picker: which runs to compact, into which level.
//
// Pure logic over a description of the manifest (LsmPickRun, see
// lsm_core_picker.h for the policies and their rules); no I/O, no state
// between calls.  A CompactionPicker indexes the runs by level once (sorted by
// key) and then answers Pick() or LevelStats(); each rule is a Try* method
// that either fills a Choice or declines, so a rule blocked by a busy run
// simply hands over to the next one.
//
// Cost: O(n log n) to index, and O(n^2) key comparisons at worst per Pick()
// (the leveled rule computes each candidate's overlaps); n is the manifest's
// run count, a few hundred at most.
//
// Thread-safety: none needed (const after construction).

#ifndef LSM_CORE_PICKER_H_
#define LSM_CORE_PICKER_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "lsm_core.h"
#include "port.h"  // PostgreSQL firewall
#include "slice.h"

namespace lsm {

constexpr uint32_t kPickLevels = LSM_PICK_MAX_LEVEL + 1;

// True if the inclusive key ranges [amin, amax] and [bmin, bmax] share a key.
inline bool RangesOverlap(const Slice& amin, const Slice& amax,
                          const Slice& bmin, const Slice& bmax) {
  return CompareKeys(amin, bmax) <= 0 && CompareKeys(bmin, amax) <= 0;
}

// LSM_OK if the options are in range and every run is well-formed (level,
// key pointers, min <= max); else LSM_INVALID.
LsmStatus ValidatePickInput(const LsmPickRun* runs, size_t nruns,
                            const LsmPickOptions& opt);

// size_ratio^(level-1) * level_base_pages, saturating at UINT64_MAX.
// REQUIRES: level >= 1.
uint64_t LevelTargetPages(const LsmPickOptions& opt, uint32_t level);

class CompactionPicker {
 public:
  // REQUIRES: ValidatePickInput(runs, nruns, opt) == LSM_OK.  Keeps pointers
  // to runs (and their keys) for its lifetime.  ignore_busy: treat every run
  // as idle (to tell which levels need work at all).
  CompactionPicker(const LsmPickRun* runs, size_t nruns,
                   const LsmPickOptions& opt, bool ignore_busy = false);

  // The next compaction, or kind LSM_PICK_NONE.
  void Pick(LsmPick* out) const;

  // REQUIRES: level <= LSM_PICK_MAX_LEVEL.
  void LevelStats(uint32_t level, LsmPickLevelStats* out) const;

 private:
  struct Range {
    Slice lo, hi;
  };

  struct Choice {
    LsmPickKind kind = LSM_PICK_NONE;
    uint32_t output_level = 0;
    std::vector<uint32_t> inputs;  // indexes into runs_
    double score = 0;
    const char* reason = "nothing to do";
  };

  Slice Min(uint32_t i) const {
    return Slice(runs_[i].min_key, runs_[i].min_len);
  }
  Slice Max(uint32_t i) const {
    return Slice(runs_[i].max_key, runs_[i].max_len);
  }
  uint64_t Pages(uint32_t i) const { return runs_[i].pages; }
  bool Busy(uint32_t i) const { return !ignore_busy_ && runs_[i].busy != 0; }
  bool AnyBusy(const std::vector<uint32_t>& v) const;
  // Key order within a level: min key, then run_id, then index.
  bool KeyLess(uint32_t a, uint32_t b) const;
  // Age order: run_id, then index.
  bool OlderThan(uint32_t a, uint32_t b) const;
  // The level's runs, oldest first.
  std::vector<uint32_t> ByAge(uint32_t level) const;
  uint32_t Count(uint32_t level) const {
    return static_cast<uint32_t>(level_[level].size());
  }

  // Does the policy keep this level's runs pairwise disjoint?
  bool Disjoint(uint32_t level) const;
  // Does some pair of the level's runs overlap?
  bool HasOverlap(uint32_t level) const;
  double SizeScore(uint32_t level) const;
  // Adds to *out (ascending key order) the runs of `level` that overlap *hull,
  // transitively, widening *hull to cover them.
  void Closure(uint32_t level, Range* hull, std::vector<uint32_t>* out) const;
  // Might a compaction running elsewhere write into `level` within r?
  bool Reserved(uint32_t level, const Range& r) const;
  void ComputeReservations();

  // Rules.  Each returns true and fills *c, or returns false.
  bool TryPressure(Choice* c) const;
  bool TryPressureLevel(uint32_t level, Choice* c) const;
  bool TryL0(Choice* c) const;
  bool TryLeveledL0(Choice* c) const;
  bool TryLeveledRepair(uint32_t level, Choice* c) const;
  bool TryLeveledScore(uint32_t level, Choice* c) const;
  bool TryTier(uint32_t level, Choice* c) const;
  bool TryLazyTier(uint32_t level, Choice* c) const;
  bool TryLazyLast(Choice* c) const;
  // The rules (manifest pressure aside) that take inputs from `level`.
  bool TryLevel(uint32_t level, Choice* c) const;

  // A merge (>= 2 inputs) or move (1 input) of the given inputs.
  static void Set(Choice* c, std::vector<uint32_t> inputs, uint32_t level,
                  double score, const char* reason);
  void Emit(const Choice& c, LsmPick* out) const;

  const LsmPickRun* const runs_;
  const size_t n_;
  const LsmPickOptions opt_;
  const bool ignore_busy_;
  std::vector<uint32_t> level_[kPickLevels];  // key order
  uint64_t pages_[kPickLevels] = {};
  uint32_t last_ = 1;  // lazy: deepest level >= 1 holding runs, or 1
  // Key ranges compactions running elsewhere may write into each level.
  std::vector<Range> reserved_[kPickLevels];
};

}  // namespace lsm

#endif  // LSM_CORE_PICKER_H_
