// oneDNN (Debian's libdnnl, when the build found it) as a backend of the float32 Conv2D kernels
// and of the float32 GEMM block (MatMul, BatchMatMul, the im2col convolutions).
//
//   DnnlConv dnnl;                                   // one per kernel: it caches its primitives
//   if (!dnnl.Forward(pool, g, O, x, f, y)) { ... weft's own im2col / direct path ... }
//   if (!DnnlGemmBlock(a, b, c, m, n, k, ta, tb, acc, r0, r1, c0, c1)) GemmBlock<float>(...);
//
// Shape key as in conv.cc: NHWC input [N,IH,IW,C], HWIO filter [KH,KW,C,O], NHWC output
// [N,OH,OW,O]. Activations stay in weft's NHWC layout (oneDNN's direct JIT kernels read and write
// it); only the filter is reordered to oneDNN's blocked layout, and the filter gradient back.
//
// Why a backend: for the channel counts deep nets have (16-512), oneDNN's register-blocked direct
// kernels run several times faster than im2col + GEMM (bench/README.md, "Kernels"). A pass runs
// here only when oneDNN offers a JIT direct kernel for the shape; where it would fall back to its
// own im2col GEMM or reference code, the call returns false and the caller runs weft's path.
//
// Threads and determinism: weft, not oneDNN's OpenMP, owns the parallelism. The batch is cut into
// chunks of a fixed number of images that depends on the shape only, never on the thread count;
// each chunk is one single-threaded oneDNN call on the intra-op pool. The filter gradient sums the
// chunks' partial gradients in chunk order, so every result is the same bits at any thread count.
//
// Thread safety: the methods may be called concurrently (the plan cache is locked; executions
// use their own scratch memory).
#pragma once

#include <cstdint>
#include <memory>

#include "ops/kernels/cpu/nn_kernels.h"

namespace weft {

class ThreadPool;

// gemm_block.h's block, c[r0:r1, c0:c1] (+)= op(a)[r0:r1, :] @ op(b)[:, c0:c1], with oneDNN's JIT
// sgemm on the calling thread; false (nothing written) in a build without oneDNN. Same layouts
// and REQUIRES as GemmBlock (gemm_block.h). Thread-safe.
bool DnnlGemmBlock(const float* a, const float* b, float* c, int64_t m, int64_t n, int64_t k, bool ta, bool tb,
                   bool acc, int64_t r0, int64_t r1, int64_t c0, int64_t c1);

class DnnlConv {
 public:
  DnnlConv();
  ~DnnlConv();
  DnnlConv(const DnnlConv&) = delete;
  DnnlConv& operator=(const DnnlConv&) = delete;

  // True when this libweft was built with oneDNN.
  static bool Available();

  // Each returns true when it computed the whole output, false (having written nothing) when
  // this build has no oneDNN or oneDNN has no direct kernel for the shape. Shapes are checked by
  // the caller; O > 0 and g.n * g.oh * g.ow > 0.
  // y [N,OH,OW,O] = conv(x, f), then + bias[o] when bias is given, then max(., 0) when relu
  // (_FusedConv2D's epilogue, done inside oneDNN's kernel as it writes y).
  bool Forward(ThreadPool* pool, const Conv2DGeometry& g, int64_t O, const float* x, const float* f, float* y,
               const float* bias = nullptr, bool relu = false);
  // dx [N,IH,IW,C] = the input gradient for dy [N,OH,OW,O].
  bool BackpropInput(ThreadPool* pool, const Conv2DGeometry& g, int64_t O, const float* dy, const float* f,
                     float* dx);
  // df [KH,KW,C,O] = the filter gradient for dy; when db is given, also db [O] = the sum of dy over
  // N, OH and OW (BiasAddGrad's result, from the kernel's own reads of dy), per chunk and then in
  // chunk order.
  bool BackpropFilter(ThreadPool* pool, const Conv2DGeometry& g, int64_t O, const float* x, const float* dy,
                      float* df, float* db = nullptr);

  // True when the convolutions of this shape run on oneDNN's Winograd F(4x4, 3x3) kernel (its
  // blocked layout inside each chunk, NHWC outside): 3x3 stride-1 SAME convolutions of small
  // images with many channels in large batches (onednn.cc, WinogradShape). Results differ from
  // the direct kernels' within float32 rounding, and are the same bits at any thread count.
  bool UsesWinograd(const Conv2DGeometry& g, int64_t O);

  struct Impl;  // the plan cache (onednn.cc)

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace weft
