// A step's timeline: every kernel that ran, on which device and thread, from when to when, as
// Chrome trace-event JSON (chrome://tracing, https://ui.perfetto.dev).
//
//   StepTrace trace;
//   sess.Run(feeds, fetches, targets, &trace);     // records this one step
//   WriteFile("step.json", trace.ToChromeJson());
//
// Send/Recv events carry their rendezvous key (a Recv's duration is its wait), collectives their
// instance. Thread-safe: kernels on any thread add events.
#pragma once

#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

namespace weft {

struct TraceEvent {
  std::string name;    // node name
  std::string op;      // op type (the category)
  std::string device;  // full device name
  std::string detail;  // rendezvous key, collective instance, error
  int64_t start_us = 0, end_us = 0;  // since the trace began
  uint64_t thread = 0;
};

class StepTrace {
 public:
  StepTrace();
  int64_t NowMicros() const;
  void Add(TraceEvent e);
  std::vector<TraceEvent> events() const;
  // {"traceEvents": [...]}: one process per device (named "CPU:1"), one row per thread.
  std::string ToChromeJson() const;
  // Writes ToChromeJson to `path`; throws NotFound naming the path when it cannot.
  void Write(const std::string& path) const;

 private:
  int64_t origin_ns_;
  mutable std::mutex mu_;
  std::vector<TraceEvent> events_;
};

uint64_t CurrentThreadId();

}  // namespace weft
