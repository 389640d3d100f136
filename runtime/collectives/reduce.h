// The arithmetic of the collectives, vectorized (Eigen arrays): merging two buffers element by
// element and the final division. Every algorithm uses these, so a member's results depend only on
// the order in which it merges, which each algorithm fixes (docs/collectives.md).
//
//   std::vector<float> a = {1, 2}, b = {3, 4};
//   MergeInto(DType::kFloat32, MergeOp::kAdd, a.data(), a.data(), b.data(), 2);   // a = {4, 6}
//   DivideInPlace(DType::kFloat32, a.data(), 2, /*divisor=*/2);                   // a = {2, 3}
//
// The algorithms reach memory only through a Reducer (CollectiveParams::reducer): the host one
// (Eigen loops, memcpy, CPU tensors) or a device's (CUDA builds: kernels on the GPU's compute
// stream, device tensors; ops/kernels/cuda/collective.cc), so one algorithm serves both.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "core/dtype.h"
#include "core/tensor.h"

namespace weft {

enum class MergeOp { kAdd, kMax, kMin };

// "Add", "Max", "Min"; InvalidArgument naming `what` otherwise.
MergeOp ParseMergeOp(const std::string& name, const std::string& what);

// dst[i] = merge(a[i], b[i]) for i in [0, n); dst may alias a or b. dtype: float32, float64, int32, int64.
void MergeInto(DType dtype, MergeOp op, void* dst, const void* a, const void* b, int64_t n);
// dst[i] /= divisor for i in [0, n) (integer division for integer types).
void DivideInPlace(DType dtype, void* dst, int64_t n, int64_t divisor);

// Where a member's collective computes. Every call is complete when it returns (a device
// reducer waits for its stream), so the algorithms' callback chains need no other ordering.
class Reducer {
 public:
  virtual ~Reducer() = default;
  virtual std::string Name() const = 0;
  // Host memory: members in one process may share one output buffer (the "shared" all-reduce).
  virtual bool on_host() const { return false; }
  // A new tensor in this reducer's memory.
  virtual Tensor Allocate(DType dtype, const TensorShape& shape) const = 0;
  virtual void Copy(void* dst, const void* src, size_t bytes) const = 0;
  virtual void Merge(DType dtype, MergeOp op, void* dst, const void* a, const void* b, int64_t n) const = 0;
  virtual void Divide(DType dtype, void* dst, int64_t n, int64_t divisor) const = 0;
  // `t` in this reducer's memory: t itself when it is there already, else a copy (a device
  // reducer copies in host tensors from other processes and other devices' tensors).
  virtual Tensor Adopt(const Tensor& t) const = 0;
  // Called once before a member's input is handed to others: the work producing it is done.
  virtual void InputReady() const {}
};

// MergeInto / DivideInPlace, memcpy and CPU tensors. Shared, never null.
std::shared_ptr<const Reducer> HostReducer();

}  // namespace weft
