#include "distributed/hang_report.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <fstream>
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

void ClosePair(int fds[2]) {
  for (int i = 0; i < 2; ++i) {
    if (fds[i] >= 0) close(fds[i]);
    fds[i] = -1;
  }
}

}  // namespace

HangReporter::HangReporter(HangReportOptions options, std::function<std::string(const std::string&)> build)
    : options_(std::move(options)), build_(std::move(build)) {
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

void HangReporter::Report(const std::string& why) {
  std::lock_guard<std::mutex> l(mu_);
  std::string text;
  try {
    text = build_(why);
  } catch (const std::exception& e) {  // a report must never take the process down
    text = "weft hang report: could not be built (" + std::string(e.what()) + "); reason: " + why + "\n";
  }
  std::fwrite(text.data(), 1, text.size(), stderr);
  std::fflush(stderr);
  if (!options_.path.empty()) {
    const std::string tmp = options_.path + ".tmp";
    {
      std::ofstream out(tmp, std::ios::trunc);
      out << text;
    }
    // Whole reports only: a reader (the launcher) never sees half of one.
    std::rename(tmp.c_str(), options_.path.c_str());
  }
  reports_++;
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
