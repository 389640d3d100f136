// Non-blocking TCP sockets for PeerConnector's listener and connections (peer_connector.h):
// every call returns at once (EAGAIN is "nothing now"), so they can run on the UCX progress thread.
//
//   int port = 0;
//   TcpSocket listener = TcpSocket::Listen({"127.0.0.1", 0}, &port);
//   std::string who;
//   TcpSocket conn = listener.Accept(&who);          // !conn.valid(): nobody is waiting
//   std::string in; bool eof = false;
//   Status s = conn.Read(&in, 4096, &eof);           // appends what arrived
//
// Move-only RAII over the fd. Not thread-safe.
#pragma once

#include <string>

#include "core/status.h"
#include "distributed/cluster_spec.h"

namespace weft {

class TcpSocket {
 public:
  TcpSocket() = default;
  ~TcpSocket();
  TcpSocket(TcpSocket&& other) noexcept : fd_(other.fd_) { other.fd_ = -1; }
  TcpSocket& operator=(TcpSocket&& other) noexcept;
  TcpSocket(const TcpSocket&) = delete;
  TcpSocket& operator=(const TcpSocket&) = delete;

  bool valid() const { return fd_ >= 0; }
  int fd() const { return fd_; }

  // Binds exactly `address` (port 0: a free one; *port says which) and listens. Throws Error
  // (Unavailable naming the address) when it cannot.
  static TcpSocket Listen(const HostPort& address, int* port);
  // One pending connection (non-blocking, TCP_NODELAY), or an invalid socket when none is
  // waiting; `peer` gets "host:port".
  TcpSocket Accept(std::string* peer) const;
  // Starts connecting (the result shows as writability, then ConnectResult). Resolves the host
  // (getaddrinfo: numeric addresses and /etc/hosts answer at once). Throws Error (Unavailable)
  // when the name does not resolve or the socket cannot be made.
  static TcpSocket Connect(const HostPort& address);
  // After writability: OK when connected, Unavailable with the reason otherwise.
  Status ConnectResult() const;
  // Appends up to `max` available bytes; *eof when the peer closed. Unavailable on an error.
  Status Read(std::string* into, size_t max, bool* eof);
  // Sends what it can of `out` and erases it from `out`. Unavailable on an error.
  Status Write(std::string* out);

 private:
  explicit TcpSocket(int fd) : fd_(fd) {}
  int fd_ = -1;
};

}  // namespace weft
