// Numpy-style broadcasting of two operands for CPU kernels, with the dims collapsed so that the
// general path runs as a low-rank Eigen broadcast.
//
//   BroadcastPlan p = BroadcastPlan::Make(a.shape(), b.shape(), "Add");   // throws if they don't broadcast
//   Tensor* out = ctx->allocate_output(0, p.out_shape);
//   if (p.same_shape) { ...flat op... }
//   else BinaryBroadcast<T, T>(ctx->eigen_device(), p, a, b, out, Eigen::internal::scalar_sum_op<T>());
//
// Collapsing: both shapes are right-aligned (padded with leading 1s); output dims of size 1 are
// dropped, and adjacent dims that broadcast the same way (neither operand broadcasts / only a
// broadcasts / only b broadcasts) are merged. [2,3,4]+[4] becomes out [6,4], a [6,4], b [1,4];
// [2,1]+[1,3] becomes out [2,3], a [2,1], b [1,3]. Real programs collapse to rank <= 3; the Eigen
// path handles rank <= 5 and an index loop handles the rest.
//
// Thread-safety: a BroadcastPlan is an immutable value.
#pragma once

#ifndef EIGEN_USE_THREADS
#define EIGEN_USE_THREADS
#endif
#include <unsupported/Eigen/CXX11/Tensor>

#include <algorithm>
#include <cstdint>
#include <string_view>
#include <vector>

#include "core/tensor.h"

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

namespace broadcast_internal {

template <int R>
Eigen::array<Eigen::DenseIndex, R> ToArray(const std::vector<int64_t>& v) {
  Eigen::array<Eigen::DenseIndex, R> a;
  for (int i = 0; i < R; ++i) a[i] = v[i];
  return a;
}

template <int R, typename T, typename OutT, typename F>
void BroadcastRank(const Eigen::ThreadPoolDevice& d, const BroadcastPlan& p, const Tensor& a, const Tensor& b,
                   Tensor* out, const F& f) {
  auto ta = a.shaped<T, R>(p.a_dims);
  auto tb = b.shaped<T, R>(p.b_dims);
  auto to = out->shaped<OutT, R>(p.out_dims);
  const auto ba = ToArray<R>(p.a_bcast), bb = ToArray<R>(p.b_bcast);
  const bool a_full = p.a_dims == p.out_dims, b_full = p.b_dims == p.out_dims;
  // Skipping the broadcast() of an operand that already has the output shape keeps its
  // evaluation a plain (vectorised) load.
  if (a_full) {
    to.device(d) = ta.binaryExpr(tb.broadcast(bb), f);
  } else if (b_full) {
    to.device(d) = ta.broadcast(ba).binaryExpr(tb, f);
  } else {
    to.device(d) = ta.broadcast(ba).binaryExpr(tb.broadcast(bb), f);
  }
}

}  // namespace broadcast_internal

// out = f(a, b) with broadcasting along `p` (any collapsed rank). `out` must have p.out_shape.
// F is an Eigen-style binary functor (Eigen::internal::scalar_sum_op<T>, ...) returning OutT.
template <typename T, typename OutT, typename F>
void BinaryBroadcast(const Eigen::ThreadPoolDevice& d, const BroadcastPlan& p, const Tensor& a, const Tensor& b,
                     Tensor* out, const F& f) {
  if (out->num_elements() == 0) return;
  using namespace broadcast_internal;
  switch (p.rank()) {
    case 1: return BroadcastRank<1, T, OutT>(d, p, a, b, out, f);
    case 2: return BroadcastRank<2, T, OutT>(d, p, a, b, out, f);
    case 3: return BroadcastRank<3, T, OutT>(d, p, a, b, out, f);
    case 4: return BroadcastRank<4, T, OutT>(d, p, a, b, out, f);
    case 5: return BroadcastRank<5, T, OutT>(d, p, a, b, out, f);
    default: break;
  }
  const T* pa = a.data<T>();
  const T* pb = b.data<T>();
  OutT* po = out->data<OutT>();
  const int64_t n = out->num_elements();
  for (int64_t i = 0; i < n; ++i) {
    int64_t oa, ob;
    p.Offsets(i, &oa, &ob);
    po[i] = f(pa[oa], pb[ob]);
  }
}

}  // namespace weft
