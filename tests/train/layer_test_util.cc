#include "tests/train/layer_test_util.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "graph/gradients.h"
#include "graph/session.h"
#include "ops/framework.h"
#include "ops/math.h"
#include "tests/ops/op_test_util.h"

namespace weft::test::layers {

using namespace weft::train;

std::string ShapeOf(const Sym& s) { return s->shape.ToString(); }

Tensor Apply(const LayerPtr& layer, const std::vector<Tensor>& xs, const std::vector<Tensor>& weights, bool training) {
  std::vector<Sym> syms;
  for (const Tensor& x : xs) {
    std::vector<int64_t> dims;
    for (int i = 1; i < x.shape().rank(); ++i) dims.push_back(x.shape().dim(i));
    syms.push_back(Input(TensorShape(dims)));
  }
  (*layer)(syms);  // builds the layer, as a model does
  Graph g;
  Scope s = Scope::Root(&g);
  CallContext ctx{s.NewSubScope("layer"), training, {}, nullptr};
  for (const Tensor& w : weights) ctx.weights.push_back(ops::Const(s, w));
  if (weights.empty()) {
    for (const Weight& w : layer->weights()) ctx.weights.push_back(w.init.Build(s, w.shape));
  }
  std::vector<Output> in;
  for (const Tensor& x : xs) in.push_back(ops::Const(s, x));
  Output y = layer->Call(ctx, in);
  Session sess(&g);
  return sess.Run({}, {y})[0];
}

void CheckLayerGradient(const LayerPtr& layer, const Tensor& x, const std::vector<Tensor>& weights) {
  CheckLayerGradientN(layer, {x}, weights);
}

void CheckLayerGradientN(const LayerPtr& layer, const std::vector<Tensor>& xs, const std::vector<Tensor>& weights) {
  std::vector<Sym> syms;
  for (const Tensor& x : xs) {
    std::vector<int64_t> dims;
    for (int i = 1; i < x.shape().rank(); ++i) dims.push_back(x.shape().dim(i));
    syms.push_back(Input(TensorShape(dims)));
  }
  (*layer)(syms);
  std::vector<Tensor> values = xs;
  values.insert(values.end(), weights.begin(), weights.end());
  const size_t n = xs.size();
  Graph g;
  Scope s = Scope::Root(&g);
  std::vector<Output> phs;
  for (const Tensor& v : values) phs.push_back(ops::Placeholder(s, DType::kFloat64, v.shape()));
  CallContext ctx{s.NewSubScope("layer"), false, {phs.begin() + n, phs.end()}, nullptr};
  Output y = layer->Call(ctx, {phs.begin(), phs.begin() + n});
  std::vector<int64_t> y_dims = y.shape().dims();
  y_dims[0] = xs[0].shape().dim(0);  // a layer that reshapes to (-1, ...) leaves the batch dim unknown
  Output r = ops::Const(s, Rand(y_dims, -1, 1, 5));
  Output loss = ops::Sum(s, ops::Mul(s, y, r));
  std::vector<Output> grads = Gradients(s, {loss}, phs);
  Session sess(&g);
  auto feeds = [&](const std::vector<Tensor>& vs) {
    std::vector<std::pair<Output, Tensor>> f;
    for (size_t i = 0; i < vs.size(); ++i) f.emplace_back(phs[i], vs[i]);
    return f;
  };
  std::vector<Tensor> symbolic = sess.Run(feeds(values), grads);
  const double delta = 1e-6;
  for (size_t k = 0; k < values.size(); ++k) {
    for (int64_t i = 0; i < values[k].num_elements(); ++i) {
      std::vector<Tensor> plus = values, minus = values;
      plus[k] = values[k].Clone();
      minus[k] = values[k].Clone();
      plus[k].data<double>()[i] += delta;
      minus[k].data<double>()[i] -= delta;
      const double numeric = (sess.Run(feeds(plus), {loss})[0].data<double>()[0] -
                              sess.Run(feeds(minus), {loss})[0].data<double>()[0]) / (2 * delta);
      INFO(layer->type() << " input " << k << " element " << i);
      CHECK(symbolic[k].data<double>()[i] == doctest::Approx(numeric).epsilon(1e-5));
    }
  }
}

std::vector<std::vector<double>> Lists(const std::string& json, const std::string& key) {
  std::vector<std::vector<double>> lists;
  const std::string tag = "\"" + key + "\": [";
  for (size_t at = json.find(tag); at != std::string::npos; at = json.find(tag, at + 1)) {
    std::istringstream in(json.substr(at + tag.size(), json.find(']', at) - at - tag.size()));
    std::vector<double> v;
    std::string item;
    while (std::getline(in, item, ',')) v.push_back(std::stod(item));
    lists.push_back(v);
  }
  return lists;
}

std::string SourceDir() {
  if (const char* dir = std::getenv("WEFT_SOURCE_DIR")) return dir;
  return (std::filesystem::canonical("/proc/self/exe").parent_path().parent_path().parent_path()).string();
}

std::string ReadGolden(const std::string& name) {
  const std::string path = SourceDir() + "/tests/train/golden/" + name;
  std::ifstream f(path);
  INFO("golden data: " << path);
  CHECK(f.good());
  return std::string((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
}

}  // namespace weft::test::layers
