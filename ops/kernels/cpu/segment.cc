// CPU kernels of UnsortedSegmentMax / Min / Prod (ops/segment.cc).
// Shapes: data [ids dims..., inner...], output [num_segments, inner...]; rows of `inner` elements.
#include <algorithm>
#include <limits>

#include "ops/all_ops.h"
#include "ops/kernel.h"
#include "ops/kernels/cpu/array_kernels.h"

namespace weft {

namespace {

template <typename T>
struct MaxR {
  static T Init() { return std::numeric_limits<T>::lowest(); }
  static T Apply(T a, T b) { return a > b || a != a ? a : b; }  // NaN propagates, as TF's max
};
template <typename T>
struct MinR {
  static T Init() { return std::numeric_limits<T>::max(); }
  static T Apply(T a, T b) { return a < b || a != a ? a : b; }
};
template <typename T>
struct ProdR {
  static T Init() { return T(1); }
  static T Apply(T a, T b) { return a * b; }
};

template <typename T, template <typename> class R>
class SegmentReduceOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    const std::string& op = node().op();
    const Tensor &data = ctx->input(0), &ids = ctx->input(1);
    const int64_t num = ReadNumSegments(ctx->input(2), op);
    const std::vector<int64_t> out_dims = SegmentSumDims(data.shape(), ids.shape(), num, op);
    const std::vector<int64_t> idx = ReadSegmentIds(ids, num, op);
    Tensor* y = ctx->allocate_output(0, TensorShape(out_dims));
    T* out = y->data<T>();
    std::fill(out, out + y->num_elements(), R<T>::Init());
    if (idx.empty()) return;
    const int64_t inner = data.num_elements() / static_cast<int64_t>(idx.size());
    const T* in = data.data<T>();
    for (size_t j = 0; j < idx.size(); ++j) {
      if (idx[j] < 0) continue;  // dropped, as TF
      T* d = out + idx[j] * inner;
      const T* src = in + static_cast<int64_t>(j) * inner;
      for (int64_t i = 0; i < inner; ++i) d[i] = R<T>::Apply(d[i], src[i]);
    }
  }
};

template <typename T> using SegmentMaxOp = SegmentReduceOp<T, MaxR>;
template <typename T> using SegmentMinOp = SegmentReduceOp<T, MinR>;
template <typename T> using SegmentProdOp = SegmentReduceOp<T, ProdR>;

}  // namespace

void RegisterSegmentKernels(KernelRegistry& r) {
  RegisterTyped<SegmentMaxOp, float, double, int32_t, int64_t>(r, "UnsortedSegmentMax");
  RegisterTyped<SegmentMinOp, float, double, int32_t, int64_t>(r, "UnsortedSegmentMin");
  RegisterTyped<SegmentProdOp, float, double, int32_t, int64_t>(r, "UnsortedSegmentProd");
}

}  // namespace weft
