#include "graph/executor_frames.h"

#include <fmt/format.h>

#include <functional>

namespace weft::internal {

FrameRunner::FrameRunner(const std::vector<ExecItem>& items, const StaticFrames& frames)
    : items_(items), frames_(frames), root_(std::make_unique<FrameState>()) {
  exit_items_.resize(frames.frames.size());
  for (size_t f = 0; f < frames.frames.size(); ++f) exit_items_[f].resize(frames.frames[f].exits.size());
  for (size_t i = 0; i < items.size(); ++i) {
    if (items[i].kind == ExecItem::Kind::kExit) {
      exit_items_[static_cast<size_t>(items[i].frame)][static_cast<size_t>(items[i].exit_index)] = static_cast<int>(i);
    }
  }
}

FrameRunner::~FrameRunner() = default;

void FrameRunner::Start(const std::vector<int>& roots, std::deque<Tagged>* ready) {
  std::lock_guard<std::mutex> l(mu_);
  StartIteration(root_.get(), ready);
  IterState& s = Iter(root_.get(), 0);
  for (int r : roots) {
    ready->push_back({.id = r, .frame = root_.get(), .iter = 0, .dead = false, .inputs = {}});
    ++s.outstanding;
  }
}

void FrameRunner::StartIteration(FrameState* f, std::deque<Tagged>* ready) {
  const int64_t k = f->base + static_cast<int64_t>(f->iters.size());
  auto s = std::make_unique<IterState>();
  const size_t n = items_.size();
  s->inputs.resize(n);
  s->pending.resize(n);
  s->flags.assign(n, 0);
  for (size_t i = 0; i < n; ++i) {
    const ExecItem& it = items_[i];
    s->inputs[i].resize(static_cast<size_t>(it.node->num_inputs()));
    int pending = it.initial_pending;
    if (it.is_merge && it.num_back_inputs > 0) {
      pending = k == 0 ? it.node->num_inputs() - it.num_back_inputs : it.num_back_inputs;
    }
    s->pending[i] = pending;
  }
  f->iters.push_back(std::move(s));
  // Loop invariants reach every iteration.
  for (const auto& [enter, value] : f->invariants) Deliver(f, k, enter, {value}, false, ready);
}

FrameState* FrameRunner::Child(FrameState* f, int64_t iter, int static_frame) {
  auto& child = children_[{f, iter, static_frame}];
  if (!child) {
    child = std::make_unique<FrameState>();
    const StaticFrame& sf = frames_.frames[static_cast<size_t>(static_frame)];
    child->static_frame = static_frame;
    child->parent = f;
    child->parent_iter = iter;
    // The same on every device and process that runs this frame instance (rendezvous keys).
    child->id = static_cast<int64_t>(std::hash<std::string>()(fmt::format("{};{};{}", f->id, iter, sf.name)) >> 1);
    child->pending_enters = static_cast<int>(sf.enters.size());
    child->exit_live.assign(sf.exits.size(), 0);
    ++Iter(f, iter).frames;
    std::deque<Tagged> none;
    StartIteration(child.get(), &none);  // no invariant has come yet: nothing gets ready
  }
  return child.get();
}

void FrameRunner::Deliver(FrameState* f, int64_t iter, int id, const std::vector<Tensor>& outputs, bool skipped,
                          std::deque<Tagged>* ready) {
  const ExecItem& it = items_[static_cast<size_t>(id)];
  for (size_t o = 0; o < it.out_by_output.size(); ++o) {
    const bool dead = skipped || !outputs[o].IsInitialized();
    for (const auto& [dst, in] : it.out_by_output[o]) Arrive(f, iter, dst, in, outputs[o], dead, ready);
  }
  const bool control_dead = it.ControlDead(outputs, skipped);
  for (int dst : it.control_out) Arrive(f, iter, dst, -1, Tensor(), control_dead, ready);
}

void FrameRunner::Arrive(FrameState* f, int64_t iter, int dst, int input, const Tensor& value, bool dead,
                         std::deque<Tagged>* ready) {
  IterState& s = Iter(f, iter);
  const size_t d = static_cast<size_t>(dst);
  const ExecItem& item = items_[d];
  auto fire = [&](bool all_dead) {
    s.flags[d] |= kFired;
    ready->push_back({.id = dst, .frame = f, .iter = iter, .dead = all_dead, .inputs = std::move(s.inputs[d])});
    ++s.outstanding;
  };
  if (item.is_merge && input >= 0) {
    if (s.flags[d] & kFired) return;  // a later input of a Merge that already fired
    --s.pending[d];
    if (!dead) {
      s.inputs[d][static_cast<size_t>(input)] = value;
      fire(false);
    } else if (s.pending[d] == 0) {
      fire(true);
    }
    return;
  }
  if (dead) {
    s.flags[d] |= kDeadInput;
  } else if (input >= 0) {
    s.inputs[d][static_cast<size_t>(input)] = value;
  }
  if (--s.pending[d] == 0) fire((s.flags[d] & kDeadInput) != 0);
}

void FrameRunner::Done(const Tagged& t, std::vector<Tensor>& outputs, bool skipped, std::deque<Tagged>* ready) {
  std::lock_guard<std::mutex> l(mu_);
  const ExecItem& it = items_[static_cast<size_t>(t.id)];
  FrameState* f = t.frame;
  switch (it.kind) {
    case ExecItem::Kind::kEnter: {
      FrameState* c = Child(f, t.iter, it.child_frame);
      if (it.is_constant) {
        c->invariants.emplace_back(t.id, skipped ? Tensor() : outputs[0]);
        for (size_t k = 0; k < c->iters.size(); ++k) {
          Deliver(c, c->base + static_cast<int64_t>(k), t.id, outputs, skipped, ready);
        }
      } else if (c->base == 0) {
        Deliver(c, 0, t.id, outputs, skipped, ready);
      }
      --c->pending_enters;
      Cleanup(c, ready);
      break;
    }
    case ExecItem::Kind::kExit:
      if (!skipped && outputs[0].IsInitialized()) {
        f->exit_live[static_cast<size_t>(it.exit_index)] = 1;
        Deliver(f->parent, f->parent_iter, t.id, outputs, false, ready);
      }
      break;
    case ExecItem::Kind::kNextIteration: {
      if (skipped || !outputs[0].IsInitialized()) break;  // a dead NextIteration ends the loop
      const int64_t next = t.iter + 1;
      const int64_t started = f->base + static_cast<int64_t>(f->iters.size());
      const int64_t window = frames_.frames[static_cast<size_t>(f->static_frame)].parallel_iterations;
      if (next < started) {
        Deliver(f, next, t.id, outputs, false, ready);
      } else if (next - f->base < window) {
        StartIteration(f, ready);
        Deliver(f, next, t.id, outputs, false, ready);
      } else {
        f->deferred.emplace_back(t.id, outputs[0]);
      }
      break;
    }
    case ExecItem::Kind::kPlain:
      Deliver(f, t.iter, t.id, outputs, skipped, ready);
      break;
  }
  --Iter(f, t.iter).outstanding;
  Cleanup(f, ready);
}

void FrameRunner::Cleanup(FrameState* f, std::deque<Tagged>* ready) {
  if (f == root_.get()) return;  // the step's end is the executor's count of nodes
  const int64_t window = frames_.frames[static_cast<size_t>(f->static_frame)].parallel_iterations;
  while (!f->iters.empty()) {
    const IterState& s = *f->iters.front();
    if (s.outstanding > 0 || s.frames > 0 || (f->base == 0 && f->pending_enters > 0)) return;
    f->iters.pop_front();
    ++f->base;
    if (!f->deferred.empty() && static_cast<int64_t>(f->iters.size()) < window) {
      StartIteration(f, ready);
      const int64_t k = f->base + static_cast<int64_t>(f->iters.size()) - 1;
      for (const auto& [id, value] : f->deferred) Deliver(f, k, id, {value}, false, ready);
      f->deferred.clear();
    }
  }
  // The frame instance ended: Exits that gave no live value give a dead one.
  const StaticFrame& sf = frames_.frames[static_cast<size_t>(f->static_frame)];
  FrameState* parent = f->parent;
  const int64_t parent_iter = f->parent_iter;
  for (size_t e = 0; e < sf.exits.size(); ++e) {
    if (!f->exit_live[e]) Deliver(parent, parent_iter, exit_items_[static_cast<size_t>(f->static_frame)][e], {Tensor()}, true, ready);
  }
  --Iter(parent, parent_iter).frames;
  children_.erase({parent, parent_iter, f->static_frame});  // f is gone
  Cleanup(parent, ready);
}

}  // namespace weft::internal
