// The small-message path between two processes (issue 22): 8-byte tensors in a ping-pong through
// UcxRendezvous, over shared memory and tcp on 127.0.0.1 with ephemeral ports, the peer being this
// binary (`--test-case="small message child"`). Checks what the path promises:
// - values arrive intact while the receiver holds on to more received tensors than the small-tensor
//   pool keeps (its buffers are reused only once no tensor shares them);
// - in the steady state received tensors reuse a bounded set of buffers;
// - the heap allocations per round trip (one Send and one Recv of this process, core/heap_count.h)
//   stay within kMaxAllocsPerRoundTrip. Before issue 22 a round trip cost 19 here (bench/README.md);
// - every small tensor lands in a receive slot posted ahead, and the slots reject what does not fit
//   one, fails its MAC or names no task, while tensors up to a slot's edge (and past it) arrive.
// Every wait is bounded; the child is killed if the test fails.
#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "core/heap_count.h"
#include "distributed/ucx/tensor_channel.h"
#include "distributed/ucx/wire.h"
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

std::string ToChild(const std::string& name) {
  return "/job:worker/replica:0/task:0/device:CPU:0;1;/job:worker/replica:0/task:1/device:CPU:0;" + name + ";0:0";
}
std::string PingKey(int i) { return ToChild("ping" + std::to_string(i)); }
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

// A tensor of `bytes` uint8 whose bytes depend on their index and on `seed`.
Tensor Bytes(int64_t bytes, int seed) {
  Tensor t(DType::kUInt8, TensorShape({bytes}));
  for (int64_t i = 0; i < bytes; ++i) t.data<uint8_t>()[i] = static_cast<uint8_t>(i * 7 + seed);
  return t;
}

// The receiving side of the slots case: a step already cleaned up, then the two edge tensors, then
// a line with what it counted: "rejected from-task-0 unauthenticated in-slot dropped|last rejection".
void SlotsChild(UcxRendezvousMgr& mgr, int in_fd, int out_fd) {
  ThrowIfError(mgr.Cleanup(3));  // a step finished here: a late tensor for it is dropped and counted
  WriteLine(out_fd, "ready");
  auto r = mgr.Find(2);
  for (const auto& [name, bytes] : {std::pair<const char*, int64_t>{"at4096", 4096}, {"at4100", 4100}}) {
    Pong got;
    r->RecvAsync(ToChild(name), {}, [p = &got](const Status& s, const Tensor& v, bool) {
      p->status = s;
      p->value = v;
      p->arrived.store(true, std::memory_order_release);
    });
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (!r->DriveUntil([&] { return got.arrived.load(std::memory_order_acquire); }) &&
           std::chrono::steady_clock::now() < deadline) {
    }
    REQUIRE(got.arrived.load());
    REQUIRE_MESSAGE(got.status.ok(), got.status.ToString());
    const Tensor want = Bytes(bytes, 3);
    REQUIRE(got.value.bytes() == want.bytes());
    CHECK_MESSAGE(std::memcmp(got.value.raw_data(), want.raw_data(), want.bytes()) == 0, name);
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (mgr.num_dropped() < 1 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  const PeerCounters c = mgr.transport().Counters(0);
  WriteLine(out_fd, fmt::format("{} {} {} {} {}|{}", mgr.transport().num_rejected(), c.rejected, c.unauthenticated,
                                c.received_in_slot, mgr.num_dropped(), mgr.transport().last_rejection().ToString()));
}

TEST_CASE("small message child") {
  const char* tls = std::getenv("WEFT_SMALL_CHILD_TLS");
  if (tls == nullptr) return;
  int in_fd = -1, out_fd = -1;
  ChildFds(&in_fd, &out_fd);
  UcxRendezvousMgr mgr(SmallOptions(1, tls), {std::chrono::seconds(20), nullptr});
  SwapPortsAndConnect(mgr, in_fd, out_fd, 0);
  if (const char* scenario = std::getenv("WEFT_SMALL_CHILD_SCENARIO"); scenario != nullptr) {
    REQUIRE(std::string(scenario) == "slots");
    SlotsChild(mgr, in_fd, out_fd);
    ReadLine(in_fd, std::chrono::seconds(20));
    return;
  }
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
    // Every pong landed in a receive slot posted ahead (none was probed).
    CHECK(mgr.transport().Counters(1).received_in_slot == kRoundTrips);
    CHECK(ReadLine(child.from_child, std::chrono::seconds(20)) == "done");
    WriteLine(child.to_child, "bye");
    CHECK(child.Wait(std::chrono::seconds(20)) == 0);
  }
}

TEST_CASE("ucx: receive slots reject what does not fit or names no task, and take tensors up to their edge") {
  for (const std::string tls : {"posix,sysv,cma,self,tcp", "tcp,self"}) {
    CAPTURE(tls);
    Child child("small message child", {{"WEFT_SMALL_CHILD_TLS", tls}, {"WEFT_SMALL_CHILD_SCENARIO", "slots"}});
    UcxRendezvousMgr mgr(SmallOptions(0, tls), {std::chrono::seconds(20), nullptr});
    SwapPortsAndConnect(mgr, child.from_child, child.to_child, 1);
    REQUIRE(ReadLine(child.from_child, std::chrono::seconds(20)) == "ready");
    UcxTransport& t = mgr.transport();
    // 1. Garbage in the small class (no MAC: Unauthenticated). 2. A sound small message naming a
    // task the cluster does not have. 3. A sealed message longer than a slot, in the small class:
    // UCX truncates it into the slot and reports so; it is dropped and counted, its bytes never
    // reach a tensor.
    CHECK(t.SendRawForTesting(1, SmallTag(0), std::string(100, 'x'), /*seal=*/false).ok());
    std::string sound = EncodeTensorHeader(0, 2, ToChild("wrong_task"), Ping(1), false, true, 0);
    sound.append(static_cast<const char*>(Ping(1).raw_data()), Ping(1).bytes());
    CHECK(t.SendRawForTesting(1, SmallTag(9), sound).ok());
    const Tensor big = Bytes(TensorChannel::kSlotBytes + 1000, 1);
    std::string oversize = EncodeTensorHeader(0, 2, ToChild("oversize"), big, false, true, 0);
    oversize.append(static_cast<const char*>(big.raw_data()), big.bytes());
    CHECK(t.SendRawForTesting(1, SmallTag(0), oversize).ok());
    // 4. A tensor for step 3, which the child already cleaned up: received, then dropped and counted.
    REQUIRE(mgr.Find(3)->Send(ToChild("stale"), {}, Ping(2), false).ok());
    // Then the edge: a 4096-byte payload fits a slot, 4100 bytes go as a probed header message.
    auto r = mgr.Find(2);
    REQUIRE(r->Send(ToChild("at4096"), {}, Bytes(4096, 3), false).ok());
    REQUIRE(r->Send(ToChild("at4100"), {}, Bytes(4100, 3), false).ok());
    const std::string line = ReadLine(child.from_child, std::chrono::seconds(30));
    int64_t rejected = -1, from_0 = -1, unauthenticated = -1, in_slot = -1, dropped = -1;
    REQUIRE_MESSAGE(std::sscanf(line.c_str(), "%ld %ld %ld %ld %ld", &rejected, &from_0, &unauthenticated, &in_slot,
                                &dropped) == 5, line);
    const std::string last = line.substr(line.find('|') + 1);
    CHECK(rejected == 3);         // all three bad messages
    CHECK(from_0 == 2);           // the garbage and the oversize one (the other named task #9)
    CHECK(unauthenticated == 1);  // the garbage
    CHECK(in_slot == 2);          // the stale step's tensor and the 4096-byte one
    CHECK(dropped == 1);          // the stale step's tensor
    CHECK_MESSAGE(last.find("DataLoss") != std::string::npos, last);
    CHECK_MESSAGE(last.find("longer than the 5120 bytes of a receive slot") != std::string::npos, last);
    CHECK_MESSAGE(last.find("worker:0") != std::string::npos, last);
    WriteLine(child.to_child, "bye");
    CHECK(child.Wait(std::chrono::seconds(20)) == 0);
  }
}
