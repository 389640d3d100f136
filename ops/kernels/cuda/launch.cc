#include "ops/kernels/cuda/launch.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/status.h"

namespace weft {

std::vector<int64_t> BroadcastShape(const std::vector<int64_t>& a, const std::vector<int64_t>& b) {
  const size_t rank = std::max(a.size(), b.size());
  std::vector<int64_t> out(rank);
  for (size_t i = 0; i < rank; ++i) {
    const int64_t da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    const int64_t db = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    WEFT_REQUIRE(da == db || da == 1 || db == 1, "shapes [{}] and [{}] do not broadcast (dim {}: {} vs {})",
                 fmt::join(a, ","), fmt::join(b, ","), i, da, db);
    out[i] = da == 1 ? db : da;
  }
  return out;
}

BroadcastIndexer MakeBroadcastIndexer(const std::vector<int64_t>& a, const std::vector<int64_t>& b) {
  const std::vector<int64_t> out = BroadcastShape(a, b);
  const size_t rank = out.size();
  // Row-major strides of each input, aligned to the output's dims; 0 where the input repeats.
  auto strides = [&](const std::vector<int64_t>& s) {
    std::vector<int64_t> st(rank, 0);
    int64_t step = 1;
    for (size_t i = s.size(); i-- > 0;) {
      st[i + rank - s.size()] = s[i] == 1 ? 0 : step;
      step *= s[i];
    }
    return st;
  };
  const std::vector<int64_t> sa = strides(a), sb = strides(b);
  BroadcastIndexer bi;
  for (size_t i = 0; i < rank; ++i) {
    if (out[i] == 1) continue;  // contributes nothing to any offset
    WEFT_REQUIRE(bi.rank < kMaxDims, "broadcast of [{}] and [{}]: more than {} dims", fmt::join(a, ","),
                 fmt::join(b, ","), kMaxDims);
    bi.out_dims[bi.rank] = out[i];
    bi.a_strides[bi.rank] = sa[i];
    bi.b_strides[bi.rank] = sb[i];
    ++bi.rank;
  }
  return bi;
}

ReduceIndexer MakeReduceIndexer(const std::vector<int64_t>& dims, const std::vector<int64_t>& axes) {
  const int rank = static_cast<int>(dims.size());
  WEFT_REQUIRE(rank <= kMaxDims, "reduction of a rank-{} tensor: at most {} dims", rank, kMaxDims);
  std::vector<bool> reduced(static_cast<size_t>(rank), false);
  for (int64_t a : axes) {
    WEFT_REQUIRE(a >= -rank && a < rank, "reduction axis {} out of range for shape [{}]", a, fmt::join(dims, ","));
    reduced[static_cast<size_t>(a < 0 ? a + rank : a)] = true;
  }
  ReduceIndexer ri;
  int64_t stride = 1;
  std::vector<int64_t> strides(static_cast<size_t>(rank));
  for (int i = rank - 1; i >= 0; --i) {
    strides[static_cast<size_t>(i)] = stride;
    stride *= dims[static_cast<size_t>(i)];
  }
  for (int i = 0; i < rank; ++i) {
    const auto u = static_cast<size_t>(i);
    if (reduced[u]) {
      ri.reduced_dims[ri.reduced_rank] = dims[u];
      ri.reduced_strides[ri.reduced_rank++] = strides[u];
      ri.reduce_count *= dims[u];
    } else {
      ri.kept_dims[ri.kept_rank] = dims[u];
      ri.kept_strides[ri.kept_rank++] = strides[u];
      ri.num_outputs *= dims[u];
    }
  }
  return ri;
}

namespace {

// Row-major strides of dims; throws when there are more than kMaxDims.
std::vector<int64_t> RowMajorStrides(const std::vector<int64_t>& dims, const char* what) {
  WEFT_REQUIRE(dims.size() <= static_cast<size_t>(kMaxDims), "{} of a rank-{} tensor [{}]: at most {} dims", what,
               dims.size(), fmt::join(dims, ","), kMaxDims);
  std::vector<int64_t> strides(dims.size());
  int64_t step = 1;
  for (size_t i = dims.size(); i-- > 0;) {
    strides[i] = step;
    step *= dims[i];
  }
  return strides;
}

}  // namespace

CopyIndexer MakeTransposeIndexer(const std::vector<int64_t>& x_dims, const std::vector<int64_t>& perm) {
  const std::vector<int64_t> xs = RowMajorStrides(x_dims, "transpose");
  WEFT_REQUIRE(perm.size() == x_dims.size(), "transpose: perm [{}] for shape [{}]", fmt::join(perm, ","),
               fmt::join(x_dims, ","));
  CopyIndexer ci;
  ci.rank = static_cast<int>(x_dims.size());
  for (size_t k = 0; k < perm.size(); ++k) {
    const auto p = static_cast<size_t>(perm[k]);
    ci.out_dims[k] = ci.src_dims[k] = x_dims.at(p);
    ci.src_strides[k] = xs[p];
  }
  return ci;
}

CopyIndexer MakeTileIndexer(const std::vector<int64_t>& x_dims, const std::vector<int64_t>& multiples) {
  const std::vector<int64_t> xs = RowMajorStrides(x_dims, "tile");
  WEFT_REQUIRE(multiples.size() == x_dims.size(), "tile: multiples [{}] for shape [{}]", fmt::join(multiples, ","),
               fmt::join(x_dims, ","));
  CopyIndexer ci;
  ci.rank = static_cast<int>(x_dims.size());
  for (size_t k = 0; k < x_dims.size(); ++k) {
    ci.out_dims[k] = x_dims[k] * multiples[k];
    ci.src_dims[k] = x_dims[k];
    ci.src_strides[k] = xs[k];
  }
  return ci;
}

}  // namespace weft
