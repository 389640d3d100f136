// Broadcast, AllGather and ReduceScatter (algorithms.h): direct exchanges between the members.
#include <fmt/format.h>

#include <atomic>
#include <cstring>

#include "runtime/collectives/algorithms.h"

namespace weft {
namespace {

std::string MemberName(const Collective& c, int m) {
  return fmt::format("member {} ({})", m, c.params().devices[static_cast<size_t>(m)]);
}

// Collects one tensor from every member (its own included), then runs `all` on this member's pool.
struct Gathered {
  std::vector<Tensor> parts;
  std::atomic<int> pending{0};
};

void GatherFromAll(const std::shared_ptr<Collective>& c, const std::string& what, const Tensor& own,
                   const TensorShape& expect, std::function<void(std::vector<Tensor>&)> all) {
  const int n = c->size(), r = c->rank();
  auto g = std::make_shared<Gathered>();
  g->parts.resize(static_cast<size_t>(n));
  g->parts[static_cast<size_t>(r)] = own;
  g->pending = n - 1;
  auto ready = [cp = c.get(), g, all] {
    cp->RunLocal([g, all] { all(g->parts); });
  };
  if (n == 1) {
    ready();
    return;
  }
  for (int a = 0; a < n; ++a) {
    if (a == r) continue;
    c->Recv(a, what, expect.num_elements(), [cp = c.get(), g, a, expect, ready](const Tensor& t) {
      WEFT_REQUIRE(t.shape() == expect, "{}: group {} instance {}: {} sent shape {}, expected {}: the members' inputs differ",
                   cp->params().what, cp->params().group_key, cp->params().instance_key, MemberName(*cp, a),
                   t.shape().ToString(), expect.ToString());
      g->parts[static_cast<size_t>(a)] = t;
      if (--g->pending == 0) ready();
    });
  }
}

}  // namespace

void ScatterRows(int64_t rows, int n, int r, int64_t* start, int64_t* count) {
  const int64_t base = rows / n, rem = rows % n;
  *count = base + (r < rem ? 1 : 0);
  *start = r * base + std::min<int64_t>(r, rem);
}

void Broadcast(const std::shared_ptr<Collective>& c, const Tensor& input) {
  const int src = c->params().source_rank;
  if (c->rank() == src) {
    for (int b = 0; b < c->size(); ++b) {
      if (b != src) c->Send(b, "bcast", input);
    }
    c->Finish(input);
    return;
  }
  c->Recv(src, "bcast", -1, [cp = c.get(), src, shape = input.shape()](const Tensor& t) {
    WEFT_REQUIRE(t.shape() == shape,
                 "{}: group {} instance {}: the source, {}, broadcasts shape {} but member {} expects {}",
                 cp->params().what, cp->params().group_key, cp->params().instance_key, MemberName(*cp, src),
                 t.shape().ToString(), cp->rank(), shape.ToString());
    cp->Finish(t);
  });
}

void AllGather(const std::shared_ptr<Collective>& c, const Tensor& input) {
  WEFT_REQUIRE(input.rank() >= 1, "{}: AllGather needs inputs of rank >= 1 (it concatenates along dim 0), got a scalar",
               c->params().what);
  for (int b = 0; b < c->size(); ++b) {
    if (b != c->rank()) c->Send(b, "gather", input);
  }
  GatherFromAll(c, "gather", input, input.shape(), [cp = c.get(), input](std::vector<Tensor>& parts) {
    std::vector<int64_t> dims = input.shape().dims();
    dims[0] *= static_cast<int64_t>(parts.size());
    Tensor out = cp->reducer().Allocate(input.dtype(), TensorShape(dims));
    char* dst = static_cast<char*>(out.raw_data());
    for (const Tensor& t : parts) {
      cp->reducer().Copy(dst, t.raw_data(), t.bytes());
      dst += t.bytes();
    }
    parts.clear();
    cp->Finish(out);
  });
}

void ReduceScatter(const std::shared_ptr<Collective>& c, const Tensor& input) {
  const CollectiveParams& p = c->params();
  WEFT_REQUIRE(input.rank() >= 1, "{}: ReduceScatter needs inputs of rank >= 1 (it splits dim 0), got a scalar", p.what);
  const int n = c->size(), r = c->rank();
  const int64_t rows = input.dim(0), row = rows == 0 ? 0 : input.num_elements() / rows;
  auto piece = [&](int b) {
    int64_t start, count;
    ScatterRows(rows, n, b, &start, &count);
    std::vector<int64_t> dims = input.shape().dims();
    dims[0] = count;
    return FlatSlice(input, start * row, count * row, TensorShape(dims), c->reducer());
  };
  for (int b = 0; b < n; ++b) {
    if (b != r) c->Send(b, "scatter", piece(b));
  }
  const Tensor own = piece(r);
  GatherFromAll(c, "scatter", own, own.shape(), [cp = c.get(), own, n](std::vector<Tensor>& parts) {
    const CollectiveParams& q = cp->params();
    const Reducer& rd = cp->reducer();
    Tensor out = rd.Allocate(own.dtype(), own.shape());
    if (n == 1) {
      rd.Copy(out.raw_data(), own.raw_data(), own.bytes());
    } else {
      rd.Merge(own.dtype(), q.merge, out.raw_data(), parts[0].raw_data(), parts[1].raw_data(), own.num_elements());
      for (int k = 2; k < n; ++k) {
        rd.Merge(own.dtype(), q.merge, out.raw_data(), out.raw_data(), parts[static_cast<size_t>(k)].raw_data(),
                  own.num_elements());
      }
    }
    if (q.divide) rd.Divide(own.dtype(), out.raw_data(), own.num_elements(), n);
    parts.clear();
    cp->Finish(out);
  });
}

}  // namespace weft
