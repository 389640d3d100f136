#include "distributed/ucx/threshold_probe.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace weft {
namespace {
using Clock = std::chrono::steady_clock;
using Protocol = TensorChannel::Protocol;
constexpr uint64_t kMeasureStep = TensorChannel::kMeasureStep;
constexpr const char* kProbeKey = "weft:threshold-probe";
constexpr const char* kAckKey = "weft:threshold-ack";
constexpr const char* kResultKey = "weft:threshold-result:";
constexpr auto kAckTimeout = std::chrono::seconds(1);
// Eager counts as "not slower" within this factor: round trips this small jitter.
constexpr double kTolerance = 1.1;
// How long the answering side keeps spinning after the last probe.
constexpr auto kAnswerSpin = std::chrono::milliseconds(50);
}  // namespace

// The threshold measurement toward one peer: trials are rep-major, then size, then eager before
// rendezvous; each is a round trip (the tensor there, an empty ack back).
struct ThresholdProbe::Measurement {
  std::vector<size_t> sizes;
  std::vector<Tensor> values;
  int reps = 1;
  size_t trial = 0;
  std::vector<double> best_eager_us, best_rendezvous_us;  // the fastest round trip per size
  std::chrono::steady_clock::time_point started, trial_started, budget_end;
  size_t num_trials() const { return sizes.size() * 2 * static_cast<size_t>(reps); }
  size_t size_index(size_t t) const { return (t % (2 * sizes.size())) / 2; }
  bool eager(size_t t) const { return t % 2 == 0; }
};

ThresholdProbe::ThresholdProbe(const UcxTransportOptions& options, UcxWorker* worker, PeerConnector* connector,
                               TensorChannel* channel)
    : options_(options), worker_(worker), connector_(connector), channel_(channel) {}

ThresholdProbe::~ThresholdProbe() = default;

void ThresholdProbe::Start(int task) {
  Peer& peer = peers_[task];
  auto m = std::make_unique<Measurement>();
  for (size_t size : options_.threshold_candidates) {
    if (size > 0 && size <= options_.eager_threshold) m->sizes.push_back(size);
  }
  if (m->sizes.empty() || options_.measure_reps <= 0) {
    Finish(task, /*gave_up=*/true);
    return;
  }
  for (size_t size : m->sizes) {
    m->values.push_back(Tensor::Zeros(DType::kUInt8, TensorShape({static_cast<int64_t>(size)})));
  }
  m->reps = options_.measure_reps + 1;  // the first round of trials warms both paths up and is not timed
  m->best_eager_us.assign(m->sizes.size(), -1);
  m->best_rendezvous_us.assign(m->sizes.size(), -1);
  m->started = Clock::now();
  m->budget_end = m->started + options_.measure_budget;
  peer.measure = std::move(m);
  worker_->AddDemand(1);  // spin while measuring: the round trips should not pay epoll wake-ups
  SendTrial(task);
}

void ThresholdProbe::SendTrial(int task) {
  Measurement& m = *peers_[task].measure;
  const size_t t = m.trial;
  m.trial_started = Clock::now();
  channel_->Send(task, WireKind::kTensor, kMeasureStep, kProbeKey, m.values[m.size_index(t)], false,
                 m.eager(t) ? Protocol::kEager : Protocol::kRendezvous, nullptr);
}

void ThresholdProbe::OnMessage(int src_task, const std::string& key) {
  if (key == kProbeKey) {  // the peer measures: answer at once, and spin until it is done
    Peer& peer = peers_[src_task];
    if (!peer.answering) {
      peer.answering = true;
      worker_->AddDemand(1);  // released by CheckTimeouts once the probes stop
    }
    peer.last_probe = Clock::now();
    channel_->Send(src_task, WireKind::kTensor, kMeasureStep, kAckKey, Tensor(DType::kUInt8, TensorShape({0})), false,
                   Protocol::kEager, nullptr);
    return;
  }
  if (key.rfind(kResultKey, 0) == 0) {  // the peer measured this pair: use its result toward it
    const size_t threshold = std::strtoull(key.c_str() + std::strlen(kResultKey), nullptr, 10);
    if (threshold > 0) channel_->set_eager_threshold(src_task, std::min(threshold, options_.eager_threshold));
    Settle(src_task, fmt::format("eager threshold toward {}: {} B, measured by the peer", connector_->PeerName(src_task),
                                 channel_->eager_threshold(src_task)));
    return;
  }
  if (key != kAckKey) return;
  Peer& peer = peers_[src_task];
  if (!peer.measure) return;
  Measurement& m = *peer.measure;
  const auto now = Clock::now();
  const double us = std::chrono::duration<double, std::micro>(now - m.trial_started).count();
  double& best = m.eager(m.trial) ? m.best_eager_us[m.size_index(m.trial)] : m.best_rendezvous_us[m.size_index(m.trial)];
  if (m.trial >= 2 * m.sizes.size() && (best < 0 || us < best)) best = us;
  if (++m.trial == m.num_trials() || now >= m.budget_end) {
    Finish(src_task, /*gave_up=*/false);
  } else {
    SendTrial(src_task);
  }
}

void ThresholdProbe::Finish(int task, bool gave_up) {
  Peer& peer = peers_[task];
  std::unique_ptr<Measurement> m = std::move(peer.measure);
  if (m != nullptr) worker_->AddDemand(-1);
  std::string report;
  if (gave_up || m == nullptr) {
    report = fmt::format("eager threshold toward {}: {} B (configured; {})", connector_->PeerName(task),
                         channel_->eager_threshold(task), m == nullptr ? "no candidate size to measure" : "the peer did not answer the probes");
  } else {
    // The largest candidate up to which eager was never slower than rendezvous (by more than
    // kTolerance: timings this small jitter); the smallest candidate when rendezvous wins already
    // there. Sizes not measured both ways end the scan.
    size_t threshold = m->sizes.front();
    std::string timings;
    for (size_t i = 0; i < m->sizes.size(); ++i) {
      const double e = m->best_eager_us[i], r = m->best_rendezvous_us[i];
      if (e < 0 || r < 0) break;
      timings += fmt::format("{}{} B {:.1f}/{:.1f} us", timings.empty() ? "" : ", ", m->sizes[i], e, r);
      if (e > r * kTolerance) break;
      threshold = m->sizes[i];
    }
    // The budget ran out before every size was timed both ways (a loaded machine: the few
    // round trips are not worth a decision): keep the configured threshold.
    const bool complete = m->best_rendezvous_us.back() >= 0;
    if (complete) channel_->set_eager_threshold(task, threshold);
    report = fmt::format("eager threshold toward {}: {} B{}, measured in {:.2f} ms (round trips eager/rendezvous: {})",
                         connector_->PeerName(task), channel_->eager_threshold(task),
                         complete ? "" : " (configured: the budget ran out before every size was timed)",
                         std::chrono::duration<double, std::milli>(Clock::now() - m->started).count(), timings);
  }
  channel_->Send(task, WireKind::kTensor, kMeasureStep, fmt::format("{}{}", kResultKey, channel_->eager_threshold(task)),
                 Tensor(DType::kUInt8, TensorShape({0})), false, Protocol::kEager, nullptr);
  Settle(task, report);
}

void ThresholdProbe::Settle(int task, const std::string& report) {
  if (options_.log_thresholds) std::fprintf(stderr, "weft ucx %s: %s\n", options_.task.ToString().c_str(), report.c_str());
  std::lock_guard<std::mutex> l(mu_);
  thresholds_[task] = channel_->eager_threshold(task);
  reports_[task] = report;
  settled_cv_.notify_all();
}

void ThresholdProbe::CheckTimeouts() {
  const auto now = Clock::now();
  for (auto& [task, peer] : peers_) {
    if (peer.answering && now - peer.last_probe > kAnswerSpin) {
      peer.answering = false;
      worker_->AddDemand(-1);
    }
    if (peer.measure && (connector_->Failed(task) || now - peer.measure->trial_started > kAckTimeout)) {
      Finish(task, /*gave_up=*/true);
    }
  }
}

size_t ThresholdProbe::EagerThreshold(int task) const {
  std::lock_guard<std::mutex> l(mu_);
  auto it = thresholds_.find(task);
  return it == thresholds_.end() ? options_.eager_threshold : it->second;
}

std::string ThresholdProbe::ThresholdReport(int task) const {
  std::lock_guard<std::mutex> l(mu_);
  auto it = reports_.find(task);
  if (it != reports_.end()) return it->second;
  return fmt::format("eager threshold toward task #{}: {} B ({})", task, options_.eager_threshold,
                     options_.measure_eager_threshold ? "not measured yet" : "configured");
}

bool ThresholdProbe::WaitForThreshold(int task, std::chrono::milliseconds timeout) {
  std::unique_lock<std::mutex> l(mu_);
  return settled_cv_.wait_for(l, timeout, [&] {
    return !options_.measure_eager_threshold || thresholds_.count(task) > 0 || connector_->Failed(task);
  });
}

void ThresholdProbe::OnPeerFailed(int) {
  // The waiters' predicate reads the connector's failed flag, set before this runs; taking mu_
  // orders the notification after any waiter's check of it.
  std::lock_guard<std::mutex> l(mu_);
  settled_cv_.notify_all();
}

}  // namespace weft
