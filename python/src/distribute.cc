// weft.distribute: the C++ strategies (train/strategy.h). A strategy's scope is a per-thread
// stack here (`_enter` / `_exit`, driven by the Python context manager in weft/distribute.py).
#include <memory>
#include <vector>

#include "common.h"
#include "distributed/cluster_resolver.h"
#include "train/model.h"
#include "train/pipeline.h"
#include "train/strategy.h"
#ifdef WEFT_HAVE_UCX
#include "distributed/multi_worker_strategy.h"
#include "distributed/pipeline_strategy.h"
#endif

namespace weft::python {

using train::Model;
namespace {

thread_local std::vector<std::unique_ptr<Strategy::ScopeGuard>> scopes;

}  // namespace

void InitDistribute(py::module_& m) {
  py::class_<Strategy, std::shared_ptr<Strategy>>(m, "Strategy", "A distribution strategy (train/strategy.h).")
      .def_property_readonly("name", &Strategy::name)
      .def_property_readonly("num_replicas_in_sync", &Strategy::num_replicas_in_sync)
      .def_property_readonly("devices", &Strategy::devices)
      .def_property_readonly("mirrored", &Strategy::mirrored)
      .def_property_readonly("variable_device", &Strategy::variable_device)
      .def_property_readonly("group_devices", &Strategy::group_devices)
      .def_property_readonly("num_workers", &Strategy::num_workers)
      .def_property_readonly("is_chief", &Strategy::is_chief)
      .def_property_readonly("shard_optimizer_state", &Strategy::shard_optimizer_state)
      .def("status",
           [](const Strategy& s) {
             const StrategyStatus st = s.status();
             py::dict d;
             d["step"] = st.step;
             d["images_per_second"] = st.images_per_second;
             d["collective_fraction"] = st.collective_fraction;
             d["collective_seconds"] = st.collective_seconds;
             return d;
           })
      .def("_enter", [](const Strategy& s) { scopes.push_back(std::make_unique<Strategy::ScopeGuard>(&s)); })
      .def("_exit", [](const Strategy& s) {
        if (scopes.empty() || Strategy::Current() != &s) {
          throw Error(errors::FailedPrecondition("{}.scope() exited out of order", s.name()));
        }
        scopes.pop_back();
      });
  py::class_<OneDeviceStrategy, Strategy, std::shared_ptr<OneDeviceStrategy>>(m, "OneDeviceStrategy")
      .def(py::init<std::string>(), py::arg("device") = "/device:CPU:0");
  py::class_<MirroredStrategy, Strategy, std::shared_ptr<MirroredStrategy>>(m, "MirroredStrategy")
      .def(py::init<std::vector<std::string>, int>(), py::arg("devices"), py::arg("shard_optimizer_state") = 0)
      .def(py::init<int, int>(), py::arg("num_cpu_devices"), py::arg("shard_optimizer_state") = 0);
  py::class_<CentralStorageStrategy, Strategy, std::shared_ptr<CentralStorageStrategy>>(m, "CentralStorageStrategy")
      .def(py::init<std::vector<std::string>, std::string>(), py::arg("compute_devices"),
           py::arg("variable_device") = "/job:localhost/replica:0/task:0/device:CPU:0")
      .def(py::init<int>(), py::arg("num_cpu_devices"));
  py::class_<PipelineStrategy, Strategy, std::shared_ptr<PipelineStrategy>>(m, "PipelineStrategy",
                                                                            "Pipeline parallelism (train/pipeline.h).")
      .def(py::init([](int num_stages, int micro_batches, const std::string& schedule,
                       std::vector<std::string> boundaries, int replicas, std::vector<double> layer_costs) {
             return std::make_shared<PipelineStrategy>(PipelineOptions{.num_stages = num_stages,
                                                                       .micro_batches = micro_batches,
                                                                       .schedule = ParsePipelineSchedule(schedule),
                                                                       .boundaries = std::move(boundaries),
                                                                       .layer_costs = std::move(layer_costs),
                                                                       .replicas = replicas});
           }),
           py::arg("num_stages"), py::arg("micro_batches"), py::arg("schedule") = "gpipe",
           py::arg("boundaries") = std::vector<std::string>{}, py::arg("replicas") = 1,
           py::arg("layer_costs") = std::vector<double>{})
      .def_property_readonly("num_stages", &PipelineStrategy::num_stages)
      .def_property_readonly("replicas", &PipelineStrategy::replicas)
      .def_property_readonly("micro_batches", &PipelineStrategy::micro_batches)
      .def_property_readonly("schedule", [](const PipelineStrategy& p) { return PipelineScheduleName(p.schedule()); })
      .def_property_readonly("bubble_fraction", &PipelineStrategy::bubble_fraction)
      .def("stages_of", [](const PipelineStrategy& p, const Model& m) {
        return p.AssignStages(m.layers(), m.name());
      }, py::arg("model"), "The stage of each of the model's layers (in model.layers order).");
  // The cluster as TF_CONFIG text: TF_CONFIG itself, else the launcher's rank (cluster_resolver.h).
#ifdef WEFT_HAVE_UCX
  // Stage i on task i of the server's cluster (distributed/pipeline_strategy.h); the strategy and
  // its models' sessions share the server (this process's task, the client): Python frees them in
  // any order.
  py::class_<ClusterPipelineStrategy, PipelineStrategy, std::shared_ptr<ClusterPipelineStrategy>>(
      m, "ClusterPipelineStrategy", "Pipeline stages on the tasks of a cluster (distributed/pipeline_strategy.h).")
      .def(py::init([](std::shared_ptr<Server> server, int num_stages, int micro_batches, const std::string& schedule,
                       std::vector<std::string> boundaries, double step_timeout, std::vector<double> layer_costs) {
             DistributedSessionOptions so;
             so.step_timeout = std::chrono::milliseconds(static_cast<int64_t>(step_timeout * 1000));
             py::gil_scoped_release release;
             return std::make_shared<ClusterPipelineStrategy>(
                 std::move(server), PipelineOptions{.num_stages = num_stages, .micro_batches = micro_batches,
                                         .schedule = ParsePipelineSchedule(schedule), .boundaries = std::move(boundaries),
                                         .layer_costs = std::move(layer_costs)},
                 so);
           }),
           py::arg("server"), py::arg("num_stages"), py::arg("micro_batches"), py::arg("schedule") = "gpipe",
           py::arg("boundaries") = std::vector<std::string>{}, py::arg("step_timeout") = 30.0,
           py::arg("layer_costs") = std::vector<double>{})
      .def_property_readonly("stage_tasks", &ClusterPipelineStrategy::stage_tasks);
  m.def("resolve_cluster", [](std::vector<std::string> hosts, std::string hostfile, int base_port) {
        ClusterConfig c = ResolveCluster({.hosts = std::move(hosts), .hostfile = std::move(hostfile),
                                          .base_port = base_port});
        return c.ToTfConfig(c.RequireTask());
      }, py::arg("hosts") = std::vector<std::string>{}, py::arg("hostfile") = "", py::arg("base_port") = 0);
  py::class_<MultiWorkerMirroredStrategy, Strategy, std::shared_ptr<MultiWorkerMirroredStrategy>>(
      m, "MultiWorkerMirroredStrategy")
      .def(py::init([](const std::string& tf_config, int devices_per_worker, double collective_timeout,
                       double connect_timeout, bool insecure, int64_t trace_events, int shard_optimizer_state) {
             MultiWorkerOptions o;
             o.cluster = ClusterConfig::FromTfConfig(tf_config);
             o.secret = ResolveClusterSecret();
             o.secret->insecure = o.secret->insecure || insecure;
             o.devices_per_worker = devices_per_worker;
             o.shard_optimizer_state = shard_optimizer_state;
             o.collective_timeout = std::chrono::milliseconds(static_cast<int64_t>(collective_timeout * 1000));
             o.connect_timeout = std::chrono::milliseconds(static_cast<int64_t>(connect_timeout * 1000));
             WEFT_REQUIRE(trace_events >= 0, "MultiWorkerMirroredStrategy: trace_events must be >= 0, got {}", trace_events);
             o.trace_events = static_cast<size_t>(trace_events);
             py::gil_scoped_release release;  // connecting waits for the other workers
             return std::make_shared<MultiWorkerMirroredStrategy>(o);
           }),
           py::arg("tf_config"), py::arg("devices_per_worker") = 1, py::arg("collective_timeout") = 60.0,
           py::arg("connect_timeout") = 60.0, py::arg("insecure") = false, py::arg("trace_events") = 16384,
           py::arg("shard_optimizer_state") = 0)
      .def_property_readonly("worker_index", &MultiWorkerMirroredStrategy::worker_index)
      .def(
          "shutdown",
          [](MultiWorkerMirroredStrategy& s) {
            py::gil_scoped_release release;
            ThrowIfError(s.Shutdown());
          },
          "Tells the other workers this one is done and waits (bounded) until they all are.")
      .def(
          "dump_trace",
          [](const MultiWorkerMirroredStrategy& s, const std::string& path) {
            py::gil_scoped_release release;
            return s.DumpTrace(path);
          },
          py::arg("path") = "", "Writes the always-on trace ring as Chrome/Perfetto JSON; returns the path.")
      .def_property_readonly("trace_path", &MultiWorkerMirroredStrategy::trace_path)
      .def_property_readonly("task", [](const MultiWorkerMirroredStrategy& s) { return s.task().ToString(); });
#endif
}

}  // namespace weft::python
