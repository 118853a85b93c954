"""Exact k-fold composition under two DP constraints at once (Theorems 2 and 3).

Each of k mechanisms is both (ε1, δ1)-DP and (ε2, δ2)-DP. Ordered so that δ1 < δ2, both constraints are
active iff ε1 > ε2 and ``(1-δ1)(1+e^{ε2}) < (1-δ2)(1+e^{ε1})``; the worst case is then the 6-point
dominating mechanism of Thms 2-3: with probability δ1 everything is revealed, otherwise an ε1 randomised
response is used with probability ``1-α`` and an ε2 one with probability α. Otherwise one region contains
the other and the answer is Kairouz's (Kairouz et al.) for the binding constraint.

The exact route (``method="lattice"``, the default): the k-fold product grouped by
``(n1, n2) = (a-d, b-c)``, loss ``ε1 n1 + ε2 n2``. Given the number i of ε1-type coordinates, ``n1`` and
``n2`` are independent binomials, so the P-mass of a key is ``Σ_i F[n1, i] G[i, n2]``: matrix products (per
parity of i) of positive terms, split and scaled by powers of two so that every term above ``2^-1517``
keeps full relative precision and no arithmetic is subnormal (which would make BLAS ~50x slower). O(k^2)
keys, O(k^3) multiply-adds in BLAS: k = 1000 in well under a second. When ε1/ε2 is rational, the k-fold
convolution power of one coordinate's law on integer levels (:func:`_levels`) instead, if that is cheaper
(:func:`route_costs`: few levels, as for ε1 = 2 ε2; not 21/50 at large k). Theorem 2's mixture
and Theorem 3's intersection are checks of this route in the test suite (same region to 1e-12).

Baselines (supersets of the exact region): ``"remark1"``, ``R_k(ε1,δ1) ∩ R_k(ε2,δ2)``, and ``"remark2"``
(Ghazi and Issa), ``R_k((ε1,0),(δ1,η)) ∩ R_k(ε2,δ2)`` with ``η = δ2 + (1-δ2)(e^{ε2}-1)/(e^{ε2}+1)``.
Both are :meth:`PrivacyRegion.intersect` of Kairouz compositions (exact losses, rounded breakpoints).
"""

from __future__ import annotations

import dataclasses
import functools
import math
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np

from lpdp import _special as special
from lpdp._limits import check_budget, memory_limit_bytes, seconds_for
from lpdp._numerics import UNIT_ROUNDOFF, ErrorBound, log_softplus, round_up
from lpdp._search import largest
from lpdp._validate import check_delta, check_epsilon, check_int
from lpdp.compose._convolve import log_power
from lpdp.compose._levels import (
    commensurate_units,
    lattice_loss,
    level_loss_error,
    level_losses,
    merge_tolerance,
    region_from_atoms,
)
from lpdp.compose.kairouz import homogeneous
from lpdp.errors import ParameterError
from lpdp.region import PrivacyRegion

__all__ = ["METHODS", "double_dp", "total_variation_eta", "max_k_within", "route_costs"]

#: Accepted values of ``method``: the exact route, then the two baselines.
METHODS = ("lattice", "remark1", "remark2")

_LN2 = math.log(2.0)
#: Factors of the lattice's matrix product are split at 2^-500 into large and small ones (see _log_matmul).
_LOG_SPLIT = -500 * _LN2
#: Factors below 2^-1517 only make terms below 2^-1517 (~1e-457): they are dropped.
_LOG_FLOOR = -1517 * _LN2


@dataclass(frozen=True)
class _Active:
    """Two active constraints, ordered (δ1 < δ2, ε1 > ε2), with log α and log(1-α) (Thms 2-3)."""

    e1: float
    d1: float
    e2: float
    d2: float
    log_alpha: float
    log_1m_alpha: float
    #: log masses of one coordinate's finite atoms (losses ε1, -ε1, ε2, -ε2), each from the four doubles
    #: at 40 digits and rounded once
    base: tuple[float, float, float, float] = ()


def _check_pair(pair: object, name: str) -> tuple[float, float]:
    try:
        e, d = pair  # type: ignore[misc]
    except (TypeError, ValueError):
        raise ParameterError(f"{name}={pair!r}: must be an (epsilon, delta) pair") from None
    return check_epsilon(e, f"{name}.epsilon"), check_delta(d, f"{name}.delta", allow_one=False)


def _ordered(first: tuple[float, float], second: tuple[float, float]) -> list[tuple[float, float]]:
    """The constraints ordered by δ, ties by ε (Thms 2-3: δ1 <= δ2)."""
    return sorted([first, second], key=lambda c: (c[1], c[0]))


def _alpha_terms(arith: Any, e1: Any, e2: Any, d1: Any, d2: Any) -> tuple[Any, Any, Any]:
    """``(A, B, α (1 - δ1))`` of Thms 2-3 in the arithmetic of ``arith`` (:mod:`math` on floats, or
    :mod:`mpmath` on its numbers): with ``r = 1 - e^{ε2-ε1}``, ``A = (1+e^{ε1}) / (e^{ε1}-e^{ε2}) =
    (1+e^{-ε1})/r`` and ``B = (1+e^{ε2}) / (e^{ε1}-e^{ε2}) = (e^{ε2-ε1}+e^{-ε1})/r`` (no overflow, no
    cancellation in ``r``), ``(1-α)(1-δ1) = (δ2-δ1) A`` and ``α(1-δ1) = 1 - δ2 A + δ1 B``."""
    r = -arith.expm1(e2 - e1)
    big_a = (1 + arith.exp(-e1)) / r
    big_b = (arith.exp(e2 - e1) + arith.exp(-e1)) / r
    return big_a, big_b, 1 - d2 * big_a + d1 * big_b


@functools.lru_cache(maxsize=256)
def _classify(first: tuple[float, float], second: tuple[float, float]) -> _Active | tuple[float, float]:
    """The active pair, or the single binding constraint when one region contains the other (Thms 2-3).
    Memoised (a pure function of four doubles whose 40-digit logs cost ~0.2 ms, a fifth of a small
    lattice; sweeps and repeated queries ask for the same pair again)."""
    (e1, d1), (e2, d2) = _ordered(first, second)
    if not e1 > e2:
        return (e1, d1)   # δ1 <= δ2 and ε1 <= ε2: R(ε1, δ1) ⊆ R(ε2, δ2)
    # Active iff α > 0 (_alpha_terms), i.e. (1-δ1)(1+e^{ε2}) < (1-δ2)(1+e^{ε1}).
    if not _alpha_terms(math, e1, e2, d1, d2)[2] > 0:      # in floats first: most calls end here
        return (e1, d1)
    # α and 1 - α from the given doubles at 40 digits (the float formula cancels when α is small): the
    # stored logs are then within an ulp of the exact values
    import mpmath

    with mpmath.workdps(40):
        m1, m2, n1, n2 = (mpmath.mpf(x) for x in (e1, e2, d1, d2))
        aa, bb, ax = _alpha_terms(mpmath, m1, m2, n1, n2)
        if not ax > 0:
            return (e1, d1)
        la = mpmath.log(ax) - mpmath.log1p(-n1)
        l1a = mpmath.log(n2 - n1) + mpmath.log(aa) - mpmath.log1p(-n1)
        sp1, sp2 = mpmath.log1p(mpmath.exp(m1)), mpmath.log1p(mpmath.exp(m2))
        base = tuple(float(v) for v in (l1a + m1 - sp1, l1a - sp1, la + m2 - sp2, la - sp2))
    return _Active(e1, d1, e2, d2, float(la), float(l1a), base)


def total_variation_eta(epsilon: float, delta: float) -> float:
    """``η = δ + (1-δ)(e^ε - 1)/(e^ε + 1)``: the total variation implied by (ε, δ)-DP (Remark 2), rounded
    up.

    Examples
    --------
    >>> round(total_variation_eta(0.15, 0.02), 6)
    0.093362
    """
    eps = check_epsilon(epsilon, "epsilon")
    dlt = check_delta(delta, "delta")
    # rounded up (η is a δ of the baseline's (0, η) constraint): tanh within 2 ulps, 1 - δ, the product
    # and the sum one rounding each, all terms positive: 6 u relative, then the next double
    value = dlt + (1.0 - dlt) * math.tanh(eps / 2.0)
    return min(1.0, round_up(value * (1.0 + 6 * UNIT_ROUNDOFF)))


def double_dp(first: tuple[float, float], second: tuple[float, float], k: int, *,
              method: str = "lattice") -> PrivacyRegion:
    """Region of the k-fold (adaptive) composition of mechanisms that are both (ε1,δ1)- and (ε2,δ2)-DP.

    Parameters
    ----------
    first, second : (float, float)
        The two constraints ``(ε, δ)``, ε >= 0 finite, δ in [0, 1), in any order.
    k : int
        Number of mechanisms, >= 1 (and at most :data:`MAX_K` for the exact routes when both constraints
        are active).
    method : {"lattice", "remark1", "remark2"}
        ``"lattice"`` (default): the exact region (module docstring); ``"remark1"`` or ``"remark2"``: the
        paper's baselines, which contain the exact region (valid but looser guarantees).

    Returns
    -------
    PrivacyRegion
        When one constraint implies the other, the exact routes return Kairouz's region for the binding
        one (Thms 2-3).

    Examples
    --------
    >>> from lpdp.compose import double_dp
    >>> exact = double_dp((0.3, 0.0), (0.15, 0.02), 20)
    >>> r1 = double_dp((0.3, 0.0), (0.15, 0.02), 20, method="remark1")
    >>> round(float(exact.delta(1.0)), 6), round(float(r1.delta(1.0)), 6)
    (0.088664, 0.260707)
    >>> r1.contains(exact)
    True
    """
    c1, c2 = _check_pair(first, "first"), _check_pair(second, "second")
    k = check_int(k, "k", 1)
    if method not in METHODS:
        raise ParameterError(f"method={method!r}: must be one of {', '.join(METHODS)}")
    if method == "remark1":
        return homogeneous(*c1, k).intersect(homogeneous(*c2, k))
    if method == "remark2":
        (e1, d1), (e2, d2) = _ordered(c1, c2)
        eta = total_variation_eta(e2, d2)       # rounds to 1 for huge ε2: then (0, η) says nothing
        first_factor = double_dp((e1, d1), (0.0, eta), k) if eta < 1 else homogeneous(e1, d1, k)
        return first_factor.intersect(homogeneous(e2, d2, k))
    cls = _classify(c1, c2)
    if not isinstance(cls, _Active):
        return homogeneous(*cls, k)
    units = commensurate_units([cls.e1, cls.e2])
    costs = route_costs(cls.e1, cls.e2, k)
    fitting = [r for r, (memory, _) in costs.items() if memory <= memory_limit_bytes()] or list(costs)
    route = min(fitting, key=lambda r: costs[r][1])
    if "levels" in fitting and costs["levels"][1] <= QUICK_SECONDS:
        route = "levels"                 # integer levels merge ties exactly; cheap work keeps its route
    memory, seconds = costs[route]
    if route == "levels":
        check_budget(f"k={k} ({_level_count(k, units)} integer levels)", memory_bytes=memory, seconds=seconds)
        return _levels(cls, k, units)
    check_budget(f"k={k} with method 'lattice'", memory_bytes=memory, seconds=seconds,
                 hint="use commensurate ε (e.g. ε1 = 2 ε2)")
    return _lattice(cls, k)


#: Estimated seconds below which a route is taken whatever the other costs (results stay those of the
#: route small cases have always used, to the last bit).
QUICK_SECONDS = 0.05


def route_costs(e1: float, e2: float, k: int) -> dict[str, tuple[float, float]]:
    """Estimated peak memory (bytes) and time (seconds) of each exact route for two active constraints
    with ``ε1 > ε2`` composed ``k`` times: ``"lattice"`` (O(k^2) keys, O(k^3) BLAS work) always, and
    ``"levels"`` (the convolution power on integer levels, O((k u1)^2) work) when ``ε1/ε2 = u1/u2`` is
    rational. :func:`double_dp` takes the levels route when it is quick (:data:`QUICK_SECONDS`), else
    the cheaper route that fits the memory budget, so a ratio like 21/50 (u1 = 50) does not send
    k = 1000 to 10^5 levels.

    Examples
    --------
    >>> from lpdp.compose.double import route_costs
    >>> sorted(route_costs(0.3, 0.15, 1000))                    # ratio 2: both routes exist
    ['lattice', 'levels']
    >>> c = route_costs(0.05, 0.021, 1000)
    >>> c["lattice"][1] < c["levels"][1]                        # 21/50: the lattice is cheaper
    True
    """
    costs = {"lattice": (150.0 * (k + 1) ** 2, seconds_for((k + 1) ** 3 / 40))}
    units = commensurate_units([e1, e2])
    if units is not None:
        size = float(_level_count(k, units))
        costs["levels"] = (120.0 * size, seconds_for(size ** 2 / 20))
    return costs


def _level_count(k: int, units: list[int]) -> int:
    """Integer levels of the k-fold power on the commensurate route (see :func:`_levels`)."""
    u1, u2 = units
    return 2 * k * u1 // math.gcd(2 * u1, u1 + u2, u1 - u2) + 1


def _log_tilde(p: _Active, k: int) -> tuple[float, float]:
    """``log (1-δ1)^k`` and ``log δ~ = log(1 - (1-δ1)^k)`` (the mass that reveals everything)."""
    log_rest = k * math.log1p(-p.d1)
    return log_rest, (math.log(-math.expm1(log_rest)) if p.d1 > 0 else -math.inf)


def _tolerance(p: _Active, k: int) -> float:
    return merge_tolerance(k * p.e1)


def _levels(p: _Active, k: int, units: list[int]) -> PrivacyRegion:
    """Commensurate ε1 = u1 Δ, ε2 = u2 Δ: the k-fold power of one coordinate's law on integer levels.

    One coordinate of the 6-point pair (its finite part) puts ``(1-α) s_1, (1-α)(1-s_1)`` on levels
    ``±u1`` and ``α s_2, α (1-s_2)`` on ``±u2`` (``s = e^ε / (1 + e^ε)``); shifted by u1 and divided by
    ``g = gcd(2 u1, u1 + u2, u1 - u2)`` it lives on ``0 .. 2 u1 / g``. Its k-fold convolution power by
    squaring (:func:`log_power`, exact log-space sums; masses below 2^-1517 dropped) is the level
    distribution: O(k u1) levels and O((k u1)^2) work, k = 10^4 for Figure 2's (0.3, 0.15) in about a
    second. Losses are ``ℓ Δ`` with the slack of :func:`level_losses` (never below a key's exact loss).
    """
    u1, u2 = units
    g = math.gcd(2 * u1, u1 + u2, u1 - u2)
    size = _level_count(k, units)
    base = np.full(2 * u1 // g + 1, -np.inf)
    for at, log_mass in zip((2 * u1, 0, u1 + u2, u1 - u2), p.base, strict=True):
        base[at // g] = np.logaddexp(base[at // g], log_mass)      # ε2 = 0: ±u2 is one level
    log_rest, log_inf = _log_tilde(p, k)
    own: list[ErrorBound] = []
    log_mass = log_power(base, k, errors=own) + log_rest
    ell = g * np.arange(size) - k * u1
    step = p.e1 / u1
    slack = k * max(abs(Fraction(p.e1) - u1 * Fraction(step)), abs(Fraction(p.e2) - u2 * Fraction(step)))
    # each base log mass is one rounding of its 40-digit value (u/2 of its magnitude); the merge of ±u2
    # when ε2 = 0 one logaddexp (a few ulps)
    base_err = ErrorBound(mass=4 * UNIT_ROUNDOFF, per_nat=UNIT_ROUNDOFF)
    # a level of the k-fold power sums over the count vectors of the four base atoms on it: at most
    # (k + 1)^2 terms (their mean depth below the level's mass is at most the log of that)
    err = ErrorBound().times(base_err, k, terms=(k + 1.0) ** 2).times(own[0], terms=1) \
        .widened(per_nat=4 * UNIT_ROUNDOFF)
    err = level_loss_error(err, slack).with_dropped_top(k * p.e1)
    return region_from_atoms(level_losses(step, ell, slack), log_mass, log_p_inf=log_inf, level=ell,
                             error=_leak_error(err, p, k))


def _base_error(p: _Active) -> float:
    """A bound on the log-mass error of one coordinate of the 6-point pair (its four finite atoms):
    ``log α`` and ``log(1 - α)`` are computed at 40 digits and rounded once (``u`` of their magnitude);
    the softplus terms and the sums add a few ulps of ``1 + ε1`` each (docs/reliability.md, "Double
    DP")."""
    u = UNIT_ROUNDOFF
    return round_up(8 * u * (4 + p.e1 + abs(p.log_alpha) + abs(p.log_1m_alpha)))


def _leak_error(err: ErrorBound, p: _Active, k: int) -> ErrorBound:
    """The bound with the +inf mass ``1 - (1-δ1)^k`` (``k log1p(-δ1)`` then ``log1mexp``: condition number
    at most 1, a few ulps) and the factor ``(1-δ1)^k`` of every finite atom (4 u per nat, in ``err``)."""
    return dataclasses.replace(err, inf_mass=16 * UNIT_ROUNDOFF * (1 + abs(k * math.log1p(-p.d1))))


def _lattice(p: _Active, k: int) -> PrivacyRegion:
    """Default route: key masses ``Σ_i F[n1, i] G[i, n2]`` by BLAS (module docstring), for n1 >= 0."""
    log_rest, log_inf = _log_tilde(p, k)
    sp1, sp2 = float(log_softplus(p.e1)), float(log_softplus(p.e2))
    log_fact = special.gammaln(np.arange(k + 1) + 1.0)

    def log_binomial_pmf_part(n: np.ndarray, n_diff: np.ndarray, eps: float) -> np.ndarray:
        """``log C(n, r) + r ε`` with ``r = (n + n_diff) / 2`` agreeing coordinates; -inf off the lattice."""
        ok = np.abs(n_diff) <= n
        r = np.where(ok, (n + n_diff) // 2, 0)
        n = np.broadcast_to(n, r.shape)
        return np.where(ok, log_fact[n] - log_fact[r] - log_fact[n - r] + r * eps, -np.inf)

    units = commensurate_units([p.e1, p.e2])                # integer levels when ε1/ε2 is rational
    losses, log_masses, levels = [], [], []
    for parity in (0, 1):
        i = np.arange(parity, k + 1, 2)                     # ε1-type coordinates, n1 ≡ i (mod 2)
        n1 = np.arange(parity, k + 1, 2)                    # n1 >= 0 here; n1 < 0 by the mirror below
        n2 = np.arange(-k + parity, k + 1, 2)               # n2 ≡ k - i (mod 2), symmetric about 0
        m = k - i
        weight = log_fact[k] - log_fact[i] - log_fact[m] + i * (p.log_1m_alpha - sp1) + m * p.log_alpha
        log_f = log_binomial_pmf_part(i[None, :], n1[:, None], p.e1) + weight[None, :]
        log_g = log_binomial_pmf_part(m[:, None], n2[None, :], p.e2) - (m * sp2)[:, None]
        log_pos = _log_matmul(log_f, log_g)
        # The pair is its own mirror, so P(-n1, n2) = e^{L(-n1, n2)} P(n1, -n2): reversed columns.
        n1_neg = -n1[n1 > 0]
        loss_neg = lattice_loss([p.e1, p.e2], np.meshgrid(n1_neg, n2, indexing="ij", sparse=True))
        blocks = ((n1, log_pos), (n1_neg, loss_neg + log_pos[n1 > 0, ::-1]))
        for rows, log_mass in blocks:
            key = np.abs(rows)[:, None] + np.abs(n2)[None, :] <= k
            loss = lattice_loss([p.e1, p.e2], np.meshgrid(rows, n2, indexing="ij", sparse=True))
            losses.append(np.broadcast_to(loss, key.shape)[key])
            log_masses.append(log_mass[key] + log_rest)
            if units is not None:
                levels.append((units[0] * rows[:, None] + units[1] * n2[None, :])[key])
    u = UNIT_ROUNDOFF
    # gammaln(n + 1) to a few ulps of its value (3 per weight and 3 per factor: 12 u log k!), the weights'
    # k coordinates each carrying the base's error, the BLAS sums of k + 1 positive terms (scaled by
    # powers of two, no subnormals), the logs and the additions
    err = ErrorBound(mass=round_up(12 * u * float(log_fact[k]) + k * _base_error(p) + u * (4 * k + 64)),
                     per_nat=16 * u).widened(loss_rel=2 * u)
    err = err.with_dropped(_LOG_FLOOR + math.log(4.0 * (k + 1) ** 3), k * p.e1)
    return region_from_atoms(np.concatenate(losses), np.concatenate(log_masses), log_p_inf=log_inf,
                             tol=_tolerance(p, k), level=None if units is None else np.concatenate(levels),
                             error=_leak_error(err, p, k))


def _log_matmul(log_f: np.ndarray, log_g: np.ndarray) -> np.ndarray:
    """``log(e^{log_f} @ e^{log_g})`` for log-probabilities (entries <= 0), by BLAS without subnormals.

    Every term ``T = F G`` (F, G <= 1) above ``2^-1517`` is computed with full relative precision; smaller
    ones are dropped (an error below ``k * 1e-457`` per key). Factors are split at ``2^-500`` into large
    (L) and small (S) ones and three products are scaled so that every kept product lies in
    ``[2^-1022, 2^1012]``: L·(L or S) scaled by ``2^500 · 2^500``, S·L by ``2^1000 · 1``, S·S by
    ``2^1006 · 2^1006``. Each product is restricted to the rows, columns and inner indices its masks use.
    """
    out = np.full((log_f.shape[0], log_g.shape[1]), -np.inf)
    f_large, g_large = log_f >= _LOG_SPLIT, log_g >= _LOG_SPLIT
    f_small = ~f_large & (log_f >= _LOG_FLOOR)
    g_small = ~g_large & (log_g >= _LOG_FLOOR)
    pieces = ((f_large, 500, g_large | g_small, 500), (f_small, 1000, g_large, 0),
              (f_small, 1006, g_small, 1006))
    for f_mask, f_bits, g_mask, g_bits in pieces:
        rows, inner, cols = f_mask.any(axis=1), f_mask.any(axis=0) & g_mask.any(axis=1), g_mask.any(axis=0)
        if not (rows.any() and inner.any() and cols.any()):
            continue
        f_mask, g_mask = f_mask[np.ix_(rows, inner)], g_mask[np.ix_(inner, cols)]
        f = np.zeros(f_mask.shape)
        f[f_mask] = _exp_scaled(log_f[np.ix_(rows, inner)][f_mask], f_bits)
        g = np.zeros(g_mask.shape)
        g[g_mask] = _exp_scaled(log_g[np.ix_(inner, cols)][g_mask], g_bits)
        part = _log_scaled(f @ g, f_bits + g_bits)
        block = np.ix_(rows, cols)
        out[block] = np.logaddexp(out[block], part)
    return out


#: ``log 2`` split for Cody and Waite's reduction: ``n * _LN2_HI`` is exact for ``|n| < 2^21``.
_LN2_HI = float.fromhex("0x1.62e42fee00000p-1")
_LN2_LO = math.log(2.0) - _LN2_HI


def _exp_scaled(x: np.ndarray, bits: int) -> np.ndarray:
    """``e^x 2^bits`` for ``x <= 0`` (results in the normal range) with the relative error of one ``exp``.

    ``e^{x + bits log 2}`` would round the sum to an ulp of ``|x| + 346`` (6e-14 at ``bits = 500``).
    Instead ``x = -n log 2 + r`` with ``n = round(-x / log 2)``: ``x + n LN2_HI`` is exact (Sterbenz),
    ``n LN2_LO`` carries an error near 2^-75, so ``|r| <= 0.35`` is within an ulp; ``e^r 2^{bits - n}`` by
    ``ldexp`` is exact.
    """
    n = np.rint(-x / _LN2)
    r = (x + n * _LN2_HI) + n * _LN2_LO
    return np.ldexp(np.exp(r), (bits - n).astype(np.int64))


def _log_scaled(y: np.ndarray, bits: int) -> np.ndarray:
    """``log(y 2^-bits)`` for ``y >= 0``: ``y = m 2^e`` exactly (``frexp``), ``log m + (e - bits) log 2``
    (a few ulps of the result, not of ``bits log 2``); ``-inf`` for 0."""
    m, e = np.frexp(y)
    with np.errstate(divide="ignore"):
        return np.log(m) + ((e - bits) * _LN2_HI + (e - bits) * _LN2_LO)


def max_k_within(compose: Callable[[int], PrivacyRegion], epsilon: float, delta: float, *,
                 k_max: int = 2000) -> int:
    """Largest k <= ``k_max`` whose composed region ``compose(k)`` satisfies ``δ(ε) <= delta``.

    ``δ_k(ε)`` never decreases with k (composition is monotone), so an exponential search followed by
    bisection needs O(log k) compositions. Returns 0 when even one mechanism exceeds the budget, and
    ``k_max`` when every k up to ``k_max`` fits (the answer is then *at least* ``k_max``).

    Examples
    --------
    >>> from lpdp.compose import double_dp, max_k_within
    >>> max_k_within(lambda k: double_dp((1.0, 1e-6), (0.3, 1e-3), k), 8.0, 1e-5)
    10
    """
    eps = check_epsilon(epsilon, "epsilon")
    dlt = check_delta(delta, "delta")
    k_max = check_int(k_max, "k_max", 1)

    def fits(k: int) -> bool:
        return bool(compose(k).delta(eps) <= dlt)

    return largest(fits, k_max)[0]
