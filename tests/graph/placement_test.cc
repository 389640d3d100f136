// Placement and partitioning: pinned graphs compute what unpinned ones do, the partition has
// exactly the expected Send/Recv pairs, errors abort every device, placement conflicts are
// reported clearly.
#include <doctest/doctest.h>

#include <chrono>
#include <set>

#include "graph/gradients.h"
#include "graph/partition.h"
#include "graph/placer.h"
#include "graph/session.h"
#include "ops/framework.h"
#include "ops/math.h"
#include "ops/nn.h"
#include "ops/state.h"
#include "tests/graph/test_ops.h"

using namespace weft;

namespace {

const char* kCpu0 = "/job:localhost/replica:0/task:0/device:CPU:0";
const char* kCpu1 = "/job:localhost/replica:0/task:0/device:CPU:1";

SessionOptions Devices(int n) {
  SessionOptions o;
  o.num_cpu_devices = n;
  o.inter_op_threads = 2;
  o.intra_op_threads = 2;
  return o;
}

int CountOps(const std::vector<std::pair<std::string, const Graph*>>& parts, const std::string& op) {
  int n = 0;
  for (const auto& [d, g] : parts) {
    for (Node* node : g->nodes()) n += node->op() == op;
  }
  return n;
}

// y = relu(x @ w) + sum(x) on one or two devices, with a variable update and its gradient.
struct Model {
  Graph g;
  Output x, w, loss, dw;
  Node *init, *train;
  explicit Model(bool pinned) {
    Scope s = Scope::Root(&g);
    Scope d0 = pinned ? s.WithDevice("/device:CPU:0") : s;
    Scope d1 = pinned ? s.WithDevice("/device:CPU:1") : s;
    x = ops::Placeholder(s.WithOpName("x"), DType::kFloat32, {-1, 3});
    w = ops::Variable(d1.WithOpName("w"), {3, 2}, DType::kFloat32);
    init = ops::Assign(d1, w, ops::Const<float>(s, {1, -2, 3, 4, -5, 6}, {3, 2})).node;
    Output h = ops::Relu(d0, ops::MatMul(d1, x, w));
    loss = ops::Add(d0, ops::Sum(d0, h), ops::Sum(d1, x));
    dw = Gradients(s, {loss}, {w})[0];
    train = ops::AssignSub(d1, w, ops::Mul(d1, dw, ops::Const(s, 0.1f))).node;
  }
};

}  // namespace

TEST_CASE("placement: a graph pinned to CPU:0 and CPU:1 computes what the unpinned graph does") {
  const Tensor xv = Tensor::FromVector<float>({1, 2, 3, -1, 0.5f, 2}, {2, 3});
  Model plain(false), pinned(true);
  Session a(&plain.g), b(&pinned.g, Devices(2));
  a.Run({}, {}, {plain.init});
  b.Run({}, {}, {pinned.init});
  for (int step = 0; step < 3; ++step) {
    auto ra = a.Run({{plain.x, xv}}, {plain.loss, plain.dw}, {plain.train});
    auto rb = b.Run({{pinned.x, xv}}, {pinned.loss, pinned.dw}, {pinned.train});
    CHECK(ra[0].scalar<float>()() == rb[0].scalar<float>()());
    for (int i = 0; i < 6; ++i) CHECK(ra[1].flat<float>()(i) == rb[1].flat<float>()(i));
  }
  auto parts = b.Partitions({pinned.x}, {pinned.loss, pinned.dw}, {pinned.train});
  CHECK(parts.size() == 2);
  CHECK(CountOps(parts, "_Send") == CountOps(parts, "_Recv"));
  CHECK(CountOps(parts, "_Send") > 0);
  // The variable and everything that updates it sit on CPU:1.
  for (const auto& [device, g] : parts) {
    for (Node* n : g->nodes()) {
      if (n->op() == "Variable" || n->op() == "Assign" || n->op() == "AssignSub") CHECK(device == kCpu1);
    }
  }
}

TEST_CASE("partition: one pair per tensor and destination; control edges get a pair") {
  Graph g;
  Scope s = Scope::Root(&g);
  Scope d0 = s.WithDevice("/device:CPU:0"), d1 = s.WithDevice("/device:CPU:1");
  Output a = ops::Square(d0.WithOpName("a"), ops::Const(d0, 3.0f));
  Output b = ops::Add(d1.WithOpName("b"), a, a);   // two uses on CPU:1 ...
  Output c = ops::Neg(d1.WithOpName("c"), a);      // ... and a third: still one pair for `a`
  Output e = ops::Exp(d0.WithOpName("e"), ops::Const(d0, 0.0f));
  Output f = ops::Add(d1.WithOpName("f").WithControlDependencies({e}), b, c);  // control edge 0 -> 1
  DeviceSet devices = DeviceSet::LocalCpus(2, 2);
  Place(&g, devices);
  auto parts = Partition(g, devices);
  std::vector<SendRecvPair> pairs = SendRecvPairs(parts);
  REQUIRE(pairs.size() == 2);
  std::set<std::string> names;
  for (const auto& p : pairs) {
    names.insert(p.tensor_name);
    CHECK(p.send_device == kCpu0);
    CHECK(p.recv_device == kCpu1);
    CHECK(p.key.find(";" + p.tensor_name + ";0:0") != std::string::npos);
    CHECK(p.host_memory == (p.tensor_name == "e/_control"));  // a float activation goes by device memory
  }
  CHECK(names == std::set<std::string>{"a:0", "e/_control"});
  Session sess(&g, Devices(2));
  CHECK(sess.Run({}, {f})[0].scalar<float>()() == 9.0f);  // (9 + 9) - 9
}

TEST_CASE("partition: an error on one device aborts the other device's pending Recv with that error") {
  test::RegisterTestOps();
  Graph g;
  Scope s = Scope::Root(&g);
  Output x = ops::Placeholder(s.WithOpName("x"), DType::kFloat32, {});
  Output bad = s.WithDevice("/device:CPU:0").WithOpName("bad").Op("TestFail", {x});
  Output y = ops::Relu(s.WithDevice("/device:CPU:1").WithOpName("y"), bad);
  Session sess(&g, Devices(2));
  const auto start = std::chrono::steady_clock::now();
  try {
    sess.Run({{x, Tensor::Scalar<float>(1)}}, {y});
    FAIL("expected the step to fail");
  } catch (const Error& e) {
    CHECK(std::string(e.what()).find("'bad'") != std::string::npos);  // the cause, not "aborted"
  }
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(30));
  // The session stays usable.
  Output ok = ops::Neg(s.WithDevice("/device:CPU:1"), x);
  CHECK(sess.Run({{x, Tensor::Scalar<float>(2)}}, {ok})[0].scalar<float>()() == -2.0f);
}

TEST_CASE("placement: conflicts and impossible requests are clear errors; soft placement falls back") {
  DeviceSet devices = DeviceSet::LocalCpus(2, 2);
  {
    Graph g;
    Scope s = Scope::Root(&g);
    Output v = ops::Variable(s.WithDevice("/device:CPU:0").WithOpName("v"), {}, DType::kFloat32);
    ops::Assign(s.WithDevice("/device:CPU:1").WithOpName("set_v"), v, ops::Const(s, 1.0f));
    CHECK_THROWS_WITH_AS(Place(&g, devices), doctest::Contains("cannot colocate Assign 'set_v'"), Error);
  }
  {
    Graph g;
    Scope s = Scope::Root(&g);
    Output c = ops::Const(s.WithDevice("/device:CPU:5").WithOpName("far"), 1.0f);
    CHECK_THROWS_WITH_AS(Place(&g, devices, {.soft_placement = false}), doctest::Contains("matches no device"), Error);
    CHECK_THROWS_WITH_AS(Place(&g, devices, {.soft_placement = false}), doctest::Contains("CPU:0, CPU:1"), Error);
    Place(&g, devices);
    CHECK(c.node->assigned_device() == kCpu0);
  }
  {
    Graph g;
    Scope s = Scope::Root(&g);
    Output a = ops::Const(s.WithDevice("/device:CPU:1").WithOpName("a"), 1.0f);
    Output b = ops::Neg(s.WithOpName("b").WithColocation(a), a);
    Output c = ops::Neg(s.WithOpName("c"), a);
    Place(&g, devices);
    CHECK(b.node->assigned_device() == kCpu1);
    CHECK(c.node->assigned_device() == kCpu0);  // unconstrained nodes go to the default device
  }
}

TEST_CASE("step trace: every kernel of the step, per device, Send/Recv with their keys, as Chrome JSON") {
  Model pinned(true);
  Session sess(&pinned.g, Devices(2));
  sess.Run({}, {}, {pinned.init});
  StepTrace trace;
  sess.Run({{pinned.x, Tensor::FromVector<float>({1, 2, 3, 4, 5, 6}, {2, 3})}}, {pinned.loss}, {}, &trace);
  std::set<std::string> devices, ops;
  bool recv_key = false;
  for (const TraceEvent& e : trace.events()) {
    devices.insert(e.device);
    ops.insert(e.op);
    CHECK(e.end_us >= e.start_us);
    if (e.op == "_Recv") recv_key = recv_key || e.detail.find(";MatMul:0") != std::string::npos;
  }
  CHECK(devices == std::set<std::string>{kCpu0, kCpu1});
  CHECK(ops.count("MatMul") == 1);
  CHECK(ops.count("_Send") == 1);
  CHECK(recv_key);
  const std::string json = trace.ToChromeJson();
  CHECK(json.find("\"traceEvents\"") != std::string::npos);
  CHECK(json.find("\"ph\": \"X\"") != std::string::npos);
  CHECK(json.find("{\"name\": \"CPU:1\"}") != std::string::npos);
  // Untraced steps record nothing.
  sess.Run({{pinned.x, Tensor::FromVector<float>({1, 2, 3, 4, 5, 6}, {2, 3})}}, {pinned.loss});
  CHECK(trace.events().size() > 0);
}
