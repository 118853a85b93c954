"""Mixtures (Lemma 1, Corollary 1): edge merge vs Shapely hull of vertex sums vs the conjugate route."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import lpdp
from lpdp import ParameterError, PrivacyRegion
from lpdp.mixture import conjugate_tradeoff, mix_conjugate
from lpdp.testing import assert_regions_equal
from tests.oracles import minkowski_hull
from tests.strategies import constraint_lists

T = np.linspace(0.0, 1.0, 301)


@st.composite
def mixtures(draw, max_parts=3):
    n = draw(st.integers(1, max_parts))
    regions = [PrivacyRegion.from_constraints(draw(constraint_lists)) for _ in range(n)]
    raw = np.array(draw(st.lists(st.floats(0.05, 1.0), min_size=n, max_size=n)))
    return regions, (raw / raw.sum()).tolist()


def _normalise(w):
    w = np.asarray(w, float)
    w[-1] = 1.0 - w[:-1].sum()
    return w.tolist()


@given(mixtures())
def test_mixture_equals_shapely_hull_of_vertex_sums(case):
    regions, w = case
    w = _normalise(w)
    m = lpdp.mix(list(zip(w, regions, strict=True)))
    hull = minkowski_hull(regions, w)
    assert m.polygon.symmetric_difference(hull).area < 1e-12
    assert m.polygon.hausdorff_distance(hull) < 1e-12


@given(mixtures())
def test_mixture_equals_conjugate_route(case):
    regions, w = case
    w = _normalise(w)
    m = lpdp.mix(list(zip(w, regions, strict=True)))
    components = list(zip(w, regions, strict=True))
    np.testing.assert_allclose(m.tradeoff(T), conjugate_tradeoff(components, T), atol=1e-12)
    c = mix_conjugate(components)           # Appendix H's vertices against the edge merge
    np.testing.assert_allclose(c.tradeoff(T), m.tradeoff(T), atol=1e-12)
    assert c.polygon.symmetric_difference(m.polygon).area < 1e-12


@given(mixtures(max_parts=2))
def test_commutative(case):
    regions, w = case
    w = _normalise(w)
    a = lpdp.mix(list(zip(w, regions, strict=True)))
    b = lpdp.mix(list(zip(w[::-1], regions[::-1], strict=True)))
    assert_regions_equal(a, b, rtol=1e-13, atol=1e-15, boundary_atol=1e-13)


@given(constraint_lists, constraint_lists, constraint_lists, st.floats(0.1, 0.9), st.floats(0.1, 0.9))
def test_associative(a, b, c, u, v):
    ra, rb, rc = (PrivacyRegion.from_constraints(x) for x in (a, b, c))
    left = lpdp.mix([(u, lpdp.mix([(v, ra), (1 - v, rb)])), (1 - u, rc)])
    right = lpdp.mix([(u * v, ra), (1 - u * v, lpdp.mix([(u * (1 - v) / (1 - u * v), rb),
                                                          ((1 - u) / (1 - u * v), rc)]))])
    assert_regions_equal(left, right, rtol=1e-11, atol=1e-15, boundary_atol=1e-12)


def test_support_functions_add():
    a, b = PrivacyRegion.from_dp(1.3, 0.0), PrivacyRegion.from_dp(0.5, 0.2)
    m = lpdp.mix([(0.3, a), (0.7, b)])
    e = np.linspace(0, 3, 31)
    np.testing.assert_allclose(m.delta(e), 0.3 * a.delta(e) + 0.7 * b.delta(e), rtol=1e-13)


def test_figure1_mixture_is_not_comparable_with_union():
    """Spec §2: the mixture neither contains nor is contained in the union of the two regions."""
    from shapely import union_all

    a, b = PrivacyRegion.from_dp(1.3, 0.0), PrivacyRegion.from_dp(0.5, 0.2)
    m = lpdp.mix([(0.5, a), (0.5, b)])
    union = union_all([a.polygon, b.polygon])
    assert m.polygon.difference(union).area > 1e-3
    assert union.difference(m.polygon).area > 1e-3
    # and the mixture is exactly the hull of the vertex sums
    assert m.polygon.symmetric_difference(minkowski_hull([a, b], [0.5, 0.5])).area < 1e-14


def test_mixing_with_full_triangle_adds_delta():
    """δ~ R(0,1) + (1-δ~) R(e,d) = R(e, δ~ + (1-δ~) d) (spec §5 note)."""
    m = lpdp.mix([(0.1, PrivacyRegion.from_dp(0.0, 1.0)), (0.9, PrivacyRegion.from_dp(0.7, 0.05))])
    assert_regions_equal(m, PrivacyRegion.from_dp(0.7, 0.1 + 0.9 * 0.05), rtol=1e-13, atol=1e-16)


@pytest.mark.parametrize(("components", "match"), [
    ([], r"components=\[\]"),
    ([(0.5, PrivacyRegion.from_dp(1, 0)), (0.6, PrivacyRegion.from_dp(1, 0))], r"must sum to 1"),
    ([(-0.5, PrivacyRegion.from_dp(1, 0)), (1.5, PrivacyRegion.from_dp(1, 0))],
     r"weights\[0\]=-0.5: must be finite and >= 0"),
    ([(1.0, "R(1,0)")], r"components\[0\]=.*must be a \(PrivacyRegion, weight\) pair"),
])
def test_bad_mixtures(components, match):
    with pytest.raises(ParameterError, match=match):
        lpdp.mix(components)
