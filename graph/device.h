// The devices of this process: what the placer chooses from and what each partition runs on.
//
//   DeviceSet devices = DeviceSet::LocalCpus(/*num_devices=*/2, /*intra_op_threads=*/2);
//   devices.devices()[1]->name();   // "/job:localhost/replica:0/task:0/device:CPU:1"
//   const Device* d = devices.Find("/device:CPU:1");
//
// Each CPU device has its own intra-op thread pool, a share of the threads the session was
// given (at least one each), so virtual CPU devices are parallel replicas, not aliases.
// A device's incarnation is a random number fixed at creation: rendezvous keys carry it, so a
// restarted process's tensors never meet an old peer's Recv. Thread-safe after construction.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/device_name.h"
#include "core/status.h"
#include "core/threadpool.h"

namespace weft {

class Device {
 public:
  Device(DeviceName name, int intra_op_threads);
  const std::string& name() const { return name_str_; }  // full name
  const DeviceName& parsed_name() const { return name_; }
  const std::string& type() const { return *name_.type; }
  uint64_t incarnation() const { return incarnation_; }
  ThreadPool* intra_op() const { return intra_op_.get(); }

 private:
  DeviceName name_;
  std::string name_str_;
  uint64_t incarnation_;
  std::unique_ptr<ThreadPool> intra_op_;
};

class DeviceSet {
 public:
  // CPU:0 .. CPU:n-1 of /job:`job`/replica:0/task:`task`, sharing `intra_op_threads` threads.
  static DeviceSet LocalCpus(int num_devices, int intra_op_threads, const std::string& job = "localhost",
                             int task = 0);
  // Adds a device after these (a cluster's devices, described for placement: the client's task first).
  void Add(std::unique_ptr<Device> device);
  const std::vector<std::unique_ptr<Device>>& devices() const { return devices_; }
  int size() const { return static_cast<int>(devices_.size()); }
  // The device with this full (or uniquely matching partial) name; null when none.
  const Device* Find(const std::string& name) const;
  // Devices matching a partial spec, in order.
  std::vector<const Device*> Matching(const DeviceName& spec) const;
  // "CPU:0, CPU:1" for messages.
  std::string ShortNames() const;
  // The client's device: where fed and fetched tensors live by default (CPU:0).
  const Device* client() const { return devices_.front().get(); }

 private:
  std::vector<std::unique_ptr<Device>> devices_;
};

}  // namespace weft
