// Learning-rate schedules: the rate as a function of the step (counted from 0, as Keras'
// optimizer.iterations), evaluated on the host and fed to each training step.
//
//   Schedule lr = ExponentialDecay(0.1, /*decay_steps=*/1000, /*decay_rate=*/0.96, /*staircase=*/true);
//   double at_2500 = (*lr)(2500);  // 0.1 * 0.96^2
//
// Formulas are Keras' (keras.optimizers.schedules), stated beside each factory.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace weft::train {

class LearningRateSchedule {
 public:
  virtual ~LearningRateSchedule() = default;
  virtual double operator()(int64_t step) const = 0;  // step counts from 0
  virtual std::string ToString() const = 0;
  // True for ConstantLR: a rate a user (or a callback) may replace.
  virtual bool constant() const { return false; }
};
using Schedule = std::shared_ptr<const LearningRateSchedule>;

Schedule ConstantLR(double lr);
// lr * gamma^(step / step_size)
Schedule StepDecay(double lr, int64_t step_size, double gamma = 0.1);
// lr * decay_rate^(step / decay_steps), the exponent floored when staircase.
Schedule ExponentialDecay(double lr, int64_t decay_steps, double decay_rate, bool staircase = false);
// values[0] while step <= boundaries[0], values[i] while boundaries[i-1] < step <= boundaries[i],
// values.back() after the last boundary (values has one more entry than boundaries).
Schedule PiecewiseConstantDecay(std::vector<int64_t> boundaries, std::vector<double> values);
// Without warm-up: cosine(lr, min(step, decay_steps)) where
// cosine(r, t) = r * ((1 - alpha) * (1 + cos(pi * t / decay_steps)) / 2 + alpha).
// With warmup_target: lr + (warmup_target - lr) * step / warmup_steps over the first
// warmup_steps, then cosine(warmup_target, min(step - warmup_steps, decay_steps)).
Schedule CosineDecay(double lr, int64_t decay_steps, double alpha = 0.0, std::optional<double> warmup_target = {},
                     int64_t warmup_steps = 0);
// lr / (1 + decay_rate * step / decay_steps), the ratio floored when staircase.
Schedule InverseTimeDecay(double lr, int64_t decay_steps, double decay_rate, bool staircase = false);
// (lr - end) * (1 - t / d)^power + end with t = min(step, decay_steps), d = decay_steps; with cycle,
// t = step and d = decay_steps * ceil(step / decay_steps) (d = decay_steps at step 0).
Schedule PolynomialDecay(double lr, int64_t decay_steps, double end_learning_rate = 0.0001, double power = 1.0,
                         bool cycle = false);
// SGDR: f = step / first_decay_steps; period i (t_mul == 1: floor(f); else
// floor(log(1 - f (1 - t_mul)) / log(t_mul))) starts at sum_{j<i} t_mul^j and is t_mul^i long,
// f' the fraction of it done; lr * ((1 - alpha) * m_mul^i * (1 + cos(pi f')) / 2 + alpha).
Schedule CosineDecayRestarts(double lr, int64_t first_decay_steps, double t_mul = 2.0, double m_mul = 1.0,
                             double alpha = 0.0);
// Rises linearly from after(0) / warmup_steps to after(0) over the first warmup_steps, then
// follows `after` (counting its steps from the end of the warm-up).
Schedule LinearWarmup(Schedule after, int64_t warmup_steps);

}  // namespace weft::train
