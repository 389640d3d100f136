// One rank of weft's all-reduce across hosts (bench/run_cluster_allreduce.sh starts one per
// namespace of bench/netns_cluster.sh): N processes, UCX over TCP (tcp,self), each all-reduce one
// step (its own rendezvous, waited for by the caller as a step's caller waits), float32 sum.
// Rank 0 prints "allreduce ALGORITHM BYTES SECONDS" per algorithm and size, as bench_mpi_allreduce
// prints "allreduce BYTES SECONDS", and first "merge BYTES SECONDS": one float32 merge of two
// 16 MiB tensors into a third (the cost model's gamma, per byte, measured rather than fitted:
// docs/collectives.md); every rank checks the sum it got.
//
//   bench_cluster_allreduce --rank R --addrs 10.213.0.1,10.213.0.2 [--port 47013]
//       [--algorithms ring,recursive_doubling,auto] [--sizes 4096,1048576] [--iters 200,20]
//       [--chunk BYTES] [--max-rd-bytes B (recursive doubling only up to B; default 16 MiB)]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <future>
#include <string>
#include <vector>

#include "distributed/ucx/environment.h"
#include "distributed/ucx_rendezvous.h"
#include "runtime/collectives/algorithms.h"

using namespace weft;
using Clock = std::chrono::steady_clock;

namespace {

std::vector<std::string> Split(const std::string& list) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start < list.size()) {
    const size_t comma = std::min(list.find(',', start), list.size());
    out.push_back(list.substr(start, comma - start));
    start = comma + 1;
  }
  return out;
}

struct Flags {
  int rank = -1;
  std::vector<std::string> addrs;
  int port = 47013;
  std::vector<std::string> algorithms = {"ring", "recursive_doubling"};
  std::vector<int64_t> sizes = {4 << 10, 64 << 10, 1 << 20, 16 << 20, 64 << 20};
  std::vector<int> iters;
  int64_t chunk = 1 << 20;
  // Recursive doubling sends the whole tensor log2(n) times: at 64 MiB over 4 hosts of this
  // 2-core machine one took seconds, and auto never picks it there.
  int64_t max_rd_bytes = 16 << 20;
};

// Seconds per all-reduce of `bytes` with `algorithm` over `iters` steps after two warm-up ones.
double Run(CollectiveContext& collectives, UcxRendezvousMgr& mgr, const Flags& f, const std::string& algorithm,
           int64_t bytes, int iters, uint64_t* step) {
  const int n = static_cast<int>(f.addrs.size());
  const int64_t elements = bytes / 4;
  Tensor in(DType::kFloat32, TensorShape({elements}));
  for (int64_t i = 0; i < elements; ++i) in.data<float>()[i] = static_cast<float>(i % 1000 + f.rank);
  CollectiveParams p;
  p.what = "cluster all-reduce";
  p.group_size = n;
  p.rank = f.rank;
  p.group_key = 1;
  for (int r = 0; r < n; ++r) p.devices.push_back(fmt::format("/job:worker/replica:0/task:{}/device:CPU:0", r));
  p.chunk_bytes = f.chunk;
  p.timeout = std::chrono::seconds(120);
  p.algorithm = algorithm;
  const std::string chosen = ChooseAllReduce(p, bytes);
  Tensor out;
  Clock::time_point start;
  // Two warm-up all-reduces, one from 16 MiB on (they take 100s of ms on a 1 Gbit/s link).
  for (int it = bytes >= (16 << 20) ? -1 : -2; it < iters; ++it) {
    if (it == 0) start = Clock::now();
    const uint64_t s = ++*step;
    std::shared_ptr<UcxRendezvous> r = mgr.Find(s);
    auto promise = std::make_shared<std::promise<Tensor>>();
    std::future<Tensor> result = promise->get_future();
    auto ended = std::make_shared<std::atomic<bool>>(false);
    auto c = Collective::Create(p, &collectives, r.get(), [&mgr, s, promise, ended](const Status& st, const Tensor& t) {
      mgr.Cleanup(s);
      if (st.ok()) {
        promise->set_value(t);
      } else {
        promise->set_exception(std::make_exception_ptr(Error(st)));
      }
      ended->store(true, std::memory_order_release);
    });
    c->Start(DType::kFloat32);
    if (chosen == "ring") {
      RingAllReduce(c, in);
    } else if (chosen == "recursive_doubling") {
      RecursiveDoublingAllReduce(c, in);
    } else {
      throw std::runtime_error("algorithm " + chosen + " does not run one member per process");
    }
    c->EndStart();
    r->DriveUntil([&] { return ended->load(std::memory_order_acquire); });
    if (result.wait_for(std::chrono::seconds(150)) != std::future_status::ready) {
      throw std::runtime_error("an all-reduce did not end");
    }
    out = result.get();
  }
  const double seconds = std::chrono::duration<double>(Clock::now() - start).count() / iters;
  const float expect_base = static_cast<float>(n * (n - 1) / 2);
  for (int64_t i = 0; i < elements; i += 997) {
    if (out.data<float>()[i] != static_cast<float>(n * (i % 1000)) + expect_base) throw std::runtime_error("wrong sum");
  }
  return seconds;
}

// Seconds per MergeInto of `bytes` (float32 add, a = a + b as the ring merges), the median of 9.
double TimeMerge(int64_t bytes) {
  const int64_t n = bytes / 4;
  std::vector<float> a(static_cast<size_t>(n), 1.0f), b(static_cast<size_t>(n), 2.0f);
  std::vector<double> t;
  for (int i = 0; i < 9; ++i) {
    const Clock::time_point start = Clock::now();
    HostReducer()->Merge(DType::kFloat32, MergeOp::kAdd, a.data(), a.data(), b.data(), n);
    t.push_back(std::chrono::duration<double>(Clock::now() - start).count());
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  try {
    Flags f;
    for (int i = 1; i + 1 < argc; i += 2) {
      const std::string flag = argv[i], value = argv[i + 1];
      if (flag == "--rank") f.rank = std::stoi(value);
      else if (flag == "--addrs") f.addrs = Split(value);
      else if (flag == "--port") f.port = std::stoi(value);
      else if (flag == "--algorithms") f.algorithms = Split(value);
      else if (flag == "--chunk") f.chunk = std::stoll(value);
      else if (flag == "--max-rd-bytes") f.max_rd_bytes = std::stoll(value);
      else if (flag == "--sizes") {
        f.sizes.clear();
        for (const std::string& s : Split(value)) f.sizes.push_back(std::stoll(s));
      } else if (flag == "--iters") {
        for (const std::string& s : Split(value)) f.iters.push_back(std::stoi(s));
      } else {
        throw std::runtime_error("unknown flag " + flag);
      }
    }
    const int n = static_cast<int>(f.addrs.size());
    if (n < 2 || f.rank < 0 || f.rank >= n) throw std::runtime_error("--rank R --addrs A0,A1,... (two or more)");
    for (int64_t b : f.sizes) {
      if (b <= 0 || b % 4 != 0) throw std::runtime_error("--sizes: each a positive multiple of 4");
    }
    if (f.iters.empty()) f.iters.assign(f.sizes.size(), 20);
    if (f.iters.size() != f.sizes.size()) throw std::runtime_error("--iters: one count per size");
    std::string spec = "worker=";
    for (int r = 0; r < n; ++r) spec += fmt::format("{}{}:{}", r ? "," : "", f.addrs[static_cast<size_t>(r)], f.port);
    UcxTransportOptions o;
    o.cluster = ClusterSpec::FromFlag(spec);
    o.task = {"worker", f.rank};
    o.context.config["TLS"] = "tcp,self";
    o.cluster_secret = "bench-secret";  // every rank is this program
    o.connect_timeout = std::chrono::seconds(30);
    ApplyUcxEnvironment(&o);
    CollectiveContext collectives;  // outlives mgr
    UcxRendezvousMgr mgr(o, {std::chrono::seconds(120), nullptr});
    ThrowIfError(mgr.ConnectAll());
    if (f.rank == 0) std::printf("merge %d %.9f\n", 16 << 20, TimeMerge(16 << 20));
    uint64_t step = 0;
    for (const std::string& algorithm : f.algorithms) {
      for (size_t i = 0; i < f.sizes.size(); ++i) {
        if (algorithm == "recursive_doubling" && f.sizes[i] > f.max_rd_bytes) continue;
        const double s = Run(collectives, mgr, f, algorithm, f.sizes[i], f.iters[i], &step);
        if (f.rank == 0) {
          std::printf("allreduce %s %lld %.9f\n", algorithm.c_str(), static_cast<long long>(f.sizes[i]), s);
          std::fflush(stdout);
        }
      }
    }
    // Our last all-reduce may end before a peer's (its data still in flight from here): one more,
    // small, all-reduce that everybody must reach keeps the connections up until all are done.
    Run(collectives, mgr, f, "recursive_doubling", 4, 1, &step);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_cluster_allreduce: %s\n", e.what());
    return 1;
  }
  return 0;
}
