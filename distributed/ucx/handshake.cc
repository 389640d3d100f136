#include "distributed/ucx/handshake.h"

#include <sys/random.h>

#include <bit>
#include <cerrno>
#include <cstring>

namespace weft {

static_assert(std::endian::native == std::endian::little, "the handshake is little-endian; add byte swaps here");

namespace {

enum FrameType : uint16_t { kHello = 1, kChallenge = 2, kResponse = 3, kAccept = 4 };
constexpr uint32_t kFlagInsecure = 1u << 0;
constexpr size_t kHelloBody = 4 + 4 + 8 + 32 + 4;
constexpr size_t kChallengeBody = 4 + 4 + 8 + 32 + 4 + 32;

template <typename T>
void Put(std::string* out, T v) {
  out->append(reinterpret_cast<const char*>(&v), sizeof(v));
}

template <typename T>
T Get(std::string_view body, size_t offset) {
  T v;
  std::memcpy(&v, body.data() + offset, sizeof(v));
  return v;
}

std::string Frame(uint16_t type, std::string_view body) {
  std::string out;
  Put<uint32_t>(&out, kHandshakeMagic);
  Put<uint16_t>(&out, kHandshakeVersion);
  Put<uint16_t>(&out, type);
  Put<uint32_t>(&out, static_cast<uint32_t>(body.size()));
  out.append(body);
  return out;
}

std::string_view FrameName(uint16_t type) {
  switch (type) {
    case kHello: return "hello";
    case kChallenge: return "challenge";
    case kResponse: return "response";
    case kAccept: return "accept";
  }
  return "unknown";
}

std::string_view AsView(const Sha256Digest& d) { return {reinterpret_cast<const char*>(d.data()), d.size()}; }

}  // namespace

void SecureRandomBytes(void* data, size_t n) {
  auto* p = static_cast<uint8_t*>(data);
  while (n > 0) {
    const ssize_t got = getrandom(p, n, 0);
    if (got < 0) {
      if (errno == EINTR) continue;
      throw Error(errors::Internal("getrandom: {}", std::strerror(errno)));
    }
    p += got;
    n -= static_cast<size_t>(got);
  }
}

SipHash24 ClusterKey::MessageKey(int src, uint64_t src_inc, int dst, uint64_t dst_inc) const {
  std::string info = "weft-message-v2";  // v1 keyed HMAC-SHA256; v2 keys SipHash-2-4
  Put<uint32_t>(&info, static_cast<uint32_t>(src));
  Put<uint64_t>(&info, src_inc);
  Put<uint32_t>(&info, static_cast<uint32_t>(dst));
  Put<uint64_t>(&info, dst_inc);
  const Sha256Digest k = hmac_.Compute(info);
  return SipHash24(AsView(k).substr(0, SipHash24::kKeyBytes));
}

Handshake Handshake::Client(const HandshakeConfig& config, int peer_task) {
  Handshake h(config, State::kClientAwaitChallenge);
  h.peer_task_ = peer_task;
  h.client_task_ = config.self;
  h.server_task_ = peer_task;
  h.client_inc_ = config.incarnation;
  SecureRandomBytes(h.client_nonce_.data(), h.client_nonce_.size());
  std::string body;
  Put<uint32_t>(&body, static_cast<uint32_t>(config.self));
  Put<uint32_t>(&body, static_cast<uint32_t>(peer_task));
  Put<uint64_t>(&body, config.incarnation);
  body.append(reinterpret_cast<const char*>(h.client_nonce_.data()), h.client_nonce_.size());
  Put<uint32_t>(&body, config.key->insecure() ? kFlagInsecure : 0u);
  h.output_ = Frame(kHello, body);
  return h;
}

Handshake Handshake::Server(const HandshakeConfig& config) {
  Handshake h(config, State::kServerAwaitHello);
  h.server_task_ = config.self;
  h.server_inc_ = config.incarnation;
  return h;
}

std::string Handshake::Transcript() const {
  std::string t = "weft-handshake-v1";
  Put<uint32_t>(&t, static_cast<uint32_t>(client_task_));
  Put<uint32_t>(&t, static_cast<uint32_t>(server_task_));
  Put<uint64_t>(&t, client_inc_);
  Put<uint64_t>(&t, server_inc_);
  t.append(reinterpret_cast<const char*>(client_nonce_.data()), client_nonce_.size());
  t.append(reinterpret_cast<const char*>(server_nonce_.data()), server_nonce_.size());
  return t;
}

Sha256Digest Handshake::RoleMac(std::string_view role) const { return config_.key->hmac().Compute({role, Transcript()}); }

Status Handshake::Feed(std::string_view bytes) {
  if (state_ == State::kFailed) return errors::FailedPrecondition("handshake: already failed");
  if (!bytes.empty()) heard_ = true;
  input_.append(bytes);
  size_t offset = 0;
  Status status;
  while (status.ok() && input_.size() - offset >= kHandshakeFrameHeader) {
    const std::string_view rest = std::string_view(input_).substr(offset);
    const auto magic = Get<uint32_t>(rest, 0);
    const auto version = Get<uint16_t>(rest, 4);
    const auto type = Get<uint16_t>(rest, 6);
    const auto length = Get<uint32_t>(rest, 8);
    if (magic != kHandshakeMagic) {
      status = errors::DataLoss("handshake: bad magic {:#010x} (expected {:#010x}: not a weft task?)", magic,
                                kHandshakeMagic);
    } else if (version != kHandshakeVersion) {
      status = errors::InvalidArgument("handshake: version {} (this build speaks version {})", version,
                                       kHandshakeVersion);
    } else if (length > kHandshakeMaxBody) {
      status = errors::DataLoss("handshake: {} frame of {} bytes (at most {})", FrameName(type), length,
                                kHandshakeMaxBody);
    } else if (rest.size() < kHandshakeFrameHeader + length) {
      break;  // the rest of the frame is still coming
    } else {
      status = OnFrame(type, rest.substr(kHandshakeFrameHeader, length));
      offset += kHandshakeFrameHeader + length;
    }
  }
  input_.erase(0, offset);
  // A peer that is not done may not send more than one frame ahead (bounded memory).
  if (status.ok() && input_.size() > kHandshakeFrameHeader + kHandshakeMaxBody) {
    status = errors::DataLoss("handshake: {} bytes buffered without a complete frame", input_.size());
  }
  if (!status.ok()) state_ = State::kFailed;
  return status;
}

Status Handshake::OnFrame(uint16_t type, std::string_view body) {
  auto unexpected = [&](std::string_view wanted) {
    return errors::DataLoss("handshake: a {} frame where a {} was due", FrameName(type), wanted);
  };
  auto check_size = [&](size_t want, bool exact) -> Status {
    if (exact ? body.size() != want : body.size() <= want) {
      return errors::DataLoss("handshake: {} frame of {} bytes (expected {}{})", FrameName(type), body.size(),
                              exact ? "" : "more than ", want);
    }
    return Status();
  };
  // The peer's insecure flag against ours: say which side lacks the secret.
  auto check_flags = [&](uint32_t flags) -> Status {
    if ((flags & ~kFlagInsecure) != 0) return errors::DataLoss("handshake: unknown flags {:#x}", flags);
    const bool peer_insecure = (flags & kFlagInsecure) != 0;
    if (peer_insecure && !config_.key->insecure()) {
      return errors::Unauthenticated(
          "handshake: the peer runs without a cluster secret (insecure) but this task has one");
    }
    if (!peer_insecure && config_.key->insecure()) {
      return errors::Unauthenticated(
          "handshake: the peer has a cluster secret but this task runs without one (insecure): set "
          "WEFT_CLUSTER_SECRET or WEFT_CLUSTER_SECRET_FILE to the cluster's");
    }
    return Status();
  };
  switch (state_) {
    case State::kServerAwaitHello: {
      if (type != kHello) return unexpected("hello");
      if (Status s = check_size(kHelloBody, true); !s.ok()) return s;
      const auto src = Get<uint32_t>(body, 0), dst = Get<uint32_t>(body, 4);
      if (dst != static_cast<uint32_t>(config_.self)) {
        return errors::InvalidArgument("handshake: the peer dialed task #{} but this is task #{}", dst, config_.self);
      }
      if (src >= static_cast<uint32_t>(config_.num_tasks) || src == static_cast<uint32_t>(config_.self)) {
        return errors::InvalidArgument("handshake: the peer claims to be task #{} (the cluster has {}; this is #{})",
                                       src, config_.num_tasks, config_.self);
      }
      // A secret on one side only: the challenge still goes out (its flags tell the dialing side,
      // which then reports which side lacks the secret), and the connection is dropped.
      const Status flags = check_flags(Get<uint32_t>(body, 48));
      if (!flags.ok() && flags.code() != Code::kUnauthenticated) return flags;
      peer_task_ = client_task_ = static_cast<int>(src);
      peer_incarnation_ = client_inc_ = Get<uint64_t>(body, 8);
      std::memcpy(client_nonce_.data(), body.data() + 16, 32);
      SecureRandomBytes(server_nonce_.data(), server_nonce_.size());
      std::string reply;
      Put<uint32_t>(&reply, static_cast<uint32_t>(config_.self));
      Put<uint32_t>(&reply, src);
      Put<uint64_t>(&reply, config_.incarnation);
      reply.append(reinterpret_cast<const char*>(server_nonce_.data()), server_nonce_.size());
      Put<uint32_t>(&reply, config_.key->insecure() ? kFlagInsecure : 0u);
      reply.append(AsView(RoleMac("server")));
      output_ += Frame(kChallenge, reply);
      state_ = State::kServerAwaitResponse;
      return flags;
    }
    case State::kClientAwaitChallenge: {
      if (type != kChallenge) return unexpected("challenge");
      if (Status s = check_size(kChallengeBody, true); !s.ok()) return s;
      const auto src = Get<uint32_t>(body, 0), dst = Get<uint32_t>(body, 4);
      if (src != static_cast<uint32_t>(peer_task_) || dst != static_cast<uint32_t>(config_.self)) {
        return errors::InvalidArgument("handshake: the peer answered as task #{} to task #{} (dialed #{} from #{})",
                                       src, dst, peer_task_, config_.self);
      }
      if (Status s = check_flags(Get<uint32_t>(body, 48)); !s.ok()) return s;
      peer_incarnation_ = server_inc_ = Get<uint64_t>(body, 8);
      std::memcpy(server_nonce_.data(), body.data() + 16, 32);
      const Sha256Digest want = RoleMac("server");
      if (!ConstantTimeEqual(want.data(), body.data() + 52, want.size())) {
        return errors::Unauthenticated("handshake: the peer did not prove the cluster secret (a wrong "
                                       "WEFT_CLUSTER_SECRET on one side, or not a task of this cluster)");
      }
      std::string reply(AsView(RoleMac("client")));
      reply += config_.worker_address;
      output_ += Frame(kResponse, reply);
      state_ = State::kClientAwaitAccept;
      return Status();
    }
    case State::kServerAwaitResponse: {
      if (type != kResponse) return unexpected("response");
      if (Status s = check_size(32, false); !s.ok()) return s;
      const Sha256Digest want = RoleMac("client");
      if (!ConstantTimeEqual(want.data(), body.data(), want.size())) {
        return errors::Unauthenticated("handshake: task #{} did not prove the cluster secret", peer_task_);
      }
      peer_address_.assign(body.substr(32));
      output_ += Frame(kAccept, config_.worker_address);
      state_ = State::kDone;
      return Status();
    }
    case State::kClientAwaitAccept: {
      if (type != kAccept) return unexpected("accept");
      if (Status s = check_size(0, false); !s.ok()) return s;
      peer_address_.assign(body);
      state_ = State::kDone;
      return Status();
    }
    case State::kDone:
      return errors::DataLoss("handshake: a {} frame after the handshake ended", FrameName(type));
    case State::kFailed:
      break;
  }
  return errors::FailedPrecondition("handshake: already failed");
}

}  // namespace weft
