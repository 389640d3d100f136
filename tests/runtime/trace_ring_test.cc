// The always-on trace ring (runtime/trace_ring.h) and reading / merging its dumps
// (runtime/trace_merge.h): the bound and the wrap-around, JSON that stays valid when cut short or
// damaged, recording from many threads while dumping, the fatal-signal dump, and the merge's clock
// alignment.
#include <doctest/doctest.h>
#include <fmt/format.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>
#include <vector>

#include "core/json.h"
#include "runtime/trace_merge.h"
#include "runtime/trace_ring.h"

using namespace weft;

namespace {

std::string Str(const Json& e, const char* name) {
  const Json* v = e.Member(name);
  return v != nullptr ? v->str : "";
}
const Json* Arg(const Json& e, const char* name) { return e.Member("args")->Member(name); }

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

std::string TempDir(const std::string& name) {
  const std::string dir = std::filesystem::temp_directory_path() / fmt::format("weft_{}_{}", name, getpid());
  std::filesystem::create_directories(dir);
  return dir;
}

}  // namespace

TEST_CASE("trace ring: a fixed number of slots, the newest events kept in order after wrapping around") {
  TraceRing ring({.capacity = 12, .process = "worker:3"});
  CHECK(ring.capacity() == 16);  // rounded up to a power of two
  for (int i = 0; i < 40; ++i) {
    const std::string name = fmt::format("e{}", i);
    ring.Record({.kind = TraceKind::kKernel, .step = i / 10, .start_ns = 1000 * i, .end_ns = 1000 * i + 500,
                 .name = name, .op = "MatMul"});
  }
  CHECK(ring.recorded() == 40);
  const std::string text = ring.ToJson("test");
  // The whole dump is one JSON array: the two metadata events, 16 events, the end mark.
  const Json all = ParseJson(text, "dump");
  REQUIRE(all.kind == Json::Kind::kArray);
  CHECK(all.array.size() == 16 + 3);
  const TraceDump d = ReadTraceDump(text, "dump");
  CHECK(d.complete);
  CHECK(d.process == "worker:3");
  CHECK(d.why == "test");
  CHECK(d.recorded == 40);
  REQUIRE(d.events.size() == 16);
  for (int k = 0; k < 16; ++k) {
    const Json& e = d.events[static_cast<size_t>(k)];
    const int i = 24 + k;  // the 16 newest, oldest first
    CHECK(Str(e, "name") == fmt::format("e{}", i));
    CHECK(Str(e, "cat") == "MatMul");
    CHECK(Str(e, "ph") == "X");
    CHECK(e.Member("ts")->number == doctest::Approx(i).epsilon(1e-12));  // microseconds
    CHECK(e.Member("dur")->number == doctest::Approx(0.5));
    CHECK(Arg(e, "step")->number == i / 10);
    CHECK(Arg(e, "kind")->str == "kernel");
  }
  // An empty ring dumps a valid, complete, empty trace.
  TraceRing empty({.capacity = 16});
  const TraceDump e = ReadTraceDump(empty.ToJson("nothing yet"), "empty");
  CHECK(e.complete);
  CHECK(e.events.empty());
  CHECK(e.process == fmt::format("pid {}", getpid()));
  CHECK_THROWS_WITH_AS(TraceRing({.capacity = (size_t{1} << 24) + 1}), doctest::Contains("more than 2^24 events"),
                       Error);
}

TEST_CASE("trace ring: fields are cut to their slot, escaped, and a long key keeps its end") {
  TraceRing ring({.capacity = 16});
  const std::string long_name(100, 'n');
  const std::string key = "/job:a_long_job_name/replica:0/task:0/device:CPU:0;0;/job:a_long_job_name/replica:0/"
                          "task:1/device:CPU:0;_coll/1/7/rs0/1;0:0";
  REQUIRE(key.size() > TraceRing::kDetailBytes);
  ring.Record({.kind = TraceKind::kRecv, .name = long_name, .op = "_Recv", .detail = key});
  ring.Record({.kind = TraceKind::kKernel, .name = "q\"b\\s\nt\x01 \xc3\xa9", .op = "Op"});
  const std::string error = "DeadlineExceeded: step 5: Recv of '" + key + "' from task worker:1 waited 3000 ms, and more";
  ring.Record({.kind = TraceKind::kStep, .step = 5, .name = "step 5", .op = "collective step", .detail = error,
               .group = 1, .instance = 7, .failed = true});
  const TraceDump d = ReadTraceDump(ring.ToJson("\"why\"\n"), "dump");
  REQUIRE(d.complete);
  CHECK(d.why == "\"why\"\n");
  REQUIRE(d.events.size() == 3);
  CHECK(Str(d.events[0], "name") == std::string(TraceRing::kNameBytes, 'n'));
  CHECK(Arg(d.events[0], "detail")->str == key.substr(key.size() - TraceRing::kDetailBytes));
  CHECK(Arg(d.events[0], "kind")->str == "recv");
  CHECK(Str(d.events[1], "name") == "q\"b\\s\nt\x01 ??");  // non-ASCII bytes as '?'
  CHECK(Arg(d.events[2], "detail")->str == error.substr(0, TraceRing::kDetailBytes));  // an error keeps its start
  CHECK(Arg(d.events[2], "failed")->boolean);
  CHECK(Arg(d.events[2], "group")->number == 1);
  CHECK(Arg(d.events[2], "instance")->number == 7);
  CHECK(d.events[0].Member("args")->Member("failed") == nullptr);
}

TEST_CASE("trace dump: cut short or damaged anywhere, the events before the cut are read back") {
  TraceRing ring({.capacity = 64, .process = "worker:0"});
  for (int i = 0; i < 20; ++i) {
    const std::string name = fmt::format("node_{}", i);
    ring.Record({.kind = TraceKind::kKernel, .step = 1, .start_ns = 10'000 * i, .end_ns = 10'000 * i + 7'000,
                 .name = name, .op = "Relu", .detail = "a \"quoted\" detail"});
  }
  const std::string text = ring.ToJson("full");
  const TraceDump full = ReadTraceDump(text, "full");
  REQUIRE(full.events.size() == 20);
  // The end of each event's line: cutting after it keeps it, cutting before keeps the ones before.
  std::vector<size_t> line_ends;
  for (size_t at = text.find("\n{\"name\": \"node_"); at != std::string::npos; at = text.find("\n{\"name\": \"node_", at + 1)) {
    line_ends.push_back(text.find('\n', at + 1) + 1);
  }
  REQUIRE(line_ends.size() == 20);
  for (size_t cut = 2; cut <= text.size(); ++cut) {
    INFO("cut at byte " << cut << " of " << text.size());
    const TraceDump d = ReadTraceDump(std::string_view(text).substr(0, cut), "cut");
    const size_t expect = static_cast<size_t>(std::count_if(line_ends.begin(), line_ends.end(), [&](size_t e) { return e <= cut; }));
    REQUIRE(d.events.size() == expect);
    for (size_t k = 0; k < expect; ++k) REQUIRE(WriteJson(d.events[k]) == WriteJson(full.events[k]));
    CHECK(d.complete == (cut >= text.size() - 1));  // only the final newline may be missing
    if (!d.complete) CHECK(!d.problem.empty());
    // What was read is valid JSON as a trace on its own.
    std::string closed = "[\n";
    for (size_t k = 0; k < d.events.size(); ++k) closed += WriteJson(d.events[k]) + (k + 1 < d.events.size() ? ",\n" : "\n");
    CHECK_NOTHROW(ParseJson(closed + "]", "closed"));
  }
  // Damage in event 12's line (its first byte, or a byte of a string): events 0..11 are kept,
  // and the problem names the line.
  for (const auto& [at, bad] : std::vector<std::pair<size_t, char>>{
           {line_ends[11], '\0'}, {line_ends[11], '"'}, {line_ends[11], '}'}, {line_ends[11], '\n'},
           {line_ends[11], 'x'}, {line_ends[12] - 20, '\0'}, {line_ends[12] - 20, '"'}, {line_ends[12] - 20, '\n'}}) {
    std::string damaged = text;
    damaged[at] = bad;
    const TraceDump d = ReadTraceDump(damaged, "damaged");
    INFO("damaging byte " << at << " with " << static_cast<int>(bad));
    CHECK(!d.complete);
    CHECK(d.events.size() == 12);
    CHECK(d.problem.find("line ") == 0);
  }
  CHECK_THROWS_WITH_AS(ReadTraceDump("", "empty.json"), doctest::Contains("empty.json: not a weft trace dump"), Error);
  CHECK_THROWS_WITH_AS(ReadTraceDump("{\"traceEvents\": []}", "x.json"), doctest::Contains("not a weft trace dump"), Error);
}

TEST_CASE("trace ring: recording on many threads while dumping never yields a torn event") {
  TraceRing ring({.capacity = 256});
  constexpr int kThreads = 4, kEvents = 20000;
  std::atomic<bool> stop{false};
  std::vector<std::thread> writers;
  for (int t = 0; t < kThreads; ++t) {
    writers.emplace_back([&ring, t] {
      char name[32], detail[32];
      for (int i = 0; i < kEvents; ++i) {
        const int n = std::snprintf(name, sizeof(name), "t%d-%d", t, i);
        std::snprintf(detail, sizeof(detail), "t%d-%d", t, i);  // the same text: a torn slot would differ
        ring.Record({.kind = TraceKind::kKernel, .step = i, .start_ns = i, .end_ns = i + t, .name = std::string_view(name, n),
                     .op = "Op", .detail = std::string_view(detail, n)});
      }
    });
  }
  int dumps = 0;
  size_t seen = 0;
  std::thread reader([&] {
    while (!stop.load()) {
      const TraceDump d = ReadTraceDump(ring.ToJson("while recording"), "live");
      REQUIRE(d.complete);
      for (const Json& e : d.events) {
        const std::string name = Str(e, "name");
        REQUIRE(Arg(e, "detail")->str == name);
        const int t = std::atoi(name.c_str() + 1), i = std::atoi(name.c_str() + name.find('-') + 1);
        REQUIRE(Arg(e, "step")->number == i);
        REQUIRE(e.Member("dur")->number == doctest::Approx(t / 1000.0));
      }
      seen += d.events.size();
      ++dumps;
    }
  });
  for (std::thread& w : writers) w.join();
  stop = true;
  reader.join();
  MESSAGE(dumps << " dumps while recording, " << seen << " events checked");
  CHECK(dumps > 0);
  CHECK(ring.recorded() == kThreads * kEvents);
  const TraceDump last = ReadTraceDump(ring.ToJson("after"), "after");
  CHECK(last.events.size() == 256);  // all complete now
}

TEST_CASE("trace ring: Dump writes the file whole; a fatal signal dumps it before the process dies") {
  const std::string dir = TempDir("trace_ring");
  const std::string path = dir + "/weft-trace-worker-1.json";
  TraceRing ring({.capacity = 32, .process = "worker:1", .dump_path = path});
  ring.Record({.kind = TraceKind::kStep, .step = 3, .name = "step 3", .op = "collective step"});
  CHECK(ring.Dump("on request") == 1);
  TraceDump d = ReadTraceDump(ReadFile(path), path);
  CHECK(d.complete);
  CHECK(d.why == "on request");
  CHECK(!std::filesystem::exists(path + ".tmp"));
  CHECK_THROWS_WITH_AS(ring.Dump(dir + "/no/such/dir/t.json", "x"), doctest::Contains("cannot write the trace dump"), Error);
  std::filesystem::remove(path);

  ring.Record({.kind = TraceKind::kKernel, .step = 4, .name = "about to crash", .op = "Op"});
  const pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    signal(SIGABRT, SIG_DFL);  // the previous disposition: the default (not the test runner's handler)
    ring.InstallFatalSignalDump();
    raise(SIGABRT);
    _exit(0);  // not reached: the default action of SIGABRT ends the process
  }
  int status = 0;
  waitpid(pid, &status, 0);
  CHECK((WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT));  // the signal still ends the process
  d = ReadTraceDump(ReadFile(path), path);
  CHECK(d.complete);
  CHECK(d.why == "fatal signal SIGABRT");
  REQUIRE(d.events.size() == 2);
  CHECK(Str(d.events[1], "name") == "about to crash");
  std::filesystem::remove_all(dir);
}

TEST_CASE("trace merge: each dump's clock offset moves its events onto the reference's timeline") {
  TraceRing a({.capacity = 16, .process = "worker:0"}), b({.capacity = 16, .process = "worker:1"});
  a.SetClockOffset("worker:0", 0, 0);
  b.SetClockOffset("worker:0", 5'000'000, 40'000);  // worker:1's clock is 5 ms behind worker:0's
  // The same moment, 1 s on worker:0's clock, seen by both (a collective both ran at once).
  a.Record({.kind = TraceKind::kCollective, .step = 7, .start_ns = 1'000'000'000, .end_ns = 1'002'000'000,
            .name = "all_reduce", .op = "CollectiveReduce"});
  b.Record({.kind = TraceKind::kCollective, .step = 7, .start_ns = 995'000'000, .end_ns = 997'000'000,
            .name = "all_reduce", .op = "CollectiveReduce"});
  a.Record({.kind = TraceKind::kKernel, .step = 8, .start_ns = 1'010'000'000, .end_ns = 1'010'500'000, .name = "later",
            .op = "Relu"});
  const TraceDump da = ReadTraceDump(a.ToJson("x"), "a"), db = ReadTraceDump(b.ToJson("x"), "b");
  CHECK(db.offset_ns == 5'000'000);
  CHECK(db.rtt_ns == 40'000);
  CHECK(db.reference == "worker:0");
  const std::string merged = MergeTraceDumps({da, db});
  const Json all = ParseJson(merged, "merged");  // one valid JSON array
  const TraceDump m = ReadTraceDump(merged, "merged");
  CHECK(m.complete);
  std::vector<const Json*> coll;
  int names = 0;
  for (const Json& e : all.array) {
    if (Str(e, "name") == "process_name") {
      ++names;
      CHECK(Arg(e, "name")->str == (e.Member("pid")->number == 0 ? "worker:0" : "worker:1"));
    }
    if (Str(e, "name") == "all_reduce") coll.push_back(&e);
    if (Str(e, "name") == "later") CHECK(e.Member("ts")->number == doctest::Approx(10'000));
  }
  CHECK(names == 2);
  REQUIRE(coll.size() == 2);
  CHECK(coll[0]->Member("pid")->number == 0);
  CHECK(coll[1]->Member("pid")->number == 1);
  CHECK(coll[0]->Member("ts")->number == doctest::Approx(0));  // the timeline starts at 0
  CHECK(coll[1]->Member("ts")->number == doctest::Approx(0));  // aligned: the same moment
  CHECK(coll[1]->Member("dur")->number == doctest::Approx(2000));
  // Dumps whose offsets lead to different processes are not of one job.
  TraceRing c({.capacity = 16, .process = "worker:0"});
  c.SetClockOffset("chief:0", 0, 0);
  CHECK_THROWS_WITH_AS(MergeTraceDumps({da, ReadTraceDump(c.ToJson("x"), "c")}),
                       doctest::Contains("measured against chief:0, another dump's against worker:0"), Error);
}
