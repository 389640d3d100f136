// Every wait of a step ends on Session::Cancel and on RunOptions::timeout (issue 17, finding 7):
// a _Recv whose _Send never comes (a loaded graph holding one, a peer that is gone) is the wait
// that nothing else ends.
#include <doctest/doctest.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <future>
#include <thread>

#include "graph/session.h"
#include "ops/framework.h"
#include "ops/math.h"

using namespace weft;
using Clock = std::chrono::steady_clock;

namespace {

// A _Recv with no _Send anywhere: on main, Run waits for it forever.
Node* AddOrphanRecv(Graph* g) {
  return g->AddNode({.name = "orphan",
                     .op = "_Recv",
                     .attrs = {{"tensor_type", DType::kFloat32},
                               {"shape", TensorShape({2})},
                               {"tensor_name", std::string("nowhere:0")},
                               {"send_device", std::string("/job:localhost/replica:0/task:0/device:CPU:0")},
                               {"send_device_incarnation", int64_t{1}},
                               {"recv_device", std::string("/job:localhost/replica:0/task:0/device:CPU:0")}}});
}

// Runs `fn` on a thread and waits at most `limit` for it: a step that hangs fails the check and
// ends the test binary (its thread cannot be joined) instead of hanging the suite.
Status RunBounded(const std::function<void()>& fn, std::chrono::seconds limit, double* seconds) {
  auto result = std::make_shared<std::promise<Status>>();
  std::future<Status> done = result->get_future();
  const auto start = Clock::now();
  std::thread([fn, result] {
    try {
      fn();
      result->set_value(Status());
    } catch (const Error& e) {
      result->set_value(e.status());
    }
  }).detach();
  if (done.wait_for(limit) != std::future_status::ready) {
    std::fprintf(stderr, "the step did not end within %lld s: a wait that cannot be cancelled\n",
                 static_cast<long long>(limit.count()));
    std::fflush(stderr);
    std::_Exit(1);
  }
  *seconds = std::chrono::duration<double>(Clock::now() - start).count();
  return done.get();
}

}  // namespace

TEST_CASE("Session::Cancel ends a step waiting on a Recv whose Send never comes") {
  Graph g;
  Node* recv = AddOrphanRecv(&g);
  Output y = ops::Neg(Scope::Root(&g).WithOpName("y"), Output(recv));
  Session sess(&g);
  std::thread canceller([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    sess.Cancel();
  });
  double secs = 0;
  Status s = RunBounded([&] { sess.Run({}, {y}); }, std::chrono::seconds(10), &secs);
  canceller.join();
  CHECK(s.code() == Code::kCancelled);
  CHECK(secs < 2.0);
  // The session stays usable.
  Graph g2;
  Output c = ops::Const(Scope::Root(&g2), Tensor::Scalar<float>(3));
  Session again(&g2);
  CHECK(again.Run({}, {c})[0].scalar<float>()() == 3);
}

TEST_CASE("RunOptions::timeout: DeadlineExceeded at the timeout, naming the step and the Recv's key") {
  Graph g;
  Node* recv = AddOrphanRecv(&g);
  Output y = ops::Neg(Scope::Root(&g).WithOpName("y"), Output(recv));
  Session sess(&g);
  double secs = 0;
  Status s = RunBounded([&] { sess.Run({}, {y}, {}, RunOptions{.timeout = std::chrono::milliseconds(500)}); },
                        std::chrono::seconds(10), &secs);
  REQUIRE(s.code() == Code::kDeadlineExceeded);
  INFO(s.ToString());
  CHECK(s.message().find("timeout of 500 ms") != std::string::npos);
  CHECK(s.message().find("step " + std::to_string(sess.last_step_id())) != std::string::npos);
  CHECK(s.message().find(";nowhere:0;") != std::string::npos);  // the key of the Recv it waited for
  CHECK(s.message().find("no Send yet") != std::string::npos);
  CHECK(secs >= 0.5);
  CHECK(secs < 0.5 * 1.1 + 0.2);  // its configured time (+10%, plus a scheduling allowance on a loaded machine)
  // A step that ends in time is not touched by its timeout.
  Output c = ops::Const(Scope::Root(&g).WithOpName("c"), Tensor::Scalar<float>(2));
  CHECK(sess.Run({}, {c}, {}, RunOptions{.timeout = std::chrono::milliseconds(500)})[0].scalar<float>()() == 2);
}

TEST_CASE("RunOptions::timeout across partitions: the other device's work is cancelled too") {
  Graph g;
  Node* recv = AddOrphanRecv(&g);
  Scope s = Scope::Root(&g);
  Output a = ops::Neg(s.WithDevice("/device:CPU:1").WithOpName("a"), Output(recv));  // CPU:1 waits on CPU:0's Recv
  SessionOptions opts;
  opts.num_cpu_devices = 2;
  Session sess(&g, opts);
  double secs = 0;
  Status st = RunBounded([&] { sess.Run({}, {a}, {}, RunOptions{.timeout = std::chrono::milliseconds(300)}); },
                         std::chrono::seconds(10), &secs);
  CHECK(st.code() == Code::kDeadlineExceeded);
  CHECK(secs < 0.3 * 1.1 + 0.2);
}

TEST_CASE("Session::DescribeRunning lists the kernels of a step that have started and not ended") {
  Graph g;
  Node* recv = AddOrphanRecv(&g);
  Output y = ops::Neg(Scope::Root(&g).WithOpName("y"), Output(recv));
  Session sess(&g);
  CHECK(sess.DescribeRunning().empty());
  std::vector<std::string> running;
  std::thread watcher([&] {
    // The Recv is running (waiting) until the step is cancelled; Neg never starts.
    const auto deadline = Clock::now() + std::chrono::seconds(5);
    while (running.empty() && Clock::now() < deadline) {
      running = sess.DescribeRunning();
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    sess.Cancel();
  });
  double secs = 0;
  Status s = RunBounded([&] { sess.Run({}, {y}); }, std::chrono::seconds(10), &secs);
  watcher.join();
  CHECK(s.code() == Code::kCancelled);
  REQUIRE(running.size() == 1);
  CHECK(running[0] == "step 1: _Recv 'orphan' on /job:localhost/replica:0/task:0/device:CPU:0");
  CHECK(sess.DescribeRunning().empty());  // the step is over
}
