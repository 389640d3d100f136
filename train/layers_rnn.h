// Keras' recurrent layers over (batch, time, features) sequences: LSTM, GRU, SimpleRNN, and the
// wrappers Bidirectional and TimeDistributed.
//
//   Sym x = Input({40, 16});                                   // 40 steps of 16 features
//   Sym h = LSTM(64, {.return_sequences = true})(x);           // (None, 40, 64)
//   Sym y = Bidirectional(GRU(32))(h);                         // (None, 64): both directions' last h
//   std::vector<Sym> e = LSTM(16, {.return_state = true}).Outputs({x});   // {output, h, c}
//   Sym d = LSTM(16, {.return_sequences = true})->Outputs({x, e[1], e[2]})[0];  // from those states
//
// Each layer runs its whole time loop in one fused sequence op (ops/rnn.h: LSTMSequence,
// GRUSequence, SimpleRNNSequence, with Keras' weight layout: kernel (features, gates * units),
// recurrent_kernel (units, gates * units), bias), so Keras' weights load unchanged. The
// while_loop form of a recurrent net is control flow's (graph/); these layers do not depend on it.
#pragma once

#include "train/layer.h"

namespace weft::train {

struct RNNOptions {
  std::string activation = "tanh";
  std::string recurrent_activation = "sigmoid";  // LSTM and GRU
  bool use_bias = true;
  Initializer kernel_initializer = GlorotUniform();
  Initializer recurrent_initializer = Orthogonal();
  Initializer bias_initializer = Zeros();
  bool unit_forget_bias = true;  // LSTM: the forget gate's bias starts at 1 (bias_initializer elsewhere)
  double dropout = 0.0;          // of the inputs, one mask per (example, feature) for all steps (training)
  double recurrent_dropout = 0.0;  // not supported: must be 0
  bool return_sequences = false;   // every step's output (batch, time, units), else the last (batch, units)
  // Keras' return_state: the call has the final states as more outputs, [output, h, c] (LSTM) or
  // [output, h] (GRU, SimpleRNN); take them with Layer::Outputs. Gradients flow through them.
  bool return_state = false;
  // Keras' zero_output_for_mask: with a mask, a masked step's sequence output is 0 (else the
  // previous step's). Bidirectional sets it on its layers when they return sequences, as Keras.
  bool zero_output_for_mask = false;
  bool go_backwards = false;       // run from the last step; return_sequences then gives them in run order
  bool time_major = false;         // inputs and sequence outputs (time, batch, features)
  bool reset_after = true;         // GRU: Keras 3's (and cuDNN's) default; bias (2, 3 * units)
  int64_t seed = 0;                // of the dropout mask
};

// A call takes the sequence, optionally followed by Keras' initial_state: {x, h0, c0} (LSTM) or
// {x, h0} (GRU, SimpleRNN), each state (batch, units); without them the state starts at zeros.
LayerPtr LSTM(int64_t units, RNNOptions options = {});
LayerPtr GRU(int64_t units, RNNOptions options = {});
LayerPtr SimpleRNN(int64_t units, RNNOptions options = {});

// Keras' cells: a call whose input is one step (batch, features) rather than a sequence is the
// cell's step, {x, h, (c)} -> {output, new h, (new c)} (LSTMCell, GRUCell, SimpleRNNCell called by
// themselves), with the layer's weights: a cell and RNN(cell) are one layer, so they share them.
// Keras' RNN(cell, ...) sets the sequence options (return_sequences, return_state, go_backwards,
// time_major, zero_output_for_mask, taken from `sequence`) of the cell's layer; the others stay.
// InvalidArgument for a layer that is not an LSTM, GRU or SimpleRNN.
void SetRnnSequenceOptions(Layer& layer, const RNNOptions& sequence);

// Runs `layer` (an LSTM, GRU or SimpleRNN) forwards and a copy of it with go_backwards flipped
// (or `backward_layer`) over the same inputs; merge_mode "concat" (default), "sum", "mul" or
// "ave" joins the two outputs (the backward one put back in time order when it is a sequence).
// Weights: the forward layer's, then the backward layer's (Keras' order). With return_state the
// outputs are [merged, forward states..., backward states...] (Keras'); initial states, when
// given, follow the sequence in the same order (forward's, then backward's).
LayerPtr Bidirectional(LayerPtr layer, std::string merge_mode = "concat", LayerPtr backward_layer = {});

// Applies `layer` to every time step of (batch, time, ...) inputs, with one set of weights:
// the steps are folded into the batch and unfolded after.
LayerPtr TimeDistributed(LayerPtr layer);

}  // namespace weft::train
