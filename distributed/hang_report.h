// Hang reports: when a step of a multi-worker job stops making progress, each process says what
// it is waiting for, in one text that names the peers (docs/distributed.md, "How to read a hang
// report"):
//
//   HangReporter reporter({.path = "weft-hang-worker-0.txt", .on_signal = true},
//                         [&](std::string_view why, ReportText* out) { out->Append("why: {}\n", why); });
//   reporter.Report("step 4 passed its deadline");   // prints to stderr and (re)writes the file
//   // kill -USR1 <pid>: the reporter's thread writes the same report, at any time
//
// SIGUSR1: the handler (installed once per process, never removed) only writes one byte to a pipe
// that a thread started with the reporter waits on, so a report needs no thread started at that
// moment and runs no unsafe code in the handler. One reporter per process listens (the first
// made with on_signal; the others report only when asked). After that reporter is gone the
// handler does nothing: SIGUSR1 during or after shutdown is harmless.
//
// Memory: a report is written into a buffer reserved when the reporter is made (`capacity`
// bytes), to stderr and the file with write(2), through paths made at construction: making and
// writing a report allocates nothing and starts no thread, so it is written also when the process
// is out of memory (the builders, MultiWorkerMirroredStrategy's and Server's, allocate nothing
// either: tests/distributed/hang_report_test.cc counts). A report longer than the buffer is cut
// at a line's end and says so.
//
// Thread-safe. Report may run on any thread (a transport's progress thread included): it formats
// the report, writes it to stderr and to the file, and returns.
#pragma once

#include <algorithm>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "distributed/ucx_rendezvous.h"
#include "runtime/trace_ring.h"

namespace weft {

// Text in memory reserved once: appending never allocates. Append stops `kTailBytes` short of
// the capacity (cutting at the last line's end), which AppendTail may use: a report's last lines
// ("waits for: ...") always fit.
class ReportText {
 public:
  static constexpr size_t kTailBytes = 4096;
  explicit ReportText(size_t capacity) : capacity_(std::max(capacity, 2 * kTailBytes)), buf_(new char[capacity_]) {}

  template <typename... T>
  void Append(fmt::format_string<T...> f, T&&... args) {
    Put(capacity_ - kTailBytes, f, std::forward<T>(args)...);
  }
  template <typename... T>
  void AppendTail(fmt::format_string<T...> f, T&&... args) {
    Put(capacity_, f, std::forward<T>(args)...);
  }
  void Clear() { size_ = 0, cut_ = false; }
  std::string_view view() const { return {buf_.get(), size_}; }
  bool cut() const { return cut_; }  // something did not fit

 private:
  template <typename... T>
  void Put(size_t limit, fmt::format_string<T...> f, T&&... args) {
    if (cut_ && limit < capacity_) return;  // the body is over: only the tail goes on
    const size_t room = size_ < limit ? limit - size_ : 0;
    const auto r = fmt::format_to_n(buf_.get() + size_, room, f, std::forward<T>(args)...);
    if (r.size <= room) {
      size_ += r.size;
      return;
    }
    cut_ = true;  // drop the partial line
  }
  size_t capacity_;
  std::unique_ptr<char[]> buf_;
  size_t size_ = 0;
  bool cut_ = false;
};

struct HangReportOptions {
  std::string path;        // the report file, rewritten by each report; empty: stderr only
  bool on_signal = true;   // report on SIGUSR1
  size_t capacity = 256 * 1024;  // the report's buffer, reserved at construction
};

class HangReporter {
 public:
  // build(why, out): appends the report's text to `out` (called under the reporter's lock, one
  // report at a time, `out` cleared). Must not allocate, for the report to be written when the
  // process cannot (an exception it throws is reported in its place).
  using Builder = std::function<void(std::string_view why, ReportText* out)>;
  HangReporter(HangReportOptions options, Builder build);
  ~HangReporter();
  HangReporter(const HangReporter&) = delete;
  HangReporter& operator=(const HangReporter&) = delete;

  void Report(std::string_view why);
  const std::string& path() const { return options_.path; }
  // Whether this reporter listens to SIGUSR1 (another one in the process may).
  bool listening() const { return signal_pipe_[0] >= 0; }
  // Reports written so far (for tests).
  int num_reports() const;

 private:
  void Listen();

  HangReportOptions options_;
  Builder build_;
  std::string tmp_path_;  // options_.path + ".tmp", made once
  mutable std::mutex mu_;
  ReportText text_;  // under mu_
  int reports_ = 0;
  int signal_pipe_[2] = {-1, -1};  // the handler writes [1]; Listen reads [0]
  int stop_pipe_[2] = {-1, -1};    // the destructor writes [1]
  std::thread listener_;
};

// The waiting part of a report, shared by MultiWorkerMirroredStrategy and Server: one line per
// collective member not heard from ("step 5: collective group 1 instance 3: member
// /job:worker/.../CPU:0 not heard from (rs0/1, rs1/1), from worker:1 for MS ms") and one per
// other Recv ("step 7: Recv of 'KEY' from worker:1 for MS ms"), of the steps below `max_step`
// (the others are internal exchanges); the tasks waited for are collected for AppendWaitsFor.
// No allocation: the scratch space is reserved by the constructor.
class WaitDescriber {
 public:
  WaitDescriber(const ClusterSpec& cluster, size_t max_recvs = 256);
  // Appends the lines; returns the number of Recvs and collective members listed.
  size_t AppendWaiting(const UcxRendezvousMgr& mgr, uint64_t max_step, ReportText* out);
  // "waits for: worker:1, ps:0\n" (or "nobody"): the tasks of the last AppendWaiting.
  void AppendWaitsFor(ReportText* out) const;

 private:
  std::vector<std::string> task_names_;  // by global index
  UcxRendezvousMgr::WaitingList list_;
  std::vector<char> waits_for_, listed_;  // per task; per Recv of list_
};

// A report's last line about the trace: dumps `ring` to its dump_path (TraceRing::DumpReserved,
// no allocation) and appends "trace: PATH (N events)", or "trace: not written (REASON)".
void AppendTraceDump(const TraceRing& ring, std::string_view why, ReportText* out);
// A UcxRendezvousOptions::on_stall's report, "step N: DeadlineExceeded: ...", formatted without
// allocating (a message longer than 1 KiB is cut).
void ReportStall(HangReporter& reporter, uint64_t step, const Status& why);

// The launcher's view (`weft-zoo launch`): given each task's latest report ((task, text); an empty
// text: the task wrote none), one line per task ("worker:0 waits for worker:1 (why: ...)" or
// "worker:1 wrote no report") and the verdict: "the rank everyone waits for: worker:1" when every
// task that waits for someone waits for it, else the most waited for ("most waited for: worker:2
// (2 of 3 reports)"). Reads the lines "why: " and "waits for: " of the reports
// (MultiWorkerMirroredStrategy::DescribeWaits writes them).
std::string SummarizeHangReports(const std::vector<std::pair<std::string, std::string>>& reports);

}  // namespace weft
