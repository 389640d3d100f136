// The trace's clock: CLOCK_MONOTONIC nanoseconds, read from the CPU's time-stamp counter where it
// is invariant (a few ns a read instead of clock_gettime's ~70 ns on a virtual machine), so that
// the always-on trace (runtime/trace_ring.h) stays far below 1% of a fast step.
//
//   const int64_t t0 = TraceClock::Now();   // ns, on CLOCK_MONOTONIC's scale (+- about 1 us)
//   ...
//   const int64_t dt = TraceClock::Now() - t0;
//
// How: ticks are turned into nanoseconds by a rate measured against CLOCK_MONOTONIC over the
// process's life so far, from an anchor (ticks, ns) taken from both clocks at once. Until the
// first 20 ms have passed (no rate yet), and for the one read that re-anchors about every 10 ms,
// Now() reads clock_gettime itself; re-anchoring keeps a reading within about 1 us of
// CLOCK_MONOTONIC (NTP's slewing included), which is what lets `weft-zoo trace merge` align the
// ranks with offsets measured on CLOCK_MONOTONIC. Without an invariant TSC (cpuid 0x80000007
// EDX bit 8; not x86-64) every read is clock_gettime. Readings of one thread never go backwards
// by more than a re-anchor's correction (below 1 us; a trace event's duration is clamped at 0).
//
// Thread-safe, lock-free, no allocation; not async-signal-safe on the re-anchoring read (use
// MonotonicNanos() in a signal handler).
#pragma once

#include <atomic>
#include <cstdint>

#if defined(__x86_64__)
#include <x86intrin.h>
#endif

namespace weft {

class TraceClock {
 public:
  enum class Source : uint8_t { kUncalibrated, kTsc, kMonotonic };

  static int64_t Now() {
#if defined(__x86_64__)
    const Calibration& c = calibration_;
    if (c.source.load(std::memory_order_relaxed) == static_cast<uint8_t>(Source::kTsc)) {
      const uint64_t ticks = __rdtsc();
      // A seqlock: the anchor and rate are read whole or not at all.
      const uint32_t seq = c.seq.load(std::memory_order_acquire);
      const uint64_t base_ticks = c.base_ticks.load(std::memory_order_relaxed);
      const int64_t base_ns = c.base_ns.load(std::memory_order_relaxed);
      const uint64_t mult = c.mult.load(std::memory_order_relaxed);
      std::atomic_thread_fence(std::memory_order_acquire);
      const uint64_t since = ticks - base_ticks;
      if ((seq & 1) == 0 && c.seq.load(std::memory_order_relaxed) == seq && since < kReanchorTicks) {
        return base_ns + static_cast<int64_t>((static_cast<unsigned __int128>(since) * mult) >> 32);
      }
    }
#endif
    return Slow();
  }

  // clock_gettime(CLOCK_MONOTONIC) itself.
  static int64_t MonotonicNanos();
  // Where readings come from now (kUncalibrated: the first 20 ms of the process's readings).
  static Source source() { return static_cast<Source>(calibration_.source.load(std::memory_order_relaxed)); }
  static const char* SourceName(Source s);
  // Whether this CPU has an invariant TSC (the condition for kTsc).
  static bool HasInvariantTsc();

 private:
  // 2^25 ticks (milliseconds at GHz rates): the longest a reading extrapolates from its anchor.
  static constexpr uint64_t kReanchorTicks = uint64_t{1} << 25;
  struct Calibration {
    std::atomic<uint8_t> source{static_cast<uint8_t>(Source::kUncalibrated)};
    std::atomic<uint32_t> seq{0};  // odd while the anchor below is being changed
    std::atomic<uint64_t> base_ticks{0};
    std::atomic<int64_t> base_ns{0};
    std::atomic<uint64_t> mult{0};  // ns per tick, << 32
  };
  // Reads clock_gettime, and calibrates or re-anchors when it is time to (one thread at a time).
  static int64_t Slow();
  static Calibration calibration_;
};

}  // namespace weft
