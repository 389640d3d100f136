#include <doctest/doctest.h>

#include <chrono>
#include <thread>

#include "graph/session.h"
#include "ops/framework.h"
#include "tests/graph/test_ops.h"

using namespace weft;
using namespace std::chrono;

namespace {
Output Op(const Scope& s, const char* op, Output x, AttrMap attrs = {}) { return s.Op(op, {x}, std::move(attrs)); }
}  // namespace

TEST_CASE("independent branches run in parallel") {
  test::RegisterTestOps();
  Graph g;
  Scope s = Scope::Root(&g);
  Output x = ops::Const(s, 1.0f);
  // Each TestWaitPair blocks until both have started: a sequential executor would time out.
  Output a = Op(s, "TestWaitPair", x, {{"group", std::string("ab")}});
  Output b = Op(s, "TestWaitPair", x, {{"group", std::string("ab")}});
  Session sess(&g, {.inter_op_threads = 2, .intra_op_threads = 1});
  auto out = sess.Run({}, {a, b});
  CHECK(out[0].scalar<float>()() == 1.0f);
  CHECK(out[1].scalar<float>()() == 1.0f);
}

TEST_CASE("a diamond runs each node once and joins") {
  test::RegisterTestOps();
  test::ClearRecord();
  Graph g;
  Scope s = Scope::Root(&g);
  Output top = Op(s, "TestRecord", ops::Const(s, 3.0), {{"label", std::string("top")}});
  Output left = Op(s, "TestRecord", top, {{"label", std::string("left")}});
  Output right = Op(s, "TestRecord", top, {{"label", std::string("right")}});
  Node* bottom = ops::Group(s, {left, right});
  Output after = Op(s.WithControlDependencies(std::vector<Node*>{bottom}), "TestRecord", top, {{"label", std::string("bottom")}});
  Session sess(&g);
  auto out = sess.Run({}, {after});
  CHECK(out[0].scalar<double>()() == 3.0);
  auto log = test::RecordLog();
  REQUIRE(log.size() == 4);
  CHECK(log.front() == "top");
  CHECK(log.back() == "bottom");
}

TEST_CASE("control dependencies order otherwise independent nodes") {
  test::RegisterTestOps();
  for (int trial = 0; trial < 20; ++trial) {
    test::ClearRecord();
    Graph g;
    Scope s = Scope::Root(&g);
    Output c = ops::Const(s, 1.0f);
    Output first = Op(s, "TestRecord", c, {{"label", std::string("first")}});
    Output second = Op(s.WithControlDependencies({first}), "TestRecord", c, {{"label", std::string("second")}});
    Session sess(&g, {.inter_op_threads = 2});
    sess.Run({}, {second, first});
    CHECK(test::RecordLog() == std::vector<std::string>{"first", "second"});
  }
}

TEST_CASE("async kernels complete from other threads") {
  test::RegisterTestOps();
  Graph g;
  Scope s = Scope::Root(&g);
  Output x = ops::Placeholder(s, DType::kFloat32, {});
  Output a = Op(s, "TestAsyncDelay", x, {{"delay_ms", 30}});
  Output b = Op(s, "TestAsyncDelay", a, {{"delay_ms", 10}});
  Output c = Op(s, "TestAsyncDelay", x, {{"delay_ms", 20}});
  Session sess(&g);
  for (int i = 0; i < 5; ++i) {
    auto out = sess.Run({{x, Tensor::Scalar<float>(i)}}, {b, c});
    CHECK(out[0].scalar<float>()() == i);
    CHECK(out[1].scalar<float>()() == i);
  }
}

TEST_CASE("an error in one branch aborts the step, cancelling a pending async kernel") {
  test::RegisterTestOps();
  Graph g;
  Scope s = Scope::Root(&g);
  Output x = ops::Const(s, 1.0f);
  Output hang = Op(s.WithOpName("waits_forever"), "TestAsyncDelay", x, {{"delay_ms", -1}});
  Output bad = Op(s.WithOpName("bad_branch"), "TestFail", x);
  Session sess(&g);
  const auto t0 = steady_clock::now();
  try {
    sess.Run({}, {hang, bad});
    FAIL("expected the step to fail");
  } catch (const Error& e) {
    CHECK(e.code() == Code::kInvalidArgument);
    CHECK(std::string(e.what()).find("TestFail 'bad_branch': boom") != std::string::npos);
  }
  CHECK(steady_clock::now() - t0 < seconds(5));
  // The session stays usable.
  CHECK(sess.Run({}, {x})[0].scalar<float>()() == 1.0f);
}

TEST_CASE("Session::Cancel stops a running step from another thread") {
  test::RegisterTestOps();
  Graph g;
  Scope s = Scope::Root(&g);
  Output hang = Op(s, "TestAsyncDelay", ops::Const(s, 1.0f), {{"delay_ms", -1}});
  Session sess(&g);
  std::thread canceller([&] {
    std::this_thread::sleep_for(milliseconds(100));
    sess.Cancel();
  });
  CHECK_THROWS_WITH_AS(sess.Run({}, {hang}), doctest::Contains("Cancelled"), Error);
  canceller.join();
}

TEST_CASE("many concurrent steps on one session") {
  test::RegisterTestOps();
  Graph g;
  Scope s = Scope::Root(&g);
  Output x = ops::Placeholder(s, DType::kInt32, {});
  Output y = Op(s, "TestAsyncDelay", ops::Identity(s, x), {{"delay_ms", 1}});
  Session sess(&g);
  std::vector<std::thread> threads;
  std::atomic<int> ok{0};
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 25; ++i) {
        const int v = t * 100 + i;
        ok += sess.Run({{x, Tensor::Scalar<int32_t>(v)}}, {y})[0].scalar<int32_t>()() == v;
      }
    });
  }
  for (auto& th : threads) th.join();
  CHECK(ok.load() == 100);
}
