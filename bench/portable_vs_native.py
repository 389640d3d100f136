"""A portable weft (meson option native=false: x86-64-v3, AVX2, MatMul's GEMM switching to AVX-512
at run time) against a native one (-march=native), kernel by kernel: bench_kernels' MatMul and
Conv2D cases at 1 and 2 threads, the builds interleaved run by run (this machine's speed drifts),
medians of GFLOP/s, ratios to native. A third column runs the portable build without its AVX-512
module (bench_kernels and libweft.so copied to a directory without libweft_avx512.so, so the
dispatch finds nothing): what the dispatch buys.

    python3 bench/portable_vs_native.py build/bench/bench_kernels build-wheel/bench/bench_kernels [--rounds 3]

(build-wheel: `pip install . -Cbuild-dir=build-wheel` or `meson setup build-wheel -Dnative=false`.)
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile


def run(exe, min_time):
    out = subprocess.run([exe, f"--min-time={min_time}"], capture_output=True, text=True, check=True).stdout
    rows = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
    return {(r["op"], r["shape"], r["threads"]): r["gflops"] for r in rows}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("native")
    ap.add_argument("portable")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--min-time", type=float, default=0.3)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        # The portable build without its module: bench_kernels finds libweft.so through $ORIGIN/..
        os.mkdir(os.path.join(tmp, "bench"))
        shutil.copy2(args.portable, os.path.join(tmp, "bench", "bench_kernels"))
        shutil.copy2(os.path.join(os.path.dirname(os.path.abspath(args.portable)), "..", "libweft.so"), tmp)
        variants = {"native": args.native, "portable": args.portable,
                    "portable, AVX2 only": os.path.join(tmp, "bench", "bench_kernels")}
        names = list(variants)
        samples = {name: [] for name in names}
        for r in range(args.rounds):
            order = names[r % len(names):] + names[:r % len(names)]  # rotate who goes first
            for name in order:
                samples[name].append(run(variants[name], args.min_time))
                print(f"round {r + 1}/{args.rounds}: {name} done", file=sys.stderr)
    cases = list(samples["native"][0])
    med = {n: {c: statistics.median(s[c] for s in samples[n]) for c in cases} for n in names}
    print(f"{'op':7s} {'shape':28s} {'thr':>3s} {'native GF/s':>11s} {'portable':>9s} {'AVX2 only':>9s}"
          f" {'port/nat':>8s} {'AVX2/nat':>8s}")
    for c in cases:
        n, p, b = med["native"][c], med["portable"][c], med["portable, AVX2 only"][c]
        print(f"{c[0]:7s} {c[1]:28s} {c[2]:3d} {n:11.1f} {p:9.1f} {b:9.1f} {p / n:8.2f} {b / n:8.2f}")


if __name__ == "__main__":
    main()
