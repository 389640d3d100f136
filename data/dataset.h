// Input pipelines in the style of tf.data: a Dataset is an immutable, cheap-to-copy description of
// a stream of elements; each element is a std::vector<Tensor> of components (e.g. {image, label}).
//
//   using weft::data::Dataset;
//   Dataset ds = Dataset::FromTensors({images, labels})     // float32[N,28,28,1], int32[N]
//                    .Shuffle(/*seed=*/42)                   // whole-set shuffle, new order per epoch
//                    .Batch(64)                              // {float32[64,28,28,1], int32[64]}
//                    .Prefetch(2);                           // a background thread stays 2 batches ahead
//   for (int epoch = 0; epoch < 3; ++epoch) {
//     auto it = ds.MakeIterator();                          // each iterator is a new epoch
//     std::vector<Tensor> batch;
//     while (it->Next(&batch)) { /* feed batch[0], batch[1] */ }
//   }
//
// Fast path: over FromTensors, the Shuffle, Shard, Take and Repeat stages pass row indices instead
// of tensors, and Batch copies the selected rows straight into the batch tensors (one memcpy per row
// and component), so a shuffled epoch costs no per-element allocations.
//
// Threading: a Dataset may be shared and iterated from any number of threads; an Iterator is for
// one thread at a time. Map functions may be called from a Prefetch thread.
// Errors: bad arguments throw InvalidArgument when the transformation is built; problems found
// while iterating (a Batch of unequal shapes, an exception from a Map function) surface from Next().
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/tensor.h"

namespace weft::data {

using Element = std::vector<Tensor>;
using MapFn = std::function<Element(Element)>;
using PredicateFn = std::function<bool(const Element&)>;

// Cardinality() values for streams without a known finite length.
inline constexpr int64_t kInfiniteCardinality = -1;
inline constexpr int64_t kUnknownCardinality = -2;

class Iterator {
 public:
  virtual ~Iterator() = default;
  // Stores the next element in *out and returns true, or returns false at the end of the stream
  // (and keeps returning false). Errors from upstream stages are thrown here.
  virtual bool Next(Element* out) = 0;
};

namespace internal {
class DatasetNode;
}

class Dataset {
 public:
  // An empty description; MakeIterator on it throws FailedPrecondition. Assign a real one.
  Dataset() = default;

  // Element i is {components[0][i], components[1][i], ...}. Every component needs rank >= 1 and the
  // same dim 0 (else InvalidArgument naming the shapes). The dataset shares the components' buffers
  // (no copy): do not write into them while the dataset is in use. Elements it yields are copies.
  static Dataset FromTensors(std::vector<Tensor> components);
  // Scalars start, start + step, ... up to (not including) stop, of `dtype` (a number type);
  // step != 0 (InvalidArgument). Computed lazily: Range(0, 1 << 40) costs nothing up front.
  static Dataset Range(int64_t start, int64_t stop, int64_t step = 1, DType dtype = DType::kInt64);
  // Elements from iterators that `make` returns, one per pass (e.g. over a user's generator).
  // `cardinality`: the elements each pass yields when the caller knows it (a keras Sequence's
  // len), else kUnknownCardinality. `make` and the iterators are called from the pipeline's threads.
  static Dataset FromIterators(std::function<std::unique_ptr<Iterator>()> make,
                               int64_t cardinality = kUnknownCardinality);
  // Element i is the components of element i of every dataset, in order; ends with the shortest.
  static Dataset Zip(const std::vector<Dataset>& datasets);

  // Random order from a buffer of `buffer_size` elements (-1: the whole stream, a uniform
  // permutation). Epoch k (the k-th iterator made from this stage) uses the order given by
  // (seed, k) when `reshuffle_each_iteration`, else the same order as epoch 0 every time.
  Dataset Shuffle(uint64_t seed, int64_t buffer_size = -1, bool reshuffle_each_iteration = true) const;
  // Stacks `batch_size` consecutive elements along a new dim 0. Each component must have the same
  // dtype and shape in every element of a batch. The last, smaller batch is kept unless
  // `drop_remainder`.
  Dataset Batch(int64_t batch_size, bool drop_remainder = false) const;
  // Batches `batch_size` consecutive elements, component c padded to `padded_shapes[c]` (a dim of -1:
  // the largest in the batch) with `padding_values[c]` (a scalar of the component's dtype): tf.data's
  // padded_batch. An element whose component has another rank or dtype, or a dim above a fixed padded
  // dim, is InvalidArgument from Next() naming the component, element and batch.
  Dataset PaddedBatch(int64_t batch_size, std::vector<std::vector<int64_t>> padded_shapes,
                      std::vector<Tensor> padding_values, bool drop_remainder = false) const;
  // The stream `count` times over (-1: forever). Each pass is a new epoch for upstream Shuffles.
  Dataset Repeat(int64_t count = -1) const;
  // This dataset's elements, then `other`'s (the components must agree in number; each element
  // is passed on as it is).
  Dataset Concatenate(const Dataset& other) const;
  // Elements index, index + num_shards, index + 2*num_shards, ... (REQUIRES 0 <= index < num_shards).
  Dataset Shard(int64_t num_shards, int64_t index) const;
  // Applies `fn` to every element. With num_parallel_calls > 1, that many threads call `fn` on
  // consecutive elements at once (so `fn` must be thread-safe); the output order stays the input
  // order (deterministic), and an exception surfaces at the element that raised it.
  Dataset Map(MapFn fn, int num_parallel_calls = 1) const;
  // The elements for which `pred` returns true.
  Dataset Filter(PredicateFn pred) const;
  // All but the first `n` elements (-1: skips everything).
  Dataset Skip(int64_t n) const;
  // The first complete pass stores the elements in memory; later passes replay them without
  // running the upstream stages again. A pass abandoned early stores nothing.
  Dataset Cache() const;
  // Each element's components (rank >= 1, equal dim 0) split along dim 0 into separate elements.
  // `known_batch`: the dim 0 every element has, when the caller knows it (for Cardinality).
  Dataset Unbatch(int64_t known_batch = -1) const;
  // At most the first `n` elements (-1: all).
  Dataset Take(int64_t n) const;
  // Runs the upstream stages on a background thread that keeps up to `buffer_size` (>= 1) elements
  // ready. Destroying the iterator stops and joins the thread; an exception thrown upstream is
  // rethrown from Next() after the elements produced before it.
  Dataset Prefetch(int64_t buffer_size) const;

  // Number of elements, kInfiniteCardinality (-1) or kUnknownCardinality (-2).
  int64_t Cardinality() const;
  // A new pass over the data (a new epoch for Shuffle stages).
  std::unique_ptr<Iterator> MakeIterator() const;
  // The stages, e.g. "FromTensors(60000) -> Shuffle(seed=1) -> Batch(64)".
  std::string DebugString() const;

 private:
  explicit Dataset(std::shared_ptr<const internal::DatasetNode> node) : node_(std::move(node)) {}
  const internal::DatasetNode& node(const char* what) const;
  std::shared_ptr<const internal::DatasetNode> node_;
};

}  // namespace weft::data
