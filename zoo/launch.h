// `weft-zoo launch`: a cluster of tasks on this machine, each a process running the same command
// with its own TF_CONFIG (free loopback ports), output prefixed by task, signals forwarded, and
// all of them stopped when one fails.
//
//   LaunchOptions o;
//   o.workers = 2;
//   o.command = {"python3", "train.py"};
//   int status = Launch(o);   // 0 when every worker exited 0
//
// Each child runs in its own process group with TF_CONFIG, WEFT_TASK ("worker:1") and
// PYTHONUNBUFFERED=1 set, its stdout and stderr piped back line by line as "[worker:1] line" on
// the launcher's stdout and stderr. When a task exits non-zero (or is killed), the others get
// SIGTERM, then SIGKILL after `grace`; the launcher reports which task failed and returns its
// status (128 + signal for a signal). SIGINT, SIGTERM and SIGHUP sent to the launcher are
// forwarded to every task (same grace). When every worker (and chief) has exited 0, the ps
// tasks (which serve forever) are stopped the same way and the launch succeeds. Every child is
// reaped before Launch returns; if the launcher itself dies, the kernel kills the children
// (PR_SET_PDEATHSIG). Not thread-safe: one Launch per process at a time (it owns SIGCHLD).
//
// Elastic restart (`max_restarts`, as `torchrun --max-restarts`): when a task fails (exits non-zero
// or is killed, not because the launcher forwarded a signal), the others are stopped as above and
// the whole job starts again, a new incarnation on new free ports, up to max_restarts times; each
// task sees WEFT_RESTART_COUNT (0 for the first run). Resuming is the command's part: `weft-zoo
// train --checkpoint-dir DIR --resume` continues at the epoch after the chief's latest checkpoint
// (Keras' BackupAndRestore); a command that does not resume starts over.
#pragma once

#include <chrono>
#include <string>
#include <vector>

namespace weft::zoo {

struct LaunchOptions {
  int workers = 1;
  int ps = 0;
  bool chief = false;             // one more task, job "chief" (TF's chief + workers layout)
  std::string host = "127.0.0.1";  // where the generated addresses point
  std::chrono::milliseconds grace{10000};  // SIGTERM -> SIGKILL
  int max_restarts = 0;                    // restarts of the whole job after a task failed
  // --status: each task gets WEFT_STATUS_FILE (weft-status-<job>-<index>.txt in the working
  // directory; `weft-zoo train` hands it to its strategy's status board, train/strategy.h) and
  // the launcher prints, at most once a second and when one changed, a line per task from them.
  bool status = false;
  std::vector<std::string> command;
};

// The launcher's `--status` lines, from each task's status file text ((task, text); empty text:
// none yet): "weft-zoo launch: status worker:0: step S, R img/s, P% in collectives, slowest
// peer: worker:1". The slowest peer is the task with the smallest share of time in collectives
// (the others wait there for it), named when two or more report and the shares differ by 5 points.
std::string SummarizeStatus(const std::vector<std::pair<std::string, std::string>>& statuses);

// Runs the cluster; returns the exit status for the launcher (see above). Throws weft::Error
// when the processes cannot be started (no free port, fork failure).
int Launch(const LaunchOptions& options);

}  // namespace weft::zoo
