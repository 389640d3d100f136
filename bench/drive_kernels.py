"""Interleaves weft, PyTorch and TensorFlow kernel timings and prints a comparison table.

    python3 drive_kernels.py --weft BUILD/bench/bench_kernels [--rounds 5] [--peak 150]
                             [--before OTHER/bench/bench_kernels]

Starts every implementation once as a --serve process (bench_kernels, peers_kernels.py --impl
torch, and one peers_kernels.py --impl tf per thread count, since TF fixes its pools at start-up),
then for each round and each (case, threads) asks each implementation in turn for one timing,
rotating the order every round. This machine's speed drifts up to 2x within a minute, so
timings of one case are taken seconds apart and compared as ratios of medians over the rounds.
Run it through run_kernels.sh, which installs the peers and passes --openblas.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))

# The MLP's GEMMs, the talks' CNN's conv, and ResNet-20's convolutions at batch 64 (3x3 stride 1 and
# 2 at 16-64 channels, the 1x1 stride-2 projection), forward and both backprops; one large conv.
RESNET = ["64 32 32 16 3 3 16 SAME", "64 32 32 16 3 3 32 2 SAME", "64 16 16 32 3 3 32 SAME",
          "64 16 16 32 3 3 64 2 SAME", "64 8 8 64 3 3 64 SAME", "64 32 32 16 1 1 32 2 SAME"]
# vgg_small's 3x3 convolutions at batch 256 (28x28 to 7x7 images, 32-128 channels).
VGG = ["256 28 28 32 3 3 32 SAME", "256 14 14 32 3 3 64 SAME", "256 14 14 64 3 3 64 SAME",
       "256 7 7 64 3 3 128 SAME", "256 7 7 128 3 3 128 SAME"]
CASES = [
    "matmul 256 256 256",
    "matmul 512 512 512",
    "matmul 1024 1024 1024",
    "matmul 256 784 512",
    "matmul 256 512 512",
    "conv2d 64 28 28 1 3 3 32 SAME",
    "conv2d 32 32 32 64 3 3 64 SAME",
] + [f"{op} {shape}" for shape in RESNET + VGG for op in ("conv2d", "conv2d_bi", "conv2d_bf")]


class Server:
    """One --serve process: a case line in, a JSON line out."""

    def __init__(self, name, argv, env=None):
        self.name = name
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                     text=True, env=env, bufsize=1)

    def ask(self, line):
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()
        out = self.proc.stdout.readline()
        if not out:
            raise RuntimeError(f"{self.name} exited (code {self.proc.poll()}) on {line!r}")
        result = json.loads(out)
        if "error" in result:
            raise RuntimeError(f"{self.name}: {result['error']} on {line!r}")
        return result

    def close(self):
        self.proc.stdin.close()
        self.proc.wait()


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--weft", required=True, help="path to bench_kernels")
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--threads", default="1,2")
    p.add_argument("--peak", type=float, default=150.0, help="peak GFLOP/s per core")
    p.add_argument("--min-time", type=float, default=0.3, help="seconds of timed runs per measurement")
    p.add_argument("--impls", default="weft,torch,tf", help="comma-separated: weft and the peers to ask")
    p.add_argument("--cases", help="only the cases whose line contains this text (e.g. conv2d_bf)")
    p.add_argument("--torch-python", default="/usr/bin/python3")
    p.add_argument("--tf-python", default=os.path.join(HERE, ".venv", "bin", "python"))
    p.add_argument("--openblas", help="folder with OpenBLAS's libblas.so.3 for torch (Debian's torch links "
                   "reference BLAS otherwise)")
    p.add_argument("--json", help="also write every measurement here, one JSON line each")
    p.add_argument("--metric", default="gflops", choices=["gflops", "cpu_gflops"],
                   help="cpu_gflops: FLOPs per CPU-second of the process (bench_kernels only; on a machine "
                   "shared with other work, what a kernel does with the cycles it gets)")
    p.add_argument("--before", help="another bench_kernels (e.g. a build of the previous commit), asked in turn "
                   "with the others as impl 'before'")
    args = p.parse_args()
    threads = [int(t) for t in args.threads.split(",")]
    common = ["--serve", f"--peak={args.peak}", f"--min-time={args.min_time}"]
    peers = os.path.join(HERE, "peers_kernels.py")

    torch_env = dict(os.environ)
    # OpenMP's default barrier spins; on this shared 2-core host, when another process holds one
    # core, a spinning barrier waits out whole scheduler slices (torch at 2 threads measured 2-20
    # GFLOP/s instead of ~130). PASSIVE parks waiting threads, as Eigen's pool (weft, TF) does.
    torch_env.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    if args.openblas:
        torch_env["LD_LIBRARY_PATH"] = args.openblas + os.pathsep + torch_env.get("LD_LIBRARY_PATH", "")
    impls = args.impls.split(",") + (["before"] if args.before else [])
    cases = [c for c in CASES if not args.cases or args.cases in c]
    servers = {"weft": Server("weft", [args.weft] + common)}
    if args.before:
        servers["before"] = Server("before", [args.before] + common)
    if "torch" in impls:
        servers["torch"] = Server("torch", [args.torch_python, peers, "--impl", "torch"] + common, env=torch_env)
    tf_servers = {t: Server(f"tf/{t}", [args.tf_python, peers, "--impl", "tf", "--threads", str(t)] + common)
                  for t in threads} if "tf" in impls else {}
    results = {}  # (case, threads, impl) -> [gflops per round]
    log = open(args.json, "w") if args.json else None
    try:
        for r in range(args.rounds):
            order = impls[r % len(impls):] + impls[:r % len(impls)]
            for case in cases:
                for t in threads:
                    for impl in order:
                        server = tf_servers[t] if impl == "tf" else servers[impl]
                        res = server.ask(f"{case} {t}")
                        results.setdefault((case, t, impl), []).append(res[args.metric])
                        if log:
                            log.write(json.dumps(dict(res, round=r)) + "\n")
            print(f"round {r + 1}/{args.rounds} done", file=sys.stderr, flush=True)
    finally:
        for s in list(servers.values()) + list(tf_servers.values()):
            s.close()
        if log:
            log.close()

    med = {k: statistics.median(v) for k, v in results.items()}
    peers = [i for i in impls if i != "weft"]
    head = (f"{'op':<9} {'shape':<26} {'thr':>3} {'weft GF/s':>10}" + "".join(f" {p + ' GF/s':>10}" for p in peers)
            + "".join(f" {'weft/' + p:>10}" for p in peers) + f" {'weft peak':>9}")
    print(f"medians of {args.rounds} interleaved rounds of {args.metric}; peak = {args.peak:g} GFLOP/s per core x threads")
    print(head)
    print("-" * len(head))
    for case in cases:
        op, dims = case.split()[0], case.split()[1:]
        shape = "x".join(d for d in dims[:7] if d.isdigit()) + ("" if op == "matmul" else " " + " ".join(dims[7:]))
        for t in threads:
            w = med[(case, t, "weft")]
            line = f"{op:<9} {shape:<26} {t:>3} {w:>10.1f}"
            line += "".join(f" {med[(case, t, p)]:>10.1f}" for p in peers)
            line += "".join(f" {w / med[(case, t, p)]:>10.2f}" for p in peers)
            print(line + f" {w / (args.peak * t):>9.2f}")

if __name__ == "__main__":
    main()
