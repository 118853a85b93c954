"""Audits: quadrature vs Monte Carlo, exact DP vs Monte Carlo, closed forms, and the spec's margins
(filter.md §3–§5)."""

from __future__ import annotations

import math

import pytest
from scipy import stats

from lpdp.errors import ParameterError
from lpdp.filters import (
    FiniteMechanism,
    GaussianMechanism,
    LaplaceMechanism,
    NaiveBayesianFilter,
    RealisationFilter,
    UnionBoundFilter,
    audit,
    binary_erasure,
    optimal_parameters,
)


def paper_filter(eps, delta, n, mech=None, pairs=((1, 0),), inputs=((1.0, 0.0),)):
    p = optimal_parameters(delta, n, mech, inputs=inputs)
    return RealisationFilter(eps, delta, n, p.delta_tilde, p.theta, pairs=pairs)


def assert_agree(exact, mc, k=5.0):
    """Every pair's tail, hockey stick and E[T] within k standard errors of the Monte Carlo."""
    for a, b in zip(exact.pairs, mc.pairs, strict=True):
        assert abs(a.tail - b.tail) <= k * max(b.tail_stderr, 1e-4)
        assert abs(a.hockey_stick_delta - b.hockey_stick_delta) <= k * max(b.hockey_stick_stderr, 1e-4)
        for s_exact, s_mc, se in zip(a.survival, b.survival, b.survival_stderr, strict=True):
            assert abs(s_exact - s_mc) <= k * max(se, 1e-3)


@pytest.mark.parametrize("filt, sigma", [
    (paper_filter(5.0, 0.5, 8), 1.0),
    (paper_filter(2.0, 0.5, 8), 2.0),
    (paper_filter(0.5, 0.5, 20), 10.0),
    (UnionBoundFilter(4.0, 0.2, 8), 1.0),
    (NaiveBayesianFilter(2.5, 0.1, 8), 1.0),
], ids=["paper-s1", "paper-s2", "paper-s10", "union", "naive"])
def test_quadrature_matches_monte_carlo(filt, sigma):
    g = GaussianMechanism(sigma)
    exact = audit(filt, g)
    assert exact.method == "quadrature"
    assert exact.tail > 1e-3 and 1.2 < exact.expected_T  # a test that can fail
    mc = audit(filt, g, method="monte-carlo", trajectories=60_000, seed=11)
    assert_agree(exact, mc)
    assert mc.tail_upper >= mc.tail and mc.hockey_stick_upper >= mc.hockey_stick_delta


def test_quadrature_converges_in_the_number_of_nodes():
    f = paper_filter(6.0, 1e-3, 48)
    g = GaussianMechanism(2.0)
    a, b = audit(f, g, nodes=12), audit(f, g, nodes=40)
    assert a.tail == pytest.approx(b.tail, rel=1e-8)
    assert a.hockey_stick_delta == pytest.approx(b.hockey_stick_delta, rel=1e-8)
    assert a.expected_T == pytest.approx(b.expected_T, rel=1e-10)


def test_single_step_closed_forms():
    """N = 1: T = 1, so the tail is P(L > ε) and the hockey stick is Balle–Wang's δ_G(ε)."""
    g = GaussianMechanism(1.0)
    f = RealisationFilter(2.0, 0.5, 1, 0.4, 0.0)
    r = audit(f, g)
    mu = 1.0
    assert r.tail == pytest.approx(stats.norm.sf((2.0 - mu**2 / 2) / mu), rel=1e-12)
    bw = stats.norm.cdf(-2.0 / mu + mu / 2) - math.exp(2.0) * stats.norm.cdf(-2.0 / mu - mu / 2)
    assert r.hockey_stick_delta == pytest.approx(bw, rel=1e-10)
    assert r.survival == (1.0,)


def test_paper_experiment_numbers_and_guarantees():
    """σ = 2, δ = 1e-3, N = 48 (spec §3, §5): E[T] ≈ 15.8 vs 28.6 at ε = 6, both within δ, and
    Theorem 1's bound δ̃ + (1-δ̃)θ(E[T]-1) holds for the audited tail."""
    g = GaussianMechanism(2.0)
    paper = paper_filter(6.0, 1e-3, 48)
    union = UnionBoundFilter(6.0, 1e-3, 48)
    a, b = audit(paper, g), audit(union, g)
    assert round(a.expected_T, 1) == 15.8 and round(b.expected_T, 1) == 28.6
    theorem = paper.delta_tilde + (1 - paper.delta_tilde) * paper.theta * (a.expected_T - 1)
    assert a.guarantee == pytest.approx(theorem, rel=1e-12)
    assert a.hockey_stick_delta <= a.tail <= theorem <= 1e-3
    assert b.hockey_stick_delta <= b.tail <= 1e-3 * b.expected_T / 48
    assert b.guarantee == pytest.approx(1e-3 * b.expected_T / 48, rel=1e-12)
    for eps in (2.0, 4.0, 8.0, 10.0, 12.0):
        assert audit(paper_filter(eps, 1e-3, 48), g).tail <= 1e-3
        assert audit(UnionBoundFilter(eps, 1e-3, 48), g).tail <= 1e-3
    assert audit(paper_filter(4.0, 1e-3, 48), g).expected_T <= 1.0  # at most one release


def test_exact_dp_matches_monte_carlo_for_finite_outputs():
    m = FiniteMechanism({0: [0.6, 0.3, 0.1], 1: [0.2, 0.3, 0.5], 2: [0.3, 0.5, 0.2]})
    f = NaiveBayesianFilter(2.0, 0.5, 8, pairs=[(0, 1), (1, 2)])
    exact = audit(f, m)
    assert exact.method == "exact" and exact.tail > 0.1
    mc = audit(f, m, method="monte-carlo", trajectories=40_000, seed=2)
    assert_agree(exact, mc)


@pytest.mark.parametrize("p", [1e-4, 5e-4, 1e-3, 0.01, 0.2])
def test_erasure_counterexample(p):
    """Spec §4: Pan's filter (level δ) on erasure runs until the reveal: δ = 1 - (1-p)^N when p <= δ;
    the paper's and the union-bound filters stay within δ for every p."""
    er, n, delta = binary_erasure(p), 1000, 1e-3
    pan = audit(NaiveBayesianFilter(1.0, delta, n, pairs=[(0, 1)]), er)
    if p <= delta:
        assert pan.tail == pytest.approx(1 - (1 - p) ** n, rel=1e-9)
        assert pan.hockey_stick_delta == pytest.approx(1 - (1 - p) ** n, rel=1e-9)
    paper = paper_filter(1.0, delta, n, er, pairs=[(0, 1)], inputs=[(0, 1)])
    assert audit(paper, er).tail <= delta
    assert audit(UnionBoundFilter(1.0, delta, n, pairs=[(0, 1)]), er).tail <= delta


def test_pan_at_the_spec_margin_and_the_no_lookahead_variant():
    er, n, delta = binary_erasure(1e-3), 1000, 1e-3
    pan = audit(NaiveBayesianFilter(1.0, delta, n, pairs=[(0, 1)]), er)
    assert pan.tail == pytest.approx(0.632, abs=5e-4) and pan.tail > 600 * delta
    # the no-look-ahead variant of Algorithm 1 is the same rule at level δ̃: with p <= δ̃ it fails too
    p = optimal_parameters(delta, n)
    er = binary_erasure(p.delta_tilde)
    variant = audit(NaiveBayesianFilter(1.0, p.delta_tilde, n, pairs=[(0, 1)]), er)
    assert variant.tail == pytest.approx(1 - (1 - p.delta_tilde) ** n, rel=1e-9)
    assert variant.tail > 100 * delta


def test_quadrature_refuses_what_it_cannot_resolve():
    with pytest.raises(ParameterError, match="more than 6000 nodes, use method='monte-carlo'"):
        audit(UnionBoundFilter(50.0, 0.1, 5), GaussianMechanism(200.0), method="quadrature")
    # auto falls back to Monte Carlo, also for a step far below double precision's reach (σ = 1e300)
    for sigma in (200.0, 1e300):
        r = audit(UnionBoundFilter(50.0, 0.1, 5), GaussianMechanism(sigma), trajectories=2000)
        assert r.method == "monte-carlo" and r.expected_T == 5.0 and r.tail == 0.0  # exact: T = 5 always


def test_monte_carlo_for_other_mechanisms():
    """Laplace rounds with two neighbouring pairs (the Laplace quadrature takes one pair)."""
    lap = LaplaceMechanism(1.0)
    r = audit(UnionBoundFilter(3.0, 0.1, 5, pairs=[(1, 0), (2, 1)]), lap, trajectories=20_000)
    assert r.method == "monte-carlo" and r.confidence == 0.95  # exact: the parameter, echoed
    assert r.tail_upper <= 0.1  # and the union bound holds at 95 % confidence


@pytest.mark.parametrize("kwargs, match", [
    ({"method": "fft"}, r"method='fft'"),
    ({"method": "exact"}, r"needs a FiniteMechanism"),
    ({"nodes": 1}, r"nodes=1"),
    ({"nodes": 500}, r"nodes=500: must be an integer in \[2, 200\]"),
    ({"trajectories": 0, "method": "monte-carlo"}, r"trajectories=0"),
    ({"confidence": 1.0}, r"confidence=1\.0"),
])
def test_bad_parameters_are_named(kwargs, match):
    with pytest.raises(ParameterError, match=match):
        audit(UnionBoundFilter(3.0, 0.1, 5), GaussianMechanism(1.0), **kwargs)


@pytest.mark.parametrize("make", [
    lambda pairs: NaiveBayesianFilter(2.0, 0.5, 5, pairs=pairs),
    lambda pairs: UnionBoundFilter(2.5, 0.6, 5, pairs=pairs),
    lambda pairs: RealisationFilter(3.5, 0.95, 5, 0.5, 0.08, pairs=pairs),
], ids=["naive", "union", "paper"])
def test_exact_dp_against_enumerating_the_filter_itself(make):
    """Run the filter object (ask/record) on every output sequence of length N and weight by its
    probability: an independent computation of T, the tail and the hockey stick."""
    import itertools

    m = FiniteMechanism({0: [0.6, 0.3, 0.1], 1: [0.2, 0.3, 0.5], 2: [0.3, 0.5, 0.2]})
    pairs = [(0, 1), (1, 2)]
    exact = audit(make(pairs), m)
    assert exact.method == "exact"
    for pair_audit in exact.pairs:
        x, x2 = pair_audit.pair
        p = m.probabilities(x)
        tail = hs = 0.0
        surv = [0.0] * 5
        for seq in itertools.product(range(3), repeat=5):
            prob = math.prod(p[y] for y in seq)
            f = make(pairs)
            for y in seq:
                if not f.ask(m):
                    break
                f.record(y)
            loss = f.spent()[(x, x2)]
            tail += prob * (loss > f.epsilon + 1e-9)
            hs += prob * max(0.0, 1 - math.exp(f.epsilon - loss))
            for t in range(f.steps):
                surv[t] += prob
        assert pair_audit.tail == pytest.approx(tail, abs=1e-12)
        assert pair_audit.hockey_stick_delta == pytest.approx(hs, abs=1e-12)
        assert pair_audit.survival == pytest.approx(surv, abs=1e-12)
    assert 1.5 < exact.expected_T < 4.5  # stopping times that actually vary
