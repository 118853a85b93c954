"""The mechanism vocabulary's accountant face: regions, trade-off functions and loss laws.

Oracles: brute-force hockey-stick sums over the outputs, δ(ε) integrated from a loss law's tail
(``δ(ε) = P(L = inf) + ∫_ε^∞ e^{ε - c} P(L > c) dc``, a different formula from every closed form used),
and the Balle–Wang closed form written out here.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import integrate, stats

from lpdp import PrivacyRegion
from lpdp.errors import ParameterError
from lpdp.mechanisms import (
    DPMechanism,
    FiniteMechanism,
    GaussianMechanism,
    LaplaceMechanism,
    RegionMechanism,
    TradeoffMechanism,
    mechanism_from_dict,
    pure,
    randomized_response,
)
from lpdp.tradeoff import gaussian, laplace


def hockey(p, q, eps):
    return float(np.sum(np.maximum(np.asarray(p) - math.exp(eps) * np.asarray(q), 0.0)))


def delta_from_law(law, eps):
    """δ(ε) from the law: atoms summed, the continuous part integrated from its tail."""
    atoms = sum(math.exp(lp) * -math.expm1(eps - L) for L, lp in zip(law.losses, law.log_p, strict=True)
                if L > eps)
    cont = 0.0
    if law.log_sf is not None:
        lo, hi = max(eps, law.support[0]), law.support[1]
        hi = min(hi, eps + 60.0)
        if hi > lo:
            cont, _ = integrate.quad(lambda c: math.exp(eps - c + float(law.log_sf(np.array([c]))[0])),
                                     lo, hi, epsabs=1e-14, epsrel=1e-10, limit=200)
    return math.exp(law.log_p_inf) + atoms + cont


def balle_wang(eps, mu):
    return stats.norm.cdf(-eps / mu + mu / 2) - math.exp(eps) * stats.norm.cdf(-eps / mu - mu / 2)


@pytest.mark.parametrize("eps", [0.0, 0.3, 1.0, 2.5])
@pytest.mark.parametrize("sigma,sens", [(1.0, 1.0), (3.0, 2.0)])
def test_gaussian_law_and_profile(eps, sigma, sens):
    m = GaussianMechanism(sigma, sens)
    mu = sens / sigma
    assert float(m.delta(eps)) == pytest.approx(balle_wang(eps, mu), rel=1e-9, abs=1e-15)
    assert float(m.tradeoff().delta(eps)) == float(m.delta(eps))
    assert delta_from_law(m.loss_law(), eps) == pytest.approx(balle_wang(eps, mu), rel=1e-7, abs=1e-13)
    law = m.loss_law()
    c = np.array([-1.0, 0.2, 3.0])
    assert np.allclose(np.exp(law.log_sf(c)) + np.exp(law.log_cdf(c)), 1.0, rtol=1e-12)
    assert np.allclose(np.exp(law.log_sf(c)), [m.loss_tail(x, sens, 0.0) for x in c], rtol=1e-12)


@pytest.mark.parametrize("eps", [0.0, 0.4, 0.99])
@pytest.mark.parametrize("scale,sens", [(1.0, 1.0), (0.5, 2.0)])
def test_laplace_law_and_profile(eps, scale, sens):
    m = LaplaceMechanism(scale, sens)
    r = sens / scale
    law = m.loss_law()
    # Total mass one; the tail agrees with the filters' loss_tail (atom at r included there).
    assert math.fsum(np.exp(law.log_p)) + float(np.exp(law.log_sf(np.array([-r - 1]))[0])) == \
        pytest.approx(1.0, rel=1e-12)
    for c in (-r + 1e-3, 0.0, r / 2):
        assert 0.5 + float(np.exp(law.log_sf(np.array([c]))[0])) == pytest.approx(m.loss_tail(c, sens, 0.0))
        assert float(np.exp(law.log_cdf(np.array([c]))[0])) == pytest.approx(
            1.0 - m.loss_tail(c, sens, 0.0) - math.exp(-r) / 2, rel=1e-9)
    expected = -math.expm1(min(eps - r, 0.0) / 2)         # Laplace profile (Dong, Roth and Su)
    assert delta_from_law(law, eps * r) == pytest.approx(-math.expm1((eps * r - r) / 2), rel=1e-8)
    assert float(m.tradeoff().delta(eps)) == pytest.approx(-math.expm1(min(eps - r, 0.0) / 2), rel=1e-12)
    assert expected >= 0


def test_tradeoff_mechanism_law_matches_the_gaussian():
    g, t = GaussianMechanism(2.0), TradeoffMechanism(gaussian(0.5))
    c = np.array([-0.5, 0.125, 1.0])
    assert np.allclose(t.loss_law().log_sf(c), g.loss_law().log_sf(c), atol=1e-8)
    assert delta_from_law(t.loss_law(), 0.5) == pytest.approx(balle_wang(0.5, 0.5), rel=1e-6)
    with pytest.raises(ParameterError, match="no sampler"):
        t.sample(0, np.random.default_rng(0))
    with pytest.raises(ParameterError, match="no finite dominating pair"):
        t.region()


@pytest.mark.parametrize("eps", [0.0, 0.5, 1.2])
def test_finite_pair_both_orders(eps):
    p, q = [0.5, 0.3, 0.2, 0.0], [0.1, 0.3, 0.5, 0.1]
    m = FiniteMechanism.from_pair(p, q)
    assert not m.is_symmetric and m.is_finite
    assert float(m.region().delta(eps)) == pytest.approx(hockey(p, q, eps), rel=1e-12)
    assert delta_from_law(m.loss_law(), eps) == pytest.approx(hockey(p, q, eps), rel=1e-12)
    assert delta_from_law(m.loss_law(reverse=True), eps) == pytest.approx(hockey(q, p, eps), rel=1e-12)


@pytest.mark.parametrize("k,eps0", [(2, 0.5), (4, 0.7), (7, 1.3)])
def test_randomized_response_region(k, eps0):
    m = randomized_response(k, eps0)
    keep = math.exp(eps0) / (math.exp(eps0) + k - 1)
    p = [keep] + [(1 - keep) / (k - 1)] * (k - 1)
    q = [(1 - keep) / (k - 1), keep] + [(1 - keep) / (k - 1)] * (k - 2)
    assert m.is_symmetric
    for e in (0.0, eps0 / 2, eps0):
        assert float(m.region().delta(e)) == pytest.approx(hockey(p, q, e), rel=1e-12, abs=1e-15)


def test_dp_mechanism_meets_each_constraint_tightly():
    cons = [(1.0, 0.0), (0.5, 0.1), (0.2, 0.25)]
    m = DPMechanism(cons)
    for e, d in cons:          # every constraint holds; the first two are tight (the third is implied)
        assert float(m.region().delta_lower(e)) <= d
    for e, d in cons[:2]:
        assert float(m.region().delta(e)) == pytest.approx(d, abs=1e-12)
    # As a filter mechanism its table is the same pair: brute force on the rows gives the same δ.
    for e in (0.0, 0.3, 0.7):
        assert hockey(m.probabilities(0), m.probabilities(1), e) == pytest.approx(
            float(m.region().delta(e)), rel=1e-9, abs=1e-12)
    assert pure(0.5).is_pure and not m.is_pure
    assert float(pure(0.5).region().delta(0.0)) == pytest.approx(math.tanh(0.25), rel=1e-12)


def test_region_mechanism_reverse_law_and_round_trip():
    r = PrivacyRegion.from_pair([0.6, 0.3, 0.1, 0.0], [0.0, 0.2, 0.5, 0.3])
    m = RegionMechanism(r)
    for e in (0.0, 0.4):
        assert delta_from_law(m.loss_law(reverse=True), e) == pytest.approx(
            hockey([0.0, 0.2, 0.5, 0.3], [0.6, 0.3, 0.1, 0.0], e), rel=1e-12)
    for mech in (m, DPMechanism([(1.0, 1e-6), (0.3, 0.01)]),
                 FiniteMechanism.from_pair([0.5, 0.5], [0.2, 0.8]), randomized_response(3, 0.4)):
        back = mechanism_from_dict(mech.to_dict())
        assert np.allclose(back.region().delta([0.0, 0.5]), mech.region().delta([0.0, 0.5]), rtol=1e-12)


def test_tradeoff_epsilon_inverts_delta():
    for f in (gaussian(0.7), laplace(2.0)):
        for d in (1e-2, 1e-6):
            e = f.epsilon(d)
            assert float(f.delta(e)) <= d < float(f.delta(max(e - 1e-9, 0.0))) or e == 0.0
    assert gaussian(1.0).epsilon([1e-3, 1e-6]).shape == (2,)


@pytest.mark.parametrize("make,match", [
    (lambda: DPMechanism([(1.0, 2.0)]), r"constraints\[0\]\.delta=2\.0"),
    (lambda: DPMechanism([(1.0,)]), r"constraints\[0\]=\(1\.0,\): must be an \(epsilon, delta\) pair"),
    (lambda: pure(-1.0), r"epsilon=-1\.0"),
    (lambda: FiniteMechanism({0: [1.0], 1: [1.0], 2: [1.0]}).region(), r"pair=None"),
    (lambda: FiniteMechanism({0: [1.0], 1: [1.0]}, pair=(0, 0)), r"pair=\(0, 0\)"),
    (lambda: RegionMechanism("R"), r"region='R'"),
    (lambda: TradeoffMechanism(1.0), r"f=1\.0"),
    (lambda: GaussianMechanism(1.0).region(), r"no finite dominating pair"),
])
def test_errors(make, match):
    with pytest.raises(ParameterError, match=match):
        make()


# -- extreme parameters: answers stay finite and on their side, or one clear error -----------------
def test_laplace_loss_law_tails_at_large_epsilon_match_a_high_precision_reference():
    """The continuous part's log-cdf, ``log(e^{-r}(e^{(c+r)/2} - 1)/2)``, used to overflow for r >= 1420."""
    import mpmath

    mpmath.mp.dps = 40
    r = 3000.0
    law = LaplaceMechanism(1.0 / r).loss_law()
    for c in (-2999.0, -1.0, 0.0, 2500.0, 2999.999):
        ref_cdf = mpmath.log(mpmath.e ** -r * (mpmath.e ** ((c + r) / 2) - 1) / 2)
        ref_sf = mpmath.log((1 - mpmath.e ** ((c - r) / 2)) / 2)
        assert float(law.log_cdf(np.array([c]))[0]) == pytest.approx(float(ref_cdf), rel=1e-13)
        assert float(law.log_sf(np.array([c]))[0]) == pytest.approx(float(ref_sf), rel=1e-13, abs=1e-15)


def test_gaussian_epsilon_beyond_a_million_is_finite_and_valid():
    """ε(δ) of G_μ once gave up above 10^6 and answered inf (an attack bound above the truth)."""
    import mpmath

    mpmath.mp.dps = 60
    mu = 1000.0 * math.sqrt(3.0)
    eps = gaussian(mu).epsilon(1e-5)
    assert math.isfinite(eps) and eps > 1e6

    def delta(e: float) -> float:
        e, m = mpmath.mpf(e), mpmath.mpf(mu)
        return float(mpmath.ncdf(-e / m + m / 2) - mpmath.e ** e * mpmath.ncdf(-e / m - m / 2))

    assert delta(eps) <= 1e-5 < delta(eps * (1 - 1e-9))


@pytest.mark.parametrize("make, name", [
    (lambda: GaussianMechanism(1e-200), "sigma"),
    (lambda: gaussian(1e200), "mu"),
    (lambda: LaplaceMechanism(1e-300), "scale"),
    (lambda: laplace(1e-300), "b"),
])
def test_mechanisms_beyond_double_range_are_refused_naming_the_parameter(make, name):
    with pytest.raises(ParameterError, match=name):
        make()
