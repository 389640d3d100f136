#include "train/dataset.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <exception>
#include <limits>
#include <mutex>
#include <thread>
#include <type_traits>

namespace weft::train {
namespace internal {

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

}  // namespace internal

namespace {

using internal::DatasetNode;
using internal::IndexStream;
using internal::SourceNode;
using NodePtr = std::shared_ptr<const DatasetNode>;

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

// Batch over a row source: gathers the next batch_size indices' rows straight into the batch.
class GatherBatchIterator : public Iterator {
 public:
  GatherBatchIterator(const SourceNode* source, std::unique_ptr<IndexStream> indices, int64_t batch_size, bool drop)
      : source_(source), indices_(std::move(indices)), batch_size_(batch_size), drop_(drop) {
    idx_.reserve(static_cast<size_t>(std::min<int64_t>(batch_size, 1 << 20)));
  }
  bool Next(Element* out) override {
    idx_.clear();
    int64_t i;
    while (static_cast<int64_t>(idx_.size()) < batch_size_ && indices_->Next(&i)) idx_.push_back(i);
    if (idx_.empty() || (drop_ && static_cast<int64_t>(idx_.size()) < batch_size_)) return false;
    source_->Gather(idx_.data(), static_cast<int64_t>(idx_.size()), /*batched=*/true, out);
    return true;
  }

 private:
  const SourceNode* source_;
  std::unique_ptr<IndexStream> indices_;
  int64_t batch_size_;
  bool drop_;
  std::vector<int64_t> idx_;
};

// Batch over any elements: collects them, checks they agree, and stacks each component.
class StackBatchIterator : public Iterator {
 public:
  StackBatchIterator(std::unique_ptr<Iterator> up, int64_t batch_size, bool drop)
      : up_(std::move(up)), batch_size_(batch_size), drop_(drop) {}
  bool Next(Element* out) override {
    items_.clear();
    Element e;
    while (static_cast<int64_t>(items_.size()) < batch_size_ && up_->Next(&e)) items_.push_back(std::move(e));
    const int64_t n = static_cast<int64_t>(items_.size());
    if (n == 0 || (drop_ && n < batch_size_)) return false;
    const Element& first = items_[0];
    for (int64_t j = 1; j < n; ++j) {
      WEFT_REQUIRE(items_[j].size() == first.size(), "Dataset::Batch: element {} of batch {} has {} components but "
                   "element 0 has {}", j, batches_, items_[j].size(), first.size());
      for (size_t c = 0; c < first.size(); ++c) {
        const Tensor& t = items_[j][c];
        WEFT_REQUIRE(t.dtype() == first[c].dtype() && t.shape() == first[c].shape(),
                     "Dataset::Batch: component {} of element {} in batch {} is {} but element 0's is {}; batched "
                     "elements need equal dtypes and shapes", c, j, batches_, t.DebugString(),
                     first[c].DebugString());
      }
    }
    out->resize(first.size());
    for (size_t c = 0; c < first.size(); ++c) {
      WEFT_REQUIRE(first[c].IsInitialized(), "Dataset::Batch: component {} of batch {} is an uninitialized tensor", c,
                   batches_);
      std::vector<int64_t> dims{n};
      dims.insert(dims.end(), first[c].shape().dims().begin(), first[c].shape().dims().end());
      Tensor t(first[c].dtype(), TensorShape(std::move(dims)));
      const size_t rb = first[c].bytes();
      for (int64_t j = 0; j < n; ++j) {
        if (rb) std::memcpy(static_cast<char*>(t.raw_data()) + j * rb, items_[j][c].raw_data(), rb);
      }
      (*out)[c] = std::move(t);
    }
    ++batches_;
    return true;
  }

 private:
  std::unique_ptr<Iterator> up_;
  int64_t batch_size_;
  bool drop_;
  int64_t batches_ = 0;
  std::vector<Element> items_;
};

class BatchNode : public DatasetNode {
 public:
  BatchNode(NodePtr up, int64_t batch_size, bool drop)
      : DatasetNode(std::move(up)), batch_size_(batch_size), drop_(drop) {}
  std::unique_ptr<Iterator> MakeIterator() const override {
    if (const SourceNode* s = upstream_->RowSource()) {
      return std::make_unique<GatherBatchIterator>(s, upstream_->MakeIndexStream(), batch_size_, drop_);
    }
    return std::make_unique<StackBatchIterator>(upstream_->MakeIterator(), batch_size_, drop_);
  }
  int64_t Cardinality() const override {
    const int64_t c = upstream_->Cardinality();
    if (c < 0) return c;
    return drop_ ? c / batch_size_ : (c + batch_size_ - 1) / batch_size_;
  }
  std::string Describe() const override {
    return fmt::format("Batch({}{})", batch_size_, drop_ ? ", drop_remainder" : "");
  }

 private:
  int64_t batch_size_;
  bool drop_;
};

class MapNode : public DatasetNode {
 public:
  MapNode(NodePtr up, MapFn fn) : DatasetNode(std::move(up)), fn_(std::move(fn)) {}
  std::unique_ptr<Iterator> MakeIterator() const override {
    class It : public Iterator {
     public:
      It(std::unique_ptr<Iterator> up, const MapFn* fn) : up_(std::move(up)), fn_(fn) {}
      bool Next(Element* out) override {
        Element e;
        if (!up_->Next(&e)) return false;
        *out = (*fn_)(std::move(e));
        return true;
      }

     private:
      std::unique_ptr<Iterator> up_;
      const MapFn* fn_;
    };
    return std::make_unique<It>(upstream_->MakeIterator(), &fn_);
  }
  int64_t Cardinality() const override { return upstream_->Cardinality(); }
  std::string Describe() const override { return "Map"; }

 private:
  MapFn fn_;
};

// Runs the upstream iterator on its own thread, up to `capacity` elements ahead of the consumer.
class PrefetchIterator : public Iterator {
 public:
  PrefetchIterator(std::unique_ptr<Iterator> up, size_t capacity) : up_(std::move(up)), capacity_(capacity) {
    thread_ = std::thread([this] { Produce(); });
  }
  ~PrefetchIterator() override {
    {
      std::lock_guard<std::mutex> l(mu_);
      stop_ = true;
    }
    not_full_.notify_all();
    thread_.join();  // waits at most for the upstream Next() in progress
  }
  bool Next(Element* out) override {
    std::unique_lock<std::mutex> l(mu_);
    not_empty_.wait(l, [&] { return !queue_.empty() || finished_; });
    if (!queue_.empty()) {
      *out = std::move(queue_.front());
      queue_.pop_front();
      not_full_.notify_one();
      return true;
    }
    if (error_) std::rethrow_exception(std::exchange(error_, nullptr));  // once; then the stream has ended
    return false;
  }

 private:
  void Produce() {
    try {
      for (;;) {
        {
          std::unique_lock<std::mutex> l(mu_);
          not_full_.wait(l, [&] { return stop_ || queue_.size() < capacity_; });
          if (stop_) break;
        }
        Element e;
        const bool more = up_->Next(&e);
        std::lock_guard<std::mutex> l(mu_);
        if (!more) break;
        queue_.push_back(std::move(e));
        not_empty_.notify_one();
      }
    } catch (...) {
      std::lock_guard<std::mutex> l(mu_);
      error_ = std::current_exception();
    }
    std::lock_guard<std::mutex> l(mu_);
    finished_ = true;
    not_empty_.notify_all();
  }

  std::unique_ptr<Iterator> up_;  // used only by the producer thread
  const size_t capacity_;
  std::mutex mu_;
  std::condition_variable not_empty_, not_full_;
  std::deque<Element> queue_;
  bool stop_ = false, finished_ = false;
  std::exception_ptr error_;
  std::thread thread_;  // last: starts after the members above exist
};

class PrefetchNode : public DatasetNode {
 public:
  PrefetchNode(NodePtr up, int64_t buffer_size) : DatasetNode(std::move(up)), buffer_size_(buffer_size) {}
  std::unique_ptr<Iterator> MakeIterator() const override {
    return std::make_unique<PrefetchIterator>(upstream_->MakeIterator(), static_cast<size_t>(buffer_size_));
  }
  int64_t Cardinality() const override { return upstream_->Cardinality(); }
  std::string Describe() const override { return fmt::format("Prefetch({})", buffer_size_); }

 private:
  int64_t buffer_size_;
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
  return Dataset(std::make_shared<BatchNode>(node_, batch_size, drop_remainder));
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

Dataset Dataset::Map(MapFn fn) const {
  node("Map");
  WEFT_REQUIRE(static_cast<bool>(fn), "Dataset::Map: the function is empty");
  return Dataset(std::make_shared<MapNode>(node_, std::move(fn)));
}

Dataset Dataset::Take(int64_t n) const {
  node("Take");
  WEFT_REQUIRE(n >= -1, "Dataset::Take: n must be >= 0 or -1 (all), got {}", n);
  return Dataset(std::make_shared<TakeNode>(node_, n));
}

Dataset Dataset::Prefetch(int64_t buffer_size) const {
  node("Prefetch");
  WEFT_REQUIRE(buffer_size >= 1, "Dataset::Prefetch: buffer_size must be >= 1, got {}", buffer_size);
  return Dataset(std::make_shared<PrefetchNode>(node_, buffer_size));
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

}  // namespace weft::train
