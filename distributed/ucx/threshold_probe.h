// UcxTransport's eager/rendezvous threshold, measured on the live endpoint ("protocol threshold
// calculation"): after connecting, the lower-numbered task of the pair times round trips of the
// candidate sizes sent both ways through the TensorChannel and keeps the largest size up to which
// eager is never slower; it tells the peer, which uses the same threshold in the other direction.
//
//   ThresholdProbe probe(options, worker, &connector, &channel);
//   probe.Start(1);                                   // progress thread, once worker:1 is connected
//   probe.WaitForThreshold(1, std::chrono::seconds(2));             // any thread
//   std::string why = probe.ThresholdReport(1);       // "eager threshold toward ...: 8192 B, measured ..."
//
// Trials run one after another, each started by the previous one's ack; the peer answers every
// probe with an empty ack. Probes carry step TensorChannel::kMeasureStep and are never delivered
// to the rendezvous. The settled threshold goes to the channel (set_eager_threshold).
//
// Threading: the measurement runs only on the progress thread (Start, OnMessage, CheckTimeouts);
// its results are published under mu_ for any thread (EagerThreshold, ThresholdReport,
// WaitForThreshold, and OnPeerFailed, which wakes the waiters).
#pragma once

#include <chrono>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "distributed/ucx/peer_connector.h"
#include "distributed/ucx/tensor_channel.h"

namespace weft {

class ThresholdProbe {
 public:
  // Not owned, outliving the probe: options, worker, connector, channel.
  ThresholdProbe(const UcxTransportOptions& options, UcxWorker* worker, PeerConnector* connector,
                 TensorChannel* channel);
  ~ThresholdProbe();
  ThresholdProbe(const ThresholdProbe&) = delete;
  ThresholdProbe& operator=(const ThresholdProbe&) = delete;

  // Progress thread: measures toward `task` (just connected).
  void Start(int task);
  // Progress thread: a measurement message (step kMeasureStep) from `src_task`.
  void OnMessage(int src_task, const std::string& key);
  // Progress thread, on every tick: gives up measurements whose ack is overdue or whose peer
  // failed, and stops answering peers whose probes stopped.
  void CheckTimeouts();
  // Any thread: `task` failed (wakes WaitForThreshold).
  void OnPeerFailed(int task);

  // Any thread. The eager threshold used toward `task` (measured or configured), how it was
  // chosen, and a bounded wait until it is settled (measured, given up, the peer failed, or
  // measuring is off); false on timeout.
  size_t EagerThreshold(int task) const;
  std::string ThresholdReport(int task) const;
  bool WaitForThreshold(int task, std::chrono::milliseconds timeout);

 private:
  struct Measurement;
  // Progress-thread state toward one peer.
  struct Peer {
    std::unique_ptr<Measurement> measure;
    bool answering = false;  // the peer is measuring toward us: we spin while its probes come
    std::chrono::steady_clock::time_point last_probe;
  };
  void SendTrial(int task);
  void Finish(int task, bool gave_up);
  void Settle(int task, const std::string& report);

  const UcxTransportOptions& options_;
  UcxWorker* const worker_;
  PeerConnector* const connector_;
  TensorChannel* const channel_;
  std::map<int, Peer> peers_;  // progress thread
  // Published results.
  mutable std::mutex mu_;
  std::condition_variable settled_cv_;
  std::map<int, size_t> thresholds_;  // settled thresholds
  std::map<int, std::string> reports_;
};

}  // namespace weft
