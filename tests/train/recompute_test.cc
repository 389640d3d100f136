// CompileOptions::recompute (activation recomputation of named layers, graph/recompute.h): one
// training step with and without it makes the same update (so the gradients are equal), the step
// peaks lower, and recomputed layers train under a 1F1B pipeline as plain ones on one device.
#include <doctest/doctest.h>

#include <cmath>

#include "train/model.h"
#include "train/pipeline.h"

using namespace weft;
using namespace weft::train;

namespace {

CompileOptions Options(std::vector<std::string> recompute, Optimizer opt = SGD(1.0)) {
  CompileOptions o;
  o.loss = SparseCategoricalCrossentropy(/*from_logits=*/true);
  o.optimizer = std::move(opt);  // SGD(1): w1 = w0 - dw, so equal updates are equal gradients
  o.session.inter_op_threads = 1;
  o.session.intra_op_threads = 1;
  o.session.device_memory_limit = int64_t{1} << 34;  // a budget, so that the allocator reports its peak
  o.seed = 11;  // the same initial weights in every model of a test
  o.recompute = std::move(recompute);
  return o;
}

std::unique_ptr<Model> Mlp() {
  return std::make_unique<Sequential>(
      TensorShape({16}),
      std::vector<LayerPtr>{Dense(64, {.activation = "tanh"}), Dense(64, {.activation = "gelu"}), Dense(5)}, "mlp");
}

// Two gpt_small blocks (zoo/models.cc): pre-norm causal self-attention and a GELU MLP around residuals.
std::unique_ptr<Model> GptBlock(int64_t steps) {
  Sym ids = Input({steps}, "ids", DType::kInt32);
  Sym x = Embedding(11, 32)(ids);
  for (int block = 0; block < 2; ++block) {
    Sym h = LayerNormalization()(x);
    h = MultiHeadAttention(4, 8, {.use_causal_mask = true})({h, h});
    x = Add()({x, h});
    h = LayerNormalization()(x);
    h = Dense(128, {.activation = "gelu"})(h);
    x = Add()({x, Dense(32)(h)});
  }
  Sym logits = Dense(11)(LayerNormalization()(x));
  return std::make_unique<Model>(std::vector<Sym>{ids}, std::vector<Sym>{logits}, "gpt_block");
}

std::vector<std::string> LayerNames(const Model& m, const std::vector<std::string>& kinds) {
  std::vector<std::string> names;
  for (const LayerPtr& l : m.layers()) {
    for (const std::string& k : kinds) {
      if (l->name().rfind(k, 0) == 0) names.push_back(l->name());
    }
  }
  return names;
}

struct Step {
  std::vector<Tensor> weights;
  int64_t peak = 0;
};

Step TrainOnce(Model& m, const Tensor& x, const Tensor& y) {
  m.TrainOnBatch(x, y);
  Step s;  // DeviceMemory: the peaks of the session's last step (the training step)
  for (const auto& [device, stats] : m.session()->DeviceMemory()) s.peak = std::max(s.peak, stats.peak_bytes_in_use);
  s.weights = m.session()->Run({}, m.LayerWeightNames(), {});
  return s;
}

double MaxDiff(const std::vector<Tensor>& a, const std::vector<Tensor>& b) {
  REQUIRE(a.size() == b.size());
  double d = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    for (int64_t j = 0; j < a[i].num_elements(); ++j) {
      d = std::max(d, std::fabs(static_cast<double>(a[i].data<float>()[j]) - b[i].data<float>()[j]));
    }
  }
  return d;
}

void CheckEqual(const Step& a, const Step& b) { CHECK(MaxDiff(a.weights, b.weights) <= 1e-6); }

}  // namespace

TEST_CASE("recompute: an MLP's step with its Dense layers recomputed equals the plain step") {
  Tensor x(DType::kFloat32, TensorShape({32, 16})), y(DType::kInt32, TensorShape({32}));
  for (int64_t i = 0; i < x.num_elements(); ++i) x.data<float>()[i] = static_cast<float>(std::sin(0.3 * i));
  for (int64_t i = 0; i < 32; ++i) y.data<int32_t>()[i] = static_cast<int32_t>(i % 5);
  auto plain = Mlp();
  plain->Compile(Options({}));
  auto recomputed = Mlp();
  recomputed->Compile(Options(LayerNames(*recomputed, {"dense"})));
  CheckEqual(TrainOnce(*plain, x, y), TrainOnce(*recomputed, x, y));
}

TEST_CASE("recompute: two gpt_small blocks with attention and MLP recomputed: equal step, lower peak") {
  const int64_t batch = 16, steps = 64;
  Tensor x(DType::kInt32, TensorShape({batch, steps})), y(DType::kInt32, TensorShape({batch, steps}));
  for (int64_t i = 0; i < x.num_elements(); ++i) {
    x.data<int32_t>()[i] = static_cast<int32_t>((i * 7) % 11);
    y.data<int32_t>()[i] = static_cast<int32_t>((i * 7 + 3) % 11);
  }
  auto plain = GptBlock(steps);
  plain->Compile(Options({}));
  auto recomputed = GptBlock(steps);
  recomputed->Compile(Options(LayerNames(*recomputed, {"multi_head_attention", "dense", "layer_normalization"})));
  const Step a = TrainOnce(*plain, x, y), b = TrainOnce(*recomputed, x, y);
  CheckEqual(a, b);
  MESSAGE("peak bytes: plain ", a.peak, ", recomputed ", b.peak);
  CHECK(a.peak > 0);
  // Each attention's [16, 4, 64, 64] float probabilities (1 MiB) are read by its backward pass:
  // recomputed, the first block's are not live while the second block's backward pass runs.
  CHECK(b.peak + (1 << 20) <= a.peak);
}

TEST_CASE("recompute: under a 1F1B pipeline, training equals plain single-device training (1e-5)") {
  Tensor x(DType::kFloat32, TensorShape({48, 16})), y(DType::kInt32, TensorShape({48}));
  for (int64_t i = 0; i < x.num_elements(); ++i) x.data<float>()[i] = static_cast<float>(std::cos(0.37 * i));
  for (int64_t i = 0; i < 48; ++i) y.data<int32_t>()[i] = static_cast<int32_t>((i * 7) % 5);
  auto single = Mlp();
  single->Compile(Options({}, SGD(0.1, 0.9)));
  PipelineStrategy strategy({.num_stages = 2, .micro_batches = 4, .schedule = PipelineSchedule::k1F1B});
  std::unique_ptr<Model> piped;
  {
    auto scope = strategy.scope();
    piped = Mlp();
    piped->Compile(Options(LayerNames(*piped, {"dense"}), SGD(0.1, 0.9)));
  }
  const FitOptions fo{.batch_size = 16, .epochs = 2, .shuffle = false, .verbose = 0};
  single->Fit(x, y, fo);
  piped->Fit(x, y, fo);
  CHECK(MaxDiff(single->session()->Run({}, single->LayerWeightNames(), {}),
                piped->session()->Run({}, piped->LayerWeightNames(), {})) < 1e-5);
}

TEST_CASE("recompute: an unknown layer name is an error naming it") {
  auto m = Mlp();
  try {
    m->Compile(Options({"dense", "no_such_layer"}));
    FAIL("expected InvalidArgument");
  } catch (const Error& e) {
    CHECK(e.status().code() == Code::kInvalidArgument);
    CHECK(std::string(e.what()).find("recompute names layer 'no_such_layer'") != std::string::npos);
  }
}
