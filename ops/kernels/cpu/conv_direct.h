// Direct Conv2D kernels for few input channels, shared by conv.cc (Conv2D, _FusedConv2D,
// Conv2DBackpropFilter) and conv_pool.cc (_FusedConv2DMaxPool). Private to those files.
//
//   Epilogue<float> ep{bias, /*relu=*/true};
//   if (UseDirect(g)) DirectConv(pool, g, x, f, ep, O, y);   // y = relu(conv(x, f) + bias)
//
// Shape key as in conv.cc: N = batch, IH/IW = input height/width, C = input channels, KH/KW =
// filter window, O = output channels, OH/OW = output height/width.
#pragma once

#include <algorithm>
#include <vector>

#include "core/threadpool.h"
#include "ops/kernels/cpu/broadcast.h"
#include "ops/kernels/cpu/nn_kernels.h"

namespace weft {

// 1x1 filters with stride 1 and no padding: the input itself is the im2col matrix.
inline bool IsPointwise(const Conv2DGeometry& g) {
  return g.kh == 1 && g.kw == 1 && g.sh == 1 && g.sw == 1 && g.pad_top == 0 && g.pad_left == 0;
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
constexpr int kLanes = Eigen::internal::packet_traits<T>::size;

inline bool UseDirect(const Conv2DGeometry& g) { return g.c <= kDirectMaxChannels && !IsPointwise(g); }

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
inline Cols InsideColumns(const Conv2DGeometry& g, int64_t kw0, int64_t kw1) {
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

// y_row [OW, O] = epilogue(conv(x, f)) for output row oh of image n; `inside` is
// InsideColumns(g, 0, g.kw).
template <typename T>
inline void DirectConvRow(const Conv2DGeometry& g, const T* x, const T* f, const Epilogue<T>& ep, int64_t O,
                          const Cols& inside, int64_t n, int64_t oh, T* y_row) {
  const T* x_img = x + n * g.ih * g.iw * g.c;
  int64_t ow = 0;
  for (; ow < inside.lo; ++ow) DirectPixelBlock<T, 1>(g, x_img, f, ep, O, oh, ow, y_row);
  for (; ow + kPix <= inside.hi; ow += kPix) DirectPixelBlock<T, kPix>(g, x_img, f, ep, O, oh, ow, y_row);
  for (; ow < g.ow; ++ow) DirectPixelBlock<T, 1>(g, x_img, f, ep, O, oh, ow, y_row);
}

// y [N,OH,OW,O] = epilogue(conv(x, f)), parallel over output rows.
template <typename T>
void DirectConv(ThreadPool* pool, const Conv2DGeometry& g, const T* x, const T* f, const Epilogue<T>& ep, int64_t O,
                T* y) {
  const Cols inside = InsideColumns(g, 0, g.kw);
  ParallelForCost(pool, g.n * g.oh, g.ow * O * g.kh * g.kw * g.c, [&](int64_t b, int64_t e) {
    for (int64_t r = b; r < e; ++r) DirectConvRow(g, x, f, ep, O, inside, r / g.oh, r % g.oh, y + r * g.ow * O);
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
  // The chains are summed pairwise by hand below: a change of kPix must change that sum too.
  static_assert(kPix == 4, "FilterEntryRow sums exactly four accumulator chains");
  for (int j = 0; j < NP; ++j) {
    P sum = padd(padd(acc[0][j], acc[1][j]), padd(acc[2][j], acc[3][j]));
    pstoreu(dfp + j * kLanes<T>, padd(ploadu<P>(dfp + j * kLanes<T>), sum));
  }
}

// df [KH,KW,C,O] += the filter gradient from output row oh of image n, whose dy is dyp [OW, O]:
// for each filter entry (kh, kw, c) and each block of output channels, a dot product of the
// input values the entry reads with dy. `cols[kw]` is InsideColumns(g, kw, kw + 1).
template <typename T>
inline void DirectFilterGradRow(const Conv2DGeometry& g, const T* x, const T* dyp, int64_t O, const Cols* cols,
                                int64_t n, int64_t oh, T* df) {
  constexpr int64_t L = kLanes<T>;
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

// The InsideColumns of each filter column kw, for DirectFilterGradRow.
inline std::vector<Cols> FilterGradColumns(const Conv2DGeometry& g) {
  std::vector<Cols> cols(g.kw);
  for (int64_t kw = 0; kw < g.kw; ++kw) cols[kw] = InsideColumns(g, kw, kw + 1);
  return cols;
}

// df [KH,KW,C,O] += the filter gradient from output rows [r0, r1) (r = n*OH + oh) of dy.
template <typename T>
void DirectFilterGrad(const Conv2DGeometry& g, const T* x, const T* dy, int64_t O, int64_t r0, int64_t r1, T* df) {
  const std::vector<Cols> cols = FilterGradColumns(g);
  for (int64_t r = r0; r < r1; ++r) {
    DirectFilterGradRow(g, x, dy + r * g.ow * O, O, cols.data(), r / g.oh, r % g.oh, df);
  }
}

}  // namespace weft
