// The handshake that opens every connection between tasks (distributed/ucx/handshake.h): the first
// bytes any peer that reaches a task's port sends, before it proved it holds the cluster secret.
// Three targets, one per side and step an unauthenticated peer can drive:
//   handshake           the listening task fed what a dialer sends first (the hello)
//   handshake_response  the listening task after a valid hello, fed what comes next (the response)
//   handshake_client    the dialing task fed what a listener answers (challenge, accept)
#include "distributed/ucx/handshake.h"
#include "../fuzz.h"

namespace weft::fuzz {
namespace {

const ClusterKey& Key() {
  static const ClusterKey key("fuzz secret");
  return key;
}
HandshakeConfig Config(int self) { return {&Key(), self, 4, /*incarnation=*/7 + static_cast<uint64_t>(self), "ucx-address"}; }

void Check(const Status& s) {
  if (!s.ok()) throw Error(s);
}

// A frame recorded from another exchange carries a MAC over that exchange's nonces, so the best a
// (mutated) replay can get is Unauthenticated: for the targets past the hello that is the accepted
// outcome, and what they fuzz is the framing and parsing that runs before the MAC is checked.
void CheckAllowingStaleMac(const Status& s) {
  if (!s.ok() && s.code() != Code::kUnauthenticated) throw Error(s);
}

// One complete exchange's frames (nonces are random, so a recorded response or challenge never
// verifies again: the seeds exercise framing and parsing, the MAC check rejects the rest).
struct Transcript {
  std::string hello, challenge, response, accept;
};
Transcript Exchange() {
  Handshake client = Handshake::Client(Config(1), 0);
  Handshake server = Handshake::Server(Config(0));
  Transcript t;
  t.hello = client.TakeOutput();
  Check(server.Feed(t.hello));
  t.challenge = server.TakeOutput();
  Check(client.Feed(t.challenge));
  t.response = client.TakeOutput();
  Check(server.Feed(t.response));
  t.accept = server.TakeOutput();
  Check(client.Feed(t.accept));
  if (!client.done() || !server.done()) throw Error(errors::Internal("the seed exchange did not finish"));
  return t;
}

}  // namespace

WEFT_FUZZ_TARGET(handshake, {
    .seeds = [] { return std::vector<std::string>{Exchange().hello}; },
    .decode = [](std::string_view in) {
      Handshake server = Handshake::Server(Config(0));
      Check(server.Feed(in));
    },
});

WEFT_FUZZ_TARGET(handshake_response, {
    .seeds = [] { return std::vector<std::string>{Exchange().response, ""}; },
    .decode = [](std::string_view in) {
      Handshake client = Handshake::Client(Config(1), 0);
      Handshake server = Handshake::Server(Config(0));
      Check(server.Feed(client.TakeOutput()));
      CheckAllowingStaleMac(server.Feed(in));
    },
});

WEFT_FUZZ_TARGET(handshake_client, {
    .seeds = [] {
      const Transcript t = Exchange();
      return std::vector<std::string>{t.challenge, t.challenge + t.accept};
    },
    .decode = [](std::string_view in) {
      Handshake client = Handshake::Client(Config(1), 0);
      CheckAllowingStaleMac(client.Feed(in));
    },
});

}  // namespace weft::fuzz
