#include "core/file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace weft {
namespace {

const char* KindOf(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO (named pipe)";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

Status NotRegular(const std::string& path, std::string_view what, mode_t mode) {
  return errors::FailedPrecondition("{} '{}': is {}, not a regular file; weft reads only regular files from here",
                                    what, path, KindOf(mode));
}

Status OsError(int err, const std::string& path, std::string_view what, std::string_view doing) {
  if (err == ENOENT) return errors::NotFound("{} '{}': no such file", what, path);
  return errors::FailedPrecondition("{} '{}': cannot {}: {}", what, path, doing, std::strerror(err));
}

}  // namespace

Status CheckRegularFile(const std::string& path, std::string_view what) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) return OsError(errno, path, what, "stat it");
  if (!S_ISREG(st.st_mode)) return NotRegular(path, what, st.st_mode);
  return Status();
}

int OpenRegularFile(const std::string& path, std::string_view what) {
  ThrowIfError(CheckRegularFile(path, what));
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) throw Error(OsError(errno, path, what, "open it"));
  struct stat st;
  Status s;
  if (::fstat(fd, &st) != 0) {
    s = OsError(errno, path, what, "stat it");
  } else if (!S_ISREG(st.st_mode)) {
    s = NotRegular(path, what, st.st_mode);  // replaced between the stat and the open
  } else {
    const int flags = ::fcntl(fd, F_GETFL);
    if (flags < 0 || ::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) != 0) s = OsError(errno, path, what, "set it blocking");
  }
  if (!s.ok()) {
    ::close(fd);
    throw Error(s);
  }
  return fd;
}

std::string ReadRegularFile(const std::string& path, std::string_view what) {
  const int fd = OpenRegularFile(path, what);
  std::string out;
  struct stat st;
  if (::fstat(fd, &st) == 0 && st.st_size > 0) out.reserve(static_cast<size_t>(st.st_size));
  char buf[1 << 16];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n == 0) break;
    if (n < 0) {
      if (errno == EINTR) continue;
      const int err = errno;
      ::close(fd);
      throw Error(OsError(err, path, what, "read it"));
    }
    out.append(buf, static_cast<size_t>(n));
  }
  ::close(fd);
  return out;
}

}  // namespace weft
