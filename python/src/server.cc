// weft.distribute.Server (distributed/server/server.h), built when UCX is found: a task's server,
// `join()` for ps tasks, and the remote runner a weft.Session(target=server.target) uses.
#include "distributed/cluster_resolver.h"
#include "distributed/distributed_session.h"
#include "distributed/server/server.h"

#include "common.h"

namespace weft::python {
namespace {

// Destroying a Server joins its threads, and one of them may be dropping the last reference to a
// numpy-backed tensor, which takes the GIL (tensors.cc): holding the GIL while joining would
// deadlock, so the destructor runs with it released when the caller holds it.
struct DeleteWithoutGil {
  void operator()(Server* s) const {
    if (PyGILState_Check()) {
      py::gil_scoped_release release;
      delete s;
    } else {
      delete s;
    }
  }
};

}  // namespace

void InitServer(py::module_& m) {
  py::class_<Server, std::shared_ptr<Server>>(m, "Server", "A task's server (distributed/server/server.h).")
      .def(py::init([](const std::string& cluster_json, const std::string& job, int index, int num_cpu_devices,
                       int threads, bool insecure) {
             ServerOptions o;
             // The secret from where TF_CONFIG comes from (the environment; docs/security.md).
             const ClusterSecret secret = ResolveClusterSecret();
             o.transport.cluster_secret = secret.secret;
             o.transport.insecure = secret.insecure || insecure;
             o.num_cpu_devices = num_cpu_devices;
             o.intra_op_threads = threads;
             o.inter_op_threads = threads;
             return std::shared_ptr<Server>(new Server(ClusterSpec::FromJson(cluster_json), TaskId{job, index}, o),
                                            DeleteWithoutGil{});
           }),
           py::arg("cluster_json"), py::arg("job_name"), py::arg("task_index"), py::arg("num_cpu_devices") = 1,
           py::arg("threads") = 0, py::arg("insecure") = false)
      .def_property_readonly("target", &Server::target)
      .def_property_readonly("task", [](const Server& s) { return s.task().ToString(); })
      .def_property_readonly("port", [](Server& s) { return s.transport().port(); })
      .def("handshake_stats",
           [](Server& s) {
             const HandshakeStats h = s.transport().handshake_stats();
             return py::dict(py::arg("accepted") = h.accepted, py::arg("dropped") = h.dropped,
                             py::arg("last_drop") = h.last_drop.ok() ? std::string() : h.last_drop.ToString());
           },
           "Inbound connections accepted and dropped by the handshake, and why the last one was dropped.")
      .def("join", [](Server& s) { RunInterruptibleVoid([&] { s.Join(); }, [&] { s.Stop(); }); },
           "Serves until stop() (or Ctrl-C).")
      .def("stop", &Server::Stop, "Makes join() return; the server serves until it is destroyed.");
}

// The SessionOptions::remote of a weft.Session(target=...): a DistributedSession over `server`.
std::function<std::unique_ptr<RemoteRunner>(Graph*)> RemoteRunnerFor(py::object server, int64_t step_timeout_ms) {
  std::shared_ptr<Server> s = server.cast<std::shared_ptr<Server>>();
  return [s, step_timeout_ms](Graph* g) -> std::unique_ptr<RemoteRunner> {
    DistributedSessionOptions o;
    o.step_timeout = std::chrono::milliseconds(step_timeout_ms);
    return std::make_unique<DistributedSession>(g, s.get(), o);
  };
}

}  // namespace weft::python
