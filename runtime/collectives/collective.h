// A graph issues a collective with one op per member (ops/collective.h), each on its own device;
// the op's kernel creates that member's Collective and starts the algorithm (algorithms.h):
//
//   Graph g;
//   Scope s = Scope::Root(&g);
//   const std::string cpu0 = "/job:localhost/replica:0/task:0/device:CPU:0",
//                     cpu1 = "/job:localhost/replica:0/task:0/device:CPU:1";
//   ops::CollectiveGroup group{.size = 2, .key = 1, .devices = {cpu0, cpu1}};
//   Output x0 = ops::Const(s.WithDevice(cpu0), std::vector<float>{1, 2}, {2});
//   Output x1 = ops::Const(s.WithDevice(cpu1), std::vector<float>{10, 20}, {2});
//   Output sum0 = ops::AllReduce(s.WithDevice(cpu0), x0, group, /*instance=*/1, /*rank=*/0);
//   Output sum1 = ops::AllReduce(s.WithDevice(cpu1), x1, group, /*instance=*/1, /*rank=*/1);
//   Session sess(&g, {.num_cpu_devices = 2});
//   std::vector<Tensor> sums = sess.Run({}, {sum0, sum1});   // both {11, 22}
//
// One member's part in one collective instance: a group of `group_size` members (one per device,
// in this process or in other tasks), each running the same collective op with the same
// (group_key, instance_key) in the same step, computing one result together.
//
//   CollectiveContext ctx;                       // context.h: the pool and watchdog (a Session's)
//   LocalRendezvous rendezvous;                  // the step's (runtime/rendezvous.h)
//   CollectiveParams p{.group_size = 2, .rank = 0, .devices = {cpu0, cpu1}};
//   auto c = Collective::Create(p, &ctx, &rendezvous, [](const Status& s, const Tensor& sum) { ... });
//   c->Start(x.dtype());
//   RingAllReduce(c, x);                         // algorithms.h; member 1 does the same on cpu1
//   c->EndStart();                               // `done` may run from here on, exactly once
//
// Every message from member a to member b goes through the step's Rendezvous under the key
//   "{device_a};0;{device_b};_coll/{group_key}/{instance_key}/{what};0:0"
// (the partitioner's format), so a LocalRendezvous carries it within a process and UcxRendezvous
// across tasks. The algorithms (algorithms.h) are callback chains on a Collective: they Send and
// Recv, and end it with Finish(output) or Fail(status); the first end wins and calls `done` once.
//
// A member that waits longer than `timeout` for a message fails with DeadlineExceeded naming the
// group, the instance and the ranks (and devices) it still waits for (its context's watchdog
// checks). A message of the wrong dtype or size fails with InvalidArgument naming the member that
// sent it.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "core/status.h"
#include "core/tensor.h"
#include "core/threadpool.h"
#include "runtime/collectives/channel.h"
#include "runtime/collectives/context.h"
#include "runtime/collectives/cost_model.h"
#include "runtime/collectives/reduce.h"
#include "runtime/trace_ring.h"

namespace weft {

class Rendezvous;

struct CollectiveParams {
  std::string what;  // for errors: the node ("node 'all_reduce' (CollectiveReduce)")
  int group_size = 1;
  int rank = 0;
  int64_t group_key = 0, instance_key = 0;
  std::vector<std::string> devices;  // full device names, rank order (group_size of them)
  MergeOp merge = MergeOp::kAdd;
  bool divide = false;  // final_op Div: the merged result divided by group_size
  int source_rank = 0;  // Broadcast
  std::string algorithm = "auto";  // AllReduce: auto, shared, ring, recursive_doubling
  int64_t chunk_bytes = 1 << 20;   // ring: the pipeline's chunk
  // What `auto` weighs across processes: recursive doubling up to RecursiveDoublingMaxBytes(cost,
  // members), the ring above (cost_model.h; the default is the fit to the emulated links).
  AllReduceCost cost;
  std::chrono::milliseconds timeout{60000};
  // `done` runs on the context's pool unless on the starting thread (the kernels set it across
  // processes: the end often comes on UCX's progress thread, where the executor's next kernels
  // must not run).
  bool complete_on_pool = false;
  // Where merges, copies and new tensors happen (reduce.h): the host, or the member's GPU.
  std::shared_ptr<const Reducer> reducer = HostReducer();
};

// Splits the comma-separated `group_devices` attr; checks there are group_size distinct names and
// that `own_device` is the rank-th. `what` names the node in errors.
std::vector<std::string> ParseGroupDevices(const std::string& attr, int group_size, int rank,
                                           const std::string& own_device, const std::string& what);
// "/job:J/replica:R/task:T" of a full device name (everything before "/device:").
std::string TaskOf(const std::string& device);
// True when every device is in the task (process) of the first ("/job:J/replica:R/task:T").
bool AllInOneTask(const std::vector<std::string>& devices);
// The rendezvous key of a message from member `from` to member `to`.
std::string CollectiveKey(const CollectiveParams& p, int from, int to, const std::string& what);
// Elements [begin, begin + n) of `t`'s flat view as a tensor of shape `shape`: sharing `t`'s
// buffer when that start is aligned (kTensorAlignment), else a copy made by `reducer`.
Tensor FlatSlice(const Tensor& t, int64_t begin, int64_t n, TensorShape shape, const Reducer& reducer);
inline Tensor FlatSlice(const Tensor& t, int64_t begin, int64_t n, const Reducer& reducer) {
  return FlatSlice(t, begin, n, TensorShape({n}), reducer);
}

class Collective : public std::enable_shared_from_this<Collective> {
 public:
  using Done = std::function<void(const Status& status, const Tensor& output)>;
  // context: not owned, not null, must outlive the collective (context.h); rendezvous: not owned,
  // must outlive the collective's end.
  static std::shared_ptr<Collective> Create(CollectiveParams params, CollectiveContext* context, Rendezvous* rendezvous,
                                            Done done);
  ~Collective();

  const CollectiveParams& params() const { return p_; }
  int rank() const { return p_.rank; }
  int size() const { return p_.group_size; }
  const Reducer& reducer() const { return *p_.reducer; }
  CollectiveContext* context() const { return context_; }
  Rendezvous* rendezvous() const { return rendezvous_; }

  // Hands `value` to member `to`; a failure ends the collective with it.
  void Send(int to, const std::string& what, const Tensor& value);
  // Records message `what` to or from member `peer` in the context's trace ring, if any.
  void Trace(TraceKind kind, int peer, const std::string& what, int64_t start_ns, const Status& s) const;
  // Calls `fn` with the value from member `from` once it is there, unless the collective has
  // ended. An Error thrown by `fn` ends it. The value must have the collective's dtype and
  // `expect_elements` elements (any number when -1); kUnchecked: `fn` checks the value itself.
  // `into`: where the value may land (RendezvousArgs::into): `fn` then gets a tensor over its buffer.
  static constexpr int64_t kUnchecked = -2;
  void Recv(int from, const std::string& what, int64_t expect_elements, std::function<void(const Tensor&)> fn,
            const Tensor& into = Tensor());
  // Send and Recv of the instance's message number `message` (0..255, one number per `what`):
  // over the step rendezvous's persistent collective channel (channel.h: integer slots, receives
  // posted ahead) when the peer is in another task, the member reduces on the host and the
  // channel carries the size; else Send / Recv under `what`. Both ends decide alike (UsesChannel).
  // RecvSlot's value has this member's `shape` (a sender's other shape fails the collective).
  void SendSlot(int to, int message, const std::string& what, const Tensor& value);
  void RecvSlot(int from, int message, const std::string& what, const TensorShape& shape,
                std::function<void(const Tensor&)> fn);
  // Whether message `message` of `bytes` to or from member `peer` goes over the channel.
  bool UsesChannel(int peer, int message, size_t bytes) const;
  // Runs `fn` now when called on the thread that started this member, else on its context's
  // thread pool (so members started on different threads reduce in parallel; not on a
  // device's intra-op pool, whose threads must never run what follows the collective).
  // `cheap` work runs at once on any thread (a hand-over to the pool would cost more).
  void RunLocal(std::function<void()> fn, bool cheap = false);
  void Finish(const Tensor& output);
  void Fail(const Status& status);
  bool ended() const { return ended_.load(); }
  // Called by the context's watchdog: fails with DeadlineExceeded if the collective is still
  // waiting past its deadline (none before Start).
  void CheckDeadline(std::chrono::steady_clock::time_point now);
  // Marks the start (the calling thread is this member's own) and arms the timeout; the end is
  // reported (done called) no earlier than EndStart.
  void Start(DType dtype);
  void EndStart();

 private:
  Collective(CollectiveParams params, CollectiveContext* context, Rendezvous* rendezvous, Done done);
  std::string Describe() const;
  // While any code of this member runs (its start, a Recv callback, a RunLocal task), its end is
  // held back, so the step (and its rendezvous) outlives that code.
  void Enter();
  void Leave();
  class Activity {  // Leave() when it goes
   public:
    explicit Activity(Collective* c) : c_(c) {}
    ~Activity() { c_->Leave(); }
    Activity(const Activity&) = delete;
    Activity& operator=(const Activity&) = delete;

   private:
    Collective* c_;
  };
  void End(const Status& status, const Tensor& output);
  // A Recv's (or RecvSlot's) value or failure: checks it and runs `fn` (see Recv).
  void Received(int from, const std::string& what, int64_t expect_elements, const std::function<void(const Tensor&)>& fn,
                int64_t start_ns, const Status& s, const Tensor& t);
  void Deliver(const Status& status, const Tensor& output);

  CollectiveParams p_;
  CollectiveContext* context_;
  Rendezvous* rendezvous_;
  CollectiveChannel* channel_ = nullptr;  // the rendezvous's (may be null)
  uint64_t channel_step_ = 0;
  Done done_;
  DType dtype_ = DType::kInvalid;
  std::atomic<bool> ended_{false};
  std::atomic<bool> starting_{false};
  std::thread::id start_thread_;
  // Set by Start, read by the watchdog's thread.
  std::atomic<std::chrono::steady_clock::time_point> deadline_{std::chrono::steady_clock::time_point::max()};
  uint64_t watch_id_ = 0;
  std::mutex mu_;
  std::vector<int> waiting_;  // per rank: messages still expected from it
  int active_ = 0;
  bool has_deferred_ = false;
  Status deferred_status_;
  Tensor deferred_output_;
};

}  // namespace weft
