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

// The variable's value, ready to be written in place. REQUIRES: v->mu held, value initialized.
inline Tensor& MutableVarValue(Var* v, Allocator* allocator) {
  if (v->value.buffer().use_count() > 1) v->value = v->value.Clone(allocator);
  return v->value;
}

// For an update that writes every element of the variable from its old value (elementwise, so
// element i is read before it is written): returns the old value and makes v->value writable
// without copying it first. When others share the buffer, v->value becomes a fresh buffer of the
// same shape that the caller fills from the returned old value; otherwise both are the same
// buffer and the update runs in place. REQUIRES: v->mu held, value initialized.
inline Tensor VarValueForOverwrite(Var* v, Allocator* allocator) {
  Tensor old = v->value;
  if (old.buffer().use_count() > 2) v->value = Tensor(old.dtype(), old.shape(), allocator);  // v->value + old + others
  return old;
}

}  // namespace weft
