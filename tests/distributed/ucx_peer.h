// Two UCX test processes meeting (tests/distributed): each listens on an ephemeral port, they swap
// ports over the parent/child pipes (child_process.h) and connect.
#pragma once

#include <cctype>
#include <chrono>
#include <string>

#include <doctest/doctest.h>

#include "distributed/ucx_rendezvous.h"
#include "tests/distributed/child_process.h"

namespace weft::test {

// Both sides: write our port, read the peer's (task `peer`), connect to every task.
inline void SwapPortsAndConnect(UcxRendezvousMgr& mgr, int in_fd, int out_fd, int peer) {
  WriteLine(out_fd, std::to_string(mgr.transport().port()));
  const std::string line = ReadLine(in_fd, std::chrono::seconds(20));
  REQUIRE_MESSAGE(!line.empty(), "no port from the peer");
  REQUIRE_MESSAGE(std::isdigit(static_cast<unsigned char>(line[0])), "peer said: " << line);
  mgr.transport().SetPeerAddress(peer, HostPort{"127.0.0.1", std::stoi(line)});
  const Status s = mgr.ConnectAll();
  REQUIRE_MESSAGE(s.ok(), s.ToString());
}

}  // namespace weft::test
