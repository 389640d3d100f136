// The persistent collective channel between two processes (issue 22; distributed/ucx/
// collective_channel.h), over shared memory and tcp on 127.0.0.1, the peer being this binary
// (`--test-case="collective channel child"`):
// - small recursive-doubling all-reduces (one step each, as in training) go over the channel, not
//   the step rendezvous, and give the closed-form sums; a size past the channel's limit still
//   goes by the rendezvous; members whose shapes differ fail with InvalidArgument, and the next
//   all-reduce works;
// - bad input: garbage (MAC), a head naming another slot, a message for a step already cleaned up
//   (stale) and one longer than a slot are rejected and counted by slot number; the oversize one
//   fails the Recv waiting on that slot with DataLoss naming it; an early message (a later step)
//   waits for its Recv; the next sound message arrives intact.
// Every wait is bounded; the child is killed if the test fails.
#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <string>
#include <thread>

#include "distributed/ucx/collective_channel.h"
#include "distributed/ucx_rendezvous.h"
#include "runtime/collectives/algorithms.h"
#include "tests/distributed/child_process.h"
#include "tests/distributed/ucx_peer.h"

using weft::test::Child;
using weft::test::ChildFds;
using weft::test::ReadLine;
using weft::test::SwapPortsAndConnect;
using weft::test::WriteLine;

using namespace weft;

namespace {

constexpr int kSteps = 100;  // small all-reduces per transport

UcxTransportOptions ChannelOptions(int task, const std::string& tls) {
  UcxTransportOptions o;
  o.cluster = ClusterSpec::FromFlag("worker=127.0.0.1:1,127.0.0.1:2");  // ports replaced by ephemeral ones
  o.task = {"worker", task};
  o.listen_port_override = 0;
  o.connect_timeout = std::chrono::seconds(10);
  o.context.config["TLS"] = tls;
  o.cluster_secret = "collective-channel-test";
  o.measure_eager_threshold = false;
  o.data_peer_error_handling = tls.find("posix") == std::string::npos;
  o.collective_channel = true;  // off by default (see transport_options.h)
  return o;
}

// Member `task`'s input of step `step`: float32 [rows, cols] with element i = (i % 7) + step for
// task 0 and 2 * (i % 5) - step for task 1, so the sum is (i % 7) + 2 * (i % 5), exact in float32.
Tensor Input(int task, uint64_t step, const TensorShape& shape) {
  Tensor t(DType::kFloat32, shape);
  for (int64_t i = 0; i < t.num_elements(); ++i) {
    const double s = static_cast<double>(step);
    t.data<float>()[i] = static_cast<float>(task == 0 ? (i % 7) + s : 2.0 * (i % 5) - s);
  }
  return t;
}
bool IsSum(const Tensor& t, const TensorShape& shape) {
  if (t.dtype() != DType::kFloat32 || t.shape() != shape) return false;
  for (int64_t i = 0; i < t.num_elements(); ++i) {
    if (t.data<float>()[i] != static_cast<float>((i % 7) + 2 * (i % 5))) return false;
  }
  return true;
}

// One recursive-doubling all-reduce as step `step` (its own rendezvous, cleaned up at the end),
// waited for as a step's caller waits. OK with the sum, or the collective's failure.
Status AllReduceStep(UcxRendezvousMgr& mgr, CollectiveContext& ctx, int task, uint64_t step, const TensorShape& shape,
                     Tensor* out) {
  CollectiveParams p;
  p.what = "channel test all-reduce";
  p.group_size = 2;
  p.rank = task;
  p.group_key = 1;
  p.instance_key = 7;
  p.devices = {"/job:worker/replica:0/task:0/device:CPU:0", "/job:worker/replica:0/task:1/device:CPU:0"};
  p.algorithm = "recursive_doubling";
  p.timeout = std::chrono::seconds(20);
  std::shared_ptr<UcxRendezvous> r = mgr.Find(step);
  std::atomic<bool> ended{false};
  Status status;
  auto c = Collective::Create(p, &ctx, r.get(), [&](const Status& s, const Tensor& t) {
    status = s;
    *out = t;
    ended.store(true, std::memory_order_release);
  });
  c->Start(DType::kFloat32);
  RecursiveDoublingAllReduce(c, Input(task, step, shape));
  c->EndStart();
  c.reset();
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (!r->DriveUntil([&] { return ended.load(std::memory_order_acquire); }) &&
         std::chrono::steady_clock::now() < deadline) {
  }
  mgr.Cleanup(step);
  if (!ended.load()) return errors::DeadlineExceeded("step {} did not end", step);
  return status;
}

// Both sides run this: the all-reduces of the first case. Returns "" or what went wrong.
std::string RunAllReduces(UcxRendezvousMgr& mgr, CollectiveContext& ctx, int task) {
  uint64_t step = 10;
  // 4 KiB (the channel's limit), a rank-2 shape, and one element.
  for (const TensorShape& shape : {TensorShape({1024}), TensorShape({3, 5}), TensorShape({1})}) {
    for (int i = 0; i < kSteps / 3 + 1; ++i) {
      Tensor out;
      Status s = AllReduceStep(mgr, ctx, task, ++step, shape, &out);
      if (!s.ok()) return fmt::format("step {} {}: {}", step, shape.ToString(), s.ToString());
      if (!IsSum(out, shape)) return fmt::format("step {} {}: wrong sum {}", step, shape.ToString(), out.DebugString());
    }
  }
  // Past the channel's limit: the rendezvous carries it.
  Tensor out;
  Status s = AllReduceStep(mgr, ctx, task, ++step, TensorShape({1025}), &out);
  if (!s.ok() || !IsSum(out, TensorShape({1025}))) return fmt::format("1025 elements: {}", s.ToString());
  // Shapes that differ with one element count: both members fail, naming the shapes.
  s = AllReduceStep(mgr, ctx, task, ++step, task == 0 ? TensorShape({2, 3}) : TensorShape({3, 2}), &out);
  if (s.ok() || s.code() != Code::kInvalidArgument || s.message().find("another shape") == std::string::npos) {
    return "differing shapes gave " + s.ToString();
  }
  // And the next all-reduce works.
  s = AllReduceStep(mgr, ctx, task, ++step, TensorShape({16}), &out);
  if (!s.ok() || !IsSum(out, TensorShape({16}))) return "after the failure: " + s.ToString();
  return "";
}

CollectiveSlot BadSlot() { return {.group_key = 3, .instance_key = 11, .message = 2}; }

// A message for BadSlot() built by hand: a collective channel head for `step` and a float32
// payload of `elements` (sealed by SendRawForTesting), `group` in the head.
std::string RawMessage(uint64_t step, uint64_t elements, uint64_t group) {
  std::string m(UcxCollectiveChannel::kHeadBytes + elements * 4, '\0');
  auto put = [&m](size_t at, uint64_t v, size_t n) { std::memcpy(m.data() + at, &v, n); };
  put(0, 0x43544657, 4);  // magic
  put(4, 1, 2);           // version
  put(6, 2, 1);           // message
  put(7, static_cast<uint64_t>(DType::kFloat32), 1);
  put(8, group, 8);
  put(16, 11, 8);  // instance
  put(24, step, 8);
  put(32, elements, 8);
  put(40, 0, 8);  // shape hash: not checked before a Recv takes it
  put(48, 0, 4);  // src task
  put(52, elements * 4, 4);
  return m;
}

struct Got {
  std::atomic<bool> arrived{false};
  Status status;
  Tensor value;
};

bool WaitFor(UcxRendezvousMgr& mgr, const std::function<bool()>& ready) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  auto r = mgr.Find(1);
  while (!r->DriveUntil(ready) && std::chrono::steady_clock::now() < deadline) {
  }
  return ready();
}

// The child's side of the bad-input case: Recvs for steps 5 and 6 of BadSlot(), step 3 forgotten;
// reports "rejected stale unauthenticated oversize held by-slot-0|step 5's status|step 6 ok|step 8 ok".
void BadInputChild(UcxRendezvousMgr& mgr, int in_fd, int out_fd) {
  UcxCollectiveChannel* ch = mgr.transport().collective_channel();
  REQUIRE(ch != nullptr);
  mgr.Cleanup(3);
  Got five, six, eight;
  auto recv = [&](uint64_t step, Got* g) {
    ch->Recv(0, step, BadSlot(), DType::kFloat32, TensorShape({4}), [g](const Status& s, const Tensor& t) {
      g->status = s;
      g->value = t;
      g->arrived.store(true, std::memory_order_release);
    });
  };
  recv(5, &five);
  recv(6, &six);
  WriteLine(out_fd, "ready");
  REQUIRE(WaitFor(mgr, [&] { return five.arrived.load() && six.arrived.load(); }));
  // Step 8's message comes before its Recv: it is held until then.
  REQUIRE(WaitFor(mgr, [&] { return ch->counters().held >= 1; }));
  recv(8, &eight);
  REQUIRE(WaitFor(mgr, [&] { return eight.arrived.load(); }));
  auto is = [](const Got& g, float first) {
    return g.status.ok() && g.value.num_elements() == 4 && g.value.data<float>()[0] == first &&
           g.value.data<float>()[3] == first + 3;
  };
  const UcxCollectiveChannel::Counters c = ch->counters();
  const auto by_slot = ch->rejected_by_slot();
  WriteLine(out_fd, fmt::format("{} {} {} {} {} {}|{}|{}|{}", c.rejected, c.stale, c.unauthenticated, c.oversize,
                                c.held, by_slot.count(0) ? by_slot.at(0) : 0, five.status.ToString(), is(six, 60),
                                is(eight, 80)));
}

}  // namespace

TEST_CASE("collective channel child") {
  const char* tls = std::getenv("WEFT_CHANNEL_CHILD_TLS");
  if (tls == nullptr) return;
  int in_fd = -1, out_fd = -1;
  ChildFds(&in_fd, &out_fd);
  CollectiveContext ctx;  // outlives mgr
  UcxRendezvousMgr mgr(ChannelOptions(1, tls), {std::chrono::seconds(20), nullptr});
  SwapPortsAndConnect(mgr, in_fd, out_fd, 0);
  if (std::getenv("WEFT_CHANNEL_CHILD_BAD") != nullptr) {
    BadInputChild(mgr, in_fd, out_fd);
  } else {
    const std::string failure = RunAllReduces(mgr, ctx, 1);
    WriteLine(out_fd, failure.empty() ? "ok" : failure);
  }
  ReadLine(in_fd, std::chrono::seconds(20));  // stay until the parent has what it needs
}

TEST_CASE("ucx: small all-reduces go over the collective channel with the closed-form sums") {
  for (const std::string tls : {"posix,sysv,cma,self,tcp", "tcp,self"}) {
    CAPTURE(tls);
    Child child("collective channel child", {{"WEFT_CHANNEL_CHILD_TLS", tls}});
    CollectiveContext ctx;
    UcxRendezvousMgr mgr(ChannelOptions(0, tls), {std::chrono::seconds(20), nullptr});
    SwapPortsAndConnect(mgr, child.from_child, child.to_child, 1);
    const std::string failure = RunAllReduces(mgr, ctx, 0);
    CHECK_MESSAGE(failure.empty(), failure);
    CHECK(ReadLine(child.from_child, std::chrono::seconds(60)) == "ok");
    const UcxCollectiveChannel::Counters c = mgr.transport().collective_channel()->counters();
    MESSAGE(tls << ": " << c.ToString() << "; rendezvous: " << mgr.transport().Counters(1).ToString());
    // 3 x 34 small all-reduces, the failed one and the last: one message each way per all-reduce.
    CHECK(c.sent == 3 * (kSteps / 3 + 1) + 2);
    CHECK(c.received == 3 * (kSteps / 3 + 1) + 2);
    CHECK(c.rejected == 0);
    // The step rendezvous carried only the 1025-element all-reduce's message.
    CHECK(mgr.transport().Counters(1).messages_received == 1);
    WriteLine(child.to_child, "bye");
    CHECK(child.Wait(std::chrono::seconds(20)) == 0);
  }
}

TEST_CASE("ucx: the collective channel rejects and counts bad, stale and oversize messages by slot") {
  for (const std::string tls : {"posix,sysv,cma,self,tcp", "tcp,self"}) {
    CAPTURE(tls);
    Child child("collective channel child", {{"WEFT_CHANNEL_CHILD_TLS", tls}, {"WEFT_CHANNEL_CHILD_BAD", "1"}});
    UcxRendezvousMgr mgr(ChannelOptions(0, tls), {std::chrono::seconds(20), nullptr});
    SwapPortsAndConnect(mgr, child.from_child, child.to_child, 1);
    REQUIRE(ReadLine(child.from_child, std::chrono::seconds(20)) == "ready");
    UcxTransport& t = mgr.transport();
    const uint64_t tag = CollectiveTag(0, BadSlot());
    // 1. Garbage (no MAC). 2. A sealed message whose head names group 4 under group 3's tag.
    // 3. Step 3, which the child cleaned up (stale). 4. Longer than a slot: fails step 5's Recv.
    CHECK(t.SendRawForTesting(1, tag, std::string(100, 'x'), /*seal=*/false).ok());
    CHECK(t.SendRawForTesting(1, tag, RawMessage(5, 4, 4)).ok());
    CHECK(t.SendRawForTesting(1, tag, RawMessage(3, 4, 3)).ok());
    CHECK(t.SendRawForTesting(1, tag, RawMessage(5, 2000, 3)).ok());
    // Then sound messages through the channel: step 6, and step 8 before the child's Recv for it.
    std::atomic<int> sent{0};
    Status send_status;
    for (uint64_t step : {6, 8}) {
      Tensor v(DType::kFloat32, TensorShape({4}));
      for (int i = 0; i < 4; ++i) v.data<float>()[i] = static_cast<float>(10 * step + i);
      t.collective_channel()->Send(1, step, BadSlot(), v, [&](const Status& s) {
        if (!s.ok()) send_status = s;
        sent++;
      });
    }
    const std::string line = ReadLine(child.from_child, std::chrono::seconds(30));
    int64_t rejected = -1, stale = -1, unauthenticated = -1, oversize = -1, held = -1, slot0 = -1;
    REQUIRE_MESSAGE(std::sscanf(line.c_str(), "%ld %ld %ld %ld %ld %ld", &rejected, &stale, &unauthenticated,
                                &oversize, &held, &slot0) == 6, line);
    const std::string rest = line.substr(line.find('|') + 1);
    CHECK(rejected == 4);
    CHECK(stale == 1);
    CHECK(unauthenticated == 1);
    CHECK(oversize == 1);
    CHECK(held == 1);
    CHECK(slot0 == 4);  // all four against the slot's number
    CHECK_MESSAGE(rest.find("DataLoss") == 0, rest);
    CHECK_MESSAGE(rest.find("group 3 instance 11 message 2 from task worker:0") != std::string::npos, rest);
    CHECK_MESSAGE(rest.find("longer than the slot's 4160 bytes") != std::string::npos, rest);
    CHECK_MESSAGE(rest.find("|true|true") != std::string::npos, rest);  // steps 6 and 8 intact
    CHECK(sent.load() == 2);
    CHECK_MESSAGE(send_status.ok(), send_status.ToString());
    WriteLine(child.to_child, "bye");
    CHECK(child.Wait(std::chrono::seconds(20)) == 0);
  }
}
