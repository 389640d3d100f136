// AllGather and ReduceScatter around the ring of ranks (algorithms.h): n - 1 steps, in each of
// which every member sends one block to its successor and receives one from its predecessor, so
// each link carries (n - 1) / n of the result once, whatever the topology (the direct exchange
// sends n - 1 messages from every member at once, which a switch with full bisection carries
// equally well but a chain of hosts does not).
#include <fmt/format.h>

#include <atomic>

#include "runtime/collectives/algorithms.h"

namespace weft {
namespace {

char* ElementAt(const Tensor& t, int64_t element) {
  return static_cast<char*>(t.raw_data()) + static_cast<size_t>(element) * DTypeSize(t.dtype());
}

int Mod(int a, int n) { return ((a % n) + n) % n; }

// Both rings first compare input shapes with the predecessor (so all agree when the ring closes),
// as the ring all-reduce does; `pending` counts that check as one of the member's arrivals.
void CompareShapes(const std::shared_ptr<Collective>& c, const TensorShape& mine, std::function<void()> arrived) {
  const int prev = Mod(c->rank() - 1, c->size());
  const std::vector<int64_t>& dims = mine.dims();
  c->Send(Mod(c->rank() + 1, c->size()), "shape",
          Tensor::FromVector<int64_t>(dims, TensorShape({static_cast<int64_t>(dims.size())})));
  c->Recv(prev, "shape", Collective::kUnchecked, [cp = c.get(), prev, mine, arrived](const Tensor& got) {
    WEFT_REQUIRE(got.dtype() == DType::kInt64, "{}: a malformed shape message", cp->params().what);
    const TensorShape theirs(got.ToVector<int64_t>());
    WEFT_REQUIRE(theirs == mine, "{}: group {} instance {}: member {} ({}) has shape {} but member {} has {}: the "
                 "members' inputs differ", cp->params().what, cp->params().group_key, cp->params().instance_key, prev,
                 cp->params().devices[static_cast<size_t>(prev)], theirs.ToString(), cp->rank(), mine.ToString());
    arrived();
  });
}

struct RingGather : std::enable_shared_from_this<RingGather> {
  std::shared_ptr<Collective> c;
  int n = 0, r = 0;
  int64_t block = 0;  // elements per member's input
  Tensor out;
  std::atomic<int> pending{0};

  void Arrived() {
    if (--pending == 0) c->Finish(out);
  }
  // Step t: block r - t - 1 from prev, kept, and passed on (but the last).
  void Receive(int t) {
    const int b = Mod(r - t - 1, n);
    c->Recv(Mod(r - 1, n), "ag" + std::to_string(t), block, [self = shared_from_this(), t, b](const Tensor& got) {
      if (t < self->n - 2) {
        self->c->Send(Mod(self->r + 1, self->n), "ag" + std::to_string(t + 1), got);
        self->Receive(t + 1);
      }
      char* dst = ElementAt(self->out, b * self->block);
      if (got.raw_data() != dst) self->c->reducer().Copy(dst, got.raw_data(), got.bytes());
      self->Arrived();
    }, FlatSlice(out, b * block, block, c->reducer()));
  }
};

struct RingScatter : std::enable_shared_from_this<RingScatter> {
  std::shared_ptr<Collective> c;
  int n = 0, r = 0;
  int64_t rows = 0, row = 0;  // the input's dim 0 and elements per row
  Tensor input;
  std::vector<int64_t> dims;  // the input's
  Tensor result;                // set by the last step
  std::atomic<int> pending{2};  // the shape check and the last step

  // Segment s: rows ScatterRows(rows, n, s) of the input, as elements.
  void Segment(int s, int64_t* lo, int64_t* len) const {
    int64_t start, count;
    ScatterRows(rows, n, s, &start, &count);
    *lo = start * row;
    *len = count * row;
  }
  // Step t: the partial sum of segment r - t - 2 from prev (merged by the members before us on
  // the ring), merged with our part of it and passed on; after n - 1 steps segment r is complete.
  void Receive(int t) {
    const int s = Mod(r - t - 2, n);
    int64_t lo, len;
    Segment(s, &lo, &len);
    c->Recv(Mod(r - 1, n), "rs" + std::to_string(t), len, [self = shared_from_this(), t, s, lo, len](const Tensor& got) {
      const CollectiveParams& p = self->c->params();
      const Reducer& rd = self->c->reducer();
      std::vector<int64_t> d = self->dims;
      int64_t start;
      ScatterRows(self->rows, self->n, s, &start, &d[0]);  // the output's rows (s == r at the last step)
      Tensor merged = rd.Allocate(got.dtype(), t == self->n - 2 ? TensorShape(d) : TensorShape({len}));
      rd.Merge(got.dtype(), p.merge, merged.raw_data(), got.raw_data(), ElementAt(self->input, lo), len);
      if (t < self->n - 2) {
        self->c->Send(Mod(self->r + 1, self->n), "rs" + std::to_string(t + 1), merged);
        self->Receive(t + 1);
        return;
      }
      if (p.divide) rd.Divide(got.dtype(), merged.raw_data(), len, self->n);
      self->result = merged;  // before the count: the shape check may end the collective
      if (--self->pending == 0) self->c->Finish(self->result);
    });
  }
};

}  // namespace

std::string ChooseGather(const CollectiveParams& p) {
  return AllInOneTask(p.devices) ? "direct" : "ring";
}

void RingAllGather(const std::shared_ptr<Collective>& c, const Tensor& input) {
  WEFT_REQUIRE(input.rank() >= 1, "{}: AllGather needs inputs of rank >= 1 (it concatenates along dim 0), got a scalar",
               c->params().what);
  auto g = std::make_shared<RingGather>();
  g->c = c;
  g->n = c->size();
  g->r = c->rank();
  g->block = input.num_elements();
  std::vector<int64_t> dims = input.shape().dims();
  dims[0] *= g->n;
  g->out = c->reducer().Allocate(input.dtype(), TensorShape(dims));
  g->pending = g->n;  // n - 1 blocks and the shape check
  c->reducer().Copy(ElementAt(g->out, g->r * g->block), input.raw_data(), input.bytes());
  CompareShapes(c, input.shape(), [g] { g->Arrived(); });
  c->Send(Mod(g->r + 1, g->n), "ag0", input);
  g->Receive(0);
}

void RingReduceScatter(const std::shared_ptr<Collective>& c, const Tensor& input) {
  WEFT_REQUIRE(input.rank() >= 1, "{}: ReduceScatter needs inputs of rank >= 1 (it splits dim 0), got a scalar",
               c->params().what);
  auto s = std::make_shared<RingScatter>();
  s->c = c;
  s->n = c->size();
  s->r = c->rank();
  s->rows = input.dim(0);
  s->row = s->rows == 0 ? 0 : input.num_elements() / s->rows;
  s->input = input;
  s->dims = input.shape().dims();
  CompareShapes(c, input.shape(), [s] {
    if (--s->pending == 0) s->c->Finish(s->result);
  });
  int64_t lo, len;
  s->Segment(Mod(s->r - 1, s->n), &lo, &len);
  c->Send(Mod(s->r + 1, s->n), "rs0", FlatSlice(input, lo, len, c->reducer()));
  s->Receive(0);
}

}  // namespace weft
