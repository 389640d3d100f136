#include "distributed/hang_report.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <algorithm>
#include <cerrno>
#include <cstring>
#include <cstdio>
#include <map>
#include <set>

#include <fmt/format.h>

#include "core/status.h"

namespace weft {
namespace {

// The write end of the listening reporter's pipe (-1: none listens). Process-wide because a
// signal handler has nothing else to reach; written only by the reporter that owns the pipe.
std::atomic<int> g_signal_fd{-1};

void OnSigusr1(int) {
  const int saved = errno;  // the interrupted code may be reading errno
  const int fd = g_signal_fd.load();
  if (fd >= 0) {
    const char byte = 1;
    (void)!write(fd, &byte, 1);  // non-blocking: a full pipe already has a report coming
  }
  errno = saved;
}

void InstallHandlerOnce() {
  static std::once_flag once;
  std::call_once(once, [] {
    struct sigaction sa {};
    sa.sa_handler = OnSigusr1;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART;
    sigaction(SIGUSR1, &sa, nullptr);
  });
}

// write(2) all of `text` (a report never goes through stdio, which may allocate its buffers).
bool WriteAll(int fd, std::string_view text) {
  for (size_t done = 0; done < text.size();) {
    const ssize_t w = write(fd, text.data() + done, text.size() - done);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    done += static_cast<size_t>(w);
  }
  return true;
}

void ClosePair(int fds[2]) {
  for (int i = 0; i < 2; ++i) {
    if (fds[i] >= 0) close(fds[i]);
    fds[i] = -1;
  }
}

}  // namespace

HangReporter::HangReporter(HangReportOptions options, Builder build)
    : options_(std::move(options)), build_(std::move(build)), text_(options_.capacity) {
  if (!options_.path.empty()) tmp_path_ = options_.path + ".tmp";
  if (!options_.on_signal) return;
  if (pipe2(signal_pipe_, O_CLOEXEC | O_NONBLOCK) != 0 || pipe2(stop_pipe_, O_CLOEXEC) != 0) {
    ClosePair(signal_pipe_);
    ClosePair(stop_pipe_);
    throw Error(errors::Internal("HangReporter: pipe2 failed (errno {})", errno));
  }
  int none = -1;
  if (!g_signal_fd.compare_exchange_strong(none, signal_pipe_[1])) {  // another reporter listens
    ClosePair(signal_pipe_);
    ClosePair(stop_pipe_);
    return;
  }
  InstallHandlerOnce();
  listener_ = std::thread([this] { Listen(); });
}

HangReporter::~HangReporter() {
  if (!listener_.joinable()) return;
  // From here on the handler writes nowhere; a signal already in the pipe is simply not read.
  int mine = signal_pipe_[1];
  g_signal_fd.compare_exchange_strong(mine, -1);
  const char byte = 1;
  (void)!write(stop_pipe_[1], &byte, 1);
  listener_.join();
  ClosePair(signal_pipe_);
  ClosePair(stop_pipe_);
}

void HangReporter::Listen() {
  for (;;) {
    pollfd fds[2] = {{signal_pipe_[0], POLLIN, 0}, {stop_pipe_[0], POLLIN, 0}};
    if (poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      return;
    }
    if (fds[1].revents != 0) return;
    if (fds[0].revents != 0) {
      char buf[64];
      while (read(signal_pipe_[0], buf, sizeof(buf)) > 0) {
      }
      Report("SIGUSR1 (a report on request)");
    }
  }
}

void HangReporter::Report(std::string_view why) {
  std::lock_guard<std::mutex> l(mu_);
  text_.Clear();
  try {
    build_(why, &text_);
  } catch (const std::exception& e) {  // a report must never take the process down
    text_.Clear();
    text_.AppendTail("weft hang report: could not be built ({}); reason: {}\n", e.what(), why);
  }
  if (text_.cut()) text_.AppendTail("(the report was cut here: it is longer than its {}-byte buffer)\n", options_.capacity);
  const std::string_view text = text_.view();
  (void)WriteAll(STDERR_FILENO, text);
  if (!options_.path.empty()) {
    // Whole reports only: a reader (the launcher) never sees half of one.
    const int fd = open(tmp_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd >= 0) {
      const bool written = WriteAll(fd, text);
      if (close(fd) == 0 && written) (void)std::rename(tmp_path_.c_str(), options_.path.c_str());
    }
  }
  reports_++;
}

WaitDescriber::WaitDescriber(const ClusterSpec& cluster, size_t max_recvs)
    : list_(max_recvs), waits_for_(cluster.NumTasks(), 0), listed_(max_recvs, 0) {
  for (int t = 0; t < cluster.NumTasks(); ++t) task_names_.push_back(cluster.TaskAt(t).ToString());
}

namespace {

// The fields of a rendezvous key "src_device;incarnation;dst_device;tensor;frame:iter" (views
// into it; fewer than 5 when it is not one).
struct KeyFields {
  std::string_view f[5];
  size_t n = 0;
  explicit KeyFields(std::string_view key) {
    for (size_t start = 0; n < 5;) {
      const size_t end = key.find(';', start);
      f[n++] = key.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start);
      if (end == std::string_view::npos) break;
      start = end + 1;
    }
  }
};

// A collective's message "_coll/{group}/{instance}/{what}": its three parts, or false.
bool CollectiveParts(const KeyFields& k, std::string_view* group, std::string_view* instance, std::string_view* what) {
  if (k.n < 4 || !k.f[3].starts_with("_coll/")) return false;
  const std::string_view t = k.f[3].substr(6);
  const size_t a = t.find('/');
  if (a == std::string_view::npos) return false;
  const size_t b = t.find('/', a + 1);
  if (b == std::string_view::npos) return false;
  *group = t.substr(0, a);
  *instance = t.substr(a + 1, b - a - 1);
  *what = t.substr(b + 1);
  return true;
}

}  // namespace

size_t WaitDescriber::AppendWaiting(const UcxRendezvousMgr& mgr, uint64_t max_step, ReportText* out) {
  mgr.Waiting(&list_);
  const std::vector<UcxRendezvousMgr::WaitingRecv>& recvs = list_.recvs();
  std::fill(waits_for_.begin(), waits_for_.end(), 0);
  std::fill(listed_.begin(), listed_.end(), 0);
  auto peer = [&](const UcxRendezvousMgr::WaitingRecv& w) -> std::string_view {
    return w.src_task >= 0 && w.src_task < static_cast<int>(task_names_.size()) ? std::string_view(task_names_[w.src_task])
                                                                                 : std::string_view();
  };
  auto append_from = [&](const UcxRendezvousMgr::WaitingRecv& w) {
    if (peer(w).empty()) {
      out->Append("(a key of this task: its Send has not run)\n");
    } else {
      out->Append("from {} for {} ms\n", peer(w), w.waited.count());
    }
  };
  size_t n = 0;
  for (size_t i = 0; i < recvs.size(); ++i) {
    if (recvs[i].step_id >= max_step) {
      listed_[i] = 1;  // the leave handshake, fingerprints, local steps: not waits of a step
      continue;
    }
    if (!peer(recvs[i]).empty()) waits_for_[recvs[i].src_task] = 1;
  }
  // Collective members first, one line each: every message of the same (step, group, instance,
  // source device) that is still awaited.
  for (size_t i = 0; i < recvs.size(); ++i) {
    if (listed_[i]) continue;
    const KeyFields k(recvs[i].key());
    std::string_view group, instance, what;
    if (!CollectiveParts(k, &group, &instance, &what)) continue;
    out->Append("step {}: collective group {} instance {}: member {} not heard from ({}", recvs[i].step_id, group,
                instance, k.f[0], what);
    listed_[i] = 1;
    for (size_t j = i + 1; j < recvs.size(); ++j) {
      if (listed_[j] || recvs[j].step_id != recvs[i].step_id) continue;
      const KeyFields kj(recvs[j].key());
      std::string_view gj, ij, wj;
      if (!CollectiveParts(kj, &gj, &ij, &wj) || gj != group || ij != instance || kj.f[0] != k.f[0]) continue;
      out->Append(", {}", wj);
      listed_[j] = 1;
    }
    out->Append("), ");
    append_from(recvs[i]);
    ++n;
  }
  for (size_t i = 0; i < recvs.size(); ++i) {
    if (listed_[i]) continue;
    out->Append("step {}: Recv of '{}' ", recvs[i].step_id, recvs[i].key());
    append_from(recvs[i]);
    ++n;
  }
  if (list_.unlisted() > 0) out->Append("(and {} more Recvs or steps, not listed)\n", list_.unlisted());
  return n;
}

void WaitDescriber::AppendWaitsFor(ReportText* out) const {
  out->AppendTail("waits for: ");
  bool any = false;
  for (size_t t = 0; t < waits_for_.size(); ++t) {
    if (!waits_for_[t]) continue;
    out->AppendTail("{}{}", any ? ", " : "", task_names_[t]);
    any = true;
  }
  out->AppendTail("{}\n", any ? "" : "nobody");
}

void AppendTraceDump(const TraceRing& ring, std::string_view why, ReportText* out) {
  char buf[1024];
  const auto r = fmt::format_to_n(buf, sizeof(buf), "hang report: {}", why);
  const int64_t n = ring.DumpReserved(std::string_view(buf, std::min(r.size, sizeof(buf))));
  if (n >= 0) {
    out->AppendTail("trace: {} ({} events)\n", ring.dump_path(), n);
  } else {
    out->AppendTail("trace: not written ({}: {})\n", ring.dump_path(), std::strerror(errno));
  }
}

void ReportStall(HangReporter& reporter, uint64_t step, const Status& why) {
  char buf[1024];
  const auto r = fmt::format_to_n(buf, sizeof(buf), "step {}: {}: {}", step, CodeName(why.code()), why.message());
  reporter.Report(std::string_view(buf, std::min(r.size, sizeof(buf))));
}

std::string SummarizeHangReports(const std::vector<std::pair<std::string, std::string>>& reports) {
  auto line_after = [](const std::string& report, const std::string& prefix) -> std::string {
    const std::string text = "\n" + report;
    size_t at = text.rfind("\n" + prefix);
    if (at == std::string::npos) return {};
    at += 1 + prefix.size();
    return text.substr(at, text.find('\n', at) - at);
  };
  std::string out;
  std::map<std::string, int> waited;  // task -> reports that wait for it
  int waiting = 0;
  std::set<std::string> silent;
  for (const auto& [task, text] : reports) {
    if (text.empty()) {
      out += fmt::format("{} wrote no report\n", task);
      silent.insert(task);
      continue;
    }
    const std::string waits = line_after(text, "waits for: "), why = line_after(text, "why: ");
    out += fmt::format("{} waits for {} (why: {})\n", task, waits.empty() ? "?" : waits, why.empty() ? "?" : why);
    if (waits.empty() || waits == "nobody") continue;
    ++waiting;
    for (size_t start = 0;;) {
      const size_t end = waits.find(", ", start);
      waited[waits.substr(start, end == std::string::npos ? std::string::npos : end - start)]++;
      if (end == std::string::npos) break;
      start = end + 2;
    }
  }
  if (waiting == 0) return out + "no task waits for another\n";
  auto top = std::max_element(waited.begin(), waited.end(), [](const auto& a, const auto& b) { return a.second < b.second; });
  const std::string note = silent.count(top->first) ? " (it wrote no report: stopped, killed, or stuck)" : "";
  if (top->second == waiting) return out + fmt::format("the rank everyone waits for: {}{}\n", top->first, note);
  return out + fmt::format("most waited for: {} ({} of {} reports){}\n", top->first, top->second, waiting, note);
}

int HangReporter::num_reports() const {
  std::lock_guard<std::mutex> l(mu_);
  return reports_;
}

}  // namespace weft
