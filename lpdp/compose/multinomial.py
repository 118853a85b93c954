"""Exact k-fold composition of one finite pair that need not be symmetric: the multinomial over its atoms.

A finite pair (P, Q) with ``m`` finite atoms ``(L_i, p_i)`` (and P-mass ``p_inf`` on loss ``+inf``) composed
k times has one finite atom per count vector ``n`` (``Σ n_i = k``): loss ``Σ n_i L_i`` and P-mass the
multinomial ``k! Π p_i^{n_i} / n_i!``, so ``C(k + m - 1, m - 1)`` atoms (``k + 1`` for a pair with two
finite outcomes, as a Poisson-subsampled pure ε-DP mechanism). For two atoms the multinomial is a binomial
(:func:`lpdp._numerics.log_binom_pmf`, Loader's form, absolute accuracy about 1e-15), so its log masses
keep full absolute precision for k up to 10^6; for more atoms it is ``gammaln`` (vectorised), whose
absolute error ``~u log k!`` is added outward.

Outward rounding: every input loss is trusted to ``LOSS_RTOL |L|`` and every input log mass to
``MASS_ATOL + MASS_RTOL |log p|`` (what a pair computed from its parameters in log space carries: a few
units of roundoff) plus the pair's own :class:`~lpdp._numerics.ErrorBound`, and the composed atoms'
losses and log masses are widened by the sum of those errors times the counts plus the error of the
binomial chain. :func:`power` returns two regions, ``lower``
(losses and masses rounded down: every δ(ε) at or below the exact composition's) and ``upper`` (rounded
up: at or above it), which agree to about ``k · 1e-15`` relative.
"""

from __future__ import annotations

import math

import numpy as np

from lpdp import _special as special
from lpdp._limits import check_budget, seconds_for
from lpdp._numerics import log1mexp, log_binom_pmf
from lpdp._validate import check_int
from lpdp.errors import ParameterError
from lpdp.region import PrivacyRegion

__all__ = ["power", "atom_count", "MAX_ATOMS"]

_U = float(np.finfo(float).eps) / 2.0
#: Relative error trusted of each input loss (a loss computed in log space from the parameters).
LOSS_RTOL = 16 * _U
#: Absolute and relative (per unit of ``|log p|``) error trusted of each input log mass.
MASS_ATOL, MASS_RTOL = 4 * _U, 8 * _U
#: Absolute error of one factor of the binomial chain (Loader's form: ~1e-15 measured; kept 100x wider).
BINOM_ATOL = 1e-13
#: Largest number of composed atoms :func:`power` builds (per direction); the router goes to the
#: certified lattice above it.
MAX_ATOMS = 1_000_000


def atom_count(region: PrivacyRegion, k: int) -> int:
    """Finite atoms of the k-fold multinomial: ``C(k + m - 1, m - 1)`` for ``m`` finite atoms."""
    m = int(region.losses.size)
    return math.comb(k + m - 1, m - 1) if m else 0


def power(region: PrivacyRegion, k: int) -> tuple[PrivacyRegion, PrivacyRegion]:
    """``(lower, upper)`` regions of the k-fold composition of the pair (P, Q) of ``region``, in that order.

    Parameters
    ----------
    region : PrivacyRegion
        A finite pair (its atoms; ``log_p_inf`` and ``log_q_ninf`` its masses of loss ``±inf``).
    k : int
        Number of compositions (>= 1).

    Examples
    --------
    >>> import numpy as np
    >>> from lpdp import PrivacyRegion
    >>> r = PrivacyRegion.from_pair([0.6, 0.4], [0.3, 0.7])           # not its own mirror
    >>> lo, hi = power(r, 2)
    >>> pairs = [(0.6, 0.3), (0.4, 0.7)]
    >>> brute = sum(max(0.0, a * b - c * d) for a, c in pairs for b, d in pairs)   # Σ (p - q)_+ at ε = 0
    >>> bool(lo.delta(0.0) <= brute <= hi.delta(0.0)), round(float(hi.delta(0.0)), 12)
    (True, 0.33)
    """
    k = check_int(k, "k", 1)
    L = np.asarray(region.losses, float)
    lp = np.asarray(region.log_p, float)
    m = L.size
    log_fin = float(log1mexp(region.log_p_inf)) if region.log_p_inf > -math.inf else 0.0
    log_p_inf = _leak(region.log_p_inf, k)
    log_q_ninf = _leak(region.log_q_ninf, k)
    if m == 0:
        empty = PrivacyRegion.from_log_masses([], [], [], log_p_inf=log_p_inf, log_q_ninf=log_q_ninf,
                                              check_total=False)
        return empty, empty
    if k == 1:              # no composition: the pair itself, with its own certified sides
        return region, region
    atoms = atom_count(region, k)
    if atoms > MAX_ATOMS:
        raise ParameterError(f"the multinomial of {m} atoms composed k={k} times has {atoms:.3g} atoms: "
                             f"more than {MAX_ATOMS:.3g}")
    # the count vectors are an (atoms, m) integer matrix, and every product with it is as large
    check_budget(f"the multinomial of {m} atoms composed k={k} times ({atoms:.3g} atoms)",
                 memory_bytes=8.0 * atoms * (m + 10), seconds=seconds_for(50.0 * atoms * (m + 8)))
    counts = _count_vectors(m, k)                       # (atoms, m) integer vectors summing to k
    loss = counts @ L
    # the finite atoms' masses are normalised over the finite part, then scaled by (1 - p_inf)^k
    lp_fin = lp - log_fin
    if m == 2:
        log_mass = _log_multinomial(counts, lp_fin) + k * log_fin
        err_coef = BINOM_ATOL
    else:   # gammaln, vectorised: a few u relative of each log-factorial (absolute: 8 u their sum)
        lf = special.gammaln(counts + 1.0)
        log_mass = float(special.gammaln(k + 1.0)) - lf.sum(axis=1) + counts @ lp_fin + k * log_fin
        err_coef = 8 * _U * (float(special.gammaln(k + 1.0)) + lf.sum(axis=1)) + 8 * _U * (
            np.abs(counts) @ np.abs(lp_fin))
    # errors: inputs (per count: the trusted roundoff and the pair's own bound, e.g. from_pair's absolute
    # loss error of a quotient, 1e-16 on a loss of 1e-6), the sum Σ n_i L_i (m + 1 roundings), the
    # binomial chain (m - 1 factors)
    own = region.error.absolute(float(np.max(np.abs(L), initial=0.0)))
    abs_l = counts @ np.abs(L)
    err_loss = counts @ (LOSS_RTOL * np.abs(L) + own.loss) + (m + 2) * _U * abs_l
    err_mass = (counts @ (MASS_ATOL + MASS_RTOL * np.abs(lp) + np.asarray(own.log_mass(np.abs(lp))))) \
        + err_coef + 8 * _U * (np.abs(log_mass) + k * abs(log_fin)) + 8 * k * _U
    # the leaks: the input's error, then log1mexp, k times its log, log1mexp (a few u each, relative)
    err_inf = MASS_ATOL + MASS_RTOL * abs(region.log_p_inf) + 32 * _U + own.log_inf(abs(region.log_p_inf)) \
        if log_p_inf > -math.inf else 0.0
    up = _region(loss + err_loss, np.minimum(log_mass + err_mass, 0.0), min(log_p_inf + err_inf, 0.0),
                 log_q_ninf)
    down = _region(loss - err_loss, log_mass - err_mass, log_p_inf - err_inf, log_q_ninf)
    return down, up


def _leak(log_m: float, k: int) -> float:
    """log of ``1 - (1 - m)^k`` (the mass of an infinite loss after k rounds)."""
    if log_m == -math.inf:
        return -math.inf
    rest = k * float(log1mexp(log_m))
    return float(log1mexp(rest)) if rest < 0 else 0.0


def _count_vectors(m: int, k: int) -> np.ndarray:
    """Every vector of ``m`` non-negative integers summing to ``k`` (rows)."""
    if m == 1:
        return np.full((1, 1), k, dtype=np.int64)
    if m == 2:
        j = np.arange(k + 1, dtype=np.int64)
        return np.stack([j, k - j], axis=1)
    parts = []
    for first in range(k + 1):
        rest = _count_vectors(m - 1, k - first)
        parts.append(np.concatenate([np.full((rest.shape[0], 1), first, dtype=np.int64), rest], axis=1))
    return np.concatenate(parts, axis=0)


def _log_multinomial(counts: np.ndarray, log_p: np.ndarray) -> np.ndarray:
    """``log(k! Π p_i^{n_i} / n_i!)`` for probabilities ``e^log_p`` summing to one, as a chain of
    binomials: ``n_1 ~ Bin(k, p_1)``, ``n_2 ~ Bin(k - n_1, p_2 / (1 - p_1))``, ..."""
    atoms, m = counts.shape
    out = np.zeros(atoms)
    remaining = counts.sum(axis=1)
    log_rest = 0.0                                   # log of the mass of atoms i, i+1, ...
    for i in range(m - 1):
        log_tail = float(np.logaddexp.reduce(log_p[i + 1:]))
        lp_i, lq_i = log_p[i] - log_rest, log_tail - log_rest
        order = np.argsort(remaining, kind="stable")
        values, starts = np.unique(remaining[order], return_index=True)
        ends = np.append(starts[1:], order.size)
        for r, a, b in zip(values.tolist(), starts.tolist(), ends.tolist(), strict=True):
            if r == 0:
                continue
            rows = order[a:b]
            out[rows] += log_binom_pmf(int(r), counts[rows, i].astype(float), lp_i, lq_i)
        remaining = remaining - counts[:, i]
        log_rest = log_tail
    return out


def _region(loss: np.ndarray, log_p: np.ndarray, log_p_inf: float, log_q_ninf: float) -> PrivacyRegion:
    return PrivacyRegion.from_log_masses(loss, log_p, log_p_inf=log_p_inf,
                                         log_q_ninf=log_q_ninf, check_total=False)
