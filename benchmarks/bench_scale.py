"""Exact composition at scale: double-DP, heterogeneous pure levels, Kairouz at k = 10^6, ε(δ) queries.

Each measurement runs in a fresh process, so its peak RSS is that computation's (on top of the interpreter
with numpy and lpdp imported, printed as "base"). Targets:

* Figure 2's double-DP (0.3, 0) ∧ (0.15, 0.02) at k = 10^4: under 5 s and 2 GB;
* heterogeneous pure composition x = y = 10^4 at two ε (0.3, 0.15): under 2 s and 1 GB;
* Kairouz exact to 1e-12 relative at k = 10^6 (against an mpmath binomial sum);
* ε(δ) in O(log N) after one pass (prefix sums, closed form between consecutive losses): the first query
  builds the prefix sums, later ones cost microseconds;
* the n-constraint lattice on a common step (n = 8, step 0.01, ε_j up to 3) at k = 1000: under 10 s
  (``--full`` only; it is not met yet, the engine is the sequential log-space lattice).

Run: ``python benchmarks/bench_scale.py [--full]``.
"""

from __future__ import annotations

import argparse
import resource
import sys
import time

import numpy as np
from bench_double_dp import measure  # a fresh interpreter per measurement (run from benchmarks/)

FIG2 = ((0.3, 0.0), (0.15, 0.02))


def _rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def _queries(region) -> tuple[float, float, float]:
    """Seconds of the first ε(1e-5) query (builds the prefix sums), of 100 more, and the ε found."""
    t0 = time.perf_counter()
    eps = region.epsilon(1e-5)
    first = time.perf_counter() - t0
    t0 = time.perf_counter()
    for d in np.geomspace(1e-12, 1e-2, 100):
        region.epsilon(float(d))
    return first, (time.perf_counter() - t0) / 100, eps


def _double(k: int):
    from lpdp.compose import double_dp

    double_dp(*FIG2, 3)
    t0 = time.perf_counter()
    region = double_dp(*FIG2, k)
    build = time.perf_counter() - t0
    return (build, _rss_mb(), *_queries(region))


def _hetero(x: int):
    from lpdp.compose import heterogeneous

    heterogeneous({0.3: 3, 0.15: 3})
    t0 = time.perf_counter()
    region = heterogeneous({0.3: x, 0.15: x})
    build = time.perf_counter() - t0
    return (build, _rss_mb(), *_queries(region))


def _kairouz(k: int, eps: float, at: float):
    from lpdp.compose import homogeneous

    t0 = time.perf_counter()
    region = homogeneous(eps, 0.0, k)
    build = time.perf_counter() - t0
    first, later, e = _queries(region)
    return build, _rss_mb(), first, later, e, float(region.delta(at))


def _multi(n: int, k: int):
    from lpdp.compose import multi

    eps = np.round(np.linspace(3.0 / n, 3.0, n), 2)[::-1]
    cons = [(float(e), float(d)) for e, d in zip(eps, np.geomspace(1e-9, 0.2, n), strict=True)]
    t0 = time.perf_counter()
    region = multi(cons, k, step=0.01)
    build = time.perf_counter() - t0
    return (build, _rss_mb(), *_queries(region))


def _base():
    import lpdp.compose  # noqa: F401

    return (0.0, _rss_mb())


def _mp_kairouz(eps: float, k: int, at: float) -> float:
    """δ(at) of the k-fold ε randomised response in mpmath (30 digits), by the binomial recurrence."""
    import mpmath

    with mpmath.workdps(30):
        a = mpmath.e ** mpmath.mpf(eps) / (1 + mpmath.e ** mpmath.mpf(eps))
        b = 1 - a
        tp, tq, total, i, scale = a ** k, b ** k, mpmath.mpf(0), 0, mpmath.e ** mpmath.mpf(at)
        while (k - 2 * i) * eps > at:
            total += tp - scale * tq
            tp *= (b / a) * (k - i) / (i + 1)
            tq *= (a / b) * (k - i) / (i + 1)
            i += 1
        return float(total)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--full", action="store_true", help="also the n = 8 lattice at k = 1000 (minutes)")
    args = parser.parse_args(argv)
    print(f"base RSS {measure(_base)[1]:.0f} MB (interpreter + numpy + lpdp)")
    head = (f"{'build s':>8} {'peak MB':>8} {'eps(1e-5)':>12} {'1st query s':>12} {'next query s':>12}")
    print("\nFigure 2 double-DP (0.3, 0) and (0.15, 0.02), exact; target k = 10^4 < 5 s, < 2 GB")
    print(f"{'k':>7} {head}")
    for k in (1000, 3000, 10_000):
        build, rss, first, later, eps = measure(_double, k)
        print(f"{k:>7} {build:>8.3f} {rss:>8.0f} {eps:>12.6f} {first:>12.2e} {later:>12.2e}")
    print("\nheterogeneous pure levels {0.3: x, 0.15: x}, exact; target x = 10^4 < 2 s, < 1 GB")
    print(f"{'x = y':>7} {head}")
    for x in (1000, 3800, 10_000):
        build, rss, first, later, eps = measure(_hetero, x)
        print(f"{x:>7} {build:>8.3f} {rss:>8.0f} {eps:>12.6f} {first:>12.2e} {later:>12.2e}")
    print("\nKairouz eps = 0.01, delta = 0, against mpmath at eps = 100 (target: 1e-12 relative)")
    print(f"{'k':>7} {head} {'rel err':>9}")
    for k in (100_000, 1_000_000):
        build, rss, first, later, eps, got = measure(_kairouz, k, 0.01, 100.0)
        want = _mp_kairouz(0.01, k, 100.0)
        print(f"{k:>7} {build:>8.3f} {rss:>8.0f} {eps:>12.6f} {first:>12.2e} {later:>12.2e} "
              f"{abs(got - want) / want:>9.1e}")
    print("\nn constraints on a common step 0.01 (eps_j up to 3); target n = 8, k = 1000 < 10 s")
    print(f"{'n, k':>7} {head}")
    for n, k in [(2, 100), (8, 100), (8, 300)] + ([(8, 1000)] if args.full else []):
        build, rss, first, later, eps = measure(_multi, n, k)
        print(f"{f'{n}, {k}':>7} {build:>8.3f} {rss:>8.0f} {eps:>12.6f} {first:>12.2e} {later:>12.2e}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
