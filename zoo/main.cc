// weft-zoo: list, describe, train, evaluate and benchmark the zoo's models.
//
//   weft-zoo list
//   weft-zoo describe mnist_cnn
//   weft-zoo train mnist_cnn --epochs 1 --optimizer momentum --lr 0.05 --batch-size 64
//   weft-zoo train mnist_cnn --checkpoint-dir ckpt --epochs 2 --resume --summary run.json
//   weft-zoo evaluate mnist_cnn --checkpoint ckpt/ckpt-938.weft
//   weft-zoo bench mnist_cnn --batch-size 64 --threads 2 --json
//   weft-zoo train mnist_cnn --strategy mirrored --devices 2 --batch-size 128
//   weft-zoo graph mnist_cnn --devices 2 --partitioned -o mnist_cnn.png
//   weft-zoo train gpt_small --epochs 1 --optimizer adam --checkpoint-dir ckpt
//   weft-zoo generate gpt_small --checkpoint ckpt/ckpt-1000.weft --prompt "The "
//   weft-zoo launch -n 2 -- python3 examples/python/mnist_cnn_distributed.py
//   weft-zoo server --cluster 'worker=127.0.0.1:10090;ps=127.0.0.1:10091' --task ps:0
//
// Exit status: 0 on success, 1 when weft reports an error, 2 on a usage error.
#include <csignal>
#include <cstdio>
#include <fstream>
#include <iostream>

#include "zoo/commands.h"

namespace {

const char* kUsage = R"(usage: weft-zoo COMMAND [MODEL] [options]

commands:
  list                      the models
  describe MODEL            the model's layers, output shapes and parameter counts
  train MODEL               train, then evaluate on the test split
      --data D              fashion-mnist (default) | mnist:DIR | synthetic; gpt_small: fortunes
                            (default: Debian's fortunes, next-character windows) | synthetic;
                            lstm_text: fortunes-files (default: quotes labelled by their file)
                            | synthetic
      --epochs N            (default 1)          --batch-size N     (default 64)
      --optimizer O         sgd | momentum (default) | adam
      --lr X                (default 0.05 for sgd/momentum, 0.001 for adam)
      --schedule S          constant (default) | cosine | step   --warmup-steps N (default 0)
      --steps-per-epoch N   --threads N (default: all cores)     --seed N (default 1)
      --checkpoint-dir DIR  save after every epoch   --resume  continue from DIR's latest checkpoint
      --summary FILE        write a JSON summary     --quiet   no progress output
      --strategy S          none (default) | one_device | mirrored | central_storage | multi_worker
                            | parameter_server (UCX builds: TF_CONFIG names the cluster and this
                            task, the client; the ps and other workers run `weft-zoo server`)
      --devices N           CPU devices to replicate over (N > 1 alone means mirrored; per worker
                            with multi_worker)
      multi_worker: the cluster from TF_CONFIG (weft-zoo launch sets it) or the rank of mpirun /
      srun with --hosts H1,H2.. | --hostfile F [--base-port P]; --collective-timeout S (60);
      --trace-events N: the always-on trace's ring (default 16384 events; 0: off), dumped to
      weft-trace-<job>-<index>.json on a failure or SIGUSR1; --dump-trace FILE: also at the end
      --zero 0|1|2          mirrored / multi_worker: sharded optimizer state (ZeRO): each replica
                            keeps the optimizer slots of 1/N of the parameters (1), and the
                            gradients are reduce-scattered instead of all-reduced (2); prints the
                            optimizer state per replica and the process's peak RSS
      --trace FILE          write a Chrome trace (chrome://tracing, Perfetto) of the 10th step
      --device D            auto (default: GPUs when there are any) | cpu | gpu (fails without a GPU)
      --strategy pipeline --devices N [--micro-batches M (4)] [--schedule gpipe|1f1b]
                            [--boundaries L1,L2..] [--replicas R] [--balance parameters|measured]
                            stage i (its layers' weights and work) on CPU:i; M micro-batches per
                            batch (M must divide it); stages balanced by parameters, or by each
                            layer's kernel time in a step traced on one device first (measured),
                            or starting at the named layers;
                            R > 1: R copies of the pipeline (stages x replicas, CPU:(d*N+i)), the
                            batch split over them, each stage's gradients all-reduced; prints the
                            bubble measured in the third step beside the ideal one. Under
                            `weft-zoo launch -n N` (TF_CONFIG set): stage i on task i (worker:0
                            trains, the other tasks serve their stage; --devices N: the first N)
      --device-memory-limit BYTES   a memory budget per device: a step that needs more fails
                            with ResourceExhausted naming the device, its peak and largest tensors
      --gradient-accumulation-steps K   update every K-th batch with the mean of K gradients
      --recompute all|L1,L2..   recompute these layers' activations in the backward pass
                            instead of keeping them (less memory, their forward runs twice)
  evaluate MODEL --checkpoint PATH [--data D] [--batch-size N] [--threads N] [--device D]
  bench MODEL [--batch-size N] [--threads N] [--warmup N] [--seconds S] [--json]
              [--strategy S] [--devices N] [--device D] [--bucket-bytes B]
                            steady-state training images/s on synthetic data; --bucket-bytes:
                            gradient all-reduce buckets across workers (-1 auto: 25 MiB; 0: one
                            per gradient); multi_worker: --trace-events N, --dump-trace FILE
                            (parameter_server: --dump-trace FILE, the own server's trace)
                            (the json then has trace_events and trace_bytes)
  generate MODEL --checkpoint PATH [--prompt S] [--length N (200)] [--temperature T (0.8)] [--seed N]
                            text models: the prompt and N characters sampled after it
  graph MODEL -o FILE.dot|FILE.png [--devices N] [--strategy S] [--partitioned]
                            the training step's graph; --partitioned: one cluster per device
                            with the Send/Recv pairs (PNG through graphviz's dot)
  launch -n N [--ps M] [--chief] [--host ADDR] [--grace S] [--max-restarts K] [--status] -- COMMAND [ARGS...]
                            N worker (M ps) processes of COMMAND on this machine, each with its
                            TF_CONFIG (free ports on ADDR, default 127.0.0.1), output prefixed
                            "[worker:1] "; one failing stops all (SIGTERM, SIGKILL after S s);
                            --max-restarts: then start the whole job again, up to K times
                            (WEFT_RESTART_COUNT in each task; `train --checkpoint-dir D --resume`
                            continues after the chief's latest checkpoint); --status: a line
                            per task at most once a second (step, img/s, share of time in
                            collectives, the slowest peer) from `train`'s status board
  trace merge DIR -o FILE   the trace dumps in DIR (weft-trace-*.json) as one timeline, the
                            ranks' clocks aligned (offsets measured when the workers connected)
  server [--cluster SPEC --task JOB:I] [--devices N] [--threads N] [--recv-timeout-ms MS] [--insecure]
                            this task's server (UCX builds), cluster from TF_CONFIG or the flags
                            ('worker=h:p,h:p;ps=h:p', 'ps:0'); serves until SIGTERM / SIGINT;
                            the cluster secret from WEFT_CLUSTER_SECRET(_FILE), or --insecure
)";

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  std::setvbuf(stdout, nullptr, _IOLBF, 0);  // progress lines go out as they are made, also into pipes
  if (args.empty() || args[0] == "-h" || args[0] == "--help" || args[0] == "help") {
    std::fputs(kUsage, args.empty() ? stderr : stdout);
    return args.empty() ? 2 : 0;
  }
  try {
    return weft::zoo::RunCommand(args);
  } catch (const weft::zoo::UsageError& e) {
    std::fprintf(stderr, "weft-zoo: %s\n(run 'weft-zoo --help' for usage)\n", e.what());
    return 2;
  } catch (const weft::Error& e) {
    std::fprintf(stderr, "weft-zoo: error: %s\n", e.what());
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "weft-zoo: error: %s\n", e.what());
    return 1;
  }
}
