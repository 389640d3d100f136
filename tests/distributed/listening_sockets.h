// The TCP sockets this process listens on, as `ss -ltnp` shows them: the rows of /proc/net/tcp{,6}
// in state LISTEN whose inode is one of this process's fds (weft's listener, UCX's tcp transport).
// For tests that check where a task listens and that send bytes to every such port.
#pragma once

#include <arpa/inet.h>
#include <fmt/format.h>
#include <netinet/in.h>

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace weft::testing {

struct ListeningSocket {
  std::string host;  // the bound address as text ("127.0.0.1", "0.0.0.0", "::1")
  int port = 0;
  bool v6 = false;
  // "127.0.0.1:43155", "[::1]:5000".
  std::string ToString() const { return v6 ? fmt::format("[{}]:{}", host, port) : fmt::format("{}:{}", host, port); }
  // Where a client on this machine reaches it over IPv4: its address, or loopback for a wildcard
  // or IPv6 socket.
  std::string ConnectHost() const { return v6 || host == "0.0.0.0" ? "127.0.0.1" : host; }
};

inline std::vector<ListeningSocket> OwnListeningSockets() {
  std::set<std::string> inodes;
  for (const auto& fd : std::filesystem::directory_iterator("/proc/self/fd")) {
    std::error_code ec;
    const std::string target = std::filesystem::read_symlink(fd.path(), ec).string();
    if (!ec && target.rfind("socket:[", 0) == 0) inodes.insert(target.substr(8, target.size() - 9));
  }
  std::vector<ListeningSocket> out;
  for (const char* table : {"/proc/net/tcp", "/proc/net/tcp6"}) {
    std::ifstream in(table);
    std::string line;
    std::getline(in, line);  // header
    while (std::getline(in, line)) {
      std::istringstream f(line);
      std::string slot, local, remote, state, queues, timer, retr, uid, timeout, inode;
      f >> slot >> local >> remote >> state >> queues >> timer >> retr >> uid >> timeout >> inode;
      if (state != "0A" || inodes.count(inode) == 0) continue;  // 0A: TCP_LISTEN
      // local is HEXADDR:HEXPORT, the address as the kernel stores it (32-bit words, host order).
      const std::string hex = local.substr(0, local.find(':'));
      ListeningSocket s;
      s.port = std::stoi(local.substr(local.find(':') + 1), nullptr, 16);
      s.v6 = hex.size() != 8;
      unsigned char bytes[16];
      for (size_t w = 0; w < hex.size() / 8 && w < 4; ++w) {
        const uint32_t word = static_cast<uint32_t>(std::stoul(hex.substr(8 * w, 8), nullptr, 16));
        std::memcpy(bytes + 4 * w, &word, 4);
      }
      char text[INET6_ADDRSTRLEN] = {};
      inet_ntop(s.v6 ? AF_INET6 : AF_INET, bytes, text, sizeof(text));
      s.host = text;
      out.push_back(std::move(s));
    }
  }
  return out;
}

}  // namespace weft::testing
