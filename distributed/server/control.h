// The control plane between a client and the servers of a cluster (distributed/server/server.h):
// requests and replies over the UCX transport as wire messages of kind kControlRequest /
// kControlReply (distributed/ucx/wire.h), method name in the key, request id in the step id field,
// body a uint8 tensor (eager when small, by UCX rendezvous when large, like any tensor).
//
//   ControlChannel channel(&transport, /*serve=*/handler);
//   ControlResult r = channel.Call(1, ControlMethod::kHealth, EncodeHealthRequest(), std::chrono::seconds(5));
//   if (r.status.ok()) HealthReply h = DecodeHealthReply(r.body);
//
// Bodies (control version 1, little-endian, core/byte_io.h): a request is `version:u32` then the
// method's fields; a reply is `version:u32 code:u8 message:str` then, when code is 0, the
// method's fields. Every field is checked on decoding, and trailing bytes are an error: a
// malformed request gets an error reply (InvalidArgument / DataLoss naming the field) and the
// server goes on serving. A call whose peer fails completes with the peer's Unavailable; one
// without a reply within its timeout with DeadlineExceeded naming the task and method.
//
// Thread-safe. Call blocks (bounded by its timeout); CallAsync's callback and the serve handler run
// on the transport's progress thread and must not block.
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "distributed/ucx/transport.h"

namespace weft {

inline constexpr uint32_t kControlVersion = 1;

enum class ControlMethod { kRegisterGraph, kDeregisterGraph, kRunStep, kAbortStep, kCleanup, kHealth };
const char* ControlMethodName(ControlMethod m);
// InvalidArgument naming the method when it is none of the above.
Status ParseControlMethod(const std::string& name, ControlMethod* out);

// RegisterGraph: the partitions of one task (device name -> graph_io bytes). Reply: a handle.
struct RegisterGraphRequest {
  std::vector<std::pair<std::string, std::string>> partitions;
};
// RunStep: run the handle's partitions once as step `step_id`; `feeds` are the CallFrame's args
// by index (only those the task's partitions read), `fetches` the ret indices wanted back.
struct RunStepRequest {
  uint64_t handle = 0;
  uint64_t step_id = 0;
  std::vector<std::pair<int64_t, Tensor>> feeds;
  std::vector<int64_t> fetches;
};
struct RunStepReply {
  std::vector<std::pair<int64_t, Tensor>> rets;
};
// AbortStep: fail the step's pending Recvs and cancel its kernels with `status`.
struct AbortStepRequest {
  uint64_t step_id = 0;
  Status status;
};
struct HealthReply {
  std::string task;
  std::vector<std::string> devices;
  int64_t graphs = 0, steps_running = 0;
};

// Encoders (requests and reply bodies, without the envelope) and decoders (throw Error naming
// the field; `what` starts the message).
std::string EncodeRegisterGraph(const RegisterGraphRequest& r);
RegisterGraphRequest DecodeRegisterGraph(std::string_view body);
std::string EncodeHandle(uint64_t handle);  // RegisterGraph's reply, DeregisterGraph's request
uint64_t DecodeHandle(std::string_view body, const std::string& what);
std::string EncodeRunStep(const RunStepRequest& r);
RunStepRequest DecodeRunStep(std::string_view body);
std::string EncodeRunStepReply(const RunStepReply& r);
RunStepReply DecodeRunStepReply(std::string_view body);
std::string EncodeAbortStep(const AbortStepRequest& r);
AbortStepRequest DecodeAbortStep(std::string_view body);
std::string EncodeStepId(uint64_t step_id);  // Cleanup's request
uint64_t DecodeStepId(std::string_view body, const std::string& what);
std::string EncodeHealthReply(const HealthReply& r);
HealthReply DecodeHealthReply(std::string_view body);
std::string EncodeEmpty();  // Health's request, empty replies
void DecodeEmpty(std::string_view body, const std::string& what);

// The envelopes: version + body, and version + status + body.
std::string EncodeRequestEnvelope(const std::string& body);
std::string_view DecodeRequestEnvelope(std::string_view bytes, const std::string& what);  // the body
std::string EncodeReplyEnvelope(const Status& status, const std::string& body);
Status DecodeReplyEnvelope(std::string_view bytes, const std::string& what, std::string* body);

struct ControlResult {
  Status status;
  std::string body;  // the reply's fields when status is OK
};

class ControlChannel {
 public:
  // What a server does with a request: `reply` must be called once (from any thread) with the
  // status and reply body. `status` is not OK when the message itself was malformed.
  using Reply = std::function<void(const Status& status, const std::string& body)>;
  using ServeHandler =
      std::function<void(int src_task, const std::string& method, const Status& status, std::string body, Reply reply)>;
  using Callback = std::function<void(ControlResult result)>;

  // Installs itself as the transport's control handler. transport: not owned, outlives this.
  ControlChannel(UcxTransport* transport, ServeHandler serve);
  ~ControlChannel();

  // Sends a request to `task`; `done` runs once with the reply, the peer's failure, or
  // DeadlineExceeded after `timeout`.
  void CallAsync(int task, ControlMethod method, const std::string& body, std::chrono::milliseconds timeout,
                 Callback done);
  ControlResult Call(int task, ControlMethod method, const std::string& body, std::chrono::milliseconds timeout);
  // Sends `bytes` as they are (a whole wire message) and waits for the reply to request `id`
  // (tests of malformed requests). The id must be one the message's header carries.
  ControlResult CallRawForTesting(int task, uint64_t id, std::string bytes, std::chrono::milliseconds timeout);
  // A fresh request id (for CallRawForTesting).
  uint64_t NextId();
  // Fails the calls waiting (Cancelled) and refuses new ones; idempotent.
  void Shutdown();

 private:
  struct Pending {
    int task;
    std::string what;
    std::chrono::steady_clock::time_point deadline;
    Callback done;
  };
  void OnMessage(int src_task, WireKind kind, uint64_t id, const std::string& method, const Status& status,
                 const Tensor& body);
  void OnPeerFailure(int task, const Status& status);
  void Complete(uint64_t id, ControlResult result);
  void Register(uint64_t id, int task, std::string what, std::chrono::milliseconds timeout, Callback done);
  void TimerLoop();

  UcxTransport* transport_;
  ServeHandler serve_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool shutdown_ = false;
  uint64_t next_id_ = 1;
  std::map<uint64_t, Pending> pending_;
  std::thread timer_;
};

}  // namespace weft
