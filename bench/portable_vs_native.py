"""A portable weft (meson option native=false: x86-64-v3, AVX2; the GEMM of MatMul and Conv2D
switching to AVX-512 at run time) against a native one (-march=native), kernel by kernel:
drive_kernels.py's MatMul and Conv2D cases, the three builds asked in turn for each case (this
machine's speed drifts), medians of GFLOP/s over rounds, ratios to native. A third column runs
the portable build without its AVX-512 module (bench_kernels and libweft.so copied to a directory
without libweft_avx512.so, so the dispatch finds nothing): what the dispatch buys.

    python3 bench/portable_vs_native.py build/bench/bench_kernels build-wheel/bench/bench_kernels \\
        [--rounds 5] [--threads 1,2]

(build-wheel: `pip install . -Cbuild-dir=build-wheel` or `meson setup build-wheel -Dnative=false`.)
"""
import argparse
import os
import shutil
import statistics
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from drive_kernels import CASES, Server  # noqa: E402  (bench_kernels --serve, one case a line)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("native")
    ap.add_argument("portable")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--min-time", type=float, default=0.3)
    args = ap.parse_args()
    cases = [f"{c} {t}" for c in CASES for t in args.threads.split(",")]
    with tempfile.TemporaryDirectory() as tmp:
        # The portable build without its module: bench_kernels finds libweft.so through $ORIGIN/..
        os.mkdir(os.path.join(tmp, "bench"))
        shutil.copy2(args.portable, os.path.join(tmp, "bench", "bench_kernels"))
        shutil.copy2(os.path.join(os.path.dirname(os.path.abspath(args.portable)), "..", "libweft.so"), tmp)
        exes = {"native": args.native, "portable": args.portable, "AVX2 only": os.path.join(tmp, "bench", "bench_kernels")}
        names = list(exes)
        servers = {n: Server(n, [exes[n], "--serve", f"--min-time={args.min_time}"]) for n in names}
        gflops = {(n, c): [] for n in names for c in cases}
        # Case by case, the three builds back to back in a rotating order: drift hits all alike.
        for r in range(args.rounds):
            for i, case in enumerate(cases):
                k = (r + i) % len(names)
                for n in names[k:] + names[:k]:
                    gflops[n, case].append(servers[n].ask(case)["gflops"])
            print(f"round {r + 1}/{args.rounds} done", file=sys.stderr)
        for s in servers.values():
            s.close()
    print(f"{'case':40s} {'native GF/s':>11s} {'portable':>9s} {'AVX2 only':>9s} {'port/nat':>8s} {'AVX2/nat':>8s}")
    for case in cases:
        nat, por, avx2 = (statistics.median(gflops[n, case]) for n in names)
        print(f"{case:40s} {nat:11.1f} {por:9.1f} {avx2:9.1f} {por / nat:8.2f} {avx2 / nat:8.2f}")


if __name__ == "__main__":
    main()
