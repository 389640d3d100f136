// Private to the math kernel family: registration entry points of the files that
// RegisterMathKernels (ops/kernels/cpu/math.cc) calls.
#pragma once

namespace weft {

class KernelRegistry;

void RegisterReduceKernels(KernelRegistry& r);  // reduce.cc: Sum, Mean, Max, Min, Prod, ArgMax, ArgMin, SumToShape, ReducedShape
void RegisterMatMulKernels(KernelRegistry& r);  // matmul.cc: MatMul, BatchMatMul

}  // namespace weft
