// Pipeline parallelism across processes (distributed/pipeline_strategy.h), on 127.0.0.1 with
// ephemeral ports over UCX's tcp transport: this process is worker:0 (the client, stage 0) and a
// child runs worker:1's server (stage 1, `--test-case="pipeline stage child"`). Scenarios:
//   equal    GPipe and 1F1B over the two processes train a 4-layer MLP (SGD with momentum; Adam)
//            to the weights single-device training of the same global batches reaches (1e-5);
//            stage 1's weights live in the child's server, none in this process's
//   errors   more stages than tasks, and a client that is not the first task, are InvalidArgument
//            naming the tasks
//   kill     worker:1 dies in the middle of a step: Fit fails with Unavailable naming worker:1
//            within the bounded time
#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>
#include <future>

#include "distributed/pipeline_strategy.h"
#include "tests/distributed/child_process.h"
#include "tests/train/pipeline_fixtures.h"
#include "train/model.h"

using namespace weft;
using namespace weft::train;
using weft::test::Child;
using weft::test::ReadLine;
using weft::test::WriteLine;
using namespace std::chrono_literals;

namespace {

const char* const kPipeCluster = "worker=127.0.0.1:1,127.0.0.1:2";  // ports replaced by ephemeral ones
const char* const kPipeSecret = "pipeline-test-secret";

// report_dir: where hang reports and trace dumps go (a failed step writes them).
ServerOptions StageOptions(const std::string& report_dir) {
  ServerOptions o;
  o.hang_report_dir = report_dir;
  o.hang_report_on_signal = false;
  o.intra_op_threads = 1;
  o.inter_op_threads = 2;
  o.recv_timeout = 20s;
  o.transport.listen_port_override = 0;
  o.transport.connect_timeout = 10s;
  o.transport.context.config["TLS"] = "tcp,self";
  o.transport.cluster_secret = kPipeSecret;
  o.transport.data_peer_error_handling = true;
  return o;
}

void SetStagePorts(Server& server, const std::string& line) {
  int ports[2];
  REQUIRE_MESSAGE(std::sscanf(line.c_str(), "%d,%d", &ports[0], &ports[1]) == 2, line);
  for (int t = 0; t < 2; ++t) {
    if (t != server.task_index()) server.transport().SetPeerAddress(t, HostPort{"127.0.0.1", ports[t]});
  }
}

// worker:0's server here and worker:1's in a child, knowing each other's ports; their reports in
// a directory of this test's, removed at the end.
struct StageCluster {
  std::string dir;
  std::unique_ptr<Server> client;
  std::unique_ptr<Child> stage1;
  StageCluster() {
    dir = std::filesystem::temp_directory_path() / fmt::format("weft_pipeline_test_{}", getpid());
    std::filesystem::create_directories(dir);
    client = std::make_unique<Server>(ClusterSpec::FromFlag(kPipeCluster), TaskId{"worker", 0}, StageOptions(dir));
    stage1 = std::make_unique<Child>("pipeline stage child", std::map<std::string, std::string>{{"WEFT_PIPELINE_CHILD", dir}});
    const std::string port = ReadLine(stage1->from_child, 20s);
    REQUIRE_MESSAGE((!port.empty() && std::isdigit(static_cast<unsigned char>(port[0])) != 0), "child said: " << port);
    const std::string ports = std::to_string(client->transport().port()) + "," + port;
    SetStagePorts(*client, ports);
    WriteLine(stage1->to_child, ports);
    REQUIRE(ReadLine(stage1->from_child, 20s) == "ready");
  }
  ~StageCluster() {
    if (stage1->pid > 0) {
      WriteLine(stage1->to_child, "stop");
      CHECK(stage1->Wait(20s) == 0);
    }
    stage1.reset();
    client.reset();
    std::filesystem::remove_all(dir);
  }
};

CompileOptions Options(Optimizer opt) { return test::PipelineCompileOptions(std::move(opt), 1); }
std::unique_ptr<Model> Mlp() { return test::PipelineMlp(); }
void Data(int64_t n, Tensor* x, Tensor* y) { test::PipelineData(n, x, y); }
using test::MaxDiff;
using test::Weights;

Status RunStatus(const std::function<void()>& fn) {
  try {
    fn();
    return Status();
  } catch (const Error& e) {
    return e.status();
  }
}

const DistributedSessionOptions kSession{.step_timeout = 20s, .control_timeout = 10s};

// Mlp trained pipelined over the cluster's two processes and on one device: the largest weight
// difference.
double PipelineVsSingle(StageCluster& cluster, PipelineOptions pipeline, const Optimizer& opt) {
  ClusterPipelineStrategy strategy(cluster.client.get(), std::move(pipeline), kSession);
  CHECK(strategy.stage_tasks() == std::vector<std::string>{"worker:0", "worker:1"});
  return test::TrainedLikeOneDevice(strategy, Mlp, [&] { return Options(opt); }, [&](Model&) {
    // Stage 1 (d3, out: balanced by parameters) lives in the child: this process holds none of it.
    CHECK(cluster.client->vars().Find("d1/kernel") != nullptr);
    CHECK(cluster.client->vars().Find("d3/kernel") == nullptr);
    CHECK(cluster.client->vars().Find("out/kernel") == nullptr);
  });
}

}  // namespace

// worker:1's server; runs only in a spawned child, until told to stop (or killed).
TEST_CASE("pipeline stage child") {
  const char* dir = std::getenv("WEFT_PIPELINE_CHILD");
  if (dir == nullptr) return;
  int in_fd = -1, out_fd = -1;
  test::ChildFds(&in_fd, &out_fd);
  Server server(ClusterSpec::FromFlag(kPipeCluster), TaskId{"worker", 1}, StageOptions(dir));
  WriteLine(out_fd, std::to_string(server.transport().port()));
  SetStagePorts(server, ReadLine(in_fd, 20s));
  WriteLine(out_fd, "ready");
  CHECK(ReadLine(in_fd, 50s) == "stop");
}

TEST_CASE("pipeline across processes: GPipe and 1F1B over 2 processes equal single-device training (1e-5)") {
  StageCluster cluster;
  CHECK(PipelineVsSingle(cluster, {.num_stages = 2, .micro_batches = 4}, SGD(0.2, 0.9)) < 1e-5);
  CHECK(PipelineVsSingle(cluster, {.num_stages = 0, .micro_batches = 4, .schedule = PipelineSchedule::k1F1B},
                         SGD(0.2, 0.9)) < 1e-5);
  CHECK(PipelineVsSingle(cluster, {.num_stages = 2, .micro_batches = 2, .schedule = PipelineSchedule::k1F1B},
                         Adam(0.01)) < 1e-5);
}

TEST_CASE("pipeline across processes: bad input names the tasks") {
  Server client(ClusterSpec::FromFlag(kPipeCluster), TaskId{"worker", 0}, StageOptions(""));
  const Status more = RunStatus([&] { ClusterPipelineStrategy s(&client, {.num_stages = 3, .micro_batches = 2}); });
  CHECK(more.code() == Code::kInvalidArgument);
  CHECK_MESSAGE(more.message().find("3 stages need 3 tasks") != std::string::npos, more.ToString());
  CHECK_MESSAGE(more.message().find("worker:0, worker:1") != std::string::npos, more.ToString());
  Server second(ClusterSpec::FromFlag(kPipeCluster), TaskId{"worker", 1}, StageOptions(""));
  const Status not_first = RunStatus([&] { ClusterPipelineStrategy s(&second, {.num_stages = 2, .micro_batches = 2}); });
  CHECK(not_first.code() == Code::kInvalidArgument);
  CHECK_MESSAGE(not_first.message().find("must be task worker:0") != std::string::npos, not_first.ToString());
}

TEST_CASE("pipeline across processes: a stage process dying fails the step with Unavailable naming it") {
  StageCluster cluster;
  Tensor x, y;
  Data(64, &x, &y);
  ClusterPipelineStrategy strategy(cluster.client.get(), {.num_stages = 2, .micro_batches = 4}, kSession);
  std::unique_ptr<Model> piped;
  {
    auto scope = strategy.scope();
    piped = Mlp();
    piped->Compile(Options(SGD(0.1)));
  }
  const FitOptions fo{.batch_size = 16, .epochs = 1, .shuffle = false, .verbose = 0};
  piped->Fit(x, y, fo);  // connected and registered everywhere
  // Stopped, worker:1 holds the next step up (stage 0 waits for its gradients); killed then.
  REQUIRE(kill(cluster.stage1->pid, SIGSTOP) == 0);
  const auto start = std::chrono::steady_clock::now();
  auto step = std::async(std::launch::async, [&] { return RunStatus([&] { piped->Fit(x, y, fo); }); });
  std::this_thread::sleep_for(300ms);
  cluster.stage1->Kill();
  REQUIRE(step.wait_for(30s) == std::future_status::ready);
  const Status s = step.get();
  CHECK(std::chrono::steady_clock::now() - start < 25s);
  CHECK(s.code() == Code::kUnavailable);
  CHECK_MESSAGE(s.message().find("worker:1") != std::string::npos, s.ToString());
  // With the stage gone, a later step fails the same way (not a hang).
  const Status again = RunStatus([&] { piped->Fit(x, y, fo); });
  CHECK(again.code() == Code::kUnavailable);
}
