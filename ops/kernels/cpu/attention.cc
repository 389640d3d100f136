// CPU kernels of FusedCausalAttention and its gradient op (ops/attention.h): flash attention on
// the CPU, per (batch, head) and per block of query rows, so the [T, S] scores of a head never
// exist whole and nothing of size [B, H, T, S] is stored between the passes.
//
// Shape key: B = batch, T = query steps, S = key steps, H = heads, K = key dim, V = value dim,
// Qb = query rows per block. Per (b, h), with s_ij = scale * q_i . k_j over the kept keys
// j < n_i = min(i + 1, S):
//   lse_i = log sum_j exp(s_ij),  p_ij = exp(s_ij - lse_i),  out_i = sum_j p_ij v_j
// Backward, given dout and dlse (the gradient of lse; zeros when absent):
//   D_i = dout_i . out_i - dlse_i,  dp_ij = dout_i . v_j,  ds_ij = p_ij (dp_ij - D_i)
//   dq_i = scale sum_j ds_ij k_j,  dk_j = scale sum_i ds_ij q_i,  dv_j = sum_i p_ij dout_i
//
// Layout: q, k, v, out and the gradients are [B, steps, H, dim] (the projections' outputs, no
// transpose); a head's rows are gathered into contiguous scratch, so every product is one
// GemmProduct (gemm.h: oneDNN's sgemm, or libweft_avx512.so's block in a portable build on an
// AVX-512 CPU, else gemm_block.h), and the row softmax is Eigen's vectorized exp.
// Each (b, h) runs on one thread in a fixed order (its key blocks' dk / dv sums included): the
// results are the same bits on any number of threads.
#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <vector>

#include "ops/attention.h"
#include "ops/kernel.h"
#include "ops/kernels/cpu/broadcast.h"
#include "ops/kernels/cpu/gemm.h"

namespace weft {
namespace {

constexpr int64_t kQueryBlock = 32;  // Qb: rows per block; the causal blocks skip keys past the block's last row

template <typename T>
using RowArray = Eigen::Map<Eigen::Array<T, Eigen::Dynamic, 1>>;

// One head of a [B, N, H, D] tensor: row i of head h of batch b starts at
// base + ((b * N + i) * H + h) * D.
template <typename T>
struct HeadRows {
  T* base;
  int64_t N, H, D;
  T* row(int64_t b, int64_t h, int64_t i) const { return base + ((b * N + i) * H + h) * D; }
  // dst[r] = row(i0 + r) for r < n (dst is [n, D], contiguous).
  void Gather(int64_t b, int64_t h, int64_t i0, int64_t n, std::remove_const_t<T>* dst) const {
    for (int64_t r = 0; r < n; ++r) std::copy_n(row(b, h, i0 + r), D, dst + r * D);
  }
  void Scatter(int64_t b, int64_t h, int64_t i0, int64_t n, const T* src) const {
    for (int64_t r = 0; r < n; ++r) std::copy_n(src + r * D, D, row(b, h, i0 + r));
  }
};

// p_r[j] = exp(scale * s_r[j] - lse_i) for j < n_i, 0 for n_i <= j < kmax: a block's probabilities
// from its raw scores, in place. With lse == nullptr the row's lse is computed (and stored in
// lse_out[r]) first: the forward pass. Each row is worked on in `row` (allocated by Eigen, so
// aligned): Eigen peels its scalar head by the address's alignment, and std::exp and Eigen's
// vector exp differ in the last bit, so working in place would tie the bits to where a thread's
// scratch happens to lie.
template <typename T>
void Probabilities(T* s, int64_t rows, int64_t kmax, int64_t i0, int64_t S, T scale, const T* lse, T* lse_out,
                   Eigen::Array<T, Eigen::Dynamic, 1>& row) {
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t n = std::min(i0 + r + 1, S);
    T* sr = s + r * kmax;
    auto z = row.head(n);
    z = RowArray<T>(sr, n) * scale;
    if (lse != nullptr) {
      z = (z - lse[r]).exp();
    } else {
      const T m = z.maxCoeff();
      z = (z - m).exp();
      const T sum = z.sum();
      z /= sum;
      lse_out[r] = m + std::log(sum);
    }
    RowArray<T>(sr, n) = z;
    std::fill(sr + n, sr + kmax, T(0));
  }
}

// Inputs q [B, T, H, K], k [B, S, H, K], v [B, S, H, V]; outputs out [B, T, H, V], lse [B, H, T].
template <typename T>
class FusedCausalAttentionOp : public OpKernel {
 public:
  explicit FusedCausalAttentionOp(const Node& node) : OpKernel(node), scale_(node.attr<double>("scale")) {}

  void Compute(OpKernelContext* ctx) override {
    const Tensor& q = ctx->input(0);
    const Tensor& k = ctx->input(1);
    const Tensor& v = ctx->input(2);
    const AttentionDims d = CheckAttentionInputs(q, k, v);
    const int64_t B = d.batch, T_ = d.queries, S = d.keys, H = d.heads, K = d.key_dim, V = d.value_dim;
    Tensor* out = ctx->allocate_output(0, TensorShape({B, T_, H, V}));
    Tensor* lse = ctx->allocate_output(1, TensorShape({B, H, T_}));
    if (B * H * T_ == 0) return;
    const T scale = static_cast<T>(AttentionScale(scale_, K));
    const HeadRows<const T> qr{q.data<T>(), T_, H, K}, kr{k.data<T>(), S, H, K}, vr{v.data<T>(), S, H, V};
    const HeadRows<T> orow{out->data<T>(), T_, H, V};
    T* lp = lse->data<T>();
    const int64_t used = std::min(S, T_);  // keys past the last query step are never attended
    ParallelForCost(ctx->intra_op_pool(), B * H, T_ * used * (K + V), [&](int64_t begin, int64_t end) {
      const int64_t qb = std::min(kQueryBlock, T_);
      std::vector<T> qh(qb * K), kh(used * K), vh(used * V), sc(qb * used), ob(qb * V);
      Eigen::Array<T, Eigen::Dynamic, 1> row(used);
      for (int64_t bh = begin; bh < end; ++bh) {
        const int64_t b = bh / H, h = bh % H;
        kr.Gather(b, h, 0, used, kh.data());
        vr.Gather(b, h, 0, used, vh.data());
        for (int64_t i0 = 0; i0 < T_; i0 += qb) {
          const int64_t rows = std::min(qb, T_ - i0), kmax = std::min(i0 + rows, S);
          qr.Gather(b, h, i0, rows, qh.data());
          GemmProduct<T>{qh.data(), kh.data(), sc.data(), rows, kmax, K, false, true}.Run();
          Probabilities<T>(sc.data(), rows, kmax, i0, S, scale, nullptr, lp + bh * T_ + i0, row);
          if (V == 0) continue;
          GemmProduct<T>{sc.data(), vh.data(), ob.data(), rows, V, kmax, false, false}.Run();
          orow.Scatter(b, h, i0, rows, ob.data());
        }
      }
    });
  }

 private:
  double scale_;
};

// Inputs dout, q, k, v, out, lse, dlse (lse's shape, or the empty [0] tensor: zeros); outputs
// dq, dk, dv.
template <typename T>
class FusedCausalAttentionGradOp : public OpKernel {
 public:
  explicit FusedCausalAttentionGradOp(const Node& node) : OpKernel(node), scale_(node.attr<double>("scale")) {}

  void Compute(OpKernelContext* ctx) override {
    const Tensor& dout = ctx->input(0);
    const Tensor& q = ctx->input(1);
    const Tensor& k = ctx->input(2);
    const Tensor& v = ctx->input(3);
    const Tensor& out = ctx->input(4);
    const Tensor& lse = ctx->input(5);
    const Tensor& dlse = ctx->input(6);
    const AttentionDims d = CheckAttentionInputs(q, k, v);
    const int64_t B = d.batch, T_ = d.queries, S = d.keys, H = d.heads, K = d.key_dim, V = d.value_dim;
    const bool has_dlse = CheckAttentionGradInputs(d, dout, out, lse, dlse);
    Tensor* dq = ctx->allocate_output(0, q.shape());
    Tensor* dk = ctx->allocate_output(1, k.shape());
    Tensor* dv = ctx->allocate_output(2, v.shape());
    std::fill_n(dk->data<T>(), dk->num_elements(), T(0));  // keys no query attends get no gradient
    std::fill_n(dv->data<T>(), dv->num_elements(), T(0));
    if (B * H * T_ == 0) {
      std::fill_n(dq->data<T>(), dq->num_elements(), T(0));
      return;
    }
    const T scale = static_cast<T>(AttentionScale(scale_, K));
    const HeadRows<const T> qr{q.data<T>(), T_, H, K}, kr{k.data<T>(), S, H, K}, vr{v.data<T>(), S, H, V};
    const HeadRows<const T> dor{dout.data<T>(), T_, H, V}, outr{out.data<T>(), T_, H, V};
    const HeadRows<T> dqr{dq->data<T>(), T_, H, K}, dkr{dk->data<T>(), S, H, K}, dvr{dv->data<T>(), S, H, V};
    const T* lp = lse.data<T>();
    const T* dlp = has_dlse ? dlse.data<T>() : nullptr;
    const int64_t used = std::min(S, T_);
    ParallelForCost(ctx->intra_op_pool(), B * H, 2 * T_ * used * (K + V), [&](int64_t begin, int64_t end) {
      const int64_t qb = std::min(kQueryBlock, T_);
      std::vector<T> qh(qb * K), doh(qb * V), kh(used * K), vh(used * V), dkh(used * K), dvh(used * V);
      std::vector<T> p(qb * used), ds(qb * used), dqb(qb * K), rowd(qb);
      Eigen::Array<T, Eigen::Dynamic, 1> row(used);
      for (int64_t bh = begin; bh < end; ++bh) {
        const int64_t b = bh / H, h = bh % H;
        kr.Gather(b, h, 0, used, kh.data());
        vr.Gather(b, h, 0, used, vh.data());
        std::fill(dkh.begin(), dkh.end(), T(0));
        std::fill(dvh.begin(), dvh.end(), T(0));
        for (int64_t i0 = 0; i0 < T_; i0 += qb) {
          const int64_t rows = std::min(qb, T_ - i0), kmax = std::min(i0 + rows, S);
          qr.Gather(b, h, i0, rows, qh.data());
          dor.Gather(b, h, i0, rows, doh.data());
          for (int64_t r = 0; r < rows; ++r) {
            const T* o = outr.row(b, h, i0 + r);
            T dot = 0;
            for (int64_t c = 0; c < V; ++c) dot += doh[r * V + c] * o[c];
            rowd[r] = dot - (dlp != nullptr ? dlp[bh * T_ + i0 + r] : T(0));
          }
          GemmProduct<T>{qh.data(), kh.data(), p.data(), rows, kmax, K, false, true}.Run();
          Probabilities<T>(p.data(), rows, kmax, i0, S, scale, lp + bh * T_ + i0, nullptr, row);
          GemmProduct<T>{doh.data(), vh.data(), ds.data(), rows, kmax, V, false, true}.Run();  // dp
          // dv[0:kmax] += p^T dout_block
          if (V > 0) GemmProduct<T>{p.data(), doh.data(), dvh.data(), kmax, V, rows, true, false, true}.Run();
          for (int64_t r = 0; r < rows; ++r) {  // ds = scale * p * (dp - D); 0 where p is
            T* dsr = ds.data() + r * kmax;
            const T* pr = p.data() + r * kmax;
            for (int64_t j = 0; j < kmax; ++j) dsr[j] = scale * pr[j] * (dsr[j] - rowd[r]);
          }
          if (K == 0) continue;
          GemmProduct<T>{ds.data(), kh.data(), dqb.data(), rows, K, kmax, false, false}.Run();
          dqr.Scatter(b, h, i0, rows, dqb.data());
          GemmProduct<T>{ds.data(), qh.data(), dkh.data(), kmax, K, rows, true, false, true}.Run();
        }
        dkr.Scatter(b, h, 0, used, dkh.data());
        dvr.Scatter(b, h, 0, used, dvh.data());
      }
    });
  }

 private:
  double scale_;
};

}  // namespace

void RegisterAttentionKernels(KernelRegistry& r) {
  RegisterTyped<FusedCausalAttentionOp, float, double>(r, "FusedCausalAttention");
  RegisterTyped<FusedCausalAttentionGradOp, float, double>(r, "FusedCausalAttentionGrad");
}

}  // namespace weft
