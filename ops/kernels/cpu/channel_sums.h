// Reductions over rows that give the same bits on any number of threads (issue 18's determinism):
// the rows are cut into blocks whose size depends on the shape only, each block sums into its
// own partial, and the partials are added in block order.
//
//   // sums[c] = sum_r dy[r, c], sums[C + c] = sum_r dy[r, c] * x[r, c], in double
//   std::vector<double> sums = ChannelSums(pool, M, C, 2, [&](int64_t r, double* acc) { ... });
//
// Shape key: M = rows, C = channels (the last axis: the values of one row are contiguous).
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "core/threadpool.h"

namespace weft {

// Rows per block: about 16K values, a function of C only.
inline int64_t ChannelBlockRows(int64_t C) { return std::max<int64_t>(1, (int64_t{1} << 14) / std::max<int64_t>(C, 1)); }

// Sums k per-channel quantities over M rows: row(r, acc) adds row r's terms into acc[j * C + c]
// (k * C accumulators of type Acc, zeroed per block). Blocks add up in double. Returns the k * C
// totals. Acc = float keeps a block's loop as fast as the data streams in (a block is at most
// ~16K values, ~1K per channel); double where the sums must stay exact (batch norm's E[x^2]).
template <typename Acc = double, typename RowFn>
std::vector<double> ChannelSums(ThreadPool* pool, int64_t M, int64_t C, int k, const RowFn& row) {
  const int64_t per = ChannelBlockRows(C), width = k * C;
  const int64_t blocks = (M + per - 1) / per;
  std::vector<Acc> partial(static_cast<size_t>(blocks * width), Acc(0));
  auto run = [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) {
      Acc* acc = partial.data() + i * width;
      for (int64_t r = i * per, end = std::min(M, r + per); r < end; ++r) row(r, acc);
    }
  };
  if (pool != nullptr && blocks > 1) {
    pool->ParallelFor(blocks, run);
  } else {
    run(0, blocks);
  }
  std::vector<double> total(static_cast<size_t>(width), 0.0);
  for (int64_t i = 0; i < blocks; ++i) {
    const Acc* acc = partial.data() + i * width;
    for (int64_t j = 0; j < width; ++j) total[j] += static_cast<double>(acc[j]);
  }
  return total;
}

// sums[c] = sum over the M rows of x [M, C] of x[r, c], each block accumulated in T, blocks added
// in double. Few channels (C < 64) would leave a row loop too short to vectorize, so a block is
// read m rows at a time (m * C contiguous values into m * C accumulators, folded into C at the
// end of the block): the same order of additions on any number of threads.
template <typename T>
std::vector<double> ColumnSums(ThreadPool* pool, const T* x, int64_t M, int64_t C) {
  const int64_t m = std::max<int64_t>(1, 64 / std::max<int64_t>(C, 1)), width = m * C;
  const std::vector<double> wide = ChannelSums<T>(pool, (M + m - 1) / m, width, 1, [&](int64_t g, T* acc) {
    const int64_t r0 = g * m, n = std::min(m, M - r0) * C;
    T* __restrict a = acc;
    const T* __restrict v = x + r0 * C;
    for (int64_t j = 0; j < n; ++j) a[j] += v[j];
  });
  std::vector<double> sums(static_cast<size_t>(C), 0.0);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t c = 0; c < C; ++c) sums[c] += wide[i * C + c];
  return sums;
}

// Runs row(r) for every row in parallel over blocks of rows (for passes with no reduction).
template <typename RowFn>
void ForChannelRows(ThreadPool* pool, int64_t M, int64_t C, const RowFn& row) {
  const int64_t per = ChannelBlockRows(C);
  const int64_t blocks = (M + per - 1) / per;
  auto run = [&](int64_t b, int64_t e) {
    for (int64_t r = b * per, end = std::min(M, e * per); r < end; ++r) row(r);
  };
  if (pool != nullptr && blocks > 1) {
    pool->ParallelFor(blocks, run);
  } else {
    run(0, blocks);
  }
}

// The number of blocks to cut `rows` into when each block keeps its own partial sum (a filter
// gradient) that is added up in block order at the end: one block for small jobs (`work` multiply-
// adds), else up to kMaxPartialBlocks, never a function of the thread count.
constexpr int64_t kMaxPartialBlocks = 16;
inline int64_t PartialBlocks(int64_t rows, int64_t work) {
  return work < (int64_t{1} << 18) ? 1 : std::clamp<int64_t>(rows, 1, kMaxPartialBlocks);
}

}  // namespace weft
