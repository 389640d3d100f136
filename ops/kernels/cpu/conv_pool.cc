// _FusedConv2DMaxPool and _MaxPoolGradWithArgmax: a conv layer followed by a max pool without
// the conv's output in memory (the FuseNnOps graph pass makes them; see ops/nn.cc).
//
// Shape key: N = batch, OH/OW = conv output height/width (the pool's input), O = channels,
// PH/PW = pooled height/width, PKH/PKW = pool window, PSH/PSW = pool strides.
//
// The forward computes, per pooled row, the PKH conv rows it needs into a small buffer (with
// bias and relu applied) and pools them, writing the pooled values and, per value, the window
// tap (row-major, first maximum on ties) it came from. The backward writes the conv-output
// gradient from those taps: the pooled gradient at each winner (zero where the pooled value is
// not positive, when the conv had a relu), zero everywhere else. So the conv output, N*OH*OW*O
// values (4x the pooled ones), is never written nor read again.
#include <algorithm>
#include <vector>

#include "ops/all_ops.h"
#include "ops/kernel.h"
#include "ops/kernels/cpu/channel_sums.h"
#include "ops/kernels/cpu/conv_direct.h"
#include "ops/kernels/cuda/launch.h"  // the NaN-propagating comparisons (plain C++)

namespace weft {
namespace {

struct PoolGeometry {
  int64_t kh, kw, sh, sw;
};

// Checks a VALID, non-overlapping (stride >= window) pool and returns its geometry.
PoolGeometry CheckPool(const std::vector<int64_t>& ksize, const std::vector<int64_t>& strides,
                       const std::string& padding) {
  const std::vector<int64_t> k = CheckPair(ksize, "ksize"), s = CheckPair(strides, "pool strides");
  WEFT_REQUIRE(padding == "VALID" && s[0] >= k[0] && s[1] >= k[1],
               "supports VALID pools whose windows do not overlap (strides >= ksize), got ksize [{}], strides [{}], "
               "padding {}", fmt::join(k, ","), fmt::join(s, ","), padding);
  return {k[0], k[1], s[0], s[1]};
}

// Inputs: input [N,IH,IW,C] (C <= 4), filter [KH,KW,C,O], bias [O]. Outputs: pooled
// [N,PH,PW,O] and argmax (int32, same shape).
template <typename T>
class FusedConv2DMaxPoolOp : public OpKernel {
 public:
  explicit FusedConv2DMaxPoolOp(const Node& node)
      : OpKernel(node),
        strides_(CheckPair(node.attr<std::vector<int64_t>>("strides"), "strides")),
        dilations_(CheckPair(node.attr<std::vector<int64_t>>("dilations"), "dilations")),
        same_(ParsePadding(node.attr<std::string>("padding"))),
        relu_(node.attr<std::string>("activation") == "Relu"),
        pool_(CheckPool(node.attr<std::vector<int64_t>>("ksize"), node.attr<std::vector<int64_t>>("pool_strides"),
                        node.attr<std::string>("pool_padding"))) {
    const std::string act = node.attr<std::string>("activation");
    WEFT_REQUIRE(act == "None" || act == "Relu", "activation must be \"None\" or \"Relu\", got \"{}\"", act);
  }

  void Compute(OpKernelContext* ctx) override {
    const Tensor& input = ctx->input(0);
    const Tensor& filter = ctx->input(1);
    const Tensor& bias = ctx->input(2);
    WEFT_REQUIRE(input.rank() == 4 && filter.rank() == 4 && input.dim(3) == filter.dim(2),
                 "input [N,H,W,C] and filter [KH,KW,C,O] must agree, got input {} and filter {}",
                 input.shape().ToString(), filter.shape().ToString());
    const int64_t O = filter.dim(3);
    WEFT_REQUIRE(bias.rank() == 1 && bias.dim(0) == O, "bias must be a vector of the {} filter out-channels, got {}", O,
                 bias.shape().ToString());
    const Conv2DGeometry g = MakeGeometry(input.dim(0), input.dim(1), input.dim(2), input.dim(3), filter.dim(0),
                                          filter.dim(1), strides_, dilations_, same_);
    WEFT_REQUIRE(UseDirect(g), "supports at most {} input channels and no pointwise filter, got input {} and filter {}",
                 kDirectMaxChannels, input.shape().ToString(), filter.shape().ToString());
    const int64_t PH = ComputeWindow(g.oh, pool_.kh, pool_.sh, 1, false).out;
    const int64_t PW = ComputeWindow(g.ow, pool_.kw, pool_.sw, 1, false).out;
    Tensor* pooled = ctx->allocate_output(0, TensorShape({g.n, PH, PW, O}));
    Tensor* argmax = ctx->allocate_output(1, TensorShape({g.n, PH, PW, O}));
    if (pooled->num_elements() == 0) return;
    const T* x = input.data<T>();
    const T* f = filter.data<T>();
    T* py = pooled->data<T>();
    int32_t* pa = argmax->data<int32_t>();
    const Epilogue<T> ep{bias.data<T>(), relu_};
    const Cols inside = InsideColumns(g, 0, g.kw);
    const PoolGeometry p = pool_;
    const int64_t row = g.ow * O;
    ParallelForCost(ctx->intra_op_pool(), g.n * PH, p.kh * row * g.kh * g.kw * g.c, [&](int64_t b, int64_t e) {
      std::vector<T> rows(p.kh * row);  // the conv rows of one pooled row
      for (int64_t r = b; r < e; ++r) {
        const int64_t n = r / PH, ph = r % PH;
        for (int64_t i = 0; i < p.kh; ++i) {
          DirectConvRow(g, x, f, ep, O, inside, n, ph * p.sh + i, rows.data() + i * row);
        }
        for (int64_t pw = 0; pw < PW; ++pw) {
          T* best = py + (r * PW + pw) * O;
          int32_t* tap = pa + (r * PW + pw) * O;
          const T* first = rows.data() + pw * p.sw * O;
          for (int64_t o = 0; o < O; ++o) {
            best[o] = first[o];
            tap[o] = 0;
          }
          for (int64_t i = 0; i < p.kh; ++i) {
            for (int64_t j = 0; j < p.kw; ++j) {
              if (i == 0 && j == 0) continue;
              const T* v = rows.data() + i * row + (pw * p.sw + j) * O;
              const int32_t t = static_cast<int32_t>(i * p.kw + j);
              for (int64_t o = 0; o < O; ++o) {  // compare-and-blend: vectorizes
                const bool greater = ReplacesExtreme(v[o], best[o], true);  // NaN wins, as MaxPool
                best[o] = greater ? v[o] : best[o];
                tap[o] = greater ? t : tap[o];
              }
            }
          }
        }
      }
    });
  }

 private:
  std::vector<int64_t> strides_, dilations_;
  bool same_, relu_;
  PoolGeometry pool_;
};

// Inputs: argmax (int32 [N,PH,PW,C]), pooled [N,PH,PW,C], grad [N,PH,PW,C]. Output: the
// gradient of the pool's input [N, input_hw[0], input_hw[1], C].
template <typename T>
class MaxPoolGradWithArgmaxOp : public OpKernel {
 public:
  explicit MaxPoolGradWithArgmaxOp(const Node& node)
      : OpKernel(node),
        pool_(CheckPool(node.attr<std::vector<int64_t>>("ksize"), node.attr<std::vector<int64_t>>("strides"),
                        "VALID")),
        hw_(CheckPair(node.attr<std::vector<int64_t>>("input_hw"), "input_hw")),
        relu_(node.attr<bool>("relu")) {}

  void Compute(OpKernelContext* ctx) override {
    const Tensor& argmax = ctx->input(0);
    const Tensor& pooled = ctx->input(1);
    const Tensor& grad = ctx->input(2);
    WEFT_REQUIRE(grad.rank() == 4 && argmax.shape() == grad.shape() && pooled.shape() == grad.shape(),
                 "argmax {}, pooled {} and grad {} must have one rank-4 shape", argmax.shape().ToString(),
                 pooled.shape().ToString(), grad.shape().ToString());
    const int64_t N = grad.dim(0), PH = grad.dim(1), PW = grad.dim(2), C = grad.dim(3), IH = hw_[0], IW = hw_[1];
    const PoolGeometry p = pool_;
    WEFT_REQUIRE(PH == ComputeWindow(IH, p.kh, p.sh, 1, false).out && PW == ComputeWindow(IW, p.kw, p.sw, 1, false).out,
                 "grad {} is not the pooled shape of an input of height/width {}x{}", grad.shape().ToString(), IH, IW);
    Tensor* out = ctx->allocate_output(0, TensorShape({N, IH, IW, C}));
    if (out->num_elements() == 0) return;
    T* dx = out->data<T>();
    const int32_t* am = argmax.data<int32_t>();
    const T* py = pooled.data<T>();
    const T* dy = grad.data<T>();
    const int64_t taps = p.kh * p.kw;
    // Every input element is written once: by its window, or zeroed when it is in none.
    const bool covered = p.sh == p.kh && p.sw == p.kw && PH * p.sh == IH && PW * p.sw == IW;
    if (PH == 0 || PW == 0) {
      std::fill(dx, dx + out->num_elements(), T(0));
      return;
    }
    ParallelForCost(ctx->intra_op_pool(), N * PH, p.sh * IW * C, [&](int64_t b, int64_t e) {
      std::vector<T> d(C);
      for (int64_t r = b; r < e; ++r) {
        const int64_t n = r / PH, ph = r % PH;
        const int64_t h0 = ph * p.sh, h1 = ph + 1 == PH ? IH : h0 + p.sh;  // the rows this task owns
        T* img = dx + n * IH * IW * C;
        if (!covered) std::fill(img + h0 * IW * C, img + h1 * IW * C, T(0));
        for (int64_t pw = 0; pw < PW; ++pw) {
          const int64_t k = (r * PW + pw) * C;
          for (int64_t c = 0; c < C; ++c) d[c] = relu_ && !(py[k + c] > T(0)) ? T(0) : dy[k + c];
          for (int64_t t = 0; t < taps; ++t) {
            T* dst = img + ((h0 + t / p.kw) * IW + pw * p.sw + t % p.kw) * C;
            const int32_t ti = static_cast<int32_t>(t);
            for (int64_t c = 0; c < C; ++c) dst[c] = am[k + c] == ti ? d[c] : T(0);
          }
        }
      }
    });
  }

 private:
  PoolGeometry pool_;
  std::vector<int64_t> hw_;
  bool relu_;
};

// Inputs: input [N,IH,IW,C], filter_sizes (int32 [4]), argmax, pooled and grad [N,PH,PW,O] of a
// _FusedConv2DMaxPool. Outputs: the filter gradient [KH,KW,C,O] and the bias gradient [O], from
// the conv-output gradient dz that _MaxPoolGradWithArgmax would write, taken one window tap at a
// time (a masked vector over O) without storing it.
template <typename T>
class ConvPoolBackpropFilterBiasOp : public OpKernel {
 public:
  explicit ConvPoolBackpropFilterBiasOp(const Node& node)
      : OpKernel(node),
        strides_(CheckPair(node.attr<std::vector<int64_t>>("strides"), "strides")),
        dilations_(CheckPair(node.attr<std::vector<int64_t>>("dilations"), "dilations")),
        same_(ParsePadding(node.attr<std::string>("padding"))),
        pool_(CheckPool(node.attr<std::vector<int64_t>>("ksize"), node.attr<std::vector<int64_t>>("pool_strides"),
                        "VALID")),
        relu_(node.attr<bool>("relu")) {}

  void Compute(OpKernelContext* ctx) override {
    const Tensor& input = ctx->input(0);
    const Tensor& sizes = ctx->input(1);
    const Tensor& argmax = ctx->input(2);
    const Tensor& pooled = ctx->input(3);
    const Tensor& grad = ctx->input(4);
    WEFT_REQUIRE(sizes.rank() == 1 && sizes.num_elements() == 4, "filter_sizes must be a vector of 4 dims, got {}",
                 sizes.DebugString());
    std::vector<int64_t> fd(4);
    for (int i = 0; i < 4; ++i) fd[i] = sizes.ElementAsInt64(i);
    WEFT_REQUIRE(input.rank() == 4 && fd[0] > 0 && fd[1] > 0 && fd[2] == input.dim(3) && fd[3] >= 0,
                 "input {} and filter_sizes [{}] must agree", input.shape().ToString(), fmt::join(fd, ","));
    const int64_t O = fd[3];
    const Conv2DGeometry g =
        MakeGeometry(input.dim(0), input.dim(1), input.dim(2), input.dim(3), fd[0], fd[1], strides_, dilations_, same_);
    const PoolGeometry p = pool_;
    const int64_t PH = ComputeWindow(g.oh, p.kh, p.sh, 1, false).out;
    const int64_t PW = ComputeWindow(g.ow, p.kw, p.sw, 1, false).out;
    const TensorShape want({g.n, PH, PW, O});
    WEFT_REQUIRE(grad.shape() == want && argmax.shape() == want && pooled.shape() == want,
                 "argmax {}, pooled {} and grad {} must have the pooled shape {}", argmax.shape().ToString(),
                 pooled.shape().ToString(), grad.shape().ToString(), want.ToString());
    Tensor* df_t = ctx->allocate_output(0, TensorShape(fd));
    Tensor* db_t = ctx->allocate_output(1, TensorShape({O}));
    const int64_t fsize = df_t->num_elements();
    T* df = df_t->data<T>();
    T* db = db_t->data<T>();
    std::fill(df, df + fsize, T(0));
    std::fill(db, db + O, T(0));
    const int64_t rows = g.n * PH;
    if (rows == 0 || PW == 0 || O == 0) return;
    const T* x = input.data<T>();
    const int32_t* am = argmax.data<int32_t>();
    const T* py = pooled.data<T>();
    const T* dy = grad.data<T>();
    // One partial sum (filter and bias) per block of pooled rows, added up in block order.
    const int64_t work = rows * PW * p.kh * p.kw * fsize;
    const int64_t blocks = PartialBlocks(rows, work);  // fixed by the shape, not the thread count
    const int64_t part = fsize + O, per = (rows + blocks - 1) / blocks;
    std::vector<T> partial((blocks - 1) * part, T(0));
    const int64_t row = g.ow * O;
    const std::vector<Cols> cols = FilterGradColumns(g);
    ctx->intra_op_pool()->ParallelFor(blocks, [&](int64_t b, int64_t e) {
      std::vector<T> dz(p.kh * row);  // dz of the conv rows of one pooled row (L1-sized)
      std::vector<T> mg(O);           // one window's gradient, relu-masked
      const bool relu = relu_;
      for (int64_t blk = b; blk < e; ++blk) {
        T* pdf = blk == 0 ? df : partial.data() + (blk - 1) * part;
        T* pdb = blk == 0 ? db : pdf + fsize;
        for (int64_t r = blk * per; r < std::min(rows, (blk + 1) * per); ++r) {
          const int64_t n = r / PH, ph = r % PH;
          std::fill(dz.begin(), dz.end(), T(0));  // gap columns stay zero
          for (int64_t pw = 0; pw < PW; ++pw) {
            const int64_t k = (r * PW + pw) * O;
            // Plain local pointers, so the loops over O vectorize.
            const T* __restrict gp = dy + k;
            const T* __restrict pp = py + k;
            const int32_t* __restrict ap = am + k;
            T* __restrict m = mg.data();
            T* __restrict bsum = pdb;
            for (int64_t o = 0; o < O; ++o) m[o] = relu && !(pp[o] > T(0)) ? T(0) : gp[o];
            for (int64_t o = 0; o < O; ++o) bsum[o] += m[o];
            for (int64_t t = 0; t < p.kh * p.kw; ++t) {
              const int32_t ti = static_cast<int32_t>(t);
              T* __restrict dst = dz.data() + (t / p.kw) * row + (pw * p.sw + t % p.kw) * O;
              for (int64_t o = 0; o < O; ++o) dst[o] = ap[o] == ti ? m[o] : T(0);
            }
          }
          for (int64_t i = 0; i < p.kh; ++i) {
            DirectFilterGradRow(g, x, dz.data() + i * row, O, cols.data(), n, ph * p.sh + i, pdf);
          }
        }
      }
    });
    for (int64_t blk = 1; blk < blocks; ++blk) {
      const T* q = partial.data() + (blk - 1) * part;
      for (int64_t j = 0; j < fsize; ++j) df[j] += q[j];
      for (int64_t o = 0; o < O; ++o) db[o] += q[fsize + o];
    }
  }

 private:
  std::vector<int64_t> strides_, dilations_;
  bool same_;
  PoolGeometry pool_;
  bool relu_;
};

}  // namespace

void RegisterConvPoolKernels(KernelRegistry& r) {
  RegisterTyped<ConvPoolBackpropFilterBiasOp, float, double>(r, "_ConvPoolBackpropFilterBias");
  RegisterTyped<FusedConv2DMaxPoolOp, float, double>(r, "_FusedConv2DMaxPool");
  RegisterTyped<MaxPoolGradWithArgmaxOp, float, double>(r, "_MaxPoolGradWithArgmax");
}

}  // namespace weft
