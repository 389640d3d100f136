"""PyTorch peer of `weft-zoo bench`: steady-state training images/s of the zoo models.

    LD_LIBRARY_PATH=bench/.cache/openblas/usr/lib/x86_64-linux-gnu/openblas-openmp \
        /usr/bin/python3 bench/peers_zoo.py mnist_cnn --batch-size 64 --threads 1 --json

Prints one JSON object {"model", "batch_size", "threads", "images_per_second"} with --json, a
line of text without. Debian's python3-torch 1.13 links reference BLAS: run it with
LD_LIBRARY_PATH pointing at OpenBLAS (run_zoo.sh / drive_zoo.py do; setup_peers.sh unpacks it).

The models are the Keras ones weft-zoo builds (float32, glorot_uniform kernels, zero biases):
  mnist_cnn: Conv2D 32 3x3 VALID relu -> MaxPool 2x2 -> Flatten -> Dense 64 relu -> Dense 10
  mlp:       Flatten -> Dense 512 relu -> Dense 512 relu -> Dense 10
  gpt_small: the character GPT of zoo/models.cc (peers_zoo_tf.py's docstring): Embedding 97x128,
             learned positions, 4 pre-norm blocks of causal nn.MultiheadAttention (4 heads) and an
             exact-GELU MLP 512, LayerNorm eps 1e-5, Dense 97; input 128 random ids, labels one
             random id per position
Loss: mean sparse softmax cross-entropy on the logits. Optimizer: SGD, lr 0.05, momentum 0.9
(torch's update v = 0.9 v + g, w -= 0.05 v is TF's ApplyMomentum). Input: a fixed random batch
x [B, 28, 28, 1] (viewed as torch's NCHW [B, 1, 28, 28]: the same bytes, since C = 1) and
labels y [B] int64, built once.

Method, as weft-zoo bench: torch.set_num_threads(N), --warmup seconds of steps, then --windows
windows of --window seconds each; images/s is the median over the windows.
"""
import argparse
import json
import math
import statistics
import sys
import time


def glorot_uniform_(weight, fan_in, fan_out):
    import torch
    limit = math.sqrt(6.0 / (fan_in + fan_out))
    with torch.no_grad():
        weight.uniform_(-limit, limit)


def gpt_small():
    import torch
    from torch import nn

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln1, self.ln2 = nn.LayerNorm(128, eps=1e-5), nn.LayerNorm(128, eps=1e-5)
            self.attn = nn.MultiheadAttention(128, 4, batch_first=True)
            self.mlp = nn.Sequential(nn.Linear(128, 512), nn.GELU(), nn.Linear(512, 128))
            self.register_buffer("mask", torch.triu(torch.ones(128, 128, dtype=torch.bool), 1))

        def forward(self, x):
            h = self.ln1(x)
            x = x + self.attn(h, h, h, attn_mask=self.mask, need_weights=False)[0]
            return x + self.mlp(self.ln2(x))

    class Gpt(nn.Module):
        def __init__(self):
            super().__init__()
            self.tok, self.pos = nn.Embedding(97, 128), nn.Parameter(0.02 * torch.randn(128, 128))
            self.blocks = nn.Sequential(*[Block() for _ in range(4)])
            self.ln, self.head = nn.LayerNorm(128, eps=1e-5), nn.Linear(128, 97)

        def forward(self, ids):
            return self.head(self.ln(self.blocks(self.tok(ids) + self.pos[:ids.shape[1]])))

    return Gpt()


def build(model):
    import torch
    from torch import nn

    if model == "gpt_small":
        return gpt_small()
    if model == "mnist_cnn":
        conv = nn.Conv2d(1, 32, 3)
        fc1, fc2 = nn.Linear(13 * 13 * 32, 64), nn.Linear(64, 10)
        glorot_uniform_(conv.weight, 1 * 3 * 3, 32 * 3 * 3)  # Keras: fan = receptive field x channels
        layers = [conv, nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(), fc1, nn.ReLU(), fc2]
        dense = [fc1, fc2]
    elif model == "mlp":
        fc1, fc2, fc3 = nn.Linear(784, 512), nn.Linear(512, 512), nn.Linear(512, 10)
        layers = [nn.Flatten(), fc1, nn.ReLU(), fc2, nn.ReLU(), fc3]
        dense = [fc1, fc2, fc3]
    else:
        raise SystemExit(f"unknown model {model!r} (expected mnist_cnn, mlp or gpt_small)")
    for fc in dense:
        glorot_uniform_(fc.weight, fc.in_features, fc.out_features)
    net = nn.Sequential(*layers)
    for m in net.modules():
        if getattr(m, "bias", None) is not None:
            nn.init.zeros_(m.bias)
    return net


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("model", choices=["mnist_cnn", "mlp", "gpt_small"])
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--warmup", type=float, default=1.0, help="seconds of warm-up steps")
    p.add_argument("--windows", type=int, default=5)
    p.add_argument("--window", type=float, default=0.5, help="seconds per timed window")
    p.add_argument("--json", action="store_true")
    args = p.parse_args()

    import torch
    torch.set_num_threads(args.threads)
    torch.manual_seed(1)
    net = build(args.model)
    opt = torch.optim.SGD(net.parameters(), lr=0.05, momentum=0.9)
    loss_fn = torch.nn.CrossEntropyLoss()
    b = args.batch_size
    if args.model == "gpt_small":
        x, y = torch.randint(0, 97, (b, 128)), torch.randint(0, 97, (b * 128,))
    else:
        x = torch.rand(b, 28, 28, 1).view(b, 1, 28, 28)  # NHWC with C = 1 is NCHW
        y = torch.randint(0, 10, (b,))

    def step():
        opt.zero_grad(set_to_none=True)
        out = net(x)
        loss = loss_fn(out.reshape(-1, out.shape[-1]), y)
        loss.backward()
        opt.step()

    def run_for(seconds):
        n, start = 0, time.perf_counter()
        while True:
            step()
            n += 1
            elapsed = time.perf_counter() - start
            if elapsed >= seconds:
                return n, elapsed

    run_for(args.warmup)
    rates = []
    for _ in range(args.windows):
        n, elapsed = run_for(args.window)
        rates.append(n * b / elapsed)
    ips = statistics.median(rates)
    if args.json:
        print(json.dumps({"model": args.model, "batch_size": b, "threads": args.threads,
                          "images_per_second": round(ips, 1)}))
    else:
        print(f"{args.model} batch {b} threads {args.threads}: {ips:.1f} images/s (torch {torch.__version__})")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
