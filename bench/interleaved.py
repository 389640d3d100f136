"""Runs weft and TensorFlow children in fresh processes, rounds interleaved (the order alternating
per round), for the peer benchmarks of whole Python programs (custom_loop.py, custom_layers.py).

    got = rounds({"weft": weft_python, "tf": tf_python}, lambda fw: [script_or_-c, ...], 3)

Each child prints one line "STEPS_PER_S <number>"; a child that does not ends the run with its
output. Returns {"weft": [...], "tf": [...]}, printing each round's figure as it comes."""
import os
import subprocess
import sys


def rounds(pythons, argv, count):
    got = {fw: [] for fw in pythons}
    names = list(pythons)
    for r in range(count):
        for fw in (names if r % 2 == 0 else names[::-1]):
            out = subprocess.run([pythons[fw]] + argv(fw), capture_output=True, text=True,
                                 env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3"))
            line = [ln for ln in out.stdout.splitlines() if ln.startswith("STEPS_PER_S")]
            if not line:
                sys.exit("%s failed:\n%s" % (fw, out.stdout + out.stderr))
            got[fw].append(float(line[0].split()[1]))
            print("round %d %-4s %8.1f steps/s" % (r + 1, fw, got[fw][-1]), flush=True)
    return got
