// core/gpu.h and core/gpu_backend.h in libweft: the CUDA backend is libweft_cuda.so beside libweft, loaded here only when
// the CUDA driver lists a device (or when a program asks for it, LoadGpuBackend(true)). The probe
// before loading uses the driver API alone (libcuda.so.1, installed with the NVIDIA driver, not the
// toolkit): on a machine without a GPU nothing of CUDA is mapped.
#include "core/gpu_backend.h"

#include <dlfcn.h>

#include <cstdio>
#include <type_traits>

namespace weft {
namespace {

struct Loaded {
  const GpuBackend* backend = nullptr;  // never freed: the module stays loaded until exit
  GpuProbe none;                        // the answer when backend is null
};

#if WEFT_CUDA
// The entry points when the backend is linked into the program rather than loaded: weft-zoo carries
// libweft's objects and the backend's (zoo/meson.build), and test_cuda links libweft_cuda.so. Weak:
// null in every other process, which loads the module below.
extern "C" {
__attribute__((weak)) const UsableGpus<GpuContext>* weft_cuda_usable();
__attribute__((weak)) Allocator* weft_cuda_allocator_of(const GpuContext&);
__attribute__((weak)) void weft_cuda_register_kernels(KernelRegistry&);
__attribute__((weak)) std::shared_ptr<const Reducer> weft_cuda_new_reducer(GpuContext*);
__attribute__((weak)) std::shared_ptr<DeviceCopier> weft_cuda_new_copier(const std::vector<std::shared_ptr<GpuContext>>&);
}

// The linked-in backend, or null.
const GpuBackend* LinkedBackend() {
  if (weft_cuda_usable == nullptr || weft_cuda_allocator_of == nullptr || weft_cuda_register_kernels == nullptr ||
      weft_cuda_new_reducer == nullptr || weft_cuda_new_copier == nullptr) {
    return nullptr;
  }
  auto* b = new GpuBackend{"", &weft_cuda_usable, &weft_cuda_allocator_of, &weft_cuda_register_kernels,
                           &weft_cuda_new_reducer, &weft_cuda_new_copier};
  Dl_info info;
  if (dladdr(reinterpret_cast<void*>(&weft_cuda_usable), &info) != 0 && info.dli_fname != nullptr) {
    b->path = info.dli_fname;
  }
  return b;
}

// How many devices the CUDA driver lists, or 0 and why not. cuInit and cuDeviceGetCount are the
// driver API's (CUresult 0 is CUDA_SUCCESS); CUDA_VISIBLE_DEVICES applies, as the driver reads it.
int DriverDeviceCount(std::string* why) {
  void* driver = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (driver == nullptr) {
    *why = fmt::format("no CUDA driver ({})", dlerror());
    return 0;
  }
  using InitFn = int (*)(unsigned);
  using CountFn = int (*)(int*);
  using ErrorStringFn = int (*)(int, const char**);
  auto init = reinterpret_cast<InitFn>(dlsym(driver, "cuInit"));
  auto count = reinterpret_cast<CountFn>(dlsym(driver, "cuDeviceGetCount"));
  auto error_string = reinterpret_cast<ErrorStringFn>(dlsym(driver, "cuGetErrorString"));
  if (init == nullptr || count == nullptr) {
    *why = "the CUDA driver (libcuda.so.1) lacks cuInit or cuDeviceGetCount";
    return 0;
  }
  auto words = [&](int rc) {
    const char* s = nullptr;
    if (error_string == nullptr || error_string(rc, &s) != 0 || s == nullptr) s = "unknown error";
    return fmt::format("{} (CUresult {})", s, rc);
  };
  int n = 0;
  if (const int rc = init(0); rc != 0) {
    *why = "the CUDA driver did not start: " + words(rc);
    return 0;
  }
  if (const int rc = count(&n); rc != 0) {
    *why = "the CUDA driver lists no device: " + words(rc);
    return 0;
  }
  if (n == 0) *why = "the CUDA driver lists no device";
  return n;
}

// libweft_cuda.so from libweft's own directory, its entry points found by name; null and why not.
const GpuBackend* OpenModule(std::string* why) {
  Dl_info info;
  if (dladdr(reinterpret_cast<void*>(&LoadGpuBackend), &info) == 0 || info.dli_fname == nullptr) {
    *why = "the CUDA backend was not loaded: dladdr found no file for libweft";
    return nullptr;
  }
  std::string path = info.dli_fname;
  path = path.substr(0, path.find_last_of('/') + 1) + "libweft_cuda.so";
  void* module = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (module == nullptr) {
    *why = fmt::format("the CUDA backend was not loaded: {}", dlerror());
    return nullptr;
  }
  auto* b = new GpuBackend;
  b->path = path;
  std::string missing;
  auto find = [&](auto& fn, const char* name) {
    fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(dlsym(module, name));
    if (fn == nullptr) missing += fmt::format("{}{}", missing.empty() ? "" : ", ", name);
  };
  find(b->usable, "weft_cuda_usable");
  find(b->allocator_of, "weft_cuda_allocator_of");
  find(b->register_kernels, "weft_cuda_register_kernels");
  find(b->new_reducer, "weft_cuda_new_reducer");
  find(b->new_copier, "weft_cuda_new_copier");
  if (!missing.empty()) {
    *why = fmt::format("the CUDA backend {} lacks {} (a module of another weft build?)", path, missing);
    delete b;
    return nullptr;
  }
  return b;
}
#endif

const Loaded& Load(bool even_without_gpu) {
  static const Loaded* loaded = [even_without_gpu] {
    auto* l = new Loaded;
#if WEFT_CUDA
    std::string why;
    l->backend = LinkedBackend();
    if (l->backend == nullptr && (even_without_gpu || DriverDeviceCount(&why) > 0)) l->backend = OpenModule(&why);
    if (l->backend == nullptr) {
      l->none.reason = why;
      std::fprintf(stderr, "weft: 0 GPU devices: %s; running on CPU\n", why.c_str());
    }
#else
    (void)even_without_gpu;
    l->none.reason = "weft was built without CUDA (meson option cuda; see docs/cuda.md)";
#endif
    return l;
  }();
  return *loaded;
}

}  // namespace

const GpuBackend* LoadGpuBackend(bool even_without_gpu) { return Load(even_without_gpu).backend; }

const GpuProbe& ProbeGpus() {
  const Loaded& l = Load(false);
  return l.backend != nullptr ? l.backend->usable()->probe : l.none;
}

std::vector<std::shared_ptr<GpuContext>> OpenGpus() {
  const GpuBackend* b = LoadGpuBackend();
  return b != nullptr ? b->usable()->contexts : std::vector<std::shared_ptr<GpuContext>>{};
}

Allocator* GpuAllocatorOf(const GpuContext& gpu) {
  const GpuBackend* b = LoadGpuBackend();
  if (b == nullptr) throw Error(errors::FailedPrecondition("GpuAllocatorOf: {}", NoGpuMessage()));
  return b->allocator_of(gpu);
}

std::string NoGpuMessage() { return "no GPU device: " + ProbeGpus().reason; }

}  // namespace weft
