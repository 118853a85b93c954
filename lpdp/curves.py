"""Curves of a :class:`~lpdp.accountant.Guarantee`: the privacy profile δ(ε), the trade-off curve β(α),
the true-positive rate of a membership test at given false-positive rates, and ε against the count.

The curves of one guarantee (:class:`Curve`, :func:`profile`, :func:`tradeoff`, :func:`tpr`; how each side
is obtained is in :mod:`lpdp.sides`, where they are defined next to the sides themselves, so that a
:class:`~lpdp.accountant.Guarantee` can draw itself) are re-exported here; :func:`budget` composes the
workload again for each count through the router.

Examples
--------
>>> from lpdp.curves import budget, tradeoff
>>> from lpdp.accountant import route
>>> from lpdp.mechanisms import pure
>>> [round(float(b), 6) for b in tradeoff(route([(pure(1.0), 1)]), [0.1]).lower]
[0.728172]
>>> [round(float(e), 4) for e in budget([(pure(0.5), 1)], 1e-6, [1, 4]).upper]
[0.5, 2.0]
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from lpdp._validate import check_delta, check_int, renamed
from lpdp.accountant import route
from lpdp.errors import ParameterError
from lpdp.sides import (
    DELTA_MIN,
    FIGURE_FPRS,
    FPRS,
    GUARANTEE_KINDS,
    Curve,
    of_guarantee,
    profile,
    profile_range,
    tpr,
    tradeoff,
)

__all__ = ["Curve", "profile", "profile_range", "tradeoff", "tpr", "budget", "counts_up_to", "of", "KINDS",
           "DELTA_MIN", "FPRS", "FIGURE_FPRS"]


# ---------------------------------------------------------------------------------------------- budget
@renamed(counts="times")
def budget(parts: Sequence[tuple[Any, int]], delta: float, times: Sequence[int] | np.ndarray) -> Curve:
    """ε at ``delta`` (both sides) when the whole workload ``parts`` runs ``t`` times, for each ``t`` of
    ``times``.

    Examples
    --------
    >>> from lpdp.mechanisms import DPMechanism
    >>> c = budget([(DPMechanism([(0.1, 1e-7)]), 1)], 1e-4, [1, 10, 100])
    >>> [round(float(e), 4) for e in c.upper]
    [0.0998, 0.9357, 3.7757]
    """
    delta = check_delta(delta, "delta")
    n = np.array([check_int(c, f"times[{i}]", 1) for i, c in enumerate(times)], dtype=int)
    if n.size == 0:
        raise ParameterError("times=[]: give at least one count")
    lo, hi = np.empty(n.size), np.empty(n.size)
    exact = True
    for i, c in enumerate(n):
        g = route([(m, int(k) * int(c)) for m, k in parts])
        lo[i], hi[i] = (float(v) for v in g.epsilon(delta))
        exact = exact and g.exact
    return Curve("budget", "count", "epsilon", n.astype(float), lo, hi, exact, {"delta": delta})


@renamed(n="times")
def counts_up_to(times: int, points: int = 12) -> list[int]:
    """About ``points`` counts from 1 to ``times``, evenly on a log scale (each once).

    Examples
    --------
    >>> counts_up_to(100, 5)
    [1, 3, 10, 32, 100]
    """
    top = check_int(times, "times", 1)
    return sorted({int(round(v)) for v in np.geomspace(1, top, check_int(points, "points", 1))})


#: The curves :func:`of` draws, by name.
KINDS = (*GUARANTEE_KINDS, "budget")


@renamed(count="times")
def of(kind: str, guarantee: Any, parts: Sequence[tuple[Any, int]] = (), *,
       epsilon_range: tuple[float, float] | None = None, fpr: Sequence[float] | None = None,
       delta: float = 1e-6, times: int = 100) -> Curve:
    """One curve by name (what ``lpdp account --curve KIND`` computes): ``"profile"`` over
    ``epsilon_range`` (default automatic), ``"tradeoff"`` on [0, 1], ``"tpr"`` at ``fpr`` (default
    :data:`FIGURE_FPRS`), ``"budget"``: ε at ``delta`` when ``parts`` run 1 to ``times`` times.

    Examples
    --------
    >>> from lpdp.accountant import route
    >>> from lpdp.mechanisms import pure
    >>> parts = [(pure(0.5), 2)]
    >>> [round(e, 4) for e in of("budget", route(parts), parts, times=4).upper.tolist()]
    [1.0, 2.0, 3.0, 4.0]
    """
    if kind == "budget":
        return budget(parts, delta, counts_up_to(times))
    if kind not in GUARANTEE_KINDS:
        raise ParameterError(f"kind={kind!r}: must be one of {', '.join(KINDS)}")
    return of_guarantee(kind, guarantee, epsilon_range=epsilon_range, fpr=fpr)
