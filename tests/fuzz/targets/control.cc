// The control plane's bodies (distributed/server/control.h): a server decodes requests from any
// peer, a client decodes replies. Input: one selector byte, then a request or reply envelope.
#include "distributed/server/control.h"
#include "../fuzz.h"

namespace weft::fuzz {
namespace {

enum Selector : char { kRegister, kDeregister, kRunStep, kAbort, kCleanup, kHealth, kRunStepReply, kHealthReply,
                       kHandleReply, kSelectors };

std::string Request(Selector s, const std::string& body) { return Selected(s, EncodeRequestEnvelope(body)); }
std::string Reply(Selector s, const Status& status, const std::string& body) {
  return Selected(s, EncodeReplyEnvelope(status, body));
}

std::vector<std::string> Seeds() {
  RunStepRequest run;
  run.handle = 3;
  run.step_id = 99;
  run.feeds = {{0, Tensor::FromVector<float>({1, 2, 3, 4}, {2, 2})}, {2, Tensor(DType::kInt64, TensorShape({0}))}};
  run.fetches = {0, 1};
  RunStepReply ret;
  ret.rets = {{1, Tensor::Scalar<int32_t>(5)}, {0, Tensor::FromVector<double>({0.5, -1})}};
  HealthReply health{"worker:0", {"/job:worker/replica:0/task:0/device:CPU:0"}, 2, 1};
  return {
      Request(kRegister, EncodeRegisterGraph({{{"/job:ps/replica:0/task:0/device:CPU:0", "graph bytes"},
                                               {"/job:ps/replica:0/task:0/device:CPU:1", ""}}})),
      Request(kDeregister, EncodeHandle(7)),
      Request(kRunStep, EncodeRunStep(run)),
      Request(kAbort, EncodeAbortStep({12, errors::Cancelled("step 12 cancelled by the client")})),
      Request(kCleanup, EncodeStepId(12)),
      Request(kHealth, EncodeEmpty()),
      Reply(kRunStepReply, Status(), EncodeRunStepReply(ret)),
      Reply(kRunStepReply, errors::InvalidArgument("node 'x' (MatMul): bad shapes"), ""),
      Reply(kHealthReply, Status(), EncodeHealthReply(health)),
      Reply(kHandleReply, Status(), EncodeHandle(4)),
  };
}

void Decode(std::string_view in) {
  if (in.empty()) throw Error(errors::InvalidArgument("empty input (no selector byte)"));
  const auto selector = static_cast<Selector>(static_cast<unsigned char>(in[0]) % kSelectors);
  const std::string_view bytes = in.substr(1);
  if (selector < kRunStepReply) {
    const std::string_view body = DecodeRequestEnvelope(bytes, "request");
    switch (selector) {
      case kRegister: DecodeRegisterGraph(body); break;
      case kDeregister: DecodeHandle(body, "DeregisterGraph request"); break;
      case kRunStep: DecodeRunStep(body); break;
      case kAbort: DecodeAbortStep(body); break;
      case kCleanup: DecodeStepId(body, "Cleanup request"); break;
      default: DecodeEmpty(body, "Health request"); break;
    }
    return;
  }
  // A reply carries the peer's status: an error status is a decoded reply (returned), an error
  // about the envelope itself names `what` first (thrown).
  const std::string what = "reply envelope";
  std::string body;
  Status s = DecodeReplyEnvelope(bytes, what, &body);
  if (!s.ok() && s.message().starts_with(what)) throw Error(s);
  if (!s.ok()) return;
  switch (selector) {
    case kRunStepReply: DecodeRunStepReply(body); break;
    case kHealthReply: DecodeHealthReply(body); break;
    default: DecodeHandle(body, "RegisterGraph reply"); break;
  }
}

}  // namespace

WEFT_FUZZ_TARGET(control, {.seeds = Seeds, .decode = Decode});

}  // namespace weft::fuzz
