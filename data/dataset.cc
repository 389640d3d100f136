#include "data/dataset.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <limits>
#include <type_traits>

#include "data/dataset_internal.h"

namespace weft::data {

namespace {

using internal::DatasetNode;
using internal::IndexStream;
using internal::SourceNode;
using internal::NodePtr;

// Stages that reorder, drop or repeat elements without looking inside them are written once over
// Item = int64_t (row indices, the fast path) and Item = Element.
template <typename Item> struct StreamFor { using type = Iterator; };
template <> struct StreamFor<int64_t> { using type = IndexStream; };
template <typename Item> using Stream = typename StreamFor<Item>::type;

template <typename Item> std::unique_ptr<Stream<Item>> Open(const DatasetNode& node) {
  if constexpr (std::is_same_v<Item, int64_t>) {
    return node.MakeIndexStream();
  } else {
    return node.MakeIterator();
  }
}

// SplitMix64: small, fast and fully specified, so a seed gives the same order on every platform.
class Rng {
 public:
  Rng(uint64_t seed, uint64_t stream) : state_(Mix(seed ^ Mix(stream + 0x632BE59BD9B4E019ull))) {}
  uint64_t Next() { return Mix(state_ += 0x9E3779B97F4A7C15ull); }
  // Uniform in [0, n) (multiply-shift; the bias for n << 2^64 is negligible).
  uint64_t Uniform(uint64_t n) { return static_cast<uint64_t>((static_cast<unsigned __int128>(Next()) * n) >> 64); }

 private:
  static uint64_t Mix(uint64_t z) {
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  uint64_t state_;
};

}  // namespace

namespace internal {

std::unique_ptr<Iterator> SourceNode::MakeIterator() const {
  return std::make_unique<RowIterator>(this, MakeIndexStream());
}

}  // namespace internal

namespace {

// A stage that works on row indices when its upstream has a row source, else on elements.
class PassThroughNode : public DatasetNode {
 public:
  using DatasetNode::DatasetNode;
  const SourceNode* RowSource() const override { return upstream_->RowSource(); }
  std::unique_ptr<IndexStream> MakeIndexStream() const override { return RowSource() ? MakeIndices() : nullptr; }
  std::unique_ptr<Iterator> MakeIterator() const override {
    if (const SourceNode* s = RowSource()) return std::make_unique<internal::RowIterator>(s, MakeIndices());
    return MakeElements();
  }

 protected:
  virtual std::unique_ptr<IndexStream> MakeIndices() const = 0;
  virtual std::unique_ptr<Iterator> MakeElements() const = 0;
};

// tf.data's shuffle buffer: keep `capacity` items, emit a uniformly chosen one and refill its slot.
// With an unbounded capacity this draws a uniform permutation of the whole stream.
template <typename Item>
class ShuffleStream : public Stream<Item> {
 public:
  ShuffleStream(std::unique_ptr<Stream<Item>> up, size_t capacity, Rng rng)
      : up_(std::move(up)), capacity_(capacity), rng_(rng) {}
  bool Next(Item* out) override {
    while (!exhausted_ && buffer_.size() < capacity_) {
      Item item;
      if (!up_->Next(&item)) {
        exhausted_ = true;
        break;
      }
      buffer_.push_back(std::move(item));
    }
    if (buffer_.empty()) return false;
    const size_t j = rng_.Uniform(buffer_.size());
    *out = std::move(buffer_[j]);
    if (j + 1 != buffer_.size()) buffer_[j] = std::move(buffer_.back());
    buffer_.pop_back();
    return true;
  }

 private:
  std::unique_ptr<Stream<Item>> up_;
  size_t capacity_;
  Rng rng_;
  bool exhausted_ = false;
  std::vector<Item> buffer_;
};

class ShuffleNode : public PassThroughNode {
 public:
  ShuffleNode(NodePtr up, uint64_t seed, int64_t buffer_size, bool reshuffle)
      : PassThroughNode(std::move(up)), seed_(seed), buffer_size_(buffer_size), reshuffle_(reshuffle) {}
  int64_t Cardinality() const override { return upstream_->Cardinality(); }
  std::string Describe() const override {
    return fmt::format("Shuffle(seed={}{}{})", seed_, buffer_size_ < 0 ? "" : fmt::format(", buffer={}", buffer_size_),
                       reshuffle_ ? "" : ", same order each epoch");
  }

 protected:
  std::unique_ptr<IndexStream> MakeIndices() const override { return Make<int64_t>(); }
  std::unique_ptr<Iterator> MakeElements() const override { return Make<Element>(); }

 private:
  template <typename Item> std::unique_ptr<Stream<Item>> Make() const {
    const uint64_t epoch = reshuffle_ ? epochs_.fetch_add(1, std::memory_order_relaxed) : 0;
    const size_t capacity = buffer_size_ < 0 ? std::numeric_limits<size_t>::max() : static_cast<size_t>(buffer_size_);
    return std::make_unique<ShuffleStream<Item>>(Open<Item>(*upstream_), capacity, Rng(seed_, epoch));
  }
  uint64_t seed_;
  int64_t buffer_size_;
  bool reshuffle_;
  mutable std::atomic<uint64_t> epochs_{0};  // iterators made so far: epoch k's order is f(seed, k)
};

template <typename Item>
class RepeatStream : public Stream<Item> {
 public:
  RepeatStream(NodePtr up, int64_t count) : up_(std::move(up)), count_(count) {}
  bool Next(Item* out) override {
    while (!done_) {
      if (!current_) {
        if (count_ >= 0 && passes_ >= count_) break;
        current_ = Open<Item>(*up_);
        ++passes_;
        pass_empty_ = true;
      }
      if (current_->Next(out)) {
        pass_empty_ = false;
        return true;
      }
      current_.reset();
      if (pass_empty_) break;  // an empty upstream repeated forever is still empty: stop, do not spin
    }
    done_ = true;
    return false;
  }

 private:
  NodePtr up_;
  int64_t count_;
  int64_t passes_ = 0;
  bool pass_empty_ = true, done_ = false;
  std::unique_ptr<Stream<Item>> current_;
};

class RepeatNode : public PassThroughNode {
 public:
  RepeatNode(NodePtr up, int64_t count) : PassThroughNode(std::move(up)), count_(count) {}
  int64_t Cardinality() const override {
    const int64_t c = upstream_->Cardinality();
    if (count_ == 0 || c == 0) return 0;
    if (c < 0) return c;
    if (count_ < 0) return kInfiniteCardinality;
    return c > std::numeric_limits<int64_t>::max() / count_ ? kInfiniteCardinality : c * count_;
  }
  std::string Describe() const override { return count_ < 0 ? "Repeat(forever)" : fmt::format("Repeat({})", count_); }

 protected:
  std::unique_ptr<IndexStream> MakeIndices() const override {
    return std::make_unique<RepeatStream<int64_t>>(upstream_, count_);
  }
  std::unique_ptr<Iterator> MakeElements() const override {
    return std::make_unique<RepeatStream<Element>>(upstream_, count_);
  }

 private:
  int64_t count_;
};

template <typename Item>
class ShardStream : public Stream<Item> {
 public:
  ShardStream(std::unique_ptr<Stream<Item>> up, int64_t num_shards, int64_t index)
      : up_(std::move(up)), num_shards_(num_shards), index_(index) {}
  bool Next(Item* out) override {
    for (;;) {
      if (!up_->Next(out)) return false;
      if (position_++ % num_shards_ == index_) return true;
    }
  }

 private:
  std::unique_ptr<Stream<Item>> up_;
  int64_t num_shards_, index_, position_ = 0;
};

class ShardNode : public PassThroughNode {
 public:
  ShardNode(NodePtr up, int64_t num_shards, int64_t index)
      : PassThroughNode(std::move(up)), num_shards_(num_shards), index_(index) {}
  int64_t Cardinality() const override {
    const int64_t c = upstream_->Cardinality();
    if (c < 0) return c;
    return c > index_ ? (c - index_ - 1) / num_shards_ + 1 : 0;
  }
  std::string Describe() const override { return fmt::format("Shard({} of {})", index_, num_shards_); }

 protected:
  std::unique_ptr<IndexStream> MakeIndices() const override {
    return std::make_unique<ShardStream<int64_t>>(upstream_->MakeIndexStream(), num_shards_, index_);
  }
  std::unique_ptr<Iterator> MakeElements() const override {
    return std::make_unique<ShardStream<Element>>(upstream_->MakeIterator(), num_shards_, index_);
  }

 private:
  int64_t num_shards_, index_;
};

template <typename Item>
class TakeStream : public Stream<Item> {
 public:
  TakeStream(std::unique_ptr<Stream<Item>> up, int64_t n) : up_(std::move(up)), left_(n) {}
  bool Next(Item* out) override {
    if (left_ == 0) return false;
    if (!up_->Next(out)) {
      left_ = 0;
      return false;
    }
    if (left_ > 0) --left_;
    return true;
  }

 private:
  std::unique_ptr<Stream<Item>> up_;
  int64_t left_;  // -1: unlimited
};

class TakeNode : public PassThroughNode {
 public:
  TakeNode(NodePtr up, int64_t n) : PassThroughNode(std::move(up)), n_(n) {}
  int64_t Cardinality() const override {
    const int64_t c = upstream_->Cardinality();
    if (n_ < 0) return c;
    if (c == kInfiniteCardinality) return n_;
    if (c == kUnknownCardinality) return n_ == 0 ? 0 : kUnknownCardinality;
    return std::min(c, n_);
  }
  std::string Describe() const override { return n_ < 0 ? "Take(all)" : fmt::format("Take({})", n_); }

 protected:
  std::unique_ptr<IndexStream> MakeIndices() const override {
    return std::make_unique<TakeStream<int64_t>>(upstream_->MakeIndexStream(), n_);
  }
  std::unique_ptr<Iterator> MakeElements() const override {
    return std::make_unique<TakeStream<Element>>(upstream_->MakeIterator(), n_);
  }

 private:
  int64_t n_;
};

template <typename Item>
class SkipStream : public Stream<Item> {
 public:
  SkipStream(std::unique_ptr<Stream<Item>> up, int64_t n) : up_(std::move(up)), n_(n) {}
  bool Next(Item* out) override {
    for (; n_ != 0; n_ = n_ > 0 ? n_ - 1 : n_) {
      if (!up_->Next(out)) return false;  // n_ == -1 skips everything
    }
    return up_->Next(out);
  }

 private:
  std::unique_ptr<Stream<Item>> up_;
  int64_t n_;  // still to skip; -1: all
};

class SkipNode : public PassThroughNode {
 public:
  SkipNode(NodePtr up, int64_t n) : PassThroughNode(std::move(up)), n_(n) {}
  int64_t Cardinality() const override {
    const int64_t c = upstream_->Cardinality();
    if (n_ < 0) return c == kUnknownCardinality ? c : 0;
    if (c < 0) return c;
    return std::max<int64_t>(0, c - n_);
  }
  std::string Describe() const override { return n_ < 0 ? "Skip(all)" : fmt::format("Skip({})", n_); }

 protected:
  std::unique_ptr<IndexStream> MakeIndices() const override {
    return std::make_unique<SkipStream<int64_t>>(upstream_->MakeIndexStream(), n_);
  }
  std::unique_ptr<Iterator> MakeElements() const override {
    return std::make_unique<SkipStream<Element>>(upstream_->MakeIterator(), n_);
  }

 private:
  int64_t n_;
};

}  // namespace

const internal::DatasetNode& Dataset::node(const char* what) const {
  if (!node_) {
    throw Error(errors::FailedPrecondition(
        "Dataset::{}: this Dataset is empty (default-constructed); start from Dataset::FromTensors", what));
  }
  return *node_;
}

Dataset Dataset::FromTensors(std::vector<Tensor> components) {
  return Dataset(std::make_shared<internal::SourceNode>(std::move(components)));
}

Dataset Dataset::Shuffle(uint64_t seed, int64_t buffer_size, bool reshuffle_each_iteration) const {
  const int64_t c = node("Shuffle").Cardinality();
  WEFT_REQUIRE(buffer_size == -1 || buffer_size >= 1,
               "Dataset::Shuffle: buffer_size must be >= 1 or -1 (the whole stream), got {}", buffer_size);
  WEFT_REQUIRE(!(buffer_size == -1 && c == kInfiniteCardinality),
               "Dataset::Shuffle: buffer_size -1 (the whole stream) on an infinite stream ({}); shuffle before Repeat "
               "or give a buffer size", node_->DebugString());
  return Dataset(std::make_shared<ShuffleNode>(node_, seed, buffer_size, reshuffle_each_iteration));
}

Dataset Dataset::Batch(int64_t batch_size, bool drop_remainder) const {
  node("Batch");
  WEFT_REQUIRE(batch_size >= 1, "Dataset::Batch: batch_size must be >= 1, got {}", batch_size);
  return Dataset(internal::NewBatchNode(node_, batch_size, drop_remainder));
}

Dataset Dataset::PaddedBatch(int64_t batch_size, std::vector<std::vector<int64_t>> padded_shapes,
                             std::vector<Tensor> padding_values, bool drop_remainder) const {
  node("PaddedBatch");
  WEFT_REQUIRE(batch_size >= 1, "Dataset::PaddedBatch: batch_size must be >= 1, got {}", batch_size);
  WEFT_REQUIRE(padded_shapes.size() == padding_values.size(), "Dataset::PaddedBatch: {} padded shapes but {} padding "
               "values", padded_shapes.size(), padding_values.size());
  for (size_t c = 0; c < padding_values.size(); ++c) {
    WEFT_REQUIRE(padding_values[c].IsInitialized() && padding_values[c].rank() == 0, "Dataset::PaddedBatch: the "
                 "padding value of component {} must be a scalar, got {}", c, padding_values[c].DebugString());
    for (int64_t d : padded_shapes[c]) {
      WEFT_REQUIRE(d >= -1, "Dataset::PaddedBatch: component {}'s padded shape has dim {} (dims are >= 0, or -1 for "
                   "the batch's largest)", c, d);
    }
  }
  return Dataset(internal::NewPaddedBatchNode(
      node_, internal::PaddedBatchSpec{batch_size, std::move(padded_shapes), std::move(padding_values),
                                       drop_remainder}));
}

Dataset Dataset::Repeat(int64_t count) const {
  node("Repeat");
  WEFT_REQUIRE(count >= -1, "Dataset::Repeat: count must be >= 0 or -1 (forever), got {}", count);
  return Dataset(std::make_shared<RepeatNode>(node_, count));
}

Dataset Dataset::Shard(int64_t num_shards, int64_t index) const {
  node("Shard");
  WEFT_REQUIRE(num_shards >= 1, "Dataset::Shard: num_shards must be >= 1, got {}", num_shards);
  WEFT_REQUIRE(index >= 0 && index < num_shards, "Dataset::Shard: index must be in [0, {}), got {}", num_shards,
               index);
  return Dataset(std::make_shared<ShardNode>(node_, num_shards, index));
}

Dataset Dataset::Map(MapFn fn, int num_parallel_calls) const {
  node("Map");
  WEFT_REQUIRE(static_cast<bool>(fn), "Dataset::Map: the function is empty");
  WEFT_REQUIRE(num_parallel_calls >= 1, "Dataset::Map: num_parallel_calls must be >= 1, got {}", num_parallel_calls);
  return Dataset(internal::NewMapNode(node_, std::move(fn), num_parallel_calls));
}

Dataset Dataset::Filter(PredicateFn pred) const {
  node("Filter");
  WEFT_REQUIRE(static_cast<bool>(pred), "Dataset::Filter: the predicate is empty");
  return Dataset(internal::NewFilterNode(node_, std::move(pred)));
}

Dataset Dataset::Skip(int64_t n) const {
  node("Skip");
  WEFT_REQUIRE(n >= -1, "Dataset::Skip: n must be >= 0 or -1 (all), got {}", n);
  return Dataset(std::make_shared<SkipNode>(node_, n));
}

Dataset Dataset::Cache() const {
  node("Cache");
  return Dataset(internal::NewCacheNode(node_));
}

Dataset Dataset::Unbatch(int64_t known_batch) const {
  node("Unbatch");
  return Dataset(internal::NewUnbatchNode(node_, known_batch));
}

Dataset Dataset::FromIterators(std::function<std::unique_ptr<Iterator>()> make, int64_t cardinality) {
  WEFT_REQUIRE(static_cast<bool>(make), "Dataset::FromIterators: the function is empty");
  WEFT_REQUIRE(cardinality >= 0 || cardinality == kUnknownCardinality || cardinality == kInfiniteCardinality,
               "Dataset::FromIterators: cardinality must be >= 0, kUnknownCardinality or kInfiniteCardinality, got {}",
               cardinality);
  return Dataset(internal::NewIteratorsNode(std::move(make), cardinality));
}

Dataset Dataset::Concatenate(const Dataset& other) const {
  node("Concatenate");
  other.node("Concatenate");
  return Dataset(internal::NewConcatenateNode(node_, other.node_));
}

Dataset Dataset::Range(int64_t start, int64_t stop, int64_t step, DType dtype) {
  WEFT_REQUIRE(step != 0, "Dataset::Range: step must not be 0");
  return Dataset(internal::NewRangeNode(start, stop, step, dtype));
}

Dataset Dataset::Zip(const std::vector<Dataset>& datasets) {
  WEFT_REQUIRE(!datasets.empty(), "Dataset::Zip: needs at least one dataset");
  std::vector<NodePtr> nodes;
  for (const Dataset& d : datasets) {
    d.node("Zip");
    nodes.push_back(d.node_);
  }
  return Dataset(internal::NewZipNode(std::move(nodes)));
}

Dataset Dataset::Take(int64_t n) const {
  node("Take");
  WEFT_REQUIRE(n >= -1, "Dataset::Take: n must be >= 0 or -1 (all), got {}", n);
  return Dataset(std::make_shared<TakeNode>(node_, n));
}

Dataset Dataset::Prefetch(int64_t buffer_size) const {
  node("Prefetch");
  WEFT_REQUIRE(buffer_size >= 1, "Dataset::Prefetch: buffer_size must be >= 1, got {}", buffer_size);
  return Dataset(internal::NewPrefetchNode(node_, buffer_size));
}

int64_t Dataset::Cardinality() const { return node("Cardinality").Cardinality(); }

std::string Dataset::DebugString() const { return node_ ? node_->DebugString() : "<empty Dataset>"; }

std::unique_ptr<Iterator> Dataset::MakeIterator() const {
  // The iterator refers to its nodes by raw pointer; keep them alive as long as it lives.
  class Holder : public Iterator {
   public:
    explicit Holder(NodePtr node) : node_(std::move(node)), it_(node_->MakeIterator()) {}
    bool Next(Element* out) override { return it_->Next(out); }

   private:
    NodePtr node_;
    std::unique_ptr<Iterator> it_;
  };
  node("MakeIterator");
  return std::make_unique<Holder>(node_);
}

}  // namespace weft::data
