#include "distributed/ucx/peer_connector.h"

#include <sys/epoll.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace weft {
namespace {

using Clock = std::chrono::steady_clock;
constexpr auto kRetryInterval = std::chrono::milliseconds(50);
// Inbound connections in their handshake at once; more are closed at once (and counted), so a
// flood of idle connections holds bounded memory and file descriptors.
constexpr size_t kMaxHandshaking = 64;
constexpr size_t kReadChunk = 16 << 10;
constexpr uint64_t kListenerId = 0;
// Dropped connections are logged at most once per this interval (the rest are counted).
constexpr auto kLogInterval = std::chrono::seconds(1);

bool Permanent(const Status& s) {
  return s.code() == Code::kUnauthenticated || s.code() == Code::kInvalidArgument;
}

}  // namespace

// One TCP connection: a handshake in progress (inbound in accepting_, outbound in Peer::dial),
// then an authenticated link kept as the failure detector (Peer::links).
struct PeerConnector::Link {
  uint64_t id = 0;
  TcpSocket sock;
  std::optional<Handshake> hs;
  std::string out;
  std::string who;      // "127.0.0.1:41234" (inbound) or the peer's name (outbound)
  bool inbound = false;
  bool connecting = false;  // outbound: the TCP connect has not completed
  int task = -1;            // outbound: the task dialed; inbound: known once authenticated
  uint64_t incarnation = 0; // the peer's, once authenticated
  Clock::time_point deadline;  // of the handshake
  uint32_t watched = 0;        // the epoll events registered
  bool authenticated = false;  // the handshake passed and HandshakeDone ran
};

// Progress-thread state of one peer.
struct PeerConnector::Peer {
  std::unique_ptr<Link> dial;                 // our connection to the peer, in its handshake
  std::vector<std::unique_ptr<Link>> links;   // authenticated connections (failure detection)
  std::unique_ptr<UcxEndpoint> data_ep;       // to the peer's worker address: tensors (shared memory included)
  std::optional<SipHash24> send_key, recv_key;
  std::vector<std::function<void()>> waiting;  // sends posted before data_ep existed
  bool connected = false;  // data_ep exists
  bool failed = false;
  std::optional<uint64_t> incarnation;  // the peer's, from its first handshake
  Clock::time_point deadline;           // of the current connect
  std::optional<Clock::time_point> retry_at;
  std::vector<std::unique_ptr<UcxEndpoint>> graveyard;  // endpoints to close outside callbacks
};

PeerConnector::PeerConnector(const UcxTransportOptions& options, int self, UcxWorker* worker, Events events)
    : options_(options), self_(self), worker_(worker), events_(std::move(events)), key_(options.cluster_secret) {
  if (options_.cluster_secret.empty() && !options_.insecure) {
    throw Error(errors::FailedPrecondition(
        "task {}: no cluster secret: set WEFT_CLUSTER_SECRET (the secret) or WEFT_CLUSTER_SECRET_FILE (a file only "
        "its owner can read) to the same value on every task (weft-zoo launch and weft.spark.run make one), or run "
        "on a trusted network with --insecure / insecure=True / WEFT_INSECURE=1 (docs/security.md)",
        options_.task.ToString()));
  }
  incarnation_ = options_.incarnation;
  while (incarnation_ == 0) SecureRandomBytes(&incarnation_, sizeof(incarnation_));
  for (const TaskId& t : options_.cluster.Tasks()) {
    addresses_[options_.cluster.GlobalIndex(t)] = HostPort::Parse(options_.cluster.Address(t));
  }
  flags_ = std::make_unique<Flags[]>(static_cast<size_t>(options_.cluster.NumTasks()));
  HostPort bind = addresses_.at(self_);
  if (options_.listen_port_override >= 0) bind.port = options_.listen_port_override;
  try {
    listener_ = TcpSocket::Listen(bind, &port_);
  } catch (const Error& e) {
    throw Error(e.status().WithContext(fmt::format("task {}", options_.task.ToString())));
  }
  epoll_fd_ = epoll_create1(EPOLL_CLOEXEC);
  if (epoll_fd_ < 0) throw Error(errors::Internal("PeerConnector: epoll_create1: {}", std::strerror(errno)));
  epoll_event ev{};
  ev.events = EPOLLIN;
  ev.data.u64 = kListenerId;
  epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, listener_.fd(), &ev);
  worker_->AddWakeFd(epoll_fd_);
}

PeerConnector::~PeerConnector() {
  if (epoll_fd_ >= 0) {
    worker_->RemoveWakeFd(epoll_fd_);
    close(epoll_fd_);
  }
}

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

HandshakeStats PeerConnector::handshake_stats() const {
  std::lock_guard<std::mutex> l(mu_);
  return stats_;
}

PeerConnector::Peer& PeerConnector::PeerAt(int task) {
  auto& p = peers_[task];
  if (!p) p = std::make_unique<Peer>();
  return *p;
}

void PeerConnector::Watch(Link* link) {
  const uint32_t want = EPOLLIN | (link->connecting || !link->out.empty() ? uint32_t{EPOLLOUT} : 0u);
  if (want == link->watched) return;
  epoll_event ev{};
  ev.events = want;
  ev.data.u64 = link->id;
  epoll_ctl(epoll_fd_, link->watched == 0 ? EPOLL_CTL_ADD : EPOLL_CTL_MOD, link->sock.fd(), &ev);
  link->watched = want;
}

void PeerConnector::Forget(Link* link) {
  links_by_id_.erase(link->id);
  if (link->watched != 0) epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, link->sock.fd(), nullptr);
  link->watched = 0;
}

std::unique_ptr<PeerConnector::Link> PeerConnector::TakeLink(Link* link) {
  auto take = [&](std::unique_ptr<Link>& slot) {
    std::unique_ptr<Link> out = std::move(slot);
    return out;
  };
  for (auto it = accepting_.begin(); it != accepting_.end(); ++it) {
    if (it->get() == link) {
      std::unique_ptr<Link> out = take(*it);
      accepting_.erase(it);
      return out;
    }
  }
  for (auto& [task, peer] : peers_) {
    if (peer->dial.get() == link) return take(peer->dial);
    for (auto it = peer->links.begin(); it != peer->links.end(); ++it) {
      if (it->get() == link) {
        std::unique_ptr<Link> out = take(*it);
        peer->links.erase(it);
        return out;
      }
    }
  }
  return nullptr;
}

void PeerConnector::StartConnectIfIdle(int task) {
  Peer& p = PeerAt(task);
  if (p.dial || p.retry_at || p.failed || p.connected) return;
  p.deadline = Clock::now() + options_.connect_timeout;
  StartConnect(task);
}

void PeerConnector::StartConnect(int task) {
  Peer& peer = PeerAt(task);
  if (peer.dial) Forget(TakeLink(peer.dial.get()).get());
  HostPort address;
  {
    std::lock_guard<std::mutex> l(mu_);
    address = addresses_.at(task);
  }
  auto link = std::make_unique<Link>();
  link->id = next_link_id_++;
  link->task = task;
  link->who = PeerName(task);
  link->connecting = true;
  link->deadline = Clock::now() + options_.handshake_timeout;
  try {
    link->sock = TcpSocket::Connect(address);
    link->hs.emplace(Handshake::Client({&key_, self_, options_.cluster.NumTasks(), incarnation_, worker_->address()}, task));
  } catch (const Error& e) {
    OnPeerError(task, e.status(), /*connecting=*/true);
    return;
  }
  link->out = link->hs->TakeOutput();
  links_by_id_[link->id] = link.get();
  Watch(link.get());
  peer.dial = std::move(link);
}

void PeerConnector::Poll() {
  const auto now = worker_->Now();  // (a poll hook: the round's time, no clock read per round)
  if (now < next_poll_) return;
  next_poll_ = now + std::chrono::duration_cast<Clock::duration>(options_.worker.cm_poll);
  PollNow();
}

void PeerConnector::PollNow() {
  epoll_event events[32];
  const int n = epoll_wait(epoll_fd_, events, 32, 0);
  for (int i = 0; i < n; ++i) {
    if (events[i].data.u64 == kListenerId) {
      AcceptAll();
      continue;
    }
    auto it = links_by_id_.find(events[i].data.u64);  // an earlier event of this batch may have removed it
    if (it != links_by_id_.end()) Service(it->second, events[i].events);
  }
}

void PeerConnector::AcceptAll() {
  for (;;) {
    std::string who;
    TcpSocket sock = listener_.Accept(&who);
    if (!sock.valid()) return;
    auto link = std::make_unique<Link>();
    link->id = next_link_id_++;
    link->sock = std::move(sock);
    link->who = who;
    link->inbound = true;
    link->deadline = Clock::now() + options_.handshake_timeout;
    if (shutting_down_ || accepting_.size() >= kMaxHandshaking) {
      DropInbound(link.get(), errors::ResourceExhausted("{} connections are already in their handshake", kMaxHandshaking));
      continue;  // closes it
    }
    link->hs.emplace(Handshake::Server({&key_, self_, options_.cluster.NumTasks(), incarnation_, worker_->address()}));
    links_by_id_[link->id] = link.get();
    Watch(link.get());
    accepting_.push_back(std::move(link));
  }
}

void PeerConnector::Service(Link* link, uint32_t events) {
  if (link->connecting) {
    if ((events & (EPOLLOUT | EPOLLERR | EPOLLHUP)) == 0) return;
    const Status s = link->sock.ConnectResult();
    if (!s.ok()) return LinkFailed(link, s);
    link->connecting = false;
  }
  if ((events & (EPOLLIN | EPOLLERR | EPOLLHUP)) != 0) {
    std::string in;
    bool eof = false;
    const Status s = link->sock.Read(&in, kReadChunk, &eof);
    if (!s.ok()) return LinkFailed(link, s);
    if (!link->authenticated) {
      const Status fed = link->hs->Feed(in);
      link->out += link->hs->TakeOutput();
      if (!fed.ok()) {
        (void)link->sock.Write(&link->out);  // what the handshake still says (best effort), then close
        return LinkFailed(link, fed);
      }
      // A dialing side knows the message keys once the peer proved the secret: the peer may send
      // over UCX as soon as it verified us, before its accept frame reaches us.
      if (!link->inbound && link->hs->peer_verified()) InstallKeys(link->task, link->hs->peer_incarnation());
    }
    // (Bytes after the handshake are ignored: the link only tells whether the peer is alive.)
    if (eof) {
      return LinkFailed(link, errors::Unavailable("the connection was closed{}",
                                                  link->authenticated ? "" : " during the handshake"));
    }
  }
  const Status w = link->sock.Write(&link->out);
  if (!w.ok()) return LinkFailed(link, w);
  if (!link->authenticated && link->hs->done()) {
    HandshakeDone(link);
    return;
  }
  Watch(link);
}

void PeerConnector::DropInbound(Link* link, const Status& status) {
  const Status s = status.WithContext("dropped a connection from " + link->who);
  const auto now = Clock::now();
  {
    std::lock_guard<std::mutex> l(mu_);
    stats_.dropped++;
    stats_.last_drop = s;
  }
  if (now - last_log_ >= kLogInterval) {
    std::fprintf(stderr, "weft ucx %s: %s%s\n", options_.task.ToString().c_str(), s.ToString().c_str(),
                 unlogged_drops_ > 0 ? fmt::format(" ({} more dropped since the last report)", unlogged_drops_).c_str()
                                     : "");
    last_log_ = now;
    unlogged_drops_ = 0;
  } else {
    unlogged_drops_++;
  }
}

void PeerConnector::LinkFailed(Link* link, const Status& status) {
  std::unique_ptr<Link> owned = TakeLink(link);
  Forget(link);
  if (link->inbound && !link->authenticated) {
    DropInbound(link, status);
    return;
  }
  if (!link->authenticated) {  // our dial
    OnPeerError(link->task, status.WithContext("connecting to " + PeerName(link->task)), /*connecting=*/true);
    return;
  }
  // An authenticated link broke: the peer failed, unless the link belongs to an incarnation
  // already replaced.
  Peer& peer = PeerAt(link->task);
  if (peer.incarnation && *peer.incarnation == link->incarnation) {
    OnPeerError(link->task, status.WithContext("connection to " + PeerName(link->task)), false);
  }
}

void PeerConnector::HandshakeDone(Link* link) {
  const int task = link->hs->peer_task();
  const uint64_t inc = link->hs->peer_incarnation();
  link->task = task;
  link->incarnation = inc;
  link->authenticated = true;
  Watch(link);  // the last frame may still be going out
  std::unique_ptr<Link> owned = TakeLink(link);
  Peer& peer = PeerAt(task);
  if (link->inbound) {
    std::lock_guard<std::mutex> l(mu_);
    stats_.accepted++;
  }
  if (peer.incarnation && *peer.incarnation != inc) {
    ResetPeer(task, inc);  // the peer restarted
  } else if (peer.failed || shutting_down_) {
    Forget(link);  // the same incarnation after it failed: it stays failed
    return;
  }
  peer.incarnation = inc;
  peer.links.push_back(std::move(owned));
  peer.retry_at.reset();
  if (peer.connected) return;  // the other direction's connection came first
  const std::string address = link->hs->peer_address();
  try {
    peer.data_ep = UcxEndpoint::ConnectToWorker(worker_, address, PeerName(task), options_.data_peer_error_handling,
                                                [this, task, inc](const Status& s) {
                                                  if (PeerAt(task).incarnation == inc) OnPeerError(task, s, false);
                                                });
  } catch (const Error& e) {
    OnPeerError(task, e.status(), false);
    return;
  }
  InstallKeys(task, inc);
  peer.connected = true;
  {
    std::lock_guard<std::mutex> l(mu_);
    flags_[task].connected.store(true, std::memory_order_release);
    connected_cv_.notify_all();
  }
  RunWaiting(peer);
  if (events_.on_connected) events_.on_connected(task);
}

void PeerConnector::InstallKeys(int task, uint64_t peer_incarnation) {
  Peer& peer = PeerAt(task);
  if (key_.insecure() || !options_.authenticate_messages || peer.failed) return;
  if (peer.incarnation && *peer.incarnation != peer_incarnation) return;  // HandshakeDone resets it first
  if (peer.recv_key) return;
  peer.send_key.emplace(key_.MessageKey(self_, incarnation_, task, peer_incarnation));
  peer.recv_key.emplace(key_.MessageKey(task, peer_incarnation, self_, incarnation_));
}

void PeerConnector::ResetPeer(int task, uint64_t new_incarnation) {
  Peer& peer = PeerAt(task);
  if (!peer.failed) {
    OnPeerError(task, errors::Unavailable("it restarted (incarnation {:#x} replaced {:#x})", new_incarnation,
                                          *peer.incarnation), false);
  }
  for (auto& old : peer.links) Forget(old.get());
  peer.links.clear();
  if (peer.data_ep) peer.graveyard.push_back(std::move(peer.data_ep));
  peer.send_key.reset();
  peer.recv_key.reset();
  peer.connected = peer.failed = false;
  std::lock_guard<std::mutex> l(mu_);
  peer_status_.erase(task);
  flags_[task].connected.store(false, std::memory_order_release);
  flags_[task].failed.store(false, std::memory_order_release);
}

void PeerConnector::RunWaiting(Peer& peer) {
  std::vector<std::function<void()>> waiting;
  waiting.swap(peer.waiting);
  for (auto& send : waiting) send();
}

void PeerConnector::OnPeerError(int task, const Status& status, bool connecting) {
  Peer& peer = PeerAt(task);
  if (peer.failed || shutting_down_) return;
  // A dial that never finished its handshake: the peer may not listen yet (or its address was
  // not known yet): try again until the deadline. A wrong secret or task is not retried.
  if (connecting && !peer.connected && !Permanent(status) && Clock::now() < peer.deadline) {
    peer.retry_at = Clock::now() + kRetryInterval;
    return;
  }
  if (connecting && peer.connected) return;  // a second connection failed; the first one works
  peer.failed = true;
  const Status s = Permanent(status) ? Status(status.code(), fmt::format("{}: {}", PeerName(task), status.message()))
                                     : errors::Unavailable("{} is unavailable: {}", PeerName(task), status.message());
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
  PeerAt(task).waiting.push_back(std::move(fn));
  StartConnectIfIdle(task);
}

UcxEndpoint* PeerConnector::UsableDataEndpoint(int task) {
  Peer& peer = PeerAt(task);
  return peer.failed || shutting_down_ ? nullptr : peer.data_ep.get();
}

UcxEndpoint* PeerConnector::DataEndpoint(int task) { return PeerAt(task).data_ep.get(); }

const SipHash24* PeerConnector::SendKey(int task) {
  Peer& peer = PeerAt(task);
  return peer.send_key ? &*peer.send_key : nullptr;
}

const SipHash24* PeerConnector::RecvKey(int task) {
  Peer& peer = PeerAt(task);
  return peer.recv_key ? &*peer.recv_key : nullptr;
}

void PeerConnector::Tick() {
  PollNow();
  const auto now = Clock::now();
  std::vector<Link*> late;
  for (auto& link : accepting_) {
    if (now >= link->deadline) late.push_back(link.get());
  }
  for (auto& [task, peer] : peers_) {
    peer->graveyard.clear();
    if (peer->dial && now >= peer->dial->deadline) late.push_back(peer->dial.get());
  }
  for (Link* link : late) {
    LinkFailed(link, errors::DeadlineExceeded("no complete handshake within {} ms", options_.handshake_timeout.count()));
  }
  for (auto& [task, peer] : peers_) {
    if (peer->retry_at && now >= *peer->retry_at && !shutting_down_) {
      peer->retry_at.reset();
      StartConnect(task);
    }
  }
}

void PeerConnector::Shutdown() {
  shutting_down_ = true;
  for (auto& [task, peer] : peers_) RunWaiting(*peer);  // sends still waiting for a connection fail now
  peers_.clear();
  accepting_.clear();
  links_by_id_.clear();
  listener_ = TcpSocket();
}

}  // namespace weft
