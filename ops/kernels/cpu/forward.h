// Output buffers that reuse an input's buffer (TensorFlow's forward_input_or_allocate_output).
//
//   // y = relu(x): write over x when nobody else holds it
//   Tensor* y = ForwardInputOrAllocate(ctx, /*inputs=*/{0}, /*output=*/0, x.shape());
//
// The executor hands each consumer its inputs and lets the last one take the tensor, so a
// kernel whose input buffer has no other owner (not a variable's value, a feed, a fetch, a
// constant or another consumer's input) may overwrite it: an elementwise kernel that writes
// element i only after reading element i of that input then needs no fresh buffer, and the
// chain BiasAdd -> Relu (and ReluGrad in the backward pass) runs in one cache-warm buffer.
#pragma once

#include <initializer_list>

#include "ops/kernel.h"

namespace weft {

// True when input `input`'s buffer may become output `output` of `shape`: this kernel holds its
// only reference, and it has the output's dtype and exactly the output's size.
inline bool CanForwardInput(OpKernelContext* ctx, int input, int output, const TensorShape& shape) {
  const Tensor& in = ctx->input(input);
  return in.IsInitialized() && in.buffer() && in.buffer().use_count() == 1 &&
         in.dtype() == ctx->node().output_dtype(output) && in.shape() == shape &&
         in.buffer()->size() == in.bytes() && in.buffer()->allocator() == ctx->allocator();
}

// Output `output` with `shape`: the buffer of the first of `inputs` that CanForwardInput, else
// a fresh allocation. REQUIRES: none of `inputs` is a ref input; the kernel reads each element of
// a forwarded input before (or when) it writes the same element of the output.
inline Tensor* ForwardInputOrAllocate(OpKernelContext* ctx, std::initializer_list<int> inputs, int output,
                                      const TensorShape& shape) {
  for (int i : inputs) {
    if (CanForwardInput(ctx, i, output, shape)) {
      ctx->set_output(output, ctx->input(i));
      return &ctx->outputs()[output];
    }
  }
  return ctx->allocate_output(output, shape);
}

}  // namespace weft
