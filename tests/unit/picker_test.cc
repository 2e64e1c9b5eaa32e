// picker_test.cc — compaction picker: each rule of each policy, busy runs,
// argument checks, random properties, and simulated LSM trees driven by the
// picker until it has nothing to do.

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <map>
#include <ostream>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "lsm_core.h"
#include "test_util.h"

namespace {

using lsm_test::Key;
using lsm_test::U8;

constexpr uint32_t kMax = LSM_PICK_MAX_LEVEL;

// 8-byte big-endian: memcmp order is numeric order.
Key K(uint64_t v) {
  Key k(8, '\0');
  for (int i = 7; i >= 0; i--) {
    k[i] = static_cast<char>(v & 0xFF);
    v >>= 8;
  }
  return k;
}

// A run as the tests write it.
struct R {
  uint32_t id;
  uint32_t level;
  uint64_t pages;
  Key min, max;
  bool busy = false;
};

std::vector<LsmPickRun> ToPick(const std::vector<R>& rs) {
  std::vector<LsmPickRun> v;
  for (const R& r : rs) {
    LsmPickRun p{};
    p.run_id = r.id;
    p.level = r.level;
    p.pages = r.pages;
    p.nentries = r.pages * 10;
    p.min_key = U8(r.min);
    p.min_len = r.min.size();
    p.max_key = U8(r.max);
    p.max_len = r.max.size();
    p.busy = r.busy ? 1 : 0;
    v.push_back(p);
  }
  return v;
}

LsmPickOptions Opts(LsmCompactionPolicy policy, uint32_t ratio = 4,
                    uint32_t trigger = 4, uint64_t base = 10,
                    uint32_t max_runs = 1000) {
  LsmPickOptions o;
  o.policy = policy;
  o.size_ratio = ratio;
  o.l0_trigger = trigger;
  o.level_base_pages = base;
  o.max_runs = max_runs;
  return o;
}

struct Picked {
  LsmStatus status = LSM_INTERNAL;
  LsmPickKind kind = LSM_PICK_NONE;
  uint32_t output_level = 0;
  std::vector<uint32_t> ids;  // run ids of the inputs, in the given order
  double score = 0;
  std::string reason;
};

Picked Pick(const std::vector<R>& rs, const LsmPickOptions& o) {
  std::vector<LsmPickRun> runs = ToPick(rs);
  LsmPick p;
  Picked out;
  out.status = lsm_pick_compaction(runs.data(), runs.size(), &o, &p);
  out.kind = p.kind;
  out.output_level = p.output_level;
  for (uint32_t i = 0; i < p.ninputs; i++) out.ids.push_back(rs[p.inputs[i]].id);
  out.score = p.score;
  out.reason = p.reason == nullptr ? "(null)" : p.reason;
  return out;
}

using Ids = std::vector<uint32_t>;

// Applies a pick to a run list in terms of key ranges (output range = hull of
// the inputs), for rule tests that iterate.
void ApplyRanges(std::vector<R>* rs, const Picked& p, uint32_t* next_id) {
  R out{(*next_id)++, p.output_level, 0, Key(), Key()};
  bool first = true;
  for (uint32_t id : p.ids) {
    auto it = std::find_if(rs->begin(), rs->end(),
                           [id](const R& r) { return r.id == id; });
    ASSERT_NE(it, rs->end());
    if (p.kind == LSM_PICK_MOVE) {
      it->level = p.output_level;
      return;
    }
    out.pages += it->pages;
    if (first || it->min < out.min) out.min = it->min;
    if (first || it->max > out.max) out.max = it->max;
    first = false;
    rs->erase(it);
  }
  rs->push_back(out);
}

// ---------------------------------------------------------------------------
// Arguments and helpers

TEST(PickerTest, KeyRangesOverlap) {
  auto ov = [](const Key& a0, const Key& a1, const Key& b0, const Key& b1) {
    int x = lsm_key_ranges_overlap(U8(a0), a0.size(), U8(a1), a1.size(),
                                   U8(b0), b0.size(), U8(b1), b1.size());
    int y = lsm_key_ranges_overlap(U8(b0), b0.size(), U8(b1), b1.size(),
                                   U8(a0), a0.size(), U8(a1), a1.size());
    EXPECT_EQ(x, y) << "not symmetric";
    return x;
  };
  EXPECT_EQ(ov("a", "c", "c", "d"), 1);  // bounds are inclusive
  EXPECT_EQ(ov("a", "b", "ba", "c"), 0);  // "b" < "ba": shorter first
  EXPECT_EQ(ov("a", "ba", "b", "b"), 1);
  EXPECT_EQ(ov("a", "a", "ab", "ab"), 0);
  EXPECT_EQ(ov("a", "z", "m", "n"), 1);  // containment
  EXPECT_EQ(ov(Key("\x00", 1), Key("\xFF", 1), "", ""), 0);
  EXPECT_EQ(ov("", "a", "", ""), 1);  // the empty key is the smallest
  EXPECT_EQ(ov(K(5), K(9), K(10), K(20)), 0);
  EXPECT_EQ(ov(K(5), K(10), K(10), K(20)), 1);
  // NULL with length 0 is the empty key; with a length it is an error.
  EXPECT_EQ(lsm_key_ranges_overlap(nullptr, 0, U8(Key("b")), 1, nullptr, 0,
                                   nullptr, 0),
            1);
  EXPECT_EQ(lsm_key_ranges_overlap(nullptr, 3, U8(Key("b")), 1, nullptr, 0,
                                   nullptr, 0),
            0);
}

TEST(PickerTest, InvalidArguments) {
  std::vector<R> rs = {{1, 0, 1, "a", "b"}, {2, 1, 1, "c", "d"}};
  std::vector<LsmPickRun> runs = ToPick(rs);
  LsmPickOptions o = Opts(LSM_POLICY_LEVELED);
  LsmPick p;
  auto invalid = [&](const LsmPickRun* r, size_t n, const LsmPickOptions* op) {
    p.kind = LSM_PICK_MERGE;
    p.ninputs = 7;
    p.reason = nullptr;
    EXPECT_EQ(lsm_pick_compaction(r, n, op, &p), LSM_INVALID);
    EXPECT_EQ(p.kind, LSM_PICK_NONE);
    EXPECT_EQ(p.ninputs, 0u);
    EXPECT_NE(p.reason, nullptr);
  };
  invalid(runs.data(), runs.size(), nullptr);
  EXPECT_EQ(lsm_pick_compaction(runs.data(), runs.size(), &o, nullptr),
            LSM_INVALID);
  invalid(nullptr, 1, &o);
  LsmPickOptions bad = o;
  bad.size_ratio = 1;
  invalid(runs.data(), runs.size(), &bad);
  bad = o;
  bad.l0_trigger = 0;
  invalid(runs.data(), runs.size(), &bad);
  bad = o;
  bad.level_base_pages = 0;
  invalid(runs.data(), runs.size(), &bad);
  bad = o;
  bad.max_runs = 0;
  invalid(runs.data(), runs.size(), &bad);
  bad = o;
  int policy = 3;  // what a C caller could store
  static_assert(sizeof(policy) == sizeof(bad.policy), "enum size");
  std::memcpy(&bad.policy, &policy, sizeof(policy));
  invalid(runs.data(), runs.size(), &bad);

  std::vector<LsmPickRun> b = runs;
  b[1].level = kMax + 1;
  invalid(b.data(), b.size(), &o);
  b = runs;
  b[0].min_key = U8(rs[1].min);  // "c" > "b"
  invalid(b.data(), b.size(), &o);
  b = runs;
  b[0].max_key = nullptr;
  invalid(b.data(), b.size(), &o);
  b = runs;
  b[1].min_key = nullptr;
  b[1].min_len = 0;  // the empty key: fine
  EXPECT_EQ(lsm_pick_compaction(b.data(), b.size(), &o, &p), LSM_OK);

  // Nothing at all.
  for (int pol = 0; pol <= 2; pol++) {
    LsmPickOptions op = Opts(static_cast<LsmCompactionPolicy>(pol));
    ASSERT_EQ(lsm_pick_compaction(nullptr, 0, &op, &p), LSM_OK);
    EXPECT_EQ(p.kind, LSM_PICK_NONE);
    EXPECT_EQ(p.ninputs, 0u);
    EXPECT_STREQ(p.reason, "nothing to do");
  }

  LsmPickLevelStats st;
  EXPECT_EQ(lsm_pick_level_stats(runs.data(), runs.size(), &o, kMax + 1, &st),
            LSM_INVALID);
  EXPECT_EQ(lsm_pick_level_stats(runs.data(), runs.size(), nullptr, 0, &st),
            LSM_INVALID);
  EXPECT_EQ(lsm_pick_level_stats(runs.data(), runs.size(), &o, 0, nullptr),
            LSM_INVALID);
  EXPECT_EQ(lsm_pick_level_stats(runs.data(), runs.size(), &bad, 0, &st),
            LSM_INVALID);
}

// ---------------------------------------------------------------------------
// Leveled

TEST(PickerTest, LeveledL0TriggerMergesL0AndOverlappingL1) {
  std::vector<R> rs = {
      {1, 1, 2, "a", "b"},   {2, 1, 2, "bb", "cc"}, {3, 1, 2, "g1", "g9"},
      {4, 1, 2, "i", "k"},   {10, 0, 1, "d", "f"},  {11, 0, 1, "e", "g"},
      {12, 0, 1, "c", "d"},  {13, 0, 1, "f", "h"},
  };
  Picked p = Pick(rs, Opts(LSM_POLICY_LEVELED, 4, 4, 100));
  ASSERT_EQ(p.status, LSM_OK);
  EXPECT_EQ(p.kind, LSM_PICK_MERGE);
  EXPECT_EQ(p.output_level, 1u);
  // By level, then min key.
  EXPECT_EQ(p.ids, (Ids{12, 10, 11, 13, 2, 3}));
  EXPECT_EQ(p.reason, "L0 trigger");
  EXPECT_DOUBLE_EQ(p.score, 1.0);

  rs.pop_back();  // 3 L0 runs < trigger 4, L1 under target
  p = Pick(rs, Opts(LSM_POLICY_LEVELED, 4, 4, 100));
  ASSERT_EQ(p.status, LSM_OK);
  EXPECT_EQ(p.kind, LSM_PICK_NONE);
  EXPECT_TRUE(p.ids.empty());
  EXPECT_EQ(p.reason, "nothing to do");
}

TEST(PickerTest, LeveledSingleL0RunMovesUnlessItOverlaps) {
  std::vector<R> rs = {
      {1, 1, 2, "a", "b"}, {2, 1, 2, "x", "y"}, {7, 0, 3, "m", "n"}};
  Picked p = Pick(rs, Opts(LSM_POLICY_LEVELED, 4, 1, 100));
  EXPECT_EQ(p.kind, LSM_PICK_MOVE);
  EXPECT_EQ(p.output_level, 1u);
  EXPECT_EQ(p.ids, Ids{7});

  rs[2].max = "x";  // now overlaps run 2
  p = Pick(rs, Opts(LSM_POLICY_LEVELED, 4, 1, 100));
  EXPECT_EQ(p.kind, LSM_PICK_MERGE);
  EXPECT_EQ(p.output_level, 1u);
  EXPECT_EQ(p.ids, (Ids{7, 2}));
}

TEST(PickerTest, LeveledOverTargetPicksLeastOverlap) {
  // L1: 12 pages over a target of 10.
  std::vector<R> rs = {
      {1, 1, 5, "a", "c"},   {2, 1, 4, "d", "f"},   {3, 1, 3, "g", "i"},
      {20, 2, 10, "a", "b"}, {21, 2, 2, "e", "e"}, {22, 2, 30, "h", "h"},
  };
  // Costs: run 1 10/5, run 2 2/4, run 3 30/3.
  Picked p = Pick(rs, Opts(LSM_POLICY_LEVELED, 4, 4, 10));
  ASSERT_EQ(p.status, LSM_OK);
  EXPECT_EQ(p.kind, LSM_PICK_MERGE);
  EXPECT_EQ(p.output_level, 2u);
  EXPECT_EQ(p.ids, (Ids{2, 21}));
  EXPECT_EQ(p.reason, "level 1 over target");
  EXPECT_DOUBLE_EQ(p.score, 1.2);

  // Equal cost 0 (no overlap at all): the oldest run, moved.
  rs = {{9, 1, 6, "x", "y"}, {4, 1, 6, "m", "n"}, {20, 2, 1, "a", "b"}};
  p = Pick(rs, Opts(LSM_POLICY_LEVELED, 4, 4, 10));
  EXPECT_EQ(p.kind, LSM_PICK_MOVE);
  EXPECT_EQ(p.output_level, 2u);
  EXPECT_EQ(p.ids, Ids{4});

  // Ratios: run 5 8/4 = 2, run 3 8/8 = 1.
  rs = {{5, 1, 4, "m", "n"},  {3, 1, 8, "c", "d"}, {20, 2, 8, "c", "d"},
        {21, 2, 8, "m", "m"}};
  p = Pick(rs, Opts(LSM_POLICY_LEVELED, 4, 4, 10));
  EXPECT_EQ(p.ids, (Ids{3, 20}));
  rs[1].pages = 4;
  rs[0].pages = 8;  // run 5 8/8 = 1, run 3 8/4 = 2
  p = Pick(rs, Opts(LSM_POLICY_LEVELED, 4, 4, 10));
  EXPECT_EQ(p.ids, (Ids{5, 21}));
  rs[1].pages = 8;  // both 1.0: the oldest (run 3)
  p = Pick(rs, Opts(LSM_POLICY_LEVELED, 4, 4, 10));
  EXPECT_EQ(p.ids, (Ids{3, 20}));
}

TEST(PickerTest, LeveledTimeOrderedDisjointRunsAreMovedNotMerged) {
  // Sequential inserts: every run is newer and above all older keys.
  std::vector<R> rs;
  uint32_t id = 1;
  for (int i = 0; i < 12; i++)
    rs.push_back({id++, 3, 4, K(i * 10), K(i * 10 + 9)});
  for (int i = 12; i < 20; i++)
    rs.push_back({id++, 2, 4, K(i * 10), K(i * 10 + 9)});
  for (int i = 20; i < 26; i++)
    rs.push_back({id++, 1, 4, K(i * 10), K(i * 10 + 9)});
  const LsmPickOptions o = Opts(LSM_POLICY_LEVELED, 2, 4, 8);
  int moves = 0;
  for (int step = 0;; step++) {
    ASSERT_LT(step, 100);
    Picked p = Pick(rs, o);
    ASSERT_EQ(p.status, LSM_OK);
    if (p.kind == LSM_PICK_NONE) break;
    ASSERT_EQ(p.kind, LSM_PICK_MOVE) << p.reason;
    ASSERT_EQ(p.ids.size(), 1u);
    moves++;
    ApplyRanges(&rs, p, &id);
  }
  EXPECT_GT(moves, 10);
  // Settled: every level within its target (8, 16, 32, ...).
  std::map<uint32_t, uint64_t> pages;
  for (const R& r : rs) pages[r.level] += r.pages;
  for (uint32_t lv = 1; lv < kMax; lv++)
    EXPECT_LE(pages[lv], 8u << (lv - 1)) << "level " << lv;
}

TEST(PickerTest, LeveledHighestScoreFirstTiesToLowerLevel) {
  // L1 target 10, L2 target 40.
  std::vector<R> rs = {{1, 1, 15, "a", "b"}, {2, 2, 80, "m", "n"}};
  Picked p = Pick(rs, Opts(LSM_POLICY_LEVELED, 4, 4, 10));
  EXPECT_EQ(p.ids, Ids{2});  // 2.0 beats 1.5
  EXPECT_EQ(p.output_level, 3u);
  EXPECT_EQ(p.reason, "level 2 over target");
  rs[0].pages = 20;  // 2.0 each: the lower level
  p = Pick(rs, Opts(LSM_POLICY_LEVELED, 4, 4, 10));
  EXPECT_EQ(p.ids, Ids{1});
  EXPECT_EQ(p.output_level, 2u);
  // Exactly on target is not over it.
  rs[0].pages = 10;
  rs[1].pages = 40;
  EXPECT_EQ(Pick(rs, Opts(LSM_POLICY_LEVELED, 4, 4, 10)).kind, LSM_PICK_NONE);
  std::vector<LsmPickRun> runs = ToPick(rs);
  LsmPickOptions o = Opts(LSM_POLICY_LEVELED, 4, 4, 10);
  for (uint32_t lv = 1; lv <= 2; lv++) {
    LsmPickLevelStats st;
    ASSERT_EQ(lsm_pick_level_stats(runs.data(), runs.size(), &o, lv, &st),
              LSM_OK);
    EXPECT_DOUBLE_EQ(st.score, 1.0);
    EXPECT_EQ(st.needs_work, 0) << "level " << lv;
  }
}

TEST(PickerTest, LeveledL0WaitsForALevelFurtherOverTarget) {
  // Level 1 (pieces) at 3x its target, level 0 at its trigger: level 1
  // pushes a piece down first; once level 0 is further over its trigger
  // than level 1 over its target, level 0 goes first.
  std::vector<R> rs = {
      {1, 1, 10, "a", "c"}, {2, 1, 10, "d", "f"}, {3, 1, 10, "g", "i"},
      {10, 0, 1, "a", "i"}, {11, 0, 1, "a", "i"}, {12, 0, 1, "a", "i"},
      {13, 0, 1, "a", "i"},
  };
  LsmPickOptions o = Opts(LSM_POLICY_LEVELED, 4, 4, 10);
  Picked p = Pick(rs, o);
  EXPECT_EQ(p.reason, "level 1 over target");
  EXPECT_EQ(p.kind, LSM_PICK_MOVE);
  EXPECT_EQ(p.output_level, 2u);
  for (uint32_t id = 14; id < 26; id++) rs.push_back({id, 0, 1, "a", "i"});
  p = Pick(rs, o);  // 16 L0 runs: score 4 > 3
  EXPECT_EQ(p.reason, "L0 trigger");
  EXPECT_EQ(p.output_level, 1u);
}

TEST(PickerTest, LeveledNothingBeyondMaxLevel) {
  std::vector<R> rs = {{1, kMax, 1000000000, "a", "z"}};
  Picked p = Pick(rs, Opts(LSM_POLICY_LEVELED, 2, 4, 1));
  ASSERT_EQ(p.status, LSM_OK);
  EXPECT_EQ(p.kind, LSM_PICK_NONE);
  rs.push_back({2, kMax - 1, 1000000, "a", "b"});  // over target: moves down
  p = Pick(rs, Opts(LSM_POLICY_LEVELED, 2, 4, 1));
  EXPECT_EQ(p.kind, LSM_PICK_MERGE);
  EXPECT_EQ(p.output_level, kMax);
  EXPECT_EQ(p.ids, (Ids{2, 1}));
}

TEST(PickerTest, LeveledRepairsOverlappingLevel) {
  // Left by another policy: L2 holds overlapping runs.
  std::vector<R> rs = {{1, 2, 3, "x", "z"},
                       {2, 2, 3, "c", "f"},
                       {3, 2, 3, "a", "d"},
                       {4, 2, 3, "e", "g"}};
  Picked p = Pick(rs, Opts(LSM_POLICY_LEVELED, 4, 4, 100));
  EXPECT_EQ(p.kind, LSM_PICK_MERGE);
  EXPECT_EQ(p.output_level, 2u);
  EXPECT_EQ(p.ids, (Ids{3, 2, 4}));
  EXPECT_EQ(p.reason, "level 2 holds overlapping runs");
  std::vector<LsmPickRun> runs = ToPick(rs);
  LsmPickOptions o = Opts(LSM_POLICY_LEVELED, 4, 4, 100);
  LsmPickLevelStats st;
  ASSERT_EQ(lsm_pick_level_stats(runs.data(), runs.size(), &o, 2, &st),
            LSM_OK);
  EXPECT_EQ(st.overlapping, 1);
  EXPECT_EQ(st.needs_work, 1);
  // Tiered levels may overlap: nothing to repair.
  o.policy = LSM_POLICY_TIERED;
  ASSERT_EQ(lsm_pick_level_stats(runs.data(), runs.size(), &o, 2, &st),
            LSM_OK);
  EXPECT_EQ(st.overlapping, 0);
  EXPECT_EQ(st.needs_work, 1);  // 4 runs >= size_ratio 4
}

TEST(PickerTest, LeveledL0AndL1MergeDoesNotWidenIntoOtherL1Runs) {
  // L1 overlapping (before a repair): the L1 runs taken are closed under
  // overlap, so the output overlaps no L1 run left behind.
  std::vector<R> rs = {{1, 1, 1, "a", "e"},
                       {2, 1, 1, "d", "h"},
                       {3, 1, 1, "g", "k"},
                       {4, 1, 1, "x", "y"},
                       {9, 0, 1, "b", "c"}};
  LsmPickOptions o = Opts(LSM_POLICY_LEVELED, 4, 1, 100);
  Picked p = Pick(rs, o);
  // The repair of L1 comes after the L0 trigger.
  EXPECT_EQ(p.reason, "L0 trigger");
  EXPECT_EQ(p.ids, (Ids{9, 1, 2, 3}));
  // Widening to the left takes in runs that did not overlap at first.
  rs = {{1, 1, 1, "a", "c"},
        {2, 1, 1, "b", "h"},
        {3, 1, 1, "x", "y"},
        {9, 0, 1, "g", "g"}};
  p = Pick(rs, o);
  EXPECT_EQ(p.ids, (Ids{9, 1, 2}));
}

// ---------------------------------------------------------------------------
// Busy runs

TEST(PickerTest, BusyRunsBlockTheirRuleOnly) {
  // L0 score 5 / 4 = 1.25 beats level 1's 12 / 10 = 1.2.
  LsmPickOptions o = Opts(LSM_POLICY_LEVELED, 4, 4, 10);
  std::vector<R> rs = {
      {1, 0, 1, "a", "c"},  {2, 0, 1, "b", "d"},  {3, 0, 1, "c", "e"},
      {4, 0, 1, "d", "f"},  {5, 1, 11, "p", "q"}, {6, 1, 1, "a", "a"},
      {7, 0, 1, "b", "b"},
  };
  Picked p = Pick(rs, o);
  EXPECT_EQ(p.reason, "L0 trigger");
  EXPECT_EQ(p.ids, (Ids{1, 2, 7, 3, 4, 6}));
  // An L0 run is busy: the next rule (L1 over target) answers.
  rs[2].busy = true;
  p = Pick(rs, o);
  EXPECT_EQ(p.reason, "level 1 over target");
  EXPECT_EQ(p.kind, LSM_PICK_MOVE);
  EXPECT_EQ(p.output_level, 2u);
  // Runs 5 and 6 both overlap nothing in L2 (cost 0): the older one.
  EXPECT_EQ(p.ids, Ids{5});
  // The L1 run the L0 merge needs is busy: the L0 rule is skipped.
  rs[2].busy = false;
  rs[5].busy = true;
  p = Pick(rs, o);
  EXPECT_EQ(p.reason, "level 1 over target");
  EXPECT_EQ(p.ids, Ids{5});
  // Everything that could work is busy.
  rs[4].busy = true;
  p = Pick(rs, o);
  EXPECT_EQ(p.kind, LSM_PICK_NONE);
}

TEST(PickerTest, BusyBestCandidateGivesTheNextBest) {
  std::vector<R> rs = {
      {1, 1, 5, "a", "c"},   {2, 1, 4, "d", "f"},   {3, 1, 3, "g", "i"},
      {20, 2, 10, "a", "b"}, {21, 2, 2, "e", "e"}, {22, 2, 30, "h", "h"},
  };
  LsmPickOptions o = Opts(LSM_POLICY_LEVELED, 4, 4, 10);
  rs[1].busy = true;  // the best run
  Picked p = Pick(rs, o);
  EXPECT_EQ(p.ids, (Ids{1, 20}));
  rs[1].busy = false;
  rs[4].busy = true;  // the best run's overlap in L2
  p = Pick(rs, o);
  EXPECT_EQ(p.ids, (Ids{1, 20}));
}

TEST(PickerTest, NoOutputIntoRangeARunningCompactionWrites) {
  LsmPickOptions o = Opts(LSM_POLICY_LEVELED, 4, 1, 1000);
  // L1 runs 1 and 3 are busy: being merged elsewhere.  Not adjacent (run 2
  // lies between), so each reserves only its own range.
  std::vector<R> rs = {{1, 1, 1, "a", "b"},
                       {2, 1, 1, "c", "d"},
                       {3, 1, 1, "x", "y"},
                       {9, 0, 1, "m", "n"}};
  rs[0].busy = rs[2].busy = true;
  Picked p = Pick(rs, o);
  EXPECT_EQ(p.kind, LSM_PICK_MOVE);
  EXPECT_EQ(p.ids, Ids{9});
  // Adjacent busy runs 2 and 3 may be one merge writing [c, y]: moving
  // [m, n] into L1 now could overlap its output.
  rs[0].busy = false;
  rs[1].busy = true;
  p = Pick(rs, o);
  EXPECT_EQ(p.kind, LSM_PICK_NONE);

  // A busy L1 run may be on its way into L2: manifest pressure must not
  // merge the L2 runs around it into one run covering its range.
  rs = {{1, 1, 1, "m", "n"}, {2, 2, 1, "a", "b"}, {3, 2, 1, "x", "y"}};
  o = Opts(LSM_POLICY_LEVELED, 4, 4, 1000, 2);
  p = Pick(rs, o);
  EXPECT_EQ(p.reason, "manifest pressure");
  EXPECT_EQ(p.ids, (Ids{2, 3}));
  rs[0].busy = true;
  p = Pick(rs, o);
  EXPECT_EQ(p.kind, LSM_PICK_NONE);
  // The same for busy L0 runs on their way into L1 (their whole hull: the
  // output of an L0 merge spans the gaps between its inputs).
  rs = {{1, 0, 1, "k", "l"}, {4, 0, 1, "o", "p"},
        {2, 1, 1, "a", "b"}, {3, 1, 1, "x", "y"}};
  p = Pick(rs, o);
  EXPECT_EQ(p.reason, "manifest pressure");
  EXPECT_EQ(p.ids, (Ids{2, 3}));
  rs[0].busy = rs[1].busy = true;
  rs[1].min = "m";  // the runs [k, l] and [m, p] leave a gap
  rs[1].max = "n";
  rs.push_back({5, 1, 1, "lm", "lm"});  // an L1 run in that gap
  p = Pick(rs, o);
  EXPECT_EQ(p.kind, LSM_PICK_NONE);
}

// ---------------------------------------------------------------------------
// Tiered

TEST(PickerTest, TieredL0TriggerMergesOnlyL0) {
  std::vector<R> rs = {{1, 1, 50, "a", "z"}, {2, 1, 50, "b", "y"},
                       {10, 0, 1, "c", "d"}, {11, 0, 1, "a", "b"},
                       {12, 0, 1, "e", "f"}, {13, 0, 1, "c", "c"}};
  LsmPickOptions o = Opts(LSM_POLICY_TIERED, 4, 4, 10);
  Picked p = Pick(rs, o);
  EXPECT_EQ(p.kind, LSM_PICK_MERGE);
  EXPECT_EQ(p.output_level, 1u);
  EXPECT_EQ(p.ids, (Ids{11, 10, 13, 12}));  // equal min keys: by run_id
  EXPECT_EQ(p.reason, "L0 trigger");
  // One L0 run: moved, whatever it overlaps.
  rs.resize(3);
  p = Pick(rs, Opts(LSM_POLICY_TIERED, 4, 1, 10));
  EXPECT_EQ(p.kind, LSM_PICK_MOVE);
  EXPECT_EQ(p.ids, Ids{10});
  EXPECT_EQ(p.output_level, 1u);
}

TEST(PickerTest, TieredLowestFullLevelFirst) {
  std::vector<R> rs = {
      {1, 1, 1, "a", "z"}, {2, 1, 1, "a", "z"},                        // 2
      {3, 2, 9, "a", "z"}, {4, 2, 9, "b", "z"}, {5, 2, 9, "c", "z"},   // 3
      {6, 3, 27, "a", "z"}, {7, 3, 27, "a", "z"}, {8, 3, 27, "a", "z"},
      {9, 3, 27, "a", "z"}};  // 4
  LsmPickOptions o = Opts(LSM_POLICY_TIERED, 3, 4, 10);
  Picked p = Pick(rs, o);
  EXPECT_EQ(p.kind, LSM_PICK_MERGE);
  EXPECT_EQ(p.output_level, 3u);
  EXPECT_EQ(p.ids, (Ids{3, 4, 5}));
  EXPECT_EQ(p.reason, "level 2 holds size_ratio runs");
  EXPECT_DOUBLE_EQ(p.score, 1.0);
  rs[4].busy = true;  // L2 blocked: L3 is next
  p = Pick(rs, o);
  EXPECT_EQ(p.output_level, 4u);
  EXPECT_EQ(p.ids, (Ids{6, 7, 8, 9}));
  rs[4].busy = false;
  rs.push_back({10, 1, 1, "a", "z"});  // L1 full now
  p = Pick(rs, o);
  EXPECT_EQ(p.output_level, 2u);
  EXPECT_EQ(p.ids, (Ids{1, 2, 10}));
}

TEST(PickerTest, TieredMaxLevelMergesInPlace) {
  std::vector<R> rs = {{1, kMax, 1, "a", "z"}, {2, kMax, 1, "a", "z"}};
  LsmPickOptions o = Opts(LSM_POLICY_TIERED, 3, 4, 10);
  EXPECT_EQ(Pick(rs, o).kind, LSM_PICK_NONE);
  rs.push_back({3, kMax, 1, "b", "c"});
  Picked p = Pick(rs, o);
  EXPECT_EQ(p.kind, LSM_PICK_MERGE);
  EXPECT_EQ(p.output_level, kMax);
  EXPECT_EQ(p.ids, (Ids{1, 2, 3}));
}

// ---------------------------------------------------------------------------
// Lazy leveling

TEST(PickerTest, LazyL0TriggerTakesL1OnlyWhenItIsTheLastLevel) {
  std::vector<R> rs = {{1, 1, 5, "a", "z"}, {10, 0, 1, "c", "d"},
                       {11, 0, 1, "a", "b"}};
  LsmPickOptions o = Opts(LSM_POLICY_LAZY, 4, 2, 10);
  Picked p = Pick(rs, o);
  EXPECT_EQ(p.kind, LSM_PICK_MERGE);
  EXPECT_EQ(p.output_level, 1u);
  EXPECT_EQ(p.ids, (Ids{11, 10, 1}));
  rs.push_back({2, 2, 100, "a", "z"});  // last = 2: L1 is a tier
  p = Pick(rs, o);
  EXPECT_EQ(p.ids, (Ids{11, 10}));
  EXPECT_EQ(p.output_level, 1u);
  // A single L0 run with nothing under it: moved.
  rs = {{10, 0, 1, "c", "d"}};
  p = Pick(rs, Opts(LSM_POLICY_LAZY, 4, 1, 10));
  EXPECT_EQ(p.kind, LSM_PICK_MOVE);
  EXPECT_EQ(p.output_level, 1u);
}

TEST(PickerTest, LazyTiersMergeAndFeedTheLastLevel) {
  LsmPickOptions o = Opts(LSM_POLICY_LAZY, 3, 4, 10);
  std::vector<R> rs = {{1, 3, 200, "a", "z"},
                       {2, 2, 5, "a", "z"}, {3, 2, 5, "a", "z"},
                       {4, 2, 5, "b", "y"}};
  Picked p = Pick(rs, o);  // L2 full, L3 is last: L2 + L3 -> L3
  EXPECT_EQ(p.kind, LSM_PICK_MERGE);
  EXPECT_EQ(p.output_level, 3u);
  EXPECT_EQ(p.ids, (Ids{2, 3, 4, 1}));
  EXPECT_EQ(p.reason, "level 2 holds size_ratio runs");
  rs.push_back({5, 1, 1, "a", "z"});
  rs.push_back({6, 1, 1, "a", "z"});
  rs.push_back({7, 1, 1, "a", "z"});  // L1 full: lowest first, into L2 only
  p = Pick(rs, o);
  EXPECT_EQ(p.output_level, 2u);
  EXPECT_EQ(p.ids, (Ids{5, 6, 7}));
}

TEST(PickerTest, LazyLastLevelOverTargetMoves) {
  LsmPickOptions o = Opts(LSM_POLICY_LAZY, 3, 4, 10);
  std::vector<R> rs = {{1, 2, 30, "a", "z"}, {2, 1, 5, "a", "z"}};
  EXPECT_EQ(Pick(rs, o).kind, LSM_PICK_NONE);  // 30 <= 10 * 3
  rs[0].pages = 31;
  Picked p = Pick(rs, o);
  EXPECT_EQ(p.kind, LSM_PICK_MOVE);
  EXPECT_EQ(p.output_level, 3u);
  EXPECT_EQ(p.ids, Ids{1});
  EXPECT_EQ(p.reason, "last level 2 over target");
  rs[0].busy = true;
  EXPECT_EQ(Pick(rs, o).kind, LSM_PICK_NONE);
  rs = {{1, kMax, 1000000000, "a", "z"}};  // nowhere to go
  EXPECT_EQ(Pick(rs, o).kind, LSM_PICK_NONE);
  // Several runs on the last level (another policy left them): one run.
  rs = {{1, 4, 5, "a", "z"}, {2, 4, 5, "b", "c"}, {3, 2, 5, "a", "z"}};
  p = Pick(rs, o);
  EXPECT_EQ(p.kind, LSM_PICK_MERGE);
  EXPECT_EQ(p.output_level, 4u);
  EXPECT_EQ(p.ids, (Ids{1, 2}));
  EXPECT_EQ(p.reason, "last level 4 holds several runs");
}

// ---------------------------------------------------------------------------
// Manifest pressure

TEST(PickerTest, PressureComesFirstAndMergesAdjacentRuns) {
  std::vector<R> rs;
  for (uint32_t i = 0; i < 4; i++) rs.push_back({100 + i, 0, 1, "a", "z"});
  // L1: ten disjoint runs; the cheapest 8 adjacent ones are runs 2..9.
  const uint64_t pages[10] = {50, 3, 3, 3, 3, 3, 3, 3, 3, 4};
  for (uint32_t i = 0; i < 10; i++)
    rs.push_back({1 + i, 1, pages[i], K(i * 10), K(i * 10 + 5)});
  for (uint32_t i = 0; i < 3; i++)
    rs.push_back({20 + i, 2, 1, K(i * 100), K(i * 100 + 50)});
  // 17 runs > 20 * 3 / 4.
  LsmPickOptions o = Opts(LSM_POLICY_LEVELED, 10, 4, 1000, 20);
  Picked p = Pick(rs, o);
  ASSERT_EQ(p.status, LSM_OK);
  EXPECT_EQ(p.kind, LSM_PICK_MERGE);
  EXPECT_EQ(p.reason, "manifest pressure");
  EXPECT_EQ(p.output_level, 1u);
  EXPECT_EQ(p.ids, (Ids{2, 3, 4, 5, 6, 7, 8, 9}));
  EXPECT_DOUBLE_EQ(p.score, 17.0 / 20);
  // At the threshold: the L0 trigger instead.
  o.max_runs = 23;  // 23 * 3 / 4 = 17
  p = Pick(rs, o);
  EXPECT_EQ(p.reason, "L0 trigger");
  // A busy run splits the level: windows never span it.
  o.max_runs = 20;
  rs[4 + 3].busy = true;  // run 4
  p = Pick(rs, o);
  EXPECT_EQ(p.ids, (Ids{5, 6, 7, 8, 9, 10}));
}

TEST(PickerTest, PressureOnOverlappingLevelsTakesTheSmallestRuns) {
  // Only L0 has several runs.
  std::vector<R> rs = {{1, 0, 5, "a", "z"}, {2, 0, 1, "a", "b"},
                       {3, 0, 2, "c", "d"}, {4, 0, 1, "e", "f"},
                       {5, 2, 9, "a", "z"}};
  LsmPickOptions o = Opts(LSM_POLICY_LEVELED, 4, 10, 1000, 4);
  Picked p = Pick(rs, o);
  EXPECT_EQ(p.reason, "manifest pressure");
  EXPECT_EQ(p.output_level, 0u);
  EXPECT_EQ(p.ids, (Ids{1, 2, 3, 4}));
  // Tiered L3 with 12 runs: the 8 smallest.
  rs.clear();
  for (uint32_t i = 0; i < 12; i++)
    rs.push_back({i + 1, 3, (i * 7) % 12 + 1u, "a", "z"});
  o = Opts(LSM_POLICY_TIERED, 100, 4, 10, 8);
  p = Pick(rs, o);
  EXPECT_EQ(p.output_level, 3u);
  ASSERT_EQ(p.ids.size(), 8u);
  for (uint32_t id : p.ids) EXPECT_LE((id - 1) * 7 % 12 + 1, 8u) << id;
  // The level with the most runs goes first.
  rs = {{1, 1, 1, "a", "z"}, {2, 1, 1, "a", "z"}, {3, 4, 1, "a", "z"},
        {4, 4, 1, "a", "z"}, {5, 4, 1, "a", "z"}};
  p = Pick(rs, Opts(LSM_POLICY_TIERED, 100, 4, 10, 4));
  EXPECT_EQ(p.output_level, 4u);
  EXPECT_EQ(p.ids, (Ids{3, 4, 5}));
  // Too many of its runs busy: the next level.
  rs[2].busy = rs[3].busy = true;
  p = Pick(rs, Opts(LSM_POLICY_TIERED, 100, 4, 10, 4));
  EXPECT_EQ(p.output_level, 1u);
  EXPECT_EQ(p.ids, (Ids{1, 2}));
}

// ---------------------------------------------------------------------------
// Input limits, level stats

TEST(PickerTest, InputsAreCapped) {
  std::vector<R> rs;
  for (uint32_t i = 0; i < 600; i++)
    rs.push_back({1000 - i, 0, 1, K(i), K(i + 5000)});
  for (uint32_t i = 0; i < 10; i++)
    rs.push_back({2000 + i, 1, 1, K(100 + 2 * i), K(101 + 2 * i)});
  Picked p = Pick(rs, Opts(LSM_POLICY_LEVELED, 4, 4, 1000000));
  ASSERT_EQ(p.kind, LSM_PICK_MERGE);
  ASSERT_EQ(p.ids.size(), static_cast<size_t>(LSM_PICK_MAX_INPUTS));
  // The 502 oldest L0 runs (ids 401..902) and all ten L1 runs.
  std::set<uint32_t> got(p.ids.begin(), p.ids.end());
  EXPECT_EQ(got.size(), p.ids.size());
  for (uint32_t id = 401; id <= 902; id++) EXPECT_TRUE(got.count(id)) << id;
  for (uint32_t id = 2000; id < 2010; id++) EXPECT_TRUE(got.count(id));

  p = Pick(rs, Opts(LSM_POLICY_TIERED, 4, 4, 1000000));
  ASSERT_EQ(p.ids.size(), static_cast<size_t>(LSM_PICK_MAX_INPUTS));
  got = std::set<uint32_t>(p.ids.begin(), p.ids.end());
  EXPECT_TRUE(got.count(401) && got.count(912) && !got.count(913));
}

TEST(PickerTest, LevelStats) {
  std::vector<R> rs = {{1, 0, 1, "a", "b"},     {2, 0, 1, "a", "b"},
                       {3, 1, 12, "a", "b"},    {4, 2, 20, "a", "b"},
                       {5, kMax, 200000, "a", "z"}};
  rs[2].busy = true;
  std::vector<LsmPickRun> runs = ToPick(rs);
  LsmPickOptions o = Opts(LSM_POLICY_LEVELED, 4, 4, 10);
  LsmPickLevelStats st[kMax + 1];
  for (uint32_t lv = 0; lv <= kMax; lv++)
    ASSERT_EQ(lsm_pick_level_stats(runs.data(), runs.size(), &o, lv, &st[lv]),
              LSM_OK);
  EXPECT_EQ(st[0].nruns, 2u);
  EXPECT_DOUBLE_EQ(st[0].score, 0.5);
  EXPECT_EQ(st[0].target_pages, 0u);
  EXPECT_EQ(st[0].needs_work, 0);
  EXPECT_EQ(st[1].nbusy, 1u);
  EXPECT_EQ(st[1].pages, 12u);
  EXPECT_EQ(st[1].target_pages, 10u);
  EXPECT_DOUBLE_EQ(st[1].score, 1.2);
  EXPECT_EQ(st[1].needs_work, 1);  // busy flags ignored
  EXPECT_EQ(st[2].target_pages, 40u);
  EXPECT_EQ(st[2].needs_work, 0);
  EXPECT_EQ(st[kMax].target_pages, 10u << (2 * (kMax - 1)));
  EXPECT_GT(st[kMax].score, 1.0);
  EXPECT_EQ(st[kMax].needs_work, 0);  // nowhere to go
  EXPECT_EQ(st[3].nruns, 0u);
  EXPECT_EQ(st[3].overlapping, 0);

  o.policy = LSM_POLICY_LAZY;  // last = 8: levels 1..7 are tiers
  ASSERT_EQ(lsm_pick_level_stats(runs.data(), runs.size(), &o, 1, &st[1]),
            LSM_OK);
  EXPECT_EQ(st[1].target_pages, 0u);
  EXPECT_DOUBLE_EQ(st[1].score, 0.25);
  EXPECT_EQ(st[1].needs_work, 0);
  // Saturating targets.
  o = Opts(LSM_POLICY_LEVELED, 0xFFFFFFFFu, 4, UINT64_MAX / 2);
  ASSERT_EQ(lsm_pick_level_stats(runs.data(), runs.size(), &o, kMax, &st[0]),
            LSM_OK);
  EXPECT_EQ(st[0].target_pages, UINT64_MAX);
}

// ---------------------------------------------------------------------------
// Random configurations: properties every pick must have.

struct RandomConfig {
  std::vector<R> runs;
  LsmPickOptions opt;
};

// Keeps the invariants the policy maintains: disjoint leveled levels (and
// lazy's last level at most one run), with a small key universe so that
// ranges of different levels overlap often.
RandomConfig MakeConfig(std::mt19937* rng, LsmCompactionPolicy policy,
                        double busy_p) {
  auto uni = [rng](uint64_t lo, uint64_t hi) {
    return std::uniform_int_distribution<uint64_t>(lo, hi)(*rng);
  };
  RandomConfig c;
  c.opt = Opts(policy, static_cast<uint32_t>(uni(2, 5)),
               static_cast<uint32_t>(uni(1, 5)), uni(1, 60),
               static_cast<uint32_t>(uni(3, 48)));
  uint32_t id = 1;
  const uint32_t deepest = static_cast<uint32_t>(uni(0, kMax));
  for (uint32_t lv = deepest; lv != UINT32_MAX; lv--) {  // older is deeper
    size_t n = uni(0, lv == 0 ? 7 : 6);
    bool disjoint = lv >= 1 && policy == LSM_POLICY_LEVELED;
    if (policy == LSM_POLICY_LAZY && lv == deepest && lv >= 1) n = uni(1, 1);
    if (disjoint) {
      std::set<uint64_t> ends;
      while (ends.size() < 2 * n) ends.insert(uni(0, 400));
      std::vector<uint64_t> e(ends.begin(), ends.end());
      std::vector<uint32_t> ids;
      for (size_t i = 0; i < n; i++) ids.push_back(id++);
      std::shuffle(ids.begin(), ids.end(), *rng);
      for (size_t i = 0; i < n; i++)
        c.runs.push_back({ids[i], lv, uni(1, 100), K(e[2 * i]),
                          K(e[2 * i + 1])});
    } else {
      for (size_t i = 0; i < n; i++) {
        uint64_t a = uni(0, 400), b = uni(0, 400);
        c.runs.push_back(
            {id++, lv, uni(1, 100), K(std::min(a, b)), K(std::max(a, b))});
      }
    }
  }
  for (R& r : c.runs) r.busy = uni(0, 999) < busy_p * 1000;
  std::shuffle(c.runs.begin(), c.runs.end(), *rng);
  return c;
}

bool LevelDisjoint(const std::vector<R>& rs, uint32_t lv) {
  std::vector<std::pair<Key, Key>> v;
  for (const R& r : rs)
    if (r.level == lv) v.emplace_back(r.min, r.max);
  std::sort(v.begin(), v.end());
  for (size_t i = 1; i < v.size(); i++)
    if (v[i].first <= v[i - 1].second) return false;
  return true;
}

// Structure every pick has, whatever the rule.
void CheckShape(const std::vector<R>& rs, const LsmPick& p) {
  ASSERT_TRUE(p.kind == LSM_PICK_NONE || p.kind == LSM_PICK_MERGE ||
              p.kind == LSM_PICK_MOVE);
  ASSERT_NE(p.reason, nullptr);
  if (p.kind == LSM_PICK_NONE) {
    ASSERT_EQ(p.ninputs, 0u);
    return;
  }
  ASSERT_LE(p.output_level, kMax);
  ASSERT_LE(p.ninputs, static_cast<uint32_t>(LSM_PICK_MAX_INPUTS));
  if (p.kind == LSM_PICK_MOVE) {
    ASSERT_EQ(p.ninputs, 1u);
    ASSERT_EQ(p.output_level, rs[p.inputs[0]].level + 1);
  } else {
    ASSERT_GE(p.ninputs, 2u);
  }
  std::set<uint32_t> seen;
  uint32_t lo = kMax, hi = 0;
  for (uint32_t i = 0; i < p.ninputs; i++) {
    ASSERT_LT(p.inputs[i], rs.size());
    ASSERT_TRUE(seen.insert(p.inputs[i]).second) << "input twice";
    const R& r = rs[p.inputs[i]];
    ASSERT_FALSE(r.busy) << "busy run " << r.id << " picked (" << p.reason
                         << ")";
    lo = std::min(lo, r.level);
    hi = std::max(hi, r.level);
    if (i > 0) {  // by level, then min key, then run_id
      const R& q = rs[p.inputs[i - 1]];
      ASSERT_TRUE(q.level < r.level ||
                  (q.level == r.level &&
                   (q.min < r.min || (q.min == r.min && q.id < r.id))))
          << "inputs out of order";
    }
  }
  ASSERT_GE(p.output_level, hi);
  ASSERT_LE(p.output_level, lo + 1);
}

TEST(PickerTest, RandomConfigurationsProperties) {
  std::mt19937 rng(4242);
  int picks = 0, pressure = 0;
  for (int round = 0; round < 6000; round++) {
    const auto policy = static_cast<LsmCompactionPolicy>(round % 3);
    const double busy_p = (round / 3) % 3 == 0 ? 0.0 : 0.25;
    RandomConfig c = MakeConfig(&rng, policy, busy_p);
    std::vector<LsmPickRun> runs = ToPick(c.runs);
    LsmPick p;
    ASSERT_EQ(lsm_pick_compaction(runs.data(), runs.size(), &c.opt, &p),
              LSM_OK);
    CheckShape(c.runs, p);
    if (HasFailure()) return;
    picks += p.kind != LSM_PICK_NONE;

    // Deterministic: the same pick (as run ids) from a shuffled manifest.
    std::vector<R> shuffled = c.runs;
    std::shuffle(shuffled.begin(), shuffled.end(), rng);
    std::vector<LsmPickRun> runs2 = ToPick(shuffled);
    LsmPick p2;
    ASSERT_EQ(lsm_pick_compaction(runs2.data(), runs2.size(), &c.opt, &p2),
              LSM_OK);
    ASSERT_EQ(p.kind, p2.kind);
    ASSERT_EQ(p.output_level, p2.output_level);
    ASSERT_EQ(p.ninputs, p2.ninputs);
    for (uint32_t i = 0; i < p.ninputs; i++)
      ASSERT_EQ(c.runs[p.inputs[i]].id, shuffled[p2.inputs[i]].id);
    ASSERT_STREQ(p.reason, p2.reason);

    // Levels kept disjoint stay disjoint.
    const bool pressured = runs.size() > c.opt.max_runs * 3u / 4;
    if (p.kind != LSM_PICK_NONE && policy == LSM_POLICY_LEVELED) {
      Picked pk;
      pk.kind = p.kind;
      pk.output_level = p.output_level;
      for (uint32_t i = 0; i < p.ninputs; i++)
        pk.ids.push_back(c.runs[p.inputs[i]].id);
      std::vector<R> after = c.runs;
      uint32_t next_id = 100000;
      ApplyRanges(&after, pk, &next_id);
      for (uint32_t lv = 1; lv <= kMax; lv++)
        ASSERT_TRUE(LevelDisjoint(after, lv))
            << "round " << round << ": level " << lv << " overlaps after "
            << p.reason;
    }

    bool any_busy = false;
    std::map<uint32_t, int> per_level;
    for (const R& r : c.runs) {
      any_busy |= r.busy;
      per_level[r.level]++;
    }
    bool some_level_2 = false;
    for (auto& kv : per_level) some_level_2 |= kv.second >= 2;
    if (pressured && !any_busy && some_level_2) {
      // Manifest pressure always finds a merge that shrinks the manifest.
      pressure++;
      ASSERT_EQ(p.kind, LSM_PICK_MERGE) << "round " << round;
      ASSERT_STREQ(p.reason, "manifest pressure");
      ASSERT_LE(p.ninputs, 8u);
      for (uint32_t i = 0; i < p.ninputs; i++)
        ASSERT_EQ(c.runs[p.inputs[i]].level, p.output_level);
    }
    if (!pressured && !any_busy) {
      // Level stats agree with the picker.
      int needs = 0;
      for (uint32_t lv = 0; lv <= kMax; lv++) {
        LsmPickLevelStats st;
        ASSERT_EQ(lsm_pick_level_stats(runs.data(), runs.size(), &c.opt, lv,
                                       &st),
                  LSM_OK);
        needs += st.needs_work;
        ASSERT_EQ(st.nruns, static_cast<uint32_t>(per_level[lv]));
      }
      ASSERT_EQ(p.kind != LSM_PICK_NONE, needs > 0) << "round " << round;
    }
  }
  EXPECT_GT(picks, 1000);
  EXPECT_GT(pressure, 100);
}

// ---------------------------------------------------------------------------
// Simulation: flush memtables of random or sequential keys as L0 runs, apply
// every pick by merging key sets in memory, until the picker says NONE.

constexpr uint64_t kKeysPerPage = 16;

struct SimRun {
  uint32_t id;
  uint32_t level;
  std::vector<uint64_t> keys;  // ascending
  Key min, max;
  uint64_t pages;
  bool busy = false;
};

struct InFlight {
  LsmPickKind kind;
  uint32_t output_level;
  std::vector<uint32_t> ids;
  std::string reason;
};

uint64_t SplitMix(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

class Sim {
 public:
  explicit Sim(const LsmPickOptions& opt) : opt_(opt) {}

  void Flush(std::vector<uint64_t> keys) {
    std::sort(keys.begin(), keys.end());
    inserted_ += keys.size();
    SimRun r = MakeRun(0, std::move(keys));
    pages_flushed_ += r.pages;
    runs_.push_back(std::move(r));
  }

  // The next pick (busy runs flagged); kind NONE when nothing to do.
  InFlight Pick() {
    std::vector<LsmPickRun> v;
    for (const SimRun& r : runs_) {
      LsmPickRun p{};
      p.run_id = r.id;
      p.level = r.level;
      p.pages = r.pages;
      p.nentries = r.keys.size();
      p.min_key = U8(r.min);
      p.min_len = r.min.size();
      p.max_key = U8(r.max);
      p.max_len = r.max.size();
      p.busy = r.busy;
      v.push_back(p);
    }
    LsmPick p;
    InFlight f{LSM_PICK_NONE, 0, {}, ""};
    EXPECT_EQ(lsm_pick_compaction(v.data(), v.size(), &opt_, &p), LSM_OK);
    std::vector<R> rs;
    for (const SimRun& r : runs_)
      rs.push_back({r.id, r.level, r.pages, r.min, r.max, r.busy});
    CheckShape(rs, p);
    if (p.kind == LSM_PICK_NONE) return f;
    f.kind = p.kind;
    f.output_level = p.output_level;
    f.reason = p.reason;
    for (uint32_t i = 0; i < p.ninputs; i++)
      f.ids.push_back(runs_[p.inputs[i]].id);
    return f;
  }

  void Start(const InFlight& f) {
    for (uint32_t id : f.ids) Find(id)->busy = true;
  }

  void Apply(const InFlight& f) {
    if (f.kind == LSM_PICK_MOVE) {
      SimRun* r = Find(f.ids[0]);
      r->level = f.output_level;
      r->busy = false;
      moves_++;
      return;
    }
    std::vector<uint64_t> keys;
    for (uint32_t id : f.ids) {
      SimRun* r = Find(id);
      keys.insert(keys.end(), r->keys.begin(), r->keys.end());
    }
    std::sort(keys.begin(), keys.end());
    ASSERT_TRUE(std::adjacent_find(keys.begin(), keys.end()) == keys.end())
        << "a key in two runs";
    runs_.erase(std::remove_if(runs_.begin(), runs_.end(),
                               [&](const SimRun& r) {
                                 return std::find(f.ids.begin(), f.ids.end(),
                                                  r.id) != f.ids.end();
                               }),
                runs_.end());
    SimRun out = MakeRun(f.output_level, std::move(keys));
    pages_merged_ += out.pages;
    merges_++;
    if (f.reason == "manifest pressure") pressure_merges_++;
    runs_.push_back(std::move(out));
  }

  // Picks and applies until NONE; false if it does not settle.
  bool Settle() {
    for (int i = 0; i < 100000; i++) {
      InFlight f = Pick();
      if (f.kind == LSM_PICK_NONE) return true;
      Apply(f);
      CheckDisjoint();
      if (::testing::Test::HasFailure()) return false;
    }
    ADD_FAILURE() << "the picker does not settle";
    return false;
  }

  // Leveled levels >= 1 never overlap.
  void CheckDisjoint() const {
    if (opt_.policy != LSM_POLICY_LEVELED) return;
    std::vector<R> rs;
    for (const SimRun& r : runs_)
      rs.push_back({r.id, r.level, r.pages, r.min, r.max});
    for (uint32_t lv = 1; lv <= kMax; lv++)
      ASSERT_TRUE(LevelDisjoint(rs, lv)) << "level " << lv << " overlaps";
  }

  // What must hold when the picker has nothing more to do.
  void CheckSettled() const {
    uint32_t count[kMax + 1] = {};
    uint64_t pages[kMax + 1] = {};
    uint64_t entries = 0;
    for (const SimRun& r : runs_) {
      count[r.level]++;
      pages[r.level] += r.pages;
      entries += r.keys.size();
    }
    ASSERT_EQ(entries, inserted_);
    ASSERT_LT(count[0], opt_.l0_trigger);
    ASSERT_LE(runs_.size(), opt_.max_runs);
    uint32_t last = 1;
    for (uint32_t lv = 1; lv <= kMax; lv++)
      if (count[lv] > 0) last = lv;
    uint64_t target = opt_.level_base_pages;
    for (uint32_t lv = 1; lv <= kMax; lv++, target *= opt_.size_ratio) {
      switch (opt_.policy) {
        case LSM_POLICY_LEVELED:
          if (lv < kMax) {
            ASSERT_LE(pages[lv], target) << "level " << lv;
          }
          break;
        case LSM_POLICY_TIERED:
          ASSERT_LT(count[lv], opt_.size_ratio) << "level " << lv;
          break;
        case LSM_POLICY_LAZY:
          if (lv < last) {
            ASSERT_LT(count[lv], opt_.size_ratio) << "level " << lv;
          }
          if (lv == last) {
            ASSERT_LE(count[lv], 1u) << "last level " << lv;
            if (lv < kMax) {
              ASSERT_LE(pages[lv], target) << "last level " << lv;
            }
          }
          break;
      }
    }
  }

  // Every key inserted is in exactly one run.
  void CheckKeys(std::vector<uint64_t> inserted) const {
    std::vector<uint64_t> all;
    for (const SimRun& r : runs_) {
      ASSERT_TRUE(std::is_sorted(r.keys.begin(), r.keys.end()));
      all.insert(all.end(), r.keys.begin(), r.keys.end());
    }
    std::sort(all.begin(), all.end());
    std::sort(inserted.begin(), inserted.end());
    ASSERT_EQ(all, inserted);
  }

  std::vector<SimRun>& runs() { return runs_; }
  double WriteAmp() const {
    return static_cast<double>(pages_merged_) /
           static_cast<double>(pages_flushed_);
  }
  uint64_t merges() const { return merges_; }
  uint64_t moves() const { return moves_; }
  uint64_t pressure_merges() const { return pressure_merges_; }
  std::string Shape() const {
    uint32_t count[kMax + 1] = {};
    for (const SimRun& r : runs_) count[r.level]++;
    std::string s;
    for (uint32_t lv = 0; lv <= kMax; lv++)
      s += (lv ? "/" : "") + std::to_string(count[lv]);
    return s;
  }

 private:
  SimRun MakeRun(uint32_t level, std::vector<uint64_t> keys) {
    SimRun r;
    r.id = next_id_++;
    r.level = level;
    r.min = K(keys.front());
    r.max = K(keys.back());
    r.pages = (keys.size() + kKeysPerPage - 1) / kKeysPerPage;
    r.keys = std::move(keys);
    return r;
  }
  SimRun* Find(uint32_t id) {
    for (SimRun& r : runs_)
      if (r.id == id) return &r;
    ADD_FAILURE() << "no run " << id;
    static SimRun dummy;
    return &dummy;
  }

  const LsmPickOptions opt_;
  std::vector<SimRun> runs_;
  uint32_t next_id_ = 1;
  uint64_t inserted_ = 0;
  uint64_t pages_flushed_ = 0, pages_merged_ = 0;
  uint64_t merges_ = 0, moves_ = 0, pressure_merges_ = 0;
};

const char* PolicyName(LsmCompactionPolicy p) {
  switch (p) {
    case LSM_POLICY_LEVELED:
      return "leveled";
    case LSM_POLICY_TIERED:
      return "tiered";
    case LSM_POLICY_LAZY:
      return "lazy";
  }
  return "?";
}

struct SimConfig {
  LsmCompactionPolicy policy;
  bool sequential;
  uint32_t l0_trigger;
  int concurrency;  // compactions in flight at most; 1: one at a time
};

void RunSimulation(const SimConfig& cfg, int flushes, size_t keys_per_flush) {
  const LsmPickOptions o = Opts(cfg.policy, 4, cfg.l0_trigger, 16, 64);
  Sim sim(o);
  std::mt19937 rng(cfg.policy * 100 + cfg.sequential * 10 + cfg.concurrency);
  std::vector<uint64_t> inserted;
  std::vector<InFlight> flight;
  uint64_t counter = 0;
  for (int f = 0; f < flushes; f++) {
    std::vector<uint64_t> keys;
    for (size_t i = 0; i < keys_per_flush; i++, counter++)
      keys.push_back(cfg.sequential ? counter : SplitMix(counter));
    inserted.insert(inserted.end(), keys.begin(), keys.end());
    sim.Flush(std::move(keys));
    if (cfg.concurrency <= 1) {
      ASSERT_TRUE(sim.Settle()) << "flush " << f;
      sim.CheckSettled();
      ASSERT_FALSE(::testing::Test::HasFailure())
          << PolicyName(cfg.policy) << " flush " << f << " " << sim.Shape();
      continue;
    }
    // Several compactions in flight, finishing in random order.
    for (;;) {
      if (static_cast<int>(flight.size()) >= cfg.concurrency) break;
      InFlight p = sim.Pick();
      if (p.kind == LSM_PICK_NONE) break;
      sim.Start(p);
      flight.push_back(p);
    }
    ASSERT_FALSE(::testing::Test::HasFailure());
    for (size_t i = 0; i < flight.size();) {
      if (rng() % 3 == 0) {
        i++;
        continue;
      }
      sim.Apply(flight[i]);
      flight.erase(flight.begin() + i);
      sim.CheckDisjoint();
      ASSERT_FALSE(::testing::Test::HasFailure())
          << PolicyName(cfg.policy) << " flush " << f;
    }
  }
  for (const InFlight& p : flight) sim.Apply(p);
  ASSERT_TRUE(sim.Settle());
  sim.CheckSettled();
  sim.CheckKeys(inserted);
  if (cfg.policy == LSM_POLICY_LEVELED && cfg.sequential &&
      cfg.l0_trigger == 1 && cfg.concurrency <= 1) {
    EXPECT_EQ(sim.merges(), sim.pressure_merges())
        << "sequential keys: only moves (and pressure merges)";
  }
  std::printf(
      "[ picker   ] %-7s %-10s l0_trigger %u, %d in flight: write amp %5.2f "
      "(%llu merges, %llu moves, %llu pressure), runs by level %s\n",
      PolicyName(cfg.policy), cfg.sequential ? "sequential" : "random",
      cfg.l0_trigger, cfg.concurrency, sim.WriteAmp(),
      static_cast<unsigned long long>(sim.merges()),
      static_cast<unsigned long long>(sim.moves()),
      static_cast<unsigned long long>(sim.pressure_merges()),
      sim.Shape().c_str());
}

void PrintTo(const SimConfig& c, std::ostream* os) {
  *os << PolicyName(c.policy) << (c.sequential ? " sequential" : " random")
      << " l0_trigger " << c.l0_trigger << " concurrency " << c.concurrency;
}

class PickerSimTest : public ::testing::TestWithParam<SimConfig> {};

TEST_P(PickerSimTest, SimulatedTree) {
  RunSimulation(GetParam(), 3000, 64);
}

INSTANTIATE_TEST_SUITE_P(
    Policies, PickerSimTest,
    ::testing::Values(SimConfig{LSM_POLICY_LEVELED, false, 4, 1},
                      SimConfig{LSM_POLICY_LEVELED, true, 4, 1},
                      SimConfig{LSM_POLICY_LEVELED, true, 1, 1},
                      SimConfig{LSM_POLICY_TIERED, false, 4, 1},
                      SimConfig{LSM_POLICY_TIERED, true, 4, 1},
                      SimConfig{LSM_POLICY_LAZY, false, 4, 1},
                      SimConfig{LSM_POLICY_LAZY, true, 4, 1},
                      SimConfig{LSM_POLICY_LEVELED, false, 4, 3},
                      SimConfig{LSM_POLICY_LEVELED, true, 2, 3},
                      SimConfig{LSM_POLICY_TIERED, false, 4, 3},
                      SimConfig{LSM_POLICY_LAZY, true, 4, 3}));

}  // namespace
