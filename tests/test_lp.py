"""Solver-backed queries (HiGHS through cvxpy) against the exact geometric answers."""

import json
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lpdp import ParameterError, PrivacyRegion, SolverError
from lpdp.lp import IntersectionLP, is_subset
from tests.oracles import intersection_delta_mp, intersection_tradeoff_mp
from tests.strategies import constraint_lists
from tests.strategies import grid_constraint_lists as grid_lists

EPS = np.array([0.0, 0.3, 0.8, 1.5, 3.0])


@settings(max_examples=15)
@given(grid_lists, grid_lists)
def test_lp_delta_and_tradeoff_equal_exact_geometry(a, b):
    ra, rb = PrivacyRegion.from_constraints(a), PrivacyRegion.from_constraints(b)
    exact = ra.intersect(rb)
    lp = IntersectionLP([ra, rb])
    np.testing.assert_allclose(lp.delta(EPS), exact.delta(EPS), atol=1e-9)
    for t in (0.0, 0.05, 0.2, 0.5, 0.9):
        assert lp.tradeoff(t) == pytest.approx(float(exact.tradeoff(t)), abs=1e-9)


@settings(max_examples=15)
@given(constraint_lists, st.floats(0, 1), st.floats(0, 1))
def test_lp_membership_equals_exact(pairs, x, y):
    r = PrivacyRegion.from_constraints(pairs)
    lp = IntersectionLP([PrivacyRegion.from_dp(*p) for p in pairs])
    gap = y - float(r.tradeoff(x)) if x + y <= 1 else -1.0
    if abs(gap) > 1e-8 and abs(x + y - 1) > 1e-8:
        assert lp.contains((x, y)) == r.contains((x, y))


@settings(max_examples=10)
@given(constraint_lists, constraint_lists)
def test_lp_subset_equals_exact(a, b):
    ra, rb = PrivacyRegion.from_constraints(a), PrivacyRegion.from_constraints(b)
    grid = np.unique(np.abs(np.concatenate([ra.losses, rb.losses, [0.0]])))
    margin = np.min(rb.delta(grid) - ra.delta(grid))
    if abs(margin) > 1e-7:
        assert is_subset([ra], [rb]) == rb.contains(ra) == (margin > 0)


@pytest.mark.parametrize("pairs", [
    [(2.0, 0.0), (1.5812810776217397e-09, 0.5625)],
    [(2.0, 0.0), (1.5812810776217397e-09, 0.5)],
    [(2.0, 0.0), (1.5812810776217397e-09, 0.0)],
    [(1.0, 0.0), (1.5812810776217397e-09, 0.0)],
])
def test_near_parallel_constraints_raise_or_agree(pairs):
    """Lines 3e-9 apart in angle have ill-conditioned vertices: an answer is right or it is an error."""
    exact = PrivacyRegion.from_constraints(pairs)
    lp = IntersectionLP([PrivacyRegion.from_dp(*p) for p in pairs])
    queries = [(lp.delta, e, exact.delta(e)) for e in EPS] + \
              [(lp.tradeoff, t, exact.tradeoff(t)) for t in (0.05, 0.5, 0.9)]
    for query, arg, expected in queries:
        try:
            got = query(arg)
        except SolverError:
            continue
        assert got == pytest.approx(float(expected), abs=1e-9)


def test_lp_delta_is_an_upper_bound():
    """The δ query returns the dual bound: never below the exact value (so never below the region's
    certified lower side)."""
    r = PrivacyRegion.from_constraints([(1.0, 1e-6), (0.3, 1e-3), (2.0, 0.0)])
    lp = IntersectionLP([PrivacyRegion.from_dp(1.0, 1e-6), PrivacyRegion.from_dp(0.3, 1e-3),
                         PrivacyRegion.from_dp(2.0, 0.0)])
    grid = np.linspace(0, 2.5, 26)
    assert np.all(lp.delta(grid) >= r.delta_lower(grid))


def test_non_optimal_status_raises(monkeypatch):
    lp = IntersectionLP([PrivacyRegion.from_dp(1.0, 0.1)])

    def fake_solve(*args, **kwargs):
        lp._delta_prob._status = "optimal_inaccurate"

    monkeypatch.setattr(lp._delta_prob, "solve", fake_solve)
    monkeypatch.setattr(type(lp._delta_prob), "status", property(lambda self: self._status))
    with pytest.raises(SolverError, match="status 'optimal_inaccurate'"):
        lp.delta(0.5)


def test_residual_violation_raises(monkeypatch):
    lp = IntersectionLP([PrivacyRegion.from_dp(1.0, 0.1)])
    lp.delta(0.5)   # a real solve first
    monkeypatch.setattr(lp, "_solve", lambda prob: None)
    lp._z.value = np.array([0.0, 0.0])    # (0, 0) is outside R(1, 0.1)
    with pytest.raises(SolverError, match="violates a constraint"):
        lp.delta(0.5)


def test_bad_queries():
    lp = IntersectionLP([PrivacyRegion.from_dp(1.0, 0.1)])
    with pytest.raises(ParameterError, match=r"must be finite and >= 0"):
        lp.delta(-1.0)
    with pytest.raises(ParameterError, match=r"t=2.0: must be in \[0, 1\]"):
        lp.tradeoff(2.0)
    with pytest.raises(ParameterError, match=r"regions=\[\]"):
        IntersectionLP([])


def test_cli_json_stays_pure_when_an_lp_is_solved():
    """HiGHS prints a banner on the C-level stdout (HiGHS#2749): --json output must still parse."""
    out = subprocess.run([sys.executable, "-m", "lpdp", "region", "--dp", "1.3,0", "--dp", "0.5,0.2",
                          "--at", "0", "1", "--lp", "--json"], capture_output=True, text=True, check=True)
    doc = json.loads(out.stdout)
    np.testing.assert_allclose([d for _, d in doc["lp_delta_at"]], [d for _, d in doc["delta_at"]],
                               atol=1e-9)


# -- certified answers: never on the unsafe side of a 50-digit reference --------------------------
def test_issue_lp_bound_below_truth_regression():
    """R(3, 1.7e-8) ∩ R(0.26, 2e-5) ∩ R(0.44, 0.031): the LP used to answer 1.6999999963e-8 at ε = 3 and
    10, below the exact 1.7e-8 (the dual objective cancelled against 1)."""
    regions = [PrivacyRegion.from_dp(*p) for p in [(3, 1.7e-8), (0.26, 2e-5), (0.44, 0.031)]]
    lp = IntersectionLP(regions)
    for e in (0.0, 0.26, 0.3, 1.0, 3.0, 10.0):
        ref = intersection_delta_mp(regions, e)
        got = lp.delta(e)
        assert got >= ref, (e, got, ref)
        assert got <= ref * (1 + 1e-13)


@settings(max_examples=12)
@given(constraint_lists, constraint_lists, st.floats(0, 4), st.floats(0, 1))
def test_lp_answers_are_on_the_safe_side_of_the_mp_reference(a, b, eps, t):
    regions = [PrivacyRegion.from_constraints(a), PrivacyRegion.from_constraints(b)]
    lp = IntersectionLP(regions)
    ref = intersection_delta_mp(regions, eps)
    got = lp.delta(eps)
    assert ref <= got <= ref * (1 + 1e-12) + 1e-300
    f_ref = intersection_tradeoff_mp(regions, t)
    f_got = lp.tradeoff(t)
    assert f_got <= f_ref
    assert f_got >= f_ref - 1e-9


def test_lp_deep_tail_of_a_composed_region_keeps_relative_precision():
    """δ near 1e-20 and below: the certificate sums positive terms, so it keeps every digit."""
    from lpdp.compose import homogeneous

    regions = [homogeneous(1.0, 0.0, 30), PrivacyRegion.from_dp(20.0, 1e-25)]
    lp = IntersectionLP(regions)
    for e in (15.0, 21.0, 25.0, 29.0, 35.0):
        ref = intersection_delta_mp(regions, e)
        got = lp.delta(e)
        assert ref <= got <= ref * (1 + 1e-12) + 1e-300, (e, got, ref)


def test_huge_epsilon_constraint_needs_no_overflowing_row():
    """``region --lp --dp 800,0`` raised five lines from HiGHS (e^800 overflowed into the LP data)."""
    out = subprocess.run([sys.executable, "-W", "error", "-m", "lpdp", "region", "--dp", "800,0",
                          "--at", "0", "1", "800", "--lp", "--json"], capture_output=True, text=True)
    assert out.returncode == 0 and out.stderr == "", out.stderr
    doc = json.loads(out.stdout)
    lp = [d for _, d in doc["lp_delta_at"]]
    assert lp[0] == lp[1] == 1.0 and 0.0 <= lp[2] <= 1e-300


@pytest.mark.parametrize("call, match", [
    (lambda lp: lp.contains("ab"), r"point='ab'"),
    (lambda lp: lp.contains(None), r"point=None"),
    (lambda lp: lp.delta("x"), r"epsilon='x'"),
    (lambda lp: lp.tradeoff("x"), r"t='x'"),
])
def test_malformed_queries_raise_parameter_errors(call, match):
    lp = IntersectionLP([PrivacyRegion.from_dp(1.0, 0.1)])
    with pytest.raises(ParameterError, match=match):
        call(lp)


def test_non_iterable_regions_raise_a_parameter_error():
    with pytest.raises(ParameterError, match="regions=5"):
        IntersectionLP(5)
