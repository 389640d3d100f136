// The control-flow ops one at a time (ops/control.cc): what each kernel forwards, and the errors
// of bad input. Their meaning in a graph (dead tensors, frames, iterations) and the gradients of
// Switch and Merge (finite differences through ops::Cond) are tested in
// tests/graph/control_flow_test.cc.
#include "ops/control.h"
#include "ops/framework.h"
#include "ops/math.h"
#include "tests/ops/op_test_util.h"

namespace weft::test {
namespace {

constexpr Code kInvalid = Code::kInvalidArgument;

TEST_CASE("Switch forwards its data to the side its predicate names") {
  Graph g;
  Scope s = Scope::Root(&g);
  Output p = ops::Placeholder(s.WithOpName("p"), DType::kBool, {});
  Output x = ops::Placeholder(s.WithOpName("x"), DType::kFloat32, {3});
  ops::SwitchOutputs sw = ops::Switch(s, x, p);
  Session sess(&g);
  const Tensor v = T<float>({1, -2, 3.5});
  ExpectEqual(Fetch(sess, sw.output_true, {{p, T<bool>({1}, {})}, {x, v}}), v);
  ExpectEqual(Fetch(sess, sw.output_false, {{p, T<bool>({0}, {})}, {x, v}}), v);
  ExpectOpError("Switch", {v, T<bool>({1, 0})}, {}, kInvalid, "pred");
  ExpectOpError("Switch", {v, T<float>({1}, {})}, {}, kInvalid, "bool");
}

TEST_CASE("Merge forwards its first live input and its index") {
  auto out = RunOp("Merge", {T<float>({1, 2}), T<float>({3, 4})});
  ExpectEqual(out[0], T<float>({1, 2}));
  ExpectEqual(out[1], T<int32_t>({0}, {}));
  ExpectOpError("Merge", {T<float>({1, 2}), T<int32_t>({3, 4})}, {}, kInvalid, "int32");
}

TEST_CASE("Enter, Exit, NextIteration and LoopCond forward their input") {
  const Tensor v = T<double>({0.5, -1, 7}, {3, 1});
  ExpectEqual(RunOp("Enter", {v}, {{"frame_name", std::string("f")}})[0], v);
  ExpectEqual(RunOp("NextIteration", {v})[0], v);
  ExpectEqual(RunOp("LoopCond", {T<bool>({1}, {})})[0], T<bool>({1}, {}));
  ExpectOpError("Enter", {v}, {}, kInvalid, "frame_name");
  ExpectOpError("LoopCond", {T<bool>({1, 0})}, {}, kInvalid, "input");
  ExpectOpError("Exit", {v}, {}, kInvalid, "not inside a while_loop frame");
  ExpectOpError("NextIteration", {}, {}, kInvalid, "expects 1 inputs");
  // Exit in a loop: the loop's final value.
  Graph g;
  Scope s = Scope::Root(&g);
  Output n = ops::Placeholder(s.WithOpName("n"), DType::kInt32, {});
  Output last = ops::WhileLoop(
      s, {ops::Const(s, 0)}, [&](const Scope& b, const std::vector<Output>& i) { return ops::Less(b, i[0], n); },
      [&](const Scope& b, const std::vector<Output>& i) {
        return std::vector<Output>{ops::Add(b, i[0], ops::Const(b, 1))};
      })[0];
  Session sess(&g);
  ExpectEqual(Fetch(sess, last, {{n, T<int32_t>({4}, {})}}), T<int32_t>({4}, {}));
}

TEST_CASE("LoopStackPush keeps a value under an index, LoopStackPop returns it once") {
  Graph g;
  Scope s = Scope::Root(&g);
  Output h = ops::LoopStack(s);
  const Tensor a = T<double>({1.5, -2}, {2}), b = T<double>({4, 0.25}, {2});
  // Pushed out of order (parallel iterations may), popped in any order by index.
  Output pa = ops::LoopStackPush(s, h, ops::Const(s, 1), ops::Const(s, a));
  Output pb = ops::LoopStackPush(s.WithControlDependencies(std::vector<Output>{pa}), h, ops::Const(s, 0), ops::Const(s, b));
  Output got0 = ops::LoopStackPop(s.WithControlDependencies(std::vector<Output>{pb}), h, ops::Const(s, 0),
                                  DType::kFloat64, TensorShape({2}));
  Output got1 = ops::LoopStackPop(s.WithControlDependencies(std::vector<Output>{got0}), h, ops::Const(s, 1),
                                  DType::kFloat64, TensorShape({2}));
  Output again = ops::LoopStackPop(s.WithControlDependencies(std::vector<Output>{got1}), h, ops::Const(s, 1),
                                   DType::kFloat64, TensorShape({2}));
  Output wrong = ops::LoopStackPop(s.WithControlDependencies(std::vector<Output>{pb}), h, ops::Const(s, 0),
                                   DType::kFloat32, TensorShape({2}));
  Session sess(&g);
  ExpectEqual(Fetch(sess, pa), a);
  ExpectEqual(Fetch(sess, got0), b);
  ExpectEqual(Fetch(sess, got1), a);  // a step of its own: pushes both, pops both
  // Each step has its own stack: nothing pushed in another step is there.
  CHECK_THROWS_WITH_AS(sess.Run({}, {again}), doctest::Contains("nothing was pushed under index 1"), Error);
  CHECK_THROWS_WITH_AS(sess.Run({}, {wrong}), doctest::Contains("but the node pops float32 [2]"), Error);
  // absent_is_dead: nothing under the index gives a dead value (a Merge takes its other input).
  Output absent = ops::LoopStackPop(s, h, ops::Const(s, 5), DType::kFloat64, TensorShape({2}), true);
  ExpectEqual(Fetch(sess, ops::Merge(s, {absent, ops::Const(s, b)}).value_index), T<int32_t>({1}, {}));
  CHECK_THROWS_WITH_AS(sess.Run({}, {absent}), doctest::Contains("has no value in this step"), Error);
  // A handle that no LoopStack made, a bad index.
  const Tensor fake = T<int64_t>({12345}, {});
  ExpectOpError("LoopStackPush", {fake, T<int32_t>({0}, {}), a}, {}, kInvalid, "not a stack made by a LoopStack");
  ExpectOpError("LoopStackPop", {fake, T<int32_t>({0}, {})}, {{"T", DType::kFloat64}}, kInvalid,
                "not a stack made by a LoopStack");
  ExpectOpError("LoopStack", {a}, {}, kInvalid, "expects 0 inputs");
  Output neg = ops::LoopStackPush(s, h, ops::Const(s, -1), ops::Const(s, a));
  CHECK_THROWS_WITH_AS(sess.Run({}, {neg}), doctest::Contains("`index` must be >= 0, got -1"), Error);
  Output twice = ops::LoopStackPush(s.WithControlDependencies(std::vector<Output>{pa}), h, ops::Const(s, 1),
                                    ops::Const(s, a));
  CHECK_THROWS_WITH_AS(sess.Run({}, {twice}), doctest::Contains("index 1 was pushed twice"), Error);
}

}  // namespace
}  // namespace weft::test
