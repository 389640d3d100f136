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
#include <vector>

#include "ops/all_ops.h"
#include "ops/kernel.h"
#include "ops/kernels/cpu/broadcast.h"
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
// (stored [n, k] when tb). Runs on the intra-op pool.
template <typename T>
void Gemm(const Eigen::ThreadPoolDevice& d, const T* a, const T* b, T* c, int64_t m, int64_t k, int64_t n,
          bool ta, bool tb, bool accumulate) {
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

bool IsPointwise(const Conv2DGeometry& g) {
  return g.kh == 1 && g.kw == 1 && g.sh == 1 && g.sw == 1 && g.pad_top == 0 && g.pad_left == 0;
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

// ---- Direct kernels for few input channels (C <= kDirectMaxChannels). With K = KH*KW*C as
// small as 9 (a 3x3 filter on one channel), im2col + GEMM spends its time copying patches and
// packing GEMM panels for a product with almost no depth; these loops read the input in place
// and keep blocks of output channels in SIMD registers (Eigen's packet primitives, so the
// width follows the build's instruction set) instead.

constexpr int64_t kDirectMaxChannels = 4;
constexpr int kPix = 4;  // output pixels in flight (independent accumulator chains)

template <typename T>
using Packet = typename Eigen::internal::packet_traits<T>::type;
template <typename T>
constexpr int kLanes = Eigen::internal::unpacket_traits<Packet<T>>::size;

bool UseDirect(const Conv2DGeometry& g) { return g.c <= kDirectMaxChannels && !IsPointwise(g); }

// What _FusedConv2D does to each output value on its way out: add bias[o] (when given), then
// max(v, 0) (when relu). Plain Conv2D has neither.
template <typename T>
struct Epilogue {
  const T* bias = nullptr;
  bool relu = false;
  bool active() const { return bias != nullptr || relu; }
  T Apply(T v, int64_t o) const {
    if (bias) v += bias[o];
    return relu ? std::max(v, T(0)) : v;
  }
  // Applies it to rows [0, rows) of y [rows, O] in place (after a GEMM).
  void Run(ThreadPool* pool, T* y, int64_t rows, int64_t O) const {
    if (!active()) return;
    ParallelForCost(pool, rows, O, [&](int64_t b, int64_t e) {
      for (int64_t r = b; r < e; ++r) {
        T* yr = y + r * O;
        if (bias) {
          for (int64_t o = 0; o < O; ++o) yr[o] += bias[o];
        }
        if (relu) {
          for (int64_t o = 0; o < O; ++o) yr[o] = std::max(yr[o], T(0));
        }
      }
    });
  }
};

// The output columns [lo, hi) whose filter taps kw in [kw0, kw1) all fall inside the input.
struct Cols {
  int64_t lo, hi;
};
Cols InsideColumns(const Conv2DGeometry& g, int64_t kw0, int64_t kw1) {
  int64_t lo = 0, hi = g.ow;
  while (lo < hi && lo * g.sw - g.pad_left + kw0 * g.dw < 0) ++lo;
  while (hi > lo && (hi - 1) * g.sw - g.pad_left + (kw1 - 1) * g.dw >= g.iw) --hi;
  return {lo, hi};
}

// y[n, oh, ow0 + p, o0 : o0 + NP * lanes] for p < PB: the sum over taps and c of x * f, with
// NP packets of output channels per pixel. PB > 1 requires every tap column of those pixels to
// fall inside the input; PB == 1 checks each one.
template <typename T, int PB, int NP>
inline void DirectPixels(const Conv2DGeometry& g, const T* x_img, const T* f, const Epilogue<T>& ep, int64_t O,
                         int64_t o0, int64_t oh, int64_t ow0, T* y_row) {
  using namespace Eigen::internal;
  using P = Packet<T>;
  P acc[PB][NP];
  for (int p = 0; p < PB; ++p)
    for (int j = 0; j < NP; ++j) acc[p][j] = pset1<P>(T(0));
  for (int64_t kh = 0; kh < g.kh; ++kh) {
    const int64_t ih = oh * g.sh - g.pad_top + kh * g.dh;
    if (ih < 0 || ih >= g.ih) continue;
    const T* xrow = x_img + ih * g.iw * g.c;
    for (int64_t kw = 0; kw < g.kw; ++kw) {
      const int64_t iw0 = ow0 * g.sw - g.pad_left + kw * g.dw;
      if (PB == 1 && (iw0 < 0 || iw0 >= g.iw)) continue;
      const T* fp = f + (kh * g.kw + kw) * g.c * O + o0;
      for (int64_t c = 0; c < g.c; ++c, fp += O) {
        P fv[NP];
        for (int j = 0; j < NP; ++j) fv[j] = ploadu<P>(fp + j * kLanes<T>);
        for (int p = 0; p < PB; ++p) {
          const P v = pset1<P>(xrow[(iw0 + p * g.sw) * g.c + c]);
          for (int j = 0; j < NP; ++j) acc[p][j] = pmadd(v, fv[j], acc[p][j]);
        }
      }
    }
  }
  for (int j = 0; j < NP; ++j) {
    const P b = ep.bias ? ploadu<P>(ep.bias + o0 + j * kLanes<T>) : pset1<P>(T(0));
    for (int p = 0; p < PB; ++p) {
      P v = padd(acc[p][j], b);
      if (ep.relu) v = pmax(v, pset1<P>(T(0)));
      pstoreu(y_row + (ow0 + p) * O + o0 + j * kLanes<T>, v);
    }
  }
}

// As DirectPixels, for the single output channel o (the channels left over after the packets).
template <typename T, int PB>
inline void DirectPixelsScalar(const Conv2DGeometry& g, const T* x_img, const T* f, const Epilogue<T>& ep,
                               int64_t O, int64_t o, int64_t oh, int64_t ow0, T* y_row) {
  for (int p = 0; p < PB; ++p) {
    const int64_t ow = ow0 + p;
    T acc = 0;
    for (int64_t kh = 0; kh < g.kh; ++kh) {
      const int64_t ih = oh * g.sh - g.pad_top + kh * g.dh;
      if (ih < 0 || ih >= g.ih) continue;
      for (int64_t kw = 0; kw < g.kw; ++kw) {
        const int64_t iw = ow * g.sw - g.pad_left + kw * g.dw;
        if (iw < 0 || iw >= g.iw) continue;
        const T* xp = x_img + (ih * g.iw + iw) * g.c;
        const T* fp = f + (kh * g.kw + kw) * g.c * O + o;
        for (int64_t c = 0; c < g.c; ++c) acc += xp[c] * fp[c * O];
      }
    }
    y_row[ow * O + o] = ep.Apply(acc, o);
  }
}

// All output channels of output pixels [ow0, ow0 + PB) (PB as above).
template <typename T, int PB>
inline void DirectPixelBlock(const Conv2DGeometry& g, const T* x_img, const T* f, const Epilogue<T>& ep, int64_t O,
                             int64_t oh, int64_t ow0, T* y_row) {
  constexpr int64_t L = kLanes<T>;
  int64_t o0 = 0;
  for (; o0 + 2 * L <= O; o0 += 2 * L) DirectPixels<T, PB, 2>(g, x_img, f, ep, O, o0, oh, ow0, y_row);
  for (; o0 + L <= O; o0 += L) DirectPixels<T, PB, 1>(g, x_img, f, ep, O, o0, oh, ow0, y_row);
  for (; o0 < O; ++o0) DirectPixelsScalar<T, PB>(g, x_img, f, ep, O, o0, oh, ow0, y_row);
}

// y [N,OH,OW,O] = epilogue(conv(x, f)), parallel over output rows.
template <typename T>
void DirectConv(ThreadPool* pool, const Conv2DGeometry& g, const T* x, const T* f, const Epilogue<T>& ep, int64_t O,
                T* y) {
  const Cols inside = InsideColumns(g, 0, g.kw);
  ParallelForCost(pool, g.n * g.oh, g.ow * O * g.kh * g.kw * g.c, [&](int64_t b, int64_t e) {
    for (int64_t r = b; r < e; ++r) {
      const int64_t n = r / g.oh, oh = r % g.oh;
      const T* x_img = x + n * g.ih * g.iw * g.c;
      T* y_row = y + r * g.ow * O;
      int64_t ow = 0;
      for (; ow < inside.lo; ++ow) DirectPixelBlock<T, 1>(g, x_img, f, ep, O, oh, ow, y_row);
      for (; ow + kPix <= inside.hi; ow += kPix) DirectPixelBlock<T, kPix>(g, x_img, f, ep, O, oh, ow, y_row);
      for (; ow < g.ow; ++ow) DirectPixelBlock<T, 1>(g, x_img, f, ep, O, oh, ow, y_row);
    }
  });
}

// dfp[0 : NP * lanes] += sum over output pixels ow in [lo, hi) of output row (n, oh) of
// xrow[(ow * sw + shift) * C] * dyp[ow * O + ...]: one filter entry (kh, kw, c) and one block of
// output channels, kPix pixels in flight.
template <typename T, int NP>
inline void FilterEntryRow(const T* xrow, int64_t step, int64_t shift, const T* dyp, int64_t O, int64_t lo,
                           int64_t hi, T* dfp) {
  using namespace Eigen::internal;
  using P = Packet<T>;
  P acc[kPix][NP];
  for (int p = 0; p < kPix; ++p)
    for (int j = 0; j < NP; ++j) acc[p][j] = pset1<P>(T(0));
  int64_t ow = lo;
  for (; ow + kPix <= hi; ow += kPix) {
    for (int p = 0; p < kPix; ++p) {
      const P v = pset1<P>(xrow[(ow + p) * step + shift]);
      const T* d = dyp + (ow + p) * O;
      for (int j = 0; j < NP; ++j) acc[p][j] = pmadd(v, ploadu<P>(d + j * kLanes<T>), acc[p][j]);
    }
  }
  for (; ow < hi; ++ow) {
    const P v = pset1<P>(xrow[ow * step + shift]);
    const T* d = dyp + ow * O;
    for (int j = 0; j < NP; ++j) acc[0][j] = pmadd(v, ploadu<P>(d + j * kLanes<T>), acc[0][j]);
  }
  for (int j = 0; j < NP; ++j) {
    P sum = padd(padd(acc[0][j], acc[1][j]), padd(acc[2][j], acc[3][j]));
    pstoreu(dfp + j * kLanes<T>, padd(ploadu<P>(dfp + j * kLanes<T>), sum));
  }
}

// df [KH,KW,C,O] += the filter gradient from output rows [r0, r1) (r = n*OH + oh): for each row
// (its dy in L1), each filter entry (kh, kw, c) and each block of output channels, a dot product
// of the input values the entry reads with dy.
template <typename T>
void DirectFilterGrad(const Conv2DGeometry& g, const T* x, const T* dy, int64_t O, int64_t r0, int64_t r1, T* df) {
  constexpr int64_t L = kLanes<T>;
  std::vector<Cols> cols(g.kw);
  for (int64_t kw = 0; kw < g.kw; ++kw) cols[kw] = InsideColumns(g, kw, kw + 1);
  for (int64_t r = r0; r < r1; ++r) {
    const int64_t n = r / g.oh, oh = r % g.oh;
    const T* dyp = dy + r * g.ow * O;
    for (int64_t kh = 0; kh < g.kh; ++kh) {
      const int64_t ih = oh * g.sh - g.pad_top + kh * g.dh;
      if (ih < 0 || ih >= g.ih) continue;
      const T* xrow = x + (n * g.ih + ih) * g.iw * g.c;
      for (int64_t kw = 0; kw < g.kw; ++kw) {
        const int64_t lo = cols[kw].lo, hi = cols[kw].hi;
        for (int64_t c = 0; c < g.c; ++c) {
          const int64_t shift = (kw * g.dw - g.pad_left) * g.c + c;  // x index = ow * sw * C + shift
          T* dfp = df + ((kh * g.kw + kw) * g.c + c) * O;
          int64_t o0 = 0;
          for (; o0 + 2 * L <= O; o0 += 2 * L) {
            FilterEntryRow<T, 2>(xrow, g.sw * g.c, shift, dyp + o0, O, lo, hi, dfp + o0);
          }
          for (; o0 + L <= O; o0 += L) FilterEntryRow<T, 1>(xrow, g.sw * g.c, shift, dyp + o0, O, lo, hi, dfp + o0);
          for (; o0 < O; ++o0) {
            T acc = 0;
            for (int64_t ow = lo; ow < hi; ++ow) acc += xrow[ow * g.sw * g.c + shift] * dyp[ow * O + o0];
            dfp[o0] += acc;
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
      Gemm<T>(ctx->eigen_device(), x, f, y, rows, K, O, false, false, false);
      ep.Run(ctx->intra_op_pool(), y, rows, O);
      return;
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
      Gemm<T>(ctx->eigen_device(), cp, f, y + r0 * O, r1 - r0, K, O, false, false, false);
    }
    ep.Run(ctx->intra_op_pool(), y, rows, O);
  }

 private:
  ConvAttrs a_;
  bool fused_, relu_;
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
      Gemm<T>(ctx->eigen_device(), dy, f, dx, rows, O, K, false, true, false);
      return;
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
      Gemm<T>(ctx->eigen_device(), dy + r0 * O, f, cp, r1 - r0, O, K, false, true, false);
      // Images write disjoint parts of dx, so col2im runs in parallel over them.
      ctx->intra_op_pool()->ParallelFor(n1 - n0, [&](int64_t b, int64_t e) {
        Col2Im(g, cp + b * per_image, n0 + b, n0 + e, dx);
      });
    }
  }

 private:
  ConvAttrs a_;
};

// Inputs: input [N,IH,IW,C], filter_sizes (int32 [4]), out_backprop [N,OH,OW,O].
template <typename T>
class Conv2DBackpropFilterOp : public OpKernel {
 public:
  explicit Conv2DBackpropFilterOp(const Node& node) : OpKernel(node), a_(node) {}
  void Compute(OpKernelContext* ctx) override {
    const Tensor& input = ctx->input(0);
    const TensorShape f_shape = ShapeFromTensor(ctx->input(1), "filter_sizes");
    const Tensor& dy_t = ctx->input(2);
    const Conv2DGeometry g = CheckConv(a_, input.shape(), f_shape, &dy_t.shape(), f_shape.dim(3));
    const int64_t O = f_shape.dim(3), K = g.kh * g.kw * g.c, rows = g.n * g.oh * g.ow;
    Tensor* out = ctx->allocate_output(0, f_shape);
    if (out->num_elements() == 0) return;
    T* df = out->data<T>();
    if (rows == 0) {
      std::fill(df, df + out->num_elements(), T(0));
      return;
    }
    const T* x = input.data<T>();
    const T* dy = dy_t.data<T>();
    if (IsPointwise(g)) {
      Gemm<T>(ctx->eigen_device(), x, dy, df, K, rows, O, true, false, false);
      return;
    }
    if (UseDirect(g)) {
      // Each block of output rows sums into its own partial filter gradient; the partials are
      // added up at the end (in block order, so the result does not depend on timing).
      const int64_t out_rows = g.n * g.oh, fsize = K * O;
      // One block per thread once there is enough work (a block costs a K x O partial sum).
      const int64_t work = out_rows * g.ow * fsize;
      const int64_t blocks =
          work < (int64_t{1} << 18) ? 1 : std::min<int64_t>(out_rows, ctx->intra_op_pool()->num_threads());
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
      Gemm<T>(ctx->eigen_device(), cp, dy + r0 * O, df, K, r1 - r0, O, true, false, r0 > 0);
    }
  }

 private:
  ConvAttrs a_;
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
  RegisterTyped<DepthwiseConv2DOp, float, double>(r, "DepthwiseConv2D");
  RegisterTyped<DepthwiseConv2DBackpropInputOp, float, double>(r, "DepthwiseConv2DBackpropInput");
  RegisterTyped<DepthwiseConv2DBackpropFilterOp, float, double>(r, "DepthwiseConv2DBackpropFilter");
}

}  // namespace weft
