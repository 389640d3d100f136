// CPU kernels for the array ops that address parts of a tensor: Slice, StridedSlice, Pad,
// Gather, and the gradient ops that scatter back into zeros (StridedSliceGrad, GatherGrad).
// Index checks happen before any copy starts, so a bad index is an InvalidArgument naming the
// index, its value and the valid range, and never a partial write or a crash.
#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <limits>

#include "ops/all_ops.h"
#include "ops/kernel.h"
#include "ops/kernels/cpu/array_kernels.h"

namespace weft {

StridedSliceAttrs StridedSliceAttrs::FromNode(const Node& node) {
  StridedSliceAttrs a;
  a.begin = node.attr<std::vector<int64_t>>("begin");
  a.end = node.attr<std::vector<int64_t>>("end");
  a.strides = node.attr<std::vector<int64_t>>("strides");
  a.begin_mask = node.attr<int64_t>("begin_mask");
  a.end_mask = node.attr<int64_t>("end_mask");
  a.shrink_axis_mask = node.attr<int64_t>("shrink_axis_mask");
  return a;
}

namespace {
// Bit k of a mask attr; dims past bit 63 have none (a shift by 64 or more is undefined).
bool MaskBit(int64_t mask, int k) { return k < 64 && ((static_cast<uint64_t>(mask) >> k) & 1) != 0; }
}  // namespace

StridedSliceSpec ComputeStridedSlice(const std::vector<int64_t>& in_dims, const StridedSliceAttrs& a) {
  const int r = static_cast<int>(in_dims.size());
  const int n = static_cast<int>(a.begin.size());
  const std::string shape = TensorShape(in_dims).ToString();
  WEFT_REQUIRE(a.end.size() == a.begin.size() && a.strides.size() == a.begin.size(),
               "StridedSlice: begin [{}], end [{}] and strides [{}] must have the same length", fmt::join(a.begin, ","),
               fmt::join(a.end, ","), fmt::join(a.strides, ","));
  WEFT_REQUIRE(n <= r, "StridedSlice: {} slice entries for a tensor of shape {} (rank {})", n, shape, r);
  StridedSliceSpec spec;
  spec.begin.assign(r, 0);
  spec.size.assign(r, 0);
  spec.step.assign(r, 1);
  for (int k = 0; k < r; ++k) {
    const int64_t dim = in_dims[k];
    if (k >= n) {  // dims without an entry are taken whole
      spec.size[k] = dim;
      spec.out_dims.push_back(dim);
      continue;
    }
    if (MaskBit(a.shrink_axis_mask, k)) {  // a single index; the dim is dropped
      spec.size[k] = 1;
      if (dim < 0) {
        spec.begin[k] = -1;
        continue;
      }
      const int64_t i = a.begin[k] < 0 ? a.begin[k] + dim : a.begin[k];
      WEFT_REQUIRE(i >= 0 && i < dim, "StridedSlice: index {} out of range [{}, {}) for dim {} of shape {}",
                   a.begin[k], -dim, dim, k, shape);
      spec.begin[k] = i;
      continue;
    }
    const int64_t s = a.strides[k];
    WEFT_REQUIRE(s != 0 && s != std::numeric_limits<int64_t>::min(), "StridedSlice: invalid stride {} for dim {}",
                 s, k);
    spec.step[k] = s;
    if (dim < 0) {
      spec.begin[k] = spec.size[k] = -1;
      spec.out_dims.push_back(-1);
      continue;
    }
    // Positions are clamped to [0, dim] going forward and [-1, dim-1] going backward, where -1
    // means "before element 0".
    const int64_t lo = s > 0 ? 0 : -1, hi = s > 0 ? dim : dim - 1;
    auto canonical = [&](int64_t v, bool masked, bool is_begin) {
      if (masked) return (is_begin == (s > 0)) ? lo : hi;  // from the first / to past the last
      if (v < 0) v += dim;
      return std::clamp(v, lo, hi);
    };
    const int64_t b = canonical(a.begin[k], MaskBit(a.begin_mask, k), true);
    const int64_t e = canonical(a.end[k], MaskBit(a.end_mask, k), false);
    int64_t size = 0;
    if (s > 0 && e > b) size = (e - b - 1) / s + 1;
    if (s < 0 && b > e) size = (b - e - 1) / -s + 1;
    spec.begin[k] = size > 0 ? b : 0;
    spec.size[k] = size;
    // A step is only taken between elements: with at most one, any stride (even 2^62) reads the
    // same, and a step of 1 keeps step * element-stride inside int64 (with two or more elements,
    // |step| < dim, so the product is below the tensor's element count).
    if (size <= 1) spec.step[k] = 1;
    spec.out_dims.push_back(size);
  }
  return spec;
}

GatherDims MakeGatherDims(const TensorShape& params, const TensorShape& indices, int64_t axis_attr,
                          std::string_view op) {
  GatherDims g;
  g.axis = params.CanonicalAxis(axis_attr, op);
  g.n = params.dim(g.axis);
  for (int k = 0; k < g.axis; ++k) g.outer *= params.dim(k);
  for (int k = g.axis + 1; k < params.rank(); ++k) g.inner *= params.dim(k);
  g.out_dims.assign(params.dims().begin(), params.dims().begin() + g.axis);
  g.out_dims.insert(g.out_dims.end(), indices.dims().begin(), indices.dims().end());
  g.out_dims.insert(g.out_dims.end(), params.dims().begin() + g.axis + 1, params.dims().end());
  return g;
}

namespace {
// An int32 or int64 index tensor (host memory) as int64.
std::vector<int64_t> IndicesAsInt64(const Tensor& indices, std::string_view op) {
  std::vector<int64_t> v(indices.num_elements());
  Dispatch<int32_t, int64_t>(indices.dtype(), op, [&](auto tag) {
    using I = typename decltype(tag)::type;
    const I* p = indices.data<I>();
    for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<int64_t>(p[i]);
  });
  return v;
}
}  // namespace

// Reads the indices as int64 and checks each lies in [0, limit).
std::vector<int64_t> ReadIndices(const Tensor& indices, int64_t limit, std::string_view op, const TensorShape& params) {
  std::vector<int64_t> v = IndicesAsInt64(indices, op);
  for (size_t i = 0; i < v.size(); ++i) {
    WEFT_REQUIRE(v[i] >= 0 && v[i] < limit, "{}: indices[{}] = {} is out of range [0, {}) for params of shape {}", op,
                 i, v[i], limit, params.ToString());
  }
  return v;
}

std::vector<int64_t> SegmentSumDims(const TensorShape& data, const TensorShape& ids, int64_t num_segments,
                                    std::string_view op) {
  bool prefix = ids.rank() <= data.rank();
  for (int k = 0; prefix && k < ids.rank(); ++k) {
    prefix = ids.dim(k) < 0 || data.dim(k) < 0 || ids.dim(k) == data.dim(k);
  }
  WEFT_REQUIRE(prefix, "{}: segment_ids of shape {} must be a prefix of data's shape {}", op, ids.ToString(),
               data.ToString());
  std::vector<int64_t> dims = {num_segments};
  dims.insert(dims.end(), data.dims().begin() + ids.rank(), data.dims().end());
  return dims;
}

int64_t ReadNumSegments(const Tensor& t, std::string_view op) {
  WEFT_REQUIRE(t.rank() == 0, "{}: num_segments must be a scalar, got shape {}", op, t.shape().ToString());
  const std::vector<int64_t> v = IndicesAsInt64(t, std::string(op) + ": num_segments");
  WEFT_REQUIRE(v[0] >= 0 && v[0] <= TensorShape::kMaxElements,
               "{}: num_segments must be non-negative (and not huge), got {}", op, v[0]);
  return v[0];
}

std::vector<int64_t> ReadSegmentIds(const Tensor& segment_ids, int64_t num_segments, std::string_view op) {
  std::vector<int64_t> v = IndicesAsInt64(segment_ids, op);
  for (size_t i = 0; i < v.size(); ++i) {
    WEFT_REQUIRE(v[i] < num_segments, "{}: segment_ids[{}] = {} is out of range [0, {}) (num_segments {})", op, i,
                 v[i], num_segments, num_segments);
  }
  return v;
}

namespace {

// Copies the box {begin + j * step : j < size} of `big` to the dense tensor `small` (or back,
// when into_big). `small` may have size-1 dims removed: only its element order matters.
void BoxCopy(const Tensor& big, const std::vector<int64_t>& begin, const std::vector<int64_t>& size,
             const std::vector<int64_t>& step, const Tensor& small, bool into_big, ThreadPool* pool) {
  int64_t count = 1;
  for (int64_t d : size) count *= d;
  if (count == 0) return;
  const std::vector<int64_t> dense = DenseStrides(big.shape().dims());
  const size_t esz = DTypeSize(big.dtype());
  std::vector<int64_t> strides(size.size());
  int64_t offset = 0;
  for (size_t k = 0; k < size.size(); ++k) {
    offset += begin[k] * dense[k];
    strides[k] = step[k] * dense[k];
  }
  char* base = static_cast<char*>(big.raw_data()) + offset * static_cast<int64_t>(esz);
  if (into_big) {
    StridedCopy(small.raw_data(), DenseStrides(size), base, strides, size, esz, pool);
  } else {
    StridedCopy(base, strides, small.raw_data(), DenseStrides(size), size, esz, pool);
  }
}

class SliceOp : public OpKernel {
 public:
  explicit SliceOp(const Node& n)
      : OpKernel(n), begin_(n.attr<std::vector<int64_t>>("begin")), size_(n.attr<std::vector<int64_t>>("size")) {}
  void Compute(OpKernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    const int r = x.rank();
    WEFT_REQUIRE(static_cast<int>(begin_.size()) == r && static_cast<int>(size_.size()) == r,
                 "Slice: begin [{}] and size [{}] must have one entry per dim of shape {}", fmt::join(begin_, ","),
                 fmt::join(size_, ","), x.shape().ToString());
    std::vector<int64_t> size(r);
    for (int k = 0; k < r; ++k) {
      const int64_t b = begin_[k], d = x.dim(k);
      size[k] = size_[k] == -1 ? d - b : size_[k];
      WEFT_REQUIRE(b >= 0 && b <= d && size[k] >= 0 && size[k] <= d - b,
                   "Slice: begin {} size {} out of bounds for dim {} of shape {}", b, size_[k], k,
                   x.shape().ToString());
    }
    Tensor* y = ctx->allocate_output(0, TensorShape(size));
    BoxCopy(x, begin_, size, std::vector<int64_t>(r, 1), *y, false, ctx->intra_op_pool());
  }

 private:
  const std::vector<int64_t> begin_, size_;
};

class StridedSliceOp : public OpKernel {
 public:
  explicit StridedSliceOp(const Node& n) : OpKernel(n), attrs_(StridedSliceAttrs::FromNode(n)) {}
  void Compute(OpKernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    const StridedSliceSpec spec = ComputeStridedSlice(x.shape().dims(), attrs_);
    Tensor* y = ctx->allocate_output(0, TensorShape(spec.out_dims));
    BoxCopy(x, spec.begin, spec.size, spec.step, *y, false, ctx->intra_op_pool());
  }

 private:
  const StridedSliceAttrs attrs_;
};

// StridedSlice's (and Slice's) gradient: dy placed into zeros of the input's run-time shape.
class StridedSliceGradOp : public OpKernel {
 public:
  explicit StridedSliceGradOp(const Node& n) : OpKernel(n), attrs_(StridedSliceAttrs::FromNode(n)) {}
  void Compute(OpKernelContext* ctx) override {
    const TensorShape shape = ReadShape(ctx->input(0), "StridedSliceGrad: shape");
    const Tensor& dy = ctx->input(1);
    const StridedSliceSpec spec = ComputeStridedSlice(shape.dims(), attrs_);
    WEFT_REQUIRE(dy.shape() == TensorShape(spec.out_dims), "StridedSliceGrad: dy has shape {}, the slice of {} has {}",
                 dy.shape().ToString(), shape.ToString(), TensorShape(spec.out_dims).ToString());
    Tensor* dx = ctx->allocate_output(0, shape);
    if (dx->bytes()) std::memset(dx->raw_data(), 0, dx->bytes());  // all-zero bytes are 0 in every dtype
    BoxCopy(*dx, spec.begin, spec.size, spec.step, dy, true, ctx->intra_op_pool());
  }

 private:
  const StridedSliceAttrs attrs_;
};

template <typename T>
class PadOp : public OpKernel {
 public:
  explicit PadOp(const Node& n)
      : OpKernel(n),
        paddings_(n.attr<std::vector<int64_t>>("paddings")),
        value_(static_cast<T>(n.attr<double>("constant_value"))) {}
  void Compute(OpKernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    const int r = x.rank();
    WEFT_REQUIRE(static_cast<int>(paddings_.size()) == 2 * r,
                 "Pad: paddings [{}] must have 2 entries (before, after) per dim of shape {}", fmt::join(paddings_, ","),
                 x.shape().ToString());
    std::vector<int64_t> dims(r), begin(r);
    for (int k = 0; k < r; ++k) {
      const int64_t before = paddings_[2 * k], after = paddings_[2 * k + 1];
      WEFT_REQUIRE(before >= 0 && after >= 0 && before <= TensorShape::kMaxElements &&
                       after <= TensorShape::kMaxElements,
                   "Pad: paddings [{}] must be non-negative (and not huge)", fmt::join(paddings_, ","));
      begin[k] = before;
      dims[k] = x.dim(k) + before + after;
    }
    Tensor* y = ctx->allocate_output(0, TensorShape(dims));
    y->flat<T>().device(ctx->eigen_device()) = y->flat<T>().constant(value_);
    BoxCopy(*y, begin, x.shape().dims(), std::vector<int64_t>(r, 1), x, true, ctx->intra_op_pool());
  }

 private:
  const std::vector<int64_t> paddings_;
  const T value_;
};

class GatherOp : public OpKernel {
 public:
  explicit GatherOp(const Node& n) : OpKernel(n), axis_(n.attr<int64_t>("axis")) {}
  void Compute(OpKernelContext* ctx) override {
    const Tensor& params = ctx->input(0);
    const Tensor& indices = ctx->input(1);
    const GatherDims g = MakeGatherDims(params.shape(), indices.shape(), axis_, "Gather");
    const std::vector<int64_t> idx = ReadIndices(indices, g.n, "Gather", params.shape());
    Tensor* y = ctx->allocate_output(0, TensorShape(g.out_dims));
    const int64_t m = static_cast<int64_t>(idx.size());
    const size_t row = static_cast<size_t>(g.inner) * DTypeSize(params.dtype());
    if (row == 0 || m == 0) return;
    const char* src = static_cast<const char*>(params.raw_data());
    char* dst = static_cast<char*>(y->raw_data());
    auto run = [&](int64_t begin, int64_t end) {
      for (int64_t t = begin; t < end; ++t) {
        const int64_t o = t / m, j = t % m;
        std::memcpy(dst + t * row, src + (o * g.n + idx[j]) * row, row);
      }
    };
    if (ctx->intra_op_pool() != nullptr && y->bytes() >= (size_t{1} << 16)) {
      ctx->intra_op_pool()->ParallelFor(g.outer * m, run);
    } else {
      run(0, g.outer * m);
    }
  }

 private:
  const int64_t axis_;
};

// out viewed as [outer, n, inner], in as [outer, idx.size(), inner]: adds in's row j to out's row
// idx[j] (repeated indices accumulate; negative ones are dropped, as UnsortedSegmentSum's).
// REQUIRES: every idx[j] < n, out zeroed by the caller.
template <typename T>
void AddRowsAt(const T* in, const std::vector<int64_t>& idx, int64_t outer, int64_t n, int64_t inner, T* out) {
  const int64_t m = static_cast<int64_t>(idx.size());
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t j = 0; j < m; ++j) {
      if (idx[j] < 0) continue;
      T* d = out + (o * n + idx[j]) * inner;
      const T* s = in + (o * m + j) * inner;
      for (int64_t i = 0; i < inner; ++i) d[i] += s[i];
    }
  }
}

// Gather's gradient: dparams = zeros(params_shape) with dy's rows added at the gathered indices
// (repeated indices accumulate).
template <typename T>
class GatherGradOp : public OpKernel {
 public:
  explicit GatherGradOp(const Node& n) : OpKernel(n), axis_(n.attr<int64_t>("axis")) {}
  void Compute(OpKernelContext* ctx) override {
    const Tensor& dy = ctx->input(0);
    const Tensor& indices = ctx->input(1);
    const TensorShape shape = ReadShape(ctx->input(2), "GatherGrad: params_shape");
    const GatherDims g = MakeGatherDims(shape, indices.shape(), axis_, "GatherGrad");
    WEFT_REQUIRE(dy.shape() == TensorShape(g.out_dims), "GatherGrad: dy has shape {}, expected {}",
                 dy.shape().ToString(), TensorShape(g.out_dims).ToString());
    const std::vector<int64_t> idx = ReadIndices(indices, g.n, "GatherGrad", shape);
    Tensor* dx = ctx->allocate_output(0, shape);
    T* out = dx->data<T>();
    std::fill(out, out + dx->num_elements(), T(0));
    AddRowsAt(dy.data<T>(), idx, g.outer, g.n, g.inner, out);
  }

 private:
  const int64_t axis_;
};


// UnsortedSegmentSum(data, segment_ids, num_segments): data viewed as [ids, inner], the output as
// [num_segments, inner]; negative ids are dropped (TF's CPU kernel), ids >= num_segments refused
// before anything is written.
template <typename T>
class UnsortedSegmentSumOp : public OpKernel {
 public:
  explicit UnsortedSegmentSumOp(const Node& n) : OpKernel(n) {}
  void Compute(OpKernelContext* ctx) override {
    const Tensor& data = ctx->input(0);
    const Tensor& ids = ctx->input(1);
    const int64_t num = ReadNumSegments(ctx->input(2));
    const std::vector<int64_t> out_dims = SegmentSumDims(data.shape(), ids.shape(), num);
    const std::vector<int64_t> idx = ReadSegmentIds(ids, num, "UnsortedSegmentSum");
    Tensor* y = ctx->allocate_output(0, TensorShape(out_dims));
    T* out = y->data<T>();
    std::fill(out, out + y->num_elements(), T(0));
    const int64_t inner = idx.empty() ? 0 : data.num_elements() / static_cast<int64_t>(idx.size());
    AddRowsAt(data.data<T>(), idx, 1, num, inner, out);
  }
};

}  // namespace

void RegisterArrayIndexKernels(KernelRegistry& r) {
  RegisterUntyped<SliceOp>(r, "Slice");
  RegisterUntyped<StridedSliceOp>(r, "StridedSlice");
  RegisterUntyped<StridedSliceGradOp>(r, "StridedSliceGrad");
  RegisterTyped<PadOp, WEFT_ALL_TYPES>(r, "Pad");
  RegisterUntyped<GatherOp>(r, "Gather");
  RegisterTyped<GatherGradOp, WEFT_NUMBER_TYPES>(r, "GatherGrad");
  RegisterTyped<UnsortedSegmentSumOp, WEFT_NUMBER_TYPES>(r, "UnsortedSegmentSum");
}

}  // namespace weft
