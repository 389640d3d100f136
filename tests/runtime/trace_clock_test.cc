// The trace's clock (runtime/trace_clock.h): TSC readings on CLOCK_MONOTONIC's scale. Each
// reading is bracketed by two clock_gettime readings taken just before and after it, so the
// check holds whatever the machine's load (a preemption widens the bracket, it never breaks it).
#include <doctest/doctest.h>

#include <algorithm>
#include <thread>
#include <vector>

#include "runtime/trace_clock.h"

using namespace weft;

TEST_CASE("trace clock: calibrated within 20 ms, then TSC readings stay between the clock_gettime readings around them") {
  // Calibration ends with the first reading at least 20 ms after the first one (bounded: 1 s).
  const int64_t start = TraceClock::MonotonicNanos();
  while (TraceClock::source() == TraceClock::Source::kUncalibrated && TraceClock::MonotonicNanos() - start < 1'000'000'000) {
    (void)TraceClock::Now();
  }
  CHECK(TraceClock::source() ==
        (TraceClock::HasInvariantTsc() ? TraceClock::Source::kTsc : TraceClock::Source::kMonotonic));
  // 300 ms of readings (about 25 re-anchors), every one within 2 us of its bracket: the
  // extrapolation between anchors drifts less than that.
  constexpr int64_t kSlackNs = 2000;
  int64_t worst_early = 0, worst_late = 0, readings = 0;
  const int64_t until = TraceClock::MonotonicNanos() + 300'000'000;
  for (int64_t before = 0; before < until; ++readings) {
    before = TraceClock::MonotonicNanos();
    const int64_t now = TraceClock::Now();
    const int64_t after = TraceClock::MonotonicNanos();
    worst_early = std::max(worst_early, before - now);
    worst_late = std::max(worst_late, now - after);
    if (readings % 64 == 0) std::this_thread::yield();  // let other threads (and preemption) in
  }
  INFO("readings: " << readings << ", worst early by " << worst_early << " ns, late by " << worst_late << " ns");
  CHECK(readings > 1000);
  CHECK(worst_early <= kSlackNs);
  CHECK(worst_late <= kSlackNs);
}

TEST_CASE("trace clock: readings from several threads at once are on one scale") {
  // Each thread's readings bracketed as above, while the others read (and re-anchor) too.
  std::vector<int64_t> worst(3, 0);
  std::vector<std::thread> threads;
  for (size_t t = 0; t < worst.size(); ++t) {
    threads.emplace_back([&worst, t] {
      const int64_t until = TraceClock::MonotonicNanos() + 100'000'000;
      for (int64_t before = 0; before < until;) {
        before = TraceClock::MonotonicNanos();
        const int64_t now = TraceClock::Now();
        const int64_t after = TraceClock::MonotonicNanos();
        worst[t] = std::max({worst[t], before - now, now - after});
      }
    });
  }
  for (std::thread& t : threads) t.join();
  for (int64_t w : worst) CHECK(w <= 2000);
}
