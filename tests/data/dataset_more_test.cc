// Range, Zip, Filter, Skip, Cache, Unbatch, PaddedBatch and the parallel Map (data/dataset_more.cc, dataset_stages.cc).
#include <doctest/doctest.h>

#include <atomic>
#include <numeric>
#include <stdexcept>

#include "data/dataset.h"

using namespace weft;
using namespace weft::data;

namespace {

std::vector<int64_t> Ints(const Dataset& ds, size_t component = 0) {
  std::vector<int64_t> out;
  auto it = ds.MakeIterator();
  Element e;
  while (it->Next(&e)) {
    for (int64_t v : e[component].ToVector<int64_t>()) out.push_back(v);
  }
  return out;
}

Dataset Add(const Dataset& ds, int64_t k, int threads = 1) {
  return ds.Map([k](Element e) { return Element{Tensor::Scalar<int64_t>(e[0].scalar<int64_t>()() + k)}; }, threads);
}

}  // namespace

TEST_CASE("Range counts like Python's range, lazily, in the dtype asked for") {
  CHECK(Ints(Dataset::Range(0, 5)) == std::vector<int64_t>{0, 1, 2, 3, 4});
  CHECK(Ints(Dataset::Range(5, 1, -2)) == std::vector<int64_t>{5, 3});
  CHECK(Ints(Dataset::Range(1, 5, -2)).empty());
  CHECK(Dataset::Range(5, 1, -2).Cardinality() == 2);
  CHECK(Dataset::Range(0, int64_t{1} << 40).Cardinality() == int64_t{1} << 40);
  auto it = Dataset::Range(0, 2, 1, DType::kFloat32).MakeIterator();
  Element e;
  REQUIRE(it->Next(&e));
  CHECK(e[0].dtype() == DType::kFloat32);
  CHECK_THROWS_AS(Dataset::Range(0, 1, 0), Error);
}

TEST_CASE("Zip joins components and ends with the shortest input") {
  Dataset z = Dataset::Zip({Dataset::Range(0, 3), Dataset::Range(10, 20)});
  CHECK(z.Cardinality() == 3);
  CHECK(Ints(z, 0) == std::vector<int64_t>{0, 1, 2});
  CHECK(Ints(z, 1) == std::vector<int64_t>{10, 11, 12});
  CHECK(Dataset::Zip({Dataset::Range(0, 3).Repeat(), Dataset::Range(0, 2)}).Cardinality() == 2);
  CHECK(Dataset::Zip({Dataset::Range(0, 3).Repeat(), Dataset::Range(0, 2).Repeat()}).Cardinality() ==
        kInfiniteCardinality);
}

TEST_CASE("Concatenate: one stream after the other, with tf.data's cardinality") {
  Dataset c = Dataset::Range(0, 3).Concatenate(Dataset::Range(10, 12));
  CHECK(Ints(c) == std::vector<int64_t>{0, 1, 2, 10, 11});
  CHECK(c.Cardinality() == 5);
  CHECK(Dataset::Range(0, 3).Concatenate(Dataset::Range(0, 1).Repeat()).Cardinality() == kInfiniteCardinality);
  CHECK(Dataset::Range(0, 3).Repeat().Concatenate(Dataset::Range(0, 1)).Cardinality() == kInfiniteCardinality);
}

TEST_CASE("FromIterators makes a new iterator for each pass") {
  auto passes = std::make_shared<int>(0);
  Dataset ds = Dataset::FromIterators([passes] {
    ++*passes;
    return Dataset::Range(0, 3).MakeIterator();
  });
  CHECK(ds.Cardinality() == kUnknownCardinality);
  CHECK(Ints(ds.Repeat(2)) == std::vector<int64_t>{0, 1, 2, 0, 1, 2});
  CHECK(*passes == 2);
}

TEST_CASE("FromIterators takes a cardinality the caller knows") {
  auto make = [] { return Dataset::Range(0, 4).MakeIterator(); };
  Dataset ds = Dataset::FromIterators(make, 4);
  CHECK(ds.Cardinality() == 4);
  CHECK(ds.Batch(3).Cardinality() == 2);
  CHECK(Dataset::FromIterators(make, kInfiniteCardinality).Take(2).Cardinality() == 2);
  CHECK_THROWS_AS(Dataset::FromIterators(make, -7), Error);
}

TEST_CASE("Filter, Skip and their cardinalities") {
  Dataset even = Dataset::Range(0, 10).Filter([](const Element& e) { return e[0].scalar<int64_t>()() % 2 == 0; });
  CHECK(Ints(even) == std::vector<int64_t>{0, 2, 4, 6, 8});
  CHECK(even.Cardinality() == kUnknownCardinality);
  CHECK(Ints(Dataset::Range(0, 10).Skip(7)) == std::vector<int64_t>{7, 8, 9});
  CHECK(Dataset::Range(0, 10).Skip(7).Cardinality() == 3);
  CHECK(Dataset::Range(0, 10).Skip(-1).Cardinality() == 0);
  CHECK(Ints(Dataset::Range(0, 10).Skip(-1)).empty());
  // the row fast path and the element path agree
  Tensor rows = Tensor::FromVector<int64_t>({0, 1, 2, 3, 4, 5}, {6});
  CHECK(Ints(Dataset::FromTensors({rows}).Skip(4)) == std::vector<int64_t>{4, 5});
  CHECK(Ints(Dataset::FromTensors({rows}).Skip(2).Batch(3)) == std::vector<int64_t>{2, 3, 4, 5});
}

TEST_CASE("Cache runs the upstream stages once, and not for an abandoned pass") {
  auto calls = std::make_shared<std::atomic<int>>(0);
  Dataset counted = Dataset::Range(0, 4).Map([calls](Element e) {
    ++*calls;
    return e;
  });
  Dataset cached = counted.Cache();
  {
    auto it = cached.MakeIterator();
    Element e;
    REQUIRE(it->Next(&e));  // abandoned after one element: nothing stored
  }
  CHECK(Ints(cached) == std::vector<int64_t>{0, 1, 2, 3});
  const int after_first = calls->load();
  CHECK(Ints(cached) == std::vector<int64_t>{0, 1, 2, 3});
  CHECK(Ints(cached.Repeat(2)) == std::vector<int64_t>{0, 1, 2, 3, 0, 1, 2, 3});
  CHECK(calls->load() == after_first);
}

TEST_CASE("Unbatch splits along dim 0 and checks the components agree") {
  CHECK(Ints(Dataset::Range(0, 7).Batch(3).Unbatch()) == std::vector<int64_t>{0, 1, 2, 3, 4, 5, 6});
  CHECK(Dataset::Range(0, 7).Batch(3).Unbatch().Cardinality() == kUnknownCardinality);
  CHECK(Dataset::Range(0, 9).Batch(3, true).Unbatch(3).Cardinality() == 9);
  Dataset bad = Dataset::Zip({Dataset::Range(0, 4).Batch(2), Dataset::Range(0, 6).Batch(3)}).Unbatch();
  CHECK_THROWS_WITH_AS(Ints(bad), doctest::Contains("same dim 0"), Error);
}

TEST_CASE("parallel Map keeps the order and surfaces an error at its element") {
  std::vector<int64_t> want(1000);
  std::iota(want.begin(), want.end(), 5);
  CHECK(Ints(Add(Dataset::Range(0, 1000), 5, 4)) == want);
  CHECK(Ints(Add(Dataset::Range(0, 1000), 5, 3).Prefetch(2).Take(10)).size() == 10);  // abandoned mid-stream
  Dataset failing = Dataset::Range(0, 100).Map(
      [](Element e) {
        if (e[0].scalar<int64_t>()() == 42) throw std::runtime_error("element 42 is bad");
        return e;
      },
      4);
  auto it = failing.MakeIterator();
  Element e;
  int64_t seen = 0;
  CHECK_THROWS_WITH(([&] {
                      while (it->Next(&e)) CHECK(e[0].scalar<int64_t>()() == seen++);
                    }()),
                    "element 42 is bad");
  CHECK(seen == 42);
  CHECK_FALSE(it->Next(&e));
  CHECK_THROWS_AS(Dataset::Range(0, 1).Map([](Element e) { return e; }, 0), Error);
}

namespace {

// Element x of 1..n: {int64 [x, 2] with row r = {100 x + 10 r, 100 x + 10 r + 1}, x}.
Dataset Ragged(int64_t n) {
  return Dataset::Range(1, n + 1).Map([](Element e) {
    const int64_t x = e[0].scalar<int64_t>()();
    std::vector<int64_t> v;
    for (int64_t r = 0; r < x; ++r) {
      for (int64_t c = 0; c < 2; ++c) v.push_back(100 * x + 10 * r + c);
    }
    return Element{Tensor::FromVector<int64_t>(v, TensorShape({x, 2})), e[0]};
  });
}

}  // namespace

TEST_CASE("PaddedBatch pads each component to its padded shape, -1 dims to the batch's largest") {
  Dataset ds = Ragged(5).PaddedBatch(2, {{-1, -1}, {}}, {Tensor::Scalar<int64_t>(-1), Tensor::Scalar<int64_t>(0)});
  CHECK(ds.Cardinality() == 3);
  CHECK(Ragged(5).PaddedBatch(2, {{-1, -1}, {}}, {Tensor::Scalar<int64_t>(-1), Tensor::Scalar<int64_t>(0)}, true)
            .Cardinality() == 2);
  auto it = ds.MakeIterator();
  Element e;
  for (int64_t batch = 0; batch < 3; ++batch) {
    REQUIRE(it->Next(&e));
    const int64_t n = batch < 2 ? 2 : 1, rows = batch < 2 ? 2 * batch + 2 : 5;
    CHECK(e[0].shape() == TensorShape({n, rows, 2}));
    CHECK(e[1].shape() == TensorShape({n}));
    std::vector<int64_t> want;  // the naive reference: the element's value inside, -1 outside
    for (int64_t j = 0; j < n; ++j) {
      const int64_t x = 2 * batch + j + 1;
      for (int64_t r = 0; r < rows; ++r) {
        for (int64_t c = 0; c < 2; ++c) want.push_back(r < x ? 100 * x + 10 * r + c : -1);
      }
    }
    CHECK(e[0].ToVector<int64_t>() == want);
  }
  CHECK_FALSE(it->Next(&e));
  // a fixed padded dim: every batch is [2, 4, 3]; zero padding takes the memset path
  Dataset fixed = Ragged(4).PaddedBatch(2, {{4, 3}, {}}, {Tensor::Scalar<int64_t>(0), Tensor::Scalar<int64_t>(0)});
  auto f = fixed.MakeIterator();
  REQUIRE(f->Next(&e));
  CHECK(e[0].shape() == TensorShape({2, 4, 3}));
  std::vector<int64_t> v = e[0].ToVector<int64_t>();
  CHECK(v[0] == 100);   // element 1, row 0, col 0
  CHECK(v[2] == 0);     // col 2 is padding
  CHECK(v[12] == 200);  // element 2 starts at 4 * 3
  CHECK(v[15] == 210);
  CHECK(v[18] == 0);    // element 2, row 2
}

TEST_CASE("PaddedBatch's errors name the component, element and batch") {
  CHECK_THROWS_WITH_AS(Ints(Ragged(4).PaddedBatch(2, {{2, 2}, {}}, {Tensor::Scalar<int64_t>(0),
                                                                     Tensor::Scalar<int64_t>(0)})),
                       doctest::Contains("smaller size than the input element: component 0 of element 0 in batch 1"),
                       Error);
  CHECK_THROWS_WITH_AS(Ints(Ragged(2).PaddedBatch(2, {{-1}, {}}, {Tensor::Scalar<int64_t>(0),
                                                                  Tensor::Scalar<int64_t>(0)})),
                       doctest::Contains("padded shape has rank 1"), Error);
  CHECK_THROWS_WITH_AS(Ints(Ragged(2).PaddedBatch(2, {{-1, -1}, {}}, {Tensor::Scalar<float>(0),
                                                                      Tensor::Scalar<int64_t>(0)})),
                       doctest::Contains("padding value"), Error);
  CHECK_THROWS_AS(Ragged(2).PaddedBatch(0, {{-1, -1}, {}}, {Tensor::Scalar<int64_t>(0), Tensor::Scalar<int64_t>(0)}),
                  Error);
  CHECK_THROWS_AS(Ragged(2).PaddedBatch(2, {{-2, -1}, {}}, {Tensor::Scalar<int64_t>(0), Tensor::Scalar<int64_t>(0)}),
                  Error);
}
