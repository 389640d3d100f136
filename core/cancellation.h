// Cancels a step: the first StartCancel wins, and every registered callback runs once.
//
//   CancellationManager cm;
//   auto token = cm.RegisterCallback([&](const Status& why) { pending.Fail(why); });
//   cm.StartCancel(errors::Aborted("node 'x' failed"));   // runs the callback now
//
// Thread-safe. A callback registered after cancellation runs at once in RegisterCallback.
#pragma once

#include <functional>
#include <map>
#include <mutex>

#include "core/status.h"

namespace weft {

class CancellationManager {
 public:
  using Callback = std::function<void(const Status&)>;
  using Token = int64_t;

  // Returns false if already cancelled (the status stays the first one).
  bool StartCancel(Status why);
  bool IsCancelled() const;
  Status status() const;
  Token RegisterCallback(Callback cb);
  // After it returns, the callback will not start (it may have already run).
  void DeregisterCallback(Token token);

 private:
  mutable std::mutex mu_;
  bool cancelled_ = false;
  Status status_;
  Token next_ = 0;
  std::map<Token, Callback> callbacks_;
};

}  // namespace weft
