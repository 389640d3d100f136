// Multi-process tests: the test binary runs itself as the peer (fork + exec of /proc/self/exe
// with `--test-case=NAME` and the scenario in the environment), talking over two pipes with
// line-based, deadline-bounded I/O. The child is killed (and reaped) when the test leaves,
// whatever happened, and never outlives the suite (alarm).
//
//   Child child("server child", {{"WEFT_SERVER_CHILD", "ps:0"}});   // parent
//   std::string port = ReadLine(child.from_child, std::chrono::seconds(20));
//
//   TEST_CASE("server child") { int in, out; ChildFds(&in, &out); ... }   // child
#pragma once

#include <arpa/inet.h>
#include <doctest/doctest.h>
#include <fmt/format.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <thread>
#include <vector>

namespace weft::test {

// `n` distinct free ports on 127.0.0.1 (bound, read, released: a process started next binds them).
inline std::vector<int> FreeLoopbackPorts(int n) {
  std::vector<int> fds, ports;
  for (int i = 0; i < n; ++i) {
    const int fd = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof(a);
    REQUIRE(bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)) == 0);
    REQUIRE(getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) == 0);
    fds.push_back(fd);
    ports.push_back(ntohs(a.sin_port));
  }
  for (int fd : fds) close(fd);
  return ports;
}

// Reads one line; "<timeout>" after `timeout`, "<eof>" when the other side closed.
inline std::string ReadLine(int fd, std::chrono::milliseconds timeout) {
  std::string line;
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now()).count();
    if (left <= 0) return "<timeout>";
    pollfd p{fd, POLLIN, 0};
    if (poll(&p, 1, static_cast<int>(left)) <= 0) continue;
    char c;
    const ssize_t n = read(fd, &c, 1);
    if (n <= 0) return "<eof>";
    if (c == '\n') return line;
    line += c;
  }
}

inline void WriteLine(int fd, const std::string& line) {
  const std::string s = line + "\n";
  CHECK(write(fd, s.data(), s.size()) == static_cast<ssize_t>(s.size()));
}

// In the child: the pipe ends the parent handed over.
inline void ChildFds(int* in_fd, int* out_fd) {
  const char* fds = std::getenv("WEFT_TEST_CHILD_FDS");
  REQUIRE(fds != nullptr);
  REQUIRE(std::sscanf(fds, "%d,%d", in_fd, out_fd) == 2);
}

struct Child {
  pid_t pid = -1;
  int to_child = -1, from_child = -1;

  // Runs `/proc/self/exe --test-case=<test_case>` with `env` added to the environment.
  Child(const std::string& test_case, const std::map<std::string, std::string>& env)
      : Child({"/proc/self/exe", "--test-case=" + test_case, "--no-intro"}, env, false) {}
  // Runs the program argv[0] with `env` added; with `stdout_to_pipe`, its standard output is
  // `from_child` (and `to_child` its standard input).
  Child(const std::vector<std::string>& argv, const std::map<std::string, std::string>& env, bool stdout_to_pipe) {
    int down[2], up[2];
    REQUIRE(pipe(down) == 0);
    REQUIRE(pipe(up) == 0);
    pid = fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
      close(down[1]);
      close(up[0]);
      for (const auto& [name, value] : env) setenv(name.c_str(), value.c_str(), 1);
      setenv("WEFT_TEST_CHILD_FDS", fmt::format("{},{}", down[0], up[1]).c_str(), 1);
      if (stdout_to_pipe) {
        dup2(down[0], 0);
        dup2(up[1], 1);
      }
      alarm(60);  // whatever happens, the child does not outlive the suite
      std::vector<char*> args;
      for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
      args.push_back(nullptr);
      execv(args[0], args.data());
      _exit(127);
    }
    close(down[0]);
    close(up[1]);
    to_child = down[1];
    from_child = up[0];
  }
  Child(const Child&) = delete;
  Child& operator=(const Child&) = delete;
  ~Child() {
    Kill();
    close(to_child);
    close(from_child);
  }
  void Kill() {
    if (pid > 0) {
      kill(pid, SIGKILL);
      waitpid(pid, nullptr, 0);
      pid = -1;
    }
  }
  // The exit status, or -1 after `timeout` (then the child is killed).
  int Wait(std::chrono::milliseconds timeout) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (std::chrono::steady_clock::now() < deadline) {
      int status = 0;
      if (waitpid(pid, &status, WNOHANG) == pid) {
        pid = -1;
        return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return -1;
  }
};

}  // namespace weft::test
