"""One causal attention layer's forward and backward, FusedCausalAttention against the composed ops
MultiHeadAttention used before it (Transposes, BatchMatMul, the -1e9 mask, Softmax, BatchMatMul),
timed interleaved in one process; prints the largest difference of their results and the medians.

    .venv/bin/python bench/attention_layer.py [--threads 1] [--batch 64] [--steps 128] [--rounds 9]

Shapes are gpt_small's (4 heads of 32) unless told; float32, the gradients of sum(out * w)."""
import argparse
import time

import numpy as np
import weft as tf

ap = argparse.ArgumentParser()
ap.add_argument("--threads", type=int, default=1)
ap.add_argument("--batch", type=int, default=64)
ap.add_argument("--steps", type=int, default=128)
ap.add_argument("--heads", type=int, default=4)
ap.add_argument("--key-dim", type=int, default=32)
ap.add_argument("--rounds", type=int, default=9)
a = ap.parse_args()
B, T, H, K = a.batch, a.steps, a.heads, a.key_dim

rng = np.random.default_rng(0)
q, k, v, w = [tf.constant(rng.standard_normal((B, T, H, K)).astype(np.float32)) for _ in range(4)]
out = tf.raw_ops.FusedCausalAttention(q, k, v, scale=K ** -0.5)[0]
fused = [out] + tf.gradients(tf.reduce_sum(out * w), [q, k, v])

qt, kt, vt = [tf.transpose(x, [0, 2, 1, 3]) for x in (q, k, v)]
mask = tf.constant(np.tril(np.ones((T, T), np.float32)))
p = tf.nn.softmax(tf.matmul(qt * K ** -0.5, kt, transpose_b=True) * mask + (mask - 1) * 1e9)
out_c = tf.transpose(tf.matmul(p, vt), [0, 2, 1, 3])
composed = [out_c] + tf.gradients(tf.reduce_sum(out_c * w), [q, k, v])

config = tf.compat.v1.ConfigProto(intra_op_parallelism_threads=a.threads, inter_op_parallelism_threads=1)
sess = tf.compat.v1.Session(config=config)
diff = max(float(np.abs(x - y).max()) for x, y in zip(sess.run(fused), sess.run(composed)))
times = {"fused": [], "composed": []}
for _ in range(a.rounds):
    for name, fetch in (("fused", fused), ("composed", composed)):
        t0 = time.perf_counter()
        sess.run(fetch)
        times[name].append(1e3 * (time.perf_counter() - t0))
f, c = np.median(times["fused"]), np.median(times["composed"])
print(f"B {B} T {T} H {H} K {K} threads {a.threads}: max |fused - composed| {diff:.2g}; "
      f"fused {f:.1f} ms, composed {c:.1f} ms, composed/fused {c / f:.2f}")
