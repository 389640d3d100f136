#include "ops/kernels/cuda/algo_cache.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/status.h"

namespace weft {

ConvKey ConvKey::Make(ConvPass pass, DType dtype, const TensorShape& input_nhwc, const TensorShape& filter_hwio,
                      ConvGeometry geometry) {
  WEFT_REQUIRE(input_nhwc.rank() == 4 && filter_hwio.rank() == 4,
               "convolution key: input {} must be NHWC and filter {} HWIO (rank 4)", input_nhwc.ToString(),
               filter_hwio.ToString());
  ConvKey k;
  k.pass = pass;
  k.dtype = dtype;
  for (int i = 0; i < 4; ++i) {
    k.input[static_cast<size_t>(i)] = input_nhwc.dim(i);
    k.filter[static_cast<size_t>(i)] = filter_hwio.dim(i);
  }
  k.geometry = geometry;
  return k;
}

std::string ConvKey::ToString() const {
  const char* p = pass == ConvPass::kForward ? "fwd" : pass == ConvPass::kBackwardData ? "bwd-data" : "bwd-filter";
  const ConvGeometry& g = geometry;
  return fmt::format("{} {} in[{}] filter[{}] stride {}x{} pad {}x{} dilation {}x{}{}{}", p, DTypeName(dtype),
                     fmt::join(input, ","), fmt::join(filter, ","), g.stride_h, g.stride_w, g.pad_h, g.pad_w,
                     g.dilation_h, g.dilation_w, tf32 ? " tf32" : "", deterministic ? " deterministic" : "");
}

std::optional<int> PickConvAlgo(const std::vector<AlgoCandidate>& ranked, size_t max_workspace, bool allow_tensor_math,
                                bool require_deterministic) {
  for (const AlgoCandidate& c : ranked) {
    if (!c.ok || c.workspace > max_workspace) continue;
    if (c.tensor_math && !allow_tensor_math) continue;
    if (require_deterministic && !c.deterministic) continue;
    return c.algo;
  }
  return std::nullopt;
}

}  // namespace weft
