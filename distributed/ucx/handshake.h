// The handshake that opens every connection between two weft tasks (version 1), as a state
// machine over bytes: no sockets, no UCX, so every input can be tested (and fuzzed) on its own.
// PeerConnector runs it over its TCP connections (peer_connector.h; docs/ucx.md, "Connections").
//
//   Handshake client = Handshake::Client(config, /*peer=*/2);   // dials task 2
//   Handshake server = Handshake::Server(config_of_task_2);
//   server.Feed(client.TakeOutput());   client.Feed(server.TakeOutput());   // hello, challenge
//   server.Feed(client.TakeOutput());   client.Feed(server.TakeOutput());   // response, accept
//   client.done() && server.done();     // each has the other's UCX worker address and incarnation
//
// Frames: magic "WFHS" (u32), version (u16), type (u16), body length (u32), body (at most
// kHandshakeMaxBody bytes); integers little-endian. The exchange, C the dialing task, S the
// listening one, K the cluster secret:
//   C -> S  hello      C's task, S's task, C's incarnation, nonce_c (32 random bytes), flags
//   S -> C  challenge  S's task, C's task, S's incarnation, nonce_s, HMAC(K, "server" | T)
//   C -> S  response   HMAC(K, "client" | T), C's UCX worker address      (after C verified S)
//   S -> C  accept     S's UCX worker address                               (after S verified C)
// T (the transcript) holds both tasks, both incarnations and both nonces, so a MAC answers this
// exchange only (no replay: each side chose a fresh nonce; no reflection: the roles differ).
// Each side sends its worker address only after it verified the other. Without a secret
// (`insecure`) K is empty and the flags say so: such a task and one with a secret refuse each
// other with an error that says which side has none.
//
// Feed returns DataLoss for malformed or unexpected frames, InvalidArgument for tasks that do
// not fit the cluster, Unauthenticated for a wrong MAC; the connection is then dropped.
// Not thread-safe (one per connection, on the progress thread).
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

#include "core/sha256.h"
#include "core/siphash.h"
#include "core/status.h"

namespace weft {

inline constexpr uint32_t kHandshakeMagic = 0x53484657;  // "WFHS" in little-endian bytes
inline constexpr uint16_t kHandshakeVersion = 1;
inline constexpr size_t kHandshakeFrameHeader = 12;
inline constexpr size_t kHandshakeMaxBody = 8192;  // UCX worker addresses are a few hundred bytes

using Nonce = std::array<uint8_t, 32>;

// Fills `n` bytes from the kernel's random source (getrandom); throws Internal if it fails.
void SecureRandomBytes(void* data, size_t n);

// The cluster secret's keys, made once per transport.
class ClusterKey {
 public:
  // `secret` empty means insecure (no secret: anyone who reaches the port is trusted).
  explicit ClusterKey(std::string_view secret) : insecure_(secret.empty()), hmac_(secret) {}
  bool insecure() const { return insecure_; }
  const HmacSha256& hmac() const { return hmac_; }
  // The key of messages from task `src` (incarnation src_inc) to `dst` (dst_inc): per direction
  // and per pair of incarnations, the same whichever of the pair's connections was made first:
  // SipHash-2-4 under the first 16 bytes of HMAC-SHA256(secret, the four of them).
  SipHash24 MessageKey(int src, uint64_t src_inc, int dst, uint64_t dst_inc) const;

 private:
  bool insecure_;
  HmacSha256 hmac_;
};

struct HandshakeConfig {
  const ClusterKey* key = nullptr;  // not owned
  int self = 0;                     // this task's global index
  int num_tasks = 0;
  uint64_t incarnation = 0;         // random per process start: a restarted task has a new one
  std::string worker_address;       // this task's UCX worker address
};

class Handshake {
 public:
  static Handshake Client(const HandshakeConfig& config, int peer_task);  // the hello is in TakeOutput()
  static Handshake Server(const HandshakeConfig& config);

  // Consumes received bytes (any split); error: drop the connection (nothing more is accepted)
  // after sending what TakeOutput still holds (a challenge that tells a peer without the secret).
  Status Feed(std::string_view bytes);
  // Bytes to send now (moved out).
  std::string TakeOutput() { return std::move(output_); }
  // Both sides verified, the peer's address is known (this side's last frame is in the output).
  bool done() const { return state_ == State::kDone; }
  // The peer proved the secret (a client may know this before it is done).
  bool peer_verified() const { return state_ == State::kClientAwaitAccept || state_ == State::kDone; }
  // Whether bytes were received since the hello was due (a peer not listening yet sends none).
  bool heard_from_peer() const { return heard_; }
  // The peer's task (-1 until the server read the hello), incarnation and UCX worker address.
  int peer_task() const { return peer_task_; }
  uint64_t peer_incarnation() const { return peer_incarnation_; }
  const std::string& peer_address() const { return peer_address_; }

 private:
  enum class State { kClientAwaitChallenge, kClientAwaitAccept, kServerAwaitHello, kServerAwaitResponse, kDone, kFailed };
  Handshake(const HandshakeConfig& config, State state) : config_(config), state_(state) {}
  Status OnFrame(uint16_t type, std::string_view body);
  std::string Transcript() const;  // C's task, S's task, C's inc, S's inc, nonce_c, nonce_s
  Sha256Digest RoleMac(std::string_view role) const;

  HandshakeConfig config_;
  State state_;
  std::string input_, output_;
  bool heard_ = false;
  int peer_task_ = -1;
  uint64_t peer_incarnation_ = 0;
  std::string peer_address_;
  Nonce client_nonce_{}, server_nonce_{};
  int client_task_ = -1, server_task_ = -1;
  uint64_t client_inc_ = 0, server_inc_ = 0;
};

}  // namespace weft
