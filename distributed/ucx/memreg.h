// Memory registration cache: ucp_mem_map once per chunk of memory weft owns, the handle handed to
// every transfer from or into that chunk (UCP_OP_ATTR_FIELD_MEMH, honoured by UCX 1.13's tag
// protocols), ucp_mem_unmap when the chunk goes back to the system.
//
//   auto reg = std::make_shared<UcxMemRegistry>(context);
//   reg->Register(chunk, bytes);                      // after allocating the chunk
//   ucp_mem_h h = reg->Find(p, n);                    // a chunk holding [p, p+n): its handle, else null
//   reg->Unregister(chunk);                           // before freeing it
//   reg->Close();                                     // before the context goes: unmaps what is left
//
// Used for the chunks weft allocates for UCX itself (the rendezvous receive pool, the host bounce
// buffers of the GPU staging path). Tensors being sent come from the process allocator, which may
// hand a chunk back to the system behind our back: for them UCX's own registration cache (keyed
// by address, invalidated by its memory hooks) is the safe cache, so Find returns null and UCX
// registers (and caches) them itself.
//
// Thread-safe. Registration failures are not errors: the chunk is then simply not registered and
// UCX registers on its own.
#pragma once

#include <ucp/api/ucp.h>

#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>

namespace weft {

class UcxMemRegistry {
 public:
  explicit UcxMemRegistry(ucp_context_h context) : context_(context) {}
  ~UcxMemRegistry() { Close(); }
  UcxMemRegistry(const UcxMemRegistry&) = delete;
  UcxMemRegistry& operator=(const UcxMemRegistry&) = delete;

  // Maps [chunk, chunk + bytes); false when UCX refused or the registry is closed.
  bool Register(void* chunk, size_t bytes);
  void Unregister(void* chunk);
  // The handle of the registered chunk containing [p, p + bytes), or null.
  ucp_mem_h Find(const void* p, size_t bytes) const;
  // Unmaps every chunk still registered; later calls do nothing.
  void Close();

  int64_t num_registered() const;
  int64_t registrations() const;  // ucp_mem_map calls so far (cache misses)
  int64_t lookups_hit() const;

 private:
  struct Entry {
    size_t bytes;
    ucp_mem_h memh;
  };
  ucp_context_h context_;
  mutable std::mutex mu_;
  std::map<uintptr_t, Entry> chunks_;  // by start address
  bool closed_ = false;
  int64_t registrations_ = 0;
  mutable int64_t hits_ = 0;
};

}  // namespace weft
