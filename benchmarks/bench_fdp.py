"""f-DP brackets and n-constraint composition: lpdp against dp_accounting's PLD, same machine, one run.

1. Gaussian mechanism G_1 composed k in {10, 100} times: the ε at δ = 1e-5, bracketed from above (attack
   bound) and below (privacy guarantee) by our n-constraint approximations (tail layout, lattice step 0.01,
   δ_min = 1e-5 / (1000 k)), against dp_accounting's pessimistic and optimistic PLD at value discretisation
   1e-4. Our time is the bracket (approximations and both exact compositions); the PLD's includes its
   ε query. Width = ε_below - ε_above (ours) and ε_pess - ε_opt (PLD). The exact ε (G_{√k}, closed form) is
   shown for reference.
2. Figure 3's bracket for n in {2, 4, 8, 16} at μ = 1, k = 10 (area layout): largest δ gap, area between,
   time.
3. Cost growth of the exact n-constraint composition (``lpdp.compose.multi``): unrelated ε_j (one lattice
   dimension per level, box (2k+1)^n) and common-step ε_j (1-D lattice), in n and k; peak RSS after each
   row (monotone, so it shows the largest so far).

Run: ``python benchmarks/bench_fdp.py [--quick]``.
"""

from __future__ import annotations

import argparse
import logging
import math
import resource
import time

import numpy as np
from scipy import optimize, special

DISCRETIZATION = 1e-4
TARGET = 1e-5


def _rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def _exact_epsilon(mu: float, delta: float) -> float:
    def gap(e: float) -> float:     # Φ(a) - e^ε Φ(b) - delta, without overflow
        la, lb = special.log_ndtr(-e / mu + mu / 2), special.log_ndtr(-e / mu - mu / 2)
        return math.exp(la) * -math.expm1(e + lb - la) - delta

    return optimize.brentq(gap, 0.0, 10 * mu * mu + 50)


def _pld(k: int) -> tuple[float, float, float]:
    from dp_accounting.pld import privacy_loss_distribution as pld

    t0 = time.perf_counter()
    pess = pld.from_gaussian_mechanism(1.0, value_discretization_interval=DISCRETIZATION).self_compose(k)
    opt = pld.from_gaussian_mechanism(1.0, value_discretization_interval=DISCRETIZATION,
                                      pessimistic_estimate=False).self_compose(k)
    hi, lo = pess.get_epsilon_for_delta(TARGET), opt.get_epsilon_for_delta(TARGET)
    return lo, hi, time.perf_counter() - t0


def _ours(k: int, n: int) -> tuple[float, float, float]:
    from lpdp.fdp import bracket
    from lpdp.tradeoff import gaussian

    t0 = time.perf_counter()
    b = bracket(gaussian(1.0), k, n, step=0.01, delta_min=TARGET / (1000 * k), layout="tail")
    seconds = time.perf_counter() - t0
    # Not timed: PrivacyRegion.epsilon evaluates δ at every edge loss (O(N²) for N edges), which costs
    # more than the composition itself on these 10^5-edge regions.
    return b.from_above.epsilon(TARGET), b.from_below.epsilon(TARGET), seconds


def gaussian_vs_pld(ks: list[int], ns: list[int]) -> None:
    print(f"1. G_1 composed k times: eps at delta = {TARGET:g} (ours: tail layout, step 0.01; "
          f"PLD: discretisation {DISCRETIZATION:g})")
    print(f"{'k':>4} {'route':>10} {'eps low':>9} {'eps high':>9} {'width':>8} {'seconds':>8} "
          f"{'width/PLD':>9} {'time/PLD':>8}")
    for k in ks:
        exact = _exact_epsilon(math.sqrt(k), TARGET)
        plo, phi, pt = _pld(k)
        print(f"{k:>4} {'exact':>10} {exact:9.4f} {exact:9.4f} {0:8.4f}")
        print(f"{k:>4} {'PLD':>10} {plo:9.4f} {phi:9.4f} {phi - plo:8.4f} {pt:8.3f}")
        for n in ns:
            lo, hi, t = _ours(k, n)
            assert lo <= exact + 1e-9 <= hi + 2e-9, (k, n, lo, exact, hi)
            print(f"{k:>4} {f'n={n}':>10} {lo:9.4f} {hi:9.4f} {hi - lo:8.4f} {t:8.3f} "
                  f"{(hi - lo) / (phi - plo):9.1f} {t / pt:8.2f}")


def figure3_table(ns: list[int]) -> None:
    from lpdp.fdp import bracket
    from lpdp.tradeoff import gaussian

    print("\n2. G_1, k = 10, area layout (Propositions 1-2 for n = 2; step 0.01 for n >= 3)")
    print(f"{'n':>3} {'max delta gap':>14} {'area between':>13} {'seconds':>8}")
    for n in ns:
        t0 = time.perf_counter()
        b = bracket(gaussian(1.0), 10, n)
        t = time.perf_counter() - t0
        print(f"{n:>3} {b.max_gap():14.4g} {b.area_between():13.4g} {t:8.3f}")


def cost_growth(quick: bool) -> None:
    from lpdp.compose import multi

    rng = np.random.default_rng(1)
    print("\n3. exact n-constraint composition (multi): seconds [peak RSS MB]")
    ks = [10, 30, 100] if quick else [10, 30, 100, 300, 1000]
    print("unrelated eps_j (box (2k+1)^n):")
    print(f"{'n':>3} " + " ".join(f"{f'k={k}':>16}" for k in ks))
    for n in (1, 2, 3, 4):
        eps = np.sort(rng.uniform(0.1, 1.0, n))[::-1] + rng.uniform(0, 1e-3, n)
        cons = [(float(e), float(d)) for e, d in zip(eps, np.geomspace(1e-6, 0.05, n), strict=True)]
        cells = []
        for k in ks:
            if (2 * k + 1) ** n > 3e7:
                cells.append(f"{'(too big)':>16}")
                continue
            t0 = time.perf_counter()
            multi(cons, k)
            cells.append(f"{time.perf_counter() - t0:9.3f} [{_rss_mb():4.0f}]")
        print(f"{n:>3} " + " ".join(cells))
    print("eps_j on a common step 0.01 (1-D lattice, eps_j up to 3):")
    print(f"{'n':>3} " + " ".join(f"{f'k={k}':>16}" for k in ks))
    for n in (2, 4, 8, 16, 32):
        eps = np.round(np.linspace(3.0 / n, 3.0, n), 2)[::-1]
        cons = [(float(e), float(d)) for e, d in zip(eps, np.geomspace(1e-9, 0.2, n), strict=True)]
        cells = []
        for k in ks:
            t0 = time.perf_counter()
            multi(cons, k, step=0.01)
            cells.append(f"{time.perf_counter() - t0:9.3f} [{_rss_mb():4.0f}]")
        print(f"{n:>3} " + " ".join(cells))


def main() -> None:
    logging.getLogger().setLevel(logging.ERROR)   # dp_accounting warns about its optimistic algorithm
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smaller sizes")
    args = parser.parse_args()
    gaussian_vs_pld([10] if args.quick else [10, 100], [8, 16] if args.quick else [4, 8, 16, 32, 64])
    figure3_table([2, 4, 8, 16])
    cost_growth(args.quick)


if __name__ == "__main__":
    main()
