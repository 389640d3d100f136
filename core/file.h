// Opening files that weft reads (checkpoints, graph files, whole-model files, IDX and text data):
// the one place that refuses what is not a regular file, before anything could block on it.
//
//   int fd = OpenRegularFile(path, "checkpoint");        // throws; O_RDONLY | O_CLOEXEC, blocking
//   std::string bytes = ReadRegularFile(path, "graph file");
//   ThrowIfError(CheckRegularFile(path, "IDX file"));   // for readers that open by name (zlib, Python)
//
// Why: open() of a FIFO blocks until a writer comes (forever, and Ctrl-C cannot end it inside a
// C++ call), a character device can stream without end, a directory reads as an error deep in a
// parser. The rule: the path is stat()ed and anything but a regular file (after symlinks are
// followed: a link to a checkpoint is fine) is refused with FailedPrecondition naming the path and
// what it is; then the file is opened with O_NONBLOCK (so a FIFO swapped in after the stat cannot
// block the open either) and fstat()ed again on the descriptor (what is read is what was checked),
// and only then put back in blocking mode. A missing file is NotFound, other failures carry
// strerror. `what` starts every message ("checkpoint '/x/ckpt-10.weft': is a FIFO ...").
#pragma once

#include <string>
#include <string_view>

#include "core/status.h"

namespace weft {

// OK when `path` is a regular file (symlinks followed); else the error described above.
Status CheckRegularFile(const std::string& path, std::string_view what);
// A read-only descriptor of the regular file `path` (the caller closes it); throws Error.
int OpenRegularFile(const std::string& path, std::string_view what);
// The whole content of the regular file `path`; throws Error.
std::string ReadRegularFile(const std::string& path, std::string_view what);

}  // namespace weft
