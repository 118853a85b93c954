"""Speed of the privacy filters against the targets of issues 5 and 6.

Run: ``.venv/bin/python benchmarks/bench_filter.py``. Prints each target and the measured number.
"""

from __future__ import annotations

import statistics
import time

import numpy as np

from lpdp.filters import GaussianMechanism, RealisationFilter, audit, optimal_parameters


def _row(what: str, target: str, measured: str) -> None:
    print(f"{what:<52} target {target:<12} measured {measured}")


def bench_ask() -> None:
    """Median time of one ``ask`` (closed-form Gaussian, two neighbouring pairs = 4 ordered pairs)."""
    n = 10_000
    p = optimal_parameters(1e-3, n)
    g = GaussianMechanism(2.0)
    f = RealisationFilter(1e9, 1e-3, n, p.delta_tilde, p.theta, pairs=[(1, 0), (2, 1)])
    ys = np.random.default_rng(0).normal(1.0, 2.0, n).tolist()
    times = []
    t0 = time.perf_counter()
    for y in ys:
        a = time.perf_counter()
        f.ask(g)
        times.append(time.perf_counter() - a)
        f.record(y)
    total = time.perf_counter() - t0
    _row("ask, median (Gaussian, 2 pairs)", "< 20 us", f"{statistics.median(times) * 1e6:.1f} us")
    _row("10^4 steps ask + record (O(1) per step)", "<< 1 s", f"{total:.3f} s")
    # A filter that recomputes every pair's loss from the transcript at each step costs O(i) per step.
    arr = np.array(ys)
    t0 = time.perf_counter()
    for i in range(1, n + 1):
        hist = arr[:i]
        for v, w in ((1.0, 0.0), (2.0, 1.0)):
            float(np.sum(g.log_density(hist, v) - g.log_density(hist, w)))
    _row("10^4 steps, recomputing losses from the transcript", "(quadratic)",
         f"{time.perf_counter() - t0:.3f} s")


def bench_audit() -> None:
    """Exact audit (quadrature) of the paper's Gaussian setting, N = 48."""
    p = optimal_parameters(1e-3, 48)
    f = RealisationFilter(6.0, 1e-3, 48, p.delta_tilde, p.theta)
    g = GaussianMechanism(2.0)
    audit(f, g)  # warm-up
    t0 = time.perf_counter()
    r = audit(f, g)
    _row("exact audit, Gaussian, N = 48", "< 2 s", f"{time.perf_counter() - t0:.3f} s "
         f"(tail {r.tail:.3g}, hockey stick {r.hockey_stick_delta:.3g})")


if __name__ == "__main__":
    bench_ask()
    bench_audit()
