#include "graph/partition.h"

#include <functional>
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

  // A loop spread over devices (graph/placer.h): a _Recv of a value inside a loop's frame runs
  // in that frame, once per iteration, on a control loop of that frame on its device (below).
  const StaticFrames frames = FindStaticFrames(graph.nodes());
  std::map<const Node*, int> entering;  // Enter -> the frame it enters
  for (size_t f = 1; f < frames.frames.size(); ++f) {
    for (const Node* e : frames.frames[f].enters) entering[e] = static_cast<int>(f);
  }
  auto value_frame = [&](const Node* src) {  // the frame src's outputs are in (as its consumers see them)
    if (entering.count(src)) return entering.at(src);
    const int f = frames.frame_of.at(src->id());
    return IsExit(*src) ? frames.frames[static_cast<size_t>(f)].parent : f;
  };
  std::vector<std::pair<Node*, int>> framed_recvs;  // (_Recv, frame > 0)

  // A loop's back edges (NextIteration -> Merge), set once the NextIteration is copied: (Merge's
  // copy, its graph, input, original). A NextIteration is on its Merge's device.
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
        if (value_frame(in.node) > 0) framed_recvs.emplace_back(r, value_frame(in.node));
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
        if (value_frame(c) > 0) framed_recvs.emplace_back(r, value_frame(c));
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

  // TF's control loops: on a device that runs part of loop frame f, Enter(a constant) -> Merge ->
  // Switch(the loop's LoopCond, received from its device) -> Identity -> NextIteration -> Merge
  // iterates exactly as the loop does; each _Recv of a value of f on that device takes a control
  // edge from the Merge, so it runs in f once per iteration (the last one included: it receives
  // the dead values the other side sends) and its rendezvous key carries f's frame:iter.
  std::map<int, const Node*> loop_cond;
  for (const Node* n : graph.nodes()) {
    if (n->op() == "LoopCond") loop_cond[frames.frame_of.at(n->id())] = n;
  }
  std::map<std::pair<int, std::string>, std::pair<Node*, Node*>> control_loops;  // (frame, device) -> (merge, pivot)
  std::function<std::pair<Node*, Node*>(int, const Device&)> control_loop = [&](int f, const Device& d) {
    auto found = control_loops.find({f, d.name()});
    if (found != control_loops.end()) return found->second;
    const StaticFrame& sf = frames.frames[static_cast<size_t>(f)];
    auto lc = loop_cond.find(f);
    if (lc == loop_cond.end()) {
      throw Error(errors::InvalidArgument("the while loop '{}' runs on several devices but has no LoopCond", sf.name));
    }
    const Device& cond_device = DeviceOf(*lc->second, devices);
    Graph& g = part(d);
    const std::string base = "_control_loop/" + NameSafe(sf.name);
    auto add = [&](const std::string& name, const std::string& op, std::vector<Output> inputs, AttrMap attrs,
                   std::vector<Node*> controls = {}) {
      NodeSpec spec{.name = g.UniqueName(base + "/" + name), .op = op, .inputs = std::move(inputs),
                    .control_inputs = std::move(controls), .attrs = std::move(attrs), .device = d.name()};
      Node* node = g.AddNode(std::move(spec));
      node->set_assigned_device(d.name());
      return node;
    };
    std::vector<Node*> in_parent;  // the start runs once per iteration of the parent loop
    if (sf.parent > 0) in_parent.push_back(control_loop(sf.parent, d).second);
    Node* start = add("start", "Const", {}, {{"dtype", DType::kFloat32}, {"value", Tensor::Scalar<float>(0.0f)}},
                      in_parent);
    Node* enter = add("enter", "Enter", {Output(start, 0)},
                      {{"frame_name", sf.name}, {"parallel_iterations", sf.parallel_iterations}});
    Node* merge = add("merge", "Merge", {Output(enter, 0), Output(enter, 0)}, {{"N", int64_t{2}}});
    Output pred(copy.at(lc->second), 0);
    if (&cond_device != &d) {
      Node* r = add_pair(cond_device, d, pred, lc->second->name() + ":0/_loop_cond", DType::kBool, TensorShape{}, true);
      g.AddControlEdge(merge, r);
      pred = Output(r, 0);
    }
    Node* sw = add("switch", "Switch", {Output(merge, 0), pred}, {});
    Node* pivot = add("pivot", "Identity", {Output(sw, 1)}, {});
    g.UpdateInput(merge, 1, Output(add("next_iteration", "NextIteration", {Output(pivot, 0)}, {}), 0));
    return control_loops[{f, d.name()}] = {merge, pivot};
  };
  for (const auto& [recv, f] : framed_recvs) {
    const Device& d = DeviceOf(*recv, devices);
    part(d).AddControlEdge(control_loop(f, d).first, recv);
  }
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
