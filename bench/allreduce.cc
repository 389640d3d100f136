// All-reduce bus bandwidth between 2 processes on this machine: weft's collectives (ring above
// 64 KiB, recursive doubling below, over UcxRendezvous on shared memory) against OpenMPI's
// MPI_Allreduce (default pml, and pml ucx) and torch.distributed gloo (bench/gloo_allreduce.py),
// float32 sum at 4 KiB, 64 KiB, 1 MiB, 16 MiB, 64 MiB.
// busbw = bytes * 2(n-1)/n / time, as nccl-tests define it (n = 2: bytes / time). Runs
// interleaved (weft, MPI, MPI+ucx, gloo, weft, ...) because this machine's speed drifts; prints medians
// and ratios. The floor of issue 7: >= 1.0x MPI at 1 MiB and above, within 2x of MPI at 4 KiB.
//
//   bench/run_allreduce.sh [--reps 3]        (installs Debian's OpenMPI, builds, runs this)
//   build/bench/bench_allreduce [--reps 3] [--mpi build/bench/bench_mpi_allreduce] [--chunk BYTES]
//                               [--gloo bench/gloo_allreduce.py] [--python /usr/bin/python3]
//                               [--sizes 4096,1048576] [--iters N]
// (--gloo '' skips gloo; a peer that is missing or fails prints 0; --help also lists the WEFT_UCX_*
// environment overrides, distributed/ucx/environment.h)
//
// weft's side runs itself as the peer (task worker:1); each all-reduce is one step (its own
// rendezvous), as in training. Every process checks the sum it got.
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <future>
#include <string>
#include <vector>

#include "core/heap_count.h"
#include "runtime/collectives/algorithms.h"
#include "distributed/ucx/environment.h"
#include "distributed/ucx_rendezvous.h"

using namespace weft;
using Clock = std::chrono::steady_clock;

namespace {

// The sizes timed (--sizes B,B,...: a subset, e.g. 4096 alone while profiling).
std::vector<int64_t> g_sizes = {4 << 10, 64 << 10, 1 << 20, 16 << 20, 64 << 20};

std::vector<int64_t> ParseSizes(const std::string& list) {
  std::vector<int64_t> sizes;
  size_t start = 0;
  while (start < list.size()) {
    const size_t comma = std::min(list.find(',', start), list.size());
    sizes.push_back(std::stoll(list.substr(start, comma - start)));
    if (sizes.back() <= 0 || sizes.back() % 4 != 0) {
      throw std::runtime_error("--sizes: " + list.substr(start, comma - start) + " is not a positive multiple of 4");
    }
    start = comma + 1;
  }
  if (sizes.empty()) throw std::runtime_error("--sizes: no size given");
  return sizes;
}

std::string JoinSizes() {
  std::string out;
  for (int64_t b : g_sizes) {
    if (!out.empty()) out += ',';
    out += std::to_string(b);
  }
  return out;
}

// All-reduces timed per size and run (--iters N sets them; 0: 512 MiB / size, 10 to 20000: a
// run of small ones must last long enough, tens of ms, for its median to hold still here).
int g_iters = 0;
int Iterations(int64_t bytes) {
  return g_iters > 0 ? g_iters : static_cast<int>(std::clamp<int64_t>((512LL << 20) / bytes, 10, 20000));
}

UcxTransportOptions Options(int task) {
  UcxTransportOptions o;
  o.cluster = ClusterSpec::FromFlag("worker=127.0.0.1:1,127.0.0.1:2");
  o.task = {"worker", task};
  o.listen_port_override = 0;
  // tcp only for the connection manager; tensors go by shared memory.
  o.context.config["TLS"] = "posix,sysv,cma,self,tcp";
  o.cluster_secret = "bench-secret";  // both processes are this program
  // WEFT_UCX_SPIN_US, WEFT_UCX_BUSY_SPIN_US, WEFT_UCX_YIELD, WEFT_UCX_LEND_PARK_US, WEFT_UCX_MEASURE,
  // WEFT_UCX_EAGER ... (--help lists them all).
  ApplyUcxEnvironment(&o);
  return o;
}

void Put(int fd, const std::string& s) {
  const std::string line = s + "\n";
  if (write(fd, line.data(), line.size()) != static_cast<ssize_t>(line.size())) throw std::runtime_error("pipe");
}
std::string Get(int fd) {
  std::string line;
  char c;
  while (read(fd, &c, 1) == 1 && c != '\n') line += c;
  return line;
}

// Seconds per all-reduce of `bytes` (float32) over `iters` steps; throws if a sum is wrong.
// Waited for by this thread (`chained` false: as a step's caller waits, driving the transport
// meanwhile: Rendezvous::DriveUntil),
// or `chained`: each all-reduce's end starts the next one on the thread that ended it (the UCX
// progress thread), so that no thread wakes in between, as in MPI's loop and the ping-pong of
// bench_ucx_sendrecv; this thread waits for the last.
// `collectives` must outlive `mgr` (whose steps' rendezvous hold the collectives until cleaned up).
// `allocs` (may be null): this process's heap allocations per all-reduce (core/heap_count.h), the
// bench's own promise and closures included.
double RunWeft(CollectiveContext& collectives, UcxRendezvousMgr& mgr, int task, int64_t bytes, int iters,
               int64_t chunk, uint64_t* step, bool chained, double* allocs = nullptr) {
  const int64_t n = bytes / 4;
  Tensor in(DType::kFloat32, TensorShape({n}));
  for (int64_t i = 0; i < n; ++i) in.data<float>()[i] = static_cast<float>(i % 1000 + task);
  CollectiveParams p;
  p.what = "bench all-reduce";
  p.group_size = 2;
  p.rank = task;
  p.group_key = 1;
  p.devices = {"/job:worker/replica:0/task:0/device:CPU:0", "/job:worker/replica:0/task:1/device:CPU:0"};
  p.chunk_bytes = chunk;
  p.timeout = std::chrono::seconds(60);
  const std::string algorithm = ChooseAllReduce(p, bytes);
  // One all-reduce as one step: its own rendezvous, cleaned up when it ends.
  auto start_one = [&collectives, &mgr, p, algorithm, in](uint64_t s,
                                                          std::function<void(const Status&, const Tensor&)> done) {
    std::shared_ptr<UcxRendezvous> r = mgr.Find(s);
    auto c = Collective::Create(p, &collectives, r.get(), [&mgr, s, done](const Status& st, const Tensor& t) {
      mgr.Cleanup(s);
      done(st, t);
    });
    c->Start(DType::kFloat32);
    if (algorithm == "ring") {
      RingAllReduce(c, in);
    } else {
      RecursiveDoublingAllReduce(c, in);
    }
    c->EndStart();
    return r;
  };
  auto wait = [](std::future<Tensor>& f) {
    if (f.wait_for(std::chrono::seconds(120)) != std::future_status::ready) {
      throw Error(errors::DeadlineExceeded("bench all-reduce did not end"));
    }
    return f.get();
  };
  auto deliver = [](const std::shared_ptr<std::promise<Tensor>>& promise, const Status& s, const Tensor& t) {
    if (s.ok()) {
      promise->set_value(t);
    } else {
      promise->set_exception(std::make_exception_ptr(Error(s)));
    }
  };
  Tensor out;
  Clock::time_point start;
  HeapCount heap;
  for (int it = -2; it < (chained ? 1 : iters); ++it) {  // two warm-up rounds
    if (it == 0) {
      heap = HeapCount::Now();
      start = Clock::now();
    }
    auto promise = std::make_shared<std::promise<Tensor>>();
    auto f = promise->get_future();
    if (!chained || it < 0) {
      // As a step's caller waits (Executor::Run): polling the transport until the end comes.
      auto ended = std::make_shared<std::atomic<bool>>(false);
      auto r = start_one(++*step, [promise, deliver, ended](const Status& s, const Tensor& t) {
        deliver(promise, s, t);
        ended->store(true, std::memory_order_release);
      });
      r->DriveUntil([&] { return ended->load(std::memory_order_acquire); });
    } else {
      // Steps first_step .. first_step + iters - 1, each started (posted: no recursion) by the previous one's end.
      struct Chain {
        std::function<void(uint64_t)> next;
      };
      auto chain = std::make_shared<Chain>();
      const uint64_t last = *step + static_cast<uint64_t>(iters);
      UcxWorker* worker = mgr.transport().worker();
      chain->next = [chain, start_one, promise, deliver, last, worker](uint64_t s) {
        start_one(s, [chain, promise, deliver, last, worker, s](const Status& st, const Tensor& t) {
          if (!st.ok() || s == last) {
            deliver(promise, st, t);
            worker->Post([chain] { chain->next = nullptr; });  // breaks the cycle
          } else {
            worker->Post([chain, s] { chain->next(s + 1); });
          }
        });
      };
      const uint64_t first = *step + 1;
      *step = last;
      worker->Post([chain, first] { chain->next(first); });
    }
    out = wait(f);
  }
  const double seconds = std::chrono::duration<double>(Clock::now() - start).count() / iters;
  if (allocs != nullptr) *allocs = static_cast<double>(HeapCount::Now().Since(heap)) / iters;
  for (int64_t i = 0; i < n; i += 997) {
    if (out.data<float>()[i] != static_cast<float>(2 * (i % 1000) + 1)) throw std::runtime_error("wrong sum");
  }
  return seconds;
}

int Child(int in_fd, int out_fd, int reps, int64_t chunk) {
  CollectiveContext collectives;  // outlives mgr
  UcxRendezvousMgr mgr(Options(1), {std::chrono::seconds(60), nullptr});
  Put(out_fd, std::to_string(mgr.transport().port()));
  mgr.transport().SetPeerAddress(0, {"127.0.0.1", std::stoi(Get(in_fd))});
  ThrowIfError(mgr.ConnectAll());
  uint64_t step = 0;
  for (int rep = 0; rep < reps; ++rep) {
    for (int64_t bytes : g_sizes) {
      if (Get(in_fd) != "go") return 1;
      for (bool chained : {false, true}) RunWeft(collectives, mgr, 1, bytes, Iterations(bytes), chunk, &step, chained);
      Put(out_fd, "done");
    }
  }
  // Our last all-reduce may end before the parent's (its data still in flight from here): stay
  // connected until the parent says it is done.
  Get(in_fd);
  return 0;
}

// A peer's seconds per all-reduce for each size: `launcher` runs it with --sizes and --iters, and
// it prints one line "allreduce BYTES SECONDS" per size (bench_mpi_allreduce, gloo_allreduce.py).
std::vector<double> RunPeer(const std::string& launcher, int max_iters = 1 << 30) {
  std::string sizes, iters;
  for (int64_t b : g_sizes) {
    sizes += fmt::format("{} ", b);
    iters += fmt::format("{} ", std::min(Iterations(b), max_iters));
  }
  const std::string cmd = fmt::format("timeout 300 {} --sizes {}--iters {} 2>/dev/null", launcher, sizes, iters);
  FILE* p = popen(cmd.c_str(), "r");
  std::vector<double> out;
  char line[256];
  while (p != nullptr && fgets(line, sizeof(line), p) != nullptr) {
    long long bytes = 0;
    double seconds = 0;
    if (std::sscanf(line, "allreduce %lld %lf", &bytes, &seconds) == 2) out.push_back(seconds);
  }
  if (p != nullptr) pclose(p);
  if (out.size() != std::size(g_sizes)) out.assign(std::size(g_sizes), 0);  // the peer is missing or failed
  return out;
}

std::vector<double> RunMpi(const std::string& program, const std::string& mca) {
  return RunPeer(fmt::format("mpirun --allow-run-as-root --oversubscribe -np 2 {} {}", mca, program));
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  try {
    if (argc == 8 && std::string(argv[1]) == "--child") {
      g_sizes = ParseSizes(argv[6]);
      g_iters = std::stoi(argv[7]);
      return Child(std::stoi(argv[2]), std::stoi(argv[3]), std::stoi(argv[4]), std::stoll(argv[5]));
    }
    constexpr const char* kUsage = "--reps N, --mpi PROGRAM, --chunk BYTES, --gloo SCRIPT, --python PROGRAM, "
                                   "--sizes B,B,..., --iters N";
    if (argc == 2 && (std::string(argv[1]) == "--help" || std::string(argv[1]) == "-h")) {
      std::printf("build/bench/bench_allreduce [%s]\nEnvironment overrides (distributed/ucx/environment.h):\n%s",
                  kUsage, UcxEnvironmentHelp().c_str());
      return 0;
    }
    int reps = 3;
    int64_t chunk = 1 << 20;
    std::string mpi = "build/bench/bench_mpi_allreduce";
    std::string gloo = "bench/gloo_allreduce.py", python = "/usr/bin/python3";
    for (int i = 1; i + 1 < argc; i += 2) {
      const std::string flag = argv[i];
      if (flag == "--reps") reps = std::stoi(argv[i + 1]);
      else if (flag == "--mpi") mpi = argv[i + 1];
      else if (flag == "--chunk") chunk = std::stoll(argv[i + 1]);
      else if (flag == "--gloo") gloo = argv[i + 1];
      else if (flag == "--python") python = argv[i + 1];
      else if (flag == "--sizes") g_sizes = ParseSizes(argv[i + 1]);
      else if (flag == "--iters") g_iters = std::stoi(argv[i + 1]);
      else throw std::runtime_error("unknown flag " + flag + " (" + kUsage + "; --help lists the environment's)");
    }
    int down[2], up[2];
    if (pipe(down) != 0 || pipe(up) != 0) throw std::runtime_error("pipe");
    const pid_t child = fork();
    if (child == 0) {
      close(down[1]);
      close(up[0]);
      execl("/proc/self/exe", "bench_allreduce", "--child", std::to_string(down[0]).c_str(),
            std::to_string(up[1]).c_str(), std::to_string(reps).c_str(), std::to_string(chunk).c_str(),
            JoinSizes().c_str(), std::to_string(g_iters).c_str(), nullptr);
      _exit(127);
    }
    close(down[0]);
    close(up[1]);
    const size_t k = std::size(g_sizes);
    std::vector<std::vector<double>> weft(k), chained(k), mpi_sm(k), mpi_ucx(k), gloo_t(k), allocs(k);
    {
      CollectiveContext collectives;  // outlives mgr
      UcxRendezvousMgr mgr(Options(0), {std::chrono::seconds(60), nullptr});
      const std::string port = Get(up[0]);
      Put(down[1], std::to_string(mgr.transport().port()));
      mgr.transport().SetPeerAddress(1, {"127.0.0.1", std::stoi(port)});
      ThrowIfError(mgr.ConnectAll());
      uint64_t step = 0;
      for (int rep = 0; rep < reps; ++rep) {
        for (size_t i = 0; i < k; ++i) {
          Put(down[1], "go");
          double a = 0;
          weft[i].push_back(RunWeft(collectives, mgr, 0, g_sizes[i], Iterations(g_sizes[i]), chunk, &step, false, &a));
          allocs[i].push_back(a);
          chained[i].push_back(RunWeft(collectives, mgr, 0, g_sizes[i], Iterations(g_sizes[i]), chunk, &step, true));
          Get(up[0]);
          std::fprintf(stderr, "round %d: weft %lld K: %.1f us (chained %.1f us), %.1f heap allocations each\n", rep + 1,
                       static_cast<long long>(g_sizes[i] >> 10), weft[i].back() * 1e6, chained[i].back() * 1e6,
                       allocs[i].back());
        }
        const std::vector<double> a = RunMpi(mpi, "");
        const std::vector<double> b =
            RunMpi(mpi, "--mca pml ucx --mca pml_ucx_tls any --mca pml_ucx_devices any");
        // gloo: at most 2000 per size (~1 ms each at 4 KiB).
        const std::vector<double> g = gloo.empty() ? std::vector<double>(k, 0) : RunPeer(python + " " + gloo, 2000);
        for (size_t i = 0; i < k; ++i) {
          mpi_sm[i].push_back(a[i]);
          mpi_ucx[i].push_back(b[i]);
          gloo_t[i].push_back(g[i]);
        }
        std::fprintf(stderr, "round %d/%d done\n", rep + 1, reps);
      }
      Put(down[1], "end");
    }
    int status = 0;
    waitpid(child, &status, 0);
    std::printf("\nall-reduce float32 sum, 2 processes, busbw GB/s (bytes * 2(n-1)/n / time), medians of %d "
                "interleaved runs\n", reps);
    std::printf("(weft: the caller's thread waits for each all-reduce as a step's caller does, driving UCX meanwhile;\n"
                " chained: each one's end starts the next on the progress thread, as in MPI's loop)\n");
    std::printf("(allocs: heap allocations per waited all-reduce in this process, core/heap_count.h)\n");
    std::printf("%10s %8s %8s %8s %8s %8s %9s %9s %9s %7s  %-30s %s\n", "size", "weft", "chained", "MPI", "MPI ucx",
                "gloo", "weft/MPI", "chain/MPI", "weft/gloo", "allocs", "us: weft / chained / MPI / gloo",
                "floor (vs the best MPI)");
    for (size_t i = 0; i < k; ++i) {
      const double w = Median(weft[i]), ch = Median(chained[i]), m = Median(mpi_sm[i]), u = Median(mpi_ucx[i]),
                   g = Median(gloo_t[i]);
      auto bw = [&](double s) { return s > 0 ? static_cast<double>(g_sizes[i]) / s / 1e9 : 0.0; };
      const double best = std::min(m > 0 ? m : 1e9, u > 0 ? u : 1e9);
      auto floor = [&](double t) -> std::string {
        if (best >= 1e9) return "(no MPI figure)";
        if (g_sizes[i] >= (1 << 20)) return best / t >= 1.0 ? "ok" : "below 1.0x";
        if (g_sizes[i] == (4 << 10)) return t / best <= 2 ? "ok" : "above 2x";
        return "-";
      };
      auto ratio = [&](double mine, double peer) { return mine > 0 && peer > 0 && peer < 1e9 ? peer / mine : 0.0; };
      const std::string times = fmt::format("{:.1f} / {:.1f} / {:.1f} / {:.1f}", w * 1e6, ch * 1e6,
                                            best < 1e9 ? best * 1e6 : 0.0, g * 1e6);
      std::printf("%8lld K %8.3f %8.3f %8.3f %8.3f %8.3f %9.2f %9.2f %9.2f %7.1f  %-30s weft %s, chained %s\n",
                  static_cast<long long>(g_sizes[i] >> 10), bw(w), bw(ch), bw(m), bw(u), bw(g), ratio(w, best),
                  ratio(ch, best), ratio(w, g), Median(allocs[i]), times.c_str(), floor(w).c_str(),
                  floor(ch).c_str());
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_allreduce: %s\n", e.what());
    return 1;
  }
  return 0;
}
