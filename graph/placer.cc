#include "graph/placer.h"

#include <map>
#include <numeric>

#include "core/gpu.h"
#include "graph/control_flow.h"
#include "ops/kernel.h"

namespace weft {
namespace {

struct UnionFind {
  std::vector<int> parent;
  explicit UnionFind(int n) : parent(static_cast<size_t>(n)) { std::iota(parent.begin(), parent.end(), 0); }
  int Find(int x) {
    while (parent[static_cast<size_t>(x)] != x) x = parent[static_cast<size_t>(x)] = parent[static_cast<size_t>(parent[static_cast<size_t>(x)])];
    return x;
  }
  void Union(int a, int b) {
    a = Find(a);
    b = Find(b);
    if (a != b) parent[static_cast<size_t>(std::max(a, b))] = std::min(a, b);  // the oldest node leads
  }
};

// The nodes whose input `i` is a reference input (a variable's storage).
std::vector<int> RefInputs(const Node& n) {
  std::vector<int> refs;
  int index = 0;
  for (const ArgDef& arg : n.def().inputs) {
    const int count = arg.number_attr.empty() ? 1 : static_cast<int>(n.attr<int64_t>(arg.number_attr));
    if (arg.is_ref) {
      for (int k = 0; k < count; ++k) refs.push_back(index + k);
    }
    index += count;
  }
  return refs;
}

// GPU devices first, then CPU; by index within a type (the order the devices were made in).
std::vector<const Device*> Preferred(const DeviceSet& devices) {
  std::vector<const Device*> out;
  for (const char* type : {"GPU", "CPU"}) {
    for (const auto& d : devices.devices()) {
      if (d->type() == type) out.push_back(d.get());
    }
  }
  for (const auto& d : devices.devices()) {
    if (d->type() != "GPU" && d->type() != "CPU") out.push_back(d.get());
  }
  return out;
}

}  // namespace

void Place(Graph* graph, const DeviceSet& devices, const PlacerOptions& options) {
  const std::vector<Node*> nodes = graph->nodes();
  std::map<const Node*, int> index;
  for (size_t i = 0; i < nodes.size(); ++i) index[nodes[i]] = static_cast<int>(i);
  UnionFind groups(static_cast<int>(nodes.size()));
  for (Node* n : nodes) {
    for (int i : RefInputs(*n)) groups.Union(index[n], index[n->input(i).node]);
    if (n->has_attr("_colocate_with")) {
      const std::string other = n->attr<std::string>("_colocate_with");
      Node* o = graph->FindNode(other);
      WEFT_REQUIRE(o != nullptr, "{}: asked to be colocated with '{}', which is not in the graph", n->Describe(), other);
      groups.Union(index[n], index[o]);
    }
  }
  // A while loop runs on one device: its frame's nodes and its Enter nodes form one group (the
  // partitioner then cuts only edges into and out of the loop, which run in the root frame),
  // unless its nodes ask for different devices: then each node goes where it asks (the others
  // where they would outside a loop), and the partitioner runs the loop on each of its devices
  // with a control loop (graph/partition.h).
  const StaticFrames frames = FindStaticFrames(nodes);
  std::vector<std::vector<Node*>> members_of(frames.frames.size());
  for (Node* n : nodes) members_of[static_cast<size_t>(frames.frame_of.at(n->id()))].push_back(n);
  for (size_t f = 1; f < frames.frames.size(); ++f) {
    std::vector<Node*>& loop = members_of[f];
    loop.insert(loop.end(), frames.frames[f].enters.begin(), frames.frames[f].enters.end());
    DeviceName request;
    bool one_device = true;
    for (const Node* n : loop) {
      if (n->requested_device().empty()) continue;
      try {
        request.MergeFrom(DeviceName::Parse(n->requested_device()));
      } catch (const Error&) {
        one_device = false;
      }
    }
    for (size_t i = 1; one_device && i < loop.size(); ++i) groups.Union(index[loop[0]], index[loop[i]]);
  }
  // Members and merged request per group (leader = smallest index).
  std::map<int, std::vector<Node*>> members;
  for (Node* n : nodes) members[groups.Find(index[n])].push_back(n);
  const std::vector<const Device*> preferred = Preferred(devices);
  const KernelRegistry& kernels = KernelRegistry::Global();

  for (auto& [leader, group] : members) {
    DeviceName request;
    const Node* requester = nullptr;
    for (Node* n : group) {
      if (n->requested_device().empty()) continue;
      const DeviceName want = DeviceName::Parse(n->requested_device());
      try {
        request.MergeFrom(want);
      } catch (const Error&) {
        throw Error(errors::InvalidArgument(
            "cannot colocate {} (on '{}') with {} (on '{}'): they must share a device (a variable and the ops "
            "that update it, the nodes of one while_loop, or an explicit colocation) but ask for different ones",
            n->Describe(), n->requested_device(), requester->Describe(), requester->requested_device()));
      }
      if (requester == nullptr) requester = n;
    }
    auto has_kernels = [&](const Device* d) {
      for (Node* n : group) {
        if (!kernels.HasKernel(*n, d->type())) return false;
      }
      return true;
    };
    const Device* chosen = nullptr;
    for (const Device* d : preferred) {
      if (d->parsed_name().Matches(request) && has_kernels(d)) {
        chosen = d;
        break;
      }
    }
    if (chosen == nullptr && options.soft_placement) {
      for (const Device* d : preferred) {
        if (has_kernels(d)) {
          chosen = d;
          break;
        }
      }
    }
    if (chosen == nullptr) {
      // Name the member that cannot run where asked (or the requester when no device matches).
      const Node* culprit = requester != nullptr ? requester : group.front();
      for (Node* n : group) {
        bool runs = false;
        for (const Device* d : devices.Matching(request)) runs = runs || kernels.HasKernel(*n, d->type());
        if (!runs) {
          culprit = n;
          break;
        }
      }
      // Asking for a GPU on a machine without one: say why there is none (CUDA's reason).
      const bool no_gpu = request.type && *request.type == "GPU" && devices.Matching(request).empty();
      throw Error(errors::InvalidArgument(
          "cannot place {}: requested device '{}'{}; devices: {}; kernels for {}: {}{}", culprit->Describe(),
          request.ToString(), devices.Matching(request).empty() ? " matches no device" : " has no kernel for it",
          devices.ShortNames(), culprit->op(), kernels.KernelsFor(culprit->op()),
          no_gpu ? "; " + NoGpuMessage() : std::string()));
    }
    for (Node* n : group) n->set_assigned_device(chosen->name());
  }
}

}  // namespace weft
