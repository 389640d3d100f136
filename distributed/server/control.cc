#include "distributed/server/control.h"

#include <cstring>
#include <future>

namespace weft {
namespace {

using Clock = std::chrono::steady_clock;

Tensor BytesTensor(const std::string& bytes) {
  Tensor t(DType::kUInt8, TensorShape({static_cast<int64_t>(bytes.size())}));
  if (!bytes.empty()) std::memcpy(t.raw_data(), bytes.data(), bytes.size());
  return t;
}

}  // namespace

ControlChannel::ControlChannel(UcxTransport* transport, ServeHandler serve)
    : transport_(transport), serve_(std::move(serve)) {
  timer_ = std::thread([this] { TimerLoop(); });
  transport_->SetControlHandler(
      [this](int src, WireKind kind, uint64_t id, const std::string& method, const Status& s, const Tensor& body) {
        OnMessage(src, kind, id, method, s, body);
      },
      [this](int task, const Status& s) { OnPeerFailure(task, s); });
}

ControlChannel::~ControlChannel() {
  transport_->SetControlHandler(nullptr, nullptr);
  Shutdown();
  timer_.join();
}

void ControlChannel::Shutdown() {
  std::map<uint64_t, Pending> left;
  {
    std::lock_guard<std::mutex> l(mu_);
    shutdown_ = true;
    left.swap(pending_);
  }
  cv_.notify_all();
  for (auto& [id, p] : left) p.done({errors::Cancelled("{}: the control channel is shutting down", p.what), {}});
}

uint64_t ControlChannel::NextId() {
  std::lock_guard<std::mutex> l(mu_);
  return next_id_++;
}

void ControlChannel::Register(uint64_t id, int task, std::string what, std::chrono::milliseconds timeout,
                              Callback done) {
  {
    std::lock_guard<std::mutex> l(mu_);
    if (!shutdown_) {
      pending_[id] = {task, std::move(what), Clock::now() + timeout, std::move(done)};
      cv_.notify_all();
      return;
    }
  }
  done({errors::Cancelled("{}: the control channel is shutting down", what), {}});
}

void ControlChannel::CallAsync(int task, ControlMethod method, const std::string& body,
                               std::chrono::milliseconds timeout, Callback done) {
  const uint64_t id = NextId();
  const std::string what = fmt::format("{} on {}", ControlMethodName(method), transport_->PeerName(task));
  Register(id, task, what, timeout, std::move(done));
  transport_->SendMessage(task, WireKind::kControlRequest, id, ControlMethodName(method),
                          BytesTensor(EncodeRequestEnvelope(body)), false, [this, id, what](const Status& s) {
                            if (!s.ok()) Complete(id, {s.WithContext(what), {}});
                          });
}

namespace {
ControlResult Wait(const std::function<void(ControlChannel::Callback)>& start) {
  auto promise = std::make_shared<std::promise<ControlResult>>();
  std::future<ControlResult> f = promise->get_future();
  start([promise](ControlResult r) { promise->set_value(std::move(r)); });  // runs exactly once
  return f.get();  // bounded: every call completes by its deadline (TimerLoop)
}
}  // namespace

ControlResult ControlChannel::Call(int task, ControlMethod method, const std::string& body,
                                   std::chrono::milliseconds timeout) {
  return Wait([&](Callback done) { CallAsync(task, method, body, timeout, std::move(done)); });
}

ControlResult ControlChannel::CallRawForTesting(int task, uint64_t id, std::string bytes,
                                                std::chrono::milliseconds timeout) {
  return Wait([&](Callback done) {
    const std::string what = fmt::format("raw request #{} to {}", id, transport_->PeerName(task));
    Register(id, task, what, timeout, std::move(done));
    const Status s = transport_->SendRawForTesting(task, HeaderTag(transport_->task_index()), std::move(bytes));
    if (!s.ok()) Complete(id, {s.WithContext(what), {}});
  });
}

void ControlChannel::Complete(uint64_t id, ControlResult result) {
  Callback done;
  {
    std::lock_guard<std::mutex> l(mu_);
    auto it = pending_.find(id);
    if (it == pending_.end()) return;  // completed already (reply, failure or timeout)
    done = std::move(it->second.done);
    pending_.erase(it);
  }
  done(std::move(result));
}

void ControlChannel::OnPeerFailure(int task, const Status& status) {
  std::vector<uint64_t> ids;
  {
    std::lock_guard<std::mutex> l(mu_);
    for (const auto& [id, p] : pending_) {
      if (p.task == task) ids.push_back(id);
    }
  }
  for (uint64_t id : ids) Complete(id, {status, {}});
}

void ControlChannel::OnMessage(int src_task, WireKind kind, uint64_t id, const std::string& method,
                               const Status& status, const Tensor& body) {
  Status s = status;
  if (s.ok() && (body.dtype() != DType::kUInt8 || body.rank() != 1)) {
    s = errors::InvalidArgument("control: a {} body must be a uint8 vector, got {}", method, body.DebugString());
  }
  const std::string bytes = s.ok() ? std::string(static_cast<const char*>(body.raw_data()), body.bytes()) : "";
  if (kind == WireKind::kControlReply) {
    std::string reply;
    if (s.ok()) s = DecodeReplyEnvelope(bytes, fmt::format("{} reply from {}", method, transport_->PeerName(src_task)), &reply);
    Complete(id, {s, std::move(reply)});
    return;
  }
  // Captures the transport (which outlives the channel), not the channel: replies may come late.
  auto reply = [transport = transport_, src_task, id, method](const Status& st, const std::string& b) {
    transport->SendMessage(src_task, WireKind::kControlReply, id, method, BytesTensor(EncodeReplyEnvelope(st, b)),
                            false, [](const Status&) {});  // a peer gone before its reply: nothing to do
  };
  std::string request;
  if (s.ok()) {
    try {
      request = std::string(DecodeRequestEnvelope(bytes, fmt::format("{} request", method)));
    } catch (const Error& e) {
      s = e.status();
    }
  }
  if (serve_) {
    serve_(src_task, method, s, std::move(request), reply);
  } else {
    reply(errors::Unimplemented("control: this process serves no requests"), "");
  }
}

void ControlChannel::TimerLoop() {
  std::unique_lock<std::mutex> l(mu_);
  while (!shutdown_) {
    auto next = Clock::now() + std::chrono::seconds(1);
    std::vector<std::pair<uint64_t, std::string>> expired;
    const auto now = Clock::now();
    for (const auto& [id, p] : pending_) {
      if (p.deadline <= now) expired.emplace_back(id, p.what);
      else next = std::min(next, p.deadline);
    }
    if (!expired.empty()) {
      l.unlock();
      for (const auto& [id, what] : expired) {
        Complete(id, {errors::DeadlineExceeded("{}: no reply within the timeout", what), {}});
      }
      l.lock();
      continue;
    }
    cv_.wait_until(l, next);
  }
}

}  // namespace weft
