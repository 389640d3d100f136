// The op-attribute fuzzer: for every registered op, a node with valid-ish inputs (small
// constants) and default attrs, then each int, list(int) and float attr set in turn to hostile
// values (0, -1, huge, INT64_MAX/MIN, values whose products overflow, NaN, inf). Each case runs
// shape inference (building the node) and, where that passes, the CPU kernel. A case may build
// and run, or fail with a weft::Error; anything else is a finding: another exception type
// (std::bad_alloc, std::length_error, std::bad_variant_access ...), a case slower than
// kSlowCase, and, in build.sh's ASan + UBSan tree (suite ops), any memory or UB report.
//
// Bounded: the cases run in a fixed order and stop when kBudget is spent (the report says how
// many ran); a kernel whose output the shape function sizes above kMaxRunElements is not run (an
// attr may legitimately ask for gigabytes; the shape function's checks still ran). It uses no
// op-test harness call, so it records no op coverage.
#include <doctest/doctest.h>
#include <fmt/format.h>

#include <chrono>
#include <cmath>
#include <limits>
#include <set>

#include "graph/session.h"
#include "ops/framework.h"
#include "ops/op_def.h"
#include "ops/state.h"

namespace weft::test {
namespace {

using Clock = std::chrono::steady_clock;
constexpr auto kBudget = std::chrono::seconds(45);
constexpr auto kSlowCase = std::chrono::seconds(3);
constexpr int64_t kMaxRunElements = int64_t{1} << 22;

// Ops whose kernels wait for peers (a rendezvous, a collective group) or a call frame: their
// shape functions are fuzzed, their kernels are not run.
const std::set<std::string, std::less<>> kBuildOnly = {"_Send", "_Recv", "_Arg", "_Retval", "CollectiveReduce",
                                                       "CollectiveBroadcast", "CollectiveAllGather",
                                                       "CollectiveReduceScatter"};

const std::vector<int64_t> kHostileInts = {0,
                                           -1,
                                           -2,
                                           2,
                                           3,
                                           7,
                                           (int64_t{1} << 16) + 1,
                                           10'000'000,
                                           (int64_t{1} << 31) - 1,
                                           int64_t{1} << 31,
                                           -(int64_t{1} << 31),
                                           (int64_t{1} << 32) + 3,
                                           int64_t{1} << 50,
                                           (int64_t{1} << 50) + 1,
                                           int64_t{1} << 62,
                                           std::numeric_limits<int64_t>::max(),
                                           std::numeric_limits<int64_t>::min(),
                                           std::numeric_limits<int64_t>::min() + 1};
const std::vector<double> kHostileFloats = {0.0, -1.0, 1e300, -1e300, std::numeric_limits<double>::infinity(),
                                            -std::numeric_limits<double>::infinity(),
                                            std::numeric_limits<double>::quiet_NaN(), 1e-300};

// One way to build an op: its inputs (constants) and attrs.
struct Config {
  std::vector<Tensor> inputs;
  std::vector<bool> ref;  // input i is a ref input: a Variable initialized to inputs[i]
  AttrMap attrs;
};

DType PickType(const OpDef& def, const std::string& type_attr) {
  const AttrDef* a = def.FindAttr(type_attr);
  if (a == nullptr || a->allowed_types.empty()) return DType::kFloat32;
  for (DType t : a->allowed_types) {
    if (t == DType::kFloat32) return t;
  }
  return a->allowed_types.front();
}

// A small tensor of `shape`: floats 0.5, 1, 1.5 ...; integers 1 (a dim of 1, a valid index);
// bools true.
Tensor SmallTensor(DType dt, const TensorShape& shape) {
  Tensor t(dt, shape);
  const int64_t n = t.num_elements();
  Dispatch<WEFT_ALL_TYPES>(dt, "fuzz input", [&](auto tag) {
    using T = typename decltype(tag)::type;
    for (int64_t i = 0; i < n; ++i) {
      if constexpr (std::is_floating_point_v<T>) {
        t.data<T>()[i] = static_cast<T>(0.5 * static_cast<double>(i % 3 + 1));
      } else {
        t.data<T>()[i] = static_cast<T>(1);
      }
    }
  });
  return t;
}

std::vector<int64_t> Repeat(size_t n, int64_t v) { return std::vector<int64_t>(n, v); }

// Values for the attrs without defaults, fitted to a rank-`rank` input of dims `dims`.
std::optional<AttrValue> RequiredAttr(const OpDef& def, const AttrDef& a, const std::vector<int64_t>& dims) {
  const size_t rank = dims.size();
  const bool pool = def.FindAttr("ksize") != nullptr;
  switch (a.type) {
    case AttrType::kInt:
      if (a.name == "depth") return AttrValue(int64_t{3});
      if (a.name == "num_split" || a.name == "k" || a.name == "group_size" || a.name == "group_key" ||
          a.name == "instance_key" || a.name == "N") {
        return AttrValue(int64_t{1});
      }
      return AttrValue(int64_t{0});  // axis, index, rank ...
    case AttrType::kIntList:
      if (a.name == "ksize" || a.name == "pool_strides" || (a.name == "strides" && pool)) return AttrValue(Repeat(2, 1));
      if (a.name == "input_hw") return AttrValue(rank == 4 ? std::vector<int64_t>{dims[1], dims[2]} : Repeat(2, 1));
      if (a.name == "begin") return AttrValue(Repeat(rank, 0));
      if (a.name == "size" || a.name == "end") return AttrValue(dims);
      if (a.name == "strides" || a.name == "multiples") return AttrValue(Repeat(rank, 1));
      if (a.name == "paddings") return AttrValue(Repeat(2 * rank, 1));
      if (a.name == "perm") {
        std::vector<int64_t> p(rank);
        for (size_t i = 0; i < rank; ++i) p[i] = static_cast<int64_t>(rank - 1 - i);
        return AttrValue(p);
      }
      return AttrValue(std::vector<int64_t>{});
    case AttrType::kFloat: return AttrValue(0.5);
    case AttrType::kFloatList: return AttrValue(std::vector<double>{0.5});
    case AttrType::kShape: return AttrValue(TensorShape(dims));
    case AttrType::kType: return AttrValue(a.allowed_types.empty() ? DType::kFloat32 : a.allowed_types.front());
    case AttrType::kString: return AttrValue(std::string("x"));
    case AttrType::kBool: return AttrValue(false);
    case AttrType::kTensor: return AttrValue(SmallTensor(DType::kFloat32, TensorShape(dims)));
  }
  return std::nullopt;
}

// The generic configuration: every input of dims `dims` (list inputs: two of them), dtypes from
// the op's allowed types, required attrs fitted to the dims.
Config GenericConfig(const OpDef& def, const std::vector<int64_t>& dims) {
  Config c;
  for (const ArgDef& a : def.inputs) {
    const DType dt = a.type_attr.empty() ? a.fixed_type : PickType(def, a.type_attr);
    const int count = a.number_attr.empty() ? 1 : 2;
    for (int i = 0; i < count; ++i) {
      c.inputs.push_back(SmallTensor(dt, TensorShape(dims)));
      c.ref.push_back(a.is_ref);
    }
  }
  for (const AttrDef& a : def.attrs) {
    if (a.default_value.has_value()) continue;
    bool inferred = false;
    for (const ArgDef& in : def.inputs) inferred |= in.type_attr == a.name || in.number_attr == a.name;
    if (inferred) continue;
    if (auto v = RequiredAttr(def, a, dims)) c.attrs[a.name] = *v;
  }
  return c;
}

Tensor T8(const std::vector<float>& v) { return Tensor::FromVector<float>(v, TensorShape({1, 8})); }

// Configurations the generic ones miss: ops whose inputs must agree in ways one shape cannot.
std::vector<Config> SpecialConfigs(const std::string& op) {
  const Tensor x = SmallTensor(DType::kFloat32, TensorShape({1, 4, 4, 2}));
  const Tensor f = SmallTensor(DType::kFloat32, TensorShape({2, 2, 2, 3}));
  const Tensor dy = SmallTensor(DType::kFloat32, TensorShape({1, 3, 3, 3}));
  if (op == "Conv2DBackpropInput" || op == "DepthwiseConv2DBackpropInput") {
    const bool dw = op[0] == 'D';
    const Tensor fdw = SmallTensor(DType::kFloat32, TensorShape({2, 2, 2, 1}));
    const Tensor dydw = SmallTensor(DType::kFloat32, TensorShape({1, 3, 3, 2}));
    return {{{Tensor::FromVector<int32_t>({1, 4, 4, 2}, TensorShape({4})), dw ? fdw : f, dw ? dydw : dy}, {}, {}}};
  }
  if (op == "Conv2DBackpropFilter" || op == "_Conv2DBackpropFilterBias" || op == "DepthwiseConv2DBackpropFilter") {
    const bool dw = op[0] == 'D';
    const Tensor dydw = SmallTensor(DType::kFloat32, TensorShape({1, 3, 3, 2}));
    return {{{x, Tensor::FromVector<int32_t>({2, 2, 2, dw ? 1 : 3}, TensorShape({4})), dw ? dydw : dy}, {}, {}}};
  }
  if (op == "_FusedConv2D") return {{{x, f, SmallTensor(DType::kFloat32, TensorShape({3}))}, {}, {}}};
  if (op == "_FusedConv2DMaxPool") {
    return {{{x, f, SmallTensor(DType::kFloat32, TensorShape({3}))},
             {},
             {{"ksize", std::vector<int64_t>{1, 1}}, {"pool_strides", std::vector<int64_t>{1, 1}}}}};
  }
  if (op == "AvgPoolGrad") {
    return {{{Tensor::FromVector<int32_t>({1, 4, 4, 2}, TensorShape({4})), x},
             {},
             {{"ksize", std::vector<int64_t>{1, 1}}, {"strides", std::vector<int64_t>{1, 1}}}}};
  }
  if (op == "Conv2D") return {{{x, f}, {}, {}}};
  if (op == "DepthwiseConv2D") return {{{x, SmallTensor(DType::kFloat32, TensorShape({2, 2, 2, 1}))}, {}, {}}};
  const Tensor ch = SmallTensor(DType::kFloat32, TensorShape({2}));
  if (op == "FusedBatchNorm") return {{{x, ch, ch, ch, ch}, {}, {}}};
  if (op == "FusedBatchNormGrad") return {{{x, x, ch, ch, ch, ch, ch}, {}, {}}};
  const Tensor transforms = T8({1, 0, 0, 0, 1, 0, 0, 0});
  if (op == "ImageProjectiveTransform") return {{{x, transforms}, {}, {}}};
  if (op == "ImageProjectiveTransformGrad") return {{{x, transforms, x}, {}, {}}};
  if (op == "GatherGrad") {
    return {{{SmallTensor(DType::kFloat32, TensorShape({2, 3})), Tensor::FromVector<int32_t>({1, 2}, TensorShape({2})),
              Tensor::FromVector<int32_t>({4, 3}, TensorShape({2}))},
             {},
             {}}};
  }
  if (op == "StridedSliceGrad") {
    return {{{Tensor::FromVector<int32_t>({4}, TensorShape({1})), SmallTensor(DType::kFloat32, TensorShape({2}))},
             {},
             {{"begin", std::vector<int64_t>{0}}, {"end", std::vector<int64_t>{2}}, {"strides", std::vector<int64_t>{1}}}}};
  }
  if (op == "ConcatGrad") {
    return {{{SmallTensor(DType::kFloat32, TensorShape({5, 2})), Tensor::FromVector<int64_t>({2, 2}, TensorShape({2})),
              Tensor::FromVector<int64_t>({3, 2}, TensorShape({2}))},
             {},
             {{"axis", int64_t{0}}}}};
  }
  if (op == "_ConvPoolBackpropFilterBias") {
    // conv VALID [1,4,4,2] * [2,2,2,3] -> [1,3,3,3]; a 1x1 pool keeps it, every argmax tap is 0.
    const Tensor pooled = SmallTensor(DType::kFloat32, TensorShape({1, 3, 3, 3}));
    return {{{x, Tensor::FromVector<int32_t>({2, 2, 2, 3}, TensorShape({4})),
              Tensor::FromVector<int32_t>(std::vector<int32_t>(27, 0), TensorShape({1, 3, 3, 3})), pooled, pooled},
             {},
             {{"ksize", std::vector<int64_t>{1, 1}}, {"pool_strides", std::vector<int64_t>{1, 1}}}}};
  }
  if (op == "Reshape") return {{{x, Tensor::FromVector<int32_t>({4, 8}, TensorShape({2}))}, {}, {}}};
  if (op == "Fill") return {{{Tensor::FromVector<int32_t>({2, 3}, TensorShape({2})), Tensor::Scalar<float>(1)}, {}, {}}};
  return {};
}

struct Tally {
  int ops_total = 0, ops_fuzzed = 0, ops_without_base = 0, ops_without_attrs = 0;
  int cases = 0, built = 0, ran = 0, errors = 0, skipped_large = 0;
  std::vector<std::string> no_base, findings;
};

enum class Outcome { kBuilt, kRan, kLarge };

// Builds `op` from `c` in a fresh graph (shape inference) and, unless build_only or its output is
// large, runs it on the CPU. Throws what building or running throws.
Outcome BuildAndRun(const std::string& op, const Config& c, bool build_only) {
  Graph g;
  Scope s = Scope::Root(&g);
  std::vector<Output> args;
  std::vector<Node*> inits;
  for (size_t i = 0; i < c.inputs.size(); ++i) {
    const Output k = ops::Const(s.WithOpName(fmt::format("in{}", i)), c.inputs[i]);
    args.push_back(k);
    if (i < c.ref.size() && c.ref[i]) {
      args.back() = ops::Variable(s.WithOpName(fmt::format("var{}", i)), c.inputs[i].shape(), c.inputs[i].dtype());
      inits.push_back(ops::Assign(s, args.back(), k).node);
    }
  }
  Node* n = s.WithOpName("op").AddNode(op, args, c.attrs);
  if (build_only) return Outcome::kBuilt;
  for (int i = 0; i < n->num_outputs(); ++i) {
    const TensorShape& shape = n->output_shape(i);
    if (shape.IsFullyDefined() && shape.num_elements() > kMaxRunElements) return Outcome::kLarge;
  }
  SessionOptions o;
  o.inter_op_threads = 1;
  o.intra_op_threads = 1;
  o.constant_folding = false;  // the kernel runs in the step, not in a pass that drops its errors
  o.use_gpus = false;
  o.fuse_ops = false;
  Session sess(&g, o);
  if (!inits.empty()) sess.Run({}, {}, inits);
  std::vector<Output> fetches;
  for (int i = 0; i < n->num_outputs(); ++i) fetches.emplace_back(n, i);
  if (fetches.empty()) {
    sess.Run({}, {}, {n});
  } else {
    sess.Run({}, fetches);
  }
  return Outcome::kRan;
}

// A case that passes or fails with weft::Error is fine; anything else is recorded as a finding.
void RunCase(Tally& t, const std::string& op, const Config& c, bool build_only, const std::string& what) {
  ++t.cases;
  const auto start = Clock::now();
  try {
    const Outcome o = BuildAndRun(op, c, build_only);
    ++t.built;
    if (o == Outcome::kLarge) ++t.skipped_large;
    if (o == Outcome::kRan) ++t.ran;
  } catch (const Error&) {
    ++t.errors;
  } catch (const std::exception& e) {
    t.findings.push_back(fmt::format("{} {}: {} (not a weft::Error)", op, what, e.what()));
  }
  const auto took = Clock::now() - start;
  if (took > kSlowCase) {
    t.findings.push_back(fmt::format("{} {}: took {} ms", op, what,
                                     std::chrono::duration_cast<std::chrono::milliseconds>(took).count()));
  }
}

// The first configuration of `op` that builds and runs with its default attrs.
std::optional<Config> BaseConfig(const OpDef& def, bool build_only) {
  std::vector<Config> tries = SpecialConfigs(def.name);
  for (const std::vector<int64_t>& dims : std::vector<std::vector<int64_t>>{{1, 4, 4, 2}, {2, 3}, {4}, {}}) {
    tries.push_back(GenericConfig(def, dims));
  }
  for (const Config& c : tries) {
    try {
      BuildAndRun(def.name, c, build_only);
      return c;
    } catch (const Error&) {
    } catch (const std::exception&) {
    }
  }
  return std::nullopt;
}

void FuzzOp(Tally& t, const OpDef& def, Clock::time_point deadline) {
  std::vector<const AttrDef*> attrs;
  for (const AttrDef& a : def.attrs) {
    if (a.type == AttrType::kInt || a.type == AttrType::kIntList || a.type == AttrType::kFloat) attrs.push_back(&a);
  }
  if (attrs.empty()) {
    ++t.ops_without_attrs;
    return;
  }
  const bool build_only = kBuildOnly.count(def.name) > 0;
  const std::optional<Config> base = BaseConfig(def, build_only);
  if (!base) {
    ++t.ops_without_base;
    t.no_base.push_back(def.name);
    return;
  }
  ++t.ops_fuzzed;
  for (const AttrDef* a : attrs) {
    const AttrValue current = base->attrs.count(a->name) ? base->attrs.at(a->name)
                              : a->default_value        ? *a->default_value
                                                        : AttrValue(int64_t{0});
    std::vector<std::pair<AttrValue, std::string>> values;
    if (a->type == AttrType::kInt) {
      for (int64_t v : kHostileInts) values.emplace_back(v, std::to_string(v));
    } else if (a->type == AttrType::kFloat) {
      for (double v : kHostileFloats) values.emplace_back(v, fmt::format("{}", v));
    } else {
      // Each element in turn, the whole list, and wrong lengths.
      const auto* list = std::get_if<std::vector<int64_t>>(&current);
      const std::vector<int64_t> l = list ? *list : std::vector<int64_t>{};
      for (int64_t v : kHostileInts) {
        for (size_t i = 0; i < l.size(); ++i) {
          std::vector<int64_t> m = l;
          m[i] = v;
          values.emplace_back(m, fmt::format("[{}]", fmt::join(m, ",")));
        }
        values.emplace_back(Repeat(std::max<size_t>(l.size(), 1), v), fmt::format("all {}", v));
      }
      values.emplace_back(std::vector<int64_t>{}, "[]");
      values.emplace_back(Repeat(l.size() + 1, 1), fmt::format("{} ones", l.size() + 1));
    }
    for (const auto& [v, text] : values) {
      if (Clock::now() > deadline) return;
      Config c = *base;
      c.attrs[a->name] = v;
      RunCase(t, def.name, c, build_only, fmt::format("{}={}", a->name, text));
    }
  }
}

TEST_CASE("op-attribute fuzzer: every int, list(int) and float attr of every op at hostile values") {
  Tally t;
  const auto start = Clock::now();
  const auto deadline = start + kBudget;
  const std::vector<std::string> names = OpRegistry::Global().OpNames();
  bool out_of_time = false;
  for (const std::string& name : names) {
    if (Clock::now() > deadline) {
      out_of_time = true;
      break;
    }
    ++t.ops_total;
    FuzzOp(t, OpRegistry::Global().Lookup(name), deadline);
  }
  const auto secs = std::chrono::duration<double>(Clock::now() - start).count();
  MESSAGE(fmt::format("attr fuzzer: {} of {} ops fuzzed ({} without int/float attrs, {} without a valid-ish base: "
                      "{}); {} cases: {} built ({} ran, {} too large to run), {} clear errors; {} findings; {:.1f} s{}",
                      t.ops_fuzzed, names.size(), t.ops_without_attrs, t.ops_without_base, fmt::join(t.no_base, " "),
                      t.cases, t.built, t.ran, t.skipped_large, t.errors, t.findings.size(), secs,
                      out_of_time ? " (budget spent: the remaining ops did not run)" : ""));
  for (const std::string& f : t.findings) FAIL_CHECK(f);
  CHECK(t.ops_fuzzed > 0);
}

}  // namespace
}  // namespace weft::test
