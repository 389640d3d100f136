#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <future>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <vector>

#include "core/cancellation.h"
#include "core/threadpool.h"

using namespace weft;

TEST_CASE("ParallelFor covers every index exactly once") {
  ThreadPool pool(2);
  std::vector<std::atomic<int>> hits(1001);
  pool.ParallelFor(1001, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) hits[i]++;
  });
  for (auto& h : hits) CHECK(h.load() == 1);
}

TEST_CASE("ParallelFor does not wait for helpers queued behind other work") {
  // Both pool threads are held by long tasks (a GEMM's blocks from another kernel, say): the
  // caller must run every range itself instead of waiting for its helpers to get a thread.
  ThreadPool pool(2);
  std::mutex mu;
  std::condition_variable cv;
  bool release = false;
  std::atomic<int> holding{0};
  for (int i = 0; i < 2; ++i) {
    pool.Schedule([&] {
      holding++;
      std::unique_lock<std::mutex> l(mu);
      cv.wait(l, [&] { return release; });
    });
  }
  while (holding.load() < 2) std::this_thread::yield();
  std::vector<std::atomic<int>> hits(1000);
  auto result = std::async(std::launch::async, [&] {
    pool.ParallelFor(1000, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) hits[i]++;
    });
  });
  const bool finished = result.wait_for(std::chrono::seconds(10)) == std::future_status::ready;
  {
    std::lock_guard<std::mutex> l(mu);
    release = true;
  }
  cv.notify_all();
  REQUIRE(finished);
  for (auto& h : hits) CHECK(h.load() == 1);
}

TEST_CASE("ParallelFor rethrows the first exception after its ranges end") {
  ThreadPool pool(2);
  std::vector<std::atomic<int>> hits(400);
  CHECK_THROWS_WITH_AS(pool.ParallelFor(400,
                                        [&](int64_t b, int64_t e) {
                                          for (int64_t i = b; i < e; ++i) hits[i]++;
                                          if (b <= 150 && 150 < e) throw std::runtime_error("range with 150");
                                        }),
                       "range with 150", std::runtime_error);
  for (auto& h : hits) CHECK(h.load() <= 1);
  CHECK(hits[150].load() == 1);
  // The pool still works afterwards (no helper left waiting on the failed call).
  std::atomic<int64_t> sum{0};
  pool.ParallelFor(100, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) sum += i;
  });
  CHECK(sum.load() == 4950);
}

TEST_CASE("Schedule runs work on the pool's threads and the destructor drains it") {
  std::atomic<int> count{0};
  std::atomic<int> in_pool{0};
  {
    ThreadPool pool(2);
    CHECK_FALSE(pool.InPool());
    for (int i = 0; i < 100; ++i) {
      pool.Schedule([&, p = &pool] {
        in_pool += p->InPool();
        count++;
      });
    }
  }
  CHECK(count.load() == 100);
  CHECK(in_pool.load() == 100);
}

TEST_CASE("cancellation runs callbacks once and keeps the first status") {
  CancellationManager cm;
  int calls = 0;
  Status seen;
  auto token = cm.RegisterCallback([&](const Status& s) {
    calls++;
    seen = s;
  });
  int other = 0;
  auto t2 = cm.RegisterCallback([&](const Status&) { other++; });
  cm.DeregisterCallback(t2);
  (void)token;
  CHECK(cm.StartCancel(errors::Aborted("first")));
  CHECK_FALSE(cm.StartCancel(errors::Aborted("second")));
  CHECK(calls == 1);
  CHECK(other == 0);
  CHECK(seen.message() == "first");
  int late = 0;
  cm.RegisterCallback([&](const Status& s) { late += s.message() == "first"; });
  CHECK(late == 1);
}
