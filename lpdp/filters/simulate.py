"""Survival curves ``P(T >= t)`` of every filter on i.i.d. rounds, and the comparison of the paper's
Figure 2 (spec filter.md §2–§3).

Realisation-level filters have random stopping times: their curve is computed exactly where an exact
method exists (quadrature of the absorbed Gaussian walk, dynamic programming for finite outputs) and by
seeded Monte Carlo with standard errors for anything (the two agree within 5 standard errors in the
tests). Mechanism-level filters stop at a deterministic time on i.i.d. rounds.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from lpdp._validate import check_int
from lpdp.errors import ParameterError
from lpdp.filters.audit import _simulate, rule_audit
from lpdp.filters.baselines import Baseline, _MechanismLevelFilter, gaussian_baselines
from lpdp.filters.params import FilterParameters, optimal_parameters
from lpdp.filters.realisation import RealisationFilter, UnionBoundFilter
from lpdp.mechanisms import GaussianMechanism, Mechanism, Request

__all__ = ["SurvivalCurve", "survival", "Comparison", "gaussian_comparison", "plot_comparison"]

#: Legend labels and line styles of the filters in :func:`plot_comparison`.
STYLES: dict[str, tuple[str, dict[str, Any]]] = {
    "realisation": ("realisation-level (paper)", {"color": "C3", "lw": 2.2}),
    "union": ("union bound (lpdp)", {"color": "C1", "lw": 1.8, "ls": "-."}),
    "renyi": ("Rényi", {"color": "C0", "ls": "--"}),
    "additive": ("additive", {"color": "C2", "ls": "--"}),
    "concentrated": ("concentrated (zCDP)", {"color": "C4", "ls": ":"}),
    "advanced": ("advanced", {"color": "C5", "ls": ":"}),
    "classical": ("classical composition (reference)", {"color": "0.4", "lw": 1.0}),
}


@dataclass(frozen=True)
class SurvivalCurve:
    """``P(T >= t)`` for ``t = 1 .. N``; Monte Carlo curves carry standard errors."""

    survival: tuple[float, ...]
    method: str
    stderr: tuple[float, ...] | None = None
    expected_T_stderr: float = 0.0
    trajectories: int | None = None
    seed: int | None = None

    @property
    def expected_T(self) -> float:
        """``E[min(T, N)] = Σ_t P(T >= t)``."""
        return math.fsum(self.survival)

    def to_dict(self) -> dict[str, Any]:
        """Plain data for JSON output."""
        return {"survival": list(self.survival), "method": self.method,
                "expected_T": self.expected_T, "stderr": None if self.stderr is None else list(
                    self.stderr), "expected_T_stderr": self.expected_T_stderr,
                "trajectories": self.trajectories, "seed": self.seed}


def survival(filt: Any, mechanism: Mechanism, request: Request | None = None, *,
             horizon: int | None = None, method: str = "auto", trajectories: int = 100_000,
             seed: int = 0, nodes: int = 24) -> SurvivalCurve:
    """The survival curve of ``filt`` on i.i.d. rounds of ``(mechanism, request)``, under the first
    database of its first neighbouring pair.

    Parameters
    ----------
    filt : a filter of :mod:`lpdp.filters`
        Realisation-level and one-step filters give random stopping times; mechanism-level ones
        (:mod:`lpdp.filters.baselines`) deterministic ones.
    horizon : int, optional
        Number of ``t`` values (default: the filter's ``max_steps``; required for mechanism-level
        filters, whose default cap is huge).
    method : {"auto", "quadrature", "exact", "monte-carlo"}
        ``auto`` is exact where possible (see :func:`lpdp.filters.audit`).
    trajectories, seed : int
        Monte Carlo sample size and seed.

    Examples
    --------
    >>> from lpdp.filters import GaussianMechanism, UnionBoundFilter
    >>> s = survival(UnionBoundFilter(6.0, 1e-3, 48), GaussianMechanism(2.0))
    >>> s.method, round(s.expected_T, 1)
    ('quadrature', 28.6)
    """
    if isinstance(filt, _MechanismLevelFilter):
        if horizon is None:
            raise ParameterError("horizon=None: give the number of steps to report for a "
                                 "mechanism-level filter")
        horizon = check_int(horizon, "horizon")
        k = filt.iid_stopping_time(mechanism)
        return SurvivalCurve(tuple(float(t <= k) for t in range(1, horizon + 1)), "deterministic")
    if horizon is not None and check_int(horizon, "horizon") != filt.max_steps:
        raise ParameterError(f"horizon={horizon}: must equal the filter's max_steps={filt.max_steps}")
    rule = filt.iid_rule(mechanism, request)
    if method != "monte-carlo":
        used, pairs = rule_audit(rule, mechanism, request, method=method, nodes=nodes)
        if used != "monte-carlo":
            return SurvivalCurve(pairs[0].survival, used)
    trajectories = check_int(trajectories, "trajectories", minimum=2)
    seed = check_int(seed, "seed", minimum=0)
    t, _ = _simulate(rule, mechanism, request, rule.pairs[0][0], trajectories,
                     np.random.default_rng(seed))
    surv = np.bincount(t, minlength=rule.max_steps + 1)[::-1].cumsum()[::-1][1:] / t.size
    return SurvivalCurve(tuple(surv.tolist()), "monte-carlo",
                         tuple(np.sqrt(surv * (1 - surv) / t.size).tolist()),
                         float(t.std(ddof=1) / math.sqrt(t.size)), trajectories, seed)


@dataclass(frozen=True)
class Comparison:
    """Every filter on i.i.d. Gaussian rounds (the paper's Figure 2 plus lpdp's union-bound filter)."""

    sigma: float
    epsilon: float
    delta: float
    max_steps: int
    parameters: FilterParameters
    curves: dict[str, SurvivalCurve]
    monte_carlo: dict[str, SurvivalCurve]
    baselines: dict[str, Baseline] = field(repr=False)

    def expected_releases(self) -> dict[str, float]:
        """``E[min(T, N)]`` per filter (the classical reference included)."""
        return {k: c.expected_T for k, c in self.curves.items()}

    def to_dict(self) -> dict[str, Any]:
        """Plain data for JSON output."""
        return {"sigma": self.sigma, "epsilon": self.epsilon, "delta": self.delta,
                "max_steps": self.max_steps, "delta_tilde": self.parameters.delta_tilde,
                "theta": self.parameters.theta,
                "curves": {k: c.to_dict() for k, c in self.curves.items()},
                "monte_carlo": {k: c.to_dict() for k, c in self.monte_carlo.items()},
                "baselines": {k: {"rounds": b.rounds, **b.parameters}
                              for k, b in self.baselines.items()},
                "expected_releases": self.expected_releases()}


def gaussian_comparison(sigma: float, epsilon: float, delta: float, max_steps: int, *,
                        trajectories: int = 100_000, seed: int = 0) -> Comparison:
    """Survival curves of every filter for i.i.d. Gaussian rounds on a sensitivity-1 count.

    The realisation-level filter uses the optimal (δ̃, θ) for ``max_steps``; its curve and the
    union-bound filter's are exact (quadrature), each with an independent Monte Carlo curve
    (``trajectories = 0`` skips it); the mechanism-level filters use the per-round parameters that
    maximise their rounds; ``classical`` is the optimal classical composition (a reference, not a
    filter).

    Examples
    --------
    >>> c = gaussian_comparison(2.0, 6.0, 1e-3, 48, trajectories=0)
    >>> {k: round(v, 1) for k, v in c.expected_releases().items()}["realisation"]
    15.8
    """
    g = GaussianMechanism(sigma)
    p = optimal_parameters(delta, max_steps)
    filters: dict[str, Any] = {
        "realisation": RealisationFilter(epsilon, delta, max_steps, p.delta_tilde, p.theta),
        "union": UnionBoundFilter(epsilon, delta, max_steps)}
    curves = {k: survival(f, g) for k, f in filters.items()}
    trajectories = check_int(trajectories, "trajectories", minimum=0)
    mc = {} if trajectories == 0 else {
        k: survival(f, g, method="monte-carlo", trajectories=trajectories, seed=seed + i)
        for i, (k, f) in enumerate(filters.items())}
    base = gaussian_baselines(sigma, epsilon, delta)
    for k, b in base.items():
        curves[k] = SurvivalCurve(tuple(float(t <= b.rounds) for t in range(1, max_steps + 1)),
                                  "deterministic")
    return Comparison(sigma, epsilon, delta, max_steps, p, curves, mc, base)


def plot_comparison(c: Comparison, ax: Any = None) -> list[Any]:
    """Draw every filter's survival curve ``P(T >= t)`` (steps), as in the paper's Figure 2, with the
    Monte Carlo curves as dots. Returns the artists.

    Examples
    --------
    >>> artists = plot_comparison(gaussian_comparison(2.0, 6.0, 1e-3, 48, trajectories=0))
    """
    if ax is None:
        import matplotlib.pyplot as plt

        ax = plt.subplots(figsize=(6, 4.5))[1]
    t = np.arange(1, c.max_steps + 1)
    artists = []
    for name, curve in c.curves.items():
        label, style = STYLES[name]
        e = curve.expected_T
        artists += ax.step(np.concatenate([[0], t]), np.concatenate([[1.0], curve.survival]),
                           where="post", label=f"{label}: E[T] = {e:.1f}", **style)
    for name, curve in c.monte_carlo.items():
        artists += ax.plot(t, curve.survival, ".", ms=3, color=STYLES[name][1]["color"],
                           label="_mc")
    ax.set_xlabel("t")
    ax.set_ylabel("P(T >= t)")
    ax.set_xlim(0, c.max_steps + 0.5)
    ax.set_ylim(-0.02, 1.02)
    ax.set_title(f"σ = {c.sigma:g}, ε = {c.epsilon:g}, δ = {c.delta:g}, N = {c.max_steps}",
                 fontsize="medium")
    ax.legend(fontsize="x-small", loc="best")
    ax.grid(True, lw=0.3, alpha=0.5)
    return artists
