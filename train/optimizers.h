// Optimizers, with Keras' names, arguments, defaults and update formulas (Keras 3), and
// gradient clipping (clipnorm / clipvalue / global_clipnorm). Schedules: train/schedules.h.
//
//   Optimizer opt = SGD(Warmup(CosineDecay(0.1, 10000), 500), /*momentum=*/0.9, /*nesterov=*/true);
//   Optimizer adamw = AdamW(0.001, /*weight_decay=*/0.004);
//   adamw.clipnorm = 1.0;
//   // in Model::Compile: opt.Apply(scope, vars, grads, lr, step, make_slot) adds the update ops
//
// The learning rate is a function of the step, evaluated on the host and fed to the step
// (so a schedule costs nothing in the graph and is exact, and a callback may change a constant
// rate between steps: Model::SetLearningRate); slots (momentum accumulators, Adam moments,
// RMSprop / Adagrad accumulators) are variables the model creates and checkpoints with the weights.
//
// Per step, in Keras' order: clip the gradients, decay the weights (w -= lr * weight_decay * w,
// decoupled, AdamW's default 0.004 and any optimizer's weight_decay), then the update:
//   SGD      m = momentum * m - lr * g; w += m (nesterov: w += momentum * m - lr * g); the slot holds -m
//   Adam     m += (1 - b1)(g - m); v += (1 - b2)(g^2 - v); (amsgrad: v_hat = max(v_hat, v))
//            w -= lr * sqrt(1 - b2^t) / (1 - b1^t) * m / (sqrt(v) + eps), t = step + 1
//   RMSprop  v = rho v + (1 - rho) g^2; (centered: a = rho a + (1 - rho) g, v - a^2 below)
//            d = lr * g / sqrt(v + eps); momentum: mom = momentum * mom + d, w -= mom; else w -= d
//   Adagrad  acc += g^2; w -= lr * g / sqrt(acc + eps), acc starting at initial_accumulator_value
//            (the slot holds the sum of g^2; the initial value is added in the update)
//   Nadam    Adam's moments; u_i = b1 (1 - 0.5 * 0.96^i), u_prod_t = u_1 ... u_t;
//            m_hat = u_{t+1} m / (1 - u_prod_t u_{t+1}) + (1 - u_t) g / (1 - u_prod_t);
//            w -= lr * m_hat / (sqrt(v / (1 - b2^t)) + eps)
//   Adamax   m += (1 - b1)(g - m); u = max(b2 u, |g|); w -= lr * m / ((1 - b1^t)(u + eps))
//   Adadelta a = rho a + (1 - rho) g^2; d = -sqrt(ad + eps) g / sqrt(a + eps);
//            ad = rho ad + (1 - rho) d^2; w += lr * d
//   Ftrl     McMahan's FTRL-proximal with Keras' arguments (learning_rate_power, l1/l2/l2-shrinkage
//            strengths, beta); the accumulator starts at initial_accumulator_value (slot: minus it)
//   Lion     w -= lr * sign(b1 m + (1 - b1) g); m = b2 m + (1 - b2) g
//   Lamb     Adam's moments; u = m_hat / (sqrt(v_hat) + eps); w -= lr * r * u with the trust ratio
//            r = |w| / |u| (1 when either norm is 0), norms over the whole variable
//   Adafactor b2t = 1 - t^beta_2_decay; G = g^2 + epsilon_1; rank >= 2: row / column means
//            R = b2t R + (1 - b2t) mean_{-1}(G), C = b2t C + (1 - b2t) mean_{-2}(G),
//            V = R / mean(R) x C; rank < 2: V = b2t V + (1 - b2t) G; u = g / sqrt(V),
//            u /= max(1, rms(u) / clip_threshold); w -= max(epsilon_2, rms(w)) min(lr, 1/sqrt(t)) u
//            (R and C are held broadcast to the weight's shape: the slot factory makes
//            weight-shaped slots, so Adafactor keeps two weight-sized slots where Keras keeps one
//            and two vectors)
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "graph/scope.h"
#include "train/schedules.h"

namespace weft::train {

// Creates a slot variable named "<var>/<slot>" initialized to zeros, returns it.
using SlotFactory = std::function<Output(const Output& var, const std::string& slot)>;

struct Optimizer {
  enum class Kind { kSGD, kAdam, kAdamW, kRMSprop, kAdagrad, kNadam, kAdamax, kAdadelta, kFtrl, kLion, kLamb, kAdafactor };
  Kind kind = Kind::kSGD;
  Schedule learning_rate = ConstantLR(0.01);
  double momentum = 0.0;  // SGD, RMSprop
  bool nesterov = false;  // SGD
  double beta_1 = 0.9, beta_2 = 0.999, epsilon = 1e-7;  // Adam family, Lion; epsilon: all but SGD, Ftrl, Lion
  bool amsgrad = false;                                  // Adam, AdamW
  double rho = 0.9;                                      // RMSprop, Adadelta
  bool centered = false;                                 // RMSprop
  double initial_accumulator_value = 0.1;                // Adagrad, Ftrl
  double learning_rate_power = -0.5;                     // Ftrl
  double l1_regularization_strength = 0.0, l2_regularization_strength = 0.0;  // Ftrl
  double l2_shrinkage_regularization_strength = 0.0, beta = 0.0;              // Ftrl
  double beta_2_decay = -0.8, epsilon_1 = 1e-30, epsilon_2 = 1e-3, clip_threshold = 1.0;  // Adafactor
  bool relative_step = true;  // Adafactor: Keras 3 caps the rate at 1/sqrt(t) whatever its value
  double weight_decay = 0.0;  // decoupled: w -= lr * weight_decay * w before the update (AdamW: 0.004)
  // Gradient clipping, 0 = off; at most one (as Keras): each gradient to L2 norm <= clipnorm,
  // each element to [-clipvalue, clipvalue], or all gradients together to global norm <= global_clipnorm.
  double clipnorm = 0.0, clipvalue = 0.0, global_clipnorm = 0.0;
  // Keras 3's gradient_accumulation_steps, 0 or 1 = off: with k > 1 the model's variables change
  // only every k-th training step, by the update of the mean of the k steps' gradients (clipping
  // and weight decay applied to that mean); the other steps add their gradient to an accumulator
  // variable per weight ("<var>/gradient_accumulator", checkpointed with the slots). The step
  // counter (so the learning-rate schedule and Adam's t) counts every step, as Keras' `iterations`.
  int gradient_accumulation_steps = 0;

  // One update op per (var, grad) pair (null grads are skipped). `lr` is a float32 scalar,
  // `step` the int64 step counter (before this step's increment).
  std::vector<Output> Apply(const Scope& s, const std::vector<Output>& vars, const std::vector<Output>& grads,
                            Output lr, Output step, const SlotFactory& make_slot) const;
  std::string name() const;      // Keras' class name: "SGD", "Adam", "AdamW", "RMSprop", "Adagrad", ...
  std::string ToString() const;  // "SGD(lr=0.05, momentum=0.9)"
  void Validate() const;         // throws InvalidArgument naming the bad argument
};

Optimizer SGD(Schedule learning_rate, double momentum = 0.0, bool nesterov = false);
inline Optimizer SGD(double lr = 0.01, double momentum = 0.0, bool nesterov = false) {
  return SGD(ConstantLR(lr), momentum, nesterov);
}
Optimizer Adam(Schedule learning_rate, double beta_1 = 0.9, double beta_2 = 0.999, double epsilon = 1e-7,
               bool amsgrad = false);
inline Optimizer Adam(double lr = 0.001, double beta_1 = 0.9, double beta_2 = 0.999, double epsilon = 1e-7) {
  return Adam(ConstantLR(lr), beta_1, beta_2, epsilon);
}
Optimizer AdamW(Schedule learning_rate, double weight_decay = 0.004, double beta_1 = 0.9, double beta_2 = 0.999,
                double epsilon = 1e-7, bool amsgrad = false);
Optimizer RMSprop(Schedule learning_rate, double rho = 0.9, double momentum = 0.0, double epsilon = 1e-7,
                  bool centered = false);
Optimizer Adagrad(Schedule learning_rate, double initial_accumulator_value = 0.1, double epsilon = 1e-7);
Optimizer Nadam(Schedule learning_rate, double beta_1 = 0.9, double beta_2 = 0.999, double epsilon = 1e-7);
Optimizer Adamax(Schedule learning_rate, double beta_1 = 0.9, double beta_2 = 0.999, double epsilon = 1e-7);
Optimizer Adadelta(Schedule learning_rate, double rho = 0.95, double epsilon = 1e-7);
Optimizer Ftrl(Schedule learning_rate, double learning_rate_power = -0.5, double initial_accumulator_value = 0.1,
               double l1_regularization_strength = 0.0, double l2_regularization_strength = 0.0,
               double l2_shrinkage_regularization_strength = 0.0, double beta = 0.0);
Optimizer Lion(Schedule learning_rate, double beta_1 = 0.9, double beta_2 = 0.99);
Optimizer Lamb(Schedule learning_rate, double beta_1 = 0.9, double beta_2 = 0.999, double epsilon = 1e-7);
Optimizer Adafactor(Schedule learning_rate, double beta_2_decay = -0.8, double epsilon_1 = 1e-30,
                    double epsilon_2 = 1e-3, double clip_threshold = 1.0, bool relative_step = true);
// By Keras name with Keras' defaults: "sgd", "adam", "adamw", "rmsprop", "adagrad", "nadam",
// "adamax", "adadelta", "ftrl", "lion", "lamb", "adafactor"; weft also
// knows "momentum" (SGD with momentum 0.9). Unknown names list the known ones.
Optimizer OptimizerByName(const std::string& name);

}  // namespace weft::train
