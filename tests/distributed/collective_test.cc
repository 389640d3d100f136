// The collective ops in one process: n CPU devices, one member per device, every op, dtype and
// algorithm (the ring and recursive doubling run over the same rendezvous as across processes).
#include <doctest/doctest.h>

#include <cstring>
#include <random>

#include "distributed/collectives/algorithms.h"
#include "graph/session.h"
#include "ops/collective.h"
#include "ops/framework.h"

using namespace weft;

namespace {

std::string Cpu(int i) { return "/job:localhost/replica:0/task:0/device:CPU:" + std::to_string(i); }

ops::CollectiveGroup Group(int n, double timeout = 20) {
  ops::CollectiveGroup g{.size = n, .key = 3, .timeout_seconds = timeout};
  for (int i = 0; i < n; ++i) g.devices.push_back(Cpu(i));
  return g;
}

// Member r's input: values that differ per member and element, exact in every dtype.
Tensor Input(DType dt, const TensorShape& shape, int r) {
  Tensor t(dt, shape);
  Dispatch<float, double, int32_t, int64_t>(dt, "test", [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* p = t.data<T>();
    for (int64_t i = 0; i < t.num_elements(); ++i) p[i] = static_cast<T>((i * 7 + r * 13) % 23 - 11 + r);
  });
  return t;
}

// Runs `build(scope on device r, input r, r)` for every member and fetches the outputs.
template <typename F>
std::vector<Tensor> RunMembers(int n, DType dt, const TensorShape& shape, F build) {
  Graph g;
  Scope s = Scope::Root(&g);
  std::vector<Output> outs;
  std::vector<std::pair<Output, Tensor>> feeds;
  for (int r = 0; r < n; ++r) {
    Scope d = s.WithDevice(Cpu(r)).NewSubScope("m" + std::to_string(r));
    Output x = ops::Placeholder(d.WithOpName("x"), dt, shape);
    feeds.emplace_back(x, Input(dt, shape, r));
    outs.push_back(build(d, x, r));
  }
  Session sess(&g, {.inter_op_threads = 2, .intra_op_threads = 2, .num_cpu_devices = n});
  return sess.Run(feeds, outs);
}

// The reference: merge in rank order, element by element, in double (exact for these inputs).
std::vector<double> Reduced(DType dt, const TensorShape& shape, int n, const std::string& merge, bool divide) {
  std::vector<double> out;
  for (int r = 0; r < n; ++r) {
    Tensor t = Input(dt, shape, r);
    std::vector<double> v;
    Dispatch<float, double, int32_t, int64_t>(dt, "test", [&](auto tag) {
      using T = typename decltype(tag)::type;
      for (T x : t.ToVector<T>()) v.push_back(static_cast<double>(x));
    });
    if (r == 0) {
      out = v;
      continue;
    }
    for (size_t i = 0; i < v.size(); ++i) {
      out[i] = merge == "Add" ? out[i] + v[i] : merge == "Max" ? std::max(out[i], v[i]) : std::min(out[i], v[i]);
    }
  }
  if (divide) {
    for (double& x : out) {
      if (dt == DType::kInt32 || dt == DType::kInt64) {
        x = static_cast<double>(static_cast<int64_t>(x) / n);
      } else if (dt == DType::kFloat32) {
        x = static_cast<double>(static_cast<float>(x) / static_cast<float>(n));
      } else {
        x /= n;
      }
    }
  }
  return out;
}

std::vector<double> AsDoubles(const Tensor& t) {
  std::vector<double> v;
  Dispatch<float, double, int32_t, int64_t>(t.dtype(), "test", [&](auto tag) {
    using T = typename decltype(tag)::type;
    for (T x : t.ToVector<T>()) v.push_back(static_cast<double>(x));
  });
  return v;
}

const DType kTypes[] = {DType::kFloat32, DType::kFloat64, DType::kInt32, DType::kInt64};

}  // namespace

TEST_CASE("collectives: all-reduce, every algorithm, dtype, group size 2..4, sizes not divisible by the group") {
  for (const char* algorithm : {"shared", "ring", "recursive_doubling"}) {
    for (DType dt : kTypes) {
      for (int n = 2; n <= 4; ++n) {
        for (int64_t elems : {0, 1, 5, 1001}) {
          for (const char* merge : {"Add", "Max", "Min"}) {
            const bool divide = std::string(merge) == "Add" && elems == 5;
            const std::string algo = algorithm;
            CAPTURE(algo);
            CAPTURE(DTypeName(dt));
            CAPTURE(n);
            CAPTURE(elems);
            const std::string merge_op = merge;
            CAPTURE(merge_op);
            const TensorShape shape({elems});
            auto outs = RunMembers(n, dt, shape, [&](const Scope& d, Output x, int r) {
              // A small ring chunk, so the ring's pipeline has many chunks in flight.
              return d.Op("CollectiveReduce", {x},
                          {{"group_size", int64_t{n}}, {"group_key", int64_t{3}}, {"instance_key", int64_t{1}},
                           {"rank", int64_t{r}}, {"merge_op", std::string(merge)},
                           {"final_op", std::string(divide ? "Div" : "Id")}, {"algorithm", std::string(algorithm)},
                           {"chunk_bytes", int64_t{64}}, {"timeout_seconds", 20.0}});
            });
            const std::vector<double> want = Reduced(dt, shape, n, merge, divide);
            for (int r = 0; r < n; ++r) {
              CHECK(outs[static_cast<size_t>(r)].shape() == shape);
              CHECK(AsDoubles(outs[static_cast<size_t>(r)]) == want);
              CHECK(std::memcmp(outs[static_cast<size_t>(r)].raw_data(), outs[0].raw_data(), outs[0].bytes()) == 0);
            }
          }
        }
      }
    }
  }
}
