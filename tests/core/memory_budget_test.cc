// core/memory_budget.h: a device's budget counts its live blocks, fails over the limit with a
// report that names the device, the limit, the peak and the largest labelled blocks, and lives
// until its last block is freed.
#include <doctest/doctest.h>

#include <string>

#include "core/memory_budget.h"
#include "core/tensor.h"

using namespace weft;

TEST_CASE("memory budget: counts live bytes and the peak since ResetPeak") {
  BudgetHandle b = BudgetAllocator::Create(CpuAllocator(), "/device:CPU:1", 1 << 20);
  {
    Tensor a(DType::kFloat32, TensorShape({256, 256}), b.get());  // 256 KiB
    Tensor c(DType::kFloat32, TensorShape({128}), b.get());       // 512 bytes
    CHECK(b->Stats().bytes_in_use == 256 * 256 * 4 + 128 * 4);
    CHECK(b->Stats().num_allocs == 2);
  }
  CHECK(b->Stats().bytes_in_use == 0);
  CHECK(b->Stats().peak_bytes_in_use == 256 * 256 * 4 + 128 * 4);
  b->ResetPeak();
  CHECK(b->Stats().peak_bytes_in_use == 0);
}

TEST_CASE("memory budget: over the limit is ResourceExhausted naming device, limit, peak and the largest tensors") {
  BudgetHandle b = BudgetAllocator::Create(CpuAllocator(), "/device:CPU:1", 1 << 20);
  const std::string node = "stage_1/dense/MatMul";
  std::string message;
  {
    const ScopedAllocationNode label(&node);
    Tensor big(DType::kFloat32, TensorShape({512, 384}), b.get());  // 768 KiB of the 1 MiB
    try {
      Tensor more(DType::kFloat32, TensorShape({300, 300}), b.get());  // 351.6 KiB more: over
      FAIL("expected ResourceExhausted");
    } catch (const Error& e) {
      CHECK(e.status().code() == Code::kResourceExhausted);
      message = e.what();
    }
    CHECK(b->Stats().bytes_in_use == 512 * 384 * 4);  // the failed request left nothing behind
  }
  CHECK(message.find("/device:CPU:1") != std::string::npos);
  CHECK(message.find("memory limit of 1048576 bytes") != std::string::npos);
  CHECK(message.find("allocating 360000 bytes for 'stage_1/dense/MatMul' float32[300,300]") != std::string::npos);
  CHECK(message.find("peak so far 1146432 bytes") != std::string::npos);  // 786432 in use + 360000 asked
  CHECK(message.find("largest: 'stage_1/dense/MatMul' float32[512,384] 786432 bytes") != std::string::npos);
  // An unlabelled block says so.
  Tensor unlabelled(DType::kInt32, TensorShape({200000}), b.get());
  try {
    Tensor more(DType::kInt32, TensorShape({1 << 18}), b.get());
    FAIL("expected ResourceExhausted");
  } catch (const Error& e) {
    CHECK(std::string(e.what()).find("largest: (unlabelled) int32[200000]") != std::string::npos);
  }
}

TEST_CASE("memory budget: a tensor may outlive the handle that made the budget") {
  Tensor kept;
  {
    BudgetHandle b = BudgetAllocator::Create(CpuAllocator(), "/device:CPU:0", 1 << 20);
    kept = Tensor(DType::kFloat32, TensorShape({1000}), b.get());
    kept.data<float>()[999] = 1.5f;
  }  // released: deletes itself when `kept` goes (ASan checks both the use and the free)
  CHECK(kept.data<float>()[999] == 1.5f);
  kept = Tensor();
}

TEST_CASE("memory budget: a limit must be positive") {
  CHECK_THROWS_AS(BudgetAllocator::Create(CpuAllocator(), "/device:CPU:0", 0), Error);
}
