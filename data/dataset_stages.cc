// Dataset stages that look inside elements: Batch, PaddedBatch, Map, Prefetch.
#include <algorithm>
#include <condition_variable>
#include <deque>
#include <exception>
#include <mutex>
#include <thread>

#include "data/dataset_internal.h"

namespace weft::data::internal {
namespace {

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

// PaddedBatch: collects batch_size elements and copies each component into a block of its padded
// shape (a -1 dim: the batch's largest) filled with the padding value.
class PaddedBatchIterator : public Iterator {
 public:
  PaddedBatchIterator(std::unique_ptr<Iterator> up, const PaddedBatchSpec* spec) : up_(std::move(up)), spec_(spec) {}
  bool Next(Element* out) override {
    items_.clear();
    Element e;
    while (static_cast<int64_t>(items_.size()) < spec_->batch_size && up_->Next(&e)) items_.push_back(std::move(e));
    const int64_t n = static_cast<int64_t>(items_.size());
    if (n == 0 || (spec_->drop_remainder && n < spec_->batch_size)) return false;
    const size_t nc = spec_->padded_shapes.size();
    out->resize(nc);
    for (size_t c = 0; c < nc; ++c) (*out)[c] = PadComponent(c, n);
    ++batches_;
    return true;
  }

 private:
  Tensor PadComponent(size_t c, int64_t n) const {
    const std::vector<int64_t>& padded = spec_->padded_shapes[c];
    const Tensor& pad = spec_->padding_values[c];
    std::vector<int64_t> target = padded;  // the batch's block shape, -1 dims resolved
    for (int64_t j = 0; j < n; ++j) {
      WEFT_REQUIRE(items_[j].size() == spec_->padded_shapes.size(), "Dataset::PaddedBatch: element {} of batch {} has "
                   "{} components but padded_shapes has {}", j, batches_, items_[j].size(),
                   spec_->padded_shapes.size());
      const Tensor& t = items_[j][c];
      WEFT_REQUIRE(t.IsInitialized() && t.dtype() == pad.dtype() && t.rank() == static_cast<int>(padded.size()),
                   "Dataset::PaddedBatch: component {} of element {} in batch {} is {}; its padded shape has rank {} "
                   "and its padding value is {}", c, j, batches_, t.DebugString(), padded.size(), pad.DebugString());
      for (size_t d = 0; d < padded.size(); ++d) {
        const int64_t dim = t.dim(static_cast<int>(d));
        if (padded[d] < 0) {
          target[d] = std::max(target[d], dim);
        } else {
          WEFT_REQUIRE(dim <= padded[d], "Dataset::PaddedBatch: Attempted to pad to a smaller size than the input "
                       "element: component {} of element {} in batch {} has shape {}, padded shape dim {} is {}", c, j,
                       batches_, t.shape().ToString(), d, padded[d]);
        }
      }
    }
    for (int64_t& d : target) d = std::max<int64_t>(d, 0);
    std::vector<int64_t> dims{n};
    dims.insert(dims.end(), target.begin(), target.end());
    Tensor out(pad.dtype(), TensorShape(std::move(dims)));
    const size_t item = DTypeSize(pad.dtype());
    char* base = static_cast<char*>(out.raw_data());
    const auto* value = static_cast<const char*>(pad.raw_data());
    if (std::all_of(value, value + item, [](char b) { return b == 0; })) {
      std::memset(base, 0, out.bytes());
    } else {
      for (int64_t k = 0; k < out.num_elements(); ++k) std::memcpy(base + k * item, value, item);
    }
    int64_t block = 1;  // elements per batch row
    for (int64_t d : target) block *= d;
    for (int64_t j = 0; j < n; ++j) CopyInto(items_[j][c], target, base + j * block * item, item);
    return out;
  }

  // Copies `t` into the row-major block of shape `target` (each dim >= t's) at `dst`, its last dim's
  // runs contiguous.
  static void CopyInto(const Tensor& t, const std::vector<int64_t>& target, char* dst, size_t item) {
    const int rank = t.rank();
    if (t.num_elements() == 0) return;
    if (rank == 0) {
      std::memcpy(dst, t.raw_data(), item);
      return;
    }
    const int64_t run = t.dim(rank - 1);
    const int64_t rows = t.num_elements() / run;
    std::vector<int64_t> at(static_cast<size_t>(rank - 1), 0);  // the index over t's outer dims
    const auto* src = static_cast<const char*>(t.raw_data());
    for (int64_t r = 0; r < rows; ++r) {
      int64_t offset = 0;
      for (int d = 0; d < rank - 1; ++d) offset = offset * target[static_cast<size_t>(d)] + at[static_cast<size_t>(d)];
      offset *= target[static_cast<size_t>(rank - 1)];
      std::memcpy(dst + offset * static_cast<int64_t>(item), src + r * run * static_cast<int64_t>(item),
                  static_cast<size_t>(run) * item);
      for (int d = rank - 2; d >= 0; --d) {  // the next outer index
        if (++at[static_cast<size_t>(d)] < t.dim(d)) break;
        at[static_cast<size_t>(d)] = 0;
      }
    }
  }

  std::unique_ptr<Iterator> up_;
  const PaddedBatchSpec* spec_;
  int64_t batches_ = 0;
  std::vector<Element> items_;
};

class PaddedBatchNode : public DatasetNode {
 public:
  PaddedBatchNode(NodePtr up, PaddedBatchSpec spec) : DatasetNode(std::move(up)), spec_(std::move(spec)) {}
  std::unique_ptr<Iterator> MakeIterator() const override {
    return std::make_unique<PaddedBatchIterator>(upstream_->MakeIterator(), &spec_);
  }
  int64_t Cardinality() const override {
    const int64_t c = upstream_->Cardinality();
    const int64_t b = spec_.batch_size;
    if (c < 0) return c;
    return spec_.drop_remainder ? c / b : (c + b - 1) / b;
  }
  std::string Describe() const override {
    return fmt::format("PaddedBatch({}{})", spec_.batch_size, spec_.drop_remainder ? ", drop_remainder" : "");
  }

 private:
  PaddedBatchSpec spec_;
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

NodePtr NewBatchNode(NodePtr upstream, int64_t batch_size, bool drop_remainder) {
  return std::make_shared<BatchNode>(std::move(upstream), batch_size, drop_remainder);
}
NodePtr NewPaddedBatchNode(NodePtr upstream, PaddedBatchSpec spec) {
  return std::make_shared<PaddedBatchNode>(std::move(upstream), std::move(spec));
}

NodePtr NewMapNode(NodePtr upstream, MapFn fn, int num_parallel_calls) {
  if (num_parallel_calls > 1) return NewParallelMapNode(std::move(upstream), std::move(fn), num_parallel_calls);
  return std::make_shared<MapNode>(std::move(upstream), std::move(fn));
}
NodePtr NewPrefetchNode(NodePtr upstream, int64_t buffer_size) {
  return std::make_shared<PrefetchNode>(std::move(upstream), buffer_size);
}

}  // namespace weft::data::internal
