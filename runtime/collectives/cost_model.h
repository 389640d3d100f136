// The alpha-beta-gamma cost model of weft's all-reduce across processes (docs/collectives.md,
// "The cost model"), which `auto` follows to choose between recursive doubling and the ring:
//
//   AllReduceCost m;                                   // fitted on the emulated links
//   RingAllReduceSeconds(m, /*members=*/64, 1 << 20);  // the closed forms below
//   RecursiveDoublingMaxBytes(m, 64);                  // the crossover: recursive doubling up to it
//
// For p members and n bytes (alpha: seconds per message step; beta: seconds per byte sent on a
// link, end to end; gamma: seconds per byte merged):
//   ring:               2(p-1) alpha + 2(p-1)/p n beta + (p-1)/p n gamma
//   recursive doubling: L (alpha + n beta + n gamma) + [p > q] (2 alpha + 2 n beta + n gamma)
//                       (q the largest power of two <= p, L = log2 q: ranks beyond q fold in
//                       first and get the result back)
// Each algorithm has its own alpha and beta (what one of its messages and bytes cost as built:
// the ring's chunks overlap transfer and merge, recursive doubling's whole-tensor messages do
// not); gamma is the host's merge. bench/allreduce_model.py fits them to bench/run_cluster_allreduce.sh's
// measurements and makes the same predictions.
#pragma once

#include <cstdint>

namespace weft {

struct AllReduceCost {
  // Defaults: bench/allreduce_model.py's fit to weft's all-reduce over 2 and 4 emulated hosts
  // (bench/results/cluster_allreduce_2026-11-28.jsonl, bench/README.md "All-reduce across
  // emulated hosts"): alpha per algorithm over all rates, beta at 25 Gbit/s, where this 2-core
  // machine, not the link, bounds both. Not the 1 or 10 Gbit/s
  // betas: there the large ring all-reduces stalled (ring dearer per byte than recursive
  // doubling), and a rule from them would send everything through recursive doubling.
  double ring_alpha = 130.9e-6;
  double ring_beta = 4.867e-9;
  double rd_alpha = 73.5e-6;
  double rd_beta = 5.423e-9;
  double gamma = 0.702e-9;  // measured: one float32 merge of two 16 MiB tensors, per byte
};

double RingAllReduceSeconds(const AllReduceCost& m, int members, int64_t bytes);
double RecursiveDoublingAllReduceSeconds(const AllReduceCost& m, int members, int64_t bytes);
// The largest size (bytes) for which recursive doubling costs no more than the ring over
// `members` members (>= 2): 0 when it never does, INT64_MAX when it always does.
int64_t RecursiveDoublingMaxBytes(const AllReduceCost& m, int members);

}  // namespace weft
