"""Soundness of the mechanism-level faces the filters' baselines charge: one round's Rényi divergence,
zCDP ρ and δ(ε), and the Rényi and zCDP budgets, against 50-digit mpmath on the exact double inputs. An
upper value is never below the truth and a budget never above it (no tolerance); each is within a small
margin of the truth on the other side, so the checks can fail both ways. The named cases were found
below the truth when these values were rounded to nearest (or a few ulps up after a cancelling sum)."""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest

from lpdp.filters.baselines import ConcentratedFilter, RenyiFilter, zcdp_budget
from lpdp.mechanisms import (
    FiniteMechanism,
    GaussianMechanism,
    LaplaceMechanism,
    MixtureMechanism,
    randomized_response,
)

M = mpmath.mpf
U = 2.0 ** -53


@pytest.fixture(autouse=True)
def _digits():
    with mpmath.workdps(50):
        yield


def _upper(got: float, truth, rel: float, absolute: float = 0.0) -> None:
    assert M(got) >= truth, (got, truth)
    assert M(got) - truth <= rel * abs(truth) + absolute, (got, truth)


def _lower(got: float, truth, rel: float) -> None:
    assert M(got) <= truth, (got, truth)
    assert truth - M(got) <= rel * abs(truth), (got, truth)


def _bw(eps, mu):
    eps = M(eps)
    return mpmath.ncdf(-eps / mu + mu / 2) - mpmath.exp(eps) * mpmath.ncdf(-eps / mu - mu / 2)


def test_gaussian_round_faces():
    rng = np.random.default_rng(5)
    cases = [(29.682493391245604, 0.10274959828871162, 0.05102723256794995), (3.0, 1.0, 0.5),
             (7.0, 1.0, 0.1), (0.3, 1.0, 2.0)]
    cases += [(float(rng.uniform(0.2, 30)), float(rng.uniform(0.05, 3)), float(rng.uniform(0, 3)))
              for _ in range(40)]
    for sigma, sens, eps in cases:
        m, mu = GaussianMechanism(sigma, sens), M(sens) / M(sigma)
        _upper(float(m.delta(eps)), _bw(eps, mu), 1e-11, 1e-300)
        _upper(m.round_delta(eps), _bw(eps, mu), 1e-11, 1e-300)
        _upper(m.zcdp_rho(), mu * mu / 2, 2 * U)
        for alpha in (1.5, 2.0, 7.25):
            _upper(m.renyi(alpha), M(alpha) * mu * mu / 2, 2 * U)
        e = m.round_epsilon(1e-6)
        assert _bw(e, mu) <= M(1e-6)


def test_laplace_round_faces():
    rng = np.random.default_rng(6)
    scales = [100.0, 1000.0, 0.13, 1.0] + [float(10 ** rng.uniform(-1, 3)) for _ in range(30)]
    for b in scales:
        m, r = LaplaceMechanism(b), 1 / M(b)
        _upper(m.zcdp_rho(), r * r / 2, 2 * U)
        for a in (M(1.01), M(2.0), M(5.5)):
            truth = mpmath.log(a / (2 * a - 1) * mpmath.exp((a - 1) * r)
                               + (a - 1) / (2 * a - 1) * mpmath.exp(-a * r)) / (a - 1)
            _upper(m.renyi(float(a)), truth, 1e-9, 1e-12)


def _finite_renyi(p, q, a):
    a = M(a)
    return max(mpmath.log(sum(M(x) ** a * M(y) ** (1 - a) for x, y in zip(p, q, strict=True))),
               mpmath.log(sum(M(y) ** a * M(x) ** (1 - a) for x, y in zip(p, q, strict=True)))) / (a - 1)


def test_finite_round_faces():
    rng = np.random.default_rng(7)
    pairs = [([0.5, 0.5], [0.5 + 2 ** -20, 0.5 - 2 ** -20]),
             ([0.45715998747546616, 0.5428400125245338], [0.45716005318815567, 0.5428399468118443])]
    for _ in range(20):
        p = rng.dirichlet(np.ones(3))
        q = p * np.exp(rng.normal(0, 10 ** rng.uniform(-6, 0), 3))
        pairs.append((p.tolist(), (q / q.sum()).tolist()))
    for p, q in pairs:
        m = FiniteMechanism.from_pair(p, q)
        for a in (1.5, 2.0, 4.0):
            _upper(m.renyi(a), _finite_renyi(p, q, a), 1e-6, 1e-12)     # the region's own error bound
        top = max(abs(mpmath.log(M(x) / M(y))) for x, y in zip(p, q, strict=True))
        _upper(m.zcdp_rho(), top * top / 2, 1e-6, 1e-12)
    for eps0 in (0.001, 0.3, 2.0):
        rr, e = randomized_response(2, eps0), M(eps0)
        keep = mpmath.exp(e) / (1 + mpmath.exp(e))
        a = M(1.5)
        truth = mpmath.log(keep ** a * (1 - keep) ** (1 - a) + (1 - keep) ** a * keep ** (1 - a)) / (a - 1)
        _upper(rr.renyi(1.5), truth, 1e-6, 1e-13)


def test_mixture_renyi():
    for s1, s2, w in ((512.0, 2048.0, 0.25), (3.0, 1.0, 0.5), (40.0, 90.0, 0.9)):
        m = MixtureMechanism([(GaussianMechanism(s1), None), (GaussianMechanism(s2), None)], [w, 1 - w])
        a = M(2)
        truth = mpmath.log(M(w) * mpmath.exp(a / (2 * M(s1) ** 2))
                           + (1 - M(w)) * mpmath.exp(a / (2 * M(s2) ** 2)))
        _upper(m.renyi(2.0), truth, 1e-6, 1e-13)


def test_renyi_and_zcdp_budgets_are_never_above_the_truth():
    rng = np.random.default_rng(8)
    cases = [(0.6107827549382784, 0.10336415103175, 4.715718986160797)]
    for _ in range(60):
        delta = float(10 ** rng.uniform(-12, -0.5))
        alpha = float(rng.uniform(1.1, 30))
        eps = float(-math.log(delta) / (alpha - 1) * (1 + 10 ** rng.uniform(-12, 0)))   # near cancellation
        cases.append((eps, delta, alpha))
    for eps, delta, alpha in cases:
        truth = M(eps) - mpmath.log(1 / M(delta)) / (M(alpha) - 1)
        got = RenyiFilter(eps, delta, alpha).rdp_budget
        assert M(got) <= truth and truth - M(got) <= 1e-13 * (M(eps) + abs(truth)), (eps, delta, alpha)
    zcases = [(0.0005015378529479409, 8.506132945113415e-164)]
    zcases += [(float(10 ** rng.uniform(-4, 2)), float(10 ** rng.uniform(-200, -1))) for _ in range(60)]
    for eps, delta in zcases:
        big_l = mpmath.log(1 / M(delta))
        _lower(zcdp_budget(eps, delta), (mpmath.sqrt(big_l + eps) - mpmath.sqrt(big_l)) ** 2, 64 * U)


def test_filters_grant_no_round_beyond_the_exact_budget():
    """Boundary cases: the exact budget allows 7.99999... and 36.99999... rounds."""
    g = GaussianMechanism(2.801306297156727)
    assert RenyiFilter(35.12958763010979, 1.795673710488566e-05, 1.3171245571807564).iid_stopping_time(g) <= 7
    g = GaussianMechanism(8.482160515127354)
    assert ConcentratedFilter(4.026013998037762, 1.0051326550956026e-06).iid_stopping_time(g) <= 36
