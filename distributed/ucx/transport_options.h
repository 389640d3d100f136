// What UcxTransport and its three parts (PeerConnector, TensorChannel, ThresholdProbe) are configured
// with, and the types they share: the handlers messages and failures go to, the device path, the
// per-peer counters. The transport itself: transport.h.
//
//   UcxTransportOptions o;
//   o.cluster = ClusterSpec::FromFlag("worker=127.0.0.1:10090,127.0.0.1:10091");
//   o.task = {"worker", 0};
//   o.eager_threshold = 16 << 10;       // every field has a documented default
//   ApplyUcxEnvironment(&o);            // optional: the WEFT_UCX_* overrides (environment.h)
//
// A plain value: not thread-safe, copied into the transport.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/tensor.h"
#include "distributed/cluster_spec.h"
#include "distributed/ucx/staging.h"
#include "distributed/ucx/ucx.h"
#include "distributed/ucx/wire.h"

namespace weft {

struct UcxTransportOptions {
  ClusterSpec cluster;
  TaskId task;
  // Payloads of at most this many bytes go eagerly; larger ones by rendezvous into the receiver's
  // tensor. With measure_eager_threshold this is the upper bound (receive buffers are sized for it).
  size_t eager_threshold = 32 << 10;
  // Set each peer's threshold at connection by timing both paths on the live endpoint ("protocol
  // threshold calculation", ThresholdProbe): round trips of each candidate size (<= eager_threshold)
  // sent eagerly and by rendezvous, measure_reps times interleaved, within measure_budget (when it
  // runs out before every size was timed both ways, the configured threshold stays). The threshold
  // is the largest candidate up to which eager is never slower. Off: eager_threshold for every peer.
  // The candidates start at 4 KiB (OpenMPI's shared-memory eager limit): a ping-pong may time
  // smaller sizes by rendezvous as faster, but where both sides send at once (every collective)
  // one message wins over a header and a data transfer (bench/README.md, "Why the UCX defaults are
  // what they are").
  bool measure_eager_threshold = true;
  // Send tensors that fit a receive slot (TensorChannel::kSlotBytes, payload <= 4 KiB) to the slots
  // the peer posted ahead instead of as probed header messages. Every task posts its slots whatever
  // this says, so tasks that differ here still talk; off is the probed path of before (A/B).
  bool receive_slots = true;
  // Small messages of collectives (recursive doubling's, payload <= 4 KiB) over the persistent
  // collective channel (collective_channel.h: integer slots, receives posted ahead, no step
  // rendezvous) instead of the step's rendezvous. Both ends decide alike from this option: every
  // task of a cluster must set it the same (off: the rendezvous path). Off by default until the
  // hang report sees the channel's waits: a member waiting there is not listed as waiting for its
  // peer (tests/distributed/multi_worker_test.cc's report check fails with it on).
  bool collective_channel = false;
  std::vector<size_t> threshold_candidates = {4 << 10, 8 << 10, 16 << 10, 32 << 10};
  int measure_reps = 5;  // after one untimed round (warm-up)
  std::chrono::milliseconds measure_budget{20};
  // Print each settled threshold with its timings on stderr ("weft ucx worker:0: eager threshold
  // toward ..."); the same text is ThresholdReport(task). Default off.
  bool log_thresholds = false;
  // Peer-failure handling on the endpoints that carry tensors too. UCX 1.13's shared-memory
  // transports (posix, sysv) cannot report peer failure, so with it on they are not used; off (the
  // default), they are, and a peer's death is noticed by the connection-manager endpoint (TCP).
  bool data_peer_error_handling = false;
  // Rendezvous receives in flight at once, in bytes (two always go, whatever their size): further
  // headers wait, their data parked at the sender, so receive memory stays bounded and buffers come
  // back to the pool (cache-warm) before the next transfer. Receive memory in flight should stay
  // cache-resident: larger windows were slower (bench/README.md, "Why the UCX defaults are what
  // they are").
  size_t rendezvous_window_bytes = size_t{8} << 20;
  // Bytes of freed rendezvous receive buffers kept for reuse (0: none kept).
  size_t recv_pool_bytes = size_t{512} << 20;
  // GPU tensors when UCX has no CUDA memory support (see DevicePath): device -> host copies into
  // bounce buffers of staging_chunk_bytes (at least 4 KiB), staging_depth of them per transfer, so
  // that copying chunk i + 1 overlaps sending chunk i. Null: sending device memory is an error.
  std::shared_ptr<DeviceCopier> device_copier;
  size_t staging_chunk_bytes = size_t{1} << 20;
  size_t staging_depth = 4;
  // How long Connect keeps trying (a peer may not be listening yet).
  std::chrono::milliseconds connect_timeout{10000};
  // The cluster's secret (ResolveClusterSecret in cluster_resolver.h reads WEFT_CLUSTER_SECRET /
  // WEFT_CLUSTER_SECRET_FILE): every connection proves it both ways before any UCX address is
  // exchanged (handshake.h), and it keys the per-message MACs. Empty: the transport refuses to
  // start unless `insecure` says that anyone who reaches the port may drive this task.
  std::string cluster_secret;
  bool insecure = false;
  // With a secret: every header message (tensor headers, control requests and replies) carries
  // a SipHash-2-4 tag under a per-direction key, checked before the message is trusted.
  // Off: the handshake alone authenticates (UCX's own transport ports then accept forged headers).
  bool authenticate_messages = true;
  // A connection must finish its handshake within this time, or it is dropped (and counted).
  std::chrono::milliseconds handshake_timeout{5000};
  // This process start's identity in handshakes (0: random). A peer that reconnects with another
  // one restarted: its old state is dropped and it is accepted again.
  uint64_t incarnation = 0;
  // Binds the task's host with this port instead of the spec's (0: a free port, see port()); for
  // tests and launchers that hand ports around afterwards with SetPeerAddress. -1: the spec's port.
  int listen_port_override = -1;
  // Keep UCX's network transports on the interface that owns this task's cluster-spec address
  // (UCX's NET_DEVICES, SetNetDevicesFromAddress in environment.h): without it UCX's tcp transport
  // also listens on every other interface's address. Not applied when the user chose the devices
  // (UCX_NET_DEVICES in the environment, NET_DEVICES in context.config) or the address is a
  // wildcard (0.0.0.0, ::). Shared memory is not a network device: unaffected.
  bool net_devices_from_address = true;
  UcxContextOptions context;
  UcxWorkerOptions worker;
};

// How tensors in device memory cross processes, chosen when the transport starts.
enum class DevicePath {
  kUcx,     // UCX reports UCS_MEMORY_TYPE_CUDA: device pointers go to UCX as they are
  kStaged,  // no CUDA in UCX: staged through host bounce buffers by the DeviceCopier, in chunks
  kNone,    // neither: sending device memory fails naming the key
};
std::string_view DevicePathName(DevicePath path);

// Per-peer counters (since the transport started).
struct PeerCounters {
  int64_t messages_sent = 0, bytes_sent = 0, eager_sent = 0, rendezvous_sent = 0;
  int64_t messages_received = 0, bytes_received = 0, eager_received = 0, rendezvous_received = 0;
  int64_t received_in_place = 0;  // rendezvous receives that landed in the receiver's tensor (ReceiveInto)
  int64_t received_in_slot = 0;   // header messages (small tensors, rendezvous headers) that landed in a
                                  // receive slot posted ahead (no probe)
  int64_t staged_sent = 0;     // device tensors sent through host bounce buffers (also in rendezvous_sent)
  int64_t rejected = 0;        // malformed messages from this peer (unauthenticated ones included)
  int64_t unauthenticated = 0; // header messages whose MAC did not verify
  int64_t wait_us = 0;         // time Recvs of this peer's tensors waited (added by the rendezvous)
  std::string ToString() const;
};

// Runs for every tensor message: status OK with the tensor, or the reason the message was bad.
using UcxMessageHandler = std::function<void(int src_task, uint64_t step_id, const std::string& key,
                                             const Status& status, const Tensor& value, bool is_dead)>;
// Control-plane messages (kControlRequest / kControlReply, distributed/server).
using UcxControlHandler = std::function<void(int src_task, WireKind kind, uint64_t id, const std::string& method,
                                             const Status& status, const Tensor& body)>;
using UcxPeerFailureHandler = std::function<void(int task, const Status& status)>;
using UcxDoneCallback = std::function<void(const Status& status)>;

}  // namespace weft
