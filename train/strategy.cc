#include "train/strategy.h"

#include <algorithm>
#include <cstring>

#include "core/device_name.h"
#include "ops/framework.h"
#include "ops/math.h"
#include "train/zero.h"

namespace weft {
namespace {

thread_local const Strategy* current_strategy = nullptr;

// Full local CPU names for specs like "/device:CPU:1", "CPU:1" or "/cpu:1".
std::string Canonical(const std::string& device) {
  DeviceName d = DeviceName::Parse(device);
  WEFT_REQUIRE(d.type && d.id, "strategy device '{}' must name a device type and index (e.g. /device:CPU:1)", device);
  WEFT_REQUIRE(*d.type == "CPU", "strategy device '{}': only CPU devices exist in this build", device);
  DeviceName full;
  full.job = d.job.value_or("localhost");
  full.replica = d.replica.value_or(0);
  full.task = d.task.value_or(0);
  full.type = d.type;
  full.id = d.id;
  return full.ToString();
}

std::vector<std::string> CanonicalAll(std::vector<std::string> devices) {
  WEFT_REQUIRE(!devices.empty(), "a strategy needs at least one device");
  for (std::string& d : devices) d = Canonical(d);
  for (size_t i = 0; i < devices.size(); ++i) {
    for (size_t j = i + 1; j < devices.size(); ++j) {
      WEFT_REQUIRE(devices[i] != devices[j], "strategy device '{}' is listed twice", devices[i]);
    }
  }
  return devices;
}

}  // namespace

Strategy::Strategy(std::vector<std::string> devices) : devices_(CanonicalAll(std::move(devices))), group_(devices_) {}

Strategy::Strategy(std::vector<std::string> devices, std::vector<std::string> group, int first_replica)
    : devices_(CanonicalAll(std::move(devices))), group_(CanonicalAll(std::move(group))), first_replica_(first_replica) {
  WEFT_REQUIRE(first_replica >= 0 && first_replica + devices_.size() <= group_.size() &&
                   std::equal(devices_.begin(), devices_.end(), group_.begin() + first_replica),
               "strategy: the local devices must be replicas {}.. of the group", first_replica);
  WEFT_REQUIRE(group_.size() % devices_.size() == 0, "strategy: every worker must have {} replicas (group of {})",
               devices_.size(), group_.size());
}

Strategy::~Strategy() = default;

int Strategy::num_cpu_devices() const {
  int n = 1;
  for (const std::string& d : devices_) n = std::max(n, *DeviceName::Parse(d).id + 1);
  return std::max(n, *DeviceName::Parse(variable_device()).id + 1);
}

Strategy::ScopeGuard::ScopeGuard(const Strategy* s) : previous_(current_strategy) { current_strategy = s; }
Strategy::ScopeGuard::~ScopeGuard() { current_strategy = previous_; }
const Strategy* Strategy::Current() { return current_strategy; }

std::vector<Output> Strategy::Run(const Scope& s,
                                  const std::function<Output(const Scope& replica_scope, int replica)>& fn) const {
  std::vector<Output> out;
  for (int r = 0; r < num_local_replicas(); ++r) {
    Scope rs = (r == 0 ? s : s.NewSubScope("replica_" + std::to_string(r))).WithDevice(devices_[static_cast<size_t>(r)]);
    out.push_back(fn(rs, r));
  }
  return out;
}

Output Strategy::Reduce(const Scope& s, ReduceOp op, const std::vector<Output>& per_replica) const {
  WEFT_REQUIRE(!per_replica.empty(), "Strategy::Reduce of no values");
  Scope d = s.WithDevice(devices_.front());
  Output sum = per_replica.size() == 1 ? per_replica[0] : ops::AddN(d, per_replica);
  if (op == ReduceOp::kSum) return sum;
  return ops::Div(d, sum, ops::ScalarLike(d, sum.dtype(), static_cast<double>(per_replica.size())));
}

std::vector<std::vector<Tensor>> Strategy::SplitBatch(const std::vector<Tensor>& global) const {
  const int64_t r = batch_parts();
  WEFT_REQUIRE(!global.empty() && global[0].shape().rank() >= 1, "SplitBatch: needs batched components");
  const int64_t n = global[0].shape().dim(0);
  WEFT_REQUIRE(n >= r, "{}: a batch of {} examples cannot be split across {} replicas (use a batch size >= {})",
               name(), n, r, r);
  std::vector<std::vector<Tensor>> parts(static_cast<size_t>(r));
  for (const Tensor& t : global) {
    WEFT_REQUIRE(t.shape().rank() >= 1 && t.shape().dim(0) == n, "SplitBatch: component {} has {} rows, expected {}",
                 t.DebugString(), t.shape().rank() >= 1 ? t.shape().dim(0) : 0, n);
    const size_t row = n > 0 ? t.bytes() / static_cast<size_t>(n) : 0;
    int64_t begin = 0;
    for (int64_t k = 0; k < r; ++k) {
      const int64_t rows = n / r + (k < n % r ? 1 : 0);
      std::vector<int64_t> dims = {rows};
      for (int i = 1; i < t.shape().rank(); ++i) dims.push_back(t.shape().dim(i));
      Tensor part(t.dtype(), TensorShape(dims));
      std::memcpy(part.raw_data(), static_cast<const char*>(t.raw_data()) + row * static_cast<size_t>(begin),
                  part.bytes());
      parts[static_cast<size_t>(k)].push_back(part);
      begin += rows;
    }
  }
  return parts;
}

data::Dataset Strategy::ExperimentalDistributeDataset(const data::Dataset& global_batches) const {
  return global_batches.Map([this](data::Element global) {
    data::Element flat;
    std::vector<std::vector<Tensor>> parts = SplitBatch(global);
    for (int r = first_replica_; r < first_replica_ + num_local_replicas(); ++r) {  // this worker's shard
      for (Tensor& t : parts[static_cast<size_t>(r)]) flat.push_back(std::move(t));
    }
    return flat;
  });
}

std::vector<std::string> LocalCpuDevices(int n) {
  WEFT_REQUIRE(n >= 1, "need at least one device, asked for {}", n);
  std::vector<std::string> out;
  for (int i = 0; i < n; ++i) out.push_back("/job:localhost/replica:0/task:0/device:CPU:" + std::to_string(i));
  return out;
}

OneDeviceStrategy::OneDeviceStrategy(const std::string& device) : Strategy({device}) {}

void Strategy::set_shard_optimizer_state(int stage) {
  train::CheckShardStage(stage, name());
  shard_optimizer_state_ = stage;
}

MirroredStrategy::MirroredStrategy(std::vector<std::string> devices, int shard_optimizer_state)
    : Strategy(std::move(devices)) {
  set_shard_optimizer_state(shard_optimizer_state);
}

CentralStorageStrategy::CentralStorageStrategy(std::vector<std::string> compute_devices, std::string variable_device)
    : Strategy(std::move(compute_devices)), variable_device_(Canonical(variable_device)) {}

}  // namespace weft
