// Convolutions on the GPU through cuDNN's legacy API (cuDNN 9 keeps it in libcudnn_cnn /
// libcudnn_ops), over weft's NHWC tensors (ops/nn.cc; the CPU ones are in ops/kernels/cpu/conv.cc).
//
// Filters are HWIO in weft and KRSC (= OHWI) for cuDNN's NHWC filters: they are transposed on the
// device on the way in (and the filter gradient on the way out). TensorFlow's SAME padding puts the
// odd pixel after: cuDNN pads symmetrically, so the input is first padded by that pixel with zeros
// (and the input gradient cropped back). Algorithms come from cuDNN's heuristics
// (cudnnGet*Algorithm_v7), cached per shape in each kernel (ops/kernels/cuda/algo_cache.h).
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

// The descriptors of one convolution over the (padded) input.
template <typename T>
struct ConvDescs {
  TensorDesc x, y;
  FilterDesc w;
  ConvDesc conv;
  explicit ConvDescs(const ConvSetup& s) {
    const Conv2DGeometry& g = s.g;
    SetNhwc<T>(x, g.n, g.ih + s.extra_h, g.iw + s.extra_w, g.c);
    SetNhwc<T>(y, g.n, g.oh, g.ow, s.out_c);
    WEFT_CUDNN_CHECK(cudnnSetFilter4dDescriptor(w.get(), CudnnType<T>(), CUDNN_TENSOR_NHWC, I(s.out_c), I(g.c), I(g.kh), I(g.kw)));
    WEFT_CUDNN_CHECK(cudnnSetConvolution2dDescriptor(conv.get(), I(g.pad_top), I(g.pad_left), I(g.sh), I(g.sw), I(g.dh),
                                                     I(g.dw), CUDNN_CROSS_CORRELATION, CudnnType<T>()));
    WEFT_CUDNN_CHECK(cudnnSetConvolutionMathType(conv.get(), CUDNN_DEFAULT_MATH));
  }
};

// Device scratch of `bytes` (cuDNN workspaces, transposed filters).
Tensor Scratch(GpuContext* gpu, size_t bytes) {
  return Tensor(DType::kUInt8, TensorShape{static_cast<int64_t>(bytes)}, gpu->allocator());
}

template <typename T>
Tensor FilterToKrsc(GpuContext* gpu, const Tensor& hwio) {
  const int64_t dims[4] = {hwio.dim(0), hwio.dim(1), hwio.dim(2), hwio.dim(3)};
  const int perm[4] = {3, 0, 1, 2};
  Tensor out(hwio.dtype(), TensorShape{dims[3], dims[0], dims[1], dims[2]}, gpu->allocator());
  LaunchTranspose4<T>(hwio.data<T>(), out.data<T>(), dims, perm, gpu->compute_stream());
  return out;
}

template <typename T>
Tensor PaddedInput(GpuContext* gpu, const Tensor& x, const ConvSetup& s) {
  if (s.extra_h == 0 && s.extra_w == 0) return x;
  const Conv2DGeometry& g = s.g;
  Tensor p(x.dtype(), TensorShape{g.n, g.ih + s.extra_h, g.iw + s.extra_w, g.c}, gpu->allocator());
  LaunchPadNhwc<T>(x.data<T>(), p.data<T>(), g.n, g.ih, g.iw, g.c, s.extra_h, s.extra_w, gpu->compute_stream());
  return p;
}

constexpr size_t kMaxWorkspace = size_t{1} << 30;

// The first algorithm cuDNN's heuristics rank that succeeds within the workspace limit.
template <typename Perf, typename Get>
int ChooseAlgo(const char* what, Get get) {
  Perf perf[16];
  int n = 0;
  WEFT_CUDNN_CHECK(get(perf, 16, &n));
  for (int i = 0; i < n; ++i) {
    if (perf[i].status == CUDNN_STATUS_SUCCESS && perf[i].memory <= kMaxWorkspace) return static_cast<int>(perf[i].algo);
  }
  throw Error(errors::Unimplemented("cuDNN has no {} algorithm for this convolution", what));
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
    if (y->num_elements() == 0) return;
    const Tensor xp = PaddedInput<T>(gpu, x, s), w = FilterToKrsc<T>(gpu, f);
    ConvDescs<T> d(s);
    const ConvKey key = ConvKey::Make(ConvPass::kForward, DTypeOf<T>(), x.shape(), f.shape(), s.key_geometry);
    std::lock_guard<std::mutex> l(gpu->library_mu());
    const auto algo = static_cast<cudnnConvolutionFwdAlgo_t>(CachedAlgo(algos_, key, [&] {
      return ChooseAlgo<cudnnConvolutionFwdAlgoPerf_t>("forward", [&](auto* p, int k, int* n) {
        return cudnnGetConvolutionForwardAlgorithm_v7(gpu->cudnn(), d.x.get(), d.w.get(), d.conv.get(), d.y.get(), k, n, p);
      });
    }));
    size_t ws = 0;
    WEFT_CUDNN_CHECK(cudnnGetConvolutionForwardWorkspaceSize(gpu->cudnn(), d.x.get(), d.w.get(), d.conv.get(), d.y.get(), algo, &ws));
    Tensor workspace = Scratch(gpu, ws);
    const T alpha = 1, beta = 0;
    ThrowIfError(CudnnStatus(cudnnConvolutionForward(gpu->cudnn(), &alpha, d.x.get(), xp.raw_data(), d.w.get(), w.raw_data(),
                                                     d.conv.get(), algo, workspace.raw_data(), ws, &beta, d.y.get(),
                                                     y->raw_data()),
                             "cudnnConvolutionForward " + key.ToString()));
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
    if (dx->num_elements() == 0) return;
    const bool padded = s.extra_h != 0 || s.extra_w != 0;
    Tensor dxp = padded ? Tensor(dy.dtype(), TensorShape{s.g.n, s.g.ih + s.extra_h, s.g.iw + s.extra_w, s.g.c}, gpu->allocator()) : *dx;
    const Tensor w = FilterToKrsc<T>(gpu, f);
    ConvDescs<T> d(s);
    const ConvKey key = ConvKey::Make(ConvPass::kBackwardData, DTypeOf<T>(), TensorShape(in), f.shape(), s.key_geometry);
    {
      std::lock_guard<std::mutex> l(gpu->library_mu());
      const auto algo = static_cast<cudnnConvolutionBwdDataAlgo_t>(CachedAlgo(algos_, key, [&] {
        return ChooseAlgo<cudnnConvolutionBwdDataAlgoPerf_t>("backward-data", [&](auto* p, int k, int* n) {
          return cudnnGetConvolutionBackwardDataAlgorithm_v7(gpu->cudnn(), d.w.get(), d.y.get(), d.conv.get(), d.x.get(), k, n, p);
        });
      }));
      size_t ws = 0;
      WEFT_CUDNN_CHECK(cudnnGetConvolutionBackwardDataWorkspaceSize(gpu->cudnn(), d.w.get(), d.y.get(), d.conv.get(), d.x.get(), algo, &ws));
      Tensor workspace = Scratch(gpu, ws);
      const T alpha = 1, beta = 0;
      ThrowIfError(CudnnStatus(cudnnConvolutionBackwardData(gpu->cudnn(), &alpha, d.w.get(), w.raw_data(), d.y.get(), dy.raw_data(),
                                                            d.conv.get(), algo, workspace.raw_data(), ws, &beta, d.x.get(),
                                                            dxp.raw_data()),
                               "cudnnConvolutionBackwardData " + key.ToString()));
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
    if (df->num_elements() == 0) return;
    const Tensor xp = PaddedInput<T>(gpu, x, s);
    Tensor dw(x.dtype(), TensorShape{fs[3], fs[0], fs[1], fs[2]}, gpu->allocator());  // KRSC
    ConvDescs<T> d(s);
    const ConvKey key = ConvKey::Make(ConvPass::kBackwardFilter, DTypeOf<T>(), x.shape(), TensorShape(fs), s.key_geometry);
    {
      std::lock_guard<std::mutex> l(gpu->library_mu());
      const auto algo = static_cast<cudnnConvolutionBwdFilterAlgo_t>(CachedAlgo(algos_, key, [&] {
        return ChooseAlgo<cudnnConvolutionBwdFilterAlgoPerf_t>("backward-filter", [&](auto* p, int k, int* n) {
          return cudnnGetConvolutionBackwardFilterAlgorithm_v7(gpu->cudnn(), d.x.get(), d.y.get(), d.conv.get(), d.w.get(), k, n, p);
        });
      }));
      size_t ws = 0;
      WEFT_CUDNN_CHECK(cudnnGetConvolutionBackwardFilterWorkspaceSize(gpu->cudnn(), d.x.get(), d.y.get(), d.conv.get(), d.w.get(), algo, &ws));
      Tensor workspace = Scratch(gpu, ws);
      const T alpha = 1, beta = 0;
      ThrowIfError(CudnnStatus(cudnnConvolutionBackwardFilter(gpu->cudnn(), &alpha, d.x.get(), xp.raw_data(), d.y.get(),
                                                              dy.raw_data(), d.conv.get(), algo, workspace.raw_data(), ws,
                                                              &beta, d.w.get(), dw.raw_data()),
                               "cudnnConvolutionBackwardFilter " + key.ToString()));
    }
    const int64_t dims[4] = {fs[3], fs[0], fs[1], fs[2]};
    const int perm[4] = {1, 2, 3, 0};  // KRSC -> RSCK (HWIO)
    LaunchTranspose4<T>(dw.data<T>(), df->data<T>(), dims, perm, gpu->compute_stream());
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
