"""Exact k-fold composition under any number n of (ε_i, δ_i) constraints (docs/fdp.md).

The paper proves the cases n = 1 (Kairouz et al.) and n = 2 (Theorems 2–3) and conjectures the general one.
Constructively: the region ``R = ∩_i R(ε_i, δ_i)`` is a symmetric polygon, and its edges *are* a dominating
pair (a mixture of randomised responses whose losses are the edge log-slopes ``±L_j``, plus the δ atom of
loss ``+inf``). Every mechanism satisfying the n constraints is a post-processing of that pair, so the
k-fold composition of the pair is the exact answer, also for adaptive composition.

The k-fold product is a lattice: an outcome sequence is summarised by the integer vector ``n`` of net
counts per level (``+1`` for an outcome of loss ``L_j``, ``-1`` for ``-L_j``), its loss is ``Σ_j n_j L_j``
and its mass a convolution power computed exactly in log space (:mod:`lpdp.compose._convolve`).

Cost. With ``D`` unrelated levels the box holds ``(2k+1)^D`` keys and the work is ``O(k · D · (2k+1)^D)``:
fine for ``D <= 3`` and moderate k, hopeless at ``D = 4`` with large k. If every level is a multiple of a
common step ``Δ`` (pass ``step=Δ``; with ``step=None`` one is found by
:func:`~lpdp.compose._levels.commensurate_units` when that is estimated cheaper), keys are one integer
``Σ_j n_j L_j/Δ``: each part's k-fold convolution power by squaring on ``O(k max_j L_j/Δ)`` levels,
still exact (8 constraints on a 0.05 grid at k = 1000: seconds, not minutes). Losses on a step are ``ℓ Δ``
plus the slack ``k max_j |L_j - u_j Δ|`` (exact, outward), never below a key's exact loss.
:mod:`lpdp.fdp` chooses its approximations on such a lattice.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterable, Sequence
from fractions import Fraction

import numpy as np

from lpdp._limits import check_budget, seconds_for
from lpdp._numerics import UNIT_ROUNDOFF, ErrorBound, log1mexp, round_up
from lpdp._validate import check_int, check_positive
from lpdp.compose._convolve import convolve, convolve_error, log_convolve, log_power
from lpdp.compose._levels import (
    commensurate_units,
    lattice_loss,
    level_loss_error,
    level_losses,
    merge_tolerance,
    region_from_atoms,
)
from lpdp.errors import ParameterError
from lpdp.region import PrivacyRegion, merge_error

__all__ = ["multi", "compose_regions", "directed_product"]

#: A loss counts as a multiple of ``step`` when ``|L/step - round(L/step)|`` is below this.
STEP_TOL = 1e-9
#: Largest loss in units of ``step``: integer keys stay exact doubles (and int64) below 2^52.
MAX_STEP_UNITS = float(2**52)
#: Peak bytes per lattice cell of :func:`lpdp.compose._convolve.convolve` (float and bool box arrays).
_BYTES_PER_CELL = 60
#: Estimated seconds below which the sequential lattice is kept (small cases keep their results to the
#: last bit); above, a common step and the convolution power by squaring are used when cheaper.
QUICK_SECONDS = 0.05


def multi(constraints: Iterable[tuple[float, float]], k: int, *, step: float | None = None
          ) -> PrivacyRegion:
    """Exact region of k mechanisms, each satisfying every ``(ε_i, δ_i)`` constraint (docs/fdp.md).

    Parameters
    ----------
    constraints : iterable of (float, float)
        The ``(ε_i, δ_i)`` pairs every mechanism satisfies at once (any number n >= 1).
    k : int
        Number of mechanisms, >= 1.
    step : float, optional
        A common lattice step: every ε_i must be an integer multiple of it (to ``STEP_TOL``). The
        result is the same exact region, computed as a 1-D convolution power (fast for many levels).
        Default: found from the ε_i when they are commensurate and the 1-D power is cheaper.

    Returns
    -------
    PrivacyRegion
        For n = 1 it equals Kairouz's ``R_k(ε, δ)``, for n = 2 Theorems 2–3.

    Examples
    --------
    >>> from lpdp.compose.multi import multi
    >>> r = multi([(1.0, 0.0), (0.5, 0.01), (0.2, 0.05)], 5)
    >>> round(float(r.delta(1.0)), 6)
    0.053102
    >>> r.epsilon(1e-3) <= 5.0
    True
    """
    k = check_int(k, "k", 1)
    return compose_regions([(PrivacyRegion.from_constraints(constraints), k)], step=step)


def compose_regions(parts: Sequence[tuple[PrivacyRegion, int]], *, step: float | None = None
                    ) -> PrivacyRegion:
    """Exact composition of ``count`` mechanisms of each symmetric polygon region (heterogeneous).

    Each region's edges are used as its dominating pair, so mechanisms with different regions (e.g.
    different f-DP approximations, or different constraint sets) compose in one lattice.

    Parameters
    ----------
    parts : sequence of (PrivacyRegion, int)
        Symmetric regions and how many mechanisms have each (counts >= 0, at least one positive).
    step : float, optional
        Common lattice step of every edge loss (see :func:`multi`).

    Examples
    --------
    >>> from lpdp import PrivacyRegion
    >>> from lpdp.compose.multi import compose_regions
    >>> r = compose_regions([(PrivacyRegion.from_dp(0.5, 0.0), 3), (PrivacyRegion.from_dp(1.0, 0.0), 2)])
    >>> round(float(r.delta(0.0)), 6)
    0.60369
    """
    regions, counts = _checked(parts, symmetric=True)
    if step is not None:
        step = check_positive(step, "step")
    if any(r.losses.size == 0 for r in regions):   # a mechanism that always leaks: so does the product
        return region_from_atoms(np.empty(0), np.empty(0), log_p_inf=0.0)
    # Every mass is read from an edge with L >= 0 (an atom of loss -L has the P-mass of its mirror's
    # Q-mass): those edges sit near bI = 0 where their lengths keep full relative precision.
    inputs = [r.error if not np.any(r.losses < 0) else r.error.mirrored(float(np.max(np.abs(r.losses))))
              for r in regions]       # the masses of negative losses are read from the mirror's q
    loss, log_p, tol, err = _product_atoms(regions, counts, step, [
        np.where(r.losses >= 0, r.log_p, r.log_q[::-1]) for r in regions], inputs)
    log_inf, inf_err = _log_leak(regions, counts, "log_p_inf")
    return region_from_atoms(loss, log_p, log_p_inf=log_inf, tol=tol,
                             error=_with_inf(err, inf_err))


def directed_product(parts: Sequence[tuple[PrivacyRegion, int]]) -> PrivacyRegion:
    """Exact region of the product of finite pairs ``(P_i, Q_i)``, not necessarily symmetric, in that order.

    The same lattice as :func:`compose_regions` (one integer coordinate per distinct ``|L|``), with each
    pair's own P-masses; the Q-masses follow from ``q = p e^{-L}``. The pair ``(Q, P)`` of the product is
    that of the mirrored parts: an order-independent guarantee takes the larger δ of both.

    Examples
    --------
    >>> from lpdp import PrivacyRegion
    >>> from lpdp.compose.multi import directed_product
    >>> r = directed_product([(PrivacyRegion.from_pair([0.5, 0.5, 0.0], [0.2, 0.3, 0.5]), 2)])
    >>> round(float(r.delta(0.0)), 6)    # Σ (p - q)^+ over the 9 output pairs
    0.75
    """
    regions, counts = _checked(parts, symmetric=False)
    if any(r.losses.size == 0 for r in regions):
        return PrivacyRegion.from_log_masses([], [], [], log_p_inf=0.0, log_q_ninf=0.0, check_total=False)
    loss, log_p, tol, err = _product_atoms(regions, counts, None, [r.log_p for r in regions],
                                           [r.error for r in regions])
    log_inf, inf_err = _log_leak(regions, counts, "log_p_inf")
    return region_from_atoms(loss, log_p, log_p_inf=log_inf,
                             log_q_ninf=_log_leak(regions, counts, "log_q_ninf")[0], tol=tol,
                             error=_with_inf(err, inf_err))


def _checked(parts: Sequence[tuple[PrivacyRegion, int]], *, symmetric: bool
             ) -> tuple[list[PrivacyRegion], list[int]]:
    """The regions with a positive count and their counts (validated)."""
    items = list(parts)
    if not items:
        raise ParameterError("parts=[]: at least one (region, count) pair is needed")
    regions, counts = [], []
    for i, item in enumerate(items):
        if not (isinstance(item, tuple) and len(item) == 2 and isinstance(item[0], PrivacyRegion)):
            raise ParameterError(f"parts[{i}]={item!r}: must be a (PrivacyRegion, count) pair")
        region, count = item
        count = check_int(count, f"parts[{i}].count", 0)
        if symmetric and not _mirrored(region):
            raise ParameterError(f"parts[{i}]: the region must be symmetric (its pair its own mirror)")
        if count:
            regions.append(region)
            counts.append(count)
    if not regions:
        raise ParameterError("parts: every count is 0; at least one mechanism is needed")
    return regions, counts


def _log_leak(regions: list[PrivacyRegion], counts: list[int], attr: str) -> tuple[float, float]:
    """log of the product's mass of infinite loss, ``1 - Π_i (1 - m_i)^{k_i}`` for ``m_i = e^{attr}``, and
    a bound on its error.

    Each ``log(1 - m_i)`` inherits the error of ``log m_i`` scaled by ``m_i / (1 - m_i)`` plus a few ulps;
    ``k_i`` times that and the sum's roundings give ``ρ`` on ``log Π``; ``log1mexp`` turns an error ``ρ``
    of ``x`` into ``ρ e^x / (1 - e^x)`` (plus a few ulps), which for ``m`` near 0 is the relative error of
    ``1 - e^x ≈ -x``: a condition number of 1.
    """
    u = UNIT_ROUNDOFF
    log_rest, rho = 0.0, 0.0
    for r, c in zip(regions, counts, strict=True):
        lm = getattr(r, attr)
        if lm == -math.inf:
            continue
        term = float(log1mexp(lm))
        e = r.error.log_inf(abs(lm)) if attr == "log_p_inf" else r.error.log_mass(abs(lm))
        cond = math.exp(lm) / -math.expm1(lm) if lm < 0 else math.inf
        rho += c * (abs(term) * 4 * u + e * cond * (1 + 4 * u) + 4 * u * abs(term))
        log_rest += c * term
    if not log_rest < 0:
        return -math.inf, 0.0
    rho += 4 * u * abs(log_rest)
    out = float(log1mexp(log_rest))
    cond = math.exp(log_rest) / -math.expm1(log_rest)
    return out, round_up(rho * cond * (1 + 1e-6) + 8 * u * (1 + abs(out)))


def _with_inf(err: ErrorBound, inf_err: float) -> ErrorBound:
    return dataclasses.replace(err, inf_mass=inf_err)


def _product_atoms(regions: list[PrivacyRegion], counts: list[int], step: float | None,
                   log_ps: list[np.ndarray], errors: list[ErrorBound]
                   ) -> tuple[np.ndarray, np.ndarray, float, ErrorBound]:
    """Losses and log P-masses of the product's finite atoms on the lattice, their merge tolerance and
    their error bound.

    Every region has at least one finite atom; ``log_ps`` are the log P-masses of their atoms and
    ``errors`` their bounds.
    """
    inherited = ErrorBound()
    for e, c, r in zip(errors, counts, regions, strict=True):
        # an atom of the product sums over the count vectors of the region's atoms that reach it
        inherited = inherited.times(e.absolute(float(np.max(np.abs(r.losses), initial=0.0))), c,
                                    terms=math.comb(c + r.losses.size, r.losses.size))
    top_loss = sum(c * float(np.max(np.abs(r.losses), initial=0.0)) for r, c in zip(regions, counts,
                                                                                       strict=True))
    levels = np.unique(np.concatenate([np.abs(r.losses) for r in regions]))
    levels = levels[levels > 0]
    if levels.size == 0 and step is None:   # only losses 0 and ±inf: one level that no key uses
        levels = np.ones(1)
    if step is not None:
        top = float(levels.max(initial=0.0))
        if not top / step <= MAX_STEP_UNITS:
            raise ParameterError(f"step={step!r}: too small for the largest loss {top!r} ({top / step:.3g} "
                                 f"steps; at most 2^52, and every loss must be a multiple of the step)")
    if step is None:
        step = _common_step(levels, counts)
    if step is None:   # the keys themselves: one int64 column per level, refused before they exist
        check_budget(f"the exact lattice of {len(regions)} finite pairs on {levels.size} unrelated loss "
                     f"levels", memory_bytes=8.0 * levels.size * sum(r.losses.size for r in regions),
                     hint="pass step= (a common lattice step)")
    keyed = [(_keys(r, levels, step), lp) for r, lp in zip(regions, log_ps, strict=True)]
    sequential = _sequential_seconds([k for k, _ in keyed], counts) if step is not None else 0.0
    span = 1.0 + sum(c * float(np.ptp(k)) for (k, _), c in zip(keyed, counts, strict=True))
    # squaring wins on dense bases; a sparse one (a few constraint levels on a fine step) is cheaper
    # convolved once per mechanism (n = 4 on a 0.01 step, k = 100: 0.1 s instead of 2.4 s)
    if step is not None and sequential > QUICK_SECONDS and _power_seconds(span) < sequential:
        _check_cost([k for k, _ in keyed], counts, step, power=True)
        own: list[ErrorBound] = []
        ell, log_p = _power_1d(keyed, counts, own)
        err = inherited.times(own[0], terms=1)    # the engine's own rounding is of the result itself
        # how far a key's exact loss Σ n_j L_j can lie from ℓ Δ when L_j is only close to u_j Δ
        slack = _slack(levels, counts, step)
        err = level_loss_error(err, slack).with_dropped_top(top_loss)
        return level_losses(step, ell.astype(float), slack), log_p, 0.0, err
    _check_cost([k for k, _ in keyed], counts, step)
    steps = [kw for kw, c in zip(keyed, counts, strict=True) for _ in range(c)]
    keys, log_p = convolve(steps)
    cells = float(max(log_p.size, 1))
    err = inherited.times(convolve_error(len(steps), max(k.shape[0] for k, _ in keyed), cells), terms=cells)
    if step is not None:
        # keys on the step: ℓ Δ plus the slack of keys whose losses are only close to u_j Δ (outward)
        slack = _slack(levels, counts, step)
        ell = keys[:, 0]
        return (level_losses(step, ell.astype(float), slack), log_p, 0.0,
                level_loss_error(err, slack))
    loss = lattice_loss(list(levels), list(keys.T))
    top = float(np.max(np.abs(loss), initial=0.0))
    return loss, log_p, merge_tolerance(top), err.widened(loss_rel=2 * UNIT_ROUNDOFF)


def _slack(levels: np.ndarray, counts: list[int], step: float) -> Fraction:
    """How far a key's exact loss ``Σ n_j L_j`` can lie from ``ℓ Δ`` when each ``L_j`` is only close to
    ``u_j Δ`` (exact rationals)."""
    return sum(counts) * max((abs(Fraction(float(x)) - round(x / step) * Fraction(step)) for x in levels),
                             default=Fraction(0))


def _sequential_seconds(keyed: list[np.ndarray], counts: list[int]) -> float:
    """Estimated seconds of the sequential lattice (one convolution per mechanism) of these keys."""
    span = 1.0 + sum(c * np.ptp(k, axis=0).astype(float) for k, c in zip(keyed, counts, strict=True))
    return seconds_for(sum(counts) * max(k.shape[0] for k in keyed) * float(np.prod(span)) / 2)


def _common_step(levels: np.ndarray, counts: list[int]) -> float | None:
    """A common step of the levels (:func:`commensurate_units`) when the 1-D power on it is estimated
    cheaper than the lattice of one coordinate per level; else None."""
    units = commensurate_units(list(levels))
    if units is None:
        return None
    total = sum(counts)
    cells_1d = 2.0 * total * max(units) + 1
    per_level = seconds_for(total * 2 * levels.size * float((2 * total + 1) ** levels.size) / 2)
    if per_level <= QUICK_SECONDS or _power_seconds(cells_1d) > per_level:
        return None
    return float(levels.max()) / max(units)


def _power_seconds(cells: float) -> float:
    """Estimated seconds of a 1-D convolution power by squaring over ``cells`` cells."""
    return seconds_for(cells ** 2 / 20)


def _power_1d(keyed: list[tuple[np.ndarray, np.ndarray]], counts: list[int], errors: list[ErrorBound]
              ) -> tuple[np.ndarray, np.ndarray]:
    """Integer levels and log masses of the product on a 1-D lattice: each part's k-fold convolution power
    by squaring (:func:`log_power`), the parts convolved together (:func:`log_convolve`). The engine's
    own error bound (for exact inputs) is appended to ``errors``."""
    total: np.ndarray | None = None
    lo = 0
    err = ErrorBound()
    for (keys, log_w), count in zip(keyed, counts, strict=True):
        m = keys[:, 0]
        base = np.full(int(m.max() - m.min()) + 1, -np.inf)
        np.logaddexp.at(base, m - m.min(), log_w)
        # atoms merged onto one level: a sum of positive terms (merge_error of the group)
        own: list[ErrorBound] = []
        part = log_power(base, count, errors=own)
        binned = merge_error(ErrorBound(), int(np.max(np.bincount(m - m.min()))))
        levels = int(np.count_nonzero(np.isfinite(base)))
        part_err = ErrorBound().times(binned, count, terms=math.comb(count + levels - 1, levels - 1)) \
            .times(own[0], terms=1)
        if total is None:
            total, err = part, part_err
        else:
            terms = min(total.size, part.size)
            total = log_convolve(total, part, errors=own)
            err = err.times(part_err, terms=terms).times(own[-1], terms=1)
        lo += count * int(m.min())
    errors.append(err)
    assert total is not None
    keep = np.flatnonzero(total > -np.inf)
    return keep + lo, total[keep]


def _check_cost(keyed: list[np.ndarray], counts: list[int], step: float | None, *, power: bool = False
                ) -> None:
    """Refuse, before allocating, a lattice over the memory or time budget (:mod:`lpdp._limits`)."""
    span = 1.0 + sum(c * np.ptp(k, axis=0).astype(float) for k, c in zip(keyed, counts, strict=True))
    cells = float(np.prod(span))
    atoms = max(k.shape[0] for k in keyed)
    total = sum(counts)
    what = (f"the exact lattice of {total} mechanisms on " +
            (f"step {step!r}" if step is not None else f"{span.size} unrelated levels") +
            f" ({cells:.3g} cells)")
    # ~7 arrays of the box (float and bool) per step; each step passes over the box once per atom,
    # and the box grows linearly from empty to full: about half the final box on average.
    seconds = _power_seconds(cells) if power else seconds_for(total * atoms * cells / 2)
    check_budget(what, memory_bytes=_BYTES_PER_CELL * cells, seconds=seconds,
                 hint="use a larger step" if step is not None else "pass step= (a common lattice step)")


def _mirrored(region: PrivacyRegion) -> bool:
    """Whether the finite atoms are their own mirror (loss ``L`` with (p, q) matches ``-L`` with (q, p)).

    Masses are compared to a relative 1e-6: :meth:`PrivacyRegion.from_constraints` derives the masses of
    the short edges near ``bI = 1`` from differences of breakpoints close to 1, which lose relative
    precision (and so does ``log_q_ninf``, which is not compared).
    """
    L, lp, lq = region.losses, region.log_p, region.log_q
    return bool(np.allclose(L, -L[::-1], rtol=0, atol=1e-12)
                and np.allclose(np.exp(lp), np.exp(lq[::-1]), rtol=1e-6, atol=1e-15))


def _keys(region: PrivacyRegion, levels: np.ndarray, step: float | None) -> np.ndarray:
    """Integer keys of a region's finite atoms: ``±e_j`` per level, or ``round(L/step)`` on a lattice."""
    L = region.losses
    if step is None:
        keys = np.zeros((L.size, levels.size), dtype=np.int64)
        nz = np.flatnonzero(L != 0)
        keys[nz, np.searchsorted(levels, np.abs(L[nz]))] = np.sign(L[nz]).astype(np.int64)
        return keys
    m = np.rint(L / step)
    bad = np.abs(L / step - m) > STEP_TOL * np.maximum(1.0, np.abs(m))
    if np.any(bad):
        raise ParameterError(f"step={step!r}: the loss {L[bad][0]!r} is not an integer multiple of it")
    return m.astype(np.int64)[:, None]
