// GPU kernels of FusedCausalAttention and its gradient op (ops/attention.h; device code in
// attention.cu, the CPU kernels in ops/kernels/cpu/attention.cc). Same inputs, checks and
// outputs as the CPU kernels.
#include "ops/attention.h"
#include "ops/kernels/cuda/gpu_kernel.h"

namespace weft {
namespace {

AttentionShape ShapeOf(const AttentionDims& d) {
  return {d.batch, d.queries, d.keys, d.heads, d.key_dim, d.value_dim};
}

template <typename T>
class FusedCausalAttentionOp : public OpKernel {
 public:
  explicit FusedCausalAttentionOp(const Node& node) : OpKernel(node), scale_(node.attr<double>("scale")) {}
  void Compute(OpKernelContext* ctx) override {
    GpuContext* gpu = GpuOf(ctx);
    const Tensor q = OnDevice(gpu, ctx->input(0)), k = OnDevice(gpu, ctx->input(1)), v = OnDevice(gpu, ctx->input(2));
    const AttentionDims d = CheckAttentionInputs(q, k, v);
    Tensor* out = ctx->allocate_output(0, TensorShape({d.batch, d.queries, d.heads, d.value_dim}));
    Tensor* lse = ctx->allocate_output(1, TensorShape({d.batch, d.heads, d.queries}));
    LaunchAttentionForward<T>(q.data<T>(), k.data<T>(), v.data<T>(), out->data<T>(), lse->data<T>(), ShapeOf(d),
                              static_cast<T>(AttentionScale(scale_, d.key_dim)), gpu->compute_stream());
  }

 private:
  double scale_;
};

template <typename T>
class FusedCausalAttentionGradOp : public OpKernel {
 public:
  explicit FusedCausalAttentionGradOp(const Node& node) : OpKernel(node), scale_(node.attr<double>("scale")) {}
  void Compute(OpKernelContext* ctx) override {
    GpuContext* gpu = GpuOf(ctx);
    std::vector<Tensor> in;
    for (int i = 0; i < 7; ++i) in.push_back(OnDevice(gpu, ctx->input(i)));
    const Tensor &dout = in[0], &q = in[1], &k = in[2], &v = in[3], &out = in[4], &lse = in[5], &dlse = in[6];
    const AttentionDims d = CheckAttentionInputs(q, k, v);
    const bool has_dlse = CheckAttentionGradInputs(d, dout, out, lse, dlse);
    Tensor* dq = ctx->allocate_output(0, q.shape());
    Tensor* dk = ctx->allocate_output(1, k.shape());
    Tensor* dv = ctx->allocate_output(2, v.shape());
    LaunchAttentionGrad<T>(dout.data<T>(), q.data<T>(), k.data<T>(), v.data<T>(), out.data<T>(), lse.data<T>(),
                           has_dlse ? dlse.data<T>() : nullptr, dq->data<T>(), dk->data<T>(), dv->data<T>(),
                           ShapeOf(d), static_cast<T>(AttentionScale(scale_, d.key_dim)), gpu->compute_stream());
  }

 private:
  double scale_;
};

}  // namespace

void RegisterCudaAttentionKernels(KernelRegistry& r) {
  RegisterFloats<FusedCausalAttentionOp>(r, "FusedCausalAttention");
  RegisterFloats<FusedCausalAttentionGradOp>(r, "FusedCausalAttentionGrad");
}

}  // namespace weft
