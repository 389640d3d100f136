#include "distributed/ucx/staging.h"

#include <cstring>
#include <mutex>
#include <vector>

#include "core/allocator.h"
#include "core/gpu_backend.h"
#include "core/threadpool.h"

namespace weft {
namespace {

class HostCopier : public DeviceCopier {
 public:
  explicit HostCopier(ThreadPool* pool) : pool_(pool) {}
  std::string Name() const override { return "host"; }
  void* AllocateHost(size_t bytes) override { return CpuAllocator()->Allocate(bytes); }
  void FreeHost(void* p, size_t bytes) override { CpuAllocator()->Deallocate(p, bytes); }
  void ToHost(const void* src, void* dst, size_t bytes, Done done) override { Copy(src, dst, bytes, std::move(done)); }
  void ToDevice(const void* src, void* dst, size_t bytes, Done done) override { Copy(src, dst, bytes, std::move(done)); }

 private:
  void Copy(const void* src, void* dst, size_t bytes, Done done) {
    auto run = [src, dst, bytes, done = std::move(done)] {
      if (bytes > 0) std::memcpy(dst, src, bytes);
      done(Status());
    };
    if (pool_ != nullptr) {
      pool_->Schedule(std::move(run));
    } else {
      run();
    }
  }
  ThreadPool* pool_;
};

}  // namespace

std::shared_ptr<DeviceCopier> NewHostCopier(ThreadPool* pool) { return std::make_shared<HostCopier>(pool); }

std::shared_ptr<DeviceCopier> SelectDeviceCopier(const std::vector<std::shared_ptr<GpuContext>>& gpus) {
  // GPUs exist only where the CUDA backend is loaded, and its module makes the copier.
  const GpuBackend* backend = LoadGpuBackend();
  return gpus.empty() || backend == nullptr ? nullptr : backend->new_copier(gpus);
}

void ChunkPipeline::Run(ChunkPlan plan, size_t depth, Stage first, Stage second, Done finish) {
  WEFT_REQUIRE(plan.chunk > 0 && depth > 0, "ChunkPipeline: chunk ({}) and depth ({}) must be positive", plan.chunk,
               depth);
  std::shared_ptr<ChunkPipeline> p(
      new ChunkPipeline(plan, depth, std::move(first), std::move(second), std::move(finish)));
  p->second_done_.assign(plan.num_chunks(), false);
  p->Pump();
}

// Starts the first stages that have a free slot, and finishes when everything has ended. Stages
// that complete inside the call that started them come back here: a flag turns that recursion
// into another round of the loop.
void ChunkPipeline::Pump() {
  auto self = shared_from_this();
  std::unique_lock<std::mutex> l(mu_);
  if (pumping_) {
    pump_again_ = true;
    return;
  }
  pumping_ = true;
  do {
    pump_again_ = false;
    while (status_.ok() && next_first_ < plan_.num_chunks() && next_first_ < released_ + depth_) {
      const size_t chunk = next_first_++;
      in_flight_++;
      l.unlock();
      first_(chunk, chunk % depth_, [self, chunk](const Status& s) { self->FirstDone(chunk, s); });
      l.lock();
    }
  } while (pump_again_);
  pumping_ = false;
  const bool all_done = completed_ == plan_.num_chunks() || (!status_.ok() && in_flight_ == 0);
  if (all_done && !finished_) {
    finished_ = true;
    Done finish = std::move(finish_);
    const Status s = status_;
    l.unlock();
    finish(s);
  }
}

void ChunkPipeline::FirstDone(size_t chunk, const Status& s) {
  bool go;
  {
    std::lock_guard<std::mutex> l(mu_);
    if (!s.ok() && status_.ok()) status_ = s.WithContext(fmt::format("chunk {} of {}", chunk, plan_.num_chunks()));
    go = status_.ok();
    if (!go) in_flight_--;
  }
  if (!go) {
    Pump();
    return;
  }
  auto self = shared_from_this();
  second_(chunk, chunk % depth_, [self, chunk](const Status& st) { self->SecondDone(chunk, st); });
}

void ChunkPipeline::SecondDone(size_t chunk, const Status& s) {
  {
    std::lock_guard<std::mutex> l(mu_);
    in_flight_--;
    if (s.ok()) {
      second_done_[chunk] = true;
      completed_++;
      while (released_ < second_done_.size() && second_done_[released_]) released_++;
    } else if (status_.ok()) {
      status_ = s.WithContext(fmt::format("chunk {} of {}", chunk, plan_.num_chunks()));
    }
  }
  Pump();
}

}  // namespace weft
