// Tensors between two processes over UCX, with TCP and with shared memory, on 127.0.0.1 with
// ephemeral ports. The test binary runs itself as the peer (fork + exec of /proc/self/exe with
// `--test-case="ucx child"` and the scenario in the environment); every wait is bounded and the
// peer is killed if the test fails. Scenarios:
//   echo       every dtype at 0 B, 1 element, just below / at / above the eager threshold and 64 MiB
//              goes to the peer, which checks it and sends it back; both ends compare bytes
//   malformed  garbage, a bad magic, a bad checksum, a truncated message, one from a task that
//              does not exist and one longer than any valid message (its key's Recv fails with
//              DataLoss naming it) are rejected by the peer, which still receives the valid (and the
//              dead) tensor that follows
//   kill       a Recv from a peer that is killed fails with Unavailable naming it, within the timeout;
//              a Recv that nobody answers fails with DeadlineExceeded
#include <doctest/doctest.h>

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <functional>
#include <future>
#include <thread>

#include "runtime/collectives/algorithms.h"
#include "core/threadpool.h"
#include "distributed/ucx/environment.h"
#include "distributed/ucx_rendezvous.h"
#include "tests/distributed/child_process.h"
#include "tests/distributed/ucx_peer.h"
#include "core/gpu.h"
#if WEFT_CUDA
#include "core/cuda/gpu_context.h"
#endif

using weft::test::Child;
using weft::test::ChildFds;
using weft::test::ReadLine;
using weft::test::SwapPortsAndConnect;
using weft::test::WriteLine;

using namespace weft;
using Clock = std::chrono::steady_clock;

namespace {

constexpr size_t kEagerThreshold = 8192;
constexpr int64_t kInPlaceElems = 100000;  // sent by rendezvous: well above kEagerThreshold
const char* const kCluster = "worker=127.0.0.1:1,127.0.0.1:2";  // ports are replaced by ephemeral ones

std::string Key(int src, int dst, const std::string& name) {
  RendezvousKey k;
  k.src_device = fmt::format("/job:worker/replica:0/task:{}/device:CPU:0", src);
  k.src_incarnation = 0x1234;
  k.dst_device = fmt::format("/job:worker/replica:0/task:{}/device:CPU:0", dst);
  k.tensor_name = name;
  return k.ToString();
}

// A deterministic tensor: the same on both processes.
struct Case {
  DType dtype;
  TensorShape shape;
};

Tensor Make(const Case& c, int seed) {
  Tensor t(c.dtype, c.shape);
  auto* p = static_cast<uint8_t*>(t.raw_data());
  for (size_t i = 0; i < t.bytes(); ++i) {
    const uint8_t v = static_cast<uint8_t>(i * 131 + seed * 17 + (i >> 12));
    p[i] = c.dtype == DType::kBool ? (v & 1) : v;
  }
  return t;
}

// The same bytes, labelled as device memory: with the host DeviceCopier the transport stages them
// through bounce buffers exactly as it would a GPU tensor (no CUDA here).
Tensor AsDevice(const Tensor& t) {
  return Tensor::FromBuffer(t.dtype(), t.shape(),
                            std::make_shared<Buffer>(t.raw_data(), t.bytes(), MemoryKind::kDevice, [t] {}));
}

bool SameTensor(const Tensor& a, const Tensor& b) {
  return a.dtype() == b.dtype() && a.shape() == b.shape() &&
         (a.bytes() == 0 || std::memcmp(a.raw_data(), b.raw_data(), a.bytes()) == 0);
}

std::vector<Case> Cases() {
  std::vector<Case> cases;
  const DType all[] = {DType::kFloat32, DType::kFloat64, DType::kInt32,   DType::kInt64,
                       DType::kUInt8,   DType::kBool,    DType::kFloat16, DType::kBFloat16};
  for (DType dt : all) {
    const int64_t size = static_cast<int64_t>(DTypeSize(dt));
    const int64_t at = static_cast<int64_t>(kEagerThreshold) / size;  // exactly the threshold: eager
    cases.push_back({dt, TensorShape({0})});
    cases.push_back({dt, TensorShape({})});  // one element (1 B for uint8 and bool)
    cases.push_back({dt, TensorShape({at - 1})});
    cases.push_back({dt, TensorShape({at})});
    cases.push_back({dt, TensorShape({at + 1})});  // just above: rendezvous
    cases.push_back({dt, TensorShape({2, 3, at / 3})});
  }
  cases.push_back({DType::kFloat32, TensorShape({16 << 20})});  // 64 MiB
  cases.push_back({DType::kUInt8, TensorShape({3, 0, 7})});
  return cases;
}

struct Received {
  Status status;
  Tensor value;
  bool is_dead = false;
  double seconds = 0;
};

// Posts a Recv (into `into` when given: a transport may receive straight into it) and returns
// its result-to-be.
std::future<Received> RecvStart(Rendezvous& r, const std::string& key, const Tensor& into = Tensor()) {
  auto promise = std::make_shared<std::promise<Received>>();
  std::future<Received> future = promise->get_future();
  const auto start = Clock::now();
  RendezvousArgs args;
  args.into = into;
  r.RecvAsync(key, args, [promise, start](const Status& s, const Tensor& v, bool dead) {
    promise->set_value({s, v, dead, std::chrono::duration<double>(Clock::now() - start).count()});
  });
  return future;
}

Received WaitFor(std::future<Received>& future, const std::string& key, std::chrono::milliseconds timeout) {
  if (future.wait_for(timeout) != std::future_status::ready) {
    return {errors::DeadlineExceeded("test: no answer for '{}' within {} ms", key, timeout.count()), {}, false, 0};
  }
  return future.get();
}

Received RecvWait(Rendezvous& r, const std::string& key, std::chrono::milliseconds timeout) {
  std::future<Received> future = RecvStart(r, key);
  return WaitFor(future, key, timeout);
}

UcxTransportOptions Options(int task, const std::string& tls) {
  UcxTransportOptions o;
  o.cluster = ClusterSpec::FromFlag(kCluster);
  o.task = {"worker", task};
  o.eager_threshold = kEagerThreshold;
  o.listen_port_override = 0;
  o.connect_timeout = std::chrono::seconds(10);
  o.context.config["TLS"] = tls;
  o.cluster_secret = "ucx-test-secret";  // the handshake proves it (handshake_test.cc covers its failures)
  o.measure_eager_threshold = false;  // the counts below assume kEagerThreshold (the "threshold" test measures)
  // Over TCP every endpoint reports peer failure; with shared memory only the connection manager's does.
  o.data_peer_error_handling = tls.find("posix") == std::string::npos;
  // Over TCP the connection manager shares the data worker (the single-worker set-up stays
  // covered); over shared memory it has its own (the default).
  o.worker.cm_worker = tls.find("posix") != std::string::npos;
  return o;
}

const char* const kTransports[] = {"tcp,self", "posix,sysv,cma,self,tcp"};

// One task's member of all-reduces (ring with a small chunk, and recursive doubling) with the other
// task through UcxRendezvous, then its two members of hierarchical all-reduces; checks the sums of
// all members' inputs, bit for bit.
// `context` must outlive `mgr` (whose steps' rendezvous hold the members until cleaned up).
void CollectiveMember(CollectiveContext& context, UcxRendezvousMgr& mgr, int task) {
  uint64_t step = 1000;
  for (const char* algorithm : {"ring", "recursive_doubling"}) {
    for (int64_t elems : {0, 5, 1001, 300000}) {
      CAPTURE(std::string(algorithm));
      CAPTURE(elems);
      CollectiveParams p;
      p.what = "test all-reduce";
      p.group_size = 2;
      p.rank = task;
      p.group_key = 1;
      p.instance_key = elems;
      p.devices = {"/job:worker/replica:0/task:0/device:CPU:0", "/job:worker/replica:0/task:1/device:CPU:0"};
      p.algorithm = algorithm;
      p.chunk_bytes = 64 << 10;
      p.timeout = std::chrono::seconds(20);
      auto input = [elems](int t) {  // finite values (Make's random bytes may be NaNs)
        Tensor x(DType::kFloat32, TensorShape({elems}));
        for (int64_t i = 0; i < elems; ++i) x.data<float>()[i] = static_cast<float>((i * 7 + t * 13) % 101) * 0.37f - 3;
        return x;
      };
      const Tensor mine = input(task), other = input(1 - task);
      auto promise = std::make_shared<std::promise<Received>>();
      std::future<Received> future = promise->get_future();
      auto r = mgr.Find(++step);
      auto c = Collective::Create(p, &context, r.get(), [promise](const Status& s, const Tensor& out) {
        promise->set_value({s, out, false, 0});
      });
      c->Start(DType::kFloat32);
      if (std::string(algorithm) == "ring") {
        RingAllReduce(c, mine);
      } else {
        RecursiveDoublingAllReduce(c, mine);
      }
      c->EndStart();
      REQUIRE(future.wait_for(std::chrono::seconds(30)) == std::future_status::ready);
      Received got = future.get();
      REQUIRE_MESSAGE(got.status.ok(), got.status.ToString());
      Tensor want(DType::kFloat32, TensorShape({elems}));
      for (int64_t i = 0; i < elems; ++i) {
        // rank 0's value first, as every algorithm merges
        want.data<float>()[i] = task == 0 ? mine.data<float>()[i] + other.data<float>()[i]
                                          : other.data<float>()[i] + mine.data<float>()[i];
      }
      CHECK(SameTensor(got.value, want));
      mgr.Cleanup(step);
    }
  }
  // Hierarchical: 2 members per task (CPU:0 and CPU:1), ranks 2 * task + d; only the leaders
  // (CPU:0) talk across the tasks.
  for (int64_t elems : {3, 100000}) {
    CAPTURE(elems);
    auto r = mgr.Find(++step);
    std::vector<std::future<Received>> results;
    std::vector<std::shared_ptr<Collective>> members;
    auto value = [](int rank, int64_t i) { return static_cast<float>((i * 3 + rank * 5) % 41); };  // exact sums
    for (int d = 0; d < 2; ++d) {
      CollectiveParams p;
      p.what = "test hierarchical all-reduce";
      p.group_size = 4;
      p.rank = 2 * task + d;
      p.group_key = 2;
      p.instance_key = elems;
      for (int m = 0; m < 4; ++m) p.devices.push_back(fmt::format("/job:worker/replica:0/task:{}/device:CPU:{}", m / 2, m % 2));
      p.timeout = std::chrono::seconds(20);
      REQUIRE(ChooseAllReduce(p, elems * 4) == "hierarchical");
      auto promise = std::make_shared<std::promise<Received>>();
      results.push_back(promise->get_future());
      members.push_back(Collective::Create(p, &context, r.get(), [promise](const Status& s, const Tensor& out) {
        promise->set_value({s, out, false, 0});
      }));
    }
    for (int d = 0; d < 2; ++d) {
      Tensor in(DType::kFloat32, TensorShape({elems}));
      for (int64_t i = 0; i < elems; ++i) in.data<float>()[i] = value(2 * task + d, i);
      members[static_cast<size_t>(d)]->Start(DType::kFloat32);
      HierarchicalAllReduce(members[static_cast<size_t>(d)], in);
      members[static_cast<size_t>(d)]->EndStart();
    }
    Tensor want(DType::kFloat32, TensorShape({elems}));
    for (int64_t i = 0; i < elems; ++i) want.data<float>()[i] = value(0, i) + value(1, i) + value(2, i) + value(3, i);
    for (auto& f : results) {
      REQUIRE(f.wait_for(std::chrono::seconds(30)) == std::future_status::ready);
      Received got = f.get();
      REQUIRE_MESSAGE(got.status.ok(), got.status.ToString());
      CHECK(SameTensor(got.value, want));
    }
    mgr.Cleanup(step);
  }
}

}  // namespace

// The peer's side of every scenario; runs only in a spawned child.
TEST_CASE("ucx child") {
  const char* scenario = std::getenv("WEFT_UCX_CHILD");
  if (scenario == nullptr) return;
  int in_fd = -1, out_fd = -1;
  ChildFds(&in_fd, &out_fd);
  UcxTransportOptions options = Options(1, std::getenv("WEFT_UCX_CHILD_TLS"));
  options.measure_eager_threshold = std::string(scenario) == "threshold";
  CollectiveContext collectives;  // outlives mgr
  UcxRendezvousMgr mgr(options, {std::chrono::seconds(20), nullptr});
  SwapPortsAndConnect(mgr, in_fd, out_fd, 0);
  const std::string which = scenario;
  if (which == "echo") {
    const std::vector<Case> cases = Cases();
    for (size_t i = 0; i < cases.size(); ++i) {
      auto r = mgr.Find(i + 1);
      Received got = RecvWait(*r, Key(0, 1, fmt::format("x{}", i)), std::chrono::seconds(20));
      REQUIRE_MESSAGE(got.status.ok(), got.status.ToString());
      CHECK_MESSAGE(SameTensor(got.value, Make(cases[i], static_cast<int>(i))), "case " << i);
      CHECK(r->Send(Key(1, 0, fmt::format("y{}", i)), {}, got.value, false).ok());
      mgr.Cleanup(i + 1);
    }
  } else if (which == "malformed") {
    Received truncated = RecvWait(*mgr.Find(100), Key(0, 1, "truncated"), std::chrono::seconds(20));
    CHECK(truncated.status.code() == Code::kDataLoss);
    CHECK_MESSAGE(truncated.status.message().find("worker:0") != std::string::npos, truncated.status.message());
    // More than a header message may hold here (the eager threshold is 8 KiB): only its prefix was
    // kept, its MAC checked on the way; its key's step fails with DataLoss naming the key and the size.
    Received oversize = RecvWait(*mgr.Find(102), Key(0, 1, "oversize"), std::chrono::seconds(20));
    CHECK(oversize.status.code() == Code::kDataLoss);
    CHECK_MESSAGE(oversize.status.message().find("oversize") != std::string::npos, oversize.status.message());
    CHECK_MESSAGE(oversize.status.message().find("is longer than") != std::string::npos, oversize.status.message());
    Received good = RecvWait(*mgr.Find(101), Key(0, 1, "good"), std::chrono::seconds(20));
    REQUIRE_MESSAGE(good.status.ok(), good.status.ToString());
    CHECK(SameTensor(good.value, Make({DType::kFloat32, TensorShape({100})}, 5)));
    // A tag naming no connected peer is found by the masked probe of every 64th round, so it may
    // come after the good tensor (which went through a receive slot): waited for, bounded.
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (mgr.transport().num_rejected() < 6 && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    const Status last = mgr.transport().last_rejection();
    CHECK_MESSAGE(last.message().find("tagged with task #9") != std::string::npos, last.ToString());
    CHECK(mgr.transport().Counters(0).rejected == 5);
    CHECK(mgr.transport().num_rejected() == 6);  // and one tagged with a task that does not exist
    Received dead = RecvWait(*mgr.Find(101), Key(0, 1, "dead"), std::chrono::seconds(20));
    CHECK(dead.status.ok());
    CHECK(dead.is_dead);
    CHECK(mgr.Find(101)->Send(Key(1, 0, "ack"), {}, Tensor::Scalar<int64_t>(mgr.transport().num_rejected()), false)
              .ok());
  } else if (which == "collective") {
    // A Recv posted with its output before the data's header arrives gets the bytes straight in
    // it (the parent sends only after "posted"); the collectives' outputs rely on this.
    const Tensor into(DType::kFloat32, TensorShape({kInPlaceElems}));
    auto r = mgr.Find(999);
    std::future<Received> pending = RecvStart(*r, Key(0, 1, "in_place"), into);
    WriteLine(out_fd, "posted");
    Received got = WaitFor(pending, "in_place", std::chrono::seconds(20));
    REQUIRE_MESSAGE(got.status.ok(), got.status.ToString());
    CHECK(SameTensor(got.value, Make({DType::kFloat32, TensorShape({kInPlaceElems})}, 9)));
    CHECK(got.value.raw_data() == into.raw_data());
    CHECK(mgr.transport().Counters(0).received_in_place == 1);
    mgr.Cleanup(999);
    CollectiveMember(collectives, mgr, 1);
  } else if (which == "threshold") {
    // Echo `n` uint8 tensors z0.. (sizes chosen by the parent around its measured threshold).
    const int n = std::stoi(ReadLine(in_fd, std::chrono::seconds(20)));
    auto r = mgr.Find(7);
    for (int i = 0; i < n; ++i) {
      Received got = RecvWait(*r, Key(0, 1, fmt::format("z{}", i)), std::chrono::seconds(20));
      REQUIRE_MESSAGE(got.status.ok(), got.status.ToString());
      CHECK(r->Send(Key(1, 0, fmt::format("w{}", i)), {}, got.value, false).ok());
    }
  } else if (which == "kill") {
    ReadLine(in_fd, std::chrono::seconds(50));  // until the parent kills us
  }
  WriteLine(out_fd, "done");
  ReadLine(in_fd, std::chrono::seconds(20));  // stay until the parent has what it needs
}

namespace {

// Every case to the echo child and back. Every other tensor (and the 64 MiB one) goes as device
// memory (`to_device`), staged by `copier` in 4 KiB chunks: chunk boundaries inside the threshold
// cases, a last chunk shorter, 16384 chunks for 64 MiB.
void EchoEveryCase(const std::function<std::shared_ptr<DeviceCopier>()>& make_copier,
                   const std::function<Tensor(const Tensor&)>& to_device) {
  const std::vector<Case> cases = Cases();
  for (const std::string tls : kTransports) {
    CAPTURE(tls);
    const auto start = Clock::now();
    Child child("ucx child", {{"WEFT_UCX_CHILD", "echo"}, {"WEFT_UCX_CHILD_TLS", tls}});
    UcxTransportOptions options = Options(0, tls);
    options.device_copier = make_copier();
    options.staging_chunk_bytes = 4096;
    options.staging_depth = 3;
    UcxRendezvousMgr mgr(options, {std::chrono::seconds(20), nullptr});
    if (mgr.transport().device_path() == DevicePath::kUcx) {  // UCX 1.13 here has no CUDA
      MESSAGE("SKIPPED: this UCX takes device memory itself, nothing is staged");
      return;
    }
    REQUIRE(mgr.transport().device_path() == DevicePath::kStaged);
    SwapPortsAndConnect(mgr, child.from_child, child.to_child, 1);
    int64_t expect_rendezvous = 0, expect_staged = 0, expect_rendezvous_back = 0;
    for (size_t i = 0; i < cases.size(); ++i) {
      CAPTURE(i);
      const Tensor sent = Make(cases[i], static_cast<int>(i));
      const bool device = sent.bytes() > 0 && (i % 2 == 1 || sent.bytes() >= (64 << 20));
      expect_staged += device;
      expect_rendezvous += sent.bytes() > kEagerThreshold || device;
      expect_rendezvous_back += sent.bytes() > kEagerThreshold;  // echoed as a host tensor
      auto r = mgr.Find(i + 1);
      REQUIRE(r->Send(Key(0, 1, fmt::format("x{}", i)), {}, device ? to_device(sent) : sent, false).ok());
      Received back = RecvWait(*r, Key(1, 0, fmt::format("y{}", i)), std::chrono::seconds(20));
      REQUIRE_MESSAGE(back.status.ok(), back.status.ToString());
      CHECK_MESSAGE(SameTensor(back.value, sent), sent.DebugString() << " came back as " << back.value.DebugString());
      CHECK(reinterpret_cast<uintptr_t>(back.value.raw_data()) % kTensorAlignment == 0);
      mgr.Cleanup(i + 1);
    }
    CHECK(ReadLine(child.from_child, std::chrono::seconds(20)) == "done");
    WriteLine(child.to_child, "bye");
    CHECK(child.Wait(std::chrono::seconds(20)) == 0);
    const PeerCounters c = mgr.transport().Counters(1);
    MESSAGE(tls << ": " << cases.size() << " tensors there and back in "
                << std::chrono::duration<double>(Clock::now() - start).count() << " s; " << c.ToString());
    CHECK(c.messages_sent == static_cast<int64_t>(cases.size()));
    CHECK(c.messages_received == static_cast<int64_t>(cases.size()));
    CHECK(c.rendezvous_sent == expect_rendezvous);
    CHECK(c.staged_sent == expect_staged);
    CHECK(c.rendezvous_received == expect_rendezvous_back);
    CHECK(c.eager_sent == static_cast<int64_t>(cases.size()) - expect_rendezvous);
    CHECK(c.bytes_sent == c.bytes_received);
    CHECK(c.bytes_sent > (64 << 20));
    CHECK(c.wait_us > 0);
  }
}
}  // namespace

TEST_CASE("ucx: every dtype and size arrives intact, eager and by rendezvous, over TCP and shared memory") {
  ThreadPool copier_pool(1, "copier");
  EchoEveryCase([&] { return NewHostCopier(&copier_pool); }, AsDevice);
}

// The same with real GPU tensors through the copier a process picks for itself (the CUDA one).
TEST_CASE("ucx: GPU tensors are staged through the CUDA copier and arrive intact") {
#if WEFT_CUDA
  if (ProbeGpus().count == 0) {
    MESSAGE("SKIPPED (needs a GPU): " << NoGpuMessage());
    return;
  }
  std::shared_ptr<GpuContext> gpu = OpenGpus().at(0);
  EchoEveryCase([] { return SelectDeviceCopier(OpenGpus()); },
                [gpu](const Tensor& t) { return gpu->CopyToDevice(t); });
#else
  MESSAGE("SKIPPED (needs a GPU): built without CUDA");
#endif
}

TEST_CASE("ucx: the eager threshold is measured on the live endpoint; sizes around it arrive intact") {
  const std::vector<size_t> candidates = {1024, 2048, 4096, 8192};
  for (const std::string tls : kTransports) {
    CAPTURE(tls);
    Child child("ucx child", {{"WEFT_UCX_CHILD", "threshold"}, {"WEFT_UCX_CHILD_TLS", tls}});
    UcxTransportOptions options = Options(0, tls);
    options.measure_eager_threshold = true;
    options.threshold_candidates = candidates;
    options.measure_budget = std::chrono::milliseconds(1000);  // generous: a loaded machine times slowly
    UcxRendezvousMgr mgr(options, {std::chrono::seconds(20), nullptr});
    SwapPortsAndConnect(mgr, child.from_child, child.to_child, 1);
    REQUIRE(mgr.transport().WaitForThreshold(1, std::chrono::seconds(10)));
    const size_t threshold = mgr.transport().EagerThreshold(1);
    const std::string report = mgr.transport().ThresholdReport(1);
    MESSAGE(tls << ": " << report);
    CHECK(std::find(candidates.begin(), candidates.end(), threshold) != candidates.end());
    CHECK_MESSAGE(report.find("measured in") != std::string::npos, report);
    CHECK_MESSAGE(report.find("1024 B") != std::string::npos, report);  // the smallest size was timed both ways
    CHECK(mgr.transport().Counters(1).messages_sent == 0);               // probes are not user traffic
    // Just below, at and just above the threshold, and a float tensor straddling it.
    const std::vector<Tensor> sent = {Make({DType::kUInt8, TensorShape({static_cast<int64_t>(threshold) - 1})}, 1),
                                      Make({DType::kUInt8, TensorShape({static_cast<int64_t>(threshold)})}, 2),
                                      Make({DType::kUInt8, TensorShape({static_cast<int64_t>(threshold) + 1})}, 3),
                                      Make({DType::kFloat32, TensorShape({static_cast<int64_t>(threshold) / 4 + 1})}, 4)};
    WriteLine(child.to_child, fmt::format("{}", sent.size()));
    auto r = mgr.Find(7);
    for (size_t i = 0; i < sent.size(); ++i) {
      REQUIRE(r->Send(Key(0, 1, fmt::format("z{}", i)), {}, sent[i], false).ok());
      Received back = RecvWait(*r, Key(1, 0, fmt::format("w{}", i)), std::chrono::seconds(20));
      REQUIRE_MESSAGE(back.status.ok(), back.status.ToString());
      CHECK_MESSAGE(SameTensor(back.value, sent[i]), sent[i].DebugString());
    }
    const PeerCounters c = mgr.transport().Counters(1);
    CHECK(c.eager_sent == 2);
    CHECK(c.rendezvous_sent == 2);
    CHECK(ReadLine(child.from_child, std::chrono::seconds(20)) == "done");
    WriteLine(child.to_child, "bye");
    CHECK(child.Wait(std::chrono::seconds(20)) == 0);
  }
}

TEST_CASE("ucx: ring, recursive-doubling and hierarchical all-reduce between two processes through UcxRendezvous") {
  for (const std::string tls : kTransports) {
    CAPTURE(tls);
    Child child("ucx child", {{"WEFT_UCX_CHILD", "collective"}, {"WEFT_UCX_CHILD_TLS", tls}});
    CollectiveContext collectives;  // outlives mgr
    UcxRendezvousMgr mgr(Options(0, tls), {std::chrono::seconds(20), nullptr});
    SwapPortsAndConnect(mgr, child.from_child, child.to_child, 1);
    REQUIRE(ReadLine(child.from_child, std::chrono::seconds(20)) == "posted");
    REQUIRE(mgr.Find(999)->Send(Key(0, 1, "in_place"), {}, Make({DType::kFloat32, TensorShape({kInPlaceElems})}, 9), false).ok());
    CollectiveMember(collectives, mgr, 0);
    CHECK(ReadLine(child.from_child, std::chrono::seconds(30)) == "done");
    WriteLine(child.to_child, "bye");
    CHECK(child.Wait(std::chrono::seconds(20)) == 0);
  }
}

TEST_CASE("ucx: malformed and truncated messages are rejected and the receiver keeps working") {
  for (const std::string tls : kTransports) {
    CAPTURE(tls);
    Child child("ucx child", {{"WEFT_UCX_CHILD", "malformed"}, {"WEFT_UCX_CHILD_TLS", tls}});
    UcxRendezvousMgr mgr(Options(0, tls), {std::chrono::seconds(20), nullptr});
    SwapPortsAndConnect(mgr, child.from_child, child.to_child, 1);
    UcxTransport& t = mgr.transport();
    const Tensor good = Make({DType::kFloat32, TensorShape({100})}, 5);
    // 1. Not a message at all. 2. A bad magic. 3. A damaged key (checksum). 4. Truncated payload.
    CHECK(t.SendRawForTesting(1, HeaderTag(0), "garbage").ok());
    std::string message = EncodeTensorHeader(0, 100, Key(0, 1, "truncated"), good, false, true, 0);
    message.append(static_cast<const char*>(good.raw_data()), good.bytes());
    std::string bad = message;
    bad[1] ^= 0x40;
    CHECK(t.SendRawForTesting(1, HeaderTag(0), bad).ok());
    bad = message;
    bad[kWireHeaderBytes + 8 + 3] ^= 1;
    CHECK(t.SendRawForTesting(1, HeaderTag(0), bad).ok());
    CHECK(t.SendRawForTesting(1, HeaderTag(0), message.substr(0, message.size() - 10)).ok());
    // 5. An eager message of 40000 bytes, more than the peer's receive slot for headers holds (UCX
    // sends it by its rendezvous: the raw send returns once the peer has taken it all).
    const Tensor big = Make({DType::kUInt8, TensorShape({40000})}, 6);
    std::string oversize = EncodeTensorHeader(0, 102, Key(0, 1, "oversize"), big, false, true, 0);
    oversize.append(static_cast<const char*>(big.raw_data()), big.bytes());
    CHECK(t.SendRawForTesting(1, HeaderTag(0), oversize).ok());
    CHECK(t.SendRawForTesting(1, HeaderTag(9), message).ok());  // 6. from a task that does not exist (the last)
    // Then a good tensor, through the rendezvous as usual.
    auto r = mgr.Find(101);
    REQUIRE(r->Send(Key(0, 1, "good"), {}, good, false).ok());
    REQUIRE(r->Send(Key(0, 1, "dead"), {}, Tensor(), true).ok());
    CHECK(r->Send(Key(0, 1, "uninitialized"), {}, Tensor(), false).code() == Code::kInvalidArgument);
    Received ack = RecvWait(*r, Key(1, 0, "ack"), std::chrono::seconds(20));
    REQUIRE_MESSAGE(ack.status.ok(), ack.status.ToString());
    CHECK(ack.value.scalar<int64_t>()() == 6);
    CHECK(ReadLine(child.from_child, std::chrono::seconds(20)) == "done");
    WriteLine(child.to_child, "bye");
    CHECK(child.Wait(std::chrono::seconds(20)) == 0);
  }
}

TEST_CASE("ucx: a Recv from a killed peer fails with Unavailable naming it; an unanswered Recv times out") {
  for (const std::string tls : kTransports) {
    CAPTURE(tls);
    Child child("ucx child", {{"WEFT_UCX_CHILD", "kill"}, {"WEFT_UCX_CHILD_TLS", tls}});
    UcxRendezvousMgr mgr(Options(0, tls), {std::chrono::milliseconds(800), nullptr});
    SwapPortsAndConnect(mgr, child.from_child, child.to_child, 1);
    // Nobody sends this one: the step fails with DeadlineExceeded naming key and peer.
    Received late = RecvWait(*mgr.Find(1), Key(1, 0, "late"), std::chrono::seconds(10));
    CHECK(late.status.code() == Code::kDeadlineExceeded);
    const std::string want = fmt::format("'{}' from task worker:1", Key(1, 0, "late"));
    CHECK_MESSAGE(late.status.message().find(want) != std::string::npos, late.status.message());
    CHECK(late.seconds >= 0.75);
    CHECK(late.seconds < 3);
    // The peer dies while a Recv waits on it.
    mgr.SetRecvTimeout(std::chrono::seconds(15));
    auto r = mgr.Find(2);
    auto promise = std::make_shared<std::promise<Received>>();
    auto future = promise->get_future();
    const auto start = Clock::now();
    r->RecvAsync(Key(1, 0, "never"), {}, [promise, start](const Status& s, const Tensor& v, bool dead) {
      promise->set_value({s, v, dead, std::chrono::duration<double>(Clock::now() - start).count()});
    });
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    kill(child.pid, SIGKILL);
    REQUIRE(future.wait_for(std::chrono::seconds(20)) == std::future_status::ready);
    Received got = future.get();
    MESSAGE(tls << ": the Recv failed " << got.seconds << " s after it started: " << got.status.ToString());
    CHECK(got.status.code() == Code::kUnavailable);
    CHECK_MESSAGE(got.status.message().find("task worker:1") != std::string::npos, got.status.message());
    CHECK(got.seconds < 10);
    // Later Recvs from it and Sends to it fail at once.
    Received after = RecvWait(*mgr.Find(3), Key(1, 0, "after"), std::chrono::seconds(5));
    CHECK(after.status.code() == Code::kUnavailable);
    CHECK(mgr.Find(3)->Send(Key(0, 1, "to_dead"), {}, Tensor::Scalar<float>(1), false).code() == Code::kUnavailable);
    CHECK(child.Wait(std::chrono::seconds(5)) == 128 + SIGKILL);
  }
}

TEST_CASE("ucx: keys within the task stay local; keys naming no task are errors") {
  UcxRendezvousMgr mgr(Options(0, "tcp,self"), {std::chrono::seconds(5), nullptr});
  auto r = mgr.Find(1);
  const std::string local = "/job:worker/replica:0/task:0/device:CPU:0;1;/job:worker/replica:0/task:0/device:CPU:1;x:0;0:0";
  const Tensor t = Tensor::Scalar<float>(2.5f);
  REQUIRE(r->Send(local, {}, t, false).ok());
  Received got = RecvWait(*r, local, std::chrono::seconds(1));
  REQUIRE(got.status.ok());
  CHECK(got.value.SharesBufferWith(t));  // handed over in-process, no copy
  CHECK(mgr.transport().Counters(1).messages_sent == 0);
  const std::string nowhere = "/job:worker/replica:0/task:0/device:CPU:0;1;/job:ps/replica:0/task:0/device:CPU:0;x;0:0";
  Status s = r->Send(nowhere, {}, t, false);
  CHECK(s.code() == Code::kInvalidArgument);
  CHECK_MESSAGE(s.message().find("/job:ps/replica:0/task:0/device:CPU:0' is on no task") != std::string::npos,
                s.message());
  CHECK(r->Send("not a key", {}, t, false).code() == Code::kInvalidArgument);
  // Two transports cannot bind one address: the second names the address.
  UcxTransportOptions o = Options(1, "tcp,self");
  o.listen_port_override = mgr.transport().port();
  try {
    UcxTransport second(o, nullptr, nullptr);
    FAIL("the second bind succeeded");
  } catch (const Error& e) {
    CHECK_MESSAGE(e.status().message().find(fmt::format("127.0.0.1:{}", mgr.transport().port())) != std::string::npos,
                  e.status().message());
  }
  // Options the tensor channel refuses throw an Error, also now that the connector listens before
  // the channel checks them (its listener is closed on the progress thread on the way out).
  UcxTransportOptions bad_staging = Options(1, "tcp,self");
  bad_staging.listen_port_override = 0;
  bad_staging.device_copier = NewHostCopier();
  bad_staging.staging_chunk_bytes = 100;  // below kWireMinChunkBytes
  CHECK_THROWS_AS(UcxTransport(bad_staging, nullptr, nullptr), Error);
}

TEST_CASE("ucx: connecting to a task nobody serves fails within the connect timeout, naming it") {
  UcxTransportOptions o = Options(0, "tcp,self");
  o.connect_timeout = std::chrono::milliseconds(600);
  UcxRendezvousMgr mgr(o, {std::chrono::seconds(5), nullptr});
  // A port nobody listens on: bound by us, then closed.
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  REQUIRE(bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)) == 0);
  socklen_t len = sizeof(a);
  REQUIRE(getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) == 0);
  close(fd);
  mgr.transport().SetPeerAddress(1, HostPort{"127.0.0.1", ntohs(a.sin_port)});
  const auto start = Clock::now();
  const Status s = mgr.ConnectAll();
  const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  CHECK((s.code() == Code::kUnavailable || s.code() == Code::kDeadlineExceeded));
  CHECK_MESSAGE(s.message().find("worker:1") != std::string::npos, s.message());
  CHECK(seconds < 3);
  // Sends and Recvs involving it fail with that status instead of waiting.
  auto r = mgr.Find(1);
  if (s.code() == Code::kUnavailable) {
    CHECK(r->Send(Key(0, 1, "x"), {}, Tensor::Scalar<float>(1), false).code() == Code::kUnavailable);
    CHECK(RecvWait(*r, Key(1, 0, "y"), std::chrono::seconds(5)).status.code() == Code::kUnavailable);
  }
}

TEST_CASE("ucx: a waiting thread drives the worker (DriveUntil) while the progress thread parks") {
  UcxContext context({.config = {{"TLS", "tcp,self"}}});
  UcxWorkerOptions options;
  options.lend_park = std::chrono::microseconds(200);
  UcxWorker worker(&context, options);
  const auto me = std::this_thread::get_id();
  std::thread::id progress_thread;
  REQUIRE(worker.RunSync([&] {
    progress_thread = std::this_thread::get_id();
    return Status();
  }, std::chrono::seconds(5)).ok());
  CHECK(progress_thread != me);
  CHECK_FALSE(worker.OnProgressThread());

  // Work posted before the wait runs on the waiting thread, which is the progress thread meanwhile.
  std::atomic<bool> ran{false};
  std::thread::id ran_on;
  bool on_progress_thread = false;
  worker.Post([&] {
    ran_on = std::this_thread::get_id();
    on_progress_thread = worker.OnProgressThread();
    ran = true;
  });
  const int64_t lent_before = worker.num_lent();
  const bool lent = worker.DriveUntil([&] { return ran.load(); });
  CHECK(ran);
  CHECK_FALSE(worker.OnProgressThread());  // handed back
  if (lent && worker.num_lent() > lent_before) {  // (the progress thread may have run it before we lent)
    CHECK(ran_on == me);
    CHECK(on_progress_thread);
  } else {
    CHECK(ran_on == progress_thread);
  }

  // After the lender left, work posted by a thread that does not wait runs on the progress thread.
  for (int i = 0; i < 20; ++i) {
    std::atomic<bool> done{false};
    std::thread::id where;
    std::thread poster([&] {
      worker.Post([&] {
        where = std::this_thread::get_id();
        done = true;
      });
    });
    poster.join();
    const auto deadline = Clock::now() + std::chrono::seconds(5);
    while (!done && Clock::now() < deadline) std::this_thread::sleep_for(std::chrono::microseconds(50));
    REQUIRE(done);
    CHECK(where == progress_thread);
    // And a lend that never gets its result hands back once idle past the spin, returning false.
    const auto start = Clock::now();
    CHECK_FALSE(worker.DriveUntil([] { return false; }));
    CHECK(Clock::now() - start < std::chrono::seconds(5));
  }
  CHECK(worker.num_lent() >= lent_before + 20);  // each of those lent the thread (nobody else drives)

  // On the progress thread there is nothing to lend.
  bool nested = true;
  REQUIRE(worker.RunSync([&] {
    nested = worker.DriveUntil([] { return false; });
    return Status();
  }, std::chrono::seconds(5)).ok());
  CHECK_FALSE(nested);

  // Two threads waiting at once: one drives, the other is told to block as usual; both see their results.
  std::atomic<int> finished{0};
  std::vector<std::thread> waiters;
  for (int t = 0; t < 2; ++t) {
    waiters.emplace_back([&] {
      auto mine = std::make_shared<std::atomic<bool>>(false);
      worker.Post([mine] { *mine = true; });
      if (!worker.DriveUntil([&] { return mine->load(); })) {
        const auto deadline = Clock::now() + std::chrono::seconds(5);
        while (!*mine && Clock::now() < deadline) std::this_thread::sleep_for(std::chrono::microseconds(50));
      }
      if (*mine) ++finished;
    });
  }
  for (auto& w : waiters) w.join();
  CHECK(finished == 2);
  worker.Stop();
  CHECK_FALSE(worker.DriveUntil([] { return false; }));  // stopped: nothing to drive
}

TEST_CASE("ucx: UCX statuses become weft errors with UCX's words") {
  CHECK(UcxStatus(UCS_OK, "x").ok());
  const Status reset = UcxStatus(UCS_ERR_CONNECTION_RESET, "talking to worker:1");
  CHECK(reset.code() == Code::kUnavailable);
  CHECK(reset.message().find("talking to worker:1: Connection reset by remote peer") != std::string::npos);
  CHECK(UcxStatus(UCS_ERR_TIMED_OUT, "x").code() == Code::kDeadlineExceeded);
  CHECK(UcxStatus(UCS_ERR_MESSAGE_TRUNCATED, "x").code() == Code::kDataLoss);
  CHECK(UcxStatus(UCS_ERR_NO_MEMORY, "x").code() == Code::kResourceExhausted);
  CHECK(UcxStatus(UCS_ERR_UNREACHABLE, "x").code() == Code::kUnavailable);
  CHECK(UcxStatus(UCS_ERR_IO_ERROR, "x").code() == Code::kUnavailable);
  CHECK(UcxStatus(UCS_ERR_NO_ELEM, "x").code() == Code::kInternal);
  // A setting UCX cannot parse is an error naming it.
  try {
    UcxContext bad({.config = {{"MAX_EAGER_LANES", "many"}}});
    FAIL("a malformed UCX setting was accepted");
  } catch (const Error& e) {
    CHECK_MESSAGE(e.status().message().find("MAX_EAGER_LANES=many") != std::string::npos, e.status().message());
  }
}

TEST_CASE("ucx: the WEFT_UCX_* overrides are read in one place and set the options they name") {
  std::map<std::string, std::string> env;
  auto getenv = [&env](const std::string& name) -> std::optional<std::string> {
    auto it = env.find(name);
    return it == env.end() ? std::nullopt : std::optional<std::string>(it->second);
  };
  UcxTransportOptions defaults;
  UcxTransportOptions o;
  ApplyUcxEnvironment(&o, getenv);  // nothing set: nothing changes
  CHECK(o.worker.lend == defaults.worker.lend);
  CHECK(o.eager_threshold == defaults.eager_threshold);
  CHECK(o.log_thresholds == false);
  env = {{"WEFT_UCX_LEND", "0"}, {"WEFT_UCX_LOG", "1"}, {"WEFT_UCX_SPIN_US", "7"}, {"WEFT_UCX_BUSY_SPIN_US", "9"},
         {"WEFT_UCX_YIELD", "1"}, {"WEFT_UCX_LEND_PARK_US", "11"}, {"WEFT_UCX_CM_WORKER", "0"},
         {"WEFT_UCX_EAGER", "8192"}, {"WEFT_UCX_MEASURE", "0"}, {"WEFT_UCX_WINDOW", "1048576"},
         {"WEFT_UCX_SLOTS", "0"}, {"WEFT_UCX_COLLECTIVE_CHANNEL", "1"}};
  ApplyUcxEnvironment(&o, getenv);
  CHECK(!o.worker.lend);
  CHECK(o.log_thresholds);
  CHECK(o.worker.spin == std::chrono::microseconds(7));
  CHECK(o.worker.busy_spin == std::chrono::microseconds(9));
  CHECK(o.worker.yield_while_busy);
  CHECK(o.worker.lend_park == std::chrono::microseconds(11));
  CHECK(!o.worker.cm_worker);
  CHECK(o.eager_threshold == 8192);
  CHECK(!o.measure_eager_threshold);
  CHECK(o.rendezvous_window_bytes == 1048576);
  CHECK(!o.receive_slots);
  CHECK(o.collective_channel);  // off by default: the variable turns it on
  // Every variable is listed for --help texts.
  const std::string help = UcxEnvironmentHelp();
  for (const auto& [name, value] : env) CHECK_MESSAGE(help.find(name) != std::string::npos, name);
  // A value that does not parse is an error naming the variable, not a silent 0.
  for (const auto& [name, value] : std::map<std::string, std::string>{
           {"WEFT_UCX_LEND", "yes"}, {"WEFT_UCX_LOG", "2"}, {"WEFT_UCX_WINDOW", "-1"}, {"WEFT_UCX_EAGER", "8k"}}) {
    env = {{name, value}};
    UcxTransportOptions bad;
    try {
      ApplyUcxEnvironment(&bad, getenv);
      FAIL("accepted ", name, "=", value);
    } catch (const Error& e) {
      CHECK(e.code() == Code::kInvalidArgument);
      CHECK_MESSAGE(e.status().message().find(name + "='" + value + "'") != std::string::npos, e.status().message());
    }
  }
}
