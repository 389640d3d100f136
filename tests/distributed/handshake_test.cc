// The connection handshake (distributed/ucx/handshake.h) as a state machine over bytes: the
// exchange completes between tasks that share the secret, and every malformed, truncated,
// oversized, replayed or wrong-secret input is a clear error (issue 17, findings 1 and 2).
#include <doctest/doctest.h>

#include <cstring>
#include <string>

#include "distributed/ucx/handshake.h"

using namespace weft;

namespace {

constexpr int kTasks = 3;

HandshakeConfig Config(const ClusterKey* key, int self, uint64_t incarnation, std::string address) {
  return {key, self, kTasks, incarnation, std::move(address)};
}

std::string Frame(uint16_t type, const std::string& body, uint32_t magic = kHandshakeMagic,
                  uint16_t version = kHandshakeVersion, uint32_t length = UINT32_MAX) {
  std::string out(kHandshakeFrameHeader, '\0');
  const uint32_t len = length == UINT32_MAX ? static_cast<uint32_t>(body.size()) : length;
  std::memcpy(out.data(), &magic, 4);
  std::memcpy(out.data() + 4, &version, 2);
  std::memcpy(out.data() + 6, &type, 2);
  std::memcpy(out.data() + 8, &len, 4);
  return out + body;
}

bool Contains(const Status& s, const std::string& text) { return s.message().find(text) != std::string::npos; }

}  // namespace

TEST_CASE("handshake: two tasks with the same secret exchange addresses and incarnations") {
  const ClusterKey key("s3cret");
  Handshake client = Handshake::Client(Config(&key, 0, 111, "client-address"), 2);
  Handshake server = Handshake::Server(Config(&key, 2, 222, "server-address"));
  REQUIRE(server.Feed(client.TakeOutput()).ok());                  // hello -> challenge
  CHECK(server.peer_task() == 0);
  CHECK_FALSE(client.peer_verified());
  REQUIRE(client.Feed(server.TakeOutput()).ok());                  // challenge -> response
  CHECK(client.peer_verified());
  CHECK_FALSE(client.done());
  REQUIRE(server.Feed(client.TakeOutput()).ok());                  // response -> accept
  CHECK(server.done());
  CHECK(server.peer_address() == "client-address");
  CHECK(server.peer_incarnation() == 111);
  REQUIRE(client.Feed(server.TakeOutput()).ok());
  CHECK(client.done());
  CHECK(client.peer_address() == "server-address");
  CHECK(client.peer_incarnation() == 222);
  // The message keys agree across the pair and differ by direction.
  const std::string m = "a header";
  CHECK(key.MessageKey(0, 111, 2, 222).Compute(m) == key.MessageKey(0, 111, 2, 222).Compute(m));
  CHECK(key.MessageKey(0, 111, 2, 222).Compute(m) != key.MessageKey(2, 222, 0, 111).Compute(m));
  CHECK(key.MessageKey(0, 111, 2, 222).Compute(m) != key.MessageKey(0, 112, 2, 222).Compute(m));
  CHECK(key.MessageKey(0, 111, 2, 222).Compute(m) != ClusterKey("other").MessageKey(0, 111, 2, 222).Compute(m));
}

TEST_CASE("handshake: frames split at every byte still complete") {
  const ClusterKey key("s3cret");
  Handshake client = Handshake::Client(Config(&key, 1, 5, std::string(300, 'c')), 0);
  Handshake server = Handshake::Server(Config(&key, 0, 6, std::string(500, 's')));
  for (int round = 0; round < 2; ++round) {
    for (char c : client.TakeOutput()) REQUIRE(server.Feed(std::string(1, c)).ok());
    for (char c : server.TakeOutput()) REQUIRE(client.Feed(std::string(1, c)).ok());
  }
  CHECK(client.done());
  CHECK(server.done());
  CHECK(server.peer_address() == std::string(300, 'c'));
}

TEST_CASE("handshake: a wrong secret fails on both sides, naming the secret") {
  const ClusterKey ours("s3cret"), theirs("guess");
  SUBCASE("the dialing task has the wrong secret: it sees the server's proof fail") {
    Handshake client = Handshake::Client(Config(&theirs, 0, 1, "a"), 2);
    Handshake server = Handshake::Server(Config(&ours, 2, 2, "b"));
    REQUIRE(server.Feed(client.TakeOutput()).ok());
    const Status s = client.Feed(server.TakeOutput());
    CHECK(s.code() == Code::kUnauthenticated);
    CHECK(Contains(s, "did not prove the cluster secret"));
    CHECK(client.TakeOutput().empty());  // no response, no worker address
    CHECK(client.Feed("more").code() == Code::kFailedPrecondition);
  }
  SUBCASE("a forged response (the MAC of another secret) is refused before the address is read") {
    Handshake client = Handshake::Client(Config(&ours, 0, 1, "a"), 2);
    Handshake server = Handshake::Server(Config(&ours, 2, 2, "b"));
    REQUIRE(server.Feed(client.TakeOutput()).ok());
    (void)server.TakeOutput();
    const Status s = server.Feed(Frame(3, std::string(32, '\x5a') + "attacker-address"));
    CHECK(s.code() == Code::kUnauthenticated);
    CHECK_FALSE(server.done());
    CHECK(server.TakeOutput().empty());  // the server's address is not given out
  }
  SUBCASE("a response recorded from another exchange does not answer a new challenge (replay)") {
    Handshake c1 = Handshake::Client(Config(&ours, 0, 1, "a"), 2);
    Handshake s1 = Handshake::Server(Config(&ours, 2, 2, "b"));
    const std::string hello = c1.TakeOutput();
    REQUIRE(s1.Feed(hello).ok());
    REQUIRE(c1.Feed(s1.TakeOutput()).ok());
    const std::string response = c1.TakeOutput();
    Handshake s2 = Handshake::Server(Config(&ours, 2, 2, "b"));  // fresh nonce
    REQUIRE(s2.Feed(hello).ok());
    CHECK(s2.Feed(response).code() == Code::kUnauthenticated);
  }
  SUBCASE("a task without a secret and one with a secret say which side has none") {
    const ClusterKey none("");
    Handshake client = Handshake::Client(Config(&none, 0, 1, "a"), 2);
    Handshake server = Handshake::Server(Config(&ours, 2, 2, "b"));
    const Status s = server.Feed(client.TakeOutput());
    CHECK(s.code() == Code::kUnauthenticated);
    CHECK(Contains(s, "without a cluster secret"));
    // The challenge still goes out, so the dialing side learns it is the one without a secret.
    const Status c = client.Feed(server.TakeOutput());
    CHECK(c.code() == Code::kUnauthenticated);
    CHECK(Contains(c, "this task runs without one"));
    CHECK(client.TakeOutput().empty());
  }
}

TEST_CASE("handshake: garbage, truncated, oversized and misdirected input is a clear error") {
  const ClusterKey key("s3cret");
  auto server = [&] { return Handshake::Server(Config(&key, 2, 2, "b")); };
  {
    Handshake s = server();
    const Status st = s.Feed(std::string(64, '\0'));
    CHECK(st.code() == Code::kDataLoss);
    CHECK(Contains(st, "bad magic 0x00000000"));
  }
  {
    Handshake s = server();
    CHECK(s.Feed(std::string(64, '\xff')).code() == Code::kDataLoss);
  }
  {  // truncated: a valid hello's first 20 bytes wait for more, and answer nothing
    Handshake s = server();
    const std::string hello = Handshake::Client(Config(&key, 0, 1, "a"), 2).TakeOutput();
    CHECK(s.Feed(hello.substr(0, 20)).ok());
    CHECK(s.TakeOutput().empty());
    CHECK(s.peer_task() == -1);
  }
  {  // a frame that claims 1 MiB is refused at its header, before the bytes come
    Handshake s = server();
    const Status st = s.Feed(Frame(1, "", kHandshakeMagic, kHandshakeVersion, 1 << 20));
    CHECK(st.code() == Code::kDataLoss);
    CHECK(Contains(st, "at most 8192"));
  }
  {
    Handshake s = server();
    const Status st = s.Feed(Frame(1, std::string(52, '\0'), kHandshakeMagic, 9));
    CHECK(st.code() == Code::kInvalidArgument);
    CHECK(Contains(st, "version 9"));
  }
  {  // a hello of the wrong size, a frame out of order
    Handshake s = server();
    CHECK(s.Feed(Frame(1, std::string(51, '\0'))).code() == Code::kDataLoss);
    Handshake t = server();
    CHECK(Contains(t.Feed(Frame(3, std::string(40, '\0'))), "a response frame where a hello was due"));
  }
  {  // dialed the wrong task; claims to be this task or one outside the cluster
    Handshake misdirected = Handshake::Client(Config(&key, 0, 1, "a"), 1);
    Handshake s = server();
    CHECK(s.Feed(misdirected.TakeOutput()).code() == Code::kInvalidArgument);
    Handshake self = Handshake::Client(Config(&key, 2, 1, "a"), 2);
    Handshake s2 = server();
    CHECK(s2.Feed(self.TakeOutput()).code() == Code::kInvalidArgument);
    Handshake outside = Handshake::Client(Config(&key, 7, 1, "a"), 2);
    Handshake s3 = server();
    CHECK(Contains(s3.Feed(outside.TakeOutput()), "claims to be task #7"));
  }
}
