#include "distributed/ucx/transport.h"
#include "distributed/ucx/transport_internal.h"

#include <arpa/inet.h>
#include <netinet/in.h>

#include <cstring>

namespace weft {
namespace {

using Clock = std::chrono::steady_clock;
constexpr auto kRetryInterval = std::chrono::milliseconds(50);

std::string SockaddrString(const sockaddr_storage& ss) {
  char host[INET6_ADDRSTRLEN] = "?";
  int port = 0;
  if (ss.ss_family == AF_INET) {
    const auto* in = reinterpret_cast<const sockaddr_in*>(&ss);
    inet_ntop(AF_INET, &in->sin_addr, host, sizeof(host));
    port = ntohs(in->sin_port);
  } else if (ss.ss_family == AF_INET6) {
    const auto* in = reinterpret_cast<const sockaddr_in6*>(&ss);
    inet_ntop(AF_INET6, &in->sin6_addr, host, sizeof(host));
    port = ntohs(in->sin6_port);
  }
  return fmt::format("{}:{}", host, port);
}

}  // namespace

std::string PeerCounters::ToString() const {
  return fmt::format("sent {} msgs / {} B ({} eager, {} rendezvous, {} staged from device), received {} msgs / {} B "
                     "({} eager, {} rendezvous, {} of them in place), {} rejected, Recvs waited {} us", messages_sent,
                     bytes_sent, eager_sent, rendezvous_sent, staged_sent, messages_received, bytes_received,
                     eager_received, rendezvous_received, received_in_place, rejected, wait_us);
}

UcxTransport::UcxTransport(UcxTransportOptions options, MessageHandler on_message, PeerFailureHandler on_peer_failure)
    : options_(std::move(options)), on_message_(std::move(on_message)), on_peer_failure_(std::move(on_peer_failure)) {
  self_ = options_.cluster.GlobalIndex(options_.task);
  WEFT_REQUIRE(options_.cluster.NumTasks() <= 0xFFFF, "UcxTransport: {} tasks do not fit the 16-bit tag field",
               options_.cluster.NumTasks());
  for (const TaskId& t : options_.cluster.Tasks()) {
    addresses_[options_.cluster.GlobalIndex(t)] = HostPort::Parse(options_.cluster.Address(t));
  }
  stats_ = std::make_unique<PeerStats[]>(static_cast<size_t>(options_.cluster.NumTasks()));
  UcxContextOptions context_options = options_.context;
  // Data messages (above the eager threshold plus room for a header) go by UCX rendezvous.
  context_options.config.emplace("RNDV_THRESH", std::to_string(options_.eager_threshold + 1024));
  context_ = std::make_unique<UcxContext>(context_options);
  registry_ = std::make_shared<UcxMemRegistry>(context_->get());
  device_path_ = ChooseDevicePath(context_->get(), options_.device_copier != nullptr);
  if (options_.device_copier) {
    WEFT_REQUIRE(options_.staging_chunk_bytes >= kWireMinChunkBytes && options_.staging_chunk_bytes <= 0xFFFFFFFFu &&
                     options_.staging_depth > 0,
                 "UcxTransport: staging_chunk_bytes {} (at least {}, below 4 GiB) and staging_depth {} (at least 1)",
                 options_.staging_chunk_bytes, kWireMinChunkBytes, options_.staging_depth);
    staging_ = std::make_shared<StagingBuffers>(options_.device_copier, registry_, options_.staging_chunk_bytes);
  }
  recv_pool_ = std::make_shared<RecvBufferPool>(options_.recv_pool_bytes, registry_);
  if (options_.worker.name == "ucx") options_.worker.name = "ucx " + options_.task.ToString();
  worker_ = std::make_unique<UcxWorker>(context_.get(), options_.worker);
  HostPort bind = addresses_.at(self_);
  if (options_.listen_port_override >= 0) bind.port = options_.listen_port_override;
  Status s = worker_->RunSync([&] {
    listener_ = std::make_unique<UcxListener>(worker_.get(), bind, [this](ucp_conn_request_h request) {
      ucp_conn_request_attr_t attr{};
      attr.field_mask = UCP_CONN_REQUEST_ATTR_FIELD_CLIENT_ADDR;
      std::string who = "a peer";
      if (ucp_conn_request_query(request, &attr) == UCS_OK) who = "a peer at " + SockaddrString(attr.client_address);
      try {
        accepted_.push_back(UcxEndpoint::Accept(worker_.get(), request, who, nullptr));
      } catch (const Error&) {
        ucp_listener_reject(listener_->get(), request);
      }
    });
    port_ = listener_->port();
    return Status();
  }, std::chrono::seconds(10));
  if (!s.ok()) {
    worker_.reset();
    throw Error(s.WithContext(fmt::format("task {}", options_.task.ToString())));
  }
  // Hellos come through the connection manager's endpoints (its worker), everything else to the data worker.
  worker_->AddPollHook([this] {
    ProbeHeaders(worker_->get());
    if (worker_->cm() != worker_->get()) ProbeHeaders(worker_->cm());
  });
  worker_->AddTickHook([this] {
    CheckMeasureTimeouts();
    const auto now = Clock::now();
    for (auto& [task, peer] : peers_) {
      peer->graveyard.clear();
      if (peer->retry_at && now >= *peer->retry_at) {
        peer->retry_at.reset();
        StartConnect(task);
      }
    }
    for (size_t i = 0; i < accepted_.size();) {
      if (accepted_[i]->failed()) {
        accepted_.erase(accepted_.begin() + static_cast<long>(i));
      } else {
        ++i;
      }
    }
  });
}

UcxTransport::~UcxTransport() {
  // Staged sends finish on their own (their UCX sends complete or fail); their stages use `this`.
  const auto staged_deadline = Clock::now() + std::chrono::seconds(5);
  while (staged_in_flight_ > 0 && Clock::now() < staged_deadline) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  worker_->RunSync([this] {
    shutting_down_ = true;
    const std::set<RecvOp*> in_flight = recvs_in_flight_;  // cancelling may complete (and erase) at once
    for (RecvOp* op : in_flight) {
      if (recvs_in_flight_.count(op) && op->request != nullptr) ucp_request_cancel(op->worker, op->request);
    }
    worker_->ProgressUntil([this] { return recvs_in_flight_.empty(); }, std::chrono::milliseconds(1000));
    for (auto& [task, peer] : peers_) {  // sends still waiting for a connection fail now
      std::vector<std::function<void()>> waiting;
      waiting.swap(peer->waiting);
      for (auto& send : waiting) send();
    }
    peers_.clear();
    accepted_.clear();
    listener_.reset();
    for (uint8_t* b : header_buffers_) CpuAllocator()->Deallocate(b, HeaderBufferBytes());
    header_buffers_.clear();
    return Status();
  }, std::chrono::seconds(10));
  worker_->Stop();  // joins the progress thread: no hook runs after this
  worker_.reset();
  staging_.reset();
  registry_->Close();  // tensors still holding pool buffers outlive the context: unmap now
  context_.reset();
}

std::string UcxTransport::PeerName(int task) const {
  if (task < 0 || task >= options_.cluster.NumTasks()) return fmt::format("task #{} (not in the cluster)", task);
  std::lock_guard<std::mutex> l(mu_);
  auto it = addresses_.find(task);
  return fmt::format("task {} ({})", options_.cluster.TaskAt(task).ToString(),
                     it == addresses_.end() ? "?" : it->second.ToString());
}

void UcxTransport::SetPeerAddress(int task, const HostPort& address) {
  options_.cluster.TaskAt(task);  // range check
  std::lock_guard<std::mutex> l(mu_);
  addresses_[task] = address;
}

UcxTransport::Peer& UcxTransport::PeerAt(int task) {
  auto& p = peers_[task];
  if (!p) {
    p = std::make_unique<Peer>();
    p->eager_threshold = options_.eager_threshold;
  }
  return *p;
}

void UcxTransport::StartConnect(int task) {
  Peer& peer = PeerAt(task);
  if (peer.ep) peer.graveyard.push_back(std::move(peer.ep));
  const int attempt = ++peer.attempt;
  HostPort address;
  {
    std::lock_guard<std::mutex> l(mu_);
    address = addresses_.at(task);
  }
  try {
    peer.ep = UcxEndpoint::Connect(worker_.get(), address, PeerName(task), [this, task, attempt](const Status& s) {
      if (PeerAt(task).attempt == attempt) OnPeerError(task, s, /*connecting=*/true);
    });
  } catch (const Error& e) {
    OnPeerError(task, e.status(), /*connecting=*/true);
    return;
  }
  // The connection works once a flush completes (the wire-up went through).
  struct Flush {
    UcxTransport* t;
    int task, attempt;
  };
  ucp_request_param_t param{};
  param.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA;
  param.user_data = new Flush{this, task, attempt};
  auto finish = [](void* request, ucs_status_t status, void* user_data) {
    auto* f = static_cast<Flush*>(user_data);
    Peer& p = f->t->PeerAt(f->task);
    if (p.attempt == f->attempt && !f->t->shutting_down_) {
      if (status == UCS_OK) {
        p.cm_connected = true;
        f->t->SendHello(f->task, p.ep.get(), WireKind::kHello);  // the peer answers with its worker address
      } else {
        f->t->OnPeerError(f->task, UcxStatus(status, "connecting to " + f->t->PeerName(f->task)), true);
      }
    }
    delete f;
    if (request != nullptr) ucp_request_free(request);
  };
  param.cb.send = finish;
  ucs_status_ptr_t req = ucp_ep_flush_nbx(peer.ep->get(), &param);
  if (req == nullptr || UCS_PTR_IS_ERR(req)) finish(nullptr, UCS_PTR_STATUS(req), param.user_data);
}

void UcxTransport::OnPeerError(int task, const Status& status, bool connecting) {
  Peer& peer = PeerAt(task);
  if (peer.failed || shutting_down_) return;
  // The connection-manager endpoint failing before its first flush: the peer may not listen yet
  // (or its address was not known yet): try again until the deadline.
  if (connecting && !peer.cm_connected && Clock::now() < peer.deadline) {
    peer.retry_at = Clock::now() + kRetryInterval;  // not listening yet: try again
    return;
  }
  peer.failed = true;
  const Status s = errors::Unavailable("{} is unavailable: {}", PeerName(task), status.message());
  {
    std::lock_guard<std::mutex> l(mu_);
    peer_status_[task] = s;
    stats_[task].failed.store(true, std::memory_order_release);
    connected_cv_.notify_all();
  }
  std::vector<std::function<void()>> waiting;
  waiting.swap(peer.waiting);
  for (auto& send : waiting) send();  // they see the failure and complete with it
  if (on_peer_failure_) on_peer_failure_(task, s);
  PeerFailureHandler control_failure;
  {
    std::lock_guard<std::mutex> l(mu_);
    control_failure = on_control_peer_failure_;
  }
  if (control_failure) control_failure(task, s);
}

Status UcxTransport::Connect(int task) {
  WEFT_REQUIRE(task != self_, "UcxTransport::Connect: task {} is this process", task);
  options_.cluster.TaskAt(task);
  worker_->Post([this, task] {
    Peer& p = PeerAt(task);
    if (p.ep || p.retry_at || p.failed) return;
    p.deadline = Clock::now() + options_.connect_timeout;
    StartConnect(task);
  });
  std::unique_lock<std::mutex> l(mu_);
  const bool done = connected_cv_.wait_for(l, options_.connect_timeout + std::chrono::seconds(1), [&] {
    return stats_[task].connected.load() || peer_status_.count(task) > 0;
  });
  if (peer_status_.count(task)) return peer_status_[task];
  if (!done) {
    return errors::DeadlineExceeded("connecting to task {} did not finish within {} ms",
                                    options_.cluster.TaskAt(task).ToString(), options_.connect_timeout.count());
  }
  return Status();
}

void UcxTransport::EnsureConnected(int task) {
  if (task == self_ || task < 0 || task >= options_.cluster.NumTasks()) return;
  if (stats_[task].connected.load(std::memory_order_acquire) || stats_[task].failed.load(std::memory_order_acquire)) {
    return;  // nothing to start
  }
  worker_->Post([this, task] {
    Peer& p = PeerAt(task);
    if (p.ep || p.retry_at || p.failed) return;
    p.deadline = Clock::now() + options_.connect_timeout;
    StartConnect(task);
  });
}

bool UcxTransport::WaitForSends(std::chrono::milliseconds timeout) const {
  const auto deadline = Clock::now() + timeout;
  while (sends_in_flight_.load() > 0) {
    if (Clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  return true;
}

Status UcxTransport::PeerStatus(int task) const {
  if (task >= 0 && task < options_.cluster.NumTasks() && !stats_[task].failed.load(std::memory_order_acquire)) {
    return Status();
  }
  std::lock_guard<std::mutex> l(mu_);
  auto it = peer_status_.find(task);
  return it == peer_status_.end() ? Status() : it->second;
}

void UcxTransport::SendCallback(void* request, ucs_status_t status, void* user_data) {
  auto* op = static_cast<SendOp*>(user_data);
  op->Complete(status == UCS_OK ? Status() : UcxStatus(status, "sending to " + op->transport->PeerName(op->task)));
  ucp_request_free(request);
}

void UcxTransport::PostSend(ucp_ep_h ep, SendOp* op, const void* buffer, size_t count, ucp_datatype_t datatype,
                            uint64_t tag, ucp_mem_h memh) {
  ucp_request_param_t param{};
  param.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA | UCP_OP_ATTR_FIELD_DATATYPE;
  param.cb.send = &UcxTransport::SendCallback;
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
    op->Complete(UcxStatus(UCS_PTR_STATUS(req), "sending to " + PeerName(op->task)));
  }
}

void UcxTransport::SendHello(int task, UcxEndpoint* ep, WireKind kind) {
  const std::string& address = worker_->address();
  Tensor bytes(DType::kUInt8, TensorShape({static_cast<int64_t>(address.size())}));
  std::memcpy(bytes.raw_data(), address.data(), address.size());
  auto* op = new SendOp{this, task, bytes, EncodeTensorHeader(self_, 0, "hello", bytes, false, true, 0, kind), {}, 1,
                        {}, nullptr};
  op->iov[0] = {op->head.data(), op->head.size()};
  op->iov[1] = {op->value.raw_data(), op->value.bytes()};
  worker_->AddDemand(1);
  PostSend(ep->get(), op, op->iov, 2, ucp_dt_make_iov(), HeaderTag(self_));
}

void UcxTransport::OnHello(int task, WireKind kind, const std::string& address) {
  Peer& peer = PeerAt(task);
  if (peer.failed) return;
  const bool newly_connected = !peer.data_ep;
  if (!peer.data_ep) {
    try {
      peer.data_ep = UcxEndpoint::ConnectToWorker(worker_.get(), address, PeerName(task),
                                                  options_.data_peer_error_handling,
                                                  [this, task](const Status& s) { OnPeerError(task, s, false); });
    } catch (const Error& e) {
      OnPeerError(task, e.status(), false);
      return;
    }
    peer.connected = true;
    {
      std::lock_guard<std::mutex> l(mu_);
      stats_[task].connected.store(true, std::memory_order_release);
      connected_cv_.notify_all();
    }
    std::vector<std::function<void()>> waiting;
    waiting.swap(peer.waiting);
    for (auto& send : waiting) send();
  }
  if (kind == WireKind::kHello) {
    SendHello(task, peer.data_ep.get(), WireKind::kHelloReply);
    // Our own connection-manager endpoint to the peer notices when it dies.
    if (!peer.ep && !peer.retry_at) {
      peer.deadline = Clock::now() + options_.connect_timeout;
      StartConnect(task);
    }
  }
  // The lower-numbered task of the pair measures (one measurement per pair: both spinning at once
  // would compete for the cores) and tells the peer the result.
  if (newly_connected && self_ < task && options_.measure_eager_threshold) StartMeasure(task);
}

void UcxTransport::SetControlHandler(ControlHandler on_control, PeerFailureHandler on_peer_failure) {
  {
    std::lock_guard<std::mutex> l(mu_);
    on_control_ = std::move(on_control);
    on_control_peer_failure_ = std::move(on_peer_failure);
  }
  // Handlers run on the progress thread: once it has run this, no call of the old ones is in flight.
  if (!worker_->OnProgressThread()) worker_->RunSync([] { return Status(); }, std::chrono::seconds(10));
}

void UcxTransport::SendTensor(int task, uint64_t step_id, const std::string& key, const Tensor& value, bool is_dead,
                              DoneCallback done) {
  SendTensorImpl(task, WireKind::kTensor, step_id, key, value, is_dead, Protocol::kAuto, std::move(done));
}

void UcxTransport::SendMessage(int task, WireKind kind, uint64_t step_id, const std::string& key, const Tensor& value,
                               bool is_dead, DoneCallback done) {
  SendTensorImpl(task, kind, step_id, key, value, is_dead, Protocol::kAuto, std::move(done));
}

void UcxTransport::SendTensorImpl(int task, WireKind kind, uint64_t step_id, const std::string& key,
                                  const Tensor& value, bool is_dead, Protocol protocol, DoneCallback done) {
  if (task < 0 || task >= options_.cluster.NumTasks() || task == self_) {
    if (done) {
      done(errors::InvalidArgument("sending key '{}': task #{} is {} (the cluster has {} tasks; this is #{})", key, task,
                                   task == self_ ? "this task" : "not in the cluster", options_.cluster.NumTasks(),
                                   self_));
    }
    return;
  }
  auto* op = new SendOp{this, task, value, {}, {}, 0, {}, std::move(done)};
  op->kind = kind;
  op->step_id = step_id;
  op->key = key;
  op->is_dead = is_dead;
  op->protocol = protocol;
  worker_->AddDemand(1);  // until the send completes (SendOp::Complete)
  sends_in_flight_++;
  // From the progress thread: at once (or right after the UCX callback we are in); elsewhere:
  // queued, or at once while nobody drives the worker (UcxWorker::RunHereOrPost).
  const bool posted = worker_->RunHereOrPost([this, op] { StartSend(op); });
  if (!posted) {
    op->pending = 1;
    op->Complete(errors::Cancelled("sending key '{}' to {}: the transport is shutting down", key, PeerName(task)));
  }
}

void UcxTransport::StartSend(SendOp* op) {
  Peer& peer = PeerAt(op->task);
  if (peer.connected || peer.failed || shutting_down_) {
    PostTensor(op);
    return;
  }
  peer.waiting.push_back([this, op] { PostTensor(op); });
  if (!peer.ep && !peer.retry_at) {
    peer.deadline = Clock::now() + options_.connect_timeout;
    StartConnect(op->task);
  }
}

void UcxTransport::PostTensor(SendOp* op) {
  const int task = op->task;
  Peer& peer = PeerAt(task);
  if (peer.failed || shutting_down_ || !peer.data_ep) {
    const Status failed = PeerStatus(task);
    op->pending = 1;
    op->Complete(!failed.ok() ? failed : errors::Cancelled("the transport is shutting down"));
    return;
  }
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
  const bool eager = !chunked && (op->protocol == Protocol::kAuto ? bytes <= peer.eager_threshold
                                                                   : op->protocol == Protocol::kEager);
  const size_t num_chunks = chunked ? ChunkPlan{bytes, staging_->bytes()}.num_chunks() : 1;
  const uint64_t seq = eager ? 0 : peer.next_seq;
  if (!eager) peer.next_seq += num_chunks;
  try {
    op->head = EncodeTensorHeader(self_, op->step_id, op->key, op->value, op->is_dead, eager, seq, op->kind,
                                  chunked ? static_cast<uint32_t>(staging_->bytes()) : 0);
  } catch (const Error& e) {
    op->pending = 1;
    op->Complete(e.status());
    return;
  }
  if (op->step_id != kMeasureStep) CountSent(task, bytes, eager, chunked);
  ucp_ep_h ep = peer.data_ep->get();
  if (chunked) {
    op->pending = 3;  // header, the staged chunks, and this function
    PostSend(ep, op, op->head.data(), op->head.size(), ucp_dt_make_contig(1), HeaderTag(self_));
    SendStaged(task, op, seq, num_chunks);
    op->Complete(Status());
  } else if (eager) {
    op->pending = 1;
    op->iov[0] = {op->head.data(), op->head.size()};
    op->iov[1] = {op->value.raw_data(), bytes};
    PostSend(ep, op, op->iov, bytes > 0 ? 2 : 1, ucp_dt_make_iov(), HeaderTag(self_));
  } else {
    op->pending = 3;  // header, data, and this function (so an immediate completion cannot free op early)
    PostSend(ep, op, op->head.data(), op->head.size(), ucp_dt_make_contig(1), HeaderTag(self_));
    // A tensor in a chunk we registered (one received here, sent on): its handle; else UCX's rcache.
    PostSend(ep, op, op->value.raw_data(), bytes, ucp_dt_make_contig(1), DataTag(self_, seq),
             registry_->Find(op->value.raw_data(), bytes));
    op->Complete(Status());
  }
}

void UcxTransport::CountSent(int task, size_t bytes, bool eager, bool staged) {
  PeerStats& c = stats_[task];
  c.messages_sent.fetch_add(1, std::memory_order_relaxed);
  if (staged) c.staged_sent.fetch_add(1, std::memory_order_relaxed);
  c.bytes_sent.fetch_add(static_cast<int64_t>(bytes), std::memory_order_relaxed);
  (eager ? c.eager_sent : c.rendezvous_sent).fetch_add(1, std::memory_order_relaxed);
}

PeerCounters UcxTransport::Counters(int task) const {
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
    c.wait_us = s.wait_us;
  }
  std::lock_guard<std::mutex> l(mu_);
  auto it = rejected_.find(task);
  if (it != rejected_.end()) c.rejected = it->second;
  return c;
}

void UcxTransport::AddWaitTime(int task, int64_t us) {
  if (task >= 0 && task < options_.cluster.NumTasks()) stats_[task].wait_us.fetch_add(us, std::memory_order_relaxed);
}

Status UcxTransport::last_rejection() const {
  std::lock_guard<std::mutex> l(mu_);
  return last_rejection_;
}

int64_t UcxTransport::num_rejected() const {
  std::lock_guard<std::mutex> l(mu_);
  return num_rejected_;
}

Status UcxTransport::SendRawForTesting(int task, uint64_t tag, std::string bytes) {
  return worker_->RunSync([&]() -> Status {
    Peer& peer = PeerAt(task);
    if (!peer.data_ep) return errors::FailedPrecondition("not connected to {}", PeerName(task));
    ucp_request_param_t param{};
    ucs_status_ptr_t req = ucp_tag_send_nbx(peer.data_ep->get(), bytes.data(), bytes.size(), tag, &param);
    if (req == nullptr) return Status();
    if (UCS_PTR_IS_ERR(req)) return UcxStatus(UCS_PTR_STATUS(req), "raw send");
    worker_->ProgressUntil([&] { return ucp_request_check_status(req) != UCS_INPROGRESS; },
                           std::chrono::milliseconds(5000));
    const ucs_status_t s = ucp_request_check_status(req);
    if (s == UCS_INPROGRESS) ucp_request_cancel(worker_->get(), req);
    ucp_request_free(req);
    return UcxStatus(s, "raw send");
  }, std::chrono::seconds(10));
}

}  // namespace weft
