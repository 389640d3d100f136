// The eager/rendezvous threshold measured on the live endpoint (UcxTransport, "protocol threshold
// calculation"): after connecting, the lower-numbered task of the pair times round trips of a few sizes sent
// both ways and keeps the largest size up to which eager is never slower; it tells the peer, which
// uses the same threshold in the other direction. Trials run on the
// progress thread, each started by the previous one's ack; the peer answers every probe with an
// empty ack. Probes carry step kMeasureStep and are never delivered to the rendezvous.
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "distributed/ucx/transport_internal.h"

namespace weft {
namespace {
using Clock = std::chrono::steady_clock;
constexpr const char* kProbeKey = "weft:threshold-probe";
constexpr const char* kAckKey = "weft:threshold-ack";
constexpr const char* kResultKey = "weft:threshold-result:";
constexpr auto kAckTimeout = std::chrono::seconds(1);
constexpr double kTolerance = 1.1;
constexpr auto kAnswerSpin = std::chrono::milliseconds(50);
}  // namespace

void UcxTransport::StartMeasure(int task) {
  Peer& peer = PeerAt(task);
  auto m = std::make_unique<Measurement>();
  for (size_t size : options_.threshold_candidates) {
    if (size > 0 && size <= options_.eager_threshold) m->sizes.push_back(size);
  }
  if (m->sizes.empty() || options_.measure_reps <= 0) {
    FinishMeasure(task, /*gave_up=*/true);
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

void UcxTransport::SendTrial(int task) {
  Measurement& m = *PeerAt(task).measure;
  const size_t t = m.trial;
  m.trial_started = Clock::now();
  SendTensorImpl(task, WireKind::kTensor, kMeasureStep, kProbeKey, m.values[m.size_index(t)], false,
                 m.eager(t) ? Protocol::kEager : Protocol::kRendezvous, nullptr);
}

void UcxTransport::OnMeasureMessage(int src_task, const std::string& key) {
  if (key == kProbeKey) {  // the peer measures: answer at once, and spin until it is done
    Peer& peer = PeerAt(src_task);
    if (!peer.answering) {
      peer.answering = true;
      worker_->AddDemand(1);  // released by CheckMeasureTimeouts once the probes stop
    }
    peer.last_probe = Clock::now();
    SendTensorImpl(src_task, WireKind::kTensor, kMeasureStep, kAckKey, Tensor(DType::kUInt8, TensorShape({0})), false, Protocol::kEager,
                   nullptr);
    return;
  }
  if (key.rfind(kResultKey, 0) == 0) {  // the peer measured this pair: use its result toward it
    Peer& peer = PeerAt(src_task);
    const size_t threshold = std::strtoull(key.c_str() + std::strlen(kResultKey), nullptr, 10);
    if (threshold > 0) peer.eager_threshold = std::min(threshold, options_.eager_threshold);
    SettleThreshold(src_task, fmt::format("eager threshold toward {}: {} B, measured by the peer", PeerName(src_task),
                                          peer.eager_threshold));
    return;
  }
  if (key != kAckKey) return;
  Peer& peer = PeerAt(src_task);
  if (!peer.measure) return;
  Measurement& m = *peer.measure;
  const auto now = Clock::now();
  const double us = std::chrono::duration<double, std::micro>(now - m.trial_started).count();
  double& best = m.eager(m.trial) ? m.best_eager_us[m.size_index(m.trial)] : m.best_rendezvous_us[m.size_index(m.trial)];
  if (m.trial >= 2 * m.sizes.size() && (best < 0 || us < best)) best = us;
  if (++m.trial == m.num_trials() || now >= m.budget_end) {
    FinishMeasure(src_task, /*gave_up=*/false);
  } else {
    SendTrial(src_task);
  }
}

void UcxTransport::FinishMeasure(int task, bool gave_up) {
  Peer& peer = PeerAt(task);
  std::unique_ptr<Measurement> m = std::move(peer.measure);
  if (m != nullptr) worker_->AddDemand(-1);
  std::string report;
  if (gave_up || m == nullptr) {
    report = fmt::format("eager threshold toward {}: {} B (configured; {})", PeerName(task), peer.eager_threshold,
                         m == nullptr ? "no candidate size to measure" : "the peer did not answer the probes");
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
    if (complete) peer.eager_threshold = threshold;
    report = fmt::format("eager threshold toward {}: {} B{}, measured in {:.2f} ms (round trips eager/rendezvous: {})",
                         PeerName(task), peer.eager_threshold,
                         complete ? "" : " (configured: the budget ran out before every size was timed)",
                         std::chrono::duration<double, std::milli>(Clock::now() - m->started).count(), timings);
  }
  SendTensorImpl(task, WireKind::kTensor, kMeasureStep, fmt::format("{}{}", kResultKey, peer.eager_threshold),
                 Tensor(DType::kUInt8, TensorShape({0})), false, Protocol::kEager, nullptr);
  SettleThreshold(task, report);
}

void UcxTransport::SettleThreshold(int task, const std::string& report) {
  if (const char* log = std::getenv("WEFT_UCX_LOG"); log != nullptr && std::string(log) == "1") {
    std::fprintf(stderr, "weft ucx %s: %s\n", options_.task.ToString().c_str(), report.c_str());
  }
  std::lock_guard<std::mutex> l(mu_);
  thresholds_[task] = PeerAt(task).eager_threshold;
  threshold_reports_[task] = report;
  connected_cv_.notify_all();
}

void UcxTransport::CheckMeasureTimeouts() {
  const auto now = Clock::now();
  for (auto& [task, peer] : peers_) {
    if (peer->answering && now - peer->last_probe > kAnswerSpin) {
      peer->answering = false;
      worker_->AddDemand(-1);
    }
    if (peer->measure && (peer->failed || now - peer->measure->trial_started > kAckTimeout)) {
      FinishMeasure(task, /*gave_up=*/true);
    }
  }
}

size_t UcxTransport::EagerThreshold(int task) const {
  std::lock_guard<std::mutex> l(mu_);
  auto it = thresholds_.find(task);
  return it == thresholds_.end() ? options_.eager_threshold : it->second;
}

std::string UcxTransport::ThresholdReport(int task) const {
  std::lock_guard<std::mutex> l(mu_);
  auto it = threshold_reports_.find(task);
  if (it != threshold_reports_.end()) return it->second;
  return fmt::format("eager threshold toward task #{}: {} B ({})", task, options_.eager_threshold,
                     options_.measure_eager_threshold ? "not measured yet" : "configured");
}

bool UcxTransport::WaitForThreshold(int task, std::chrono::milliseconds timeout) {
  std::unique_lock<std::mutex> l(mu_);
  return connected_cv_.wait_for(l, timeout, [&] {
    return !options_.measure_eager_threshold || thresholds_.count(task) > 0 || peer_status_.count(task) > 0;
  });
}

}  // namespace weft
