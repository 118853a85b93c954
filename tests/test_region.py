"""PrivacyRegion: each face checked against an independent route (closed forms, Shapely, brute sums)."""

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from lpdp import ParameterError, PrivacyRegion
from lpdp.mechanisms import randomized_response
from lpdp.testing import assert_regions_equal
from tests.oracles import support_delta_from_vertices
from tests.strategies import constraint, constraint_lists, deltas, epsilons, grid_constraint_lists

GRID = np.linspace(0.0, 5.0, 201)


def f_eps_delta(eps, delta, t):
    """Spec §1 closed form of the (ε, δ) trade-off function."""
    t = np.asarray(t, float)
    return np.maximum.reduce([np.zeros_like(t), 1 - delta - math.exp(eps) * t,
                              math.exp(-eps) * (1 - delta - t)])


def delta_closed_form(eps, delta, e):
    """δ(e) of R(eps, delta): δ for e >= eps, else δ + (1-δ)(e^eps - e^e)/(1 + e^eps)."""
    e = np.asarray(e, float)
    return np.where(e >= eps, delta, delta + (1 - delta) * (np.exp(eps) - np.exp(e)) / (1 + np.exp(eps)))


@given(epsilons, deltas)
def test_from_dp_delta_matches_closed_form(eps, delta):
    r = PrivacyRegion.from_dp(eps, delta)
    np.testing.assert_allclose(r.delta(GRID), delta_closed_form(eps, delta, GRID), rtol=1e-12, atol=1e-15)


@given(epsilons, deltas)
def test_from_dp_tradeoff_matches_closed_form(eps, delta):
    t = np.linspace(0, 1, 57)
    r = PrivacyRegion.from_dp(eps, delta)
    np.testing.assert_allclose(r.tradeoff(t), f_eps_delta(eps, delta, t), atol=1e-12)


def test_full_triangle_and_diagonal():
    full = PrivacyRegion.from_dp(0.0, 1.0)
    assert full.area() == pytest.approx(0.5, abs=1e-15)
    assert full.polygon.area == pytest.approx(0.5, abs=1e-15)
    assert full.contains((0.0, 0.0)) and full.contains((1.0, 0.0))
    assert np.all(full.delta(GRID) == 1.0)
    none = PrivacyRegion.from_dp(0.0, 0.0)
    assert none.area() == pytest.approx(0.0, abs=1e-15)
    assert not none.contains((0.3, 0.3)) and none.contains((0.3, 0.7))
    assert np.all(none.delta(GRID) == 0.0)


@given(constraint_lists)
def test_intersection_delta_is_support_function_of_vertices(pairs):
    r = PrivacyRegion.from_constraints(pairs)
    # Geometry route: the region's vertices from Shapely's intersection of the single regions.
    poly = PrivacyRegion.from_dp(*pairs[0]).polygon
    for p in pairs[1:]:
        poly = poly.intersection(PrivacyRegion.from_dp(*p).polygon)
    import shapely

    # A zero-area intersection (R(0, 0) is the diagonal) may come back from Shapely as empty.
    verts = shapely.get_coordinates(poly) if not poly.is_empty else np.array([[0.0, 1.0], [1.0, 0.0]])
    np.testing.assert_allclose(r.delta(GRID), support_delta_from_vertices(verts, GRID), atol=1e-12)
    assert r.area() == pytest.approx(poly.area, abs=1e-12)


@given(constraint_lists)
def test_intersection_delta_is_min_of_constraints_at_their_epsilons(pairs):
    """At ε_i the intersection's δ is at most δ_i (each constraint holds)."""
    r = PrivacyRegion.from_constraints(pairs)
    for e, d in pairs:
        assert r.delta(e) <= d + 1e-12


@given(grid_constraint_lists, grid_constraint_lists)
def test_intersect_equals_from_constraints_of_union(a, b):
    left = PrivacyRegion.from_constraints(a).intersect(PrivacyRegion.from_constraints(b))
    assert_regions_equal(left, PrivacyRegion.from_constraints(a + b), rtol=1e-9, atol=1e-13,
                         boundary_atol=1e-10)


@given(st.lists(st.floats(0.0, 1.0), min_size=2, max_size=40))
def test_from_pair_matches_direct_hockey_stick(raw):
    raw = np.asarray(raw) + 1e-3
    half = len(raw) // 2
    p = raw[:half] / raw[:half].sum()
    q = np.roll(raw, 1)[:half]
    q = q / q.sum()
    p[0], q[-1] = p[0] + 0.0, q[-1]
    r = PrivacyRegion.from_pair(p, q)
    direct = [np.sum(np.maximum(0.0, p - math.exp(e) * q)) for e in GRID]
    # the certified sides move by the loss error η (an ulp or two of each loss) times the slope of log δ,
    # 1/(L - ε) next to a loss: 1.3e-12 relative at ε = 4.15 for raw = [1e-05, 1.0, 0.0, 0.0625]
    np.testing.assert_allclose(r.delta(GRID), direct, rtol=1e-11, atol=1e-15)
    np.testing.assert_allclose(r.delta_lower(GRID), direct, rtol=1e-11, atol=1e-15)


def test_asymmetric_pair_with_zero_masses():
    p = [0.1, 0.5, 0.4, 0.0]
    q = [0.0, 0.2, 0.5, 0.3]
    r = PrivacyRegion.from_pair(p, q)
    assert not r.is_symmetric
    direct = [sum(max(0.0, a - math.exp(e) * b) for a, b in zip(p, q, strict=True)) for e in GRID]
    np.testing.assert_allclose(r.delta(GRID), direct, rtol=1e-12, atol=1e-16)
    assert r.delta(50.0) == pytest.approx(0.1, rel=1e-12)      # the q = 0 outcome
    assert r.tradeoff(0.0) == pytest.approx(0.9, abs=1e-15)
    assert PrivacyRegion.from_dp(1.0, 0.2).is_symmetric


@given(constraint_lists)
def test_from_vertices_round_trip(pairs):
    r = PrivacyRegion.from_constraints(pairs)
    back = PrivacyRegion.from_vertices(r.vertices)
    assert_regions_equal(r, back, rtol=1e-9, atol=1e-12, boundary_atol=1e-12)


@given(constraint, st.floats(1e-9, 0.9))
def test_epsilon_inverts_delta_and_rounds_up(pair, target):
    r = PrivacyRegion.from_constraints([pair])
    e = r.epsilon(target)
    if math.isinf(e):
        assert target < r.delta(100.0)
        return
    assert r.log_delta(e) <= math.log(target)   # the check epsilon() itself guarantees, in log space
    if e > 0:
        assert r.delta(max(0.0, e - 1e-9)) > target * (1 - 1e-12) - 1e-15


def test_epsilon_examples():
    r = PrivacyRegion.from_dp(1.0, 0.1)
    assert r.epsilon(0.1) == 1.0
    assert math.isinf(r.epsilon(0.05))
    assert r.epsilon(1.0) == 0.0


@given(constraint_lists, st.floats(0, 1), st.floats(0, 1))
def test_contains_point_agrees_with_shapely(pairs, x, y):
    from shapely.geometry import Point

    r = PrivacyRegion.from_constraints(pairs)
    pt = Point(x, y)
    dist = r.polygon.exterior.distance(pt)
    if dist > 1e-9:   # away from the boundary the two must agree exactly
        assert r.contains((x, y)) == r.polygon.contains(pt)


@given(constraint, constraint)
def test_containment_monotone_in_parameters(a, b):
    (e1, d1), (e2, d2) = a, b
    lo = PrivacyRegion.from_dp(min(e1, e2), min(d1, d2))
    hi = PrivacyRegion.from_dp(max(e1, e2), max(d1, d2))
    assert hi.contains(lo)
    assert hi.polygon.buffer(1e-12).contains(lo.polygon)


@given(constraint_lists)
def test_delta_non_increasing_and_convex_in_exp_eps(pairs):
    r = PrivacyRegion.from_constraints(pairs)
    e = np.log(np.linspace(1.0, 60.0, 400))
    d = r.delta(e)
    assert np.all(np.diff(d) <= 1e-15)
    # Convex in s = e^ε on an evenly spaced s grid: second differences non-negative.
    assert np.all(np.diff(d, 2) >= -1e-12)


def test_profile_of_two_constraints():
    r = PrivacyRegion.from_constraints([(1.3, 0.0), (0.5, 0.2)])
    prof = r.profile()
    assert [e for e, _ in prof] == [0.5, 1.3]
    assert prof[0][1] == pytest.approx(0.2, rel=1e-12)
    assert prof[1][1] == pytest.approx(0.0, abs=1e-15)


def test_inactive_constraint_drops_out():
    r = PrivacyRegion.from_constraints([(1.0, 0.0), (2.0, 0.1)])
    assert_regions_equal(r, PrivacyRegion.from_dp(1.0, 0.0))


def test_immutable():
    r = PrivacyRegion.from_dp(1.0, 0.1)
    with pytest.raises(AttributeError, match="immutable"):
        r._loss = np.zeros(1)
    with pytest.raises(AttributeError, match="immutable"):
        r.foo = 1
    with pytest.raises(ValueError):
        r.losses[0] = 5.0


@pytest.mark.parametrize(("eps", "delta", "match"), [
    (-0.1, 0.0, r"epsilon=-0.1: must be finite and >= 0"),
    (math.nan, 0.0, r"epsilon=nan"),
    (math.inf, 0.0, r"epsilon=inf"),
    (1.0, 1.5, r"delta=1.5: must be in \[0, 1\]"),
    (1.0, -1e-3, r"delta=-0.001"),
    ("1", 0.0, r"epsilon='1': must be a real number"),
])
def test_bad_parameters(eps, delta, match):
    with pytest.raises(ParameterError, match=match):
        PrivacyRegion.from_dp(eps, delta)


def test_bad_queries():
    r = PrivacyRegion.from_dp(1.0, 0.1)
    with pytest.raises(ParameterError, match=r"epsilon=-1.0: must be finite and >= 0"):
        r.delta(-1.0)
    with pytest.raises(ParameterError, match=r"delta=2: must be in \[0, 1\]"):
        r.epsilon(2)
    with pytest.raises(ParameterError, match=r"t=1.5: must be in \[0, 1\]"):
        r.tradeoff(1.5)
    with pytest.raises(ParameterError, match=r"constraints\[1\].delta=1.2"):
        PrivacyRegion.from_constraints([(1, 0), (1, 1.2)])
    with pytest.raises(ParameterError, match=r"masses under P sum to"):
        PrivacyRegion.from_pair([0.5, 0.4], [0.5, 0.5])
    with pytest.raises(ParameterError, match=r"p\[0\]=-0.1"):
        PrivacyRegion.from_pair([-0.1, 1.1], [0.5, 0.5])
    with pytest.raises(ParameterError, match=r"points\[0\]"):
        PrivacyRegion.from_vertices([(0.8, 0.8)])


def test_intersection_with_huge_and_very_negative_losses():
    """Losses beyond ±709 (e^L overflows) keep their masses; δ(∞) is not lost (a soundness trap)."""
    from lpdp.compose import homogeneous

    h = homogeneous(20.0, 1e-3, 100)             # losses from -2000 to 2000, p_inf = 1 - 0.999^100
    grid = np.array([0.0, 50.0, 1000.0, 1999.0, 2500.0])
    assert_regions_equal(h.intersect(h), h, epsilon=grid, rtol=1e-12, boundary_atol=1e-12)
    assert h.intersect(h).delta(2500.0) == pytest.approx(-math.expm1(100 * math.log1p(-1e-3)), rel=1e-12)
    weak = PrivacyRegion.from_dp(0.0, 1.0)
    assert_regions_equal(h.intersect(weak), h, epsilon=grid, rtol=1e-12, boundary_atol=1e-12)


@given(grid_constraint_lists, grid_constraint_lists)
def test_intersection_is_below_both_and_tight_at_their_edges(a, b):
    ra, rb = PrivacyRegion.from_constraints(a), PrivacyRegion.from_constraints(b)
    r = ra.intersect(rb)
    grid = np.linspace(0, 5, 51)
    assert np.all(r.delta(grid) <= np.minimum(ra.delta(grid), rb.delta(grid)) * (1 + 1e-12) + 1e-15)
    assert ra.contains(r, tol=1e-12) and rb.contains(r, tol=1e-12)


def test_delta_never_exceeds_one():
    from lpdp.compose import homogeneous

    assert np.all(homogeneous(3.0, 0.2, 300).delta(np.linspace(0, 5, 11)) <= 1.0)


@pytest.mark.parametrize("build", [
    lambda: __import__("lpdp.compose", fromlist=["x"]).homogeneous(0.1, 1e-7, 300),
    lambda: __import__("lpdp.compose", fromlist=["x"]).homogeneous(7.0, 0.0, 3000),
    lambda: __import__("lpdp.compose", fromlist=["x"]).heterogeneous({0.31: 40, 0.17: 30, 0.05: 9}),
    lambda: __import__("lpdp.compose", fromlist=["x"]).double_dp((0.3, 0.0), (0.15, 0.02), 150),
    lambda: PrivacyRegion.from_constraints([(1.3, 1e-6), (0.5, 0.2), (0.1, 0.4)]),
    lambda: PrivacyRegion.from_dp(0.0, 0.3),
])
def test_prefix_face_matches_direct_sums(build):
    """δ from the prefix sums (O(log N) per ε) equals the direct O(N) sum, at breakpoints and between."""
    from tests.oracles import direct_log_delta

    r = build()
    L = np.asarray(r.losses)
    rng = np.random.default_rng(3)
    eps = np.concatenate([L[L >= 0], np.nextafter(L[L > 0], 0), rng.uniform(0, L.max(initial=0) + 1, 200)])
    got, want = r._log_delta_unchecked(eps), direct_log_delta(r, eps)
    finite = np.isfinite(want)
    assert np.array_equal(np.isfinite(got), finite)
    # log δ to 1e-12 absolute is δ to 1e-12 relative
    np.testing.assert_allclose(got[finite], want[finite], rtol=0, atol=1e-12)
    # the certified sides bracket the direct sum of the stored atoms (no tolerance)
    assert np.all(r.log_delta(eps)[finite] >= want[finite])
    assert np.all(r.log_delta_lower(eps)[finite] <= want[finite])
    # 1 - δ from the face (the cosupport, used by intersections) against the direct complement
    neg = -rng.uniform(0, L.max(initial=0) + 1, 50)
    cos = np.exp(r._log_cosupport(neg))
    direct = np.array([np.exp(np.asarray(r.log_p)[L <= e]).sum()
                       + np.exp(e + np.asarray(r.log_q)[L > e]).sum() for e in neg])
    np.testing.assert_allclose(cos, direct, rtol=1e-12, atol=1e-300)


@pytest.mark.parametrize("target", [0.5, 1e-3, 1e-6, 1e-12, 1e-100, 1e-300])
def test_epsilon_closed_form_is_the_smallest_valid_guarantee(target):
    from lpdp.compose import heterogeneous
    from tests.oracles import direct_log_delta

    r = heterogeneous({0.3: 300, 0.1: 200})
    e = r.epsilon(target)
    assert direct_log_delta(r, [e])[0] <= math.log(target) + 1e-12
    if e > 0:
        below = np.nextafter(e, 0) * (1 - 1e-12)
        assert direct_log_delta(r, [below])[0] > math.log(target) - 1e-12


def test_profile_of_a_million_atoms_is_exact_at_sampled_breakpoints():
    # profile() used to cost one O(N) pass per breakpoint (O(N^2): hours at N = 10^6).
    from lpdp.compose import homogeneous
    from tests.oracles import direct_log_delta

    r = homogeneous(0.01, 1e-9, 1_000_000)
    prof = r.profile()
    assert len(prof) == 500_001
    idx = np.array([0, 1, 1000, 250_000, 400_000, 499_000, 500_000])
    eps = np.array([prof[i][0] for i in idx])
    np.testing.assert_allclose([prof[i][1] for i in idx], np.exp(direct_log_delta(r, eps)), rtol=1e-12)


def test_regions_pickle_and_deepcopy_with_their_answers():
    """Regions cross process boundaries (Dask sweeps): pickling used to fail on the immutability guard."""
    import copy
    import pickle

    from lpdp.compose import homogeneous

    r = homogeneous(0.5, 1e-3, 20)
    r.epsilon(1e-3)                                   # builds the prefix face
    for other in (pickle.loads(pickle.dumps(r)), copy.deepcopy(r)):
        assert np.array_equal(other.losses, r.losses) and other.log_p_inf == r.log_p_inf
        assert other.epsilon(1e-3) == r.epsilon(1e-3)  # exact: the same computation on a copy
        assert np.array_equal(other.delta([0.0, 1.0, 3.0]), r.delta([0.0, 1.0, 3.0]))


def test_small_beta_vertices_keep_their_relative_accuracy():
    """β at a vertex is a tail sum of the P-masses still to come, not ``1 - Σ p``: that subtraction left an
    absolute error of about ``n u`` (β of 1e-10 off by 1e-6 relative, BLAS-dependent, and every β below
    4e-16 replaced by a plateau). Against the binomial tails of k-fold pure ε-DP in 50-digit mpmath."""
    import mpmath

    from lpdp.compose import homogeneous

    mpmath.mp.dps = 50
    eps, k = 0.1, 200
    a = mpmath.e ** eps / (1 + mpmath.e ** eps)
    # atoms by decreasing loss ε(2j - k): j = k, ..., 0; P(j) = C(k, j) a^j (1 - a)^(k - j)
    p = [mpmath.binomial(k, j) * a ** j * (1 - a) ** (k - j) for j in range(k, -1, -1)]
    q = [mpmath.binomial(k, j) * (1 - a) ** j * a ** (k - j) for j in range(k, -1, -1)]
    want = [(mpmath.fsum(q[:i]), mpmath.fsum(p[i:])) for i in range(k + 2)]
    got = homogeneous(eps, 0.0, k).vertices  # (0, 1), then one vertex per atom, ending at (1, 0)
    assert got.shape == (k + 2, 2)
    worst = max(abs(float((mpmath.mpf(g) - w) / w)) for gv, wv in zip(got, want, strict=True)
                for g, w in zip(gv, wv, strict=True) if w > 0)
    assert worst < 1e-12


def _face_regions():
    from lpdp.compose import double_dp, heterogeneous, homogeneous

    rng = np.random.default_rng(3)
    pair = PrivacyRegion.from_pair(rng.dirichlet(np.ones(7)).tolist(), rng.dirichlet(np.ones(7)).tolist())
    # a left-out mass (double-DP), outward-rounded losses (Kairouz, Theorem 1), a table's loss error
    return [double_dp((0.3, 0.0), (0.15, 0.02), 100), heterogeneous({0.3: 300, 0.1: 200}),
            homogeneous(0.01, 0.0, 10_000), pair]


@pytest.mark.parametrize("index", range(4))
def test_one_epsilon_is_certified_like_an_array_of_them(index):
    """δ at one ε is the face's scalar evaluation (math), at several the vectorised one (numpy): the same
    formulas and bound, so they agree to their roundings, and both bracket the direct sum."""
    from tests.oracles import direct_log_delta

    r = _face_regions()[index]
    r.epsilon(1e-3)                                   # builds the prefix face
    top = float(r.losses[0])
    eps = np.unique(np.concatenate([np.linspace(0.0, top * 1.01, 57), r.losses[r.losses >= 0][::7]]))
    want = direct_log_delta(r, eps)
    for upper, query in ((True, r.log_delta), (False, r.log_delta_lower)):
        many = query(eps)
        one = np.array([query(float(e)) for e in eps])
        fin = np.isfinite(many)
        assert np.array_equal(fin, np.isfinite(one))
        assert np.all(np.abs(one[fin] - many[fin]) <= 16 * 2.0 ** -53 * (np.abs(many[fin]) + 1.0))
        bad = (one < want - 1e-12) if upper else (one > want + 1e-12)
        assert not np.any(bad[np.isfinite(want)])


@pytest.mark.parametrize("index", range(4))
@pytest.mark.parametrize("target", [0.3, 1e-3, 1e-5, 1e-9, 1e-30])
def test_epsilon_takes_a_few_face_evaluations_and_is_tight(index, target, monkeypatch):
    """ε(δ) on a built face: Newton steps from the nominal answer, usually two evaluations a side (it was
    123 points a side, a vectorised ladder around the nominal answer); the two sides straddle the exact
    crossing (the direct sum) and lie within 1e-12 relative of each other."""
    from tests.oracles import direct_log_delta

    r = _face_regions()[index]
    r.epsilon(0.5)
    calls = []
    original = PrivacyRegion._certified_face_one
    monkeypatch.setattr(PrivacyRegion, "_certified_face_one",
                        lambda self, e, upper: calls.append(e) or original(self, e, upper))
    hi = r.epsilon(target)
    lo = r.epsilon_lower(target)
    if math.isinf(hi) or hi == 0.0:
        return
    if target >= 1e-9:         # (the pair's 1e-30 lies ulps below its largest loss, where δ drops to 0)
        assert len(calls) <= 6
    assert lo <= hi <= lo * (1 + 1e-12) + 1e-15
    assert direct_log_delta(r, [hi])[0] <= math.log(target) + 1e-12
    assert direct_log_delta(r, [lo])[0] > math.log(target) - 1e-12


def test_a_memoised_region_answers_as_a_new_one_whatever_was_asked_of_it_before():
    """from_constraints memoises its regions; each call hands out a copy without the queries other
    callers made. A shared object answered δ(0) of R(1.3, 0) by the prefix face once some other caller
    had asked it 100 times, term by term before (two certified values 6e-16 apart): a scenario's result
    depended on the scenarios run before it in the same process."""
    first = PrivacyRegion.from_constraints([(1.3, 0.0)]).delta(np.array([0.0, 0.5]))
    busy = PrivacyRegion.from_constraints([(1.3, 0.0)])
    busy.delta(np.linspace(0.0, 2.0, 100))          # more than FACE_AFTER queries: its face is built
    again = PrivacyRegion.from_constraints([(1.3, 0.0)]).delta(np.array([0.0, 0.5]))
    assert first.tobytes() == again.tobytes()        # bit for bit
    mech = randomized_response(3, 1.1)
    one = [r.delta(0.3) for r in mech.pair_regions()]
    for r in mech.pair_regions():
        r.delta(np.linspace(0.0, 2.0, 100))
    assert [float(x).hex() for x in one] == [float(r.delta(0.3)).hex() for r in mech.pair_regions()]
