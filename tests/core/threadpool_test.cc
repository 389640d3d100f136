#include <doctest/doctest.h>

#include <atomic>
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
