"""The cost of the always-on trace ring (runtime/trace_ring.h) under MultiWorkerMirroredStrategy:
step time with the ring (the default, 16384 events) against without (--trace-events 0), for 1 and
2 worker processes (weft-zoo launch -n W, UCX on loopback), and the size of a dump per 1,000 steps.

    python3 bench/trace_overhead.py --weft build/zoo/weft-zoo [--rounds 3] [--models mnist_cnn,mlp]
                                    [--workers 1,2] [--batch 64] [--threads 1] [--seconds 2]

Each run is `weft-zoo launch -n W -- weft-zoo bench MODEL --strategy multi_worker --batch-size W*B
--json`; worker:0's median window is the figure. The on and off runs alternate, their order
swapped every round (this machine's speed drifts); the table shows medians over the rounds and
the overhead (on / off - 1). The dump size: one more run per model and worker count with a ring
large enough to keep every step, dumped at its end (--dump-trace): bytes per event x events per
step x 1000.
"""
import argparse
import json
import os
import shlex
import statistics
import subprocess
import tempfile


def bench(weft, model, workers, batch, threads, seconds, extra, cwd):
    """worker:0's JSON line of `weft-zoo bench` under launch."""
    argv = [weft, "launch", "-n", str(workers), "--", weft, "bench", model, "--strategy", "multi_worker",
            "--batch-size", str(batch * workers), "--threads", str(threads), "--seconds", str(seconds), "--json"] + extra
    proc = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=600, cwd=cwd)
    if proc.returncode != 0:
        raise RuntimeError(f"failed (exit {proc.returncode}): {shlex.join(argv)}\n{proc.stderr[-2000:]}\n{proc.stdout[-2000:]}")
    for line in proc.stdout.splitlines():
        if line.startswith("[worker:0] {"):
            return json.loads(line[len("[worker:0] "):])
    raise RuntimeError(f"no JSON line from worker:0: {shlex.join(argv)}\n{proc.stdout[-2000:]}")


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--weft", required=True, help="the weft-zoo program")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--models", default="mnist_cnn,mlp")
    p.add_argument("--workers", default="1,2")
    p.add_argument("--batch", type=int, default=64, help="batch per worker")
    p.add_argument("--threads", type=int, default=1, help="threads per worker")
    p.add_argument("--seconds", type=float, default=2.0)
    args = p.parse_args()
    weft = os.path.abspath(args.weft)
    configs = [(m, int(w)) for m in args.models.split(",") for w in args.workers.split(",")]
    times = {(m, w, on): [] for m, w in configs for on in (True, False)}
    with tempfile.TemporaryDirectory() as cwd:  # where a failure's dumps would go
        for r in range(args.rounds):
            for m, w in configs:
                for on in ((True, False) if r % 2 == 0 else (False, True)):
                    extra = [] if on else ["--trace-events", "0"]
                    res = bench(weft, m, w, args.batch, args.threads, args.seconds, extra, cwd)
                    times[(m, w, on)].append(res["step_ms"])
                    print(f"round {r + 1}: {m}, {w} worker(s), trace {'on ' if on else 'off'}: {res['step_ms']:.3f} ms/step",
                          flush=True)
        sizes = {}
        for m, w in configs:
            dump = os.path.join(cwd, f"size-{m}-{w}.json")
            res = bench(weft, m, w, args.batch, args.threads, 0.5, ["--trace-events", "262144", "--dump-trace", dump], cwd)
            events, size, steps = res["trace_events"], res["trace_bytes"], res["steps"]
            sizes[(m, w)] = (events / steps, size / events, size / events * events / steps * 1000)
    print()
    print("| model | workers | trace off (ms/step) | trace on (ms/step) | overhead | events/step | bytes/event | dump per 1,000 steps |")
    print("|---|---|---|---|---|---|---|---|")
    for m, w in configs:
        off, on = statistics.median(times[(m, w, False)]), statistics.median(times[(m, w, True)])
        per_step, per_event, per_1000 = sizes[(m, w)]
        print(f"| {m} | {w} | {off:.3f} | {on:.3f} | {100 * (on / off - 1):+.1f}% | {per_step:.0f} | {per_event:.0f} | "
              f"{per_1000 / 1e6:.1f} MB |")
    print()
    print("runs (ms/step, in order):")
    for (m, w, on), t in times.items():
        print(f"  {m}, {w} worker(s), trace {'on ' if on else 'off'}: {', '.join(f'{x:.3f}' for x in t)}")


if __name__ == "__main__":
    main()
