"""Speed of the privacy filters against the targets of issues 5 and 6.

Run: ``.venv/bin/python benchmarks/bench_filter.py``. Prints each target and the measured number.
"""

from __future__ import annotations

import statistics
import time

import numpy as np

from lpdp.filters import (
    GaussianMechanism,
    RealisationFilter,
    audit,
    comparison,
    optimal_parameters,
    survival,
)


def _row(what: str, target: str, measured: str) -> None:
    print(f"{what:<58} target {target:<10} measured {measured}")


def bench_ask() -> None:
    """Median time of one ``ask`` (closed-form Gaussian, two neighbouring pairs = 4 ordered pairs)."""
    n = 10_000
    p = optimal_parameters(1e-3, n)
    g = GaussianMechanism(2.0)
    f = RealisationFilter(1e9, 1e-3, n, p.delta_tilde, p.theta, pairs=[(1, 0), (2, 1)])
    ys = np.random.default_rng(0).normal(1.0, 2.0, n).tolist()
    times, steps = [], []
    t0 = time.perf_counter()
    for y in ys:
        a = time.perf_counter()
        f.ask(g)
        times.append(time.perf_counter() - a)
        f.record(y)
        steps.append(time.perf_counter() - a)
    total = time.perf_counter() - t0
    _row("ask, median (Gaussian, 2 pairs)", "< 20 us", f"{statistics.median(times) * 1e6:.1f} us")
    _row("10^4 steps ask + record", "<< 1 s", f"{total:.3f} s; median step "
         f"{statistics.median(steps[:1000]) * 1e6:.1f} us (first 1000) vs "
         f"{statistics.median(steps[-1000:]) * 1e6:.1f} us (last 1000)")
    # A filter that recomputes every pair's loss from the transcript at each step costs O(i) per step.
    arr = np.array(ys)
    t0 = time.perf_counter()
    for i in range(1, n + 1):
        hist = arr[:i]
        for v, w in ((1.0, 0.0), (2.0, 1.0)):
            float(np.sum(g.log_density(hist, v) - g.log_density(hist, w)))
    quad = time.perf_counter() - t0
    _row("10^4 steps, recomputing losses from the transcript", "(quadratic)",
         f"{quad:.3f} s, {quad / total:.1f}x; the ratio grows linearly with the number of steps")


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


def bench_laplace_audit() -> None:
    """Exact audit of the realisation-level filter on Laplace rounds (b = 2, ε = 6, δ = 1e-3) beside the
    Monte Carlo audit it replaces (10^5 trajectories), N = 30 and 100."""
    from lpdp.filters import build_filter
    from lpdp.mechanisms import LaplaceMechanism

    lap = LaplaceMechanism(2.0)
    for n in (30, 100):
        f = build_filter("realisation", lap, 6.0, 1e-3, n, [(1.0, 0.0)])
        audit(f, lap)  # warm-up
        t0 = time.perf_counter()
        r = audit(f, lap)
        exact = time.perf_counter() - t0
        t0 = time.perf_counter()
        mc = audit(f, lap, method="monte-carlo", trajectories=10**5, seed=1)
        slow = time.perf_counter() - t0
        _row(f"exact audit, Laplace, N = {n} (vs Monte Carlo 10^5)", "< 1 s",
             f"{exact:.3f} s vs {slow:.3f} s ({slow / exact:.0f}x); E[T] {r.expected_T:.4f} vs "
             f"{mc.expected_T:.4f}")


def bench_survival() -> None:
    """Monte Carlo of 10^6 trajectories (worst case: nobody stops before N = 48) and the quadrature
    survival curve of the paper's setting."""
    p = optimal_parameters(1e-3, 48)
    g = GaussianMechanism(2.0)
    for eps in (6.0, 1e3):
        f = RealisationFilter(eps, 1e-3, 48, p.delta_tilde, p.theta)
        t0 = time.perf_counter()
        s = survival(f, g, method="monte-carlo", trajectories=10**6, seed=1)
        steps = "48 steps each" if eps > 100 else "stopping at E[T]"
        _row(f"Monte Carlo 10^6 trajectories, eps={eps:g} ({steps})", "< 3 s",
             f"{time.perf_counter() - t0:.3f} s (E[T] = {s.expected_T:.2f} ± "
             f"{s.expected_T_stderr:.2f})")
    f = RealisationFilter(6.0, 1e-3, 48, p.delta_tilde, p.theta)
    survival(f, g)  # warm-up
    t0 = time.perf_counter()
    s = survival(f, g)
    _row("quadrature survival curve, N = 48", "< 1 s",
         f"{time.perf_counter() - t0:.3f} s (E[T] = {s.expected_T:.4f})")
    t0 = time.perf_counter()
    comparison(GaussianMechanism(2.0), 6.0, 1e-3, 48, trajectories=0)
    _row("every filter's curve (Figure 2 panel, exact only)", "-",
         f"{time.perf_counter() - t0:.3f} s")


def bench_cycle() -> None:
    """Filters on a declared cycle (Gaussian σ = 2, binary randomized response ε0 = 0.7, Laplace b = 2):
    the one Monte Carlo simulator on the cycle beside the same number of i.i.d. Gaussian trajectories,
    a mechanism-level count by whole periods beside a plain ask/record loop, and every filter's curve."""
    from lpdp.filters import (
        RenyiFilter,
        Request,
        cycle_filter,
        randomized_response,
        sequence_comparison,
        sequence_survival,
    )
    from lpdp.mechanisms import LaplaceMechanism

    g = GaussianMechanism(2.0)
    steps = [(g, None), (randomized_response(2, 0.7), Request("bit", {1: 1, 0: 0})),
             (LaplaceMechanism(2.0), None)]
    f = cycle_filter("realisation", steps, 6.0, 1e-3, 48, [(1, 0)])
    t0 = time.perf_counter()
    s = sequence_survival(f, steps, trajectories=10**6, seed=1)
    cyc = time.perf_counter() - t0
    t0 = time.perf_counter()
    si = sequence_survival(f, [(g, None)], trajectories=10**6, seed=1)
    iid = time.perf_counter() - t0
    _row("Monte Carlo 10^6 trajectories, 3-step cycle (vs i.i.d.)", "-",
         f"{cyc:.3f} s (E[T] = {s.expected_T:.2f}) vs {iid:.3f} s i.i.d. Gaussian (E[T] = "
         f"{si.expected_T:.2f}): {cyc / s.expected_T / (iid / si.expected_T):.2f}x per step")
    small = [(GaussianMechanism(300.0), None), (LaplaceMechanism(600.0), None)]
    t0 = time.perf_counter()
    k = RenyiFilter(6.0, 1e-3, alpha=8.0).sequence_stopping_time(small)
    fast = time.perf_counter() - t0
    loop = RenyiFilter(6.0, 1e-3, alpha=8.0)
    t0 = time.perf_counter()
    while loop.ask(*small[loop.steps % 2]):
        loop.record(0.0)
    slow = time.perf_counter() - t0
    _row(f"mechanism-level count on a cycle, k = {k} (vs a loop)", "O(log k)",
         f"{fast * 1e3:.2f} ms vs {slow:.2f} s ({slow / fast:.0f}x), loop grants {loop.steps}")
    t0 = time.perf_counter()
    sequence_comparison(steps, 6.0, 1e-3, 40, pairs=[(1, 0)], trajectories=10**5)
    _row("every filter's curve on the cycle (10^5 trajectories)", "-",
         f"{time.perf_counter() - t0:.3f} s")


if __name__ == "__main__":
    bench_ask()
    bench_audit()
    bench_laplace_audit()
    bench_survival()
    bench_cycle()
