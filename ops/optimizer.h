// Builder functions for optimizer updates, applied in place to variables (ref inputs).
#pragma once

#include "graph/scope.h"

namespace weft::ops {

// var -= lr * grad
Output ApplyGradientDescent(const Scope& s, Output var, Output lr, Output grad);
// accum = momentum * accum + grad; var -= lr * accum (nesterov: var -= lr * (grad + momentum * accum))
Output ApplyMomentum(const Scope& s, Output var, Output accum, Output lr, Output grad, Output momentum,
                     bool use_nesterov = false);
// Adam with bias correction through beta1_power / beta2_power (the caller's running powers).
Output ApplyAdam(const Scope& s, Output var, Output m, Output v, Output beta1_power, Output beta2_power, Output lr,
                 Output beta1, Output beta2, Output epsilon, Output grad);

}  // namespace weft::ops
