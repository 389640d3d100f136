// bench_gpu: what a GPU gives weft, each figure beside the same program on the CPU (the ratio is
// the GPU's speed-up). On a machine without a GPU it says so, with CUDA's reason, and exits 0.
//
//   build/bench/gpu/bench_gpu                 all of it
//   build/bench/gpu/bench_gpu --seconds=2     time per figure (default 1)
//
// Figures: MatMul 4096^3 and Conv2D (32x56x56x64, 3x3x64x64, SAME) in TFLOP/s through a Session
// with the op pinned to GPU:0 (inputs filled on the device, so no copies are timed); mnist_cnn
// (batch 128) and resnet20 (batch 128, 32x32x3) training images/s; host-to-device and
// device-to-host bandwidth of a 64 MiB tensor through the partitioner's _Send/_Recv (GB/s).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <functional>
#include <string>

#include "core/gpu.h"
#include "graph/session.h"
#include "ops/array.h"
#include "ops/framework.h"
#include "ops/math.h"
#include "ops/nn.h"
#include "zoo/models.h"

namespace {

using namespace weft;
using Clock = std::chrono::steady_clock;

double g_seconds = 1.0;

// Median seconds per call of `run` over about g_seconds (after 2 warm-up calls).
double Time(const std::function<void()>& run) {
  run();
  run();
  std::vector<double> t;
  const auto end = Clock::now() + std::chrono::duration<double>(g_seconds);
  while (t.size() < 3 || Clock::now() < end) {
    const auto a = Clock::now();
    run();
    t.push_back(std::chrono::duration<double>(Clock::now() - a).count());
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

SessionOptions On(bool gpu) {
  SessionOptions o;
  o.use_gpus = gpu;
  o.soft_placement = false;
  return o;
}

// One op over random inputs made where it runs; fetches a scalar (its sum) so that only the op
// and a reduction are timed.
double OpSeconds(bool gpu, const std::function<Output(const Scope&)>& build) {
  Graph g;
  Scope s = Scope::Root(&g).WithDevice(gpu ? "/device:GPU:0" : "/device:CPU:0");
  Output total = ops::Sum(s, build(s));
  Session sess(&g, On(gpu));
  return Time([&] { sess.Run({}, {total}); });
}

// A tensor of `dims` made where `s` places it (Fill: no host-to-device copy in the timed step).
Output Input(const Scope& s, std::vector<int32_t> dims) {
  return ops::Fill(s, ops::Const<int32_t>(s, dims, {static_cast<int64_t>(dims.size())}), ops::Const(s, 0.5f));
}

void Flops(const char* name, double flops, const std::function<Output(const Scope&)>& build) {
  const double g = flops / OpSeconds(true, build) / 1e12, c = flops / OpSeconds(false, build) / 1e12;
  std::printf("%-34s GPU %8.2f TFLOP/s   CPU %8.3f TFLOP/s   GPU/CPU %6.1fx\n", name, g, c, g / c);
}

double ImagesPerSecond(bool gpu, const char* model, TensorShape example, int64_t batch) {
  std::unique_ptr<train::Model> m = zoo::FindZooModel(model).build(example, 10);
  train::CompileOptions co;
  co.loss = train::SparseCategoricalCrossentropy(/*from_logits=*/true);
  co.optimizer = train::SGD(0.01, 0.9);
  co.session = On(gpu);
  co.session.soft_placement = true;  // ops without a GPU kernel run on the CPU
  m->Compile(co);
  std::vector<int64_t> dims{batch};
  for (int64_t d : example.dims()) dims.push_back(d);
  Tensor x = Tensor::Zeros(DType::kFloat32, TensorShape(dims));
  Tensor y = Tensor::Zeros(DType::kInt32, TensorShape{batch});
  return static_cast<double>(batch) / Time([&] { m->TrainOnBatch(x, y); });
}

void Bandwidth() {
  const int64_t n = int64_t{16} << 20;  // 64 MiB of float32
  const double bytes = 4.0 * static_cast<double>(n);
  {  // host -> device: a fed tensor reduced on the GPU
    Graph g;
    Scope s = Scope::Root(&g);
    Output x = ops::Placeholder(s, DType::kFloat32, {n});
    Output total = ops::Sum(s.WithDevice("/device:GPU:0"), x);
    Session sess(&g, On(true));
    Tensor v = Tensor::Zeros(DType::kFloat32, TensorShape{n});
    std::printf("%-34s %8.2f GB/s\n", "host -> device (_Send/_Recv)", bytes / Time([&] { sess.Run({{x, v}}, {total}); }) / 1e9);
  }
  {  // device -> host: a tensor made on the GPU, fetched
    Graph g;
    Scope s = Scope::Root(&g);
    Output y = ops::Fill(s.WithDevice("/device:GPU:0"), ops::Const<int32_t>(s, {static_cast<int32_t>(n)}, {1}),
                         ops::Const(s, 1.0f));
    Session sess(&g, On(true));
    std::printf("%-34s %8.2f GB/s\n", "device -> host (_Send/_Recv)", bytes / Time([&] { sess.Run({}, {y}); }) / 1e9);
  }
}

}  // namespace

int main(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    if (std::strncmp(argv[i], "--seconds=", 10) == 0) g_seconds = std::atof(argv[i] + 10);
  }
  const GpuProbe& probe = ProbeGpus();
  if (probe.count == 0) {
    std::printf("bench_gpu: no GPU: %s\n", probe.reason.c_str());
    return 0;
  }
  std::printf("bench_gpu on %s (timings: median per run)\n", probe.names[0].c_str());
  try {
    Flops("MatMul 4096x4096x4096 float32", 2.0 * 4096 * 4096 * 4096,
          [](const Scope& s) { return ops::MatMul(s, Input(s, {4096, 4096}), Input(s, {4096, 4096})); });
    Flops("Conv2D 32x56x56x64 * 3x3x64x64 SAME", 2.0 * 32 * 56 * 56 * 64 * 3 * 3 * 64, [](const Scope& s) {
      return ops::Conv2D(s, Input(s, {32, 56, 56, 64}), Input(s, {3, 3, 64, 64}), {1, 1}, "SAME");
    });
    for (auto [model, example] : {std::pair<const char*, TensorShape>{"mnist_cnn", {28, 28, 1}}, {"resnet20", {32, 32, 3}}}) {
      const double g = ImagesPerSecond(true, model, example, 128), c = ImagesPerSecond(false, model, example, 128);
      std::printf("%-34s GPU %8.0f img/s     CPU %8.1f img/s     GPU/CPU %6.1fx\n",
                  (std::string(model) + " training, batch 128").c_str(), g, c, g / c);
    }
    Bandwidth();
  } catch (const Error& e) {
    std::fprintf(stderr, "bench_gpu: %s\n", e.what());
    return 1;
  }
  return 0;
}
