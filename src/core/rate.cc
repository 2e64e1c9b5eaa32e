// rate.cc — the delayed write rate of lsm_core_rate.h.

#include <algorithm>

#include "lsm_core.h"

extern "C" int64_t lsm_write_rate_batch(LsmWriteRate* w, uint64_t bytes,
                                        uint32_t debt, int help, int64_t now_us,
                                        int* delayed) noexcept {
  // Arithmetic only: nothing here can throw.
  *delayed = 0;
  // the measured rate: bytes over whole windows; a window the index sat
  // idle through (twice the length or more) says nothing of its pace
  w->bytes += bytes;
  if (w->window_start_us == 0 || now_us < w->window_start_us) {
    w->window_start_us = now_us;
    w->window_bytes = w->bytes;
  } else if (now_us - w->window_start_us >= LSM_RATE_WINDOW_US) {
    int64_t span = now_us - w->window_start_us;
    w->measured = span < 2 * int64_t{LSM_RATE_WINDOW_US}
                      ? static_cast<double>(w->bytes - w->window_bytes) * 1e6 /
                            static_cast<double>(span)
                      : 0.0;
    w->window_start_us = now_us;
    w->window_bytes = w->bytes;
  }

  if (debt == 0) {
    w->rate = 0;
    w->debt = 0;
    return 0;
  }
  if (!help || bytes == 0) return 0;

  if (w->rate <= 0) {
    // in debt from now on: a little below the pace it was written at
    w->max_rate = std::max(w->measured > 0 ? w->measured : LSM_RATE_FIRST,
                           LSM_RATE_MIN);
    w->rate = std::max(w->max_rate * LSM_RATE_DEC, LSM_RATE_MIN);
    w->debt = debt;
    w->next_us = now_us;
  }
  for (int steps = 0; debt > w->debt && steps < LSM_RATE_MAX_STEPS;
       steps++, w->debt++)
    w->rate = std::max(w->rate * LSM_RATE_DEC, LSM_RATE_MIN);
  for (int steps = 0; debt < w->debt && steps < LSM_RATE_MAX_STEPS;
       steps++, w->debt--)
    w->rate = std::min(w->rate * LSM_RATE_INC, w->max_rate);
  w->debt = debt;

  *delayed = 1;
  int64_t start = std::max(now_us, w->next_us);
  w->next_us = start + static_cast<int64_t>(static_cast<double>(bytes) * 1e6 /
                                            w->rate);
  return std::min(w->next_us - now_us, int64_t{LSM_RATE_MAX_SLEEP_US});
}
