#include "runtime/rendezvous.h"

#include <charconv>
#include <vector>

namespace weft {

std::string RendezvousKey::ToString() const {
  return fmt::format("{};{:x};{};{};{}:{}", src_device, src_incarnation, dst_device, tensor_name, frame_id, iter_id);
}

Status RendezvousKeyView::Parse(std::string_view key, RendezvousKeyView* out) {
  auto bad = [&](const char* why) {
    return errors::InvalidArgument("rendezvous key '{}': {} (expected "
                                   "src_device;src_incarnation;dst_device;tensor_name;frame:iter)", key, why);
  };
  // Split at ';' with find (memchr), not a loop over the characters: every message across
  // processes parses its key twice, so the parse is on the per-message path (bench/README.md).
  std::string_view parts[5];
  size_t n = 0, start = 0;
  for (;;) {
    const size_t semi = key.find(';', start);
    if (n == 5) return bad("it does not have 5 parts");
    parts[n++] = key.substr(start, semi == std::string_view::npos ? std::string_view::npos : semi - start);
    if (semi == std::string_view::npos) break;
    start = semi + 1;
  }
  if (n != 5) return bad("it does not have 5 parts");
  out->src_device = parts[0];
  out->dst_device = parts[2];
  out->tensor_name = parts[3];
  if (out->src_device.empty() || out->dst_device.empty() || out->tensor_name.empty()) return bad("a part is empty");
  auto whole = [](std::string_view s, auto* value, int base) {
    const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), *value, base);
    return !s.empty() && ec == std::errc() && end == s.data() + s.size();
  };
  if (!whole(parts[1], &out->src_incarnation, 16)) return bad("the incarnation is not a hex number");
  const size_t colon = parts[4].find(':');
  if (colon == std::string_view::npos || !whole(parts[4].substr(0, colon), &out->frame_id, 10) ||
      !whole(parts[4].substr(colon + 1), &out->iter_id, 10)) {
    return bad("the frame:iter part is not two numbers");
  }
  return Status();
}

LocalRendezvous::~LocalRendezvous() {
  // Waiters left at destruction would never run: complete them rather than lose them. (Only then:
  // the status and its lock would cost every step, and a small all-reduce is a step short enough
  // to feel it: bench/README.md, All-reduce.)
  if (num_pending() > 0) StartAbort(errors::Aborted("the step's rendezvous was destroyed with a Recv still waiting"));
}

Status LocalRendezvous::Send(const std::string& key, const RendezvousArgs& args, const Tensor& value, bool is_dead) {
  DoneCallback waiter;
  {
    std::lock_guard<std::mutex> l(mu_);
    if (!aborted_.ok()) return aborted_;
    const auto it = nodes_.TryEmplace(items_, key).first;
    Item& item = it->second;
    if (item.has_value) return errors::AlreadyExists("rendezvous key '{}' was sent twice in one step", key);
    if (item.waiter) {
      waiter = std::move(item.waiter);
      nodes_.Erase(items_, it);
    } else {
      item.has_value = true;
      item.value = value;
      item.is_dead = is_dead;
    }
  }
  if (waiter) waiter(Status(), value, is_dead);
  return Status();
}

void LocalRendezvous::RecvAsync(const std::string& key, const RendezvousArgs& args, DoneCallback done) {
  Tensor value;
  bool is_dead = false;
  Status status;
  {
    std::lock_guard<std::mutex> l(mu_);
    if (!aborted_.ok()) {
      status = aborted_;
    } else {
      const auto it = nodes_.TryEmplace(items_, key).first;
      Item& item = it->second;
      if (item.waiter) {
        status = errors::AlreadyExists("rendezvous key '{}' was received twice in one step", key);
      } else if (!item.has_value) {
        item.waiter = std::move(done);
        return;
      } else {
        value = std::move(item.value);
        is_dead = item.is_dead;
        nodes_.Erase(items_, it);
      }
    }
  }
  done(status, value, is_dead);
}

void LocalRendezvous::StartAbort(const Status& status) {
  std::vector<DoneCallback> waiters;
  {
    std::lock_guard<std::mutex> l(mu_);
    if (aborted_.ok()) aborted_ = status.ok() ? errors::Aborted("rendezvous aborted") : status;
    for (auto& [key, item] : items_) {
      if (item.waiter) waiters.push_back(std::move(item.waiter));
    }
    items_.clear();
  }
  for (DoneCallback& w : waiters) w(aborted_, Tensor(), false);
}

std::vector<std::string> LocalRendezvous::WaitingKeys() const {
  std::vector<std::string> keys;
  ForEachWaitingKey([&keys](std::string_view key) { keys.emplace_back(key); });
  return keys;
}

std::string DescribeRecvs(const std::vector<std::string>& recvs) {
  constexpr size_t kListed = 4;
  std::string out;
  for (size_t i = 0; i < recvs.size() && i < kListed; ++i) out += (i > 0 ? ", " : "") + recvs[i];
  if (recvs.size() > kListed) out += fmt::format(" and {} more", recvs.size() - kListed);
  return out;
}

std::string LocalRendezvous::DescribeWaiting() const {
  std::vector<std::string> recvs;
  for (const std::string& key : WaitingKeys()) recvs.push_back(fmt::format("Recv of '{}' (no Send yet)", key));
  return DescribeRecvs(recvs);
}

Status LocalRendezvous::abort_status() const {
  std::lock_guard<std::mutex> l(mu_);
  return aborted_;
}

size_t LocalRendezvous::num_pending() const {
  std::lock_guard<std::mutex> l(mu_);
  return items_.size();
}

}  // namespace weft
