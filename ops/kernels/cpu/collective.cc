// CollectiveReduce on CPU, in one process: each member sends its input to every other member
// through the step's rendezvous and reduces all inputs in rank order (the same order on every
// member, so the results are bit-identical). Group sizes here are the devices of one process
// (2-8); the ring algorithms for large groups across processes are in distributed/.
#include <atomic>

#include "distributed/rendezvous.h"
#include "graph/graph.h"
#include "ops/all_ops.h"
#include "ops/kernel.h"

namespace weft {
namespace {

std::string CollectiveKey(int64_t group, int64_t instance, int64_t from, int64_t to) {
  return fmt::format("collective;{};{};{};{}", group, instance, from, to);
}

class CollectiveReduceOp : public AsyncOpKernel {
 public:
  explicit CollectiveReduceOp(const Node& node)
      : AsyncOpKernel(node), size_(node.attr<int64_t>("group_size")), group_(node.attr<int64_t>("group_key")),
        instance_(node.attr<int64_t>("instance_key")), rank_(node.attr<int64_t>("rank")),
        merge_(node.attr<std::string>("merge_op")), final_(node.attr<std::string>("final_op")) {
    WEFT_REQUIRE(size_ >= 1 && rank_ >= 0 && rank_ < size_, "{}: rank {} outside a group of {}", node.Describe(),
                 rank_, size_);
    WEFT_REQUIRE(merge_ == "Add" || merge_ == "Max" || merge_ == "Min", "{}: merge_op must be Add, Max or Min, got {}",
                 node.Describe(), merge_);
    WEFT_REQUIRE(final_ == "Id" || final_ == "Div", "{}: final_op must be Id or Div, got {}", node.Describe(), final_);
  }

  void ComputeAsync(OpKernelContext* ctx, DoneCallback done) override {
    Rendezvous* r = ctx->rendezvous();
    if (r == nullptr) {
      done(errors::FailedPrecondition("{}: no rendezvous in this step", ctx->node().Describe()));
      return;
    }
    const Tensor& mine = ctx->input(0);
    for (int64_t to = 0; to < size_; ++to) {
      if (to == rank_) continue;
      Status s = r->Send(CollectiveKey(group_, instance_, rank_, to), {}, mine, false);
      if (!s.ok()) {
        done(s);
        return;
      }
    }
    // Gather everyone's input, then reduce in rank order on the last arrival's thread.
    struct State {
      std::vector<Tensor> inputs;
      std::atomic<int64_t> pending;
      std::mutex mu;
      Status status;
    };
    auto state = std::make_shared<State>();
    state->inputs.resize(static_cast<size_t>(size_));
    state->inputs[static_cast<size_t>(rank_)] = mine;
    state->pending = size_ - 1;
    auto finish = [this, ctx, state, done]() {
      if (!state->status.ok()) {
        done(state->status);
        return;
      }
      try {
        ctx->set_output(0, Reduce(state->inputs, ctx));
        done(Status());
      } catch (const Error& e) {
        done(e.status());
      }
    };
    if (size_ == 1) {
      finish();
      return;
    }
    for (int64_t from = 0; from < size_; ++from) {
      if (from == rank_) continue;
      r->RecvAsync(CollectiveKey(group_, instance_, from, rank_), {},
                   [state, from, finish, describe = ctx->node().Describe(), shape = mine.shape(), dt = mine.dtype()](
                       const Status& s, const Tensor& t, bool) {
                     {
                       std::lock_guard<std::mutex> l(state->mu);
                       if (!s.ok()) {
                         if (state->status.ok()) state->status = s;
                       } else if (t.dtype() != dt || t.shape() != shape) {
                         if (state->status.ok()) {
                           state->status = errors::InvalidArgument("{}: member {} sent {} but this member has {}{}",
                                                                   describe, from, t.DebugString(), DTypeName(dt),
                                                                   shape.ToString());
                         }
                       } else {
                         state->inputs[static_cast<size_t>(from)] = t;
                       }
                     }
                     if (--state->pending == 0) finish();
                   });
    }
  }

 private:
  Tensor Reduce(const std::vector<Tensor>& in, OpKernelContext* ctx) const {
    Tensor out(in[0].dtype(), in[0].shape(), ctx->allocator());
    Dispatch<float, double, int32_t, int64_t>(in[0].dtype(), "CollectiveReduce", [&](auto tag) {
      using T = typename decltype(tag)::type;
      T* o = out.data<T>();
      const int64_t n = out.num_elements();
      std::memcpy(o, in[0].data<T>(), static_cast<size_t>(n) * sizeof(T));
      for (size_t k = 1; k < in.size(); ++k) {
        const T* x = in[k].data<T>();
        if (merge_ == "Add") {
          for (int64_t i = 0; i < n; ++i) o[i] += x[i];
        } else if (merge_ == "Max") {
          for (int64_t i = 0; i < n; ++i) o[i] = std::max(o[i], x[i]);
        } else {
          for (int64_t i = 0; i < n; ++i) o[i] = std::min(o[i], x[i]);
        }
      }
      if (final_ == "Div") {
        for (int64_t i = 0; i < n; ++i) o[i] = static_cast<T>(o[i] / static_cast<T>(size_));
      }
    });
    return out;
  }

  int64_t size_, group_, instance_, rank_;
  std::string merge_, final_;
};

}  // namespace

void RegisterCollectiveKernels(KernelRegistry& r) { RegisterUntyped<CollectiveReduceOp>(r, "CollectiveReduce"); }

}  // namespace weft
