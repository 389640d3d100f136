// The C++ side of bench/python_overhead.py: microseconds per Session::Run of a trivial graph
// (y = x + 1 on a fed float32 scalar), to compare with the same run from Python.
//
//   build/bench/bench_session_overhead [runs]     -> {"runs": 20000, "us_per_run": 6.1}
#include <chrono>
#include <cstdio>
#include <cstdlib>

#include "graph/session.h"
#include "ops/framework.h"
#include "ops/math.h"

using namespace weft;

int main(int argc, char** argv) {
  const int runs = argc > 1 ? std::atoi(argv[1]) : 20000;
  Graph g;
  Scope s = Scope::Root(&g);
  Output x = ops::Placeholder(s.WithOpName("x"), DType::kFloat32, TensorShape({}));
  Output y = ops::Add(s.WithOpName("y"), x, ops::Const(s, 1.0f));
  SessionOptions o;
  o.inter_op_threads = 1;
  o.intra_op_threads = 1;
  Session sess(&g, o);
  const Tensor v = Tensor::Scalar<float>(1.0f);
  for (int i = 0; i < 1000; ++i) sess.Run({{x, v}}, {y});  // compile and warm up
  const auto start = std::chrono::steady_clock::now();
  float sum = 0;
  for (int i = 0; i < runs; ++i) sum += sess.Run({{x, v}}, {y})[0].scalar<float>()();
  const double us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count();
  std::printf("{\"runs\": %d, \"us_per_run\": %.3f, \"check\": %.0f}\n", runs, us / runs, sum);
  return 0;
}
