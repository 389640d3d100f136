"""bench/trace_concurrency.py: the time with 0, 1, 2 kernels running and the per-op figures of a
Chrome trace (weft-zoo train --trace), on a hand-made trace whose answers are worked out below."""
import importlib.util
import json
import pathlib

import pytest

_PATH = pathlib.Path(__file__).resolve().parents[2] / "bench" / "trace_concurrency.py"
_spec = importlib.util.spec_from_file_location("trace_concurrency", _PATH)
tc = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(tc)


def _event(name, op, ts, dur, tid):
    return {"name": name, "cat": op, "ph": "X", "ts": ts, "dur": dur, "pid": 0, "tid": tid, "args": {"op": op}}


# Thread 1: MatMul [0, 10), Add [15, 20); thread 2: BiasAddGrad [5, 15) then nothing until
# ApplyMomentum [22, 25). So over [0, 25): 0 running in [20, 22) = 2 us; 2 running in [5, 10) =
# 5 us; 1 running the other 18 us. Add starts the instant BiasAddGrad ends: not an overlap.
TRACE = {"traceEvents": [
    {"name": "process_name", "ph": "M", "pid": 0, "args": {"name": "CPU:0"}},
    _event("dense/MatMul", "MatMul", 0, 10, 1),
    _event("grad/BiasAddGrad", "BiasAddGrad", 5, 10, 2),
    _event("add", "Add", 15, 5, 1),
    _event("opt/ApplyMomentum", "ApplyMomentum", 22, 3, 2),
    _event("opt/ApplyMomentum_1", "ApplyMomentum", 30, 1, 2),
]}


def test_concurrency_levels(tmp_path):
    path = tmp_path / "t.json"
    path.write_text(json.dumps(TRACE))
    events = tc.load_events(str(path))
    assert len(events) == 5  # the metadata event is not a kernel
    conc = tc.concurrency(events)
    # The last ApplyMomentum [30, 31) adds 5 us idle (25..30) and 1 us with one running.
    assert conc == pytest.approx({0: 7.0, 1: 19.0, 2: 5.0})
    assert sum(conc.values()) == pytest.approx(31.0)


def test_summary_lists_ops_by_total_time(tmp_path, capsys):
    path = tmp_path / "t.json"
    path.write_text(json.dumps(TRACE))
    tc.main([str(path), "--top", "2"])
    out = capsys.readouterr().out
    assert "5 kernels over 0.03 ms" in out
    lines = out.splitlines()
    ops = [l.split()[0] for l in lines if l.startswith(("MatMul", "BiasAddGrad", "Add", "ApplyMomentum"))]
    assert ops == ["MatMul", "BiasAddGrad"]  # 10 us each, MatMul first (stable order); top 2 only
    momentum = tc.summarize(tc.load_events(str(path)), 10).splitlines()
    row = next(l for l in momentum if l.startswith("ApplyMomentum")).split()
    assert row[1] == "2"  # count
    assert float(row[4]) == pytest.approx(2.0)  # median of 3 and 1 us
    assert float(row[5]) == pytest.approx(3.0) and row[6] == "opt/ApplyMomentum"  # worst, and its node


def test_empty_trace_is_an_error(tmp_path):
    path = tmp_path / "t.json"
    path.write_text(json.dumps({"traceEvents": []}))
    with pytest.raises(SystemExit, match="no complete"):
        tc.main([str(path)])
