// CollectiveContext: what the collectives of one owner's steps share at run time: the thread pool
// their members hand local work to (merges off the receiving thread; `done` when it must leave a
// transport's progress thread) and the watchdog thread that fails a member waiting past its
// timeout. A Session (graph/session.h) or a Server (distributed/server/server.h) owns one; the
// executor's arguments (ExecutorArgs::collectives) carry it to every kernel of a step, and the
// collective kernels start their Collectives on it, as TensorFlow hands kernels its collective
// executor. No collective state is process-wide: two Sessions never share a pool or a watchdog.
//
//   CollectiveContext ctx;                                       // before the rendezvous it outlives
//   LocalRendezvous rendezvous;
//   auto c = Collective::Create(params, &ctx, &rendezvous, done);  // collective.h
//   c->Start(DType::kFloat32);
//   RingAllReduce(c, input);                                     // algorithms.h
//   c->EndStart();
//
// Lifetime contract: the context must outlive every collective created with it. Its destructor
// fails the collectives still running with Cancelled, then blocks until every one of them is gone,
// then stops its threads. A collective is gone once nothing holds it: its pending Recvs must
// complete or be dropped, so the rendezvous of its step must be destroyed, aborted or cleaned up
// first (a Session's and a Server's steps do that when they end). An owner therefore destroys its
// context after its steps have returned (their `done` ran) and before what the collectives use
// (the devices a GPU member's reducer works on).
//
// The threads start at first use: an owner whose steps run no collective starts none.
// Thread-safe.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <thread>

#include "core/threadpool.h"

namespace weft {

class Collective;
class TraceRing;

class CollectiveContext {
 public:
  // num_threads: the pool's size; 0: hardware threads.
  explicit CollectiveContext(int num_threads = 0);
  ~CollectiveContext();
  CollectiveContext(const CollectiveContext&) = delete;
  CollectiveContext& operator=(const CollectiveContext&) = delete;

  // The pool collective members hand work to (never a device's intra-op pool, whose threads must
  // not run what follows a collective). Created on the first call.
  ThreadPool& pool();
  // Collectives created with this context and not destroyed yet (for tests).
  size_t num_live() const;
  // Whether the watchdog thread has been started (for tests: it starts with the first collective).
  bool watchdog_started() const;

  // Wall time during which at least one collective of this context was running (overlapping
  // collectives count once), the one running now included: the time a step spends in, or waiting
  // on, collectives. The collective kernels call BeginActive when a member starts and EndActive
  // when its `done` runs (calls balance).
  double active_seconds() const;
  // Where the collectives record their messages (each Send, and each Recv from posted to
  // arrived): not owned, must outlive the context; null (the default): not recorded. Set before
  // the first collective.
  void set_trace_ring(TraceRing* ring) { trace_ring_ = ring; }
  TraceRing* trace_ring() const { return trace_ring_; }
  void BeginActive();
  void EndActive();

 private:
  friend class Collective;
  // Called by Collective::Create: the watchdog checks `c`'s deadline until Forget(id).
  uint64_t Watch(std::weak_ptr<Collective> c);
  // Called by ~Collective.
  void Forget(uint64_t id);
  void WatchdogLoop();

  const int num_threads_;
  std::once_flag pool_once_;
  std::unique_ptr<ThreadPool> pool_;
  mutable std::mutex mu_;
  std::condition_variable cv_;       // the watchdog's sleep
  std::condition_variable drained_;  // the destructor's wait for the last collective to go
  std::map<uint64_t, std::weak_ptr<Collective>> live_;
  int active_ = 0;                                   // members between BeginActive and EndActive
  std::chrono::steady_clock::time_point active_since_;  // when active_ last went from 0 to 1
  std::chrono::steady_clock::duration active_total_{};  // closed intervals with active_ > 0
  uint64_t next_id_ = 0;
  bool closing_ = false;  // the destructor waits on drained_
  bool stop_ = false;
  bool idle_ = false;  // the watchdog waits until a collective comes
  std::thread watchdog_;
  TraceRing* trace_ring_ = nullptr;
};

}  // namespace weft
