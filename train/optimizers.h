// Optimizers (SGD with momentum / Nesterov, Adam) and learning-rate schedules.
//
//   Optimizer opt = SGD(Warmup(CosineDecay(0.1, 10000), 500), /*momentum=*/0.9, /*nesterov=*/true);
//   // in Model::Compile: opt.Apply(scope, vars, grads, lr, step, make_slot) adds the update ops
//
// The learning rate is a function of the step, evaluated on the host and fed to the step
// (so a schedule costs nothing in the graph and is exact); slots (momentum accumulators,
// Adam moments) are variables the model creates and checkpoints with the weights.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "graph/scope.h"

namespace weft::train {

class LearningRateSchedule {
 public:
  virtual ~LearningRateSchedule() = default;
  virtual double operator()(int64_t step) const = 0;  // step counts from 0
  virtual std::string ToString() const = 0;
};
using Schedule = std::shared_ptr<const LearningRateSchedule>;

Schedule ConstantLR(double lr);
// lr * gamma^(step / step_size)
Schedule StepDecay(double lr, int64_t step_size, double gamma = 0.1);
// alpha * lr + (1 - alpha) * lr * (1 + cos(pi * min(step, decay_steps) / decay_steps)) / 2
Schedule CosineDecay(double lr, int64_t decay_steps, double alpha = 0.0);
// Rises linearly from after(0) / warmup_steps to after(0) over the first warmup_steps, then
// follows `after` (counting its steps from the end of the warm-up).
Schedule LinearWarmup(Schedule after, int64_t warmup_steps);

// Creates a slot variable named "<var>/<slot>" initialized to zeros, returns it.
using SlotFactory = std::function<Output(const Output& var, const std::string& slot)>;

struct Optimizer {
  enum class Kind { kSGD, kAdam };
  Kind kind = Kind::kSGD;
  Schedule learning_rate = ConstantLR(0.01);
  double momentum = 0.0;  // SGD
  bool nesterov = false;  // SGD
  double beta_1 = 0.9, beta_2 = 0.999, epsilon = 1e-7;  // Adam (Keras' defaults)

  // One update op per (var, grad) pair (null grads are skipped). `lr` is a float32 scalar,
  // `step` the int64 step counter (before this step's increment).
  std::vector<Output> Apply(const Scope& s, const std::vector<Output>& vars, const std::vector<Output>& grads,
                            Output lr, Output step, const SlotFactory& make_slot) const;
  std::string ToString() const;  // "SGD(lr=0.05, momentum=0.9)"
};

Optimizer SGD(Schedule learning_rate, double momentum = 0.0, bool nesterov = false);
inline Optimizer SGD(double lr = 0.01, double momentum = 0.0, bool nesterov = false) {
  return SGD(ConstantLR(lr), momentum, nesterov);
}
Optimizer Adam(Schedule learning_rate, double beta_1 = 0.9, double beta_2 = 0.999, double epsilon = 1e-7);
inline Optimizer Adam(double lr = 0.001, double beta_1 = 0.9, double beta_2 = 0.999, double epsilon = 1e-7) {
  return Adam(ConstantLR(lr), beta_1, beta_2, epsilon);
}
// By Keras name with its default learning rate: "sgd", "adam"; weft also knows "momentum"
// (SGD with momentum 0.9).
Optimizer OptimizerByName(const std::string& name);

}  // namespace weft::train
