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
common step ``Δ`` (pass ``step=Δ``), keys are one integer ``Σ_j n_j L_j/Δ`` and the work drops to
``O(k² · D · max_j L_j/Δ)``: a 1-D convolution power, still exact. :mod:`lpdp.fdp` chooses its
approximations on such a lattice.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

import numpy as np

from lpdp._limits import check_budget, seconds_for
from lpdp._numerics import log1mexp
from lpdp._validate import check_int, check_positive
from lpdp.compose._convolve import convolve
from lpdp.compose._levels import lattice_loss, merge_tolerance, region_from_atoms
from lpdp.errors import ParameterError
from lpdp.region import PrivacyRegion

__all__ = ["multi", "compose_regions"]

#: A loss counts as a multiple of ``step`` when ``|L/step - round(L/step)|`` is below this.
STEP_TOL = 1e-9
#: Largest loss in units of ``step``: integer keys stay exact doubles (and int64) below 2^52.
MAX_STEP_UNITS = float(2**52)
#: Peak bytes per lattice cell of :func:`lpdp.compose._convolve.convolve` (float and bool box arrays).
_BYTES_PER_CELL = 60


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
    items = list(parts)
    if not items:
        raise ParameterError("parts=[]: at least one (region, count) pair is needed")
    regions, counts = [], []
    for i, item in enumerate(items):
        if not (isinstance(item, tuple) and len(item) == 2 and isinstance(item[0], PrivacyRegion)):
            raise ParameterError(f"parts[{i}]={item!r}: must be a (PrivacyRegion, count) pair")
        region, count = item
        count = check_int(count, f"parts[{i}].count", 0)
        if not _mirrored(region):
            raise ParameterError(f"parts[{i}]: the region must be symmetric (its pair its own mirror)")
        if count:
            regions.append(region)
            counts.append(count)
    if not regions:
        raise ParameterError("parts: every count is 0; at least one mechanism is needed")
    if any(r.losses.size == 0 for r in regions):   # a mechanism that always leaks: so does the product
        return region_from_atoms(np.empty(0), np.empty(0), log_p_inf=0.0)
    levels = np.unique(np.concatenate([np.abs(r.losses) for r in regions]))
    levels = levels[levels > 0]
    if levels.size == 0 and step is None:   # only losses 0 and ±inf: one level that no key uses
        levels = np.ones(1)
    if step is not None:
        step = check_positive(step, "step")
        top = float(levels.max(initial=0.0))
        if not top / step <= MAX_STEP_UNITS:
            raise ParameterError(f"step={step!r}: too small for the largest loss {top!r} ({top / step:.3g} "
                                 f"steps; at most 2^52, and every loss must be a multiple of the step)")
    keyed = [_keys(r, levels, step) for r in regions]
    _check_cost(keyed, counts, step)
    steps = [kw for kw, c in zip(keyed, counts, strict=True) for _ in range(c)]
    keys, log_p = convolve(steps)
    log_rest = sum(c * float(log1mexp(r.log_p_inf)) for r, c in zip(regions, counts, strict=True))
    log_inf = float(log1mexp(log_rest)) if log_rest < 0 else -math.inf
    if step is None:
        loss = lattice_loss(list(levels), list(keys.T))
        tol = merge_tolerance(float(np.max(np.abs(loss), initial=0.0)))
    else:
        loss, tol = keys[:, 0] * step, 0.0
    return region_from_atoms(loss, log_p, log_p_inf=log_inf, tol=tol)


def _check_cost(keyed: list[tuple[np.ndarray, np.ndarray]], counts: list[int], step: float | None
                ) -> None:
    """Refuse, before allocating, a lattice over the memory or time budget (:mod:`lpdp._limits`)."""
    span = 1.0 + sum(c * np.ptp(k, axis=0).astype(float) for (k, _), c in zip(keyed, counts, strict=True))
    cells = float(np.prod(span))
    atoms = max(k.shape[0] for k, _ in keyed)
    total = sum(counts)
    what = (f"the exact lattice of {total} mechanisms on " +
            (f"step {step!r}" if step is not None else f"{span.size} unrelated levels") +
            f" ({cells:.3g} cells)")
    # ~7 arrays of the box (float and bool) per step; each step passes over the box once per atom,
    # and the box grows linearly from empty to full: about half the final box on average.
    check_budget(what, memory_bytes=_BYTES_PER_CELL * cells, seconds=seconds_for(total * atoms * cells / 2),
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


def _keys(region: PrivacyRegion, levels: np.ndarray, step: float | None
          ) -> tuple[np.ndarray, np.ndarray]:
    """Integer keys and log P-masses of a region's finite atoms.

    Keys are ``±e_j`` per level, or ``round(L/step)`` on a lattice. Every mass is read from an edge with
    ``L >= 0`` (an atom of loss ``-L`` has the P-mass of its mirror's Q-mass): those edges sit near
    ``bI = 0`` where their lengths keep full relative precision.
    """
    L = region.losses
    log_p = np.where(L >= 0, region.log_p, region.log_q[::-1])
    if step is None:
        keys = np.zeros((L.size, levels.size), dtype=np.int64)
        nz = np.flatnonzero(L != 0)
        keys[nz, np.searchsorted(levels, np.abs(L[nz]))] = np.sign(L[nz]).astype(np.int64)
        return keys, log_p
    m = np.rint(L / step)
    bad = np.abs(L / step - m) > STEP_TOL * np.maximum(1.0, np.abs(m))
    if np.any(bad):
        raise ParameterError(f"step={step!r}: the loss {L[bad][0]!r} is not an integer multiple of it")
    return m.astype(np.int64)[:, None], log_p
