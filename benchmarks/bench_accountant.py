"""The accountant's overhead over calling the specialised route directly, on the existing benchmark cases.

Each case runs both ways in one process, alternately, ``REPEATS`` times; the ratio is
median(accountant) / median(direct) - 1, with δ evaluated at 10 values of ε either way (the answers are
checked to be identical). Cases: Kairouz k = 100, 1000, 10000 (bench_homogeneous), double-DP k = 100, 500,
1000 (bench_double_dp, Figure 2's constraints), heterogeneous pure x = y = 100, 1000 (bench_double_dp), the
n-constraint lattice k = 50 (bench_fdp's multi), and, not an existing case, 100 distinct Gaussians (the
closed form G_μ takes microseconds, so there the accountant's fixed cost per mechanism shows).

Target: overhead under 10% on the existing cases.

Run: ``python benchmarks/bench_accountant.py``.
"""

from __future__ import annotations

import statistics
import time

import numpy as np

REPEATS = 5


def _time(fn) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def main() -> None:
    from lpdp import Accountant
    from lpdp.compose import double_dp, heterogeneous, homogeneous, multi
    from lpdp.mechanisms import DPMechanism, GaussianMechanism, pure
    from lpdp.tradeoff import gaussian

    def via(parts):
        def run():
            acc = Accountant()
            for m, k in parts:
                acc.compose(m, k)
            return acc.guarantee().delta(EPS)[1]
        return run

    EPS = np.linspace(0.0, 5.0, 10)
    fig2 = ((0.3, 0.0), (0.15, 0.02))
    multi_cons = [(0.4, 0.0), (0.2, 0.01), (0.1, 0.05)]
    SIGMAS = np.linspace(1, 10, 100)
    cases = [
        *[(f"kairouz k={k}", lambda k=k: homogeneous(0.1, 1e-8, k).delta(EPS),
           via([(DPMechanism([(0.1, 1e-8)]), k)])) for k in (100, 1000, 10000)],
        *[(f"double-DP k={k}", lambda k=k: double_dp(*fig2, k).delta(EPS),
           via([(DPMechanism(list(fig2)), k)])) for k in (100, 500, 1000)],
        *[(f"theorem1 x=y={x}", lambda x=x: heterogeneous({0.3: x, 0.15: x}).delta(EPS),
           via([(pure(0.3), x), (pure(0.15), x)])) for x in (100, 1000)],
        ("multi n=3 k=50", lambda: multi(multi_cons, 50).delta(EPS), via([(DPMechanism(multi_cons), 50)])),
        ("gaussians 100", lambda: gaussian(np.sqrt(sum(1 / s**2 for s in SIGMAS))).delta(EPS),
         via([(GaussianMechanism(float(s)), 1) for s in SIGMAS])),
    ]
    print(f"{'case':<22}{'direct s':>11}{'accountant s':>14}{'overhead':>10}")
    worst = 0.0
    existing = len(cases) - 1
    for i, (name, direct, acc) in enumerate(cases):
        assert np.allclose(direct(), acc(), rtol=1e-12, atol=0), name
        d, a = [], []
        for _ in range(REPEATS):
            d.append(_time(direct))
            a.append(_time(acc))
        md, ma = statistics.median(d), statistics.median(a)
        worst = max(worst, ma / md - 1) if i < existing else worst
        print(f"{name:<22}{md:>11.4f}{ma:>14.4f}{ma / md - 1:>10.1%}")
    print(f"worst overhead on the existing cases: {worst:.1%} (target < 10%)")
    print()
    from certification import print_costs

    print_costs([("accountant " + name, lambda parts=parts: _region(parts), None)
                 for name, parts in [("kairouz k=10000", [(DPMechanism([(0.1, 1e-8)]), 10000)]),
                                     ("double-DP k=1000", [(DPMechanism(list(fig2)), 1000)]),
                                     ("theorem1 x=y=1000", [(pure(0.3), 1000), (pure(0.15), 1000)]),
                                     ("multi n=3 k=50", [(DPMechanism(multi_cons), 50)])]], EPS)


def _region(parts):
    """The accountant's exact region for ``parts`` (its upper side)."""
    from lpdp import Accountant

    acc = Accountant()
    for m, k in parts:
        acc.compose(m, k)
    return acc.guarantee().upper


if __name__ == "__main__":
    main()
