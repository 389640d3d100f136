// The GPU kernels of the state ops (ops/kernels/cuda/state.cc) on a device variable, against the
// CPU.
// These need a GPU: without one every case says so (MESSAGE "SKIPPED ...") and returns.
#include <doctest/doctest.h>

#include "graph/scope.h"
#include "graph/session.h"
#include "ops/framework.h"
#include "ops/state.h"
#include "tests/cuda/gpu_test_util.h"

using namespace weft;
using namespace weft::test;

TEST_CASE("GPU AssignAdd / AssignSub update a device variable as the CPU does") {
  if (!HaveGpu()) return;
  for (DType dt : {DType::kFloat32, DType::kInt64}) {
    std::vector<double> got[2];
    for (int gpu = 0; gpu < 2; ++gpu) {
      Graph g;
      Scope s = Scope::Root(&g).WithDevice(gpu == 1 ? kGpu : kCpu);
      Output v = ops::Variable(s.WithOpName("v"), {3}, dt);
      auto value = [&](std::vector<int64_t> x) {
        Tensor t(dt, TensorShape{3});
        for (size_t i = 0; i < 3; ++i) {
          if (dt == DType::kFloat32) t.data<float>()[i] = static_cast<float>(x[i]);
          else t.data<int64_t>()[i] = x[i];
        }
        return ops::Const(s, t);
      };
      Output init = ops::Assign(s, v, value({1, 2, 3}));
      Output add = ops::AssignAdd(s, v, value({10, 20, 30}));
      Output sub = ops::AssignSub(s, v, value({1, 1, 5}));
      Output read = ops::Identity(s, v);
      SessionOptions o;
      o.soft_placement = false;
      Session sess(&g, o);
      for (const Output& step : {init, add, add, sub}) sess.Run({}, {}, {step.node});
      const Tensor t = sess.Run({}, {read})[0];
      for (int64_t i = 0; i < t.num_elements(); ++i) got[gpu].push_back(t.ElementAsDouble(i));
    }
    CHECK(got[1] == got[0]);
    CHECK(got[1] == std::vector<double>{20, 41, 58});
  }
}
