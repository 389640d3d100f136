#include "tests/graph/test_ops.h"

#include <chrono>
#include <condition_variable>
#include <map>
#include <mutex>
#include <thread>

#include "ops/kernel.h"

namespace weft::test {
namespace {

std::mutex g_mu;
std::vector<std::string> g_log;

// Each TestWaitPair waits (up to 10 s) until `parties` nodes of its group have arrived in the
// same step: two of them in independent branches only finish if the executor runs them at once.
class WaitPairOp : public OpKernel {
 public:
  explicit WaitPairOp(const Node& n)
      : OpKernel(n), group_(n.attr<std::string>("group")), parties_(n.attr<int64_t>("parties")) {}
  void Compute(OpKernelContext* ctx) override {
    static std::mutex mu;
    static std::condition_variable cv;
    static std::map<std::string, int> arrived;
    const std::string key = std::to_string(ctx->step_id()) + "/" + group_;
    std::unique_lock<std::mutex> l(mu);
    arrived[key]++;
    cv.notify_all();
    if (!cv.wait_for(l, std::chrono::seconds(10), [&] { return arrived[key] >= parties_; })) {
      throw Error(errors::DeadlineExceeded("only {} of {} parties arrived", arrived[key], parties_));
    }
    ctx->set_output(0, ctx->input(0));
  }

 private:
  std::string group_;
  int64_t parties_;
};

class FailOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext*) override { throw Error(errors::InvalidArgument("boom")); }
};

// Passes its input through after `delay_ms` from another thread; with delay_ms < 0 it finishes
// only when the step is cancelled (with the cancellation's error).
class AsyncDelayOp : public AsyncOpKernel {
 public:
  explicit AsyncDelayOp(const Node& n) : AsyncOpKernel(n), delay_ms_(n.attr<int64_t>("delay_ms")) {}
  void ComputeAsync(OpKernelContext* ctx, DoneCallback done) override {
    if (delay_ms_ < 0) {
      auto shared_done = std::make_shared<DoneCallback>(std::move(done));
      ctx->cancellation()->RegisterCallback([shared_done](const Status& why) {
        std::thread([shared_done, why] { (*shared_done)(why); }).detach();
      });
      return;
    }
    Tensor in = ctx->input(0);
    std::thread([ctx, in, done = std::move(done), ms = delay_ms_] {
      std::this_thread::sleep_for(std::chrono::milliseconds(ms));
      ctx->set_output(0, in);
      done(Status::OK());
    }).detach();
  }

 private:
  int64_t delay_ms_;
};

class RecordOp : public OpKernel {
 public:
  explicit RecordOp(const Node& n) : OpKernel(n), label_(n.attr<std::string>("label")) {}
  void Compute(OpKernelContext* ctx) override {
    {
      std::lock_guard<std::mutex> l(g_mu);
      g_log.push_back(label_);
    }
    ctx->set_output(0, ctx->input(0));
  }

 private:
  std::string label_;
};

}  // namespace

void RegisterTestOps() {
  static std::once_flag once;
  std::call_once(once, [] {
    OpRegistry& r = OpRegistry::Global();
    KernelRegistry& k = KernelRegistry::Global();
    r.Register("TestWaitPair").Input("x", "T").Output("y", "T").TypeAttr("T", {}).Attr("group", "g")
        .Attr("parties", 2).Stateful().Shape(UnchangedShape).Doc("test: waits for its group");
    r.Register("TestFail").Input("x", "T").Output("y", "T").TypeAttr("T", {}).Shape(UnchangedShape).Doc("test: fails");
    r.Register("TestAsyncDelay").Input("x", "T").Output("y", "T").TypeAttr("T", {}).Attr("delay_ms", 0)
        .Shape(UnchangedShape).Doc("test: async pass-through");
    r.Register("TestRecord").Input("x", "T").Output("y", "T").TypeAttr("T", {}).Attr("label", "").Stateful()
        .Shape(UnchangedShape).Doc("test: records that it ran (no gradient on purpose)");
    RegisterUntyped<WaitPairOp>(k, "TestWaitPair");
    RegisterUntyped<FailOp>(k, "TestFail");
    RegisterUntyped<AsyncDelayOp>(k, "TestAsyncDelay");
    RegisterUntyped<RecordOp>(k, "TestRecord");
  });
}

std::vector<std::string> RecordLog() {
  std::lock_guard<std::mutex> l(g_mu);
  return g_log;
}

void ClearRecord() {
  std::lock_guard<std::mutex> l(g_mu);
  g_log.clear();
}

}  // namespace weft::test
