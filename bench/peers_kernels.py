"""Times the bench_kernels cases (bench/kernels.cc) in PyTorch or TensorFlow.

    python3 peers_kernels.py --impl torch [--serve]            # Debian's python3-torch (see below)
    .venv/bin/python peers_kernels.py --impl tf --threads 2 [--serve]

Same protocol and output as bench_kernels: without --serve, runs the default cases at 1 and 2
threads; with --serve, reads one case per stdin line and answers with one JSON line:
    matmul M K N THREADS
    OP N H W C KH KW O [STRIDE] SAME|VALID THREADS
with OP conv2d (forward), conv2d_bi (backprop input) or conv2d_bf (backprop filter), all counted
at the forward's FLOPs. torch runs the backprops as torch.nn.grad.conv2d_input / conv2d_weight
(symmetric padding kh // 2 for SAME), tf as tf.raw_ops.Conv2DBackpropInput / ...Filter.

Same method as weft: inputs built once, 2 warm-up runs, then runs until --min-time seconds (at least
5), median. Float32 throughout.
  torch: torch.set_num_threads(THREADS) per case; run under torch.inference_mode(). Debian's torch
         links reference BLAS: run it with LD_LIBRARY_PATH pointing at OpenBLAS (run_kernels.sh does).
         Conv2D in torch's native NCHW / OIHW layout (same FLOPs as weft's NHWC / HWIO).
  tf:    graph mode (tf.function with a fixed input signature), NHWC / HWIO like weft. TF fixes its
         thread pools at start-up, so a process serves a single thread count (--threads);
         inter-op threads = 1.
"""
import argparse
import json
import statistics
import sys
import time

# (op, dims, (stride, padding) or None)
DEFAULT_CASES = [
    ("matmul", [256, 256, 256], None),
    ("matmul", [512, 512, 512], None),
    ("matmul", [1024, 1024, 1024], None),
    ("conv2d", [64, 28, 28, 1, 3, 3, 32], (1, "SAME")),
    ("conv2d", [32, 32, 32, 64, 3, 3, 64], (1, "SAME")),
]
CONV_OPS = ("conv2d", "conv2d_bi", "conv2d_bf")


def out_size(size, k, stride, padding):
    return -(-size // stride) if padding == "SAME" else (size - k) // stride + 1


def flops(op, dims, conv):
    if op == "matmul":
        m, k, n = dims
        return 2.0 * m * k * n
    n, h, w, c, kh, kw, o = dims
    stride, padding = conv
    return 2.0 * n * out_size(h, kh, stride, padding) * out_size(w, kw, stride, padding) * o * kh * kw * c


def shape_name(op, dims, conv):
    s = "x".join(str(d) for d in dims)
    if op == "matmul":
        return s
    stride, padding = conv
    return s + (f"_s{stride}" if stride != 1 else "") + "_" + padding


def median_ms(run, min_time):
    run()
    run()
    times = []
    start = time.perf_counter()
    while len(times) < 5 or time.perf_counter() - start < min_time:
        t0 = time.perf_counter()
        run()
        times.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(times)


class TorchImpl:
    name = "torch"

    def __init__(self, threads):
        import torch
        self.torch = torch
        self.cache = {}

    def runner(self, op, dims, padding, threads):
        torch = self.torch
        torch.set_num_threads(threads)
        key = (op, tuple(dims), padding)
        if key not in self.cache:
            g = torch.Generator().manual_seed(0)
            if op == "matmul":
                m, k, n = dims
                a, b = torch.rand(m, k, generator=g) * 2 - 1, torch.rand(k, n, generator=g) * 2 - 1
                fn = lambda: torch.matmul(a, b)
            else:
                n, h, w, c, kh, kw, o = dims
                stride, pad_name = padding
                x = torch.rand(n, c, h, w, generator=g) * 2 - 1
                f = torch.rand(o, c, kh, kw, generator=g) * 2 - 1
                pad = kh // 2 if pad_name == "SAME" else 0
                oh = (h + 2 * pad - kh) // stride + 1
                ow = (w + 2 * pad - kw) // stride + 1
                dy = torch.rand(n, o, oh, ow, generator=g) * 2 - 1
                if op == "conv2d_bi":
                    fn = lambda: torch.nn.grad.conv2d_input(x.shape, f, dy, stride=stride, padding=pad)
                elif op == "conv2d_bf":
                    fn = lambda: torch.nn.grad.conv2d_weight(x, f.shape, dy, stride=stride, padding=pad)
                else:
                    fn = lambda: torch.nn.functional.conv2d(x, f, stride=stride, padding=pad)

            def run():
                with torch.inference_mode():
                    fn()
            self.cache[key] = run
        return self.cache[key]


class TfImpl:
    name = "tf"

    def __init__(self, threads):
        import tensorflow as tf
        tf.config.threading.set_intra_op_parallelism_threads(threads)
        tf.config.threading.set_inter_op_parallelism_threads(1)
        self.tf = tf
        self.threads = threads
        self.cache = {}

    def runner(self, op, dims, padding, threads):
        tf = self.tf
        if threads != self.threads:
            raise ValueError(f"this tf process runs {self.threads} threads, asked for {threads}")
        key = (op, tuple(dims), padding)
        if key not in self.cache:
            rng = tf.random.Generator.from_seed(0)
            if op == "matmul":
                m, k, n = dims
                a = rng.uniform([m, k], -1, 1)
                b = rng.uniform([k, n], -1, 1)
                fn = tf.function(lambda x, y: tf.linalg.matmul(x, y),
                                 input_signature=[tf.TensorSpec(a.shape, tf.float32),
                                                  tf.TensorSpec(b.shape, tf.float32)])
            else:
                n, h, w, c, kh, kw, o = dims
                stride, pad_name = padding
                dy_shape = [n, out_size(h, kh, stride, pad_name), out_size(w, kw, stride, pad_name), o]
                st = [1, stride, stride, 1]
                if op == "conv2d_bi":
                    a = rng.uniform(dy_shape, -1, 1)
                    b = rng.uniform([kh, kw, c, o], -1, 1)
                    sizes = tf.constant([n, h, w, c], tf.int32)
                    body = lambda dy, f: tf.raw_ops.Conv2DBackpropInput(
                        input_sizes=sizes, filter=f, out_backprop=dy, strides=st, padding=pad_name)
                elif op == "conv2d_bf":
                    a = rng.uniform([n, h, w, c], -1, 1)
                    b = rng.uniform(dy_shape, -1, 1)
                    sizes = tf.constant([kh, kw, c, o], tf.int32)
                    body = lambda x, dy: tf.raw_ops.Conv2DBackpropFilter(
                        input=x, filter_sizes=sizes, out_backprop=dy, strides=st, padding=pad_name)
                else:
                    a = rng.uniform([n, h, w, c], -1, 1)  # NHWC
                    b = rng.uniform([kh, kw, c, o], -1, 1)  # HWIO
                    body = lambda x, f: tf.nn.conv2d(x, f, strides=stride, padding=pad_name)
                fn = tf.function(body, input_signature=[tf.TensorSpec(a.shape, tf.float32),
                                                        tf.TensorSpec(b.shape, tf.float32)])
            # Eager calls are synchronous by default, so the call returns when the result is ready.
            self.cache[key] = lambda: fn(a, b)
        return self.cache[key]


def measure(impl, op, dims, padding, threads, peak, min_time):
    ms = median_ms(impl.runner(op, dims, padding, threads), min_time)
    gflops = flops(op, dims, padding) / (ms * 1e-3) / 1e9
    return json.dumps({"impl": impl.name, "op": op, "shape": shape_name(op, dims, padding), "threads": threads,
                       "ms": round(ms, 4), "gflops": round(gflops, 2),
                       "peak_frac": round(gflops / (peak * threads), 3)})


def parse_case(line):
    parts = line.split()
    op = parts[0]
    if op == "matmul" and len(parts) == 5:
        return op, [int(p) for p in parts[1:4]], None, int(parts[4])
    if op in CONV_OPS and len(parts) in (10, 11) and parts[-2] in ("SAME", "VALID"):
        stride = int(parts[8]) if len(parts) == 11 else 1
        return op, [int(p) for p in parts[1:8]], (stride, parts[-2]), int(parts[-1])
    raise ValueError(f"bad case line: {line!r}")


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--impl", choices=["torch", "tf"], required=True)
    p.add_argument("--threads", type=int, default=None, help="tf: the process's intra-op threads")
    p.add_argument("--peak", type=float, default=150.0, help="peak GFLOP/s per core (for peak_frac)")
    p.add_argument("--min-time", type=float, default=0.5)
    p.add_argument("--serve", action="store_true")
    args = p.parse_args()

    if args.impl == "torch":
        impl = TorchImpl(args.threads)
    else:
        impl = None  # one process per thread count; built on first use

    def get_impl(threads):
        nonlocal impl
        if impl is None:
            impl = TfImpl(args.threads or threads)
        return impl

    if args.serve:
        for line in sys.stdin:
            if not line.strip():
                continue
            try:
                op, dims, padding, threads = parse_case(line)
                print(measure(get_impl(threads), op, dims, padding, threads, args.peak, args.min_time), flush=True)
            except Exception as e:  # report and keep serving
                print(json.dumps({"impl": args.impl, "error": str(e)}), flush=True)
        return
    thread_counts = [args.threads] if args.impl == "tf" and args.threads else [1, 2]
    for op, dims, padding in DEFAULT_CASES:
        for threads in thread_counts:
            print(measure(get_impl(threads), op, dims, padding, threads, args.peak, args.min_time), flush=True)


if __name__ == "__main__":
    main()
