"""Interleaves `weft-zoo bench` and the PyTorch peer (peers_zoo.py) and prints a comparison table.

    python3 drive_zoo.py --weft-cmd "build-bench/zoo/weft-zoo bench" [--rounds 5] [--models mnist_cnn,mlp]
                         [--batches 64,256] [--threads 1,2] [--openblas DIR] [--json FILE]

For each round and each (model, batch size, threads) it runs the two implementations one after
the other as fresh processes, rotating which goes first every round; each prints one JSON object
{"model", "batch_size", "threads", "images_per_second"}. This machine's speed drifts up to 2x
within a minute, so the two figures of a row are taken seconds apart and the table shows medians
over the rounds and the ratio of the medians (weft / PyTorch; above 1 means weft is faster).
The weft command gets `MODEL --batch-size B --threads T --json` appended. Run it through
run_zoo.sh, which builds weft-zoo and passes --openblas.
"""
import argparse
import json
import os
import shlex
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def run_json(name, argv, env, want):
    """Runs argv, parses the last stdout line as JSON and checks it describes `want`."""
    proc = subprocess.run(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"{name} failed (exit {proc.returncode}): {shlex.join(argv)}\n{proc.stderr.strip()}")
    lines = [l for l in proc.stdout.splitlines() if l.strip()]
    if not lines:
        raise RuntimeError(f"{name} printed nothing: {shlex.join(argv)}\n{proc.stderr.strip()}")
    try:
        result = json.loads(lines[-1])
    except json.JSONDecodeError as e:
        raise RuntimeError(f"{name} printed no JSON object ({e}): {lines[-1]!r}") from None
    for key, value in want.items():
        if result.get(key) != value:
            raise RuntimeError(f"{name} answered {key}={result.get(key)!r}, asked for {value!r}: {lines[-1]}")
    if not isinstance(result.get("images_per_second"), (int, float)):
        raise RuntimeError(f"{name} gave no numeric images_per_second: {lines[-1]}")
    return result


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--weft-cmd", required=True, help='weft command, e.g. "build-bench/zoo/weft-zoo bench"')
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--models", default="mnist_cnn,mlp")
    p.add_argument("--batches", default="64,256")
    p.add_argument("--threads", default="1,2")
    p.add_argument("--torch-python", default="/usr/bin/python3")
    p.add_argument("--openblas", help="folder with OpenBLAS's libblas.so.3 for torch (Debian's torch links "
                   "reference BLAS otherwise)")
    p.add_argument("--json", help="also write every measurement here, one JSON line each")
    args = p.parse_args()
    models = args.models.split(",")
    batches = [int(b) for b in args.batches.split(",")]
    threads = [int(t) for t in args.threads.split(",")]
    weft_cmd = shlex.split(args.weft_cmd)

    torch_env = dict(os.environ)
    # OpenMP's default barrier spins; on this shared 2-core host a spinning barrier waits out
    # whole scheduler slices when another process holds a core (see drive_kernels.py).
    torch_env.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    if args.openblas:
        torch_env["LD_LIBRARY_PATH"] = args.openblas + os.pathsep + torch_env.get("LD_LIBRARY_PATH", "")
    peer = [args.torch_python, os.path.join(HERE, "peers_zoo.py")]

    impls = ["weft", "torch"]
    results = {}  # (model, batch, threads, impl) -> [images/s per round]
    log = open(args.json, "w") if args.json else None
    try:
        for r in range(args.rounds):
            order = impls[r % 2:] + impls[:r % 2]
            for model in models:
                for b in batches:
                    for t in threads:
                        tail = [model, "--batch-size", str(b), "--threads", str(t), "--json"]
                        want = {"model": model, "batch_size": b, "threads": t}
                        for impl in order:
                            if impl == "weft":
                                res = run_json("weft", weft_cmd + tail, None, want)
                            else:
                                res = run_json("torch", peer + tail, torch_env, want)
                            results.setdefault((model, b, t, impl), []).append(res["images_per_second"])
                            if log:
                                log.write(json.dumps(dict(res, impl=impl, round=r)) + "\n")
                                log.flush()
            print(f"round {r + 1}/{args.rounds} done", file=sys.stderr, flush=True)
    finally:
        if log:
            log.close()

    head = f"{'model':<10} {'batch':>5} {'thr':>3} {'weft img/s':>11} {'torch img/s':>11} {'weft/torch':>10}"
    print(f"training images/s, medians of {args.rounds} interleaved rounds")
    print(head)
    print("-" * len(head))
    for model in models:
        for b in batches:
            for t in threads:
                w = statistics.median(results[(model, b, t, "weft")])
                pt = statistics.median(results[(model, b, t, "torch")])
                print(f"{model:<10} {b:>5} {t:>3} {w:>11.0f} {pt:>11.0f} {w / pt:>10.2f}")


if __name__ == "__main__":
    main()
