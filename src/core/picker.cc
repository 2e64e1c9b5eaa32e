// picker.cc — compaction picker rules, and the extern "C" API of
// lsm_core_picker.h.

#include "picker.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <new>
#include <type_traits>
#include <utility>

#include "port.h"

namespace lsm {
namespace {

constexpr uint32_t kMaxLevel = LSM_PICK_MAX_LEVEL;
constexpr size_t kMaxInputs = LSM_PICK_MAX_INPUTS;
constexpr size_t kPressureMaxInputs = LSM_PICK_PRESSURE_MAX_INPUTS;

static_assert(LSM_PICK_MAX_LEVEL == 8, "the reason tables list levels 0..8");
static_assert(kPressureMaxInputs >= 2 && kPressureMaxInputs <= kMaxInputs,
              "a pressure merge takes 2..LSM_PICK_MAX_INPUTS runs");

#define LSM_LEVEL_TEXTS(before, after)                                  \
  {                                                                     \
    before "0" after, before "1" after, before "2" after, before "3" after, \
        before "4" after, before "5" after, before "6" after,           \
        before "7" after, before "8" after                              \
  }

const char* const kOverTarget[kPickLevels] =
    LSM_LEVEL_TEXTS("level ", " over target");
const char* const kTierFull[kPickLevels] =
    LSM_LEVEL_TEXTS("level ", " holds size_ratio runs");
const char* const kOverlapping[kPickLevels] =
    LSM_LEVEL_TEXTS("level ", " holds overlapping runs");
const char* const kLastSeveral[kPickLevels] =
    LSM_LEVEL_TEXTS("last level ", " holds several runs");
const char* const kLastOverTarget[kPickLevels] =
    LSM_LEVEL_TEXTS("last level ", " over target");

#undef LSM_LEVEL_TEXTS

const char kL0Trigger[] = "L0 trigger";
const char kPressure[] = "manifest pressure";
const char kNothing[] = "nothing to do";
const char kInvalid[] = "invalid arguments";

uint64_t SatAdd(uint64_t a, uint64_t b) {
  return a > std::numeric_limits<uint64_t>::max() - b
             ? std::numeric_limits<uint64_t>::max()
             : a + b;
}

// The policy as an integer: a C caller may have stored any int in the enum,
// and loading an out-of-range enum value is undefined in C++.
int PolicyValue(const LsmPickOptions& opt) {
  std::underlying_type_t<LsmCompactionPolicy> v;
  static_assert(sizeof(v) == sizeof(opt.policy), "enum size");
  std::memcpy(&v, &opt.policy, sizeof(v));
  return static_cast<int>(v);
}

bool KeyOk(const uint8_t* key, size_t len) {
  return key != nullptr || len == 0;
}

void ResetPick(LsmPick* out, const char* reason) {
  out->kind = LSM_PICK_NONE;
  out->output_level = 0;
  out->ninputs = 0;
  out->score = 0;
  out->reason = reason;
}

}  // namespace

LsmStatus ValidatePickInput(const LsmPickRun* runs, size_t nruns,
                            const LsmPickOptions& opt) {
  const int policy = PolicyValue(opt);
  if (policy != LSM_POLICY_LEVELED && policy != LSM_POLICY_TIERED &&
      policy != LSM_POLICY_LAZY)
    return LSM_INVALID;
  if (opt.size_ratio < 2 || opt.l0_trigger < 1 || opt.level_base_pages < 1 ||
      opt.max_runs < 1)
    return LSM_INVALID;
  if (runs == nullptr && nruns > 0) return LSM_INVALID;
  if (nruns > std::numeric_limits<uint32_t>::max()) return LSM_INVALID;
  for (size_t i = 0; i < nruns; i++) {
    const LsmPickRun& r = runs[i];
    if (r.level > kMaxLevel) return LSM_INVALID;
    if (!KeyOk(r.min_key, r.min_len) || !KeyOk(r.max_key, r.max_len))
      return LSM_INVALID;
    if (CompareKeys(r.min_key, r.min_len, r.max_key, r.max_len) > 0)
      return LSM_INVALID;
  }
  return LSM_OK;
}

uint64_t LevelTargetPages(const LsmPickOptions& opt, uint32_t level) {
  uint64_t t = opt.level_base_pages;
  for (uint32_t i = 1; i < level; i++) {
    if (t > std::numeric_limits<uint64_t>::max() / opt.size_ratio)
      return std::numeric_limits<uint64_t>::max();
    t *= opt.size_ratio;
  }
  return t;
}

CompactionPicker::CompactionPicker(const LsmPickRun* runs, size_t nruns,
                                   const LsmPickOptions& opt, bool ignore_busy)
    : runs_(runs), n_(nruns), opt_(opt), ignore_busy_(ignore_busy) {
  for (size_t i = 0; i < n_; i++) {
    const uint32_t lv = runs_[i].level;
    level_[lv].push_back(static_cast<uint32_t>(i));
    pages_[lv] = SatAdd(pages_[lv], runs_[i].pages);
  }
  for (std::vector<uint32_t>& v : level_)
    std::sort(v.begin(), v.end(),
              [this](uint32_t a, uint32_t b) { return KeyLess(a, b); });
  for (uint32_t lv = kMaxLevel; lv >= 1; lv--) {
    if (!level_[lv].empty()) {
      last_ = lv;
      break;
    }
  }
  if (!ignore_busy_) ComputeReservations();
}

bool CompactionPicker::AnyBusy(const std::vector<uint32_t>& v) const {
  for (uint32_t r : v)
    if (Busy(r)) return true;
  return false;
}

bool CompactionPicker::KeyLess(uint32_t a, uint32_t b) const {
  int c = CompareKeys(Min(a), Min(b));
  if (c != 0) return c < 0;
  return OlderThan(a, b);
}

bool CompactionPicker::OlderThan(uint32_t a, uint32_t b) const {
  if (runs_[a].run_id != runs_[b].run_id)
    return runs_[a].run_id < runs_[b].run_id;
  return a < b;
}

std::vector<uint32_t> CompactionPicker::ByAge(uint32_t level) const {
  std::vector<uint32_t> v = level_[level];
  std::sort(v.begin(), v.end(),
            [this](uint32_t a, uint32_t b) { return OlderThan(a, b); });
  return v;
}

bool CompactionPicker::Disjoint(uint32_t level) const {
  if (level < 1) return false;
  const int policy = PolicyValue(opt_);
  return policy == LSM_POLICY_LEVELED ||
         (policy == LSM_POLICY_LAZY && level == last_);
}

bool CompactionPicker::HasOverlap(uint32_t level) const {
  // Sorted by min key: some run overlaps an earlier one iff its min key is
  // <= the largest max key before it.
  const std::vector<uint32_t>& v = level_[level];
  if (v.empty()) return false;
  Slice hi = Max(v[0]);
  for (size_t k = 1; k < v.size(); k++) {
    if (CompareKeys(Min(v[k]), hi) <= 0) return true;
    if (CompareKeys(Max(v[k]), hi) > 0) hi = Max(v[k]);
  }
  return false;
}

double CompactionPicker::SizeScore(uint32_t level) const {
  return static_cast<double>(pages_[level]) /
         static_cast<double>(LevelTargetPages(opt_, level));
}

void CompactionPicker::Closure(uint32_t level, Range* hull,
                               std::vector<uint32_t>* out) const {
  const std::vector<uint32_t>& v = level_[level];
  std::vector<bool> taken(v.size(), false);
  const size_t first = out->size();
  for (bool changed = true; changed;) {
    changed = false;
    for (size_t k = 0; k < v.size(); k++) {
      const uint32_t r = v[k];
      if (CompareKeys(Min(r), hull->hi) > 0) break;  // so are all later ones
      if (taken[k] || CompareKeys(Max(r), hull->lo) < 0) continue;
      taken[k] = true;
      out->push_back(r);
      changed = true;
      if (CompareKeys(Min(r), hull->lo) < 0) hull->lo = Min(r);
      if (CompareKeys(Max(r), hull->hi) > 0) hull->hi = Max(r);
    }
  }
  std::sort(out->begin() + first, out->end(),
            [this](uint32_t a, uint32_t b) { return KeyLess(a, b); });
}

// A compaction running elsewhere writes into level L either the hull of its
// inputs in L plus one run of L-1 that all of them overlap (leveled: the
// output covers exactly the union of those ranges, an interval), or the hull
// of adjacent runs of L (manifest pressure, repair), or for L = 1 at most the
// hull of all L0 runs.  Its inputs are busy, and the inputs it has in L are
// adjacent in L's key order.  So these ranges cover every such output: the
// hull of each maximal block of adjacent busy runs of L, each busy run of
// L-1, and for L = 1 the hull of all busy L0 runs.
void CompactionPicker::ComputeReservations() {
  for (uint32_t lv = 1; lv <= kMaxLevel; lv++) {
    std::vector<Range>& res = reserved_[lv];
    const std::vector<uint32_t>& v = level_[lv];
    for (size_t i = 0; i < v.size();) {
      if (!Busy(v[i])) {
        i++;
        continue;
      }
      Range r{Min(v[i]), Max(v[i])};
      size_t j = i + 1;
      for (; j < v.size() && Busy(v[j]); j++)
        if (CompareKeys(Max(v[j]), r.hi) > 0) r.hi = Max(v[j]);
      res.push_back(r);
      i = j;
    }
    if (lv == 1) {
      bool any = false;
      Range r;
      for (uint32_t b : level_[0]) {
        if (!Busy(b)) continue;
        if (!any || CompareKeys(Min(b), r.lo) < 0) r.lo = Min(b);
        if (!any || CompareKeys(Max(b), r.hi) > 0) r.hi = Max(b);
        any = true;
      }
      if (any) res.push_back(r);
    } else {
      for (uint32_t b : level_[lv - 1])
        if (Busy(b)) res.push_back(Range{Min(b), Max(b)});
    }
  }
}

bool CompactionPicker::Reserved(uint32_t level, const Range& r) const {
  for (const Range& x : reserved_[level])
    if (RangesOverlap(r.lo, r.hi, x.lo, x.hi)) return true;
  return false;
}

void CompactionPicker::Set(Choice* c, std::vector<uint32_t> inputs,
                           uint32_t level, double score, const char* reason) {
  c->kind = inputs.size() == 1 ? LSM_PICK_MOVE : LSM_PICK_MERGE;
  c->output_level = level;
  c->inputs = std::move(inputs);
  c->score = score;
  c->reason = reason;
}

// ---------------------------------------------------------------------------
// Manifest pressure

bool CompactionPicker::TryPressure(Choice* c) const {
  const uint64_t threshold = static_cast<uint64_t>(opt_.max_runs) * 3 / 4;
  if (n_ <= threshold) return false;
  std::vector<uint32_t> order;
  for (uint32_t lv = 1; lv <= kMaxLevel; lv++)
    if (Count(lv) >= 2) order.push_back(lv);
  std::stable_sort(order.begin(), order.end(), [this](uint32_t a, uint32_t b) {
    return Count(a) > Count(b);
  });
  if (Count(0) >= 2) order.push_back(0);
  for (uint32_t lv : order) {
    if (TryPressureLevel(lv, c)) {
      c->score = static_cast<double>(n_) / opt_.max_runs;
      return true;
    }
  }
  return false;
}

bool CompactionPicker::TryPressureLevel(uint32_t level, Choice* c) const {
  const std::vector<uint32_t>& v = level_[level];
  if (!Disjoint(level)) {
    // Runs may overlap: merge the smallest idle ones.
    std::vector<uint32_t> idle;
    for (uint32_t r : v)
      if (!Busy(r)) idle.push_back(r);
    if (idle.size() < 2) return false;
    std::sort(idle.begin(), idle.end(), [this](uint32_t a, uint32_t b) {
      if (Pages(a) != Pages(b)) return Pages(a) < Pages(b);
      return OlderThan(a, b);
    });
    if (idle.size() > kPressureMaxInputs) idle.resize(kPressureMaxInputs);
    Set(c, std::move(idle), level, 0, kPressure);
    return true;
  }
  // Disjoint runs: a window of runs adjacent in key order, so the output
  // overlaps nothing the inputs did not.  Largest window first.
  size_t longest = 0;
  for (size_t k = 0, len = 0; k < v.size(); k++) {
    len = Busy(v[k]) ? 0 : len + 1;
    longest = std::max(longest, len);
  }
  for (size_t w = std::min(longest, kPressureMaxInputs); w >= 2; w--) {
    bool found = false;
    size_t best = 0;
    uint64_t best_pages = 0;
    for (size_t s = 0; s + w <= v.size(); s++) {
      bool idle = true;
      uint64_t pages = 0;
      Range hull{Min(v[s]), Max(v[s])};
      for (size_t k = s; k < s + w && idle; k++) {
        idle = !Busy(v[k]);
        pages = SatAdd(pages, Pages(v[k]));
        if (CompareKeys(Max(v[k]), hull.hi) > 0) hull.hi = Max(v[k]);
      }
      if (!idle || Reserved(level, hull)) continue;
      if (!found || pages < best_pages) {
        found = true;
        best = s;
        best_pages = pages;
      }
    }
    if (found) {
      Set(c, std::vector<uint32_t>(v.begin() + best, v.begin() + best + w),
          level, 0, kPressure);
      return true;
    }
  }
  return false;
}

// ---------------------------------------------------------------------------
// Level 0

bool CompactionPicker::TryL0(Choice* c) const {
  const uint32_t n0 = Count(0);
  if (n0 == 0 || n0 < opt_.l0_trigger) return false;
  if (PolicyValue(opt_) == LSM_POLICY_LEVELED) return TryLeveledL0(c);
  // Tiered, lazy: all L0 runs (lazy with last == 1: and all L1 runs), the
  // oldest first if there are too many.
  std::vector<uint32_t> in = ByAge(0);
  if (PolicyValue(opt_) == LSM_POLICY_LAZY && last_ == 1) {
    std::vector<uint32_t> l1 = ByAge(1);
    in.insert(in.end(), l1.begin(), l1.end());
  }
  if (in.size() > kMaxInputs) in.resize(kMaxInputs);
  if (AnyBusy(in)) return false;
  Set(c, std::move(in), 1, static_cast<double>(n0) / opt_.l0_trigger,
      kL0Trigger);
  return true;
}

bool CompactionPicker::TryLeveledL0(Choice* c) const {
  const std::vector<uint32_t> l0 = ByAge(0);
  if (AnyBusy(l0)) return false;
  // The k oldest L0 runs and the L1 runs overlapping their union range.
  auto gather = [&](size_t k, std::vector<uint32_t>* in, Range* hull) {
    in->assign(l0.begin(), l0.begin() + k);
    *hull = Range{Min(l0[0]), Max(l0[0])};
    for (size_t j = 1; j < k; j++) {
      if (CompareKeys(Min(l0[j]), hull->lo) < 0) hull->lo = Min(l0[j]);
      if (CompareKeys(Max(l0[j]), hull->hi) > 0) hull->hi = Max(l0[j]);
    }
    Closure(1, hull, in);
  };
  std::vector<uint32_t> in;
  Range hull;
  size_t k = std::min(l0.size(), kMaxInputs);
  gather(k, &in, &hull);
  if (in.size() > kMaxInputs) {
    // Too many: the most L0 runs that fit (inputs grow with k).
    size_t lo = 0, hi = k;  // lo fits (0: nothing does), hi does not
    while (hi - lo > 1) {
      size_t mid = lo + (hi - lo) / 2;
      gather(mid, &in, &hull);
      if (in.size() <= kMaxInputs)
        lo = mid;
      else
        hi = mid;
    }
    if (lo == 0) return false;
    gather(lo, &in, &hull);
  }
  if (AnyBusy(in) || Reserved(1, hull)) return false;
  Set(c, std::move(in), 1, static_cast<double>(l0.size()) / opt_.l0_trigger,
      kL0Trigger);
  return true;
}

// ---------------------------------------------------------------------------
// Leveled levels >= 1

bool CompactionPicker::TryLeveledRepair(uint32_t level, Choice* c) const {
  if (!Disjoint(level)) return false;
  const std::vector<uint32_t>& v = level_[level];
  // Groups of transitively overlapping runs: neighbours in key order while
  // the next min key is <= the largest max key so far.
  for (size_t i = 0; i < v.size();) {
    Slice hi = Max(v[i]);
    size_t j = i + 1;
    for (; j < v.size() && CompareKeys(Min(v[j]), hi) <= 0; j++)
      if (CompareKeys(Max(v[j]), hi) > 0) hi = Max(v[j]);
    if (j - i >= 2) {
      std::vector<uint32_t> in(v.begin() + i,
                               v.begin() + std::min(j, i + kMaxInputs));
      Range hull{Min(in[0]), Max(in[0])};
      for (uint32_t r : in)
        if (CompareKeys(Max(r), hull.hi) > 0) hull.hi = Max(r);
      if (!AnyBusy(in) && !Reserved(level, hull)) {
        Set(c, std::move(in), level, 0, kOverlapping[level]);
        return true;
      }
    }
    i = j;
  }
  return false;
}

bool CompactionPicker::TryLeveledScore(uint32_t level, Choice* c) const {
  if (level < 1 || level >= kMaxLevel) return false;  // no level beyond max
  const double score = SizeScore(level);
  if (!(score > 1.0)) return false;
  const uint32_t next = level + 1;
  bool found = false;
  uint32_t best = 0;
  double best_cost = 0;
  std::vector<uint32_t> best_in;
  std::vector<uint32_t> over;
  std::vector<uint32_t> in;
  for (uint32_t r : level_[level]) {
    if (Busy(r)) continue;
    Range hull{Min(r), Max(r)};
    over.clear();
    Closure(next, &hull, &over);
    if (over.size() + 1 > kMaxInputs || AnyBusy(over) || Reserved(next, hull))
      continue;
    // Also take the other runs (pieces) of this level that lie inside the
    // hull: they overlap no run of the next level that is not already an
    // input (the hull is closed under overlap there), so they go down at no
    // extra rewrite of the next level (RocksDB's input expansion).
    in.assign(1, r);
    uint64_t in_pages = std::max<uint64_t>(Pages(r), 1);
    for (uint32_t r2 : level_[level]) {
      if (r2 == r || Busy(r2) || over.size() + in.size() >= kMaxInputs)
        continue;
      if (CompareKeys(Min(r2), hull.lo) >= 0 &&
          CompareKeys(Max(r2), hull.hi) <= 0) {
        in.push_back(r2);
        in_pages = SatAdd(in_pages, Pages(r2));
      }
    }
    uint64_t over_pages = 0;
    for (uint32_t o : over) over_pages = SatAdd(over_pages, Pages(o));
    const double cost = static_cast<double>(over_pages) /
                        static_cast<double>(in_pages);
    if (!found || cost < best_cost ||
        (cost == best_cost && OlderThan(r, best))) {
      found = true;
      best = r;
      best_cost = cost;
      best_in = in;
      best_in.insert(best_in.end(), over.begin(), over.end());
    }
  }
  if (!found) return false;
  Set(c, std::move(best_in), next, score, kOverTarget[level]);
  return true;
}

// ---------------------------------------------------------------------------
// Tiered and lazy levels >= 1

bool CompactionPicker::TryTier(uint32_t level, Choice* c) const {
  if (level < 1 || Count(level) < opt_.size_ratio) return false;
  std::vector<uint32_t> in = ByAge(level);
  if (in.size() > kMaxInputs) in.resize(kMaxInputs);
  if (AnyBusy(in)) return false;
  Set(c, std::move(in), std::min(level + 1, kMaxLevel),
      static_cast<double>(Count(level)) / opt_.size_ratio, kTierFull[level]);
  return true;
}

bool CompactionPicker::TryLazyTier(uint32_t level, Choice* c) const {
  if (level < 1 || level >= last_ || Count(level) < opt_.size_ratio)
    return false;
  std::vector<uint32_t> in = ByAge(level);
  if (level + 1 == last_) {
    std::vector<uint32_t> l = ByAge(last_);
    in.insert(in.end(), l.begin(), l.end());
  }
  if (in.size() > kMaxInputs) in.resize(kMaxInputs);
  if (AnyBusy(in)) return false;
  Set(c, std::move(in), level + 1,
      static_cast<double>(Count(level)) / opt_.size_ratio, kTierFull[level]);
  return true;
}

bool CompactionPicker::TryLazyLast(Choice* c) const {
  const uint32_t lv = last_;
  if (Count(lv) >= 2) {  // only after a policy change or a capped merge
    std::vector<uint32_t> in = ByAge(lv);
    if (in.size() > kMaxInputs) in.resize(kMaxInputs);
    if (AnyBusy(in)) return false;
    Set(c, std::move(in), lv, 0, kLastSeveral[lv]);
    return true;
  }
  if (Count(lv) != 1 || lv >= kMaxLevel) return false;
  const double score = SizeScore(lv);
  if (!(score > 1.0) || Busy(level_[lv][0])) return false;
  Set(c, {level_[lv][0]}, lv + 1, score, kLastOverTarget[lv]);
  return true;
}

bool CompactionPicker::TryLevel(uint32_t level, Choice* c) const {
  if (level == 0) return TryL0(c);
  switch (PolicyValue(opt_)) {
    case LSM_POLICY_LEVELED:
      return TryLeveledRepair(level, c) || TryLeveledScore(level, c);
    case LSM_POLICY_TIERED:
      return TryTier(level, c);
    case LSM_POLICY_LAZY:
      if (level < last_) return TryLazyTier(level, c);
      if (level == last_) return TryLazyLast(c);
      return false;
  }
  return false;
}

// ---------------------------------------------------------------------------

void CompactionPicker::Pick(LsmPick* out) const {
  Choice c;
  const bool leveled = PolicyValue(opt_) == LSM_POLICY_LEVELED;
  bool found = TryPressure(&c);
  // Highest score first, ties: the lower level (stable sort).
  std::vector<std::pair<double, uint32_t>> scored;
  if (leveled) {
    for (uint32_t lv = 1; lv < kMaxLevel; lv++) {
      double s = SizeScore(lv);
      if (s > 1.0) scored.emplace_back(s, lv);
    }
    std::stable_sort(scored.begin(), scored.end(),
                     [](const std::pair<double, uint32_t>& a,
                        const std::pair<double, uint32_t>& b) {
                       return a.first > b.first;
                     });
  }
  // Leveled: the L0 trigger waits while a level is further over its target
  // than level 0 is over its trigger (RocksDB's scores), else an L0 merge,
  // which takes every L1 piece its runs overlap, would keep rewriting a
  // level 1 that grows without bound.
  const double l0_score = static_cast<double>(Count(0)) / opt_.l0_trigger;
  const bool l0_waits = leveled && !scored.empty() && scored[0].first > l0_score;
  if (!found && !l0_waits) found = TryL0(&c);
  switch (PolicyValue(opt_)) {
    case LSM_POLICY_LEVELED: {
      for (uint32_t lv = 1; !found && lv <= kMaxLevel; lv++)
        found = TryLeveledRepair(lv, &c);
      for (size_t k = 0; !found && k < scored.size(); k++)
        found = TryLeveledScore(scored[k].second, &c);
      if (!found && l0_waits) found = TryL0(&c);
      break;
    }
    case LSM_POLICY_TIERED:
      for (uint32_t lv = 1; !found && lv <= kMaxLevel; lv++)
        found = TryTier(lv, &c);
      break;
    case LSM_POLICY_LAZY:
      for (uint32_t lv = 1; !found && lv < last_; lv++)
        found = TryLazyTier(lv, &c);
      if (!found) found = TryLazyLast(&c);
      break;
  }
  if (!found) c = Choice();
  Emit(c, out);
}

void CompactionPicker::Emit(const Choice& c, LsmPick* out) const {
  std::vector<uint32_t> in = c.inputs;
  std::sort(in.begin(), in.end(), [this](uint32_t a, uint32_t b) {
    if (runs_[a].level != runs_[b].level)
      return runs_[a].level < runs_[b].level;
    return KeyLess(a, b);
  });
  ResetPick(out, c.reason);
  if (c.kind == LSM_PICK_NONE || in.empty() || in.size() > kMaxInputs) return;
  out->kind = c.kind;
  out->output_level = c.output_level;
  out->ninputs = static_cast<uint32_t>(in.size());
  std::copy(in.begin(), in.end(), out->inputs);
  out->score = c.score;
}

void CompactionPicker::LevelStats(uint32_t level,
                                  LsmPickLevelStats* out) const {
  const int policy = PolicyValue(opt_);
  out->nruns = Count(level);
  out->nbusy = 0;
  for (uint32_t r : level_[level])
    if (runs_[r].busy != 0) out->nbusy++;
  out->pages = pages_[level];
  out->target_pages = 0;
  if (level >= 1 && (policy == LSM_POLICY_LEVELED ||
                     (policy == LSM_POLICY_LAZY && level == last_)))
    out->target_pages = LevelTargetPages(opt_, level);
  if (level == 0)
    out->score = static_cast<double>(Count(0)) / opt_.l0_trigger;
  else if (out->target_pages != 0)
    out->score = SizeScore(level);
  else
    out->score = static_cast<double>(Count(level)) / opt_.size_ratio;
  out->overlapping = Disjoint(level) && HasOverlap(level) ? 1 : 0;
  Choice c;
  out->needs_work = TryLevel(level, &c) ? 1 : 0;
}

}  // namespace lsm

// ---------------------------------------------------------------------------
// The C API (lsm_core_picker.h).  Same regime as lsm_core.cc: every function
// catches every exception; std::bad_alloc is LSM_NO_MEMORY, anything else
// LSM_INTERNAL.

extern "C" {

LsmStatus lsm_pick_compaction(const LsmPickRun* runs, size_t nruns,
                              const LsmPickOptions* opt,
                              LsmPick* out) noexcept {
  try {
    if (out != nullptr) lsm::ResetPick(out, lsm::kInvalid);
    if (opt == nullptr || out == nullptr) return LSM_INVALID;
    LsmStatus st = lsm::ValidatePickInput(runs, nruns, *opt);
    if (st != LSM_OK) return st;
    lsm::CompactionPicker(runs, nruns, *opt).Pick(out);
    return LSM_OK;
  } catch (const std::bad_alloc&) {
    if (out != nullptr) lsm::ResetPick(out, lsm::kNothing);
    return LSM_NO_MEMORY;
  } catch (...) {
    if (out != nullptr) lsm::ResetPick(out, lsm::kNothing);
    return LSM_INTERNAL;
  }
}

LsmStatus lsm_pick_level_stats(const LsmPickRun* runs, size_t nruns,
                               const LsmPickOptions* opt, uint32_t level,
                               LsmPickLevelStats* out) noexcept {
  try {
    if (out != nullptr) *out = LsmPickLevelStats();
    if (opt == nullptr || out == nullptr || level > LSM_PICK_MAX_LEVEL)
      return LSM_INVALID;
    LsmStatus st = lsm::ValidatePickInput(runs, nruns, *opt);
    if (st != LSM_OK) return st;
    lsm::CompactionPicker(runs, nruns, *opt, /*ignore_busy=*/true)
        .LevelStats(level, out);
    return LSM_OK;
  } catch (const std::bad_alloc&) {
    if (out != nullptr) *out = LsmPickLevelStats();
    return LSM_NO_MEMORY;
  } catch (...) {
    if (out != nullptr) *out = LsmPickLevelStats();
    return LSM_INTERNAL;
  }
}

int lsm_key_ranges_overlap(const uint8_t* amin, size_t aminlen,
                           const uint8_t* amax, size_t amaxlen,
                           const uint8_t* bmin, size_t bminlen,
                           const uint8_t* bmax, size_t bmaxlen) noexcept {
  if (!lsm::KeyOk(amin, aminlen) || !lsm::KeyOk(amax, amaxlen) ||
      !lsm::KeyOk(bmin, bminlen) || !lsm::KeyOk(bmax, bmaxlen))
    return 0;
  return lsm::RangesOverlap(lsm::Slice(amin, aminlen),
                            lsm::Slice(amax, amaxlen),
                            lsm::Slice(bmin, bminlen),
                            lsm::Slice(bmax, bmaxlen))
             ? 1
             : 0;
}

}  // extern "C"
