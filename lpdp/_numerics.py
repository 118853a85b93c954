"""Log-space helpers and named tolerances, in one place.

Each helper states the identity it implements. Masses are kept as natural logarithms; ``-inf`` is a zero
mass.
"""

from __future__ import annotations

import numpy as np
from scipy.special import gammaln

#: Absolute tolerance on constraint residuals of a solver answer (probabilities live in [0, 1]).
SOLVER_RESIDUAL_TOL = 1e-9
#: Tolerance used to decide membership of a point in a region (absolute, in the unit square).
MEMBERSHIP_TOL = 1e-12
#: Relative tolerance when checking that masses sum to one.
MASS_SUM_RTOL = 1e-9


#: ``log sqrt(2 pi)``.
_LOG_SQRT_2PI = 0.5 * np.log(2.0 * np.pi)


def _stirlerr(n: np.ndarray) -> np.ndarray:
    """``log n! - log(sqrt(2 pi n) (n/e)^n)`` for integers ``n >= 1`` (Loader 2000): small, accurate.

    A truncated Stirling series above 15 (error below 1e-17), ``gammaln`` below (values under 0.1 from
    ``gammaln`` under 28: absolute error ~1e-15).
    """
    n = np.asarray(n, dtype=float)
    out = np.empty(n.shape)
    small = n <= 15
    ns = n[small]
    with np.errstate(divide="ignore", invalid="ignore"):
        out[small] = gammaln(ns + 1.0) - (ns + 0.5) * np.log(ns) + ns - _LOG_SQRT_2PI
    nb = n[~small]
    nn = nb * nb
    s0, s1, s2, s3, s4 = 1 / 12, 1 / 360, 1 / 1260, 1 / 1680, 1 / 1188
    out[~small] = np.where(nb > 500, (s0 - s1 / nn) / nb,
                           np.where(nb > 80, (s0 - (s1 - s2 / nn) / nn) / nb,
                                    np.where(nb > 35, (s0 - (s1 - (s2 - s3 / nn) / nn) / nn) / nb,
                                             (s0 - (s1 - (s2 - (s3 - s4 / nn) / nn) / nn) / nn) / nb)))
    return out


def _bd0(x: np.ndarray, n: float, log_p: float) -> np.ndarray:
    """``x log(x/m) + m - x`` (>= 0) for ``m = n e^log_p``, without cancellation when ``x`` is close to
    ``m`` (Loader 2000). ``m`` is formed as ``n * e^log_p`` (one rounding), its log as ``log n + log_p``."""
    x = np.asarray(x, dtype=float)
    log_m = np.log(n) + log_p
    m = np.full(x.shape, n * np.exp(log_p))
    with np.errstate(divide="ignore", invalid="ignore"):
        out = x * (np.log(x) - log_m) + m - x
    near = np.abs(x - m) < 0.1 * (x + m)
    if np.any(near):
        xs, ms = x[near], m[near]
        v = (xs - ms) / (xs + ms)
        s = (xs - ms) * v
        ej = 2.0 * xs * v
        v2 = v * v
        for j in range(1, 20):          # |v| < 0.1: each term is 100 times smaller than the last
            ej = ej * v2
            s = s + ej / (2 * j + 1)
        out[near] = s
    return out


def log_binom_pmf(n: int, i: np.ndarray, log_p: float, log_q: float) -> np.ndarray:
    """``log(C(n, i) p^i q^(n-i))`` for a success probability ``p = e^log_p`` with ``q = e^log_q = 1 - p``.

    Loader's saddle-point form (Loader, "Fast and accurate computation of binomial probabilities", 2000):
    ``-(stirlerr terms) - bd0(i, n p) - bd0(n - i, n q) - log sqrt(2 pi i (n-i)/n)``. Every term is small
    or is the (positive) deviance of the point, so the log mass keeps ~1e-15 *absolute* accuracy where it
    matters (``gammaln(n+1)`` alone would carry an absolute error ``u log n!``, 2e-10 at n = 10^6).
    ``p`` and ``q`` are first rescaled to sum to one.
    """
    i = np.asarray(i, dtype=float)
    nf = float(n)
    # p + q = 1 exactly for the rounded inputs: otherwise n (p + q - 1), up to 1e-10 at n = 10^6, leaks in.
    total = float(np.logaddexp(log_p, log_q))
    log_p, log_q = log_p - total, log_q - total
    out = np.empty(i.shape)
    lo, hi = i == 0, i == nf
    out[lo] = nf * log_q
    out[hi] = nf * log_p
    mid = ~(lo | hi)
    x = i[mid]
    lc = _stirlerr(np.array(nf)) - _stirlerr(x) - _stirlerr(nf - x) - _bd0(x, nf, log_p) \
        - _bd0(nf - x, nf, log_q)
    out[mid] = lc - _LOG_SQRT_2PI - 0.5 * (np.log(x) + np.log1p(-x / nf))
    return out


def log1mexp(x: np.ndarray | float) -> np.ndarray:
    """``log(1 - e^x)`` for ``x <= 0``, accurate on both sides of ``-log 2`` (Maechler 2012)."""
    x = np.asarray(x, dtype=float)
    with np.errstate(divide="ignore"):
        return np.where(x > -np.log(2.0), np.log(-np.expm1(x)), np.log1p(-np.exp(x)))


def log_softplus(x: np.ndarray | float) -> np.ndarray:
    """``log(1 + e^x)`` without overflow."""
    return np.logaddexp(0.0, x)


def logsumexp(a: np.ndarray) -> float:
    """``log Σ e^a`` over all entries; ``-inf`` (not NaN) for an empty or all ``-inf`` input."""
    a = np.asarray(a, dtype=float).ravel()
    if a.size == 0:
        return -np.inf
    m = float(np.max(a))
    if m == -np.inf:
        return -np.inf
    if m == np.inf:
        return np.inf
    return m + float(np.log(np.sum(np.exp(a - m))))
