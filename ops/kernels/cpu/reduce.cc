// CPU kernels for reductions: Sum, Mean, Max, Min, Prod (attrs axis, keep_dims), ArgMax/ArgMin,
// and the gradient helpers SumToShape and ReducedShape.
//
// Shape key: the input is viewed as alternating groups of kept and reduced dims (adjacent dims of
// one kind merged, size-1 dims dropped). Each reduced group is one reduction of a [P, R, S] view
// over R (P = product of the dims before it, S = after), innermost group first. For float/double
// that is one Eigen reduction on the thread-pool device ([P, R] and [R, S] are the fast inner /
// outer cases and [R] alone is a full multi-threaded reduction); integer types and ArgMax/ArgMin
// use plain loops split over the pool (each Eigen device reduction is an expensive instantiation,
// and integer reductions are rare). Reductions over the last or first axes are a single pass.
#include <fmt/ranges.h>

#include <algorithm>
#include <type_traits>
#include <utility>
#include <vector>

#include "ops/all_ops.h"
#include "ops/kernel.h"
#include "ops/kernels/cpu/broadcast.h"
#include "ops/kernels/cpu/math_kernels.h"
#include "ops/kernels/cuda/launch.h"  // ArgExtreme, shared with the GPU kernel (plain C++)

namespace weft {

std::vector<bool> ReducedMask(const TensorShape& shape, const std::vector<int64_t>& axis) {
  std::vector<bool> mask(shape.rank(), axis.empty());
  for (int64_t a : axis) {
    const int c = shape.CanonicalAxis(a, "axis");
    WEFT_REQUIRE(!mask[c], "axis {} is listed twice in axis attr for input shape {}", a, shape.ToString());
    mask[c] = true;
  }
  return mask;
}

namespace {

using Index = Eigen::DenseIndex;
template <int N> using Dims = Eigen::array<Index, N>;

// (size, reduced) groups of `shape` under `mask`, merged as the file comment describes.
std::vector<std::pair<int64_t, bool>> Groups(const TensorShape& shape, const std::vector<bool>& mask) {
  std::vector<std::pair<int64_t, bool>> g;
  for (int i = 0; i < shape.rank(); ++i) {
    if (shape.dim(i) == 1) continue;
    if (!g.empty() && g.back().second == mask[i]) {
      g.back().first *= shape.dim(i);
    } else {
      g.emplace_back(shape.dim(i), mask[i]);
    }
  }
  return g;
}

// out[i, j] = reduction over k of in[i, k, j] for the [p, r, s] view, with the Eigen reducer's
// scalar interface (initialize / reduce / finalize), split over the pool.
template <typename T, typename Reducer>
void LoopReduce(ThreadPool* pool, const T* in, T* out, int64_t p, int64_t r, int64_t s) {
  const Reducer red;
  if (s == 1) {
    ParallelForCost(pool, p, r, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) {
        T acc = red.initialize();
        const T* x = in + i * r;
        for (int64_t k = 0; k < r; ++k) red.reduce(x[k], &acc);
        out[i] = red.finalize(acc);
      }
    });
    return;
  }
  // Units of (row i, chunk of up to kChunk columns); each accumulates across r in place.
  constexpr int64_t kChunk = 1024;
  const int64_t chunks = (s + kChunk - 1) / kChunk;
  ParallelForCost(pool, p * chunks, r * std::min(s, kChunk), [&](int64_t begin, int64_t end) {
    for (int64_t u = begin; u < end; ++u) {
      const int64_t i = u / chunks, lo = (u % chunks) * kChunk, hi = std::min(s, lo + kChunk);
      T* o = out + i * s;
      for (int64_t j = lo; j < hi; ++j) o[j] = red.initialize();
      for (int64_t k = 0; k < r; ++k) {
        const T* x = in + (i * r + k) * s;
        for (int64_t j = lo; j < hi; ++j) red.reduce(x[j], &o[j]);
      }
      for (int64_t j = lo; j < hi; ++j) o[j] = red.finalize(o[j]);
    }
  });
}

// Reduces `in` over the reduced groups into `out` (whose element count is the product of the
// kept groups). Intermediate passes allocate temporaries.
template <typename T, typename Reducer>
void ReduceInto(OpKernelContext* ctx, const Tensor& in, std::vector<std::pair<int64_t, bool>> groups, Tensor* out) {
  const auto& d = ctx->eigen_device();
  Tensor cur = in;
  auto has_reduced = [&] {
    for (auto& g : groups)
      if (g.second) return true;
    return false;
  };
  if (!has_reduced()) {  // nothing to reduce: a copy
    std::copy_n(in.data<T>(), in.num_elements(), out->data<T>());
    return;
  }
  while (true) {
    int j = static_cast<int>(groups.size()) - 1;
    while (!groups[j].second) --j;
    int64_t p = 1, s = 1;
    for (int k = 0; k < j; ++k) p *= groups[k].first;
    for (size_t k = j + 1; k < groups.size(); ++k) s *= groups[k].first;
    const int64_t r = groups[j].first;
    groups.erase(groups.begin() + j);
    if (j > 0 && j < static_cast<int>(groups.size()) && !groups[j - 1].second && !groups[j].second) {
      groups[j - 1].first *= groups[j].first;
      groups.erase(groups.begin() + j);
    }
    const bool last = !has_reduced();
    Tensor next = last ? *out : Tensor(in.dtype(), TensorShape({p * s}), ctx->allocator());
    if (p * s > 0) {
      if (r == 0) {
        std::fill_n(next.data<T>(), p * s, Reducer().initialize());
      } else if constexpr (!std::is_floating_point_v<T>) {
        LoopReduce<T, Reducer>(ctx->intra_op_pool(), cur.data<T>(), next.data<T>(), p, r, s);
      } else if (p == 1 && s == 1) {
        next.shaped<T, 0>({}).device(d) = cur.flat<T>().reduce(Dims<1>{0}, Reducer());
      } else if (s == 1) {
        next.shaped<T, 1>({p}).device(d) = cur.shaped<T, 2>({p, r}).reduce(Dims<1>{1}, Reducer());
      } else if (p == 1) {
        next.shaped<T, 1>({s}).device(d) = cur.shaped<T, 2>({r, s}).reduce(Dims<1>{0}, Reducer());
      } else {
        next.shaped<T, 2>({p, s}).device(d) = cur.shaped<T, 3>({p, r, s}).reduce(Dims<1>{1}, Reducer());
      }
    }
    if (last) return;
    cur = next;
  }
}

// Sum/Mean/Max/Min/Prod. Mean divides the sum by the reduced element count (integer Mean
// truncates; an integer Mean over zero elements is an error, float gives NaN).
template <typename T, typename Reducer, bool kMean = false>
class ReduceOp : public OpKernel {
 public:
  explicit ReduceOp(const Node& node)
      : OpKernel(node), axis_(node.attr<std::vector<int64_t>>("axis")), keep_dims_(node.attr<bool>("keep_dims")) {}

  void Compute(OpKernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    const std::vector<bool> mask = ReducedMask(x.shape(), axis_);
    std::vector<int64_t> out_dims;
    int64_t count = 1;
    for (int i = 0; i < x.rank(); ++i) {
      if (!mask[i]) {
        out_dims.push_back(x.dim(i));
      } else {
        count *= x.dim(i);
        if (keep_dims_) out_dims.push_back(1);
      }
    }
    if (count == 1 && x.num_elements() > 0) {  // only size-1 axes reduced: same values, new shape
      ctx->set_output(0, x.Reshaped(TensorShape(out_dims)));
      return;
    }
    Tensor* out = ctx->allocate_output(0, TensorShape(out_dims));
    ReduceInto<T, Reducer>(ctx, x, Groups(x.shape(), mask), out);
    if constexpr (kMean) {
      if (out->num_elements() == 0) return;
      if constexpr (std::is_integral_v<T>) {
        WEFT_REQUIRE(count > 0, "integer mean over zero elements (input {}, axis [{}])", x.shape().ToString(),
                     fmt::join(axis_, ","));
        T* o = out->data<T>();
        for (int64_t i = 0, n = out->num_elements(); i < n; ++i) o[i] = static_cast<T>(o[i] / static_cast<T>(count));
      } else {
        out->flat<T>().device(ctx->eigen_device()) = out->flat<T>() * static_cast<T>(1.0 / static_cast<double>(count));
      }
    }
  }

 private:
  std::vector<int64_t> axis_;
  bool keep_dims_;
};

template <typename T> using SumOp = ReduceOp<T, Eigen::internal::SumReducer<T>>;
template <typename T> using MeanOp = ReduceOp<T, Eigen::internal::SumReducer<T>, true>;
// Max and Min propagate NaN (TF, np.max): Eigen's default reducers drop a NaN by position.
template <typename T> using MaxOp = ReduceOp<T, Eigen::internal::MaxReducer<T, Eigen::PropagateNaN>>;
template <typename T> using MinOp = ReduceOp<T, Eigen::internal::MinReducer<T, Eigen::PropagateNaN>>;
template <typename T> using ProdOp = ReduceOp<T, Eigen::internal::ProdReducer<T>>;

}  // namespace

std::vector<int64_t> ArgReduceDims(const TensorShape& x, int64_t axis_attr, int64_t* p, int64_t* r, int64_t* s) {
  const int axis = x.CanonicalAxis(axis_attr, "axis");
  *r = x.dim(axis);
  *p = *s = 1;
  std::vector<int64_t> out_dims;
  for (int i = 0; i < x.rank(); ++i) {
    if (i < axis) *p *= x.dim(i);
    if (i > axis) *s *= x.dim(i);
    if (i != axis) out_dims.push_back(x.dim(i));
  }
  WEFT_REQUIRE(*r > 0, "axis {} of input {} is empty", axis_attr, x.ToString());
  return out_dims;
}

namespace {

// ArgMax / ArgMin over one axis; ties go to the smallest index. The output type (int32/int64)
// is the node's output dtype.
template <typename T, bool kMax>
class ArgOp : public OpKernel {
 public:
  explicit ArgOp(const Node& node) : OpKernel(node), axis_(node.attr<int64_t>("axis")) {}

  void Compute(OpKernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    int64_t p, r, s;
    const std::vector<int64_t> out_dims = ArgReduceDims(x.shape(), axis_, &p, &r, &s);
    Tensor* out = ctx->allocate_output(0, TensorShape(out_dims));
    if (out->num_elements() == 0) return;
    Dispatch<int32_t, int64_t>(out->dtype(), "output_type", [&](auto tag) {
      using Out = typename decltype(tag)::type;
      const T* in = x.data<T>();
      Out* o = out->data<Out>();
      // Per (i, j) of the [p, r, s] view: the first k with the extreme value (strictly better
      // values replace it, so ties keep the smallest index).
      ParallelForCost(ctx->intra_op_pool(), p * s, r, [&](int64_t begin, int64_t end) {
        for (int64_t u = begin; u < end; ++u) {
          o[u] = static_cast<Out>(ArgExtreme(in + (u / s) * r * s + u % s, r, s, kMax));
        }
      });
    });
  }

 private:
  int64_t axis_;
};

template <typename T> using ArgMaxOp = ArgOp<T, true>;
template <typename T> using ArgMinOp = ArgOp<T, false>;

// Reads a rank-1 int32/int64 tensor as dims.
std::vector<int64_t> ReadDims(const Tensor& t, std::string_view what) {
  WEFT_REQUIRE(t.rank() == 1, "{} must be a vector, got shape {}", what, t.shape().ToString());
  std::vector<int64_t> dims(t.num_elements());
  for (int64_t i = 0; i < t.num_elements(); ++i) dims[i] = t.ElementAsInt64(i);
  return dims;
}

// SumToShape(x, shape): sums x over the axes broadcasting expanded to turn `shape` into
// x.shape (the leading extra axes and the axes where `shape` has 1), then takes `shape`.
template <typename T>
class SumToShapeOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    const std::vector<int64_t> target = ReadDims(ctx->input(1), "shape");
    const int rx = x.rank(), rt = static_cast<int>(target.size());
    const TensorShape target_shape(target);
    bool ok = rt <= rx;
    std::vector<bool> mask(rx, false);
    for (int i = 0; ok && i < rx; ++i) {
      const int k = i - (rx - rt);
      if (k < 0) {
        mask[i] = true;
      } else if (target[k] != x.dim(i)) {
        ok = target[k] == 1;
        mask[i] = true;
      }
    }
    WEFT_REQUIRE(ok, "cannot sum {} down to {} (it does not broadcast to {})", x.shape().ToString(),
                 target_shape.ToString(), x.shape().ToString());
    if (x.shape() == target_shape) {
      ctx->set_output(0, x);
      return;
    }
    Tensor* out = ctx->allocate_output(0, target_shape);
    ReduceInto<T, Eigen::internal::SumReducer<T>>(ctx, x, Groups(x.shape(), mask), out);
  }
};

}  // namespace

std::vector<int64_t> ReducedShapeDims(std::vector<int64_t> dims, const std::vector<int64_t>& axis) {
  // Only the rank matters for the axis check; unknown (-1) entries cannot occur at run time.
  const std::vector<bool> mask = ReducedMask(TensorShape::UnknownOfRank(static_cast<int64_t>(dims.size())), axis);
  for (size_t i = 0; i < dims.size(); ++i) {
    if (mask[i]) dims[i] = 1;
  }
  return dims;
}

namespace {

// ReducedShape(shape): `shape` with the axes named by attr `axis` (empty = all) set to 1 — the
// keep_dims shape of a reduction, for gradients that need it at run time.
template <typename T>
class ReducedShapeOp : public OpKernel {
 public:
  explicit ReducedShapeOp(const Node& node) : OpKernel(node), axis_(node.attr<std::vector<int64_t>>("axis")) {}
  void Compute(OpKernelContext* ctx) override {
    const Tensor& in = ctx->input(0);
    const std::vector<int64_t> dims = ReducedShapeDims(ReadDims(in, "shape"), axis_);
    Tensor* out = ctx->allocate_output(0, in.shape());
    T* o = out->data<T>();
    for (size_t i = 0; i < dims.size(); ++i) o[i] = static_cast<T>(dims[i]);
  }

 private:
  std::vector<int64_t> axis_;
};

}  // namespace

void RegisterReduceKernels(KernelRegistry& r) {
  RegisterTyped<SumOp, WEFT_NUMBER_TYPES>(r, "Sum");
  RegisterTyped<MeanOp, WEFT_NUMBER_TYPES>(r, "Mean");
  RegisterTyped<MaxOp, WEFT_NUMBER_TYPES>(r, "Max");
  RegisterTyped<MinOp, WEFT_NUMBER_TYPES>(r, "Min");
  RegisterTyped<ProdOp, WEFT_NUMBER_TYPES>(r, "Prod");
  RegisterTyped<ArgMaxOp, WEFT_NUMBER_TYPES>(r, "ArgMax");
  RegisterTyped<ArgMinOp, WEFT_NUMBER_TYPES>(r, "ArgMin");
  RegisterTyped<SumToShapeOp, WEFT_NUMBER_TYPES>(r, "SumToShape");
  RegisterTyped<ReducedShapeOp, int32_t, int64_t>(r, "ReducedShape");
}

}  // namespace weft
