// Keras-style progress output for one epoch of Fit:
//
//   Epoch 1/3
//   938/938 [==============================] - 9s 9ms/step - loss: 0.5012 - accuracy: 0.8231 - 6812 img/s
//
// On a terminal the bar is redrawn in place (at most 10 times a second) with an ETA; otherwise
// plain lines are written, one per tenth of the epoch and one at its end.
#pragma once

#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "train/model.h"

namespace weft::train {

// Everything Fit prints goes through one ProgressBar per epoch, so that everything lands in the
// one stream a caller chose (FitOptions::progress_out).
class ProgressBar {
 public:
  // total_steps: -1 when unknown. `out`: not owned, not null; the bar flushes it after each write.
  ProgressBar(int64_t total_steps, std::FILE* out = stdout);
  // The epoch's heading, "Epoch 2/5" (both 1-based), before its first Update.
  void Begin(int epoch, int epochs);
  // After each step: steps and samples done so far in this epoch, and the running logs.
  void Update(int64_t steps, int64_t samples, const Logs& logs);
  // At the end of the epoch, with the final logs (validation included).
  void Finish(int64_t steps, int64_t samples, const Logs& logs);

  static std::string FormatLogs(const Logs& logs);  // " - loss: 0.5012 - accuracy: 0.8231"

 private:
  std::string Line(int64_t steps, int64_t samples, const Logs& logs, bool final) const;

  int64_t total_;
  std::FILE* out_;
  bool tty_;
  std::chrono::steady_clock::time_point start_, last_draw_;
  int64_t next_plain_ = 0;  // next step at which a plain line is due
};

}  // namespace weft::train
