// Shared by the CPU and GPU _Send/_Recv kernels (ops/kernels/{cpu,cuda}/sendrecv.cc).
#pragma once

#include <string>

#include "ops/kernel.h"

namespace weft {

// The rendezvous key of a _Send or _Recv node (from its send/recv device and tensor attrs).
std::string SendRecvKeyOf(const Node& n);
// `root_key` (SendRecvKeyOf, frame:iter "0:0") with the frame and iteration the kernel runs in.
std::string SendRecvKeyIn(const std::string& root_key, const OpKernelContext& ctx);
// The step's rendezvous; FailedPrecondition naming the node when the step has none.
Rendezvous* RequireRendezvous(OpKernelContext* ctx);

}  // namespace weft
