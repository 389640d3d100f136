#include "runtime/collectives/collective.h"

#include <fmt/format.h>

#include <cstring>
#include <set>

#include "runtime/rendezvous.h"
#include "runtime/trace_ring.h"

namespace weft {

std::string TaskOf(const std::string& device) { return device.substr(0, device.find("/device:")); }

std::vector<std::string> ParseGroupDevices(const std::string& attr, int group_size, int rank,
                                           const std::string& own_device, const std::string& what) {
  std::vector<std::string> devices;
  size_t start = 0;
  while (start <= attr.size() && !attr.empty()) {
    const size_t comma = attr.find(',', start);
    devices.push_back(attr.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  if (devices.empty()) {
    // Unset: the group is this process's CPU devices 0..n-1 (the in-process replicas).
    const std::string task = TaskOf(own_device);
    for (int i = 0; i < group_size; ++i) devices.push_back(fmt::format("{}/device:CPU:{}", task, i));
  }
  WEFT_REQUIRE(static_cast<int>(devices.size()) == group_size,
               "{}: group_devices names {} devices for a group of {}: '{}'", what, devices.size(), group_size, attr);
  std::set<std::string> seen;
  for (const std::string& d : devices) {
    WEFT_REQUIRE(d.rfind("/job:", 0) == 0 && d.find("/device:") != std::string::npos,
                 "{}: group_devices entry '{}' is not a full device name (/job:J/replica:R/task:T/device:TYPE:N)", what,
                 d);
    WEFT_REQUIRE(seen.insert(d).second, "{}: device '{}' appears twice in group_devices", what, d);
  }
  WEFT_REQUIRE(devices[static_cast<size_t>(rank)] == own_device,
               "{}: rank {} is '{}' in group_devices but the node runs on '{}'", what, rank,
               devices[static_cast<size_t>(rank)], own_device);
  return devices;
}

bool AllInOneTask(const std::vector<std::string>& devices) {
  for (const std::string& d : devices) {
    if (TaskOf(d) != TaskOf(devices.front())) return false;
  }
  return true;
}

std::string CollectiveKey(const CollectiveParams& p, int from, int to, const std::string& what) {
  // Built by hand, not with fmt::format: two are built per message of every collective, and the
  // formatting's cost showed in small all-reduces (bench/README.md, All-reduce).
  const std::string& a = p.devices[static_cast<size_t>(from)];
  const std::string& b = p.devices[static_cast<size_t>(to)];
  const std::string group = std::to_string(p.group_key), instance = std::to_string(p.instance_key);
  std::string key;
  key.reserve(a.size() + b.size() + group.size() + instance.size() + what.size() + 16);
  key.append(a).append(";0;").append(b).append(";_coll/").append(group).append("/").append(instance);
  key.append("/").append(what).append(";0:0");
  return key;
}

Tensor FlatSlice(const Tensor& t, int64_t begin, int64_t n, TensorShape shape, const Reducer& reducer) {
  const size_t elem = DTypeSize(t.dtype());
  char* base = static_cast<char*>(t.raw_data()) + static_cast<size_t>(begin) * elem;
  if (reinterpret_cast<uintptr_t>(base) % kTensorAlignment != 0) {  // tensors start aligned: copy
    Tensor copy = reducer.Allocate(t.dtype(), shape);
    reducer.Copy(copy.raw_data(), base, static_cast<size_t>(n) * elem);
    return copy;
  }
  auto buffer = std::make_shared<Buffer>(base, static_cast<size_t>(n) * elem, t.memory_kind(),
                                         [keep = t.buffer()] {});  // keeps the whole buffer alive
  return Tensor::FromBuffer(t.dtype(), std::move(shape), std::move(buffer));
}

std::shared_ptr<Collective> Collective::Create(CollectiveParams params, CollectiveContext* context, Rendezvous* rendezvous,
                                               Done done) {
  WEFT_REQUIRE(context != nullptr, "{}: a collective needs a CollectiveContext", params.what);
  std::shared_ptr<Collective> c(new Collective(std::move(params), context, rendezvous, std::move(done)));
  c->watch_id_ = context->Watch(c);
  return c;
}

Collective::Collective(CollectiveParams params, CollectiveContext* context, Rendezvous* rendezvous, Done done)
    : p_(std::move(params)), context_(context), rendezvous_(rendezvous), done_(std::move(done)),
      waiting_(static_cast<size_t>(p_.group_size), 0) {
  if (rendezvous_ != nullptr) channel_ = rendezvous_->collective_channel(&channel_step_);
}

Collective::~Collective() { context_->Forget(watch_id_); }

std::string Collective::Describe() const {
  return fmt::format("{}: group {} instance {} rank {} of {}", p_.what, p_.group_key, p_.instance_key, p_.rank,
                     p_.group_size);
}

void Collective::Start(DType dtype) {
  dtype_ = dtype;
  start_thread_ = std::this_thread::get_id();
  starting_ = true;
  Enter();
  deadline_ = std::chrono::steady_clock::now() + p_.timeout;
}

void Collective::EndStart() {
  starting_ = false;
  Leave();
}

void Collective::Enter() {
  std::lock_guard<std::mutex> l(mu_);
  ++active_;
}

void Collective::Leave() {
  Status status;
  Tensor output;
  {
    std::lock_guard<std::mutex> l(mu_);
    if (--active_ > 0 || !has_deferred_) return;
    has_deferred_ = false;
    status = std::move(deferred_status_);
    output = std::move(deferred_output_);
  }
  Deliver(status, output);
}

void Collective::End(const Status& status, const Tensor& output) {
  if (ended_.exchange(true)) return;
  {
    std::lock_guard<std::mutex> l(mu_);
    if (active_ > 0) {
      has_deferred_ = true;
      deferred_status_ = status;
      deferred_output_ = output;
      return;
    }
  }
  Deliver(status, output);
}

void Collective::Deliver(const Status& status, const Tensor& output) {
  // Across processes the end often comes on the transport's progress thread: what follows the
  // collective (the executor runs the next kernels) must not run there.
  if (p_.complete_on_pool && std::this_thread::get_id() != start_thread_) {
    context_->pool().Schedule([done = done_, status, output] { done(status, output); });
    return;
  }
  done_(status, output);
}

void Collective::Trace(TraceKind kind, int peer, const std::string& what, int64_t start_ns, const Status& s) const {
  TraceRing* ring = context_->trace_ring();
  if (ring == nullptr) return;
  ring->Record({.kind = kind, .start_ns = start_ns, .end_ns = TraceRing::NowNanos(), .name = what,
                .op = kind == TraceKind::kSend ? "CollectiveSend" : "CollectiveRecv",
                .detail = s.ok() ? std::string_view(p_.devices[static_cast<size_t>(peer)]) : std::string_view(s.message()),
                .group = static_cast<int32_t>(p_.group_key), .instance = static_cast<int32_t>(p_.instance_key),
                .failed = !s.ok()});
}

void Collective::Send(int to, const std::string& what, const Tensor& value) {
  if (ended()) return;
  const int64_t start_ns = context_->trace_ring() != nullptr ? TraceRing::NowNanos() : 0;
  Status s = rendezvous_->Send(CollectiveKey(p_, p_.rank, to, what), {}, value, false);
  Trace(TraceKind::kSend, to, what, start_ns, s);
  if (!s.ok()) Fail(s);
}

void Collective::Recv(int from, const std::string& what, int64_t expect_elements,
                      std::function<void(const Tensor&)> fn, const Tensor& into) {
  if (ended()) return;
  {
    std::lock_guard<std::mutex> l(mu_);
    ++waiting_[static_cast<size_t>(from)];
  }
  RendezvousArgs args;
  args.into = into;
  const int64_t start_ns = context_->trace_ring() != nullptr ? TraceRing::NowNanos() : 0;
  rendezvous_->RecvAsync(CollectiveKey(p_, from, p_.rank, what), args,
                         [self = shared_from_this(), from, what, expect_elements, fn = std::move(fn), start_ns](
                             const Status& s, const Tensor& t, bool) {
                           self->Received(from, what, expect_elements, fn, start_ns, s, t);
                         });
}

void Collective::Received(int from, const std::string& what, int64_t expect_elements,
                          const std::function<void(const Tensor&)>& fn, int64_t start_ns, const Status& s,
                          const Tensor& t) {
  {
    std::lock_guard<std::mutex> l(mu_);
    --waiting_[static_cast<size_t>(from)];
  }
  Trace(TraceKind::kRecv, from, what, start_ns, s);
  Enter();
  Activity active(this);
  if (ended()) return;
  if (!s.ok()) {
    Fail(s);
    return;
  }
  if (expect_elements != kUnchecked &&
      (t.dtype() != dtype_ || (expect_elements >= 0 && t.num_elements() != expect_elements))) {
    Fail(errors::InvalidArgument(
        "{}: member {} ({}) sent '{}' as {} with {} elements, expected {} with {}: the members' inputs differ",
        Describe(), from, p_.devices[static_cast<size_t>(from)], what, DTypeName(t.dtype()), t.num_elements(),
        DTypeName(dtype_), expect_elements));
    return;
  }
  Tensor value;
  try {
    value = reducer().Adopt(t);  // a device member computes on its own device
  } catch (const Error& e) {
    Fail(e.status().WithContext(
        fmt::format("{}: '{}' from member {} ({})", Describe(), what, from, p_.devices[static_cast<size_t>(from)])));
    return;
  }
  try {
    fn(value);
  } catch (const Error& e) {
    Fail(e.status());
  }
}

bool Collective::UsesChannel(int peer, int message, size_t bytes) const {
  return channel_ != nullptr && p_.reducer->on_host() &&
         channel_->RemoteTask(p_.devices[static_cast<size_t>(peer)]) >= 0 &&
         channel_->Carries({p_.group_key, p_.instance_key, message}, bytes);
}

void Collective::SendSlot(int to, int message, const std::string& what, const Tensor& value) {
  if (!UsesChannel(to, message, value.bytes())) {
    Send(to, what, value);
    return;
  }
  if (ended()) return;
  const int64_t start_ns = context_->trace_ring() != nullptr ? TraceRing::NowNanos() : 0;
  channel_->Send(channel_->RemoteTask(p_.devices[static_cast<size_t>(to)]), channel_step_,
                 {p_.group_key, p_.instance_key, message}, value, [self = shared_from_this()](const Status& s) {
                   if (!s.ok()) self->Fail(s);
                 });
  Trace(TraceKind::kSend, to, what, start_ns, Status());
}

void Collective::RecvSlot(int from, int message, const std::string& what, const TensorShape& shape,
                          std::function<void(const Tensor&)> fn) {
  const size_t bytes = static_cast<size_t>(shape.num_elements()) * DTypeSize(dtype_);
  if (!UsesChannel(from, message, bytes)) {
    Recv(from, what, shape.num_elements(), std::move(fn));
    return;
  }
  if (ended()) return;
  {
    std::lock_guard<std::mutex> l(mu_);
    ++waiting_[static_cast<size_t>(from)];
  }
  const int64_t start_ns = context_->trace_ring() != nullptr ? TraceRing::NowNanos() : 0;
  channel_->Recv(channel_->RemoteTask(p_.devices[static_cast<size_t>(from)]), channel_step_,
                 {p_.group_key, p_.instance_key, message}, dtype_, shape,
                 [self = shared_from_this(), from, what, n = shape.num_elements(), fn = std::move(fn), start_ns](
                     const Status& s, const Tensor& t) { self->Received(from, what, n, fn, start_ns, s, t); });
}

void Collective::RunLocal(std::function<void()> fn, bool cheap) {
  Enter();  // held until the task ran, wherever it runs
  auto guarded = [self = shared_from_this(), fn = std::move(fn)] {
    Activity active(self.get());
    if (self->ended()) return;
    try {
      fn();
    } catch (const Error& e) {
      self->Fail(e.status());
    }
  };
  if (cheap || (starting_.load() && std::this_thread::get_id() == start_thread_)) {
    guarded();
  } else {
    context_->pool().Schedule(std::move(guarded));
  }
}

void Collective::Finish(const Tensor& output) { End(Status(), output); }

void Collective::Fail(const Status& status) { End(status, Tensor()); }

void Collective::CheckDeadline(std::chrono::steady_clock::time_point now) {
  if (ended() || now < deadline_.load()) return;
  std::string missing;
  {
    std::lock_guard<std::mutex> l(mu_);
    for (int r = 0; r < p_.group_size; ++r) {
      if (waiting_[static_cast<size_t>(r)] > 0) {
        missing += fmt::format("{}rank {} ({})", missing.empty() ? "" : ", ", r, p_.devices[static_cast<size_t>(r)]);
      }
    }
  }
  Fail(errors::DeadlineExceeded("{}: no message from {} within the collective timeout of {} ms (a member is "
                                "missing, failed or its inputs differ)",
                                Describe(), missing.empty() ? "the other members" : missing, p_.timeout.count()));
}

}  // namespace weft
