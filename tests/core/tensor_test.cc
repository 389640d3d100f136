#include <doctest/doctest.h>

#include <cstdint>

#include "core/tensor.h"

using namespace weft;

TEST_CASE("tensors are values over a shared, aligned buffer") {
  Tensor t(DType::kFloat32, {2, 3});
  CHECK(reinterpret_cast<uintptr_t>(t.raw_data()) % kTensorAlignment == 0);
  t.matrix<float>().setConstant(1.5f);
  Tensor u = t;  // shares
  CHECK(u.SharesBufferWith(t));
  u.flat<float>()(0) = 7;
  CHECK(t.flat<float>()(0) == 7);
  Tensor c = t.Clone();
  CHECK_FALSE(c.SharesBufferWith(t));
  c.flat<float>()(0) = 1;
  CHECK(t.flat<float>()(0) == 7);
  CHECK(t.memory_kind() == MemoryKind::kHost);
  CHECK(t.DebugString() == "float32[2,3]");
}

TEST_CASE("tensor construction and access errors") {
  CHECK_THROWS_AS(Tensor(DType::kFloat32, TensorShape({-1, 2})), Error);
  CHECK_THROWS_AS(Tensor(DType::kFloat32, TensorShape({int64_t{1} << 40, int64_t{1} << 40})), Error);
  Tensor t = Tensor::FromVector<int32_t>({1, 2, 3, 4}, {2, 2});
  CHECK_THROWS_WITH_AS(t.flat<float>(), doctest::Contains("int32[2,2] accessed as float32"), Error);
  CHECK_THROWS_AS(t.vec<int32_t>(), Error);
  CHECK_THROWS_AS(Tensor::FromVector<int32_t>({1, 2, 3}, {2, 2}), Error);
  CHECK(t.Reshaped({4}).vec<int32_t>()(3) == 4);
  CHECK_THROWS_AS(t.Reshaped({3}), Error);
}

TEST_CASE("empty tensors and scalars") {
  Tensor e(DType::kFloat64, {0, 4});
  CHECK(e.num_elements() == 0);
  CHECK(e.bytes() == 0);
  CHECK(e.Clone().num_elements() == 0);
  Tensor s = Tensor::Scalar<int64_t>(42);
  CHECK(s.rank() == 0);
  CHECK(s.scalar<int64_t>()() == 42);
  CHECK(s.ValuesString() == "[42]");
}

TEST_CASE("the CPU allocator keeps statistics") {
  const int64_t before = CpuAllocator()->Stats().bytes_in_use;
  {
    Tensor t(DType::kFloat64, {1000});
    CHECK(CpuAllocator()->Stats().bytes_in_use >= before + 8000);
  }
  CHECK(CpuAllocator()->Stats().bytes_in_use == before);
}

TEST_CASE("tensors over external memory release it once, when the last reference goes") {
  alignas(64) static float storage[16];
  int released = 0;
  {
    auto buffer = std::make_shared<Buffer>(storage, sizeof(storage), MemoryKind::kHost, [&] { ++released; });
    Tensor t = Tensor::FromBuffer(DType::kFloat32, {4, 4}, buffer);
    buffer.reset();
    t.flat<float>()(5) = 2.5f;
    CHECK(storage[5] == 2.5f);
    Tensor view = t.Reshaped({16});
    t = Tensor();
    CHECK(released == 0);
    CHECK(view.buffer()->allocator() == nullptr);
  }
  CHECK(released == 1);
  auto small = std::make_shared<Buffer>(storage, 8, MemoryKind::kHost, nullptr);
  CHECK_THROWS_WITH_AS(Tensor::FromBuffer(DType::kFloat32, {4}, small), doctest::Contains("needs 16 bytes"), Error);
  auto misaligned = std::make_shared<Buffer>(storage + 1, 32, MemoryKind::kHost, nullptr);
  CHECK_THROWS_WITH_AS(Tensor::FromBuffer(DType::kFloat32, {2}, misaligned), doctest::Contains("aligned"), Error);
}
