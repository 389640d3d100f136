// Every op of the zoo models' graphs (forward, loss, gradients, optimizer updates with each
// schedule, accuracy, dropout, initializers) has a GPU kernel, except the host-only ops listed
// in kHostOnly (docs/cuda.md). Runs without a GPU: it asks the kernel registry, as the placer does.
#include <doctest/doctest.h>

#include <map>
#include <set>
#include <string>

#include "ops/kernel.h"
#include "train/model.h"
#include "zoo/models.h"

using namespace weft;

#if defined(WEFT_CUDA)
namespace {

// Ops that stay on the host by design: feeds, and the ops whose outputs the executor keeps in
// host memory anyway because only the host reads them. Keep in step with docs/cuda.md.
const std::set<std::string> kHostOnly = {"Placeholder"};
// Ops with a CPU kernel only so far: the placer puts them on the CPU in a GPU build (they ask for
// no device), with the copies that costs. Keep this short and say why each is here.
const std::map<std::string, std::string> kNoGpuKernelYet = {
    {"LSTMSequence", "issue 19's fused LSTM (ops/rnn.cc) has a CPU kernel only: lstm_text's LSTM runs on the CPU"},
    {"LSTMSequenceGrad", "its gradient, likewise"},
    {"LayerNorm", "issue 19's fused LayerNorm (ops/kernels/cpu/layernorm.cc) has a CPU kernel only: gpt_small's "
                  "layer norms run on the CPU in a GPU build"},
    {"LayerNormGrad", "its gradient, likewise"},
};

std::vector<train::Optimizer> Optimizers() {
  return {train::SGD(0.05), train::SGD(0.05, 0.9), train::Adam(0.001),
          train::SGD(train::LinearWarmup(train::CosineDecay(0.05, 100), 10), 0.9),
          train::Adam(train::StepDecay(0.001, 50, 0.1))};
}

// op -> "model: node" of the first node without a GPU kernel; `seen` gets every op of the graphs.
std::map<std::string, std::string> OpsWithoutGpuKernel(std::set<std::string>* seen) {
  std::map<std::string, std::string> missing;
  for (const zoo::ZooModel& zm : zoo::ZooModels()) {
    for (const train::Optimizer& opt : Optimizers()) {
      std::unique_ptr<train::Model> m = zm.build(zm.synthetic_shape, 10);
      train::CompileOptions co;
      co.loss = train::SparseCategoricalCrossentropy(/*from_logits=*/true);
      co.optimizer = opt;
      co.metrics = {"accuracy"};
      co.seed = 1;
      co.session.use_gpus = false;
      co.session.inter_op_threads = co.session.intra_op_threads = 1;
      m->Compile(co);
      for (const Node* n : m->graph()->nodes()) {
        seen->insert(n->op());
        if (kHostOnly.count(n->op()) != 0 || kNoGpuKernelYet.count(n->op()) != 0 ||
            KernelRegistry::Global().HasKernel(*n, "GPU")) {
          continue;
        }
        missing.emplace(n->op(), zm.name + ": " + n->Describe());
      }
    }
  }
  return missing;
}

}  // namespace
#endif

TEST_CASE("zoo models: every op of the training and evaluation step has a GPU kernel") {
#if defined(WEFT_CUDA)
  std::set<std::string> seen;
  const std::map<std::string, std::string> missing = OpsWithoutGpuKernel(&seen);
  for (const auto& [op, where] : missing) MESSAGE("no GPU kernel: " << op << " (" << where << ")");
  CHECK(missing.empty());
  // The graphs hold the whole step: forward, gradients, updates, metric, dropout, initializers.
  for (const char* op : {"Conv2DBackpropFilter", "FusedBatchNormGrad", "MaxPoolGrad", "AvgPoolGrad", "ApplyAdam",
                         "ApplyMomentum", "ApplyGradientDescent", "AssignAdd", "Dropout", "ArgMax", "Equal",
                         "SparseSoftmaxCrossEntropyWithLogits", "TruncatedNormal", "RandomUniform"}) {
    INFO("op " << op);
    CHECK(seen.count(op) == 1);
  }
  std::string all;
  for (const std::string& op : seen) all += " " + op;
  MESSAGE(seen.size() << " ops in the zoo steps:" << all);
#else
  MESSAGE("SKIPPED (needs a CUDA build): weft was built without CUDA, so there are no GPU kernels");
#endif
}
