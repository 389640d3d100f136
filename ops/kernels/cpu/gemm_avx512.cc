// libweft_avx512.so: the hot CPU kernels compiled for x86-64-v4 (AVX-512 F/BW/CD/DQ/VL), loaded at
// run time by a portable libweft on a CPU that has them (cpu_dispatch.h). Built with hidden
// visibility and -Bsymbolic: its copies of Eigen's templates stay its own, so the linker can never
// hand AVX-512 code to libweft's baseline callers. Links nothing of libweft.
#include "ops/kernels/cpu/gemm_block.h"

extern "C" __attribute__((visibility("default"))) void weft_avx512_gemm_block_f32(
    const float* a, const float* b, float* c, int64_t m, int64_t n, int64_t k, bool ta, bool tb, bool acc,
    int64_t r0, int64_t r1, int64_t c0, int64_t c1) {
  weft::GemmBlock<float>(a, b, c, m, n, k, ta, tb, acc, r0, r1, c0, c1);
}

// Type check: the exported function has the signature the loader casts it to.
[[maybe_unused]] static constexpr weft::GemmBlockF32Fn kCheckSignature = &weft_avx512_gemm_block_f32;
