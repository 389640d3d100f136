// Kernels: the code that runs an op on a device, registered per (op, device type, dtype).
// CPU kernels live in ops/kernels/cpu/<family>.cc and are written with Eigen:
//
//   template <typename T>
//   class ReluOp : public OpKernel {
//    public:
//     using OpKernel::OpKernel;
//     void Compute(OpKernelContext* ctx) override {
//       const Tensor& x = ctx->input(0);
//       Tensor* y = ctx->allocate_output(0, x.shape());
//       y->flat<T>().device(ctx->eigen_device()) = x.flat<T>().cwiseMax(T(0));
//     }
//   };
//   RegisterTyped<ReluOp, float, double>(r, "Relu");       // one line per op, over a type list
//
// Kernels report bad input by throwing Error (WEFT_REQUIRE); the executor adds the node's name
// and op and aborts the step. A kernel object is created once per compiled graph and must be
// re-entrant: Compute may run concurrently for different steps.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/cancellation.h"
#include "core/gpu.h"
#include "core/threadpool.h"
#include "graph/graph.h"

namespace weft {

class Rendezvous;  // runtime/rendezvous.h (the partitioner's Send/Recv use it)
class CollectiveContext;  // runtime/collectives/context.h (the collective kernels use it)
class GpuContext;  // core/cuda/gpu_context.h (CUDA builds)

// A variable's storage (state ops read and update it in place, under `mu`).
struct Var {
  std::mutex mu;
  Tensor value;  // uninitialized until the first Assign
};

// The variables of one session (or device), by name. Thread-safe.
class VarStore {
 public:
  Var* LookupOrCreate(const std::string& name);
  Var* Find(const std::string& name) const;
  std::vector<std::string> Names() const;

 private:
  mutable std::mutex mu_;
  std::map<std::string, std::unique_ptr<Var>> vars_;
};

// Arguments and results of one step of a compiled graph: `_Arg` nodes read args, `_Retval`
// nodes write rets.
struct CallFrame {
  std::vector<Tensor> args;
  std::vector<Tensor> rets;
};

// Everything a kernel may use while it runs; owned by the executor, valid until `done`.
struct DeviceContext {
  std::string device_type = "CPU";
  std::string device_name = "/job:localhost/replica:0/task:0/device:CPU:0";
  ThreadPool* intra_op = nullptr;  // not owned; Eigen device for tensor expressions
  Allocator* allocator = CpuAllocator();
  VarStore* vars = nullptr;  // not owned
  GpuContext* gpu = nullptr;  // not owned; the GPU's streams and handles when device_type is "GPU"
  GpuOptions gpu_options;     // the session's (SessionOptions::gpu): TF32, determinism
};

class OpKernelContext {
 public:
  OpKernelContext(const Node& node, const DeviceContext& device, std::vector<Tensor> inputs, int64_t step_id,
                  CallFrame* frame, Rendezvous* rendezvous, CancellationManager* cancellation,
                  CollectiveContext* collectives = nullptr);

  const Node& node() const { return node_; }
  int num_inputs() const { return static_cast<int>(inputs_.size()); }
  const Tensor& input(int i) const { return inputs_.at(i); }
  // For a ref input (declared with RefInput): the variable it refers to.
  Var* var(int i) const;

  // Allocates output i with the node's output dtype.
  Tensor* allocate_output(int i, TensorShape shape);
  // Sets output i (its dtype must equal the node's output dtype).
  void set_output(int i, Tensor t);
  std::vector<Tensor>& outputs() { return outputs_; }

  const Eigen::ThreadPoolDevice& eigen_device() const { return device_.intra_op->eigen_device(); }
  ThreadPool* intra_op_pool() const { return device_.intra_op; }
  const DeviceContext& device() const { return device_; }
  Allocator* allocator() const { return device_.allocator; }
  int64_t step_id() const { return step_id_; }
  CallFrame* call_frame() const { return frame_; }
  Rendezvous* rendezvous() const { return rendezvous_; }
  CancellationManager* cancellation() const { return cancellation_; }
  // The step's collective context (ExecutorArgs::collectives); null when the step has none.
  CollectiveContext* collectives() const { return collectives_; }
  // The while-loop frame instance and iteration the node runs in (0, 0 outside loops): the
  // frame:iter part of a _Send/_Recv's rendezvous key, so each iteration's pair meets.
  int64_t frame_id() const { return frame_id_; }
  int64_t iter_id() const { return iter_id_; }
  void set_frame_iter(int64_t frame_id, int64_t iter_id) {
    frame_id_ = frame_id;
    iter_id_ = iter_id;
  }
  // Set only for ops that run on dead inputs (_Send, which sends the deadness on): an input is
  // dead (a cond branch not taken) and unset. Kernels that leave an output unset to make it
  // dead (_Recv of a dead value, Switch) are listed in graph/executor.cc.
  bool input_dead() const { return input_dead_; }
  void set_input_dead(bool dead) { input_dead_ = dead; }

 private:
  const Node& node_;
  const DeviceContext& device_;
  std::vector<Tensor> inputs_;
  std::vector<Tensor> outputs_;
  int64_t step_id_;
  CallFrame* frame_;
  Rendezvous* rendezvous_;
  CancellationManager* cancellation_;
  CollectiveContext* collectives_;
  int64_t frame_id_ = 0, iter_id_ = 0;
  bool input_dead_ = false;
};

class OpKernel {
 public:
  explicit OpKernel(const Node& node) : node_(node) {}
  virtual ~OpKernel() = default;
  virtual void Compute(OpKernelContext* ctx) = 0;
  virtual bool is_async() const { return false; }
  const Node& node() const { return node_; }

 private:
  const Node& node_;  // owned by the compiled graph, which outlives the kernel
};

// Kernels that wait on something outside the thread (Recv, collectives): ComputeAsync returns
// at once and calls `done` exactly once, with the error if there was one.
class AsyncOpKernel : public OpKernel {
 public:
  using OpKernel::OpKernel;
  using DoneCallback = std::function<void(Status)>;
  virtual void ComputeAsync(OpKernelContext* ctx, DoneCallback done) = 0;
  void Compute(OpKernelContext* ctx) final;  // runs ComputeAsync and waits
  bool is_async() const final { return true; }
};

using KernelFactory = std::function<std::unique_ptr<OpKernel>(const Node& node)>;

class KernelRegistry {
 public:
  static KernelRegistry& Global();  // every built-in kernel, registered on first call
  // Registers a kernel for `op` on `device_type`, used when the node's attr `type_attr` equals
  // `dtype` (dtype kInvalid: any node of that op).
  void Register(std::string op, std::string device_type, std::string type_attr, DType dtype, KernelFactory f);
  // Throws NotFound naming the node, its dtype and the kernels that exist for the op.
  std::unique_ptr<OpKernel> Create(const Node& node, std::string_view device_type) const;
  bool HasKernel(const Node& node, std::string_view device_type) const;
  // "CPU: float32, float64; GPU: float32" for error messages.
  std::string KernelsFor(std::string_view op) const;

 private:
  struct Entry {
    std::string device_type, type_attr;
    DType dtype;
    KernelFactory factory;
  };
  const Entry* Find(const Node& node, std::string_view device_type) const;
  std::map<std::string, std::vector<Entry>, std::less<>> kernels_;
};

// Registers K<T> for each T in Ts, selected by the node's attr `type_attr`.
template <template <typename> class K, typename... Ts>
void RegisterTyped(KernelRegistry& r, const std::string& op, const std::string& type_attr = "T",
                   const std::string& device = "CPU") {
  (r.Register(op, device, type_attr, DTypeOf<Ts>(),
              [](const Node& n) -> std::unique_ptr<OpKernel> { return std::make_unique<K<Ts>>(n); }),
   ...);
}

// Registers K for every dtype of `op` on `device`.
template <typename K>
void RegisterUntyped(KernelRegistry& r, const std::string& op, const std::string& device = "CPU") {
  r.Register(op, device, "", DType::kInvalid,
             [](const Node& n) -> std::unique_ptr<OpKernel> { return std::make_unique<K>(n); });
}

}  // namespace weft
