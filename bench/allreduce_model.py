"""The alpha-beta-gamma cost model of weft's all-reduce algorithms (docs/collectives.md), fitted to
the measurements of bench/cluster_allreduce.py, and the tables of those measurements.

    python3 allreduce_model.py RESULTS.jsonl [--predict 64,1024]

For p members and n bytes (alpha: seconds per message step, beta: seconds per byte on a link,
gamma: seconds per byte merged):
    ring:               2(p-1) alpha + 2(p-1)/p n beta + (p-1)/p n gamma
    recursive doubling: L (alpha + n beta + n gamma) + [p > q] (2 alpha + 2 n beta + n gamma),
                        q = the largest power of two <= p, L = log2 q (ranks beyond q fold in first
                        and get the result back)
gamma is measured (one merge of two 16 MiB float32 tensors on this machine: the "merge" lines);
alpha (one per algorithm) and beta (one per algorithm and link rate: what a byte costs end to end,
the transport's and CPU's limits included) are fitted by least squares on relative error (the
times span four decades), so every point weighs the same.
Pure Python (no numpy): tests/python/test_allreduce_model.py imports it.
"""
import argparse
import json
import math
import statistics
import sys

ALGORITHMS = ("ring", "recursive_doubling")


def rd_terms(p):
    """(message steps, link bytes per n, merged bytes per n) of recursive doubling over p members."""
    q = 1 << (p.bit_length() - 1)
    steps = int(math.log2(q))
    fold = p > q
    return steps + (2 if fold else 0), steps + (2 if fold else 0), steps + (1 if fold else 0)


def terms(algorithm, p, n):
    """The coefficients (of alpha, beta, gamma) of the closed form: cost = a alpha + b beta + c gamma."""
    if p < 2:
        return 0.0, 0.0, 0.0
    if algorithm == "ring":
        return 2.0 * (p - 1), 2.0 * (p - 1) / p * n, (p - 1) / p * n
    if algorithm == "recursive_doubling":
        a, b, c = rd_terms(p)
        return float(a), b * n, c * n
    raise ValueError(f"unknown algorithm '{algorithm}'")


def cost(algorithm, p, n, alpha, beta, gamma):
    """Seconds for one all-reduce of n bytes over p members by the closed form."""
    a, b, c = terms(algorithm, p, n)
    return a * alpha + b * beta + c * gamma


def crossover(p, ring, rd, gamma):
    """Bytes below which recursive doubling is cheaper than the ring over p members (ring and rd:
    (alpha, beta) each); 0 when it never is, math.inf when it always is."""
    ra, rb, rc = terms("ring", p, 1.0)
    da, db, dc = terms("recursive_doubling", p, 1.0)
    fixed = ra * ring[0] - da * rd[0]                                  # ring's extra latency
    per_byte = db * rd[1] + dc * gamma - (rb * ring[1] + rc * gamma)   # rd's extra cost per byte
    if per_byte <= 0:
        return math.inf if fixed >= 0 else 0.0
    return max(0.0, fixed / per_byte)


def solve(rows, rhs):
    """Least squares by the normal equations (Gaussian elimination with pivoting)."""
    k = len(rows[0])
    ata = [[sum(r[i] * r[j] for r in rows) for j in range(k)] for i in range(k)]
    atb = [sum(r[i] * y for r, y in zip(rows, rhs)) for i in range(k)]
    m = [ata[i] + [atb[i]] for i in range(k)]
    for col in range(k):
        piv = max(range(col, k), key=lambda i: abs(m[i][col]))
        if abs(m[piv][col]) < 1e-300:
            raise ValueError("the fit is singular: too few distinct points")
        m[col], m[piv] = m[piv], m[col]
        for i in range(k):
            if i != col:
                f = m[i][col] / m[col][col]
                m[i] = [x - f * y for x, y in zip(m[i], m[col])]
    return [m[i][k] / m[i][i] for i in range(k)]


def fit(points, gamma):
    """points: [(algorithm, p, n, rate, seconds)] of one algorithm. Returns (alpha, {rate: beta}),
    minimizing sum ((model - measured) / measured)^2; a parameter the data push below zero is
    held at zero and the rest refitted (alpha, beta >= 0)."""
    rates = sorted({pt[3] for pt in points})
    names = ["alpha"] + [f"beta {r}" for r in rates]
    free = list(range(len(names)))
    while True:
        rows, rhs = [], []
        for algorithm, p, n, rate, seconds in points:
            a, b, c = terms(algorithm, p, n)
            full = [a] + [b if r == rate else 0.0 for r in rates]
            rows.append([full[i] / seconds for i in free])
            rhs.append((seconds - c * gamma) / seconds)
        x = solve(rows, rhs)
        neg = [free[i] for i, v in enumerate(x) if v < 0]
        if not neg:
            break
        free = [i for i in free if i not in neg]
        if not free:
            x = []
            break
    values = [0.0] * len(names)
    for i, v in zip(free, x):
        values[i] = v
    return values[0], dict(zip(rates, values[1:]))


def rate_key(rate):
    return float(rate.lower().replace("gbit", "e9").replace("mbit", "e6"))


def load(path):
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def medians(rows):
    """{(rate, hosts, impl, bytes): median seconds} and {(rate, hosts): median step ms}."""
    groups, steps = {}, {}
    for r in rows:
        if r["impl"].startswith("train"):
            steps.setdefault((r["rate"], r["hosts"], r["impl"]), []).append(r["step_ms"])
        elif r["impl"] != "merge":
            groups.setdefault((r["rate"], r["hosts"], r["impl"], r["bytes"]), []).append(r["seconds"])
    return ({k: statistics.median(v) for k, v in groups.items()}, {k: statistics.median(v) for k, v in steps.items()})


def fmt_size(n):
    return f"{n >> 20} MiB" if n >= 1 << 20 else f"{n >> 10} KiB"


def fmt_time(s):
    return f"{s * 1e3:.2f} ms" if s >= 1e-3 else f"{s * 1e6:.0f} us"


def auto_choice(n):
    """What weft's ChooseAllReduce picked across processes before the model (a fixed 64 KiB)."""
    return "recursive_doubling" if n <= 64 << 10 else "ring"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("results")
    ap.add_argument("--predict", default="64,1024")
    args = ap.parse_args()
    rows = load(args.results)
    med, steps = medians(rows)
    merges = [r["seconds"] / r["bytes"] for r in rows if r["impl"] == "merge"]
    if not merges:
        sys.exit("no 'merge' line: gamma unknown")
    gamma = statistics.median(merges)
    rates = sorted({k[0] for k in med}, key=rate_key)
    hosts = sorted({k[1] for k in med})

    print("all-reduce float32 sum across emulated hosts (medians); busbw GB/s = bytes * 2(p-1)/p / time;")
    print("weft/MPI = the best MPI's time / weft's (> 1: weft faster), weft = the better of its two algorithms")
    head = (f"{'rate':>7} {'p':>2} {'size':>8} {'ring':>10} {'rec.dbl':>10} {'MPI ucx':>10} {'MPI tcp':>10} "
            f"{'weft busbw':>10} {'MPI busbw':>10} {'weft/MPI':>8}")
    print(head)
    print("-" * len(head))
    for rate in rates:
        for p in hosts:
            for n in sorted({k[3] for k in med if k[0] == rate and k[1] == p}):
                get = lambda impl: med.get((rate, p, impl, n))
                ring, rd, mu, mt = get("weft ring"), get("weft recursive_doubling"), get("MPI ucx"), get("MPI tcp")
                weft = min(t for t in (ring, rd) if t) if (ring or rd) else None
                mpi = min(t for t in (mu, mt) if t) if (mu or mt) else None
                bw = lambda t: f"{n * 2 * (p - 1) / p / t / 1e9:.3f}" if t else "-"
                cell = lambda t: fmt_time(t) if t else "-"
                ratio = f"{mpi / weft:.2f}" if weft and mpi else "-"
                print(f"{rate:>7} {p:>2} {fmt_size(n):>8} {cell(ring):>10} {cell(rd):>10} {cell(mu):>10} "
                      f"{cell(mt):>10} {bw(weft):>10} {bw(mpi):>10} {ratio:>8}")
    if steps:
        print("\ntraining step time (weft-zoo bench, multi_worker, TF_CONFIG in the namespaces; medians)")
        for (rate, p, impl), ms in sorted(steps.items(), key=lambda kv: (rate_key(kv[0][0]), kv[0][1])):
            print(f"  {impl:<10} {rate:>7} {p} workers: {ms:.1f} ms/step")

    print(f"\ncost model: gamma (measured merge) = {gamma * 1e9:.3f} ns/byte")
    params = {}
    for algo in ALGORITHMS:
        pts = [(algo, k[1], k[3], k[0], v) for k, v in med.items() if k[2] == f"weft {algo}"]
        if len(pts) < 3:
            continue
        alpha, betas = fit(pts, gamma)
        params[algo] = (alpha, betas)
        errs = [(cost(a, p, n, alpha, betas[r], gamma) - s) / s for a, p, n, r, s in pts]
        rms = math.sqrt(sum(e * e for e in errs) / len(errs))
        bstr = ", ".join(f"{r}: {1 / b / 1e9 * 8 if b > 0 else math.inf:.2f} Gbit/s" for r, b in
                         sorted(betas.items(), key=lambda kv: rate_key(kv[0])))
        print(f"{algo}: alpha = {alpha * 1e6:.1f} us, 1/beta = {bstr}; rms relative error {rms:.0%} "
              f"over {len(pts)} points")
        print(f"  {'rate':>7} {'p':>2} {'size':>8} {'measured':>10} {'model':>10} {'error':>7}")
        for (a, p, n, r, s), e in sorted(zip(pts, errs), key=lambda x: (rate_key(x[0][3]), x[0][1], x[0][2])):
            print(f"  {r:>7} {p:>2} {fmt_size(n):>8} {fmt_time(s):>10} "
                  f"{fmt_time(cost(a, p, n, alpha, betas[r], gamma)):>10} {e:>+7.0%}")
    if len(params) < 2:
        return
    (ra, rbetas), (da, dbetas) = params["ring"], params["recursive_doubling"]
    print("\npredictions (seconds) and the algorithm the model picks; crossover: recursive doubling below it")
    for p in [int(x) for x in args.predict.split(",")] + hosts:
        for rate in rates:
            if rate not in rbetas or rate not in dbetas:
                continue
            x = crossover(p, (ra, rbetas[rate]), (da, dbetas[rate]), gamma)
            cells = []
            for n in (4 << 10, 64 << 10, 1 << 20, 16 << 20, 64 << 20, 256 << 20):
                tr = cost("ring", p, n, ra, rbetas[rate], gamma)
                td = cost("recursive_doubling", p, n, da, dbetas[rate], gamma)
                cells.append(f"{fmt_size(n)} {fmt_time(min(tr, td))} {'rd' if td < tr else 'ring'}")
            xs = "never" if x == 0 else ("always" if math.isinf(x) else f"{x / 1024:.0f} KiB")
            print(f"  p={p:<5} {rate:>7}: crossover {xs:>9}; " + "; ".join(cells))


if __name__ == "__main__":
    main()
