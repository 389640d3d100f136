#include "runtime/trace_ring.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>

namespace weft {

// 256 bytes, on cache-line boundaries (4 lines a slot): the numbers, then the three strings (not
// NUL-terminated; lengths kept).
struct alignas(64) TraceRing::Slot {
  // 0: never written; 2i+1: event i being written; 2i+2: event i complete.
  std::atomic<uint64_t> seq{0};
  int64_t start_ns = 0, end_ns = 0, step = -1;
  int32_t group = -1, instance = -1;
  uint32_t tid = 0;
  uint8_t kind = 0, failed = 0, name_len = 0, op_len = 0, detail_len = 0;
  char name[kNameBytes];
  char op[kOpBytes];
  char detail[kDetailBytes];
};

namespace {

std::atomic<const TraceRing*> g_fatal_ring{nullptr};
constexpr int kFatalSignals[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};
struct sigaction g_previous[std::size(kFatalSignals)];

uint32_t ThreadId() {
  thread_local const uint32_t tid = static_cast<uint32_t>(syscall(SYS_gettid));
  return tid;
}

// Copies what fits of `s`; keep_tail keeps the end of a long string (a rendezvous key's tensor
// name is at its end), else its start.
uint8_t CopyField(char* dst, size_t cap, std::string_view s, bool keep_tail) {
  const size_t n = std::min(cap, s.size());
  if (n > 0) std::memcpy(dst, keep_tail ? s.data() + (s.size() - n) : s.data(), n);  // an empty view may be null
  return static_cast<uint8_t>(n);
}

void OnFatalSignal(int sig) {
  const int saved = errno;
  if (const TraceRing* ring = g_fatal_ring.exchange(nullptr)) {
    const char* why = sig == SIGSEGV ? "fatal signal SIGSEGV"
                      : sig == SIGBUS ? "fatal signal SIGBUS"
                      : sig == SIGFPE ? "fatal signal SIGFPE"
                      : sig == SIGILL ? "fatal signal SIGILL"
                                      : "fatal signal SIGABRT";
    ring->DumpFromSignal(why);
  }
  // The previous disposition takes the signal from here (default: the process dies with it).
  for (size_t i = 0; i < std::size(kFatalSignals); ++i) {
    if (kFatalSignals[i] == sig) sigaction(sig, &g_previous[i], nullptr);
  }
  errno = saved;
  raise(sig);
}

}  // namespace

// The dump's writer: JSON text into a fixed buffer, flushed to a file descriptor (signal-safe)
// or appended to a string.
struct TraceRing::Sink {
  int fd = -1;
  std::string* out = nullptr;
  bool ok = true;
  size_t n = 0;
  char buf[4096];

  void Flush() {
    if (out != nullptr) {
      out->append(buf, n);
    } else {
      for (size_t done = 0; done < n && ok;) {
        const ssize_t w = write(fd, buf + done, n - done);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) ok = false;
        else done += static_cast<size_t>(w);
      }
    }
    n = 0;
  }
  void Raw(const char* s, size_t len) {
    for (size_t i = 0; i < len; ++i) {
      if (n == sizeof(buf)) Flush();
      buf[n++] = s[i];
    }
  }
  void Raw(const char* s) { Raw(s, std::strlen(s)); }
  // A JSON string's contents: quotes, backslashes and control bytes escaped.
  void Escaped(const char* s, size_t len) {
    static const char hex[] = "0123456789abcdef";
    for (size_t i = 0; i < len; ++i) {
      const unsigned char c = static_cast<unsigned char>(s[i]);
      if (c == '"' || c == '\\') {
        const char e[2] = {'\\', static_cast<char>(c)};
        Raw(e, 2);
      } else if (c < 0x20) {
        const char e[6] = {'\\', 'u', '0', '0', hex[c >> 4], hex[c & 15]};
        Raw(e, 6);
      } else if (c >= 0x80) {  // '?': a UTF-8 sequence cut by truncation would not be valid text
        Raw("?", 1);
      } else {
        Raw(reinterpret_cast<const char*>(&c), 1);
      }
    }
  }
  void Str(const char* s, size_t len) {
    Raw("\"");
    Escaped(s, len);
    Raw("\"");
  }
  void Int(int64_t v) {
    char tmp[24];
    int i = 0;
    const bool negative = v < 0;
    uint64_t u = negative ? 0 - static_cast<uint64_t>(v) : static_cast<uint64_t>(v);
    do {
      tmp[i++] = static_cast<char>('0' + u % 10);
      u /= 10;
    } while (u != 0);
    if (negative) tmp[i++] = '-';
    while (i > 0) Raw(&tmp[--i], 1);
  }
  // Nanoseconds as microseconds with three decimals (the format's unit).
  void Micros(int64_t ns) {
    if (ns < 0) {
      Raw("-");
      ns = -ns;
    }
    Int(ns / 1000);
    const int64_t frac = ns % 1000;
    const char d[4] = {'.', static_cast<char>('0' + frac / 100), static_cast<char>('0' + frac / 10 % 10),
                       static_cast<char>('0' + frac % 10)};
    Raw(d, 4);
  }
};

const char* TraceKindName(TraceKind kind) {
  switch (kind) {
    case TraceKind::kKernel: return "kernel";
    case TraceKind::kSend: return "send";
    case TraceKind::kRecv: return "recv";
    case TraceKind::kCollective: return "collective";
    case TraceKind::kStep: return "step";
    case TraceKind::kMark: return "mark";
  }
  return "?";
}

TraceRing::TraceRing(TraceRingOptions options) : options_(std::move(options)), pid_(getpid()) {
  static_assert(sizeof(Slot) == 256, "a slot is 256 bytes: the ring's memory is capacity x 256");
  WEFT_REQUIRE(options_.capacity <= (size_t{1} << 24), "TraceRing: capacity {} is more than 2^24 events",
               options_.capacity);
  size_t cap = 16;
  while (cap < options_.capacity) cap <<= 1;
  mask_ = cap - 1;
  slots_ = std::make_unique<Slot[]>(cap);  // all memory now: recording never allocates
  if (options_.process.empty()) options_.process = "pid " + std::to_string(pid_);
  if (!options_.dump_path.empty()) tmp_path_ = options_.dump_path + ".tmp";
}

TraceRing::~TraceRing() {
  const TraceRing* me = this;
  g_fatal_ring.compare_exchange_strong(me, nullptr);
}

void TraceRing::Record(const TraceEventRef& e) {
  const uint64_t i = next_.fetch_add(1, std::memory_order_relaxed);
  Slot& s = slots_[i & mask_];
  // The next slot's four cache lines, for writing: a ring larger than the caches makes every slot
  // a miss when it comes round, which the time until the next event hides.
  const char* next = reinterpret_cast<const char*>(&slots_[(i + 1) & mask_]);
  for (size_t line = 0; line < sizeof(Slot); line += 64) __builtin_prefetch(next + line, 1);
  s.seq.store(2 * i + 1, std::memory_order_relaxed);
  std::atomic_thread_fence(std::memory_order_release);  // "being written" before the bytes change
  s.start_ns = e.start_ns;
  s.end_ns = e.end_ns;
  s.step = e.step;
  s.group = e.group;
  s.instance = e.instance;
  s.tid = ThreadId();
  s.kind = static_cast<uint8_t>(e.kind);
  s.failed = e.failed ? 1 : 0;
  s.name_len = CopyField(s.name, kNameBytes, e.name, false);
  s.op_len = CopyField(s.op, kOpBytes, e.op, false);
  // An error keeps its start (the code and the first words); a key or a peer its end.
  s.detail_len = CopyField(s.detail, kDetailBytes, e.detail, !e.failed);
  s.seq.store(2 * i + 2, std::memory_order_release);
}

bool TraceRing::ReadSlot(uint64_t index, Slot* out) const {
  const Slot& s = slots_[index & mask_];
  const uint64_t before = s.seq.load(std::memory_order_acquire);
  if (before != 2 * index + 2) return false;  // being written, or already overwritten
  out->start_ns = s.start_ns;
  out->end_ns = s.end_ns;
  out->step = s.step;
  out->group = s.group;
  out->instance = s.instance;
  out->tid = s.tid;
  out->kind = s.kind;
  out->failed = s.failed;
  out->name_len = std::min<uint8_t>(s.name_len, kNameBytes);
  out->op_len = std::min<uint8_t>(s.op_len, kOpBytes);
  out->detail_len = std::min<uint8_t>(s.detail_len, kDetailBytes);
  std::memcpy(out->name, s.name, kNameBytes);
  std::memcpy(out->op, s.op, kOpBytes);
  std::memcpy(out->detail, s.detail, kDetailBytes);
  std::atomic_thread_fence(std::memory_order_acquire);
  return s.seq.load(std::memory_order_relaxed) == before;  // not rewritten while copied
}

void TraceRing::SetClockOffset(std::string reference, int64_t offset_ns, int64_t rtt_ns) {
  reference_ = std::move(reference);
  offset_ns_ = offset_ns;
  rtt_ns_ = rtt_ns;
}

size_t TraceRing::Write(Sink& o, const char* why, size_t why_len) const {
  const uint64_t end = next_.load(std::memory_order_acquire);
  const uint64_t begin = end > capacity() ? end - capacity() : 0;
  auto meta_head = [&](const char* name) {
    o.Raw("{\"name\": \"");
    o.Raw(name);
    o.Raw("\", \"ph\": \"M\", \"pid\": ");
    o.Int(pid_);
    o.Raw(", \"tid\": 0, \"args\": {");
  };
  o.Raw("[\n");
  meta_head("process_name");
  o.Raw("\"name\": ");
  o.Str(options_.process.data(), options_.process.size());
  o.Raw("}},\n");
  meta_head("weft_trace");
  o.Raw("\"process\": ");
  o.Str(options_.process.data(), options_.process.size());
  o.Raw(", \"why\": ");
  o.Str(why, why_len);
  o.Raw(", \"clock_reference\": ");
  o.Str(reference_.data(), reference_.size());
  o.Raw(", \"clock_offset_ns\": ");
  o.Int(offset_ns_);
  o.Raw(", \"clock_rtt_ns\": ");
  o.Int(rtt_ns_);
  o.Raw(", \"capacity\": ");
  o.Int(static_cast<int64_t>(capacity()));
  o.Raw(", \"recorded\": ");
  o.Int(static_cast<int64_t>(end));
  o.Raw(", \"dumped_at_us\": ");
  o.Micros(NowNanos());
  o.Raw("}},\n");
  size_t written = 0;
  Slot e;
  for (uint64_t i = begin; i < end; ++i) {
    if (!ReadSlot(i, &e)) continue;
    const TraceKind kind = static_cast<TraceKind>(e.kind);
    o.Raw("{\"name\": ");
    o.Str(e.name, e.name_len);
    o.Raw(", \"cat\": ");
    o.Str(e.op, e.op_len);
    o.Raw(", \"ph\": \"X\", \"ts\": ");
    o.Micros(e.start_ns);
    o.Raw(", \"dur\": ");
    o.Micros(std::max<int64_t>(e.end_ns - e.start_ns, 0));
    o.Raw(", \"pid\": ");
    o.Int(pid_);
    o.Raw(", \"tid\": ");
    o.Int(e.tid);
    o.Raw(", \"args\": {\"kind\": \"");
    o.Raw(TraceKindName(kind));
    o.Raw("\"");
    if (e.step >= 0) {
      o.Raw(", \"step\": ");
      o.Int(e.step);
    }
    if (e.group >= 0) {
      o.Raw(", \"group\": ");
      o.Int(e.group);
    }
    if (e.instance >= 0) {
      o.Raw(", \"instance\": ");
      o.Int(e.instance);
    }
    if (e.detail_len > 0) {
      o.Raw(", \"detail\": ");
      o.Str(e.detail, e.detail_len);
    }
    if (e.failed) o.Raw(", \"failed\": true");
    o.Raw("}},\n");
    ++written;
  }
  meta_head("weft_trace_end");
  o.Raw("\"events\": ");
  o.Int(static_cast<int64_t>(written));
  o.Raw("}}\n]\n");
  o.Flush();
  return written;
}

std::string TraceRing::ToJson(std::string_view why) const {
  std::string out;
  Sink sink;
  sink.out = &out;
  Write(sink, why.data(), why.size());
  return out;
}

size_t TraceRing::Dump(const std::string& path, std::string_view why) const {
  // One dump at a time; a signal-time dump meanwhile gives way (DumpFromSignal).
  while (dumping_.exchange(true, std::memory_order_acquire)) sched_yield();
  struct Release {
    std::atomic<bool>& flag;
    ~Release() { flag.store(false, std::memory_order_release); }
  } release{dumping_};
  const std::string tmp = path + ".tmp";
  const int fd = open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) throw Error(errors::NotFound("cannot write the trace dump '{}': {}", tmp, std::strerror(errno)));
  Sink sink;
  sink.fd = fd;
  const size_t n = Write(sink, why.data(), why.size());
  const bool closed = close(fd) == 0;
  if (!sink.ok || !closed || std::rename(tmp.c_str(), path.c_str()) != 0) {
    throw Error(errors::NotFound("cannot write the trace dump '{}': {}", path, std::strerror(errno)));
  }
  return n;
}

size_t TraceRing::Dump(std::string_view why) const {
  if (options_.dump_path.empty()) return 0;
  return Dump(options_.dump_path, why);
}

int64_t TraceRing::WriteReserved(const char* why, size_t why_len) const {
  const int fd = open(tmp_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return -1;
  Sink sink;
  sink.fd = fd;
  const size_t n = Write(sink, why, why_len);
  const bool closed = close(fd) == 0;
  if (!sink.ok || !closed || rename(tmp_path_.c_str(), options_.dump_path.c_str()) != 0) return -1;
  return static_cast<int64_t>(n);
}

int64_t TraceRing::DumpReserved(std::string_view why) const {
  if (options_.dump_path.empty()) {
    errno = ENOENT;
    return -1;
  }
  while (dumping_.exchange(true, std::memory_order_acquire)) sched_yield();
  const int64_t n = WriteReserved(why.data(), why.size());
  const int saved = errno;
  dumping_.store(false, std::memory_order_release);
  errno = saved;
  return n;
}

void TraceRing::DumpFromSignal(const char* why) const {
  if (options_.dump_path.empty() || dumping_.exchange(true, std::memory_order_acquire)) return;
  (void)WriteReserved(why, std::strlen(why));
  dumping_.store(false, std::memory_order_release);
}

void TraceRing::InstallFatalSignalDump() {
  static std::atomic<bool> installed{false};
  g_fatal_ring.store(this);
  if (installed.exchange(true)) return;
  for (size_t i = 0; i < std::size(kFatalSignals); ++i) {
    struct sigaction sa {};
    sa.sa_handler = OnFatalSignal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_NODEFER;
    sigaction(kFatalSignals[i], &sa, &g_previous[i]);
  }
}

}  // namespace weft
