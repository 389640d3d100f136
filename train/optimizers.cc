#include "train/optimizers.h"

#include <cmath>
#include <numbers>

#include "ops/framework.h"
#include "ops/math.h"
#include "ops/optimizer.h"

namespace weft::train {
namespace {

class Constant : public LearningRateSchedule {
 public:
  explicit Constant(double lr) : lr_(lr) {}
  double operator()(int64_t) const override { return lr_; }
  std::string ToString() const override { return fmt::format("{}", lr_); }

 private:
  double lr_;
};

class Step : public LearningRateSchedule {
 public:
  Step(double lr, int64_t size, double gamma) : lr_(lr), size_(size), gamma_(gamma) {}
  double operator()(int64_t step) const override {
    return lr_ * std::pow(gamma_, static_cast<double>(step / size_));
  }
  std::string ToString() const override { return fmt::format("step_decay({}, every {}, x{})", lr_, size_, gamma_); }

 private:
  double lr_;
  int64_t size_;
  double gamma_;
};

class Cosine : public LearningRateSchedule {
 public:
  Cosine(double lr, int64_t steps, double alpha) : lr_(lr), steps_(steps), alpha_(alpha) {}
  double operator()(int64_t step) const override {
    const double t = static_cast<double>(std::min(step, steps_)) / static_cast<double>(steps_);
    const double cosine = 0.5 * (1.0 + std::cos(std::numbers::pi * t));
    return lr_ * ((1.0 - alpha_) * cosine + alpha_);
  }
  std::string ToString() const override { return fmt::format("cosine_decay({}, {} steps)", lr_, steps_); }

 private:
  double lr_;
  int64_t steps_;
  double alpha_;
};

class Warmup : public LearningRateSchedule {
 public:
  Warmup(Schedule after, int64_t steps) : after_(std::move(after)), steps_(steps) {}
  double operator()(int64_t step) const override {
    if (step < steps_) return (*after_)(0) * static_cast<double>(step + 1) / static_cast<double>(steps_);
    return (*after_)(step - steps_);
  }
  std::string ToString() const override { return fmt::format("warmup({} steps) then {}", steps_, after_->ToString()); }

 private:
  Schedule after_;
  int64_t steps_;
};

}  // namespace

Schedule ConstantLR(double lr) {
  WEFT_REQUIRE(lr >= 0.0 && std::isfinite(lr), "learning rate must be a finite number >= 0, got {}", lr);
  return std::make_shared<Constant>(lr);
}
Schedule StepDecay(double lr, int64_t step_size, double gamma) {
  WEFT_REQUIRE(step_size > 0, "StepDecay: step_size must be positive, got {}", step_size);
  ConstantLR(lr);
  return std::make_shared<Step>(lr, step_size, gamma);
}
Schedule CosineDecay(double lr, int64_t decay_steps, double alpha) {
  WEFT_REQUIRE(decay_steps > 0, "CosineDecay: decay_steps must be positive, got {}", decay_steps);
  ConstantLR(lr);
  return std::make_shared<Cosine>(lr, decay_steps, alpha);
}
Schedule LinearWarmup(Schedule after, int64_t warmup_steps) {
  WEFT_REQUIRE(after != nullptr && warmup_steps >= 0, "LinearWarmup: needs a schedule and warmup_steps >= 0");
  return std::make_shared<Warmup>(std::move(after), warmup_steps);
}

Optimizer SGD(Schedule learning_rate, double momentum, bool nesterov) {
  WEFT_REQUIRE(momentum >= 0.0 && momentum < 1.0, "SGD: momentum must be in [0, 1), got {}", momentum);
  WEFT_REQUIRE(!nesterov || momentum > 0.0, "SGD: nesterov needs a momentum > 0");
  Optimizer o;
  o.kind = Optimizer::Kind::kSGD;
  o.learning_rate = std::move(learning_rate);
  o.momentum = momentum;
  o.nesterov = nesterov;
  return o;
}

Optimizer Adam(Schedule learning_rate, double beta_1, double beta_2, double epsilon) {
  WEFT_REQUIRE(beta_1 >= 0.0 && beta_1 < 1.0 && beta_2 >= 0.0 && beta_2 < 1.0,
               "Adam: beta_1 and beta_2 must be in [0, 1), got {} and {}", beta_1, beta_2);
  WEFT_REQUIRE(epsilon > 0.0, "Adam: epsilon must be positive, got {}", epsilon);
  Optimizer o;
  o.kind = Optimizer::Kind::kAdam;
  o.learning_rate = std::move(learning_rate);
  o.beta_1 = beta_1;
  o.beta_2 = beta_2;
  o.epsilon = epsilon;
  return o;
}

Optimizer OptimizerByName(const std::string& name) {
  if (name == "sgd") return SGD(0.01);
  if (name == "momentum") return SGD(0.01, 0.9);
  if (name == "adam") return Adam(0.001);
  throw Error(errors::InvalidArgument("unknown optimizer '{}' (known: sgd, momentum, adam)", name));
}

std::string Optimizer::ToString() const {
  const std::string lr = learning_rate->ToString();
  if (kind == Kind::kAdam) return fmt::format("Adam(lr={}, beta_1={}, beta_2={})", lr, beta_1, beta_2);
  if (momentum == 0.0) return fmt::format("SGD(lr={})", lr);
  return fmt::format("SGD(lr={}, momentum={}{})", lr, momentum, nesterov ? ", nesterov" : "");
}

std::vector<Output> Optimizer::Apply(const Scope& s, const std::vector<Output>& vars, const std::vector<Output>& grads,
                                     Output lr, Output step, const SlotFactory& make_slot) const {
  WEFT_REQUIRE(vars.size() == grads.size(), "Optimizer::Apply: {} variables but {} gradients", vars.size(),
               grads.size());
  std::vector<Output> updates;
  if (kind == Kind::kSGD) {
    Output m = ops::ScalarLike(s, DType::kFloat32, momentum);
    for (size_t i = 0; i < vars.size(); ++i) {
      if (!grads[i].valid()) continue;
      if (momentum == 0.0) {
        updates.push_back(ops::ApplyGradientDescent(s, vars[i], lr, grads[i]));
      } else {
        updates.push_back(ops::ApplyMomentum(s, vars[i], make_slot(vars[i], "momentum"), lr, grads[i], m, nesterov));
      }
    }
    return updates;
  }
  // Adam: the bias corrections use beta^t with t = step + 1, computed from the step counter.
  Output t = ops::Add(s, ops::Cast(s, step, DType::kFloat32), ops::ScalarLike(s, DType::kFloat32, 1.0));
  Output b1 = ops::ScalarLike(s, DType::kFloat32, beta_1), b2 = ops::ScalarLike(s, DType::kFloat32, beta_2);
  Output b1_power = ops::Pow(s, b1, t), b2_power = ops::Pow(s, b2, t);
  Output eps = ops::ScalarLike(s, DType::kFloat32, epsilon);
  for (size_t i = 0; i < vars.size(); ++i) {
    if (!grads[i].valid()) continue;
    updates.push_back(ops::ApplyAdam(s, vars[i], make_slot(vars[i], "m"), make_slot(vars[i], "v"), b1_power,
                                     b2_power, lr, b1, b2, eps, grads[i]));
  }
  return updates;
}

}  // namespace weft::train
