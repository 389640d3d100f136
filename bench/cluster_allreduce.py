"""All-reduce and training step times across the emulated hosts of bench/netns_cluster.sh: weft's
ring and recursive doubling (bench_cluster_allreduce, one rank per namespace, UCX tcp,self) against
OpenMPI's MPI_Allreduce (bench_mpi_allreduce under mpirun, its daemons started in the namespaces by
bench/netns_rsh.sh; pml ucx with UCX tcp,self, and pml ob1 with btl tcp), and `weft-zoo bench mlp
--strategy multi_worker` with TF_CONFIG naming the namespaces' addresses. Appends one JSON object
per measurement to --out; bench/allreduce_model.py makes the tables and fits the cost model.
Run inside `netns_cluster.sh run N RATE` (bench/run_cluster_allreduce.sh does), which sets
WEFT_CLUSTER_ADDRS and WEFT_CLUSTER_NETNS.

    python3 cluster_allreduce.py --rate 10gbit --weft build/bench/bench_cluster_allreduce \
        --mpi build/bench/bench_mpi_allreduce --zoo build/zoo/weft-zoo --out results.jsonl \
        [--hosts 2,4] [--sizes 4096,...] [--reps 3] [--budget 0.25]
"""
import argparse
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
# Each peer run is bounded: a hung rank must not stall the sweep.
RUN_TIMEOUT = 120
UCX_ENV = {"UCX_TLS": "tcp,self", "UCX_NET_DEVICES": "eth0"}


def rate_bytes(text):
    t = text.lower()
    for suffix, scale in (("gbit", 1e9), ("mbit", 1e6)):
        if t.endswith(suffix):
            return float(t[: -len(suffix)]) * scale / 8
    raise ValueError(f"rate '{text}' is not like 10gbit")


def iterations(size, hosts, rate, budget):
    """All-reduces per timed run: about `budget` seconds of link time (2(n-1)/n of the bytes at the
    rate, plus 100 us), at least 2 and at most 2000."""
    estimate = 2 * (hosts - 1) / hosts * size / rate + 100e-6
    return max(2, min(2000, int(budget / estimate)))


def in_ns(netns, argv, env=None):
    e = dict(os.environ, **(env or {}))
    return subprocess.Popen(["ip", "netns", "exec", netns] + argv, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=e)


def wait_all(procs, what):
    outs = []
    deadline = time.monotonic() + RUN_TIMEOUT
    for p in procs:
        try:
            out, err = p.communicate(timeout=max(1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            for q in procs:
                q.kill()
            raise RuntimeError(f"{what}: timed out after {RUN_TIMEOUT} s")
        if p.returncode != 0:
            for q in procs:
                if q.poll() is None:
                    q.kill()
            raise RuntimeError(f"{what}: exit {p.returncode}\n{err.strip()[-1500:]}")
        outs.append(out)
    return outs


def run_weft(args, addrs, nss, sizes, iters):
    argv = [args.weft, "--addrs", ",".join(addrs), "--sizes", ",".join(map(str, sizes)),
            "--iters", ",".join(map(str, iters)), "--algorithms", "ring,recursive_doubling"]
    if args.chunk:
        argv += ["--chunk", str(args.chunk)]
    procs = [in_ns(nss[r], argv + ["--rank", str(r)]) for r in range(len(addrs))]
    out = wait_all(procs, f"weft on {len(addrs)} hosts")[0]
    res = []
    for line in out.splitlines():
        f = line.split()
        if len(f) == 4 and f[0] == "allreduce":
            res.append(("weft " + f[1], int(f[2]), float(f[3])))
        elif len(f) == 3 and f[0] == "merge":
            res.append(("merge", int(f[1]), float(f[2])))
    return res


MPI_VARIANTS = {
    "MPI ucx": ["--mca", "pml", "ucx", "--mca", "pml_ucx_tls", "any", "--mca", "pml_ucx_devices", "any",
                "-x", "UCX_TLS=tcp,self", "-x", "UCX_NET_DEVICES=eth0"],
    "MPI tcp": ["--mca", "pml", "ob1", "--mca", "btl", "tcp,self"],
}


def run_mpi(args, variant, addrs, nss, sizes, iters):
    # mpirun runs in host 0's namespace and starts a daemon in each other host's through
    # netns_rsh.sh, itself (no tree spawn: a daemon cannot reach the next host's namespace), each
    # daemon talking to mpirun directly; --bind-to none: each "host" would bind its rank to core 0,
    # the same core of this machine for all of them.
    argv = ["mpirun", "--allow-run-as-root", "-np", str(len(addrs)), "--bind-to", "none",
            "--mca", "plm_rsh_no_tree_spawn", "1", "--mca", "routed", "direct",
            "--host", ",".join(addrs), "--mca", "plm_rsh_agent", os.path.join(HERE, "netns_rsh.sh"),
            "--mca", "oob_tcp_if_include", "eth0", "--mca", "btl_tcp_if_include", "eth0"]
    argv += MPI_VARIANTS[variant] + [args.mpi, "--sizes"] + [str(s) for s in sizes] + ["--iters"] + \
        [str(i) for i in iters]
    out = wait_all([in_ns(nss[0], argv)], f"{variant} on {len(addrs)} hosts")[0]
    res = []
    for line in out.splitlines():
        f = line.split()
        if len(f) == 3 and f[0] == "allreduce":
            res.append((variant, int(f[1]), float(f[2])))
    return res


def run_training(args, addrs, nss):
    cluster = {"worker": [f"{a}:47100" for a in addrs]}
    argv = [args.zoo, "bench", args.model, "--strategy", "multi_worker",
            "--batch-size", str(args.batch * len(addrs)), "--seconds", str(args.seconds), "--threads", "1", "--json"]
    procs = []
    for r, ns in enumerate(nss):
        env = dict(UCX_ENV, TF_CONFIG=json.dumps({"cluster": cluster, "task": {"type": "worker", "index": r}}),
                   WEFT_CLUSTER_SECRET="cluster-bench")
        procs.append(in_ns(ns, argv, env))
    out = wait_all(procs, f"{args.model} training on {len(addrs)} hosts")[0]
    lines = [l for l in out.splitlines() if l.strip().startswith("{")]
    if not lines:
        raise RuntimeError(f"training printed no JSON: {out[-1000:]}")
    return json.loads(lines[-1])


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--rate", required=True)
    p.add_argument("--weft", required=True)
    p.add_argument("--mpi", required=True)
    p.add_argument("--zoo", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--hosts", default="2,4")
    p.add_argument("--sizes", default="4096,65536,1048576,16777216,67108864")
    p.add_argument("--reps", type=int, default=1)
    p.add_argument("--max-bytes-beyond-2", type=int, default=16 << 20,
                   help="the largest size timed on more than 2 hosts (4 processes spinning on this "
                        "2-core machine made a 64 MiB all-reduce take seconds)")
    p.add_argument("--budget", type=float, default=0.1, help="seconds of link time per timed run")
    p.add_argument("--chunk", type=int, default=0, help="weft's ring chunk (0: its default)")
    p.add_argument("--model", default="mlp")
    p.add_argument("--batch", type=int, default=64, help="training batch per worker")
    p.add_argument("--seconds", type=float, default=2.0, help="training bench time")
    p.add_argument("--no-mpi", action="store_true")
    p.add_argument("--no-training", action="store_true")
    args = p.parse_args()
    all_addrs = os.environ["WEFT_CLUSTER_ADDRS"].split()
    all_nss = os.environ["WEFT_CLUSTER_NETNS"].split()
    sizes = [int(s) for s in args.sizes.split(",")]
    rate = rate_bytes(args.rate)
    runners = [("weft", lambda a, n, s, i: run_weft(args, a, n, s, i))]
    if not args.no_mpi:
        for v in MPI_VARIANTS:
            runners.append((v, lambda a, n, s, i, v=v: run_mpi(args, v, a, n, s, i)))
    with open(args.out, "a") as out:
        def emit(obj):
            out.write(json.dumps(obj) + "\n")
            out.flush()

        for rep in range(args.reps):
            for hosts in [int(h) for h in args.hosts.split(",")]:
                if hosts > len(all_addrs):
                    raise SystemExit(f"--hosts {hosts}: the cluster has {len(all_addrs)}")
                addrs, nss = all_addrs[:hosts], all_nss[:hosts]
                sizes_here = [s for s in sizes if hosts <= 2 or s <= args.max_bytes_beyond_2]
                iters = [iterations(s, hosts, rate, args.budget) for s in sizes_here]
                # The order rotates per rep: this machine's speed drifts.
                order = runners[rep % len(runners):] + runners[:rep % len(runners)]
                for name, run in order:
                    try:
                        results = run(addrs, nss, sizes_here, iters)
                    except RuntimeError as e:
                        print(f"[{args.rate} {hosts} hosts] {name} failed: {e}", file=sys.stderr, flush=True)
                        continue
                    for impl, size, seconds in results:
                        emit({"rate": args.rate, "hosts": hosts, "impl": impl, "bytes": size, "seconds": seconds,
                              "rep": rep})
                if not args.no_training:
                    try:
                        t = run_training(args, addrs, nss)
                        emit({"rate": args.rate, "hosts": hosts, "impl": f"train {args.model}",
                              "batch_per_worker": args.batch, "step_ms": t["step_ms"],
                              "images_per_second": t.get("images_per_second"), "rep": rep})
                    except RuntimeError as e:
                        print(f"[{args.rate} {hosts} hosts] training failed: {e}", file=sys.stderr, flush=True)
                print(f"[{args.rate}] rep {rep + 1}/{args.reps}, {hosts} hosts done", file=sys.stderr, flush=True)


if __name__ == "__main__":
    main()
