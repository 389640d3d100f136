// Device code of FusedCausalAttention and its gradient (host side: attention.cc; the formulas are
// ops/kernels/cpu/attention.cc's). A direct form, one thread per query row (forward, dq) or per
// key row (dk, dv), each recomputing its scores from q and k: no scratch, no atomics, so the
// results are deterministic; correctness first (the CPU kernels are the tuned ones).
//
// Shape key: B = batch, T = query steps, S = key steps, H = heads, K = key dim, V = value dim;
// q, dq [B, T, H, K], k, dk [B, S, H, K], v, dv [B, S, H, V], out, dout [B, T, H, V], lse, dlse
// [B, H, T]. Query i attends keys j < min(i + 1, S).
#include <cuda_runtime.h>

#include <cmath>

#include "ops/kernels/cuda/cuda_kernels.h"

namespace weft {
namespace {

#define WEFT_GRID_LOOP_A(i, n) \
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < (n); i += int64_t{blockDim.x} * gridDim.x)

template <typename T>
__device__ T Dot(const T* a, const T* b, int64_t n) {
  T s = 0;
  for (int64_t c = 0; c < n; ++c) s += a[c] * b[c];
  return s;
}

// Row r = (b, h, i) of the [B, H, T] statistics; its q / out rows and its batch's k / v rows.
struct Row {
  int64_t b, h, i;
  __device__ Row(int64_t r, int64_t H, int64_t T) : b(r / (H * T)), h((r / T) % H), i(r % T) {}
};

template <typename T>
__global__ void AttentionForward(const T* q, const T* k, const T* v, T* out, T* lse, AttentionShape d, T scale) {
  WEFT_GRID_LOOP_A(r, d.B * d.H * d.T) {
    const Row w(r, d.H, d.T);
    const T* qi = q + ((w.b * d.T + w.i) * d.H + w.h) * d.K;
    const int64_t n = w.i + 1 < d.S ? w.i + 1 : d.S;
    T m = -static_cast<T>(HUGE_VAL), sum = 0;
    for (int64_t j = 0; j < n; ++j) {  // online max and sum
      const T s = scale * Dot(qi, k + ((w.b * d.S + j) * d.H + w.h) * d.K, d.K);
      if (s > m) {
        sum = sum * exp(m - s) + 1;
        m = s;
      } else {
        sum += exp(s - m);
      }
    }
    const T l = m + log(sum);
    lse[r] = l;
    T* o = out + ((w.b * d.T + w.i) * d.H + w.h) * d.V;
    for (int64_t c = 0; c < d.V; ++c) o[c] = 0;
    for (int64_t j = 0; j < n; ++j) {
      const T p = exp(scale * Dot(qi, k + ((w.b * d.S + j) * d.H + w.h) * d.K, d.K) - l);
      const T* vj = v + ((w.b * d.S + j) * d.H + w.h) * d.V;
      for (int64_t c = 0; c < d.V; ++c) o[c] += p * vj[c];
    }
  }
}

// D_i = dout_i . out_i - dlse_i (dlse null: zeros).
template <typename T>
__device__ T RowD(const T* dout, const T* out, const T* dlse, const AttentionShape& d, int64_t b, int64_t h,
                  int64_t i) {
  const int64_t o = ((b * d.T + i) * d.H + h) * d.V;
  return Dot(dout + o, out + o, d.V) - (dlse != nullptr ? dlse[(b * d.H + h) * d.T + i] : T(0));
}

template <typename T>
__global__ void AttentionGradQ(const T* dout, const T* q, const T* k, const T* v, const T* out, const T* lse,
                               const T* dlse, T* dq, AttentionShape d, T scale) {
  WEFT_GRID_LOOP_A(r, d.B * d.H * d.T) {
    const Row w(r, d.H, d.T);
    const T* qi = q + ((w.b * d.T + w.i) * d.H + w.h) * d.K;
    const T* doi = dout + ((w.b * d.T + w.i) * d.H + w.h) * d.V;
    T* dqi = dq + ((w.b * d.T + w.i) * d.H + w.h) * d.K;
    const T D = RowD(dout, out, dlse, d, w.b, w.h, w.i);
    for (int64_t c = 0; c < d.K; ++c) dqi[c] = 0;
    const int64_t n = w.i + 1 < d.S ? w.i + 1 : d.S;
    for (int64_t j = 0; j < n; ++j) {
      const T* kj = k + ((w.b * d.S + j) * d.H + w.h) * d.K;
      const T p = exp(scale * Dot(qi, kj, d.K) - lse[r]);
      const T ds = scale * p * (Dot(doi, v + ((w.b * d.S + j) * d.H + w.h) * d.V, d.V) - D);
      for (int64_t c = 0; c < d.K; ++c) dqi[c] += ds * kj[c];
    }
  }
}

// One thread per key row (b, h, j): the queries i >= j (i < T) that attend it.
template <typename T>
__global__ void AttentionGradKV(const T* dout, const T* q, const T* k, const T* v, const T* out, const T* lse,
                                const T* dlse, T* dk, T* dv, AttentionShape d, T scale) {
  WEFT_GRID_LOOP_A(r, d.B * d.H * d.S) {
    const int64_t b = r / (d.H * d.S), h = (r / d.S) % d.H, j = r % d.S;
    const T* kj = k + ((b * d.S + j) * d.H + h) * d.K;
    const T* vj = v + ((b * d.S + j) * d.H + h) * d.V;
    T* dkj = dk + ((b * d.S + j) * d.H + h) * d.K;
    T* dvj = dv + ((b * d.S + j) * d.H + h) * d.V;
    for (int64_t c = 0; c < d.K; ++c) dkj[c] = 0;
    for (int64_t c = 0; c < d.V; ++c) dvj[c] = 0;
    for (int64_t i = j; i < d.T; ++i) {
      const T* qi = q + ((b * d.T + i) * d.H + h) * d.K;
      const T* doi = dout + ((b * d.T + i) * d.H + h) * d.V;
      const T p = exp(scale * Dot(qi, kj, d.K) - lse[(b * d.H + h) * d.T + i]);
      const T ds = scale * p * (Dot(doi, vj, d.V) - RowD(dout, out, dlse, d, b, h, i));
      for (int64_t c = 0; c < d.V; ++c) dvj[c] += p * doi[c];
      for (int64_t c = 0; c < d.K; ++c) dkj[c] += ds * qi[c];
    }
  }
}

}  // namespace

template <typename T>
void LaunchAttentionForward(const T* q, const T* k, const T* v, T* out, T* lse, const AttentionShape& d, T scale,
                            cudaStream_t stream) {
  const LaunchShape ls = LaunchShapeFor(d.B * d.H * d.T, 128);
  if (ls.blocks == 0) return;
  AttentionForward<T><<<ls.blocks, ls.threads, 0, stream>>>(q, k, v, out, lse, d, scale);
  CheckLaunch("causal attention");
}

template <typename T>
void LaunchAttentionGrad(const T* dout, const T* q, const T* k, const T* v, const T* out, const T* lse, const T* dlse,
                         T* dq, T* dk, T* dv, const AttentionShape& d, T scale, cudaStream_t stream) {
  const LaunchShape lq = LaunchShapeFor(d.B * d.H * d.T, 128), lkv = LaunchShapeFor(d.B * d.H * d.S, 128);
  if (lq.blocks > 0) {
    AttentionGradQ<T><<<lq.blocks, lq.threads, 0, stream>>>(dout, q, k, v, out, lse, dlse, dq, d, scale);
    CheckLaunch("causal attention gradient (dq)");
  }
  if (lkv.blocks > 0) {
    AttentionGradKV<T><<<lkv.blocks, lkv.threads, 0, stream>>>(dout, q, k, v, out, lse, dlse, dk, dv, d, scale);
    CheckLaunch("causal attention gradient (dk, dv)");
  }
}

#define WEFT_INSTANTIATE(T)                                                                                       \
  template void LaunchAttentionForward<T>(const T*, const T*, const T*, T*, T*, const AttentionShape&, T,         \
                                          cudaStream_t);                                                          \
  template void LaunchAttentionGrad<T>(const T*, const T*, const T*, const T*, const T*, const T*, const T*, T*, \
                                       T*, T*, const AttentionShape&, T, cudaStream_t);
WEFT_INSTANTIATE(float)
WEFT_INSTANTIATE(double)
#undef WEFT_INSTANTIATE

}  // namespace weft
