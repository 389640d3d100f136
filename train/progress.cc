#include "train/progress.h"

#include <unistd.h>

#include <cmath>

namespace weft::train {
namespace {

std::string Duration(double seconds) {
  const int64_t s = static_cast<int64_t>(std::llround(seconds));
  if (s >= 3600) return fmt::format("{}:{:02}:{:02}", s / 3600, (s / 60) % 60, s % 60);
  if (s >= 60) return fmt::format("{}:{:02}", s / 60, s % 60);
  return fmt::format("{}s", s);
}

}  // namespace

ProgressBar::ProgressBar(int64_t total_steps, std::FILE* out)
    : total_(total_steps), out_(out), tty_(isatty(fileno(out)) != 0), start_(std::chrono::steady_clock::now()) {
  last_draw_ = start_ - std::chrono::seconds(1);
}

std::string ProgressBar::FormatLogs(const Logs& logs) {
  std::string s;
  // Keras' order: loss first, then the rest by name.
  auto it = logs.find("loss");
  if (it != logs.end()) s += fmt::format(" - loss: {:.4f}", it->second);
  for (const auto& [k, v] : logs) {
    if (k != "loss") s += fmt::format(" - {}: {:.4f}", k, v);
  }
  return s;
}

std::string ProgressBar::Line(int64_t steps, int64_t samples, const Logs& logs, bool final) const {
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  std::string line;
  if (total_ > 0) {
    const int width = static_cast<int>(std::to_string(total_).size());
    constexpr int kBar = 30;
    const int filled = static_cast<int>(kBar * std::min<int64_t>(steps, total_) / total_);
    std::string bar(static_cast<size_t>(filled), '=');
    if (filled < kBar) bar += '>' + std::string(static_cast<size_t>(kBar - filled - 1), '.');
    line = fmt::format("{:>{}}/{} [{}]", steps, width, total_, bar);
  } else {
    line = fmt::format("{}", steps);
  }
  const double per_step = steps > 0 ? elapsed / static_cast<double>(steps) : 0.0;
  if (!final && total_ > 0) {
    line += " - ETA: " + Duration(per_step * static_cast<double>(total_ - steps));
  } else {
    line += fmt::format(" - {} {}ms/step", Duration(elapsed), std::llround(per_step * 1000.0));
  }
  line += FormatLogs(logs);
  if (elapsed > 0) line += fmt::format(" - {:.0f} img/s", static_cast<double>(samples) / elapsed);
  return line;
}

void ProgressBar::Begin(int epoch, int epochs) {
  std::fprintf(out_, "Epoch %d/%d\n", epoch, epochs);
  std::fflush(out_);
}

void ProgressBar::Update(int64_t steps, int64_t samples, const Logs& logs) {
  if (tty_) {
    const auto now = std::chrono::steady_clock::now();
    if (now - last_draw_ < std::chrono::milliseconds(100)) return;
    last_draw_ = now;
    std::fprintf(out_, "\r%s\033[K", Line(steps, samples, logs, false).c_str());
    std::fflush(out_);
  } else if (total_ > 0 && steps >= next_plain_ && steps < total_) {
    if (steps > 0) {
      std::fprintf(out_, "%s\n", Line(steps, samples, logs, false).c_str());
      std::fflush(out_);
    }
    next_plain_ = steps + std::max<int64_t>(1, total_ / 10);
  }
}

void ProgressBar::Finish(int64_t steps, int64_t samples, const Logs& logs) {
  std::fprintf(out_, "%s%s%s\n", tty_ ? "\r" : "", Line(steps, samples, logs, true).c_str(), tty_ ? "\033[K" : "");
  std::fflush(out_);
}

}  // namespace weft::train
