// Numpy-style broadcasting of two operands for CPU kernels, with the dims collapsed so that the
// general path is one strided loop whose innermost dim is contiguous (vectorizable).
//
//   BroadcastPlan p = BroadcastPlan::Make(a.shape(), b.shape(), "Add");   // throws if they don't broadcast
//   Tensor* out = ctx->allocate_output(0, p.out_shape);
//   BinaryBroadcast<T, T>(ctx->intra_op_pool(), p, a, b, out, std::plus<T>());
//
// Collapsing: both shapes are right-aligned (padded with leading 1s); output dims of size 1 are
// dropped, and adjacent dims that broadcast the same way (neither operand broadcasts / only a
// broadcasts / only b broadcasts) are merged. [2,3,4]+[4] becomes out [6,4], a [6,4], b [1,4];
// [2,1]+[1,3] becomes out [2,3], a [2,1], b [1,3]. BinaryBroadcast then runs one row loop per
// collapsed outer index (deliberately not an Eigen broadcast expression: those cost minutes of
// compile time per rank x functor x dtype, and are no faster).
//
// Thread-safety: a BroadcastPlan is an immutable value.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <string_view>
#include <vector>

#include "core/tensor.h"
#include "core/threadpool.h"

namespace weft {

struct BroadcastPlan {
  TensorShape out_shape;          // the full (uncollapsed) output shape
  bool same_shape = false;        // a.shape == b.shape: elementwise, no broadcast
  bool a_is_scalar = false;       // a has exactly one element (and b does not have the same shape)
  bool b_is_scalar = false;
  // Collapsed view, rank R = out_dims.size() >= 1: view a as a_dims and b as b_dims (same element
  // counts as a and b), then broadcast each by a_bcast / b_bcast to out_dims.
  std::vector<int64_t> out_dims, a_dims, b_dims, a_bcast, b_bcast;
  // Row-major strides of a and b over the collapsed output dims (0 on broadcast dims).
  std::vector<int64_t> a_strides, b_strides;

  // REQUIRES: a and b fully defined. Throws InvalidArgument "<what>: shapes [..] and [..] do not
  // broadcast" otherwise.
  static BroadcastPlan Make(const TensorShape& a, const TensorShape& b, std::string_view what) {
    BroadcastPlan p;
    const int ra = a.rank(), rb = b.rank();
    const int n = std::max(ra, rb);
    std::vector<int64_t> out(n);
    // kind: 0 = neither broadcasts, 1 = a broadcasts, 2 = b broadcasts
    std::vector<int64_t> cd_out, cd_a, cd_b;
    int last_kind = -1;
    for (int i = 0; i < n; ++i) {
      const int64_t da = i < n - ra ? 1 : a.dim(i - (n - ra));
      const int64_t db = i < n - rb ? 1 : b.dim(i - (n - rb));
      WEFT_REQUIRE(da == db || da == 1 || db == 1, "{}: shapes {} and {} do not broadcast (dim {}: {} vs {})", what,
                   a.ToString(), b.ToString(), i, da, db);
      out[i] = da == 1 ? db : da;
      if (da == 1 && db == 1) continue;
      const int kind = da == db ? 0 : (da == 1 ? 1 : 2);
      if (kind == last_kind) {
        cd_out.back() *= out[i];
        cd_a.back() *= da;
        cd_b.back() *= db;
      } else {
        cd_out.push_back(out[i]);
        cd_a.push_back(da);
        cd_b.push_back(db);
        last_kind = kind;
      }
    }
    p.out_shape = TensorShape(out);
    p.same_shape = a == b;
    const int64_t na = a.num_elements(), nb = b.num_elements();
    p.a_is_scalar = !p.same_shape && na == 1;
    p.b_is_scalar = !p.same_shape && nb == 1;
    if (cd_out.empty()) cd_out = cd_a = cd_b = {1};
    p.out_dims = cd_out;
    p.a_dims = cd_a;
    p.b_dims = cd_b;
    const size_t r = cd_out.size();
    p.a_bcast.resize(r);
    p.b_bcast.resize(r);
    p.a_strides.assign(r, 0);
    p.b_strides.assign(r, 0);
    int64_t sa = 1, sb = 1;
    for (size_t k = r; k-- > 0;) {
      p.a_bcast[k] = cd_a[k] == cd_out[k] ? 1 : cd_out[k];
      p.b_bcast[k] = cd_b[k] == cd_out[k] ? 1 : cd_out[k];
      if (cd_a[k] != 1 || cd_out[k] == 1) p.a_strides[k] = sa;
      if (cd_b[k] != 1 || cd_out[k] == 1) p.b_strides[k] = sb;
      sa *= cd_a[k];
      sb *= cd_b[k];
    }
    return p;
  }

  int rank() const { return static_cast<int>(out_dims.size()); }

  // Offsets into a and b of the output element with flat (row-major) index `i`.
  void Offsets(int64_t i, int64_t* a_off, int64_t* b_off) const {
    int64_t oa = 0, ob = 0;
    for (int k = rank() - 1; k >= 0; --k) {
      const int64_t c = i % out_dims[k];
      i /= out_dims[k];
      oa += c * a_strides[k];
      ob += c * b_strides[k];
    }
    *a_off = oa;
    *b_off = ob;
  }
};

// Runs fn(begin, end) over [0, n) on `pool`, or inline when the whole job is under ~32K units of
// work (n * unit_cost) or the pool has one thread.
inline void ParallelForCost(ThreadPool* pool, int64_t n, int64_t unit_cost,
                            const std::function<void(int64_t, int64_t)>& fn) {
  if (n <= 0) return;
  if (pool == nullptr || pool->num_threads() <= 1 || n < 2 || n * unit_cost < (int64_t{1} << 15)) {
    fn(0, n);
    return;
  }
  pool->ParallelFor(n, fn);
}

// out[i] = f(a[i * sa], b[i * sb]) for i in [0, n), with sa, sb in {0, 1}: the innermost loop of
// every elementwise binary kernel. The three stride cases are separate loops so the compiler
// vectorizes each.
template <typename T, typename OutT, typename F>
inline void BinaryRow(const T* a, const T* b, OutT* out, int64_t n, bool a_step, bool b_step, const F& f) {
  if (a_step && b_step) {
    for (int64_t i = 0; i < n; ++i) out[i] = f(a[i], b[i]);
  } else if (a_step) {
    const T bv = b[0];
    for (int64_t i = 0; i < n; ++i) out[i] = f(a[i], bv);
  } else if (b_step) {
    const T av = a[0];
    for (int64_t i = 0; i < n; ++i) out[i] = f(av, b[i]);
  } else {
    const OutT v = f(a[0], b[0]);
    for (int64_t i = 0; i < n; ++i) out[i] = v;
  }
}

// out = f(a, b) with broadcasting along `p` (any collapsed rank, including the same-shape and
// scalar cases). `out` must have p.out_shape. A plain strided loop over the collapsed dims: the
// innermost dim is one BinaryRow, the outer rows are split over `pool`. F is any binary functor
// (scalar operator()) returning OutT.
template <typename T, typename OutT, typename F>
void BinaryBroadcast(ThreadPool* pool, const BroadcastPlan& p, const Tensor& a, const Tensor& b, Tensor* out,
                     const F& f) {
  const int64_t total = out->num_elements();
  if (total == 0) return;
  const T* pa = a.data<T>();
  const T* pb = b.data<T>();
  OutT* po = out->data<OutT>();
  const int r = p.rank();
  // Flat cases: one row of `total` elements, split into chunks.
  if (p.same_shape || p.a_is_scalar || p.b_is_scalar || r == 1) {
    const bool a_step = p.same_shape || (!p.a_is_scalar && p.a_strides[r - 1] != 0);
    const bool b_step = p.same_shape || (!p.b_is_scalar && p.b_strides[r - 1] != 0);
    constexpr int64_t kChunk = 4096;
    ParallelForCost(pool, (total + kChunk - 1) / kChunk, kChunk, [&](int64_t begin, int64_t end) {
      const int64_t lo = begin * kChunk, hi = std::min(total, end * kChunk);
      BinaryRow(pa + (a_step ? lo : 0), pb + (b_step ? lo : 0), po + lo, hi - lo, a_step, b_step, f);
    });
    return;
  }
  const int64_t inner = p.out_dims[r - 1];
  const bool a_step = p.a_strides[r - 1] != 0, b_step = p.b_strides[r - 1] != 0;
  ParallelForCost(pool, total / inner, inner, [&](int64_t begin, int64_t end) {
    // Multi-index of row `begin` over the outer dims, then stepped like an odometer.
    std::vector<int64_t> idx(r - 1, 0);
    int64_t oa = 0, ob = 0;
    for (int64_t rest = begin, k = r - 2; k >= 0; --k) {
      idx[k] = rest % p.out_dims[k];
      rest /= p.out_dims[k];
      oa += idx[k] * p.a_strides[k];
      ob += idx[k] * p.b_strides[k];
    }
    for (int64_t row = begin; row < end; ++row) {
      BinaryRow(pa + oa, pb + ob, po + row * inner, inner, a_step, b_step, f);
      for (int k = r - 2; k >= 0; --k) {
        oa += p.a_strides[k];
        ob += p.b_strides[k];
        if (++idx[k] < p.out_dims[k]) break;
        oa -= idx[k] * p.a_strides[k];
        ob -= idx[k] * p.b_strides[k];
        idx[k] = 0;
      }
    }
  });
}

}  // namespace weft
