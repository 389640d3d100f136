#include "core/device_name.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>

#include "core/status.h"

namespace weft {
namespace {

std::string Upper(std::string_view s) {
  std::string r(s);
  std::transform(r.begin(), r.end(), r.begin(), [](unsigned char c) { return std::toupper(c); });
  return r;
}

// Parses a non-negative int or "*" (returned as nullopt).
std::optional<int> ParseIndex(std::string_view full, std::string_view field, std::string_view text) {
  if (text == "*") return std::nullopt;
  int v = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || ptr != text.data() + text.size() || v < 0) {
    throw Error(errors::InvalidArgument("device name '{}': bad {} '{}'", full, field, text));
  }
  return v;
}

bool ValidType(std::string_view t) {
  return !t.empty() && std::all_of(t.begin(), t.end(), [](unsigned char c) { return std::isalnum(c) || c == '_'; });
}

}  // namespace

DeviceName DeviceName::Parse(std::string_view name) {
  DeviceName d;
  std::string_view rest = name;
  if (!rest.empty() && rest[0] != '/') {
    // "CPU:0" without a leading slash.
    std::string tmp = "/device:" + std::string(rest);
    DeviceName r = Parse(tmp);
    return r;
  }
  while (!rest.empty()) {
    if (rest[0] != '/') throw Error(errors::InvalidArgument("device name '{}': expected '/'", name));
    rest.remove_prefix(1);
    const size_t end = rest.find('/');
    std::string_view part = rest.substr(0, end);
    rest = end == std::string_view::npos ? std::string_view() : rest.substr(end);
    const size_t colon = part.find(':');
    if (colon == std::string_view::npos) {
      throw Error(errors::InvalidArgument("device name '{}': component '{}' has no ':'", name, part));
    }
    std::string_view key = part.substr(0, colon), value = part.substr(colon + 1);
    if (key == "job") {
      if (value.empty() || value == "*") throw Error(errors::InvalidArgument("device name '{}': empty job", name));
      d.job = std::string(value);
    } else if (key == "replica") {
      d.replica = ParseIndex(name, "replica", value);
    } else if (key == "task") {
      d.task = ParseIndex(name, "task", value);
    } else if (key == "device") {
      const size_t c2 = value.find(':');
      std::string_view type = value.substr(0, c2);
      if (!ValidType(type)) throw Error(errors::InvalidArgument("device name '{}': bad device type '{}'", name, type));
      d.type = Upper(type);
      if (c2 != std::string_view::npos) d.id = ParseIndex(name, "device id", value.substr(c2 + 1));
    } else if (Upper(key) == "CPU" || Upper(key) == "GPU") {  // legacy "/cpu:0"
      d.type = Upper(key);
      d.id = ParseIndex(name, "device id", value);
    } else {
      throw Error(errors::InvalidArgument("device name '{}': unknown component '{}'", name, key));
    }
  }
  return d;
}

std::string DeviceName::ToString() const {
  std::string s;
  if (job) s += "/job:" + *job;
  if (replica) s += fmt::format("/replica:{}", *replica);
  if (task) s += fmt::format("/task:{}", *task);
  if (type) s += fmt::format("/device:{}:{}", *type, id ? std::to_string(*id) : std::string("*"));
  return s;
}

bool DeviceName::Matches(const DeviceName& spec) const {
  if (spec.job && job != spec.job) return false;
  if (spec.replica && replica != spec.replica) return false;
  if (spec.task && task != spec.task) return false;
  if (spec.type && type != spec.type) return false;
  if (spec.id && id != spec.id) return false;
  return true;
}

void DeviceName::MergeFrom(const DeviceName& other) {
  auto merge = [&](auto& mine, const auto& theirs, std::string_view field) {
    if (!theirs) return;
    if (mine && *mine != *theirs) {
      throw Error(errors::InvalidArgument("cannot merge devices '{}' and '{}': conflicting {}", ToString(),
                                          other.ToString(), field));
    }
    mine = theirs;
  };
  merge(job, other.job, "job");
  merge(replica, other.replica, "replica");
  merge(task, other.task, "task");
  merge(type, other.type, "device type");
  merge(id, other.id, "device id");
}

void DeviceName::OverrideFrom(const DeviceName& other) {
  if (other.job) job = other.job;
  if (other.replica) replica = other.replica;
  if (other.task) task = other.task;
  if (other.type) {
    if (type != other.type) id.reset();
    type = other.type;
  }
  if (other.id) id = other.id;
}

}  // namespace weft
