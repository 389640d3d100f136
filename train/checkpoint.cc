#include "train/checkpoint.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <bit>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <filesystem>
#include <random>
#include <set>

#include <fmt/ranges.h>

#include "core/byte_io.h"
#include "core/crc32c.h"
#include "core/file.h"
#include "ops/kernel.h"

namespace weft::train {

// Integers are written and tensor bytes copied in host order; the format is little-endian.
static_assert(std::endian::native == std::endian::little, "weft checkpoints assume a little-endian host");

namespace {

constexpr char kMagic[8] = {'W', 'E', 'F', 'T', 'C', 'K', 'P', 'T'};
constexpr size_t kHeaderBytes = 8 + 4 + 8 + 4;
constexpr uint32_t kMaxRank = 64;  // more than TensorShape ever sees; bounds a corrupted rank field

// The dtype codes of the format, fixed independently of the DType enum's values.
uint8_t DTypeCode(DType dt) {
  switch (dt) {
    case DType::kFloat32: return 1;
    case DType::kFloat64: return 2;
    case DType::kInt32: return 3;
    case DType::kInt64: return 4;
    case DType::kUInt8: return 5;
    case DType::kBool: return 6;
    case DType::kFloat16: return 7;
    case DType::kBFloat16: return 8;
    case DType::kInvalid: break;
  }
  return 0;
}

DType DTypeFromCode(uint8_t code) {
  static constexpr DType kByCode[] = {DType::kInvalid, DType::kFloat32, DType::kFloat64, DType::kInt32,
                                      DType::kInt64,   DType::kUInt8,   DType::kBool,    DType::kFloat16,
                                      DType::kBFloat16};
  return code < std::size(kByCode) ? kByCode[code] : DType::kInvalid;
}

// An errno from an operation on `path` as a weft error.
Error IoError(int err, const std::string& what, const std::string& path) {
  const std::string msg = fmt::format("{} '{}': {}", what, path, std::strerror(err));
  switch (err) {
    case ENOENT:
    case ENOTDIR: return Error(errors::NotFound("{}", msg));
    case ENOSPC:
    case EDQUOT:
    case EFBIG: return Error(errors::ResourceExhausted("{}", msg));
    case EACCES:
    case EPERM:
    case EROFS: return Error(errors::FailedPrecondition("{}", msg));
    default: return Error(errors::Unavailable("{}", msg));
  }
}

template <typename T> void Append(std::string* s, T v) { s->append(reinterpret_cast<const char*>(&v), sizeof(T)); }

// A checkpoint's temporary is "<file>.tmp-<pid>-<8 hex digits>"; this says whether `name` is one
// and, if so, the file it was for and the pid that wrote it.
bool ParseTemporaryName(std::string_view name, std::string_view* file, long* pid) {
  const size_t at = name.rfind(".tmp-");
  if (at == std::string_view::npos || at == 0) return false;
  const std::string_view tail = name.substr(at + 5);  // "<pid>-<hex>"
  const size_t dash = tail.find('-');
  if (dash == std::string_view::npos || dash == 0 || tail.size() - dash - 1 != 8) return false;
  const auto [end, ec] = std::from_chars(tail.data(), tail.data() + dash, *pid);
  if (ec != std::errc() || end != tail.data() + dash || *pid <= 0) return false;
  for (char c : tail.substr(dash + 1)) {
    if (!std::isxdigit(static_cast<unsigned char>(c)) || std::isupper(static_cast<unsigned char>(c))) return false;
  }
  *file = name.substr(0, at);
  return true;
}

// Writes a temporary file; unless Commit() succeeds, the destructor closes and removes it.
class AtomicFile {
 public:
  explicit AtomicFile(std::string path) : path_(std::move(path)) {
    std::random_device rd;
    tmp_ = fmt::format("{}.tmp-{}-{:08x}", path_, static_cast<long>(getpid()), rd());
    fd_ = ::open(tmp_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd_ < 0) throw IoError(errno, "SaveCheckpoint: cannot create temporary file for", path_);
  }
  ~AtomicFile() {
    if (fd_ >= 0) ::close(fd_);
    if (!committed_) ::unlink(tmp_.c_str());
  }

  void Write(const void* data, size_t n) {
    if (n >= kDirectWrite) {
      Flush();
      WriteAll(data, n);
    } else {
      buf_.append(static_cast<const char*>(data), n);
      if (buf_.size() >= kDirectWrite) Flush();
    }
  }

  void Commit() {
    Flush();
    if (::fsync(fd_) != 0) throw IoError(errno, "SaveCheckpoint: fsync failed for", path_);
    const int fd = std::exchange(fd_, -1);
    if (::close(fd) != 0) throw IoError(errno, "SaveCheckpoint: close failed for", path_);
    if (::rename(tmp_.c_str(), path_.c_str()) != 0) throw IoError(errno, "SaveCheckpoint: cannot rename into", path_);
    committed_ = true;
    // Make the rename itself durable.
    std::filesystem::path dir = std::filesystem::path(path_).parent_path();
    if (dir.empty()) dir = std::filesystem::path(".");
    const int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd < 0) throw IoError(errno, "SaveCheckpoint: cannot open the directory of", path_);
    const int rc = ::fsync(dfd);
    const int err = errno;
    ::close(dfd);
    if (rc != 0 && err != EINVAL) throw IoError(err, "SaveCheckpoint: directory fsync failed for", path_);
  }

 private:
  static constexpr size_t kDirectWrite = 1 << 16;

  void Flush() {
    WriteAll(buf_.data(), buf_.size());
    buf_.clear();
  }
  void WriteAll(const void* data, size_t n) {
    const char* p = static_cast<const char*>(data);
    while (n > 0) {
      const ssize_t w = ::write(fd_, p, std::min<size_t>(n, size_t{1} << 30));
      if (w < 0) {
        if (errno == EINTR) continue;
        throw IoError(errno, "SaveCheckpoint: write failed for", path_);
      }
      p += w;
      n -= static_cast<size_t>(w);
    }
  }

  std::string path_, tmp_, buf_;
  int fd_ = -1;
  bool committed_ = false;
};

// Sequential reads that never go past the size the file had when opened.
class Reader {
 public:
  explicit Reader(std::string path) : path_(std::move(path)) {
    fd_ = OpenRegularFile(path_, "LoadCheckpoint: checkpoint");  // a FIFO must not block the open
    struct stat st;
    if (::fstat(fd_, &st) != 0) {
      const int err = errno;
      ::close(fd_);
      throw IoError(err, "LoadCheckpoint: cannot stat", path_);
    }
    remaining_ = static_cast<uint64_t>(st.st_size);
    size_ = remaining_;
  }
  ~Reader() { ::close(fd_); }
  Reader(const Reader&) = delete;
  Reader& operator=(const Reader&) = delete;

  uint64_t remaining() const { return remaining_; }
  uint64_t offset() const { return size_ - remaining_; }

  // Reads n bytes for `what` (e.g. "tensor #2 ('w'): dims"); DataLoss if the file ends first.
  void Read(void* dst, uint64_t n, const std::string& what) {
    if (n > remaining_) {
      throw Error(errors::DataLoss("checkpoint '{}' is truncated: {} needs {} bytes at offset {} but the {}-byte file "
                                   "has {} left", path_, what, n, offset(), size_, remaining_));
    }
    char* p = static_cast<char*>(dst);
    uint64_t left = n;
    while (left > 0) {
      const ssize_t r = ::read(fd_, p, std::min<uint64_t>(left, uint64_t{1} << 30));
      if (r < 0 && errno == EINTR) continue;
      if (r < 0) throw IoError(errno, fmt::format("LoadCheckpoint: read error in {} of", what), path_);
      if (r == 0) throw Error(errors::DataLoss("checkpoint '{}' shrank while being read ({})", path_, what));
      p += r;
      left -= static_cast<uint64_t>(r);
    }
    remaining_ -= n;
  }
  template <typename T> T Get(const std::string& what, std::string* record = nullptr) {
    T v;
    Read(&v, sizeof(T), what);
    if (record) Append(record, v);
    return v;
  }

 private:
  std::string path_;
  int fd_ = -1;
  uint64_t size_ = 0, remaining_ = 0;
};

Error Corrupt(const std::string& path, const std::string& where, const std::string& what) {
  return Error(errors::DataLoss("checkpoint '{}': {}: {}", path, where, what));
}

}  // namespace

void SaveCheckpoint(const std::string& path, const std::vector<std::pair<std::string, Tensor>>& tensors) {
  {
    const std::filesystem::path p(path);
    RemoveStaleTemporaries(p.parent_path().string(), p.filename().string());
  }
  std::set<std::string_view> names;
  for (size_t i = 0; i < tensors.size(); ++i) {
    const auto& [name, t] = tensors[i];
    WEFT_REQUIRE(!name.empty(), "SaveCheckpoint '{}': tensor #{} has an empty name", path, i);
    WEFT_REQUIRE(names.insert(name).second, "SaveCheckpoint '{}': duplicate tensor name '{}'", path, name);
    WEFT_REQUIRE(t.IsInitialized(), "SaveCheckpoint '{}': tensor '{}' is uninitialized", path, name);
    WEFT_REQUIRE(DTypeCode(t.dtype()) != 0, "SaveCheckpoint '{}': tensor '{}' has unsupported dtype {}", path, name,
                 DTypeName(t.dtype()));
    WEFT_REQUIRE(t.memory_kind() != MemoryKind::kDevice,
                 "SaveCheckpoint '{}': tensor '{}' is in device memory; copy it to the host first", path, name);
    WEFT_REQUIRE(t.rank() <= static_cast<int>(kMaxRank), "SaveCheckpoint '{}': tensor '{}' has rank {} > {}", path,
                 name, t.rank(), kMaxRank);
  }

  AtomicFile file(path);
  std::string header(kMagic, sizeof(kMagic));
  Append<uint32_t>(&header, kCheckpointVersion);
  Append<uint64_t>(&header, tensors.size());
  Append<uint32_t>(&header, Crc32c(header.data(), header.size()));
  file.Write(header.data(), header.size());

  for (const auto& [name, t] : tensors) {
    std::string meta;
    Append<uint32_t>(&meta, static_cast<uint32_t>(name.size()));
    meta += name;
    Append<uint8_t>(&meta, DTypeCode(t.dtype()));
    Append<uint32_t>(&meta, static_cast<uint32_t>(t.rank()));
    for (int64_t d : t.shape().dims()) Append<int64_t>(&meta, d);
    Append<uint64_t>(&meta, t.bytes());
    const uint32_t meta_crc = Crc32c(meta.data(), meta.size());
    Append<uint32_t>(&meta, meta_crc);
    file.Write(meta.data(), meta.size());
    if (t.bytes()) file.Write(t.raw_data(), t.bytes());
    const uint32_t crc = Crc32c(t.raw_data(), t.bytes(), meta_crc);
    file.Write(&crc, sizeof(crc));
  }
  file.Commit();
}

std::map<std::string, Tensor> LoadCheckpoint(const std::string& path) {
  Reader in(path);
  char header[kHeaderBytes];
  in.Read(header, kHeaderBytes, "the header");
  if (std::memcmp(header, kMagic, sizeof(kMagic)) != 0) {
    throw Corrupt(path, "header", "bad magic (not a weft checkpoint or a corrupted one)");
  }
  uint32_t version, header_crc;
  uint64_t count;
  std::memcpy(&version, header + 8, 4);
  std::memcpy(&count, header + 12, 8);
  std::memcpy(&header_crc, header + 20, 4);
  const uint32_t want_crc = Crc32c(header, kHeaderBytes - 4);
  if (header_crc != want_crc) {
    throw Corrupt(path, "header", fmt::format("CRC mismatch (stored {:08x}, computed {:08x})", header_crc, want_crc));
  }
  if (version == 0) throw Corrupt(path, "header", "format version 0 does not exist");
  if (version > kCheckpointVersion) {
    throw Error(errors::FailedPrecondition("checkpoint '{}' has format version {}, but this build reads version {} "
                                           "and older", path, version, kCheckpointVersion));
  }
  // Each record takes at least 25 bytes: a count beyond that is corruption, not a reason to reserve.
  if (count > in.remaining() / 25) {
    throw Corrupt(path, "header", fmt::format("{} tensors cannot fit in the {} bytes that follow", count,
                                              in.remaining()));
  }

  std::map<std::string, Tensor> out;
  for (uint64_t i = 0; i < count; ++i) {
    std::string where = fmt::format("tensor #{}", i);
    std::string meta;
    const uint32_t name_len = in.Get<uint32_t>(where + " name length", &meta);
    if (name_len > in.remaining()) {
      throw Corrupt(path, where, fmt::format("name length {} exceeds the {} bytes left (truncated or corrupted)",
                                             name_len, in.remaining()));
    }
    std::string name(name_len, '\0');
    in.Read(name.data(), name_len, where + " name");
    if (!IsValidUtf8(name)) throw Corrupt(path, where, "the name is not valid UTF-8 (corrupted or not written by weft)");
    meta += name;
    where = fmt::format("tensor #{} ('{}')", i, name);
    const uint8_t code = in.Get<uint8_t>(where + " dtype", &meta);
    const uint32_t rank = in.Get<uint32_t>(where + " rank", &meta);
    if (rank > kMaxRank) throw Corrupt(path, where, fmt::format("rank {} is impossible (corrupted metadata)", rank));
    std::vector<int64_t> dims(rank);
    for (uint32_t k = 0; k < rank; ++k) dims[k] = in.Get<int64_t>(where + " dims", &meta);
    const uint64_t byte_len = in.Get<uint64_t>(where + " byte length", &meta);
    const uint32_t meta_crc = in.Get<uint32_t>(where + " metadata CRC");
    const uint32_t want_meta = Crc32c(meta.data(), meta.size());
    if (meta_crc != want_meta) {
      throw Corrupt(path, where, fmt::format("metadata CRC mismatch (stored {:08x}, computed {:08x})", meta_crc,
                                             want_meta));
    }
    // The metadata is what was written; still check it, since a writer could have been buggy.
    const DType dtype = DTypeFromCode(code);
    if (dtype == DType::kInvalid) throw Corrupt(path, where, fmt::format("unknown dtype code {}", code));
    uint64_t elements = 1;
    for (int64_t d : dims) {
      if (d < 0 || __builtin_mul_overflow(elements, static_cast<uint64_t>(d), &elements) ||
          elements > static_cast<uint64_t>(TensorShape::kMaxElements)) {
        throw Corrupt(path, where, fmt::format("impossible dims [{}]", fmt::join(dims, ",")));
      }
    }
    TensorShape shape(dims);
    if (elements * DTypeSize(dtype) != byte_len) {
      throw Corrupt(path, where, fmt::format("byte length {} does not match {}{} ({} bytes)", byte_len,
                                             DTypeName(dtype), shape.ToString(), elements * DTypeSize(dtype)));
    }
    if (byte_len + 4 > in.remaining()) {  // byte_len <= kMaxElements * 8, so no overflow
      throw Error(errors::DataLoss("checkpoint '{}' is truncated: {}: data of {} bytes at offset {} but only {} "
                                   "bytes are left", path, where, byte_len, in.offset(), in.remaining()));
    }
    Tensor t(dtype, shape);
    if (byte_len) in.Read(t.raw_data(), byte_len, where + " data");
    const uint32_t crc = in.Get<uint32_t>(where + " CRC");
    const uint32_t want = Crc32c(t.raw_data(), byte_len, meta_crc);
    if (crc != want) {
      throw Corrupt(path, where, fmt::format("data CRC mismatch (stored {:08x}, computed {:08x})", crc, want));
    }
    if (!out.emplace(name, std::move(t)).second) throw Corrupt(path, where, "the name occurs twice");
  }
  if (in.remaining() != 0) {
    throw Corrupt(path, "end of file", fmt::format("{} unexpected bytes after the last of {} tensors",
                                                   in.remaining(), count));
  }
  return out;
}

namespace {

// Throws unless `value` may be restored into a target currently holding `current`.
void CheckRestorable(const Tensor& value, const Tensor& current, const std::string& what, const std::string& name,
                     const std::string& source) {
  if (!current.IsInitialized()) return;
  WEFT_REQUIRE(current.dtype() == value.dtype() && current.shape() == value.shape(),
               "restoring {} '{}' from {}: the checkpoint holds {} but the {} is {}", what, name, source,
               value.DebugString(), what, current.DebugString());
}

const Tensor& Lookup(const std::map<std::string, Tensor>& loaded, const std::string& what, const std::string& name,
                     const std::string& source) {
  auto it = loaded.find(name);
  if (it == loaded.end()) {
    std::string have;
    int shown = 0;
    for (const auto& [n, t] : loaded) {
      if (shown++ == 8) {
        have += ", ...";
        break;
      }
      have += (have.empty() ? "" : ", ") + n;
    }
    throw Error(errors::NotFound("{} '{}' is not in {} (it holds {} tensors: {})", what, name, source, loaded.size(),
                                 have));
  }
  return it->second;
}

}  // namespace

void RestoreInto(const std::map<std::string, Tensor>& loaded,
                 const std::vector<std::pair<std::string, Tensor*>>& expected, const std::string& source) {
  for (const auto& [name, target] : expected) {
    WEFT_REQUIRE(target != nullptr, "RestoreInto: null target for tensor '{}'", name);
    CheckRestorable(Lookup(loaded, "tensor", name, source), *target, "tensor", name, source);
  }
  for (const auto& [name, target] : expected) *target = loaded.at(name).Clone();
}

void SaveVariables(const std::string& path, VarStore& vars, const std::vector<std::string>& names) {
  const std::vector<std::string> all = names.empty() ? vars.Names() : names;
  std::vector<std::pair<std::string, Tensor>> tensors;
  tensors.reserve(all.size());
  for (const std::string& name : all) {
    Var* v = vars.Find(name);
    if (!v) throw Error(errors::NotFound("SaveVariables '{}': no variable '{}'", path, name));
    Tensor value;
    {
      // Sharing the buffer is safe: variable updates copy a buffer that has other holders.
      std::lock_guard<std::mutex> l(v->mu);
      value = v->value;
    }
    if (!value.IsInitialized()) {
      throw Error(errors::FailedPrecondition("SaveVariables '{}': variable '{}' was never initialized", path, name));
    }
    // A GPU variable's buffer is device memory: the checkpoint holds its bytes copied to the host
    // (after the updates queued on the device so far).
    tensors.emplace_back(name, value.ToHost());
  }
  SaveCheckpoint(path, tensors);
}

void RestoreVariables(const std::string& path, VarStore& vars, const std::vector<std::string>& names) {
  const std::map<std::string, Tensor> loaded = LoadCheckpoint(path);
  std::vector<std::string> all = names;
  if (all.empty()) {
    for (const auto& [name, t] : loaded) all.push_back(name);
  }
  const std::string source = fmt::format("checkpoint '{}'", path);
  for (const std::string& name : all) {
    const Tensor& value = Lookup(loaded, "variable", name, source);
    if (Var* v = vars.Find(name)) {
      std::lock_guard<std::mutex> l(v->mu);
      CheckRestorable(value, v->value, "variable", name, source);
    }
  }
  for (const std::string& name : all) {
    Tensor fresh = loaded.at(name).Clone();
    Var* v = vars.LookupOrCreate(name);
    std::lock_guard<std::mutex> l(v->mu);
    v->value = std::move(fresh);
  }
}

namespace {

// "ckpt-<step>.weft" (CheckpointPath's names): true and *step set.
bool CheckpointStepOf(std::string_view name, int64_t* step) {
  constexpr std::string_view kPrefix = "ckpt-", kSuffix = ".weft";
  if (name.size() <= kPrefix.size() + kSuffix.size() || !name.starts_with(kPrefix) || !name.ends_with(kSuffix)) {
    return false;
  }
  const char* begin = name.data() + kPrefix.size();
  const char* end = name.data() + name.size() - kSuffix.size();
  auto [p, err] = std::from_chars(begin, end, *step);
  return err == std::errc() && p == end && *begin != '-' && *begin != '+';
}

bool IsCheckpointName(std::string_view name) {
  int64_t step;
  return CheckpointStepOf(name, &step);
}

}  // namespace

int RemoveStaleTemporaries(const std::string& dir, const std::string& file) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::directory_iterator it(dir.empty() ? "." : dir, ec);
  if (ec) return 0;  // nothing to clean (a missing directory is the caller's concern)
  const auto now = fs::file_time_type::clock::now();
  int removed = 0;
  for (; !ec && it != fs::directory_iterator(); it.increment(ec)) {
    const std::string name = it->path().filename().string();
    std::string_view of;
    long pid = 0;
    if (!ParseTemporaryName(name, &of, &pid)) continue;
    const bool ours = file.empty() ? IsCheckpointName(of) : of == file;
    if (!ours) continue;
    std::error_code fec;
    if (!it->is_regular_file(fec) || fec) continue;
    const auto mtime = fs::last_write_time(it->path(), fec);
    if (fec || now - mtime < kStaleTemporaryAge) continue;  // a save may still be writing it
    if (::kill(static_cast<pid_t>(pid), 0) == 0 || errno != ESRCH) continue;  // its writer may be alive
    if (::unlink(it->path().c_str()) == 0) ++removed;
  }
  return removed;
}

std::string CheckpointPath(const std::string& dir, int64_t step) {
  WEFT_REQUIRE(step >= 0, "CheckpointPath: step must be >= 0, got {}", step);
  return fmt::format("{}/ckpt-{}.weft", dir, step);
}

std::vector<std::pair<int64_t, std::string>> ListCheckpoints(const std::string& dir) {
  namespace fs = std::filesystem;
  std::vector<std::pair<int64_t, std::string>> found;
  std::error_code ec;
  fs::directory_iterator it(dir, ec);
  if (ec) {
    if (ec == std::errc::no_such_file_or_directory) return found;
    throw IoError(ec.value(), "ListCheckpoints: cannot list", dir);
  }
  for (; it != fs::directory_iterator(); it.increment(ec)) {
    int64_t step = -1;
    // Also skips "ckpt-5.weft.tmp-..." files of saves in progress.
    if (CheckpointStepOf(it->path().filename().string(), &step)) found.emplace_back(step, CheckpointPath(dir, step));
  }
  if (ec) throw IoError(ec.value(), "ListCheckpoints: error while listing", dir);
  std::sort(found.begin(), found.end());
  return found;
}

std::string LatestCheckpoint(const std::string& dir) {
  RemoveStaleTemporaries(dir);
  auto all = ListCheckpoints(dir);
  return all.empty() ? "" : all.back().second;
}

void PruneCheckpoints(const std::string& dir, int keep) {
  WEFT_REQUIRE(keep >= 0, "PruneCheckpoints: keep must be >= 0, got {}", keep);
  RemoveStaleTemporaries(dir);
  auto all = ListCheckpoints(dir);
  for (size_t i = 0; i + static_cast<size_t>(keep) < all.size(); ++i) {
    if (::unlink(all[i].second.c_str()) != 0 && errno != ENOENT) {
      throw IoError(errno, "PruneCheckpoints: cannot delete", all[i].second);
    }
  }
}

}  // namespace weft::train
