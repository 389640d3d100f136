// MaxPool / AvgPool and their gradients over NHWC input.
//
// Shape key: N = batch, IH/IW = input height/width, C = channels, KH/KW = window,
// OH/OW = output height/width. Every loop keeps the channel loop innermost: NHWC makes the C
// values of a pixel contiguous, so those loops vectorize.
//
// As in TensorFlow: SAME padding never takes part in a max (padding is -inf), an average divides
// by the number of in-bounds elements of its window, and MaxPoolGrad routes each gradient to the
// first maximum of its window (row-major order), so ties go to one element. A NaN in a window is
// its max and takes the gradient (the first NaN), as TF's MaxPool propagates NaN.
#include <algorithm>
#include <limits>

#include "ops/all_ops.h"
#include "ops/kernel.h"
#include "ops/kernels/cpu/broadcast.h"
#include "ops/kernels/cpu/nn_kernels.h"
#include "ops/kernels/cuda/launch.h"  // the NaN-propagating comparisons (plain C++)

namespace weft {
namespace {

struct PoolAttrs {
  std::vector<int64_t> ksize, strides;
  bool same;
  explicit PoolAttrs(const Node& node)
      : ksize(CheckPair(node.attr<std::vector<int64_t>>("ksize"), "ksize")),
        strides(CheckPair(node.attr<std::vector<int64_t>>("strides"), "strides")),
        same(ParsePadding(node.attr<std::string>("padding"))) {}

  Conv2DGeometry Geometry(const TensorShape& input) const {
    WEFT_REQUIRE(input.rank() == 4, "input must be rank 4 (NHWC), got shape {}", input.ToString());
    return MakeGeometry(input.dim(0), input.dim(1), input.dim(2), input.dim(3), ksize[0], ksize[1], strides,
                        {1, 1}, same);
  }
};

// The in-bounds window rows [h0, h1) and cols [w0, w1) of output pixel (oh, ow).
struct Span {
  int64_t h0, h1, w0, w1;
};
Span WindowOf(const Conv2DGeometry& g, int64_t oh, int64_t ow) {
  const int64_t hs = oh * g.sh - g.pad_top, ws = ow * g.sw - g.pad_left;
  return {std::max<int64_t>(hs, 0), std::min(hs + g.kh, g.ih), std::max<int64_t>(ws, 0), std::min(ws + g.kw, g.iw)};
}

void CheckGradShape(const Conv2DGeometry& g, const TensorShape& grad) {
  const TensorShape want({g.n, g.oh, g.ow, g.c});
  WEFT_REQUIRE(grad == want, "grad has shape {}, expected the pooled shape {}", grad.ToString(), want.ToString());
}

template <typename T>
class MaxPoolOp : public OpKernel {
 public:
  explicit MaxPoolOp(const Node& node) : OpKernel(node), a_(node) {}
  void Compute(OpKernelContext* ctx) override {
    const Tensor& input = ctx->input(0);
    const Conv2DGeometry g = a_.Geometry(input.shape());
    Tensor* out = ctx->allocate_output(0, TensorShape({g.n, g.oh, g.ow, g.c}));
    if (out->num_elements() == 0) return;
    const T* x = input.data<T>();
    T* y = out->data<T>();
    ParallelForCost(ctx->intra_op_pool(), g.n * g.oh, g.ow * g.kh * g.kw * g.c, [&](int64_t b, int64_t e) {
      for (int64_t r = b; r < e; ++r) {
        const int64_t n = r / g.oh, oh = r % g.oh;
        for (int64_t ow = 0; ow < g.ow; ++ow) {
          const Span s = WindowOf(g, oh, ow);
          T* yp = y + (r * g.ow + ow) * g.c;
          std::fill(yp, yp + g.c, -std::numeric_limits<T>::infinity());
          for (int64_t ih = s.h0; ih < s.h1; ++ih) {
            for (int64_t iw = s.w0; iw < s.w1; ++iw) {
              const T* xp = x + ((n * g.ih + ih) * g.iw + iw) * g.c;
              for (int64_t c = 0; c < g.c; ++c) yp[c] = MaxPropagateNaN(yp[c], xp[c]);
            }
          }
        }
      }
    });
  }

 private:
  PoolAttrs a_;
};

// Inputs: orig_input [N,IH,IW,C], orig_output [N,OH,OW,C], grad [N,OH,OW,C]. Parallel over
// images: windows of one image overlap, windows of different images do not.
// _MaxPoolGradRelu also zeroes the gradient where orig_input <= 0 (ReluGrad with orig_input as
// the Relu's output): at each window's winner, or in a last pass over the image.
template <typename T>
class MaxPoolGradOp : public OpKernel {
 public:
  explicit MaxPoolGradOp(const Node& node) : OpKernel(node), a_(node), relu_(node.op() == "_MaxPoolGradRelu") {}
  void Compute(OpKernelContext* ctx) override {
    const Tensor& input = ctx->input(0);
    const Tensor& grad = ctx->input(2);
    const Conv2DGeometry g = a_.Geometry(input.shape());
    CheckGradShape(g, ctx->input(1).shape());
    CheckGradShape(g, grad.shape());
    Tensor* out = ctx->allocate_output(0, input.shape());
    if (out->num_elements() == 0) return;
    const T* x = input.data<T>();
    const T* dy = grad.data<T>();
    T* dx = out->data<T>();
    const int64_t image = g.ih * g.iw * g.c;
    if (g.sh >= g.kh && g.sw >= g.kw) return NonOverlapping(ctx, g, x, dy, dx);
    // Per window: the running max and the window tap (int32, so the compare-and-blend loop over
    // channels vectorizes) that holds it, then the gradient added at each channel's winning tap.
    ParallelForCost(ctx->intra_op_pool(), g.n, image, [&](int64_t b, int64_t e) {
      std::vector<T> best(g.c);
      std::vector<int32_t> tap(g.c);
      std::vector<int64_t> tap_offset(g.kh * g.kw);
      for (int64_t n = b; n < e; ++n) {
        const T* xi = x + n * image;
        T* dxi = dx + n * image;
        std::fill(dxi, dxi + image, T(0));
        for (int64_t oh = 0; oh < g.oh; ++oh) {
          for (int64_t ow = 0; ow < g.ow; ++ow) {
            const Span s = WindowOf(g, oh, ow);
            int32_t taps = 0;
            for (int64_t ih = s.h0; ih < s.h1; ++ih)
              for (int64_t iw = s.w0; iw < s.w1; ++iw) tap_offset[taps++] = (ih * g.iw + iw) * g.c;
            if (taps == 0) continue;
            const T* first = xi + tap_offset[0];
            T* bp = best.data();
            int32_t* tp = tap.data();
            for (int64_t c = 0; c < g.c; ++c) {
              bp[c] = first[c];
              tp[c] = 0;
            }
            for (int32_t t = 1; t < taps; ++t) {
              const T* xp = xi + tap_offset[t];
              for (int64_t c = 0; c < g.c; ++c) {
                const bool greater = ReplacesExtreme(xp[c], bp[c], true);
                bp[c] = greater ? xp[c] : bp[c];
                tp[c] = greater ? t : tp[c];
              }
            }
            // A masked add per tap rather than a scatter: it vectorizes.
            const T* dyp = dy + ((n * g.oh + oh) * g.ow + ow) * g.c;
            for (int32_t t = 0; t < taps; ++t) {
              T* dxp = dxi + tap_offset[t];
              for (int64_t c = 0; c < g.c; ++c) dxp[c] += tp[c] == t ? dyp[c] : T(0);
            }
          }
        }
        if (relu_) {
          for (int64_t i = 0; i < image; ++i) dxi[i] = xi[i] > T(0) ? dxi[i] : T(0);
        }
      }
    });
  }

 private:
  // Windows that do not overlap (stride >= window, as in the usual 2x2 pool with stride 2):
  // every input element belongs to at most one window, so dx is written exactly once (the
  // gradient at each channel's winning tap, zero at the others) instead of zero-filled and then
  // added to. Elements in no window (a VALID remainder, strides larger than the window) are
  // zeroed separately.
  void NonOverlapping(OpKernelContext* ctx, const Conv2DGeometry& g, const T* x, const T* dy, T* dx) const {
    std::vector<char> row_in(g.ih, 0), col_in(g.iw, 0);
    for (int64_t oh = 0; oh < g.oh; ++oh) {
      const Span s = WindowOf(g, oh, 0);
      for (int64_t ih = s.h0; ih < s.h1; ++ih) row_in[ih] = 1;
    }
    for (int64_t ow = 0; ow < g.ow; ++ow) {
      const Span s = WindowOf(g, 0, ow);
      for (int64_t iw = s.w0; iw < s.w1; ++iw) col_in[iw] = 1;
    }
    const bool covered = std::all_of(row_in.begin(), row_in.end(), [](char c) { return c != 0; }) &&
                         std::all_of(col_in.begin(), col_in.end(), [](char c) { return c != 0; });
    const int64_t image = g.ih * g.iw * g.c;
    std::vector<int64_t> full_offset;  // taps of a window inside the image, from its first element
    for (int64_t dh = 0; dh < g.kh; ++dh)
      for (int64_t dw = 0; dw < g.kw; ++dw) full_offset.push_back((dh * g.iw + dw) * g.c);
    ParallelForCost(ctx->intra_op_pool(), g.n, image, [&](int64_t b, int64_t e) {
      std::vector<int64_t> tap_offset(g.kh * g.kw);
      for (int64_t n = b; n < e; ++n) {
        const T* xi = x + n * image;
        T* dxi = dx + n * image;
        if (!covered) {
          for (int64_t ih = 0; ih < g.ih; ++ih) {
            for (int64_t iw = 0; iw < g.iw; ++iw) {
              if (row_in[ih] && col_in[iw]) continue;
              T* p = dxi + (ih * g.iw + iw) * g.c;
              std::fill(p, p + g.c, T(0));
            }
          }
        }
        for (int64_t oh = 0; oh < g.oh; ++oh) {
          for (int64_t ow = 0; ow < g.ow; ++ow) {
            // A window inside the image uses the precomputed tap offsets; a clipped one (SAME
            // padding) lists its in-bounds taps.
            const int64_t hs = oh * g.sh - g.pad_top, ws = ow * g.sw - g.pad_left;
            const int64_t* offs = tap_offset.data();
            int32_t taps = 0;
            T* dxw = dxi;
            const T* xw = xi;
            if (hs >= 0 && hs + g.kh <= g.ih && ws >= 0 && ws + g.kw <= g.iw) {
              offs = full_offset.data();
              taps = static_cast<int32_t>(full_offset.size());
              xw = xi + (hs * g.iw + ws) * g.c;
              dxw = dxi + (hs * g.iw + ws) * g.c;
            } else {
              const Span s = WindowOf(g, oh, ow);
              for (int64_t ih = s.h0; ih < s.h1; ++ih)
                for (int64_t iw = s.w0; iw < s.w1; ++iw) tap_offset[taps++] = (ih * g.iw + iw) * g.c;
            }
            if (taps == 0) continue;
            const T* dyp = dy + ((n * g.oh + oh) * g.ow + ow) * g.c;
            // Packets of channels: the running max and the index of its tap (as T, so the
            // blend is one select), then each tap's share written in one pass.
            using namespace Eigen::internal;
            using P = typename packet_traits<T>::type;
            constexpr int64_t L = packet_traits<T>::size;
            int64_t c0 = 0;
            for (; c0 + L <= g.c; c0 += L) {
              P bestv = ploadu<P>(xw + offs[0] + c0);
              P idx = pset1<P>(T(0));
              for (int32_t t = 1; t < taps; ++t) {
                const P v = ploadu<P>(xw + offs[t] + c0);
                // best < v, or v the window's first NaN (a NaN best stays)
                const P greater = pand(pcmp_lt_or_nan(bestv, v), pcmp_eq(bestv, bestv));
                bestv = pselect(greater, v, bestv);
                idx = pselect(greater, pset1<P>(T(t)), idx);
              }
              P d = ploadu<P>(dyp + c0);
              if (relu_) d = pand(pcmp_lt(pset1<P>(T(0)), bestv), d);  // the winner is the Relu's output
              for (int32_t t = 0; t < taps; ++t) {
                pstoreu(dxw + offs[t] + c0, pand(pcmp_eq(idx, pset1<P>(T(t))), d));
              }
            }
            for (int64_t c = c0; c < g.c; ++c) {
              T bv = xw[offs[0] + c];
              int32_t bt = 0;
              for (int32_t t = 1; t < taps; ++t) {
                const T v = xw[offs[t] + c];
                if (ReplacesExtreme(v, bv, true)) {
                  bv = v;
                  bt = t;
                }
              }
              const T d = relu_ && !(bv > T(0)) ? T(0) : dyp[c];
              for (int32_t t = 0; t < taps; ++t) dxw[offs[t] + c] = t == bt ? d : T(0);
            }
          }
        }
      }
    });
  }

  PoolAttrs a_;
  bool relu_;
};

template <typename T>
class AvgPoolOp : public OpKernel {
 public:
  explicit AvgPoolOp(const Node& node) : OpKernel(node), a_(node) {}
  void Compute(OpKernelContext* ctx) override {
    const Tensor& input = ctx->input(0);
    const Conv2DGeometry g = a_.Geometry(input.shape());
    Tensor* out = ctx->allocate_output(0, TensorShape({g.n, g.oh, g.ow, g.c}));
    if (out->num_elements() == 0) return;
    const T* x = input.data<T>();
    T* y = out->data<T>();
    ctx->intra_op_pool()->ParallelFor(g.n * g.oh, [&](int64_t b, int64_t e) {
      for (int64_t r = b; r < e; ++r) {
        const int64_t n = r / g.oh, oh = r % g.oh;
        for (int64_t ow = 0; ow < g.ow; ++ow) {
          const Span s = WindowOf(g, oh, ow);
          T* yp = y + (r * g.ow + ow) * g.c;
          std::fill(yp, yp + g.c, T(0));
          for (int64_t ih = s.h0; ih < s.h1; ++ih) {
            for (int64_t iw = s.w0; iw < s.w1; ++iw) {
              const T* xp = x + ((n * g.ih + ih) * g.iw + iw) * g.c;
              for (int64_t c = 0; c < g.c; ++c) yp[c] += xp[c];
            }
          }
          const int64_t count = (s.h1 - s.h0) * (s.w1 - s.w0);
          if (count > 0) {
            const T inv = T(1) / static_cast<T>(count);
            for (int64_t c = 0; c < g.c; ++c) yp[c] *= inv;
          }
        }
      }
    });
  }

 private:
  PoolAttrs a_;
};

// Inputs: orig_input_shape (int32 [4]), grad [N,OH,OW,C]. Each window spreads its gradient
// evenly over its in-bounds elements. Parallel over images.
template <typename T>
class AvgPoolGradOp : public OpKernel {
 public:
  explicit AvgPoolGradOp(const Node& node) : OpKernel(node), a_(node) {}
  void Compute(OpKernelContext* ctx) override {
    const Tensor& shape_t = ctx->input(0);
    WEFT_REQUIRE(shape_t.rank() == 1 && shape_t.num_elements() == 4,
                 "orig_input_shape must be a vector of 4 dims, got {}", shape_t.DebugString());
    std::vector<int64_t> dims(4);
    for (int i = 0; i < 4; ++i) {
      dims[i] = shape_t.ElementAsInt64(i);
      WEFT_REQUIRE(dims[i] >= 0, "orig_input_shape has a negative dim: {}", shape_t.ValuesString());
    }
    const TensorShape in_shape(dims);
    const Tensor& grad = ctx->input(1);
    const Conv2DGeometry g = a_.Geometry(in_shape);
    CheckGradShape(g, grad.shape());
    Tensor* out = ctx->allocate_output(0, in_shape);
    if (out->num_elements() == 0) return;
    const T* dy = grad.data<T>();
    T* dx = out->data<T>();
    const int64_t image = g.ih * g.iw * g.c;
    ctx->intra_op_pool()->ParallelFor(g.n, [&](int64_t b, int64_t e) {
      std::vector<T> share(g.c);
      for (int64_t n = b; n < e; ++n) {
        T* dxi = dx + n * image;
        std::fill(dxi, dxi + image, T(0));
        for (int64_t oh = 0; oh < g.oh; ++oh) {
          for (int64_t ow = 0; ow < g.ow; ++ow) {
            const Span s = WindowOf(g, oh, ow);
            const int64_t count = (s.h1 - s.h0) * (s.w1 - s.w0);
            if (count <= 0) continue;
            const T inv = T(1) / static_cast<T>(count);
            const T* dyp = dy + ((n * g.oh + oh) * g.ow + ow) * g.c;
            for (int64_t c = 0; c < g.c; ++c) share[c] = dyp[c] * inv;
            for (int64_t ih = s.h0; ih < s.h1; ++ih) {
              for (int64_t iw = s.w0; iw < s.w1; ++iw) {
                T* dxp = dxi + (ih * g.iw + iw) * g.c;
                for (int64_t c = 0; c < g.c; ++c) dxp[c] += share[c];
              }
            }
          }
        }
      }
    });
  }

 private:
  PoolAttrs a_;
};

}  // namespace

void RegisterPoolKernels(KernelRegistry& r) {
  RegisterTyped<MaxPoolOp, float, double>(r, "MaxPool");
  RegisterTyped<MaxPoolGradOp, float, double>(r, "MaxPoolGrad");
  RegisterTyped<MaxPoolGradOp, float, double>(r, "_MaxPoolGradRelu");
  RegisterTyped<AvgPoolOp, float, double>(r, "AvgPool");
  RegisterTyped<AvgPoolGradOp, float, double>(r, "AvgPoolGrad");
}

}  // namespace weft
