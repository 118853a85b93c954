"""The searches of lpdp: the largest count that fits (:func:`largest`), a parameter's boundary to a
relative width (:func:`boundary`), the one bisection of a real bracket (:func:`bisect`, and
:func:`bisect_array` for many brackets at once), and the crossing of a vectorised predicate near a guess
(:func:`crossing_near`).

Every "how many rounds / compositions / releases fit" question in lpdp (the calibrator's counts, the
double-DP ``max_k_within``, the filters' classical baselines) is a monotone predicate on the integers
``k >= 0``: composing more never helps. :func:`largest` finds the last ``k`` where it holds with
``O(log k)`` evaluations, and never evaluates beyond ``cap``.

Examples
--------
>>> from lpdp._search import largest
>>> largest(lambda k: k * k <= 50, 1000)
(7, False)
>>> largest(lambda k: True, 1000)
(1000, True)
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

__all__ = ["largest", "boundary", "bisect", "bisect_array", "crossing_near"]


def bisect(below: Callable[[float], bool], lo: float, hi: float, *, rtol: float = 0.0,
           iterations: int = 10_000) -> tuple[float, float]:
    """Bisection of a real bracket: ``(lo, hi)`` narrowed with ``below(lo)`` true and ``below(hi)`` false
    kept (neither end is evaluated), for a ``below`` that is true up to some point and false after it
    (``lo > hi`` is allowed: ``below`` then holds above the point).

    Each step evaluates ``below`` at ``mid = (lo + hi) / 2`` and keeps the half whose ends disagree. It
    stops when ``mid`` is an end (the ends are adjacent floats), when ``|hi - lo| <= rtol * max(1, |mid|)``
    (checked before evaluating), or after ``iterations`` evaluations. The caller answers with the end on
    its safe side: ``hi`` for "the smallest point that is not below", ``lo`` for the largest that is.

    Examples
    --------
    >>> from lpdp._search import bisect
    >>> lo, hi = bisect(lambda x: x * x < 2.0, 1.0, 2.0)
    >>> lo * lo < 2.0 <= hi * hi, hi - lo == 2.0 ** -52
    (True, True)
    >>> bisect(lambda x: x < 0.3, 0.0, 1.0, iterations=2)
    (0.25, 0.5)
    """
    for _ in range(iterations):
        mid = 0.5 * (lo + hi)
        if mid in (lo, hi) or abs(hi - lo) <= rtol * max(1.0, abs(mid)):
            break
        if below(mid):
            lo = mid
        else:
            hi = mid
    return lo, hi


def bisect_array(below: Callable[[np.ndarray], np.ndarray], lo: np.ndarray, hi: np.ndarray,
                 steps: int) -> np.ndarray:
    """:func:`bisect` of many brackets at once (arrays ``lo``, ``hi``; ``below`` vectorised), ``steps``
    halvings each; the midpoints of the final brackets.

    Examples
    --------
    >>> import numpy as np
    >>> from lpdp._search import bisect_array
    >>> bisect_array(lambda x: x < np.array([0.25, 0.5]), np.zeros(2), np.ones(2), 60).tolist()
    [0.25, 0.5]
    """
    for _ in range(steps):
        mid = 0.5 * (lo + hi)
        left = below(mid)
        lo, hi = np.where(left, mid, lo), np.where(left, hi, mid)
    return 0.5 * (lo + hi)


#: Outward steps of :func:`crossing_near`: ``4^j`` ulps of the guess on each side, ``j < NEAR_STEPS``
#: (up to ~4e-4 relative).
NEAR_STEPS = 23
_LADDER = 4.0 ** np.arange(NEAR_STEPS)
#: Points per round of :func:`crossing_near`'s refinement (each round shrinks the bracket ~65-fold).
NEAR_POINTS = 64


def crossing_near(below: Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]], guess: float
                  ) -> tuple[float, float] | None:
    """Adjacent doubles ``(lo, hi)``, ``lo < hi``, with ``below(lo)`` true and ``below(hi)`` false, found
    near ``guess > 0`` with a few vectorised evaluations; ``None`` when the crossing is not within
    ``4^(NEAR_STEPS - 1)`` ulps of ``guess`` or ``below`` cannot decide a point it needs.

    ``below(x)`` (``x`` a sorted array of doubles >= 0) returns ``(value, known)``, two boolean arrays: the
    predicate (true up to some point, false after it, like :func:`bisect`'s) and where it is decided.
    One evaluation tries ``guess ± 4^j`` ulps (clipped at 0); the first false point after a true one
    gives a bracket, which rounds of :data:`NEAR_POINTS` interior points narrow to adjacent doubles. The
    answer is :func:`bisect`'s on ``[0, ∞)`` wherever ``below`` is monotone (on a non-monotone one,
    both are some true/false pair of adjacent doubles); when the smallest point tried is 0 and is not
    below, the answer is ``(0.0, 0.0)``.

    Examples
    --------
    >>> import numpy as np
    >>> from lpdp._search import crossing_near
    >>> lo, hi = crossing_near(lambda x: (x * x < 2.0, np.ones(x.shape, dtype=bool)), 1.4142)
    >>> lo * lo < 2.0 <= hi * hi, hi - lo == 2.0 ** -52
    (True, True)
    """
    if not (guess > 0 and math.isfinite(guess)):
        return None
    offsets = _LADDER * math.ulp(guess)
    # sorted (equal neighbours, where a small step rounds to the same double, do not matter: they share
    # the predicate's value)
    x = np.maximum(np.concatenate([guess - offsets[::-1], [guess], guess + offsets]), 0.0)
    for _ in range(10_000):
        value, known = below(x)
        first = int(np.argmin(value))            # the first false point (0 when every point is true)
        if value[first] or not np.all(known[max(first - 1, 0):first + 1]):
            return None
        if first == 0:
            return (0.0, 0.0) if x[0] == 0.0 else None
        lo, hi = float(x[first - 1]), float(x[first])
        if math.nextafter(lo, math.inf) == hi:
            return lo, hi
        x = np.unique(np.linspace(lo, hi, NEAR_POINTS + 2)[1:-1])
        x = x[(x > lo) & (x < hi)]
        x = np.concatenate([[lo], x, [hi]])
    return None


def largest(feasible: Callable[[int], bool], cap: int, *, start: int = 0,
            score: Callable[[int], float] | None = None) -> tuple[int, bool]:
    """The largest ``k`` in ``[start, cap]`` with ``feasible(k)``, and whether it is ``cap``.

    ``feasible`` must be monotone (true up to some ``k``, false after); it is taken to hold at ``start``
    (not evaluated there), so the answer is ``start`` when ``feasible(start + 1)`` fails. Evaluations:
    ``start + 1, start + 2, start + 4, ...`` until one fails or ``cap`` is passed, then a bisection with the
    invariant "the lower end fits, the upper end does not"; each ``k`` is evaluated at most once.

    ``score``, optional, is a float that grows with ``k`` and crosses 0 where feasibility ends (e.g.
    ``log δ_k(ε) - log δ``); it only places the probes (while growing, a secant through the last two
    points aimed a little past the crossing, at most doubling; then regula falsi with the Illinois rule,
    Dowell and Jarratt 1971, falling back to bisection), never decides feasibility, so a poor score costs
    evaluations, not correctness.

    Examples
    --------
    >>> from lpdp._search import largest
    >>> largest(lambda k: k <= 12, 100, start=3)
    (12, False)
    >>> largest(lambda k: k <= 0, 100)
    (0, False)
    >>> seen = []
    >>> largest(lambda k: seen.append(k) or k * k <= 5000, 10**6, score=lambda k: k * k - 5000.0)[0]
    70
    >>> len(seen) < 20
    True
    """
    if cap <= start:
        return start, True
    lo, prev = start, None
    hi = start + 1
    while feasible(hi):
        prev, lo = lo, hi
        if hi == cap:
            return cap, True
        hi = min(start + 2 * (hi - start), cap)
        if score is not None and prev > start:     # secant through the last two: aim a little past it
            f_prev, f_lo = score(prev), score(lo)
            if math.isfinite(f_prev) and math.isfinite(f_lo) and f_prev < f_lo < 0:
                cross = lo + (lo - prev) * (-f_lo) / (f_lo - f_prev)
                hi = min(hi, max(lo + 1, math.ceil(cross + 0.1 * (cross - lo)) + 1))
    weights = [1.0, 1.0]         # Illinois: halve the weight of an end kept twice in a row
    last_side = 0
    while hi - lo > 1:                     # invariant: lo fits (or is start), hi does not
        mid = (lo + hi) // 2
        if score is not None and lo > start:
            f_lo, f_hi = score(lo) * weights[0], score(hi) * weights[1]
            if math.isfinite(f_lo) and math.isfinite(f_hi) and f_lo < 0 < f_hi:
                guess = lo + (hi - lo) * (-f_lo) / (f_hi - f_lo)
                mid = min(max(round(guess), lo + 1), hi - 1)
        if feasible(mid):
            lo = mid
            weights[1] = weights[1] / 2 if last_side == -1 else 1.0
            weights[0], last_side = 1.0, -1
        else:
            hi = mid
            weights[0] = weights[0] / 2 if last_side == 1 else 1.0
            weights[1], last_side = 1.0, 1
    return lo, False


def boundary(inside: Callable[[float], bool], outside_end: float, inside_end: float, rtol: float, *,
             score: Callable[[float], float] | None = None) -> tuple[float, float]:
    """Narrow a bracket of a positive parameter to relative width ``rtol``: ``(outside, inside)`` ends.

    ``inside(v)`` must be false at ``outside_end`` and true at ``inside_end`` (either may be the larger);
    the answer keeps that invariant with ``|log(inside / outside)| <= log1p(rtol)``, every end evaluated.
    Steps are in ``log v``: bisection, or, with ``score`` (a float, negative inside and positive outside,
    e.g. ``log δ(v) - log δ``), regula falsi with the Illinois rule, each probe kept ``rtol / 2`` inside the
    bracket so that one probe can close it. ``score`` only places probes; ``inside`` decides.

    Examples
    --------
    >>> from lpdp._search import boundary
    >>> out, ins = boundary(lambda v: v >= 3.0, 1.0, 100.0, 1e-6, score=lambda v: 3.0 - v)
    >>> out < 3.0 <= ins and ins / out - 1 <= 1e-6
    True
    """
    va, vb = outside_end, inside_end
    xa, xb = math.log(va), math.log(vb)
    tol = math.log1p(rtol)
    fa = score(va) if score is not None else math.nan
    fb = score(vb) if score is not None else math.nan
    last = 0
    while abs(xb - xa) > tol:
        x = 0.5 * (xa + xb)
        if math.isfinite(fa) and math.isfinite(fb) and fa > 0 > fb:
            x = xa + (xb - xa) * fa / (fa - fb)
            low, high = min(xa, xb) + tol / 2, max(xa, xb) - tol / 2
            x = min(max(x, low), high)
        v = math.exp(x)
        if v in (va, vb):
            break
        if inside(v):
            xb, vb, fb = x, v, (score(v) if score is not None else math.nan)
            if last == 1:
                fa /= 2
            last = 1
        else:
            xa, va, fa = x, v, (score(v) if score is not None else math.nan)
            if last == -1:
                fb /= 2
            last = -1
    return va, vb
