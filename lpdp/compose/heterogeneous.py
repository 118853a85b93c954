"""Exact heterogeneous composition of pure-DP mechanisms (Theorem 1, Algorithm 1).

``x_j`` mechanisms that are ``ε_j``-DP, for m distinct levels ``ε_1 > ... > ε_m > 0``, are dominated by the
product of ``x_j`` copies of the ``ε_j`` binary randomised response. An outcome is summarised by the number
``a_j`` of agreeing coordinates of each level, with loss ``L(a) = Σ_j ε_j (2 a_j - x_j)`` and P-mass
``Π_j C(x_j, a_j) e^{a_j ε_j} / (1 + e^{ε_j})^{x_j}``. The region is
``C_x(ε) = ∩_{a*: L(a*) >= 0} R(L(a*), δ(a*))``, ``δ(a*) = Σ_{L(a) > L(a*)} [P0(a) - e^{L(a*)} P1(a)]``,
which is exactly the profile of the lattice's region (:meth:`PrivacyRegion.profile`).

Cost. When the ε_j are commensurate (``ε_j = u_j Δ``, e.g. 0.3 and 0.15) the points with the same integer
level ``Σ_j u_j n_j`` are one atom, and the level distribution is an exact 1-D convolution of binomials
(:func:`lpdp.compose._convolve.log_convolve`): x = y = 10^4 at two levels in a fraction of a second and a
few MB. Otherwise the lattice has ``Π_j (x_j + 1)`` points, each one vectorised log-space term, then one
sort: two levels with counts of 1000 each (10^6 points) take well under a second.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping
from fractions import Fraction

import numpy as np

from lpdp._limits import check_budget, seconds_for
from lpdp._numerics import UNIT_ROUNDOFF, ErrorBound, binomial_error, log_binom_pmf, log_softplus
from lpdp._validate import check_epsilon, check_int, renamed
from lpdp.compose._convolve import log_convolve
from lpdp.compose._levels import (
    commensurate_units,
    identity_region,
    lattice_loss,
    level_loss_error,
    level_losses,
    merge_tolerance,
    region_from_atoms,
)
from lpdp.errors import ParameterError
from lpdp.region import PrivacyRegion

__all__ = ["heterogeneous"]

#: Peak bytes per lattice point of the incommensurate route (losses, masses, sort and region arrays).
_BYTES_PER_POINT = 100


@renamed(counts="times")
def heterogeneous(times: Mapping[float, int]) -> PrivacyRegion:
    """Exact region of composing ``times[ε]`` pure ε-DP mechanisms for every ε (Theorem 1).

    Parameters
    ----------
    times : mapping of float to int
        ``{ε: number of ε-DP mechanisms}``; ε >= 0 finite, counts >= 0. Mechanisms with ε = 0 and levels
        with count 0 change nothing.

    Returns
    -------
    PrivacyRegion
        The exact region; its :meth:`~PrivacyRegion.profile` is Algorithm 1's list of ``(ε_i, δ_i)``.
        Masses are exact in log space (counts of several thousand, δ down to 1e-300); losses of different
        lattice points that agree to rounding (rational ratios of the ε) are merged onto the larger one.
        Losses are those of the given doubles ``ε`` (the exact ``Σ ε_j n_j``), rounded away from zero, so
        ``δ`` at a computed top loss is never rounded to 0 and never understated.

    Examples
    --------
    >>> from lpdp.compose import heterogeneous, homogeneous
    >>> r = heterogeneous({0.3: 10, 0.15: 20})
    >>> round(float(r.delta(1.0)), 6)
    0.187394
    >>> abs(heterogeneous({0.5: 4, 0.0: 7}).delta(0.7) - homogeneous(0.5, 0.0, 4).delta(0.7)) < 1e-12
    True
    """
    if not isinstance(times, Mapping) or not times:
        raise ParameterError(f"times={times!r}: must be a non-empty mapping {{epsilon: count}}")
    levels = []
    for e, x in times.items():
        eps = check_epsilon(e, "times epsilon")
        n = check_int(x, f"times[{e!r}]", 0)
        if eps > 0 and n > 0:
            levels.append((eps, n))
    if not levels:
        return identity_region()
    levels.sort(reverse=True)
    eps = [e for e, _ in levels]
    units = commensurate_units(eps)
    if units is not None:
        return _by_levels(levels, units)
    points = math.prod(x + 1 for _, x in levels)
    check_budget(f"times={dict(levels)!r} ({points} lattice points: the ε are not commensurate)",
                 memory_bytes=_BYTES_PER_POINT * points, seconds=seconds_for(30 * points),
                 hint="round the ε to a common step (their ratios rational with denominators <= 1000)")
    grids = np.meshgrid(*[np.arange(x + 1) for _, x in levels], indexing="ij", sparse=True)
    counts_n = [2 * a - x for a, (_, x) in zip(grids, levels, strict=True)]
    loss = lattice_loss(eps, counts_n)
    # a_j agreeing coordinates of level j: a Binomial(x_j, e^ε_j / (1 + e^ε_j)) count under P.
    log_p = sum(_log_agree(e, x, a) for a, (e, x) in zip(grids, levels, strict=True))
    max_loss = math.fsum(e * x for e, x in levels)
    err = ErrorBound()
    for e, x in levels:
        err = err.times(_agree_error(e, x), terms=1)      # one key per combination of counts
    err = err.widened(per_nat=2 * UNIT_ROUNDOFF * len(levels), loss_rel=2 * UNIT_ROUNDOFF)   # the sum of logs
    return region_from_atoms(loss, np.broadcast_to(log_p, loss.shape), tol=merge_tolerance(max_loss),
                             error=err)


@functools.lru_cache(maxsize=256)
def _agree_error(eps: float, count: int) -> ErrorBound:
    """:func:`~lpdp._numerics.binomial_error` of :func:`_log_agree` (success probability
    ``e^ε / (1 + e^ε)``, exact, against the rounded one). Memoised (40-digit arithmetic, ~0.2 ms per
    level: a fifth of a small composition, asked for again by sweeps and repeated queries)."""
    import mpmath

    with mpmath.workdps(40):
        p_exact = 1 / (1 + mpmath.exp(-mpmath.mpf(eps)))
        q_exact = 1 / (1 + mpmath.exp(mpmath.mpf(eps)))
    return binomial_error(count, -float(log_softplus(-eps)), -float(log_softplus(eps)), p_exact, q_exact)


def _log_agree(eps: float, count: int, agree: np.ndarray) -> np.ndarray:
    """Log P-mass of ``agree`` agreeing coordinates among ``count`` ε randomised responses (binomial)."""
    return log_binom_pmf(count, agree, -float(log_softplus(-eps)), -float(log_softplus(eps)))


def _by_levels(levels: list[tuple[float, int]], units: list[int]) -> PrivacyRegion:
    """Commensurate ε_j = u_j Δ: the level ``Σ_j u_j n_j`` is a sum of independent scaled binomials.

    In half-units ``h = Σ_j u_j a_j`` (a_j agreeing coordinates of level j) each level is a binomial on
    stride u_j, and the composition is their exact 1-D convolution (:func:`log_convolve`): O(Π-free) cost
    ``(Σ_j u_j x_j)^2`` at most, instead of ``Π_j (x_j + 1)`` lattice points. The loss of a level ``ℓ`` is
    ``ℓ Δ`` plus the largest deviation ``Σ_j x_j |ε_j - u_j Δ|`` of any of its keys, rounded away from zero
    (never below the loss of any key).
    """
    total = sum(u * x for u, (_, x) in zip(units, levels, strict=True))
    check_budget(f"times={dict(levels)!r} ({total + 1} integer levels)", memory_bytes=200.0 * (total + 1),
                 seconds=seconds_for(float(total) ** 2 / 20))
    log_h = np.zeros(1)
    err = ErrorBound()
    own: list[ErrorBound] = []
    for u, (e, x) in zip(units, levels, strict=True):
        if u == 0:        # ε_j within rounding of 0 next to the others: all its mass on one level (slack)
            continue
        part = np.full(u * x + 1, -np.inf)
        part[::u] = _log_agree(e, x, np.arange(x + 1))
        terms = min(log_h.size, x + 1)     # an entry sums at most this many products
        log_h = log_convolve(log_h, part, floor=-np.inf, errors=own)      # every mass, however deep
        err = err.times(_agree_error(e, x), terms=terms).times(own.pop(), terms=1)
    ell = 2 * np.arange(total + 1) - total
    step = levels[0][0] / units[0]
    slack = sum(Fraction(x) * abs(Fraction(e) - u * Fraction(step))
                for u, (e, x) in zip(units, levels, strict=True))
    return region_from_atoms(level_losses(step, ell, slack), log_h, level=ell,
                             error=level_loss_error(err, slack))
