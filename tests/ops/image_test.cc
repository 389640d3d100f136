// ImageProjectiveTransform against hand-worked sampling (TF's ImageProjectiveTransformV3 rules:
// the fill modes on a 1 x 1 x 4 x 1 row, bilinear weights, nearest rounding, output sizes) and the
// errors bad input must give.
#include "tests/ops/op_test_util.h"

namespace weft::test {
namespace {

constexpr Code kInvalid = Code::kInvalidArgument;
const char* kOp = "ImageProjectiveTransform";

// The row [1, 2, 3, 4] as a (1, 1, 4, 1) image.
Tensor Row() { return T<float>({1, 2, 3, 4}, {1, 1, 4, 1}); }
// A translation: output x reads input x + dx.
Tensor ShiftX(double dx) { return T<float>({1, 0, dx, 0, 1, 0, 0, 0}, {1, 8}); }

TEST_CASE("ImageProjectiveTransform: the fill modes on a shifted row") {
  auto run = [](double dx, const char* fill) {
    return RunOp(kOp, {Row(), ShiftX(dx)}, {{"interpolation", std::string("NEAREST")}, {"fill_mode", std::string(fill)},
                                            {"fill_value", 9.0}})[0];
  };
  // Reading x = 2..5 and x = -3..0 of [1 2 3 4]: reflect is "d c b a | a b c d | d c b a".
  ExpectEqual(run(2, "REFLECT"), T<float>({3, 4, 4, 3}, {1, 1, 4, 1}));
  ExpectEqual(run(-3, "REFLECT"), T<float>({3, 2, 1, 1}, {1, 1, 4, 1}));
  ExpectEqual(run(2, "WRAP"), T<float>({3, 4, 1, 2}, {1, 1, 4, 1}));
  ExpectEqual(run(-3, "WRAP"), T<float>({2, 3, 4, 1}, {1, 1, 4, 1}));
  ExpectEqual(run(2, "NEAREST"), T<float>({3, 4, 4, 4}, {1, 1, 4, 1}));
  ExpectEqual(run(-3, "NEAREST"), T<float>({1, 1, 1, 1}, {1, 1, 4, 1}));
  ExpectEqual(run(2, "CONSTANT"), T<float>({3, 4, 9, 9}, {1, 1, 4, 1}));
}

TEST_CASE("ImageProjectiveTransform: bilinear weights, per-image transforms and the output size") {
  // x + 0.25: 0.75 * v[x] + 0.25 * v[x + 1]; the last reads past the edge: 0.75 * 4 + 0.25 * fill 0.
  ExpectNear(RunOp(kOp, {Row(), ShiftX(0.25)})[0], T<float>({1.25, 2.25, 3.25, 3}, {1, 1, 4, 1}));
  // Two images, two transforms (identity, horizontal mirror x -> 3 - x), float64.
  const Tensor two = T<double>({1, 2, 3, 4, 5, 6, 7, 8}, {2, 1, 4, 1});
  const Tensor tr = T<float>({1, 0, 0, 0, 1, 0, 0, 0, -1, 0, 3, 0, 1, 0, 0, 0}, {2, 8});
  ExpectNear(RunOp(kOp, {two, tr})[0], T<double>({1, 2, 3, 4, 8, 7, 6, 5}, {2, 1, 4, 1}));
  // A 2 x 2 output of a 2 x 4 image scaled by 2 along x, y reading the 2 rows; 2 channels.
  const Tensor img = T<float>({1, 10, 2, 20, 3, 30, 4, 40, 5, 50, 6, 60, 7, 70, 8, 80}, {1, 2, 4, 2});
  ExpectNear(RunOp(kOp, {img, T<float>({2, 0, 0.5, 0, 1, 0, 0, 0}, {1, 8})},
                   {{"output_height", int64_t{2}}, {"output_width", int64_t{2}}})[0],
             T<float>({1.5, 15, 3.5, 35, 5.5, 55, 7.5, 75}, {1, 2, 2, 2}));
  // A projective row: k = 0.5 x + 1; output x = 2 reads input x 2 / 2 = 1.
  ExpectNear(RunOp(kOp, {Row(), T<float>({1, 0, 0, 0, 1, 0, 0.5, 0}, {1, 8})}, {{"fill_mode", std::string("NEAREST")}})[0],
             T<float>({1, 1.6666666, 2, 2.2}, {1, 1, 4, 1}), 1e-5, 1e-5);
}

TEST_CASE("ImageProjectiveTransform's gradient is the adjoint of the sampling") {
  const Tensor img = Rand({2, 3, 4, 2});
  const Tensor rotate = T<float>({0.8f, -0.6f, 1.1f, 0.6f, 0.8f, -0.4f, 0, 0, 1, 0, 0.5f, 0, 1, 0.25f, 0, 0}, {2, 8});
  for (const char* interpolation : {"BILINEAR", "NEAREST"}) {
    for (const char* fill : {"REFLECT", "WRAP", "CONSTANT", "NEAREST"}) {
      CheckGradient(kOp, {img, rotate}, {{"interpolation", std::string(interpolation)}, {"fill_mode", std::string(fill)}},
                    {0});
    }
  }
  CheckGradient(kOp, {img, T<float>({0.5f, 0, 0.25f, 0, 2, 0.1f, 0, 0}, {1, 8})},
                {{"output_height", int64_t{5}}, {"output_width", int64_t{2}}}, {0});
  // By hand: the row [1 2 3 4] read at x + 0.25 (constant fill): dy = [1 10 100 1000] goes back as
  // dx[x] = 0.75 dy[x] + 0.25 dy[x - 1] (the last output's 0.25 share read the fill value).
  ExpectNear(RunOp("ImageProjectiveTransformGrad", {T<float>({1, 10, 100, 1000}, {1, 1, 4, 1}), ShiftX(0.25), Row()})[0],
             T<float>({0.75, 7.75, 77.5, 775}, {1, 1, 4, 1}));
  ExpectOpError("ImageProjectiveTransformGrad", {T<float>({1, 2, 3}, {1, 1, 3, 1}), ShiftX(0), Row()}, {}, kInvalid,
                "dy must be");
}

TEST_CASE("ImageProjectiveTransform: bad input names what was wrong") {
  ExpectOpError(kOp, {T<float>({1, 2, 3, 4}, {4}), ShiftX(0)}, {}, kInvalid, "images");
  ExpectOpError(kOp, {Row(), T<float>({1, 0, 0, 0, 1, 0}, {1, 6})}, {}, kInvalid, "8 columns");
  ExpectOpError(kOp, {Row(), ShiftX(0)}, {{"fill_mode", std::string("MIRROR")}}, kInvalid, "fill_mode");
  ExpectOpError(kOp, {Row(), ShiftX(0)}, {{"interpolation", std::string("CUBIC")}}, kInvalid, "interpolation");
  ExpectOpError(kOp, {Row(), ShiftX(0)}, {{"output_height", int64_t{0}}}, kInvalid, "output_height");
  ExpectOpError(kOp, {T<float>({1, 2, 3, 4, 5, 6, 7, 8}, {2, 1, 4, 1}), T<float>(std::vector<double>(24, 0), {3, 8})}, {},
                kInvalid, "transforms");
}

}  // namespace
}  // namespace weft::test
