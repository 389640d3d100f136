// Keras' named activations ("relu", "gelu", "swish", ...): the one table every layer's
// `activation=` and the Activation layer resolve names through. Each is built from graph ops that
// have gradients, so training through any of them needs no gradient code here.
#include <functional>
#include <map>
#include <vector>

#include "ops/array.h"
#include "ops/framework.h"
#include "ops/math.h"
#include "ops/nn.h"
#include "train/layer.h"

namespace weft::train {
namespace {

using ActivationFn = std::function<Output(const Scope&, Output)>;

Output Scalar(const Scope& s, Output like, double v) { return ops::ScalarLike(s, like.dtype(), v); }

// Keras 3's definitions (keras.activations), with its default arguments.
const std::map<std::string, ActivationFn>& Activations() {
  static const std::map<std::string, ActivationFn> m = {
      {"linear", [](const Scope&, Output x) { return x; }},
      {"relu", [](const Scope& s, Output x) { return ops::Relu(s, x); }},
      {"relu6", [](const Scope& s, Output x) { return ops::Relu6(s, x); }},
      {"leaky_relu", [](const Scope& s, Output x) { return ops::LeakyRelu(s, x, 0.2); }},
      {"elu", [](const Scope& s, Output x) { return ops::Elu(s, x); }},
      // scale * (x if x > 0 else alpha * (e^x - 1)) = scale * (relu(x) + alpha * (elu(x) - relu(x)))
      {"selu",
       [](const Scope& s, Output x) {
         const Output r = ops::Relu(s, x);
         const Output neg = ops::Mul(s, Scalar(s, x, 1.6732632423543772848170429916717),
                                     ops::Sub(s, ops::Elu(s, x), r));
         return ops::Mul(s, Scalar(s, x, 1.0507009873554804934193349852946), ops::Add(s, r, neg));
       }},
      // Exact GELU (Keras' default approximate=False): x/2 * (1 + erf(x / sqrt(2))), one op.
      {"gelu", [](const Scope& s, Output x) { return ops::Gelu(s, x, /*approximate=*/false); }},
      {"sigmoid", [](const Scope& s, Output x) { return ops::Sigmoid(s, x); }},
      // Keras 3: relu6(x + 3) / 6
      {"hard_sigmoid",
       [](const Scope& s, Output x) {
         return ops::Mul(s, ops::Relu6(s, ops::Add(s, x, Scalar(s, x, 3.0))), Scalar(s, x, 1.0 / 6.0));
       }},
      {"swish", [](const Scope& s, Output x) { return ops::Mul(s, x, ops::Sigmoid(s, x)); }},
      {"hard_swish",
       [](const Scope& s, Output x) {
         return ops::Mul(s, x, ops::Mul(s, ops::Relu6(s, ops::Add(s, x, Scalar(s, x, 3.0))), Scalar(s, x, 1.0 / 6.0)));
       }},
      {"tanh", [](const Scope& s, Output x) { return ops::Tanh(s, x); }},
      {"softplus", [](const Scope& s, Output x) { return ops::Softplus(s, x); }},
      // x / (|x| + 1)
      {"softsign",
       [](const Scope& s, Output x) { return ops::Div(s, x, ops::Add(s, ops::Abs(s, x), Scalar(s, x, 1.0))); }},
      // x * tanh(softplus(x))
      {"mish", [](const Scope& s, Output x) { return ops::Mul(s, x, ops::Tanh(s, ops::Softplus(s, x))); }},
      {"exponential", [](const Scope& s, Output x) { return ops::Exp(s, x); }},
      {"softmax", [](const Scope& s, Output x) { return ops::Softmax(s, x); }},
      {"log_softmax", [](const Scope& s, Output x) { return ops::LogSoftmax(s, x); }},
      // Keras 3's newer activations, at their default arguments (keras.activations.celu(x, alpha=1.0)
      // and so on; the Python functions refuse other values rather than computing something else).
      // celu: max(x, 0) + alpha * min(exp(x / alpha) - 1, 0), which at alpha = 1 is elu.
      {"celu", [](const Scope& s, Output x) { return ops::Elu(s, x); }},
      // clip(x, -1, 1)
      {"hard_tanh",
       [](const Scope& s, Output x) {
         return ops::Maximum(s, ops::Minimum(s, x, Scalar(s, x, 1.0)), Scalar(s, x, -1.0));
       }},
      // x where |x| > 0.5, else 0
      {"hard_shrink",
       [](const Scope& s, Output x) {
         return ops::Select(s, ops::Greater(s, ops::Abs(s, x), ops::Add(s, ops::ZerosLike(s, x), Scalar(s, x, 0.5))),
                            x, ops::ZerosLike(s, x));
       }},
      // x - 0.5 above 0.5, x + 0.5 below -0.5, else 0: sign(x) * relu(|x| - 0.5)
      {"soft_shrink",
       [](const Scope& s, Output x) {
         return ops::Mul(s, ops::Sign(s, x), ops::Relu(s, ops::Sub(s, ops::Abs(s, x), Scalar(s, x, 0.5))));
       }},
      // x - tanh(x)
      {"tanh_shrink", [](const Scope& s, Output x) { return ops::Sub(s, x, ops::Tanh(s, x)); }},
      // log(sigmoid(x)) = -softplus(-x), finite for large |x|
      {"log_sigmoid", [](const Scope& s, Output x) { return ops::Neg(s, ops::Softplus(s, ops::Neg(s, x))); }},
      // (x + sqrt(x^2 + b)) / 2 with b = 4
      {"squareplus",
       [](const Scope& s, Output x) {
         const Output root = ops::Sqrt(s, ops::Add(s, ops::Square(s, x), Scalar(s, x, 4.0)));
         return ops::Mul(s, ops::Add(s, x, root), Scalar(s, x, 0.5));
       }},
      // 0 for x <= -1, x for x >= 1, (x + 1)^2 / 4 between
      {"sparse_plus",
       [](const Scope& s, Output x) {
         const Output one = ops::Add(s, ops::ZerosLike(s, x), Scalar(s, x, 1.0));
         const Output mid = ops::Mul(s, ops::Square(s, ops::Add(s, x, Scalar(s, x, 1.0))), Scalar(s, x, 0.25));
         return ops::Select(s, ops::LessEqual(s, x, ops::Neg(s, one)), ops::ZerosLike(s, x),
                            ops::Select(s, ops::GreaterEqual(s, x, one), x, mid));
       }},
      // clip((x + 1) / 2, 0, 1)
      {"sparse_sigmoid",
       [](const Scope& s, Output x) {
         const Output half = ops::Mul(s, ops::Add(s, x, Scalar(s, x, 1.0)), Scalar(s, x, 0.5));
         return ops::Maximum(s, ops::Minimum(s, half, Scalar(s, x, 1.0)), Scalar(s, x, 0.0));
       }},
      // a * sigmoid(b), a and b the halves of the last axis (which must be even)
      {"glu",
       [](const Scope& s, Output x) {
         const std::vector<Output> ab = ops::Split(s, x, -1, 2);
         return ops::Mul(s, ab[0], ops::Sigmoid(s, ab[1]));
       }},
  };
  return m;
}

// Keras' other spellings of the same functions.
std::string Canonical(const std::string& a) {
  if (a.empty() || a == "None") return "linear";
  if (a == "silu") return "swish";
  if (a == "hard_silu") return "hard_swish";
  return a;
}

}  // namespace

std::string KnownActivations() {
  std::string out;
  for (const auto& [name, fn] : Activations()) out += (out.empty() ? "" : ", ") + name;
  return out + ", silu, hard_silu";
}

void CheckActivation(const std::string& a) {
  WEFT_REQUIRE(Activations().count(Canonical(a)) != 0, "unknown activation '{}' (known: {})", a, KnownActivations());
}

Output ApplyActivation(const Scope& s, const std::string& a, Output x) {
  CheckActivation(a);
  return Activations().at(Canonical(a))(s, x);
}

}  // namespace weft::train
