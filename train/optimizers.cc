#include "train/optimizers.h"

#include <cmath>
#include <map>

#include "ops/array.h"
#include "ops/framework.h"
#include "ops/math.h"
#include "ops/optimizer.h"
#include "ops/state.h"

namespace weft::train {
namespace {

Output F(const Scope& s, double v) { return ops::ScalarLike(s, DType::kFloat32, v); }

// Keras' clipping: g * c / max(norm, c) per gradient (clipnorm) or over all of them
// (global_clipnorm), or each element into [-c, c] (clipvalue). `squares[i]`, where valid, is g's
// per-occurrence squares (OccurrenceSquares): the norms are TF's over its IndexedSlices rows, and
// with clipnorm the squares scale with g; after global_clipnorm TF's gradients are dense, so the
// squares are dropped. clipvalue clips TF's rows one by one, which the summed g cannot repeat:
// those gradients become dense too.
void Clip(const Scope& s, const Optimizer& o, std::vector<Output>* grads, std::vector<Output>* squares) {
  auto sum_sq = [&](size_t i) {
    return ops::Sum(s, (*squares)[i].valid() ? (*squares)[i] : ops::Square(s, (*grads)[i]));
  };
  auto scale = [&](size_t i, const Output& f) {
    (*grads)[i] = ops::Mul(s, (*grads)[i], f);
    if ((*squares)[i].valid()) (*squares)[i] = ops::Mul(s, (*squares)[i], ops::Square(s, f));
  };
  if (o.clipnorm > 0.0) {
    for (size_t i = 0; i < grads->size(); ++i) {
      if (!(*grads)[i].valid()) continue;
      Output norm = ops::Sqrt(s, sum_sq(i));
      scale(i, ops::Div(s, F(s, o.clipnorm), ops::Maximum(s, norm, F(s, o.clipnorm))));
    }
  } else if (o.global_clipnorm > 0.0) {
    std::vector<Output> sums;
    for (size_t i = 0; i < grads->size(); ++i) {
      if ((*grads)[i].valid()) sums.push_back(sum_sq(i));
    }
    if (sums.empty()) return;
    Output norm = ops::Sqrt(s, sums.size() == 1 ? sums[0] : ops::AddN(s, sums));
    Output f = ops::Div(s, F(s, o.global_clipnorm), ops::Maximum(s, norm, F(s, o.global_clipnorm)));
    for (size_t i = 0; i < grads->size(); ++i) {
      if ((*grads)[i].valid()) (*grads)[i] = ops::Mul(s, (*grads)[i], f);
      (*squares)[i] = Output{};  // Keras' global clipping hands dense gradients on (TF 2.21's result)
    }
  } else if (o.clipvalue > 0.0) {
    for (size_t i = 0; i < grads->size(); ++i) {
      Output& g = (*grads)[i];
      if (g.valid()) g = ops::Minimum(s, ops::Maximum(s, g, F(s, -o.clipvalue)), F(s, o.clipvalue));
      (*squares)[i] = Output{};
    }
  }
}

// w -= lr * wd * w, applied before the update (which then waits for it). Like the updates, it
// runs once the variable's gradient exists (so after the forward pass has read the variable).
Output DecayWeights(const Scope& s, Output var, Output grad, Output lr, double wd) {
  const Scope ds = s.WithControlDependencies(std::vector<Output>{grad});
  return ops::AssignSub(ds, var, ops::Mul(ds, var, ops::Mul(ds, lr, F(ds, wd))));
}

// Nadam's u_prod_t = prod_{i=1..t} b1 (1 - 0.5 * 0.96^i) (Keras keeps it in a variable): as
// exp(t log b1 + L[min(t, N)]), L[k] the host's partial sums of log(1 - 0.5 * 0.96^i); past
// N = 1000 the terms (below 1e-18) no longer move a float32 sum.
Output NadamMomentumProduct(const Scope& s, double beta_1, Output t_int) {
  constexpr int64_t kTerms = 1000;
  std::vector<float> partial(kTerms + 1, 0.0f);
  double sum = 0.0;
  for (int64_t i = 1; i <= kTerms; ++i) {
    sum += std::log1p(-0.5 * std::pow(0.96, static_cast<double>(i)));
    partial[static_cast<size_t>(i)] = static_cast<float>(sum);
  }
  const Tensor table = Tensor::FromVector(partial);
  Output idx = ops::Minimum(s, t_int, ops::Const(s, kTerms));
  Output t = ops::Cast(s, t_int, DType::kFloat32);
  return ops::Exp(s, ops::Add(s, ops::Mul(s, t, F(s, std::log(beta_1))), ops::Gather(s, ops::Const(s, table), idx)));
}

// sqrt(mean(x^2)) over every element, a float32 scalar.
Output Rms(const Scope& s, Output x) { return ops::Sqrt(s, ops::Mean(s, ops::Square(s, x))); }

// `g2`: the squared gradient as Update passes it (per-occurrence rows for gathered variables).
Output LambUpdate(const Scope& s, const Optimizer& o, Output var, Output g, Output g2, Output lr, Output t,
                  const SlotFactory& slot) {
  Output m = slot(var, "m"), v = slot(var, "v");
  Output m1 = ops::Assign(s, m, ops::Add(s, m, ops::Mul(s, ops::Sub(s, g, m), F(s, 1.0 - o.beta_1))));
  Output v1 = ops::Assign(s, v, ops::Add(s, v, ops::Mul(s, ops::Sub(s, g2, v), F(s, 1.0 - o.beta_2))));
  Output m_hat = ops::Div(s, m1, ops::Sub(s, F(s, 1.0), ops::Pow(s, F(s, o.beta_1), t)));
  Output v_hat = ops::Div(s, v1, ops::Sub(s, F(s, 1.0), ops::Pow(s, F(s, o.beta_2), t)));
  Output update = ops::Div(s, m_hat, ops::Add(s, ops::Sqrt(s, v_hat), F(s, o.epsilon)));
  Output w_norm = ops::Sqrt(s, ops::Sum(s, ops::Square(s, var)));
  Output u_norm = ops::Sqrt(s, ops::Sum(s, ops::Square(s, update)));
  Output zero = F(s, 0.0), one = F(s, 1.0);
  Output both = ops::LogicalAnd(s, ops::Greater(s, w_norm, zero), ops::Greater(s, u_norm, zero));
  // w_norm / u_norm where both are positive, else 1 (the divisor made 1 first: no 0/0 computed)
  Output ratio = ops::Select(s, both, ops::Div(s, w_norm, ops::Select(s, both, u_norm, one)), one);
  return ops::AssignSub(s, var, ops::Mul(s, ops::Mul(s, ratio, lr), update));
}

Output AdafactorUpdate(const Scope& s, const Optimizer& o, Output var, Output g, Output g2_in, Output lr, Output t,
                       const SlotFactory& slot) {
  const int rank = var.shape().unknown_rank() ? -1 : var.shape().rank();
  WEFT_REQUIRE(rank >= 0, "Adafactor: variable {} has an unknown rank", var.name());
  Output rho = ops::Minimum(s, lr, ops::Rsqrt(s, t));
  Output alpha = ops::Mul(s, ops::Maximum(s, F(s, o.epsilon_2), Rms(s, var)), rho);
  Output g2 = ops::Add(s, g2_in, F(s, o.epsilon_1));
  Output b2t = ops::Sub(s, F(s, 1.0), ops::Pow(s, t, F(s, o.beta_2_decay)));
  Output keep = ops::Sub(s, F(s, 1.0), b2t);
  auto average = [&](Output acc, Output x) { return ops::Add(s, ops::Mul(s, b2t, acc), ops::Mul(s, keep, x)); };
  Output v;
  if (rank >= 2) {
    // R constant along the last axis, C along the one before: weight-shaped slots (header).
    Output ones = ops::OnesLike(s, g2);
    Output r = slot(var, "r"), c = slot(var, "c");
    Output r1 = ops::Assign(s, r, average(r, ops::Mul(s, ops::Mean(s, g2, {-1}, true), ones)));
    Output c1 = ops::Assign(s, c, average(c, ops::Mul(s, ops::Mean(s, g2, {-2}, true), ones)));
    v = ops::Mul(s, ops::Div(s, r1, ops::Mean(s, r1, {-2}, true)), c1);
  } else {
    Output vs = slot(var, "v");
    v = ops::Assign(s, vs, average(vs, g2));
  }
  Output u = ops::Div(s, g, ops::Sqrt(s, v));
  Output u_hat = ops::Div(s, u, ops::Maximum(s, F(s, 1.0), ops::Div(s, Rms(s, u), F(s, o.clip_threshold))));
  return ops::AssignSub(s, var, ops::Mul(s, alpha, u_hat));
}

// Keras 3 on TensorFlow gets the gradient of a gathered variable (an Embedding's table) as
// IndexedSlices, one row per occurrence of an index, and its optimizers square those rows before
// they are summed into the dense slot: a row looked up k times adds the sum of its k squared row
// gradients to Adam's v (and RMSprop's, Adagrad's, Nadam's, Adadelta's, Ftrl's accumulators), not
// the square of their sum. weft's gradient of a Gather is the summed GatherGrad; for a gradient
// that is only GatherGrads along axis 0 (not accumulated or all-reduced first, which TF densifies
// too), this gives those per-occurrence squares, so training follows TF's. Otherwise
// (and for every other gradient) it is invalid and the optimizers square the summed gradient.
Output OccurrenceSquares(const Scope& s, const Output& g) {
  if (!g.valid() || g.node == nullptr) return Output{};
  auto one = [&](const Output& x) -> Output {
    const Node* n = x.node;
    if (n == nullptr || n->op() != "GatherGrad" || n->attr<int64_t>("axis") != 0 || x.index != 0) return Output{};
    return s.Op("GatherGrad", {ops::Square(s, n->input(0)), n->input(1), n->input(2)}, {{"axis", int64_t{0}}});
  };
  if (g.node->op() != "AddN" && g.node->op() != "Add") return one(g);
  std::vector<Output> parts;
  for (int i = 0; i < g.node->num_inputs(); ++i) {
    Output p = one(g.node->input(i));
    if (!p.valid()) return Output{};
    parts.push_back(p);
  }
  return parts.size() == 1 ? parts[0] : ops::AddN(s, parts);
}

// One variable's update; `t` is the float32 step t = step + 1 (Adam's bias correction). `g2`:
// the gradient's square as the optimizers use it (OccurrenceSquares, or invalid: g * g).
Output Update(const Scope& s, const Optimizer& o, Output var, Output g, Output g2, Output lr, Output t,
              const SlotFactory& slot) {
  if (!g2.valid()) g2 = ops::Square(s, g);
  switch (o.kind) {
    case Optimizer::Kind::kSGD:
      if (o.momentum == 0.0) return ops::ApplyGradientDescent(s, var, lr, g);
      // Keras: m = momentum * m - lr * g; w += m (nesterov: w += momentum * m - lr * g). The fused
      // op with rate 1 on lr * g is exactly that, with its accumulator holding -m.
      return ops::ApplyMomentum(s, var, slot(var, "momentum"), F(s, 1.0), ops::Mul(s, g, lr), F(s, o.momentum),
                                o.nesterov);
    case Optimizer::Kind::kAdam:
    case Optimizer::Kind::kAdamW: {
      Output b1 = F(s, o.beta_1), b2 = F(s, o.beta_2);
      Output b1_power = ops::Pow(s, b1, t), b2_power = ops::Pow(s, b2, t);
      if (!o.amsgrad && g2.node->op() == "Square") {  // the fused kernel squares g itself
        return ops::ApplyAdam(s, var, slot(var, "m"), slot(var, "v"), b1_power, b2_power, lr, b1, b2,
                              F(s, o.epsilon), g);
      }
      Output m = slot(var, "m"), v = slot(var, "v");
      Output m1 = ops::Assign(s, m, ops::Add(s, m, ops::Mul(s, ops::Sub(s, g, m), F(s, 1.0 - o.beta_1))));
      Output v1 = ops::Assign(s, v, ops::Add(s, v, ops::Mul(s, ops::Sub(s, g2, v), F(s, 1.0 - o.beta_2))));
      Output vh = v1;
      if (o.amsgrad) {
        Output v_hat = slot(var, "v_hat");
        vh = ops::Assign(s, v_hat, ops::Maximum(s, v_hat, v1));
      }
      Output alpha = ops::Div(s, ops::Mul(s, lr, ops::Sqrt(s, ops::Sub(s, F(s, 1.0), b2_power))),
                              ops::Sub(s, F(s, 1.0), b1_power));
      return ops::AssignSub(s, var, ops::Div(s, ops::Mul(s, alpha, m1), ops::Add(s, ops::Sqrt(s, vh), F(s, o.epsilon))));
    }
    case Optimizer::Kind::kRMSprop: {
      Output v = slot(var, "velocity");
      Output v1 = ops::Assign(s, v, ops::Add(s, ops::Mul(s, v, F(s, o.rho)), ops::Mul(s, g2, F(s, 1.0 - o.rho))));
      Output denom = v1;
      if (o.centered) {
        Output a = slot(var, "average_gradient");
        Output a1 = ops::Assign(s, a, ops::Add(s, ops::Mul(s, a, F(s, o.rho)), ops::Mul(s, g, F(s, 1.0 - o.rho))));
        denom = ops::Sub(s, v1, ops::Square(s, a1));
      }
      Output step = ops::Div(s, ops::Mul(s, lr, g), ops::Sqrt(s, ops::Add(s, denom, F(s, o.epsilon))));
      if (o.momentum > 0.0) {
        Output mom = slot(var, "momentum");
        step = ops::Assign(s, mom, ops::Add(s, ops::Mul(s, mom, F(s, o.momentum)), step));
      }
      return ops::AssignSub(s, var, step);
    }
    case Optimizer::Kind::kAdagrad: {
      Output acc = slot(var, "accumulator");
      Output a1 = ops::Assign(s, acc, ops::Add(s, acc, g2));
      Output denom = ops::Sqrt(s, ops::Add(s, a1, F(s, o.initial_accumulator_value + o.epsilon)));
      return ops::AssignSub(s, var, ops::Div(s, ops::Mul(s, lr, g), denom));
    }
    case Optimizer::Kind::kNadam: {
      Output b1 = F(s, o.beta_1);
      auto u = [&](Output i) {  // b1 (1 - 0.5 * 0.96^i)
        return ops::Mul(s, b1, ops::Sub(s, F(s, 1.0), ops::Mul(s, F(s, 0.5), ops::Pow(s, F(s, 0.96), i))));
      };
      Output u_t = u(t), u_next = u(ops::Add(s, t, F(s, 1.0)));
      Output t_int = ops::Cast(s, t, DType::kInt64);
      Output u_prod = NadamMomentumProduct(s, o.beta_1, t_int), u_prod_next = ops::Mul(s, u_prod, u_next);
      Output m = slot(var, "momentum"), v = slot(var, "velocity");
      Output m1 = ops::Assign(s, m, ops::Add(s, m, ops::Mul(s, ops::Sub(s, g, m), F(s, 1.0 - o.beta_1))));
      Output v1 = ops::Assign(s, v, ops::Add(s, v, ops::Mul(s, ops::Sub(s, g2, v), F(s, 1.0 - o.beta_2))));
      Output m_hat = ops::Add(s, ops::Div(s, ops::Mul(s, u_next, m1), ops::Sub(s, F(s, 1.0), u_prod_next)),
                              ops::Div(s, ops::Mul(s, ops::Sub(s, F(s, 1.0), u_t), g), ops::Sub(s, F(s, 1.0), u_prod)));
      Output v_hat = ops::Div(s, v1, ops::Sub(s, F(s, 1.0), ops::Pow(s, F(s, o.beta_2), t)));
      return ops::AssignSub(s, var, ops::Div(s, ops::Mul(s, m_hat, lr), ops::Add(s, ops::Sqrt(s, v_hat), F(s, o.epsilon))));
    }
    case Optimizer::Kind::kAdamax: {
      Output m = slot(var, "m"), u = slot(var, "u");
      Output m1 = ops::Assign(s, m, ops::Add(s, m, ops::Mul(s, ops::Sub(s, g, m), F(s, 1.0 - o.beta_1))));
      Output u1 = ops::Assign(s, u, ops::Maximum(s, ops::Mul(s, u, F(s, o.beta_2)), ops::Abs(s, g)));
      Output bias = ops::Sub(s, F(s, 1.0), ops::Pow(s, F(s, o.beta_1), t));
      return ops::AssignSub(s, var, ops::Div(s, ops::Mul(s, lr, m1), ops::Mul(s, bias, ops::Add(s, u1, F(s, o.epsilon)))));
    }
    case Optimizer::Kind::kAdadelta: {
      Output a = slot(var, "accumulated_grad"), ad = slot(var, "accumulated_delta_var");
      auto rms = [&](Output x) { return ops::Sqrt(s, ops::Add(s, x, F(s, o.epsilon))); };
      auto average = [&](Output acc, Output x2) {
        return ops::Add(s, ops::Mul(s, acc, F(s, o.rho)), ops::Mul(s, x2, F(s, 1.0 - o.rho)));
      };
      Output a1 = ops::Assign(s, a, average(a, g2));
      Output ratio = ops::Div(s, rms(ad), rms(a1));
      Output delta = ops::Neg(s, ops::Mul(s, ratio, g));
      // delta per occurrence is -ratio * g_i, so its squares sum to ratio^2 * g2 (= delta^2 when dense).
      Output ad1 = ops::Assign(s, ad, average(ad, ops::Mul(s, ops::Square(s, ratio), g2)));
      // The update reads delta after its accumulator took it in (Keras' order).
      const Scope after = s.WithControlDependencies(std::vector<Output>{ad1});
      return ops::AssignAdd(after, var, ops::Mul(after, lr, delta));
    }
    case Optimizer::Kind::kFtrl: {
      Output acc_slot = slot(var, "accumulator"), linear = slot(var, "linear");
      Output acc = ops::Add(s, acc_slot, F(s, o.initial_accumulator_value));
      Output new_acc = ops::Add(s, acc, g2);
      Output power = F(s, -o.learning_rate_power);
      Output l2 = ops::Add(s, F(s, o.l2_regularization_strength), ops::Div(s, F(s, o.beta), ops::Mul(s, F(s, 2.0), lr)));
      Output g_used = ops::Add(s, g, ops::Mul(s, var, F(s, 2.0 * o.l2_shrinkage_regularization_strength)));
      Output sigma = ops::Div(s, ops::Sub(s, ops::Pow(s, new_acc, power), ops::Pow(s, acc, power)), lr);
      Output lin1 = ops::Assign(s, linear, ops::Add(s, linear, ops::Sub(s, g_used, ops::Mul(s, sigma, var))));
      Output quadratic = ops::Add(s, ops::Div(s, ops::Pow(s, new_acc, power), lr), ops::Mul(s, l2, F(s, 2.0)));
      Output clipped = ops::Minimum(s, ops::Maximum(s, lin1, F(s, -o.l1_regularization_strength)),
                                    F(s, o.l1_regularization_strength));
      Output w1 = ops::Assign(s, var, ops::Div(s, ops::Sub(s, clipped, lin1), quadratic));
      const Scope after = s.WithControlDependencies(std::vector<Output>{w1});
      return ops::AssignAdd(after, acc_slot, g2);
    }
    case Optimizer::Kind::kLion: {
      Output m = slot(var, "momentum");
      Output direction = ops::Sign(s, ops::Add(s, ops::Mul(s, m, F(s, o.beta_1)), ops::Mul(s, g, F(s, 1.0 - o.beta_1))));
      Output w1 = ops::AssignSub(s, var, ops::Mul(s, lr, direction));
      const Scope after = s.WithControlDependencies(std::vector<Output>{w1});
      return ops::Assign(after, m, ops::Add(after, ops::Mul(after, m, F(after, o.beta_2)),
                                            ops::Mul(after, g, F(after, 1.0 - o.beta_2))));
    }
    case Optimizer::Kind::kLamb: return LambUpdate(s, o, var, g, g2, lr, t, slot);
    case Optimizer::Kind::kAdafactor: return AdafactorUpdate(s, o, var, g, g2, lr, t, slot);
  }
  throw Error(errors::Internal("unknown optimizer kind"));
}

Optimizer Make(Optimizer::Kind kind, Schedule lr) {
  WEFT_REQUIRE(lr != nullptr, "optimizer: learning_rate must be a number or a schedule");
  Optimizer o;
  o.kind = kind;
  o.learning_rate = std::move(lr);
  return o;
}

}  // namespace

void Optimizer::Validate() const {
  const std::string n = name();
  WEFT_REQUIRE(momentum >= 0.0 && momentum < 1.0, "{}: momentum must be in [0, 1), got {}", n, momentum);
  WEFT_REQUIRE(!nesterov || momentum > 0.0, "{}: nesterov needs a momentum > 0", n);
  WEFT_REQUIRE(beta_1 >= 0.0 && beta_1 < 1.0 && beta_2 >= 0.0 && beta_2 < 1.0,
               "{}: beta_1 and beta_2 must be in [0, 1), got {} and {}", n, beta_1, beta_2);
  WEFT_REQUIRE(epsilon > 0.0, "{}: epsilon must be positive, got {}", n, epsilon);
  WEFT_REQUIRE(rho >= 0.0 && rho < 1.0, "{}: rho must be in [0, 1), got {}", n, rho);
  WEFT_REQUIRE(initial_accumulator_value >= 0.0, "{}: initial_accumulator_value must be >= 0, got {}", n,
               initial_accumulator_value);
  WEFT_REQUIRE(learning_rate_power <= 0.0, "{}: learning_rate_power must be <= 0, got {}", n, learning_rate_power);
  WEFT_REQUIRE(l1_regularization_strength >= 0.0 && l2_regularization_strength >= 0.0 &&
                   l2_shrinkage_regularization_strength >= 0.0 && beta >= 0.0,
               "{}: l1/l2/l2_shrinkage regularization strengths and beta must be >= 0", n);
  WEFT_REQUIRE(beta_2_decay < 0.0, "{}: beta_2_decay must be negative (the decay rate 1 - t^beta_2_decay), got {}",
               n, beta_2_decay);
  WEFT_REQUIRE(epsilon_1 >= 0.0 && epsilon_2 >= 0.0 && clip_threshold > 0.0,
               "{}: epsilon_1, epsilon_2 must be >= 0 and clip_threshold > 0, got {}, {}, {}", n, epsilon_1, epsilon_2,
               clip_threshold);
  WEFT_REQUIRE(weight_decay >= 0.0, "{}: weight_decay must be >= 0, got {}", n, weight_decay);
  WEFT_REQUIRE(clipnorm >= 0.0 && clipvalue >= 0.0 && global_clipnorm >= 0.0,
               "{}: clipnorm, clipvalue and global_clipnorm must be >= 0 (0 = off)", n);
  WEFT_REQUIRE((clipnorm > 0.0) + (clipvalue > 0.0) + (global_clipnorm > 0.0) <= 1,
               "{}: only one of clipnorm ({}), clipvalue ({}) and global_clipnorm ({}) can be set", n, clipnorm,
               clipvalue, global_clipnorm);
  WEFT_REQUIRE(gradient_accumulation_steps >= 0, "{}: gradient_accumulation_steps must be >= 0 (0 or 1 = off), got {}",
               n, gradient_accumulation_steps);
}

Optimizer SGD(Schedule learning_rate, double momentum, bool nesterov) {
  Optimizer o = Make(Optimizer::Kind::kSGD, std::move(learning_rate));
  o.momentum = momentum;
  o.nesterov = nesterov;
  o.Validate();
  return o;
}

Optimizer Adam(Schedule learning_rate, double beta_1, double beta_2, double epsilon, bool amsgrad) {
  Optimizer o = Make(Optimizer::Kind::kAdam, std::move(learning_rate));
  o.beta_1 = beta_1;
  o.beta_2 = beta_2;
  o.epsilon = epsilon;
  o.amsgrad = amsgrad;
  o.Validate();
  return o;
}

Optimizer AdamW(Schedule learning_rate, double weight_decay, double beta_1, double beta_2, double epsilon,
                bool amsgrad) {
  Optimizer o = Adam(std::move(learning_rate), beta_1, beta_2, epsilon, amsgrad);
  o.kind = Optimizer::Kind::kAdamW;
  o.weight_decay = weight_decay;
  o.Validate();
  return o;
}

Optimizer RMSprop(Schedule learning_rate, double rho, double momentum, double epsilon, bool centered) {
  Optimizer o = Make(Optimizer::Kind::kRMSprop, std::move(learning_rate));
  o.rho = rho;
  o.momentum = momentum;
  o.epsilon = epsilon;
  o.centered = centered;
  o.Validate();
  return o;
}

Optimizer Adagrad(Schedule learning_rate, double initial_accumulator_value, double epsilon) {
  Optimizer o = Make(Optimizer::Kind::kAdagrad, std::move(learning_rate));
  o.initial_accumulator_value = initial_accumulator_value;
  o.epsilon = epsilon;
  o.Validate();
  return o;
}

Optimizer Nadam(Schedule learning_rate, double beta_1, double beta_2, double epsilon) {
  Optimizer o = Adam(std::move(learning_rate), beta_1, beta_2, epsilon);
  o.kind = Optimizer::Kind::kNadam;
  return o;
}

Optimizer Adamax(Schedule learning_rate, double beta_1, double beta_2, double epsilon) {
  Optimizer o = Adam(std::move(learning_rate), beta_1, beta_2, epsilon);
  o.kind = Optimizer::Kind::kAdamax;
  return o;
}

Optimizer Adadelta(Schedule learning_rate, double rho, double epsilon) {
  Optimizer o = Make(Optimizer::Kind::kAdadelta, std::move(learning_rate));
  o.rho = rho;
  o.epsilon = epsilon;
  o.Validate();
  return o;
}

Optimizer Ftrl(Schedule learning_rate, double learning_rate_power, double initial_accumulator_value,
               double l1_regularization_strength, double l2_regularization_strength,
               double l2_shrinkage_regularization_strength, double beta) {
  Optimizer o = Make(Optimizer::Kind::kFtrl, std::move(learning_rate));
  o.learning_rate_power = learning_rate_power;
  o.initial_accumulator_value = initial_accumulator_value;
  o.l1_regularization_strength = l1_regularization_strength;
  o.l2_regularization_strength = l2_regularization_strength;
  o.l2_shrinkage_regularization_strength = l2_shrinkage_regularization_strength;
  o.beta = beta;
  o.Validate();
  return o;
}

Optimizer Lion(Schedule learning_rate, double beta_1, double beta_2) {
  Optimizer o = Make(Optimizer::Kind::kLion, std::move(learning_rate));
  o.beta_1 = beta_1;
  o.beta_2 = beta_2;
  o.Validate();
  return o;
}

Optimizer Lamb(Schedule learning_rate, double beta_1, double beta_2, double epsilon) {
  Optimizer o = Adam(std::move(learning_rate), beta_1, beta_2, epsilon);
  o.kind = Optimizer::Kind::kLamb;
  return o;
}

Optimizer Adafactor(Schedule learning_rate, double beta_2_decay, double epsilon_1, double epsilon_2,
                    double clip_threshold, bool relative_step) {
  Optimizer o = Make(Optimizer::Kind::kAdafactor, std::move(learning_rate));
  o.beta_2_decay = beta_2_decay;
  o.epsilon_1 = epsilon_1;
  o.epsilon_2 = epsilon_2;
  o.clip_threshold = clip_threshold;
  o.relative_step = relative_step;
  o.Validate();
  return o;
}

Optimizer OptimizerByName(const std::string& name) {
  static const std::map<std::string, Optimizer (*)()> kByName = {
      {"sgd", [] { return SGD(0.01); }},
      {"momentum", [] { return SGD(0.01, 0.9); }},
      {"adam", [] { return Adam(0.001); }},
      {"adamw", [] { return AdamW(ConstantLR(0.001)); }},
      {"rmsprop", [] { return RMSprop(ConstantLR(0.001)); }},
      {"adagrad", [] { return Adagrad(ConstantLR(0.001)); }},
      {"nadam", [] { return Nadam(ConstantLR(0.001)); }},
      {"adamax", [] { return Adamax(ConstantLR(0.001)); }},
      {"adadelta", [] { return Adadelta(ConstantLR(0.001)); }},
      {"ftrl", [] { return Ftrl(ConstantLR(0.001)); }},
      {"lion", [] { return Lion(ConstantLR(0.001)); }},
      {"lamb", [] { return Lamb(ConstantLR(0.001)); }},
      {"adafactor", [] { return Adafactor(ConstantLR(0.001)); }},
  };
  std::string key;
  for (char c : name) key += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (auto it = kByName.find(key); it != kByName.end()) return it->second();
  std::string known;
  for (const auto& [k, _] : kByName) known += (known.empty() ? "" : ", ") + k;
  throw Error(errors::InvalidArgument("unknown optimizer '{}' (known: {})", name, known));
}

std::string Optimizer::name() const {
  switch (kind) {
    case Kind::kSGD: return "SGD";
    case Kind::kAdam: return "Adam";
    case Kind::kAdamW: return "AdamW";
    case Kind::kRMSprop: return "RMSprop";
    case Kind::kAdagrad: return "Adagrad";
    case Kind::kNadam: return "Nadam";
    case Kind::kAdamax: return "Adamax";
    case Kind::kAdadelta: return "Adadelta";
    case Kind::kFtrl: return "Ftrl";
    case Kind::kLion: return "Lion";
    case Kind::kLamb: return "Lamb";
    case Kind::kAdafactor: return "Adafactor";
  }
  return "?";
}

std::string Optimizer::ToString() const {
  std::string args = "lr=" + learning_rate->ToString();
  switch (kind) {
    case Kind::kSGD:
      if (momentum > 0.0) args += fmt::format(", momentum={}{}", momentum, nesterov ? ", nesterov" : "");
      break;
    case Kind::kAdamW: args += fmt::format(", weight_decay={}", weight_decay); [[fallthrough]];
    case Kind::kAdam: args += fmt::format(", beta_1={}, beta_2={}{}", beta_1, beta_2, amsgrad ? ", amsgrad" : ""); break;
    case Kind::kRMSprop:
      args += fmt::format(", rho={}{}{}", rho, momentum > 0.0 ? fmt::format(", momentum={}", momentum) : "",
                          centered ? ", centered" : "");
      break;
    case Kind::kAdagrad: args += fmt::format(", initial_accumulator_value={}", initial_accumulator_value); break;
    case Kind::kNadam:
    case Kind::kAdamax:
    case Kind::kLion:
    case Kind::kLamb: args += fmt::format(", beta_1={}, beta_2={}", beta_1, beta_2); break;
    case Kind::kAdafactor:
      args += fmt::format(", beta_2_decay={}, epsilon_1={}, epsilon_2={}, clip_threshold={}", beta_2_decay, epsilon_1,
                          epsilon_2, clip_threshold);
      break;
    case Kind::kAdadelta: args += fmt::format(", rho={}", rho); break;
    case Kind::kFtrl:
      args += fmt::format(", learning_rate_power={}, initial_accumulator_value={}, l1={}, l2={}, l2_shrinkage={}, beta={}",
                          learning_rate_power, initial_accumulator_value, l1_regularization_strength,
                          l2_regularization_strength, l2_shrinkage_regularization_strength, beta);
      break;
  }
  if (clipnorm > 0.0) args += fmt::format(", clipnorm={}", clipnorm);
  if (clipvalue > 0.0) args += fmt::format(", clipvalue={}", clipvalue);
  if (global_clipnorm > 0.0) args += fmt::format(", global_clipnorm={}", global_clipnorm);
  if (gradient_accumulation_steps > 1) args += fmt::format(", gradient_accumulation_steps={}", gradient_accumulation_steps);
  return name() + "(" + args + ")";
}

std::vector<Output> Optimizer::Apply(const Scope& s, const std::vector<Output>& vars, const std::vector<Output>& grads_in,
                                     Output lr, Output step, const SlotFactory& make_slot) const {
  WEFT_REQUIRE(vars.size() == grads_in.size(), "Optimizer::Apply: {} variables but {} gradients", vars.size(),
               grads_in.size());
  Validate();
  std::vector<Output> grads = grads_in, squares;
  const bool squared = kind == Kind::kAdam || kind == Kind::kAdamW || kind == Kind::kRMSprop || kind == Kind::kAdagrad ||
                       kind == Kind::kNadam || kind == Kind::kAdadelta || kind == Kind::kFtrl;
  for (const Output& g : grads) {
    squares.push_back(squared || clipnorm > 0.0 || global_clipnorm > 0.0 ? OccurrenceSquares(s, g) : Output{});
  }
  Clip(s, *this, &grads, &squares);
  Output t = ops::Add(s, ops::Cast(s, step, DType::kFloat32), F(s, 1.0));
  std::vector<Output> updates;
  for (size_t i = 0; i < vars.size(); ++i) {
    if (!grads[i].valid()) continue;
    Scope us = s;
    if (weight_decay > 0.0) us = s.WithControlDependencies(std::vector<Output>{DecayWeights(s, vars[i], grads[i], lr, weight_decay)});
    updates.push_back(Update(us, *this, vars[i], grads[i], squares[i], lr, t, make_slot));
  }
  return updates;
}

}  // namespace weft::train
