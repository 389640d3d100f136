// The control plane's byte formats (control.h: the request and reply bodies and their envelopes):
// encoders and decoders only, apart from the channel, so that code reading bytes from the network
// builds without UCX (the ASan tree fuzzes it: tests/fuzz/targets/control.cc).
#include "distributed/server/control.h"

#include "core/byte_io.h"

namespace weft {
namespace {

constexpr const char* kMethodNames[] = {"RegisterGraph", "DeregisterGraph", "RunStep", "AbortStep", "Cleanup", "Health"};
constexpr uint32_t kMaxCount = 1 << 20;  // no list in a control message is longer

uint32_t Count(ByteReader& r, std::string_view what) {
  const uint32_t n = r.Pod<uint32_t>(what);
  if (n > kMaxCount || n > r.remaining()) r.Fail(fmt::format("{}: count {} is not plausible", what, n));
  return n;
}

void End(const ByteReader& r) {
  if (r.remaining() != 0) r.Fail(fmt::format("{} trailing bytes", r.remaining()));
}

void WriteStatus(ByteWriter& w, const Status& s) {
  w.Pod<uint8_t>(static_cast<uint8_t>(s.code()));
  w.Str(s.message());
}

Status ReadStatus(ByteReader& r) {
  const uint8_t code = r.Pod<uint8_t>("status code");
  if (code > static_cast<uint8_t>(Code::kUnauthenticated)) r.Fail(fmt::format("unknown status code {}", code));
  std::string message = r.Str("status message");
  if (code == 0) return Status();
  return Status(static_cast<Code>(code), std::move(message));
}

}  // namespace

const char* ControlMethodName(ControlMethod m) { return kMethodNames[static_cast<int>(m)]; }

Status ParseControlMethod(const std::string& name, ControlMethod* out) {
  for (size_t i = 0; i < std::size(kMethodNames); ++i) {
    if (name == kMethodNames[i]) {
      *out = static_cast<ControlMethod>(i);
      return Status();
    }
  }
  return errors::InvalidArgument("control: unknown method '{}'", name);
}

std::string EncodeRegisterGraph(const RegisterGraphRequest& r) {
  ByteWriter w;
  w.Pod<uint32_t>(static_cast<uint32_t>(r.partitions.size()));
  for (const auto& [device, graph] : r.partitions) {
    w.Str(device);
    w.Str(graph);
  }
  return std::move(w.out());
}

RegisterGraphRequest DecodeRegisterGraph(std::string_view body) {
  ByteReader r(body, "RegisterGraph request");
  RegisterGraphRequest out;
  const uint32_t n = Count(r, "partition count");
  if (n == 0) r.Fail("no partitions");
  for (uint32_t i = 0; i < n; ++i) {
    std::string device = r.Str("device name");
    out.partitions.emplace_back(std::move(device), r.Str("graph"));
  }
  End(r);
  return out;
}

std::string EncodeHandle(uint64_t handle) {
  ByteWriter w;
  w.Pod<uint64_t>(handle);
  return std::move(w.out());
}

uint64_t DecodeHandle(std::string_view body, const std::string& what) {
  ByteReader r(body, what);
  const uint64_t h = r.Pod<uint64_t>("graph handle");
  End(r);
  return h;
}

std::string EncodeRunStep(const RunStepRequest& q) {
  ByteWriter w;
  w.Pod<uint64_t>(q.handle);
  w.Pod<uint64_t>(q.step_id);
  w.Pod<uint32_t>(static_cast<uint32_t>(q.feeds.size()));
  for (const auto& [index, value] : q.feeds) {
    w.Pod<int64_t>(index);
    w.WriteTensor(value);
  }
  w.Pod<uint32_t>(static_cast<uint32_t>(q.fetches.size()));
  for (int64_t f : q.fetches) w.Pod<int64_t>(f);
  return std::move(w.out());
}

RunStepRequest DecodeRunStep(std::string_view body) {
  ByteReader r(body, "RunStep request");
  RunStepRequest q;
  q.handle = r.Pod<uint64_t>("graph handle");
  q.step_id = r.Pod<uint64_t>("step id");
  const uint32_t nf = Count(r, "feed count");
  for (uint32_t i = 0; i < nf; ++i) {
    const int64_t index = r.Pod<int64_t>("feed index");
    if (index < 0) r.Fail(fmt::format("negative feed index {}", index));
    q.feeds.emplace_back(index, r.ReadTensor(fmt::format("feed {}", index)));
  }
  const uint32_t nr = Count(r, "fetch count");
  for (uint32_t i = 0; i < nr; ++i) {
    const int64_t index = r.Pod<int64_t>("fetch index");
    if (index < 0) r.Fail(fmt::format("negative fetch index {}", index));
    q.fetches.push_back(index);
  }
  End(r);
  return q;
}

std::string EncodeRunStepReply(const RunStepReply& q) {
  ByteWriter w;
  w.Pod<uint32_t>(static_cast<uint32_t>(q.rets.size()));
  for (const auto& [index, value] : q.rets) {
    w.Pod<int64_t>(index);
    w.WriteTensor(value);
  }
  return std::move(w.out());
}

RunStepReply DecodeRunStepReply(std::string_view body) {
  ByteReader r(body, "RunStep reply");
  RunStepReply q;
  const uint32_t n = Count(r, "result count");
  for (uint32_t i = 0; i < n; ++i) {
    const int64_t index = r.Pod<int64_t>("result index");
    q.rets.emplace_back(index, r.ReadTensor(fmt::format("result {}", index)));
  }
  End(r);
  return q;
}

std::string EncodeAbortStep(const AbortStepRequest& q) {
  ByteWriter w;
  w.Pod<uint64_t>(q.step_id);
  WriteStatus(w, q.status);
  return std::move(w.out());
}

AbortStepRequest DecodeAbortStep(std::string_view body) {
  ByteReader r(body, "AbortStep request");
  AbortStepRequest q;
  q.step_id = r.Pod<uint64_t>("step id");
  q.status = ReadStatus(r);
  if (q.status.ok()) r.Fail("an abort with an OK status");
  End(r);
  return q;
}

std::string EncodeStepId(uint64_t step_id) { return EncodeHandle(step_id); }

uint64_t DecodeStepId(std::string_view body, const std::string& what) {
  ByteReader r(body, what);
  const uint64_t s = r.Pod<uint64_t>("step id");
  End(r);
  return s;
}

std::string EncodeHealthReply(const HealthReply& h) {
  ByteWriter w;
  w.Str(h.task);
  w.Pod<uint32_t>(static_cast<uint32_t>(h.devices.size()));
  for (const std::string& d : h.devices) w.Str(d);
  w.Pod<int64_t>(h.graphs);
  w.Pod<int64_t>(h.steps_running);
  return std::move(w.out());
}

HealthReply DecodeHealthReply(std::string_view body) {
  ByteReader r(body, "Health reply");
  HealthReply h;
  h.task = r.Str("task");
  const uint32_t n = Count(r, "device count");
  for (uint32_t i = 0; i < n; ++i) h.devices.push_back(r.Str("device"));
  h.graphs = r.Pod<int64_t>("graphs");
  h.steps_running = r.Pod<int64_t>("steps running");
  End(r);
  return h;
}

std::string EncodeEmpty() { return {}; }

void DecodeEmpty(std::string_view body, const std::string& what) {
  ByteReader r(body, what);
  End(r);
}

std::string EncodeRequestEnvelope(const std::string& body) {
  ByteWriter w;
  w.Pod<uint32_t>(kControlVersion);
  w.out() += body;
  return std::move(w.out());
}

std::string_view DecodeRequestEnvelope(std::string_view bytes, const std::string& what) {
  ByteReader r(bytes, what);
  const uint32_t version = r.Pod<uint32_t>("control version");
  if (version != kControlVersion) {
    throw Error(errors::InvalidArgument("{}: control version {} (this build speaks version {})", what, version,
                                        kControlVersion));
  }
  return bytes.substr(r.pos());
}

std::string EncodeReplyEnvelope(const Status& status, const std::string& body) {
  ByteWriter w;
  w.Pod<uint32_t>(kControlVersion);
  WriteStatus(w, status);
  if (status.ok()) w.out() += body;
  return std::move(w.out());
}

Status DecodeReplyEnvelope(std::string_view bytes, const std::string& what, std::string* body) {
  try {
    ByteReader r(bytes, what);
    const uint32_t version = r.Pod<uint32_t>("control version");
    if (version != kControlVersion) {
      return errors::InvalidArgument("{}: control version {} (this build speaks version {})", what, version,
                                     kControlVersion);
    }
    Status s = ReadStatus(r);
    if (!s.ok()) {
      End(r);
      return s;
    }
    body->assign(bytes.substr(r.pos()));
    return Status();
  } catch (const Error& e) {
    return e.status();
  }
}

}  // namespace weft
