// The small-message path between two processes (issue 22): 8-byte tensors in a ping-pong through
// UcxRendezvous, over shared memory and tcp on 127.0.0.1 with ephemeral ports, the peer being this
// binary (`--test-case="small message child"`). Checks what the path promises:
// - values arrive intact while the receiver holds on to more received tensors than the small-tensor
//   pool keeps (its buffers are reused only once no tensor shares them);
// - in the steady state received tensors reuse a bounded set of buffers;
// - the heap allocations per round trip (one Send and one Recv of this process, core/heap_count.h)
//   stay within kMaxAllocsPerRoundTrip. Before issue 22 a round trip cost 19 here (bench/README.md).
// Every wait is bounded; the child is killed if the test fails.
#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <set>
#include <string>
#include <vector>

#include "core/heap_count.h"
#include "distributed/ucx_rendezvous.h"
#include "tests/distributed/child_process.h"
#include "tests/distributed/ucx_peer.h"

using weft::test::Child;
using weft::test::ChildFds;
using weft::test::ReadLine;
using weft::test::SwapPortsAndConnect;
using weft::test::WriteLine;

using namespace weft;

namespace {

constexpr int kHeld = 100;        // round trips whose tensors the parent keeps (more than the pool's 32 per size)
constexpr int kWarmUp = 200;      // then round trips not counted
constexpr int kCounted = 1000;    // then round trips counted
constexpr int kRoundTrips = kHeld + kWarmUp + kCounted;
// This process's heap allocations per round trip, measured 4.0-4.1 here after issue 22 with a rank-1
// tensor: the received tensor's shape, the sent tensor's copy of its shape, and the test's own two
// (its copy of the value, IsPing's TensorShape); a margin for other threads' rare work (ticks).
constexpr double kMaxAllocsPerRoundTrip = 4.5;

std::string PingKey(int i) {
  return "/job:worker/replica:0/task:0/device:CPU:0;1;/job:worker/replica:0/task:1/device:CPU:0;ping" +
         std::to_string(i) + ";0:0";
}
std::string PongKey(int i) {
  return "/job:worker/replica:0/task:1/device:CPU:0;1;/job:worker/replica:0/task:0/device:CPU:0;pong" +
         std::to_string(i) + ";0:0";
}

UcxTransportOptions SmallOptions(int task, const std::string& tls) {
  UcxTransportOptions o;
  o.cluster = ClusterSpec::FromFlag("worker=127.0.0.1:1,127.0.0.1:2");  // ports replaced by ephemeral ones
  o.task = {"worker", task};
  o.listen_port_override = 0;
  o.connect_timeout = std::chrono::seconds(10);
  o.context.config["TLS"] = tls;
  o.cluster_secret = "small-message-test";
  o.measure_eager_threshold = false;
  o.data_peer_error_handling = tls.find("posix") == std::string::npos;
  return o;
}

// The value round trip i carries: two float32 (8 bytes, a rank-1 tensor as a graph sends).
Tensor Ping(int i) {
  Tensor t(DType::kFloat32, TensorShape({2}));
  t.data<float>()[0] = static_cast<float>(i);
  t.data<float>()[1] = static_cast<float>(-3 * i);
  return t;
}
bool IsPing(const Tensor& t, int i) {
  return t.dtype() == DType::kFloat32 && t.shape() == TensorShape({2}) && t.data<float>()[0] == static_cast<float>(i) &&
         t.data<float>()[1] == static_cast<float>(-3 * i);
}

// One round trip's result, written by the Recv callback (a pointer: the callback stays small).
struct Pong {
  std::atomic<bool> arrived{false};
  Status status;
  Tensor value;
};

}  // namespace

TEST_CASE("small message child") {
  const char* tls = std::getenv("WEFT_SMALL_CHILD_TLS");
  if (tls == nullptr) return;
  int in_fd = -1, out_fd = -1;
  ChildFds(&in_fd, &out_fd);
  UcxRendezvousMgr mgr(SmallOptions(1, tls), {std::chrono::seconds(20), nullptr});
  SwapPortsAndConnect(mgr, in_fd, out_fd, 0);
  auto r = mgr.Find(1);
  for (int i = 0; i < kRoundTrips; ++i) {  // echo each ping
    Pong pong;
    r->RecvAsync(PingKey(i), {}, [p = &pong](const Status& s, const Tensor& v, bool) {
      p->status = s;
      p->value = v;
      p->arrived.store(true, std::memory_order_release);
    });
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (!r->DriveUntil([&] { return pong.arrived.load(std::memory_order_acquire); }) &&
           std::chrono::steady_clock::now() < deadline) {
    }
    REQUIRE(pong.arrived.load());
    REQUIRE_MESSAGE(pong.status.ok(), pong.status.ToString());
    REQUIRE(r->Send(PongKey(i), {}, pong.value, false).ok());
  }
  WriteLine(out_fd, "done");
  ReadLine(in_fd, std::chrono::seconds(20));  // stay until the parent has what it needs
}

TEST_CASE("ucx: small tensors reuse pooled buffers, arrive intact, and cost a bounded number of allocations") {
  for (const std::string tls : {"posix,sysv,cma,self,tcp", "tcp,self"}) {
    CAPTURE(tls);
    Child child("small message child", {{"WEFT_SMALL_CHILD_TLS", tls}});
    UcxRendezvousMgr mgr(SmallOptions(0, tls), {std::chrono::seconds(20), nullptr});
    SwapPortsAndConnect(mgr, child.from_child, child.to_child, 1);
    std::vector<std::string> pings, pongs;  // made before the loop, as a graph's Send/Recv nodes hold theirs
    for (int i = 0; i < kRoundTrips; ++i) {
      pings.push_back(PingKey(i));
      pongs.push_back(PongKey(i));
    }
    std::vector<Tensor> sent;
    for (int i = 0; i < kRoundTrips; ++i) sent.push_back(Ping(i));
    auto r = mgr.Find(1);
    std::vector<Tensor> held;
    std::set<const void*> steady_buffers;
    held.reserve(kHeld);
    std::vector<const void*> steady(kCounted);
    HeapCount before;
    Pong pong;
    // The loop itself allocates nothing of its own (no doctest assertion inside: the first failure
    // is recorded and reported after it).
    int failed_at = -1;
    Status failure;
    std::set<const void*> held_buffers;
    int held_wrong = -1;
    for (int i = 0; i < kRoundTrips && failed_at < 0; ++i) {
      if (i == kHeld) {
        // The held tensors kept their values although later ones came meanwhile, each in its own
        // buffer. Then they go, and the pool's buffers are free again.
        for (int h = 0; h < kHeld; ++h) {
          if (!IsPing(held[h], h) && held_wrong < 0) held_wrong = h;
          held_buffers.insert(held[h].raw_data());
        }
        held.clear();
      }
      if (i == kHeld + kWarmUp) before = HeapCount::Now();
      pong.arrived.store(false);
      r->RecvAsync(pongs[i], {}, [p = &pong](const Status& s, const Tensor& v, bool) {
        p->status = s;
        p->value = v;
        p->arrived.store(true, std::memory_order_release);
      });
      failure = r->Send(pings[i], {}, sent[i], false);
      const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
      while (failure.ok() && !r->DriveUntil([&] { return pong.arrived.load(std::memory_order_acquire); }) &&
             std::chrono::steady_clock::now() < deadline) {
      }
      if (!failure.ok() || !pong.arrived.load() || !pong.status.ok() || !IsPing(pong.value, i)) {
        failed_at = i;
        if (failure.ok()) failure = pong.status;
        break;
      }
      if (i < kHeld) {
        held.push_back(pong.value);
      } else if (i >= kHeld + kWarmUp) {
        steady[static_cast<size_t>(i - kHeld - kWarmUp)] = pong.value.raw_data();
      }
      pong.value = Tensor();  // released at once in the steady state
    }
    const double allocs = static_cast<double>(HeapCount::Now().Since(before)) / kCounted;
    REQUIRE_MESSAGE(failed_at < 0, "round trip " << failed_at << ": " << failure.ToString() << ", arrived "
                                                 << pong.arrived.load() << ", value " << pong.value.DebugString());
    steady_buffers.insert(steady.begin(), steady.end());
    CHECK_MESSAGE(held_wrong < 0, "held tensor " << held_wrong << " changed while held");
    CHECK(held_buffers.size() == static_cast<size_t>(kHeld));
    // Released at once, received tensors come back in a few buffers (the pool's), not one each.
    CHECK(steady_buffers.size() <= 32);
    MESSAGE(tls << ": " << allocs << " heap allocations per round trip, " << steady_buffers.size()
                << " buffers for " << kCounted << " received tensors");
    CHECK(allocs <= kMaxAllocsPerRoundTrip);
    CHECK(mgr.transport().Counters(1).eager_received == kRoundTrips);
    CHECK(ReadLine(child.from_child, std::chrono::seconds(20)) == "done");
    WriteLine(child.to_child, "bye");
    CHECK(child.Wait(std::chrono::seconds(20)) == 0);
  }
}
