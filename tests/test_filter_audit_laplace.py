"""The exact audit of threshold filters on i.i.d. Laplace rounds (lpdp.filters._laplace_walk): Monte Carlo
within 3 standard errors, a nested-integration reference written from the loss law, the accountant's
bracket for fixed stopping times, convergence in the number of nodes, and every filter within its δ."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import integrate

from lpdp.accountant import Accountant
from lpdp.cli import main
from lpdp.errors import ParameterError
from lpdp.filters import audit, build_filter, filter_kinds
from lpdp.filters.audit import rule_audit, simulate_trajectories
from lpdp.filters.realisation import StoppingRule, within
from lpdp.mechanisms import LaplaceMechanism

PAIRS = ((1.0, 0.0), (0.0, 1.0))


def rule(eps, n, k_own, k_rev, lag, min_steps=0, first=True):
    return StoppingRule(eps, n, PAIRS, first, (k_own, k_rev), lag, min_steps)


# -- the reference: the definition of the stopped loss, integrated over the loss law by hand ----------
def one_step(s, eps, r):
    """``E[1{s + X > ε}]`` (a tie is not over) and ``E[(1 - e^{ε - s - X})_+]`` for one Laplace loss X:
    atoms r (1/2) and -r (e^{-r}/2), density e^{(l-r)/2}/4 on (-r, r)."""
    c = min(max(eps - s, -r), r)
    tail = 0.5 * float(not within(s + r, eps)) + 0.5 * math.exp(-r) * float(not within(s - r, eps))
    tail += 0.5 * (1.0 - math.exp((c - r) / 2.0))
    hs = sum(m * max(0.0, -math.expm1(min(eps - s - x, 0.0)))
             for m, x in ((0.5, r), (0.5 * math.exp(-r), -r)))
    hs += 0.5 * (1.0 - math.exp((c - r) / 2.0)) - 0.5 * math.exp(eps - s - r / 2.0) * (
        math.exp(-c / 2.0) - math.exp(-r / 2.0))
    return np.array([tail, hs])


def reference(rl, k_own, k_rev, r):
    """``(P(l^(T) > ε), E[(1 - e^{ε - l^(T)})_+], E[T])`` by recursion over the steps: T = max(T1, k)
    with ``T1 >= t`` iff S_0 .. S_{t-1-lag} are in C (a tie continues); the continuous part of each step
    by adaptive quadrature split at every translate of κ_own, -κ_rev and ε, the last step in closed form."""
    n, lag, eps, kk = rl.max_steps, rl.lag, rl.epsilon, min(rl.min_steps, rl.max_steps)
    kinks = [c + m * r for c in (k_own, -k_rev, eps) if math.isfinite(c) for m in range(-n - 1, n + 2)]

    def inside(s):
        return bool(within(s, k_own) and within(-s, k_rev))

    def value(t, s, t1):
        if t1 is None and (t == n or not inside(s)):
            t1 = min(t + lag, n)
        if t1 is not None and t == max(t1, kk):
            return np.array([0.0 if within(s, eps) else 1.0, max(0.0, -math.expm1(min(eps - s, 0.0))),
                             float(t)])
        if t + 1 == n or (t1 is not None and t + 1 == max(t1, kk)):
            return np.append(one_step(s, eps, r), t + 1.0)
        atoms = 0.5 * value(t + 1, s + r, t1) + 0.5 * math.exp(-r) * value(t + 1, s - r, t1)
        points = sorted({k - s for k in kinks if -r < k - s < r})
        cont, _ = integrate.quad_vec(lambda d: 0.25 * math.exp((d - r) / 2.0) * value(t + 1, s + d, t1),
                                     -r, r, points=points or None, epsabs=1e-13, epsrel=1e-11)
        return atoms + cont

    return value(0, 0.0, None if rl.first_release else 0)


CASES = {  # (b, rule): r = 1/b; thresholds off the lattice, on it, and on ε
    "off-lattice lag 1": (2.0, rule(1.3, 3, 0.7, 0.35, 1)),
    "off-lattice lag 0": (1.0, rule(1.8, 3, 0.9, 0.4, 0)),
    "ties on κ and ε": (2.0, rule(1.0, 3, 0.5, 0.5, 1)),
    "ties, lag 0": (2.0, rule(1.0, 2, 0.5, 0.5, 0)),  # S_1 = r on κ continues, S_2 = 2r = ε not over
    "min_steps 2": (1.0, rule(1.5, 3, 0.2, 0.6, 1, 2)),
    "no first release": (1.0, rule(1.5, 2, 0.2, 0.6, 1, 2, first=False)),
    "two steps": (0.5, rule(2.5, 2, 0.4, 1.1, 0)),
}


@pytest.mark.parametrize("b, rl", CASES.values(), ids=CASES.keys())
def test_against_the_nested_integration_reference(b, rl):
    method, pairs = rule_audit(rl, LaplaceMechanism(b))
    assert method == "quadrature"
    for p, (own, rev) in zip(pairs, ((0, 1), (1, 0)), strict=True):
        tail, hs, expected_t = reference(rl, rl.thresholds[own], rl.thresholds[rev], 1.0 / b)
        assert p.tail == pytest.approx(tail, rel=1e-10, abs=1e-14)
        assert p.hockey_stick_delta == pytest.approx(hs, rel=1e-10, abs=1e-14)
        assert p.expected_T == pytest.approx(expected_t, rel=1e-10)


@pytest.mark.parametrize("b, eps", [(0.5, 1.0), (0.5, 2.0), (0.25, 1.5)])
def test_one_step_closed_forms(b, eps):
    """N = 1: T = 1, so the tail is P(L > ε) = 1 - e^{(ε-r)/2}/2 and the hockey stick is the Laplace
    δ(ε) = 1 - e^{(ε-r)/2} for ε < r (both 0 for ε >= r: the atom at r = ε is a tie, not over)."""
    r = 1.0 / b
    _, pairs = rule_audit(rule(eps, 1, 0.0, 0.0, 1), LaplaceMechanism(b))
    for p in pairs:
        assert p.tail == pytest.approx(1 - math.exp((eps - r) / 2) / 2 if eps < r else 0.0, abs=1e-15)
        assert p.hockey_stick_delta == pytest.approx(max(0.0, 1 - math.exp((eps - r) / 2)), abs=1e-15)
        assert p.survival == (1.0,)


@pytest.mark.parametrize("k", [5, 20])
def test_fixed_stopping_time_inside_the_accountants_bracket(k):
    """No threshold, T = k: the hockey stick is δ_k(ε) of k Laplace rounds, which the accountant brackets."""
    lap = LaplaceMechanism(2.0)
    _, pairs = rule_audit(rule(3.0, k, math.inf, math.inf, 0), lap)
    lo, hi = Accountant().compose(lap, k).guarantee().delta(3.0)
    assert 0 <= hi - lo < 1e-3          # exact (0) at k = 5: every loss is at most 5 r = 2.5 < 3
    for p in pairs:
        assert lo - 1e-12 <= p.hockey_stick_delta <= hi + 1e-12
        # E[T] = Σ_t P(T >= t), k survival terms of 1.0 summed in floating point: exact on some machines,
        # 19.999999999999996 for k = 20 on others (OPENBLAS_CORETYPE); k roundings of u = 2^-53 at most
        assert p.expected_T == pytest.approx(k, rel=k * 2.0**-52)


def monte_carlo(rl, lap, n, seed):
    """Per ordered pair: (tail, hockey stick, T) means and standard errors from the library's sampler."""
    rng = np.random.default_rng(seed)
    out = []
    for i, (x, _) in enumerate(rl.pairs):
        t, final = simulate_trajectories(rl, [(lap, None)], x, n, rng)
        over = (~within(final[:, i], rl.epsilon)).astype(float)
        hs = np.maximum(0.0, -np.expm1(np.minimum(rl.epsilon - final[:, i], 0.0)))
        out.append([(v.mean(), v.std(ddof=1) / math.sqrt(n)) for v in (over, hs, t.astype(float))])
    return out


def assert_within_3_standard_errors(rl, lap, n=200_000, seed=1):
    _, pairs = rule_audit(rl, lap)
    for p, mc in zip(pairs, monte_carlo(rl, lap, n, seed), strict=True):
        for exact, (mean, se) in zip((p.tail, p.hockey_stick_delta, p.expected_T), mc, strict=True):
            # floor: a Monte Carlo loss of ε plus rounding (1e-15) has a hockey stick of 1e-15
            assert abs(exact - mean) <= 3 * se + 1e-12, (exact, mean, se)
    return pairs


SETTINGS = [(2.0, 6.0, 1e-3, 30), (1.0, 4.0, 0.05, 12), (3.0, 2.0, 0.05, 20)]


@pytest.mark.parametrize("b, eps, delta, n", SETTINGS)
@pytest.mark.parametrize("name", ["realisation", "union", "combined"])
def test_filters_monte_carlo_within_3_standard_errors(name, b, eps, delta, n):
    """The registered filters on Laplace rounds: u(δ̃) = u(θ) = r (an atom), so κ = ε - 2r (ε - r for
    the union bound) is on the lattice when ε is (b = 1, 2 here): atoms land exactly on κ and on ε."""
    lap = LaplaceMechanism(b)
    f = build_filter(name, lap, eps, delta, n, [(1.0, 0.0)])
    pairs = assert_within_3_standard_errors(f.iid_rule(lap), lap, n=100_000)
    assert 1.5 < pairs[0].expected_T < n  # a random stopping time, not a constant


@pytest.mark.parametrize("b, rl", [
    (2.0, rule(3.0, 12, 2.3, 1.1, 1)),
    (2.0, rule(3.0, 10, 2.5, 1.0, 1, 2)),  # atoms on κ_own and ε
    (1.0, rule(2.0, 10, 1.0, 2.0, 0, 4)),
    (0.5, rule(4.0, 8, 3.0, 1.0, 1, 3)),
], ids=["lag1", "ties", "lag0-min4", "b0.5"])
def test_rules_with_a_tail_monte_carlo_within_3_standard_errors(b, rl):
    pairs = assert_within_3_standard_errors(rl, LaplaceMechanism(b))
    assert max(p.tail for p in pairs) > 0.05  # a test that can fail


@pytest.mark.deep
@pytest.mark.parametrize("b, rl", [
    (2.0, build_filter("realisation", LaplaceMechanism(2.0), 6.0, 1e-3, 100,
                       [(1.0, 0.0)]).iid_rule(LaplaceMechanism(2.0))),
    (1.0 / 3.0, rule(9.0, 60, 7.0, 4.0, 1, 5)),  # r = 3: thresholds and ε off the lattice
    (3.0, rule(3.0, 50, 2.5, 2.0, 0, 12)),  # r = 1/3: sums of ±r carry rounding; ε = 9 r is a tie
], ids=["realisation-N100", "r3", "r1/3"])
def test_deep_monte_carlo_within_3_standard_errors(b, rl):
    assert_within_3_standard_errors(rl, LaplaceMechanism(b), n=1_000_000, seed=2)


def test_converges_in_the_number_of_nodes():
    lap = LaplaceMechanism(2.0)
    for rl in (rule(3.0, 12, 2.3, 1.1, 1), build_filter("realisation", lap, 6.0, 1e-3, 30,
                                                        [(1.0, 0.0)]).iid_rule(lap)):
        coarse, fine = rule_audit(rl, lap, nodes=6)[1], rule_audit(rl, lap, nodes=40)[1]
        for a, b in zip(coarse, fine, strict=True):
            assert a.tail == pytest.approx(b.tail, rel=1e-11, abs=1e-15)
            assert a.hockey_stick_delta == pytest.approx(b.hockey_stick_delta, rel=1e-11, abs=1e-15)
            assert a.expected_T == pytest.approx(b.expected_T, rel=1e-12)


@pytest.mark.parametrize("b, eps, delta, n", [*SETTINGS, (0.5, 8.0, 1e-6, 40), (4.0, 1.0, 1e-2, 50)])
def test_every_filter_within_its_delta(b, eps, delta, n):
    lap = LaplaceMechanism(b)
    for kind in filter_kinds():
        f = build_filter(kind.name, lap, eps, delta, n, [(1.0, 0.0)])
        r = audit(f, lap)
        assert r.method == "quadrature", kind.name
        assert r.hockey_stick_delta <= r.tail <= delta, kind.name
        if r.guarantee is not None:
            assert r.tail <= r.guarantee + 1e-15, kind.name


def test_cli_reports_the_laplace_quadrature(capsys):
    import json

    common = ["--laplace", "2", "--epsilon", "6", "--delta", "1e-3", "--max-steps", "30", "--json"]
    assert main(["filter", "audit", *common]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["method"] == "quadrature" and out["tail"] <= out["bound"]
    assert main(["filter", "simulate", *common, "--trajectories", "0"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["method"] == "quadrature" and 1 < out["expected_T"] < 30


def test_refusals_and_fallback():
    lap = LaplaceMechanism(1e3)  # r = 1e-3 on [-5, 5]: 10^4 cells of 24 nodes or more
    rl = rule(6.0, 6000, 5.0, 5.0, 1)
    with pytest.raises(ParameterError, match="use method='monte-carlo'"):
        rule_audit(rl, lap, method="quadrature")
    assert rule_audit(rl, lap, trajectories=20)[0] == "monte-carlo"
    two = StoppingRule(6.0, 5, (*PAIRS, (2.0, 1.0), (1.0, 2.0)), True, (5.0,) * 4, 1)
    with pytest.raises(ParameterError, match="one pair"):
        rule_audit(two, LaplaceMechanism(1.0), method="quadrature")
