// Private to the nn op family: ops/nn.cc (shape functions) and ops/kernels/cpu/{nn,conv,pool,
// batchnorm}.cc. Window arithmetic shared by the shape functions and the kernels, so that the
// two always agree on output sizes and padding.
//
//   Window w = ComputeWindow(/*in=*/28, /*k=*/3, /*stride=*/2, /*dilation=*/1, ParsePadding("SAME"));
//   // w.out == 14, w.pad_before == 0 (TF: pad_total = (14 - 1) * 2 + 3 - 28 = 1, before = 0)
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/checked.h"
#include "core/status.h"

namespace weft {

class KernelRegistry;
class Tensor;

// Called by RegisterNnKernels (ops/kernels/cpu/nn.cc).
void RegisterConvKernels(KernelRegistry& r);       // conv.cc
void RegisterConvPoolKernels(KernelRegistry& r);   // conv_pool.cc
void RegisterPoolKernels(KernelRegistry& r);       // pool.cc
void RegisterBatchNormKernels(KernelRegistry& r);  // batchnorm.cc
void RegisterLayerNormKernels(KernelRegistry& r);  // layernorm.cc

// "SAME" -> true, "VALID" -> false; anything else is InvalidArgument naming the string.
inline bool ParsePadding(const std::string& padding) {
  WEFT_REQUIRE(padding == "SAME" || padding == "VALID", "padding must be \"SAME\" or \"VALID\", got \"{}\"",
               padding);
  return padding == "SAME";
}

// Checks a 2-element attr ([h, w] strides, dilations or ksize) of values in [1, kMaxWindowAttr]
// (core/checked.h) and returns it.
inline std::vector<int64_t> CheckPair(const std::vector<int64_t>& v, const char* name) {
  WEFT_REQUIRE(v.size() == 2 && v[0] > 0 && v[1] > 0 && v[0] <= kMaxWindowAttr && v[1] <= kMaxWindowAttr,
               "attr '{}' must be 2 values [h, w] in [1, {}], got [{}]", name, kMaxWindowAttr, fmt::join(v, ","));
  return v;
}

// One spatial dim of a windowed op (conv, pool), as TensorFlow computes it, with the effective
// window k_eff = (k - 1) * dilation + 1:
//   VALID: out = (in - k_eff + stride) / stride (may be 0), no padding;
//   SAME:  out = ceil(in / stride), pad_total = max((out - 1) * stride + k_eff - in, 0),
//          pad_before = pad_total / 2 (the extra one, if odd, goes after).
// An unknown `in` (-1) gives an unknown `out`. Under VALID, in - k_eff + stride < 0 is
// InvalidArgument (as in TF). Every step is checked arithmetic (core/checked.h): a window whose
// size, padding or extent leaves int64 is InvalidArgument, never a wrapped (wrong) geometry.
struct Window {
  int64_t out = -1;
  int64_t pad_before = 0;
};
inline Window ComputeWindow(int64_t in, int64_t k, int64_t stride, int64_t dilation, bool same) {
  Window w;
  if (in < 0) return w;
  WEFT_REQUIRE(k > 0 && stride > 0 && dilation > 0, "window size {}, stride {} and dilation {} must be positive", k,
               stride, dilation);
  constexpr const char* kWhat = "window arithmetic";
  const int64_t k_eff = CheckedAdd(CheckedMul(k - 1, dilation, kWhat), 1, kWhat);
  if (same) {
    w.out = in / stride + (in % stride != 0);
    const int64_t span = CheckedAdd(CheckedMul(w.out - 1, stride, kWhat), k_eff, kWhat);
    const int64_t pad_total = std::max<int64_t>(span - in, 0);
    w.pad_before = pad_total / 2;
  } else {
    const int64_t room = CheckedAdd(in - k_eff, stride, kWhat);  // in >= 0 and k_eff >= 1: no overflow
    WEFT_REQUIRE(room >= 0,
                 "VALID window of effective size {} (size {}, dilation {}, stride {}) does not fit input dim {}", k_eff,
                 k, dilation, stride, in);
    w.out = room / stride;
  }
  return w;
}

// The geometry of a 2-D windowed op over NHWC input, all dims known (kernels use it).
//   N = batch, IH/IW = input height/width, C = input channels, KH/KW = window, OH/OW = output.
struct Conv2DGeometry {
  int64_t n, ih, iw, c;
  int64_t kh, kw;
  int64_t sh, sw, dh, dw;
  int64_t oh, ow, pad_top, pad_left;
};
inline Conv2DGeometry MakeGeometry(int64_t n, int64_t ih, int64_t iw, int64_t c, int64_t kh, int64_t kw,
                                   const std::vector<int64_t>& strides, const std::vector<int64_t>& dilations,
                                   bool same) {
  Conv2DGeometry g{n, ih, iw, c, kh, kw, strides[0], strides[1], dilations[0], dilations[1], 0, 0, 0, 0};
  const Window h = ComputeWindow(ih, kh, g.sh, g.dh, same);
  const Window w = ComputeWindow(iw, kw, g.sw, g.dw, same);
  g.oh = h.out;
  g.ow = w.out;
  g.pad_top = h.pad_before;
  g.pad_left = w.pad_before;
  return g;
}

// The softmax losses' input checks, shared by the CPU kernels (nn.cc) and the GPU ones
// (ops/kernels/cuda/nn.cc): the same bad inputs fail with the same messages on either device.
// Logits [batch, classes] and labels of the same shape (dense labels).
void CheckSoftmaxXentInputs(const Tensor& logits, const Tensor& labels);
// Logits [batch, classes] and labels [batch] (class ids).
void CheckSparseSoftmaxXentInputs(const Tensor& logits, const Tensor& labels);
// Throws InvalidArgument naming the first class id of `labels` (int32 or int64, host memory)
// outside [0, classes) and its batch row.
void CheckLabels(const Tensor& labels, int64_t classes);

}  // namespace weft
