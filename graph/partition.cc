#include "graph/partition.h"

#include <tuple>

#include "graph/control_flow.h"
#include "runtime/rendezvous.h"
#include "ops/framework.h"

namespace weft {
namespace {

// "CPU_1" from ".../device:CPU:1", for node names.
std::string ShortDevice(const Device& d) { return d.type() + "_" + std::to_string(*d.parsed_name().id); }

std::string NameSafe(std::string s) {
  for (char& c : s) {
    if (c == ':') c = '_';
  }
  return s;
}

const Device& DeviceOf(const Node& n, const DeviceSet& devices) {
  const Device* d = n.assigned_device().empty() ? nullptr : devices.Find(n.assigned_device());
  if (d == nullptr) {
    throw Error(errors::Internal("{} has no (known) assigned device '{}': place the graph before partitioning",
                                 n.Describe(), n.assigned_device()));
  }
  return *d;
}

AttrMap PairAttrs(const Device& src, const Device& dst, const std::string& tensor_name, bool host_memory) {
  return {{"tensor_name", tensor_name},
          {"send_device", src.name()},
          {"send_device_incarnation", static_cast<int64_t>(src.incarnation())},
          {"recv_device", dst.name()},
          {"_host_memory", host_memory}};
}

// Tensors that stay in host memory whatever the device (TF's convention, which the GPU backend
// follows): int32 values (shapes, indices, sizes) and the step's fetches (_Retval reads them on
// the host). Marked on the pair so a device transport knows no device copy is wanted.
bool HostMemory(DType dtype, const Node& consumer) {
  return dtype == DType::kInt32 || dtype == DType::kInt64 || consumer.op() == "_Retval";
}

}  // namespace

std::map<std::string, std::unique_ptr<Graph>> Partition(const Graph& graph, const DeviceSet& devices) {
  std::map<std::string, std::unique_ptr<Graph>> parts;
  auto part = [&](const Device& d) -> Graph& {
    auto& g = parts[d.name()];
    if (!g) {
      g = std::make_unique<Graph>();
      g->set_seed(graph.seed());
    }
    return *g;
  };
  std::map<const Node*, Node*> copy;            // original -> its copy in its device's graph
  std::map<std::pair<Output, std::string>, Output> recvs;  // (tensor, dst device) -> _Recv output
  std::map<std::pair<const Node*, std::string>, Node*> control_recvs;

  auto add_pair = [&](const Device& src, const Device& dst, Output src_value, const std::string& tensor_name,
                      DType dtype, const TensorShape& shape, bool host_memory) {
    const std::string base = NameSafe(tensor_name) + "/to_" + ShortDevice(dst);
    Graph& gs = part(src);
    NodeSpec send;
    send.name = gs.UniqueName("_send/" + base);
    send.op = "_Send";
    send.inputs = {src_value};
    send.attrs = PairAttrs(src, dst, tensor_name, host_memory);
    send.device = src.name();
    gs.AddNode(std::move(send))->set_assigned_device(src.name());
    Graph& gd = part(dst);
    NodeSpec recv;
    recv.name = gd.UniqueName("_recv/" + NameSafe(tensor_name) + "/from_" + ShortDevice(src));
    recv.op = "_Recv";
    recv.attrs = PairAttrs(src, dst, tensor_name, host_memory);
    recv.attrs["tensor_type"] = dtype;
    recv.attrs["shape"] = shape;
    recv.device = dst.name();
    Node* r = gd.AddNode(std::move(recv));
    r->set_assigned_device(dst.name());
    return r;
  };

  // A loop's back edges (NextIteration -> Merge), set once the NextIteration is copied: (Merge's
  // copy, its graph, input, original). A loop is on one device (graph/placer.h).
  std::vector<std::tuple<Node*, Graph*, int, Output>> back_edges;
  for (Node* n : TopologicalOrder(graph.nodes())) {
    const Device& dev = DeviceOf(*n, devices);
    std::vector<Output> inputs;
    for (int i = 0; i < n->num_inputs(); ++i) {
      const Output& in = n->input(i);
      const Device& src = DeviceOf(*in.node, devices);
      if (&src == &dev && IsNextIteration(*in.node) && !copy.count(in.node) && i > 0) {
        back_edges.emplace_back(nullptr, &part(dev), i, in);
        inputs.push_back(inputs[0]);  // a stand-in of the same dtype
        continue;
      }
      if (&src == &dev) {
        inputs.emplace_back(copy.at(in.node), in.index);
        continue;
      }
      auto key = std::make_pair(in, dev.name());
      auto it = recvs.find(key);
      if (it == recvs.end()) {
        Node* r = add_pair(src, dev, Output(copy.at(in.node), in.index), in.name(), in.dtype(), in.shape(),
                           HostMemory(in.dtype(), *n));
        it = recvs.emplace(key, Output(r, 0)).first;
      }
      inputs.push_back(it->second);
    }
    std::vector<Node*> controls;
    for (Node* c : n->control_inputs()) {
      const Device& src = DeviceOf(*c, devices);
      if (&src == &dev) {
        controls.push_back(copy.at(c));
        continue;
      }
      auto key = std::make_pair(static_cast<const Node*>(c), dev.name());
      auto it = control_recvs.find(key);
      if (it == control_recvs.end()) {
        // A dummy scalar that exists once `c` has run carries the control edge.
        Graph& gs = part(src);
        NodeSpec dummy;
        dummy.name = gs.UniqueName("_control/" + c->name());
        dummy.op = "Const";
        dummy.attrs = {{"dtype", DType::kFloat32}, {"value", Tensor::Scalar<float>(0.0f)}};
        dummy.control_inputs = {copy.at(c)};
        dummy.device = src.name();
        Node* d = gs.AddNode(std::move(dummy));
        d->set_assigned_device(src.name());
        Node* r = add_pair(src, dev, Output(d, 0), c->name() + "/_control", DType::kFloat32, TensorShape{}, true);
        it = control_recvs.emplace(key, r).first;
      }
      controls.push_back(it->second);
    }
    Node* c = part(dev).CopyNode(*n, std::move(inputs), std::move(controls));
    c->set_assigned_device(dev.name());
    c->set_requested_device(n->requested_device());
    copy[n] = c;
    for (auto& edge : back_edges) {
      if (std::get<0>(edge) == nullptr) std::get<0>(edge) = c;
    }
  }
  for (const auto& [merge, g, i, original] : back_edges) g->UpdateInput(merge, i, Output(copy.at(original.node), original.index));
  return parts;
}

std::vector<SendRecvPair> SendRecvPairs(const std::map<std::string, std::unique_ptr<Graph>>& parts) {
  std::vector<SendRecvPair> pairs;
  for (const auto& [device, g] : parts) {
    for (Node* n : g->nodes()) {
      if (n->op() != "_Send") continue;
      RendezvousKey k;
      k.src_device = n->attr<std::string>("send_device");
      k.src_incarnation = static_cast<uint64_t>(n->attr<int64_t>("send_device_incarnation"));
      k.dst_device = n->attr<std::string>("recv_device");
      k.tensor_name = n->attr<std::string>("tensor_name");
      pairs.push_back({k.src_device, k.dst_device, k.tensor_name, k.ToString(), n->attr<bool>("_host_memory")});
    }
  }
  return pairs;
}

}  // namespace weft
