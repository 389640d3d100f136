#include "distributed/collectives/reduce.h"

#include <Eigen/Core>

#include "core/status.h"

namespace weft {
namespace {

template <typename T>
using Vec = Eigen::Map<Eigen::Array<T, Eigen::Dynamic, 1>>;
template <typename T>
using ConstVec = Eigen::Map<const Eigen::Array<T, Eigen::Dynamic, 1>>;

template <typename T>
void Merge(MergeOp op, T* dst, const T* a, const T* b, int64_t n) {
  Vec<T> d(dst, n);
  ConstVec<T> x(a, n), y(b, n);
  switch (op) {
    case MergeOp::kAdd: d = x + y; break;
    case MergeOp::kMax: d = x.max(y); break;
    case MergeOp::kMin: d = x.min(y); break;
  }
}

}  // namespace

MergeOp ParseMergeOp(const std::string& name, const std::string& what) {
  if (name == "Add") return MergeOp::kAdd;
  if (name == "Max") return MergeOp::kMax;
  if (name == "Min") return MergeOp::kMin;
  throw Error(errors::InvalidArgument("{}: merge_op must be Add, Max or Min, got '{}'", what, name));
}

void MergeInto(DType dtype, MergeOp op, void* dst, const void* a, const void* b, int64_t n) {
  if (n <= 0) return;
  Dispatch<float, double, int32_t, int64_t>(dtype, "collective merge", [&](auto tag) {
    using T = typename decltype(tag)::type;
    Merge<T>(op, static_cast<T*>(dst), static_cast<const T*>(a), static_cast<const T*>(b), n);
  });
}

void DivideInPlace(DType dtype, void* dst, int64_t n, int64_t divisor) {
  if (n <= 0) return;
  Dispatch<float, double, int32_t, int64_t>(dtype, "collective divide", [&](auto tag) {
    using T = typename decltype(tag)::type;
    Vec<T> d(static_cast<T*>(dst), n);
    d = d / static_cast<T>(divisor);
  });
}

}  // namespace weft
