// The one op-test harness: run an op on the CPU, compare with a naive reference, check its
// gradient by finite differences in float64, check that bad input gives a clear error, and
// compare the GPU kernel with the CPU kernel. Each check that passes is recorded per op
// (tests/ops/op_coverage.h): the op registry then says which ops lack which test.
//
//   Tensor a = T<float>({1, 2, 3, 4}, {2, 2});
//   auto out = RunOp("MatMul", {a, a}, {{"transpose_b", true}});
//   ExpectNear(out[0], T<float>({5, 11, 11, 25}, {2, 2}));
//   CheckGradient("MatMul", {Rand({2, 3}), Rand({3, 4})});          // float64, all inputs
//   ExpectOpError("MatMul", {Rand({2, 3}), Rand({2, 3})}, {}, Code::kInvalidArgument, "[2,3]");
//   ExpectGpuMatchesCpu("MatMul", {Rand({2, 3}, -1, 1, 1, DType::kFloat32), ...});
#pragma once

#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "graph/session.h"

namespace weft::test {

// A tensor of dtype T from values (converted) and a shape (default: a vector).
template <typename E>
Tensor T_(const std::vector<double>& values, TensorShape shape);
template <typename E>
Tensor T(const std::vector<double>& values, std::vector<int64_t> dims = {-2}) {
  if (dims.size() == 1 && dims[0] == -2) dims = {static_cast<int64_t>(values.size())};
  return T_<E>(values, TensorShape(dims));
}
// The elements of `t` as doubles, in row-major order.
std::vector<double> V(const Tensor& t);
// A float32 or float64 tensor of `shape` holding `v` (reference computations in double, checked
// in either dtype).
Tensor Make(DType dt, const std::vector<double>& v, const TensorShape& shape);
// `t` converted to float32 or float64.
Tensor Cast(const Tensor& t, DType dt);
// Uniform random float64 values in [lo, hi) from a fixed seed (deterministic across runs).
Tensor Rand(std::vector<int64_t> dims, double lo = -1.0, double hi = 1.0, uint64_t seed = 1,
            DType dtype = DType::kFloat64);

// Builds a graph with one Placeholder per input (fed with `inputs`), adds `op` with `attrs`, and
// fetches every output. Throws weft::Error as the Session does (from building or running).
// `num_list_inputs` is not needed: list args take the inputs left after the fixed ones.
// With `device` ("/device:GPU:0"), the op is pinned there and must run there (no soft placement);
// the inputs are fed on the host and the outputs fetched back to it. A ref input (the variable of
// Assign*, Apply*) becomes a Variable initialized with the given tensor before the op runs; the
// op's output is then the variable after the update.
// The outputs of a CPU run are remembered (with the op), so that ExpectNear / ExpectEqual on one
// of them records a forward test of the op.
// `gpu`: the session's GPU options (TF32, determinism) for runs on a GPU.
std::vector<Tensor> RunOp(std::string_view op, const std::vector<Tensor>& inputs, const AttrMap& attrs = {},
                          std::string_view device = "", const GpuOptions& gpu = {});

// Fetches one output of a graph the test built itself, remembered like RunOp's outputs (as made
// by the output's op): for ops RunOp cannot run alone (a Variable read after its Assign).
Tensor Fetch(Session& sess, const Output& output, const std::vector<std::pair<Output, Tensor>>& feeds = {});

// Compares dtype, shape and values (|got - want| <= atol + rtol * |want|); NaNs must match.
// When `got` is an output of RunOp or Fetch and every value agreed, records a forward test of its
// op -- unless `want` is an output of another run of that op (that checks determinism, not values).
void ExpectNear(const Tensor& got, const Tensor& want, double atol = 1e-5, double rtol = 1e-5);
void ExpectEqual(const Tensor& got, const Tensor& want);  // exact, any dtype

// Finite-difference gradient check of `op` in float64: for each input index in `wrt` (default:
// every floating input), compares the symbolic gradient of sum(w_k * y_k) over all float outputs
// (random fixed weights w) with central differences (step `delta`). Inputs must be float64 where
// checked. Reports the op, input, element and both values on a mismatch. Records a gradient test
// of `op` when every checked element agreed.
void CheckGradient(std::string_view op, const std::vector<Tensor>& inputs, const AttrMap& attrs = {},
                   std::vector<int> wrt = {}, double tol = 1e-6, double delta = 1e-6);

// Expects RunOp to throw an Error with `code` whose message contains `substr`; records a
// bad-input test of `op` when it did.
void ExpectOpError(std::string_view op, const std::vector<Tensor>& inputs, const AttrMap& attrs, Code code,
                   std::string_view substr);

// For outputs with no elementwise reference (random draws): the sample mean and stddev of `got`
// are within the tolerances of `mean` and `stddev`. Records a forward test of got's op (an output
// of RunOp or Fetch) when both hold.
void ExpectMoments(const Tensor& got, double mean, double stddev, double mean_tol, double stddev_tol);

// Runs `op` pinned to the GPU and to the CPU on the same inputs; every output must agree within
// `tol` (absolute and relative). The op must have a GPU kernel (checked with or without a GPU).
// Without a GPU the runs are skipped and the comparison still counts as present for the coverage
// check: it was written and reached, and runs wherever a GPU exists. Call it unconditionally,
// not behind an early return on a CPU-only machine.
void ExpectGpuMatchesCpu(std::string_view op, const std::vector<Tensor>& inputs, const AttrMap& attrs = {},
                         double tol = 1e-4, const GpuOptions& gpu = {});

}  // namespace weft::test
