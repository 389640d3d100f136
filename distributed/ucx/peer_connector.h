// UcxTransport's connections to the other tasks of the cluster: weft's own TCP listener on the
// task's cluster-spec address, the authenticated handshake, retries while a peer is not listening
// yet, peer failure, and peers that come back restarted.
//
//   PeerConnector c(options, /*self=*/0, worker, {.on_connected = ..., .on_failed = ...});  // listens
//   ThrowIfError(c.Connect(1));                      // any thread: waits until worker:1 answered
//   UcxEndpoint* ep = c.UsableDataEndpoint(1);       // progress thread: where tensors to worker:1 go
//
// Connecting to a peer opens a TCP connection to its listener and runs the handshake (handshake.h):
// both sides prove the cluster secret over fresh nonces, and only then exchange their UCX worker
// addresses; each side opens a UCX endpoint to the other's worker (the data endpoint: tensors and
// control messages). UCX never sees a byte of a connection that did not pass: garbage, truncated,
// oversized, wrong-secret or slow (handshake_timeout) handshakes are dropped, counted
// (handshake_stats) and logged with the peer's address. The TCP connection stays open as the
// failure detector: EOF or a reset means the peer failed, and `on_failed(task, status)` runs once,
// after the sends that waited for the connection ran (they see the failure). A failed peer stays
// failed until it connects again with a new incarnation (a restarted process): its old state is
// dropped then, and it is connected again (on_connected runs again). docs/ucx.md, "Connections".
//
// Threading: the connection state is written only on the progress thread (the methods marked so,
// the poll and tick hooks, the endpoints' callbacks); other threads only read what it publishes
// (peer addresses, failure statuses and handshake counts under mu_, per-peer connected / failed
// atomics) and hand work over through the worker (Connect, EnsureConnected). Nothing here blocks
// the progress thread: the sockets are non-blocking, woken through the worker's epoll.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "distributed/ucx/handshake.h"
#include "distributed/ucx/tcp_socket.h"
#include "distributed/ucx/transport_options.h"

namespace weft {

// Connections dropped before or during the handshake (since the transport started).
struct HandshakeStats {
  int64_t accepted = 0;  // inbound connections that passed
  int64_t dropped = 0;   // inbound connections dropped: garbage, truncated, oversized, wrong secret, slow
  Status last_drop;      // why the last one was dropped (with the peer's address)
};

class PeerConnector {
 public:
  struct Events {
    std::function<void(int task)> on_connected;                     // the data endpoint exists (once per incarnation)
    std::function<void(int task, const Status& status)> on_failed;  // the peer failed (once per incarnation)
  };

  // Listens on the task's address. Throws Error (Unavailable naming the address) when it cannot
  // bind, FailedPrecondition when there is no secret and not `insecure`. `options` and `worker`
  // are not owned and outlive the connector.
  PeerConnector(const UcxTransportOptions& options, int self, UcxWorker* worker, Events events);
  // Shutdown() must have run (the endpoints close on the progress thread).
  ~PeerConnector();
  PeerConnector(const PeerConnector&) = delete;
  PeerConnector& operator=(const PeerConnector&) = delete;

  int port() const { return port_; }
  uint64_t incarnation() const { return incarnation_; }
  const ClusterKey& key() const { return key_; }
  // "task worker:1 (127.0.0.1:10091)". Any thread.
  std::string PeerName(int task) const;
  // Where to reach `task` (before connecting to it); the spec's address otherwise. Any thread.
  void SetPeerAddress(int task, const HostPort& address);
  // Any thread but the progress thread: connects and waits (bounded by connect_timeout). See
  // UcxTransport::Connect.
  Status Connect(int task);
  // Any thread: starts connecting when nothing is under way (does not wait).
  void EnsureConnected(int task);
  // Any thread: OK, or why `task` is unreachable.
  Status PeerStatus(int task) const;
  // Any thread: whether `task` failed (a lock-free read; PeerStatus says why). False for a task
  // outside the cluster.
  bool Failed(int task) const;
  // Any thread.
  HandshakeStats handshake_stats() const;

  // Progress thread. Whether a send to `task` can be posted (or failed) now: connected, failed, or
  // shutting down. Otherwise RunWhenSettled queues it.
  bool Settled(int task);
  // Progress thread: runs `fn` once `task` is connected or failed (or at shutdown), connecting
  // first when nothing is under way.
  void RunWhenSettled(int task, std::function<void()> fn);
  // Progress thread: the endpoint that carries tensors to `task`; null when not connected, failed,
  // or shutting down.
  UcxEndpoint* UsableDataEndpoint(int task);
  // Progress thread: the data endpoint even when the peer failed (raw sends of tests); null before.
  UcxEndpoint* DataEndpoint(int task);
  // Progress thread: the per-message MAC keys toward / from `task` (authenticate_messages with a
  // secret); null when messages are not authenticated or the peer never connected.
  const SipHash24* SendKey(int task);
  const SipHash24* RecvKey(int task);
  // Progress thread: serves the sockets that are ready (throttled to the worker's cm_poll).
  void Poll();
  // Progress thread, on every tick: Poll, retries that are due, handshakes past their time.
  void Tick();
  // Progress thread: from now on failures are not reported and sends see shutting down
  // (Settled, UsableDataEndpoint).
  void BeginShutdown() { shutting_down_ = true; }
  // Progress thread, once (BeginShutdown first, if not yet): sends still waiting for a connection
  // fail now; endpoints, connections and the listener close.
  void Shutdown();

 private:
  struct Peer;
  struct Link;
  Peer& PeerAt(int task);
  void StartConnect(int task);
  void StartConnectIfIdle(int task);
  void PollNow();
  void AcceptAll();
  void Service(Link* link, uint32_t events);
  void Watch(Link* link);
  void Forget(Link* link);
  // The link broke or its handshake failed; removes it.
  void LinkFailed(Link* link, const Status& status);
  void HandshakeDone(Link* link);
  // The per-message keys toward `task` of that incarnation (with a secret and authenticate_messages).
  void InstallKeys(int task, uint64_t peer_incarnation);
  void DropInbound(Link* link, const Status& status);
  // `connecting`: a dial that never finished its handshake (retried until the deadline).
  void OnPeerError(int task, const Status& status, bool connecting);
  // A peer that came back with a new incarnation: fails what waited on the old one, forgets it.
  void ResetPeer(int task, uint64_t new_incarnation);
  std::unique_ptr<Link> TakeLink(Link* link);
  static void RunWaiting(Peer& peer);

  const UcxTransportOptions& options_;
  const int self_;
  UcxWorker* const worker_;
  const Events events_;
  const ClusterKey key_;
  uint64_t incarnation_ = 0;
  int port_ = 0;
  // Progress-thread state.
  TcpSocket listener_;
  int epoll_fd_ = -1;  // the listener's and the links' sockets; itself in the worker's epoll set
  std::map<int, std::unique_ptr<Peer>> peers_;
  std::vector<std::unique_ptr<Link>> accepting_;  // inbound connections still in their handshake
  std::map<uint64_t, Link*> links_by_id_;         // every link, by the id its epoll events carry
  uint64_t next_link_id_ = 1;
  std::chrono::steady_clock::time_point next_poll_{}, last_log_{};
  int64_t unlogged_drops_ = 0;
  bool shutting_down_ = false;
  // Published for other threads: written on the progress thread (addresses also by SetPeerAddress).
  mutable std::mutex mu_;
  std::condition_variable connected_cv_;
  std::map<int, HostPort> addresses_;
  std::map<int, Status> peer_status_;  // failed peers
  HandshakeStats stats_;
  // Read on every message without mu_: whether the peer connected, whether it failed (set under
  // mu_ after peer_status_, which holds why). Indexed by global task, sized at start.
  struct Flags {
    std::atomic<bool> connected{false}, failed{false};
  };
  std::unique_ptr<Flags[]> flags_;
};

}  // namespace weft
