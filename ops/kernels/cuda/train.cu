// Gather, counter-based random numbers, and the optimizer updates (SGD, momentum, Adam) as CUDA
// kernels; the formulas are the CPU kernels' (ops/kernels/cpu/optimizer.cc).
#include <cuda_runtime.h>

#include "ops/kernels/cuda/cuda_kernels.h"

namespace weft {
namespace {

#define WEFT_GRID_LOOP(i, n) \
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < (n); i += int64_t{blockDim.x} * gridDim.x)

template <typename T, typename Index>
__global__ void GatherKernel(const T* params, const Index* indices, T* out, int64_t n, int64_t num_indices,
                             int64_t inner, int64_t limit, int32_t* bad) {
  WEFT_GRID_LOOP(i, n) {
    const int64_t k = i % inner, j = (i / inner) % num_indices, o = i / (inner * num_indices);
    const int64_t id = static_cast<int64_t>(indices[j]);
    if (id < 0 || id >= limit) {
      out[i] = T(0);
      atomicCAS(bad, 0, static_cast<int32_t>(j + 1));
    } else {
      out[i] = params[(o * limit + id) * inner + k];
    }
  }
}

// A 64-bit mix of (seed, counter): splitmix64's finalizer, good enough for initializers and dropout.
__device__ uint64_t Mix(uint64_t seed, uint64_t counter) {
  uint64_t z = seed + 0x9E3779B97F4A7C15ull * (counter + 1);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// Uniform in (0, 1): 53 random bits, never 0 (log in Box-Muller).
__device__ double Uniform01(uint64_t seed, uint64_t counter) {
  return (static_cast<double>(Mix(seed, counter) >> 11) + 0.5) * (1.0 / 9007199254740992.0);
}

template <typename T>
__global__ void UniformKernel(T* y, int64_t n, uint64_t seed, uint64_t offset) {
  WEFT_GRID_LOOP(i, n) { y[i] = static_cast<T>(Uniform01(seed, offset + static_cast<uint64_t>(i))); }
}

// Box-Muller per element (two uniforms each); truncated: redrawn until |x| <= 2 (at most 16 tries).
template <typename T>
__global__ void NormalKernel(T* y, int64_t n, uint64_t seed, uint64_t offset, bool truncated) {
  WEFT_GRID_LOOP(i, n) {
    const uint64_t base = 2 * (offset + static_cast<uint64_t>(i)) * 16;
    double x = 0;
    for (uint64_t t = 0; t < 16; ++t) {
      const double u1 = Uniform01(seed, base + 2 * t), u2 = Uniform01(seed, base + 2 * t + 1);
      x = sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
      if (!truncated || (x >= -2.0 && x <= 2.0)) break;
    }
    y[i] = static_cast<T>(truncated && (x < -2.0 || x > 2.0) ? 0.0 : x);
  }
}

template <typename T>
__global__ void GradientDescentKernel(T* var, const T* lr, const T* grad, int64_t n) {
  WEFT_GRID_LOOP(i, n) { var[i] -= grad[i] * *lr; }
}

template <typename T>
__global__ void MomentumKernel(T* var, T* accum, const T* lr, const T* grad, const T* momentum, bool nesterov,
                               int64_t n) {
  WEFT_GRID_LOOP(i, n) {
    const T a = accum[i] * *momentum + grad[i];
    accum[i] = a;
    var[i] -= nesterov ? grad[i] * *lr + a * (*momentum * *lr) : a * *lr;
  }
}

template <typename T>
__global__ void AdamKernel(T* var, T* m, T* v, const T* beta1_power, const T* beta2_power, const T* lr, const T* beta1,
                           const T* beta2, const T* epsilon, const T* grad, int64_t n) {
  const T lr_t = *lr * sqrt(T(1) - *beta2_power) / (T(1) - *beta1_power);
  WEFT_GRID_LOOP(i, n) {
    const T g = grad[i];
    m[i] += (g - m[i]) * (T(1) - *beta1);
    v[i] += (g * g - v[i]) * (T(1) - *beta2);
    var[i] -= (m[i] * lr_t) / (sqrt(v[i]) + *epsilon);
  }
}

}  // namespace

template <typename T, typename Index>
void LaunchGather(const T* params, const Index* indices, T* out, int64_t outer, int64_t num_indices, int64_t inner,
                  int64_t limit, int32_t* bad, cudaStream_t stream) {
  const int64_t n = outer * num_indices * inner;
  const LaunchShape ls = LaunchShapeFor(n);
  if (ls.blocks == 0) return;
  GatherKernel<T, Index><<<ls.blocks, ls.threads, 0, stream>>>(params, indices, out, n, num_indices, inner, limit, bad);
  CheckLaunch("gather");
}

template <typename T>
void LaunchRandomUniform(T* y, int64_t n, uint64_t seed, uint64_t offset, cudaStream_t stream) {
  const LaunchShape ls = LaunchShapeFor(n);
  if (ls.blocks == 0) return;
  UniformKernel<T><<<ls.blocks, ls.threads, 0, stream>>>(y, n, seed, offset);
  CheckLaunch("random uniform");
}

template <typename T>
void LaunchRandomNormal(T* y, int64_t n, uint64_t seed, uint64_t offset, bool truncated, cudaStream_t stream) {
  const LaunchShape ls = LaunchShapeFor(n);
  if (ls.blocks == 0) return;
  NormalKernel<T><<<ls.blocks, ls.threads, 0, stream>>>(y, n, seed, offset, truncated);
  CheckLaunch("random normal");
}

template <typename T>
void LaunchApplyGradientDescent(T* var, const T* lr, const T* grad, int64_t n, cudaStream_t stream) {
  const LaunchShape ls = LaunchShapeFor(n);
  if (ls.blocks == 0) return;
  GradientDescentKernel<T><<<ls.blocks, ls.threads, 0, stream>>>(var, lr, grad, n);
  CheckLaunch("ApplyGradientDescent");
}

template <typename T>
void LaunchApplyMomentum(T* var, T* accum, const T* lr, const T* grad, const T* momentum, bool nesterov, int64_t n,
                         cudaStream_t stream) {
  const LaunchShape ls = LaunchShapeFor(n);
  if (ls.blocks == 0) return;
  MomentumKernel<T><<<ls.blocks, ls.threads, 0, stream>>>(var, accum, lr, grad, momentum, nesterov, n);
  CheckLaunch("ApplyMomentum");
}

template <typename T>
void LaunchApplyAdam(T* var, T* m, T* v, const T* beta1_power, const T* beta2_power, const T* lr, const T* beta1,
                     const T* beta2, const T* epsilon, const T* grad, int64_t n, cudaStream_t stream) {
  const LaunchShape ls = LaunchShapeFor(n);
  if (ls.blocks == 0) return;
  AdamKernel<T><<<ls.blocks, ls.threads, 0, stream>>>(var, m, v, beta1_power, beta2_power, lr, beta1, beta2, epsilon,
                                                      grad, n);
  CheckLaunch("ApplyAdam");
}

#define WEFT_INSTANTIATE(T)                                                                                       \
  template void LaunchGather<T, int32_t>(const T*, const int32_t*, T*, int64_t, int64_t, int64_t, int64_t,         \
                                         int32_t*, cudaStream_t);                                                  \
  template void LaunchGather<T, int64_t>(const T*, const int64_t*, T*, int64_t, int64_t, int64_t, int64_t,         \
                                         int32_t*, cudaStream_t);                                                  \
  template void LaunchRandomUniform<T>(T*, int64_t, uint64_t, uint64_t, cudaStream_t);                             \
  template void LaunchRandomNormal<T>(T*, int64_t, uint64_t, uint64_t, bool, cudaStream_t);                        \
  template void LaunchApplyGradientDescent<T>(T*, const T*, const T*, int64_t, cudaStream_t);                      \
  template void LaunchApplyMomentum<T>(T*, T*, const T*, const T*, const T*, bool, int64_t, cudaStream_t);         \
  template void LaunchApplyAdam<T>(T*, T*, T*, const T*, const T*, const T*, const T*, const T*, const T*,         \
                                   const T*, int64_t, cudaStream_t);
WEFT_INSTANTIATE(float)
WEFT_INSTANTIATE(double)
#undef WEFT_INSTANTIATE

}  // namespace weft
