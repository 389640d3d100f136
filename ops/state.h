// Builder functions for variables (TF1-style: state lives in the session's VarStore, ops that
// update it take the Variable node's output as a ref input).
#pragma once

#include "graph/scope.h"

namespace weft::ops {

// A variable named after the scope's op name; its output reads the current value (error
// FailedPrecondition "uninitialized" until assigned).
Output Variable(const Scope& s, TensorShape shape, DType dtype);
Output Assign(const Scope& s, Output ref, Output value, bool validate_shape = true);
Output AssignAdd(const Scope& s, Output ref, Output value);
Output AssignSub(const Scope& s, Output ref, Output value);

}  // namespace weft::ops
