#include "distributed/ucx/tcp_socket.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace weft {
namespace {

void Configure(int fd) {
  const int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
}

sockaddr_storage Resolve(const HostPort& address, socklen_t* len) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* res = nullptr;
  const std::string port = std::to_string(address.port);
  const int rc = getaddrinfo(address.host.c_str(), port.c_str(), &hints, &res);
  if (rc != 0 || res == nullptr) {
    throw Error(errors::Unavailable("cannot resolve '{}': {}", address.ToString(), gai_strerror(rc)));
  }
  sockaddr_storage ss{};
  std::memcpy(&ss, res->ai_addr, res->ai_addrlen);
  *len = res->ai_addrlen;
  freeaddrinfo(res);
  return ss;
}

std::string SockaddrString(const sockaddr_storage& ss) {
  char host[INET6_ADDRSTRLEN] = "?";
  int port = 0;
  if (ss.ss_family == AF_INET) {
    const auto* in = reinterpret_cast<const sockaddr_in*>(&ss);
    inet_ntop(AF_INET, &in->sin_addr, host, sizeof(host));
    port = ntohs(in->sin_port);
  } else if (ss.ss_family == AF_INET6) {
    const auto* in = reinterpret_cast<const sockaddr_in6*>(&ss);
    inet_ntop(AF_INET6, &in->sin6_addr, host, sizeof(host));
    port = ntohs(in->sin6_port);
  }
  return ss.ss_family == AF_INET6 ? fmt::format("[{}]:{}", host, port) : fmt::format("{}:{}", host, port);
}

}  // namespace

TcpSocket::~TcpSocket() {
  if (fd_ >= 0) close(fd_);
}

TcpSocket& TcpSocket::operator=(TcpSocket&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) close(fd_);
    fd_ = other.fd_;
    other.fd_ = -1;
  }
  return *this;
}

TcpSocket TcpSocket::Listen(const HostPort& address, int* port) {
  HostPort resolvable = address;
  if (resolvable.port == 0) resolvable.port = 1;  // getaddrinfo's answer; the port is set below
  socklen_t len = 0;
  sockaddr_storage ss = Resolve(resolvable, &len);
  if (ss.ss_family == AF_INET) reinterpret_cast<sockaddr_in*>(&ss)->sin_port = htons(address.port);
  if (ss.ss_family == AF_INET6) reinterpret_cast<sockaddr_in6*>(&ss)->sin6_port = htons(address.port);
  TcpSocket s(socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!s.valid()) throw Error(errors::Unavailable("socket for {}: {}", address.ToString(), std::strerror(errno)));
  const int one = 1;
  setsockopt(s.fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  if (bind(s.fd_, reinterpret_cast<const sockaddr*>(&ss), len) != 0) {
    throw Error(errors::Unavailable("cannot listen on {}: bind: {}", address.ToString(), std::strerror(errno)));
  }
  if (listen(s.fd_, 128) != 0) {
    throw Error(errors::Unavailable("cannot listen on {}: {}", address.ToString(), std::strerror(errno)));
  }
  Configure(s.fd_);
  sockaddr_storage bound{};
  socklen_t bound_len = sizeof(bound);
  getsockname(s.fd_, reinterpret_cast<sockaddr*>(&bound), &bound_len);
  *port = bound.ss_family == AF_INET ? ntohs(reinterpret_cast<sockaddr_in*>(&bound)->sin_port)
                                     : ntohs(reinterpret_cast<sockaddr_in6*>(&bound)->sin6_port);
  return s;
}

TcpSocket TcpSocket::Accept(std::string* peer) const {
  sockaddr_storage ss{};
  socklen_t len = sizeof(ss);
  const int fd = accept4(fd_, reinterpret_cast<sockaddr*>(&ss), &len, SOCK_CLOEXEC);
  if (fd < 0) return TcpSocket();  // EAGAIN, or a connection that was reset while queued
  Configure(fd);
  *peer = SockaddrString(ss);
  return TcpSocket(fd);
}

TcpSocket TcpSocket::Connect(const HostPort& address) {
  socklen_t len = 0;
  const sockaddr_storage ss = Resolve(address, &len);
  TcpSocket s(socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!s.valid()) throw Error(errors::Unavailable("socket for {}: {}", address.ToString(), std::strerror(errno)));
  Configure(s.fd_);
  if (connect(s.fd_, reinterpret_cast<const sockaddr*>(&ss), len) != 0 && errno != EINPROGRESS) {
    throw Error(errors::Unavailable("connecting to {}: {}", address.ToString(), std::strerror(errno)));
  }
  return s;
}

Status TcpSocket::ConnectResult() const {
  int err = 0;
  socklen_t len = sizeof(err);
  if (getsockopt(fd_, SOL_SOCKET, SO_ERROR, &err, &len) != 0) err = errno;
  return err == 0 ? Status() : errors::Unavailable("connect: {}", std::strerror(err));
}

Status TcpSocket::Read(std::string* into, size_t max, bool* eof) {
  *eof = false;
  const size_t old = into->size();
  into->resize(old + max);
  ssize_t n;
  do {
    n = recv(fd_, into->data() + old, max, 0);
  } while (n < 0 && errno == EINTR);
  into->resize(old + (n > 0 ? static_cast<size_t>(n) : 0));
  if (n == 0) *eof = true;
  if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK) return errors::Unavailable("recv: {}", std::strerror(errno));
  return Status();
}

Status TcpSocket::Write(std::string* out) {
  while (!out->empty()) {
    const ssize_t n = send(fd_, out->data(), out->size(), MSG_NOSIGNAL);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) return Status();
      return errors::Unavailable("send: {}", std::strerror(errno));
    }
    out->erase(0, static_cast<size_t>(n));
  }
  return Status();
}

}  // namespace weft
