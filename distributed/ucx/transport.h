// Tensors between the tasks of a cluster over UCX tagged messages (wire format: wire.h).
//
//   UcxTransportOptions o;
//   o.cluster = ClusterSpec::FromFlag("worker=127.0.0.1:10090,127.0.0.1:10091");
//   o.task = {"worker", 0};
//   UcxTransport t(o, on_message, on_peer_failure);       // listens on 127.0.0.1:10090
//   ThrowIfError(t.Connect(1));                            // waits (bounded) until worker:1 answers
//   t.SendTensor(1, /*step_id=*/7, key, tensor, /*is_dead=*/false, [](const Status& s) { ... });
//   // worker:1's on_message(0, 7, key, OK, tensor, false) runs on its progress thread
//
// The transport is the front that UcxRendezvous, the servers and the strategies use; it is made
// of three parts, each with its own header and threading rule:
//   PeerConnector  (peer_connector.h)   the TCP listener, the authenticated handshake, retries,
//                                       peer failure and restarted peers
//   TensorChannel  (tensor_channel.h)   eager / rendezvous tensors, the receive window and pool,
//                                       GPU staging, ReceiveInto, rejection, the counters
//   ThresholdProbe (threshold_probe.h)  the eager threshold measured on each live endpoint
// It owns the UCX context and worker they share (one progress thread: ucx.h), wires the parts'
// events together (a new connection starts the probe; a failure reaches the probe, the message
// handler's owner and the control plane) and forwards its methods to them. Options and the
// shared types: transport_options.h; the environment overrides: environment.h.
//
// Thread-safe. Handlers and `done` callbacks run on the progress thread: they must not block.
#pragma once

#include <chrono>
#include <memory>
#include <mutex>
#include <string>

#include "distributed/ucx/collective_channel.h"
#include "distributed/ucx/memreg.h"
#include "distributed/ucx/peer_connector.h"
#include "distributed/ucx/tensor_channel.h"
#include "distributed/ucx/threshold_probe.h"
#include "distributed/ucx/transport_options.h"

namespace weft {

class UcxTransport {
 public:
  // Runs for every tensor message: status OK with the tensor, or the reason the message was bad.
  using MessageHandler = UcxMessageHandler;
  using PeerFailureHandler = UcxPeerFailureHandler;
  using DoneCallback = UcxDoneCallback;

  // Creates the UCX context and worker and listens on the task's address. Throws Error (with
  // UCX's reason) when it cannot bind.
  UcxTransport(UcxTransportOptions options, MessageHandler on_message, PeerFailureHandler on_peer_failure);
  ~UcxTransport();
  UcxTransport(const UcxTransport&) = delete;
  UcxTransport& operator=(const UcxTransport&) = delete;

  const ClusterSpec& cluster() const { return options_.cluster; }
  const TaskId& task() const { return options_.task; }
  int task_index() const { return self_; }
  int port() const { return connector_->port(); }
  size_t eager_threshold() const { return options_.eager_threshold; }
  // "worker:1 (127.0.0.1:10091)".
  std::string PeerName(int task) const;

  // Where to reach `task` (before connecting to it); the spec's address otherwise.
  void SetPeerAddress(int task, const HostPort& address);
  // Connects to `task` and waits until the connection works (a flush completes), retrying while
  // the peer is not listening yet, for at most connect_timeout. Unavailable / DeadlineExceeded
  // naming the peer otherwise.
  Status Connect(int task);
  // Starts connecting when no endpoint exists (does not wait): so that a failure of `task` is
  // noticed even when we only receive from it.
  void EnsureConnected(int task) { connector_->EnsureConnected(task); }
  // OK, or why `task` is unreachable.
  Status PeerStatus(int task) const { return connector_->PeerStatus(task); }
  // Waits (not on the progress thread) until every send made so far has completed or failed, for
  // at most `timeout`; false if some are still in flight. A rendezvous send completes once the
  // peer has pulled the data: a process that exits right after its last collective must wait
  // here, or its peers may still be fetching from it (~UcxRendezvousMgr waits up to 2 s).
  bool WaitForSends(std::chrono::milliseconds timeout) const;

  // Sends asynchronously; `done` runs once the tensor's buffer is no longer needed (or with the
  // error). The tensor is kept alive until then.
  void SendTensor(int task, uint64_t step_id, const std::string& key, const Tensor& value, bool is_dead,
                  DoneCallback done) {
    channel_->Send(task, WireKind::kTensor, step_id, key, value, is_dead, TensorChannel::Protocol::kAuto,
                   std::move(done));
  }

  // The control plane (distributed/server): messages of kind kControlRequest / kControlReply
  // (wire.h) go to `on_control` instead of the tensor handler, with the same checks, eager or by
  // rendezvous like tensors; a malformed one whose header is intact reaches it with the error.
  // `on_peer_failure` also runs when a peer fails. Set before peers send control messages;
  // handlers run on the progress thread and must not block. Once this returns, the previous
  // handlers are not running (unless called from the progress thread).
  using ControlHandler = UcxControlHandler;
  void SetControlHandler(ControlHandler on_control, PeerFailureHandler on_peer_failure);
  // SendTensor with another message kind (the control plane's).
  void SendMessage(int task, WireKind kind, uint64_t step_id, const std::string& key, const Tensor& value,
                   bool is_dead, DoneCallback done) {
    channel_->Send(task, kind, step_id, key, value, is_dead, TensorChannel::Protocol::kAuto, std::move(done));
  }
  // The eager threshold used toward `task` (measured or configured), and how it was chosen.
  size_t EagerThreshold(int task) const;
  std::string ThresholdReport(int task) const;
  // Waits (bounded) until the threshold toward `task` is settled (measured, given up, or measuring
  // is off); false on timeout.
  bool WaitForThreshold(int task, std::chrono::milliseconds timeout);

  // Asks that the data of `key` in step `step_id` land in `into` (its buffer) when it comes by
  // rendezvous with the same dtype and byte size into host memory; otherwise, or when its header
  // came first, the receive pool is used as always. Thread-safe. ForgetReceiveInto drops a step's
  // unused requests (UcxRendezvousMgr::Cleanup).
  void ReceiveInto(uint64_t step_id, const std::string& key, const Tensor& into) {
    channel_->ReceiveInto(step_id, key, into);
  }
  void ForgetReceiveInto(uint64_t step_id) { channel_->ForgetReceiveInto(step_id); }

  PeerCounters Counters(int task) const { return channel_->Counters(task); }
  void AddWaitTime(int task, int64_t us) { channel_->AddWaitTime(task, us); }
  // Inbound connections accepted and dropped by the handshake (with the last drop's reason).
  HandshakeStats handshake_stats() const { return connector_->handshake_stats(); }
  // This process start's identity (handshake.h).
  uint64_t incarnation() const { return connector_->incarnation(); }
  // The last malformed message's error (OK when none) and how many there were.
  Status last_rejection() const;
  int64_t num_rejected() const;

  // Sends raw bytes under `tag` to `task` and waits for completion (tests of malformed messages).
  // `seal`: with message authentication on, the bytes (at least a header's worth) get a valid MAC
  // first, so that they reach the decoder; without it they are rejected as unauthenticated.
  Status SendRawForTesting(int task, uint64_t tag, std::string bytes, bool seal = true);

  UcxWorker* worker() { return worker_.get(); }
  // The persistent channel for collectives' small messages; null when options.collective_channel is off.
  UcxCollectiveChannel* collective_channel() { return collective_.get(); }
  DevicePath device_path() const { return channel_->device_path(); }
  // The registrations of the chunks the transport owns (rendezvous receive pool); see memreg.h.
  UcxMemRegistry& memory_registry() { return *registry_; }

 private:
  void OnPeerFailure(int task, const Status& status);

  UcxTransportOptions options_;
  const PeerFailureHandler on_peer_failure_;
  int self_ = 0;
  std::unique_ptr<UcxContext> context_;
  std::shared_ptr<UcxMemRegistry> registry_;
  std::unique_ptr<UcxWorker> worker_;
  // The parts, in the order they depend on each other (the channel uses the connector, the probe both).
  std::unique_ptr<PeerConnector> connector_;
  std::unique_ptr<TensorChannel> channel_;
  std::unique_ptr<ThresholdProbe> probe_;
  std::unique_ptr<UcxCollectiveChannel> collective_;  // uses the connector and the worker
  // The control plane's failure handler (its message handler is the channel's).
  std::mutex control_mu_;
  PeerFailureHandler on_control_peer_failure_;
};

}  // namespace weft
