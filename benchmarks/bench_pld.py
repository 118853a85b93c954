"""Certified lattice engine (lpdp.pld.compose) against dp_accounting's PLD, same machine, one process.

For each workload: the ε bracket at δ = 1e-5 and 1e-9 (width = upper - lower), the wall time of everything
a user runs to get both numbers (building, composing, both queries), and the peak of Python-tracked memory
(tracemalloc: numpy buffers are tracked, scipy.fft's internal scratch is not).

* lpdp: ``lpdp.pld.compose`` on the mechanisms' loss laws (``lpdp.mechanisms``), default tolerance, and, when
  ``lpdp.accountant`` is installed, the accountant as a user would call it (its route is printed);
* dp_accounting: the pessimistic and the optimistic PLD (the two computations its bracket needs) at value
  discretisation 1e-4 and 1e-3; its "width" is ε_pessimistic - ε_optimistic;
* prv_accountant (``pip install prv_accountant``) where it supports the workload and k <= 100 (at k = 1000
  it took 95 s and 2.6 GB here): its (lower, upper);
* autodp (``pip install autodp``): the RDP accountant's ε, an upper bound only (the loose reference).

``exact?`` says whether each side contains the closed form (Gaussian workloads: ``G_μ``, μ = √(Σ k/σ²)):
``yes`` when lower <= exact <= upper, ``LOW`` when an "upper" is below it (a privacy breach), ``-`` when no
closed form exists. prv_accountant and autodp are optional and only used here.

Run: ``python benchmarks/bench_pld.py [--quick]``.
"""

from __future__ import annotations

import argparse
import logging
import math
import time
import tracemalloc
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from scipy import optimize, special

DELTAS = (1e-5, 1e-9)


@dataclass
class Workload:
    name: str
    lpdp_parts: Callable[[], list]          # [(mechanism, times)]
    pld: Callable[[float, bool], object]    # (discretisation, pessimistic) -> PrivacyLossDistribution
    mu: float | None = None                 # exact Gaussian composition, when there is one
    prv: Callable[[], tuple[list, list]] | None = None   # (prvs, counts) for prv_accountant
    autodp: Callable[[], object] | None = None


def _exact_epsilon(mu: float, delta: float) -> float:
    def gap(e: float) -> float:
        la, lb = special.log_ndtr(-e / mu + mu / 2), special.log_ndtr(-e / mu - mu / 2)
        return la + math.log(-math.expm1(e + lb - la)) - math.log(delta)

    return optimize.brentq(gap, 0.0, mu * mu / 2 + 14 * mu + 1.0, xtol=1e-13)


def _measure(fn: Callable[[], tuple[list[float], list[float]]]):
    """Answers and wall time of one run, then the tracemalloc peak of a second run (tracing slows it)."""
    t0 = time.perf_counter()
    lo, hi = fn()
    seconds = time.perf_counter() - t0
    tracemalloc.start()
    fn()
    peak = tracemalloc.get_traced_memory()[1] / 1e6
    tracemalloc.stop()
    return lo, hi, seconds, peak


def _lpdp_engine(w: Workload):
    from lpdp.pld import compose

    def run():
        b = compose([(m.loss_law(), k) for m, k in w.lpdp_parts()])
        lo, hi = b.epsilon(list(DELTAS))
        return list(lo), list(hi)

    return run


def _lpdp_accountant(w: Workload):
    from lpdp.accountant import Accountant

    def run():
        acc = Accountant()
        for m, k in w.lpdp_parts():
            acc.compose(m, k)
        g = acc.guarantee()
        lo, hi = g.epsilon(list(DELTAS))
        run.route = g.route
        return list(np.atleast_1d(lo)), list(np.atleast_1d(hi))

    return run


def _dp_accounting(w: Workload, disc: float):
    def run():
        pess, opt = w.pld(disc, True), w.pld(disc, False)
        return ([opt.get_epsilon_for_delta(d) for d in DELTAS],
                [pess.get_epsilon_for_delta(d) for d in DELTAS])

    return run


def _prv(w: Workload):
    from prv_accountant import PRVAccountant

    def run():
        prvs, counts = w.prv()
        lo, hi = [], []
        for d in DELTAS:
            acc = PRVAccountant(prvs=prvs, max_self_compositions=counts, eps_error=0.01, delta_error=d / 1000)
            low, _, up = acc.compute_epsilon(delta=d, num_self_compositions=counts)
            lo.append(low)
            hi.append(up)
        return lo, hi

    return run


def _autodp(w: Workload):
    def run():
        m = w.autodp()
        return [math.nan] * len(DELTAS), [m.get_approxDP(d) for d in DELTAS]

    return run


# ------------------------------------------------------------------------------------------- workloads
def _gaussian_self(sigma: float, k: int) -> Workload:
    from dp_accounting.pld import privacy_loss_distribution as pld

    from lpdp.mechanisms import GaussianMechanism

    def p(disc, pess):
        return pld.from_gaussian_mechanism(sigma, value_discretization_interval=disc,
                                           pessimistic_estimate=pess).self_compose(k)

    def prv():
        from prv_accountant.privacy_random_variables import GaussianMechanism as G
        return [G(noise_multiplier=sigma)], [k]

    def adp():
        from autodp.mechanism_zoo import GaussianMechanism as G
        from autodp.transformer_zoo import Composition
        return Composition()([G(sigma, name="g")], [k])

    return Workload(f"Gaussian sigma={sigma:g} k={k}", lambda: [(GaussianMechanism(sigma), k)], p,
                    math.sqrt(k) / sigma, prv if k <= 100 else None, adp)


def _sigmas(n: int) -> np.ndarray:
    return np.linspace(2.0, 6.0, n)


def _distinct_gaussians(n: int, laplace: int = 0) -> Workload:
    from dp_accounting.pld import privacy_loss_distribution as pld

    from lpdp.mechanisms import GaussianMechanism, LaplaceMechanism

    sig = _sigmas(n)
    scales = np.linspace(5.0, 15.0, laplace)

    def parts():
        return ([(GaussianMechanism(float(s)), 1) for s in sig]
                + [(LaplaceMechanism(float(b)), 1) for b in scales])

    def p(disc, pess):
        out = None
        for s in sig:
            nxt = pld.from_gaussian_mechanism(float(s), value_discretization_interval=disc,
                                              pessimistic_estimate=pess)
            out = nxt if out is None else out.compose(nxt)
        for b in scales:
            out = out.compose(pld.from_laplace_mechanism(float(b), value_discretization_interval=disc,
                                                         pessimistic_estimate=pess))
        return out

    mu = None if laplace else math.sqrt(float(np.sum(1.0 / sig ** 2)))
    name = f"{n} distinct Gaussians" + (f" + {laplace} Laplace" if laplace else "")
    return Workload(name, parts, p, mu)


def _laplace(scale: float, k: int) -> Workload:
    from dp_accounting.pld import privacy_loss_distribution as pld

    from lpdp.mechanisms import LaplaceMechanism

    def p(disc, pess):
        return pld.from_laplace_mechanism(scale, value_discretization_interval=disc,
                                          pessimistic_estimate=pess).self_compose(k)

    def prv():
        from prv_accountant.privacy_random_variables import LaplaceMechanism as L
        return [L(mu=scale)], [k]

    return Workload(f"Laplace b={scale:g} k={k}", lambda: [(LaplaceMechanism(scale), k)], p, None, prv)


def _pair_pld(region, disc: float, pess: bool):
    """dp_accounting PLD of a region's dominating pair (log masses, as its API expects)."""
    from dp_accounting.pld import privacy_loss_distribution as pld

    lp = {i: float(v) for i, v in enumerate(region.log_p)}
    lq = {i: float(v) for i, v in enumerate(region.log_q)}
    if region.log_p_inf > -math.inf:
        lp["inf"] = float(region.log_p_inf)
    if region.log_q_ninf > -math.inf:
        lq["ninf"] = float(region.log_q_ninf)
    return pld.from_two_probability_mass_functions(lp, lq, pessimistic_estimate=pess,
                                                   value_discretization_interval=disc)


def _mixed() -> Workload:
    from lpdp.mechanisms import DPMechanism, GaussianMechanism, randomized_response

    dd, rr = DPMechanism([(0.3, 0.0), (0.15, 0.02)]), randomized_response(4, 0.7)

    def parts():
        return [(GaussianMechanism(3.0), 50), (dd, 20), (rr, 20)]

    def p(disc, pess):
        from dp_accounting.pld import privacy_loss_distribution as pld
        g = pld.from_gaussian_mechanism(3.0, value_discretization_interval=disc,
                                        pessimistic_estimate=pess).self_compose(50)
        return (g.compose(_pair_pld(dd.region(), disc, pess).self_compose(20))
                .compose(_pair_pld(rr.region(), disc, pess).self_compose(20)))

    return Workload("50 Gaussians s=3 + 20 double-DP + 20 4-ary RR", parts, p)


def _double_dp(k: int) -> Workload:
    from lpdp.mechanisms import DPMechanism

    dd = DPMechanism([(0.3, 0.0), (0.15, 0.02)])
    return Workload(f"Figure 2 double-DP k={k}", lambda: [(dd, k)],
                    lambda disc, pess: _pair_pld(dd.region(), disc, pess).self_compose(k))


# ----------------------------------------------------------------------------------------------- table
def _fmt(x: float) -> str:
    if x is None or not np.isfinite(x):
        return "   -   "
    return f"{x:.2e}" if x < 1e-3 else f"{x:.4f}"


def run(workloads: list[Workload], peers: bool) -> None:
    print("| workload | method | time s | peak MB | width 1e-5 | width 1e-9 | exact? | width/PLD "
          "| time/PLD |")
    print("|---|---|---:|---:|---:|---:|:---:|---:|---:|")
    for w in workloads:
        exact = [_exact_epsilon(w.mu, d) for d in DELTAS] if w.mu else None
        methods: list[tuple[str, Callable]] = [("lpdp engine", _lpdp_engine(w))]
        try:
            methods.append(("lpdp accountant", _lpdp_accountant(w)))
        except ImportError:
            pass
        methods += [("PLD 1e-4", _dp_accounting(w, 1e-4)), ("PLD 1e-3", _dp_accounting(w, 1e-3))]
        if peers and w.prv is not None:
            try:
                methods.append(("prv_accountant", _prv(w)))
            except ImportError:
                pass
        if peers and w.autodp is not None:
            try:
                import autodp  # noqa: F401
                methods.append(("autodp RDP (upper)", _autodp(w)))
            except ImportError:
                pass
        rows = []
        for name, fn in methods:
            try:
                lo, hi, t, mem = _measure(fn)
            except Exception as exc:   # a peer that refuses the workload (or runs out) is reported
                print(f"| {w.name} | {name} | failed: {type(exc).__name__}: {str(exc)[:60]} |||||||")
                continue
            label = name + (f" ({fn.route})" if hasattr(fn, "route") else "")
            rows.append((label, lo, hi, t, mem))
        ref = next((r for r in rows if r[0] == "PLD 1e-4"), None)
        for label, lo, hi, t, mem in rows:
            widths = [h - low for low, h in zip(lo, hi, strict=True)]
            if exact is None:
                ok = "-"
            elif any(h < e - 1e-9 for h, e in zip(hi, exact, strict=True)):
                ok = "LOW"
            elif any(low > e + 1e-9 for low, e in zip(lo, exact, strict=True)):
                ok = "HIGH"
            else:
                ok = "yes"
            ratio_w = (widths[0] / (ref[2][0] - ref[1][0]) if ref and ref[2][0] > ref[1][0] else math.nan)
            ratio_t = t / ref[3] if ref else math.nan
            print(f"| {w.name} | {label} | {t:.3f} | {mem:.0f} | {_fmt(widths[0])} | {_fmt(widths[1])} "
                  f"| {ok} | {_fmt(ratio_w)} | {ratio_t:.2f} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a few small cases (smoke test)")
    parser.add_argument("--no-peers", action="store_true", help="skip prv_accountant and autodp")
    args = parser.parse_args()
    logging.getLogger().setLevel(logging.ERROR)     # dp_accounting's notes on its optimistic algorithm
    if args.quick:
        workloads = [_gaussian_self(2.0, 10), _laplace(1.0, 20)]
    else:
        workloads = [_gaussian_self(s, k) for s in (1.0, 2.0, 4.0) for k in (10, 100, 1000, 10000)]
        workloads += [_distinct_gaussians(100), _distinct_gaussians(100, laplace=100), _laplace(1.0, 100),
                      _mixed(), _double_dp(1000), _double_dp(10000)]
    run(workloads, peers=not args.no_peers)


if __name__ == "__main__":
    main()
