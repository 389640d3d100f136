#include <doctest/doctest.h>

#include "core/shape.h"

using namespace weft;

TEST_CASE("shapes: elements, strings, unknown dims") {
  CHECK(TensorShape({2, 3}).num_elements() == 6);
  CHECK(TensorShape{}.num_elements() == 1);
  CHECK(TensorShape({0, 5}).num_elements() == 0);
  CHECK(TensorShape({-1, 3}).ToString() == "[?,3]");
  CHECK(TensorShape::Unknown().ToString() == "<unknown>");
  CHECK_FALSE(TensorShape({-1, 3}).IsFullyDefined());
  CHECK_THROWS_AS(TensorShape({-1, 3}).num_elements(), Error);
}

TEST_CASE("negative and overflowing dimensions are rejected") {
  CHECK_THROWS_WITH_AS(TensorShape({2, -5}), doctest::Contains("negative dimension -5"), Error);
  TensorShape huge({int64_t{1} << 40, int64_t{1} << 40});
  CHECK_THROWS_WITH_AS(huge.num_elements(), doctest::Contains("too many elements"), Error);
}

TEST_CASE("axes, compatibility and merge") {
  TensorShape s({2, 3, 4});
  CHECK(s.CanonicalAxis(-1, "t") == 2);
  CHECK(s.CanonicalAxis(0, "t") == 0);
  CHECK_THROWS_WITH_AS(s.CanonicalAxis(3, "Sum"), doctest::Contains("Sum: axis 3 out of range for shape [2,3,4]"), Error);
  CHECK_THROWS_AS(s.CanonicalAxis(-4, "t"), Error);
  CHECK(TensorShape({-1, 3}).IsCompatibleWith(TensorShape({7, 3})));
  CHECK_FALSE(TensorShape({2, 3}).IsCompatibleWith(TensorShape({2, 4})));
  CHECK(TensorShape({-1, 3}).Merge(TensorShape({7, -1})) == TensorShape({7, 3}));
  CHECK_THROWS_AS(TensorShape({2}).Merge(TensorShape({3})), Error);
}

TEST_CASE("broadcasting follows numpy") {
  CHECK(BroadcastShapes(TensorShape({2, 3}), TensorShape({3})) == TensorShape({2, 3}));
  CHECK(BroadcastShapes(TensorShape({2, 1}), TensorShape({1, 3})) == TensorShape({2, 3}));
  CHECK(BroadcastShapes(TensorShape{}, TensorShape({4})) == TensorShape({4}));
  CHECK(BroadcastShapes(TensorShape({-1, 3}), TensorShape({3})) == TensorShape({-1, 3}));
  CHECK(BroadcastShapes(TensorShape({0, 3}), TensorShape({1, 3})) == TensorShape({0, 3}));
  CHECK_THROWS_WITH_AS(BroadcastShapes(TensorShape({2, 3}), TensorShape({4})),
                       doctest::Contains("shapes [2,3] and [4] do not broadcast"), Error);
}
