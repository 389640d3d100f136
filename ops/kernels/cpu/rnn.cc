// CPU kernels of the recurrent sequence ops (ops/rnn.cc): the whole time loop in one kernel. The
// input projection of every step is one GEMM ([B*T, I] @ [I, G*H]) before the loop; each step then
// runs one recurrent GEMM ([B, H] @ [H, G*H]; two for a GRU without reset_after) and the fused gate
// math. The backward pass walks the steps in reverse, keeping only the gradient of h (and c) between
// steps; the weight gradients and dx are GEMMs over all steps at the end.
//
// Shape key: B = batch, T = time, I = input features, H = units, G = gates per unit. "Step s" is
// the s-th step run; it reads input time t = go_backwards ? T-1-s : s. The saved outputs (cs,
// gates, hrec) and every scratch buffer are step-major, [S, B, .]: one step's rows are one
// contiguous block, which the recurrent GEMM reads and writes in place (batch-major rows of a step
// lie T rows apart: at batch 256 copying them in and out cost more than the gate math). x, y, dx
// and dy stay batch-major [B, T, .] as the user sees them; x is reordered to step-major once per
// call, so the input projection and its gradients stay single GEMMs.
//
// Formulas (d = gradient, ' = derivative, from the activation's output):
//   LSTM   dh = dy_s + dh_next;  dc = dc_next + dcs_s + dh * o * act'(act(c));
//          do = dh * act(c); di = dc * g; dg = dc * i; df = dc * c_prev  (+ the gates' own gradients)
//          dz = those times each gate's activation'; dh_prev = dz @ U^T; dc_prev = dc * f
//   GRU    h = z * hp + (1 - z) * hh:  dz = dh * (hp - hh); dhh = dh * (1 - z); dhp = dh * z
//          reset_after: pre_h = x_h + r * hrec: dhrec = dpre_h * r; dr = dpre_h * hrec
//          else:         pre_h = x_h + hrec, hrec = (r * hp) @ U_h: d(r * hp) = dpre_h @ U_h^T
//   Simple dz = (dy_s + dh_next) * act'(h_s); dh_prev = dz @ U^T
#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <mutex>
#include <vector>

#include "ops/all_ops.h"
#include "ops/kernel.h"
#include "ops/kernels/cpu/gemm.h"
#include "ops/rnn.h"

namespace weft {
namespace {

// dst[0:n] = op(src[0:n]) in whole packets (unaligned loads and stores; a short tail padded into
// one packet). Eigen's own assignment loop peels scalars until dst is aligned and after the last
// packet: on rows of 64 floats that start 16-byte aligned (std::vector, Scratch) a quarter of the
// elements went through the out-of-line scalar tanh (its share of the step: bench/README.md).
template <typename T, typename Op>
void PacketRowTo(const Op& op, const T* src, T* dst, int64_t n) {
  namespace ei = Eigen::internal;
  if constexpr (ei::functor_traits<Op>::PacketAccess) {
    using P = typename ei::packet_traits<T>::type;
    constexpr int64_t L = ei::unpacket_traits<P>::size;
    int64_t i = 0;
    for (; i + L <= n; i += L) ei::pstoreu(dst + i, op.packetOp(ei::ploadu<P>(src + i)));
    if (i < n) {
      alignas(64) T buf[L] = {};
      std::copy(src + i, src + n, buf);
      ei::pstore(buf, op.packetOp(ei::pload<P>(buf)));
      std::copy(buf, buf + (n - i), dst + i);
    }
  } else {
    for (int64_t i = 0; i < n; ++i) dst[i] = op(src[i]);
  }
}

// dst[0:n] = activation(src[0:n]) with Eigen's vectorized functions (float tanh and logistic are
// packet code; the scalar loop with std::tanh / std::exp cost most of a step). src may be dst.
template <typename T>
void ActRowTo(RnnActivation a, const T* src, T* dst, int64_t n) {
  Eigen::Map<const Eigen::Array<T, Eigen::Dynamic, 1>> u(src, n);
  Eigen::Map<Eigen::Array<T, Eigen::Dynamic, 1>> v(dst, n);
  switch (a) {
    case RnnActivation::kTanh: PacketRowTo(Eigen::internal::scalar_tanh_op<T>(), src, dst, n); break;
    case RnnActivation::kSigmoid: PacketRowTo(Eigen::internal::scalar_logistic_op<T>(), src, dst, n); break;
    case RnnActivation::kRelu: v = u.max(T(0)); break;
    case RnnActivation::kHardSigmoid: v = ((u + T(3)) / T(6)).max(T(0)).min(T(1)); break;
    case RnnActivation::kLinear: v = u; break;
  }
}

// x[0:n] = activation(x[0:n]).
template <typename T>
void ActRow(RnnActivation a, T* x, int64_t n) {
  ActRowTo(a, x, x, n);
}

// The derivative at the input whose activation is y.
template <typename T>
T ActGrad(RnnActivation a, T y) {
  switch (a) {
    case RnnActivation::kTanh: return T(1) - y * y;
    case RnnActivation::kSigmoid: return y * (T(1) - y);
    case RnnActivation::kRelu: return y > T(0) ? T(1) : T(0);
    case RnnActivation::kHardSigmoid: return y > T(0) && y < T(1) ? T(1) / T(6) : T(0);
    case RnnActivation::kLinear: break;
  }
  return T(1);
}

// Buffers kept across the calls of one kernel, so that a step's multi-megabyte scratch buffers are
// not fresh memory (page faults) every step. Thread-safe: concurrent steps take different buffers.
template <typename T>
class ScratchPool {
 public:
  // A buffer of at least n elements (uninitialized), and its capacity.
  std::unique_ptr<T[]> Take(int64_t n, int64_t* capacity) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      auto best = free_.end();
      for (auto it = free_.begin(); it != free_.end(); ++it) {
        if (it->first >= n && (best == free_.end() || it->first < best->first)) best = it;
      }
      if (best != free_.end()) {
        std::unique_ptr<T[]> p = std::move(best->second);
        *capacity = best->first;
        free_.erase(best);
        return p;
      }
    }
    *capacity = n;
    return std::unique_ptr<T[]>(new T[static_cast<size_t>(n)]);
  }
  void Give(std::unique_ptr<T[]> p, int64_t capacity) {
    std::lock_guard<std::mutex> lock(mu_);
    free_.emplace_back(capacity, std::move(p));
    if (free_.size() > kKeep) {  // drop the smallest
      auto smallest = std::min_element(free_.begin(), free_.end(),
                                       [](const auto& a, const auto& b) { return a.first < b.first; });
      free_.erase(smallest);
    }
  }

 private:
  static constexpr size_t kKeep = 8;  // a backward pass holds at most 6 at once
  std::mutex mu_;
  std::vector<std::pair<int64_t, std::unique_ptr<T[]>>> free_;
};

// A scratch buffer left uninitialized (std::vector would zero megabytes that are written anyway),
// from `pool` and given back to it when destroyed.
template <typename T>
class Scratch {
 public:
  Scratch(int64_t n, ScratchPool<T>* pool) : pool_(pool) { p_ = pool_->Take(n, &capacity_); }
  Scratch(Scratch&& other) noexcept = default;
  Scratch& operator=(Scratch&&) = delete;
  ~Scratch() {
    if (p_) pool_->Give(std::move(p_), capacity_);
  }
  T* data() { return p_.get(); }
  const T* data() const { return p_.get(); }
  T& operator[](int64_t i) { return p_[i]; }

 private:
  ScratchPool<T>* pool_;
  int64_t capacity_ = 0;
  std::unique_ptr<T[]> p_;
};

// p[i], or 0 for an absent gradient (null).
template <typename T>
T At(const T* p, int64_t i) {
  return p ? p[i] : T(0);
}

// The LSTM's elementwise loops, as functions: GCC uses __restrict only on parameters, and with it
// these loops vectorize (inside the step lambdas, with pointers it had to assume might alias,
// they ran one element at a time; their share of the step is in bench/README.md).
// out[j] = a[j] + b[j].
template <typename T>
void AddRow(int64_t n, const T* __restrict a, const T* __restrict b, T* __restrict out) {
  for (int64_t j = 0; j < n; ++j) out[j] = a[j] + b[j];
}

// c = f * c + i * g of one row (gates [i, f, g, o] activated, H each), into c (the running state),
// cs (the saved state) and y (before act and o).
template <typename T>
void LstmCellState(int64_t H, const T* __restrict g, T* __restrict c, T* __restrict cs, T* __restrict y) {
  for (int64_t j = 0; j < H; ++j) y[j] = cs[j] = c[j] = g[H + j] * c[j] + g[j] * g[2 * H + j];
}

// y = act(c) * o, and h = y.
template <typename T>
void LstmOutput(int64_t H, const T* __restrict o, T* __restrict y, T* __restrict h) {
  for (int64_t j = 0; j < H; ++j) h[j] = y[j] *= o[j];
}

// One row of the LSTM's backward gate math (the formulas at the top of this file): gt the saved
// gates [i, f, g, o], dg their own gradients, cp the previous c, dy and dcs the gradients of this
// step's y and saved c, ac = act(c); updates dc (to dc_prev) and writes dz [4H].
template <typename T, typename ActGradFn, typename RecGradFn>
void LstmRowGrad(int64_t H, const T* __restrict gt, const T* __restrict dg, const T* __restrict cp,
                 const T* __restrict dy, const T* __restrict dcs, const T* __restrict ac, const T* __restrict dh,
                 T* __restrict dc, T* __restrict dz, ActGradFn act_grad, RecGradFn rec_grad) {
  for (int64_t j = 0; j < H; ++j) {
    const T ig = gt[j], f = gt[H + j], gg = gt[2 * H + j], o = gt[3 * H + j];
    const T dht = dy[j] + dh[j];
    const T dct = dc[j] + dcs[j] + dht * o * act_grad(ac[j]);
    dz[j] = (dct * gg + dg[j]) * rec_grad(ig);
    dz[H + j] = (dct * cp[j] + dg[H + j]) * rec_grad(f);
    dz[2 * H + j] = (dct * ig + dg[2 * H + j]) * act_grad(gg);
    dz[3 * H + j] = (dht * ac[j] + dg[3 * H + j]) * rec_grad(o);
    dc[j] = dct * f;
  }
}

// c (+)= op(a) @ op(b) on the pool; op(a) [m, k], op(b) [k, n].
template <typename T>
void Gemm(ThreadPool* pool, const T* a, const T* b, T* c, int64_t m, int64_t n, int64_t k, bool ta, bool tb,
          bool acc = false) {
  if (m == 0 || n == 0) return;
  GemmProduct<T> p{a, b, c, m, n, k, ta, tb};
  p.acc = acc;
  p.RunParallel(pool);
}

// out[cols] += the column sums of a [rows, cols] matrix.
template <typename T>
void AddColumnSums(const T* a, int64_t rows, int64_t cols, T* out) {
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t j = 0; j < cols; ++j) out[j] += a[r * cols + j];
  }
}

// What every sequence kernel reads from its node: the cell, activations and direction.
struct RnnConfig {
  RnnCell cell;
  RnnActivation act, rec_act = RnnActivation::kSigmoid;
  bool backwards, reset_after = false;
  int64_t chunk_steps = 0;

  explicit RnnConfig(const Node& node) {
    const std::string& op = node.op();
    cell = op.starts_with("LSTM") ? RnnCell::kLSTM : op.starts_with("GRU") ? RnnCell::kGRU : RnnCell::kSimple;
    act = ParseRnnActivation(node.attr<std::string>("activation"), "activation");
    if (cell != RnnCell::kSimple) {
      rec_act = ParseRnnActivation(node.attr<std::string>("recurrent_activation"), "recurrent_activation");
    }
    if (cell == RnnCell::kGRU) reset_after = node.attr<bool>("reset_after");
    backwards = node.attr<bool>("go_backwards");
    chunk_steps = node.attr<int64_t>("chunk_steps");
    WEFT_REQUIRE(chunk_steps >= 0, "chunk_steps must be >= 0 (0: automatic), got {}", chunk_steps);
  }
  int kernel_input() const { return cell == RnnCell::kLSTM ? 3 : 2; }
  // The input time step s reads.
  int64_t Time(int64_t s, int64_t steps) const { return backwards ? steps - 1 - s : s; }
  RnnDims Check(const OpKernelContext* ctx) const {
    const int w = kernel_input();
    const TensorShape c0 = cell == RnnCell::kLSTM ? ctx->input(2).shape() : TensorShape();
    const RnnDims d = CheckRnnShapes(cell, reset_after, ctx->input(0).shape(), ctx->input(1).shape(),
                                     cell == RnnCell::kLSTM ? &c0 : nullptr, ctx->input(w).shape(),
                                     ctx->input(w + 1).shape(), ctx->input(w + 2).shape());
    return d;
  }
};

// A block of batch rows [b0, b0 + n): the unit of parallel work. A recurrence couples the steps of
// one row, never two rows, so each block runs its whole time loop on one thread with no hand-off
// per step; a step's GEMMs are too small to gain from splitting (lstm_text: bench/README.md).
struct Rows {
  int64_t b0, n;
};

// Rows per block, from the batch size alone and never the thread count: each block sums its own
// weight gradients, and the blocks' sums are added in block order, so the results are the same
// bits on any number of threads.
inline int64_t BlockRows(int64_t batch) { return batch >= 256 ? 64 : 32; }

// Runs fn(rows, pool) for every block of the batch, the blocks spread over the pool's threads. A
// batch of one block runs on the calling thread with the pool given to fn (its GEMMs may split).
void ForBlocks(ThreadPool* pool, int64_t batch, const std::function<void(Rows, ThreadPool*)>& fn) {
  const int64_t per = BlockRows(batch);
  const int64_t blocks = (batch + per - 1) / per;
  if (blocks <= 1) return fn(Rows{0, batch}, pool);
  auto run = [&](int64_t lo, int64_t hi) {
    for (int64_t i = lo; i < hi; ++i) fn(Rows{i * per, std::min(per, batch - i * per)}, nullptr);
  };
  if (pool == nullptr || pool->num_threads() <= 1) return run(0, blocks);
  pool->ParallelFor(blocks, run);
}

// out [k*n, cols]: the rows of x [B, T, cols] of steps [s0, s0+k) and batch rows r, step-major
// (row (s-s0)*n + i is x[r.b0 + i, t(s)]).
template <typename T>
void ToStepMajor(const RnnConfig& cfg, const RnnDims& d, Rows r, const T* x, int64_t cols, int64_t s0, int64_t k,
                 T* out) {
  // Row by row: a row's steps are neighbours in x (read in order), the chunk's rows in cache.
  for (int64_t i = 0; i < r.n; ++i) {
    for (int64_t s = s0; s < s0 + k; ++s) {
      std::copy_n(x + ((r.b0 + i) * d.time + cfg.Time(s, d.time)) * cols, cols, out + ((s - s0) * r.n + i) * cols);
    }
  }
}

// The inverse: those rows of x [B, T, cols] from step-major rows.
template <typename T>
void FromStepMajor(const RnnConfig& cfg, const RnnDims& d, Rows r, const T* in, int64_t cols, int64_t s0, int64_t k,
                   T* x) {
  for (int64_t i = 0; i < r.n; ++i) {
    for (int64_t s = s0; s < s0 + k; ++s) {
      std::copy_n(in + ((s - s0) * r.n + i) * cols, cols, x + ((r.b0 + i) * d.time + cfg.Time(s, d.time)) * cols);
    }
  }
}

// The kernels run the steps in chunks of this many: the forward pass projects a chunk's inputs
// just before its steps, and the backward pass folds a chunk's per-step gradients into the weight
// gradients while they are still in cache, so no [S*B, G*H] buffer makes a round trip through
// memory. About 256 KiB of gate values a chunk, at least one step; the node's chunk_steps attr,
// when positive, sets it instead.
template <typename T>
int64_t ChunkSteps(const RnnDims& d, Rows r, int64_t gh, int64_t chunk_steps) {
  constexpr int64_t kChunkBytes = int64_t{256} << 10;
  const int64_t step_bytes = std::max<int64_t>(1, r.n * gh * static_cast<int64_t>(sizeof(T)));
  const int64_t k = chunk_steps > 0 ? chunk_steps : kChunkBytes / step_bytes;
  return std::clamp<int64_t>(k, 1, std::max<int64_t>(1, d.time));
}

// xp [k*n, G*H] = x_t @ kernel for steps [s0, s0+k) and batch rows r, step-major (no bias: the
// steps add it).
template <typename T>
void InputProjection(ThreadPool* pool, const RnnConfig& cfg, const RnnDims& d, Rows r, int64_t gh, const T* x,
                     const T* kernel, int64_t s0, int64_t k, T* xp, ScratchPool<T>* scratch) {
  const int64_t rows = r.n * k;
  if (d.input == 0 || rows == 0) {
    std::fill_n(xp, rows * gh, T(0));
    return;
  }
  Scratch<T> xs(rows * d.input, scratch);
  ToStepMajor(cfg, d, r, x, d.input, s0, k, xs.data());
  Gemm(pool, xs.data(), kernel, xp, rows, gh, d.input, false, false);
}

// The gradients of the input projection for batch rows r, a chunk of steps at a time: dx = dxp @
// W^T (the rows' part of dx), dW += x^T @ dxp and dbias += the column sums of dxp, into dW and
// dbias of this block (zeroed here). Add must then cover every step once.
template <typename T>
class InputProjectionGrad {
 public:
  InputProjectionGrad(ThreadPool* pool, const RnnConfig& cfg, const RnnDims& d, Rows r, int64_t gh, const T* x,
                      const T* kernel, T* dx, T* dkernel, T* dbias, ScratchPool<T>* scratch)
      : pool_(pool), cfg_(cfg), d_(d), r_(r), gh_(gh), x_(x), kernel_(kernel), dx_(dx), dkernel_(dkernel),
        dbias_(dbias), scratch_(scratch) {
    std::fill_n(dkernel, d.input * gh, T(0));
    std::fill_n(dbias, gh, T(0));
  }

  // Folds in steps [s0, s0+k), whose pre-activation gradients are dxp [k*n, G*H] (step-major).
  void Add(int64_t s0, int64_t k, const T* dxp) {
    const int64_t rows = r_.n * k;
    if (rows == 0) return;
    if (d_.input > 0) {
      Scratch<T> xs(rows * d_.input, scratch_), dxs(rows * d_.input, scratch_);
      ToStepMajor(cfg_, d_, r_, x_, d_.input, s0, k, xs.data());
      Gemm(pool_, dxp, kernel_, dxs.data(), rows, d_.input, gh_, false, true);
      FromStepMajor(cfg_, d_, r_, dxs.data(), d_.input, s0, k, dx_);
      Gemm(pool_, xs.data(), dxp, dkernel_, d_.input, gh_, rows, true, false, /*acc=*/true);
    }
    AddColumnSums(dxp, rows, gh_, dbias_);
  }

 private:
  ThreadPool* pool_;
  const RnnConfig& cfg_;
  const RnnDims d_;
  const Rows r_;
  const int64_t gh_;
  const T* x_;
  const T* kernel_;
  T *dx_, *dkernel_, *dbias_;
  ScratchPool<T>* scratch_;
};

// hp [k*n, H], step-major: the h each of steps [s0, s0+k) of rows r started from (y of the step
// before, or h0 [n, H] at step 0). Row by row, so that y [B, S, H] is read in order.
template <typename T>
void PrevStates(const RnnDims& d, Rows r, int64_t s0, int64_t k, const T* y, const T* h0, T* hp) {
  const int64_t S = d.time, H = d.units;
  for (int64_t i = 0; i < r.n; ++i) {
    for (int64_t s = s0; s < s0 + k; ++s) {
      const T* src = s > 0 ? y + ((r.b0 + i) * S + s - 1) * H : h0 + i * H;
      std::copy_n(src, H, hp + ((s - s0) * r.n + i) * H);
    }
  }
}

// Rows r of an initial state [B, H] (input i), or zeros when it is the empty [0] tensor.
template <typename T>
std::vector<T> StateRows(const OpKernelContext* ctx, int i, Rows r, int64_t H) {
  const Tensor& t = ctx->input(i);
  if (t.num_elements() == 0) return std::vector<T>(r.n * H, T(0));
  return std::vector<T>(t.data<T>() + r.b0 * H, t.data<T>() + (r.b0 + r.n) * H);
}

// U [H, 3H] -> U_zr [H, 2H] (its first 2H columns) and U_h [H, H] (the last H): a GRU without
// reset_after multiplies h by the z, r columns and (r * h) by the h columns separately.
template <typename T>
void SplitGruKernel(const T* U, int64_t H, std::vector<T>* u_zr, std::vector<T>* u_h) {
  u_zr->resize(H * 2 * H);
  u_h->resize(H * H);
  for (int64_t r = 0; r < H; ++r) {
    std::copy_n(U + r * 3 * H, 2 * H, u_zr->data() + r * 2 * H);
    std::copy_n(U + r * 3 * H + 2 * H, H, u_h->data() + r * H);
  }
}

// Runs fn(b) for every batch row of a step, split over the pool when the step has at least
// kParallelStepElements gate values: a step's gate math is short, and below that a hand-off to
// the pool's threads costs about what it saves (lstm_text: bench/README.md, "Recurrent layers").
constexpr int64_t kParallelStepElements = int64_t{1} << 16;
void ForBatch(ThreadPool* pool, int64_t batch, int64_t row_elements, const std::function<void(int64_t)>& fn) {
  if (pool == nullptr || pool->num_threads() <= 1 || batch < 2 || batch * row_elements < kParallelStepElements) {
    for (int64_t b = 0; b < batch; ++b) fn(b);
    return;
  }
  pool->ParallelFor(batch, [&](int64_t lo, int64_t hi) {
    for (int64_t b = lo; b < hi; ++b) fn(b);
  });
}

template <typename T>
class SequenceOp : public OpKernel {
 public:
  explicit SequenceOp(const Node& node) : OpKernel(node), cfg_(node) {}

  void Compute(OpKernelContext* ctx) override {
    const RnnDims d = cfg_.Check(ctx);
    const int64_t B = d.batch, S = d.time, H = d.units, GH = RnnGates(cfg_.cell) * H;
    Outputs o;
    o.y = ctx->allocate_output(0, TensorShape({B, S, H}))->data<T>();
    o.h = ctx->allocate_output(1, TensorShape({B, H}))->data<T>();
    if (cfg_.cell == RnnCell::kLSTM) {
      o.c = ctx->allocate_output(2, TensorShape({B, H}))->data<T>();
      o.cs = ctx->allocate_output(3, TensorShape({S, B, H}))->data<T>();
      o.gates = ctx->allocate_output(4, TensorShape({S, B, GH}))->data<T>();
    } else if (cfg_.cell == RnnCell::kGRU) {
      o.gates = ctx->allocate_output(2, TensorShape({S, B, GH}))->data<T>();
      o.hrec = ctx->allocate_output(3, TensorShape({S, B, H}))->data<T>();
      if (!cfg_.reset_after) SplitGruKernel(ctx->input(3).data<T>(), H, &o.u_zr, &o.u_h);
    }
    ForBlocks(ctx->intra_op_pool(), B, [&](Rows r, ThreadPool* pool) { Run(ctx, d, r, pool, o); });
  }

 private:
  // The outputs (y [B, S, H], last h and c [B, H], the saved cs, gates, hrec [S, B, .]), and a GRU
  // kernel's split U.
  struct Outputs {
    T *y = nullptr, *h = nullptr, *c = nullptr, *cs = nullptr, *gates = nullptr, *hrec = nullptr;
    std::vector<T> u_zr, u_h;
  };

  // The time loop of batch rows r. Row i of a block is batch row r.b0 + i.
  void Run(OpKernelContext* ctx, const RnnDims& d, Rows r, ThreadPool* pool, const Outputs& o) const {
    const int64_t B = d.batch, S = d.time, H = d.units, GH = RnnGates(cfg_.cell) * H, n = r.n;
    const int w = cfg_.kernel_input();
    const T* x = ctx->input(0).data<T>();
    const T* W = ctx->input(w).data<T>();
    const T* U = ctx->input(w + 1).data<T>();
    const T* bias = ctx->input(w + 2).data<T>();
    std::vector<T> h = StateRows<T>(ctx, 1, r, H);
    std::vector<T> c = cfg_.cell == RnnCell::kLSTM ? StateRows<T>(ctx, 2, r, H) : std::vector<T>();
    const int64_t K = ChunkSteps<T>(d, r, GH, cfg_.chunk_steps);
    // One chunk's input projections, and its y rows (step-major; written to y [B, S, H] row by
    // row when the chunk ends, rather than one strided row per step).
    Scratch<T> xp(K * n * GH, &scratch_), ybuf(K * n * H, &scratch_);
    // GRU: rec = h @ U (+ b_rec) [n, 3H], or [n, 2H] and then (r * h) @ U_h; rh = r * h.
    std::vector<T> rec(cfg_.cell == RnnCell::kGRU ? n * GH : 0), rh(cfg_.cell == RnnCell::kGRU ? n * H : 0);
    for (int64_t s = 0; s < S; ++s) {
      if (s % K == 0) InputProjection(pool, cfg_, d, r, GH, x, W, s, std::min(K, S - s), xp.data(), &scratch_);
      T* zs = xp.data() + (s % K) * n * GH;  // x_t @ W for this step's rows
      T* ys = ybuf.data() + (s % K) * n * H;  // this step's y, row i at ys + i * H
      if (cfg_.cell == RnnCell::kLSTM) {
        Gemm(pool, h.data(), U, zs, n, GH, H, false, false, /*acc=*/true);
        ForBatch(pool, n, GH, [&](int64_t i) {
          T* g = o.gates + (s * B + r.b0 + i) * GH;  // the saved gates, activated in place
          AddRow<T>(GH, zs + i * GH, bias, g);
          ActRow(cfg_.rec_act, g, 2 * H);  // i, f
          ActRow(cfg_.act, g + 2 * H, H);  // g
          ActRow(cfg_.rec_act, g + 3 * H, H);  // o
          T* yr = ys + i * H;
          LstmCellState<T>(H, g, c.data() + i * H, o.cs + (s * B + r.b0 + i) * H, yr);
          ActRow(cfg_.act, yr, H);
          LstmOutput<T>(H, g + 3 * H, yr, h.data() + i * H);
        });
      } else if (cfg_.cell == RnnCell::kGRU) {
        GruStep(pool, d, r, s, zs, U, bias, ys, o, h, rec, rh);
      } else {
        Gemm(pool, h.data(), U, zs, n, H, H, false, false, /*acc=*/true);
        ForBatch(pool, n, H, [&](int64_t i) {
          T* yr = ys + i * H;
          for (int64_t j = 0; j < H; ++j) yr[j] = zs[i * H + j] + bias[j];
          ActRow(cfg_.act, yr, H);
          std::copy_n(yr, H, h.data() + i * H);
        });
      }
      if (s % K == K - 1 || s == S - 1) {
        const int64_t s0 = s - s % K;
        for (int64_t i = 0; i < n; ++i) {
          for (int64_t t = s0; t <= s; ++t) std::copy_n(ybuf.data() + ((t - s0) * n + i) * H, H, o.y + ((r.b0 + i) * S + t) * H);
        }
      }
    }
    std::copy(h.begin(), h.end(), o.h + r.b0 * H);
    if (cfg_.cell == RnnCell::kLSTM) std::copy(c.begin(), c.end(), o.c + r.b0 * H);
  }

  // One GRU step of rows r; xs [n, 3H]: x_t @ W (no bias); row i's h goes to ys + i * H.
  void GruStep(ThreadPool* pool, const RnnDims& d, Rows r, int64_t s, const T* xs, const T* U, const T* bias,
               T* ys, const Outputs& o, std::vector<T>& h, std::vector<T>& rec, std::vector<T>& rh) const {
    const int64_t B = d.batch, H = d.units, GH = 3 * H, n = r.n;
    const bool ra = cfg_.reset_after;
    const T* b_rec = ra ? bias + GH : nullptr;
    const int64_t rec_cols = ra ? GH : 2 * H;
    // rec [n, 3H]: h @ U (reset_after), else [n, 2H] h @ U_zr then [n, H] (r * h) @ U_h.
    Gemm(pool, h.data(), ra ? U : o.u_zr.data(), rec.data(), n, rec_cols, H, false, false);
    ForBatch(pool, n, GH, [&](int64_t i) {
      const T* rr = rec.data() + i * rec_cols;
      const T* xr = xs + i * GH;
      T* gr = o.gates + (s * B + r.b0 + i) * GH;
      for (int64_t j = 0; j < 2 * H; ++j) gr[j] = xr[j] + bias[j] + rr[j] + (b_rec ? b_rec[j] : T(0));
      ActRow(cfg_.rec_act, gr, 2 * H);
      if (!ra) {
        for (int64_t j = 0; j < H; ++j) rh[i * H + j] = gr[H + j] * h[i * H + j];
      }
    });
    if (!ra) Gemm(pool, rh.data(), o.u_h.data(), rec.data(), n, H, H, false, false);
    ForBatch(pool, n, GH, [&](int64_t i) {
      const T* xr = xs + i * GH;
      T* gr = o.gates + (s * B + r.b0 + i) * GH;
      T* hr = o.hrec + (s * B + r.b0 + i) * H;
      for (int64_t j = 0; j < H; ++j) {
        if (ra) {
          hr[j] = rec[i * GH + 2 * H + j] + b_rec[2 * H + j];
          gr[2 * H + j] = xr[2 * H + j] + bias[2 * H + j] + gr[H + j] * hr[j];
        } else {
          hr[j] = rec[i * H + j];
          gr[2 * H + j] = xr[2 * H + j] + bias[2 * H + j] + hr[j];
        }
      }
      ActRow(cfg_.act, gr + 2 * H, H);
      T* yr = ys + i * H;
      for (int64_t j = 0; j < H; ++j) {
        const T zg = gr[j];
        const T hn = zg * h[i * H + j] + (T(1) - zg) * gr[2 * H + j];
        h[i * H + j] = hn;
        yr[j] = hn;
      }
    });
  }

  RnnConfig cfg_;
  mutable ScratchPool<T> scratch_;
};

// The gradient ops: inputs (forward inputs, forward outputs, output gradients), outputs one
// gradient per forward input.
template <typename T>
class SequenceGradOp : public OpKernel {
 public:
  explicit SequenceGradOp(const Node& node) : OpKernel(node), cfg_(node) {}

  void Compute(OpKernelContext* ctx) override {
    const RnnDims d = cfg_.Check(ctx);
    const int n_in = cfg_.cell == RnnCell::kLSTM ? 6 : 5;
    const int n_out = cfg_.cell == RnnCell::kLSTM ? 5 : cfg_.cell == RnnCell::kGRU ? 4 : 2;
    // Every forward output and its gradient must have the forward op's output shape.
    const int64_t B = d.batch, S = d.time, H = d.units, GH = RnnGates(cfg_.cell) * H;
    std::vector<TensorShape> want = {TensorShape({B, S, H}), TensorShape({B, H})};
    // The saved outputs are step-major.
    if (cfg_.cell == RnnCell::kLSTM) want.insert(want.end(), {TensorShape({B, H}), TensorShape({S, B, H}), TensorShape({S, B, GH})});
    if (cfg_.cell == RnnCell::kGRU) want.insert(want.end(), {TensorShape({S, B, GH}), TensorShape({S, B, H})});
    // The gradient of a sequence output (rank 3) may be an empty [0] tensor: zeros, never read.
    auto no_gradient = [&](int k) {
      return k >= n_out && want[k - n_out].rank() == 3 && ctx->input(n_in + k).shape() == TensorShape({0}) &&
             want[k - n_out].num_elements() > 0;
    };
    for (int k = 0; k < 2 * n_out; ++k) {
      const int i = n_in + k;
      WEFT_REQUIRE(ctx->input(i).shape() == want[k % n_out] || no_gradient(k),
                   "input {} ('{}') has shape {}, expected {}", i, node().def().inputs[i].name,
                   ctx->input(i).shape().ToString(), want[k % n_out].ToString());
    }
    Grads g;
    g.n_in = n_in;
    g.n_out = n_out;
    // An output gradient, or null for zeros.
    auto grad = [&](int k) { return no_gradient(n_out + k) ? nullptr : ctx->input(n_in + n_out + k).data<T>(); };
    g.dy = grad(0);
    if (cfg_.cell == RnnCell::kLSTM) g.dcs = grad(3), g.dgates = grad(4);
    if (cfg_.cell == RnnCell::kGRU) g.dgates = grad(2), g.dhrec = grad(3);
    for (int i = 0; i < n_in; ++i) g.dx.push_back(ctx->allocate_output(i, ctx->input(i).shape())->data<T>());
    if (cfg_.cell == RnnCell::kGRU && !cfg_.reset_after) SplitGruKernel(ctx->input(3).data<T>(), H, &g.u_zr, &g.u_h);
    // Each block sums its weight gradients (dW, dU, the biases: `wsize` values) into its own part of
    // `partial`; the parts are added in block order at the end.
    const int w = cfg_.kernel_input();
    const int64_t wsize = d.input * GH + H * GH + 2 * GH;
    const int64_t per = BlockRows(B), blocks = std::max<int64_t>(1, (B + per - 1) / per);
    std::vector<T> partial(blocks * wsize, T(0));
    ForBlocks(ctx->intra_op_pool(), B, [&](Rows r, ThreadPool* pool) {
      Run(ctx, d, r, pool, g, partial.data() + (r.b0 / per) * wsize);
    });
    // dW | dU | the input bias | the recurrent bias (GRU with reset_after).
    T* dW = g.dx[w];
    T* dU = g.dx[w + 1];
    T* dbias = g.dx[w + 2];
    std::fill_n(dW, d.input * GH, T(0));
    std::fill_n(dU, H * GH, T(0));
    std::fill_n(dbias, ctx->input(w + 2).num_elements(), T(0));
    const bool two_biases = cfg_.cell == RnnCell::kGRU && cfg_.reset_after;
    for (int64_t k = 0; k < blocks; ++k) {
      const T* p = partial.data() + k * wsize;
      for (int64_t j = 0; j < d.input * GH; ++j) dW[j] += p[j];
      p += d.input * GH;
      for (int64_t j = 0; j < H * GH; ++j) dU[j] += p[j];
      p += H * GH;
      for (int64_t j = 0; j < (two_biases ? 2 : 1) * GH; ++j) dbias[j] += p[j];
    }
  }

 private:
  // The output gradients (null: zeros), the input gradients (outputs), a GRU kernel's split U.
  struct Grads {
    int n_in = 0, n_out = 0;
    const T *dy = nullptr, *dcs = nullptr, *dgates = nullptr, *dhrec = nullptr;
    std::vector<T*> dx;
    std::vector<T> u_zr, u_h;
  };

  // The backward time loop of batch rows r, from the last step, a chunk at a time; `partial` gets
  // this block's dW [I, GH], dU [H, GH] and bias gradients [2, GH].
  void Run(OpKernelContext* ctx, const RnnDims& d, Rows r, ThreadPool* pool, const Grads& g, T* partial) const {
    const int64_t B = d.batch, S = d.time, H = d.units, GH = RnnGates(cfg_.cell) * H, n = r.n;
    auto in = [&](int i) { return ctx->input(i).data<T>(); };
    const int w = cfg_.kernel_input();
    const T* U = in(w + 1);
    const T* y = in(g.n_in);
    const std::vector<T> h0 = StateRows<T>(ctx, 1, r, H);
    std::vector<T> dh(in(g.n_in + g.n_out + 1) + r.b0 * H, in(g.n_in + g.n_out + 1) + (r.b0 + r.n) * H);
    T* dW = partial;
    T* dU = partial + d.input * GH;
    T* dbias = dU + H * GH;
    InputProjectionGrad<T> input_grad(pool, cfg_, d, r, GH, in(0), in(w), g.dx[0], dW, dbias, &scratch_);
    // Per chunk (ChunkSteps), step-major: dxp, the gradient of each step's pre-activations (the
    // input projection's too), and hp, the h each step started from.
    const int64_t K = ChunkSteps<T>(d, r, GH, cfg_.chunk_steps);
    Scratch<T> dxp(K * n * GH, &scratch_), hp(K * n * H, &scratch_);
    if (cfg_.cell == RnnCell::kGRU) {
      GruGrad(ctx, d, r, pool, g, K, input_grad, dxp, hp, dh, h0.data(), dU, dbias + GH);
    } else {
      std::vector<T> c0, dc, ac_row, zero_row;
      const T *cs = nullptr, *gates = nullptr;
      if (cfg_.cell == RnnCell::kLSTM) {
        c0 = StateRows<T>(ctx, 2, r, H);
        cs = in(g.n_in + 3);
        gates = in(g.n_in + 4);
        dc.assign(in(g.n_in + g.n_out + 2) + r.b0 * H, in(g.n_in + g.n_out + 2) + (r.b0 + r.n) * H);
        ac_row.resize(n * H);
        zero_row.assign(GH, T(0));
      }
      for (int64_t end = S; end > 0; end -= K) {
        const int64_t s0 = std::max<int64_t>(0, end - K);
        PrevStates(d, r, s0, end - s0, y, h0.data(), hp.data());
        for (int64_t s = end - 1; s >= s0; --s) {
          T* dzs = dxp.data() + (s - s0) * n * GH;
          if (cfg_.cell == RnnCell::kLSTM) {
            // The gate math of row i, with act' and rec_act' as functors: Keras' default (tanh,
            // sigmoid) gets inlined derivatives the compiler vectorizes, any other pair a switch.
            // An absent gradient reads zero_row (adding 0, as before).
            auto row_grad = [&](int64_t i, auto act_grad, auto rec_grad) {
              const int64_t row = s * B + r.b0 + i, yrow = (r.b0 + i) * S + s;
              T* acr = ac_row.data() + i * H;  // act(c) of this step
              ActRowTo(cfg_.act, cs + row * H, acr, H);
              LstmRowGrad<T>(H, gates + row * GH, g.dgates ? g.dgates + row * GH : zero_row.data(),
                             s > 0 ? cs + (row - B) * H : c0.data() + i * H, g.dy ? g.dy + yrow * H : zero_row.data(),
                             g.dcs ? g.dcs + row * H : zero_row.data(), acr, dh.data() + i * H, dc.data() + i * H,
                             dzs + i * GH, act_grad, rec_grad);
            };
            const bool keras_default = cfg_.act == RnnActivation::kTanh && cfg_.rec_act == RnnActivation::kSigmoid;
            ForBatch(pool, n, GH, [&](int64_t i) {
              if (keras_default) {
                row_grad(i, [](T y) { return T(1) - y * y; }, [](T y) { return y * (T(1) - y); });
              } else {
                row_grad(i, [&](T y) { return ActGrad(cfg_.act, y); }, [&](T y) { return ActGrad(cfg_.rec_act, y); });
              }
            });
          } else {
            ForBatch(pool, n, H, [&](int64_t i) {
              const int64_t yrow = (r.b0 + i) * S + s;
              T* dz = dzs + i * H;
              for (int64_t j = 0; j < H; ++j) {
                dz[j] = (At(g.dy, yrow * H + j) + dh[i * H + j]) * ActGrad(cfg_.act, y[yrow * H + j]);
              }
            });
          }
          Gemm(pool, dzs, U, dh.data(), n, H, GH, false, true);
        }
        Gemm(pool, hp.data(), dxp.data(), dU, H, GH, (end - s0) * n, true, false, /*acc=*/true);
        input_grad.Add(s0, end - s0, dxp.data());
      }
      if (cfg_.cell == RnnCell::kLSTM && ctx->input(2).num_elements() > 0) std::copy(dc.begin(), dc.end(), g.dx[2] + r.b0 * H);
    }
    if (ctx->input(1).num_elements() > 0) std::copy(dh.begin(), dh.end(), g.dx[1] + r.b0 * H);  // else no initial state
  }

  // The GRU's backward loop; dU [H, 3H] and db_rec [3H] (the recurrent bias, reset_after) are this
  // block's sums.
  void GruGrad(OpKernelContext* ctx, const RnnDims& d, Rows r, ThreadPool* pool, const Grads& g, int64_t K,
               InputProjectionGrad<T>& input_grad, Scratch<T>& dxp, Scratch<T>& hp_chunk, std::vector<T>& dh,
               const T* h0, T* dU, T* db_rec) const {
    const int64_t B = d.batch, S = d.time, H = d.units, GH = 3 * H, n = r.n;
    auto in = [&](int i) { return ctx->input(i).data<T>(); };
    const T* U = in(3);
    const T* gates = in(7);
    const T* hrec = in(8);
    const bool ra = cfg_.reset_after;
    // Per chunk, step-major: drec, the gradient of each step's recurrent GEMM output, [n, 3H]
    // (reset_after) or [n, 2H] (z, r), plus dhv [n, H] and rh = r * h_prev (the h part, through U_h).
    const int64_t rc = ra ? GH : 2 * H;
    std::vector<T> dhp(n * H), dhv(n * H), drh(n * H);
    Scratch<T> drec(K * n * rc, &scratch_), dhv_c(ra ? 0 : K * n * H, &scratch_), rh_c(ra ? 0 : K * n * H, &scratch_);
    // dU: hp^T @ drec (reset_after), else [hp^T @ drec_zr | (r * hp)^T @ dhv], summed over chunks.
    std::vector<T> du_zr(ra ? 0 : H * 2 * H, T(0)), du_h(ra ? 0 : H * H, T(0));
    for (int64_t end = S; end > 0; end -= K) {
      const int64_t s0 = std::max<int64_t>(0, end - K);
      PrevStates(d, r, s0, end - s0, in(g.n_in), h0, hp_chunk.data());
      for (int64_t s = end - 1; s >= s0; --s) {
        const int64_t l = (s - s0) * n;  // the step's first row in the chunk buffers
        // Pass 1: everything up to the h part's pre-activation gradient.
        ForBatch(pool, n, GH, [&](int64_t i) {
          const int64_t row = s * B + r.b0 + i, yrow = (r.b0 + i) * S + s;
          const T* gt = gates + row * GH;
          const T* hp = hp_chunk.data() + (l + i) * H;
          T* dxr = dxp.data() + (l + i) * GH;
          for (int64_t j = 0; j < H; ++j) {
            const T z = gt[j], hh = gt[2 * H + j];
            const T dht = At(g.dy, yrow * H + j) + dh[i * H + j];
            const T dpre_h = (dht * (T(1) - z) + At(g.dgates, row * GH + 2 * H + j)) * ActGrad(cfg_.act, hh);
            dxr[j] = (dht * (hp[j] - hh) + At(g.dgates, row * GH + j)) * ActGrad(cfg_.rec_act, z);
            dxr[2 * H + j] = dpre_h;
            dhp[i * H + j] = dht * z;
            const T rg = gt[H + j];
            dhv[i * H + j] = (ra ? dpre_h * rg : dpre_h) + At(g.dhrec, row * H + j);
            if (ra) {
              dxr[H + j] = (dpre_h * hrec[row * H + j] + At(g.dgates, row * GH + H + j)) * ActGrad(cfg_.rec_act, rg);
            }
          }
        });
        if (!ra) Gemm(pool, dhv.data(), g.u_h.data(), drh.data(), n, H, H, false, true);  // d(r * hp)
        // Pass 2: the reset gate (without reset_after) and the recurrent GEMM's gradient rows.
        ForBatch(pool, n, GH, [&](int64_t i) {
          const int64_t row = s * B + r.b0 + i;
          const T* gt = gates + row * GH;
          const T* hp = hp_chunk.data() + (l + i) * H;
          T* dxr = dxp.data() + (l + i) * GH;
          T* dr = drec.data() + (l + i) * rc;
          for (int64_t j = 0; j < H; ++j) {
            if (!ra) {
              const T rg = gt[H + j];
              dxr[H + j] = (drh[i * H + j] * hp[j] + At(g.dgates, row * GH + H + j)) * ActGrad(cfg_.rec_act, rg);
              dhp[i * H + j] += drh[i * H + j] * rg;
              rh_c[(l + i) * H + j] = rg * hp[j];
              dhv_c[(l + i) * H + j] = dhv[i * H + j];
            } else {
              dr[2 * H + j] = dhv[i * H + j];
            }
            dr[j] = dxr[j];
            dr[H + j] = dxr[H + j];
          }
        });
        // dh_prev = dhp + drec @ U^T (the z, r columns of U only, without reset_after).
        std::copy(dhp.begin(), dhp.end(), dh.begin());
        Gemm(pool, drec.data() + l * rc, ra ? U : g.u_zr.data(), dh.data(), n, H, rc, false, true, /*acc=*/true);
      }
      const int64_t rows = (end - s0) * n;
      if (ra) {
        Gemm(pool, hp_chunk.data(), drec.data(), dU, H, GH, rows, true, false, /*acc=*/true);
        AddColumnSums(drec.data(), rows, GH, db_rec);
      } else {
        Gemm(pool, hp_chunk.data(), drec.data(), du_zr.data(), H, 2 * H, rows, true, false, /*acc=*/true);
        Gemm(pool, rh_c.data(), dhv_c.data(), du_h.data(), H, H, rows, true, false, /*acc=*/true);
      }
      input_grad.Add(s0, end - s0, dxp.data());
    }
    if (!ra) {
      for (int64_t k = 0; k < H; ++k) {
        std::copy_n(du_zr.data() + k * 2 * H, 2 * H, dU + k * GH);
        std::copy_n(du_h.data() + k * H, H, dU + k * GH + 2 * H);
      }
    }
  }

  RnnConfig cfg_;
  mutable ScratchPool<T> scratch_;
};

}  // namespace

void RegisterRnnKernels(KernelRegistry& r) {
  for (const char* op : {"LSTMSequence", "GRUSequence", "SimpleRNNSequence"}) {
    RegisterTyped<SequenceOp, WEFT_FLOAT_TYPES>(r, op);
    RegisterTyped<SequenceGradOp, WEFT_FLOAT_TYPES>(r, std::string(op) + "Grad");
  }
}

}  // namespace weft
