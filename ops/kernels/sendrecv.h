// Shared by the CPU and GPU _Send/_Recv kernels (ops/kernels/{cpu,cuda}/sendrecv.cc).
#pragma once

#include <string>

#include "ops/kernel.h"

namespace weft {

// The rendezvous key of a _Send or _Recv node (from its send/recv device and tensor attrs).
std::string SendRecvKeyOf(const Node& n);
// The step's rendezvous; FailedPrecondition naming the node when the step has none.
Rendezvous* RequireRendezvous(OpKernelContext* ctx);

}  // namespace weft
