// The text models' side of weft-zoo: sampling characters from gpt_small (`weft-zoo generate`, and
// the sample `train` prints after training a text model).
#include <cmath>
#include <random>

#include "data/text.h"
#include "zoo/commands.h"
#include "zoo/models.h"

namespace weft::zoo {

std::string SampleText(train::Model& model, const ZooModel& zm, const std::string& prompt, int64_t length,
                       double temperature, uint64_t seed) {
  WEFT_REQUIRE(temperature > 0, "generate: --temperature must be positive, got {}", temperature);
  const int64_t context = zm.synthetic_shape.dim(0);
  const data::CharVocab vocab;
  std::vector<int32_t> ids = vocab.Encode(prompt.empty() ? "\n" : prompt);
  std::mt19937_64 rng(seed);
  std::string out;
  Tensor x(DType::kFloat32, TensorShape({1, context}));
  for (int64_t n = 0; n < length; ++n) {
    // The model sees the last `context` characters (its positional table's length); the rest of
    // the window is padding that causal attention keeps from the positions read.
    const size_t start = ids.size() > static_cast<size_t>(context) ? ids.size() - context : 0;
    const int64_t used = static_cast<int64_t>(ids.size() - start);
    float* xs = x.data<float>();
    for (int64_t t = 0; t < context; ++t) xs[t] = t < used ? static_cast<float>(ids[start + t]) : 0.0f;
    const Tensor logits = model.Predict(x, 1);  // (1, context, vocabulary)
    const float* row = logits.data<float>() + (used - 1) * zm.num_classes;
    double top = row[0];
    for (int c = 1; c < zm.num_classes; ++c) top = std::max<double>(top, row[c]);
    std::vector<double> p(zm.num_classes);
    for (int c = 0; c < zm.num_classes; ++c) p[c] = std::exp((row[c] - top) / temperature);
    const int32_t next = std::discrete_distribution<int32_t>(p.begin(), p.end())(rng);
    ids.push_back(next);
    out += data::CharVocab::Char(next);
  }
  return out;
}

int GenerateCommand(const std::vector<std::string>& args) {
  Flags f(args, {"checkpoint", "prompt", "length", "temperature", "seed", "threads", "device"}, {});
  if (f.positional().size() != 1) throw UsageError("generate takes one MODEL");
  const ZooModel& zm = FindZooModel(f.positional()[0]);
  if (!zm.text()) throw UsageError(fmt::format("generate needs a text model; {} is not one", zm.name));
  if (!f.Has("checkpoint")) throw UsageError("generate needs --checkpoint PATH (from train --checkpoint-dir)");
  std::unique_ptr<train::Model> model = zm.build(zm.synthetic_shape, zm.num_classes);
  train::CompileOptions co;
  co.loss = train::SparseCategoricalCrossentropy(/*from_logits=*/true);
  co.optimizer = train::SGD();
  co.session.inter_op_threads = co.session.intra_op_threads = static_cast<int>(f.Int("threads", 2, 1));
  co.session.use_gpus = f.Str("device", "auto") != "cpu";
  model->Compile(co);
  model->LoadWeights(f.Str("checkpoint", ""));
  const std::string prompt = f.Str("prompt", "");
  const std::string text = SampleText(*model, zm, prompt, f.Int("length", 200, 1), f.Float("temperature", 0.8),
                                      static_cast<uint64_t>(f.Int("seed", 1, 0)));
  std::printf("%s%s\n", prompt.c_str(), text.c_str());
  return 0;
}

}  // namespace weft::zoo
