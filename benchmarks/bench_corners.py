"""The exact routes' former slow corners against dp_accounting's PLD on the same dominating pair.

Each case runs in a fresh process (peak RSS is that computation's, with numpy and the library imported).
lpdp's time is the guarantee (route chosen by :class:`lpdp.Accountant`) and δ at 10 values of ε; the
PLD's is building the pessimistic PLD (value discretisation 1e-4) of the same pair (the k = 1 region's
atoms, through :func:`lpdp.interop.to_pld`), composing it and the same 10 queries. Target: lpdp within
the PLD's time on the same pair (< 2 s where the PLD has none); the product case < 2 s and < 300 MB.

Run: ``python benchmarks/bench_corners.py``.
"""

from __future__ import annotations

import multiprocessing as mp
import resource
import sys
import time

import numpy as np

DISCRETIZATION = 1e-4


def _rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def _workloads() -> dict[str, list]:
    from lpdp.mechanisms import DPMechanism, randomized_response

    grid8 = [(0.05 * (j + 1), 10.0 ** -(j + 2)) for j in range(8)]
    return {
        "double-DP (0.05, 0) & (0.021, 1e-4), k = 1000": [(DPMechanism([(0.05, 0.0), (0.021, 1e-4)]), 1000)],
        "8 constraints on a 0.05 grid, k = 1000": [(DPMechanism(grid8), 1000)],
        "product (1, 1e-6) & (0.3, 1e-3) x200 + 5-ary RR(0.5) x50": [
            (DPMechanism([(1.0, 1e-6), (0.3, 1e-3)]), 200), (randomized_response(5, 0.5), 50)],
    }


def _grid(upper_eps: float) -> np.ndarray:
    return np.linspace(0.0, upper_eps, 10)


def _ours(name: str):
    from lpdp import Accountant

    parts = _workloads()[name]

    def run():
        acc = Accountant()
        for m, k in parts:
            acc = acc.compose(m, k)
        g = acc.guarantee()
        return g, g.delta(_grid(g.epsilon(1e-2)[1]))

    t0 = time.perf_counter()
    g, _ = run()
    return time.perf_counter() - t0, _rss_mb(), g.route


def _pld(name: str):
    from lpdp import Accountant
    from lpdp.interop import to_pld

    parts = _workloads()[name]
    t0 = time.perf_counter()
    dist = None
    for m, k in parts:
        one = to_pld(Accountant().compose(m, 1).guarantee(), DISCRETIZATION).self_compose(k)
        dist = one if dist is None else dist.compose(one)
    top = dist.get_epsilon_for_delta(1e-2)
    for e in _grid(top):
        dist.get_delta_for_epsilon(float(e))
    return time.perf_counter() - t0, _rss_mb(), "pld"


def _base(name: str):
    import lpdp.accountant  # noqa: F401
    import lpdp.interop  # noqa: F401

    return 0.0, _rss_mb(), ""


def _in_child(fn, name: str):
    with mp.get_context("spawn").Pool(1) as pool:
        return pool.apply(fn, (name,))


def main() -> int:
    base = _in_child(_base, "")[1]
    print(f"base RSS {base:.0f} MB (interpreter, numpy, lpdp)")
    print(f"{'case':58s} {'lpdp s':>8s} {'MB':>6s} {'route':>12s} {'PLD s':>8s} {'MB':>6s} {'ratio':>6s}")
    for name in _workloads():
        t, rss, route = _in_child(_ours, name)
        tp, rssp, _ = _in_child(_pld, name)
        print(f"{name:58s} {t:8.2f} {rss - base:6.0f} {route:>12s} {tp:8.2f} {rssp - base:6.0f} "
              f"{t / tp:6.2f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
