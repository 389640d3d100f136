// weft_fuzz: runs the fuzz targets (fuzz.h) with the seeded mutator (mutator.h). docs/fuzzing.md.
//
//   weft_fuzz --list
//   weft_fuzz --seconds 15 --regressions tests/fuzz/regressions        # every target, 15 s each
//   weft_fuzz --target wire --seconds 600 --seed 7 --crash-dir /tmp     # one target, longer
//   weft_fuzz --target wire crash-wire-0123abcd                         # replay files
//
// Per target: every seed must be accepted (the writer and the reader agree), every regression file
// and every mutated input must be accepted or rejected with a weft::Error; the first finding (fuzz.h)
// stops the run with exit status 1, its input saved as <crash-dir>/crash-<target>-<hash> and the
// command that replays it. Inputs that end in an error message not seen before join the corpus
// (a cheap stand-in for coverage feedback: a new message is a new path through the decoder).
#include <dirent.h>
#include <dlfcn.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <thread>

#include <fmt/format.h>

#include "core/status.h"
#include "fuzz.h"
#include "mutator.h"

// Under ASan: an allocation that a small input makes the decoder ask for is a finding when it is
// this large (decoders must check lengths against the bytes they have before allocating), and a
// run that grows past the RSS limit is stopped with a report.
extern "C" const char* __asan_default_options() { return "max_allocation_size_mb=256:hard_rss_limit_mb=2048"; }

namespace weft::fuzz {
namespace {

using Clock = std::chrono::steady_clock;

std::map<std::string, FuzzTarget>& Registry() {
  static std::map<std::string, FuzzTarget> targets;
  return targets;
}

// What the crash handlers need: the input being decoded, what it is, and where to save it.
struct Current {
  std::string target;
  std::string which;  // "seed 2", "regression file ...", "input #123 of seed 1 (...)"
  const std::string* input = nullptr;
  std::string crash_dir = ".";
  std::atomic<int64_t> started_ns{0};  // 0 while no input is being decoded
} g_current;

std::string SaveInput(const std::string& target, const std::string& bytes, const std::string& dir) {
  uint64_t h = 0xCBF29CE484222325ull;
  for (unsigned char c : bytes) h = (h ^ c) * 0x100000001B3ull;
  const std::string path = fmt::format("{}/crash-{}-{:016x}", dir, target, h);
  if (FILE* f = std::fopen(path.c_str(), "wb")) {
    std::fwrite(bytes.data(), 1, bytes.size(), f);
    std::fclose(f);
  }
  return path;
}

void Report(const std::string& what) {
  const std::string path = SaveInput(g_current.target, *g_current.input, g_current.crash_dir);
  std::fprintf(stderr, "weft_fuzz: FINDING in target %s, %s: %s\n  input (%zu bytes) saved to %s\n"
               "  replay: weft_fuzz --target %s %s\n", g_current.target.c_str(), g_current.which.c_str(), what.c_str(),
               g_current.input->size(), path.c_str(), g_current.target.c_str(), path.c_str());
  std::fflush(stderr);
}

[[noreturn]] void Finding(const std::string& what) {
  Report(what);
  _exit(1);
}

// A sanitizer report or a fatal signal: save the input, then let the process die.
void OnDeath() {
  if (g_current.input != nullptr && g_current.started_ns.load() != 0) Report("the process died (report above)");
}

void OnSignal(int sig) {
  OnDeath();
  signal(sig, SIG_DFL);
  raise(sig);
}

// Under the sanitizers, their death callback; gcc links ASan and UBSan as two libraries, each with
// its own copy of the callback, so every loaded copy gets it. Otherwise, the fatal signals.
void InstallDeathHandlers() {
  using SetCallback = void (*)(void (*)());
  std::set<SetCallback> setters;
  if (auto f = reinterpret_cast<SetCallback>(dlsym(RTLD_DEFAULT, "__sanitizer_set_death_callback"))) setters.insert(f);
  for (const char* lib : {"libasan.so.8", "libubsan.so.1"}) {
    if (void* h = dlopen(lib, RTLD_LAZY | RTLD_NOLOAD)) {
      if (auto f = reinterpret_cast<SetCallback>(dlsym(h, "__sanitizer_set_death_callback"))) setters.insert(f);
    }
  }
  for (SetCallback f : setters) f(OnDeath);
  if (setters.empty()) {
    for (int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT}) signal(sig, OnSignal);
  }
}

// Inputs that take longer than `timeout` are hangs: the watchdog reports them and ends the process.
void StartWatchdog(std::chrono::seconds timeout) {
  std::thread([timeout] {
    for (;;) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      const int64_t t0 = g_current.started_ns.load();
      const int64_t now = Clock::now().time_since_epoch().count();
      if (t0 != 0 && now - t0 > std::chrono::nanoseconds(timeout).count()) {
        Finding(fmt::format("an input took longer than {} s (hang)", timeout.count()));
      }
    }
  }).detach();
}

// The novelty key of a rejection: its code and the first words of its message that are plain
// lowercase words (numbers, hex, quoted names and the input's own text left out), so that a key
// stands for a check in the decoder rather than for the input.
std::string Shape(const Error& e) {
  std::string key = fmt::format("{}:", static_cast<int>(e.code()));
  std::istringstream words(e.status().message());
  bool quoted = false;
  int kept = 0;
  for (std::string w; kept < 8 && words >> w;) {
    const bool was_quoted = quoted;
    quoted ^= std::count(w.begin(), w.end(), '\'') % 2 == 1;
    if (was_quoted || w.find('\'') != std::string::npos) continue;
    while (!w.empty() && std::strchr(":,.()", w.back())) w.pop_back();
    const auto letters = [](char c) { return c >= 'a' && c <= 'z'; };
    const auto hex = [](char c) { return c >= 'a' && c <= 'f'; };  // "ffee": a value ("bad" goes too)
    if (!w.empty() && std::all_of(w.begin(), w.end(), letters) && !std::all_of(w.begin(), w.end(), hex)) {
      key += " " + w;
      ++kept;
    }
  }
  return key;
}

struct Outcome {
  bool accepted = false;
  std::string key;  // the novelty key of a rejection
  std::string message;
};

Outcome DecodeOne(const FuzzTarget& t, const std::string& input, std::string which) {
  g_current.which = std::move(which);
  g_current.input = &input;
  g_current.started_ns.store(Clock::now().time_since_epoch().count());
  Outcome out;
  try {
    t.decode(input);
    out.accepted = true;
  } catch (const Error& e) {
    if (e.code() == Code::kInternal) Finding(fmt::format("an Internal error: {}", e.what()));
    out.key = Shape(e);
    out.message = e.what();
  } catch (const std::exception& e) {
    Finding(fmt::format("an exception that is not a weft::Error: {}", e.what()));
  } catch (...) {
    Finding("an exception that is not a std::exception");
  }
  g_current.started_ns.store(0);
  return out;
}

std::string ReadFile(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) {
    std::fprintf(stderr, "weft_fuzz: cannot read '%s'\n", path.c_str());
    std::exit(2);
  }
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

std::vector<std::string> FilesIn(const std::string& dir) {
  std::vector<std::string> out;
  if (DIR* d = opendir(dir.c_str())) {
    while (dirent* e = readdir(d)) {
      if (e->d_name[0] != '.') out.push_back(dir + "/" + e->d_name);
    }
    closedir(d);
  }
  std::sort(out.begin(), out.end());
  return out;
}

struct Options {
  std::vector<std::string> targets;
  double seconds = 0;
  uint64_t runs = UINT64_MAX;
  uint64_t seed = 1;
  std::string regressions;
  std::vector<std::string> files;
};

constexpr size_t kMaxCorpus = 1024;
constexpr size_t kMaxInputBytes = 1 << 20;

void RunTarget(const std::string& name, const FuzzTarget& t, const Options& o) {
  g_current.target = name;
  std::vector<std::string> corpus = t.seeds();
  const size_t num_seeds = corpus.size();
  for (size_t i = 0; i < num_seeds; ++i) {
    const Outcome r = DecodeOne(t, corpus[i], fmt::format("seed {}", i));
    if (!r.accepted) Finding("a seed made by weft's own writer was rejected: " + r.message);
  }
  size_t regressions = 0;
  if (!o.regressions.empty()) {
    for (const std::string& path : FilesIn(o.regressions + "/" + name)) {
      DecodeOne(t, ReadFile(path), "regression file " + path);
      ++regressions;
    }
  }
  std::set<std::string> seen;
  std::map<std::string, uint64_t> by_code;
  uint64_t execs = 0, accepted = 0;
  const auto start = Clock::now();
  const auto deadline = start + std::chrono::duration<double>(o.seconds);
  const bool timed = o.seconds > 0 || o.runs == UINT64_MAX;  // --runs alone: that many inputs
  while (execs < o.runs && (!timed || Clock::now() < deadline)) {
    Rng rng(MixSeed(o.seed, name, execs));
    std::string input = Mutate(corpus[rng.Below(corpus.size())], corpus, rng);
    if (input.size() > kMaxInputBytes) input.resize(kMaxInputBytes);
    if (t.fixup && !rng.OneIn(4)) t.fixup(input);
    const Outcome r = DecodeOne(t, input, fmt::format("input #{} of seed {} (the run again: --seed {} --runs {})", execs,
                                                      o.seed, o.seed, execs + 1));
    ++execs;
    accepted += r.accepted;
    if (!r.accepted) ++by_code[r.key.substr(0, r.key.find(':'))];
    // New rejections and some accepted inputs (valid, so good bases) join the corpus.
    const bool keep = r.accepted ? rng.OneIn(16) : seen.insert(r.key).second;
    if (keep && corpus.size() < kMaxCorpus) corpus.push_back(std::move(input));
  }
  const double secs = std::chrono::duration<double>(Clock::now() - start).count();
  std::string codes;
  for (const auto& [code, n] : by_code) {
    codes += fmt::format(" {}={}", std::string(CodeName(static_cast<Code>(std::stoi(code)))), n);
  }
  std::printf("%-12s %9llu execs in %6.1f s (%7.0f/s), %zu seeds, %zu regressions, corpus %zu, %zu distinct "
              "errors; accepted %llu, rejected%s\n",
              name.c_str(), static_cast<unsigned long long>(execs), secs, secs > 0 ? execs / secs : 0.0,
              num_seeds, regressions, corpus.size(), seen.size(), static_cast<unsigned long long>(accepted),
              codes.c_str());
  std::fflush(stdout);
}

int Usage() {
  std::fprintf(stderr,
               "usage: weft_fuzz [--list] [--target NAME]... [--seconds S] [--runs N] [--seed S] [--timeout S]\n"
               "                 [--regressions DIR] [--crash-dir DIR] [FILE...]\n");
  return 2;
}

}  // namespace

bool RegisterTarget(const char* name, FuzzTarget target) {
  Registry().emplace(name, std::move(target));
  return true;
}

TempFile::TempFile(std::string_view bytes, std::string_view suffix) {
  static std::atomic<uint64_t> counter{0};
  const char* dir = std::getenv("TMPDIR");
  path_ = fmt::format("{}/weft-fuzz-{}-{}{}", dir ? dir : "/tmp", getpid(), counter++, suffix);
  std::ofstream f(path_, std::ios::binary | std::ios::trunc);
  f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

TempFile::~TempFile() { std::remove(path_.c_str()); }

}  // namespace weft::fuzz

int main(int argc, char** argv) {
  using namespace weft::fuzz;
  Options o;
  int timeout = 20;
  bool list = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) std::exit(Usage());
      return argv[++i];
    };
    if (a == "--list") list = true;
    else if (a == "--target") o.targets.push_back(value());
    else if (a == "--seconds") o.seconds = std::stod(value());
    else if (a == "--runs") o.runs = std::stoull(value());
    else if (a == "--seed") o.seed = std::stoull(value());
    else if (a == "--timeout") timeout = std::stoi(value());
    else if (a == "--regressions") o.regressions = value();
    else if (a == "--crash-dir") g_current.crash_dir = value();
    else if (a.starts_with("--")) return Usage();
    else o.files.push_back(a);
  }
  if (list) {
    for (const auto& [name, t] : Registry()) std::printf("%s\n", name.c_str());
    return 0;
  }
  if (o.targets.empty()) {
    for (const auto& [name, t] : Registry()) o.targets.push_back(name);
  }
  for (const std::string& name : o.targets) {
    if (!Registry().count(name)) {
      std::fprintf(stderr, "weft_fuzz: no target '%s' (--list shows them)\n", name.c_str());
      return 2;
    }
  }
  InstallDeathHandlers();
  StartWatchdog(std::chrono::seconds(timeout));
  if (!o.files.empty()) {  // replay
    if (o.targets.size() != 1) return Usage();
    g_current.target = o.targets[0];
    for (const std::string& path : o.files) {
      const Outcome r = DecodeOne(Registry()[o.targets[0]], ReadFile(path), "file " + path);
      std::printf("%s: %s%s\n", path.c_str(), r.accepted ? "accepted" : "rejected: ", r.message.c_str());
    }
    return 0;
  }
  std::printf("weft_fuzz: seed %llu, %.0f s per target, per-input timeout %d s\n",
              static_cast<unsigned long long>(o.seed), o.seconds, timeout);
  for (const std::string& name : o.targets) RunTarget(name, Registry()[name], o);
  return 0;
}
