"""Exact homogeneous composition (Kairouz et al., spec §3): lpdp against dp_accounting's PLD, one run.

For k in {100, 1000, 10000} and (ε, δ) = (0.1, 1e-8) per mechanism, both libraries build the k-fold
composition and evaluate δ at 10 values of ε. The reference is the paper's closed form evaluated with
exact binomials and 60-digit decimals; "max rel err" is the largest relative error against it over the 10
points (δ >= 1e-300). dp_accounting uses value discretisation 1e-4 (pessimistic). Brute-force enumeration
runs where it can (k <= 10) and must give error 0 up to float rounding.

Run: ``python benchmarks/bench_homogeneous.py``.
"""

from __future__ import annotations

import math
import resource
import sys
import time
from decimal import Decimal, getcontext
from pathlib import Path

import numpy as np

EPS, DELTA = 0.1, 1e-8
KS = (100, 1000, 10000)


def reference(k: int, eps_points: list[float]) -> np.ndarray:
    """δ(e) of the k-fold composition from the closed form, at e on the lattice (k - 2i)ε."""
    getcontext().prec = 60
    ee = Decimal(EPS).exp()
    out = []
    for e in eps_points:
        i = round((k - e / EPS) / 2)
        binom, a, b, s = Decimal(1), ee ** k, ee ** (k - 2 * i), Decimal(0)
        for j in range(i):
            s += binom * (a - b)
            binom = binom * (k - j) / (j + 1)
            a, b = a / ee, b * ee
        out.append(float(1 - (1 - Decimal(DELTA)) ** k * (1 - s / (1 + ee) ** k)))
    return np.array(out)


def grid(k: int) -> list[float]:
    # Lattice points (k - 2i)ε between 0 and ~6 sqrt(k) ε, where δ spans many orders of magnitude.
    top = min(k, int(6 * math.sqrt(k)))
    idx = np.unique(np.linspace(0, top, 10).astype(int) // 2 * 2 + k % 2)
    return [float(i * EPS) for i in idx]


def time_lpdp(k: int, pts: list[float]) -> tuple[float, np.ndarray]:
    from lpdp.compose import homogeneous

    t0 = time.perf_counter()
    d = homogeneous(EPS, DELTA, k).delta(pts)
    return time.perf_counter() - t0, np.asarray(d)


def time_pld(k: int, pts: list[float]) -> tuple[float, np.ndarray]:
    from dp_accounting.pld import common
    from dp_accounting.pld import privacy_loss_distribution as pld

    t0 = time.perf_counter()
    single = pld.from_privacy_parameters(common.DifferentialPrivacyParameters(EPS, DELTA),
                                         value_discretization_interval=1e-4)
    d = single.self_compose(k).get_delta_for_epsilon(pts)
    return time.perf_counter() - t0, np.asarray(d)


def rel_err(x: np.ndarray, ref: np.ndarray) -> float:
    ok = ref >= 1e-300
    return float(np.max(np.abs(x[ok] - ref[ok]) / ref[ok])) if ok.any() else 0.0


def main() -> None:
    from lpdp.compose import homogeneous

    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from tests.oracles import brute_force_delta

    e = math.exp(EPS)
    p = [DELTA, (1 - DELTA) * e / (1 + e), (1 - DELTA) / (1 + e), 0.0]
    q = p[::-1]
    g = np.linspace(0, 1.0, 11)
    bf = brute_force_delta(p, q, 10, g)
    print(f"brute force k=10: max rel err of lpdp = "
          f"{np.max(np.abs(homogeneous(EPS, DELTA, 10).delta(g) - bf) / np.maximum(bf, 1e-300)):.2e}")
    time_lpdp(10, [0.0])   # warm-up imports
    time_pld(10, [0.0])
    print(f"{'k':>6} | {'lpdp s':>8} {'max rel err':>12} | {'PLD s':>8} {'max rel err':>12} | "
          f"{'speed-up':>8}")
    for k in KS:
        pts = grid(k)
        ref = reference(k, pts)
        t_ours, d_ours = time_lpdp(k, pts)
        t_pld, d_pld = time_pld(k, pts)
        print(f"{k:>6} | {t_ours:8.4f} {rel_err(d_ours, ref):12.2e} | {t_pld:8.4f} "
              f"{rel_err(d_pld, ref):12.2e} | {t_pld / t_ours:7.1f}x")
    from certification import print_costs

    from lpdp.compose.kairouz import rr_binomial_error
    lp = -math.log1p(math.exp(-EPS))
    print_costs([(f"kairouz k={k}", lambda k=k: homogeneous(EPS, DELTA, k),
                  lambda k=k: rr_binomial_error(EPS, k, lp, lp - EPS)) for k in KS],
                np.linspace(0.0, 5.0, 10))
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"peak RSS of the whole run: {rss:.0f} MB")


if __name__ == "__main__":
    main()
