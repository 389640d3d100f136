#include "tests/ops/op_test_util.h"

#include <fmt/format.h>

#include <cmath>
#include <random>

#include "graph/gradients.h"
#include "ops/framework.h"

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

struct OpGraph {
  Graph g;
  std::vector<Output> inputs;
  Node* node = nullptr;
};

void Build(OpGraph& og, std::string_view op, const std::vector<Tensor>& inputs, const AttrMap& attrs,
           std::string_view device = "") {
  Scope s = Scope::Root(&og.g);
  for (size_t i = 0; i < inputs.size(); ++i) {
    og.inputs.push_back(ops::Placeholder(s.WithOpName(fmt::format("in{}", i)), inputs[i].dtype(), inputs[i].shape()));
  }
  og.node = (device.empty() ? s : s.WithDevice(device)).WithOpName("op").AddNode(op, og.inputs, attrs);
}

std::vector<std::pair<Output, Tensor>> Feeds(const OpGraph& og, const std::vector<Tensor>& inputs) {
  std::vector<std::pair<Output, Tensor>> feeds;
  for (size_t i = 0; i < inputs.size(); ++i) feeds.emplace_back(og.inputs[i], inputs[i]);
  return feeds;
}

}  // namespace

std::vector<Tensor> RunOp(std::string_view op, const std::vector<Tensor>& inputs, const AttrMap& attrs,
                          std::string_view device) {
  OpGraph og;
  Build(og, op, inputs, attrs, device);
  std::vector<Output> fetches;
  for (int i = 0; i < og.node->num_outputs(); ++i) fetches.emplace_back(og.node, i);
  Session sess(&og.g, SessionOptions{.inter_op_threads = 2, .intra_op_threads = 2, .soft_placement = device.empty()});
  if (fetches.empty()) {
    sess.Run(Feeds(og, inputs), {}, {og.node});
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
  return out;
}

void ExpectNear(const Tensor& got, const Tensor& want, double atol, double rtol) {
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
  for (int i : wrt) xs.push_back(og.inputs[i]);
  const std::vector<Output> grads = Gradients(s, ys, xs, grad_ys);
  auto loss = [&](const std::vector<Tensor>& in) {
    const std::vector<Tensor> y = sess.Run(Feeds(og, in), ys);
    double l = 0;
    for (size_t k = 0; k < y.size(); ++k) {
      for (int64_t j = 0; j < y[k].num_elements(); ++j) l += weights[k].data<double>()[j] * y[k].data<double>()[j];
    }
    return l;
  };
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
    int bad = 0;
    for (int64_t j = 0; j < inputs[i].num_elements() && bad < 5; ++j) {
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
}

void ExpectOpError(std::string_view op, const std::vector<Tensor>& inputs, const AttrMap& attrs, Code code,
                   std::string_view substr) {
  try {
    RunOp(op, inputs, attrs);
  } catch (const Error& e) {
    INFO("error: " << std::string(e.what()));
    CHECK_MESSAGE(e.code() == code, op << ": expected " << CodeName(code) << ", got " << std::string(e.what()));
    CHECK_MESSAGE(std::string(e.what()).find(substr) != std::string::npos,
                  op << ": message lacks '" << substr << "': " << std::string(e.what()));
    return;
  }
  FAIL_CHECK(op << ": expected a " << CodeName(code) << " error containing '" << substr << "', got success");
}

}  // namespace weft::test
