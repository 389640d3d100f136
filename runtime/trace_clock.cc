#include "runtime/trace_clock.h"

#include <ctime>

#if defined(__x86_64__)
#include <cpuid.h>
#endif

namespace weft {
namespace {

// The span the first rate is measured over: long against the anchors' own uncertainty (kCleanTicks),
// so that the rate's error stays under a microsecond across one re-anchor span (kReanchorTicks);
// the growing span of every re-anchor then refines it.
constexpr int64_t kCalibrateNs = 20'000'000;
// An anchor is taken only from a clock_gettime that took fewer than kCleanTicks ticks (not preempted).
constexpr uint64_t kCleanTicks = uint64_t{1} << 12;

// The calibration's origin (the first reading) and the one thread changing the anchor; only the
// thread holding `busy` touches origin_*.
std::atomic<bool> g_busy{false};
uint64_t g_origin_ticks = 0;
int64_t g_origin_ns = -1;

}  // namespace

TraceClock::Calibration TraceClock::calibration_;

int64_t TraceClock::MonotonicNanos() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

const char* TraceClock::SourceName(Source s) {
  switch (s) {
    case Source::kUncalibrated: return "clock_gettime (calibrating the TSC)";
    case Source::kTsc: return "TSC";
    case Source::kMonotonic: return "clock_gettime";
  }
  return "?";
}

bool TraceClock::HasInvariantTsc() {
#if defined(__x86_64__)
  unsigned a = 0, b = 0, c = 0, d = 0;
  if (__get_cpuid_max(0x80000000u, nullptr) < 0x80000007u) return false;
  __cpuid(0x80000007u, a, b, c, d);
  return (d & (1u << 8)) != 0;
#else
  return false;
#endif
}

int64_t TraceClock::Slow() {
  Calibration& c = calibration_;
  if (c.source.load(std::memory_order_relaxed) == static_cast<uint8_t>(Source::kMonotonic)) return MonotonicNanos();
#if defined(__x86_64__)
  // Both clocks at once: the ticks halfway through the clock_gettime.
  const uint64_t t1 = __rdtsc();
  const int64_t ns = MonotonicNanos();
  const uint64_t t2 = __rdtsc();
  if (g_busy.exchange(true, std::memory_order_acquire)) return ns;  // another thread re-anchors
  if (g_origin_ns < 0) {
    if (!HasInvariantTsc()) {
      c.source.store(static_cast<uint8_t>(Source::kMonotonic), std::memory_order_relaxed);
    } else if (t2 - t1 < kCleanTicks) {
      g_origin_ticks = t1 + (t2 - t1) / 2;
      g_origin_ns = ns;
    }
    g_busy.store(false, std::memory_order_release);
    return ns;
  }
  const uint64_t ticks = t1 + (t2 - t1) / 2;
  // A reading that took long (preempted between the reads) would anchor badly: skip it.
  const bool clean = t2 - t1 < kCleanTicks;
  if (clean && ns - g_origin_ns >= kCalibrateNs && ticks > g_origin_ticks) {
    // The rate over the whole life so far: each re-anchor's span is longer, its rate better.
    const uint64_t mult = static_cast<uint64_t>(
        (static_cast<unsigned __int128>(ns - g_origin_ns) << 32) / (ticks - g_origin_ticks));
    c.seq.fetch_add(1, std::memory_order_relaxed);  // odd: readers fall back to clock_gettime
    std::atomic_thread_fence(std::memory_order_release);
    c.base_ticks.store(ticks, std::memory_order_relaxed);
    c.base_ns.store(ns, std::memory_order_relaxed);
    c.mult.store(mult, std::memory_order_relaxed);
    c.seq.fetch_add(1, std::memory_order_release);
    c.source.store(static_cast<uint8_t>(Source::kTsc), std::memory_order_release);
  }
  g_busy.store(false, std::memory_order_release);
  return ns;
#else
  c.source.store(static_cast<uint8_t>(Source::kMonotonic), std::memory_order_relaxed);
  return MonotonicNanos();
#endif
}

}  // namespace weft
