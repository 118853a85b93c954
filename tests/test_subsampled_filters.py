"""The mechanism-level faces of Poisson-subsampled mechanisms (what the classical filters charge): Rényi
divergences against dp_accounting's RDP accountant (the sampled Gaussian) and mpmath (both directions; exact
finite sums), one round's δ(ε) against mpmath, zCDP's ρ against D_α / α, and every filter and baseline on
a DP-SGD step."""

from __future__ import annotations

import math

import mpmath
import pytest
from dp_accounting.rdp import rdp_privacy_accountant as rdp

from lpdp.cli import main
from lpdp.errors import NotApplicableError
from lpdp.filters import baselines
from lpdp.mechanisms import DPMechanism, GaussianMechanism, pure, randomized_response, subsampled
from lpdp.mechanisms.subsampled import SubsampledMechanism


def _gaussian_pair(sigma: float, rate: float, add: bool):
    """Densities of the removal pair (q N(1, σ²) + (1 - q) N(0, σ²), N(0, σ²)) or its mirror, mpmath."""
    s, q = mpmath.mpf(sigma), mpmath.mpf(rate)

    def mix(y):
        return q * mpmath.npdf(y, 1, s) + (1 - q) * mpmath.npdf(y, 0, s)

    def null(y):
        return mpmath.npdf(y, 0, s)

    return (null, mix) if add else (mix, null)


def _gaussian_renyi(sigma: float, rate: float, alpha: float, add: bool) -> mpmath.mpf:
    """``D_α(P||Q) = log ∫ p^α q^{1-α} / (α - 1)`` by quadrature (30 digits)."""
    mpmath.mp.dps = 30
    p, q = _gaussian_pair(sigma, rate, add)
    a = mpmath.mpf(alpha)
    cuts = [-40 * sigma - 10, -5, 0, 1, 5, 40 * sigma + 10 + alpha / sigma ** 2]
    return mpmath.log(mpmath.quad(lambda y: p(y) ** a * q(y) ** (1 - a), cuts)) / (a - 1)


def _gaussian_delta(sigma: float, rate: float, eps: float, add: bool) -> mpmath.mpf:
    """``∫ (p - e^ε q)_+`` by quadrature, split where the integrand's kink is: the removal loss
    ``log(q e^{(2y - 1)/2σ²} + 1 - q)`` equals ε (or -ε for the addition pair)."""
    mpmath.mp.dps = 30
    p, q = _gaussian_pair(sigma, rate, add)
    e = mpmath.e ** mpmath.mpf(eps)
    r = mpmath.mpf(rate)
    level = 1 / e if add else e
    kink = [sigma ** 2 * mpmath.log((level - 1 + r) / r) + mpmath.mpf(1) / 2] if level - 1 + r > 0 else []
    cuts = sorted([-40 * sigma - 10, -5, 0, 1, 5, 40 * sigma + 10] + kink)
    return mpmath.quad(lambda y: max(mpmath.mpf(0), p(y) - e * q(y)), cuts)


@pytest.mark.parametrize(("sigma", "rate"), [(1.0, 0.01), (0.8, 0.1), (2.0, 0.3)])
def test_sampled_gaussian_renyi_against_dp_accountings_rdp(sigma, rate):
    """Integer orders: the same value as dp_accounting's RDP of the Poisson-subsampled Gaussian (Mironov,
    Talwar and Zhang 2019), never below it; fractional orders: at least dp_accounting's fractional value."""
    m = subsampled(GaussianMechanism(sigma), rate)
    ints = [2, 3, 5, 8, 16, 32]
    ref = rdp._compute_rdp_poisson_subsampled_gaussian(rate, sigma, ints)
    for a, r in zip(ints, ref, strict=True):
        d = m.renyi(a)
        assert r <= d <= r * (1 + 1e-10) + 1e-300
    fracs = [1.5, 2.5, 7.25]
    for a, r in zip(fracs, rdp._compute_rdp_poisson_subsampled_gaussian(rate, sigma, fracs), strict=True):
        if math.isfinite(r):           # its fractional series gives up (inf) for some parameters
            assert m.renyi(a) >= r


@pytest.mark.parametrize("alpha", [2, 3, 6])
def test_sampled_gaussian_renyi_bounds_both_directions(alpha):
    sigma, rate = 1.0, 0.2
    d = subsampled(GaussianMechanism(sigma), rate).renyi(alpha)
    removal = _gaussian_renyi(sigma, rate, alpha, False)
    addition = _gaussian_renyi(sigma, rate, alpha, True)
    assert addition <= removal <= d                     # A_α >= B_α; exact for the removal pair
    assert d - removal <= 1e-12 * removal


def _rows(m) -> tuple[list, list]:
    """The subsampled pair's rows (q P + (1 - q) Q, Q) of a finite mechanism, in mpmath."""
    inner = m.mechanism
    q = mpmath.mpf(m.rate)
    a, b = m._pair()
    p_row = [mpmath.mpf(x) for x in inner.probabilities(a)]
    q_row = [mpmath.mpf(x) for x in inner.probabilities(b)]
    return [q * x + (1 - q) * y for x, y in zip(p_row, q_row, strict=True)], q_row


@pytest.mark.parametrize("mechanism", [pure(1.0), randomized_response(3, 1.0), randomized_response(4, 0.7)])
@pytest.mark.parametrize("rate", [0.01, 0.2])
def test_finite_renyi_and_round_delta_are_exact_in_both_directions(mechanism, rate):
    mpmath.mp.dps = 40
    m = subsampled(mechanism, rate)
    first, second = _rows(m)
    for alpha in (1.5, 2.0, 7.0):
        a = mpmath.mpf(alpha)
        truth = max(mpmath.log(sum(x ** a * y ** (1 - a) for x, y in zip(p, q, strict=True))) / (a - 1)
                    for p, q in ((first, second), (second, first)))
        d = m.renyi(alpha)
        assert truth <= d <= truth * (1 + 1e-12) + 1e-13      # the region's float error, charged
    for eps in (0.0, 0.005, 0.02):
        e = mpmath.e ** mpmath.mpf(eps)
        truth = max(sum(max(mpmath.mpf(0), x - e * y) for x, y in zip(p, q, strict=True))
                    for p, q in ((first, second), (second, first)))
        d = m.round_delta(eps)
        assert truth <= d <= truth * (1 + 1e-12) + 1e-15


def test_gaussian_round_delta_brackets_the_integral():
    sigma, rate = 1.0, 0.1
    m = subsampled(GaussianMechanism(sigma), rate)
    for eps in (0.0, 0.1, 0.5):
        truth = max(_gaussian_delta(sigma, rate, eps, add) for add in (False, True))
        d = m.round_delta(eps)
        assert truth <= d <= truth * (1 + 1e-3)
    e = m.round_epsilon(1e-5)
    assert max(_gaussian_delta(sigma, rate, e, add) for add in (False, True)) <= 1e-5


def test_zcdp_rho_bounds_every_order():
    """ρ >= D_α / α at every order checked (zCDP's definition), amplified for bounded losses; the
    subsampled Gaussian keeps the mechanism's ρ (D_α / α tends to μ²/2 as α grows)."""
    m = subsampled(pure(1.0), 0.1)
    rho = m.zcdp_rho()
    assert rho <= pure(1.0).zcdp_rho() / 10       # ε' = log(1 + q(e - 1)) ~ 0.16
    for alpha in (1.5, 4.0, 50.0):
        assert m.renyi(alpha) <= alpha * rho
    g = subsampled(GaussianMechanism(1.0), 0.1)
    assert g.zcdp_rho() >= GaussianMechanism(1.0).zcdp_rho()
    assert g.renyi(400) / 400 >= 0.95 * g.zcdp_rho()   # no smaller ρ is valid
    with pytest.raises(NotApplicableError, match="not zCDP"):
        subsampled(DPMechanism([(1.0, 1e-3)]), 0.1).zcdp_rho()


def test_every_baseline_runs_on_a_dpsgd_step():
    m = subsampled(GaussianMechanism(1.0), 0.1)
    out = baselines(m, 4.0, 1e-3)
    assert set(out) >= {"additive", "advanced", "concentrated", "renyi", "classical"}
    for name, b in out.items():         # every baseline charges: none is "not applicable"
        assert b.rounds >= 0 and not b.note, name
    assert out["renyi"].rounds >= 1 and out["additive"].rounds >= 1
    assert out["concentrated"].rounds == 0     # ρ = μ²/2 = 0.5 per round: no amplification in zCDP
    # the classical composition (certified accountant) is the most rounds a valid filter can grant
    assert all(b.rounds <= out["classical"].rounds for b in out.values() if not b.at_least)


def test_fixed_size_batches_are_refused_in_filters():
    m = SubsampledMechanism(GaussianMechanism(1.0, 2.0), 0.1, "fixed_size")
    for face in (lambda: m.renyi(2.0), lambda: m.round_delta(0.5), m.zcdp_rho):
        with pytest.raises(NotApplicableError, match="fixed-size"):
            face()


def test_the_filter_commands_list_every_baseline(capsys):
    assert main(["filter", "simulate", "--dpsgd", "noise_multiplier=1.0,sampling_rate=0.1,steps=4",
                 "--epsilon", "4", "--delta", "1e-3", "--max-steps", "8", "--trajectories", "5"]) == 0
    out = capsys.readouterr().out
    assert "not applicable" not in out and "not available" not in out
