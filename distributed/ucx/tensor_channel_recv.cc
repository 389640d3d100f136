// The receiving half of TensorChannel: probing for headers, eager tensors made over their receive
// buffer, rendezvous data received into a tensor allocated first, and rejecting bad messages.
#include <cstring>

#include "distributed/ucx/tensor_channel_internal.h"

namespace weft {
namespace {
using Clock = std::chrono::steady_clock;
}  // namespace

void TensorChannel::RecvCallback(void* request, ucs_status_t status, const ucp_tag_recv_info_t* info, void* user_data) {
  auto* op = static_cast<RecvOp*>(user_data);
  const size_t length = info != nullptr ? info->length : 0;
  const uint64_t sender_tag = info != nullptr ? info->sender_tag : ~uint64_t{0};  // (info lives in the request)
  op->request = nullptr;
  ucp_request_free(request);
  if (op->slot) {  // queued for HandleSlots: no handling inside UCX's callback
    op->src_task = info != nullptr ? TagSourceTask(sender_tag) : -1;
    op->post_status = status;
    op->post_length = length;
    if (op->in_post) {
      op->done_in_post = true;
    } else {
      op->channel->slots_posted_--;
      op->channel->slot_done_.push_back(op);
    }
    return;
  }
  if (op->in_post) {
    op->done_in_post = true;
    op->post_status = status;
    op->post_length = length;
    return;
  }
  if (op->is_header) {
    op->channel->OnHeaderReceived(op, status, length);
  } else {
    op->channel->OnDataReceived(op, status, length);
  }
}

size_t TensorChannel::HeaderBufferBytes() const {
  // No valid header message is longer than this: a longer one does not fit the receive buffer,
  // which UCX reports as truncated, and is rejected without allocating what it claims.
  return kWireHeaderBytes + 8 * kWireMaxRank + kWireMaxKeyBytes + 64 +
         std::max<size_t>(options_.eager_threshold, worker_->address().size());
}

// Runs after every round of progress (a poll hook), outside UCX's callbacks: headers waiting in
// UCX's unexpected queue are received into a reused buffer (no allocation per message) and handled
// here. (Receives posted ahead would complete inside UCX's transports, and UCX 1.13's tcp transport
// crashed when our handling re-entered it from there.)
void TensorChannel::ProbeHeaders(ucp_worker_h worker) {
  if (!slot_done_.empty() || slots_posted_ < kSlotsPosted) HandleSlots(worker);
  // Each connected peer's headers by their exact tag: a hash lookup in UCX's unexpected queue. A
  // masked probe walks that queue from its head past every rendezvous request (RTS) whose receive
  // is not posted yet, those the window holds back, and did so on every round. Every
  // kWildcardProbeRounds-th call probes the whole class too, for tags that name no connected peer
  // (rejected when received).
  const int num_tasks = options_.cluster.NumTasks();
  for (int task = 0; task < num_tasks; ++task) {
    if (task == self_ || connector_->DataEndpoint(task) == nullptr) continue;
    while (ProbeOne(worker, HeaderTag(task), ~uint64_t{0})) {
    }
  }
  if (++probe_calls_ % kWildcardProbeRounds == 0) {
    while (ProbeOne(worker, kTagClassHeader, kTagClassMask)) {
    }
  }
}

bool TensorChannel::ProbeOne(ucp_worker_h worker, uint64_t tag, uint64_t mask) {
  ucp_tag_recv_info_t info{};
  ucp_tag_message_h msg = ucp_tag_probe_nb(worker, tag, mask, 1, &info);
  if (msg == nullptr) return false;
  RecvOp* op = NewHeaderOp(TagSourceTask(info.sender_tag), worker);
  op->buffer_bytes = HeaderBufferBytes();
  if (!header_buffers_.empty()) {
    op->buffer = header_buffers_.back();
    header_buffers_.pop_back();
  } else {
    op->buffer = static_cast<uint8_t*>(CpuAllocator()->Allocate(op->buffer_bytes));
  }
  ucp_request_param_t param{};
  param.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA;
  param.cb.recv = &TensorChannel::RecvCallback;
  param.user_data = op;
  void* target = op->buffer;
  if (info.length > op->buffer_bytes) {
    // Longer than any valid message: its prefix is kept (PrefixUnpack) and the rest dropped, so
    // that it is rejected naming its key without allocating what it claims.
    const bool authenticating = !connector_->key().insecure() && options_.authenticate_messages;
    const int src = op->src_task;
    const SipHash24* key = src >= 0 && src < options_.cluster.NumTasks() && src != self_ ? connector_->RecvKey(src)
                                                                                           : nullptr;
    if (authenticating && key != nullptr) op->mac.emplace(*key);
    param.op_attr_mask |= UCP_OP_ATTR_FIELD_DATATYPE;
    param.datatype = prefix_datatype_;
    target = op;
  }
  op->in_post = true;
  ucs_status_ptr_t req = ucp_tag_msg_recv_nbx(worker, target, info.length, msg, &param);
  op->in_post = false;
  if (op->done_in_post) {
    OnHeaderReceived(op, op->post_status, op->post_length);
  } else if (req == nullptr) {
    OnHeaderReceived(op, UCS_OK, info.length);
  } else if (UCS_PTR_IS_ERR(req)) {
    OnHeaderReceived(op, UCS_PTR_STATUS(req), 0);
  } else {
    op->request = req;
    recvs_in_flight_.insert(op);
  }
  return true;
}

void TensorChannel::PostSlots(ucp_worker_h worker) {
  while (!shutting_down_ && slots_posted_ < kSlotsPosted) {
    RecvOp* op;
    if (!free_slots_.empty()) {
      op = free_slots_.back();
      free_slots_.pop_back();
    } else if (slot_ops_.size() < kSlotsPosted) {
      op = new RecvOp{this, -1, true};
      op->slot = true;
      op->buffer_bytes = kSlotBytes;
      op->buffer = static_cast<uint8_t*>(CpuAllocator()->Allocate(kSlotBytes));
      slot_ops_.reserve(kSlotsPosted);
      slot_done_.reserve(kSlotsPosted);
      free_slots_.reserve(kSlotsPosted);
      slot_ops_.push_back(op);
    } else {
      return;  // the others are being handled; they are posted again after that
    }
    // No immediate completion: the callback reports every outcome with the sender's tag.
    ucp_request_param_t param{};
    param.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA | UCP_OP_ATTR_FLAG_NO_IMM_CMPL;
    param.cb.recv = &TensorChannel::RecvCallback;
    param.user_data = op;
    op->worker = worker;
    op->in_post = true;
    op->done_in_post = false;
    ucs_status_ptr_t req = ucp_tag_recv_nbx(worker, op->buffer, kSlotBytes, kTagClassSmall, kTagClassMask, &param);
    op->in_post = false;
    if (op->done_in_post) {  // matched a message that was waiting: the callback recorded the outcome
      slot_done_.push_back(op);
    } else if (req == nullptr || UCS_PTR_IS_ERR(req)) {
      free_slots_.push_back(op);
      std::lock_guard<std::mutex> l(mu_);
      last_rejection_ = UcxStatus(req == nullptr ? UCS_ERR_NO_PROGRESS : UCS_PTR_STATUS(req), "posting a receive slot");
      return;  // tried again on the next round
    } else {
      op->request = req;
      slots_posted_++;
    }
  }
}

void TensorChannel::HandleSlots(ucp_worker_h worker) {
  for (;;) {
    // By index: a handler that progresses the worker may queue more.
    for (size_t i = 0; i < slot_done_.size(); ++i) {
      RecvOp* op = slot_done_[i];
      OnHeaderReceived(op, op->post_status, op->post_length);  // back to free_slots_
    }
    slot_done_.clear();
    if (shutting_down_) return;
    PostSlots(worker);
    if (slot_done_.empty()) return;
  }
}

TensorChannel::RecvOp* TensorChannel::NewHeaderOp(int src_task, ucp_worker_h worker) {
  RecvOp* op;
  if (!free_header_ops_.empty()) {
    op = free_header_ops_.back();
    free_header_ops_.pop_back();
  } else {
    op = new RecvOp{this, 0, true};
  }
  op->src_task = src_task;
  op->worker = worker;
  return op;
}

void TensorChannel::RecycleHeaderOp(RecvOp* op) {
  if (op->slot) {  // keeps its buffer: posted again by PostSlots
    op->claimed_bytes = 0;
    op->mac.reset();
    free_slots_.push_back(op);
    return;
  }
  op->FreeBuffer();  // (RecycleHeaderBuffer kept it when it could)
  if (free_header_ops_.size() >= kHeaderOpsKept || op->message.key.capacity() > 4096) {
    delete op;
    return;
  }
  op->request = nullptr;
  op->in_post = false;
  op->done_in_post = false;
  op->claimed_bytes = 0;
  op->mac.reset();
  op->post_status = UCS_OK;
  op->post_length = 0;
  free_header_ops_.push_back(op);
}

void TensorChannel::RecycleHeaderBuffer(RecvOp* op) {
  if (op->buffer == nullptr || op->slot) return;
  if (header_buffers_.size() < kHeaderBuffersKept && op->buffer_bytes == HeaderBufferBytes()) {
    header_buffers_.push_back(op->buffer);
    op->buffer = nullptr;
  } else {
    op->FreeBuffer();
  }
}

void TensorChannel::Reject(int src_task, const Status& status, const WireMessage* message) {
  Status s = status;
  if (src_task >= 0 && src_task < options_.cluster.NumTasks()) s = s.WithContext("from " + connector_->PeerName(src_task));
  {
    std::lock_guard<std::mutex> l(mu_);
    last_rejection_ = s;
    num_rejected_++;
    rejected_[src_task]++;
  }
  // An intact header names the key: fail that Recv now rather than at its timeout.
  if (message != nullptr && message->header_trusted) {
    Deliver(src_task, message->header.step_id, message->key, s, Tensor(), false,
            static_cast<WireKind>(message->header.kind));
  }
}

void* TensorChannel::PrefixStartPack(void*, const void*, size_t) { return nullptr; }  // receives only
size_t TensorChannel::PrefixPack(void*, size_t, void*, size_t) { return 0; }

void* TensorChannel::PrefixStartUnpack(void*, void* buffer, size_t count) {
  auto* op = static_cast<RecvOp*>(buffer);  // ProbeHeaders passes the op as the "buffer"
  op->claimed_bytes = count;
  return op;
}

size_t TensorChannel::PrefixPackedSize(void* state) { return static_cast<RecvOp*>(state)->claimed_bytes; }

ucs_status_t TensorChannel::PrefixUnpack(void* state, size_t offset, const void* src, size_t length) {
  auto* op = static_cast<RecvOp*>(state);
  // The MAC wants the pieces in order, as one transport delivers them (shared memory, tcp); out of
  // order the message is rejected as unauthenticated instead: dropped and counted all the same.
  if (op->mac) op->mac->Update(offset, static_cast<const uint8_t*>(src), length);
  if (offset < op->buffer_bytes) std::memcpy(op->buffer + offset, src, std::min(length, op->buffer_bytes - offset));
  return UCS_OK;
}

void TensorChannel::PrefixFinish(void*) {}

bool TensorChannel::Authentic(RecvOp* op, size_t length) {
  if (connector_->key().insecure() || !options_.authenticate_messages) return true;
  const SipHash24* key = connector_->RecvKey(op->src_task);
  Status sealed;
  if (key == nullptr || (op->claimed_bytes > 0 && !op->mac)) {
    sealed = errors::Unauthenticated("wire: a message from a task with no authenticated connection to this one");
  } else {
    // An oversize message's MAC was computed as it arrived (PrefixUnpack); others are checked whole.
    sealed = op->claimed_bytes > 0 ? op->mac->Check(op->buffer) : CheckMessageSeal(op->buffer, length, *key);
  }
  if (sealed.ok()) return true;
  {
    std::lock_guard<std::mutex> l(mu_);
    unauthenticated_[op->src_task]++;
  }
  Reject(op->src_task, sealed, nullptr);
  return false;
}

void TensorChannel::RejectOversize(RecvOp* op) {
  // The length check fails; a sound header (CRC) still names the key, whose Recv then fails now.
  WireMessage& m = op->message;
  (void)DecodeMessage(op->buffer, op->buffer_bytes, &m);
  const std::string what = m.header_trusted ? fmt::format(" for key '{}' (step {})", m.key, m.header.step_id) : "";
  Reject(op->src_task,
         errors::DataLoss("wire: a message of {} bytes{} is longer than the {} bytes a header message may have here "
                          "(eager threshold {} B): dropped", op->claimed_bytes, what, op->buffer_bytes,
                          options_.eager_threshold),
         m.header_trusted ? &m : nullptr);
}

void TensorChannel::CountReceived(int src_task, uint64_t step_id, size_t bytes, bool eager) {
  if (step_id == kMeasureStep) return;  // the threshold measurement's traffic is not the user's
  PeerStats& c = stats_[src_task];  // src_task was checked against the cluster
  c.messages_received.fetch_add(1, std::memory_order_relaxed);
  (eager ? c.eager_received : c.rendezvous_received).fetch_add(1, std::memory_order_relaxed);
  c.bytes_received.fetch_add(static_cast<int64_t>(bytes), std::memory_order_relaxed);
}

void TensorChannel::Deliver(int src_task, uint64_t step_id, const std::string& key, const Status& status,
                           const Tensor& value, bool is_dead, WireKind kind) {
  if (shutting_down_) return;
  if (step_id == kMeasureStep) {
    if (status.ok() && on_measure_) on_measure_(src_task, key);
    return;
  }
  if (kind == WireKind::kControlRequest || kind == WireKind::kControlReply) {
    UcxControlHandler handler;
    {
      std::lock_guard<std::mutex> l(mu_);
      handler = on_control_;
    }
    if (handler) handler(src_task, kind, step_id, key, status, value);
    return;
  }
  if (!on_message_) return;
  on_message_(src_task, step_id, key, status, value, is_dead);
}

void TensorChannel::OnHeaderReceived(RecvOp* op, ucs_status_t status, size_t length) {
  recvs_in_flight_.erase(op);
  struct Owned {  // the op goes back to the free list (or is deleted) when this returns
    TensorChannel* t;
    RecvOp* op;
    ~Owned() { t->RecycleHeaderOp(op); }
  } owned{this, op};
  if (shutting_down_ || status == UCS_ERR_CANCELED) {
    if (!op->slot) op->FreeBuffer();  // (slots' buffers go at Shutdown)
    return;
  }
  // The receive buffer goes back to the free list unless a tensor kept it.
  struct Recycle {
    TensorChannel* t;
    RecvOp* op;
    ~Recycle() { t->RecycleHeaderBuffer(op); }
  } recycle{this, op};
  if (op->slot && status == UCS_ERR_MESSAGE_TRUNCATED) {
    // Senders put only messages that fit a slot in this class: this one is not to be trusted, and
    // UCX keeps none of its bytes, so its key is not known.
    Reject(op->src_task, errors::DataLoss("wire: a small-class message longer than the {} bytes of a receive slot "
                                          "(UCX: {}): dropped", kSlotBytes, ucs_status_string(status)), nullptr);
    return;
  }
  if (status != UCS_OK) {
    Reject(op->src_task, UcxStatus(status, fmt::format("receiving a message ({} bytes)", length)), nullptr);
    return;
  }
  if (op->src_task < 0 || op->src_task >= options_.cluster.NumTasks() || op->src_task == self_) {
    Reject(op->src_task, errors::DataLoss("wire: a message tagged with task #{} (the cluster has {} tasks; this is #{})",
                                          op->src_task, options_.cluster.NumTasks(), self_), nullptr);
    return;
  }
  if (!Authentic(op, length)) return;
  if (op->claimed_bytes > 0) {  // longer than any valid message: only its prefix is here
    RejectOversize(op);
    return;
  }
  WireMessage& m = op->message;
  Status s = DecodeMessage(op->buffer, length, &m);
  if (s.ok() && m.header.src_task != op->src_task) {
    s = errors::DataLoss("wire: the header says task {} but the tag says task {}", m.header.src_task, op->src_task);
  }
  if (!s.ok()) {
    Reject(op->src_task, s, &m);
    return;
  }
  const auto kind = static_cast<WireKind>(m.header.kind);
  const uint64_t step = m.header.step_id;
  if (op->slot && step != kMeasureStep) stats_[op->src_task].received_in_slot.fetch_add(1, std::memory_order_relaxed);
  if (m.is_dead || m.eager) {
    Tensor value;
    const size_t n = m.header.payload_bytes;
    if (!m.is_dead && (n <= kEagerCopyBytes || op->slot)) {
      // Small: copied into a buffer of the small-tensor pool, the receive buffer goes back to the
      // receives (a slot's always does: a well-formed sender puts no larger payload in one).
      try {
        value = Tensor::FromBuffer(m.dtype, TensorShape(m.dims),
                                   n <= kEagerCopyBytes ? small_pool_->Get(n) : std::make_shared<Buffer>(CpuAllocator(), n));
      } catch (const Error& e) {
        Reject(op->src_task, e.status(), &m);
        return;
      }
      if (m.header.payload_bytes > 0) std::memcpy(value.raw_data(), m.payload, m.header.payload_bytes);
    } else if (!m.is_dead) {
      uint8_t* base = op->buffer;
      const size_t base_bytes = op->buffer_bytes;
      op->buffer = nullptr;  // the tensor owns it now
      auto buffer = std::make_shared<Buffer>(base + m.header.payload_offset, m.header.payload_bytes, MemoryKind::kHost,
                                             [base, base_bytes] { CpuAllocator()->Deallocate(base, base_bytes); });
      try {
        value = Tensor::FromBuffer(m.dtype, TensorShape(m.dims), std::move(buffer));
      } catch (const Error& e) {
        Reject(op->src_task, e.status(), &m);
        return;
      }
    }
    CountReceived(op->src_task, step, m.header.payload_bytes, true);
    Deliver(op->src_task, step, m.key, Status(), value, m.is_dead, kind);
    return;
  }
  // Rendezvous: the tensor exists before its receive is posted, so UCX writes the bytes straight into it.
  auto data = std::make_unique<RecvOp>(RecvOp{this, op->src_task, false});
  data->step_id = step;
  data->key = m.key;
  data->kind = kind;
  data->dtype = m.dtype;
  data->dims = m.dims;
  data->seq = m.header.seq;
  data->data_bytes = m.header.payload_bytes;
  data->chunk_bytes = m.chunk_bytes;
  if (data->chunk_bytes == 0) data->into = TakeReceiveInto(step, m.key);
  // At most rendezvous_window_bytes are being received at once (one transfer always goes): the rest
  // wait in arrival order, their data parked at the sender (UCX rendezvous moves no bytes until the
  // receive is posted). Bounded receive memory, and buffers come back to the pool to be reused.
  if (rndv_in_flight_ops_ < kRendezvousMinInFlight ||
      rndv_in_flight_bytes_ + data->data_bytes <= options_.rendezvous_window_bytes) {
    StartDataReceive(std::move(data));
  } else {
    rndv_queued_.push_back(std::move(data));
  }
}

void TensorChannel::StartDataReceive(std::unique_ptr<RecvOp> data) {
  data->started = Clock::now();
  try {
    const Tensor& into = data->into;
    if (into.IsInitialized() && into.dtype() == data->dtype && into.bytes() == data->data_bytes &&
        into.memory_kind() == MemoryKind::kHost) {
      data->value = Tensor::FromBuffer(data->dtype, TensorShape(data->dims), into.buffer());
      stats_[data->src_task].received_in_place.fetch_add(1, std::memory_order_relaxed);
    } else {
      data->value = Tensor::FromBuffer(data->dtype, TensorShape(data->dims), recv_pool_->Get(data->data_bytes));
    }
    data->into = Tensor();
  } catch (const Error& e) {
    Deliver(data->src_task, data->step_id, data->key, e.status().WithContext("allocating the received tensor"),
            Tensor(), false, data->kind);
    return;
  }
  rndv_in_flight_ops_++;
  rndv_in_flight_bytes_ += data->data_bytes;
  RecvOp* d = data.release();
  auto* base = static_cast<uint8_t*>(d->value.raw_data());
  if (d->chunk_bytes == 0) {
    PostDataReceive(d, base, d->data_bytes, DataTag(d->src_task, d->seq));
    return;
  }
  // A staged transfer: chunk i under DataTag(src, seq + i), each received in place.
  const ChunkPlan plan{d->data_bytes, d->chunk_bytes};
  d->chunks_left = plan.num_chunks() + 1;  // + 1 while posting: a chunk may complete inside its post
  for (size_t i = 0; i < plan.num_chunks(); ++i) {
    auto* chunk = new RecvOp{this, d->src_task, false};
    chunk->parent = d;
    chunk->expected_bytes = plan.size(i);
    PostDataReceive(chunk, base + plan.offset(i), plan.size(i), DataTag(d->src_task, d->seq + i));
  }
  OnDataReceived(d, UCS_OK, 0);  // drops the posting guard (the parent itself is no receive)
}

void TensorChannel::PostDataReceive(RecvOp* op, void* buffer, size_t bytes, uint64_t tag) {
  ucp_tag_recv_info_t done_info{};
  done_info.length = SIZE_MAX;  // stays so when UCX does not report the length of an immediate completion
  ucp_request_param_t param{};
  param.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA | UCP_OP_ATTR_FIELD_RECV_INFO;
  param.cb.recv = &TensorChannel::RecvCallback;
  param.user_data = op;
  param.recv_info.tag_info = &done_info;
  if (ucp_mem_h memh = registry_->Find(buffer, bytes)) {  // the pool's chunks are registered
    param.op_attr_mask |= UCP_OP_ATTR_FIELD_MEMH;
    param.memh = memh;
  }
  op->in_post = true;
  op->worker = worker_->get();
  ucs_status_ptr_t req = ucp_tag_recv_nbx(op->worker, buffer, bytes, tag, ~uint64_t{0}, &param);
  op->in_post = false;
  if (op->done_in_post) {
    OnDataReceived(op, op->post_status, op->post_length);
  } else if (req == nullptr) {
    OnDataReceived(op, UCS_OK, done_info.length == SIZE_MAX ? bytes : done_info.length);
  } else if (UCS_PTR_IS_ERR(req)) {
    OnDataReceived(op, UCS_PTR_STATUS(req), 0);
  } else {
    op->request = req;
    recvs_in_flight_.insert(op);
  }
}

void TensorChannel::StartQueuedDataReceives() {
  if (starting_queued_) return;  // a receive completing inside its post: the outer loop goes on
  starting_queued_ = true;
  while (!rndv_queued_.empty() && !shutting_down_ &&
         (rndv_in_flight_ops_ < kRendezvousMinInFlight ||
          rndv_in_flight_bytes_ + rndv_queued_.front()->data_bytes <= options_.rendezvous_window_bytes)) {
    std::unique_ptr<RecvOp> next = std::move(rndv_queued_.front());
    rndv_queued_.pop_front();
    StartDataReceive(std::move(next));
  }
  starting_queued_ = false;
}

void TensorChannel::OnDataReceived(RecvOp* op, ucs_status_t status, size_t length) {
  recvs_in_flight_.erase(op);
  const bool is_parent = op->chunk_bytes > 0;  // the chunks' counter, not a receive of its own
  RecvOp* parent = is_parent ? op : op->parent;
  if (parent == nullptr) {  // one receive for the whole tensor
    Status s = UcxStatus(status, fmt::format("receiving the data of key '{}' (step {})", op->key, op->step_id));
    if (s.ok() && length != op->value.bytes()) {
      s = errors::DataLoss("received {} bytes for key '{}' (step {}), expected {} for {}", length, op->key,
                           op->step_id, op->value.bytes(), op->value.DebugString());
    }
    FinishDataReceive(op, s);
    return;
  }
  if (!is_parent) {
    std::unique_ptr<RecvOp> chunk(op);
    Status s = UcxStatus(status, fmt::format("receiving a chunk of key '{}' (step {})", parent->key, parent->step_id));
    if (s.ok() && length != op->expected_bytes) {
      s = errors::DataLoss("received {} bytes for a chunk of key '{}' (step {}), expected {}", length, parent->key,
                           parent->step_id, op->expected_bytes);
    }
    if (!s.ok() && parent->chunk_status.ok()) parent->chunk_status = s;
  }
  if (--parent->chunks_left == 0) FinishDataReceive(parent, parent->chunk_status);
}

void TensorChannel::FinishDataReceive(RecvOp* op, Status s) {
  std::unique_ptr<RecvOp> owned(op);
  const size_t length = op->value.bytes();
  rndv_in_flight_ops_--;
  rndv_in_flight_bytes_ -= op->data_bytes;
  if (shutting_down_ || s.code() == Code::kCancelled) return;
  worker_->RunOrPost([this] { StartQueuedDataReceives(); });  // after progress returns: no UCX re-entry
  if (!s.ok()) {
    Reject(op->src_task, s, nullptr);
    Deliver(op->src_task, op->step_id, op->key, s.WithContext("from " + connector_->PeerName(op->src_task)), Tensor(), false,
            op->kind);
    return;
  }
  CountReceived(op->src_task, op->step_id, length, false);
  Deliver(op->src_task, op->step_id, op->key, Status(), op->value, false, op->kind);
}

void TensorChannel::ReceiveInto(uint64_t step_id, const std::string& key, const Tensor& into) {
  std::lock_guard<std::mutex> l(mu_);
  if (into_.insert_or_assign({step_id, key}, into).second) into_count_++;
}

void TensorChannel::ForgetReceiveInto(uint64_t step_id) {
  if (into_count_.load() == 0) return;
  std::lock_guard<std::mutex> l(mu_);
  auto it = into_.lower_bound({step_id, std::string()});
  while (it != into_.end() && it->first.first == step_id) {
    it = into_.erase(it);
    into_count_--;
  }
}

Tensor TensorChannel::TakeReceiveInto(uint64_t step_id, const std::string& key) {
  if (into_count_.load() == 0) return Tensor();
  std::lock_guard<std::mutex> l(mu_);
  auto it = into_.find({step_id, key});
  if (it == into_.end()) return Tensor();
  Tensor into = std::move(it->second);
  into_.erase(it);
  into_count_--;
  return into;
}

}  // namespace weft
