// Internal to the UCX transport (transport.cc, transport_recv.cc): the per-peer, send and receive
// state. Progress-thread only unless a member says otherwise.
#pragma once

#include <chrono>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

#include "distributed/ucx/memreg.h"
#include "distributed/ucx/transport.h"

namespace weft {

DevicePath ChooseDevicePath(ucp_context_h context, bool have_copier);

// Buffers for tensors received by rendezvous, reused by size: a training step receives the same
// sizes every step, and a fresh multi-megabyte allocation costs an mmap and a page fault per 4 KiB
// (as much as the transfer itself). Tensors handed out keep the pool alive through their release.
// Every buffer is registered with UCX once, when the pool allocates it (ucp_mem_map through
// `registry`), and receives into it pass that handle: no registration per transfer.
class UcxTransport::RecvBufferPool : public std::enable_shared_from_this<RecvBufferPool> {
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

// Host bounce buffers of the staged GPU path (DeviceCopier::AllocateHost: pinned when the backend
// can), each registered with UCX once and reused by later transfers. Thread-safe.
class UcxTransport::StagingBuffers {
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

struct UcxTransport::Peer {
  std::unique_ptr<UcxEndpoint> ep;       // through the connection manager: set-up and failure detection
  std::unique_ptr<UcxEndpoint> data_ep;  // to the peer's worker address: tensors (shared memory included)
  std::vector<std::function<void()>> waiting;  // sends posted before data_ep existed
  int attempt = 0;             // bumps on every (re)connect, so stale callbacks are ignored
  bool connected = false;     // data_ep exists
  bool cm_connected = false;  // ep's first flush completed
  bool failed = false;
  std::chrono::steady_clock::time_point deadline;  // of the current connect
  std::optional<std::chrono::steady_clock::time_point> retry_at;
  std::vector<std::unique_ptr<UcxEndpoint>> graveyard;  // failed endpoints, closed outside callbacks
  uint64_t next_seq = 1;
  size_t eager_threshold = 0;  // toward this peer (the configured one until measured)
  std::unique_ptr<Measurement> measure;
  bool answering = false;  // the peer is measuring toward us: we spin while its probes come
  std::chrono::steady_clock::time_point last_probe;
};

// The threshold measurement toward one peer: trials are rep-major, then size, then eager before
// rendezvous; each is a round trip (the tensor there, an empty ack back).
struct UcxTransport::Measurement {
  std::vector<size_t> sizes;
  std::vector<Tensor> values;
  int reps = 1;
  size_t trial = 0;
  std::vector<double> best_eager_us, best_rendezvous_us;  // the fastest round trip per size
  std::chrono::steady_clock::time_point started, trial_started, budget_end;
  size_t num_trials() const { return sizes.size() * 2 * static_cast<size_t>(reps); }
  size_t size_index(size_t t) const { return (t % (2 * sizes.size())) / 2; }
  bool eager(size_t t) const { return t % 2 == 0; }
};

// One send (eager: one request; rendezvous: header + data, two requests).
struct UcxTransport::SendOp {
  UcxTransport* transport;
  int task;
  Tensor value;       // kept alive until the data is sent
  std::string head;
  ucp_dt_iov_t iov[2];
  int pending = 0;
  Status status;
  DoneCallback done;
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
      transport->worker()->AddDemand(-1);
      if (done) done(status);
      transport->sends_in_flight_--;
      delete this;
    }
  }
};

struct UcxTransport::RecvOp {
  UcxTransport* transport;
  int src_task;
  bool is_header;
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

  void FreeBuffer() {
    if (buffer != nullptr) CpuAllocator()->Deallocate(buffer, buffer_bytes);
    buffer = nullptr;
  }
};

}  // namespace weft
