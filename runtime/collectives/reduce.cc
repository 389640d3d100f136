#include "runtime/collectives/reduce.h"

#include <Eigen/Core>
#include <cstring>

#include "core/status.h"

namespace weft {
namespace {

template <typename T>
using Vec = Eigen::Map<Eigen::Array<T, Eigen::Dynamic, 1>>;
template <typename T>
using ConstVec = Eigen::Map<const Eigen::Array<T, Eigen::Dynamic, 1>>;

template <typename T>
void MergeTyped(MergeOp op, T* dst, const T* a, const T* b, int64_t n) {
  Vec<T> d(dst, n);
  ConstVec<T> x(a, n), y(b, n);
  switch (op) {
    case MergeOp::kAdd: d = x + y; break;
    case MergeOp::kMax: d = x.max(y); break;
    case MergeOp::kMin: d = x.min(y); break;
  }
}

class HostReducerImpl : public Reducer {
 public:
  std::string Name() const override { return "host"; }
  bool on_host() const override { return true; }
  Tensor Allocate(DType dtype, const TensorShape& shape) const override { return Tensor(dtype, shape); }
  void Copy(void* dst, const void* src, size_t bytes) const override {
    if (bytes > 0) std::memcpy(dst, src, bytes);
  }
  void Merge(DType dtype, MergeOp op, void* dst, const void* a, const void* b, int64_t n) const override {
    MergeInto(dtype, op, dst, a, b, n);
  }
  void Divide(DType dtype, void* dst, int64_t n, int64_t divisor) const override {
    DivideInPlace(dtype, dst, n, divisor);
  }
  Tensor Adopt(const Tensor& t) const override {
    WEFT_REQUIRE(t.memory_kind() != MemoryKind::kDevice,
                 "a member reducing on the host received a device tensor ({}): put every member of a collective "
                 "group on the same kind of device",
                 t.DebugString());
    return t;
  }
};

}  // namespace

std::shared_ptr<const Reducer> HostReducer() {
  static const std::shared_ptr<const Reducer> host = std::make_shared<HostReducerImpl>();
  return host;
}

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
    MergeTyped<T>(op, static_cast<T*>(dst), static_cast<const T*>(a), static_cast<const T*>(b), n);
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
