// core/file.h: readers refuse what is not a regular file before opening it (issue 17, finding 7);
// core/byte_io.h's IsValidUtf8 against RFC 3629's rules (finding 8).
#include <doctest/doctest.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "core/byte_io.h"
#include "core/file.h"

using namespace weft;

namespace {

struct TempDir {
  std::string path;
  TempDir() {
    char tmpl[] = "/tmp/weft_file_test_XXXXXX";
    path = mkdtemp(tmpl);
  }
  ~TempDir() { std::filesystem::remove_all(path); }
};

Status CodeOfOpen(const std::string& path) {
  try {
    ::close(OpenRegularFile(path, "checkpoint"));
    return Status();
  } catch (const Error& e) {
    return e.status();
  }
}

}  // namespace

TEST_CASE("OpenRegularFile refuses FIFOs, devices and directories, naming the path") {
  TempDir d;
  const std::string fifo = d.path + "/ckpt-10.weft";
  REQUIRE(mkfifo(fifo.c_str(), 0600) == 0);
  // On main a reader's open() of this FIFO blocks until a writer comes: here it returns at once.
  Status s = CodeOfOpen(fifo);
  CHECK(s.code() == Code::kFailedPrecondition);
  CHECK(s.message() == "checkpoint '" + fifo + "': is a FIFO (named pipe), not a regular file; weft reads only "
                                               "regular files from here");
  s = CodeOfOpen(d.path);
  CHECK(s.code() == Code::kFailedPrecondition);
  CHECK(s.message().find("is a directory") != std::string::npos);
  s = CodeOfOpen("/dev/zero");
  CHECK(s.code() == Code::kFailedPrecondition);
  CHECK(s.message().find("'/dev/zero': is a character device") != std::string::npos);
  s = CodeOfOpen(d.path + "/missing.weft");
  CHECK(s.code() == Code::kNotFound);
  CHECK(s.message().find("missing.weft': no such file") != std::string::npos);
  CHECK(CheckRegularFile(fifo, "graph file").code() == Code::kFailedPrecondition);
  CHECK_THROWS_AS(ReadRegularFile(fifo, "graph file"), Error);
}

TEST_CASE("OpenRegularFile reads regular files and links to them, in blocking mode") {
  TempDir d;
  const std::string file = d.path + "/a.bin", link = d.path + "/link.bin";
  std::ofstream(file) << "hello";
  REQUIRE(symlink(file.c_str(), link.c_str()) == 0);
  CHECK(ReadRegularFile(file, "x") == "hello");
  CHECK(ReadRegularFile(link, "x") == "hello");
  const int fd = OpenRegularFile(file, "x");
  CHECK((fcntl(fd, F_GETFL) & O_NONBLOCK) == 0);
  ::close(fd);
  const std::string fifo = d.path + "/p";
  REQUIRE(mkfifo(fifo.c_str(), 0600) == 0);
  const std::string to_fifo = d.path + "/to_fifo";
  REQUIRE(symlink(fifo.c_str(), to_fifo.c_str()) == 0);
  CHECK(CheckRegularFile(to_fifo, "x").code() == Code::kFailedPrecondition);  // what the link points to counts
}

TEST_CASE("IsValidUtf8 follows RFC 3629") {
  CHECK(IsValidUtf8(""));
  CHECK(IsValidUtf8("plain ascii"));
  CHECK(IsValidUtf8("\xC3\xA9"));              // U+00E9
  CHECK(IsValidUtf8("\xE2\x82\xAC"));          // U+20AC (RFC 3629's example: the euro sign)
  CHECK(IsValidUtf8("\xED\x95\x9C\xEA\xB5\xAD\xEC\x96\xB4"));  // RFC 3629's Korean example
  CHECK(IsValidUtf8("\xF0\x9F\x98\x80"));      // U+1F600
  CHECK(IsValidUtf8("\xF4\x8F\xBF\xBF"));      // U+10FFFF, the last code point
  CHECK_FALSE(IsValidUtf8("\xFF"));
  CHECK_FALSE(IsValidUtf8("\x80"));            // a lone continuation byte
  CHECK_FALSE(IsValidUtf8("\xC3"));            // truncated
  CHECK_FALSE(IsValidUtf8("\xC3\x28"));        // no continuation byte
  CHECK_FALSE(IsValidUtf8("\xC0\xAF"));        // overlong '/'
  CHECK_FALSE(IsValidUtf8("\xE0\x80\xAF"));    // overlong '/'
  CHECK_FALSE(IsValidUtf8("\xED\xA0\x80"));    // U+D800, a surrogate
  CHECK_FALSE(IsValidUtf8("\xF4\x90\x80\x80"));  // U+110000, past the last code point
  CHECK_FALSE(IsValidUtf8("\xF8\x88\x80\x80\x80"));  // 5-byte forms are gone
  CHECK_FALSE(IsValidUtf8(std::string_view("a\xE2\x82", 3)));
}
