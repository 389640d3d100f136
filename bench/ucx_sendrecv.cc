// Send/Recv through UcxRendezvous between two processes against ucx_perftest on the same transport:
// bandwidth at 64 KiB, 4 MiB and 64 MiB (tag_bw) and one-way latency at 8 B (tag_lat), run
// interleaved (weft, perftest, weft, perftest, ...) because this machine's speed drifts, and
// compared as ratios of medians. The floor of issue 6: >= 0.85 of perftest's bandwidth at >= 4 MiB,
// <= 3x its latency at 8 B.
//
//   build/bench_ucx_sendrecv [--transport sm|tcp|both] [--reps 3] [--eager BYTES] [--measure 1|0]
//                            [--only bw|bw64|lat] [--perftest 1|0] [--auth mac|handshake|off]
//
// --eager: the eager threshold (with --measure 1, the default, its upper bound: the threshold is
// measured on the live endpoint at connection and printed). --help also lists the WEFT_UCX_*
// environment overrides (distributed/ucx/environment.h), which win over the flags.
//
// weft's side: this program runs itself as the peer (task worker:1). Bandwidth: the sender posts N
// tensors of the size at once and the receiver answers with one small tensor when all N arrived.
// Latency: a ping-pong of 8-byte tensors driven from the Recv callbacks (no thread wake-ups in the
// loop, as in perftest); half the median round trip, against perftest's median latency.
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <future>
#include <string>
#include <thread>
#include <vector>

#include "core/heap_count.h"
#include "distributed/ucx/environment.h"
#include "distributed/ucx_rendezvous.h"

using namespace weft;
using Clock = std::chrono::steady_clock;

namespace {

struct Size {
  int64_t bytes;
  int count;
};
const Size kSizes[] = {{64 << 10, 2000}, {4 << 20, 64}, {64 << 20, 8}};
constexpr int kPingPongs = 5000;

std::string Key(int src, int dst, const std::string& name) {
  return fmt::format("/job:worker/replica:0/task:{}/device:CPU:0;1;/job:worker/replica:0/task:{}/device:CPU:0;{};0:0",
                     src, dst, name);
}

bool g_measure = true;
// --only: "bw" or "lat" runs that half only, "bw64" the 64 KiB bandwidth alone (profiling); "" runs all.
std::string g_only;
bool g_perftest = true;  // --perftest 0: weft alone (profiling)
// --auth: "mac" (a cluster secret, every header message MAC'd: the default), "handshake" (the
// secret proven at connection only: authenticate_messages off), "off" (insecure).
std::string g_auth = "mac";

UcxTransportOptions Options(int task, const std::string& tls, size_t eager) {
  UcxTransportOptions o;
  o.measure_eager_threshold = g_measure;
  o.cluster = ClusterSpec::FromFlag("worker=127.0.0.1:1,127.0.0.1:2");
  o.task = {"worker", task};
  o.listen_port_override = 0;
  o.eager_threshold = eager;
  o.context.config["TLS"] = tls;
  if (g_auth != "mac" && g_auth != "handshake" && g_auth != "off") throw std::runtime_error("--auth " + g_auth);
  o.insecure = g_auth == "off";
  if (!o.insecure) o.cluster_secret = "bench-secret";
  o.authenticate_messages = g_auth == "mac";
  ApplyUcxEnvironment(&o);  // WEFT_UCX_* (--help lists them)
  return o;
}

void WriteLine(int fd, const std::string& s) {
  const std::string line = s + "\n";
  if (write(fd, line.data(), line.size()) != static_cast<ssize_t>(line.size())) throw std::runtime_error("pipe");
}
std::string ReadLine(int fd) {
  std::string line;
  char c;
  while (read(fd, &c, 1) == 1 && c != '\n') line += c;
  return line;
}

// Waits for a Recv (bench: generous bound, errors abort the run).
Tensor Wait(Rendezvous& r, const std::string& key) {
  auto p = std::make_shared<std::promise<Tensor>>();
  auto f = p->get_future();
  r.RecvAsync(key, {}, [p](const Status& s, const Tensor& t, bool) {
    if (!s.ok()) {
      p->set_exception(std::make_exception_ptr(Error(s)));
    } else {
      p->set_value(t);
    }
  });
  if (f.wait_for(std::chrono::seconds(60)) != std::future_status::ready) throw Error(errors::DeadlineExceeded("{}", key));
  return f.get();
}

// One side of the ping-pong: on `pong_side`, each ping is answered; otherwise each pong sends the next ping.
// The ping side stamps every pong's arrival (the callbacks run one after another on one thread).
// The keys are made before the loop, as a graph's Send/Recv nodes hold theirs.
std::vector<Clock::time_point> g_stamps;
std::vector<std::string> g_ping_keys, g_pong_keys;

void PingPong(UcxRendezvous* r, bool pong_side, int i, const Tensor& t, std::shared_ptr<std::promise<void>> done) {
  const std::string& in = pong_side ? g_ping_keys[i] : g_pong_keys[i];
  r->RecvAsync(in, {}, [r, pong_side, i, t, done](const Status& s, const Tensor&, bool) {
    if (!s.ok()) {
      std::fprintf(stderr, "ping-pong: %s\n", s.ToString().c_str());
      done->set_value();
      return;
    }
    if (!pong_side) g_stamps.push_back(Clock::now());
    if (pong_side) {
      (void)r->Send(g_pong_keys[i], {}, t, false);
      if (i + 1 < kPingPongs) PingPong(r, true, i + 1, t, done); else done->set_value();
    } else if (i + 1 < kPingPongs) {
      PingPong(r, false, i + 1, t, done);
      (void)r->Send(g_ping_keys[i + 1], {}, t, false);
    } else {
      done->set_value();
    }
  });
}

// weft's numbers for one repetition: MB/s per size, the one-way latency in microseconds, then the
// heap allocations per message (core/heap_count.h) of this process in the ping-pong (each message
// costs one send here and one receive here: sender and receiver) and in the 64 KiB run (sends
// only; the keys' fmt::format is outside the count).
std::vector<double> RunWeft(UcxRendezvousMgr& mgr, int task, uint64_t* step) {
  std::vector<double> out;
  double allocs_64k = 0;
  for (const Size& size : kSizes) {
    if (g_only == "lat" || (g_only == "bw64" && &size != &kSizes[0])) {
      out.push_back(0);
      continue;
    }
    auto r = mgr.Find(++*step);
    if (task == 0) {
      Tensor t = Tensor::Zeros(DType::kUInt8, TensorShape({size.bytes}));
      std::vector<std::string> keys;
      for (int i = 0; i < size.count; ++i) keys.push_back(Key(0, 1, fmt::format("m{}", i)));
      const HeapCount heap = HeapCount::Now();
      const auto start = Clock::now();
      for (int i = 0; i < size.count; ++i) ThrowIfError(r->Send(keys[static_cast<size_t>(i)], {}, t, false));
      Wait(*r, Key(1, 0, "ack"));
      const double s = std::chrono::duration<double>(Clock::now() - start).count();
      if (&size == &kSizes[0]) allocs_64k = static_cast<double>(HeapCount::Now().Since(heap)) / size.count;
      out.push_back(static_cast<double>(size.bytes) * size.count / s / 1e6);
    } else {
      // Every Recv posted at once (as an executor posts a step's Recvs, and perftest its receives);
      // the last to complete wakes this thread.
      auto left = std::make_shared<std::atomic<int>>(size.count);
      auto all = std::make_shared<std::promise<Status>>();
      auto f = all->get_future();
      for (int i = 0; i < size.count; ++i) {
        r->RecvAsync(Key(0, 1, fmt::format("m{}", i)), {}, [left, all](const Status& s, const Tensor&, bool) {
          if (!s.ok()) {
            if (left->exchange(-1) > 0) all->set_value(s);
          } else if (left->fetch_sub(1) == 1) {
            all->set_value(Status());
          }
        });
      }
      if (f.wait_for(std::chrono::seconds(60)) != std::future_status::ready) {
        throw Error(errors::DeadlineExceeded("bandwidth run: {} tensors of {} B", size.count, size.bytes));
      }
      ThrowIfError(f.get());
      ThrowIfError(r->Send(Key(1, 0, "ack"), {}, Tensor::Scalar<int32_t>(1), false));
    }
    mgr.Cleanup(*step);
  }
  if (g_only == "bw" || g_only == "bw64") {
    out.insert(out.end(), {0, 0, allocs_64k});
    return out;
  }
  auto r = mgr.Find(++*step);
  const Tensor t = Tensor::Zeros(DType::kUInt8, TensorShape({8}));
  auto done = std::make_shared<std::promise<void>>();
  auto f = done->get_future();
  if (g_ping_keys.empty()) {
    for (int i = 0; i < kPingPongs; ++i) {
      g_ping_keys.push_back(Key(0, 1, fmt::format("ping{}", i)));
      g_pong_keys.push_back(Key(1, 0, fmt::format("pong{}", i)));
    }
  }
  g_stamps.assign(1, Clock::now());
  g_stamps.reserve(kPingPongs + 1);
  const HeapCount heap = HeapCount::Now();
  if (task == 0) {
    PingPong(r.get(), false, 0, t, done);
    ThrowIfError(r->Send(g_ping_keys[0], {}, t, false));
  } else {
    PingPong(r.get(), true, 0, t, done);
  }
  if (f.wait_for(std::chrono::seconds(60)) != std::future_status::ready) throw Error(errors::DeadlineExceeded("ping-pong"));
  const double allocs = static_cast<double>(HeapCount::Now().Since(heap)) / kPingPongs;
  // Half the median round trip (ucx_perftest's figure is its median too).
  std::vector<double> rtt;
  for (size_t i = 1; i < g_stamps.size(); ++i) {
    rtt.push_back(std::chrono::duration<double, std::micro>(g_stamps[i] - g_stamps[i - 1]).count());
  }
  std::sort(rtt.begin(), rtt.end());
  out.push_back(rtt.empty() ? 0 : rtt[rtt.size() / 2] / 2);
  out.insert(out.end(), {allocs, allocs_64k});
  mgr.Cleanup(*step);
  return out;
}

int FreePort() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a));
  socklen_t len = sizeof(a);
  getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  close(fd);
  return ntohs(a.sin_port);
}

// ucx_perftest's "Final:" figure: overall MB/s for tag_bw, the median latency (us) for tag_lat.
double RunPerftest(const std::string& tls, const std::string& test, int64_t bytes, int count) {
  const int port = FreePort();
  std::fflush(nullptr);  // a forked child must not flush our buffered output again
  const pid_t server = fork();
  if (server == 0) {
    setenv("UCX_TLS", tls.c_str(), 1);
    freopen("/dev/null", "w", stdout);
    execlp("ucx_perftest", "ucx_perftest", "-p", std::to_string(port).c_str(), nullptr);
    _exit(127);
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  const std::string cmd = fmt::format("UCX_TLS={} timeout 120 ucx_perftest 127.0.0.1 -p {} -t {} -s {} -n {} 2>&1", tls,
                                      port, test, bytes, count);
  FILE* p = popen(cmd.c_str(), "r");
  char line[512];
  double value = -1;
  while (fgets(line, sizeof(line), p) != nullptr) {
    if (std::strncmp(line, "Final:", 6) != 0) continue;
    double v[8] = {};
    if (std::sscanf(line + 6, "%lf %lf %lf %lf %lf %lf %lf %lf", &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6],
                    &v[7]) == 8) {
      value = test == "tag_bw" ? v[5] : v[1];
    }
  }
  pclose(p);
  kill(server, SIGKILL);
  waitpid(server, nullptr, 0);
  return value;
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

int Child(int in_fd, int out_fd, const std::string& tls, size_t eager, int reps) {
  UcxRendezvousMgr mgr(Options(1, tls, eager), {std::chrono::seconds(60), nullptr});
  WriteLine(out_fd, std::to_string(mgr.transport().port()));
  mgr.transport().SetPeerAddress(0, {"127.0.0.1", std::stoi(ReadLine(in_fd))});
  ThrowIfError(mgr.ConnectAll());
  uint64_t step = 0;
  for (int rep = 0; rep <= reps; ++rep) {  // one warm-up run first
    if (ReadLine(in_fd) != "go") return 1;
    RunWeft(mgr, 1, &step);
    WriteLine(out_fd, "done");
  }
  return 0;
}

void Bench(const std::string& name, const std::string& weft_tls, const std::string& perftest_tls, size_t eager,
           int reps) {
  int down[2], up[2];
  if (pipe(down) != 0 || pipe(up) != 0) throw std::runtime_error("pipe");
  std::fflush(nullptr);
  const pid_t child = fork();
  if (child == 0) {
    close(down[1]);
    close(up[0]);
    execl("/proc/self/exe", "bench_ucx_sendrecv", "--child", std::to_string(down[0]).c_str(),
          std::to_string(up[1]).c_str(), weft_tls.c_str(), std::to_string(eager).c_str(), std::to_string(reps).c_str(),
          g_measure ? "1" : "0", g_only.empty() ? "all" : g_only.c_str(), g_auth.c_str(), nullptr);
    _exit(127);
  }
  close(down[0]);
  close(up[1]);
  std::vector<std::vector<double>> weft(6), perf(4);
  {
    UcxRendezvousMgr mgr(Options(0, weft_tls, eager), {std::chrono::seconds(60), nullptr});
    const std::string port = ReadLine(up[0]);
    WriteLine(down[1], std::to_string(mgr.transport().port()));
    mgr.transport().SetPeerAddress(1, {"127.0.0.1", std::stoi(port)});
    ThrowIfError(mgr.ConnectAll());
    mgr.transport().WaitForThreshold(1, std::chrono::seconds(5));
    uint64_t step = 0;
    // Warm-up (not timed): connections wired up, receive buffers in the pool, pages touched; as
    // ucx_perftest's own warm-up iterations.
    WriteLine(down[1], "go");
    RunWeft(mgr, 0, &step);
    ReadLine(up[0]);
    for (int rep = 0; rep < reps; ++rep) {
      WriteLine(down[1], "go");
      std::vector<double> w = RunWeft(mgr, 0, &step);
      ReadLine(up[0]);
      for (int i = 0; i < 6; ++i) weft[i].push_back(w[i]);
      std::fprintf(stderr, "run %d: weft %.0f / %.0f / %.0f MB/s, %.2f us, %.2f / %.2f heap allocations per message\n",
                   rep + 1, w[0], w[1], w[2], w[3], w[4], w[5]);
      for (int i = 0; i < 3; ++i) {
        const bool run = g_perftest && g_only != "lat" && (g_only != "bw64" || i == 0);
        perf[i].push_back(run ? RunPerftest(perftest_tls, "tag_bw", kSizes[i].bytes, kSizes[i].count) : 0);
      }
      perf[3].push_back(g_perftest && g_only != "bw" && g_only != "bw64" ? RunPerftest(perftest_tls, "tag_lat", 8, kPingPongs) : 0);
    }
    std::printf("\n%s: weft UCX_TLS=%s, ucx_perftest UCX_TLS=%s, eager threshold %s %zu B, %d interleaved runs "
                "(medians)\n", name.c_str(), weft_tls.c_str(), perftest_tls.c_str(),
                g_measure ? "measured, at most" : "fixed at", eager, reps);
    std::printf("  %-22s %12s %14s %8s\n", "", "weft", "ucx_perftest", "ratio");
    const char* labels[] = {"bandwidth 64 KiB MB/s", "bandwidth 4 MiB MB/s", "bandwidth 64 MiB MB/s", "latency 8 B us"};
    for (int i = 0; i < 4; ++i) {
      const double a = Median(weft[i]), b = Median(perf[i]);
      const char* floor = i == 0 ? "" : i < 3 ? (a / b >= 0.85 ? "  (>= 0.85: ok)" : "  (< 0.85: below the floor)")
                                              : (a / b <= 3 ? "  (<= 3x: ok)" : "  (> 3x: above the ceiling)");
      std::printf("  %-22s %12.2f %14.2f %8.2f%s\n", labels[i], a, b, b > 0 ? a / b : 0.0, floor);
    }
    std::printf("  weft heap allocations per message (core/heap_count.h, this process): %.2f in the 8 B ping-pong "
                "(a send and a receive each, the bench's Recv callback included), %.2f per 64 KiB send\n",
                Median(weft[4]), Median(weft[5]));
    std::printf("  weft %s\n", mgr.transport().ThresholdReport(1).c_str());
    std::printf("  weft counters toward the peer: %s\n", mgr.transport().Counters(1).ToString().c_str());
  }
  int status = 0;
  waitpid(child, &status, 0);
  close(down[1]);
  close(up[0]);
}

}  // namespace

int main(int argc, char** argv) {
  try {
    if (argc == 10 && std::string(argv[1]) == "--child") {
      g_measure = std::string(argv[7]) == "1";
      g_auth = argv[9];
      if (std::string(argv[8]) != "all") g_only = argv[8];
      return Child(std::stoi(argv[2]), std::stoi(argv[3]), argv[4], std::stoul(argv[5]), std::stoi(argv[6]));
    }
    constexpr const char* kUsage =
        "--transport sm|tcp|both, --reps N, --eager BYTES, --measure 1|0, --only bw|bw64|lat, --perftest 1|0, "
        "--auth mac|handshake|off";
    if (argc == 2 && (std::string(argv[1]) == "--help" || std::string(argv[1]) == "-h")) {
      std::printf("build/bench_ucx_sendrecv [%s]\nEnvironment overrides (distributed/ucx/environment.h):\n%s", kUsage,
                  UcxEnvironmentHelp().c_str());
      return 0;
    }
    std::string transport = "both";
    int reps = 3;
    size_t eager = 32 << 10;
    for (int i = 1; i + 1 < argc; i += 2) {
      const std::string flag = argv[i];
      if (flag == "--transport") transport = argv[i + 1];
      else if (flag == "--reps") reps = std::stoi(argv[i + 1]);
      else if (flag == "--eager") eager = std::stoul(argv[i + 1]);
      else if (flag == "--measure") g_measure = std::string(argv[i + 1]) == "1";
      else if (flag == "--only") g_only = argv[i + 1];
      else if (flag == "--perftest") g_perftest = std::string(argv[i + 1]) == "1";
      else if (flag == "--auth") g_auth = argv[i + 1];
      else throw std::runtime_error("unknown flag " + flag + " (" + kUsage + "; --help lists the environment's)");
    }
    // weft needs tcp in UCX_TLS for the connection manager; its tensors still go by shared memory.
    if (transport == "sm" || transport == "both") Bench("shared memory", "posix,sysv,cma,self,tcp", "posix,sysv,cma,self", eager, reps);
    if (transport == "tcp" || transport == "both") Bench("tcp", "tcp,self", "tcp,self", eager, reps);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_ucx_sendrecv: %s\n", e.what());
    return 1;
  }
  return 0;
}
