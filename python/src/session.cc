// weft.Session: runs a graph from Python. Feeds and fetches are numpy arrays (zero-copy where the
// dtype and layout allow); the GIL is released while the step runs and Ctrl-C cancels it.
#include "core/gpu.h"
#include "graph/session.h"

#include "common.h"

namespace weft::python {
namespace {

struct PySession {
  py::object graph;  // keeps the graph alive while the session runs it
  std::unique_ptr<Session> session;

  Session& get() {
    if (!session) throw Error(errors::FailedPrecondition("the session is closed"));
    return *session;
  }
};

}  // namespace

void InitSession(py::module_& m) {
  py::class_<PySession>(m, "Session", "Runs a graph (graph/session.h).")
      .def(py::init([](py::object graph, int inter_op_threads, int intra_op_threads, bool constant_folding, bool cse,
                       int num_cpu_devices, bool soft_placement, py::object server, int64_t step_timeout_ms,
                       bool use_gpus, int64_t device_memory_limit) {
             WEFT_REQUIRE(num_cpu_devices >= 1, "Session: num_cpu_devices must be at least 1, got {}", num_cpu_devices);
             SessionOptions o;
             o.num_cpu_devices = num_cpu_devices;
             o.soft_placement = soft_placement;
             o.use_gpus = use_gpus;
             o.device_memory_limit = device_memory_limit;
             if (!server.is_none()) {
#ifdef WEFT_HAVE_UCX
               o.remote = RemoteRunnerFor(server, step_timeout_ms);
#else
               throw Error(errors::Unimplemented("Session(target=...): this build has no UCX"));
#endif
             }
             o.inter_op_threads = inter_op_threads;
             o.intra_op_threads = intra_op_threads;
             o.constant_folding = constant_folding;
             o.cse = cse;
             Graph* g = graph.cast<Graph*>();
             return PySession{graph, std::make_unique<Session>(g, o)};
           }),
           py::arg("graph"), py::arg("inter_op_threads") = 0, py::arg("intra_op_threads") = 0,
           py::arg("constant_folding") = true, py::arg("cse") = true, py::arg("num_cpu_devices") = 1,
           py::arg("soft_placement") = true, py::arg("server") = py::none(), py::arg("step_timeout_ms") = 30000,
           py::arg("use_gpus") = true, py::arg("device_memory_limit") = 0,
           "A session over `graph` on CPU:0 .. CPU:num_cpu_devices-1 and every GPU found (use_gpus); 0 threads means one per "
           "hardware thread. soft_placement: an op pinned to a device that cannot run it (no such device, no kernel "
           "there) runs elsewhere instead of failing. With `server` (a weft.distribute.Server of this process), "
           "steps run over its cluster.")
      .def_property_readonly("graph", [](const PySession& s) { return s.graph; })
      .def("_run",
           [](PySession& self, const std::vector<std::pair<PyTensor, py::object>>& feeds,
              const std::vector<PyTensor>& fetches, const std::vector<PyOperation>& targets, int64_t timeout_ms) {
             Session& sess = self.get();
             Graph* g = self.graph.cast<Graph*>();
             std::vector<std::pair<Output, Tensor>> feed_tensors;
             feed_tensors.reserve(feeds.size());
             for (const auto& [t, value] : feeds) {
               WEFT_REQUIRE(t.graph.cast<Graph*>() == g, "feed {} is a tensor of another graph", t.out.name());
               try {
                 feed_tensors.emplace_back(t.out, NumpyToTensor(value, t.out.dtype()));
               } catch (const Error& e) {  // a Python value the placeholder's dtype cannot hold
                 throw Error(e.status().WithContext("feed " + t.out.name()));
               }
             }
             std::vector<Output> fetch_outputs;
             for (const PyTensor& t : fetches) {
               WEFT_REQUIRE(t.graph.cast<Graph*>() == g, "fetch {} is a tensor of another graph", t.out.name());
               fetch_outputs.push_back(t.out);
             }
             std::vector<Node*> target_nodes;
             for (const PyOperation& o : targets) {
               WEFT_REQUIRE(o.graph.cast<Graph*>() == g, "target {} is an operation of another graph", o.node->name());
               target_nodes.push_back(o.node);
             }
             std::vector<Tensor> out = RunInterruptible(
                 [&] {
                   return sess.Run(feed_tensors, fetch_outputs, target_nodes,
                                   RunOptions{.timeout = std::chrono::milliseconds(std::max<int64_t>(timeout_ms, 0))});
                 },
                 [&] { sess.Cancel(); });
             feed_tensors.clear();  // the fed arrays' buffers are no longer shared with the results
             py::list result;
             for (Tensor& t : out) result.append(TensorToNumpy(std::exchange(t, Tensor())));
             return result;
           },
           py::arg("feeds"), py::arg("fetches"), py::arg("targets"), py::arg("timeout_ms") = 0,
           "Runs one step; timeout_ms > 0 bounds it (DeadlineExceededError naming what it still waited for).")
      .def("_placement",
           [](PySession& self, const std::vector<PyTensor>& feeds, const std::vector<PyTensor>& fetches,
              const std::vector<PyOperation>& targets) {
             // (node, op, device) of every node the signature's partitions run, _Send/_Recv excepted:
             // what ConfigProto(log_device_placement=True) prints. Empty for a remote session.
             std::vector<Output> f, o;
             std::vector<Node*> t;
             for (const PyTensor& x : feeds) f.push_back(x.out);
             for (const PyTensor& x : fetches) o.push_back(x.out);
             for (const PyOperation& x : targets) t.push_back(x.node);
             std::vector<std::tuple<std::string, std::string, std::string>> out;
             for (const auto& [device, g] : self.get().Partitions(f, o, t)) {
               for (const Node* n : g->nodes()) {
                 if (n != nullptr && n->op() != "_Send" && n->op() != "_Recv") out.emplace_back(n->name(), n->op(), device);
               }
             }
             return out;
           },
           py::arg("feeds"), py::arg("fetches"), py::arg("targets"))
      .def("cancel", [](PySession& self) { self.get().Cancel(); }, "Cancels the running steps (they fail with CancelledError).")
      .def("close", [](PySession& self) { self.session.reset(); }, "Frees the session's variables and compiled steps.")
      .def_property_readonly("closed", [](const PySession& s) { return !s.session; })
      .def_property_readonly("devices", [](PySession& s) { return s.get().devices().ShortNames(); },
                             "The session's devices: \"CPU:0\", or \"CPU:0, GPU:0\" with a GPU.")
      .def_property_readonly("num_compiled", [](PySession& s) { return s.get().num_compiled(); },
                             "Distinct (feeds, fetches, targets) signatures compiled so far.");
  m.def("gpu_info", [] {
        const GpuProbe& p = ProbeGpus();
        py::dict d;
        d["count"] = p.count;
        d["reason"] = p.reason;
        d["names"] = p.names;
        d["unusable"] = p.unusable;  // "GPU ordinal i: <why>" per device CUDA lists but weft could not open
#ifdef WEFT_CUDA
        d["built_with_cuda"] = true;
#else
        d["built_with_cuda"] = false;
#endif
        return d;
      },
      "The GPUs weft found: {'count': n, 'reason': why none (CUDA's words), 'names': [...], 'built_with_cuda': bool} "
        "(docs/cuda.md).");
}

}  // namespace weft::python
