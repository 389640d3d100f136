// Signal ops: FFT, the discrete Fourier transform along the last dim of a complex tensor held as
// two real tensors (weft has no complex dtype; python/weft/signal.py builds tf.signal's fft, ifft,
// rfft, irfft and stft on it). Kernel: ops/kernels/cpu/signal.cc (CPU only: the placer runs it on
// the CPU, as it does TopK).
#include <fmt/format.h>

#include "ops/all_ops.h"
#include "ops/framework.h"

namespace weft {
namespace {

const std::vector<DType> kFloatTypes = {DType::kFloat32, DType::kFloat64};

void FftShape(InferenceContext& c) {
  const TensorShape re = c.WithRankAtLeast(c.input(0), 1, "FFT: re");
  const TensorShape im = c.WithRankAtLeast(c.input(1), 1, "FFT: im");
  TensorShape merged = re;
  if (re.unknown_rank()) {
    merged = im;
  } else if (!im.unknown_rank()) {
    WEFT_REQUIRE(re.rank() == im.rank(), "FFT: re and im must have one shape (one complex tensor), got {} and {}",
                 re.ToString(), im.ToString());
    std::vector<int64_t> dims = re.dims();
    for (int d = 0; d < re.rank(); ++d) {
      WEFT_REQUIRE(re.dim(d) < 0 || im.dim(d) < 0 || re.dim(d) == im.dim(d),
                   "FFT: re and im must have one shape (one complex tensor), got {} and {}", re.ToString(),
                   im.ToString());
      if (dims[d] < 0) dims[d] = im.dim(d);
    }
    merged = TensorShape(dims);
  }
  c.set_output(0, merged);
  c.set_output(1, merged);
}

// y = F x with F[k][j] = exp(-+2 pi i jk / n) (/ n when normalize): F is symmetric, so
// dx = conj(F) dy, the transform with the other sign and the same scale.
std::vector<Output> FftGrad(const Scope& s, const Node& op, const std::vector<Output>& dy) {
  Node* n = s.AddNode("FFT", {dy[0], dy[1]},
                       {{"inverse", !op.attr<bool>("inverse")}, {"normalize", op.attr<bool>("normalize")}});
  return {Output(n, 0), Output(n, 1)};
}

}  // namespace

void RegisterSignalOps(OpRegistry& r) {
  r.Register("FFT").Input("re", "T").Input("im", "T").Output("re_out", "T").Output("im_out", "T")
      .TypeAttr("T", kFloatTypes).Attr("inverse", false).Attr("normalize", false).Shape(FftShape).Grad(FftGrad)
      .Doc("The DFT of re + i im along the last dim: y[k] = sum_j x[j] exp(-2 pi i jk / n), exp(+...) when "
           "inverse, divided by n when normalize (tf.signal.ifft is inverse and normalize). Any length "
           "(radix 2, or Bluestein's chirp for other lengths), computed in double precision.");
}

}  // namespace weft
