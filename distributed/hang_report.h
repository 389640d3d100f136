// Hang reports: when a step of a multi-worker job stops making progress, each process says what
// it is waiting for, in one text that names the peers (docs/distributed.md, "How to read a hang
// report"):
//
//   HangReporter reporter({.path = "weft-hang-worker-0.txt", .on_signal = true},
//                         [&](const std::string& why) { return DescribeWaits(why); });
//   reporter.Report("step 4 passed its deadline");   // prints to stderr and (re)writes the file
//   // kill -USR1 <pid>: the reporter's thread writes the same report, at any time
//
// SIGUSR1: the handler (installed once per process, never removed) only writes one byte to a pipe
// that a thread started with the reporter waits on, so a report needs no thread started at that
// moment and runs no unsafe code in the handler. One reporter per process listens (the first
// made with on_signal; the others report only when asked). After that reporter is gone the
// handler does nothing: SIGUSR1 during or after shutdown is harmless.
//
// Thread-safe. Report may run on any thread (a transport's progress thread included): it formats
// the report, writes it to stderr and to the file, and returns.
#pragma once

#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace weft {

struct HangReportOptions {
  std::string path;        // the report file, rewritten by each report; empty: stderr only
  bool on_signal = true;   // report on SIGUSR1
};

class HangReporter {
 public:
  // build(why): the report's text (called under the reporter's lock, one report at a time).
  HangReporter(HangReportOptions options, std::function<std::string(const std::string& why)> build);
  ~HangReporter();
  HangReporter(const HangReporter&) = delete;
  HangReporter& operator=(const HangReporter&) = delete;

  void Report(const std::string& why);
  const std::string& path() const { return options_.path; }
  // Whether this reporter listens to SIGUSR1 (another one in the process may).
  bool listening() const { return signal_pipe_[0] >= 0; }
  // Reports written so far (for tests).
  int num_reports() const;

 private:
  void Listen();

  HangReportOptions options_;
  std::function<std::string(const std::string&)> build_;
  mutable std::mutex mu_;
  int reports_ = 0;
  int signal_pipe_[2] = {-1, -1};  // the handler writes [1]; Listen reads [0]
  int stop_pipe_[2] = {-1, -1};    // the destructor writes [1]
  std::thread listener_;
};

// The launcher's view (`weft-zoo launch`): given each task's latest report ((task, text); an empty
// text: the task wrote none), one line per task ("worker:0 waits for worker:1 (why: ...)" or
// "worker:1 wrote no report") and the verdict: "the rank everyone waits for: worker:1" when every
// task that waits for someone waits for it, else the most waited for ("most waited for: worker:2
// (2 of 3 reports)"). Reads the lines "why: " and "waits for: " of the reports
// (MultiWorkerMirroredStrategy::DescribeWaits writes them).
std::string SummarizeHangReports(const std::vector<std::pair<std::string, std::string>>& reports);

}  // namespace weft
