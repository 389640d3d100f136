// mnist_cnn trained on the GPU against the CPU with the same seed, end to end (every GPU kernel of
// its training step).
// These need a GPU: without one every case says so (MESSAGE "SKIPPED ...") and returns.
#include <doctest/doctest.h>

#include "tests/cuda/gpu_test_util.h"
#include "zoo/models.h"

using namespace weft;
using namespace weft::test;

TEST_CASE("mnist_cnn: 50 training steps on the GPU track the CPU with the same seed") {
  if (!HaveGpu()) return;
  const zoo::ZooModel& zm = zoo::FindZooModel("mnist_cnn");
  const Tensor x = Rand({32, 28, 28, 1}, 0, 1, 7, DType::kFloat32);
  Tensor y(DType::kInt32, TensorShape{32});
  for (int i = 0; i < 32; ++i) y.data<int32_t>()[i] = (i * 7) % 10;
  std::vector<double> losses[2];
  for (int gpu = 0; gpu < 2; ++gpu) {
    std::unique_ptr<train::Model> m = zm.build(TensorShape{28, 28, 1}, 10);
    train::CompileOptions co;
    co.loss = train::SparseCategoricalCrossentropy(/*from_logits=*/true);
    co.optimizer = train::SGD(0.05, 0.9);
    co.seed = 1;
    co.session.use_gpus = gpu == 1;
    co.session.inter_op_threads = co.session.intra_op_threads = 2;
    m->Compile(co);
    if (gpu == 1) CHECK(m->session()->devices().ShortNames().find("GPU:0") != std::string::npos);
    for (int step = 0; step < 50; ++step) losses[gpu].push_back(m->TrainOnBatch(x, y).at("loss"));
  }
  CHECK(losses[1].back() < losses[1].front());  // it learns on the GPU
  for (int step = 0; step < 50; step += 7) {
    INFO("step " << step);
    CHECK(losses[1][step] == doctest::Approx(losses[0][step]).epsilon(0.02));
  }
}
