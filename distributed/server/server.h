// The server every task of a cluster runs: its devices, its variables, the UCX transport and
// rendezvous (one listener, on the task's address from the cluster spec and nowhere else), and
// the control plane (distributed/server/control.h) through which a client registers graph
// partitions and runs, aborts and cleans up steps.
//
//   Server server(ClusterConfig::FromEnvironment());   // TF_CONFIG names the cluster and this task
//   server.Join();                                      // a ps task serves until Stop() / killed
//
//   // or in the client's process, with DistributedSession (distributed/distributed_session.h):
//   DistributedSession sess(&graph, &server);
//
// Methods (each also callable in-process, for the client's own task):
//   RegisterGraph(partitions: device -> graph)  -> handle; the devices must be this task's
//   DeregisterGraph(handle)
//   RunStep(handle, step_id, feeds, fetches)    -> fetched tensors; NotFound for an unknown handle
//   AbortStep(step_id, status)                  the step's Recvs fail and its kernels are cancelled
//                                               with `status` (also when RunStep comes later)
//   Cleanup(step_id)                            forgets the step (its rendezvous and abort record)
//   Health()                                    task, devices, graphs, steps running
// A step's rendezvous is dropped when RunStep finishes here (every Recv of this task has completed
// by then). Variables live in the server's VarStore across steps and graphs, as on a TF worker;
// the collectives of its steps run on the server's own CollectiveContext (runtime/collectives/
// context.h), which the destructor closes once the steps have ended.
// Thread-safe.
#pragma once

#include <atomic>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>

#include "distributed/hang_report.h"
#include "distributed/server/control.h"
#include "distributed/ucx_rendezvous.h"
#include "graph/device.h"
#include "graph/executor.h"
#include "runtime/collectives/context.h"

namespace weft {

struct ServerOptions {
  int num_cpu_devices = 1;
  int intra_op_threads = 0;  // 0: hardware threads
  int inter_op_threads = 0;  // 0: hardware threads
  // A Recv waiting longer than this for another task aborts its step (DeadlineExceeded).
  std::chrono::milliseconds recv_timeout{30000};
  // Hang reports (distributed/hang_report.h), as MultiWorkerMirroredStrategy's: when a Recv of a
  // step here passes recv_timeout, and on SIGUSR1 when hang_report_on_signal (one listener per
  // process), the server writes "<hang_report_dir>/weft-hang-<job>-<index>.txt" (empty dir: the
  // working directory): the Recvs waited for with their source task, the steps running here and
  // their running nodes, the last step that ended well, and "waits for: <tasks>".
  std::string hang_report_dir;
  bool hang_report_on_signal = true;
  // The always-on trace (runtime/trace_ring.h): the last `trace_events` kernels, Send/Recv and
  // steps run here, dumped to "<hang_report_dir>/weft-trace-<job>-<index>.json" with each report
  // and when a step fails here. 0: no trace.
  size_t trace_events = 16384;
  // Transport options (eager threshold, UCX configuration, port override for tests); the cluster
  // and task are the server's. With no cluster_secret and not insecure, the server takes
  // ResolveClusterSecret()'s (WEFT_CLUSTER_SECRET / _FILE / WEFT_INSECURE).
  UcxTransportOptions transport;
};

class Server {
 public:
  // Starts listening on the task's address; throws Error when it cannot (naming the address).
  Server(ClusterSpec cluster, TaskId task, ServerOptions options = {});
  explicit Server(const ClusterConfig& config, ServerOptions options = {})
      : Server(config.cluster, config.RequireTask(), std::move(options)) {}
  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  const ClusterSpec& cluster() const { return mgr_->transport().cluster(); }
  const TaskId& task() const { return mgr_->transport().task(); }
  int task_index() const { return mgr_->transport().task_index(); }
  // "ucx://127.0.0.1:10090" (the port bound).
  std::string target() const;
  const DeviceSet& devices() const { return devices_; }
  VarStore& vars() { return vars_; }
  UcxRendezvousMgr& rendezvous_mgr() { return *mgr_; }
  UcxTransport& transport() { return mgr_->transport(); }
  ControlChannel& control() { return *control_; }

  Status RegisterGraph(const RegisterGraphRequest& request, uint64_t* handle);
  Status DeregisterGraph(uint64_t handle);
  // `done` runs once, on some thread, when the step's partitions here have finished.
  void RunStep(RunStepRequest request, std::function<void(const Status&, RunStepReply)> done);
  void AbortStep(uint64_t step_id, const Status& status);
  void Cleanup(uint64_t step_id);
  HealthReply Health() const;
  // True once a control request from task `task` (global index) has arrived here.
  bool HeardFrom(int task) const;
  // The trace ring (null when trace_events is 0), and the report a stall or SIGUSR1 writes.
  TraceRing* trace_ring() const { return trace_ring_.get(); }
  HangReporter& hang_reporter() const { return *reporter_; }
  std::string DescribeWaits(std::string_view why) const;

  // Blocks until Stop().
  void Join();
  void Stop();

 private:
  struct Registered;
  struct Step;
  void Serve(int src_task, const std::string& method, const Status& status, std::string body,
             ControlChannel::Reply reply);
  std::shared_ptr<Step> StartStep(uint64_t step_id, Status* aborted);
  void FinishStep(uint64_t step_id);
  // The reporter's builder: allocates nothing (HangReporter's contract); one at a time.
  void DescribeWaits(std::string_view why, ReportText* out) const;
  // The step's event in the trace; a step that failed here first also dumps the trace.
  void RecordStep(uint64_t step_id, int64_t start_ns, const Status& status);

  ServerOptions options_;
  DeviceSet devices_;
  VarStore vars_;
  std::unique_ptr<ThreadPool> inter_op_;
  std::unique_ptr<CollectiveContext> collectives_;  // handed to every step's kernels
  std::unique_ptr<ThreadPool> callback_pool_;  // Recv callbacks of remote keys (outlives mgr_)
  std::unique_ptr<ThreadPool> control_pool_;   // control requests run here, off the progress thread
  std::string task_name_;                      // "ps:0", made once (reports allocate nothing)
  std::unique_ptr<TraceRing> trace_ring_;      // null: no trace
  mutable std::mutex describe_mu_;             // one DescribeWaits at a time: waits_ is its scratch
  std::unique_ptr<WaitDescriber> waits_;
  std::unique_ptr<HangReporter> reporter_;     // before mgr_, whose stalls it reports
  std::atomic<uint64_t> last_completed_{0};    // the last step that ended well here
  std::unique_ptr<UcxRendezvousMgr> mgr_;
  std::unique_ptr<ControlChannel> control_;
  mutable std::mutex mu_;
  std::condition_variable stopped_cv_;
  bool stopped_ = false;
  uint64_t next_handle_ = 1;
  std::map<uint64_t, std::shared_ptr<Registered>> graphs_;
  std::map<uint64_t, std::shared_ptr<Step>> running_;
  std::map<uint64_t, Status> aborted_;  // steps aborted before (or while) they ran here; bounded
  std::set<int> heard_from_;           // tasks whose control requests arrived
};

}  // namespace weft
