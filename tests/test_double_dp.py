"""Double-DP composition (Theorems 2 and 3, spec §5): the exact route, baselines and oracles.

Independent checks: the 6-point dominating mechanism written out here from the spec's formulas (its
single-copy region must be the intersection of the two constraints), brute-force enumeration of its k-fold
product, Theorems 2 and 3 by their own formulas (tests/theorems.py), Google's dp_accounting PLD of that
pair (pessimistic >= ours >= optimistic), random explicit mechanisms that satisfy both constraints, closed
forms of the extreme lattice points, and the baselines' containment order.
"""

from __future__ import annotations

import math
import zlib

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lpdp import PrivacyRegion
from lpdp.compose import double_dp, homogeneous, max_k_within, total_variation_eta
from lpdp.errors import ParameterError
from lpdp.testing import assert_delta_le, assert_regions_equal
from tests.oracles import brute_force_delta, pld_from_log_pair
from tests.theorems import THEOREMS, theorem2, theorem3


def _alpha(e1, d1, e2, d2):
    """α of spec §5 from its first formula (the code uses the second one, in logs)."""
    num = (1 - d1) * math.exp(e2) - (1 - d2) * math.exp(e1) + (d2 - d1)
    return num / ((math.exp(e2) - math.exp(e1)) * (1 - d1))


def _dominating(e1, d1, e2, d2):
    """The 6-point dominating pair on outcomes {-1, 0, 1, 2, 3, 4} (spec §5); Q is P mirrored."""
    a = _alpha(e1, d1, e2, d2)
    s1, s2 = 1 + math.exp(e1), 1 + math.exp(e2)
    p = [d1, (1 - d1) * (1 - a) * math.exp(e1) / s1, (1 - d1) * a * math.exp(e2) / s2,
         (1 - d1) * a / s2, (1 - d1) * (1 - a) / s1, 0.0]
    return p, p[::-1]


# (ε1, δ1), (ε2, δ2): both constraints active in every case.
ACTIVE = {
    "figure2": ((0.3, 0.0), (0.15, 0.02)),
    "bench": ((1.0, 1e-3), (0.5, 0.05)),
    "budget": ((1.0, 1e-6), (0.3, 1e-3)),
    "tv-constraint": ((1.0, 0.0), (0.0, 0.1)),          # ε2 = 0
    "tiny-delta1": ((0.8, 1e-10), (0.2, 0.05)),
    "alpha-near-1": ((0.6, 0.01), (0.3, 0.01 + 1e-9)),
    # δ2 just below 1 - (1+e^0.3)/(1+e^0.6), where the (0.3, δ2) constraint stops binding: α ~ 1e-6.
    "alpha-near-0": ((0.6, 0.0), (0.3, (1 - (1 + math.exp(0.3)) / (1 + math.exp(0.6))) * (1 - 1e-6))),
    "ratio-3": ((0.9, 0.001), (0.3, 0.04)),
    "irrational": ((1.0, 0.0), (1 / math.sqrt(7), 0.03)),
    "reversed-order": ((0.15, 0.02), (0.3, 0.0)),
    "nearly-equal-eps": ((0.5 + 1e-9, 0.0), (0.5, 1e-10)),     # e^ε1 - e^ε2 ~ 1e-9: α without cancellation
}


def test_alpha_cases_are_what_their_names_say():
    for name, (c1, c2) in ACTIVE.items():
        (e1, d1), (e2, d2) = sorted([c1, c2], key=lambda c: c[1])
        a = _alpha(e1, d1, e2, d2)
        assert 0 < a < 1, name
    assert 1 - _alpha(0.6, 0.01, 0.3, 0.01 + 1e-9) < 1e-6
    (e1, d1), (e2, d2) = ACTIVE["alpha-near-0"]
    assert _alpha(e1, d1, e2, d2) < 1e-5


@pytest.mark.parametrize("name", sorted(ACTIVE))
def test_single_copy_is_the_intersection_of_the_constraints(name):
    c1, c2 = ACTIVE[name]
    (e1, d1), (e2, d2) = sorted([c1, c2], key=lambda c: c[1])
    six = PrivacyRegion.from_pair(*_dominating(e1, d1, e2, d2))
    # The pair is written in linear space (α from a cancelling formula): absolute tolerance 1e-15 too.
    assert_regions_equal(six, PrivacyRegion.from_constraints([c1, c2]), rtol=1e-9, atol=1e-15,
                         boundary_atol=1e-9)
    assert_regions_equal(double_dp(c1, c2, 1), six, rtol=1e-9, atol=1e-15, boundary_atol=1e-9)


@pytest.mark.parametrize("name", sorted(ACTIVE))
@pytest.mark.parametrize("k", [1, 2, 5, 12])
def test_theorems_2_and_3_agree_with_the_lattice(name, k):
    c1, c2 = ACTIVE[name]
    lattice = double_dp(c1, c2, k)
    grid = np.linspace(0.0, 1.05 * max(abs(lattice.losses)), 400)
    mixture = theorem2(c1, c2, k)
    assert_regions_equal(mixture, lattice, rtol=1e-12, epsilon=grid)
    # Theorem 3's region is built from its (ε_uv, δ_uv) list by intersecting lines (breakpoints rounded to
    # double): relative agreement wherever δ is not tiny, and absolute agreement everywhere.
    lines = theorem3(c1, c2, k)
    assert_regions_equal(lines, lattice, rtol=1e-12, atol=1e-15, epsilon=grid)


@pytest.mark.parametrize("name", ["figure2", "ratio-3", "irrational"])
def test_theorem3_profile_values_equal_lattice_delta(name):
    """δ_uv (spec §5, Theorem 3) at every ε_uv against the lattice's δ there, relative 1e-12."""
    c1, c2 = ACTIVE[name]
    k = 15
    lattice, lines = double_dp(c1, c2, k), theorem3(c1, c2, k)
    eps, dlt = np.array(lines.profile()).T
    big = dlt > 1e-12
    np.testing.assert_allclose(dlt[big], lattice.delta(eps[big]), rtol=1e-11)
    if name == "figure2":
        # ε = 0 is among the (u, v) levels (k ε1 / (ε1+ε2) = 10 is integral at k = 15: trap i).
        assert eps[0] == 0.0


def test_figure2_keeps_the_eps0_constraint_at_trap_ks():
    """Spec §5 trap (i): the float ceiling drops ε = 0 at k = 5, 7, 10, 13 for Figure 2's parameters."""
    c1, c2 = ACTIVE["figure2"]
    for k in (5, 7, 10, 13):
        t3 = theorem3(c1, c2, k)
        assert t3.profile()[0][0] == 0.0
        assert t3.delta(0.0) == pytest.approx(double_dp(c1, c2, k).delta(0.0), rel=1e-12)


@pytest.mark.parametrize("name,ks", [("figure2", (1, 2, 3, 5)), ("bench", (2, 4)), ("tv-constraint", (3, 6)),
                                     ("irrational", (3,))])
def test_brute_force_of_the_dominating_mechanism(name, ks):
    c1, c2 = ACTIVE[name]
    (e1, d1), (e2, d2) = sorted([c1, c2], key=lambda c: c[1])
    p, q = _dominating(e1, d1, e2, d2)
    grid = np.linspace(0.0, 3.0, 31)
    for k in ks:
        np.testing.assert_allclose(double_dp(c1, c2, k).delta(grid), brute_force_delta(p, q, k, grid),
                                   rtol=1e-11, atol=1e-16)


@pytest.mark.parametrize("name,k", [("figure2", 20), ("figure2", 100), ("bench", 20), ("bench", 100)])
def test_dp_accounting_brackets_ours(name, k):
    c1, c2 = ACTIVE[name]
    (e1, d1), (e2, d2) = sorted([c1, c2], key=lambda c: c[1])
    p, q = _dominating(e1, d1, e2, d2)
    log_p = {i: math.log(x) for i, x in enumerate(p) if x > 0}
    log_q = {i: math.log(x) for i, x in enumerate(q) if x > 0}
    grid = np.linspace(0.0, 6.0, 13)
    ours = double_dp(c1, c2, k).delta(grid)
    upper = pld_from_log_pair(log_p, log_q, pessimistic=True).self_compose(k)
    lower = pld_from_log_pair(log_p, log_q, pessimistic=False).self_compose(k)
    hi = np.array([upper.get_delta_for_epsilon(e) for e in grid])
    lo = np.array([lower.get_delta_for_epsilon(e) for e in grid])
    assert np.all(lo <= ours * (1 + 1e-9) + 1e-15)
    assert np.all(ours <= hi * (1 + 1e-9) + 1e-15)
    assert np.max(hi - lo) < 5e-3          # the bracket is tight, so it pins our answer down


def _dp_delta(p, q, eps):
    with np.errstate(divide="ignore", invalid="ignore"):
        return max(np.maximum(0, p - math.exp(eps) * q).sum(), np.maximum(0, q - math.exp(eps) * p).sum())


def _random_mechanism(rng, c1, c2, n):
    """A random pair on n outcomes, pulled towards P = Q until both constraints hold (tight for one)."""
    p, q = rng.dirichlet(np.ones(n) * 0.5), rng.dirichlet(np.ones(n) * 0.5)
    if rng.random() < 0.3:                  # sometimes an outcome that reveals everything
        q[1], q[0] = q[1] + q[0], 0.0
    r = 0.5 * (p + q)

    def ok(t):
        pt, qt = (1 - t) * r + t * p, (1 - t) * r + t * q
        return all(_dp_delta(pt, qt, e) <= d for e, d in (c1, c2))

    lo, hi = 0.0, 1.0
    if ok(1.0):
        lo = 1.0
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if ok(mid) else (lo, mid)
    return (1 - lo) * r + lo * p, (1 - lo) * r + lo * q


@pytest.mark.parametrize("name", ["figure2", "bench", "tv-constraint", "ratio-3"])
def test_sampled_mechanisms_never_exceed_ours(name):
    c1, c2 = ACTIVE[name]
    rng = np.random.default_rng(zlib.crc32(name.encode()))   # stable across runs (str hash is not)
    grid = np.linspace(0.0, 3.0, 31)
    for k in (2, 3, 4):
        ours = double_dp(c1, c2, k).delta(grid)
        for _ in range(6):
            p, q = np.array([1.0]), np.array([1.0])
            for _ in range(k):                      # k different mechanisms, each double-DP
                pi, qi = _random_mechanism(rng, c1, c2, int(rng.integers(2, 5)))
                p, q = np.kron(p, pi), np.kron(q, qi)
            theirs = np.array([np.maximum(0.0, p - math.exp(e) * q).sum() for e in grid])
            assert np.all(theirs <= ours * (1 + 1e-9) + 1e-15)


INACTIVE = [
    # (first, second, binding)
    ((0.5, 0.1), (0.3, 0.1), (0.3, 0.1)),        # equal δ: the smaller ε binds
    ((0.3, 0.01), (0.5, 0.1), (0.3, 0.01)),      # smaller ε and smaller δ
    ((1.0, 0.0), (0.9, 0.5), (1.0, 0.0)),        # ε1 > ε2, but (1-δ1)(1+e^ε2) >= (1-δ2)(1+e^ε1)
    ((0.4, 0.02), (0.4, 0.02), (0.4, 0.02)),     # the same constraint twice
    ((0.2, 0.0), (0.0, 0.0), (0.0, 0.0)),        # (0, 0): nothing leaks
    ((0.7, 0.05), (0.0, 0.9), (0.7, 0.05)),      # a vacuous total-variation constraint
]


@pytest.mark.parametrize("first,second,binding", INACTIVE)
@pytest.mark.parametrize("method", ["lattice", *THEOREMS])
def test_inactive_pairs_reduce_to_the_binding_constraint(first, second, binding, method):
    compose = THEOREMS.get(method, double_dp)
    # The claim itself, independently of the code: the intersection is the binding constraint's region.
    assert_regions_equal(PrivacyRegion.from_constraints([first, second]), PrivacyRegion.from_dp(*binding),
                         rtol=1e-9, boundary_atol=1e-9)
    for k in (1, 4):
        assert_regions_equal(compose(first, second, k), homogeneous(*binding, k))
        assert_regions_equal(compose(second, first, k), homogeneous(*binding, k))


def test_boundary_of_activity_is_continuous():
    """Just inside the active set (α -> 0) the exact region approaches the binding constraint's."""
    # For (0.6, 0) and (e2, 0.05): active iff 1 + e^{e2} < 0.95 (1 + e^{0.6}).
    edge = math.log(0.95 * (1 + math.exp(0.6)) - 1)
    inside = double_dp((0.6, 0.0), (edge - 1e-9, 0.05), 6)
    assert_regions_equal(inside, homogeneous(0.6, 0.0, 6), rtol=1e-6, boundary_atol=1e-6)


@pytest.mark.parametrize("name", ["figure2", "bench", "budget", "tv-constraint", "ratio-3"])
@pytest.mark.parametrize("k", [1, 3, 20])
def test_exact_inside_remark2_inside_remark1(name, k):
    c1, c2 = ACTIVE[name]
    exact = double_dp(c1, c2, k)
    r1, r2 = double_dp(c1, c2, k, method="remark1"), double_dp(c1, c2, k, method="remark2")
    grid = np.linspace(0.0, 1.05 * max(abs(r1.losses)), 300)
    assert_delta_le(exact, r2, grid, rtol=1e-9)
    assert_delta_le(r2, r1, grid, rtol=1e-9)
    # Remark 1 by its definition, independently of double_dp's baseline code path.
    ref = np.maximum(0, np.minimum(homogeneous(*c1, k).delta(grid), homogeneous(*c2, k).delta(grid)))
    assert np.all(r1.delta(grid) <= ref * (1 + 1e-9) + 1e-15)


def test_figure2_exact_is_strictly_better_at_k20():
    c1, c2 = ACTIVE["figure2"]
    exact = double_dp(c1, c2, 20)
    r1, r2 = double_dp(c1, c2, 20, method="remark1"), double_dp(c1, c2, 20, method="remark2")
    assert r1.area() > r2.area() > exact.area()
    assert r2.delta(1.0) - exact.delta(1.0) > 0.01


def test_eta_is_the_total_variation_of_the_constraint():
    # The total variation (δ at ε = 0) of R(ε, δ) is η.
    for e, d in [(0.15, 0.02), (1.0, 0.0), (0.0, 0.3)]:
        assert total_variation_eta(e, d) == pytest.approx(float(PrivacyRegion.from_dp(e, d).delta(0.0)),
                                                          rel=1e-12)


def test_extreme_tail_in_log_space():
    """k = 800: δ between the two largest losses is below 1e-300 and matches its closed form."""
    (e1, d1), (e2, d2) = (2.0, 0.0), (0.5, 0.3)
    k = 800
    a = _alpha(e1, d1, e2, d2)
    s1, s2 = math.exp(e1) / (1 + math.exp(e1)), math.exp(e2) / (1 + math.exp(e2))
    top, second = k * e1, (k - 1) * e1 + e2                     # keys (k, 0) and (k-1, +1)
    log_top = k * math.log((1 - a) * s1)
    log_second = math.log(k) + (k - 1) * math.log((1 - a) * s1) + math.log(a * s2)
    assert log_top < math.log(1e-300)
    region = double_dp((e1, d1), (e2, d2), k)
    eps = 0.5 * (top + second)
    assert region.log_delta(eps) == pytest.approx(log_top + math.log(-math.expm1(eps - top)), rel=1e-10)
    eps = second - 0.5 * (e1 - e2) * 0.5
    expected = np.logaddexp(log_top + math.log(-math.expm1(eps - top)),
                            log_second + math.log(-math.expm1(eps - second)))
    assert region.log_delta(eps) == pytest.approx(expected, rel=1e-10)
    assert np.logaddexp.reduce(region.log_p) == pytest.approx(0.0, abs=1e-11)


def test_log_matmul_keeps_deep_terms_exact():
    """The lattice's scaled BLAS products against a direct log-sum-exp, with factors down to e^-2000."""
    from scipy.special import logsumexp

    from lpdp.compose.double import _log_matmul

    rng = np.random.default_rng(7)
    log_f = -rng.uniform(0, 1100, size=(40, 30))
    log_g = -rng.uniform(0, 1100, size=(30, 50))
    log_f[rng.random(log_f.shape) < 0.2] = -np.inf
    log_f[:, 0] = -rng.uniform(0, 2000, size=40)         # some factors far below the floor
    ref = logsumexp(log_f[:, :, None] + log_g[None, :, :], axis=1)
    ours = _log_matmul(log_f, log_g)
    # Terms above 2^-1517 are kept, so wherever the sum is above e^-1000 it is exact to ~1e-15.
    big = ref > -1000
    assert big.mean() > 0.5
    np.testing.assert_allclose(ours[big], ref[big], rtol=0, atol=1e-12)
    assert np.all(ours <= ref + 1e-12)


def test_delta_tilde_is_exact_for_tiny_delta1():
    c1, c2 = (0.8, 1e-10), (0.2, 0.05)
    k = 300
    region = double_dp(c1, c2, k)
    assert math.exp(region.log_p_inf) == pytest.approx(-math.expm1(k * math.log1p(-1e-10)), rel=1e-12)
    assert region.delta(1e3) == pytest.approx(3e-8, rel=1e-6)


def test_max_k_within_matches_a_linear_scan():
    c1, c2 = ACTIVE["figure2"]
    budget = (2.0, 1e-3)
    scan = [k for k in range(1, 80) if double_dp(c1, c2, k).delta(budget[0]) <= budget[1]]
    assert scan == list(range(1, len(scan) + 1))     # monotone
    found = max_k_within(lambda k: double_dp(c1, c2, k), *budget)
    assert found == len(scan)
    r1 = max_k_within(lambda k: double_dp(c1, c2, k, method="remark1"), *budget)
    assert r1 <= found
    assert max_k_within(lambda k: double_dp(c1, c2, k), 0.01, 1e-9) == 0
    assert max_k_within(lambda k: double_dp((0.0, 0.0), (0.0, 0.0), k), 0.1, 0.1, k_max=50) == 50


@pytest.mark.parametrize("args,kwargs,match", [
    (((0.3, 1.0), (0.1, 0.02), 3), {}, r"first\.delta=1\.0: must be in \[0, 1\)"),
    (((0.3, 0.0), (0.1, -0.1), 3), {}, r"second\.delta=-0\.1: must be in \[0, 1\)"),
    (((-0.3, 0.0), (0.1, 0.02), 3), {}, r"first\.epsilon=-0\.3: must be finite and >= 0"),
    (((math.nan, 0.0), (0.1, 0.02), 3), {}, r"first\.epsilon=nan: must be finite and >= 0"),
    (((0.3, 0.0), (0.1, 0.02), 2.5), {}, r"k=2\.5: must be an integer >= 1"),
    (((0.3, 0.0), (0.1, 0.02), 0), {}, r"k=0: must be an integer >= 1"),
    (((0.3, 0.0), (0.1, 0.02), 3), {"method": "exact"}, r"method='exact': must be one of lattice"),
    (((0.3,), (0.1, 0.02), 3), {}, r"first=\(0\.3,\): must be an \(epsilon, delta\) pair"),
])
def test_bad_input(args, kwargs, match):
    with pytest.raises(ParameterError, match=match):
        double_dp(*args, **kwargs)


def test_bad_budget():
    with pytest.raises(ParameterError, match=r"delta=1\.5: must be in \[0, 1\]"):
        max_k_within(lambda k: homogeneous(0.1, 0.0, k), 1.0, 1.5)
    with pytest.raises(ParameterError, match=r"k_max=0: must be an integer >= 1"):
        max_k_within(lambda k: homogeneous(0.1, 0.0, k), 1.0, 0.1, k_max=0)


@pytest.mark.parametrize("name", ["figure2", "irrational", "tv-constraint"])
def test_agrees_with_n_constraint_composition(name):
    """Spec §7: the n-constraint composition (a separate convolution engine) is §5 when n = 2."""
    from lpdp.compose import multi

    c1, c2 = ACTIVE[name]
    assert_regions_equal(multi([c1, c2], 10), double_dp(c1, c2, 10), rtol=1e-10, boundary_atol=1e-12)


def test_too_large_k_is_refused_not_attempted():
    # Estimated against the one budget (lpdp._limits) before anything is allocated.
    with pytest.raises(ParameterError, match=r"k=20000 with method 'lattice' needs ~60 GB of memory.*"
                                             r"commensurate"):
        double_dp((0.3, 0.0), (0.1234567, 0.02), 20_000)
    with pytest.raises(ParameterError, match=r"k=1000000000 \(4000000001 integer levels\) needs ~480 GB"):
        double_dp((0.3, 0.0), (0.15, 0.02), 10**9)
    # Inactive pairs go to Kairouz, which has no such limit.
    assert double_dp((0.3, 0.0), (0.5, 0.1), 10_000).delta(0.0) > 0


def test_baselines_stay_supersets_beyond_line_overflow():
    """k ε1 = 800 > 709: lines whose e^ε overflows are intersected exactly; the baselines stay supersets."""
    c1, c2 = ACTIVE["bench"]
    k = 800
    exact = double_dp(c1, c2, k)
    r1, r2 = double_dp(c1, c2, k, method="remark1"), double_dp(c1, c2, k, method="remark2")
    grid = np.linspace(0.0, 1000.0, 201)
    assert_delta_le(exact, r2, grid, rtol=1e-9)
    assert_delta_le(r2, r1, grid, rtol=1e-9)
    assert np.all(np.asarray(r1.delta(grid)) <= 1.0)
    # Remark 1 is the intersection: at each constraint's own profile points it is at most that δ.
    h1 = homogeneous(*c1, k)
    assert_delta_le(r1, h1, [e for e, _ in h1.profile()], rtol=1e-9)


def test_theorem3_handles_overflowing_lines():
    # ε1 = 700: the certified side is widened by ulps of 700-nat terms (about 2e-12 relative)
    assert_regions_equal(theorem3((700.0, 0.0), (1.0, 0.5), 3),
                         double_dp((700.0, 0.0), (1.0, 0.5), 3), rtol=1e-11, atol=1e-15)
    assert_regions_equal(theorem2((700.0, 0.0), (1.0, 0.5), 3),
                         double_dp((700.0, 0.0), (1.0, 0.5), 3), rtol=1e-11)


@settings(max_examples=30, deadline=None)
@given(e1=st.floats(0.0, 3.0), d1=st.floats(0.0, 0.5), e2=st.floats(0.0, 3.0), d2=st.floats(0.0, 0.5),
       k=st.integers(1, 6))
def test_random_pairs_routes_agree_and_baselines_contain(e1, d1, e2, d2, k):
    c1, c2 = (e1, d1), (e2, d2)
    exact = double_dp(c1, c2, k)
    grid = np.linspace(0.0, 3.0 * k + 0.1, 60)
    assert_regions_equal(theorem2(c1, c2, k), exact, rtol=1e-10, atol=1e-15, epsilon=grid,
                         boundary_atol=1e-10)
    assert_delta_le(exact, double_dp(c1, c2, k, method="remark2"), grid, rtol=1e-9)
    # The exact region lies inside each constraint's own Kairouz composition.
    for c in (c1, c2):
        assert_delta_le(exact, homogeneous(*c, k), grid, rtol=1e-9)


def test_remark2_with_a_vacuous_total_variation():
    # η = δ2 + (1-δ2) tanh(ε2/2) rounds to 1 at ε2 = 40: Remark 2 is then Remark 1.
    c1, c2 = (45.0, 0.0), (40.0, 0.1)
    assert total_variation_eta(*c2) == 1.0
    assert_regions_equal(double_dp(c1, c2, 3, method="remark2"), double_dp(c1, c2, 3, method="remark1"),
                         rtol=1e-9, atol=1e-15, boundary_atol=1e-9)


@pytest.mark.parametrize("c1, c2, k", [
    ((0.3, 0.0), (0.15, 0.02), 40),         # Figure 2: units (2, 1)
    ((0.9, 1e-4), (0.3, 0.05), 25),         # units (3, 1): every other level empty (gcd 2)
    ((1.0, 0.0), (0.0, 0.1), 30),           # ε2 = 0: ±u2 is one level
])
def test_commensurate_levels_route_matches_the_two_dimensional_lattice(c1, c2, k):
    """The 1-D power on integer levels against the (n1, n2) lattice by BLAS (an independent route)."""
    from lpdp.compose.double import _classify, _lattice

    fast, slow = double_dp(c1, c2, k), _lattice(_classify(c1, c2), k)
    eps = np.linspace(0.0, k * max(c1[0], c2[0]), 80)
    want = slow.log_delta(eps)
    ok = want > -690
    # two certified upper sides: they agree to their routes' bounds (about 1e-12)
    np.testing.assert_allclose(fast.log_delta(eps)[ok], want[ok], rtol=0, atol=5e-12)


def test_rational_ratio_with_many_levels_takes_the_lattice_and_agrees_with_the_levels_route(monkeypatch):
    """ε1/ε2 = 50/21: 10^4 integer levels at k = 100 cost more than the (n1, n2) lattice, which the
    router takes; the levels route (independent) gives the same δ(ε)."""
    from lpdp.compose import double

    c1, c2, k = (0.05, 0.0), (0.021, 1e-4), 100
    costs = double.route_costs(0.05, 0.021, k)
    assert costs["lattice"][1] < costs["levels"][1]
    other = double._levels(double._classify(c1, c2), k, [50, 21])

    def refuse(*_):
        raise AssertionError("the levels route was taken")

    monkeypatch.setattr(double, "_levels", refuse)
    fast = double_dp(c1, c2, k)
    eps = np.linspace(0.0, 4.5, 60)  # below k ε1 = 5, where δ is a rounding-level artefact of either route
    want = other.log_delta(eps)
    ok = want > -690
    # two certified upper sides: they agree to their routes' bounds (about 1e-12)
    np.testing.assert_allclose(fast.log_delta(eps)[ok], want[ok], rtol=0, atol=5e-12)


def test_figure2_at_ten_thousand_is_normalised():
    """k = 10^4 (the 2-D lattice stopped at 3000): the masses sum to one to 1e-12."""
    r = double_dp((0.3, 0.0), (0.15, 0.02), 10_000)
    assert abs(np.logaddexp.reduce(np.asarray(r.log_p))) < 1e-12
    assert r.epsilon(1e-5) > 0 and r.delta(r.epsilon(1e-5)) <= 1e-5


@pytest.mark.deep
def test_figure2_at_ten_thousand_matches_theorem2_mixture():
    """δ(ε) = Σ_i w_i δ_{C_{i,k-i}}(ε) (Theorem 2, δ1 = 0), w_i binomial: the i within 12 sd of the mean
    carry all but 1e-30 of the weight; each C is a heterogeneous composition."""
    from scipy.stats import binom

    from lpdp.compose import heterogeneous
    from lpdp.compose.double import _classify

    k, c1, c2 = 10_000, (0.3, 0.0), (0.15, 0.02)
    p = _classify(c1, c2)
    q = math.exp(p.log_1m_alpha)
    mean, sd = k * q, math.sqrt(k * q * (1 - q))
    i = np.arange(max(0, int(mean - 12 * sd)), min(k, int(mean + 12 * sd)) + 1)
    w = binom.pmf(i, k, q)
    eps = np.array([50.0, 150.0, 300.0])
    want = sum(wi * heterogeneous({0.3: int(j), 0.15: int(k - j)}).delta(eps)
               for j, wi in zip(i, w, strict=True))
    np.testing.assert_allclose(double_dp(c1, c2, k).delta(eps), want, rtol=1e-10)
