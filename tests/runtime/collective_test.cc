// The collective ops in one process: n CPU devices, one member per device, every op, dtype and
// algorithm (the ring and recursive doubling run over the same rendezvous as across processes).
#include <doctest/doctest.h>

#include <atomic>
#include <cstring>
#include <future>
#include <random>
#include <thread>

#include "runtime/collectives/algorithms.h"
#include "runtime/collectives/context.h"
#include "runtime/rendezvous.h"
#include "graph/executor.h"
#include "graph/session.h"
#include "ops/collective.h"
#include "ops/framework.h"
#include "train/grad_buckets.h"

using namespace weft;

namespace {

std::string Cpu(int i) { return fmt::format("/job:localhost/replica:0/task:0/device:CPU:{}", i); }

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
    Scope d = s.WithDevice(Cpu(r)).NewSubScope(fmt::format("m{}", r));
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

TEST_CASE("collectives: broadcast, all-gather and reduce-scatter, every dtype, group size 2..4") {
  for (DType dt : kTypes) {
    for (int n = 2; n <= 4; ++n) {
      for (int64_t rows : {0, 1, 7, 64}) {
        CAPTURE(DTypeName(dt));
        CAPTURE(n);
        CAPTURE(rows);
        const TensorShape shape({rows, 3});
        const int src = n - 1;
        auto bcast = RunMembers(n, dt, shape, [&](const Scope& d, Output x, int r) {
          return ops::Broadcast(d, x, Group(n), 2, r, src);
        });
        const std::vector<double> source = AsDoubles(Input(dt, shape, src));
        for (const Tensor& t : bcast) CHECK(AsDoubles(t) == source);

        auto gathered = RunMembers(n, dt, shape, [&](const Scope& d, Output x, int r) {
          Output y = ops::AllGather(d, x, Group(n), 4, r);
          CHECK(y.shape() == TensorShape({rows * n, 3}));
          return y;
        });
        std::vector<double> concat;
        for (int r = 0; r < n; ++r) {
          for (double v : AsDoubles(Input(dt, shape, r))) concat.push_back(v);
        }
        for (const Tensor& t : gathered) {
          CHECK(t.shape() == TensorShape({rows * n, 3}));
          CHECK(AsDoubles(t) == concat);
        }

        auto scattered = RunMembers(n, dt, shape, [&](const Scope& d, Output x, int r) {
          return ops::ReduceScatter(d, x, Group(n), 5, r, "Add", "Id");
        });
        const std::vector<double> sum = Reduced(dt, shape, n, "Add", false);
        std::vector<double> joined;
        for (int r = 0; r < n; ++r) {
          int64_t start, count;
          ScatterRows(rows, n, r, &start, &count);
          CHECK(scattered[static_cast<size_t>(r)].shape() == TensorShape({count, 3}));
          CHECK(count == rows / n + (r < rows % n ? 1 : 0));  // the first rows % n ranks get one more
          for (double v : AsDoubles(scattered[static_cast<size_t>(r)])) joined.push_back(v);
        }
        CHECK(joined == sum);
      }
    }
  }
}

TEST_CASE("collectives: 64 MiB all-reduce, ring (pipelined) and shared, bit-identical on every member") {
  const TensorShape shape({16 << 20});  // float32: 64 MiB
  for (const char* algorithm : {"ring", "shared"}) {
    auto outs = RunMembers(2, DType::kFloat32, shape, [&](const Scope& d, Output x, int r) {
      return ops::AllReduce(d, x, Group(2), 1, r, "Add", "Div", algorithm);
    });
    const Tensor a = Input(DType::kFloat32, shape, 0), b = Input(DType::kFloat32, shape, 1);
    const float* pa = a.data<float>();
    const float* pb = b.data<float>();
    const float* o = outs[0].data<float>();
    int64_t wrong = 0;
    for (int64_t i = 0; i < a.num_elements(); ++i) wrong += o[i] != (pa[i] + pb[i]) / 2.0f;
    CHECK(wrong == 0);
    CHECK(std::memcmp(outs[0].raw_data(), outs[1].raw_data(), outs[0].bytes()) == 0);
  }
}

TEST_CASE("collectives: the old rank-order results: shared equals the sequential sum bit for bit") {
  // Random floats, where the summation order shows in the last bits.
  const int n = 3;
  const TensorShape shape({1000});
  std::vector<Tensor> in;
  std::mt19937 rng(7);
  std::normal_distribution<float> dist;
  for (int r = 0; r < n; ++r) {
    Tensor t(DType::kFloat32, shape);
    for (int64_t i = 0; i < 1000; ++i) t.data<float>()[i] = dist(rng) * static_cast<float>(1 + i % 17);
    in.push_back(t);
  }
  Graph g;
  Scope s = Scope::Root(&g);
  std::vector<Output> outs;
  std::vector<std::pair<Output, Tensor>> feeds;
  for (int r = 0; r < n; ++r) {
    Scope d = s.WithDevice(Cpu(r)).NewSubScope(fmt::format("m{}", r));
    Output x = ops::Placeholder(d.WithOpName("x"), DType::kFloat32, shape);
    feeds.emplace_back(x, in[static_cast<size_t>(r)]);
    outs.push_back(ops::AllReduce(d, x, Group(n), 1, r));
  }
  Session sess(&g, {.num_cpu_devices = n});
  auto got = sess.Run(feeds, outs);
  for (int64_t i = 0; i < 1000; ++i) {
    float want = in[0].data<float>()[i];
    for (int r = 1; r < n; ++r) want += in[static_cast<size_t>(r)].data<float>()[i];
    for (int r = 0; r < n; ++r) REQUIRE(got[static_cast<size_t>(r)].data<float>()[i] == want);
  }
}

TEST_CASE("collectives: mismatched shapes and a missing member fail with a clear error in bounded time") {
  for (const char* algorithm : {"shared", "ring", "recursive_doubling"}) {
    CAPTURE(std::string(algorithm));
    Graph g;
    Scope s = Scope::Root(&g);
    Output a = ops::Placeholder(s.WithDevice(Cpu(0)).WithOpName("a"), DType::kFloat32, {6});
    Output b = ops::Placeholder(s.WithDevice(Cpu(1)).WithOpName("b"), DType::kFloat32, {2, 3});
    Output ya = ops::AllReduce(s.WithDevice(Cpu(0)).WithOpName("ya"), a, Group(2), 1, 0, "Add", "Id", algorithm);
    Output yb = ops::AllReduce(s.WithDevice(Cpu(1)).WithOpName("yb"), b, Group(2), 1, 1, "Add", "Id", algorithm);
    Session sess(&g, {.num_cpu_devices = 2});
    const Tensor six = Tensor::FromVector<float>({1, 2, 3, 4, 5, 6});
    CHECK_THROWS_WITH_AS(sess.Run({{a, six}, {b, Tensor::FromVector<float>({1, 2, 3, 4, 5, 6}, {2, 3})}}, {ya, yb}),
                         doctest::Contains("the members' inputs differ"), Error);
  }
  {  // different element counts
    Graph g;
    Scope s = Scope::Root(&g);
    Output a = ops::Placeholder(s.WithDevice(Cpu(0)).WithOpName("a"), DType::kFloat32, {-1});
    Output b = ops::Placeholder(s.WithDevice(Cpu(1)).WithOpName("b"), DType::kFloat32, {-1});
    Output ya = ops::AllGather(s.WithDevice(Cpu(0)), a, Group(2), 1, 0);
    Output yb = ops::AllGather(s.WithDevice(Cpu(1)), b, Group(2), 1, 1);
    Session sess(&g, {.num_cpu_devices = 2});
    CHECK_THROWS_WITH_AS(sess.Run({{a, Tensor::FromVector<float>({1, 2})}, {b, Tensor::FromVector<float>({1})}}, {ya, yb}),
                         doctest::Contains("the members' inputs differ"), Error);
  }
  for (const char* algorithm : {"shared", "ring"}) {  // rank 2 of 3 never comes
    CAPTURE(std::string(algorithm));
    Graph g;
    Scope s = Scope::Root(&g);
    std::vector<Output> outs;
    for (int r = 0; r < 2; ++r) {
      Output x = ops::Const(s.WithDevice(Cpu(r)), Tensor::FromVector<float>({1, 2, 3}));
      outs.push_back(ops::AllReduce(s.WithDevice(Cpu(r)), x, Group(3, /*timeout=*/0.3), 9, r, "Add", "Id", algorithm));
    }
    Session sess(&g, {.num_cpu_devices = 3});
    std::string message;
    Code code = Code::kOk;
    try {
      sess.Run({}, outs);
    } catch (const Error& e) {
      message = e.what();
      code = e.status().code();
    }
    CHECK(code == Code::kDeadlineExceeded);
    CHECK(message.find("group 3 instance 9") != std::string::npos);
    // shared: both wait for rank 2 itself; ring: rank 0 waits for its predecessor, rank 2
    CHECK(message.find("no message from rank") != std::string::npos);
    CHECK(message.find("rank 2 (/job:localhost/replica:0/task:0/device:CPU:2)") != std::string::npos);
  }
  {  // bad attrs
    Graph g;
    Scope s = Scope::Root(&g);
    Output x = ops::Const(s.WithDevice(Cpu(0)), 1.0f);
    ops::CollectiveGroup wrong = Group(2);
    std::swap(wrong.devices[0], wrong.devices[1]);
    Output y = ops::AllReduce(s.WithDevice(Cpu(0)), x, wrong, 1, 0);
    Session sess(&g, {.num_cpu_devices = 2});
    CHECK_THROWS_WITH_AS(sess.Run({}, {y}), doctest::Contains("but the node runs on"), Error);
  }
}

TEST_CASE("gradient buckets: reverse order, greedy up to the size; bucketed sums equal the per-gradient ones") {
  using train::PlanBuckets;
  CHECK(PlanBuckets({40, 120, 200, 800, 20}, 256) == std::vector<std::vector<int>>{{4}, {3}, {2}, {1, 0}});
  CHECK(PlanBuckets({40, 120, 20}, 1000) == std::vector<std::vector<int>>{{2, 1, 0}});
  CHECK(PlanBuckets({40, 120}, 0) == std::vector<std::vector<int>>{{1}, {0}});

  const std::vector<TensorShape> shapes = {TensorShape({2, 5}), TensorShape({30}), TensorShape({50}),
                                           TensorShape({10, 20}), TensorShape({5})};
  auto run = [&](int64_t bucket_bytes, int* collectives) {
    Graph g;
    Scope s = Scope::Root(&g);
    std::vector<std::pair<Output, Tensor>> feeds;
    std::vector<Output> fetches;
    for (int r = 0; r < 2; ++r) {
      Scope d = s.WithDevice(Cpu(r)).NewSubScope(fmt::format("replica{}", r));
      std::vector<Output> grads;
      for (size_t i = 0; i < shapes.size(); ++i) {
        // Unknown static shapes, as gradients often have: the plan uses `shapes`.
        Output x = ops::Placeholder(d.WithOpName(fmt::format("g{}", i)), DType::kFloat32,
                                    TensorShape::UnknownOfRank(shapes[i].rank()));
        feeds.emplace_back(x, Input(DType::kFloat32, shapes[i], r * 10 + static_cast<int>(i)));
        grads.push_back(x);
      }
      for (Output y : train::AllReduceInBuckets(d, grads, shapes, Group(2), r, 1, bucket_bytes)) fetches.push_back(y);
    }
    *collectives = 0;
    for (Node* n : g.nodes()) *collectives += n->op() == "CollectiveReduce";
    Session sess(&g, {.num_cpu_devices = 2});
    return sess.Run(feeds, fetches);
  };
  int separate = 0, bucketed = 0;
  const std::vector<Tensor> a = run(0, &separate), b = run(256, &bucketed);
  CHECK(separate == 10);
  CHECK(bucketed == 8);  // per replica: {4}, {3}, {2}, {1, 0}
  REQUIRE(a.size() == b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    CHECK(b[i].shape() == shapes[i % shapes.size()]);
    CHECK(std::memcmp(a[i].raw_data(), b[i].raw_data(), a[i].bytes()) == 0);
  }
}

TEST_CASE("collectives: Session::Cancel ends a collective that waits for a member") {
  Graph g;
  Scope s = Scope::Root(&g);
  std::vector<Output> outs;
  for (int r = 0; r < 2; ++r) {  // rank 2 of 3 never comes; the timeout is far away
    Output x = ops::Const(s.WithDevice(Cpu(r)), Tensor::FromVector<float>({1, 2, 3}));
    outs.push_back(ops::AllReduce(s.WithDevice(Cpu(r)), x, Group(3, /*timeout=*/120), 1, r));
  }
  Session sess(&g, {.num_cpu_devices = 3});
  std::atomic<bool> finished{false};
  std::thread canceller([&] {  // until the step has seen it (Cancel only reaches running steps)
    while (!finished) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      sess.Cancel(errors::Cancelled("stop waiting"));
    }
  });
  Code code = Code::kOk;
  try {
    sess.Run({}, outs);
  } catch (const Error& e) {
    code = e.status().code();
    CHECK(std::string(e.what()).find("stop waiting") != std::string::npos);
  }
  finished = true;
  canceller.join();
  CHECK(code == Code::kCancelled);
}

TEST_CASE("collectives: hierarchical all-reduce when tasks have several members (2x2, 1+2)") {
  // Devices of two tasks; one LocalRendezvous stands for the step's rendezvous of both.
  const std::vector<std::vector<std::string>> layouts = {
      {"/job:worker/replica:0/task:0/device:CPU:0", "/job:worker/replica:0/task:0/device:CPU:1",
       "/job:worker/replica:0/task:1/device:CPU:0", "/job:worker/replica:0/task:1/device:CPU:1"},
      {"/job:worker/replica:0/task:0/device:CPU:0", "/job:worker/replica:0/task:1/device:CPU:0",
       "/job:worker/replica:0/task:1/device:CPU:1"}};
  for (const auto& devices : layouts) {
    for (int64_t elems : {0, 7, 100000}) {
      const int n = static_cast<int>(devices.size());
      CAPTURE(n);
      CAPTURE(elems);
      const TensorShape shape({elems});
      CollectiveContext context;  // outlives the rendezvous, which releases the members
      LocalRendezvous rendezvous;
      std::vector<std::future<Tensor>> results;
      std::vector<std::thread> threads;
      for (int r = 0; r < n; ++r) {
        CollectiveParams p;
        p.what = "test";
        p.group_size = n;
        p.rank = r;
        p.group_key = 1;
        p.instance_key = 1;
        p.devices = devices;
        p.divide = true;
        p.chunk_bytes = 4096;
        p.timeout = std::chrono::seconds(20);
        REQUIRE(ChooseAllReduce(p, elems * 4) == "hierarchical");
        auto promise = std::make_shared<std::promise<Tensor>>();
        results.push_back(promise->get_future());
        threads.emplace_back([p, promise, &context, &rendezvous, dt = DType::kFloat32, shape, r] {
          auto c = Collective::Create(p, &context, &rendezvous, [promise](const Status& s, const Tensor& out) {
            if (s.ok()) {
              promise->set_value(out);
            } else {
              promise->set_exception(std::make_exception_ptr(Error(s)));
            }
          });
          c->Start(dt);
          HierarchicalAllReduce(c, Input(dt, shape, r));
          c->EndStart();
        });
      }
      for (std::thread& t : threads) t.join();
      std::vector<Tensor> outs;
      for (auto& f : results) {
        REQUIRE(f.wait_for(std::chrono::seconds(30)) == std::future_status::ready);
        outs.push_back(f.get());
      }
      // Inputs are small integers, so any order of summation gives the exact mean.
      const std::vector<double> want = Reduced(DType::kFloat32, shape, n, "Add", true);
      for (const Tensor& t : outs) {
        CHECK(AsDoubles(t) == want);
        CHECK(std::memcmp(t.raw_data(), outs[0].raw_data(), t.bytes()) == 0);
      }
    }
  }
}

TEST_CASE("collectives: a member reducing on the host refuses a device tensor, naming it") {
  // Member 1's input labelled as device memory (host bytes: no GPU needed); member 0 reduces on
  // the host (HostReducer) and must not read it as host memory.
  const std::vector<std::string> devices = {"/job:worker/replica:0/task:0/device:CPU:0",
                                            "/job:worker/replica:0/task:1/device:GPU:0"};
  CollectiveContext context;  // outlives the rendezvous, which releases the members
  LocalRendezvous rendezvous;
  std::vector<std::future<Status>> results;
  std::vector<std::thread> threads;
  for (int r = 0; r < 2; ++r) {
    CollectiveParams p;
    p.what = "mixed";
    p.group_size = 2;
    p.rank = r;
    p.group_key = 1;
    p.instance_key = 1;
    p.devices = devices;
    p.timeout = std::chrono::seconds(5);
    const Tensor host = Input(DType::kFloat32, TensorShape({5}), r);
    const Tensor input = r == 0 ? host
                                : Tensor::FromBuffer(host.dtype(), host.shape(),
                                                     std::make_shared<Buffer>(host.raw_data(), host.bytes(),
                                                                              MemoryKind::kDevice, [host] {}));
    auto promise = std::make_shared<std::promise<Status>>();
    results.push_back(promise->get_future());
    threads.emplace_back([p, promise, &context, &rendezvous, input] {
      auto c = Collective::Create(p, &context, &rendezvous,
                                  [promise](const Status& s, const Tensor&) { promise->set_value(s); });
      c->Start(DType::kFloat32);
      RecursiveDoublingAllReduce(c, input);
      c->EndStart();
    });
  }
  for (std::thread& t : threads) t.join();
  REQUIRE(results[0].wait_for(std::chrono::seconds(20)) == std::future_status::ready);
  const Status s = results[0].get();
  CHECK(s.code() == Code::kInvalidArgument);
  CHECK_MESSAGE(s.message().find("received a device tensor") != std::string::npos, s.message());
  CHECK_MESSAGE(s.message().find("from member 1") != std::string::npos, s.message());
  REQUIRE(results[1].wait_for(std::chrono::seconds(20)) == std::future_status::ready);
}

TEST_CASE("collectives: each Session owns its collective context; a step's collectives run on its Session's") {
  Graph g;
  Scope s = Scope::Root(&g);
  std::vector<Output> outs;
  for (int r = 0; r < 2; ++r) {
    Output x = ops::Const(s.WithDevice(Cpu(r)), Tensor::FromVector<float>({1.0f + r, 2}));
    outs.push_back(ops::AllReduce(s.WithDevice(Cpu(r)), x, Group(2), 1, r));
  }
  Session a(&g, {.num_cpu_devices = 2});
  Session b(&g, {.num_cpu_devices = 2});
  CHECK(&a.collectives() != &b.collectives());
  // Threads start with the first collective, so a Session that ran none has none.
  CHECK_FALSE(a.collectives().watchdog_started());
  CHECK_FALSE(b.collectives().watchdog_started());
  CHECK(a.collectives().active_seconds() == 0);
  for (const Tensor& t : a.Run({}, outs)) CHECK(t.ToVector<float>() == std::vector<float>{3, 4});
  CHECK(a.collectives().watchdog_started());
  CHECK(a.collectives().active_seconds() > 0);  // the step's all-reduce ran on a's context
  CHECK(b.collectives().active_seconds() == 0);
  CHECK_FALSE(b.collectives().watchdog_started());  // nothing of a's step went through b's context
  for (const Tensor& t : b.Run({}, outs)) CHECK(t.ToVector<float>() == std::vector<float>{3, 4});
  CHECK(b.collectives().watchdog_started());
  // The members go once their last holder lets go (a pool task may still be ending).
  for (int i = 0; i < 500 && a.collectives().num_live() + b.collectives().num_live() > 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  CHECK(a.collectives().num_live() == 0);
  CHECK(b.collectives().num_live() == 0);
}

TEST_CASE("collectives: a step without a collective context fails the collective kernel clearly") {
  auto graph = std::make_unique<Graph>();
  Scope s = Scope::Root(graph.get()).WithDevice(Cpu(0));
  Output x = ops::Const(s, Tensor::FromVector<float>({1, 2}));
  Output y = ops::AllReduce(s.WithOpName("sum"), x, Group(2), 1, 0);
  ops::Identity(s.WithOpName("out"), y);
  ThreadPool pool(1);
  DeviceContext device;
  device.device_name = Cpu(0);
  device.intra_op = &pool;
  auto exec = Executor::Create(std::move(graph), device, &pool);
  LocalRendezvous rendezvous;
  const Status status = exec->Run({.step_id = 1, .rendezvous = &rendezvous});
  CHECK(status.code() == Code::kFailedPrecondition);
  CHECK_MESSAGE(status.message().find("no collective context in this step") != std::string::npos, status.message());
}

TEST_CASE("collectives: a context's destructor cancels the collectives still running and waits until they are gone") {
  auto context = std::make_unique<CollectiveContext>();
  LocalRendezvous rendezvous;
  CollectiveParams p;
  p.what = "orphan";
  p.group_size = 2;
  p.devices = {Cpu(0), Cpu(1)};
  p.timeout = std::chrono::seconds(120);  // far away: only the destructor ends it
  std::promise<Status> ended;
  auto c = Collective::Create(p, context.get(), &rendezvous, [&](const Status& st, const Tensor&) { ended.set_value(st); });
  c->Start(DType::kFloat32);
  c->EndStart();
  CHECK(context->num_live() == 1);
  std::atomic<bool> destroyed{false};
  std::thread closer([&] {
    context.reset();
    destroyed = true;
  });
  std::future<Status> f = ended.get_future();
  REQUIRE(f.wait_for(std::chrono::seconds(20)) == std::future_status::ready);
  CHECK(f.get().code() == Code::kCancelled);
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  CHECK_FALSE(destroyed.load());  // this test still holds the collective
  c.reset();
  closer.join();
  CHECK(destroyed.load());
}

TEST_CASE("collectives: a context's active time counts overlapping collectives once and stops when idle") {
  CollectiveContext ctx;
  using std::chrono::milliseconds;
  const auto t0 = std::chrono::steady_clock::now();
  ctx.BeginActive();
  ctx.BeginActive();  // two members at once: one interval
  std::this_thread::sleep_for(milliseconds(40));
  ctx.EndActive();
  CHECK(ctx.active_seconds() >= 0.040);  // still one running: the open interval counts
  std::this_thread::sleep_for(milliseconds(20));
  ctx.EndActive();
  const double active = ctx.active_seconds();
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  CHECK(active >= 0.060);
  CHECK(active <= elapsed);  // counted once, never twice for the two members
  std::this_thread::sleep_for(milliseconds(20));
  CHECK(ctx.active_seconds() == active);  // idle time is not active
}

TEST_CASE("collectives: ring all-gather and reduce-scatter (members of several tasks) equal the closed form") {
  // Every member in a task of its own: the kernels pick the ring (ChooseGather), as across processes;
  // one LocalRendezvous stands for the step's rendezvous of all of them.
  for (int n = 2; n <= 4; ++n) {
    std::vector<std::string> devices;
    for (int r = 0; r < n; ++r) devices.push_back(fmt::format("/job:worker/replica:0/task:{}/device:CPU:0", r));
    for (DType dt : {DType::kFloat32, DType::kInt64}) {
      for (int64_t rows : {0, 1, 7, 64}) {
        for (const bool gather : {true, false}) {
          CAPTURE(n);
          CAPTURE(rows);
          CAPTURE(gather);
          const TensorShape shape({rows, 3});
          CollectiveContext context;  // outlives the rendezvous, which releases the members
          LocalRendezvous rendezvous;
          std::vector<std::future<Tensor>> results;
          std::vector<std::thread> threads;
          for (int r = 0; r < n; ++r) {
            CollectiveParams p{.what = "test", .group_size = n, .rank = r, .group_key = 1, .instance_key = 1,
                               .devices = devices, .divide = !gather && dt == DType::kInt64};
            REQUIRE(ChooseGather(p) == "ring");
            auto promise = std::make_shared<std::promise<Tensor>>();
            results.push_back(promise->get_future());
            threads.emplace_back([p, promise, &context, &rendezvous, dt, shape, r, gather] {
              auto c = Collective::Create(p, &context, &rendezvous, [promise](const Status& s, const Tensor& out) {
                if (s.ok()) {
                  promise->set_value(out);
                } else {
                  promise->set_exception(std::make_exception_ptr(Error(s)));
                }
              });
              c->Start(dt);
              gather ? RingAllGather(c, Input(dt, shape, r)) : RingReduceScatter(c, Input(dt, shape, r));
              c->EndStart();
            });
          }
          for (std::thread& t : threads) t.join();
          std::vector<double> joined;
          for (int r = 0; r < n; ++r) {
            REQUIRE(results[static_cast<size_t>(r)].wait_for(std::chrono::seconds(30)) == std::future_status::ready);
            const Tensor t = results[static_cast<size_t>(r)].get();
            if (gather) {
              CHECK(t.shape() == TensorShape({rows * n, 3}));
              std::vector<double> concat;
              for (int q = 0; q < n; ++q) {
                for (double v : AsDoubles(Input(dt, shape, q))) concat.push_back(v);
              }
              CHECK(AsDoubles(t) == concat);
            } else {
              int64_t start, count;
              ScatterRows(rows, n, r, &start, &count);
              CHECK(t.shape() == TensorShape({count, 3}));
              for (double v : AsDoubles(t)) joined.push_back(v);
            }
          }
          // Small integers: any order of summation gives the exact sum (int64: the mean, truncated).
          if (!gather) CHECK(joined == Reduced(dt, shape, n, "Add", dt == DType::kInt64));
        }
      }
    }
  }
  // Members whose inputs differ: an error naming both, on the member that compares.
  const std::vector<std::string> two = {"/job:worker/replica:0/task:0/device:CPU:0",
                                        "/job:worker/replica:0/task:1/device:CPU:0"};
  CollectiveContext context;
  LocalRendezvous rendezvous;
  std::vector<std::future<Status>> ends;
  for (int r = 0; r < 2; ++r) {
    CollectiveParams p{.what = "gather", .group_size = 2, .rank = r, .group_key = 1, .instance_key = 2,
                       .devices = two, .timeout = std::chrono::seconds(5)};
    auto promise = std::make_shared<std::promise<Status>>();
    ends.push_back(promise->get_future());
    auto c = Collective::Create(p, &context, &rendezvous, [promise](const Status& s, const Tensor&) { promise->set_value(s); });
    c->Start(DType::kFloat32);
    RingAllGather(c, Input(DType::kFloat32, TensorShape({r == 0 ? 2 : 3, 2}), r));
    c->EndStart();
  }
  const Status s0 = ends[0].get(), s1 = ends[1].get();
  CHECK_FALSE(s0.ok());
  CHECK_FALSE(s1.ok());
  const std::string both = s0.ToString() + " | " + s1.ToString();
  CHECK_MESSAGE(both.find("the members' inputs differ") != std::string::npos, both);
}
