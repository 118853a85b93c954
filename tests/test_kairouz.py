"""Exact homogeneous composition (spec §3): brute force, the paper's closed form, exact decimals, PLD."""

import math
from decimal import Decimal, getcontext

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from lpdp import ParameterError, PrivacyRegion
from lpdp.compose import homogeneous
from lpdp.testing import assert_regions_equal
from tests.oracles import brute_force_delta, kairouz_profile

RR = lambda e, d: ([d, (1 - d) * math.exp(e) / (1 + math.exp(e)), (1 - d) / (1 + math.exp(e)), 0.0],  # noqa: E731
                   [0.0, (1 - d) / (1 + math.exp(e)), (1 - d) * math.exp(e) / (1 + math.exp(e)), d])


@pytest.mark.parametrize("k", [1, 2, 3, 5, 7, 10])
@pytest.mark.parametrize(("eps", "delta"), [(0.5, 0.0), (1.0, 0.01), (0.1, 0.2), (0.0, 0.05)])
def test_matches_brute_force_enumeration(eps, delta, k):
    grid = np.linspace(0.0, k * eps + 0.5, 41)
    p, q = RR(eps, delta)
    np.testing.assert_allclose(homogeneous(eps, delta, k).delta(grid), brute_force_delta(p, q, k, grid),
                               rtol=1e-11, atol=1e-15)


@pytest.mark.parametrize("k", [1, 4, 9, 30])
def test_matches_paper_closed_form(k):
    eps, delta = 0.3, 1e-3
    prof = kairouz_profile(eps, delta, k)
    r = homogeneous(eps, delta, k)
    np.testing.assert_allclose(r.delta([e for e, _ in prof]), [d for _, d in prof], rtol=1e-12)


def _exact_decimal_delta(eps: float, delta: float, k: int, i: int) -> Decimal:
    """δ at ε_i = (k-2i)ε from the closed form with exact binomial recurrences and 60-digit decimals."""
    getcontext().prec = 60
    ee = Decimal(eps).exp()
    binom, a, b = Decimal(1), ee ** k, ee ** (k - 2 * i)   # C(k,0), e^{kε}, e^{(k-2i)ε}
    s = Decimal(0)
    for j in range(i):
        s += binom * (a - b)
        binom = binom * (k - j) / (j + 1)
        a, b = a / ee, b * ee
    dprime = s / (1 + ee) ** k
    return 1 - (1 - Decimal(delta)) ** k * (1 - dprime)


@pytest.mark.parametrize(("eps", "k", "i"), [(0.01, 10_000, 4_800), (0.01, 10_000, 4_950),
                                             (0.002, 100_000, 49_700)])
def test_large_k_against_exact_decimals(eps, k, i):
    r = homogeneous(eps, 1e-12, k)
    exact = _exact_decimal_delta(eps, 1e-12, k, i)
    assert float(r.delta((k - 2 * i) * eps)) == pytest.approx(float(exact), rel=1e-9)


def test_no_overflow_and_tiny_deltas():
    r = homogeneous(2.0, 0.0, 2_000)
    d = r.delta([3000.0, 3990.0, 3999.0])
    assert np.all(np.isfinite(d)) and np.all(d >= 0)
    # The largest finite loss is kε with mass (e^ε/(1+e^ε))^k: δ just below it is exact in log space.
    expected_log = 2000 * (2.0 - math.log1p(math.exp(2.0))) + math.log1p(-math.exp(3998.0 - 4000.0))
    assert r.log_delta(3998.0) == pytest.approx(expected_log, rel=1e-12)


@pytest.mark.parametrize("k", [50, 500])
def test_dp_accounting_pessimistic_bounds_ours(k):
    from dp_accounting.pld import common
    from dp_accounting.pld import privacy_loss_distribution as pld

    eps, delta = 0.1, 1e-6
    single = pld.from_privacy_parameters(common.DifferentialPrivacyParameters(eps, delta),
                                         value_discretization_interval=1e-4)
    composed = single.self_compose(k)
    grid = np.array([0.5, 1.0, 2.0, 3.0, 5.0])
    theirs = np.array(composed.get_delta_for_epsilon(grid))
    ours = homogeneous(eps, delta, k).delta(grid)
    assert np.all(theirs >= ours * (1 - 1e-12))
    np.testing.assert_allclose(theirs, ours, rtol=2e-2, atol=1e-8)


@given(st.floats(0.01, 2.0), st.floats(0.0, 0.1), st.integers(1, 40))
def test_composition_monotone_in_k(eps, delta, k):
    a, b = homogeneous(eps, delta, k), homogeneous(eps, delta, k + 1)
    assert b.contains(a)
    grid = np.linspace(0, (k + 1) * eps, 23)
    assert np.all(b.delta(grid) >= a.delta(grid) * (1 - 1e-12))


def test_k1_is_the_region_itself():
    assert_regions_equal(homogeneous(0.7, 0.05, 1), PrivacyRegion.from_dp(0.7, 0.05))


@pytest.mark.parametrize(("args", "match"), [
    ((1.0, 0.0, 0), r"k=0: must be an integer >= 1"),
    ((1.0, 0.0, 2.5), r"k=2.5: must be an integer >= 1"),
    ((-1.0, 0.0, 3), r"epsilon=-1.0"),
    ((1.0, 1.2, 3), r"delta=1.2"),
])
def test_bad_input(args, match):
    with pytest.raises(ParameterError, match=match):
        homogeneous(*args)


@pytest.mark.parametrize(("eps", "k", "at"), [
    (7.0, 200000, 1386000.0),     # δ within 1e-14 of 1: gammaln differences lost 2.4e-10 here
    (0.1, 100000, 640.0),         # δ around 1e-7 in the tail, k = 10^5
    (1.0, 20000, 10200.0),        # deep tail
])
def test_large_k_matches_high_precision_reference(eps, k, at):
    from tests.oracles import mp_kairouz_delta

    want = mp_kairouz_delta(eps, k, at)
    assert want > 0
    got = homogeneous(eps, 0.0, k).delta(at)
    assert abs(got - want) <= 1e-12 * want


@pytest.mark.deep
def test_k_one_million_matches_high_precision_reference():
    from tests.oracles import mp_kairouz_delta

    eps, k = 0.01, 1_000_000
    r = homogeneous(eps, 0.0, k)
    for at in (60.0, 100.0):
        want = mp_kairouz_delta(eps, k, at, dps=30)
        assert abs(r.delta(at) - want) <= 1e-12 * want


def test_k_above_a_million_builds_and_is_normalised():
    # Used to raise "masses under P sum to 1.0000000015: must sum to 1" (a ParameterError) at k = 2^20.
    r = homogeneous(1.0, 0.0, 1_048_576)
    assert len(r) == 1_048_577
    total = np.logaddexp.reduce(np.asarray(r.log_p))
    assert abs(total) < 1e-12
    assert r.delta(1.0) == pytest.approx(1.0, abs=1e-12)


def test_failed_internal_check_is_an_internal_error():
    from lpdp.errors import InternalError
    from lpdp.region import check_normalised

    broken = PrivacyRegion.from_log_masses([1.0, -1.0], [-0.1, -2.0], check_total=False)
    with pytest.raises(InternalError, match="sum to"):
        check_normalised(broken, "test")
    check_normalised(homogeneous(0.5, 0.01, 30), "ok")
