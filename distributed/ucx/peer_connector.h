// UcxTransport's connections to the other tasks of the cluster: the listener, the hello handshake,
// retries while a peer is not listening yet, and peer failure.
//
//   PeerConnector c(options, /*self=*/0, worker, {.on_connected = ..., .on_failed = ...});  // listens
//   ThrowIfError(c.Connect(1));                      // any thread: waits until worker:1 answered
//   UcxEndpoint* ep = c.UsableDataEndpoint(1);       // progress thread: where tensors to worker:1 go
//
// Connecting to a peer opens an endpoint to its listener through UCX's connection manager and, once
// a flush on it completes, sends a hello carrying this worker's UCX address; the peer answers with
// its own, and each side opens a second endpoint to the other's worker address. Tensors go on that
// one (the data endpoint), because in UCX 1.13 endpoints made by the connection manager use network
// transports only, while worker-address endpoints use shared memory between processes of one host.
// The connection-manager endpoint stays open: it notices a peer's death at once (TCP reset). When
// either endpoint fails, `on_failed(task, Unavailable)` runs once, after the sends that waited for
// the connection ran (they see the failure). docs/ucx.md, "Connections".
//
// Threading: the connection state is written only on the progress thread (the methods marked so,
// and the listener's and endpoints' callbacks); other threads only read what it publishes (peer
// addresses and failure statuses under mu_, per-peer connected / failed atomics) and hand work over
// through the worker (Connect, EnsureConnected). Events run on the progress thread and must not block.
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

#include "distributed/ucx/transport_options.h"

namespace weft {

class PeerConnector {
 public:
  struct Events {
    std::function<void(int task)> on_connected;                     // the data endpoint exists (once per peer)
    std::function<void(int task, const Status& status)> on_failed;  // the peer failed (once per peer)
  };

  // Listens on the task's address (on the progress thread; the worker must be running). Throws
  // Error (with UCX's reason) when it cannot bind. `options` and `worker` are not owned and outlive
  // the connector.
  PeerConnector(const UcxTransportOptions& options, int self, UcxWorker* worker, Events events);
  // Shutdown() must have run (the endpoints and the listener are closed on the progress thread).
  ~PeerConnector();
  PeerConnector(const PeerConnector&) = delete;
  PeerConnector& operator=(const PeerConnector&) = delete;

  int port() const { return port_; }
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
  // Progress thread: a hello (or its reply) from `task` carrying its worker address (the tensor
  // channel receives it with the other header messages).
  void OnHello(int task, WireKind kind, const std::string& address);
  // Progress thread, on every tick: retries that are due, endpoints to close, failed accepted ones.
  void Tick();
  // Progress thread: from now on failures are not reported, flushes start no hellos, and sends
  // see shutting down (Settled, UsableDataEndpoint).
  void BeginShutdown() { shutting_down_ = true; }
  // Progress thread, once (BeginShutdown first, if not yet): sends still waiting for a connection
  // fail now; endpoints and the listener close.
  void Shutdown();

 private:
  struct Peer;
  struct HelloSend;
  Peer& PeerAt(int task);
  void StartConnect(int task);
  void StartConnectIfIdle(int task);
  void SendHello(UcxEndpoint* ep, WireKind kind);
  // `connecting`: the error is the connection-manager endpoint's (retried while it never connected).
  void OnPeerError(int task, const Status& status, bool connecting);
  static void RunWaiting(Peer& peer);

  const UcxTransportOptions& options_;
  const int self_;
  UcxWorker* const worker_;
  const Events events_;
  int port_ = 0;
  // Progress-thread state.
  std::unique_ptr<UcxListener> listener_;
  std::map<int, std::unique_ptr<Peer>> peers_;
  std::vector<std::unique_ptr<UcxEndpoint>> accepted_;
  bool shutting_down_ = false;
  // Published for other threads: written on the progress thread (addresses also by SetPeerAddress).
  mutable std::mutex mu_;
  std::condition_variable connected_cv_;
  std::map<int, HostPort> addresses_;
  std::map<int, Status> peer_status_;  // failed peers
  // Read on every message without mu_: whether the peer connected, whether it failed (set under
  // mu_ after peer_status_, which holds why). Indexed by global task, sized at start.
  struct Flags {
    std::atomic<bool> connected{false}, failed{false};
  };
  std::unique_ptr<Flags[]> flags_;
};

}  // namespace weft
