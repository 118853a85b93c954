"""lpdp._special against mpmath at 50 digits: ``log Φ`` and ``Φ`` within their stated bound (no slack on
the bound), on the math path (scalars, small arrays) and on the scipy path (large arrays), and names not
defined there are scipy.special's."""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest

from lpdp import _special as special
from lpdp._special import LOG_NDTR_ULPS, SMALL, log_ndtr, ndtr

U = 2.0 ** -53


def _points() -> np.ndarray:
    rng = np.random.default_rng(20261202)
    return np.concatenate([rng.uniform(-60.0, 40.0, 600), rng.uniform(-38.0, -36.0, 150),
                           rng.uniform(-1.0, 1.0, 150), -np.logspace(-9, 2.5, 150), np.logspace(-9, 1.6, 150),
                           [0.0, -0.0, -37.0, -37.000000000000007, 8.2, 40.0]])


def _truth(x: float) -> mpmath.mpf:
    with mpmath.workdps(50):
        return mpmath.log(mpmath.ncdf(mpmath.mpf(x)))


def _check_log(xs: np.ndarray, got: np.ndarray) -> None:
    bad = []
    for x, v in zip(xs, got, strict=True):
        t = _truth(float(x))
        if abs(mpmath.mpf(float(v)) - t) > LOG_NDTR_ULPS * U * (abs(t) + 1):
            bad.append((float(x), float(v), float(t)))
    assert not bad, bad[:5]


def test_log_ndtr_scalars_within_the_stated_bound():
    xs = _points()
    _check_log(xs, np.array([float(log_ndtr(float(x))) for x in xs]))


@pytest.mark.parametrize("n", [7, SMALL + 1])     # the math path and the scipy path
def test_log_ndtr_arrays_within_the_stated_bound(n):
    xs = _points()
    got = np.concatenate([log_ndtr(xs[i:i + n]) for i in range(0, len(xs), n)])
    _check_log(xs, got)


def test_ndtr_within_the_bound_of_log_ndtr():
    xs = _points()
    for v in (np.array([float(ndtr(float(x))) for x in xs]), ndtr(xs[:SMALL]), ndtr(xs)):
        for x, p in zip(xs, v, strict=False):
            with mpmath.workdps(50):
                t = mpmath.ncdf(mpmath.mpf(float(x)))
            if t < 2.2250738585072014e-308:   # below the normal doubles: no relative bound (log_ndtr has it)
                continue
            bound = (LOG_NDTR_ULPS * (abs(mpmath.log(t)) + 1) + 2) * U * t    # log Φ's, one rounding
            assert abs(mpmath.mpf(float(p)) - t) <= bound, (x, p)


def test_edges_and_shapes():
    assert math.isnan(float(log_ndtr(math.nan)))
    assert float(log_ndtr(-math.inf)) == -math.inf
    assert float(log_ndtr(math.inf)) == 0.0
    assert log_ndtr(np.zeros((2, 3))).shape == (2, 3)
    assert isinstance(log_ndtr(0.5), np.floating)


def test_other_names_are_scipy_special():
    from scipy import special as scipy_special

    assert special.gammaln is scipy_special.gammaln
    with pytest.raises(AttributeError):
        special.no_such_function_anywhere   # noqa: B018
