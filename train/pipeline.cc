#include "train/pipeline.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <map>
#include <string_view>

#include "core/device_name.h"
#include "ops/framework.h"

namespace weft {

PipelineSchedule ParsePipelineSchedule(const std::string& name) {
  if (name == "gpipe") return PipelineSchedule::kGPipe;
  if (name == "1f1b") return PipelineSchedule::k1F1B;
  throw Error(errors::InvalidArgument("pipeline schedule must be 'gpipe' or '1f1b', got '{}'", name));
}

std::string PipelineScheduleName(PipelineSchedule s) { return s == PipelineSchedule::kGPipe ? "gpipe" : "1f1b"; }

namespace {

PipelineOptions Checked(PipelineOptions o) {
  WEFT_REQUIRE(o.num_stages >= 1, "PipelineStrategy: num_stages must be >= 1, got {}", o.num_stages);
  WEFT_REQUIRE(o.micro_batches >= 1, "PipelineStrategy: micro_batches must be >= 1, got {}", o.micro_batches);
  WEFT_REQUIRE(o.replicas >= 1, "PipelineStrategy: replicas must be >= 1, got {}", o.replicas);
  WEFT_REQUIRE(o.boundaries.empty() || static_cast<int>(o.boundaries.size()) == o.num_stages - 1,
               "PipelineStrategy: {} stages need {} boundaries (the first layer of each stage after the first), got "
               "{}", o.num_stages, o.num_stages - 1, o.boundaries.size());
  return o;
}

std::vector<std::string> StageDevices(const PipelineOptions& o, std::vector<std::string> devices) {
  if (static_cast<int>(devices.size()) < o.num_stages) {
    std::string names;
    for (const std::string& d : devices) names += (names.empty() ? "" : ", ") + d;
    throw Error(errors::InvalidArgument("PipelineStrategy: {} stages need {} devices or tasks, but there are only {} "
                                        "({})", o.num_stages, o.num_stages, devices.size(), names));
  }
  devices.resize(static_cast<size_t>(o.num_stages));
  return devices;
}

}  // namespace

PipelineStrategy::PipelineStrategy(PipelineOptions options)
    : Strategy(LocalCpuDevices(Checked(options).num_stages * options.replicas)), options_(std::move(options)) {}

PipelineStrategy::PipelineStrategy(PipelineOptions options, std::vector<std::string> stage_devices)
    : Strategy(StageDevices(Checked(options), std::move(stage_devices))), options_(std::move(options)) {
  WEFT_REQUIRE(options_.replicas == 1, "PipelineStrategy: {} replicas of a pipeline across processes are not "
               "supported (stages x replicas run on the CPU devices of one process)", options_.replicas);
}

int PipelineStrategy::StageOfDevice(const std::string& device, int* replica) const {
  if (device.empty()) return -1;
  const DeviceName d = DeviceName::Parse(device);
  for (size_t k = 0; k < devices().size(); ++k) {
    if (DeviceName::Parse(devices()[k]) != d) continue;
    if (replica != nullptr) *replica = static_cast<int>(k) / options_.num_stages;
    return static_cast<int>(k) % options_.num_stages;
  }
  return -1;
}

std::vector<std::vector<Tensor>> PipelineStrategy::SplitBatch(const std::vector<Tensor>& global) const {
  WEFT_REQUIRE(!global.empty() && global[0].shape().rank() >= 1, "PipelineStrategy: needs batched components");
  const int64_t n = global[0].shape().dim(0);
  const int parts = batch_parts();
  if (options_.replicas == 1) {
    WEFT_REQUIRE(n % parts == 0,
                 "PipelineStrategy: {} micro-batches do not divide the batch of {} examples (use a batch size that is "
                 "a multiple of {}, or another micro-batch count)", parts, n, parts);
  } else {
    WEFT_REQUIRE(n % parts == 0,
                 "PipelineStrategy: {} replicas x {} micro-batches do not divide the batch of {} examples (use a batch "
                 "size that is a multiple of {}, or another micro-batch count)", options_.replicas,
                 options_.micro_batches, n, parts);
  }
  return Strategy::SplitBatch(global);
}

std::vector<int> PipelineStrategy::AssignStages(const std::vector<train::LayerPtr>& layers,
                                                const std::string& model) const {
  const int s_count = options_.num_stages;
  const size_t n = layers.size();
  WEFT_REQUIRE(static_cast<int>(n) >= s_count, "PipelineStrategy: model '{}' has {} layers, fewer than its {} stages",
               model, n, s_count);
  std::vector<int> stage(n, 0);
  if (!options_.boundaries.empty()) {
    size_t prev = 0;
    for (size_t b = 0; b < options_.boundaries.size(); ++b) {
      const std::string& name = options_.boundaries[b];
      size_t at = n;
      for (size_t i = 0; i < n; ++i) {
        if (layers[i]->name() == name) at = i;
      }
      if (at == n) {
        std::string known;
        for (const train::LayerPtr& l : layers) known += (known.empty() ? "" : ", ") + l->name();
        throw Error(errors::InvalidArgument("PipelineStrategy: stage boundary '{}' is not a layer of model '{}' "
                                            "(its layers: {})", name, model, known));
      }
      WEFT_REQUIRE(at > prev,
                   "PipelineStrategy: stage boundary '{}' (layer {} of model '{}') must come after the previous "
                   "boundary and after the first layer: each stage needs at least one layer", name, at, model);
      for (size_t i = at; i < n; ++i) stage[i] = static_cast<int>(b) + 1;
      prev = at;
    }
    return stage;
  }
  // Balanced: contiguous groups minimizing the largest group's cost (a linear-partition DP).
  const std::vector<double>& costs = options_.layer_costs;
  WEFT_REQUIRE(costs.empty() || costs.size() == n,
               "PipelineStrategy: {} layer costs for the {} layers of model '{}'", costs.size(), n, model);
  std::vector<int64_t> prefix(n + 1, 0);
  for (size_t i = 0; i < n; ++i) {
    const int64_t cost = costs.empty() ? layers[i]->CountParams(true) + layers[i]->CountParams(false)
                                       : static_cast<int64_t>(std::llround(std::max(0.0, costs[i])));
    prefix[i + 1] = prefix[i] + cost + 1;
  }
  constexpr int64_t kInf = std::numeric_limits<int64_t>::max();
  // best[k][i]: the smallest largest cost of the first i layers in k groups; cut[k][i]: the last group's start.
  std::vector<std::vector<int64_t>> best(static_cast<size_t>(s_count) + 1, std::vector<int64_t>(n + 1, kInf));
  std::vector<std::vector<size_t>> cut(static_cast<size_t>(s_count) + 1, std::vector<size_t>(n + 1, 0));
  best[0][0] = 0;
  for (size_t k = 1; k <= static_cast<size_t>(s_count); ++k) {
    for (size_t i = k; i <= n; ++i) {
      for (size_t j = k - 1; j < i; ++j) {
        if (best[k - 1][j] == kInf) continue;
        const int64_t cost = std::max(best[k - 1][j], prefix[i] - prefix[j]);
        if (cost < best[k][i]) {
          best[k][i] = cost;
          cut[k][i] = j;
        }
      }
    }
  }
  size_t end = n;
  for (size_t k = static_cast<size_t>(s_count); k >= 1; --k) {
    const size_t begin = cut[k][end];
    for (size_t i = begin; i < end; ++i) stage[i] = static_cast<int>(k) - 1;
    end = begin;
  }
  return stage;
}

std::vector<PipelineSegment> PipelineStrategy::StageOrder(int stage) const {
  const int m_count = options_.micro_batches, s_count = options_.num_stages;
  std::vector<PipelineSegment> order;
  if (options_.schedule == PipelineSchedule::kGPipe) {
    for (int m = 0; m < m_count; ++m) order.push_back({m, false});
    for (int m = 0; m < m_count; ++m) order.push_back({m, true});
    return order;
  }
  // 1F1B (PipeDream-flush): warm-up forwards, then one forward and one backward, then drain.
  const int warmup = std::min(s_count - 1 - stage, m_count);
  int next_f = 0, next_b = 0;
  for (; next_f < warmup; ++next_f) order.push_back({next_f, false});
  while (next_f < m_count) {
    order.push_back({next_f++, false});
    order.push_back({next_b++, true});
  }
  while (next_b < m_count) order.push_back({next_b++, true});
  return order;
}

int NextNodeId(const Graph& g) {
  const std::vector<Node*> nodes = g.nodes();
  return nodes.empty() ? 0 : nodes.back()->id() + 1;
}

void SchedulePipeline(Graph* g, const PipelineStrategy& pipeline, const std::vector<PipelineRanges>& micro_batches) {
  const int s_count = pipeline.num_stages(), m_count = pipeline.micro_batches();
  const size_t devices = pipeline.devices().size();  // replica d's stage s is device d * S + s
  if (static_cast<int>(micro_batches.size()) != m_count * pipeline.replicas()) {
    throw Error(errors::Internal("SchedulePipeline: {} ranges for {} replicas x {} micro-batches", micro_batches.size(),
                                 pipeline.replicas(), m_count));
  }
  // segment[device][micro-batch][backward]: the nodes.
  std::vector<std::vector<std::array<std::vector<Node*>, 2>>> segment(
      devices, std::vector<std::array<std::vector<Node*>, 2>>(static_cast<size_t>(m_count)));
  for (Node* n : g->nodes()) {
    int replica = 0;
    const int stage = pipeline.StageOfDevice(n->requested_device(), &replica);
    if (stage < 0) continue;
    for (int m = 0; m < m_count; ++m) {
      const PipelineRanges& r = micro_batches[static_cast<size_t>(replica * m_count + m)];
      if (n->id() >= r.forward_begin && n->id() < r.end) {
        segment[static_cast<size_t>(replica * s_count + stage)][static_cast<size_t>(m)]
               [n->id() >= r.backward_begin ? 1 : 0].push_back(n);
      }
    }
  }
  for (size_t k = 0; k < devices; ++k) {
    const int s = static_cast<int>(k) % s_count, replica = static_cast<int>(k) / s_count;
    const Scope scope = Scope::Root(g).WithDevice(pipeline.devices()[k]);
    const std::string prefix = replica == 0 ? fmt::format("pipeline/stage_{}", s)
                                            : fmt::format("pipeline/replica_{}/stage_{}", replica, s);
    const std::vector<Node*>* previous = nullptr;
    int i = 0;
    for (const PipelineSegment& seg : pipeline.StageOrder(s)) {
      const std::vector<Node*>& nodes = segment[k][static_cast<size_t>(seg.micro_batch)][seg.backward ? 1 : 0];
      if (nodes.empty()) continue;
      if (previous != nullptr) {
        Node* gate = ops::NoOp(scope.WithOpName(fmt::format("{}/{}_{}_{}", prefix, i++,
                                                            seg.backward ? "backward" : "forward", seg.micro_batch)));
        for (Node* p : *previous) g->AddControlEdge(p, gate);
        for (Node* n : nodes) {
          if (n->num_inputs() > 0) g->AddControlEdge(gate, n);
        }
      }
      previous = &nodes;
    }
  }
}

std::vector<double> LayerCostsFromTrace(const StepTrace& trace, const std::vector<train::LayerPtr>& layers) {
  std::map<std::string, size_t> index;
  for (size_t i = 0; i < layers.size(); ++i) index[layers[i]->name()] = i;
  std::vector<double> costs(layers.size(), 0.0);
  for (const TraceEvent& e : trace.events()) {
    std::string_view name = e.name;
    if (name.starts_with("gradients/")) name.remove_prefix(std::string_view("gradients/").size());
    const auto it = index.find(std::string(name.substr(0, name.find('/'))));
    if (it != index.end()) costs[it->second] += static_cast<double>(e.end_us - e.start_us);
  }
  return costs;
}

double MeasuredBubble(const StepTrace& trace, const PipelineStrategy& pipeline, std::vector<double>* stages) {
  const std::vector<TraceEvent> events = trace.events();
  std::vector<std::vector<std::pair<int64_t, int64_t>>> busy(static_cast<size_t>(pipeline.num_stages()));
  int64_t begin = std::numeric_limits<int64_t>::max(), end = std::numeric_limits<int64_t>::min();
  for (const TraceEvent& e : events) {
    begin = std::min(begin, e.start_us);
    end = std::max(end, e.end_us);
    int replica = 0;
    const int s = pipeline.StageOfDevice(e.device, &replica);
    if (s >= 0 && replica == 0 && e.op != "_Recv") busy[static_cast<size_t>(s)].emplace_back(e.start_us, e.end_us);
  }
  if (stages != nullptr) stages->assign(busy.size(), -1.0);
  double sum = 0;
  int traced = 0;
  for (size_t s = 0; s < busy.size(); ++s) {
    if (busy[s].empty() || end <= begin) continue;
    // The union of the stage's kernel intervals (kernels of one device overlap on several threads).
    std::sort(busy[s].begin(), busy[s].end());
    int64_t covered = 0, run_begin = busy[s][0].first, run_end = busy[s][0].second;
    for (const auto& [b, e] : busy[s]) {
      if (b > run_end) {
        covered += run_end - run_begin;
        run_begin = b;
      }
      run_end = std::max(run_end, e);
    }
    covered += run_end - run_begin;
    const double idle = 1.0 - static_cast<double>(covered) / static_cast<double>(end - begin);
    if (stages != nullptr) (*stages)[s] = idle;
    sum += idle;
    ++traced;
  }
  return traced == 0 ? -1.0 : sum / traced;
}

double PipelineStrategy::bubble_fraction() const {
  const double s = options_.num_stages, m = options_.micro_batches;
  return (s - 1) / (m + s - 1);
}

}  // namespace weft
