// Keras' named activations ("relu", "gelu", "swish", ...): the one table every layer's
// `activation=` and the Activation layer resolve names through. Each is built from graph ops that
// have gradients, so training through any of them needs no gradient code here.
#include <functional>
#include <map>

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
