#include <doctest/doctest.h>

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <map>
#include <thread>

#include "core/file.h"
#include "runtime/trace_merge.h"

#include "runtime/rendezvous.h"
#include "graph/session.h"
#include "ops/array.h"
#include "ops/framework.h"
#include "ops/math.h"
#include "ops/state.h"

using namespace weft;

TEST_CASE("feeds, fetches, names and the compile cache") {
  Graph g;
  Scope s = Scope::Root(&g);
  Output x = ops::Placeholder(s.WithOpName("x"), DType::kFloat32, {-1, 2});
  Output y = ops::Identity(s.WithOpName("y"), x);
  Session sess(&g);
  Tensor v = Tensor::FromVector<float>({1, 2, 3, 4}, {2, 2});
  auto out = sess.Run({{x, v}}, {y});
  CHECK(out[0].ToVector<float>() == std::vector<float>{1, 2, 3, 4});
  const int64_t first = sess.last_step_id();
  sess.Run({{x, v}}, {y});
  CHECK(sess.num_compiled() == 1);
  CHECK(sess.last_step_id() == first + 1);
  // By name; a fed tensor can be fetched directly.
  out = sess.Run(std::vector<std::pair<std::string, Tensor>>{{"x:0", v}}, {"y:0", "x"}, {});
  CHECK(out[1].ToVector<float>() == std::vector<float>{1, 2, 3, 4});
  CHECK(sess.num_compiled() == 2);
}

TEST_CASE("feed and fetch errors name the tensor") {
  Graph g;
  Scope s = Scope::Root(&g);
  Output x = ops::Placeholder(s.WithOpName("x"), DType::kFloat32, {-1, 2});
  Output y = ops::Identity(s.WithOpName("y"), x);
  Session sess(&g);
  CHECK_THROWS_WITH_AS(sess.Run({}, {y}), doctest::Contains("placeholder 'x' (float32[?,2]) must be fed"), Error);
  CHECK_THROWS_WITH_AS(sess.Run({{x, Tensor::FromVector<int32_t>({1, 2})}}, {y}),
                       doctest::Contains("feed for 'x:0' has dtype int32, expected float32"), Error);
  CHECK_THROWS_WITH_AS(sess.Run({{x, Tensor::FromVector<float>({1, 2, 3})}}, {y}),
                       doctest::Contains("feed for 'x:0' has shape [3], expected [?,2]"), Error);
  using Names = std::vector<std::pair<std::string, Tensor>>;
  CHECK_THROWS_WITH_AS(sess.Run(Names{}, {"nope:0"}, {}), doctest::Contains("no node named 'nope'"), Error);
  CHECK_THROWS_WITH_AS(sess.Run(Names{}, {"y:3"}, {}), doctest::Contains("has 1 outputs"), Error);
  CHECK_THROWS_WITH_AS(sess.Run(Names{}, {}, {"nope"}), doctest::Contains("no target node named 'nope'"), Error);
}

TEST_CASE("variables live across steps; reading one before assigning is an error") {
  Graph g;
  Scope s = Scope::Root(&g);
  Output v = ops::Variable(s.WithOpName("v"), {2}, DType::kFloat64);
  Output init = ops::Assign(s, v, ops::Const(s, Tensor::FromVector<double>({1, 2})));
  Output add = ops::AssignAdd(s, v, ops::Const(s, Tensor::FromVector<double>({10, 10})));
  Output read = ops::Identity(s, v);
  Session sess(&g);
  CHECK_THROWS_WITH_AS(sess.Run({}, {read}), doctest::Contains("uninitialized variable 'v'"), Error);
  sess.Run({}, {}, {init.node});
  sess.Run({}, {}, {add.node});
  CHECK(sess.Run({}, {read})[0].ToVector<double>() == std::vector<double>{11, 12});
  CHECK(sess.vars().Names() == std::vector<std::string>{"v"});
  // A second session has its own state.
  Session other(&g);
  CHECK_THROWS_AS(other.Run({}, {read}), Error);
  // Shape checks on update.
  Output bad = ops::Assign(s, v, ops::Const(s, Tensor::FromVector<double>({1, 2, 3})), /*validate_shape=*/false);
  CHECK_THROWS_WITH_AS(ops::AssignAdd(s.WithOpName("bad_add"), v, ops::Const(s, Tensor::Scalar<double>(1))),
                       doctest::Contains("AssignAdd 'bad_add': value shape [] differs from variable shape [2]"), Error);
  sess.Run({}, {}, {bad.node});  // validate_shape=false replaces the value
  CHECK(sess.Run({}, {read})[0].num_elements() == 3);
  // At run time too: the variable now holds 3 elements, the update has 2.
  CHECK_THROWS_WITH_AS(sess.Run({}, {}, {add.node}), doctest::Contains("update of shape [2] for variable 'v' of shape [3]"),
                       Error);
}

// A rendezvous that counts the Sends it carries and hands them to a LocalRendezvous (what a
// cross-process rendezvous does for keys within its task).
class CountingRendezvous : public Rendezvous {
 public:
  Status Send(const std::string& key, const RendezvousArgs& args, const Tensor& value, bool is_dead) override {
    ++sends;
    return local.Send(key, args, value, is_dead);
  }
  void RecvAsync(const std::string& key, const RendezvousArgs& args, DoneCallback done) override {
    local.RecvAsync(key, args, std::move(done));
  }
  void StartAbort(const Status& status) override { local.StartAbort(status); }
  LocalRendezvous local;
  std::atomic<int> sends{0};
};

TEST_CASE("rendezvous_factory, rendezvous_cleanup and step ids for steps across processes") {
  Graph g;
  Scope s = Scope::Root(&g);
  Output x = ops::Placeholder(s.WithOpName("x"), DType::kFloat32, {2});
  Output a = ops::Neg(s.WithDevice("/device:CPU:0").WithOpName("a"), x);
  Output b = ops::Neg(s.WithDevice("/device:CPU:1").WithOpName("b"), a);  // a crosses CPU:0 -> CPU:1
  const Tensor v = Tensor::FromVector<float>({1, 2});

  std::map<uint64_t, std::shared_ptr<CountingRendezvous>> made;
  std::vector<uint64_t> cleaned;
  SessionOptions opts;
  opts.num_cpu_devices = 2;
  opts.rendezvous_factory = [&](uint64_t step) {
    auto r = std::make_shared<CountingRendezvous>();
    made[step] = r;
    return r;
  };
  opts.rendezvous_cleanup = [&](uint64_t step) { cleaned.push_back(step); };

  SUBCASE("default ids count from 1 in every session, so two workers agree") {
    for (int worker = 0; worker < 2; ++worker) {
      made.clear();
      cleaned.clear();
      Session sess(&g, opts);
      CHECK(sess.last_step_id() == 0);
      for (int k = 0; k < 3; ++k) CHECK(sess.Run({{x, v}}, {b})[0].ToVector<float>() == std::vector<float>{1, 2});
      CHECK(sess.last_step_id() == 3);
      CHECK(cleaned == std::vector<uint64_t>{1, 2, 3});
      REQUIRE(made.size() == 3);
      for (auto& [step, r] : made) {
        CHECK(r->sends >= 1);  // the pair crossing the devices went through the factory's rendezvous
        CHECK(r->local.num_pending() == 0);
      }
    }
  }
  SUBCASE("next_step_id gives the ids") {
    uint64_t next = 100;
    opts.next_step_id = [&](bool) { return next += 2; };
    Session sess(&g, opts);
    sess.Run({{x, v}}, {b});
    sess.Run({{x, v}}, {b});
    CHECK(sess.last_step_id() == 104);
    CHECK(cleaned == std::vector<uint64_t>{102, 104});
  }
  SUBCASE("each Run says whether it is a collective step, whatever thread runs it") {
    // As a multi-worker strategy does: collective steps count from 1 everywhere, local ones apart.
    constexpr uint64_t kLocal = uint64_t{1} << 62;
    std::vector<bool> asked;
    uint64_t collective_ids = 0, local_ids = 0;
    opts.next_step_id = [&](bool collective) {
      asked.push_back(collective);
      return collective ? ++collective_ids : kLocal + ++local_ids;
    };
    Session sess(&g, opts);
    sess.Run({{x, v}}, {b});  // compiles on this thread; a local step
    std::thread other([&] { sess.Run({{x, v}}, {b}, {}, RunOptions{.collective = true}); });
    other.join();
    CHECK(sess.last_step_id() == 1);
    std::thread local([&] { sess.Run({{x, v}}, {b}); });
    local.join();
    sess.Run({{x, v}}, {b}, {}, RunOptions{.collective = true});
    CHECK(asked == std::vector<bool>{false, true, false, true});
    CHECK(cleaned == std::vector<uint64_t>{kLocal + 1, 1, kLocal + 2, 2});
  }
  SUBCASE("an aborted rendezvous fails the step; cleanup still runs") {
    opts.rendezvous_factory = [&](uint64_t step) {
      auto r = std::make_shared<CountingRendezvous>();
      r->StartAbort(errors::Unavailable("task 1 of step {} is gone", step));
      return r;
    };
    Session sess(&g, opts);
    CHECK_THROWS_WITH_AS(sess.Run({{x, v}}, {b}), doctest::Contains("task 1 of step 1 is gone"), Error);
    CHECK(cleaned == std::vector<uint64_t>{1});
  }
  SUBCASE("a factory that returns null or throws is a clear error") {
    opts.rendezvous_factory = [](uint64_t) { return std::shared_ptr<Rendezvous>(); };
    Session sess(&g, opts);
    CHECK_THROWS_WITH_AS(sess.Run({{x, v}}, {b}), doctest::Contains("rendezvous_factory returned null"), Error);
    Session throwing(&g, SessionOptions{.num_cpu_devices = 2, .rendezvous_factory = [](uint64_t) -> std::shared_ptr<Rendezvous> {
                       throw Error(errors::Unavailable("no connection to task 1"));
                     }});
    CHECK_THROWS_WITH_AS(throwing.Run({{x, v}}, {b}), doctest::Contains("no connection to task 1"), Error);
    throwing.Cancel();  // no dangling step left behind
  }
}

TEST_CASE("SessionOptions::trace_ring: every kernel, Send/Recv and step goes into the ring; a failed step dumps it") {
  Graph g;
  Scope s = Scope::Root(&g);
  Output x = ops::Placeholder(s.WithOpName("x"), DType::kFloat32, {2});
  Output a = ops::Neg(s.WithDevice("/device:CPU:0").WithOpName("a"), x);
  Output b = ops::Neg(s.WithDevice("/device:CPU:1").WithOpName("b"), a);  // a crosses CPU:0 -> CPU:1
  Output v = ops::Variable(s.WithOpName("v"), {2}, DType::kFloat32);
  Output read = ops::Identity(s.WithOpName("read"), v);
  const std::string path = std::filesystem::temp_directory_path() / fmt::format("weft_session_trace_{}.json", getpid());
  SessionOptions opts;
  opts.num_cpu_devices = 2;
  opts.trace_ring = std::make_shared<TraceRing>(TraceRingOptions{.capacity = 1024, .process = "test", .dump_path = path});
  Session sess(&g, opts);
  for (int k = 0; k < 3; ++k) sess.Run({{x, Tensor::FromVector<float>({1, 2})}}, {b});
  const TraceDump ok = ReadTraceDump(opts.trace_ring->ToJson("ok"), "ok");
  auto count = [](const TraceDump& d, const std::string& kind, const std::string& name = "") {
    return std::count_if(d.events.begin(), d.events.end(), [&](const Json& e) {
      return e.Member("args")->Member("kind")->str == kind && (name.empty() || e.Member("name")->str == name);
    });
  };
  CHECK(count(ok, "step") == 3);
  CHECK(count(ok, "kernel", "a") == 3);
  CHECK(count(ok, "kernel", "b") == 3);
  CHECK(count(ok, "send") == 3);
  CHECK(count(ok, "recv") == 3);
  for (const Json& e : ok.events) {
    const std::string kind = e.Member("args")->Member("kind")->str;
    if (kind == "send" || kind == "recv") CHECK(e.Member("args")->Member("detail")->str == "task:0/CPU:0 -> task:0/CPU:1 a:0");
  }
  CHECK(!std::filesystem::exists(path));  // nothing failed: nothing dumped
  CHECK_THROWS_WITH_AS(sess.Run({}, {read}), doctest::Contains("uninitialized variable 'v'"), Error);
  const TraceDump failed = ReadTraceDump(ReadRegularFile(path, "trace dump"), path);
  CHECK(failed.complete);
  CHECK(failed.why.find("step 4 failed: ") == 0);
  CHECK(failed.why.find("uninitialized variable 'v'") != std::string::npos);
  const Json& last = failed.events.back();
  CHECK(last.Member("name")->str == "step 4");
  CHECK(last.Member("args")->Member("failed")->boolean);
  CHECK(count(failed, "step") == 4);
  std::filesystem::remove(path);
}

TEST_CASE("device_memory_limit: a step over one device's budget names the device, the node and the shapes") {
  Graph g;
  Scope s = Scope::Root(&g);
  Output x = ops::Placeholder(s.WithOpName("x"), DType::kFloat32, {-1, 256});
  // CPU:1 makes a [n*64, 256] tile of x, then its square; CPU:0 only sums.
  const Scope d1 = s.WithDevice("/device:CPU:1");
  Output tiled = ops::Tile(d1.WithOpName("tiled"), x, {64, 1});
  Output sq = ops::Square(d1.WithOpName("squared"), tiled);
  // tiled has two consumers, so Square cannot reuse its buffer: both are live at once.
  const Scope d0 = s.WithDevice("/device:CPU:0");
  Output total = ops::Add(d0.WithOpName("total"), ops::Sum(d0, sq), ops::Sum(d1, tiled));
  SessionOptions o;
  o.num_cpu_devices = 2;
  o.device_memory_limit = 1 << 20;  // 1 MiB per device
  Session sess(&g, o);
  // 2 rows: a [128, 256] float tile is 128 KiB, squared another: fits.
  Tensor small(DType::kFloat32, TensorShape({2, 256}));
  std::fill_n(small.data<float>(), small.num_elements(), 1.0f);
  CHECK(sess.Run({{x, small}}, {total})[0].scalar<float>()() == doctest::Approx(2 * 2 * 64 * 256));
  bool saw_cpu1 = false;
  for (const auto& [device, stats] : sess.DeviceMemory()) {
    if (device.find("CPU:1") == std::string::npos) continue;
    saw_cpu1 = true;
    CHECK(stats.peak_bytes_in_use >= 2 * 128 * 256 * 4);  // the tile and its square were live together
    CHECK(stats.peak_bytes_in_use < (1 << 20));
  }
  CHECK(saw_cpu1);
  // 12 rows: the tile alone is 768 KiB; its square does not fit beside it.
  Tensor big(DType::kFloat32, TensorShape({12, 256}));
  std::fill_n(big.data<float>(), big.num_elements(), 1.0f);
  try {
    sess.Run({{x, big}}, {total});
    FAIL("expected ResourceExhausted");
  } catch (const Error& e) {
    const std::string m = e.what();
    CHECK(e.status().code() == Code::kResourceExhausted);
    CHECK(m.find("device /job:localhost/replica:0/task:0/device:CPU:1 is over its memory limit of 1048576") !=
          std::string::npos);
    CHECK(m.find("for 'squared' float32[768,256]") != std::string::npos);
    CHECK(m.find("'tiled' float32[768,256] 786432 bytes") != std::string::npos);
  }
  // Without a limit there are no budgets.
  Session unlimited(&g);
  CHECK(unlimited.DeviceMemory().empty());
  CHECK(unlimited.Run({{x, big}}, {total})[0].scalar<float>()() == doctest::Approx(2 * 12 * 64 * 256));
}
