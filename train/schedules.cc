#include "train/schedules.h"

#include <algorithm>
#include <cmath>
#include <numbers>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/status.h"

namespace weft::train {
namespace {

class Constant : public LearningRateSchedule {
 public:
  explicit Constant(double lr) : lr_(lr) {}
  double operator()(int64_t) const override { return lr_; }
  std::string ToString() const override { return fmt::format("{}", lr_); }
  bool constant() const override { return true; }

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

class Exponential : public LearningRateSchedule {
 public:
  Exponential(double lr, int64_t steps, double rate, bool staircase)
      : lr_(lr), steps_(steps), rate_(rate), staircase_(staircase) {}
  double operator()(int64_t step) const override {
    double p = static_cast<double>(step) / static_cast<double>(steps_);
    if (staircase_) p = std::floor(p);
    return lr_ * std::pow(rate_, p);
  }
  std::string ToString() const override {
    return fmt::format("exponential_decay({}, x{} every {} steps{})", lr_, rate_, steps_, staircase_ ? ", staircase" : "");
  }

 private:
  double lr_;
  int64_t steps_;
  double rate_;
  bool staircase_;
};

class Piecewise : public LearningRateSchedule {
 public:
  Piecewise(std::vector<int64_t> b, std::vector<double> v) : boundaries_(std::move(b)), values_(std::move(v)) {}
  double operator()(int64_t step) const override {
    // The first boundary >= step picks its value; past every boundary, the last value.
    const auto it = std::lower_bound(boundaries_.begin(), boundaries_.end(), step);
    return values_[static_cast<size_t>(it - boundaries_.begin())];
  }
  std::string ToString() const override {
    return fmt::format("piecewise_constant_decay(boundaries=[{}], values=[{}])", fmt::join(boundaries_, ", "),
                       fmt::join(values_, ", "));
  }

 private:
  std::vector<int64_t> boundaries_;
  std::vector<double> values_;
};

class Cosine : public LearningRateSchedule {
 public:
  Cosine(double lr, int64_t steps, double alpha, std::optional<double> target, int64_t warmup)
      : lr_(lr), steps_(steps), alpha_(alpha), target_(target), warmup_(warmup) {}
  double operator()(int64_t step) const override {
    if (!target_) return Decayed(lr_, std::min(step, steps_));
    if (step < warmup_) return lr_ + (*target_ - lr_) * static_cast<double>(step) / static_cast<double>(warmup_);
    return Decayed(*target_, std::min(step - warmup_, steps_));
  }
  std::string ToString() const override {
    if (!target_) return fmt::format("cosine_decay({}, {} steps)", lr_, steps_);
    return fmt::format("cosine_decay({} -> {} over {} warm-up steps, then {} steps)", lr_, *target_, warmup_, steps_);
  }

 private:
  double Decayed(double from, int64_t step) const {
    const double t = static_cast<double>(step) / static_cast<double>(steps_);
    const double cosine = 0.5 * (1.0 + std::cos(std::numbers::pi * t));
    return from * ((1.0 - alpha_) * cosine + alpha_);
  }
  double lr_;
  int64_t steps_;
  double alpha_;
  std::optional<double> target_;
  int64_t warmup_;
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

void RequireRate(double lr, const char* what) {
  WEFT_REQUIRE(lr >= 0.0 && std::isfinite(lr), "{}: learning rate must be a finite number >= 0, got {}", what, lr);
}

}  // namespace

Schedule ConstantLR(double lr) {
  RequireRate(lr, "learning_rate");
  return std::make_shared<Constant>(lr);
}
Schedule StepDecay(double lr, int64_t step_size, double gamma) {
  WEFT_REQUIRE(step_size > 0, "StepDecay: step_size must be positive, got {}", step_size);
  RequireRate(lr, "StepDecay");
  return std::make_shared<Step>(lr, step_size, gamma);
}
Schedule ExponentialDecay(double lr, int64_t decay_steps, double decay_rate, bool staircase) {
  WEFT_REQUIRE(decay_steps > 0, "ExponentialDecay: decay_steps must be positive, got {}", decay_steps);
  WEFT_REQUIRE(decay_rate > 0.0, "ExponentialDecay: decay_rate must be positive, got {}", decay_rate);
  RequireRate(lr, "ExponentialDecay");
  return std::make_shared<Exponential>(lr, decay_steps, decay_rate, staircase);
}
Schedule PiecewiseConstantDecay(std::vector<int64_t> boundaries, std::vector<double> values) {
  WEFT_REQUIRE(values.size() == boundaries.size() + 1,
               "PiecewiseConstantDecay: values must have one more entry than boundaries, got {} values for {} "
               "boundaries", values.size(), boundaries.size());
  WEFT_REQUIRE(std::is_sorted(boundaries.begin(), boundaries.end()),
               "PiecewiseConstantDecay: boundaries must be increasing, got [{}]", fmt::join(boundaries, ", "));
  for (double v : values) RequireRate(v, "PiecewiseConstantDecay");
  return std::make_shared<Piecewise>(std::move(boundaries), std::move(values));
}
Schedule CosineDecay(double lr, int64_t decay_steps, double alpha, std::optional<double> warmup_target,
                     int64_t warmup_steps) {
  WEFT_REQUIRE(decay_steps > 0, "CosineDecay: decay_steps must be positive, got {}", decay_steps);
  WEFT_REQUIRE(!warmup_target || warmup_steps > 0, "CosineDecay: warmup_target needs warmup_steps > 0, got {}",
               warmup_steps);
  RequireRate(lr, "CosineDecay");
  if (warmup_target) RequireRate(*warmup_target, "CosineDecay warmup_target");
  return std::make_shared<Cosine>(lr, decay_steps, alpha, warmup_target, warmup_steps);
}
Schedule LinearWarmup(Schedule after, int64_t warmup_steps) {
  WEFT_REQUIRE(after != nullptr && warmup_steps >= 0, "LinearWarmup: needs a schedule and warmup_steps >= 0");
  return std::make_shared<Warmup>(std::move(after), warmup_steps);
}

}  // namespace weft::train
