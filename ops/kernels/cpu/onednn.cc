// oneDNN backend of the float32 Conv2D kernels: see onednn.h for the contract.
//
// Shape key: N = batch, B = images of one chunk, C = input channels, O = output channels,
// KH/KW = filter window, OH/OW = output height/width.
#include "ops/kernels/cpu/onednn.h"

#include "weft_build_config.h"

#if WEFT_DNNL
#include <omp.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <map>
#include <mutex>
#include <new>
#include <unordered_map>
#include <vector>

#include <dnnl.hpp>
#endif

#include "core/threadpool.h"
#include "ops/kernels/cpu/channel_sums.h"

namespace weft {

#if WEFT_DNNL
namespace {

using dnnl::memory;
using Tag = memory::format_tag;

// A chunk holds about this many multiply-adds (at least one image): large enough that a
// single-threaded oneDNN call amortizes its per-call set-up, small enough that the batches of
// training give every pool thread several chunks. It depends on the shape only (determinism:
// onednn.h). Why single-threaded chunks: bench/README.md, "Deep convnets (issue 18)".
constexpr int64_t kChunkMacs = int64_t{1} << 23;

// The CPU engine: created once, immutable afterwards, safe to share between threads.
const dnnl::engine& Engine() {
  static const dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  return engine;
}

// Called before every oneDNN primitive is created or run: its OpenMP regions then run inline on the
// calling thread (weft's pool is the only source of parallelism: no second team of spinning
// threads competing for the same cores).
void SingleThreadedOmp() {
  thread_local bool set = false;
  if (!set) {
    omp_set_num_threads(1);
    set = true;
  }
}

// 64-byte aligned scratch bytes (oneDNN's kernels prefer aligned buffers).
struct Buffer {
  void* p = nullptr;
  size_t size = 0;
  Buffer() = default;
  ~Buffer() { std::free(p); }
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  // Grows (never shrinks) to at least `bytes`; the contents are not kept.
  void* Reserve(size_t bytes) {
    if (bytes > size) {
      std::free(p);
      size = (bytes + 63) / 64 * 64;
      p = std::aligned_alloc(64, size);
      if (p == nullptr) {
        size = 0;
        throw std::bad_alloc();
      }
    }
    return p;
  }
};

// Per pool thread, reused from call to call: a step calls the same shapes again and again, and a
// fresh multi-megabyte buffer per call would be fresh pages (page faults) every time.
struct ThreadScratch {
  Buffer scratchpad, weights;
  Buffer act_in, act_out;  // a Winograd chunk's activations in the kernel's blocked layout
};
ThreadScratch& Scratch() {
  thread_local ThreadScratch scratch;
  return scratch;
}

// Runs primitive p with args plus its user scratchpad, on the calling thread.
void Execute(const dnnl::primitive& p, const dnnl::primitive_desc_base& pd,
             std::unordered_map<int, memory> args) {
  SingleThreadedOmp();
  const memory::desc scratch_md = pd.scratchpad_desc();
  if (scratch_md.get_size() > 0) {
    args.emplace(DNNL_ARG_SCRATCHPAD, memory(scratch_md, Engine(), Scratch().scratchpad.Reserve(scratch_md.get_size())));
  }
  thread_local dnnl::stream stream(Engine());
  p.execute(stream, args);
  stream.wait();
}

// True for oneDNN's direct JIT kernels ("jit:avx512_core", "brgconv:avx512_core", "jit_1x1:..."),
// false for its im2col GEMM ("gemm:jit") and reference ("ref:any") ones, which are no faster than
// weft's own path.
bool IsDirect(const dnnl::primitive_desc_base& pd) {
  const std::string impl = pd.impl_info_str();
  return impl.rfind("jit", 0) == 0 || impl.rfind("brg", 0) == 0;
}

memory::dims Dims(std::initializer_list<int64_t> v) { return memory::dims(v.begin(), v.end()); }

}  // namespace

// A reorder between weft's NHWC chunk and the kernel's blocked layout (Winograd plans only).
struct DnnlReorder {
  dnnl::primitive prim;
  dnnl::primitive_desc_base pd;
};

// One chunk size's primitives for one pass (null when oneDNN has no direct kernel for it).
struct DnnlPlan {
  bool direct = false;                 // a JIT kernel (direct, or Winograd when asked for) was found
  bool winograd = false;               // the kernel reads and writes blocked activations (below)
  memory::desc src, dst, weights;      // src/dst: NHWC for the chunk; weights: the kernel's layout
  memory::desc conv_src, conv_dst;     // the kernel's activation layouts: src/dst, or blocked (Winograd)
  memory::desc plain_weights;          // HWIO
  dnnl::primitive conv;
  dnnl::primitive_desc_base conv_pd;
  dnnl::primitive weights_reorder;     // HWIO -> weights (forward, backprop-input) or back (filter)
  dnnl::primitive_desc_base reorder_pd;
  memory::desc bias;                   // [O], forward with a bias only
  // Winograd only: the pass's inputs NHWC -> blocked, its output blocked -> NHWC. Forward: src in,
  // dst out; backprop-input: dst (dy) in, src (dx) out; filter: src and dst in.
  DnnlReorder src_in, dst_in, src_out, dst_out;
};

// The forward with its epilogue: plain, + bias, relu(+ bias), relu.
// The filter gradient with the bias gradient (the sum of dy over N, OH, OW) from the same reads of dy.
enum class Pass : int64_t {
  kForward,
  kForwardBias,
  kForwardBiasRelu,
  kForwardRelu,
  kBackpropInput,
  kBackpropFilter,
  kBackpropFilterBias
};

struct DnnlConv::Impl {
  std::mutex mu;
  std::map<std::array<int64_t, 17>, std::shared_ptr<const DnnlPlan>> plans;  // guarded by mu

  // The plan for `pass` over chunks of b images of geometry g (g.n is ignored), with oneDNN's
  // direct kernels on NHWC, or its Winograd F(4x4, 3x3) kernel on blocked activations.
  std::shared_ptr<const DnnlPlan> Plan(Pass pass, const Conv2DGeometry& g, int64_t O, int64_t b,
                                       bool winograd = false) {
    const std::array<int64_t, 17> key{static_cast<int64_t>(pass), b, g.ih, g.iw, g.c, g.kh, g.kw, g.sh, g.sw,
                                      g.dh, g.dw, g.oh, g.ow, g.pad_top, g.pad_left, O, winograd ? 1 : 0};
    std::lock_guard<std::mutex> lock(mu);
    auto it = plans.find(key);
    if (it != plans.end()) return it->second;
    auto plan = std::make_shared<DnnlPlan>();
    try {
      Build(pass, g, O, b, winograd, *plan);
    } catch (const dnnl::error&) {
      plan->direct = false;  // a shape oneDNN refuses (e.g. negative right padding): weft's path
    }
    plans.emplace(key, plan);
    return plan;
  }

  static void Build(Pass pass, const Conv2DGeometry& g, int64_t O, int64_t b, bool winograd, DnnlPlan& plan) {
    // A primitive fixes its thread count when it is created (OpenMP's max threads then): one.
    SingleThreadedOmp();
    using dt = memory::data_type;
    const dnnl::engine& eng = Engine();
    plan.src = memory::desc(Dims({b, g.c, g.ih, g.iw}), dt::f32, Tag::nhwc);
    plan.dst = memory::desc(Dims({b, O, g.oh, g.ow}), dt::f32, Tag::nhwc);
    plan.plain_weights = memory::desc(Dims({O, g.c, g.kh, g.kw}), dt::f32, Tag::hwio);
    const memory::desc any_weights(Dims({O, g.c, g.kh, g.kw}), dt::f32, Tag::any);
    // Winograd refuses NHWC: its activations are in the layout it picks (nChw16c), reordered per chunk.
    const memory::desc conv_src = winograd ? memory::desc(Dims({b, g.c, g.ih, g.iw}), dt::f32, Tag::any) : plan.src;
    const memory::desc conv_dst = winograd ? memory::desc(Dims({b, O, g.oh, g.ow}), dt::f32, Tag::any) : plan.dst;
    const memory::dims strides = Dims({g.sh, g.sw});
    const memory::dims dilates = Dims({g.dh - 1, g.dw - 1});
    const memory::dims pad_l = Dims({g.pad_top, g.pad_left});
    // The right/bottom padding that makes the output OH x OW (negative when VALID drops a border).
    const memory::dims pad_r = Dims({(g.oh - 1) * g.sh + (g.kh - 1) * g.dh + 1 - g.ih - g.pad_top,
                                     (g.ow - 1) * g.sw + (g.kw - 1) * g.dw + 1 - g.iw - g.pad_left});
    dnnl::primitive_attr attr;
    attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
    const auto algo = winograd ? dnnl::algorithm::convolution_winograd : dnnl::algorithm::convolution_direct;
    const dnnl::convolution_forward::desc fwd(dnnl::prop_kind::forward_training, algo, conv_src, any_weights,
                                              conv_dst, strides, dilates, pad_l, pad_r);
    const dnnl::convolution_forward::primitive_desc fwd_pd(fwd, attr, eng);
    switch (pass) {
      case Pass::kForward:
        plan.conv_pd = fwd_pd;
        plan.weights = fwd_pd.weights_desc();
        plan.conv = dnnl::convolution_forward(fwd_pd);
        break;
      case Pass::kForwardBias:
      case Pass::kForwardBiasRelu:
      case Pass::kForwardRelu: {
        // A fresh attr: primitive_attr is a handle, a copy would share the post-ops with `attr`,
        // which the filter's reorder uses.
        dnnl::primitive_attr epilogue;
        epilogue.set_scratchpad_mode(dnnl::scratchpad_mode::user);
        if (pass != Pass::kForwardBias) {
          dnnl::post_ops relu;
          relu.append_eltwise(1.0f, dnnl::algorithm::eltwise_relu, 0.0f, 0.0f);
          epilogue.set_post_ops(relu);
        }
        const bool with_bias = pass != Pass::kForwardRelu;
        if (with_bias) plan.bias = memory::desc(Dims({O}), dt::f32, Tag::x);
        const auto desc = with_bias ? dnnl::convolution_forward::desc(dnnl::prop_kind::forward_training, algo, conv_src,
                                                                      any_weights, plan.bias, conv_dst, strides,
                                                                      dilates, pad_l, pad_r)
                                    : fwd;
        const dnnl::convolution_forward::primitive_desc pd(desc, epilogue, eng);
        plan.conv_pd = pd;
        plan.weights = pd.weights_desc();
        plan.conv = dnnl::convolution_forward(pd);
        break;
      }
      case Pass::kBackpropInput: {
        const dnnl::convolution_backward_data::desc bwd(algo, conv_src, any_weights, conv_dst, strides, dilates,
                                                        pad_l, pad_r);
        const dnnl::convolution_backward_data::primitive_desc pd(bwd, attr, eng, fwd_pd);
        plan.conv_pd = pd;
        plan.weights = pd.weights_desc();
        plan.conv = dnnl::convolution_backward_data(pd);
        break;
      }
      case Pass::kBackpropFilter:
      case Pass::kBackpropFilterBias: {
        if (pass == Pass::kBackpropFilterBias) plan.bias = memory::desc(Dims({O}), dt::f32, Tag::x);
        const auto bwd = pass == Pass::kBackpropFilterBias
                             ? dnnl::convolution_backward_weights::desc(algo, conv_src, any_weights, plan.bias,
                                                                        conv_dst, strides, dilates, pad_l, pad_r)
                             : dnnl::convolution_backward_weights::desc(algo, conv_src, any_weights, conv_dst,
                                                                        strides, dilates, pad_l, pad_r);
        const dnnl::convolution_backward_weights::primitive_desc pd(bwd, attr, eng, fwd_pd);
        plan.conv_pd = pd;
        plan.weights = pd.diff_weights_desc();
        plan.conv = dnnl::convolution_backward_weights(pd);
        break;
      }
    }
    plan.direct = IsDirect(plan.conv_pd);
    if (!plan.direct) return;
    plan.winograd = winograd;
    const bool filter = pass == Pass::kBackpropFilter || pass == Pass::kBackpropFilterBias;
    const bool backprop = pass == Pass::kBackpropInput || filter;
    plan.conv_src = pass == Pass::kBackpropInput ? plan.conv_pd.diff_src_desc() : plan.conv_pd.src_desc();
    plan.conv_dst = backprop ? plan.conv_pd.diff_dst_desc() : plan.conv_pd.dst_desc();
    if (winograd) {
      auto make = [&](const memory::desc& from, const memory::desc& to) {
        const dnnl::reorder::primitive_desc rpd(eng, from, eng, to, attr);
        return DnnlReorder{dnnl::reorder(rpd), rpd};
      };
      if (pass == Pass::kBackpropInput) {
        plan.dst_in = make(plan.dst, plan.conv_dst);
        plan.src_out = make(plan.conv_src, plan.src);
      } else {
        plan.src_in = make(plan.src, plan.conv_src);
        if (filter) {
          plan.dst_in = make(plan.dst, plan.conv_dst);
        } else {
          plan.dst_out = make(plan.conv_dst, plan.dst);
        }
      }
    }
    const bool to_plain = filter;
    const dnnl::reorder::primitive_desc rpd(eng, to_plain ? plan.weights : plan.plain_weights, eng,
                                            to_plain ? plan.plain_weights : plan.weights, attr);
    plan.reorder_pd = rpd;
    plan.weights_reorder = dnnl::reorder(rpd);
  }
};

namespace {

// The filter gradient keeps one partial per chunk, summed at the end: at most kMaxPartialBlocks
// chunks (as weft's own filter gradients, channel_sums.h), and at least this many output pixels
// per chunk, so that sum stays small beside the convolution (a chunk does pixels x filter-size
// multiply-adds, the sum one add per filter value).
constexpr int64_t kMinFilterChunkPixels = 512;

// The batch cut into chunks of `per` images (the last one shorter). A function of the shape only.
struct Chunks {
  int64_t per, count;
  Chunks(const Conv2DGeometry& g, int64_t O, int64_t max_chunks = 0, int64_t min_pixels = 0) {
    const int64_t image_macs = std::max<int64_t>(1, g.oh * g.ow * O * g.kh * g.kw * g.c);
    per = (kChunkMacs + image_macs - 1) / image_macs;
    if (max_chunks > 0) per = std::max(per, (g.n + max_chunks - 1) / max_chunks);
    if (min_pixels > 0) per = std::max(per, (min_pixels + g.oh * g.ow - 1) / std::max<int64_t>(1, g.oh * g.ow));
    per = std::clamp<int64_t>(per, 1, g.n);
    count = (g.n + per - 1) / per;
  }
  Chunks(int64_t per_, int64_t count_) : per(per_), count(count_) {}
  int64_t images(int64_t i, int64_t n) const { return std::min(per, n - i * per); }
};

// Winograd F(4x4, 3x3) pays only on whole tiles of many images: chunks of about this many images
// (bench/README.md, "Winograd"), and only where the batch makes at least two of them, so that
// two threads still share a lone convolution.
constexpr int64_t kWinogradImages = 32;

// The shapes where oneDNN's Winograd kernel, with the reorders to and from its blocked layout
// around every chunk, measured faster than the direct kernels on NHWC: 3x3 SAME convolutions of
// stride 1 on images of at most 14x14 with channel counts that are multiples of 16 (its blocking).
// A function of the shape only (determinism: onednn.h).
bool WinogradShape(const Conv2DGeometry& g, int64_t O) {
  return g.kh == 3 && g.kw == 3 && g.sh == 1 && g.sw == 1 && g.dh == 1 && g.dw == 1 && g.pad_top == 1 &&
         g.pad_left == 1 && g.oh == g.ih && g.ow == g.iw && g.oh * g.ow <= 14 * 14 && g.c % 16 == 0 &&
         O % 16 == 0 && g.c >= 32 && O >= 32 && g.n >= 2 * kWinogradImages;
}

// A pass's chunks and the plans of its full and last chunk.
struct Plans {
  Chunks chunks;
  std::shared_ptr<const DnnlPlan> full, last;
  bool ok() const { return full->direct && last->direct && full->weights == last->weights; }
};

// The Winograd plans where WinogradShape holds and oneDNN builds them (equal chunks of about
// kWinogradImages images), else the direct plans over `direct` chunks.
Plans ChoosePlans(DnnlConv::Impl& impl, Pass pass, const Conv2DGeometry& g, int64_t O, const Chunks& direct) {
  auto plans = [&](const Chunks& c, bool winograd) {
    const int64_t last_n = c.images(c.count - 1, g.n);
    auto full = impl.Plan(pass, g, O, c.per, winograd);
    auto last = last_n == c.per ? full : impl.Plan(pass, g, O, last_n, winograd);
    return Plans{c, std::move(full), std::move(last)};
  };
  if (WinogradShape(g, O)) {
    const int64_t count = (g.n + kWinogradImages - 1) / kWinogradImages;
    Plans w = plans(Chunks((g.n + count - 1) / count, count), true);
    if (w.ok()) return w;
  }
  return plans(direct, false);
}

// Runs a reorder on the calling thread.
void Reorder(const DnnlReorder& r, const memory::desc& from, const void* src, const memory::desc& to, void* dst) {
  const dnnl::engine& eng = Engine();
  Execute(r.prim, r.pd, {{DNNL_ARG_FROM, memory(from, eng, const_cast<void*>(src))}, {DNNL_ARG_TO, memory(to, eng, dst)}});
}

// Runs body(i) for every chunk i on the pool, one chunk per call. An exception in a chunk (out of
// memory, a oneDNN error) must not leave a pool thread: the first one is rethrown here, after
// every chunk has finished, so the kernel fails with it (the executor names the node).
template <typename F>
void ForChunks(ThreadPool* pool, int64_t count, const F& body) {
  std::mutex mu;
  std::exception_ptr first;
  auto guarded = [&](int64_t i) {
    try {
      body(i);
    } catch (...) {
      std::lock_guard<std::mutex> lock(mu);
      if (!first) first = std::current_exception();
    }
  };
  if (pool == nullptr || count == 1) {
    for (int64_t i = 0; i < count; ++i) guarded(i);
  } else {
    pool->ParallelFor(count, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) guarded(i);
    });
  }
  if (first) std::rethrow_exception(first);
}

}  // namespace

bool DnnlGemmBlock(const float* a, const float* b, float* c, int64_t m, int64_t n, int64_t k, bool ta, bool tb,
                   bool acc, int64_t r0, int64_t r1, int64_t c0, int64_t c1) {
  SingleThreadedOmp();
  // Row-major, as oneDNN's sgemm: op(a) rows r0.. start at a + r0 (stored [k, m]) or a + r0 * k;
  // op(b) columns c0.. at b + c0 * k (stored [n, k]) or b + c0.
  const dnnl_status_t st = dnnl_sgemm(ta ? 'T' : 'N', tb ? 'T' : 'N', r1 - r0, c1 - c0, k, 1.0f,
                                      ta ? a + r0 : a + r0 * k, ta ? m : k, tb ? b + c0 * k : b + c0, tb ? k : n,
                                      acc ? 1.0f : 0.0f, c + r0 * n + c0, n);
  return st == dnnl_success;
}

DnnlConv::DnnlConv() : impl_(std::make_unique<Impl>()) {}
DnnlConv::~DnnlConv() = default;
bool DnnlConv::Available() { return true; }

// Forward and backprop-input share their shape: a filter reordered once, then chunks that map
// an NHWC slice of `in` (B images of in_image values each) to a slice of `out`.
namespace {
bool RunWithFilter(DnnlConv::Impl& impl, Pass pass, ThreadPool* pool, const Conv2DGeometry& g, int64_t O,
                   const float* in, const float* f, float* out, const float* bias = nullptr) {
  const Plans plans = ChoosePlans(impl, pass, g, O, Chunks(g, O));
  if (!plans.ok()) return false;
  const Chunks& chunks = plans.chunks;
  const auto& full = plans.full;
  const auto& last = plans.last;
  const dnnl::engine& eng = Engine();
  // The calling thread's weights buffer holds the reordered filter for the whole call: the chunks
  // (on any thread) only read it, and never use their own thread's weights buffer.
  void* blocked = Scratch().weights.Reserve(full->weights.get_size());
  Execute(full->weights_reorder, full->reorder_pd,
          {{DNNL_ARG_FROM, memory(full->plain_weights, eng, const_cast<float*>(f))},
           {DNNL_ARG_TO, memory(full->weights, eng, blocked)}});
  const bool fwd = pass != Pass::kBackpropInput;
  const int64_t in_image = fwd ? g.ih * g.iw * g.c : g.oh * g.ow * O;
  const int64_t out_image = fwd ? g.oh * g.ow * O : g.ih * g.iw * g.c;
  ForChunks(pool, chunks.count, [&](int64_t i) {
    const DnnlPlan& p = chunks.images(i, g.n) == chunks.per ? *full : *last;
    float* src = const_cast<float*>(in) + i * chunks.per * in_image;
    float* dst = out + i * chunks.per * out_image;
    // Winograd: the chunk's input reordered into this thread's buffer, the kernel's output written
    // to another and reordered back into `out`.
    const memory::desc& in_md = fwd ? p.src : p.dst;
    const memory::desc& out_md = fwd ? p.dst : p.src;
    const memory::desc& conv_in = fwd ? p.conv_src : p.conv_dst;
    const memory::desc& conv_out = fwd ? p.conv_dst : p.conv_src;
    float* user_out = dst;
    if (p.winograd) {
      void* staged = Scratch().act_in.Reserve(conv_in.get_size());
      Reorder(fwd ? p.src_in : p.dst_in, in_md, src, conv_in, staged);
      src = static_cast<float*>(staged);
      dst = static_cast<float*>(Scratch().act_out.Reserve(conv_out.get_size()));
    }
    if (fwd) {
      std::unordered_map<int, memory> args = {{DNNL_ARG_SRC, memory(conv_in, eng, src)},
                                              {DNNL_ARG_WEIGHTS, memory(p.weights, eng, blocked)},
                                              {DNNL_ARG_DST, memory(conv_out, eng, dst)}};
      if (bias != nullptr) args.emplace(DNNL_ARG_BIAS, memory(p.bias, eng, const_cast<float*>(bias)));
      Execute(p.conv, p.conv_pd, std::move(args));
    } else {
      Execute(p.conv, p.conv_pd,
              {{DNNL_ARG_DIFF_DST, memory(conv_in, eng, src)}, {DNNL_ARG_WEIGHTS, memory(p.weights, eng, blocked)},
               {DNNL_ARG_DIFF_SRC, memory(conv_out, eng, dst)}});
    }
    if (p.winograd) Reorder(fwd ? p.dst_out : p.src_out, conv_out, dst, out_md, user_out);
  });
  return true;
}
}  // namespace

bool DnnlConv::Forward(ThreadPool* pool, const Conv2DGeometry& g, int64_t O, const float* x, const float* f,
                       float* y, const float* bias, bool relu) {
  const Pass pass = bias != nullptr ? (relu ? Pass::kForwardBiasRelu : Pass::kForwardBias)
                                    : (relu ? Pass::kForwardRelu : Pass::kForward);
  return RunWithFilter(*impl_, pass, pool, g, O, x, f, y, bias);
}

bool DnnlConv::BackpropInput(ThreadPool* pool, const Conv2DGeometry& g, int64_t O, const float* dy,
                             const float* f, float* dx) {
  return RunWithFilter(*impl_, Pass::kBackpropInput, pool, g, O, dy, f, dx);
}

bool DnnlConv::UsesWinograd(const Conv2DGeometry& g, int64_t O) {
  return ChoosePlans(*impl_, Pass::kForward, g, O, Chunks(g, O)).full->winograd;
}

bool DnnlConv::BackpropFilter(ThreadPool* pool, const Conv2DGeometry& g, int64_t O, const float* x,
                              const float* dy, float* df, float* db) {
  const Pass pass = db != nullptr ? Pass::kBackpropFilterBias : Pass::kBackpropFilter;
  const Plans plans = ChoosePlans(*impl_, pass, g, O, Chunks(g, O, kMaxPartialBlocks, kMinFilterChunkPixels));
  if (!plans.full->direct || !plans.last->direct) return false;
  const Chunks& chunks = plans.chunks;
  const auto& full = plans.full;
  const auto& last = plans.last;
  const dnnl::engine& eng = Engine();
  // Every chunk writes its partial gradient in the kernel's blocked layout (chunk i at partials +
  // i * stride); they are added in chunk order, and the sum is reordered to HWIO once. A last
  // chunk whose kernel chose another layout is reordered to it first.
  const memory::desc& blocked = full->weights;
  const int64_t size = static_cast<int64_t>(blocked.get_size() / sizeof(float));
  // Every partial 64-byte aligned: the Winograd kernel writes its gradient with aligned stores.
  const int64_t stride = (size + 15) / 16 * 16;
  Buffer partials_buffer;
  float* const partials = static_cast<float*>(partials_buffer.Reserve(sizeof(float) * chunks.count * stride));
  // A layout padded to its channel blocks (e.g. 20 channels in two 16-blocks): the kernel need not
  // write the padding, which the sum below reads; zero it all first (a no-op layout needs none).
  if (blocked.get_size() != sizeof(float) * static_cast<size_t>(g.kh * g.kw * g.c * O)) {
    std::memset(partials, 0, sizeof(float) * chunks.count * stride);
  }
  const bool same_layout = last->weights == blocked;
  // The bias gradient's partials, one [O] per chunk, summed in chunk order below.
  std::vector<float> bias_partials(db != nullptr ? static_cast<size_t>(chunks.count * O) : 0);
  ForChunks(pool, chunks.count, [&](int64_t i) {
    const DnnlPlan& p = chunks.images(i, g.n) == chunks.per ? *full : *last;
    float* mine = partials + i * stride;
    void* out = &p == full.get() || same_layout ? static_cast<void*>(mine) : Scratch().weights.Reserve(p.weights.get_size());
    void* src = const_cast<float*>(x) + i * chunks.per * g.ih * g.iw * g.c;
    void* diff_dst = const_cast<float*>(dy) + i * chunks.per * g.oh * g.ow * O;
    if (p.winograd) {  // both inputs reordered into this thread's buffers
      void* staged_src = Scratch().act_in.Reserve(p.conv_src.get_size());
      void* staged_dst = Scratch().act_out.Reserve(p.conv_dst.get_size());
      Reorder(p.src_in, p.src, src, p.conv_src, staged_src);
      Reorder(p.dst_in, p.dst, diff_dst, p.conv_dst, staged_dst);
      src = staged_src;
      diff_dst = staged_dst;
    }
    std::unordered_map<int, memory> args = {{DNNL_ARG_SRC, memory(p.conv_src, eng, src)},
                                            {DNNL_ARG_DIFF_DST, memory(p.conv_dst, eng, diff_dst)},
                                            {DNNL_ARG_DIFF_WEIGHTS, memory(p.weights, eng, out)}};
    if (db != nullptr) args.emplace(DNNL_ARG_DIFF_BIAS, memory(p.bias, eng, bias_partials.data() + i * O));
    Execute(p.conv, p.conv_pd, std::move(args));
    if (out != mine) {  // the last chunk's layout -> HWIO -> the full chunks' layout
      std::vector<float> plain(static_cast<size_t>(g.kh * g.kw * g.c * O));
      Execute(p.weights_reorder, p.reorder_pd,
              {{DNNL_ARG_FROM, memory(p.weights, eng, out)}, {DNNL_ARG_TO, memory(p.plain_weights, eng, plain.data())}});
      dnnl::primitive_attr attr;
      attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
      const dnnl::reorder::primitive_desc rpd(eng, p.plain_weights, eng, blocked, attr);
      Execute(dnnl::reorder(rpd), rpd,
              {{DNNL_ARG_FROM, memory(p.plain_weights, eng, plain.data())}, {DNNL_ARG_TO, memory(blocked, eng, mine)}});
    }
  });
  // Every element sums its partials in chunk order: the same bits whatever the split below.
  float* sum = partials;
  auto add = [&](int64_t b, int64_t e) {
    for (int64_t i = 1; i < chunks.count; ++i) {
      const float* p = partials + i * stride;
      for (int64_t j = b; j < e; ++j) sum[j] += p[j];
    }
  };
  if (chunks.count > 1) {
    if (pool != nullptr && size * chunks.count >= (int64_t{1} << 16)) {
      pool->ParallelFor(size, add);
    } else {
      add(0, size);
    }
  }
  Execute(full->weights_reorder, full->reorder_pd,
          {{DNNL_ARG_FROM, memory(blocked, eng, sum)}, {DNNL_ARG_TO, memory(full->plain_weights, eng, df)}});
  if (db != nullptr) {
    std::copy(bias_partials.begin(), bias_partials.begin() + O, db);
    for (int64_t i = 1; i < chunks.count; ++i) {
      for (int64_t o = 0; o < O; ++o) db[o] += bias_partials[i * O + o];
    }
  }
  return true;
}

#else  // no oneDNN in this build: every call leaves the work to weft's own kernels.

bool DnnlGemmBlock(const float*, const float*, float*, int64_t, int64_t, int64_t, bool, bool, bool, int64_t, int64_t,
                   int64_t, int64_t) {
  return false;
}
struct DnnlConv::Impl {};
DnnlConv::DnnlConv() = default;
DnnlConv::~DnnlConv() = default;
bool DnnlConv::Available() { return false; }
bool DnnlConv::UsesWinograd(const Conv2DGeometry&, int64_t) { return false; }
bool DnnlConv::Forward(ThreadPool*, const Conv2DGeometry&, int64_t, const float*, const float*, float*, const float*,
                       bool) {
  return false;
}
bool DnnlConv::BackpropInput(ThreadPool*, const Conv2DGeometry&, int64_t, const float*, const float*, float*) {
  return false;
}
bool DnnlConv::BackpropFilter(ThreadPool*, const Conv2DGeometry&, int64_t, const float*, const float*, float*,
                              float*) {
  return false;
}

#endif

}  // namespace weft
