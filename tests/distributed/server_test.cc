// Servers and the distributed Session across processes, on 127.0.0.1 with ephemeral ports, over
// TCP and over shared memory. The test process is the client's task (worker:0, with its own
// server); worker:1 and ps:0 are children running `--test-case="server child"` (a Server until
// told to stop or killed). Scenarios:
//   compute    a graph pinned to worker:1 and ps:0 (variable on ps, update on ps, matmul on the
//              worker) computes exactly what the single-process Session computes, step by step
//   errors     a kernel error on ps:0 (an uninitialized variable) fails the step naming ps:0 and the
//              next step works; malformed, truncated and unknown control requests get error replies
//              and the server keeps serving; an unknown graph handle is NotFound
//   ps         ParameterServerStrategy (1 ps, 2 workers, sync) trains mnist_cnn to the weights
//              single-process training of the same global batch reaches (1e-5)
//   ps async   worker:1 (a child) and this process both train as async clients of ps:0: both
//              losses fall, ps:0's step counts both; a checkpoint round-trips through ps:0
//   kill       worker:1 is stopped during a step (ps:0 is seen running it) and killed: the client
//              fails with Unavailable naming worker:1, and ps:0 ends the step and keeps serving
#include <doctest/doctest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <future>

#include "distributed/distributed_session.h"
#include "distributed/ps_strategy.h"
#include "graph/gradients.h"
#include "graph/session.h"
#include "ops/framework.h"
#include "ops/math.h"
#include "ops/nn.h"
#include "ops/state.h"
#include "tests/distributed/child_process.h"
#include "train/checkpoint.h"
#include "data/datasets.h"
#include "train/layer.h"
#include "train/model.h"
#include "zoo/models.h"

using namespace weft;
using weft::test::Child;
using weft::test::ReadLine;
using weft::test::WriteLine;
using namespace std::chrono_literals;

namespace {

const char* const kCluster = "worker=127.0.0.1:1,127.0.0.1:2;ps=127.0.0.1:3";  // ports replaced by ephemeral ones
const char* const kTransports[] = {"tcp,self", "sm,self,tcp"};
constexpr int kWorker1 = 1, kPs0 = 2;  // global task indices
const char* const kSecret = "server-test-secret";

ServerOptions Options(const std::string& tls) {
  ServerOptions o;
  o.intra_op_threads = 1;
  o.inter_op_threads = 2;
  o.recv_timeout = 20s;
  o.transport.listen_port_override = 0;
  o.transport.connect_timeout = 10s;
  o.transport.context.config["TLS"] = tls;
  o.transport.cluster_secret = kSecret;
  o.transport.data_peer_error_handling = tls.find("sm") == std::string::npos;
  return o;
}

void SetPorts(Server& server, const std::string& line) {
  int ports[3];
  REQUIRE_MESSAGE(std::sscanf(line.c_str(), "%d,%d,%d", &ports[0], &ports[1], &ports[2]) == 3, line);
  for (int t = 0; t < 3; ++t) {
    if (t != server.task_index()) server.transport().SetPeerAddress(t, HostPort{"127.0.0.1", ports[t]});
  }
}

// The client's server plus worker:1 and ps:0 in child processes, all knowing each other's ports.
struct TestCluster {
  std::unique_ptr<Server> client;
  std::unique_ptr<Child> children[3];  // by global index (1, 2)

  // worker1_env: more environment for worker:1 (WEFT_SERVER_CHILD_TRAIN makes it an async client).
  // client_options: changes to the client's own server's options.
  explicit TestCluster(const std::string& tls, std::map<std::string, std::string> worker1_env = {},
                       const std::function<void(ServerOptions*)>& client_options = {}) {
    ServerOptions mine = Options(tls);
    if (client_options) client_options(&mine);
    client = std::make_unique<Server>(ClusterSpec::FromFlag(kCluster), TaskId{"worker", 0}, mine);
    worker1_env.insert({{"WEFT_SERVER_CHILD", "worker:1"}, {"WEFT_SERVER_TLS", tls}});
    children[kWorker1] = std::make_unique<Child>("server child", worker1_env);
    children[kPs0] = std::make_unique<Child>(
        "server child", std::map<std::string, std::string>{{"WEFT_SERVER_CHILD", "ps:0"}, {"WEFT_SERVER_TLS", tls}});
    std::string ports = std::to_string(client->transport().port());
    for (int t : {kWorker1, kPs0}) {
      const std::string port = ReadLine(children[t]->from_child, 20s);
      REQUIRE_MESSAGE((!port.empty() && std::isdigit(static_cast<unsigned char>(port[0])) != 0), "child said: " << port);
      ports += "," + port;
    }
    SetPorts(*client, ports);
    for (int t : {kWorker1, kPs0}) WriteLine(children[t]->to_child, ports);
    for (int t : {kWorker1, kPs0}) REQUIRE(ReadLine(children[t]->from_child, 20s) == "ready");
  }
  ~TestCluster() {
    for (int t : {kWorker1, kPs0}) {
      if (children[t]->pid > 0) {
        WriteLine(children[t]->to_child, "stop");
        CHECK(children[t]->Wait(20s) == 0);
      }
    }
  }
};

// relu(x @ w) summed on worker:1 plus sum(x) on ps:0; w lives on ps:0 and is updated there.
struct Model {
  Graph g;
  Output x, w, loss, dw, unset;
  Node *init, *train;
  explicit Model(bool distributed) {
    Scope s = Scope::Root(&g);
    Scope wk = distributed ? s.WithDevice("/job:worker/task:1") : s;
    Scope ps = distributed ? s.WithDevice("/job:ps/task:0") : s;
    x = ops::Placeholder(s.WithOpName("x"), DType::kFloat32, {-1, 3});
    w = ops::Variable(ps.WithOpName("w"), {3, 2}, DType::kFloat32);
    init = ops::Assign(ps, w, ops::Const<float>(s, {1, -2, 3, 4, -5, 6}, {3, 2})).node;
    Output h = ops::Relu(wk, ops::MatMul(wk, x, w));
    loss = ops::Add(s, ops::Sum(wk, h), ops::Sum(ps, x));
    dw = Gradients(s, {loss}, {w})[0];
    train = ops::AssignSub(ps, w, ops::Mul(ps, dw, ops::Const(s, 0.1f))).node;
    Output never = ops::Variable(ps.WithOpName("never_assigned"), {3, 2}, DType::kFloat32);
    unset = ops::Sum(wk, ops::MatMul(wk, x, never));
  }
};

const Tensor kX = Tensor::FromVector<float>({1, 2, 3, -1, 0.5f, 2}, {2, 3});

Status RunStatus(const std::function<void()>& fn) {
  try {
    fn();
    return Status();
  } catch (const Error& e) {
    return e.status();
  }
}

// A whole control request of `method` with `body` (the envelope included unless raw).
std::string Request(int src, uint64_t id, const std::string& method, const std::string& body) {
  Tensor t(DType::kUInt8, TensorShape({static_cast<int64_t>(body.size())}));
  if (!body.empty()) std::memcpy(t.raw_data(), body.data(), body.size());
  return EncodeTensorHeader(src, id, method, t, false, true, 0, WireKind::kControlRequest) + body;
}

bool Has(const Status& s, const std::string& text) { return s.message().find(text) != std::string::npos; }

// Stops `pid` (SIGSTOP) and waits (bounded) until it is stopped: the signal takes effect later.
void Stop(pid_t pid) {
  REQUIRE(kill(pid, SIGSTOP) == 0);
  for (int i = 0; i < 500; ++i) {
    std::ifstream st(fmt::format("/proc/{}/stat", pid));
    std::string line;
    std::getline(st, line);
    const size_t paren = line.rfind(')');
    if (paren != std::string::npos && paren + 2 < line.size() && line[paren + 2] == 'T') return;
    std::this_thread::sleep_for(10ms);
  }
  FAIL("process " << pid << " did not stop");
}

// A port nobody listens on right now (for a cluster spec whose servers bind their spec port).
int FreePort() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  REQUIRE(fd >= 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  REQUIRE(bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)) == 0);
  socklen_t len = sizeof(a);
  REQUIRE(getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) == 0);
  close(fd);
  return ntohs(a.sin_port);
}

}  // namespace

namespace {

// A softmax regression on a learnable synthetic set, trained `epochs` x 10 steps of batch 32
// in `strategy`'s scope; `history` gets the mean training loss per epoch, `initial` (if set) the
// loss over the whole set before training.
// epochs 0: compiled only (the chief initializes the shared variables), not trained.
std::unique_ptr<train::Model> TrainLinear(const Strategy& strategy, int epochs, std::vector<double>* history,
                                          double* initial = nullptr, int64_t units = 4) {
  static const data::ArrayData d = data::Synthetic(640, {16}, 4, 5);
  auto scope = strategy.scope();
  auto m = std::make_unique<train::Sequential>(TensorShape({16}), std::vector<train::LayerPtr>{train::Dense(units)}, "linear");
  train::CompileOptions o;
  o.loss = train::SparseCategoricalCrossentropy(/*from_logits=*/true);
  o.optimizer = train::SGD(0.1);
  o.session.inter_op_threads = 2;
  o.session.intra_op_threads = 1;
  o.seed = 7;  // the chief's initial weights
  m->Compile(o);
  if (initial != nullptr) *initial = m->Evaluate(d.x, d.y, 640).at("loss");
  if (epochs == 0) return m;
  train::FitOptions fo;
  fo.batch_size = 32;
  fo.epochs = epochs;
  fo.steps_per_epoch = 10;
  fo.verbose = 0;
  const train::History h = m->Fit(d.x, d.y, fo);
  *history = h.history.at("loss");
  return m;
}

}  // namespace

// A task's server; runs only in a spawned child. With WEFT_SERVER_CHILD_TRAIN=async it also
// trains TrainLinear as an async ParameterServerStrategy client and reports "trained STEPS FIRST LAST".
TEST_CASE("server child") {
  const char* task = std::getenv("WEFT_SERVER_CHILD");
  if (task == nullptr) return;
  int in_fd = -1, out_fd = -1;
  test::ChildFds(&in_fd, &out_fd);
  Server server(ClusterSpec::FromFlag(kCluster), TaskId::Parse(task), Options(std::getenv("WEFT_SERVER_TLS")));
  WriteLine(out_fd, std::to_string(server.transport().port()));
  SetPorts(server, ReadLine(in_fd, 20s));
  WriteLine(out_fd, "ready");
  if (std::getenv("WEFT_SERVER_CHILD_TRAIN") != nullptr) {
    try {
      ParameterServerStrategy strategy(&server, {.step_timeout = 30s, .control_timeout = 15s}, PsMode::kAsync);
      std::vector<double> losses;
      const char* units = std::getenv("WEFT_SERVER_CHILD_UNITS");  // another model than the chief's
      auto m = TrainLinear(strategy, 4, &losses, nullptr, units != nullptr ? std::atoll(units) : 4);
      WriteLine(out_fd, fmt::format("trained {} {} {}", m->step(), losses.front(), losses.back()));
    } catch (const Error& e) {
      WriteLine(out_fd, "error: " + e.status().ToString());
    }
  }
  CHECK(ReadLine(in_fd, 50s) == "stop");
}

TEST_CASE("server: a graph over worker:1 and ps:0 computes what the single-process graph does; errors name the task") {
  for (const std::string tls : kTransports) {
    CAPTURE(tls);
    TestCluster cluster(tls);
    Model plain(false), dist(true);
    Session local(&plain.g);
    DistributedSession remote(&dist.g, cluster.client.get(), {.step_timeout = 20s, .control_timeout = 10s});
    CHECK(remote.devices().size() == 3);
    local.Run({}, {}, {plain.init});
    remote.Run({}, {}, {dist.init});
    for (int step = 0; step < 3; ++step) {
      auto a = local.Run({{plain.x, kX}}, {plain.loss, plain.dw}, {plain.train});
      auto b = remote.Run({{dist.x, kX}}, {dist.loss, dist.dw}, {dist.train});
      CHECK(a[0].scalar<float>()() == b[0].scalar<float>()());
      for (int i = 0; i < 6; ++i) CHECK(a[1].flat<float>()(i) == b[1].flat<float>()(i));
    }
    // Every task got its part: the variable's on ps:0, the matmul on worker:1, the fetches here.
    std::set<std::string> tasks;
    for (const auto& [device, task] : remote.Partitions({dist.x}, {dist.loss, dist.dw}, {dist.train})) tasks.insert(task);
    CHECK(tasks == std::set<std::string>{"worker:0", "worker:1", "ps:0"});

    // A kernel error on ps:0 fails the step everywhere, naming ps:0; the next step works.
    const Status s = RunStatus([&] { remote.Run({{dist.x, kX}}, {dist.unset}); });
    CHECK(s.code() == Code::kFailedPrecondition);
    CHECK_MESSAGE((Has(s, "task ps:0") && Has(s, "never_assigned")), s.ToString());
    auto again = remote.Run({{dist.x, kX}}, {dist.loss});
    CHECK(again[0].scalar<float>()() == local.Run({{plain.x, kX}}, {plain.loss})[0].scalar<float>()());

    // Malformed control requests get an error reply; the server keeps serving.
    ControlChannel& control = cluster.client->control();
    auto raw = [&](const std::string& method, const std::string& body, size_t cut = 0) {
      const uint64_t id = control.NextId();
      std::string bytes = Request(0, id, method, body);
      bytes.resize(bytes.size() - cut);
      return control.CallRawForTesting(kPs0, id, bytes, 10s).status;
    };
    Status r = raw("Health", std::string("\x07\x00\x00\x00", 4));
    CHECK(r.code() == Code::kInvalidArgument);
    CHECK_MESSAGE(Has(r, "control version 7"), r.ToString());
    r = raw("RunStep", EncodeRequestEnvelope(EncodeRunStep({}).substr(0, 11)));
    CHECK(r.code() == Code::kDataLoss);
    CHECK_MESSAGE(Has(r, "RunStep request: truncated while reading step id"), r.ToString());
    r = raw("RunStep", EncodeRequestEnvelope(EncodeRunStep({}) + "x"));
    CHECK_MESSAGE(Has(r, "1 trailing bytes"), r.ToString());
    r = raw("Launch", EncodeRequestEnvelope(""));
    CHECK_MESSAGE((r.code() == Code::kInvalidArgument && Has(r, "unknown method 'Launch'")), r.ToString());
    r = raw("Health", EncodeRequestEnvelope(std::string(100, 'z')), /*cut=*/40);  // the wire message is truncated
    CHECK(r.code() == Code::kDataLoss);
    CHECK_MESSAGE((Has(r, "rejected a Health request") && Has(r, "truncated")), r.ToString());
    REQUIRE(cluster.client->transport().SendRawForTesting(kPs0, HeaderTag(0), std::string(200, '\x5a')).ok());  // garbage
    // An unknown graph handle is NotFound.
    RunStepRequest unknown;
    unknown.handle = 987654;
    unknown.step_id = 5;
    ControlResult nf = control.Call(kPs0, ControlMethod::kRunStep, EncodeRunStep(unknown), 10s);
    CHECK(nf.status.code() == Code::kNotFound);
    CHECK_MESSAGE(Has(nf.status, "graph handle 987654"), nf.status.ToString());
    // Still serving: Health answers and a step runs.
    ControlResult h = control.Call(kPs0, ControlMethod::kHealth, EncodeEmpty(), 10s);
    REQUIRE_MESSAGE(h.status.ok(), h.status.ToString());
    const HealthReply health = DecodeHealthReply(h.body);
    CHECK(health.task == "ps:0");
    CHECK(health.devices == std::vector<std::string>{"/job:ps/replica:0/task:0/device:CPU:0"});
    CHECK(health.steps_running == 0);
    CHECK(remote.Run({{dist.x, kX}}, {dist.loss})[0].scalar<float>()() == again[0].scalar<float>()());
  }
}

TEST_CASE("server: a stalled worker times the step out; a killed one fails it with Unavailable naming it") {
  for (const std::string tls : kTransports) {
    CAPTURE(tls);
    TestCluster cluster(tls);
    Model dist(true);
    DistributedSession remote(&dist.g, cluster.client.get(), {.step_timeout = 20s, .control_timeout = 10s});
    remote.Run({}, {}, {dist.init});
    remote.Run({{dist.x, kX}}, {dist.loss, dist.dw}, {dist.train});  // registered and connected everywhere
    Child& worker = *cluster.children[kWorker1];
    // A worker that does not answer (stopped) fails the step at the session's step timeout,
    // naming it; once it runs again, so do the steps.
    {
      DistributedSession quick(&dist.g, cluster.client.get(), {.step_timeout = 1500ms, .control_timeout = 10s});
      const float before = quick.Run({{dist.x, kX}}, {dist.loss})[0].scalar<float>()();
      Stop(worker.pid);
      const Status late = RunStatus([&] { quick.Run({{dist.x, kX}}, {dist.loss}); });
      REQUIRE(kill(worker.pid, SIGCONT) == 0);
      CHECK(late.code() == Code::kDeadlineExceeded);
      CHECK_MESSAGE((Has(late, "RunStep on task worker:1") && Has(late, "no reply within the timeout")), late.ToString());
      CHECK(quick.Run({{dist.x, kX}}, {dist.loss})[0].scalar<float>()() == before);
    }
    Stop(worker.pid);
    auto step = std::async(std::launch::async, [&] {
      return RunStatus([&] { remote.Run({{dist.x, kX}}, {dist.loss, dist.dw}, {dist.train}); });
    });
    // Wait (bounded) until ps:0 runs the step, then kill worker:1 in the middle of it.
    bool running = false;
    for (int i = 0; i < 200 && !running; ++i) {
      ControlResult h = cluster.client->control().Call(kPs0, ControlMethod::kHealth, EncodeEmpty(), 5s);
      running = h.status.ok() && DecodeHealthReply(h.body).steps_running == 1;
      if (!running) std::this_thread::sleep_for(20ms);
    }
    CHECK(running);
    worker.Kill();
    REQUIRE(step.wait_for(30s) == std::future_status::ready);
    const Status s = step.get();
    CHECK(s.code() == Code::kUnavailable);
    CHECK_MESSAGE(Has(s, "worker:1"), s.ToString());
    // ps:0 ended the step and serves on.
    int64_t left = -1;
    for (int i = 0; i < 200 && left != 0; ++i) {
      ControlResult h = cluster.client->control().Call(kPs0, ControlMethod::kHealth, EncodeEmpty(), 5s);
      REQUIRE_MESSAGE(h.status.ok(), h.status.ToString());
      left = DecodeHealthReply(h.body).steps_running;
      if (left != 0) std::this_thread::sleep_for(20ms);
    }
    CHECK(left == 0);
  }
}

TEST_CASE("server: a stopped worker (SIGSTOP): the client's server reports the Recv it waits for, naming it, and dumps its trace") {
  // The client's task (this process) waits in its Add for worker:1's partial sum; worker:1 is
  // stopped. Its Recv passes the 1.5 s deadline: the hang report names the key and worker:1
  // (within 2x the deadline), lists the node still running, and the trace dump beside it holds
  // the kernels and steps that ran here.
  const std::string dir = std::filesystem::temp_directory_path() / fmt::format("weft_server_hang_{}", getpid());
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  constexpr auto kDeadline = 1500ms;
  TestCluster cluster("tcp,self", {}, [&](ServerOptions* o) {
    o->recv_timeout = kDeadline;
    o->hang_report_dir = dir;
    o->hang_report_on_signal = false;
  });
  Model dist(true);
  DistributedSession remote(&dist.g, cluster.client.get(), {.step_timeout = 4s, .control_timeout = 10s});
  remote.Run({}, {}, {dist.init});
  remote.Run({{dist.x, kX}}, {dist.loss, dist.dw}, {dist.train});
  remote.Run({{dist.x, kX}}, {dist.loss});  // registered everywhere: the stopped step needs no RegisterGraph
  REQUIRE(cluster.client->trace_ring() != nullptr);
  CHECK(cluster.client->trace_ring()->recorded() > 0);
  Child& worker = *cluster.children[kWorker1];
  Stop(worker.pid);
  const auto start = std::chrono::steady_clock::now();
  const std::string report_path = dir + "/weft-hang-worker-0.txt";
  auto step = std::async(std::launch::async, [&] { return RunStatus([&] { remote.Run({{dist.x, kX}}, {dist.loss}); }); });
  bool reported = false;
  while (!reported && std::chrono::steady_clock::now() - start < 4 * kDeadline) {
    reported = std::filesystem::exists(report_path);
    if (!reported) std::this_thread::sleep_for(10ms);
  }
  const double at = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  REQUIRE(step.wait_for(20s) == std::future_status::ready);
  const Status s = step.get();
  REQUIRE(kill(worker.pid, SIGCONT) == 0);
  CHECK(s.code() == Code::kDeadlineExceeded);
  INFO("the step: " << s.ToString());
  REQUIRE(reported);
  MESSAGE("report after " << at << " s");
  CHECK(at < 2.0 * std::chrono::duration<double>(kDeadline).count());
  std::ifstream in(report_path);
  const std::string report((std::istreambuf_iterator<char>(in)), {});
  MESSAGE("worker:0's report:\n" << report);
  CHECK(report.starts_with("=== weft hang report: worker:0 (pid "));
  CHECK(report.find("\nwhy: step ") != std::string::npos);
  CHECK(report.find("DeadlineExceeded") != std::string::npos);
  CHECK(report.find(";/job:worker/replica:0/task:0/device:CPU:0;") != std::string::npos);  // the key, to here
  CHECK(report.find("' from worker:1 for ") != std::string::npos);
  CHECK(report.find("\nrunning: step ") != std::string::npos);
  CHECK(report.find("\nwaits for: worker:1\n") != std::string::npos);
  CHECK(report.find("\ntrace: " + dir + "/weft-trace-worker-0.json (") != std::string::npos);
  std::ifstream trace_in(dir + "/weft-trace-worker-0.json");
  const std::string trace((std::istreambuf_iterator<char>(trace_in)), {});
  CHECK(trace.find("\"kind\": \"kernel\"") != std::string::npos);
  CHECK(trace.find("\"kind\": \"step\"") != std::string::npos);
  CHECK(trace.find("\"process\": \"worker:0\"") != std::string::npos);
  std::filesystem::remove_all(dir);
}

TEST_CASE("server: weft-zoo server serves a ps task from TF_CONFIG until SIGTERM") {
  const int client_port = FreePort(), ps_port = FreePort();
  const ClusterSpec spec = ClusterSpec::FromFlag(fmt::format("worker=127.0.0.1:{};ps=127.0.0.1:{}", client_port, ps_port));
  const std::string tf_config = ClusterConfig{spec, TaskId{"ps", 0}}.ToTfConfig({"ps", 0});
  Child ps({WEFT_ZOO_PATH, "server", "--threads", "1"}, {{"TF_CONFIG", tf_config}, {"UCX_TLS", "tcp,self"}, {"WEFT_CLUSTER_SECRET", kSecret}}, true);
  const std::string banner = ReadLine(ps.from_child, 20s);
  CHECK_MESSAGE(banner.find(fmt::format("task ps:0 serving at ucx://127.0.0.1:{}", ps_port)) != std::string::npos, banner);
  ServerOptions options = Options("tcp,self");
  options.transport.listen_port_override = -1;  // the spec's port: the ps connects back to it
  Server client(spec, {"worker", 0}, options);
  Model plain(false), dist(true);
  Session local(&plain.g);
  {
    DistributedSession remote(&dist.g, &client, {.step_timeout = 20s, .control_timeout = 15s});
    // worker:1 does not exist in this cluster: its nodes fall back (soft placement) to this task.
    local.Run({}, {}, {plain.init});
    remote.Run({}, {}, {dist.init});
    for (int step = 0; step < 2; ++step) {
      auto a = local.Run({{plain.x, kX}}, {plain.loss, plain.dw}, {plain.train});
      auto b = remote.Run({{dist.x, kX}}, {dist.loss, dist.dw}, {dist.train});
      CHECK(a[0].scalar<float>()() == b[0].scalar<float>()());
    }
  }
  REQUIRE(kill(ps.pid, SIGTERM) == 0);
  CHECK(ReadLine(ps.from_child, 20s).find("task ps:0 stopping") != std::string::npos);
  CHECK(ps.Wait(20s) == 0);
}

// Issue 17, finding 6: a client that exits and a second one started seconds later (a new
// process: a new incarnation of worker:0) use the same ps task, which kept its variables. Today's
// main: the second client's Health on ps:0 timed out ("a failed peer stays failed").
TEST_CASE("server: a ps task keeps serving, with its variables, a client that restarted") {
  const int client_port = FreePort(), ps_port = FreePort();
  const ClusterSpec spec = ClusterSpec::FromFlag(fmt::format("worker=127.0.0.1:{};ps=127.0.0.1:{}", client_port, ps_port));
  const std::string tf_config = ClusterConfig{spec, TaskId{"ps", 0}}.ToTfConfig({"ps", 0});
  Child ps({WEFT_ZOO_PATH, "server", "--threads", "1"},
           {{"TF_CONFIG", tf_config}, {"UCX_TLS", "tcp,self"}, {"WEFT_CLUSTER_SECRET", kSecret}}, true);
  REQUIRE(ReadLine(ps.from_child, 20s).find("serving at") != std::string::npos);
  ServerOptions options = Options("tcp,self");
  options.transport.listen_port_override = -1;  // the spec's port, as a restarted process would bind
  // w after init and one step of AssignSub(w, 0.1 * dw), in closed form: x @ w0 = [[-8, 24], [-9.5, 16]],
  // so relu passes column 1 only and dw = x^T @ [[0, 1], [0, 1]] = [[0, 0], [0, 2.5], [0, 5]].
  const std::vector<float> after_one_step = {1, -2, 3, 3.75f, -5, 5.5f};
  {
    Server first(spec, {"worker", 0}, options);
    Model dist(true);
    DistributedSession remote(&dist.g, &first, {.step_timeout = 20s, .control_timeout = 15s});
    remote.Run({}, {}, {dist.init});
    remote.Run({{dist.x, kX}}, {}, {dist.train});
  }  // the first client exits
  Server second(spec, {"worker", 0}, options);
  Model dist(true);
  DistributedSession remote(&dist.g, &second, {.step_timeout = 20s, .control_timeout = 15s});
  const Tensor w = remote.Run({}, {dist.w}, {})[0];  // no init: the ps kept w
  REQUIRE(w.num_elements() == 6);
  for (int i = 0; i < 6; ++i) CHECK(w.flat<float>()(i) == doctest::Approx(after_one_step[i]));
  remote.Run({{dist.x, kX}}, {}, {dist.train});  // and it still trains
  CHECK(remote.Run({}, {dist.w}, {})[0].flat<float>()(3) == doctest::Approx(3.5f));
  REQUIRE(kill(ps.pid, SIGTERM) == 0);
  CHECK(ps.Wait(20s) == 0);
}

namespace {

// mnist_cnn, 4 steps of global batch 64 (seeded): in one process, or with `strategy`'s scope.
std::unique_ptr<train::Model> TrainCnn(const Strategy* strategy) {
  static const data::ArrayData d = data::Synthetic(64 * 4, {28, 28, 1}, 10, 3);
  std::optional<Strategy::ScopeGuard> scope;
  if (strategy != nullptr) scope.emplace(strategy);
  std::unique_ptr<train::Model> m = zoo::FindZooModel("mnist_cnn").build({28, 28, 1}, 10);
  train::CompileOptions o;
  o.loss = train::SparseCategoricalCrossentropy(/*from_logits=*/true);
  o.optimizer = train::SGD(0.05, 0.9);
  o.session.inter_op_threads = 2;
  o.session.intra_op_threads = 1;
  o.seed = 7;
  m->Compile(o);
  train::FitOptions fo;
  fo.batch_size = 64;
  fo.epochs = 1;
  fo.steps_per_epoch = 4;
  fo.shuffle_seed = 11;
  fo.verbose = 0;
  m->Fit(d.x, d.y, fo);
  return m;
}

double MaxRelativeDifference(const Tensor& a, const Tensor& b) {
  double worst = 0, scale = 1e-6;
  for (int64_t i = 0; i < a.num_elements(); ++i) scale = std::max(scale, std::abs(a.ElementAsDouble(i)));
  for (int64_t i = 0; i < a.num_elements(); ++i) {
    worst = std::max(worst, std::abs(a.ElementAsDouble(i) - b.ElementAsDouble(i)) / scale);
  }
  return worst;
}

}  // namespace

TEST_CASE("server: ParameterServerStrategy (1 ps, 2 workers, sync) trains mnist_cnn like one process") {
  TestCluster cluster("sm,self,tcp");
  ParameterServerStrategy strategy(cluster.client.get(), {.step_timeout = 30s, .control_timeout = 15s});
  CHECK(strategy.num_replicas_in_sync() == 2);
  CHECK(strategy.variable_devices() == std::vector<std::string>{"/job:ps/replica:0/task:0/device:CPU:0"});
  OneDeviceStrategy one("/device:CPU:0");
  auto reference = TrainCnn(&one);
  auto ps = TrainCnn(&strategy);
  CHECK(ps->step() == 4);
  // Every weight lives on ps:0 (this process's server holds none of them).
  std::vector<Output> weights;
  for (const std::string& name : reference->VariableNames()) {
    if (name == "step") continue;
    weights.push_back(ps->session()->graph()->FindOutput(name));
    CHECK(cluster.client->vars().Find(name) == nullptr);
  }
  CHECK(weights.size() >= 4);
  const std::vector<Tensor> values = ps->session()->Run({}, weights);
  for (size_t i = 0; i < weights.size(); ++i) {
    const std::string name = weights[i].node->name();
    CAPTURE(name);
    const Tensor expected = reference->session()->Run({}, {reference->session()->graph()->FindOutput(name)})[0];
    CHECK(MaxRelativeDifference(expected, values[i]) < 1e-5);
  }
  // A checkpoint holds the ps tasks' values (and the step, also on ps:0).
  const std::string path = fmt::format("/tmp/weft_ps_sync_ckpt_{}.weft", getpid());
  ps->SaveWeights(path);
  const std::map<std::string, Tensor> file = train::LoadCheckpoint(path);
  std::remove(path.c_str());
  CHECK(file.at("step").scalar<int64_t>()() == 4);
  for (size_t i = 0; i < weights.size(); ++i) CHECK(MaxRelativeDifference(file.at(weights[i].node->name()), values[i]) == 0);
}

TEST_CASE("server: ParameterServerStrategy async: a worker whose model differs in one layer fails before its first step, naming it") {
  // The chief (this process) builds Dense(4) and initializes the shared variables on ps:0;
  // worker:1 builds Dense(8): its Compile fails naming the kernel and both shapes, and nothing
  // of it ran on the shared variables.
  TestCluster cluster("tcp,self", {{"WEFT_SERVER_CHILD_TRAIN", "async"}, {"WEFT_SERVER_CHILD_UNITS", "8"}});
  ParameterServerStrategy strategy(cluster.client.get(), {.step_timeout = 30s, .control_timeout = 15s}, PsMode::kAsync);
  std::vector<double> losses;
  auto m = TrainLinear(strategy, 0, &losses);
  const std::string report = ReadLine(cluster.children[kWorker1]->from_child, 60s);
  MESSAGE("worker:1: " << report);
  CHECK(report.starts_with("error: FailedPrecondition: "));
  CHECK(report.find("the shared variable '") != std::string::npos);
  CHECK(report.find("kernel' is [16,4] (as the chief initialized it) where this worker's model has [16,8]: "
                    "the workers run different programs") != std::string::npos);
  // The step counter on ps:0 is where the chief left it: worker:1 ran no step.
  CHECK(m->session()->Run({}, {m->graph()->FindOutput("step")})[0].scalar<int64_t>()() == 0);
}

TEST_CASE("server: ParameterServerStrategy async (1 ps, 2 workers) converges; checkpoints round-trip through ps:0") {
  TestCluster cluster("sm,self,tcp", {{"WEFT_SERVER_CHILD_TRAIN", "async"}});  // worker:1 trains too
  ParameterServerStrategy strategy(cluster.client.get(), {.step_timeout = 30s, .control_timeout = 15s}, PsMode::kAsync);
  CHECK(strategy.is_chief());
  CHECK(strategy.num_replicas_in_sync() == 1);
  CHECK(strategy.input_shard() == std::pair<int, int>{0, 2});
  std::vector<double> losses;
  double initial = 0;
  auto m = TrainLinear(strategy, 4, &losses, &initial);
  CHECK(m->step() == 40);  // this worker's steps
  CHECK_MESSAGE(losses.back() < 0.5 * initial, initial << " -> " << losses.front() << " -> " << losses.back());
  // worker:1 trained on its own, its updates going to the same variables on ps:0.
  const std::string report = ReadLine(cluster.children[kWorker1]->from_child, 60s);
  long long steps1 = 0;
  double first1 = 0, last1 = 0;
  REQUIRE_MESSAGE(std::sscanf(report.c_str(), "trained %lld %lf %lf", &steps1, &first1, &last1) == 3, report);
  CHECK(steps1 == 40);
  CHECK_MESSAGE(last1 < 0.5 * initial, initial << " -> " << first1 << " -> " << last1);
  // The step counter on ps:0 counts both workers' steps; no weight lives in this process.
  MESSAGE("async: loss before " << initial << "; worker:0 epochs " << losses.front() << " -> " << losses.back()
                                  << "; worker:1 " << first1 << " -> " << last1);
  const Output step = m->graph()->FindOutput("step");
  CHECK(m->session()->Run({}, {step})[0].scalar<int64_t>()() == 80);
  for (const std::string& name : m->VariableNames()) CHECK(cluster.client->vars().Find(name) == nullptr);

  // SaveWeights fetches the variables from ps:0; LoadWeights assigns them there again.
  const std::string path = fmt::format("/tmp/weft_ps_ckpt_{}.weft", getpid());
  m->SaveWeights(path);
  std::vector<Output> vars;
  for (const std::string& name : m->VariableNames()) vars.push_back(m->graph()->FindOutput(name));
  const std::vector<Tensor> saved = m->session()->Run({}, vars);
  const std::map<std::string, Tensor> file = train::LoadCheckpoint(path);
  REQUIRE(file.size() == vars.size());
  CHECK(file.at("step").scalar<int64_t>()() == 80);
  static const data::ArrayData more = data::Synthetic(64, {16}, 4, 9);
  m->TrainOnBatch(more.x, more.y);  // moves the weights and the step on ps:0
  CHECK(m->session()->Run({}, {step})[0].scalar<int64_t>()() == 81);
  m->LoadWeights(path);
  CHECK(m->step() == 80);
  const std::vector<Tensor> restored = m->session()->Run({}, vars);
  for (size_t i = 0; i < vars.size(); ++i) {
    CAPTURE(vars[i].node->name());
    CHECK(MaxRelativeDifference(file.at(vars[i].node->name()), restored[i]) == 0);
    CHECK(MaxRelativeDifference(saved[i], restored[i]) == 0);
  }
  std::remove(path.c_str());
}
