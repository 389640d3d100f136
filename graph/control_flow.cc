#include "graph/control_flow.h"

#include <fmt/format.h>

#include <set>

namespace weft {

bool IsEnter(const Node& n) { return n.op() == "Enter"; }
bool IsExit(const Node& n) { return n.op() == "Exit"; }
bool IsNextIteration(const Node& n) { return n.op() == "NextIteration"; }
bool IsMerge(const Node& n) { return n.op() == "Merge"; }
bool IsSwitch(const Node& n) { return n.op() == "Switch"; }
bool IsControlFlow(const Node& n) {
  return IsEnter(n) || IsExit(n) || IsNextIteration(n) || IsMerge(n) || IsSwitch(n) || n.op() == "LoopCond";
}

bool IsRefInput(const Node& n, int i) {
  int k = 0;
  for (const ArgDef& a : n.def().inputs) {
    const int count = a.number_attr.empty() ? 1 : static_cast<int>(n.attr<int64_t>(a.number_attr));
    if (i < k + count) return a.is_ref;
    k += count;
  }
  return false;
}

std::string UniqueFrameName(const Graph& g, const std::string& base) {
  std::set<std::string> used;
  for (const Node* n : g.nodes()) {
    if (IsEnter(*n)) used.insert(n->attr<std::string>("frame_name"));
  }
  std::string name = base;
  for (int i = 1; used.count(name) || g.FindNode(name + "/enter") != nullptr; ++i) name = fmt::format("{}_{}", base, i);
  return name;
}

StaticFrames FindStaticFrames(const std::vector<Node*>& nodes) {
  StaticFrames out;
  out.frames.push_back({});
  std::map<std::pair<int, std::string>, int> children;  // (parent frame, frame_name) -> frame
  std::map<int, int> child_of_enter;                     // Enter id -> its child frame
  // The frame a value of `src` lives in, as seen by its consumers.
  auto frame_after = [&](const Node* src) {
    const int f = out.frame_of.at(src->id());
    if (IsEnter(*src)) return child_of_enter.at(src->id());
    if (IsExit(*src)) return out.frames[static_cast<size_t>(f)].parent;
    return f;
  };
  for (Node* n : TopologicalOrder(nodes)) {  // inputs first (the back edges aside)
    int frame = -1;
    const Node* from = nullptr;
    auto see = [&](const Node* src) {
      if (IsNextIteration(*src) || !out.frame_of.count(src->id())) return;  // back edge, or not in `nodes`
      const int f = frame_after(src);
      if (frame >= 0 && f != frame) {
        auto name = [&](int i) { return i == 0 ? std::string("the root frame") : "frame '" + out.frames[i].name + "'"; };
        throw Error(errors::InvalidArgument(
            "{} takes inputs from two frames: '{}' in {} and '{}' in {} (a value used inside a while_loop must "
            "enter it through an Enter node and leave it through an Exit node)",
            n->Describe(), from->name(), name(frame), src->name(), name(f)));
      }
      if (f < 0) throw Error(errors::InvalidArgument("{} reads Exit '{}' of the root frame", n->Describe(), src->name()));
      frame = f;
      from = src;
    };
    for (int i = 0; i < n->num_inputs(); ++i) {
      if (!IsRefInput(*n, i)) see(n->input(i).node);
    }
    for (const Node* c : n->control_inputs()) see(c);
    if (frame < 0) frame = 0;
    out.frame_of[n->id()] = frame;
    if (IsEnter(*n)) {
      const std::string name = n->attr<std::string>("frame_name");
      auto [it, added] = children.emplace(std::make_pair(frame, name), static_cast<int>(out.frames.size()));
      if (added) {
        StaticFrame f;
        f.name = name;
        f.parent = frame;
        f.parallel_iterations = std::max<int64_t>(1, n->attr<int64_t>("parallel_iterations"));
        out.frames.push_back(std::move(f));
      }
      child_of_enter[n->id()] = it->second;
      out.frames[static_cast<size_t>(it->second)].enters.push_back(n);
    }
    if (IsExit(*n)) {
      if (frame == 0) throw Error(errors::InvalidArgument("{} is not inside a while_loop frame", n->Describe()));
      out.frames[static_cast<size_t>(frame)].exits.push_back(n);
    }
  }
  return out;
}

}  // namespace weft
