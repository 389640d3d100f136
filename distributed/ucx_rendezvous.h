// The rendezvous across processes: keys whose two ends live in different tasks travel over UCX,
// keys within this task stay in-process.
//
//   UcxTransportOptions t;                                   // cluster, this task, eager threshold ...
//   t.cluster = config.cluster;
//   t.task = config.RequireTask();
//   UcxRendezvousMgr mgr(t, {.recv_timeout = std::chrono::seconds(30)});
//   ThrowIfError(mgr.ConnectAll());                          // bounded by the connect timeout
//   std::shared_ptr<UcxRendezvous> r = mgr.Find(step_id);    // one per step, on every task
//   r->Send(key, {}, tensor, false);                          // key's dst device on another task: over UCX
//   r->RecvAsync(key, {}, done);                              // key's src device on another task: waits for it
//   mgr.Cleanup(step_id);                                     // when the step is over everywhere
//
// Keys are the partitioner's "src_device;incarnation;dst_device;tensor;frame:iter"; the task of a
// device is found by its "/job:J/replica:0/task:T" prefix in the cluster spec. On the wire a
// tensor carries its step id and key (wire.h); the receiving task hands it to that step's
// rendezvous, creating it if the step has not started there yet.
//
// Failures: a Recv from a task that failed (or fails while the Recv waits) completes with
// Unavailable naming the task; a Recv that waits longer than `recv_timeout` aborts the step with
// DeadlineExceeded naming the key and the peer; a failed send or a malformed message for the
// step aborts it with that error. Aborting one step leaves the others running.
//
// Thread-safe. Recv callbacks for remote keys run on `callback_pool` when given, else on the UCX
// progress thread (then they must not block).
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "core/node_cache.h"
#include "core/threadpool.h"
#include "runtime/rendezvous.h"
#include "distributed/ucx/transport.h"

namespace weft {

struct UcxRendezvousOptions {
  std::chrono::milliseconds recv_timeout{30000};
  ThreadPool* callback_pool = nullptr;  // not owned
  // Called once per step when it is first aborted with DeadlineExceeded (a Recv or a collective
  // past its deadline) or Unavailable (a peer gone), on the aborting thread, before its waiting
  // Recvs fail: Waiting() still lists them (a hang report). Must not call back into the step.
  std::function<void(uint64_t step_id, const Status& why)> on_stall;
};

class UcxRendezvousMgr;

class UcxRendezvous : public Rendezvous {
 public:
  UcxRendezvous(UcxRendezvousMgr* mgr, uint64_t step_id) : mgr_(mgr), step_id_(step_id) {}
  // Completes waiters while the members their callbacks use still exist.
  ~UcxRendezvous() override {
    if (local_.num_pending() > 0) {
      local_.StartAbort(Status(Code::kAborted, "step " + std::to_string(step_id_) + ": the rendezvous was destroyed"));
    }
  }
  Status Send(const std::string& key, const RendezvousArgs& args, const Tensor& value, bool is_dead) override;
  void RecvAsync(const std::string& key, const RendezvousArgs& args, DoneCallback done) override;
  void StartAbort(const Status& status) override;
  // The waiting thread drives the UCX worker (UcxWorker::DriveUntil).
  bool DriveUntil(const std::function<bool()>& ready) override;
  // Remote Recvs name their peer ("Recv of 'key' from task worker:1 (host:port)").
  std::string DescribeWaiting() const override;
  // The transport's collective channel (null when its options turn it off), this step's id on it.
  CollectiveChannel* collective_channel(uint64_t* step) override;
  uint64_t step_id() const { return step_id_; }
  // Recvs of remote keys still waiting.
  size_t num_remote_pending() const;

 private:
  friend class UcxRendezvousMgr;
  // A Recv of a remote key, waiting. Its entry is made (from a spare node, NodeCache) when the Recv
  // is posted and holds the caller's callback, so that the callback handed to local_ is two
  // words (stored inside the std::function: no allocation per Recv).
  struct Pending {
    int src_task = -1;
    std::chrono::steady_clock::time_point start, deadline;
    DoneCallback done;
  };
  using PendingMap = std::map<std::string, Pending>;
  // Spare entries kept for the next Recvs (a step's or a loop's Recvs come and go).
  static constexpr size_t kSparePending = 64;
  // Which task `device` belongs to; InvalidArgument naming the key when none.
  Status TaskOf(std::string_view key, std::string_view device, int* task) const;
  // local_ completed the Recv at `it` (a pending_ entry): hands the result to its callback.
  void RemoteRecvDone(PendingMap::iterator it, const Status& status, const Tensor& value, bool is_dead);
  void Arrived(const std::string& key, const Status& status, const Tensor& value, bool is_dead);
  void CheckDeadlines(std::chrono::steady_clock::time_point now);
  void PeerFailed(int task, const Status& status);

  UcxRendezvousMgr* mgr_;  // not owned; outlives every step it hands out while traffic flows
  uint64_t step_id_;
  LocalRendezvous local_;
  mutable std::mutex mu_;
  PendingMap pending_;                       // under mu_
  NodeCache<PendingMap> pending_nodes_{kSparePending};  // under mu_
  std::atomic<bool> stall_reported_{false};  // UcxRendezvousOptions::on_stall ran for this step
};

class UcxRendezvousMgr {
 public:
  // Starts the transport (listening on this task's address; throws Error when it cannot).
  UcxRendezvousMgr(UcxTransportOptions transport_options, UcxRendezvousOptions options = {});
  ~UcxRendezvousMgr();

  // Connects to every other task of the cluster (each bounded by the connect timeout).
  Status ConnectAll();
  // The step's rendezvous, created on first use (by Find or by a tensor arriving for it).
  std::shared_ptr<UcxRendezvous> Find(uint64_t step_id);
  // Forgets the step: its pending Recvs complete with Aborted; tensors arriving for it later are dropped.
  // Returns what the step was aborted with before (OK: it was not; its own failure, a peer's, a
  // timeout), so that an owner learns that the step failed.
  Status Cleanup(uint64_t step_id);
  UcxTransport& transport() { return *transport_; }
  std::chrono::milliseconds recv_timeout() const { return std::chrono::milliseconds(recv_timeout_ms_.load()); }
  void SetRecvTimeout(std::chrono::milliseconds timeout) { recv_timeout_ms_ = timeout.count(); }
  ThreadPool* callback_pool() const { return options_.callback_pool; }
  // Tensors dropped because their step was already cleaned up.
  int64_t num_dropped() const;
  // A Recv still waiting, of any live step (hang reports). Fixed-size, so that listing them
  // allocates nothing (a report must be written when the process cannot allocate).
  struct WaitingRecv {
    static constexpr size_t kKeyBytes = 256;  // a longer key keeps its first 256 bytes
    uint64_t step_id = 0;
    int src_task = -1;  // the cluster task it waits for; -1: a key of this task whose Send has not come
    std::chrono::milliseconds waited{0};
    uint16_t key_len = 0;
    char key_bytes[kKeyBytes];
    std::string_view key() const { return {key_bytes, key_len}; }
    void SetKey(std::string_view k);
  };
  // Where Waiting() lists them: memory reserved at construction and reused by every call.
  class WaitingList {
   public:
    explicit WaitingList(size_t max_recvs = 256, size_t max_steps = 64);
    const std::vector<WaitingRecv>& recvs() const { return recvs_; }
    size_t unlisted() const { return unlisted_; }  // Recvs (or whole steps) beyond the capacity

   private:
    friend class UcxRendezvousMgr;
    std::vector<WaitingRecv> recvs_, remote_;  // reserved; remote_: one step's remote Recvs
    std::vector<std::shared_ptr<UcxRendezvous>> steps_;  // reserved
    size_t unlisted_ = 0;
  };
  // Fills `out` with the Recvs waiting now, in step and key order. Allocates nothing.
  void Waiting(WaitingList* out) const;

 private:
  friend class UcxRendezvous;
  void OnMessage(int src_task, uint64_t step_id, const std::string& key, const Status& status, const Tensor& value,
                 bool is_dead);
  void OnPeerFailure(int task, const Status& status);
  void OnTick();

  UcxRendezvousOptions options_;
  std::atomic<int64_t> recv_timeout_ms_;
  mutable std::mutex mu_;
  using StepMap = std::map<uint64_t, std::shared_ptr<UcxRendezvous>>;
  StepMap steps_;
  std::set<uint64_t> finished_;  // recently cleaned-up steps (bounded)
  // A step's entries reuse the nodes of steps cleaned up before (no allocation per step for them).
  NodeCache<StepMap> step_nodes_{8};
  NodeCache<std::set<uint64_t>> finished_nodes_{2};
  int64_t dropped_ = 0;
  std::unique_ptr<UcxTransport> transport_;  // last: destroyed first, so no callback sees a half-destroyed mgr
};

}  // namespace weft
