// GEMM libraries side by side on the zoo's GEMM shapes (issue 18): oneDNN's sgemm (what weft's
// GEMM blocks call, ops/kernels/cpu/onednn.cc), Eigen's matrix product (weft's portable fallback),
// OpenBLAS and BLIS (Debian's pthread builds, each dlopen'ed on its own so their cblas_sgemm do not
// clash). Row-major C = op(A) op(B), float32. One library per process (--lib=NAME): OpenBLAS's and
// BLIS's threads spin after a call and would slow the next library in the same process. Prints one
// line per case, "LIB CASE MxNxK THREADS GFLOP/s", the median of --rounds timings of at least
// --min-time seconds each. bench/run_gemm_libs.sh runs the libraries in turn and prints the table.
#include <dlfcn.h>
#include <dnnl.h>
#include <omp.h>

#include <Eigen/Core>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

namespace {
using Clock = std::chrono::steady_clock;
using RowMajor = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

// cblas_sgemm and the library's thread-count setter, from a library opened with RTLD_LOCAL.
struct Cblas {
  using Sgemm = void (*)(int, int, int, int, int, int, float, const float*, int, const float*, int, float, float*, int);
  Sgemm sgemm = nullptr;
  void (*set_threads)(int) = nullptr;
  bool Open(const char* path, const char* setter) {
    void* h = dlopen(path, RTLD_NOW | RTLD_LOCAL | RTLD_DEEPBIND);
    if (!h) return false;
    sgemm = reinterpret_cast<Sgemm>(dlsym(h, "cblas_sgemm"));
    set_threads = reinterpret_cast<void (*)(int)>(dlsym(h, setter));
    return sgemm && set_threads;
  }
};
constexpr int kRowMajor = 101, kNoTrans = 111, kTrans = 112;

double Seconds(const std::function<void()>& f, double min_time) {
  f();  // warm-up: packing buffers, JIT, thread start
  int reps = 0;
  const auto t0 = Clock::now();
  double s = 0;
  do {
    f();
    ++reps;
    s = std::chrono::duration<double>(Clock::now() - t0).count();
  } while (s < min_time);
  return s / reps;
}
}  // namespace

int main(int argc, char** argv) {
  double min_time = 0.2;
  int rounds = 3;
  std::string only = "onednn";
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a.rfind("--min-time=", 0) == 0) min_time = std::atof(a.c_str() + 11);
    if (a.rfind("--rounds=", 0) == 0) rounds = std::atoi(a.c_str() + 9);
    if (a.rfind("--lib=", 0) == 0) only = a.substr(6);
  }
  const std::vector<std::string> names = {"onednn", "eigen", "openblas", "blis"};
  const size_t lib = std::find(names.begin(), names.end(), only) - names.begin();
  if (lib == names.size()) {
    std::fprintf(stderr, "gemm_libs: unknown --lib=%s (onednn, eigen, openblas, blis)\n", only.c_str());
    return 2;
  }
  Cblas openblas, blis;
  if (only == "openblas" &&
      !openblas.Open("/usr/lib/x86_64-linux-gnu/openblas-pthread/libopenblas.so.0", "openblas_set_num_threads")) {
    std::fprintf(stderr, "gemm_libs: cannot open Debian's OpenBLAS (libopenblas0-pthread)\n");
    return 2;
  }
  if (only == "blis" && !blis.Open("/usr/lib/x86_64-linux-gnu/blis-pthread/libblis.so.4", "bli_thread_set_num_threads")) {
    std::fprintf(stderr, "gemm_libs: cannot open Debian's BLIS (libblis4-pthread)\n");
    return 2;
  }
  // The MLP 784-512-512-10's GEMMs at batch 64 and 256: forward x W, input gradient dy W^T,
  // weight gradient x^T dy.
  struct Case { int m, n, k; bool ta, tb; const char* what; };
  std::vector<Case> cases;
  for (int b : {64, 256}) {
    cases.push_back({b, 512, 784, false, false, "fwd1"});
    cases.push_back({b, 512, 512, false, false, "fwd2"});
    cases.push_back({b, 784, 512, false, true, "dx1"});
    cases.push_back({784, 512, b, true, false, "dW1"});
    cases.push_back({512, 512, b, true, false, "dW2"});
  }
  for (int threads : {1, 2}) {
    omp_set_num_threads(threads);
    Eigen::setNbThreads(threads);
    if (openblas.set_threads) openblas.set_threads(threads);
    if (blis.set_threads) blis.set_threads(threads);
    for (const Case& c : cases) {
      const int lda = c.ta ? c.m : c.k, ldb = c.tb ? c.k : c.n;
      std::vector<float> a(static_cast<size_t>(c.m) * c.k), b(static_cast<size_t>(c.k) * c.n),
          out(static_cast<size_t>(c.m) * c.n);
      for (size_t i = 0; i < a.size(); ++i) a[i] = static_cast<float>(i % 7) * 0.1f;
      for (size_t i = 0; i < b.size(); ++i) b[i] = static_cast<float>(i % 5) * 0.1f;
      Eigen::Map<const RowMajor> ea(a.data(), c.ta ? c.k : c.m, c.ta ? c.m : c.k);
      Eigen::Map<const RowMajor> eb(b.data(), c.tb ? c.n : c.k, c.tb ? c.k : c.n);
      Eigen::Map<RowMajor> eo(out.data(), c.m, c.n);
      std::vector<std::function<void()>> libs = {
          [&] {
            dnnl_sgemm(c.ta ? 'T' : 'N', c.tb ? 'T' : 'N', c.m, c.n, c.k, 1.0f, a.data(), lda, b.data(), ldb, 0.0f,
                       out.data(), c.n);
          },
          [&] {
            if (c.ta) eo.noalias() = ea.transpose() * eb;
            else if (c.tb) eo.noalias() = ea * eb.transpose();
            else eo.noalias() = ea * eb;
          },
          [&] {
            openblas.sgemm(kRowMajor, c.ta ? kTrans : kNoTrans, c.tb ? kTrans : kNoTrans, c.m, c.n, c.k, 1.0f,
                           a.data(), lda, b.data(), ldb, 0.0f, out.data(), c.n);
          },
          [&] {
            blis.sgemm(kRowMajor, c.ta ? kTrans : kNoTrans, c.tb ? kTrans : kNoTrans, c.m, c.n, c.k, 1.0f, a.data(),
                       lda, b.data(), ldb, 0.0f, out.data(), c.n);
          },
      };
      std::vector<double> secs;
      for (int r = 0; r < rounds; ++r) secs.push_back(Seconds(libs[lib], min_time));
      std::sort(secs.begin(), secs.end());
      std::printf("%s %s %dx%dx%d %d %.1f\n", only.c_str(), c.what, c.m, c.n, c.k, threads,
                  2.0 * c.m * c.n * c.k / secs[secs.size() / 2] / 1e9);
      std::fflush(stdout);
    }
  }
}
