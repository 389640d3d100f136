#include <doctest/doctest.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/caching_allocator.h"
#include "core/status.h"
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

TEST_CASE("ToHost: host tensors as they are, device tensors copied by their allocator, foreign device memory refused") {
  const Tensor h = Tensor::FromVector<float>({1, 2, 3});
  CHECK(h.ToHost().SharesBufferWith(h));

  // A caching allocator over host memory that reports itself as device memory (the GPU's allocator
  // over a host store): ToHost copies through the store into a new host buffer.
  HostBackingStore store(size_t{8} << 20, MemoryKind::kDevice);
  CachingAllocator device(&store, {});
  {
    Tensor d(DType::kFloat32, {3}, &device);
    for (int i = 0; i < 3; ++i) d.data<float>()[i] = static_cast<float>(i + 1);
    const Tensor back = d.ToHost();
    CHECK(back.memory_kind() == MemoryKind::kHost);
    CHECK_FALSE(back.SharesBufferWith(d));
    CHECK(back.ToVector<float>() == std::vector<float>{1, 2, 3});
  }

  alignas(kTensorAlignment) float bytes[16] = {};
  const Tensor foreign = Tensor::FromBuffer(
      DType::kFloat32, {1}, std::make_shared<Buffer>(bytes, sizeof(bytes), MemoryKind::kDevice, [] {}));
  try {
    (void)foreign.ToHost();
    FAIL("ToHost of device memory without an allocator did not throw");
  } catch (const Error& e) {
    CHECK(e.code() == Code::kFailedPrecondition);
    CHECK_MESSAGE(std::string(e.what()).find("float32[1]") != std::string::npos, e.what());
  }
}

TEST_CASE("AllocateOr: the fallback allocator when the preferred one is out of memory") {
  // A 1 MiB pinned pool, as a GPU's copies to the host use: a larger tensor is pageable instead.
  HostBackingStore pinned_store(size_t{1} << 20, MemoryKind::kPinnedHost);
  CachingAllocator pinned(&pinned_store, {.limit_bytes = size_t{1} << 20, .chunk_bytes = size_t{1} << 20});
  const Tensor small = Tensor::AllocateOr(DType::kFloat32, {1024}, &pinned, CpuAllocator());
  CHECK(small.memory_kind() == MemoryKind::kPinnedHost);
  const Tensor big = Tensor::AllocateOr(DType::kFloat32, {1 << 20}, &pinned, CpuAllocator());
  CHECK(big.memory_kind() == MemoryKind::kHost);
  CHECK(big.num_elements() == 1 << 20);
  // Errors other than out of memory are not swallowed.
  CHECK_THROWS_AS(Tensor::AllocateOr(DType::kInvalid, {4}, &pinned, CpuAllocator()), Error);
}
