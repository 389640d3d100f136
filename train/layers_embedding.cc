// Keras' Embedding: integer ids -> rows of a learned (input_dim, output_dim) table.
//
// Ids come as int32 / int64 (an integer Input) or float32 (cast to int32 before the lookup); they
// must be whole numbers in [0, input_dim). With mask_zero the layer's output carries Keras' mask. The lookup is a Gather,
// whose kernel checks every id before reading (InvalidArgument naming the position, the id and
// the range [0, input_dim), no out-of-bounds read). Its gradient is GatherGrad: a dense
// (input_dim, output_dim) tensor with the batch's rows scattered in, which the optimizers apply
// like any dense gradient (bench/README.md, "Embedding gradient", has its measured cost).
#include "ops/array.h"
#include "ops/framework.h"
#include "ops/math.h"
#include "train/layer.h"

namespace weft::train {
namespace {

class EmbeddingLayer : public Layer {
 public:
  EmbeddingLayer(int64_t input_dim, int64_t output_dim, EmbeddingOptions o)
      : Layer("Embedding"), input_dim_(input_dim), output_dim_(output_dim), o_(std::move(o)) {
    WEFT_REQUIRE(input_dim > 0 && output_dim > 0,
                 "Embedding: input_dim and output_dim must be positive, got input_dim {} and output_dim {}", input_dim,
                 output_dim);
  }
  bool takes_integers() const override { return true; }
  // mask_zero: Keras' mask, 1 where the id is not 0 (float32, the ids' shape).
  std::vector<Output> OutputMasks(CallContext& ctx, const std::vector<Output>& in,
                                  const std::vector<Output>& out) const override {
    if (!o_.mask_zero) return {Output()};
    const Scope s = ctx.scope.NewSubScope("mask");
    return {ops::Cast(s, ops::NotEqual(s, in[0], ops::ScalarLike(s, in[0].dtype(), 0.0)), DType::kFloat32)};
  }
  void Build(const std::vector<TensorShape>& in) override {
    WEFT_REQUIRE(in[0].rank() >= 1, "{}: expects ids of shape (batch, ...), got {}", Describe(), in[0].ToString());
    AddWeight("embeddings", {input_dim_, output_dim_}, o_.embeddings_initializer, true, o_.embeddings_l2,
              o_.embeddings_l1, o_.embeddings_constraint);
  }
  // (batch, ...) ids -> (batch, ..., output_dim).
  Output Call(CallContext& ctx, const std::vector<Output>& in) const override {
    Output ids = in[0].dtype() == DType::kInt32 || in[0].dtype() == DType::kInt64
                     ? in[0]
                     : ops::Cast(ctx.scope, in[0], DType::kInt32);
    return ops::Gather(ctx.scope, ctx.weights[0], ids);
  }

 private:
  int64_t input_dim_, output_dim_;
  EmbeddingOptions o_;
};

// Keras' Masking: a step (the last axis) whose values all equal mask_value is masked: its
// values become 0 and the mask (batch, steps) that later layers read is 0 there.
class MaskingLayer : public Layer {
 public:
  explicit MaskingLayer(double mask_value) : Layer("Masking"), value_(mask_value) {}
  Output Call(CallContext& ctx, const std::vector<Output>& in) const override {
    return ops::Mul(ctx.scope, in[0], ops::ExpandDims(ctx.scope, Kept(ctx.scope, in[0]), -1));
  }
  std::vector<Output> OutputMasks(CallContext& ctx, const std::vector<Output>& in,
                                  const std::vector<Output>&) const override {
    return {Kept(ctx.scope.NewSubScope("mask"), in[0])};
  }

 private:
  // 1 where any value of the step differs from mask_value: (batch, steps).
  Output Kept(const Scope& s, const Output& x) const {
    WEFT_REQUIRE(x.shape().rank() >= 3, "{}: expects (batch, steps, features), got {}", Describe(), x.shape().ToString());
    return ops::Max(s, ops::Cast(s, ops::NotEqual(s, x, ops::ScalarLike(s, x.dtype(), value_)), DType::kFloat32), {-1});
  }
  double value_;
};

// keras_hub's PositionEmbedding: the first T rows of a learned (sequence_length, D) table, broadcast
// to the input's (batch, T, D) shape (the model adds it to the token embeddings). T longer than
// the table is an error when the layer is called, never a wraparound.
class PositionEmbeddingLayer : public Layer {
 public:
  PositionEmbeddingLayer(int64_t sequence_length, Initializer init)
      : Layer("PositionEmbedding"), length_(sequence_length), init_(init) {
    WEFT_REQUIRE(sequence_length > 0, "PositionEmbedding: sequence_length must be positive, got {}", sequence_length);
  }
  void Build(const std::vector<TensorShape>& in) override {
    const TensorShape& x = in[0];
    WEFT_REQUIRE(x.rank() == 3 && x.dim(1) > 0 && x.dim(2) > 0,
                 "{}: expects (batch, steps, features) with known steps and features, got {}", Describe(),
                 x.ToString());
    CheckLength(x.dim(1));
    AddWeight("embeddings", {length_, x.dim(2)}, init_);
  }
  Output Call(CallContext& ctx, const std::vector<Output>& in) const override {
    const TensorShape& x = in[0].shape();
    CheckLength(x.dim(1));
    const Output rows = x.dim(1) == length_ ? ctx.weights[0] : ops::Slice(ctx.scope, ctx.weights[0], {0, 0}, {x.dim(1), -1});
    return ops::BroadcastTo(ctx.scope, rows, ops::Shape(ctx.scope, in[0], DType::kInt64));
  }

 private:
  void CheckLength(int64_t steps) const {
    WEFT_REQUIRE(steps <= length_,
                 "{}: a sequence of {} steps is longer than the positional table ({} positions, sequence_length)",
                 Describe(), steps, length_);
  }
  int64_t length_;
  Initializer init_;
};

}  // namespace

LayerPtr PositionEmbedding(int64_t sequence_length, Initializer initializer) {
  return std::make_shared<PositionEmbeddingLayer>(sequence_length, initializer);
}

LayerPtr Masking(double mask_value) { return std::make_shared<MaskingLayer>(mask_value); }

LayerPtr Embedding(int64_t input_dim, int64_t output_dim, EmbeddingOptions options) {
  return std::make_shared<EmbeddingLayer>(input_dim, output_dim, std::move(options));
}

}  // namespace weft::train
