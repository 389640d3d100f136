// In-place updates of variables (state and optimizer kernels), copy-on-write.
//
// A Variable read hands out its storage's buffer (to the forward pass's MatMul, to a fetch).
// An update writes in place only when the variable owns its buffer alone; otherwise it first
// moves the variable to a private copy, so whoever holds the old buffer keeps the value it
// read. This keeps training deterministic: the update of a layer's weights may run while the
// backward pass still multiplies by them.
#pragma once

#include "ops/kernel.h"

namespace weft {

// References to v's buffer held by the kernel's own ref input `ref_input` (the Variable op hands
// its value to ref consumers too): not other readers, so they do not force a copy.
inline long OwnRefs(const OpKernelContext* ctx, int ref_input, const Var* v) {
  return ctx->input(ref_input).SharesBufferWith(v->value) ? 1 : 0;
}

// Assign's shape checks (with validate_shape): the value must have the variable's current shape
// (once initialized) and fit the shape the variable was declared with. REQUIRES v->mu.
inline void CheckAssignShape(const Node& node, const Var* v, const Tensor& value) {
  if (v->value.IsInitialized()) {
    WEFT_REQUIRE(v->value.shape() == value.shape(), "assigning shape {} to variable '{}' of shape {}",
                 value.shape().ToString(), node.input(0).node->name(), v->value.shape().ToString());
  }
  const TensorShape& declared = node.input(0).shape();
  WEFT_REQUIRE(declared.IsCompatibleWith(value.shape()), "assigning shape {} to variable '{}' declared {}",
               value.shape().ToString(), node.input(0).node->name(), declared.ToString());
}

// The variable's value, ready to be written in place (copied first when others share it;
// `own_refs` as OwnRefs). REQUIRES: v->mu held, value initialized.
inline Tensor& MutableVarValue(Var* v, Allocator* allocator, long own_refs = 0) {
  if (v->value.buffer().use_count() > 1 + own_refs) v->value = v->value.Clone(allocator);
  return v->value;
}

// For an update that writes every element of the variable from its old value (elementwise, so
// element i is read before it is written): returns the old value and makes v->value writable
// without copying it first. When others share the buffer, v->value becomes a fresh buffer of the
// same shape that the caller fills from the returned old value; otherwise both are the same
// buffer and the update runs in place. REQUIRES: v->mu held, value initialized.
inline Tensor VarValueForOverwrite(Var* v, Allocator* allocator, long own_refs = 0) {
  Tensor old = v->value;
  // v->value + old + the kernel's own ref input + others
  if (old.buffer().use_count() > 2 + own_refs) v->value = Tensor(old.dtype(), old.shape(), allocator);
  return old;
}

}  // namespace weft
