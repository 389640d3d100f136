#include "tests/ops/op_coverage.h"

#include <fmt/format.h>

#include <map>
#include <mutex>

#include "ops/kernel.h"
#include "ops/op_def.h"

namespace weft::test {
namespace {

constexpr unsigned kAllKinds = 15;
constexpr unsigned Bit(Coverage k) { return static_cast<unsigned>(k); }
constexpr unsigned kFwd = Bit(Coverage::kForward), kGrad = Bit(Coverage::kGradient),
                   kBad = Bit(Coverage::kBadInput), kGpu = Bit(Coverage::kGpu);

std::string KindNames(unsigned kinds) {
  std::string out;
  for (auto [bit, name] : {std::pair{kFwd, "forward"}, std::pair{kGrad, "gradient"}, std::pair{kBad, "bad-input"},
                           std::pair{kGpu, "gpu-vs-cpu"}}) {
    if (kinds & bit) out += (out.empty() ? "" : ", ") + std::string(name);
  }
  return out;
}

struct Record {
  std::mutex mu;
  std::map<std::string, unsigned, std::less<>> kinds;
};
Record& Recorded() {
  static Record r;
  return r;
}

// Ops whose tests cannot live in this process, each with the kinds it is excused from, why, and
// the tests that cover it instead. Keep this short: an op that RunOp can run belongs in the op
// tests.
struct Exemption {
  unsigned kinds;
  const char* why;
};
const std::map<std::string, Exemption, std::less<>>& Exemptions() {
  static const std::map<std::string, Exemption, std::less<>> m = {
      {"_Arg", {kAllKinds, "the executor's call-frame input, built by graph functions, not by users; "
                           "tests/graph/executor_test.cc runs it"}},
      {"_Retval", {kAllKinds, "the executor's call-frame output; tests/graph/executor_test.cc runs it"}},
      {"_Send", {kAllKinds, "inserted by the partitioner, needs a rendezvous and a peer _Recv; "
                            "tests/graph/session_test.cc, tests/runtime/rendezvous_test.cc and "
                            "tests/cuda/placer_test.cc run it"}},
      {"_Recv", {kAllKinds, "the partitioner's receiving half of _Send; the same tests run it"}},
      {"CollectiveReduce", {kAllKinds, "needs a group of devices stepping together; "
                                       "tests/runtime/collective_test.cc and tests/cuda/collective_gpu_test.cc"}},
      {"CollectiveBroadcast", {kAllKinds, "needs a group of devices; tests/runtime/collective_test.cc"}},
      {"CollectiveAllGather", {kAllKinds, "needs a group of devices; tests/runtime/collective_test.cc"}},
      {"CollectiveReduceScatter", {kAllKinds, "needs a group of devices; tests/runtime/collective_test.cc"}},
      // Gradient only: these ops never meet Gradients(). The fusion pass (graph/passes.cc) makes
      // them inside the compiled graph, after every gradient graph was built.
      {"_MaxPoolGradRelu", {kGrad, "made by the fusion pass from a gradient graph, after differentiation"}},
      {"_MaxPoolGradWithArgmax", {kGrad, "made by the fusion pass from a gradient graph, after differentiation"}},
      {"_ConvPoolBackpropFilterBias", {kGrad, "made by the fusion pass from a gradient graph, after differentiation"}},
      {"_Conv2DBackpropFilterBias", {kGrad, "made by the fusion pass from a gradient graph, after differentiation"}},
      {"Variable", {kGpu, "names storage and computes nothing; the GPU comparisons of Assign*, Apply* create, "
                          "write and read a GPU Variable"}},
      // TF registers no gradient for its training ops, and declares none NotDifferentiable either:
      // an update's output is the variable after the step, not something a loss depends on.
      {"ApplyGradientDescent", {kGrad, "a training update: TF defines no gradient for it"}},
      {"ApplyMomentum", {kGrad, "a training update: TF defines no gradient for it"}},
      {"ApplyAdam", {kGrad, "a training update: TF defines no gradient for it"}},
      // A lone Switch has a dead output and a lone Merge's gradient is dead for the input not
      // taken: fetching a dead tensor is an error, so their gradients are checked by finite
      // differences through ops::Cond (tests/graph/control_flow_test.cc).
      {"Switch", {kGrad, "a dead output cannot be fetched; tests/graph/control_flow_test.cc checks Cond's gradient"}},
      {"Merge", {kGrad, "a dead gradient cannot be fetched; tests/graph/control_flow_test.cc checks Cond's gradient"}},
      // A loop is differentiated as a whole (graph/while_gradients.h: the backward loop with stacks),
      // never one of its nodes alone.
      {"Enter", {kGrad, "differentiated with its whole loop; tests/graph/while_gradients_test.cc checks loops"}},
      {"Exit", {kGrad, "differentiated with its whole loop; tests/graph/while_gradients_test.cc checks loops"}},
      {"NextIteration", {kGrad, "differentiated with its whole loop; tests/graph/while_gradients_test.cc checks loops"}},
      {"LoopStack", {kFwd, "its output is an opaque handle; the LoopStackPush / LoopStackPop tests use it"}},
      // The recurrent gradient ops (ops/rnn.cc): TF defines no gradient for BlockLSTMGrad or the
      // cuDNN RNN backprop either; tests/ops/rnn_test.cc checks their outputs against finite
      // differences of the reference.
      {"LSTMSequenceGrad", {kGrad, "second order of a fused RNN: TF defines no gradient for BlockLSTMGrad"}},
      {"GRUSequenceGrad", {kGrad, "second order of a fused RNN: TF defines no gradient for BlockLSTMGrad"}},
      {"SimpleRNNSequenceGrad", {kGrad, "second order of a fused RNN: TF defines no gradient for BlockLSTMGrad"}},
      // Flash attention's backward is not differentiated again (nor is TF's or PyTorch's fused
      // attention backward); tests/ops/attention_test.cc checks its outputs by finite differences.
      {"FusedCausalAttentionGrad", {kGrad, "second order of fused attention: PyTorch's flash backward has none"}},
  };
  return m;
}

// Gaps the op tests have not closed yet, op -> the kinds still missing. The check fails on any
// gap not listed here and on a listed gap that has been covered, so this list can only shrink.
const std::map<std::string, unsigned, std::less<>>& KnownGaps() {
  static const std::map<std::string, unsigned, std::less<>> kKnownGaps = {
      // Draws a new mask every run, so finite differences over several runs disagree; random_test.cc
      // checks dx = dy * mask of the same step by hand. Wants a CheckGradient that fixes the mask.
      {"Dropout", kGrad},
      // TF differentiates these (second order: FusedBatchNormGradGrad, MaxPoolGradGrad,
      // Relu6GradGrad); weft has no gradient for them yet.
      {"FusedBatchNormGrad", kGrad},
      {"LayerNormGrad", kGrad},
      {"_FusedBatchNormGradRelu", kGrad},
      {"MaxPoolGrad", kGrad},
      {"Relu6Grad", kGrad},
  };
  return kKnownGaps;
}

}  // namespace

void NoteCoverage(std::string_view op, Coverage kind) {
  Record& r = Recorded();
  std::lock_guard<std::mutex> lock(r.mu);
  auto it = r.kinds.find(op);
  if (it == r.kinds.end()) it = r.kinds.emplace(std::string(op), 0u).first;
  it->second |= Bit(kind);
}

std::vector<std::string> OpCoverageProblems() {
  const OpRegistry& ops = OpRegistry::Global();
  std::map<std::string, unsigned, std::less<>> covered;
  {
    Record& r = Recorded();
    std::lock_guard<std::mutex> lock(r.mu);
    covered = r.kinds;
  }
  std::vector<std::string> problems;
  for (const std::string& name : ops.OpNames()) {
    const OpDef& def = ops.Lookup(name);
    unsigned needed = kFwd | kBad;
    if (!def.no_gradient && !def.inputs.empty()) needed |= kGrad;
#ifdef WEFT_CUDA
    // Without the CUDA backend no GPU device can exist, so there is nothing to compare with (Rank
    // and Size keep their host-memory GPU kernels in every build).
    if (KernelRegistry::Global().KernelsFor(name).find("GPU") != std::string::npos) needed |= kGpu;
#endif
    if (auto e = Exemptions().find(name); e != Exemptions().end()) needed &= ~e->second.kinds;
    const auto c = covered.find(name);
    const unsigned missing = needed & ~(c == covered.end() ? 0u : c->second);
    const auto g = KnownGaps().find(name);
    const unsigned listed = g == KnownGaps().end() ? 0u : g->second;
    if (missing & ~listed) {
      problems.push_back(fmt::format("{}: no {} test{}", name, KindNames(missing & ~listed),
                                     def.no_gradient || !(missing & kGrad) ? "" : " (or NoGradient() where TF declares it)"));
    }
    if (listed & ~missing) {
      problems.push_back(fmt::format("{}: kKnownGaps lists {} but it is covered now: remove it from the list", name,
                                     KindNames(listed & ~missing)));
    }
  }
  for (const auto& [name, e] : Exemptions()) {
    if (!ops.Find(name)) problems.push_back(fmt::format("{}: exempted ({}) but not a registered op", name, e.why));
  }
  for (const auto& [name, kinds] : KnownGaps()) {
    if (!ops.Find(name)) problems.push_back(fmt::format("{}: listed in kKnownGaps but not a registered op", name));
  }
  return problems;
}

std::vector<std::string> OpCoverageKnownGaps() {
  std::vector<std::string> lines;
  for (const auto& [name, kinds] : KnownGaps()) lines.push_back(fmt::format("{}: no {} test", name, KindNames(kinds)));
  return lines;
}

}  // namespace weft::test
