// Conv2D and DepthwiseConv2D with their backprops (NHWC input, HWIO / HWCM filters).
//
// Shape key: N = batch, IH/IW = input height/width, C = input channels, KH/KW = filter window,
// O = output channels, M = depthwise multiplier, OH/OW = output height/width,
// rows = N*OH*OW (one per output pixel), K = KH*KW*C (one patch).
//
// Conv2D is one GEMM over im2col patches: col [rows, K] x filter [K, O] = output [rows, O]; the
// HWIO filter flattened is already [K, O] and the NHWC output flattened is already [rows, O], so
// only the patches are copied. Backprop-filter is col^T x dy; backprop-input is dy x filter^T
// followed by col2im (scatter-add of patches). col is built in chunks of rows to bound memory.
// 1x1 filters with stride 1 and no padding skip im2col: the input itself is the col matrix.
#include <algorithm>
#include <cstring>
#include <type_traits>
#include <vector>

#include "ops/all_ops.h"
#include "ops/kernel.h"
#include "ops/kernels/cpu/broadcast.h"
#include "ops/kernels/cpu/channel_sums.h"
#include "ops/kernels/cpu/conv_direct.h"
#include "ops/kernels/cpu/onednn.h"
#include "ops/kernels/cpu/gemm.h"
#include "ops/kernels/cpu/nn_kernels.h"

namespace weft {
namespace {

// Upper bound on elements of a col chunk (16 MiB of float), so big batches do not allocate
// rows*K at once.
constexpr int64_t kMaxColElements = int64_t{1} << 22;

template <typename T>
using Mat = Eigen::TensorMap<Eigen::Tensor<T, 2, Eigen::RowMajor, Eigen::DenseIndex>>;
template <typename T>
using ConstMat = Eigen::TensorMap<Eigen::Tensor<const T, 2, Eigen::RowMajor, Eigen::DenseIndex>>;

// c [m, n] (+)= op(a) x op(b), with op(a) [m, k] (stored [k, m] when ta) and op(b) [k, n]
// (stored [n, k] when tb). Runs on the intra-op pool: Eigen's contraction, or, in a portable build
// on a CPU with AVX-512, MatMul's blocked product over libweft_avx512.so (cpu_dispatch.h).
template <typename T>
void Gemm(OpKernelContext* ctx, const T* a, const T* b, T* c, int64_t m, int64_t k, int64_t n, bool ta, bool tb,
          bool accumulate) {
  if constexpr (std::is_same_v<T, float>) {
    if (WideKernels().gemm_block_f32 != nullptr) {
      GemmProduct<float>{a, b, c, m, n, k, ta, tb, accumulate}.RunParallel(ctx->intra_op_pool());
      return;
    }
  }
  const Eigen::ThreadPoolDevice& d = ctx->eigen_device();
  ConstMat<T> A(a, ta ? k : m, ta ? m : k);
  ConstMat<T> B(b, tb ? n : k, tb ? k : n);
  Mat<T> C(c, m, n);
  Eigen::array<Eigen::IndexPair<Eigen::DenseIndex>, 1> dims = {
      Eigen::IndexPair<Eigen::DenseIndex>(ta ? 0 : 1, tb ? 1 : 0)};
  if (accumulate) {
    C.device(d) += A.contract(B, dims);
  } else {
    C.device(d) = A.contract(B, dims);
  }
}


// Copies n values; short runs (a pixel of a few channels) as a plain loop, not a memcpy call.
template <typename T>
inline void CopyValues(T* dst, const T* src, int64_t n) {
  if (n <= 8) {
    for (int64_t i = 0; i < n; ++i) dst[i] = src[i];
  } else {
    std::memcpy(dst, src, n * sizeof(T));
  }
}

// Output pixel r = (n, oh, ow) of the whole batch, advanced without divisions (64-bit division
// per pixel would cost more than the copy).
struct Pixel {
  int64_t n, oh, ow;
  Pixel(const Conv2DGeometry& g, int64_t r) : n(r / (g.oh * g.ow)), oh((r / g.ow) % g.oh), ow(r % g.ow) {}
  void Next(const Conv2DGeometry& g) {
    if (++ow == g.ow) {
      ow = 0;
      if (++oh == g.oh) {
        oh = 0;
        ++n;
      }
    }
  }
};

// Writes the K = KH*KW*C patch of output pixel p to dst. A filter row whose taps all fall
// inside the input (dilation 1) is one contiguous copy.
template <typename T>
inline void Im2ColPixel(const Conv2DGeometry& g, const T* in, const Pixel& p, T* dst) {
  const int64_t row_len = g.kw * g.c;
  const int64_t iw0 = p.ow * g.sw - g.pad_left;
  const bool row_inside = g.dw == 1 && iw0 >= 0 && iw0 + g.kw <= g.iw;
  for (int64_t kh = 0; kh < g.kh; ++kh) {
    const int64_t ih = p.oh * g.sh - g.pad_top + kh * g.dh;
    if (ih < 0 || ih >= g.ih) {
      std::fill(dst, dst + row_len, T(0));
      dst += row_len;
      continue;
    }
    const T* src = in + (p.n * g.ih + ih) * g.iw * g.c;
    if (row_inside) {
      CopyValues(dst, src + iw0 * g.c, row_len);
      dst += row_len;
      continue;
    }
    for (int64_t kw = 0; kw < g.kw; ++kw, dst += g.c) {
      const int64_t iw = iw0 + kw * g.dw;
      if (iw < 0 || iw >= g.iw) {
        std::fill(dst, dst + g.c, T(0));
      } else {
        CopyValues(dst, src + iw * g.c, g.c);
      }
    }
  }
}

// Fills col rows [r0, r1) (row r = output pixel r of the whole batch) starting at `col`.
template <typename T>
void Im2Col(const Conv2DGeometry& g, const T* in, int64_t r0, int64_t r1, T* col) {
  const int64_t K = g.kh * g.kw * g.c;
  Pixel p(g, r0);
  for (int64_t r = r0; r < r1; ++r, p.Next(g)) Im2ColPixel(g, in, p, col + (r - r0) * K);
}

// Adds the patches of images [n0, n1) (col holds their rows, from image n0) into `in`, which
// must be zeroed for those images.
template <typename T>
void Col2Im(const Conv2DGeometry& g, const T* col, int64_t n0, int64_t n1, T* in) {
  const int64_t K = g.kh * g.kw * g.c;
  const T* src = col;
  for (int64_t n = n0; n < n1; ++n) {
    for (int64_t oh = 0; oh < g.oh; ++oh) {
      for (int64_t ow = 0; ow < g.ow; ++ow) {
        const T* p = src;
        src += K;
        for (int64_t kh = 0; kh < g.kh; ++kh) {
          const int64_t ih = oh * g.sh - g.pad_top + kh * g.dh;
          for (int64_t kw = 0; kw < g.kw; ++kw, p += g.c) {
            const int64_t iw = ow * g.sw - g.pad_left + kw * g.dw;
            if (ih < 0 || ih >= g.ih || iw < 0 || iw >= g.iw) continue;
            T* dst = in + ((n * g.ih + ih) * g.iw + iw) * g.c;
            for (int64_t c = 0; c < g.c; ++c) dst[c] += p[c];
          }
        }
      }
    }
  }
}

// Reads the attrs shared by the conv ops.
struct ConvAttrs {
  std::vector<int64_t> strides, dilations;
  bool same;
  explicit ConvAttrs(const Node& node)
      : strides(CheckPair(node.attr<std::vector<int64_t>>("strides"), "strides")),
        dilations(CheckPair(node.attr<std::vector<int64_t>>("dilations"), "dilations")),
        same(ParsePadding(node.attr<std::string>("padding"))) {}
};

// Reads a rank-1 int tensor of 4 dims (the run-time input/filter shape of a backprop op).
TensorShape ShapeFromTensor(const Tensor& t, const char* what) {
  WEFT_REQUIRE(t.rank() == 1 && t.num_elements() == 4, "{} must be a vector of 4 dims, got {}", what,
               t.DebugString());
  std::vector<int64_t> dims(4);
  for (int i = 0; i < 4; ++i) {
    dims[i] = t.ElementAsInt64(i);
    WEFT_REQUIRE(dims[i] >= 0, "{} has a negative dim: {}", what, t.ValuesString());
  }
  return TensorShape(dims);
}

// Checks input [N,IH,IW,C], filter [KH,KW,FC,X] (FC == C) and dy [N,OH,OW,O] (when given) and
// returns the geometry.
Conv2DGeometry CheckConv(const ConvAttrs& a, const TensorShape& input, const TensorShape& filter,
                         const TensorShape* dy, int64_t out_channels) {
  WEFT_REQUIRE(input.rank() == 4, "input must be rank 4 (NHWC), got shape {}", input.ToString());
  WEFT_REQUIRE(filter.rank() == 4, "filter must be rank 4, got shape {}", filter.ToString());
  WEFT_REQUIRE(filter.dim(0) > 0 && filter.dim(1) > 0, "filter window must be non-empty, got filter {}",
               filter.ToString());
  WEFT_REQUIRE(input.dim(3) == filter.dim(2),
               "input channels {} differ from filter in-channels {}: input {} vs filter {}",
               input.dim(3), filter.dim(2), input.ToString(), filter.ToString());
  Conv2DGeometry g = MakeGeometry(input.dim(0), input.dim(1), input.dim(2), input.dim(3), filter.dim(0),
                                  filter.dim(1), a.strides, a.dilations, a.same);
  if (dy != nullptr) {
    const TensorShape want({g.n, g.oh, g.ow, out_channels});
    WEFT_REQUIRE(*dy == want, "out_backprop has shape {}, expected {} (input {}, filter {})", dy->ToString(),
                 want.ToString(), input.ToString(), filter.ToString());
  }
  return g;
}

// Conv2D, and _FusedConv2D (input 2 = bias, attr activation "None" or "Relu").
template <typename T>
class Conv2DOp : public OpKernel {
 public:
  explicit Conv2DOp(const Node& node)
      : OpKernel(node), a_(node), fused_(node.op() == "_FusedConv2D"),
        relu_(fused_ && node.attr<std::string>("activation") == "Relu") {
    if (fused_) {
      const std::string act = node.attr<std::string>("activation");
      WEFT_REQUIRE(act == "None" || act == "Relu", "activation must be \"None\" or \"Relu\", got \"{}\"", act);
    }
  }
  void Compute(OpKernelContext* ctx) override {
    const Tensor& input = ctx->input(0);
    const Tensor& filter = ctx->input(1);
    const Conv2DGeometry g = CheckConv(a_, input.shape(), filter.shape(), nullptr, 0);
    const int64_t O = filter.dim(3), K = g.kh * g.kw * g.c, rows = g.n * g.oh * g.ow;
    Epilogue<T> ep;
    if (fused_) {
      const Tensor& bias = ctx->input(2);
      WEFT_REQUIRE(bias.rank() == 1 && bias.dim(0) == O, "bias must be a vector of the {} filter out-channels, got {}",
                   O, bias.shape().ToString());
      ep.bias = bias.data<T>();
      ep.relu = relu_;
    }
    Tensor* out = ctx->allocate_output(0, TensorShape({g.n, g.oh, g.ow, O}));
    if (out->num_elements() == 0) return;
    T* y = out->data<T>();
    if (K == 0) {
      std::fill(y, y + out->num_elements(), T(0));
      ep.Run(ctx->intra_op_pool(), y, rows, O);
      return;
    }
    const T* x = input.data<T>();
    const T* f = filter.data<T>();
    if (IsPointwise(g)) {
      Gemm<T>(ctx, x, f, y, rows, K, O, false, false, false);
      ep.Run(ctx->intra_op_pool(), y, rows, O);
      return;
    }
    // oneDNN first where it has a direct kernel: it beats weft's direct loops even for the few
    // input channels of a first layer (bench/README.md, "Kernels").
    if constexpr (std::is_same_v<T, float>) {
      if (dnnl_.Forward(ctx->intra_op_pool(), g, O, x, f, y, ep.bias, ep.relu)) return;
    }
    if (UseDirect(g)) {
      DirectConv(ctx->intra_op_pool(), g, x, f, ep, O, y);
      return;
    }
    const int64_t chunk = std::clamp<int64_t>(kMaxColElements / K, 1, rows);
    Tensor col(DTypeOf<T>(), TensorShape({chunk, K}));
    T* cp = col.data<T>();
    for (int64_t r0 = 0; r0 < rows; r0 += chunk) {
      const int64_t r1 = std::min(rows, r0 + chunk);
      ctx->intra_op_pool()->ParallelFor(r1 - r0, [&](int64_t b, int64_t e) {
        Im2Col(g, x, r0 + b, r0 + e, cp + b * K);
      });
      Gemm<T>(ctx, cp, f, y + r0 * O, r1 - r0, K, O, false, false, false);
    }
    ep.Run(ctx->intra_op_pool(), y, rows, O);
  }

 private:
  ConvAttrs a_;
  bool fused_, relu_;
  DnnlConv dnnl_;
};

// Inputs: input_sizes (int32 [4]), filter [KH,KW,C,O], out_backprop [N,OH,OW,O].
template <typename T>
class Conv2DBackpropInputOp : public OpKernel {
 public:
  explicit Conv2DBackpropInputOp(const Node& node) : OpKernel(node), a_(node) {}
  void Compute(OpKernelContext* ctx) override {
    const TensorShape in_shape = ShapeFromTensor(ctx->input(0), "input_sizes");
    const Tensor& filter = ctx->input(1);
    const Tensor& dy_t = ctx->input(2);
    const int64_t O = filter.rank() == 4 ? filter.dim(3) : 0;
    const Conv2DGeometry g = CheckConv(a_, in_shape, filter.shape(), &dy_t.shape(), O);
    const int64_t K = g.kh * g.kw * g.c, rows = g.n * g.oh * g.ow;
    Tensor* out = ctx->allocate_output(0, in_shape);
    if (out->num_elements() == 0) return;
    T* dx = out->data<T>();
    const T* dy = dy_t.data<T>();
    const T* f = filter.data<T>();
    if (IsPointwise(g) && rows > 0 && O > 0) {
      Gemm<T>(ctx, dy, f, dx, rows, O, K, false, true, false);
      return;
    }
    if constexpr (std::is_same_v<T, float>) {
      if (rows > 0 && O > 0 && dnnl_.BackpropInput(ctx->intra_op_pool(), g, O, dy, f, dx)) return;
    }
    std::fill(dx, dx + out->num_elements(), T(0));
    if (rows == 0 || O == 0) return;
    const int64_t per_image = g.oh * g.ow * K;
    const int64_t images = std::clamp<int64_t>(kMaxColElements / std::max<int64_t>(per_image, 1), 1, g.n);
    Tensor col(DTypeOf<T>(), TensorShape({images * g.oh * g.ow, K}));
    T* cp = col.data<T>();
    for (int64_t n0 = 0; n0 < g.n; n0 += images) {
      const int64_t n1 = std::min(g.n, n0 + images);
      const int64_t r0 = n0 * g.oh * g.ow, r1 = n1 * g.oh * g.ow;
      Gemm<T>(ctx, dy + r0 * O, f, cp, r1 - r0, O, K, false, true, false);
      // Images write disjoint parts of dx, so col2im runs in parallel over them.
      ctx->intra_op_pool()->ParallelFor(n1 - n0, [&](int64_t b, int64_t e) {
        Col2Im(g, cp + b * per_image, n0 + b, n0 + e, dx);
      });
    }
  }

 private:
  ConvAttrs a_;
  DnnlConv dnnl_;
};

// Inputs: input [N,IH,IW,C], filter_sizes (int32 [4]), out_backprop [N,OH,OW,O]. Output: the
// filter gradient [KH,KW,C,O]; _Conv2DBackpropFilterBias also outputs BiasAddGrad(out_backprop) [O],
// computed inside oneDNN's filter-gradient kernel where that runs (one read of dy instead of two).
template <typename T>
class Conv2DBackpropFilterOp : public OpKernel {
 public:
  explicit Conv2DBackpropFilterOp(const Node& node)
      : OpKernel(node), a_(node), bias_(node.op() == "_Conv2DBackpropFilterBias") {}
  void Compute(OpKernelContext* ctx) override {
    const Tensor& input = ctx->input(0);
    const TensorShape f_shape = ShapeFromTensor(ctx->input(1), "filter_sizes");
    const Tensor& dy_t = ctx->input(2);
    const Conv2DGeometry g = CheckConv(a_, input.shape(), f_shape, &dy_t.shape(), f_shape.dim(3));
    Tensor* out = ctx->allocate_output(0, f_shape);
    T* db = bias_ ? ctx->allocate_output(1, TensorShape({f_shape.dim(3)}))->data<T>() : nullptr;
    if (FilterGrad(ctx, g, f_shape, input.data<T>(), dy_t.data<T>(), out, db) || db == nullptr) return;
    const int64_t O = f_shape.dim(3);
    if (O == 0) return;
    // Over blocks fixed by the shape, as BiasAddGrad (the same bits on any number of threads).
    const std::vector<double> sums = ColumnSums<T>(ctx->intra_op_pool(), dy_t.data<T>(), dy_t.num_elements() / O, O);
    for (int64_t o = 0; o < O; ++o) db[o] = static_cast<T>(sums[o]);
  }

 private:
  // Writes the filter gradient into out; true when db (not null) was written too.
  bool FilterGrad(OpKernelContext* ctx, const Conv2DGeometry& g, const TensorShape& f_shape, const T* x, const T* dy,
                  Tensor* out, T* db) {
    const int64_t O = f_shape.dim(3), K = g.kh * g.kw * g.c, rows = g.n * g.oh * g.ow;
    if (out->num_elements() == 0) return false;
    T* df = out->data<T>();
    if (rows == 0) {
      std::fill(df, df + out->num_elements(), T(0));
      return false;
    }
    if (IsPointwise(g)) {
      Gemm<T>(ctx, x, dy, df, K, rows, O, true, false, false);
      return false;
    }
    if constexpr (std::is_same_v<T, float>) {
      // With the bias where oneDNN's kernel for the shape computes it, else without (then the caller sums it).
      if (O > 0 && db != nullptr && dnnl_.BackpropFilter(ctx->intra_op_pool(), g, O, x, dy, df, db)) return true;
      if (O > 0 && dnnl_.BackpropFilter(ctx->intra_op_pool(), g, O, x, dy, df)) return false;
    }
    if (UseDirect(g)) {
      // Each block of output rows sums into its own partial filter gradient; the partials are
      // added up at the end (in block order, so the result does not depend on timing).
      const int64_t out_rows = g.n * g.oh, fsize = K * O;
      // Blocks fixed by the shape, not the thread count (a block costs a K x O partial sum).
      const int64_t blocks = PartialBlocks(out_rows, out_rows * g.ow * fsize);
      std::vector<T> partial((blocks - 1) * fsize, T(0));
      std::fill(df, df + fsize, T(0));
      const int64_t per = (out_rows + blocks - 1) / blocks;
      ctx->intra_op_pool()->ParallelFor(blocks, [&](int64_t b, int64_t e) {
        for (int64_t i = b; i < e; ++i) {
          T* dst = i == 0 ? df : partial.data() + (i - 1) * fsize;
          DirectFilterGrad(g, x, dy, O, i * per, std::min(out_rows, (i + 1) * per), dst);
        }
      });
      for (int64_t i = 1; i < blocks; ++i) {
        const T* p = partial.data() + (i - 1) * fsize;
        for (int64_t j = 0; j < fsize; ++j) df[j] += p[j];
      }
      return false;
    }
    const int64_t chunk = std::clamp<int64_t>(kMaxColElements / K, 1, rows);
    Tensor col(DTypeOf<T>(), TensorShape({chunk, K}));
    T* cp = col.data<T>();
    for (int64_t r0 = 0; r0 < rows; r0 += chunk) {
      const int64_t r1 = std::min(rows, r0 + chunk);
      ctx->intra_op_pool()->ParallelFor(r1 - r0, [&](int64_t b, int64_t e) {
        Im2Col(g, x, r0 + b, r0 + e, cp + b * K);
      });
      Gemm<T>(ctx, cp, dy + r0 * O, df, K, r1 - r0, O, true, false, r0 > 0);
    }
    return false;
  }

  ConvAttrs a_;
  bool bias_;
  DnnlConv dnnl_;
};

// ---- Depthwise: filter [KH,KW,C,M], output channel c*M + m reads input channel c only.

template <typename T>
class DepthwiseConv2DOp : public OpKernel {
 public:
  explicit DepthwiseConv2DOp(const Node& node) : OpKernel(node), a_(node) {}
  void Compute(OpKernelContext* ctx) override {
    const Tensor& input = ctx->input(0);
    const Tensor& filter = ctx->input(1);
    const Conv2DGeometry g = CheckConv(a_, input.shape(), filter.shape(), nullptr, 0);
    const int64_t M = filter.dim(3), CM = g.c * M;
    Tensor* out = ctx->allocate_output(0, TensorShape({g.n, g.oh, g.ow, CM}));
    if (out->num_elements() == 0) return;
    const T* x = input.data<T>();
    const T* f = filter.data<T>();
    T* y = out->data<T>();
    ctx->intra_op_pool()->ParallelFor(g.n * g.oh, [&](int64_t b, int64_t e) {
      for (int64_t r = b; r < e; ++r) {
        const int64_t n = r / g.oh, oh = r % g.oh;
        for (int64_t ow = 0; ow < g.ow; ++ow) {
          T* yp = y + ((n * g.oh + oh) * g.ow + ow) * CM;
          std::fill(yp, yp + CM, T(0));
          for (int64_t kh = 0; kh < g.kh; ++kh) {
            const int64_t ih = oh * g.sh - g.pad_top + kh * g.dh;
            if (ih < 0 || ih >= g.ih) continue;
            for (int64_t kw = 0; kw < g.kw; ++kw) {
              const int64_t iw = ow * g.sw - g.pad_left + kw * g.dw;
              if (iw < 0 || iw >= g.iw) continue;
              const T* xp = x + ((n * g.ih + ih) * g.iw + iw) * g.c;
              const T* fp = f + (kh * g.kw + kw) * CM;
              for (int64_t c = 0; c < g.c; ++c)
                for (int64_t m = 0; m < M; ++m) yp[c * M + m] += xp[c] * fp[c * M + m];
            }
          }
        }
      }
    });
  }

 private:
  ConvAttrs a_;
};

// Inputs: input_sizes (int32 [4]), filter [KH,KW,C,M], out_backprop [N,OH,OW,C*M]. Gathers per
// input pixel (no races): output oh reads ih when oh*sh - pad + kh*dh == ih.
template <typename T>
class DepthwiseConv2DBackpropInputOp : public OpKernel {
 public:
  explicit DepthwiseConv2DBackpropInputOp(const Node& node) : OpKernel(node), a_(node) {}
  void Compute(OpKernelContext* ctx) override {
    const TensorShape in_shape = ShapeFromTensor(ctx->input(0), "input_sizes");
    const Tensor& filter = ctx->input(1);
    const Tensor& dy_t = ctx->input(2);
    const int64_t M = filter.rank() == 4 ? filter.dim(3) : 0;
    const Conv2DGeometry g = CheckConv(a_, in_shape, filter.shape(), &dy_t.shape(), in_shape.dim(3) * M);
    const int64_t CM = g.c * M;
    Tensor* out = ctx->allocate_output(0, in_shape);
    if (out->num_elements() == 0) return;
    const T* dy = dy_t.data<T>();
    const T* f = filter.data<T>();
    T* dx = out->data<T>();
    ctx->intra_op_pool()->ParallelFor(g.n * g.ih, [&](int64_t b, int64_t e) {
      for (int64_t r = b; r < e; ++r) {
        const int64_t n = r / g.ih, ih = r % g.ih;
        for (int64_t iw = 0; iw < g.iw; ++iw) {
          T* dxp = dx + ((n * g.ih + ih) * g.iw + iw) * g.c;
          std::fill(dxp, dxp + g.c, T(0));
          for (int64_t kh = 0; kh < g.kh; ++kh) {
            const int64_t th = ih + g.pad_top - kh * g.dh;
            if (th < 0 || th % g.sh != 0 || th / g.sh >= g.oh) continue;
            const int64_t oh = th / g.sh;
            for (int64_t kw = 0; kw < g.kw; ++kw) {
              const int64_t tw = iw + g.pad_left - kw * g.dw;
              if (tw < 0 || tw % g.sw != 0 || tw / g.sw >= g.ow) continue;
              const int64_t ow = tw / g.sw;
              const T* dyp = dy + ((n * g.oh + oh) * g.ow + ow) * CM;
              const T* fp = f + (kh * g.kw + kw) * CM;
              for (int64_t c = 0; c < g.c; ++c) {
                T acc = 0;
                for (int64_t m = 0; m < M; ++m) acc += dyp[c * M + m] * fp[c * M + m];
                dxp[c] += acc;
              }
            }
          }
        }
      }
    });
  }

 private:
  ConvAttrs a_;
};

// Inputs: input [N,IH,IW,C], filter_sizes (int32 [4]), out_backprop [N,OH,OW,C*M]. Parallel over
// filter taps (each tap owns df[kh, kw, :, :]).
template <typename T>
class DepthwiseConv2DBackpropFilterOp : public OpKernel {
 public:
  explicit DepthwiseConv2DBackpropFilterOp(const Node& node) : OpKernel(node), a_(node) {}
  void Compute(OpKernelContext* ctx) override {
    const Tensor& input = ctx->input(0);
    const TensorShape f_shape = ShapeFromTensor(ctx->input(1), "filter_sizes");
    const Tensor& dy_t = ctx->input(2);
    const int64_t M = f_shape.dim(3);
    const Conv2DGeometry g = CheckConv(a_, input.shape(), f_shape, &dy_t.shape(), f_shape.dim(2) * M);
    const int64_t CM = g.c * M;
    Tensor* out = ctx->allocate_output(0, f_shape);
    if (out->num_elements() == 0) return;
    const T* x = input.data<T>();
    const T* dy = dy_t.data<T>();
    T* df = out->data<T>();
    ctx->intra_op_pool()->ParallelFor(g.kh * g.kw, [&](int64_t b, int64_t e) {
      for (int64_t tap = b; tap < e; ++tap) {
        const int64_t kh = tap / g.kw, kw = tap % g.kw;
        T* dfp = df + tap * CM;
        std::fill(dfp, dfp + CM, T(0));
        for (int64_t n = 0; n < g.n; ++n) {
          for (int64_t oh = 0; oh < g.oh; ++oh) {
            const int64_t ih = oh * g.sh - g.pad_top + kh * g.dh;
            if (ih < 0 || ih >= g.ih) continue;
            for (int64_t ow = 0; ow < g.ow; ++ow) {
              const int64_t iw = ow * g.sw - g.pad_left + kw * g.dw;
              if (iw < 0 || iw >= g.iw) continue;
              const T* xp = x + ((n * g.ih + ih) * g.iw + iw) * g.c;
              const T* dyp = dy + ((n * g.oh + oh) * g.ow + ow) * CM;
              for (int64_t c = 0; c < g.c; ++c)
                for (int64_t m = 0; m < M; ++m) dfp[c * M + m] += xp[c] * dyp[c * M + m];
            }
          }
        }
      }
    });
  }

 private:
  ConvAttrs a_;
};

}  // namespace

void RegisterConvKernels(KernelRegistry& r) {
  RegisterTyped<Conv2DOp, float, double>(r, "Conv2D");
  RegisterTyped<Conv2DOp, float, double>(r, "_FusedConv2D");
  RegisterTyped<Conv2DBackpropInputOp, float, double>(r, "Conv2DBackpropInput");
  RegisterTyped<Conv2DBackpropFilterOp, float, double>(r, "Conv2DBackpropFilter");
  RegisterTyped<Conv2DBackpropFilterOp, float, double>(r, "_Conv2DBackpropFilterBias");
  RegisterTyped<DepthwiseConv2DOp, float, double>(r, "DepthwiseConv2D");
  RegisterTyped<DepthwiseConv2DBackpropInputOp, float, double>(r, "DepthwiseConv2DBackpropInput");
  RegisterTyped<DepthwiseConv2DBackpropFilterOp, float, double>(r, "DepthwiseConv2DBackpropFilter");
}

}  // namespace weft
