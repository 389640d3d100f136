#include "tests/ops/op_test_util.h"

#include <fmt/format.h>

#include <cmath>
#include <deque>
#include <mutex>
#include <random>

#include "core/gpu.h"
#include "graph/gradients.h"
#include "ops/framework.h"
#include "ops/kernel.h"
#include "ops/state.h"
#include "tests/ops/op_coverage.h"

namespace weft::test {

template <typename T>
Tensor T_(const std::vector<double>& values, TensorShape shape) {
  std::vector<T> v;
  v.reserve(values.size());
  for (double d : values) v.push_back(static_cast<T>(d));
  if constexpr (std::is_same_v<T, bool>) {
    Tensor t(DType::kBool, shape);
    WEFT_REQUIRE(static_cast<int64_t>(values.size()) == t.num_elements(), "T_: {} values for {}", values.size(),
                 shape.ToString());
    for (size_t i = 0; i < values.size(); ++i) t.data<bool>()[i] = values[i] != 0;
    return t;
  } else {
    return Tensor::FromVector<T>(v, std::move(shape));
  }
}
template Tensor T_<float>(const std::vector<double>&, TensorShape);
template Tensor T_<double>(const std::vector<double>&, TensorShape);
template Tensor T_<int32_t>(const std::vector<double>&, TensorShape);
template Tensor T_<int64_t>(const std::vector<double>&, TensorShape);
template Tensor T_<uint8_t>(const std::vector<double>&, TensorShape);
template Tensor T_<bool>(const std::vector<double>&, TensorShape);

std::vector<double> V(const Tensor& t) {
  std::vector<double> v(t.num_elements());
  for (int64_t i = 0; i < t.num_elements(); ++i) v[i] = t.ElementAsDouble(i);
  return v;
}

Tensor Make(DType dt, const std::vector<double>& v, const TensorShape& shape) {
  return dt == DType::kFloat32 ? T_<float>(v, shape) : T_<double>(v, shape);
}

Tensor Cast(const Tensor& t, DType dt) { return Make(dt, V(t), t.shape()); }

Tensor Rand(std::vector<int64_t> dims, double lo, double hi, uint64_t seed, DType dtype) {
  Tensor t(dtype, TensorShape(dims));
  std::mt19937_64 gen(seed);
  std::uniform_real_distribution<double> dist(lo, hi);
  Dispatch<WEFT_FLOAT_TYPES, int32_t, int64_t>(dtype, "Rand", [&](auto tag) {
    using T = typename decltype(tag)::type;
    for (int64_t i = 0; i < t.num_elements(); ++i) t.data<T>()[i] = static_cast<T>(dist(gen));
  });
  return t;
}

namespace {

// The inputs of one op: a Placeholder per input (fed with the test's tensor), and for a ref input
// (a state op's variable) a Variable of that shape that an Assign from the placeholder
// initializes before the op runs.
struct OpGraph {
  Graph g;
  std::vector<Output> feeds;  // the placeholders, one per input
  std::vector<Output> args;   // what the op reads: the placeholder, or the variable for a ref input
  std::vector<Node*> inits;   // the variables' Assigns, run before the op
  Node* node = nullptr;
};

// Whether input i of `op` is a ref input. Ops with list inputs have no ref inputs.
bool IsRefInput(const OpDef& def, size_t i) {
  for (const ArgDef& a : def.inputs) if (!a.number_attr.empty()) return false;
  return i < def.inputs.size() && def.inputs[i].is_ref;
}

void Build(OpGraph& og, std::string_view op, const std::vector<Tensor>& inputs, const AttrMap& attrs,
           std::string_view device = "") {
  Scope s = Scope::Root(&og.g);
  const Scope on_device = device.empty() ? s : s.WithDevice(device);
  const OpDef& def = OpRegistry::Global().Lookup(op);
  for (size_t i = 0; i < inputs.size(); ++i) {
    og.feeds.push_back(ops::Placeholder(s.WithOpName(fmt::format("in{}", i)), inputs[i].dtype(), inputs[i].shape()));
    og.args.push_back(og.feeds.back());
    if (IsRefInput(def, i)) {
      og.args.back() = ops::Variable(on_device.WithOpName(fmt::format("var{}", i)), inputs[i].shape(), inputs[i].dtype());
      og.inits.push_back(ops::Assign(on_device, og.args.back(), og.feeds.back()).node);
    }
  }
  og.node = on_device.WithOpName("op").AddNode(op, og.args, attrs);
}

std::vector<std::pair<Output, Tensor>> Feeds(const OpGraph& og, const std::vector<Tensor>& inputs) {
  std::vector<std::pair<Output, Tensor>> feeds;
  for (size_t i = 0; i < inputs.size(); ++i) feeds.emplace_back(og.feeds[i], inputs[i]);
  return feeds;
}

// The most recent outputs of RunOp and Fetch, with the op and run that made them: ExpectNear
// credits an op with a forward test when the tensor it checks is one of these. Holding the
// tensors keeps their buffers alive, so a buffer address is never reused while listed.
struct Produced {
  std::string op;
  int64_t run;
  Tensor value;
};
struct ProducedLog {
  std::mutex mu;
  std::deque<Produced> recent;
  int64_t runs = 0;
};
ProducedLog& Log() {
  static ProducedLog log;
  return log;
}
constexpr size_t kRecentOutputs = 32;

void NoteProduced(std::string_view op, const std::vector<Tensor>& outputs) {
  ProducedLog& log = Log();
  std::lock_guard<std::mutex> lock(log.mu);
  ++log.runs;
  for (const Tensor& t : outputs) {
    log.recent.push_back({std::string(op), log.runs, t});
    if (log.recent.size() > kRecentOutputs) log.recent.pop_front();
  }
}

// The entry `t` is (same buffer, dtype and shape), or null.
const Produced* FindProduced(const ProducedLog& log, const Tensor& t) {
  for (auto it = log.recent.rbegin(); it != log.recent.rend(); ++it) {
    if (it->value.SharesBufferWith(t) && it->value.dtype() == t.dtype() && it->value.shape() == t.shape()) return &*it;
  }
  return nullptr;
}

// Credits the op that produced `got` with a forward test, unless `want` came from another run of
// that same op (a determinism check compares the op with itself, not with a reference).
void NoteForwardChecked(const Tensor& got, const Tensor* want) {
  ProducedLog& log = Log();
  std::string op;
  {
    std::lock_guard<std::mutex> lock(log.mu);
    const Produced* g = FindProduced(log, got);
    if (!g) return;
    if (want) {
      for (const Produced& p : log.recent) {
        if (p.op == g->op && p.run != g->run && p.value.SharesBufferWith(*want)) return;
      }
    }
    op = g->op;
  }
  NoteCoverage(op, Coverage::kForward);
}

// Compares like ExpectNear; true when every element agreed.
bool Compare(const Tensor& got, const Tensor& want, double atol, double rtol) {
  REQUIRE_MESSAGE(got.dtype() == want.dtype(), "dtype: got " << got.DebugString() << ", want " << want.DebugString());
  REQUIRE_MESSAGE(got.shape() == want.shape(), "shape: got " << got.DebugString() << ", want " << want.DebugString());
  int bad = 0;
  for (int64_t i = 0; i < got.num_elements() && bad < 5; ++i) {
    const double g = got.ElementAsDouble(i), w = want.ElementAsDouble(i);
    const bool ok = (std::isnan(g) && std::isnan(w)) || g == w || std::abs(g - w) <= atol + rtol * std::abs(w);
    if (!ok) {
      ++bad;
      FAIL_CHECK("element " << i << " of " << got.DebugString() << ": got " << g << ", want " << w);
    }
  }
  return bad == 0;
}

}  // namespace

std::vector<Tensor> RunOp(std::string_view op, const std::vector<Tensor>& inputs, const AttrMap& attrs,
                          std::string_view device, const GpuOptions& gpu) {
  OpGraph og;
  Build(og, op, inputs, attrs, device);
  std::vector<Output> fetches;
  for (int i = 0; i < og.node->num_outputs(); ++i) fetches.emplace_back(og.node, i);
  Session sess(&og.g, SessionOptions{.inter_op_threads = 2, .intra_op_threads = 2, .soft_placement = device.empty(),
                                     .gpu = gpu});
  if (!og.inits.empty()) sess.Run(Feeds(og, inputs), {}, og.inits);
  if (fetches.empty()) {
    // An op without outputs (NoOp) has nothing to compare: running cleanly is its forward test.
    sess.Run(Feeds(og, inputs), {}, {og.node});
    if (device.empty()) NoteCoverage(op, Coverage::kForward);
    return {};
  }
  std::vector<Tensor> out = sess.Run(Feeds(og, inputs), fetches);
  for (int i = 0; i < og.node->num_outputs(); ++i) {
    // The kernel's output must agree with the shape function.
    const TensorShape& inferred = og.node->output_shape(i);
    INFO("op " << op << " output " << i << ": inferred " << inferred.ToString() << ", got "
               << out[i].shape().ToString());
    CHECK(inferred.IsCompatibleWith(out[i].shape()));
  }
  // Only CPU runs count towards a forward test; a GPU run is checked against the CPU instead.
  if (device.empty() || device.find("CPU") != std::string_view::npos) NoteProduced(op, out);
  return out;
}

Tensor Fetch(Session& sess, const Output& output, const std::vector<std::pair<Output, Tensor>>& feeds) {
  Tensor t = sess.Run(feeds, {output})[0];
  NoteProduced(output.node->op(), {t});
  return t;
}

void ExpectNear(const Tensor& got, const Tensor& want, double atol, double rtol) {
  if (Compare(got, want, atol, rtol)) NoteForwardChecked(got, &want);
}

void ExpectEqual(const Tensor& got, const Tensor& want) { ExpectNear(got, want, 0.0, 0.0); }

void CheckGradient(std::string_view op, const std::vector<Tensor>& inputs, const AttrMap& attrs, std::vector<int> wrt,
                   double tol, double delta) {
  OpGraph og;
  Build(og, op, inputs, attrs);
  if (wrt.empty()) {
    for (size_t i = 0; i < inputs.size(); ++i) if (IsFloating(inputs[i].dtype())) wrt.push_back(static_cast<int>(i));
  }
  for (int i : wrt) {
    REQUIRE_MESSAGE(inputs.at(i).dtype() == DType::kFloat64, "CheckGradient: input " << i << " of " << op
                                                                                       << " must be float64");
  }
  Scope s = Scope::Root(&og.g);
  // loss = sum_k sum(w_k * y_k): the weights go in as grad_ys, and the loss is evaluated on the host.
  std::vector<Output> ys, grad_ys;
  std::vector<Tensor> weights;
  for (int k = 0; k < og.node->num_outputs(); ++k) {
    if (og.node->output_dtype(k) != DType::kFloat64) continue;
    ys.emplace_back(og.node, k);
  }
  REQUIRE_MESSAGE(!ys.empty(), "CheckGradient: " << op << " has no float64 output");
  Session sess(&og.g, SessionOptions{.inter_op_threads = 1, .intra_op_threads = 1});
  const std::vector<Tensor> y0 = sess.Run(Feeds(og, inputs), ys);
  for (size_t k = 0; k < ys.size(); ++k) {
    weights.push_back(Rand(y0[k].shape().dims(), 0.5, 1.5, 100 + k));
    grad_ys.push_back(ops::Const(s.WithOpName("w"), weights.back()));
  }
  std::vector<Output> xs;
  for (int i : wrt) xs.push_back(og.feeds[i]);
  const std::vector<Output> grads = Gradients(s, ys, xs, grad_ys);
  auto loss = [&](const std::vector<Tensor>& in) {
    const std::vector<Tensor> y = sess.Run(Feeds(og, in), ys);
    double l = 0;
    for (size_t k = 0; k < y.size(); ++k) {
      for (int64_t j = 0; j < y[k].num_elements(); ++j) l += weights[k].data<double>()[j] * y[k].data<double>()[j];
    }
    return l;
  };
  int bad = 0;
  int64_t checked = 0;
  for (size_t w = 0; w < wrt.size(); ++w) {
    const int i = wrt[w];
    Tensor symbolic;
    if (grads[w].valid()) {
      symbolic = sess.Run(Feeds(og, inputs), {grads[w]})[0];
      REQUIRE_MESSAGE(symbolic.shape() == inputs[i].shape(), op << ": gradient for input " << i << " has shape "
                                                                 << symbolic.shape().ToString() << ", input is "
                                                                 << inputs[i].shape().ToString());
    } else {
      symbolic = Tensor::Zeros(DType::kFloat64, inputs[i].shape());
    }
    for (int64_t j = 0; j < inputs[i].num_elements() && bad < 5; ++j, ++checked) {
      std::vector<Tensor> plus = inputs, minus = inputs;
      plus[i] = inputs[i].Clone();
      minus[i] = inputs[i].Clone();
      plus[i].data<double>()[j] += delta;
      minus[i].data<double>()[j] -= delta;
      const double numeric = (loss(plus) - loss(minus)) / (2 * delta);
      const double got = symbolic.data<double>()[j];
      if (std::abs(numeric - got) > tol * (1 + std::abs(numeric))) {
        ++bad;
        FAIL_CHECK(op << ": d/d input " << i << " element " << j << ": symbolic " << got << ", numeric " << numeric);
      }
    }
  }
  if (bad == 0 && checked > 0) NoteCoverage(op, Coverage::kGradient);
}

void ExpectOpError(std::string_view op, const std::vector<Tensor>& inputs, const AttrMap& attrs, Code code,
                   std::string_view substr) {
  try {
    RunOp(op, inputs, attrs);
  } catch (const Error& e) {
    INFO("error: " << std::string(e.what()));
    const bool code_ok = e.code() == code, message_ok = std::string(e.what()).find(substr) != std::string::npos;
    CHECK_MESSAGE(code_ok, op << ": expected " << CodeName(code) << ", got " << std::string(e.what()));
    CHECK_MESSAGE(message_ok, op << ": message lacks '" << substr << "': " << std::string(e.what()));
    if (code_ok && message_ok) NoteCoverage(op, Coverage::kBadInput);
    return;
  }
  FAIL_CHECK(op << ": expected a " << CodeName(code) << " error containing '" << substr << "', got success");
}

void ExpectMoments(const Tensor& got, double mean, double stddev, double mean_tol, double stddev_tol) {
  REQUIRE_MESSAGE(got.num_elements() > 1, "ExpectMoments: needs two or more samples, got " << got.DebugString());
  const int64_t n = got.num_elements();
  double m = 0, v = 0;
  for (int64_t i = 0; i < n; ++i) m += got.ElementAsDouble(i);
  m /= n;
  for (int64_t i = 0; i < n; ++i) v += (got.ElementAsDouble(i) - m) * (got.ElementAsDouble(i) - m);
  const double sd = std::sqrt(v / (n - 1));
  const bool mean_ok = std::abs(m - mean) <= mean_tol, sd_ok = std::abs(sd - stddev) <= stddev_tol;
  CHECK_MESSAGE(mean_ok, "sample mean " << m << ", want " << mean << " +- " << mean_tol);
  CHECK_MESSAGE(sd_ok, "sample stddev " << sd << ", want " << stddev << " +- " << stddev_tol);
  if (mean_ok && sd_ok) NoteForwardChecked(got, nullptr);
}

void ExpectGpuMatchesCpu(std::string_view op, const std::vector<Tensor>& inputs, const AttrMap& attrs, double tol,
                         const GpuOptions& gpu_options) {
  INFO("op " << op);
  // Checked with or without a GPU: the comparison must be of a kernel that exists.
  REQUIRE_MESSAGE(KernelRegistry::Global().KernelsFor(op).find("GPU") != std::string::npos,
                  op << " has no GPU kernel: " << KernelRegistry::Global().KernelsFor(op));
  if (ProbeGpus().count == 0) {
    // The comparison is written and reached; only the run needs a GPU (docs/ops.md).
    NoteCoverage(op, Coverage::kGpu);
    return;
  }
  const std::vector<Tensor> cpu = RunOp(op, inputs, attrs, "/device:CPU:0");
  const std::vector<Tensor> gpu = RunOp(op, inputs, attrs, "/device:GPU:0", gpu_options);
  REQUIRE(cpu.size() == gpu.size());
  bool ok = true;
  for (size_t i = 0; i < cpu.size(); ++i) ok &= Compare(gpu[i], cpu[i], tol, tol);
  if (ok) NoteCoverage(op, Coverage::kGpu);
}

}  // namespace weft::test
