#include "distributed/ucx/transport.h"

#include "distributed/ucx/environment.h"

namespace weft {

UcxTransport::UcxTransport(UcxTransportOptions options, MessageHandler on_message, PeerFailureHandler on_peer_failure)
    : options_(std::move(options)), on_peer_failure_(std::move(on_peer_failure)) {
  self_ = options_.cluster.GlobalIndex(options_.task);
  WEFT_REQUIRE(options_.cluster.NumTasks() <= 0xFFFF, "UcxTransport: {} tasks do not fit the 16-bit tag field",
               options_.cluster.NumTasks());
  UcxContextOptions context_options = options_.context;
  // Data messages (above the eager threshold plus room for a header) go by UCX rendezvous.
  context_options.config.emplace("RNDV_THRESH", std::to_string(options_.eager_threshold + 1024));
  if (options_.net_devices_from_address) {
    SetNetDevicesFromAddress(&context_options.config, HostPort::Parse(options_.cluster.Address(options_.task)).host);
  }
  context_ = std::make_unique<UcxContext>(context_options);
  registry_ = std::make_shared<UcxMemRegistry>(context_->get());
  if (options_.worker.name == "ucx") options_.worker.name = "ucx " + options_.task.ToString();
  worker_ = std::make_unique<UcxWorker>(context_.get(), options_.worker);
  try {
    connector_ = std::make_unique<PeerConnector>(
        options_, self_, worker_.get(),
        PeerConnector::Events{
            .on_connected =
                [this](int task) {
                  // The lower-numbered task of the pair measures (one measurement per pair: both
                  // spinning at once would compete for the cores) and tells the peer the result.
                  if (self_ < task && options_.measure_eager_threshold) probe_->Start(task);
                },
            .on_failed = [this](int task, const Status& s) { OnPeerFailure(task, s); }});
    channel_ = std::make_unique<TensorChannel>(
        options_, self_, context_->get(), worker_.get(), registry_, connector_.get(), std::move(on_message),
        [this](int src_task, const std::string& key) { probe_->OnMessage(src_task, key); });
    probe_ = std::make_unique<ThresholdProbe>(options_, worker_.get(), connector_.get(), channel_.get());
    if (options_.collective_channel) {
      collective_ = std::make_unique<UcxCollectiveChannel>(options_, self_, worker_.get(), connector_.get());
    }
  } catch (const Error&) {
    // The listener (and any endpoint) close on the progress thread, before it stops.
    if (connector_) {
      worker_->RunSync([this] {
        connector_->Shutdown();
        return Status();
      }, std::chrono::seconds(10));
    }
    worker_.reset();
    throw;
  }
  worker_->AddPollHook([this] {
    channel_->ProbeHeaders(worker_->get());
    if (collective_) collective_->Poll(worker_->get());
    connector_->Poll();  // the TCP listener and connections (throttled)
  });
  worker_->AddTickHook([this] {
    probe_->CheckTimeouts();
    connector_->Tick();
  });
}

UcxTransport::~UcxTransport() {
  // Staged sends finish on their own (their UCX sends complete or fail); their stages use the channel.
  channel_->WaitForStagedSends();
  worker_->RunSync([this] {
    connector_->BeginShutdown();  // no failure reported from here on; sends fail as cancelled
    channel_->Shutdown();         // nothing more is delivered; receives in flight are cancelled
    if (collective_) collective_->Shutdown();
    connector_->Shutdown();       // sends waiting for a connection fail; endpoints and the listener close
    return Status();
  }, std::chrono::seconds(10));
  worker_->Stop();  // joins the progress thread: no hook runs after this
  // The ucp worker goes first: destroying it completes the sends still in flight (a peer that is
  // stopped never takes them), and their callbacks use the channel and the connector.
  worker_.reset();
  probe_.reset();
  collective_.reset();
  channel_.reset();  // the receive pool and the bounce buffers unregister their chunks
  connector_.reset();
  registry_->Close();  // tensors still holding pool buffers outlive the context: unmap now
  context_.reset();
}

void UcxTransport::OnPeerFailure(int task, const Status& status) {
  probe_->OnPeerFailed(task);
  if (collective_) collective_->PeerFailed(task, status);
  if (on_peer_failure_) on_peer_failure_(task, status);
  PeerFailureHandler control_failure;
  {
    std::lock_guard<std::mutex> l(control_mu_);
    control_failure = on_control_peer_failure_;
  }
  if (control_failure) control_failure(task, status);
}

std::string UcxTransport::PeerName(int task) const { return connector_->PeerName(task); }

void UcxTransport::SetPeerAddress(int task, const HostPort& address) { connector_->SetPeerAddress(task, address); }

Status UcxTransport::Connect(int task) { return connector_->Connect(task); }

bool UcxTransport::WaitForSends(std::chrono::milliseconds timeout) const { return channel_->WaitForSends(timeout); }

void UcxTransport::SetControlHandler(ControlHandler on_control, PeerFailureHandler on_peer_failure) {
  channel_->SetControlHandler(std::move(on_control));
  {
    std::lock_guard<std::mutex> l(control_mu_);
    on_control_peer_failure_ = std::move(on_peer_failure);
  }
  // Handlers run on the progress thread: once it has run this, no call of the old ones is in flight.
  if (!worker_->OnProgressThread()) worker_->RunSync([] { return Status(); }, std::chrono::seconds(10));
}

size_t UcxTransport::EagerThreshold(int task) const { return probe_->EagerThreshold(task); }

std::string UcxTransport::ThresholdReport(int task) const { return probe_->ThresholdReport(task); }

bool UcxTransport::WaitForThreshold(int task, std::chrono::milliseconds timeout) {
  return probe_->WaitForThreshold(task, timeout);
}

Status UcxTransport::last_rejection() const { return channel_->last_rejection(); }

int64_t UcxTransport::num_rejected() const { return channel_->num_rejected(); }

Status UcxTransport::SendRawForTesting(int task, uint64_t tag, std::string bytes, bool seal) {
  return worker_->RunSync([&]() -> Status {
    UcxEndpoint* data_ep = connector_->DataEndpoint(task);
    if (data_ep == nullptr) return errors::FailedPrecondition("not connected to {}", PeerName(task));
    const SipHash24* key = connector_->SendKey(task);
    if (seal && key != nullptr && bytes.size() >= kWireHeaderBytes) SealMessage(&bytes, "", *key);
    ucp_request_param_t param{};
    ucs_status_ptr_t req = ucp_tag_send_nbx(data_ep->get(), bytes.data(), bytes.size(), tag, &param);
    if (req == nullptr) return Status();
    if (UCS_PTR_IS_ERR(req)) return UcxStatus(UCS_PTR_STATUS(req), "raw send");
    worker_->ProgressUntil([&] { return ucp_request_check_status(req) != UCS_INPROGRESS; },
                           std::chrono::milliseconds(5000));
    const ucs_status_t s = ucp_request_check_status(req);
    if (s == UCS_INPROGRESS) ucp_request_cancel(worker_->get(), req);
    ucp_request_free(req);
    return UcxStatus(s, "raw send");
  }, std::chrono::seconds(10));
}

}  // namespace weft
