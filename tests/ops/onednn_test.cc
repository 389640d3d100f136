// The oneDNN convolution backend (ops/kernels/cpu/onednn.h) called directly: it must take the
// shapes deep nets have (so the op-level tests in nn_test.cc exercise it), match a naive double
// reference, and give the same bits on 1 and 2 threads. Skips with the reason in a build without
// oneDNN.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "core/threadpool.h"
#include "ops/kernels/cpu/onednn.h"

namespace weft {
namespace {

struct Case {
  int64_t n, ih, iw, c, kh, kw, o, stride;
  bool same;
};

Conv2DGeometry Geometry(const Case& k) {
  return MakeGeometry(k.n, k.ih, k.iw, k.c, k.kh, k.kw, {k.stride, k.stride}, {1, 1}, k.same);
}

std::vector<float> Random(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-1, 1);
  std::vector<float> v(n);
  for (float& x : v) x = u(rng);
  return v;
}

// The three passes in double, straight from the definition (NHWC, HWIO).
struct Ref {
  std::vector<double> y, dx, df;
};
Ref Naive(const Conv2DGeometry& g, int64_t O, const std::vector<float>& x, const std::vector<float>& f,
          const std::vector<float>& dy) {
  Ref r{std::vector<double>(g.n * g.oh * g.ow * O), std::vector<double>(x.size()), std::vector<double>(f.size())};
  for (int64_t n = 0; n < g.n; ++n)
    for (int64_t oh = 0; oh < g.oh; ++oh)
      for (int64_t ow = 0; ow < g.ow; ++ow)
        for (int64_t kh = 0; kh < g.kh; ++kh)
          for (int64_t kw = 0; kw < g.kw; ++kw) {
            const int64_t ih = oh * g.sh - g.pad_top + kh, iw = ow * g.sw - g.pad_left + kw;
            if (ih < 0 || ih >= g.ih || iw < 0 || iw >= g.iw) continue;
            for (int64_t c = 0; c < g.c; ++c)
              for (int64_t o = 0; o < O; ++o) {
                const int64_t xi = ((n * g.ih + ih) * g.iw + iw) * g.c + c, fi = ((kh * g.kw + kw) * g.c + c) * O + o;
                const int64_t yi = ((n * g.oh + oh) * g.ow + ow) * O + o;
                r.y[yi] += double(x[xi]) * f[fi];
                r.dx[xi] += double(dy[yi]) * f[fi];
                r.df[fi] += double(dy[yi]) * x[xi];
              }
          }
  return r;
}

void ExpectClose(const std::vector<float>& got, const std::vector<double>& want, const char* what) {
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    if (std::abs(got[i] - want[i]) > 1e-4 + 1e-4 * std::abs(want[i])) {
      FAIL(what << "[" << i << "] = " << got[i] << ", want " << want[i]);
    }
  }
}

TEST_CASE("oneDNN conv backend: resnet shapes match the reference and give the same bits on 1 and 2 threads") {
  if (!DnnlConv::Available()) {
    MESSAGE("skipped: this libweft was built without oneDNN (libdnnl-dev)");
    return;
  }
  ThreadPool one(1, "one"), two(2, "two");
  // 3x3 stride 1 and 2 at 16-64 channels, a 1x1 stride-2 projection, channels that are not a
  // multiple of the vector width, a 1x1 image, and batches of several chunks with a short last one.
  const Case cases[] = {{4, 32, 32, 16, 3, 3, 16, 1, true}, {3, 32, 32, 16, 3, 3, 32, 2, true},
                        {5, 16, 16, 32, 3, 3, 32, 1, true}, {2, 8, 8, 64, 3, 3, 64, 1, true},
                        {3, 16, 16, 16, 1, 1, 32, 2, false}, {2, 9, 7, 17, 3, 3, 20, 2, true},
                        {1, 1, 1, 24, 3, 3, 8, 1, true},     {2, 10, 10, 12, 3, 3, 6, 2, false},
                        // Winograd (UsesWinograd): three chunks of 22, 22 and 21 images, whole
                        // 4x4 tiles and cut ones (5x3), channels beyond one 16-block.
                        {65, 4, 4, 32, 3, 3, 32, 1, true},   {64, 5, 3, 48, 3, 3, 32, 1, true}};
  uint32_t seed = 1;
  for (const Case& k : cases) {
    const Conv2DGeometry g = Geometry(k);
    INFO("x [" << k.n << "," << k.ih << "," << k.iw << "," << k.c << "] filter " << k.kh << "x" << k.kw << "x" << k.o
               << " stride " << k.stride << (k.same ? " SAME" : " VALID"));
    const auto x = Random(g.n * g.ih * g.iw * g.c, seed++), f = Random(g.kh * g.kw * g.c * k.o, seed++);
    const auto dy = Random(g.n * g.oh * g.ow * k.o, seed++);
    const Ref ref = Naive(g, k.o, x, f, dy);
    DnnlConv conv;
    // The Winograd cases must take that path (it is what they test), the others the direct one.
    CHECK(conv.UsesWinograd(g, k.o) == (k.n >= 64));
    std::vector<float> y(ref.y.size()), dx(x.size()), df1(f.size()), df2(f.size());
    REQUIRE(conv.Forward(&two, g, k.o, x.data(), f.data(), y.data()));
    REQUIRE(conv.BackpropInput(&two, g, k.o, dy.data(), f.data(), dx.data()));
    REQUIRE(conv.BackpropFilter(&one, g, k.o, x.data(), dy.data(), df1.data()));
    REQUIRE(conv.BackpropFilter(&two, g, k.o, x.data(), dy.data(), df2.data()));
    ExpectClose(y, ref.y, "y");
    ExpectClose(dx, ref.dx, "dx");
    ExpectClose(df1, ref.df, "df");
    CHECK(df1 == df2);  // bit for bit: chunks and their order do not depend on the thread count
    // The filter gradient with the bias gradient (_Conv2DBackpropFilterBias): db = dy summed over
    // N, OH, OW, in the same kernel; same bits on 1 and 2 threads.
    std::vector<double> want_db(k.o);
    for (size_t i = 0; i < dy.size(); ++i) want_db[i % k.o] += dy[i];
    std::vector<float> dfb1(f.size()), dfb2(f.size()), db1(k.o), db2(k.o);
    REQUIRE(conv.BackpropFilter(&one, g, k.o, x.data(), dy.data(), dfb1.data(), db1.data()));
    REQUIRE(conv.BackpropFilter(&two, g, k.o, x.data(), dy.data(), dfb2.data(), db2.data()));
    ExpectClose(dfb1, ref.df, "df (with db)");
    ExpectClose(db1, want_db, "db");
    CHECK(dfb1 == dfb2);
    CHECK(db1 == db2);
    std::vector<float> y1(y.size());
    REQUIRE(conv.Forward(&one, g, k.o, x.data(), f.data(), y1.data()));
    CHECK(y1 == y);
    std::vector<float> dx1(dx.size());
    REQUIRE(conv.BackpropInput(&one, g, k.o, dy.data(), f.data(), dx1.data()));
    CHECK(dx1 == dx);
    // _FusedConv2D's epilogue inside the kernel: + bias, then ReLU; and ReLU alone.
    const auto bias = Random(k.o, seed++);
    std::vector<double> want(ref.y.size()), want_relu(ref.y.size());
    for (size_t i = 0; i < want.size(); ++i) {
      want[i] = ref.y[i] + bias[i % k.o];
      want_relu[i] = std::max(0.0, ref.y[i]);
    }
    REQUIRE(conv.Forward(&two, g, k.o, x.data(), f.data(), y1.data(), bias.data(), false));
    ExpectClose(y1, want, "y + bias");
    for (double& v : want) v = std::max(0.0, v);
    REQUIRE(conv.Forward(&two, g, k.o, x.data(), f.data(), y1.data(), bias.data(), true));
    ExpectClose(y1, want, "relu(y + bias)");
    REQUIRE(conv.Forward(&two, g, k.o, x.data(), f.data(), y1.data(), nullptr, true));
    ExpectClose(y1, want_relu, "relu(y)");
  }
}

}  // namespace
}  // namespace weft
