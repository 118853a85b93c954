"""Exact n-constraint composition (spec §7): against Kairouz (n = 1), Theorems 2–3 (n = 2), brute force and
dp_accounting (n >= 3), and the heterogeneous route against Theorem 1."""

from __future__ import annotations

import importlib
import math

import numpy as np
import pytest

from lpdp import ParameterError, PrivacyRegion
from lpdp.compose import heterogeneous, homogeneous
from lpdp.compose.multi import compose_regions, multi
from lpdp.testing import assert_delta_le, assert_regions_equal
from tests.oracles import brute_force_delta, pld_from_region
from tests.theorems import THEOREMS

GRID = np.linspace(0.0, 4.0, 81)


def _pair(region: PrivacyRegion) -> tuple[list[float], list[float]]:
    """Masses (p, q) of a region's dominating pair, with the ±inf atoms as outcomes (a brute-force input)."""
    p = list(np.exp(region.log_p)) + [math.exp(region.log_p_inf), 0.0]
    q = list(np.exp(region.log_q)) + [0.0, math.exp(region.log_q_ninf)]
    return p, q


@pytest.mark.parametrize("eps, delta, k", [(1.0, 0.0, 1), (1.0, 0.0, 7), (0.3, 1e-3, 40), (0.05, 1e-7, 300),
                                           (2.0, 0.2, 3)])
@pytest.mark.parametrize("step", [None, "sub"])
def test_one_constraint_is_kairouz(eps, delta, k, step):
    s = None if step is None else eps / 4
    assert_regions_equal(multi([(eps, delta)], k, step=s), homogeneous(eps, delta, k), rtol=1e-10,
                         boundary_atol=1e-10)


@pytest.mark.parametrize("c1, c2, k", [
    ((0.3, 0.0), (0.15, 0.02), 3), ((0.3, 0.0), (0.15, 0.02), 20),      # Figure 2 (ε1 = 2 ε2)
    ((1.0, 1e-3), (0.5, 0.05), 30), ((1.0, 1e-6), (0.3, 1e-3), 12),
    ((0.7, 1e-10), (0.0, 0.1), 9),                                       # ε2 = 0 (total variation)
    ((1.0, 0.0), (0.9, 0.3), 5),                                         # inactive second constraint
    ((math.log(3), 0.0), (math.log(2), 0.01), 15), ((0.4, 0.0), (0.25, 0.05), 2),
])
def test_two_constraints_are_theorems_2_and_3(c1, c2, k):
    got = multi([c1, c2], k)
    for theorem in THEOREMS.values():   # atol: a found step's slack (safe side, ~k 1e-17) where δ = 0
        assert_regions_equal(got, theorem(c1, c2, k), rtol=1e-9, atol=1e-15, boundary_atol=1e-10)


@pytest.mark.parametrize("constraints, k", [
    ([(1.2, 0.0), (0.6, 0.02), (0.2, 0.1)], 4),
    ([(2.0, 1e-4), (1.0, 0.01), (0.5, 0.05), (0.1, 0.2)], 3),
    ([(0.9, 0.0), (0.3, 0.05), (0.0, 0.3)], 5),
])
def test_three_or_more_constraints_brute_force(constraints, k):
    one = PrivacyRegion.from_constraints(constraints)
    p, q = _pair(one)
    want = brute_force_delta(p, q, k, GRID)
    got = multi(constraints, k).delta(GRID)
    np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-15)


def test_three_constraints_dp_accounting_brackets_us():
    constraints, k = [(1.0, 1e-6), (0.5, 1e-3), (0.2, 0.02)], 40
    exact = multi(constraints, k)
    one = PrivacyRegion.from_constraints(constraints)
    eps = np.linspace(0.5, 6.0, 12)
    pess = pld_from_region(one, pessimistic=True).self_compose(k)
    opt = pld_from_region(one, pessimistic=False).self_compose(k)
    upper = np.array([pess.get_delta_for_epsilon(float(e)) for e in eps])
    lower = np.array([opt.get_delta_for_epsilon(float(e)) for e in eps])
    assert_delta_le(exact, upper, eps, rtol=1e-9)
    assert np.all(lower <= exact.delta(eps) * (1 + 1e-9) + 1e-15)
    np.testing.assert_allclose(exact.delta(eps), upper, rtol=2e-2, atol=1e-9)


def test_lattice_step_gives_the_same_exact_region(monkeypatch):
    """The 1-D power on a common step (given, or found) against one lattice coordinate per level."""
    module = importlib.import_module("lpdp.compose.multi")

    constraints = [(0.9, 1e-5), (0.6, 1e-3), (0.3, 0.02), (0.15, 0.05)]
    monkeypatch.setattr(module, "QUICK_SECONDS", 0.0)   # this small case would keep the per-level lattice
    given, found = multi(constraints, 6, step=0.15), multi(constraints, 6)
    monkeypatch.setattr(module, "_common_step", lambda levels, counts: None)
    per_level = multi(constraints, 6)
    for r in (given, found):
        assert_regions_equal(r, per_level, rtol=1e-10, boundary_atol=1e-10)


def test_products_on_a_found_step_match_the_per_level_lattice(monkeypatch):
    """Two constraints ×7 and 5-ary randomized response ×4: levels 1, 0.3, 0.5 on the found step 0.1
    (a 1-D power per part) against the 3-D lattice of one coordinate per level."""
    module = importlib.import_module("lpdp.compose.multi")
    from lpdp.mechanisms import randomized_response

    parts = [(PrivacyRegion.from_constraints([(1.0, 1e-6), (0.3, 1e-3)]), 7),
             (randomized_response(5, 0.5).region(), 4)]
    monkeypatch.setattr(module, "QUICK_SECONDS", 0.0)
    fast = compose_regions(parts)
    monkeypatch.setattr(module, "_common_step", lambda levels, counts: None)
    eps = np.linspace(0.0, 9.0, 50)
    want = compose_regions(parts).log_delta(eps)
    ok = want > -690
    np.testing.assert_allclose(fast.log_delta(eps)[ok], want[ok], rtol=0, atol=1e-11)
    assert np.all(fast.log_delta(eps) >= want - 1e-12)


def test_tiny_masses_keep_relative_precision():
    # k = 1000 pure ε = 1: δ(990) ~ e^{-313}, below the smallest double; Kairouz's binomial terms in logs.
    k = 1000
    r = multi([(1.0, 0.0)], k, step=1.0)
    terms = [math.lgamma(k + 1) - math.lgamma(i + 1) - math.lgamma(k - i + 1) + (k - i)
             - k * math.log1p(math.e) + math.log(-math.expm1(990 - (k - 2 * i))) for i in range(5)]
    m = max(terms)
    want = m + math.log(sum(math.exp(t - m) for t in terms))
    assert math.isclose(float(r.log_delta(990.0)), want, rel_tol=1e-12)
    assert_regions_equal(r, homogeneous(1.0, 0.0, k), rtol=1e-9, boundary_atol=1e-10,
                         epsilon=np.linspace(0, 200, 41))


def test_heterogeneous_regions_match_theorem_1():
    a, b = PrivacyRegion.from_dp(0.3, 0.0), PrivacyRegion.from_dp(0.1, 0.0)
    assert_regions_equal(compose_regions([(a, 7), (b, 11)]), heterogeneous({0.3: 7, 0.1: 11}), rtol=1e-10,
                         boundary_atol=1e-10)


def test_heterogeneous_constraint_sets_brute_force():
    r1 = PrivacyRegion.from_constraints([(1.0, 0.0), (0.4, 0.05)])
    r2 = PrivacyRegion.from_constraints([(0.7, 1e-3), (0.2, 0.1), (0.05, 0.2)])
    got = compose_regions([(r1, 2), (r2, 2)]).delta(GRID)
    p1, q1 = _pair(r1)
    p2, q2 = _pair(r2)
    # Product pair of one r1 and one r2 mechanism, composed twice.
    p = np.outer(p1, p2).ravel().tolist()
    q = np.outer(q1, q2).ravel().tolist()
    np.testing.assert_allclose(got, brute_force_delta(p, q, 2, GRID), rtol=1e-9, atol=1e-15)


@pytest.mark.parametrize("call, match", [
    (lambda: multi([(1.0, 0.0)], 0), r"k=0: must be an integer >= 1"),
    (lambda: multi([], 3), r"constraints=\[\]"),
    (lambda: multi([(1.0, 0.0)], 2.5), r"k=2.5"),
    (lambda: multi([(-1.0, 0.0)], 2), r"constraints\[0\]\.epsilon=-1\.0"),
    (lambda: multi([(1.0, 0.0), (0.3, 0.1)], 2, step=0.25), r"step=0.25: the loss"),
    (lambda: multi([(1.0, 0.0)], 2, step=0.0), r"step=0.0: must be finite and > 0"),
    (lambda: compose_regions([(PrivacyRegion.from_pair([0.5, 0.5], [0.2, 0.8]), 2)]), r"symmetric"),
    (lambda: compose_regions([(PrivacyRegion.from_dp(1, 0), 0)]), r"every count is 0"),
    (lambda: compose_regions([(PrivacyRegion.from_dp(1, 0), -1)]), r"parts\[0\]\.count=-1"),
    (lambda: multi([(1.0, 0.0), (0.7071, 0.01), (0.3183, 0.02), (0.1234567, 0.05)], 400), r"pass step="),
])
def test_bad_input(call, match):
    with pytest.raises(ParameterError, match=match):
        call()


@pytest.mark.parametrize("eps, k", [(60.0, 40), (720.0, 3)])
def test_extreme_dynamic_range_levels_and_fallback(eps, k):
    # ε = 60: masses span 2400 nats (several scaled levels); ε = 720: an atom weight below e^-690 (the
    # exact logaddexp fallback). Both against Kairouz's binomial lattice.
    got = multi([(eps, 0.0), (eps / 2, 1e-3)], k, step=eps / 2)
    want = multi([(eps, 0.0), (eps / 2, 1e-3)], k)
    grid = np.linspace(0.0, eps * k, 97)
    # both certified from above: they agree to the routes' bounds (about 1e-12 relative)
    np.testing.assert_allclose(got.log_delta(grid), want.log_delta(grid), rtol=1e-11, atol=1e-12)
    assert_regions_equal(multi([(eps, 0.0)], k, step=eps), homogeneous(eps, 0.0, k), rtol=1e-10,
                         boundary_atol=1e-10, epsilon=grid)


@pytest.mark.parametrize("step, match", [
    (1e-300, r"step=1e-300: too small for the largest loss 1.0"),
    (1e-100, r"step=1e-100: too small"),
    (1e-20, r"step=1e-20: too small"),
    (1e-12, r"needs ~.* of memory; .*LPDP_MAX_MEMORY_GB.*use a larger step"),
])
def test_tiny_step_is_refused_before_casting(step, match):
    # step=1e-300 used to answer δ(0) = δ(1) = 0 (int64 overflow of L/step); truth 0.5685, 0.3443.
    cons = [(1.0, 0.0), (0.5, 0.1), (0.2, 0.3)]
    with pytest.raises(ParameterError, match=match):
        multi(cons, 5, step=step)


def test_tiny_step_in_fdp_is_a_parameter_error():
    from lpdp.fdp import bracket
    from lpdp.tradeoff import gaussian

    with pytest.raises(ParameterError, match="step=1e-100"):
        bracket(gaussian(1.0), 3, 2, step=1e-100)


def test_lattice_over_the_memory_budget_is_refused_at_once():
    from lpdp._limits import budget

    cons = [(1.0, 0.0), (0.5, 0.1), (0.2, 0.3)]
    with budget(memory_gb=1e-4), pytest.raises(ParameterError, match=r"exact lattice of 500 mechanisms"):
        multi(cons, 500)                  # on the found step 0.1: 10^4 cells
    with budget(seconds=1e-3), pytest.raises(ParameterError, match=r"of computation"):
        multi(cons, 500, step=0.1)
