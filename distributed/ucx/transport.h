// Tensors between the tasks of a cluster over UCX tagged messages (wire format: wire.h).
//
//   UcxTransportOptions o;
//   o.cluster = ClusterSpec::FromFlag("worker=127.0.0.1:10090,127.0.0.1:10091");
//   o.task = {"worker", 0};
//   UcxTransport t(o, on_message, on_peer_failure);       // listens on 127.0.0.1:10090
//   ThrowIfError(t.Connect(1));                            // waits (bounded) until worker:1 answers
//   t.SendTensor(1, /*step_id=*/7, key, tensor, /*is_dead=*/false, [](const Status& s) { ... });
//   // worker:1's on_message(0, 7, key, OK, tensor, false) runs on its progress thread
//
// Small tensors (payload <= the peer's eager threshold: measured at connection, see
// measure_eager_threshold) go eagerly: one message, header + data as a two-part iov (no copy on the
// sender), received into a reused 64-byte-aligned buffer (payloads up to 4 KiB are copied out,
// larger ones keep the buffer). Larger ones go as a header, after which the receiver allocates the
// tensor from its registered receive pool and posts a receive for the data tag into it (at most
// rendezvous_window_bytes at once); the data message is large enough for UCX to use its rendezvous
// protocol (RNDV_THRESH is set to the eager threshold unless the caller set it), so the bytes land
// directly in the receiver's tensor. Device tensors: see device_path() and staging.h.
//
// Every received header is checked (DecodeMessage); a bad message is counted against its sender,
// recorded (last_rejection()), and dropped; when its header was intact the message handler still
// gets the key with the DataLoss status so that Recv fails at once. Receiving goes on.
//
// Peers: Connect() (or the first send / EnsureConnected) opens an endpoint to the peer's listener
// through UCX's connection manager and sends a hello carrying this worker's UCX address; the peer
// answers with its own, and each side opens a second endpoint to the other's worker address. Tensors
// go on that one, because in UCX 1.13 endpoints made by the connection manager use network
// transports only, while worker-address endpoints use shared memory between processes of one host
// (see data_peer_error_handling). UCX_TLS must keep tcp for the connection manager ("sm,self,tcp").
// The connection-manager endpoint stays open: it notices a peer's death at once (TCP reset). When
// either endpoint fails, `on_peer_failure(task, Unavailable)` runs once; sends waiting for the
// connection and later sends to the peer fail with that status.
//
// Thread-safe. Handlers and `done` callbacks run on the progress thread: they must not block.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "core/tensor.h"
#include "distributed/cluster_spec.h"
#include "distributed/ucx/memreg.h"
#include "distributed/ucx/staging.h"
#include "distributed/ucx/ucx.h"
#include "distributed/ucx/wire.h"

namespace weft {

struct UcxTransportOptions {
  ClusterSpec cluster;
  TaskId task;
  // Payloads of at most this many bytes go eagerly; larger ones by rendezvous into the receiver's
  // tensor. With measure_eager_threshold this is the upper bound (receive buffers are sized for it).
  size_t eager_threshold = 32 << 10;
  // Set each peer's threshold at connection by timing both paths on the live endpoint ("protocol
  // threshold calculation"): round trips of each candidate size (<= eager_threshold) sent eagerly
  // and by rendezvous, measure_reps times interleaved, within measure_budget (when it runs out
  // before every size was timed both ways, the configured threshold stays). The threshold is the
  // largest candidate up to which eager is never slower. Off: eager_threshold for every peer.
  // WEFT_UCX_LOG=1 prints each result on stderr. The candidates start at 4 KiB (OpenMPI's
  // shared-memory eager limit): a ping-pong may time 1-2 KiB rendezvous as faster, but where both
  // sides send at once (every collective) one message wins: a 4 KiB all-reduce took 14-17 us by
  // rendezvous against 7-10 us eagerly, interleaved here.
  bool measure_eager_threshold = true;
  std::vector<size_t> threshold_candidates = {4 << 10, 8 << 10, 16 << 10, 32 << 10};
  int measure_reps = 5;  // after one untimed round (warm-up)
  std::chrono::milliseconds measure_budget{20};
  // Peer-failure handling on the endpoints that carry tensors too. UCX 1.13's shared-memory
  // transports (posix, sysv) cannot report peer failure, so with it on they are not used; off (the
  // default), they are, and a peer's death is noticed by the connection-manager endpoint (TCP).
  bool data_peer_error_handling = false;
  // Rendezvous receives in flight at once, in bytes (two always go, whatever their size): further
  // headers wait, their data parked at the sender, so receive memory stays bounded and buffers come
  // back to the pool (cache-warm) before the next transfer.
  // Receive memory in flight stays cache-resident: over shared memory, 4 MiB tensors arrive at
  // 29 GB/s with 8 MiB, 24 with 16 MiB and 17.5 with 32 MiB here (bench_ucx_sendrecv).
  size_t rendezvous_window_bytes = size_t{8} << 20;
  // Bytes of freed rendezvous receive buffers kept for reuse (0: none kept).
  size_t recv_pool_bytes = size_t{512} << 20;
  // GPU tensors when UCX has no CUDA memory support (see device_path()): device -> host copies into
  // bounce buffers of staging_chunk_bytes (at least 4 KiB), staging_depth of them per transfer, so
  // that copying chunk i + 1 overlaps sending chunk i. Null: sending device memory is an error.
  std::shared_ptr<DeviceCopier> device_copier;
  size_t staging_chunk_bytes = size_t{1} << 20;
  size_t staging_depth = 4;
  // How long Connect keeps trying (a peer may not be listening yet).
  std::chrono::milliseconds connect_timeout{10000};
  // Binds the task's host with this port instead of the spec's (0: a free port, see port()); for
  // tests and launchers that hand ports around afterwards with SetPeerAddress. -1: the spec's port.
  int listen_port_override = -1;
  UcxContextOptions context;
  UcxWorkerOptions worker;
};

// How tensors in device memory cross processes, chosen when the transport starts.
enum class DevicePath {
  kUcx,     // UCX reports UCS_MEMORY_TYPE_CUDA: device pointers go to UCX as they are
  kStaged,  // no CUDA in UCX: staged through host bounce buffers by the DeviceCopier, in chunks
  kNone,    // neither: sending device memory fails naming the key
};
std::string_view DevicePathName(DevicePath path);

// Per-peer counters (since the transport started).
struct PeerCounters {
  int64_t messages_sent = 0, bytes_sent = 0, eager_sent = 0, rendezvous_sent = 0;
  int64_t messages_received = 0, bytes_received = 0, eager_received = 0, rendezvous_received = 0;
  int64_t received_in_place = 0;  // rendezvous receives that landed in the receiver's tensor (ReceiveInto)
  int64_t staged_sent = 0;     // device tensors sent through host bounce buffers (also in rendezvous_sent)
  int64_t rejected = 0;        // malformed messages from this peer
  int64_t wait_us = 0;         // time Recvs of this peer's tensors waited (added by the rendezvous)
  std::string ToString() const;
};

class UcxTransport {
 public:
  // Runs for every tensor message: status OK with the tensor, or the reason the message was bad.
  using MessageHandler = std::function<void(int src_task, uint64_t step_id, const std::string& key,
                                            const Status& status, const Tensor& value, bool is_dead)>;
  using PeerFailureHandler = std::function<void(int task, const Status& status)>;
  using DoneCallback = std::function<void(const Status& status)>;

  // Creates the UCX context and worker and listens on the task's address. Throws Error (with
  // UCX's reason) when it cannot bind.
  UcxTransport(UcxTransportOptions options, MessageHandler on_message, PeerFailureHandler on_peer_failure);
  ~UcxTransport();
  UcxTransport(const UcxTransport&) = delete;
  UcxTransport& operator=(const UcxTransport&) = delete;

  const ClusterSpec& cluster() const { return options_.cluster; }
  const TaskId& task() const { return options_.task; }
  int task_index() const { return self_; }
  int port() const { return port_; }
  size_t eager_threshold() const { return options_.eager_threshold; }
  // "worker:1 (127.0.0.1:10091)".
  std::string PeerName(int task) const;

  // Where to reach `task` (before connecting to it); the spec's address otherwise.
  void SetPeerAddress(int task, const HostPort& address);
  // Connects to `task` and waits until the connection works (a flush completes), retrying while
  // the peer is not listening yet, for at most connect_timeout. Unavailable / DeadlineExceeded
  // naming the peer otherwise.
  Status Connect(int task);
  // Starts connecting when no endpoint exists (does not wait): so that a failure of `task` is
  // noticed even when we only receive from it.
  void EnsureConnected(int task);
  // OK, or why `task` is unreachable.
  Status PeerStatus(int task) const;
  // Waits (not on the progress thread) until every send made so far has completed or failed, for
  // at most `timeout`; false if some are still in flight. A rendezvous send completes once the
  // peer has pulled the data: a process that exits right after its last collective must wait
  // here, or its peers may still be fetching from it (~UcxRendezvousMgr waits up to 2 s).
  bool WaitForSends(std::chrono::milliseconds timeout) const;

  // Sends asynchronously; `done` runs once the tensor's buffer is no longer needed (or with the
  // error). The tensor is kept alive until then.
  void SendTensor(int task, uint64_t step_id, const std::string& key, const Tensor& value, bool is_dead,
                  DoneCallback done);

  // The control plane (distributed/server): messages of kind kControlRequest / kControlReply
  // (wire.h) go to `on_control` instead of the tensor handler, with the same checks, eager or by
  // rendezvous like tensors; a malformed one whose header is intact reaches it with the error.
  // `on_peer_failure` also runs when a peer fails. Set before peers send control messages;
  // handlers run on the progress thread and must not block. Once this returns, the previous
  // handlers are not running (unless called from the progress thread).
  using ControlHandler = std::function<void(int src_task, WireKind kind, uint64_t id, const std::string& method,
                                            const Status& status, const Tensor& body)>;
  void SetControlHandler(ControlHandler on_control, PeerFailureHandler on_peer_failure);
  // SendTensor with another message kind (the control plane's).
  void SendMessage(int task, WireKind kind, uint64_t step_id, const std::string& key, const Tensor& value,
                   bool is_dead, DoneCallback done);
  // The eager threshold used toward `task` (measured or configured), and how it was chosen.
  size_t EagerThreshold(int task) const;
  std::string ThresholdReport(int task) const;
  // Waits (bounded) until the threshold toward `task` is settled (measured, given up, or measuring
  // is off); false on timeout.
  bool WaitForThreshold(int task, std::chrono::milliseconds timeout);

  // Asks that the data of `key` in step `step_id` land in `into` (its buffer) when it comes by
  // rendezvous with the same dtype and byte size into host memory; otherwise, or when its header
  // came first, the receive pool is used as always. Thread-safe. ForgetReceiveInto drops a step's
  // unused requests (UcxRendezvousMgr::Cleanup).
  void ReceiveInto(uint64_t step_id, const std::string& key, const Tensor& into);
  void ForgetReceiveInto(uint64_t step_id);

  PeerCounters Counters(int task) const;
  void AddWaitTime(int task, int64_t us);
  // The last malformed message's error (OK when none) and how many there were.
  Status last_rejection() const;
  int64_t num_rejected() const;

  // Sends raw bytes under `tag` to `task` and waits for completion (tests of malformed messages).
  Status SendRawForTesting(int task, uint64_t tag, std::string bytes);

  UcxWorker* worker() { return worker_.get(); }
  DevicePath device_path() const { return device_path_; }
  // The registrations of the chunks the transport owns (rendezvous receive pool); see memreg.h.
  UcxMemRegistry& memory_registry() { return *registry_; }

 private:
  struct Peer;
  struct Measurement;
  struct SendOp;
  enum class Protocol { kAuto, kEager, kRendezvous };
  // The step id of threshold-measurement messages (never a real step's: they are not delivered).
  static constexpr uint64_t kMeasureStep = ~uint64_t{0};
  void SendTensorImpl(int task, WireKind kind, uint64_t step_id, const std::string& key, const Tensor& value,
                      bool is_dead, Protocol protocol, DoneCallback done);
  // Progress thread: sends `op` once its peer is connected (PostTensor), connecting first if needed.
  void StartSend(SendOp* op);
  void PostTensor(SendOp* op);
  void StartMeasure(int task);
  void SendTrial(int task);
  void OnMeasureMessage(int src_task, const std::string& key);
  void FinishMeasure(int task, bool gave_up);
  void SettleThreshold(int task, const std::string& report);
  void CheckMeasureTimeouts();
  struct RecvOp;
  class RecvBufferPool;
  Peer& PeerAt(int task);  // progress thread
  void StartConnect(int task);
  void SendHello(int task, UcxEndpoint* ep, WireKind kind);
  void OnHello(int task, WireKind kind, const std::string& address);
  void PostSend(ucp_ep_h ep, SendOp* op, const void* buffer, size_t count, ucp_datatype_t datatype, uint64_t tag,
                ucp_mem_h memh = nullptr);
  // `connecting`: the error is the connection-manager endpoint's (retried while it never connected).
  void OnPeerError(int task, const Status& status, bool connecting);
  // Header messages are probed after every round of progress and received into reused buffers of
  // HeaderBufferBytes() (at most kHeaderBuffersKept kept).
  static constexpr size_t kHeaderBuffersKept = 8;
  // Eager payloads up to this size are copied out of the receive buffer (which is reused); larger
  // ones keep it (the tensor is made over it).
  static constexpr size_t kEagerCopyBytes = 4096;
  // Rendezvous receives that may run whatever their size (so that one transfer's round trips
  // overlap the next one's data, also for tensors larger than the window).
  static constexpr int kRendezvousMinInFlight = 2;
  size_t MaxEagerThreshold() const { return options_.eager_threshold; }
  size_t HeaderBufferBytes() const;
  void ProbeHeaders(ucp_worker_h worker);
  void RecycleHeaderBuffer(RecvOp* op);
  void StartDataReceive(std::unique_ptr<RecvOp> data);
  void PostDataReceive(RecvOp* op, void* buffer, size_t bytes, uint64_t tag);
  void FinishDataReceive(RecvOp* op, Status status);
  // Sends a device tensor's bytes through bounce buffers (DevicePath::kStaged), chunk i under
  // DataTag(self, seq + i); op->Complete when all chunks went (or failed).
  void SendStaged(int task, SendOp* op, uint64_t seq, size_t num_chunks);
  class StagingBuffers;
  void StartQueuedDataReceives();
  void OnHeaderReceived(RecvOp* op, ucs_status_t status, size_t length);
  void OnDataReceived(RecvOp* op, ucs_status_t status, size_t length);
  void Reject(int src_task, const Status& status, const WireMessage* message);
  void CountSent(int task, size_t bytes, bool eager, bool staged = false);
  void CountReceived(int src_task, uint64_t step_id, size_t bytes, bool eager);
  void Deliver(int src_task, uint64_t step_id, const std::string& key, const Status& status, const Tensor& value,
               bool is_dead, WireKind kind = WireKind::kTensor);
  static void SendCallback(void* request, ucs_status_t status, void* user_data);
  static void RecvCallback(void* request, ucs_status_t status, const ucp_tag_recv_info_t* info, void* user_data);

  UcxTransportOptions options_;
  MessageHandler on_message_;
  PeerFailureHandler on_peer_failure_;
  int self_ = 0;
  int port_ = 0;
  std::shared_ptr<UcxMemRegistry> registry_;
  DevicePath device_path_ = DevicePath::kNone;
  std::shared_ptr<StagingBuffers> staging_;
  std::atomic<int> staged_in_flight_{0};
  std::atomic<int> sends_in_flight_{0};  // SendTensorImpl until SendOp::Complete
  std::shared_ptr<RecvBufferPool> recv_pool_;
  std::unique_ptr<UcxContext> context_;
  std::unique_ptr<UcxWorker> worker_;
  // Progress-thread state.
  std::unique_ptr<UcxListener> listener_;
  std::map<int, std::unique_ptr<Peer>> peers_;
  std::vector<std::unique_ptr<UcxEndpoint>> accepted_;
  std::set<RecvOp*> recvs_in_flight_;
  std::vector<uint8_t*> header_buffers_;  // free header receive buffers
  std::deque<std::unique_ptr<RecvOp>> rndv_queued_;  // rendezvous headers waiting for the window
  int rndv_in_flight_ops_ = 0;
  size_t rndv_in_flight_bytes_ = 0;
  bool starting_queued_ = false;
  bool shutting_down_ = false;
  // Shared state.
  mutable std::mutex mu_;
  std::condition_variable connected_cv_;
  std::map<int, HostPort> addresses_;
  std::map<int, Status> peer_status_;     // failed peers
  std::map<int, int64_t> rejected_;       // malformed messages by the task their tag names
  // Read on every message without mu_: whether the peer connected, whether it failed (set under
  // mu_ after peer_status_, which holds why) and its counters. Indexed by global task, sized at start.
  struct PeerStats {
    std::atomic<bool> connected{false}, failed{false};
    std::atomic<int64_t> messages_sent{0}, bytes_sent{0}, eager_sent{0}, rendezvous_sent{0}, staged_sent{0};
    std::atomic<int64_t> messages_received{0}, bytes_received{0}, eager_received{0}, rendezvous_received{0};
    std::atomic<int64_t> received_in_place{0};
    std::atomic<int64_t> wait_us{0};
  };
  std::unique_ptr<PeerStats[]> stats_;
  ControlHandler on_control_;
  PeerFailureHandler on_control_peer_failure_;
  std::map<int, size_t> thresholds_;            // settled thresholds
  std::map<int, std::string> threshold_reports_;
  Status last_rejection_;
  int64_t num_rejected_ = 0;
  // ReceiveInto's requests by (step, key); into_count_ lets headers skip the lock when there are none.
  std::mutex into_mu_;
  std::map<std::pair<uint64_t, std::string>, Tensor> into_;
  std::atomic<int> into_count_{0};
  Tensor TakeReceiveInto(uint64_t step_id, const std::string& key);
};

}  // namespace weft
