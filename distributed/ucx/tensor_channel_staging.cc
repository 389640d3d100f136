// Device tensors across processes (TensorChannel): the run-time choice between handing UCX device
// pointers and staging through host bounce buffers, and the staged send. The receiving side of a
// staged transfer is in tensor_channel_recv.cc (chunked receives into a host tensor).
#include "distributed/ucx/tensor_channel_internal.h"

namespace weft {

std::string_view DevicePathName(DevicePath path) {
  switch (path) {
    case DevicePath::kUcx:
      return "UCX CUDA memory";
    case DevicePath::kStaged:
      return "staged through host bounce buffers";
    case DevicePath::kNone:
      break;
  }
  return "none (UCX has no CUDA memory support and no device copier was given)";
}

DevicePath ChooseDevicePath(ucp_context_h context, bool have_copier) {
  ucp_context_attr_t attr{};
  attr.field_mask = UCP_ATTR_FIELD_MEMORY_TYPES;
  if (ucp_context_query(context, &attr) == UCS_OK && (attr.memory_types & UCS_BIT(UCS_MEMORY_TYPE_CUDA)) != 0) {
    return DevicePath::kUcx;
  }
  return have_copier ? DevicePath::kStaged : DevicePath::kNone;
}

namespace {

// One chunk's UCX send: `done` runs when UCX is finished with the bounce buffer.
void ChunkSendCallback(void* request, ucs_status_t status, void* user_data) {
  auto* done = static_cast<ChunkPipeline::Done*>(user_data);
  (*done)(UcxStatus(status, "sending a staged chunk"));
  delete done;
  ucp_request_free(request);
}

}  // namespace

void TensorChannel::SendStaged(int task, SendOp* op, uint64_t seq, size_t num_chunks) {
  const ChunkPlan plan{op->value.bytes(), staging_->bytes()};
  const size_t depth = std::min(options_.staging_depth, num_chunks);
  auto bounce = std::make_shared<std::vector<void*>>();
  for (size_t i = 0; i < depth; ++i) bounce->push_back(staging_->Get());
  staged_in_flight_++;
  const auto* src = static_cast<const uint8_t*>(op->value.raw_data());
  DeviceCopier* copier = options_.device_copier.get();
  ChunkPipeline::Run(
      plan, depth,
      [plan, src, bounce, copier](size_t i, size_t slot, ChunkPipeline::Done done) {
        copier->ToHost(src + plan.offset(i), (*bounce)[slot], plan.size(i), std::move(done));
      },
      [this, task, plan, seq, bounce](size_t i, size_t slot, ChunkPipeline::Done done) {
        // The copy finished on the copier's thread: UCX calls belong to the progress thread.
        const bool posted = worker_->RunOrPost([this, task, plan, seq, bounce, i, slot, done] {
          UcxEndpoint* data_ep = connector_->UsableDataEndpoint(task);
          if (shutting_down_ || data_ep == nullptr) {
            const Status failed = connector_->PeerStatus(task);
            done(!failed.ok() ? failed : errors::Cancelled("the transport is shutting down"));
            return;
          }
          void* buffer = (*bounce)[slot];
          ucp_request_param_t param{};
          param.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA | UCP_OP_ATTR_FIELD_DATATYPE;
          param.cb.send = &ChunkSendCallback;
          param.user_data = new ChunkPipeline::Done(done);
          param.datatype = ucp_dt_make_contig(1);
          if (ucp_mem_h memh = registry_->Find(buffer, plan.size(i))) {
            param.op_attr_mask |= UCP_OP_ATTR_FIELD_MEMH;
            param.memh = memh;
          }
          ucs_status_ptr_t req =
              ucp_tag_send_nbx(data_ep->get(), buffer, plan.size(i), DataTag(self_, seq + i), &param);
          if (req == nullptr || UCS_PTR_IS_ERR(req)) {
            delete static_cast<ChunkPipeline::Done*>(param.user_data);
            done(UcxStatus(UCS_PTR_STATUS(req), "sending a staged chunk to " + connector_->PeerName(task)));
          }
        });
        if (!posted) done(errors::Cancelled("the transport is shutting down"));
      },
      [this, op, bounce](const Status& s) {
        for (void* b : *bounce) staging_->Put(b);
        // SendOp is progress-thread state.
        if (!worker_->RunOrPost([op, s] { op->Complete(s); })) op->Complete(s);
        staged_in_flight_--;
      });
}

}  // namespace weft
