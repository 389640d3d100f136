#include "runtime/collectives/cost_model.h"

#include <cmath>
#include <limits>

namespace weft {
namespace {

// Recursive doubling's coefficients per unit (of alpha, of n beta, of n gamma) over p members.
struct Terms {
  double steps, sent, merged;
};
Terms DoublingTerms(int p) {
  int q = 1, rounds = 0;
  while (q * 2 <= p) {
    q *= 2;
    ++rounds;
  }
  const bool fold = p > q;
  return {static_cast<double>(rounds + (fold ? 2 : 0)), static_cast<double>(rounds + (fold ? 2 : 0)),
          static_cast<double>(rounds + (fold ? 1 : 0))};
}

}  // namespace

double RingAllReduceSeconds(const AllReduceCost& m, int members, int64_t bytes) {
  if (members < 2) return 0;
  const double p = members, n = static_cast<double>(bytes);
  return 2 * (p - 1) * m.ring_alpha + 2 * (p - 1) / p * n * m.ring_beta + (p - 1) / p * n * m.gamma;
}

double RecursiveDoublingAllReduceSeconds(const AllReduceCost& m, int members, int64_t bytes) {
  if (members < 2) return 0;
  const Terms t = DoublingTerms(members);
  const double n = static_cast<double>(bytes);
  return t.steps * m.rd_alpha + t.sent * n * m.rd_beta + t.merged * n * m.gamma;
}

int64_t RecursiveDoublingMaxBytes(const AllReduceCost& m, int members) {
  // Both costs are a + b n: recursive doubling wins up to where the lines cross.
  const double fixed = RingAllReduceSeconds(m, members, 0) - RecursiveDoublingAllReduceSeconds(m, members, 0);
  const double per_byte = (RecursiveDoublingAllReduceSeconds(m, members, 1 << 20) -
                           RecursiveDoublingAllReduceSeconds(m, members, 0) -
                           (RingAllReduceSeconds(m, members, 1 << 20) - RingAllReduceSeconds(m, members, 0))) /
                          (1 << 20);
  constexpr int64_t kAlways = std::numeric_limits<int64_t>::max();
  if (per_byte <= 0) return fixed >= 0 ? kAlways : 0;
  if (fixed < 0) return 0;
  const double crossing = fixed / per_byte;
  return crossing >= static_cast<double>(kAlways) ? kAlways : static_cast<int64_t>(std::floor(crossing));
}

}  // namespace weft
