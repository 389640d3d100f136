// CPU kernels of the random ops (ops/random.cc).
//
// Generator: Philox4x32-10 (Salmon et al., "Parallel random numbers: as easy as 1, 2, 3", the
// generator TF uses), keyed on the op's (seed, seed2). The kernel's e-th value (counting over
// all its runs) is a function of e alone: it reads words of counter block e / kPer (kPer values
// per 128-bit block: 4 float32 uniforms, 2 float64 uniforms, ...; TruncatedNormal redraws from
// blocks (e, draw)). So ParallelFor over elements gives the same values at any thread count,
// and a run only has to reserve its range of e under the mutex. A fresh kernel (a fresh
// Session) starts at e = 0, hence the same sequence; each run continues where the last stopped.
#include <array>
#include <cmath>
#include <mutex>
#include <random>
#include <string>
#include <type_traits>
#include <unordered_set>
#include <vector>

#include "ops/all_ops.h"
#include "ops/kernel.h"
#include "ops/kernels/cpu/array_kernels.h"  // ReadShape
#include "ops/kernels/random_state.h"

namespace weft {

namespace {

// Philox4x32-10 under one key (ops/kernels/philox.h, shared with the GPU kernels).
class Philox {
 public:
  using Block = std::array<uint32_t, 4>;

  explicit Philox(uint64_t key) : key_(key) {}

  // Four 32-bit random words for (index, draw); `stream` separates independent uses of one key.
  Block operator()(uint64_t index, uint32_t draw, uint32_t stream = 0) const {
    Block c;
    philox::Block(key_, index, draw, stream, c.data());
    return c;
  }

 private:
  uint64_t key_;
};

using philox::kWords;
using philox::StandardNormal;
using philox::Uniform01;

// The words of element e of a stream: kPer consecutive elements share Philox block e / kPer,
// so a loop over consecutive elements computes each block once.
template <int kPer>
class BlockReader {
 public:
  explicit BlockReader(const Philox& g) : g_(g) {}
  const Philox& philox() const { return g_; }
  const uint32_t* operator()(uint64_t e) {
    uint64_t b = e / kPer;
    if (b != index_) {
      block_ = g_(b, 0);
      index_ = b;
    }
    return block_.data() + (e % kPer) * (4 / kPer);
  }

 private:
  const Philox& g_;
  Philox::Block block_{};
  uint64_t index_ = ~uint64_t{0};
};

// Fills out[i] = f(reader, base + i) for every element under `key`, in parallel (a reader per
// block of elements; kPer elements per Philox block).
template <typename T, int kPer, typename F>
void GenerateKeyed(OpKernelContext* ctx, uint64_t key, uint64_t base, Tensor* out, F f) {
  int64_t n = out->num_elements();
  if (n == 0) return;
  Philox philox(key);
  T* p = out->data<T>();
  auto fill = [&](int64_t begin, int64_t end) {
    BlockReader<kPer> reader(philox);
    for (int64_t i = begin; i < end; ++i) p[i] = f(reader, base + static_cast<uint64_t>(i));
  };
  if (ctx->intra_op_pool() != nullptr && n >= 4096) {
    ctx->intra_op_pool()->ParallelFor(n, fill);
  } else {
    fill(0, n);
  }
}

// The stateful form: the next n elements of the kernel's stream.
template <typename T, int kPer, typename F>
void Generate(OpKernelContext* ctx, RandomState& state, Tensor* out, F f) {
  int64_t n = out->num_elements();
  if (n == 0) return;
  GenerateKeyed<T, kPer>(ctx, state.key(), state.Reserve(n), out, f);
}

template <typename T>
class RandomUniformOp : public OpKernel {
 public:
  explicit RandomUniformOp(const Node& node)
      : OpKernel(node), state_(node), shape_(node.attr<TensorShape>("shape")),
        lo_(node.attr<double>("minval")), hi_(node.attr<double>("maxval")) {}
  void Compute(OpKernelContext* ctx) override {
    Tensor* out = ctx->allocate_output(0, shape_);
    T lo = static_cast<T>(lo_), range = static_cast<T>(hi_ - lo_);
    Generate<T, 4 / kWords<T>>(ctx, state_, out, [&](auto& words, uint64_t i) {
      T v = lo + range * Uniform01<T>(words(i));
      return v < static_cast<T>(hi_) || range == T(0) ? v : lo;  // rounding can reach maxval
    });
  }

 private:
  RandomState state_;
  TensorShape shape_;
  double lo_, hi_;
};

// RandomUniform's [0, 1) stream with the input's shape.
template <typename T>
class RandomUniformLikeOp : public OpKernel {
 public:
  explicit RandomUniformLikeOp(const Node& node) : OpKernel(node), state_(node) {}
  void Compute(OpKernelContext* ctx) override {
    Tensor* out = ctx->allocate_output(0, ctx->input(0).shape());
    Generate<T, 4 / kWords<T>>(ctx, state_, out, [&](auto& words, uint64_t i) { return Uniform01<T>(words(i)); });
  }

 private:
  RandomState state_;
};

template <typename T>
class RandomNormalOp : public OpKernel {
 public:
  explicit RandomNormalOp(const Node& node)
      : OpKernel(node), state_(node), shape_(node.attr<TensorShape>("shape")),
        mean_(node.attr<double>("mean")), stddev_(node.attr<double>("stddev")) {}
  void Compute(OpKernelContext* ctx) override {
    Tensor* out = ctx->allocate_output(0, shape_);
    T mean = static_cast<T>(mean_), stddev = static_cast<T>(stddev_);
    Generate<T, 2 / kWords<T>>(ctx, state_, out,
                               [&](auto& words, uint64_t i) { return mean + stddev * StandardNormal<T>(words(i)); });
  }

 private:
  RandomState state_;
  TensorShape shape_;
  double mean_, stddev_;
};

template <typename T>
class TruncatedNormalOp : public OpKernel {
 public:
  explicit TruncatedNormalOp(const Node& node)
      : OpKernel(node), state_(node), shape_(node.attr<TensorShape>("shape")),
        mean_(node.attr<double>("mean")), stddev_(node.attr<double>("stddev")) {}
  void Compute(OpKernelContext* ctx) override {
    Tensor* out = ctx->allocate_output(0, shape_);
    T mean = static_cast<T>(mean_), stddev = static_cast<T>(stddev_);
    Generate<T, 1>(ctx, state_, out, [&](auto& words, uint64_t i) {
      // Rejection: each element redraws from its own blocks (i, draw = 1, 2, ...); a draw is
      // rejected with probability 0.0455, so more than a few draws almost never happen.
      T z = StandardNormal<T>(words(i));
      for (uint32_t draw = 1; std::abs(z) > T(2); ++draw) z = StandardNormal<T>(words.philox()(i, draw).data());
      return mean + stddev * z;
    });
  }

 private:
  RandomState state_;
  TensorShape shape_;
  double mean_, stddev_;
};

// output = x * mask, mask = (u >= rate) / (1 - rate) with u uniform in [0, 1).
template <typename T>
class DropoutOp : public OpKernel {
 public:
  explicit DropoutOp(const Node& node) : OpKernel(node), state_(node), rate_(node.attr<double>("rate")) {
    WEFT_REQUIRE(rate_ >= 0.0 && rate_ < 1.0, "rate must be in [0, 1), got {}", rate_);
  }
  void Compute(OpKernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    // Copies of the outputs (they share the buffers): allocating one output may move the other.
    Tensor y = *ctx->allocate_output(0, x.shape());
    Tensor mask = *ctx->allocate_output(1, x.shape());
    T rate = static_cast<T>(rate_), scale = static_cast<T>(1.0 / (1.0 - rate_));
    Generate<T, 4 / kWords<T>>(ctx, state_, &mask,
                               [&](auto& words, uint64_t i) { return Uniform01<T>(words(i)) >= rate ? scale : T(0); });
    y.flat<T>().device(ctx->eigen_device()) = x.flat<T>() * mask.flat<T>();
  }

 private:
  RandomState state_;
  double rate_;
};

// ---- Stateless ops: inputs (shape, seed[2], ...); the values are a function of the inputs alone.

// The Philox key of a seed tensor of shape [2] (int32 or int64).
uint64_t StatelessKey(const Tensor& seed, std::string_view op) {
  WEFT_REQUIRE(seed.rank() == 1 && seed.num_elements() == 2, "{}: seed must have shape [2], got shape {}", op,
               seed.shape().ToString());
  return philox::KeyOf(static_cast<uint64_t>(seed.ElementAsInt64(0)), static_cast<uint64_t>(seed.ElementAsInt64(1)));
}

Tensor* StatelessOutput(OpKernelContext* ctx, std::string_view op) {
  return ctx->allocate_output(0, ReadShape(ctx->input(0), std::string(op) + ": shape"));
}

template <typename T>
class StatelessRandomUniformOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    uint64_t key = StatelessKey(ctx->input(1), "StatelessRandomUniform");
    Tensor* out = StatelessOutput(ctx, "StatelessRandomUniform");
    GenerateKeyed<T, 4 / kWords<T>>(ctx, key, 0, out, [](auto& words, uint64_t i) { return Uniform01<T>(words(i)); });
  }
};

template <typename T>
class StatelessRandomNormalOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    uint64_t key = StatelessKey(ctx->input(1), "StatelessRandomNormal");
    Tensor* out = StatelessOutput(ctx, "StatelessRandomNormal");
    GenerateKeyed<T, 2 / kWords<T>>(ctx, key, 0, out,
                                    [](auto& words, uint64_t i) { return StandardNormal<T>(words(i)); });
  }
};

template <typename T>
class StatelessTruncatedNormalOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    uint64_t key = StatelessKey(ctx->input(1), "StatelessTruncatedNormal");
    Tensor* out = StatelessOutput(ctx, "StatelessTruncatedNormal");
    GenerateKeyed<T, 1>(ctx, key, 0, out, [](auto& words, uint64_t i) {
      T z = StandardNormal<T>(words(i));  // redraws as TruncatedNormalOp does
      for (uint32_t draw = 1; std::abs(z) > T(2); ++draw) z = StandardNormal<T>(words.philox()(i, draw).data());
      return z;
    });
  }
};

// The random bits of one integer: one word (int32) or two (int64).
template <typename T>
uint64_t IntBits(const uint32_t* w) {
  if constexpr (sizeof(T) == 4) {
    return w[0];
  } else {
    return uint64_t{w[0]} << 32 | w[1];
  }
}

// minval + bits mod (maxval - minval), as TF (a bias below 2^-32 of the range for int32 ranges
// under 2^32 / 2^k is accepted, as TF does).
template <typename T>
class StatelessRandomUniformIntOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    const Tensor &lo_t = ctx->input(2), &hi_t = ctx->input(3);
    WEFT_REQUIRE(lo_t.rank() == 0 && hi_t.rank() == 0,
                 "StatelessRandomUniformInt: minval and maxval must be scalars, got shapes {} and {}",
                 lo_t.shape().ToString(), hi_t.shape().ToString());
    T lo = *lo_t.data<T>(), hi = *hi_t.data<T>();
    WEFT_REQUIRE(lo < hi, "StatelessRandomUniformInt: Need minval < maxval, got minval={} maxval={}", lo, hi);
    uint64_t key = StatelessKey(ctx->input(1), "StatelessRandomUniformInt");
    Tensor* out = StatelessOutput(ctx, "StatelessRandomUniformInt");
    using U = std::make_unsigned_t<T>;
    U range = static_cast<U>(static_cast<U>(hi) - static_cast<U>(lo));
    GenerateKeyed<T, 4 / kWords<T>>(ctx, key, 0, out, [&](auto& words, uint64_t i) {
      return static_cast<T>(static_cast<U>(lo) + static_cast<U>(static_cast<U>(IntBits<T>(words(i))) % range));
    });
  }
};

template <typename T>
class StatelessRandomUniformFullIntOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    uint64_t key = StatelessKey(ctx->input(1), "StatelessRandomUniformFullInt");
    Tensor* out = StatelessOutput(ctx, "StatelessRandomUniformFullInt");
    GenerateKeyed<T, 4 / kWords<T>>(ctx, key, 0, out, [](auto& words, uint64_t i) {
      return static_cast<T>(static_cast<std::make_unsigned_t<T>>(IntBits<T>(words(i))));
    });
  }
};

// log(k!) minus its Stirling approximation (k + 1/2) log(k + 1) - (k + 1) + log(2 pi) / 2.
double StirlingTail(double k) {
  return std::lgamma(k + 1) - ((k + 0.5) * std::log(k + 1) - (k + 1) + 0.5 * std::log(2 * M_PI));
}

// One Binomial(n, p) draw, p <= 1/2, from the uniforms u(0), u(1), ... (as TF's kernel): inversion
// by geometric waiting times when n p < 10, else Hormann's BTRS transformed rejection
// ("The generation of binomial random variates", 1993).
template <typename U>
double Binomial(double n, double p, U u) {
  int draw = 0;
  if (n * p < 10) {
    double sum = 0, k = 0, log1mp = std::log1p(-p);
    while (true) {
      double v = u(draw++);
      sum += std::ceil(std::log(1 - v) / log1mp);  // 1 - v in (0, 1]
      if (sum > n) return k;
      k += 1;
    }
  }
  const double stddev = std::sqrt(n * p * (1 - p)), b = 1.15 + 2.53 * stddev, a = -0.0873 + 0.0248 * b + 0.01 * p;
  const double c = n * p + 0.5, v_r = 0.92 - 4.2 / b, r = p / (1 - p), alpha = (2.83 + 5.1 / b) * stddev;
  const double m = std::floor((n + 1) * p);
  while (true) {
    double us_u = u(draw++) - 0.5, v = u(draw++);
    double us = 0.5 - std::abs(us_u);
    double k = std::floor((2 * a / us + b) * us_u + c);
    if (us >= 0.07 && v <= v_r) return k;
    if (k < 0 || k > n || us <= 0) continue;
    v = std::log(v * alpha / (a / (us * us) + b));
    double bound = (m + 0.5) * std::log((m + 1) / (r * (n - m + 1))) + (n + 1) * std::log((n - m + 1) / (n - k + 1)) +
                   (k + 0.5) * std::log(r * (n - k + 1) / (k + 1)) + StirlingTail(m) + StirlingTail(n - m) -
                   StirlingTail(k) - StirlingTail(n - k);
    if (v <= bound) return k;
  }
}

// counts and probs: scalars, or the output's shape, or broadcast to it from the right (a shape that
// is a suffix of the output's, e.g. [batch] params for a [samples, batch] output).
template <typename T>
class StatelessRandomBinomialOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    static constexpr std::string_view kOp = "StatelessRandomBinomial";
    uint64_t key = StatelessKey(ctx->input(1), kOp);
    Tensor* out = StatelessOutput(ctx, kOp);
    const Tensor &counts = ctx->input(2), &probs = ctx->input(3);
    auto suffix = [&](const Tensor& t, const char* what) {
      const TensorShape& s = t.shape();
      bool ok = s.rank() <= out->rank();
      for (int i = 0; ok && i < s.rank(); ++i) ok = s.dim(s.rank() - 1 - i) == out->shape().dim(out->rank() - 1 - i);
      WEFT_REQUIRE(ok, "{}: {} of shape {} must be a scalar or a trailing part of the output shape {}", kOp, what,
                   s.ToString(), out->shape().ToString());
      return std::max<int64_t>(t.num_elements(), 1);
    };
    int64_t nc = suffix(counts, "counts"), np = suffix(probs, "probs");
    const T *cp = counts.data<T>(), *pp = probs.data<T>();
    for (int64_t i = 0; i < nc; ++i) {
      WEFT_REQUIRE(cp[i] >= 0 && std::isfinite(static_cast<double>(cp[i])),
                   "{}: counts must be finite and >= 0, got {}", kOp, static_cast<double>(cp[i]));
    }
    for (int64_t i = 0; i < np; ++i) {
      WEFT_REQUIRE(pp[i] >= 0 && pp[i] <= 1, "{}: probs must be in [0, 1], got {}", kOp, static_cast<double>(pp[i]));
    }
    Philox philox(key);
    auto draw_one = [&](int64_t e) {
      double n = std::floor(static_cast<double>(cp[e % nc])), p = static_cast<double>(pp[e % np]);
      if (n == 0 || p == 0) return 0.0;
      if (p == 1) return n;
      // Element e's uniforms: Philox blocks (e, draw / 2), two float64 uniforms per block.
      auto u = [&](int d) {
        Philox::Block w = philox(static_cast<uint64_t>(e), static_cast<uint32_t>(d / 2));
        return Uniform01<double>(w.data() + 2 * (d % 2));
      };
      return p <= 0.5 ? Binomial(n, p, u) : n - Binomial(n, 1 - p, u);
    };
    auto fill = [&](auto* dst) {
      using D = std::remove_pointer_t<decltype(dst)>;
      auto range = [&](int64_t begin, int64_t end) {
        for (int64_t e = begin; e < end; ++e) dst[e] = static_cast<D>(draw_one(e));
      };
      if (ctx->intra_op_pool() != nullptr && out->num_elements() >= 1024) {
        ctx->intra_op_pool()->ParallelFor(out->num_elements(), range);
      } else {
        range(0, out->num_elements());
      }
    };
    switch (out->dtype()) {
      case DType::kFloat32: fill(out->data<float>()); break;
      case DType::kFloat64: fill(out->data<double>()); break;
      case DType::kInt32: fill(out->data<int32_t>()); break;
      default: fill(out->data<int64_t>()); break;
    }
  }
};

// tf.random.log_uniform_candidate_sampler: classes c in [0, range_max) with P(c) = log((c + 2) /
// (c + 1)) / log(range_max + 1), drawn as floor(exp(u log(range_max + 1))) - 1. unique: draws
// until num_sampled distinct classes, counting the tries; expected counts as TF:
// -expm1(tries * log1p(-P(c))) when unique, num_sampled * P(c) otherwise. Each run continues
// the kernel's stream (RandomState), one Philox block per draw.
class LogUniformCandidateSamplerOp : public OpKernel {
 public:
  explicit LogUniformCandidateSamplerOp(const Node& n)
      : OpKernel(n), state_(n), num_true_(n.attr<int64_t>("num_true")), num_sampled_(n.attr<int64_t>("num_sampled")),
        range_max_(n.attr<int64_t>("range_max")), unique_(n.attr<bool>("unique")) {}
  void Compute(OpKernelContext* ctx) override {
    const Tensor& true_classes = ctx->input(0);
    WEFT_REQUIRE(true_classes.rank() == 2 && true_classes.dim(1) == num_true_,
                 "LogUniformCandidateSampler: true_classes must be [batch, num_true = {}], got shape {}", num_true_,
                 true_classes.shape().ToString());
    const double log_range = std::log1p(static_cast<double>(range_max_));
    auto prob = [&](int64_t c) { return (std::log(c + 2.0) - std::log(c + 1.0)) / log_range; };
    Philox philox(state_.key());
    std::vector<int64_t> sampled;
    std::unordered_set<int64_t> seen;
    int64_t tries = 0;
    // One block index per run; draw d of the run reads its (draw / 2, stream 1 + d % 2) words, so a
    // unique draw may take as many tries as it needs (more as num_sampled nears range_max).
    const uint64_t base = state_.Reserve(1);
    while (static_cast<int64_t>(sampled.size()) < num_sampled_) {
      Philox::Block w = philox(base, static_cast<uint32_t>(tries >> 1), static_cast<uint32_t>(1 + (tries & 1)));
      ++tries;
      const double u = Uniform01<double>(w.data());
      int64_t c = static_cast<int64_t>(std::exp(u * log_range)) - 1;
      c = std::min(std::max<int64_t>(c, 0), range_max_ - 1);
      if (unique_ && !seen.insert(c).second) continue;
      sampled.push_back(c);
    }
    auto expected = [&](int64_t c) {
      const double p = prob(c);
      return static_cast<float>(unique_ ? -std::expm1(static_cast<double>(tries) * std::log1p(-p))
                                        : p * static_cast<double>(num_sampled_));
    };
    Tensor* out = ctx->allocate_output(0, TensorShape({num_sampled_}));
    Tensor* true_count = ctx->allocate_output(1, true_classes.shape());
    Tensor* sampled_count = ctx->allocate_output(2, TensorShape({num_sampled_}));
    for (int64_t i = 0; i < num_sampled_; ++i) {
      out->data<int64_t>()[i] = sampled[i];
      sampled_count->data<float>()[i] = expected(sampled[i]);
    }
    const int64_t* tc = true_classes.data<int64_t>();
    for (int64_t i = 0; i < true_classes.num_elements(); ++i) {
      WEFT_REQUIRE(tc[i] >= 0 && tc[i] < range_max_,
                   "LogUniformCandidateSampler: true_classes[{}] = {} is out of range [0, {})", i, tc[i], range_max_);
      true_count->data<float>()[i] = expected(tc[i]);
    }
  }

 private:
  RandomState state_;
  int64_t num_true_, num_sampled_, range_max_;
  bool unique_;
};

}  // namespace

void RegisterRandomKernels(KernelRegistry& r) {
  RegisterTyped<RandomUniformOp, float, double>(r, "RandomUniform", "dtype");
  RegisterTyped<RandomUniformLikeOp, float, double>(r, "RandomUniformLike");
  RegisterTyped<RandomNormalOp, float, double>(r, "RandomNormal", "dtype");
  RegisterTyped<TruncatedNormalOp, float, double>(r, "TruncatedNormal", "dtype");
  RegisterTyped<DropoutOp, float, double>(r, "Dropout");
  RegisterTyped<StatelessRandomUniformOp, float, double>(r, "StatelessRandomUniform", "dtype");
  RegisterTyped<StatelessRandomNormalOp, float, double>(r, "StatelessRandomNormal", "dtype");
  RegisterTyped<StatelessTruncatedNormalOp, float, double>(r, "StatelessTruncatedNormal", "dtype");
  RegisterTyped<StatelessRandomUniformIntOp, int32_t, int64_t>(r, "StatelessRandomUniformInt", "dtype");
  RegisterTyped<StatelessRandomUniformFullIntOp, int32_t, int64_t>(r, "StatelessRandomUniformFullInt", "dtype");
  RegisterTyped<StatelessRandomBinomialOp, float, double>(r, "StatelessRandomBinomial", "T");
  RegisterUntyped<LogUniformCandidateSamplerOp>(r, "LogUniformCandidateSampler");
}

}  // namespace weft
