// GPU kernels of the random ops (ops/random.cc): RandomUniform, RandomUniformLike, RandomNormal,
// TruncatedNormal and Dropout, made on the device by train.cu over ops/kernels/philox.h. The generator state
// (RandomState: the key and the stream position) is the CPU kernels', so a seeded op gives the
// same numbers, and Dropout the same mask, on either device.
#include "ops/kernels/cuda/gpu_kernel.h"
#include "ops/kernels/random_state.h"

namespace weft {
namespace {

// RandomUniform, RandomNormal, TruncatedNormal: the CPU kernels' numbers (same seed, same stream
// position), made on the device.
template <typename T, int kKind>  // 0 uniform, 1 normal, 2 truncated normal
class RandomOp : public OpKernel {
 public:
  explicit RandomOp(const Node& n)
      : OpKernel(n), state_(n), shape_(n.attr<TensorShape>("shape")),
        a_(n.attr<double>(kKind == 0 ? "minval" : "mean")), b_(n.attr<double>(kKind == 0 ? "maxval" : "stddev")) {}
  void Compute(OpKernelContext* ctx) override {
    GpuContext* gpu = GpuOf(ctx);
    Tensor* out = ctx->allocate_output(0, shape_);
    const int64_t n = out->num_elements();
    if (n == 0) return;
    const uint64_t base = state_.Reserve(n);
    if constexpr (kKind == 0) {
      LaunchRandomUniform<T>(out->data<T>(), n, state_.key(), base, static_cast<T>(a_), static_cast<T>(b_),
                             gpu->compute_stream());
    } else {
      LaunchRandomNormal<T>(out->data<T>(), n, state_.key(), base, static_cast<T>(a_), static_cast<T>(b_), kKind == 2,
                            gpu->compute_stream());
    }
  }

 private:
  RandomState state_;
  TensorShape shape_;
  double a_, b_;
};
// RandomUniformLike(x): RandomUniform's [0, 1) numbers with x's shape (x's data is not read).
template <typename T>
class RandomUniformLikeOp : public OpKernel {
 public:
  explicit RandomUniformLikeOp(const Node& n) : OpKernel(n), state_(n) {}
  void Compute(OpKernelContext* ctx) override {
    GpuContext* gpu = GpuOf(ctx);
    Tensor* out = ctx->allocate_output(0, ctx->input(0).shape());
    const int64_t n = out->num_elements();
    if (n == 0) return;
    LaunchRandomUniform<T>(out->data<T>(), n, state_.key(), state_.Reserve(n), T(0), T(1), gpu->compute_stream());
  }

 private:
  RandomState state_;
};

// Dropout(x): y = x * mask, mask = (u >= rate) / (1 - rate) with u the CPU kernel's uniforms
// (same seed, same stream position: the same mask on either device).
template <typename T>
class DropoutOp : public OpKernel {
 public:
  explicit DropoutOp(const Node& n) : OpKernel(n), state_(n), rate_(n.attr<double>("rate")) {
    WEFT_REQUIRE(rate_ >= 0.0 && rate_ < 1.0, "rate must be in [0, 1), got {}", rate_);
  }
  void Compute(OpKernelContext* ctx) override {
    GpuContext* gpu = GpuOf(ctx);
    const Tensor x = OnDevice(gpu, ctx->input(0));
    // Copies of the outputs (they share the buffers): allocating one output may move the other.
    Tensor y = *ctx->allocate_output(0, x.shape());
    Tensor mask = *ctx->allocate_output(1, x.shape());
    const int64_t n = x.num_elements();
    if (n == 0) return;
    LaunchDropout<T>(x.data<T>(), y.data<T>(), mask.data<T>(), n, state_.key(), state_.Reserve(n),
                     static_cast<T>(rate_), static_cast<T>(1.0 / (1.0 - rate_)), gpu->compute_stream());
  }

 private:
  RandomState state_;
  double rate_;
};

template <typename T> using RandomUniformOp = RandomOp<T, 0>;
template <typename T> using RandomNormalOp = RandomOp<T, 1>;
template <typename T> using TruncatedNormalOp = RandomOp<T, 2>;

}  // namespace

void RegisterCudaRandomKernels(KernelRegistry& r) {
  RegisterTyped<RandomUniformOp, float, double>(r, "RandomUniform", "dtype", "GPU");
  RegisterTyped<RandomUniformLikeOp, float, double>(r, "RandomUniformLike", "T", "GPU");
  RegisterTyped<RandomNormalOp, float, double>(r, "RandomNormal", "dtype", "GPU");
  RegisterTyped<TruncatedNormalOp, float, double>(r, "TruncatedNormal", "dtype", "GPU");
  RegisterTyped<DropoutOp, float, double>(r, "Dropout", "T", "GPU");
}

}  // namespace weft
