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

}  // namespace weft
