#!/usr/bin/env bash
# Builds and runs bench/gemm_libs.cc: oneDNN's sgemm, Eigen, OpenBLAS and BLIS on the zoo MLP's
# GEMM shapes at 1 and 2 threads. Needs Debian's libdnnl-dev, libeigen3-dev, libopenblas0-pthread and
# libblis4-pthread (installed here if missing; bench-only, the build and tests never use them).
set -euo pipefail
cd "$(dirname "$0")"
need=()
for p in libdnnl-dev libeigen3-dev libopenblas0-pthread libblis4-pthread; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || need+=("$p")
done
[ ${#need[@]} -eq 0 ] || { apt-get update -qq && apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null; }
out="${TMPDIR:-/tmp}/weft_gemm_libs"
g++ -O3 -march=native -DNDEBUG -std=c++20 -fopenmp -I/usr/include/eigen3 gemm_libs.cc -o "$out" -ldnnl -ldl
# The libraries take turns, one process each, for ROUNDS rounds (default 3; a different one first
# each round); the table shows each case's median over the rounds and the ratio to oneDNN's.
rounds="${ROUNDS:-3}"
libs=(onednn eigen openblas blis)
log=$(mktemp)
for r in $(seq "$rounds"); do
  for i in "${!libs[@]}"; do
    "$out" --lib="${libs[$(( (i + r) % ${#libs[@]} ))]}" --rounds=1 "$@" >>"$log"
  done
done
python3 - "$log" <<'PY'
import collections, statistics, sys
g = collections.defaultdict(list)
for line in open(sys.argv[1]):
    lib, what, shape, thr, gf = line.split()
    g[(what, shape, int(thr), lib)].append(float(gf))
libs = ["onednn", "eigen", "openblas", "blis"]
keys = sorted({k[:3] for k in g}, key=lambda k: (k[2], int(k[1].split("x")[0]) if k[0][:2] != "dW" else 0, k[0]))
print(f"{'case':5} {'m x n x k':13} thr " + " ".join(f"{l:>9}" for l in libs) + "   GFLOP/s, medians; best / onednn")
for k in keys:
    med = {l: statistics.median(g[k + (l,)]) for l in libs if g.get(k + (l,))}
    best = max(med, key=med.get)
    print(f"{k[0]:5} {k[1]:13} {k[2]:3} " + " ".join(f"{med.get(l, float('nan')):9.1f}" for l in libs) +
          f"   {best} {med[best] / med['onednn']:.2f}")
PY
rm -f "$log"
