"""The realisation-level + Rényi filter: its guarantee in exact audits (the filter paper's Gaussian
experiment, randomized response), its survival against an independent formula, Monte Carlo against
the exact audit, and the regime where it releases more than both parts' full-budget filters."""

from __future__ import annotations

import math

import pytest

from lpdp.filters import (
    CombinedFilter,
    GaussianMechanism,
    RealisationFilter,
    audit,
    build_filter,
    default_pairs,
    randomized_response,
    survival,
)

SIGMA, DELTA, N = 2.0, 1e-3, 48


@pytest.mark.parametrize("eps", [4.5, 5.0, 6.0])
def test_guarantee_on_the_paper_experiment(eps):
    g = GaussianMechanism(SIGMA)
    f = build_filter("combined", g, eps, DELTA, N, [(1, 0)])
    r = audit(f, g)
    assert r.method == "quadrature"
    assert r.hockey_stick_delta <= r.tail <= r.guarantee <= DELTA
    # E[max(T_R, k)] = k + Σ_{t > k} P(T_R >= t), with T_R the realisation-level part alone and k the
    # Rényi part's rounds in closed form ⌊(sqrt(L + ε) - sqrt(L))² / (μ²/2)⌋, L = ln(1/δ_2)
    big_l = math.log(1 / f.renyi.delta)
    k = min(N, math.floor((math.sqrt(big_l + eps) - math.sqrt(big_l)) ** 2 / (0.25 / 2)))
    alone = RealisationFilter(eps, f.realisation.delta, N, f.realisation.delta_tilde,
                              f.realisation.theta)
    s = survival(alone, g).survival
    assert r.expected_T == pytest.approx(k + sum(s[k:]), rel=1e-12)


def test_releases_more_than_both_at_epsilon_5():
    """The documented regime: Gaussian σ = 2, δ = 1e-3, N = 48, ε = 4.5 .. 6."""
    g = GaussianMechanism(SIGMA)
    for eps in (4.5, 5.0):
        e = {name: survival(build_filter(name, g, eps, DELTA, N, [(1, 0)]), g, horizon=N).expected_T
             for name in ("combined", "realisation", "renyi")}
        assert e["combined"] > max(e["realisation"], e["renyi"])


def test_guarantee_on_randomized_response_and_monte_carlo():
    rr = randomized_response(2, 1.0)
    pairs = default_pairs(rr)
    f = CombinedFilter(2.5, 0.3, 10, 0.05, 0.01, alpha=3.0, split=0.5, pairs=pairs)
    r = audit(f, rr)
    assert r.method == "exact" and r.tail <= r.guarantee <= 0.3
    assert f.iid_rule(rr).min_steps >= 1
    mc = audit(f, rr, method="monte-carlo", trajectories=40_000, seed=5)
    for p, q in zip(r.pairs, mc.pairs, strict=True):
        assert abs(p.tail - q.tail) <= 3 * max(q.tail_stderr, 1e-4)
        assert abs(p.hockey_stick_delta - q.hockey_stick_delta) <= 3 * max(q.hockey_stick_stderr, 1e-4)
    assert abs(r.expected_T - mc.expected_T) <= 0.05
    rr4 = randomized_response(4, 0.7)
    f = build_filter("combined", rr4, 6.0, 1e-6, 40, default_pairs(rr4))
    r = audit(f, rr4)
    assert r.tail <= r.guarantee <= 1e-6


def test_protocol_forwards_outputs_to_both_parts():
    g = GaussianMechanism(SIGMA)
    f = CombinedFilter(6.0, DELTA, N, 5e-4, 4e-6, alpha=4.0, split=0.9)
    steps = 0
    while f.ask(g) and steps < 5:
        f.record(0.5)
        steps += 1
    assert f.realisation.steps == f.renyi.steps == f.steps == 5
    assert f.spent() == f.realisation.spent()
