#include "distributed/ucx_rendezvous.h"

#include <algorithm>
#include <cstring>
#include <tuple>
#include <vector>

namespace weft {
namespace {

using Clock = std::chrono::steady_clock;
constexpr size_t kFinishedStepsKept = 4096;

}  // namespace

Status UcxRendezvous::TaskOf(std::string_view key, std::string_view device, int* task) const {
  *task = mgr_->transport().cluster().GlobalIndexOfDevice(device);
  if (*task < 0) {
    return errors::InvalidArgument("rendezvous key '{}': device '{}' is on no task of the cluster {}", key, device,
                                   mgr_->transport().cluster().ToJson());
  }
  return Status();
}

CollectiveChannel* UcxRendezvous::collective_channel(uint64_t* step) {
  *step = step_id_;
  return mgr_->transport().collective_channel();
}

Status UcxRendezvous::Send(const std::string& key, const RendezvousArgs& args, const Tensor& value, bool is_dead) {
  RendezvousKeyView k;
  if (Status s = RendezvousKeyView::Parse(key, &k); !s.ok()) return s;
  int dst = 0;
  if (Status s = TaskOf(key, k.dst_device, &dst); !s.ok()) return s;
  UcxTransport& transport = mgr_->transport();
  if (dst == transport.task_index()) return local_.Send(key, args, value, is_dead);
  if (!is_dead && !value.IsInitialized()) {
    return errors::InvalidArgument("rendezvous key '{}': sending an uninitialized tensor", key);
  }
  // Device memory: UCX takes device pointers when it has CUDA support, else the transport stages
  // the tensor through host bounce buffers (UcxTransportOptions::device_copier); neither: an error.
  if (value.IsInitialized() && value.memory_kind() == MemoryKind::kDevice && value.bytes() > 0 &&
      transport.device_path() == DevicePath::kNone) {
    return errors::Unimplemented("rendezvous key '{}': {} is in device memory, and the device path across tasks is {}",
                                 key, value.DebugString(), DevicePathName(transport.device_path()));
  }
  if (Status s = transport.PeerStatus(dst); !s.ok()) return s;
  // Not blocking: the transport keeps the tensor alive until UCX is done with it.
  UcxRendezvousMgr* mgr = mgr_;
  const uint64_t step = step_id_;
  transport.SendTensor(dst, step_id_, key, value, is_dead, [mgr, step](const Status& s) {  // s names the key
    if (s.ok()) return;
    std::shared_ptr<UcxRendezvous> r;
    {
      std::lock_guard<std::mutex> l(mgr->mu_);
      auto it = mgr->steps_.find(step);
      if (it != mgr->steps_.end()) r = it->second;
    }
    if (r) r->StartAbort(s);
  });
  return Status();
}

void UcxRendezvous::RecvAsync(const std::string& key, const RendezvousArgs& args, DoneCallback done) {
  RendezvousKeyView k;
  if (Status s = RendezvousKeyView::Parse(key, &k); !s.ok()) {
    done(s, Tensor(), false);
    return;
  }
  int src = 0;
  if (Status s = TaskOf(key, k.src_device, &src); !s.ok()) {
    done(s, Tensor(), false);
    return;
  }
  UcxTransport& transport = mgr_->transport();
  if (src == transport.task_index()) {
    local_.RecvAsync(key, args, std::move(done));
    return;
  }
  const auto start = transport.worker()->Now();  // (no clock read on the progress thread)
  PendingMap::iterator it;
  bool inserted;
  {
    std::lock_guard<std::mutex> l(mu_);
    std::tie(it, inserted) = pending_nodes_.TryEmplace(pending_, key);
    if (inserted) it->second = Pending{src, start, start + mgr_->recv_timeout(), std::move(done)};
  }
  if (!inserted) {  // a second Recv of the key in this step: local_ says AlreadyExists (or the abort)
    local_.RecvAsync(key, args, std::move(done));
    return;
  }
  transport.EnsureConnected(src);  // so that the peer's failure is noticed even if we never send to it
  if (args.into.IsInitialized()) transport.ReceiveInto(step_id_, key, args.into);
  transport.worker()->AddDemand(1);  // the progress thread spins while Recvs wait (UcxWorkerOptions::busy_spin)
  // Only this callback erases the entry, so `it` stays valid until it runs.
  local_.RecvAsync(key, args, [this, it](const Status& s, const Tensor& v, bool dead) { RemoteRecvDone(it, s, v, dead); });
  // The peer may have failed before we registered: if the value is not here, it never will be.
  Status peer = transport.PeerStatus(src);
  if (!peer.ok()) {
    bool still_pending;
    {
      std::lock_guard<std::mutex> l(mu_);
      still_pending = pending_.count(key) > 0;
    }
    if (still_pending) StartAbort(peer);
  }
}

void UcxRendezvous::RemoteRecvDone(PendingMap::iterator it, const Status& s, const Tensor& v, bool dead) {
  DoneCallback done;
  int src;
  Clock::time_point start;
  {
    std::lock_guard<std::mutex> l(mu_);
    done = std::move(it->second.done);
    src = it->second.src_task;
    start = it->second.start;
    pending_nodes_.Erase(pending_, it);
  }
  mgr_->transport().worker()->AddDemand(-1);
  const auto now = mgr_->transport().worker()->Now();
  // (Now() on the progress thread may be a little behind a start read on another thread.)
  mgr_->transport().AddWaitTime(
      src, std::max<int64_t>(0, std::chrono::duration_cast<std::chrono::microseconds>(now - start).count()));
  if (ThreadPool* pool = mgr_->callback_pool()) {
    pool->Schedule([done = std::move(done), s, v, dead] { done(s, v, dead); });
  } else {
    done(s, v, dead);
  }
}

void UcxRendezvous::StartAbort(const Status& status) {
  const auto& on_stall = mgr_->options_.on_stall;
  if (on_stall && (status.code() == Code::kDeadlineExceeded || status.code() == Code::kUnavailable) &&
      local_.abort_status().ok() && !stall_reported_.exchange(true)) {
    on_stall(step_id_, status);
  }
  local_.StartAbort(status);
}

bool UcxRendezvous::DriveUntil(const std::function<bool()>& ready) {
  return mgr_->transport().worker()->DriveUntil(ready);
}

std::string UcxRendezvous::DescribeWaiting() const {
  std::vector<std::string> recvs;
  std::map<std::string, int> remote;
  {
    std::lock_guard<std::mutex> l(mu_);
    for (const auto& [key, p] : pending_) remote.emplace(key, p.src_task);
  }
  for (const std::string& key : local_.WaitingKeys()) {
    auto it = remote.find(key);
    recvs.push_back(it == remote.end() ? fmt::format("Recv of '{}' (no Send yet)", key)
                                       : fmt::format("Recv of '{}' from {}", key, mgr_->transport().PeerName(it->second)));
  }
  return DescribeRecvs(recvs);
}

size_t UcxRendezvous::num_remote_pending() const {
  std::lock_guard<std::mutex> l(mu_);
  return pending_.size();
}

void UcxRendezvous::Arrived(const std::string& key, const Status& status, const Tensor& value, bool is_dead) {
  if (!status.ok()) {
    StartAbort(status);
    return;
  }
  Status s = local_.Send(key, {}, value, is_dead);
  if (!s.ok() && s.code() != Code::kAborted) {
    StartAbort(s.WithContext(fmt::format("step {}", step_id_)));
  }
}

void UcxRendezvous::CheckDeadlines(Clock::time_point now) {
  Status expired;
  {
    std::lock_guard<std::mutex> l(mu_);
    for (const auto& [key, p] : pending_) {
      if (now >= p.deadline) {
        expired = errors::DeadlineExceeded(
            "step {}: Recv of '{}' from {} waited {} ms without the tensor arriving (recv_timeout)", step_id_, key,
            mgr_->transport().PeerName(p.src_task),
            std::chrono::duration_cast<std::chrono::milliseconds>(now - p.start).count());
        break;
      }
    }
  }
  if (!expired.ok()) StartAbort(expired);
}

void UcxRendezvous::PeerFailed(int task, const Status& status) {
  bool waits_on_it = false;
  {
    std::lock_guard<std::mutex> l(mu_);
    for (const auto& [key, p] : pending_) waits_on_it |= p.src_task == task;
  }
  if (waits_on_it) StartAbort(status.WithContext(fmt::format("step {}", step_id_)));
}

UcxRendezvousMgr::UcxRendezvousMgr(UcxTransportOptions transport_options, UcxRendezvousOptions options)
    : options_(options), recv_timeout_ms_(options.recv_timeout.count()) {
  transport_ = std::make_unique<UcxTransport>(
      std::move(transport_options),
      [this](int src, uint64_t step, const std::string& key, const Status& s, const Tensor& v, bool dead) {
        OnMessage(src, step, key, s, v, dead);
      },
      [this](int task, const Status& s) { OnPeerFailure(task, s); });
  transport_->worker()->AddTickHook([this] { OnTick(); });
}

UcxRendezvousMgr::~UcxRendezvousMgr() {
  // Peers may still be pulling the data of our last sends (a collective ends here once it has
  // received everything, not when what it sent has arrived).
  transport_->WaitForSends(std::chrono::seconds(2));
  transport_->worker()->Stop();  // no more messages, failures or ticks
  std::map<uint64_t, std::shared_ptr<UcxRendezvous>> steps;
  {
    std::lock_guard<std::mutex> l(mu_);
    steps.swap(steps_);
  }
  for (auto& [step, r] : steps) r->StartAbort(errors::Aborted("the UCX rendezvous manager was destroyed"));
  transport_.reset();
}

Status UcxRendezvousMgr::ConnectAll() {
  const ClusterSpec& cluster = transport_->cluster();
  for (int t = 0; t < cluster.NumTasks(); ++t) {
    if (t == transport_->task_index()) continue;
    if (Status s = transport_->Connect(t); !s.ok()) return s;
  }
  return Status();
}

std::shared_ptr<UcxRendezvous> UcxRendezvousMgr::Find(uint64_t step_id) {
  std::lock_guard<std::mutex> l(mu_);
  auto& r = step_nodes_.TryEmplace(steps_, step_id).first->second;
  if (!r) r = std::make_shared<UcxRendezvous>(this, step_id);
  return r;
}

Status UcxRendezvousMgr::Cleanup(uint64_t step_id) {
  std::shared_ptr<UcxRendezvous> r;
  {
    std::lock_guard<std::mutex> l(mu_);
    auto it = steps_.find(step_id);
    if (it != steps_.end()) {
      r = std::move(it->second);
      step_nodes_.Erase(steps_, it);
    }
    finished_nodes_.TryEmplace(finished_, step_id);
    while (finished_.size() > kFinishedStepsKept) finished_nodes_.Erase(finished_, finished_.begin());
  }
  transport_->ForgetReceiveInto(step_id);
  if (UcxCollectiveChannel* ch = transport_->collective_channel(); ch != nullptr) ch->ForgetStep(step_id);
  // (No fmt here: this runs once per step, and per all-reduce in benchmarks.)
  if (!r) return Status();
  Status before = r->local_.abort_status();
  // Recvs still waiting complete with Aborted; with none, later Sends would go nowhere anyway.
  if (r->local_.num_pending() > 0) {
    r->StartAbort(Status(Code::kAborted, "step " + std::to_string(step_id) + " was cleaned up with a Recv still waiting"));
  }
  return before;
}

void UcxRendezvousMgr::WaitingRecv::SetKey(std::string_view k) {
  key_len = static_cast<uint16_t>(std::min(k.size(), kKeyBytes));
  std::memcpy(key_bytes, k.data(), key_len);
}

UcxRendezvousMgr::WaitingList::WaitingList(size_t max_recvs, size_t max_steps) {
  recvs_.reserve(max_recvs);
  remote_.reserve(max_recvs);
  steps_.reserve(max_steps);
}

void UcxRendezvousMgr::Waiting(WaitingList* out) const {
  // Only pushes within the reserved capacities below: no allocation.
  out->recvs_.clear();
  out->remote_.clear();
  out->steps_.clear();
  out->unlisted_ = 0;
  {
    std::lock_guard<std::mutex> l(mu_);
    for (const auto& [id, r] : steps_) {
      if (out->steps_.size() < out->steps_.capacity()) {
        out->steps_.push_back(r);
      } else {
        out->unlisted_++;
      }
    }
  }
  const auto now = Clock::now();
  for (const auto& r : out->steps_) {
    out->remote_.clear();
    {
      std::lock_guard<std::mutex> l(r->mu_);
      for (const auto& [key, p] : r->pending_) {
        if (out->remote_.size() == out->remote_.capacity()) break;
        WaitingRecv& w = out->remote_.emplace_back();
        w.step_id = r->step_id_;
        w.src_task = p.src_task;
        w.waited = std::chrono::duration_cast<std::chrono::milliseconds>(now - p.start);
        w.SetKey(key);
      }
    }
    // What local_ still waits for is what is listed (a remote entry whose Recv completed is not).
    r->local_.ForEachWaitingKey([&](std::string_view key) {
      if (out->recvs_.size() == out->recvs_.capacity()) {
        out->unlisted_++;
        return;
      }
      WaitingRecv& w = out->recvs_.emplace_back();
      w.step_id = r->step_id_;
      w.SetKey(key);
      for (const WaitingRecv& remote : out->remote_) {
        if (remote.key() == w.key()) {
          w.src_task = remote.src_task;
          w.waited = remote.waited;
          break;
        }
      }
    });
  }
  out->steps_.clear();  // the references only: a step cleaned up meanwhile goes now
}

int64_t UcxRendezvousMgr::num_dropped() const {
  std::lock_guard<std::mutex> l(mu_);
  return dropped_;
}

void UcxRendezvousMgr::OnMessage(int src_task, uint64_t step_id, const std::string& key, const Status& status,
                                 const Tensor& value, bool is_dead) {
  std::shared_ptr<UcxRendezvous> r;
  {
    std::lock_guard<std::mutex> l(mu_);
    if (finished_.count(step_id)) {
      dropped_++;
      return;
    }
    auto& slot = step_nodes_.TryEmplace(steps_, step_id).first->second;
    if (!slot) slot = std::make_shared<UcxRendezvous>(this, step_id);
    r = slot;
  }
  r->Arrived(key, status, value, is_dead);
}

void UcxRendezvousMgr::OnPeerFailure(int task, const Status& status) {
  std::vector<std::shared_ptr<UcxRendezvous>> steps;
  {
    std::lock_guard<std::mutex> l(mu_);
    for (auto& [id, r] : steps_) steps.push_back(r);
  }
  for (auto& r : steps) r->PeerFailed(task, status);
}

void UcxRendezvousMgr::OnTick() {
  std::vector<std::shared_ptr<UcxRendezvous>> steps;
  {
    std::lock_guard<std::mutex> l(mu_);
    for (auto& [id, r] : steps_) steps.push_back(r);
  }
  const auto now = Clock::now();
  for (auto& r : steps) r->CheckDeadlines(now);
}

}  // namespace weft
