#include "train/graph_function.h"

#include "graph/session.h"

namespace weft::train {
namespace {

// One graph and the Session that runs it; shared by every copy of the std::function.
class GraphFunction {
 public:
  GraphFunction(std::shared_ptr<Graph> graph, std::vector<Output> inputs, std::vector<Output> outputs)
      : graph_(std::move(graph)), inputs_(std::move(inputs)), outputs_(std::move(outputs)) {
    WEFT_REQUIRE(graph_ != nullptr, "Dataset function: the graph is null");
    SessionOptions o;
    // The pipeline supplies the parallelism (Prefetch, num_parallel_calls): one thread per call.
    o.inter_op_threads = 1;
    o.intra_op_threads = 1;
    o.use_gpus = false;  // input pipelines run on the host, as tf.data does
    session_ = std::make_unique<Session>(graph_.get(), o);
  }

  std::vector<Tensor> Call(const data::Element& e) const {
    WEFT_REQUIRE(e.size() == inputs_.size(), "Dataset function: the element has {} components but the function "
                 "takes {}", e.size(), inputs_.size());
    std::vector<std::pair<Output, Tensor>> feeds;
    feeds.reserve(e.size());
    for (size_t i = 0; i < e.size(); ++i) {
      const Output& in = inputs_[i];
      const Tensor& t = e[i];
      bool fits = t.dtype() == in.dtype() && (in.shape().unknown_rank() || in.shape().rank() == t.rank());
      for (int d = 0; fits && !in.shape().unknown_rank() && d < t.rank(); ++d) {
        fits = in.shape().dim(d) < 0 || in.shape().dim(d) == t.dim(d);
      }
      WEFT_REQUIRE(fits, "Dataset function: component {} is {} but the function's input {} is {} {}", i,
                   t.DebugString(), in.name(), DTypeName(in.dtype()), in.shape().ToString());
      feeds.emplace_back(in, t);
    }
    try {
      return session_->Run(feeds, outputs_);
    } catch (const Error& e) {
      throw Error(e.status().WithContext("in a Dataset map/filter function"));  // say which step failed
    }
  }

 private:
  std::shared_ptr<Graph> graph_;
  std::vector<Output> inputs_, outputs_;
  std::unique_ptr<Session> session_;  // after graph_: destroyed first
};

}  // namespace

data::MapFn GraphMapFn(std::shared_ptr<Graph> graph, std::vector<Output> inputs, std::vector<Output> outputs) {
  auto f = std::make_shared<GraphFunction>(std::move(graph), std::move(inputs), std::move(outputs));
  return [f](data::Element e) { return f->Call(e); };
}

data::PredicateFn GraphPredicate(std::shared_ptr<Graph> graph, std::vector<Output> inputs, Output output) {
  WEFT_REQUIRE(output.dtype() == DType::kBool && (output.shape().unknown_rank() || output.shape().rank() == 0),
               "Dataset.filter: the predicate must return a scalar bool, got {} {} ({})", DTypeName(output.dtype()),
               output.shape().ToString(), output.name());
  auto f = std::make_shared<GraphFunction>(std::move(graph), std::move(inputs), std::vector<Output>{output});
  return [f](const data::Element& e) { return f->Call(e)[0].scalar<bool>()(); };
}

}  // namespace weft::train
