"""Exact composition engine on an integer lattice (spec composition.md §7, design.md "Composition").

Each mechanism is a finite measure on integer key vectors in ``Z^D`` (its P-masses, in log space); the
composition of independent mechanisms is the convolution of these measures. The engine keeps a dense
log-mass array over the reachable box and adds one mechanism at a time.

Per step it takes the fast linear route: ``exp`` of the array shifted by its maximum, the sparse shifts
added with their weights (sums of non-negative terms: no cancellation, relative error ~1e-16 per step),
``log`` back. Entries that this route cannot resolve (below ``_DEEP`` relative to the maximum, where
``exp`` underflows) are recomputed exactly with ``logaddexp`` over their sources, so masses far below
1e-308 keep full relative precision. Cost per mechanism: ``O(atoms × box)``.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

__all__ = ["convolve"]

#: Linear-route results below this (relative to the array's maximum) are recomputed in log space.
_DEEP = 1e-250
#: Refuse boxes larger than this many cells (memory ~ 17 bytes per cell).
MAX_CELLS = 60_000_000


def convolve(steps: Sequence[tuple[np.ndarray, np.ndarray]]) -> tuple[np.ndarray, np.ndarray]:
    """Convolution of finite measures on ``Z^D`` given as ``(keys (m, D) int, log_mass (m,))`` pairs.

    Returns the reachable keys ``(N, D)`` and their log masses (``-inf`` never appears among them unless
    an input mass is zero).
    """
    dim = steps[0][0].shape[1]
    span = 1 + sum(np.ptp(np.asarray(k).reshape(-1, dim), axis=0) for k, _ in steps)
    if np.prod(span, dtype=float) > MAX_CELLS:
        raise MemoryError(f"lattice box {tuple(int(s) for s in span)} exceeds {MAX_CELLS} cells")
    lo = np.zeros(dim, dtype=np.int64)
    cur = np.zeros((1,) * dim)          # log mass 0 at the origin: the empty composition
    reach = np.ones((1,) * dim, dtype=bool)
    for keys, lw in steps:
        keys = np.asarray(keys, dtype=np.int64).reshape(-1, dim)
        lw = np.asarray(lw, dtype=float)
        new_lo = lo + keys.min(axis=0)
        shape = tuple(int(s) for s in np.array(cur.shape) + keys.max(axis=0) - keys.min(axis=0))
        offsets = [tuple(int(o) for o in lo + k - new_lo) for k in keys]
        top = float(np.max(cur[reach]))
        ex = np.exp(cur - top)
        acc = np.zeros(shape)
        new_reach = np.zeros(shape, dtype=bool)
        for off, w in zip(offsets, np.exp(lw), strict=True):
            sl = tuple(slice(o, o + n) for o, n in zip(off, cur.shape, strict=True))
            acc[sl] += w * ex
            new_reach[sl] |= reach
        with np.errstate(divide="ignore"):
            new = np.log(acc) + top
        deep = new_reach & (acc < _DEEP)
        if np.any(deep):
            idx = np.nonzero(deep)
            exact = np.full(idx[0].size, -np.inf)
            for off, w in zip(offsets, lw, strict=True):
                src = [i - o for i, o in zip(idx, off, strict=True)]
                ok = np.all([(s >= 0) & (s < n) for s, n in zip(src, cur.shape, strict=True)], axis=0)
                vals = np.full(idx[0].size, -np.inf)
                vals[ok] = cur[tuple(s[ok] for s in src)] + w
                exact = np.logaddexp(exact, vals)
            new[idx] = exact
        new[~new_reach] = -np.inf
        cur, reach, lo = new, new_reach, new_lo
    idx = np.nonzero(reach)
    return np.column_stack(idx).astype(np.int64) + lo, cur[idx]
