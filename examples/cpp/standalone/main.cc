// README's first C++ program, built outside weft's source tree against an installed weft:
//
//   meson install -C build --destdir /tmp/stage   (or: meson setup build --prefix=/opt/weft ...)
//   export PKG_CONFIG_PATH=<prefix>/lib/x86_64-linux-gnu/pkgconfig
//   make && ./standalone          # prints y = 14 and dy/dx = [2, 4, 6]
//
// Everything the compiler needs (include path, -DEIGEN_USE_THREADS, Eigen's and fmt's headers,
// -lweft) comes from `pkg-config --cflags --libs weft`.
#include <cstdio>

#include "graph/gradients.h"
#include "graph/session.h"
#include "ops/framework.h"
#include "ops/math.h"

using namespace weft;

int main() {
  try {
    Graph g;
    Scope s = Scope::Root(&g);
    Output x = ops::Placeholder(s.WithOpName("x"), DType::kFloat64, {-1});  // shape [?]
    Output y = ops::Sum(s, ops::Square(s, x));                             // shape inferred: []
    Output dx = Gradients(s, {y}, {x})[0];                                 // graph nodes: 2x
    Session sess(&g);
    auto out = sess.Run({{x, Tensor::FromVector<double>({1, 2, 3})}}, {y, dx});
    const double* d = out[1].data<double>();
    std::printf("y = %g\ndy/dx = [%g, %g, %g]\n", out[0].data<double>()[0], d[0], d[1], d[2]);
    // y = 1 + 4 + 9; dy/dx = 2x.
    bool ok = out[0].data<double>()[0] == 14 && d[0] == 2 && d[1] == 4 && d[2] == 6;
    return ok ? 0 : 1;
  } catch (const Error& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }
}
