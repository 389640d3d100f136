// One test per class of bad input (issue 2): each must be a clear error, never a crash or hang.
#include <doctest/doctest.h>

#include "graph/session.h"
#include "ops/array.h"
#include "ops/framework.h"
#include "ops/math.h"

using namespace weft;

namespace {
// Runs `f` and returns the error it threw (fails the test if none).
template <typename F> Error Catch(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    return e;
  }
  FAIL("expected an error");
  return Error(Status());
}
bool Has(const Error& e, std::string_view s) { return std::string(e.what()).find(s) != std::string::npos; }
}  // namespace

TEST_CASE("shape mismatch names the node and both shapes") {
  Graph g;
  Scope s = Scope::Root(&g);
  Output a = ops::Placeholder(s, DType::kFloat32, {2, 3});
  Output b = ops::Placeholder(s, DType::kFloat32, {4});
  Error e = Catch([&] { ops::Add(s.WithOpName("sum"), a, b); });
  CHECK(e.code() == Code::kInvalidArgument);
  CHECK(Has(e, "Add 'sum'"));
  CHECK(Has(e, "[2,3]"));
  CHECK(Has(e, "[4]"));
  Error m = Catch([&] { ops::MatMul(s.WithOpName("mm"), a, a); });
  CHECK(Has(m, "MatMul 'mm'"));
}

TEST_CASE("dtype mismatch names the inputs") {
  Graph g;
  Scope s = Scope::Root(&g);
  Error e = Catch([&] { ops::Add(s.WithOpName("mix"), ops::Const(s, 1.0f), ops::Const(s, int32_t{1})); });
  CHECK(Has(e, "Add 'mix'"));
  CHECK(Has(e, "int32"));
  CHECK(Has(e, "float32"));
}

TEST_CASE("axis out of range") {
  Graph g;
  Scope s = Scope::Root(&g);
  Output a = ops::Placeholder(s, DType::kFloat32, {2, 3});
  Error e = Catch([&] { ops::Sum(s.WithOpName("red"), a, {5}); });
  CHECK(Has(e, "Sum 'red'"));
  CHECK(Has(e, "5"));
}

TEST_CASE("negative or overflowing dimensions") {
  Graph g;
  Scope s = Scope::Root(&g);
  CHECK_THROWS_WITH_AS(ops::Placeholder(s, DType::kFloat32, TensorShape({2, -7})), doctest::Contains("negative dimension -7"),
                       Error);
  Output dims = ops::Placeholder(s, DType::kInt64, {2});
  Output fill = ops::Fill(s.WithOpName("huge"), dims, ops::Const(s, 1.0f));
  Session sess(&g);
  Error e = Catch([&] { sess.Run({{dims, Tensor::FromVector<int64_t>({int64_t{1} << 40, int64_t{1} << 40})}}, {fill}); });
  CHECK(e.code() == Code::kInvalidArgument);
  CHECK(Has(e, "'huge'"));
  Error neg = Catch([&] { sess.Run({{dims, Tensor::FromVector<int64_t>({2, -3})}}, {fill}); });
  CHECK(Has(neg, "-3"));
}

TEST_CASE("out-of-range gather indices") {
  Graph g;
  Scope s = Scope::Root(&g);
  Output params = ops::Const(s, Tensor::FromVector<float>({1, 2, 3}));
  Output idx = ops::Placeholder(s, DType::kInt32, {2});
  Output out = ops::Gather(s.WithOpName("pick"), params, idx);
  Session sess(&g);
  CHECK(sess.Run({{idx, Tensor::FromVector<int32_t>({2, 0})}}, {out})[0].ToVector<float>() == std::vector<float>{3, 1});
  Error e = Catch([&] { sess.Run({{idx, Tensor::FromVector<int32_t>({1, 3})}}, {out}); });
  CHECK(e.code() == Code::kInvalidArgument);
  CHECK(Has(e, "Gather 'pick'"));
  CHECK(Has(e, "3"));
}

TEST_CASE("integer division by zero") {
  Graph g;
  Scope s = Scope::Root(&g);
  Output a = ops::Placeholder(s, DType::kInt32, {2});
  Output d = ops::Div(s.WithOpName("ratio"), a, ops::Const(s, Tensor::FromVector<int32_t>({1, 0})));
  Session sess(&g);
  Error e = Catch([&] { sess.Run({{a, Tensor::FromVector<int32_t>({4, 4})}}, {d}); });
  CHECK(e.code() == Code::kInvalidArgument);
  CHECK(Has(e, "Div 'ratio'"));
}

TEST_CASE("unknown op") {
  Graph g;
  Error e = Catch([&] { Scope::Root(&g).AddNode("MatMull", {}); });
  CHECK(e.code() == Code::kNotFound);
  CHECK(Has(e, "unknown op 'MatMull' (did you mean"));
}

TEST_CASE("missing feed, wrong feed, unknown fetch") {
  Graph g;
  Scope s = Scope::Root(&g);
  Output x = ops::Placeholder(s.WithOpName("images"), DType::kFloat32, {-1, 4});
  Output y = ops::Identity(s, x);
  Session sess(&g);
  CHECK(Has(Catch([&] { sess.Run({}, {y}); }), "placeholder 'images'"));
  CHECK(Has(Catch([&] { sess.Run({{x, Tensor::Zeros(DType::kFloat64, {1, 4})}}, {y}); }), "dtype float64, expected float32"));
  CHECK(Has(Catch([&] { sess.Run({{x, Tensor::Zeros(DType::kFloat32, {1, 5})}}, {y}); }), "shape [1,5], expected [?,4]"));
  using Names = std::vector<std::pair<std::string, Tensor>>;
  Error f = Catch([&] { sess.Run(Names{}, {"logits:0"}, {}); });
  CHECK(f.code() == Code::kNotFound);
  CHECK(Has(f, "'logits:0'"));
}

TEST_CASE("cycles") {
  Graph g;
  Scope s = Scope::Root(&g);
  Output a = ops::Identity(s.WithOpName("a"), ops::Const(s, 1.0f));
  Output b = ops::Identity(s.WithOpName("b"), a);
  g.AddControlEdge(b.node, a.node);
  Session sess(&g);
  Error e = Catch([&] { sess.Run({}, {b}); });
  CHECK(Has(e, "cycle"));
  CHECK(Has(e, "'a'"));
}
