// The op registry drives the op tests: the harness (op_test_util.h) notes, for each op, which
// kinds of test really ran and passed, and `OpCoverageProblems` walks OpRegistry::OpNames()
// and names every op that lacks one.
//
//   ExpectNear(RunOp("Relu", {x})[0], want);      // notes (Relu, kForward)
//   CheckGradient("Relu", {x});                    // notes (Relu, kGradient)
//   ExpectOpError("Relu", {i32}, {}, kInvalidArgument, "int32");   // notes (Relu, kBadInput)
//   ExpectGpuMatchesCpu("Relu", {x32});            // notes (Relu, kGpu)
//   ...
//   for (const std::string& p : OpCoverageProblems()) std::cerr << p << "\n";
//
// What each kind asks of an op (see docs/ops.md):
// - kForward: an output of the op, produced by RunOp or Fetch, was compared by ExpectNear /
//   ExpectEqual with a value the test computed itself (not with another run of the same op), or
//   its sample statistics were checked by ExpectMoments.
// - kGradient: CheckGradient agreed with finite differences. Not asked of an op declared
//   NoGradient() (as TF declares it), nor of an op without inputs (nothing to differentiate).
// - kBadInput: ExpectOpError saw the expected error code and message.
// - kGpu, for an op with a GPU kernel: ExpectGpuMatchesCpu compared the GPU kernel with the CPU
//   kernel. Without a GPU the call checks that the GPU kernel is registered, notes the kind and
//   skips the run, so a CPU-only machine still fails when a GPU kernel has no comparison test.
//
// The check sees one process: every op test is linked into the one `test_ops` executable, whose
// main (tests/ops/ops_main.cc) runs the check after all test cases. Thread-safe.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace weft::test {

enum class Coverage : unsigned { kForward = 1, kGradient = 2, kBadInput = 4, kGpu = 8 };

// Records that a test of `kind` for `op` ran and passed. Called by the harness only.
void NoteCoverage(std::string_view op, Coverage kind);

// One line per op whose recorded coverage misses a kind the op needs (naming the kinds), per
// entry of the known-gaps list that has become covered (the list can only shrink), and per
// exemption or gap that names no registered op. Empty when the op tests are complete.
std::vector<std::string> OpCoverageProblems();

// The known gaps (op: missing kinds), one line each, for the report of a passing run.
std::vector<std::string> OpCoverageKnownGaps();

}  // namespace weft::test
