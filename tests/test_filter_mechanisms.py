"""Mechanisms: loss tails against Monte Carlo, quantiles against the generalised-inverse definition."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy import stats

from lpdp.errors import ParameterError
from lpdp.filters import (
    FiniteMechanism,
    GaussianMechanism,
    LaplaceMechanism,
    Request,
    SampledMechanism,
    binary_erasure,
    mechanism_from_dict,
    randomized_response,
)

LEVELS = [0.0, 1e-9, 1e-4, 0.01, 0.1, 0.25, 0.5, 0.6, 0.75, 0.9, 0.99, 1.0]


def mc_losses(mech, value, other, n=200_000, seed=0):
    """Loss samples from the mechanism's own sampler and log-density (no loss-law code involved)."""
    rng = np.random.default_rng(seed)
    y = mech.sample(value, rng, size=n)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.asarray(mech.log_density(y, value), float) - np.asarray(
            mech.log_density(y, other), float)


def assert_generalised_inverse(mech, a, value, other, step=1e-7):
    """u(a) = inf{c : P(L > c) <= a}: the tail at u is <= a, and just below u it is > a."""
    u = mech.loss_quantile(a, value, other)
    if u == -math.inf:
        assert a >= 1.0 or mech.loss_tail(-1e12, value, other) <= a
        return
    if u == math.inf:  # no finite level works (a = 0 for unbounded losses: underflows in floats)
        assert a == 0.0 or mech.loss_tail(1e12, value, other) > a
        return
    assert mech.loss_tail(u, value, other) <= a + 1e-15
    assert mech.loss_tail(u - step * max(1.0, abs(u)), value, other) > a


@pytest.mark.parametrize("mech, value, other", [
    (GaussianMechanism(2.0), 1.0, 0.0),
    (GaussianMechanism(0.7, sensitivity=2.0), 0.0, 1.5),
    (LaplaceMechanism(1.0), 1.0, 0.0),
    (LaplaceMechanism(0.5, sensitivity=3.0), 3.0, 0.0),
    (randomized_response(3, 1.2), 0, 2),
    (binary_erasure(0.3), 0, 1),
], ids=["gauss", "gauss-sens2", "laplace", "laplace-r6", "rr3", "erasure"])
def test_tail_matches_monte_carlo_and_quantile_is_generalised_inverse(mech, value, other):
    losses = mc_losses(mech, value, other)
    for c in np.linspace(-3, 3, 13) + 0.0137:  # off the atoms, where rounding decides ties
        p_hat = np.mean(losses > c)
        se = max(math.sqrt(p_hat * (1 - p_hat) / losses.size), 1e-4)
        assert abs(mech.loss_tail(float(c), value, other) - p_hat) <= 5 * se
    for a in LEVELS:
        assert_generalised_inverse(mech, a, value, other)


def test_gaussian_quantile_closed_form_against_scipy():
    m = GaussianMechanism(2.0)
    mu = 0.5
    for a in [1e-12, 9.1553e-6, 5.6e-4, 0.3]:
        expected = stats.norm(mu * mu / 2, mu).isf(a)
        assert m.loss_quantile(a, 1, 0) == pytest.approx(expected, rel=1e-10)
    assert m.loss_quantile(0.0, 1, 0) == math.inf
    assert m.loss_quantile(1.0, 1, 0) == -math.inf


def test_laplace_atoms_are_not_interpolated():
    m = LaplaceMechanism(1.0)  # r = 1: P(L = 1) = 1/2, P(L = -1) = e^{-1}/2
    assert m.loss_quantile(0.5, 1, 0) == 1.0
    assert m.loss_quantile(0.49, 1, 0) == 1.0
    assert m.loss_quantile(1 - math.exp(-1) / 2, 1, 0) == -1.0
    # np.quantile interpolates between the sample atoms: below the true quantile, anti-conservative
    losses = mc_losses(m, 1, 0)
    assert np.quantile(losses, 1 - 0.5) < m.loss_quantile(0.5, 1, 0)


def test_finite_quantile_lands_on_atoms_and_handles_infinity():
    rr = randomized_response(2, math.log(3.0))  # L = ln 3 w.p. 3/4, -ln 3 w.p. 1/4
    assert rr.loss_quantile(0.75, 0, 1) == pytest.approx(-math.log(3.0))
    assert rr.loss_quantile(0.7, 0, 1) == pytest.approx(math.log(3.0))
    er = binary_erasure(1e-3)  # L = +inf w.p. 1e-3, 0 otherwise
    assert er.loss_quantile(1e-3, 0, 1) == 0.0
    assert er.loss_quantile(9.99e-4, 0, 1) == math.inf
    assert er.loss_tail(0.0, 0, 1) == pytest.approx(1e-3)


@given(st.lists(st.floats(0.0, 1.0), min_size=2, max_size=5),
       st.lists(st.floats(0.0, 1.0), min_size=2, max_size=5),
       st.floats(0.0, 1.0))
def test_finite_quantile_brute_force(pw, qw, a):
    k = min(len(pw), len(qw))
    p, q = np.array(pw[:k]) + 1e-3, np.array(qw[:k]) + 1e-3
    q[0] = 0.0  # an output impossible under the other input: an atom at +inf
    p, q = p / p.sum(), q / q.sum()
    m = FiniteMechanism({"x": p.tolist(), "y": q.tolist()})
    with np.errstate(divide="ignore"):
        losses = np.log(p) - np.log(q)
    # brute force: the smallest candidate c (atoms or -inf) with sum of p over {L > c} <= a
    cands = sorted(set(losses.tolist()) | {-math.inf})
    expected = next((c for c in cands if p[losses > c].sum() <= a + 1e-12), math.inf)
    assert m.loss_quantile(a, "x", "y") == pytest.approx(expected)


def test_sampled_mechanism_is_conservative_at_its_confidence():
    g = GaussianMechanism(1.0)
    exact = g.loss_quantile(0.01, 1.0, 0.0)
    misses = 0
    for seed in range(30):
        m = SampledMechanism(g.sample, g.log_density, name="g", samples=5_000, confidence=0.9,
                             seed=seed)
        est = m.loss_quantile(0.01, 1.0, 0.0)
        misses += est < exact
        assert est < exact + 1.0  # and not absurdly loose
    # misses ~ Bin(30, <= 0.1): P(misses > 9) < 1e-3
    assert misses <= 9
    m = SampledMechanism(g.sample, g.log_density, name="g", samples=100, confidence=0.99)
    assert m.loss_quantile(1e-4, 1.0, 0.0) == math.inf  # too few samples to certify the level
    tail_upper = SampledMechanism(g.sample, g.log_density, name="g", samples=20_000).loss_tail(
        1.0, 1.0, 0.0)
    assert tail_upper >= g.loss_tail(1.0, 1.0, 0.0) - 0.01


def test_round_trip_through_dict():
    for m in [GaussianMechanism(2.0, 3.0), LaplaceMechanism(0.5), randomized_response(3, 1.0),
              binary_erasure(0.25)]:
        assert mechanism_from_dict(m.to_dict()) == m
    r = Request("q", {"a": 1.0, "b": 0.0})
    assert Request.from_dict(r.to_dict()) == r
    assert hash(Request.from_dict(r.to_dict())) == hash(r)


@pytest.mark.parametrize("make, match", [
    (lambda: GaussianMechanism(0.0), r"sigma=0\.0: must be finite and > 0"),
    (lambda: GaussianMechanism(1.0, sensitivity=-1), r"sensitivity=-1"),
    (lambda: LaplaceMechanism(-2.0), r"scale=-2\.0"),
    (lambda: randomized_response(1, 1.0), r"categories=1: must be an integer >= 2"),
    (lambda: randomized_response(2, -1.0), r"epsilon=-1\.0"),
    (lambda: binary_erasure(1.5), r"p=1\.5: must be in \[0, 1\]"),
    (lambda: FiniteMechanism({0: [0.5, 0.6]}), r"table\[0\].*must sum to 1"),
    (lambda: FiniteMechanism({0: [0.5, 0.5], 1: [1.0]}), r"different lengths"),
    (lambda: FiniteMechanism({0: [1.0]}, outputs=["a", "b"]), r"outputs=.*need 1 distinct"),
    (lambda: GaussianMechanism(1.0).loss_tail(0.0, 0.0, 2.0), r"sensitivity=1\.0"),
    (lambda: GaussianMechanism(1.0).loss_quantile(1.5, 0.0, 1.0), r"a=1\.5: must be in \[0, 1\]"),
    (lambda: Request("q", {0: 1})(5), r"request 'q': no input for database 5"),
    (lambda: randomized_response(2, 1.0).log_density(7, 0), r"output 7: not one of"),
    (lambda: mechanism_from_dict({"kind": "sampled", "name": "s"}), r"mechanism 's'"),
    (lambda: mechanism_from_dict({"kind": "nope"}), r"kind = 'nope' must be one of"),
    (lambda: SampledMechanism(None, None, name="s", confidence=1.0), r"confidence=1\.0"),
])
def test_bad_parameters_are_named(make, match):
    with pytest.raises(ParameterError, match=match):
        make()
