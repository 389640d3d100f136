// Strategy's status board: a sliding window of training steps (train/strategy.h).
#include <algorithm>
#include <filesystem>
#include <fstream>

#include <fmt/format.h>

#include "train/strategy.h"

namespace weft {

namespace {
// The window the rates are taken over: long enough to span several steps of a slow model, short
// enough to show a change within seconds.
constexpr std::chrono::seconds kWindow{2};
}  // namespace

void Strategy::set_status_file(std::string path) { status_file_ = std::move(path); }

StrategyStatus Strategy::status() const {
  std::lock_guard<std::mutex> l(status_mu_);
  return StatusLocked();
}

StrategyStatus Strategy::StatusLocked() const {
  StrategyStatus s;
  s.step = status_steps_;
  if (status_window_.empty()) return s;
  const StatusSample& first = status_window_.front();
  const StatusSample& last = status_window_.back();
  s.collective_seconds = last.collective_seconds - status_base_collective_;
  const double span = std::chrono::duration<double>(last.at - first.at).count();
  if (span > 0) {
    s.images_per_second = static_cast<double>(last.examples - first.examples) / span;
    s.collective_fraction = std::clamp((last.collective_seconds - first.collective_seconds) / span, 0.0, 1.0);
  }
  return s;
}

void Strategy::RecordStep(int64_t examples, double collective_seconds) const {
  std::lock_guard<std::mutex> l(status_mu_);
  const auto now = std::chrono::steady_clock::now();
  if (status_base_collective_ < 0) {
    // The first step's own examples and collective time have no start to be measured from: the
    // window starts at its end.
    status_base_collective_ = collective_seconds;
  } else {
    status_examples_ += examples;
  }
  ++status_steps_;
  status_window_.push_back({now, status_examples_, collective_seconds});
  while (status_window_.size() > 2 && now - status_window_[1].at >= kWindow) status_window_.pop_front();
  if (status_file_.empty() || now - status_written_ < std::chrono::seconds(1)) return;
  status_written_ = now;
  const StrategyStatus s = StatusLocked();
  const std::string tmp = status_file_ + ".tmp";
  {
    std::ofstream out(tmp, std::ios::trunc);
    out << fmt::format("step {}\nimages_per_second {:.1f}\ncollective_fraction {:.3f}\ncollective_seconds {:.3f}\n",
                       s.step, s.images_per_second, s.collective_fraction, s.collective_seconds);
    if (!out) return;  // a status file is a view: training goes on without it
  }
  std::error_code ec;
  std::filesystem::rename(tmp, status_file_, ec);
}

}  // namespace weft
