#include "ops/kernels/cpu/cpu_dispatch.h"

#include <dlfcn.h>

#include <string>

#include "weft_build_config.h"  // WEFT_CPU_DISPATCH: 1 in portable x86-64 builds (meson.build)

namespace weft {

WideCpuKernels LoadWideKernels() {
  WideCpuKernels k;
#if defined(__x86_64__)
  __builtin_cpu_init();
  if (!(__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
        __builtin_cpu_supports("avx512cd") && __builtin_cpu_supports("avx512dq") &&
        __builtin_cpu_supports("avx512vl"))) {
    k.source = "the CPU has no AVX-512 (F/BW/CD/DQ/VL)";
    return k;
  }
  // The directory of the binary holding this function: libweft.so, or a program linking its objects.
  Dl_info info;
  if (dladdr(reinterpret_cast<void*>(&LoadWideKernels), &info) == 0 || info.dli_fname == nullptr) {
    k.source = "dladdr found no file for libweft";
    return k;
  }
  std::string path = info.dli_fname;
  path = path.substr(0, path.find_last_of('/') + 1) + "libweft_avx512.so";
  void* module = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (module == nullptr) {
    k.source = std::string("not loaded: ") + dlerror();
    return k;
  }
  k.gemm_block_f32 = reinterpret_cast<GemmBlockF32Fn>(dlsym(module, "weft_avx512_gemm_block_f32"));
  k.source = k.gemm_block_f32 ? path : path + " lacks weft_avx512_gemm_block_f32";
#else
  k.source = "not an x86-64 build";
#endif
  return k;
}

const WideCpuKernels& WideKernels() {
#if WEFT_CPU_DISPATCH
  static const WideCpuKernels kernels = LoadWideKernels();
#else
  static const WideCpuKernels kernels{nullptr, "a native build: its baseline is this CPU's"};
#endif
  return kernels;
}

}  // namespace weft
