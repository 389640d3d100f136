// bench_kernels: times MatMul, Conv2D and Conv2D's two backprops through a weft Session at 1 and 2
// intra-op threads and prints one JSON line per (case, threads):
//
//   {"impl":"weft","op":"matmul","shape":"512x512x512","threads":1,"ms":1.93,"gflops":139.1,"peak_frac":0.93,
//    "cpu_ms":1.95,"cpu_gflops":137.7}
//
// cpu_ms is the process's CPU time of the median run (every thread's): on a machine shared with
// other work, cpu_gflops (FLOPs per CPU-second) is what a kernel does with the cycles it gets,
// where wall time also counts the time other processes held the cores.
//
//   bench_kernels                      all default cases at 1 and 2 threads
//   bench_kernels --peak=150           peak GFLOP/s per core for peak_frac (default 150: an AVX-512
//                                      core with two 512-bit FMA units at ~2.3 GHz does 2 x 16 x 2
//                                      float32 FLOP/cycle = 64 x 2.3 = 147 GFLOP/s)
//   bench_kernels --min-time=0.5       seconds of timed runs per case (at least 5 runs)
//   bench_kernels --serve              reads cases from stdin, one per line, answers each with a
//                                      JSON line (bench/drive_kernels.py interleaves it with peers):
//                                        matmul M K N THREADS
//                                        OP N H W C KH KW O [STRIDE] SAME|VALID THREADS
//                                      with OP conv2d (forward), conv2d_bi (backprop input) or
//                                      conv2d_bf (backprop filter); all count the forward's FLOPs.
//
// Each case builds its graph once (inputs are Placeholders fed every run, so nothing is folded)
// and one Session per thread count; a run is Session::Run fetching the result, after 2 warm-up
// runs. Reported time: the median run.
#include <algorithm>
#include <cctype>
#include <chrono>
#include <ctime>
#include <iostream>
#include <map>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "graph/session.h"
#include "ops/framework.h"
#include "ops/math.h"
#include "ops/nn.h"

namespace {

// The CPU time of every thread of this process so far, in milliseconds.
double ProcessCpuMs() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return t.tv_sec * 1e3 + t.tv_nsec * 1e-6;
}

using namespace weft;

struct Case {
  std::string op;             // "matmul", "conv2d", "conv2d_bi" or "conv2d_bf"
  std::vector<int64_t> dims;  // matmul: M K N; conv: N H W C KH KW O
  std::string padding = "SAME";
  int64_t stride = 1;

  bool conv() const { return op != "matmul"; }
  std::string Shape() const {
    std::string s;
    for (int64_t d : dims) s += (s.empty() ? "" : "x") + std::to_string(d);
    if (!conv()) return s;
    return s + (stride != 1 ? "_s" + std::to_string(stride) : "") + "_" + padding;
  }
  int64_t Out(int64_t in, int64_t k) const { return padding == "SAME" ? (in + stride - 1) / stride : (in - k) / stride + 1; }
  // Multiply-adds count as 2 FLOP; a backprop does as many as its forward.
  double Flops() const {
    if (op == "matmul") return 2.0 * dims[0] * dims[1] * dims[2];
    int64_t n = dims[0], h = dims[1], w = dims[2], c = dims[3], kh = dims[4], kw = dims[5], o = dims[6];
    return 2.0 * n * Out(h, kh) * Out(w, kw) * o * kh * kw * c;
  }
};

Tensor RandomTensor(TensorShape shape, uint64_t seed) {
  Tensor t(DType::kFloat32, std::move(shape));
  std::mt19937_64 gen(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  float* p = t.data<float>();
  for (int64_t i = 0; i < t.num_elements(); ++i) p[i] = dist(gen);
  return t;
}

// One case: its graph, fed values and a Session per thread count (built on first use).
class Bench {
 public:
  explicit Bench(const Case& c) : case_(c), s_(Scope::Root(&g_)) {
    const auto& d = c.dims;
    const std::vector<int64_t> strides = {c.stride, c.stride};
    if (c.op == "matmul") {
      a_value_ = RandomTensor({d[0], d[1]}, 1);
      b_value_ = RandomTensor({d[1], d[2]}, 2);
    } else if (c.op == "conv2d_bi") {
      a_value_ = RandomTensor({d[0], c.Out(d[1], d[4]), c.Out(d[2], d[5]), d[6]}, 1);  // dy NHWC
      b_value_ = RandomTensor({d[4], d[5], d[3], d[6]}, 2);                             // filter HWIO
    } else if (c.op == "conv2d_bf") {
      a_value_ = RandomTensor({d[0], d[1], d[2], d[3]}, 1);                             // x NHWC
      b_value_ = RandomTensor({d[0], c.Out(d[1], d[4]), c.Out(d[2], d[5]), d[6]}, 2);  // dy NHWC
    } else {
      a_value_ = RandomTensor({d[0], d[1], d[2], d[3]}, 1);  // NHWC
      b_value_ = RandomTensor({d[4], d[5], d[3], d[6]}, 2);  // HWIO
    }
    a_ = ops::Placeholder(s_.WithOpName("a"), DType::kFloat32, a_value_.shape());
    b_ = ops::Placeholder(s_.WithOpName("b"), DType::kFloat32, b_value_.shape());
    if (c.op == "matmul") {
      y_ = ops::MatMul(s_, a_, b_);
    } else if (c.op == "conv2d_bi") {
      const Output sizes = ops::Const(s_, std::vector<int32_t>{int32_t(d[0]), int32_t(d[1]), int32_t(d[2]), int32_t(d[3])},
                                      TensorShape({4}));
      y_ = ops::Conv2DBackpropInput(s_, sizes, b_, a_, strides, c.padding);
    } else if (c.op == "conv2d_bf") {
      const Output sizes = ops::Const(s_, std::vector<int32_t>{int32_t(d[4]), int32_t(d[5]), int32_t(d[3]), int32_t(d[6])},
                                      TensorShape({4}));
      y_ = ops::Conv2DBackpropFilter(s_, a_, sizes, b_, strides, c.padding);
    } else {
      y_ = ops::Conv2D(s_, a_, b_, strides, c.padding);
    }
  }

  struct Timing {
    double ms, cpu_ms;  // medians of one Run: wall time, the process's CPU time
  };
  // One Run at `threads` intra-op threads.
  Timing Time(int threads, double min_seconds) {
    auto& sess = sessions_[threads];
    if (!sess) {
      SessionOptions opts;
      opts.intra_op_threads = threads;
      opts.inter_op_threads = 1;
      sess = std::make_unique<Session>(&g_, opts);
    }
    auto run = [&] { sess->Run({{a_, a_value_}, {b_, b_value_}}, {y_}); };
    run();
    run();
    std::vector<double> ms, cpu_ms;
    auto start = std::chrono::steady_clock::now();
    while (ms.size() < 5 || std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() < min_seconds) {
      auto t0 = std::chrono::steady_clock::now();
      const double c0 = ProcessCpuMs();
      run();
      cpu_ms.push_back(ProcessCpuMs() - c0);
      ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    }
    auto median = [](std::vector<double>& v) {
      std::nth_element(v.begin(), v.begin() + v.size() / 2, v.end());
      return v[v.size() / 2];
    };
    return {median(ms), median(cpu_ms)};
  }

 private:
  Case case_;
  Graph g_;
  Scope s_;
  Tensor a_value_, b_value_;
  Output a_, b_, y_;
  std::map<int, std::unique_ptr<Session>> sessions_;
};

std::string Report(const Case& c, int threads, Bench::Timing t, double peak_per_core) {
  double gflops = c.Flops() / (t.ms * 1e-3) / 1e9;
  return fmt::format(
      R"({{"impl":"weft","op":"{}","shape":"{}","threads":{},"ms":{:.4f},"gflops":{:.2f},"peak_frac":{:.3f},)"
      R"("cpu_ms":{:.4f},"cpu_gflops":{:.2f}}})",
      c.op, c.Shape(), threads, t.ms, gflops, gflops / (peak_per_core * threads), t.cpu_ms,
      c.Flops() / (std::max(t.cpu_ms, 1e-6) * 1e-3) / 1e9);
}

// "matmul M K N T" or "OP N H W C KH KW O [S] PAD T"; returns false on a malformed line.
bool ParseCase(const std::string& line, Case* c, int* threads) {
  std::istringstream in(line);
  if (!(in >> c->op)) return false;
  const bool conv = c->op == "conv2d" || c->op == "conv2d_bi" || c->op == "conv2d_bf";
  size_t n = c->op == "matmul" ? 3 : conv ? 7 : 0;
  if (n == 0) return false;
  c->dims.assign(n, 0);
  for (auto& d : c->dims) {
    if (!(in >> d) || d <= 0) return false;
  }
  if (conv) {
    std::string tok;
    if (!(in >> tok)) return false;
    if (!tok.empty() && std::isdigit(static_cast<unsigned char>(tok[0]))) {
      c->stride = std::stoll(tok);
      if (c->stride <= 0 || !(in >> tok)) return false;
    }
    c->padding = tok;
    if (c->padding != "SAME" && c->padding != "VALID") return false;
  }
  return static_cast<bool>(in >> *threads) && *threads > 0;
}

}  // namespace

int main(int argc, char** argv) {
  double peak = 150.0, min_time = 0.5;
  bool serve = false;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a.rfind("--peak=", 0) == 0) {
      peak = std::stod(a.substr(7));
    } else if (a.rfind("--min-time=", 0) == 0) {
      min_time = std::stod(a.substr(11));
    } else if (a == "--serve") {
      serve = true;
    } else {
      std::cerr << "usage: bench_kernels [--peak=GFLOPS_PER_CORE] [--min-time=SECONDS] [--serve]\n";
      return 2;
    }
  }
  std::map<std::string, std::unique_ptr<Bench>> benches;  // by case, so sessions are reused
  auto measure = [&](const Case& c, int threads) {
    auto& b = benches[c.Shape() + c.op];
    if (!b) b = std::make_unique<Bench>(c);
    return Report(c, threads, b->Time(threads, min_time), peak);
  };
  try {
    if (serve) {
      std::string line;
      while (std::getline(std::cin, line)) {
        Case c;
        int threads = 0;
        if (!ParseCase(line, &c, &threads)) {
          std::cout << R"({"error":"bad case line"})" << std::endl;
          continue;
        }
        std::cout << measure(c, threads) << std::endl;
      }
      return 0;
    }
    std::vector<Case> cases = {
        {"matmul", {256, 256, 256}},         {"matmul", {512, 512, 512}},
        {"matmul", {1024, 1024, 1024}},      {"conv2d", {64, 28, 28, 1, 3, 3, 32}, "SAME"},
        {"conv2d", {32, 32, 32, 64, 3, 3, 64}, "SAME"},
    };
    for (const Case& c : cases) {
      for (int threads : {1, 2}) std::cout << measure(c, threads) << std::endl;
    }
  } catch (const weft::Error& e) {
    std::cerr << "bench_kernels: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
