// Math ops: every kernel against a naive index-loop reference (broadcasting, rank 0, empty
// tensors, each dtype family), gradients by finite differences, and bad inputs.
#include <fmt/ranges.h>

#include <cmath>
#include <functional>
#include <limits>
#include <tuple>
#include <type_traits>

#include "graph/gradients.h"
#include "ops/array.h"
#include "ops/framework.h"
#include "ops/math.h"
#include "tests/ops/op_test_util.h"

namespace weft::test {
namespace {

// `t` converted to dtype T (values rounded toward zero for integers).
template <typename T>
Tensor As(const Tensor& t) {
  std::vector<double> v(t.num_elements());
  for (int64_t i = 0; i < t.num_elements(); ++i) v[i] = t.ElementAsDouble(i);
  return T_<T>(v, t.shape());
}

// Multi-index of flat index i in `shape`.
std::vector<int64_t> Unflatten(int64_t i, const TensorShape& shape) {
  std::vector<int64_t> idx(shape.rank());
  for (int k = shape.rank() - 1; k >= 0; --k) {
    idx[k] = i % shape.dim(k);
    i /= shape.dim(k);
  }
  return idx;
}
// Flat index in `shape` of the output index `out_idx` under numpy broadcasting (right-aligned,
// size-1 dims repeat).
int64_t BroadcastSource(const std::vector<int64_t>& out_idx, const TensorShape& shape) {
  const int off = static_cast<int>(out_idx.size()) - shape.rank();
  int64_t flat = 0;
  for (int k = 0; k < shape.rank(); ++k) flat = flat * shape.dim(k) + (shape.dim(k) == 1 ? 0 : out_idx[off + k]);
  return flat;
}

template <typename T, typename Out = T>
Tensor RefBinary(const Tensor& a, const Tensor& b, const std::type_identity_t<std::function<Out(T, T)>>& f) {
  std::vector<int64_t> dims(std::max(a.rank(), b.rank()));
  for (int k = 0; k < static_cast<int>(dims.size()); ++k) {
    const int ka = k - (static_cast<int>(dims.size()) - a.rank()), kb = k - (static_cast<int>(dims.size()) - b.rank());
    const int64_t da = ka < 0 ? 1 : a.dim(ka), db = kb < 0 ? 1 : b.dim(kb);
    dims[k] = da == 1 ? db : da;
  }
  Tensor out(DTypeOf<Out>(), TensorShape(dims));
  for (int64_t i = 0; i < out.num_elements(); ++i) {
    const auto idx = Unflatten(i, out.shape());
    out.data<Out>()[i] = f(a.data<T>()[BroadcastSource(idx, a.shape())], b.data<T>()[BroadcastSource(idx, b.shape())]);
  }
  return out;
}

const std::vector<std::pair<std::vector<int64_t>, std::vector<int64_t>>> kBroadcastCases = {
    {{2, 3}, {2, 3}},    {{2, 3}, {3}},          {{2, 1}, {1, 3}},       {{}, {2, 3}},
    {{2, 3}, {}},        {{}, {}},               {{0, 3}, {3}},          {{2, 3, 4}, {3, 1}},
    {{4, 1, 3}, {2, 1}}, {{1, 1, 1}, {3}},       {{3, 1, 2, 1}, {4, 1, 5}},
    {{2, 1, 2, 1, 2, 1, 2}, {2, 1, 2, 1, 2, 1}},  // collapses to rank 7: the index-loop path
};

TEST_CASE("binary arithmetic matches the reference, float32 and float64, all broadcast cases") {
  const std::vector<std::pair<const char*, std::function<double(double, double)>>> ops = {
      {"Add", [](double a, double b) { return a + b; }},
      {"Sub", [](double a, double b) { return a - b; }},
      {"Mul", [](double a, double b) { return a * b; }},
      {"Div", [](double a, double b) { return a / b; }},
      {"Pow", [](double a, double b) { return std::pow(a, b); }},
      {"Maximum", [](double a, double b) { return std::max(a, b); }},
      {"Minimum", [](double a, double b) { return std::min(a, b); }},
  };
  uint64_t seed = 1;
  for (const auto& [sa, sb] : kBroadcastCases) {
    const Tensor a = Rand(sa, 0.5, 2.0, seed++), b = Rand(sb, 0.5, 2.0, seed++);
    for (const auto& [op, f] : ops) {
      INFO(std::string(op) << " " << a.DebugString() << " " << b.DebugString());
      const Tensor want = RefBinary<double>(a, b, f);
      ExpectNear(RunOp(op, {a, b})[0], want, 1e-12, 1e-12);
      ExpectNear(RunOp(op, {As<float>(a), As<float>(b)})[0], As<float>(want), 1e-5, 1e-5);
    }
  }
}

TEST_CASE("binary arithmetic on integers: truncating division, wrap-free MIN / -1, integer Pow") {
  const Tensor a = T<int32_t>({7, -7, 8, 0, -9, 100}, {2, 3}), b = T<int32_t>({2, 3, -4});
  ExpectEqual(RunOp("Div", {a, b})[0], T<int32_t>({3, -2, -2, 0, -3, -25}, {2, 3}));
  ExpectEqual(RunOp("Add", {a, b})[0], RefBinary<int32_t>(a, b, [](int32_t x, int32_t y) { return x + y; }));
  ExpectEqual(RunOp("Sub", {a, T<int32_t>({5})})[0], T<int32_t>({2, -12, 3, -5, -14, 95}, {2, 3}));
  ExpectEqual(RunOp("Mul", {T<int64_t>({3}, {}), As<int64_t>(a)})[0], T<int64_t>({21, -21, 24, 0, -27, 300}, {2, 3}));
  ExpectEqual(RunOp("Maximum", {a, b})[0], RefBinary<int32_t>(a, b, [](int32_t x, int32_t y) { return std::max(x, y); }));
  ExpectEqual(RunOp("Minimum", {As<int64_t>(a), As<int64_t>(b)})[0],
              As<int64_t>(RefBinary<int32_t>(a, b, [](int32_t x, int32_t y) { return std::min(x, y); })));
  ExpectEqual(RunOp("Pow", {T<int32_t>({2, -3, 5, 1}), T<int32_t>({10, 3, 0, 7})})[0], T<int32_t>({1024, -27, 1, 1}));
  const int32_t min = std::numeric_limits<int32_t>::min();
  ExpectEqual(RunOp("Div", {T<int32_t>({static_cast<double>(min), 6}), T<int32_t>({-1})})[0],
              T<int32_t>({static_cast<double>(min), -6}));
  const Tensor u = T<uint8_t>({200, 7, 9, 0}, {2, 2}), v = T<uint8_t>({100, 2});
  ExpectEqual(RunOp("Add", {u, v})[0], T<uint8_t>({44, 9, 109, 2}, {2, 2}));  // wraps mod 256
  ExpectEqual(RunOp("Div", {u, v})[0], T<uint8_t>({2, 3, 0, 0}, {2, 2}));
  ExpectEqual(RunOp("Add", {T<int32_t>({}, {0, 3}), T<int32_t>({1, 2, 3})})[0], T<int32_t>({}, {0, 3}));
}

TEST_CASE("comparisons and logical ops give bool, broadcasting") {
  const std::vector<std::pair<const char*, std::function<bool(double, double)>>> cmps = {
      {"Equal", [](double a, double b) { return a == b; }},     {"NotEqual", [](double a, double b) { return a != b; }},
      {"Less", [](double a, double b) { return a < b; }},       {"LessEqual", [](double a, double b) { return a <= b; }},
      {"Greater", [](double a, double b) { return a > b; }},    {"GreaterEqual", [](double a, double b) { return a >= b; }},
  };
  const Tensor a = T<double>({1, 2, 3, 4, 5, 6}, {2, 3}), b = T<double>({2, 2, 7});
  for (const auto& [op, f] : cmps) {
    INFO(std::string(op));
    const Tensor want = RefBinary<double, bool>(a, b, f);
    ExpectEqual(RunOp(op, {a, b})[0], want);
    ExpectEqual(RunOp(op, {As<float>(a), As<float>(b)})[0], want);
    ExpectEqual(RunOp(op, {As<int32_t>(a), As<int32_t>(b)})[0], want);
    ExpectEqual(RunOp(op, {As<int64_t>(a), As<int64_t>(b)})[0], want);
    ExpectEqual(RunOp(op, {As<uint8_t>(a), As<uint8_t>(b)})[0], want);
    ExpectEqual(RunOp(op, {T<double>({2}, {}), T<double>({}, {0})})[0], T<bool>({}, {0}));
  }
  const Tensor p = T<bool>({1, 0, 1, 0}, {2, 2}), q = T<bool>({1, 0});
  ExpectEqual(RunOp("Equal", {p, q})[0], T<bool>({1, 1, 1, 1}, {2, 2}));
  ExpectEqual(RunOp("LogicalAnd", {p, q})[0], T<bool>({1, 0, 1, 0}, {2, 2}));
  ExpectEqual(RunOp("LogicalOr", {p, T<bool>({0, 1}, {2, 1})})[0], T<bool>({1, 0, 1, 1}, {2, 2}));
  ExpectEqual(RunOp("LogicalNot", {p})[0], T<bool>({0, 1, 0, 1}, {2, 2}));
}

TEST_CASE("unary ops match std:: functions") {
  const std::vector<std::pair<const char*, std::function<double(double)>>> ops = {
      {"Neg", [](double x) { return -x; }},
      {"Abs", [](double x) { return std::abs(x); }},
      {"Sign", [](double x) { return double((x > 0) - (x < 0)); }},
      {"Square", [](double x) { return x * x; }},
      {"Sqrt", [](double x) { return std::sqrt(x); }},
      {"Rsqrt", [](double x) { return 1 / std::sqrt(x); }},
      {"Reciprocal", [](double x) { return 1 / x; }},
      {"Exp", [](double x) { return std::exp(x); }},
      {"Log", [](double x) { return std::log(x); }},
      {"Erf", [](double x) { return std::erf(x); }},
      {"Log1p", [](double x) { return std::log1p(x); }},
      {"Expm1", [](double x) { return std::expm1(x); }},
      {"Sin", [](double x) { return std::sin(x); }},
      {"Cos", [](double x) { return std::cos(x); }},
      {"Floor", [](double x) { return std::floor(x); }},
      {"Ceil", [](double x) { return std::ceil(x); }},
      {"Round", [](double x) { return std::nearbyint(x); }},
  };
  for (const auto& [op, f] : ops) {
    const bool positive = std::string_view(op) == "Sqrt" || std::string_view(op) == "Rsqrt" ||
                          std::string_view(op) == "Log" || std::string_view(op) == "Log1p";
    for (const auto& dims : std::vector<std::vector<int64_t>>{{2, 3}, {}, {0, 3}, {1000}}) {
      const Tensor x = Rand(dims, positive ? 0.1 : -2.0, 2.0, 7);
      Tensor want = x.Clone();
      for (int64_t i = 0; i < x.num_elements(); ++i) want.data<double>()[i] = f(x.data<double>()[i]);
      INFO(std::string(op) << " " << x.DebugString());
      ExpectNear(RunOp(op, {x})[0], want, 1e-12, 1e-12);
      ExpectNear(RunOp(op, {As<float>(x)})[0], As<float>(want), 1e-5, 1e-5);
    }
  }
  const Tensor i = T<int32_t>({-3, 0, 4});
  ExpectEqual(RunOp("Neg", {i})[0], T<int32_t>({3, 0, -4}));
  // tf.math.round's docstring: halves round to even.
  ExpectEqual(RunOp("Round", {T<double>({0.5, 1.5, 2.5, -2.5, -1.7})})[0], T<double>({0, 2, 2, -2, -2}));
  ExpectEqual(RunOp("Floor", {T<float>({-1.5, 1.2, 3})})[0], T<float>({-2, 1, 3}));
  ExpectEqual(RunOp("Ceil", {T<float>({-1.5, 1.2, 3})})[0], T<float>({-1, 2, 3}));
  ExpectEqual(RunOp("Abs", {As<int64_t>(i)})[0], T<int64_t>({3, 0, 4}));
  ExpectEqual(RunOp("Sign", {i})[0], T<int32_t>({-1, 0, 1}));
  ExpectEqual(RunOp("Square", {T<uint8_t>({3, 16})})[0], T<uint8_t>({9, 0}));
}

TEST_CASE("Select: same shape, scalar condition, row-vector condition") {
  const Tensor a = T<float>({1, 2, 3, 4, 5, 6}, {3, 2}), b = T<float>({-1, -2, -3, -4, -5, -6}, {3, 2});
  ExpectEqual(RunOp("Select", {T<bool>({1, 0, 0, 1, 1, 0}, {3, 2}), a, b})[0], T<float>({1, -2, -3, 4, 5, -6}, {3, 2}));
  ExpectEqual(RunOp("Select", {T<bool>({1, 0, 1}), a, b})[0], T<float>({1, 2, -3, -4, 5, 6}, {3, 2}));
  ExpectEqual(RunOp("Select", {T<bool>({0}, {}), a, b})[0], b);
  ExpectEqual(RunOp("Select", {T<bool>({1, 0}), T<int64_t>({1, 2}), T<int64_t>({8, 9})})[0], T<int64_t>({1, 9}));
  ExpectEqual(RunOp("Select", {T<bool>({}, {0}), T<double>({}, {0, 2}), T<double>({}, {0, 2})})[0],
              T<double>({}, {0, 2}));
  ExpectOpError("Select", {T<bool>({1, 0}), a, b}, {}, Code::kInvalidArgument, "dim 0 of a");
  ExpectOpError("Select", {T<bool>({1, 0, 1}), a, T<float>({1, 2})}, {}, Code::kInvalidArgument, "[3,2]");
}

TEST_CASE("Cast between every pair of dtypes") {
  const std::vector<double> vals = {0, 1, 2, 3, 0, 5};
  const std::vector<DType> types = {DType::kFloat32, DType::kFloat64, DType::kInt32,
                                    DType::kInt64,   DType::kUInt8,   DType::kBool};
  auto make = [&](DType dt, const std::vector<double>& v) {
    Tensor out;
    Dispatch<WEFT_ALL_TYPES>(dt, "test", [&](auto tag) { out = T_<typename decltype(tag)::type>(v, TensorShape({2, 3})); });
    return out;
  };
  for (DType src : types) {
    for (DType dst : types) {
      INFO(DTypeName(src) << " -> " << DTypeName(dst));
      std::vector<double> want = vals;
      if (dst == DType::kBool) for (double& w : want) w = w != 0;
      if (src == DType::kBool) for (double& w : want) w = w != 0;
      ExpectEqual(RunOp("Cast", {make(src, vals)}, {{"DstT", dst}})[0], make(dst, want));
    }
  }
  ExpectEqual(RunOp("Cast", {T<float>({2.7f, -1.5f, 0.25f})}, {{"DstT", DType::kInt32}})[0], T<int32_t>({2, -1, 0}));
  ExpectEqual(RunOp("Cast", {T<double>({0.5, 0, -2})}, {{"DstT", DType::kBool}})[0], T<bool>({1, 0, 1}));
  ExpectEqual(RunOp("Cast", {T<int32_t>({}, {0})}, {{"DstT", DType::kFloat32}})[0], T<float>({}, {0}));
}

TEST_CASE("Cast to and from float16 (IEEE binary16 bits, round to nearest even)") {
  // Closed forms of binary16: 2.2 -> 0x4066 = 2.19921875, 3.3 -> 0x429a = 3.30078125, 4.4 -> 0x4466 =
  // 4.3984375, 65504 (the largest half) -> 0x7bff, 1e5 overflows to +inf (0x7c00), -1e-4 -> 0x868e.
  const Tensor x = T<double>({2.2, 3.3, 4.4, 65504, 1e5, -1e-4});
  const Tensor h = RunOp("Cast", {x}, {{"DstT", DType::kFloat16}})[0];
  REQUIRE(h.dtype() == DType::kFloat16);
  const std::vector<uint16_t> bits = {0x4066, 0x429a, 0x4466, 0x7bff, 0x7c00, 0x868e};
  for (size_t i = 0; i < bits.size(); ++i) CHECK(static_cast<const uint16_t*>(h.raw_data())[i] == bits[i]);
  ExpectEqual(RunOp("Cast", {h}, {{"DstT", DType::kFloat64}})[0],
              T<double>({2.19921875, 3.30078125, 4.3984375, 65504, INFINITY, -0.00010001659393310547}));
  // TensorFlow's "Introduction to tensors": float64 -> float16 -> uint8 of [2.2, 3.3, 4.4] is [2, 3, 4].
  const Tensor h3 = RunOp("Cast", {T<double>({2.2, 3.3, 4.4})}, {{"DstT", DType::kFloat16}})[0];
  ExpectEqual(RunOp("Cast", {h3}, {{"DstT", DType::kUInt8}})[0], T<uint8_t>({2, 3, 4}));
  ExpectEqual(RunOp("Cast", {RunOp("Cast", {T<int32_t>({-7, 0, 2048})}, {{"DstT", DType::kFloat16}})[0]},
                    {{"DstT", DType::kInt32}})[0], T<int32_t>({-7, 0, 2048}));
  const Tensor same = RunOp("Cast", {h3}, {{"DstT", DType::kFloat16}})[0];  // same type: the input
  for (int i = 0; i < 3; ++i)
    CHECK(static_cast<const uint16_t*>(same.raw_data())[i] == static_cast<const uint16_t*>(h3.raw_data())[i]);
}

TEST_CASE("AddN sums same-shaped inputs") {
  for (int n : {1, 2, 3, 5, 6}) {
    std::vector<Tensor> xs;
    Tensor want = Tensor::Zeros(DType::kFloat64, TensorShape({2, 3}));
    for (int i = 0; i < n; ++i) {
      xs.push_back(Rand({2, 3}, -1, 1, 40 + i));
      for (int j = 0; j < 6; ++j) want.data<double>()[j] += xs.back().data<double>()[j];
    }
    ExpectNear(RunOp("AddN", xs)[0], want, 1e-12);
  }
  ExpectEqual(RunOp("AddN", {T<int32_t>({1, 2}), T<int32_t>({3, 4}), T<int32_t>({5, 6})})[0], T<int32_t>({9, 12}));
  ExpectOpError("AddN", {T<float>({1, 2}), T<float>({1, 2, 3})}, {}, Code::kInvalidArgument, "[3]");
}

// Naive reduction of x over `axis` (empty = all) with init/combine; Mean divides by the count.
template <typename T>
Tensor RefReduce(const Tensor& x, std::vector<int64_t> axis, bool keep, const std::string& op) {
  std::vector<bool> mask(x.rank(), axis.empty());
  for (int64_t a : axis) mask[a < 0 ? a + x.rank() : a] = true;
  std::vector<int64_t> out_dims, kd_dims;
  int64_t count = 1;
  for (int k = 0; k < x.rank(); ++k) {
    kd_dims.push_back(mask[k] ? 1 : x.dim(k));
    if (!mask[k]) out_dims.push_back(x.dim(k));
    else if (keep) out_dims.push_back(1);
    if (mask[k]) count *= x.dim(k);
  }
  const TensorShape kd(kd_dims);
  std::vector<double> acc(kd.num_elements(), op == "Prod" ? 1.0 : op == "Max" ? -INFINITY : op == "Min" ? INFINITY : 0.0);
  for (int64_t i = 0; i < x.num_elements(); ++i) {
    auto idx = Unflatten(i, x.shape());
    for (int k = 0; k < x.rank(); ++k) if (mask[k]) idx[k] = 0;
    int64_t o = 0;
    for (int k = 0; k < x.rank(); ++k) o = o * kd.dim(k) + idx[k];
    const double v = x.ElementAsDouble(i);
    double& a = acc[o];
    a = op == "Prod" ? a * v : op == "Max" ? std::max(a, v) : op == "Min" ? std::min(a, v) : a + v;
  }
  if (op == "Mean") for (double& a : acc) a = std::is_integral_v<T> ? std::trunc(a / count) : a / count;
  return T_<T>(acc, TensorShape(out_dims));
}

TEST_CASE("Sum, Mean, Max, Min, Prod over axis sets, keep_dims both ways, float and int") {
  const std::vector<std::vector<int64_t>> axes = {{}, {0}, {1}, {2}, {-1}, {0, 2}, {2, 0}, {0, 1}, {1, 2}, {0, 1, 2}, {-3, 1}};
  const Tensor x = Rand({2, 3, 4}, 0.5, 1.5, 3);
  // Small magnitudes so that Prod stays inside int32 (|product| <= 9 * 7 * 2^21).
  const Tensor xi = T<int32_t>({2, -1, 2, 1, -2, 9, 2, -1, 1, 2, -2, 1, 2, -7, 2, 1, 2, 1, 1, -2, 1, 2, 1, 2}, {2, 3, 4});
  for (const char* op : {"Sum", "Mean", "Max", "Min", "Prod"}) {
    for (const auto& axis : axes) {
      for (bool keep : {false, true}) {
        INFO(fmt::format("{} axis [{}] keep_dims {}", op, fmt::join(axis, ","), keep));
        const AttrMap attrs = {{"axis", axis}, {"keep_dims", keep}};
        ExpectNear(RunOp(op, {x}, attrs)[0], RefReduce<double>(x, axis, keep, op), 1e-12, 1e-12);
        ExpectNear(RunOp(op, {As<float>(x)}, attrs)[0], RefReduce<float>(As<float>(x), axis, keep, op), 1e-5, 1e-5);
        ExpectEqual(RunOp(op, {xi}, attrs)[0], RefReduce<int32_t>(xi, axis, keep, op));
        ExpectEqual(RunOp(op, {As<int64_t>(xi)}, attrs)[0], RefReduce<int64_t>(As<int64_t>(xi), axis, keep, op));
      }
    }
  }
  // Larger inputs take Eigen's multi-threaded paths (full, inner, outer and middle reductions).
  const Tensor big = Rand({64, 33, 50}, -1, 1, 9);
  for (const auto& axis : std::vector<std::vector<int64_t>>{{}, {2}, {0}, {1}, {0, 2}}) {
    ExpectNear(RunOp("Sum", {big}, {{"axis", axis}})[0], RefReduce<double>(big, axis, false, "Sum"), 1e-9, 1e-9);
    ExpectNear(RunOp("Max", {big}, {{"axis", axis}})[0], RefReduce<double>(big, axis, false, "Max"), 0, 0);
  }
  // Scalars, empty tensors, size-1 axes.
  ExpectEqual(RunOp("Sum", {T<double>({4}, {})})[0], T<double>({4}, {}));
  ExpectEqual(RunOp("Sum", {T<float>({}, {0, 3})}, {{"axis", std::vector<int64_t>{0}}})[0], T<float>({0, 0, 0}));
  ExpectEqual(RunOp("Prod", {T<int32_t>({}, {0, 3})}, {{"axis", std::vector<int64_t>{0}}})[0], T<int32_t>({1, 1, 1}));
  ExpectEqual(RunOp("Max", {T<float>({}, {0, 3})}, {{"axis", std::vector<int64_t>{1}}})[0], T<float>({}, {0}));
  ExpectEqual(RunOp("Sum", {T<float>({}, {0, 3})})[0], T<float>({0}, {}));
  ExpectEqual(RunOp("Mean", {T<float>({1, 2, 3}, {1, 3, 1})}, {{"axis", std::vector<int64_t>{0, 2}}})[0],
              T<float>({1, 2, 3}));
  ExpectEqual(RunOp("Sum", {T<uint8_t>({100, 100, 7})})[0], T<uint8_t>({207}, {}));
}

TEST_CASE("ArgMax and ArgMin: each axis, ties to the first index, output types") {
  const Tensor x = T<float>({3, 9, 9, 1, 7, 2, 2, 8, 5, 0, 6, 8}, {3, 4});
  ExpectEqual(RunOp("ArgMax", {x}, {{"axis", int64_t{1}}})[0], T<int64_t>({1, 3, 3}));
  ExpectEqual(RunOp("ArgMax", {x}, {{"axis", int64_t{0}}})[0], T<int64_t>({1, 0, 0, 1}));
  ExpectEqual(RunOp("ArgMin", {x}, {{"axis", int64_t{-1}}, {"output_type", DType::kInt32}})[0], T<int32_t>({3, 1, 1}));
  ExpectEqual(RunOp("ArgMin", {As<int32_t>(x)}, {{"axis", int64_t{0}}})[0], T<int64_t>({0, 2, 1, 0}));
  const Tensor y = Rand({3, 5, 2}, -1, 1, 11);
  Tensor want = Tensor::Zeros(DType::kInt64, TensorShape({3, 2}));
  for (int i = 0; i < 3; ++i) {
    for (int k = 0; k < 2; ++k) {
      int best = 0;
      for (int j = 1; j < 5; ++j) if (y.data<double>()[i * 10 + j * 2 + k] > y.data<double>()[i * 10 + best * 2 + k]) best = j;
      want.data<int64_t>()[i * 2 + k] = best;
    }
  }
  ExpectEqual(RunOp("ArgMax", {y}, {{"axis", int64_t{1}}})[0], want);
  ExpectEqual(RunOp("ArgMax", {T<double>({}, {0, 3})}, {{"axis", int64_t{1}}})[0], T<int64_t>({}, {0}));
  ExpectOpError("ArgMax", {T<double>({}, {0, 3})}, {{"axis", int64_t{0}}}, Code::kInvalidArgument, "empty");
}

TEST_CASE("SumToShape undoes broadcasting") {
  const Tensor x = Rand({2, 3, 4}, -1, 1, 5);
  for (const auto& target : std::vector<std::vector<int64_t>>{{3, 1}, {4}, {}, {2, 3, 4}, {2, 1, 4}, {1, 1, 1}}) {
    const Tensor shape = T<int64_t>(std::vector<double>(target.begin(), target.end()), {static_cast<int64_t>(target.size())});
    // Sum over the axes the target lacks or has as 1: compare with Sum + reshape.
    std::vector<int64_t> axis;
    for (int k = 0; k < 3; ++k) {
      const int t = k - (3 - static_cast<int>(target.size()));
      if (t < 0 || target[t] != x.dim(k)) axis.push_back(k);
    }
    const Tensor want = axis.empty() ? x : RefReduce<double>(x, axis, false, "Sum").Reshaped(TensorShape(target));
    ExpectNear(axis.empty() ? x : RunOp("SumToShape", {x, shape})[0], want, 1e-12);
    ExpectNear(RunOp("SumToShape", {x, As<int32_t>(shape)})[0], want, 1e-12);
  }
  ExpectOpError("SumToShape", {x, T<int64_t>({5})}, {}, Code::kInvalidArgument, "[2,3,4]");
}

// Reference product of a (m x k, or k x m when ta) and b.
Tensor RefMatMul(const Tensor& a, const Tensor& b, bool ta, bool tb, int64_t a_off = 0, int64_t b_off = 0) {
  const int ra = a.rank(), rb = b.rank();
  const int64_t m = a.dim(ra - (ta ? 1 : 2)), k = a.dim(ra - (ta ? 2 : 1)), n = b.dim(rb - (tb ? 2 : 1));
  const int64_t ac = a.dim(ra - 1), bc = b.dim(rb - 1);
  Tensor out = Tensor::Zeros(DType::kFloat64, TensorShape({m, n}));
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j)
      for (int64_t p = 0; p < k; ++p)
        out.data<double>()[i * n + j] += a.ElementAsDouble(a_off + (ta ? p * ac + i : i * ac + p)) *
                                         b.ElementAsDouble(b_off + (tb ? j * bc + p : p * bc + j));
  return out;
}

TEST_CASE("MatMul: all transposes, float32 and float64, empty and k = 0") {
  for (auto [m, k, n] : std::vector<std::tuple<int64_t, int64_t, int64_t>>{{2, 3, 4}, {1, 5, 1}, {33, 17, 29}, {70, 130, 65}}) {
    for (bool ta : {false, true}) {
      for (bool tb : {false, true}) {
        INFO(m << "x" << k << "x" << n << " ta " << ta << " tb " << tb);
        const Tensor a = Rand(ta ? std::vector<int64_t>{k, m} : std::vector<int64_t>{m, k}, -1, 1, 21);
        const Tensor b = Rand(tb ? std::vector<int64_t>{n, k} : std::vector<int64_t>{k, n}, -1, 1, 22);
        const AttrMap attrs = {{"transpose_a", ta}, {"transpose_b", tb}};
        const Tensor want = RefMatMul(a, b, ta, tb);
        ExpectNear(RunOp("MatMul", {a, b}, attrs)[0], want, 1e-10, 1e-10);
        ExpectNear(RunOp("MatMul", {As<float>(a), As<float>(b)}, attrs)[0], As<float>(want), 1e-4, 1e-4);
        // Integer products (TF's int32 / int64 MatMul): exact, so equal to the reference.
        const Tensor ia = As<int32_t>(Rand(a.shape().dims(), -50, 50, 23));
        const Tensor ib = As<int32_t>(Rand(b.shape().dims(), -50, 50, 24));
        const Tensor iwant = RefMatMul(ia, ib, ta, tb);
        ExpectEqual(RunOp("MatMul", {ia, ib}, attrs)[0], As<int32_t>(iwant));
        ExpectEqual(RunOp("MatMul", {As<int64_t>(ia), As<int64_t>(ib)}, attrs)[0], As<int64_t>(iwant));
      }
    }
  }
  // TensorFlow's "Introduction to tensors": tf.matmul([[1, 2], [3, 4]], [[1, 1], [1, 1]]) = [[3, 3], [7, 7]].
  ExpectEqual(RunOp("MatMul", {T<int32_t>({1, 2, 3, 4}, {2, 2}), T<int32_t>({1, 1, 1, 1}, {2, 2})})[0],
              T<int32_t>({3, 3, 7, 7}, {2, 2}));
  ExpectOpError("MatMul", {T<int32_t>({1, 2}, {1, 2}), T<int64_t>({1, 2}, {2, 1})}, {}, Code::kInvalidArgument, "int64");
  ExpectEqual(RunOp("MatMul", {T<float>({}, {2, 0}), T<float>({}, {0, 3})})[0], T<float>({0, 0, 0, 0, 0, 0}, {2, 3}));
  ExpectEqual(RunOp("MatMul", {T<float>({}, {0, 2}), T<float>({1, 2}, {2, 1})})[0], T<float>({}, {0, 1}));
}

TEST_CASE("BatchMatMul: adjoints and broadcast batch dims") {
  struct Case { std::vector<int64_t> a, b; bool ax, ay; };
  const std::vector<Case> cases = {
      {{3, 2, 4}, {3, 4, 5}, false, false}, {{3, 4, 2}, {3, 4, 5}, true, false}, {{3, 2, 4}, {3, 5, 4}, false, true},
      {{3, 4, 2}, {3, 5, 4}, true, true},   {{2, 1, 2, 3}, {4, 3, 2}, false, false}, {{2, 3}, {5, 3, 4}, false, false},
      {{64, 8, 8}, {64, 8, 8}, false, true}, {{2, 80, 70}, {70, 90}, false, false}, {{0, 2, 3}, {3, 4}, false, false},
  };
  for (const Case& c : cases) {
    const Tensor a = Rand(c.a, -1, 1, 31), b = Rand(c.b, -1, 1, 32);
    INFO(a.DebugString() << " " << b.DebugString() << " " << c.ax << c.ay);
    const TensorShape ab(std::vector<int64_t>(c.a.begin(), c.a.end() - 2)), bb(std::vector<int64_t>(c.b.begin(), c.b.end() - 2));
    const TensorShape batch = BroadcastShapes(ab, bb);
    const int64_t ma = c.a[c.a.size() - 2] * c.a.back(), mb = c.b[c.b.size() - 2] * c.b.back();
    std::vector<double> want;
    TensorShape out = batch;
    for (int64_t i = 0; i < batch.num_elements(); ++i) {
      const auto idx = Unflatten(i, batch);
      const Tensor r = RefMatMul(a, b, c.ax, c.ay, BroadcastSource(idx, ab) * ma, BroadcastSource(idx, bb) * mb);
      if (i == 0) out.AddDim(r.dim(0)), out.AddDim(r.dim(1));
      for (int64_t j = 0; j < r.num_elements(); ++j) want.push_back(r.data<double>()[j]);
    }
    if (batch.num_elements() == 0) out.AddDim(c.ax ? c.a.back() : c.a[c.a.size() - 2]), out.AddDim(c.b.back());
    const AttrMap attrs = {{"adj_x", c.ax}, {"adj_y", c.ay}};
    ExpectNear(RunOp("BatchMatMul", {a, b}, attrs)[0], T<double>(want, out.dims()), 1e-10, 1e-10);
    ExpectNear(RunOp("BatchMatMul", {As<float>(a), As<float>(b)}, attrs)[0], T<float>(want, out.dims()), 1e-4, 1e-4);
    const Tensor ia = As<int64_t>(Rand(c.a, -50, 50, 33)), ib = As<int64_t>(Rand(c.b, -50, 50, 34));
    const Tensor iref = RefMatMul(ia, ib, c.ax, c.ay);  // the first batch's product
    const Tensor iout = RunOp("BatchMatMul", {ia, ib}, attrs)[0];
    CHECK(iout.shape() == out);
    for (int64_t j = 0; j < std::min(iout.num_elements(), iref.num_elements()); ++j)
      CHECK(iout.data<int64_t>()[j] == static_cast<int64_t>(iref.data<double>()[j]));
  }
}

TEST_CASE("large inputs: kernels split over the intra-op pool agree with the references") {
  // Big enough that the elementwise loops, integer reductions, ArgMax and GEMM blocks run in
  // several pieces on the 2-thread pool (row pieces start mid-way through the outer dims).
  const Tensor a = Rand({4, 7, 2000}, 0.5, 2.0, 101), b = Rand({7, 1}, 0.5, 2.0, 102);
  ExpectNear(RunOp("Add", {a, b})[0], RefBinary<double>(a, b, [](double x, double y) { return x + y; }), 1e-12);
  ExpectNear(RunOp("Div", {As<float>(a), As<float>(b)})[0],
             As<float>(RefBinary<double>(a, b, [](double x, double y) { return x / y; })), 1e-5, 1e-5);
  const Tensor c = Rand({7, 2000}, 0.5, 2.0, 103);
  ExpectEqual(RunOp("Less", {a, c})[0], RefBinary<double, bool>(a, c, [](double x, double y) { return x < y; }));
  const Tensor ia = As<int32_t>(Rand({4, 7, 2000}, -100, 100, 104)), ib = As<int32_t>(Rand({2000}, 1, 50, 105));
  ExpectEqual(RunOp("Mul", {ia, ia})[0], RefBinary<int32_t>(ia, ia, [](int32_t x, int32_t y) { return x * y; }));
  ExpectEqual(RunOp("Div", {ia, ib})[0], RefBinary<int32_t>(ia, ib, [](int32_t x, int32_t y) { return x / y; }));
  ExpectEqual(RunOp("Cast", {a}, {{"DstT", DType::kInt32}})[0], As<int32_t>(a));
  const Tensor ir = As<int32_t>(Rand({4, 300, 1500}, -100, 100, 106));
  for (const std::vector<int64_t>& axis : std::vector<std::vector<int64_t>>{{1}, {2}, {0, 2}}) {
    for (const char* op : {"Sum", "Max", "Min"}) {
      INFO(op << " axis " << axis.size());
      ExpectEqual(RunOp(op, {ir}, {{"axis", axis}})[0], RefReduce<int32_t>(ir, axis, false, op));
    }
  }
  const Tensor x = Rand({300, 200}, -1, 1, 107);
  for (int64_t axis : {0, 1}) {
    const Tensor got = RunOp("ArgMax", {x}, {{"axis", axis}})[0];
    const Tensor mx = RefReduce<double>(x, {axis}, false, "Max");
    for (int64_t i = 0; i < got.num_elements(); ++i) {
      const int64_t at = got.data<int64_t>()[i];
      CHECK(x.data<double>()[axis == 0 ? at * 200 + i : i * 200 + at] == mx.data<double>()[i]);
    }
  }
  for (auto [m, k, n] : std::vector<std::tuple<int64_t, int64_t, int64_t>>{{40, 300, 200}, {200, 100, 120}}) {
    for (bool ta : {false, true}) {
      for (bool tb : {false, true}) {
        const Tensor ma = Rand(ta ? std::vector<int64_t>{k, m} : std::vector<int64_t>{m, k}, -1, 1, 108);
        const Tensor mb = Rand(tb ? std::vector<int64_t>{n, k} : std::vector<int64_t>{k, n}, -1, 1, 109);
        INFO("m k n " << m << " " << k << " " << n << " ta " << ta << " tb " << tb);
        ExpectNear(RunOp("MatMul", {ma, mb}, {{"transpose_a", ta}, {"transpose_b", tb}})[0],
                   RefMatMul(ma, mb, ta, tb), 1e-10, 1e-10);
      }
    }
  }
}

TEST_CASE("gradients of elementwise ops, with broadcasting") {
  for (const auto& [sa, sb] : std::vector<std::pair<std::vector<int64_t>, std::vector<int64_t>>>{
           {{2, 3}, {2, 3}}, {{2, 3}, {3}}, {{2, 1}, {1, 3}}, {{}, {2, 3}}, {{2, 3, 1}, {4}}}) {
    const Tensor a = Rand(sa, 0.5, 2.0, 51), b = Rand(sb, 0.5, 2.0, 52), c = Rand(sb, -2.0, -0.5, 53);
    for (const char* op : {"Add", "Sub", "Mul", "Div", "Pow"}) {
      INFO(std::string(op) << " " << a.DebugString() << " " << b.DebugString());
      CheckGradient(op, {a, b});
    }
    CheckGradient("Maximum", {a, b});
    CheckGradient("Minimum", {a, b});
    CheckGradient("Maximum", {a, c});
    CheckGradient("Minimum", {a, c});
  }
  const Tensor x = Rand({2, 3}, 0.5, 2.0, 54), z = Rand({2, 3}, -2.0, 2.0, 55);
  for (const char* op : {"Neg", "Abs", "Square", "Exp", "Erf", "Expm1", "Sin", "Cos"}) CheckGradient(op, {z});
  CheckGradient("Log1p", {x});
  for (const char* op : {"Sqrt", "Rsqrt", "Reciprocal", "Log"}) CheckGradient(op, {x});
  CheckGradient("Select", {T<bool>({1, 0, 0, 1, 1, 0}, {2, 3}), x, z});
  CheckGradient("Select", {T<bool>({0, 1}), x, z});
  CheckGradient("AddN", {x, z, x});
  CheckGradient("Cast", {x}, {{"DstT", DType::kFloat64}});
  CheckGradient("SumToShape", {Rand({2, 3, 4}, -1, 1, 56), T<int32_t>({3, 1})});
}

TEST_CASE("gradients of reductions") {
  const Tensor x = Rand({2, 3, 4}, 0.5, 1.5, 61);
  for (const char* op : {"Sum", "Mean", "Max", "Min", "Prod"}) {
    for (const auto& axis : std::vector<std::vector<int64_t>>{{}, {1}, {0, 2}, {-1}}) {
      for (bool keep : {false, true}) {
        INFO(fmt::format("{} axis [{}] keep_dims {}", op, fmt::join(axis, ","), keep));
        CheckGradient(op, {x}, {{"axis", axis}, {"keep_dims", keep}});
      }
    }
  }
  // Ties share the gradient evenly (as TF): max of [1, 3, 3] sends 1/2 to each 3.
  Graph g;
  Scope s = Scope::Root(&g);
  const Output in = ops::Const(s, T<double>({1, 3, 3, 2}, {2, 2}));
  const Output y = ops::Max(s, in, {});
  const std::vector<Output> d = Gradients(s, {y}, {in});
  Session sess(&g);
  ExpectNear(sess.Run({}, {d[0]})[0], T<double>({0, 0.5, 0.5, 0}, {2, 2}));
}

TEST_CASE("gradients of MatMul (all transposes) and BatchMatMul (adjoints, broadcast)") {
  for (bool ta : {false, true}) {
    for (bool tb : {false, true}) {
      const Tensor a = Rand(ta ? std::vector<int64_t>{3, 2} : std::vector<int64_t>{2, 3}, -1, 1, 71);
      const Tensor b = Rand(tb ? std::vector<int64_t>{4, 3} : std::vector<int64_t>{3, 4}, -1, 1, 72);
      CheckGradient("MatMul", {a, b}, {{"transpose_a", ta}, {"transpose_b", tb}});
      const Tensor ba = Rand(ta ? std::vector<int64_t>{2, 1, 3, 2} : std::vector<int64_t>{2, 1, 2, 3}, -1, 1, 73);
      const Tensor bb = Rand(tb ? std::vector<int64_t>{3, 4, 3} : std::vector<int64_t>{3, 3, 4}, -1, 1, 74);
      CheckGradient("BatchMatMul", {ba, bb}, {{"adj_x", ta}, {"adj_y", tb}});
    }
  }
}

TEST_CASE("gradients with shapes known only at run time") {
  // x: [?, 3] + b: [3], loss = sum(mean(x * b + b, axis 1) * max(x, axis 0) sum): exercises
  // SumToShape with Shape(), ReducedShape and BroadcastTo on unknown dims.
  Graph g;
  Scope s = Scope::Root(&g);
  const Output x = ops::Placeholder(s, DType::kFloat64, TensorShape({-1, 3}));
  const Output b = ops::Placeholder(s, DType::kFloat64, TensorShape({3}));
  const Output h = ops::Add(s, ops::Mul(s, x, b), b);
  const Output loss = ops::Add(s, ops::Sum(s, ops::Mean(s, h, {1})), ops::Sum(s, ops::Max(s, x, {0})));
  const std::vector<Output> d = Gradients(s, {loss}, {x, b});
  Session sess(&g);
  const Tensor xv = T<double>({1, 5, 3, 4, 2, 6}, {2, 3}), bv = T<double>({1, 2, 3});
  const auto out = sess.Run({{x, xv}, {b, bv}}, {d[0], d[1]});
  // dloss/dx = b / 3 + [x is the column max]; dloss/db = sum_rows(x) / 3 + 2 / 3.
  ExpectNear(out[0], T<double>({1.0 / 3, 2.0 / 3 + 1, 1, 1 + 1.0 / 3, 2.0 / 3, 2}, {2, 3}));
  ExpectNear(out[1], T<double>({7.0 / 3, 9.0 / 3, 11.0 / 3}));
}

TEST_CASE("kernels re-check shapes that were unknown at build time") {
  Graph g;
  Scope s = Scope::Root(&g);
  const Output a = ops::Placeholder(s, DType::kFloat64), b = ops::Placeholder(s, DType::kFloat64);
  const Output add = ops::Add(s, a, b), mm = ops::MatMul(s, a, b), sum = ops::Sum(s, a, {1, -1});
  const Output bmm = ops::BatchMatMul(s, a, b), sel = ops::Select(s, ops::Placeholder(s, DType::kBool), a, b);
  Session sess(&g);
  auto expect = [&](const Output& y, const Tensor& av, const Tensor& bv, const std::string& substr) {
    try {
      std::vector<std::pair<Output, Tensor>> feeds = {{a, av}, {b, bv}};
      if (y == sel) feeds.emplace_back(y.node->input(0), T<bool>({1, 0}));
      sess.Run(feeds, {y});
      FAIL_CHECK("no error for " << y.name());
    } catch (const Error& e) {
      CHECK(e.code() == Code::kInvalidArgument);
      CHECK_MESSAGE(std::string(e.what()).find(substr) != std::string::npos, e.what());
      CHECK_MESSAGE(std::string(e.what()).find(y.node->name()) != std::string::npos, e.what());
    }
  };
  expect(add, Rand({2, 3}), Rand({4}), "[2,3] and [4] do not broadcast");
  expect(mm, Rand({2, 3}), Rand({4, 5}), "inner dimensions differ: a [2,3] and b [4,5]");
  expect(bmm, Rand({2, 2, 3}), Rand({3, 3, 4}), "[2] and [3] do not broadcast");
  expect(sum, Rand({2, 3}), Rand({1}), "listed twice");
  expect(sel, Rand({3, 2}), Rand({3, 2}), "cond [2]");
}

TEST_CASE("errors name the shapes, axes and dtypes") {
  ExpectOpError("Add", {Rand({2, 3}), Rand({4})}, {}, Code::kInvalidArgument, "[2,3]");
  ExpectOpError("Add", {Rand({2, 3}), Rand({4})}, {}, Code::kInvalidArgument, "[4]");
  ExpectOpError("Mul", {Rand({2, 3}), Rand({3, 2})}, {}, Code::kInvalidArgument, "[3,2]");
  ExpectOpError("MatMul", {Rand({2, 3}), Rand({4, 5})}, {}, Code::kInvalidArgument, "inner dimensions");
  ExpectOpError("MatMul", {Rand({2, 3}), Rand({2, 3})}, {}, Code::kInvalidArgument, "[2,3]");
  ExpectOpError("BatchMatMul", {Rand({2, 2, 3}), Rand({3, 2, 4})}, {}, Code::kInvalidArgument, "[3,2,4]");
  ExpectOpError("Sum", {Rand({2, 3})}, {{"axis", std::vector<int64_t>{2}}}, Code::kInvalidArgument, "[2,3]");
  ExpectOpError("Mean", {Rand({2, 3})}, {{"axis", std::vector<int64_t>{-3}}}, Code::kInvalidArgument, "-3");
  ExpectOpError("Sum", {Rand({2, 3})}, {{"axis", std::vector<int64_t>{1, -1}}}, Code::kInvalidArgument, "twice");
  ExpectOpError("ArgMax", {Rand({2, 3})}, {{"axis", int64_t{2}}}, Code::kInvalidArgument, "[2,3]");
  ExpectOpError("Div", {T<int32_t>({1, 2, 3}), T<int32_t>({1, 0, 1})}, {}, Code::kInvalidArgument, "division by zero");
  ExpectOpError("Div", {T<int64_t>({4}), T<int64_t>({0}, {})}, {}, Code::kInvalidArgument, "Div");
  ExpectOpError("Pow", {T<int32_t>({2}), T<int32_t>({-1})}, {}, Code::kInvalidArgument, "negative");
  ExpectOpError("Mean", {T<int32_t>({}, {0, 2})}, {{"axis", std::vector<int64_t>{0}}}, Code::kInvalidArgument, "zero");
  ExpectOpError("Add", {Rand({2}), As<float>(Rand({2}))}, {}, Code::kInvalidArgument, "float32");
  ExpectOpError("Sqrt", {T<int32_t>({4})}, {}, Code::kInvalidArgument, "int32");
}

TEST_CASE("every math op rejects a dtype outside its type list, or shapes that do not broadcast") {
  const Code kInvalid = Code::kInvalidArgument;
  for (const char* op : {"Rsqrt", "Reciprocal", "Exp", "Log", "Erf", "Log1p", "Expm1", "Floor", "Ceil", "Round", "Sin", "Cos"})
    ExpectOpError(op, {T<int32_t>({4})}, {}, kInvalid, "int32");
  for (const char* op : {"Neg", "Abs", "Sign"}) ExpectOpError(op, {T<uint8_t>({4})}, {}, kInvalid, "uint8");
  ExpectOpError("Square", {T<bool>({1})}, {}, kInvalid, "bool");
  for (const char* op : {"Sub", "Maximum", "Minimum", "Equal", "NotEqual"}) {
    ExpectOpError(op, {Rand({2, 3}), Rand({2})}, {}, kInvalid, "[2,3] and [2] do not broadcast");
  }
  for (const char* op : {"Less", "LessEqual", "Greater", "GreaterEqual"}) {
    ExpectOpError(op, {T<bool>({1}), T<bool>({0})}, {}, kInvalid, "bool");
  }
  for (const char* op : {"LogicalAnd", "LogicalOr"}) ExpectOpError(op, {Rand({2}), Rand({2})}, {}, kInvalid, "float64");
  ExpectOpError("LogicalNot", {T<int32_t>({1})}, {}, kInvalid, "int32");
  for (const char* op : {"Max", "Min", "Prod"}) {
    ExpectOpError(op, {Rand({2, 3})}, {{"axis", std::vector<int64_t>{2}}}, kInvalid, "[2,3]");
  }
  ExpectOpError("ArgMin", {Rand({2, 3})}, {{"axis", int64_t{-3}}}, kInvalid, "[2,3]");
  ExpectOpError("Cast", {Rand({2})}, {{"DstT", DType::kInvalid}}, kInvalid, "DstT");
}


TEST_CASE("inverse trigonometric and special functions match closed forms, with gradients") {
  const Tensor u = Rand({2, 3}, -0.9, 0.9, 61), pos = Rand({2, 3}, 0.5, 6.0, 62), p = Rand({2, 3}, 0.05, 0.95, 63);
  const std::vector<std::tuple<const char*, Tensor, std::function<double(double)>>> cases = {
      {"Asin", u, [](double x) { return std::asin(x); }},
      {"Acos", u, [](double x) { return std::acos(x); }},
      {"Atan", Rand({2, 3}, -5.0, 5.0, 64), [](double x) { return std::atan(x); }},
      {"Lgamma", pos, [](double x) { return std::lgamma(x); }},
  };
  for (const auto& [op, x, f] : cases) {
    Tensor want = x.Clone();
    for (int64_t i = 0; i < x.num_elements(); ++i) want.data<double>()[i] = f(x.data<double>()[i]);
    INFO(op);
    ExpectNear(RunOp(op, {x})[0], want, 1e-12, 1e-12);
    ExpectNear(RunOp(op, {As<float>(x)})[0], As<float>(want), 1e-5, 1e-5);
    CheckGradient(op, {x});
  }
  // digamma(1) = -Euler's gamma; digamma(1/2) = -gamma - 2 ln 2; digamma(x + 1) = digamma(x) + 1/x.
  const double g = 0.5772156649015329;
  ExpectNear(RunOp("Digamma", {T<double>({1.0, 0.5, 4.0})})[0],
             T<double>({-g, -g - 2 * std::log(2.0), -g + 1 + 0.5 + 1.0 / 3}), 1e-12, 1e-12);
  // Known quantiles: Phi(0) = 1/2, Phi(1.959963984540054) = 0.975, Phi(1) = erfc(-1/sqrt 2) / 2.
  ExpectNear(RunOp("Ndtri", {T<double>({0.5, 0.975, 0.5 * std::erfc(-1 / std::sqrt(2.0))})})[0],
             T<double>({0, 1.959963984540054, 1}), 1e-12, 1e-12);
  // Phi(ndtri(p)) = p, Phi(x) = erfc(-x / sqrt(2)) / 2.
  const Tensor q = RunOp("Ndtri", {p})[0];
  Tensor back = q.Clone();
  for (int64_t i = 0; i < q.num_elements(); ++i) back.data<double>()[i] = 0.5 * std::erfc(-q.data<double>()[i] / std::sqrt(2.0));
  ExpectNear(back, p, 1e-12, 1e-12);
  CheckGradient("Ndtri", {p});
  // atan2 by quadrant, broadcasting.
  const Tensor y = Rand({2, 3}, -2.0, 2.0, 65), x = Rand({3}, -2.0, 2.0, 66);
  Tensor want = y.Clone();
  for (int64_t i = 0; i < 6; ++i) want.data<double>()[i] = std::atan2(y.data<double>()[i], x.data<double>()[i % 3]);
  ExpectNear(RunOp("Atan2", {y, x})[0], want, 1e-12, 1e-12);
  ExpectNear(RunOp("Atan2", {T<double>({1, -1, 0}), T<double>({-1, -1, -1})})[0],
             T<double>({3 * M_PI / 4, -3 * M_PI / 4, M_PI}), 1e-12, 1e-12);
  CheckGradient("Atan2", {y, x});
  for (const char* op : {"Asin", "Acos", "Atan", "Lgamma", "Digamma", "Ndtri"})
    ExpectOpError(op, {T<int32_t>({1})}, {}, Code::kInvalidArgument, "int32");
  ExpectOpError("Atan2", {Rand({2, 3}), Rand({2})}, {}, Code::kInvalidArgument, "[2,3] and [2] do not broadcast");
}

}  // namespace
}  // namespace weft::test
