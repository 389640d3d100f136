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

class InverseTime : public LearningRateSchedule {
 public:
  InverseTime(double lr, int64_t steps, double rate, bool staircase)
      : lr_(lr), steps_(steps), rate_(rate), staircase_(staircase) {}
  double operator()(int64_t step) const override {
    double p = static_cast<double>(step) / static_cast<double>(steps_);
    if (staircase_) p = std::floor(p);
    return lr_ / (1.0 + rate_ * p);
  }
  std::string ToString() const override {
    return fmt::format("inverse_time_decay({}, rate {} per {} steps{})", lr_, rate_, steps_, staircase_ ? ", staircase" : "");
  }

 private:
  double lr_;
  int64_t steps_;
  double rate_;
  bool staircase_;
};

class Polynomial : public LearningRateSchedule {
 public:
  Polynomial(double lr, int64_t steps, double end, double power, bool cycle)
      : lr_(lr), steps_(steps), end_(end), power_(power), cycle_(cycle) {}
  double operator()(int64_t step) const override {
    double t = static_cast<double>(step), d = static_cast<double>(steps_);
    if (cycle_) {
      d *= step == 0 ? 1.0 : std::ceil(t / d);
    } else {
      t = std::min(t, d);
    }
    return (lr_ - end_) * std::pow(1.0 - t / d, power_) + end_;
  }
  std::string ToString() const override {
    return fmt::format("polynomial_decay({} -> {} over {} steps, power {}{})", lr_, end_, steps_, power_,
                       cycle_ ? ", cycle" : "");
  }

 private:
  double lr_;
  int64_t steps_;
  double end_, power_;
  bool cycle_;
};

class CosineRestarts : public LearningRateSchedule {
 public:
  CosineRestarts(double lr, int64_t steps, double t_mul, double m_mul, double alpha)
      : lr_(lr), steps_(steps), t_mul_(t_mul), m_mul_(m_mul), alpha_(alpha) {}
  double operator()(int64_t step) const override {
    double f = static_cast<double>(step) / static_cast<double>(steps_), i = 0.0;
    if (t_mul_ == 1.0) {
      i = std::floor(f);
      f -= i;
    } else {
      i = std::floor(std::log(1.0 - f * (1.0 - t_mul_)) / std::log(t_mul_));
      const double start = (1.0 - std::pow(t_mul_, i)) / (1.0 - t_mul_);
      f = (f - start) / std::pow(t_mul_, i);
    }
    const double cosine = 0.5 * std::pow(m_mul_, i) * (1.0 + std::cos(std::numbers::pi * f));
    return lr_ * ((1.0 - alpha_) * cosine + alpha_);
  }
  std::string ToString() const override {
    return fmt::format("cosine_decay_restarts({}, first {} steps, t_mul {}, m_mul {})", lr_, steps_, t_mul_, m_mul_);
  }

 private:
  double lr_;
  int64_t steps_;
  double t_mul_, m_mul_, alpha_;
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
Schedule InverseTimeDecay(double lr, int64_t decay_steps, double decay_rate, bool staircase) {
  WEFT_REQUIRE(decay_steps > 0, "InverseTimeDecay: decay_steps must be positive, got {}", decay_steps);
  WEFT_REQUIRE(decay_rate >= 0.0, "InverseTimeDecay: decay_rate must be >= 0, got {}", decay_rate);
  RequireRate(lr, "InverseTimeDecay");
  return std::make_shared<InverseTime>(lr, decay_steps, decay_rate, staircase);
}
Schedule PolynomialDecay(double lr, int64_t decay_steps, double end_learning_rate, double power, bool cycle) {
  WEFT_REQUIRE(decay_steps > 0, "PolynomialDecay: decay_steps must be positive, got {}", decay_steps);
  WEFT_REQUIRE(power > 0.0, "PolynomialDecay: power must be positive, got {}", power);
  RequireRate(lr, "PolynomialDecay");
  RequireRate(end_learning_rate, "PolynomialDecay end_learning_rate");
  return std::make_shared<Polynomial>(lr, decay_steps, end_learning_rate, power, cycle);
}
Schedule CosineDecayRestarts(double lr, int64_t first_decay_steps, double t_mul, double m_mul, double alpha) {
  WEFT_REQUIRE(first_decay_steps > 0, "CosineDecayRestarts: first_decay_steps must be positive, got {}",
               first_decay_steps);
  WEFT_REQUIRE(t_mul > 0.0 && m_mul >= 0.0, "CosineDecayRestarts: t_mul must be > 0 and m_mul >= 0, got {} and {}",
               t_mul, m_mul);
  RequireRate(lr, "CosineDecayRestarts");
  return std::make_shared<CosineRestarts>(lr, first_decay_steps, t_mul, m_mul, alpha);
}
Schedule LinearWarmup(Schedule after, int64_t warmup_steps) {
  WEFT_REQUIRE(after != nullptr && warmup_steps >= 0, "LinearWarmup: needs a schedule and warmup_steps >= 0");
  return std::make_shared<Warmup>(std::move(after), warmup_steps);
}

}  // namespace weft::train
