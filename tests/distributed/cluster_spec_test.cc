// Cluster specs from TF_CONFIG and from flags: what TensorFlow writes parses, and every kind of
// mistake is an InvalidArgument that names it.
#include <doctest/doctest.h>

#include <cstdlib>

#include "distributed/cluster_spec.h"

using namespace weft;

namespace {

// The error message of `fn`, which must throw InvalidArgument.
template <typename F> std::string InvalidArgumentOf(F&& fn) {
  try {
    fn();
  } catch (const Error& e) {
    CHECK(e.code() == Code::kInvalidArgument);
    return e.status().message();
  }
  FAIL("no error thrown");
  return "";
}

bool Has(const std::string& text, const std::string& part) {
  if (text.find(part) != std::string::npos) return true;
  MESSAGE("'" << text << "' does not contain '" << part << "'");
  return false;
}

}  // namespace

TEST_CASE("cluster spec: TF_CONFIG as TensorFlow writes it") {
  const char* tf_config = R"({"cluster": {"worker": ["172.31.11.122:10090", "172.31.11.123:10090"],
                                          "ps": ["172.31.11.124:2222"], "chief": ["172.31.11.125:2222"]},
                              "task": {"type": "worker", "index": 1}, "environment": "cloud"})";
  ClusterConfig c = ClusterConfig::FromTfConfig(tf_config);
  REQUIRE(c.task.has_value());
  CHECK(*c.task == TaskId{"worker", 1});
  CHECK(c.cluster.NumTasks() == 4);
  CHECK(c.cluster.NumTasks("worker") == 2);
  CHECK(c.cluster.NumTasks("evaluator") == 0);
  CHECK(c.cluster.Address(*c.task) == "172.31.11.123:10090");
  CHECK(c.task->DeviceName() == "/job:worker/replica:0/task:1");
  // Global numbering: chief, workers, ps, evaluator.
  CHECK(c.cluster.GlobalIndex({"chief", 0}) == 0);
  CHECK(c.cluster.GlobalIndex({"worker", 1}) == 2);
  CHECK(c.cluster.GlobalIndex({"ps", 0}) == 3);
  for (int i = 0; i < c.cluster.NumTasks(); ++i) CHECK(c.cluster.GlobalIndex(c.cluster.TaskAt(i)) == i);
  CHECK(c.cluster.TaskOfDevice("/job:ps/replica:0/task:0/device:CPU:0") == TaskId{"ps", 0});
  CHECK(!c.cluster.TaskOfDevice("/job:worker/replica:0/task:10/device:CPU:0").has_value());
  CHECK(!c.cluster.TaskOfDevice("/job:localhost/replica:0/task:0/device:CPU:0").has_value());
  // ToTfConfig round-trips.
  ClusterConfig again = ClusterConfig::FromTfConfig(c.ToTfConfig({"ps", 0}));
  CHECK(again.cluster.jobs() == c.cluster.jobs());
  CHECK(*again.task == TaskId{"ps", 0});
  // No task: allowed, but RequireTask says what is missing.
  ClusterConfig no_task = ClusterConfig::FromTfConfig(R"({"cluster": {"worker": ["h:1"]}})");
  CHECK(!no_task.task);
  try {
    no_task.RequireTask();
    FAIL("no error");
  } catch (const Error& e) {
    CHECK(e.code() == Code::kFailedPrecondition);
    CHECK(Has(e.status().message(), "--task"));
  }
}

TEST_CASE("cluster spec: flags") {
  ClusterConfig c = ClusterConfig::FromFlags("worker=127.0.0.1:10090,127.0.0.1:10091;ps=localhost:2222", "ps:0");
  CHECK(c.cluster.NumTasks() == 3);
  CHECK(c.cluster.Address({"worker", 1}) == "127.0.0.1:10091");
  CHECK(*c.task == TaskId{"ps", 0});
  CHECK(ClusterSpec::FromFlag("worker=[::1]:80;").NumTasks() == 1);
  CHECK(HostPort::Parse("[::1]:80").host == "::1");
  CHECK(HostPort::Parse("[::1]:80").ToString() == "[::1]:80");
  CHECK(Has(InvalidArgumentOf([] { ClusterSpec::FromFlag("worker"); }), "JOB=HOST:PORT"));
  CHECK(Has(InvalidArgumentOf([] { ClusterSpec::FromFlag("worker=h:1;;ps=h:2"); }), "empty job"));
  CHECK(Has(InvalidArgumentOf([] { ClusterSpec::FromFlag("worker=h:1;worker=h:2"); }), "given twice"));
  CHECK(Has(InvalidArgumentOf([] { ClusterConfig::FromFlags("worker=h:1", "worker:1"); }), "out of range"));
  CHECK(Has(InvalidArgumentOf([] { ClusterConfig::FromFlags("worker=h:1", "worker"); }), "JOB:INDEX"));
  CHECK(Has(InvalidArgumentOf([] { ClusterConfig::FromFlags("worker=h:1", "worker:x"); }), "not a non-negative"));
  CHECK(Has(InvalidArgumentOf([] { ClusterConfig::FromFlags("worker=h:1", "master:0"); }), "unknown job 'master'"));
}

TEST_CASE("cluster spec: every mistake is named") {
  // Bad JSON, with the offset.
  std::string m = InvalidArgumentOf([] { ClusterConfig::FromTfConfig(R"({"cluster": {"worker": ["h:1",]}})"); });
  CHECK(Has(m, "bad JSON at offset 30: unexpected character"));
  CHECK(Has(InvalidArgumentOf([] { ClusterConfig::FromTfConfig(R"({"cluster": {})"); }), "text ended"));
  CHECK(Has(InvalidArgumentOf([] { ClusterConfig::FromTfConfig(R"({"cluster": {}} x)"); }), "after the JSON value"));
  CHECK(Has(InvalidArgumentOf([] { ClusterConfig::FromTfConfig(R"({"cluster": {}, "cluster": {}})"); }),
            "appears twice"));
  CHECK(Has(InvalidArgumentOf([] { ClusterConfig::FromTfConfig(R"({"cluster": {"worker": ["h:1"]}, "tasks": {}})"); }),
            "unknown member \"tasks\""));
  CHECK(Has(InvalidArgumentOf([] { ClusterConfig::FromTfConfig(R"({"task": {"type": "worker", "index": 0}})"); }),
            "no \"cluster\""));
  CHECK(Has(InvalidArgumentOf([] { ClusterConfig::FromTfConfig("[1, 2]"); }), "must be a JSON object"));
  CHECK(Has(InvalidArgumentOf([] { ClusterConfig::FromTfConfig(R"({"cluster": {"worker": "h:1"}})"); }),
            "must be a list"));
  // Task index out of range, missing or wrong task fields.
  CHECK(Has(InvalidArgumentOf([] {
              ClusterConfig::FromTfConfig(R"({"cluster": {"worker": ["h:1", "h:2"]}, "task": {"type": "worker", "index": 2}})");
            }), "index 2 is out of range: job 'worker' has 2 task(s)"));
  CHECK(Has(InvalidArgumentOf([] {
              ClusterConfig::FromTfConfig(R"({"cluster": {"worker": ["h:1"]}, "task": {"type": "ps", "index": 0}})");
            }), "no job 'ps'"));
  CHECK(Has(InvalidArgumentOf([] {
              ClusterConfig::FromTfConfig(R"({"cluster": {"worker": ["h:1"]}, "task": {"type": "worker"}})");
            }), "\"index\""));
  CHECK(Has(InvalidArgumentOf([] {
              ClusterConfig::FromTfConfig(R"({"cluster": {"worker": ["h:1"]}, "task": {"type": "worker", "index": 0.5}})");
            }), "\"index\""));
  // Duplicate address, malformed host:port, unknown job, too many chiefs.
  CHECK(Has(InvalidArgumentOf([] { ClusterSpec::FromJson(R"({"worker": ["a:1"], "ps": ["a:1"]})"); }),
            "address 'a:1' is used twice, by task ps:0 and task worker:0"));
  CHECK(Has(InvalidArgumentOf([] { ClusterSpec::FromJson(R"({"worker": ["a"]})"); }), "no ':PORT'"));
  CHECK(Has(InvalidArgumentOf([] { ClusterSpec::FromJson(R"({"worker": ["a:70000"]})"); }), "outside 1..65535"));
  CHECK(Has(InvalidArgumentOf([] { ClusterSpec::FromJson(R"({"worker": ["a:x1"]})"); }), "not a number"));
  CHECK(Has(InvalidArgumentOf([] { ClusterSpec::FromJson(R"({"worker": [":1"]})"); }), "host is empty"));
  CHECK(Has(InvalidArgumentOf([] { ClusterSpec::FromJson(R"({"worker": ["a b:1"]})"); }), "character ' '"));
  CHECK(Has(InvalidArgumentOf([] { ClusterSpec::FromJson(R"({"worker": ["::1:80"]})"); }), "bracket IPv6"));
  CHECK(Has(InvalidArgumentOf([] { ClusterSpec::FromJson(R"({"master": ["a:1"]})"); }), "unknown job 'master'"));
  CHECK(Has(InvalidArgumentOf([] { ClusterSpec::FromJson(R"({"chief": ["a:1", "a:2"]})"); }), "at most one"));
  CHECK(Has(InvalidArgumentOf([] { ClusterSpec::FromJson(R"({"worker": []})"); }), "has no tasks"));
  CHECK(Has(InvalidArgumentOf([] { ClusterSpec::FromJson(R"({"worker": [1]})"); }), "not a number"));
}

TEST_CASE("cluster spec: from the environment") {
  unsetenv("TF_CONFIG");
  try {
    ClusterConfig::FromEnvironment();
    FAIL("no error");
  } catch (const Error& e) {
    CHECK(e.code() == Code::kNotFound);
  }
  setenv("TF_CONFIG", R"({"cluster": {"worker": ["127.0.0.1:5000"]}, "task": {"type": "worker", "index": 0}})", 1);
  CHECK(ClusterConfig::FromEnvironment().cluster.Address({"worker", 0}) == "127.0.0.1:5000");
  unsetenv("TF_CONFIG");
}
