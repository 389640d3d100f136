// UcxTransport's tensor protocol over the peers' data endpoints (PeerConnector): eager and
// rendezvous sends, header probing, the rendezvous receive window and receive pool, GPU staging,
// ReceiveInto, malformed-message rejection and the per-peer counters. Wire format: wire.h.
//
//   TensorChannel ch(options, self, context->get(), worker, registry, &connector, on_message, on_measure);
//   worker->AddPollHook([&] { ch.ProbeHeaders(worker->get()); });   // receiving
//   ch.Send(1, WireKind::kTensor, /*step_id=*/7, key, tensor, false, TensorChannel::Protocol::kAuto,
//           [](const Status& s) { ... });                          // any thread
//
// Small tensors (payload <= the peer's eager threshold, set_eager_threshold) go eagerly: one
// message, header + data as a two-part iov (no copy on the sender), received into a reused
// 64-byte-aligned buffer: a receive slot posted ahead when the message fits one (kSlotBytes;
// rendezvous headers too), else a probed receive (payloads up to kEagerCopyBytes are copied out
// into a tensor of the small-tensor pool, SmallTensorPool: no allocation but the shape's; larger
// ones keep the buffer). Send ops, header receive ops and their strings are reused too. Larger ones go as a header, after which the receiver allocates the tensor from its
// registered receive pool (or takes the one ReceiveInto named) and posts a receive for the data tag
// into it (at most rendezvous_window_bytes at once); the data message is large enough for UCX to
// use its rendezvous protocol, so the bytes land directly in the receiver's tensor. Device tensors:
// DevicePath and staging.h. Every received header is checked (DecodeMessage); a bad message is
// counted against its sender, recorded (last_rejection()), and dropped; when its header was intact
// the handler still gets the key with the DataLoss status. Messages of step kMeasureStep go to
// `on_measure` (ThresholdProbe), hellos to the connector, control messages to the control handler.
//
// Threading: the protocol state (send and receive ops, header buffers, the window, per-peer
// sequence numbers and thresholds) is confined to the progress thread; the entry points marked
// "any thread" touch only atomics (counters, sends in flight) or state under mu_ (rejections, the
// control handler, ReceiveInto's requests), and hand sends to the progress thread through the
// worker. Handlers and `done` callbacks run on the progress thread and must not block.
#pragma once

#include <atomic>
#include <chrono>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "distributed/ucx/memreg.h"
#include "core/free_list.h"
#include "distributed/ucx/peer_connector.h"
#include "distributed/ucx/transport_options.h"

namespace weft {

class TensorChannel {
 public:
  enum class Protocol { kAuto, kEager, kRendezvous };
  // The step id of threshold-measurement messages (never a real step's: they are not delivered to
  // the message handler, nor counted).
  static constexpr uint64_t kMeasureStep = ~uint64_t{0};
  using MeasureHandler = std::function<void(int src_task, const std::string& key)>;

  // Not owned, outliving the channel: options, context, worker, connector. `registry` registers the
  // receive pool's and the bounce buffers' chunks. Throws Error on bad staging options.
  TensorChannel(const UcxTransportOptions& options, int self, ucp_context_h context, UcxWorker* worker,
                std::shared_ptr<UcxMemRegistry> registry, PeerConnector* connector, UcxMessageHandler on_message,
                MeasureHandler on_measure);
  ~TensorChannel();
  TensorChannel(const TensorChannel&) = delete;
  TensorChannel& operator=(const TensorChannel&) = delete;

  // Any thread. Sends asynchronously; `done` (may be null) runs once the tensor's buffer is no
  // longer needed, or with the error. kAuto picks eager or rendezvous by the peer's threshold.
  void Send(int task, WireKind kind, uint64_t step_id, const std::string& key, const Tensor& value, bool is_dead,
            Protocol protocol, UcxDoneCallback done);
  // Any thread but the progress thread: see UcxTransport::WaitForSends.
  bool WaitForSends(std::chrono::milliseconds timeout) const;
  // Any thread: replaces the control-plane handler (the caller makes sure no old call runs on).
  void SetControlHandler(UcxControlHandler on_control);
  // Any thread: see UcxTransport::ReceiveInto.
  void ReceiveInto(uint64_t step_id, const std::string& key, const Tensor& into);
  void ForgetReceiveInto(uint64_t step_id);
  // Any thread.
  PeerCounters Counters(int task) const;
  void AddWaitTime(int task, int64_t us);
  Status last_rejection() const;
  int64_t num_rejected() const;
  DevicePath device_path() const { return device_path_; }

  // Progress thread, a poll hook (outside UCX's callbacks): handles the small messages that landed
  // in the receive slots (re-posting the slots), then receives the header messages waiting in
  // `worker`'s unexpected queue.
  void ProbeHeaders(ucp_worker_h worker);
  // A tensor message whose head and payload together take at most this many bytes, and whose
  // payload is at most kEagerCopyBytes (a rendezvous header: whose head does), goes under SmallTag
  // and lands in one of kSlotsPosted receives posted ahead (no probe; UCX copies it once, from its
  // transport into the slot).
  static constexpr size_t kSlotBytes = 4096 + 1024;
  static constexpr size_t kSlotsPosted = 32;
  // Progress thread: the eager threshold toward `task` (the configured one until set).
  size_t eager_threshold(int task) const { return peers_[task].eager_threshold; }
  void set_eager_threshold(int task, size_t bytes) { peers_[task].eager_threshold = bytes; }
  // Any thread but the progress thread: waits (up to 5 s) until staged sends finished; their stages
  // call back into the channel.
  void WaitForStagedSends() const;
  // Progress thread, once: nothing more is delivered; receives in flight are cancelled (waiting up
  // to 1 s for UCX to complete them) and the header buffers freed.
  void Shutdown();

 private:
  struct SendOp;
  struct RecvOp;
  class RecvBufferPool;
  class SmallTensorPool;
  class StagingBuffers;
  // Per-peer protocol state (progress thread), indexed by global task.
  struct PeerState {
    uint64_t next_seq = 1;
    size_t eager_threshold = 0;
  };
  // Header messages are received into reused buffers of HeaderBufferBytes() (at most
  // kHeaderBuffersKept kept).
  static constexpr size_t kHeaderBuffersKept = 8;
  // Eager payloads up to this size are copied out of the receive buffer (which is reused); larger
  // ones keep it (the tensor is made over it).
  static constexpr size_t kEagerCopyBytes = 4096;
  // Rendezvous receives that may run whatever their size (so that one transfer's round trips
  // overlap the next one's data, also for tensors larger than the window).
  static constexpr int kRendezvousMinInFlight = 2;
  // Send ops and header receive ops kept for reuse, with their strings' capacity (the steady state
  // of small messages allocates none of them).
  static constexpr size_t kSendOpsKept = 64;
  static constexpr size_t kHeaderOpsKept = 16;

  // Any thread: a send op from the free list (or new), its fields reset; Recycle gives it back
  // (or deletes it).
  SendOp* NewSendOp();
  void RecycleSendOp(SendOp* op);
  // Progress thread: the same for header receives.
  RecvOp* NewHeaderOp(int src_task, ucp_worker_h worker);
  void RecycleHeaderOp(RecvOp* op);
  // Progress thread: posts receive slots until kSlotsPosted are posted (slots completing inside the
  // post go to slot_done_), and handles the completed ones (OnHeaderReceived) until none is left.
  void PostSlots(ucp_worker_h worker);
  void HandleSlots(ucp_worker_h worker);
  // Progress thread: receives one header message matching (tag, mask) waiting in UCX's unexpected
  // queue; false when there is none.
  bool ProbeOne(ucp_worker_h worker, uint64_t tag, uint64_t mask);
  static constexpr uint64_t kWildcardProbeRounds = 64;

  // Progress thread: sends `op` once its peer is connected (PostTensor), connecting first if needed.
  void StartSend(SendOp* op);
  void PostTensor(SendOp* op);
  void PostSend(ucp_ep_h ep, SendOp* op, const void* buffer, size_t count, ucp_datatype_t datatype, uint64_t tag,
                ucp_mem_h memh = nullptr);
  // Sends a device tensor's bytes through bounce buffers (DevicePath::kStaged), chunk i under
  // DataTag(self, seq + i); op->Complete when all chunks went (or failed).
  void SendStaged(int task, SendOp* op, uint64_t seq, size_t num_chunks);
  size_t HeaderBufferBytes() const;
  // A header message longer than HeaderBufferBytes() (more than any valid one) is received through
  // prefix_datatype_, a UCX generic datatype whose unpack keeps the first HeaderBufferBytes() and
  // drops the rest (feeding the MAC check on the way): the rejection names its key and fails that
  // key's step with DataLoss, without holding what the message claims (RejectOversize).
  static void* PrefixStartPack(void* context, const void* buffer, size_t count);
  static size_t PrefixPack(void* state, size_t offset, void* dest, size_t max_length);
  static void* PrefixStartUnpack(void* context, void* buffer, size_t count);
  static size_t PrefixPackedSize(void* state);
  static ucs_status_t PrefixUnpack(void* state, size_t offset, const void* src, size_t length);
  static void PrefixFinish(void* state);
  void RejectOversize(RecvOp* op);
  // On authenticated connections nothing but the tag's task is trusted before the MAC verified:
  // false (the message counted and rejected) unless it did.
  bool Authentic(RecvOp* op, size_t length);
  void RecycleHeaderBuffer(RecvOp* op);
  void StartDataReceive(std::unique_ptr<RecvOp> data);
  void PostDataReceive(RecvOp* op, void* buffer, size_t bytes, uint64_t tag);
  void FinishDataReceive(RecvOp* op, Status status);
  void StartQueuedDataReceives();
  void OnHeaderReceived(RecvOp* op, ucs_status_t status, size_t length);
  void OnDataReceived(RecvOp* op, ucs_status_t status, size_t length);
  void Reject(int src_task, const Status& status, const WireMessage* message);
  void CountSent(int task, size_t bytes, bool eager, bool staged = false);
  void CountReceived(int src_task, uint64_t step_id, size_t bytes, bool eager);
  void Deliver(int src_task, uint64_t step_id, const std::string& key, const Status& status, const Tensor& value,
               bool is_dead, WireKind kind = WireKind::kTensor);
  Tensor TakeReceiveInto(uint64_t step_id, const std::string& key);
  static void SendCallback(void* request, ucs_status_t status, void* user_data);
  static void RecvCallback(void* request, ucs_status_t status, const ucp_tag_recv_info_t* info, void* user_data);

  const UcxTransportOptions& options_;
  const int self_;
  UcxWorker* const worker_;
  std::shared_ptr<UcxMemRegistry> registry_;
  PeerConnector* const connector_;
  const UcxMessageHandler on_message_;
  const MeasureHandler on_measure_;
  DevicePath device_path_ = DevicePath::kNone;
  ucp_datatype_t prefix_datatype_ = 0;
  std::shared_ptr<StagingBuffers> staging_;
  std::shared_ptr<RecvBufferPool> recv_pool_;
  std::unique_ptr<SmallTensorPool> small_pool_;  // progress thread: eager tensors up to kEagerCopyBytes
  std::atomic<int> staged_in_flight_{0};
  std::atomic<int> sends_in_flight_{0};  // Send until SendOp::Complete
  // Progress-thread state.
  std::vector<PeerState> peers_;
  std::set<RecvOp*> recvs_in_flight_;
  std::vector<uint8_t*> header_buffers_;  // free header receive buffers
  std::vector<RecvOp*> free_header_ops_;
  // Receive slots (kSlotsPosted ops, each with a kSlotBytes buffer, made on first use, kept until
  // Shutdown): posted, completed and waiting in slot_done_ (UCX's callback only queues them:
  // handling re-enters UCX, which its 1.13 tcp transport does not survive inside a callback), or
  // free while being handled.
  std::vector<RecvOp*> slot_ops_;
  std::vector<RecvOp*> free_slots_;
  std::vector<RecvOp*> slot_done_;
  size_t slots_posted_ = 0;
  uint64_t probe_calls_ = 0;
  std::deque<std::unique_ptr<RecvOp>> rndv_queued_;  // rendezvous headers waiting for the window
  int rndv_in_flight_ops_ = 0;
  size_t rndv_in_flight_bytes_ = 0;
  bool starting_queued_ = false;
  bool shutting_down_ = false;
  // Counters, read by any thread without a lock. Indexed by global task, sized at start.
  struct PeerStats {
    std::atomic<int64_t> messages_sent{0}, bytes_sent{0}, eager_sent{0}, rendezvous_sent{0}, staged_sent{0};
    std::atomic<int64_t> messages_received{0}, bytes_received{0}, eager_received{0}, rendezvous_received{0};
    std::atomic<int64_t> received_in_place{0}, received_in_slot{0};
    std::atomic<int64_t> wait_us{0};
  };
  std::unique_ptr<PeerStats[]> stats_;
  // Shared with other threads.
  FreeList<SendOp> free_send_ops_{kSendOpsKept};
  mutable std::mutex mu_;
  UcxControlHandler on_control_;
  std::map<int, int64_t> rejected_;  // malformed messages by the task their tag names
  std::map<int, int64_t> unauthenticated_;  // of those, the ones whose MAC did not verify
  Status last_rejection_;
  int64_t num_rejected_ = 0;
  // ReceiveInto's requests by (step, key); into_count_ lets headers skip the lock when there are none.
  std::map<std::pair<uint64_t, std::string>, Tensor> into_;
  std::atomic<int> into_count_{0};
};

}  // namespace weft
