// Fuzz targets: one per decoder of bytes that weft reads from a file or the network. The driver
// (fuzz_main.cc, docs/fuzzing.md) feeds each target its seeds (valid inputs made by weft's own
// writers), the regression files in tests/fuzz/regressions/<target>/, and deterministic mutations of
// them (mutator.h).
//
//   // tests/fuzz/targets/thing.cc (and one line in tests/fuzz/meson.build):
//   WEFT_FUZZ_TARGET(thing, {
//       .seeds = [] { return std::vector<std::string>{EncodeThing(Thing{...})}; },
//       .decode = [](std::string_view in) { DecodeThing(in); },
//   });
//
// Contract of `decode`: it calls the real decoder entry point on `in` and either returns (the input
// was accepted) or throws weft::Error (rejected, with a message naming what was wrong). Anything
// else is a finding: another exception type, an Error of code Internal, a crash, a
// sanitizer report, a leak, or an input that takes longer than the per-input timeout.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace weft::fuzz {

struct FuzzTarget {
  // Valid inputs made by the writer that the decoder's peer uses (called once per run).
  std::function<std::vector<std::string>()> seeds;
  // Decodes one input (see the contract above).
  std::function<void(std::string_view)> decode;
  // Optional: repairs the checksums of a mutated input in place, so that mutations reach the code
  // behind the checksum check (the driver fixes up most inputs and leaves the rest as mutated, so
  // the checks themselves are fuzzed too).
  std::function<void(std::string&)> fixup;
};

// Registers `target` under `name` at static-initialization time; returns true.
bool RegisterTarget(const char* name, FuzzTarget target);

// `selector` then `text`: the input of a target that serves several decoders, picked by its first
// byte (cluster.cc, control.cc, names.cc).
inline std::string Selected(char selector, std::string_view text) {
  std::string out(1, selector);
  out.append(text);
  return out;
}

// A file that holds `bytes` for a decoder that reads paths (checkpoints, IDX files), removed when
// destroyed. Files go to $TMPDIR (default /tmp), one name per process.
class TempFile {
 public:
  explicit TempFile(std::string_view bytes, std::string_view suffix = "");
  ~TempFile();
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

}  // namespace weft::fuzz

#define WEFT_FUZZ_TARGET(name, ...) \
  [[maybe_unused]] static const bool weft_fuzz_registered_##name = ::weft::fuzz::RegisterTarget(#name, ::weft::fuzz::FuzzTarget __VA_ARGS__)
