// The rendezvous: where a Send and its Recv meet. A step's partitions (one per device, and later
// one per process) exchange tensors through it under a key that names both ends:
//
//   "/job:localhost/replica:0/task:0/device:CPU:0;1;/job:localhost/replica:0/task:0/device:CPU:1;dense/MatMul:0;0:0"
//    src_device                                  ;src_incarnation;dst_device ;tensor_name ;frame:iter
//
//   LocalRendezvous r;                                  // one per step
//   r.Send(key, {}, tensor, /*is_dead=*/false);          // never blocks
//   r.RecvAsync(key, {}, [](const Status& s, const Tensor& t, bool dead) { ... });
//   r.StartAbort(errors::Aborted("step 7 failed on CPU:1"));   // every pending and later Recv fails
//   RendezvousKeyView k;
//   Status s = RendezvousKeyView::Parse(key, &k);        // k.dst_device views into key
//
// Each key is used by exactly one Send and one Recv per step (the partitioner guarantees it);
// whichever comes first waits for the other. Thread-safe. Callbacks run exactly once, on the
// thread that completes the pair (the Send's, the Recv's or StartAbort's), never under a lock.
#pragma once

#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "core/node_cache.h"
#include "core/status.h"
#include "core/tensor.h"

namespace weft {

class CollectiveChannel;

// The five parts of a key, for building one (the partitioner, the _Send/_Recv kernels).
// Read keys with RendezvousKeyView::Parse.
struct RendezvousKey {
  std::string src_device;
  uint64_t src_incarnation = 0;
  std::string dst_device;
  std::string tensor_name;
  int64_t frame_id = 0, iter_id = 0;

  std::string ToString() const;
};

// The same parts as views into a key: the one key parser. No allocation, because the
// cross-process rendezvous routes every message by its devices. The views point into `key`, so
// they live as long as the string it views.
struct RendezvousKeyView {
  std::string_view src_device, dst_device, tensor_name;
  uint64_t src_incarnation = 0;
  int64_t frame_id = 0, iter_id = 0;

  // OK and `*out` set, or InvalidArgument naming the key and what is wrong with it (`*out` is
  // then unspecified).
  static Status Parse(std::string_view key, RendezvousKeyView* out);
};

// What the two sides may tell each other (extended by device transports later).
struct RendezvousArgs {
  MemoryKind memory = MemoryKind::kHost;  // where the sender's tensor / the receiver's buffer lives
  // Recv: a tensor the receiver allocated for the value (same dtype and size). A transport that
  // can land the bytes there does (the value then shares its buffer: the UCX rendezvous for data
  // that comes by UCX's rendezvous protocol); others ignore it and hand over the value as always.
  Tensor into;
};

class Rendezvous {
 public:
  using DoneCallback = std::function<void(const Status& status, const Tensor& value, bool is_dead)>;
  virtual ~Rendezvous() = default;

  // Hands `value` over under `key`; never blocks. Errors: a second Send of one key in a step
  // (AlreadyExists), or the rendezvous was aborted (that status).
  virtual Status Send(const std::string& key, const RendezvousArgs& args, const Tensor& value, bool is_dead) = 0;
  // Calls `done` once the value of `key` is there (or with the abort status).
  virtual void RecvAsync(const std::string& key, const RendezvousArgs& args, DoneCallback done) = 0;
  // Fails every pending and future Recv (and later Sends) with `status` (not OK). Idempotent:
  // the first status wins.
  virtual void StartAbort(const Status& status) = 0;
  // Called by a thread about to block until `ready()` holds (a step's caller waiting for its
  // end): a rendezvous whose transport is polled may have the thread poll it meanwhile, so that
  // the result ends the wait on the thread that made it (UcxRendezvous: UcxWorker::DriveUntil).
  // Returns ready(); the caller then blocks as usual. Default: nothing to drive.
  virtual bool DriveUntil(const std::function<bool()>& ready) { return ready(); }
  // The Recvs still waiting, for an error message ("'key' (no Send yet), ..."; a cross-process
  // rendezvous names the peer each waits for); empty when none. Lists a few and counts the rest.
  virtual std::string DescribeWaiting() const { return {}; }
  // The persistent channel for collectives' small messages across processes
  // (runtime/collectives/channel.h) and this step's id on it (`*step`); null (the default) when
  // the rendezvous has none.
  virtual CollectiveChannel* collective_channel(uint64_t* step) {
    (void)step;
    return nullptr;
  }
};

// "a, b, c, d and 3 more": the list DescribeWaiting returns.
std::string DescribeRecvs(const std::vector<std::string>& recvs);

// In-process hand-over: the receiver gets the sender's buffer (no copy).
class LocalRendezvous : public Rendezvous {
 public:
  LocalRendezvous() = default;
  ~LocalRendezvous() override;
  Status Send(const std::string& key, const RendezvousArgs& args, const Tensor& value, bool is_dead) override;
  void RecvAsync(const std::string& key, const RendezvousArgs& args, DoneCallback done) override;
  void StartAbort(const Status& status) override;
  std::string DescribeWaiting() const override;
  // OK, or the status the rendezvous was aborted with.
  Status abort_status() const;
  // Keys whose Recv waits (their Send has not come), in key order.
  std::vector<std::string> WaitingKeys() const;
  // The same, each handed to visit(std::string_view) under the rendezvous's lock (no allocation;
  // `visit` must not call back into the rendezvous).
  template <typename Visit>
  void ForEachWaitingKey(Visit&& visit) const {
    std::lock_guard<std::mutex> l(mu_);
    for (const auto& [key, item] : items_) {
      if (item.waiter) visit(std::string_view(key));
    }
  }
  // Keys sent and not received yet, or received and not sent (for tests and leak checks).
  size_t num_pending() const;

 private:
  struct Item {
    bool has_value = false;
    Tensor value;
    bool is_dead = false;
    DoneCallback waiter;  // set when the Recv came first
  };
  using ItemMap = std::map<std::string, Item>;
  // Spare entries for the next keys (a step's Sends and Recvs come and go): a key's entry then costs
  // no allocation, its string reusing a spare's capacity (NodeCache).
  static constexpr size_t kSpareItems = 16;
  mutable std::mutex mu_;
  ItemMap items_;
  NodeCache<ItemMap> nodes_{kSpareItems};  // under mu_
  Status aborted_;
};

}  // namespace weft
