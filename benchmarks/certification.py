"""The cost of certification on an exact route: certified answers against the route's nominal ones.

For a route ``build() -> PrivacyRegion`` and a set of ε, the certified path is what the public API does,
``build().delta(eps)`` (outward-rounded δ with the route's floating-point bound); the uncertified variant
is the same region's nominal prefix face, ``build().support(eps)`` (the pre-certification evaluation),
with the time of the route's bound construction taken out of its build when the route has a separate one
(``bound``, e.g. Kairouz's 40-digit measurement of the rounded means). Both run alternately in batches
(each at least ~20 ms) ``repeats`` times in one process, and each keeps its fastest batch (on a shared
machine the minimum is the least disturbed measurement; medians of single runs of a few ms moved by 3x
between runs); the cost is certified / uncertified - 1.

Used by bench_homogeneous.py, bench_double_dp.py and bench_accountant.py (target: at most 10%).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

import numpy as np


def _time(fn: Callable[[], object]) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def certification_cost(build: Callable[[], object], eps: Sequence[float], *, repeats: int = 7,
                       bound: Callable[[], object] | None = None) -> tuple[float, float, float]:
    """``(certified s, uncertified s, cost)`` of one route at the given ε (see the module docstring)."""
    e = np.asarray(eps, dtype=float)
    number = max(1, int(0.02 / max(_time(lambda: build().delta(e)), 1e-6)))   # warm-up, batch size

    def batch(fn: Callable[[], object]) -> float:
        return _time(lambda: [fn() for _ in range(number)]) / number

    cert, plain, extra = [], [], []
    for _ in range(repeats):
        cert.append(batch(lambda: build().delta(e)))
        plain.append(batch(lambda: build().support(e)))
        if bound is not None:
            extra.append(batch(bound))
    c = min(cert)
    p = min(plain) - (min(extra) if extra else 0.0)
    return c, p, c / p - 1.0


def print_costs(cases: Sequence[tuple[str, Callable[[], object], Callable[[], object] | None]],
                eps: Sequence[float]) -> float:
    """Print one line per ``(name, build, bound)`` case; returns the worst cost."""
    print(f"{'certification cost':<24}{'certified s':>12}{'uncertified s':>15}{'cost':>8}")
    worst = -1.0
    for name, build, bound in cases:
        c, p, cost = certification_cost(build, eps, bound=bound)
        worst = max(worst, cost)
        print(f"{name:<24}{c:>12.4f}{p:>15.4f}{cost:>8.1%}")
    print(f"worst certification cost: {worst:.1%} (target <= 10%)")
    return worst
