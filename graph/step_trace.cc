#include "graph/step_trace.h"

#include <fmt/format.h>
#include <pthread.h>

#include <chrono>
#include <fstream>
#include <map>

#include "core/device_name.h"
#include "core/json.h"
#include "core/status.h"

namespace weft {
namespace {

int64_t SteadyNanos() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

std::string ShortDevice(const std::string& full) {
  try {
    const DeviceName d = DeviceName::Parse(full);
    if (d.type && d.id) {
      std::string s = fmt::format("{}:{}", *d.type, *d.id);
      return d.task && *d.task != 0 ? fmt::format("/{}/task:{} {}", d.job.value_or("?"), *d.task, s) : s;
    }
  } catch (const Error&) {
  }
  return full.empty() ? "?" : full;
}

}  // namespace

uint64_t CurrentThreadId() {
  static std::atomic<uint64_t> next{1};
  thread_local uint64_t id = next++;
  return id;
}

StepTrace::StepTrace() : origin_ns_(SteadyNanos()) {}

int64_t StepTrace::NowMicros() const { return (SteadyNanos() - origin_ns_) / 1000; }

void StepTrace::Add(TraceEvent e) {
  std::lock_guard<std::mutex> l(mu_);
  events_.push_back(std::move(e));
}

std::vector<TraceEvent> StepTrace::events() const {
  std::lock_guard<std::mutex> l(mu_);
  return events_;
}

std::string StepTrace::ToChromeJson() const {
  const std::vector<TraceEvent> ev = events();
  std::map<std::string, int> pids;
  for (const TraceEvent& e : ev) pids.emplace(e.device, 0);
  int next = 0;
  for (auto& [device, pid] : pids) pid = next++;
  std::string out = "{\"traceEvents\": [\n";
  bool first = true;
  auto add = [&](const std::string& item) {
    out += (first ? "  " : ",\n  ") + item;
    first = false;
  };
  for (const auto& [device, pid] : pids) {
    add(fmt::format(R"({{"name": "process_name", "ph": "M", "pid": {}, "args": {{"name": "{}"}}}})", pid,
                    JsonEscape(ShortDevice(device))));
  }
  for (const TraceEvent& e : ev) {
    std::string args = fmt::format(R"("op": "{}")", JsonEscape(e.op));
    if (!e.detail.empty()) args += fmt::format(R"(, "detail": "{}")", JsonEscape(e.detail));
    add(fmt::format(R"({{"name": "{}", "cat": "{}", "ph": "X", "ts": {}, "dur": {}, "pid": {}, "tid": {}, "args": {{{}}}}})",
                    JsonEscape(e.name), JsonEscape(e.op), e.start_us, std::max<int64_t>(e.end_us - e.start_us, 0),
                    pids[e.device], e.thread, args));
  }
  return out + "\n],\n\"displayTimeUnit\": \"ms\"}\n";
}

void StepTrace::Write(const std::string& path) const {
  std::ofstream f(path);
  if (!f) throw Error(errors::NotFound("cannot write the trace file '{}'", path));
  f << ToChromeJson();
}

}  // namespace weft
