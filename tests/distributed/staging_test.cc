// The chunk pipeline of the staged GPU path (distributed/ucx/staging.h), on the host: chunk
// boundaries, slot reuse only after a chunk is through, first stages in order, sizes that are not
// a multiple of the chunk, 0 bytes, errors; and bytes copied through bounce buffers by the host
// DeviceCopier arrive intact.
#include <doctest/doctest.h>

#include <cstring>
#include <future>
#include <mutex>
#include <vector>

#include "core/gpu.h"
#include "core/threadpool.h"
#include "distributed/ucx/staging.h"

#if WEFT_CUDA
#include "core/cuda/gpu_context.h"
#endif

using namespace weft;

TEST_CASE("staging: chunk plans cover the bytes exactly, the last chunk shorter") {
  const ChunkPlan empty{0, 4096};
  CHECK(empty.num_chunks() == 0);
  const ChunkPlan exact{8192, 4096};
  CHECK(exact.num_chunks() == 2);
  CHECK(exact.size(1) == 4096);
  const ChunkPlan ragged{10, 4};
  REQUIRE(ragged.num_chunks() == 3);
  CHECK(ragged.offset(2) == 8);
  CHECK(ragged.size(0) == 4);
  CHECK(ragged.size(2) == 2);
  const ChunkPlan small{3, 4096};
  CHECK(small.num_chunks() == 1);
  CHECK(small.size(0) == 3);
}

TEST_CASE("staging: 0 bytes finish at once without a stage") {
  int stages = 0, finished = 0;
  Status got = errors::Internal("not called");
  ChunkPipeline::Run({0, 4096}, 4, [&](size_t, size_t, ChunkPipeline::Done d) { stages++; d(Status()); },
                     [&](size_t, size_t, ChunkPipeline::Done d) { stages++; d(Status()); },
                     [&](const Status& s) { finished++; got = s; });
  CHECK(stages == 0);
  CHECK(finished == 1);
  CHECK(got.ok());
}

// Stages that complete only when the test says so, to check what may start when.
struct Deferred {
  std::vector<std::string> log;               // "f3@1" first stage of chunk 3 in slot 1, "s3@1" second
  std::vector<std::pair<size_t, ChunkPipeline::Done>> firsts, seconds;
  std::vector<bool> slot_busy;
  bool slot_clash = false;
  int finished = 0;
  Status status;

  explicit Deferred(size_t depth) : slot_busy(depth, false) {}
  void Run(ChunkPlan plan, size_t depth) {
    ChunkPipeline::Run(
        plan, depth,
        [this](size_t i, size_t slot, ChunkPipeline::Done d) {
          log.push_back(fmt::format("f{}@{}", i, slot));
          slot_clash |= slot_busy[slot];
          slot_busy[slot] = true;
          firsts.emplace_back(i, std::move(d));
        },
        [this](size_t i, size_t slot, ChunkPipeline::Done d) {
          log.push_back(fmt::format("s{}@{}", i, slot));
          seconds.emplace_back(slot, std::move(d));
        },
        [this](const Status& s) {
          finished++;
          status = s;
        });
  }
  void FinishFirst(size_t k, const Status& s = Status()) {
    auto d = std::move(firsts[k].second);
    d(s);
  }
  void FinishSecond(size_t k, const Status& s = Status()) {
    slot_busy[seconds[k].first] = false;
    auto d = std::move(seconds[k].second);
    d(s);
  }
};

TEST_CASE("staging: at most `depth` chunks in flight, first stages in order, a slot reused after its chunk is through") {
  Deferred p(2);
  p.Run({10 * 4096 + 5, 4096}, 2);  // 11 chunks, the last of 5 bytes
  REQUIRE(p.firsts.size() == 2);    // chunks 0 and 1 only: two slots
  CHECK(p.log == std::vector<std::string>{"f0@0", "f1@1"});
  p.FinishFirst(1);                 // chunk 1's copy ends first: its send starts, chunk 2 still waits
  CHECK(p.firsts.size() == 2);
  CHECK(p.log.back() == "s1@1");
  p.FinishSecond(0);                // chunk 1 sent, but slots free up in order: chunk 0 holds slot 0
  CHECK(p.firsts.size() == 2);
  p.FinishFirst(0);
  p.FinishSecond(1);                // chunk 0 sent: slots 0 and 1 free (chunks 0 and 1 are through)
  REQUIRE(p.firsts.size() == 4);
  CHECK(p.log[p.log.size() - 2] == "f2@0");
  CHECK(p.log.back() == "f3@1");
  size_t first = 2, second = 2;
  while (first < p.firsts.size() || second < p.seconds.size()) {
    if (first < p.firsts.size()) p.FinishFirst(first++);
    if (second < p.seconds.size()) p.FinishSecond(second++);
  }
  CHECK(p.firsts.size() == 11);
  CHECK(p.seconds.size() == 11);
  CHECK_FALSE(p.slot_clash);
  CHECK(p.finished == 1);
  CHECK(p.status.ok());
  std::vector<std::string> order;
  for (const auto& e : p.log) {
    if (e[0] == 'f') order.push_back(e);
  }
  for (size_t i = 0; i < order.size(); ++i) CHECK(order[i] == fmt::format("f{}@{}", i, i % 2));
}

TEST_CASE("staging: an error stops new chunks and finishes once, after the chunks in flight") {
  Deferred p(3);
  p.Run({20 * 4096, 4096}, 3);
  REQUIRE(p.firsts.size() == 3);
  p.FinishFirst(0);
  p.FinishFirst(1);
  p.FinishSecond(1, errors::Unavailable("peer gone"));  // chunk 1's send fails
  CHECK(p.finished == 0);                                // chunks 0 (send) and 2 (copy) still run
  p.FinishFirst(2);                                      // ends without a send
  CHECK(p.seconds.size() == 2);
  CHECK(p.finished == 0);
  p.FinishSecond(0);
  CHECK(p.finished == 1);
  CHECK(p.status.code() == Code::kUnavailable);
  CHECK_MESSAGE(p.status.message().find("chunk 1 of 20") != std::string::npos, p.status.message());
  CHECK(p.firsts.size() == 3);  // nothing new started
}

TEST_CASE("staging: device -> bounce -> destination through the host copier, any size") {
  ThreadPool pool(2, "copier");
  std::shared_ptr<DeviceCopier> copier = NewHostCopier(&pool);
  const size_t chunk = 4096;
  for (size_t total : {size_t{0}, size_t{1}, chunk - 1, chunk, chunk + 1, 5 * chunk + 3, size_t{1} << 20}) {
    CAPTURE(total);
    std::vector<uint8_t> src(total), dst(total, 0xEE);
    for (size_t i = 0; i < total; ++i) src[i] = static_cast<uint8_t>(i * 7 + (i >> 12));
    const size_t depth = 3;
    std::vector<void*> bounce;
    for (size_t i = 0; i < depth; ++i) bounce.push_back(copier->AllocateHost(chunk));
    const ChunkPlan plan{total, chunk};
    std::mutex mu;
    std::vector<size_t> sent;  // chunks in the order their second stage ran
    auto done = std::make_shared<std::promise<Status>>();
    ChunkPipeline::Run(
        plan, depth,
        [&](size_t i, size_t slot, ChunkPipeline::Done d) {
          copier->ToHost(src.data() + plan.offset(i), bounce[slot], plan.size(i), std::move(d));
        },
        [&](size_t i, size_t slot, ChunkPipeline::Done d) {
          {
            std::lock_guard<std::mutex> l(mu);
            sent.push_back(i);
          }
          copier->ToDevice(bounce[slot], dst.data() + plan.offset(i), plan.size(i), std::move(d));
        },
        [done](const Status& s) { done->set_value(s); });
    auto f = done->get_future();
    REQUIRE(f.wait_for(std::chrono::seconds(20)) == std::future_status::ready);
    CHECK(f.get().ok());
    CHECK(sent.size() == plan.num_chunks());
    CHECK(dst == src);
    for (void* b : bounce) copier->FreeHost(b, chunk);
  }
}

TEST_CASE("staging: a process without a usable GPU gets no copier; with some, the CUDA copier over all of them") {
  CHECK(SelectDeviceCopier({}) == nullptr);  // GPU tensors cannot exist: the transport is unchanged
  const std::vector<std::shared_ptr<GpuContext>> gpus = OpenGpus();
  REQUIRE(static_cast<int>(gpus.size()) == ProbeGpus().count);  // one source of truth (core/gpu.h)
  std::shared_ptr<DeviceCopier> copier = SelectDeviceCopier(gpus);
  if (gpus.empty()) {
    CHECK(copier == nullptr);
    MESSAGE("no GPU here (" << ProbeGpus().reason << "): the CUDA copier's copies are checked on a GPU machine");
    return;
  }
#if WEFT_CUDA
  REQUIRE(copier != nullptr);
  CHECK(copier->Name().rfind("cuda:", 0) == 0);
#else
  CHECK(copier == nullptr);  // a build without CUDA never stages
#endif
}

TEST_CASE("the staging copier copies a GPU:1 tensor after GPU:1's queued work") {
#if WEFT_CUDA
  if (ProbeGpus().count < 2) {
    MESSAGE("SKIPPED (needs two GPUs): " << ProbeGpus().count << " usable; " << NoGpuMessage());
    return;
  }
  const std::vector<std::shared_ptr<GpuContext>> gpus = OpenGpus();
  std::shared_ptr<DeviceCopier> copier = SelectDeviceCopier(gpus);
  REQUIRE(copier != nullptr);
  Tensor host(DType::kFloat32, {1 << 20});
  for (int64_t i = 0; i < host.num_elements(); ++i) host.data<float>()[i] = static_cast<float>(i % 1000);
  const Tensor on1 = gpus[1]->CopyToDevice(host);
  void* bounce = copier->AllocateHost(host.bytes());
  auto done = std::make_shared<std::promise<Status>>();
  copier->ToHost(on1.raw_data(), bounce, host.bytes(), [done](const Status& s) { done->set_value(s); });
  const Status s = done->get_future().get();
  CHECK_MESSAGE(s.ok(), s.ToString());
  CHECK(std::memcmp(bounce, host.raw_data(), host.bytes()) == 0);
  copier->FreeHost(bounce, host.bytes());
#else
  MESSAGE("SKIPPED (needs two GPUs): built without CUDA");  // (no CUDA copier)
#endif
}
