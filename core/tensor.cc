#include "core/tensor.h"

#include "core/memory_budget.h"

#include <fmt/format.h>

namespace weft {

Tensor::Tensor(DType dtype, TensorShape shape, Allocator* allocator) : dtype_(dtype), shape_(std::move(shape)) {
  WEFT_REQUIRE(dtype != DType::kInvalid, "cannot allocate a tensor of dtype invalid");
  num_elements_ = shape_.num_elements();  // throws on unknown or oversize shapes
  const size_t bytes = static_cast<size_t>(num_elements_) * DTypeSize(dtype);
  const ScopedAllocationShape label(dtype_, &shape_);  // named in a memory budget's report
  buffer_ = std::make_shared<Buffer>(allocator, bytes);
}

Tensor Tensor::FromBuffer(DType dtype, TensorShape shape, std::shared_ptr<Buffer> buffer) {
  WEFT_REQUIRE(dtype != DType::kInvalid && buffer != nullptr, "Tensor::FromBuffer: needs a dtype and a buffer");
  Tensor t;
  t.dtype_ = dtype;
  t.shape_ = std::move(shape);
  t.num_elements_ = t.shape_.num_elements();
  WEFT_REQUIRE(t.bytes() <= buffer->size(), "Tensor::FromBuffer: {} needs {} bytes, the buffer has {}",
               t.DebugString(), t.bytes(), buffer->size());
  WEFT_REQUIRE(reinterpret_cast<uintptr_t>(buffer->data()) % kTensorAlignment == 0,
               "Tensor::FromBuffer: the buffer at {} is not aligned to {} bytes", buffer->data(), kTensorAlignment);
  t.buffer_ = std::move(buffer);
  return t;
}

Tensor Tensor::Zeros(DType dtype, TensorShape shape) {
  Tensor t(dtype, std::move(shape));
  if (t.bytes()) std::memset(t.raw_data(), 0, t.bytes());
  return t;
}

void Tensor::CheckType(DType want) const {
  if (want != dtype_) {
    throw Error(errors::InvalidArgument("tensor {} accessed as {}", DebugString(), DTypeName(want)));
  }
}

void Tensor::CheckRank(int n) const {
  if (rank() != n) {
    throw Error(errors::InvalidArgument("tensor {} accessed with rank {}", DebugString(), n));
  }
}

double Tensor::ElementAsDouble(int64_t i) const {
  double v = 0;
  Dispatch<WEFT_ALL_TYPES>(dtype_, "ElementAsDouble", [&](auto tag) {
    using T = typename decltype(tag)::type;
    v = static_cast<double>(static_cast<const T*>(raw_data())[i]);
  });
  return v;
}

int64_t Tensor::ElementAsInt64(int64_t i) const {
  int64_t v = 0;
  Dispatch<WEFT_ALL_TYPES>(dtype_, "ElementAsInt64", [&](auto tag) {
    using T = typename decltype(tag)::type;
    v = static_cast<int64_t>(static_cast<const T*>(raw_data())[i]);
  });
  return v;
}

Tensor Tensor::Reshaped(TensorShape shape) const {
  WEFT_REQUIRE(shape.num_elements() == num_elements_, "cannot reshape {} to {}", DebugString(),
               shape.ToString());
  Tensor t = *this;
  t.shape_ = std::move(shape);
  return t;
}

Tensor Tensor::Clone(Allocator* allocator) const {
  Tensor t(dtype_, shape_, allocator);
  if (bytes()) std::memcpy(t.raw_data(), raw_data(), bytes());
  return t;
}

Tensor Tensor::AllocateOr(DType dtype, const TensorShape& shape, Allocator* preferred, Allocator* fallback) {
  try {
    return Tensor(dtype, shape, preferred);
  } catch (const Error& e) {
    if (e.code() != Code::kResourceExhausted) throw;
  }
  return Tensor(dtype, shape, fallback);
}

Tensor Tensor::ToHost() const {
  if (memory_kind() != MemoryKind::kDevice) return *this;
  if (buffer_->allocator() == nullptr) {
    throw Error(errors::FailedPrecondition("tensor {} is in device memory that no weft allocator owns; it cannot be "
                                           "copied to the host",
                                           DebugString()));
  }
  Tensor t(dtype_, shape_);
  buffer_->allocator()->CopyToHost(t.raw_data(), raw_data(), bytes());
  return t;
}

std::string Tensor::DebugString() const {
  if (!IsInitialized()) return "<uninitialized tensor>";
  return fmt::format("{}{}", DTypeName(dtype_), shape_.ToString());
}

std::string Tensor::ValuesString(int64_t max) const {
  if (!IsInitialized()) return "<uninitialized>";
  std::string s = "[";
  const int64_t n = std::min(max, num_elements_);
  for (int64_t i = 0; i < n; ++i) {
    if (i) s += ", ";
    s += IsFloating(dtype_) ? fmt::format("{:g}", ElementAsDouble(i)) : std::to_string(ElementAsInt64(i));
  }
  if (n < num_elements_) s += ", ...";
  return s + "]";
}

}  // namespace weft
