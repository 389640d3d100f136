#!/usr/bin/env python3
"""How busy a traced step kept its threads: reads a Chrome trace written by `weft-zoo train ...
--trace FILE` (or StepTrace::Write, or a --dump-trace ring) and prints

  - the step's span and, of it, the time with 0, 1, 2, ... kernels running at once;
  - kernel time in all and per thread (trace rows);
  - per op type: count, total, median, worst, and the worst run's node name.

    python3 bench/trace_concurrency.py /tmp/t.json [--top 15] [--step N]

Concurrency counts kernels (trace events), not cores: a kernel that splits itself over the
intra-op pool counts once however many threads it uses. On a loaded machine the wall-clock
figures stretch, but the shares of the span at each concurrency level still show whether the
executor kept several kernels in flight (bench/README.md, "where gpt_small's second thread goes").
Only the standard library: it runs under any python3.
"""
import argparse
import json
import statistics
import sys
from collections import defaultdict


def load_events(path):
    """The complete ("ph": "X") events of a trace file, as dicts with ts/dur in microseconds."""
    with open(path) as f:
        doc = json.load(f)
    events = doc["traceEvents"] if isinstance(doc, dict) else doc
    out = []
    for e in events:
        if e.get("ph") != "X":
            continue
        args = e.get("args") or {}
        out.append({
            "name": e.get("name", ""),
            "op": args.get("op") or e.get("cat") or e.get("name", ""),
            "ts": float(e["ts"]),
            "dur": float(e.get("dur", 0.0)),
            "tid": (e.get("pid"), e.get("tid")),
            "step": args.get("step"),
        })
    return out


def concurrency(events):
    """{k: microseconds during which exactly k events overlapped}, over [first start, last end]."""
    edges = []
    for e in events:
        edges.append((e["ts"], 1))
        edges.append((e["ts"] + e["dur"], -1))
    # Ends before starts at the same instant: back-to-back kernels do not count as overlapping.
    edges.sort(key=lambda x: (x[0], x[1]))
    time_at = defaultdict(float)
    running, last = 0, None
    for t, d in edges:
        if last is not None and t > last:
            time_at[running] += t - last
        running += d
        last = t
    return dict(time_at)


def summarize(events, top):
    lines = []
    span = max(e["ts"] + e["dur"] for e in events) - min(e["ts"] for e in events)
    kernel = sum(e["dur"] for e in events)
    lines.append(f"{len(events)} kernels over {span / 1e3:.2f} ms; kernel time {kernel / 1e3:.2f} ms "
                 f"({kernel / span:.2f} kernels in flight on average)")
    conc = concurrency(events)
    lines.append("running at once   ms       share")
    for k in sorted(conc):
        lines.append(f"  {k:>2}           {conc[k] / 1e3:8.2f}   {conc[k] / span:6.1%}")
    per_thread = defaultdict(float)
    for e in events:
        per_thread[e["tid"]] += e["dur"]
    busy = ", ".join(f"{v / 1e3:.1f}" for v in sorted(per_thread.values(), reverse=True))
    lines.append(f"kernel ms per trace row (thread), busiest first: {busy}")
    by_op = defaultdict(list)
    for e in events:
        by_op[e["op"]].append(e)
    rows = sorted(by_op.items(), key=lambda kv: -sum(e["dur"] for e in kv[1]))
    lines.append(f"{'op':<28} {'count':>5} {'total ms':>9} {'share':>6} {'median us':>10} {'worst us':>9}  worst node")
    for op, evs in rows[:top]:
        durs = [e["dur"] for e in evs]
        worst = max(evs, key=lambda e: e["dur"])
        total = sum(durs)
        lines.append(f"{op[:28]:<28} {len(evs):>5} {total / 1e3:>9.2f} {total / kernel:>6.1%} "
                     f"{statistics.median(durs):>10.1f} {worst['dur']:>9.1f}  {worst['name']}")
    return "\n".join(lines)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("trace", help="Chrome trace JSON (weft-zoo train --trace FILE)")
    p.add_argument("--top", type=int, default=15, help="op types to list (by total time)")
    p.add_argument("--step", type=int, help="only the events of this step id (traces with args.step)")
    a = p.parse_args(argv)
    events = load_events(a.trace)
    if a.step is not None:
        events = [e for e in events if e["step"] == a.step]
    if not events:
        sys.exit(f"{a.trace}: no complete (\"ph\": \"X\") events" + (f" of step {a.step}" if a.step is not None else ""))
    print(summarize(events, a.top))


if __name__ == "__main__":
    main()
