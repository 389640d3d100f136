#include "distributed/server/control.h"

#include <cstring>
#include <future>

#include "core/byte_io.h"

namespace weft {
namespace {

using Clock = std::chrono::steady_clock;

constexpr const char* kMethodNames[] = {"RegisterGraph", "DeregisterGraph", "RunStep", "AbortStep", "Cleanup", "Health"};
constexpr uint32_t kMaxCount = 1 << 20;  // no list in a control message is longer

uint32_t Count(ByteReader& r, std::string_view what) {
  const uint32_t n = r.Pod<uint32_t>(what);
  if (n > kMaxCount || n > r.remaining()) r.Fail(fmt::format("{}: count {} is not plausible", what, n));
  return n;
}

void End(const ByteReader& r) {
  if (r.remaining() != 0) r.Fail(fmt::format("{} trailing bytes", r.remaining()));
}

void WriteStatus(ByteWriter& w, const Status& s) {
  w.Pod<uint8_t>(static_cast<uint8_t>(s.code()));
  w.Str(s.message());
}

Status ReadStatus(ByteReader& r) {
  const uint8_t code = r.Pod<uint8_t>("status code");
  if (code > static_cast<uint8_t>(Code::kUnauthenticated)) r.Fail(fmt::format("unknown status code {}", code));
  std::string message = r.Str("status message");
  if (code == 0) return Status();
  return Status(static_cast<Code>(code), std::move(message));
}

Tensor BytesTensor(const std::string& bytes) {
  Tensor t(DType::kUInt8, TensorShape({static_cast<int64_t>(bytes.size())}));
  if (!bytes.empty()) std::memcpy(t.raw_data(), bytes.data(), bytes.size());
  return t;
}

}  // namespace

const char* ControlMethodName(ControlMethod m) { return kMethodNames[static_cast<int>(m)]; }

Status ParseControlMethod(const std::string& name, ControlMethod* out) {
  for (size_t i = 0; i < std::size(kMethodNames); ++i) {
    if (name == kMethodNames[i]) {
      *out = static_cast<ControlMethod>(i);
      return Status();
    }
  }
  return errors::InvalidArgument("control: unknown method '{}'", name);
}

std::string EncodeRegisterGraph(const RegisterGraphRequest& r) {
  ByteWriter w;
  w.Pod<uint32_t>(static_cast<uint32_t>(r.partitions.size()));
  for (const auto& [device, graph] : r.partitions) {
    w.Str(device);
    w.Str(graph);
  }
  return std::move(w.out());
}

RegisterGraphRequest DecodeRegisterGraph(std::string_view body) {
  ByteReader r(body, "RegisterGraph request");
  RegisterGraphRequest out;
  const uint32_t n = Count(r, "partition count");
  if (n == 0) r.Fail("no partitions");
  for (uint32_t i = 0; i < n; ++i) {
    std::string device = r.Str("device name");
    out.partitions.emplace_back(std::move(device), r.Str("graph"));
  }
  End(r);
  return out;
}

std::string EncodeHandle(uint64_t handle) {
  ByteWriter w;
  w.Pod<uint64_t>(handle);
  return std::move(w.out());
}

uint64_t DecodeHandle(std::string_view body, const std::string& what) {
  ByteReader r(body, what);
  const uint64_t h = r.Pod<uint64_t>("graph handle");
  End(r);
  return h;
}

std::string EncodeRunStep(const RunStepRequest& q) {
  ByteWriter w;
  w.Pod<uint64_t>(q.handle);
  w.Pod<uint64_t>(q.step_id);
  w.Pod<uint32_t>(static_cast<uint32_t>(q.feeds.size()));
  for (const auto& [index, value] : q.feeds) {
    w.Pod<int64_t>(index);
    w.WriteTensor(value);
  }
  w.Pod<uint32_t>(static_cast<uint32_t>(q.fetches.size()));
  for (int64_t f : q.fetches) w.Pod<int64_t>(f);
  return std::move(w.out());
}

RunStepRequest DecodeRunStep(std::string_view body) {
  ByteReader r(body, "RunStep request");
  RunStepRequest q;
  q.handle = r.Pod<uint64_t>("graph handle");
  q.step_id = r.Pod<uint64_t>("step id");
  const uint32_t nf = Count(r, "feed count");
  for (uint32_t i = 0; i < nf; ++i) {
    const int64_t index = r.Pod<int64_t>("feed index");
    if (index < 0) r.Fail(fmt::format("negative feed index {}", index));
    q.feeds.emplace_back(index, r.ReadTensor(fmt::format("feed {}", index)));
  }
  const uint32_t nr = Count(r, "fetch count");
  for (uint32_t i = 0; i < nr; ++i) {
    const int64_t index = r.Pod<int64_t>("fetch index");
    if (index < 0) r.Fail(fmt::format("negative fetch index {}", index));
    q.fetches.push_back(index);
  }
  End(r);
  return q;
}

std::string EncodeRunStepReply(const RunStepReply& q) {
  ByteWriter w;
  w.Pod<uint32_t>(static_cast<uint32_t>(q.rets.size()));
  for (const auto& [index, value] : q.rets) {
    w.Pod<int64_t>(index);
    w.WriteTensor(value);
  }
  return std::move(w.out());
}

RunStepReply DecodeRunStepReply(std::string_view body) {
  ByteReader r(body, "RunStep reply");
  RunStepReply q;
  const uint32_t n = Count(r, "result count");
  for (uint32_t i = 0; i < n; ++i) {
    const int64_t index = r.Pod<int64_t>("result index");
    q.rets.emplace_back(index, r.ReadTensor(fmt::format("result {}", index)));
  }
  End(r);
  return q;
}

std::string EncodeAbortStep(const AbortStepRequest& q) {
  ByteWriter w;
  w.Pod<uint64_t>(q.step_id);
  WriteStatus(w, q.status);
  return std::move(w.out());
}

AbortStepRequest DecodeAbortStep(std::string_view body) {
  ByteReader r(body, "AbortStep request");
  AbortStepRequest q;
  q.step_id = r.Pod<uint64_t>("step id");
  q.status = ReadStatus(r);
  if (q.status.ok()) r.Fail("an abort with an OK status");
  End(r);
  return q;
}

std::string EncodeStepId(uint64_t step_id) { return EncodeHandle(step_id); }

uint64_t DecodeStepId(std::string_view body, const std::string& what) {
  ByteReader r(body, what);
  const uint64_t s = r.Pod<uint64_t>("step id");
  End(r);
  return s;
}

std::string EncodeHealthReply(const HealthReply& h) {
  ByteWriter w;
  w.Str(h.task);
  w.Pod<uint32_t>(static_cast<uint32_t>(h.devices.size()));
  for (const std::string& d : h.devices) w.Str(d);
  w.Pod<int64_t>(h.graphs);
  w.Pod<int64_t>(h.steps_running);
  return std::move(w.out());
}

HealthReply DecodeHealthReply(std::string_view body) {
  ByteReader r(body, "Health reply");
  HealthReply h;
  h.task = r.Str("task");
  const uint32_t n = Count(r, "device count");
  for (uint32_t i = 0; i < n; ++i) h.devices.push_back(r.Str("device"));
  h.graphs = r.Pod<int64_t>("graphs");
  h.steps_running = r.Pod<int64_t>("steps running");
  End(r);
  return h;
}

std::string EncodeEmpty() { return {}; }

void DecodeEmpty(std::string_view body, const std::string& what) {
  ByteReader r(body, what);
  End(r);
}

std::string EncodeRequestEnvelope(const std::string& body) {
  ByteWriter w;
  w.Pod<uint32_t>(kControlVersion);
  w.out() += body;
  return std::move(w.out());
}

std::string_view DecodeRequestEnvelope(std::string_view bytes, const std::string& what) {
  ByteReader r(bytes, what);
  const uint32_t version = r.Pod<uint32_t>("control version");
  if (version != kControlVersion) {
    throw Error(errors::InvalidArgument("{}: control version {} (this build speaks version {})", what, version,
                                        kControlVersion));
  }
  return bytes.substr(r.pos());
}

std::string EncodeReplyEnvelope(const Status& status, const std::string& body) {
  ByteWriter w;
  w.Pod<uint32_t>(kControlVersion);
  WriteStatus(w, status);
  if (status.ok()) w.out() += body;
  return std::move(w.out());
}

Status DecodeReplyEnvelope(std::string_view bytes, const std::string& what, std::string* body) {
  try {
    ByteReader r(bytes, what);
    const uint32_t version = r.Pod<uint32_t>("control version");
    if (version != kControlVersion) {
      return errors::InvalidArgument("{}: control version {} (this build speaks version {})", what, version,
                                     kControlVersion);
    }
    Status s = ReadStatus(r);
    if (!s.ok()) {
      End(r);
      return s;
    }
    body->assign(bytes.substr(r.pos()));
    return Status();
  } catch (const Error& e) {
    return e.status();
  }
}

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
