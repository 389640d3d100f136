// Convolutions on the GPU through cuDNN's legacy API (cuDNN 9 keeps it in libcudnn_cnn /
// libcudnn_ops), over weft's NHWC tensors (ops/nn.cc; the CPU ones are in ops/kernels/cpu/conv.cc).
//
// Filters are HWIO in weft and KRSC (= OHWI) for cuDNN's NHWC filters: they are transposed on the
// device on the way in (and the filter gradient on the way out). TensorFlow's SAME padding puts the
// odd pixel after: cuDNN pads symmetrically, so the input is first padded by that pixel with zeros
// (and the input gradient cropped back). Algorithms come from cuDNN's heuristics
// (cudnnGet*Algorithm_v7), filtered by the session's GPU options (no TF32 unless allowed, only
// deterministic algorithms when asked: PickConvAlgo) and cached per shape in each kernel
// (ops/kernels/cuda/algo_cache.h).
//
// float64 runs on NCHW copies (activations transposed on the device, filters to KCRS): cuDNN's
// NHWC convolutions are for float and half, and a double NHWC convolution may have no algorithm.
// A pass whose output is not empty but one of whose inputs is (zero input channels, an empty batch
// in the filter gradient, zero output channels in the input gradient) is a sum over no terms: its
// output is zeros, and cuDNN, which rejects zero dimensions, is not called.
#include "ops/kernels/cpu/nn_kernels.h"
#include "ops/kernels/cuda/algo_cache.h"
#include "ops/kernels/cuda/cudnn_desc.h"
#include "ops/kernels/cuda/gpu_kernel.h"

namespace weft {
namespace {

using namespace cudnn_internal;

// The attrs and geometry of one convolution, with the extra zero row/column SAME needs after.
struct ConvSetup {
  Conv2DGeometry g;
  int64_t out_c;
  int64_t extra_h, extra_w;  // 0 or 1
  ConvGeometry key_geometry;
};

ConvSetup MakeConvSetup(const Node& node, const std::vector<int64_t>& in, const std::vector<int64_t>& filter) {
  WEFT_REQUIRE(in.size() == 4 && filter.size() == 4, "{}: input [{}] must be NHWC and filter [{}] HWIO",
               node.Describe(), fmt::join(in, ","), fmt::join(filter, ","));
  WEFT_REQUIRE(in[3] == filter[2], "{}: input has {} channels but the filter expects {}", node.Describe(), in[3],
               filter[2]);
  const bool same = ParsePadding(node.attr<std::string>("padding"));
  const auto strides = CheckPair(node.attr<std::vector<int64_t>>("strides"), "strides");
  const auto dilations = CheckPair(node.attr<std::vector<int64_t>>("dilations"), "dilations");
  ConvSetup s{MakeGeometry(in[0], in[1], in[2], in[3], filter[0], filter[1], strides, dilations, same), filter[3], 0, 0,
              {}};
  const Conv2DGeometry& g = s.g;
  if (same) {
    s.extra_h = std::max<int64_t>((g.oh - 1) * g.sh + (g.kh - 1) * g.dh + 1 - g.ih, 0) - 2 * g.pad_top;
    s.extra_w = std::max<int64_t>((g.ow - 1) * g.sw + (g.kw - 1) * g.dw + 1 - g.iw, 0) - 2 * g.pad_left;
  }
  s.key_geometry = {I(g.sh), I(g.sw), I(g.pad_top), I(g.pad_left), I(g.dh), I(g.dw)};
  return s;
}

// cuDNN's layout for T's convolutions (above): NHWC activations with KRSC filters, or NCHW with KCRS.
template <typename T>
constexpr bool kNchw = std::is_same_v<T, double>;

// Permutations for LaunchTranspose4 (output dim i is input dim perm[i]).
constexpr int kNhwcToNchw[4] = {0, 3, 1, 2}, kNchwToNhwc[4] = {0, 2, 3, 1};
constexpr int kHwioToKrsc[4] = {3, 0, 1, 2}, kKrscToHwio[4] = {1, 2, 3, 0};
constexpr int kHwioToKcrs[4] = {3, 2, 0, 1}, kKcrsToHwio[4] = {2, 3, 1, 0};

// Whether T's convolutions may use tensor-core math (TF32: float only, when the session allows it).
template <typename T>
bool TensorMath(const GpuOptions& options) {
  return std::is_same_v<T, float> && options.allow_tf32;
}

// The descriptors of one convolution over the (padded) input, in T's layout, with the math the
// session allows (FMA unless TF32 is: full fp32 products as on the CPU).
template <typename T>
struct ConvDescs {
  TensorDesc x, y;
  FilterDesc w;
  ConvDesc conv;
  ConvDescs(const ConvSetup& s, const GpuOptions& options) {
    const Conv2DGeometry& g = s.g;
    const cudnnTensorFormat_t format = kNchw<T> ? CUDNN_TENSOR_NCHW : CUDNN_TENSOR_NHWC;
    WEFT_CUDNN_CHECK(cudnnSetTensor4dDescriptor(x.get(), format, CudnnType<T>(), I(g.n), I(g.c), I(g.ih + s.extra_h),
                                                I(g.iw + s.extra_w)));
    WEFT_CUDNN_CHECK(cudnnSetTensor4dDescriptor(y.get(), format, CudnnType<T>(), I(g.n), I(s.out_c), I(g.oh), I(g.ow)));
    WEFT_CUDNN_CHECK(cudnnSetFilter4dDescriptor(w.get(), CudnnType<T>(), format, I(s.out_c), I(g.c), I(g.kh), I(g.kw)));
    WEFT_CUDNN_CHECK(cudnnSetConvolution2dDescriptor(conv.get(), I(g.pad_top), I(g.pad_left), I(g.sh), I(g.sw), I(g.dh),
                                                     I(g.dw), CUDNN_CROSS_CORRELATION, CudnnType<T>()));
    WEFT_CUDNN_CHECK(cudnnSetConvolutionMathType(conv.get(), TensorMath<T>(options) ? CUDNN_DEFAULT_MATH : CUDNN_FMA_MATH));
  }
};

// Device scratch of `bytes` (cuDNN workspaces, transposed filters).
Tensor Scratch(GpuContext* gpu, size_t bytes) {
  return Tensor(DType::kUInt8, TensorShape{static_cast<int64_t>(bytes)}, gpu->allocator());
}

// t (rank 4) with its dims permuted: output dim i is t's dim perm[i].
template <typename T>
Tensor Transposed(GpuContext* gpu, const Tensor& t, const int perm[4]) {
  const int64_t dims[4] = {t.dim(0), t.dim(1), t.dim(2), t.dim(3)};
  Tensor out(t.dtype(), TensorShape{dims[perm[0]], dims[perm[1]], dims[perm[2]], dims[perm[3]]}, gpu->allocator());
  LaunchTranspose4<T>(t.data<T>(), out.data<T>(), dims, perm, gpu->compute_stream());
  return out;
}

// An NHWC activation in T's cuDNN layout, and back.
template <typename T>
Tensor ToCudnnLayout(GpuContext* gpu, const Tensor& nhwc) {
  return kNchw<T> ? Transposed<T>(gpu, nhwc, kNhwcToNchw) : nhwc;
}
template <typename T>
Tensor FromCudnnLayout(GpuContext* gpu, const Tensor& t) {
  return kNchw<T> ? Transposed<T>(gpu, t, kNchwToNhwc) : t;
}
// An HWIO filter in T's cuDNN layout (KRSC or KCRS).
template <typename T>
Tensor FilterToCudnn(GpuContext* gpu, const Tensor& hwio) {
  return Transposed<T>(gpu, hwio, kNchw<T> ? kHwioToKcrs : kHwioToKrsc);
}
// An uninitialized tensor for cuDNN to write, of NHWC dims `nhwc` in T's layout.
template <typename T>
Tensor CudnnBuffer(GpuContext* gpu, const std::vector<int64_t>& nhwc) {
  const TensorShape shape = kNchw<T> ? TensorShape{nhwc[0], nhwc[3], nhwc[1], nhwc[2]} : TensorShape(nhwc);
  return Tensor(DTypeOf<T>(), shape, gpu->allocator());
}

template <typename T>
Tensor PaddedInput(GpuContext* gpu, const Tensor& x, const ConvSetup& s) {
  if (s.extra_h == 0 && s.extra_w == 0) return x;
  const Conv2DGeometry& g = s.g;
  Tensor p(x.dtype(), TensorShape{g.n, g.ih + s.extra_h, g.iw + s.extra_w, g.c}, gpu->allocator());
  LaunchPadNhwc<T>(x.data<T>(), p.data<T>(), g.n, g.ih, g.iw, g.c, s.extra_h, s.extra_w, gpu->compute_stream());
  return p;
}

// True (after zero-filling *out) when *out is not empty but one of `inputs` is: a sum over no terms.
bool ZeroWhenNoTerms(GpuContext* gpu, Tensor* out, std::initializer_list<const Tensor*> inputs) {
  for (const Tensor* t : inputs) {
    if (t->num_elements() == 0) {
      WEFT_CUDA_CHECK(cudaMemsetAsync(out->raw_data(), 0, out->bytes(), gpu->compute_stream()));  // 0.0 is all zero bits
      return true;
    }
  }
  return false;
}

constexpr size_t kMaxWorkspace = size_t{1} << 30;

// The first algorithm cuDNN's heuristics rank that PickConvAlgo accepts under the session's options.
template <typename Perf, typename Get>
int ChooseAlgo(const char* what, const ConvKey& key, Get get) {
  Perf perf[16];
  int n = 0;
  WEFT_CUDNN_CHECK(get(perf, 16, &n));
  std::vector<AlgoCandidate> candidates;
  for (int i = 0; i < n; ++i) {
    candidates.push_back({static_cast<int>(perf[i].algo), perf[i].status == CUDNN_STATUS_SUCCESS, perf[i].memory,
                          perf[i].mathType == CUDNN_TENSOR_OP_MATH ||
                              perf[i].mathType == CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION,
                          perf[i].determinism == CUDNN_DETERMINISTIC});
  }
  const std::optional<int> algo = PickConvAlgo(candidates, kMaxWorkspace, key.tf32, key.deterministic);
  if (!algo) {
    throw Error(errors::Unimplemented("cuDNN has no {} algorithm for {} (of {} ranked){}{}", what, key.ToString(), n,
                                      key.tf32 ? "" : " without TF32",
                                      key.deterministic ? ", deterministic" : ""));
  }
  return *algo;
}

// The cached algorithm for `key`, chosen (and cached) on first sight. REQUIRES library_mu.
template <typename Choose>
int CachedAlgo(AlgoCache<int>& cache, const ConvKey& key, Choose choose) {
  if (std::optional<int> a = cache.Find(key)) return *a;
  const int a = choose();
  cache.Insert(key, a);
  return a;
}

template <typename T>
class Conv2DOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    GpuContext* gpu = GpuOf(ctx);
    const Tensor x = OnDevice(gpu, ctx->input(0)), f = OnDevice(gpu, ctx->input(1));
    const ConvSetup s = MakeConvSetup(node(), Dims(x.shape()), Dims(f.shape()));
    Tensor* y = ctx->allocate_output(0, TensorShape{s.g.n, s.g.oh, s.g.ow, s.out_c});
    if (y->num_elements() == 0 || ZeroWhenNoTerms(gpu, y, {&x, &f})) return;
    const Tensor xp = ToCudnnLayout<T>(gpu, PaddedInput<T>(gpu, x, s)), w = FilterToCudnn<T>(gpu, f);
    const Tensor yc = kNchw<T> ? CudnnBuffer<T>(gpu, Dims(y->shape())) : *y;
    const GpuOptions& options = ctx->device().gpu_options;
    ConvDescs<T> d(s, options);
    const ConvKey key = ConvKey::Make(ConvPass::kForward, DTypeOf<T>(), x.shape(), f.shape(), s.key_geometry)
                            .WithMath(TensorMath<T>(options), options.deterministic);
    std::lock_guard<std::mutex> l(gpu->library_mu());
    const auto algo = static_cast<cudnnConvolutionFwdAlgo_t>(CachedAlgo(algos_, key, [&] {
      return ChooseAlgo<cudnnConvolutionFwdAlgoPerf_t>("forward", key, [&](auto* p, int k, int* n) {
        return cudnnGetConvolutionForwardAlgorithm_v7(gpu->cudnn(), d.x.get(), d.w.get(), d.conv.get(), d.y.get(), k, n, p);
      });
    }));
    size_t ws = 0;
    WEFT_CUDNN_CHECK(cudnnGetConvolutionForwardWorkspaceSize(gpu->cudnn(), d.x.get(), d.w.get(), d.conv.get(), d.y.get(), algo, &ws));
    Tensor workspace = Scratch(gpu, ws);
    const T alpha = 1, beta = 0;
    ThrowIfError(CudnnStatus(cudnnConvolutionForward(gpu->cudnn(), &alpha, d.x.get(), xp.raw_data(), d.w.get(), w.raw_data(),
                                                     d.conv.get(), algo, workspace.raw_data(), ws, &beta, d.y.get(),
                                                     yc.raw_data()),
                             "cudnnConvolutionForward " + key.ToString()));
    if (kNchw<T>) {
      const int64_t dims[4] = {yc.dim(0), yc.dim(1), yc.dim(2), yc.dim(3)};
      LaunchTranspose4<T>(yc.data<T>(), y->data<T>(), dims, kNchwToNhwc, gpu->compute_stream());
    }
  }

 private:
  AlgoCache<int> algos_;
};

template <typename T>
class Conv2DBackpropInputOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    GpuContext* gpu = GpuOf(ctx);
    const std::vector<int64_t> in = HostInts(ctx, 0);
    const Tensor f = OnDevice(gpu, ctx->input(1)), dy = OnDevice(gpu, ctx->input(2));
    const ConvSetup s = MakeConvSetup(node(), in, Dims(f.shape()));
    WEFT_REQUIRE(dy.shape() == TensorShape({s.g.n, s.g.oh, s.g.ow, s.out_c}), "{}: out_backprop {} but the output is [{},{},{},{}]",
                 node().Describe(), dy.shape().ToString(), s.g.n, s.g.oh, s.g.ow, s.out_c);
    Tensor* dx = ctx->allocate_output(0, TensorShape(in));
    if (dx->num_elements() == 0 || ZeroWhenNoTerms(gpu, dx, {&f, &dy})) return;
    const bool padded = s.extra_h != 0 || s.extra_w != 0;
    const std::vector<int64_t> padded_dims{s.g.n, s.g.ih + s.extra_h, s.g.iw + s.extra_w, s.g.c};
    // cuDNN writes the (padded) input gradient in T's layout; then back to NHWC and cropped.
    Tensor dxp = padded || kNchw<T> ? CudnnBuffer<T>(gpu, padded_dims) : *dx;
    const Tensor w = FilterToCudnn<T>(gpu, f), dyc = ToCudnnLayout<T>(gpu, dy);
    const GpuOptions& options = ctx->device().gpu_options;
    ConvDescs<T> d(s, options);
    const ConvKey key = ConvKey::Make(ConvPass::kBackwardData, DTypeOf<T>(), TensorShape(in), f.shape(), s.key_geometry)
                            .WithMath(TensorMath<T>(options), options.deterministic);
    {
      std::lock_guard<std::mutex> l(gpu->library_mu());
      const auto algo = static_cast<cudnnConvolutionBwdDataAlgo_t>(CachedAlgo(algos_, key, [&] {
        return ChooseAlgo<cudnnConvolutionBwdDataAlgoPerf_t>("backward-data", key, [&](auto* p, int k, int* n) {
          return cudnnGetConvolutionBackwardDataAlgorithm_v7(gpu->cudnn(), d.w.get(), d.y.get(), d.conv.get(), d.x.get(), k, n, p);
        });
      }));
      size_t ws = 0;
      WEFT_CUDNN_CHECK(cudnnGetConvolutionBackwardDataWorkspaceSize(gpu->cudnn(), d.w.get(), d.y.get(), d.conv.get(), d.x.get(), algo, &ws));
      Tensor workspace = Scratch(gpu, ws);
      const T alpha = 1, beta = 0;
      ThrowIfError(CudnnStatus(cudnnConvolutionBackwardData(gpu->cudnn(), &alpha, d.w.get(), w.raw_data(), d.y.get(), dyc.raw_data(),
                                                            d.conv.get(), algo, workspace.raw_data(), ws, &beta, d.x.get(),
                                                            dxp.raw_data()),
                               "cudnnConvolutionBackwardData " + key.ToString()));
    }
    if (kNchw<T>) {
      const int64_t dims[4] = {dxp.dim(0), dxp.dim(1), dxp.dim(2), dxp.dim(3)};
      if (!padded) {
        LaunchTranspose4<T>(dxp.data<T>(), dx->data<T>(), dims, kNchwToNhwc, gpu->compute_stream());
        return;
      }
      dxp = FromCudnnLayout<T>(gpu, dxp);
    }
    if (padded) {
      LaunchCropNhwc<T>(dxp.data<T>(), dx->data<T>(), s.g.n, s.g.ih, s.g.iw, s.g.c, s.extra_h, s.extra_w, gpu->compute_stream());
    }
  }

 private:
  AlgoCache<int> algos_;
};

template <typename T>
class Conv2DBackpropFilterOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    GpuContext* gpu = GpuOf(ctx);
    const Tensor x = OnDevice(gpu, ctx->input(0)), dy = OnDevice(gpu, ctx->input(2));
    const std::vector<int64_t> fs = HostInts(ctx, 1);
    const ConvSetup s = MakeConvSetup(node(), Dims(x.shape()), fs);
    WEFT_REQUIRE(dy.shape() == TensorShape({s.g.n, s.g.oh, s.g.ow, s.out_c}), "{}: out_backprop {} but the output is [{},{},{},{}]",
                 node().Describe(), dy.shape().ToString(), s.g.n, s.g.oh, s.g.ow, s.out_c);
    Tensor* df = ctx->allocate_output(0, TensorShape(fs));
    if (df->num_elements() == 0 || ZeroWhenNoTerms(gpu, df, {&x, &dy})) return;
    const Tensor xp = ToCudnnLayout<T>(gpu, PaddedInput<T>(gpu, x, s)), dyc = ToCudnnLayout<T>(gpu, dy);
    // KRSC for NHWC, KCRS for NCHW.
    const TensorShape dw_shape = kNchw<T> ? TensorShape{fs[3], fs[2], fs[0], fs[1]} : TensorShape{fs[3], fs[0], fs[1], fs[2]};
    Tensor dw(x.dtype(), dw_shape, gpu->allocator());
    const GpuOptions& options = ctx->device().gpu_options;
    ConvDescs<T> d(s, options);
    const ConvKey key = ConvKey::Make(ConvPass::kBackwardFilter, DTypeOf<T>(), x.shape(), TensorShape(fs), s.key_geometry)
                            .WithMath(TensorMath<T>(options), options.deterministic);
    {
      std::lock_guard<std::mutex> l(gpu->library_mu());
      const auto algo = static_cast<cudnnConvolutionBwdFilterAlgo_t>(CachedAlgo(algos_, key, [&] {
        return ChooseAlgo<cudnnConvolutionBwdFilterAlgoPerf_t>("backward-filter", key, [&](auto* p, int k, int* n) {
          return cudnnGetConvolutionBackwardFilterAlgorithm_v7(gpu->cudnn(), d.x.get(), d.y.get(), d.conv.get(), d.w.get(), k, n, p);
        });
      }));
      size_t ws = 0;
      WEFT_CUDNN_CHECK(cudnnGetConvolutionBackwardFilterWorkspaceSize(gpu->cudnn(), d.x.get(), d.y.get(), d.conv.get(), d.w.get(), algo, &ws));
      Tensor workspace = Scratch(gpu, ws);
      const T alpha = 1, beta = 0;
      ThrowIfError(CudnnStatus(cudnnConvolutionBackwardFilter(gpu->cudnn(), &alpha, d.x.get(), xp.raw_data(), d.y.get(),
                                                              dyc.raw_data(), d.conv.get(), algo, workspace.raw_data(), ws,
                                                              &beta, d.w.get(), dw.raw_data()),
                               "cudnnConvolutionBackwardFilter " + key.ToString()));
    }
    const int64_t dims[4] = {dw.dim(0), dw.dim(1), dw.dim(2), dw.dim(3)};
    LaunchTranspose4<T>(dw.data<T>(), df->data<T>(), dims, kNchw<T> ? kKcrsToHwio : kKrscToHwio, gpu->compute_stream());
  }

 private:
  AlgoCache<int> algos_;
};

}  // namespace

void RegisterCudaConvKernels(KernelRegistry& r) {
  RegisterTyped<Conv2DOp, float, double>(r, "Conv2D", "T", "GPU");
  RegisterTyped<Conv2DBackpropInputOp, float, double>(r, "Conv2DBackpropInput", "T", "GPU");
  RegisterTyped<Conv2DBackpropFilterOp, float, double>(r, "Conv2DBackpropFilter", "T", "GPU");
}

}  // namespace weft
