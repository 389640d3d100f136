// The collective algorithms with members that reduce on a GPU (NewCudaReducer: merges as CUDA
// kernels on the compute stream) against the same members on the host: the same bits. Needs a
// GPU: without one every case says so (MESSAGE "SKIPPED ...") and returns.
#include <doctest/doctest.h>

#include <cstring>
#include <functional>
#include <future>
#include <thread>

#include "core/gpu.h"
#include "runtime/collectives/algorithms.h"
#include "runtime/rendezvous.h"
#include "tests/cuda/gpu_test_util.h"
#if WEFT_CUDA
#include "ops/kernels/cuda/gpu_kernel.h"
#endif

using namespace weft;
using namespace weft::test;

namespace {

#if WEFT_CUDA
using Algorithm = std::function<void(const std::shared_ptr<Collective>&, const Tensor&)>;

Tensor Input(DType dt, int64_t elems, int r) {
  Tensor t(dt, TensorShape({elems}));
  for (int64_t i = 0; i < elems; ++i) {
    const int v = static_cast<int>((i * 7 + r * 13) % 29) - 9;
    if (dt == DType::kFloat32) t.data<float>()[i] = static_cast<float>(v) * 0.5f;
    if (dt == DType::kInt64) t.data<int64_t>()[i] = v;
  }
  return t;
}

// Every member's output (on the host), the members on `devices` reducing with `reducer`.
std::vector<Tensor> Run(const std::vector<std::string>& devices, const std::shared_ptr<const Reducer>& reducer,
                        GpuContext* gpu, DType dt, int64_t elems, MergeOp merge, bool divide, const Algorithm& algo) {
  const int n = static_cast<int>(devices.size());
  CollectiveContext context;  // outlives the rendezvous, which releases the members
  LocalRendezvous rendezvous;
  std::vector<std::future<Tensor>> results;
  std::vector<std::thread> threads;
  for (int r = 0; r < n; ++r) {
    CollectiveParams p;
    p.what = "gpu test";
    p.group_size = n;
    p.rank = r;
    p.group_key = 1;
    p.instance_key = 1;
    p.devices = devices;
    p.merge = merge;
    p.divide = divide;
    p.chunk_bytes = 4096;
    p.timeout = std::chrono::seconds(20);
    p.reducer = reducer;
    const Tensor host = Input(dt, elems, r);
    const Tensor input = reducer->on_host() ? host : gpu->CopyToDevice(host);
    auto promise = std::make_shared<std::promise<Tensor>>();
    results.push_back(promise->get_future());
    threads.emplace_back([p, promise, &context, &rendezvous, dt, input, algo, gpu] {
      auto c = Collective::Create(p, &context, &rendezvous, [promise, gpu](const Status& s, const Tensor& out) {
        if (!s.ok()) {
          promise->set_exception(std::make_exception_ptr(Error(s)));
        } else {
          promise->set_value(out.memory_kind() == MemoryKind::kDevice ? gpu->CopyToHost(out) : out);
        }
      });
      c->Start(dt);
      p.reducer->InputReady();
      algo(c, input);
      c->EndStart();
    });
  }
  for (std::thread& t : threads) t.join();
  std::vector<Tensor> outs;
  for (auto& f : results) {
    REQUIRE(f.wait_for(std::chrono::seconds(30)) == std::future_status::ready);
    outs.push_back(f.get());
  }
  return outs;
}
#endif

}  // namespace

TEST_CASE("collectives on a GPU: ring, recursive doubling, hierarchical, reduce-scatter, all-gather equal the host") {
  if (!HaveGpu()) return;
#if WEFT_CUDA
  GpuContext* gpu = OpenGpus().at(0).get();
  const std::vector<std::string> three = {"/job:worker/replica:0/task:0/device:GPU:0",
                                          "/job:worker/replica:0/task:1/device:GPU:0",
                                          "/job:worker/replica:0/task:2/device:GPU:0"};
  const std::vector<std::string> two_tasks = {"/job:worker/replica:0/task:0/device:GPU:0",
                                              "/job:worker/replica:0/task:0/device:GPU:1",
                                              "/job:worker/replica:0/task:1/device:GPU:0"};
  struct Case {
    const char* name;
    const std::vector<std::string>* devices;
    Algorithm algo;
  };
  const std::vector<Case> cases = {{"ring", &three, RingAllReduce},
                                   {"recursive_doubling", &three, RecursiveDoublingAllReduce},
                                   {"hierarchical", &two_tasks, HierarchicalAllReduce},
                                   {"reduce_scatter", &three, ReduceScatter},
                                   {"all_gather", &three, AllGather},
                                   {"broadcast", &three, Broadcast}};
  const std::shared_ptr<const Reducer> device = NewCudaReducer(gpu);
  CHECK(!device->on_host());
  for (const Case& c : cases) {
    for (DType dt : {DType::kFloat32, DType::kInt64}) {
      for (MergeOp merge : {MergeOp::kAdd, MergeOp::kMax, MergeOp::kMin}) {
        for (int64_t elems : {int64_t{0}, int64_t{7}, int64_t{30001}}) {
          const bool divide = merge == MergeOp::kAdd;
          CAPTURE(c.name);
          CAPTURE(DTypeName(dt));
          CAPTURE(static_cast<int>(merge));
          CAPTURE(elems);
          const std::vector<Tensor> want = Run(*c.devices, HostReducer(), gpu, dt, elems, merge, divide, c.algo);
          const std::vector<Tensor> got = Run(*c.devices, device, gpu, dt, elems, merge, divide, c.algo);
          REQUIRE(got.size() == want.size());
          for (size_t r = 0; r < got.size(); ++r) {
            CHECK(got[r].shape() == want[r].shape());
            CHECK(std::memcmp(got[r].raw_data(), want[r].raw_data(), want[r].bytes()) == 0);
          }
        }
      }
    }
  }
#endif
}
