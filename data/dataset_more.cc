// Dataset stages beyond the core set: Range, Zip and FromIterators sources, Concatenate, Filter, Cache, Unbatch and the
// parallel Map (tf.data's map(num_parallel_calls=...), deterministic order).
#include <algorithm>
#include <condition_variable>
#include <exception>
#include <map>
#include <mutex>
#include <thread>

#include "data/dataset_internal.h"

namespace weft::data::internal {
namespace {

class RangeNode : public DatasetNode {
 public:
  RangeNode(int64_t start, int64_t stop, int64_t step, DType dtype)
      : start_(start), stop_(stop), step_(step), dtype_(dtype) {
    Dispatch<WEFT_NUMBER_TYPES>(dtype_, "Dataset::Range", [](auto) {});  // a number type, else InvalidArgument
  }
  std::unique_ptr<Iterator> MakeIterator() const override {
    class It : public Iterator {
     public:
      explicit It(const RangeNode* n) : n_(n), next_(n->start_) {}
      bool Next(Element* out) override {
        if (n_->step_ > 0 ? next_ >= n_->stop_ : next_ <= n_->stop_) return false;
        Tensor t;
        Dispatch<WEFT_NUMBER_TYPES>(n_->dtype_, "Dataset::Range", [&](auto tag) {
          using T = typename decltype(tag)::type;
          t = Tensor::Scalar<T>(static_cast<T>(next_));
        });
        *out = {std::move(t)};
        next_ += n_->step_;
        return true;
      }

     private:
      const RangeNode* n_;
      int64_t next_;
    };
    return std::make_unique<It>(this);
  }
  int64_t Cardinality() const override {
    const int64_t span = step_ > 0 ? stop_ - start_ : start_ - stop_;
    const int64_t step = step_ > 0 ? step_ : -step_;
    return span <= 0 ? 0 : (span + step - 1) / step;
  }
  std::string Describe() const override {
    return fmt::format("Range({}, {}, {}, {})", start_, stop_, step_, DTypeName(dtype_));
  }

 private:
  int64_t start_, stop_, step_;
  DType dtype_;
};

class ZipNode : public DatasetNode {
 public:
  explicit ZipNode(std::vector<NodePtr> inputs) : inputs_(std::move(inputs)) {}
  std::unique_ptr<Iterator> MakeIterator() const override {
    class It : public Iterator {
     public:
      explicit It(std::vector<std::unique_ptr<Iterator>> its) : its_(std::move(its)) {}
      bool Next(Element* out) override {
        out->clear();
        Element part;
        for (auto& it : its_) {
          if (!it->Next(&part)) return false;
          for (Tensor& t : part) out->push_back(std::move(t));
        }
        return true;
      }

     private:
      std::vector<std::unique_ptr<Iterator>> its_;
    };
    std::vector<std::unique_ptr<Iterator>> its;
    for (const NodePtr& n : inputs_) its.push_back(n->MakeIterator());
    return std::make_unique<It>(std::move(its));
  }
  // tf.data's rule: the shortest finite input; unknown if any input is unknown; infinite if all are.
  int64_t Cardinality() const override {
    int64_t out = kInfiniteCardinality;
    for (const NodePtr& n : inputs_) {
      const int64_t c = n->Cardinality();
      if (c == kUnknownCardinality) return c;
      if (c >= 0) out = out < 0 ? c : std::min(out, c);
    }
    return out;
  }
  std::string Describe() const override {
    std::string s;
    for (const NodePtr& n : inputs_) s += (s.empty() ? "" : " | ") + n->DebugString();
    return "Zip(" + s + ")";
  }

 private:
  std::vector<NodePtr> inputs_;
};

class IteratorsNode : public DatasetNode {
 public:
  IteratorsNode(std::function<std::unique_ptr<Iterator>()> make, int64_t cardinality)
      : make_(std::move(make)), cardinality_(cardinality) {}
  std::unique_ptr<Iterator> MakeIterator() const override { return make_(); }
  int64_t Cardinality() const override { return cardinality_; }
  std::string Describe() const override { return "FromIterators"; }

 private:
  std::function<std::unique_ptr<Iterator>()> make_;
  int64_t cardinality_;
};

class ConcatenateNode : public DatasetNode {
 public:
  ConcatenateNode(NodePtr first, NodePtr second) : DatasetNode(std::move(first)), second_(std::move(second)) {}
  std::unique_ptr<Iterator> MakeIterator() const override {
    class It : public Iterator {
     public:
      It(std::unique_ptr<Iterator> first, const DatasetNode* second) : it_(std::move(first)), second_(second) {}
      bool Next(Element* out) override {
        if (it_->Next(out)) return true;
        if (second_ == nullptr) return false;
        it_ = second_->MakeIterator();  // made when reached: a second Shuffle's epoch starts then
        second_ = nullptr;
        return it_->Next(out);
      }

     private:
      std::unique_ptr<Iterator> it_;
      const DatasetNode* second_;  // not owned (the node holds it); null once started
    };
    return std::make_unique<It>(upstream_->MakeIterator(), second_.get());
  }
  // tf.data's rule: unknown or infinite if the first is, else if the second is, else the sum.
  int64_t Cardinality() const override {
    const int64_t a = upstream_->Cardinality();
    if (a < 0) return a;
    const int64_t b = second_->Cardinality();
    return b < 0 ? b : a + b;
  }
  std::string Describe() const override { return "Concatenate(" + second_->DebugString() + ")"; }

 private:
  NodePtr second_;
};

class FilterNode : public DatasetNode {
 public:
  FilterNode(NodePtr up, PredicateFn pred) : DatasetNode(std::move(up)), pred_(std::move(pred)) {}
  std::unique_ptr<Iterator> MakeIterator() const override {
    class It : public Iterator {
     public:
      It(std::unique_ptr<Iterator> up, const PredicateFn* pred) : up_(std::move(up)), pred_(pred) {}
      bool Next(Element* out) override {
        while (up_->Next(out)) {
          if ((*pred_)(*out)) return true;
        }
        return false;
      }

     private:
      std::unique_ptr<Iterator> up_;
      const PredicateFn* pred_;  // owned by the node, which outlives the iterator
    };
    return std::make_unique<It>(upstream_->MakeIterator(), &pred_);
  }
  int64_t Cardinality() const override {
    return upstream_->Cardinality() == 0 ? 0 : kUnknownCardinality;  // tf.data's answer, even for infinite input
  }
  std::string Describe() const override { return "Filter"; }

 private:
  PredicateFn pred_;
};

// Over a row source the elements already are in memory: Cache passes the rows through.
class CacheNode : public DatasetNode {
 public:
  using Elements = std::vector<Element>;
  explicit CacheNode(NodePtr up) : DatasetNode(std::move(up)) {}
  const SourceNode* RowSource() const override { return upstream_->RowSource(); }
  std::unique_ptr<IndexStream> MakeIndexStream() const override { return upstream_->MakeIndexStream(); }
  std::unique_ptr<Iterator> MakeIterator() const override {
    if (const SourceNode* s = RowSource()) return std::make_unique<RowIterator>(s, MakeIndexStream());
    std::shared_ptr<const Elements> cached;
    {
      std::lock_guard<std::mutex> l(mu_);
      cached = cached_;
    }
    if (cached) return std::make_unique<Replay>(std::move(cached));
    return std::make_unique<Fill>(this, upstream_->MakeIterator());
  }
  int64_t Cardinality() const override { return upstream_->Cardinality(); }
  std::string Describe() const override { return "Cache"; }

 private:
  class Replay : public Iterator {
   public:
    explicit Replay(std::shared_ptr<const Elements> e) : e_(std::move(e)) {}
    bool Next(Element* out) override { return i_ < e_->size() ? (*out = (*e_)[i_++], true) : false; }

   private:
    std::shared_ptr<const Elements> e_;
    size_t i_ = 0;
  };
  class Fill : public Iterator {
   public:
    Fill(const CacheNode* node, std::unique_ptr<Iterator> up) : node_(node), up_(std::move(up)) {}
    bool Next(Element* out) override {
      if (up_ == nullptr) return false;
      if (up_->Next(out)) {
        seen_.push_back(*out);  // tensors are values over shared buffers: no data copy
        return true;
      }
      up_.reset();
      std::lock_guard<std::mutex> l(node_->mu_);
      if (!node_->cached_) node_->cached_ = std::make_shared<const Elements>(std::move(seen_));
      return false;
    }

   private:
    const CacheNode* node_;
    std::unique_ptr<Iterator> up_;
    Elements seen_;
  };
  mutable std::mutex mu_;
  mutable std::shared_ptr<const Elements> cached_;  // set once, by the first complete pass
};

class UnbatchNode : public DatasetNode {
 public:
  UnbatchNode(NodePtr up, int64_t known_batch) : DatasetNode(std::move(up)), known_batch_(known_batch) {}
  std::unique_ptr<Iterator> MakeIterator() const override {
    class It : public Iterator {
     public:
      explicit It(std::unique_ptr<Iterator> up) : up_(std::move(up)) {}
      bool Next(Element* out) override {
        while (row_ >= rows_) {
          if (!up_->Next(&batch_)) return false;
          WEFT_REQUIRE(!batch_.empty(), "Dataset::Unbatch: an element has no components");
          for (const Tensor& t : batch_) {
            WEFT_REQUIRE(t.rank() >= 1 && t.dim(0) == batch_[0].dim(0) && batch_[0].rank() >= 1,
                         "Dataset::Unbatch: components must have rank >= 1 and the same dim 0; got {} and {}",
                         batch_[0].DebugString(), t.DebugString());
          }
          rows_ = batch_[0].dim(0);
          row_ = 0;
        }
        out->resize(batch_.size());
        for (size_t c = 0; c < batch_.size(); ++c) {
          const Tensor& t = batch_[c];
          TensorShape row_shape(std::vector<int64_t>(t.shape().dims().begin() + 1, t.shape().dims().end()));
          Tensor r(t.dtype(), row_shape);
          const size_t rb = r.bytes();
          if (rb) std::memcpy(r.raw_data(), static_cast<const char*>(t.raw_data()) + row_ * rb, rb);
          (*out)[c] = std::move(r);
        }
        ++row_;
        return true;
      }

     private:
      std::unique_ptr<Iterator> up_;
      Element batch_;
      int64_t row_ = 0, rows_ = 0;
    };
    return std::make_unique<It>(upstream_->MakeIterator());
  }
  int64_t Cardinality() const override {
    const int64_t c = upstream_->Cardinality();
    if (c == 0 || c == kInfiniteCardinality) return c;
    return c > 0 && known_batch_ >= 0 ? c * known_batch_ : kUnknownCardinality;
  }
  std::string Describe() const override { return "Unbatch"; }

 private:
  int64_t known_batch_;
};

// Workers take the next upstream element (one at a time, under the lock) with its sequence
// number, apply fn without the lock, and file the result; Next hands results out in sequence.
// At most `2 * threads` elements are in flight or waiting, so memory stays bounded.
class ParallelMapIterator : public Iterator {
 public:
  ParallelMapIterator(std::unique_ptr<Iterator> up, const MapFn* fn, int threads)
      : up_(std::move(up)), fn_(fn), window_(2 * static_cast<int64_t>(threads)) {
    for (int i = 0; i < threads; ++i) workers_.emplace_back([this] { Work(); });
  }
  ~ParallelMapIterator() override {
    {
      std::lock_guard<std::mutex> l(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    for (std::thread& t : workers_) t.join();
  }
  bool Next(Element* out) override {
    std::unique_lock<std::mutex> l(mu_);
    cv_.wait(l, [&] { return (end_ >= 0 && next_out_ >= end_) || done_.count(next_out_) > 0; });
    if (end_ >= 0 && next_out_ >= end_) return false;  // the end, or past an element that failed
    auto it = done_.find(next_out_);
    Result r = std::move(it->second);
    done_.erase(it);
    ++next_out_;
    cv_.notify_all();
    if (r.error) {
      end_ = next_out_;  // the stream ends at the element that failed
      std::rethrow_exception(r.error);
    }
    *out = std::move(r.element);
    return true;
  }

 private:
  struct Result {
    Element element;
    std::exception_ptr error;
  };
  void Work() {
    std::unique_lock<std::mutex> l(mu_);
    for (;;) {
      cv_.wait(l, [&] { return stop_ || end_ >= 0 || next_in_ - next_out_ < window_; });
      if (stop_ || end_ >= 0) return;
      Result r;
      const int64_t seq = next_in_;
      bool more = false;
      try {
        more = up_->Next(&r.element);
      } catch (...) {
        r.error = std::current_exception();
        more = true;
      }
      if (!more) {
        end_ = seq;
        cv_.notify_all();
        return;
      }
      ++next_in_;
      if (!r.error) {
        l.unlock();
        try {
          r.element = (*fn_)(std::move(r.element));
        } catch (...) {
          r.error = std::current_exception();
        }
        l.lock();
      }
      done_.emplace(seq, std::move(r));
      cv_.notify_all();
    }
  }

  std::unique_ptr<Iterator> up_;  // read under mu_
  const MapFn* fn_;
  const int64_t window_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::map<int64_t, Result> done_;
  int64_t next_in_ = 0, next_out_ = 0, end_ = -1;  // end_: sequence number past the last element
  bool stop_ = false;
  std::vector<std::thread> workers_;  // last: started after the members above exist
};

class ParallelMapNode : public DatasetNode {
 public:
  ParallelMapNode(NodePtr up, MapFn fn, int threads) : DatasetNode(std::move(up)), fn_(std::move(fn)), threads_(threads) {}
  std::unique_ptr<Iterator> MakeIterator() const override {
    return std::make_unique<ParallelMapIterator>(upstream_->MakeIterator(), &fn_, threads_);
  }
  int64_t Cardinality() const override { return upstream_->Cardinality(); }
  std::string Describe() const override { return fmt::format("Map(parallel={})", threads_); }

 private:
  MapFn fn_;
  int threads_;
};

}  // namespace

NodePtr NewParallelMapNode(NodePtr upstream, MapFn fn, int num_parallel_calls) {
  return std::make_shared<ParallelMapNode>(std::move(upstream), std::move(fn), num_parallel_calls);
}
NodePtr NewFilterNode(NodePtr upstream, PredicateFn pred) {
  return std::make_shared<FilterNode>(std::move(upstream), std::move(pred));
}
NodePtr NewCacheNode(NodePtr upstream) { return std::make_shared<CacheNode>(std::move(upstream)); }
NodePtr NewUnbatchNode(NodePtr upstream, int64_t known_batch) {
  return std::make_shared<UnbatchNode>(std::move(upstream), known_batch);
}
NodePtr NewRangeNode(int64_t start, int64_t stop, int64_t step, DType dtype) {
  return std::make_shared<RangeNode>(start, stop, step, dtype);
}
NodePtr NewZipNode(std::vector<NodePtr> inputs) { return std::make_shared<ZipNode>(std::move(inputs)); }
NodePtr NewIteratorsNode(std::function<std::unique_ptr<Iterator>()> make, int64_t cardinality) {
  return std::make_shared<IteratorsNode>(std::move(make), cardinality);
}
NodePtr NewConcatenateNode(NodePtr first, NodePtr second) {
  return std::make_shared<ConcatenateNode>(std::move(first), std::move(second));
}

}  // namespace weft::data::internal
