"""Step-time overhead of MultiWorkerMirroredStrategy: 2 worker processes (weft-zoo launch -n 2, UCX
on loopback) against 1 process, at the same batch per worker, with and without overlapping the
gradient all-reduce with the backward pass; prints step times and the ratios (2 workers / 1).

    python3 drive_multiworker.py --weft build/zoo/weft-zoo [--rounds 3] [--models mnist_cnn,mlp]
                                 [--batch 64] [--threads 1] [--overlap-bucket-bytes 0]

- "1 worker": `weft-zoo bench MODEL --batch-size B` (no strategy).
- "2 workers, no overlap": global batch 2B, all gradients in one bucket (--bucket-bytes 2^40):
  its all-reduce starts when the whole backward pass is done.
- "2 workers, overlap": one bucket per gradient (--overlap-bucket-bytes, default 0): each gradient's
  all-reduce starts as soon as it exists, while the backward pass goes on.
Each worker runs --threads threads (the 1-worker run too), so 2 workers use twice the cores: on a
machine with fewer cores than workers x threads the ratio includes that contention. Runs rotate
their order each round (this machine's speed drifts); the table shows medians. Run it through
run_multiworker.sh.
"""
import argparse
import json
import shlex
import statistics
import subprocess
import sys

NO_OVERLAP_BUCKET = 1 << 40


def run(name, argv, prefix=None):
    """Runs argv and returns the JSON object of its last JSON line (of `prefix`'s lines if given)."""
    proc = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=600)
    if proc.returncode != 0:
        raise RuntimeError(f"{name} failed (exit {proc.returncode}): {shlex.join(argv)}\n"
                           f"{proc.stderr.strip()[-2000:]}\n{proc.stdout.strip()[-2000:]}")
    lines = []
    for line in proc.stdout.splitlines():
        if prefix is not None:
            if not line.startswith(prefix):
                continue
            line = line[len(prefix):]
        if line.strip().startswith("{"):
            lines.append(line.strip())
    if not lines:
        raise RuntimeError(f"{name} printed no JSON line: {shlex.join(argv)}\n{proc.stdout.strip()[-2000:]}")
    result = json.loads(lines[-1])
    if not isinstance(result.get("step_ms"), (int, float)):
        raise RuntimeError(f"{name} gave no numeric step_ms: {lines[-1]}")
    return result


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--weft", required=True, help="the weft-zoo program")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--models", default="mnist_cnn,mlp")
    p.add_argument("--batch", type=int, default=64, help="batch per worker")
    p.add_argument("--threads", type=int, default=1, help="threads per worker")
    p.add_argument("--seconds", type=float, default=2.0)
    p.add_argument("--overlap-bucket-bytes", type=int, default=0)
    args = p.parse_args()
    if args.batch < 1 or args.threads < 1 or args.rounds < 1:
        p.error("--batch, --threads and --rounds must be at least 1")
    common = ["--threads", str(args.threads), "--seconds", str(args.seconds), "--json"]
    configs = [
        ("1 worker", lambda m: [args.weft, "bench", m, "--batch-size", str(args.batch)] + common, None),
        ("2 workers, no overlap",
         lambda m: [args.weft, "launch", "-n", "2", "--", args.weft, "bench", m, "--strategy", "multi_worker",
                    "--batch-size", str(2 * args.batch), "--bucket-bytes", str(NO_OVERLAP_BUCKET)] + common,
         "[worker:0] "),
        ("2 workers, overlap",
         lambda m: [args.weft, "launch", "-n", "2", "--", args.weft, "bench", m, "--strategy", "multi_worker",
                    "--batch-size", str(2 * args.batch), "--bucket-bytes", str(args.overlap_bucket_bytes)] + common,
         "[worker:0] "),
    ]
    models = args.models.split(",")
    results = {}
    for r in range(args.rounds):
        order = configs[r % len(configs):] + configs[:r % len(configs)]
        for model in models:
            for name, argv, prefix in order:
                res = run(name, argv(model), prefix)
                results.setdefault((model, name), []).append(res["step_ms"])
        print(f"round {r + 1}/{args.rounds} done", file=sys.stderr, flush=True)
    print(f"training step time (ms), batch {args.batch} per worker, {args.threads} thread(s) per worker, "
          f"medians of {args.rounds} interleaved rounds; ratio = step time / 1 worker's")
    head = f"{'model':<10} {'configuration':<24} {'step ms':>9} {'ratio':>7}"
    print(head)
    print("-" * len(head))
    for model in models:
        base = statistics.median(results[(model, "1 worker")])
        for name, _, _ in configs:
            v = statistics.median(results[(model, name)])
            print(f"{model:<10} {name:<24} {v:>9.2f} {v / base:>7.2f}")


if __name__ == "__main__":
    main()
