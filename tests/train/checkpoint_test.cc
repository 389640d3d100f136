#include <doctest/doctest.h>

#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>

#include "core/caching_allocator.h"
#include "core/crc32c.h"
#include "ops/kernel.h"
#include "train/checkpoint.h"

using namespace weft;
using namespace weft::train;
namespace fs = std::filesystem;

namespace {

// A fresh, empty directory under the temp dir, removed at scope exit.
struct TempDir {
  explicit TempDir(const std::string& name)
      : path((fs::temp_directory_path() / fmt::format("weft_ckpt_{}_{}", name, getpid())).string()) {
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~TempDir() { fs::remove_all(path); }
  std::string File(const std::string& name) const { return path + "/" + name; }
  std::vector<std::string> Entries() const {
    std::vector<std::string> out;
    for (const auto& e : fs::directory_iterator(path)) out.push_back(e.path().filename().string());
    std::sort(out.begin(), out.end());
    return out;
  }
  std::string path;
};

std::string ReadBytes(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(f), {});
}
void WriteBytes(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
}

Tensor Filled(DType dt, TensorShape shape, int seed) {
  Tensor t(dt, std::move(shape));
  auto* p = static_cast<unsigned char*>(t.raw_data());
  for (size_t i = 0; i < t.bytes(); ++i) p[i] = static_cast<unsigned char>((i * 37 + seed * 11) & 0xff);
  if (dt == DType::kBool) {
    for (size_t i = 0; i < t.bytes(); ++i) p[i] &= 1;
  }
  return t;
}

bool SameTensor(const Tensor& a, const Tensor& b) {
  return a.dtype() == b.dtype() && a.shape() == b.shape() &&
         (a.bytes() == 0 || std::memcmp(a.raw_data(), b.raw_data(), a.bytes()) == 0);
}

// The error a call throws (code and message); kOk if none.
std::pair<Code, std::string> ErrorOf(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return {e.code(), e.what()};
  }
  return {Code::kOk, ""};
}

bool Contains(const std::string& s, const std::string& needle) { return s.find(needle) != std::string::npos; }

std::vector<std::pair<std::string, Tensor>> Sample() {
  return {{"w", Filled(DType::kFloat32, {3, 4}, 1)},
          {"b", Filled(DType::kFloat64, {4}, 2)},
          {"step", Tensor::Scalar<int64_t>(1234)}};
}

}  // namespace

TEST_CASE("checkpoints round-trip every dtype, empty and scalar tensors") {
  TempDir dir("roundtrip");
  std::vector<std::pair<std::string, Tensor>> tensors = {
      {"f32", Filled(DType::kFloat32, {2, 3}, 1)},      {"f64", Filled(DType::kFloat64, {5}, 2)},
      {"i32", Filled(DType::kInt32, {1, 1, 4}, 3)},     {"i64", Filled(DType::kInt64, {3, 2}, 4)},
      {"u8", Filled(DType::kUInt8, {7}, 5)},            {"bool", Filled(DType::kBool, {2, 2}, 6)},
      {"f16", Filled(DType::kFloat16, {3}, 7)},         {"bf16", Filled(DType::kBFloat16, {2}, 8)},
      {"scalar", Tensor::Scalar(2.5f)},                 {"empty", Tensor(DType::kFloat32, {0, 3})},
      {"layer/with spaces/üñí", Filled(DType::kUInt8, {1}, 9)},
  };
  const std::string path = dir.File("all.weft");
  SaveCheckpoint(path, tensors);
  auto loaded = LoadCheckpoint(path);
  REQUIRE(loaded.size() == tensors.size());
  for (const auto& [name, t] : tensors) {
    CAPTURE(name);
    REQUIRE(loaded.count(name));
    CHECK(SameTensor(loaded[name], t));
  }
  CHECK(loaded["empty"].shape() == TensorShape({0, 3}));
  CHECK(loaded["scalar"].rank() == 0);
  CHECK(dir.Entries() == std::vector<std::string>{"all.weft"});  // no temp file left

  SaveCheckpoint(dir.File("none.weft"), {});
  CHECK(LoadCheckpoint(dir.File("none.weft")).empty());
}

TEST_CASE("bad saves: duplicate names, uninitialized tensors, missing directory") {
  TempDir dir("badsave");
  auto [code, msg] = ErrorOf([&] { SaveCheckpoint(dir.File("a"), {{"x", Tensor::Scalar(1)}, {"x", Tensor::Scalar(2)}}); });
  CHECK(code == Code::kInvalidArgument);
  CHECK(Contains(msg, "duplicate tensor name 'x'"));
  std::tie(code, msg) = ErrorOf([&] { SaveCheckpoint(dir.File("a"), {{"u", Tensor()}}); });
  CHECK(code == Code::kInvalidArgument);
  CHECK(Contains(msg, "'u'"));
  const std::string missing = dir.File("no/such/dir/ckpt.weft");
  std::tie(code, msg) = ErrorOf([&] { SaveCheckpoint(missing, Sample()); });
  CHECK(code == Code::kNotFound);
  CHECK(Contains(msg, missing));
  CHECK(dir.Entries().empty());
}

TEST_CASE("a flipped byte anywhere is DataLoss naming the header or the tensor") {
  TempDir dir("flip");
  const std::string path = dir.File("c.weft");
  SaveCheckpoint(path, Sample());
  const std::string good = ReadBytes(path);
  // Record boundaries, to know which tensor a byte belongs to: header 24 bytes, then per record
  // 4 + name + 1 + 4 + 8*rank + 8 + 4 + data + 4.
  std::vector<std::pair<size_t, std::string>> starts;  // (first byte, name)
  size_t off = 24;
  for (const auto& [name, t] : Sample()) {
    starts.emplace_back(off, name);
    off += 4 + name.size() + 1 + 4 + 8 * t.rank() + 8 + 4 + t.bytes() + 4;
  }
  REQUIRE(off == good.size());
  for (size_t i = 0; i < good.size(); ++i) {
    CAPTURE(i);
    std::string bad = good;
    bad[i] ^= 0x20;
    WriteBytes(path, bad);
    auto [code, msg] = ErrorOf([&] { LoadCheckpoint(path); });
    CHECK(code == Code::kDataLoss);
    CHECK(Contains(msg, path));
    if (i < 24) {
      CHECK_MESSAGE(Contains(msg, "header"), msg);
    } else {
      size_t k = starts.size() - 1;
      while (starts[k].first > i) --k;
      CHECK_MESSAGE(Contains(msg, fmt::format("tensor #{}", k)), msg);
      // Once the name has been read intact, it is named too.
      const size_t name_end = starts[k].first + 4 + starts[k].second.size();
      if (i >= name_end) CHECK_MESSAGE(Contains(msg, "'" + starts[k].second + "'"), msg);
    }
  }
}

TEST_CASE("truncation at every offset is DataLoss, never a crash; trailing bytes too") {
  TempDir dir("trunc");
  const std::string path = dir.File("c.weft");
  SaveCheckpoint(path, Sample());
  const std::string good = ReadBytes(path);
  for (size_t n = 0; n < good.size(); ++n) {
    CAPTURE(n);
    WriteBytes(path, good.substr(0, n));
    auto [code, msg] = ErrorOf([&] { LoadCheckpoint(path); });
    CHECK(code == Code::kDataLoss);
    CHECK(Contains(msg, path));
    if (n >= 24) CHECK_MESSAGE((Contains(msg, "tensor #") || Contains(msg, "tensors cannot fit")), msg);
  }
  WriteBytes(path, good + "x");
  auto [code, msg] = ErrorOf([&] { LoadCheckpoint(path); });
  CHECK(code == Code::kDataLoss);
  CHECK(Contains(msg, "1 unexpected bytes"));
}

TEST_CASE("random corruption (several bytes, cut and extended files) is always DataLoss") {
  TempDir dir("fuzz");
  const std::string path = dir.File("c.weft");
  SaveCheckpoint(path, Sample());
  const std::string good = ReadBytes(path);
  std::mt19937 rng(1);
  for (int round = 0; round < 300; ++round) {
    CAPTURE(round);
    std::string bad = good;
    for (int k = 0, flips = 1 + static_cast<int>(rng() % 4); k < flips; ++k) {
      bad[rng() % bad.size()] = static_cast<char>(rng());
    }
    if (rng() % 3 == 0) bad.resize(rng() % bad.size());
    if (rng() % 5 == 0) bad += std::string(rng() % 64, static_cast<char>(rng()));
    if (bad == good) continue;
    WriteBytes(path, bad);
    auto [code, msg] = ErrorOf([&] { LoadCheckpoint(path); });
    CHECK_MESSAGE(code == Code::kDataLoss, msg);
  }
}

TEST_CASE("garbage with valid CRCs: absurd lengths are refused before allocating") {
  TempDir dir("garbage");
  const std::string path = dir.File("g.weft");
  // A header claiming one tensor, then a record whose (correctly checksummed) metadata claims
  // float32 [2^40, 2^10]: the data cannot be in the file, so nothing may be allocated.
  std::string f = "WEFTCKPT";
  auto put = [](std::string* s, auto v) { s->append(reinterpret_cast<const char*>(&v), sizeof(v)); };
  put(&f, uint32_t{1});
  put(&f, uint64_t{1});
  put(&f, Crc32c(f.data(), f.size()));
  std::string meta;
  put(&meta, uint32_t{1});
  meta += "x";
  put(&meta, uint8_t{1});
  put(&meta, uint32_t{2});
  put(&meta, int64_t{1} << 40);
  put(&meta, int64_t{1} << 10);
  put(&meta, uint64_t{4} << 50);
  put(&meta, Crc32c(meta.data(), meta.size()));
  WriteBytes(path, f + meta + "abcd");
  auto [code, msg] = ErrorOf([&] { LoadCheckpoint(path); });
  CHECK(code == Code::kDataLoss);
  CHECK_MESSAGE(Contains(msg, "tensor #0 ('x')"), msg);

  // A newer format version is a clear error giving both versions.
  std::string v2 = "WEFTCKPT";
  put(&v2, uint32_t{7});
  put(&v2, uint64_t{0});
  put(&v2, Crc32c(v2.data(), v2.size()));
  WriteBytes(path, v2);
  std::tie(code, msg) = ErrorOf([&] { LoadCheckpoint(path); });
  CHECK(code == Code::kFailedPrecondition);
  CHECK_MESSAGE((Contains(msg, "version 7") && Contains(msg, "version 1")), msg);

  WriteBytes(path, "not a checkpoint at all, just text");
  std::tie(code, msg) = ErrorOf([&] { LoadCheckpoint(path); });
  CHECK(code == Code::kDataLoss);
  CHECK(Contains(msg, "magic"));
  std::tie(code, msg) = ErrorOf([&] { LoadCheckpoint(dir.File("absent.weft")); });
  CHECK(code == Code::kNotFound);
  CHECK(Contains(msg, "absent.weft"));
}

TEST_CASE("RestoreInto checks names, dtypes and shapes, naming the tensor") {
  TempDir dir("restore");
  const std::string path = dir.File("c.weft");
  SaveCheckpoint(path, Sample());
  auto loaded = LoadCheckpoint(path);

  Tensor w = Tensor::Zeros(DType::kFloat32, {3, 4}), b, step = Tensor::Scalar<int64_t>(0);
  RestoreInto(loaded, {{"w", &w}, {"b", &b}, {"step", &step}}, path);
  CHECK(SameTensor(w, Sample()[0].second));
  CHECK(SameTensor(b, Sample()[1].second));  // an uninitialized target takes the checkpoint's value
  CHECK(step.data<int64_t>()[0] == 1234);
  CHECK_FALSE(w.SharesBufferWith(loaded["w"]));

  Tensor wrong_shape = Tensor::Zeros(DType::kFloat32, {4, 3});
  auto [code, msg] = ErrorOf([&] { RestoreInto(loaded, {{"w", &wrong_shape}}, path); });
  CHECK(code == Code::kInvalidArgument);
  CHECK_MESSAGE((Contains(msg, "'w'") && Contains(msg, "float32[3,4]") && Contains(msg, "float32[4,3]")), msg);
  CHECK(wrong_shape.ToVector<float>() == std::vector<float>(12, 0.0f));

  Tensor wrong_type = Tensor::Zeros(DType::kFloat64, {3, 4});
  std::tie(code, msg) = ErrorOf([&] { RestoreInto(loaded, {{"w", &wrong_type}}, path); });
  CHECK(code == Code::kInvalidArgument);
  CHECK_MESSAGE((Contains(msg, "float64[3,4]") && Contains(msg, "float32[3,4]")), msg);

  Tensor other = Tensor::Zeros(DType::kFloat32, {3, 4});
  std::tie(code, msg) = ErrorOf([&] { RestoreInto(loaded, {{"w", &other}, {"missing", &other}}, path); });
  CHECK(code == Code::kNotFound);
  CHECK_MESSAGE((Contains(msg, "'missing'") && Contains(msg, path)), msg);
  CHECK(other.ToVector<float>() == std::vector<float>(12, 0.0f));  // nothing restored on error
}

// A test double of the device-memory interface (core/caching_allocator.h's BackingStore): memory
// the allocator reports as device memory, whose reads to the host go through CopyToHost, counted.
// A GPU variable's tensor reaches SaveVariables this way (its buffer is a GPU's caching allocator's).
class FakeDeviceStore final : public BackingStore {
 public:
  std::string Name() const override { return "fake-device"; }
  MemoryKind kind() const override { return MemoryKind::kDevice; }
  void* Reserve(size_t bytes) override { return std::aligned_alloc(256, (bytes + 255) / 256 * 256); }
  void Release(void* ptr, size_t) override { std::free(ptr); }
  void CopyToHost(void* dst, const void* src, size_t bytes) const override {
    ++copies;
    std::memcpy(dst, src, bytes);
  }
  mutable int copies = 0;
};

TEST_CASE("SaveVariables saves a device-resident variable through its allocator's copy to the host") {
  TempDir dir("device_vars");
  const std::string path = dir.File("v.weft");
  FakeDeviceStore store;
  {
    CachingAllocator device(&store, {});
    VarStore vars;
    Tensor w(DType::kFloat32, {2, 3}, &device);
    for (int i = 0; i < 6; ++i) w.data<float>()[i] = 0.5f * static_cast<float>(i);  // host-addressable here
    REQUIRE(w.memory_kind() == MemoryKind::kDevice);
    vars.LookupOrCreate("w")->value = w;
    vars.LookupOrCreate("b")->value = Filled(DType::kInt32, {3}, 2);  // host variables beside it
    SaveVariables(path, vars, {});
    CHECK(store.copies == 1);
    VarStore fresh;
    RestoreVariables(path, fresh, {});
    CHECK(fresh.Find("w")->value.memory_kind() == MemoryKind::kHost);
    CHECK(fresh.Find("w")->value.ToVector<float>() == std::vector<float>{0, 0.5f, 1, 1.5f, 2, 2.5f});
    CHECK(SameTensor(fresh.Find("b")->value, vars.Find("b")->value));
  }
  // SaveCheckpoint itself takes host tensors only, and says so.
  CachingAllocator device(&store, {});
  const Tensor d(DType::kFloat32, {2}, &device);
  auto [code, msg] = ErrorOf([&] { SaveCheckpoint(path, {{"d", d}}); });
  CHECK(code == Code::kInvalidArgument);
  CHECK_MESSAGE(Contains(msg, "device memory"), msg);
}

TEST_CASE("SaveVariables / RestoreVariables") {
  TempDir dir("vars");
  const std::string path = dir.File("v.weft");
  VarStore vars;
  vars.LookupOrCreate("a")->value = Filled(DType::kFloat32, {2, 2}, 1);
  vars.LookupOrCreate("b")->value = Filled(DType::kInt32, {3}, 2);
  vars.LookupOrCreate("never");

  auto [code, msg] = ErrorOf([&] { SaveVariables(path, vars, {"a", "never"}); });
  CHECK(code == Code::kFailedPrecondition);
  CHECK(Contains(msg, "'never'"));
  std::tie(code, msg) = ErrorOf([&] { SaveVariables(path, vars, {"a", "nope"}); });
  CHECK(code == Code::kNotFound);
  CHECK(Contains(msg, "'nope'"));
  CHECK(dir.Entries().empty());

  SaveVariables(path, vars, {"a", "b"});
  const Tensor a_saved = vars.Find("a")->value.Clone();

  // Into a fresh store (variables created), and into one holding other values.
  VarStore fresh;
  RestoreVariables(path, fresh, {});
  CHECK(SameTensor(fresh.Find("a")->value, a_saved));
  CHECK(SameTensor(fresh.Find("b")->value, vars.Find("b")->value));

  vars.Find("a")->value = Tensor::Zeros(DType::kFloat32, {2, 2});
  RestoreVariables(path, vars, {"a"});
  CHECK(SameTensor(vars.Find("a")->value, a_saved));
  CHECK_FALSE(vars.Find("a")->value.SharesBufferWith(fresh.Find("a")->value));

  VarStore mismatched;
  mismatched.LookupOrCreate("a")->value = Tensor::Zeros(DType::kFloat32, {4});
  std::tie(code, msg) = ErrorOf([&] { RestoreVariables(path, mismatched, {"a"}); });
  CHECK(code == Code::kInvalidArgument);
  CHECK_MESSAGE((Contains(msg, "variable 'a'") && Contains(msg, "float32[2,2]") && Contains(msg, "float32[4]")), msg);
  std::tie(code, msg) = ErrorOf([&] { RestoreVariables(path, mismatched, {"zzz"}); });
  CHECK(code == Code::kNotFound);
  CHECK_MESSAGE((Contains(msg, "'zzz'") && Contains(msg, path)), msg);
}

TEST_CASE("a failed save leaves the old checkpoint intact and no temporary file") {
  TempDir dir("atomic");
  const std::string path = dir.File("ckpt-1.weft");
  SaveCheckpoint(path, Sample());
  const std::string before = ReadBytes(path);

  // Simulate a full disk: cap the file size this process may write (SIGXFSZ ignored, so write()
  // fails with EFBIG instead of killing the process).
  struct rlimit old_limit;
  REQUIRE(getrlimit(RLIMIT_FSIZE, &old_limit) == 0);
  auto old_handler = signal(SIGXFSZ, SIG_IGN);
  struct rlimit small = old_limit;
  small.rlim_cur = 4096;
  REQUIRE(setrlimit(RLIMIT_FSIZE, &small) == 0);
  auto [code, msg] = ErrorOf([&] { SaveCheckpoint(path, {{"big", Tensor::Zeros(DType::kFloat32, {100000})}}); });
  setrlimit(RLIMIT_FSIZE, &old_limit);
  signal(SIGXFSZ, old_handler);

  CHECK(code == Code::kResourceExhausted);
  CHECK(Contains(msg, path));
  CHECK(ReadBytes(path) == before);
  CHECK(dir.Entries() == std::vector<std::string>{"ckpt-1.weft"});
  CHECK(LoadCheckpoint(path).size() == 3);

  // A successful save replaces it.
  SaveCheckpoint(path, {{"only", Tensor::Scalar(1.0)}});
  CHECK(LoadCheckpoint(path).count("only") == 1);
}

TEST_CASE("checkpoint directory: CheckpointPath, LatestCheckpoint, PruneCheckpoints") {
  TempDir dir("latest");
  CHECK(CheckpointPath("/x/run", 42) == "/x/run/ckpt-42.weft");
  CHECK(LatestCheckpoint(dir.path).empty());
  CHECK(LatestCheckpoint(dir.File("does-not-exist")).empty());
  for (int64_t step : {5, 100, 20, 9}) SaveCheckpoint(CheckpointPath(dir.path, step), Sample());
  // Leftovers that are not complete checkpoints.
  WriteBytes(dir.File("ckpt-999.weft.tmp-123-abcd"), "partial");
  WriteBytes(dir.File("ckpt-.weft"), "");
  WriteBytes(dir.File("ckpt-12x.weft"), "");
  WriteBytes(dir.File("ckpt--3.weft"), "");
  WriteBytes(dir.File("notes.txt"), "");
  CHECK(LatestCheckpoint(dir.path) == CheckpointPath(dir.path, 100));
  auto list = ListCheckpoints(dir.path);
  REQUIRE(list.size() == 4);
  CHECK(list[0].first == 5);
  CHECK(list[3].first == 100);

  PruneCheckpoints(dir.path, 2);
  list = ListCheckpoints(dir.path);
  REQUIRE(list.size() == 2);
  CHECK(list[0].first == 20);
  CHECK(list[1].first == 100);
  CHECK(fs::exists(dir.File("ckpt-999.weft.tmp-123-abcd")));  // other files are left alone
  CHECK(fs::exists(dir.File("notes.txt")));
  PruneCheckpoints(dir.path, 0);
  CHECK(LatestCheckpoint(dir.path).empty());
  CHECK(ErrorOf([&] { PruneCheckpoints(dir.path, -1); }).first == Code::kInvalidArgument);
}
