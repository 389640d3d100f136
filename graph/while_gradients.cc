#include "graph/while_gradients.h"

#include <fmt/format.h>

#include <algorithm>

#include "ops/array.h"
#include "ops/control.h"
#include "ops/framework.h"
#include "ops/math.h"

namespace weft::internal {

namespace {

// One loop variable of the forward loop: Enter -> Merge -> Switch -> (Exit | body -> NextIteration).
struct LoopVar {
  Node* enter = nullptr;
  Node* merge = nullptr;
  Node* sw = nullptr;
  Node* next = nullptr;
  size_t exit = 0;  // index among the frame's exits
};

Error Unsupported(const StaticFrame& f, const std::string& why) {
  return Error(errors::Unimplemented("gradient of the tf.while_loop '{}': {} (docs/control-flow.md)", f.name, why));
}

// The loop variables, read from the frame's Exits (each reads its Switch's output_false).
std::vector<LoopVar> LoopVars(const StaticFrame& f, Node** loop_cond) {
  std::vector<LoopVar> vars;
  for (size_t e = 0; e < f.exits.size(); ++e) {
    const Output in = f.exits[e]->input(0);
    LoopVar v;
    v.exit = e;
    v.sw = in.node;
    if (!IsSwitch(*v.sw) || in.index != 0 || !IsMerge(*v.sw->input(0).node) || !IsLoopMerge(*v.sw->input(0).node)) {
      throw Unsupported(f, fmt::format("{} does not read a loop variable's Switch (not a loop built by while_loop)",
                                       f.exits[e]->Describe()));
    }
    v.merge = v.sw->input(0).node;
    *loop_cond = v.sw->input(1).node;
    for (const Output& m : v.merge->inputs()) (IsNextIteration(*m.node) ? v.next : v.enter) = m.node;
    if (v.enter == nullptr || !IsEnter(*v.enter) || v.next == nullptr) {
      throw Unsupported(f, fmt::format("{} is not a loop variable's Merge of an Enter and a NextIteration",
                                       v.merge->Describe()));
    }
    vars.push_back(v);
  }
  return vars;
}

}  // namespace

std::vector<std::pair<Output, Output>> WhileLoopGradient(const Scope& scope, const StaticFrames& frames, int frame,
                                                         const std::vector<Output>& dy,
                                                         const std::function<bool(const Output&)>& wanted,
                                                         std::map<const Node*, int>* forward_added) {
  const StaticFrame& sf = frames.frames[static_cast<size_t>(frame)];
  Graph* g = scope.graph();
  auto frame_of = [&](const Node* n) {
    auto it = frames.frame_of.find(n->id());
    return it == frames.frame_of.end() ? -1 : it->second;
  };
  // The frame a value is in, as its consumers see it (an Enter's is its loop's, an Exit's the parent).
  std::map<const Node*, int> entering;
  for (size_t c = 1; c < frames.frames.size(); ++c) {
    for (const Node* e : frames.frames[c].enters) entering[e] = static_cast<int>(c);
  }
  auto value_frame = [&](const Node* n) {
    if (entering.count(n)) return entering.at(n);
    if (forward_added->count(n)) return forward_added->at(n);
    const int f = frame_of(n);
    return IsExit(*n) && f > 0 ? frames.frames[static_cast<size_t>(f)].parent : f;
  };
  auto inside = [&](int f) {  // `frame` or a loop inside it
    while (f > 0 && f != frame) f = frames.frames[static_cast<size_t>(f)].parent;
    return f == frame;
  };
  Node* lc = nullptr;
  const std::vector<LoopVar> vars = LoopVars(sf, &lc);
  std::set<const Node*> loop_nodes;  // the forward loop's Merges and NextIterations
  for (const LoopVar& v : vars) loop_nodes.insert({v.merge, v.next});
  // With a cond in the body, a value of a branch not taken is dead: nothing is pushed, and its pop
  // is dead too, in the backward branch that is not taken either.
  const std::vector<Node*> all = g->nodes();
  const bool has_cond = std::any_of(all.begin(), all.end(), [&](const Node* n) {
    return frame_of(n) == frame && IsSwitch(*n) && std::none_of(vars.begin(), vars.end(), [&](const LoopVar& v) {
             return v.sw == n;
           });
  });
  std::vector<const LoopVar*> grad_vars;  // the floating loop variables
  for (const LoopVar& v : vars) {
    if (IsFloating(v.merge->output_dtype(0))) grad_vars.push_back(&v);
  }
  if (grad_vars.empty()) return {};
  const std::string& device = sf.exits.front()->requested_device();
  const Scope s = device.empty() ? scope : scope.WithDevice(device);
  const int64_t parallel = sf.parallel_iterations;

  // The forward loop's iteration counter k: 0, 1, ...; its Exit is the number of iterations.
  // In a loop's body, the nodes made here without inputs (the counter's start, the stacks) run
  // once per iteration of the parent loop: a control input from a value entering this loop.
  const Scope fs = s.NewSubScope(sf.name + "_count");
  const Scope parent =
      sf.parent == 0 ? fs : fs.WithControlDependencies(std::vector<Node*>{vars.front().enter->input(0).node});
  const Output zero = ops::Const(parent.WithOpName("zero"), 0);
  const int first_forward = zero.node->id();  // node ids only grow
  Output k0 = fs.WithOpName("enter").Op("Enter", {zero},
                                        {{"frame_name", sf.name}, {"parallel_iterations", parallel}});
  Node* k_merge = ops::Merge(fs.WithOpName("merge"), {k0, k0}).output.node;
  const ops::SwitchOutputs k_sw = ops::Switch(fs.WithOpName("switch"), Output(k_merge, 0), Output(lc, 0));
  const Output count = fs.WithOpName("exit").Op("Exit", {k_sw.output_false});
  const Output k = ops::Identity(fs.WithOpName("k"), k_sw.output_true);
  const Output one = ops::Const(fs.WithOpName("one").WithControlDependencies(std::vector<Output>{k}), 1);
  const Output k_next = ops::Add(fs.WithOpName("k_next"), k, one);
  g->UpdateInput(k_merge, 1, fs.WithOpName("next_iteration").Op("NextIteration", {k_next}));
  for (Node* node : g->nodes()) {
    if (node->id() >= first_forward) (*forward_added)[node] = frame;
  }
  (*forward_added)[zero.node] = (*forward_added)[count.node] = sf.parent;

  // The backward loop's variables: the count n, then the gradient of each floating loop variable,
  // then the sum of the gradients of each wanted floating captured tensor.
  const std::string bframe = UniqueFrameName(*g, scope.prefix() + sf.name + "_grad");
  const Scope bs = s.NewSubScope(bframe.substr(scope.prefix().size()));
  std::vector<Output> init{count};
  for (const LoopVar* v : grad_vars) {
    init.push_back(dy[v->exit].valid() ? dy[v->exit] : ops::ZerosLike(bs, Output(sf.exits[v->exit], 0)));
  }
  std::vector<Node*> captured;
  for (Node* e : sf.enters) {
    if (e->attr<bool>("is_constant") && IsFloating(e->output_dtype(0)) && wanted(e->input(0))) {
      captured.push_back(e);
      init.push_back(ops::ZerosLike(bs, e->input(0)));
    }
  }
  auto enter_b = [&](Output x, bool invariant) {
    return bs.WithOpName("enter").Op("Enter", {x}, {{"frame_name", bframe}, {"is_constant", invariant},
                                                    {"parallel_iterations", parallel}});
  };
  // Each Merge takes the shape its variable keeps through the iterations (the forward variable's
  // invariant: a gradient may change shape as the value did): a stand-in of that shape is its
  // second input until the NextIteration exists.
  std::vector<TensorShape> invariant{TensorShape{}};
  for (const LoopVar* v : grad_vars) invariant.push_back(v->merge->output_shape(0));
  for (const Node* e : captured) invariant.push_back(e->output_shape(0));
  std::vector<Node*> merges, stand_ins;
  for (size_t i = 0; i < init.size(); ++i) {
    stand_ins.push_back(ops::Placeholder(bs.WithOpName("invariant"), init[i].dtype(), invariant[i]).node);
    const Output enter = enter_b(init[i], false);
    merges.push_back(ops::Merge(bs.WithOpName("merge"), {enter, Output(stand_ins[i], 0)}).output.node);
  }
  const Output n(merges[0], 0);
  const Output none_left = ops::Const(bs.WithOpName("zero").WithControlDependencies(std::vector<Output>{n}), 0);
  const Output more = ops::Greater(bs.WithOpName("more"), n, none_left);
  const Output blc = bs.WithOpName("loop_cond").Op("LoopCond", {more});
  std::vector<Output> exits, in;
  for (Node* m : merges) {
    const ops::SwitchOutputs sw = ops::Switch(bs.WithOpName("switch"), Output(m, 0), blc);
    exits.push_back(bs.WithOpName("exit").Op("Exit", {sw.output_false}));
    in.push_back(ops::Identity(bs.WithOpName("identity"), sw.output_true));
  }
  const Output step = ops::Const(bs.WithOpName("one").WithControlDependencies(std::vector<Output>{in[0]}), 1);
  const Output index = ops::Sub(bs.WithOpName("index"), in[0], step);  // the forward iteration to undo
  const int first_new = index.node->id() + 1;  // node ids only grow

  // One forward iteration's gradient, over the forward body's nodes.
  LoopBody body{.frames = &frames, .frame = frame, .nodes = {}, .forward_added = forward_added};
  for (Node* node : g->nodes()) {
    if (frame_of(node) >= 0 && inside(value_frame(node)) && !loop_nodes.count(node)) body.nodes.insert(node);
  }
  body.nodes.insert(captured.begin(), captured.end());
  std::vector<Output> ys, xs, grad_ys;
  for (size_t j = 0; j < grad_vars.size(); ++j) {
    ys.push_back(grad_vars[j]->next->input(0));
    xs.emplace_back(grad_vars[j]->sw, 1);
    grad_ys.push_back(in[1 + j]);
  }
  for (Node* e : captured) xs.emplace_back(e, 0);
  const std::vector<Output> d = GradientsWithin(bs.NewSubScope("body"), ys, xs, grad_ys, &body);

  // Move the new nodes into the backward frame: a forward body value becomes a pop of what the
  // forward iteration pushed, a captured tensor (or any outside value) enters as an invariant.
  std::map<Output, Output> routed;
  std::function<Output(Output)> route = [&](Output x) -> Output {
    Output& r = routed[x];
    if (r.valid()) return r;
    const int f = value_frame(x.node);
    if (std::find(sf.enters.begin(), sf.enters.end(), x.node) != sf.enters.end()) {
      r = route(x.node->input(0));  // a captured tensor: its value outside
    } else if (f == frame) {
      const Output stack = ops::LoopStack(parent.WithOpName("stack"));
      const Output fwd_stack = fs.WithOpName("enter_stack").Op(
          "Enter", {stack}, {{"frame_name", sf.name}, {"is_constant", true}, {"parallel_iterations", parallel}});
      Node* push = ops::LoopStackPush(fs.WithOpName("push"), fwd_stack, k, x).node;
      g->AddControlEdge(push, k_next.node);  // the count goes on once the iteration's values are kept
      (*forward_added)[stack.node] = sf.parent;
      (*forward_added)[fwd_stack.node] = (*forward_added)[push] = frame;
      r = ops::LoopStackPop(bs.WithOpName("pop"), enter_b(stack, true), index, x.dtype(), x.shape(), has_cond);
    } else if (f == sf.parent) {
      r = enter_b(x, true);
    } else {
      throw Error(errors::Internal("gradient of the tf.while_loop '{}' reads '{}' of another loop", sf.name, x.name()));
    }
    return r;
  };
  auto is_forward = [&](const Output& x) {
    return (x.node->id() < first_new && frame_of(x.node) >= 0) || forward_added->count(x.node) > 0;
  };
  std::vector<Node*> added;
  for (Node* node : g->nodes()) {
    if (node->id() >= first_new && !forward_added->count(node)) added.push_back(node);
  }
  for (Node*& node : added) {
    // A gradient that reads only a forward value's shape (a broadcast's, with unknown dims): the
    // forward iteration pushes the shape, not the value.
    const bool only_uses = std::all_of(node->out_edges().begin(), node->out_edges().end(),
                                       [](const std::pair<Node*, int>& e) { return e.second >= 0; });
    if (node->op() == "Shape" && is_forward(node->input(0)) && value_frame(node->input(0).node) == frame &&
        only_uses) {
      const Output shape = fs.WithOpName("shape").Op("Shape", {node->input(0)}, node->attrs());
      (*forward_added)[shape.node] = frame;
      g->ReplaceUses(Output(node, 0), route(shape));
      g->RemoveNode(node);
      node = nullptr;
    }
  }
  for (Node* node : added) {
    if (node == nullptr) continue;
    for (int i = 0; i < node->num_inputs(); ++i) {
      if (is_forward(node->input(i))) g->UpdateInput(node, i, route(node->input(i)));
    }
    if (node->num_inputs() == 0 && node->control_inputs().empty()) g->AddControlEdge(in[0].node, node);
  }

  std::vector<Output> next{index};
  for (size_t j = 0; j < grad_vars.size(); ++j) {
    next.push_back(d[j].valid() ? d[j] : ops::ZerosLike(bs, in[1 + j]));
  }
  for (size_t c = 0; c < captured.size(); ++c) {
    const Output sum = in[1 + grad_vars.size() + c];
    const Output dc = d[grad_vars.size() + c];
    next.push_back(dc.valid() ? ops::Add(bs.WithOpName("accumulate"), sum, dc) : sum);
  }
  for (size_t i = 0; i < merges.size(); ++i) {
    g->UpdateInput(merges[i], 1, bs.WithOpName("next_iteration").Op("NextIteration", {next[i]}));
    g->RemoveNode(stand_ins[i]);
  }

  std::vector<std::pair<Output, Output>> out;
  for (size_t j = 0; j < grad_vars.size(); ++j) {
    const Output x = grad_vars[j]->enter->input(0);
    if (wanted(x)) out.emplace_back(x, exits[1 + j]);
  }
  for (size_t c = 0; c < captured.size(); ++c) out.emplace_back(captured[c]->input(0), exits[1 + grad_vars.size() + c]);
  return out;
}

}  // namespace weft::internal
