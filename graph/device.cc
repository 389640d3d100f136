#include "graph/device.h"

#include <random>

#include <fmt/format.h>

namespace weft {

Device::Device(DeviceName name, int intra_op_threads) : name_(std::move(name)) {
  WEFT_REQUIRE(name_.IsFullySpecified(), "a device needs a full name, got '{}'", name_.ToString());
  name_str_ = name_.ToString();
  std::random_device rd;
  incarnation_ = (uint64_t{rd()} << 32) | rd();
  intra_op_ = std::make_unique<ThreadPool>(std::max(1, intra_op_threads), "intra-op-" + *name_.type +
                                                                             std::to_string(*name_.id));
}

DeviceSet DeviceSet::LocalCpus(int num_devices, int intra_op_threads, const std::string& job, int task) {
  WEFT_REQUIRE(num_devices >= 1, "a process needs at least one CPU device, asked for {}", num_devices);
  DeviceSet set;
  for (int i = 0; i < num_devices; ++i) {
    DeviceName n;
    n.job = job;
    n.replica = 0;
    n.task = task;
    n.type = "CPU";
    n.id = i;
    // Split the threads: device i gets its share (the first ones take the remainder).
    const int share = intra_op_threads / num_devices + (i < intra_op_threads % num_devices ? 1 : 0);
    set.devices_.push_back(std::make_unique<Device>(n, share));
  }
  return set;
}

void DeviceSet::Add(std::unique_ptr<Device> device) { devices_.push_back(std::move(device)); }

const Device* DeviceSet::Find(const std::string& name) const {
  std::vector<const Device*> m = Matching(DeviceName::Parse(name));
  return m.size() == 1 ? m[0] : nullptr;
}

std::vector<const Device*> DeviceSet::Matching(const DeviceName& spec) const {
  std::vector<const Device*> out;
  for (const auto& d : devices_) {
    if (d->parsed_name().Matches(spec)) out.push_back(d.get());
  }
  return out;
}

std::string DeviceSet::ShortNames() const {
  std::string s;
  for (const auto& d : devices_) s += fmt::format("{}{}:{}", s.empty() ? "" : ", ", d->type(), *d->parsed_name().id);
  return s;
}

}  // namespace weft
