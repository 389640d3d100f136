// CPU kernels for the array ops that move whole tensors: shape queries, reshapes (which share the
// input buffer), Transpose, Concat/Split, Tile, BroadcastTo, and the fills (Fill, ZerosLike,
// OnesLike, OneHot). Pure data movement is done on bytes by StridedCopy, so one kernel serves
// every dtype; kernels that create values are typed.
#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <limits>

#include "ops/all_ops.h"
#include "ops/kernel.h"
#include "ops/kernels/cpu/array_kernels.h"

namespace weft {

// ---- StridedCopy

namespace {

template <typename E>
void CopyRunTyped(const char* src, int64_t ss, char* dst, int64_t ds, int64_t n) {
  const E* s = reinterpret_cast<const E*>(src);
  E* d = reinterpret_cast<E*>(dst);
  for (int64_t i = 0; i < n; ++i) d[i * ds] = s[i * ss];
}

// Copies n elements from src (stride ss) to dst (stride ds).
void CopyRun(const char* src, int64_t ss, char* dst, int64_t ds, int64_t n, size_t esz) {
  if (ss == 1 && ds == 1) {
    std::memcpy(dst, src, static_cast<size_t>(n) * esz);
    return;
  }
  switch (esz) {
    case 1: return CopyRunTyped<uint8_t>(src, ss, dst, ds, n);
    case 2: return CopyRunTyped<uint16_t>(src, ss, dst, ds, n);
    case 4: return CopyRunTyped<uint32_t>(src, ss, dst, ds, n);
    case 8: return CopyRunTyped<uint64_t>(src, ss, dst, ds, n);
    default:
      for (int64_t i = 0; i < n; ++i) std::memcpy(dst + i * ds * esz, src + i * ss * esz, esz);
  }
}

constexpr int64_t kParallelBytes = int64_t{1} << 16;  // below this, copying inline is faster
constexpr int64_t kTile = 32;                         // elements per side of a transposing tile

}  // namespace

std::vector<int64_t> DenseStrides(const std::vector<int64_t>& dims) {
  std::vector<int64_t> strides(dims.size(), 1);
  for (int k = static_cast<int>(dims.size()) - 2; k >= 0; --k) strides[k] = strides[k + 1] * dims[k + 1];
  return strides;
}

void StridedCopy(const void* src, const std::vector<int64_t>& src_strides, void* dst,
                 const std::vector<int64_t>& dst_strides, const std::vector<int64_t>& dims, size_t esz,
                 ThreadPool* pool) {
  int64_t total = 1;
  for (int64_t d : dims) total *= d;
  if (total == 0) return;
  // Drop size-1 dims and merge dims that are contiguous in both src and dst, so that the inner
  // run is as long as possible (a plain slice of rows becomes one memcpy per row).
  std::vector<int64_t> D, S, T;
  for (size_t k = 0; k < dims.size(); ++k) {
    if (dims[k] == 1) continue;
    if (!D.empty() && S.back() == src_strides[k] * dims[k] && T.back() == dst_strides[k] * dims[k]) {
      D.back() *= dims[k];
      S.back() = src_strides[k];
      T.back() = dst_strides[k];
    } else {
      D.push_back(dims[k]);
      S.push_back(src_strides[k]);
      T.push_back(dst_strides[k]);
    }
  }
  if (D.empty()) D = S = T = {1};
  // The two innermost dims form a plane [m, n] copied in tiles (so a transpose reads and writes
  // whole cache lines); the dims outside it and the plane's row blocks are the parallel units.
  const int64_t n = D.back(), sn = S.back(), dn = T.back();
  D.pop_back(), S.pop_back(), T.pop_back();
  int64_t m = 1, sm = 0, dm = 0;
  if (!D.empty()) {
    m = D.back(), sm = S.back(), dm = T.back();
    D.pop_back(), S.pop_back(), T.pop_back();
  }
  const bool rows = (sn == 1 && dn == 1) || m == 1;  // each row is one contiguous run or one strided run
  const int64_t tile = rows ? std::max<int64_t>(1, (m + 63) / 64) : kTile;  // rows: at most 64 blocks
  const int64_t blocks = (m + tile - 1) / tile;
  int64_t outer = 1;
  for (int64_t d : D) outer *= d;

  const char* s0 = static_cast<const char*>(src);
  char* d0 = static_cast<char*>(dst);
  const int64_t e = static_cast<int64_t>(esz);
  auto run = [&](int64_t begin, int64_t end) {
    for (int64_t u = begin; u < end; ++u) {
      int64_t o = u / blocks, so = 0, dof = 0;
      for (int k = static_cast<int>(D.size()) - 1; k >= 0; --k) {
        so += (o % D[k]) * S[k];
        dof += (o % D[k]) * T[k];
        o /= D[k];
      }
      const int64_t i0 = (u % blocks) * tile, i1 = std::min(m, i0 + tile);
      for (int64_t j0 = 0; j0 < n; j0 += rows ? n : kTile) {
        const int64_t len = rows ? n : std::min(kTile, n - j0);
        for (int64_t i = i0; i < i1; ++i) {
          CopyRun(s0 + (so + i * sm + j0 * sn) * e, sn, d0 + (dof + i * dm + j0 * dn) * e, dn, len, esz);
        }
      }
    }
  };
  if (pool != nullptr && outer * blocks > 1 && total * e >= kParallelBytes) {
    pool->ParallelFor(outer * blocks, run);
  } else {
    run(0, outer * blocks);
  }
}

TensorShape ResolveReshape(const TensorShape& in, const std::vector<int64_t>& target) {
  const std::string want = fmt::format("[{}]", fmt::join(target, ","));
  int infer = -1;
  int64_t known = 1;
  for (size_t k = 0; k < target.size(); ++k) {
    const int64_t d = target[k];
    if (d == -1) {
      WEFT_REQUIRE(infer < 0, "Reshape: only one dimension may be -1, got shape {}", want);
      infer = static_cast<int>(k);
      continue;
    }
    WEFT_REQUIRE(d >= 0, "Reshape: negative dimension {} in requested shape {}", d, want);
    WEFT_REQUIRE(d == 0 || known <= TensorShape::kMaxElements / d,
                 "Reshape: requested shape {} has too many elements (limit 2^50)", want);
    known *= d;
  }
  std::vector<int64_t> out = target;
  if (in.IsFullyDefined()) {
    const int64_t n = in.num_elements();
    if (infer >= 0) {
      WEFT_REQUIRE(known > 0, "Reshape: cannot infer the -1 of {} when the other dims multiply to 0 (input {})",
                   want, in.ToString());
      WEFT_REQUIRE(n % known == 0,
                   "Reshape: cannot reshape a tensor of shape {} ({} elements) into shape {}: {} is not a "
                   "multiple of {}",
                   in.ToString(), n, want, n, known);
      out[infer] = n / known;
    } else {
      WEFT_REQUIRE(known == n, "Reshape: cannot reshape a tensor of shape {} ({} elements) into shape {} ({} elements)",
                   in.ToString(), n, want, known);
    }
  }
  return TensorShape(out);
}

std::vector<int64_t> ReadIntVector(const Tensor& t, std::string_view what) {
  WEFT_REQUIRE(t.rank() == 1, "{} must be a vector, got {}", what, t.DebugString());
  WEFT_REQUIRE(t.dtype() == DType::kInt32 || t.dtype() == DType::kInt64, "{} must be int32 or int64, got {}", what,
               t.DebugString());
  std::vector<int64_t> v(t.num_elements());
  for (int64_t i = 0; i < t.num_elements(); ++i) v[i] = t.ElementAsInt64(i);
  return v;
}

TensorShape ReadShape(const Tensor& t, std::string_view what) {
  std::vector<int64_t> dims = ReadIntVector(t, what);
  for (int64_t d : dims) WEFT_REQUIRE(d >= 0, "{} has negative dimension {} in {}", what, d, t.ValuesString());
  TensorShape s(dims);
  s.num_elements();  // throws InvalidArgument when the product overflows the element limit
  return s;
}

namespace {

// ---- shape queries

template <typename T>
class ShapeOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    const TensorShape& s = ctx->input(0).shape();
    Tensor* out = ctx->allocate_output(0, TensorShape({s.rank()}));
    for (int k = 0; k < s.rank(); ++k) {
      WEFT_REQUIRE(s.dim(k) <= std::numeric_limits<T>::max(), "Shape: dim {} of {} does not fit in {}", k,
                   s.ToString(), DTypeName(DTypeOf<T>()));
      out->data<T>()[k] = static_cast<T>(s.dim(k));
    }
  }
};

template <typename T>
class SizeOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    const int64_t n = ctx->input(0).num_elements();
    WEFT_REQUIRE(n <= std::numeric_limits<T>::max(), "Size: {} elements of {} do not fit in {}", n,
                 ctx->input(0).shape().ToString(), DTypeName(DTypeOf<T>()));
    ctx->set_output(0, Tensor::Scalar<T>(static_cast<T>(n)));
  }
};

class RankOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override { ctx->set_output(0, Tensor::Scalar<int32_t>(ctx->input(0).rank())); }
};

// ---- reshapes: the output shares the input's buffer

class ReshapeOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    ctx->set_output(0, x.Reshaped(ResolveReshape(x.shape(), ReadIntVector(ctx->input(1), "Reshape: shape"))));
  }
};

class ExpandDimsOp : public OpKernel {
 public:
  explicit ExpandDimsOp(const Node& n) : OpKernel(n), axis_(n.attr<int64_t>("axis")) {}
  void Compute(OpKernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    const int r = x.rank();
    WEFT_REQUIRE(axis_ >= -r - 1 && axis_ <= r, "ExpandDims: axis {} out of range [{}, {}] for shape {}", axis_,
                 -r - 1, r, x.shape().ToString());
    std::vector<int64_t> dims = x.shape().dims();
    dims.insert(dims.begin() + (axis_ < 0 ? axis_ + r + 1 : axis_), 1);
    ctx->set_output(0, x.Reshaped(TensorShape(dims)));
  }

 private:
  const int64_t axis_;
};

class SqueezeOp : public OpKernel {
 public:
  explicit SqueezeOp(const Node& n) : OpKernel(n), axis_(n.attr<std::vector<int64_t>>("axis")) {}
  void Compute(OpKernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    std::vector<bool> drop(x.rank(), axis_.empty());
    for (int64_t a : axis_) {
      const int k = x.shape().CanonicalAxis(a, "Squeeze");
      WEFT_REQUIRE(x.dim(k) == 1, "Squeeze: cannot squeeze axis {} of shape {}: its size is {}, not 1", a,
                   x.shape().ToString(), x.dim(k));
      drop[k] = true;
    }
    std::vector<int64_t> dims;
    for (int k = 0; k < x.rank(); ++k) {
      if (!(drop[k] && x.dim(k) == 1)) dims.push_back(x.dim(k));
    }
    ctx->set_output(0, x.Reshaped(TensorShape(dims)));
  }

 private:
  const std::vector<int64_t> axis_;
};

// ---- Transpose

}  // namespace

std::vector<int64_t> TransposeDims(const TensorShape& x, const std::vector<int64_t>& perm, bool* identity) {
  const int r = x.rank();
  WEFT_REQUIRE(static_cast<int>(perm.size()) == r, "Transpose: perm [{}] has {} entries for shape {}",
               fmt::join(perm, ","), perm.size(), x.ToString());
  std::vector<int64_t> dims(r);
  std::vector<bool> seen(r, false);
  *identity = true;
  for (int k = 0; k < r; ++k) {
    const int64_t p = perm[k];
    WEFT_REQUIRE(p >= 0 && p < r && !seen[p], "Transpose: perm [{}] is not a permutation of 0..{}",
                 fmt::join(perm, ","), r - 1);
    seen[p] = true;
    *identity = *identity && p == k;
    dims[k] = x.dim(static_cast<int>(p));
  }
  return dims;
}

namespace {

class TransposeOp : public OpKernel {
 public:
  explicit TransposeOp(const Node& n) : OpKernel(n), perm_(n.attr<std::vector<int64_t>>("perm")) {}
  void Compute(OpKernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    bool identity;
    const std::vector<int64_t> dims = TransposeDims(x.shape(), perm_, &identity);
    if (identity) return ctx->set_output(0, x);
    const std::vector<int64_t> in_strides = DenseStrides(x.shape().dims());
    std::vector<int64_t> strides(dims.size());
    for (size_t k = 0; k < dims.size(); ++k) strides[k] = in_strides[static_cast<size_t>(perm_[k])];
    Tensor* y = ctx->allocate_output(0, TensorShape(dims));
    StridedCopy(x.raw_data(), strides, y->raw_data(), DenseStrides(dims), dims, DTypeSize(x.dtype()),
                ctx->intra_op_pool());
  }

 private:
  const std::vector<int64_t> perm_;
};

// ---- Concat / Split: both view tensors as [outer, axis * inner] and copy column blocks

// Copies the [outer, width] block at column `col` of `big` (row length big_width) to or from `part`.
void CopyColumns(const Tensor& part, const Tensor& big, int64_t outer, int64_t width, int64_t col,
                 int64_t big_width, bool into_big, ThreadPool* pool) {
  const size_t esz = DTypeSize(big.dtype());
  char* big_ptr = static_cast<char*>(big.raw_data()) + col * static_cast<int64_t>(esz);
  if (into_big) {
    StridedCopy(part.raw_data(), {width, 1}, big_ptr, {big_width, 1}, {outer, width}, esz, pool);
  } else {
    StridedCopy(big_ptr, {big_width, 1}, part.raw_data(), {width, 1}, {outer, width}, esz, pool);
  }
}

// Splits `x` along `axis` into pieces of the given sizes, as outputs 0..n-1 of ctx.
void SplitInto(OpKernelContext* ctx, const Tensor& x, int axis, const std::vector<int64_t>& sizes) {
  int64_t outer = 1, inner = 1;
  for (int k = 0; k < axis; ++k) outer *= x.dim(k);
  for (int k = axis + 1; k < x.rank(); ++k) inner *= x.dim(k);
  int64_t col = 0;
  for (size_t i = 0; i < sizes.size(); ++i) {
    std::vector<int64_t> dims = x.shape().dims();
    dims[axis] = sizes[i];
    Tensor* y = ctx->allocate_output(static_cast<int>(i), TensorShape(dims));
    CopyColumns(*y, x, outer, sizes[i] * inner, col, x.dim(axis) * inner, false, ctx->intra_op_pool());
    col += sizes[i] * inner;
  }
}

}  // namespace

std::vector<int64_t> ConcatDims(const OpKernelContext* ctx, int64_t axis_attr, int* axis, int64_t* outer,
                                int64_t* inner) {
  const Tensor& x0 = ctx->input(0);
  *axis = x0.shape().CanonicalAxis(axis_attr, "Concat");
  std::vector<int64_t> dims = x0.shape().dims();
  dims[*axis] = 0;
  for (int i = 0; i < ctx->num_inputs(); ++i) {
    const Tensor& xi = ctx->input(i);
    bool ok = xi.rank() == x0.rank();
    for (int k = 0; ok && k < x0.rank(); ++k) ok = k == *axis || xi.dim(k) == x0.dim(k);
    WEFT_REQUIRE(ok, "Concat: input {} has shape {} but input 0 has shape {} (they must match except on axis {})", i,
                 xi.shape().ToString(), x0.shape().ToString(), axis_attr);
    dims[*axis] += xi.dim(*axis);
  }
  *outer = 1;
  *inner = 1;
  for (int k = 0; k < *axis; ++k) *outer *= dims[k];
  for (int k = *axis + 1; k < x0.rank(); ++k) *inner *= dims[k];
  return dims;
}

namespace {

class ConcatOp : public OpKernel {
 public:
  explicit ConcatOp(const Node& n) : OpKernel(n), axis_(n.attr<int64_t>("axis")) {}
  void Compute(OpKernelContext* ctx) override {
    int axis;
    int64_t outer, inner;
    const std::vector<int64_t> dims = ConcatDims(ctx, axis_, &axis, &outer, &inner);
    Tensor* y = ctx->allocate_output(0, TensorShape(dims));
    int64_t col = 0;
    for (int i = 0; i < ctx->num_inputs(); ++i) {
      const int64_t width = ctx->input(i).dim(axis) * inner;
      CopyColumns(ctx->input(i), *y, outer, width, col, dims[axis] * inner, true, ctx->intra_op_pool());
      col += width;
    }
  }

 private:
  const int64_t axis_;
};

// Concat's gradient: splits dy (input 0) along `axis` into pieces of the shapes given by
// inputs 1..N (the forward inputs' run-time shapes).
class ConcatGradOp : public OpKernel {
 public:
  explicit ConcatGradOp(const Node& n) : OpKernel(n), axis_(n.attr<int64_t>("axis")) {}
  void Compute(OpKernelContext* ctx) override {
    const Tensor& dy = ctx->input(0);
    const int axis = dy.shape().CanonicalAxis(axis_, "ConcatGrad");
    std::vector<int64_t> sizes;
    int64_t total = 0;
    for (int i = 1; i < ctx->num_inputs(); ++i) {
      const std::vector<int64_t> si = ReadIntVector(ctx->input(i), "ConcatGrad: shapes");
      bool ok = static_cast<int>(si.size()) == dy.rank() && si[axis] >= 0;
      for (int k = 0; ok && k < dy.rank(); ++k) ok = k == axis || si[k] == dy.dim(k);
      WEFT_REQUIRE(ok, "ConcatGrad: shapes[{}] = [{}] does not fit dy of shape {} on axis {}", i - 1,
                   fmt::join(si, ","), dy.shape().ToString(), axis_);
      sizes.push_back(si[axis]);
      total += si[axis];
    }
    WEFT_REQUIRE(total == dy.dim(axis), "ConcatGrad: shapes add up to {} on axis {} but dy has shape {}", total,
                 axis_, dy.shape().ToString());
    SplitInto(ctx, dy, axis, sizes);
  }

 private:
  const int64_t axis_;
};

class SplitOp : public OpKernel {
 public:
  explicit SplitOp(const Node& n)
      : OpKernel(n), axis_(n.attr<int64_t>("axis")), num_split_(n.attr<int64_t>("num_split")) {}
  void Compute(OpKernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    const int axis = SplitAxis(x.shape(), axis_, num_split_);
    SplitInto(ctx, x, axis, std::vector<int64_t>(num_split_, x.dim(axis) / num_split_));
  }

 private:
  const int64_t axis_, num_split_;
};

// ---- Tile / BroadcastTo: reads with zero strides along the repeated dims

}  // namespace

int SplitAxis(const TensorShape& x, int64_t axis_attr, int64_t num_split) {
  const int axis = x.CanonicalAxis(axis_attr, "Split");
  WEFT_REQUIRE(num_split > 0 && x.dim(axis) % num_split == 0,
               "Split: axis {} of shape {} (size {}) does not divide into {} equal parts", axis_attr, x.ToString(),
               x.dim(axis), num_split);
  return axis;
}

std::vector<int64_t> TileDims(const TensorShape& x, const std::vector<int64_t>& multiples) {
  const int r = x.rank();
  WEFT_REQUIRE(static_cast<int>(multiples.size()) == r, "Tile: multiples [{}] has {} entries for shape {}",
               fmt::join(multiples, ","), multiples.size(), x.ToString());
  std::vector<int64_t> out_dims(r);
  for (int k = 0; k < r; ++k) {
    WEFT_REQUIRE(multiples[k] >= 0, "Tile: negative multiple {} in [{}]", multiples[k], fmt::join(multiples, ","));
    WEFT_REQUIRE(x.dim(k) == 0 || multiples[k] <= TensorShape::kMaxElements / x.dim(k),
                 "Tile: shape {} tiled by [{}] is too large", x.ToString(), fmt::join(multiples, ","));
    out_dims[k] = x.dim(k) * multiples[k];
  }
  return out_dims;
}

namespace {

class TileOp : public OpKernel {
 public:
  explicit TileOp(const Node& n) : OpKernel(n), multiples_(n.attr<std::vector<int64_t>>("multiples")) {}
  void Compute(OpKernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    const int r = x.rank();
    const std::vector<int64_t> out_dims = TileDims(x.shape(), multiples_);
    Tensor* y = ctx->allocate_output(0, TensorShape(out_dims));
    // y viewed as [m0, d0, m1, d1, ...]: x is read with stride 0 along each m_k.
    const std::vector<int64_t> xs = DenseStrides(x.shape().dims()), ys = DenseStrides(out_dims);
    std::vector<int64_t> dims, src, dst;
    for (int k = 0; k < r; ++k) {
      dims.insert(dims.end(), {multiples_[k], x.dim(k)});
      src.insert(src.end(), {0, xs[k]});
      dst.insert(dst.end(), {x.dim(k) * ys[k], ys[k]});
    }
    StridedCopy(x.raw_data(), src, y->raw_data(), dst, dims, DTypeSize(x.dtype()), ctx->intra_op_pool());
  }

 private:
  const std::vector<int64_t> multiples_;
};

class BroadcastToOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    const TensorShape shape = ReadShape(ctx->input(1), "BroadcastTo: shape");
    const int r = shape.rank(), off = r - x.rank();
    bool ok = off >= 0;
    std::vector<int64_t> src(r, 0);
    const std::vector<int64_t> xs = DenseStrides(x.shape().dims());
    for (int k = 0; ok && k < x.rank(); ++k) {
      ok = x.dim(k) == shape.dim(k + off) || x.dim(k) == 1;
      if (x.dim(k) != 1) src[k + off] = xs[k];
    }
    WEFT_REQUIRE(ok, "BroadcastTo: cannot broadcast shape {} to {}", x.shape().ToString(), shape.ToString());
    Tensor* y = ctx->allocate_output(0, shape);
    StridedCopy(x.raw_data(), src, y->raw_data(), DenseStrides(shape.dims()), shape.dims(), DTypeSize(x.dtype()),
                ctx->intra_op_pool());
  }
};

// ---- fills

template <typename T>
class FillOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    const Tensor& value = ctx->input(1);
    WEFT_REQUIRE(value.rank() == 0, "Fill: value must be a scalar, got {}", value.DebugString());
    Tensor* y = ctx->allocate_output(0, ReadShape(ctx->input(0), "Fill: dims"));
    y->flat<T>().device(ctx->eigen_device()) = y->flat<T>().constant(*value.data<T>());
  }
};

template <typename T, int kValue>
class ConstantLikeOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    Tensor* y = ctx->allocate_output(0, ctx->input(0).shape());
    y->flat<T>().device(ctx->eigen_device()) = y->flat<T>().constant(static_cast<T>(kValue));
  }
};
template <typename T> using ZerosLikeOp = ConstantLikeOp<T, 0>;
template <typename T> using OnesLikeOp = ConstantLikeOp<T, 1>;

// OneHot: output[..., d, ...] = (indices[...] == d) ? on : off, with d at `axis`.
template <typename T>
class OneHotOp : public OpKernel {
 public:
  explicit OneHotOp(const Node& n)
      : OpKernel(n),
        depth_(n.attr<int64_t>("depth")),
        axis_(n.attr<int64_t>("axis")),
        on_(static_cast<T>(n.attr<double>("on_value"))),
        off_(static_cast<T>(n.attr<double>("off_value"))) {}
  void Compute(OpKernelContext* ctx) override {
    const Tensor& idx = ctx->input(0);
    const int r = idx.rank();
    WEFT_REQUIRE(depth_ >= 0, "OneHot: depth must be non-negative, got {}", depth_);
    WEFT_REQUIRE(axis_ >= -1 && axis_ <= r, "OneHot: axis {} out of range [-1, {}] for indices of shape {}", axis_, r,
                 idx.shape().ToString());
    const int axis = axis_ < 0 ? r : static_cast<int>(axis_);
    std::vector<int64_t> dims = idx.shape().dims();
    dims.insert(dims.begin() + axis, depth_);
    Tensor* y = ctx->allocate_output(0, TensorShape(dims));
    int64_t outer = 1, inner = 1;
    for (int k = 0; k < axis; ++k) outer *= idx.dim(k);
    for (int k = axis; k < r; ++k) inner *= idx.dim(k);
    T* out = y->data<T>();
    std::fill(out, out + y->num_elements(), off_);
    // Indices outside [0, depth) select nothing (a row of off values), as in TensorFlow.
    for (int64_t o = 0; o < outer; ++o) {
      for (int64_t i = 0; i < inner; ++i) {
        const int64_t d = idx.ElementAsInt64(o * inner + i);
        if (d >= 0 && d < depth_) out[(o * depth_ + d) * inner + i] = on_;
      }
    }
  }

 private:
  const int64_t depth_, axis_;
  const T on_, off_;
};

}  // namespace

void RegisterArrayKernels(KernelRegistry& r) {
  RegisterTyped<ShapeOp, int32_t, int64_t>(r, "Shape", "out_type");
  RegisterTyped<SizeOp, int32_t, int64_t>(r, "Size", "out_type");
  RegisterUntyped<RankOp>(r, "Rank");
  // Size and Rank read only the input's shape and answer in host memory: the same kernels serve the GPU.
  RegisterTyped<SizeOp, int32_t, int64_t>(r, "Size", "out_type", "GPU");
  RegisterUntyped<RankOp>(r, "Rank", "GPU");
  RegisterUntyped<ReshapeOp>(r, "Reshape");
  RegisterUntyped<ExpandDimsOp>(r, "ExpandDims");
  RegisterUntyped<SqueezeOp>(r, "Squeeze");
#if defined(WEFT_CUDA)
  // Views of the same buffer under another shape: the same kernels serve the GPU.
  RegisterUntyped<ExpandDimsOp>(r, "ExpandDims", "GPU");
  RegisterUntyped<SqueezeOp>(r, "Squeeze", "GPU");
#endif
  RegisterUntyped<TransposeOp>(r, "Transpose");
  RegisterUntyped<ConcatOp>(r, "Concat");
  RegisterUntyped<ConcatGradOp>(r, "ConcatGrad");
  RegisterUntyped<SplitOp>(r, "Split");
  RegisterUntyped<TileOp>(r, "Tile");
  RegisterUntyped<BroadcastToOp>(r, "BroadcastTo");
  RegisterTyped<FillOp, WEFT_ALL_TYPES>(r, "Fill");
  RegisterTyped<ZerosLikeOp, WEFT_ALL_TYPES>(r, "ZerosLike");
  RegisterTyped<OnesLikeOp, WEFT_ALL_TYPES>(r, "OnesLike");
  RegisterTyped<OneHotOp, WEFT_ALL_TYPES>(r, "OneHot", "dtype");
  RegisterArrayIndexKernels(r);
}

}  // namespace weft
