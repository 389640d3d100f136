"""The torch.distributed gloo peer of bench_allreduce: seconds per all_reduce (float32 sum) of each
size between 2 processes on this machine, after two warm-up rounds; rank 0 prints
"allreduce BYTES SECONDS" lines (the format of bench_mpi_allreduce).

    /usr/bin/python3 bench/gloo_allreduce.py --sizes 4096 65536 --iters 2000 1000

Starts its second rank itself; the ranks meet through a file store in a fresh temporary folder
(no port to choose). Needs torch (Debian's python3-torch for /usr/bin/python3).
"""
import argparse
import os
import subprocess
import sys
import tempfile
import time


def worker(rank, store, sizes, iters):
    import torch
    import torch.distributed as dist

    torch.set_num_threads(1)
    dist.init_process_group("gloo", init_method=f"file://{store}", rank=rank, world_size=2,
                            timeout=__import__("datetime").timedelta(seconds=120))
    for size, n in zip(sizes, iters):
        t = torch.full((size // 4,), 1.0 + rank, dtype=torch.float32)
        for _ in range(2):
            dist.all_reduce(t)
        dist.barrier()
        start = time.perf_counter()
        for _ in range(n):
            dist.all_reduce(t)
        seconds = (time.perf_counter() - start) / n
        if rank == 0:
            print(f"allreduce {size} {seconds:.9f}", flush=True)
    dist.destroy_process_group()


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--sizes", type=int, nargs="+", required=True, help="bytes (multiples of 4)")
    p.add_argument("--iters", type=int, nargs="+", required=True, help="iterations per size")
    p.add_argument("--rank", type=int, default=0, help=argparse.SUPPRESS)
    p.add_argument("--store", help=argparse.SUPPRESS)
    args = p.parse_args()
    if len(args.sizes) != len(args.iters) or any(s <= 0 or s % 4 for s in args.sizes):
        p.error("--sizes (positive multiples of 4) and --iters need one entry each per size")
    if args.rank == 1:
        worker(1, args.store, args.sizes, args.iters)
        return
    with tempfile.TemporaryDirectory(prefix="gloo_allreduce") as tmp:
        store = os.path.join(tmp, "store")
        peer = subprocess.Popen([sys.executable, __file__, "--rank", "1", "--store", store, "--sizes"] +
                                [str(s) for s in args.sizes] + ["--iters"] + [str(i) for i in args.iters])
        try:
            worker(0, store, args.sizes, args.iters)
            if peer.wait(timeout=120) != 0:
                sys.exit(f"gloo_allreduce: rank 1 failed (exit {peer.returncode})")
        finally:
            if peer.poll() is None:
                peer.kill()
                peer.wait()


if __name__ == "__main__":
    main()
