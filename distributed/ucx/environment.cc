#include "distributed/ucx/environment.h"

#include <cstdlib>

namespace weft {
namespace {

enum class Kind { kBool, kCount };

struct Variable {
  const char* name;
  Kind kind;
  const char* what;
  std::function<void(UcxTransportOptions*, uint64_t)> apply;
};

const std::vector<Variable>& Variables() {
  using us = std::chrono::microseconds;
  static const std::vector<Variable> kVariables = {
      {"WEFT_UCX_LEND", Kind::kBool, "UcxWorkerOptions::lend: a waiting thread drives the worker",
       [](UcxTransportOptions* o, uint64_t v) { o->worker.lend = v != 0; }},
      {"WEFT_UCX_LEND_PARK_US", Kind::kCount, "UcxWorkerOptions::lend_park: the parked progress thread looks again after",
       [](UcxTransportOptions* o, uint64_t v) { o->worker.lend_park = us(v); }},
      {"WEFT_UCX_SPIN_US", Kind::kCount, "UcxWorkerOptions::spin: polling after the last activity",
       [](UcxTransportOptions* o, uint64_t v) { o->worker.spin = us(v); }},
      {"WEFT_UCX_BUSY_SPIN_US", Kind::kCount, "UcxWorkerOptions::busy_spin: polling while work is outstanding",
       [](UcxTransportOptions* o, uint64_t v) { o->worker.busy_spin = us(v); }},
      {"WEFT_UCX_YIELD", Kind::kBool, "UcxWorkerOptions::yield_while_busy",
       [](UcxTransportOptions* o, uint64_t v) { o->worker.yield_while_busy = v != 0; }},
      {"WEFT_UCX_CM_WORKER", Kind::kBool, "UcxWorkerOptions::cm_worker: a second ucp worker for the connection manager",
       [](UcxTransportOptions* o, uint64_t v) { o->worker.cm_worker = v != 0; }},
      {"WEFT_UCX_EAGER", Kind::kCount, "UcxTransportOptions::eager_threshold (bytes; the measured one's upper bound)",
       [](UcxTransportOptions* o, uint64_t v) { o->eager_threshold = v; }},
      {"WEFT_UCX_MEASURE", Kind::kBool, "UcxTransportOptions::measure_eager_threshold",
       [](UcxTransportOptions* o, uint64_t v) { o->measure_eager_threshold = v != 0; }},
      {"WEFT_UCX_WINDOW", Kind::kCount, "UcxTransportOptions::rendezvous_window_bytes",
       [](UcxTransportOptions* o, uint64_t v) { o->rendezvous_window_bytes = v; }},
      {"WEFT_UCX_LOG", Kind::kBool, "UcxTransportOptions::log_thresholds: print each settled threshold on stderr",
       [](UcxTransportOptions* o, uint64_t v) { o->log_thresholds = v != 0; }},
  };
  return kVariables;
}

// A non-negative decimal integer filling the whole string; nullopt otherwise.
std::optional<uint64_t> ParseCount(const std::string& s) {
  if (s.empty() || s.find_first_not_of("0123456789") != std::string::npos || s.size() > 19) return std::nullopt;
  return std::strtoull(s.c_str(), nullptr, 10);
}

}  // namespace

void ApplyUcxEnvironment(UcxTransportOptions* options,
                         const std::function<std::optional<std::string>(const std::string& name)>& getenv) {
  for (const Variable& var : Variables()) {
    std::optional<std::string> value;
    if (getenv) {
      value = getenv(var.name);
    } else if (const char* v = std::getenv(var.name)) {
      value = v;
    }
    if (!value) continue;
    const std::optional<uint64_t> n = ParseCount(*value);
    if (!n || (var.kind == Kind::kBool && *n > 1)) {
      throw Error(errors::InvalidArgument("{}='{}': expected {}", var.name, *value,
                                          var.kind == Kind::kBool ? "0 or 1" : "a non-negative integer"));
    }
    var.apply(options, *n);
  }
}

std::string UcxEnvironmentHelp() {
  std::string out;
  for (const Variable& var : Variables()) {
    out += fmt::format("  {:<24} {}\n", fmt::format("{}={}", var.name, var.kind == Kind::kBool ? "0|1" : "N"), var.what);
  }
  return out;
}

}  // namespace weft
