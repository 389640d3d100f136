// A numpy data allocator (NEP 49) that aligns array data to 64 bytes (kTensorAlignment), so that
// arrays made after `import weft` can be shared with weft tensors without a copy. numpy's own
// allocator gives 16-byte alignment, which would make every feed a copy.
//
// Installed by weft/__init__.py through `_weft._install_numpy_allocator()` (opt out with
// WEFT_NUMPY_ALLOCATOR=0). numpy records the handler in each array, so arrays are freed by the
// allocator that made them whatever the policy is later; the handler lives as long as the process
// (this module is never unloaded).
#define NPY_NO_DEPRECATED_API NPY_1_22_API_VERSION
#define NPY_TARGET_VERSION NPY_1_22_API_VERSION
#include <numpy/arrayobject.h>

#include <cstdlib>
#include <cstring>

#include "common.h"

namespace weft::python {
namespace {

// Each block: [padding][original pointer][size][data, 64-byte aligned].
struct Header {
  void* base;
  size_t size;
};
constexpr size_t kAlign = kTensorAlignment;
static_assert(sizeof(Header) <= kAlign);

void* AlignedMalloc(void*, size_t size) {
  void* base = std::malloc(size + kAlign + sizeof(Header));
  if (base == nullptr) return nullptr;
  uintptr_t p = reinterpret_cast<uintptr_t>(base) + sizeof(Header);
  p = (p + kAlign - 1) & ~(uintptr_t{kAlign} - 1);
  Header* h = reinterpret_cast<Header*>(p) - 1;
  h->base = base;
  h->size = size;
  return reinterpret_cast<void*>(p);
}

void AlignedFree(void*, void* ptr, size_t) {
  if (ptr != nullptr) std::free((static_cast<Header*>(ptr) - 1)->base);
}

void* AlignedCalloc(void* ctx, size_t n, size_t elsize) {
  if (elsize != 0 && n > SIZE_MAX / elsize) return nullptr;
  void* p = AlignedMalloc(ctx, n * elsize);
  if (p != nullptr) std::memset(p, 0, n * elsize);
  return p;
}

void* AlignedRealloc(void* ctx, void* ptr, size_t size) {
  if (ptr == nullptr) return AlignedMalloc(ctx, size);
  void* p = AlignedMalloc(ctx, size);
  if (p == nullptr) return nullptr;
  const size_t old = (static_cast<Header*>(ptr) - 1)->size;
  std::memcpy(p, ptr, old < size ? old : size);
  AlignedFree(ctx, ptr, old);
  return p;
}

PyDataMem_Handler g_handler = {
    "weft_aligned_64",
    1,
    {nullptr, AlignedMalloc, AlignedCalloc, AlignedRealloc, AlignedFree},
};

bool InstallNumpyAllocator() {
  if (PyArray_API == nullptr) {
    if (_import_array() < 0) throw py::error_already_set();
  }
  PyObject* capsule = PyCapsule_New(&g_handler, "mem_handler", nullptr);
  if (capsule == nullptr) throw py::error_already_set();
  PyObject* old = PyDataMem_SetHandler(capsule);
  Py_DECREF(capsule);
  if (old == nullptr) throw py::error_already_set();
  Py_DECREF(old);
  return true;
}

}  // namespace

void InitNumpyAllocator(py::module_& m) {
  m.def("_install_numpy_allocator", &InstallNumpyAllocator,
        "Makes numpy allocate array data 64-byte aligned (in this thread's context), so arrays can be "
        "shared with weft tensors without a copy.");
}

}  // namespace weft::python
