#include "distributed/rendezvous.h"

#include <vector>

namespace weft {

std::string RendezvousKey::ToString() const {
  return fmt::format("{};{:x};{};{};{}:{}", src_device, src_incarnation, dst_device, tensor_name, frame_id, iter_id);
}

RendezvousKey RendezvousKey::Parse(const std::string& key) {
  std::vector<std::string> parts;
  size_t start = 0;
  for (size_t i = 0; i <= key.size(); ++i) {
    if (i == key.size() || key[i] == ';') {
      parts.push_back(key.substr(start, i - start));
      start = i + 1;
    }
  }
  auto bad = [&](const char* why) {
    return Error(errors::InvalidArgument("rendezvous key '{}': {} (expected "
                                         "src_device;src_incarnation;dst_device;tensor_name;frame:iter)", key, why));
  };
  if (parts.size() != 5) throw bad("it does not have 5 parts");
  RendezvousKey k;
  k.src_device = parts[0];
  k.dst_device = parts[2];
  k.tensor_name = parts[3];
  if (k.src_device.empty() || k.dst_device.empty() || k.tensor_name.empty()) throw bad("a part is empty");
  size_t used = 0;
  try {
    k.src_incarnation = std::stoull(parts[1], &used, 16);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != parts[1].size()) throw bad("the incarnation is not a hex number");
  const size_t colon = parts[4].find(':');
  try {
    if (colon == std::string::npos) throw std::invalid_argument("no colon");
    k.frame_id = std::stoll(parts[4].substr(0, colon));
    k.iter_id = std::stoll(parts[4].substr(colon + 1));
  } catch (const std::exception&) {
    throw bad("the frame:iter part is not two numbers");
  }
  return k;
}

LocalRendezvous::~LocalRendezvous() {
  // Waiters left at destruction would never run: complete them rather than lose them.
  StartAbort(errors::Aborted("the step's rendezvous was destroyed with a Recv still waiting"));
}

Status LocalRendezvous::Send(const std::string& key, const RendezvousArgs& args, const Tensor& value, bool is_dead) {
  DoneCallback waiter;
  {
    std::lock_guard<std::mutex> l(mu_);
    if (!aborted_.ok()) return aborted_;
    Item& item = items_[key];
    if (item.has_value) return errors::AlreadyExists("rendezvous key '{}' was sent twice in one step", key);
    if (item.waiter) {
      waiter = std::move(item.waiter);
      items_.erase(key);
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
      Item& item = items_[key];
      if (item.waiter) {
        status = errors::AlreadyExists("rendezvous key '{}' was received twice in one step", key);
      } else if (!item.has_value) {
        item.waiter = std::move(done);
        return;
      } else {
        value = std::move(item.value);
        is_dead = item.is_dead;
        items_.erase(key);
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

size_t LocalRendezvous::num_pending() const {
  std::lock_guard<std::mutex> l(mu_);
  return items_.size();
}

}  // namespace weft
