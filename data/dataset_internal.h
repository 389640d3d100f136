// Internals of data/dataset.h shared by its .cc files: the stage interface and the in-memory
// row source behind the fast path. Not a public API.
#pragma once

#include <fmt/format.h>

#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "data/dataset.h"

namespace weft::data::internal {

// Row indices into the FromTensors source behind a stage, in stream order (the fast path).
class IndexStream {
 public:
  virtual ~IndexStream() = default;
  virtual bool Next(int64_t* index) = 0;
};

class SourceNode;

// One stage of a pipeline. Immutable after construction except for Shuffle's epoch counter.
class DatasetNode {
 public:
  explicit DatasetNode(std::shared_ptr<const DatasetNode> upstream = nullptr) : upstream_(std::move(upstream)) {}
  virtual ~DatasetNode() = default;

  virtual std::unique_ptr<Iterator> MakeIterator() const = 0;
  virtual int64_t Cardinality() const = 0;
  virtual std::string Describe() const = 0;  // this stage alone
  // The FromTensors source whose rows this stage's elements are, or nullptr; when non-null,
  // MakeIndexStream gives the row index of each element in order.
  virtual const SourceNode* RowSource() const { return nullptr; }
  virtual std::unique_ptr<IndexStream> MakeIndexStream() const { return nullptr; }

  std::string DebugString() const {
    return upstream_ ? upstream_->DebugString() + " -> " + Describe() : Describe();
  }

 protected:
  std::shared_ptr<const DatasetNode> upstream_;
};

using NodePtr = std::shared_ptr<const DatasetNode>;

// FromTensors: element i is row i of every component. Serves rows by index, one at a time or
// gathered into a batch.
class SourceNode : public DatasetNode {
 public:
  explicit SourceNode(std::vector<Tensor> components) : components_(std::move(components)) {
    WEFT_REQUIRE(!components_.empty(), "Dataset::FromTensors: needs at least one component tensor");
    std::string shapes;
    for (const Tensor& t : components_) shapes += (shapes.empty() ? "" : ", ") + t.DebugString();
    for (size_t c = 0; c < components_.size(); ++c) {
      const Tensor& t = components_[c];
      WEFT_REQUIRE(t.IsInitialized(), "Dataset::FromTensors: component {} is an uninitialized tensor", c);
      WEFT_REQUIRE(t.rank() >= 1, "Dataset::FromTensors: component {} is a scalar ({}); components are sliced "
                   "along dim 0 and need rank >= 1 (all: {})", c, t.DebugString(), shapes);
      WEFT_REQUIRE(t.dim(0) == components_[0].dim(0), "Dataset::FromTensors: components differ in dim 0: {}",
                   shapes);
      WEFT_REQUIRE(t.memory_kind() != MemoryKind::kDevice,
                   "Dataset::FromTensors: component {} ({}) is in device memory; pass host tensors", c,
                   t.DebugString());
      std::vector<int64_t> dims(t.shape().dims().begin() + 1, t.shape().dims().end());
      row_shapes_.emplace_back(dims);
      row_bytes_.push_back(static_cast<size_t>(row_shapes_.back().num_elements()) * DTypeSize(t.dtype()));
    }
    rows_ = components_[0].dim(0);
  }

  int64_t rows() const { return rows_; }

  // Copies rows idx[0..n) of every component into *out: as [n, ...] tensors when `batched`, else
  // (n == 1) as tensors of the row shape.
  void Gather(const int64_t* idx, int64_t n, bool batched, Element* out) const {
    out->resize(components_.size());
    for (size_t c = 0; c < components_.size(); ++c) {
      TensorShape shape = row_shapes_[c];
      if (batched) {
        std::vector<int64_t> dims{n};
        dims.insert(dims.end(), shape.dims().begin(), shape.dims().end());
        shape = TensorShape(std::move(dims));
      }
      Tensor t(components_[c].dtype(), std::move(shape));
      const size_t rb = row_bytes_[c];
      if (rb) {
        auto* dst = static_cast<char*>(t.raw_data());
        const auto* src = static_cast<const char*>(components_[c].raw_data());
        for (int64_t j = 0; j < n; ++j) std::memcpy(dst + j * rb, src + idx[j] * rb, rb);
      }
      (*out)[c] = std::move(t);
    }
  }

  std::unique_ptr<Iterator> MakeIterator() const override;
  int64_t Cardinality() const override { return rows_; }
  std::string Describe() const override { return fmt::format("FromTensors({})", rows_); }
  const SourceNode* RowSource() const override { return this; }
  std::unique_ptr<IndexStream> MakeIndexStream() const override {
    class Range : public IndexStream {
     public:
      explicit Range(int64_t n) : n_(n) {}
      bool Next(int64_t* index) override { return i_ < n_ ? (*index = i_++, true) : false; }

     private:
      int64_t i_ = 0, n_;
    };
    return std::make_unique<Range>(rows_);
  }

 private:
  std::vector<Tensor> components_;
  std::vector<TensorShape> row_shapes_;
  std::vector<size_t> row_bytes_;
  int64_t rows_ = 0;
};

// Elements of a row-index stream, one copied row at a time.
class RowIterator : public Iterator {
 public:
  RowIterator(const SourceNode* source, std::unique_ptr<IndexStream> indices)
      : source_(source), indices_(std::move(indices)) {}
  bool Next(Element* out) override {
    int64_t i;
    if (!indices_->Next(&i)) return false;
    source_->Gather(&i, 1, /*batched=*/false, out);
    return true;
  }

 private:
  const SourceNode* source_;  // not owned; Dataset::MakeIterator keeps the pipeline's nodes alive
  std::unique_ptr<IndexStream> indices_;
};

// Stages defined in dataset_stages.cc.
NodePtr NewBatchNode(NodePtr upstream, int64_t batch_size, bool drop_remainder);
NodePtr NewMapNode(NodePtr upstream, MapFn fn, int num_parallel_calls);
// PaddedBatch's arguments, checked by Dataset::PaddedBatch: one padded shape (-1: the batch's
// largest) and one scalar padding value per component.
struct PaddedBatchSpec {
  int64_t batch_size;
  std::vector<std::vector<int64_t>> padded_shapes;
  std::vector<Tensor> padding_values;
  bool drop_remainder;
};
NodePtr NewPaddedBatchNode(NodePtr upstream, PaddedBatchSpec spec);
NodePtr NewPrefetchNode(NodePtr upstream, int64_t buffer_size);
// Defined in dataset_more.cc.
NodePtr NewParallelMapNode(NodePtr upstream, MapFn fn, int num_parallel_calls);
NodePtr NewFilterNode(NodePtr upstream, PredicateFn pred);
NodePtr NewCacheNode(NodePtr upstream);
NodePtr NewUnbatchNode(NodePtr upstream, int64_t known_batch);
NodePtr NewRangeNode(int64_t start, int64_t stop, int64_t step, DType dtype);
NodePtr NewZipNode(std::vector<NodePtr> inputs);
NodePtr NewConcatenateNode(NodePtr first, NodePtr second);
NodePtr NewIteratorsNode(std::function<std::unique_ptr<Iterator>()> make, int64_t cardinality);

}  // namespace weft::data::internal
