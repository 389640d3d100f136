// main of `test_cuda`: loads the CUDA backend before any case runs, also on a machine without a GPU,
// so that the GPU kernels are registered (tests/cuda/zoo/coverage_test.cc checks them) and the
// host tests reach the module's code; the cases that need a GPU skip with the reason.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include "core/gpu_backend.h"

int main(int argc, char** argv) {
  weft::LoadGpuBackend(/*even_without_gpu=*/true);
  return doctest::Context(argc, argv).run();
}
