// Random ops. Every random op carries two seeds (TF's scheme):
//   - op seed 0 and graph seed set:  seed = graph seed, seed2 = Graph::NextOpSeed()
//   - op seed set:                   seed = graph seed (or kDefaultGraphSeed), seed2 = op seed
//   - both 0:                        a random (seed, seed2) drawn when the node is built
// so a seeded graph builds the same ops with the same seeds, and a fresh Session of it produces
// the same values. The kernels (ops/kernels/cpu/random.cc) use a counter-based generator keyed on
// (seed, seed2): successive runs of one kernel continue the stream, in parallel and reproducibly.
//
// RandomUniformLike is RandomUniform over [0, 1) with the shape of its input (known only at run
// time, as TF's random_uniform(tf.shape(x))): what a dropout whose keep probability is fed needs.
//
// The Stateless* ops (tf.random.stateless_*) take the shape and a seed tensor of shape [2] as
// inputs and are pure functions of them: the same (shape, seed) gives the same values in every run,
// Session and thread count (element e reads Philox block e / kPer under the key of (seed[0],
// seed[1]), as the stateful ops do). They are not TensorFlow's numbers bit for bit.
//
// Dropout is one op with two outputs, the result and the scaled keep mask
// (1 / (1 - rate) where kept, 0 where dropped); its gradient reuses that mask, so the backward
// pass sees exactly the mask of the forward pass of the same step.
#include "ops/random.h"

#include <random>

#include "ops/all_ops.h"
#include "ops/math.h"

namespace weft {

namespace {

constexpr int64_t kDefaultGraphSeed = 87654321;  // TF's DEFAULT_GRAPH_SEED

void RandomShape(InferenceContext& c) {
  TensorShape shape = c.attr<TensorShape>("shape");
  WEFT_REQUIRE(shape.IsFullyDefined(), "attr shape must be fully defined, got {}", shape.ToString());
  c.set_output(0, shape);
}

void RandomUniformShape(InferenceContext& c) {
  double lo = c.attr<double>("minval"), hi = c.attr<double>("maxval");
  WEFT_REQUIRE(lo <= hi, "minval must be <= maxval, got minval={} maxval={}", lo, hi);
  RandomShape(c);
}

void RandomNormalShape(InferenceContext& c) {
  double stddev = c.attr<double>("stddev");
  WEFT_REQUIRE(stddev >= 0, "stddev must be >= 0, got {}", stddev);
  RandomShape(c);
}

void LikeShape(InferenceContext& c) { c.set_output(0, c.input(0)); }

void DropoutShape(InferenceContext& c) {
  double rate = c.attr<double>("rate");
  WEFT_REQUIRE(rate >= 0.0 && rate < 1.0, "rate must be in [0, 1), got {}", rate);
  c.set_output(0, c.input(0));
  c.set_output(1, c.input(0));
}

// y = x * mask  (mask = keep / (1 - rate)):  dx = dy * mask
std::vector<Output> DropoutGrad(const Scope& s, const Node& op, const std::vector<Output>& dy) {
  Output mask(const_cast<Node*>(&op), 1);
  return {ops::Mul(s, dy[0], mask)};
}

const std::vector<DType> kRandomTypes = {DType::kFloat32, DType::kFloat64};
const std::vector<DType> kIntTypes = {DType::kInt32, DType::kInt64};

// Stateless ops: input 0 the shape (a vector of dims), input 1 the seed ([2]).
void StatelessShape(InferenceContext& c) {
  c.WithRank(c.input(0), 1, "shape");
  c.MergeDim(c.WithRank(c.input(1), 1, "seed").dim(0), 2, "seed must have shape [2]; its dim 0");
  TensorShape out = c.InputAsShape(0);
  if (out.IsFullyDefined()) out.num_elements();  // rejects overflowing dims now
  c.set_output(0, out);
}

void StatelessIntShape(InferenceContext& c) {
  c.WithRank(c.input(2), 0, "minval");
  c.WithRank(c.input(3), 0, "maxval");
  const Tensor *lo = c.input_tensor(2), *hi = c.input_tensor(3);
  if (lo != nullptr && hi != nullptr) {
    WEFT_REQUIRE(lo->ElementAsInt64(0) < hi->ElementAsInt64(0), "Need minval < maxval, got minval={} maxval={}",
                 lo->ElementAsInt64(0), hi->ElementAsInt64(0));
  }
  StatelessShape(c);
}

void CandidateSamplerShape(InferenceContext& c) {
  const int64_t num_true = c.attr<int64_t>("num_true"), num_sampled = c.attr<int64_t>("num_sampled");
  const int64_t range_max = c.attr<int64_t>("range_max");
  WEFT_REQUIRE(num_true >= 1 && num_sampled >= 1 && range_max >= 1,
               "num_true ({}), num_sampled ({}) and range_max ({}) must be >= 1", num_true, num_sampled, range_max);
  WEFT_REQUIRE(!c.attr<bool>("unique") || num_sampled <= range_max,
               "unique sampling needs num_sampled ({}) <= range_max ({})", num_sampled, range_max);
  TensorShape t = c.WithRank(c.input(0), 2, "true_classes");
  c.MergeDim(t.dim(1), num_true, "true_classes' dim 1 and num_true");
  c.set_output(0, TensorShape({num_sampled}));
  c.set_output(1, t);
  c.set_output(2, TensorShape({num_sampled}));
}

void StatelessBinomialShape(InferenceContext& c) {
  StatelessShape(c);
  // counts and probs broadcast to the output shape; their own shapes are checked by the kernel.
}

}  // namespace

void RegisterRandomOps(OpRegistry& r) {
  r.Register("RandomUniform").Output("output", "dtype")
      .TypeAttr("dtype", kRandomTypes, DType::kFloat32)
      .Attr("shape", AttrType::kShape)
      .Attr("minval", 0.0).Attr("maxval", 1.0)
      .Attr("seed", 0).Attr("seed2", 0)
      .Shape(RandomUniformShape).NoGradient().Stateful()
      .Doc("Uniform values in [minval, maxval) of the given shape.");
  r.Register("RandomNormal").Output("output", "dtype")
      .TypeAttr("dtype", kRandomTypes, DType::kFloat32)
      .Attr("shape", AttrType::kShape)
      .Attr("mean", 0.0).Attr("stddev", 1.0)
      .Attr("seed", 0).Attr("seed2", 0)
      .Shape(RandomNormalShape).NoGradient().Stateful()
      .Doc("Normal values with the given mean and standard deviation.");
  r.Register("TruncatedNormal").Output("output", "dtype")
      .TypeAttr("dtype", kRandomTypes, DType::kFloat32)
      .Attr("shape", AttrType::kShape)
      .Attr("mean", 0.0).Attr("stddev", 1.0)
      .Attr("seed", 0).Attr("seed2", 0)
      .Shape(RandomNormalShape).NoGradient().Stateful()
      .Doc("Normal values redrawn while more than 2 standard deviations from the mean.");
  r.Register("RandomUniformLike").Input("x", "T").Output("output", "T")
      .TypeAttr("T", kRandomTypes)
      .Attr("seed", 0).Attr("seed2", 0)
      .Shape(LikeShape).NoGradient().Stateful()
      .Doc("Uniform values in [0, 1) with the shape of x (x's values are not read); the same stream as "
           "RandomUniform for the same seeds.");
  auto stateless = [&r](const char* name) -> OpDefBuilder {
    return r.Register(name).Input("shape", "Tshape").Input("seed", "Tseed")
        .TypeAttr("Tshape", kIntTypes, DType::kInt32).TypeAttr("Tseed", kIntTypes, DType::kInt64);
  };
  stateless("StatelessRandomUniform").Output("output", "dtype").TypeAttr("dtype", kRandomTypes, DType::kFloat32)
      .Shape(StatelessShape).NoGradient()
      .Doc("Uniform values in [0, 1) of shape `shape`, a pure function of (shape, seed); seed has shape [2].");
  stateless("StatelessRandomNormal").Output("output", "dtype").TypeAttr("dtype", kRandomTypes, DType::kFloat32)
      .Shape(StatelessShape).NoGradient()
      .Doc("Standard normal values of shape `shape`, a pure function of (shape, seed); seed has shape [2].");
  stateless("StatelessTruncatedNormal").Output("output", "dtype").TypeAttr("dtype", kRandomTypes, DType::kFloat32)
      .Shape(StatelessShape).NoGradient()
      .Doc("Standard normal values redrawn while |x| > 2, a pure function of (shape, seed); seed has shape [2].");
  stateless("StatelessRandomUniformInt").Input("minval", "dtype").Input("maxval", "dtype")
      .Output("output", "dtype").TypeAttr("dtype", kIntTypes)
      .Shape(StatelessIntShape).NoGradient()
      .Doc("Integers uniform in [minval, maxval) (scalars, minval < maxval), a pure function of (shape, seed).");
  stateless("StatelessRandomUniformFullInt").Output("output", "dtype").TypeAttr("dtype", kIntTypes, DType::kInt64)
      .Shape(StatelessShape).NoGradient()
      .Doc("Integers uniform over the whole range of dtype, a pure function of (shape, seed).");
  stateless("StatelessRandomBinomial").Input("counts", "T").Input("probs", "T")
      .Output("output", "dtype").TypeAttr("T", kRandomTypes, DType::kFloat64)
      .TypeAttr("dtype", {DType::kFloat32, DType::kFloat64, DType::kInt32, DType::kInt64}, DType::kInt64)
      .Shape(StatelessBinomialShape).NoGradient()
      .Doc("Binomial(counts, probs) draws of shape `shape` (counts and probs broadcast to it), a pure function "
           "of (shape, seed).");
  r.Register("LogUniformCandidateSampler").Input("true_classes", "int64")
      .Output("sampled_candidates", "int64").Output("true_expected_count", "float32")
      .Output("sampled_expected_count", "float32")
      .Attr("num_true", AttrType::kInt).Attr("num_sampled", AttrType::kInt).Attr("unique", AttrType::kBool)
      .Attr("range_max", AttrType::kInt).Attr("seed", 0).Attr("seed2", 0)
      .Shape(CandidateSamplerShape).NoGradient().Stateful()
      .Doc("num_sampled classes drawn from P(c) = log((c + 2) / (c + 1)) / log(range_max + 1) over [0, range_max) "
           "(unique: without repeats), with the expected count of each true and sampled class (TF's formulas).");
  r.Register("Dropout").Input("x", "T").Output("output", "T").Output("mask", "T")
      .TypeAttr("T", kRandomTypes)
      .Attr("rate", AttrType::kFloat)
      .Attr("seed", 0).Attr("seed2", 0)
      .Shape(DropoutShape).Grad(DropoutGrad).Stateful()
      .Doc("Zeroes each element with probability rate and scales the rest by 1 / (1 - rate); "
           "output 1 is the scaled keep mask (output = x * mask).");
}

namespace ops {

namespace {

// The (seed, seed2) attrs of a new random op; see the top of this file.
AttrMap Seeds(const Scope& s, int64_t op_seed) {
  int64_t graph_seed = s.graph()->seed();
  int64_t seed = 0, seed2 = 0;
  if (op_seed != 0) {
    seed = graph_seed != 0 ? graph_seed : kDefaultGraphSeed;
    seed2 = op_seed;
  } else if (graph_seed != 0) {
    seed = graph_seed;
    seed2 = s.graph()->NextOpSeed();
  } else {
    std::random_device rd;
    auto draw = [&] { return static_cast<int64_t>((uint64_t{rd()} << 31) ^ rd()) & 0x7fffffffffffffff; };
    while (seed == 0) seed = draw();
    seed2 = draw();
  }
  return {{"seed", seed}, {"seed2", seed2}};
}

Output RandomOp(const Scope& s, std::string_view op, TensorShape shape, DType dtype, const char* a, double va,
                const char* b, double vb, int64_t seed) {
  AttrMap attrs = Seeds(s, seed);
  attrs["shape"] = std::move(shape);
  attrs["dtype"] = dtype;
  attrs[a] = va;
  attrs[b] = vb;
  return s.Op(op, {}, std::move(attrs));
}

}  // namespace

Output RandomUniform(const Scope& s, TensorShape shape, DType dtype, double minval, double maxval, int64_t seed) {
  return RandomOp(s, "RandomUniform", std::move(shape), dtype, "minval", minval, "maxval", maxval, seed);
}
Output RandomNormal(const Scope& s, TensorShape shape, DType dtype, double mean, double stddev, int64_t seed) {
  return RandomOp(s, "RandomNormal", std::move(shape), dtype, "mean", mean, "stddev", stddev, seed);
}
Output TruncatedNormal(const Scope& s, TensorShape shape, DType dtype, double mean, double stddev, int64_t seed) {
  return RandomOp(s, "TruncatedNormal", std::move(shape), dtype, "mean", mean, "stddev", stddev, seed);
}
Output RandomUniformLike(const Scope& s, Output x, int64_t seed) {
  return s.Op("RandomUniformLike", {x}, Seeds(s, seed));
}
Output Dropout(const Scope& s, Output x, double rate, int64_t seed) {
  AttrMap attrs = Seeds(s, seed);
  attrs["rate"] = rate;
  return s.Op("Dropout", {x}, std::move(attrs));
}

}  // namespace ops

}  // namespace weft
