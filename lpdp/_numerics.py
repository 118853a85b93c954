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


def log_binom(n: np.ndarray | int, k: np.ndarray | int) -> np.ndarray:
    """``log C(n, k)`` for integer arrays, via ``gammaln`` (exact to ~1e-15 relative for n up to 1e7)."""
    n = np.asarray(n, dtype=float)
    k = np.asarray(k, dtype=float)
    return gammaln(n + 1.0) - gammaln(k + 1.0) - gammaln(n - k + 1.0)


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


def log_hockey_stick_terms(eps: float, losses: np.ndarray, log_p: np.ndarray) -> np.ndarray:
    """``log(p_j - e^ε q_j) = log p_j + log(1 - e^{ε - L_j})`` for atoms with ``L_j > ε``.

    With ``L_j = log(p_j / q_j)`` every term of ``δ(ε) = Σ_j (p_j - e^ε q_j)_+`` is positive, so the sum
    has no cancellation. Atoms with ``L_j <= ε`` give ``-inf`` (zero).
    """
    out = np.full(losses.shape, -np.inf)
    above = losses > eps
    out[above] = log_p[above] + log1mexp(eps - losses[above])
    return out
