// The generator state of one random kernel (CPU or GPU): the Philox key from the op's seeds and
// the next unused element index. A fresh kernel (a fresh Session) starts at element 0, so the
// same seeds give the same sequence; each run continues where the last stopped. Thread-safe.
#pragma once

#include <cstdint>
#include <mutex>
#include <random>

#include "graph/graph.h"
#include "ops/kernels/philox.h"

namespace weft {

class RandomState {
 public:
  explicit RandomState(const Node& node) {
    uint64_t seed = static_cast<uint64_t>(node.attr<int64_t>("seed"));
    uint64_t seed2 = static_cast<uint64_t>(node.attr<int64_t>("seed2"));
    if (seed == 0 && seed2 == 0) {  // unseeded (e.g. built without the ops:: builder): nondeterministic
      std::random_device rd;
      seed = (uint64_t{rd()} << 32) | rd();
      seed2 = (uint64_t{rd()} << 32) | rd();
    }
    key_ = philox::KeyOf(seed, seed2);
  }
  uint64_t key() const { return key_; }
  // Reserves n element indices for one run; returns the first.
  uint64_t Reserve(int64_t n) {
    std::lock_guard<std::mutex> lock(mu_);
    uint64_t first = next_;
    next_ += static_cast<uint64_t>(n);
    return first;
  }

 private:
  uint64_t key_ = 0;
  std::mutex mu_;
  uint64_t next_ = 0;
};

}  // namespace weft
