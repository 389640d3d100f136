// CPU kernels of the recurrent sequence ops (ops/rnn.cc): the whole time loop in one kernel. The
// input projection of every step is one GEMM ([B*T, I] @ [I, G*H]) before the loop; each step then
// runs one recurrent GEMM ([B, H] @ [H, G*H]; two for a GRU without reset_after) and the fused gate
// math. The backward pass walks the steps in reverse, keeping only the gradient of h (and c) between
// steps; the weight gradients and dx are GEMMs over all steps at the end.
//
// Shape key: B = batch, T = time, I = input features, H = units, G = gates per unit. "Step s" is
// the s-th step run; it reads input time t = go_backwards ? T-1-s : s. Saved outputs (y, cs, gates,
// hrec) are indexed by step; the gradient buffers of the input projection by input time, so that
// dx and dkernel are single GEMMs against x.
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

// x[0:n] = activation(x[0:n]) with Eigen's vectorized functions (float tanh and logistic are
// packet code; the scalar loop with std::tanh / std::exp cost most of a step).
template <typename T>
void ActRow(RnnActivation a, T* x, int64_t n) {
  Eigen::Map<Eigen::Array<T, Eigen::Dynamic, 1>> v(x, n);
  switch (a) {
    case RnnActivation::kTanh: v = v.tanh(); break;
    case RnnActivation::kSigmoid: v = v.logistic(); break;
    case RnnActivation::kRelu: v = v.max(T(0)); break;
    case RnnActivation::kHardSigmoid: v = ((v + T(3)) / T(6)).max(T(0)).min(T(1)); break;
    case RnnActivation::kLinear: break;
  }
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

// c (+)= op(a) @ op(b) on the pool; op(a) [m, k], op(b) [k, n].
template <typename T>
void Gemm(ThreadPool* pool, const T* a, const T* b, T* c, int64_t m, int64_t n, int64_t k, bool ta, bool tb,
          bool acc = false) {
  if (m == 0 || n == 0) return;
  GemmProduct<T> p{a, b, c, m, n, k, ta, tb};
  p.acc = acc;
  p.RunParallel(pool);
}

// Column sums of a [rows, cols] matrix into out[cols].
template <typename T>
void ColumnSums(const T* a, int64_t rows, int64_t cols, T* out) {
  std::fill_n(out, cols, T(0));
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t j = 0; j < cols; ++j) out[j] += a[r * cols + j];
  }
}

// What every sequence kernel reads from its node: the cell, activations and direction.
struct RnnConfig {
  RnnCell cell;
  RnnActivation act, rec_act = RnnActivation::kSigmoid;
  bool backwards, reset_after = false;

  explicit RnnConfig(const Node& node) {
    const std::string& op = node.op();
    cell = op.starts_with("LSTM") ? RnnCell::kLSTM : op.starts_with("GRU") ? RnnCell::kGRU : RnnCell::kSimple;
    act = ParseRnnActivation(node.attr<std::string>("activation"), "activation");
    if (cell != RnnCell::kSimple) {
      rec_act = ParseRnnActivation(node.attr<std::string>("recurrent_activation"), "recurrent_activation");
    }
    if (cell == RnnCell::kGRU) reset_after = node.attr<bool>("reset_after");
    backwards = node.attr<bool>("go_backwards");
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

// An initial state: input i, or zeros [B, H] when it is the empty [0] tensor.
template <typename T>
std::vector<T> InitialState(const OpKernelContext* ctx, int i, int64_t n) {
  const Tensor& t = ctx->input(i);
  if (t.num_elements() == 0) return std::vector<T>(n, T(0));
  return std::vector<T>(t.data<T>(), t.data<T>() + n);
}

// xp [B*T, G*H] = x @ kernel + bias: every step's input projection, rows by input time.
template <typename T>
Scratch<T> InputProjection(ThreadPool* pool, const RnnDims& d, int64_t gh, const T* x, const T* kernel,
                           const T* bias, ScratchPool<T>* scratch) {
  const int64_t rows = d.batch * d.time;
  Scratch<T> xp(rows * gh, scratch);
  for (int64_t r = 0; r < rows; ++r) std::copy_n(bias, gh, xp.data() + r * gh);
  if (d.input > 0) Gemm(pool, x, kernel, xp.data(), rows, gh, d.input, false, false, /*acc=*/true);
  return xp;
}

// From dxp [B*T, G*H] (the gradient of the input projection, rows by input time): dx = dxp @ W^T,
// dW = x^T @ dxp, and the input bias's gradient (column sums) into dbias.
template <typename T>
void InputProjectionGrad(ThreadPool* pool, const RnnDims& d, int64_t gh, const T* x, const T* kernel,
                         const Scratch<T>& dxp, T* dx, T* dkernel, T* dbias) {
  const int64_t rows = d.batch * d.time;
  if (rows == 0) {
    std::fill_n(dkernel, d.input * gh, T(0));
  } else {
    Gemm(pool, dxp.data(), kernel, dx, rows, d.input, gh, false, true);
    Gemm(pool, x, dxp.data(), dkernel, d.input, gh, rows, true, false);
  }
  ColumnSums(dxp.data(), rows, gh, dbias);
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
    const int64_t B = d.batch, S = d.time, H = d.units, G = RnnGates(cfg_.cell), GH = G * H;
    const int w = cfg_.kernel_input();
    const T* x = ctx->input(0).data<T>();
    const T* U = ctx->input(w + 1).data<T>();
    const T* bias = ctx->input(w + 2).data<T>();
    ThreadPool* pool = ctx->intra_op_pool();
    const Scratch<T> xp = InputProjection(pool, d, GH, x, ctx->input(w).data<T>(), bias, &scratch_);
    T* y = ctx->allocate_output(0, TensorShape({B, S, H}))->data<T>();
    std::vector<T> h = InitialState<T>(ctx, 1, B * H);
    std::vector<T> z(B * GH);
    if (cfg_.cell == RnnCell::kLSTM) {
      std::vector<T> c = InitialState<T>(ctx, 2, B * H);
      T* cs = ctx->allocate_output(3, TensorShape({B, S, H}))->data<T>();
      T* gates = ctx->allocate_output(4, TensorShape({B, S, GH}))->data<T>();
      for (int64_t s = 0; s < S; ++s) {
        const int64_t t = cfg_.Time(s, S);
        Gemm(pool, h.data(), U, z.data(), B, GH, H, false, false);
        ForBatch(pool, B, GH, [&](int64_t b) {
          T* zr = z.data() + b * GH;
          const T* xr = xp.data() + (b * S + t) * GH;
          for (int64_t j = 0; j < GH; ++j) zr[j] += xr[j];
          ActRow(cfg_.rec_act, zr, 2 * H);  // i, f
          ActRow(cfg_.act, zr + 2 * H, H);  // g
          ActRow(cfg_.rec_act, zr + 3 * H, H);  // o
          std::copy_n(zr, GH, gates + (b * S + s) * GH);
          T* cb = c.data() + b * H;
          T* yr = y + (b * S + s) * H;
          for (int64_t j = 0; j < H; ++j) yr[j] = cb[j] = zr[H + j] * cb[j] + zr[j] * zr[2 * H + j];
          std::copy_n(cb, H, cs + (b * S + s) * H);
          ActRow(cfg_.act, yr, H);
          for (int64_t j = 0; j < H; ++j) h[b * H + j] = yr[j] *= zr[3 * H + j];
        });
      }
      std::copy(c.begin(), c.end(), ctx->allocate_output(2, TensorShape({B, H}))->data<T>());
    } else if (cfg_.cell == RnnCell::kGRU) {
      RunGru(ctx, d, xp, U, bias, y, h, z);
    } else {
      for (int64_t s = 0; s < S; ++s) {
        const int64_t t = cfg_.Time(s, S);
        Gemm(pool, h.data(), U, z.data(), B, H, H, false, false);
        ForBatch(pool, B, H, [&](int64_t b) {
          const T* xr = xp.data() + (b * S + t) * H;
          T* yr = y + (b * S + s) * H;
          for (int64_t j = 0; j < H; ++j) yr[j] = z[b * H + j] + xr[j];
          ActRow(cfg_.act, yr, H);
          std::copy_n(yr, H, h.data() + b * H);
        });
      }
    }
    std::copy(h.begin(), h.end(), ctx->allocate_output(1, TensorShape({B, H}))->data<T>());
  }

 private:
  void RunGru(OpKernelContext* ctx, const RnnDims& d, const Scratch<T>& xp, const T* U, const T* bias, T* y,
              std::vector<T>& h, std::vector<T>& rec) const {
    const int64_t B = d.batch, S = d.time, H = d.units, GH = 3 * H;
    ThreadPool* pool = ctx->intra_op_pool();
    T* gates = ctx->allocate_output(2, TensorShape({B, S, GH}))->data<T>();
    T* hrec = ctx->allocate_output(3, TensorShape({B, S, H}))->data<T>();
    // Without reset_after, U's z|r columns and h columns are separate products: contiguous copies.
    std::vector<T> u_zr, u_h, rh(B * H);
    if (!cfg_.reset_after) SplitGruKernel(U, H, &u_zr, &u_h);
    const T* b_rec = cfg_.reset_after ? bias + GH : nullptr;
    for (int64_t s = 0; s < S; ++s) {
      const int64_t t = cfg_.Time(s, S);
      // rec [B, 3H]: h @ U + b_rec (reset_after), else [B, 2H] h @ U_zr then [B, H] (r * h) @ U_h.
      Gemm(pool, h.data(), cfg_.reset_after ? U : u_zr.data(), rec.data(), B, cfg_.reset_after ? GH : 2 * H, H,
           false, false);
      const int64_t rec_cols = cfg_.reset_after ? GH : 2 * H;
      ForBatch(pool, B, GH, [&](int64_t b) {
        const T* rr = rec.data() + b * rec_cols;
        const T* xr = xp.data() + (b * S + t) * GH;
        T* gr = gates + (b * S + s) * GH;
        for (int64_t j = 0; j < 2 * H; ++j) gr[j] = xr[j] + rr[j] + (b_rec ? b_rec[j] : T(0));
        ActRow(cfg_.rec_act, gr, 2 * H);
        if (!cfg_.reset_after) {
          for (int64_t j = 0; j < H; ++j) rh[b * H + j] = gr[H + j] * h[b * H + j];
        }
      });
      if (!cfg_.reset_after) Gemm(pool, rh.data(), u_h.data(), rec.data(), B, H, H, false, false);
      ForBatch(pool, B, GH, [&](int64_t b) {
        const T* xr = xp.data() + (b * S + t) * GH;
        T* gr = gates + (b * S + s) * GH;
        T* hr = hrec + (b * S + s) * H;
        for (int64_t j = 0; j < H; ++j) {
          if (cfg_.reset_after) {
            hr[j] = rec[b * GH + 2 * H + j] + b_rec[2 * H + j];
            gr[2 * H + j] = xr[2 * H + j] + gr[H + j] * hr[j];
          } else {
            hr[j] = rec[b * H + j];
            gr[2 * H + j] = xr[2 * H + j] + hr[j];
          }
        }
        ActRow(cfg_.act, gr + 2 * H, H);
        for (int64_t j = 0; j < H; ++j) {
          const T zg = gr[j];
          const T hn = zg * h[b * H + j] + (T(1) - zg) * gr[2 * H + j];
          h[b * H + j] = hn;
          y[(b * S + s) * H + j] = hn;
        }
      });
    }
  }

  RnnConfig cfg_;
  mutable ScratchPool<T> scratch_;

 public:
  // U [H, 3H] -> U_zr [H, 2H] (its first 2H columns) and U_h [H, H] (the last H).
  static void SplitGruKernel(const T* U, int64_t H, std::vector<T>* u_zr, std::vector<T>* u_h) {
    u_zr->resize(H * 2 * H);
    u_h->resize(H * H);
    for (int64_t r = 0; r < H; ++r) {
      std::copy_n(U + r * 3 * H, 2 * H, u_zr->data() + r * 2 * H);
      std::copy_n(U + r * 3 * H + 2 * H, H, u_h->data() + r * H);
    }
  }
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
    if (cfg_.cell == RnnCell::kLSTM) want.insert(want.end(), {TensorShape({B, H}), TensorShape({B, S, H}), TensorShape({B, S, GH})});
    if (cfg_.cell == RnnCell::kGRU) want.insert(want.end(), {TensorShape({B, S, GH}), TensorShape({B, S, H})});
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
    // An output gradient, or null for zeros.
    auto grad = [&](int k) { return no_gradient(n_out + k) ? nullptr : ctx->input(n_in + n_out + k).data<T>(); };
    std::vector<T*> dx;
    for (int i = 0; i < n_in; ++i) dx.push_back(ctx->allocate_output(i, ctx->input(i).shape())->data<T>());
    auto in = [&](int i) { return ctx->input(i).data<T>(); };
    const int w = cfg_.kernel_input();
    const T* x = in(0);
    const std::vector<T> h0_values = InitialState<T>(ctx, 1, B * H);
    const T* h0 = h0_values.data();
    const T* W = in(w);
    const T* U = in(w + 1);
    const int64_t rows = B * S;
    ThreadPool* pool = ctx->intra_op_pool();
    Scratch<T> dxp(rows * GH, &scratch_), hp_all(rows * H, &scratch_);
    std::vector<T> dh(in(n_in + n_out + 1), in(n_in + n_out + 1) + B * H);
    std::vector<T> dzs(B * GH);
    const T* y = in(n_in);
    const T* dy = grad(0);
    // h before step s for batch row b.
    auto h_prev = [&](int64_t b, int64_t s) { return s > 0 ? y + (b * S + s - 1) * H : h0 + b * H; };
    if (cfg_.cell == RnnCell::kLSTM) {
      const std::vector<T> c0_values = InitialState<T>(ctx, 2, B * H);
      const T* c0 = c0_values.data();
      const T* cs = in(n_in + 3);
      const T* gates = in(n_in + 4);
      const T* dcs = grad(3);
      const T* dgates = grad(4);
      std::vector<T> dc(in(n_in + n_out + 2), in(n_in + n_out + 2) + B * H), ac_row(B * H);
      for (int64_t s = S - 1; s >= 0; --s) {
        const int64_t t = cfg_.Time(s, S);
        ForBatch(pool, B, GH, [&](int64_t b) {
          const int64_t row = b * S + s;
          const T* g = gates + row * GH;
          const T* dg = dgates ? dgates + row * GH : nullptr;
          const T* cp = s > 0 ? cs + (row - 1) * H : c0 + b * H;
          T* dz = dzs.data() + b * GH;
          T* acr = ac_row.data() + b * H;  // act(c) of this step
          std::copy_n(cs + row * H, H, acr);
          ActRow(cfg_.act, acr, H);
          for (int64_t j = 0; j < H; ++j) {
            const T i = g[j], f = g[H + j], gg = g[2 * H + j], o = g[3 * H + j];
            const T dht = At(dy, row * H + j) + dh[b * H + j];
            const T ac = acr[j];
            const T dct = dc[b * H + j] + At(dcs, row * H + j) + dht * o * ActGrad(cfg_.act, ac);
            dz[j] = (dct * gg + At(dg, j)) * ActGrad(cfg_.rec_act, i);
            dz[H + j] = (dct * cp[j] + At(dg, H + j)) * ActGrad(cfg_.rec_act, f);
            dz[2 * H + j] = (dct * i + At(dg, 2 * H + j)) * ActGrad(cfg_.act, gg);
            dz[3 * H + j] = (dht * ac + At(dg, 3 * H + j)) * ActGrad(cfg_.rec_act, o);
            dc[b * H + j] = dct * f;
          }
          std::copy_n(dz, GH, dxp.data() + (b * S + t) * GH);
          std::copy_n(h_prev(b, s), H, hp_all.data() + (b * S + t) * H);
        });
        Gemm(pool, dzs.data(), U, dh.data(), B, H, GH, false, true);
      }
      if (ctx->input(2).num_elements() > 0) std::copy(dc.begin(), dc.end(), dx[2]);
      Gemm(pool, hp_all.data(), dxp.data(), dx[w + 1], H, GH, rows, true, false);
      InputProjectionGrad(pool, d, GH, x, W, dxp, dx[0], dx[w], dx[w + 2]);
    } else if (cfg_.cell == RnnCell::kGRU) {
      GruGrad(ctx, d, dx, dxp, hp_all, dh, h_prev, dy, grad(2), grad(3));
    } else {
      for (int64_t s = S - 1; s >= 0; --s) {
        const int64_t t = cfg_.Time(s, S);
        ForBatch(pool, B, H, [&](int64_t b) {
          const int64_t row = b * S + s;
          T* dz = dzs.data() + b * H;
          for (int64_t j = 0; j < H; ++j) dz[j] = (At(dy, row * H + j) + dh[b * H + j]) * ActGrad(cfg_.act, y[row * H + j]);
          std::copy_n(dz, H, dxp.data() + (b * S + t) * H);
          std::copy_n(h_prev(b, s), H, hp_all.data() + (b * S + t) * H);
        });
        Gemm(pool, dzs.data(), U, dh.data(), B, H, H, false, true);
      }
      Gemm(pool, hp_all.data(), dxp.data(), dx[w + 1], H, GH, rows, true, false);
      InputProjectionGrad(pool, d, GH, x, W, dxp, dx[0], dx[w], dx[w + 2]);
    }
    if (ctx->input(1).num_elements() > 0) std::copy(dh.begin(), dh.end(), dx[1]);  // else no initial state
  }

 private:
  template <typename HPrev>
  void GruGrad(OpKernelContext* ctx, const RnnDims& d, const std::vector<T*>& dx, Scratch<T>& dxp,
               Scratch<T>& hp_all, std::vector<T>& dh, const HPrev& h_prev, const T* dy, const T* dgates,
               const T* dhrec) const {
    const int64_t B = d.batch, S = d.time, H = d.units, GH = 3 * H, rows = B * S;
    ThreadPool* pool = ctx->intra_op_pool();
    auto in = [&](int i) { return ctx->input(i).data<T>(); };
    const T* U = in(3);
    const T* gates = in(7);
    const T* hrec = in(8);
    const bool ra = cfg_.reset_after;
    // drec: the gradient of the recurrent GEMM's output, per step [B, 3H] (reset_after) or
    // [B, 2H] (z, r) plus dhv [B, H] (the h part, through U_h); rows by input time in *_all.
    const int64_t rc = ra ? GH : 2 * H;
    std::vector<T> drec(B * rc), dhp(B * H), dhv(B * H), drh(B * H), u_zr, u_h;
    Scratch<T> drec_all(rows * rc, &scratch_), dhv_all(ra ? 0 : rows * H, &scratch_),
        rh_all(ra ? 0 : rows * H, &scratch_);
    if (!ra) SequenceOp<T>::SplitGruKernel(U, H, &u_zr, &u_h);
    for (int64_t s = S - 1; s >= 0; --s) {
      const int64_t t = cfg_.Time(s, S);
      // Pass 1: everything up to the h part's pre-activation gradient.
      ForBatch(pool, B, GH, [&](int64_t b) {
        const int64_t row = b * S + s;
        const T* g = gates + row * GH;
        const T* hp = h_prev(b, s);
        T* dxr = dxp.data() + (b * S + t) * GH;
        for (int64_t j = 0; j < H; ++j) {
          const T z = g[j], hh = g[2 * H + j];
          const T dht = At(dy, row * H + j) + dh[b * H + j];
          const T dpre_h = (dht * (T(1) - z) + At(dgates, row * GH + 2 * H + j)) * ActGrad(cfg_.act, hh);
          dxr[j] = (dht * (hp[j] - hh) + At(dgates, row * GH + j)) * ActGrad(cfg_.rec_act, z);
          dxr[2 * H + j] = dpre_h;
          dhp[b * H + j] = dht * z;
          const T r = g[H + j];
          dhv[b * H + j] = (ra ? dpre_h * r : dpre_h) + At(dhrec, row * H + j);
          if (ra) dxr[H + j] = (dpre_h * hrec[row * H + j] + At(dgates, row * GH + H + j)) * ActGrad(cfg_.rec_act, r);
        }
        std::copy_n(hp, H, hp_all.data() + (b * S + t) * H);
      });
      if (!ra) Gemm(pool, dhv.data(), u_h.data(), drh.data(), B, H, H, false, true);  // d(r * hp)
      // Pass 2: the reset gate (without reset_after) and the recurrent GEMM's gradient rows.
      ForBatch(pool, B, GH, [&](int64_t b) {
        const int64_t row = b * S + s;
        const T* g = gates + row * GH;
        const T* hp = h_prev(b, s);
        T* dxr = dxp.data() + (b * S + t) * GH;
        T* dr = drec.data() + b * rc;
        for (int64_t j = 0; j < H; ++j) {
          if (!ra) {
            const T r = g[H + j];
            dxr[H + j] = (drh[b * H + j] * hp[j] + At(dgates, row * GH + H + j)) * ActGrad(cfg_.rec_act, r);
            dhp[b * H + j] += drh[b * H + j] * r;
            rh_all[(b * S + t) * H + j] = r * hp[j];
            dhv_all[(b * S + t) * H + j] = dhv[b * H + j];
          } else {
            dr[2 * H + j] = dhv[b * H + j];
          }
          dr[j] = dxr[j];
          dr[H + j] = dxr[H + j];
        }
        std::copy_n(dr, rc, drec_all.data() + (b * S + t) * rc);
      });
      // dh_prev = dhp + drec @ U^T (the z, r columns of U only, without reset_after).
      std::copy(dhp.begin(), dhp.end(), dh.begin());
      Gemm(pool, drec.data(), ra ? U : u_zr.data(), dh.data(), B, H, rc, false, true, /*acc=*/true);
    }
    // dU: hp^T @ drec (reset_after), else [hp^T @ drec_zr | (r * hp)^T @ dhv].
    T* dU = dx[3];
    T* dbias = dx[4];
    if (ra) {
      Gemm(pool, hp_all.data(), drec_all.data(), dU, H, GH, rows, true, false);
      ColumnSums(drec_all.data(), rows, GH, dbias + GH);
    } else {
      std::vector<T> du_zr(H * 2 * H, T(0)), du_h(H * H, T(0));
      if (rows > 0) {
        Gemm(pool, hp_all.data(), drec_all.data(), du_zr.data(), H, 2 * H, rows, true, false);
        Gemm(pool, rh_all.data(), dhv_all.data(), du_h.data(), H, H, rows, true, false);
      }
      for (int64_t r = 0; r < H; ++r) {
        std::copy_n(du_zr.data() + r * 2 * H, 2 * H, dU + r * GH);
        std::copy_n(du_h.data() + r * H, H, dU + r * GH + 2 * H);
      }
    }
    InputProjectionGrad(pool, d, GH, in(0), in(2), dxp, dx[0], dx[2], dbias);
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
