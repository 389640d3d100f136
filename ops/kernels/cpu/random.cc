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

#include "ops/all_ops.h"
#include "ops/kernel.h"
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

// Fills out[i] = f(reader, base + i) for every element, in parallel (a reader per block of
// elements; kPer elements per Philox block).
template <typename T, int kPer, typename F>
void Generate(OpKernelContext* ctx, RandomState& state, Tensor* out, F f) {
  int64_t n = out->num_elements();
  if (n == 0) return;
  uint64_t base = state.Reserve(n);
  Philox philox(state.key());
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

}  // namespace

void RegisterRandomKernels(KernelRegistry& r) {
  RegisterTyped<RandomUniformOp, float, double>(r, "RandomUniform", "dtype");
  RegisterTyped<RandomUniformLikeOp, float, double>(r, "RandomUniformLike");
  RegisterTyped<RandomNormalOp, float, double>(r, "RandomNormal", "dtype");
  RegisterTyped<TruncatedNormalOp, float, double>(r, "TruncatedNormal", "dtype");
  RegisterTyped<DropoutOp, float, double>(r, "Dropout");
}

}  // namespace weft
