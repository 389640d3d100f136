#include "distributed/ucx/peer_connector.h"

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

// Progress-thread state of one peer.
struct PeerConnector::Peer {
  std::unique_ptr<UcxEndpoint> ep;       // through the connection manager: set-up and failure detection
  std::unique_ptr<UcxEndpoint> data_ep;  // to the peer's worker address: tensors (shared memory included)
  std::vector<std::function<void()>> waiting;  // sends posted before data_ep existed
  int attempt = 0;             // bumps on every (re)connect, so stale callbacks are ignored
  bool connected = false;     // data_ep exists
  bool cm_connected = false;  // ep's first flush completed
  bool failed = false;
  std::chrono::steady_clock::time_point deadline;  // of the current connect
  std::optional<std::chrono::steady_clock::time_point> retry_at;
  std::vector<std::unique_ptr<UcxEndpoint>> graveyard;  // failed endpoints, closed outside callbacks
};

// A hello in flight: the header and the worker address as a two-part iov. Its outcome is not
// reported (a failed hello shows as the endpoint's failure).
struct PeerConnector::HelloSend {
  UcxWorker* worker;
  Tensor bytes;
  std::string head;
  ucp_dt_iov_t iov[2];

  static void Done(void* request, ucs_status_t, void* user_data) {
    auto* h = static_cast<HelloSend*>(user_data);
    h->worker->AddDemand(-1);
    delete h;
    if (request != nullptr) ucp_request_free(request);
  }
};

PeerConnector::PeerConnector(const UcxTransportOptions& options, int self, UcxWorker* worker, Events events)
    : options_(options), self_(self), worker_(worker), events_(std::move(events)) {
  for (const TaskId& t : options_.cluster.Tasks()) {
    addresses_[options_.cluster.GlobalIndex(t)] = HostPort::Parse(options_.cluster.Address(t));
  }
  flags_ = std::make_unique<Flags[]>(static_cast<size_t>(options_.cluster.NumTasks()));
  HostPort bind = addresses_.at(self_);
  if (options_.listen_port_override >= 0) bind.port = options_.listen_port_override;
  Status s = worker_->RunSync([&] {
    listener_ = std::make_unique<UcxListener>(worker_, bind, [this](ucp_conn_request_h request) {
      ucp_conn_request_attr_t attr{};
      attr.field_mask = UCP_CONN_REQUEST_ATTR_FIELD_CLIENT_ADDR;
      std::string who = "a peer";
      if (ucp_conn_request_query(request, &attr) == UCS_OK) who = "a peer at " + SockaddrString(attr.client_address);
      try {
        accepted_.push_back(UcxEndpoint::Accept(worker_, request, who, nullptr));
      } catch (const Error&) {
        ucp_listener_reject(listener_->get(), request);
      }
    });
    port_ = listener_->port();
    return Status();
  }, std::chrono::seconds(10));
  if (!s.ok()) throw Error(s.WithContext(fmt::format("task {}", options_.task.ToString())));
}

PeerConnector::~PeerConnector() = default;

std::string PeerConnector::PeerName(int task) const {
  if (task < 0 || task >= options_.cluster.NumTasks()) return fmt::format("task #{} (not in the cluster)", task);
  std::lock_guard<std::mutex> l(mu_);
  auto it = addresses_.find(task);
  return fmt::format("task {} ({})", options_.cluster.TaskAt(task).ToString(),
                     it == addresses_.end() ? "?" : it->second.ToString());
}

void PeerConnector::SetPeerAddress(int task, const HostPort& address) {
  options_.cluster.TaskAt(task);  // range check
  std::lock_guard<std::mutex> l(mu_);
  addresses_[task] = address;
}

PeerConnector::Peer& PeerConnector::PeerAt(int task) {
  auto& p = peers_[task];
  if (!p) p = std::make_unique<Peer>();
  return *p;
}

void PeerConnector::StartConnectIfIdle(int task) {
  Peer& p = PeerAt(task);
  if (p.ep || p.retry_at || p.failed) return;
  p.deadline = Clock::now() + options_.connect_timeout;
  StartConnect(task);
}

void PeerConnector::StartConnect(int task) {
  Peer& peer = PeerAt(task);
  if (peer.ep) peer.graveyard.push_back(std::move(peer.ep));
  const int attempt = ++peer.attempt;
  HostPort address;
  {
    std::lock_guard<std::mutex> l(mu_);
    address = addresses_.at(task);
  }
  try {
    peer.ep = UcxEndpoint::Connect(worker_, address, PeerName(task), [this, task, attempt](const Status& s) {
      if (PeerAt(task).attempt == attempt) OnPeerError(task, s, /*connecting=*/true);
    });
  } catch (const Error& e) {
    OnPeerError(task, e.status(), /*connecting=*/true);
    return;
  }
  // The connection works once a flush completes (the wire-up went through).
  struct Flush {
    PeerConnector* c;
    int task, attempt;
  };
  ucp_request_param_t param{};
  param.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA;
  param.user_data = new Flush{this, task, attempt};
  auto finish = [](void* request, ucs_status_t status, void* user_data) {
    auto* f = static_cast<Flush*>(user_data);
    Peer& p = f->c->PeerAt(f->task);
    if (p.attempt == f->attempt && !f->c->shutting_down_) {
      if (status == UCS_OK) {
        p.cm_connected = true;
        f->c->SendHello(p.ep.get(), WireKind::kHello);  // the peer answers with its worker address
      } else {
        f->c->OnPeerError(f->task, UcxStatus(status, "connecting to " + f->c->PeerName(f->task)), true);
      }
    }
    delete f;
    if (request != nullptr) ucp_request_free(request);
  };
  param.cb.send = finish;
  ucs_status_ptr_t req = ucp_ep_flush_nbx(peer.ep->get(), &param);
  if (req == nullptr || UCS_PTR_IS_ERR(req)) finish(nullptr, UCS_PTR_STATUS(req), param.user_data);
}

void PeerConnector::RunWaiting(Peer& peer) {
  std::vector<std::function<void()>> waiting;
  waiting.swap(peer.waiting);
  for (auto& send : waiting) send();
}

void PeerConnector::OnPeerError(int task, const Status& status, bool connecting) {
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
    flags_[task].failed.store(true, std::memory_order_release);
    connected_cv_.notify_all();
  }
  RunWaiting(peer);  // they see the failure and complete with it
  if (events_.on_failed) events_.on_failed(task, s);
}

Status PeerConnector::Connect(int task) {
  WEFT_REQUIRE(task != self_, "UcxTransport::Connect: task {} is this process", task);
  options_.cluster.TaskAt(task);
  worker_->Post([this, task] { StartConnectIfIdle(task); });
  std::unique_lock<std::mutex> l(mu_);
  const bool done = connected_cv_.wait_for(l, options_.connect_timeout + std::chrono::seconds(1), [&] {
    return flags_[task].connected.load() || peer_status_.count(task) > 0;
  });
  if (peer_status_.count(task)) return peer_status_[task];
  if (!done) {
    return errors::DeadlineExceeded("connecting to task {} did not finish within {} ms",
                                    options_.cluster.TaskAt(task).ToString(), options_.connect_timeout.count());
  }
  return Status();
}

void PeerConnector::EnsureConnected(int task) {
  if (task == self_ || task < 0 || task >= options_.cluster.NumTasks()) return;
  if (flags_[task].connected.load(std::memory_order_acquire) || flags_[task].failed.load(std::memory_order_acquire)) {
    return;  // nothing to start
  }
  worker_->Post([this, task] { StartConnectIfIdle(task); });
}

Status PeerConnector::PeerStatus(int task) const {
  if (task >= 0 && task < options_.cluster.NumTasks() && !flags_[task].failed.load(std::memory_order_acquire)) {
    return Status();
  }
  std::lock_guard<std::mutex> l(mu_);
  auto it = peer_status_.find(task);
  return it == peer_status_.end() ? Status() : it->second;
}

bool PeerConnector::Failed(int task) const {
  return task >= 0 && task < options_.cluster.NumTasks() && flags_[task].failed.load(std::memory_order_acquire);
}

bool PeerConnector::Settled(int task) {
  const Peer& peer = PeerAt(task);
  return peer.connected || peer.failed || shutting_down_;
}

void PeerConnector::RunWhenSettled(int task, std::function<void()> fn) {
  if (Settled(task)) {
    fn();
    return;
  }
  Peer& peer = PeerAt(task);
  peer.waiting.push_back(std::move(fn));
  if (!peer.ep && !peer.retry_at) {
    peer.deadline = Clock::now() + options_.connect_timeout;
    StartConnect(task);
  }
}

UcxEndpoint* PeerConnector::UsableDataEndpoint(int task) {
  Peer& peer = PeerAt(task);
  return peer.failed || shutting_down_ ? nullptr : peer.data_ep.get();
}

UcxEndpoint* PeerConnector::DataEndpoint(int task) { return PeerAt(task).data_ep.get(); }

void PeerConnector::SendHello(UcxEndpoint* ep, WireKind kind) {
  const std::string& address = worker_->address();
  auto* h = new HelloSend{worker_, Tensor(DType::kUInt8, TensorShape({static_cast<int64_t>(address.size())})), {}, {}};
  std::memcpy(h->bytes.raw_data(), address.data(), address.size());
  h->head = EncodeTensorHeader(self_, 0, "hello", h->bytes, false, true, 0, kind);
  h->iov[0] = {h->head.data(), h->head.size()};
  h->iov[1] = {h->bytes.raw_data(), h->bytes.bytes()};
  worker_->AddDemand(1);  // until the send completes (HelloSend::Done)
  ucp_request_param_t param{};
  param.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA | UCP_OP_ATTR_FIELD_DATATYPE;
  param.cb.send = &HelloSend::Done;
  param.user_data = h;
  param.datatype = ucp_dt_make_iov();
  ucs_status_ptr_t req = ucp_tag_send_nbx(ep->get(), h->iov, 2, HeaderTag(self_), &param);
  if (req == nullptr || UCS_PTR_IS_ERR(req)) HelloSend::Done(nullptr, UCS_PTR_STATUS(req), h);
}

void PeerConnector::OnHello(int task, WireKind kind, const std::string& address) {
  Peer& peer = PeerAt(task);
  if (peer.failed) return;
  const bool newly_connected = !peer.data_ep;
  if (!peer.data_ep) {
    try {
      peer.data_ep = UcxEndpoint::ConnectToWorker(worker_, address, PeerName(task), options_.data_peer_error_handling,
                                                  [this, task](const Status& s) { OnPeerError(task, s, false); });
    } catch (const Error& e) {
      OnPeerError(task, e.status(), false);
      return;
    }
    peer.connected = true;
    {
      std::lock_guard<std::mutex> l(mu_);
      flags_[task].connected.store(true, std::memory_order_release);
      connected_cv_.notify_all();
    }
    RunWaiting(peer);
  }
  if (kind == WireKind::kHello) {
    SendHello(peer.data_ep.get(), WireKind::kHelloReply);
    // Our own connection-manager endpoint to the peer notices when it dies.
    if (!peer.ep && !peer.retry_at) {
      peer.deadline = Clock::now() + options_.connect_timeout;
      StartConnect(task);
    }
  }
  if (newly_connected && events_.on_connected) events_.on_connected(task);
}

void PeerConnector::Tick() {
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
}

void PeerConnector::Shutdown() {
  shutting_down_ = true;
  for (auto& [task, peer] : peers_) RunWaiting(*peer);  // sends still waiting for a connection fail now
  peers_.clear();
  accepted_.clear();
  listener_.reset();
}

}  // namespace weft
