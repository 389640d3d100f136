"""bench/allreduce_model.py: the alpha-beta-gamma fit recovers known parameters from points made by
the closed forms of docs/collectives.md, and its crossover is where the cheaper closed form changes."""
import importlib.util
import math
import pathlib

import pytest

_PATH = pathlib.Path(__file__).resolve().parents[2] / "bench" / "allreduce_model.py"
_spec = importlib.util.spec_from_file_location("allreduce_model", _PATH)
model = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(model)

SIZES = [4 << 10, 64 << 10, 1 << 20, 16 << 20, 64 << 20]


def closed_ring(p, n, alpha, beta, gamma):
    return 2 * (p - 1) * alpha + 2 * (p - 1) / p * n * beta + (p - 1) / p * n * gamma


def closed_rd(p, n, alpha, beta, gamma):
    q = 2 ** int(math.floor(math.log2(p)))
    t = math.log2(q) * (alpha + n * beta + n * gamma)
    if p > q:
        t += 2 * alpha + 2 * n * beta + n * gamma
    return t


def test_cost_matches_the_closed_forms():
    for p in (2, 3, 4, 5, 8, 64, 1024):
        for n in SIZES:
            assert model.cost("ring", p, n, 3e-5, 1e-9, 4e-10) == pytest.approx(closed_ring(p, n, 3e-5, 1e-9, 4e-10))
            assert model.cost("recursive_doubling", p, n, 3e-5, 1e-9, 4e-10) == \
                pytest.approx(closed_rd(p, n, 3e-5, 1e-9, 4e-10))
    with pytest.raises(ValueError, match="unknown algorithm 'tree'"):
        model.cost("tree", 4, 1, 0, 0, 0)


@pytest.mark.parametrize("algorithm,closed", [("ring", closed_ring), ("recursive_doubling", closed_rd)])
def test_fit_recovers_alpha_and_per_rate_beta(algorithm, closed):
    gamma = 3e-10
    alpha, betas = 4e-5, {"1gbit": 8.5e-9, "10gbit": 1.2e-9, "25gbit": 9e-10}
    points = [(algorithm, p, n, rate, closed(p, n, alpha, b, gamma))
              for rate, b in betas.items() for p in (2, 4) for n in SIZES]
    got_alpha, got_betas = model.fit(points, gamma)
    assert got_alpha == pytest.approx(alpha, rel=1e-6)
    for rate, b in betas.items():
        assert got_betas[rate] == pytest.approx(b, rel=1e-6)


def test_fit_holds_a_negative_parameter_at_zero():
    # Times with no latency term at all, scaled by 1 +- 2% noise: alpha would come out slightly
    # negative by plain least squares; it is held at zero and beta still fits.
    gamma, beta = 0.0, 2e-9
    points = [("ring", p, n, "10gbit", closed_ring(p, n, 0.0, beta, gamma) * (1.02 if k % 2 else 0.98))
              for k, (p, n) in enumerate((p, n) for p in (2, 4) for n in SIZES)]
    alpha, betas = model.fit(points, gamma)
    assert alpha >= 0
    assert betas["10gbit"] == pytest.approx(beta, rel=0.03)


def test_crossover_is_where_the_cheaper_algorithm_changes():
    gamma = 5e-10
    ring, rd = (3e-5, 1e-9), (2e-5, 1.5e-9)
    for p in (2, 3, 4, 8, 64, 1024):
        x = model.crossover(p, ring, rd, gamma)
        assert 0 < x < math.inf
        below, above = x * 0.99, x * 1.01
        assert closed_rd(p, below, rd[0], rd[1], gamma) < closed_ring(p, below, ring[0], ring[1], gamma)
        assert closed_rd(p, above, rd[0], rd[1], gamma) > closed_ring(p, above, ring[0], ring[1], gamma)
    # Recursive doubling that is cheaper per byte and per message always wins; dearer in both, never.
    assert model.crossover(2, (1e-5, 1e-9), (1e-6, 1e-10), 0.0) == math.inf
    assert model.crossover(4, (1e-6, 1e-10), (1e-3, 1e-8), gamma) == 0.0
