// The all-reduce cost model (runtime/collectives/cost_model.h) and `auto`'s choice across
// processes, against the closed forms of docs/collectives.md written out here independently.
#include <doctest/doctest.h>

#include <cmath>
#include <fmt/format.h>

#include "runtime/collectives/algorithms.h"

using namespace weft;

namespace {

// The closed forms, for p members and n bytes.
double Ring(const AllReduceCost& m, double p, double n) {
  return 2 * (p - 1) * m.ring_alpha + 2 * (p - 1) / p * n * m.ring_beta + (p - 1) / p * n * m.gamma;
}
double Doubling(const AllReduceCost& m, int p, double n) {
  const int q = 1 << static_cast<int>(std::floor(std::log2(p)));
  const double rounds = std::log2(q);
  double t = rounds * (m.rd_alpha + n * m.rd_beta + n * m.gamma);
  if (p > q) t += 2 * m.rd_alpha + 2 * n * m.rd_beta + n * m.gamma;
  return t;
}

CollectiveParams AcrossTasks(int p, const AllReduceCost& cost) {
  CollectiveParams params;
  params.what = "test";
  params.group_size = p;
  for (int r = 0; r < p; ++r) params.devices.push_back(fmt::format("/job:worker/replica:0/task:{}/device:CPU:0", r));
  params.cost = cost;
  return params;
}

}  // namespace

TEST_CASE("all-reduce cost model: the closed forms, by hand for 4 members") {
  const AllReduceCost m{.ring_alpha = 1e-5, .ring_beta = 1e-9, .rd_alpha = 2e-5, .rd_beta = 3e-9, .gamma = 5e-10};
  // ring, p = 4, n = 1 MiB: 6 alpha + 1.5 n beta + 0.75 n gamma
  const double n = 1 << 20;
  CHECK(RingAllReduceSeconds(m, 4, 1 << 20) == doctest::Approx(6e-5 + 1.5 * n * 1e-9 + 0.75 * n * 5e-10));
  // recursive doubling, p = 4: 2 rounds of (alpha + n beta + n gamma)
  CHECK(RecursiveDoublingAllReduceSeconds(m, 4, 1 << 20) == doctest::Approx(2 * (2e-5 + n * 3e-9 + n * 5e-10)));
  // p = 5: the fifth folds in and gets the result back: + 2 alpha + 2 n beta + n gamma
  CHECK(RecursiveDoublingAllReduceSeconds(m, 5, 1 << 20) ==
        doctest::Approx(2 * (2e-5 + n * 3e-9 + n * 5e-10) + 2 * 2e-5 + 2 * n * 3e-9 + n * 5e-10));
  CHECK(RingAllReduceSeconds(m, 1, 1 << 20) == 0);
}

TEST_CASE("all-reduce cost model: auto picks the cheaper closed form across tasks") {
  const AllReduceCost fitted;  // the defaults: the fit to the emulated links
  const AllReduceCost latency_bound{.ring_alpha = 5e-5, .ring_beta = 1e-10, .rd_alpha = 5e-5, .rd_beta = 1e-10,
                                    .gamma = 1e-11};
  const AllReduceCost bandwidth_bound{.ring_alpha = 1e-6, .ring_beta = 8e-9, .rd_alpha = 1e-6, .rd_beta = 8e-9,
                                      .gamma = 5e-10};
  for (const AllReduceCost& m : {fitted, latency_bound, bandwidth_bound}) {
    for (int p : {2, 3, 4, 5, 8, 64, 100, 1024}) {
      const CollectiveParams params = AcrossTasks(p, m);
      const int64_t cross = RecursiveDoublingMaxBytes(m, p);
      for (int64_t n = 4; n <= (int64_t{1} << 30); n *= 4) {
        const double ring = Ring(m, p, static_cast<double>(n)), rd = Doubling(m, p, static_cast<double>(n));
        INFO("p = " << p << ", n = " << n << ", ring " << ring << " s, recursive doubling " << rd << " s");
        // Where the two costs differ by more than rounding, auto takes the cheaper.
        if (std::abs(ring - rd) > 1e-9 * std::max(ring, rd)) {
          CHECK(ChooseAllReduce(params, n) == (rd < ring ? "recursive_doubling" : "ring"));
          CHECK((n <= cross) == (rd < ring));
        }
      }
      // At the crossover the two closed forms meet (when it is inside the sizes' range).
      if (cross > 0 && cross < (int64_t{1} << 40)) {
        const double ring = Ring(m, p, static_cast<double>(cross)), rd = Doubling(m, p, static_cast<double>(cross));
        CHECK(rd <= ring * (1 + 1e-9));
        CHECK(Doubling(m, p, static_cast<double>(cross + 1)) >= Ring(m, p, static_cast<double>(cross + 1)) * (1 - 1e-9));
      }
    }
  }
  // The fitted model's choice grows with the group: more members make the ring's 2(p-1) steps dearer.
  CHECK(RecursiveDoublingMaxBytes(fitted, 64) > RecursiveDoublingMaxBytes(fitted, 4));
}

TEST_CASE("all-reduce cost model: members of one task still share, several per task go hierarchical") {
  CollectiveParams p;
  p.group_size = 2;
  p.devices = {"/job:worker/replica:0/task:0/device:CPU:0", "/job:worker/replica:0/task:0/device:CPU:1"};
  CHECK(ChooseAllReduce(p, 1 << 30) == "shared");
  p.group_size = 3;
  p.devices.push_back("/job:worker/replica:0/task:1/device:CPU:0");
  CHECK(ChooseAllReduce(p, 4) == "hierarchical");
}
