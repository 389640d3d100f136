// A deterministic mutator of byte strings: input i of a run is a function of (run seed, target,
// i) and the corpus so far alone, never of time or of the machine, so a run is reproduced by its
// seed (docs/fuzzing.md).
//
//   Rng rng(MixSeed(seed, "wire", i));
//   std::string input = Mutate(corpus[rng.Below(corpus.size())], corpus, rng);
//
// Mutations (1 to 4 stacked per input): bit flips, byte sets to boundary values, truncation at a
// random point, deletion / duplication / insertion of a range, overwriting an aligned 1/2/4/8-byte
// field with a value that breaks length and count arithmetic (0, 1, -1, sign bits, 2^31, 2^32,
// 2^61, 2^62, the input's own length +-1), arithmetic on such a field, and splices with another
// corpus entry.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "ops/kernels/philox.h"

namespace weft::fuzz {

// SplitMix64 (ops/kernels/philox.h's): small, fast, well-distributed, and its
// whole state is one integer.
class Rng {
 public:
  explicit Rng(uint64_t seed) : state_(seed) {}
  uint64_t Next() {
    const uint64_t x = state_;
    state_ += 0x9E3779B97F4A7C15ull;
    return philox::SplitMix64(x);
  }
  // Uniform in [0, n); n > 0.
  uint64_t Below(uint64_t n) { return Next() % n; }
  bool OneIn(uint64_t n) { return Below(n) == 0; }

 private:
  uint64_t state_;
};

// The seed of input `index` of `target` in a run with seed `run_seed`.
uint64_t MixSeed(uint64_t run_seed, std::string_view target, uint64_t index);

std::string Mutate(const std::string& base, const std::vector<std::string>& corpus, Rng& rng);

}  // namespace weft::fuzz
