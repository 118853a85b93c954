"""Exact composition engine on an integer lattice (docs/fdp.md, design.md "Composition").

Each mechanism is a finite measure on integer key vectors in ``Z^D`` (its P-masses, in log space); the
composition of independent mechanisms is the convolution of these measures. The engine keeps a dense
log-mass array over the reachable box and adds one mechanism at a time.

Per step it takes the fast linear route: ``exp`` of the array shifted by its maximum, the sparse shifts
added with their weights (sums of non-negative terms: no cancellation, relative error ~1e-16 per step),
``log`` back. Entries this cannot resolve (below ``_DEEP`` relative to the reference, where ``exp``
underflows) get the same pass with the reference moved down by 575 nats, level after level, while they are
many; the rest (or whatever is left after ``_LEVELS`` levels) is recomputed with ``logaddexp`` over its
sources. So masses far below 1e-308
keep full relative precision. Cost per mechanism: ``O(atoms × box × levels)``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from lpdp._numerics import UNIT_ROUNDOFF, ErrorBound, round_up

__all__ = ["convolve", "log_convolve", "log_power", "convolve_error", "log_convolve_error"]

#: A linear-route result below this (relative to its reference) is not trusted: go one level deeper.
_DEEP = 1e-250
#: Each level moves the reference down by ``-log(_DEEP)`` nats.
_SPAN = 575.0
#: Levels of the scaled linear route (about 9000 nats) before the exact ``logaddexp`` fallback.
_LEVELS = 16
#: A pending entry recomputed by ``logaddexp`` costs about this many cells of a linear pass.
_GATHER_COST = 20
#: Deeper levels need every atom weight above ``e^-690`` (their proof of no lost terms uses it).
_LOG_WEIGHT_FLOOR = -690.0


def convolve(steps: Sequence[tuple[np.ndarray, np.ndarray]]) -> tuple[np.ndarray, np.ndarray]:
    """Convolution of finite measures on ``Z^D`` given as ``(keys (m, D) int, log_mass (m,))`` pairs.

    Returns the reachable keys ``(N, D)`` and their log masses (``-inf`` never appears among them unless
    an input mass is zero). The caller checks the box against the budget first (:mod:`lpdp._limits`).
    """
    dim = steps[0][0].shape[1]
    steps = [(np.asarray(keys, dtype=np.int64).reshape(-1, dim), np.asarray(lw, dtype=float))
             for keys, lw in steps]
    # Three scratch arrays of the final box, reused by every pass: temporaries allocated per pass (a few
    # MB each on a large box) were mapped and unmapped by malloc over and over (1.2 million page faults,
    # ~10% of the time, for 8 constraints at k = 300).
    box = 1 + sum((k.max(axis=0) - k.min(axis=0) for k, _ in steps), np.zeros(dim, dtype=np.int64))
    work = tuple(np.empty(int(np.prod(box))) for _ in range(3))
    lo = np.zeros(dim, dtype=np.int64)
    cur = np.zeros((1,) * dim)          # log mass 0 at the origin: the empty composition
    reach = np.ones((1,) * dim, dtype=bool)
    for keys, lw in steps:
        new_lo = lo + keys.min(axis=0)
        shape = tuple(int(s) for s in np.array(cur.shape) + keys.max(axis=0) - keys.min(axis=0))
        slices = [tuple(slice(int(o), int(o) + n) for o, n in zip(lo + k - new_lo, cur.shape, strict=True))
                  for k in keys]
        new_reach = np.zeros(shape, dtype=bool)
        for sl in slices:
            new_reach[sl] |= reach
        new = np.full(shape, -np.inf)
        pending = new_reach
        top = float(math.ceil(np.max(cur[reach])))   # an integer reference: cur - ref is exact
        levels = _LEVELS if np.min(lw) >= _LOG_WEIGHT_FLOOR else 1
        for level in range(levels):
            pending = _linear_level(cur, lw, slices, shape, top, top - _SPAN * level, new, pending, work)
            if np.count_nonzero(pending) * _GATHER_COST < new.size:   # few left: cheaper one by one
                break
        if np.any(pending):
            _exact_entries(cur, lw, slices, new, pending)
        cur, reach, lo = new, new_reach, new_lo
    del work                            # before the keys are listed: the peak stays that of one pass
    idx = np.nonzero(reach)
    return np.column_stack(idx).astype(np.int64) + lo, cur[idx]


def _linear_level(cur: np.ndarray, lw: np.ndarray, slices: list[tuple[slice, ...]], shape: tuple[int, ...],
                  top: float, ref: float, new: np.ndarray, pending: np.ndarray,
                  work: tuple[np.ndarray, ...]) -> np.ndarray:
    """One scaled linear pass: ``Σ_j w_j e^{cur - ref}`` shifted; fill ``new`` where it is resolved.

    Sources more than 700 nats above ``ref`` are left out (``exp`` would overflow); there are none while
    ``ref`` is within 700 nats of ``top``, the largest source. Every target they feed was resolved at an
    earlier level: with ``log w >= -690`` such a term is above ``e^{125 - 690}`` ``> _DEEP`` relative to
    the previous reference (level 0 leaves nothing out). A result ``>= _DEEP`` loses only terms below
    ``e^-745``, i.e. nothing at double precision. Returns the targets still pending. ``work`` holds three
    scratch arrays of at least the target's size.
    """
    ex = np.subtract(cur, ref, out=work[0][:cur.size].reshape(cur.shape))
    with np.errstate(under="ignore"):
        if top - ref <= 700.0:
            np.exp(ex, out=ex)
        else:
            cut = ~(ex <= 700.0)
            np.exp(np.minimum(ex, 700.0, out=ex), out=ex)
            ex[cut] = 0.0
        acc = work[1][:new.size].reshape(shape)
        acc.fill(0.0)
        term = work[2][:cur.size].reshape(cur.shape)
        for sl, w in zip(slices, np.exp(lw), strict=True):
            acc[sl] += np.multiply(ex, w, out=term)
    done = pending & (acc >= _DEEP)
    new[done] = np.log(acc[done]) + ref
    return pending & ~done


def _exact_entries(cur: np.ndarray, lw: np.ndarray, slices: list[tuple[slice, ...]], new: np.ndarray,
                   pending: np.ndarray) -> None:
    """``logaddexp`` over the sources of each pending entry (exact at any depth; slow per entry)."""
    idx = np.nonzero(pending)
    exact = np.full(idx[0].size, -np.inf)
    for sl, w in zip(slices, lw, strict=True):
        src = [i - s.start for i, s in zip(idx, sl, strict=True)]
        ok = np.all([(s >= 0) & (s < n) for s, n in zip(src, cur.shape, strict=True)], axis=0)
        vals = np.full(idx[0].size, -np.inf)
        vals[ok] = cur[tuple(s[ok] for s in src)] + w
        exact = np.logaddexp(exact, vals)
    new[idx] = exact


#: Masses below ``2^-1517`` (about 1e-457) are dropped by default by the 1-D routes (an absolute error
#: below that per cell and product: nothing a δ above 1e-300 can see).
LOG_FLOOR = -1517 * math.log(2.0)
#: Width in nats of a magnitude slab: products of two slab members stay above ``e^-680`` (never subnormal).
_SLAB = 340.0


def _runs(log_a: np.ndarray, floor: float) -> list[tuple[int, np.ndarray, float]]:
    """Split ``e^log_a`` into index runs whose entries lie within one slab of ``_SLAB`` nats.

    Returns ``(start, values / scale, log scale)`` per run, with values in ``[e^-_SLAB, 1]`` or 0 (zero
    or dropped entries do not break a run).
    """
    keep = (log_a >= floor) & (log_a > -np.inf)
    if not keep.any():
        return []
    idx = np.flatnonzero(keep)
    kept = log_a[idx]
    top = float(kept.max())
    if top - float(kept.min()) < _SLAB:      # one slab (the common case): one run, no slab indices
        cuts = np.empty(0, dtype=np.int64)
    else:
        cuts = np.flatnonzero(np.diff(((top - kept) // _SLAB).astype(np.int64))) + 1
    runs = []
    for first, last in zip(np.concatenate(([0], cuts)), np.concatenate((cuts, [idx.size])), strict=True):
        lo, hi = int(idx[first]), int(idx[last - 1]) + 1
        seg = log_a[lo:hi]
        scale = float(math.ceil(seg.max()))     # an integer: seg - scale is exact (|seg| < 2^52)
        with np.errstate(under="ignore"):
            vals = np.where(seg >= floor, np.exp(seg - scale), 0.0)
        runs.append((lo, vals, scale))
    return runs


def log_convolve(log_a: np.ndarray, log_b: np.ndarray, floor: float = LOG_FLOOR,
                 errors: list[ErrorBound] | None = None) -> np.ndarray:
    """``log(e^log_a * e^log_b)``: the exact convolution of two non-negative 1-D arrays in log space.

    Each array is cut into runs of one magnitude slab (:func:`_runs`); every pair of runs is convolved in
    scaled linear arithmetic (``np.convolve``: sums of positive terms, no cancellation, relative error at
    most ``n u`` per entry, none subnormal) and the pairs are added with ``logaddexp``. Entries below
    ``floor`` (default ``2^-1517``; ``-inf`` keeps every mass, at one more run per 340 nats of depth) are
    dropped. Cost: one full-length direct convolution plus one short one per pair of runs.

    With ``errors`` given, the call's own floating-point bound (:func:`log_convolve_error`, with the
    actual number of run pairs) is appended to it.
    """
    out = np.full(log_a.size + log_b.size - 1, -np.inf)
    runs_b = _runs(log_b, floor)
    runs_a = runs_b if log_a is log_b else _runs(log_a, floor)     # a squaring splits its array once
    if errors is not None:
        errors.append(log_convolve_error(log_a.size, log_b.size, floor, len(runs_a) * len(runs_b)))
    first = True
    for start_a, va, sa in runs_a:
        for start_b, vb, sb in runs_b:
            if sa + sb < floor:
                continue
            with np.errstate(divide="ignore"):
                part = np.log(np.convolve(va, vb)) + (sa + sb)
            seg = slice(start_a + start_b, start_a + start_b + part.size)
            # the first pair lands on -inf entries only: logaddexp(-inf, x) is x
            out[seg] = part if first else np.logaddexp(out[seg], part)
            first = False
    out[out < floor] = -np.inf
    return out


def log_power(log_base: np.ndarray, k: int, errors: list[ErrorBound] | None = None) -> np.ndarray:
    """``k``-fold convolution power of ``e^log_base`` by squaring (:func:`log_convolve`, exact).

    Relative error per entry at most about ``2 k (n u)`` in the worst case (every level of squaring
    doubles the relative error it inherits); in practice ~1e-13 at k = 10^4. With ``errors`` given, the
    bound of the power of an exact base (:meth:`ErrorBound.times` of the squarings and each
    :func:`log_convolve`'s own) is appended to it.
    """
    own: list[ErrorBound] | None = [] if errors is not None else None
    err_result: ErrorBound | None = None
    err_square = ErrorBound()
    result: np.ndarray | None = None
    square = log_base
    while True:
        if k & 1:
            if result is None:
                result, err_result = square, err_square
            else:
                # an entry sums at most min(len) products: their mean depth is at most log of that
                terms = min(result.size, square.size)
                result = log_convolve(result, square, errors=own)
                if own is not None:
                    err_result = err_result.times(err_square, terms=terms).times(own.pop(), terms=1)
        k >>= 1
        if not k:
            break
        terms = square.size
        square = log_convolve(square, square, errors=own)
        if own is not None:
            err_square = err_square.times(err_square, terms=terms).times(own.pop(), terms=1)
    assert result is not None
    if errors is not None:
        errors.append(err_result)
    return result


def convolve_error(steps: int, atoms: int, cells: float) -> ErrorBound:
    """Floating-point error of :func:`convolve` over ``steps`` mechanisms of up to ``atoms`` atoms on a
    box of ``cells`` cells, for exact input masses (compose the inputs' own bounds with
    :meth:`ErrorBound.times`).

    Per step, a target's mass is a sum of at most ``atoms`` positive terms ``w e^{c - ref}``: the
    reference is an integer, so ``c - ref`` is exact; ``exp``, the weight's ``exp``, the product and the
    sum add ``(atoms + 6) u``; the ``log`` stores the result to ``u (|ℓ| + 1)`` and adding the reference
    back rounds once more. The deeper levels (references moved by an integer) and the ``logaddexp``
    fallback are no worse. So each step adds ``2 u`` per nat and ``u (atoms + 8)``.
    """
    u = UNIT_ROUNDOFF
    per_step = u * (atoms + 8)   # (``cells`` no longer enters: the references are integers)
    return ErrorBound(mass=round_up(steps * per_step), per_nat=round_up(2 * u * steps))


def log_convolve_error(len_a: int, len_b: int, floor: float = LOG_FLOOR, pairs: int = 1) -> ErrorBound:
    """Floating-point error of one :func:`log_convolve` of exact inputs with ``pairs`` pairs of runs.

    Each factor is ``e^{x - scale}`` with an integer scale, so ``x - scale`` is exact and ``exp`` adds
    one ulp (``2 u``); a direct convolution sums at most ``min(len)`` products (``min(len) u``); the log
    and the scale add ``u (|ℓ| + 2)`` and the ``logaddexp`` of the run pairs ``2 u`` per pair. Entries
    below ``floor`` are
    left out: at most ``len_a + len_b + len_out`` of them, each below ``e^floor``, recorded as dropped
    mass (at a loss the caller bounds).
    """
    u = UNIT_ROUNDOFF
    err = ErrorBound(mass=round_up(u * (min(len_a, len_b) + 2 * pairs + 16)),
                     per_nat=round_up(2 * u))
    if floor > -math.inf:
        err = err.with_dropped(floor + math.log(2.0 * (len_a + len_b)), math.inf)
    return err
