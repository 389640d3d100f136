// UcxCollectiveChannel: CollectiveChannel (runtime/collectives/channel.h) over the transport's
// data endpoints, the fourth part of UcxTransport (transport.h), which owns one:
//
//   UcxCollectiveChannel* ch = transport.collective_channel();     // null when options say off
//   ch->Send(1, step, {.group_key = 1, .instance_key = 0, .message = 2}, tensor, nullptr);
//   ch->Recv(1, step, slot, DType::kFloat32, shape, [](const Status& s, const Tensor& t) { ... });
//
// Wire: one message, a 64-byte head (below) then the payload, under the tag
//   [63..56] class 4, [55..40] source task, [39..16] instance key, [15..8] group key, [7..0] message
// so a message names its slot by its tag alone; the head repeats the keys and adds the step, the
// dtype, the element count, a hash of the shape and the MAC (SipHash-2-4 under the direction's key,
// over head and payload, as every tensor message: docs/security.md). Carries: group keys below 256,
// instance keys below 2^24, messages below 256, payloads up to kMaxPayloadBytes.
//
// Receiving: a slot per (source task, tag), made when its first Recv comes, owns a kSlotBytes
// buffer with a receive for its exact tag posted into it, and posts it again as soon as the
// message was copied out (UCX copies an arriving message once, into the slot). Up to kMaxSlots
// slots stay posted; a Recv for a slot beyond them gets a slot that goes once it is empty. A
// message for a step nobody waits for yet is copied aside (up to kHeldPerSlot per slot; beyond
// that the slot is not posted again until one is taken: UCX holds the rest). Rejected and
// counted, never written into a tensor: a message whose MAC fails, whose head does not decode or
// names another slot or task, one for a step already forgotten (stale), one longer than a slot
// (the earliest Recv of that slot fails with DataLoss naming it and the size). UCX's completion
// callback only queues a slot; it is handled by the poll hook (UCX 1.13's tcp transport does not
// survive handling inside its callbacks: docs/ucx.md, Threading).
//
// Threading: slot state is the progress thread's; Send, Recv and ForgetStep hand their work to it
// (UcxWorker::RunHereOrPost); counters are atomics; rejections are under a mutex.
#pragma once

#include <atomic>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <unordered_map>
#include <vector>

#include <ucp/api/ucp.h>

#include "core/free_list.h"
#include "distributed/ucx/peer_connector.h"
#include "distributed/ucx/transport_options.h"
#include "distributed/ucx/ucx.h"
#include "runtime/collectives/channel.h"

namespace weft {

inline constexpr uint64_t kTagClassCollective = 4ull << 56;
// The tag of `slot`'s messages from `src_task` (the caller checks the ranges: Carries).
uint64_t CollectiveTag(int src_task, const CollectiveSlot& slot);

class UcxCollectiveChannel : public CollectiveChannel {
 public:
  static constexpr size_t kHeadBytes = 64;
  static constexpr size_t kMaxPayloadBytes = 4096;
  static constexpr size_t kSlotBytes = kHeadBytes + kMaxPayloadBytes;
  static constexpr size_t kMaxSlots = 256;
  static constexpr size_t kHeldPerSlot = 8;
  // Forgotten steps remembered (older ones: every step up to the oldest forgotten one is stale).
  static constexpr size_t kForgottenKept = 256;

  struct Counters {
    int64_t sent = 0, received = 0, held = 0, rejected = 0, stale = 0, unauthenticated = 0, oversize = 0;
    int64_t slots = 0;  // slots made so far (kept or one-shot)
    std::string ToString() const;
  };

  // Not owned, outliving the channel: options, worker, connector.
  UcxCollectiveChannel(const UcxTransportOptions& options, int self, UcxWorker* worker, PeerConnector* connector);
  ~UcxCollectiveChannel() override;
  UcxCollectiveChannel(const UcxCollectiveChannel&) = delete;
  UcxCollectiveChannel& operator=(const UcxCollectiveChannel&) = delete;

  int RemoteTask(std::string_view device) const override;
  bool Carries(const CollectiveSlot& slot, size_t bytes) const override;
  void Send(int task, uint64_t step, const CollectiveSlot& slot, const Tensor& value, SendDone done) override;
  void Recv(int task, uint64_t step, const CollectiveSlot& slot, DType dtype, const TensorShape& shape,
            RecvDone done) override;
  // Any thread: `step` is over here (UcxRendezvousMgr::Cleanup): its Recvs still waiting fail
  // with Cancelled, its messages held or arriving later are rejected as stale.
  void ForgetStep(uint64_t step);

  // Any thread.
  Counters counters() const;
  // Rejections by slot number (the order slots were made in, from 0), and the last one's reason.
  std::map<int64_t, int64_t> rejected_by_slot() const;
  Status last_rejection() const;

  // Progress thread (the transport's poll hook): handles the slots whose receive completed and
  // posts them again.
  void Poll(ucp_worker_h worker);
  // Progress thread: fails the Recvs waiting on `task`.
  void PeerFailed(int task, const Status& status);
  // Progress thread, once: Recvs waiting fail with Cancelled; posted receives are cancelled
  // (waiting up to 1 s) and the slots freed.
  void Shutdown();

 private:
  struct SendOp;
  struct Slot;
  // A Recv, from Recv until its `done` ran; reused (with its shape's capacity) from a free list,
  // so that a Recv in the steady state allocates nothing here.
  struct Waiter {
    int task = 0;
    CollectiveSlot slot;
    uint64_t step = 0;
    DType dtype = DType::kInvalid;
    TensorShape shape;
    RecvDone done;
  };
  struct HeldMessage {
    uint64_t step = 0;
    std::vector<uint8_t> bytes;  // head and payload
  };

  Waiter* NewWaiter();
  // Runs w->done(status, value), then puts `w` back on the free list.
  void Complete(Waiter* w, const Status& status, const Tensor& value = Tensor());
  SendOp* NewSendOp();
  void RecycleSendOp(SendOp* op);
  void PostSend(SendOp* op);
  static void SendCallback(void* request, ucs_status_t status, void* user_data);
  static void RecvCallback(void* request, ucs_status_t status, const ucp_tag_recv_info_t* info, void* user_data);
  Slot* FindOrMakeSlot(int task, const CollectiveSlot& key);
  void PostSlot(Slot* slot, ucp_worker_h worker);
  void HandleSlot(Slot* slot);
  // The message in `bytes` (length `length`) checked against `slot`: OK with its step, or why not.
  Status Check(const Slot& slot, const uint8_t* bytes, size_t length, uint64_t* step);
  // Delivers (or, on a mismatch, fails) `w` with the checked message.
  void Deliver(const Slot& slot, Waiter* w, const uint8_t* bytes);
  void Reject(Slot* slot, const Status& status);
  bool Forgotten(uint64_t step) const;
  void MaybeDropSlot(Slot* slot);
  std::string Describe(const Slot& slot) const;

  const UcxTransportOptions& options_;
  const int self_;
  UcxWorker* const worker_;
  PeerConnector* const connector_;
  std::atomic<int64_t> sent_{0}, received_{0}, held_{0}, rejected_{0}, stale_{0}, unauthenticated_{0}, oversize_{0},
      slots_made_{0};
  // Progress-thread state.
  std::unordered_map<uint64_t, std::unique_ptr<Slot>> slots_;  // by tag (source task included)
  size_t kept_slots_ = 0;
  std::vector<Slot*> done_;  // completed receives, queued by RecvCallback
  std::vector<std::vector<uint8_t>> free_held_;  // buffers of held messages, kept for reuse
  int posted_ = 0;
  std::set<uint64_t> forgotten_;
  uint64_t forgotten_floor_ = 0;  // steps up to this one are forgotten too (evicted from the set)
  bool any_forgotten_ = false;
  bool shutting_down_ = false;
  // Shared.
  FreeList<SendOp> free_send_ops_{64};
  FreeList<Waiter> free_waiters_{64};
  mutable std::mutex mu_;
  std::map<int64_t, int64_t> rejected_by_slot_;
  Status last_rejection_;
};

}  // namespace weft
