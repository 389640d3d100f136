// Graph files (graph/graph_io.h): what `weft.Graph(path=...)` loads and what a server receives in
// a RegisterGraph request. As the server does (distributed/server/server.cc), a parsed graph then
// gets an executor, which creates every node's kernel from its attrs.
#include <cstring>

#include <zlib.h>

#include "core/threadpool.h"
#include "graph/executor.h"
#include "graph/gradients.h"
#include "graph/graph_io.h"
#include "ops/array.h"
#include "ops/framework.h"
#include "ops/math.h"
#include "ops/nn.h"
#include "ops/optimizer.h"
#include "ops/state.h"
#include "../fuzz.h"

namespace weft::fuzz {
namespace {

// A dense layer trained by gradient descent: placeholders, variables, gradients, an update.
std::string Mlp() {
  Graph g;
  g.set_seed(3);
  Scope s = Scope::Root(&g);
  Output x = ops::Placeholder(s.WithOpName("x"), DType::kFloat32, {-1, 4});
  Output labels = ops::Placeholder(s.WithOpName("labels"), DType::kInt32, {-1});
  Output w = ops::Variable(s.WithOpName("w"), {4, 3}, DType::kFloat32);
  Output b = ops::Variable(s.WithOpName("b"), {3}, DType::kFloat32);
  ops::Assign(s.WithOpName("init_w"), w, ops::Const(s, Tensor::Zeros(DType::kFloat32, {4, 3})));
  Output logits = ops::BiasAdd(s, ops::MatMul(s, x, w, false, false), b);
  Output loss = ops::Sum(s.WithOpName("loss"), ops::SparseSoftmaxCrossEntropyWithLogits(s, logits, labels)[0]);
  std::vector<Output> grads = Gradients(s, {loss}, {w, b});
  Output lr = ops::Const(s.WithOpName("lr"), Tensor::Scalar<float>(0.1f));
  ops::ApplyGradientDescent(s.WithOpName("update_w").WithDevice("/device:CPU:0"), w, lr, grads[0]);
  ops::ApplyGradientDescent(s.WithOpName("update_b"), b, lr, grads[1]);
  return SerializeGraph(g);
}

// Convolution, pooling and the array ops whose attrs size memory and loops.
std::string ConvAndArrays() {
  Graph g;
  Scope s = Scope::Root(&g);
  Output x = ops::Placeholder(s.WithOpName("image"), DType::kFloat32, {-1, 8, 8, 2});
  Output f = ops::Const(s.WithOpName("filter"), Tensor::Zeros(DType::kFloat32, {3, 3, 2, 4}));
  Output c = ops::Relu(s, ops::Conv2D(s, x, f, {1, 1}, "SAME", {2, 2}));
  Output p = ops::MaxPool(s, c, {2, 2}, {2, 2}, "VALID");
  Output a = ops::AvgPool(s, p, {2, 2}, {1, 1}, "SAME");
  std::vector<Output> parts = ops::Split(s, a, 3, 2);
  Output joined = ops::Concat(s, {parts[1], parts[0]}, 3);
  Output t = ops::Transpose(s, joined, {0, 3, 1, 2});
  Output sl = ops::Slice(s, t, {0, 0, 0, 0}, {-1, 2, 2, 2});
  Output tiled = ops::Tile(s, sl, {1, 2, 1, 1});
  Output padded = ops::Pad(s, tiled, {0, 0, 1, 1, 0, 0, 2, 2});
  Output flat = ops::Reshape(s.WithOpName("flat"), padded, {-1, 48});
  Output ids = ops::Const(s, Tensor::FromVector<int32_t>({0, 2, 1}));
  ops::OneHot(s.WithOpName("onehot"), ids, 5);
  ops::Gather(s.WithOpName("gathered"), flat, ids, 1);
  return SerializeGraph(g);
}

// A constant of every dtype, casts, and a control edge.
std::string Constants() {
  Graph g;
  Scope s = Scope::Root(&g);
  Output f64 = ops::Const(s.WithOpName("f64"), Tensor::FromVector<double>({1.5, -2, 1e300}));
  Output i64 = ops::Const(s.WithOpName("i64"), Tensor::FromVector<int64_t>({1, -1, INT64_MAX}));
  Output u8 = ops::Const(s.WithOpName("u8"), Tensor::FromVector<uint8_t>({0, 255}));
  Tensor flags(DType::kBool, TensorShape({2}));
  flags.data<bool>()[0] = true;
  flags.data<bool>()[1] = false;
  Output b = ops::Const(s.WithOpName("b"), flags);
  Output e = ops::Const(s.WithOpName("empty"), Tensor(DType::kFloat32, TensorShape({0, 3})));
  Output sum = ops::Add(s, ops::Cast(s, i64, DType::kFloat64), f64);
  ops::Identity(s.WithOpName("after").WithControlDependencies(std::vector<Output>{u8, b, e}), sum);
  ops::Fill(s.WithOpName("filled"), ops::Const(s, Tensor::FromVector<int32_t>({2, 3})),
            ops::Const(s, Tensor::Scalar<float>(1)));
  return SerializeGraph(g);
}

std::vector<std::string> Seeds() { return {Mlp(), ConvAndArrays(), Constants()}; }

void Decode(std::string_view in) {
  static ThreadPool pool(1, "fuzz");
  static VarStore vars;
  std::unique_ptr<Graph> g = ParseGraph(in, "fuzz");
  DeviceContext device;
  device.intra_op = &pool;
  device.vars = &vars;
  Executor::Create(std::move(g), device, &pool);
}

// The last 4 bytes are the zlib CRC-32 of everything before them.
void Fixup(std::string& in) {
  if (in.size() < 4) return;
  const uint32_t crc = static_cast<uint32_t>(crc32(0L, reinterpret_cast<const Bytef*>(in.data()),
                                                   static_cast<uInt>(in.size() - 4)));
  std::memcpy(in.data() + in.size() - 4, &crc, 4);
}

}  // namespace

WEFT_FUZZ_TARGET(graph, {.seeds = Seeds, .decode = Decode, .fixup = Fixup});

}  // namespace weft::fuzz
