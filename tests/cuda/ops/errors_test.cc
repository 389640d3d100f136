// Bad inputs on the GPU fail as on the CPU: the same code and the same message (the GPU kernels
// call the CPU kernels' checks: ops/kernels/cpu/{math,nn,array}_kernels.h). On a GPU machine the op
// harness places ops on the GPU by default, so the CPU suites' error-wording tests run there too.
// These need a GPU: without one every case says so (MESSAGE "SKIPPED ...") and returns.
#include <doctest/doctest.h>

#include "tests/cuda/gpu_test_util.h"

using namespace weft;
using namespace weft::test;

namespace {

// The message of `op`'s error on `device`; fails the case when it succeeds.
std::pair<Code, std::string> ErrorOn(const char* device, std::string_view op, const std::vector<Tensor>& inputs,
                                     const AttrMap& attrs) {
  try {
    RunOp(op, inputs, attrs, device);
  } catch (const Error& e) {
    return {e.code(), e.what()};
  }
  FAIL_CHECK(op << " on " << device << " succeeded on bad input");
  return {Code::kOk, ""};
}

// Both devices reject the input with `code` and a message containing `words` (the CPU's words).
void ExpectSameError(std::string_view op, const std::vector<Tensor>& inputs, const AttrMap& attrs,
                     std::string_view words) {
  INFO("op " << op);
  const auto [cpu_code, cpu] = ErrorOn(kCpu, op, inputs, attrs);
  const auto [gpu_code, gpu] = ErrorOn(kGpu, op, inputs, attrs);
  CHECK(cpu_code == Code::kInvalidArgument);
  CHECK(gpu_code == cpu_code);
  CHECK_MESSAGE(cpu.find(words) != std::string::npos, cpu);
  CHECK_MESSAGE(gpu.find(words) != std::string::npos, gpu);
}

}  // namespace

TEST_CASE("GPU reductions reject repeated and out-of-range axes with the CPU's message") {
  if (!HaveGpu()) return;
  ExpectSameError("Sum", {R({2, 3}, 1)}, {{"axis", std::vector<int64_t>{1, -1}}, {"keep_dims", false}},
                  "axis -1 is listed twice in axis attr for input shape [2,3]");
  ExpectSameError("Max", {R({2, 3}, 2)}, {{"axis", std::vector<int64_t>{2}}, {"keep_dims", false}}, "axis 2");
}

TEST_CASE("GPU softmax losses reject bad labels with the CPU's message") {
  if (!HaveGpu()) return;
  ExpectSameError("SparseSoftmaxCrossEntropyWithLogits", {R({3, 4}, 3), Ints({0, 5, 9})},
                  {{"Tlabels", DType::kInt32}}, "label 5 at batch row 1 is outside the valid range [0, 4)");
  ExpectSameError("SparseSoftmaxCrossEntropyWithLogits", {R({2, 3}, 4), Ints({0, 1, 2})},
                  {{"Tlabels", DType::kInt32}}, "logits [2,3] vs labels [3]");
  ExpectSameError("SoftmaxCrossEntropyWithLogits", {R({2, 3}, 5), R({2, 4}, 6)}, {},
                  "labels must have the shape of logits: logits [2,3] vs labels [2,4]");
}

TEST_CASE("GPU Gather names the first bad index as the CPU does") {
  if (!HaveGpu()) return;
  ExpectSameError("Gather", {R({5, 2}, 7), Ints({0, 7, 9})}, {{"axis", int64_t{0}}, {"Tindices", DType::kInt32}},
                  "Gather: indices[1] = 7 is out of range [0, 5) for params of shape [5,2]");
}

TEST_CASE("GPU products and broadcasts reject mismatched shapes with the CPU's message") {
  if (!HaveGpu()) return;
  ExpectSameError("MatMul", {R({2, 3}, 8), R({4, 5}, 9)}, {}, "inner dimensions differ: a [2,3] and b [4,5]");
  ExpectSameError("BatchMatMul", {R({2, 2, 3}, 10), R({2, 4, 4}, 11)}, {}, "inner dimensions differ");
  ExpectSameError("Add", {R({2, 3}, 12), R({4}, 13)}, {}, "[2,3] and [4] do not broadcast");
}
