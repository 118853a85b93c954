"""The soundness suite's reference (tests/_reference.py) checked against other formulas: brute-force
enumeration of products, the multinomial enumeration and binomial recurrence of tests/oracles.py, and
quadrature and Monte Carlo for the two-run Laplace closed form. None of these call lpdp."""

from __future__ import annotations

import math

import numpy as np
import pytest

from tests import _reference as R
from tests.oracles import (
    brute_force_delta,
    dp_pair_mp,
    gaussian_delta_mp,
    kairouz_delta_mp,
    laplace_delta_mp,
    pair_power_delta_mp,
    rr_pair_mp,
)

EPS = [0.0, 0.3, 1.0, 2.2, 4.0]


def _close(a, b, rel=1e-25):
    return abs(float(a) - float(b)) <= rel * abs(float(b)) + 1e-300 or \
        abs(R.mpf(a) - R.mpf(b)) <= rel * abs(R.mpf(b)) + R.mpf(1e-300)


@pytest.mark.parametrize("e0, d0, k", [(0.5, 0.0, 7), (0.1, 1e-6, 40), (1.3, 0.01, 3), (2.0, 0.0, 25)])
def test_binomial_matches_kairouz_recurrence_and_pair_power(e0, d0, k):
    b, pw = R.Binomial(e0, d0, k), R.dp(e0, d0) ** k
    ref = kairouz_delta_mp(e0, d0, k, EPS)
    for e, r in zip(EPS, ref, strict=True):
        assert _close(b.delta(e), r)
        assert _close(pw.delta(e), r)


def test_binomial_large_k_tail_against_log_space_sum():
    """k = 10^5: the windowed closed form against a direct log-space sum over every count."""
    from scipy.special import gammaln, logsumexp

    e0, k = 0.01, 100_000
    b = R.Binomial(e0, 0.0, k)
    a = np.arange(k + 1)
    lp, lq = e0 - np.logaddexp(0, e0), -np.logaddexp(0, e0)
    logt = gammaln(k + 1) - gammaln(a + 1) - gammaln(k - a + 1) + a * lp + (k - a) * lq
    loss = (2 * a - k) * e0
    for eps in (0.0, 5.0, 20.0, 40.0):
        m = loss > eps
        direct = math.exp(logsumexp(logt[m] + np.log(-np.expm1(eps - loss[m]))))
        assert abs(float(b.delta(eps)) / direct - 1) < 1e-9


@pytest.mark.parametrize("K, e, k", [(3, 0.7, 6), (5, 0.7, 6), (10, 2.5, 4)])
def test_rr_power_matches_enumeration(K, e, k):
    ref = pair_power_delta_mp(rr_pair_mp(K, e), 0, k, EPS)
    for x, r in zip(EPS, ref, strict=True):
        assert _close(R.RRPower(K, e, k).delta(x), r)
        assert _close((R.rr(K, e) ** k).delta(x), r)


@pytest.mark.parametrize("cons, k", [([(1.0, 1e-3), (0.3, 0.05)], 3),
                                     ([(2.0, 0.0), (1.0, 1e-4), (0.2, 0.1)], 2)])
def test_constraints_pair_matches_geometry(cons, k):
    ref = pair_power_delta_mp(*dp_pair_mp(cons), k, EPS)
    for x, r in zip(EPS, ref, strict=True):
        assert _close((R.constraints(cons) ** k).delta(x), r, rel=1e-20)


def test_table_products_against_brute_force():
    p, q = [0.5, 0.25, 0.125, 0.125, 0.0], [0.125, 0.25, 0.5, 0.0625, 0.0625]
    for k in (1, 2, 3):
        pw = R.table(p, q) ** k
        bf = brute_force_delta(p, q, k, np.array(EPS))
        for x, r in zip(EPS, bf, strict=True):
            assert abs(float(pw.delta(x)) - r) <= 1e-14
        bf_rev = brute_force_delta(q, p, k, np.array(EPS))
        for x, r in zip(EPS, bf_rev, strict=True):
            assert abs(float(pw.mirror().delta(x)) - r) <= 1e-14


def test_gaussian_and_laplace_closed_forms():
    for mu, e in [(1.0, 0.5), (0.3, 2.0), (5.0, 10.0)]:
        assert _close(R.gaussian_delta(mu, e), gaussian_delta_mp(mu, [e])[0], rel=1e-40)
    for b, e in [(1.0, 0.3), (0.5, 1.5), (2.0, 0.0)]:
        assert _close(R.laplace_g1(1 / R.mpf(b), e), laplace_delta_mp(b, [e])[0], rel=1e-40)


def _laplace2_quadrature(a, t):
    """``laplace2_delta`` by mpmath quadrature of ``laplace_g1`` against the first run's density
    (split at the kinks ``l = t ∓ a``): the closed form's check (slow)."""
    a, t = R.mpf(a), R.mpf(t)
    with R.MP.workdps(45):
        out = R.laplace_g1(a, t - a) / 2 + R.MP.exp(-a) * R.laplace_g1(a, t + a) / 2
        pts = sorted({-a, a, *(x for x in (t - a, t + a) if -a < x < a)})
        out += R.MP.quad(lambda x: R.MP.exp(x / 2 - a / 2) / 4 * R.laplace_g1(a, t - x), pts)
        return +out


@pytest.mark.parametrize("b", [0.25, 0.5, 1.0, 3.0])
def test_laplace_two_runs_closed_form_against_quadrature(b):
    a = 1 / R.mpf(b)
    for t in (-3 * a, -2 * a, -1.5 * a, -a, -0.3 * a, 0.0, 0.2 * a, a, 1.7 * a, 1.999 * a, 2 * a, 2.5 * a):
        t = float(t)
        assert _close(R.laplace2_delta(a, t), _laplace2_quadrature(a, t), rel=1e-30)


def test_laplace_two_runs_closed_form_against_monte_carlo():
    rng = np.random.default_rng(0)
    x = rng.laplace(0.0, 1.0, (2, 2_000_000))
    loss = (np.abs(x - 1) - np.abs(x)).sum(axis=0)
    for e in (0.0, 0.5, 1.5):
        mc = np.maximum(0.0, 1 - np.exp(e - loss))
        ref = float(R.laplace2_delta(1, e))
        assert abs(mc.mean() - ref) < 5 * mc.std() / math.sqrt(mc.size)


@pytest.mark.parametrize("K, e, q", [(2, 1.0, 0.01), (3, 0.4, 0.3), (6, 2.5, 1.0)])
def test_subsampled_rr_pair_and_power_by_counts(K, e, q):
    """The subsampled pair's masses against its definition in floats (q = 1: randomized response
    itself), and the enumerated power against repeated products."""
    pair = R.subsampled_rr(K, e, q)
    keep, other = math.exp(e) / (math.exp(e) + K - 1), 1 / (math.exp(e) + K - 1)
    want = {(1, 0): (q * keep + (1 - q) * other, other), (0, 1): (q * other + (1 - q) * keep, keep)}
    for key, (p_mass, q_mass) in want.items():
        assert abs(float(pair.atoms[key][0]) / p_mass - 1) < 1e-14
        assert abs(float(pair.atoms[key][1]) / q_mass - 1) < 1e-14
    if q == 1.0:
        for x in EPS:
            assert _close(pair.delta(x), R.rr(K, e).delta(x))
    for k in (1, 3, 6):
        for x in EPS:
            assert _close(R.power_by_counts(pair, k).delta(x), (pair ** k).delta(x), rel=1e-40)


@pytest.mark.parametrize("sigma, q", [(1.0, 0.01), (0.7, 0.3)])
def test_subsampled_gaussian_closed_form_against_quadrature(sigma, q):
    """The one-step closed form against ``∫ (P' - e^ε Q)_+`` by quadrature (q = 1: ``G_{1/σ}``)."""
    def integral(e, addition):
        s, mq = R.mpf(sigma), R.mpf(q)

        def f(x):
            p = mq * R.MP.npdf(x, 1, s) + (1 - mq) * R.MP.npdf(x, 0, s)
            qq = R.MP.npdf(x, 0, s)
            if addition:
                p, qq = qq, p
            return max(R.ZERO, p - R.MP.exp(e) * qq)
        with R.MP.workdps(30):
            pts = [-6 * s, 0, 0.5, 1, 1 + 6 * s]
            level = -e if addition else e          # the kink: where the loss crosses ±ε (if it does)
            if R.MP.exp(level) > 1 - mq:
                pts.append(R.MP.findroot(lambda x: R.MP.log(mq * R.MP.exp((2 * x - 1) / (2 * s * s)) + 1 - mq)
                                         - level, 0.5))
            return R.MP.quad(f, [-R.MP.inf, *sorted(pts), R.MP.inf])

    for e in (0.05, 0.5, 2.0):
        for addition in (False, True):
            ref = R.SubsampledGaussian(sigma, q, addition=addition).delta(e)
            assert abs(ref - integral(R.mpf(e), addition)) <= 1e-12 * ref + R.mpf(1e-30)
        assert _close(R.SubsampledGaussian(sigma, 1.0).delta(e), R.gaussian_delta(1 / R.mpf(sigma), e),
                      rel=1e-40)


def test_event_pairs_sum_to_one_and_match_their_definitions():
    """The dp_accounting-event pairs: masses sum to 1; discrete Laplace's δ against a truncated direct
    sum over outputs; randomized response by noise against ``rr`` at the same ε."""
    for a, d in [(0.3, 1), (1.1, 3), (0.05, 6)]:
        pair = R.discrete_laplace(a, d)
        assert abs(R.MP.fsum(p for p, _ in pair.atoms.values()) - 1) < R.mpf(1e-50)
        assert abs(R.MP.fsum(q for _, q in pair.atoms.values()) - 1) < R.mpf(1e-50)
        am, t = R.mpf(a), R.MP.tanh(R.mpf(a) / 2)
        for e in (0.0, 0.5 * a * d):
            direct = R.MP.fsum(max(R.ZERO, t * R.MP.exp(-am * abs(y - d)) - R.MP.exp(e) * t
                                   * R.MP.exp(-am * abs(y))) for y in range(-3000, 3000))
            assert abs(pair.delta(e) - direct) < R.mpf(1e-40)
    for p, k in [(0.3, 2), (0.6, 5)]:
        eps = math.log1p(k * (1 - p) / p)
        for x in EPS:
            assert abs(R.rr_by_noise(p, k).delta(x) - R.rr(k, eps).delta(x)) < R.mpf(1e-14)


def test_comparisons_have_no_slack_at_float_resolution():
    x = 0.1
    below = math.nextafter(x, 0.0)
    assert R.unsafe_upper(below, R.mpf(x))
    assert not R.unsafe_upper(x, R.mpf(x))
    assert R.unsafe_lower(math.nextafter(x, 1.0), R.mpf(x))
    assert not R.unsafe_lower(x, R.mpf(x))
