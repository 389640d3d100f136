// Kernels compiled for a wider instruction set than the build's, chosen at run time.
//
//   if (GemmBlockF32Fn f = WideKernels().gemm_block_f32) f(a, b, c, m, n, k, ta, tb, acc, r0, r1, c0, c1);
//
// A portable build (meson option native=false: x86-64-v3, AVX2) runs on any x86-64 CPU with AVX2;
// so that it loses no speed where the CPU has AVX-512, the hot kernels (the GEMM block of MatMul,
// BatchMatMul and Conv2D's im2col products) are also compiled for x86-64-v4 into libweft_avx512.so, installed beside
// libweft. On first use, when the CPU has AVX-512 F/BW/CD/DQ/VL, that module is loaded from
// libweft's own directory (RTLD_LOCAL) and its functions are returned; otherwise, when it is
// absent, or in a native build (whose baseline is already this CPU's), the pointers are null and
// callers keep their baseline kernel. Thread-safe; resolved once per process.
#pragma once

#include <string>

#include "ops/kernels/cpu/gemm_block.h"

namespace weft {

struct WideCpuKernels {
  GemmBlockF32Fn gemm_block_f32 = nullptr;
  std::string source;  // the module's path, or why there is none ("the CPU has no AVX-512", ...)
};

// What the kernels use: the loaded module in a portable build on an AVX-512 CPU, else nulls.
const WideCpuKernels& WideKernels();

// Loads the module whatever the build's baseline (the tests check its kernels in any build).
WideCpuKernels LoadWideKernels();

}  // namespace weft
