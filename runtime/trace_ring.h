// Always-on bounded tracing: a process's most recent events (kernels, Send/Recv, collective
// messages, steps) in a fixed ring of slots, dumped as Chrome / Perfetto trace JSON when something
// fails or when asked (docs/distributed.md, "How to read a trace").
//
//   TraceRing ring({.capacity = 16384, .process = "worker:0", .dump_path = "weft-trace-worker-0.json"});
//   const int64_t t0 = TraceRing::NowNanos();
//   ...
//   ring.Record({.kind = TraceKind::kKernel, .step = 5, .start_ns = t0, .end_ns = TraceRing::NowNanos(),
//                .name = node_name, .op = "MatMul"});       // any thread: no lock, no allocation
//   ring.Dump("step 5 failed");                              // to dump_path
//   ring.InstallFatalSignalDump();   // SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT dump it first
//
// Memory is fixed at construction (capacity x 256 bytes); once full, each event overwrites the
// oldest. Recording claims a slot with one atomic increment and copies the strings (truncated to
// the slot's fields) under a per-slot sequence number, so a dump taken while events are recorded
// skips a slot being written instead of reading half of it (a seqlock: the slot's bytes are read
// without a lock and checked afterwards).
//
// The dump is the trace-event format's JSON array, one event per line, each line ending with ','
// and the array closed by a last metadata event "weft_trace_end". A dump cut short (a crash while
// writing, a full disk) is therefore valid JSON up to its last complete line once closed with
// ']', which Chrome and Perfetto do by themselves and ReadTraceDump (runtime/trace_merge.h) does
// for weft-zoo trace merge. Timestamps are CLOCK_MONOTONIC microseconds (read through the TSC:
// runtime/trace_clock.h); SetClockOffset records how far this process's clock is from a
// reference process's (measured when the workers connect), so that `weft-zoo trace merge` can
// put the ranks on one timeline.
//
// Thread-safe. Dump may run while events are recorded; DumpFromSignal is async-signal-safe.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "core/status.h"
#include "runtime/trace_clock.h"

namespace weft {

enum class TraceKind : uint8_t { kKernel, kSend, kRecv, kCollective, kStep, kMark };
const char* TraceKindName(TraceKind kind);

// One event as views: Record copies what fits of each string into its slot.
struct TraceEventRef {
  TraceKind kind = TraceKind::kKernel;
  int64_t step = -1;                // the step id; -1: none
  int64_t start_ns = 0, end_ns = 0;  // TraceRing::NowNanos()
  std::string_view name;             // node name, message name ("rs0/1"), "step 5"
  std::string_view op;               // op type, or the kind of message
  std::string_view detail;           // peer, rendezvous key, error (the end of a long key is kept)
  int32_t group = -1, instance = -1;  // a collective's group and instance keys; -1: none
  bool failed = false;
};

struct TraceRingOptions {
  size_t capacity = 16384;  // events kept, rounded up to a power of two (at least 16)
  std::string process;      // the process's name in the dump ("worker:0"); empty: "pid N"
  std::string dump_path;    // where Dump(why) and a fatal signal write; empty: they write nothing
};

class TraceRing {
 public:
  static constexpr size_t kNameBytes = 48, kOpBytes = 32, kDetailBytes = 120;

  explicit TraceRing(TraceRingOptions options);
  ~TraceRing();  // stops a fatal-signal dump of this ring
  TraceRing(const TraceRing&) = delete;
  TraceRing& operator=(const TraceRing&) = delete;

  // CLOCK_MONOTONIC ns, read from the TSC where it is invariant (runtime/trace_clock.h).
  static int64_t NowNanos() { return TraceClock::Now(); }

  void Record(const TraceEventRef& e);
  size_t capacity() const { return mask_ + 1; }
  // Events recorded since construction (those beyond capacity() have been overwritten).
  uint64_t recorded() const { return next_.load(std::memory_order_acquire); }
  const std::string& dump_path() const { return options_.dump_path; }
  const std::string& process() const { return options_.process; }

  // Adding `offset_ns` to this process's clock gives `reference`'s (a process name), within
  // +-rtt_ns/2. Call before events are dumped (not thread-safe with Dump).
  void SetClockOffset(std::string reference, int64_t offset_ns, int64_t rtt_ns);

  // The dump as text (the events held now, oldest first); `why` goes into its metadata.
  std::string ToJson(std::string_view why) const;
  // Writes the dump to `path` (through "<path>.tmp" and a rename: a reader sees a whole dump or
  // the previous one). Returns the number of events written; throws NotFound naming the path
  // when it cannot write.
  size_t Dump(const std::string& path, std::string_view why) const;
  // To options.dump_path (nothing when empty: returns 0).
  size_t Dump(std::string_view why) const;
  // To options.dump_path without allocating (a hang report's path, when the process may be out
  // of memory): waits for a dump being written, then writes. Returns the number of events
  // written, or -1 (errno set) when it could not write or there is no dump_path.
  int64_t DumpReserved(std::string_view why) const;
  // From a signal handler: no allocation, no lock (skipped when another dump is being written).
  void DumpFromSignal(const char* why) const;
  // Makes SIGSEGV, SIGBUS, SIGFPE, SIGILL and SIGABRT dump this ring to dump_path before the
  // signal's previous disposition runs (the process still dies, or a handler installed before,
  // such as Python's faulthandler, still runs). One ring per process: the last installed wins.
  void InstallFatalSignalDump();

 private:
  struct Slot;
  struct Sink;
  // Writes the dump through `sink`; returns the number of events written.
  size_t Write(Sink& sink, const char* why, size_t why_len) const;
  bool ReadSlot(uint64_t index, Slot* out) const;
  // Writes to tmp_path_ and renames it to dump_path (no allocation); the caller holds dumping_.
  int64_t WriteReserved(const char* why, size_t why_len) const;

  TraceRingOptions options_;
  size_t mask_;
  std::unique_ptr<Slot[]> slots_;
  std::atomic<uint64_t> next_{0};
  mutable std::atomic<bool> dumping_{false};
  std::string reference_;
  int64_t offset_ns_ = 0, rtt_ns_ = -1;  // rtt -1: never measured
  // The dump path and its temporary, as C strings made once (a signal handler cannot format).
  std::string tmp_path_;
  int64_t pid_;
};

}  // namespace weft
