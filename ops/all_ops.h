// Registration entry points, one per op family (ops/<family>.cc) and kernel family
// (ops/kernels/cpu/<family>.cc). OpRegistry::Global() and KernelRegistry::Global() call them
// once; nothing else should.
#pragma once

namespace weft {

class OpRegistry;
class KernelRegistry;

void RegisterFrameworkOps(OpRegistry& r);   // _Arg, _Retval, Const, Placeholder, Identity, NoOp, StopGradient
void RegisterStateOps(OpRegistry& r);       // Variable, Assign, AssignAdd, AssignSub
void RegisterMathOps(OpRegistry& r);        // elementwise, comparisons, Cast, AddN, Select, reductions, MatMul
void RegisterArrayOps(OpRegistry& r);       // Reshape, Transpose, Concat, Slice, Gather, ...
void RegisterNnOps(OpRegistry& r);          // activations, softmax, losses, conv, pooling, batch norm
void RegisterRandomOps(OpRegistry& r);      // RandomUniform, RandomNormal, TruncatedNormal, Dropout
void RegisterOptimizerOps(OpRegistry& r);   // ApplyGradientDescent, ApplyMomentum, ApplyAdam
void RegisterSendRecvOps(OpRegistry& r);    // _Send, _Recv (inserted by the partitioner)
void RegisterCollectiveOps(OpRegistry& r);  // CollectiveReduce, CollectiveBroadcast, CollectiveAllGather, CollectiveReduceScatter
void RegisterSearchOps(OpRegistry& r);      // Range, Where, TopK, TopKGrad, Cumsum
void RegisterImageOps(OpRegistry& r);       // ImageProjectiveTransform
void RegisterControlOps(OpRegistry& r);     // Switch, Merge, Enter, Exit, NextIteration, LoopCond
void RegisterRnnOps(OpRegistry& r);         // LSTMSequence, GRUSequence, SimpleRNNSequence and their *Grad
void RegisterLayerNormOps(OpRegistry& r);    // LayerNorm and its *Grad
void RegisterAttentionOps(OpRegistry& r);   // FusedCausalAttention and its *Grad
void RegisterSegmentOps(OpRegistry& r);     // UnsortedSegmentMax, UnsortedSegmentMin, UnsortedSegmentProd
void RegisterLinalgOps(OpRegistry& r);      // MatrixInverse, MatrixDeterminant, MatrixSolve, MatrixBandPart, ...
void RegisterSignalOps(OpRegistry& r);      // FFT

void RegisterFrameworkKernels(KernelRegistry& r);
void RegisterStateKernels(KernelRegistry& r);
void RegisterMathKernels(KernelRegistry& r);
void RegisterArrayKernels(KernelRegistry& r);
void RegisterNnKernels(KernelRegistry& r);
void RegisterRandomKernels(KernelRegistry& r);
void RegisterOptimizerKernels(KernelRegistry& r);
void RegisterSendRecvKernels(KernelRegistry& r);
void RegisterCollectiveKernels(KernelRegistry& r);
void RegisterSearchKernels(KernelRegistry& r);
void RegisterImageKernels(KernelRegistry& r);
void RegisterControlKernels(KernelRegistry& r);
void RegisterRnnKernels(KernelRegistry& r);
void RegisterAttentionKernels(KernelRegistry& r);
void RegisterSegmentKernels(KernelRegistry& r);
void RegisterLinalgKernels(KernelRegistry& r);
void RegisterSignalKernels(KernelRegistry& r);

}  // namespace weft
