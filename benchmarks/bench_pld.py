"""Certified lattice engine (lpdp.pld.compose) against dp_accounting's PLD, same machine, one process.

For each workload: the ε bracket at δ = 1e-5 and 1e-9 (width = upper - lower), the wall and the CPU time
of everything a user runs to get both numbers (building, composing, both queries; on a shared machine the
CPU time is the fair comparison, and the ratios use it), and with ``--memory`` the peak of Python-tracked
memory (tracemalloc, in a second run: numpy buffers are tracked, scipy.fft's internal scratch is not).
Ratios are against dp_accounting's PLD at 1e-4: width over its width, CPU time over its pessimistic +
optimistic pair's, ``dist/PLD`` the upper side's distance to the truth over its pessimistic side's, and
``up-PLD`` the upper ε minus its pessimistic ε (the comparison where the truth is not known: DP-SGD).

* lpdp: ``lpdp.pld.compose`` on the mechanisms' loss laws (``lpdp.mechanisms``), default tolerance, and, when
  ``lpdp.accountant`` is installed, the accountant as a user would call it (its route is printed);
* dp_accounting: the pessimistic and the optimistic PLD (the two computations its bracket needs) at value
  discretisation 1e-4 and 1e-3; its "width" is ε_pessimistic - ε_optimistic;
* prv_accountant (``pip install prv_accountant``) where it supports the workload and k <= 100 (at k = 1000
  it took 95 s and 2.6 GB here): its (lower, upper);
* autodp (``pip install autodp``): the RDP accountant's ε, an upper bound only (the loose reference).

DP-SGD workloads (the Poisson-subsampled Gaussian, both neighbouring directions: the engine composes each
order and keeps the larger ε on each side) are built for the PLD as its ``PLDAccountant`` builds them.

``exact?`` says whether each side contains the truth where it is known: ``yes`` when lower <= truth <=
upper, ``LOW`` when an "upper" is below it (a privacy breach), ``-`` when it is not known. ``up-truth`` is the
upper side's distance to the truth (for the PLD: its pessimistic side), the number a user reports. The
truth: Gaussians ``G_μ`` (μ = √(Σ k/σ²)); Gaussians plus finite parts, ``Σ_j p_j δ_μ(ε - L_j)`` over the
exact atoms of the finite part's composition; one Laplace mechanism, its closed form; two, a 30-digit
integration of the loss density (mpmath); the 1000-Gaussian mixed workload, ``Σ p δ_μ(ε - L)`` over the
RR part's exact atoms and the 10-fold Laplace law on a 1e-4 grid that keeps each cell's mass and mean
(``_laplace_grid``: off by a few 1e-10 in ε, measured by halving the grid; 536.6972143 at δ = 1e-5, the
issue's 536.69721). prv_accountant and autodp are optional and
only used here.

Run: ``python benchmarks/bench_pld.py [--quick] [--only REGEX] [--memory] [--no-peers] [--no-accountant]``
(``--quick``: four small workloads, about 20 s of CPU; the full list takes several minutes).
"""

from __future__ import annotations

import argparse
import logging
import math
import re
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
    truth: Callable[[float], float] | None = None   # exact ε(δ) when known otherwise (nan: not known)


def _exact_epsilon(mu: float, delta: float) -> float:
    def gap(e: float) -> float:
        la, lb = special.log_ndtr(-e / mu + mu / 2), special.log_ndtr(-e / mu - mu / 2)
        return la + math.log(-math.expm1(e + lb - la)) - math.log(delta)

    return optimize.brentq(gap, 0.0, mu * mu / 2 + 14 * mu + 1.0, xtol=1e-13)


def _measure(fn: Callable[[], tuple[list[float], list[float]]], memory: bool):
    """Answers, (wall, CPU) time of one run, then (``memory``) the tracemalloc peak of a second run
    (tracing slows it; nan when not measured)."""
    t0, c0 = time.perf_counter(), time.process_time()
    lo, hi = fn()
    seconds = (time.perf_counter() - t0, time.process_time() - c0)
    if not memory:
        return lo, hi, seconds, math.nan
    tracemalloc.start()
    fn()
    peak = tracemalloc.get_traced_memory()[1] / 1e6
    tracemalloc.stop()
    return lo, hi, seconds, peak


def _lpdp_engine(w: Workload):
    from lpdp.pld import compose

    def run():
        # pairs that are not their own mirror (a subsampled mechanism's) in both orders, the larger ε kept
        parts = w.lpdp_parts()
        orders = [False] if all(m.is_symmetric for m, _ in parts) else [False, True]
        lo, hi = np.full(len(DELTAS), -np.inf), np.full(len(DELTAS), -np.inf)
        for reverse in orders:
            b = compose([(m.loss_law(reverse=reverse), k) for m, k in parts])
            lo_r, hi_r = b.epsilon(list(DELTAS))
            lo, hi = np.maximum(lo, lo_r), np.maximum(hi, hi_r)
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


def _gauss_pld(sigma: float, disc: float, pess: bool):
    from dp_accounting.pld import privacy_loss_distribution as pld
    return pld.from_gaussian_mechanism(sigma, value_discretization_interval=disc, pessimistic_estimate=pess)


def _laplace_pld(scale: float, disc: float, pess: bool):
    from dp_accounting.pld import privacy_loss_distribution as pld
    return pld.from_laplace_mechanism(scale, value_discretization_interval=disc, pessimistic_estimate=pess)


def _mix(name: str, sigmas: np.ndarray, scale: float, laplace: int) -> Workload:
    """Distinct Gaussians (one each) plus ``laplace`` Laplace mechanisms of one scale."""
    from lpdp.mechanisms import GaussianMechanism, LaplaceMechanism

    def parts():
        return [(GaussianMechanism(float(s)), 1) for s in sigmas] + [(LaplaceMechanism(scale), laplace)]

    def p(disc, pess):
        out = _laplace_pld(scale, disc, pess).self_compose(laplace)
        for s in sigmas:
            out = out.compose(_gauss_pld(float(s), disc, pess))
        return out

    return Workload(name, parts, p)


def _laplace(scale: float, k: int) -> Workload:
    from lpdp.mechanisms import LaplaceMechanism

    def p(disc, pess):
        return _laplace_pld(scale, disc, pess).self_compose(k)

    def prv():
        from prv_accountant.privacy_random_variables import LaplaceMechanism as L
        return [L(mu=scale)], [k]

    truth = {1: lambda d: _laplace1_epsilon(1.0 / scale, d),
             2: lambda d: _laplace2_epsilon(1.0 / scale, d)}.get(k)
    return Workload(f"Laplace b={scale:g} k={k}", lambda: [(LaplaceMechanism(scale), k)], p, None,
                    prv if k <= 100 else None, truth=truth)


def _laplace1_epsilon(r: float, delta: float) -> float:
    """ε(δ) of one Laplace mechanism (r = sensitivity/scale): δ(ε) = 1 - e^{(ε - r)/2} on [0, r]."""
    return max(r + 2.0 * math.log1p(-delta), 0.0)


def _laplace2_delta(r, eps):
    """δ(ε) of two Laplace losses (r = sensitivity/scale), integrating the loss density in mpmath."""
    import mpmath
    atoms = [(r, mpmath.mpf(1) / 2), (-r, mpmath.exp(-r) / 2)]

    def dens(x):
        return mpmath.exp((x - r) / 2) / 4

    def tail_cont(c, shift):      # ∫_{l > c} f(l) (1 - e^{eps - shift - l}) dl over (-r, r)
        c = max(min(c, r), -r)
        m = (1 - mpmath.exp((c - r) / 2)) / 2
        w = mpmath.exp(eps - shift) * mpmath.exp(-r / 2) / 2
        return m - w * (mpmath.exp(-c / 2) - mpmath.exp(-r / 2))

    total = mpmath.mpf(0)
    for a, pa in atoms:
        for b, pb in atoms:
            total += pa * pb * max(0, 1 - mpmath.exp(eps - a - b))
        total += 2 * pa * tail_cont(eps - a, a)
    return total + mpmath.quad(lambda l1: dens(l1) * tail_cont(eps - l1, l1), [-r, min(max(eps, -r), r), r])


def _laplace2_epsilon(r: float, delta: float) -> float:
    import mpmath
    mpmath.mp.dps = 30
    rr, lo, hi = mpmath.mpf(r), mpmath.mpf(0), mpmath.mpf(2 * r)
    if _laplace2_delta(rr, lo) <= delta:
        return 0.0
    for _ in range(60):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if _laplace2_delta(rr, mid) > delta else (lo, mid)
    return float(hi)


def _finite_atoms(finite: list) -> tuple[np.ndarray, np.ndarray, float]:
    """Exact atoms (losses, log masses) of the composition of finite mechanisms, and its mass at +inf."""
    from scipy.special import logsumexp
    atoms = {0.0: 0.0}
    log_fin = 0.0
    for m, k in finite:
        law = m.loss_law()
        if law.log_p_inf > -math.inf:
            log_fin += k * math.log1p(-math.exp(law.log_p_inf))
        for _ in range(k):
            nxt: dict[float, list] = {}
            for a, la in atoms.items():
                for b, lb in zip(law.losses.tolist(), law.log_p.tolist(), strict=True):
                    nxt.setdefault(round(a + b, 10), []).append(la + lb)
            atoms = {key: float(logsumexp(v)) for key, v in nxt.items()}
    return np.array(list(atoms)), np.array(list(atoms.values())), -math.expm1(log_fin)


def _gaussian_shifted_epsilon(mu: float, loss: np.ndarray, logp: np.ndarray, p_inf: float
                              ) -> Callable[[float], float]:
    """ε(δ) of G_μ composed with a discrete law (losses, log masses, mass at +inf):
    δ(ε) = p_inf + Σ_j p_j δ_μ(ε - L_j) (log space; ε by bisection to 1e-13)."""
    from scipy.special import logsumexp

    def delta(e: float) -> float:
        x = e - loss
        la, lb = special.log_ndtr(-x / mu + mu / 2), special.log_ndtr(-x / mu - mu / 2)
        with np.errstate(divide="ignore", invalid="ignore"):
            term = la + np.log(-np.expm1(np.minimum(x + lb - la, 0.0)))
        return p_inf + float(np.exp(logsumexp(logp + term)))

    def eps(d: float) -> float:
        return optimize.brentq(lambda e: math.log(delta(e)) - math.log(d), 0.0,
                               float(np.max(loss)) + mu * mu / 2 + 14 * mu + 1.0, xtol=1e-13)

    return eps


def _finite_truth(mu: float, finite: list) -> Callable[[float], float]:
    """ε(δ) of Gaussians (G_μ) plus finite parts, over the exact atoms of the finite part's composition."""
    return _gaussian_shifted_epsilon(mu, *_finite_atoms(finite))


def _laplace_grid(r: float, k: int, eta: float = 1e-4) -> tuple[np.ndarray, np.ndarray]:
    """The k-fold Laplace loss law (r = sensitivity/scale) on the grid ``-k r + j eta``: its atoms ±r exact,
    each cell of the continuous part (density e^{(x - r)/2}/4 on (-r, r)) split between the cell's ends so
    that its mass and mean are kept (exact cell integrals), composed by FFT. Keeping each mean, the split
    only adds at most eta²/4 of variance per mechanism: for a smooth g, E[g] moves by at most
    k eta² sup|g''| / 8 (for the 1000-Gaussian workload's g, a few 1e-10 of δ)."""
    m = int(round(2 * r / eta))
    x = -r + eta * np.arange(m + 1)
    c = math.exp(-r / 2) / 4
    mass = c * 2 * np.diff(np.exp(x / 2))                       # ∫ e^{(x - r)/2}/4 over each cell
    first = c * np.diff(2 * np.exp(x / 2) * (x - 2))            # ∫ x e^{(x - r)/2}/4 over each cell
    upper_share = (first - x[:-1] * mass) / eta                 # mass at the cell's right end keeps the mean
    one = np.zeros(m + 1)
    one[:-1] += mass - upper_share
    one[1:] += upper_share
    one[-1] += 0.5
    one[0] += math.exp(-r) / 2
    n = k * m + 1
    size = 1 << (n - 1).bit_length()
    y = np.maximum(np.fft.irfft(np.fft.rfft(one, size) ** k, size)[:n], 0.0)
    return -k * r + eta * np.arange(n), y


def _gauss_laplace_finite_truth(mu: float, r: float, k: int, finite: list) -> Callable[[float], float]:
    """ε(δ) of G_μ, k Laplace mechanisms and finite parts: δ(ε) = Σ p δ_μ(ε - L) over the finite part's exact
    atoms plus the Laplace part on a 1e-4 grid that keeps each cell's mean (:func:`_laplace_grid`)."""
    loss, logp, p_inf = _finite_atoms(finite)
    lx, ly = _laplace_grid(r, k)
    keep = ly > 0
    with np.errstate(divide="ignore"):
        grid_logp = np.log(ly[keep])
    return _gaussian_shifted_epsilon(mu, (loss[:, None] + lx[keep][None, :]).ravel(),
                                     (logp[:, None] + grid_logp[None, :]).ravel(), p_inf)


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

    dd, rr = DPMechanism([(1.0, 0.0), (0.5, 0.1)]), randomized_response(4, 0.7)

    def parts():
        return [(GaussianMechanism(3.0), 50), (dd, 20), (rr, 20)]

    def p(disc, pess):
        g = _gauss_pld(3.0, disc, pess).self_compose(50)
        return (g.compose(_pair_pld(dd.region(), disc, pess).self_compose(20))
                .compose(_pair_pld(rr.region(), disc, pess).self_compose(20)))

    return Workload("50 Gaussians s=3 + 20 (1,0)^(0.5,0.1) + 20 4-ary RR(0.7)", parts, p,
                    truth=_finite_truth(math.sqrt(50) / 3.0, [(dd, 20), (rr, 20)]))


def _thousand() -> Workload:
    from lpdp.mechanisms import GaussianMechanism, LaplaceMechanism, randomized_response

    rr = randomized_response(5, 1.0)

    def parts():
        return [(GaussianMechanism(1.1), 1000), (LaplaceMechanism(2.0), 10), (rr, 2)]

    def p(disc, pess):
        return (_gauss_pld(1.1, disc, pess).self_compose(1000)
                .compose(_laplace_pld(2.0, disc, pess).self_compose(10))
                .compose(_pair_pld(rr.region(), disc, pess).self_compose(2)))

    return Workload("1000 Gaussians s=1.1 + 10 Laplace b=2 + 2 5-ary RR(1)", parts, p,
                    truth=_gauss_laplace_finite_truth(math.sqrt(1000) / 1.1, 0.5, 10, [(rr, 2)]))


def _dpsgd(sigma: float, q: float, steps: int) -> Workload:
    """DP-SGD: the Poisson-subsampled Gaussian (add/remove, both directions), as dp_accounting's
    PLDAccountant builds it; the truth is not known."""
    from dp_accounting.pld import privacy_loss_distribution as pld

    from lpdp.sgd import dpsgd_mechanism

    def p(disc, pess):
        return pld.from_gaussian_mechanism(sigma, sampling_prob=q, value_discretization_interval=disc,
                                           pessimistic_estimate=pess).self_compose(steps)

    return Workload(f"DP-SGD sigma={sigma:g} q={q:g} steps={steps}",
                    lambda: [(dpsgd_mechanism(sigma, q), steps)], p)


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


def _ratio(a: float, b: float) -> str:
    return f"{a / b:.3g}" if np.isfinite(a) and np.isfinite(b) and b > 0 else "-"


def run(workloads: list[Workload], peers: bool, accountant: bool = True, memory: bool = False) -> None:
    """One table row per method and workload; ratios against dp_accounting's PLD at 1e-4 (pessimistic and
    optimistic: its width and the time of the pair; ``dist/PLD`` is the upper side's distance to the truth
    over the pessimistic side's, ``up-PLD`` the upper ε minus the pessimistic ε)."""
    print("| workload | method | wall s | CPU s | peak MB | width 1e-5 | width 1e-9 | exact? | up-truth 1e-5 "
          "| up-truth 1e-9 | up-PLD 1e-5 | up-PLD 1e-9 | width/PLD 1e-5 | width/PLD 1e-9 | dist/PLD 1e-5 "
          "| dist/PLD 1e-9 | CPU/PLD |")
    print("|---|---|---:|---:|---:|---:|---:|:---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for w in workloads:
        if w.mu:
            exact = [_exact_epsilon(w.mu, d) for d in DELTAS]
        elif w.truth is not None:
            exact = [w.truth(d) for d in DELTAS]
        else:
            exact = [math.nan] * len(DELTAS)
        methods: list[tuple[str, Callable]] = [("lpdp engine", _lpdp_engine(w))]
        if accountant:
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
                lo, hi, t, mem = _measure(fn, memory)
            except Exception as exc:   # a peer that refuses the workload (or runs out) is reported
                print(f"| {w.name} | {name} | failed: {type(exc).__name__}: {str(exc)[:60]} |||||||||||||||")
                continue
            label = name + (f" ({fn.route})" if hasattr(fn, "route") else "")
            rows.append((name, label, np.asarray(lo, float), np.asarray(hi, float), t, mem))
        ref = next((r for r in rows if r[0] == "PLD 1e-4"), None)
        ex = np.asarray(exact, float)
        for _, label, lo, hi, t, mem in rows:
            widths = hi - lo
            known = np.isfinite(ex)
            if not np.any(known):
                ok = "-"
            elif np.any(hi[known] < ex[known] - 1e-9):
                ok = "LOW"
            elif np.any(lo[known] > ex[known] + 1e-9):
                ok = "HIGH"
            else:
                ok = "yes"
            dist = hi - ex
            cells = [f"{t[0]:.3f}", f"{t[1]:.3f}", "-" if not np.isfinite(mem) else f"{mem:.0f}",
                     _fmt(widths[0]), _fmt(widths[1]), ok, _sfmt(dist[0]), _sfmt(dist[1])]
            if ref is not None:
                ref_w, ref_d = ref[3] - ref[2], ref[3] - ex
                cells += [_sfmt(hi[0] - ref[3][0]), _sfmt(hi[1] - ref[3][1]), _ratio(widths[0], ref_w[0]),
                          _ratio(widths[1], ref_w[1]), _ratio(dist[0], ref_d[0]), _ratio(dist[1], ref_d[1]),
                          _ratio(t[1], ref[4][1])]
            else:
                cells += ["-"] * 7
            print(f"| {w.name} | {label} | " + " | ".join(cells) + " |", flush=True)


def _sfmt(x: float) -> str:
    """A signed distance (negative: below the truth)."""
    return "   -   " if not np.isfinite(x) else f"{x:+.2e}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a few small cases (smoke test)")
    parser.add_argument("--no-peers", action="store_true", help="skip prv_accountant and autodp")
    parser.add_argument("--no-accountant", action="store_true", help="skip the lpdp accountant rows")
    parser.add_argument("--only", help="run the workloads whose name matches this regular expression")
    parser.add_argument("--memory", action="store_true",
                        help="also measure the tracemalloc peak (a second, traced run of each method)")
    args = parser.parse_args()
    logging.getLogger().setLevel(logging.ERROR)     # dp_accounting's notes on its optimistic algorithm
    if args.quick:
        workloads = [_gaussian_self(2.0, 10), _laplace(1.0, 1), _laplace(1.0, 2), _mixed()]
    else:
        workloads = [_gaussian_self(s, k) for s in (1.0, 2.0) for k in (10, 100, 1000, 10000)]
        workloads += [_laplace(1.0, 1), _laplace(1.0, 2), _laplace(1.0, 100), _laplace(1.0, 10000),
                      _mix("100 Gaussians s=2..6 + 100 Laplace b=1", np.linspace(2.0, 6.0, 100), 1.0, 100),
                      _mix("100 Gaussians s=1+i/100 + 100 Laplace b=2", 1.0 + np.arange(1, 101) / 100, 2.0,
                           100),
                      _thousand(), _mixed(), _double_dp(1000), _dpsgd(1.5, 0.04, 2250),
                      _dpsgd(1.0, 0.01, 10000)]
    if args.only:
        workloads = [w for w in workloads if re.search(args.only, w.name)]
    run(workloads, peers=not args.no_peers, accountant=not args.no_accountant, memory=args.memory)


if __name__ == "__main__":
    main()
