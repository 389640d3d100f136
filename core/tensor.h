// Tensor: a value type (dtype, shape) over a refcounted, 64-byte-aligned buffer. Copying a
// Tensor shares the buffer; `Clone()` copies the bytes.
//
//   Tensor t(DType::kFloat32, {2, 3});
//   auto m = t.matrix<float>();              // Eigen::TensorMap, row-major
//   m.setConstant(1.0f);
//   Tensor s = Tensor::Scalar(3.0);          // float64 scalar
//   Tensor v = Tensor::FromVector<int32_t>({1, 2, 3, 4}, {2, 2});
#pragma once

#include <unsupported/Eigen/CXX11/Tensor>

#include <cstring>
#include <functional>
#include <memory>
#include <vector>

#include "core/allocator.h"
#include "core/dtype.h"
#include "core/shape.h"

namespace weft {

// A block of memory from an allocator, freed when the last Tensor referring to it goes away.
class Buffer {
 public:
  Buffer(Allocator* allocator, size_t bytes)  // allocator: not owned, must outlive the buffer
      : allocator_(allocator), data_(allocator->Allocate(bytes)), bytes_(bytes), kind_(allocator->kind()) {}
  // Memory someone else owns (a numpy array, a registered region): `release` runs once, when the
  // last tensor lets go. REQUIRES: data aligned to kTensorAlignment.
  Buffer(void* data, size_t bytes, MemoryKind kind, std::function<void()> release)
      : allocator_(nullptr), data_(data), bytes_(bytes), kind_(kind), release_(std::move(release)) {}
  ~Buffer() {
    if (allocator_ != nullptr) {
      allocator_->Deallocate(data_, bytes_);
    } else if (release_) {
      release_();
    }
  }
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;

  void* data() const { return data_; }
  size_t size() const { return bytes_; }
  Allocator* allocator() const { return allocator_; }  // null for external memory
  MemoryKind kind() const { return kind_; }

 private:
  Allocator* allocator_;
  void* data_;
  size_t bytes_;
  MemoryKind kind_;
  std::function<void()> release_;
};

template <typename T, int N>
using TTensor = Eigen::TensorMap<Eigen::Tensor<T, N, Eigen::RowMajor, Eigen::DenseIndex>, Eigen::Aligned>;
template <typename T, int N>
using ConstTTensor = Eigen::TensorMap<Eigen::Tensor<const T, N, Eigen::RowMajor, Eigen::DenseIndex>, Eigen::Aligned>;

class Tensor {
 public:
  Tensor() = default;  // uninitialized: dtype kInvalid, no buffer
  // Allocates a fully defined shape (contents uninitialized). Throws InvalidArgument on an
  // unknown or too large shape, ResourceExhausted when memory runs out.
  Tensor(DType dtype, TensorShape shape, Allocator* allocator = CpuAllocator());

  template <typename T> static Tensor Scalar(T v) {
    Tensor t(DTypeOf<T>(), TensorShape{});
    *t.data<T>() = v;
    return t;
  }
  template <typename T> static Tensor FromVector(const std::vector<T>& values, TensorShape shape) {
    Tensor t(DTypeOf<T>(), std::move(shape));
    WEFT_REQUIRE(static_cast<int64_t>(values.size()) == t.num_elements(),
                 "Tensor::FromVector: {} values for shape {}", values.size(), t.shape().ToString());
    for (size_t i = 0; i < values.size(); ++i) t.data<T>()[i] = values[i];
    return t;
  }
  template <typename T> static Tensor FromVector(const std::vector<T>& values) {
    return FromVector(values, TensorShape({static_cast<int64_t>(values.size())}));
  }
  // A zero-filled tensor.
  static Tensor Zeros(DType dtype, TensorShape shape);
  // A tensor from `preferred`, or from `fallback` when `preferred` is out of memory
  // (ResourceExhausted); other errors propagate. A GPU's copies to the host take pinned memory
  // this way and fall back to pageable memory when the pinned pool is used up.
  static Tensor AllocateOr(DType dtype, const TensorShape& shape, Allocator* preferred, Allocator* fallback);
  // A tensor over an existing buffer (which must hold at least the shape's bytes and be aligned
  // to kTensorAlignment); throws InvalidArgument otherwise.
  static Tensor FromBuffer(DType dtype, TensorShape shape, std::shared_ptr<Buffer> buffer);

  bool IsInitialized() const { return dtype_ != DType::kInvalid; }
  DType dtype() const { return dtype_; }
  const TensorShape& shape() const { return shape_; }
  int rank() const { return shape_.rank(); }
  int64_t dim(int i) const { return shape_.dim(i); }
  int64_t num_elements() const { return num_elements_; }
  size_t bytes() const { return static_cast<size_t>(num_elements_) * DTypeSize(dtype_); }
  MemoryKind memory_kind() const { return buffer_ ? buffer_->kind() : MemoryKind::kHost; }
  const std::shared_ptr<Buffer>& buffer() const { return buffer_; }
  bool SharesBufferWith(const Tensor& o) const { return buffer_ && buffer_ == o.buffer_; }

  void* raw_data() const { return buffer_ ? buffer_->data() : nullptr; }
  template <typename T> T* data() const {
    CheckType(DTypeOf<T>());
    return static_cast<T*>(raw_data());
  }

  template <typename T> TTensor<T, 1> flat() const { return TTensor<T, 1>(data<T>(), num_elements_); }
  template <typename T> TTensor<T, 0> scalar() const {
    CheckRank(0);
    return TTensor<T, 0>(data<T>());
  }
  template <typename T> TTensor<T, 1> vec() const {
    CheckRank(1);
    return TTensor<T, 1>(data<T>(), dim(0));
  }
  template <typename T> TTensor<T, 2> matrix() const { return tensor<T, 2>(); }
  template <typename T, int N> TTensor<T, N> tensor() const {
    CheckRank(N);
    Eigen::DSizes<Eigen::DenseIndex, N> d;
    for (int i = 0; i < N; ++i) d[i] = dim(i);
    return TTensor<T, N>(data<T>(), d);
  }
  // Views the elements as a tensor of rank N with the given dims (same element count).
  template <typename T, int N> TTensor<T, N> shaped(const std::vector<int64_t>& dims) const {
    Eigen::DSizes<Eigen::DenseIndex, N> d;
    int64_t n = 1;
    for (int i = 0; i < N; ++i) n *= (d[i] = dims.at(i));
    WEFT_REQUIRE(n == num_elements_, "Tensor::shaped: {} elements viewed as {} elements", num_elements_, n);
    return TTensor<T, N>(data<T>(), d);
  }

  template <typename T> std::vector<T> ToVector() const {
    const T* p = data<T>();
    return std::vector<T>(p, p + num_elements_);
  }
  // Reads element i converted to double / int64 whatever the dtype (for tests and shape values).
  double ElementAsDouble(int64_t i) const;
  int64_t ElementAsInt64(int64_t i) const;

  // A new tensor sharing this buffer with another shape of the same element count.
  Tensor Reshaped(TensorShape shape) const;
  // A deep copy with its own buffer (REQUIRES: the bytes are host memory; see ToHost).
  Tensor Clone(Allocator* allocator = CpuAllocator()) const;
  // This tensor when its bytes are host memory; otherwise a copy in host memory made by the
  // allocator that holds the bytes (a GPU's: after the kernels queued so far). Throws
  // FailedPrecondition for device memory no allocator owns (it cannot be read from here).
  Tensor ToHost() const;
  // "float32[2,3]".
  std::string DebugString() const;
  // Summary of the values, at most `max` of them: "[1, 2, 3, ...]".
  std::string ValuesString(int64_t max = 12) const;

 private:
  void CheckType(DType want) const;
  void CheckRank(int n) const;

  DType dtype_ = DType::kInvalid;
  TensorShape shape_;
  int64_t num_elements_ = 0;
  std::shared_ptr<Buffer> buffer_;
};

}  // namespace weft
