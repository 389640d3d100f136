// AllReduce: the shared-memory, ring and recursive-doubling algorithms (algorithms.h).
#include <fmt/format.h>

#include <atomic>
#include <cstring>
#include <set>

#include "runtime/collectives/algorithms.h"

namespace weft {
namespace {

char* At(const Tensor& t, int64_t element) {
  return static_cast<char*>(t.raw_data()) + static_cast<size_t>(element) * DTypeSize(t.dtype());
}

Tensor Copy(const Reducer& rd, const Tensor& t) {
  Tensor out = rd.Allocate(t.dtype(), t.shape());
  rd.Copy(out.raw_data(), t.raw_data(), t.bytes());
  return out;
}

void CheckShape(const Collective& c, int from, const TensorShape& got, const TensorShape& mine) {
  WEFT_REQUIRE(got == mine,
               "{}: group {} instance {}: member {} ({}) has shape {} but member {} has {}: the members' inputs differ",
               c.params().what, c.params().group_key, c.params().instance_key, from,
               c.params().devices[static_cast<size_t>(from)], got.ToString(), c.rank(), mine.ToString());
}
void CheckShape(const Collective& c, int from, const Tensor& got, const Tensor& mine) {
  CheckShape(c, from, got.shape(), mine.shape());
}

// Element range [begin, end) of part `i` of `n` equal parts of `total`.
int64_t PartBegin(int64_t total, int n, int i) { return total * i / n; }

// A ring message's name: "rs3/7" (reduce-scatter step 3, piece 7), "ag0/2" (no fmt: many per all-reduce).
std::string Name(const char* phase, int step, int64_t piece) {
  return phase + std::to_string(step) + "/" + std::to_string(piece);
}

// Slices up to this size are merged without a thread hand-over (shared algorithm).
constexpr size_t kInlineSliceBytes = 64 << 10;

// The same in whole units of `unit` elements (the last part ends at `total`), so that every
// part starts aligned and is sent without a copy.
int64_t AlignedPartBegin(int64_t total, int n, int i, int64_t unit) {
  const int64_t units = (total + unit - 1) / unit;
  return std::min(total, units * i / n * unit);
}

}  // namespace

std::string ChooseAllReduce(const CollectiveParams& p, int64_t bytes) {
  const std::string& a = p.algorithm;
  if (a == "auto") {
    // Device members never share one output buffer: they reduce like members of different tasks.
    if (AllInOneTask(p.devices) && p.reducer->on_host()) return "shared";
    std::set<std::string> tasks;
    for (const std::string& d : p.devices) tasks.insert(TaskOf(d));
    if (tasks.size() < p.devices.size()) return "hierarchical";
    return bytes <= RecursiveDoublingMaxBytes(p.cost, p.group_size) ? "recursive_doubling" : "ring";
  }
  WEFT_REQUIRE(a == "shared" || a == "ring" || a == "recursive_doubling" || a == "hierarchical",
               "{}: algorithm must be auto, shared, ring, recursive_doubling or hierarchical, got '{}'", p.what, a);
  WEFT_REQUIRE(a != "shared" || AllInOneTask(p.devices),
               "{}: algorithm 'shared' needs every member in this process, but group_devices span tasks", p.what);
  WEFT_REQUIRE(a != "shared" || p.reducer->on_host(),
               "{}: algorithm 'shared' needs host tensors, but this member reduces on {} (use ring or "
               "recursive_doubling)", p.what, p.reducer->Name());
  return a;
}

void SharedAllReduce(const std::shared_ptr<Collective>& c, const Tensor& input) {
  const int n = c->size(), r = c->rank();
  const int64_t total = input.num_elements();
  struct State {
    std::vector<Tensor> inputs;
    Tensor out;
    std::atomic<int> pending;
    std::atomic<int> done_pending;
  };
  auto st = std::make_shared<State>();
  st->inputs.resize(static_cast<size_t>(n));
  st->inputs[static_cast<size_t>(r)] = input;
  st->pending = (n - 1) + (r == 0 ? 0 : 1);
  st->done_pending = n;  // every member's slice, this one's included
  Collective* cp = c.get();  // callbacks hold the collective through Recv
  auto reduce_slice = [cp, st, n, r, total, input] {
    const int64_t lo = PartBegin(total, n, r), len = PartBegin(total, n, r + 1) - lo;
    const DType dt = input.dtype();
    const CollectiveParams& p = cp->params();
    const Reducer& rd = cp->reducer();
    rd.Merge(dt, p.merge, At(st->out, lo), At(st->inputs[0], lo), At(st->inputs[1], lo), len);
    for (int k = 2; k < n; ++k) rd.Merge(dt, p.merge, At(st->out, lo), At(st->out, lo), At(st->inputs[k], lo), len);
    if (p.divide) rd.Divide(dt, At(st->out, lo), len, n);
    st->inputs.clear();
    for (int b = 0; b < n; ++b) {
      if (b != r) cp->Send(b, "done", Tensor(dt, TensorShape({0})));
    }
    if (--st->done_pending == 0) cp->Finish(st->out);
  };
  // A small slice is merged on whichever thread brings the last input; a thread hand-over costs more.
  const bool cheap = input.bytes() / static_cast<size_t>(n) <= kInlineSliceBytes;
  auto arrived = [cp, st, reduce_slice, cheap] {
    if (--st->pending == 0) cp->RunLocal(reduce_slice, cheap);
  };
  if (r == 0) {
    st->out = c->reducer().Allocate(input.dtype(), input.shape());
    for (int b = 1; b < n; ++b) c->Send(b, "out", st->out);
  }
  for (int b = 0; b < n; ++b) {
    if (b != r) c->Send(b, "in", input);
  }
  // The "done" of every member says its slice is written; only then is the output complete.
  for (int a = 0; a < n; ++a) {
    if (a == r) continue;
    c->Recv(a, "done", 0, [cp, st](const Tensor&) {
      if (--st->done_pending == 0) cp->Finish(st->out);
    });
  }
  if (r != 0) {
    c->Recv(0, "out", total, [st, arrived](const Tensor& t) {
      st->out = t;
      arrived();
    });
  }
  for (int a = 0; a < n; ++a) {
    if (a == r) continue;
    c->Recv(a, "in", total, [cp, st, a, input, arrived](const Tensor& t) {
      CheckShape(*cp, a, t, input);
      st->inputs[static_cast<size_t>(a)] = t;
      arrived();
    });
  }
}

namespace {

// One member's recursive doubling; every pending Recv holds it. Its messages have numbers (the
// collective channel's slots, Collective::SendSlot): rd_in 0, rd_out 1, round `mask` 2 + log2(mask).
struct Doubling : std::enable_shared_from_this<Doubling> {
  static constexpr int kIn = 0, kOut = 1;
  static int RoundMessage(int mask) {
    int m = 2;
    while (mask > 1) {
      mask >>= 1;
      ++m;
    }
    return m;
  }
  std::shared_ptr<Collective> c;
  int n = 0, r = 0, p = 1;
  int64_t total = 0;
  TensorShape shape;
  Tensor out;  // never written after it is sent: each round merges into a new tensor

  Tensor Merged(const Tensor& lower, const Tensor& higher) const {
    Tensor m = c->reducer().Allocate(lower.dtype(), shape);
    c->reducer().Merge(lower.dtype(), c->params().merge, m.raw_data(), lower.raw_data(), higher.raw_data(), total);
    return m;
  }
  // Exchange with rank r ^ mask, merge (lower rank first), go on with the next mask.
  void Round(int mask) {
    if (mask >= p) {
      // n >= 2, so `out` is the last round's new tensor, not sent yet.
      if (c->params().divide) c->reducer().Divide(out.dtype(), out.raw_data(), total, n);
      if (r < n - p) c->SendSlot(r + p, kOut, "rd_out", out);
      c->Finish(out);
      return;
    }
    const int partner = r ^ mask;
    const std::string what = "rd" + std::to_string(mask);
    // The Send first: a Recv whose callback ran at once may end the collective, after which
    // nothing more is sent.
    c->SendSlot(partner, RoundMessage(mask), what, out);
    c->RecvSlot(partner, RoundMessage(mask), what, shape, [self = shared_from_this(), partner, mask](const Tensor& t) {
      CheckShape(*self->c, partner, t, self->out);
      self->out = self->r < partner ? self->Merged(self->out, t) : self->Merged(t, self->out);
      self->Round(mask * 2);
    });
  }
};

// One member's ring all-reduce; every pending Recv holds it.
struct Ring : std::enable_shared_from_this<Ring> {
  std::shared_ptr<Collective> c;
  int n = 0, r = 0, next = 0, prev = 0;
  int64_t total = 0, chunk = 1, unit = 1;
  Tensor input;  // this member's contribution, read (never copied) where a segment is merged
  Tensor out;    // each part written by its merge here or by the all-gather (a receive or a copy)
  std::atomic<int64_t> pending{0};

  // Piece j of segment s: elements [lo, lo + len).
  void Range(int s, int64_t j, int64_t* lo, int64_t* len) const {
    s = ((s % n) + n) % n;
    const int64_t b = AlignedPartBegin(total, n, s, unit), e = AlignedPartBegin(total, n, s + 1, unit);
    *lo = std::min(e, b + j * chunk);
    *len = std::min(e, *lo + chunk) - *lo;
  }
  void FinishedOne() {
    if (--pending == 0) c->Finish(out);
  }
  // Every Recv asks that its chunk land where it belongs in `out` (across processes UCX's
  // rendezvous then writes it there: no receive buffer, no copy). Each is posted one step ahead of
  // its chunk, as the pipeline reaches it, not all at the start: that many outstanding receives
  // slowed whole training steps across workers, although an all-reduce alone did not slow down
  // (bench/README.md, All-reduce).
  //
  // Reduce-scatter step t of piece j: receive segment r - t - 1 from prev, merge our input's part
  // into it and pass the result on; after n - 1 steps segment r + 1 is complete and its
  // all-gather starts. A chunk received in place is merged in place (same operands, same order).
  void Scatter(int t, int64_t j) {
    int64_t lo, len;
    Range(r - t - 1, j, &lo, &len);
    c->Recv(prev, Name("rs", t, j), len, [self = shared_from_this(), t, j, lo, len](const Tensor& got) {
      self->c->RunLocal([self, t, j, lo, len, got] { self->Scattered(t, j, lo, len, got); }, kInline);
    }, FlatSlice(out, lo, len, c->reducer()));
  }
  void Scattered(int t, int64_t j, int64_t lo, int64_t len, const Tensor& got) {
    const CollectiveParams& p = c->params();
    // The all-gather's first chunk comes once prev has merged its own: ask for it before our merge.
    if (t == n - 2) Gather(0, j);
    c->reducer().Merge(got.dtype(), p.merge, At(out, lo), got.raw_data(), At(input, lo), len);
    if (t < n - 2) {
      c->Send(next, Name("rs", t + 1, j), FlatSlice(out, lo, len, c->reducer()));
      Scatter(t + 1, j);
    } else {
      if (p.divide) c->reducer().Divide(got.dtype(), At(out, lo), len, n);
      c->Send(next, Name("ag", 0, j), FlatSlice(out, lo, len, c->reducer()));
    }
    FinishedOne();
  }
  // All-gather step t of piece j: receive the complete segment r - t from prev, keep it (a copy
  // unless it landed in place), pass it on. Writing into `out` here never races a peer still
  // reading that part: the complete segment comes back only after next has received our part of it.
  void Gather(int t, int64_t j) {
    int64_t lo, len;
    Range(r - t, j, &lo, &len);
    c->Recv(prev, Name("ag", t, j), len, [self = shared_from_this(), t, j, lo](const Tensor& got) {
      if (t < self->n - 2) {  // pass it on first: the copy below need not delay the next member
        self->c->Send(self->next, Name("ag", t + 1, j), got);
        self->Gather(t + 1, j);
      }
      self->c->RunLocal(
          [self, lo, got] {
            if (got.raw_data() != At(self->out, lo)) self->c->reducer().Copy(At(self->out, lo), got.raw_data(), got.bytes());
            self->FinishedOne();
          },
          kInline);
    }, FlatSlice(out, lo, len, c->reducer()));
  }
  // Chunks are merged and copied on the thread that received them (across processes: the
  // transport's progress thread), as MPI's single progress engine does. Handing large chunks to
  // the collective pool made the pool's thread compete with both processes' spinning progress
  // threads where cores are few, and large all-reduces took much longer (bench/README.md).
  static constexpr bool kInline = true;
};

}  // namespace

void RingAllReduce(const std::shared_ptr<Collective>& c, const Tensor& input) {
  auto ring = std::make_shared<Ring>();
  ring->c = c;
  ring->n = c->size();
  ring->r = c->rank();
  ring->next = (ring->r + 1) % ring->n;
  ring->prev = (ring->r + ring->n - 1) % ring->n;
  ring->total = input.num_elements();
  const int64_t elem = static_cast<int64_t>(DTypeSize(input.dtype()));
  ring->unit = std::max<int64_t>(1, static_cast<int64_t>(kTensorAlignment) / elem);
  // Segments are cut into chunks of chunk_bytes (1 MiB by default), not finer: every message costs
  // a header, a rendezvous and a wake-up of its own, so finer chunks made a 1 MiB all-reduce
  // slower, not faster (bench/README.md, All-reduce).
  ring->chunk = std::max<int64_t>(1, c->params().chunk_bytes / elem);
  ring->chunk = (ring->chunk + ring->unit - 1) / ring->unit * ring->unit;
  int64_t longest = 0;
  for (int s = 0; s < ring->n; ++s) {
    longest = std::max(longest, AlignedPartBegin(ring->total, ring->n, s + 1, ring->unit) -
                                    AlignedPartBegin(ring->total, ring->n, s, ring->unit));
  }
  const int64_t pieces = std::max<int64_t>(1, (longest + ring->chunk - 1) / ring->chunk);
  ring->input = input;
  ring->out = c->reducer().Allocate(input.dtype(), input.shape());
  ring->pending = pieces * 2 * (ring->n - 1) + 1;
  // The chunks' sizes follow from the element count; the shapes themselves are compared once,
  // each member with its predecessor (so all agree when the ring completes).
  const std::vector<int64_t>& dims = input.shape().dims();
  c->Send(ring->next, "shape", Tensor::FromVector<int64_t>(dims, TensorShape({static_cast<int64_t>(dims.size())})));
  c->Recv(ring->prev, "shape", Collective::kUnchecked, [ring, shape = input.shape()](const Tensor& got) {
    WEFT_REQUIRE(got.dtype() == DType::kInt64, "{}: a malformed shape message", ring->c->params().what);
    CheckShape(*ring->c, ring->prev, TensorShape(got.ToVector<int64_t>()), shape);
    ring->FinishedOne();
  });
  for (int64_t j = 0; j < pieces; ++j) {
    int64_t lo, len;
    ring->Range(ring->r, j, &lo, &len);
    c->Send(ring->next, Name("rs", 0, j), FlatSlice(input, lo, len, c->reducer()));
    ring->Scatter(0, j);
  }
}

void RecursiveDoublingAllReduce(const std::shared_ptr<Collective>& c, const Tensor& input) {
  auto rd = std::make_shared<Doubling>();
  rd->c = c;
  rd->n = c->size();
  rd->r = c->rank();
  rd->p = 1;
  while (rd->p * 2 <= rd->n) rd->p *= 2;
  rd->total = input.num_elements();
  rd->shape = input.shape();
  rd->out = input;
  const int extra = rd->n - rd->p;
  if (rd->r >= rd->p) {
    // Fold into rank r - p, get the result back from it.
    c->SendSlot(rd->r - rd->p, Doubling::kIn, "rd_in", input);
    c->RecvSlot(rd->r - rd->p, Doubling::kOut, "rd_out", rd->shape, [cp = c.get()](const Tensor& t) { cp->Finish(t); });
  } else if (rd->r < extra) {
    c->RecvSlot(rd->r + rd->p, Doubling::kIn, "rd_in", rd->shape, [rd](const Tensor& t) {
      CheckShape(*rd->c, rd->r + rd->p, t, rd->out);
      rd->out = rd->Merged(rd->out, t);
      rd->Round(1);
    });
  } else {
    rd->Round(1);
  }
}

void HierarchicalAllReduce(const std::shared_ptr<Collective>& c, const Tensor& input) {
  const CollectiveParams& p = c->params();
  const int r = c->rank();
  // Tasks in order of their first member; a task's leader is its first member.
  std::vector<std::string> tasks;
  std::vector<int> leaders, local;  // local: this task's members, rank order
  for (int m = 0; m < c->size(); ++m) {
    const std::string t = TaskOf(p.devices[static_cast<size_t>(m)]);
    if (std::find(tasks.begin(), tasks.end(), t) == tasks.end()) {
      tasks.push_back(t);
      leaders.push_back(m);
    }
    if (t == TaskOf(p.devices[static_cast<size_t>(r)])) local.push_back(m);
  }
  const int leader = local.front();
  const int64_t total = input.num_elements();
  if (r != leader) {
    c->Send(leader, "h_in", input);
    c->Recv(leader, "h_out", total, [cp = c.get()](const Tensor& t) { cp->Finish(t); });
    return;
  }
  struct State {
    std::vector<Tensor> inputs;
    std::atomic<int> pending;
  };
  auto st = std::make_shared<State>();
  st->inputs.resize(local.size());
  st->inputs[0] = input;
  st->pending = static_cast<int>(local.size()) - 1;
  const int task = static_cast<int>(std::find(leaders.begin(), leaders.end(), r) - leaders.begin());
  // Across tasks: the leaders' all-reduce, as a collective of its own; then the hand-out.
  auto across = [c, st, local, leaders, task, total] {
    const CollectiveParams& q = c->params();
    Tensor merged = st->inputs[0];
    if (st->inputs.size() > 1) {
      const Reducer& rd = c->reducer();
      merged = rd.Allocate(merged.dtype(), merged.shape());
      rd.Merge(merged.dtype(), q.merge, merged.raw_data(), st->inputs[0].raw_data(), st->inputs[1].raw_data(), total);
      for (size_t k = 2; k < st->inputs.size(); ++k) {
        rd.Merge(merged.dtype(), q.merge, merged.raw_data(), merged.raw_data(), st->inputs[k].raw_data(), total);
      }
    }
    st->inputs.clear();
    CollectiveParams sub = q;
    sub.group_size = static_cast<int>(leaders.size());
    sub.rank = task;
    sub.devices.clear();
    for (int l : leaders) sub.devices.push_back(q.devices[static_cast<size_t>(l)]);
    sub.divide = false;  // by the whole group's size, below
    sub.algorithm = static_cast<int64_t>(merged.bytes()) <= RecursiveDoublingMaxBytes(q.cost, sub.group_size)
                        ? "recursive_doubling"
                        : "ring";
    auto leaders_done = [c, local](const Status& s, const Tensor& sum) {
      if (!s.ok()) {
        c->Fail(s);
        return;
      }
      Tensor out = sum;
      if (c->params().divide) {  // a new tensor: the other leaders may still read `sum`'s buffer
        out = Copy(c->reducer(), sum);
        c->reducer().Divide(out.dtype(), out.raw_data(), out.num_elements(), c->size());
      }
      for (size_t k = 1; k < local.size(); ++k) c->Send(local[k], "h_out", out);
      c->Finish(out);
    };
    auto lc = Collective::Create(sub, c->context(), c->rendezvous(), leaders_done);
    lc->Start(merged.dtype());
    if (sub.group_size == 1) {
      lc->Finish(merged);
    } else if (sub.algorithm == "ring") {
      RingAllReduce(lc, merged);
    } else {
      RecursiveDoublingAllReduce(lc, merged);
    }
    lc->EndStart();
  };
  if (local.size() == 1) {
    across();
    return;
  }
  for (size_t k = 1; k < local.size(); ++k) {
    const int m = local[k];
    c->Recv(m, "h_in", total, [cp = c.get(), st, k, m, input, across](const Tensor& t) {
      CheckShape(*cp, m, t, input);
      st->inputs[k] = t;
      if (--st->pending == 0) cp->RunLocal(across);
    });
  }
}

}  // namespace weft
