// Authenticated connections between tasks, in one process on 127.0.0.1 with ephemeral ports
// (issue 17, findings 1, 2 and 6): garbage, truncated, oversized, slow and wrong-secret connections
// to every port a task listens on are dropped and counted while the task keeps serving a real
// peer; header messages without a valid MAC are rejected; a peer that restarts (a new
// incarnation) is accepted again. Every wait is bounded.
#include <doctest/doctest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <cstring>
#include <fstream>
#include <future>
#include <map>
#include <mutex>
#include <set>
#include <sstream>
#include <thread>

#include "distributed/ucx/transport.h"
#include "tests/distributed/listening_sockets.h"

using namespace weft;
using namespace std::chrono_literals;

namespace {

const char* const kSecret = "auth-test-secret";

UcxTransportOptions Options(int task, const std::string& secret = kSecret) {
  UcxTransportOptions o;
  o.cluster = ClusterSpec::FromFlag("worker=127.0.0.1:1,127.0.0.1:2");  // ports replaced by ephemeral ones
  o.task = {"worker", task};
  o.listen_port_override = 0;
  o.connect_timeout = 5s;
  o.handshake_timeout = 300ms;
  o.context.config["TLS"] = "tcp,self";
  o.data_peer_error_handling = true;
  o.measure_eager_threshold = false;
  o.cluster_secret = secret;
  return o;
}

// What a transport received, for bounded waits.
struct Inbox {
  std::mutex mu;
  std::condition_variable cv;
  std::map<std::string, std::pair<Status, Tensor>> got;
  std::vector<std::pair<int, Status>> failures;

  UcxTransport::MessageHandler Handler() {
    return [this](int, uint64_t, const std::string& key, const Status& s, const Tensor& v, bool) {
      std::lock_guard<std::mutex> l(mu);
      got[key] = {s, v};
      cv.notify_all();
    };
  }
  UcxTransport::PeerFailureHandler OnFailure() {
    return [this](int task, const Status& s) {
      std::lock_guard<std::mutex> l(mu);
      failures.emplace_back(task, s);
      cv.notify_all();
    };
  }
  std::pair<Status, Tensor> Wait(const std::string& key) {
    std::unique_lock<std::mutex> l(mu);
    if (!cv.wait_for(l, 10s, [&] { return got.count(key) > 0; })) return {errors::DeadlineExceeded("{}", key), {}};
    return got[key];
  }
  size_t NumFailures(std::chrono::milliseconds wait) {
    std::unique_lock<std::mutex> l(mu);
    cv.wait_for(l, wait, [&] { return !failures.empty(); });
    return failures.size();
  }
};

Status SendAndWait(UcxTransport& t, int task, const std::string& key, const Tensor& v) {
  auto p = std::make_shared<std::promise<Status>>();  // outlives a timed-out wait
  std::future<Status> f = p->get_future();
  t.SendTensor(task, 1, key, v, false, [p](const Status& s) { p->set_value(s); });
  if (f.wait_for(10s) != std::future_status::ready) return errors::DeadlineExceeded("send {}", key);
  return f.get();
}

// Connects to host:port, sends `bytes`, then waits up to `hold` for the peer to close (returns
// whether it closed).
bool SendRaw(const std::string& host, int port, const std::string& bytes, std::chrono::milliseconds hold) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  REQUIRE(fd >= 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  inet_pton(AF_INET, host.c_str(), &a.sin_addr);
  if (connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)) != 0) {
    close(fd);
    return false;
  }
  if (!bytes.empty()) (void)!send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL);
  bool closed = false;
  const auto deadline = std::chrono::steady_clock::now() + hold;
  while (!closed && std::chrono::steady_clock::now() < deadline) {
    pollfd p{fd, POLLIN, 0};
    if (poll(&p, 1, 20) > 0) {
      char buf[256];
      const ssize_t n = recv(fd, buf, sizeof(buf), 0);
      closed = n <= 0;
    }
  }
  close(fd);
  return closed;
}

int64_t WaitForDrops(UcxTransport& t, int64_t at_least) {
  const auto deadline = std::chrono::steady_clock::now() + 5s;
  while (t.handshake_stats().dropped < at_least && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(10ms);
  }
  return t.handshake_stats().dropped;
}

}  // namespace

TEST_CASE("auth: bad connections to every port a task listens on are dropped and counted; it still serves") {
  Inbox inbox;
  UcxTransport a(Options(0), inbox.Handler(), inbox.OnFailure());
  const std::vector<testing::ListeningSocket> ports = testing::OwnListeningSockets();
  REQUIRE(!ports.empty());
  bool has_ours = false;
  for (const testing::ListeningSocket& l : ports) has_ours |= l.port == a.port();
  CHECK(has_ours);
  // Garbage to every listening port (ours and UCX's own): the process survives (it used to abort).
  for (const testing::ListeningSocket& l : ports) {
    INFO("port ", l.ToString());
    SendRaw(l.ConnectHost(), l.port, std::string(64, '\0'), 50ms);
    SendRaw(l.ConnectHost(), l.port, std::string(64, '\xff'), 50ms);
  }
  CHECK(WaitForDrops(a, 2) >= 2);
  const ClusterKey key(kSecret);
  const std::string hello = Handshake::Client({&key, 1, 2, 42, "x"}, 0).TakeOutput();
  // Truncated: half a hello, then the client goes away.
  SendRaw("127.0.0.1", a.port(), hello.substr(0, 20), 0ms);
  // Oversized: a frame header that claims 1 GiB (refused at its header, nothing allocated).
  std::string huge = hello.substr(0, kHandshakeFrameHeader);
  const uint32_t gib = 1u << 30;
  std::memcpy(huge.data() + 8, &gib, 4);
  CHECK(SendRaw("127.0.0.1", a.port(), huge, 2s));  // the task closes it at once
  // Slow: connected, silent: closed after handshake_timeout (Options() sets a short one).
  const auto t0 = std::chrono::steady_clock::now();
  CHECK(SendRaw("127.0.0.1", a.port(), "", 3s));
  CHECK(std::chrono::steady_clock::now() - t0 >= 250ms);
  CHECK(WaitForDrops(a, 5) >= 5);
  // A task with the wrong secret: a clear error naming the task it dialed; the task counts it.
  const int64_t before = a.handshake_stats().dropped;
  {
    UcxTransport wrong(Options(1, "not-the-secret"), nullptr, nullptr);
    wrong.SetPeerAddress(0, HostPort{"127.0.0.1", a.port()});
    const Status s = wrong.Connect(0);
    CHECK(s.code() == Code::kUnauthenticated);
    CHECK_MESSAGE(s.message().find("task worker:0") != std::string::npos, s.ToString());
    CHECK_MESSAGE(s.message().find("cluster secret") != std::string::npos, s.ToString());
  }
  CHECK(WaitForDrops(a, before + 1) == before + 1);
  const HandshakeStats stats = a.handshake_stats();
  CHECK(stats.accepted == 0);
  CHECK_MESSAGE(stats.last_drop.message().find("dropped a connection from 127.0.0.1:") != std::string::npos,
                stats.last_drop.ToString());
  // A real peer still connects, and tensors go both ways.
  Inbox inbox_b;
  UcxTransport b(Options(1), inbox_b.Handler(), nullptr);
  b.SetPeerAddress(0, HostPort{"127.0.0.1", a.port()});
  REQUIRE(b.Connect(0).ok());
  const Tensor v = Tensor::FromVector<float>({1, 2, 3}, {3});
  REQUIRE(SendAndWait(b, 0, "to-a", v).ok());
  CHECK(inbox.Wait("to-a").first.ok());
  REQUIRE(SendAndWait(a, 1, "to-b", v).ok());
  const auto [s, got] = inbox_b.Wait("to-b");
  REQUIRE(s.ok());
  CHECK(got.flat<float>()(2) == 3.0f);
  CHECK(a.handshake_stats().accepted == 1);
  CHECK(inbox.failures.empty());
}

TEST_CASE("auth: a header message without a valid MAC is rejected as Unauthenticated and counted") {
  Inbox inbox_a;
  UcxTransport a(Options(0), inbox_a.Handler(), nullptr);
  UcxTransport b(Options(1), nullptr, nullptr);
  b.SetPeerAddress(0, HostPort{"127.0.0.1", a.port()});
  REQUIRE(b.Connect(0).ok());
  const Tensor v = Tensor::FromVector<int32_t>({7}, {1});
  const std::string message = [&] {
    std::string m = EncodeTensorHeader(1, 1, "forged", v, false, true, 0);
    return m + std::string(static_cast<const char*>(v.raw_data()), v.bytes());
  }();
  REQUIRE(b.SendRawForTesting(0, HeaderTag(1), message, /*seal=*/false).ok());
  const auto deadline = std::chrono::steady_clock::now() + 5s;
  while (a.Counters(1).unauthenticated == 0 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(5ms);
  }
  CHECK(a.Counters(1).unauthenticated == 1);
  CHECK(a.last_rejection().code() == Code::kUnauthenticated);
  CHECK_MESSAGE(a.last_rejection().message().find("worker:1") != std::string::npos, a.last_rejection().ToString());
  {
    std::lock_guard<std::mutex> l(inbox_a.mu);
    CHECK(inbox_a.got.count("forged") == 0);  // nothing of it was delivered
  }
  // The same bytes with the sender's MAC are delivered.
  REQUIRE(b.SendRawForTesting(0, HeaderTag(1), message, /*seal=*/true).ok());
  const auto [s, got] = inbox_a.Wait("forged");
  REQUIRE(s.ok());
  CHECK(got.flat<int32_t>()(0) == 7);
}

TEST_CASE("auth: no secret and not insecure is a clear error at start; insecure tasks talk") {
  UcxTransportOptions o = Options(0, "");
  try {
    UcxTransport t(o, nullptr, nullptr);
    FAIL("started without a secret");
  } catch (const Error& e) {
    CHECK(e.code() == Code::kFailedPrecondition);
    CHECK(std::string(e.what()).find("WEFT_CLUSTER_SECRET") != std::string::npos);
    CHECK(std::string(e.what()).find("--insecure") != std::string::npos);
  }
  o.insecure = true;
  Inbox inbox;
  UcxTransport a(o, inbox.Handler(), nullptr);
  UcxTransportOptions ob = Options(1, "");
  ob.insecure = true;
  UcxTransport b(ob, nullptr, nullptr);
  b.SetPeerAddress(0, HostPort{"127.0.0.1", a.port()});
  REQUIRE(b.Connect(0).ok());
  REQUIRE(SendAndWait(b, 0, "plain", Tensor::Scalar<float>(2)).ok());
  CHECK(inbox.Wait("plain").first.ok());
  // A task with a secret refuses an insecure one, saying so.
  UcxTransport c(Options(1), nullptr, nullptr);
  c.SetPeerAddress(0, HostPort{"127.0.0.1", a.port()});
  const Status s = c.Connect(0);
  CHECK(s.code() == Code::kUnauthenticated);
  CHECK_MESSAGE(s.message().find("without a cluster secret") != std::string::npos, s.ToString());
}

TEST_CASE("auth: a peer that restarts (new incarnation) is accepted again; its old one failed once") {
  Inbox inbox_a;
  UcxTransport a(Options(0), inbox_a.Handler(), inbox_a.OnFailure());
  const Tensor v = Tensor::FromVector<float>({5, 6}, {2});
  {
    Inbox inbox_b;
    UcxTransport b(Options(1), inbox_b.Handler(), nullptr);
    b.SetPeerAddress(0, HostPort{"127.0.0.1", a.port()});
    REQUIRE(b.Connect(0).ok());
    REQUIRE(SendAndWait(b, 0, "first", v).ok());
    REQUIRE(inbox_a.Wait("first").first.ok());
    REQUIRE(SendAndWait(a, 1, "reply", v).ok());
    REQUIRE(inbox_b.Wait("reply").first.ok());
  }  // the first incarnation of worker:1 exits
  REQUIRE(inbox_a.NumFailures(5s) == 1);
  CHECK(inbox_a.failures[0].first == 1);
  CHECK(!a.PeerStatus(1).ok());
  Inbox inbox_b2;
  UcxTransport b2(Options(1), inbox_b2.Handler(), nullptr);
  b2.SetPeerAddress(0, HostPort{"127.0.0.1", a.port()});
  REQUIRE(b2.Connect(0).ok());
  REQUIRE(SendAndWait(b2, 0, "second", v).ok());
  REQUIRE(inbox_a.Wait("second").first.ok());
  CHECK(a.PeerStatus(1).ok());
  const Status back = SendAndWait(a, 1, "reply2", v);  // on main: "a failed peer stays failed"
  REQUIRE_MESSAGE(back.ok(), back.ToString());
  const auto [s, got] = inbox_b2.Wait("reply2");
  REQUIRE(s.ok());
  CHECK(got.flat<float>()(1) == 6.0f);
  CHECK(inbox_a.failures.size() == 1);
}
