// Internal to TensorChannel (tensor_channel.cc, tensor_channel_recv.cc, tensor_channel_staging.cc):
// the receive pool, the bounce buffers, and the send and receive ops. Progress-thread only unless a
// class says otherwise.
#pragma once

#include <chrono>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

#include "distributed/ucx/memreg.h"
#include "distributed/ucx/tensor_channel.h"
#include "distributed/ucx/wire.h"

namespace weft {

DevicePath ChooseDevicePath(ucp_context_h context, bool have_copier);

// Buffers for tensors received by rendezvous, reused by size: a training step receives the same
// sizes every step, and a fresh multi-megabyte allocation costs an mmap and a page fault per 4 KiB
// (as much as the transfer itself). Tensors handed out keep the pool alive through their release.
// Every buffer is registered with UCX once, when the pool allocates it (ucp_mem_map through
// `registry`), and receives into it pass that handle: no registration per transfer.
class TensorChannel::RecvBufferPool : public std::enable_shared_from_this<RecvBufferPool> {
 public:
  RecvBufferPool(size_t max_cached, std::shared_ptr<UcxMemRegistry> registry)
      : max_cached_(max_cached), registry_(std::move(registry)) {}
  ~RecvBufferPool() {
    for (auto& [bytes, list] : free_) {
      for (void* p : list) Free(registry_.get(), p, bytes);
    }
  }
  // A buffer of at least `bytes` (64-byte aligned).
  std::shared_ptr<Buffer> Get(size_t bytes) {
    const size_t rounded = (bytes + 4095) & ~size_t{4095};
    void* p = nullptr;
    {
      std::lock_guard<std::mutex> l(mu_);
      auto it = free_.find(rounded);
      if (it != free_.end() && !it->second.empty()) {
        p = it->second.back();
        it->second.pop_back();
        cached_ -= rounded;
      }
    }
    if (p == nullptr) {
      p = CpuAllocator()->Allocate(rounded);
      if (registry_) registry_->Register(p, rounded);
    }
    std::weak_ptr<RecvBufferPool> pool = weak_from_this();
    std::shared_ptr<UcxMemRegistry> registry = registry_;
    return std::make_shared<Buffer>(p, bytes, MemoryKind::kHost, [pool, registry, p, rounded] {
      if (auto self = pool.lock()) {
        self->Put(p, rounded);
      } else {
        Free(registry.get(), p, rounded);
      }
    });
  }

 private:
  void Put(void* p, size_t rounded) {
    {
      std::lock_guard<std::mutex> l(mu_);
      if (cached_ + rounded <= max_cached_) {
        free_[rounded].push_back(p);
        cached_ += rounded;
        return;
      }
    }
    Free(registry_.get(), p, rounded);
  }
  static void Free(UcxMemRegistry* registry, void* p, size_t bytes) {
    if (registry != nullptr) registry->Unregister(p);
    CpuAllocator()->Deallocate(p, bytes);
  }

  const size_t max_cached_;
  std::shared_ptr<UcxMemRegistry> registry_;
  std::mutex mu_;
  std::map<size_t, std::vector<void*>> free_;
  size_t cached_ = 0;
};

// Buffers for eager tensors of up to kEagerCopyBytes, in size classes of 64 B .. 4 KiB: each class
// keeps up to kSlotsPerClass buffers, made once; a buffer is free again when no tensor shares it
// any more (use count 1: only the pool holds it), so a steady stream of small tensors (a ping-pong,
// a small all-reduce per step) is received without allocating buffers. When every kept buffer of a
// class is in use (the receiver holds on to many), Get makes one that is not kept.
// Get: progress thread only. The tensors handed out may be released on any thread: a slot's count
// drops to 1 by the last holder's release (acq_rel), which the acquire fence in Get orders before
// the slot is written again. The pool's reference keeps a buffer from being forwarded into a
// kernel's output (forward.h wants a use count of 1), so its bytes are only ever read by others.
class TensorChannel::SmallTensorPool {
 public:
  static constexpr size_t kMinBytes = 64;
  static constexpr size_t kClasses = 7;  // 64 B .. 4 KiB (kEagerCopyBytes)
  static constexpr size_t kSlotsPerClass = 32;
  static_assert((kMinBytes << (kClasses - 1)) == kEagerCopyBytes);

  // A buffer of at least `bytes` (<= kEagerCopyBytes), 64-byte aligned.
  std::shared_ptr<Buffer> Get(size_t bytes) {
    size_t cls = 0;
    while ((kMinBytes << cls) < bytes) ++cls;
    Class& c = classes_[cls];
    for (size_t tried = 0; tried < c.slots.size(); ++tried) {
      const std::shared_ptr<Buffer>& b = c.slots[c.next];
      c.next = (c.next + 1) % c.slots.size();
      if (b.use_count() == 1) {
        std::atomic_thread_fence(std::memory_order_acquire);
        made_or_reused_.reused++;
        return b;
      }
    }
    auto b = std::make_shared<Buffer>(CpuAllocator(), kMinBytes << cls);
    made_or_reused_.made++;
    if (c.slots.size() < kSlotsPerClass) c.slots.push_back(b);
    return b;
  }
  struct Counts {
    int64_t made = 0, reused = 0;
  };
  Counts counts() const { return made_or_reused_; }

 private:
  struct Class {
    std::vector<std::shared_ptr<Buffer>> slots;
    size_t next = 0;
  };
  Class classes_[kClasses];
  Counts made_or_reused_;
};

// Host bounce buffers of the staged GPU path (DeviceCopier::AllocateHost: pinned when the backend
// can), each registered with UCX once and reused by later transfers. Thread-safe.
class TensorChannel::StagingBuffers {
 public:
  StagingBuffers(std::shared_ptr<DeviceCopier> copier, std::shared_ptr<UcxMemRegistry> registry, size_t bytes)
      : copier_(std::move(copier)), registry_(std::move(registry)), bytes_(bytes) {}
  ~StagingBuffers() {
    for (void* p : free_) {
      registry_->Unregister(p);
      copier_->FreeHost(p, bytes_);
    }
  }
  size_t bytes() const { return bytes_; }
  void* Get() {
    {
      std::lock_guard<std::mutex> l(mu_);
      if (!free_.empty()) {
        void* p = free_.back();
        free_.pop_back();
        return p;
      }
    }
    void* p = copier_->AllocateHost(bytes_);
    registry_->Register(p, bytes_);
    return p;
  }
  void Put(void* p) {
    std::lock_guard<std::mutex> l(mu_);
    free_.push_back(p);
  }

 private:
  std::shared_ptr<DeviceCopier> copier_;
  std::shared_ptr<UcxMemRegistry> registry_;
  const size_t bytes_;
  std::mutex mu_;
  std::vector<void*> free_;
};

// One send (eager: one request; rendezvous: header + data, two requests).
struct TensorChannel::SendOp {
  TensorChannel* channel = nullptr;
  int task = -1;
  Tensor value;       // kept alive until the data is sent
  std::string head;
  ucp_dt_iov_t iov[2];
  int pending = 0;
  Status status;
  UcxDoneCallback done;
  WireKind kind = WireKind::kTensor;
  uint64_t step_id = 0;
  std::string key;
  bool is_dead = false;
  Protocol protocol = Protocol::kAuto;

  void Complete(const Status& s) {
    if (!s.ok() && status.ok()) {
      status = key.empty() ? s : s.WithContext(fmt::format("sending key '{}' (step {})", key, step_id));
    }
    if (--pending == 0) {
      TensorChannel* ch = channel;
      ch->worker_->AddDemand(-1);
      if (done) done(status);
      ch->RecycleSendOp(this);  // the tensor is released here
      ch->sends_in_flight_--;
    }
  }
};

struct TensorChannel::RecvOp {
  TensorChannel* channel;
  int src_task;
  bool is_header;
  bool slot = false;  // a receive slot (header op posted ahead, its buffer kept): TensorChannel::PostSlots
  void* request = nullptr;
  ucp_worker_h worker = nullptr;  // the ucp worker the receive was posted on (data or connection manager)
  // Header receives: the message buffer (CpuAllocator, 64-byte aligned).
  uint8_t* buffer = nullptr;
  size_t buffer_bytes = 0;
  // Data receives: the tensor being filled, its key, and what the header said.
  Tensor value;
  uint64_t step_id = 0;
  std::string key;
  DType dtype = DType::kUInt8;
  std::vector<int64_t> dims;
  uint64_t seq = 0;
  size_t data_bytes = 0;
  uint32_t chunk_bytes = 0;    // > 0: received in chunks (a staged device tensor)
  // Chunked receives: each chunk is a RecvOp with `parent` set; the parent counts them down.
  RecvOp* parent = nullptr;
  size_t chunks_left = 0;
  size_t expected_bytes = 0;   // a chunk's size
  Status chunk_status;
  std::chrono::steady_clock::time_point started;
  // UCX may complete a receive inside the posting call (a rendezvous over cma does) and still return
  // the request: the callback then only records the outcome, and the poster handles it.
  bool in_post = false;
  bool done_in_post = false;
  ucs_status_t post_status = UCS_OK;
  size_t post_length = 0;
  WireKind kind = WireKind::kTensor;  // data receives: the message's kind
  Tensor into;  // data receives: where the receiver asked the bytes to go (ReceiveInto), if anywhere
  WireMessage message;  // header receives: decoded here (the op is reused, so are its key and dims)
  // Header receives of a message longer than the buffer: its length (the buffer keeps its first
  // buffer_bytes) and, on authenticated connections, its MAC computed on the way.
  size_t claimed_bytes = 0;
  std::optional<MessageMacStream> mac;

  void FreeBuffer() {
    if (buffer != nullptr) CpuAllocator()->Deallocate(buffer, buffer_bytes);
    buffer = nullptr;
  }
};

}  // namespace weft
