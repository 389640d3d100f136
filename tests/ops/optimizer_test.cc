// Optimizer updates: several steps against updates computed by hand here, in float32 and
// float64; Nesterov momentum; shape, scalar and initialization errors.
#include <cmath>

#include "ops/framework.h"
#include "ops/optimizer.h"
#include "ops/state.h"
#include "tests/ops/op_test_util.h"

namespace weft::test {
namespace {

// A graph with variables initialized from constants; `Run` fetches after the initializers ran.
struct Fixture {
  Graph g;
  Scope s = Scope::Root(&g);
  std::vector<Node*> inits;

  Output Var(const std::string& name, const std::vector<double>& init, DType dt) {
    Tensor value = dt == DType::kFloat32 ? T<float>(init) : T<double>(init);
    Output v = ops::Variable(s.WithOpName(name), value.shape(), dt);
    inits.push_back(ops::Assign(s.WithOpName(name + "/init"), v, ops::Const(s, value)).node);
    return v;
  }
  Output Scalar(double x, DType dt) { return ops::ScalarLike(s, dt, x); }
  Output Vec(const std::vector<double>& x, DType dt) {
    return ops::Const(s, dt == DType::kFloat32 ? T<float>(x) : T<double>(x));
  }
};

double Tol(DType dt) { return dt == DType::kFloat32 ? 1e-5 : 1e-12; }
Tensor AsType(const std::vector<double>& v, DType dt) { return dt == DType::kFloat32 ? T<float>(v) : T<double>(v); }

TEST_CASE("ApplyGradientDescent: var -= lr * grad over several steps") {
  for (DType dt : {DType::kFloat32, DType::kFloat64}) {
    CAPTURE(DTypeName(dt));
    Fixture f;
    std::vector<double> var = {1.0, -2.0, 0.5}, grad = {0.3, -0.1, 2.0};
    Output v = f.Var("w", var, dt);
    Output upd = ops::ApplyGradientDescent(f.s, v, f.Scalar(0.1, dt), f.Vec(grad, dt));
    Session sess(&f.g);
    sess.Run({}, {}, f.inits);
    // A read of the variable shares its storage; the update must not change what was read.
    Tensor read = sess.Run({}, {v})[0];
    std::vector<Tensor> fetched;
    for (int step = 0; step < 4; ++step) {
      fetched.push_back(sess.Run({}, {upd})[0]);
      for (size_t i = 0; i < var.size(); ++i) var[i] -= 0.1 * grad[i];
      ExpectNear(fetched.back(), AsType(var, dt), Tol(dt), Tol(dt));
    }
    // The variable holds the result; earlier fetches keep their values (updates copy on write).
    ExpectNear(sess.Run({}, {v})[0], AsType(var, dt), Tol(dt), Tol(dt));
    CHECK(fetched[0].ElementAsDouble(0) == doctest::Approx(1.0 - 0.03).epsilon(1e-6));
    ExpectNear(read, AsType({1.0, -2.0, 0.5}, dt));
  }
}

TEST_CASE("ApplyMomentum: plain and Nesterov, several steps") {
  for (DType dt : {DType::kFloat32, DType::kFloat64}) {
    for (bool nesterov : {false, true}) {
      CAPTURE(DTypeName(dt));
      CAPTURE(nesterov);
      Fixture f;
      std::vector<double> var = {1.0, 2.0, -3.0, 0.0}, accum = {0.1, 0.0, -0.2, 0.5};
      const std::vector<double> grad = {0.5, -1.0, 0.25, 2.0};
      const double lr = 0.05, mu = 0.9;
      Output v = f.Var("w", var, dt), a = f.Var("w_accum", accum, dt);
      Output upd = ops::ApplyMomentum(f.s, v, a, f.Scalar(lr, dt), f.Vec(grad, dt), f.Scalar(mu, dt), nesterov);
      Session sess(&f.g);
      sess.Run({}, {}, f.inits);
      for (int step = 0; step < 5; ++step) {
        Tensor got = sess.Run({}, {upd})[0];
        for (size_t i = 0; i < var.size(); ++i) {
          accum[i] = mu * accum[i] + grad[i];
          var[i] -= nesterov ? lr * grad[i] + lr * mu * accum[i] : lr * accum[i];
        }
        ExpectNear(got, AsType(var, dt), Tol(dt), Tol(dt));
      }
      ExpectNear(sess.Run({}, {a})[0], AsType(accum, dt), Tol(dt), Tol(dt));
    }
  }
}

TEST_CASE("updates that nobody else reads run in place; a held read keeps its value") {
  Fixture f;
  const std::vector<double> init(4096, 1.0), grad(4096, 0.5);
  Output v = f.Var("w", init, DType::kFloat32), a = f.Var("w_accum", std::vector<double>(4096, 0.0), DType::kFloat32);
  Output upd = ops::ApplyMomentum(f.s, v, a, f.Scalar(0.1, DType::kFloat32), f.Vec(grad, DType::kFloat32),
                                  f.Scalar(0.9, DType::kFloat32));
  Session sess(&f.g);
  sess.Run({}, {}, f.inits);
  sess.Run({}, {}, {upd.node});
  const void* var_data = sess.vars().Find("w")->value.raw_data();
  const void* accum_data = sess.vars().Find("w_accum")->value.raw_data();
  for (int step = 0; step < 3; ++step) sess.Run({}, {}, {upd.node});
  CHECK(sess.vars().Find("w")->value.raw_data() == var_data);
  CHECK(sess.vars().Find("w_accum")->value.raw_data() == accum_data);
  // A fetched value shares the storage: the next update writes elsewhere and the fetch keeps its values.
  Tensor read = sess.Run({}, {v})[0];
  const double before = read.ElementAsDouble(0);
  sess.Run({}, {}, {upd.node});
  CHECK(read.ElementAsDouble(0) == before);
  CHECK(sess.Run({}, {v})[0].ElementAsDouble(0) < before);
}

TEST_CASE("ApplyAdam: TF's update with bias correction, several steps") {
  for (DType dt : {DType::kFloat32, DType::kFloat64}) {
    CAPTURE(DTypeName(dt));
    Fixture f;
    std::vector<double> var = {1.0, -0.5, 2.0}, m = {0, 0, 0}, v = {0, 0, 0};
    const double lr = 0.01, b1 = 0.9, b2 = 0.999, eps = 1e-8;
    Output vw = f.Var("w", var, dt), mw = f.Var("w_m", m, dt), sw = f.Var("w_v", v, dt);
    Output b1p = ops::Placeholder(f.s, dt), b2p = ops::Placeholder(f.s, dt), g = ops::Placeholder(f.s, dt);
    Output upd = ops::ApplyAdam(f.s, vw, mw, sw, b1p, b2p, f.Scalar(lr, dt), f.Scalar(b1, dt), f.Scalar(b2, dt),
                                f.Scalar(eps, dt), g);
    Session sess(&f.g);
    sess.Run({}, {}, f.inits);
    for (int t = 1; t <= 4; ++t) {
      std::vector<double> grad = {0.1 * t, -0.2, 0.3 / t};
      double p1 = std::pow(b1, t), p2 = std::pow(b2, t);
      Tensor got = sess.Run({{b1p, AsType({p1}, dt).Reshaped({})}, {b2p, AsType({p2}, dt).Reshaped({})},
                             {g, AsType(grad, dt)}},
                            {upd})[0];
      double lr_t = lr * std::sqrt(1 - p2) / (1 - p1);
      for (size_t i = 0; i < var.size(); ++i) {
        m[i] += (grad[i] - m[i]) * (1 - b1);
        v[i] += (grad[i] * grad[i] - v[i]) * (1 - b2);
        var[i] -= lr_t * m[i] / (std::sqrt(v[i]) + eps);
      }
      ExpectNear(got, AsType(var, dt), Tol(dt), Tol(dt));
    }
    auto slots = sess.Run({}, {mw, sw});
    ExpectNear(slots[0], AsType(m, dt), Tol(dt), Tol(dt));
    ExpectNear(slots[1], AsType(v, dt), Tol(dt), Tol(dt));
  }
}

TEST_CASE("optimizers: grad shape must equal var shape") {
  Fixture f;
  Output v = f.Var("w", {1, 2, 3}, DType::kFloat32);
  // Known at build time: the shape function reports it.
  try {
    ops::ApplyGradientDescent(f.s, v, f.Scalar(0.1, DType::kFloat32), f.Vec({1, 2}, DType::kFloat32));
    FAIL("expected an error");
  } catch (const Error& e) {
    CHECK(e.code() == Code::kInvalidArgument);
    CHECK(std::string(e.what()).find("grad shape [2] differs from var shape [3]") != std::string::npos);
  }
  // Known only at run time: the kernel reports it, naming the variable.
  Output g = ops::Placeholder(f.s, DType::kFloat32);
  Output upd = ops::ApplyGradientDescent(f.s, v, f.Scalar(0.1, DType::kFloat32), g);
  Session sess(&f.g);
  sess.Run({}, {}, f.inits);
  try {
    sess.Run({{g, T<float>({1, 2, 3, 4}, {2, 2})}}, {upd});
    FAIL("expected an error");
  } catch (const Error& e) {
    CHECK(e.code() == Code::kInvalidArgument);
    std::string msg = e.what();
    CHECK(msg.find("[2,2]") != std::string::npos);
    CHECK(msg.find("'w' shape [3]") != std::string::npos);
  }
  // The variable is unchanged by the failed update.
  ExpectNear(sess.Run({}, {v})[0], T<float>({1, 2, 3}));
}

TEST_CASE("optimizers: lr must be a scalar") {
  Fixture f;
  Output v = f.Var("w", {1, 2}, DType::kFloat64);
  CHECK_THROWS_AS(ops::ApplyGradientDescent(f.s, v, f.Vec({0.1, 0.2}, DType::kFloat64), f.Vec({1, 1}, DType::kFloat64)),
                  Error);
  Output lr = ops::Placeholder(f.s, DType::kFloat64);
  Output upd = ops::ApplyGradientDescent(f.s, v, lr, f.Vec({1, 1}, DType::kFloat64));
  Session sess(&f.g);
  sess.Run({}, {}, f.inits);
  try {
    sess.Run({{lr, T<double>({0.1, 0.2})}}, {upd});
    FAIL("expected an error");
  } catch (const Error& e) {
    CHECK(e.code() == Code::kInvalidArgument);
    CHECK(std::string(e.what()).find("lr must be a scalar") != std::string::npos);
  }
}

TEST_CASE("optimizers: uninitialized variables are a FailedPrecondition naming them") {
  Fixture f;
  Output v = f.Var("w", {1, 2}, DType::kFloat32);
  Output a = ops::Variable(f.s.WithOpName("w_momentum"), {2}, DType::kFloat32);  // never initialized
  Output upd = ops::ApplyMomentum(f.s, v, a, f.Scalar(0.1, DType::kFloat32), f.Vec({1, 1}, DType::kFloat32),
                                  f.Scalar(0.9, DType::kFloat32));
  Output sgd = ops::ApplyGradientDescent(f.s, v, f.Scalar(0.1, DType::kFloat32), f.Vec({1, 1}, DType::kFloat32));
  Session sess(&f.g);
  for (Output target : {sgd, upd}) {  // var uninitialized, then (after init) accum uninitialized
    try {
      sess.Run({}, {target});
      FAIL("expected an error");
    } catch (const Error& e) {
      CHECK(e.code() == Code::kFailedPrecondition);
      CHECK(std::string(e.what()).find(target == sgd ? "'w'" : "'w_momentum'") != std::string::npos);
      CHECK(std::string(e.what()).find("uninitialized") != std::string::npos);
    }
    sess.Run({}, {}, f.inits);
  }
}

TEST_CASE("optimizers: accum of another shape than var") {
  Fixture f;
  Output v = f.Var("w", {1, 2}, DType::kFloat64);
  Output a = f.Var("acc", {1, 2, 3}, DType::kFloat64);
  // The Variable node's declared shape already differs: caught when building.
  CHECK_THROWS_AS(ops::ApplyMomentum(f.s, v, a, f.Scalar(0.1, DType::kFloat64), f.Vec({1, 1}, DType::kFloat64),
                                     f.Scalar(0.9, DType::kFloat64)),
                  Error);
}

TEST_CASE("optimizers: only variables can be updated") {
  Fixture f;
  Output c = f.Vec({1, 2}, DType::kFloat32);
  CHECK_THROWS_AS(ops::ApplyGradientDescent(f.s, c, f.Scalar(0.1, DType::kFloat32), c), Error);
}

TEST_CASE("one step of each optimizer op run alone, against the update computed here") {
  const std::vector<double> var = {1.0, -2.0, 0.5}, grad = {0.3, -0.1, 2.0}, acc = {0.1, 0.2, -0.3};
  const double lr = 0.1, mom = 0.9;
  std::vector<double> sgd, momentum, adam;
  for (size_t i = 0; i < 3; ++i) {
    sgd.push_back(var[i] - lr * grad[i]);
    momentum.push_back(var[i] - lr * (mom * acc[i] + grad[i]));
  }
  // Adam with m = v = 0 at step 1: lr_t = lr * sqrt(1 - b2) / (1 - b1); m = (1 - b1) g; v = (1 - b2) g^2.
  const double b1 = 0.9, b2 = 0.999, eps = 1e-7, lr_t = lr * std::sqrt(1 - b2) / (1 - b1);
  for (size_t i = 0; i < 3; ++i) {
    const double m = (1 - b1) * grad[i], v = (1 - b2) * grad[i] * grad[i];
    adam.push_back(var[i] - lr_t * m / (std::sqrt(v) + eps));
  }
  const Tensor s = T<double>({lr}, {});
  ExpectNear(RunOp("ApplyGradientDescent", {T<double>(var), s, T<double>(grad)})[0], T<double>(sgd), 1e-12, 1e-12);
  ExpectNear(RunOp("ApplyMomentum", {T<double>(var), T<double>(acc), s, T<double>(grad), T<double>({mom}, {})})[0],
             T<double>(momentum), 1e-12, 1e-12);
  ExpectNear(RunOp("ApplyAdam", {T<double>(var), T<double>({0, 0, 0}), T<double>({0, 0, 0}), T<double>({b1}, {}),
                                 T<double>({b2}, {}), s, T<double>({b1}, {}), T<double>({b2}, {}),
                                 T<double>({eps}, {}), T<double>(grad)})[0],
             T<double>(adam), 1e-9, 1e-9);
}

TEST_CASE("optimizer ops run alone reject a grad of another shape") {
  const Tensor lr = T<float>({0.1}, {}), var = T<float>({1, 2, 3}), bad = T<float>({1, 2});
  ExpectOpError("ApplyGradientDescent", {var, lr, bad}, {}, Code::kInvalidArgument, "grad shape [2]");
  ExpectOpError("ApplyMomentum", {var, var, lr, bad, lr}, {}, Code::kInvalidArgument, "[2]");
  ExpectOpError("ApplyAdam", {var, var, var, lr, lr, lr, lr, lr, lr, bad}, {}, Code::kInvalidArgument, "[2]");
}

}  // namespace
}  // namespace weft::test
