"""Interleaves `weft-zoo bench` with one device and with a distribution strategy over 2 CPU devices
and prints images/s and the ratio (strategy / one device): the cost of the replicated step, its
in-process all-reduce and Send/Recv pairs.

    python3 drive_strategy.py --weft "build-bench/zoo/weft-zoo" [--rounds 5] [--models mnist_cnn,mlp]
                              [--batches 128,256] [--threads 2] [--strategies mirrored,central_storage]

The one-device run uses all `--threads` threads on one device; the strategy run splits the same
threads between its 2 devices (one each at 2 threads) and the global batch between its replicas.
Runs alternate and rotate their order each round (this machine's speed drifts); the table shows
medians over rounds. Run it through run_strategy.sh.
"""
import argparse
import statistics
import sys

from drive_zoo import run_json


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--weft", required=True, help="the weft-zoo program")
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--models", default="mnist_cnn,mlp")
    p.add_argument("--batches", default="128,256")
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--strategies", default="mirrored,central_storage")
    args = p.parse_args()
    configs = [("one_device", 1)] + [(s, 2) for s in args.strategies.split(",")]
    results = {}
    for r in range(args.rounds):
        order = configs[r % len(configs):] + configs[:r % len(configs)]
        for model in args.models.split(","):
            for b in [int(x) for x in args.batches.split(",")]:
                for strategy, devices in order:
                    argv = [args.weft, "bench", model, "--batch-size", str(b), "--threads", str(args.threads),
                            "--strategy", strategy, "--devices", str(devices), "--json"]
                    res = run_json(strategy, argv, None, {"model": model, "batch_size": b})
                    results.setdefault((model, b, strategy), []).append(res["images_per_second"])
        print(f"round {r + 1}/{args.rounds} done", file=sys.stderr, flush=True)
    head = f"{'model':<10} {'batch':>5} {'strategy':<16} {'img/s':>9} {'vs one device':>13}"
    print(f"training images/s at {args.threads} threads, medians of {args.rounds} interleaved rounds")
    print(head)
    print("-" * len(head))
    for model in args.models.split(","):
        for b in [int(x) for x in args.batches.split(",")]:
            base = statistics.median(results[(model, b, "one_device")])
            for strategy, _ in configs:
                v = statistics.median(results[(model, b, strategy)])
                print(f"{model:<10} {b:>5} {strategy:<16} {v:>9.0f} {v / base:>13.2f}")


if __name__ == "__main__":
    main()
