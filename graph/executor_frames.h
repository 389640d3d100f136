// The executor's per-step state for graphs with while loops (internal to graph/executor.cc):
// frame instances, their live iterations, and where each finished node's outputs go.
//
// TensorFlow's rules (graph/control_flow.h): a node runs once per (frame instance, iteration)
// whose inputs all arrived. Enter hands its value to iteration 0 of a child frame instance (one
// per parent frame instance and iteration), or to every iteration when it is a loop invariant;
// NextIteration hands its value to the next iteration (a dead one ends the loop); Exit hands a
// live value to the parent frame, and when a frame instance ends, each Exit that gave no live
// value gives a dead one. At most parallel_iterations iterations of a frame instance are live;
// a value for the next one waits until the oldest ends. Merge fires on its first live input, or
// dead once its expected inputs all came dead (the Enter in iteration 0, the NextIteration
// afterwards; every input for a cond's Merge).
//
// Thread-safety: a FrameRunner serializes its bookkeeping under one mutex; kernels run outside it.
#pragma once

#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <tuple>
#include <vector>

#include "graph/control_flow.h"
#include "ops/kernel.h"
#include "runtime/trace_ring.h"

namespace weft::internal {

struct ExecItem {
  Node* node = nullptr;
  std::unique_ptr<OpKernel> kernel;
  int initial_pending = 0;
  bool cheap = false;
  std::vector<std::vector<std::pair<int, int>>> out_by_output;  // [output] -> (dst item, dst input)
  std::vector<int> control_out;                                 // dst items
  std::vector<bool> input_is_ref;
  bool may_output_dead = false;  // Switch, Merge, _Recv: an unset output is a dead one
  bool runs_dead = false;        // _Send: runs on a dead input, to send the deadness on
  bool is_merge = false;
  bool is_switch = false;
  bool is_retval = false;
  // What the always-on trace records of a run (runtime/trace_ring.h), made once: no formatting per step.
  TraceKind trace_kind = TraceKind::kKernel;
  int32_t trace_group = -1, trace_instance = -1;  // collectives
  std::string trace_detail;                       // Send/Recv: "from -> to tensor"; collectives: "rank r of n"
  // Whether the node's control edges carry deadness: when it was skipped, or (a _Recv, a Merge)
  // when its value is dead. A Switch that ran has live control edges whichever side it took.
  bool ControlDead(const std::vector<Tensor>& outputs, bool skipped) const {
    return skipped || (may_output_dead && !is_switch && !outputs.empty() && !outputs[0].IsInitialized());
  }
  // Graphs with loops only.
  enum class Kind : uint8_t { kPlain, kEnter, kExit, kNextIteration } kind = Kind::kPlain;
  int frame = 0;            // static frame (StaticFrames::frames)
  int child_frame = -1;     // Enter: the frame it enters
  bool is_constant = false; // Enter: a loop invariant
  int num_back_inputs = 0;  // Merge: inputs from NextIteration
  int exit_index = -1;      // Exit: index among its frame's exits
};

struct FrameState;

// A node ready to run: in a graph without loops `frame` is null and the inputs wait in the
// step's arrays; with loops they travel here.
struct Tagged {
  int id = 0;
  FrameState* frame = nullptr;
  int64_t iter = 0;
  bool dead = false;  // an input was dead: the node does not run (unless runs_dead) and its outputs are dead
  std::vector<Tensor> inputs;
};

struct IterState {
  std::vector<std::vector<Tensor>> inputs;  // per item
  std::vector<int> pending;                 // per item: inputs still to come
  std::vector<uint8_t> flags;               // per item: kDeadInput | kFired
  int outstanding = 0;  // nodes of this iteration ready or running
  int frames = 0;       // child frame instances started in this iteration and not ended
};

struct FrameState {
  int static_frame = 0;
  FrameState* parent = nullptr;
  int64_t parent_iter = 0;
  int64_t id = 0;  // the rendezvous key's frame part (0 for the root frame)
  int64_t base = 0;  // the oldest live iteration: iters[i - base]
  std::deque<std::unique_ptr<IterState>> iters;
  int pending_enters = 0;
  std::vector<std::pair<int, Tensor>> invariants;  // (Enter item, value; unset = dead)
  std::vector<std::pair<int, Tensor>> deferred;    // (NextIteration item, value) for the next iteration
  std::vector<uint8_t> exit_live;                  // per exit of the static frame
};

class FrameRunner {
 public:
  // Both not owned; they outlive the runner (the executor's).
  FrameRunner(const std::vector<ExecItem>& items, const StaticFrames& frames);
  ~FrameRunner();
  // The step's first ready nodes (items without inputs), in the root frame's iteration 0.
  void Start(const std::vector<int>& roots, std::deque<Tagged>* ready);
  // `t` ended (ran, or skipped as dead: `skipped`): routes its outputs (unset = dead) and
  // appends the nodes that became ready.
  void Done(const Tagged& t, std::vector<Tensor>& outputs, bool skipped, std::deque<Tagged>* ready);

 private:
  enum : uint8_t { kDeadInput = 1, kFired = 2 };
  IterState& Iter(FrameState* f, int64_t iter) { return *f->iters[static_cast<size_t>(iter - f->base)]; }
  void StartIteration(FrameState* f, std::deque<Tagged>* ready);
  FrameState* Child(FrameState* f, int64_t iter, int static_frame);
  // Delivers item `id`'s outputs to iteration `iter` of `f`.
  void Deliver(FrameState* f, int64_t iter, int id, const std::vector<Tensor>& outputs, bool skipped,
               std::deque<Tagged>* ready);
  void Arrive(FrameState* f, int64_t iter, int dst, int input, const Tensor& value, bool dead,
              std::deque<Tagged>* ready);
  // Ends the finished iterations of `f` (oldest first), then `f` itself when none is left.
  void Cleanup(FrameState* f, std::deque<Tagged>* ready);

  const std::vector<ExecItem>& items_;
  const StaticFrames& frames_;
  std::mutex mu_;
  std::unique_ptr<FrameState> root_;
  std::map<std::tuple<FrameState*, int64_t, int>, std::unique_ptr<FrameState>> children_;
  std::vector<std::vector<int>> exit_items_;  // [static frame][exit] -> item
};

}  // namespace weft::internal
