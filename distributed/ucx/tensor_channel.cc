// The sending half of TensorChannel (and its set-up, shutdown and counters). Receiving:
// tensor_channel_recv.cc; device tensors: tensor_channel_staging.cc.
#include "distributed/ucx/tensor_channel.h"

#include <thread>

#include "distributed/ucx/tensor_channel_internal.h"

namespace weft {
namespace {
using Clock = std::chrono::steady_clock;
}  // namespace

std::string PeerCounters::ToString() const {
  return fmt::format("sent {} msgs / {} B ({} eager, {} rendezvous, {} staged from device), received {} msgs / {} B "
                     "({} eager, {} rendezvous, {} of them in place, {} headers through receive slots), {} rejected, "
                     "Recvs waited {} us", messages_sent, bytes_sent, eager_sent, rendezvous_sent, staged_sent,
                     messages_received, bytes_received, eager_received, rendezvous_received, received_in_place,
                     received_in_slot, rejected, wait_us);
}

TensorChannel::TensorChannel(const UcxTransportOptions& options, int self, ucp_context_h context, UcxWorker* worker,
                             std::shared_ptr<UcxMemRegistry> registry, PeerConnector* connector,
                             UcxMessageHandler on_message, MeasureHandler on_measure)
    : options_(options),
      self_(self),
      worker_(worker),
      registry_(std::move(registry)),
      connector_(connector),
      on_message_(std::move(on_message)),
      on_measure_(std::move(on_measure)) {
  const size_t num_tasks = static_cast<size_t>(options_.cluster.NumTasks());
  peers_.assign(num_tasks, PeerState{1, options_.eager_threshold});
  stats_ = std::make_unique<PeerStats[]>(num_tasks);
  if (options_.device_copier) {
    WEFT_REQUIRE(options_.staging_chunk_bytes >= kWireMinChunkBytes && options_.staging_chunk_bytes <= 0xFFFFFFFFu &&
                     options_.staging_depth > 0,
                 "UcxTransport: staging_chunk_bytes {} (at least {}, below 4 GiB) and staging_depth {} (at least 1)",
                 options_.staging_chunk_bytes, kWireMinChunkBytes, options_.staging_depth);
    staging_ = std::make_shared<StagingBuffers>(options_.device_copier, registry_, options_.staging_chunk_bytes);
  }
  device_path_ = ChooseDevicePath(context, options_.device_copier != nullptr);
  recv_pool_ = std::make_shared<RecvBufferPool>(options_.recv_pool_bytes, registry_);
  small_pool_ = std::make_unique<SmallTensorPool>();
  static const ucp_generic_dt_ops_t kPrefixOps = {&PrefixStartPack, &PrefixStartUnpack, &PrefixPackedSize,
                                                  &PrefixPack,      &PrefixUnpack,      &PrefixFinish};
  ThrowIfError(UcxStatus(ucp_dt_create_generic(&kPrefixOps, this, &prefix_datatype_),
                         "creating the datatype for oversize messages"));
}

TensorChannel::~TensorChannel() {
  if (prefix_datatype_ != 0) ucp_dt_destroy(prefix_datatype_);
  for (RecvOp* op : free_header_ops_) delete op;
}

TensorChannel::SendOp* TensorChannel::NewSendOp() {
  if (SendOp* op = free_send_ops_.Take()) return op;
  auto* op = new SendOp;
  op->channel = this;
  return op;
}

void TensorChannel::RecycleSendOp(SendOp* op) {
  // Back to a fresh op's state; the strings keep their capacity unless a long key grew them.
  op->value = Tensor();
  op->done = nullptr;
  op->status = Status();
  op->pending = 0;
  op->kind = WireKind::kTensor;
  op->step_id = 0;
  op->is_dead = false;
  op->protocol = Protocol::kAuto;
  op->head.clear();
  op->key.clear();
  if (op->head.capacity() + op->key.capacity() <= 4096) {
    free_send_ops_.Give(op);
    return;
  }
  delete op;
}

void TensorChannel::WaitForStagedSends() const {
  const auto deadline = Clock::now() + std::chrono::seconds(5);
  while (staged_in_flight_ > 0 && Clock::now() < deadline) std::this_thread::sleep_for(std::chrono::milliseconds(1));
}

void TensorChannel::Shutdown() {
  shutting_down_ = true;
  const std::set<RecvOp*> in_flight = recvs_in_flight_;  // cancelling may complete (and erase) at once
  for (RecvOp* op : in_flight) {
    if (recvs_in_flight_.count(op) && op->request != nullptr) ucp_request_cancel(op->worker, op->request);
  }
  for (RecvOp* op : slot_ops_) {
    if (op->request != nullptr) ucp_request_cancel(op->worker, op->request);
  }
  worker_->ProgressUntil([this] { return recvs_in_flight_.empty() && slots_posted_ == 0; },
                         std::chrono::milliseconds(1000));
  for (uint8_t* b : header_buffers_) CpuAllocator()->Deallocate(b, HeaderBufferBytes());
  header_buffers_.clear();
  // Slots UCX still holds (a cancel that did not complete) are left to it rather than freed under it.
  for (RecvOp* op : slot_ops_) {
    if (op->request == nullptr) {
      op->FreeBuffer();
      delete op;
    }
  }
  slot_ops_.clear();
  free_slots_.clear();
  slot_done_.clear();
}

bool TensorChannel::WaitForSends(std::chrono::milliseconds timeout) const {
  const auto deadline = Clock::now() + timeout;
  while (sends_in_flight_.load() > 0) {
    if (Clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  return true;
}

void TensorChannel::SetControlHandler(UcxControlHandler on_control) {
  std::lock_guard<std::mutex> l(mu_);
  on_control_ = std::move(on_control);
}

void TensorChannel::SendCallback(void* request, ucs_status_t status, void* user_data) {
  auto* op = static_cast<SendOp*>(user_data);
  op->Complete(status == UCS_OK ? Status()
                                : UcxStatus(status, "sending to " + op->channel->connector_->PeerName(op->task)));
  ucp_request_free(request);
}

void TensorChannel::PostSend(ucp_ep_h ep, SendOp* op, const void* buffer, size_t count, ucp_datatype_t datatype,
                             uint64_t tag, ucp_mem_h memh) {
  ucp_request_param_t param{};
  param.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA | UCP_OP_ATTR_FIELD_DATATYPE;
  param.cb.send = &TensorChannel::SendCallback;
  param.user_data = op;
  param.datatype = datatype;
  if (memh != nullptr) {
    param.op_attr_mask |= UCP_OP_ATTR_FIELD_MEMH;
    param.memh = memh;
  }
  ucs_status_ptr_t req = ucp_tag_send_nbx(ep, buffer, count, tag, &param);
  if (req == nullptr) {
    op->Complete(Status());
  } else if (UCS_PTR_IS_ERR(req)) {
    op->Complete(UcxStatus(UCS_PTR_STATUS(req), "sending to " + connector_->PeerName(op->task)));
  }
}

void TensorChannel::Send(int task, WireKind kind, uint64_t step_id, const std::string& key, const Tensor& value,
                         bool is_dead, Protocol protocol, UcxDoneCallback done) {
  if (task < 0 || task >= options_.cluster.NumTasks() || task == self_) {
    if (done) {
      done(errors::InvalidArgument("sending key '{}': task #{} is {} (the cluster has {} tasks; this is #{})", key, task,
                                   task == self_ ? "this task" : "not in the cluster", options_.cluster.NumTasks(),
                                   self_));
    }
    return;
  }
  SendOp* op = NewSendOp();
  op->task = task;
  op->value = value;
  op->done = std::move(done);
  op->kind = kind;
  op->step_id = step_id;
  op->key.assign(key);
  op->is_dead = is_dead;
  op->protocol = protocol;
  worker_->AddDemand(1);  // until the send completes (SendOp::Complete)
  sends_in_flight_++;
  // From the progress thread: at once (or right after the UCX callback we are in); elsewhere:
  // queued, or at once while nobody drives the worker (UcxWorker::RunHereOrPost).
  const bool posted = worker_->RunHereOrPost([this, op] { StartSend(op); });
  if (!posted) {
    op->pending = 1;
    op->Complete(errors::Cancelled("sending key '{}' to {}: the transport is shutting down", key,
                                   connector_->PeerName(task)));
  }
}

void TensorChannel::StartSend(SendOp* op) {
  if (connector_->Settled(op->task)) {
    PostTensor(op);
    return;
  }
  connector_->RunWhenSettled(op->task, [this, op] { PostTensor(op); });
}

void TensorChannel::PostTensor(SendOp* op) {
  const int task = op->task;
  UcxEndpoint* data_ep = connector_->UsableDataEndpoint(task);
  if (data_ep == nullptr || shutting_down_) {
    const Status failed = connector_->PeerStatus(task);
    op->pending = 1;
    op->Complete(!failed.ok() ? failed : errors::Cancelled("the transport is shutting down"));
    return;
  }
  PeerState& peer = peers_[task];
  const size_t bytes = op->is_dead ? 0 : op->value.bytes();
  // Device memory without CUDA-aware UCX: staged through host bounce buffers, in chunks.
  const bool staged = bytes > 0 && op->value.memory_kind() == MemoryKind::kDevice;
  if (staged && device_path_ == DevicePath::kNone) {
    op->pending = 1;
    op->Complete(errors::Unimplemented("{} is in device memory, and {}", op->value.DebugString(),
                                       DevicePathName(device_path_)));
    return;
  }
  const bool chunked = staged && device_path_ == DevicePath::kStaged;
  const SipHash24* seal = connector_->SendKey(task);
  // A sealed eager message's MAC covers its payload, which the CPU must read: device memory
  // (CUDA-aware UCX) goes by rendezvous then.
  const bool eager = !chunked && !(seal != nullptr && staged) &&
                     (op->protocol == Protocol::kAuto ? bytes <= peer.eager_threshold : op->protocol == Protocol::kEager);
  const size_t num_chunks = chunked ? ChunkPlan{bytes, staging_->bytes()}.num_chunks() : 1;
  const uint64_t seq = eager ? 0 : peer.next_seq;
  if (!eager) peer.next_seq += num_chunks;
  try {
    EncodeTensorHeaderInto(&op->head, self_, op->step_id, op->key, op->value, op->is_dead, eager, seq, op->kind,
                           chunked ? static_cast<uint32_t>(staging_->bytes()) : 0);
    if (seal != nullptr) {
      SealMessage(&op->head,
                  eager && bytes > 0 ? std::string_view(static_cast<const char*>(op->value.raw_data()), bytes) : "",
                  *seal);
    }
  } catch (const Error& e) {
    op->pending = 1;
    op->Complete(e.status());
    return;
  }
  if (op->step_id != kMeasureStep) CountSent(task, bytes, eager, chunked);
  ucp_ep_h ep = data_ep->get();
  // Tensor messages that fit a receive slot go to the slots the peer posted ahead: small eager ones
  // and rendezvous headers. (Control messages stay in class 1, in the order they were sent.)
  const bool slots = options_.receive_slots && op->kind == WireKind::kTensor;
  const uint64_t head_tag = slots && op->head.size() <= kSlotBytes ? SmallTag(self_) : HeaderTag(self_);
  if (chunked) {
    op->pending = 3;  // header, the staged chunks, and this function
    PostSend(ep, op, op->head.data(), op->head.size(), ucp_dt_make_contig(1), head_tag);
    SendStaged(task, op, seq, num_chunks);
    op->Complete(Status());
  } else if (eager) {
    op->pending = 1;
    op->iov[0] = {op->head.data(), op->head.size()};
    op->iov[1] = {op->value.raw_data(), bytes};
    const bool slot = slots && bytes <= kEagerCopyBytes && op->head.size() + bytes <= kSlotBytes;
    PostSend(ep, op, op->iov, bytes > 0 ? 2 : 1, ucp_dt_make_iov(), slot ? SmallTag(self_) : HeaderTag(self_));
  } else {
    op->pending = 3;  // header, data, and this function (so an immediate completion cannot free op early)
    PostSend(ep, op, op->head.data(), op->head.size(), ucp_dt_make_contig(1), head_tag);
    // A tensor in a chunk we registered (one received here, sent on): its handle; else UCX's rcache.
    PostSend(ep, op, op->value.raw_data(), bytes, ucp_dt_make_contig(1), DataTag(self_, seq),
             registry_->Find(op->value.raw_data(), bytes));
    op->Complete(Status());
  }
}

void TensorChannel::CountSent(int task, size_t bytes, bool eager, bool staged) {
  PeerStats& c = stats_[task];
  c.messages_sent.fetch_add(1, std::memory_order_relaxed);
  if (staged) c.staged_sent.fetch_add(1, std::memory_order_relaxed);
  c.bytes_sent.fetch_add(static_cast<int64_t>(bytes), std::memory_order_relaxed);
  (eager ? c.eager_sent : c.rendezvous_sent).fetch_add(1, std::memory_order_relaxed);
}

PeerCounters TensorChannel::Counters(int task) const {
  PeerCounters c;
  if (task >= 0 && task < options_.cluster.NumTasks()) {
    const PeerStats& s = stats_[task];
    c.messages_sent = s.messages_sent;
    c.bytes_sent = s.bytes_sent;
    c.eager_sent = s.eager_sent;
    c.rendezvous_sent = s.rendezvous_sent;
    c.staged_sent = s.staged_sent;
    c.messages_received = s.messages_received;
    c.bytes_received = s.bytes_received;
    c.eager_received = s.eager_received;
    c.rendezvous_received = s.rendezvous_received;
    c.received_in_place = s.received_in_place;
    c.received_in_slot = s.received_in_slot;
    c.wait_us = s.wait_us;
  }
  std::lock_guard<std::mutex> l(mu_);
  auto it = rejected_.find(task);
  if (it != rejected_.end()) c.rejected = it->second;
  it = unauthenticated_.find(task);
  if (it != unauthenticated_.end()) c.unauthenticated = it->second;
  return c;
}

void TensorChannel::AddWaitTime(int task, int64_t us) {
  if (task >= 0 && task < options_.cluster.NumTasks()) stats_[task].wait_us.fetch_add(us, std::memory_order_relaxed);
}

Status TensorChannel::last_rejection() const {
  std::lock_guard<std::mutex> l(mu_);
  return last_rejection_;
}

int64_t TensorChannel::num_rejected() const {
  std::lock_guard<std::mutex> l(mu_);
  return num_rejected_;
}

}  // namespace weft
