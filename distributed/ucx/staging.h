// GPU tensors across processes without CUDA-aware UCX: staged through host bounce buffers, in
// chunks, so that copying a chunk overlaps sending the previous one.
//
//   std::shared_ptr<DeviceCopier> copier = NewHostCopier();   // the GPU backend gives a CUDA one
//   ChunkPlan plan{bytes, 1 << 20};                            // chunk i: [offset(i), offset(i) + size(i))
//   ChunkPipeline::Run(plan, /*depth=*/4,
//       [&](size_t i, size_t slot, ChunkPipeline::Done done) { copier->ToHost(src + plan.offset(i), bounce[slot],
//                                                                               plan.size(i), done); },
//       [&](size_t i, size_t slot, ChunkPipeline::Done done) { send(bounce[slot], plan.size(i), done); },
//       [](const Status& s) { ... });                          // once, after every started stage finished
//
// UcxTransport picks the path at run time (UcxTransport::device_path()): when ucp_context_query
// lists UCS_MEMORY_TYPE_CUDA, device pointers go to UCX as they are; otherwise a device tensor is
// staged (first stage: device -> bounce buffer through the DeviceCopier, second: the UCX send of
// that chunk), and without a copier sending device memory is an error naming the key.
#pragma once

#include <algorithm>
#include <cstddef>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/status.h"

namespace weft {

class ThreadPool;
class GpuContext;

// Chunked copies between device and host memory: the interface a GPU backend implements
// (cudaMemcpyAsync on a stream + an event or host callback for `done`).
class DeviceCopier {
 public:
  using Done = std::function<void(const Status&)>;
  virtual ~DeviceCopier() = default;
  virtual std::string Name() const = 0;
  // Host memory for bounce buffers (page-locked when the backend can), 64-byte aligned.
  virtual void* AllocateHost(size_t bytes) = 0;
  virtual void FreeHost(void* p, size_t bytes) = 0;
  // Asynchronous copies; `done` runs exactly once, on any thread, when the bytes are in place.
  virtual void ToHost(const void* device_src, void* host_dst, size_t bytes, Done done) = 0;
  virtual void ToDevice(const void* host_src, void* device_dst, size_t bytes, Done done) = 0;
};

// The host implementation: "device" memory that is host memory (tests of the staging path, and
// the reference for backends). Copies run on `pool` when given (asynchronously, like a GPU's copy
// engine), inline otherwise. Bounce buffers come from CpuAllocator().
std::shared_ptr<DeviceCopier> NewHostCopier(ThreadPool* pool = nullptr);

// The CUDA implementation (distributed/ucx/staging_cuda.cc, in the CUDA backend module
// libweft_cuda.so, not in libweft_ucx; core/gpu.h) over the process's
// usable GPUs (at least one): a chunk is copied on the D2H / H2D stream of the GPU that holds the
// device side, after the work queued on that GPU's compute stream; bounce buffers are pinned
// (portable: every GPU's copies may use them); `done` runs on the copier's own thread.
std::shared_ptr<DeviceCopier> NewCudaCopier(std::vector<std::shared_ptr<GpuContext>> gpus);

// The copier a transport of this process should use: the CUDA one (made by the CUDA backend
// module, loaded wherever a GPU is usable) when `gpus` (OpenGpus(): the usable GPUs) is not empty,
// nullptr otherwise (no GPU tensors to stage: nothing changes).
std::shared_ptr<DeviceCopier> SelectDeviceCopier(const std::vector<std::shared_ptr<GpuContext>>& gpus);

// `total` bytes in chunks of `chunk` (the last one shorter when `total` is not a multiple).
struct ChunkPlan {
  size_t total = 0;
  size_t chunk = 1;
  size_t num_chunks() const { return total == 0 ? 0 : (total + chunk - 1) / chunk; }
  size_t offset(size_t i) const { return i * chunk; }
  size_t size(size_t i) const { return std::min(chunk, total - i * chunk); }
};

// Moves the chunks of a plan through two stages with `depth` bounce slots: chunk i's first stage
// runs in slot i % depth once chunk i - depth's second stage has released it; its second stage
// starts when its first is done. First stages start in chunk order. On the first error no new
// stage starts; `finish` runs once with that error after the stages in flight have ended (so no
// slot is still in use). A plan of 0 bytes finishes at once with OK. Stages may complete on any
// thread, also inside the call that starts them.
class ChunkPipeline : public std::enable_shared_from_this<ChunkPipeline> {
 public:
  using Done = std::function<void(const Status&)>;
  using Stage = std::function<void(size_t chunk, size_t slot, Done done)>;
  static void Run(ChunkPlan plan, size_t depth, Stage first, Stage second, Done finish);

 private:
  ChunkPipeline(ChunkPlan plan, size_t depth, Stage first, Stage second, Done finish)
      : plan_(plan), depth_(depth), first_(std::move(first)), second_(std::move(second)), finish_(std::move(finish)) {}
  void Pump();
  void FirstDone(size_t chunk, const Status& s);
  void SecondDone(size_t chunk, const Status& s);

  const ChunkPlan plan_;
  const size_t depth_;
  Stage first_, second_;
  Done finish_;
  std::mutex mu_;
  size_t next_first_ = 0;   // next chunk whose first stage may start
  size_t released_ = 0;     // chunks whose second stage ended (slots free up in order: see Pump)
  std::vector<bool> second_done_;
  size_t in_flight_ = 0;    // stages started and not ended
  size_t completed_ = 0;    // chunks through both stages
  Status status_;
  bool finished_ = false;
  bool pumping_ = false;
  bool pump_again_ = false;
};

}  // namespace weft
