"""Log-space helpers (lpdp._numerics) against mpmath."""

import mpmath as mp
import numpy as np
import pytest

from lpdp._numerics import log_binom_pmf
from tests.theorems import log_binom


@pytest.mark.parametrize(("n", "p"), [(1, "0.3"), (10, "0.3"), (37, "0.5"), (1000, "1e-3"),
                                      (200000, "0.000911"), (1048576, "0.2689"), (5000, "0.999")])
def test_log_binom_pmf_matches_mpmath(n, p):
    with mp.workdps(40):
        lp, lq = float(mp.log(mp.mpf(p))), float(mp.log(1 - mp.mpf(p)))
        # The probability the rounded inputs stand for (normalised, as documented): at n = 10^6 a change of
        # one ulp in p moves log masses 10 sd away from the mean by ~1e-12.
        pm = mp.exp(mp.mpf(lp)) / (mp.exp(mp.mpf(lp)) + mp.exp(mp.mpf(lq)))
        mean, sd = n * float(pm), float(mp.sqrt(n * pm * (1 - pm)))
        i = np.unique(np.clip(np.concatenate([np.linspace(0, n, 60),
                                              mean + sd * np.linspace(-40, 40, 81)]), 0, n).astype(int))
        want = np.array([float(mp.log(mp.binomial(n, int(j))) + j * mp.log(pm) + (n - j) * mp.log(1 - pm))
                         for j in i])
    got = log_binom_pmf(n, i, lp, lq)
    bulk = want > -50      # the bulk of the mass: absolute error in the log = relative in the mass
    assert np.max(np.abs(got - want)[bulk]) < 2e-12
    assert np.max(np.abs(got - want) / np.maximum(1.0, np.abs(want))) < 1e-13


def test_log_binom_pmf_beats_gammaln_differences_at_large_n():
    n, p = 1_000_000, 0.5
    i = np.arange(499000, 501000, 7)
    with mp.workdps(40):
        want = np.array([float(mp.log(mp.binomial(n, int(j))) - n * mp.log(2)) for j in i])
    ours = np.max(np.abs(log_binom_pmf(n, i, np.log(p), np.log(p)) - want))
    old = np.max(np.abs(log_binom(n, i) + n * np.log(p) - want))
    assert ours < 1e-12 < old


@pytest.mark.parametrize(("depth", "floor"), [(30.0, None), (500.0, None), (2000.0, -np.inf)])
def test_log_convolve_matches_mpmath_in_one_slab_and_across_several(depth, floor):
    """:func:`lpdp.compose._convolve.log_convolve` of arrays spanning one magnitude slab (one run each)
    and 2-6 slabs (several runs, -inf gaps; every product kept: above the default floor, or no floor),
    also as a squaring (one array passed twice), against a 40-digit sum of the products."""
    from lpdp.compose._convolve import LOG_FLOOR, log_convolve

    rng = np.random.default_rng(7)
    a, b = rng.uniform(-depth, 0.0, 40), rng.uniform(-depth, 0.0, 25)
    a[[3, 17]] = -np.inf
    for x, y in ((a, b), (a, a)):
        got = log_convolve(x, y, LOG_FLOOR if floor is None else floor)
        with mp.workdps(40):
            for i in range(got.size):
                terms = [mp.mpf(float(x[j])) + mp.mpf(float(y[i - j])) for j in range(x.size)
                         if 0 <= i - j < y.size and x[j] > -np.inf]
                want = float(mp.log(mp.fsum(mp.exp(t) for t in terms)))
                assert abs(got[i] - want) <= 1e-13 * max(1.0, abs(want))
