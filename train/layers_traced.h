// Layers whose computation is a function traced into a graph of its own: Keras' custom layers
// (a Python class with `call`, subclassing keras.layers.Layer), TensorFlow ops applied to
// KerasTensors (TF-Keras' TFOpLambda) and Lambda. The traced graph's nodes are copied into the
// model's graph at each call, with the stand-ins of the inputs (Placeholders) and of the weights
// (Variable nodes that never run) replaced by the call's inputs and the layer's variables.
//
//   TraceRecorder rec("Linear");
//   rec.Begin(graph);                                  // one trace per pass
//   Output w = rec.OwnWeight(0, {"w", {4, 2}, RandomNormal()});
//   Output h = rec.Apply(dense, {x}, /*training=*/false);  // a sublayer: its weights are declared too
//   rec.Finish(/*training=*/false, {x}, h);
//   auto layer = std::make_shared<TracedLayer>("Linear");
//   layer->SetTraces(rec);                             // before its first call
//
// Thread-safety: as layers, built from one thread.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "graph/graph.h"
#include "train/layer.h"

namespace weft::train {

// One traced pass of a function: its graph, the stand-ins of the inputs and weights, and what
// it computes. `weight_vars[i]` stands in for `weights[i]` (invalid where this pass does not use it).
struct TracedCall {
  std::shared_ptr<Graph> graph;
  std::vector<Output> inputs;       // Placeholders, one per call input
  Output output;
  std::vector<Output> more_outputs;  // outputs 1, 2, ... of a call with several (an RNN cell's states)
  std::vector<Weight> weights;      // every weight the layer declares, in declaration order
  std::vector<Output> weight_vars;  // Variable stand-ins in `graph`
  std::vector<Output> losses;       // scalar terms for the loss (Keras' add_loss)
  std::vector<Output> updates;      // state updates: Assign* ops on the stand-ins
};

// Copies the nodes `roots` depend on into `s`, in topological order, with f.inputs[i] replaced by
// inputs[i] and f.weight_vars[i] by weights[i]; returns the copies of `roots`. A Placeholder or a
// Variable of the trace that is neither is InvalidArgument naming `what` and the node (a tensor
// made outside the function, a variable not declared as a weight).
std::vector<Output> CopyTraced(const Scope& s, const TracedCall& f, const std::vector<Output>& inputs,
                               const std::vector<Output>& weights, const std::vector<Output>& roots,
                               const std::string& what);

// Records the traces of one layer: the weights it declares (its own, and those of the layers it
// applies, each layer once, in order of first use) and one TracedCall per pass.
class TraceRecorder {
 public:
  explicit TraceRecorder(std::string what) : what_(std::move(what)) {}
  // Starts a pass tracing into `graph` (nodes added since are the pass's).
  void Begin(std::shared_ptr<Graph> graph);
  // The stand-in of the layer's own weight number `key` (Keras' add_weight, in creation order):
  // declared at the first pass, the same weight in later ones.
  Output OwnWeight(int64_t key, const Weight& weight);
  // `layer` applied to graph tensors of this pass: builds it on their shapes (its first call),
  // declares its weights as "<layer name>/<weight>" (unnamed layers get Keras' default name), and
  // adds its Call to the graph; its loss terms and state updates are recorded.
  Output Apply(const LayerPtr& layer, const std::vector<Output>& inputs, bool training);
  // The same, with every output of the call (an RNN cell's step: output, then the new states).
  std::vector<Output> ApplyOutputs(const LayerPtr& layer, const std::vector<Output>& inputs, bool training);
  void AddLoss(Output loss);
  void AddUpdate(Output update);
  // Ends the pass: `outputs` (float32; one, or several for a layer with several outputs) are
  // what the function returned for `inputs`. Every pass of a layer returns as many.
  void Finish(bool training, std::vector<Output> inputs, std::vector<Output> outputs);
  void Finish(bool training, std::vector<Output> inputs, Output output) {
    Finish(training, std::move(inputs), std::vector<Output>{std::move(output)});
  }
  bool has(bool training) const { return passes_.count(training) > 0; }
  // The pass, with every weight the layer declared in any pass.
  TracedCall pass(bool training) const;
  const std::string& what() const { return what_; }

 private:
  Output StandIn(size_t index);
  std::string what_;
  std::vector<Weight> weights_;
  std::map<std::string, size_t> own_, by_name_;  // "own:<key>" and "<layer>/<weight>" -> index
  std::map<const Layer*, std::string> layer_names_;
  std::shared_ptr<Graph> graph_;
  std::map<size_t, Output> vars_;  // this pass's stand-ins
  std::vector<Output> losses_, updates_;
  std::map<bool, TracedCall> passes_;
};

// A layer computing a traced function (custom layers, TF ops on KerasTensors): its weights are
// those the traces declare, created by the model; Call copies the pass that matches
// ctx.training. State updates run whenever the output is computed (in the training step and in
// inference, as a Keras call runs them), and loss terms go to ctx.losses.
class TracedLayer : public Layer {
 public:
  explicit TracedLayer(std::string type) : Layer(std::move(type)) {}
  // Takes the recorder's passes (both, or one used for both modes); before the first call.
  // `num_inputs`: what a call takes (-1: a list of two or more).
  void SetTraces(const TraceRecorder& rec, int num_inputs);
  bool traced() const { return traced_; }
  Output Call(CallContext& ctx, const std::vector<Output>& inputs) const override;
  std::vector<Output> CallOutputs(CallContext& ctx, const std::vector<Output>& inputs) const override;

 protected:
  void Build(const std::vector<TensorShape>& input_shapes) override;
  int num_inputs() const override { return num_inputs_; }

 private:
  bool traced_ = false;
  int num_inputs_ = 1;
  TracedCall inference_, training_;
};

}  // namespace weft::train
