// Dataset stages that look inside elements: Batch, Map, Prefetch.
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
NodePtr NewMapNode(NodePtr upstream, MapFn fn, int num_parallel_calls) {
  if (num_parallel_calls > 1) return NewParallelMapNode(std::move(upstream), std::move(fn), num_parallel_calls);
  return std::make_shared<MapNode>(std::move(upstream), std::move(fn));
}
NodePtr NewPrefetchNode(NodePtr upstream, int64_t buffer_size) {
  return std::make_shared<PrefetchNode>(std::move(upstream), buffer_size);
}

}  // namespace weft::data::internal
