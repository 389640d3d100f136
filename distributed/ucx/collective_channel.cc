#include "distributed/ucx/collective_channel.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>

#include <cstddef>

#include "core/siphash.h"
#include "distributed/ucx/wire.h"

namespace weft {
namespace {

constexpr uint32_t kMagic = 0x43544657;  // "WFTC" in little-endian bytes
constexpr uint16_t kVersion = 1;

// The 64-byte head of a collective message (little-endian, as the wire format's).
struct Head {
  uint32_t magic;
  uint16_t version;
  uint8_t message;
  uint8_t dtype;
  uint64_t group_key;
  uint64_t instance_key;
  uint64_t step;
  uint64_t elements;
  uint64_t shape_hash;
  uint32_t src_task;
  uint32_t payload_bytes;
  uint64_t mac;  // SipHash-2-4 of head (this field zero) and payload; 0 when not authenticated
};
static_assert(sizeof(Head) == UcxCollectiveChannel::kHeadBytes);
// The MAC sits where a wire header keeps it, so the wire's sealing and check serve (wire.h).
static_assert(offsetof(Head, mac) == offsetof(WireHeader, reserved1));

// FNV-1a over the dims: two members whose shapes differ but whose element counts agree are told.
uint64_t ShapeHash(const TensorShape& shape) {
  uint64_t h = 1469598103934665603ull;
  auto mix = [&h](uint64_t v) {
    for (int i = 0; i < 8; ++i) {
      h ^= (v >> (8 * i)) & 0xFF;
      h *= 1099511628211ull;
    }
  };
  mix(static_cast<uint64_t>(shape.rank()));
  for (int64_t d : shape.dims()) mix(static_cast<uint64_t>(d));
  return h;
}

}  // namespace

uint64_t CollectiveTag(int src_task, const CollectiveSlot& slot) {
  return kTagClassCollective | (static_cast<uint64_t>(src_task & 0xFFFF) << 40) |
         ((static_cast<uint64_t>(slot.instance_key) & 0xFFFFFF) << 16) |
         ((static_cast<uint64_t>(slot.group_key) & 0xFF) << 8) | (static_cast<uint64_t>(slot.message) & 0xFF);
}

std::string UcxCollectiveChannel::Counters::ToString() const {
  return fmt::format("collective channel: sent {}, received {} ({} held for a later Recv), rejected {} ({} stale, {} "
                     "unauthenticated, {} oversize), {} slots",
                     sent, received, held, rejected, stale, unauthenticated, oversize, slots);
}

struct UcxCollectiveChannel::SendOp {
  UcxCollectiveChannel* channel = nullptr;
  int task = 0;
  Head head{};
  std::string sealed;  // the head as sent (SealMessage writes the MAC into it; capacity reused)
  Tensor value;
  SendDone done;
  ucp_dt_iov_t iov[2];
};

struct UcxCollectiveChannel::Slot {
  UcxCollectiveChannel* channel = nullptr;
  int task = 0;
  CollectiveSlot key;
  uint64_t tag = 0;
  int64_t number = 0;  // the order it was made in: how rejections are counted
  bool kept = false;   // one of the kMaxSlots that stay posted
  uint8_t* buffer = nullptr;
  void* request = nullptr;  // posted
  bool in_post = false, done_in_post = false;
  bool queued = false;  // completed, in done_ until Poll handled it (its buffer is not free)
  ucs_status_t status = UCS_OK;
  size_t length = 0;
  std::vector<Waiter*> waiters;
  std::deque<HeldMessage> held;

  ~Slot() { delete[] buffer; }
};

UcxCollectiveChannel::UcxCollectiveChannel(const UcxTransportOptions& options, int self, UcxWorker* worker,
                                           PeerConnector* connector)
    : options_(options), self_(self), worker_(worker), connector_(connector) {}

UcxCollectiveChannel::~UcxCollectiveChannel() = default;

UcxCollectiveChannel::Waiter* UcxCollectiveChannel::NewWaiter() {
  Waiter* w = free_waiters_.Take();
  return w != nullptr ? w : new Waiter;
}

void UcxCollectiveChannel::Complete(Waiter* w, const Status& status, const Tensor& value) {
  w->done(status, value);
  w->done = nullptr;
  free_waiters_.Give(w);
}

int UcxCollectiveChannel::RemoteTask(std::string_view device) const {
  const int task = options_.cluster.GlobalIndexOfDevice(device);
  return task == self_ ? -1 : task;
}

bool UcxCollectiveChannel::Carries(const CollectiveSlot& slot, size_t bytes) const {
  return bytes <= kMaxPayloadBytes && slot.group_key >= 0 && slot.group_key < 256 && slot.instance_key >= 0 &&
         slot.instance_key < (int64_t{1} << 24) && slot.message >= 0 && slot.message < 256;
}

UcxCollectiveChannel::SendOp* UcxCollectiveChannel::NewSendOp() {
  if (SendOp* op = free_send_ops_.Take()) return op;
  auto* op = new SendOp;
  op->channel = this;
  return op;
}

void UcxCollectiveChannel::RecycleSendOp(SendOp* op) {
  op->value = Tensor();
  op->done = nullptr;
  free_send_ops_.Give(op);
}

void UcxCollectiveChannel::Send(int task, uint64_t step, const CollectiveSlot& slot, const Tensor& value,
                                SendDone done) {
  const size_t bytes = value.bytes();
  if (task < 0 || task >= options_.cluster.NumTasks() || task == self_ || !Carries(slot, bytes) ||
      value.memory_kind() != MemoryKind::kHost) {
    if (done) {
      done(errors::InvalidArgument("collective channel: group {} instance {} message {}: {} to task #{} does not go "
                                   "this way",
                                   slot.group_key, slot.instance_key, slot.message, value.DebugString(), task));
    }
    return;
  }
  SendOp* op = NewSendOp();
  op->task = task;
  op->value = value;
  op->done = std::move(done);
  Head& h = op->head;
  h = Head{};
  h.magic = kMagic;
  h.version = kVersion;
  h.message = static_cast<uint8_t>(slot.message);
  h.dtype = static_cast<uint8_t>(value.dtype());
  h.group_key = static_cast<uint64_t>(slot.group_key);
  h.instance_key = static_cast<uint64_t>(slot.instance_key);
  h.step = step;
  h.elements = static_cast<uint64_t>(value.num_elements());
  h.shape_hash = ShapeHash(value.shape());
  h.src_task = static_cast<uint32_t>(self_);
  h.payload_bytes = static_cast<uint32_t>(bytes);
  worker_->AddDemand(1);  // until the send completes
  if (!worker_->RunHereOrPost([this, op] { PostSend(op); })) {
    worker_->AddDemand(-1);
    SendDone d = std::move(op->done);
    RecycleSendOp(op);
    if (d) d(errors::Cancelled("collective channel: the transport is shutting down"));
  }
}

void UcxCollectiveChannel::PostSend(SendOp* op) {
  auto complete = [this](SendOp* o, const Status& s) {
    worker_->AddDemand(-1);
    if (s.ok()) sent_.fetch_add(1, std::memory_order_relaxed);
    SendDone d = std::move(o->done);
    RecycleSendOp(o);
    if (d) d(s);
  };
  if (!connector_->Settled(op->task)) {
    connector_->RunWhenSettled(op->task, [this, op] { PostSend(op); });
    return;
  }
  UcxEndpoint* ep = connector_->UsableDataEndpoint(op->task);
  if (ep == nullptr || shutting_down_) {
    const Status failed = connector_->PeerStatus(op->task);
    complete(op, !failed.ok() ? failed : errors::Cancelled("collective channel: the transport is shutting down"));
    return;
  }
  const size_t bytes = op->head.payload_bytes;
  op->sealed.assign(reinterpret_cast<const char*>(&op->head), sizeof(Head));
  if (const SipHash24* key = connector_->SendKey(op->task); key != nullptr) {
    SealMessage(&op->sealed, std::string_view(static_cast<const char*>(op->value.raw_data()), bytes), *key);
  }
  op->iov[0] = {op->sealed.data(), sizeof(Head)};
  op->iov[1] = {op->value.raw_data(), bytes};
  ucp_request_param_t param{};
  param.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA | UCP_OP_ATTR_FIELD_DATATYPE;
  param.cb.send = &UcxCollectiveChannel::SendCallback;
  param.user_data = op;
  param.datatype = ucp_dt_make_iov();
  const CollectiveSlot slot{static_cast<int64_t>(op->head.group_key), static_cast<int64_t>(op->head.instance_key),
                            op->head.message};
  ucs_status_ptr_t req = ucp_tag_send_nbx(ep->get(), op->iov, bytes > 0 ? 2 : 1, CollectiveTag(self_, slot), &param);
  if (req == nullptr) {
    complete(op, Status());
  } else if (UCS_PTR_IS_ERR(req)) {
    complete(op, UcxStatus(UCS_PTR_STATUS(req), "sending a collective message to " + connector_->PeerName(op->task)));
  }
}

void UcxCollectiveChannel::SendCallback(void* request, ucs_status_t status, void* user_data) {
  auto* op = static_cast<SendOp*>(user_data);
  UcxCollectiveChannel* self = op->channel;
  ucp_request_free(request);
  self->worker_->AddDemand(-1);
  const Status s = status == UCS_OK ? Status()
                                    : UcxStatus(status, "sending a collective message to " +
                                                            self->connector_->PeerName(op->task));
  if (s.ok()) self->sent_.fetch_add(1, std::memory_order_relaxed);
  SendDone d = std::move(op->done);
  self->RecycleSendOp(op);
  if (d) d(s);
}

void UcxCollectiveChannel::Recv(int task, uint64_t step, const CollectiveSlot& slot, DType dtype,
                                const TensorShape& shape, RecvDone done) {
  if (task < 0 || task >= options_.cluster.NumTasks() || task == self_ || !Carries(slot, 0)) {
    done(errors::InvalidArgument("collective channel: group {} instance {} message {} from task #{}: not this way",
                                 slot.group_key, slot.instance_key, slot.message, task), Tensor());
    return;
  }
  Waiter* w = NewWaiter();
  w->task = task;
  w->slot = slot;
  w->step = step;
  w->dtype = dtype;
  w->shape = shape;  // (a reused waiter's dims keep their capacity)
  w->done = std::move(done);
  worker_->AddDemand(1);  // until it completes
  const bool posted = worker_->RunHereOrPost([this, w] {
    if (shutting_down_ || Forgotten(w->step)) {
      worker_->AddDemand(-1);
      Complete(w, errors::Cancelled("collective channel: step {} is over (or the transport is shutting down)", w->step));
      return;
    }
    if (Status peer = connector_->PeerStatus(w->task); !peer.ok()) {
      worker_->AddDemand(-1);
      Complete(w, peer);
      return;
    }
    connector_->EnsureConnected(w->task);  // so that its failure is noticed while we wait
    Slot* s = FindOrMakeSlot(w->task, w->slot);
    // A message that came early for this step: delivered now.
    for (auto it = s->held.begin(); it != s->held.end(); ++it) {
      if (it->step != w->step) continue;
      HeldMessage m = std::move(*it);
      s->held.erase(it);
      worker_->AddDemand(-1);
      Deliver(*s, w, m.bytes.data());
      if (free_held_.size() < kHeldPerSlot) free_held_.push_back(std::move(m.bytes));
      PostSlot(s, worker_->get());  // when it was held back while full
      MaybeDropSlot(s);
      return;
    }
    s->waiters.push_back(w);
    PostSlot(s, worker_->get());
  });
  if (!posted) {
    worker_->AddDemand(-1);
    Complete(w, errors::Cancelled("collective channel: the transport is shutting down"));
  }
}

UcxCollectiveChannel::Slot* UcxCollectiveChannel::FindOrMakeSlot(int task, const CollectiveSlot& key) {
  const uint64_t tag = CollectiveTag(task, key);
  auto it = slots_.find(tag);
  if (it != slots_.end()) return it->second.get();
  auto slot = std::make_unique<Slot>();
  slot->channel = this;
  slot->task = task;
  slot->key = key;
  slot->tag = tag;
  slot->number = slots_made_.fetch_add(1, std::memory_order_relaxed);
  slot->kept = kept_slots_ < kMaxSlots;
  if (slot->kept) ++kept_slots_;
  slot->buffer = new uint8_t[kSlotBytes];
  Slot* s = slot.get();
  slots_.emplace(tag, std::move(slot));
  return s;
}

void UcxCollectiveChannel::PostSlot(Slot* s, ucp_worker_h worker) {
  if (shutting_down_ || s->request != nullptr || s->in_post || s->queued) return;  // posted, or being handled
  if (s->held.size() >= kHeldPerSlot) return;  // full: UCX holds the rest meanwhile
  ucp_request_param_t param{};
  param.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA | UCP_OP_ATTR_FLAG_NO_IMM_CMPL;
  param.cb.recv = &UcxCollectiveChannel::RecvCallback;
  param.user_data = s;
  s->in_post = true;
  s->done_in_post = false;
  ucs_status_ptr_t req = ucp_tag_recv_nbx(worker, s->buffer, kSlotBytes, s->tag, ~uint64_t{0}, &param);
  s->in_post = false;
  if (s->done_in_post) {  // matched a message that was waiting: the callback recorded the outcome
    s->queued = true;
    done_.push_back(s);
  } else if (req == nullptr || UCS_PTR_IS_ERR(req)) {
    std::lock_guard<std::mutex> l(mu_);
    last_rejection_ = UcxStatus(req == nullptr ? UCS_ERR_NO_PROGRESS : UCS_PTR_STATUS(req),
                                "posting a collective slot");
  } else {
    s->request = req;
    ++posted_;
  }
}

void UcxCollectiveChannel::RecvCallback(void* request, ucs_status_t status, const ucp_tag_recv_info_t* info,
                                        void* user_data) {
  auto* s = static_cast<Slot*>(user_data);
  s->status = status;
  s->length = info != nullptr ? info->length : 0;
  ucp_request_free(request);
  if (s->in_post) {
    s->done_in_post = true;
    return;
  }
  s->request = nullptr;
  s->queued = true;
  s->channel->posted_--;
  s->channel->done_.push_back(s);
}

void UcxCollectiveChannel::Poll(ucp_worker_h worker) {
  while (!done_.empty()) {
    std::vector<Slot*> batch;
    batch.swap(done_);
    for (Slot* s : batch) {
      HandleSlot(s);
      s->queued = false;
      if (shutting_down_) continue;
      if (s->kept || !s->waiters.empty()) PostSlot(s, worker);
      MaybeDropSlot(s);
    }
  }
}

void UcxCollectiveChannel::MaybeDropSlot(Slot* s) {
  if (s->kept || s->request != nullptr || s->in_post || s->queued || !s->waiters.empty() || !s->held.empty()) return;
  slots_.erase(s->tag);
}

std::string UcxCollectiveChannel::Describe(const Slot& s) const {
  return fmt::format("collective channel slot {} (group {} instance {} message {} from {})", s.number, s.key.group_key,
                     s.key.instance_key, s.key.message, connector_->PeerName(s.task));
}

Status UcxCollectiveChannel::Check(const Slot& s, const uint8_t* bytes, size_t length, uint64_t* step) {
  if (length < sizeof(Head)) {
    return errors::DataLoss("{}: a message of {} bytes, shorter than the {}-byte head", Describe(s), length,
                            sizeof(Head));
  }
  Head h;
  std::memcpy(&h, bytes, sizeof(h));
  if (!connector_->key().insecure() && options_.authenticate_messages) {
    const SipHash24* key = connector_->RecvKey(s.task);
    const Status sealed = key != nullptr ? CheckMessageSeal(bytes, length, *key)
                                         : errors::Unauthenticated("no authenticated connection to the sender");
    if (!sealed.ok()) {
      unauthenticated_.fetch_add(1, std::memory_order_relaxed);
      return errors::Unauthenticated("{}: {} ({} bytes dropped)", Describe(s), sealed.message(), length);
    }
  }
  if (h.magic != kMagic || h.version != kVersion) {
    return errors::DataLoss("{}: bad magic {:#x} or version {}", Describe(s), h.magic, h.version);
  }
  if (h.src_task != static_cast<uint32_t>(s.task) || h.group_key != static_cast<uint64_t>(s.key.group_key) ||
      h.instance_key != static_cast<uint64_t>(s.key.instance_key) || h.message != s.key.message) {
    return errors::DataLoss("{}: the head names task #{} group {} instance {} message {}", Describe(s), h.src_task,
                            h.group_key, h.instance_key, h.message);
  }
  if (h.dtype == 0 || h.dtype > static_cast<uint8_t>(DType::kBFloat16) ||
      h.payload_bytes != length - sizeof(Head) ||
      h.elements * DTypeSize(static_cast<DType>(h.dtype)) != h.payload_bytes) {
    return errors::DataLoss("{}: dtype {} x {} elements against a payload of {} bytes ({} received)", Describe(s),
                            h.dtype, h.elements, h.payload_bytes, length - sizeof(Head));
  }
  *step = h.step;
  return Status();
}

void UcxCollectiveChannel::Reject(Slot* s, const Status& status) {
  rejected_.fetch_add(1, std::memory_order_relaxed);
  std::lock_guard<std::mutex> l(mu_);
  rejected_by_slot_[s->number]++;
  last_rejection_ = status;
}

void UcxCollectiveChannel::HandleSlot(Slot* s) {
  if (s->status == UCS_ERR_CANCELED) return;
  if (s->status == UCS_ERR_MESSAGE_TRUNCATED) {
    // Longer than any message of this channel: its bytes are not kept, so its step is not known;
    // the earliest Recv of the slot fails (its collective, and with it the step, aborts).
    oversize_.fetch_add(1, std::memory_order_relaxed);
    const Status why = errors::DataLoss("{}: a message longer than the slot's {} bytes (at most {} of payload)",
                                        Describe(*s), kSlotBytes, kMaxPayloadBytes);
    Reject(s, why);
    if (!s->waiters.empty()) {
      Waiter* w = s->waiters.front();
      s->waiters.erase(s->waiters.begin());
      worker_->AddDemand(-1);
      Complete(w, why);
    }
    return;
  }
  if (s->status != UCS_OK) {
    Reject(s, UcxStatus(s->status, Describe(*s)));
    return;
  }
  uint64_t step = 0;
  if (Status ok = Check(*s, s->buffer, s->length, &step); !ok.ok()) {
    Reject(s, ok);
    return;
  }
  if (Forgotten(step)) {
    stale_.fetch_add(1, std::memory_order_relaxed);
    Reject(s, errors::Aborted("{}: a message for step {}, which is over here (dropped)", Describe(*s), step));
    return;
  }
  received_.fetch_add(1, std::memory_order_relaxed);
  for (auto it = s->waiters.begin(); it != s->waiters.end(); ++it) {
    if ((*it)->step != step) continue;
    Waiter* w = *it;
    s->waiters.erase(it);
    worker_->AddDemand(-1);
    Deliver(*s, w, s->buffer);
    return;
  }
  // Early (the peer is a step ahead): kept until its Recv comes, in a reused buffer.
  held_.fetch_add(1, std::memory_order_relaxed);
  std::vector<uint8_t> bytes;
  if (!free_held_.empty()) {
    bytes = std::move(free_held_.back());
    free_held_.pop_back();
  }
  bytes.assign(s->buffer, s->buffer + s->length);
  s->held.push_back({step, std::move(bytes)});
}

void UcxCollectiveChannel::Deliver(const Slot& s, Waiter* w, const uint8_t* bytes) {
  Head h;
  std::memcpy(&h, bytes, sizeof(h));
  const DType dtype = static_cast<DType>(h.dtype);
  if (dtype != w->dtype || static_cast<int64_t>(h.elements) != w->shape.num_elements() ||
      h.shape_hash != ShapeHash(w->shape)) {
    Complete(w, errors::InvalidArgument("{}: the sender's value is {} with {} elements{}, this member's {} {}: the "
                                   "members' inputs differ",
                                   Describe(s), DTypeName(dtype), h.elements,
                                   static_cast<int64_t>(h.elements) == w->shape.num_elements() ? " of another shape" : "",
                                   DTypeName(w->dtype), w->shape.ToString()));
    return;
  }
  Tensor t(dtype, w->shape);
  if (h.payload_bytes > 0) std::memcpy(t.raw_data(), bytes + sizeof(Head), h.payload_bytes);
  Complete(w, Status(), t);
}

bool UcxCollectiveChannel::Forgotten(uint64_t step) const {
  return (any_forgotten_ && step <= forgotten_floor_) || forgotten_.count(step) > 0;
}

void UcxCollectiveChannel::ForgetStep(uint64_t step) {
  worker_->RunHereOrPost([this, step] {
    forgotten_.insert(step);
    while (forgotten_.size() > kForgottenKept) {
      forgotten_floor_ = std::max(forgotten_floor_, *forgotten_.begin());
      any_forgotten_ = true;
      forgotten_.erase(forgotten_.begin());
    }
    // Callbacks run after the walk: they may make slots (a collective's next Recv).
    std::vector<Slot*> touched;
    std::vector<std::pair<Waiter*, Status>> cancelled;
    for (auto& [tag, slot] : slots_) {
      Slot* s = slot.get();
      for (auto it = s->held.begin(); it != s->held.end();) {
        if (it->step == step) {
          stale_.fetch_add(1, std::memory_order_relaxed);
          Reject(s, errors::Aborted("{}: a message for step {}, which is over here (dropped)", Describe(*s), step));
          it = s->held.erase(it);
        } else {
          ++it;
        }
      }
      for (auto it = s->waiters.begin(); it != s->waiters.end();) {
        if ((*it)->step == step) {
          cancelled.emplace_back(*it, errors::Cancelled("{}: step {} is over", Describe(*s), step));
          it = s->waiters.erase(it);
        } else {
          ++it;
        }
      }
      touched.push_back(s);
    }
    for (Slot* s : touched) {
      if (s->kept) PostSlot(s, worker_->get());
      MaybeDropSlot(s);
    }
    for (auto& [w, why] : cancelled) {
      worker_->AddDemand(-1);
      Complete(w, why);
    }
  });
}

void UcxCollectiveChannel::PeerFailed(int task, const Status& status) {
  std::vector<Waiter*> failed;  // called after the walk (they may make slots)
  for (auto& [tag, slot] : slots_) {
    if (slot->task != task) continue;
    failed.insert(failed.end(), slot->waiters.begin(), slot->waiters.end());
    slot->waiters.clear();
  }
  for (Waiter* w : failed) {
    worker_->AddDemand(-1);
    Complete(w, status);
  }
}

void UcxCollectiveChannel::Shutdown() {
  shutting_down_ = true;
  std::vector<Waiter*> cancelled;
  for (auto& [tag, slot] : slots_) {
    cancelled.insert(cancelled.end(), slot->waiters.begin(), slot->waiters.end());
    slot->waiters.clear();
  }
  for (Waiter* w : cancelled) {  // (Recvs they make now fail at once: shutting down)
    worker_->AddDemand(-1);
    Complete(w, errors::Cancelled("collective channel: the transport is shutting down"));
  }
  for (auto& [tag, slot] : slots_) {
    if (slot->request != nullptr) ucp_request_cancel(worker_->get(), slot->request);
  }
  worker_->ProgressUntil([this] { return posted_ == 0; }, std::chrono::milliseconds(1000));
  done_.clear();
  // Slots UCX still holds (a cancel that did not complete) are left to it rather than freed under it.
  for (auto it = slots_.begin(); it != slots_.end();) {
    if (it->second->request != nullptr) {
      (void)it->second.release();
      it = slots_.erase(it);
    } else {
      ++it;
    }
  }
  slots_.clear();
}

UcxCollectiveChannel::Counters UcxCollectiveChannel::counters() const {
  Counters c;
  c.sent = sent_.load();
  c.received = received_.load();
  c.held = held_.load();
  c.rejected = rejected_.load();
  c.stale = stale_.load();
  c.unauthenticated = unauthenticated_.load();
  c.oversize = oversize_.load();
  c.slots = slots_made_.load();
  return c;
}

std::map<int64_t, int64_t> UcxCollectiveChannel::rejected_by_slot() const {
  std::lock_guard<std::mutex> l(mu_);
  return rejected_by_slot_;
}

Status UcxCollectiveChannel::last_rejection() const {
  std::lock_guard<std::mutex> l(mu_);
  return last_rejection_;
}

}  // namespace weft
