// main of `test_ops`, the one executable holding every op test: runs the doctest cases, then the
// op-coverage check (tests/ops/op_coverage.h), which needs every case to have run in this
// process. A run that selects cases (-tc, -sf, ...) or only lists them skips the check, and says so.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <iostream>
#include <string_view>

#include "core/gpu_backend.h"
#include "tests/ops/op_coverage.h"

namespace {

// Whether an option narrows or replaces the run ("-tc=x", "--dt-test-case=x", "--list-test-cases").
bool SelectsCases(std::string_view arg) {
  if (arg.rfind("--dt-", 0) == 0) arg.remove_prefix(5);
  while (!arg.empty() && arg.front() == '-') arg.remove_prefix(1);
  arg = arg.substr(0, arg.find('='));
  for (std::string_view opt : {"tc", "test-case", "tce", "test-case-exclude", "sf", "source-file", "sfe",
                               "source-file-exclude", "ts", "test-suite", "tse", "test-suite-exclude", "sc",
                               "subcase", "sce", "subcase-exclude", "f", "first", "l", "last", "c", "count",
                               "ltc", "list-test-cases", "lts", "list-test-suites", "lr", "list-reporters",
                               "h", "help", "v", "version", "ns", "no-run", "e", "exit"}) {
    if (arg == opt) return true;
  }
  return false;
}

}  // namespace

int main(int argc, char** argv) {
  // The GPU kernels are registered (and compared with the CPU's where a GPU exists) also on a machine
  // without one: the CUDA backend is loaded whenever it was built (core/gpu.h).
  weft::LoadGpuBackend(/*even_without_gpu=*/true);
  doctest::Context context(argc, argv);
  const int rc = context.run();
  if (context.shouldExit()) return rc;
  for (int i = 1; i < argc; ++i) {
    if (SelectsCases(argv[i])) {
      std::cout << "op coverage check skipped: the run selected cases (" << argv[i] << ")\n";
      return rc;
    }
  }
  const std::vector<std::string> problems = weft::test::OpCoverageProblems();
  if (problems.empty()) {
    const std::vector<std::string> gaps = weft::test::OpCoverageKnownGaps();
    std::cout << "op coverage: every registered op has its forward, gradient, bad-input and GPU tests";
    if (!gaps.empty()) std::cout << ", but for " << gaps.size() << " known gaps (kKnownGaps)";
    std::cout << "\n";
    return rc;
  }
  std::cout << "op coverage: " << problems.size() << " problem(s) (see tests/ops/op_coverage.h):\n";
  for (const std::string& p : problems) std::cout << "  " << p << "\n";
  return rc != 0 ? rc : 1;
}
