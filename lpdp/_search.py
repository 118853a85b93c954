"""The one search for the largest count that fits: exponential steps, then bisection.

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

from collections.abc import Callable

__all__ = ["largest"]


def largest(feasible: Callable[[int], bool], cap: int, *, start: int = 0) -> tuple[int, bool]:
    """The largest ``k`` in ``[start, cap]`` with ``feasible(k)``, and whether it is ``cap``.

    ``feasible`` must be monotone (true up to some ``k``, false after); it is taken to hold at ``start``
    (not evaluated there), so the answer is ``start`` when ``feasible(start + 1)`` fails. Evaluations:
    ``start + 1, start + 2, start + 4, ...`` until one fails or ``cap`` is passed, then a bisection with the
    invariant "the lower end fits, the upper end does not"; each ``k`` is evaluated at most once.

    Examples
    --------
    >>> from lpdp._search import largest
    >>> largest(lambda k: k <= 12, 100, start=3)
    (12, False)
    >>> largest(lambda k: k <= 0, 100)
    (0, False)
    """
    if cap <= start:
        return start, True
    lo, step = start, 1
    hi = start + 1
    while feasible(hi):
        lo = hi
        if hi == cap:
            return cap, True
        step *= 2
        hi = min(start + step, cap)
    while hi - lo > 1:                     # invariant: lo fits (or is start), hi does not
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if feasible(mid) else (lo, mid)
    return lo, False
