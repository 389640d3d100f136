#include "zoo/launch.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>

#include "distributed/cluster_resolver.h"
#include "distributed/cluster_spec.h"
#include "distributed/hang_report.h"

namespace weft::zoo {
namespace {

using Clock = std::chrono::steady_clock;

[[noreturn]] void ThrowErrno(const std::string& what) {
  throw Error(errors::Internal("launch: {}: {}", what, std::strerror(errno)));
}

// `count` distinct free TCP ports on `host` (an IPv4 address): all bound at once (port 0) so the
// kernel hands out different ones, then released for the tasks to bind.
std::vector<int> FreePorts(const std::string& host, int count) {
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  if (inet_pton(AF_INET, host.c_str(), &addr.sin_addr) != 1) {
    throw Error(errors::InvalidArgument("launch: --host '{}' is not an IPv4 address of this machine", host));
  }
  std::vector<int> fds, ports;
  for (int i = 0; i < count; ++i) {
    const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) ThrowErrno("socket");
    fds.push_back(fd);
    sockaddr_in a = addr;
    a.sin_port = 0;
    socklen_t len = sizeof(a);
    if (bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)) != 0 ||
        getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) != 0) {
      const std::string why = std::strerror(errno);
      for (int f : fds) close(f);
      throw Error(errors::Unavailable("launch: no free port on {}: {}", host, why));
    }
    ports.push_back(ntohs(a.sin_port));
  }
  for (int f : fds) close(f);
  return ports;
}

void WriteAll(int fd, const std::string& text) {
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;  // our own output is gone (closed pipe): nothing better to do
    done += static_cast<size_t>(n);
  }
}

// One task's process and its two output pipes.
struct Child {
  TaskId task;
  std::string prefix;  // "[worker:1] "
  pid_t pid = -1;
  int fds[2] = {-1, -1};  // stdout, stderr read ends
  std::string pending[2];
  bool exited = false;
  int status = 0;  // waitpid status

  // Forwards complete lines (all of it at EOF) with the prefix, one write per line.
  void Pump(int which, bool eof) {
    std::string& buf = pending[which];
    const int out = which == 0 ? STDOUT_FILENO : STDERR_FILENO;
    size_t start = 0;
    for (size_t nl; (nl = buf.find('\n', start)) != std::string::npos; start = nl + 1) {
      WriteAll(out, prefix + buf.substr(start, nl + 1 - start));
    }
    buf.erase(0, start);
    if (eof && !buf.empty()) {
      WriteAll(out, prefix + buf + "\n");
      buf.clear();
    }
  }
  void Read(int which) {
    char chunk[65536];
    const ssize_t n = read(fds[which], chunk, sizeof(chunk));
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) return;
    if (n <= 0) {
      Pump(which, true);
      close(fds[which]);
      fds[which] = -1;
      return;
    }
    pending[which].append(chunk, static_cast<size_t>(n));
    Pump(which, false);
  }
  bool pipes_open() const { return fds[0] >= 0 || fds[1] >= 0; }
  void CloseAll() {
    for (int w = 0; w < 2; ++w) {
      if (fds[w] >= 0) {
        Pump(w, true);
        close(fds[w]);
        fds[w] = -1;
      }
    }
  }
  bool failed() const { return exited && !(WIFEXITED(status) && WEXITSTATUS(status) == 0); }
  std::string Describe() const {
    if (WIFSIGNALED(status)) return fmt::format("was killed by signal {} ({})", WTERMSIG(status), strsignal(WTERMSIG(status)));
    return fmt::format("exited with status {}", WEXITSTATUS(status));
  }
  int ExitCode() const { return WIFSIGNALED(status) ? 128 + WTERMSIG(status) : WEXITSTATUS(status); }
};

// Forks `c`'s process: own process group, killed if the launcher dies, TF_CONFIG in its environment.
// status_file: WEFT_STATUS_FILE for the task (`--status`); empty: not set.
void Start(Child& c, const std::vector<std::string>& command, const std::string& tf_config, int restart,
           const std::string& status_file, const sigset_t& original_mask) {
  int out[2], err[2];
  if (pipe2(out, O_CLOEXEC) != 0) ThrowErrno("pipe");
  if (pipe2(err, O_CLOEXEC) != 0) ThrowErrno("pipe");
  std::vector<char*> argv;
  for (const std::string& a : command) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  const std::string task = c.task.ToString();
  const std::string restart_count = std::to_string(restart);
  const pid_t launcher = getpid();
  const pid_t pid = fork();
  if (pid < 0) ThrowErrno("fork");
  if (pid == 0) {  // child: only async-signal-safe calls until exec
    setpgid(0, 0);
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != launcher) _exit(127);
    dup2(out[1], STDOUT_FILENO);
    dup2(err[1], STDERR_FILENO);
    for (int s : {SIGINT, SIGTERM, SIGHUP, SIGCHLD, SIGPIPE}) signal(s, SIG_DFL);
    sigprocmask(SIG_SETMASK, &original_mask, nullptr);
    setenv("TF_CONFIG", tf_config.c_str(), 1);
    setenv("WEFT_TASK", task.c_str(), 1);
    setenv("WEFT_RESTART_COUNT", restart_count.c_str(), 1);
    if (!status_file.empty()) setenv("WEFT_STATUS_FILE", status_file.c_str(), 1);
    setenv("PYTHONUNBUFFERED", "1", 1);
    execvp(argv[0], argv.data());
    const std::string msg = std::string("weft-zoo launch: cannot run '") + argv[0] + "': " + std::strerror(errno) + "\n";
    (void)!write(STDERR_FILENO, msg.data(), msg.size());
    _exit(127);
  }
  setpgid(pid, pid);  // also here, so the group exists before we might signal it
  close(out[1]);
  close(err[1]);
  c.pid = pid;
  c.fds[0] = out[0];
  c.fds[1] = err[0];
}

class Launcher {
 public:
  explicit Launcher(const LaunchOptions& o) : o_(o) {}

  int Run() {
    if (o_.command.empty()) throw Error(errors::InvalidArgument("launch: no command given (put it after --)"));
    if (o_.workers < 1) throw Error(errors::InvalidArgument("launch: -n must be at least 1, got {}", o_.workers));
    if (o_.max_restarts < 0) {
      throw Error(errors::InvalidArgument("launch: --max-restarts must be at least 0, got {}", o_.max_restarts));
    }
    // SIGCHLD and the forwarded signals arrive on a signalfd, not as handlers.
    sigset_t mask, original;
    sigemptyset(&mask);
    for (int s : {SIGCHLD, SIGINT, SIGTERM, SIGHUP}) sigaddset(&mask, s);
    sigprocmask(SIG_BLOCK, &mask, &original);
    const int sfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
    struct sigaction ignore_pipe {};
    ignore_pipe.sa_handler = SIG_IGN;
    struct sigaction old_pipe {};
    sigaction(SIGPIPE, &ignore_pipe, &old_pipe);
    int result = 1;
    try {
      if (sfd < 0) ThrowErrno("signalfd");
      for (int restart = 0;; ++restart) {
        result = RunIncarnation(sfd, original, restart);
        // Restart only after a task failed on its own: a signal the launcher forwarded (Ctrl-C)
        // ends the job.
        if (failure_ == nullptr || forwarded_ != 0 || restart >= o_.max_restarts) break;
        WriteAll(STDERR_FILENO, fmt::format("weft-zoo launch: restarting the job after task {} {} (restart {} of {})\n",
                                            failure_->task.ToString(), failure_->Describe(), restart + 1,
                                            o_.max_restarts));
        for (Child& c : children_) c.CloseAll();
      }
      if (failure_ != nullptr) {
        WriteAll(STDERR_FILENO, fmt::format("weft-zoo launch: failed: task {} {}\n", failure_->task.ToString(),
                                            failure_->Describe()));
        SummarizeReports();
      }
    } catch (...) {
      Stop(SIGKILL);
      ReapAll(/*block=*/true);
      Cleanup(sfd, original, old_pipe);
      throw;
    }
    Cleanup(sfd, original, old_pipe);
    return result;
  }

 private:
  // One run of the whole job on fresh ports: starts every task and waits until all have exited.
  int RunIncarnation(int sfd, const sigset_t& original, int restart) {
    incarnation_start_ = std::filesystem::file_time_type::clock::now();
    children_.clear();
    stopping_ = false;
    failure_ = nullptr;
    kill_deadline_.reset();
    const int total = o_.workers + o_.ps + (o_.chief ? 1 : 0);
    const std::vector<int> ports = FreePorts(o_.host, total);
    std::map<std::string, std::vector<std::string>> jobs;
    size_t next = 0;
    auto add = [&](const std::string& job, int n) {
      for (int i = 0; i < n; ++i) jobs[job].push_back(fmt::format("{}:{}", o_.host, ports[next++]));
    };
    if (o_.chief) add("chief", 1);
    add("worker", o_.workers);
    add("ps", o_.ps);
    ClusterConfig config{ClusterSpec(jobs), std::nullopt};
    WriteAll(STDERR_FILENO, fmt::format("weft-zoo launch: cluster {}\n", config.cluster.ToJson()));
    children_.reserve(static_cast<size_t>(total));
    for (const TaskId& t : config.cluster.Tasks()) {
      children_.push_back(Child{.task = t, .prefix = fmt::format("[{}] ", t.ToString())});
      Start(children_.back(), o_.command, config.ToTfConfig(t), restart, o_.status ? StatusPath(t) : "", original);
    }
    return Loop(sfd);
  }

  // Where task t writes its status board (`--status`): the working directory, absolute (the
  // task may change directory).
  static std::string StatusPath(const TaskId& t) {
    return (std::filesystem::current_path() / fmt::format("weft-status-{}-{}.txt", t.job, t.index)).string();
  }

  // Each task's file path(task), (task, text), the text empty where the file is missing or a
  // previous incarnation's.
  template <typename PathOf>
  std::vector<std::pair<std::string, std::string>> ReadTaskFiles(const PathOf& path_of) const {
    std::vector<std::pair<std::string, std::string>> files;
    for (const Child& c : children_) {
      const std::string path = path_of(c.task);
      std::error_code ec;
      const auto written = std::filesystem::last_write_time(path, ec);
      std::string text;
      if (!ec && written >= incarnation_start_) {
        std::ifstream in(path);
        text.assign(std::istreambuf_iterator<char>(in), {});
      }
      files.emplace_back(c.task.ToString(), std::move(text));
    }
    return files;
  }

  // `--status`: the tasks' status files written during this incarnation, one line per task,
  // when any changed since the last print.
  void PrintStatus() {
    const std::vector<std::pair<std::string, std::string>> statuses = ReadTaskFiles(StatusPath);
    bool changed = false;
    for (size_t i = 0; i < statuses.size(); ++i) {
      changed = changed || i >= last_statuses_.size() || statuses[i].second != last_statuses_[i].second;
    }
    if (!changed) return;
    last_statuses_ = statuses;
    bool any = false;
    for (const auto& [task, text] : statuses) any = any || !text.empty();
    if (any) WriteAll(STDERR_FILENO, SummarizeStatus(statuses));
  }

  // The hang reports the tasks wrote in the working directory during this incarnation
  // (MultiWorkerMirroredStrategy's default place), summed up: which rank everyone waits for.
  void SummarizeReports() {
    const std::vector<std::pair<std::string, std::string>> reports =
        ReadTaskFiles([](const TaskId& t) { return fmt::format("weft-hang-{}-{}.txt", t.job, t.index); });
    bool any = false;
    for (const auto& [task, text] : reports) any = any || !text.empty();
    if (!any) return;
    std::string out = "weft-zoo launch: hang reports (weft-hang-<job>-<index>.txt):\n";
    const std::string summary = SummarizeHangReports(reports);
    for (size_t start = 0; start < summary.size();) {
      const size_t end = summary.find('\n', start);
      out += "weft-zoo launch:   " + summary.substr(start, end - start) + "\n";
      start = end == std::string::npos ? summary.size() : end + 1;
    }
    // The trace dumps written beside the reports in this incarnation (runtime/trace_ring.h).
    const std::vector<std::pair<std::string, std::string>> traces =
        ReadTaskFiles([](const TaskId& t) { return fmt::format("weft-trace-{}-{}.json", t.job, t.index); });
    std::string dumped;
    for (const auto& [task, text] : traces) {
      if (!text.empty()) dumped += (dumped.empty() ? "" : ", ") + task;
    }
    if (!dumped.empty()) {
      out += fmt::format("weft-zoo launch: traces of {} (weft-trace-<job>-<index>.json); one timeline: "
                         "weft-zoo trace merge . -o all.json\n", dumped);
    }
    WriteAll(STDERR_FILENO, out);
  }

  void Cleanup(int sfd, const sigset_t& original, const struct sigaction& old_pipe) {
    for (Child& c : children_) c.CloseAll();
    if (sfd >= 0) close(sfd);
    sigaction(SIGPIPE, &old_pipe, nullptr);
    sigprocmask(SIG_SETMASK, &original, nullptr);
  }

  // Signals every task's process group (exited ones too: their children may be left).
  void Stop(int sig, bool ps_only = false) {
    for (Child& c : children_) {
      if (c.pid > 0 && (!ps_only || c.task.job == "ps")) killpg(c.pid, sig);
    }
    if (!kill_deadline_) kill_deadline_ = Clock::now() + o_.grace;
  }

  void ReapAll(bool block) {
    std::vector<Child*> reaped;
    for (Child& c : children_) {
      if (c.exited || c.pid <= 0) continue;
      int status = 0;
      pid_t r;
      do {
        r = waitpid(c.pid, &status, block ? 0 : WNOHANG);
      } while (r < 0 && errno == EINTR);
      if (r == c.pid) {
        c.exited = true;
        c.status = status;
        reaped.push_back(&c);
      }
    }
    // A task killed by a signal is the cause when others exit in the same round: they fail because
    // its connections dropped, within milliseconds, and the first failure seen is the one reported.
    std::stable_partition(reaped.begin(), reaped.end(), [](const Child* c) { return WIFSIGNALED(c->status); });
    for (Child* c : reaped) OnExit(*c);
  }

  void OnExit(Child& c) {
    if (c.failed() && !stopping_) {
      stopping_ = true;
      failure_ = &c;
      WriteAll(STDERR_FILENO, fmt::format("weft-zoo launch: task {} {}; stopping the other tasks\n", c.task.ToString(),
                                          c.Describe()));
      Stop(SIGTERM);
      return;
    }
    bool workers_done = true;
    for (const Child& k : children_) workers_done = workers_done && (k.task.job == "ps" || (k.exited && !k.failed()));
    if (workers_done && !stopping_) {  // ps tasks serve until told otherwise
      stopping_ = true;
      Stop(SIGTERM, /*ps_only=*/true);
    }
  }

  int Loop(int sfd) {
    std::optional<Clock::time_point> drain_deadline;
    for (;;) {
      const bool all_exited = std::all_of(children_.begin(), children_.end(), [](const Child& c) { return c.exited; });
      if (all_exited && !drain_deadline) drain_deadline = Clock::now() + std::chrono::seconds(1);
      const bool pipes = std::any_of(children_.begin(), children_.end(), [](const Child& c) { return c.pipes_open(); });
      if (all_exited && (!pipes || Clock::now() >= *drain_deadline)) break;
      if (kill_deadline_ && !all_exited && Clock::now() >= *kill_deadline_) {
        WriteAll(STDERR_FILENO, fmt::format("weft-zoo launch: tasks still running {} ms after SIGTERM: killing them\n",
                                            o_.grace.count()));
        Stop(SIGKILL);
        kill_deadline_ = Clock::now() + std::chrono::hours(24);  // SIGKILL is final; reaping follows
      }
      std::vector<pollfd> fds = {{sfd, POLLIN, 0}};
      std::vector<std::pair<Child*, int>> owners = {{nullptr, 0}};
      for (Child& c : children_) {
        for (int w = 0; w < 2; ++w) {
          if (c.fds[w] >= 0) {
            fds.push_back({c.fds[w], POLLIN, 0});
            owners.emplace_back(&c, w);
          }
        }
      }
      auto until = [](Clock::time_point t) {
        return static_cast<int>(std::max<int64_t>(
            0, std::chrono::duration_cast<std::chrono::milliseconds>(t - Clock::now()).count() + 1));
      };
      int timeout = 1000;
      if (kill_deadline_) timeout = std::min(timeout, until(*kill_deadline_));
      if (drain_deadline) timeout = std::min(timeout, until(*drain_deadline));
      const int n = poll(fds.data(), fds.size(), timeout);
      if (n < 0 && errno != EINTR) ThrowErrno("poll");
      for (size_t i = 1; n > 0 && i < fds.size(); ++i) {
        if (fds[i].revents != 0) owners[i].first->Read(owners[i].second);
      }
      if (n > 0 && fds[0].revents != 0) {
        signalfd_siginfo info;
        while (read(sfd, &info, sizeof(info)) == sizeof(info)) {
          const int sig = static_cast<int>(info.ssi_signo);
          if (sig == SIGCHLD) continue;
          WriteAll(STDERR_FILENO, fmt::format("weft-zoo launch: got signal {} ({}): forwarding it to every task\n",
                                              sig, strsignal(sig)));
          if (forwarded_ == 0) forwarded_ = sig;
          stopping_ = true;
          Stop(sig);
        }
      }
      ReapAll(/*block=*/false);
      if (o_.status && Clock::now() - last_status_print_ >= std::chrono::seconds(1)) {
        last_status_print_ = Clock::now();
        PrintStatus();
      }
    }
    // The tasks' last statuses (when changed): those of tasks that ended between two prints would
    // otherwise never show, and the order of a task's exit and the next print is a race.
    if (o_.status) PrintStatus();
    if (failure_ != nullptr) return failure_->ExitCode();
    if (forwarded_ != 0) return 128 + forwarded_;
    return 0;
  }

  const LaunchOptions& o_;
  std::vector<Child> children_;  // reserved up front: Child pointers stay valid
  bool stopping_ = false;
  Child* failure_ = nullptr;
  int forwarded_ = 0;
  std::optional<Clock::time_point> kill_deadline_;
  std::filesystem::file_time_type incarnation_start_;  // hang reports older than this are a previous run's
  Clock::time_point last_status_print_{};
  std::vector<std::pair<std::string, std::string>> last_statuses_;  // what PrintStatus printed last
};

}  // namespace

std::string SummarizeStatus(const std::vector<std::pair<std::string, std::string>>& statuses) {
  struct Parsed {
    std::string task;
    bool ok = false;
    double step = 0, images_per_second = 0, collective_fraction = 0;
  };
  std::vector<Parsed> parsed;
  for (const auto& [task, text] : statuses) {
    Parsed p{.task = task};
    std::istringstream in(text);
    std::string key;
    double value = 0;
    int found = 0;
    while (in >> key >> value) {
      if (key == "step") p.step = value, ++found;
      if (key == "images_per_second") p.images_per_second = value, ++found;
      if (key == "collective_fraction") p.collective_fraction = value, ++found;
    }
    p.ok = found == 3;
    parsed.push_back(p);
  }
  // The straggler spends the least time in collectives: the others wait there for it. Named when
  // at least two tasks report and the shares differ by 5 points or more.
  const Parsed* slowest = nullptr;
  double most = -1;
  int reporting = 0;
  for (const Parsed& p : parsed) {
    if (!p.ok) continue;
    ++reporting;
    if (slowest == nullptr || p.collective_fraction < slowest->collective_fraction) slowest = &p;
    most = std::max(most, p.collective_fraction);
  }
  if (reporting < 2 || most - slowest->collective_fraction < 0.05) slowest = nullptr;
  std::string out;
  for (const Parsed& p : parsed) {
    if (!p.ok) {
      out += fmt::format("weft-zoo launch: status {}: no status yet\n", p.task);
      continue;
    }
    out += fmt::format("weft-zoo launch: status {}: step {:.0f}, {:.0f} img/s, {:.0f}% in collectives, slowest peer: {}\n",
                       p.task, p.step, p.images_per_second, 100 * p.collective_fraction,
                       slowest == nullptr ? "none (alike)" : slowest == &p ? "this one (the others wait for it)"
                                                                          : slowest->task);
  }
  return out;
}

int Launch(const LaunchOptions& options) {
  // Every task gets the same cluster secret (docs/security.md): the user's, or a random one made
  // here, through the environment the children inherit (the launcher's own, set before any fork).
  const ClusterSecret secret = ResolveClusterSecret();  // also checks a WEFT_CLUSTER_SECRET_FILE
  if (secret.secret.empty() && !secret.insecure) setenv("WEFT_CLUSTER_SECRET", GenerateClusterSecret().c_str(), 1);
  Launcher l(options);
  return l.Run();
}

}  // namespace weft::zoo
