// Device names in TensorFlow's form, full or partial.
//
//   DeviceName d = DeviceName::Parse("/job:worker/replica:0/task:1/device:CPU:0");
//   DeviceName spec = DeviceName::Parse("/device:CPU:*");   // partial: any CPU
//   d.Matches(spec) == true;  d.ToString() == "/job:worker/replica:0/task:1/device:CPU:0"
//   DeviceName m = spec; m.MergeFrom(DeviceName::Parse("/task:1"));  // "/task:1/device:CPU:*"
//
// Also accepted: "/cpu:0", "/gpu:1" (legacy short forms) and "CPU:0".
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace weft {

struct DeviceName {
  std::optional<std::string> job;
  std::optional<int> replica;
  std::optional<int> task;
  std::optional<std::string> type;  // "CPU", "GPU"
  std::optional<int> id;            // unset: any device of that type ("*")

  // Throws InvalidArgument naming the string and the bad component.
  static DeviceName Parse(std::string_view name);
  // The canonical form; unset fields are omitted (id prints as "*" when the type is set).
  std::string ToString() const;
  bool IsFullySpecified() const { return job && replica && task && type && id; }
  bool empty() const { return !job && !replica && !task && !type && !id; }
  // True when every field set in `spec` equals the field here.
  bool Matches(const DeviceName& spec) const;
  // Fills unset fields from `other`; throws InvalidArgument when a field is set in both and differs.
  void MergeFrom(const DeviceName& other);
  // Like MergeFrom, but fields of `other` override ours.
  void OverrideFrom(const DeviceName& other);

  bool operator==(const DeviceName&) const = default;
};

}  // namespace weft
