// The recurrent sequence ops (declared in ops/rnn.cc; CPU kernels in ops/kernels/cpu/rnn.cc): one
// node runs a whole LSTM, GRU or SimpleRNN layer over the time axis, as TF's BlockLSTM and the cuDNN
// RNN ops do, with Keras' weight layout, so a layer's weights load unchanged from Keras.
//
//   // x [batch, time, input], h0 / c0 [batch, units], kernel [input, 4 * units], ...
//   auto out = ops::LSTMSequence(s, x, h0, c0, kernel, recurrent_kernel, bias);
//   Output seq = out[0], h = out[1], c = out[2];   // [B, T, H], [B, H], [B, H]
//
// The time loop runs inside the kernel: no dataflow while_loop is involved (the while_loop form of
// an RNN is control flow's, graph/; the Keras layers do not depend on which one runs).
#pragma once

#include <string>
#include <vector>

#include "graph/scope.h"

namespace weft {

// Which cell a sequence op runs, and the gates per unit (Keras' order in the weight columns):
// SimpleRNN 1; LSTM 4 (i, f, c, o); GRU 3 (z, r, h).
enum class RnnCell { kSimple, kLSTM, kGRU };
int RnnGates(RnnCell cell);

// The activations a cell accepts: each one's derivative is a function of its output, so the
// backward pass needs only the saved outputs. Keras 3's hard_sigmoid is relu6(x + 3) / 6.
enum class RnnActivation { kTanh, kSigmoid, kRelu, kLinear, kHardSigmoid };
// "tanh", "sigmoid", "relu", "linear" (or ""), "hard_sigmoid"; else InvalidArgument naming `attr`
// and the name.
RnnActivation ParseRnnActivation(const std::string& name, const char* attr);

struct RnnDims {
  int64_t batch, time, input, units;  // -1 where unknown
};

// Checks a sequence op's inputs: x [B, T, I], h0 (and c0, LSTM) [B, H] or the empty [0] tensor
// (zeros: what a Keras layer starts from, without a Fill of the run-time batch), kernel [I, G*H],
// recurrent_kernel [H, G*H], bias [G*H] (GRU with reset_after: [2, 3*H]). Unknown dims pass;
// InvalidArgument names the input and both shapes. Used by the shape functions and the kernels.
RnnDims CheckRnnShapes(RnnCell cell, bool reset_after, const TensorShape& x, const TensorShape& h0,
                       const TensorShape* c0, const TensorShape& kernel, const TensorShape& recurrent_kernel,
                       const TensorShape& bias);

namespace ops {

struct RnnSequenceAttrs {
  std::string activation = "tanh";
  std::string recurrent_activation = "sigmoid";  // LSTM and GRU gates
  bool go_backwards = false;  // step s reads x[:, T-1-s]; outputs stay in step order (Keras)
  bool reset_after = true;    // GRU: the reset gate multiplies h @ U_h + b_h (Keras 3's default)
};

// {y [B, T, H], h [B, H], c [B, H], cs [B, T, H] (every step's cell state),
//  gates [B, T, 4H] (every step's i, f, g, o after their activations)}.
std::vector<Output> LSTMSequence(const Scope& s, Output x, Output h0, Output c0, Output kernel,
                                 Output recurrent_kernel, Output bias, const RnnSequenceAttrs& attrs = {});
// {y, h, gates [B, T, 3H] (z, r, hh after their activations), hrec [B, T, H] (reset_after:
//  h_prev @ U_h + b_rh; else (r * h_prev) @ U_h)}. bias is [2, 3H] with reset_after, else [3H].
std::vector<Output> GRUSequence(const Scope& s, Output x, Output h0, Output kernel, Output recurrent_kernel,
                                Output bias, const RnnSequenceAttrs& attrs = {});
// {y [B, T, H], h [B, H]}: h_t = activation(x_t @ kernel + h_{t-1} @ recurrent_kernel + bias).
std::vector<Output> SimpleRNNSequence(const Scope& s, Output x, Output h0, Output kernel, Output recurrent_kernel,
                                      Output bias, const RnnSequenceAttrs& attrs = {});

}  // namespace ops
}  // namespace weft
