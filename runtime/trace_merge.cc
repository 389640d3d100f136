#include "runtime/trace_merge.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/status.h"

namespace weft {
namespace {

const Json* Arg(const Json& event, std::string_view name) {
  const Json* args = event.Member("args");
  return args != nullptr ? args->Member(name) : nullptr;
}

std::string StrOf(const Json* v) { return v != nullptr && v->kind == Json::Kind::kString ? v->str : std::string(); }
int64_t IntOf(const Json* v, int64_t fallback) {
  return v != nullptr && v->kind == Json::Kind::kNumber ? static_cast<int64_t>(v->number) : fallback;
}

Json Number(double x, bool integer) {
  Json v;
  v.kind = Json::Kind::kNumber;
  v.number = x;
  v.is_integer = integer;
  return v;
}

Json Text(std::string s) {
  Json v;
  v.kind = Json::Kind::kString;
  v.str = std::move(s);
  return v;
}

void Set(Json& object, const std::string& name, Json value) {
  for (auto& [k, v] : object.object) {
    if (k == name) {
      v = std::move(value);
      return;
    }
  }
  object.object.emplace_back(name, std::move(value));
}

}  // namespace

TraceDump ReadTraceDump(std::string_view text, std::string_view what) {
  TraceDump d;
  size_t pos = 0, line_no = 0;
  auto next_line = [&](std::string_view& line) {
    if (pos >= text.size()) return false;
    const size_t end = text.find('\n', pos);
    line = text.substr(pos, end == std::string_view::npos ? std::string_view::npos : end - pos);
    pos = end == std::string_view::npos ? text.size() : end + 1;
    ++line_no;
    return true;
  };
  std::string_view line;
  if (!next_line(line) || line != "[") {
    throw Error(errors::InvalidArgument("{}: not a weft trace dump (its first line is not '[')", what));
  }
  bool ended = false;
  while (next_line(line)) {
    if (line == "]") {
      d.complete = ended;
      if (!ended) d.problem = fmt::format("line {}: the array closes without the end mark", line_no);
      return d;
    }
    if (ended) break;
    const bool partial = pos >= text.size() && text.back() != '\n';
    std::string_view body = line;
    if (!body.empty() && body.back() == ',') body.remove_suffix(1);
    Json e;
    try {
      if (partial) throw Error(errors::InvalidArgument("the line is cut short"));
      e = ParseJson(body, fmt::format("{} line {}", what, line_no));
      if (e.kind != Json::Kind::kObject) throw Error(errors::InvalidArgument("{} line {}: not an object", what, line_no));
    } catch (const Error& err) {
      d.problem = fmt::format("line {}: {}", line_no, err.status().message());
      return d;
    }
    const std::string name = StrOf(e.Member("name")), ph = StrOf(e.Member("ph"));
    if (ph == "M" && name == "weft_trace") {
      d.process = StrOf(Arg(e, "process"));
      d.why = StrOf(Arg(e, "why"));
      d.reference = StrOf(Arg(e, "clock_reference"));
      d.offset_ns = IntOf(Arg(e, "clock_offset_ns"), 0);
      d.rtt_ns = IntOf(Arg(e, "clock_rtt_ns"), -1);
      d.recorded = IntOf(Arg(e, "recorded"), 0);
    } else if (ph == "M" && name == "weft_trace_end") {
      ended = true;
    } else if (!(ph == "M" && name == "process_name")) {
      d.events.push_back(std::move(e));
    }
  }
  d.problem = fmt::format("line {}: the dump ends before its end mark (cut short)", line_no);
  return d;
}

std::string MergeTraceDumps(const std::vector<TraceDump>& dumps) {
  std::string reference;
  for (const TraceDump& d : dumps) {
    if (d.reference.empty()) continue;
    if (reference.empty()) reference = d.reference;
    if (d.reference != reference) {
      throw Error(errors::InvalidArgument(
          "trace merge: {}'s clock offset is measured against {}, another dump's against {}: dumps of different jobs?",
          d.process, d.reference, reference));
    }
  }
  // The first event on the common clock is time 0.
  double t0 = std::numeric_limits<double>::infinity();
  for (const TraceDump& d : dumps) {
    for (const Json& e : d.events) {
      const Json* ts = e.Member("ts");
      if (ts != nullptr && ts->kind == Json::Kind::kNumber) t0 = std::min(t0, ts->number + d.offset_ns / 1000.0);
    }
  }
  if (t0 == std::numeric_limits<double>::infinity()) t0 = 0;
  std::string out = "[\n";
  size_t events = 0;
  for (size_t k = 0; k < dumps.size(); ++k) {
    const TraceDump& d = dumps[k];
    const std::string name = d.process.empty() ? fmt::format("dump {}", k) : d.process;
    out += fmt::format(R"({{"name": "process_name", "ph": "M", "pid": {}, "tid": 0, "args": {{"name": {}}}}},)", k,
                       WriteJson(Text(name))) + "\n";
    out += fmt::format(R"({{"name": "process_sort_index", "ph": "M", "pid": {}, "tid": 0, "args": {{"sort_index": {}}}}},)",
                       k, k) + "\n";
    for (Json e : d.events) {
      Set(e, "pid", Number(static_cast<double>(k), true));
      if (const Json* ts = e.Member("ts"); ts != nullptr && ts->kind == Json::Kind::kNumber) {
        // Whole nanoseconds, printed in microseconds.
        Set(e, "ts", Number(std::round((ts->number + d.offset_ns / 1000.0 - t0) * 1000.0) / 1000.0, false));
      }
      out += WriteJson(e) + ",\n";
      ++events;
    }
  }
  out += fmt::format(R"({{"name": "weft_trace_end", "ph": "M", "pid": 0, "tid": 0, "args": {{"events": {}, "dumps": {}}}}})",
                     events, dumps.size()) + "\n]\n";
  return out;
}

}  // namespace weft
