// HangReporter (distributed/hang_report.h): a report on request, on SIGUSR1 from the reporter's
// own thread, one listener per process, and SIGUSR1 harmless once no reporter listens.
#include <doctest/doctest.h>
#include <fmt/format.h>

#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <functional>
#include <fstream>
#include <thread>

#include "core/heap_count.h"
#include "distributed/hang_report.h"
#include "distributed/multi_worker_strategy.h"
#include "tests/distributed/child_process.h"

using namespace weft;

namespace {

std::string ReadAll(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

bool WaitFor(const std::function<bool()>& ready) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!ready()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return true;
}

}  // namespace

TEST_CASE("hang report: written on request and on SIGUSR1, from the reporter's own thread") {
  const std::string dir = std::filesystem::temp_directory_path() / fmt::format("weft_hang_{}", getpid());
  std::filesystem::create_directories(dir);
  const std::string path = dir + "/weft-hang-worker-0.txt";
  std::atomic<int> calls{0};
  std::thread::id built_on;
  {
    HangReporter r({.path = path}, [&](std::string_view why, ReportText* out) {
      calls++;
      built_on = std::this_thread::get_id();
      out->Append("waits for: worker:1 ({})\n", why);
    });
    REQUIRE(r.listening());
    r.Report("step 3 passed its deadline");
    CHECK(ReadAll(path) == "waits for: worker:1 (step 3 passed its deadline)\n");
    CHECK(built_on == std::this_thread::get_id());
    // A second reporter in the process reports when asked, but does not take the signal.
    HangReporter other({.path = dir + "/other.txt"}, [](std::string_view, ReportText* out) { out->Append("other\n"); });
    CHECK(!other.listening());
    REQUIRE(raise(SIGUSR1) == 0);
    REQUIRE(WaitFor([&] { return r.num_reports() == 2; }));
    CHECK(ReadAll(path) == "waits for: worker:1 (SIGUSR1 (a report on request))\n");
    CHECK(built_on != std::this_thread::get_id());
    CHECK(other.num_reports() == 0);
    CHECK(!std::filesystem::exists(path + ".tmp"));
  }
  // No reporter listens: the handler stays installed and does nothing.
  REQUIRE(raise(SIGUSR1) == 0);
  CHECK(calls == 2);
  std::filesystem::remove_all(dir);
}

TEST_CASE("hang report: SIGUSR1 while reporters come and go is harmless") {
  std::atomic<bool> stop{false};
  std::thread signaller([&] {
    while (!stop) {
      kill(getpid(), SIGUSR1);
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
  });
  int reports = 0;
  for (int i = 0; i < 50; ++i) {
    HangReporter r({.path = ""}, [](std::string_view, ReportText*) {});
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    reports += r.num_reports();
  }
  stop = true;
  signaller.join();
  MESSAGE(reports << " reports while 50 reporters came and went under a stream of SIGUSR1");
  CHECK(reports > 0);  // the signals were taken, and nothing broke
}

TEST_CASE("hang report: the launcher's summary names the rank everyone waits for") {
  const std::string r0 = "=== weft hang report: worker:0 (pid 1) ===\nwhy: step 5: DeadlineExceeded: x\n"
                         "last completed collective step: 4\nwaits for: worker:2\n";
  const std::string r1 = "=== weft hang report: worker:1 (pid 2) ===\nwhy: step 5: DeadlineExceeded: y\n"
                         "last completed collective step: 4\nwaits for: worker:0, worker:2\n";
  CHECK(SummarizeHangReports({{"worker:0", r0}, {"worker:1", r1}, {"worker:2", ""}}) ==
        "worker:0 waits for worker:2 (why: step 5: DeadlineExceeded: x)\n"
        "worker:1 waits for worker:0, worker:2 (why: step 5: DeadlineExceeded: y)\n"
        "worker:2 wrote no report\n"
        "the rank everyone waits for: worker:2 (it wrote no report: stopped, killed, or stuck)\n");
  const std::string r2 = "why: SIGUSR1 (a report on request)\nwaits for: worker:1\n";
  CHECK(SummarizeHangReports({{"worker:0", r0}, {"worker:2", r2}}) ==
        "worker:0 waits for worker:2 (why: step 5: DeadlineExceeded: x)\n"
        "worker:2 waits for worker:1 (why: SIGUSR1 (a report on request))\n"
        "most waited for: worker:1 (1 of 2 reports)\n");
  CHECK(SummarizeHangReports({{"worker:0", "why: SIGUSR1\nwaits for: nobody\n"}}) ==
        "worker:0 waits for nobody (why: SIGUSR1)\nno task waits for another\n");
}

// Two workers in this process, each its own transport on an ephemeral loopback port, started at
// once (each waits for the other); their hang reports go to `dir`, none on SIGUSR1.
namespace {

std::vector<std::unique_ptr<MultiWorkerMirroredStrategy>> TwoWorkers(const std::string& dir,
                                                                    std::chrono::milliseconds collective_timeout) {
  const std::vector<int> ports = test::FreeLoopbackPorts(2);
  const ClusterSpec spec({{"worker", {fmt::format("127.0.0.1:{}", ports[0]), fmt::format("127.0.0.1:{}", ports[1])}}});
  std::vector<std::unique_ptr<MultiWorkerMirroredStrategy>> workers(2);
  std::vector<std::thread> starts;
  for (int w = 0; w < 2; ++w) {
    starts.emplace_back([&, w] {
      MultiWorkerOptions o;
      o.cluster = ClusterConfig{spec, TaskId{"worker", w}};
      o.secret = ClusterSecret{.secret = "hang-report-test-secret"};
      o.collective_timeout = collective_timeout;
      o.connect_timeout = std::chrono::seconds(20);
      o.hang_report_dir = dir;
      o.hang_report_on_signal = false;
      workers[w] = std::make_unique<MultiWorkerMirroredStrategy>(o);
    });
  }
  for (std::thread& t : starts) t.join();
  REQUIRE(workers[0] != nullptr);
  REQUIRE(workers[1] != nullptr);
  return workers;
}

}  // namespace

TEST_CASE("hang report: a Recv whose sender never runs names the key and the task, within 2x its deadline") {
  // Two workers in this process (each its own transport on an ephemeral port); worker:0 waits in
  // step 7 for a tensor that worker:1 never sends.
  constexpr auto kTimeout = std::chrono::milliseconds(1000);
  const std::string dir = std::filesystem::temp_directory_path() / fmt::format("weft_hang_recv_{}", getpid());
  std::filesystem::create_directories(dir);
  std::vector<std::unique_ptr<MultiWorkerMirroredStrategy>> workers = TwoWorkers(dir, kTimeout);
  const std::string key =
      "/job:worker/replica:0/task:1/device:CPU:0;0;/job:worker/replica:0/task:0/device:CPU:0;never_sent:0;0:0";
  std::shared_ptr<UcxRendezvous> r = workers[0]->rendezvous().Find(7);
  std::atomic<bool> done{false};
  Status status;
  const auto start = std::chrono::steady_clock::now();
  r->RecvAsync(key, {}, [&](const Status& s, const Tensor&, bool) {
    status = s;
    done = true;
  });
  r->DriveUntil([&] { return done.load() || std::chrono::steady_clock::now() - start > 10 * kTimeout; });
  REQUIRE(WaitFor([&] { return done.load(); }));
  const double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  MESSAGE("the Recv ended after " << waited << " s: " << status.ToString());
  CHECK(status.code() == Code::kDeadlineExceeded);
  CHECK(waited < 2.0 * kTimeout.count() / 1000);
  const std::string report = ReadAll(dir + "/weft-hang-worker-0.txt");
  MESSAGE("worker:0's report:\n" << report);
  CHECK(report.find("=== weft hang report: worker:0 (pid ") == 0);
  CHECK(report.find("\nwhy: step 7: DeadlineExceeded: step 7: Recv of '" + key + "' from task worker:1 (127.0.0.1:") !=
        std::string::npos);
  CHECK(report.find("\nlast completed collective step: 0\n") != std::string::npos);
  CHECK(report.find("\nstep 7: Recv of '" + key + "' from worker:1 for ") != std::string::npos);
  CHECK(report.find("\nwaits for: worker:1\n") != std::string::npos);
  CHECK(!std::filesystem::exists(dir + "/weft-hang-worker-1.txt"));
  r.reset();
  (void)workers[0]->rendezvous().Cleanup(7);
  {  // both leave at once: each waits for the other's "bye"
    std::vector<std::thread> stops;
    for (auto& w : workers) stops.emplace_back([&w] { w.reset(); });
    for (std::thread& t : stops) t.join();
  }
  std::filesystem::remove_all(dir);
}

TEST_CASE("hang report: made and written without allocating (its memory is reserved), and cut to its buffer") {
  // Two workers in this process; worker:0 waits in step 9 for a tensor worker:1 has not sent (the
  // deadline far away), and its report is taken on this thread, counting this thread's allocations.
  const std::string dir = std::filesystem::temp_directory_path() / fmt::format("weft_hang_alloc_{}", getpid());
  std::filesystem::create_directories(dir);
  std::vector<std::unique_ptr<MultiWorkerMirroredStrategy>> workers = TwoWorkers(dir, std::chrono::seconds(60));
  const std::string key =
      "/job:worker/replica:0/task:1/device:CPU:0;0;/job:worker/replica:0/task:0/device:CPU:0;not_yet:0;0:0";
  std::shared_ptr<UcxRendezvous> r = workers[0]->rendezvous().Find(9);
  std::atomic<bool> done{false};
  r->RecvAsync(key, {}, [&](const Status&, const Tensor&, bool) { done = true; });
  workers[0]->hang_reporter().Report("warm-up");  // the first report may make what a process makes once (errno's strings)
  const int64_t before = HeapCount::ThisThreadNews();
  workers[0]->hang_reporter().Report("asked by the test");
  const int64_t allocations = HeapCount::ThisThreadNews() - before;
  CHECK(allocations == 0);
  const std::string report = ReadAll(dir + "/weft-hang-worker-0.txt");
  MESSAGE("worker:0's report:\n" << report);
  CHECK(report.find("=== weft hang report: worker:0 (pid ") == 0);
  CHECK(report.find("\nwhy: asked by the test\n") != std::string::npos);
  CHECK(report.find("\nstep 9: Recv of '" + key + "' from worker:1 for ") != std::string::npos);
  CHECK(report.find("\nwaits for: worker:1\n") != std::string::npos);
  CHECK(report.find("\ntrace: " + dir + "/weft-trace-worker-0.json (") != std::string::npos);
  CHECK(std::filesystem::exists(dir + "/weft-trace-worker-0.json"));
  r->StartAbort(errors::Cancelled("the test is over"));
  CHECK(WaitFor([&] { return done.load(); }));
  r.reset();
  (void)workers[0]->rendezvous().Cleanup(9);
  {
    std::vector<std::thread> stops;
    for (auto& w : workers) stops.emplace_back([&w] { w.reset(); });
    for (std::thread& t : stops) t.join();
  }
  // A report longer than its buffer keeps whole lines, says it was cut, and keeps its tail.
  const std::string path = dir + "/cut.txt";
  HangReporter cut({.path = path, .on_signal = false, .capacity = 16384}, [](std::string_view, ReportText* out) {
    for (int i = 0; i < 10000; ++i) out->Append("line {:05}\n", i);
    out->AppendTail("waits for: nobody\n");
  });
  const int64_t cut_before = HeapCount::ThisThreadNews();
  cut.Report("long");
  CHECK(HeapCount::ThisThreadNews() == cut_before);
  const std::string text = ReadAll(path);
  // 16384 - 4096 bytes of body: 1117 lines of 11 bytes.
  CHECK(text.starts_with("line 00000\n"));
  CHECK(text.find("\nline 01116\nwaits for: nobody\n(the report was cut here: it is longer than its 16384-byte buffer)\n") !=
        std::string::npos);
  CHECK(text.size() == 1117 * 11 + 18 + 67);
  std::filesystem::remove_all(dir);
}
