// CollectiveChannel: a persistent path for the small messages of collectives between processes,
// beside the step's rendezvous (issue 22). A message is named by integers, not a key string:
//
//   CollectiveSlot slot{.group_key = 1, .instance_key = 3, .message = 2};   // "rd1" of instance 3
//   uint64_t step = 0;
//   CollectiveChannel* ch = rendezvous->collective_channel(&step);   // null: not across processes
//   int peer = ch->RemoteTask(devices[partner]);                      // -1: not another task
//   if (peer >= 0 && ch->Carries(slot, value.bytes())) {
//     ch->Send(peer, step, slot, value, [](const Status& s) { ... });
//     ch->Recv(peer, step, slot, value.dtype(), value.shape(), [](const Status& s, const Tensor& t) { ... });
//   }
//
// The receiving side keeps, per (peer, group, instance, message), a slot with a receive posted
// ahead for that exact message, made when the slot is first used and posted again as soon as a
// message was taken out of it: no step rendezvous lookup, no key string, no probe. Which messages
// go this way is decided alike on both ends, from the slot's keys and the byte size (Carries):
// a message the sender sends here is received here. Messages carry their step, so the next step's
// message that comes early waits (bounded) until its Recv, and one for a step that was cleaned up
// (ForgetStep: the collective aborted, or ended on a timeout) is rejected and counted by slot.
// The implementation across tasks: UcxCollectiveChannel (distributed/ucx/collective_channel.h).
//
// Thread-safe. Callbacks run on the transport's progress thread, once each, and must not block.
#pragma once

#include <cstdint>
#include <functional>
#include <string_view>

#include "core/status.h"
#include "core/tensor.h"

namespace weft {

struct CollectiveSlot {
  int64_t group_key = 0;
  int64_t instance_key = 0;
  int message = 0;  // the algorithm's number for the message within one instance
};

class CollectiveChannel {
 public:
  using SendDone = std::function<void(const Status& status)>;
  using RecvDone = std::function<void(const Status& status, const Tensor& value)>;
  virtual ~CollectiveChannel() = default;

  // The task (global index) of `device` when it is another task this channel reaches; -1 otherwise.
  virtual int RemoteTask(std::string_view device) const = 0;
  // Whether a message of `bytes` for `slot` goes over this channel. A pure function of its
  // arguments and the channel's options (which every task must set alike).
  virtual bool Carries(const CollectiveSlot& slot, size_t bytes) const = 0;
  // Sends `value` (host memory) for `slot` of `step` to `task`; `done` (may be null) once its
  // buffer is no longer needed, or with the error.
  virtual void Send(int task, uint64_t step, const CollectiveSlot& slot, const Tensor& value, SendDone done) = 0;
  // Calls `done` with `task`'s message for `slot` of `step`, a new tensor of `dtype` and `shape`;
  // InvalidArgument naming the slot when the sender's dtype, size or shape differ; the peer's
  // failure; DataLoss naming the slot when the message was longer than a slot; Cancelled when the
  // step is forgotten first.
  virtual void Recv(int task, uint64_t step, const CollectiveSlot& slot, DType dtype, const TensorShape& shape,
                    RecvDone done) = 0;
};

}  // namespace weft
