#include "graph/device.h"

#include <random>

#include <fmt/format.h>

namespace weft {

Device::Device(DeviceName name, int intra_op_threads, std::shared_ptr<GpuContext> gpu)
    : name_(std::move(name)), gpu_(std::move(gpu)) {
  WEFT_REQUIRE(name_.IsFullySpecified(), "a device needs a full name, got '{}'", name_.ToString());
  name_str_ = name_.ToString();
  std::random_device rd;
  incarnation_ = (uint64_t{rd()} << 32) | rd();
  intra_op_ = std::make_unique<ThreadPool>(std::max(1, intra_op_threads), "intra-op-" + *name_.type +
                                                                             std::to_string(*name_.id));
}

Allocator* Device::allocator() const { return gpu_ ? GpuAllocatorOf(*gpu_) : CpuAllocator(); }

DeviceSet DeviceSet::LocalDevices(int num_cpus, int intra_op_threads, bool gpus, const std::string& job, int task) {
  DeviceSet set = LocalCpus(num_cpus, intra_op_threads, job, task);
  if (!gpus) return set;
  const std::vector<std::shared_ptr<GpuContext>> contexts = OpenGpus();
  for (size_t i = 0; i < contexts.size(); ++i) {
    DeviceName n;
    n.job = job;
    n.replica = 0;
    n.task = task;
    n.type = "GPU";
    n.id = static_cast<int>(i);
    // One host thread per GPU for the kernels' launch work; the GPU does the arithmetic.
    set.Add(std::make_unique<Device>(n, 1, contexts[i]));
  }
  return set;
}

void DeviceSet::Add(std::unique_ptr<Device> device) {
  for (const auto& d : devices_) {
    WEFT_REQUIRE(d->name() != device->name(), "device {} is already in the set", device->name());
  }
  devices_.push_back(std::move(device));
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
