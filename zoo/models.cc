#include "zoo/models.h"

#include "data/text.h"
#include "data/fortunes.h"
#include "train/layer.h"
#include "train/layers_rnn.h"

namespace weft::zoo {
namespace {

using namespace weft::train;

std::unique_ptr<Model> Mlp(const TensorShape& in, int classes) {
  return std::make_unique<Sequential>(in, std::vector<LayerPtr>{
      Flatten(), Dense(512, {.activation = "relu"}), Dense(512, {.activation = "relu"}), Dense(classes)}, "mlp");
}

// The talks' Keras MNIST CNN.
std::unique_ptr<Model> MnistCnn(const TensorShape& in, int classes) {
  return std::make_unique<Sequential>(in, std::vector<LayerPtr>{
      Conv2D(32, 3, {.activation = "relu"}), MaxPool2D(2), Flatten(), Dense(64, {.activation = "relu"}),
      Dense(classes)}, "mnist_cnn");
}

// LeNet-5 as usually written for 28x28 inputs in Keras (ReLU instead of the original tanh).
std::unique_ptr<Model> LeNet5(const TensorShape& in, int classes) {
  return std::make_unique<Sequential>(in, std::vector<LayerPtr>{
      Conv2D(6, 5, {.padding = "same", .activation = "relu"}), AvgPool2D(2),
      Conv2D(16, 5, {.activation = "relu"}), AvgPool2D(2), Flatten(),
      Dense(120, {.activation = "relu"}), Dense(84, {.activation = "relu"}), Dense(classes)}, "lenet5");
}

// Conv -> BatchNorm -> (ReLU), as the Keras CIFAR ResNet example's resnet_layer.
Sym ConvBn(Sym x, int64_t filters, int64_t kernel, int64_t stride, bool relu, bool batch_norm = true) {
  x = Conv2D(filters, kernel, {.strides = {stride, stride}, .padding = "same",
                               .kernel_initializer = HeNormal(), .kernel_l2 = 1e-4})(x);
  if (batch_norm) x = BatchNormalization()(x);
  return relu ? ReLU()(x) : x;
}

// ResNet-20 v1 (He et al. 2016, CIFAR layout): 16-32-64 filters, 3 blocks per stage, 1x1
// projection shortcuts (1x1 convolutions, no batch norm) where the shape changes.
std::unique_ptr<Model> ResNet20(const TensorShape& in, int classes) {
  Sym input = Input(in);
  Sym x = ConvBn(input, 16, 3, 1, true);
  int64_t filters = 16;
  for (int stage = 0; stage < 3; ++stage) {
    for (int block = 0; block < 3; ++block) {
      const int64_t stride = stage > 0 && block == 0 ? 2 : 1;
      Sym y = ConvBn(x, filters, 3, stride, true);
      y = ConvBn(y, filters, 3, 1, false);
      if (stride != 1) x = ConvBn(x, filters, 1, stride, false, /*batch_norm=*/false);
      x = ReLU()(train::Add()({x, y}));
    }
    filters *= 2;
  }
  x = GlobalAveragePooling2D()(x);
  Sym out = Dense(classes, {.kernel_initializer = HeNormal()})(x);
  return std::make_unique<Model>(std::vector<Sym>{input}, std::vector<Sym>{out}, "resnet20");
}

// A small VGG: three blocks of two 3x3 convolutions and a max-pool, then Dense 128 + dropout.
std::unique_ptr<Model> VggSmall(const TensorShape& in, int classes) {
  std::vector<LayerPtr> layers;
  for (int64_t filters : {32, 64, 128}) {
    layers.push_back(Conv2D(filters, 3, {.padding = "same", .activation = "relu", .kernel_initializer = HeNormal()}));
    layers.push_back(Conv2D(filters, 3, {.padding = "same", .activation = "relu", .kernel_initializer = HeNormal()}));
    layers.push_back(MaxPool2D(2));
  }
  layers.push_back(Flatten());
  layers.push_back(Dense(128, {.activation = "relu"}));
  layers.push_back(Dropout(0.5));
  layers.push_back(Dense(classes));
  return std::make_unique<Sequential>(in, std::move(layers), "vgg_small");
}

// gpt_small: a character-level decoder-only transformer (GPT-2's pre-norm block): token embedding
// plus a learned positional embedding of kGptContext positions, 4 blocks of causal self-attention
// (4 heads of 32) and a GELU MLP (512), each around a residual with LayerNormalization first, a
// final LayerNormalization and the logits Dense. Input (T) ids with T <= kGptContext (a longer
// sequence is an error of the positional embedding, never a wraparound).
constexpr int64_t kGptContext = 128, kGptLayers = 4, kGptHeads = 4, kGptDModel = 128;
std::unique_ptr<Model> GptSmall(const TensorShape& in, int vocab) {
  WEFT_REQUIRE(in.rank() == 1, "gpt_small: its input is a sequence of character ids (steps), got shape {}",
               in.ToString());
  const LayerNormalizationOptions ln{.epsilon = 1e-5};
  Sym ids = Input(in, "ids");
  Sym tokens = Embedding(vocab, kGptDModel, {.embeddings_initializer = RandomNormal(0.0, 0.02)})(ids);
  Sym x = train::Add()({tokens, PositionEmbedding(kGptContext, RandomNormal(0.0, 0.02))(tokens)});
  for (int64_t block = 0; block < kGptLayers; ++block) {
    Sym h = LayerNormalization(ln)(x);
    h = MultiHeadAttention(kGptHeads, kGptDModel / kGptHeads, {.use_causal_mask = true})({h, h});
    x = train::Add()({x, h});
    h = LayerNormalization(ln)(x);
    h = Dense(4 * kGptDModel, {.activation = "gelu"})(h);
    x = train::Add()({x, Dense(kGptDModel)(h)});
  }
  Sym logits = Dense(vocab)(LayerNormalization(ln)(x));
  return std::make_unique<Model>(std::vector<Sym>{ids}, std::vector<Sym>{logits}, "gpt_small");
}

// Text classification: CharVocab ids (and the pad id) -> Embedding 32 -> LSTM 64 -> Dense.
std::unique_ptr<Model> LstmText(const TensorShape& in, int classes) {
  return std::make_unique<Sequential>(in, std::vector<LayerPtr>{
      Embedding(data::CharVocab::kSize + 1, 32), LSTM(64), Dense(classes)}, "lstm_text");
}

}  // namespace

const std::vector<ZooModel>& ZooModels() {
  static const std::vector<ZooModel> kModels = {
      {"mlp", "multilayer perceptron 784-512-512-10 (ReLU)", {28, 28, 1}, Mlp},
      {"mnist_cnn", "the talks' Keras CNN: Conv2D 32 3x3 relu, MaxPool 2x2, Flatten, Dense 64 relu, Dense 10",
       {28, 28, 1}, MnistCnn},
      {"lenet5", "LeNet-5: Conv 6 5x5, AvgPool, Conv 16 5x5, AvgPool, Dense 120, 84, 10 (ReLU)", {28, 28, 1}, LeNet5},
      {"resnet20", "ResNet-20 v1, CIFAR layout (16-32-64 filters, batch norm, projection shortcuts)", {32, 32, 3},
       ResNet20},
      {"vgg_small", "VGG-style: 2x Conv 32, pool, 2x Conv 64, pool, 2x Conv 128, pool, Dense 128, dropout",
       {28, 28, 1}, VggSmall},
      {"gpt_small", "character-level GPT: 4 layers, 4 heads, d_model 128, context 128, learned positions (fortunes)",
       {kGptContext}, GptSmall, data::CharVocab::kSize, "fortunes"},
      {"lstm_text", "Embedding 32 + LSTM 64 + Dense over 128 characters of a fortune: which of 10 files it came from",
       {128}, LstmText, 10, "fortunes-files"},
  };
  return kModels;
}

const ZooModel& FindZooModel(const std::string& name) {
  std::string known;
  for (const ZooModel& m : ZooModels()) {
    if (m.name == name) return m;
    known += (known.empty() ? "" : ", ") + m.name;
  }
  throw Error(errors::NotFound("unknown model '{}' (known: {})", name, known));
}

}  // namespace weft::zoo
