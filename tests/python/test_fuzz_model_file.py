"""Fuzzing the Python side of weft's file readers: whole-model files (``keras.models.load_model``:
a zip of JSON members and a checkpoint) and graph files loaded through ``weft.Graph(path=...)``,
whose names then cross into Python.

The C++ decoders have their own harness (tests/fuzz, docs/fuzzing.md); this one mutates files
made by weft's own writers the same deterministic way (seeded by input index; bit flips,
truncation, field overwrites with boundary values, splices) and also mutates the archive's
members one by one, re-zipped with valid CRCs, so the JSON and the config reach the model
builder. Contract: every input loads or raises a ``weft.errors.Error`` subclass; any other
exception fails the test with the input saved in pytest's tmp_path (copy it into
tests/fuzz/regressions/<target>/ with the fix: every run replays those). Bounded: a fixed number
of inputs per target (a few seconds).
"""
import io
import json
import os
import random
import struct
import zipfile
import zlib

import numpy as np
import pytest

import weft
from weft import keras
from weft.keras import layers

REGRESSIONS = os.path.join(os.path.dirname(__file__), "..", "fuzz", "regressions")
N_INPUTS = 300
# Values that break lengths, counts and types when written into a field or a JSON value.
INTERESTING_INTS = [0, 1, -1, 0x7F, 0x80, 0xFF, 0x7FFF, 0xFFFF, 0x7FFFFFFF, 0xFFFFFFFF, 2**32, 2**62, 2**63 - 1]
INTERESTING_JSON = [None, True, 0, -1, 2**31, 2**63, 10**400, 1e308, -0.0, "", "x" * 300, "\udcff", [], {}, [[[]]],
                    {"class_name": None}, "relu", "Dense"]


def mutate_bytes(data, rng, corpus):
    """1 to 4 stacked byte-level mutations (the same kinds as tests/fuzz/mutator.cc)."""
    b = bytearray(data)
    for _ in range(rng.randint(1, 4)):
        if not b:
            b = bytearray(rng.randbytes(rng.randint(1, 16)))
            continue
        kind = rng.randrange(7)
        if kind == 0:
            b[rng.randrange(len(b))] ^= 1 << rng.randrange(8)
        elif kind == 1:
            del b[rng.randrange(len(b)):]
        elif kind == 2:
            pos = rng.randrange(len(b))
            del b[pos:pos + rng.randint(1, 64)]
        elif kind == 3:
            pos = rng.randrange(len(b))
            b[pos:pos] = b[pos:pos + rng.randint(1, 128)]
        elif kind == 4:
            width = rng.choice([1, 2, 4, 8])
            if len(b) >= width:
                pos = rng.randrange(len(b) - width + 1)
                b[pos:pos + width] = (rng.choice(INTERESTING_INTS) % 2**(8 * width)).to_bytes(width, "little")
        elif kind == 5:
            pos = rng.randrange(len(b) + 1)
            b[pos:pos] = rng.randbytes(rng.randint(1, 16))
        else:
            other = rng.choice(corpus)
            b = b[:rng.randrange(len(b) + 1)] + other[rng.randrange(len(other) + 1):]
    return bytes(b)


def mutate_json(value, rng):
    """The JSON value with one randomly chosen value (at any depth) replaced, or a member dropped."""
    if isinstance(value, (dict, list)) and value and rng.random() < 0.75:
        keys = list(value.keys()) if isinstance(value, dict) else list(range(len(value)))
        k = rng.choice(keys)
        if isinstance(value, dict) and rng.random() < 0.1:
            return {kk: v for kk, v in value.items() if kk != k}
        out = dict(value) if isinstance(value, dict) else list(value)
        out[k] = mutate_json(value[k], rng)
        return out
    return rng.choice(INTERESTING_JSON)


def rezip(members):
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as z:
        for name, data in members.items():
            z.writestr(name, data)
    return out.getvalue()


def mutate_model_file(data, rng, corpus):
    """A third of the inputs byte-mutate the whole archive (the zip's own checks); the rest mutate
    one member (JSON-aware for the .json members) and re-zip it with valid CRCs."""
    if rng.random() < 1 / 3:
        return mutate_bytes(data, rng, corpus)
    with zipfile.ZipFile(io.BytesIO(data)) as z:
        members = {n: z.read(n) for n in z.namelist()}
    name = rng.choice(sorted(members))
    if name.endswith(".json") and rng.random() < 0.7:
        try:
            members[name] = json.dumps(mutate_json(json.loads(members[name]), rng)).encode()
        except ValueError:  # already not JSON (a mutated corpus entry)
            members[name] = mutate_bytes(members[name], rng, [members[name]])
    else:
        members[name] = mutate_bytes(members[name], rng, [members[name]])
    return rezip(members)


def save_input(directory, data):
    path = os.path.join(str(directory), "crash-%08x" % zlib.crc32(data))
    with open(path, "wb") as f:
        f.write(data)
    return path


def run_target(target, seeds, load, mutate, tmp_path):
    """Seeds (must load), the regression files, then N_INPUTS mutations of index 0..N-1."""
    path = str(tmp_path / ("input-" + target))

    def check(data, what):
        with open(path, "wb") as f:
            f.write(data)
        try:
            load(path)
        except weft.errors.Error:
            pass
        except Exception as e:  # noqa: BLE001 - any other exception is the finding
            saved = save_input(tmp_path, data)
            pytest.fail("%s %s raised %s: %s (input saved to %s)" % (target, what, type(e).__name__, e, saved))

    for s in seeds:
        with open(path, "wb") as f:
            f.write(s)
        load(path)  # a seed made by weft's own writer must load
    directory = os.path.join(REGRESSIONS, target)
    for name in sorted(os.listdir(directory)) if os.path.isdir(directory) else []:
        with open(os.path.join(directory, name), "rb") as f:
            check(f.read(), "regression file " + name)
    corpus = list(seeds)
    for i in range(N_INPUTS):
        rng = random.Random(i)
        check(mutate(rng.choice(corpus), rng, corpus), "input #%d" % i)


def model_seeds(tmp_path):
    x = keras.Input(shape=(4,))
    h = layers.Dense(5, activation="relu", name="hidden")(x)
    functional = keras.Model(x, layers.Dense(2)(layers.Add()([h, layers.Dense(5)(h)])))
    functional.compile(optimizer=keras.optimizers.Adam(0.01), loss="mse")
    sequential = keras.Sequential([layers.Dense(3, input_shape=(4,)), layers.Dropout(0.5), layers.Dense(1)])
    seeds = []
    for i, m in enumerate([functional, sequential]):
        p = str(tmp_path / ("seed%d.keras" % i))
        m.save(p)
        with open(p, "rb") as f:
            seeds.append(f.read())
    return seeds


def test_fuzz_model_file(tmp_path):
    run_target("keras", model_seeds(tmp_path), keras.models.load_model, mutate_model_file, tmp_path)


def graph_seeds():
    g = weft.Graph()
    with g.as_default():
        x = weft.compat.v1.placeholder(weft.float32, [None, 3], name="x")
        w = weft.Variable(np.ones((3, 2), np.float32), name="w")
        weft.nn.relu(weft.matmul(x, w), name="y")
    return [g.serialize()]


def load_graph(path):
    g = weft.Graph(path=path)
    [op.name for op in g.get_operations()]  # every name crosses into Python


def test_fuzz_graph_file_from_python(tmp_path):
    run_target("graph_python", graph_seeds(), load_graph, mutate_graph_file, tmp_path)


def mutate_graph_file(data, rng, corpus):
    """Byte mutations with the trailing CRC-32 recomputed (graph/graph_io.cc), so most inputs reach
    the node records."""
    b = mutate_bytes(data, rng, corpus)
    if len(b) >= 4 and rng.random() < 0.75:
        b = b[:-4] + struct.pack("<I", zlib.crc32(b[:-4]))
    return b
