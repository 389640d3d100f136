// The always-on trace ring's cost in isolation (runtime/trace_ring.h), to read beside
// bench/trace_overhead.py's whole-step figures (which this machine's noise blurs):
// - ns per read of the trace's clock (runtime/trace_clock.h: the TSC) against clock_gettime;
// - ns per Record of an executor-like event (two clock reads and the Record), with either clock,
//   on 1 thread and on 2 threads at once (per event), and the heap allocations a Record makes
//   (core/heap_count.h: none is the contract);
// - Session::Run of a chain of 16 Adds with and without SessionOptions::trace_ring (interleaved
//   rounds, medians): the added microseconds per step and per kernel.
// Every figure is CPU time (all the process's threads), not wall time: on this shared machine
// wall time counts the time other programs hold the CPU.
//
//   build/bench/bench_trace_ring [rounds]   -> {"clock": "TSC", "clock_read_ns": ..., "record_ns_1_thread": ..., ...}
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <thread>
#include <vector>

#include "core/heap_count.h"
#include "graph/session.h"
#include "ops/framework.h"
#include "ops/math.h"
#include "runtime/trace_ring.h"

using namespace weft;

namespace {

// CPU time of the whole process (all threads), ns.
double CpuNs() {
  timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return 1e9 * static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec);
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// ns per Record, `threads` threads recording `n` events each at once, reading the clock with
// `now` (the ring's own, TraceRing::NowNanos, or clock_gettime as before the TSC clock).
double RecordNs(TraceRing& ring, int threads, int n, int64_t (*now_ns)() = &TraceRing::NowNanos) {
  const double start = CpuNs();
  std::vector<std::thread> ts;
  for (int t = 0; t < threads; ++t) {
    ts.emplace_back([&ring, n, now_ns] {
      for (int i = 0; i < n; ++i) {
        const int64_t now = now_ns();
        ring.Record({.kind = TraceKind::kKernel, .step = i, .start_ns = now, .end_ns = now_ns(),
                     .name = "sequential/dense_1/MatMul", .op = "MatMul",
                     .detail = "task:0/CPU:0 -> task:1/CPU:0 gradients/dense/kernel:0"});
      }
    });
  }
  for (std::thread& t : ts) t.join();
  return (CpuNs() - start) / (static_cast<double>(n) * threads);
}

// ns per read of a clock.
double ClockNs(int64_t (*now_ns)(), int n) {
  int64_t sink = 0;
  const double start = CpuNs();
  for (int i = 0; i < n; ++i) sink += now_ns();
  const double ns = (CpuNs() - start) / n;
  return sink == 42 ? 0 : ns;  // the reads are used
}

}  // namespace

int main(int argc, char** argv) {
  const int rounds = argc > 1 ? std::atoi(argv[1]) : 5;
  constexpr int kKernels = 16, kRuns = 5000;
  TraceRing ring({.capacity = 16384});
  std::vector<double> one, two;
  const HeapCount before = HeapCount::Now();
  RecordNs(ring, 1, 1 << 20);
  // The thread itself allocates (its state, its start): counted once, not per event.
  const double allocs_per_event = static_cast<double>(HeapCount::Now().Since(before)) / (1 << 20);
  std::vector<double> one_gettime, clock_tsc, clock_gettime;
  for (int r = 0; r < rounds; ++r) {
    one.push_back(RecordNs(ring, 1, 1 << 20));
    one_gettime.push_back(RecordNs(ring, 1, 1 << 20, &TraceClock::MonotonicNanos));
    two.push_back(RecordNs(ring, 2, 1 << 20));
    clock_tsc.push_back(ClockNs(&TraceClock::Now, 1 << 22));
    clock_gettime.push_back(ClockNs(&TraceClock::MonotonicNanos, 1 << 22));
  }
  Graph g;
  Scope s = Scope::Root(&g);
  Output x = ops::Placeholder(s.WithOpName("x"), DType::kFloat32, TensorShape({}));
  Output y = x;
  for (int i = 0; i < kKernels; ++i) y = ops::Add(s.WithOpName("add" + std::to_string(i)), y, ops::Const(s, 1.0f));
  auto traced_ring = std::make_shared<TraceRing>(TraceRingOptions{.capacity = 16384});
  auto make = [&](bool traced) {
    SessionOptions o;
    o.inter_op_threads = 1;
    o.intra_op_threads = 1;
    o.constant_folding = false;  // 16 Consts and 16 Adds run as kernels
    if (traced) o.trace_ring = traced_ring;
    return std::make_unique<Session>(&g, o);
  };
  std::unique_ptr<Session> off = make(false), on = make(true);
  const Tensor v = Tensor::Scalar<float>(1.0f);
  auto time_runs = [&](Session& sess) {
    for (int i = 0; i < 200; ++i) sess.Run({{x, v}}, {y});
    const double start = CpuNs();
    for (int i = 0; i < kRuns; ++i) sess.Run({{x, v}}, {y});
    return (CpuNs() - start) / 1000 / kRuns;
  };
  auto allocs_per_run = [&](Session& sess) {
    for (int i = 0; i < 10; ++i) sess.Run({{x, v}}, {y});  // compiled first
    const HeapCount h = HeapCount::Now();
    for (int i = 0; i < 1000; ++i) sess.Run({{x, v}}, {y});
    return static_cast<double>(HeapCount::Now().Since(h)) / 1000;
  };
  const double allocs_off = allocs_per_run(*off), allocs_on = allocs_per_run(*on);
  std::vector<double> us_off, us_on;
  for (int r = 0; r < rounds; ++r) {
    if (r % 2 == 0) {
      us_off.push_back(time_runs(*off));
      us_on.push_back(time_runs(*on));
    } else {
      us_on.push_back(time_runs(*on));
      us_off.push_back(time_runs(*off));
    }
  }
  const double m_off = Median(us_off), m_on = Median(us_on);
  // Events per Run: every kernel and the step itself.
  const double events = static_cast<double>(traced_ring->recorded()) / (rounds * (kRuns + 200));
  std::printf("{\"clock\": \"%s\", \"clock_read_ns\": %.1f, \"clock_gettime_ns\": %.1f, \"record_ns_1_thread_clock_gettime\": %.1f, ",
              TraceClock::SourceName(TraceClock::source()), Median(clock_tsc), Median(clock_gettime), Median(one_gettime));
  std::printf("\"allocations_per_event\": %.6f, \"record_ns_1_thread\": %.1f, \"record_ns_2_threads\": %.1f, \"events_per_run\": %.0f, "
              "\"run_us_off\": %.2f, \"run_us_on\": %.2f, \"added_us_per_run\": %.2f, \"added_ns_per_event\": %.0f, "
              "\"allocations_per_run_off\": %.2f, \"allocations_per_run_on\": %.2f}\n",
              allocs_per_event, Median(one), Median(two), events, m_off, m_on, m_on - m_off, 1000 * (m_on - m_off) / events,
              allocs_off, allocs_on);
  return 0;
}
