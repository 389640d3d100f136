// Reading trace dumps (runtime/trace_ring.h) back, and merging the dumps of several processes
// into one timeline: what `weft-zoo trace merge DIR -o all.json` does.
//
//   TraceDump a = ReadTraceDump(ReadFileText("weft-trace-worker-0.json"), "weft-trace-worker-0.json");
//   TraceDump b = ReadTraceDump(ReadFileText("weft-trace-worker-1.json"), "weft-trace-worker-1.json");
//   std::string all = MergeTraceDumps({a, b});   // one process row per dump, clocks aligned
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/json.h"

namespace weft {

struct TraceDump {
  std::string process;     // "worker:0"
  std::string why;         // why it was dumped
  std::string reference;   // the process whose clock offset_ns leads to ("" when never measured)
  int64_t offset_ns = 0;   // this process's clock + offset_ns = the reference's clock
  int64_t rtt_ns = -1;     // the round trip the offset was measured with (-1: not measured)
  int64_t recorded = 0;    // events the ring took since the process started (some overwritten)
  std::vector<Json> events;  // the dump's events in order (its own metadata left out)
  bool complete = false;     // the dump ended with its end mark: nothing cut off
  std::string problem;       // when not complete: where and why reading stopped
};

// Reads a dump line by line and keeps every event before the first line that is not a whole
// JSON object: a dump cut short or damaged gives the events before the damage (problem says
// where). Throws InvalidArgument naming `what` when the text is not a weft trace dump at all.
TraceDump ReadTraceDump(std::string_view text, std::string_view what);

// One trace (the same line-per-event JSON array, readable by ReadTraceDump): each dump becomes
// process row k (its order in `dumps`), named by its process, its events' times moved by its
// clock offset onto the reference's clock and the whole timeline started at 0. Throws
// InvalidArgument when the dumps measured their offsets against different references.
std::string MergeTraceDumps(const std::vector<TraceDump>& dumps);

}  // namespace weft
