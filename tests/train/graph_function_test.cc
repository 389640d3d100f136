// Dataset map and filter functions that run a graph (train/graph_function.h).
#include <doctest/doctest.h>

#include "graph/scope.h"
#include "ops/framework.h"
#include "ops/math.h"
#include "train/graph_function.h"

using namespace weft;
using namespace weft::data;

TEST_CASE("a graph maps uint8 images to float32 / 255 on the pipeline's threads") {
  auto g = std::make_shared<Graph>();
  Scope s = Scope::Root(g.get());
  Output x = ops::Placeholder(s, DType::kUInt8, TensorShape({2}));
  Output y = ops::Placeholder(s, DType::kInt32, TensorShape({}));
  Output scaled = ops::Div(s, ops::Cast(s, x, DType::kFloat32), ops::Const(s, 255.0f));
  Output label = ops::Mul(s, y, ops::Const(s, int32_t{2}));
  Tensor images = Tensor::FromVector<uint8_t>({0, 255, 51, 102, 255, 0}, {3, 2});
  Tensor labels = Tensor::FromVector<int32_t>({1, 2, 3}, {3});
  for (int threads : {1, 3}) {
    Dataset ds = Dataset::FromTensors({images, labels}).Map(train::GraphMapFn(g, {x, y}, {scaled, label}), threads)
                     .Batch(3);
    auto it = ds.MakeIterator();
    Element e;
    REQUIRE(it->Next(&e));
    CHECK(e[0].shape() == TensorShape({3, 2}));
    CHECK(e[0].ToVector<float>() == std::vector<float>{0.f, 1.f, 0.2f, 0.4f, 1.f, 0.f});
    CHECK(e[1].ToVector<int32_t>() == std::vector<int32_t>{2, 4, 6});
    CHECK_FALSE(it->Next(&e));
  }
}

TEST_CASE("a graph predicate filters; a component that does not fit names both") {
  auto g = std::make_shared<Graph>();
  Scope s = Scope::Root(g.get());
  Output v = ops::Placeholder(s, DType::kInt64, TensorShape({}));
  Output keep = ops::Greater(s, v, ops::Const(s, int64_t{6}));
  Dataset ds = Dataset::Range(0, 10).Filter(train::GraphPredicate(g, {v}, keep));
  auto it = ds.MakeIterator();
  Element e;
  std::vector<int64_t> got;
  while (it->Next(&e)) got.push_back(e[0].scalar<int64_t>()());
  CHECK(got == std::vector<int64_t>{7, 8, 9});

  auto bad = Dataset::Range(0, 3, 1, DType::kInt32).Filter(train::GraphPredicate(g, {v}, keep)).MakeIterator();
  CHECK_THROWS_WITH_AS(bad->Next(&e), doctest::Contains("component 0 is int32"), Error);
  CHECK_THROWS_WITH_AS(train::GraphPredicate(g, {v}, v), doctest::Contains("scalar bool"), Error);
}
