"""weft, TensorFlow and PyTorch from PyPI in one process (issue 16): all import, whatever the order,
with the numpy they share (numpy 2), and each computes the same small dense layer; weft also trains
a Keras model there. Not a CI test (the peers are large): run it in a venv that holds them and weft,
e.g. the bench-only one:

    python -m pip install tensorflow-cpu==2.21.0 torch==2.15.0   # torch is optional here
    python -m pip install /path/to/weft                            # or a wheel: pip wheel . -w dist
    python bench/check_coexist.py                                  # exit 0: all present ones agree

Prints one line per framework and exits non-zero on a disagreement or a failed import. A missing
peer is reported and skipped, unless --require-all.
"""
import argparse
import importlib
import sys
import time


def _import(name):
    t = time.perf_counter()
    try:
        mod = importlib.import_module(name)
    except ImportError as e:
        return None, f"{name}: not importable ({e})"
    return mod, f"{name} {getattr(mod, '__version__', '?')} imported in {time.perf_counter() - t:.1f} s"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--order", default="tensorflow,torch,weft", help="import order, comma-separated")
    ap.add_argument("--require-all", action="store_true", help="fail when TensorFlow or PyTorch is missing")
    args = ap.parse_args()

    import numpy as np
    print(f"numpy {np.__version__}")
    mods, failed = {}, False
    for name in args.order.split(","):
        mod, line = _import(name)
        print(line)
        mods[name] = mod
        if mod is None and (name == "weft" or args.require_all):
            failed = True
    if mods.get("weft") is None:
        return 1

    rng = np.random.default_rng(0)
    x = rng.normal(size=(8, 5)).astype(np.float32)
    w = rng.normal(size=(5, 3)).astype(np.float32)
    want = np.maximum(x @ w, 0)  # relu(x @ w), the reference every framework must meet

    weft = mods["weft"]
    results = {"weft": weft.Session().run(weft.nn.relu(weft.constant(x) @ weft.constant(w)))}
    if mods.get("tensorflow") is not None:
        tf = mods["tensorflow"]
        results["tensorflow"] = tf.nn.relu(tf.matmul(tf.constant(x), tf.constant(w))).numpy()
    if mods.get("torch") is not None:
        torch = mods["torch"]
        results["torch"] = torch.relu(torch.from_numpy(x) @ torch.from_numpy(w)).numpy()
    for name, got in results.items():
        ok = np.allclose(got, want, rtol=1e-5, atol=1e-5)
        failed |= not ok
        print(f"{name:10s} relu(x @ w): {'agrees' if ok else 'DIFFERS'} (max error {np.abs(got - want).max():.2e})")

    # weft trains while the others are loaded (their thread pools and allocators live beside weft's).
    xs = rng.normal(size=(256, 5)).astype(np.float32)
    ys = (xs @ w[:, :1]).astype(np.float32)
    model = weft.keras.Sequential([weft.keras.layers.Dense(1, input_shape=(5,))])
    model.compile(loss="mse", optimizer=weft.keras.optimizers.SGD(0.05))
    loss = model.fit(xs, ys, batch_size=32, epochs=10, verbose=0).history["loss"]
    ok = loss[-1] < 0.05 * loss[0]
    failed |= not ok
    print(f"weft fit beside the peers: loss {loss[0]:.4f} -> {loss[-1]:.6f} ({'ok' if ok else 'DID NOT CONVERGE'})")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
