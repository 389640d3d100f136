// weft-zoo's command-line flags (zoo/commands.h: Flags): --name value, --name=value, booleans,
// positional arguments, and numbers checked whole.
#include <cmath>
#include <exception>
#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "zoo/commands.h"

namespace weft::zoo {

Flags::Flags(const std::vector<std::string>& args, const std::set<std::string>& valued,
             const std::set<std::string>& boolean) {
  for (size_t i = 1; i < args.size(); ++i) {  // args[0] is the command
    const std::string a = args[i] == "-o" ? "--o" : args[i];  // the one short option: -o FILE
    if (a.rfind("--", 0) != 0) {
      positional_.push_back(a);
      continue;
    }
    const size_t eq = a.find('=');
    const bool inline_value = eq != std::string::npos;
    const std::string name = inline_value ? a.substr(2, eq - 2) : a.substr(2);
    std::string value = inline_value ? a.substr(eq + 1) : std::string();
    if (boolean.count(name)) {
      if (inline_value) throw UsageError(fmt::format("--{} takes no value", name));
      values_.insert_or_assign(name, std::string(1, '1'));
    } else if (valued.count(name)) {
      if (!inline_value) {
        if (i + 1 >= args.size()) throw UsageError(fmt::format("--{} needs a value", name));
        value = args[++i];
      }
      values_[name] = value;
    } else {
      std::string known;
      for (const auto& k : valued) known += " --" + k;
      for (const auto& k : boolean) known += " --" + k;
      throw UsageError(fmt::format("unknown option '{}' for '{}' (options:{})", a, args[0], known));
    }
  }
}

std::string Flags::Str(const std::string& name, const std::string& fallback) const {
  auto it = values_.find(name);
  return it == values_.end() ? fallback : it->second;
}

// Parses a whole flag value with `parse` (std::stoll / std::stod); a value that is not a number
// of that kind, has trailing text or is below `min` is a UsageError naming the flag.
template <typename T, typename Parse>
T ParseNumber(const std::string& name, const std::string& text, T min, const char* kind, Parse parse) {
  size_t used = 0;
  T v{};
  try {
    v = parse(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != text.size() || !std::isfinite(static_cast<double>(v)) || v < min) {
    throw UsageError(fmt::format("--{} needs {} >= {}, got '{}'", name, kind, min, text));
  }
  return v;
}

int64_t Flags::Int(const std::string& name, int64_t fallback, int64_t min) const {
  auto it = values_.find(name);
  if (it == values_.end()) return fallback;
  return ParseNumber<int64_t>(name, it->second, min, "an integer",
                              [](const std::string& t, size_t* used) { return std::stoll(t, used); });
}

double Flags::Float(const std::string& name, double fallback) const {
  auto it = values_.find(name);
  if (it == values_.end()) return fallback;
  return ParseNumber<double>(name, it->second, 0.0, "a number",
                             [](const std::string& t, size_t* used) { return std::stod(t, used); });
}

}  // namespace weft::zoo
