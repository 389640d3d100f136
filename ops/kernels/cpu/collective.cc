// The collective kernels (CollectiveReduce, CollectiveBroadcast, CollectiveAllGather,
// CollectiveReduceScatter): read the node's attrs once, then run one member's part of the
// algorithm (runtime/collectives/algorithms.h) over the step's rendezvous. Registered for the
// CPU and (CUDA builds) the GPU, where the algorithms merge with the device's Reducer.
#include <mutex>

#include "core/cancellation.h"
#include "core/checked.h"
#include "runtime/collectives/algorithms.h"
#include "runtime/rendezvous.h"
#include "graph/graph.h"
#include "ops/all_ops.h"
#include "ops/kernel.h"
#include "core/gpu_backend.h"

namespace weft {
namespace {

enum class Kind { kAllReduce, kBroadcast, kAllGather, kReduceScatter };

class CollectiveOp : public AsyncOpKernel {
 public:
  CollectiveOp(const Node& node, Kind kind) : AsyncOpKernel(node), kind_(kind) {
    CollectiveParams& p = params_;
    p.what = node.Describe();
    p.group_size = node.attr<int>("group_size");  // checked: a value beyond int is InvalidArgument
    p.rank = node.attr<int>("rank");
    p.group_key = node.attr<int64_t>("group_key");
    p.instance_key = node.attr<int64_t>("instance_key");
    WEFT_REQUIRE(p.group_size >= 1 && p.rank >= 0 && p.rank < p.group_size, "{}: rank {} outside a group of {}",
                 p.what, p.rank, p.group_size);
    const double timeout = node.attr<double>("timeout_seconds");
    WEFT_REQUIRE(timeout > 0 && timeout <= kMaxTimeoutSeconds, "{}: timeout_seconds must be in (0, {}], got {}",
                 p.what, kMaxTimeoutSeconds, timeout);
    p.timeout = std::chrono::milliseconds(static_cast<int64_t>(timeout * 1000));
    if (kind == Kind::kAllReduce || kind == Kind::kReduceScatter) {
      p.merge = ParseMergeOp(node.attr<std::string>("merge_op"), p.what);
      const std::string final_op = node.attr<std::string>("final_op");
      WEFT_REQUIRE(final_op == "Id" || final_op == "Div", "{}: final_op must be Id or Div, got '{}'", p.what, final_op);
      p.divide = final_op == "Div";
    }
    if (kind == Kind::kAllReduce) {
      p.algorithm = node.attr<std::string>("algorithm");
      p.chunk_bytes = node.attr<int64_t>("chunk_bytes");
      WEFT_REQUIRE(p.chunk_bytes > 0, "{}: chunk_bytes must be positive, got {}", p.what, p.chunk_bytes);
    }
    if (kind == Kind::kBroadcast) {
      p.source_rank = node.attr<int>("source_rank");
      WEFT_REQUIRE(p.source_rank >= 0 && p.source_rank < p.group_size, "{}: source_rank {} outside a group of {}",
                   p.what, p.source_rank, p.group_size);
    }
  }

  void ComputeAsync(OpKernelContext* ctx, DoneCallback done) override {
    Rendezvous* r = ctx->rendezvous();
    if (r == nullptr) {
      done(errors::FailedPrecondition("{}: no rendezvous in this step", params_.what));
      return;
    }
    const Tensor input = ctx->input(0);  // ctx may be gone once done is called
    try {
      std::call_once(devices_once_, [&] {
        params_.devices = ParseGroupDevices(node().attr<std::string>("group_devices"), params_.group_size,
                                            params_.rank, ctx->device().device_name, params_.what);
        params_.complete_on_pool = !AllInOneTask(params_.devices);
        // On a GPU the merges run as kernels on its compute stream (runtime/collectives/reduce.h),
        // from the CUDA backend, which is loaded wherever a GPU device exists.
        if (ctx->device().gpu != nullptr) params_.reducer = LoadGpuBackend()->new_reducer(ctx->device().gpu);
      });
      if (params_.group_size == 1) {
        WEFT_REQUIRE(kind_ != Kind::kAllGather || input.rank() >= 1,
                     "{}: AllGather needs inputs of rank >= 1 (it concatenates along dim 0), got a scalar",
                     params_.what);
        ctx->set_output(0, input);  // the reduction, broadcast, gather or scatter of one member
        done(Status());
        return;
      }
    } catch (const Error& e) {
      done(e.status());
      return;
    }
    // The step's owner (Session, Server) hands its context through the executor's arguments; it
    // outlives this collective (runtime/collectives/context.h).
    CollectiveContext* collectives = ctx->collectives();
    if (collectives == nullptr) {
      done(errors::FailedPrecondition("{}: no collective context in this step (ExecutorArgs::collectives)",
                                      params_.what));
      return;
    }
    // A cancelled step (Session::Cancel, another partition's failure) ends the collective at once.
    CancellationManager* cm = ctx->cancellation();
    auto token = std::make_shared<CancellationManager::Token>(-1);
    std::shared_ptr<Collective> c = Collective::Create(
        params_, collectives, r, [ctx, done, cm, token, collectives](const Status& s, const Tensor& out) {
          if (cm != nullptr && *token >= 0) cm->DeregisterCallback(*token);
          if (s.ok()) ctx->set_output(0, out);
          collectives->EndActive();  // before done: the context outlives the collective, not the step
          done(s);
        });
    collectives->BeginActive();  // Start holds the end (and EndActive) back until EndStart
    c->Start(input.dtype());  // holds the end back until EndStart, so `token` is set before done runs
    if (cm != nullptr) {
      *token = cm->RegisterCallback([weak = std::weak_ptr<Collective>(c)](const Status& why) {
        if (auto live = weak.lock()) live->Fail(why);
      });
    }
    try {
      params_.reducer->InputReady();  // other members and devices read it as soon as it is sent
      switch (kind_) {
        case Kind::kAllReduce: {
          const std::string algorithm = ChooseAllReduce(params_, static_cast<int64_t>(input.bytes()));
          if (algorithm == "shared") {
            SharedAllReduce(c, input);
          } else if (algorithm == "ring") {
            RingAllReduce(c, input);
          } else if (algorithm == "hierarchical") {
            HierarchicalAllReduce(c, input);
          } else {
            RecursiveDoublingAllReduce(c, input);
          }
          break;
        }
        case Kind::kBroadcast: Broadcast(c, input); break;
        case Kind::kAllGather: ChooseGather(params_) == "ring" ? RingAllGather(c, input) : AllGather(c, input); break;
        case Kind::kReduceScatter:
          ChooseGather(params_) == "ring" ? RingReduceScatter(c, input) : ReduceScatter(c, input);
          break;
      }
    } catch (const Error& e) {
      c->Fail(e.status());
    }
    c->EndStart();
  }

 private:
  Kind kind_;
  CollectiveParams params_;  // devices filled on the first run (they need the kernel's device)
  std::once_flag devices_once_;
};

template <Kind K>
class CollectiveKernel : public CollectiveOp {
 public:
  explicit CollectiveKernel(const Node& node) : CollectiveOp(node, K) {}
};

}  // namespace

void RegisterCollectiveKernels(KernelRegistry& r) {
  RegisterUntyped<CollectiveKernel<Kind::kAllReduce>>(r, "CollectiveReduce");
  RegisterUntyped<CollectiveKernel<Kind::kBroadcast>>(r, "CollectiveBroadcast");
  RegisterUntyped<CollectiveKernel<Kind::kAllGather>>(r, "CollectiveAllGather");
  RegisterUntyped<CollectiveKernel<Kind::kReduceScatter>>(r, "CollectiveReduceScatter");
#if WEFT_CUDA
  // The same kernels on a GPU: inputs, outputs and merges on the device.
  RegisterUntyped<CollectiveKernel<Kind::kAllReduce>>(r, "CollectiveReduce", "GPU");
  RegisterUntyped<CollectiveKernel<Kind::kBroadcast>>(r, "CollectiveBroadcast", "GPU");
  RegisterUntyped<CollectiveKernel<Kind::kAllGather>>(r, "CollectiveAllGather", "GPU");
  RegisterUntyped<CollectiveKernel<Kind::kReduceScatter>>(r, "CollectiveReduceScatter", "GPU");
#endif
}

}  // namespace weft
