#include <doctest/doctest.h>

#include <cstdio>
#include <fstream>

#include "graph/graph_io.h"
#include "graph/session.h"
#include "ops/framework.h"
#include "ops/math.h"

using namespace weft;

namespace {
std::unique_ptr<Graph> Sample() {
  auto g = std::make_unique<Graph>();
  g->set_seed(42);
  Scope s = Scope::Root(g.get());
  Output x = ops::Placeholder(s.WithOpName("x"), DType::kFloat32, {-1, 2});
  Output w = ops::Const(s.WithOpName("w"), Tensor::FromVector<float>({1, 2, 3, 4}, {2, 2}));
  Output y = ops::MatMul(s.WithOpName("y").WithDevice("/device:CPU:0"), x, w, false, true);
  ops::NoOp(s.WithOpName("after").WithControlDependencies({y}));
  return g;
}
}  // namespace

TEST_CASE("a graph survives serialization and runs the same") {
  auto g = Sample();
  auto h = ParseGraph(SerializeGraph(*g));
  CHECK(h->num_nodes() == g->num_nodes());
  CHECK(h->seed() == 42);
  Node* y = h->FindNode("y");
  REQUIRE(y != nullptr);
  CHECK(y->attr<bool>("transpose_b"));
  CHECK(y->requested_device() == "/device:CPU:0");
  CHECK(h->FindNode("after")->control_inputs()[0] == y);
  CHECK(SerializeGraph(*h) == SerializeGraph(*g));
  Tensor x = Tensor::FromVector<float>({1, 1}, {1, 2});
  Session a(g.get()), b(h.get());
  CHECK(a.Run({{g->FindOutput("x"), x}}, {g->FindOutput("y")})[0].ToVector<float>() ==
        b.Run({{h->FindOutput("x"), x}}, {h->FindOutput("y")})[0].ToVector<float>());
}

TEST_CASE("files save atomically and load back") {
  auto g = Sample();
  const std::string path = "graph_io_test.weftgraph";
  SaveGraph(*g, path);
  auto h = LoadGraph(path);
  CHECK(h->num_nodes() == g->num_nodes());
  std::remove(path.c_str());
  CHECK_THROWS_WITH_AS(LoadGraph("no/such/file"), doctest::Contains("graph file 'no/such/file': no such file"), Error);
}

TEST_CASE("damaged files are DataLoss errors") {
  const std::string bytes = SerializeGraph(*Sample());
  auto code_of = [](std::string_view b) {
    try {
      ParseGraph(b, "f");
    } catch (const Error& e) {
      return e.code();
    }
    return Code::kOk;
  };
  CHECK(code_of(bytes.substr(0, bytes.size() / 2)) == Code::kDataLoss);  // truncated
  CHECK(code_of(bytes.substr(0, 5)) == Code::kDataLoss);
  std::string flipped = bytes;
  flipped[bytes.size() / 2] ^= 0x5a;
  CHECK(code_of(flipped) == Code::kDataLoss);
  std::string magic = bytes;
  magic[0] = 'X';
  CHECK_THROWS_WITH_AS(ParseGraph(magic, "m.bin"), doctest::Contains("graph file 'm.bin': not a weft graph file"), Error);
  std::string version = bytes;
  version[8] = 9;
  CHECK_THROWS_WITH_AS(ParseGraph(version, "v.bin"), doctest::Contains("format version 9 is not supported"), Error);
}

TEST_CASE("DOT export draws nodes, data edges and dashed control edges") {
  const std::string dot = ToDot(*Sample());
  CHECK(dot.find("digraph weft") != std::string::npos);
  CHECK(dot.find("y\\nMatMul\\n/device:CPU:0") != std::string::npos);
  CHECK(dot.find("float32[?,2]") != std::string::npos);
  CHECK(dot.find("style=dashed") != std::string::npos);
}
