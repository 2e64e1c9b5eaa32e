// rate_test.cc — the delayed write rate (lsm_core_rate.h): measurement,
// the start of a delay, its fall and rise with the debt, the bounds, the
// shared clock, and a simulated index whose workers drain its debt.

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>

#include "lsm_core.h"

namespace {

constexpr int64_t kSec = 1000000;

struct Rate {
  LsmWriteRate w{};
  int delayed = 0;
  int64_t Batch(uint64_t bytes, uint32_t debt, int64_t now, int help = 1) {
    return lsm_write_rate_batch(&w, bytes, debt, help, now, &delayed);
  }
};

// Feed `bytes` a second for `secs` seconds in 100 batches a second, out of
// debt, starting at t (microseconds); returns the time after.
int64_t Steady(Rate& r, uint64_t bytes_per_sec, int secs, int64_t t) {
  for (int i = 0; i < secs * 100; i++, t += kSec / 100)
    EXPECT_EQ(r.Batch(bytes_per_sec / 100, 0, t), 0);
  return t;
}

TEST(WriteRate, OutOfDebtNothingIsDelayed) {
  Rate r;
  int64_t t = Steady(r, 1 << 20, 3, kSec);
  EXPECT_EQ(r.delayed, 0);
  EXPECT_EQ(r.w.rate, 0.0);
  // the rate of the last whole window: about 1 MB/s
  EXPECT_NEAR(r.w.measured, 1 << 20, (1 << 20) * 0.02);
  EXPECT_EQ(r.Batch(8192, 0, t), 0);
}

TEST(WriteRate, DebtStartsBelowTheMeasuredRateAndSharesOneClock) {
  Rate r;
  int64_t t = Steady(r, 1 << 20, 3, kSec);
  // three writers' batches at the same moment take turns
  int64_t a = r.Batch(8192, 1, t);
  EXPECT_EQ(r.delayed, 1);
  EXPECT_NEAR(r.w.measured, 1 << 20, (1 << 20) * 0.02);
  EXPECT_DOUBLE_EQ(r.w.rate, r.w.measured * LSM_RATE_DEC);
  int64_t b = r.Batch(8192, 1, t);
  int64_t c = r.Batch(8192, 1, t);
  int64_t per = static_cast<int64_t>(8192 * 1e6 / r.w.rate);
  EXPECT_NEAR(a, per, 1);
  EXPECT_NEAR(b, 2 * per, 2);
  EXPECT_NEAR(c, 3 * per, 3);
}

TEST(WriteRate, FallsWithGrowingDebtRisesWithShrinkingNeverAboveTheStart) {
  Rate r;
  int64_t t = Steady(r, 4 << 20, 2, kSec);
  r.Batch(100, 1, t);
  double start = r.w.rate, max = r.w.max_rate;
  EXPECT_DOUBLE_EQ(start, max * LSM_RATE_DEC);
  r.Batch(100, 2, t);
  EXPECT_DOUBLE_EQ(r.w.rate, start * LSM_RATE_DEC);
  r.Batch(100, 4, t);  // two units at once
  EXPECT_DOUBLE_EQ(r.w.rate, start * LSM_RATE_DEC * LSM_RATE_DEC * LSM_RATE_DEC);
  r.Batch(100, 3, t);
  EXPECT_DOUBLE_EQ(r.w.rate, start * LSM_RATE_DEC * LSM_RATE_DEC * LSM_RATE_DEC * LSM_RATE_INC);
  for (uint32_t d = 3; d >= 1; d--) r.Batch(100, d, t);
  for (int i = 0; i < 20; i++) r.Batch(100, 1, t);
  EXPECT_LE(r.w.rate, max);
  // a debt paid in one go (a merge took 8 level-0 runs) rises by at most
  // LSM_RATE_MAX_STEPS units
  r.Batch(100, 12, t);
  double low = r.w.rate;
  r.Batch(100, 1, t);
  EXPECT_LE(r.w.rate, low * 1.25 * 1.25 * 1.25 * 1.25 * 1.0001);
  // out of debt: the next debt starts again from the measured rate
  r.Batch(100, 0, t);
  EXPECT_EQ(r.w.rate, 0.0);
  EXPECT_EQ(r.w.debt, 0u);
}

TEST(WriteRate, Bounds) {
  Rate r;
  // nothing measured: LSM_RATE_FIRST
  r.Batch(8192, 1, kSec);
  EXPECT_DOUBLE_EQ(r.w.max_rate, LSM_RATE_FIRST);
  // the floor
  for (uint32_t d = 2; d < 200; d++) r.Batch(1, d, kSec);
  EXPECT_DOUBLE_EQ(r.w.rate, LSM_RATE_MIN);
  // one batch sleeps at most LSM_RATE_MAX_SLEEP_US, however far the clock is
  int64_t s = 0;
  for (int i = 0; i < 100; i++) s = r.Batch(1 << 20, 199, kSec);
  EXPECT_EQ(s, LSM_RATE_MAX_SLEEP_US);
}

TEST(WriteRate, NoHelpNoDelay) {
  Rate r;
  int64_t t = Steady(r, 1 << 20, 2, kSec);
  EXPECT_EQ(r.Batch(8192, 5, t, /*help=*/0), 0);
  EXPECT_EQ(r.delayed, 0);
  EXPECT_EQ(r.w.rate, 0.0);
}

TEST(WriteRate, AnIdleWindowMeasuresNothing) {
  Rate r;
  int64_t t = Steady(r, 1 << 20, 2, kSec);
  EXPECT_GT(r.w.measured, 0.0);
  // one batch after ten idle seconds: its window says nothing of the pace
  t += 10 * kSec;
  r.Batch(100, 0, t);
  r.Batch(100, 0, t + 3 * kSec);
  EXPECT_EQ(r.w.measured, 0.0);
  r.Batch(8192, 1, t + 3 * kSec);
  EXPECT_DOUBLE_EQ(r.w.max_rate, LSM_RATE_FIRST);
}

TEST(WriteRate, TheClockCannotGoBackwardsIntoALongSleep) {
  Rate r;
  int64_t t = Steady(r, 1 << 20, 2, 5 * kSec);
  r.Batch(8192, 1, t);
  // a timestamp from before the window (another backend's, a step back)
  int64_t s = r.Batch(8192, 1, t - 2 * kSec);
  EXPECT_LE(s, LSM_RATE_MAX_SLEEP_US);
  EXPECT_GE(s, 0);
}

// Writers that can go at 8 MB/s into an index whose workers pay a unit of
// debt for every 2 MB written at 2 MB/s at most: the debt must stop growing
// (no stop trigger reached) and the writers settle near the workers' pace.
TEST(WriteRate, SettlesAtTheWorkersPace) {
  Rate r;
  const double writer_rate = 8.0 * (1 << 20), drain_rate = 2.0 * (1 << 20);
  const uint64_t batch = 8192, unit = 2 << 20;
  int64_t t = kSec;
  double written = 0, drained = 0;
  uint32_t max_debt = 0;
  const uint32_t trigger_units = 4;  // debt starts 4 units of backlog in
  double written_late = 0;
  int64_t late_start = 0;
  for (int i = 0; i < 200000 && t < 120 * kSec; i++) {
    double backlog = std::max(0.0, written - drained);
    uint32_t units = static_cast<uint32_t>(backlog / unit);
    uint32_t debt = units > trigger_units ? units - trigger_units : 0;
    max_debt = std::max(max_debt, debt);
    int64_t sleep = r.Batch(batch, debt, t);
    int64_t dt = static_cast<int64_t>(batch * 1e6 / writer_rate) + sleep;
    written += batch;
    drained = std::min(written, drained + drain_rate * dt / 1e6);
    t += dt;
    if (t >= 60 * kSec) {
      if (late_start == 0) late_start = t;
      written_late += batch;
    }
  }
  ASSERT_GT(late_start, 0);
  double late_rate = written_late * 1e6 / (t - late_start);
  EXPECT_LT(max_debt, 16u) << "the debt kept growing";
  EXPECT_GT(late_rate, drain_rate * 0.7);
  EXPECT_LT(late_rate, drain_rate * 1.3);
}

}  // namespace
