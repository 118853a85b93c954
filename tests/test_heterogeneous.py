"""Theorem 1 (heterogeneous composition of pure-DP mechanisms), checked by independent routes.

Oracles: explicit enumeration of the product of randomised responses (Kronecker products), the paper's
closed form δ(a*, b*) summed with exact integer binomials, Kairouz's composition for one level, and
closed forms of the extreme lattice points for counts in the thousands.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lpdp.compose import heterogeneous, homogeneous
from lpdp.errors import ParameterError
from lpdp.testing import assert_regions_equal


def _rr(eps: float) -> tuple[np.ndarray, np.ndarray]:
    s = math.exp(eps) / (1 + math.exp(eps))
    return np.array([s, 1 - s]), np.array([1 - s, s])


def _product_delta(levels: dict[float, int], eps: np.ndarray) -> np.ndarray:
    """δ(ε) of the explicit product of randomised responses, every outcome enumerated."""
    p, q = np.array([1.0]), np.array([1.0])
    for e, x in levels.items():
        for _ in range(x):
            pe, qe = _rr(e)
            p, q = np.kron(p, pe), np.kron(q, qe)
    return np.array([np.maximum(0.0, p - math.exp(t) * q).sum() for t in eps])


def _algorithm1(e1: float, x: int, e2: float, y: int) -> dict[float, float]:
    """The paper's list {L(a*, b*): δ(a*, b*)} (spec §4), summed term by term."""
    z = (1 + math.exp(e1)) ** x * (1 + math.exp(e2)) ** y
    pts = [(a, b) for a in range(x + 1) for b in range(y + 1)]

    def loss(a, b):
        return e1 * (2 * a - x) + e2 * (2 * b - y)

    def p0(a, b):
        return math.comb(x, a) * math.comb(y, b) * math.exp(a * e1 + b * e2) / z

    def p1(a, b):
        return math.comb(x, a) * math.comb(y, b) * math.exp((x - a) * e1 + (y - b) * e2) / z

    out = {}
    for a0, b0 in pts:
        level = loss(a0, b0)
        if level >= 0:
            out[level] = sum(p0(a, b) - math.exp(level) * p1(a, b) for a, b in pts if loss(a, b) > level)
    return out


GRID = np.linspace(0.0, 4.0, 81)


@pytest.mark.parametrize("levels", [
    {0.3: 2, 0.15: 3},
    {1.0: 1, 0.2: 4},
    {0.7: 3, 0.4: 2, 0.1: 2},     # three levels
    {2.0: 2, 1.0: 3},             # rational ratio: duplicate levels
    {0.5: 5},
], ids=["fig2-eps", "far-apart", "three-levels", "ratio-2", "one-level"])
def test_matches_explicit_product(levels):
    ours = heterogeneous(levels)
    np.testing.assert_allclose(ours.delta(GRID), _product_delta(levels, GRID), rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("e1,x,e2,y", [(0.3, 4, 0.15, 5), (1.1, 3, 0.25, 6), (0.9, 6, 0.3, 2)])
def test_profile_is_algorithm1(e1, x, e2, y):
    expected = _algorithm1(e1, x, e2, y)
    region = heterogeneous({e1: x, e2: y})
    levels = np.array(sorted(expected))
    np.testing.assert_allclose(region.delta(levels), [expected[e] for e in levels], rtol=1e-10, atol=1e-15)
    # Every profile point of the region is one of Algorithm 1's levels.
    for e, _ in region.profile():
        assert np.min(np.abs(levels - e)) < 1e-12


def test_rational_ratio_levels_are_merged():
    region = heterogeneous({0.3: 6, 0.15: 8})
    # Losses are 0.15 * (2 n1 + n2): one level per distinct integer 2 n1 + n2, none doubled by rounding.
    units = {2 * (2 * a - 6) + (2 * b - 8) for a in range(7) for b in range(9)}
    assert len(region) == len(units)
    assert np.all(np.diff(region.losses) < -1e-9)
    assert 0.0 in region.losses


def test_zero_epsilon_and_zero_count_change_nothing():
    assert_regions_equal(heterogeneous({0.4: 3, 0.0: 10, 0.2: 0}), homogeneous(0.4, 0.0, 3))
    trivial = heterogeneous({0.0: 5})
    assert trivial.delta(0.0) == 0.0 and trivial.area() == 0.0


@pytest.mark.parametrize("eps,count", [(0.3, 3000), (0.01, 5000)])
def test_one_level_equals_kairouz_for_large_counts(eps, count):
    ours, ref = heterogeneous({eps: count}), homogeneous(eps, 0.0, count)
    grid = np.linspace(0.0, 0.999 * eps * count, 40)
    # log δ to 1e-12 absolute is δ to 1e-12 relative (where δ is near 1), and 1e-10 relative in the log.
    np.testing.assert_allclose(ours.log_delta(grid), ref.log_delta(grid), rtol=1e-10, atol=1e-12)


def test_extreme_tail_in_log_space():
    """Counts in the thousands: δ far below 1e-300 stays exact (closed form of the two top points)."""
    e1, x, e2, y = 0.3, 2000, 0.1, 40
    region = heterogeneous({e1: x, e2: y})
    s1, s2 = (math.exp(e) / (1 + math.exp(e)) for e in (e1, e2))
    top = e1 * x + e2 * y                          # a = x, b = y
    second = top - 2 * e2                          # a = x, b = y - 1 (the next level below the top)
    log_top = x * math.log(s1) + y * math.log(s2)
    log_second = x * math.log(s1) + (y - 1) * math.log(s2) + math.log(y) + math.log(1 - s2)
    assert log_top < math.log(1e-300)
    eps = second + 0.5 * (top - second)
    # δ(ε) = p_top (1 - e^{ε - top}) for ε between the two top levels.
    expected = log_top + math.log(-math.expm1(eps - top))
    assert region.log_delta(eps) == pytest.approx(expected, rel=1e-10)
    eps = second - 0.01
    expected = np.logaddexp(log_top + math.log(-math.expm1(eps - top)),
                            log_second + math.log(-math.expm1(eps - second)))
    assert region.log_delta(eps) == pytest.approx(expected, rel=1e-10)
    # Masses sum to one under both hypotheses.
    assert np.logaddexp.reduce(region.log_p) == pytest.approx(0.0, abs=1e-11)
    assert np.logaddexp.reduce(region.log_q) == pytest.approx(0.0, abs=1e-11)


@settings(max_examples=25, deadline=None)
@given(e1=st.floats(0.05, 2.0), e2=st.floats(0.05, 2.0), x=st.integers(0, 6), y=st.integers(0, 6))
def test_adding_a_mechanism_never_helps(e1, e2, x, y):
    fewer = heterogeneous({e1: x, e2: y}) if e1 != e2 else heterogeneous({e1: x + y})
    more = heterogeneous({e1: x + 1, e2: y}) if e1 != e2 else heterogeneous({e1: x + y + 1})
    assert more.contains(fewer)
    # Order of the mapping is irrelevant.
    if e1 != e2:
        assert_regions_equal(heterogeneous({e2: y, e1: x}), fewer)


def test_integer_ratio_keeps_fraction_structure():
    # ε1 = 3/2 ε2: every loss is a multiple of ε2 / 2.
    e2 = 0.2
    region = heterogeneous({1.5 * e2: 4, e2: 5})
    units = [Fraction(L / (e2 / 2)).limit_denominator(1) for L in region.losses]
    np.testing.assert_allclose([float(u) * e2 / 2 for u in units], region.losses, atol=1e-12)


@pytest.mark.parametrize("counts,match", [
    ({0.3: -1}, r"times\[0\.3\]=-1: must be an integer >= 0"),
    ({0.3: 2.5}, r"times\[0\.3\]=2\.5: must be an integer >= 0"),
    ({-0.3: 2}, r"times epsilon=-0\.3: must be finite and >= 0"),
    ({math.nan: 2}, r"times epsilon=nan: must be finite and >= 0"),
    ({math.inf: 2}, r"times epsilon=inf: must be finite and >= 0"),
    ({}, r"times=\{\}: must be a non-empty mapping"),
    ([(0.3, 2)], r"must be a non-empty mapping"),
])
def test_bad_input(counts, match):
    with pytest.raises(ParameterError, match=match):
        heterogeneous(counts)


def test_too_large_lattice_is_refused_not_attempted():
    with pytest.raises(ParameterError, match=r"400040001 lattice points: the ε are not commensurate\) "
                                             r"needs ~40 GB of memory; the limit is"):
        heterogeneous({0.3: 20000, 0.1234567891: 20000})


def _delta_by_rows(e1: float, x: int, e2: float, y: int, eps: np.ndarray) -> np.ndarray:
    """δ(ε) of two pure levels by a direct sum over every (a, b), one row of the lattice at a time."""
    from scipy.stats import binom

    s1, s2 = (1.0 / (1.0 + math.exp(-e)) for e in (e1, e2))
    row_p = binom.logpmf(np.arange(x + 1), x, s1)
    col_p = binom.logpmf(np.arange(y + 1), y, s2)
    col_loss = e2 * (2 * np.arange(y + 1) - y)
    total = np.zeros(eps.size)
    for a in range(x + 1):
        loss = e1 * (2 * a - x) + col_loss
        lp = row_p[a] + col_p
        above = loss[None, :] > eps[:, None]
        total += np.sum(np.where(above, np.exp(lp)[None, :] * -np.expm1(np.minimum(eps[:, None] - loss, 0)),
                                 0.0), axis=1)
    return total


@pytest.mark.parametrize("x, y", [(300, 200), pytest.param(2000, 2000, marks=pytest.mark.deep)])
def test_commensurate_levels_by_convolution_match_the_lattice_sum(x, y):
    """Levels 0.3 and 0.15 compose by a 1-D convolution of binomials; check against the 2-D lattice sum."""
    r = heterogeneous({0.3: x, 0.15: y})
    eps = np.linspace(0.0, 0.5 * (0.3 * x + 0.15 * y), 25)
    want = _delta_by_rows(0.3, x, 0.15, y, eps)
    ok = want > 1e-280
    np.testing.assert_allclose(r.delta(eps)[ok], want[ok], rtol=1e-11)


def test_ten_thousand_per_level_is_exact_and_small():
    # x = y = 10^4 used to be refused (10^8 lattice points); now 3 * 10^4 integer levels.
    r = heterogeneous({0.3: 10_000, 0.15: 10_000})
    assert len(r) == 30_001
    # Every level is a binomial mixture with total mass one, and the top level is (s1^x)(s2^y) exactly.
    assert abs(np.logaddexp.reduce(np.asarray(r.log_p))) < 1e-12
    s1, s2 = (1.0 / (1.0 + math.exp(-e)) for e in (0.3, 0.15))
    assert r.log_p[0] == pytest.approx(10_000 * (math.log(s1) + math.log(s2)), rel=1e-13)
    assert max(r.losses) == pytest.approx(4500.0, rel=1e-12)   # a sum of 2·10^4 rounded losses


def test_commensurate_units():
    from lpdp.compose._levels import commensurate_units

    assert commensurate_units([0.3, 0.15]) == [2, 1]
    assert commensurate_units([1.0, 0.37]) == [100, 37]
    assert commensurate_units([0.3, 0.0]) == [1, 0]
    assert commensurate_units([0.9, 0.3, 0.2]) == [9, 3, 2]
    assert commensurate_units([1.0, 1 / math.sqrt(7)]) is None
    assert commensurate_units([0.0]) is None


def test_integer_levels_and_tolerance_merge_agree():
    """The two ways of merging equal losses (integer bins, sorted snapping) give the same region."""
    from lpdp.compose._levels import lattice_loss, merge_tolerance, region_from_atoms

    rng = np.random.default_rng(3)
    n1, n2 = rng.integers(-30, 31, 4000), rng.integers(-30, 31, 4000)
    loss = lattice_loss([0.3, 0.15], [n1, n2])
    log_p = -20 - rng.uniform(0, 800, n1.size) + np.minimum(loss, 0)    # P- and Q-masses sum below 1
    binned = region_from_atoms(loss, log_p, level=2 * n1 + n2)
    snapped = region_from_atoms(loss, log_p, tol=merge_tolerance(13.5))
    assert len(binned) == len(snapped) == len(set((2 * n1 + n2).tolist()))
    np.testing.assert_array_equal(binned.losses, snapped.losses)
    np.testing.assert_allclose(binned.log_p, snapped.log_p, rtol=1e-14)


def test_delta_at_a_computed_top_loss_never_rounds_to_zero():
    """Losses are those of the given doubles, rounded outwards: δ at the float top loss stays > 0."""
    from fractions import Fraction

    import mpmath as mp

    counts = {0.6: 3, 0.3: 1, 0.2: 6}
    r = heterogeneous(counts)
    exact_top = sum(Fraction(e) * x for e, x in counts.items())       # 3.29999999999999998890...
    assert Fraction(3.3) < exact_top
    with mp.workdps(40):
        p_top = mp.fprod((mp.e ** mp.mpf(e) / (1 + mp.e ** mp.mpf(e))) ** x for e, x in counts.items())
        want = p_top * -mp.expm1(mp.mpf(Fraction(3.3).numerator) / Fraction(3.3).denominator
                                 - mp.mpf(exact_top.numerator) / exact_top.denominator)
    got = r.delta(3.3)                       # used to be 0.0 (top loss rounded down to the double 3.3)
    assert float(want) > 0 and got >= float(want)
    assert max(r.losses) >= float(exact_top) and Fraction(float(max(r.losses))) >= exact_top


@given(st.lists(st.floats(0.01, 5.0), min_size=1, max_size=4),
       st.lists(st.integers(-3000, 3000), min_size=4, max_size=4))
def test_lattice_loss_is_the_exact_sum_rounded_outwards(eps, counts):
    from fractions import Fraction

    from lpdp.compose._levels import lattice_loss

    counts = counts[:len(eps)]
    got = float(lattice_loss(eps, [np.array(c) for c in counts]))
    exact = sum(Fraction(e) * c for e, c in zip(eps, counts, strict=True))
    assert abs(Fraction(got)) >= abs(exact)
    assert got == 0 or abs(Fraction(float(np.nextafter(got, 0.0)))) < abs(exact)   # the nearest outward
    assert float(lattice_loss(eps, [-np.array(c) for c in counts])) == -got
