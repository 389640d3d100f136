"""Interleaves `weft-zoo bench` and its peers and prints a comparison table.

    python3 drive_zoo.py --weft-cmd "build-bench/zoo/weft-zoo bench" [--rounds 5] [--models mnist_cnn,mlp]
                         [--batches 64,256] [--threads 1,2] [--peers tf,torch] [--openblas DIR] [--json FILE]

Peers: `tf` is TensorFlow 2.21 CPU (peers_zoo_tf.py in the bench-only venv bench/.venv; every zoo
model), `torch` is peers_zoo.py (mnist_cnn, mlp and gpt_small) under --torch-python: run_zoo.sh passes
PyTorch 2.15 from PyPI (bench/.venv-torch); /usr/bin/python3 is Debian's 1.13 with OpenBLAS, a
historical row. `--before-cmd` adds another weft command (a build of an earlier commit).

For each round and each (model, batch size, threads) it runs the implementations one after
the other as fresh processes, rotating which goes first every round; each prints one JSON object
{"model", "batch_size", "threads", "images_per_second"} (and "cpu_images_per_second", images per
CPU-second of the process: a second table when every implementation gives it). This machine's
speed drifts up to 2x within a minute, so the two figures of a row are taken seconds apart and the
table shows medians over the rounds and the ratio of the medians (weft / PyTorch; above 1 means weft is faster).
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
    p.add_argument("--peers", default="tf,torch", help="comma-separated: tf, torch")
    p.add_argument("--before-cmd", help="another weft command (e.g. a build of the previous commit), timed "
                   "as one more implementation, 'before', and shown as weft/before")
    p.add_argument("--tf-python", default=os.path.join(HERE, ".venv", "bin", "python"))
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
    peer_cmds = {"torch": [args.torch_python, os.path.join(HERE, "peers_zoo.py")],
                 "tf": [args.tf_python, os.path.join(HERE, "peers_zoo_tf.py")]}
    peer_env = {"torch": torch_env, "tf": dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2")}
    peers = [q for q in args.peers.split(",") if q]
    for q in peers:
        if q not in peer_cmds:
            raise SystemExit(f"unknown peer {q!r} (expected tf or torch)")
    torch_models = {"mnist_cnn", "mlp", "gpt_small"}  # the models peers_zoo.py defines

    if args.before_cmd:
        peers.append("before")
        peer_cmds["before"] = shlex.split(args.before_cmd)
        peer_env["before"] = None
    impls = ["weft"] + peers
    results = {}  # (model, batch, threads, impl) -> [images/s per round]
    log = open(args.json, "w") if args.json else None
    try:
        for r in range(args.rounds):
            order = impls[r % len(impls):] + impls[:r % len(impls)]
            for model in models:
                for b in batches:
                    for t in threads:
                        tail = [model, "--batch-size", str(b), "--threads", str(t), "--json"]
                        want = {"model": model, "batch_size": b, "threads": t}
                        for impl in order:
                            if impl == "torch" and model not in torch_models:
                                continue
                            if impl == "weft":
                                res = run_json("weft", weft_cmd + tail, None, want)
                            else:
                                res = run_json(impl, peer_cmds[impl] + tail, peer_env[impl], want)
                            results.setdefault((model, b, t, impl), []).append(res)
                            if log:
                                log.write(json.dumps(dict(res, impl=impl, round=r)) + "\n")
                                log.flush()
            print(f"round {r + 1}/{args.rounds} done", file=sys.stderr, flush=True)
    finally:
        if log:
            log.close()

    print_table(results, models, batches, threads, peers, "images_per_second",
                f"training images/s, medians of {args.rounds} interleaved rounds")
    # Images per CPU-second of each process (weft-zoo bench and peers_zoo_tf.py report it): on a
    # machine shared with other work, the step's cost without the time others held the cores.
    if all("cpu_images_per_second" in res for runs in results.values() for res in runs):
        print()
        print_table(results, models, batches, threads, peers, "cpu_images_per_second",
                    f"training images per CPU-second, medians of {args.rounds} interleaved rounds")


def print_table(results, models, batches, threads, peers, key, title):
    cols = "".join(f" {q + ' img/s':>11} {'weft/' + q:>10}" for q in peers)
    head = f"{'model':<10} {'batch':>5} {'thr':>3} {'weft img/s':>11}" + cols
    print(title)
    print(head)
    print("-" * len(head))
    for model in models:
        for b in batches:
            for t in threads:
                w = statistics.median(r[key] for r in results[(model, b, t, "weft")])
                line = f"{model:<10} {b:>5} {t:>3} {w:>11.0f}"
                for q in peers:
                    got = results.get((model, b, t, q))
                    if got:
                        m = statistics.median(r[key] for r in got)
                        line += f" {m:>11.0f} {w / m:>10.2f}"
                    else:
                        line += f" {'-':>11} {'-':>10}"
                print(line)

if __name__ == "__main__":
    main()
